"""Renyi differential privacy (RDP) of Poisson-subsampled Gaussian and Laplace mechanisms.

Sources: Mironov, "Renyi Differential Privacy" (CSF 2017, arXiv 1702.07476), "M17" below;
Mironov, Talwar, Zhang, "Renyi Differential Privacy of the Sampled Gaussian Mechanism"
(arXiv 1908.10530), "MTZ" below; Canonne, Kamath, Steinke (NeurIPS 2020, arXiv 2004.00010);
Cohen, Rodriguez Villegas, Zagier, "Convergence acceleration of alternating series"
(Experimental Mathematics 9, 2000), "CVZ" below.

Per step, the Poisson-subsampled Gaussian with sampling probability q and noise multiplier
sigma has RDP eps(a) = log(A_a) / (a - 1), where, with mu0 = N(0, sigma^2), mu1 = N(1, sigma^2)
and the likelihood ratio r(z) = mu1(z)/mu0(z) = exp((2z - 1)/(2 sigma^2)) (MTZ Thm 4),

    A_a = E_{z ~ mu0}[(1 - q + q r(z))^a].

Both computations below return log(A_a - 1) from sums whose cancellation is controlled, so
that tiny RDP values (q = 1e-6, sigma = 50: eps ~ 1e-16) keep their relative precision; a
plain sum of the terms of A_a = 1 + tiny cannot.

This module imports numpy and scipy.special at the top: only the rdp, pld (its closed-form
fallback), calibrate and check commands load it. Importing scipy.special here rather than inside
the functions that use it is measurably faster: the import's cost grows with the depth of the
Python stack it runs under (measured on CPython 3.11: about 112 ms at depth 0, 162 ms at depth
40), and the functions sit some 30 frames deep under click; `dpcalc rdp --json` was 0.05 s slower.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.special import gammaln, log_ndtr

from dpcalc.core.laplace import laplace_rdp
from dpcalc.core.phases import Phase
from dpcalc.core.rdp_conversion import Conversion, rdp_to_delta, rdp_to_epsilon
from dpcalc.core.special_array import log1p_exp, log_expm1
from dpcalc.core.validation import NON_NEGATIVE, OPEN_UNIT, POSITIVE, Interval, ParameterError


def _default_orders() -> tuple[float, ...]:
    grid: list[float] = []
    grid += [round(1.0 + k / 20.0, 2) for k in range(1, 200)]  # 1.05, 1.10, ..., 10.95
    grid += [11.0 + k / 2.0 for k in range(0, 42)]  # 11, 11.5, ..., 31.5
    grid += [float(k) for k in range(32, 64)]  # 32, 33, ..., 63
    grid += [float(k) for k in range(64, 128, 4)]  # 64, 68, ..., 124
    grid += [float(k) for k in range(128, 256, 16)]  # 128, 144, ..., 240
    grid += [float(k) for k in range(256, 1024, 64)]  # 256, 320, ..., 960
    grid += [1024.0, 2048.0, 4096.0]
    return tuple(grid)


# The default order grid: a superset of dp_accounting's DEFAULT_RDP_ORDERS (1.1..10.9 by 0.1,
# 11..63, 128, 256, 512, 1024), twice as dense from 1 to 32, where the optima of DP-SGD runs
# fall (epsilon between ~0.3 and ~10 at delta ~ 1e-5), and with 64..1024 filled in and 2048,
# 4096 added for small-epsilon runs. A superset is never worse: epsilon is a minimum over
# the grid. The size is bounded by speed: every order a costs ~a terms per phase.
DEFAULT_ORDERS: tuple[float, ...] = _default_orders()

# Orders above this cost more terms than any run needs: the optimum order is about
# sqrt(2 log(1/delta) / rho) for a composed RDP slope rho, so an order of 1e5 already serves
# epsilon ~ 1e-4 at delta = 1e-5.
MAX_ORDER = 1e5

ORDERS_RANGE = Interval(1.0, MAX_ORDER, high_closed=True)

# Terms of the accelerated alternating tail of the fractional-order series. The CVZ error
# is at most 2 a_0 / (3 + sqrt 8)^n, about 3e-14 a_0 for n = 18, and a_0 <= A_a (in practice
# a_0 is far smaller). Each term costs time on every fractional order of every phase.
_TAIL_TERMS = 18

# Rounding error amplification (sum of the absolute values of the pieces of A_a - 1 divided
# by A_a - 1) above which the fractional-order series is not trusted and a sound upper bound
# is used instead (see `subsampled_gaussian_rdp`). Against mpmath the relative
# error stays below 1e-15 times this amplification, so 1e6 keeps values within 1e-9; it is
# about 4 sigma^2 for small q, so the series serves noise multipliers up to ~500.
_MAX_CANCELLATION = 1e6

# Binomial coefficients C(a, i) with i up to this are computed as exact products.
_EXACT_BINOMIAL_UP_TO = 8

# Flat term arrays are built for at most this many terms at a time (memory: ~15 float64 arrays).
_TERMS_PER_CHUNK = 2_000_000

# Below this a*q the binomial series of (1 - q)^a - 1 + a q is used; above it the closed form
# loses at most a factor 2 / ((a - 1) q) < 4 a / (a - 1) to cancellation.
_SERIES_BELOW = 0.5


@dataclass(frozen=True)
class OrderBound:
    """A per-order RDP value that is a sound upper bound rather than a converged value."""

    order: float
    reason: str


@dataclass(frozen=True)
class RDPResult:
    """The composed RDP curve of a run and the (epsilon, delta) it implies at the best order.

    `rdp[i]` is the RDP epsilon at `orders[i]` summed over all phases and steps. With a target
    delta, `epsilon` is minimised over the orders; with a target epsilon, `delta` is.
    """

    epsilon: float
    delta: float
    order: float
    conversion: Conversion
    orders: tuple[float, ...]
    rdp: tuple[float, ...]
    phases: tuple[Phase, ...]
    bounded_orders: tuple[OrderBound, ...] = ()
    warnings: tuple[str, ...] = ()


# ---------------------------------------------------------------------------------------------
# Per-step RDP of the Poisson-subsampled Gaussian mechanism


def subsampled_gaussian_rdp(
    sampling_probability: float, noise_multiplier: float, orders: Sequence[float] | np.ndarray
) -> tuple[np.ndarray, tuple[OrderBound, ...]]:
    """Per-step RDP of the Poisson-subsampled Gaussian at each order (MTZ Thm 4, Sec. 3.3).

    Returns (rdp, bounded): `bounded` lists the fractional orders where the series could not be
    evaluated to full precision (noise multipliers above ~500) and the value is a sound upper
    bound instead: the smallest of the log-convexity chord of `_interpolated_log_a`, the RDP at
    any larger order of `orders`, and the unsampled Gaussian's a / (2 sigma^2).

    p = 1: eps(a) = a / (2 sigma^2) (M17 Prop. 7).
    """
    from dpcalc.core.validation import POSITIVE, PROBABILITY

    PROBABILITY.check("sampling_probability", sampling_probability)
    POSITIVE.check("noise_multiplier", noise_multiplier)
    order_array = _check_orders(orders)
    q, sigma = float(sampling_probability), float(noise_multiplier)
    if sigma * sigma == 0.0 or math.isinf(0.5 / (sigma * sigma)):
        # 1/sigma^2 overflows float64: A_a >= q^a e^(a(a-1)/(2 sigma^2)) is infinite too.
        return np.full_like(order_array, np.inf), ()
    if q == 1.0:
        return order_array / (2.0 * sigma * sigma), ()
    log_a = np.empty_like(order_array)
    is_integer = order_array == np.floor(order_array)
    if is_integer.any():
        log_a[is_integer] = _in_chunks(_log_a_integer, q, sigma, order_array[is_integer].astype(np.int64))
    bounded: list[OrderBound] = []
    fractional = ~is_integer
    if fractional.any():
        values = _in_chunks(_log_a_fractional_and_trust, q, sigma, order_array[fractional])
        values, trusted = values[0::2], values[1::2] > 0.5
        if not trusted.all():
            untrusted = order_array[fractional][~trusted]
            # Two sound upper bounds on log A_a; the smaller is used: the chord of the convex
            # log A_a between the neighbouring integer orders, and the Gaussian without
            # subsampling, (a - 1) a / (2 sigma^2) (subsampling never increases RDP, MTZ Sec. 3).
            values[~trusted] = np.minimum(
                _interpolated_log_a(q, sigma, untrusted), (untrusted - 1.0) * untrusted / (2.0 * sigma * sigma)
            )
            bounded += [
                OrderBound(float(a), "upper bound: log-convexity, monotonicity, unsampled Gaussian")
                for a in untrusted
            ]
        log_a[fractional] = values
    rdp = log_a / (order_array - 1.0)
    if bounded:
        rdp = _monotone_bound(order_array, rdp, np.isin(order_array, [bound.order for bound in bounded]))
    return rdp, tuple(bounded)


def _monotone_bound(orders: np.ndarray, rdp: np.ndarray, bounded: np.ndarray) -> np.ndarray:
    """Lower each bounded value to the smallest RDP at any larger order: RDP is non-decreasing
    in the order (van Erven, Harremoes 2014, Thm 3), so that value is an upper bound too."""
    order_index = np.argsort(orders, kind="stable")
    sorted_rdp = rdp[order_index]
    from_the_right = np.minimum.accumulate(sorted_rdp[::-1])[::-1]
    tightened = sorted_rdp.copy()
    tightened[:-1] = np.minimum(sorted_rdp[:-1], from_the_right[1:])
    result = rdp.copy()
    result[order_index] = np.where(bounded[order_index], tightened, sorted_rdp)
    return result


def _in_chunks(function, q: float, sigma: float, orders: np.ndarray) -> np.ndarray:
    """`function(q, sigma, orders)` over groups of orders of at most _TERMS_PER_CHUNK terms each
    (an order a costs about a terms), so that large --orders lists cannot exhaust memory."""
    if orders.sum() <= _TERMS_PER_CHUNK:
        return function(q, sigma, orders)
    pieces, start, used = [], 0, 0.0
    for end, order in enumerate(orders.tolist(), start=1):
        used += order + _TAIL_TERMS + 2
        if used > _TERMS_PER_CHUNK or end == orders.size:
            pieces.append(function(q, sigma, orders[start:end]))
            start, used = end, 0.0
    return np.concatenate(pieces)


def _log_a_fractional_and_trust(q: float, sigma: float, orders: np.ndarray) -> np.ndarray:
    """`_log_a_fractional` with its two outputs interleaved (value, trusted) for `_in_chunks`."""
    values, trusted = _log_a_fractional(q, sigma, orders)
    return np.stack((values, trusted.astype(np.float64)), axis=1).reshape(-1)


def _check_orders(orders: Sequence[float] | np.ndarray) -> np.ndarray:
    order_array = np.asarray(orders, dtype=np.float64).reshape(-1)
    if order_array.size == 0:
        raise ValueError("orders must not be empty")
    if not np.all((order_array > 1.0) & (order_array <= MAX_ORDER)):
        for order in order_array:
            ORDERS_RANGE.check("order", float(order))
    return order_array


def _log_binomial(order: np.ndarray, index: np.ndarray) -> np.ndarray:
    """log |C(order, index)| for real order > 1 and integer index >= 0 (elementwise).

    index < order + 1: the gamma-function form. index > order + 1 (fractional order only): the
    reflection formula |C(a, i)| = |sin(pi a)| / pi * Gamma(a + 1) Gamma(i - a) / Gamma(i + 1),
    whose arguments stay positive, so that an order close to an integer keeps its precision.
    """
    below = index < order + 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        direct = gammaln(order + 1.0) - gammaln(index + 1.0) - gammaln(np.where(below, order - index + 1.0, 1.0))
        fraction = order - np.floor(order)
        reflected = (
            np.log(np.sin(np.pi * fraction)) - math.log(math.pi) + gammaln(order + 1.0)
            + gammaln(np.where(below, 1.0, index - order)) - gammaln(index + 1.0)
        )
    result = np.where(below, direct, reflected)
    # Small indices exactly as a product (a few ulps instead of gammaln's ~1e-14 absolute): the
    # q^2 and q^3 terms of the fractional series cancel against each other by up to 4 sigma^2.
    small = np.flatnonzero(index <= _EXACT_BINOMIAL_UP_TO)
    if small.size:
        small_order, small_index = order[small], index[small]
        product = np.ones_like(small_order)
        for step in range(1, _EXACT_BINOMIAL_UP_TO + 1):
            product = np.where(small_index >= step, product * np.abs(small_order - step + 1.0) / step, product)
        with np.errstate(divide="ignore"):
            result[small] = np.log(product)
    return result


def _segments(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(segment id, position within the segment, segment start) of a flat ragged layout."""
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    total = int(lengths.sum())
    segment = np.repeat(np.arange(lengths.size), lengths)
    position = np.arange(total) - starts[segment]
    return segment, position, starts


def _segment_log_sum_exp(values: np.ndarray, starts: np.ndarray, segment: np.ndarray) -> np.ndarray:
    top = np.maximum.reduceat(values, starts)
    safe_top = np.where(np.isfinite(top), top, 0.0)
    return safe_top + np.log(np.add.reduceat(np.exp(values - safe_top[segment]), starts))


class _IntegerLayout:
    """The terms k = 2..a of every integer order in one flat array, with what does not depend
    on (q, sigma) computed once per grid (a plain class: cheaper to define than a dataclass)."""

    __slots__ = ("starts", "segment", "k", "order_minus_k", "half_k_k_minus_1", "log_binomial")

    def __init__(self, orders: tuple[int, ...]) -> None:
        order_array = np.array(orders, dtype=np.int64)
        self.segment, position, self.starts = _segments(order_array - 1)
        order = order_array[self.segment].astype(np.float64)
        self.k = position + 2.0
        self.order_minus_k = order - self.k
        self.half_k_k_minus_1 = self.k * (self.k - 1.0) / 2.0
        self.log_binomial = _log_binomial(order, self.k)


_integer_layout = lru_cache(maxsize=8)(_IntegerLayout)


def _log_a_integer(q: float, sigma: float, orders: np.ndarray) -> np.ndarray:
    """log A_a for integer orders a >= 2 and 0 < q < 1 (MTZ Thm 4, the binomial expansion).

    A_a = sum_k C(a,k) (1-q)^(a-k) q^k exp(k(k-1)/(2 sigma^2)). Since the binomial weights sum to
    1, A_a - 1 = sum_{k>=2} C(a,k) (1-q)^(a-k) q^k expm1(k(k-1)/(2 sigma^2)): every term is
    positive, so log-sum-exp of the terms gives log(A_a - 1) to a few ulps, and
    log A_a = log1p(A_a - 1). Vectorised over all orders in one flat array.
    """
    layout = _integer_layout(tuple(orders.astype(np.int64).tolist()))
    log_terms = (
        layout.log_binomial
        + layout.k * math.log(q)
        + layout.order_minus_k * math.log1p(-q)
        + log_expm1(layout.half_k_k_minus_1 / (sigma * sigma))
    )
    return log1p_exp(_segment_log_sum_exp(log_terms, layout.starts, layout.segment))


def _cvz_weights(n: int) -> np.ndarray:
    """Weights w_k with sum_k (-1)^k a_k ~= sum_{k<n} w_k a_k (CVZ Algorithm 1).

    Exact to 2 a_0 / (3 + sqrt 8)^n when a_k is a moment sequence, a_k = int_0^1 t^k dmu(t).
    """
    d = (3.0 + math.sqrt(8.0)) ** n
    d = (d + 1.0 / d) / 2.0
    b, c = -1.0, -d
    weights = []
    for k in range(n):
        c = b - c
        weights.append(c / d)
        b = (k + n) * (k - n) * b / ((k + 0.5) * (k + 1.0))
    return np.array(weights)


_CVZ_WEIGHTS = _cvz_weights(_TAIL_TERMS)


class _FractionalLayout:
    """The terms i = 0..floor(a) + 1 + _TAIL_TERMS of every fractional order in one flat array:
    i, j = a - i, log |C(a, i)| (and the same with -inf at i = 0, 1, whose S0 terms become
    C_left), the tail mask and the CVZ weights on the tail (0 on the head)."""

    __slots__ = ("starts", "segment", "i", "j", "i_i_minus_1", "j_j_minus_1", "log_binomial",
                 "log_binomial_s0", "in_tail", "weights")

    def __init__(self, orders: tuple[float, ...]) -> None:
        order_array = np.array(orders)
        head_lengths = (np.floor(order_array) + 2.0).astype(np.int64)  # i = 0..m-1, m = floor(a) + 2
        self.segment, position, self.starts = _segments(head_lengths + _TAIL_TERMS)
        order = order_array[self.segment]
        self.i = position.astype(np.float64)
        self.j = order - self.i
        self.i_i_minus_1 = self.i * self.i - self.i
        self.j_j_minus_1 = self.j * self.j - self.j
        self.log_binomial = _log_binomial(order, self.i)
        self.log_binomial_s0 = np.where(position < 2, -np.inf, self.log_binomial)
        self.in_tail = position >= head_lengths[self.segment]
        tail_position = np.where(self.in_tail, position - head_lengths[self.segment], 0)
        self.weights = np.where(self.in_tail, _CVZ_WEIGHTS[np.minimum(tail_position, _TAIL_TERMS - 1)], 0.0)


_fractional_layout = lru_cache(maxsize=8)(_FractionalLayout)


def _log_a_fractional(q: float, sigma: float, orders: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log A_a for fractional orders a > 1 and 0 < q < 1, and whether each value is trusted.

    MTZ Sec. 3.3 splits E_mu0 at z0 = sigma^2 log(1/q - 1) + 1/2, where (1-q) mu0 = q mu1, and
    expands (1 - q + q r)^a binomially on each side (each expansion converges there):
        S0_i = C(a,i) (1-q)^(a-i) q^i e^((i^2-i)/(2 sigma^2)) Phi((z0 - i)/sigma)
        S1_i = C(a,i) q^(a-i) (1-q)^i e^((j^2-j)/(2 sigma^2)) Phi((j - z0)/sigma),  j = a - i
    and A_a = sum_i (S0_i + S1_i). C(a, i) is negative for i = floor(a) + 2, and alternates from
    there: dp_accounting 0.6.0 sums |C(a,i)| (an upper bound, not A_a) and, since |terms| decay
    only like i^(-a-2) when z0/sigma is small, gives up after 1000 terms.

    Here the signs are kept and the alternating tail (i >= m = floor(a) + 2) is summed with the
    CVZ acceleration. It applies because the tail magnitudes form a moment sequence:
    S0_i = C(a,i) K0 R((i - z0)/sigma) and S1_i = C(a,i) K0 R((i - a + z0)/sigma) with
    K0 = (1-q)^a e^(-z0^2/(2 sigma^2)) / sqrt(2 pi) and the Mills ratio
    R(t) = int_0^inf e^(-ts - s^2/2) ds (a Laplace transform, so completely monotone in i),
    and |C(a,i)| = |sin(pi a)|/pi * int_0^1 t^(i-a-1) (1-t)^a dt for i > a; products and sums
    of moment sequences are moment sequences. 18 tail terms reach 3e-14 relative.

    A_a - 1 is assembled without the leading 1: subtracting E[1 + a q (r - 1)] = 1 on each
    side turns the i = 0, 1 terms into C_left and C_right below, which are O(q^2) for small q.
    The remaining cancellation (about 4 sigma^2 for small q) is measured; where it exceeds
    _MAX_CANCELLATION the value is flagged untrusted.
    """
    layout = _fractional_layout(tuple(orders.tolist()))
    segment, starts, in_tail, weights = layout.segment, layout.starts, layout.in_tail, layout.weights
    i, j = layout.i, layout.j
    log_q, log_1mq = math.log(q), math.log1p(-q)
    z0 = sigma * sigma * (math.log1p(-q) - math.log(q)) + 0.5
    two_var = 2.0 * sigma * sigma

    log_s0 = layout.log_binomial_s0 + i * log_q + j * log_1mq + layout.i_i_minus_1 / two_var + log_ndtr((z0 - i) / sigma)
    log_s1 = layout.log_binomial + j * log_q + i * log_1mq + layout.j_j_minus_1 / two_var + log_ndtr((j - z0) / sigma)
    # Tail: sum_{k>=0} (-1)^(k+1) a_k with a_k = S0_{m+k} + S1_{m+k} (magnitudes).
    log_tail_terms = np.logaddexp(log_s0, log_s1)

    # C_left = [(1-q)^a - 1 + a q] Phi(z0/sigma) + a q [(1-q)^(a-1) - 1] Phi((z0-1)/sigma)
    # C_right = -(1 - a q) Phi(-z0/sigma) - a q Phi((1-z0)/sigma)
    aq = orders * q
    left_positive = _log_binomial_remainder(q, orders) + log_ndtr(z0 / sigma)
    left_negative = np.log(aq) + np.log(-np.expm1((orders - 1.0) * log_1mq)) + log_ndtr((z0 - 1.0) / sigma)
    with np.errstate(divide="ignore"):  # a q = 1 makes this piece 0
        right_first = np.log(np.abs(1.0 - aq)) + log_ndtr(-z0 / sigma)  # sign: -(1 - a q)
    right_second = np.log(aq) + log_ndtr((1.0 - z0) / sigma)  # sign: -

    # Scale every piece by the largest log magnitude of its order and add in linear space.
    head_logs = np.where(in_tail, -np.inf, np.logaddexp(log_s0, log_s1))
    scale = np.maximum.reduceat(np.where(in_tail, log_tail_terms, head_logs), starts)
    scale = np.maximum.reduce([scale, left_positive, left_negative, right_first, right_second])
    head = np.add.reduceat(np.exp(head_logs - scale[segment]), starts)
    tail_scaled = np.exp(np.where(in_tail, log_tail_terms - scale[segment], -np.inf))
    tail = np.add.reduceat(weights * tail_scaled, starts)  # = sum (-1)^k a_k (scaled)
    tail_magnitude = np.add.reduceat(tail_scaled, starts)
    positive = head + np.exp(left_positive - scale) + np.where(aq > 1.0, np.exp(right_first - scale), 0.0)
    negative = (
        np.exp(left_negative - scale)
        + np.where(aq > 1.0, 0.0, np.exp(right_first - scale))
        + np.exp(right_second - scale)
        + tail
    )
    a_minus_1 = positive - negative
    magnitude = positive + negative + tail_magnitude
    with np.errstate(divide="ignore", invalid="ignore"):
        cancellation = magnitude / a_minus_1
        log_a = log1p_exp(np.log(a_minus_1) + scale)
    trusted = (a_minus_1 > 0.0) & (cancellation < _MAX_CANCELLATION) & np.isfinite(log_a)
    return np.where(trusted, log_a, np.inf), trusted


def _log_binomial_remainder(q: float, orders: np.ndarray) -> np.ndarray:
    """log((1 - q)^a - 1 + a q), which is positive for a > 1 (convexity of (1 - q)^a in q).

    For a q < _SERIES_BELOW: the binomial series sum_{k>=2} C(a,k) (-q)^k, whose terms fall by
    a factor <= a q / 2 or faster, so 40 terms reach full precision; otherwise expm1(a log1p(-q))
    + a q, which then loses at most a factor 2 / ((a - 1) q) to cancellation.
    """
    aq = orders * q
    closed = np.expm1(orders * math.log1p(-q)) + aq
    k = np.arange(2, 42, dtype=np.float64)
    # C(a, k) (-q)^k = prod_{l<k} (a - l) / (l + 1) * (-q), built as a running product.
    factors = (orders[:, None] - (k[None, :] - 1.0)) / k[None, :] * (-q)
    first = orders * (orders - 1.0) / 2.0 * q * q
    terms = first[:, None] * np.cumprod(np.concatenate((np.ones((orders.size, 1)), factors[:, 1:]), axis=1), axis=1)
    series = terms.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(np.where(aq < _SERIES_BELOW, series, closed))


def _interpolated_log_a(q: float, sigma: float, orders: np.ndarray) -> np.ndarray:
    """A sound upper bound on log A_a at fractional a from the neighbouring integer orders.

    log A_a = log E_mu0[(mu/mu0)^a] is a cumulant generating function of the privacy loss in
    the variable a - 1, hence convex in a (Hoelder's inequality; van Erven and Harremoes,
    "Renyi divergence and Kullback-Leibler divergence", IEEE Trans. IT 2014, Cor. 2). The
    chord between floor(a) and ceil(a) (with log A_1 = 0) therefore lies above it, and never
    above the value at ceil(a) used with monotonicity of RDP in the order.
    """
    low = np.floor(orders)
    high = low + 1.0
    needed = np.unique(np.concatenate((low[low >= 2.0], high))).astype(np.int64)
    values = dict(zip(needed.tolist(), _log_a_integer(q, sigma, needed).tolist()))
    log_low = np.array([values.get(int(a), 0.0) if a >= 2.0 else 0.0 for a in low])
    log_high = np.array([values[int(a)] for a in high])
    weight = orders - low
    return (1.0 - weight) * log_low + weight * log_high


# ---------------------------------------------------------------------------------------------
# Laplace


def laplace_rdp_curve(orders: Sequence[float] | np.ndarray, scale: float) -> np.ndarray:
    """RDP of the Laplace mechanism with scale b, L1 sensitivity 1, no subsampling, at each order.

    `dpcalc.core.laplace.laplace_rdp` (M17 Prop. 6) evaluated order by order: one implementation
    for convert and the accountant (about a microsecond an order).
    """
    POSITIVE.check("scale", scale)
    order_array = _check_orders(orders)
    return np.array([laplace_rdp(order, float(scale)) for order in order_array.tolist()], dtype=np.float64)


# ---------------------------------------------------------------------------------------------
# Composition and conversion


def phase_rdp(phase: Phase, orders: Sequence[float] | np.ndarray) -> tuple[np.ndarray, tuple[OrderBound, ...]]:
    """Per-step RDP of one phase's mechanism at each order."""
    if phase.mechanism == "gaussian":
        return subsampled_gaussian_rdp(phase.sampling_probability, phase.noise_multiplier, orders)
    if phase.mechanism == "laplace":
        if phase.sampling_probability != 1.0:
            raise ParameterError(
                "sampling_probability",
                "1 for the laplace mechanism (RDP of the Poisson-subsampled Laplace mechanism is not implemented)",
                phase.sampling_probability,
            )
        return laplace_rdp_curve(orders, phase.scale), ()
    raise ValueError(f"mechanism must be 'gaussian' or 'laplace', got mechanism={phase.mechanism!r}")


def composed_rdp(
    phases: Sequence[Phase], orders: Sequence[float], *, per_step_cache: dict | None = None
) -> tuple[np.ndarray, tuple[OrderBound, ...]]:
    """RDP of the whole run at each order: per-step RDP times steps, added over phases (M17 Prop. 1).

    Phases that differ only in their number of steps are evaluated once; the cost does not
    depend on the number of steps. `per_step_cache` (an empty dict, passed to several calls)
    keeps the per-step curves across calls, so that a sweep over T evaluates each mechanism
    once: the composed curve is steps times the per-step one.
    """
    if not phases:
        raise ValueError("give at least one phase")
    order_array = _check_orders(orders)
    steps_by_mechanism: dict[tuple, int] = {}
    for phase in phases:
        key = (phase.mechanism, phase.sampling_probability, phase.noise_multiplier, phase.scale)
        steps_by_mechanism[key] = steps_by_mechanism.get(key, 0) + phase.steps
    total = np.zeros_like(order_array)
    bounded: dict[float, OrderBound] = {}
    for (mechanism, p, sigma, scale), steps in steps_by_mechanism.items():
        cache_key = (mechanism, p, sigma, scale, order_array.tobytes())
        if per_step_cache is not None and cache_key in per_step_cache:
            per_step, phase_bounds = per_step_cache[cache_key]
        else:
            per_step, phase_bounds = phase_rdp(
                Phase(mechanism=mechanism, sampling_probability=p, noise_multiplier=sigma, scale=scale, steps=1),
                order_array,
            )
            if per_step_cache is not None:
                per_step_cache[cache_key] = (per_step, phase_bounds)
        with np.errstate(over="ignore", invalid="ignore"):
            total = total + float(steps) * per_step
        for bound in phase_bounds:
            bounded[bound.order] = bound
    return total, tuple(bounded[order] for order in sorted(bounded))


def _total_variation_bound(rdp: float) -> float:
    """sqrt(1 - e^(-D)) >= TV(P, Q) for any RDP value D >= KL(P||Q) (Bretagnolle-Huber 1979).

    RDP is non-decreasing in the order and tends to KL(P||Q) as the order tends to 1, so the
    RDP at any order bounds KL; (0, delta)-DP holds for every delta >= TV.
    """
    if rdp <= 0.0:
        return 0.0
    return math.sqrt(-math.expm1(-rdp)) if math.isfinite(rdp) else 1.0


def epsilon_from_curve(
    orders: Sequence[float], rdp: Sequence[float] | np.ndarray, delta: float, conversion: Conversion = "improved"
) -> tuple[float, float]:
    """(epsilon, order): the smallest epsilon at `delta` over the curve.

    improved: CKS Prop. 12, and epsilon = 0 when delta >= sqrt(1 - e^(-rdp)) at some order
    (total-variation bound, as dp_accounting does); classic: M17 Prop. 3 alone.
    """
    OPEN_UNIT.check("delta", delta)
    candidates = [(rdp_to_epsilon(a, r, delta, conversion), a) for a, r in zip(orders, rdp)]
    if conversion == "improved":
        candidates += [(0.0, a) for a, r in zip(orders, rdp) if _total_variation_bound(r) <= delta]
    return min(candidates, key=lambda pair: (pair[0], pair[1]))


def delta_from_curve(
    orders: Sequence[float], rdp: Sequence[float], epsilon: float, conversion: Conversion = "improved"
) -> tuple[float, float]:
    """(delta, order): the smallest delta at `epsilon` over the curve (see `epsilon_from_curve`)."""
    NON_NEGATIVE.check("epsilon", epsilon)
    candidates = []
    for a, r in zip(orders, rdp):
        value = rdp_to_delta(a, r, epsilon, conversion)
        if conversion == "improved":
            value = min(value, _total_variation_bound(r))
        candidates.append((value, a))
    return min(candidates, key=lambda pair: (pair[0], pair[1]))


def rdp_accountant(
    phases: Sequence[Phase],
    *,
    orders: Sequence[float] | None = None,
    delta: float | None = None,
    epsilon: float | None = None,
    conversion: Conversion = "improved",
    per_step_cache: dict | None = None,
) -> RDPResult:
    """RDP accounting of a run of phases: the composed curve and epsilon at `delta` (or delta at
    `epsilon`; exactly one is given), minimised over `orders` (default DEFAULT_ORDERS).

    `per_step_cache`: see `composed_rdp` (a sweep passes one dict to all its runs)."""
    if (delta is None) == (epsilon is None):
        raise ValueError("give exactly one of delta and epsilon")
    if conversion not in ("improved", "classic"):
        raise ValueError(f"conversion must be 'improved' or 'classic', got conversion={conversion!r}")
    grid = tuple(float(a) for a in (DEFAULT_ORDERS if orders is None else orders))
    if len(set(grid)) != len(grid):
        grid = tuple(sorted(set(grid)))
    curve_array, bounded = composed_rdp(phases, grid, per_step_cache=per_step_cache)
    curve = tuple(float(value) for value in curve_array)
    warnings: list[str] = []
    if delta is not None:
        epsilon, best_order = epsilon_from_curve(grid, curve, delta, conversion)
    else:
        delta, best_order = delta_from_curve(grid, curve, epsilon, conversion)
    if len(grid) > 1 and (best_order == min(grid) or best_order == max(grid)) and math.isfinite(epsilon):
        end = "smallest" if best_order == min(grid) else "largest"
        if not (epsilon == 0.0 or delta == 0.0):
            warnings.append(
                f"the optimum is at the {end} order of the grid ({best_order:g}); "
                "a wider grid (--orders) may give a smaller epsilon."
            )
    if bounded:
        listed = ", ".join(f"{bound.order:g}" for bound in bounded[:8]) + (", ..." if len(bounded) > 8 else "")
        warnings.append(
            f"at {len(bounded)} fractional order(s) ({listed}) the series loses precision to cancellation; "
            "their RDP is a sound upper bound instead (log-convexity between the neighbouring integer "
            "orders, monotonicity in the order, the unsampled Gaussian), so epsilon may be slightly "
            "larger than with the exact RDP."
        )
    if not math.isfinite(epsilon):
        warnings.append("the RDP curve is infinite at every order: no finite epsilon (the noise is too small).")
    return RDPResult(
        epsilon=float(epsilon),
        delta=float(delta),
        order=float(best_order),
        conversion=conversion,
        orders=grid,
        rdp=curve,
        phases=tuple(phases),
        bounded_orders=bounded,
        warnings=tuple(warnings),
    )
