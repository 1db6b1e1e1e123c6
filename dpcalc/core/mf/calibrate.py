"""The smallest noise multiplier of a matrix-factorisation mechanism that meets a target epsilon.

Each mechanism of `accounting` reduces, at noise multiplier sigma, to one Gaussian phase whose
sampling probability, steps and neighbour relation do not depend on sigma and whose noise
multiplier is sigma / m, for a factor m of the strategy (its sensitivity, its largest column
norm, or 1). So calibrating sigma is calibrating that Gaussian phase's noise multiplier s' with
the PLD accountant (`dpcalc.core.calibrate.calibrate`, p and T of the phase fixed) and taking
sigma = s' m, rounded up until the reduction at sigma has a noise multiplier of at least s'.

Why that is sound: a Gaussian release with more noise is a post-processing of one with less
(add independent N(0, t^2 - s'^2) noise, before or after the subsampling), so the reduced run at
sigma is at least as private as at s', where the accountant certified epsilon <= the target.
The figure reported is that certified epsilon, an upper bound at sigma.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from dpcalc.core.calibrate.result import CalibrationResult
from dpcalc.core.mf.accounting import MFAccounting

# The rescaling s' m is off by a few units in the last place; each round raises sigma by the
# shortfall and one more unit, so two rounds suffice in practice.
_ROUNDS = 64


@dataclass(frozen=True)
class MFCalibration:
    """The noise multiplier `sigma` of the mechanism (None when no value meets the target), its
    reduction at that sigma (`accounting`), and the calibration of the reduced Gaussian phase."""

    sigma: float | None
    accounting: MFAccounting
    reduced: CalibrationResult


def calibrate_sigma(reduction: Callable[[float], MFAccounting], target_epsilon: float, delta: float, *,
                    precision: float | None = None) -> MFCalibration:
    """The smallest sigma (to `precision`, relative) at which the mechanism `reduction(sigma)`
    spends at most `target_epsilon` at `delta` by the PLD accountant's certified bound."""
    from dpcalc.core.calibrate import DEFAULT_PRECISION, calibrate

    unit = reduction(1.0)
    (phase,) = unit.phases
    assert phase.noise_multiplier is not None and phase.mechanism == "gaussian", "a Gaussian reduction"
    reduced = calibrate("sigma", target_epsilon, delta, accountant="pld", sampling_probability=phase.sampling_probability,
                        steps=phase.steps, neighbours=phase.neighbours,
                        precision=DEFAULT_PRECISION if precision is None else precision)
    if not reduced.feasible or reduced.value is None:
        return MFCalibration(None, unit, reduced)
    floor = float(reduced.value)
    sigma = floor / phase.noise_multiplier
    for _ in range(_ROUNDS):
        accounting = reduction(sigma)
        noise = accounting.phases[0].noise_multiplier
        assert noise is not None
        if noise >= floor:
            return MFCalibration(sigma, accounting, reduced)
        sigma = math.nextafter(sigma * (floor / noise), math.inf)
    raise ArithmeticError(f"the noise multiplier {floor!r} of the reduced phase was not reached by rescaling")
