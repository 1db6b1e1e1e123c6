"""Gaussian DP core: mpmath references, the public reference values (docs/reference-values.md),
edge cases and properties."""

from __future__ import annotations

import math

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core.gdp import (
    CLT_WARNING,
    clt_mu,
    delta_for_epsilon,
    epsilon_for_delta,
    gdp_guarantee,
    log_delta_for_epsilon,
    max_advantage,
    noisy_sgd_gdp,
    tradeoff,
)
from dpcalc.core.validation import ParameterError

mp.mp.dps = 60

# The accuracy target for delta(eps; mu) and eps(delta) against mpmath at 60 digits.
RTOL = 1e-9

MUS = [1e-4, 1e-3, 0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0]
DELTAS = [1e-300, 1e-200, 1e-100, 1e-50, 1e-20, 1e-10, 1e-5, 1e-3, 0.01, 0.1, 0.3, 0.5]


def mp_delta(epsilon, mu):
    """delta(eps; mu) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Dong, Roth, Su Cor. 2.13)."""
    epsilon, mu = mp.mpf(epsilon), mp.mpf(mu)
    return mp.ncdf(-epsilon / mu + mu / 2) - mp.exp(epsilon) * mp.ncdf(-epsilon / mu - mu / 2)


def mp_epsilon(delta, mu, start):
    """The root of log delta(eps; mu) = log delta, found by mpmath from our value."""
    f = lambda e: mp.log(mp_delta(e, mu)) - mp.log(delta)  # noqa: E731
    return mp.findroot(f, (mp.mpf(start) * (1 - 1e-6), mp.mpf(start) * (1 + 1e-6)), solver="secant")


@pytest.mark.parametrize("mu", MUS)
@pytest.mark.parametrize("delta", DELTAS)
def test_epsilon_for_delta_matches_mpmath(mu, delta):
    epsilon = epsilon_for_delta(delta, mu)
    if max_advantage(mu) <= delta:
        assert epsilon == 0.0
        return
    assert epsilon == pytest.approx(float(mp_epsilon(delta, mu, epsilon)), rel=RTOL)


@pytest.mark.parametrize("mu", MUS)
@pytest.mark.parametrize("delta", DELTAS)
def test_delta_for_epsilon_matches_mpmath(mu, delta):
    # Evaluate delta at the epsilon belonging to each target delta: covers 1e-300 ... 0.5.
    epsilon = epsilon_for_delta(delta, mu)
    expected = mp_delta(epsilon, mu)
    assert math.exp(log_delta_for_epsilon(epsilon, mu)) == pytest.approx(float(expected), rel=RTOL)


def test_delta_below_float_range_is_kept_in_log_space():
    # delta(eps = 40; mu = 1) ~ 1e-350 underflows float64; its log must still be exact.
    expected = mp.log(mp_delta(40.0, 1.0))
    assert log_delta_for_epsilon(40.0, 1.0) == pytest.approx(float(expected), rel=1e-12)
    assert delta_for_epsilon(40.0, 1.0) == 0.0


# Public reference values, docs/reference-values.md (delta = 1e-5).
def test_design_card_example():
    # gdp --p 0.004 --sigma 1.1 --T 10000: mu 0.453464, CLT eps 1.78745 (docs/reference-values.md, design card;
    # TF Privacy GDP accountant).
    mu = clt_mu(0.004, 1.1, 10_000)
    assert mu == pytest.approx(0.453464, abs=5e-7)
    assert epsilon_for_delta(1e-5, mu) == pytest.approx(1.787445, abs=5e-7)


def test_mnist_example():
    # MNIST DP-SGD: p = 256/60000, sigma = 1.1, T = 14062: CLT mu 0.573581 (docs/reference-values.md).
    assert clt_mu(256 / 60_000, 1.1, 14_062) == pytest.approx(0.573581, abs=5e-7)


def mp_mu_poisson(p, sigma, steps):
    return mp.mpf(p) * mp.sqrt(steps * mp.expm1(1 / mp.mpf(sigma) ** 2))


def mp_mu_uniform(p, sigma, steps):
    u = 1 / mp.mpf(sigma)
    bracket = mp.exp(u**2) * mp.ncdf(1.5 * u) + 3 * mp.ncdf(-0.5 * u) - 2
    return mp.sqrt(2) * mp.mpf(p) * mp.sqrt(steps * bracket)


@pytest.mark.parametrize("sigma", [0.04, 0.1, 0.5, 1.1, 3.0, 50.0, 1e3, 1e5])
def test_clt_mu_matches_mpmath(sigma):
    assert clt_mu(0.01, sigma, 1000) == pytest.approx(float(mp_mu_poisson(0.01, sigma, 1000)), rel=RTOL)
    expected = mp_mu_uniform(0.01, sigma, 1000)
    assert clt_mu(0.01, sigma, 1000, "uniform") == pytest.approx(float(expected), rel=RTOL)


def test_small_sigma_keeps_mu_finite_where_exp_overflows():
    # sigma < 0.0376: e^(1/sigma^2) overflows float64, mu = p sqrt(T) e^(1/(2 sigma^2)) does not.
    sigma = 0.03
    expected = mp_mu_poisson(0.004, sigma, 10_000)
    assert clt_mu(0.004, sigma, 10_000) == pytest.approx(float(expected), rel=RTOL)
    assert math.isinf(clt_mu(0.004, 1e-200, 10))


def test_epsilon_is_zero_when_the_largest_advantage_is_within_delta():
    mu = 1e-6
    assert max_advantage(mu) < 1e-5
    assert epsilon_for_delta(1e-5, mu) == 0.0


def test_epsilon_above_500_has_no_fixed_bracket():
    # mu = 40: eps(1e-5) ~ mu^2/2 + mu * 4.26 ~ 970.
    epsilon = epsilon_for_delta(1e-5, 40.0)
    assert epsilon > 500.0
    assert epsilon == pytest.approx(float(mp_epsilon(1e-5, 40.0, epsilon)), rel=RTOL)


def test_huge_mu_gives_inf_with_a_warning():
    result = gdp_guarantee(1e160, delta=1e-5)
    assert math.isinf(result.epsilon)
    assert any("overflows" in warning for warning in result.warnings)
    assert epsilon_for_delta(1e-300, 1e150) == pytest.approx(5e299, rel=1e-12)


def test_tradeoff_curve():
    # G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu) (Dong, Roth, Su Def. 2.7), mpmath reference.
    for alpha in (1e-10, 0.001, 0.25, 0.5, 0.9):
        expected = mp.ncdf(-mp.sqrt(2) * mp.erfinv(2 * mp.mpf(alpha) - 1) - 0.5)
        assert tradeoff(alpha, 0.5) == pytest.approx(float(expected), rel=1e-12)
    assert tradeoff(0.3, 0.0) == pytest.approx(0.7, rel=1e-14)
    assert tradeoff(0.0, 1.0) == 1.0
    assert tradeoff(1.0, 1.0) == 0.0


def test_max_advantage_is_delta_at_zero():
    assert max_advantage(0.5) == pytest.approx(float(2 * mp.ncdf(0.25) - 1), rel=1e-14)
    assert delta_for_epsilon(0.0, 0.5) == pytest.approx(max_advantage(0.5), rel=1e-12)


def test_noisy_sgd_result_carries_inputs_and_clt_warning():
    result = noisy_sgd_gdp(0.004, 1.1, 10_000, delta=1e-5)
    assert result.warnings[0] == CLT_WARNING
    assert (result.sampling_probability, result.noise_multiplier, result.steps) == (0.004, 1.1, 10_000)
    assert [point.alpha for point in result.tradeoff] == [0.001, 0.01, 0.05, 0.1, 0.25, 0.5]
    by_epsilon = noisy_sgd_gdp(0.004, 1.1, 10_000, epsilon=result.epsilon)
    assert by_epsilon.delta == pytest.approx(1e-5, rel=1e-9)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: clt_mu(1.5, 1.0, 10), "sampling_probability"),
        (lambda: clt_mu(0.1, -1.0, 10), "noise_multiplier"),
        (lambda: clt_mu(0.1, 1.0, 0), "steps"),
        (lambda: epsilon_for_delta(1.0, 1.0), "delta"),
        (lambda: delta_for_epsilon(-1.0, 1.0), "epsilon"),
    ],
)
def test_parameter_errors_name_the_parameter(call, name):
    with pytest.raises(ParameterError) as error:
        call()
    assert error.value.name == name


# Properties (hypothesis): eps falls as delta or sigma grows, grows with p and T; delta(eps(delta)) = delta.
probabilities = st.floats(1e-4, 1.0)
sigmas = st.floats(0.3, 20.0)
steps = st.integers(1, 10**6)
deltas = st.floats(1e-12, 0.1)


@settings(max_examples=60, deadline=None)
@given(probabilities, sigmas, steps, deltas, deltas)
def test_epsilon_falls_as_delta_grows(p, sigma, T, d1, d2):
    mu = clt_mu(p, sigma, T)
    low, high = sorted((d1, d2))
    assert epsilon_for_delta(high, mu) <= epsilon_for_delta(low, mu) * (1 + 1e-12)


@settings(max_examples=60, deadline=None)
@given(probabilities, sigmas, sigmas, steps)
def test_epsilon_falls_as_sigma_grows(p, s1, s2, T):
    low, high = sorted((s1, s2))
    assert epsilon_for_delta(1e-5, clt_mu(p, high, T)) <= epsilon_for_delta(1e-5, clt_mu(p, low, T)) * (1 + 1e-12)


@settings(max_examples=60, deadline=None)
@given(probabilities, probabilities, sigmas, steps, steps)
def test_epsilon_grows_with_p_and_T(p1, p2, sigma, t1, t2):
    p_low, p_high = sorted((p1, p2))
    t_low, t_high = sorted((t1, t2))
    small = epsilon_for_delta(1e-5, clt_mu(p_low, sigma, t_low))
    assert epsilon_for_delta(1e-5, clt_mu(p_high, sigma, t_high)) >= small * (1 - 1e-12)


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(st.floats(1e-3, 30.0), st.floats(1e-200, 0.4))
def test_delta_round_trips_through_epsilon(mu, delta):
    epsilon = epsilon_for_delta(delta, mu)
    if epsilon > 0.0:
        assert math.exp(log_delta_for_epsilon(epsilon, mu)) == pytest.approx(delta, rel=1e-9)
    else:
        assert max_advantage(mu) <= delta


# Below mu = 0.01, R(t1) - R(t2) cancels; delta is taken from the integral of -R' instead.
def mp_delta_precise(epsilon, mu):
    with mp.workdps(400):  # the difference cancels by ~1e-300 relative for the tiny mu here
        return mp_delta(epsilon, mu)


@pytest.mark.parametrize("mu", [1e-9, 1e-7, 1e-5, 1e-3, 0.005, 0.0099])
@pytest.mark.parametrize("ratio", [0.0, 0.1, 1.0, 3.0, 10.0, 40.0])
def test_log_delta_small_mu_matches_mpmath(mu, ratio):
    epsilon = ratio * mu
    expected = mp_delta_precise(epsilon, mu)
    assert math.exp(log_delta_for_epsilon(epsilon, mu)) == pytest.approx(float(expected), rel=1e-12)


@pytest.mark.parametrize("mu", [1e-12, 1e-9, 1e-6, 1e-4, 0.005])
@pytest.mark.parametrize("fraction", [1e-6, 0.01, 0.3, 0.9])
def test_small_mu_epsilon_matches_mpmath(mu, fraction):
    # eps is correct to RTOL iff mpmath puts delta on each side of the target at eps (1 -+ RTOL).
    delta = fraction * max_advantage(mu)
    epsilon = epsilon_for_delta(delta, mu)
    assert epsilon > 0.0
    assert mp_delta_precise(epsilon * (1 + RTOL), mu) <= delta <= mp_delta_precise(epsilon * (1 - RTOL), mu)
    assert delta_for_epsilon(epsilon, mu) == pytest.approx(delta, rel=1e-9)


def test_tiny_mu_and_tiny_delta():
    # mu = 1e-280 at delta = 1e-300: once an internal error (both bracket ends at -inf).
    epsilon = epsilon_for_delta(1e-300, 1e-280)
    assert 0.0 < epsilon < 1e-277
    assert delta_for_epsilon(0.0, 1e-6) == pytest.approx(max_advantage(1e-6), rel=1e-13)
