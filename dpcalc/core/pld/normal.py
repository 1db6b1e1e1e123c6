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
tests/core/pld/test_normal.py checks it against mpmath with a wide margin.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

UNIT_ROUNDOFF = 2.0**-53

# Assumed relative error of each tail value returned by this module, beyond the u * t^2/2 that
# exp(-t^2/2) carries in the upper tail (counted separately). Measured against mpmath (50
# digits): at most 19 ulps, near t = 1.45 where 1 - erf cancels; 128 ulps leave a factor of 6.
NORMAL_RELATIVE_ERROR = 128.0 * UNIT_ROUNDOFF

_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
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
            result = np.exp(-0.5 * t * t - _LOG_SQRT_2PI) * mills_ratio(t)
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
                out[high] = np.exp(-0.5 * th * th - _LOG_SQRT_2PI) * mills_ratio(th)
            if low_count:
                tl = -t[low]
                out[low] = 1.0 - np.exp(-0.5 * tl * tl - _LOG_SQRT_2PI) * mills_ratio(tl)
    return out


def log_upper_tail(t: np.ndarray) -> np.ndarray:
    """log Phi(-t), never underflowing in the upper tail."""
    t = np.asarray(t, dtype=float)
    out = np.empty_like(t)
    high = t >= _CENTRAL
    rest = ~high
    if high.any():
        th = t[high]
        out[high] = -0.5 * th * th - _LOG_SQRT_2PI + np.log(mills_ratio(th))
    if rest.any():
        out[rest] = np.log(upper_tail(t[rest]))
    return out


# A narrow interval whose Simpson bound (`_simpson`) is at most this relative error takes it
# without the difference of two tails: that difference errs by at least NORMAL_RELATIVE_ERROR
# times (tail/mass) >~ 1e-14/(a w) for an interval [a, a + w), so it could only be tighter for
# intervals about as wide as a standard deviation, where Simpson's remainder is far above this.
# Most cells of a fine discretisation are such narrow intervals: the tails are then not computed
# at all (they cost most of a step's discretisation).
_SIMPSON_ACCEPT = 2.0**-43


def log_interval_mass(low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log P(low <= Z < high) for a standard normal Z, and a bound on its relative error.

    low <= high elementwise; -inf and +inf allowed. A narrow finite interval whose Simpson
    bound is within _SIMPSON_ACCEPT takes it (`_simpson`). Otherwise the difference is taken on
    the side where both tails are small: P(Z >= low) - P(Z >= high) when low >= 0,
    P(Z < high) - P(Z < low) when high <= 0, and 1 - P(Z < low) - P(Z >= high) across zero.
    Deep in a tail (both end points beyond 3 on the same side) the difference is formed from
    the logarithms,
        log P = log Phi(-a) + log(1 - exp(log Phi(-b) - log Phi(-a))),
    with log Phi(-b) - log Phi(-a) = -(b - a)(b + a)/2 + log R(b) - log R(a), so that no tail
    value underflows; where Simpson's bound is tighter than that difference it replaces it. The
    returned relative error counts NORMAL_RELATIVE_ERROR for every tail value or log R used and
    the cancellation of the difference; the error of low and high themselves is the caller's
    (see `pairs.base._x_sensitivity`).
    """
    low = np.asarray(low, dtype=float)
    high = np.asarray(high, dtype=float)
    low, high = np.broadcast_arrays(low, high)
    log_mass = np.full(low.shape, -math.inf)
    rel_err = np.zeros(low.shape)
    eps = NORMAL_RELATIVE_ERROR
    nonempty = high > low
    with np.errstate(over="ignore", invalid="ignore"):
        # w^4 for the Simpson tests here and in _narrow_intervals, and for _simpson itself; it
        # is inf or nan, so no test passes, where an end point is infinite
        width4 = (high - low) ** 4
        narrow = nonempty & (width4 < 480.0 * _SIMPSON_ACCEPT)
    where = np.flatnonzero(narrow)
    rest = where  # narrow intervals whose Simpson bound is not accepted (below)
    if len(where):
        log_s, rel_s = _simpson(low[where], high[where], width4[where])
        good = np.isfinite(log_s) & (rel_s <= _SIMPSON_ACCEPT)
        not_good = ~good
        log_mass[where[good]] = log_s[good]
        rel_err[where[good]] = rel_s[good]
        rest = where[not_good]
        nonempty = nonempty & ~narrow
        nonempty[rest] = True  # the tails' difference below, then the better of the two
    # the intervals left for the tails' difference, by position (most are narrow: the arrays
    # below are of these alone)
    todo = np.flatnonzero(nonempty)
    low_t, high_t = low.reshape(-1)[todo], high.reshape(-1)[todo]
    # Mirror so that the interval lies mostly at or above zero: [low, high) -> (-high, -low].
    mirror = high_t + low_t < 0.0
    a = np.where(mirror, -high_t, low_t)
    b = np.where(mirror, -low_t, high_t)
    deep = a >= 3.0
    deep_count = int(np.count_nonzero(deep))
    if deep_count < len(todo):  # some shallow
        shallow = ~deep
        aa, bb = (a, b) if deep_count == 0 else (a[shallow], b[shallow])
        shallow_at = todo if deep_count == 0 else todo[shallow]
        straddle = aa < 0.0
        # P(Z < a) when a < 0 is evaluated with the tails at the ends (one call)
        tail_a, tail_b, below_straddle = _at_ends(upper_tail, aa, bb, -aa[straddle])
        below = np.zeros(aa.shape)
        below[straddle] = below_straddle
        mass = np.where(straddle, (1.0 - below) - tail_b, tail_a - tail_b)
        err = np.where(straddle, eps * (below + tail_b) + 2.0 * UNIT_ROUNDOFF, eps * (tail_a + tail_b))
        err = err + UNIT_ROUNDOFF * np.abs(mass)
        # When the difference is not resolved (mass <= err), report err with relative error 1:
        # the interval [0, 2 err] still contains the true mass.
        resolved = mass > err
        value = np.where(resolved, mass, err)
        with np.errstate(divide="ignore"):
            log_mass[shallow_at] = np.log(value)
        rel_err[shallow_at] = np.where(resolved, err / value, 1.0)
    if deep_count:
        aa, bb = (a, b) if deep_count == len(todo) else (a[deep], b[deep])
        deep_at = todo if deep_count == len(todo) else todo[deep]
        finite_b = np.isfinite(bb)
        bb_f = np.where(finite_b, bb, aa + 1.0)
        ratio_a, ratio_b, _ = _at_ends(mills_ratio, aa, bb_f)
        log_ra, log_rb = np.log(ratio_a), np.log(ratio_b)
        # d = log Phi(-b) - log Phi(-a) < 0
        d = -0.5 * (bb_f - aa) * (bb_f + aa) + (log_rb - log_ra)
        d = np.where(finite_b, d, -math.inf)
        d_err = 2.0 * eps + 4.0 * UNIT_ROUNDOFF * (np.abs(log_ra) + np.abs(log_rb) + 0.5 * np.abs(bb_f * bb_f - aa * aa))
        d_err = np.where(finite_b, d_err, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            one_minus = -np.expm1(d)  # 1 - e^d in (0, 1]
            log_deep = -0.5 * aa * aa - _LOG_SQRT_2PI + log_ra + np.log(one_minus)
            # relative error of 1 - e^d from an error d_err in d: e^d d_err / (1 - e^d)
            factor = np.where(one_minus > 0.0, np.exp(d) * d_err / one_minus, math.inf)
        log_mass[deep_at] = log_deep
        # exp(-a^2/2) and the rounding of the returned logarithm itself
        rel_err[deep_at] = eps + factor + 8.0 * UNIT_ROUNDOFF * (1.0 + 0.5 * aa * aa) + 2.0 * UNIT_ROUNDOFF * np.abs(log_deep)
    # narrow intervals whose Simpson bound was not accepted: it replaces the tails' where tighter;
    # the wider ones get it computed where it may be
    if len(rest):
        better = np.isfinite(log_s[not_good]) & (rel_s[not_good] < rel_err[rest])
        log_mass[rest[better]] = log_s[not_good][better]
        rel_err[rest[better]] = rel_s[not_good][better]
        _narrow_intervals(low, high, nonempty & ~narrow, log_mass, rel_err, width4)
    else:
        _narrow_intervals(low, high, nonempty, log_mass, rel_err, width4)
    return log_mass, rel_err


def _at_ends(f: Callable[[np.ndarray], np.ndarray], a: np.ndarray, b: np.ndarray,
             extra: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(f(a), f(b), f(extra)) for an elementwise f, evaluated once where intervals share an end,
    in one call of f (the per-call cost of f is most of it on short arrays).

    The cells of a discretisation are contiguous, [a_i, b_i) with b_i = a_(i+1) (or, for
    cells listed from the top down and mirrored, a_i = b_(i+1)): f is evaluated at each
    point once instead of twice, with the same values, since f depends on each point alone.
    """
    n = len(a)
    points = [a, b] if n < 2 else []
    share_up = share_down = None
    if n >= 2:
        up = b[:-1] == a[1:]  # b_i is the next interval's a
        down = a[:-1] == b[1:]  # a_i is the next interval's b
        up_count, down_count = int(np.count_nonzero(up)), int(np.count_nonzero(down))
        if up_count >= down_count:
            share_up, shared_count = up, up_count
            points = [a, b[np.append(~up, True)]] if up_count < n - 1 else [a, b[-1:]]
        else:
            share_down, shared_count = down, down_count
            points = [b, a[np.append(~down, True)]] if down_count < n - 1 else [b, a[-1:]]
    if extra is not None and len(extra):
        points.append(extra)
    values = f(np.concatenate(points))
    first, second = values[:n], values[n:n + len(points[1])]
    more = values[n + len(points[1]):]
    if n < 2:
        return first, second, more
    other = np.empty_like(first)
    shared = share_up if share_up is not None else share_down
    assert shared is not None
    if shared_count == n - 1:
        other[:-1] = first[1:]
        other[-1] = second[0]
    else:
        other[:-1][shared] = first[1:][shared]
        other[np.append(~shared, True)] = second
    if share_up is not None:
        return first, other, more
    return other, first, more


def _narrow_intervals(low: np.ndarray, high: np.ndarray, nonempty: np.ndarray, log_mass: np.ndarray,
                      rel_err: np.ndarray, width4: np.ndarray | None = None) -> None:
    """Replace, in place, each finite interval's mass by Simpson's rule (`_simpson`) where that
    bound is tighter than the one already there. `width4`: (high - low)^4 when already known."""
    if width4 is None:
        with np.errstate(over="ignore", invalid="ignore"):
            width4 = (high - low) ** 4
    # the remainder alone is at least w^4 3 / 1440: only narrower intervals can do better (an
    # infinite end point makes w^4 inf or nan, which passes no test)
    with np.errstate(over="ignore", invalid="ignore"):
        finite = nonempty & (width4 < 480.0 * rel_err)
    where = np.flatnonzero(finite)
    if not len(where):
        return
    log_s, rel_s = _simpson(low[where], high[where], width4[where])
    better = np.isfinite(log_s) & (rel_s < rel_err[where])
    where = where[better]
    log_mass[where] = log_s[better]
    rel_err[where] = rel_s[better]


def _simpson(lo: np.ndarray, hi: np.ndarray, width4: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """log P(lo <= Z < hi) for finite lo < hi by Simpson's rule, and a bound on its relative error.

    A difference of two tails carries their error (NORMAL_RELATIVE_ERROR each), which over an
    interval much narrower than 1 is many times the mass; the PLD's connect-the-dots split
    amplifies a relative mass error by 1/h (docs/pld-soundness.md, S2). Simpson's rule on the
    density, S = (w/6)(phi(a) + 4 phi(m) + phi(b)), errs by at most w^5/2880 times the largest
    |phi^(4)| on [a, b] (the classical remainder, e.g. Atkinson, "An Introduction to Numerical
    Analysis", 2nd ed., 1989, Sec. 5.1), with |phi^(4)(t)| = |t^4 - 6 t^2 + 3| phi(t)
    <= (T^4 + 6 T^2 + 3) phi(t_near) (T the largest |t| on [a, b], t_near the smallest); since
    S >= w phi(T), the relative error is at most (w^4/2880)(T^4 + 6 T^2 + 3) e^((T^2 - t_near^2)/2),
    plus the rounding of the log-space sum (a few ulps of T^2 and of the result).
    """
    # (the formulas in comments; evaluated in place, with the same operations in the same order)
    abs_lo, abs_hi = np.abs(lo), np.abs(hi)
    far = np.maximum(abs_lo, abs_hi)
    near = np.minimum(abs_lo, abs_hi)
    near[(lo < 0.0) & (hi > 0.0)] = 0.0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        width = hi - lo
        # phi(a) + 4 phi(m) + phi(b) relative to phi(c), c the end nearer 0: the log of a sum of
        # three positive terms, each exponent -(x - c)(x + c)/2 a product of short differences
        c = np.where(abs_lo <= abs_hi, lo, hi)
        total = lo + hi
        other = total - c  # lo + hi - c
        mid = np.multiply(0.5, total, out=total)  # 0.5 (lo + hi)
        # inner = 1 + 4 exp(-0.5 (mid - c) (mid + c)) + exp(-0.5 (other - c) (other + c))
        inner = mid - c
        inner *= -0.5
        inner *= np.add(mid, c, out=mid)
        np.exp(inner, out=inner)
        inner *= 4.0
        inner += 1.0
        second = other - c
        second *= -0.5
        second *= np.add(other, c, out=other)
        inner += np.exp(second, out=second)
        # log_s = log(width / 6) + (-0.5 c c - log sqrt(2 pi)) + log(inner)
        log_s = np.log(width / 6.0)
        log_density_c = -0.5 * c
        log_density_c *= c
        log_density_c -= _LOG_SQRT_2PI
        log_s += log_density_c
        log_s += np.log(inner, out=inner)
        # spread = exp(min(0.5 (far - near) (far + near), 700))
        spread = far - near
        spread *= 0.5
        spread *= np.add(far, near, out=near)
        np.minimum(spread, 700.0, out=spread)
        np.exp(spread, out=spread)
        # twice the bound: it is nearly attained near t = 0, where phi^(4) is at its largest
        # remainder = 2 (width^4 / 2880) (far^4 + 6 far far + 3) spread
        if width4 is None:  # (hi - lo)^4, when the caller has not computed it
            width4 = width**4
        rel_s = np.divide(width4, 2880.0, out=width)
        rel_s *= 2.0
        factor = far**4
        six = np.multiply(6.0, far, out=log_density_c)
        six *= far
        factor += six
        factor += 3.0
        rel_s *= factor
        rel_s *= spread
        # rel_s = remainder + 4 u (far far + 8) + 2 u |log_s|
        square = np.multiply(far, far, out=far)
        square += 8.0
        square *= 4.0 * UNIT_ROUNDOFF
        rel_s += square
        rounding = np.abs(log_s, out=factor)
        rounding *= 2.0 * UNIT_ROUNDOFF
        rel_s += rounding
    return log_s, rel_s


def log_density(t: np.ndarray) -> np.ndarray:
    """log phi(t)."""
    t = np.asarray(t, dtype=float)
    out: np.ndarray = -0.5 * t * t - _LOG_SQRT_2PI
    return out
