"""What a calibration returns (`CalibrationResult`), built from the search's outcome, and its messages."""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Context, Decimal

from dpcalc.core.accountants import AccountantName
from dpcalc.core.calibrate.engines import Engine
from dpcalc.core.calibrate.grids import Grid, Value
from dpcalc.core.calibrate.problem import Problem, Quantity
from dpcalc.core.calibrate.search import Outcome
from dpcalc.core.phases import Phase


@dataclass(frozen=True)
class CalibrationResult:
    """The calibrated quantity, the run it completes, and the evidence.

    `value` is the answer (None when infeasible); `epsilon` is the accountant's epsilon at it
    (<= target_epsilon), or, when infeasible, at `closest`, the most private value tried.
    `rejected` is the neighbouring value that exceeds the target (None when the answer is the
    end of the range, e.g. p = 1), with `rejected_epsilon`. `sampling_probability`,
    `noise_multiplier` and `steps` describe the run at the answer (at `closest` when infeasible).
    """

    quantity: Quantity
    value: float | int | None
    epsilon: float
    target_epsilon: float
    delta: float
    accountant: AccountantName
    evaluations: int
    feasible: bool
    sampling_probability: float
    noise_multiplier: float
    steps: int
    precision: float | None
    rejected: float | int | None = None
    rejected_epsilon: float | None = None
    closest: float | int | None = None
    epsilon_lower: float | None = None  # pld: the certified lower bound at the answer
    # a sound upper bound on epsilon at the answer: epsilon itself for pld and rdp; for gdp (an
    # approximation) the caller's check by a certified accountant, None until it is made
    certified_epsilon: float | None = None
    boundary: float | None = None  # sigma, p: the value where the accountant's epsilon meets the target, interpolated
    message: str | None = None  # why no value meets the target
    suggest_solve_steps: bool = False  # the message suggests solving for T instead (SOLVE_STEPS_HINT)
    residual: float | None = None  # log(accountant epsilon / model epsilon) at the answer, for hints
    warnings: tuple[str, ...] = ()


def build_result(problem: Problem, engine: Engine, outcome: Outcome, target: float, delta: float, precision: float,
                 grid: Grid) -> CalibrationResult:
    """The result of a search's outcome, with the accountant's figures at the answer (or at the
    closest value tried, when infeasible)."""
    quantity = problem.quantity

    def output_value(value: Value) -> float | int:
        return float(value) if isinstance(value, Decimal) else int(value)

    point = outcome.reported
    run = problem.run(point.value)
    accounted = engine.account(run)
    epsilon, epsilon_lower = accounted.epsilon, accounted.epsilon_lower
    warnings = list(accounted.warnings)
    if outcome.best is None:
        message = _infeasible_message(quantity, point.value, run, epsilon, target, delta, engine.name)
        return CalibrationResult(
            quantity=quantity, value=None, epsilon=epsilon, target_epsilon=target, delta=delta,
            accountant=engine.name, evaluations=outcome.evaluations, feasible=False,
            sampling_probability=run.sampling_probability, noise_multiplier=run.noise,
            steps=run.steps, precision=None if grid.integer else precision,
            closest=output_value(point.value), epsilon_lower=epsilon_lower, message=message,
            suggest_solve_steps=quantity == "epochs",
            warnings=tuple(warnings),
        )
    # the returned value's epsilon, as the accountant reports it, must meet the target and be
    # the one the search decided on
    if not epsilon <= target or epsilon != point.epsilon:
        raise RuntimeError(
            f"calibration check failed: epsilon {epsilon!r} at {quantity} = {point.value} "
            f"(search saw {point.epsilon!r}), target {target!r}"
        )
    if outcome.at_bound:
        warnings.append(_bound_note(quantity, point.value, problem))
    rejected = outcome.rejected
    return CalibrationResult(
        quantity=quantity, value=output_value(point.value), epsilon=epsilon, target_epsilon=target, delta=delta,
        accountant=engine.name, evaluations=outcome.evaluations, feasible=True,
        sampling_probability=run.sampling_probability, noise_multiplier=run.noise, steps=run.steps,
        precision=None if grid.integer else precision,
        rejected=None if rejected is None else output_value(rejected.value),
        rejected_epsilon=None if rejected is None else rejected.epsilon,
        epsilon_lower=epsilon_lower, boundary=outcome.boundary, residual=point.residual, warnings=tuple(warnings),
    )


# The remedy an infeasible whole-epoch target suggests (`suggest_solve_steps`): callers may name
# how to do it after these words.
SOLVE_STEPS_HINT = "solve for T"

_NAMES = {"sigma": "sigma", "T": "T", "p": "p", "epochs": "epochs", "batch_size": "batch size"}


def _infeasible_message(quantity: Quantity, value: Value, run: Phase, epsilon: float, target: float, delta: float,
                        accountant: str) -> str:
    figure = f"epsilon {_short(epsilon)} > target {_short(target)} ({accountant}, delta = {delta:g})"
    if quantity == "sigma":
        return (f"no noise multiplier up to {value} meets the target: even sigma = {value} gives {figure}; "
                "the accountant cannot certify this target")
    if quantity == "T":
        return f"even T = 1 step gives {figure}: no number of steps meets the target; raise sigma or lower p"
    if quantity == "epochs":
        return (f"even 1 epoch (T = {_count(run.steps)} steps) gives {figure}: no whole number of epochs meets the "
                f"target; raise sigma, lower p, or {SOLVE_STEPS_HINT} to train part of an epoch")
    if quantity == "p":
        return (f"even p = {float(value):g} gives {figure}: no sampling probability above 0 meets the target (p = 0 "
                "samples nothing); raise sigma or lower T")
    return f"even batch size 1 (p = {run.sampling_probability:g}, T = {_count(run.steps)}) gives {figure}; raise sigma or lower T"


def _bound_note(quantity: Quantity, value: Value, problem: Problem) -> str:
    if quantity == "p":
        return "p = 1 (every example in every step) already meets the target: no subsampling is needed."
    if quantity == "batch_size":
        return f"the full dataset as one batch (batch size {value} = n) already meets the target."
    if quantity == "sigma":
        return f"the smallest noise multiplier searched, {value}, already meets the target."
    return f"{_NAMES[quantity]} = {value}, the end of the search range, already meets the target."


def _count(steps: int) -> str:
    """A step count as written, or in scientific notation past 1e15 (exact digits mean nothing there)."""
    if steps < 10**15:
        return str(steps)
    # six significant digits, as :g writes a float (a float cannot hold counts past 1e308)
    rounded = Context(prec=6).create_decimal(steps).normalize()
    digits = "".join(map(str, rounded.as_tuple().digits))
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{mantissa}e+{rounded.adjusted()}"


def _short(value: float) -> str:
    return f"{value:.6g}" if math.isfinite(value) else "inf"
