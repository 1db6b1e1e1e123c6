"""`dpcalc check`: budget files, composition, exit codes and every malformed-file message."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from dpcalc.core import gdp
from dpcalc.core.budget import account_budget, load_budget

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "privacy-budget.toml"

FAST = """\
[budget]
epsilon = 3.0
delta = 1e-5

[[release]]
name = "means"
mechanism = "gaussian"
sigma = 4.0
count = 3

[[release]]
name = "report"
mechanism = "gdp"
mu = 0.5
"""


def write(tmp_path, text, name="budget.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.slow
def test_example_budget_file_is_within_budget(dpcalc):
    before = EXAMPLE.read_bytes()
    run = dpcalc("check", EXAMPLE, "--json")
    assert run.code == 0, run.stderr
    result = run.json()["result"]
    assert result["within_budget"] is True
    assert [r["name"] for r in result["releases"]] == ["model training", "monthly counts", "survey means"]
    # The MNIST run alone: tight 2.3817 (docs/reference-values.md: MNIST DP-SGD, p = 256/60000, sigma 1.1, 60 epochs); its
    # certified upper bound is slightly above, and the total is above each release.
    assert result["releases"][0]["epsilon"] == pytest.approx(2.3817, abs=2e-3)
    assert result["total"]["epsilon"] >= max(r["epsilon"] for r in result["releases"])
    assert result["total"]["delta"] == 1e-5
    assert result["headroom"] == pytest.approx(4.0 - result["total"]["epsilon"])
    assert EXAMPLE.read_bytes() == before  # the budget file is only read


def test_gaussian_releases_compose_exactly_as_gdp(dpcalc, tmp_path):
    run = dpcalc("check", write(tmp_path, FAST), "--json")
    assert run.code == 0
    # 3 Gaussian releases at sigma 4 and 0.5-GDP: mu^2 = 3/16 + 1/4 (Dong, Roth, Su Cor. 3.3).
    expected = gdp.epsilon_for_delta(1e-5, math.sqrt(3 / 16 + 0.25))
    # the certified upper bound of the exact value: above it by its floating-point error (~1e-12)
    total = run.json()["result"]["total"]["epsilon"]
    assert total == pytest.approx(expected, rel=1e-11) and total >= expected
    assert run.json()["warnings"] == []


def test_over_budget_exits_1(dpcalc, tmp_path):
    run = dpcalc("check", write(tmp_path, FAST.replace("epsilon = 3.0", "epsilon = 1.0")))
    assert run.code == 1
    assert "OVER BUDGET" in run.stdout
    assert run.stderr.startswith("Over budget: total epsilon ")


def test_rdp_accountant_matches_the_rdp_core(tmp_path):
    from dpcalc.core.phases import Phase
    from dpcalc.core.rdp import rdp_accountant

    text = FAST.replace("delta = 1e-5", 'delta = 1e-5\naccountant = "rdp"')
    result = account_budget(load_budget(text, "b.toml"))
    expected = rdp_accountant([Phase("gaussian", 1.0, 4.0, None, 3), Phase("gaussian", 1.0, 2.0, None, 1)], delta=1e-5)
    assert result.total_epsilon == pytest.approx(expected.epsilon, rel=1e-12)


def test_zcdp_and_dp_releases(tmp_path):
    from dpcalc.core.composition import optimal_epsilon
    from dpcalc.core.zcdp import zcdp_epsilon

    zcdp_only = account_budget(load_budget(
        '[budget]\nepsilon = 9\ndelta = 1e-6\n[[release]]\nname = "a"\nmechanism = "zcdp"\nrho = 0.1\ncount = 2\n', "b"))
    assert zcdp_only.total_epsilon == pytest.approx(zcdp_epsilon(0.2, 1e-6)[0], rel=1e-12)
    dp_only = account_budget(load_budget(
        '[budget]\nepsilon = 9\ndelta = 1e-5\n[[release]]\nname = "a"\nmechanism = "dp"\nepsilon = 0.1\ncount = 100\n', "b"))
    # docs/reference-values.md: 100-fold composition of 0.1-DP at delta' = 1e-5: optimal 4.30679 (Kairouz, Oh, Viswanath).
    assert dp_only.total_epsilon == pytest.approx(4.30679, abs=1e-5)
    assert dp_only.total_epsilon == optimal_epsilon(0.1, 100, 0.0, 1e-5)


def test_mixed_kinds_split_delta_with_a_warning(dpcalc, tmp_path):
    text = FAST + '\n[[release]]\nname = "legacy"\nmechanism = "dp"\nepsilon = 0.2\ndelta = 1e-7\ncount = 2\n'
    run = dpcalc("check", write(tmp_path, text), "--json")
    document = run.json()
    assert "basic composition" in document["warnings"][0]
    split = document["result"]["split"]
    assert set(split) == {"pld", "dp"} and sum(split.values()) == pytest.approx(1.0)
    total = document["result"]["total"]["epsilon"]
    # At least the mechanisms alone plus the dp releases alone (basic composition is not free).
    assert total > gdp.epsilon_for_delta(1e-5, math.sqrt(3 / 16 + 0.25)) + 0.4 - 1e-9


def test_own_deltas_exceeding_the_budget_give_inf(dpcalc, tmp_path):
    text = '[budget]\nepsilon = 9\ndelta = 1e-6\n[[release]]\nname = "a"\nmechanism = "dp"\nepsilon = 0.1\ndelta = 1e-6\ncount = 2\n'
    run = dpcalc("check", write(tmp_path, text), "--json")
    assert run.code == 1
    assert run.json()["result"]["total"]["epsilon"] == "inf"


@pytest.mark.parametrize(
    "text, message",
    [
        ("[budget\nepsilon = 1", "TOML syntax error: "),
        ('[[release]]\nname = "a"\nmechanism = "gdp"\nmu = 1\n', "missing [budget] table with epsilon and delta"),
        ("[budget]\nepsilon = 1\n[[release]]\nname = 'a'\nmechanism = 'gdp'\nmu = 1\n",
         ":1: [budget]: missing 'delta' (in (0, 1))"),
        ("[budget]\nepsilon = 1\ndelta = 2\n[[release]]\nname = 'a'\nmechanism = 'gdp'\nmu = 1\n",
         ":1: [budget]: delta must be in (0, 1), got 2"),
        ("[budget]\nepsilon = 1\ndelta = 1e-5\naccountant = 'moments'\n[[release]]\nname = 'a'\nmechanism = 'gdp'\nmu = 1\n",
         ":1: [budget]: accountant must be one of pld, rdp, got 'moments'"),
        ("[budget]\nepsilon = 1\ndelta = 1e-5\n\n[[release]]\nname = 'a'\nmechanism = 'gausian'\nsigma = 1\n",
         ":5: release 'a': unknown mechanism 'gausian' (did you mean 'gaussian'?); expected one of "),
        ("[budget]\nepsilon = 1\ndelta = 1e-5\n[[release]]\nname = 'train'\nmechanism = 'subsampled-gaussian'\n"
         "p = 0.01\nsigam = 1\nT = 10\n",
         ":4: release 'train': unknown key 'sigam' for mechanism 'subsampled-gaussian' (did you mean 'sigma'?)"),
        ("[budget]\nepsilon = 1\ndelta = 1e-5\n[[release]]\nname = 'train'\nmechanism = 'subsampled-gaussian'\n"
         "p = 0.01\nsigma = 1\n", ":4: release 'train': give exactly one of 'T' and 'epochs'"),
        ("[budget]\nepsilon = 1\ndelta = 1e-5\n[[release]]\nname = 'train'\nmechanism = 'subsampled-gaussian'\n"
         "p = 1.5\nsigma = 1\nT = 10\n", ":4: release 'train': p must be in [0, 1], got 1.5"),
        ("[budget]\nepsilon = 1\ndelta = 1e-5\n[[release]]\nname = 'q'\nmechanism = 'laplace'\nscale = 'big'\n",
         ":4: release 'q': scale must be a number in (0, inf), got 'big'"),
        ("[budget]\nepsilon = 1\ndelta = 1e-5\n[[release]]\nmechanism = 'gdp'\nmu = 1\n",
         ":4: release 1: missing 'name' (a non-empty string)"),
        ("[budget]\nepsilon = 1\ndelta = 1e-5\n[[release]]\nname = 'a'\nmu = 1\n",
         ":4: release 'a': missing 'mechanism' (one of "),
        ("[budget]\nepsilon = 1\ndelta = 1e-5\n[[release]]\nname = 'a'\nmechanism = 'gdp'\nmu = 1\n"
         "[[release]]\nname = 'a'\nmechanism = 'gdp'\nmu = 1\n", ":8: release 'a': the name is used twice"),
        ("[budget]\nepsilon = 1\ndelta = 1e-5\n[[release]]\nname = 'a'\nmechanism = 'gdp'\nmu = 1\ncount = 0\n",
         ":4: release 'a': count must be an integer in [1, inf), got 0"),
        ("[budgets]\nepsilon = 1\n", ":1: unknown top-level key 'budgets' (did you mean 'budget'?)"),
        ("[budget]\nepsilon = 1\ndelta = 1e-5\n[[release]]\nname = 'a'\nmechanism = 'gaussian'\nsigma = 1\n"
         "count = 1" + "0" * 320 + "\n",
         ":4: release 'a': count must be an integer in [1, inf) and below 1e+300, got an integer of 321 digits"),
        ("[budget]\nepsilon = 1\ndelta = 1e-5\n[[release]]\nname = 't'\nmechanism = 'subsampled-gaussian'\n"
         "n = 100\nbatch_size = 1\nsigma = 1\nepochs = 1e299\n",
         ":4: release 't': epochs = 1e+299 gives T = ceil(epochs / p) above 1e+300 steps; lower epochs or raise p"),
    ],
)
def test_malformed_files_name_the_file_line_and_problem(dpcalc, tmp_path, text, message):
    path = write(tmp_path, text)
    run = dpcalc("check", path)
    assert run.code == 2
    assert run.stderr.startswith(f"Error: {path}") and message in run.stderr
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
    assert path.read_text() == text


EMPTY = "[budget]\nepsilon = 2.5\ndelta = 1e-6\n"


@pytest.mark.parametrize("text", [EMPTY, "release = []\n" + EMPTY], ids=["no-release-tables", "empty-array"])
def test_a_file_without_releases_is_within_budget_json(dpcalc, tmp_path, text):
    """A project that has released nothing: total 0, the whole budget is headroom, exit 0."""
    run = dpcalc("check", write(tmp_path, text), "--json")
    assert run.code == 0, run.stderr
    assert run.stderr == ""
    document = run.json()
    result = document["result"]
    assert result["releases"] == []
    assert result["total"] == {"epsilon": 0.0, "delta": 0.0, "overflow_probability": 0.0}
    assert result["headroom"] == 2.5 and result["within_budget"] is True
    assert any("no releases" in warning for warning in document["warnings"])


def test_a_file_without_releases_is_within_budget_table(dpcalc, tmp_path):
    run = dpcalc("check", write(tmp_path, EMPTY))
    assert run.code == 0
    assert run.stderr.startswith("Warning: no releases are listed") and run.stderr.count("\n") == 1
    rows = {line.split("│")[1].strip(): [cell.strip() for cell in line.split("│")[2:-1]]
            for line in run.stdout.splitlines() if line.startswith("│") and line.split("│")[1].strip()}
    assert rows["(none)"][2] == "no releases listed"
    assert rows["total"][1] == "0"
    assert rows["headroom"][1:] == ["2.5", "within budget"]


def test_a_file_without_releases_with_the_rdp_accountant(tmp_path):
    result = account_budget(load_budget(EMPTY + 'accountant = "rdp"\n', "b.toml"))
    assert (result.total_epsilon, result.total_delta, result.within_budget, result.headroom) == (0.0, 0.0, True, 2.5)


def test_missing_file(dpcalc, tmp_path):
    run = dpcalc("check", tmp_path / "nope.toml")
    assert run.code == 2
    assert run.stderr == f"Error: BUDGET: no such file: {tmp_path / 'nope.toml'}\n"


def test_missing_argument(dpcalc):
    run = dpcalc("check")
    assert run.code == 2 and "BUDGET" in run.stderr


def test_the_accountants_warnings_reach_the_output(dpcalc, tmp_path):
    """A release beyond the PLD grid's range (1e14 steps) is bounded by closed forms; the
    accountant says so, and check passes that on instead of dropping it."""
    text = ("[budget]\nepsilon = 4\ndelta = 1e-5\n[[release]]\nname = 'long'\nmechanism = 'subsampled-gaussian'\n"
            "p = 1e-6\nsigma = 5\nT = 100000000000000\n")
    run = dpcalc("check", write(tmp_path, text), "--json")
    warnings = run.json()["warnings"]
    assert any(w.startswith("total: ") and "closed forms" in w for w in warnings), warnings
    # and the release's own row names the method that bounded it
    assert run.json()["result"]["releases"][0]["method"] == "closed forms (certified)"


def test_a_delta_of_at_least_one_over_n_is_warned_about(dpcalc, tmp_path):
    budget = tmp_path / "budget.toml"
    budget.write_text(
        "[budget]\nepsilon = 10.0\ndelta = 1e-3\n\n"
        "[[release]]\nname = \"small data\"\nmechanism = \"subsampled-gaussian\"\n"
        "n = 1000\nbatch_size = 10\nepochs = 1\nsigma = 1.0\n"
    )
    run = dpcalc("check", str(budget), "--json")
    assert run.code == 0
    assert any(w.startswith("release 'small data': delta = 0.001 is at least 1/n = 1/1000")
               for w in run.json()["warnings"])
