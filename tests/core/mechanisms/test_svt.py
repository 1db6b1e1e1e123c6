"""The sparse vector technique (docs/mathematics.md, "Mechanisms: svt"): Dwork and Roth's
constants against mpmath, round trips, and a Monte Carlo check of the accuracy bound."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core.mechanisms.svt import svt_accuracy
from dpcalc.core.validation import ParameterError

RTOL = 1e-12  # a few float operations of the closed form: ~1e-15 relative
DRAWS = 100_000


def mp_alpha(epsilon, beta, queries, answers, sensitivity):
    """DR Thm 3.24 (c = 1) and 3.26 (delta = 0): alpha = 8 c Delta (ln k + ln(2c / beta)) / eps, in mpmath."""
    with mp.workdps(50):
        return (8 * answers * mp.mpf(sensitivity) * (mp.log(queries) + mp.log(2 * answers) - mp.log(mp.mpf(beta)))
                / mp.mpf(epsilon))


def test_dwork_roth_constants():
    # AboveThreshold, k = 1000, eps = 1, beta = 0.05: alpha = 8 (ln 1000 + ln 40) = 8 ln 40000
    above = svt_accuracy(queries=1000, epsilon=1.0, beta=0.05)
    assert above.alpha == pytest.approx(8 * math.log(40000), rel=1e-15)
    assert above.threshold_scale == 2.0 and above.query_scale == 4.0
    assert above.algorithm == "AboveThreshold" and "Thm 3.24" in above.source and "Thm 3.23" in above.source
    # Sparse, c = 10: alpha = 80 (ln 1000 + ln 400) = 80 ln 400000; scales 2c/eps, 4c/eps
    sparse = svt_accuracy(queries=1000, answers=10, epsilon=1.0, beta=0.05)
    assert sparse.alpha == pytest.approx(80 * math.log(400000), rel=1e-15)
    assert sparse.threshold_scale == 20.0 and sparse.query_scale == 40.0
    assert "Thm 3.26" in sparse.source and "Thm 3.25" in sparse.source


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(epsilon=st.floats(1e-6, 1e4), beta=st.floats(1e-300, 0.999), queries=st.integers(1, 10**15),
       answers=st.integers(1, 1000), sensitivity=st.floats(1e-3, 1e3))
def test_matches_mpmath_and_round_trips(epsilon, beta, queries, answers, sensitivity):
    answers = min(answers, queries)
    common = {"queries": queries, "answers": answers, "sensitivity": sensitivity}
    alpha = svt_accuracy(epsilon=epsilon, beta=beta, **common).alpha
    assert alpha == pytest.approx(float(mp_alpha(epsilon, beta, queries, answers, sensitivity)), rel=RTOL)
    assert svt_accuracy(alpha=alpha, beta=beta, **common).epsilon == pytest.approx(epsilon, rel=RTOL)
    again = svt_accuracy(epsilon=epsilon, alpha=alpha, **common)
    log_terms = math.log(queries) + math.log(2 * answers)
    assert math.log(again.beta) == pytest.approx(math.log(beta), abs=1e-12 * (log_terms - math.log(beta)))


def test_vacuous_bound_reports_one():
    result = svt_accuracy(queries=10, epsilon=1.0, alpha=1.0)
    assert result.beta == 1.0 and "vacuous" in result.warnings[0]


@pytest.mark.parametrize("kwargs, name", [
    ({"queries": 10, "answers": 11, "epsilon": 1.0, "beta": 0.1}, "answers"),
    ({"queries": 0, "epsilon": 1.0, "beta": 0.1}, "queries"),
    ({"queries": 10, "beta": 0.1}, "epsilon, alpha, beta"),
    ({"queries": 10, "epsilon": -1.0, "beta": 0.1}, "epsilon"),
    ({"queries": 10, "alpha": 0.0, "beta": 0.1}, "alpha"),
    ({"queries": 10, "epsilon": 1.0, "beta": 0.0}, "beta"),
])
def test_bad_arguments(kwargs, name):
    with pytest.raises(ParameterError) as error:
        svt_accuracy(**kwargs)
    assert error.value.name == name


def simulate_sparse(rng, values, threshold, epsilon, answers, sensitivity, alpha, draws):
    """Run DR's Sparse (Algorithm 2, delta = 0; Algorithm 1 when answers = 1) `draws` times on the
    query values, and return the fraction of runs with an answer off by more than alpha (a
    positive answer to a query below T - alpha, a negative one to a query above T + alpha)."""
    sigma = 2.0 * answers * sensitivity / epsilon
    noisy_threshold = threshold + rng.laplace(0.0, sigma, draws)
    count = np.zeros(draws, dtype=int)
    failed = np.zeros(draws, dtype=bool)
    for value in values:
        active = count < answers
        above = active & (value + rng.laplace(0.0, 2.0 * sigma, draws) >= noisy_threshold)
        below = active & ~above
        if value < threshold - alpha:
            failed |= above
        if value > threshold + alpha:
            failed |= below
        count += above
        noisy_threshold = np.where(above, threshold + rng.laplace(0.0, sigma, draws), noisy_threshold)
    return float(np.mean(failed))


@pytest.mark.parametrize("queries, answers, epsilon, beta", [(20, 1, 1.0, 0.05), pytest.param(50, 1, 0.3, 0.2, marks=pytest.mark.slow),
                                                              pytest.param(30, 3, 1.0, 0.1, marks=pytest.mark.slow), pytest.param(40, 5, 2.0, 0.05, marks=pytest.mark.slow)])
def test_monte_carlo_bound_holds(queries, answers, epsilon, beta):
    # At most c queries at or above T - alpha (the theorems' condition): c queries just above
    # T + alpha, spread out, the rest just below T - alpha, where any answer the other way is an
    # error. The bound is an upper bound: the failure rate must not exceed beta beyond 4.5 standard errors.
    rng = np.random.default_rng(1000 + queries + answers)
    sensitivity, threshold = 2.0, 10.0
    result = svt_accuracy(queries=queries, answers=answers, epsilon=epsilon, beta=beta, sensitivity=sensitivity)
    high = threshold + result.alpha * (1 + 1e-9)
    low = threshold - result.alpha * (1 + 1e-9)
    positions = set(np.linspace(queries - 1, queries // 3, answers).astype(int).tolist())
    values = [high if i in positions else low for i in range(queries)]
    failure = simulate_sparse(rng, values, threshold, epsilon, answers, sensitivity, result.alpha, DRAWS)
    assert failure <= beta + 4.5 * math.sqrt(beta * (1 - beta) / DRAWS)
    # the simulation does see failures: at an eighth of the error bound most runs fail somewhere
    tight = [threshold + (1 if v == high else -1) * result.alpha / 8 * (1 + 1e-9) for v in values]
    assert simulate_sparse(rng, tight, threshold, epsilon, answers, sensitivity, result.alpha / 8, 2000) > beta
