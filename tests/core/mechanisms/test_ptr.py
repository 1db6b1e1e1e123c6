"""Propose-test-release (dpcalc.core.mechanisms.ptr): closed forms against mpmath, inverses as
round trips, and a Monte Carlo check of every accuracy and "no reply" claim (all exact).

References (docs/reference-values.md, mechanism ptr): the Laplace tail P(|Lap(b)| > e) =
e^(-e/b) (Dwork, Roth 2014, Fact 3.7) and the Laplace CDF, evaluated in mpmath at 50 digits.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core.mechanisms.ptr import distance_for_reply, no_reply_probability, ptr
from dpcalc.core.validation import ParameterError

mpmath.mp.dps = 50
DRAWS = 100_000


def _mp_laplace_cdf(z, scale):
    """P(Lap(scale) <= z) in mpmath."""
    z, scale = mpmath.mpf(z), mpmath.mpf(scale)
    return mpmath.exp(z / scale) / 2 if z < 0 else 1 - mpmath.exp(-z / scale) / 2


@pytest.mark.parametrize("epsilon, delta, distance", [
    (1.0, 1e-6, 0.0), (1.0, 1e-6, 10.0), (1.0, 1e-6, 13.8155105579643), (0.1, 1e-9, 300.0),
    (2.0, 1e-3, 50.0), (0.01, 0.5, 3.0), (5.0, 1e-12, 1.0),
])
def test_no_reply_probability_matches_mpmath(epsilon, delta, distance):
    # reference: mpmath, 50 digits: P(d + Lap(1/eps) <= ln(1/delta)/eps)
    threshold = -mpmath.log(mpmath.mpf(delta)) / epsilon
    expected = _mp_laplace_cdf(threshold - distance, 1 / mpmath.mpf(epsilon))
    no_reply, reply = no_reply_probability(distance, epsilon, delta)
    assert no_reply == pytest.approx(float(expected), rel=1e-12)
    assert reply == pytest.approx(float(1 - expected), rel=1e-12)


def test_unstable_data_replies_with_probability_half_delta():
    # exact: at distance 0, P(reply) = P(Lap(1/eps) > ln(1/delta)/eps) = delta / 2
    for delta in (1e-3, 1e-6, 1e-12):
        assert no_reply_probability(0.0, 0.7, delta)[1] == pytest.approx(delta / 2, rel=1e-14)


@pytest.mark.parametrize("p", [1e-9, 0.1, 0.5, 0.9, 0.999999])
def test_distance_for_reply_matches_mpmath(p):
    # reference: mpmath, 50 digits: d = T + F^-1(p), F^-1 the Lap(1/eps) quantile
    epsilon, delta = 0.5, 1e-6
    mp_p = mpmath.mpf(p)
    quantile = -mpmath.log(2 * (1 - mp_p)) / epsilon if mp_p >= 0.5 else mpmath.log(2 * mp_p) / epsilon
    expected = max(mpmath.mpf(0), -mpmath.log(mpmath.mpf(delta)) / epsilon + quantile)
    got = distance_for_reply(p, epsilon, delta)
    assert got == pytest.approx(float(expected), rel=1e-12, abs=1e-300)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.floats(1e-3, 10), st.floats(1e-12, 0.5), st.floats(1e-6, 1 - 1e-6))
def test_distance_round_trip(epsilon, delta, p):
    distance = distance_for_reply(p, epsilon, delta)
    if distance == 0.0:  # met on every dataset: at distance 0 the reply probability is delta / 2 >= p
        assert delta / 2 >= p * (1 - 1e-12)
        return
    assert no_reply_probability(distance, epsilon, delta)[1] == pytest.approx(p, rel=1e-9)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.floats(1e-3, 100), st.floats(1e-3, 100), st.floats(1e-15, 0.999))
def test_accuracy_round_trips(epsilon, bound, q):
    forward = ptr(epsilon=epsilon, delta=1e-6, bound=bound, failure_probability=q)
    assert forward.solved_for == "error"
    back = ptr(delta=1e-6, bound=bound, error=forward.error, failure_probability=q)
    assert back.epsilon == pytest.approx(epsilon, rel=1e-12)
    again = ptr(epsilon=epsilon, delta=1e-6, bound=bound, error=forward.error)
    assert again.failure_probability == pytest.approx(q, rel=1e-9)
    via_scale = ptr(scale=bound / epsilon, delta=1e-6, bound=bound, failure_probability=q)
    assert via_scale.epsilon == pytest.approx(epsilon, rel=1e-14)


def test_reference_values():
    # exact closed forms: eps = 0.5, delta = 1e-6, b = 2 -> T = ln(1e6)/0.5 = 27.6310211159285...,
    # scale 4, error at 95% = 4 ln 20 = 11.9829290942159...; total epsilon 1
    result = ptr(epsilon=0.5, delta=1e-6, bound=2.0, failure_probability=0.05)
    assert result.threshold == pytest.approx(float(2 * mpmath.log(10**6)), rel=1e-15)
    assert result.error == pytest.approx(float(4 * mpmath.log(20)), rel=1e-15)
    assert (result.total_epsilon, result.scale, result.test_scale) == (1.0, 4.0, 2.0)
    assert result.std == pytest.approx(4 * math.sqrt(2), rel=1e-15)


@pytest.mark.parametrize("kwargs, name", [
    ({"epsilon": 1.0, "delta": 0.0}, "delta"),
    ({"epsilon": 1.0, "delta": 1e-6, "bound": 0.0}, "bound"),
    ({"epsilon": 1.0, "scale": 1.0, "delta": 1e-6}, "scale"),
    ({"delta": 1e-6, "error": 1.0}, "epsilon"),
    ({"epsilon": 1.0, "delta": 1e-6, "error": 1.0, "failure_probability": 0.1}, "error"),
    ({"epsilon": 1.0, "delta": 1e-6, "failure_probability": 0.0}, "failure_probability"),
    ({"epsilon": 1.0, "delta": 1e-6, "distance": -1.0}, "distance"),
    ({"epsilon": 1.0, "delta": 1e-6, "reply_probability": 1.0}, "reply_probability"),
])
def test_bad_parameters(kwargs, name):
    with pytest.raises(ParameterError) as raised:
        ptr(**kwargs)
    assert raised.value.name == name


def _binomial_margin(p: float, n: int = DRAWS) -> float:
    """Five standard errors of a frequency with probability p over n draws, plus one draw."""
    return 5 * math.sqrt(p * (1 - p) / n) + 1 / n


def test_monte_carlo_release_accuracy_is_exact():
    rng = np.random.default_rng(20070611)
    result = ptr(epsilon=0.5, delta=1e-6, bound=2.0, failure_probability=0.05)
    noise = rng.laplace(0.0, result.scale, DRAWS)
    frequency = float(np.mean(np.abs(noise) > result.error))
    assert abs(frequency - 0.05) <= _binomial_margin(0.05)


@pytest.mark.parametrize("distance", [0.0, 20.0, 27.631021115928547, 35.0])
def test_monte_carlo_no_reply_is_exact(distance):
    rng = np.random.default_rng(2009)
    result = ptr(epsilon=0.5, delta=1e-6, bound=2.0, distance=distance)
    noisy = distance + rng.laplace(0.0, result.test_scale, DRAWS)
    frequency = float(np.mean(noisy <= result.threshold))
    assert abs(frequency - result.no_reply_probability) <= _binomial_margin(result.no_reply_probability)


def test_monte_carlo_required_distance_is_exact():
    rng = np.random.default_rng(7)
    result = ptr(epsilon=0.5, delta=1e-6, bound=2.0, reply_probability=0.99)
    noisy = result.required_distance + rng.laplace(0.0, result.test_scale, DRAWS)
    frequency = float(np.mean(noisy > result.threshold))
    assert abs(frequency - 0.99) <= _binomial_margin(0.99)
    # at the whole number of records it needs, the reply probability is at least the target
    assert no_reply_probability(result.required_records, 0.5, 1e-6)[1] >= 0.99
