"""Epsilon and delta of a capped run read off the uncapped run's certified privacy profile, with
what the cap costs: a cost c (an overflow probability, or a distance between compositions)
moves delta(eps) by at most (1 + e^eps) c either way (the argument is in `truncation`'s
docstring and docs/mathematics.md, "Truncated Poisson sampling").

Each end is a point evaluated on its certified side: the upper end the smallest eps found whose
delta_upper(eps) + (1 + e^eps) c meets delta, the lower end the largest whose delta_lower(eps) -
(1 + e^eps) c exceeds it. With c = 0 this is how `privacy_profile.ProfileBounds.epsilon_at`
reads epsilon at any delta. For accountants without a profile (rdp), `capped_epsilon`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np

# Bisection steps on epsilon: the certified end moves by at most 2^-60 of the bracket.
_BISECTIONS = 60


class DeltaBounds(Protocol):
    """What the searches read: certified (delta_upper, delta_lower) at any epsilons >= 0
    (`privacy_profile.ProfileBounds.at`)."""

    def at(self, epsilons: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...


def truncated_delta(profile: DeltaBounds, epsilon: float, overflow: float) -> tuple[float, float]:
    """(delta_upper, delta_lower) of the truncated run at `epsilon`: the Poisson run's certified
    bounds moved by (1 + e^eps) eta (module docstring)."""
    upper, lower = profile.at([epsilon])
    spread = overflow_cost(epsilon, overflow)
    return min(1.0, float(upper[0]) + spread), max(0.0, float(lower[0]) - spread)


def truncated_epsilon(profile: DeltaBounds, delta: float, overflow: float) -> tuple[float, float]:
    """(epsilon_upper, epsilon_lower) of the truncated run at `delta` (module docstring).

    Upper: the smallest eps found with delta_upper(eps) + (1 + e^eps) eta <= delta. It lies above
    the Poisson run's upper bound (eta = 0), where the search starts, and the truncated run is
    (eps, delta)-DP at every larger eps too (its own delta(eps) falls in eps); inf when the cost
    (1 + e^eps) eta reaches delta first. Lower: the largest eps found with delta_lower(eps) -
    (1 + e^eps) eta > delta, at which the truncated run is provably not (eps, delta)-DP (that
    difference falls in eps). Each end is a point checked, on its certified side."""

    upper = capped_upper_epsilon(profile, delta, overflow)
    return upper, min(capped_lower_epsilon(profile, delta, overflow), upper)


def capped_upper_epsilon(profile: DeltaBounds, delta: float, cost: float, start: float | None = None) -> float:
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


def capped_lower_epsilon(profile: DeltaBounds, delta: float, cost: float) -> float:
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
