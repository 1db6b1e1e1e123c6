"""log A_a of the Poisson-subsampled Gaussian at fractional orders, and the sound bound where it fails.

Sources: Mironov, Talwar, Zhang, "Renyi Differential Privacy of the Sampled Gaussian Mechanism"
(arXiv 1908.10530), "MTZ", Sec. 3.3 (the two-sided binomial series); Cohen, Rodriguez Villegas,
Zagier, "Convergence acceleration of alternating series" (Experimental Mathematics 9, 2000),
"CVZ" (its alternating tail); van Erven, Harremoes, "Renyi divergence and Kullback-Leibler
divergence" (IEEE Trans. IT 2014), Cor. 2 and Thm 3 (the fallback bound). docs/mathematics.md §2.

`_log_a_fractional` returns log A_a and whether each value is trusted: A_a - 1 is assembled
without its leading 1, so that tiny RDP values (q = 1e-6, sigma = 50: eps ~ 1e-16) keep their
relative precision, and the cancellation left in the sum is measured. Where it is too large
(noise multipliers above ~500) `_sound_log_a` and `_monotone_bound` give a sound upper bound
from the integer orders (`integer_orders`) instead.

Imports scipy.special at the top rather than inside the functions: see the package docstring.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.special import log_ndtr

from dpcalc.core.arrays import sorted_distinct
from dpcalc.core.rdp.integer_orders import _log_a_integer, _log_binomial, _segments
from dpcalc.core.special_array import log1p_exp

# Terms of the accelerated alternating tail of the fractional-order series. The CVZ error
# is at most 2 a_0 / (3 + sqrt 8)^n, about 3e-14 a_0 for n = 18, and a_0 <= A_a (in practice
# a_0 is far smaller). Each term costs time on every fractional order of every phase.
_TAIL_TERMS = 18

# Rounding error amplification (sum of the absolute values of the pieces of A_a - 1 divided
# by A_a - 1) above which the fractional-order series is not trusted and a sound upper bound
# is used instead (`_sound_log_a`). Against mpmath the relative
# error stays below 1e-15 times this amplification, so 1e6 keeps values within 1e-9; it is
# about 4 sigma^2 for small q, so the series serves noise multipliers up to ~500.
_MAX_CANCELLATION = 1e6

# Below this a*q the binomial series of (1 - q)^a - 1 + a q is used; above it the closed form
# loses at most a factor 2 / ((a - 1) q) < 4 a / (a - 1) to cancellation.
_SERIES_BELOW = 0.5


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


def _log_a_fractional_and_trust(q: float, sigma: float, orders: np.ndarray) -> np.ndarray:
    """`_log_a_fractional` with its two outputs interleaved (value, trusted) for `_in_chunks`."""
    values, trusted = _log_a_fractional(q, sigma, orders)
    return np.stack((values, trusted.astype(np.float64)), axis=1).reshape(-1)


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
        remainder: np.ndarray = np.log(np.where(aq < _SERIES_BELOW, series, closed))
    return remainder


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
    needed = sorted_distinct(np.concatenate((low[low >= 2.0], high))).astype(np.int64)
    values = dict(zip(needed.tolist(), _log_a_integer(q, sigma, needed).tolist()))
    log_low = np.array([values.get(int(a), 0.0) if a >= 2.0 else 0.0 for a in low])
    log_high = np.array([values[int(a)] for a in high])
    weight = orders - low
    chord: np.ndarray = (1.0 - weight) * log_low + weight * log_high
    return chord


def _sound_log_a(q: float, sigma: float, orders: np.ndarray) -> np.ndarray:
    """A sound upper bound on log A_a where the series is not trusted: the smaller of two.

    The chord of the convex log A_a between the neighbouring integer orders
    (`_interpolated_log_a`), and the Gaussian without subsampling, (a - 1) a / (2 sigma^2)
    (subsampling never increases RDP, MTZ Sec. 3).
    """
    bound: np.ndarray = np.minimum(
        _interpolated_log_a(q, sigma, orders), (orders - 1.0) * orders / (2.0 * sigma * sigma)
    )
    return bound


def _monotone_bound(orders: np.ndarray, rdp: np.ndarray, bounded: np.ndarray) -> np.ndarray:
    """Lower each bounded value to the smallest RDP at any larger order: RDP is non-decreasing
    in the order (van Erven, Harremoes 2014, Thm 3), so that value is an upper bound too."""
    order_index = np.argsort(orders, kind="stable")
    sorted_rdp = rdp[order_index]
    from_the_right = np.minimum.accumulate(sorted_rdp[::-1])[::-1]
    tightened = sorted_rdp.copy()
    tightened[:-1] = np.minimum(sorted_rdp[:-1], from_the_right[1:])
    result: np.ndarray = rdp.copy()
    result[order_index] = np.where(bounded[order_index], tightened, sorted_rdp)
    return result
