"""Masses of intervals under the standard normal, log P(low <= Z < high), with a certified
relative error (`log_interval_mass`): the cell masses of the Gaussian pairs (S2 of
docs/pld-soundness.md). Narrow intervals take Simpson's rule on the density with its remainder
bound, wider ones the difference of two tails (`normal`) on the side where both are small.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dpcalc.core.pld.normal import (
    LOG_SQRT_2PI,
    NORMAL_RELATIVE_ERROR,
    UNIT_ROUNDOFF,
    mills_ratio,
    upper_tail,
)

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
        if len(where) == low.size and low.ndim == 1:
            # every interval narrow (most calls of a fine discretisation): Simpson on the whole
            # arrays, without gathering (elementwise: the same values)
            log_s, rel_s = _simpson(low, high, width4)
        else:
            log_s, rel_s = _simpson(low[where], high[where], width4[where])
        good = np.isfinite(log_s) & (rel_s <= _SIMPSON_ACCEPT)
        if len(where) == low.size and low.ndim == 1 and good.all():
            # accepted everywhere: the steps below would find no interval to work on
            return log_s, rel_s
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
            log_deep = -0.5 * aa * aa - LOG_SQRT_2PI + log_ra + np.log(one_minus)
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
        log_density_c -= LOG_SQRT_2PI
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
