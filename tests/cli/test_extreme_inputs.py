"""Extreme command-line inputs that once ended in an internal error (exit 70), NaN in JSON or a
hang: each is now one line on stderr naming the option, its range and the value (exit 2), or an
answer."""

from __future__ import annotations

import math

import pytest

from dpcalc.cli.options import InputError, decimal_text, parse_integer, parse_real
from dpcalc.cli.syntax import expand
from dpcalc.core.validation import POSITIVE, PROBABILITY

HUGE_STOP = "1:1e999999999:1"
ASCII_ONLY = "written with the ASCII digits 0-9 only (no underscores, no digits of other scripts)"
ARABIC_ELEVEN = "\u0661\u0661"  # Arabic-Indic digits: float() reads them as 11


def refused(run, message: str) -> None:
    assert run.code == 2 and run.stdout == "", (run.code, run.stderr)
    assert run.stderr == f"Error: {message}\n"


@pytest.mark.parametrize("command", [
    ("gdp", "--p", "0.004", "--sigma", "1.1", "--no-tight", "--T"),
    ("rdp", "--p", "0.004", "--sigma", "1.1", "--no-tight", "--T"),
    ("pld", "--p", "0.004", "--sigma", "1.1", "--T"),
    ("risk", "--p", "0.004", "--sigma", "1.1", "--T"),
    ("calibrate", "--target-eps", "2", "--p", "0.004", "--T"),
])
def test_a_sweep_with_an_astronomical_stop_is_refused_before_it_is_expanded(dpcalc, command):
    refused(dpcalc(*command, HUGE_STOP),
            f"--T: the range '{HUGE_STOP}' has about 1e+999999999 values; a sweep takes at most 10000 rows")


def test_every_swept_option_sizes_its_range_first(dpcalc):
    refused(dpcalc("calibrate", "--target-eps", HUGE_STOP, "--p", "0.004", "--T", "100"),
            f"--target-eps: the range '{HUGE_STOP}' has about 1e+999999999 values; a sweep takes at most 10000 rows")
    refused(dpcalc("gdp", "--p", "0.004", "--sigma", "0:1:1e-999999999", "--T", "10", "--no-tight"),
            "--sigma: the range '0:1:1e-999999999' has about 1e+999999999 values; a sweep takes at most 10000 rows")
    refused(dpcalc("rdp", "--p", "0.004", "--sigma", "1", "--T", "10", "--orders", "2:1e999999999:1"),
            "--orders: the range '2:1e999999999:1' has about 1e+999999999 values; --orders takes at most 100000 "
            "orders (ranges expanded)")


@pytest.mark.parametrize("text, message", [
    ("1:1e99999999999999999999:1", "--T: the range stop must be 0 or between 1e-400 and 1e400 in size (beyond every "
                                   "option's range), got '1e99999999999999999999' in '1:1e99999999999999999999:1'"),
    ("1e999999999:1e999999999:1", "--T: the range start must be 0 or between 1e-400 and 1e400 in size (beyond every "
                                  "option's range), got '1e999999999' in '1e999999999:1e999999999:1'"),
    (f"1:{ARABIC_ELEVEN}:1", f"--T: the range stop must be a number, {ASCII_ONLY}, got '{ARABIC_ELEVEN}' in "
                             f"'1:{ARABIC_ELEVEN}:1'"),
])
def test_range_parts_beyond_any_option_are_refused(text, message):
    with pytest.raises(InputError) as error:
        expand("--T", text, integer=True)
    assert str(error.value) == message


def test_ranges_stay_exact_beyond_28_digits():
    assert expand("--n", "10000000000000000000000000000001:10000000000000000000000000000003:1", integer=True) == [
        "10000000000000000000000000000001", "10000000000000000000000000000002", "10000000000000000000000000000003"]
    assert expand("--p", "0:5e-324:5e-324") == ["0", "5E-324"]
    assert expand("--T", "1e299:3e299:1e299", integer=True) == ["1E+299", "2E+299", "3E+299"]


@pytest.mark.parametrize("args, message", [
    (("risk", "--p", "0.004", "--sigma", "1.1", "--T", "1000", "--fpr", "1e-320"), "--fpr must be in [1e-300, 1), got 1e-320"),
    (("risk", "--p", "0.004", "--sigma", "1.1", "--T", "1000", "--kappa", "1e-320"),
     "--kappa must be in [1e-300, 1), got 1e-320"),
    (("calibrate", "--target-tpr", "0.05", "--at-fpr", "1e-320", "--p", "0.004", "--T", "1000"),
     "--at-fpr must be in [1e-300, 1), got 1e-320"),
    (("calibrate", "--target-eps", "2", "--p", "0.004", "--T", "1000", "--precision", "1e-320"),
     "--precision must be in [1e-12, 0.1], got 1e-320"),
    (("calibrate", "--target-eps", "2", "--p", "0.004", "--T", "1000", "--delta", "1e-320"),
     "--delta must be in [1e-300, 1), got 1e-320"),
    (("mechanism", "smooth-sensitivity", "--eps", "5e-324", "--delta", "1e-5", "--confidence", "0.9"),
     "--eps must be such that the noise scale S / alpha is a positive finite float64 (S = 1, alpha = 0), got 5e-324"),
    (("mechanism", "svt", "--queries", "100", "--answers", "1", "--alpha", "5", "--beta", "0.05", "--sensitivity", "1e308"),
     "--sensitivity must be below 2.247e+307 (8 c Delta must be a finite float64), got 1e+308"),
    (("mechanism", "noisy-max", "--noise", "gumbel", "--candidates", "10", "--gap", "5e-324", "--beta", "0.05"),
     "--gap must be large enough that the noise scale gap / 5.14166 is above 0 in float64, got 4.94066e-324"),
    (("pld", "--p", "0.004", "--sigma", "1.1", "--T", "100", "--examples-per-user", "1" + "0" * 399),
     "--examples-per-user must be an integer in [1, inf) and below 1e300, got 10000000000000000000...00000000 "
     "(400 characters)"),
    (("pld", "--p", "0.004", "--sigma", "1.1", "--T", "100", "--examples-per-user", "0"),
     "--examples-per-user must be an integer in [1, inf), got 0"),
    (("mechanism", "noisy-max"), "Missing option '--noise'. Choose from: laplace, gumbel, exponential"),
    (("gdp", "--p", "0.004", "--sigma", "1.1", "--T", "10", "--sampling", "bogus"),
     "Invalid value for '--sampling': 'bogus' is not one of 'poisson', 'uniform'."),
    (("gdp", "--p", "1e-400", "--T", "10", "--sigma", "1", "--no-tight"),
     "--p must be in [0, 1], 0 or at least 5e-324 (the smallest float64 number), got 1e-400"),
    (("gdp", "--p", "0.1", "--T", "10", "--sigma", "\n-1", "--no-tight"), "--sigma must be in (0, inf), got \\n-1"),
])
def test_extreme_values_are_one_line_exit_2(dpcalc, args, message):
    refused(dpcalc(*args), message)


@pytest.mark.parametrize("option, value", [("--sigma", ARABIC_ELEVEN), ("--sigma", "1_1"), ("--T", "1_0"),
                                           ("--T", "\u0661"), ("--p", "0.\u0665"), ("--sigma", "\u00a011")])
def test_numbers_are_ascii_decimal_only(dpcalc, option, value):
    args = {"--p": "0.1", "--sigma": "1.1", "--T": "10", option: value}
    run = dpcalc("gdp", *(item for pair in args.items() for item in pair), "--no-tight")
    kind = "an integer in [1, inf)" if option == "--T" else ("a number in [0, 1]" if option == "--p"
                                                              else "a number in (0, inf)")
    refused(run, f"{option} must be {kind}, {ASCII_ONLY}, got {value!r}")


def test_every_numeric_parser_takes_ascii_decimal_only(dpcalc):
    for parse in (lambda text: parse_real("--x", text, POSITIVE), lambda text: parse_integer("--x", text)):
        for text in ("1_1", ARABIC_ELEVEN, "\uff11"):  # underscore, Arabic-Indic, fullwidth
            with pytest.raises(InputError, match="ASCII digits 0-9 only"):
                parse(text)
    assert decimal_text(" 1e-5 ") == "1e-5" and decimal_text("-.5") == "-.5" and decimal_text("inf") == "inf"
    assert decimal_text("1_000") is None and decimal_text("0x10") is None and decimal_text("") is None
    assert parse_integer("--x", "1" + "0" * 20) == 10**20
    refused(dpcalc("laplace-eps", "--tolerance", "1", "--probability", "0.\u0669"),
            f"--probability must be a number in (0, 1), {ASCII_ONLY}, got '0.\u0669'")
    refused(dpcalc("rdp", "--p", "0.1", "--sigma", "1", "--T", "10", "--orders", "2,1_0"),
            "--orders must be a comma-separated list of orders in (1, 1e+100] or ranges start:stop:step, "
            f"{ASCII_ONLY}, got '1_0'")
    refused(dpcalc("pld", "--phase", f"p=0.1,sigma=1,T={ARABIC_ELEVEN}"),
            f"--phase 1: T must be an integer in [1, inf), {ASCII_ONLY}, got '{ARABIC_ELEVEN}'")


def test_a_zero_with_a_huge_exponent_is_zero_without_the_work(dpcalc):
    # Fraction("0e-999999999") computes 10**999999999 first: exact() answers 0 at once
    run = dpcalc("gdp", "--p", "0e-999999999", "--T", "1", "--sigma", "1", "--no-tight", "--json")
    assert run.code == 0 and run.json()["result"]["epsilon"] == 0.0
    refused(dpcalc("gdp", "--p", "1e-999999999", "--epochs", "1", "--sigma", "1", "--no-tight"),
            "--p must be in [0, 1], 0 or at least 5e-324 (the smallest float64 number), got 1e-999999999")
    assert parse_real("--p", "0e-999999999", PROBABILITY) == 0.0


def test_subnormal_and_huge_noise_calibrate_the_steps(dpcalc):
    # sigma near 0: not even one step meets the target (exit 1, a message); sigma = 1e308: every
    # run a float64 counts meets it (the largest T searched, epsilon 0 at delta 1e-5)
    for sigma in ("1e-320", "5e-324"):
        run = dpcalc("calibrate", "--solve", "T", "--sigma", sigma, "--p", "0.004", "--target-eps", "2",
                     "--accountant", "gdp", "--json")
        assert run.code == 1 and "internal error" not in run.stderr
        assert "even T = 1 step gives epsilon inf > target 2" in run.stderr
    run = dpcalc("calibrate", "--solve", "T", "--sigma", "1e308", "--p", "0.004", "--target-eps", "2",
                 "--accountant", "rdp", "--json")
    assert run.code == 0 and run.stderr == "" and run.json()["result"]["epsilon"] == 0.0


def test_laplace_at_a_subnormal_epsilon_has_no_nan(dpcalc):
    run = dpcalc("mechanism", "laplace", "--eps", "1e-320", "--confidence", "0.95", "--bins", "10", "--json")
    assert run.code == 0
    result = run.json()["result"]
    assert result["scale"] == "inf" and result["error"] == "inf"
    # each of the 10 independent bins fails with q_1, 1 - (1 - q_1)^10 = 0.05
    assert 1.0 - (1.0 - result["per_bin_failure_probability"]) ** 10 == pytest.approx(0.05, rel=1e-12)


def test_gaussian_at_a_subnormal_sigma_answers(dpcalc):
    # noise of std 1e-320 never exceeds an error of 10, and gives no privacy: epsilon inf
    run = dpcalc("mechanism", "gaussian", "--sigma", "1e-320", "--error", "10", "--json")
    assert run.code == 0
    result = run.json()["result"]
    assert result["epsilon"] == "inf" and result["confidence"] == 1.0 and result["noise_std_classic"] == 0.0


@pytest.mark.parametrize("epsilon, beta", [("1e-100", "0.1"), ("1e100", "0.1"), ("1", "1e-300"), ("1", "1e300")])
def test_laplace_log_normal_far_from_epsilon_equal_to_beta(dpcalc, epsilon, beta):
    run = dpcalc("mechanism", "smooth-sensitivity", "--noise", "laplace-log-normal", "--eps", epsilon, "--smoothness", beta,
                 "--error", "5", "--json")
    assert run.code in (0, 2) and "internal error" not in run.stderr
    if run.code == 2:
        assert run.stderr.count("\n") == 1 and run.stderr.startswith("Error: --")
    else:
        result = run.json()["result"]
        # the variance-minimising sigma is the root of 5 (eps / t) sigma^3 - 5 sigma^2 - 1
        sigma, a = result["lln_sigma"], 5.0 * float(epsilon) / float(beta)
        assert math.isclose(a * sigma**3, 5.0 * sigma**2 + 1.0, rel_tol=1e-9)
