"""The Poisson-subsampled Gaussian mechanism under replace-one neighbours (Lebeda, Regehr,
Kamath, Steinke 2024, arXiv 2405.20769): `ReplaceOnePair`."""

from __future__ import annotations

import math

import numpy as np

from dpcalc.core.pld.normal import log_density
from dpcalc.core.pld.normal_interval import log_interval_mass
from dpcalc.core.pld.pairs.base import (
    CellMasses,
    Pair,
    U,
    _combine,
    _log_sum,
    _weighted_moments,
    _x_sensitivity,
    _z_windows,
)
from dpcalc.core.pld.pairs.gaussian import _SubsampledRatio


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
        return _log_sum(values)

    def moments(self) -> tuple[float, float]:
        """`Pair.moments`: mean and variance of the loss under P, by the same quadrature."""
        x, log_w = self._weights(1.0)
        return _weighted_moments(np.exp(log_w), self.log_loss(x))
