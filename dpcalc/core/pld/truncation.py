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
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dpcalc.core.validation import POSITIVE_INTEGER, ParameterError

if TYPE_CHECKING:
    from dpcalc.core.phases import Phase
    from dpcalc.core.pld.privacy_profile import ProfileBounds
    from dpcalc.core.pld.result import PLDResult

# scipy's binomial tail (the regularised incomplete beta function, Cephes) is accurate to a few
# ulps over its range (tests/core/pld/test_truncation.py checks it against mpmath at 50 digits);
# the overflow probability is taken this much larger, so that it bounds the truth from above.
_TAIL_MARGIN = 1e-9
# Bisection steps on epsilon: the certified end moves by at most 2^-60 of the bracket.
_BISECTIONS = 60


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

    One composition serves both: the Poisson run's result is the composition's own, and the
    truncated bounds are read off its measures (`ProfileBounds`)."""
    import dataclasses

    from dpcalc.core.pld.api import account
    from dpcalc.core.pld.privacy_profile import ProfileBounds
    from dpcalc.core.pld.result import PLDResult

    overflow = overflow_probability(phases, truncation)
    profile = ProfileBounds(phases, [(delta, epsilon)], accuracy=accuracy)
    poisson = profile.results[0] if profile.results else account(tuple(phases), delta=delta, epsilon=epsilon,
                                                                  accuracy=accuracy)
    if delta is not None:
        upper, lower = truncated_epsilon(profile, delta, overflow)
    else:
        assert epsilon is not None, "a target names delta or epsilon"
        upper, lower = truncated_delta(profile, epsilon, overflow)
    warnings = tuple(profile.warnings)
    if math.isinf(upper):
        warnings += (f"no epsilon meets delta = {delta:g}: a batch overflows the cap with probability up to "
                     f"{overflow:.3g}, and (1 + e^eps) times that already exceeds delta; raise the cap or delta",)
    truncated = PLDResult.bounds(delta=delta, epsilon=epsilon, upper=upper, lower=lower, accuracy=accuracy,
                                 grid_step=poisson.grid_step, grid_size=poisson.grid_size, binding=poisson.binding,
                                 attempts=poisson.attempts, phases=poisson.phases, warnings=warnings)
    return dataclasses.replace(truncated, exact=poisson.exact), poisson, overflow


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

    def meets(epsilon: float, cost: float = overflow) -> bool:
        return float(profile.at([epsilon])[0][0]) + overflow_cost(epsilon, cost) <= delta

    def exceeds(epsilon: float) -> bool:
        return float(profile.at([epsilon])[1][0]) - overflow_cost(epsilon, overflow) > delta

    # the Poisson run's upper bound: delta_upper falls in eps
    start = _first(lambda epsilon: meets(epsilon, 0.0), 0.0, math.inf)
    upper = math.inf
    if math.isfinite(start) and overflow_cost(start, overflow) < delta:
        # past eps = log(delta / eta - 1) the cost alone exceeds delta: nothing meets it there
        ceiling = math.log(delta / overflow - 1.0) if overflow > 0.0 else math.inf
        upper = _first(meets, start, ceiling)
    lower = 0.0
    if exceeds(0.0):
        lower = _first(lambda epsilon: not exceeds(epsilon), 0.0, math.inf, last_false=True)
    return upper, min(lower, upper)


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
