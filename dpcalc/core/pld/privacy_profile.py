"""The privacy profile of a run: certified bounds on delta(eps) at many epsilons at once
(`tight_profile`), for trade-off curves and profile plots, and an evaluator that keeps the
composed measures to read the bounds at any further epsilon (`ProfileBounds`), for attack risk."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dpcalc.core.arrays import sorted_distinct
from dpcalc.core.phases import NOTHING_SAMPLED, Phase, samples_nothing
from dpcalc.core.pld import bounds, work
from dpcalc.core.pld.accountant import account_grid, compose_spared
from dpcalc.core.pld.exact import exact_result, exact_run
from dpcalc.core.pld.fallback import closed_forms, out_of_range
from dpcalc.core.pld.model import PhaseModel, check_phases, directions_of
from dpcalc.core.pld.plan import Plan
from dpcalc.core.pld.policy import Composition
from dpcalc.core.pld.result import ACCURACY, DEFAULT_ACCURACY, DIRECTIONS, PLDResult, PrivacyProfile
from dpcalc.core.validation import NON_NEGATIVE, OPEN_UNIT

# The profile composes twice, with the tilts for these quantiles of the asked epsilons, and
# keeps the tighter bound at each epsilon. The error terms of S5 and S6 grow like
# e^(lam (eps_tilt - eps)) below a tilt point (where delta is larger, but not always by as
# much) and delta falls faster than them above it; one tilt in the lower and one in the upper
# part of the range keep both ends within about the accuracy asked.
_PROFILE_TILT_QUANTILES = (0.25, 0.85)

# A composition's target: (delta, None) composes as tight_epsilon(delta) does, (None, eps) as
# tight_delta(eps) does. Each gives certified bounds at every epsilon, most accurate near its own.
Target = tuple[float | None, float | None]

# Beyond this many epsilons the closed forms are evaluated at this many anchors only (`_closed_bounds`).
_CLOSED_ANCHORS = 256


class ProfileBounds:
    """Certified [delta_lower, delta_upper] of a run at any epsilon >= 0, read off composed measures.

    The run is composed once per target (every direction in full, under the grid's guard), and
    the measures are kept: `at` evaluates the bounds of S5-S6 (docs/pld-soundness.md) at any
    epsilons without composing again. Every composition gives sound bounds at every epsilon,
    so the smallest upper and the largest lower bound over the targets are kept. The upper
    bound is the largest over the directions that bound the run from above, the lower bound the
    largest over those some neighbouring datasets attain (`model.Direction`): for add/remove
    neighbours, delta(eps) = max(delta_remove(eps), delta_add(eps)).

    Outside the grid's numerical range, when every composition failed, or where a grid fell
    short of the accuracy, the closed forms (`fallback.closed_forms`, S7) give or tighten the
    bounds at each epsilon (one closed-form evaluation a point: slower, used only then).

    With `spare_lower`, a direction after the first is composed with its upper measure alone
    unless its lower one could raise the lower bound at the target (`Composition.sparing_lower`):
    about a third of its cost where the first direction binds. The lower bounds are then those
    of the directions composed with a lower measure, which are lower bounds of the run still;
    `complete` composes the lower measures left out. With `at_zero`, a target at eps = 0 gives
    only the first direction its lower measure (`add`).
    """

    def __init__(self, phases: Sequence[Phase], targets: Sequence[Target], *,
                 accuracy: float = DEFAULT_ACCURACY, spare_lower: bool = False, at_zero: bool = False) -> None:
        ACCURACY.check("accuracy", accuracy)
        self.spare_lower = spare_lower  # read by `add`: a caller may change it between compositions
        self.phases = check_phases(phases)
        self.accuracy = float(accuracy)
        # phases with p = 0 add nothing; a run of them only is (0, 0)-DP exactly (api.nothing_sampled)
        self._sampled = tuple(phase for phase in self.phases if not samples_nothing(phase))
        if not targets:
            raise ValueError("give at least one target")
        # per composition: [(profile, bounds from above, bounds from below)]
        self._parts: list[list[tuple[bounds.Profile, bool, bool]]] = []
        # per composition: the directions composed upper-only, with their models and plans
        self._spared: list[dict[str, tuple[list[PhaseModel], Plan]]] = []
        self.warnings: list[str] = []
        self.grid_step = 0.0
        self.results: list[PLDResult] = []  # each composition's own result at its target
        self._failures = 0
        # a run of unsubsampled Gaussian phases is exactly mu-GDP: its closed form at every eps (`exact`)
        self._exact = bool(self._sampled) and exact_run(self._sampled)
        self._out_of_range = out_of_range(self._sampled) if self._sampled else None
        if not self._sampled:
            self.warnings.append(NOTHING_SAMPLED)
        self._reason = self._out_of_range or ""
        for target in targets:
            self.add(target, at_zero=at_zero)

    def add(self, target: Target, accuracy: float | None = None, *, at_zero: bool = False) -> None:
        """Compose the run once more, for `target` (at `accuracy`, by default the evaluator's);
        its bounds join the others' at every epsilon. With `at_zero`, a target of delta at eps = 0
        of a run composed in a remove and an add direction, which bound the same delta(0)
        (docs/pld-soundness.md, "Both orders at eps = 0"), gives the first direction alone its
        lower measure, whatever `spare_lower` says (`complete` adds the other's)."""
        delta, epsilon = target
        width = self.accuracy if accuracy is None else float(ACCURACY.check("accuracy", accuracy))
        if delta is not None:
            OPEN_UNIT.check("delta", delta)
        else:
            assert epsilon is not None, "a target names delta or epsilon"
            NON_NEGATIVE.check("epsilon", epsilon)
        if not self._sampled or self._exact:
            return  # delta(eps) = 0 at every eps, or the closed form: nothing to compose
        if self._out_of_range is not None:
            self._failures += 1
            return
        if at_zero and epsilon == 0.0 and _reverses(self._sampled):
            composition = Composition.first_lower()
        else:
            composition = Composition.sparing_lower() if self.spare_lower else Composition.in_full()
        with work.guard() as guard:
            grid = account_grid(self._sampled, delta=delta, epsilon=epsilon, accuracy=width, composition=composition)
            parts = []
            for direction, measures in grid.measures.items():
                role = grid.roles[direction]
                if role.upper:
                    parts.append((bounds.Profile(measures.upper), True, False))
                if role.lower and measures.lower is not None:
                    parts.append((bounds.Profile(measures.lower), False, True))
        if guard.failure is not None:
            self._failures += 1
            self._reason = self._reason or guard.failure
            return
        self._parts.append(parts)
        self._spared.append(dict(grid.spared))
        self.warnings.extend(item for item in grid.result.warnings if item not in self.warnings)
        self.grid_step = self.grid_step or grid.result.grid_step
        self.results.append(grid.result)

    @property
    def spared(self) -> bool:
        """Whether some direction was composed without its lower measure (`complete` adds it)."""
        return any(self._spared)

    def complete(self) -> None:
        """Compose the lower measures `spare_lower` left out, each on the grid of its composition
        (the upper measures already composed stay: the upper bounds do not change). Where the
        grid fails, the lower bounds stay those of the other directions (still lower bounds)."""
        for parts, spared in zip(self._parts, self._spared, strict=True):
            for models, plan in spared.values():
                with work.guard():
                    measures = compose_spared(models, plan)
                    if measures.lower is not None:
                        parts.append((bounds.Profile(measures.lower), False, True))
            spared.clear()

    @property
    def _closed(self) -> bool:
        """The closed forms take part: a composition failed, or a grid fell short of the accuracy."""
        return self._failures > 0 or bool(self.warnings)

    @property
    def grid_failed(self) -> bool:
        """No composition succeeded: every bound comes from the closed forms."""
        return not self._parts

    def epsilon_at(self, delta: float) -> tuple[float, float]:
        """Certified (epsilon_upper, epsilon_lower) at `delta`, read off the measures: the smallest
        eps found whose delta_upper(eps) meets delta, and the largest whose delta_lower(eps)
        exceeds it (each a point checked; `truncated_profile.truncated_epsilon` with no cost). As tight
        as the compositions are near that delta: a caller checks the width."""
        from dpcalc.core.pld.truncated_profile import truncated_epsilon

        OPEN_UNIT.check("delta", delta)
        return truncated_epsilon(self, delta, 0.0)

    def at(self, epsilons: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(delta_upper, delta_lower) at every epsilon (each >= 0)."""
        points = np.asarray(epsilons, dtype=float)
        if np.any(np.isnan(points)) or np.any(points < 0.0):
            raise ValueError("epsilons must be >= 0")
        if not self._sampled:
            return np.zeros(len(points)), np.zeros(len(points))
        if self._exact:
            exact = [exact_result(self._sampled, delta=None, epsilon=float(value), accuracy=self.accuracy)
                     for value in points]
            return np.array([item.delta_upper for item in exact]), np.array([item.delta_lower for item in exact])
        upper = np.ones(len(points))
        lower = np.zeros(len(points))
        for parts in self._parts:
            this_upper = np.zeros(len(points))
            this_lower = np.zeros(len(points))
            for profile, from_above, from_below in parts:
                values = profile.at(points)
                if from_above:
                    this_upper = np.maximum(this_upper, values)
                if from_below:
                    this_lower = np.maximum(this_lower, values)
            upper = np.minimum(upper, this_upper)
            lower = np.maximum(lower, this_lower)
        if self._closed:
            # closed forms: the whole answer when the grid failed, a tightening when it fell short
            closed_upper, closed_lower = self._closed_bounds(points)
            upper = np.minimum(upper, closed_upper)
            lower = np.maximum(lower, closed_lower)
        upper = np.minimum(upper, 1.0)
        return upper, np.minimum(lower, upper)


    def _closed_bounds(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The closed forms' (upper, lower) at `points`: evaluated at each point when there are at
        most _CLOSED_ANCHORS, else at _CLOSED_ANCHORS anchors spread over them and carried to
        the rest by monotonicity (delta falls in eps: the upper bound at an anchor below a point,
        and the lower bound at an anchor above it, hold there too)."""
        anchors = points
        if len(points) > _CLOSED_ANCHORS:
            anchors = sorted_distinct(np.quantile(points, np.linspace(0.0, 1.0, _CLOSED_ANCHORS), method="nearest"))
        closed = [closed_forms(self._sampled, delta=None, epsilon=float(value), accuracy=self.accuracy,
                               reason=self._reason) for value in anchors]
        if self.grid_failed and closed:
            self.warnings = [item for item in closed[0].warnings if item not in self.warnings] + self.warnings
        anchor_upper = np.array([item.delta_upper for item in closed])
        anchor_lower = np.array([item.delta_lower for item in closed])
        below = np.searchsorted(anchors, points, side="right") - 1  # the anchor at or below each point
        above = np.searchsorted(anchors, points, side="left")  # the anchor at or above it
        upper = np.where(below >= 0, anchor_upper[np.maximum(below, 0)], 1.0)
        lower = np.where(above < len(anchors), anchor_lower[np.minimum(above, len(anchors) - 1)], 0.0)
        return upper, lower


def _reverses(phases: Sequence[Phase]) -> bool:
    """Whether the run is composed in a remove and an add direction that both bound it from above
    (`model.directions_of`): the two orders of the same neighbouring datasets, whose total
    variation, delta(0), is the same."""
    roles = directions_of(phases) if phases else ()
    return len(roles) == 2 and all(role.upper for role in roles) and {role.name for role in roles} == set(DIRECTIONS)


def tight_profile(phases: Sequence[Phase], epsilons: Sequence[float], *,
                  accuracy: float = DEFAULT_ACCURACY) -> PrivacyProfile:
    """Certified [delta_lower, delta_upper] at every epsilon of `epsilons`.

    Each direction is composed as `tight_delta` does, once with the tilt and grid chosen for
    the epsilon at the 0.25 quantile of the list and once for the 0.85 quantile, and the bounds
    of S1-S6 are evaluated at every epsilon from both (`ProfileBounds`); every one of them is
    sound, so the smaller upper and the larger lower bound are kept. Cost: about two
    `tight_delta` calls. A run of unsubsampled Gaussian phases gets its exact mu-GDP profile
    (`exact`). Outside the grid's numerical range the closed forms (`fallback.closed_forms`)
    are used at each epsilon, and where the grid falls short of the accuracy they tighten
    either side.
    """
    ACCURACY.check("accuracy", accuracy)
    values = tuple(float(value) for value in epsilons)
    if not values:
        raise ValueError("give at least one epsilon")
    for value in values:
        NON_NEGATIVE.check("epsilon", value)
    finite = sorted(value for value in values if math.isfinite(value)) or [0.0]
    tilts = sorted({finite[min(len(finite) - 1, int(q * (len(finite) - 1) + 0.5))] for q in _PROFILE_TILT_QUANTILES})
    evaluator = ProfileBounds(phases, [(None, tilt) for tilt in tilts], accuracy=accuracy)
    upper, lower = evaluator.at(values)
    return PrivacyProfile(
        epsilons=values,
        delta_upper=tuple(float(x) for x in upper),
        delta_lower=tuple(float(x) for x in lower),
        phases=evaluator.phases, grid_step=evaluator.grid_step, warnings=tuple(evaluator.warnings),
    )
