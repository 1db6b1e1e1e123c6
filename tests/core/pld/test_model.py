"""model: one phase in one direction (`PhaseModel`) and the Chernoff tilt of a run (`chernoff`).

References: for the Gaussian mechanism without subsampling the privacy loss is N(m, 2m) with
m = 1/(2 sigma^2), so log E[e^(lam L)] = lam (lam + 1) m exactly (lam + 1 the Renyi order); its
T-fold composition is exactly mu-GDP with mu = sqrt(T)/sigma (DRS Cor. 3.3). The Chernoff
estimate is an upper bound (the RDP epsilon, Canonne, Kamath, Steinke 2020, Prop. 12), so it must
be at least the exact epsilon, and it must be the minimum of its objective, found here again in
mpmath (50 digits) on a grid of tilts.
"""

from __future__ import annotations

import math

import mpmath as mp
import pytest

from dpcalc.core.phases import Phase
from dpcalc.core.pld.model import LAM_MAX, LAM_MIN, PhaseModel, chernoff, golden_min, pair_of
from dpcalc.core.pld.pairs import GaussianPair, LaplacePair
from tests.core.pld.helpers import gaussian, gdp_delta, gdp_epsilon

RUNS = [(1.0, 1, 1e-5), (2.0, 100, 1e-5), (0.5, 10, 1e-10), (5.0, 10**4, 1e-2), (20.0, 10**6, 1e-5)]


def _mp_min_objective(sigma, steps, delta):
    """min over lam of (T lam (lam + 1) m + log kappa(lam) + log(1/delta)) / lam, m = 1/(2 sigma^2),
    in mpmath: a grid in log lam over [1e-3, 1e5], then a golden-section refinement."""
    m, log_inv = 1 / (2 * mp.mpf(sigma) ** 2), -mp.log(delta)

    def objective(x):
        lam = mp.exp(x)
        log_kappa = lam * mp.log(lam / (lam + 1)) - mp.log(lam + 1)
        return (steps * lam * (lam + 1) * m + log_kappa + log_inv) / lam

    xs = [mp.log(LAM_MIN) + (mp.log(LAM_MAX) - mp.log(LAM_MIN)) * k / 400 for k in range(401)]
    best = min(range(len(xs)), key=lambda k: objective(xs[k]))
    low, high = xs[max(best - 1, 0)], xs[min(best + 1, 400)]
    ratio = (mp.sqrt(5) - 1) / 2
    for _ in range(120):
        c, d = high - ratio * (high - low), low + ratio * (high - low)
        low, high = (low, d) if objective(c) <= objective(d) else (c, high)
    return objective((low + high) / 2)


@pytest.mark.parametrize("sigma, steps, delta", RUNS)
def test_the_chernoff_estimate_bounds_the_exact_epsilon(sigma, steps, delta):
    model = PhaseModel(gaussian(1.0, sigma, steps), "remove")
    lam, estimate = chernoff([model], delta, None)
    assert LAM_MIN <= lam <= LAM_MAX
    assert estimate >= gdp_epsilon(sigma, steps, delta)
    # the minimum of its objective (golden-section search: ~1e-9 relative)
    assert estimate == pytest.approx(float(_mp_min_objective(sigma, steps, delta)), rel=1e-9)


@pytest.mark.parametrize("sigma, steps, delta", RUNS)
def test_the_chernoff_estimate_bounds_the_exact_delta(sigma, steps, delta):
    eps = gdp_epsilon(sigma, steps, delta)
    model = PhaseModel(gaussian(1.0, sigma, steps), "remove")
    lam, log_delta = chernoff([model], None, eps)
    assert LAM_MIN <= lam <= LAM_MAX
    assert log_delta >= math.log(gdp_delta(sigma, steps, eps))


@pytest.mark.parametrize("sigma", [0.5, 1.0, 20.0])
def test_moments_and_mgf_of_the_unsubsampled_gaussian(sigma):
    model = PhaseModel(gaussian(1.0, sigma, 7), "add")
    m = 0.5 / sigma**2
    assert model.mean == pytest.approx(m, rel=1e-12) and model.variance == pytest.approx(2 * m, rel=1e-12)
    for lam in (0.01, 1.0, 4.5):
        assert model.log_mgf(lam) == pytest.approx(lam * (lam + 1) * m, rel=1e-10)
    assert set(model._mgf) == {(0.01, math.inf), (1.0, math.inf), (4.5, math.inf)}  # each computed once
    # a cap leaves out the losses at or above it: a smaller MGF
    model.cap = 2 * m
    assert model.log_mgf(1.0) < 2 * m


def test_pairs_and_the_golden_section():
    assert isinstance(pair_of(gaussian(0.5, 1.0, 1), "remove"), GaussianPair)
    assert isinstance(pair_of(Phase("laplace", sampling_probability=0.5, scale=1.0, steps=1), "add"), LaplacePair)
    assert golden_min(lambda x: (x - 1.3) ** 2, -5.0, 5.0) == pytest.approx(1.3, abs=1e-7)
    assert golden_min(lambda x: -x, 0.0, 1.0) == pytest.approx(1.0, abs=1e-7)  # at an end
