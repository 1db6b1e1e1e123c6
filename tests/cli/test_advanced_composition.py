"""`dpcalc advanced-composition` on the command line: every option and mode, every error path, the JSON contract."""

from __future__ import annotations

import math

import pytest

TOP_LEVEL_KEYS = {"command", "version", "inputs", "result", "warnings"}
RESULT_KEYS = {"basic", "advanced", "simplified", "optimal", "best"}
INPUT_KEYS = {"eps", "delta", "k", "delta_prime", "target_eps", "max_eps"}
SPEC = ("advanced-composition", "--eps", "0.1", "--k", "100")


def test_spec_table(dpcalc):
    run = dpcalc(*SPEC)
    assert run.code == 0
    # SPEC reference table: basic 10.0, advanced 5.850235, optimal 4.30679.
    for text in ("10", "5.850235", "4.306791", "NOT VALID"):
        assert text in run.stdout
    assert run.stderr.startswith("Warning: the simplified form")


def test_spec_json(dpcalc):
    run = dpcalc(*SPEC, "--json")
    assert run.code == 0 and run.stderr == ""
    document = run.json()
    assert set(document) == TOP_LEVEL_KEYS and document["command"] == "advanced-composition"
    assert document["inputs"] == {"eps": 0.1, "delta": 0.0, "k": 100, "delta_prime": 1e-5, "target_eps": None,
                                  "max_eps": None}
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
    assert result["optimal"]["epsilon"] == pytest.approx(4.377171, abs=1e-6)  # mpmath-checked in tests/core


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
    within = dpcalc(*SPEC, "--max-eps", "5", "--json")
    assert within.code == 0 and within.json()["budget"] == {"max_epsilon": 5.0, "within_budget": True}
    over = dpcalc(*SPEC, "--max-eps", "4", "--json")
    assert over.code == 1 and over.json()["budget"]["within_budget"] is False
    assert "Budget exceeded: epsilon 4.306791 > --max-eps 4" in over.stderr


def test_target_eps_with_eps_gives_max_k(dpcalc):
    run = dpcalc("advanced-composition", "--eps", "0.1", "--target-eps", "4.3068", "--json")
    document = run.json()
    assert run.code == 0
    assert document["inputs"]["target_eps"] == 4.3068 and document["inputs"]["k"] is None
    result = document["result"]
    assert set(result) == {"target_epsilon", "basic", "advanced", "simplified", "optimal", "best"}
    assert result["basic"] == {"max_k": 43, "epsilon": pytest.approx(4.3), "delta": 0.0}
    assert result["optimal"]["max_k"] == 100  # SPEC: 100 mechanisms give 4.306791
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
        (("--k", "100", "--target-eps", "1", "--delta", "0.01"),
         "--delta must be below (1 - delta-prime) / k = 0.0099999 so that the total delta k * delta + "
         "delta-prime stays below 1, got 0.01"),
    ],
)
def test_errors(dpcalc, args, message):
    run = dpcalc("advanced-composition", *args)
    assert (run.code, run.stderr, run.stdout) == (2, f"Error: {message}\n", "")


def test_help_has_examples(dpcalc):
    run = dpcalc("advanced-composition", "--help")
    assert run.code == 0
    for option in ("--eps", "--delta", "--k", "--delta-prime", "--target-eps", "--max-eps", "--json"):
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


@pytest.mark.parametrize("extra", [["--eps", "0.5"], ["--eps", "0.999999", "--delta", "5e-324"], ["--k", "10"]])
def test_inverse_at_a_huge_target_is_an_answer_not_an_internal_error(dpcalc, extra):
    """A target of 1e300 overflowed (target / 2b)^2 and (1 - delta') / delta for a subnormal delta."""
    run = dpcalc("advanced-composition", "--target-eps", "1e300", *extra, "--json")
    assert run.code == 0 and "internal error" not in run.stderr
    assert run.json()["result"]["target_epsilon"] == 1e300
