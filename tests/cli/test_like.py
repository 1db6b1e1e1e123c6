"""--like FRAMEWORK on rdp, pld, gdp, calibrate, and `like` in budget files: the framework's figure
beside dpcalc's certified one (result.like), refused where the frameworks have no figure, and
never the figure a gate compares. The figures themselves are tested in tests/core/test_presets.py."""

from __future__ import annotations

import pytest

# The run of the issue: TF Privacy's compute_noise_from_budget.py docstring (epsilon 2.92 over
# 60 epochs of 60000 examples in batches of 256 asks noise 1.12), which dpcalc accounts at 2.5186.
ISSUE_RUN = ("--n", "60000", "--batch-size", "256", "--T", "14062", "--sigma", "1.12")
LIKE_KEYS = {"framework", "library", "accountant", "epsilon", "order", "basis"}
SHORT_RUN = ("--p", "0.01", "--sigma", "1", "--T", "100")


def test_rdp_reproduces_the_tutorials_figure(dpcalc):
    run = dpcalc("rdp", *ISSUE_RUN, "--like", "tf-privacy-0.5", "--json", "--no-tight")
    assert (run.code, run.stderr) == (0, "")
    result = run.json()["result"]
    assert result["epsilon"] == pytest.approx(2.5186, abs=5e-5)  # dpcalc's certified RDP figure
    like = result["like"]
    assert set(like) == LIKE_KEYS
    # TF Privacy <= 0.5.1 printed 2.92: the classic conversion (Mironov 2017, Prop. 3) on its orders
    assert like["framework"] == "tf-privacy-0.5" and like["accountant"] == "RDP"
    assert like["epsilon"] == pytest.approx(2.92, abs=5e-3) and like["order"] == 9.0
    assert like["basis"].endswith("estimate")
    table = dpcalc("rdp", *ISSUE_RUN, "--like", "tf-privacy-0.5", "--no-tight")
    assert "tf-privacy-0.5 estimate" in table.stdout and "2.922249" in table.stdout


def test_like_is_null_when_not_asked(dpcalc):
    for command in (("rdp", *SHORT_RUN, "--no-tight"), ("pld", *SHORT_RUN), ("gdp", *SHORT_RUN, "--no-tight"),
                    ("calibrate", "--target-eps", "2", "--p", "0.01", "--T", "100", "--accountant", "rdp")):
        assert dpcalc(*command, "--json").json()["result"]["like"] is None


@pytest.mark.parametrize(("command", "framework", "accountant"), [
    (("rdp", "--no-tight"), "dp-accounting", "RDP"),
    (("rdp", "--no-tight"), "opacus", "RDP"),
    (("pld",), "opacus", "PRV"),
    (("pld",), "prv", "PRV"),
    (("pld",), "dp-accounting", "PLD"),
    (("gdp", "--no-tight"), "tf-privacy", "GDP"),
    (("gdp", "--no-tight"), "prv", "PRV"),
])
def test_each_command_shows_the_frameworks_figure(dpcalc, command, framework, accountant):
    run = dpcalc(command[0], *SHORT_RUN, *command[1:], "--like", framework, "--json")
    assert (run.code, run.stderr) == (0, "")
    like = run.json()["result"]["like"]
    assert like["framework"] == framework and like["accountant"] == accountant
    assert 0.0 < like["epsilon"] < 10.0
    table = dpcalc(command[0], *SHORT_RUN, *command[1:], "--like", framework)
    assert f"{framework} estimate" in table.stdout


def test_gdp_with_mu_converts_it(dpcalc):
    # every framework converts a mu-GDP guarantee the same way: 1-GDP at delta 1e-5 is 4.377178 (mpmath)
    like = dpcalc("gdp", "--mu", "1", "--like", "opacus", "--json").json()["result"]["like"]
    assert like["epsilon"] == pytest.approx(4.3771780956812245, rel=1e-9)


@pytest.mark.parametrize("accountant", ["rdp", pytest.param("pld", marks=pytest.mark.slow), "gdp"])
def test_calibrate_shows_the_frameworks_epsilon_at_the_answer(dpcalc, accountant):
    run = dpcalc("calibrate", "--target-eps", "3", "--n", "60000", "--batch-size", "256", "--epochs", "60",
                 "--accountant", accountant, "--like", "tf-privacy", "--json")
    assert run.code == 0
    result = run.json()["result"]
    like = result["like"]
    assert like["accountant"] == {"rdp": "RDP", "pld": "PLD", "gdp": "GDP"}[accountant]
    # at the calibrated sigma the framework's figure is near the target (its own accountant, its own grid)
    assert like["epsilon"] == pytest.approx(3.0, abs=0.05)


@pytest.mark.parametrize(("args", "message"), [
    (("rdp", *SHORT_RUN, "--like", "jax"),
     "Error: Invalid value for '--like': 'jax' is not one of 'opacus', 'tf-privacy', 'tf-privacy-0.5', "
     "'dp-accounting', 'prv'."),
    (("pld", "--n", "1000", "--batch-size", "10", "--T", "100", "--sigma", "1", "--sampling", "uniform",
      "--like", "prv"),
     "Error: --like prv: the frameworks' default accountants take Poisson sampling under add-remove neighbours "
     "(this run has uniform sampling, add-remove neighbours)"),
    (("rdp", "--mechanism", "laplace", "--scale", "2", "--T", "3", "--like", "opacus"),
     "Error: --like opacus: the frameworks' default accountants take Gaussian steps only (this run has a Laplace "
     "release)"),
    (("rdp", *SHORT_RUN, "--eps", "1", "--like", "opacus"),
     "Error: --like reports the framework's epsilon at a delta: give --delta (or its default), not --eps"),
    (("pld", "--p", "0.01", "--sigma", "1,2", "--T", "100", "--like", "opacus"),
     "Error: --like takes one run, not a sweep: give one value per option"),
    (("calibrate", "--target-advantage", "0.1", "--p", "0.01", "--T", "100", "--like", "opacus"),
     "Error: --like shows a framework's epsilon: calibrate with --target-eps to compare it"),
    (("calibrate", "--target-eps", "1", "--mechanism", "laplace", "--T", "1", "--like", "opacus"),
     "Error: --like opacus: the frameworks' default accountants take Gaussian runs of Poisson-sampled examples "
     "under add-remove neighbours"),
])
def test_refusals_are_one_line(dpcalc, args, message):
    run = dpcalc(*args)
    assert run.code == 2
    assert run.stderr.strip() == message


def test_a_gate_never_uses_the_frameworks_figure(dpcalc):
    # above: TF Privacy 0.5's 2.92 exceeds --max-eps 2.7, dpcalc's certified 2.52 does not: within budget
    run = dpcalc("rdp", *ISSUE_RUN, "--like", "tf-privacy-0.5", "--max-eps", "2.7", "--no-tight", "--json")
    assert run.code == 0
    document = run.json()
    assert document["budget"]["epsilon"] == document["result"]["epsilon"] < 2.7 < document["result"]["like"]["epsilon"]
    # below: Opacus's central-limit 2.324 is under --max-eps 2.35, the certified 2.382 is not: over budget
    run = dpcalc("gdp", "--n", "60000", "--batch-size", "256", "--epochs", "60", "--sigma", "1.1", "--like", "opacus",
                 "--max-eps", "2.35", "--json")
    assert run.code == 1
    document = run.json()
    assert document["result"]["like"]["epsilon"] < 2.35 < document["budget"]["epsilon"]
    assert document["budget"]["basis"] == "PLD certified upper bound"


BUDGET = """[budget]
epsilon = {epsilon}
delta = 1e-5
{like}
[[release]]
name = "mnist"
mechanism = "subsampled-gaussian"
p = 0.01
sigma = 1.0
T = 100
"""


def _budget(tmp_path, epsilon: float = 2.0, like: str = 'like = "prv"', extra: str = "") -> str:
    path = tmp_path / "budget.toml"
    path.write_text(BUDGET.format(epsilon=epsilon, like=like) + extra)
    return str(path)


def test_budget_file_like(dpcalc, tmp_path):
    run = dpcalc("check", _budget(tmp_path), "--json")
    assert run.code == 0
    result = run.json()["result"]
    assert result["like"]["framework"] == "prv" and result["like"]["accountant"] == "PRV"
    assert result["like"]["epsilon"] == pytest.approx(result["total"]["epsilon"], abs=0.05)
    assert "prv estimate" in dpcalc("check", _budget(tmp_path)).stdout
    assert dpcalc("check", _budget(tmp_path, like=""), "--json").json()["result"]["like"] is None
    rdp = dpcalc("check", _budget(tmp_path, like='like = "opacus"\naccountant = "rdp"'), "--json").json()
    assert rdp["result"]["like"]["accountant"] == "RDP"


def test_budget_gate_ignores_like(dpcalc, tmp_path):
    # a limit between the certified total (below) and TF Privacy 0.5's classic RDP figure (above):
    # within budget, the gate compares the total alone
    certified = dpcalc("check", _budget(tmp_path, like=""), "--json").json()["result"]["total"]["epsilon"]
    older = 'like = "tf-privacy-0.5"'
    like = dpcalc("check", _budget(tmp_path, like=older), "--json").json()["result"]["like"]["epsilon"]
    assert certified < like
    run = dpcalc("check", _budget(tmp_path, epsilon=(like + certified) / 2, like=older), "--json")
    assert run.code == 0 and run.json()["result"]["within_budget"] is True


def test_budget_like_refusals(dpcalc, tmp_path):
    path = _budget(tmp_path, like='like = "jax"')
    run = dpcalc("check", path)
    assert run.code == 2
    assert run.stderr.strip() == (f"Error: {path}:1: [budget]: like must be one of opacus, tf-privacy, tf-privacy-0.5, "
                                  "dp-accounting, prv, got 'jax'")
    path = _budget(tmp_path, extra='\n[[release]]\nname = "counts"\nmechanism = "laplace"\nepsilon = 0.5\n')
    run = dpcalc("check", path)
    assert run.code == 2 and run.stderr.count("\n") == 1
    assert "release 'counts': like = 'prv' shows the framework's figure for Poisson-sampled" in run.stderr


def test_a_refusal_names_like_in_the_json_error(dpcalc):
    run = dpcalc("pld", "--p", "0.01", "--sigma", "1,2", "--T", "100", "--like", "opacus", "--json")
    assert run.code == 2
    assert run.json()["error"]["option"] == "--like"


def test_a_framework_grid_too_large_is_refused_at_once(dpcalc):
    """dp_accounting's PLD on p 0.5, sigma 0.3, T 1e6 would need an FFT of 3.4e9 points (more than
    this machine's memory): refused with the size, exit 2, before any allocation."""
    run = dpcalc("pld", "--p", "0.5", "--sigma", "0.3", "--T", "1000000", "--like", "dp-accounting", "--json")
    assert run.code == 2
    error = run.json()["error"]
    assert error["option"] == "--like" and error["got"] == "dp-accounting"
    assert "the dp_accounting PLD grid for this run would hold" in error["message"]
