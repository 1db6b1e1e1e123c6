"""The PRV accountant of Gopi, Lee, Wutschitz ("Numerical Composition of Differential Privacy",
NeurIPS 2021, arXiv 2106.02848, "GLW"), as prv_accountant 0.2.0 and Opacus 1.5.4 run it: what
those libraries print, for the framework presets (docs/presets.md). An estimate, not one of
dpcalc's certified bounds.

The privacy random variable (PRV) of one Poisson-subsampled Gaussian step is the privacy loss
L = log(1 - q + q e^((2x - 1) / (2 sigma^2))) with x drawn from the mixture
q N(1, sigma^2) + (1 - q) N(0, sigma^2) (GLW Prop. B.4 writes its CDF). The libraries' recipe:

1. a domain [-L, L] from the RDP bound at delta_error / 4 of the whole run and at
   delta_error / (8 T) of one step, plus 3 (GLW Remark 5.6, as the libraries code it);
2. a mesh eps_error / sqrt(T / 2 log(12 / delta_error)) (GLW Thm 5.5), the domain aligned on 0
   and of even size;
3. each step's PRV truncated to the domain and its mass put at the cell centres, the grid then
   shifted so that the discrete mean equals the truncated PRV's mean;
4. the steps composed by FFT (a product of spectra; the libraries convolve distinct phases
   pairwise, the same up to mass outside the domain);
5. epsilon at delta - delta_error plus eps_error (their upper figure), at delta (their
   estimate) and at delta + delta_error minus eps_error (their lower figure).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import integrate, special

from dpcalc.core.presets.limits import check_grid_size

# The RDP orders both libraries use to size the domain (prv_accountant's RDP class and Opacus's
# RDPAccountant.DEFAULT_ALPHAS: 1.1 to 10.9 by 0.1, then 12 to 63).
DOMAIN_ORDERS: tuple[float, ...] = tuple([1 + x / 10.0 for x in range(1, 100)] + [float(a) for a in range(12, 64)])

@dataclass(frozen=True)
class PRVFigures:
    """The three figures the PRV accountant reports at one delta, and the grid it used."""

    lower: float
    estimate: float
    upper: float
    mesh: float
    points: int


def _loss_cdf(t: np.ndarray, q: float, sigma: float) -> np.ndarray:
    """P(L <= t) for one step's privacy loss L (module docstring).

    L <= t exactly when x <= sigma^2 z + 1/2 with z = log((e^t - 1 + q) / q), for t above
    log(1 - q), the loss's infimum; below it the probability is 0."""
    floor = math.log1p(-q) if q < 1.0 else -math.inf
    valid = t > floor
    z = np.log(np.where(valid, (np.expm1(np.where(valid, t, 0.0)) + q) / q, 1.0))
    x = sigma * sigma * z + 0.5
    cdf = q * special.ndtr((x - 1.0) / sigma) + (1.0 - q) * special.ndtr(x / sigma)
    return np.where(valid, cdf, 0.0)


def _domain_size(steps: Sequence[tuple[float, float, int]], eps_error: float, delta_error: float) -> float:
    """Half-width L of the domain (step 1 of the module docstring), from dpcalc's own RDP curves
    at the libraries' orders and the improved conversion they use (CKS 2020, Prop. 12)."""
    from dpcalc.core.phases import Phase
    from dpcalc.core.rdp import rdp_accountant

    phases = [Phase(sampling_probability=q, noise_multiplier=s, steps=t) for q, s, t in steps]
    total = sum(t for _, _, t in steps)
    half = rdp_accountant(phases, orders=DOMAIN_ORDERS, delta=delta_error / 4).epsilon
    for q, s, _ in steps:
        one = Phase(sampling_probability=q, noise_multiplier=s, steps=1)
        half = max(half, rdp_accountant([one], orders=DOMAIN_ORDERS, delta=delta_error / (8 * total)).epsilon)
    return max(half, eps_error) + 3.0


def _truncated_mean(q: float, sigma: float, low: float, high: float) -> float:
    """Mean of the step's loss truncated to [low, high]: high - integral of the truncated CDF
    (integration by parts), by quadrature on pieces that resolve the CDF's steep part near 0."""
    base = float(_loss_cdf(np.array([low]), q, sigma)[0])
    mass = float(_loss_cdf(np.array([high]), q, sigma)[0]) - base

    def cdf(t: float) -> float:
        return (float(_loss_cdf(np.array([t]), q, sigma)[0]) - base) / mass

    inner = np.logspace(-5, 0, 6)
    points = [low, *(-inner[::-1]), 0.0, *inner, high]
    points = sorted({min(max(p, low), high) for p in points})
    area = sum(integrate.quad(cdf, a, b, limit=500)[0] for a, b in zip(points[:-1], points[1:]))
    return float(high - area)


def prv_epsilon(steps: Sequence[tuple[float, float, int]], delta: float, *, eps_error: float,
                delta_error: float) -> PRVFigures:
    """The PRV accountant's (lower, estimate, upper) epsilon at `delta` for the composition of
    `steps`, each (sampling probability q in (0, 1], noise multiplier sigma > 0, count >= 1)."""
    if not 0.0 < delta_error < delta < 1.0:
        raise ValueError(f"delta must be in (delta_error, 1), got delta={delta}")
    half = _domain_size(steps, eps_error, delta_error)
    total = sum(t for _, _, t in steps)
    mesh = eps_error / math.sqrt(total / 2.0 * math.log(12.0 / delta_error))
    t_min, t_max = math.floor(-half / mesh) * mesh, math.ceil(half / mesh) * mesh
    size = round((t_max - t_min) / mesh) + 1
    if size % 2:
        size, t_max = size + 1, t_max + mesh
    check_grid_size("the PRV grid", size)
    grid = np.linspace(t_min, t_max, size)
    spectrum = np.ones(size // 2 + 1, dtype=np.complex128)
    shift = 0.0
    for q, sigma, count in steps:
        base = _loss_cdf(np.array([t_min]), q, sigma)[0]
        kept = _loss_cdf(np.array([t_max]), q, sigma)[0] - base
        edges = np.clip(np.append(grid - mesh / 2, grid[-1] + mesh / 2), t_min, t_max)
        pmf = np.diff(_loss_cdf(edges, q, sigma)) / kept
        offset = _truncated_mean(q, sigma, t_min, t_max) - float(np.dot(grid, pmf))
        if not abs(offset) < mesh / 2:
            raise ValueError("the discretised privacy loss's mean is off by more than half a cell")
        shift += count * offset
        spectrum *= np.fft.rfft(pmf) ** count
    composed = np.fft.irfft(spectrum, n=size)
    # index k of the circular sum holds total * t_min + k * mesh: roll it onto the grid
    roll = round((total - 1) * t_min / mesh) % size
    composed = np.roll(composed, roll)
    return _epsilons(composed, grid + shift, delta, delta_error, eps_error, mesh)


def _epsilons(pmf: np.ndarray, losses: np.ndarray, delta: float, delta_error: float, eps_error: float,
              mesh: float) -> PRVFigures:
    """Epsilon at delta -/+ delta_error (widened by eps_error) and at delta, from the discrete PRV:
    delta(eps) = sum over t > eps of p(t) (1 - e^(eps - t)) (GLW Prop. 2.3)."""
    if np.finfo(np.longdouble).eps * len(pmf) > delta - delta_error:
        raise ValueError(f"delta {delta} is too small for the PRV grid's {len(pmf)} points (round-off)")
    t = losses.astype(np.longdouble)
    p = pmf.astype(np.longdouble)
    tail = np.cumsum(p[::-1])[::-1]
    tail_weighted = np.cumsum((p * np.exp(-t))[::-1])[::-1]
    minus_delta = np.exp(t) * tail_weighted - tail

    def at(target: float) -> float:
        i = int(np.searchsorted(minus_delta, -target, side="left"))
        if i <= 0:
            raise ValueError("the PRV grid is too narrow for this delta")
        return float(np.log((tail[i] - target) / tail_weighted[i]))

    return PRVFigures(
        lower=at(delta + delta_error) - eps_error,
        estimate=at(delta),
        upper=at(delta - delta_error) + eps_error,
        mesh=mesh,
        points=len(pmf),
    )
