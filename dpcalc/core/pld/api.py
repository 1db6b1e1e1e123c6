"""The PLD accountant's entry points for one run: a certified interval on epsilon at a target
delta (`tight_epsilon`), on delta at a target epsilon (`tight_delta`), a cheaper upper
bound alone (`upper_epsilon`) and a cheaper estimate still (`steering_epsilon`). Each runs the grid accountant under its guard and falls back to,
or is tightened by, the closed forms (S7 of docs/pld-soundness.md)."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Sequence
from typing import NamedTuple, TypeVar

from dpcalc.core import record
from dpcalc.core.phases import EPOCH_SAMPLINGS, NOTHING_SAMPLED, Phase, samples_nothing
from dpcalc.core.pld import work
from dpcalc.core.pld.accountant import account_grid, attempt, first_upper, prepare
from dpcalc.core.pld.exact import exact_laplace_run, exact_result, exact_run
from dpcalc.core.pld.fallback import closed_forms, merge, one_laplace_release, out_of_range
from dpcalc.core.pld.model import check_phases, directions_of
from dpcalc.core.pld.plan import INF_SHARE
from dpcalc.core.pld.policy import Composition
from dpcalc.core.pld.result import ACCURACY, DEFAULT_ACCURACY, PLDResult
from dpcalc.core.validation import NON_NEGATIVE, OPEN_UNIT

# Distinct calls remembered by tight_epsilon / tight_delta (results are immutable).
_CACHE_SIZE = 256

_T = TypeVar("_T")


def tight_epsilon(phases: Sequence[Phase], delta: float, *, accuracy: float = DEFAULT_ACCURACY) -> PLDResult:
    """Certified [epsilon_lower, epsilon_upper] at `delta` for the composition of `phases`.

    Cost: about 0.1 s for the design card (p = 0.004, sigma = 1.1, T = 10000) at the default
    accuracy, 0.2 to 0.25 s for T = 1e6 to 1e7 (one core); a coarser `accuracy` (say 1e-2) is
    several times cheaper, which suits searches that only need to steer. Results are memoised
    (the last _CACHE_SIZE distinct calls), so asking again for the same run is free.
    """
    OPEN_UNIT.check("delta", delta)
    ACCURACY.check("accuracy", accuracy)
    return cached(check_phases(phases), delta, None, float(accuracy))


def tight_delta(phases: Sequence[Phase], epsilon: float, *, accuracy: float = DEFAULT_ACCURACY) -> PLDResult:
    """Certified [delta_lower, delta_upper] at `epsilon` for the composition of `phases`."""
    NON_NEGATIVE.check("epsilon", epsilon)
    ACCURACY.check("accuracy", accuracy)
    return cached(check_phases(phases), None, float(epsilon), float(accuracy))


def upper_epsilon(phases: Sequence[Phase], delta: float, *, accuracy: float = DEFAULT_ACCURACY) -> tuple[float, float]:
    """A certified upper bound on epsilon at `delta`, and the grid step it was computed on.

    The upper bound on the first grid `tight_epsilon` tries at `accuracy`, without the lower bound
    and without checking the interval's width: about half the cost, for searches that steer by it.
    Its step's upper measure is built alone (`plan.upper_step_measure`: one mass per cell, the grid
    not shifted to the lower measure's pile), so it differs from `tight_epsilon`'s upper bound on
    that grid by that grid's discretisation error, either way (1e-10 to 1e-5 relative). Where the
    first grid cannot certify the target (inf), it is `tight_epsilon`'s upper bound; outside the
    grid's range, or when the grid fails, the closed forms' (grid step 0), as in `tight_epsilon`;
    for a run that is exactly mu-GDP, `tight_epsilon`'s exact upper bound (grid step 0).
    """
    return _first_grid(phases, delta, accuracy, first_upper)


class Steering(NamedTuple):
    """`steering_epsilon`'s estimate, its grid step, and the direction composed (None off the grid)."""

    epsilon: float
    grid_step: float
    direction: str | None


def steering_epsilon(phases: Sequence[Phase], delta: float, *, accuracy: float = DEFAULT_ACCURACY,
                     direction: str | None = None) -> Steering:
    """An estimate of epsilon at `delta` for searches that steer by it (not a bound), its grid step,
    and the direction composed.

    `upper_epsilon` with one direction composed: `direction`, or the one whose Chernoff estimate is
    the largest (`accountant.prepare`), which binds in the runs searched (Poisson-sampled Gaussian
    runs: the remove direction). The others are neither prepared nor checked (`upper_epsilon`
    composes each on a cheaper grid to see whether it could raise the bound): about a third less.
    Where another direction binds this lies below the run's upper bound; where the one composed
    binds it equals `upper_epsilon`. A search passes the direction the first call returned, so
    that later calls skip the others' tilts and caps too. Runs outside the grid, exact runs and a
    first grid that cannot certify the target get `upper_epsilon`'s bound (direction None).
    """
    if direction is not None and direction not in {d.name for d in directions_of(check_phases(phases)) if d.upper}:
        raise ValueError(f"direction {direction!r} does not bound this run from above")
    composed: str | None = None

    def leading(checked: tuple[Phase, ...], delta: float, accuracy: float) -> tuple[float, float]:
        nonlocal composed
        setup = prepare(checked, delta, None, accuracy, direction)
        setup = record.replace(setup, order=setup.order[:1])
        outcome = attempt(setup, delta, None, setup.scale, INF_SHARE, setup.per_step_error(setup.reference),
                          Composition.upper_bound())
        composed = setup.order[0] if math.isfinite(outcome.upper) else None  # inf: tight_epsilon answers
        return outcome.upper, outcome.grid_step

    upper, grid_step = _first_grid(phases, delta, accuracy, leading)
    return Steering(upper, grid_step, composed)


def _first_grid(phases: Sequence[Phase], delta: float, accuracy: float,
                first: Callable[[tuple[Phase, ...], float, float], tuple[float, float]]) -> tuple[float, float]:
    """`first` (the first grid's upper bound and step) for `upper_epsilon` and `steering_epsilon`,
    with the runs the grid does not compute answered as `upper_epsilon` states."""
    OPEN_UNIT.check("delta", delta)
    ACCURACY.check("accuracy", accuracy)
    checked = check_phases(phases)
    sampled = tuple(phase for phase in checked if not samples_nothing(phase))
    if not sampled:
        return 0.0, 0.0  # nothing sampled: (0, delta)-DP exactly (`nothing_sampled`)
    checked = sampled
    if exact_run(checked) or exact_laplace_run(checked):
        result = cached(checked, float(delta), None, float(accuracy))
        return result.epsilon_upper, result.grid_step
    reason = out_of_range(checked)
    if reason is None:
        outcome, reason = in_grid(lambda: first(checked, delta, accuracy))
        if outcome is not None:
            upper, grid_step = outcome
            if math.isfinite(upper):
                return upper, grid_step
            result = tight_epsilon(checked, delta, accuracy=accuracy)  # finer grids may certify it
            return result.epsilon_upper, result.grid_step
    result = closed_forms(checked, delta=delta, epsilon=None, accuracy=accuracy, reason=reason or "")
    return result.epsilon_upper, result.grid_step


def in_grid(compute: Callable[[], _T]) -> tuple[_T | None, str | None]:
    """(compute(), None) run under the grid's guard (`work.guard`), or (None, why it failed)."""
    with work.guard() as guard:
        return compute(), None
    return None, guard.failure


@functools.lru_cache(maxsize=_CACHE_SIZE)
def cached(phases: tuple[Phase, ...], delta: float | None, epsilon: float | None, accuracy: float) -> PLDResult:
    """`account`, memoised."""
    return account(phases, delta=delta, epsilon=epsilon, accuracy=accuracy)


def account(phases: tuple[Phase, ...], *, delta: float | None, epsilon: float | None,
            accuracy: float) -> PLDResult:
    """The grid accountant inside its numerical range; the closed-form bounds outside it; the
    exact mu-GDP value for runs of unsubsampled Gaussian phases (`exact`).

    Phases with p = 0 are left out (they add nothing), and a run of them alone is exactly
    (0, 0)-DP (`nothing_sampled`). An accuracy finer than the default never gives a looser
    interval than the default: where
    the finer grids fall short (their work limit, their size limit), the default's interval,
    which is just as certified, tightens either side.
    """
    sampled = tuple(phase for phase in phases if not samples_nothing(phase))
    if not sampled:
        return nothing_sampled(phases, delta=delta, epsilon=epsilon, accuracy=accuracy)
    if len(sampled) < len(phases):  # phases with p = 0 add nothing: the rest is the run
        return dataclasses.replace(cached(sampled, delta, epsilon, accuracy), phases=phases)
    result = _account_at(phases, delta=delta, epsilon=epsilon, accuracy=accuracy)
    if accuracy < DEFAULT_ACCURACY and result.warnings:
        default = cached(phases, delta, epsilon, DEFAULT_ACCURACY)
        merged = merge(result, default, "the grid of the default accuracy")
        return dataclasses.replace(merged, accuracy=accuracy)
    return result


def nothing_sampled(phases: tuple[Phase, ...], *, delta: float | None, epsilon: float | None,
                    accuracy: float) -> PLDResult:
    """The exact result of a run whose phases all have p = 0 (`phases.samples_nothing`): no
    record is ever used, so the two neighbouring output distributions are equal and the run is
    (0, 0)-DP; the certified interval is [0, 0] on epsilon (at any delta) or on delta (at any
    epsilon). The grid accountant is not entered (its pairs take log p)."""
    binding = "symmetric" if phases[0].neighbours == "replace-one" else "remove"
    return PLDResult.bounds(delta=delta, epsilon=epsilon, upper=0.0, lower=0.0, accuracy=accuracy, grid_step=0.0,
                            grid_size=0, binding=binding, attempts=0, phases=phases, warnings=(NOTHING_SAMPLED,))


def _account_at(phases: tuple[Phase, ...], *, delta: float | None, epsilon: float | None,
                accuracy: float) -> PLDResult:
    if exact_run(phases) or exact_laplace_run(phases):
        # unsubsampled Gaussian phases: exactly mu-GDP; k unsubsampled Laplace releases of one
        # scale: their exact profile; no grid (`exact`)
        return exact_result(phases, delta=delta, epsilon=epsilon, accuracy=accuracy)
    reason = out_of_range(phases)
    if reason is None:
        grid, reason = in_grid(lambda: account_grid(phases, delta=delta, epsilon=epsilon, accuracy=accuracy))
        if grid is not None:
            if not any(phase.mechanism == "laplace" for phase in phases) and (
                    not grid.result.warnings or (grid.met_accuracy and fixed_size_only(phases))):
                return grid.result
            # the grid fell short of the accuracy, or the run has Laplace phases, whose largest loss
            # is an atom: at small delta the closed forms bracket epsilon to ~1e-12 (`fallback`);
            # shuffled or allocated runs, whose closed form above (a Gaussian an epoch, mu-GDP
            # exactly) can be tighter than the grid's
            source = "the exact privacy profile of one Laplace release" if one_laplace_release(phases) else None
            return merge(grid.result, closed_forms(phases, delta=delta, epsilon=epsilon, accuracy=accuracy,
                                                   reason=""), source)
    return closed_forms(phases, delta=delta, epsilon=epsilon, accuracy=accuracy, reason=reason or "")


def fixed_size_only(phases: Sequence[Phase]) -> bool:
    """Whether the run has no shuffled or allocated phases: once the grid meets the accuracy, the
    closed forms cannot tighten it (S7 of docs/pld-soundness.md) and are not computed. Above, they
    bound the same two-part pair of fixed-size batches more loosely (mu-GDP of the mechanism
    without subsampling) or the mechanism through the RDP bound of Wang, Balle, Kasiviswanathan
    2019, Thm 27, which lay 1.3 to 70 times above the grid's upper bound (over a sweep of sampling
    rates, noise, steps and targets the closed forms tightened only grids that fell short of the
    accuracy); below, one step of the attained pair, which the grid composes."""
    return not any(phase.sampling in EPOCH_SAMPLINGS for phase in phases)
