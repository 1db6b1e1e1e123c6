"""The largest number of steps within a budget (`largest_steps`): one shared composition searched
by a greedy binary descent, or a bisection over `tight_epsilon` calls when it cannot finish."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

from dpcalc.core.phases import Phase, samples_nothing
from dpcalc.core.pld import bounds, work
from dpcalc.core.pld.accountant import MAX_ATTEMPTS, MAX_BINS, Setup, prepare
from dpcalc.core.pld.api import tight_epsilon
from dpcalc.core.pld.exact import exact_run
from dpcalc.core.pld.fallback import out_of_range
from dpcalc.core.pld.layers import Layered
from dpcalc.core.pld.model import PhaseModel, directions_of
from dpcalc.core.pld.over_steps import Row
from dpcalc.core.pld.plan import INF_SHARE, make_plan, step_measures
from dpcalc.core.pld.power import Powers, Usage
from dpcalc.core.pld.result import ACCURACY, DEFAULT_ACCURACY, DIRECTIONS, PLDResult
from dpcalc.core.validation import NON_NEGATIVE, OPEN_UNIT, POSITIVE_INTEGER

# results hardly depend on it (1.05 to 2 change epsilon by ~1e-7 relative on the design card,
# by ~1e-5 at p = 1e-4, T = 3e6). When the answer turns out larger, the plan is made again
# for _LARGEST_REPLAN times what is needed, at most _LARGEST_PLANS times in all.
_LARGEST_HEADROOM = 1.5
_LARGEST_REPLAN = 2.0
_LARGEST_PLANS = 3
# After the descent, counts one above the answer are tried one by one (the bounds of the
# shared composition are monotone in T only up to their jitter, ~1e-8 relative); more than
# this many is a contradiction, and the shared answer is given up.
_LARGEST_CREEP = 16


# neighbours(t) = (largest admissible count <= t, smallest admissible count > t or None)
Neighbours = Callable[[int], tuple[int, int | None]]
# (T, result at T or None when T = 0, result at the witness or None)
Answer = tuple[int, PLDResult | None, PLDResult | None]


def largest_steps(phase: Phase, delta: float, target_epsilon: float, *, accuracy: float = DEFAULT_ACCURACY,
                  limit: int = 10**9, estimate: float | None = None,
                  neighbours: Neighbours | None = None, fallback: bool = True) -> Answer | None:
    """The largest number of steps T <= `limit` of one phase whose certified epsilon_upper at
    `delta` is at most `target_epsilon`, with the certified results at T and at T + 1.

    Returns (T, result at T, result at T + 1): T = 0 (result None) when even one step exceeds
    the target, and the result at T + 1 is None when T = `limit`. The result at T has
    epsilon_upper <= target_epsilon (a certified upper bound at the full `accuracy`: sound, S1-S7)
    and the one at T + 1 exceeds it, both with intervals no wider than `accuracy` asks. These
    are the bounds of one composition shared by all candidate T, not of `tight_epsilon` at T,
    which composes on a grid of its own: the two certified intervals overlap, and their upper
    bounds may differ by up to the width of either (~1e-4 relative at the default accuracy).

    `neighbours`, when given, restricts the answer to admissible step counts (e.g. whole
    epochs): neighbours(t) = (a, b) with a the largest admissible count <= t (0 if none) and b
    the smallest admissible count > t (None if none is <= limit); the answer is then a, and the
    witness b. `estimate` (of the answer, e.g. a central-limit model's) chooses the plan; by
    default the normal approximation of the privacy loss gives it.

    The search (greedy binary descent on one composition): the step is discretised once (the
    plan of `accountant.prepare` for 1.5 times the estimate), its powers P^(2^k) are squared until the
    upper bound exceeds the target (or 2^k passes the limit), and then for k from high to low
    the count + 2^k is kept when its upper bound meets the target. Each candidate is composed
    from the shared powers the lowest first, as `Powers.compose` does (a running product
    current * P^(2^k) would coarsen every small factor to the top grid on its own and lose
    ~1e-4 relative in epsilon); the upper measures are small (~600 bins on the design card),
    so these ~log2(T)^2 / 2 products cost a few ms. The lower measures (32 times finer), and
    the other direction (a rough upper bound first, as in `tight_epsilon`), are composed for
    the answer and its witness alone. A grid that falls short of the accuracy is refined as
    `tight_epsilon` refines it. Every product of discretised dominating pairs is a dominating
    pair (S1), so the order of the convolutions changes the width of an interval, never its
    soundness. Cost: 1.0-1.3 `tight_epsilon` calls (design card: 0.10 s against 0.09 s).

    A phase without subsampling is exactly mu-GDP: the bisection over `tight_epsilon`, which
    gives its closed form (`exact`), answers directly, with or without `fallback`.

    When the shared composition cannot finish (out of the grid's range, a floating-point
    exception, its work limit) or certify (an interval wider than `accuracy`, or bounds that
    contradict the descent), the answer comes from a bisection over `tight_epsilon` calls
    (which relies on its epsilon growing with T), or, with fallback=False, None is returned.
    """
    OPEN_UNIT.check("delta", delta)
    ACCURACY.check("accuracy", accuracy)
    NON_NEGATIVE.check("target_epsilon", target_epsilon)
    POSITIVE_INTEGER.check("limit", limit)
    if not isinstance(phase, Phase):
        raise TypeError(f"phase must be a Phase, got {type(phase).__name__}")
    if neighbours is None:
        neighbours = _next_count(limit)
    if samples_nothing(phase):  # p = 0: epsilon 0 at every T (api.nothing_sampled), the largest admissible T
        count = neighbours(limit)[0]
        at = tight_epsilon([dataclasses.replace(phase, steps=count)], delta, accuracy=accuracy) if count else None
        return count, at, None
    if exact_run((phase,)):
        # exactly mu-GDP: tight_epsilon's closed form at each count, no composition to share
        return _largest_by_bisection(phase, float(delta), float(target_epsilon), float(accuracy), int(limit),
                                     neighbours)
    found = _largest_shared(phase, float(delta), float(target_epsilon), float(accuracy), int(limit),
                            estimate, neighbours)
    if found is not None or not fallback:
        return found
    return _largest_by_bisection(phase, float(delta), float(target_epsilon), float(accuracy), int(limit),
                                 neighbours)


def _next_count(limit: int) -> Neighbours:
    return lambda count: (count, count + 1 if count < limit else None)


def _gaussian_estimate(model: PhaseModel, delta: float, target: float) -> float:
    """T where mu-GDP with mu^2 = T Var(L) (the normal approximation of the loss) meets target."""
    from dpcalc.core import gdp
    from dpcalc.core.special import find_root

    if target <= 0.0 or model.variance <= 0.0:
        return 1.0

    def excess(log_mu: float) -> float:
        return gdp.epsilon_for_delta(delta, math.exp(log_mu)) - target

    low, high = -20.0, 5.0
    if excess(low) >= 0.0:
        return 1.0
    if excess(high) <= 0.0:
        return math.inf
    mu = math.exp(find_root(excess, low, high, rtol=1e-6))
    return mu * mu / model.variance



@dataclass(frozen=True)
class _Done:
    """The descent's answer (see `largest_steps`)."""

    answer: Answer


@dataclass(frozen=True)
class _Replan:
    """The plan was made for fewer steps than `count`, which the answer may need."""

    count: int


@dataclass(frozen=True)
class _Refine:
    """An interval is `ratio` times wider than the accuracy allows: a finer grid is needed."""

    ratio: float
    reference: float  # the upper bound at the answer, the reference of the next grid's step
    bins: int
    capped: bool


def _largest_shared(phase: Phase, delta: float, target: float, accuracy: float, limit: int,
                    estimate: float | None, neighbours: Neighbours) -> Answer | None:
    """`largest_steps` by one shared composition; None when it cannot finish or certify."""
    one = dataclasses.replace(phase, steps=1)
    if out_of_range((one,)) is not None or not all(d.upper and d.lower for d in directions_of((one,))):
        return None  # (fixed-size batches bound each side by a pair of its own: bisection)
    with work.guard():
        if estimate is None or not estimate > 0.0:
            estimate = _gaussian_estimate(PhaseModel(one, DIRECTIONS[0]), delta, target)
        top = min(float(limit) + 1.0, max(2.0, _LARGEST_HEADROOM * estimate))
        plans = refinements = 0
        setup: Setup | None = None
        while True:
            if setup is None:
                plans += 1
                top_steps = int(max(2, math.ceil(top)))
                if plans > _LARGEST_PLANS or out_of_range((dataclasses.replace(phase, steps=top_steps),)):
                    return None
                setup = prepare((dataclasses.replace(phase, steps=top_steps),), delta, None, accuracy)
                scale, reference = setup.scale, setup.reference
            outcome = _descend(setup, phase, delta, target, accuracy, limit, top_steps, neighbours,
                               scale, setup.per_step_error(reference))
            if outcome is None:
                return None
            if isinstance(outcome, _Done):
                return outcome.answer
            if isinstance(outcome, _Replan):  # the plan was made for too few steps
                top, setup = _LARGEST_REPLAN * outcome.count, None
                continue
            # an interval wider than the accuracy: a finer grid, as `accountant.account_grid` does
            refinements += 1
            reference = outcome.reference
            factor = 2.0 if outcome.ratio < 3.5 else 4.0
            if refinements >= MAX_ATTEMPTS or outcome.capped or outcome.bins * factor > MAX_BINS:
                return None
            scale *= factor
    return None  # the guard caught a failure (the work limit included)


def _descend(setup: Setup, phase: Phase, delta: float, target: float, accuracy: float, limit: int, top: int,
             neighbours: Neighbours, scale: float, min_step: float) -> _Done | _Replan | _Refine | None:
    """One composition of `_largest_shared` with the plan made for `top` steps, on the grid of
    `scale`; None when the bounds contradict the descent."""
    first = setup.order[0]
    model = setup.models[first][0]
    plan = make_plan(*setup.tilts[first], delta, scale, INF_SHARE, setup.events, min_step)
    upper_base, lower_base = step_measures(model, plan)
    usage = Usage()
    powers = Powers(model, upper_base, plan, top, usage)
    bound = min(limit, top)
    uppers: dict[int, tuple[Layered, float]] = {}  # count -> (P^count, its epsilon_upper)

    def upper(count: int) -> float:
        if count not in uppers:
            m = powers.compose(count)
            uppers[count] = (m, bounds.epsilon_bound(m, delta))
        return uppers[count][1]

    count = 0
    if upper(1) <= target:
        level = 0
        while (2 << level) <= bound and upper(2 << level) <= target:
            level += 1
        count = 1 << level
        for j in range(level - 1, -1, -1):
            if count + (1 << j) <= bound and upper(count + (1 << j)) <= target:
                count += 1 << j
        # the bounds need not be exactly monotone in T: the next counts are checked one by one
        for _ in range(_LARGEST_CREEP):
            if count >= bound or upper(count + 1) > target:
                break
            count += 1
        else:
            return None
        if count == bound and bound < limit:
            return _Replan(2 * top)  # the answer may lie beyond the plan
    answer, witness = neighbours(count)
    if witness is not None and witness > limit:
        witness = None
    if (witness is not None and witness > top) or answer > top:
        return _Replan(max(answer, witness or 0))
    counts = [c for c in (answer, witness) if c is not None and c > 0]
    if not counts:
        return None
    rows = {c: Row(upper=upper(c), binding=first, grid_step=uppers[c][0].bulk.h) for c in counts}
    # lower bounds of the binding direction, searched within the window the accuracy allows
    for c, m in Powers(model, lower_base, plan, top, usage).at(counts):
        rows[c] = dataclasses.replace(rows[c], lower=bounds.lower_epsilon_within(m, delta, rows[c].upper, accuracy))
    # the other direction: a rough upper bound first; composed in full only when it may bind
    for other in setup.order[1:]:
        other_model = setup.models[other][0]
        rough_plan = make_plan(*setup.tilts[other], delta, scale * 0.5, INF_SHARE, setup.events, min_step)
        rough_upper, _ = step_measures(other_model, rough_plan)
        rough = Powers(other_model, rough_upper, rough_plan, top, usage)
        if all(bounds.epsilon_bound(m, delta) <= rows[c].upper for c, m in rough.at(counts)):
            continue
        full_plan = make_plan(*setup.tilts[other], delta, scale, INF_SHARE, setup.events, min_step)
        other_upper, other_lower = step_measures(other_model, full_plan)
        for c, m in Powers(other_model, other_upper, full_plan, top, usage).at(counts):
            value = bounds.epsilon_bound(m, delta)
            if value > rows[c].upper:
                rows[c] = dataclasses.replace(rows[c], upper=value, binding=other, grid_step=m.bulk.h)
        for c, m in Powers(other_model, other_lower, full_plan, top, usage).at(counts):
            value = bounds.lower_epsilon_within(m, delta, rows[c].upper, accuracy)
            rows[c] = dataclasses.replace(rows[c], lower=max(rows[c].lower, value))
    if not all(math.isfinite(row.upper) for row in rows.values()):
        return None
    widest = max((row.upper - min(row.lower, row.upper)) / (accuracy * row.upper) if row.upper > 0.0 else 0.0
                 for row in rows.values())
    if widest > 1.0:
        return _Refine(widest, rows[counts[0]].upper, usage.bins, usage.capped)
    results = {c: row.result(phase, c, delta, accuracy, usage.bins) for c, row in rows.items()}
    at_answer = results.get(answer) if answer > 0 else None
    at_witness = results.get(witness) if witness is not None else None
    # the descent's claims, checked on the final bounds: the answer meets the target, its
    # neighbour does not (otherwise the composition contradicts itself: let the caller decide)
    if at_answer is not None and not at_answer.epsilon_upper <= target:
        return None
    if at_witness is not None and not at_witness.epsilon_upper > target:
        return None
    return _Done((answer, at_answer, at_witness))


def _largest_by_bisection(phase: Phase, delta: float, target: float, accuracy: float, limit: int,
                          neighbours: Neighbours) -> Answer:
    """`largest_steps` by `tight_epsilon` calls: doubling, then bisection (epsilon grows with T)."""

    def at(count: int) -> PLDResult:
        return tight_epsilon([dataclasses.replace(phase, steps=count)], delta, accuracy=accuracy)

    if at(1).epsilon_upper > target:
        good = 0
    else:
        good, bad = 1, None
        while bad is None:
            trial = min(2 * good, limit)
            if trial == good:
                break
            if at(trial).epsilon_upper <= target:
                good = trial
            else:
                bad = trial
        while bad is not None and bad - good > 1:
            middle = (good + bad) // 2
            if at(middle).epsilon_upper <= target:
                good = middle
            else:
                bad = middle
    answer, witness = neighbours(good)
    if witness is not None and witness > limit:
        witness = None
    return answer, (at(answer) if answer > 0 else None), (at(witness) if witness is not None else None)
