"""Per-step RDP of the Gaussian mechanism on fixed-size batches (sampling without replacement).

Source: Wang, Balle, Kasiviswanathan, "Subsampled Renyi Differential Privacy and Analytical
Moments Accountant" (AISTATS 2019, arXiv 1808.00087), "WBK", Theorem 27: the bound of their
Theorem 9 strengthened, for base mechanisms whose worst pair of neighbouring datasets is the same
at every order (their Definition 26; the Gaussian mechanism is one), by the Pearson-Vajda
moments of that pair. Convexity of the cumulant generating function for fractional orders:
van Erven, Harremoes, "Renyi divergence and Kullback-Leibler divergence" (IEEE Trans. IT 2014).

Setting. A batch of b records is drawn uniformly without replacement from n, gamma = b / n, and
the Gaussian mechanism with noise multiplier sigma (noise standard deviation over the clipping
norm C) runs on it; neighbouring datasets differ by replacing one record, so the sensitivity of
the clipped sum is 2 C. With kappa = 2 / sigma^2 the unsampled mechanism has RDP
eps(a) = kappa a = a / (2 (sigma / 2)^2), and its worst pair p = N(2, sigma^2), q = N(0, sigma^2)
(in units of C) has the likelihood ratio L = p / q = e^X, X ~ N(-kappa, 2 kappa) under q, with
the moments E_q[L^i] = e^((i - 1) eps(i)) = e^(kappa i (i - 1)).

WBK Thm 27 for the Gaussian (eps(inf) = inf, so the pure-DP factors min(2, (e^eps(inf) - 1)^j)
are 2), at integer orders a >= 2:

    A_a = 1 + sum_{j=2..a} C(a, j) gamma^j T_j,   T_j = min(4 B_j, 2 e^(kappa j (j - 1))),
    B_j = Xi_j (j even),   B_j = sqrt(Xi_{j-1} Xi_{j+1}) (j odd, Cauchy-Schwarz),
    Xi_{2k} = E_q[(L - 1)^{2k}] = sum_{i=0..2k} (-1)^i C(2k, i) e^(kappa i (i - 1)),

and eps_wor(a) <= log(A_a) / (a - 1). At j = 2 this is WBK's
min(4 (e^eps(2) - 1), 2 e^eps(2)), since Xi_2 = e^(2 kappa) - 1. The unsampled value kappa a is
an upper bound too (coupling the batches of the two datasets, each pair of batches is a pair of
replace-one neighbours, and the Renyi divergence is jointly quasi-convex: van Erven, Harremoes
2014), so the curve returned is min(log(A_a) / (a - 1), kappa a).

Fractional orders. (a - 1) eps(a) of a pair of distributions is the logarithm of a moment
generating function, hence convex in a, and it is 0 at a = 1 (van Erven, Harremoes 2014). A
chord of a convex function lies above it, so the linear interpolation of the upper bounds
c(n) = min(log A_n, (n - 1) kappa n) between floor(a) and ceil(a) (between c(1) = 0 and c(2)
for 1 < a < 2, which gives eps(a) <= c(2)) bounds (a - 1) eps(a) above; the value is then
min(chord / (a - 1), kappa a). (dp_accounting interpolates the same way, citing WBK Cor. 10.)

Numerics. Everything is in log space, so that tiny values (gamma = 1e-6, sigma = 50) keep their
relative precision and huge ones (a = 1e5, sigma = 0.3) do not overflow: log A_a is
log1p(exp(logsumexp of the log terms)), each term log C(a, j) + j log gamma + log T_j.

The alternating sum Xi_{2k} cancels catastrophically where it matters (sigma = 50, k = 5: terms
of size 256 add up to 1.2e-11), so it is not summed. Since (e^x - 1)^{2k} = e^{kx} (2 sinh(x/2))^{2k},
tilting by e^{kX} gives

    Xi_{2k} = e^(kappa k (k - 1)) E[(4 sinh^2(Y / 2))^k],   Y ~ N(kappa (2k - 1), 2 kappa),

an integral of positive terms. log(4 sinh^2(y / 2)) is concave on y > 0 and on y < 0, so on each
half-line the integrand is log-concave: one bump, whose top `_bump` finds by Newton's method.
`_log_bump_integral` integrates each bump with the trapezoid rule in s = log |y|, which maps the
half-line onto the real line, where the integrand is entire and decays at both ends: the rule
converges geometrically (measured against mpmath: a few ulps of log Xi). Xi_2 is exact.

Where Xi is close to its plain moment e^(kappa 2k (2k - 1)) (kappa k >~ log k), the term 4 B_j
cannot be the smaller one: `_log_xi_even` leaves those Xi out (as +inf), which changes no term.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dpcalc.core.arrays import sorted_distinct
from dpcalc.core.limits import SUMMED_ORDER
from dpcalc.core.rdp.integer_orders import _log_binomial, _segment_log_sum_exp, _segments
from dpcalc.core.rdp.orders import _check_orders
from dpcalc.core.special_array import log1p_exp, log_expm1
from dpcalc.core.validation import POSITIVE, PROBABILITY

_LOG2 = math.log(2.0)
_LOG4 = math.log(4.0)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)

# Trapezoid rules for one bump of the Xi integrand, in units of its width w (the inverse square
# root of minus the second derivative of its log at the top, in s = log|y|): nodes from
# top - left w to top + right w, spaced w / per_width. Small k have a long exponential left tail
# (the integrand falls like |y|^{2k} towards 0), larger ones are closer to a Gaussian. Both rules
# reproduce mpmath to a few ulps of log Xi (tests/core/test_rdp_uniform.py); at the window's ends
# the integrand is below e^-40 of the integral (measured for kappa from 1e-10 to 1e3).
_RULE_SMALL_K = (36.0, 12.0, 3.0)  # (left, right, per_width): 145 nodes, for k < _SMALL_K
_RULE_LARGE_K = (16.0, 10.0, 2.5)  # 66 nodes
_SMALL_K = 16

# Newton's method for the top of a bump: it converges from below without overshooting (see
# `_bump`); it stops when no step is larger than this relative to the iterate.
_NEWTON_TOLERANCE = 1e-15
_NEWTON_MAX_STEPS = 100

# Xi_{2k} is computed only while a cheap lower bound of Xi_{2k} / e^(kappa 2k (2k - 1)) stays
# below this: above 1/2 the term 4 B_j is at least the other one, 2 e^(kappa j (j - 1)).
_XI_NEEDED_BELOW = 0.6
# A normal variable lies above its mean minus this many standard deviations with probability
# 1 - 1e-17 (for the lower bound above).
_LOWER_TAIL_SDS = 8.5

# Flat term arrays hold at most this many terms at a time (memory: a few float64 arrays).
_TERMS_PER_CHUNK = 2_000_000
# Xi integrals are evaluated for at most this many k at a time (times the nodes of the rule).
_XI_PER_CHUNK = 4096


def uniform_gaussian_rdp(
    sampling_probability: float, noise_multiplier: float, orders: Sequence[float] | np.ndarray
) -> np.ndarray:
    """Per-step RDP upper bound of the Gaussian mechanism on batches of b of n records drawn
    without replacement (gamma = b / n), under replace-one neighbours, at each order (WBK Thm 27).

    noise_multiplier is sigma, the noise standard deviation over the clipping norm; the
    replace-one sensitivity is twice the clipping norm, so the unsampled mechanism has RDP
    2 a / sigma^2. At an integer order a the value is min(log(A_a) / (a - 1), 2 a / sigma^2) with
    A_a from WBK Thm 27 (module docstring). At a fractional order a it is the chord of the
    cumulant generating function bounds (a - 1) eps between floor(a) and ceil(a), divided by
    a - 1 (between 1, where it is 0, and 2 for 1 < a < 2), and at most 2 a / sigma^2: sound
    because (a - 1) eps(a) is convex in a and 0 at a = 1.

    sampling_probability = 0 gives 0; sampling_probability = 1 gives 2 a / sigma^2 exactly, and so do orders above SUMMED_ORDER
    (1e5), where the Thm 27 sum (a terms) is not evaluated: an upper bound there. Values are float64, +inf where the
    bound exceeds float64 (sigma so small that 2 / sigma^2 overflows).
    """
    PROBABILITY.check("sampling_probability", sampling_probability)
    POSITIVE.check("noise_multiplier", noise_multiplier)
    order_array = _check_orders(orders)
    gamma, sigma = float(sampling_probability), float(noise_multiplier)
    if gamma == 0.0:  # an empty batch: RDP 0 at every order (`phases.samples_nothing`)
        return np.zeros_like(order_array)
    sigma_squared = sigma * sigma  # Python floats: inf or 0 past float64's range, no exception
    if sigma_squared == 0.0 or math.isinf(2.0 / sigma_squared):
        return np.full_like(order_array, np.inf)
    kappa = 2.0 / sigma_squared
    with np.errstate(over="ignore"):
        unsampled: np.ndarray = 2.0 * order_array / sigma_squared
    if gamma == 1.0 or kappa == 0.0:
        # kappa == 0: sigma^2 overflowed; every term of the bound is 0 as well.
        return unsampled
    large = order_array > SUMMED_ORDER
    if large.any():
        # above SUMMED_ORDER (a terms an order): the unsampled value, an upper bound at every order
        result_all: np.ndarray = unsampled.copy()
        if (~large).any():
            result_all[~large] = uniform_gaussian_rdp(gamma, sigma, order_array[~large])
        return result_all

    floor = np.floor(order_array)
    is_integer = floor == order_array
    low = np.where(is_integer, floor, np.maximum(floor, 1.0))  # 1 < a < 2: from a = 1 ...
    high = np.where(is_integer, floor, np.maximum(floor + 1.0, 2.0))  # ... to a = 2
    needed = sorted_distinct(np.concatenate((low[low >= 2.0], high))).astype(np.int64)
    log_a = _log_a(gamma, kappa, needed)

    with np.errstate(over="ignore", invalid="ignore"):
        # the CGF bound c(n) = min(log A_n, (n - 1) kappa n), with c(1) = 0
        needed_float = needed.astype(np.float64)
        cgf = np.minimum(log_a, (needed_float - 1.0) * (2.0 * needed_float / sigma_squared))
        index_low = np.searchsorted(needed, low.astype(np.int64))
        index_high = np.searchsorted(needed, high.astype(np.int64))
        cgf_low = np.where(low >= 2.0, cgf[np.minimum(index_low, needed.size - 1)], 0.0)
        cgf_high = cgf[index_high]
        fraction = order_array - low
        chord = (1.0 - fraction) * cgf_low + fraction * cgf_high
        # integer orders: log A_a / (a - 1) itself, so that the minimum with 2 a / sigma^2 is
        # exact; 1 < a < 2: c(2), the chord from c(1) = 0 divided by a - 1, without its rounding
        bound = np.where(
            is_integer,
            log_a[index_high] / (order_array - 1.0),
            np.where(low < 2.0, cgf_high, chord / (order_array - 1.0)),
        )
        result: np.ndarray = np.minimum(bound, unsampled)
    return result


def _log_a(gamma: float, kappa: float, orders: np.ndarray) -> np.ndarray:
    """log A_a of WBK Thm 27 at each integer order a >= 2 (ascending, distinct), 0 < gamma < 1."""
    largest = int(orders[-1])
    log_term = _log_thm27_terms(kappa, largest)  # log T_j, j = 0..largest (0, 1 unused)
    log_gamma = math.log(gamma)
    result = np.empty(orders.size)
    start = 0
    for stop in _chunk_ends(orders):
        chunk = orders[start:stop]
        segment, position, starts = _segments(chunk - 1)
        order = chunk[segment].astype(np.float64)
        j = position + 2
        with np.errstate(over="ignore", invalid="ignore"):
            log_terms = _log_binomial(order, j.astype(np.float64)) + j * log_gamma + log_term[j]
            result[start:stop] = log1p_exp(_segment_log_sum_exp(log_terms, starts, segment))
        start = stop
    return result


def _chunk_ends(orders: np.ndarray) -> list[int]:
    """Ends of consecutive groups of orders of at most _TERMS_PER_CHUNK terms (a - 1 each; a
    single larger order is a group of its own)."""
    ends, used = [], 0
    for index, order in enumerate(orders.tolist()):
        if used and used + order - 1 > _TERMS_PER_CHUNK:
            ends.append(index)
            used = 0
        used += order - 1
    ends.append(orders.size)
    return ends


def _log_thm27_terms(kappa: float, largest: int) -> np.ndarray:
    """log T_j = log min(4 B_j, 2 e^(kappa j (j - 1))) for j = 0..largest (entries 0, 1 unused)."""
    j = np.arange(largest + 1, dtype=np.float64)
    log_xi = _log_xi_even(kappa, (largest + 1) // 2)  # log Xi_{2k}, k = 0..(largest + 1) // 2
    half_floor = np.arange(largest + 1) // 2
    half_ceil = (np.arange(largest + 1) + 1) // 2
    with np.errstate(over="ignore", invalid="ignore"):
        log_pearson_vajda = _LOG4 + 0.5 * (log_xi[half_floor] + log_xi[half_ceil])
        log_moment = _LOG2 + kappa * j * (j - 1.0)
        result: np.ndarray = np.minimum(log_pearson_vajda, log_moment)
    return result


def _log_xi_even(kappa: float, largest_k: int) -> np.ndarray:
    """log Xi_{2k} = log E_q[(L - 1)^{2k}] for k = 0..largest_k; +inf where not needed.

    Entry 0 is unused (+inf). Xi_2 = e^(2 kappa) - 1 exactly. For k >= 2 while needed: the two
    half-line integrals of the tilted form (module docstring), each by `_log_bump_integral`.
    Xi_{2k} is needed until the lower bound Xi_{2k} / M_{2k} >= (1 - e^-t)^{2k} (t: the tilted
    mean (4k - 1) kappa less _LOWER_TAIL_SDS standard deviations) is at least _XI_NEEDED_BELOW
    for this and every larger k: then 4 B_j >= 2 e^(kappa j (j - 1)) for j > 2k, since
    sqrt(M_{j-1} M_{j+1}) = e^kappa M_j. Xi is kept up to the first such k, so that the odd j
    next to it keep the exact minimum.
    """
    result = np.full(largest_k + 1, np.inf)
    if largest_k < 1:
        return result
    result[1] = float(log_expm1(2.0 * kappa))
    k = np.arange(2, largest_k + 1, dtype=np.float64)
    if k.size == 0:
        return result
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        t = (4.0 * k - 1.0) * kappa - _LOWER_TAIL_SDS * math.sqrt(2.0 * kappa)
        log_ratio_bound = np.where(t > 0.0, 2.0 * k * np.log1p(-np.exp(-t)), -np.inf)
    large_enough = log_ratio_bound >= math.log(_XI_NEEDED_BELOW)
    from_here_on = np.logical_and.accumulate(large_enough[::-1])[::-1]
    first_skipped = int(np.argmax(from_here_on)) if from_here_on.any() else k.size
    wanted = k[: min(first_skipped + 1, k.size)]
    for start in range(0, wanted.size, _XI_PER_CHUNK):
        chunk = wanted[start : start + _XI_PER_CHUNK]
        result[chunk.astype(np.int64)] = _log_xi_integral(kappa, chunk)
    return result


def _log_xi_integral(kappa: float, k: np.ndarray) -> np.ndarray:
    """log Xi_{2k} for k >= 2 by the tilted integral: kappa k (k - 1) + log E[(4 sinh^2(Y/2))^k].

    In units of the standard deviation r = sqrt(2 kappa), Y = r U with U ~ N(mu, 1),
    mu = r (2k - 1) / 2; the half-lines U > 0 and U < 0 (the latter as U > 0 with mu -> -mu).
    """
    r = math.sqrt(2.0 * kappa)
    mu = r * (2.0 * k - 1.0) / 2.0
    small = k < _SMALL_K
    log_expectation = np.empty_like(k)
    for part, rule in ((small, _RULE_SMALL_K), (~small, _RULE_LARGE_K)):
        if part.any():
            kp, mup = k[part], mu[part]
            positive = _log_bump_integral(r, kp, mup, rule)
            negative = _log_bump_integral(r, kp, -mup, rule)
            log_expectation[part] = np.logaddexp(positive, negative) - _HALF_LOG_2PI
    result: np.ndarray = kappa * k * (k - 1.0) + log_expectation
    return result


def _bump(r: float, k: np.ndarray, centre: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The top u* > 0 of g(u) = k l(r u) - (u - centre)^2 / 2, l(y) = log(4 sinh^2(y / 2)), and
    g''(u*) < 0.

    g'(u) = k r coth(r u / 2) - (u - centre) is convex and decreasing on u > 0, from +inf to
    -inf: Newton's method started where g' >= 0 climbs to its root without overshooting. Start:
    coth(y / 2) >= max(1, 2 / y), so u* >= centre + k r and u* >= the positive root of
    u^2 - centre u - 2k = 0.
    """
    root = np.sqrt(centre * centre + 8.0 * k)
    quadratic = np.where(centre >= 0.0, (centre + root) / 2.0, 4.0 * k / (root + np.abs(centre)))
    u = np.maximum(centre + k * r, quadratic)
    for _ in range(_NEWTON_MAX_STEPS):
        slope, curvature = _slope_and_curvature(r, k, centre, u)
        step = -slope / curvature
        u = u + np.maximum(step, 0.0)
        if np.all(step <= _NEWTON_TOLERANCE * u):
            break
    _, curvature = _slope_and_curvature(r, k, centre, u)
    return u, curvature


def _slope_and_curvature(r: float, k: np.ndarray, centre: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """g'(u) and g''(u) of `_bump`, without 1/r or r^2 (r may be ~1e-150): with e = e^-ru,
    r coth(r u / 2) = (1 + e) r / (1 - e) and r^2 / (2 sinh^2(r u / 2)) = 2 e (r / (1 - e))^2."""
    e = np.exp(-r * u)
    r_over = r / -np.expm1(-r * u)
    slope = k * (1.0 + e) * r_over - (u - centre)
    curvature = -k * 2.0 * e * r_over * r_over - 1.0
    return slope, curvature


def _log_bump_integral(r: float, k: np.ndarray, centre: np.ndarray, rule: tuple[float, float, float]) -> np.ndarray:
    """log of the integral over u > 0 of exp(k l(r u) - (u - centre)^2 / 2), by the trapezoid rule
    in s = log u around the bump's top (`_bump`), with the nodes of `rule`."""
    left, right, per_width = rule
    top, curvature = _bump(r, k, centre)
    width = 1.0 / (top * np.sqrt(-curvature))  # in s: d^2/ds^2 = u^2 g'' at the top, where g' = 0
    step = width / per_width
    offsets = np.arange(-round(left * per_width), round(right * per_width) + 1, dtype=np.float64)
    s = np.log(top)[:, None] + step[:, None] * offsets[None, :]
    u = np.exp(s)
    y = r * u
    log_four_sinh_squared = y + 2.0 * np.log(-np.expm1(-y))
    log_integrand = k[:, None] * log_four_sinh_squared - 0.5 * (u - centre[:, None]) ** 2 + s
    peak = log_integrand.max(axis=1)
    result: np.ndarray = peak + np.log(np.exp(log_integrand - peak[:, None]).sum(axis=1)) + np.log(step)
    return result
