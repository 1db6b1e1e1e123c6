"""The grid accountant: tilts and grid scale of a run (`prepare`), one grid's bounds in every
direction (`attempt`), and the refinement loop that makes the grid finer until the interval
meets the accuracy or a limit is reached (`account_grid`).

Sources: Koskela, Jalko, Honkela (AISTATS 2020, arXiv 1906.03049) and Gopi, Lee, Wutschitz
(NeurIPS 2021, arXiv 2106.02848) for composing PLDs by FFT; the bounds and why they are sound
are in docs/pld-soundness.md (S1-S6).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from dpcalc.core.phases import Phase
from dpcalc.core.pld import bounds, work
from dpcalc.core.pld.model import Direction, PhaseModel, chernoff, directions_of, models_of
from dpcalc.core.pld.plan import INF_SHARE, Plan, cap, make_plan
from dpcalc.core.pld.policy import Composition
from dpcalc.core.pld.power import Measures, Usage, compose_run
from dpcalc.core.pld.result import DEFAULT_ACCURACY, PLDResult
from dpcalc.core.record import Record, factory, replace

# The refinement stops before a grid would exceed this many bins.
MAX_BINS = 1 << 21
MAX_ATTEMPTS = 4
# The cheaper upper bound that decides whether a direction after the first is composed is
# computed on a grid this many times as fine (4 times as coarse): its upper bound lies ~0.3%
# above the full grid's (design card), far below the gap between the directions of most runs,
# at about 60% of the cost of a grid twice as coarse. Only the upper bound is composed.
ROUGH_SCALE = 0.25
# A delta_upper at or below this is reported without refining for relative accuracy.
NEGLIGIBLE_DELTA = 1e-300
# What `account_grid` composes unless told: the certified interval at the target.
_INTERVAL = Composition.interval()


class Setup(Record):
    """What every attempt of one accounting shares: the models, tilts and grid scale."""

    models: dict[str, list[PhaseModel]]
    tilts: dict[str, tuple[float, float]]
    order: list[str]  # directions, the likely binding one first
    roles: dict[str, Direction]  # what each direction's composition bounds
    events: int
    scale: float
    reference: float
    per_step_error: Callable[[float], float]
    coarse_first: bool
    # a direction's Chernoff estimate with the whole MGF, computed when asked for (`_below`)
    ceilings: dict[str, float] = factory(dict)


def prepare(phases: Sequence[Phase], delta: float | None, epsilon: float | None, accuracy: float,
            direction: str | None = None) -> Setup:
    """The tilts (Chernoff saddle points), truncation caps and grid scale of a run; with
    `direction` (one of the run's that bounds it from above), of that direction alone."""
    roles = {d.name: d for d in directions_of(phases) if direction is None or d.name == direction}
    directions = list(roles)
    models = {d: models_of(phases, d) for d in directions}
    # The tilt is chosen for the measure the grid represents: losses beyond the upper
    # truncation go to +inf and take no part in the tilt (for heavy-tailed losses, e.g. small
    # p, the full MGF is dominated by events far rarer than delta). The caps need a scale of
    # delta: the target, or at a target epsilon the Chernoff estimate of the untruncated run.
    tilts = {d: chernoff(models[d], delta, epsilon) for d in directions} if delta is None else {}
    events = max(sum(2 * (m.steps.bit_length() + 1) for m in models[d]) + 2 * len(models[d]) + 2 for d in directions)
    for d in directions:
        delta_scale = delta if delta is not None else math.exp(min(tilts[d][1], 0.0))
        for model in models[d]:
            model.cap = cap(model, math.log(INF_SHARE * max(delta_scale, 1e-300)), events)
        tilts[d] = chernoff(models[d], delta, epsilon)
    # the direction with the larger Chernoff estimate is most likely the binding one; directions
    # that bound from above come first (their bound is the one every run needs)
    order = sorted(directions, key=lambda d: (not roles[d].upper, -tilts[d][1]))
    total_steps = max(sum(m.steps for m in models[d]) for d in directions)
    # both bounds err by O(h^2) per step and per coarsening; the number of coarsenings grows
    # with log T, so the grids are refined by sqrt(log2 T / 14) beyond T ~ 16000
    scale = math.sqrt(DEFAULT_ACCURACY / accuracy) * math.sqrt(max(1.0, math.log2(total_steps) / 14.0))
    if epsilon is not None:
        # a relative width a in delta is a width of about a / (lam + 1) in epsilon: that many
        # times finer than the same relative width in epsilon
        scale *= math.sqrt(max(1.0, (tilts[order[0]][0] + 1.0) * epsilon))
    # The error of either bound is at most about (number of steps) * h in epsilon, so a step of
    # accuracy * epsilon / (4 steps) always suffices; the variance rule is finer for long runs.
    if delta is not None:
        reference = max(tilts[order[0]][1], 0.0)
        per_step_error = lambda ref: accuracy * ref / (4.0 * total_steps)  # noqa: E731
    else:
        lam0 = tilts[order[0]][0]
        reference = 1.0
        per_step_error = lambda ref: accuracy / (4.0 * (lam0 + 1.0) * total_steps)  # noqa: E731
    # A run whose Chernoff bound already gives epsilon = 0 first tries a coarse grid, which
    # certifies epsilon_upper = 0 cheaply when that is the answer.
    coarse_first = delta is not None and tilts[order[0]][1] <= 0.0
    return Setup(models, tilts, order, roles, events, scale, reference, per_step_error, coarse_first)


def bounds_of(measures: Measures, delta: float | None, epsilon: float | None) -> tuple[float, float | None]:
    """(upper, lower) of the target quantity for one direction (lower None if not composed)."""
    if delta is not None:
        upper = bounds.epsilon_bound(measures.upper, delta)
        lower = bounds.epsilon_bound(measures.lower, delta) if measures.lower is not None else None
    else:
        assert epsilon is not None
        upper = bounds.delta_bound(measures.upper, epsilon)
        lower = bounds.delta_bound(measures.lower, epsilon) if measures.lower is not None else None
    return upper, lower


class Attempt(Record):
    """The bounds of one grid (`attempt`), over all directions."""

    upper: float
    lower: float | None  # None when the lower bound was not asked for
    binding: str
    grid_step: float
    bins: int
    capped: bool
    measures: dict[str, Measures]  # direction -> its composed measures
    # The discretisation's part of the width: the largest upper - lower of one composed
    # direction's own measures.
    numeric_width: float = math.inf
    # the plans of the directions composed upper-only (`policy.Composition.spares_lower`)
    spared: dict[str, Plan] = factory(dict)

    @property
    def value(self) -> float:
        """The upper bound where finite (0 otherwise): what the width is compared against."""
        return self.upper if math.isfinite(self.upper) else 0.0

    @property
    def interval_width(self) -> float:
        """upper - lower (the lower bound must have been asked for)."""
        assert self.lower is not None
        return self.upper - self.lower

    @property
    def width(self) -> float:
        """The width a finer grid can narrow: upper - lower, or, where the upper and lower bounds
        come from different pairs (uniform sampling), the widest discretisation interval of a
        composed direction; beyond it the interval is the gap between the pairs."""
        return min(self.interval_width, self.numeric_width)

    def unresolved(self, delta: float | None) -> bool:
        """The grid could not certify the target delta (the upper bound is inf)."""
        return math.isinf(self.upper) and delta is not None


def attempt(setup: Setup, delta: float | None, epsilon: float | None, scale: float, inf_share: float,
            min_step: float, composition: Composition) -> Attempt:
    """One grid of `account_grid`, `scale` times finer than the default accuracy's, composed as
    `composition` says (`policy.Composition`).

    The upper bound is the largest upper bound of the directions that bound from above, the
    lower bound the largest lower bound of those that bound from below (`model.Direction`).
    With `composition.every_direction`, every direction is composed (their measures are kept);
    otherwise a direction after the first is composed only when a cheaper upper bound for it
    exceeds the bound it could raise (the upper bound, or the lower bound for a direction that
    only bounds from below). For a direction that only bounds from below, the Chernoff bound of
    its pairs (`_below`) is tried first: it needs no grid. A direction that bounds what none
    composed so far bounds is composed without either check.

    Where the composition spares lower measures (`Composition.spares_lower`), a direction after
    the first that bounds from above is composed upper-only, and again with its lower measure
    only when that upper bound at the target exceeds the lower bound found (the direction could
    raise it), or, for "first", never: its plan on this grid is kept in `Attempt.spared` for
    `compose_spared`. Leaving a lower measure out is sound: the lower bound is the largest over
    the directions composed with one.
    """
    usage = Usage()
    upper = -math.inf
    lower: float | None = None
    numeric = 0.0
    binding, grid_step = setup.order[0], 0.0
    kept: dict[str, Measures] = {}
    spared: dict[str, Plan] = {}
    every_direction, want_lower = composition.every_direction, composition.lower_measures
    for direction in setup.order:
        role = setup.roles[direction]
        if not want_lower and not role.upper:
            continue
        # a direction whose bound none of those composed so far gives is composed in any case
        needed = (role.upper and upper == -math.inf) or (want_lower and role.lower and lower is None)
        if (kept and not every_direction and not needed and not role.upper
                and _below(setup, direction, delta, epsilon, lower)):
            # a direction that only bounds from below whose pairs' epsilon (delta) lies below the
            # lower bound found: its lower bound, at most that, cannot raise it (no rough grid needed)
            continue
        if kept and not every_direction and not needed:
            # A cheaper upper bound settles most runs: if it cannot raise the bound this
            # direction contributes to, the direction is left out (the maximum is unchanged, and
            # the lower bounds already found remain lower bounds of the run).
            rough_plan = make_plan(*setup.tilts[direction], delta, scale * ROUGH_SCALE, inf_share, setup.events,
                                   min_step)
            rough_upper, _ = bounds_of(compose_run(setup.models[direction], rough_plan, False, usage), delta, epsilon)
            raises_upper = role.upper and rough_upper > upper
            raises_lower = want_lower and role.lower and (lower is None or rough_upper > lower)
            if not (raises_upper or raises_lower):
                continue
        plan = make_plan(*setup.tilts[direction], delta, scale, inf_share, setup.events, min_step)
        if not every_direction and delta is not None:
            # epsilon at one delta: a short run's lower measure on a coarser grid (`plan.lower_coarse_share`)
            plan = replace(plan, short_runs_coarser=True)
        composed, found = None, None
        if kept and composition.spares_lower and role.upper:
            composed = compose_run(setup.models[direction], plan, False, usage)
            found = bounds_of(composed, delta, epsilon)
            if role.lower and composition.lower == "where it raises" and (lower is None or found[0] > lower):
                composed = None  # it could raise the lower bound at the target: composed with it
            elif role.lower:
                spared[direction] = plan  # (a direction that bounds only from above needs no lower measure)
        if composed is None:
            composed = compose_run(setup.models[direction], plan, want_lower, usage)
            found = bounds_of(composed, delta, epsilon)
        assert found is not None
        kept[direction] = composed
        this_upper, this_lower = found
        # (the bounds read NaN as no bound, `bounds.Profile.at`; should one still come out NaN,
        # it is no bound either, never a small one: a NaN compares false with every number)
        if math.isnan(this_upper):
            this_upper = math.inf
        if this_lower is not None and math.isnan(this_lower):
            this_lower = 0.0
        if this_lower is not None:
            numeric = max(numeric, this_upper - this_lower)
        if role.upper and this_upper > upper:
            upper, binding, grid_step = this_upper, direction, composed.upper.bulk.h
        if role.lower and this_lower is not None:
            lower = this_lower if lower is None else max(lower, this_lower)
    return Attempt(upper, lower, binding, grid_step, usage.bins, usage.capped, kept, numeric, spared)


def _below(setup: Setup, direction: str, delta: float | None, epsilon: float | None, lower: float | None) -> bool:
    """Whether the Chernoff bound of `direction` with the whole MGF (`model.chernoff`), an upper
    bound on the epsilon (or the log delta) of the composition of its pairs, lies below `lower`.
    The estimate with the truncated MGF, known already, is at most that one: when it does not lie
    below, the whole one is not computed."""
    if lower is None:
        return False
    if delta is not None:
        limit = lower
    elif lower > 0.0:
        limit = math.log(lower)
    else:
        return False
    limit -= 1e-9 * (1.0 + abs(limit))  # the quadratures' error
    if not setup.tilts[direction][1] < limit:
        return False
    if direction not in setup.ceilings:
        setup.ceilings[direction] = chernoff(setup.models[direction], delta, epsilon, truncated=False)[1]
    return setup.ceilings[direction] < limit


class GridAccount(Record):
    """The grid accountant's result and the measures of the attempt it reports."""

    result: PLDResult
    measures: dict[str, Measures]
    roles: dict[str, Direction]
    # the grid certified the target and met the accuracy on its pairs (its only warning, if
    # any, is the gap between the upper and the lower pair)
    met_accuracy: bool = False
    # the directions composed upper-only, with their models and plans (`compose_spared`)
    spared: dict[str, tuple[list[PhaseModel], Plan]] = factory(dict)


def account_grid(phases: tuple[Phase, ...], *, delta: float | None, epsilon: float | None,
                 accuracy: float, composition: Composition = _INTERVAL) -> GridAccount:
    """The grid accountant: grids refined (2 or 4 times finer) until the interval is at most
    `accuracy` times the upper bound wide, or MAX_ATTEMPTS, MAX_BINS or the work limit is
    reached (the last completed grid is then reported, with a warning naming the limit).
    Each grid is composed as `composition` says (`attempt`): by default the interval at the
    target; a profile composes every direction (`Composition.in_full`, `sparing_lower`,
    `first_lower`)."""
    setup = prepare(phases, delta, epsilon, accuracy)
    scale, reference = setup.scale, setup.reference
    inf_share = INF_SHARE
    attempts = 0
    outcome: Attempt | None = None
    out_of_work = stalled = False
    for number in range(MAX_ATTEMPTS):
        attempts += 1
        this_scale = scale / 8.0 if (setup.coarse_first and number == 0) else scale
        try:
            fresh = attempt(setup, delta, epsilon, this_scale, inf_share, setup.per_step_error(reference), composition)
        except work.WorkLimitReached:
            if outcome is None:
                raise
            attempts -= 1
            out_of_work = True
            break
        if outcome is not None and _narrower_before(outcome, fresh, delta):
            # A finer grid that does not narrow the interval (below _STALL of its width) will
            # not do better on the next: what limits it is not the grid step (p = 0.004,
            # sigma = 1.1, T = 1e10: 0.28% wide, then 0.26%, then the lower bound was lost on the
            # third grid, whose FFTs carry larger rounding bounds). Both grids are certified, so
            # both bounds hold: the interval is their intersection (p = 1e-4, sigma = 0.8,
            # T = 1e8: the finer grid had the better lower bound and the worse upper one).
            stalled = True
            outcome = _intersection(outcome, fresh)
            break
        outcome = fresh
        if outcome.unresolved(delta):
            if outcome.capped:
                break  # a finer grid would exceed the bin limit
            inf_share *= 1e-3
            scale *= 2.0
            continue
        if delta is not None and outcome.upper == 0.0:
            break
        if epsilon is not None and outcome.upper <= NEGLIGIBLE_DELTA:
            break  # relative accuracy below 1e-300 is not worth a finer grid
        if outcome.width <= accuracy * outcome.value:
            break
        if delta is not None:
            reference = outcome.upper
        if setup.coarse_first and number == 0:
            continue
        ratio = outcome.width / max(accuracy * outcome.value, 1e-300)
        factor = 2.0 if ratio < 3.5 else 4.0
        if outcome.bins * factor > MAX_BINS or outcome.capped:
            break
        scale *= factor
    assert outcome is not None and outcome.lower is not None
    warnings: list[str] = []
    met_accuracy = not outcome.unresolved(delta) and outcome.width <= accuracy * outcome.value
    if outcome.unresolved(delta):
        warnings.append(
            "the grid cannot certify this target: the discretisation error exceeds it even on the "
            "finest grid tried, so the upper bound is reported as inf."
        )
    elif outcome.width > accuracy * outcome.value and not (
            epsilon is not None and outcome.upper <= NEGLIGIBLE_DELTA):
        limit = (f"{work.limit_reason(work.WORK_LIMIT)} before a finer grid was done" if out_of_work
                 else "a finer grid did not narrow it" if stalled
                 else "the grid it needs exceeds the size limit")
        rounding, rounding_l2 = _rounding_error(outcome)
        if rounding > _ROUNDING_NOTED:
            limit += (f"; the certified rounding error of the FFT compositions, which grows with the number of "
                      f"steps, is {rounding:.2g} of the composed measure here (L1 norm; {rounding_l2:.2g} in "
                      "the L2 norm)")
        reached = outcome.width / outcome.value if outcome.value > 0.0 else math.inf
        warnings.append(
            f"the certified interval is {outcome.width:.3g} wide (relative {reached:.2g}), more than the "
            f"requested accuracy {accuracy:g} x {outcome.value:.6g}: {limit}."
        )
    elif outcome.interval_width > accuracy * outcome.value:
        reached = outcome.interval_width / outcome.value
        warnings.append(
            f"the certified interval is {outcome.interval_width:.3g} wide (relative {reached:.2g}): the grid "
            f"meets the requested accuracy {accuracy:g}, and the rest is the gap between the pair that "
            f"dominates {_scheme(phases)} (upper bound) and the pair that some neighbouring datasets "
            "attain (lower bound); the true epsilon lies between them."
        )
    result = PLDResult.bounds(
        delta=delta, epsilon=epsilon, upper=outcome.upper, lower=outcome.lower, accuracy=accuracy,
        grid_step=outcome.grid_step, grid_size=outcome.bins, binding=outcome.binding, attempts=attempts,
        phases=phases, warnings=tuple(warnings),
    )
    spared = {direction: (setup.models[direction], plan) for direction, plan in outcome.spared.items()}
    return GridAccount(result, outcome.measures, setup.roles, met_accuracy, spared)


def compose_spared(models: list[PhaseModel], plan: Plan) -> Measures:
    """The upper and lower measures of a direction `account_grid` composed upper-only
    (`GridAccount.spared`), on the same grid."""
    return compose_run(models, plan, True, Usage())


# A finer grid "narrows" the interval when its width is below this share of the last one's.
_STALL = 0.8
# The L1 rounding-error bound of a composed measure above which the warning names it.
_ROUNDING_NOTED = 1e-2


def _width(outcome: Attempt, delta: float | None) -> float:
    """The width a finer grid is to narrow (inf when the upper bound is unresolved)."""
    return math.inf if outcome.unresolved(delta) else outcome.width


def _narrower_before(before: Attempt, fresh: Attempt, delta: float | None) -> bool:
    """Whether a finer grid (`fresh`) failed to narrow the interval of the grid `before` it."""
    if not math.isfinite(_width(before, delta)):
        return False
    return _width(fresh, delta) > _STALL * _width(before, delta)


def _intersection(a: Attempt, b: Attempt) -> Attempt:
    """The grid of the smaller upper bound, with the larger of the two lower bounds: both grids'
    bounds are certified, so their intersection is."""
    top = a if a.upper <= b.upper else b
    lowers = [x.lower for x in (a, b) if x.lower is not None]
    return replace(top, lower=max(lowers) if lowers else None)


def _rounding_error(outcome: Attempt) -> tuple[float, float]:
    """The largest L1 and L2 bounds on the rounding error of a composed measure of the attempt (S5)."""
    largest, largest_l2 = 0.0, 0.0
    for measures in outcome.measures.values():
        for m in (measures.upper, measures.lower):
            if m is not None:
                largest = max(largest, *(layer.err for layer in m.layers()))
                largest_l2 = max(largest_l2, *(layer.l2 for layer in m.layers()))
    return largest, largest_l2


def _scheme(phases: Sequence[Phase]) -> str:
    """The batches whose upper and lower pairs differ, for the gap warning."""
    if any(phase.sampling == "shuffle" for phase in phases):
        return "shuffled batches"
    if any(phase.sampling == "allocation" for phase in phases):
        return "randomly allocated batches"
    return "fixed-size batches"


def first_upper(phases: tuple[Phase, ...], delta: float, accuracy: float) -> tuple[float, float]:
    """The upper bound of the first grid `account_grid` tries, and its grid step (no lower bound)."""
    setup = prepare(phases, delta, None, accuracy)
    outcome = attempt(setup, delta, None, setup.scale, INF_SHARE, setup.per_step_error(setup.reference),
                      Composition.upper_bound())
    return outcome.upper, outcome.grid_step
