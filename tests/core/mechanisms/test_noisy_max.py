"""Report noisy max (docs/mathematics.md, "Mechanisms: noisy-max"): the worst-case failure
probabilities against mpmath (closed forms and the integrals they come from), the inverses as
round trips, and Monte Carlo checks (exact claims must match, the union bound must hold)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core.mechanisms.noisy_max import NOISES, gap_for, log_beta, noisy_max_accuracy
from dpcalc.core.validation import ParameterError

# log beta is a few elementary operations (the exponential noise's series a few dozen): 1e-12
# relative leaves room above float64's ~1e-15.
RTOL = 1e-12
DRAWS = 100_000


def mp_beta(noise, x, m):
    """The worst-case failure probability in mpmath, with digits enough for the cancellation of
    the exponential noise's ((1 - a)^m - 1 + m a) / (m a) at a = e^-x."""
    digits = 40 + int(2 * x / math.log(10)) + 2 * len(str(m))
    with mp.workdps(digits):
        x = mp.mpf(x)
        a = mp.exp(-x)
        if noise == "gumbel":
            return (m - 1) * a / (1 + (m - 1) * a)
        if noise == "laplace":
            return mp.mpf(m - 1) * (2 + x) * a / 4
        return ((1 - a) ** m - 1 + m * a) / (m * a)


@pytest.mark.parametrize("m, x", [(2, 0.5), (10, 3.0), (1000, 12.0), (3, 1e-3)])
def test_exponential_noise_closed_form_is_the_integral(m, x):
    # P(correct) = E[(1 - e^-(X_1 + x))^(m-1)], X_1 ~ Exp(1), integrated by mpmath (30 digits)
    with mp.workdps(30):
        correct = mp.quad(lambda s: mp.exp(-s) * (1 - mp.exp(-(s + x))) ** (m - 1), [0, 1, 10, mp.inf])
        assert math.exp(log_beta("exponential", x, m)) == pytest.approx(float(1 - correct), rel=1e-12)


@pytest.mark.parametrize("m, x", [(2, 0.5), (10, 3.0), (1000, 12.0)])
def test_gumbel_closed_form_is_the_integral(m, x):
    # P(correct) = int f(z) F(z + x)^(m-1) dz with the standard Gumbel density f and CDF F;
    # with v = e^-z (f(z) dz = e^-v dv, F(z + x) = exp(-v e^-x)) an integral over v in (0, inf)
    with mp.workdps(30):
        correct = mp.quad(lambda v: mp.exp(-v) * mp.exp(-(m - 1) * v * mp.exp(-x)), [0, 1, 10, mp.inf])
        assert math.exp(log_beta("gumbel", x, m)) == pytest.approx(float(1 - correct), rel=1e-12)


@pytest.mark.parametrize("x", [0.0, 0.7, 5.0, 30.0])
def test_laplace_pair_tail_is_the_integral(x):
    # the difference of two Lap(1) has density (1 + |z|) e^-|z| / 4: its tail beyond x is (2 + x) e^-x / 4
    with mp.workdps(30):
        tail = mp.quad(lambda z: (1 + z) * mp.exp(-z) / 4, [x, x + 10, mp.inf])
        assert math.exp(log_beta("laplace", x, 2)) == pytest.approx(float(tail), rel=1e-12)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(noise=st.sampled_from(NOISES), x=st.floats(0.0, 700.0), m=st.integers(2, 10**12))
def test_log_beta_matches_mpmath(noise, x, m):
    reference = mp_beta(noise, x, m)
    expected = min(reference, 1) if noise == "laplace" else reference
    assert log_beta(noise, x, m) == pytest.approx(float(mp.log(expected)), rel=RTOL, abs=RTOL)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(noise=st.sampled_from(NOISES), beta=st.floats(1e-300, 0.999), m=st.integers(2, 10**12))
def test_gap_round_trip(noise, beta, m):
    x = gap_for(noise, beta, m)
    if x == 0.0:  # equal scores already fail with probability at most beta
        assert log_beta(noise, 0.0, m) <= math.log(beta)
        return
    assert log_beta(noise, x, m) == pytest.approx(math.log(beta), rel=RTOL, abs=RTOL)
    if noise == "exponential":  # the bisection returns the sufficient end
        assert log_beta(noise, x, m) <= math.log(beta)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(noise=st.sampled_from(NOISES), epsilon=st.floats(1e-3, 1e3), beta=st.floats(1e-100, 0.3),
       m=st.integers(2, 10**6), monotone=st.booleans(), sensitivity=st.floats(0.01, 100.0))
def test_three_directions_round_trip(noise, epsilon, beta, m, monotone, sensitivity):
    common = {"noise": noise, "candidates": m, "sensitivity": sensitivity, "monotone": monotone}
    forward = noisy_max_accuracy(epsilon=epsilon, beta=beta, **common)
    if forward.gap == 0.0:
        return
    back = noisy_max_accuracy(gap=forward.gap, beta=beta, **common)
    assert back.epsilon == pytest.approx(epsilon, rel=1e-11)
    again = noisy_max_accuracy(scale=forward.scale, gap=forward.gap, **common)
    assert again.epsilon == pytest.approx(epsilon, rel=1e-14)
    assert again.beta == pytest.approx(beta, rel=1e-10)


def test_scales_and_sources():
    # DR Claim 3.9: Lap(1/eps) for counts; 2 Delta / eps in general
    assert noisy_max_accuracy(noise="laplace", candidates=5, epsilon=0.5, beta=0.1, monotone=True).scale == 2.0
    assert noisy_max_accuracy(noise="laplace", candidates=5, epsilon=0.5, beta=0.1, sensitivity=3.0).scale == 12.0
    gumbel = noisy_max_accuracy(noise="gumbel", candidates=5, epsilon=0.5, beta=0.1)
    assert "Thm 3.10" in gumbel.source and gumbel.exact
    assert "McKenna and Sheldon 2020" in noisy_max_accuracy(noise="exponential", candidates=5, epsilon=1,
                                                            beta=0.1).source
    assert not noisy_max_accuracy(noise="laplace", candidates=5, epsilon=1, beta=0.1).exact


def test_gumbel_gap_closed_form():
    # beta = (m-1) e^-x / (1 + (m-1) e^-x) at m = 10, beta = 0.05: x = ln 9 + ln 19 = ln 171
    assert gap_for("gumbel", 0.05, 10) == pytest.approx(math.log(171), rel=1e-15)


@pytest.mark.parametrize("kwargs, name", [
    ({"noise": "laplace", "candidates": 1, "epsilon": 1, "beta": 0.1}, "candidates"),
    ({"noise": "cauchy", "candidates": 3, "epsilon": 1, "beta": 0.1}, "noise"),
    ({"noise": "laplace", "candidates": 3, "epsilon": 1, "scale": 1, "beta": 0.1}, "epsilon, scale"),
    ({"noise": "laplace", "candidates": 3, "gap": 1.0}, "privacy (epsilon or scale), gap, beta"),
    ({"noise": "gumbel", "candidates": 3, "gap": 1.0, "beta": 0.9}, "beta"),
    ({"noise": "gumbel", "candidates": 3, "gap": 0.0, "beta": 0.1}, "gap"),
    ({"noise": "gumbel", "candidates": 3, "gap": -1.0, "beta": 0.1}, "gap"),
])
def test_bad_arguments(kwargs, name):
    with pytest.raises(ParameterError) as error:
        noisy_max_accuracy(**kwargs)
    assert error.value.name == name


def _noise(rng, noise, scale, shape):
    if noise == "laplace":
        return rng.laplace(0.0, scale, shape)
    if noise == "gumbel":
        return rng.gumbel(0.0, scale, shape)
    return rng.exponential(scale, shape)


@pytest.mark.parametrize("noise", NOISES)
@pytest.mark.parametrize("m, beta", [(2, 0.2), (10, 0.05), pytest.param(100, 0.1, marks=pytest.mark.slow)])
def test_monte_carlo(noise, m, beta):
    # The worst case: the top score exactly gap above the m - 1 others. Exact claims (gumbel,
    # exponential; laplace at m = 2) must match within 4.5 standard errors; the union bound
    # (laplace, m > 2) must not be exceeded beyond them.
    rng = np.random.default_rng(7 + m)
    result = noisy_max_accuracy(noise=noise, candidates=m, epsilon=1.0, beta=beta, sensitivity=1.5)
    scores = np.zeros(m)
    scores[0] = result.gap
    noisy = scores + _noise(rng, noise, result.scale, (DRAWS, m))
    failure = np.mean(np.argmax(noisy, axis=1) != 0)
    slack = 4.5 * math.sqrt(beta * (1 - beta) / DRAWS)
    if result.exact or m == 2:
        assert abs(failure - beta) <= slack
    else:
        assert failure <= beta + slack


@pytest.mark.parametrize("noise", NOISES)
def test_monte_carlo_random_scores(noise):
    # any scores with the top one gap above all others: the claim (worst case) must hold
    rng = np.random.default_rng(99)
    m, beta = 20, 0.1
    result = noisy_max_accuracy(noise=noise, candidates=m, epsilon=0.7, beta=beta)
    scores = rng.uniform(-3 * result.gap, 0.0, size=m)
    scores[0] = 0.0
    scores[1] = -result.gap
    scores[0] = scores[1:].max() + result.gap
    noisy = scores + _noise(rng, noise, result.scale, (DRAWS, m))
    assert np.mean(np.argmax(noisy, axis=1) != 0) <= beta + 4.5 * math.sqrt(beta * (1 - beta) / DRAWS)


def test_gumbel_noise_is_the_exponential_mechanism():
    # the Gumbel-max identity: argmax(u + Gumbel(b)) has law proportional to exp(u / b)
    rng = np.random.default_rng(3)
    scores = np.array([0.0, -0.5, -1.0, -2.0, -4.0])
    b = 0.8
    counts = np.bincount(np.argmax(scores + rng.gumbel(0.0, b, (DRAWS, 5)), axis=1), minlength=5)
    law = np.exp(scores / b) / np.exp(scores / b).sum()
    standard_errors = np.sqrt(law * (1 - law) / DRAWS)
    assert np.all(np.abs(counts / DRAWS - law) <= 4.5 * standard_errors)
