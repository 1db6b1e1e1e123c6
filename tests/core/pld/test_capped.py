"""Truncated Poisson sampling step by step (add-remove): the revealed mixture (pairs/capped.py),
the overflow share w and the kept rate q against 50-digit sums, the capped pair's one-step
delta against its closed form, and the orderings the argument implies (docs/mathematics.md,
"Truncated Poisson sampling")."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core.phases import Phase
from dpcalc.core.pld import tight_epsilon
from dpcalc.core.pld.capped_phase import CappedPhase, capped_pair, kept_rate, overflow_share, step_distances
from dpcalc.core.pld.pairs import GaussianPair
from dpcalc.core.pld.pairs.capped import RevealedMixture
from dpcalc.core.pld.truncation import (
    Truncation,
    account_truncated,
    cap_costs,
    capped,
    composed_upper,
    overflow_probability,
)
from tests.slow import slow_cases


def binomial_pmf(n: int, p: float) -> list[mpmath.mpf]:
    """Binomial(n, p) at 50 digits, k = 0..n (p the float given, exactly)."""
    q = mpmath.mpf(p)
    return [mpmath.binomial(n, k) * q**k * (1 - q) ** (n - k) for k in range(n + 1)]


CASES = [(1000, 0.05, 60), (1000, 0.05, 45), (200, 0.3, 60), (5000, 0.01, 50), (300, 0.5, 100), (50, 0.2, 3),
         (40, 0.9, 40), (10, 0.5, 1)]


@pytest.mark.parametrize(("n", "p", "cap"), slow_cases(CASES, 3))
def test_overflow_share_bounds_the_exact_one_tightly(n, p, cap):
    """w = P[Binomial(n - 1, p) >= B - 1]: taken above the exact value by at most its margin."""
    with mpmath.workdps(50):
        exact = float(mpmath.fsum(binomial_pmf(n - 1, p)[max(cap - 1, 0):]))
    share = overflow_share(capped(Phase("gaussian", p, 1.0, None, 1), Truncation(n, cap)))
    assert exact <= share <= exact * (1 + 1e-8) + 1e-300


@pytest.mark.parametrize(("n", "p", "cap"), slow_cases(CASES, 1, 3))
def test_kept_rate_bounds_the_exact_one_tightly(n, p, cap):
    """q = p E[min(1, B/(K + 1))], K ~ Binomial(n - 1, p): taken below the exact value by a hair."""
    with mpmath.workdps(50):
        pmf = binomial_pmf(n - 1, p)
        exact = float(mpmath.mpf(p) * mpmath.fsum(w * min(1, mpmath.mpf(cap) / (k + 1)) for k, w in enumerate(pmf)))
    rate = kept_rate(capped(Phase("gaussian", p, 1.0, None, 1), Truncation(n, cap)))
    assert rate <= exact
    assert exact - rate <= 1e-8 * exact + 1e-14 * p


def test_a_cap_no_batch_reaches_keeps_every_record():
    phase = capped(Phase("gaussian", 0.01, 1.0, None, 10), Truncation(100, 101))
    assert overflow_share(phase) == 0.0
    assert kept_rate(phase) == pytest.approx(0.01, rel=1e-14) and kept_rate(phase) <= 0.01
    assert step_distances([phase])[0] == 0.0


def test_the_mixture_weighs_its_components():
    one, two = GaussianPair(0.01, 1.0, "remove"), GaussianPair(0.01, 0.5, "remove")
    mixture = RevealedMixture([(0.75, one), (0.25, two), (0.0, one)])
    assert len(mixture.components) == 2
    edges = np.array([-np.inf, -0.02, 0.0, 0.01, 0.1, 1.0, np.inf])
    got = mixture.cell_masses(edges)
    a, b = one.cell_masses(edges), two.cell_masses(edges)
    for log_mix, log_a, log_b in ((got.log_p, a.log_p, b.log_p), (got.log_q, a.log_q, b.log_q)):
        expected = np.logaddexp(math.log(0.75) + log_a, math.log(0.25) + log_b)
        assert np.array_equal(np.isneginf(log_mix), np.isneginf(expected))
        finite = np.isfinite(expected)
        assert np.allclose(log_mix[finite], expected[finite], rtol=0, atol=1e-13)
    assert np.all(got.rel_p >= np.maximum(a.rel_p, b.rel_p))
    assert mixture.support == (one.support[0], math.inf)
    mean, variance = mixture.moments()
    (m1, v1), (m2, v2) = one.moments(), two.moments()
    assert mean == pytest.approx(0.75 * m1 + 0.25 * m2, rel=1e-12)
    assert variance == pytest.approx(0.75 * (v1 + m1**2) + 0.25 * (v2 + m2**2) - mean**2, rel=1e-9)
    assert mixture.log_mgf(2.0) == pytest.approx(math.log(0.75 * math.exp(one.log_mgf(2.0))
                                                          + 0.25 * math.exp(two.log_mgf(2.0))), rel=1e-12)
    with pytest.raises(ValueError, match="positive weight"):
        RevealedMixture([(0.0, one)])


def one_step_delta(p: float, shift: float, sigma: float, epsilon: float, direction: str) -> mpmath.mpf:
    """delta(eps) of ((1 - p) N(0, s^2) + p N(shift, s^2), N(0, s^2)) (remove) or its reverse (add),
    at 50 digits: the loss is monotone in x, so delta = P(L > eps) - e^eps Q(L > eps) from the
    threshold in closed form."""
    with mpmath.workdps(50):
        p, s, e, c = mpmath.mpf(p), mpmath.mpf(sigma), mpmath.mpf(epsilon), mpmath.mpf(shift)

        def tail(mean, x):  # P(N(mean, s^2) > x)
            return mpmath.ncdf(-(x - mean) / s)

        def head(mean, x):  # P(N(mean, s^2) < x)
            return mpmath.ncdf((x - mean) / s)

        if direction == "remove":
            # L(x) = log(1 - p + p e^((c x - c^2/2)/s^2)) > e  <=>  x > x*
            x = (s**2 * mpmath.log((mpmath.exp(e) - 1 + p) / p) + c**2 / 2) / c
            return (1 - p) * tail(0, x) + p * tail(c, x) - mpmath.exp(e) * tail(0, x)
        # add: L(x) = -log(1 - p + p r(x)) > e  <=>  r(x) < (e^-e - 1 + p)/p
        inner = (mpmath.exp(-e) - 1 + p) / p
        if inner <= 0:
            return mpmath.mpf(0)
        x = (s**2 * mpmath.log(inner) + c**2 / 2) / c
        return head(0, x) - mpmath.exp(e) * ((1 - p) * head(0, x) + p * head(c, x))


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
def test_one_capped_step_is_its_components_weighed(epsilon):
    """T = 1: the grid's certified delta of the capped pair lies at or above the exact mixture
    (1 - w) delta_1 + w delta_2 (each direction; the larger binds) and within the accuracy of it."""
    phase = capped(Phase("gaussian", 0.05, 1.0, None, 1), Truncation(1000, 52))
    share = overflow_share(phase)
    assert 0.2 < share < 0.8
    exact = max(float((1 - share) * one_step_delta(0.05, 1, 1.0, epsilon, direction)
                      + share * one_step_delta(0.05, 2, 1.0, epsilon, direction)) for direction in ("remove", "add"))
    upper, _ = composed_upper([phase], delta=None, epsilon=epsilon, accuracy=1e-3)
    assert exact <= upper <= exact * (1 + 2e-3)


def test_the_capped_pair_is_the_revealed_mixture():
    phase = capped(Phase("gaussian", 0.05, 1.0, None, 3), Truncation(1000, 52))
    pair = capped_pair(phase, "add")
    assert isinstance(pair, RevealedMixture)
    (w1, first), (w2, second) = pair.components
    assert w2 == overflow_share(phase) and w1 == 1.0 - w2
    assert (first.p, first.sigma, first.direction) == (0.05, 1.0, "add")
    assert (second.p, second.sigma, second.direction) == (0.05, 0.5, "add")


def test_capped_phases_are_poisson_gaussian_add_remove():
    with pytest.raises(ValueError, match="add-remove"):
        CappedPhase("gaussian", 0.01, 1.0, None, 5, neighbours="zero-out", dataset_size=100, max_batch_size=3)
    with pytest.raises(ValueError, match="add-remove"):
        CappedPhase("gaussian", 0.01, 1.0, None, 5, examples_per_user=2, dataset_size=100, max_batch_size=3)


def test_costs_are_eta_where_the_step_by_step_analysis_does_not_apply():
    truncation = Truncation(62500, 300)
    zero_out = Phase("gaussian", 0.004, 1.1, None, 100, neighbours="zero-out")
    eta = overflow_probability([zero_out], truncation)
    assert cap_costs([zero_out], truncation) == (eta, eta)
    add_remove = Phase("gaussian", 0.004, 1.1, None, 100)
    above, below = cap_costs([add_remove], truncation)
    assert above < overflow_probability([add_remove], truncation) and below < above


@pytest.mark.slow
@settings(max_examples=8, deadline=None)
@given(p=st.sampled_from([0.01, 0.05, 0.2]), sigma=st.sampled_from([0.8, 1.5]), steps=st.integers(1, 200),
       slack=st.integers(-3, 4))
def test_capped_bounds_lie_between_the_poisson_runs(p, sigma, steps, slack):
    """lower <= upper; the capped run is no more private than the Poisson run at the kept rate
    (attained) and no less private than the Poisson run at shift 2 (which dominates every step)."""
    n = 1000
    cap = max(1, round(n * p + slack * math.sqrt(n * p)))
    phase = Phase("gaussian", p, sigma, None, steps)
    truncated, poisson, _ = account_truncated([phase], Truncation(n, cap), delta=1e-5, epsilon=None, accuracy=1e-3)
    assert truncated.epsilon_lower <= truncated.epsilon_upper
    kept = tight_epsilon([Phase("gaussian", kept_rate(capped(phase, Truncation(n, cap))), sigma, None, steps)], 1e-5)
    assert truncated.epsilon_lower <= kept.epsilon_upper
    doubled = tight_epsilon([Phase("gaussian", p, sigma / 2, None, steps)], 1e-5)
    assert truncated.epsilon_upper <= doubled.epsilon_upper * (1 + 2e-3)
    assert poisson.epsilon_lower <= truncated.epsilon_upper
