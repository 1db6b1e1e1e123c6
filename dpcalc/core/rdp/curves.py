"""Per-step and composed RDP curves: the subsampled Gaussian, the Laplace mechanism, a run of phases.

Sources: Mironov, "Renyi Differential Privacy" (CSF 2017, arXiv 1702.07476), "M17": Prop. 1
(composition adds RDP at each order), Prop. 6 (Laplace), Prop. 7 (Gaussian); Mironov, Talwar,
Zhang, "Renyi Differential Privacy of the Sampled Gaussian Mechanism" (arXiv 1908.10530),
"MTZ", Thm 4 and Sec. 3.3 (the subsampled Gaussian). docs/mathematics.md §2.

Per step, the Poisson-subsampled Gaussian with sampling probability q and noise multiplier
sigma has RDP eps(a) = log(A_a) / (a - 1); log A_a comes from `integer_orders` at integer
orders and from `fractional_orders` (with its sound fallback) at the others.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcalc.core.laplace import laplace_rdp
from dpcalc.core.limits import SUMMED_ORDER
from dpcalc.core.phases import Mechanism, Neighbours, Phase, Sampling, count_as_float, rdp_covers
from dpcalc.core.rdp.fractional_orders import (
    _TAIL_TERMS,
    _log_a_fractional_and_trust,
    _monotone_bound,
    _sound_log_a,
)
from dpcalc.core.rdp.integer_orders import _log_a_integer
from dpcalc.core.rdp.large_orders import large_order_rdp
from dpcalc.core.rdp.orders import _check_orders
from dpcalc.core.validation import POSITIVE, PROBABILITY, ParameterError

# Flat term arrays are built for at most this many terms at a time (memory: ~15 float64 arrays).
_TERMS_PER_CHUNK = 2_000_000

# Why an OrderBound's value is a bound (fractional_orders: `_sound_log_a`, `_monotone_bound`).
_BOUND_REASON = "upper bound: log-convexity, monotonicity, unsampled Gaussian"
_LARGE_BOUND_REASON = "upper bound: largest binomial term and a bound on the others, unsampled Gaussian"


@dataclass(frozen=True)
class OrderBound:
    """A per-order RDP value that is a sound upper bound rather than a converged value."""

    order: float
    reason: str


# What a phase's per-step curve depends on: (mechanism, p, sigma, scale, sampling).
_MechanismKey = tuple[Mechanism, float, float | None, float | None, Sampling, Neighbours]


def subsampled_gaussian_rdp(
    sampling_probability: float, noise_multiplier: float, orders: Sequence[float] | np.ndarray
) -> tuple[np.ndarray, tuple[OrderBound, ...]]:
    """Per-step RDP of the Poisson-subsampled Gaussian at each order (MTZ Thm 4, Sec. 3.3).

    Returns (rdp, bounded): `bounded` lists the fractional orders where the series could not be
    evaluated to full precision (noise multipliers above ~500) and the value is a sound upper
    bound instead: the smallest of the log-convexity chord, the RDP at any larger order of
    `orders`, and the unsampled Gaussian's a / (2 sigma^2) (`fractional_orders._sound_log_a`,
    `_monotone_bound`).

    p = 1: eps(a) = a / (2 sigma^2) (M17 Prop. 7); p = 0: 0. Orders above SUMMED_ORDER (1e5): from the
    bracket of `large_orders` (exact where it is narrow, else a bound listed in `bounded`).
    """
    PROBABILITY.check("sampling_probability", sampling_probability)
    POSITIVE.check("noise_multiplier", noise_multiplier)
    order_array = _check_orders(orders)
    q, sigma = float(sampling_probability), float(noise_multiplier)
    if q == 0.0:  # nothing sampled: A_a = 1, RDP 0 at every order (`phases.samples_nothing`)
        return np.zeros_like(order_array), ()
    if sigma * sigma == 0.0 or math.isinf(0.5 / (sigma * sigma)):
        # 1/sigma^2 overflows float64: A_a >= q^a e^(a(a-1)/(2 sigma^2)) is infinite too.
        return np.full_like(order_array, np.inf), ()
    if q == 1.0:
        return order_array / (2.0 * sigma * sigma), ()
    large = order_array > SUMMED_ORDER
    if large.any():
        # above SUMMED_ORDER: the bracket of large_orders, without summing a terms per order
        small_rdp, small_bounded = (
            subsampled_gaussian_rdp(q, sigma, order_array[~large]) if (~large).any() else (np.empty(0), ())
        )
        rdp = np.empty_like(order_array)
        rdp[~large] = small_rdp
        rdp[large], exact = large_order_rdp(q, sigma, order_array[large])
        large_bounds = [OrderBound(float(a), _LARGE_BOUND_REASON) for a in order_array[large][~exact]]
        return rdp, tuple(sorted((*small_bounded, *large_bounds), key=lambda bound: bound.order))
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
            values[~trusted] = _sound_log_a(q, sigma, untrusted)
            bounded += [OrderBound(float(a), _BOUND_REASON) for a in untrusted]
        log_a[fractional] = values
    rdp = log_a / (order_array - 1.0)
    if bounded:
        rdp = _monotone_bound(order_array, rdp, np.isin(order_array, [bound.order for bound in bounded]))
    return rdp, tuple(bounded)


def _in_chunks(
    function: Callable[[float, float, np.ndarray], np.ndarray], q: float, sigma: float, orders: np.ndarray
) -> np.ndarray:
    """`function(q, sigma, orders)` over groups of orders of at most _TERMS_PER_CHUNK terms each
    (an order a costs about a terms), so that long lists of orders cannot exhaust memory."""
    if orders.sum() <= _TERMS_PER_CHUNK:
        return function(q, sigma, orders)
    pieces, start, used = [], 0, 0.0
    for end, order in enumerate(orders.tolist(), start=1):
        used += order + _TAIL_TERMS + 2
        if used > _TERMS_PER_CHUNK or end == orders.size:
            pieces.append(function(q, sigma, orders[start:end]))
            start, used = end, 0.0
    return np.concatenate(pieces)


def laplace_rdp_curve(orders: Sequence[float] | np.ndarray, scale: float) -> np.ndarray:
    """RDP of the Laplace mechanism with scale b, L1 sensitivity 1, no subsampling, at each order.

    `dpcalc.core.laplace.laplace_rdp` (M17 Prop. 6) evaluated order by order: one implementation
    for convert and the accountant (about a microsecond an order).
    """
    POSITIVE.check("scale", scale)
    order_array = _check_orders(orders)
    return np.array([laplace_rdp(order, float(scale)) for order in order_array.tolist()], dtype=np.float64)


def phase_rdp(phase: Phase, orders: Sequence[float] | np.ndarray) -> tuple[np.ndarray, tuple[OrderBound, ...]]:
    """Per-step RDP of one phase's mechanism at each order."""
    # A Phase has its mechanism's parameter (Phase.__post_init__): the `is not None` only narrows.
    if phase.mechanism == "gaussian" and phase.noise_multiplier is not None:
        if phase.sampling == "uniform" and phase.neighbours == "add-remove":
            # the Poisson pair at sensitivity 2 dominates each step (docs/mathematics.md,
            # "Fixed-size batches under add-remove"): the Poisson curve at noise sigma / 2
            return subsampled_gaussian_rdp(phase.sampling_probability, phase.noise_multiplier / 2.0, orders)
        if phase.sampling == "uniform":
            # replace-one, and zero-out (a replace-one neighbour whose new record is the null one)
            from dpcalc.core.rdp.without_replacement import uniform_gaussian_rdp

            return uniform_gaussian_rdp(phase.sampling_probability, phase.noise_multiplier, orders), ()
        return subsampled_gaussian_rdp(phase.sampling_probability, phase.noise_multiplier, orders)
    if phase.mechanism == "laplace" and phase.scale is not None:
        if phase.sampling_probability != 1.0:
            raise ParameterError(
                "sampling_probability",
                "1 for the laplace mechanism (RDP of the Poisson-subsampled Laplace mechanism is not implemented)",
                phase.sampling_probability,
            )
        return laplace_rdp_curve(orders, phase.scale), ()
    raise ValueError(f"mechanism must be 'gaussian' or 'laplace', got mechanism={phase.mechanism!r}")


# What the RDP curves cover: Poisson sampling under add-remove or zero-out neighbours (the
# same dominating pair: Mironov, Talwar, Zhang 2019), and fixed-size batches under replace-one
# (Wang, Balle, Kasiviswanathan 2019, Thm 27: `without_replacement`).
RDP_COVERS = ("the RDP accountant covers Poisson sampling of records under add-remove or zero-out neighbours "
              "and fixed-size batches under every relation; for Poisson sampling under replace-one, shuffled "
              "batches or user-level privacy use the PLD accountant (dpcalc pld)")


def covered(phase: Phase) -> bool:
    """Whether the RDP curves cover the phase's sampling, neighbour relation and unit of privacy
    (`phases.rdp_covers`)."""
    return rdp_covers(phase.sampling, phase.neighbours, phase.examples_per_user)


def composed_rdp(
    phases: Sequence[Phase], orders: Sequence[float], *, per_step_cache: dict[Any, Any] | None = None
) -> tuple[np.ndarray, tuple[OrderBound, ...]]:
    """RDP of the whole run at each order: per-step RDP times steps, added over phases (M17 Prop. 1).

    Phases that differ only in their number of steps are evaluated once; the cost does not
    depend on the number of steps. `per_step_cache` (an empty dict, passed to several calls)
    keeps the per-step curves across calls, so that a sweep over T evaluates each mechanism
    once: the composed curve is steps times the per-step one. It maps (mechanism, p, sigma,
    scale, the bytes of the order array) to (per-step curve, bounded orders).
    """
    if not phases:
        raise ValueError("give at least one phase")
    for phase in phases:
        if not covered(phase):
            raise ValueError(RDP_COVERS)
    order_array = _check_orders(orders)
    steps_by_mechanism: dict[_MechanismKey, int] = {}
    for phase in phases:
        # the relation matters for fixed-size batches only (the Poisson curves are add-remove's)
        relation: Neighbours = phase.neighbours if phase.sampling == "uniform" else "add-remove"
        key = (phase.mechanism, phase.sampling_probability, phase.noise_multiplier, phase.scale, phase.sampling,
               relation)
        steps_by_mechanism[key] = steps_by_mechanism.get(key, 0) + phase.steps
    total = np.zeros_like(order_array)
    bounded: dict[float, OrderBound] = {}
    for (mechanism, p, sigma, scale, sampling, neighbours), steps in steps_by_mechanism.items():
        cache_key = (mechanism, p, sigma, scale, sampling, neighbours, order_array.tobytes())
        if per_step_cache is not None and cache_key in per_step_cache:
            per_step, phase_bounds = per_step_cache[cache_key]
        else:
            per_step, phase_bounds = phase_rdp(
                Phase(mechanism=mechanism, sampling_probability=p, noise_multiplier=sigma, scale=scale, steps=1,
                      sampling=sampling, neighbours=neighbours),
                order_array,
            )
            if per_step_cache is not None:
                per_step_cache[cache_key] = (per_step, phase_bounds)
        with np.errstate(over="ignore", invalid="ignore"):
            # inf past float64's range (Phase.steps_float): the curve, and epsilon, are then inf
            total = total + count_as_float(steps) * per_step
        for bound in phase_bounds:
            bounded[bound.order] = bound
    return total, tuple(bounded[order] for order in sorted(bounded))


def check_covered(phases: Sequence[Phase], *, per_phase: bool) -> None:
    """Refuse a run the RDP curves have no bound for (`covered`), and a sampled laplace phase;
    `per_phase`: the run was given phase by phase (messages name the phase)."""
    from dpcalc.core.text import format_number
    from dpcalc.core.validation import RunError

    for item in phases:
        if not covered(item):
            raise RunError(
                "{sampling} {chosen} with {neighbours} {relation} has no RDP bound here: the RDP accountant covers "
                "{sampling} poisson with add-remove or zero-out, and {sampling} uniform with every relation (Wang, "
                "Balle, Kasiviswanathan 2019; at add-remove the Poisson curve at sigma / 2); dpcalc pld accounts the "
                "rest", chosen=item.sampling, relation=item.neighbours)
    for index, item in enumerate(phases, start=1):
        if item.mechanism == "laplace" and item.sampling_probability != 1.0:
            raise RunError(("{phase} {index}: p" if per_phase else "{p}") + " must be 1 for the laplace mechanism (RDP "
                           "of the Poisson-subsampled Laplace mechanism is not implemented), got {value}", index=index,
                           value=format_number(item.sampling_probability))
