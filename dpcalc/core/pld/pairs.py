"""Dominating pairs of the mechanisms the PLD accountant knows, as privacy-loss distributions.

A pair (P, Q) is described by its privacy loss L = log(dP/dQ) under P: for any loss interval
[a, b) the model returns P(a <= L < b) and Q(a <= L < b) (the same set of outcomes measured
under Q), as logarithms with bounds on their relative errors. That is all the discretisation
needs (see `discretise`).

Poisson-subsampled Gaussian, sensitivity 1, noise multiplier sigma, add/remove adjacency
(Mironov, Talwar, Zhang 2019, arXiv 1908.10530, Sec. 3; Zhu, Dong, Wang 2022, arXiv 2106.08567,
Prop. 30 for the two orders of the pair):
    remove:  P = (1 - p) N(0, s^2) + p N(1, s^2),  Q = N(0, s^2)
    add:     P = N(0, s^2),  Q = (1 - p) N(0, s^2) + p N(1, s^2)
with the likelihood ratio r(x) = 1 - p + p exp((x - 1/2)/s^2), increasing in x.

Poisson-subsampled Laplace mechanism, L1 sensitivity 1, scale b: the same two mixtures with
Lap(0, b) and Lap(1, b), the dominating pair of the Laplace mechanism (Koskela, Jalko,
Honkela 2020, arXiv 1906.03049; Zhu, Dong, Wang 2022, Sec. 5). Here
r(x) = 1 - p + p exp((|x| - |x - 1|)/b) is constant for x <= 0 and x >= 1, so L has two atoms.

Every x above is a real number computed in floating point; the sensitivity of each mass to
the rounding of x is added to its error bound, so the bounds hold for the exact interval.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from dpcalc.core.pld.normal import (
    UNIT_ROUNDOFF,
    log_density,
    log_interval_mass,
)
from dpcalc.core.special_array import log_expm1

U = UNIT_ROUNDOFF

# Bound on the rounding error of an atom's location log(1 - p + p e^(+-1/b)), relative to 1 + |loss|.
ATOM_SLACK = 16.0 * UNIT_ROUNDOFF


@dataclass(frozen=True)
class CellMasses:
    """log P and log Q of a sequence of loss intervals, with bounds on their relative errors.

    The true P-mass lies in [exp(log_p) (1 - rel_p), exp(log_p) (1 + rel_p)], likewise for Q;
    rel >= 1 means only the upper end is known.
    """

    log_p: np.ndarray
    rel_p: np.ndarray
    log_q: np.ndarray
    rel_q: np.ndarray


def _combine(log_a: np.ndarray | float, rel_a: np.ndarray | float, log_b: np.ndarray | float,
             rel_b: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """log(A + B) of two non-negative quantities and the relative error of the sum."""
    with np.errstate(invalid="ignore"):
        total = np.logaddexp(log_a, log_b)
    rel = np.maximum(rel_a, rel_b) + 2.0 * U
    rel = np.where(np.isneginf(total), 0.0, rel)
    return total, rel


def _z_windows(peak: float) -> tuple[np.ndarray, float]:
    """Trapezoid points z (step 0.125) over +-40 around 0 and around `peak`: one window when the
    two are within 80 of each other, else two disjoint ones in increasing order (the Gaussian
    pairs' integrands phi(z) r^power have their maxima near those two points)."""
    step = 0.125
    low, high = sorted((0.0, peak))
    if high - low <= 80.0:
        return np.arange(low - 40.0, high + 40.0 + step, step), step
    return np.concatenate((np.arange(low - 40.0, low + 40.0, step), np.arange(high - 40.0, high + 40.0 + step, step))), step


class Pair:
    """Interface of a dominating pair in one direction."""

    #: lowest and highest value the loss can take (possibly infinite); mass at the ends may be atoms
    support: tuple[float, float]

    def cell_masses(self, edges: np.ndarray) -> CellMasses:  # pragma: no cover - interface
        """Masses of the intervals [edges[i], edges[i+1]); edges sorted, -inf/inf allowed."""
        raise NotImplementedError

    def log_mgf(self, lam: float, cap: float = math.inf) -> float:  # pragma: no cover - interface
        """log E_P[exp(lam L); L < cap] by quadrature (cap = inf: lam times the Renyi divergence of order lam + 1)."""
        raise NotImplementedError

    def moments(self) -> tuple[float, float]:  # pragma: no cover - interface
        """Mean and variance of L under P."""
        raise NotImplementedError


class _SubsampledRatio:
    """r(x) = 1 - p + p e^((y - 1/2)/c) for y = x (Gaussian, c = sigma^2) or the Laplace exponent.

    `inverse(l)` gives the point y where log r(y) = l, -inf where l <= log(1 - p), and a bound
    on its absolute rounding error.
    """

    def __init__(self, p: float, scale: float) -> None:
        self.p = p
        self.scale = scale  # c in the exponent (y - 1/2)/c
        self.log1m_p = math.log1p(-p) if p < 1.0 else -math.inf
        self.log_p = math.log(p)

    def inverse(self, loss: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        loss = np.asarray(loss, dtype=float)
        c = self.scale
        if self.p == 1.0:
            y = 0.5 + c * loss
            err = 4.0 * U * (np.abs(y) + c * np.abs(loss))
            return y, np.where(np.isfinite(y), err, 0.0)
        d = loss - self.log1m_p
        valid = d > 0.0
        d_safe = np.where(valid, d, 1.0)
        log_e = log_expm1(d_safe)
        y = 0.5 + c * (self.log1m_p + log_e - self.log_p)
        # error of d = l - log(1 - p) and its effect through d/dd log(e^d - 1) = 1/(1 - e^-d)
        d_err = 4.0 * U * (np.abs(np.where(np.isfinite(loss), loss, 0.0)) + abs(self.log1m_p))
        sens = 1.0 / -np.expm1(-d_safe)
        err = c * (d_err * sens + 8.0 * U * (abs(self.log1m_p) + np.abs(log_e) + abs(self.log_p) + 1.0))
        err = err + 4.0 * U * np.abs(y)
        # Near the bulk the form above subtracts two logarithms of similar size (log(e^d - 1) and
        # log p, both ~ log p): its error, ~u |log p| c, is far larger than the change of y over a
        # fine grid cell, and every cell mass inherits it. There the same point is
        #   y = 1/2 + c log1p(expm1(l) / p)     (r(y) = e^l  <=>  e^((y - 1/2)/c) = 1 + (e^l - 1)/p),
        # whose error is relative to the (small) result: b = expm1(l)/p carries <= 2u relative
        # (expm1 within an ulp, one division), log1p turns it into <= 2u |b|/(1 + b) absolute
        # and adds an ulp of its result, c (itself rounded) an ulp more, and the final sum half an
        # ulp of y; twice each of those is the bound. Used where |l| <= 1 and b > -1/2, where
        # neither overflow nor the condition number |b|/(1 + b) <= 1 is a concern.
        with np.errstate(over="ignore", invalid="ignore"):
            b = np.expm1(np.where(valid, loss, 0.0)) / self.p
        near = valid & (np.abs(loss) <= 1.0) & (b > -0.5)
        b_near = np.where(near, b, 0.0)
        log_near = np.log1p(b_near)
        y_near = 0.5 + c * log_near
        err_near = c * (4.0 * U * np.abs(b_near) / (1.0 + b_near) + 4.0 * U * np.abs(log_near)) + 4.0 * U * np.abs(y_near)
        y = np.where(near, y_near, y)
        err = np.where(near, err_near, err)
        y = np.where(valid, y, -math.inf)
        err = np.where(valid & np.isfinite(y), err, 0.0)
        return y, err

    def log_ratio(self, y: np.ndarray) -> np.ndarray:
        """log r(y), stable."""
        if self.p == 1.0:
            return (y - 0.5) / self.scale
        return np.logaddexp(self.log1m_p, self.log_p + (y - 0.5) / self.scale)


class GaussianPair(Pair):
    """Poisson-subsampled Gaussian mechanism, one direction ("remove" or "add")."""

    def __init__(self, sampling_probability: float, noise_multiplier: float, direction: str) -> None:
        self.p = float(sampling_probability)
        self.sigma = float(noise_multiplier)
        self.direction = direction
        self.ratio = _SubsampledRatio(self.p, self.sigma**2)
        bound = -self.ratio.log1m_p  # -log(1 - p), inf when p = 1
        if direction == "remove":
            self.support = (self.ratio.log1m_p, math.inf)
        elif direction == "add":
            self.support = (-math.inf, bound)
        else:
            raise ValueError(f"direction must be 'remove' or 'add', got direction={direction!r}")

    def _x_interval(self, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """End points [x_lo, x_hi) in x of the loss cells, with their rounding errors."""
        if self.direction == "remove":
            x, err = self.ratio.inverse(edges)
            return x[:-1], err[:-1], x[1:], err[1:]
        # add: L' = -log r(x) >= l  <=>  x <= x(-l); the cell [l_a, l_b) is x in (x(-l_b), x(-l_a)]
        x, err = self.ratio.inverse(-edges)
        return x[1:], err[1:], x[:-1], err[:-1]

    def cell_masses(self, edges: np.ndarray) -> CellMasses:
        """`Pair.cell_masses` for the subsampled Gaussian: the x-interval of each loss cell, its masses
        under both components as differences of normal tails, with their error bounds (S2)."""
        edges = np.asarray(edges, dtype=float)
        x_lo, e_lo, x_hi, e_hi = self._x_interval(edges)
        # x may be +-inf at the ends: x(l) = -inf below the support; +inf for l = +inf
        s = self.sigma
        t0_lo, t0_hi = x_lo / s, x_hi / s
        t1_lo, t1_hi = (x_lo - 1.0) / s, (x_hi - 1.0) / s
        log_m0, rel_m0 = log_interval_mass(t0_lo, t0_hi)
        log_m1, rel_m1 = log_interval_mass(t1_lo, t1_hi)
        # sensitivity to the rounding of the end points: density * error / mass
        rel_m0 = rel_m0 + _x_sensitivity(s, t0_lo, e_lo, t0_hi, e_hi, log_m0)
        rel_m1 = rel_m1 + _x_sensitivity(s, t1_lo, e_lo, t1_hi, e_hi, log_m1)
        if self.p == 1.0:
            mix_log, mix_rel = log_m1, rel_m1
        else:
            mix_log, mix_rel = _combine(
                self.ratio.log1m_p + log_m0, rel_m0 + 2.0 * U, self.ratio.log_p + log_m1, rel_m1 + 2.0 * U
            )
        if self.direction == "remove":
            return CellMasses(mix_log, mix_rel, log_m0, rel_m0)
        return CellMasses(log_m0, rel_m0, mix_log, mix_rel)

    # -- quadrature ---------------------------------------------------------------------------

    def _grid(self, power: float, cap: float = math.inf) -> tuple[np.ndarray, float]:
        """z-points (x = sigma z, z ~ N(0, 1)) covering the integrand phi(z) r(sigma z)^power.

        d/dz log r(sigma z) = w/sigma with w in [0, 1] increasing, so the log integrand
        -z^2/2 + power log r has its maxima near 0 (where w ~ 0) or near power/sigma (w ~ 1),
        and each maximum is at least as wide as a standard normal (the added term is convex
        when power > 0, and for power < 0 its concavity only narrows one mode, which then
        lies between the two points named). Windows of +-40 around both, at a step of 0.125,
        make the trapezoid rule far more accurate than the tilt needs. Points whose loss is at
        or above `cap` are left out (the truncated MGF).
        """
        z, step = _z_windows(power / self.sigma)
        if math.isfinite(cap):
            log_r = self.ratio.log_ratio(self.sigma * z)
            loss = log_r if self.direction == "remove" else -log_r
            z = z[loss < cap]
        return z, step

    def log_mgf(self, lam: float, cap: float = math.inf) -> float:
        """`Pair.log_mgf` by quadrature over x (the loss is monotone in x)."""
        power = lam + 1.0 if self.direction == "remove" else -lam
        z, step = self._grid(power, cap)
        if len(z) == 0:
            return -math.inf
        values = log_density(z) + power * self.ratio.log_ratio(self.sigma * z)
        top = float(values.max())
        return top + math.log(float(np.exp(values - top).sum()) * step)

    def moments(self) -> tuple[float, float]:
        """`Pair.moments`: mean and variance of the loss under P, by the same quadrature."""
        power = 1.0 if self.direction == "remove" else 0.0
        z, step = self._grid(power)
        log_r = self.ratio.log_ratio(self.sigma * z)
        weight = np.exp(log_density(z) + power * log_r) * step
        loss = log_r if self.direction == "remove" else -log_r
        total = weight.sum()
        mean = float((weight * loss).sum() / total)
        variance = float((weight * (loss - mean) ** 2).sum() / total)
        return mean, variance


@functools.lru_cache(maxsize=1)
def _gauss_legendre_16() -> tuple[np.ndarray, np.ndarray]:
    """16-point Gauss-Legendre rule on [-1, 1]."""
    return np.polynomial.legendre.leggauss(16)


@functools.lru_cache(maxsize=1)
def _gauss_legendre() -> tuple[np.ndarray, np.ndarray]:
    """200-point Gauss-Legendre rule on [-1, 1] (an eigenvalue problem: computed once)."""
    return np.polynomial.legendre.leggauss(200)


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
        if self.direction == "remove":
            x, err = self.ratio.inverse(edges)  # x here is the exponent variable y with r = r(y)
            x_lo, e_lo, x_hi, e_hi = x[:-1], err[:-1], x[1:], err[1:]
        else:
            x, err = self.ratio.inverse(-edges)
            x_lo, e_lo, x_hi, e_hi = x[1:], err[1:], x[:-1], err[:-1]
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


class ReplaceOnePair(Pair):
    """Poisson-subsampled Gaussian mechanism under replace-one neighbours (sensitivity 1 in
    each record's contribution, so the two datasets' sums differ by up to 2):

        P = (1 - p) N(0, s^2) + p N(1, s^2),   Q = (1 - p) N(0, s^2) + p N(-1, s^2),

    the tight dominating pair of Lebeda, Regehr, Kamath, Steinke 2024 (arXiv 2405.20769),
    attained when the replaced record's clipped gradient is +C and its replacement's -C. With
    r(y) = 1 - p + p e^((y - 1/2)/s^2) the loss is L(x) = log r(x) - log r(-x), increasing and odd
    in x, so the pair is its own reverse (L under Q is -L under P): one direction suffices. Its
    inverse has the closed form (docs/mathematics.md, "Neighbour relations")

        x(l) = s^2 (l/2 + asinh((1 - p) sinh(l/2) / c)),   c = p e^(-1/(2 s^2)),

    free of cancellation: sinh, the quotient and asinh each keep their relative accuracy.
    """

    def __init__(self, sampling_probability: float, noise_multiplier: float) -> None:
        self.p = float(sampling_probability)
        self.sigma = float(noise_multiplier)
        self.ratio = _SubsampledRatio(self.p, self.sigma**2)
        self.support = (-math.inf, math.inf)
        s2 = self.sigma**2
        self._log_c = math.log(self.p) - 0.5 / s2  # log c
        # relative error of (1 - p)/c: log1p, exp of 1/(2 s^2) (itself rounded), the division
        self._rel_t = 8.0 * U * (1.0 + 0.5 / s2)

    def inverse(self, loss: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """x(l) for each loss l, and a bound on its absolute rounding error."""
        loss = np.asarray(loss, dtype=float)
        s2 = self.sigma**2
        half = 0.5 * np.where(np.isfinite(loss), loss, 0.0)
        if self.p == 1.0:
            asinh_t = np.zeros_like(half)
            err_as = np.zeros_like(half)
        else:
            log_scale = math.log1p(-self.p) - self._log_c  # log((1 - p)/c)
            with np.errstate(over="ignore"):
                t = np.sinh(half) * math.exp(log_scale) if log_scale < 700.0 else np.full_like(half, math.inf)
            big = ~np.isfinite(t) | (np.abs(t) > 1e150)
            # asinh(t) = sign(t) (log 2 + log|t|) to double precision for |t| > 1e150, with
            # log|sinh(l/2)| = |l|/2 + log(1 - e^-|l|) - log 2
            a = np.abs(half)
            with np.errstate(divide="ignore"):
                log_abs_t = a + np.log(-np.expm1(-2.0 * np.where(big, a, 1.0))) - math.log(2.0) + log_scale
            asinh_big = np.sign(half) * (math.log(2.0) + log_abs_t)
            asinh_t = np.where(big, asinh_big, np.arcsinh(np.where(big, 0.0, t)))
            # relative error of t (sinh within 2 ulps, the scale) becomes an absolute error of at
            # most that in asinh (|t| asinh'(t) <= 1); plus 2 ulps of the result
            err_as = self._rel_t + 4.0 * U + 4.0 * U * np.abs(asinh_t) + 4.0 * U * a
        x = s2 * (half + asinh_t)
        err = s2 * (err_as + 2.0 * U * (np.abs(half) + np.abs(asinh_t))) + 4.0 * U * np.abs(x)
        x = np.where(np.isposinf(loss), math.inf, np.where(np.isneginf(loss), -math.inf, x))
        return x, np.where(np.isfinite(x), err, 0.0)

    def log_loss(self, x: np.ndarray) -> np.ndarray:
        """L(x) = log r(x) - log r(-x) (quadrature only)."""
        loss: np.ndarray = self.ratio.log_ratio(x) - self.ratio.log_ratio(-x)
        return loss

    def cell_masses(self, edges: np.ndarray) -> CellMasses:
        """`Pair.cell_masses`: the x-interval of each loss cell and its masses under N(0), N(1)
        and N(-1) as differences of normal tails, with their error bounds (S2)."""
        edges = np.asarray(edges, dtype=float)
        x, err = self.inverse(edges)
        x_lo, e_lo, x_hi, e_hi = x[:-1], err[:-1], x[1:], err[1:]
        s = self.sigma
        masses = []
        for shift in (0.0, 1.0, -1.0):
            t_lo, t_hi = (x_lo - shift) / s, (x_hi - shift) / s
            # the subtraction and the division round too: up to an ulp each of |x - shift| (in x);
            # at p = 1 near x = 0 the inverse itself is exact and this is all the error there is
            e_lo = err[:-1] + 4.0 * U * (np.abs(np.where(np.isfinite(x_lo), x_lo, 0.0)) + abs(shift))
            e_hi = err[1:] + 4.0 * U * (np.abs(np.where(np.isfinite(x_hi), x_hi, 0.0)) + abs(shift))
            log_m, rel_m = log_interval_mass(t_lo, t_hi)
            rel_m = rel_m + _x_sensitivity(s, t_lo, e_lo, t_hi, e_hi, log_m)
            masses.append((log_m, rel_m))
        (log_m0, rel_m0), (log_up, rel_up), (log_down, rel_down) = masses
        if self.p == 1.0:
            return CellMasses(log_up, rel_up, log_down, rel_down)
        log1m_p, log_p = self.ratio.log1m_p, self.ratio.log_p
        p_log, p_rel = _combine(log1m_p + log_m0, rel_m0 + 2.0 * U, log_p + log_up, rel_up + 2.0 * U)
        q_log, q_rel = _combine(log1m_p + log_m0, rel_m0 + 2.0 * U, log_p + log_down, rel_down + 2.0 * U)
        return CellMasses(p_log, p_rel, q_log, q_rel)

    def _weights(self, power: float, cap: float = math.inf) -> tuple[np.ndarray, np.ndarray]:
        """Quadrature points x and log weights of E_Q[(P/Q)^power f(L)] (trapezoid in z = x/s)."""
        z, step = _z_windows(power / self.sigma)
        x = self.sigma * z
        log_q = log_density(z) + self.ratio.log_ratio(-x)  # Q's density in z: phi(z) r(-x)
        loss = self.log_loss(x)
        keep = loss < cap
        return x[keep], log_q[keep] + power * loss[keep] + math.log(step)

    def log_mgf(self, lam: float, cap: float = math.inf) -> float:
        """`Pair.log_mgf` by quadrature over x: E_P[e^(lam L)] = E_Q[e^((lam + 1) L)]."""
        _, values = self._weights(lam + 1.0, cap)
        if len(values) == 0:
            return -math.inf
        top = float(values.max())
        return top + math.log(float(np.exp(values - top).sum()))

    def moments(self) -> tuple[float, float]:
        """`Pair.moments`: mean and variance of the loss under P, by the same quadrature."""
        x, log_w = self._weights(1.0)
        weight = np.exp(log_w)
        loss = self.log_loss(x)
        total = weight.sum()
        mean = float((weight * loss).sum() / total)
        variance = float((weight * (loss - mean) ** 2).sum() / total)
        return mean, variance


def _x_sensitivity(s: float, t_lo: np.ndarray, e_lo: np.ndarray, t_hi: np.ndarray, e_hi: np.ndarray,
                   log_mass: np.ndarray) -> np.ndarray:
    """Relative change of a normal interval mass when its end points x = s t move by e_lo, e_hi:
    density times error over mass (the rounding of x, S2)."""
    with np.errstate(invalid="ignore", over="ignore"):
        a = np.where(np.isfinite(t_lo), np.exp(np.minimum(log_density(t_lo) - log_mass, 700.0)) * e_lo / s, 0.0)
        b = np.where(np.isfinite(t_hi), np.exp(np.minimum(log_density(t_hi) - log_mass, 700.0)) * e_hi / s, 0.0)
    out = a + b
    return np.where(np.isneginf(log_mass), 0.0, out)


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
        below = self.add.cell_masses(np.minimum(edges, 0.0))
        above = self.remove.cell_masses(np.maximum(edges, 0.0))
        log_p, rel_p = _combine(below.log_p, below.rel_p, above.log_p, above.rel_p)
        log_q, rel_q = _combine(below.log_q, below.rel_q, above.log_q, above.rel_q)
        log_p, rel_p, log_q, rel_q = (np.array(v, dtype=float) for v in (log_p, rel_p, log_q, rel_q))
        index = int(np.searchsorted(edges, 0.0, side="right")) - 1  # the cell [e_i, e_i+1) holding 0
        if math.isfinite(self.log_atom) and 0 <= index < len(edges) - 1:
            log_p[index], rel_p[index] = _combine(log_p[index], rel_p[index], self.log_atom, 8.0 * U)
            log_q[index], rel_q[index] = _combine(log_q[index], rel_q[index], self.log_atom, 8.0 * U)
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
        z, first = np.unique(z, return_index=True)  # overlapping windows: count each point once
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
