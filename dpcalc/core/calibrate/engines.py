"""The accountant a calibration searches with, at its delta: each run's figures, and the PLD extras.

`Engine` holds one accountant of dpcalc.core.accountants at the calibration's delta and
remembers what it said about each run (`Accounted`), so that the answer's figures are those of
the evaluation that found it. The RDP accountant computes the per-step RDP curve of each
(p, sigma) once and scales it by T (Mironov 2017, Prop. 1): calibrating T or epochs computes one
curve. `PLDEngine` adds what the PLD search uses beyond the epsilon: the upper bound alone at
coarser accuracies, of the binding direction only, to steer (`steer`), a prediction of the full-accuracy level (`level`), and
one composition shared by all T (`largest_steps`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from dpcalc.core.accountants import Accountant, Accounted, PLDAccountant, accountant
from dpcalc.core.phases import Phase

if TYPE_CHECKING:
    from collections.abc import Sequence

    from dpcalc.core.pld import PLDResult
    from dpcalc.core.pld.truncation import Truncation

# Steering evaluations of the PLD accountant: the upper bound alone at accuracy 1.6e-2 (a grid
# four times coarser than the default's), its leading direction only (`pld.api.steering_epsilon`),
# costs a sixth to a fifth of a full evaluation at the default 1e-3 (design card: 20 ms against
# 100 ms), and its slope
# d log epsilon / d log sigma matches the default's to 0.4-0.6% (measured on the design card
# and at p = 0.004, T = 1e4, target 1), far better than the model's 5-30%. How many the search
# makes: see search.STEERING_MIN.
STEERING_ACCURACY = 1.6e-2

# The level of the default accuracy's upper bound, predicted before it is computed: at the
# last steering point the accountant also runs at LEVEL_ACCURACY (a grid twice as coarse as
# the default's; the upper bound alone, a third of the cost). Both bounds err by O(h^2) in the
# grid step h (see dpcalc.core.pld), so from upper bounds U(h) and U(2h) the one on the default
# grid h/2 is about U(h) - (U(2h) - U(h)) / 4 (Richardson). Measured on 20 runs (p 1e-3..0.1,
# T 1e2..1e5, target 0.3..8): within 1.1e-4 of the default's epsilon (relative), typically
# 3e-5, against 2e-4..8e-4 for U(h) itself. It only steers: the answer is always evaluated at
# full accuracy.
LEVEL_ACCURACY = 4e-3

# pld.largest_steps' `neighbours`: the admissible step counts around t (see there).
Neighbours = Callable[[int], tuple[int, int | None]]


class Engine:
    """One accountant at the calibration's delta; each run (one Gaussian phase) accounted once."""

    def __init__(self, accountant: Accountant, delta: float) -> None:
        self.accountant = accountant
        self.name = accountant.name
        self.delta = delta
        self._accounted: dict[Phase, Accounted] = {}

    def account(self, run: Phase) -> Accounted:
        """The accountant's figures at `run`: epsilon, its lower bound (pld) and warnings."""
        accounted = self._accounted.get(run)
        if accounted is None:
            accounted = self._accounted[run] = self.accountant.epsilon([run], self.delta)
        return accounted

    def epsilon(self, run: Phase) -> float:
        """The accountant's epsilon at `run` (see `account`; docs/mathematics.md §1-§3 for the accountants)."""
        return self.account(run).epsilon


class PLDEngine(Engine):
    """The certified PLD accountant at its default accuracy (the number `dpcalc pld` prints),
    with the cheaper bounds that steer its search and the shared composition over T."""

    def __init__(self, delta: float) -> None:
        super().__init__(PLDAccountant(), delta)
        self._steering_step: float | None = None
        self._direction: str | None = None  # the direction the steering bounds compose

    def _coarse(self, run: Phase, accuracy: float) -> tuple[float, float]:
        """The upper bound of the leading direction alone (`pld.api.steering_epsilon`: for the runs
        searched, `pld.upper_epsilon` for a third less) at a coarser accuracy, and its grid step.
        The direction the first call composes is composed by the later ones (the same run but
        for the quantity searched)."""
        from dpcalc.core.pld.api import steering_epsilon

        found = steering_epsilon([run], self.delta, accuracy=accuracy, direction=self._direction)
        if found.direction is not None:
            self._direction = found.direction
        return found.epsilon, found.grid_step

    def steer(self, run: Phase) -> float:
        """The upper bound at the coarser steering accuracy (a different, cheaper function)."""
        upper, self._steering_step = self._coarse(run, STEERING_ACCURACY)
        return upper

    def level(self, run: Phase, steering_epsilon: float) -> float | None:
        """A prediction of `epsilon(run)` (see LEVEL_ACCURACY), or None; one call at LEVEL_ACCURACY.

        `steering_epsilon` is the steering function at `run`, interpolated by the search
        between its steering points (close by: the last is within search.STEERING_CLOSE of the
        target), on the grid of the last steering evaluation. When that grid's step is not
        twice the finer one, the extrapolation does not apply and the finer bound itself is
        the prediction.
        """
        finer, finer_step = self._coarse(run, LEVEL_ACCURACY)
        if not 0.0 < finer < math.inf:
            return None
        if not (0.0 < steering_epsilon < math.inf) or self._steering_step != 2.0 * finer_step:
            return finer
        predicted = finer - 0.25 * (steering_epsilon - finer)
        return predicted if predicted > 0.0 else finer

    def largest_steps(self, target: float, sampling_probability: float, noise_multiplier: float, limit: int,
                      estimate: float, neighbours: Neighbours | None,
                      ) -> tuple[int, PLDResult | None, PLDResult | None] | None:
        """The largest admissible T <= limit with epsilon <= target by one shared composition
        (`pld.largest_steps`), or None. Its bounds are the shared composition's; `account` still
        reports `tight_epsilon`'s, the number `dpcalc pld` prints at the answer."""
        from dpcalc.core import pld

        phase = Phase("gaussian", sampling_probability=sampling_probability, noise_multiplier=noise_multiplier,
                      steps=1)
        return pld.largest_steps(phase, self.delta, target, limit=limit, estimate=estimate,
                                 neighbours=neighbours, fallback=False)


class CappedAccountant:
    """An accountant's epsilon of the run with its Poisson batches capped (truncated Poisson
    sampling, `core.pld.truncation`): the Poisson run's figure with the overflow's cost (1 + e^eps)
    eta added to delta. pld reads it off the run's certified profile (`account_truncated`, the
    figure `dpcalc pld --max-batch-size` prints); rdp searches a few deltas below the target
    (`capped_epsilon`). The capped epsilon rises with T, p and the batch size and falls with
    sigma, as the Poisson run's and eta do, so the calibration's search applies unchanged."""

    def __init__(self, base: Accountant, truncation: Truncation) -> None:
        self.base = base
        self.name = base.name
        self.certified = base.certified
        self.truncation = truncation

    def epsilon(self, phases: Sequence[Phase], delta: float) -> Accounted:
        """The capped run's epsilon at delta (an upper bound: pld certified, rdp the RDP bound)."""
        from dpcalc.core.limits import DEFAULT_ACCURACY
        from dpcalc.core.pld.truncated_profile import capped_epsilon
        from dpcalc.core.pld.truncation import account_truncated, cap_costs

        if self.name == "pld":
            truncated, _poisson, _overflow = account_truncated(phases, self.truncation, delta=delta, epsilon=None,
                                                               accuracy=DEFAULT_ACCURACY)
            return Accounted(truncated.epsilon_upper, truncated.epsilon_lower, truncated.warnings, "PLD (certified)")
        # what the cap costs above (eta, or less step by step under add-remove: `cap_costs`)
        overflow = cap_costs(phases, self.truncation)[0]
        warnings: list[str] = []

        def uncapped(share: float) -> float:
            accounted = self.base.epsilon(phases, share)
            warnings.extend(item for item in accounted.warnings if item not in warnings)
            return accounted.epsilon

        epsilon = capped_epsilon(uncapped, delta, overflow)
        return Accounted(epsilon, None, tuple(warnings), self.name.upper())


def engine_for(name: str, delta: float, truncation: Truncation | None = None) -> Engine:
    """The engine of the accountant called `name` (dpcalc.core.accountants.ACCOUNTANTS); with
    `truncation`, of the run with its batches capped (`CappedAccountant`, pld or rdp: a plain
    engine, the PLD search's cheaper bounds describing the uncapped run)."""
    if truncation is not None:
        return Engine(CappedAccountant(accountant(name), truncation), delta)
    if name == "pld":
        return PLDEngine(delta)
    return Engine(accountant(name), delta)
