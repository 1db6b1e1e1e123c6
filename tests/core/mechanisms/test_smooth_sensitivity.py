"""Smooth-sensitivity noise (dpcalc.core.mechanisms.smooth_sensitivity): the admissible
(alpha, beta) of each family, closed forms against mpmath, inverses as round trips, and a
Monte Carlo check of every accuracy claim (exact for laplace, cauchy and student-t, an upper
bound for laplace-log-normal).

References (docs/reference-values.md, mechanism smooth-sensitivity): NRS 2007's Laplace
(eps/2, eps/(2 ln(2/delta))) and Cauchy-type gamma = 2 (eps/6, eps/6) parameters; the
standard Cauchy tail (2/pi) arctan(1/z); Bun, Steinke 2019 Sec. 3.1.1 (eps = t/sigma +
e^(3 sigma^2/2) s, the cubic 5 (eps/t) sigma^3 - 5 sigma^2 - 1 = 0) and Thm 31 (Student's T,
eps = (d + 1)(t + s / (2 sqrt d))); the Student's T tail as mpmath's regularized incomplete
beta I_(d/(d+z^2))(d/2, 1/2); mpmath at 50 digits.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core.mechanisms.smooth_sensitivity import (
    admissible,
    lln_epsilon,
    lln_optimal_sigma,
    smooth_sensitivity,
    student_t_epsilon,
)
from dpcalc.core.mechanisms.student_t import student_t_log_tail, student_t_quantile
from dpcalc.core.validation import ParameterError

mpmath.mp.dps = 50
DRAWS = 100_000


def test_admissible_parameters():
    # NRS 2007: Laplace alpha = eps/2, beta = eps/(2 ln(2/delta)); Cauchy (gamma = 2) eps/6 both
    alpha, beta = admissible("laplace", 1.0, 1e-6)
    assert alpha == 0.5
    assert beta == pytest.approx(float(1 / (2 * mpmath.log(2 / mpmath.mpf("1e-6")))), rel=1e-14)
    assert admissible("cauchy", 3.0) == (0.5, 0.5)


@pytest.mark.parametrize("q", [1e-300, 1e-12, 0.05, 0.5, 0.9, 1 - 1e-9])
def test_cauchy_error_matches_mpmath(q):
    # reference: mpmath, 50 digits: the standard Cauchy |Z| quantile cot(pi q / 2), times the scale 6 S / eps
    result = smooth_sensitivity(noise="cauchy", epsilon=1.0, smooth_sensitivity=0.5, failure_probability=q)
    expected = 3 * mpmath.cot(mpmath.pi * mpmath.mpf(q) / 2)
    assert result.error == pytest.approx(float(expected), rel=1e-12)


@pytest.mark.parametrize("q", [1e-300, 1e-12, 0.05, 0.5, 1 - 1e-9])
def test_laplace_error_matches_mpmath(q):
    result = smooth_sensitivity(noise="laplace", epsilon=0.3, delta=1e-6, smooth_sensitivity=2.0, failure_probability=q)
    expected = (2 * 2 / mpmath.mpf(0.3)) * -mpmath.log(mpmath.mpf(q))
    assert result.error == pytest.approx(float(expected), rel=1e-12)


@pytest.mark.parametrize("epsilon, beta", [(1.0, 0.1), (0.1, 0.001), (10.0, 5.0), (1.0, 1e-8), (1e-3, 1e-4), (1e-3, 1e-3)])
def test_lln_sigma_matches_the_cubic(epsilon, beta):
    # reference: the positive root of 5 (eps/t) sigma^3 - 5 sigma^2 - 1 in mpmath (polyroots, 50 digits)
    roots = mpmath.polyroots([-1, 0, -5, 5 * mpmath.mpf(epsilon) / beta], maxsteps=200, extraprec=200, asc=True)
    positive = [r.real for r in roots if abs(r.imag) < 1e-30 and r.real > 0]
    assert len(positive) == 1
    sigma = lln_optimal_sigma(epsilon, beta)
    assert sigma == pytest.approx(float(positive[0]), rel=1e-12)
    result = smooth_sensitivity(noise="laplace-log-normal", epsilon=epsilon, beta=beta, failure_probability=0.1)
    expected_alpha = mpmath.exp(-1.5 * positive[0] ** 2) * (epsilon - beta / positive[0])
    assert result.alpha == pytest.approx(float(expected_alpha), rel=1e-12)
    assert lln_epsilon(result.alpha, beta, sigma) == pytest.approx(epsilon, rel=1e-12)


def test_lln_sigma_minimises_the_variance():
    # the cubic's root is the minimum of e^(5 sigma^2) / (eps - t/sigma)^2 (BS19 Sec. 3.1.1): check by mpmath
    epsilon, beta = 1.0, 0.1
    sigma = mpmath.mpf(lln_optimal_sigma(epsilon, beta))
    def variance(s):
        return mpmath.exp(5 * s**2) / (epsilon - beta / s) ** 2
    assert mpmath.diff(variance, sigma) == pytest.approx(0.0, abs=1e-12)
    assert variance(sigma) < variance(sigma * 1.01) and variance(sigma) < variance(sigma * 0.99)


@pytest.mark.parametrize("k_scale", [0.01, 1.0, 100.0])
def test_lln_scale_direction_minimises_epsilon(k_scale):
    # for a given noise scale, sigma minimises t/sigma + e^(3 sigma^2/2) s: the derivative vanishes (mpmath)
    beta = 0.2
    result = smooth_sensitivity(noise="laplace-log-normal", scale=k_scale, beta=beta)
    s, sigma = mpmath.mpf(result.alpha), mpmath.mpf(result.sigma)
    derivative = mpmath.diff(lambda x: beta / x + mpmath.exp(1.5 * x**2) * s, sigma)
    assert abs(derivative) <= 1e-10 * float(beta / sigma**2)
    assert result.epsilon == pytest.approx(float(beta / sigma + mpmath.exp(1.5 * sigma**2) * s), rel=1e-13)


@pytest.mark.parametrize("degrees", [1, 2, 3, 4, 5, 8, 17, 30, 99, 100])
@pytest.mark.parametrize("z", [1e-300, 1e-8, 0.3, 1.0, 2.5, 7.0, 1e3, 1e12, 1e60])
def test_student_t_tail_matches_mpmath(degrees, z):
    # reference: P(|T| > z) = I_(d/(d+z^2))(d/2, 1/2), mpmath betainc at 50 digits
    d, zz = mpmath.mpf(degrees), mpmath.mpf(z)
    expected = mpmath.betainc(d / 2, mpmath.mpf(1) / 2, 0, d / (d + zz**2), regularized=True)
    if expected < mpmath.mpf("1e-300"):
        return  # below float64's normal range: the log is still right, checked below
    assert math.exp(student_t_log_tail(z, degrees)) == pytest.approx(float(expected), rel=1e-12)


@pytest.mark.parametrize("degrees", [30, 50, 98, 100])
@pytest.mark.parametrize("fraction", [0.5, 0.9, 0.999])
def test_student_t_tail_just_below_sqrt_d(degrees, fraction):
    # below z = sqrt(d) the tail of many degrees of freedom can be tiny (d = 98, z = 9.89: ~6e-16);
    # 1 minus the finite sums there lost it entirely (a math domain error, found by hypothesis at
    # d = 98, q = 2.2e-16). Reference: mpmath betainc at 50 digits.
    z = fraction * math.sqrt(degrees)
    d, zz = mpmath.mpf(degrees), mpmath.mpf(z)
    expected = mpmath.betainc(d / 2, mpmath.mpf(1) / 2, 0, d / (d + zz**2), regularized=True)
    assert math.exp(student_t_log_tail(z, degrees)) == pytest.approx(float(expected), rel=1e-12)


def test_student_t_log_tail_far_out():
    # the log stays exact where the tail underflows: d = 30, z = 1e40, mpmath 50 digits
    expected = mpmath.log(mpmath.betainc(15, mpmath.mpf(1) / 2, 0, 30 / (30 + mpmath.mpf(10) ** 80), regularized=True))
    assert student_t_log_tail(1e40, 30) == pytest.approx(float(expected), rel=1e-14)


@pytest.mark.parametrize("degrees, q, expected", [
    (1, 0.05, "12.706204736174703"),  # the Cauchy quantile cot(0.025 pi); t-table 12.706
    (3, 0.05, "3.1824463052837091"),  # t-table 3.182
    (10, 0.01, "3.1692726726169518"),  # t-table 3.169
])
def test_student_t_quantile(degrees, q, expected):
    # reference: mpmath findroot on the betainc tail at 50 digits (the t-table values beside)
    d = mpmath.mpf(degrees)
    root = mpmath.findroot(lambda z: mpmath.betainc(d / 2, 0.5, 0, d / (d + z**2), regularized=True) - mpmath.mpf(q),
                           mpmath.mpf(expected))
    assert student_t_quantile(q, degrees) == pytest.approx(float(root), rel=1e-12)
    assert float(root) == pytest.approx(float(expected), rel=1e-15)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 100), st.floats(1e-300, 0.999))
def test_student_t_quantile_round_trip(degrees, q):
    z = student_t_quantile(q, degrees)
    assert math.exp(student_t_log_tail(z, degrees)) == pytest.approx(q, rel=1e-11)


def test_student_t_parameters():
    # BS19 Thm 31 at eps = 1, t = 0.05, d = 3: s = 2 sqrt(3) (1/4 - 0.05), and eps back from s
    result = smooth_sensitivity(noise="student-t", epsilon=1.0, beta=0.05, degrees=3)
    assert result.alpha == pytest.approx(2 * math.sqrt(3) * 0.2, rel=1e-15)
    assert student_t_epsilon(result.alpha, 0.05, 3) == pytest.approx(1.0, rel=1e-15)
    assert result.delta == 0.0 and result.std == pytest.approx(result.scale * math.sqrt(3), rel=1e-15)
    assert smooth_sensitivity(noise="student-t", epsilon=1.0, beta=0.05).degrees == 3  # the default
    assert smooth_sensitivity(noise="student-t", epsilon=1.0, beta=0.05, degrees=2).std == math.inf


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["laplace", "cauchy", "laplace-log-normal", "student-t"]), st.floats(1e-3, 50), st.floats(1e-3, 1e3),
       st.floats(1e-12, 0.99))
def test_round_trips(noise, epsilon, smooth, q):
    extra = {"laplace": {"delta": 1e-6}, "cauchy": {}, "laplace-log-normal": {"beta": epsilon / 10},
             "student-t": {"beta": epsilon / 20, "degrees": 4}}[noise]
    forward = smooth_sensitivity(noise=noise, epsilon=epsilon, smooth_sensitivity=smooth, failure_probability=q, **extra)
    back = smooth_sensitivity(noise=noise, error=forward.error, smooth_sensitivity=smooth, failure_probability=q, **extra)
    assert back.epsilon == pytest.approx(epsilon, rel=1e-9)
    again = smooth_sensitivity(noise=noise, epsilon=epsilon, smooth_sensitivity=smooth, error=forward.error, **extra)
    assert again.failure_probability == pytest.approx(q, rel=1e-9)
    if noise != "laplace-log-normal":  # there the scale alone picks the epsilon-minimising sigma, a different noise
        via_scale = smooth_sensitivity(noise=noise, scale=forward.scale, smooth_sensitivity=smooth, **extra)
        assert via_scale.epsilon == pytest.approx(epsilon, rel=1e-12)
    else:
        via_scale = smooth_sensitivity(noise=noise, scale=forward.scale, smooth_sensitivity=smooth,
                                       sigma=forward.sigma, **extra)
        assert via_scale.epsilon == pytest.approx(epsilon, rel=1e-9)
        assert via_scale.epsilon >= smooth_sensitivity(noise=noise, scale=forward.scale, smooth_sensitivity=smooth,
                                                       **extra).epsilon * (1 - 1e-12)


@pytest.mark.parametrize("kwargs, name", [
    ({"noise": "laplace", "epsilon": 1.0}, "delta"),
    ({"noise": "cauchy", "epsilon": 1.0, "delta": 1e-6}, "delta"),
    ({"noise": "laplace-log-normal", "epsilon": 1.0, "delta": 1e-6, "beta": 0.1}, "delta"),
    ({"noise": "laplace-log-normal", "epsilon": 1.0}, "beta"),
    ({"noise": "laplace-log-normal", "epsilon": 1.0, "beta": 1.0, "sigma": 0.5}, "sigma"),
    ({"noise": "laplace-log-normal", "epsilon": 1e-3, "beta": 1.0}, "beta"),  # sigma ~ 1000: e^(-1.5 sigma^2) underflows
    ({"noise": "cauchy", "epsilon": 1.0, "beta": 0.1}, "beta"),
    ({"noise": "cauchy", "epsilon": 1.0, "sigma": 0.1}, "sigma"),
    ({"noise": "gaussian", "epsilon": 1.0}, "noise"),
    ({"noise": "cauchy", "epsilon": 1.0, "scale": 1.0}, "scale"),
    ({"noise": "cauchy", "error": 1.0}, "epsilon"),
    ({"noise": "cauchy", "epsilon": 1.0, "error": 1.0, "failure_probability": 0.1}, "error"),
    ({"noise": "cauchy", "epsilon": 1.0, "smooth_sensitivity": 0.0}, "smooth_sensitivity"),
    ({"noise": "student-t", "epsilon": 1.0}, "beta"),
    ({"noise": "student-t", "epsilon": 1.0, "beta": 0.25, "degrees": 3}, "beta"),  # needs t < eps / (d + 1)
    ({"noise": "student-t", "epsilon": 1.0, "beta": 0.01, "degrees": 0}, "degrees"),
    ({"noise": "student-t", "epsilon": 1.0, "beta": 0.01, "degrees": 101}, "degrees"),
    ({"noise": "student-t", "epsilon": 1.0, "beta": 0.01, "delta": 1e-6}, "delta"),
    ({"noise": "student-t", "epsilon": 1.0, "beta": 0.01, "sigma": 1.0}, "sigma"),
    ({"noise": "cauchy", "epsilon": 1.0, "degrees": 3}, "degrees"),
])
def test_bad_parameters(kwargs, name):
    with pytest.raises(ParameterError) as raised:
        smooth_sensitivity(**kwargs)
    assert raised.value.name == name


def _binomial_margin(p: float, n: int = DRAWS) -> float:
    """Five standard errors of a frequency with probability p over n draws, plus one draw."""
    return 5 * math.sqrt(p * (1 - p) / n) + 1 / n


@pytest.mark.parametrize("noise, q", [("laplace", 0.05), ("laplace", 0.001), ("cauchy", 0.05), ("cauchy", 0.5),
                                      ("student-t", 0.05), ("student-t", 0.001)])
def test_monte_carlo_exact_accuracy(noise, q):
    rng = np.random.default_rng(2007)
    extra = {"laplace": {"delta": 1e-6}, "cauchy": {}, "student-t": {"beta": 0.05, "degrees": 3}}[noise]
    result = smooth_sensitivity(noise=noise, epsilon=1.0, smooth_sensitivity=0.7, failure_probability=q, **extra)
    draws = {"laplace": lambda: rng.laplace(0.0, 1.0, DRAWS), "cauchy": lambda: rng.standard_cauchy(DRAWS),
             "student-t": lambda: rng.standard_t(3, DRAWS)}[noise]()
    frequency = float(np.mean(np.abs(result.scale * draws) > result.error))
    assert abs(frequency - q) <= _binomial_margin(q)


@pytest.mark.parametrize("q", [0.5, 0.1, 0.01])
def test_monte_carlo_lln_accuracy_is_an_upper_bound(q):
    rng = np.random.default_rng(2019)
    result = smooth_sensitivity(noise="laplace-log-normal", epsilon=1.0, beta=0.1, smooth_sensitivity=0.7,
                                failure_probability=q)
    draws = rng.laplace(0.0, 1.0, DRAWS) * np.exp(result.sigma * rng.standard_normal(DRAWS))
    frequency = float(np.mean(np.abs(result.scale * draws) > result.error))
    assert frequency <= q + _binomial_margin(q)
    # and the variance the bound uses is the noise's: 2 e^(2 sigma^2) scale^2 (within sampling error)
    assert float(np.std(result.scale * draws)) == pytest.approx(result.std, rel=0.05)
