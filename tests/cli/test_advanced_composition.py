"""`dpcalc advanced-composition` on the command line: every option and mode, every error path, the JSON contract."""

from __future__ import annotations

import math

import pytest

TOP_LEVEL_KEYS = {"command", "version", "inputs", "result", "warnings"}
RESULT_KEYS = {"basic", "advanced", "simplified", "optimal", "best", "total_delta"}
INPUT_KEYS = {"eps", "delta", "k", "delta_prime", "target_eps", "max_eps", "total_delta"}
# 100-fold composition of 0.1-DP at delta' = 1e-5 (docs/reference-values.md: 100-fold composition)
REFERENCE_CASE = ("advanced-composition", "--eps", "0.1", "--k", "100")


def test_spec_table(dpcalc):
    run = dpcalc(*REFERENCE_CASE)
    assert run.code == 0
    # reference values (docs/reference-values.md, 100-fold composition): basic 10.0, advanced
    # 5.850235, optimal 4.30679; printed rounded up
    # (upper bounds): advanced 5.85023509... and optimal 4.30679137...
    for text in ("10", "5.850236", "4.306792", "NOT VALID"):
        assert text in run.stdout
    assert run.stderr.startswith("Warning: the simplified form")


def test_spec_json(dpcalc):
    run = dpcalc(*REFERENCE_CASE, "--json")
    assert run.code == 0 and run.stderr == ""
    document = run.json()
    assert set(document) == TOP_LEVEL_KEYS and document["command"] == "advanced-composition"
    assert document["inputs"] == {"eps": 0.1, "delta": 0.0, "k": 100, "delta_prime": 1e-5, "target_eps": None,
                                  "max_eps": None, "total_delta": None}
    result = document["result"]
    assert set(result) == RESULT_KEYS
    assert result["basic"] == {"epsilon": 10.0, "delta": 0.0}
    assert set(result["advanced"]) == {"epsilon", "delta"}
    assert result["advanced"]["epsilon"] == pytest.approx(5.850235, abs=5e-7)
    assert result["advanced"]["delta"] == 1e-5
    assert set(result["simplified"]) == {"epsilon", "delta", "valid"} and result["simplified"]["valid"] is False
    assert set(result["optimal"]) == {"epsilon", "delta", "epsilon_lower", "tolerance", "method"}
    assert result["optimal"]["epsilon"] == pytest.approx(4.30679, abs=5e-6)
    assert result["optimal"]["delta"] == 1e-5 and result["optimal"]["method"] == "exact"
    assert 0 <= result["optimal"]["tolerance"] < 1e-10
    assert result["best"] == "optimal"
    assert result["total_delta"] == 1e-5  # basic's (10, 0) holds there too
    assert len(document["warnings"]) == 1


def test_delta_and_delta_prime(dpcalc):
    result = dpcalc("advanced-composition", "--eps", "0.5", "--delta", "1e-7", "--k", "30", "--delta-prime", "1e-6",
                    "--json").json()["result"]
    assert result["basic"] == {"epsilon": 15.0, "delta": pytest.approx(3e-6)}
    expected = 0.5 * math.sqrt(60 * math.log(1e6)) + 30 * 0.5 * math.expm1(0.5)
    assert result["advanced"]["epsilon"] == pytest.approx(expected, rel=1e-15)
    assert result["advanced"]["delta"] == result["optimal"]["delta"] == pytest.approx(4e-6)


def test_simplified_valid_case(dpcalc):
    document = dpcalc("advanced-composition", "--eps", "0.001", "--k", "100", "--json").json()
    assert document["result"]["simplified"]["valid"] is True
    assert document["warnings"] == []


def test_large_k(dpcalc):
    result = dpcalc("advanced-composition", "--eps", "0.001", "--k", "1e6", "--json").json()["result"]
    assert result["optimal"]["epsilon"] < result["advanced"]["epsilon"] < result["basic"]["epsilon"]
    # KOV Thm 3.3 solved in mpmath (50 digits, docs/reference-values.md): 4.3771710927; rel 1e-9, the optimum's accuracy
    assert result["optimal"]["epsilon"] == pytest.approx(4.3771710927, rel=1e-9)


def test_heterogeneous_lists(dpcalc):
    run = dpcalc("advanced-composition", "--eps", "0.5,0.5,1,2", "--delta", "0,0,1e-6,1e-6", "--json")
    document = run.json()
    assert document["inputs"]["eps"] == [0.5, 0.5, 1.0, 2.0]
    assert document["inputs"]["delta"] == [0.0, 0.0, 1e-6, 1e-6] and document["inputs"]["k"] == 4
    result = document["result"]
    assert result["basic"] == {"epsilon": 4.0, "delta": pytest.approx(2e-6)}
    assert result["optimal"]["method"] == "exact"
    assert result["optimal"]["delta"] == pytest.approx(1.2e-5)
    assert result["optimal"]["epsilon"] <= result["basic"]["epsilon"]
    table = dpcalc("advanced-composition", "--eps", "0.5,0.5,1,2", "--delta", "0,0,1e-6,1e-6")
    assert "4 mechanisms with their own" in table.stdout and "heterogeneous" in table.stdout


def test_list_with_single_delta_and_matching_k(dpcalc):
    listed = dpcalc("advanced-composition", "--eps", "0.1,0.2", "--delta", "1e-7", "--k", "2", "--json").json()
    assert listed["inputs"]["delta"] == [1e-7, 1e-7]
    single_eps = dpcalc("advanced-composition", "--eps", "0.3", "--delta", "0,1e-6,1e-6", "--json").json()
    assert single_eps["inputs"]["eps"] == [0.3, 0.3, 0.3] and single_eps["inputs"]["k"] == 3


@pytest.mark.slow
def test_long_list_uses_the_lattice(dpcalc):
    values = ",".join(f"{0.01 * i:.2f}" for i in range(1, 41))
    document = dpcalc("advanced-composition", "--eps", values, "--json").json()
    optimal = document["result"]["optimal"]
    assert optimal["method"] == "lattice"
    assert 0 < optimal["tolerance"] < 1e-3
    assert optimal["epsilon_lower"] < optimal["epsilon"]
    assert any("lattice" in warning for warning in document["warnings"])
    table = dpcalc("advanced-composition", "--eps", values)
    assert "upper bound; the exact optimum is >=" in table.stdout


def test_max_eps_budget(dpcalc):
    within = dpcalc(*REFERENCE_CASE, "--max-eps", "5", "--json")
    document = within.json()
    assert within.code == 0 and document["budget"] == {
        "max_epsilon": 5.0, "epsilon": document["result"]["optimal"]["epsilon"],
        "basis": "optimal composition (the smallest sound epsilon of the four theorems)", "within_budget": True}
    over = dpcalc(*REFERENCE_CASE, "--max-eps", "4", "--json")
    assert over.code == 1 and over.json()["budget"]["within_budget"] is False
    # 4.3067913725... printed rounded up: the optimum is an upper bound here
    assert "Budget exceeded: epsilon 4.306792 (optimal composition" in over.stderr


def test_target_eps_with_eps_gives_max_k(dpcalc):
    run = dpcalc("advanced-composition", "--eps", "0.1", "--target-eps", "4.3068", "--json")
    document = run.json()
    assert run.code == 0
    assert document["inputs"]["target_eps"] == 4.3068 and document["inputs"]["k"] is None
    result = document["result"]
    assert set(result) == {"target_epsilon", "basic", "advanced", "simplified", "optimal", "best", "total_delta"}
    assert result["basic"] == {"max_k": 43, "epsilon": pytest.approx(4.3), "delta": 0.0}
    assert result["optimal"]["max_k"] == 100  # 100 mechanisms give 4.306791 (docs/reference-values.md)
    assert result["optimal"]["epsilon"] <= 4.3068
    assert result["simplified"]["valid"] is False
    assert result["best"] == "optimal"
    table = dpcalc("advanced-composition", "--eps", "0.1", "--target-eps", "4.3068")
    assert "max k" in table.stdout and "Largest k within total epsilon 4.3068" in table.stdout


def test_target_eps_with_k_gives_max_eps_per_mechanism(dpcalc):
    document = dpcalc("advanced-composition", "--k", "100", "--target-eps", "10", "--json").json()
    result = document["result"]
    assert result["basic"] == {"max_eps_per_mechanism": 0.1, "epsilon": 10.0, "delta": 0.0}
    for name in ("advanced", "optimal"):
        assert result[name]["epsilon"] <= 10.0
        assert result[name]["max_eps_per_mechanism"] > 0.1
    assert result["optimal"]["max_eps_per_mechanism"] > result["advanced"]["max_eps_per_mechanism"]
    table = dpcalc("advanced-composition", "--k", "100", "--target-eps", "10")
    assert "max eps each" in table.stdout


def test_target_eps_zero_k(dpcalc):
    result = dpcalc("advanced-composition", "--eps", "2", "--target-eps", "1", "--json").json()["result"]
    assert result["optimal"] == {"max_k": 0, "epsilon": None, "delta": None}


def test_eps_zero(dpcalc):
    result = dpcalc("advanced-composition", "--eps", "0", "--k", "10", "--json").json()["result"]
    assert all(result[name]["epsilon"] == 0.0 for name in ("basic", "advanced", "simplified", "optimal"))


@pytest.mark.parametrize(
    "args, message",
    [
        (("--k", "10"), "--eps is required (the epsilon of each mechanism, >= 0, or a comma list)"),
        (("--eps", "0.1"), "--k is required with a single --eps (or give --eps as a comma list, one value per mechanism)"),
        (("--eps", "0.1,0.2", "--delta", "0,0,0"),
         "--eps lists 2 mechanisms and --delta lists 3: give one value per mechanism in each, or a single value for all"),
        (("--eps", "0.1,0.2", "--k", "3"), "--k is 3 but the lists give 2 mechanisms: drop --k (k is the list length)"),
        (("--eps", "0.1,,0.2"), "--eps item 2 of 3 is empty, got '0.1,,0.2'"),
        (("--eps", "0.1,-1"), "--eps item 2 of 2 must be in [0, inf), got -1"),
        (("--eps", "0.1,x"), "--eps item 2 of 2 must be a number in [0, inf), got 'x'"),
        (("--eps", "0.1", "--delta", "0,1"), "--delta item 2 of 2 must be in [0, 1), got 1"),
        (("--eps", "0.1", "--k", "100", "--delta", "0.01"),
         "--delta must be below (1 - delta-prime) / k = 0.0099999 so that the total delta k * delta + "
         "delta-prime stays below 1, got 0.01"),
        (("--eps", "0.1,0.1", "--delta", "0.5,0.5"),
         "--delta must sum to below 1 - delta-prime = 0.99999 so that the total delta stays below 1, got a sum of 1"),
        (("--eps", "-0.1", "--k", "10"), "--eps must be in [0, inf), got -0.1"),
        (("--eps", "inf", "--k", "10"), "--eps must be in [0, inf), got inf"),
        (("--eps", "abc", "--k", "10"), "--eps must be a number in [0, inf), got 'abc'"),
        (("--eps", "0.1", "--k", "0"), "--k must be an integer in [1, 1e+10], got 0"),
        (("--eps", "0.1", "--k", "2.5"), "--k must be an integer in [1, 1e+10], got 2.5"),
        (("--eps", "0.1", "--k", "1e11"), "--k must be an integer in [1, 1e+10], got 1e11"),
        (("--eps", "0.1", "--k", "10", "--delta", "1"), "--delta must be in [0, 1), got 1"),
        (("--eps", "0.1", "--k", "10", "--delta", "-1e-9"), "--delta must be in [0, 1), got -1e-9"),
        (("--eps", "0.1", "--k", "10", "--delta-prime", "0"), "--delta-prime must be in (0, 1), got 0"),
        (("--eps", "0.1", "--k", "10", "--delta-prime", "1"), "--delta-prime must be in (0, 1), got 1"),
        (("--eps", "0.1", "--k", "10", "--max-eps", "-1"), "--max-eps must be in [0, inf), got -1"),
        (("--target-eps", "1"),
         "--target-eps needs exactly one of --eps (to get the largest k) and --k (to get the largest epsilon per mechanism)"),
        (("--eps", "0.1", "--k", "10", "--target-eps", "1"),
         "--target-eps needs exactly one of --eps (to get the largest k) and --k (to get the largest epsilon per mechanism)"),
        (("--eps", "0.1,0.2", "--target-eps", "1"), "--target-eps takes a single --eps and --delta, not comma lists"),
        (("--eps", "0", "--target-eps", "1"),
         "--eps must be in (0, inf) with --target-eps (with --eps 0 every k stays within any target), got 0"),
        (("--eps", "0.1", "--target-eps", "-1"), "--target-eps must be in [0, inf), got -1"),
        (("--eps", "0.1", "--target-eps", "1", "--max-eps", "1"),
         "--max-eps and --target-eps cannot be given together; --target-eps already is the budget"),
        (("--k", "100", "--target-eps", "1", "--delta", "0.01", "--total-delta", "0.5"),
         "--total-delta must be at least 1 - (1 - delta)^k = 0.633968, the delta of the mechanisms themselves "
         "(no composition theorem reaches a smaller total), got 0.5"),
        (("--eps", "0.1", "--k", "100", "--delta", "1e-6", "--total-delta", "9.99e-5"),
         "--total-delta must be at least 1 - (1 - delta)^k = 9.99951e-05, the delta of the mechanisms themselves "
         "(no composition theorem reaches a smaller total), got 9.99e-5"),
        (("--eps", "0.1,0.2", "--delta", "1e-6", "--total-delta", "1.5e-6"),
         "--total-delta must be at least 1 - prod(1 - delta_i) = 2e-06, the delta of the mechanisms themselves "
         "(no composition theorem reaches a smaller total), got 1.5e-6"),
        (("--eps", "0.1", "--delta", "1e-5", "--target-eps", "1", "--total-delta", "1e-6"),
         "--total-delta must be at least delta = 1e-05, the delta of the mechanisms themselves "
         "(no composition theorem reaches a smaller total), got 1e-6"),
        (("--eps", "0.1", "--k", "10", "--total-delta", "0"), "--total-delta must be in (0, 1), got 0"),
        (("--eps", "0.1", "--k", "10", "--total-delta", "1"), "--total-delta must be in (0, 1), got 1"),
        (("--eps", "0.1", "--k", "10", "--total-delta", "x"), "--total-delta must be a number in (0, 1), got 'x'"),
        (("--eps", "0.1", "--k", "10", "--total-delta", "1e-4", "--delta-prime", "1e-5"),
         "--total-delta and --delta-prime cannot be given together; with --total-delta the advanced theorems' "
         "delta' is total-delta - k * delta"),
    ],
)
def test_errors(dpcalc, args, message):
    run = dpcalc("advanced-composition", *args)
    assert (run.code, run.stderr, run.stdout) == (2, f"Error: {message}\n", "")


def test_help_has_examples(dpcalc):
    run = dpcalc("advanced-composition", "--help")
    assert run.code == 0
    for option in ("--eps", "--delta", "--k", "--delta-prime", "--total-delta", "--target-eps", "--max-eps", "--json"):
        assert option in run.stdout
    assert "dpcalc advanced-composition --eps 0.1 --k 100" in run.stdout


@pytest.mark.parametrize("args", [
    ("--eps", "700", "--k", "3"),
    ("--eps", "1e-300", "--k", "1e10"),
    ("--eps", "50", "--k", "1000", "--delta-prime", "1e-300"),
])
def test_json_is_strict_at_extremes(dpcalc, args):
    run = dpcalc("advanced-composition", *args, "--json")
    assert run.code == 0
    result = run.json()["result"]
    for name in ("basic", "advanced", "simplified", "optimal"):
        value = result[name]["epsilon"]
        assert value == "inf" or math.isfinite(value)


@pytest.mark.parametrize("extra", [["--eps", "0.5"], ["--eps", "0.999999", "--delta", "5e-324", "--total-delta", "1e-5"],
                                   ["--k", "10"]])
def test_inverse_at_a_huge_target_is_an_answer_not_an_internal_error(dpcalc, extra):
    """A target of 1e300 overflowed (target / 2b)^2 and (1 - delta') / delta for a subnormal delta."""
    run = dpcalc("advanced-composition", "--target-eps", "1e300", *extra, "--json")
    assert run.code == 0 and "internal error" not in run.stderr
    assert run.json()["result"]["target_epsilon"] == 1e300


# ---------------------------------------------------------------------------------------------
# --total-delta: every theorem at one total delta

ISSUE = ("advanced-composition", "--eps", "0.1", "--delta", "1e-6", "--target-eps", "5")
THEOREMS = ("basic", "advanced", "simplified", "optimal")


@pytest.mark.parametrize("args, reason", [
    (ISSUE, "each theorem's largest k would bring its own total delta k * delta (+ delta'), so no default "
            "total delta compares them"),
    (("advanced-composition", "--k", "100", "--delta", "1e-6", "--target-eps", "5"),
     "basic composition's total delta k * delta and the others' k * delta + delta' differ, so the theorems "
     "need one total delta to be compared at"),
])
def test_target_eps_with_a_positive_delta_needs_the_total_delta(dpcalc, args, reason):
    """Issue: without a total delta, "best: optimal, 128" was at total delta 1.38e-4 and basic's 50 at 5e-5."""
    run = dpcalc(*args)
    assert (run.code, run.stdout) == (2, "")
    assert run.stderr == (f"Error: --total-delta is required with --target-eps when --delta > 0: {reason}; "
                          "add --total-delta D, the one total delta in (0, 1) to state every theorem at\n")
    assert dpcalc(*args, "--delta-prime", "1e-5", "--json").code == 2


def test_issue_example_at_one_total_delta(dpcalc, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    document = dpcalc(*ISSUE, "--total-delta", "1e-4", "--json").json()
    assert document["inputs"]["total_delta"] == 1e-4 and document["inputs"]["delta_prime"] is None
    result = document["result"]
    assert result["total_delta"] == 1e-4
    # the largest k of DR Thm 3.16, Thm 3.20, Cor. 3.21 and KOV Thm 3.3 at total delta 1e-4, in mpmath
    # (docs/reference-values.md)
    assert [result[name]["max_k"] for name in THEOREMS] == [50, 79, 32, 99]
    assert all(result[name]["delta"] == 1e-4 for name in THEOREMS)
    assert all(result[name]["epsilon"] <= 5 for name in THEOREMS)
    assert result["simplified"]["valid"] is False
    assert result["best"] == "optimal"
    table = dpcalc(*ISSUE, "--total-delta", "1e-4")
    assert "total delta = 0.0001" in table.stdout
    best = next(line for line in table.stdout.splitlines() if line.startswith("│ best"))
    assert "99" in best and "0.0001" in best and "optimal: largest k at this delta" in best


def test_with_delta_zero_total_delta_replaces_delta_prime(dpcalc):
    slack = dpcalc("advanced-composition", "--eps", "0.1", "--target-eps", "5", "--json").json()
    total = dpcalc("advanced-composition", "--eps", "0.1", "--target-eps", "5", "--total-delta", "1e-5", "--json").json()
    assert slack["inputs"]["total_delta"] is None and total["inputs"]["delta_prime"] is None
    assert slack["result"]["total_delta"] == total["result"]["total_delta"] == 1e-5
    for name in THEOREMS:
        assert slack["result"][name]["max_k"] == total["result"][name]["max_k"]
        assert slack["result"][name]["epsilon"] == total["result"][name]["epsilon"]
    # the largest k of each theorem at delta' = 1e-5, in mpmath (docs/reference-values.md)
    assert [total["result"][name]["max_k"] for name in THEOREMS] == [50, 76, 27, 128]


def test_forward_mode_at_a_total_delta(dpcalc, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    run = dpcalc("advanced-composition", "--eps", "0.1", "--delta", "1e-6", "--k", "50", "--total-delta", "1e-4", "--json")
    document = run.json()
    assert run.code == 0 and document["inputs"]["total_delta"] == 1e-4
    result = document["result"]
    assert set(result) == RESULT_KEYS and result["total_delta"] == 1e-4
    assert all(result[name]["delta"] == 1e-4 for name in THEOREMS)
    assert result["basic"]["epsilon"] == pytest.approx(5.0)
    # advanced with delta' = total delta - k delta = 5e-5
    expected = 0.1 * math.sqrt(100 * math.log(1 / 5e-5)) + 50 * 0.1 * math.expm1(0.1)
    assert result["advanced"]["epsilon"] == pytest.approx(expected, rel=1e-14)
    # KOV Thm 3.3 solved in mpmath (50 digits, docs/reference-values.md): 2.5840935462; rel 1e-9, the optimum's accuracy
    assert result["optimal"]["epsilon"] == pytest.approx(2.5840935462, rel=1e-9)
    assert result["best"] == "optimal"
    table = dpcalc("advanced-composition", "--eps", "0.1", "--delta", "1e-6", "--k", "50", "--total-delta", "1e-4")
    assert "total delta = 0.0001" in table.stdout and "delta' =" not in table.stdout


def test_forward_mode_theorems_that_cannot_reach_the_total_delta(dpcalc, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    args = ("advanced-composition", "--eps", "0.1", "--delta", "1e-6", "--k", "100", "--total-delta", "9.9999e-5")
    run = dpcalc(*args, "--json")
    assert run.code == 0
    result = run.json()["result"]
    assert [result[name]["epsilon"] for name in ("basic", "advanced", "simplified")] == ["inf"] * 3
    assert result["simplified"]["valid"] is False
    assert math.isfinite(result["optimal"]["epsilon"]) and result["best"] == "optimal"
    assert all(result[name]["delta"] == 9.9999e-5 for name in THEOREMS)
    table = dpcalc(*args)
    assert table.stdout.count("NOT APPLICABLE at this delta") == 3
    assert "basic composition does not reach the total delta 9.9999e-05" in table.stderr
    # k delta = D exactly (decimal): basic reaches it, the advanced theorems have no delta' left.
    edge = dpcalc("advanced-composition", "--eps", "0.1", "--delta", "1e-6", "--k", "100", "--total-delta", "1e-4",
                  "--json").json()["result"]
    assert edge["basic"]["epsilon"] == pytest.approx(10.0) and edge["advanced"]["epsilon"] == "inf"


def test_max_k_theorem_that_cannot_reach_the_total_delta(dpcalc):
    result = dpcalc("advanced-composition", "--eps", "0.1", "--delta", "1e-5", "--target-eps", "5", "--total-delta",
                    "1e-5", "--json").json()["result"]
    assert result["advanced"] == {"max_k": 0, "epsilon": "inf", "delta": 1e-5}
    assert result["basic"]["max_k"] == result["optimal"]["max_k"] == 1


def test_max_eps_per_mechanism_at_a_total_delta(dpcalc):
    run = dpcalc("advanced-composition", "--k", "100", "--delta", "1e-6", "--target-eps", "5", "--total-delta",
                 "9.9999e-5", "--json")
    result = run.json()["result"]
    assert run.code == 0 and result["total_delta"] == 9.9999e-5
    assert result["basic"] == {"max_eps_per_mechanism": None, "epsilon": "inf", "delta": 9.9999e-5}
    assert result["optimal"]["max_eps_per_mechanism"] > 0 and result["optimal"]["epsilon"] <= 5
    assert result["best"] == "optimal"


def test_heterogeneous_at_a_total_delta(dpcalc):
    args = ("advanced-composition", "--eps", "0.5,0.5,1,2", "--delta", "0,0,1e-6,1e-6")
    total = dpcalc(*args, "--total-delta", "1.2e-5", "--json").json()["result"]
    slack = dpcalc(*args, "--json").json()["result"]
    assert slack["total_delta"] == total["total_delta"] == pytest.approx(1.2e-5)
    assert total["basic"] == {"epsilon": 4.0, "delta": 1.2e-5}
    assert total["optimal"]["epsilon"] == pytest.approx(slack["optimal"]["epsilon"], rel=1e-12)


def test_best_row_names_the_total_delta_of_the_comparison(dpcalc, monkeypatch):
    """Without --total-delta basic is at k delta, the others at k delta + delta': best compares at the
    latter, where basic's guarantee holds too (a guarantee at a smaller delta holds at a larger one)."""
    monkeypatch.setenv("COLUMNS", "200")
    args = ("advanced-composition", "--eps", "0.001", "--delta", "1e-7", "--k", "100")
    result = dpcalc(*args, "--json").json()["result"]
    assert result["basic"]["delta"] == pytest.approx(1e-5) and result["total_delta"] == pytest.approx(2e-5)
    assert result["optimal"]["delta"] == result["total_delta"] and result["best"] == "optimal"
    best = next(line for line in dpcalc(*args).stdout.splitlines() if line.startswith("│ best"))
    assert "2e-05" in best and "optimal: smallest epsilon at this delta" in best
