"""`calibrate`: the value of one quantity of a run that spends a target epsilon best.

The quantity's grid and the model's answer come from `problem`, the accountant from `engines`,
and the search from `search`; the guarantees are stated in the package docstring.

A previous result (`hint`, e.g. the previous row of a sweep) starts the search from its
answer and residual; the PLD search still steers (upper-bound-only steering is cheaper than
the full evaluations a search without it needs: a sweep over 8 targets took 2.2 s with it,
3.4 s without). The PLD accountant, solving for sigma or p, evaluates `tight_epsilon` point by
point (memoised per process, so the answer's evaluation is not repeated). Solving for T or
epochs it composes once for all T (`pld.largest_steps`: the step discretised once, its binary
powers shared, a greedy binary descent over T; the answer and its neighbour are certified at
the full accuracy, about one `tight_epsilon` call in all), and that composition counts as one
evaluation. The answer is then evaluated by `tight_epsilon` (the second evaluation), so its
epsilon is the number `dpcalc pld` prints there: `dpcalc pld` composes on a grid of its own,
and its certified upper bound differs from the shared composition's by far less than either
interval's width (~1e-7 relative on the design card), but not by nothing. The neighbour's
epsilon is the shared composition's, unless it lies within GRID_AGREEMENT of E, where
`tight_epsilon` checks it too. When the shared composition cannot certify (an interval wider
than the accuracy, a floating-point exception, its work limit), or the two accountings
disagree about the target, the point-by-point search runs instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING

from dpcalc.core.accountants import AccountantName
from dpcalc.core.calibrate.engines import Engine, Neighbours, PLDEngine, engine_for
from dpcalc.core.calibrate.grids import DecimalGrid, Grid, Value
from dpcalc.core.calibrate.prediction import Point
from dpcalc.core.calibrate.problem import (
    CALIBRATION_DELTA,
    DEFAULT_PRECISION,
    PRECISION,
    QUANTITIES,
    Problem,
    Quantity,
    grid_and_start,
    make_problem,
    steps_for_epochs,
)
from dpcalc.core.calibrate.result import CalibrationResult, basic_composition, build_result, laplace_closed_form
from dpcalc.core.calibrate.search import STEERING_MAX, Outcome, Search
from dpcalc.core.phases import Mechanism, Phase, Sampling, rdp_covers
from dpcalc.core.phases import Neighbours as Relation
from dpcalc.core.validation import NON_NEGATIVE, POSITIVE_INTEGER, ParameterError

if TYPE_CHECKING:
    from dpcalc.core.pld.truncation import Truncation

# How far apart two certified upper bounds of one run on different compositions may be taken
# to lie (relative): the shared composition of pld.largest_steps and tight_epsilon's agree to
# ~1e-7 on the design card. A neighbour closer than this to the target is checked by both.
GRID_AGREEMENT = 1e-5


def calibrate(
    quantity: Quantity,
    target_epsilon: float,
    delta: float,
    *,
    accountant: AccountantName = "pld",
    sampling_probability: float | Fraction | None = None,
    noise_multiplier: float | None = None,
    steps: int | None = None,
    epochs: float | Fraction | None = None,
    dataset_size: int | None = None,
    batch_size: int | None = None,
    precision: float = DEFAULT_PRECISION,
    hint: CalibrationResult | None = None,
    mechanism: Mechanism = "gaussian",
    sensitivity: float | None = None,
    sampling: Sampling = "poisson",
    neighbours: Relation = "add-remove",
    examples_per_user: int = 1,
    max_batch_size: int | None = None,
) -> CalibrationResult:
    """Solve for `quantity` so that the accountant's epsilon at `delta` is at most `target_epsilon`.

    The other quantities: p as `sampling_probability` (a Fraction keeps epochs / p exact) or as
    `batch_size` / `dataset_size`; T as `steps` or as ceil(`epochs` / p); `noise_multiplier`.
    Exactly the inputs the quantity needs must be given (the solved one is not). `hint`, a
    previous result for a nearby problem with the same quantity and accountant, starts the search
    from its answer's residual. See the package docstring for the guarantees.

    `mechanism="laplace"` solves for the `scale` of k = `steps` releases of the Laplace mechanism
    with L1 `sensitivity` (default 1), no subsampling; the gdp accountant (a central limit of the
    subsampled Gaussian) does not apply. One release (k = 1) under pld is answered in closed form,
    exactly (`laplace_closed_form`).

    `sampling` (poisson, uniform, shuffle, allocation), `neighbours` and `examples_per_user`
    describe the Gaussian run as `dpcalc pld` takes it (docs/mathematics.md §3); shuffled and
    allocated runs need `dataset_size` and `batch_size` (an epoch is ceil(n / b) steps), or
    solve for the batch size. The rdp accountant covers Poisson and (under replace-one)
    fixed-size batches; gdp only Poisson-sampled examples under add-remove or zero-out.

    `max_batch_size` caps the Poisson batches of a Gaussian run of `dataset_size` records
    (truncated Poisson sampling; pld or rdp): the quantity is solved for the capped run's
    epsilon, the Poisson run's with (1 + e^eps) eta added to delta (`engines.CappedAccountant`),
    and the result carries eta at the answer (`overflow`).
    """
    if quantity not in QUANTITIES:
        raise ValueError(f"quantity must be one of {', '.join(QUANTITIES)}, got quantity={quantity!r}")
    NON_NEGATIVE.check("target_epsilon", target_epsilon)  # [0, inf): also refuses inf and nan
    CALIBRATION_DELTA.check("delta", delta)
    PRECISION.check("precision", precision)
    problem = make_problem(quantity, sampling_probability, noise_multiplier, steps, epochs, dataset_size, batch_size,
                           mechanism, sensitivity, sampling, neighbours, examples_per_user)
    if accountant == "gdp" and not problem.plain:
        raise ValueError("the gdp accountant (central limit of Poisson sampling) covers Poisson-sampled examples "
                         "under add-remove or zero-out only: use pld")
    if accountant == "rdp" and not rdp_covers(sampling, neighbours, examples_per_user):
        raise ValueError(f"the rdp accountant has no bound for {sampling} sampling under {neighbours} neighbours"
                         + (" at user level" if examples_per_user > 1 else "") + ": use pld")
    if mechanism == "laplace":
        if accountant == "gdp":
            raise ValueError("the gdp accountant (central limit of the subsampled Gaussian) does not apply to the "
                             "laplace mechanism: use pld or rdp")
    truncation = None
    if max_batch_size is not None:
        truncation = _truncation(problem, accountant, dataset_size, max_batch_size)
    engine = engine_for(accountant, delta, truncation)
    grid, sign, start = grid_and_start(problem, precision, target_epsilon, delta)
    if mechanism == "laplace" and accountant == "pld" and problem.fixed_steps == 1:
        assert isinstance(grid, DecimalGrid), "the scale is searched on a decimal grid"
        return laplace_closed_form(problem, target_epsilon, delta, grid, precision)
    prior = 0.0
    if hint is not None and hint.quantity == quantity and hint.accountant == accountant and hint.residual is not None:
        prior = hint.residual
        if hint.value is not None:
            start = float(hint.value)

    def evaluate(value: Value) -> float:
        return engine.epsilon(problem.run(value))

    def model(x: float) -> float:
        return problem.model_log_epsilon(x, delta)

    steer: Callable[[Value], float] | None = None
    level: Callable[[Value, float], float | None] | None = None
    if isinstance(engine, PLDEngine):
        pld_engine = engine

        def steer(value: Value) -> float:
            return pld_engine.steer(problem.run(value))

        def level(value: Value, steering_epsilon: float) -> float | None:
            return pld_engine.level(problem.run(value), steering_epsilon)

        if quantity in ("T", "epochs") and problem.plain:
            shared = _largest_steps(problem, pld_engine, grid, start, target_epsilon)
            if shared is not None:
                return build_result(problem, engine, shared, target_epsilon, delta, precision, grid)
        if quantity == "sigma" and isinstance(grid, DecimalGrid) and problem.fixed_probability == 1.0:
            exact = _exact_sigma(problem, pld_engine, grid, target_epsilon)
            if exact is not None:
                return build_result(problem, engine, exact, target_epsilon, delta, precision, grid)

    search = Search(evaluate, model, grid, target_epsilon, sign, precision, start, prior,
                    steer=steer, steering=STEERING_MAX, level=level,
                    estimate=isinstance(engine, PLDEngine))
    outcome = search.run()
    result = build_result(problem, engine, outcome, target_epsilon, delta, precision, grid)
    if truncation is not None:
        result = _with_overflow(result, truncation, neighbours, examples_per_user)
    if mechanism == "laplace" and target_epsilon > 0.0:
        assert isinstance(grid, DecimalGrid), "the scale is searched on a decimal grid"
        return _no_worse_than_basic_composition(problem, engine, result, grid)
    return result


def _with_overflow(result: CalibrationResult, truncation: Truncation, neighbours: Relation,
                   examples_per_user: int) -> CalibrationResult:
    """The result of a capped calibration with the cap and eta at the answer (or the closest value);
    a warning where the cap's cost alone keeps the target out of reach: (1 + e^E) c > delta, with c
    what the cap costs above (eta, or less step by step: `cap_costs`), so the capped run is
    (eps, delta)-DP at no eps above log(delta / c - 1). Not for pld where the capped steps are
    composed (add-remove: `truncation.capped_phases`): that bound is finite at every cap."""
    from dpcalc.core.pld.truncated_profile import overflow_cost
    from dpcalc.core.pld.truncation import cap_costs, capped_phases, overflow_probability

    at = Phase("gaussian", result.sampling_probability, result.noise_multiplier, None, result.steps,
               neighbours=neighbours, examples_per_user=examples_per_user)
    overflow = overflow_probability([at], truncation)
    cost = cap_costs([at], truncation, overflow)[0]
    warnings = result.warnings
    composed = result.accountant == "pld" and capped_phases([at], truncation) is not None
    if cost > 0.0 and not composed and overflow_cost(result.target_epsilon, cost) > result.delta:
        reach = f"at every epsilon above {math.log(result.delta / cost - 1.0):.3g}" \
            if cost < 0.5 * result.delta else "at every epsilon"
        warnings += (f"some batch overflows the cap {truncation.max_batch_size} with probability up to {overflow:.3g}; "
                     f"what the cap may add to delta, (1 + e^eps) times {cost:.3g}, exceeds delta = {result.delta:g} "
                     f"{reach}: the capped run cannot spend the target; raise the cap or delta",)
    return replace(result, max_batch_size=truncation.max_batch_size, overflow=overflow, warnings=warnings)


def _truncation(problem: Problem, accountant: AccountantName, dataset_size: int | None,
                max_batch_size: int) -> Truncation:
    """The cap of a capped calibration: Poisson-sampled Gaussian runs of a known dataset size, by
    an accountant that bounds epsilon (pld, rdp)."""
    from dpcalc.core.pld.truncation import Truncation

    POSITIVE_INTEGER.check("max_batch_size", max_batch_size)
    if problem.mechanism != "gaussian" or problem.sampling != "poisson":
        raise ParameterError("max_batch_size", "for Poisson-sampled Gaussian runs (truncated Poisson sampling)",
                             max_batch_size)
    if accountant == "gdp":
        raise ValueError("max_batch_size: the central-limit gdp accountant has no capped figure; use pld or rdp")
    if dataset_size is None:
        raise ValueError("max_batch_size needs the dataset size (dataset_size): the chance of a batch above the cap "
                         "depends on it")
    return Truncation(int(dataset_size), int(max_batch_size))


def _no_worse_than_basic_composition(problem: Problem, engine: Engine, result: CalibrationResult,
                                     grid: DecimalGrid) -> CalibrationResult:
    """The Laplace answer, or basic composition's scale k D / E where the accountant's bound (looser
    than the truth by its interval's width) asked for more noise than that (`basic_composition`)."""
    basic = basic_composition(problem, result.target_epsilon, result.delta, grid, engine)
    assert basic.value is not None, "basic composition always returns a scale"
    if not basic.epsilon <= result.target_epsilon:  # k D / E beyond the grid
        return result
    if result.feasible and result.value is not None and result.value <= basic.value:
        return result
    return replace(basic, evaluations=result.evaluations + 1)


# Doublings of sigma tried to bracket the boundary of an exact run (2^200: far past the grid).
_EXACT_BRACKET_STEPS = 200
# Grid values above the rounded boundary tried before the search takes over (one suffices: the
# certified upper bound is within ~1e-12 relative of the root the boundary solves for).
_EXACT_WALK = 4


def _exact_sigma(problem: Problem, engine: PLDEngine, grid: DecimalGrid, target: float) -> Outcome | None:
    """sigma at p = 1 from the closed form: the run is exactly mu-GDP (`pld.exact`), so the
    boundary is the root of epsilon_upper(sigma) = target (Brent, on a bracket found by doubling
    from sigma = 1: no fixed bracket), rounded up to the grid; the answer is the smallest grid
    value there or above whose certified epsilon (the accountant's, what `dpcalc pld` prints) is
    at most the target, and the grid value below it the rejected neighbour. None (the search
    decides) when the boundary lies outside the grid's range or the answer is not found at once.
    """
    from dpcalc.core.special import find_root

    calls = 0

    def evaluate(value: Value) -> float:
        nonlocal calls
        calls += 1
        return engine.epsilon(problem.run(value))

    def excess(log_sigma: float) -> float:
        return evaluate(Decimal(math.exp(log_sigma))) - target

    low_end, high_end = math.log(float(grid.low)), math.log(float(grid.high))
    low = high = 0.0
    for _ in range(_EXACT_BRACKET_STEPS):
        if excess(high) <= 0.0 or high >= high_end:
            break
        low, high = high, min(high + math.log(2.0), high_end)
    if not excess(high) <= 0.0:
        return None  # infeasible on the grid: the search reports the closest point
    for _ in range(_EXACT_BRACKET_STEPS):
        if excess(low) > 0.0 or low <= low_end:
            break
        high, low = low, max(low - math.log(2.0), low_end)
    if not excess(low) > 0.0:
        return None  # the least noise of the grid passes: the search reports it
    boundary = math.exp(find_root(excess, low, high, rtol=1e-15))
    value = grid.up(boundary)
    for _ in range(_EXACT_WALK):
        epsilon = evaluate(value)
        if epsilon <= target:
            break
        value = grid.above(value)
    else:
        return None
    below = grid.below(value)
    rejected_epsilon = evaluate(below)
    if below == value or rejected_epsilon <= target:
        return None

    def point(at: Value, eps: float) -> Point:
        residual = None
        if 0.0 < eps < math.inf:
            residual = math.log(eps) - problem.model_log_epsilon(float(at), engine.delta)
        return Point(at, -math.log(float(at)), eps, eps <= target, residual)

    return Outcome(point(value, epsilon), point(below, rejected_epsilon), None, False, calls, boundary=boundary)


def _largest_steps(problem: Problem, engine: PLDEngine, grid: Grid, start: float, target: float) -> Outcome | None:
    """T or epochs by one shared PLD composition (`pld.largest_steps`); None when it cannot
    certify, and the search then evaluates the accountant point by point.

    epochs: T(e) = ceil(e / p) grows with e, and T(e) <= t exactly when e <= t p, so the
    largest whole number of epochs within t steps is floor(t p) (exact fractions); the shared
    composition answers for the admissible counts T(e) only, with T(e + 1) as the witness.
    The answer's epsilon is `tight_epsilon`'s (what the engine reports and `dpcalc pld` prints).
    """
    exact_p = problem.fixed_exact_probability
    neighbours: Neighbours | None
    if problem.quantity == "T":
        limit, neighbours, estimate = int(grid.high), None, start
    else:
        most = int(grid.high)

        def neighbours(count: int) -> tuple[int, int | None]:
            epochs = min(math.floor(count * exact_p), most)
            below = steps_for_epochs(epochs, exact_p) if epochs >= 1 else 0
            return below, (steps_for_epochs(epochs + 1, exact_p) if epochs < most else None)

        limit, estimate = steps_for_epochs(most, exact_p), start / problem.fixed_probability
    found = engine.largest_steps(target, problem.fixed_probability, problem.fixed_noise_multiplier, limit, estimate,
                                 neighbours)
    if found is None:
        return None
    answer, at_answer, at_witness = found

    def value_of(steps: int) -> int:
        return steps if problem.quantity == "T" else math.floor(steps * exact_p)

    def point(steps: int, epsilon: float) -> Point:
        value = value_of(steps)
        residual = None
        if 0.0 < epsilon < math.inf:
            residual = math.log(epsilon) - problem.model_log_epsilon(float(value), engine.delta)
        return Point(value, math.log(value), epsilon, epsilon <= target, residual)

    if at_answer is None:  # even the most private value (T = 1, one epoch) exceeds the target
        assert at_witness is not None, "pld.largest_steps: the witness T + 1 = 1 is within the limit"
        return Outcome(None, None, point(at_witness.phases[0].steps, at_witness.epsilon_upper), False, 1)
    # The answer is checked by the accountant `dpcalc pld` runs (a grid of its own; the two
    # certified upper bounds differ by ~1e-7 relative), so the reported epsilon is the one a
    # user sees when running pld at the answer. Where the two disagree about the target, the
    # point-by-point search decides instead.
    value = value_of(answer)
    epsilon = engine.epsilon(problem.run(value))
    if not epsilon <= target:
        return None
    best = point(answer, epsilon)
    rejected = None
    if at_witness is not None:
        witness = at_witness.epsilon_upper
        if witness <= target * (1.0 + GRID_AGREEMENT):
            witness = engine.epsilon(problem.run(value_of(at_witness.phases[0].steps)))
            if witness <= target:
                return None
        rejected = point(at_witness.phases[0].steps, witness)
    return Outcome(best, rejected, None, rejected is None, 2)
