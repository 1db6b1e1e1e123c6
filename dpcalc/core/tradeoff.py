"""Trade-off curves (f-DP) from privacy profiles: the certified curve a tight accountant implies.

Source: Dong, Roth, Su, "Gaussian Differential Privacy" (JRSS-B 84(1), 2022, arXiv 1905.02383),
"DRS" below. A mechanism that is (eps, delta)-DP is f_{eps,delta}-DP with (DRS eq. (5))

    f_{eps,delta}(alpha) = max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha)),

and trade-off guarantees combine by taking the pointwise maximum: a mechanism that is f_i-DP
for every i is (sup_i f_i)-DP. So a mechanism that is (eps, delta(eps))-DP for every eps of
a grid is f-DP with

    f(alpha) = sup_eps f_{eps,delta(eps)}(alpha)                                  (*)

and by the primal-dual relation (DRS Prop. 2.12: a symmetric trade-off function f is the
supremum of the f_{eps,delta(eps)} over all eps >= 0, delta(eps) = 1 + f*(-e^eps)) (*) tends
to the mechanism's own trade-off function as the grid fills [0, inf). Every term is a valid
lower bound on the true trade-off function as long as delta(eps) is at least the true
delta(eps): with certified upper bounds on delta (the PLD accountant's delta_upper) on a
finite grid, (*) is a pessimistic, still valid, trade-off curve. Never above the truth: a
coarser grid or a looser delta only lowers it.

Read as the largest true-positive rate of a membership attack, TPR = 1 - f(alpha), (*) is a
certified upper bound (`tpr_terms`, `tpr_bounds`); certified lower bounds on delta give the
lower end of the interval, cell by cell of the grid (`tpr_bounds`). A run whose Poisson batches
are capped has output laws within total variation eta of the uncapped run's, so its curve f'
obeys f'(alpha) >= f(alpha + eta) - eta: its TPR at alpha is at most the uncapped TPR at
alpha + eta plus eta, and at least the uncapped TPR at alpha - eta less eta (`capped_tpr_bounds`).
What these figures mean for attacks: `dpcalc.core.risk`, and docs/mathematics.md, "Attack risk".
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

# The grid of eps on which the curve is read: this many evenly spaced points from 0 to where
# e^eps times the smallest FPR reaches 1. A cell of width h costs the lower end of a TPR about
# h^2 relative (`tpr_bounds`): with the exact GDP profile, 4001 points on [0, 13.9] leave
# 1e-4 at FPR 1e-5. An even grid keeps the chord each cell borrows as wide as the cell.
GRID_POINTS = 4001
# `tpr_bounds` takes this many alphas at a time (arrays of this many rows stay in cache).
_ROWS = 8
# Relative margin for the rounding of the few floating-point operations on the certified deltas.
MARGIN = 1e-14


def dp_tradeoff(alpha: float, epsilon: float, delta: float) -> float:
    """f_{eps,delta}(alpha) (DRS eq. (5)): the smallest type-II error at type-I error alpha."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got alpha={alpha}")
    if epsilon < 0 or math.isnan(epsilon):
        raise ValueError(f"epsilon must be >= 0, got epsilon={epsilon}")
    if not 0.0 <= delta <= 1.0:
        raise ValueError(f"delta must be in [0, 1], got delta={delta}")
    rest = 1.0 - delta
    first = rest - math.exp(epsilon) * alpha if epsilon < 709.0 else (rest if alpha == 0.0 else -math.inf)
    second = math.exp(-epsilon) * (rest - alpha)
    return max(0.0, first, second)


def tradeoff_from_profile(
    epsilons: Sequence[float], deltas: Sequence[float], alphas: Sequence[float]
) -> tuple[float, ...]:
    """beta(alpha) = sup over the grid of f_{eps,delta(eps)}(alpha) (see the module docstring).

    `epsilons` (>= 0, finite) and `deltas` (in [0, 1]; certified upper bounds of the
    profile for a certified curve) are paired; `alphas` are type-I errors in [0, 1]. The
    result is a valid lower bound on the trade-off function of any mechanism that is
    (eps, delta)-DP at each pair: it never exceeds the true curve. Infinite or NaN deltas
    (an unresolved bound) carry no information and are skipped, as are infinite epsilons.
    """
    eps = np.asarray(epsilons, dtype=float)
    dlt = np.asarray(deltas, dtype=float)
    alpha = np.asarray(alphas, dtype=float)
    if eps.shape != dlt.shape or eps.ndim != 1:
        raise ValueError(f"epsilons and deltas must be paired 1-d sequences, got shapes {eps.shape} and {dlt.shape}")
    if np.any(np.isnan(eps)) or np.any(eps < 0):
        raise ValueError("epsilons must be >= 0")
    if np.any((alpha < 0) | (alpha > 1) | np.isnan(alpha)):
        raise ValueError("alphas must be in [0, 1]")
    if np.any(dlt < 0):
        raise ValueError("deltas must be >= 0")
    usable = np.isfinite(eps) & np.isfinite(dlt) & (dlt <= 1.0)
    eps, rest = eps[usable], 1.0 - dlt[usable]
    if eps.size == 0:
        return tuple(0.0 for _ in alpha)
    # rows: alphas, columns: the grid. e^eps overflows only where the line is 0 anyway (alpha > 0).
    with np.errstate(over="ignore", invalid="ignore"):
        slope = np.exp(eps)
        first = rest[None, :] - slope[None, :] * alpha[:, None]
        first = np.where(alpha[:, None] == 0.0, rest[None, :], first)
        second = np.exp(-eps)[None, :] * (rest[None, :] - alpha[:, None])
    best = np.maximum(np.max(first, axis=1), np.max(second, axis=1))
    return tuple(float(value) for value in np.maximum(best, 0.0))


def tpr_terms(eps: np.ndarray, delta: np.ndarray, alphas: np.ndarray) -> np.ndarray:
    """1 - f_{eps_j, delta_j}(alpha_i) for every alpha (rows) and grid point (columns), without
    cancellation: min(1, delta + e^eps alpha, (1 - e^-eps) + e^-eps (delta + alpha))."""
    with np.errstate(over="ignore"):
        first = delta[None, :] + np.exp(eps)[None, :] * alphas[:, None]
    second = -np.expm1(-eps)[None, :] + np.exp(-eps)[None, :] * (delta[None, :] + alphas[:, None])
    terms: np.ndarray = np.minimum(np.minimum(first, second), 1.0)
    return terms


def tpr_bounds(eps: np.ndarray, upper: np.ndarray, lower: np.ndarray,
               alphas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(TPR upper, TPR lower) at every alpha from certified delta bounds on the grid `eps` (which
    starts at 0; see the module docstring). TPR >= FPR holds for every curve.

    The upper end is read at the grid points. The lower end bounds f over each cell [x_j, x_j+1]
    of x = e^eps, and over the ray beyond the last point (where delta >= 0 is all that is used).
    On a cell, delta(x) >= delta(x_j+1) (delta falls), and, since delta is convex in x (it is
    E_Q[(e^L - x)_+] for every pair of neighbouring datasets, and a maximum of convex functions),
    delta(x) >= delta(x_j+1) + u (delta(x_j+1) - delta(x_j+2)), u = (x_j+1 - x)/(x_j+2 - x_j+1),
    a line in x. Both branches of f_{x, D}(alpha), 1 - D - x alpha and (1 - D - alpha)/x, are
    extreme at the ends of the cell when D is constant or linear in x, so f is bounded on the
    cell by its values at the ends with each lower bound of delta, and the smaller bound is kept.
    The constant bound alone loses about |delta'| h per cell of width h; the line, h^2.

    The alphas are taken _ROWS at a time: the same operations on each element, on arrays of
    _ROWS x len(eps) that stay in the processor's cache (three times faster for the curve's ~100
    alphas on a 4001-point grid than all at once).
    """
    x = np.exp(eps)
    fall = -np.expm1(-eps)
    shrink = np.exp(-eps)
    x_left, x_right = x[:-1], x[1:]
    floor = lower[1:]  # delta at the right end of each cell: a lower bound on the whole cell
    # the line through the right end with the slope of the next chord, at the left end (last cell: none)
    run = np.append(x[2:] - x[1:-1], math.inf)
    drop = np.append(lower[1:-1] - upper[2:], 0.0)
    line = floor + (x_right - x_left) / run * drop
    tpr_upper = np.empty(len(alphas))
    cell_lower = np.empty(len(alphas))
    for start in range(0, len(alphas), _ROWS):
        rows = slice(start, start + _ROWS)
        a = alphas[rows, None]
        # tpr_terms, with the exponentials of the grid computed once
        with np.errstate(over="ignore"):
            first = upper[None, :] + x[None, :] * a
        second = fall[None, :] + shrink[None, :] * (upper[None, :] + a)
        tpr_upper[rows] = np.min(np.minimum(np.minimum(first, second), 1.0), axis=1)
        with np.errstate(over="ignore", invalid="ignore"):
            first_const = floor + x_left * a
            first_line = np.minimum(line + x_left * a, floor + x_right * a)
            second_const = 1.0 - (1.0 - floor - a) / x_left
            second_line = np.minimum(1.0 - (1.0 - line - a) / x_left, 1.0 - (1.0 - floor - a) / x_right)
        cell_lower[rows] = np.min(np.minimum(np.maximum(first_const, first_line),
                                             np.maximum(second_const, second_line)), axis=1)
    tpr_upper *= 1.0 + MARGIN
    with np.errstate(over="ignore"):
        ray = np.minimum(x[-1] * alphas, 1.0 - (1.0 - alphas) / x[-1])
    tpr_lower = np.minimum(cell_lower, ray) * (1.0 - MARGIN)
    tpr_upper = np.minimum(np.maximum(tpr_upper, alphas), 1.0)
    tpr_lower = np.minimum(np.maximum(tpr_lower, alphas), tpr_upper)
    return tpr_upper, tpr_lower


def capped_tpr_bounds(eps: np.ndarray, upper: np.ndarray, lower: np.ndarray, alphas: np.ndarray,
                      overflow: float, overflow_below: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """`tpr_bounds` of the run with its batches capped, `overflow` = eta (module docstring): the
    upper end read at alpha + eta, plus eta; the lower end at alpha - eta', less eta', eta' =
    `overflow_below` (default eta) (each shifted FPR rounded outward, the sums rounded outward);
    TPR >= FPR as before."""
    down = overflow if overflow_below is None else overflow_below
    if overflow == 0.0 and down == 0.0:
        return tpr_bounds(eps, upper, lower, alphas)
    above = np.minimum(np.nextafter(alphas + overflow, 2.0), 1.0)
    below = np.maximum(np.nextafter(alphas - down, -1.0), 0.0)
    tpr_upper = np.minimum((tpr_bounds(eps, upper, lower, above)[0] + overflow) * (1.0 + MARGIN), 1.0)
    tpr_lower = np.maximum((tpr_bounds(eps, upper, lower, below)[1] - down) * (1.0 - MARGIN), alphas)
    return tpr_upper, np.minimum(tpr_lower, tpr_upper)
