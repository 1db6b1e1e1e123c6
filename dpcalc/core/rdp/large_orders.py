"""log A_a of the Poisson-subsampled Gaussian at orders above SUMMED_ORDER, without summing a terms.

Source: Mironov, Talwar, Zhang, "Renyi Differential Privacy of the Sampled Gaussian Mechanism"
(arXiv 1908.10530), "MTZ", Thm 4; van Erven, Harremoes, "Renyi divergence and Kullback-Leibler
divergence" (IEEE Trans. IT 2014), Cor. 2 (convexity of log A_a in a). docs/mathematics.md §2.

At an integer order a, A_a = sum_k C(a,k) (1-q)^(a-k) q^k e^(k(k-1)/(2 sigma^2)) (MTZ Thm 4).
Its last term T = q^a e^(a(a-1)/(2 sigma^2)) is a lower bound, and with k = a - m every term
divided by T is C(a,m) ((1-q)/q)^m e^(-m(2a-m-1)/(2 sigma^2)) <= C(a,m) y^m, because
2a - m - 1 >= a - 1 for m <= a, where y = (1-q)/q e^(-(a-1)/(2 sigma^2)). The binomial theorem
then brackets A_a:

    a log q + a(a-1)/(2 sigma^2) <= log A_a <= a log q + a(a-1)/(2 sigma^2) + a log1p(y).

The lower side holds at every real a >= 1 too, since 1 - q + q r >= q r and
E_mu0[r^a] = e^(a(a-1)/(2 sigma^2)). At a fractional order the upper side is the chord of the
integer upper bounds at floor(a) and ceil(a): log A_a is convex in a (van Erven, Harremoes 2014,
Cor. 2). Both sides are also capped by what holds for every order: log A_a >= 0, and
log A_a <= a(a-1)/(2 sigma^2), the Gaussian without subsampling (subsampling never increases
RDP, MTZ Sec. 3).

The upper side is returned (sound). Where the two sides agree to EXACT_WITHIN relative, the
value is the exact one to float64 precision: for noise multipliers with
(a - 1)/(2 sigma^2) > log(a/q) + 30, i.e. every noise multiplier below ~50 at a = 1e5 and below
~5e3 at a = 1e9. Elsewhere the value is flagged, and reported as an upper bound.
"""

from __future__ import annotations

import math

import numpy as np

# Relative width of [lower, upper] below which the upper side is the value itself (a few ulps
# above the truth at orders above 1e5, where the chord at fractional orders adds about 1/(4 a^2)
# relative; the value then stays well within 1e-9 of mpmath).
EXACT_WITHIN = 1e-10


def large_order_rdp(q: float, sigma: float, orders: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(per-step RDP upper bound, exact) at each order a > 1 for 0 < q < 1 (module docstring).

    `exact` marks the orders where the bound is the RDP itself to EXACT_WITHIN relative.
    Values are +inf where a^2 / sigma^2 exceeds float64 (the order is then useless anyway).
    """
    half_inverse_variance = 0.5 / (sigma * sigma)
    log_q, log_ratio = math.log(q), math.log1p(-q) - math.log(q)
    with np.errstate(over="ignore", invalid="ignore"):

        def integer_upper(order: np.ndarray) -> np.ndarray:
            """a log q + a(a-1)/(2 sigma^2) + a log1p(y) at integer orders, as (a - 1) times RDP."""
            log_y = log_ratio - (order - 1.0) * half_inverse_variance
            bound: np.ndarray = (
                order * log_q + order * (order - 1.0) * half_inverse_variance + order * np.log1p(np.exp(log_y))
            )
            return bound

        floor = np.floor(orders)
        weight = orders - floor
        chord = np.where(weight > 0.0, (1.0 - weight) * integer_upper(floor) + weight * integer_upper(floor + 1.0),
                         integer_upper(orders))
        unsampled = orders * (orders - 1.0) * half_inverse_variance
        upper = np.minimum(chord, unsampled)
        lower = np.maximum(orders * log_q + unsampled, 0.0)
        exact = (upper - lower) <= EXACT_WITHIN * upper
        rdp: np.ndarray = upper / (orders - 1.0)
    return np.where(np.isnan(rdp), np.inf, rdp), exact
