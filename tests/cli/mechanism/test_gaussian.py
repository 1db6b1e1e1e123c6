"""`dpcalc mechanism gaussian` on the command line: every option, every error path, the JSON contract."""

from __future__ import annotations

import math

import pytest

from dpcalc.core import gdp

RESULT_KEYS = {
    "epsilon", "delta", "noise_std", "noise_multiplier", "mu", "sensitivity", "calibration", "noise_std_analytic",
    "noise_std_classic", "classic_valid", "dims", "error", "confidence", "failure_probability",
    "per_coordinate_failure_probability", "simultaneous", "accuracy",
    "solved_for", "source",
}
INPUT_KEYS = {"eps", "delta", "sigma", "noise_std", "sensitivity", "error", "confidence", "dims", "calibration",
              "max_eps"}
PER_COORDINATE_KEYS = {
    "mu", "noise_multiplier", "delta", "epsilon", "clipping", "exact", "target_multiplier", "target_epsilon",
    "scale_factor", "scaled_noise_stds", "meets_target", "solved_for", "source",
}


def run_json(dpcalc, *args):
    run = dpcalc("mechanism", "gaussian", *args, "--json")
    assert run.code == 0, run.stderr
    document = run.json()
    assert document["command"] == "mechanism gaussian"
    return document


def test_table(dpcalc):
    run = dpcalc("mechanism", "gaussian", "--sigma", "4", "--error", "10", "--dims", "1000")
    assert (run.code, run.stderr) == (0, "")
    assert "Balle-Wang Thm 8" in run.stdout and "all 1000 coordinates" in run.stdout


def test_error_from_eps(dpcalc):
    document = run_json(dpcalc, "--eps", "1", "--delta", "1e-5", "--confidence", "0.95", "--dims", "100")
    assert set(document["inputs"]) == INPUT_KEYS and set(document["result"]) == RESULT_KEYS
    result = document["result"]
    assert result["solved_for"] == "error" and result["calibration"] == "analytic"
    assert result["noise_std"] == result["noise_std_analytic"] and result["epsilon"] <= 1.0
    assert result["epsilon"] == pytest.approx(1.0, rel=1e-10)
    assert result["classic_valid"] is False
    assert document["warnings"][0].startswith("the classic noise std (Dwork, Roth 2014, Thm A.1) is valid only for "
                                              "0 < eps < 1")
    assert result["simultaneous"] == "exact product over independent coordinates"


def test_confidence_from_the_noise_std(dpcalc):
    result = run_json(dpcalc, "--noise-std", "2", "--error", "3", "--sensitivity", "0.5", "--delta", "1e-6")["result"]
    assert result["confidence"] == pytest.approx(math.erf(1.5 / math.sqrt(2)), rel=1e-14)
    assert result["per_coordinate_failure_probability"] == pytest.approx(math.erfc(1.5 / math.sqrt(2)), rel=1e-14)
    assert result["mu"] == 0.25 and result["noise_multiplier"] == 4.0
    assert result["epsilon"] == pytest.approx(gdp.epsilon_for_delta(1e-6, 0.25), rel=1e-15)
    assert result["solved_for"] == "confidence"


def test_epsilon_from_error_and_confidence(dpcalc):
    result = run_json(dpcalc, "--error", "5", "--confidence", "0.99", "--dims", "10")["result"]
    assert result["solved_for"] == "epsilon"
    assert result["confidence"] == 0.99
    assert math.erf(5 / result["noise_std"] / math.sqrt(2)) ** 10 == pytest.approx(0.99, rel=1e-14)


def test_classic_calibration(dpcalc):
    result = run_json(dpcalc, "--eps", "0.5", "--error", "20", "--calibration", "classic")["result"]
    assert result["noise_std"] == pytest.approx(math.sqrt(2 * math.log(1.25e5)) / 0.5, rel=1e-15)
    assert result["calibration"] == "classic" and result["epsilon"] < 0.5


def test_per_coordinate_adadp_example(dpcalc):
    # Xu et al. 2020 (ADADP), Lemma 1: s = (12, 6), sigma = (17, 8.5): mu = 12 sqrt(2) / 17.
    document = run_json(dpcalc, "--sensitivities", "12,6", "--noise-stds", "17,8.5", "--target-multiplier", "1")
    assert set(document["result"]) == PER_COORDINATE_KEYS
    assert document["inputs"] == {"sensitivities": [12.0, 6.0], "noise_stds": [17.0, 8.5], "delta": 1e-5,
                                  "clipping": "per-coordinate", "eps": None, "target_multiplier": 1.0,
                                  "max_eps": None}
    result = document["result"]
    assert result["mu"] == pytest.approx(12 * math.sqrt(2) / 17, rel=1e-15)
    assert result["noise_multiplier"] == pytest.approx(17 / (12 * math.sqrt(2)), rel=1e-15)
    assert result["exact"] is True and result["meets_target"] is True
    assert result["solved_for"] == "scale_factor"
    assert result["scaled_noise_stds"] == [result["scale_factor"] * 17, result["scale_factor"] * 8.5]


def test_per_coordinate_eps_target_and_joint(dpcalc):
    document = run_json(dpcalc, "--sensitivities", "1,1", "--noise-stds", "1,1", "--eps", "1", "--clipping", "joint")
    result = document["result"]
    assert result["exact"] is False and result["target_epsilon"] == 1.0 and result["meets_target"] is False
    assert "upper bound" in document["warnings"][0]
    run = dpcalc("mechanism", "gaussian", "--sensitivities", "1,1", "--noise-stds", "1,1", "--clipping", "per-layer")
    assert run.code == 0 and "all s_i reached at once: exact" in run.stdout


def test_max_eps(dpcalc):
    run = dpcalc("mechanism", "gaussian", "--sigma", "0.5", "--error", "1", "--max-eps", "1")
    assert run.code == 1 and "Budget exceeded" in run.stderr and "Balle and Wang 2018, Thm 8" in run.stderr
    run = dpcalc("mechanism", "gaussian", "--sensitivities", "1", "--noise-stds", "0.5", "--max-eps", "1")
    assert run.code == 1 and "Budget exceeded" in run.stderr


@pytest.mark.parametrize("args, message", [
    (("--eps", "1", "--sigma", "1", "--error", "1"),
     "--eps and --sigma cannot be given together; give one (the noise is calibrated from epsilon at --delta)"),
    (("--eps", "1", "--noise-std", "1"),
     "--eps and --noise-std cannot be given together; give one (the noise is calibrated from epsilon at --delta)"),
    (("--sigma", "1", "--noise-std", "1"),
     "--sigma and --noise-std cannot be given together; sigma is noise std / sensitivity; give one"),
    # --sigma was the noise std here: beside a sensitivity the old and the new meaning differ, so it is refused
    (("--sigma", "4", "--sensitivity", "2"),
     "--sensitivity goes with --noise-std: --sigma is the noise multiplier, noise std / sensitivity (for the noise "
     "std itself give --noise-std)"),
    (("--eps", "1", "--error", "1", "--confidence", "0.9"),
     "--eps, --sigma or --noise-std, --error and --confidence cannot all be given: drop the one to compute"),
    (("--error", "1",), "--error needs --confidence (to get epsilon) or the privacy, --eps, --sigma or --noise-std "
                        "(to get the confidence)"),
    ((), "give --eps, --sigma or --noise-std (the noise, and its error at confidences 0.5 to 0.99), or --error with "
         "--confidence (to get epsilon), e.g. --eps 1 --confidence 0.95 to get the error bound"),
    (("--sigma", "1", "--error", "1", "--delta", "1"), "--delta must be in (0, 1), got 1"),
    (("--sigma", "0", "--error", "1"), "--sigma must be in (0, inf), got 0"),
    (("--sigma", "1", "--error", "1", "--dims", "1.5"), "--dims must be an integer in [1, inf), got 1.5"),
    (("--noise-std", "1", "--error", "1", "--sensitivity", "-2"), "--sensitivity must be in (0, inf), got -2"),
    (("--noise-std", "0"), "--noise-std must be in (0, inf), got 0"),
    (("--sigma", "1", "--confidence", "0"), "--confidence must be in (0, 1), got 0"),
    (("--eps", "2", "--error", "1", "--calibration", "classic"),
     "--calibration classic needs --eps in (0, 1) (Dwork, Roth 2014, Thm A.1), got 2; use --calibration analytic"),
    (("--sigma", "1", "--error", "1", "--calibration", "analytic"),
     "--calibration applies with --eps (how the noise is calibrated from epsilon); with --sigma, --noise-std, or "
     "--error and --confidence, epsilon is exact"),
    (("--sigma", "1", "--error", "1", "--clipping", "joint"),
     "--clipping goes with --sensitivities and --noise-stds (per-coordinate noise)"),
    (("--sigma", "1", "--error", "1", "--target-multiplier", "1"),
     "--target-multiplier goes with --sensitivities and --noise-stds (per-coordinate noise)"),
    (("--noise-stds", "1,2",), "--noise-stds needs --sensitivities (per-coordinate noise: one sensitivity and one noise std per "
                           "coordinate or layer)"),
    (("--sensitivities", "1,2",), "--sensitivities needs --noise-stds (per-coordinate noise: one sensitivity and one "
                                  "noise std per coordinate or layer)"),
    (("--sensitivities", "1,2", "--noise-stds", "1"), "--noise-stds must have as many values as --sensitivities (2), got 1"),
    (("--sensitivities", "1,-2", "--noise-stds", "1,1"), "--sensitivities item 2 of 2 must be in (0, inf), got -2"),
    (("--sensitivities", "1", "--noise-stds", "1", "--sigma", "2"),
     "--sigma does not apply with --sensitivities and --noise-stds (per-coordinate noise reports mu, the noise "
     "multiplier and epsilon at --delta)"),
    (("--sensitivities", "1", "--noise-stds", "1", "--error", "2"),
     "--error does not apply with --sensitivities and --noise-stds (per-coordinate noise reports mu, the noise "
     "multiplier and epsilon at --delta)"),
    (("--sensitivities", "1", "--noise-stds", "1", "--calibration", "classic"),
     "--calibration does not apply with --sensitivities and --noise-stds (per-coordinate noise reports mu, the noise "
     "multiplier and epsilon at --delta)"),
    (("--sensitivities", "1", "--noise-stds", "1", "--eps", "1", "--target-multiplier", "1"),
     "--eps and --target-multiplier cannot be given together; give one target"),
    (("--sensitivities", "1e300,1e300", "--noise-stds", "1e-300,1"),
     "--sensitivities / --noise-stds must be ratios whose root sum of squares is a positive finite float, got inf"),
])
def test_errors(dpcalc, args, message):
    run = dpcalc("mechanism", "gaussian", *args)
    assert (run.code, run.stdout, run.stderr) == (2, "", f"Error: {message}\n")


def test_help_lists_the_examples(dpcalc):
    run = dpcalc("mechanism", "gaussian", "--help")
    assert run.code == 0 and "--sensitivities 12,6 --noise-stds 17,8.5 --target-multiplier 1" in run.stdout


def test_the_noise_and_delta_give_epsilon_and_the_accuracy(dpcalc):
    # noise std 4 at L2 sensitivity 2: mu = 0.5, epsilon exact at delta (Balle, Wang 2018, Thm 8 =
    # mu-GDP's profile, Dong, Roth, Su 2022, Cor. 2.13); one coordinate's error at confidence c is
    # 4 Phi^-1((1 + c) / 2)
    document = run_json(dpcalc, "--noise-std", "4", "--sensitivity", "2", "--delta", "1e-5")
    assert set(document["result"]) == RESULT_KEYS and set(document["inputs"]) == INPUT_KEYS
    result = document["result"]
    assert (result["mu"], result["noise_multiplier"], result["solved_for"]) == (0.5, 2.0, "epsilon")
    assert result["epsilon"] == pytest.approx(gdp.epsilon_for_delta(1e-5, 0.5), rel=1e-12)
    assert result["error"] is None and result["confidence"] is None
    assert result["per_coordinate_failure_probability"] is None
    quantiles = {0.5: 0.6744897501960817, 0.9: 1.6448536269514722, 0.95: 1.959963984540054, 0.99: 2.5758293035489004}
    assert [point["confidence"] for point in result["accuracy"]] == list(quantiles)
    for point in result["accuracy"]:
        assert point["error"] == pytest.approx(4 * quantiles[point["confidence"]], rel=1e-12)
    run = dpcalc("mechanism", "gaussian", "--noise-std", "4", "--sensitivity", "2", "--delta", "1e-5")
    assert run.code == 0 and "Accuracy: every |noise| <= error" in run.stdout and "10.303318" in run.stdout


def test_sigma_is_the_noise_multiplier(dpcalc):
    # at sensitivity 1 the multiplier is the noise std: --sigma 4 and --noise-std 4 are one mechanism
    by_sigma = run_json(dpcalc, "--sigma", "4", "--error", "10")
    by_std = run_json(dpcalc, "--noise-std", "4", "--error", "10")
    assert by_sigma["result"] == by_std["result"]
    assert (by_sigma["inputs"]["sigma"], by_sigma["inputs"]["noise_std"]) == (4.0, None)


def test_epsilon_alone_gives_the_noise(dpcalc):
    result = run_json(dpcalc, "--eps", "1", "--sensitivity", "2")["result"]
    assert result["solved_for"] == "noise_std" and result["epsilon"] == pytest.approx(1.0, rel=1e-10)
    solved = run_json(dpcalc, "--eps", "1", "--sensitivity", "2", "--confidence", "0.95")["result"]
    assert solved["noise_std"] == result["noise_std"] and solved["accuracy"] == result["accuracy"]
    assert result["accuracy"][2]["error"] == solved["error"]  # the 0.95 row is the error solved for


def test_old_sigmas_is_refused_with_the_new_spelling(dpcalc):
    # --sigma is the noise multiplier: the per-coordinate noise stds were --sigmas once
    run = dpcalc("mechanism", "gaussian", "--sensitivities", "12,6", "--sigmas", "17,8.5")
    assert run.code == 2 and run.stdout == ""
    assert run.stderr == "Error: --sigma is a noise multiplier elsewhere; the per-coordinate noise stds are --noise-stds\n"
