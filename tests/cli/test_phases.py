"""Parsing a run's phases: the single-phase flags and repeated --phase (shared by rdp and pld)."""

from __future__ import annotations

import pytest

from dpcalc.cli.options import InputError
from dpcalc.cli.phases import MechanismChoice, parse_phase_spec, parse_phases
from dpcalc.core.phases import Phase

NO_FLAGS = dict(p=None, sigma=None, T=None, n=None, batch_size=None, epochs=None, mechanism=None, scale=None)


def flags(**given):
    return {**NO_FLAGS, **given}


def test_single_gaussian_phase_from_flags():
    assert parse_phases(None, flags(p=0.01, sigma=0.9, T=1800)) == [
        Phase("gaussian", sampling_probability=0.01, noise_multiplier=0.9, steps=1800)
    ]


def test_single_phase_training_form():
    # p = 600/60000, T = ceil(18 * 60000 / 600) = 1800 (exact rational arithmetic).
    (phase,) = parse_phases(None, flags(n=60000, batch_size=600, epochs=18.0, sigma=0.9))
    assert phase.sampling_probability == 0.01 and phase.steps == 1800


def test_single_laplace_phase_from_flags():
    (phase,) = parse_phases(None, flags(mechanism=MechanismChoice.laplace, scale=20.0, T=3))
    assert phase == Phase("laplace", sampling_probability=1.0, scale=20.0, steps=3)
    (phase,) = parse_phases(None, flags(mechanism=MechanismChoice.laplace, scale=20.0, T=1, p=0.5))
    assert phase.sampling_probability == 0.5  # refusing p < 1 is the accountant's business


def test_explicit_gaussian_mechanism_flag():
    (phase,) = parse_phases(None, flags(mechanism=MechanismChoice.gaussian, p=0.1, sigma=1.0, T=2))
    assert phase.mechanism == "gaussian"


def test_repeated_phases_in_order():
    phases = parse_phases(
        ["p=0.01,sigma=2,T=500", " p = 0.02 , sigma = 0.8 , T = 1e3 ", "mechanism=laplace,scale=5,T=1"], NO_FLAGS
    )
    assert phases == [
        Phase("gaussian", sampling_probability=0.01, noise_multiplier=2.0, steps=500),
        Phase("gaussian", sampling_probability=0.02, noise_multiplier=0.8, steps=1000),
        Phase("laplace", sampling_probability=1.0, scale=5.0, steps=1),
    ]


def test_phase_defaults_and_training_form():
    # p defaults to 1 (no subsampling: never under-counts); the training form as in the flags.
    assert parse_phase_spec("sigma=3,T=4", 1) == Phase("gaussian", sampling_probability=1.0, noise_multiplier=3.0, steps=4)
    phase = parse_phase_spec("n=60000,batch_size=256,epochs=60,sigma=1.1", 1)
    assert phase.sampling_probability == 256 / 60000 and phase.steps == 14063
    assert parse_phase_spec("p=0.001,epochs=3,sigma=1", 1).steps == 3000  # exactly, not 3001
    assert parse_phase_spec("mechanism=Laplace,scale=2,T=1", 1).mechanism == "laplace"
    assert parse_phase_spec("p=0.5,sigma=1,T=1,", 1).steps == 1  # a trailing comma is harmless


@pytest.mark.parametrize(
    "spec, message",
    [
        ("p=0.01,sigma=-1,T=3", "--phase 2: sigma must be in (0, inf), got -1"),
        ("p=0.01,sigma=abc,T=3", "--phase 2: sigma must be a number in (0, inf), got 'abc'"),
        ("p=1.5,sigma=1,T=3", "--phase 2: p must be in [0, 1], got 1.5"),
        ("p=0.01,sigma=1,T=0", "--phase 2: T must be an integer in [1, inf), got 0"),
        ("p=0.01,sigma=1,T=2.5", "--phase 2: T must be an integer in [1, inf), got 2.5"),
        ("mechanism=laplace,scale=0,T=1", "--phase 2: scale must be in (0, inf), got 0"),
        ("p=0.01,foo=1,T=3", "--phase 2: unknown key 'foo'; keys are mechanism, p, sigma, noise_std, sensitivity, scale, T, n, batch_size, epochs"),
        ("P=0.01,sigma=1,T=3", "--phase 2: unknown key 'P'; keys are mechanism, p, sigma, noise_std, sensitivity, scale, T, n, batch_size, epochs"),
        ("p=0.01,sigma,T=3", "--phase 2: expected KEY=VALUE items separated by commas, got 'sigma'"),
        ("=1,sigma=1,T=3", "--phase 2: expected KEY=VALUE items separated by commas, got '=1'"),
        ("p=0.01,p=0.02,sigma=1,T=3", "--phase 2: key 'p' given twice"),
        ("p=,sigma=1,T=3", "--phase 2: p needs a value"),
        ("", "--phase 2: empty; give e.g. p=0.01,sigma=0.9,T=1800"),
        (" , ", "--phase 2: empty; give e.g. p=0.01,sigma=0.9,T=1800"),
        ("p=0.01,T=3", "--phase 2: sigma is required (noise multiplier, > 0; or noise_std with sensitivity)"),
        ("p=0.01,sigma=1", "--phase 2: T is required (number of steps, an integer >= 1; epochs with n and batch_size also work)"),
        ("mechanism=gauss,sigma=1,T=1", "--phase 2: mechanism must be gaussian or laplace, got 'gauss'"),
        ("sigma=1,scale=2,T=1", "--phase 2: scale is for mechanism=laplace; the gaussian mechanism takes sigma"),
        ("mechanism=laplace,sigma=1,T=1", "--phase 2: sigma is for the gaussian mechanism; mechanism=laplace takes scale"),
        ("mechanism=laplace,T=1", "--phase 2: scale is required for mechanism=laplace (Laplace scale b, > 0)"),
        ("p=0.01,n=100,batch_size=1,sigma=1,T=1", "--phase 2: p and n cannot be given together; p is batch_size / n"),
        ("n=100,sigma=1,T=1", "--phase 2: n needs batch_size (p = batch_size / n)"),
        ("batch_size=10,sigma=1,T=1", "--phase 2: batch_size needs n (p = batch_size / n)"),
        ("n=100,batch_size=200,sigma=1,T=1", "--phase 2: batch_size must be in [1, n] = [1, 100], got 200"),
        ("p=0.1,T=1,epochs=2,sigma=1", "--phase 2: T and epochs cannot be given together; T is ceil(epochs * n / batch_size)"),
        ("p=0.1,epochs=-1,sigma=1", "--phase 2: epochs must be in (0, inf), got -1"),
    ],
)
def test_phase_errors_name_the_phase_key_range_and_value(spec, message):
    with pytest.raises(InputError) as error:
        parse_phases(["p=0.01,sigma=1,T=1", spec], NO_FLAGS)
    assert str(error.value) == message


@pytest.mark.parametrize(
    "given, name",
    [
        (dict(p=0.1), "--p"),
        (dict(sigma=1.0), "--sigma"),
        (dict(T=1), "--T"),
        (dict(n=10), "--n"),
        (dict(batch_size=1), "--batch-size"),
        (dict(epochs=1.0), "--epochs"),
        (dict(mechanism=MechanismChoice.gaussian), "--mechanism"),
        (dict(scale=1.0), "--scale"),
    ],
)
def test_phase_with_single_phase_flags_is_a_conflict(given, name):
    with pytest.raises(InputError) as error:
        parse_phases(["p=0.01,sigma=1,T=1"], flags(**given))
    assert str(error.value) == (
        f"--phase and {name} cannot be given together; "
        "describe every phase with --phase, or give one phase with the flags"
    )


@pytest.mark.parametrize(
    "given, message",
    [
        (dict(p=0.1, sigma=1.0, T=1, scale=2.0), "--scale is for --mechanism laplace; the gaussian mechanism takes --sigma"),
        (dict(p=0.1, T=1), "--sigma is required (noise multiplier, > 0)"),
        (dict(mechanism=MechanismChoice.laplace, T=1), "--scale is required with --mechanism laplace (Laplace scale b, > 0)"),
        (dict(mechanism=MechanismChoice.laplace, scale=1.0), "--T is required (number of releases, an integer >= 1)"),
        (
            dict(mechanism=MechanismChoice.laplace, scale=1.0, T=1, sigma=1.0),
            "--mechanism laplace and --sigma cannot be given together; the laplace mechanism takes --scale, --T and optionally --p",
        ),
        (
            dict(mechanism=MechanismChoice.laplace, scale=1.0, T=1, n=10),
            "--mechanism laplace and --n cannot be given together; the laplace mechanism takes --scale, --T and optionally --p",
        ),
    ],
)
def test_single_phase_flag_errors(given, message):
    with pytest.raises(InputError) as error:
        parse_phases(None, flags(**given))
    assert str(error.value) == message


@pytest.mark.parametrize(
    "args, message",
    [
        (("--p", "0.1", "--sigma", "-1", "--T", "1"), "--sigma must be in (0, inf), got -1"),
        (("--mechanism", "laplace", "--scale", "-1", "--T", "1"), "--scale must be in (0, inf), got -1"),
        (("--mechanism", "laplace", "--scale", "1", "--T", "0"), "--T must be an integer in [1, inf), got 0"),
        (("--mechanism", "laplace", "--scale", "1", "--T", "1", "--p", "2"), "--p must be in [0, 1], got 2"),
    ],
)
def test_single_phase_flag_values_are_checked_by_their_type(dpcalc, args, message):
    """The flags reach parse_phases as numbers: their click types refuse a bad value, with the same message."""
    for command in ("rdp", "pld"):
        run = dpcalc(command, *args, "--no-tight" if command == "rdp" else "--json")
        assert (run.code, run.stderr) == (2, f"Error: {message}\n") and run.only_error


# ---------------------------------------------------------------------------------------------
# delta >= 1/n: a delta that allows leaking a record in expectation is warned about
# ---------------------------------------------------------------------------------------------

LARGE_DELTA = ("--n", "1000", "--batch-size", "10", "--epochs", "1", "--sigma", "1", "--delta", "0.001")


@pytest.mark.parametrize("command", [("gdp", "--no-tight"), ("rdp", "--no-tight"), ("pld",),
                                     ("calibrate", "--accountant", "rdp", "--target-eps", "5", "--solve", "T")])
def test_a_delta_of_at_least_one_over_n_is_warned_about(dpcalc, command):
    args = list(LARGE_DELTA)
    if command[0] == "calibrate":
        del args[4:6]  # --solve T: no --epochs
    run = dpcalc(*command, *args, "--json")
    assert run.code == 0, run.stderr
    assert any(w.startswith("delta = 0.001 is at least 1/n = 1/1000") and "Dwork, Roth 2014, Sec. 2.3" in w
               for w in run.json()["warnings"])
    quiet = dpcalc(*command, *args[:-1], "0.0009", "--json")
    assert not any("1/n" in w for w in quiet.json()["warnings"])
