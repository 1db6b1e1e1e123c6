"""A step whose pair is drawn at random, the draw released with the output: `RevealedMixture`.

With weights w_j summing to 1 and pairs (P_j, Q_j), the pair is P = sum_j w_j (j, P_j) against
Q = sum_j w_j (j, Q_j): the outcome carries the index j. Its privacy loss on branch j is that of
(P_j, Q_j), so its loss law is the w-mixture of the components' loss laws, under P and under Q
alike, and every delta(eps) is sum_j w_j delta_j(eps). Truncated Poisson sampling is bounded by
such a pair (`core.pld.truncation`, docs/mathematics.md, "Truncated Poisson sampling"): the
index is the number of other records a step samples, which the real mechanism hides, so the
mixture dominates it (joint convexity of the hockey-stick divergence).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dpcalc.core.pld.pairs.base import CellMasses, Pair, U, _combine


class RevealedMixture(Pair):
    """sum_j w_j (j, P_j) against sum_j w_j (j, Q_j), one direction (module docstring).

    Components of weight 0 are left out. `attained()` is the mixture itself: the caller that
    needs a lower bound composes an attained pair of its own (this pair dominates, it is not
    attained)."""

    def __init__(self, components: Sequence[tuple[float, Pair]]) -> None:
        kept = [(float(weight), pair) for weight, pair in components if weight > 0.0]
        if not kept:
            raise ValueError("a revealed mixture needs a component of positive weight")
        if any(not 0.0 < weight <= 1.0 for weight, _ in kept):
            raise ValueError(f"weights must lie in (0, 1], got {[weight for weight, _ in kept]}")
        self.components = kept
        self.log_weights = [math.log(weight) for weight, _ in kept]
        self.support = (min(pair.support[0] for _, pair in kept), max(pair.support[1] for _, pair in kept))
        self.inf_mass = sum(weight * pair.inf_mass for weight, pair in kept)

    def cell_masses(self, edges: np.ndarray) -> CellMasses:
        """The weighted sums of the components' masses of each cell; a sum of non-negative terms is
        known to the largest relative error of its terms, plus the rounding of log w and the sum."""
        log_p = log_q = rel_p = rel_q = None
        for log_w, (_, pair) in zip(self.log_weights, self.components):
            masses = pair.cell_masses(edges)
            lp, lq = log_w + masses.log_p, log_w + masses.log_q
            rp, rq = masses.rel_p + 2.0 * U, masses.rel_q + 2.0 * U
            if log_p is None or log_q is None or rel_p is None or rel_q is None:
                log_p, rel_p, log_q, rel_q = lp, rp, lq, rq
                continue
            log_p, rel_p = _combine(log_p, rel_p, lp, rp)
            log_q, rel_q = _combine(log_q, rel_q, lq, rq)
        assert log_p is not None and rel_p is not None and log_q is not None and rel_q is not None
        return CellMasses(log_p, rel_p, log_q, rel_q)

    def log_mgf(self, lam: float, cap: float = math.inf) -> float:
        """log sum_j w_j E_(P_j)[e^(lam L); L < cap]."""
        terms = [log_w + pair.log_mgf(lam, cap) for log_w, (_, pair) in zip(self.log_weights, self.components)]
        finite = [term for term in terms if term > -math.inf]
        if any(term == math.inf for term in terms):
            return math.inf
        if not finite:
            return -math.inf
        top = max(finite)
        return top + math.log(math.fsum(math.exp(term - top) for term in finite))

    def moments(self) -> tuple[float, float]:
        """Mean and variance of the mixture's loss under P: the weighted means, and the weighted
        second moments less the square of the mean."""
        parts = [(weight, *pair.moments()) for weight, pair in self.components]
        mean = math.fsum(weight * m for weight, m, _ in parts)
        second = math.fsum(weight * (v + m * m) for weight, m, v in parts)
        return mean, max(second - mean * mean, 0.0)
