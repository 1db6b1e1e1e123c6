"""The typed request of a calibration (dpcalc.core.calibrate.request) and its checks
(core.calibrate.inputs): refusals name keywords (the command line words them with its options),
and each run becomes the task core.calibrate solves."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from dpcalc.core.calibrate.inputs import check_calibration, check_risk_target, solved_noise_std, tasks
from dpcalc.core.calibrate.request import Calibration, GivenRun, RiskTarget, Scheme
from dpcalc.core.validation import RunError


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


@pytest.mark.parametrize(("calibration", "noise_std_given", "message", "worded"), [
    (Calibration("sigma", scheme=Scheme(neighbours="zero-out"), risk=RiskTarget(advantage=0.1)), False,
     "neighbours zero-out: risk targets calibrate Poisson-sampled examples under add-remove",
     "--neighbours zero-out: risk targets"),
    (Calibration("scale", mechanism="laplace", risk=RiskTarget(advantage=0.1)), False,
     "mechanism laplace: risk targets calibrate Gaussian training runs", "--mechanism laplace: risk targets"),
    (Calibration("sigma", sensitivity=2.0, risk=RiskTarget(advantage=0.1)), False,
     "sensitivity: risk targets calibrate Gaussian training runs", "--sensitivity: risk targets"),
    (Calibration("sigma", risk=RiskTarget(tpr=0.2, fpr=0.1)), True,
     "noise_std: risk targets take the noise multiplier sigma", "--noise-std: risk targets take"),
    (Calibration("sigma", accountant="gdp", max_batch_size=30), False,
     "max_batch_size 30: the central-limit gdp accountant has no capped figure", "--max-batch-size 30: the"),
])
def test_what_no_run_can_be_is_refused_by_keyword(calibration, noise_std_given, message, worded):
    with pytest.raises(RunError) as raised:
        check_calibration(calibration, dataset_size_given=True, noise_std_given=noise_std_given)
    assert str(raised.value).startswith(message)
    assert raised.value.worded(flag).startswith(worded)


def test_a_risk_target_is_one_figure_below_its_fpr_by_pld():
    with pytest.raises(RunError, match=r"^target_advantage and target_tpr cannot be given together"):
        check_risk_target(RiskTarget(advantage=0.1, tpr=0.2), False, "pld")
    with pytest.raises(RunError, match=r"^target_tpr must exceed at_fpr 0.2 \(.*\), got 0.1$"):
        check_risk_target(RiskTarget(tpr=0.1, fpr=0.2), False, "pld")
    with pytest.raises(RunError, match=r"^accountant rdp: risk targets are certified by the PLD accountant"):
        check_risk_target(RiskTarget(advantage=0.1), False, "rdp")
    check_risk_target(RiskTarget(tpr=0.2, fpr=0.1), False, "pld")


def test_each_run_becomes_its_task():
    runs = [GivenRun(target_epsilon=target, n=60000, batch_size=240, epochs=10) for target in (1.0, 2.0)]
    found = tasks(Calibration("sigma", scheme=Scheme(sampling="uniform")), runs)
    assert [task.target_epsilon for task in found] == [1.0, 2.0]
    # p = 240 / 60000 exactly, T = ceil(10 / p) = 2500
    assert found[0].sampling_probability == Fraction(1, 250) and found[0].steps == 2500
    assert found[0].scheme.resolved == ("uniform", "add-remove", 1)
    laplace = tasks(Calibration("scale", mechanism="laplace"), [GivenRun(target_epsilon=1.0, T=10)])
    assert (laplace[0].mechanism, laplace[0].sensitivity, laplace[0].steps) == ("laplace", 1.0, 10)
    capped = tasks(Calibration("sigma", max_batch_size=300), runs[:1])[0]
    assert (capped.sampling_probability, capped.batch_size, capped.dataset_size, capped.max_batch_size) == (
        None, 240, 60000, 300)


def test_a_laplace_calibration_takes_no_sampling_scheme():
    with pytest.raises(RunError) as raised:
        tasks(Calibration("scale", mechanism="laplace", scheme=Scheme(sampling="shuffle")),
              [GivenRun(target_epsilon=1.0, T=10)])
    assert raised.value.worded(flag).startswith("--sampling shuffle: --mechanism laplace calibrates releases")


def test_the_solved_noise_std_is_rounded_up():
    # 0.1 x 3 is 0.30000000000000004 in floats, above the exact product of the two doubles: kept
    assert solved_noise_std(0.1, 3.0) == 0.1 * 3.0
    # 1.1 x 1.1 rounds to below the exact product of the doubles: one step up, to just above it
    assert Fraction(1.1 * 1.1) < Fraction(1.1) * Fraction(1.1) < Fraction(solved_noise_std(1.1, 1.1))
    assert solved_noise_std(1.1, 1.1) == math.nextafter(1.1 * 1.1, math.inf)
    assert solved_noise_std(None, 2.0) is None and solved_noise_std(1.0, None) is None
