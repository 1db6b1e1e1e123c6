"""`dpcalc calibrate --target-advantage | --target-tpr --at-fpr`: calibration to attack risk.

References: without subsampling a Gaussian run is exactly mu-GDP with mu = sqrt(T)/sigma (DRS
Cor. 3.3), whose advantage is 2 Phi(mu/2) - 1 and whose TPR at FPR y is Phi(mu + Phi^-1(y))
(DRS eq. (6)): the exact sigma of a target is a closed form (mpmath, 40 digits, below). The
answer is certified (its figure's certified upper bound is at most the target), so it lies at or
above the exact sigma, within the PLD accountant's accuracy (1e-3) and the precision (1e-4).
"""

from __future__ import annotations

import json
import math

import mpmath as mp
import pytest

from dpcalc.core.calibrate import risk_target
from dpcalc.core.calibrate.risk_target import calibrate_risk
from dpcalc.core.phases import Phase
from dpcalc.core.risk import Bounds, risk_figure

mp.mp.dps = 40


def exact_sigma_for_advantage(advantage: float, steps: int) -> float:
    mu = 2 * mp.sqrt(2) * mp.erfinv(advantage)  # 2 Phi(mu/2) - 1 = A
    return float(mp.sqrt(steps) / mu)


def exact_sigma_for_tpr(tpr: float, fpr: float, steps: int) -> float:
    probit = lambda q: mp.sqrt(2) * mp.erfinv(2 * mp.mpf(q) - 1)  # noqa: E731
    return float(mp.sqrt(steps) / (probit(tpr) - probit(fpr)))


@pytest.mark.parametrize("advantage, steps", [(0.1, 1), (0.3, 25)])
def test_sigma_for_an_advantage_is_certified_and_near_the_exact_one(dpcalc, advantage, steps):
    run = dpcalc("calibrate", "--target-advantage", advantage, "--p", "1", "--T", steps, "--json")
    assert run.code == 0, run.stderr
    result = json.loads(run.stdout)["result"]
    exact = exact_sigma_for_advantage(advantage, steps)
    assert exact <= result["sigma"] <= exact * (1 + 2e-3)
    assert result["risk"] <= advantage and result["risk_lower"] <= result["risk"]
    assert result["figure"] == "advantage" and result["fpr"] is None and result["feasible"]


@pytest.mark.slow
def test_sigma_for_a_tpr_is_certified_and_near_the_exact_one(dpcalc):
    run = dpcalc("calibrate", "--target-tpr", "0.05", "--at-fpr", "0.01", "--p", "1", "--T", "4", "--json")
    assert run.code == 0, run.stderr
    result = json.loads(run.stdout)["result"]
    exact = exact_sigma_for_tpr(0.05, 0.01, 4)
    assert exact <= result["sigma"] <= exact * (1 + 2e-3)
    assert result["risk"] <= 0.05
    # the (epsilon, delta) figure of the answer is the pld one there
    pld = json.loads(dpcalc("pld", "--p", "1", "--sigma", repr(result["sigma"]), "--T", "4", "--json").stdout)
    assert pld["result"]["epsilon_lower"] <= result["epsilon"] * (1 + 1e-9)
    assert result["epsilon_lower"] <= pld["result"]["epsilon"] * (1 + 1e-9)


@pytest.mark.slow
def test_subsampled_sigma_meets_the_target_and_its_neighbour_does_not():
    result = calibrate_risk("sigma", "advantage", 0.1, sampling_probability=0.01, steps=1000)
    assert result.feasible and result.risk <= 0.1
    # a sigma 2 precisions below the answer exceeds the target (the answer is within the precision)
    below = risk_figure([Phase("gaussian", 0.01, result.noise_multiplier * (1 - 2e-4), None, 1000)], "advantage")
    assert below.upper > 0.1


@pytest.mark.parametrize("position", [pytest.param(0.0, marks=pytest.mark.slow), risk_target.STEERING_POSITION, pytest.param(1.0, marks=pytest.mark.slow)])
def test_subsampled_tpr_answer_does_not_rest_on_the_steering_position(monkeypatch, position):
    # The steering figure only steers: wherever it sits in the coarse interval (its upper end, the
    # default, its lower end), the answer's certified TPR is at most the target and a sigma 2
    # precisions below exceeds it (the answer is within the precision of the boundary).
    monkeypatch.setattr(risk_target, "STEERING_POSITION", position)
    result = calibrate_risk("sigma", "tpr", 0.2, fpr=0.05, sampling_probability=0.1, steps=100)
    assert result.feasible and result.risk <= 0.2
    assert result.risk == risk_figure([Phase("gaussian", 0.1, result.noise_multiplier, None, 100)], "tpr", fpr=0.05).upper
    below = risk_figure([Phase("gaussian", 0.1, result.noise_multiplier * (1 - 2e-4), None, 100)], "tpr", fpr=0.05)
    assert below.upper > 0.2
    assert result.boundary is not None and result.boundary <= result.noise_multiplier <= result.boundary * (1 + 1e-4)


def test_steering_figure_lies_in_the_coarse_interval():
    coarse = Bounds(upper=0.05, lower=0.0498)
    shifted = risk_target._steering_figure(coarse)
    assert coarse.lower < shifted < coarse.upper
    # STEERING_POSITION of the way down the interval, in log
    expected = math.exp(math.log(0.05) - risk_target.STEERING_POSITION * math.log(0.05 / 0.0498))
    assert shifted == pytest.approx(expected, rel=1e-15)
    # an interval without width, or touching 0, steers by its upper end
    assert risk_target._steering_figure(Bounds(upper=0.05, lower=0.05)) == 0.05
    assert risk_target._steering_figure(Bounds(upper=0.05, lower=0.0)) == 0.05


@pytest.mark.parametrize(("figure", "target", "fpr"), [pytest.param("tpr", 0.05, 0.01, marks=pytest.mark.slow), ("advantage", 0.1, None)])
def test_the_answers_epsilon_is_certified_from_its_own_profile(figure, target, fpr):
    """The (epsilon, delta) figure beside the answer, read off the profile its risk was read off,
    overlaps `tight_epsilon`'s certified interval (two certified intervals for one epsilon) and is
    within the accuracy."""
    from dpcalc.core.pld import tight_epsilon

    result = calibrate_risk("sigma", figure, target, fpr=fpr, sampling_probability=0.004, steps=10_000)
    plain = tight_epsilon([Phase("gaussian", 0.004, result.noise_multiplier, None, 10_000)], 1e-5)
    assert result.epsilon_lower <= plain.epsilon_upper and plain.epsilon_lower <= result.epsilon
    assert result.epsilon - result.epsilon_lower <= 1e-3 * result.epsilon


@pytest.mark.slow
def test_steps_for_a_tpr_are_exact(dpcalc):
    run = dpcalc("calibrate", "--target-tpr", "0.05", "--at-fpr", "0.01", "--solve", "T", "--p", "0.01",
                 "--sigma", "1.5", "--json")
    assert run.code == 0, run.stderr
    result = json.loads(run.stdout)["result"]
    steps = result["T"]
    assert result["risk"] <= 0.05
    assert result["rejected"] == {"T": steps + 1, "risk": pytest.approx(result["rejected"]["risk"])}
    assert result["rejected"]["risk"] > 0.05
    assert result["run"] == {"p": 0.01, "sigma": 1.5, "T": steps}


@pytest.mark.slow
def test_table_names_the_figure_and_the_epsilon(dpcalc):
    run = dpcalc("calibrate", "--target-advantage", "0.2", "--p", "0.01", "--T", "100")
    assert run.code == 0, run.stderr
    assert "Calibration to attack risk: max advantage <= 0.2 (PLD, certified)" in run.stdout
    assert "certified upper bound at delta 1e-05" in run.stdout


def test_no_value_meets_the_target_exits_1(dpcalc):
    run = dpcalc("calibrate", "--target-advantage", "1e-9", "--solve", "T", "--p", "0.5", "--sigma", "0.1")
    assert run.code == 1
    assert "No solution: no value of T in its range brings the certified maximum advantage to 1e-09" in run.stderr


@pytest.mark.parametrize("args, message", [
    (["--target-advantage", "0.1", "--target-tpr", "0.5", "--at-fpr", "0.1"],
     "--target-advantage and --target-tpr cannot be given together"),
    (["--target-advantage", "0.1", "--target-eps", "1"], "--target-advantage and --target-eps cannot be given together"),
    (["--target-tpr", "0.5"], "--target-tpr needs --at-fpr"),
    (["--at-fpr", "0.5"], "--at-fpr goes with --target-tpr"),
    (["--target-tpr", "0.01", "--at-fpr", "0.1"], "--target-tpr must exceed --at-fpr 0.1"),
    (["--target-advantage", "0.1", "--accountant", "rdp"], "--accountant rdp: risk targets are certified by the PLD"),
    (["--target-advantage", "0.1", "--chart"], "--plot and --chart draw sweeps of epsilon targets"),
    (["--target-advantage", "0"], "--target-advantage must be in (0, 1), got 0"),
    (["--target-tpr", "1", "--at-fpr", "0.1"], "--target-tpr must be in (0, 1), got 1"),
    (["--target-tpr", "0.5", "--at-fpr", "0"], "--at-fpr must be in [1e-300, 1), got 0"),
])
def test_bad_risk_options_are_one_line(dpcalc, args, message):
    run = dpcalc("calibrate", *args, "--p", "0.01", "--T", "100")
    assert run.code == 2
    assert message in run.stderr
    assert run.stderr.count("\n") == 1


def test_a_sweep_is_refused(dpcalc):
    run = dpcalc("calibrate", "--target-advantage", "0.1", "--p", "0.01,0.02", "--T", "100")
    assert run.code == 2
    assert "a risk calibration takes one run, got a list or range for --p" in run.stderr
