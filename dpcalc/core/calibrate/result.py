"""What a calibration returns (`CalibrationResult`), built from the search's outcome, and its messages."""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Context, Decimal
from fractions import Fraction
from typing import Any, Literal

from dpcalc.core.accountants import AccountantName
from dpcalc.core.calibrate.engines import Engine
from dpcalc.core.calibrate.grids import DecimalGrid, Grid, Value
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
    mechanism: str = "gaussian"  # laplace: `noise_multiplier` is the scale per unit of sensitivity
    sensitivity: float | None = None  # laplace: the L1 sensitivity of the released query
    # laplace: a closed form gives epsilon instead of the accountant: "profile", the exact privacy
    # profile of one release; "composition", basic composition of k pure-DP releases (k D / b)
    closed_form: Literal["profile", "composition"] | None = None
    # truncated Poisson sampling: the cap, and a certified upper bound on the probability that some
    # batch of the run at the answer (or at `closest`) overflows it; epsilon includes its cost
    max_batch_size: int | None = None
    overflow: float | None = None

    @property
    def exact(self) -> bool:
        """Whether epsilon is the exact closed form of one Laplace release (no accountant ran)."""
        return self.closed_form == "profile"

    @property
    def basis(self) -> str:
        """What `epsilon` is: the accountant's figure, or a closed form."""
        if self.closed_form == "profile":
            return "exact closed form (one Laplace release)"
        if self.closed_form == "composition":
            return "basic composition of pure DP (k sensitivity / scale)"
        if self.accountant == "pld" and self.mechanism == "laplace":
            from dpcalc.core.pld.exact_laplace import MAX_STEPS, MIN_SCALE

            if 2 <= self.steps <= MAX_STEPS and self.noise_multiplier >= MIN_SCALE:
                return "PLD certified upper bound (exact Laplace composition, no grid)"
        basis = {"pld": "PLD certified upper bound", "rdp": "RDP upper bound (improved conversion)",
                 "gdp": "central-limit approximation"}[self.accountant]
        if self.max_batch_size is not None:
            basis += (f", batches capped at {self.max_batch_size}: (1 + e^eps) x overflow probability added to delta, "
                      "or the capped steps bounded step by step (add-remove), the tighter")
        return basis


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
    laplace: dict[str, Any] = {} if problem.mechanism == "gaussian" else {
        "mechanism": problem.mechanism, "sensitivity": problem.sensitivity}
    if outcome.best is None:
        message = _infeasible_message(quantity, point.value, run, epsilon, target, delta, engine.name)
        return CalibrationResult(
            quantity=quantity, value=None, epsilon=epsilon, target_epsilon=target, delta=delta,
            accountant=engine.name, evaluations=outcome.evaluations, feasible=False,
            sampling_probability=run.sampling_probability, noise_multiplier=run.noise,
            steps=run.steps, precision=None if grid.integer else precision,
            closest=output_value(point.value), epsilon_lower=epsilon_lower, message=message,
            suggest_solve_steps=quantity == "epochs",
            warnings=tuple(warnings), **laplace,
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
        **laplace,
    )


def laplace_closed_form(problem: Problem, target: float, delta: float, grid: DecimalGrid,
                        precision: float) -> CalibrationResult:
    """One Laplace release (k = 1): the smallest scale on the grid with epsilon(delta) <= target, exactly.

    The mechanism's privacy profile (docs/mathematics.md §6) gives epsilon(delta) = max(0, D/b +
    2 log(1 - delta)), so the boundary is b* = D / (target - 2 log(1 - delta)); the answer is b*
    rounded up on the grid (as the search would return it), and the grid value below it, whose
    epsilon exceeds the target, is the rejected neighbour. Both epsilons are the closed form
    (exact: no accountant), so the answer's is also its certified figure. A b* beyond the grid
    (a delta near 1e-300 at target 0) is returned itself, raised by ulps until its epsilon is
    within the target.
    """
    from dpcalc.core.laplace import laplace_pure_epsilon

    sensitivity = problem.sensitivity

    def epsilon_at(scale: float) -> float:
        return _laplace_epsilon_upper(delta, sensitivity / scale)

    boundary = sensitivity / laplace_pure_epsilon(target, delta)
    value: Decimal | float
    rejected: Decimal | float | None = None
    if boundary < float(grid.high):
        value = grid.up(boundary)
        while epsilon_at(float(value)) > target and value < grid.high:
            value = grid.above(value)
        below = grid.below(value)
        if below < value and epsilon_at(float(below)) > target:
            rejected = below
        stated: float | None = precision
    else:
        value = boundary
        while epsilon_at(value) > target:
            value = math.nextafter(value, math.inf)
        stated = None
    epsilon = epsilon_at(float(value))
    if not epsilon <= target:  # only past the grid's top: 1e6 times the sensitivity
        raise RuntimeError(f"calibration check failed: epsilon {epsilon!r} at scale = {value}, target {target!r}")
    scale = float(value)
    return CalibrationResult(
        quantity="scale", value=scale, epsilon=epsilon, target_epsilon=target, delta=delta, accountant="pld",
        evaluations=0, feasible=True, sampling_probability=1.0, noise_multiplier=scale / sensitivity, steps=1,
        precision=stated, rejected=None if rejected is None else float(rejected),
        rejected_epsilon=None if rejected is None else epsilon_at(float(rejected)), epsilon_lower=epsilon,
        certified_epsilon=epsilon, boundary=boundary, mechanism="laplace", sensitivity=sensitivity,
        closed_form="profile",
    )


def _laplace_epsilon_upper(delta: float, pure: float) -> float:
    """`laplace.laplace_epsilon` raised by its floating-point error: eps0 = D/b, log1p and the sum
    each round by at most an ulp of the larger term, so adding 3 such ulps gives an upper bound
    (printed and gated as one)."""
    from dpcalc.core.laplace import laplace_epsilon

    log_term = -2.0 * math.log1p(-delta)
    return laplace_epsilon(delta, pure) if math.isinf(pure) else max(
        0.0, pure - log_term + 3.0 * math.ulp(max(pure, log_term)))


def basic_composition(problem: Problem, target: float, delta: float, grid: DecimalGrid, engine: Engine,
                      ) -> CalibrationResult:
    """k Laplace releases at the scale where basic composition meets the target: k D / b <= target.

    The k-fold composition of eps0-DP mechanisms is (k eps0)-DP (Dwork, Roth 2014, Thm 3.16),
    exactly at delta = 0, so b = k D / target rounded up on the grid meets any target > 0 (when
    the grid reaches it: the caller checks the epsilon). It is the answer when the accountant's
    certified bound, looser than the truth by its interval's width, asks for more noise than
    this (a few releases with k eps0 near the target). The accountant still runs there, for its
    lower bound and warnings.
    """
    steps, sensitivity = problem.fixed_steps, problem.sensitivity

    def epsilon_at(scale: Decimal) -> float:
        exact = Fraction(steps) * Fraction(sensitivity) / Fraction(scale)
        value = float(exact)
        return math.nextafter(value, math.inf) if Fraction(value) < exact else value

    value = grid.up(steps * sensitivity / target)
    while epsilon_at(value) > target and value < grid.high:
        value = grid.above(value)
    accounted = engine.account(problem.run(value))
    scale = float(value)
    # no rejected neighbour: below this scale basic composition exceeds the target, but the
    # true epsilon may not (by less than the accountant's interval's width)
    return CalibrationResult(
        quantity="scale", value=scale, epsilon=epsilon_at(value), target_epsilon=target, delta=delta,
        accountant=engine.name, evaluations=1, feasible=True, sampling_probability=1.0,
        noise_multiplier=scale / sensitivity, steps=steps, precision=None, epsilon_lower=accounted.epsilon_lower,
        mechanism="laplace", sensitivity=sensitivity, closed_form="composition",
        warnings=tuple(accounted.warnings),
    )


# The remedy an infeasible whole-epoch target suggests (`suggest_solve_steps`): callers may name
# how to do it after these words.
SOLVE_STEPS_HINT = "solve for T"

_NAMES = {"sigma": "sigma", "T": "T", "p": "p", "epochs": "epochs", "batch_size": "batch size", "scale": "scale"}


def _infeasible_message(quantity: Quantity, value: Value, run: Phase, epsilon: float, target: float, delta: float,
                        accountant: str) -> str:
    figure = f"epsilon {_short(epsilon)} > target {_short(target)} ({accountant}, delta = {delta:g})"
    if quantity == "scale":
        return (f"no Laplace scale up to {value} meets the target: even scale = {value} gives {figure}; "
                "the accountant cannot certify this target")
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
    if quantity == "scale":
        return f"the smallest Laplace scale searched, {value} (0.01 sensitivity), already meets the target."
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
