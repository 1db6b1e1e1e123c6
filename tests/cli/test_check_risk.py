"""`dpcalc check` with attack-risk limits: max_advantage and tpr_at_fpr on all releases composed.

References: the randomized-response pair with an atom is the exact worst case of an (eps, delta)
release (Kairouz, Oh, Viswanath 2015), so for dp releases alone the composed profile is a closed
form; with an unsubsampled Gaussian release (exactly mu-GDP) the composition with one (eps, 0)
release is computed independently below by mpmath from its definition.
"""

from __future__ import annotations

import json
import math

import mpmath as mp
import pytest

from dpcalc.core.budget import account_budget, load_budget

HEAD = """\
[budget]
epsilon = 3.0
delta = 0.1
"""


def write(tmp_path, text, name="budget.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def budget_with(limits: str, releases: str) -> str:
    return HEAD + limits + "\n" + releases


DP_ONE = """\
[[release]]
name = "stats"
mechanism = "dp"
epsilon = 1.0
delta = 0.01
"""


def test_dp_release_alone_gives_its_own_curve(tmp_path, dpcalc):
    # f_{1, 0.01}: advantage = delta + (1 - delta) tanh(eps / 2); TPR at alpha = delta + e^eps alpha
    # (exact, DRS eq. (5)); the checked figures are certified upper bounds at ~1e-14 above them.
    text = budget_with("max_advantage = 0.5\ntpr_at_fpr = {fpr = 0.001, tpr = 0.5}\n", DP_ONE)
    run = dpcalc("check", write(tmp_path, text), "--json")
    assert run.code == 0, run.stderr
    risk = json.loads(run.stdout)["result"]["risk"]
    advantage = 0.01 + 0.99 * math.tanh(0.5)
    tpr = 0.01 + math.e * 0.001
    assert advantage <= risk["max_advantage"]["value"] <= advantage * (1 + 1e-12)
    assert tpr <= risk["tpr_at_fpr"]["value"] <= tpr * (1 + 1e-12)
    assert risk["max_advantage"]["within_budget"] and risk["tpr_at_fpr"]["within_budget"]
    assert risk["basis"].startswith("(epsilon, delta) releases")


def test_two_dp_releases_compose_exactly(tmp_path):
    # (eps, 0) used twice: the composed randomized responses have losses 2e, 0, -2e with
    # probabilities w^2, 2 w (1 - w), (1 - w)^2, w = e^e / (1 + e^e); delta(0) is their TV,
    # w^2 (1 - e^-2e) = (w^2 - (1 - w)^2) (exact, mpmath at 50 digits below)
    text = budget_with("max_advantage = 0.9\n", DP_ONE.replace("delta = 0.01", "delta = 0.0\ncount = 2"))
    result = account_budget(load_budget(text, "b.toml"))
    (check,) = result.risk
    mp.mp.dps = 50
    w = mp.e / (1 + mp.e)
    exact = w**2 - (1 - w) ** 2
    assert float(exact) <= check.value <= float(exact) * (1 + 1e-12)


def test_gaussian_release_composed_with_a_dp_release(tmp_path):
    # An unsubsampled Gaussian release (sigma 2: exactly 0.5-GDP) and a (0.5, 0) release. The
    # composed advantage is E over the randomized response's loss s of delta_G(-s), with
    # delta_G(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) and, for eps < 0,
    # delta_G(eps) = 1 - e^eps + e^eps delta_G(-eps) (symmetry); mpmath at 40 digits.
    releases = """\
[[release]]
name = "mean"
mechanism = "gaussian"
sigma = 2.0

[[release]]
name = "count"
mechanism = "dp"
epsilon = 0.5
"""
    result = account_budget(load_budget(budget_with("max_advantage = 0.9\n", releases), "b.toml"))
    (check,) = result.risk
    mp.mp.dps = 40
    mu, e = mp.mpf("0.5"), mp.mpf("0.5")

    def gdp_delta(t):
        if t < 0:
            return 1 - mp.exp(t) + mp.exp(t) * gdp_delta(-t)
        return mp.ncdf(-t / mu + mu / 2) - mp.exp(t) * mp.ncdf(-t / mu - mu / 2)

    w = mp.exp(e) / (1 + mp.exp(e))
    exact = w * gdp_delta(-e) + (1 - w) * gdp_delta(e)
    # the Gaussian release's profile comes from the PLD grid: certified, within its accuracy
    assert float(exact) <= check.value <= float(exact) * (1 + 2e-3)


def test_over_a_risk_limit_exits_1_and_names_it(tmp_path, dpcalc):
    text = budget_with("tpr_at_fpr = {fpr = 0.01, tpr = 0.02}\n", DP_ONE)
    run = dpcalc("check", write(tmp_path, text))
    assert run.code == 1
    assert "Over budget: TPR at FPR 0.01" in run.stderr
    assert "Over budget: total epsilon" not in run.stderr  # the epsilon itself is within budget
    assert "Attack risk of all releases composed" in run.stdout and "OVER BUDGET" in run.stdout


def test_no_risk_limits_gives_null(tmp_path, dpcalc):
    run = dpcalc("check", write(tmp_path, HEAD + DP_ONE), "--json")
    assert run.code == 0
    assert json.loads(run.stdout)["result"]["risk"] is None


def test_no_releases_has_no_risk(tmp_path, dpcalc):
    run = dpcalc("check", write(tmp_path, HEAD + "max_advantage = 0.01\ntpr_at_fpr = {fpr = 0.01, tpr = 0.02}\n"),
                 "--json")
    assert run.code == 0
    risk = json.loads(run.stdout)["result"]["risk"]
    assert risk["max_advantage"]["value"] == 0.0
    assert risk["tpr_at_fpr"]["value"] == pytest.approx(0.01, rel=1e-12)  # TPR = FPR: nothing learnt


@pytest.mark.slow
def test_subsampled_gaussian_matches_dpcalc_risk(tmp_path, dpcalc):
    releases = """\
[[release]]
name = "training"
mechanism = "subsampled-gaussian"
p = 0.01
sigma = 1.0
T = 500
"""
    text = budget_with("max_advantage = 0.9\ntpr_at_fpr = {fpr = 0.001, tpr = 0.9}\n", releases)
    risk = json.loads(dpcalc("check", write(tmp_path, text), "--json").stdout)["result"]["risk"]
    direct = json.loads(dpcalc("risk", "--p", "0.01", "--sigma", "1", "--T", "500", "--fpr", "0.001", "--json").stdout)
    result = direct["result"]
    # both are certified upper bounds of the same figures (the same accountant, other grids)
    assert result["advantage_lower"] <= risk["max_advantage"]["value"] <= result["advantage"] * (1 + 3e-3)
    attack = result["attacks"][0]
    assert attack["tpr_lower"] <= risk["tpr_at_fpr"]["value"] <= attack["tpr"] * (1 + 3e-3)


@pytest.mark.parametrize("limits, message", [
    ("max_advantage = 0\n", "max_advantage must be in (0, 1), got 0"),
    ("max_advantage = 1.5\n", "max_advantage must be in (0, 1), got 1.5"),
    ("tpr_at_fpr = 0.05\n", "tpr_at_fpr must be a table {fpr = Y, tpr = X}"),
    ("tpr_at_fpr = {fpr = 0.01}\n", "tpr_at_fpr must be a table {fpr = Y, tpr = X}"),
    ("tpr_at_fpr = {fpr = 0.1, tpr = 0.05}\n", "tpr_at_fpr.tpr must exceed tpr_at_fpr.fpr 0.1"),
    ("tpr_at_fpr = {fpr = 0, tpr = 0.05}\n", "tpr_at_fpr.fpr must be in [1e-300, 1), got 0"),
    ("max_advantge = 0.1\n", "unknown key 'max_advantge' (did you mean 'max_advantage'?)"),
])
def test_bad_risk_limits_are_refused_with_the_line(tmp_path, dpcalc, limits, message):
    run = dpcalc("check", write(tmp_path, budget_with(limits, DP_ONE)))
    assert run.code == 2
    assert message in run.stderr
    assert run.stderr.count("\n") == 1 and "budget.toml:1: [budget]" in run.stderr


def test_zcdp_release_is_refused_beside_risk_limits(tmp_path, dpcalc):
    releases = '[[release]]\nname = "z"\nmechanism = "zcdp"\nrho = 0.1\n'
    run = dpcalc("check", write(tmp_path, budget_with("max_advantage = 0.5\n", releases)))
    assert run.code == 2
    assert "release 'z': a zcdp release has no trade-off curve" in run.stderr
