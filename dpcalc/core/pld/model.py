"""One phase of a run in one direction (`PhaseModel`: its dominating pair, the moments of its
privacy loss, a cached MGF) and the Chernoff tilt of a whole run (`chernoff`).

The tilt lam is the saddle point of the Chernoff bound delta(eps) <= kappa(lam)
E[e^(lam (S - eps))] (lam is the Renyi order minus one; the factor kappa is that of the
RDP-to-DP conversion of Canonne, Kamath, Steinke 2020, arXiv 2004.00010, Prop. 12); the grid
stores measures tilted by it (S5 of docs/pld-soundness.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from dpcalc.core.phases import Phase
from dpcalc.core.pld.measure import kappa
from dpcalc.core.pld.pairs import GaussianPair, LaplacePair, Pair

# Tilt range: lam is the Chernoff saddle point clipped to this interval (lam = order - 1).
LAM_MIN = 1e-3
LAM_MAX = 1e5


def pair_of(phase: Phase, direction: str) -> Pair:
    """The dominating pair of one step of `phase` in `direction` ("remove" or "add")."""
    if phase.mechanism == "gaussian":
        return GaussianPair(phase.sampling_probability, phase.noise, direction)
    return LaplacePair(phase.sampling_probability, phase.noise, direction)


class PhaseModel:
    """One phase in one direction: its pair, the moments of its loss and a cached MGF."""

    def __init__(self, phase: Phase, direction: str) -> None:
        self.phase = phase
        self.pair = pair_of(phase, direction)
        self.mean, self.variance = self.pair.moments()
        self.sd = math.sqrt(max(self.variance, 1e-300))
        self._mgf: dict[tuple[float, float], float] = {}
        self.cap = math.inf  # losses at or above go to +inf in the upper bound (set by `accountant.prepare`)

    def log_mgf(self, lam: float) -> float:
        """log E[e^(lam L); L < cap]: the part of the MGF that the tilted grid represents."""
        key = (lam, self.cap)
        value = self._mgf.get(key)
        if value is None:
            value = self.pair.log_mgf(lam, self.cap)
            self._mgf[key] = value
        return value


def golden_min(f: Callable[[float], float], lo: float, hi: float, iterations: int = 40) -> float:
    """Minimiser of a unimodal f on [lo, hi] (golden-section search)."""
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = lo, hi
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(iterations):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = f(d)
    return 0.5 * (a + b)


def chernoff(models: list[PhaseModel], delta: float | None, epsilon: float | None) -> tuple[float, float]:
    """The tilt lam (Chernoff saddle point, = Renyi order - 1) and the Chernoff estimate.

    delta mode: lam minimises (K(lam) + log(1/delta))/lam with K = sum of steps * log MGF, and
    the estimate is that minimum (the RDP epsilon, an upper bound). epsilon mode: lam
    minimises K(lam) - lam eps and the estimate is that minimum (log of an upper bound on delta).
    """

    def total(lam: float) -> float:
        return sum(m.phase.steps * m.log_mgf(lam) for m in models)

    # delta(eps) = E[(1 - e^(eps - S))_+] <= kappa(lam) E[e^(lam (S - eps))] (see `measure.kappa`)
    if delta is not None:
        log_inv = -math.log(delta)

        def objective(x: float) -> float:
            lam = math.exp(x)
            return (total(lam) + math.log(kappa(lam)) + log_inv) / lam
    else:
        assert epsilon is not None
        target = epsilon

        def objective(x: float) -> float:
            lam = math.exp(x)
            return total(lam) + math.log(kappa(lam)) - lam * target

    x = golden_min(objective, math.log(LAM_MIN), math.log(LAM_MAX))
    lam = min(max(math.exp(x), LAM_MIN), LAM_MAX)
    return lam, objective(math.log(lam))

