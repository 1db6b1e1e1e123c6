"""The RDP accountant: a run's composed curve, the (epsilon, delta) it gives, and its warnings.

Sources: Mironov, "Renyi Differential Privacy" (CSF 2017, arXiv 1702.07476), "M17", Prop. 3
(the classic conversion); Canonne, Kamath, Steinke (NeurIPS 2020, arXiv 2004.00010), "CKS",
Prop. 12 (the improved one, in `dpcalc.core.rdp_conversion`); Bretagnolle, Huber (1979) for
the total-variation bound. docs/mathematics.md §2.

The result carries what its warnings say as data (`grid_edge`, `bounded_orders`, an infinite
epsilon); `RDPResult.messages` words them without naming any command-line option, unless a
command passes the name of its option for the order grid.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from dpcalc.core.limits import SUMMED_ORDER
from dpcalc.core.phases import Phase
from dpcalc.core.rdp.curves import OrderBound, composed_rdp
from dpcalc.core.rdp.orders import DEFAULT_ORDERS
from dpcalc.core.rdp_conversion import Conversion, rdp_to_delta, rdp_to_epsilon
from dpcalc.core.validation import NON_NEGATIVE, OPEN_UNIT

# Bounded orders listed by value in the warning; the rest are counted.
_LISTED_BOUNDS = 8

# Which end of the order grid the optimum is at (RDPResult.grid_edge).
GridEdge = Literal["smallest", "largest"]


@dataclass(frozen=True)
class RDPResult:
    """The composed RDP curve of a run and the (epsilon, delta) it implies at the best order.

    `rdp[i]` is the RDP epsilon at `orders[i]` summed over all phases and steps. With a target
    delta, `epsilon` is minimised over the orders; with a target epsilon, `delta` is.
    `grid_edge` says which end of a grid of several orders the best order is, when it is one
    (and epsilon and delta are positive and finite: a wider grid may then give a smaller
    epsilon); `bounded_orders` lists the orders whose RDP is a sound upper bound instead of the
    series' value.
    """

    epsilon: float
    delta: float
    order: float
    conversion: Conversion
    orders: tuple[float, ...]
    rdp: tuple[float, ...]
    phases: tuple[Phase, ...]
    bounded_orders: tuple[OrderBound, ...] = ()
    grid_edge: GridEdge | None = None

    @property
    def warnings(self) -> tuple[str, ...]:
        """The warnings in neutral words (see `messages`)."""
        return self.messages()

    def messages(self, orders_option: str | None = None) -> tuple[str, ...]:
        """The warnings, in order: the grid edge, the bounded orders, an infinite epsilon.

        `orders_option` names the command's option for the order grid, if it has one, in the
        grid-edge warning; without it the warning names no option.
        """
        warnings: list[str] = []
        if self.grid_edge is not None:
            wider = f"a wider grid ({orders_option})" if orders_option else "a wider grid of orders"
            warnings.append(f"the optimum is at the {self.grid_edge} order of the grid ({self.order:g}); "
                            f"{wider} may give a smaller epsilon.")
        bounded = tuple(bound for bound in self.bounded_orders if bound.order <= SUMMED_ORDER)
        large = tuple(bound for bound in self.bounded_orders if bound.order > SUMMED_ORDER)
        if large:
            warnings.append(
                f"at {len(large)} order(s) above {SUMMED_ORDER:g} ({_listed(large)}) the RDP is a sound upper "
                "bound, not the exact value (the largest binomial term and a bound on the others, the unsampled "
                "Gaussian: the noise is large for the order), so epsilon may be larger than with the exact RDP."
            )
        if bounded:
            listed = _listed(bounded)
            warnings.append(
                f"at {len(bounded)} fractional order(s) ({listed}) the series loses precision to cancellation; "
                "their RDP is a sound upper bound instead (log-convexity between the neighbouring integer "
                "orders, monotonicity in the order, the unsampled Gaussian), so epsilon may be slightly "
                "larger than with the exact RDP."
            )
        if not math.isfinite(self.epsilon):
            warnings.append("the RDP curve is infinite at every order: no finite epsilon (the noise is too small).")
        return tuple(warnings)


def _listed(bounds: Sequence[OrderBound]) -> str:
    """The first _LISTED_BOUNDS orders of `bounds`, then "..." if there are more."""
    listed = ", ".join(f"{bound.order:g}" for bound in bounds[:_LISTED_BOUNDS])
    return listed + (", ..." if len(bounds) > _LISTED_BOUNDS else "")


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
    # RDP 0 at some order: the two distributions are equal (van Erven, Harremoes 2014, Thm 8),
    # (0, 0)-DP under either conversion (a run with p = 0: `phases.samples_nothing`)
    candidates += [(0.0, a) for a, r in zip(orders, rdp) if r == 0.0]
    return min(candidates, key=lambda pair: (pair[0], pair[1]))


def delta_from_curve(
    orders: Sequence[float], rdp: Sequence[float], epsilon: float, conversion: Conversion = "improved"
) -> tuple[float, float]:
    """(delta, order): the smallest delta at `epsilon` over the curve (see `epsilon_from_curve`)."""
    NON_NEGATIVE.check("epsilon", epsilon)
    candidates = []
    for a, r in zip(orders, rdp):
        value = rdp_to_delta(a, r, epsilon, conversion)
        if conversion == "improved" or r == 0.0:  # r = 0: equal distributions, delta 0 (as above)
            value = min(value, _total_variation_bound(r))
        candidates.append((value, a))
    return min(candidates, key=lambda pair: (pair[0], pair[1]))


def epsilon_by_order(orders: Sequence[float], rdp: Sequence[float], delta: float,
                     conversion: Conversion = "improved") -> tuple[float, ...]:
    """The epsilon at `delta` that each order alone gives (a sound bound each; their minimum is
    `epsilon_from_curve`'s): the conversion, or 0 by the total-variation bound (improved) or
    for an RDP of 0, as there."""
    OPEN_UNIT.check("delta", delta)
    values = []
    for a, r in zip(orders, rdp):
        value = rdp_to_epsilon(a, r, delta, conversion)
        if r == 0.0 or (conversion == "improved" and _total_variation_bound(r) <= delta):
            value = 0.0
        values.append(value)
    return tuple(values)


def delta_by_order(orders: Sequence[float], rdp: Sequence[float], epsilon: float,
                   conversion: Conversion = "improved") -> tuple[float, ...]:
    """The delta at `epsilon` that each order alone gives (their minimum is `delta_from_curve`'s)."""
    NON_NEGATIVE.check("epsilon", epsilon)
    values = []
    for a, r in zip(orders, rdp):
        value = rdp_to_delta(a, r, epsilon, conversion)
        if conversion == "improved" or r == 0.0:
            value = min(value, _total_variation_bound(r))
        values.append(value)
    return tuple(values)


def _grid_edge(grid: tuple[float, ...], best_order: float, epsilon: float, delta: float) -> GridEdge | None:
    """The grid end the optimum sits at, when a wider grid could matter (epsilon, delta > 0, finite)."""
    if len(grid) > 1 and (best_order == min(grid) or best_order == max(grid)) and math.isfinite(epsilon):
        if not (epsilon == 0.0 or delta == 0.0):
            return "smallest" if best_order == min(grid) else "largest"
    return None


def rdp_accountant(
    phases: Sequence[Phase],
    *,
    orders: Sequence[float] | None = None,
    delta: float | None = None,
    epsilon: float | None = None,
    conversion: Conversion = "improved",
    per_step_cache: dict[Any, Any] | None = None,
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
    if delta is not None:
        epsilon, best_order = epsilon_from_curve(grid, curve, delta, conversion)
    else:
        assert epsilon is not None, "exactly one of delta and epsilon (checked above)"
        delta, best_order = delta_from_curve(grid, curve, epsilon, conversion)
    return RDPResult(
        epsilon=float(epsilon),
        delta=float(delta),
        order=float(best_order),
        conversion=conversion,
        orders=grid,
        rdp=curve,
        phases=tuple(phases),
        bounded_orders=bounded,
        grid_edge=_grid_edge(grid, best_order, epsilon, delta),
    )
