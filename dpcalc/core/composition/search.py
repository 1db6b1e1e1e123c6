"""The monotone searches behind the inverse questions (`inverse`): the largest integer k, or
the largest real epsilon, at which an increasing total stays within a target.

The totals are those of the composition theorems (DR Thm 3.16, DRV Thm III.3, DR Cor. 3.21,
KOV Thm 3.3), each increasing in k and in the per-mechanism epsilon; the searches only rely
on that monotonicity (docs/mathematics.md §5).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from dpcalc.core.special import find_root

# The largest k the inverse question (max_k) searches up to; beyond it the answer is reported
# as at least this many with a warning.
MAX_K_SEARCHED = 10**10


def largest_epsilon(total: Callable[[float], float], target: float, start: float) -> float:
    """The largest eps with total(eps) <= target, total continuous and increasing from total(0) = 0
    (the per-mechanism inverse of docs/mathematics.md §5).

    `start` is a value expected to be within the target. The bracket grows from it by the
    proportional step eps * target / total(eps) (the totals grow about linearly in eps), at
    least 10% and 16-fold while the total is still 0; then Brent's method. The returned value
    is stepped down (by ulps) if rounding put it a hair above the target.
    """
    if target == 0.0:
        return 0.0
    low = 0.0
    high = max(start, 1e-300)
    while True:
        value = total(high)
        if value > target:
            break
        low = high
        high = high * 16.0 if value == 0.0 else max(high * 1.1, high * target / value)
        if math.isinf(high):
            return low
    while math.isinf(total(high)):  # Brent needs finite values: shrink geometrically
        middle = math.sqrt(max(low, 1e-300) * high)
        if total(middle) <= target:
            low = middle
        else:
            high = middle
        if high <= low * (1.0 + 1e-15):
            return low
    value = find_root(lambda e: total(e) - target, low, high, rtol=1e-13)
    step = 2.0**-52
    while total(value) > target and value > low:
        value = max(value * (1.0 - step), low)
        step *= 2.0
    return value


def largest_k(value: Callable[[int], float], target: float, guess: int, limit: int) -> int:
    """The largest k in [0, limit] with value(k) <= target, for value increasing in k (the max_k
    inverse of docs/mathematics.md §5).

    Gallops up from `guess` (exact for the closed forms, so two calls) in steps of at most
    1/8 of k, then closes a wide bracket with Brent's method on the continuous relaxation
    x -> value(floor(x)) (value is smooth at large scale, so this takes a handful of calls
    where bisection would take log2(k)), and settles the last integers by bisection.
    When value is not monotone (the optimal epsilon with delta > 0 falls again once
    k delta nears 1), this finds the end of the first run within the target that the
    1/8 steps do not jump over.
    """
    if limit < 1 or value(1) > target:
        return 0
    low = min(max(guess, 1), limit)
    if value(low) > target:
        low, high = 1, low
    else:
        growth = 1
        while True:
            if low == limit:
                return limit
            candidate = min(low + growth, limit)
            if value(candidate) > target:
                high = candidate
                break
            low = candidate
            growth = max(low // 8, 1)
    # value(low) <= target < value(high)
    if high - low > 8:
        root = find_root(lambda x: value(math.floor(x)) - target, float(low), float(high), xtol=1.0)
        k = min(max(math.floor(root), low), high - 1)
        step = 1
        if value(k) <= target:
            low = k
            while low + step < high and value(low + step) <= target:
                low, step = low + step, 2 * step
            high = min(high, low + step)
        else:
            high = k
            while high - step > low and value(high - step) > target:
                high, step = high - step, 2 * step
            low = max(low, high - step)
    while high - low > 1:
        middle = (low + high) // 2
        if value(middle) <= target:
            low = middle
        else:
            high = middle
    return low


def largest_count(holds: Callable[[int], bool], estimate: float) -> int:
    """The largest k in [0, MAX_K_SEARCHED] with holds(k), for holds true up to some k and false beyond
    (a theorem's reach of a total delta, docs/mathematics.md §5).

    `estimate` is that k up to floating-point rounding (a few units at most): the exact test
    `holds` settles the last units.
    """
    k = MAX_K_SEARCHED if not estimate < MAX_K_SEARCHED else max(int(estimate), 0)
    while k > 0 and not holds(k):
        k -= 1
    while k < MAX_K_SEARCHED and holds(k + 1):
        k += 1
    return k


def guess(value: float) -> int:
    """`value` as a starting k for `largest_k`: truncated, MAX_K_SEARCHED when above it or not finite
    (docs/mathematics.md §5)."""
    if not math.isfinite(value) or value > MAX_K_SEARCHED:
        return MAX_K_SEARCHED
    return int(value)


def delta_cap(delta: float, delta_prime: float) -> int:
    """The largest k with k delta + delta' < 1 (MAX_K_SEARCHED when delta = 0): beyond it the total
    delta of DR Thm 3.16 / DRV Thm III.3 says nothing."""
    if delta == 0.0:
        return MAX_K_SEARCHED
    quotient = (1.0 - delta_prime) / delta
    if not quotient < MAX_K_SEARCHED:  # also inf, for a subnormal delta
        return MAX_K_SEARCHED
    k = int(quotient)
    while k > 0 and k * delta + delta_prime >= 1.0:
        k -= 1
    return min(k, MAX_K_SEARCHED)
