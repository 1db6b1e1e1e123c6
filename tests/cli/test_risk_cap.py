"""`dpcalc risk --max-batch-size` (truncated Poisson sampling): every figure of the capped run is
the Poisson run's moved by the overflow probability eta (docs/mathematics.md, "Attack risk of a
capped run"), and every refusal."""

from __future__ import annotations

import pytest

from dpcalc.core.phases import Phase
from dpcalc.core.pld.truncation import Truncation, cap_costs, overflow_probability
from dpcalc.core.risk import MARGIN, attack_risk

# the design card as a dataset: n 62500, expected batch 250 (p = 0.004), T = 10000
CARD = ("risk", "--n", "62500", "--batch-size", "250", "--T", "10000", "--sigma", "1.1", "--kappa", "1e-3")
RUN = Phase("gaussian", 0.004, 1.1, None, 10000)


@pytest.mark.slow
def test_every_figure_moves_by_what_the_cap_costs(dpcalc):
    """Under add-remove, step by step: the upper ends by T w p tv, the lower ends by T (p - q) tv
    (`cap_costs`), both far below eta here."""
    plain = dpcalc(*CARD, "--json").json()
    run = dpcalc(*CARD, "--max-batch-size", "360", "--json")
    assert (run.code, run.stderr) == (0, "")
    capped = run.json()
    eta = overflow_probability([RUN], Truncation(62500, 360))
    assert 1e-7 < eta < 1e-6  # 2.4e-7 (as `pld --max-batch-size 360`)
    up, down = cap_costs([RUN], Truncation(62500, 360))
    assert 0.0 < up < eta and 0.0 < down < eta
    assert capped["inputs"]["max_batch_size"] == 360
    assert capped["result"]["truncation"] == {"max_batch_size": 360, "n": 62500, "overflow_probability": eta,
                                              "analysis": "overflow bound and step by step"}
    assert plain["result"]["truncation"] is None and plain["inputs"]["max_batch_size"] is None
    a, b = plain["result"], capped["result"]
    # the same compositions (decided on the uncapped figures): the advantage exactly 2 costs apart
    assert b["advantage_upper"] == pytest.approx((a["advantage_upper"] + 2 * up) * (1 + MARGIN), rel=1e-15)
    assert b["advantage_lower"] == pytest.approx((a["advantage_lower"] - 2 * down) * (1 - MARGIN), rel=1e-15)
    assert b["bayes_success_upper"] == pytest.approx(a["bayes_success_upper"] + up, rel=1e-13)
    assert b["bayes_success_lower"] == pytest.approx(a["bayes_success_lower"] - down, rel=1e-13)
    for before, after in zip(a["attacks"], b["attacks"]):
        # at least the uncapped TPR at the same FPR plus eta (the curve rises), and below it again by eta
        # at the lower end (or the FPR itself)
        assert after["tpr_upper"] >= before["tpr_upper"] + up
        assert after["tpr_lower"] <= before["tpr_lower"] - down or after["tpr_lower"] == after["fpr"]
        assert after["ppv_upper"] >= before["ppv_upper"]
    assert b["reconstruction"]["success_upper"] >= a["reconstruction"]["success_upper"] + up
    # the central-limit figures describe the uncapped run: left out
    assert b["gdp"] is None and all(attack["tpr_gdp"] is None for attack in b["attacks"])
    for left, right in zip(a["curve"], b["curve"]):
        assert right["beta"] <= left["beta"] - up or right["beta"] == 0.0
        assert right["beta_upper"] >= left["beta_upper"] - 1e-15

    # TPR'(alpha) <= TPR(alpha + c) + c: the uncapped run read at FPR alpha + c by its own call
    # (its first composition targets a delta that moves with the smallest FPR, so the two agree to the
    # certified intervals' width, 1e-3)
    fprs = [attack["fpr"] for attack in b["attacks"]]
    shifted = attack_risk([RUN], fprs=[fpr + up for fpr in fprs])
    for attack, point in zip(b["attacks"], shifted.points):
        assert attack["tpr_upper"] == pytest.approx(point.tpr.upper + up, rel=2e-3)


def test_a_cap_that_always_overflows_leaves_no_guarantee_under_zero_out(dpcalc):
    run = dpcalc("risk", "--n", "62500", "--batch-size", "250", "--T", "100", "--sigma", "1.1",
                 "--max-batch-size", "200", "--neighbours", "zero-out", "--json")
    assert run.code == 0
    result = run.json()["result"]
    assert result["truncation"]["overflow_probability"] == 1.0
    assert (result["advantage_upper"], result["advantage_lower"]) == (1.0, 0.0)
    assert all((a["tpr_upper"], a["tpr_lower"]) == (1.0, a["fpr"]) for a in result["attacks"])
    assert result["bayes_success_upper"] == 1.0 and result["bayes_success_lower"] == 0.5


def test_step_by_step_a_cap_that_always_overflows_still_bounds_the_risk(dpcalc):
    """Under add-remove the same cap costs at most T p tv = 100 * 0.004 * 0.35 = 0.14 on each law."""
    run = dpcalc("risk", "--n", "62500", "--batch-size", "250", "--T", "100", "--sigma", "1.1",
                 "--max-batch-size", "200", "--json")
    assert run.code == 0
    result = run.json()["result"]
    assert result["truncation"]["overflow_probability"] == 1.0
    assert 0.14 < result["advantage_upper"] < 0.5
    assert any("step by step" in warning for warning in run.json()["warnings"])


def test_a_cap_no_batch_reaches_changes_nothing(dpcalc):
    base = ("risk", "--n", "1000", "--batch-size", "10", "--T", "50", "--sigma", "1.0", "--json")
    plain = dpcalc(*base).json()["result"]
    capped = dpcalc(*base, "--max-batch-size", "1001").json()["result"]
    assert capped["truncation"]["overflow_probability"] == 0.0
    assert capped.pop("truncation") is not None and plain.pop("truncation") is None
    assert capped == plain


def test_the_table_says_what_the_cap_costs(dpcalc):
    run = dpcalc("risk", "--n", "1000", "--batch-size", "10", "--T", "50", "--sigma", "1.0", "--max-batch-size", "30")
    assert run.code == 0
    assert "max batch size" in run.stdout and "overflow" in run.stdout
    assert run.stderr.startswith("Warning: batches capped at 30: some batch overflows with probability at most ")


@pytest.mark.parametrize("arguments, message", [
    (("--n", "1000", "--batch-size", "10", "--max-batch-size", "0"), "--max-batch-size must be an integer in [1, inf), got 0"),
    (("--n", "1000", "--batch-size", "10", "--max-batch-size", "2.5"),
     "--max-batch-size must be an integer in [1, inf), got 2.5"),
    (("--p", "0.01", "--max-batch-size", "30"),
     "--max-batch-size needs the dataset size: give the run as --n, --batch-size and --epochs (or --T), so that the "
     "chance of a batch above the cap is known"),
    (("--n", "1000", "--batch-size", "10", "--max-batch-size", "30", "--sampling", "shuffle", "--neighbours", "zero-out"),
     "--max-batch-size caps Poisson batches of the gaussian mechanism, got shuffle sampling of the gaussian mechanism"),
    (("--n", "1000", "--batch-size", "10", "--max-batch-size", "30", "--sampling", "uniform", "--neighbours",
      "replace-one"),
     "--max-batch-size caps Poisson batches of the gaussian mechanism, got uniform sampling of the gaussian mechanism"),
], ids=["zero", "fraction", "no-n", "shuffle", "uniform"])
def test_refusals(dpcalc, arguments, message):
    run = dpcalc("risk", "--T", "50", "--sigma", "1.0", *arguments)
    assert run.code == 2
    assert run.stderr == f"Error: {message}\n"


def test_refused_with_phases(dpcalc):
    run = dpcalc("risk", "--phase", "p=0.01,sigma=2,T=5", "--max-batch-size", "30")
    assert run.code == 2
    assert run.stderr == ("Error: --max-batch-size and --phase cannot be given together; the cap applies to a "
                          "single-phase run given with the flags\n")
