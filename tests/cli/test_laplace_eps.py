"""`dpcalc laplace-eps` on the command line: every option, every error path, the JSON contract."""

from __future__ import annotations

import math

import pytest

TOP_LEVEL_KEYS = {"command", "version", "inputs", "result", "warnings"}
RESULT_KEYS = {
    "epsilon", "scale", "tolerance", "probability", "dims", "one_sided", "std",
    "failure_probability", "sensitivity", "solved_for",
}
INPUT_KEYS = {"tolerance", "probability", "eps", "sensitivity", "dims", "one_sided", "max_eps"}
SEED = ("laplace-eps", "--tolerance", "1e-5", "--probability", "0.9")


def test_seed_table(dpcalc):
    run = dpcalc(*SEED)
    assert (run.code, run.stderr) == (0, "")
    # reference value (docs/reference-values.md, laplace-eps): eps = ln(10) / 1e-5 = 230258.509299.
    assert "230258.509299" in run.stdout
    assert "computed" in run.stdout and "sqrt(2) b" in run.stdout


def test_seed_json(dpcalc):
    run = dpcalc(*SEED, "--json")
    assert (run.code, run.stderr) == (0, "")
    document = run.json()
    assert set(document) == TOP_LEVEL_KEYS and document["command"] == "laplace-eps"
    assert set(document["inputs"]) == INPUT_KEYS
    assert document["inputs"] == {"tolerance": 1e-5, "probability": 0.9, "eps": None, "sensitivity": 1.0,
                                  "dims": 1, "one_sided": False, "max_eps": None}
    result = document["result"]
    assert set(result) == RESULT_KEYS
    assert result["epsilon"] == pytest.approx(math.log(10) / 1e-5, rel=1e-15)
    assert result["scale"] == pytest.approx(1e-5 / math.log(10), rel=1e-15)
    assert result["std"] == pytest.approx(math.sqrt(2) * result["scale"], rel=1e-15)
    assert result["failure_probability"] == 0.1  # exact from the decimal, not 1 - 0.9 in float64
    assert (result["dims"], result["one_sided"], result["solved_for"]) == (1, False, "epsilon")
    assert document["warnings"] == []


def test_probability_close_to_one_is_taken_exactly(dpcalc):
    # 1 - 0.999999999999 in float64 is 1.00009e-12; the text says 1e-12.
    result = dpcalc("laplace-eps", "--tolerance", "1", "--probability", "0.999999999999", "--json").json()["result"]
    assert result["failure_probability"] == 1e-12
    assert result["epsilon"] == pytest.approx(12 * math.log(10), rel=1e-15)
    # Even a probability that is 1.0 in float64.
    result = dpcalc("laplace-eps", "--tolerance", "1", "--probability", "0.99999999999999999999", "--json").json()["result"]
    assert result["failure_probability"] == 1e-20 and result["probability"] == 1.0
    assert result["epsilon"] == pytest.approx(20 * math.log(10), rel=1e-15)


def test_eps_and_probability_give_tolerance(dpcalc):
    result = dpcalc("laplace-eps", "--eps", "2", "--probability", "0.95", "--sensitivity", "3", "--json").json()["result"]
    assert result["solved_for"] == "tolerance"
    # P(|Y| <= t) = 1 - e^(-t/b), b = 3/2: t = b ln 20.
    assert result["tolerance"] == pytest.approx(1.5 * math.log(20), rel=1e-14)
    assert result["sensitivity"] == 3.0 and result["scale"] == 1.5


def test_eps_and_tolerance_give_probability(dpcalc):
    run = dpcalc("laplace-eps", "--eps", "1", "--tolerance", "3", "--json")
    result = run.json()["result"]
    assert result["solved_for"] == "probability"
    assert result["probability"] == pytest.approx(1 - math.exp(-3), rel=1e-15)
    assert run.json()["inputs"]["eps"] == 1.0


def test_dims_and_one_sided(dpcalc):
    result = dpcalc("laplace-eps", "--eps", "1", "--tolerance", "3", "--dims", "4", "--one-sided", "--json").json()["result"]
    assert result["probability"] == pytest.approx((1 - math.exp(-3) / 2) ** 4, rel=1e-15)
    assert (result["dims"], result["one_sided"]) == (4, True)
    table = dpcalc("laplace-eps", "--eps", "1", "--tolerance", "3", "--dims", "4", "--one-sided")
    assert table.code == 0 and "one-sided" in table.stdout and "all 4 coordinates" in table.stdout


def test_dims_accepts_scientific_integer(dpcalc):
    result = dpcalc("laplace-eps", "--tolerance", "1", "--probability", "0.9", "--dims", "1e6", "--json").json()["result"]
    assert result["dims"] == 1_000_000
    assert (1 - math.exp(-result["epsilon"])) ** 1_000_000 == pytest.approx(0.9, rel=1e-9)


def test_one_sided_trivial_probability_warns(dpcalc):
    run = dpcalc("laplace-eps", "--tolerance", "1", "--probability", "0.1", "--one-sided", "--dims", "2", "--json")
    document = run.json()
    assert run.code == 0
    assert document["result"]["epsilon"] == 0.0 and document["result"]["scale"] == "inf"
    assert "every noise scale" in document["warnings"][0]
    table = dpcalc("laplace-eps", "--tolerance", "1", "--probability", "0.1", "--one-sided", "--dims", "2")
    assert table.stderr.startswith("Warning: every noise scale")


def test_max_eps(dpcalc):
    within = dpcalc(*SEED, "--max-eps", "230260", "--json")
    budget = within.json()["budget"]
    assert within.code == 0 and budget["within_budget"] is True and budget["epsilon"] == within.json()["result"]["epsilon"]
    over = dpcalc(*SEED, "--max-eps", "1000", "--json")
    assert over.code == 1 and over.json()["budget"]["within_budget"] is False
    assert "Budget exceeded: epsilon 230258.5093 (the Laplace mechanism's pure epsilon at this scale (exact)) > --max-eps 1000" in over.stderr
    table = dpcalc(*SEED, "--max-eps", "1000")
    assert table.code == 1 and "EXCEEDED" in table.stdout


def test_infinite_epsilon_is_the_string_inf(dpcalc):
    run = dpcalc("laplace-eps", "--tolerance", "1e-308", "--probability", "0.999999", "--json")
    document = run.json()
    assert document["result"]["epsilon"] == "inf"
    assert "overflows" in document["warnings"][0]


@pytest.mark.parametrize(
    "args, message",
    [
        ((), "give two of --tolerance, --probability and --eps (the third is computed), "
             "e.g. --tolerance 1e-5 --probability 0.9 to get epsilon"),
        (("--tolerance", "1"), "give two of --tolerance, --probability and --eps, got only --tolerance: "
                               "add --probability (to get epsilon) or --eps (to get the probability)"),
        (("--probability", "0.9"), "give two of --tolerance, --probability and --eps, got only --probability: "
                                   "add --tolerance (to get epsilon) or --eps (to get the tolerance)"),
        (("--eps", "1"), "give two of --tolerance, --probability and --eps, got only --eps: "
                         "add --tolerance (to get the probability) or --probability (to get the tolerance)"),
        (("--tolerance", "1", "--probability", "0.9", "--eps", "1"),
         "--tolerance, --probability and --eps cannot all be given: drop the one to compute "
         "(drop --eps to get epsilon, --tolerance to get the tolerance, --probability to get the probability)"),
    ],
)
def test_two_of_three(dpcalc, args, message):
    run = dpcalc("laplace-eps", *args)
    assert (run.code, run.stderr, run.stdout) == (2, f"Error: {message}\n", "")


@pytest.mark.parametrize(
    "change, message",
    [
        (("--tolerance", "0"), "--tolerance must be in (0, inf), got 0"),
        (("--tolerance", "-1"), "--tolerance must be in (0, inf), got -1"),
        (("--tolerance", "inf"), "--tolerance must be in (0, inf), got inf"),
        (("--tolerance", "abc"), "--tolerance must be a number in (0, inf), got 'abc'"),
        (("--probability", "1"), "--probability must be in (0, 1), got 1"),
        (("--probability", "0"), "--probability must be in (0, 1), got 0"),
        (("--probability", "1.5"), "--probability must be in (0, 1), got 1.5"),
        (("--probability", "nan"), "--probability must be in (0, 1), got nan"),
        (("--probability", "abc"), "--probability must be a number in (0, 1), got 'abc'"),
        (("--probability", "0." + "9" * 400), "--probability must be at most 1 - 2.2e-308 (1 - probability is computed), got 0." + "9" * 400),
        # at most 2^-54 = 5.55e-17, 1 - probability rounds to 1
        (("--probability", "5.55e-17"), "--probability must be at least 5.6e-17 (1 - probability is computed and must "
         "stay below 1), got 5.55e-17"),
        (("--sensitivity", "0"), "--sensitivity must be in (0, inf), got 0"),
        (("--sensitivity", "inf"), "--sensitivity must be in (0, inf), got inf"),
        (("--dims", "0"), "--dims must be an integer in [1, inf), got 0"),
        (("--dims", "2.5"), "--dims must be an integer in [1, inf), got 2.5"),
        (("--max-eps", "-1"), "--max-eps must be in [0, inf), got -1"),
    ],
)
def test_invalid_values(dpcalc, change, message):
    args = list(SEED)
    if change[0] in args:
        args[args.index(change[0]) + 1] = change[1]
    else:
        args += change
    run = dpcalc(*args)
    assert (run.code, run.stderr, run.stdout) == (2, f"Error: {message}\n", "")


@pytest.mark.parametrize("value, message", [
    ("0", "--eps must be in (0, inf), got 0"),
    ("-2", "--eps must be in (0, inf), got -2"),
    ("inf", "--eps must be in (0, inf), got inf"),
])
def test_invalid_eps(dpcalc, value, message):
    run = dpcalc("laplace-eps", "--tolerance", "1", "--eps", value)
    assert (run.code, run.stderr) == (2, f"Error: {message}\n")


def test_help_has_examples(dpcalc):
    run = dpcalc("laplace-eps", "--help")
    assert run.code == 0
    for option in ("--tolerance", "--probability", "--eps", "--sensitivity", "--dims", "--one-sided", "--max-eps", "--json"):
        assert option in run.stdout
    assert "dpcalc laplace-eps --tolerance 1e-5 --probability 0.9" in run.stdout
