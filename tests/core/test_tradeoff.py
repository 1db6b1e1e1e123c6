"""Trade-off curves from privacy profiles (Dong, Roth, Su 2022, Prop. 2.12): valid and close."""

from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core import gdp
from dpcalc.core.tradeoff import dp_tradeoff, tradeoff_from_profile

mpmath.mp.dps = 40


def _gaussian_tradeoff(alpha: float, mu: float) -> float:
    """G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu) in 40-digit mpmath (DRS Def. 2.7)."""
    if alpha == 0.0:
        return 1.0
    if alpha == 1.0:
        return 0.0
    quantile = mpmath.sqrt(2) * mpmath.erfinv(2 * (1 - mpmath.mpf(alpha)) - 1)
    return float(mpmath.ncdf(quantile - mu))


def _gaussian_delta(epsilon: float, mu: float) -> float:
    """delta(eps; mu) of mu-GDP (DRS Cor. 2.13) in mpmath."""
    eps, m = mpmath.mpf(epsilon), mpmath.mpf(mu)
    return float(mpmath.ncdf(-eps / m + m / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / m - m / 2))


ALPHAS = [i / 400 for i in range(401)] + [1e-9, 1e-6, 1e-4, 0.999999]


@pytest.mark.slow
@pytest.mark.parametrize("mu", [pytest.param(0.25, marks=pytest.mark.slow), pytest.param(0.5, marks=pytest.mark.slow), 1.0, pytest.param(2.0, marks=pytest.mark.slow), pytest.param(4.0, marks=pytest.mark.slow)])
def test_gaussian_profile_gives_at_most_and_close_to_g_mu(mu):
    # The exact mu-GDP profile on a fine grid (step mu/100 up to delta ~ 1e-16): the curve must
    # never exceed G_mu (soundness: it is a sup of valid lower bounds) and lie within 1e-3 of it
    # (the gap of a sup of tangent lines over a grid is second order in the step).
    top = mu * mu / 2 + 8.3 * mu  # delta(top; mu) < 1e-16
    epsilons = [top * i / 1000 for i in range(1001)]
    deltas = [_gaussian_delta(e, mu) for e in epsilons]
    betas = tradeoff_from_profile(epsilons, deltas, ALPHAS)
    for alpha, beta in zip(ALPHAS, betas):
        exact = _gaussian_tradeoff(alpha, mu)
        assert beta <= exact + 1e-12, (alpha, beta, exact)
        assert beta >= exact - 1e-3, (alpha, beta, exact)


@pytest.mark.slow
def test_gaussian_profile_gap_shrinks_with_the_grid():
    mu = 1.0
    gaps = []
    for points in (21, 201, 2001):
        epsilons = [9.0 * i / (points - 1) for i in range(points)]
        betas = tradeoff_from_profile(epsilons, [gdp.delta_for_epsilon(e, mu) for e in epsilons], ALPHAS)
        gaps.append(max(_gaussian_tradeoff(a, mu) - b for a, b in zip(ALPHAS, betas)))
    assert gaps[0] > gaps[1] > gaps[2] >= 0.0
    assert gaps[2] < 1e-5


def test_one_pair_is_the_dp_tradeoff_function():
    # (eps, delta)-DP alone: f_{eps,delta}(alpha) = max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha))
    eps, delta = 1.0, 0.01
    betas = tradeoff_from_profile([eps], [delta], ALPHAS)
    for alpha, beta in zip(ALPHAS, betas):
        expected = max(0.0, 1 - delta - math.e * alpha, math.exp(-1) * (1 - delta - alpha))
        assert beta == pytest.approx(expected, abs=1e-15)
        assert beta == pytest.approx(dp_tradeoff(alpha, eps, delta), abs=1e-15)
    # the kink: both lines meet on the diagonal beta = alpha, at alpha = (1 - delta) / (1 + e^eps)
    kink = (1 - delta) / (1 + math.e)
    assert dp_tradeoff(kink, eps, delta) == pytest.approx(kink, rel=1e-12)


def test_dp_tradeoff_edges():
    assert dp_tradeoff(0.3, 0.0, 0.0) == pytest.approx(0.7)  # no privacy lost
    assert dp_tradeoff(0.0, 800.0, 0.0) == 1.0  # e^eps overflows; alpha = 0 still gives 1 - delta
    assert dp_tradeoff(0.1, 800.0, 0.0) == 0.0
    assert dp_tradeoff(0.5, 1.0, 1.0) == 0.0
    for args in ((-0.1, 1.0, 0.0), (0.5, -1.0, 0.0), (0.5, 1.0, 1.5), (0.5, math.nan, 0.0)):
        with pytest.raises(ValueError):
            dp_tradeoff(*args)


def test_unresolved_and_empty_profiles():
    # an infinite delta (an unresolved bound) carries no information
    assert tradeoff_from_profile([1.0, 2.0], [math.inf, 0.5], [0.0]) == tradeoff_from_profile([2.0], [0.5], [0.0])
    assert tradeoff_from_profile([], [], [0.0, 0.5]) == (0.0, 0.0)
    # a huge epsilon with delta 0 gives beta = 1 at alpha = 0 and nothing elsewhere
    assert tradeoff_from_profile([1000.0], [0.0], [0.0, 0.5]) == (1.0, pytest.approx(0.0, abs=1e-300))


@pytest.mark.parametrize(
    "epsilons, deltas, alphas, message",
    [
        ([1.0, 2.0], [0.1], [0.5], "paired"),
        ([-1.0], [0.1], [0.5], "epsilons must be >= 0"),
        ([math.nan], [0.1], [0.5], "epsilons must be >= 0"),
        ([1.0], [-0.1], [0.5], "deltas must be >= 0"),
        ([1.0], [0.1], [1.5], r"alphas must be in \[0, 1\]"),
    ],
)
def test_bad_input(epsilons, deltas, alphas, message):
    with pytest.raises(ValueError, match=message):
        tradeoff_from_profile(epsilons, deltas, alphas)


profiles = st.lists(
    st.tuples(st.floats(0.0, 20.0), st.floats(0.0, 1.0)), min_size=1, max_size=12
)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(profiles, st.lists(st.floats(0.0, 1.0), min_size=1, max_size=12), st.floats(0.0, 0.5))
def test_properties(pairs, alphas, loosen):
    epsilons, deltas = [e for e, _ in pairs], [d for _, d in pairs]
    alphas = sorted(alphas)
    betas = tradeoff_from_profile(epsilons, deltas, alphas)
    for alpha, beta in zip(alphas, betas):
        assert 0.0 <= beta <= 1.0 - alpha + 1e-12  # never above the no-privacy diagonal
    assert all(a >= b - 1e-12 for a, b in zip(betas, betas[1:]))  # non-increasing in alpha
    # a looser (larger) delta, or fewer grid points, can only lower the curve
    looser = tradeoff_from_profile(epsilons, [min(1.0, d + loosen) for d in deltas], alphas)
    assert all(l <= b + 1e-12 for l, b in zip(looser, betas))
    fewer = tradeoff_from_profile(epsilons[:1], deltas[:1], alphas)
    assert all(f <= b + 1e-12 for f, b in zip(fewer, betas))
    # the pointwise maximum of the single-pair curves
    for index, alpha in enumerate(alphas):
        assert betas[index] == pytest.approx(max(dp_tradeoff(alpha, e, d) for e, d in pairs), abs=1e-12)
