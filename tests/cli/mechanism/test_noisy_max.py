"""`dpcalc mechanism noisy-max`: every option, every error path, the JSON contract."""

from __future__ import annotations

import math

import pytest

RESULT_KEYS = {"noise", "epsilon", "scale", "gap", "beta", "exact", "candidates", "sensitivity", "monotone",
               "accuracy", "solved_for", "source"}
INPUT_KEYS = {"noise", "candidates", "eps", "scale", "gap", "beta", "sensitivity", "monotone", "max_eps"}


def run_json(dpcalc, *args):
    run = dpcalc("mechanism", "noisy-max", *args, "--json")
    assert (run.code, run.stderr) == (0, "")
    return run.json()


def test_gumbel_gap_table_and_json(dpcalc):
    run = dpcalc("mechanism", "noisy-max", "--noise", "gumbel", "--candidates", "10", "--eps", "1", "--beta", "0.05")
    assert run.code == 0 and "Gumbel (exponential mechanism)" in run.stdout and "exact, worst case" in run.stdout
    document = run_json(dpcalc, "--noise", "gumbel", "--candidates", "10", "--eps", "1", "--beta", "0.05")
    assert document["command"] == "mechanism noisy-max"
    assert set(document["inputs"]) == INPUT_KEYS and set(document["result"]) == RESULT_KEYS
    result = document["result"]
    # closed form: scale 2, gap = 2 ln(9 * 19) = 2 ln 171
    assert result["scale"] == 2.0 and result["gap"] == pytest.approx(2 * math.log(171), rel=1e-14)
    assert (result["solved_for"], result["exact"]) == ("gap", True)
    assert "Thm 3.10" in result["source"]


def test_laplace_monotone_epsilon(dpcalc):
    result = run_json(dpcalc, "--noise", "laplace", "--candidates", "2", "--gap", "20", "--beta", "0.01",
                      "--monotone")["result"]
    # m = 2: (2 + x) e^-x / 4 = 0.01 with x = 20 / b, and eps = 1 / b (monotone, Delta = 1)
    x = 20 * result["epsilon"]
    assert (2 + x) * math.exp(-x) / 4 == pytest.approx(0.01, rel=1e-12)
    assert result["scale"] == pytest.approx(1 / result["epsilon"], rel=1e-15)
    assert result["exact"] is False and "Claim 3.9" in result["source"] and result["solved_for"] == "epsilon"


def test_exponential_noise_from_scale(dpcalc):
    result = run_json(dpcalc, "--noise", "exponential", "--candidates", "2", "--scale", "2", "--gap", "3")["result"]
    # m = 2: beta = e^-x / 2 exactly, x = 3 / 2; eps = 2 Delta / b = 1
    assert result["beta"] == pytest.approx(math.exp(-1.5) / 2, rel=1e-14)
    assert result["epsilon"] == 1.0 and "permute-and-flip" in result["source"]
    run = dpcalc("mechanism", "noisy-max", "--noise", "exponential", "--candidates", "2", "--scale", "2", "--gap", "3")
    assert "c Delta / b" in run.stdout


def test_sensitivity_scales_the_noise(dpcalc):
    result = run_json(dpcalc, "--noise", "laplace", "--candidates", "5", "--eps", "0.5", "--beta", "0.1",
                      "--sensitivity", "3")["result"]
    assert result["scale"] == 12.0  # 2 Delta / eps


def test_max_eps_gate(dpcalc):
    args = ("mechanism", "noisy-max", "--noise", "gumbel", "--candidates", "10", "--gap", "5", "--beta", "0.05")
    assert dpcalc(*args, "--max-eps", "10").code == 0
    assert dpcalc(*args, "--max-eps", "0.1").code == 1


@pytest.mark.parametrize("args, message", [
    (("--noise", "gumbel", "--candidates", "10", "--gap", "1"),
     "Error: give two of --eps, --gap and --beta, got only --gap: add --eps (to get beta) or --beta (to get epsilon)\n"),
    (("--noise", "gumbel", "--candidates", "10"),
     "Error: give --eps (alone: the gap at beta 0.5 to 0.01), or two of --eps, --gap and --beta (the third is "
     "computed), e.g. --eps 1 --beta 0.05 to get the gap\n"),
    (("--noise", "gumbel", "--candidates", "10", "--eps", "1", "--gap", "1", "--beta", "0.1"),
     "Error: --eps, --gap and --beta cannot all be given: drop the one to compute (drop --eps to get epsilon, "
     "--gap to get gap, --beta to get beta)\n"),
    (("--noise", "gumbel", "--candidates", "10", "--eps", "1", "--scale", "1", "--beta", "0.1"),
     "Error: --eps and --scale cannot be given together; the scale is c Delta / eps: give one\n"),
    (("--noise", "laplace", "--candidates", "2", "--gap", "1", "--beta", "0.6"),
     "Error: --beta must be below 0.5 (the failure probability with equal scores: any epsilon gives it), got 0.6\n"),
    (("--noise", "laplace", "--candidates", "2", "--gap", "0", "--beta", "0.1"),
     "Error: --gap must be in (0, inf) to compute epsilon (a gap of 0 needs infinite epsilon), got 0\n"),
    (("--noise", "laplace", "--candidates", "1", "--eps", "1", "--beta", "0.1"),
     "Error: --candidates must be an integer in [2, inf), got 1\n"),
    (("--noise", "laplace", "--candidates", "3", "--eps", "1", "--gap", "-1"), "Error: --gap must be in [0, inf), got -1\n"),
    (("--noise", "laplace", "--candidates", "3", "--scale", "0", "--gap", "1"), "Error: --scale must be in (0, inf), got 0\n"),
    (("--noise", "laplace", "--candidates", "3", "--eps", "1", "--beta", "0"), "Error: --beta must be in (0, 1), got 0\n"),
    (("--noise", "laplace", "--candidates", "3", "--eps", "1", "--beta", "0.1", "--sensitivity", "-2"),
     "Error: --sensitivity must be in (0, inf), got -2\n"),
])
def test_errors(dpcalc, args, message):
    run = dpcalc("mechanism", "noisy-max", *args)
    assert (run.code, run.stdout, run.stderr) == (2, "", message)


def test_unknown_noise(dpcalc):
    run = dpcalc("mechanism", "noisy-max", "--noise", "cauchy", "--candidates", "3", "--eps", "1", "--beta", "0.1")
    assert run.code == 2 and "--noise" in run.stderr and "'cauchy' is not one of" in run.stderr
    assert run.stderr.count("\n") == 1


def test_gap_zero_gives_the_tie_probability(dpcalc):
    result = run_json(dpcalc, "--noise", "gumbel", "--candidates", "4", "--eps", "1", "--gap", "0")["result"]
    assert result["beta"] == pytest.approx(0.75, rel=1e-15)


def test_help_lists_examples(dpcalc):
    run = dpcalc("mechanism", "noisy-max", "--help")
    assert run.code == 0 and "dpcalc mechanism noisy-max --noise gumbel --candidates 10 --eps 1 --beta 0.05" in run.stdout


@pytest.mark.parametrize("noise", ["laplace", "gumbel", "exponential"])
def test_privacy_alone_gives_the_gap_at_standard_betas(dpcalc, noise):
    # each row is the gap that --beta solves for at that beta (the same relation, inverted)
    alone = run_json(dpcalc, "--noise", noise, "--candidates", "10", "--eps", "1")["result"]
    assert alone["gap"] is None and alone["beta"] is None and alone["solved_for"] == "accuracy"
    for point in alone["accuracy"]:
        solved = run_json(dpcalc, "--noise", noise, "--candidates", "10", "--eps", "1", "--beta", repr(point["beta"]))
        assert point["gap"] == solved["result"]["gap"]
