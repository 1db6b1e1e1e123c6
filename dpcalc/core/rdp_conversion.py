"""Renyi DP -> (epsilon, delta): the conversions the RDP accountant and `convert` share.

Sources: Mironov, "Renyi Differential Privacy" (CSF 2017, arXiv 1702.07476), Prop. 3
("classic"); Canonne, Kamath, Steinke (NeurIPS 2020, arXiv 2004.00010) Prop. 12 and Balle,
Barthe, Gaboardi, Hsu, Sato (AISTATS 2020, arXiv 1905.09982) Thm 21 ("improved").
Kept apart from `conversions` so that the RDP accountant does not import the rest of it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal

from dpcalc.core.validation import NON_NEGATIVE, OPEN_UNIT, Interval

Conversion = Literal["improved", "classic"]

ORDER = Interval(1.0, math.inf)  # Renyi orders are > 1


def rdp_to_epsilon(order: float, rdp: float, delta: float, conversion: Conversion = "improved") -> float:
    """epsilon at `delta` from one RDP point (order, rdp); never negative.

    improved (CKS Prop. 12 / BBGHS Thm 21): eps = rdp + log1p(-1/order) - (log delta + log order)/(order - 1)
    classic (Mironov Prop. 3):               eps = rdp + log(1/delta)/(order - 1)
    """
    ORDER.check("order", order)
    OPEN_UNIT.check("delta", delta)
    if math.isinf(rdp):
        return math.inf
    if conversion == "improved":
        epsilon = rdp + math.log1p(-1.0 / order) - (math.log(delta) + math.log(order)) / (order - 1.0)
    elif conversion == "classic":
        epsilon = rdp - math.log(delta) / (order - 1.0)
    else:
        raise ValueError(f"conversion must be 'improved' or 'classic', got conversion={conversion!r}")
    return max(0.0, epsilon)


def rdp_to_delta(order: float, rdp: float, epsilon: float, conversion: Conversion = "improved") -> float:
    """delta at `epsilon` from one RDP point: the inverse of `rdp_to_epsilon`, capped at 1.

    improved: log delta = (order - 1)(rdp - eps + log1p(-1/order)) - log order
    classic:  log delta = (order - 1)(rdp - eps)
    """
    ORDER.check("order", order)
    NON_NEGATIVE.check("epsilon", epsilon)
    if math.isinf(rdp):
        return 1.0
    if conversion == "improved":
        log_delta = (order - 1.0) * (rdp - epsilon + math.log1p(-1.0 / order)) - math.log(order)
    elif conversion == "classic":
        log_delta = (order - 1.0) * (rdp - epsilon)
    else:
        raise ValueError(f"conversion must be 'improved' or 'classic', got conversion={conversion!r}")
    return math.exp(min(0.0, log_delta))


def best_epsilon(
    orders: Sequence[float], rdp: Sequence[float], delta: float, conversion: Conversion = "improved"
) -> tuple[float, float]:
    """(epsilon, order): the smallest epsilon at `delta` over an RDP curve, and the order giving it."""
    return _best_over_curve(orders, rdp, lambda order, value: rdp_to_epsilon(order, value, delta, conversion))


def best_delta(
    orders: Sequence[float], rdp: Sequence[float], epsilon: float, conversion: Conversion = "improved"
) -> tuple[float, float]:
    """(delta, order): the smallest delta at `epsilon` over an RDP curve, and the order giving it."""
    return _best_over_curve(orders, rdp, lambda order, value: rdp_to_delta(order, value, epsilon, conversion))


def _best_over_curve(
    orders: Sequence[float], rdp: Sequence[float], convert: Callable[[float, float], float]
) -> tuple[float, float]:
    """(the smallest convert(order, rdp) over the curve, the order giving it); ties to the smaller order."""
    if len(orders) != len(rdp) or not orders:
        raise ValueError("orders and rdp must be non-empty and of equal length")
    return min((convert(a, r), a) for a, r in zip(orders, rdp))
