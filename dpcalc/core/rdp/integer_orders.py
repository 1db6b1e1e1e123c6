"""log A_a of the Poisson-subsampled Gaussian at integer orders, and the term machinery it shares.

Source: Mironov, Talwar, Zhang, "Renyi Differential Privacy of the Sampled Gaussian Mechanism"
(arXiv 1908.10530), "MTZ", Thm 4: with mu0 = N(0, sigma^2), mu1 = N(1, sigma^2) and the
likelihood ratio r(z) = exp((2z - 1)/(2 sigma^2)), the per-step RDP at order a is
log(A_a) / (a - 1) with A_a = E_{z ~ mu0}[(1 - q + q r(z))^a] (docs/mathematics.md §2).

At an integer order A_a is a finite binomial sum of positive terms. Also here, because the
fractional orders (`fractional_orders`) use them too: log |C(a, i)| for real a, and the flat
"ragged" layout that puts the terms of every order of a grid into one array.

Imports scipy.special at the top rather than inside the functions: see the package docstring.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.special import gammaln

from dpcalc.core.special_array import log1p_exp, log_expm1

# Binomial coefficients C(a, i) with i up to this are computed as exact products.
_EXACT_BINOMIAL_UP_TO = 8


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
    result: np.ndarray = np.where(below, direct, reflected)
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
    """log sum exp of `values` over each segment of a ragged layout (see `_segments`)."""
    top = np.maximum.reduceat(values, starts)
    safe_top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):  # a segment of -inf terms only (sigma near 1e308): its sum is -inf
        result: np.ndarray = safe_top + np.log(np.add.reduceat(np.exp(values - safe_top[segment]), starts))
    return result


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
