"""The Poisson-subsampled Gaussian mechanism, sensitivity 1, noise multiplier sigma, add/remove
adjacency (Mironov, Talwar, Zhang 2019, arXiv 1908.10530, Sec. 3; Zhu, Dong, Wang 2022, arXiv
2106.08567, Prop. 30 for the two orders of the pair):

    remove:  P = (1 - p) N(0, s^2) + p N(1, s^2),  Q = N(0, s^2)
    add:     P = N(0, s^2),  Q = (1 - p) N(0, s^2) + p N(1, s^2)

with the likelihood ratio r(x) = 1 - p + p exp((x - 1/2)/s^2), increasing in x. `_SubsampledRatio`
(r and its inverse with an error bound) serves the Laplace and replace-one pairs too.
"""

from __future__ import annotations

import math

import numpy as np

from dpcalc.core.pld.normal import log_density
from dpcalc.core.pld.normal_interval import log_interval_mass
from dpcalc.core.pld.pairs.base import (
    CellMasses,
    Pair,
    U,
    _cell_ends,
    _combine,
    _directed,
    _x_sensitivity,
    _z_windows,
)
from dpcalc.core.special_array import log_expm1


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
        # Near the bulk the general form below subtracts two logarithms of similar size
        # (log(e^d - 1) and log p, both ~ log p): its error, ~u |log p| c, is far larger than the
        # change of y over a fine grid cell, and every cell mass inherits it. There the same point is
        #   y = 1/2 + c log1p(expm1(l) / p)     (r(y) = e^l  <=>  e^((y - 1/2)/c) = 1 + (e^l - 1)/p),
        # whose error is relative to the (small) result: b = expm1(l)/p carries <= 2u relative
        # (expm1 within an ulp, one division), log1p turns it into <= 2u |b|/(1 + b) absolute
        # and adds an ulp of its result, c (itself rounded) an ulp more, and the final sum half an
        # ulp of y; twice each of those is the bound. Used where |l| <= 1 and b > -1/2, where
        # neither overflow nor the condition number |b|/(1 + b) <= 1 is a concern.
        if loss.ndim == 1 and valid.all() and not (np.abs(loss) <= 1.0).any():
            # every point far (most of a fine grid's window): the far form on the whole arrays,
            # without b (no point can be near) and without gathering or scattering
            y, err = self._far(d, loss)
            return y, np.where(np.isfinite(y), err, 0.0)
        with np.errstate(over="ignore", invalid="ignore"):
            b = np.expm1(np.where(valid, loss, 0.0)) / self.p
        near = valid & (np.abs(loss) <= 1.0) & (b > -0.5)
        if loss.ndim == 1 and near.all():
            # every point near (a fine grid in the bulk): likewise with the near form
            y, err = self._near(b)
            return y, np.where(np.isfinite(y), err, 0.0)
        far = valid & ~near
        y = np.full(loss.shape, -math.inf)
        err = np.zeros(loss.shape)
        # each form is evaluated at its own points only (elementwise: the same values)
        if far.any():
            y[far], err[far] = self._far(d[far], loss[far])
        if near.any():
            y[near], err[near] = self._near(b[near])
        err = np.where(np.isfinite(y), err, 0.0)
        return y, err

    def _far(self, d: np.ndarray, loss: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`inverse`'s general form at points with d = l - log(1 - p) > 0: y and its error bound."""
        c = self.scale
        log_e = log_expm1(d)
        y = 0.5 + c * (self.log1m_p + log_e - self.log_p)
        # error of d = l - log(1 - p) and its effect through d/dd log(e^d - 1) = 1/(1 - e^-d)
        d_err = 4.0 * U * (np.abs(np.where(np.isfinite(loss), loss, 0.0)) + abs(self.log1m_p))
        sens = 1.0 / -np.expm1(-d)
        err = c * (d_err * sens + 8.0 * U * (abs(self.log1m_p) + np.abs(log_e) + abs(self.log_p) + 1.0))
        return y, err + 4.0 * U * np.abs(y)

    def _near(self, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`inverse`'s form near the bulk at points with b = expm1(l)/p: y and its error bound."""
        c = self.scale
        log_near = np.log1p(b)
        y = 0.5 + c * log_near
        err = c * (4.0 * U * np.abs(b) / (1.0 + b) + 4.0 * U * np.abs(log_near)) + 4.0 * U * np.abs(y)
        return y, err

    def log_ratio(self, y: np.ndarray) -> np.ndarray:
        """log r(y), stable."""
        if self.p == 1.0:
            return (y - 0.5) / self.scale
        return np.logaddexp(self.log1m_p, self.log_p + (y - 0.5) / self.scale)


# Cells per evaluation in `GaussianPair.cell_masses` (measured: 12k to 16k were the fastest on 2e5
# and 5e5 cells; the temporaries of a piece, some 30 arrays of twice its length, then fit in cache).
_CHUNK_CELLS = 16384


def _both_components(x: np.ndarray, s: float) -> np.ndarray:
    """concatenate((x, x - 1)) / s, in one new array: x/s, then (x - 1)/s."""
    n = len(x)
    out = np.empty(2 * n)
    out[:n] = x
    np.subtract(x, 1.0, out=out[n:])
    out /= s
    return out


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
        return _cell_ends(self.ratio.inverse, edges, self.direction)

    def cell_masses(self, edges: np.ndarray) -> CellMasses:
        """`Pair.cell_masses` for the subsampled Gaussian: the x-interval of each loss cell, its masses
        under both components as differences of normal tails, with their error bounds (S2).

        Each cell's values depend on its two edges alone, so a long grid is evaluated in pieces of
        at most _CHUNK_CELLS cells (consecutive pieces sharing an edge), the same floats: a piece's
        temporaries stay in the processor's cache (on 2e5 cells, about half the time)."""
        edges = np.asarray(edges, dtype=float)
        cells = len(edges) - 1 if edges.ndim == 1 else 0
        if cells <= _CHUNK_CELLS:
            return self._cell_masses(edges)
        pieces = -(-cells // _CHUNK_CELLS)
        size = -(-cells // pieces)
        parts = [self._cell_masses(edges[start:min(start + size, cells) + 1]) for start in range(0, cells, size)]
        return CellMasses(np.concatenate([part.log_p for part in parts]), np.concatenate([part.rel_p for part in parts]),
                          np.concatenate([part.log_q for part in parts]), np.concatenate([part.rel_q for part in parts]))

    def _cell_masses(self, edges: np.ndarray) -> CellMasses:
        """`cell_masses` on one piece of the grid."""
        x_lo, e_lo, x_hi, e_hi = self._x_interval(edges)
        # x may be +-inf at the ends: x(l) = -inf below the support; +inf for l = +inf
        s = self.sigma
        n = len(x_lo)
        # both components' standardised end points in one array each: log_interval_mass and
        # _x_sensitivity are elementwise, so one call gives the values of two (at half the
        # per-call cost): t0 = x/s (the first n), t1 = (x - 1)/s (the last n)
        t_lo = _both_components(x_lo, s)
        t_hi = _both_components(x_hi, s)
        log_m, rel_m = log_interval_mass(t_lo, t_hi)
        # sensitivity to the rounding of the end points: density * error / mass (rel_m is the
        # new array log_interval_mass returned: rel_m + sensitivity in place)
        rel_m += _x_sensitivity(s, t_lo, np.concatenate((e_lo, e_lo)), t_hi, np.concatenate((e_hi, e_hi)), log_m)
        log_m0, rel_m0, log_m1, rel_m1 = log_m[:n], rel_m[:n], log_m[n:], rel_m[n:]
        if self.p == 1.0:
            mix_log, mix_rel = log_m1, rel_m1
        else:
            mix_log, mix_rel = _combine(
                self.ratio.log1m_p + log_m0, rel_m0 + 2.0 * U, self.ratio.log_p + log_m1, rel_m1 + 2.0 * U
            )
        return _directed(self.direction, (mix_log, mix_rel), (log_m0, rel_m0))

    # -- quadrature ---------------------------------------------------------------------------

    def _grid(self, power: float, cap: float = math.inf) -> tuple[np.ndarray, np.ndarray, float]:
        """z-points (x = sigma z, z ~ N(0, 1)) covering the integrand phi(z) r(sigma z)^power,
        with log r(sigma z) at each (the quadratures need it; computed once).

        d/dz log r(sigma z) = w/sigma with w in [0, 1] increasing, so the log integrand
        -z^2/2 + power log r has its maxima near 0 (where w ~ 0) or near power/sigma (w ~ 1),
        and each maximum is at least as wide as a standard normal (the added term is convex
        when power > 0, and for power < 0 its concavity only narrows one mode, which then
        lies between the two points named). Windows of +-40 around both, at a step of 0.125,
        make the trapezoid rule far more accurate than the tilt needs. Points whose loss is at
        or above `cap` are left out (the truncated MGF).
        """
        z, step = _z_windows(power / self.sigma)
        log_r = self.ratio.log_ratio(self.sigma * z)
        if math.isfinite(cap):
            loss = log_r if self.direction == "remove" else -log_r
            keep = loss < cap
            z, log_r = z[keep], log_r[keep]
        return z, log_r, step

    def log_mgf(self, lam: float, cap: float = math.inf) -> float:
        """`Pair.log_mgf` by quadrature over x (the loss is monotone in x)."""
        power = lam + 1.0 if self.direction == "remove" else -lam
        z, log_r, step = self._grid(power, cap)
        if len(z) == 0:
            return -math.inf
        values = log_density(z) + power * log_r
        top = float(values.max())
        return top + math.log(float(np.exp(values - top).sum()) * step)

    def moments(self) -> tuple[float, float]:
        """`Pair.moments`: mean and variance of the loss under P, by the same quadrature."""
        power = 1.0 if self.direction == "remove" else 0.0
        z, log_r, step = self._grid(power)
        weight = np.exp(log_density(z) + power * log_r) * step
        loss = log_r if self.direction == "remove" else -log_r
        total = weight.sum()
        mean = float((weight * loss).sum() / total)
        variance = float((weight * (loss - mean) ** 2).sum() / total)
        return mean, variance
