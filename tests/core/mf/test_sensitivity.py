"""The sensitivity of a strategy matrix under k participations at least s apart.

Oracle: the brute force of tests/core/mf/oracle.py over every participation pattern (n <= 12
steps). A figure labelled exact must equal the lower bracket (attained by scalar contributions)
to 1e-9 relative (the outward rounding is ~1e-12); an upper bound must be at least the upper
bracket (the largest sum of |C^T C| over a pattern, which every bound here dominates), hence at
least the sensitivity.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core.mf import sensitivity as sensitivity_module
from dpcalc.core.mf.participation import Participation
from dpcalc.core.mf.sensitivity import sensitivity
from dpcalc.core.mf.strategy import strategy_matrix, toeplitz_strategy
from tests.core.mf.oracle import brackets

RTOL = 1e-9  # the outward rounding adds ~1e-12 relative; the rest is float summation order


def _schemas(n: int):
    for s in range(1, n + 1):
        for k in range(1, (n - 1) // s + 2):
            yield k, s


def _random_matrix(rng: np.random.Generator, n: int, kind: str) -> np.ndarray:
    if kind == "nonnegative":
        return np.tril(rng.random((n, n)))
    if kind == "sparse":
        return np.tril(rng.random((n, n)) * (rng.random((n, n)) < 0.4)) + np.diag(rng.random(n))
    return np.tril(rng.normal(size=(n, n)))


def _check(matrix: np.ndarray, k: int, s: int):
    result = sensitivity(strategy_matrix(matrix), Participation(k, s, matrix.shape[0]))
    lower, upper = brackets(matrix, k, s)
    if result.exact:
        assert result.value == pytest.approx(math.sqrt(lower), rel=RTOL), (result, lower, upper)
        assert lower == pytest.approx(upper, rel=RTOL)
        assert result.value >= math.sqrt(lower)  # rounded outward
    else:
        assert result.value >= math.sqrt(upper) * (1 - 1e-15), (result, upper)
    return result


@pytest.mark.parametrize("kind", ["nonnegative", "sparse", "signed"])
def test_brute_force_over_every_pattern(kind):
    rng = np.random.default_rng(["nonnegative", "sparse", "signed"].index(kind))
    methods = set()
    for n in (1, 2, 3, 5, 7):
        for k, s in _schemas(n):
            methods.add(_check(_random_matrix(rng, n, kind), k, s).method)
    assert "enumeration" in methods and "single participation" in methods


@pytest.mark.slow
def test_brute_force_twelve_steps():
    rng = np.random.default_rng(12)
    matrix = np.tril(rng.random((12, 12)))
    for k, s in ((2, 1), (3, 2), (4, 3), (6, 2), (12, 1)):
        _check(matrix, k, s)


@pytest.mark.slow
def test_relaxation_bounds_every_pattern(monkeypatch):
    # with enumeration switched off, the row relaxation and the majorant answer; both are bounds
    monkeypatch.setattr(sensitivity_module, "ENUMERATION_LIMIT", 0)
    rng = np.random.default_rng(3)
    seen = set()
    for kind in ("nonnegative", "signed"):
        for n in (4, 6, 8):
            for k, s in _schemas(n):
                seen.add(_check(_random_matrix(rng, n, kind), k, s).method)
    monkeypatch.setattr(sensitivity_module, "RELAXATION_LIMIT", 0)  # each row's k largest entries instead
    for k, s in _schemas(8):
        seen.add(_check(_random_matrix(rng, 8, "signed"), k, s).method)
    assert "relaxation" in seen


def test_greedy_pattern_on_a_monotone_gram_matrix():
    # a dense Toeplitz C with decreasing positive coefficients has a monotone, nonnegative C^T C
    for n in (6, 9, 11):
        matrix = toeplitz_strategy(np.linspace(1.0, 0.05, n), n).dense()
        for k, s in ((2, 1), (3, 2), (3, 4), (4, 1)):
            if (k - 1) * s < n:
                result = _check(matrix, k, s)
                assert result.method == "greedy pattern" and result.pattern == tuple(range(0, k * s, s))


def test_banded_strategy_has_orthogonal_columns():
    rng = np.random.default_rng(7)
    matrix = np.tril(rng.normal(size=(10, 10))) * (np.subtract.outer(np.arange(10), np.arange(10)) < 3)
    for k, s in ((2, 3), (3, 4), (4, 3)):
        result = _check(matrix, k, s)
        assert result.method == "orthogonal columns" and result.exact


def test_toeplitz_coefficients_agree_with_the_dense_matrix():
    rng = np.random.default_rng(5)
    for coefficients in (np.linspace(1, 0.1, 7), np.array([1.0, 0.6, 0.3]), rng.normal(size=6), -rng.random(9)):
        for k, s in ((2, 1), (3, 3), (4, 2)):
            strategy = toeplitz_strategy(coefficients, 9)
            from_coefficients = sensitivity(strategy, Participation(k, s, 9))
            lower, upper = brackets(strategy.dense(), k, s)
            if from_coefficients.exact:
                assert from_coefficients.value == pytest.approx(math.sqrt(lower), rel=RTOL)
            else:
                assert from_coefficients.value >= math.sqrt(upper)


def test_large_toeplitz_without_a_structured_formula_is_an_upper_bound():
    coefficients = np.array([1.0, -0.5, 0.25, 0.125])
    result = sensitivity(toeplitz_strategy(coefficients, 5000), Participation(3, 2, 5000))
    assert not result.exact and result.figure == "upper bound" and result.method == "toeplitz majorant"
    # the majorant's coefficients are 1, 0.5, 0.25, 0.125 (nonnegative, non-increasing): its greedy value
    exact_majorant = sensitivity(toeplitz_strategy(np.abs(coefficients), 5000), Participation(3, 2, 5000))
    assert result.value == pytest.approx(exact_majorant.value, rel=RTOL)


# jax_privacy at commit 8967688c26d46f3b74bfdfe61ef1f984b887abab (google-deepmind/jax_privacy):
# tests/matrix_factorization/toeplitz_test.py cases evaluated with
# jax_privacy/matrix_factorization/toeplitz.py:minsep_sensitivity_squared (exact for nonnegative,
# non-increasing coefficients); (coefficients, n, min_sep, max_participations, sensitivity^2).
JAX_TOEPLITZ = [
    ([1.0], 11, 1, 4, 4.0),  # test_sensitivity_squared_identity
    ([1.0] * 5, 5, 1, 4, 46.0),  # test_sensitivity_squared_tri: sum of the squared row sums of C[:, :4]
    (np.linspace(1, 0.001, 2), 10, 2, 5, 5.000005000000001),  # test_sensitivity_squared_fixed_epoch
    (np.linspace(1, 0.001, 10), 10, 5, 2, 8.652474999999999),  # test_sensitivity_squared_fixed_epoch
    (np.sqrt(np.linspace(1, 0.001, 50)), 50, 1, 5, 603.8934238603916),  # test_sensitivity_squared_min_sep_one
    ([1.0, 0.5, 0.2], 3, 1, 3, 6.14),  # NAMED_C_MATRIX_PARAMS 'n=len(coef)'
]


@pytest.mark.parametrize(("coefficients", "n", "s", "k", "squared"), JAX_TOEPLITZ)
def test_jax_privacy_toeplitz_sensitivities(coefficients, n, s, k, squared):
    for strategy in (toeplitz_strategy(coefficients, n), strategy_matrix(toeplitz_strategy(coefficients, n).dense())):
        result = sensitivity(strategy, Participation(k, s, n))
        assert result.exact
        assert result.value**2 == pytest.approx(squared, rel=RTOL)


def test_jax_privacy_banded_cases():
    # jax_privacy 8967688c, tests/matrix_factorization/sensitivity_test.py: test_banded and
    # test_diag_strategy_matrix (max_participations None: as many as fit)
    banded = np.array([[1.0, 0, 0, 0], [2, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, -6]])
    assert sensitivity(strategy_matrix(banded), Participation(1, 2, 4)).value == pytest.approx(6.0, rel=RTOL)
    for s in (2, 3):
        assert sensitivity(strategy_matrix(banded), Participation(2, s, 4)).value == pytest.approx(math.sqrt(41), rel=RTOL)
    diagonal = np.diag([0.0, 3.0, 0.0, 1.0, 2.0])
    assert sensitivity(strategy_matrix(diagonal), Participation(3, 2, 5)).value == pytest.approx(math.sqrt(13), rel=RTOL)
    assert sensitivity(strategy_matrix(diagonal), Participation(1, 2, 5)).value == pytest.approx(3.0, rel=RTOL)


def test_identity():
    for n, k, s in ((1, 1, 1), (10, 1, 3), (10, 4, 3), (100, 100, 1)):
        result = sensitivity(strategy_matrix(np.eye(n)), Participation(k, s, n))
        assert result.exact and result.value == pytest.approx(math.sqrt(k), rel=1e-11)  # the outward rounding
        assert result.value >= math.sqrt(k)


def test_result_names_its_parts():
    result = sensitivity(toeplitz_strategy([1.0, 0.5], 20), Participation(3, 2, 20))
    assert result.factorisation == "banded Toeplitz strategy matrix C (20 x 20, 2 bands)"
    assert result.participation == "at most 3 participations at least 2 steps apart, in 20 steps"
    assert "arXiv 2306.08153" in result.theorem and result.figure == "exact"


def test_schema_and_strategy_must_agree_on_steps():
    with pytest.raises(ValueError, match="has steps = 5 steps but the strategy matrix has 4"):
        sensitivity(strategy_matrix(np.eye(4)), Participation(1, 1, 5))


small_nonnegative = st.integers(1, 7).flatmap(lambda n: st.tuples(
    st.just(n), st.integers(1, n), st.integers(0, 2**32 - 1)))


@settings(max_examples=40)
@given(small_nonnegative)
def test_monotone_in_participations(case):
    # exact figures (nonnegative C^T C) are the sensitivity itself, which grows with k
    n, s, seed = case
    matrix = np.tril(np.random.default_rng(seed).random((n, n)))
    values = [sensitivity(strategy_matrix(matrix), Participation(k, s, n)) for k in range(1, (n - 1) // s + 2)]
    assert all(result.exact for result in values)
    assert all(b.value >= a.value * (1 - RTOL) for a, b in zip(values, values[1:]))


@settings(max_examples=40)
@given(small_nonnegative, st.floats(1e-3, 1e3), st.sampled_from(["nonnegative", "signed"]))
def test_linear_in_the_strategy(case, factor, kind):
    n, s, seed = case
    matrix = _random_matrix(np.random.default_rng(seed), n, kind)
    k = (n - 1) // s + 1
    base = sensitivity(strategy_matrix(matrix), Participation(k, s, n))
    for scaled in (factor * matrix, -factor * matrix):
        result = sensitivity(strategy_matrix(scaled), Participation(k, s, n))
        assert result.value == pytest.approx(factor * base.value, rel=RTOL)
        assert result.exact == base.exact
