"""The Poisson-subsampled Laplace mechanism, L1 sensitivity 1, scale b: the two mixtures of
Lap(0, b) and Lap(1, b), the dominating pair of the Laplace mechanism (Koskela, Jalko, Honkela
2020, arXiv 1906.03049; Zhu, Dong, Wang 2022, Sec. 5). Here r(x) = 1 - p + p exp((|x| - |x - 1|)/b)
is constant for x <= 0 and x >= 1, so the loss has two atoms.
"""

from __future__ import annotations

import math

import numpy as np

from dpcalc.core.pld.pairs.base import (
    ATOM_SLACK,
    CellMasses,
    Pair,
    U,
    _cell_ends,
    _combine,
    _gauss_legendre,
)
from dpcalc.core.pld.pairs.gaussian import _SubsampledRatio


class LaplacePair(Pair):
    """Poisson-subsampled Laplace mechanism (scale b, L1 sensitivity 1), one direction."""

    def __init__(self, sampling_probability: float, scale: float, direction: str) -> None:
        self.p = float(sampling_probability)
        self.b = float(scale)
        self.direction = direction
        self._nodes: tuple[np.ndarray, np.ndarray] | None = None
        p, b = self.p, self.b
        # The middle part x in (0, 1): r = 1 - p + p e^((2x - 1)/b) = 1 - p + p e^((x - 1/2)/(b/2)).
        self.ratio = _SubsampledRatio(p, b / 2.0)
        a_minus = math.log1p(p * math.expm1(-1.0 / b))
        a_plus = math.log1p(p * math.expm1(1.0 / b))
        # (loss, P-mass, Q-mass) of the outcomes x <= 0 and x >= 1 under the remove pair
        e = math.exp(-1.0 / b)
        low_atom = (a_minus, 0.5 * (1.0 - p) + 0.5 * p * e, 0.5)
        high_atom = (a_plus, 0.5 * (1.0 - p) * e + 0.5 * p, 0.5 * e)
        if direction == "remove":
            self.atoms = (low_atom, high_atom)
            self.support = (a_minus, a_plus)
        elif direction == "add":
            self.atoms = ((-a_plus, high_atom[2], high_atom[1]), (-a_minus, low_atom[2], low_atom[1]))
            self.support = (-a_plus, -a_minus)
        else:
            raise ValueError(f"direction must be 'remove' or 'add', got direction={direction!r}")

    def _middle(self, x_lo: np.ndarray, e_lo: np.ndarray, x_hi: np.ndarray,
                e_hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """log masses of Lap(0, b) and Lap(1, b) on [x_lo, x_hi] clipped to [0, 1]."""
        b = self.b
        lo = np.clip(x_lo, 0.0, 1.0)
        hi = np.clip(x_hi, 0.0, 1.0)
        e_lo = np.where((x_lo > 0.0) & (x_lo < 1.0), e_lo, 0.0)
        e_hi = np.where((x_hi > 0.0) & (x_hi < 1.0), e_hi, 0.0)
        width = hi - lo
        nonempty = width > 0.0
        w = np.where(nonempty, width, 1.0)
        one_minus = -np.expm1(-w / b)
        with np.errstate(divide="ignore"):
            log_core = np.log(one_minus) - math.log(2.0)
            # Lap(0, b) on [lo, hi] within [0, inf): (e^-lo/b - e^-hi/b)/2
            log_m0 = np.where(nonempty, -lo / b + log_core, -math.inf)
            # Lap(1, b) on [lo, hi] within (-inf, 1]: (e^((hi-1)/b) - e^((lo-1)/b))/2
            log_m1 = np.where(nonempty, (hi - 1.0) / b + log_core, -math.inf)
        # d log M / d end point is at most 1/(b (1 - e^(-w/b))); the width itself is rounded
        sens = (e_lo + e_hi + 2.0 * U * (np.abs(lo) + np.abs(hi))) / (b * np.where(nonempty, one_minus, 1.0))
        rel = sens + 8.0 * U * (1.0 + 1.0 / b)
        rel = np.where(nonempty, rel, 0.0)
        return log_m0, rel, log_m1, rel

    def cell_masses(self, edges: np.ndarray) -> CellMasses:
        """`Pair.cell_masses` for the subsampled Laplace mechanism: the middle part in closed form
        and the two atoms (x <= 0, x >= 1) placed by the upper end of their location (S2)."""
        edges = np.asarray(edges, dtype=float)
        p = self.p
        # x here is the exponent variable y with r = r(y)
        x_lo, e_lo, x_hi, e_hi = _cell_ends(self.ratio.inverse, edges, self.direction)
        x_hi = np.where(np.isnan(x_hi), math.inf, x_hi)
        log_m0, rel_m0, log_m1, rel_m1 = self._middle(x_lo, e_lo, x_hi, e_hi)
        if p == 1.0:
            mix_log, mix_rel = log_m1, rel_m1
        else:
            mix_log, mix_rel = _combine(
                math.log1p(-p) + log_m0, rel_m0 + 2.0 * U, math.log(p) + log_m1, rel_m1 + 2.0 * U
            )
        if self.direction == "remove":
            log_p, rel_p, log_q, rel_q = mix_log, mix_rel, log_m0, rel_m0
        else:
            log_p, rel_p, log_q, rel_q = log_m0, rel_m0, mix_log, mix_rel
        log_p, rel_p, log_q, rel_q = (np.array(v, dtype=float) for v in (log_p, rel_p, log_q, rel_q))
        for loss, p_mass, q_mass in self.atoms:
            # The atom's location is a rounded logarithm: it is placed by the upper end of its
            # uncertainty, so that a cell [lo, hi) never holds an atom that truly lies at or
            # above hi (upper bounds round losses up; the lower-bound construction has h/2 of
            # slack at every cell edge, far more than this).
            where = loss + ATOM_SLACK * (1.0 + abs(loss))
            index = int(np.searchsorted(edges, where, side="right")) - 1
            if 0 <= index < len(edges) - 1:
                lp, rp = _combine(log_p[index], rel_p[index], math.log(p_mass), 4.0 * U)
                lq, rq = _combine(log_q[index], rel_q[index], math.log(q_mass), 4.0 * U)
                log_p[index], rel_p[index], log_q[index], rel_q[index] = lp, rp, lq, rq
        return CellMasses(log_p, rel_p, log_q, rel_q)

    def _quadrature(self) -> tuple[np.ndarray, np.ndarray]:
        """Nodes (x in (0, 1)) and log weights of Lap(0, b), plus the atoms, for E_Q[f(r)]."""
        if self._nodes is not None:
            return self._nodes
        nodes, weights = _gauss_legendre()
        # split [0, 1] into 16 panels to follow integrands that grow like e^(c x) for large c
        panels = 16
        xs, logw = [], []
        for i in range(panels):
            a, c = i / panels, (i + 1) / panels
            x = 0.5 * (c - a) * nodes + 0.5 * (c + a)
            xs.append(x)
            logw.append(np.log(0.5 * (c - a) * weights) - x / self.b - math.log(2.0 * self.b))
        self._nodes = (np.concatenate(xs), np.concatenate(logw))
        return self._nodes

    def _remove_atoms(self) -> tuple[tuple[float, float], tuple[float, float]]:
        e = math.exp(-1.0 / self.b)
        a_minus = math.log1p(self.p * math.expm1(-1.0 / self.b))
        a_plus = math.log1p(self.p * math.expm1(1.0 / self.b))
        return ((a_minus, 0.5), (a_plus, 0.5 * e))  # (log r, Q-mass)

    def log_mgf(self, lam: float, cap: float = math.inf) -> float:
        """`Pair.log_mgf`: the middle by Gauss-Legendre quadrature, plus the two atoms."""
        power = lam + 1.0 if self.direction == "remove" else -lam
        sign = 1.0 if self.direction == "remove" else -1.0
        x, logw = self._quadrature()
        log_r = self.ratio.log_ratio(x)
        values = list(np.where(sign * log_r < cap, logw + power * log_r, -math.inf))
        for log_ratio, q_mass in self._remove_atoms():
            if sign * log_ratio < cap:
                values.append(math.log(q_mass) + power * log_ratio)
        arr = np.array(values)
        top = float(arr.max())
        if top == -math.inf:
            return -math.inf
        return top + math.log(float(np.exp(arr - top).sum()))

    def moments(self) -> tuple[float, float]:
        """`Pair.moments`: mean and variance of the loss under P (quadrature and atoms)."""
        power = 1.0 if self.direction == "remove" else 0.0
        x, logw = self._quadrature()
        atoms = self._remove_atoms()
        ratios = np.concatenate((self.ratio.log_ratio(x), [log_ratio for log_ratio, _ in atoms]))
        log_weights = np.concatenate((logw, [math.log(q_mass) for _, q_mass in atoms]))
        weight = np.exp(log_weights + power * ratios)
        loss = ratios if self.direction == "remove" else -ratios
        total = weight.sum()
        mean = float((weight * loss).sum() / total)
        variance = float((weight * (loss - mean) ** 2).sum() / total)
        return mean, variance
