"""The two-part pair of sampling without replacement (fixed-size batches) under replace-one:
`SymmetrisedPair` (Zhu, Dong, Wang 2022, Prop. 30; Dong, Roth, Su 2022, Thm 4.2)."""

from __future__ import annotations

import math

import numpy as np

from dpcalc.core.arrays import first_of_distinct
from dpcalc.core.pld.normal import log_density
from dpcalc.core.pld.pairs.base import CellMasses, Pair, U, _combine, _gauss_legendre_16
from dpcalc.core.pld.pairs.gaussian import GaussianPair


class SymmetrisedPair(Pair):
    """The two-part pair of a mechanism whose remove pair (A, B) dominates it for eps >= 0 and
    whose add pair (B, A) dominates it for eps < 0 (Zhu, Dong, Wang 2022, arXiv 2106.08567,
    Sec. 5 and Prop. 30): its privacy profile is the larger of the two at every eps, its
    trade-off function the symmetrised C_p(f) of Dong, Roth, Su 2022 (Thm 4.2). This is the
    dominating pair of sampling without replacement (fixed batches) under replace-one, with
    (A, B) the Poisson-subsampled Gaussian pair at rate b/n and sensitivity 2.

    From the profile, P(L > e) = delta(e) - delta'(e) and Q(L > e) = -e^(-e) delta'(e)
    (docs/mathematics.md, "Sampling without replacement"), so its loss has the remove pair's
    law above 0, the add pair's below 0, and an atom at 0 carrying the rest. For the
    Gaussian pairs here (x the mechanism's output, s the noise in units of the sensitivity)
    the remove loss is positive and the add loss negative exactly where x > 1/2, so the atom is

        P(L = 0) = Q(L = 0) = (1 - p) P(|Z| < 1/(2 s)) = (1 - p) erf(1/(2 s sqrt 2)).
    """

    def __init__(self, remove: GaussianPair, add: GaussianPair) -> None:
        if remove.direction != "remove" or add.direction != "add" or (remove.p, remove.sigma) != (add.p, add.sigma):
            raise ValueError("a symmetrised pair takes the remove and add pairs of one mechanism")
        self.remove, self.add = remove, add
        self.support = (add.support[0], remove.support[1])
        p, s = remove.p, remove.sigma
        erf_value = math.erf(0.5 / (s * math.sqrt(2.0)))
        atom = (1.0 - p) * erf_value if p < 1.0 else 0.0
        # math.erf and the products are within a few ulps; 8u is a wide bound
        self.log_atom = math.log(atom) if atom > 0.0 else -math.inf

    def cell_masses(self, edges: np.ndarray) -> CellMasses:
        """`Pair.cell_masses`: the add pair's masses of each cell's part below 0, the remove
        pair's of its part at or above 0, and the atom in the cell that holds 0 (S2)."""
        edges = np.asarray(edges, dtype=float)
        cells = len(edges) - 1
        index = int(np.searchsorted(edges, 0.0, side="right")) - 1  # the cell [e_i, e_i+1) holding 0
        # a cell below that one lies below 0 (its part above 0, [0, 0), is empty), a cell above it
        # above 0: each pair is asked only for the cells it has a part of, the rest are empty
        below = self._part(self.add, np.minimum(edges, 0.0), 0, min(index, cells - 1) + 1)
        above = self._part(self.remove, np.maximum(edges, 0.0), max(index, 0), cells)
        log_p, rel_p = _combine(below.log_p, below.rel_p, above.log_p, above.rel_p)
        log_q, rel_q = _combine(below.log_q, below.rel_q, above.log_q, above.rel_q)
        log_p, rel_p, log_q, rel_q = (np.array(v, dtype=float) for v in (log_p, rel_p, log_q, rel_q))
        if math.isfinite(self.log_atom) and 0 <= index < len(edges) - 1:
            log_p[index], rel_p[index] = _combine(log_p[index], rel_p[index], self.log_atom, 8.0 * U)
            log_q[index], rel_q[index] = _combine(log_q[index], rel_q[index], self.log_atom, 8.0 * U)
        return CellMasses(log_p, rel_p, log_q, rel_q)

    @staticmethod
    def _part(pair: GaussianPair, edges: np.ndarray, first: int, stop: int) -> CellMasses:
        """The masses of `pair` in the cells [edges[i], edges[i+1]), computed for first <= i < stop
        only; the other cells are empty (log mass -inf, no error), as the pair would give them."""
        cells = len(edges) - 1
        log_p, log_q = np.full(cells, -math.inf), np.full(cells, -math.inf)
        rel_p, rel_q = np.zeros(cells), np.zeros(cells)
        if first < stop:
            part = pair.cell_masses(edges[first:stop + 1])
            log_p[first:stop], rel_p[first:stop] = part.log_p, part.rel_p
            log_q[first:stop], rel_q[first:stop] = part.log_q, part.rel_q
        return CellMasses(log_p, rel_p, log_q, rel_q)

    def _half_line(self, pair: GaussianPair, power: float, cap: float = math.inf) -> tuple[np.ndarray, np.ndarray]:
        """Points x > 1/2 and log weights of E_N(0,s^2)[r(x)^power g(x); x > 1/2]: 16-point
        Gauss-Legendre on unit panels in z = x/s from z = 1/(2s), over the window of the integrand's
        maximum (near z = 0 or z = power/s, as in `GaussianPair._grid`) and 40 beyond it. The
        trapezoid rule of `_grid` is spectrally accurate on the whole line, not on a half line."""
        nodes, weights = _gauss_legendre_16()
        start = 0.5 / pair.sigma
        windows = {(start, start + 40.0)}
        peak = power / pair.sigma
        if peak > start:
            windows.add((max(start, peak - 40.0), peak + 40.0))
        z_parts, w_parts = [], []
        for a, b in sorted(windows):
            left = np.arange(a, b, 1.0)
            z_parts.append((left[:, None] + 0.5 * (nodes[None, :] + 1.0)).ravel())
            w_parts.append(np.tile(0.5 * weights, len(left)))
        z = np.concatenate(z_parts)
        z, first = first_of_distinct(z)  # overlapping windows: count each point once
        log_w = np.log(np.concatenate(w_parts)[first])
        x = pair.sigma * z
        log_r = pair.ratio.log_ratio(x)
        loss = log_r if pair.direction == "remove" else -log_r
        keep = loss < cap
        return x[keep], (log_density(z) + power * log_r + log_w)[keep]

    def _parts(self, lam: float, cap: float) -> list[float]:
        """log of E_P[e^(lam L); 0 < L < cap] (remove), E_P[e^(lam L); L < 0] (add) and the atom."""
        parts = [self.log_atom if cap > 0.0 else -math.inf]
        for pair, power in ((self.remove, lam + 1.0), (self.add, -lam)):
            _, values = self._half_line(pair, power, cap)
            if len(values):
                top = float(values.max())
                parts.append(top + math.log(float(np.exp(values - top).sum())))
        return parts

    def log_mgf(self, lam: float, cap: float = math.inf) -> float:
        """`Pair.log_mgf`: the two halves by the pairs' quadratures, plus the atom."""
        parts = np.array(self._parts(lam, cap))
        top = float(parts.max())
        if top == -math.inf:
            return -math.inf
        return top + math.log(float(np.exp(parts - top).sum()))

    def moments(self) -> tuple[float, float]:
        """`Pair.moments`: mean and variance of the loss under P (the atom at 0 adds nothing
        to either sum but its weight)."""
        sums = [0.0, 0.0, 0.0]  # mass, first and second moment
        atom = math.exp(self.log_atom)
        sums[0] += atom
        for pair, power, sign in ((self.remove, 1.0, 1.0), (self.add, 0.0, -1.0)):
            x, log_w = self._half_line(pair, power)
            weight = np.exp(log_w)
            loss = sign * pair.ratio.log_ratio(x)
            sums[0] += float(weight.sum())
            sums[1] += float((weight * loss).sum())
            sums[2] += float((weight * loss * loss).sum())
        mean = sums[1] / sums[0]
        return mean, max(sums[2] / sums[0] - mean * mean, 0.0)
