"""The privacy profile of a run: certified bounds on delta(eps) at many epsilons at once
(`tight_profile`), for trade-off curves and profile plots."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dpcalc.core.phases import Phase
from dpcalc.core.pld import bounds, work
from dpcalc.core.pld.accountant import account_grid
from dpcalc.core.pld.api import check_phases
from dpcalc.core.pld.exact import exact_result, exact_run
from dpcalc.core.pld.fallback import closed_forms, out_of_range
from dpcalc.core.pld.result import ACCURACY, DEFAULT_ACCURACY, PrivacyProfile
from dpcalc.core.validation import NON_NEGATIVE

# The profile composes twice, with the tilts for these quantiles of the asked epsilons, and
# keeps the tighter bound at each epsilon. The error terms of S5 and S6 grow like
# e^(lam (eps_tilt - eps)) below a tilt point (where delta is larger, but not always by as
# much) and delta falls faster than them above it; one tilt in the lower and one in the upper
# part of the range keep both ends within about the accuracy asked.
_PROFILE_TILT_QUANTILES = (0.25, 0.85)


def tight_profile(phases: Sequence[Phase], epsilons: Sequence[float], *,
                  accuracy: float = DEFAULT_ACCURACY) -> PrivacyProfile:
    """Certified [delta_lower, delta_upper] at every epsilon of `epsilons`.

    Each direction is composed as `tight_delta` does, once with the tilt and grid chosen for
    the epsilon at the 0.25 quantile of the list and once for the 0.85 quantile, and the bounds
    of S1-S6 are evaluated at every epsilon from both; every one of them is sound, so the
    smaller upper and the larger lower bound are kept. Cost: about two `tight_delta` calls.
    A run of unsubsampled Gaussian phases gets its exact mu-GDP profile (`exact`).
    Outside the grid's numerical range the closed forms (`fallback.closed_forms`) are used at
    each epsilon, and where the grid falls short of the accuracy they tighten either side.
    """
    ACCURACY.check("accuracy", accuracy)
    checked = check_phases(phases)
    values = tuple(float(value) for value in epsilons)
    if not values:
        raise ValueError("give at least one epsilon")
    for value in values:
        NON_NEGATIVE.check("epsilon", value)
    finite = sorted(value for value in values if math.isfinite(value)) or [0.0]
    tilts = sorted({finite[min(len(finite) - 1, int(q * (len(finite) - 1) + 0.5))] for q in _PROFILE_TILT_QUANTILES})
    if exact_run(checked):
        # exactly mu-GDP: the closed form at every epsilon (`exact`)
        exact = [exact_result(checked, delta=None, epsilon=value, accuracy=float(accuracy)) for value in values]
        return PrivacyProfile(epsilons=values, delta_upper=tuple(item.delta_upper for item in exact),
                              delta_lower=tuple(item.delta_lower for item in exact), phases=checked, grid_step=0.0)
    reason = out_of_range(checked)
    points = np.array(values)
    upper = np.ones(len(points))
    lower = np.zeros(len(points))
    warnings: list[str] = []
    grid_step = 0.0
    done = 0
    if reason is None:
        for eps_tilt in tilts:
            with work.guard() as guard:
                grid = account_grid(checked, delta=None, epsilon=eps_tilt, accuracy=float(accuracy), full=True)
                this_upper = np.zeros(len(points))
                this_lower = np.zeros(len(points))
                for direction, measures in grid.measures.items():
                    assert measures.lower is not None
                    if grid.roles[direction].upper:
                        this_upper = np.maximum(this_upper, bounds.bound_at(measures.upper, points))
                    if grid.roles[direction].lower:
                        this_lower = np.maximum(this_lower, bounds.bound_at(measures.lower, points))
            if guard.failure is not None:
                reason = guard.failure
                continue
            upper = np.minimum(upper, this_upper)
            lower = np.maximum(lower, this_lower)
            warnings.extend(item for item in grid.result.warnings if item not in warnings)
            grid_step = grid_step or grid.result.grid_step
            done += 1
    if done < len(tilts) or warnings:
        # closed forms: the whole answer when the grid failed, a tightening when it fell short
        closed = [closed_forms(checked, delta=None, epsilon=value, accuracy=float(accuracy), reason=reason or "")
                  for value in values]
        upper = np.minimum(upper, [item.delta_upper for item in closed])
        lower = np.maximum(lower, [item.delta_lower for item in closed])
        if done == 0:
            warnings = list(closed[0].warnings)
    upper = np.minimum(upper, 1.0)
    lower = np.minimum(lower, upper)
    return PrivacyProfile(
        epsilons=values,
        delta_upper=tuple(float(x) for x in upper),
        delta_lower=tuple(float(x) for x in lower),
        phases=checked, grid_step=grid_step, warnings=tuple(warnings),
    )
