"""One phase accounted for many numbers of steps at once (`tight_epsilons_over_steps`): the step
discretised once, its compositions shared by all rows (an epochs sweep)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

from dpcalc.core import record
from dpcalc.core.phases import Phase, samples_nothing
from dpcalc.core.pld import bounds, work
from dpcalc.core.pld.accountant import prepare
from dpcalc.core.pld.api import tight_epsilon
from dpcalc.core.pld.exact import exact_laplace_run, exact_run
from dpcalc.core.pld.fallback import out_of_range
from dpcalc.core.pld.model import directions_of
from dpcalc.core.pld.plan import INF_SHARE, make_plan, step_measures
from dpcalc.core.pld.power import Powers, Usage
from dpcalc.core.pld.result import ACCURACY, DEFAULT_ACCURACY, DIRECTIONS, PLDResult
from dpcalc.core.validation import OPEN_UNIT, POSITIVE_INTEGER

# Below this many distinct step counts one call per count costs no more than sharing.
_SHARED_MIN_ROWS = 3
# The shared composition's work limit grows with the rows it serves (measured: a 60-epoch sweep
# of the MNIST run costs 5.9e7 bin operations in all, 1e6 a row, and six rows 1.7e7; a row
# accounted on its own about 1.1e7 at the design card).
_SHARED_WORK_PER_ROW = 1e7
# The shared composition's grids, this much finer than one row's: its rows are products of
# remembered compositions, each coarsened on its own, and lie nearer the accuracy than one call's
# (the 60-epoch MNIST sweep's last rows 9.6e-4 to over 1e-3 wide on grids of step m 2^e, three of
# them then accounted again one by one: 0.79 s in all; at 1.2 every row 7.9e-4 at most, 0.66 s).
_SHARED_SCALE = 1.2
# ... and its lower measure's composed grid half as fine as one call's at that scale (the lower
# measure was 80% of the sweep's work): on six sweeps (MNIST at sigma 0.8, 1.1, 2; 40, 50 and 100
# epochs) every row still met the accuracy (widest 8.4e-4), 2.63 s -> 2.14 s in all. A quarter
# (`plan.lower_coarse_share`) left 39 of the MNIST sweep's 60 rows to be accounted again. A sweep
# up to 1e4 steps or more takes the long-run share of profiles on top (`plan._PROFILE_LONG_BINS`):
# the 60-epoch MNIST sweep (to T = 14063) did 4.79e7 -> 1.82e7 bin operations, no row accounted
# again, every row narrower (widest 5.1e-4 -> 4.4e-4) and inside its interval from before the
# chain merges.
_SHARED_LOWER = 0.5


def tight_epsilons_over_steps(phase: Phase, delta: float, steps: Sequence[int], *,
                              accuracy: float = DEFAULT_ACCURACY) -> tuple[PLDResult, ...]:
    """Certified epsilon intervals of one phase run for every number of steps in `steps`.

    The same numbers `tight_epsilon` gives for each T (the same bounds S1-S7, each row checked
    against the accuracy), at a fraction of the cost of one call per T: the step is discretised
    once, its binary powers P^(2^k) are computed once, and the sorted T_1 < T_2 < ... are
    composed from remembered compositions of comparable size (`Powers.balanced`), one
    convolution per row when the T are evenly spaced. The tilt and windows are those of
    the largest T; every product of discretised dominating pairs is a dominating pair (S1), so
    the order of the convolutions changes only the width of the interval, never its
    soundness. A row whose interval is wider than `accuracy` asks, or that the shared grid
    cannot certify, is recomputed on its own by `tight_epsilon`. Results are in input order.
    """
    OPEN_UNIT.check("delta", delta)
    ACCURACY.check("accuracy", accuracy)
    if not isinstance(phase, Phase):
        raise TypeError(f"phase must be a Phase, got {type(phase).__name__}")
    counts = tuple(steps)
    for count in counts:
        POSITIVE_INTEGER.check("steps", count)
    distinct = sorted(set(counts))
    shared: dict[int, PLDResult] = {}
    if len(distinct) >= _SHARED_MIN_ROWS and not samples_nothing(phase):  # p = 0: exact, one by one
        shared = _shared_steps(phase, float(delta), distinct, float(accuracy))
    return tuple(
        shared.get(count) or tight_epsilon([dataclasses.replace(phase, steps=count)], delta, accuracy=accuracy)
        for count in counts
    )


@dataclass(frozen=True)
class Row:
    """The bounds on epsilon of one number of steps, as the shared composition finds them."""

    upper: float = 0.0
    lower: float = 0.0
    binding: str = DIRECTIONS[0]
    grid_step: float = 0.0

    def result(self, phase: Phase, count: int, delta: float, accuracy: float, grid_size: int) -> PLDResult:
        """The row as the result `tight_epsilon` would give for `count` steps of `phase`."""
        return PLDResult.bounds(
            delta=delta, epsilon=None, upper=self.upper, lower=min(self.lower, self.upper), accuracy=accuracy,
            grid_step=self.grid_step, grid_size=grid_size, binding=self.binding, attempts=1,
            phases=(dataclasses.replace(phase, steps=count),),
        )

    def certified(self, accuracy: float) -> bool:
        """Finite, and no wider than `accuracy` asks."""
        width = self.upper - min(self.lower, self.upper)
        return math.isfinite(self.upper) and not (self.upper > 0.0 and width > accuracy * self.upper)


def _shared_steps(phase: Phase, delta: float, distinct: list[int], accuracy: float) -> dict[int, PLDResult]:
    """The rows of `tight_epsilons_over_steps` that one shared composition certifies."""
    top = dataclasses.replace(phase, steps=distinct[-1])
    if exact_run((top,)) or exact_laplace_run((top,)):
        # exactly mu-GDP, or few Laplace releases: each row's exact form (`exact`), as `tight_epsilon` gives it
        return {}
    if out_of_range((top,)) is not None or not all(d.upper and d.lower for d in directions_of((top,))):
        return {}  # (fixed-size batches bound each side by a pair of its own: one call per row)
    rows = {count: Row() for count in distinct}
    usage = Usage()
    with work.guard(work.WORK_LIMIT + _SHARED_WORK_PER_ROW * len(distinct)) as guard:
        setup = prepare((top,), delta, None, accuracy)
        for position, direction in enumerate(setup.order):
            model = setup.models[direction][0]
            plan = make_plan(*setup.tilts[direction], delta, setup.scale * _SHARED_SCALE, INF_SHARE, setup.events,
                             setup.per_step_error(setup.reference))
            plan = record.replace(plan, lower_coarse_bins=plan.lower_coarse_bins * _SHARED_LOWER)
            upper, lower = step_measures(model, plan)
            uppers = Powers(model, upper, plan, distinct[-1], usage)
            for count in distinct:
                measure = uppers.balanced(count)
                value = bounds.epsilon_bound(measure, delta)
                if value > rows[count].upper:
                    rows[count] = dataclasses.replace(rows[count], upper=value, binding=direction,
                                                      grid_step=measure.bulk.h)
            if position > 0 and all(row.binding != direction for row in rows.values()):
                # the first direction's lower bound is a lower bound of the maximum (as in `attempt`)
                continue
            lowers = Powers(model, lower, plan, distinct[-1], usage)
            for count in distinct:
                value = bounds.lower_epsilon_within(lowers.balanced(count), delta, rows[count].upper, accuracy)
                rows[count] = dataclasses.replace(rows[count], lower=max(rows[count].lower, value))
    if guard.failure is not None:
        return {}  # the work limit included: every row is then accounted on its own
    return {count: row.result(phase, count, delta, accuracy, usage.bins)
            for count, row in rows.items() if row.certified(accuracy)}
