"""Shared references for the PLD engine's tests (tests/core/pld/): phases, exact one-step
privacy profiles in mpmath, the exact mu-GDP value, and small measures built by hand.

Exact references:
  * one step of the Poisson-subsampled Gaussian mechanism: its hockey-stick divergence in each
    direction from normal tails in mpmath (at the caller's precision; the tests run at 50
    digits, see conftest.py), via the inverse of r(x) = 1 - p + p e^((x - 1/2)/sigma^2)
    (docs/pld-soundness.md S2; the pair is `dpcalc.core.pld.pairs.GaussianPair`);
  * T steps of the Gaussian mechanism without subsampling are exactly mu-GDP with
    mu = sqrt(T)/sigma (Dong, Roth, Su 2022, Cor. 3.3; the profile is DRS Cor. 2.13,
    `dpcalc.core.gdp`), accurate to about 1e-9 relative (docs/mathematics.md §9).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath as mp
import numpy as np

from dpcalc.core import gdp
from dpcalc.core.phases import Phase
from dpcalc.core.pld.accountant import prepare
from dpcalc.core.pld.layers import Layered
from dpcalc.core.pld.measure import Tilted
from dpcalc.core.pld.model import PhaseModel
from dpcalc.core.pld.plan import INF_SHARE, Plan, make_plan, step_measures
from dpcalc.core.pld.result import DEFAULT_ACCURACY

# The unit round-off of float64.
U = 2.0**-53

# Relative tolerance on the exact mu-GDP value: dpcalc.core.gdp is accurate to about 1e-9
# relative for delta down to 1e-300 (docs/mathematics.md §9).
GDP_RTOL = 1e-9

# The design card (docs/reference-values.md): p = 0.004, sigma = 1.1, T = 10000, delta = 1e-5.
DESIGN_CARD = (0.004, 1.1, 10_000)


def gaussian(p: float, sigma: float, steps: int) -> Phase:
    return Phase("gaussian", sampling_probability=p, noise_multiplier=sigma, steps=steps)


def gdp_epsilon(sigma: float, steps: int, delta: float) -> float:
    """The exact epsilon of `steps` unsubsampled Gaussian steps of noise `sigma` at `delta`."""
    return gdp.epsilon_for_delta(delta, math.sqrt(steps) / sigma)


def gdp_delta(sigma: float, steps: int, epsilon: float) -> float:
    """The exact delta of `steps` unsubsampled Gaussian steps of noise `sigma` at `epsilon`."""
    return gdp.delta_for_epsilon(epsilon, math.sqrt(steps) / sigma)


def brackets(lower: float, exact: float, upper: float, rtol: float = GDP_RTOL) -> bool:
    """lower <= exact <= upper, allowing the reference its relative error `rtol`."""
    return lower <= exact * (1 + rtol) + 1e-300 and exact <= upper * (1 + rtol) + 1e-300


def mp_x(loss, p, scale):
    """mpmath inverse of log(1 - p + p exp((y - 1/2)/scale)) = loss."""
    if p == 1:
        return mp.mpf(0.5) + scale * loss
    inner = (mp.exp(loss) - 1 + p) / p
    return mp.mpf(0.5) + scale * mp.log(inner) if inner > 0 else -mp.inf


def gaussian_masses(p, sigma, direction, lo, hi):
    """Exact (P, Q) masses of the loss interval [lo, hi) for the subsampled Gaussian pair."""
    p, s = mp.mpf(p), mp.mpf(sigma)
    if direction == "remove":
        xa, xb = mp_x(mp.mpf(lo), p, s * s), mp_x(mp.mpf(hi), p, s * s)
    else:
        xa, xb = mp_x(-mp.mpf(hi), p, s * s), mp_x(-mp.mpf(lo), p, s * s)
    m0 = mp.ncdf(xb / s) - mp.ncdf(xa / s)
    m1 = mp.ncdf((xb - 1) / s) - mp.ncdf((xa - 1) / s)
    mix = (1 - p) * m0 + p * m1
    return (mix, m0) if direction == "remove" else (m0, mix)


def exact_one_step_delta(p, sigma, eps):
    """max over directions of the one-step hockey-stick divergence, mpmath (DRS / Balle-Wang form)."""
    p, s, e = mp.mpf(p), mp.mpf(sigma), mp.mpf(eps)
    x = mp_x(e, p, s * s)  # remove: L > eps <=> X > x
    remove = (1 - p) * mp.ncdf(-x / s) + p * mp.ncdf(-(x - 1) / s) - mp.exp(e) * mp.ncdf(-x / s)
    add = mp.mpf(0)
    if p == 1 or mp.exp(-e) > 1 - p:
        y = mp_x(-e, p, s * s)  # add: L' > eps <=> X < y
        add = mp.ncdf(y / s) - mp.exp(e) * ((1 - p) * mp.ncdf(y / s) + p * mp.ncdf((y - 1) / s))
    return max(remove, add)


def exact_one_step_epsilon(p, sigma, delta):
    """The smallest eps with exact_one_step_delta(eps) <= delta (bisection in mpmath to 1e-30)."""
    f = lambda e: exact_one_step_delta(p, sigma, e) - delta  # noqa: E731
    if f(0) <= 0:
        return 0.0
    hi = mp.mpf(1)
    while f(hi) > 0:
        hi *= 2
    return float(mp.findroot(f, (mp.mpf(0), hi), solver="bisect", tol=mp.mpf(10) ** -30))


def masses(m: Tilted) -> np.ndarray:
    """The untilted masses exp(log_z) t e^(-lam s) of a measure (finite for the small tilts used here)."""
    return m.t * np.exp(m.log_z - m.lam * m.losses)


def hockey_stick(m: Tilted, eps: float) -> float:
    """E_m[(1 - e^(eps - s))_+] of the represented measure alone (no error terms, no +inf mass)."""
    s = m.losses
    above = s > eps
    return float((masses(m)[above] * -np.expm1(eps - s[above])).sum())


def tilted(kind: str, t, *, lam: float = 1.0, h: float = 2.0**-6, k0: int = 0, log_z: float = 0.0,
           **fields) -> Tilted:
    """A measure built by hand: tilted masses `t` on the grid (k0 + i) h."""
    return Tilted(kind, lam, h, k0, np.asarray(t, dtype=float), log_z, **fields)


@dataclass(frozen=True)
class Step:
    """One step of a phase discretised as the accountant does it, in its likely binding direction."""

    model: PhaseModel
    plan: Plan
    upper: Layered
    lower: Layered


def discretised_step(phase: Phase, delta: float, accuracy: float = DEFAULT_ACCURACY) -> Step:
    """The first grid of `account_grid` for `phase` at `delta` (`accountant.prepare`,
    `plan.make_plan`, `plan.step_measures`): the tilt and windows are those of phase.steps steps."""
    setup = prepare((phase,), delta, None, accuracy)
    direction = setup.order[0]
    model = setup.models[direction][0]
    plan = make_plan(*setup.tilts[direction], delta, setup.scale, INF_SHARE, setup.events,
                     setup.per_step_error(setup.reference))
    upper, lower = step_measures(model, plan)
    return Step(model, plan, upper, lower)


def pile_mean_loss_shortfall(p: float, sigma: float, h: float, lam: float, cells: int) -> float:
    """How much mean loss (under P) the lower measure of one remove step of the subsampled Gaussian
    loses over its first `cells` cells, on the grid whose point 0 is the pile (`offset.grid_offset`):
    the mean over the same cells cut into 64 parts each (a finer garbling of the pair, whose mean is
    within (h/64)^2 of the pair's there) minus the lower measure's."""
    from dpcalc.core.pld import discretise
    from dpcalc.core.pld.offset import grid_offset
    from dpcalc.core.pld.pairs import GaussianPair

    pair = GaussianPair(p, sigma, "remove")
    offset = grid_offset(PhaseModel(gaussian(p, sigma, 10**7), "remove"), h, lam)
    k_lo = math.floor((math.log1p(-p) - offset) / h) - 1
    _, lower = discretise.discretise_step(pair, h, k_lo, math.ceil((0.02 - offset) / h), lam, 1, offset)
    s = lower.losses[:cells]
    mean = float((lower.t[:cells] * np.exp(lower.log_z - lam * s) * s).sum())
    edges = s[0] - h / 2 + np.arange(cells * 64 + 1) * (h / 64)
    finer_cells = pair.cell_masses(np.concatenate(([-math.inf], edges, [math.inf])))
    log_p, log_q = finer_cells.log_p[1:-1], finer_cells.log_q[1:-1]
    kept = np.isfinite(log_p)
    finer = float((np.exp(log_p[kept]) * (log_p[kept] - log_q[kept])).sum())
    return finer - mean
