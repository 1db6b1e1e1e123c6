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

numpy is imported inside the function (the module itself costs nothing to import).
"""

from __future__ import annotations

import math
from collections.abc import Sequence


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
    import numpy as np

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
