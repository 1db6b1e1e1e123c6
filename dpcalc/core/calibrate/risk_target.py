"""Calibration to an attack-risk target: the value of one quantity of a run whose certified
maximum advantage, or largest TPR at a stated FPR, is at most a target.

Calibrating noise to the risk an attacker can reach, rather than to a conventional (epsilon,
1e-5), needs less noise for the same risk (Kulynych, Gomez, Kaissis, du Pin Calmon, Troncoso,
"Attack-aware noise calibration for differential privacy", NeurIPS 2024). The figures are
`dpcalc.core.risk.risk_figure`'s certified upper bounds (docs/mathematics.md, section 8); the
search is the one epsilon calibration uses (`search.Search`, on the same grids and with the
same guarantees: the answer is a value at which the certified figure was computed and is at
most the target; sigma is rounded up, the other quantities down), steered by the mu-GDP figure
of the central-limit mu (the model) and by the certified figure at a coarser accuracy (for a
TPR, the point of its interval where the certified upper bound is expected: STEERING_POSITION).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from dpcalc.core.calibrate.engines import STEERING_ACCURACY
from dpcalc.core.calibrate.grids import Value
from dpcalc.core.calibrate.model import LOG_CLIP, model_log_mu
from dpcalc.core.calibrate.problem import (
    CALIBRATION_DELTA,
    DEFAULT_PRECISION,
    PRECISION,
    QUANTITIES,
    Quantity,
    grid_and_start,
    make_problem,
)
from dpcalc.core.calibrate.search import STEERING_MAX, Search
from dpcalc.core.gdp import epsilon_for_delta, max_advantage, tpr_at_fpr
from dpcalc.core.limits import DEFAULT_ACCURACY
from dpcalc.core.phases import Phase
from dpcalc.core.risk import Bounds, RiskFigure, risk_figure, risk_figure_profile
from dpcalc.core.special import ndtri
from dpcalc.core.validation import FALSE_POSITIVE_RATE, OPEN_UNIT

if TYPE_CHECKING:
    from dpcalc.core.pld.privacy_profile import ProfileBounds

# The delta at which the model's answer is looked for when the target is a TPR: the mu-GDP
# curve that meets the target is found in closed form, and any point of its profile names it.
_MODEL_DELTA = 1e-5

# Where the certified TPR's upper bound lies within the steering interval [lower, upper] (the
# figure at engines.STEERING_ACCURACY), as a fraction of log(upper / lower) below its upper end.
# Where the coarse grid is four times the full one's, its upper bound exceeds the certified one
# by 1e-3..5e-3 (log) near the answer: steering by it misplaces the first certified evaluation
# by several times the precision, and a second one is needed. Measured on 16 runs near their
# answers (p 1e-3..0.1, T 1e2..1e5, FPR 1e-5..0.1, sigma 0.59..2): the fraction is 0.32..0.43 in
# 9 of them (median 0.39), 0..0.25 in four (near 0 where the coarse composition chose the same
# grid as the full one, or half its step) and 0.50..0.61 in three. Steering by the point 0.39 of
# the way down lets the first certified evaluation land within the precision in many runs; on 18
# calibrations (sigma, T, p, epochs) the steering and certified evaluations fell from 75 to 71
# (five runs one fewer, one run one more), the design card from 4 to 3. It only steers: the
# answer's figure is always the certified one. The advantage steers by the coarse upper bound.
STEERING_POSITION = 0.39


@dataclass(frozen=True)
class RiskCalibration:
    """The calibrated quantity, the run it completes, and its certified risk.

    `value` is the answer (None when infeasible); `risk` is the certified upper bound of the
    figure there (<= target), `risk_lower` its lower bound; when infeasible they are at
    `closest`, the most private value tried. `rejected` is the neighbouring value whose figure
    exceeds the target, when it was evaluated; `boundary` the value where the figure meets the
    target, interpolated (sigma and p). `epsilon` and `epsilon_lower` are the certified
    (epsilon, delta) interval of the run at the answer (or at `closest`), at `delta`.
    """

    quantity: Quantity
    figure: RiskFigure
    target: float
    fpr: float | None
    value: float | int | None
    risk: float
    risk_lower: float
    feasible: bool
    evaluations: int
    sampling_probability: float
    noise_multiplier: float
    steps: int
    precision: float | None
    delta: float
    epsilon: float
    epsilon_lower: float
    rejected: float | int | None = None
    rejected_risk: float | None = None
    closest: float | int | None = None
    boundary: float | None = None
    message: str | None = None  # why no value meets the target
    warnings: tuple[str, ...] = ()


def calibrate_risk(
    quantity: Quantity,
    figure: RiskFigure,
    target: float,
    *,
    fpr: float | None = None,
    delta: float = 1e-5,
    sampling_probability: float | Fraction | None = None,
    noise_multiplier: float | None = None,
    steps: int | None = None,
    epochs: float | Fraction | None = None,
    dataset_size: int | None = None,
    batch_size: int | None = None,
    precision: float = DEFAULT_PRECISION,
    accuracy: float = DEFAULT_ACCURACY,
) -> RiskCalibration:
    """Solve for `quantity` so that the run's certified `figure` (the maximum advantage, or the
    largest TPR at `fpr`) is at most `target`. The other quantities are given as in
    `dpcalc.core.calibrate.calibrate`; `delta` is where the answer's (epsilon, delta) figure is
    shown. Poisson-subsampled Gaussian runs under add-remove neighbours, as `calibrate`.
    """
    if quantity not in QUANTITIES:
        raise ValueError(f"quantity must be one of {', '.join(QUANTITIES)}, got quantity={quantity!r}")
    OPEN_UNIT.check(f"target {figure}", target)
    CALIBRATION_DELTA.check("delta", delta)
    PRECISION.check("precision", precision)
    if figure == "tpr":
        if fpr is None:
            raise ValueError("a TPR target needs the FPR it is stated at")
        FALSE_POSITIVE_RATE.check("fpr", fpr)
        if target <= fpr:
            raise ValueError(f"target TPR must exceed the FPR {fpr:g} (no curve has TPR < FPR), got {target:g}")
    elif figure != "advantage":
        raise ValueError(f"figure must be advantage or tpr, got {figure!r}")
    problem = make_problem(quantity, sampling_probability, noise_multiplier, steps, epochs, dataset_size, batch_size)

    # The model's answer: the mu-GDP curve with the target figure (closed form), found as the
    # run whose central-limit epsilon at some delta equals that curve's.
    if figure == "advantage":
        grid, sign, start = grid_and_start(problem, precision, 0.0, target)
    else:
        assert fpr is not None
        mu = ndtri(target) - ndtri(fpr)
        grid, sign, start = grid_and_start(problem, precision, epsilon_for_delta(_MODEL_DELTA, mu), _MODEL_DELTA)

    found: dict[Value, Bounds] = {}
    profiles: dict[Value, ProfileBounds | None] = {}

    def certified(value: Value) -> Bounds:
        if value not in found:
            found[value], profiles[value] = risk_figure_profile([problem.run(value)], figure, fpr=fpr,
                                                                accuracy=accuracy)
        return found[value]

    def evaluate(value: Value) -> float:
        return certified(value).upper

    def steer(value: Value) -> float:
        coarse = risk_figure([problem.run(value)], figure, fpr=fpr, accuracy=max(accuracy, STEERING_ACCURACY))
        return _steering_figure(coarse) if figure == "tpr" else coarse.upper

    def model(x: float) -> float:
        p, sigma, steps_x = problem.model_run(x)
        mu_x = math.exp(model_log_mu(min(p, 1.0), sigma, steps_x))
        value = max_advantage(mu_x) if figure == "advantage" else tpr_at_fpr(mu_x, fpr or 0.0)
        return math.log(value) if value > 0.0 else -LOG_CLIP

    search = Search(evaluate, model, grid, target, sign, precision, start, 0.0,
                    steer=steer, steering=STEERING_MAX, estimate=True)
    outcome = search.run()
    point = outcome.reported
    run = problem.run(point.value)
    bounds = certified(point.value)
    feasible = outcome.best is not None
    if feasible and not bounds.upper <= target:  # the search returns passing accountant points only
        raise AssertionError(f"calibration returned a value whose certified {figure} {bounds.upper} exceeds {target}")

    epsilon, epsilon_lower, warnings = _epsilon_at(run, profiles.get(point.value), delta, accuracy)

    def shown(value: Value) -> float | int:
        return value if isinstance(value, int) else float(value)

    message = None
    if not feasible:
        message = (f"no value of {quantity} in its range brings the certified {_NAMES[figure]} to {target:g} or "
                    f"below: the most private one tried gives {bounds.upper:.6g}.")
    return RiskCalibration(
        quantity=quantity, figure=figure, target=target, fpr=fpr,
        value=shown(point.value) if feasible else None,
        risk=bounds.upper, risk_lower=bounds.lower, feasible=feasible, evaluations=outcome.evaluations,
        sampling_probability=run.sampling_probability, noise_multiplier=run.noise,
        steps=run.steps, precision=None if grid.integer else precision, delta=delta,
        epsilon=epsilon, epsilon_lower=epsilon_lower,
        rejected=None if outcome.rejected is None else shown(outcome.rejected.value),
        rejected_risk=None if outcome.rejected is None else outcome.rejected.epsilon,
        closest=None if feasible else shown(point.value),
        boundary=outcome.boundary, message=message, warnings=warnings,
    )


def _epsilon_at(run: Phase, profile: ProfileBounds | None, delta: float,
                accuracy: float) -> tuple[float, float, tuple[str, ...]]:
    """The answer's certified (epsilon_upper, epsilon_lower) at `delta`, with their warnings: read
    off the profile its figure was read off where that interval is finite and within the
    accuracy (one composition fewer; a TPR at FPR 0.01 on the design card: [2.945684, 2.946177],
    tighter than `tight_epsilon`'s [2.944743, 2.946375]), else `tight_epsilon`'s."""
    if profile is not None and not profile.grid_failed:
        upper, lower = profile.epsilon_at(delta)
        if math.isfinite(upper) and upper - lower <= accuracy * upper:
            return upper, lower, tuple(profile.warnings)
    from dpcalc.core import pld

    at_delta = pld.tight_epsilon([run], delta, accuracy=accuracy)
    return at_delta.epsilon_upper, at_delta.epsilon_lower, at_delta.warnings


def _steering_figure(coarse: Bounds) -> float:
    """The point of a coarse TPR interval where the certified upper bound is expected (see
    STEERING_POSITION); the upper end when the interval is empty or touches 0."""
    if not 0.0 < coarse.lower < coarse.upper:
        return coarse.upper
    return math.exp(math.log(coarse.upper) - STEERING_POSITION * math.log(coarse.upper / coarse.lower))


_NAMES = {"advantage": "maximum advantage", "tpr": "TPR"}
