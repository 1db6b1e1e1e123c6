"""`dpcalc mechanism exponential`: every option, every error path, the JSON contract."""

from __future__ import annotations

import math

import pytest

RESULT_KEYS = {"epsilon", "alpha", "beta", "t", "sensitivity", "outcomes", "monotone", "sampling", "accuracy",
               "solved_for", "source"}
INPUT_KEYS = {"outcomes", "eps", "alpha", "beta", "sensitivity", "monotone", "max_eps"}
BASE = ("mechanism", "exponential", "--outcomes", "1000")


def test_table(dpcalc):
    run = dpcalc(*BASE, "--eps", "1", "--beta", "0.05")
    assert (run.code, run.stderr) == (0, "")
    # closed form: alpha = 2 (ln 1000 + ln 20) = 2 ln 20000 = 19.806975...; printed rounded up
    assert "19.806976" in run.stdout and "exp(eps u / (2 Delta))" in run.stdout and "Thm 3.11" in run.stdout


def test_json_contract(dpcalc):
    document = dpcalc(*BASE, "--eps", "1", "--beta", "0.05", "--json").json()
    assert document["command"] == "mechanism exponential"
    assert set(document["inputs"]) == INPUT_KEYS and set(document["result"]) == RESULT_KEYS
    result = document["result"]
    assert result["alpha"] == pytest.approx(2 * math.log(20000), rel=1e-15)
    assert result["t"] == pytest.approx(math.log(20), rel=1e-15)  # beta = e^-t
    assert (result["solved_for"], result["monotone"], result["sampling"]) == ("alpha", False, "exp(eps u / (2 Delta))")
    assert result["source"].startswith("Dwork and Roth 2014, Thm 3.11")
    assert document["warnings"] == []


@pytest.mark.parametrize("args, solved, expected", [
    (("--alpha", "20", "--beta", "0.01", "--sensitivity", "2"), "epsilon", 4 * math.log(100000) / 20),
    (("--eps", "0.5", "--alpha", "100"), "beta", 1000 * math.exp(-25)),
    (("--eps", "1", "--beta", "0.05", "--monotone"), "alpha", math.log(20000)),
])
def test_three_directions(dpcalc, args, solved, expected):
    result = dpcalc(*BASE, *args, "--json").json()["result"]
    assert result["solved_for"] == solved
    assert result[{"epsilon": "epsilon", "beta": "beta", "alpha": "alpha"}[solved]] == pytest.approx(expected, rel=1e-14)


def test_monotone_names_its_sampling_rule(dpcalc):
    run = dpcalc(*BASE, "--eps", "1", "--beta", "0.05", "--monotone")
    assert "exp(eps u / Delta)" in run.stdout and "monotone" in run.stdout
    assert dpcalc(*BASE, "--eps", "1", "--beta", "0.05", "--monotone", "--json").json()["result"]["sampling"] == \
        "exp(eps u / Delta)"


def test_huge_outcome_space(dpcalc):
    result = dpcalc("mechanism", "exponential", "--outcomes", "1e200", "--eps", "1", "--beta", "0.5", "--json").json()
    assert result["result"]["alpha"] == pytest.approx(2 * (200 * math.log(10) + math.log(2)), rel=1e-14)


def test_vacuous_warning(dpcalc):
    run = dpcalc(*BASE, "--eps", "1", "--alpha", "1")
    assert run.code == 0 and "Warning: the bound is vacuous at this alpha" in run.stderr


def test_max_eps_gate(dpcalc):
    assert dpcalc(*BASE, "--alpha", "20", "--beta", "0.05", "--max-eps", "1").code == 0
    assert dpcalc(*BASE, "--alpha", "10", "--beta", "0.05", "--max-eps", "1").code == 1
    document = dpcalc(*BASE, "--alpha", "10", "--beta", "0.05", "--max-eps", "1", "--json").json()
    assert document["budget"]["within_budget"] is False


@pytest.mark.parametrize("args, message", [
    (("--alpha", "1"), "Error: give two of --eps, --alpha and --beta, got only --alpha: add --eps (to get beta) "
                       "or --beta (to get epsilon)\n"),
    ((), "Error: give --eps (alone: alpha at beta 0.5 to 0.01), or two of --eps, --alpha and --beta (the third is "
         "computed), e.g. --eps 1 --beta 0.05 to get alpha\n"),
    (("--eps", "1", "--alpha", "2", "--beta", "0.1"),
     "Error: --eps, --alpha and --beta cannot all be given: drop the one to compute (drop --eps to get epsilon, "
     "--alpha to get alpha, --beta to get beta)\n"),
    (("--eps", "0", "--beta", "0.1"), "Error: --eps must be in (0, inf), got 0\n"),
    (("--eps", "abc", "--beta", "0.1"), "Error: --eps must be a number in (0, inf), got 'abc'\n"),
    (("--alpha", "-1", "--beta", "0.1"), "Error: --alpha must be in (0, inf), got -1\n"),
    (("--eps", "1", "--beta", "1"), "Error: --beta must be in (0, 1), got 1\n"),
    (("--eps", "1", "--beta", "nan"), "Error: --beta must be in (0, 1), got nan\n"),
    (("--eps", "1", "--beta", "0.1", "--sensitivity", "0"), "Error: --sensitivity must be in (0, inf), got 0\n"),
    (("--eps", "1", "--beta", "0.1", "--max-eps", "-1"), "Error: --max-eps must be in [0, inf), got -1\n"),
])
def test_errors(dpcalc, args, message):
    run = dpcalc(*BASE, *args)
    assert (run.code, run.stdout, run.stderr) == (2, "", message)


@pytest.mark.parametrize("outcomes, message", [
    ("0", "Error: --outcomes must be an integer in [1, inf), got 0\n"),
    ("2.5", "Error: --outcomes must be an integer in [1, inf), got 2.5\n"),
])
def test_outcomes_errors(dpcalc, outcomes, message):
    run = dpcalc("mechanism", "exponential", "--outcomes", outcomes, "--eps", "1", "--beta", "0.1")
    assert (run.code, run.stderr) == (2, message)


def test_outcomes_required(dpcalc):
    run = dpcalc("mechanism", "exponential", "--eps", "1", "--beta", "0.1")
    assert run.code == 2 and run.stderr == "Error: Missing option '--outcomes'.\n"


def test_help_lists_examples(dpcalc):
    run = dpcalc("mechanism", "exponential", "--help")
    assert run.code == 0 and "dpcalc mechanism exponential --outcomes 1000 --eps 1 --beta 0.05" in run.stdout


def test_epsilon_alone_gives_alpha_at_standard_betas(dpcalc):
    # alpha = (2 Delta / eps)(ln|R| + ln(1/beta)) (Dwork, Roth 2014, Thm 3.11) at each standard beta
    run = dpcalc(*BASE, "--eps", "1", "--json")
    assert run.code == 0
    result = run.json()["result"]
    assert set(result) == RESULT_KEYS and (result["alpha"], result["beta"], result["t"]) == (None, None, None)
    assert result["solved_for"] == "accuracy"
    assert [point["beta"] for point in result["accuracy"]] == [0.5, 0.1, 0.05, 0.01]
    for point in result["accuracy"]:
        assert point["alpha"] == pytest.approx(2 * (math.log(1000) + math.log(1 / point["beta"])), rel=1e-14)
    table = dpcalc(*BASE, "--eps", "1")
    assert table.code == 0 and "Accuracy at beta" in table.stdout and "23.025851" in table.stdout
    # the 0.05 row is the alpha --beta 0.05 solves for
    solved = dpcalc(*BASE, "--eps", "1", "--beta", "0.05", "--json").json()["result"]
    assert solved["accuracy"][2]["alpha"] == solved["alpha"]
