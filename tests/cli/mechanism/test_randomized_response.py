"""`dpcalc mechanism randomized-response` on the command line: every option, every error path, JSON."""

from __future__ import annotations

import math

import pytest

RESULT_KEYS = {
    "epsilon", "k", "flip_probability", "keep_probability", "other_probability", "n", "std_error", "frequency",
    "solved_for", "source",
}
INPUT_KEYS = {"eps", "flip_probability", "k", "n", "std_error", "frequency", "max_eps"}


def run_json(dpcalc, *args):
    run = dpcalc("mechanism", "randomized-response", *args, "--json")
    assert run.code == 0, run.stderr
    document = run.json()
    assert document["command"] == "mechanism randomized-response"
    assert set(document["inputs"]) == INPUT_KEYS and set(document["result"]) == RESULT_KEYS
    return document


def test_table(dpcalc):
    run = dpcalc("mechanism", "randomized-response", "--eps", "1", "--n", "10000", "--k", "4")
    assert (run.code, run.stderr) == (0, "")
    assert "k-ary, k = 4" in run.stdout and "worst frequency" in run.stdout


def test_eps_to_flip_and_back(dpcalc):
    result = run_json(dpcalc, "--eps", "1")["result"]
    # Warner 1965: flip = 1 / (1 + e)
    assert result["flip_probability"] == pytest.approx(1 / (1 + math.e), rel=1e-15)
    assert (result["solved_for"], result["n"], result["std_error"]) == ("none", None, None)
    result = run_json(dpcalc, "--flip-probability", "0.25", "--k", "4")["result"]
    assert result["epsilon"] == pytest.approx(math.log(9), rel=1e-15)  # (k - 1)(1 - f)/f = 9
    assert result["other_probability"] == pytest.approx(0.25 / 3, rel=1e-15)


def test_std_error(dpcalc):
    document = run_json(dpcalc, "--eps", "1", "--respondents", "1000")
    # binary: Var = e / (n (e - 1)^2)
    assert document["result"]["std_error"] == pytest.approx(math.sqrt(math.e / 1000) / (math.e - 1), rel=1e-14)
    assert document["inputs"]["n"] == 1000
    result = run_json(dpcalc, "--eps", "1", "--n", "1000", "--k", "5", "--frequency", "0")["result"]
    # k = 5 at phi = 0: Var = (e + 3) / (n (e - 1)^2)
    assert result["std_error"] == pytest.approx(math.sqrt((math.e + 3) / 1000) / (math.e - 1), rel=1e-14)
    assert result["frequency"] == 0.0


def test_epsilon_and_respondents_solved(dpcalc):
    result = run_json(dpcalc, "--n", "10000", "--std-error", "0.01")["result"]
    assert result["solved_for"] == "epsilon" and result["std_error"] == 0.01
    # binary: n s^2 (e^eps - 1)^2 = e^eps, i.e. w^2 - w - 1 = 0 with n s^2 = 1: w = golden ratio
    assert result["epsilon"] == pytest.approx(math.log1p((1 + math.sqrt(5)) / 2), rel=1e-14)
    result = run_json(dpcalc, "--flip-probability", "0.25", "--std-error", "0.01")["result"]
    assert result["n"] == 7500 and result["solved_for"] == "respondents"


def test_frequency_warning_for_binary(dpcalc):
    document = run_json(dpcalc, "--eps", "1", "--n", "100", "--frequency", "0.3")
    assert document["warnings"] == ["k = 2: the standard error does not depend on the frequency."]


def test_max_eps(dpcalc):
    run = dpcalc("mechanism", "randomized-response", "--flip-probability", "0.1", "--max-eps", "1")
    assert run.code == 1 and "Budget exceeded: epsilon 2.197225" in run.stderr
    document = dpcalc("mechanism", "randomized-response", "--eps", "0.5", "--max-eps", "1", "--json").json()
    assert document["budget"]["within_budget"] is True


@pytest.mark.parametrize("args, message", [
    (("--eps", "1", "--flip-probability", "0.2"),
     "--eps and --flip-probability cannot be given together; give one (they are the same privacy level)"),
    (("--eps", "1", "--n", "10", "--std-error", "0.1"),
     "--eps or --flip-probability, --n and --std-error cannot all be given: drop the one to compute"),
    (("--n", "10",), "give two of --eps or --flip-probability, --n and --std-error, got only --n: "
                     "add --eps or --flip-probability or --std-error"),
    ((), "give two of --eps or --flip-probability, --n and --std-error (the third is computed), "
         "e.g. --eps 1 --n 10000 to get the standard error"),
    (("--flip-probability", "0.5",), "--flip-probability must be in (0, 0.5), got 0.5"),
    (("--flip-probability", "0.8", "--k", "4"), "--flip-probability must be in (0, 0.75), got 0.8"),
    (("--flip-probability", "1",), "--flip-probability must be in (0, 1), got 1"),
    (("--eps", "-1",), "--eps must be in (0, inf), got -1"),
    (("--eps", "1", "--k", "1"), "--k must be an integer in [2, 1e+15], got 1"),
    (("--eps", "1", "--n", "0"), "--n must be an integer in [1, 1e+300), got 0"),
    (("--eps", "1", "--std-error", "0"), "--std-error must be in (0, inf), got 0"),
    (("--eps", "1", "--n", "10", "--frequency", "2"), "--frequency must be in [0, 1], got 2"),
    (("--eps", "1", "--frequency", "0.5"),
     "--frequency goes with --n or --std-error (the standard error at that frequency)"),
    (("--n", "1", "--std-error", "1e-320"),
     "--std-error must be large enough for a finite epsilon at these respondents, got 1e-320"),
    (("--eps", "1e-160", "--std-error", "1e-10"),
     "--std-error must be large enough that fewer than 1e300 respondents reach it, got 1e-10"),
])
def test_errors(dpcalc, args, message):
    run = dpcalc("mechanism", "randomized-response", *args)
    assert (run.code, run.stdout, run.stderr) == (2, "", f"Error: {message}\n")


def test_help_lists_the_examples(dpcalc):
    run = dpcalc("mechanism", "randomized-response", "--help")
    assert run.code == 0 and "dpcalc mechanism randomized-response --eps 1 --n 10000 --k 4" in run.stdout
