"""--noise-std and --sensitivity on the accountant commands (gdp, rdp, pld, risk, calibrate).

sigma = noise std / sensitivity exactly as floats: 2.2 / 2 is 1.1 (halving is exact in binary), so
`--noise-std 2.2 --sensitivity 2` must give the very same result as `--sigma 1.1`.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

RUN = ("--p", "0.01", "--T", "50")
SIGMA = ("--sigma", "1.1")
STD = ("--noise-std", "2.2", "--sensitivity", "2")
COMMANDS = {
    "gdp": (),
    "rdp": ("--no-tight",),
    "pld": ("--accuracy", "0.01"),
    "risk": ("--accuracy", "0.01"),
}


def test_the_float_quotient_is_exact():
    assert 2.2 / 2 == 1.1


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_noise_std_over_sensitivity_is_sigma(dpcalc, command):
    extra = COMMANDS[command]
    by_sigma = dpcalc(command, *RUN, *SIGMA, *extra, "--json")
    by_std = dpcalc(command, *RUN, *STD, *extra, "--json")
    assert (by_sigma.code, by_std.code, by_std.stderr) == (0, 0, "")
    assert by_std.json()["result"] == by_sigma.json()["result"]
    inputs, given = by_std.json()["inputs"], by_sigma.json()["inputs"]
    assert (inputs["noise_std"], inputs["sensitivity"]) == (2.2, 2.0)
    assert (given["noise_std"], given["sensitivity"]) == (None, None)
    if command == "gdp":
        assert inputs["sigma"] == 1.1
    else:
        assert inputs["phases"] == given["phases"] and inputs["phases"][0]["sigma"] == 1.1


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_sensitivity_defaults_to_one(dpcalc, command):
    extra = COMMANDS[command]
    by_sigma = dpcalc(command, *RUN, "--sigma", "2.2", *extra, "--json").json()
    by_std = dpcalc(command, *RUN, "--noise-std", "2.2", *extra, "--json").json()
    assert by_std["result"] == by_sigma["result"]
    assert (by_std["inputs"]["noise_std"], by_std["inputs"]["sensitivity"]) == (2.2, None)


@pytest.mark.parametrize("command", [*sorted(COMMANDS), "calibrate"])
@pytest.mark.parametrize(("args", "message"), [
    (("--sigma", "1", "--noise-std", "2"),
     "--sigma and --noise-std cannot be given together; sigma is noise std / sensitivity; give one"),
    (("--sigma", "1", "--sensitivity", "2"),
     "--sensitivity goes with --noise-std (or --scale): --sigma is already noise std / sensitivity"),
    (("--sensitivity", "2"), "--sensitivity needs --noise-std (the noise std; sigma = noise std / sensitivity)"),
    (("--noise-std", "0"), "--noise-std must be in (0, inf), got 0"),
    (("--noise-std", "abc"), "--noise-std must be a number in (0, inf), got 'abc'"),
    (("--noise-std", "2", "--sensitivity", "-1"), "--sensitivity must be in (0, inf), got -1"),
    (("--noise-std", "2", "--sensitivity", "1,2"), "--sensitivity takes one value, not a list or range, got 1,2"),
    (("--noise-std", "2", "--sensitivity", "1:3:1"), "--sensitivity takes one value, not a list or range, got 1:3:1"),
])
def test_refusals(dpcalc, command, args, message):
    prefix = ("--target-eps", "1", "--solve", "T", "--p", "0.01") if command == "calibrate" else ("--p", "0.01", "--T", "5")
    run = dpcalc(command, *prefix, *args)
    assert (run.code, run.stderr, run.stdout) == (2, f"Error: {message}\n", "")


def test_gdp_mu_refuses_the_noise(dpcalc):
    run = dpcalc("gdp", "--mu", "1", "--noise-std", "2")
    assert (run.code, run.stderr) == (
        2, "Error: --mu and --noise-std cannot be given together; --mu converts a given mu; the training run gives "
           "its own\n")


@pytest.mark.parametrize("command", ["gdp", "pld", "rdp"])
def test_noise_std_sweeps_like_sigma(dpcalc, command):
    extra = COMMANDS[command]
    swept = dpcalc(command, *RUN, "--noise-std", "2.2,4.4", "--sensitivity", "2", *extra, "--json")
    assert (swept.code, swept.stderr) == (0, "")
    document = swept.json()
    assert document["result"]["swept"] == ["noise_std"]
    assert document["inputs"]["noise_std"] == [2.2, 4.4] and document["inputs"]["sensitivity"] == 2.0
    assert document["inputs"]["sigma"] == [1.1, 2.2]
    rows = document["result"]["rows"]
    for row, sigma in zip(rows, ("1.1", "2.2")):
        single = dpcalc(command, *RUN, "--sigma", sigma, *extra, "--json").json()["result"]
        assert row["sigma"] == float(sigma)
        assert row["epsilon"] == single["epsilon"]


def test_risk_refuses_a_noise_std_sweep(dpcalc):
    run = dpcalc("risk", *RUN, "--noise-std", "2,4")
    assert (run.code, run.stderr) == (
        2, "Error: dpcalc risk takes one run, got a list or range for --noise-std: run it once per value, or sweep "
           "epsilon with dpcalc pld\n")


def test_phase_keys(dpcalc):
    by_sigma = dpcalc("pld", "--phase", "p=0.01,sigma=1.1,T=50", "--phase", "mechanism=laplace,scale=10,T=2",
                      "--accuracy", "0.01", "--json").json()
    by_std = dpcalc("pld", "--phase", "p=0.01,noise_std=2.2,sensitivity=2,T=50",
                    "--phase", "mechanism=laplace,scale=30,sensitivity=3,T=2", "--accuracy", "0.01", "--json").json()
    assert by_std["result"] == by_sigma["result"]
    assert by_std["inputs"]["phases"] == by_sigma["inputs"]["phases"]


@pytest.mark.parametrize(("spec", "message"), [
    ("p=0.01,sigma=1,noise_std=2,T=3", "--phase 1: sigma and noise_std cannot be given together; sigma is "
                                       "noise_std / sensitivity"),
    ("p=0.01,sigma=1,sensitivity=2,T=3", "--phase 1: sensitivity goes with noise_std (or scale): sigma is already "
                                         "noise std / sensitivity"),
    ("p=0.01,sensitivity=2,T=3", "--phase 1: sigma is required (noise multiplier, > 0; or noise_std with "
                                 "sensitivity)"),
    ("mechanism=laplace,noise_std=2,T=3", "--phase 1: noise_std is for the gaussian mechanism; mechanism=laplace "
                                          "takes scale"),
    ("p=0.01,noise_std=2,sensitivity=0,T=3", "--phase 1: sensitivity must be in (0, inf), got 0"),
    ("p=0.01,noise_std=x,T=3", "--phase 1: noise_std must be a number in (0, inf), got 'x'"),
])
def test_phase_refusals(dpcalc, spec, message):
    run = dpcalc("pld", "--phase", spec)
    assert (run.code, run.stderr) == (2, f"Error: {message}\n")


def test_phase_refuses_the_flags(dpcalc):
    run = dpcalc("rdp", "--phase", "p=0.01,sigma=1,T=3", "--sensitivity", "2")
    assert (run.code, run.stderr) == (
        2, "Error: --phase and --sensitivity cannot be given together; describe every phase with --phase, or give "
           "one phase with the flags\n")


@pytest.mark.parametrize("command", ["rdp", "pld"])
def test_sensitivity_divides_the_laplace_scale(dpcalc, command):
    by_scale = dpcalc(command, "--mechanism", "laplace", "--scale", "2", "--T", "3", "--json").json()
    by_sensitivity = dpcalc(command, "--mechanism", "laplace", "--scale", "6", "--sensitivity", "3", "--T", "3",
                            "--json").json()
    assert by_sensitivity["result"] == by_scale["result"]
    assert by_sensitivity["inputs"]["phases"][0]["scale"] == 2.0 and by_sensitivity["inputs"]["sensitivity"] == 3.0


def test_laplace_refuses_the_noise_std(dpcalc):
    run = dpcalc("pld", "--mechanism", "laplace", "--scale", "2", "--noise-std", "1", "--T", "3")
    assert (run.code, run.stderr) == (
        2, "Error: --mechanism laplace and --noise-std cannot be given together; the laplace mechanism takes --scale, "
           "--T and optionally --p\n")


# --- calibrate

CALIBRATE = ("calibrate", "--target-eps", "1", "--p", "0.1")


def test_calibrate_solves_steps_at_a_noise_std(dpcalc):
    by_sigma = dpcalc(*CALIBRATE, "--solve", "T", *SIGMA, "--json").json()
    by_std = dpcalc(*CALIBRATE, "--solve", "T", *STD, "--json").json()
    assert by_std["result"] == by_sigma["result"]
    assert (by_std["inputs"]["noise_std"], by_std["inputs"]["sensitivity"], by_std["inputs"]["sigma"]) == (2.2, 2.0, None)


def test_calibrate_reports_the_noise_std_of_the_solved_sigma(dpcalc):
    plain = dpcalc(*CALIBRATE, "--T", "100", "--json").json()
    scaled = dpcalc(*CALIBRATE, "--T", "100", "--sensitivity", "3", "--json")
    assert (scaled.code, scaled.stderr) == (0, "")
    result = scaled.json()["result"]
    assert plain["result"]["noise_std"] is None
    assert result["sigma"] == plain["result"]["sigma"]
    # sigma x 3, rounded up: at or above the exact product, within one ulp
    assert Fraction(result["noise_std"]) >= Fraction(result["sigma"]) * 3
    assert result["noise_std"] == pytest.approx(3 * result["sigma"], rel=1e-15)
    assert scaled.json()["inputs"]["sensitivity"] == 3.0
    table = dpcalc(*CALIBRATE, "--T", "100", "--sensitivity", "3")
    assert "noise std" in table.stdout and "sigma x sensitivity 3, rounded up" in table.stdout


@pytest.mark.slow
def test_calibrate_noise_std_sweep(dpcalc):
    document = dpcalc(*CALIBRATE, "--solve", "T", "--noise-std", "2.2,4.4", "--sensitivity", "2", "--json").json()
    assert document["result"]["swept"] == ["noise_std"]
    for row, sigma in zip(document["result"]["rows"], ("1.1", "2.2")):
        single = dpcalc(*CALIBRATE, "--solve", "T", "--sigma", sigma, "--json").json()["result"]
        assert row["T"] == single["T"]


@pytest.mark.parametrize(("args", "message"), [
    (("--T", "10", "--noise-std", "2"),
     "--solve sigma and --noise-std cannot be given together; the noise std is what calibrate solves for "
     "(noise_std = sigma x --sensitivity)"),
    (("--mechanism", "laplace", "--T", "10", "--noise-std", "2"),
     "--noise-std does not apply to --mechanism laplace (--T releases of the Laplace mechanism, no subsampling); "
     "it takes --target-eps, --delta, --T, --sensitivity, --accountant pld or rdp, --precision"),
    (("--T", "10", "--sigma", "1", "--solve", "p", "--sensitivity", "2"),
     "--sensitivity goes with --noise-std (or --scale): --sigma is already noise std / sensitivity"),
])
def test_calibrate_refusals(dpcalc, args, message):
    run = dpcalc("calibrate", "--target-eps", "1", *args)
    assert (run.code, run.stderr, run.stdout) == (2, f"Error: {message}\n", "")


def test_calibrate_risk_target_refuses_the_noise_std(dpcalc):
    run = dpcalc("calibrate", "--target-advantage", "0.1", "--p", "0.01", "--T", "10", "--solve", "p",
                 "--noise-std", "2")
    assert (run.code, run.stderr) == (
        2, "Error: --noise-std: risk targets take the noise multiplier --sigma (noise std / sensitivity), or "
           "--target-eps takes --noise-std with --sensitivity\n")
