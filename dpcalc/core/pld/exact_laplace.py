"""The exact privacy profile of k releases of the Laplace mechanism (no subsampling), certified
to floating-point width by interval arithmetic at a precision chosen from the terms.

One release of Laplace noise of scale b on a query of L1 sensitivity 1: with a = 1/b the privacy
loss L = log(dP/dQ) under P = Lap(0, b) (against Q = Lap(1, b); the pair is symmetric, both
directions are the same) has an atom at +a of mass 1/2, an atom at -a of mass e^(-a)/2 and the
density (1/4) e^((l - a)/2) on (-a, a). Hence P's loss law is e^(l/2) mu(dl) with the symmetric
measure

    mu = c [delta_a + delta_-a + a U(-a, a)],    c = e^(-a/2)/2,

and the loss of k releases, the sum S of k independent copies, has the law e^(s/2) mu^(*k)(ds)
(the tilt is multiplicative: Koskela, Jaelkoe, Honkela 2020, the PLD of a composition is the
convolution; Dong, Roth, Su 2022, Sec. 3 for the dominating-pair view). The hockey-stick
divergence is then

    delta(eps) = E_P[(1 - e^(eps - S))_+] = int (e^(s/2) - e^eps e^(-s/2))_+ mu^(*k)(ds).

mu^(*k) = c^k sum over j uniforms and m atoms at +a (k - j - m at -a) of the multinomial weight
k!/(j! m! (k-j-m)!) times a^j U(-a, a)^(*j) shifted by (2m + j - k) a. The density of the sum of
j uniforms on (-a, a) is (2a)^-j sum_i (-1)^i C(j, i) (x + ja - 2ai)_+^(j-1)/(j-1)! (the box
spline; Irwin-Hall), so the continuous part of mu^(*k) is

    c^k sum_{j>=1} sum_{r=0}^{k} (A_{j,r}/2^j) (x - y_r)_+^(j-1)/(j-1)!,   y_r = (2r - k) a,

with the integers A_{j,r} = C(k, j) [z^r] (1 + z)^(k-j) (1 - z)^j. It vanishes above k a, so
each truncated power is integrated over [max(eps, y_r), k a] only, in closed form
(int e^(+-t/2) t^n/n! dt = e^(+-t/2) p_n(t) with p_n = (t^n/n! - p_(n-1))/(+-1/2)).

These alternating sums cancel catastrophically in float64 (the terms reach ~2^k times the
result). Here they are evaluated in mpmath's interval arithmetic (outward-rounded, so the
enclosure is rigorous), the integers exactly and the inputs b and eps as the exact binary
numbers they are; the precision starts at 64 + 3k bits and doubles until the interval is
narrower than 2^-60 relative (deterministic: the schedule depends on the inputs alone). The
endpoints are rounded outward to float64. epsilon(delta) is a safeguarded Newton search on log
delta, certified by monotonicity: delta(eps) falls in eps, so an eps whose delta upper bound is
<= delta is an upper bound on the root, one whose lower bound is > delta a lower bound.

Cost: O(k^2) operations on integers of O(k + k a) bits (the recursions run in fixed point, the
O(k) exponentials in mpmath's intervals). Measured on a loaded two-core machine: k = 48 takes
0.03-0.1 s for delta and 0.1-0.5 s for epsilon (the most at the smallest scale, b = 0.05, and
about 1 s at b = 0.005); k = 128 about 0.4 s for delta and 3 s for epsilon. So the accountant
routes here runs of 2 to MAX_STEPS = 48 releases of scale at least MIN_SCALE = 0.05 (the grid's
own lower end); longer runs go to the grid and smaller scales to the closed forms, as before.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any

# The most releases, and the smallest scale, the exact route takes (cost: see the docstring).
MAX_STEPS = 48
MIN_SCALE = 0.05
# Newton iterations of the epsilon search at most (bisection steps when Newton leaves the bracket),
# and the relative step at which it stops (then the bounds are certified around the root).
_MAX_ITERATIONS = 200
_ROOT_TOLERANCE = 2.0**-50
# The first relative distance from the root tried for the certified bounds (one unit in the last
# place), doubled until the certified delta there brackets the target.
_FIRST_OFFSET = 2.0**-52
# Relative width at which the interval is accepted (before rounding outward to float64).
_TARGET_WIDTH = 2.0**-60
# Precision (bits) beyond which no more doubling is tried: the interval is then returned as it
# is (still certified, wider), which only happens for deltas far below 1e-300.
_MAX_PRECISION = 1 << 15

EXACT_LAPLACE_ANALYSIS = (
    "exact: the Laplace mechanism's privacy profile composed k times (convolution of its "
    "privacy-loss law, box-spline closed form, interval arithmetic; docs/mathematics.md)"
)


@functools.lru_cache(maxsize=8)
def _coefficients(k: int) -> tuple[tuple[int, ...], ...]:
    """A_{j,r} = C(k, j) [z^r] (1 + z)^(k-j) (1 - z)^j for j = 1..k (row j - 1), r = 0..k."""
    poly = [math.comb(k, r) for r in range(k + 1)]  # (1 + z)^k
    rows = []
    for j in range(1, k + 1):
        # multiply by (1 - z), divide by (1 + z) (exactly: (1 + z) divides it while j <= k)
        times = [poly[r] - (poly[r - 1] if r else 0) for r in range(k + 1)]
        quotient = [0] * (k + 1)
        carry = 0
        for r in range(k + 1):
            quotient[r] = times[r] - carry
            carry = quotient[r]
        poly = quotient
        weight = math.comb(k, j)
        rows.append(tuple(weight * value for value in poly))
    return tuple(rows)


def _delta_interval(k: int, scale: float, epsilon: float, precision: int) -> tuple[Any, Any]:
    """Interval enclosures of delta(eps) and of -d delta/d eps = e^eps E_mu[e^(-S/2) 1{S > eps}]
    at `precision` bits."""
    from mpmath import iv  # type: ignore[import-untyped]

    saved = iv.prec
    iv.prec = precision
    try:
        return _delta_terms(k, scale, epsilon, iv)
    finally:
        iv.prec = saved


def _fixed(value: Any, bits: int) -> tuple[int, int]:
    """[floor, ceil] of an mpmath interval's endpoints times 2^bits, as integers (finite ones)."""

    def scaled(raw: tuple[int, int, int, int], up: bool) -> int:
        sign, mantissa, exponent, _ = raw
        number = -mantissa if sign else mantissa
        shift = exponent + bits
        if shift >= 0:
            return number << shift
        return -((-number) >> -shift) if up else number >> -shift

    low, high = value._mpi_
    return scaled(low, False), scaled(high, True)


def _unfixed(low: int, high: int, bits: int, iv: Any) -> Any:
    """The interval [low, high] / 2^bits in `iv` (outward-rounded)."""
    return iv.mpf([low, high]) * iv.mpf(2) ** -bits


def _delta_terms(k: int, scale: float, epsilon: float, iv: Any) -> tuple[Any, Any]:
    """`_delta_interval`'s sums, at the precision set on `iv`.

    The O(k^2) recursions of the truncated-power integrals run in fixed point on Python integers
    (value = integer / 2^bits), each quantity a [low, high] pair rounded outward, and their
    weighted sums over n are exact; the O(k) exponentials and the final products use `iv`.
    """
    bits = iv.prec
    one = 1 << bits
    a = iv.mpf(1) / iv.mpf(scale)
    eps = iv.mpf(epsilon)
    top = k * a
    rows = _coefficients(k)
    exact_eps = Fraction(epsilon) * Fraction(scale)  # eps in units of a, exactly
    half = iv.mpf(0.5)
    e_eps_top = iv.exp(eps - top)
    total = iv.mpf(0)
    slope = iv.mpf(0)
    # atoms at x_m = (2m - k) a > eps: C(k, m) (e^((m-k) a) - e^(eps - m a)), times 2^-k below
    for m in range(k + 1):
        if 2 * m - k > exact_eps:
            weight = iv.mpf(math.comb(k, m))
            total += weight * (iv.exp((m - k) * a) - iv.exp(eps - m * a))
            slope += weight * iv.exp(eps - m * a)
    for r in range(k):
        y = (2 * r - k) * a
        above = 2 * r - k >= exact_eps  # y_r >= eps: the integral starts at y_r
        low = y if above else eps
        e_low = iv.exp((low - top) * half)  # e^((L - ka)/2)
        e_back = iv.exp(eps - (low + top) * half)  # e^(eps - (L + ka)/2)
        t1_lo, t1_hi = _fixed(2 * (k - r) * a, bits)
        t0_lo, t0_hi = (0, 0) if above else _fixed(eps - y, bits)
        t0_lo = max(t0_lo, 0)
        # t^n/n! (pow), p+_n(t) = 2 (t^n/n! - p+_(n-1)) (plus), p-_n(t) = -2 (t^n/n! - p-_(n-1))
        # (minus), p_(-1) = 0; at t1 and t0. Sums of A_{n+1,r} 2^(k-n-1) times each, exact.
        pow1 = [one, one]
        pow0 = [one, one]
        plus1 = [0, 0]
        plus0 = [0, 0]
        minus1 = [0, 0]
        minus0 = [0, 0]
        sums = [[0, 0] for _ in range(4)]
        for n in range(k):
            if n:
                divisor = n << bits
                pow1 = [pow1[0] * t1_lo // divisor, -((-pow1[1] * t1_hi) // divisor)]
                pow0 = [pow0[0] * t0_lo // divisor, -((-pow0[1] * t0_hi) // divisor)]
            plus1 = [2 * (pow1[0] - plus1[1]), 2 * (pow1[1] - plus1[0])]
            plus0 = [2 * (pow0[0] - plus0[1]), 2 * (pow0[1] - plus0[0])]
            minus1 = [2 * (minus1[0] - pow1[1]), 2 * (minus1[1] - pow1[0])]
            minus0 = [2 * (minus0[0] - pow0[1]), 2 * (minus0[1] - pow0[0])]
            weight = rows[n][r] << (k - n - 1)
            if weight == 0:
                continue
            for acc, item in zip(sums, (plus1, plus0, minus1, minus0)):
                if weight > 0:
                    acc[0] += weight * item[0]
                    acc[1] += weight * item[1]
                else:
                    acc[0] += weight * item[1]
                    acc[1] += weight * item[0]
        s_plus1, s_plus0, s_minus1, s_minus0 = (_unfixed(lo, hi, bits + k, iv) for lo, hi in sums)
        back = e_eps_top * s_minus1 - e_back * s_minus0
        total += (s_plus1 - e_low * s_plus0) - back
        slope += back
    scale_down = iv.mpf(2) ** -k
    return total * scale_down, slope * scale_down


def _to_floats(value: Any) -> tuple[float, float]:
    """The interval's endpoints rounded outward to float64."""
    from mpmath import mpf

    low, high = float(value.a), float(value.b)
    if mpf(low) > value.a:
        low = math.nextafter(low, -math.inf)
    if mpf(high) < value.b:
        high = math.nextafter(high, math.inf)
    return low, high


def _evaluate(k: int, scale: float, epsilon: float) -> tuple[tuple[float, float], tuple[float, float]]:
    """Certified float intervals on delta(eps) and on -delta'(eps), at the precision that makes
    delta's interval narrower than _TARGET_WIDTH relative (or the largest tried)."""
    from mpmath import mpf

    precision = 64 + 3 * k
    while True:
        value, slope = _delta_interval(k, scale, epsilon, precision)
        width = value.b - value.a
        if (value.a > 0 and width <= _TARGET_WIDTH * value.a) or precision >= _MAX_PRECISION:
            break
        if value.b < mpf(2) ** -1100:
            break  # below the smallest positive float: more digits change nothing
        precision *= 2
    low, high = _to_floats(value)
    slope_low, slope_high = _to_floats(slope)
    return (max(low, 0.0), min(max(high, 0.0), 1.0)), (max(slope_low, 0.0), max(slope_high, 0.0))


def _check(k: int, scale: float) -> None:
    if not (isinstance(k, int) and 1 <= k):
        raise ValueError(f"k must be a positive integer, got {k!r}")
    if not (0.0 < scale < math.inf):
        raise ValueError(f"scale must be positive and finite, got {scale!r}")


@functools.lru_cache(maxsize=256)
def laplace_composed_delta(k: int, scale: float, epsilon: float) -> tuple[float, float]:
    """Certified [lower, upper] on delta(epsilon) of k releases of the Laplace mechanism of scale
    `scale` (L1 sensitivity 1), at floating-point width (module docstring); (0, 0) from
    epsilon >= k/scale on (compared exactly), where the loss never exceeds epsilon."""
    _check(k, scale)
    if not epsilon >= 0.0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon!r}")
    if math.isinf(epsilon) or Fraction(epsilon) * Fraction(scale) >= k:
        return 0.0, 0.0
    return _evaluate(k, scale, epsilon)[0]


@functools.lru_cache(maxsize=256)
def laplace_composed_epsilon(k: int, scale: float, delta: float) -> tuple[float, float]:
    """Certified [lower, upper] on the smallest epsilon >= 0 with delta(epsilon) <= `delta` for k
    releases of the Laplace mechanism of scale `scale` (module docstring).

    A safeguarded Newton search on log delta(eps) over [0, k/scale] (delta falls from delta(0) to
    0 there) finds the root to a few units in the last place; the bounds are then checked with the
    certified delta: upper is an eps whose delta is certainly <= `delta`, lower one whose delta is
    certainly > `delta` (or 0), each moved outward a float at a time until the check holds.
    """
    _check(k, scale)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    if _evaluate(k, scale, 0.0)[0][1] <= delta:
        return 0.0, 0.0
    # the largest float below the largest loss k/b (exactly) and the smallest one from it on,
    # where delta is 0
    top = k / scale
    exact_top = Fraction(k) / Fraction(scale)
    while Fraction(top) < exact_top:
        top = math.nextafter(top, math.inf)
    below = math.nextafter(top, -math.inf)
    while Fraction(below) >= exact_top:
        below = math.nextafter(below, -math.inf)
    (below_low, below_high), _ = _evaluate(k, scale, below)
    if below_high > delta:
        # the root is above the last float below k/b (the atom at k a holds delta up to there)
        return (below if below_low > delta else 0.0), top
    low, high = 0.0, below  # delta(low) > delta >= delta(high)
    x = 0.5 * below
    log_target = math.log(delta)
    for _ in range(_MAX_ITERATIONS):
        (d_low, d_high), (s_low, s_high) = _evaluate(k, scale, x)
        value = 0.5 * (d_low + d_high)
        if value > delta:
            low = x
        else:
            high = x
        slope = 0.5 * s_low + 0.5 * s_high
        if value > 0.0 and slope > 0.0:
            # Newton on log delta: d log delta / d eps = delta'/delta
            step = x + (math.log(value) - log_target) * (value / slope)
            if abs(step - x) <= _ROOT_TOLERANCE * x:
                x = step
                break
            if low < step < high:
                x = step
                continue
        middle = 0.5 * (low + high)
        if top - high < 1e-3 * (top - low):
            # near k/b delta falls like a power of (k/b - eps): bisect that distance geometrically
            middle = top - math.sqrt((top - low) * (top - high))
        if middle in (low, high):
            break
        x = middle
    # certify: widen around the root until the certified delta brackets the target
    offset = _FIRST_OFFSET
    upper = x * (1.0 + offset)
    while _evaluate(k, scale, upper)[0][1] > delta:
        offset *= 2.0
        upper = x * (1.0 + offset)
    offset = _FIRST_OFFSET
    lower = x * (1.0 - offset)
    while lower > 0.0 and _evaluate(k, scale, lower)[0][0] <= delta:
        offset *= 2.0
        lower = x * (1.0 - offset) if offset < 1.0 else 0.0
    return max(lower, 0.0), upper
