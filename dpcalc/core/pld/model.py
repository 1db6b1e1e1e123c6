"""One phase of a run in one direction (`PhaseModel`: its dominating pair, the moments of its
privacy loss, a cached MGF) and the Chernoff tilt of a whole run (`chernoff`).

The tilt lam is the saddle point of the Chernoff bound delta(eps) <= kappa(lam)
E[e^(lam (S - eps))] (lam is the Renyi order minus one; the factor kappa is that of the
RDP-to-DP conversion of Canonne, Kamath, Steinke 2020, arXiv 2004.00010, Prop. 12); the grid
stores measures tilted by it (S5 of docs/pld-soundness.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from dpcalc.core.phases import EPOCH_SAMPLINGS, Phase
from dpcalc.core.pld.measure import kappa
from dpcalc.core.pld.pairs import GaussianPair, LaplacePair, Pair, ReplaceOnePair, SymmetrisedPair
from dpcalc.core.pld.result import DIRECTIONS, SYMMETRIC
from dpcalc.core.record import Value

if TYPE_CHECKING:
    import numpy as np

# Tilt range: lam is the Chernoff saddle point clipped to this interval (lam = order - 1).
LAM_MIN = 1e-3
LAM_MAX = 1e5
# ... and to at most LAM_SPREAD over the standard deviation of the run's loss. The saddle point
# is lam ~ sqrt(2 log(1/delta)) / sd <= 37 / sd for losses near normal; only a loss bounded above
# (the Laplace mechanism's atom) asks for more as delta -> 0, up to lam = inf. The grid's step
# is about sd / 48 (`plan._STEP_BINS_PER_SD`), and a coarsening multiplies the tilted weight of
# a moved atom by e^(lam h): past lam h ~ 700 the weights under- and overflow float64 (Laplace at
# delta 1e-12 failed so), and long before that their error bounds grow by e^(lam h). With this
# cap lam h stays below ~20; any tilt is sound (S5), a smaller one only costs accuracy at tiny
# delta, which the closed forms recover there (`fallback`, the Laplace atom).
LAM_SPREAD = 1e3


class Direction(Value):
    """One pair per phase composed over the run, and what its composition bounds: the run's
    epsilon from above (`upper`: the pairs dominate the phases), from below (`lower`: the pairs
    are attained by some pair of neighbouring datasets), or both."""

    name: str
    upper: bool
    lower: bool


def directions_of(phases: Sequence[Phase]) -> tuple[Direction, ...]:
    """The directions a run is composed in (docs/mathematics.md, "Neighbour relations").

    add-remove and zero-out: the remove and the add pair, both tight (one when nothing is
    subsampled: the pair is then its own reverse); fixed-size batches under add-remove too (the
    Poisson pair at sensitivity 2 dominates and is attained). replace-one: every pair is its own
    reverse, so one direction, unless a phase samples fixed-size batches under replace-one or
    zero-out: its two-part pair dominates (upper) but is not attained, and its attained pair, in
    both orders, gives the lower bound (`two_part`). Shuffled batches (zero-out or replace-one, a
    run of them only, `check_phases`): one unsubsampled Gaussian an epoch dominates (upper,
    its own reverse), the law of the largest batch sum is attained (lower, in both orders).
    Random allocation (add-remove or zero-out) composes remove and add pairs like Poisson
    sampling; each pair's lower measure comes from its attained pair (`Pair.attained`).
    """
    if any(phase.sampling == "shuffle" for phase in phases) or any(two_part(phase) for phase in phases):
        return (Direction(SYMMETRIC, True, False), *(Direction(name, False, True) for name in DIRECTIONS))
    if not any(phase.neighbours == "replace-one" for phase in phases):
        if all(phase.sampling_probability == 1.0 for phase in phases):
            return (Direction(DIRECTIONS[0], True, True),)
        return tuple(Direction(name, True, True) for name in DIRECTIONS)
    return (Direction(SYMMETRIC, True, True),)


def two_part(phase: Phase) -> bool:
    """Whether the phase's upper bound is the symmetrised two-part pair of fixed-size batches (Zhu,
    Dong, Wang 2022, Prop. 30), which no pair of datasets attains: fixed-size batches of fewer than
    all records under replace-one, or under zero-out (a zero-out neighbour is a replace-one one
    whose new record is the null record; docs/mathematics.md, "Fixed-size batches")."""
    return phase.sampling == "uniform" and phase.neighbours != "add-remove" and phase.sampling_probability < 1.0


def check_phases(phases: Sequence[Phase]) -> tuple[Phase, ...]:
    """The phases as a tuple, checked to be a non-empty sequence of `Phase`."""
    phases = tuple(phases)
    if not phases:
        raise ValueError("give at least one phase")
    for phase in phases:
        if not isinstance(phase, Phase):
            raise TypeError(f"phases must be Phase objects, got {type(phase).__name__}")
    relations = {phase.neighbours for phase in phases}
    if len(relations) > 1:
        raise ValueError(f"the phases of a run share one neighbour relation, got {', '.join(sorted(relations))}")
    if any(phase.sampling == "shuffle" for phase in phases) and any(phase.sampling != "shuffle" for phase in phases):
        raise ValueError("a run of shuffled phases cannot include phases of another sampling scheme")
    if phases[0].neighbours == "zero-out" and any(two_part(phase) for phase in phases) and not all(
            phase.mechanism == "gaussian" and phase.sampling in ("poisson", "uniform") and phase.examples_per_user == 1
            and getattr(phase, "max_batch_size", None) is None for phase in phases):
        # the two-part pair's run is composed in one symmetric direction: the other phases need a
        # pair that dominates both of their orders there, which only the Gaussian pairs have here
        raise ValueError("a run with fixed-size batches under zero-out takes only other Gaussian phases of Poisson "
                         "or fixed-size batches (no cap, example level); account the rest under replace-one")
    return phases


def pair_of(phase: Phase, direction: str) -> Pair:
    """The pair of one step of `phase` in `direction` (remove, add or symmetric).

    Poisson, add-remove or zero-out: the subsampled mechanism's remove or add pair (with a cap on
    the batch size, `capped_phase.capped_pair`); in the symmetric direction of a run that has a
    two-part phase (`two_part`), the two combined (`SymmetrisedPair`, which dominates both).
    Poisson, replace-one: the pair of Lebeda et al. 2024, its own reverse. Fixed-size batches:
    under add-remove the Poisson pair at rate b/n and sensitivity 2 (noise sigma/2 in units of the
    shift), which dominates and is attained; under replace-one the same pair is attained in either
    order (remove, add) and the symmetrised two-part pair dominates (symmetric); under zero-out
    the two-part pair dominates and the Poisson pair at sensitivity 1 is attained (every other
    record's gradient 0); at b = n no record is sampled out and the step is the Gaussian at its
    relation's shift.
    """
    p, noise = phase.sampling_probability, phase.noise
    if getattr(phase, "max_batch_size", None) is not None:  # a `capped_phase.CappedPhase`
        from dpcalc.core.pld.capped_phase import CappedPhase, capped_pair  # imported by the runs that use it (start-up)

        assert isinstance(phase, CappedPhase)
        return capped_pair(phase, direction)
    if phase.examples_per_user > 1:
        from dpcalc.core.pld.pairs.mixture import MixturePair  # imported by the runs that use it (start-up)

        return MixturePair(p, noise, phase.examples_per_user, DIRECTIONS[0] if direction == SYMMETRIC else direction)
    if phase.mechanism == "laplace":
        return LaplacePair(p, noise, direction)
    if phase.sampling == "uniform":
        # in units of the shift: sensitivity 2 is noise sigma / 2
        attained = noise if phase.neighbours == "zero-out" else noise / 2.0
        if direction != SYMMETRIC:
            return GaussianPair(p, attained, direction)
        if p == 1.0:
            return GaussianPair(p, noise / phase.shift, DIRECTIONS[0])
        return SymmetrisedPair(GaussianPair(p, noise / 2.0, "remove"), GaussianPair(p, noise / 2.0, "add"))
    if phase.neighbours == "replace-one":
        return ReplaceOnePair(p, noise)
    if direction == SYMMETRIC and p < 1.0:
        return SymmetrisedPair(GaussianPair(p, noise, "remove"), GaussianPair(p, noise, "add"))
    return GaussianPair(p, noise, DIRECTIONS[0] if direction == SYMMETRIC else direction)


def dominating_phase(phase: Phase) -> Phase:
    """What bounds a shuffled or allocated phase from above: one unsubsampled Gaussian for each
    epoch begun (a record enters one step of an epoch), at the same noise and relation; other
    phases unchanged."""
    if phase.sampling not in EPOCH_SAMPLINGS:
        return phase
    full, rest = phase.epochs
    return Phase(noise_multiplier=phase.noise, steps=full + (rest > 0), neighbours=phase.neighbours)


def models_of(phases: Sequence[Phase], direction: str) -> list[PhaseModel]:
    """The composition of a run in one direction: a pair and a number of compositions per phase.

    A phase composes its pair (`pair_of`) once a step, except a shuffled phase, which composes
    once an epoch: above (symmetric), one unsubsampled Gaussian for each epoch begun (every
    record is used at most once in it; the noise is sigma / shift in units of the distance);
    below (remove, add), the largest batch sum of each full epoch, and of the last, partial
    epoch's r steps, which hold the record with probability r p, at distance 1 in every relation
    (docs/mathematics.md, "Shuffled batches"). An allocated phase composes one epoch's
    `AllocationPair` per full epoch, and that of the r steps of a last, partial epoch
    (docs/mathematics.md, "Random allocation"); an epoch of one step is one unsubsampled Gaussian.
    """
    models: list[PhaseModel] = []
    for phase in phases:
        if phase.sampling not in EPOCH_SAMPLINGS:
            models.append(PhaseModel(phase, direction))
            continue
        full, rest = phase.epochs
        assert phase.epoch_steps is not None
        if phase.sampling == "allocation":
            from dpcalc.core.pld.pairs.allocation import AllocationPair  # imported by the runs that use it

            if phase.epoch_steps == 1:
                models.append(PhaseModel(dominating_phase(phase), direction))
                continue
            if full:
                models.append(PhaseModel(phase, direction, AllocationPair(phase.epoch_steps, phase.epoch_steps,
                                                                          phase.noise, direction), full))
            if rest:
                models.append(PhaseModel(phase, direction, AllocationPair(phase.epoch_steps, rest, phase.noise,
                                                                          direction), 1))
            continue
        if direction == SYMMETRIC:
            models.append(PhaseModel(dominating_phase(phase), direction))
            continue
        from dpcalc.core.pld.pairs.shuffle import MaxPair  # imported by the runs that use it

        # below, the record against a null one (zero-out, add-remove) or against one contributing
        # 0 (replace-one may replace it by any record): a distance of 1 in every relation; the
        # record's own batch moves, the others do not, so a distance of 2 is not attained
        if full:
            models.append(PhaseModel(phase, direction, MaxPair(phase.epoch_steps, 1.0, phase.noise, direction), full))
        if rest:
            q = min(rest * phase.sampling_probability, 1.0)
            models.append(PhaseModel(phase, direction, MaxPair(rest, q, phase.noise, direction), 1))
    return models


class PhaseModel:
    """One phase in one direction: its pair, how many times it is composed (the phase's steps
    unless given), the moments of its loss, a cached MGF and cached tail bounds. A model lives for
    one run (`accountant.prepare` builds them), and every cache is keyed on all that its value
    depends on besides the pair."""

    def __init__(self, phase: Phase, direction: str, pair: Pair | None = None, steps: int | None = None) -> None:
        self.phase = phase
        self.pair = pair_of(phase, direction) if pair is None else pair
        self.steps = phase.steps if steps is None else steps
        self.mean, self.variance = self.pair.moments()
        self.sd = math.sqrt(max(self.variance, 1e-300))
        self._mgf: dict[tuple[float, float], float] = {}
        self._search_mgf: dict[tuple[float, float], float] = {}
        # bounds on the pair's tail masses at the points a search of `plan` evaluated, by (side,
        # the points' bytes): the searches of one run evaluate many point sets again (`plan.tails`)
        self.tails: dict[tuple[bool, bytes], np.ndarray] = {}
        self.cap = math.inf  # losses at or above go to +inf in the upper bound (set by `accountant.prepare`)

    def log_mgf(self, lam: float, truncated: bool = True, search: bool = False) -> float:
        """log E[e^(lam L); L < cap]: the part of the MGF that the tilted grid represents (or, not
        `truncated`, the whole MGF); with `search`, the pair's estimate for the tilt search
        (`Pair.search_log_mgf`)."""
        cap = self.cap if truncated else math.inf
        key = (lam, cap)
        cache = self._search_mgf if search else self._mgf
        value = cache.get(key)
        if value is None:
            value = self.pair.search_log_mgf(lam, cap) if search else self.pair.log_mgf(lam, cap)
            cache[key] = value
        return value


def golden_min(f: Callable[[float], float], lo: float, hi: float, iterations: int = 40) -> float:
    """Minimiser of a unimodal f on [lo, hi] (golden-section search)."""
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = lo, hi
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(iterations):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = f(d)
    return 0.5 * (a + b)


def chernoff(models: list[PhaseModel], delta: float | None, epsilon: float | None,
             truncated: bool = True) -> tuple[float, float]:
    """The tilt lam (Chernoff saddle point, = Renyi order - 1) and the Chernoff estimate.

    delta mode: lam minimises (K(lam) + log(1/delta))/lam with K = sum of steps * log MGF, and
    the estimate is that minimum (the RDP epsilon, an upper bound). epsilon mode: lam
    minimises K(lam) - lam eps and the estimate is that minimum (log of an upper bound on delta).
    The MGF is that of the losses below the models' caps (`PhaseModel.log_mgf`), or, not
    `truncated`, the whole MGF: then the estimate bounds the composed pairs' epsilon (log delta)
    from above at any lam.
    """

    def total(lam: float, search: bool) -> float:
        return sum(m.steps * m.log_mgf(lam, truncated, search) for m in models)

    # delta(eps) = E[(1 - e^(eps - S))_+] <= kappa(lam) E[e^(lam (S - eps))] (see `measure.kappa`)
    if delta is not None:
        log_inv = -math.log(delta)

        def objective(x: float, search: bool = False) -> float:
            lam = math.exp(x)
            return (total(lam, search) + math.log(kappa(lam)) + log_inv) / lam
    else:
        assert epsilon is not None
        target = epsilon

        def objective(x: float, search: bool = False) -> float:
            lam = math.exp(x)
            return total(lam, search) + math.log(kappa(lam)) - lam * target

    spread = math.sqrt(math.fsum(m.steps * m.variance for m in models))
    lam_max = min(LAM_MAX, max(LAM_SPREAD / spread, 2.0 * LAM_MIN)) if 0.0 < spread < math.inf else LAM_MAX
    # the search on the pairs' estimates of the MGF (`Pair.search_log_mgf`), the estimate at its result exact
    x = golden_min(lambda y: objective(y, True), math.log(LAM_MIN), math.log(lam_max))
    lam = min(max(math.exp(x), LAM_MIN), lam_max)
    return lam, objective(math.log(lam))

