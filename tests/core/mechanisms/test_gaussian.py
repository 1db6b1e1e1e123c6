"""The Gaussian mechanism, isotropic and per coordinate (dpcalc.core.mechanisms.gaussian).

References: closed forms in mpmath at 50 digits (Balle, Wang 2018, Thm 8, for epsilon at
delta; P(max_i |Z_i| <= t) = erf(t / (sigma sqrt 2))^d for the simultaneous error; Xu et al.
2020, ADADP, Lemma 1, mu = sqrt(sum s_i^2 / sigma_i^2), whose example s = (12, 6),
sigma = (17, 8.5) gives mu = 12 sqrt(2) / 17 exactly); Monte Carlo with numpy (fixed seed,
1e5 draws) for the accuracy claim and for the per-coordinate privacy loss, both stated as exact.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core.mechanisms.gaussian import (
    failure_probability,
    gaussian_mechanism,
    per_coordinate_gaussian,
    per_coordinate_mu,
    scaled_error_for,
)
from dpcalc.core.validation import ParameterError

mpmath.mp.dps = 50


def _mp_delta(epsilon, mu):
    """BW18 Thm 8 with mu = sensitivity / sigma: Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)."""
    epsilon, mu = mpmath.mpf(epsilon), mpmath.mpf(mu)
    return mpmath.ncdf(mu / 2 - epsilon / mu) - mpmath.exp(epsilon) * mpmath.ncdf(-mu / 2 - epsilon / mu)


def _bisect(f, low, high, steps=200):
    """A root of the decreasing or increasing f on [low, high], by bisection in mpmath."""
    low, high = mpmath.mpf(low), mpmath.mpf(high)
    sign_low = f(low) > 0
    for _ in range(steps):
        middle = (low + high) / 2
        if (f(middle) > 0) == sign_low:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def _mp_epsilon(delta, mu):
    return _bisect(lambda e: _mp_delta(e, mu) - mpmath.mpf(delta), 0, mpmath.mpf(mu) * 40 + 40)


@pytest.mark.parametrize("x, dims", [(0.1, 1), (1.0, 1), (2.0, 10), (5.0, 1000), (30.0, 1), (40.0, 10**6)])
def test_failure_probability_matches_mpmath(x, dims):
    reference = 1 - mpmath.erf(mpmath.mpf(x) / mpmath.sqrt(2)) ** dims
    assert failure_probability(x, dims) == pytest.approx(float(reference), rel=1e-12)


@pytest.mark.parametrize("q, dims", [(0.5, 1), pytest.param(0.05, 100, marks=pytest.mark.slow), pytest.param(1e-12, 10, marks=pytest.mark.slow), pytest.param(1e-200, 1, marks=pytest.mark.slow), pytest.param(1e-307, 3, marks=pytest.mark.slow), (0.999, 1000)])
def test_scaled_error_matches_mpmath(q, dims):
    # mpmath at 400 digits: u = 1 - (1 - q)^(1/d), then x with erfc(x / sqrt 2) = u, by bisection on log erfc
    with mpmath.workdps(400):
        u = 1 - (1 - mpmath.mpf(q)) ** (mpmath.mpf(1) / dims)
        log_u = mpmath.log(u)
        reference = _bisect(lambda x: mpmath.log(mpmath.erfc(x / mpmath.sqrt(2))) - log_u, 0, 60)
        assert scaled_error_for(q, dims) == pytest.approx(float(reference), rel=1e-12)


@pytest.mark.parametrize("sigma, delta, sensitivity", [(4.0, 1e-5, 1.0), (0.5, 1e-6, 1.0), (1.0, 1e-5, 1.0),
                                                       (30.0, 1e-10, 2.0)])
def test_epsilon_from_sigma_matches_mpmath(sigma, delta, sensitivity):
    result = gaussian_mechanism(sigma=sigma, error=1.0, delta=delta, sensitivity=sensitivity)
    reference = _mp_epsilon(delta, sensitivity / sigma)
    assert result.epsilon == pytest.approx(float(reference), rel=1e-12)
    assert result.mu == sensitivity / sigma and result.solved_for == "confidence"


def test_sigma_from_epsilon_meets_delta_and_is_tight():
    result = gaussian_mechanism(epsilon=1.0, delta=1e-5, confidence=0.95, dims=100)
    # BW18 Thm 8 in mpmath: delta at the reported sigma is at most 1e-5, and within 1e-10 of it
    delta_at_sigma = _mp_delta(1.0, 1.0 / result.sigma)
    assert delta_at_sigma <= mpmath.mpf("1e-5")
    assert float(delta_at_sigma) == pytest.approx(1e-5, rel=1e-10)  # sigma rounded up by ~1e-12 (calibrate_gaussian)
    # Dwork, Roth 2014, Thm A.1: sqrt(2 ln(1.25/delta)) / eps
    assert result.sigma_classic == pytest.approx(math.sqrt(2 * math.log(1.25e5)), rel=1e-15)
    assert not result.classic_valid and "valid only for 0 < eps < 1" in result.warnings[0]
    # the simultaneous error: erf(t / (sigma sqrt 2))^100 = 0.95
    reference = mpmath.sqrt(2) * mpmath.erfinv(mpmath.mpf("0.95") ** (mpmath.mpf(1) / 100)) * mpmath.mpf(result.sigma)
    assert result.error == pytest.approx(float(reference), rel=1e-12)


def test_classic_calibration():
    result = gaussian_mechanism(epsilon=0.5, delta=1e-5, confidence=0.9, calibration="classic")
    assert result.sigma == pytest.approx(math.sqrt(2 * math.log(1.25e5)) / 0.5, rel=1e-15)
    assert result.classic_valid and result.warnings == ()
    # the epsilon reported is the exact one of that (larger) sigma: below the target
    assert result.epsilon < 0.5
    with pytest.raises(ParameterError, match=r"eps must be in \(0, 1\) for the classic calibration"):
        gaussian_mechanism(epsilon=2.0, confidence=0.9, calibration="classic")


def test_epsilon_from_error_and_confidence():
    result = gaussian_mechanism(error=5.0, confidence=0.95, dims=100)
    x = mpmath.sqrt(2) * mpmath.erfinv(mpmath.mpf("0.95") ** (mpmath.mpf(1) / 100))
    assert result.sigma == pytest.approx(float(5 / x), rel=1e-12)
    assert result.solved_for == "epsilon"
    assert result.epsilon == pytest.approx(float(_mp_epsilon(1e-5, 1 / result.sigma)), rel=1e-12)


def test_adadp_example():
    # Xu et al. 2020 (ADADP), Lemma 1 example: s = (12, 6), sigma = (17, 8.5) against sigma* = 1.
    # mu = sqrt(144/289 + 36/72.25) = 12 sqrt(2) / 17 exactly.
    exact_mu = 12 * mpmath.sqrt(2) / 17
    assert per_coordinate_mu([12, 6], [17, 8.5]) == pytest.approx(float(exact_mu), rel=1e-15)
    result = per_coordinate_gaussian([12, 6], [17, 8.5], target_multiplier=1.0)
    assert result.noise_multiplier == pytest.approx(float(1 / exact_mu), rel=1e-15)  # 1.0017346 >= 1
    assert result.exact and result.meets_target
    assert result.scale_factor >= float(exact_mu) and result.scale_factor == pytest.approx(float(exact_mu), rel=1e-15)
    assert result.epsilon == pytest.approx(float(_mp_epsilon(1e-5, exact_mu)), rel=1e-12)


def test_per_coordinate_epsilon_target():
    result = per_coordinate_gaussian([1.0, 2.0, 0.5], [2.0, 3.0, 1.0], target_epsilon=1.0, delta=1e-6)
    # scaled by c, the mechanism is exactly (1, 1e-6)-DP: delta(1; mu / c) <= 1e-6, tight to 1e-10
    mu_scaled = result.mu / result.scale_factor
    assert _mp_delta(1.0, mu_scaled) <= mpmath.mpf("1e-6")
    assert float(_mp_delta(1.0, mu_scaled)) == pytest.approx(1e-6, rel=1e-10)  # sigma rounded up by ~1e-12
    assert result.scaled_sigmas == tuple(result.scale_factor * s for s in (2.0, 3.0, 1.0))
    assert result.meets_target is False


def test_joint_clipping_is_an_upper_bound():
    result = per_coordinate_gaussian([1.0, 1.0], [1.0, 1.0], clipping="joint")
    assert not result.exact and "upper bound" in result.warnings[0]
    assert result.scale_factor is None and result.solved_for == "epsilon"


def test_bad_arguments():
    with pytest.raises(ParameterError, match="sigmas must be a list as long as sensitivities"):
        per_coordinate_mu([1.0, 2.0], [1.0])
    with pytest.raises(ParameterError, match="sigmas item 2 must be in"):
        per_coordinate_mu([1.0, 2.0], [1.0, -1.0])
    with pytest.raises(ParameterError, match="sensitivities must be a non-empty list"):
        per_coordinate_mu([], [])
    with pytest.raises(ParameterError, match="clipping must be one of"):
        per_coordinate_gaussian([1.0], [1.0], clipping="global")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="give two of"):
        gaussian_mechanism(error=1.0)
    with pytest.raises(ValueError, match="give epsilon or sigma, not both"):
        gaussian_mechanism(epsilon=1.0, sigma=1.0, error=1.0)
    with pytest.raises(ParameterError, match="calibration must be one of"):
        gaussian_mechanism(sigma=1.0, error=1.0, calibration="exact")  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="delta must be in"):
        gaussian_mechanism(sigma=1.0, error=1.0, delta=0.0)


@pytest.mark.parametrize("dims, error, sigma", [(1, 2.0, 1.0), (10, 3.0, 1.0), pytest.param(100, 12.0, 4.0, marks=pytest.mark.slow)])
def test_monte_carlo_confidence_is_exact(dims, error, sigma):
    # Stated as exact: 1e5 draws of `dims` independent N(0, sigma^2) coordinates must match the
    # simultaneous confidence within 4 standard errors of a proportion.
    result = gaussian_mechanism(sigma=sigma, error=error, dims=dims)
    rng = np.random.default_rng(20260127)
    noise = rng.normal(0.0, sigma, size=(100_000, dims))
    observed = float(np.mean(np.max(np.abs(noise), axis=1) <= error))
    tolerance = 4.0 * math.sqrt(result.confidence * (1 - result.confidence) / 100_000)
    assert abs(observed - result.confidence) <= tolerance


def test_monte_carlo_per_coordinate_privacy_loss_is_mu_gdp():
    # With every s_i reached at once (D' moves coordinate i by s_i), the privacy loss
    # L = sum (s_i^2 - 2 s_i y_i) / (2 sigma_i^2)... taken as log p_D(y) - log p_D'(y) for y ~ D is
    # N(mu^2/2, mu^2) exactly; 1e5 draws: its mean and std, and delta(eps) = E[(1 - e^(eps - L))_+],
    # match mu-GDP's within sampling error.
    s, sigmas = np.array([12.0, 6.0]), np.array([17.0, 8.5])
    result = per_coordinate_gaussian(list(s), list(sigmas))
    rng = np.random.default_rng(7)
    y = rng.normal(0.0, sigmas, size=(100_000, 2))
    loss = np.sum(((y - s) ** 2 - y**2) / (2 * sigmas**2), axis=1)
    mu = result.mu
    assert abs(loss.mean() - mu * mu / 2) <= 4 * mu / math.sqrt(100_000)
    assert abs(loss.std() - mu) <= 4 * mu / math.sqrt(2 * 100_000)
    samples = np.maximum(0.0, 1.0 - np.exp(0.5 - loss))
    expected = float(_mp_delta(0.5, mu))
    assert abs(samples.mean() - expected) <= 4 * samples.std() / math.sqrt(100_000)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.floats(1e-3, 1e3), st.floats(1e-6, 1 - 1e-9), st.integers(1, 10**6))
def test_error_round_trip(sigma, confidence, dims):
    forward = gaussian_mechanism(sigma=sigma, confidence=confidence, dims=dims)
    back = gaussian_mechanism(sigma=sigma, error=forward.error, dims=dims)
    assert back.failure_probability == pytest.approx(forward.failure_probability, rel=1e-9)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(st.floats(0.05, 20.0), st.floats(1e-3, 0.999), st.integers(1, 1000))
def test_epsilon_round_trip(epsilon, confidence, dims):
    forward = gaussian_mechanism(epsilon=epsilon, confidence=confidence, dims=dims)
    back = gaussian_mechanism(error=forward.error, confidence=confidence, dims=dims)
    assert back.epsilon == pytest.approx(epsilon, rel=1e-9)
    assert back.epsilon <= epsilon * (1 + 1e-12)  # the sigma was rounded up, never down


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(1e-3, 1e3), st.floats(1e-3, 1e3)), min_size=1, max_size=20),
       st.floats(0.1, 10.0))
def test_scale_factor_round_trip(pairs, target):
    s, sigmas = [a for a, _ in pairs], [b for _, b in pairs]
    result = per_coordinate_gaussian(s, sigmas, target_multiplier=target)
    scaled = per_coordinate_gaussian(s, list(result.scaled_sigmas))
    assert scaled.noise_multiplier == pytest.approx(target, rel=1e-12)
    assert scaled.noise_multiplier >= target * (1 - 1e-15)
