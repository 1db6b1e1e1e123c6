"""Vectorised standard normal tail probabilities for the PLD accountant (numpy only).

numpy has no erf, and scipy.special costs about 130 ms more to import than numpy itself, more
than the whole composition of the design-card case. The two formulas used are those of
`dpcalc.core.special`, evaluated on arrays:

* |t| < 1.5: erf(z) = (2/sqrt(pi)) e^(-z^2) sum_n (2 z^2)^n z / (1 * 3 * ... * (2n + 1))
  (Abramowitz and Stegun 7.1.6), a series of positive terms, so no cancellation; with
  z = t / sqrt(2) <= 1.07 forty terms reach 1e-19 relative.
* t >= 1.5: the upper tail Phi(-t) = phi(t) R(t) with the Mills ratio R from Laplace's
  continued fraction R(t) = 1/(t + 1/(t + 2/(t + 3/(t + ...)))) (A&S 26.2.14), evaluated
  backwards with a number of terms per range of t (`_CF_BUCKETS`): 20 + 400/t^2 below 4, and
  from 4 on a few more than the fewest that reach 2 ulps against mpmath (measured at 400 points
  of each range: 32 terms at t = 4, 20 at 6, 14 at 10 and beyond; tests/core/pld/test_normal.py
  checks the whole range).

`NORMAL_RELATIVE_ERROR` is the relative error bound the accountant assumes for every value
returned here (tail probabilities, their logarithms relative to their size, and log R);
tests/core/pld/test_normal.py checks it against mpmath with a wide margin. The masses of intervals
built from these tails are `normal_interval`'s.
"""

from __future__ import annotations

import math

import numpy as np

UNIT_ROUNDOFF = 2.0**-53

# Assumed relative error of each tail value returned by this module, beyond the u * t^2/2 that
# exp(-t^2/2) carries in the upper tail (counted separately). Measured against mpmath (50
# digits): at most 19 ulps, near t = 1.45 where 1 - erf cancels; 128 ulps leave a factor of 6.
NORMAL_RELATIVE_ERROR = 128.0 * UNIT_ROUNDOFF

_SQRT2 = math.sqrt(2.0)
LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_CENTRAL = 1.5  # |t| below this: the erf series; above: the continued fraction
_SERIES_TERMS = 40

# Term counts of the continued fraction by bucket of t: 20 + 400/t^2 at the bucket's lower edge
# below 4 (used for the Taylor anchors); from 4 on, where most calls land, the measured count for
# 2 ulps plus a margin (module docstring).
_CF_BUCKETS = ((1.5, 198), (2.0, 120), (3.0, 65), (4.0, 36), (6.0, 22), (10.0, 16))


def _erf_series(z: np.ndarray) -> np.ndarray:
    """erf(z) for 0 <= z < 1.07 by the positive series A&S 7.1.6."""
    two_z2 = 2.0 * z * z
    term = z.copy()
    total = z.copy()
    for n in range(1, _SERIES_TERMS):
        # term = term * two_z2 / (2n + 1); total = total + term (in place: the same operations)
        np.multiply(term, two_z2, out=term)
        np.divide(term, 2 * n + 1, out=term)
        np.add(total, term, out=total)
    out: np.ndarray = _TWO_OVER_SQRT_PI * np.exp(-z * z) * total
    return out


_CF_LOWS = np.array([low for low, _ in _CF_BUCKETS])


def _mills_ratio_cf(t: np.ndarray) -> np.ndarray:
    """R(t) for t >= 1.5 by Laplace's continued fraction (see the module docstring).

    Each point takes its bucket's number of terms, f = t + k/f for k = terms .. 1 from f = t.
    The points are grouped by bucket, most terms first, so that at each k the points still
    iterating are a leading slice: one pass over the terms for all buckets at once, each point
    seeing exactly its own bucket's operations.
    """
    t = np.asarray(t, dtype=float)
    if t.size == 0:
        return np.empty_like(t)
    flat = t.reshape(-1)
    # bucket of each point (0 .. 5; below 1.5, outside the domain, counted with the first)
    bucket = np.maximum(np.searchsorted(_CF_LOWS, flat, side="right") - 1, 0).astype(np.int8)
    counts = np.bincount(bucket, minlength=len(_CF_BUCKETS))
    if counts.max() == len(flat):
        order = None
        x = flat
    else:
        order = np.argsort(bucket, kind="stable")
        x = flat[order]
    f = x.copy()
    active = 0
    for index, (_, terms) in enumerate(_CF_BUCKETS):
        active += int(counts[index])
        if active == 0:
            continue
        fewer = _CF_BUCKETS[index + 1][1] if index + 1 < len(_CF_BUCKETS) else 0
        f_part, x_part = f[:active], x[:active]
        for k in range(terms, fewer, -1):
            # f = x + k / f, in place
            np.divide(k, f_part, out=f_part)
            np.add(x_part, f_part, out=f_part)
    np.divide(1.0, f, out=f)
    if order is None:
        out = f
    else:
        out = np.empty_like(f)
        out[order] = f
    out[np.isinf(flat)] = 0.0
    result: np.ndarray = out.reshape(t.shape)
    return result


# Between 1.5 and _TAYLOR_TO, where the continued fraction needs 45 to 198 terms, R is
# evaluated from its Taylor series about the nearest anchor t0 = 1.5 + j/_ANCHORS_PER_UNIT,
# whose value comes from the continued fraction (once per process). R solves R' = t R - 1, so
# the coefficients c_n = R^(n)(t0)/n! satisfy c_1 = t0 c_0 - 1 and
# c_(n+1) = (t0 c_n + c_(n-1))/(n + 1). With |t - t0| <= 1/32, 12 terms give full precision
# (tests/core/pld/test_normal.py checks it against mpmath).
_TAYLOR_TO = 4.0
_ANCHORS_PER_UNIT = 16
_TAYLOR_TERMS = 12
_ANCHOR_VALUES: np.ndarray | None = None


def _anchor_values() -> np.ndarray:
    global _ANCHOR_VALUES
    if _ANCHOR_VALUES is None:
        count = int((_TAYLOR_TO - _CENTRAL) * _ANCHORS_PER_UNIT) + 2
        _ANCHOR_VALUES = _mills_ratio_cf(_CENTRAL + np.arange(count) / _ANCHORS_PER_UNIT)
    return _ANCHOR_VALUES


def mills_ratio(t: np.ndarray) -> np.ndarray:
    """R(t) = Phi(-t)/phi(t) for t >= 1.5 (Taylor series about tabulated anchors, or the CF)."""
    t = np.asarray(t, dtype=float)
    near = t < _TAYLOR_TO
    near_count = int(np.count_nonzero(near))
    if near_count == 0:
        return _mills_ratio_cf(t)
    whole = near_count == t.size and t.ndim == 1
    x = t if whole else t[near]
    index = np.rint((x - _CENTRAL) * _ANCHORS_PER_UNIT).astype(np.int64)
    t0 = _CENTRAL + index / _ANCHORS_PER_UNIT
    d = x - t0
    previous = _anchor_values()[index]
    current = t0 * previous - 1.0
    value = previous + current * d
    power = d.copy()
    scratch = np.empty_like(d)
    for n in range(1, _TAYLOR_TERMS - 1):
        # previous, current = current, (t0 current + previous)/(n + 1); power = power d;
        # value = value + current power (in place: the same operations)
        np.multiply(t0, current, out=scratch)
        np.add(scratch, previous, out=scratch)
        np.divide(scratch, n + 1, out=scratch)
        previous, current, scratch = current, scratch, previous
        np.multiply(power, d, out=power)
        np.add(value, np.multiply(current, power, out=scratch), out=value)
    if whole:
        out: np.ndarray = value
        return out
    out = np.empty_like(t)
    out[near] = value
    far = ~near
    out[far] = _mills_ratio_cf(t[far])
    return out


def upper_tail(t: np.ndarray) -> np.ndarray:
    """Phi(-t) = P(Z >= t) with full relative precision in the upper tail (underflows past t ~ 38)."""
    t = np.asarray(t, dtype=float)
    central = np.abs(t) < _CENTRAL
    high = t >= _CENTRAL
    central_count = int(np.count_nonzero(central))
    high_count = int(np.count_nonzero(high))
    # where one branch takes every point, its values are the result (no masked copies)
    whole = t.ndim == 1
    if whole and central_count == t.size:
        result: np.ndarray = 0.5 - 0.5 * np.sign(t) * _erf_series(np.abs(t) / _SQRT2)
        return result
    if whole and high_count == t.size:
        with np.errstate(under="ignore"):
            result = np.exp(-0.5 * t * t - LOG_SQRT_2PI) * mills_ratio(t)
        return result
    out = np.empty_like(t)
    if central_count:
        tc = t[central]
        erf = _erf_series(np.abs(tc) / _SQRT2)
        out[central] = 0.5 - 0.5 * np.sign(tc) * erf
    low = t <= -_CENTRAL
    low_count = int(np.count_nonzero(low))
    if high_count or low_count:
        with np.errstate(under="ignore"):
            if high_count:
                th = t[high]
                out[high] = np.exp(-0.5 * th * th - LOG_SQRT_2PI) * mills_ratio(th)
            if low_count:
                tl = -t[low]
                out[low] = 1.0 - np.exp(-0.5 * tl * tl - LOG_SQRT_2PI) * mills_ratio(tl)
    return out


def log_upper_tail(t: np.ndarray) -> np.ndarray:
    """log Phi(-t), never underflowing in the upper tail."""
    t = np.asarray(t, dtype=float)
    out = np.empty_like(t)
    high = t >= _CENTRAL
    rest = ~high
    if high.any():
        th = t[high]
        out[high] = -0.5 * th * th - LOG_SQRT_2PI + np.log(mills_ratio(th))
    if rest.any():
        out[rest] = np.log(upper_tail(t[rest]))
    return out


def log_density(t: np.ndarray) -> np.ndarray:
    """log phi(t)."""
    t = np.asarray(t, dtype=float)
    out: np.ndarray = -0.5 * t * t - LOG_SQRT_2PI
    return out
