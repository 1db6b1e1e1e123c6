"""`dpcalc mechanism smooth-sensitivity` on the command line: every option, every error path, the JSON contract."""

from __future__ import annotations

import math

import pytest

RESULT_KEYS = {
    "noise", "privacy", "epsilon", "delta", "rho", "alpha", "smoothness", "lln_sigma", "degrees", "smooth_sensitivity", "scale", "std",
    "error", "confidence", "failure_probability", "accuracy_exact", "solved_for", "source",
}
INPUT_KEYS = {"noise", "eps", "scale", "delta", "smooth_sensitivity", "error", "confidence", "smoothness", "lln_sigma", "degrees",
              "max_eps"}
COMMAND = ("mechanism", "smooth-sensitivity")


def test_laplace_table_and_json(dpcalc):
    run = dpcalc(*COMMAND, "--eps", "1", "--delta", "1e-6", "--confidence", "0.95")
    assert (run.code, run.stderr) == (0, "")
    # exact: alpha = 0.5, beta = 1 / (2 ln(2e6)) = 0.034462, error = 2 ln 20 = 5.991465
    for text in ("0.034462", "5.991465", "(eps, delta)-DP"):
        assert text in run.stdout
    document = dpcalc(*COMMAND, "--eps", "1", "--delta", "1e-6", "--confidence", "0.95", "--json").json()
    assert document["command"] == "mechanism smooth-sensitivity"
    assert set(document["inputs"]) == INPUT_KEYS and set(document["result"]) == RESULT_KEYS
    result = document["result"]
    assert (result["alpha"], result["scale"], result["solved_for"], result["accuracy_exact"]) == (0.5, 2.0, "error", True)
    assert result["smoothness"] == pytest.approx(1 / (2 * math.log(2e6)), rel=1e-15)
    assert result["error"] == pytest.approx(2 * math.log(20), rel=1e-15)
    assert result["rho"] is None and result["lln_sigma"] is None and result["std"] == pytest.approx(2 * math.sqrt(2))


def test_cauchy(dpcalc):
    document = dpcalc(*COMMAND, "--noise", "cauchy", "--eps", "1", "--smooth-sensitivity", "0.5", "--error", "10",
                      "--json").json()
    result = document["result"]
    # exact: scale 6 S / eps = 3, P(|noise| > 10) = (2/pi) arctan(3/10)
    assert (result["alpha"], result["smoothness"], result["scale"], result["delta"]) == (1 / 6, 1 / 6, 3.0, 0.0)
    assert result["failure_probability"] == pytest.approx(2 / math.pi * math.atan(0.3), rel=1e-15)
    assert result["std"] == "inf" and result["privacy"] == "eps-DP" and result["solved_for"] == "confidence"
    assert dpcalc(*COMMAND, "--noise", "CAUCHY", "--eps", "1").code == 0  # case-insensitive choice


def test_cauchy_epsilon_from_accuracy(dpcalc):
    result = dpcalc(*COMMAND, "--noise", "cauchy", "--error", "10", "--confidence", "0.9", "--json").json()["result"]
    # exact: scale = 10 tan(pi 0.1 / 2), eps = 6 / scale
    assert result["epsilon"] == pytest.approx(6 / (10 * math.tan(math.pi * 0.05)), rel=1e-14)


def test_laplace_log_normal(dpcalc):
    run = dpcalc(*COMMAND, "--noise", "laplace-log-normal", "--smoothness", "0.1", "--error", "5", "--confidence", "0.9",
                 "--json")
    assert run.code == 0
    document = run.json()
    result = document["result"]
    assert result["solved_for"] == "epsilon" and result["accuracy_exact"] is False
    assert result["rho"] == pytest.approx(result["epsilon"] ** 2 / 2, rel=1e-15)
    # BS19 Sec. 3.1.1: eps = t / sigma + e^(3 sigma^2 / 2) s
    assert result["epsilon"] == pytest.approx(0.1 / result["lln_sigma"] + math.exp(1.5 * result["lln_sigma"] ** 2)
                                              * result["alpha"], rel=1e-14)
    assert document["warnings"] == ["the accuracy is an upper bound on the failure probability (Chebyshev with the "
                                    "exact variance), not its exact value"]
    given_sigma = dpcalc(*COMMAND, "--noise", "laplace-log-normal", "--smoothness", "0.1", "--eps", "1", "--lln-sigma", "0.5",
                         "--json").json()["result"]
    assert given_sigma["lln_sigma"] == 0.5
    assert given_sigma["alpha"] == pytest.approx(math.exp(-0.375) * (1 - 0.2), rel=1e-15)
    scale = dpcalc(*COMMAND, "--noise", "laplace-log-normal", "--smoothness", "0.1", "--scale", "2",
                   "--smooth-sensitivity", "3", "--json").json()["result"]
    assert scale["alpha"] == 1.5 and scale["solved_for"] == "noise"


def test_student_t(dpcalc):
    run = dpcalc(*COMMAND, "--noise", "student-t", "--degrees", "3", "--smoothness", "0.05", "--eps", "1", "--confidence",
                 "0.95", "--json")
    assert run.code == 0, run.stderr
    result = run.json()["result"]
    # BS19 Thm 31: s = 2 sqrt(3) (1/4 - 0.05); error = (1/s) * 3.18244630528371 (the T(3) 95% two-sided quantile)
    s = 2 * 3**0.5 * 0.2
    assert result["alpha"] == pytest.approx(s, rel=1e-15)
    assert result["error"] == pytest.approx(3.18244630528371 / s, rel=1e-12)
    assert (result["degrees"], result["delta"], result["privacy"], result["accuracy_exact"]) == (3, 0.0, "eps-DP", True)
    assert result["std"] == pytest.approx(3**0.5 / s, rel=1e-15)
    default = dpcalc(*COMMAND, "--noise", "student-t", "--smoothness", "0.05", "--eps", "1", "--json").json()["result"]
    assert default["degrees"] == 3
    back = dpcalc(*COMMAND, "--noise", "student-t", "--smoothness", "0.05", "--error", str(result["error"]),
                  "--confidence", "0.95", "--json").json()["result"]
    assert back["epsilon"] == pytest.approx(1.0, rel=1e-12) and back["solved_for"] == "epsilon"
    assert dpcalc(*COMMAND, "--noise", "student-t", "--smoothness", "0.05", "--eps", "1", "--max-eps", "0.9").code == 1


def test_max_eps(dpcalc):
    assert dpcalc(*COMMAND, "--noise", "cauchy", "--eps", "1", "--max-eps", "1").code == 0
    run = dpcalc(*COMMAND, "--noise", "cauchy", "--eps", "1", "--max-eps", "0.5")
    assert run.code == 1 and "Budget exceeded: epsilon 1 " in run.stderr
    refused = dpcalc(*COMMAND, "--noise", "laplace-log-normal", "--smoothness", "0.1", "--eps", "1", "--max-eps", "1")
    assert refused.code == 2
    assert refused.stderr == ("Error: --max-eps: laplace-log-normal noise gives (eps^2/2)-CDP, not an (eps, delta) "
                              "bound: state it at a delta with dpcalc convert (rho = eps^2/2)\n")


@pytest.mark.parametrize("args, message", [
    (("--eps", "1"), "Error: --delta is required with --noise laplace: its beta is eps / (2 ln(2/delta)) "
                     "(or use --noise cauchy for pure DP)"),
    (("--noise", "cauchy", "--eps", "1", "--delta", "1e-6"),
     "Error: --delta must be absent with --noise cauchy: Cauchy-type noise gives pure eps-DP (delta = 0) only, got 1e-06"),
    (("--noise", "laplace-log-normal", "--smoothness", "1", "--eps", "1", "--delta", "1e-6"),
     "Error: --delta must be absent with --noise laplace-log-normal: it gives (eps^2/2)-CDP (rho-zCDP; dpcalc convert "
     "states it at a delta), got 1e-06"),
    (("--noise", "laplace-log-normal", "--eps", "1"),
     "Error: --smoothness is required with --noise laplace-log-normal: the smoothness t of S, > 0"),
    (("--noise", "cauchy", "--eps", "1", "--smoothness", "0.1"),
     "Error: --smoothness must be absent with --noise cauchy: the smoothness beta follows from eps, got 0.1"),
    (("--noise", "student-t", "--eps", "1", "--delta", "1e-6", "--smoothness", "0.01"),
     "Error: --delta must be absent with --noise student-t: Student's T noise gives pure eps-DP (delta = 0) only, "
     "got 1e-06"),
    (("--noise", "student-t", "--eps", "1"),
     "Error: --smoothness is required with --noise student-t: the smoothness t of S, > 0"),
    (("--noise", "student-t", "--eps", "1", "--smoothness", "0.3"),
     "Error: --smoothness must be below epsilon / (d + 1) = 0.25 (Student's T with d = 3 spends (d + 1) t of epsilon on "
     "the smoothness), got 0.3"),
    (("--noise", "student-t", "--eps", "1", "--smoothness", "0.01", "--degrees", "0"),
     "Error: --degrees must be an integer in [1, 100], got 0"),
    (("--noise", "student-t", "--eps", "1", "--smoothness", "0.01", "--degrees", "2.5"),
     "Error: --degrees must be an integer in [1, 100], got 2.5"),
    (("--noise", "student-t", "--eps", "1", "--smoothness", "0.01", "--lln-sigma", "1"),
     "Error: --lln-sigma must be absent with --noise student-t: it belongs to laplace-log-normal, got 1.0"),
    # --sigma is a Gaussian noise multiplier elsewhere: the laplace-log-normal shape is --lln-sigma
    (("--noise", "laplace-log-normal", "--eps", "1", "--smoothness", "0.1", "--sigma", "0.5"),
     "Error: No such option '--sigma'. Did you mean '--lln-sigma'?"),
    (("--noise", "cauchy", "--eps", "1", "--degrees", "3"),
     "Error: --degrees must be absent with --noise cauchy: degrees belong to student-t, got 3"),
    (("--noise", "cauchy", "--eps", "1", "--lln-sigma", "0.1"),
     "Error: --lln-sigma must be absent with --noise cauchy: it belongs to laplace-log-normal, got 0.1"),
    (("--noise", "laplace-log-normal", "--smoothness", "1", "--eps", "1", "--lln-sigma", "0.5"),
     "Error: --lln-sigma must be above beta / epsilon = 1 (s = e^(-3 sigma^2/2) (epsilon - beta / sigma) must be "
     "positive), got 0.5"),
    (("--noise", "laplace-log-normal", "--smoothness", "1", "--eps", "0.001"),
     "Error: --smoothness must be small enough against epsilon 0.001 that the noise scale is finite (sigma 1000 makes "
     "e^(-3 sigma^2 / 2) underflow), got 1.0"),
    (("--noise", "gaussian", "--eps", "1"), None),
    (("--noise", "cauchy"), "Error: give --eps (or --scale), or --error with --confidence to get epsilon, "
                            "e.g. --eps 1 --confidence 0.95 to get the error"),
    (("--noise", "cauchy", "--error", "1"), "Error: give two of --eps (or --scale), --error and --confidence, got only "
                                            "--error: add --confidence (to get epsilon) or --eps (to get the confidence)"),
    (("--noise", "cauchy", "--eps", "1", "--scale", "1"),
     "Error: --eps and --scale cannot both be given: the scale is the noise the epsilon sets (drop one)"),
    (("--noise", "cauchy", "--eps", "1", "--error", "1", "--confidence", "0.5"),
     "Error: --eps, --error and --confidence cannot all be given: drop the one to compute (drop --eps to get "
     "epsilon, --error to get the error, --confidence to get the confidence)"),
    (("--noise", "cauchy", "--eps", "-1"), "Error: --eps must be in (0, inf), got -1"),
    (("--noise", "cauchy", "--scale", "0"), "Error: --scale must be in (0, inf), got 0"),
    (("--noise", "cauchy", "--eps", "1", "--smooth-sensitivity", "0"),
     "Error: --smooth-sensitivity must be in (0, inf), got 0"),
    (("--noise", "cauchy", "--eps", "1", "--error", "inf"), "Error: --error must be in (0, inf), got inf"),
    (("--noise", "cauchy", "--eps", "1", "--confidence", "1.5"), "Error: --confidence must be in (0, 1), got 1.5"),
    (("--eps", "1", "--delta", "1"), "Error: --delta must be in (0, 1), got 1"),
    (("--noise", "laplace-log-normal", "--smoothness", "0", "--eps", "1"), "Error: --smoothness must be in (0, inf), got 0"),
    (("--noise", "laplace-log-normal", "--smoothness", "1", "--eps", "1", "--lln-sigma", "-1"),
     "Error: --lln-sigma must be in (0, inf), got -1"),
    (("--noise", "cauchy", "--scale", "1e-320", "--smooth-sensitivity", "1e300"),
     "Error: --scale must be such that S / scale is positive and finite (S 1e+300), got 1e-320"),
    # the noise scale underflows to 0 (found by the slow property test: a division by zero)
    (("--noise", "laplace-log-normal", "--eps", "1e300", "--smoothness", "0.1", "--error", "1",
      "--smooth-sensitivity", "1e-300"),
     "Error: --eps must be such that the noise scale S / alpha is a positive finite float64 (S = 1e-300, "
     "alpha = 1e+300), got 1e+300"),
    # S / error near 1e-600: the minimising sigma's log(k) and the scale's range (log of 0 before)
    (("--noise", "laplace-log-normal", "--smoothness", "0.1", "--error", "1e300", "--confidence", "0.9",
      "--smooth-sensitivity", "1e-300"),
     "Error: --error must be such that the noise scale it needs is a positive finite float64, as is S / scale "
     "(S = 1e-300, scale = 8.54902e+61), got 1e+300"),
    (("--noise", "cauchy", "--error", "1e300", "--confidence", "0.9", "--smooth-sensitivity", "1e-300"),
     "Error: --error must be such that the noise scale it needs is a positive finite float64, as is S / scale "
     "(S = 1e-300, scale = 1.58384e+299), got 1e+300"),
    # 1 - confidence rounds to 1 (it named --confidence with the range of 1 - confidence before)
    (("--eps", "1", "--delta", "1e-6", "--confidence", "1e-300"),
     "Error: --confidence must be at least 5.6e-17 (1 - probability is computed and must stay below 1), got 1e-300"),
])
def test_errors(dpcalc, args, message):
    run = dpcalc(*COMMAND, *args)
    assert run.code == 2 and run.stdout == ""
    if message is None:  # click's own message for a bad choice names the option and the choices
        assert run.stderr.startswith("Error: Invalid value for '--noise'") and "laplace-log-normal" in run.stderr
        return
    assert run.stderr == message + "\n"


def test_help_lists_the_examples(dpcalc):
    run = dpcalc(*COMMAND, "--help")
    assert run.code == 0 and "dpcalc mechanism smooth-sensitivity --noise cauchy --error 10 --confidence 0.9" in run.stdout


def test_old_beta_is_refused_with_the_new_spelling(dpcalc):
    # --beta is a failure probability in exponential, noisy-max and svt: the smoothness was --beta here once
    run = dpcalc(*COMMAND, "--noise", "student-t", "--beta", "0.05", "--eps", "1")
    assert run.code == 2 and run.stdout == ""
    assert run.stderr == "Error: --beta is a failure probability elsewhere; the smoothness parameter is --smoothness\n"
