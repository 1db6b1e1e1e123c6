"""Randomized response, binary and k-ary (dpcalc.core.mechanisms.randomized_response).

References: closed forms in mpmath at 50 digits (k-RR: p = e^eps / (e^eps + k - 1),
q = 1 / (e^eps + k - 1), Kairouz, Bonawitz, Ramage 2016; the debiased estimator's variance
[q (1 - q) + phi (p - q)(1 - p - q)] / (n (p - q)^2), Wang, Blocki, Li, Jha 2017, Sec. 3,
written in terms of p and q here, independently of the module's e^eps form); Monte Carlo with
numpy (fixed seed, 1e5 draws) simulating the respondents, for the standard error, stated as exact.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core.mechanisms.randomized_response import (
    epsilon_of_flip,
    flip_probability,
    randomized_response,
    scaled_variance,
)
from dpcalc.core.validation import ParameterError

mpmath.mp.dps = 50


def _mp_pq(epsilon, k):
    e = mpmath.exp(mpmath.mpf(epsilon))
    return e / (e + k - 1), 1 / (e + k - 1)


def _mp_variance(epsilon, k, n, phi):
    p, q = _mp_pq(epsilon, k)
    phi = mpmath.mpf(phi)
    return (q * (1 - q) + phi * (p - q) * (1 - p - q)) / (n * (p - q) ** 2)


@pytest.mark.parametrize("epsilon, k", [(1.0, 2), (1e-8, 2), (0.5, 4), (10.0, 2), (50.0, 1000), (3.0, 10**6)])
def test_flip_probability_matches_mpmath(epsilon, k):
    p, q = _mp_pq(epsilon, k)
    assert flip_probability(epsilon, k) == pytest.approx(float((k - 1) * q), rel=1e-13)
    assert flip_probability(epsilon, k) == pytest.approx(float(1 - p), rel=1e-13)
    result = randomized_response(epsilon=epsilon, k=k)
    assert result.keep_probability == pytest.approx(float(p), rel=1e-13)
    assert result.other_probability == pytest.approx(float(q), rel=1e-13)
    assert result.solved_for == "none" and result.std_error is None


def test_binary_reference_values():
    # Warner 1965 with p = e/(1 + e) at eps = 1: flip 1/(1 + e) = 0.2689414213699951
    assert flip_probability(1.0) == pytest.approx(1 / (1 + math.e), rel=1e-15)
    # flip 1/4 is eps = ln 3
    assert epsilon_of_flip(0.25) == pytest.approx(math.log(3), rel=1e-15)
    # k = 4, flip 1/4: eps = ln(3 * 3) = ln 9
    assert epsilon_of_flip(0.25, 4) == pytest.approx(math.log(9), rel=1e-15)


@pytest.mark.parametrize("epsilon, k, n, phi", [
    (1.0, 2, 1000, None), (1.0, 2, 1000, 0.3), (0.5, 4, 10**4, 0.0), (0.5, 4, 10**4, 1.0), (2.0, 100, 500, 0.2),
    (1e-6, 3, 10**9, 0.5), (30.0, 10, 10, None),
])
def test_std_error_matches_mpmath(epsilon, k, n, phi):
    result = randomized_response(epsilon=epsilon, k=k, respondents=n, frequency=phi)
    reference = mpmath.sqrt(_mp_variance(epsilon, k, n, 1.0 if phi is None else phi))
    assert result.std_error == pytest.approx(float(reference), rel=1e-12)
    assert result.solved_for == "std_error"


def test_worst_frequency_is_one():
    # the variance grows with phi for k > 2 (slope (k - 2)/(n (e^eps - 1)) >= 0); flat for k = 2
    for k in (3, 10):
        values = [scaled_variance(1.0, k, phi) for phi in (0.0, 0.25, 0.5, 1.0)]
        assert values == sorted(values) and scaled_variance(1.0, k) == values[-1]
    assert scaled_variance(1.0, 2, 0.0) == pytest.approx(scaled_variance(1.0, 2, 1.0), rel=1e-15)


def test_epsilon_from_respondents_and_std_error():
    result = randomized_response(respondents=10_000, std_error=0.01, k=4)
    assert result.solved_for == "epsilon"
    assert float(mpmath.sqrt(_mp_variance(result.epsilon, 4, 10_000, 1))) == pytest.approx(0.01, rel=1e-12)


def test_respondents_from_epsilon_and_std_error():
    result = randomized_response(flip=0.25, std_error=0.01)
    # binary, eps = ln 3: n Var = e^eps / (e^eps - 1)^2 = 3/4: n = 0.75 / 1e-4 = 7500
    assert result.respondents == 7500 and result.solved_for == "respondents"
    assert result.std_error == pytest.approx(0.01, rel=1e-15)  # exactly 0.01 at n = 7500, to rounding
    smaller = randomized_response(epsilon=result.epsilon, respondents=result.respondents - 1)
    assert smaller.std_error > 0.01


def test_bad_arguments():
    with pytest.raises(ValueError, match="give epsilon or flip, not both"):
        randomized_response(epsilon=1.0, flip=0.2)
    with pytest.raises(ValueError, match="give two of"):
        randomized_response(epsilon=1.0, respondents=10, std_error=0.1)
    with pytest.raises(ValueError, match="give two of"):
        randomized_response(respondents=10)
    with pytest.raises(ParameterError, match="k must be an integer in"):
        randomized_response(epsilon=1.0, k=1)
    with pytest.raises(ParameterError, match=r"flip must be in \(0, 0\.5\)"):
        randomized_response(flip=0.5)
    with pytest.raises(ParameterError, match="frequency must be in"):
        randomized_response(epsilon=1.0, respondents=10, frequency=1.5)


@pytest.mark.parametrize("epsilon, k, n, phi", [(1.0, 2, 50, 0.3), (0.7, 4, 40, 0.25), (2.0, 10, 30, 0.5)])
def test_monte_carlo_std_error_is_exact(epsilon, k, n, phi):
    # Simulate the mechanism itself: n respondents, n phi of them holding value 0, each keeping
    # its value with probability p and otherwise reporting one of the other k - 1 uniformly; the
    # debiased estimate of value 0's frequency over 1e5 repetitions has mean phi (unbiased) and
    # the stated standard error (its sample std within 4 standard errors: rel. sqrt(2/1e5) each).
    result = randomized_response(epsilon=epsilon, k=k, respondents=n, frequency=phi)
    p, q = result.keep_probability, result.other_probability
    rng = np.random.default_rng(11)
    draws = 100_000
    holders = round(n * phi)
    assert holders == n * phi
    truth = np.concatenate([np.zeros(holders, dtype=np.int64), rng.integers(1, k, size=n - holders)])
    keep = rng.random((draws, n)) < p
    shift = rng.integers(1, k, size=(draws, n))  # a uniformly chosen other value
    reports = np.where(keep, truth, (truth + shift) % k)
    estimate = (np.mean(reports == 0, axis=1) - q) / (p - q)
    assert abs(estimate.mean() - phi) <= 4 * result.std_error / math.sqrt(draws)
    assert abs(estimate.std() / result.std_error - 1) <= 4 * math.sqrt(2 / draws)


@settings(max_examples=200, deadline=None)
@given(st.floats(1e-6, 50.0), st.integers(2, 10**6))
def test_flip_round_trip(epsilon, k):
    flip = flip_probability(epsilon, k)
    # the flip probability's own rounding (half an ulp, relative 1.1e-16) moves eps by up to
    # about k * 1.1e-16 absolute (d eps / d log f = -1 / (1 - f), 1 - f >= 1/k): the conditioning
    assert epsilon_of_flip(flip, k) == pytest.approx(epsilon, rel=1e-9, abs=4 * k * 1.2e-16)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.floats(1e-4, 30.0), st.integers(2, 1000), st.integers(1, 10**9), st.floats(0.0, 1.0))
def test_epsilon_round_trip(epsilon, k, n, phi):
    forward = randomized_response(epsilon=epsilon, k=k, respondents=n, frequency=phi)
    back = randomized_response(respondents=n, std_error=forward.std_error, k=k, frequency=phi)
    assert back.epsilon == pytest.approx(epsilon, rel=1e-9)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.floats(1e-3, 20.0), st.integers(2, 1000), st.floats(1e-4, 0.5))
def test_respondents_are_the_fewest(epsilon, k, target):
    result = randomized_response(epsilon=epsilon, k=k, std_error=target)
    assert result.std_error <= target * (1 + 1e-11)
    if result.respondents > 1:
        fewer = randomized_response(epsilon=epsilon, k=k, respondents=result.respondents - 1)
        assert fewer.std_error > target * (1 - 1e-12)
