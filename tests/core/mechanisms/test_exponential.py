"""The exponential mechanism's utility bound (docs/mathematics.md, "Mechanisms: exponential"):
mpmath references, round trips, and a Monte Carlo check of the bound."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core.mechanisms.exponential import exponential_accuracy
from dpcalc.core.validation import ParameterError

MP_DIGITS = 50
# alpha, eps and log beta are each a few float operations of the closed form: ~1e-15 relative.
RTOL = 1e-12
DRAWS = 100_000


def mp_alpha(epsilon, beta, sensitivity, outcomes, monotone):
    """DR Thm 3.11: alpha = (c Delta / eps)(ln|R| + ln(1/beta)), c = 2 (1 for a monotone utility), in mpmath."""
    with mp.workdps(MP_DIGITS):
        factor = 1 if monotone else 2
        return factor * mp.mpf(sensitivity) / mp.mpf(epsilon) * (mp.log(outcomes) - mp.log(mp.mpf(beta)))


def test_dwork_roth_example_values():
    # closed form: eps 1, |R| 1000, beta 0.05: alpha = 2 (ln 1000 + ln 20) = 2 ln 20000 = 19.8069758...
    result = exponential_accuracy(epsilon=1.0, beta=0.05, outcomes=1000)
    assert result.alpha == pytest.approx(2 * math.log(20000), rel=1e-15)
    assert result.solved_for == "alpha" and result.sampling == "exp(eps u / (2 Delta))"
    monotone = exponential_accuracy(epsilon=1.0, beta=0.05, outcomes=1000, monotone=True)
    assert monotone.alpha == pytest.approx(math.log(20000), rel=1e-15)
    assert monotone.sampling == "exp(eps u / Delta)" and "monotone" in monotone.source


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    epsilon=st.floats(1e-6, 1e4),
    beta=st.floats(1e-300, 0.999),
    sensitivity=st.floats(1e-3, 1e3),
    outcomes=st.integers(1, 10**200),
    monotone=st.booleans(),
)
def test_alpha_matches_mpmath(epsilon, beta, sensitivity, outcomes, monotone):
    result = exponential_accuracy(epsilon=epsilon, beta=beta, sensitivity=sensitivity, outcomes=outcomes,
                                  monotone=monotone)
    assert result.alpha == pytest.approx(float(mp_alpha(epsilon, beta, sensitivity, outcomes, monotone)), rel=RTOL)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    epsilon=st.floats(1e-6, 1e4),
    beta=st.floats(1e-300, 0.999),
    sensitivity=st.floats(1e-3, 1e3),
    outcomes=st.integers(1, 10**200),
    monotone=st.booleans(),
)
def test_round_trips(epsilon, beta, sensitivity, outcomes, monotone):
    common = {"sensitivity": sensitivity, "outcomes": outcomes, "monotone": monotone}
    alpha = exponential_accuracy(epsilon=epsilon, beta=beta, **common).alpha
    back = exponential_accuracy(alpha=alpha, beta=beta, **common)
    assert back.epsilon == pytest.approx(epsilon, rel=RTOL) and back.solved_for == "epsilon"
    again = exponential_accuracy(epsilon=epsilon, alpha=alpha, **common)
    # log beta = ln|R| - eps alpha / (c Delta): relative error of beta ~ the absolute error of its log
    assert math.log(again.beta) == pytest.approx(math.log(beta), rel=RTOL, abs=1e-12 * abs(math.log(outcomes)) + 1e-12)


def test_vacuous_bound_reports_one():
    # alpha below (2 Delta / eps) ln|R| = 2 ln 10: the bound says nothing
    result = exponential_accuracy(epsilon=1.0, alpha=2.0, outcomes=10)
    assert result.beta == 1.0 and "vacuous" in result.warnings[0]


def test_tiny_beta_is_never_zero():
    result = exponential_accuracy(epsilon=1.0, alpha=5000.0, outcomes=10)
    assert result.beta > 0.0


@pytest.mark.parametrize("kwargs, name", [
    ({"alpha": 1.0, "outcomes": 10}, "epsilon, alpha, beta"),
    ({"epsilon": 0.0, "beta": 0.1, "outcomes": 10}, "epsilon"),
    ({"epsilon": 1.0, "beta": 1.0, "outcomes": 10}, "beta"),
    ({"alpha": -1.0, "beta": 0.5, "outcomes": 10}, "alpha"),
    ({"epsilon": 1.0, "beta": 0.5, "outcomes": 0}, "outcomes"),
    ({"epsilon": 1.0, "beta": 0.5, "outcomes": 10, "sensitivity": 0.0}, "sensitivity"),
])
def test_bad_arguments(kwargs, name):
    with pytest.raises(ParameterError) as error:
        exponential_accuracy(**kwargs)
    assert error.value.name == name


def _sample_exponential_mechanism(rng, utilities, epsilon, sensitivity, monotone, draws):
    """Draw outputs with probability proportional to exp(eps u / (c Delta)) (the sampling rule of the bound)."""
    factor = 1.0 if monotone else 2.0
    logits = epsilon * utilities / (factor * sensitivity)
    weights = np.exp(logits - logits.max())
    return rng.choice(len(utilities), size=draws, p=weights / weights.sum())


@pytest.mark.parametrize("monotone", [False, True])
@pytest.mark.parametrize("outcomes, epsilon, beta", [(2, 1.0, 0.1), (50, 0.5, 0.05), (1000, 2.0, 0.2)])
def test_monte_carlo_bound_holds(monotone, outcomes, epsilon, beta):
    # Worst case for the bound: one optimal output (utility 0) and |R| - 1 outputs exactly alpha
    # below it (u <= OPT - alpha counts as a failure); plus a random instance. The bound is an
    # upper bound: the observed failure rate must not exceed beta beyond 4.5 standard errors.
    rng = np.random.default_rng(20260101 + outcomes)
    sensitivity = 2.0
    result = exponential_accuracy(epsilon=epsilon, beta=beta, sensitivity=sensitivity, outcomes=outcomes,
                                  monotone=monotone)
    slack = 4.5 * math.sqrt(beta * (1 - beta) / DRAWS)
    worst = np.full(outcomes, -result.alpha)
    worst[0] = 0.0
    drawn = _sample_exponential_mechanism(rng, worst, epsilon, sensitivity, monotone, DRAWS)
    assert np.mean(worst[drawn] <= -result.alpha) <= beta + slack
    spread = rng.uniform(-3 * result.alpha, 0.0, size=outcomes)
    drawn = _sample_exponential_mechanism(rng, spread, epsilon, sensitivity, monotone, DRAWS)
    assert np.mean(spread[drawn] <= spread.max() - result.alpha) <= beta + slack
