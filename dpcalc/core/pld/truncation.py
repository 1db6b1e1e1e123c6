"""Truncated Poisson sampling: Poisson batches cut to at most B records, accounted from the
Poisson run's certified privacy profile (docs/mathematics.md, "Truncated Poisson sampling").

Pipelines that need a fixed memory bound draw a Poisson batch and, when it holds more than B
records, keep B of them. On every run in which no batch overflows, the truncated mechanism M'
outputs exactly what the Poisson mechanism M outputs; so for every event S and dataset D,
|P[M'(D) in S] - P[M(D) in S]| <= eta_D, the probability that some batch of D overflows. If M
is (eps, delta)-DP, then for neighbours D, D'

    P[M'(D) in S] <= P[M(D) in S] + eta_D <= e^eps P[M(D') in S] + delta + eta_D
                  <= e^eps P[M'(D') in S] + delta + eta_D + e^eps eta_D',

so M' is (eps, delta_M(eps) + (1 + e^eps) eta)-DP with eta the larger overflow probability,
and, the same way round, delta_M'(eps) >= delta_M(eps) - (1 + e^eps) eta. Chua et al. (NeurIPS
2024, "Scalable DP-SGD: shuffling vs. Poisson subsampling") absorb the overflow the same way.
Poisson batches are independent across steps, so with q = P[Binomial(m, p) > B] for a dataset
of m records, eta = 1 - (1 - q)^T exactly.

Under add-remove neighbours the cap is also accounted step by step (`CappedPhase`,
`capped_pair`): when a record's batch overflows, the record can only push one other record out,
so each step is dominated by a revealed mixture of the Poisson pair at shift 1 and at shift 2,
and a Poisson pair at the rate at which the record is kept is attained (docs/mathematics.md,
"Truncated Poisson sampling"). The run's bounds are the tighter ends of the two analyses.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dpcalc.core.phases import Phase, samples_nothing
from dpcalc.core.validation import POSITIVE_INTEGER, ParameterError

if TYPE_CHECKING:
    from dpcalc.core.pld.pairs.base import Pair
    from dpcalc.core.pld.privacy_profile import ProfileBounds
    from dpcalc.core.pld.result import PLDResult

# scipy's binomial tail (the regularised incomplete beta function, Cephes) is accurate to a few
# ulps over its range (tests/core/pld/test_truncation.py checks it against mpmath at 50 digits);
# the overflow probability is taken this much larger, so that it bounds the truth from above.
_TAIL_MARGIN = 1e-9
# Bisection steps on epsilon: the certified end moves by at most 2^-60 of the bracket.
_BISECTIONS = 60
# The unit roundoff of float64.
_ULP = 2.0**-53


@dataclass(frozen=True)
class Truncation:
    """Batches capped at `max_batch_size` records, from a dataset of `dataset_size` records."""

    dataset_size: int
    max_batch_size: int


@dataclass(frozen=True)
class TruncatedBounds:
    """The truncated run's certified interval, with what the truncation costs.

    `overflow` bounds from above the probability that some batch of the largest neighbouring
    dataset exceeds the cap (eta); `epsilon_*`/`delta_*` are the truncated run's bounds at the
    target (epsilon = inf when no epsilon meets delta: eta is too large for it)."""

    overflow: float
    epsilon_lower: float
    epsilon_upper: float
    delta_lower: float
    delta_upper: float


@dataclass(frozen=True)
class CappedPhase(Phase):
    """A Poisson-sampled Gaussian phase under add-remove neighbours whose batches are cut to at
    most `max_batch_size` records, on datasets of `dataset_size` records and their neighbours:
    the PLD accountant composes its step by step (`capped_pair`). Built by `account_truncated`
    only; the closed forms and the RDP curves do not know it."""

    dataset_size: int = 1
    max_batch_size: int = 1

    def __post_init__(self) -> None:
        super().__post_init__()
        POSITIVE_INTEGER.check("dataset size", self.dataset_size)
        POSITIVE_INTEGER.check("max batch size", self.max_batch_size)
        if not per_step_covers(self):
            raise ValueError("a capped phase is a Poisson-sampled gaussian phase under add-remove neighbours, "
                             "one example a user")


def per_step_covers(phase: Phase) -> bool:
    """Whether the step-by-step analysis of the cap applies: the Gaussian mechanism, Poisson
    sampling, add-remove neighbours, one example a user (module docstring)."""
    return (phase.mechanism == "gaussian" and phase.sampling == "poisson" and phase.neighbours == "add-remove"
            and phase.examples_per_user == 1)


def _tail(k: int, n: int, p: float) -> float:
    """P[Binomial(n, p) > k] (scipy's `bdtrc`, with its ends settled: 1 below 0, 0 from n on)."""
    from scipy.special import bdtrc

    if k < 0:
        return 1.0
    if k >= n:
        return 0.0
    return float(bdtrc(k, n, p))


def overflow_share(phase: CappedPhase) -> float:
    """w: an upper bound on the probability that the other records of a step fill at least B - 1
    places, P[Binomial(n - 1, p) >= B - 1], rounded up (docs/mathematics.md, "Truncated Poisson
    sampling"): the steps in which an added record may push another out, on either dataset of
    a neighbouring pair of n and n + 1 or n - 1 and n records."""
    share = _tail(phase.max_batch_size - 2, phase.dataset_size - 1, phase.sampling_probability)
    return min(1.0, share * (1.0 + _TAIL_MARGIN))


def kept_rate(phase: CappedPhase) -> float:
    """q: a lower bound on the probability that a record joins the kept batch when the n - 1
    other records are drawn as well and B of the drawn ones are kept uniformly at random,
    p E[min(1, B/(K + 1))] for K ~ Binomial(n - 1, p), rounded down. With
    E[1/(K + 1); K >= B] = P[Binomial(n, p) > B]/(n p) (the binomial identity
    C(m, k)/(k + 1) = C(m + 1, k + 1)/(m + 1)), q = p P[K <= B - 1] + B P[Binomial(n, p) > B]/n."""
    p, b, others = phase.sampling_probability, phase.max_batch_size, phase.dataset_size - 1
    # each tail is taken _TAIL_MARGIN to the side that lowers q; the sums and products add ulps
    below = 1.0 - _tail(b - 1, others, p) * (1.0 + _TAIL_MARGIN)  # P[K <= B - 1]
    rate = p * below + b * _tail(b, others + 1, p) / (others + 1) * (1.0 - _TAIL_MARGIN)
    return min(p, max(0.0, rate - 8.0 * _ULP * p))


def capped_pair(phase: CappedPhase, direction: str) -> Pair:
    """One step of a capped phase in `direction` (remove or add): the revealed mixture of the
    Poisson pair at shift 1, weight 1 - w, and at shift 2, weight w (`overflow_share`), which
    dominates the capped step (docs/mathematics.md, "Truncated Poisson sampling")."""
    from dpcalc.core.pld.pairs import GaussianPair
    from dpcalc.core.pld.pairs.capped import RevealedMixture

    share = overflow_share(phase)
    p, sigma = phase.sampling_probability, phase.noise
    return RevealedMixture([(1.0 - share, GaussianPair(p, sigma, direction)),
                            (share, GaussianPair(p, sigma / 2.0, direction))])


def overflow_probability(phases: Sequence[Phase], truncation: Truncation) -> float:
    """A certified upper bound on eta: the probability that any batch of the run holds more than
    `max_batch_size` records, on the largest dataset neighbouring one of `dataset_size` records
    (one user's examples more under add-remove; the same size under replace-one and zero-out)."""
    from scipy.special import bdtrc

    POSITIVE_INTEGER.check("dataset size", truncation.dataset_size)
    POSITIVE_INTEGER.check("max batch size", truncation.max_batch_size)
    log_none = 0.0  # log P[no batch overflows]
    for phase in phases:
        if phase.mechanism != "gaussian" or phase.sampling != "poisson":
            raise ParameterError("max batch size", "for Poisson-sampled Gaussian phases", truncation.max_batch_size)
        if phase.sampling_probability == 0.0:
            continue
        records = truncation.dataset_size + (phase.examples_per_user if phase.neighbours == "add-remove" else 0)
        if truncation.max_batch_size >= records:
            continue  # no batch can overflow
        tail = float(bdtrc(truncation.max_batch_size, records, phase.sampling_probability))  # P[X > B]
        tail = min(1.0, tail * (1.0 + _TAIL_MARGIN))
        if tail >= 1.0:
            return 1.0
        log_none += phase.steps * math.log1p(-tail)
    return min(1.0, -math.expm1(log_none) * (1.0 + _TAIL_MARGIN))


def account_truncated(phases: Sequence[Phase], truncation: Truncation, *, delta: float | None,
                      epsilon: float | None, accuracy: float) -> tuple[PLDResult, PLDResult, float]:
    """(truncated run's result, Poisson run's result, eta): the run's certified bounds at `delta`
    (or at `epsilon`) when its Poisson batches are cut to `truncation.max_batch_size` records.

    One composition serves the Poisson run and both analyses' first reading: the Poisson run's
    result is the composition's own, and the truncated bounds are read off its measures
    (`ProfileBounds`) with what the cap costs on each side (`cap_costs`). Under add-remove, where
    that leaves the interval wider than the accuracy, the capped pairs and the kept rate are
    composed as well (`_per_step`); each end is the tighter of its certified figures."""
    from dpcalc.core.pld.api import account
    from dpcalc.core.pld.privacy_profile import ProfileBounds
    from dpcalc.core.pld.result import PLDResult

    overflow = overflow_probability(phases, truncation)
    # a direction that cannot raise the lower bound at the target is composed upper-only (the
    # bounds are read near the target)
    profile = ProfileBounds(phases, [(delta, epsilon)], accuracy=accuracy, spare_lower=True)
    poisson = profile.results[0] if profile.results else account(tuple(phases), delta=delta, epsilon=epsilon,
                                                                  accuracy=accuracy)
    # what the cap costs above and below: eta, or less step by step (`cap_costs`); the bounds read
    # off the Poisson run's profile with these costs are at least as tight as with eta
    capped = capped_phases(phases, truncation)
    above, below = _costs(overflow, capped)
    if delta is not None:
        upper = capped_upper_epsilon(profile, delta, above, start=poisson.epsilon_upper)
        lower = min(capped_lower_epsilon(profile, delta, below), upper)
    else:
        assert epsilon is not None, "a target names delta or epsilon"
        upper, lower = truncated_delta(profile, epsilon, above)[0], truncated_delta(profile, epsilon, below)[1]
    warnings = tuple(profile.warnings)
    if capped is not None and not (math.isfinite(upper) and upper - lower <= accuracy * upper):
        # then composed: the capped pairs above, the pairs at the kept rate below
        # the kept rate's run is composed only where its distance cost the lower bound more than a
        # quarter of the accuracy against the Poisson run's (it cannot rise above that run's truth)
        poisson_lower = poisson.epsilon_lower if delta is not None else poisson.delta_lower
        poisson_upper = poisson.epsilon_upper if delta is not None else poisson.delta_upper
        step = _per_step(capped, delta=delta, epsilon=epsilon, accuracy=accuracy,
                         with_lower=lower < poisson_lower - 0.25 * accuracy * poisson_upper)
        if step is not None:
            step_upper, step_lower, step_warnings = step
            if step_upper < upper:
                upper, warnings = step_upper, warnings + step_warnings
            lower = max(lower, step_lower)
    if math.isinf(upper):
        warnings += (f"no epsilon meets delta = {delta:g}: a batch overflows the cap with probability up to "
                     f"{overflow:.3g}, and (1 + e^eps) times that already exceeds delta"
                     + ("" if capped is None else ", nor does the step-by-step bound meet it")
                     + "; raise the cap or delta",)
    elif delta is not None and upper - lower > accuracy * upper:
        gap = ("the gap between what bounds a capped batch from above (an added record may push another out "
               "of it) and what some neighbouring datasets attain (the record kept at the rate the cap allows)"
               if capped is not None else "what the overflow probability may cost on either side")
        warnings += (f"the certified interval is {upper - lower:.3g} wide (relative {(upper - lower) / upper:.2g}): "
                     f"the rest is {gap}; the true epsilon lies between the two ends.",)
    truncated = PLDResult.bounds(delta=delta, epsilon=epsilon, upper=upper, lower=min(lower, upper),
                                 accuracy=accuracy, grid_step=poisson.grid_step, grid_size=poisson.grid_size,
                                 binding=poisson.binding, attempts=poisson.attempts, phases=poisson.phases,
                                 warnings=warnings)
    return dataclasses.replace(truncated, exact=poisson.exact), poisson, overflow


def capped_phases(phases: Sequence[Phase], truncation: Truncation) -> tuple[CappedPhase, ...] | None:
    """The run's sampled phases as `CappedPhase`s, or None where the step-by-step analysis does
    not apply (`per_step_covers`) or nothing is sampled."""
    sampled = [phase for phase in phases if not samples_nothing(phase)]
    if not sampled or not all(per_step_covers(phase) for phase in sampled):
        return None
    return tuple(capped(phase, truncation) for phase in sampled)


def capped(phase: Phase, truncation: Truncation) -> CappedPhase:
    """`phase` with its batches capped (`CappedPhase`; `per_step_covers` must hold)."""
    return CappedPhase(**_phase_fields(phase), dataset_size=truncation.dataset_size,
                       max_batch_size=truncation.max_batch_size)


def _phase_fields(phase: Phase, **changes: Any) -> dict[str, Any]:
    """The `Phase` fields of `phase` (a `CappedPhase` has more), with `changes` made."""
    return {field.name: changes.get(field.name, getattr(phase, field.name)) for field in dataclasses.fields(Phase)}


def step_distances(capped: Sequence[CappedPhase]) -> tuple[float, float]:
    """(above, below): bounds on how far, in total variation, the compositions of the capped
    pairs (above) and of the pairs at the kept rate (below) lie from the Poisson run's, on the
    side of each pair that differs; each moves delta(eps) by at most (1 + e^eps) times it, as an
    overflow probability does (docs/mathematics.md, "Truncated Poisson sampling").

    A capped pair differs from the Poisson pair only in its shift-2 branch, weight w, where the
    record's law is (1 - p) N(0) + p N(2) instead of (1 - p) N(0) + p N(1): at most w p tv a step,
    tv = P(|Z| < 1/(2 sigma)) the distance of N(2) from N(1). The pair at the kept rate q differs
    from the Poisson pair by (p - q) tv a step. Steps add up (a coupling a step)."""
    above = below = 0.0
    for phase in capped:
        p = phase.sampling_probability
        tv = min(1.0, math.erf(0.5 / (phase.noise * math.sqrt(2.0))) * (1.0 + 4e-16) + 1e-300)
        steps = phase.steps_float
        above += steps * overflow_share(phase) * p * tv
        below += steps * (p - kept_rate(phase)) * tv
    return min(1.0, above * (1.0 + 1e-12)), min(1.0, below * (1.0 + 1e-12))


STEP_BY_STEP = "overflow bound and step by step"
OVERFLOW_ONLY = "overflow bound"


def cap_analysis(phases: Sequence[Phase], truncation: Truncation) -> str:
    """Which analyses bound the capped run: the overflow bound always (any rule for the kept
    records), and step by step where the capped pairs apply (`capped_phases`)."""
    return OVERFLOW_ONLY if capped_phases(phases, truncation) is None else STEP_BY_STEP


def cap_costs(phases: Sequence[Phase], truncation: Truncation, overflow: float | None = None) -> tuple[float, float]:
    """(above, below): what the cap may move delta(eps) by, per (1 + e^eps), on the side of the
    upper bounds and on that of the lower bounds. eta (`overflow_probability`, given or computed)
    on both sides, for any rule that picks the kept records; under add-remove, where the capped
    pairs apply (`capped_phases`), the smaller of eta and their distance from the Poisson pairs on
    each side (`step_distances`; docs/mathematics.md, "Truncated Poisson sampling")."""
    eta = overflow_probability(phases, truncation) if overflow is None else overflow
    return _costs(eta, capped_phases(phases, truncation))


def _costs(eta: float, capped: Sequence[CappedPhase] | None) -> tuple[float, float]:
    """`cap_costs` from eta and the run's capped phases (None: no step-by-step analysis)."""
    if capped is None:
        return eta, eta
    far_above, far_below = step_distances(capped)
    return min(eta, far_above), min(eta, far_below)


def composed_upper(phases: Sequence[Phase], *, delta: float | None, epsilon: float | None,
                   accuracy: float) -> tuple[float, tuple[str, ...]] | None:
    """The grid accountant's certified upper bound (on epsilon at `delta`, or on delta at
    `epsilon`) of a run some of whose phases are `CappedPhase`s, and its warnings; None where the
    grid cannot run (no closed form knows the capped pairs).

    For epsilon, the first grid's upper measure alone (`accountant.first_upper`, as
    `api.upper_epsilon`): the capped pairs' own lower measure bounds nothing, and their upper bound
    on that grid lay within 1.3e-8 of the refined one at caps 280, 300 and 320 on the design card, in
    a third of the time; where it cannot certify the target, the refining accountant."""
    from dpcalc.core.pld.accountant import account_grid, first_upper
    from dpcalc.core.pld.api import in_grid
    from dpcalc.core.pld.fallback import out_of_range

    run = tuple(phases)
    if out_of_range(run) is not None:
        return None
    if delta is not None:
        first, _ = in_grid(lambda: first_upper(run, delta, accuracy))
        if first is not None and math.isfinite(first[0]):
            return first[0], ()
    grid, _ = in_grid(lambda: account_grid(run, delta=delta, epsilon=epsilon, accuracy=accuracy))
    if grid is None:
        return None
    upper = grid.result.epsilon_upper if delta is not None else grid.result.delta_upper
    return upper, grid.result.warnings


def _per_step(capped: tuple[CappedPhase, ...], *, delta: float | None, epsilon: float | None,
              accuracy: float, with_lower: bool = True) -> tuple[float, float, tuple[str, ...]] | None:
    """(upper, lower, the upper composition's warnings) of the step-by-step analysis of the cap
    at the target (epsilon bounds at `delta`, or delta bounds at `epsilon`), composed; None where
    the grid cannot run.

    Upper: the grid accountant composes each step's `capped_pair` (no closed form knows it).
    Lower: the Poisson run at the kept rate q (`kept_rate`), which some neighbouring datasets
    attain: every record other than the one added contributes 0 and the kept records are drawn
    uniformly (any other rule keeps the record at least as often for some order of the records).
    Without `with_lower`, the lower end is 0 (the caller keeps its own)."""
    from dpcalc.core.pld.api import cached

    above = composed_upper(capped, delta=delta, epsilon=epsilon, accuracy=accuracy)
    if above is None:
        return None
    if not with_lower:
        return above[0], 0.0, above[1]
    kept = tuple(Phase(**_phase_fields(phase, sampling_probability=kept_rate(phase))) for phase in capped)
    attained = cached(kept, delta, epsilon, accuracy)
    return above[0], attained.epsilon_lower if delta is not None else attained.delta_lower, above[1]


def truncated_delta(profile: ProfileBounds, epsilon: float, overflow: float) -> tuple[float, float]:
    """(delta_upper, delta_lower) of the truncated run at `epsilon`: the Poisson run's certified
    bounds moved by (1 + e^eps) eta (module docstring)."""
    upper, lower = profile.at([epsilon])
    spread = overflow_cost(epsilon, overflow)
    return min(1.0, float(upper[0]) + spread), max(0.0, float(lower[0]) - spread)


def truncated_epsilon(profile: ProfileBounds, delta: float, overflow: float) -> tuple[float, float]:
    """(epsilon_upper, epsilon_lower) of the truncated run at `delta` (module docstring).

    Upper: the smallest eps found with delta_upper(eps) + (1 + e^eps) eta <= delta. It lies above
    the Poisson run's upper bound (eta = 0), where the search starts, and the truncated run is
    (eps, delta)-DP at every larger eps too (its own delta(eps) falls in eps); inf when the cost
    (1 + e^eps) eta reaches delta first. Lower: the largest eps found with delta_lower(eps) -
    (1 + e^eps) eta > delta, at which the truncated run is provably not (eps, delta)-DP (that
    difference falls in eps). Each end is a point checked, on its certified side."""

    upper = capped_upper_epsilon(profile, delta, overflow)
    return upper, min(capped_lower_epsilon(profile, delta, overflow), upper)


def capped_upper_epsilon(profile: ProfileBounds, delta: float, cost: float, start: float | None = None) -> float:
    """The upper end of `truncated_epsilon` with the cost (1 + e^eps) c. The search starts at the
    Poisson run's upper bound: `start` where given and checked to meet delta, else searched."""

    def meets(epsilon: float, cost: float = cost) -> bool:
        return float(profile.at([epsilon])[0][0]) + overflow_cost(epsilon, cost) <= delta

    # the Poisson run's upper bound: delta_upper falls in eps
    if start is None or not (math.isfinite(start) and meets(start, 0.0)):
        start = _first(lambda epsilon: meets(epsilon, 0.0), 0.0, math.inf)
    if not (math.isfinite(start) and overflow_cost(start, cost) < delta):
        return math.inf
    # past eps = log(delta / c - 1) the cost alone exceeds delta: nothing meets it there
    ceiling = math.log(delta / cost - 1.0) if cost > 0.0 else math.inf
    return _first(meets, start, ceiling)


def capped_lower_epsilon(profile: ProfileBounds, delta: float, cost: float) -> float:
    """The lower end of `truncated_epsilon` with the cost (1 + e^eps) c (0 where none is found)."""

    def exceeds(epsilon: float) -> bool:
        return float(profile.at([epsilon])[1][0]) - overflow_cost(epsilon, cost) > delta

    if not exceeds(0.0):
        return 0.0
    return _first(lambda epsilon: not exceeds(epsilon), 0.0, math.inf, last_false=True)


# Shares of delta at which a run without a profile (rdp) is read for its capped epsilon, and the
# multiples of the overflow's cost at the uncapped epsilon taken off delta (`capped_epsilon`).
_CAPPED_SHARES = (0.5, 0.8, 0.9, 0.95, 0.99, 0.999)
_CAPPED_COSTS = (1.0001, 1.001, 1.01, 1.03, 1.1, 1.3, 1.6, 2.0, 3.0)


def capped_epsilon(epsilon_at: Callable[[float], float], delta: float, overflow: float) -> float:
    """An epsilon at which a capped run is (eps, delta)-DP, from `epsilon_at`, an upper bound on
    the uncapped run's epsilon at any delta, for accountants without a profile (rdp): the
    smallest eps = epsilon_at(d) over a few d < delta with d + (1 + e^eps) eta <= delta (each
    checked; module docstring); inf when none is. The candidates are shares of delta and delta
    less multiples of the overflow's cost at the uncapped epsilon (where the optimum lies when
    the cost is small)."""
    if overflow == 0.0:
        return epsilon_at(delta)
    uncapped = epsilon_at(delta)
    if not math.isfinite(uncapped):
        return math.inf
    start = overflow_cost(uncapped, overflow)
    candidates = [delta * share for share in _CAPPED_SHARES]
    candidates += [delta - start * factor for factor in _CAPPED_COSTS]
    best = math.inf
    for candidate in sorted({value for value in candidates if 0.0 < value < delta}, reverse=True):
        epsilon = epsilon_at(candidate)
        if epsilon < best and candidate + overflow_cost(epsilon, overflow) <= delta:
            best = epsilon
    return best


def _first(holds: Callable[[float], bool], low: float, ceiling: float, *, last_false: bool = False) -> float:
    """The smallest eps in [low, ceiling) found to satisfy `holds` (monotone: false, then true),
    by doubling steps from `low` and bisection; inf when none is found below `ceiling` (or below
    eps = 1e4, beyond any meaningful privacy). With `last_false`, the largest eps found not to
    satisfy it instead."""
    if holds(low):
        return low
    step = max(1e-3, 1e-3 * low)
    high = low + step
    while not holds(high):
        low, high = high, high + step
        step *= 2.0
        if high >= min(ceiling, 1e4):
            return low if last_false else math.inf
    for _ in range(_BISECTIONS):
        middle = 0.5 * (low + high)
        if middle in (low, high):
            break
        low, high = (low, middle) if holds(middle) else (middle, high)
    return low if last_false else high


def overflow_cost(epsilon: float, overflow: float) -> float:
    """(1 + e^eps) eta, rounded up; inf past float64: what a cap adds to delta at eps (module
    docstring)."""
    if overflow == 0.0:
        return 0.0
    if epsilon > 700.0:
        return math.inf
    return (1.0 + math.exp(epsilon)) * overflow * (1.0 + 1e-15)
