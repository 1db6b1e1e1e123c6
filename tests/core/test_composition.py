"""Composition core: the public reference values (docs/reference-values.md), the exact KOV optimum
against mpmath and dp_accounting, heterogeneous lists against brute force, the inverse questions,
and properties."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import mpmath as mp
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dpcalc.core import composition as core
from dpcalc.core.composition import (
    advanced_composition,
    basic_composition,
    compose,
    compose_heterogeneous,
    heterogeneous,
    log_binomial_pmf,
    max_compositions,
    max_epsilon_per_mechanism,
    optimal,
    optimal_delta,
    optimal_epsilon,
    simplified_composition,
)
from dpcalc.core.validation import ParameterError
from tests.slow import slow_cases

MP_DIGITS = 50

# The issue's accuracy target against mpmath; the implementation is within ~5e-13 relative
# before its deliberate 4e-12 upward rounding margin.
RTOL = 1e-9


# ---------------------------------------------------------------------------------------------
# mpmath references, written from KOV Thm 3.3 (docs/mathematics.md §5), independent of the segment walk


def mp_rr_delta(epsilon_total, epsilon, k, first=0):
    """delta_RR(eps_g) = sum_l C(k,l) p^(k-l) q^l (1 - e^(eps_g - (k-2l) eps))_+, in mpmath.

    `first` skips the l below it (a window for large k: they are below 1e-700 there).
    """
    with mp.workdps(MP_DIGITS):
        eg, eps = mp.mpf(epsilon_total), mp.mpf(epsilon)
        q = 1 / (1 + mp.exp(eps))
        p = 1 - q
        term = mp.exp(mp.loggamma(k + 1) - mp.loggamma(first + 1) - mp.loggamma(k - first + 1)
                      + (k - first) * mp.log(p) + first * mp.log(q))
        total = mp.mpf(0)
        ratio = q / p
        for l in range(first, k + 1):
            loss = (k - 2 * l) * eps
            if loss <= eg:
                break
            total += term * -mp.expm1(eg - loss)
            term *= ratio * (k - l) / (l + 1)
        return total


def mp_total_delta(epsilon_total, epsilon, delta, k, first=0):
    """1 - (1 - delta)^k (1 - delta_RR(eps_g)) (KOV Thm 3.3), in mpmath."""
    with mp.workdps(MP_DIGITS):
        survival = mp.exp(k * mp.log1p(-mp.mpf(delta)))
        return 1 - survival * (1 - mp_rr_delta(epsilon_total, epsilon, k, first))


def assert_optimal_is_tight(value, epsilon, delta, k, delta_prime, first=0):
    """value is sound (its exact delta is within the target) and within RTOL of the optimum."""
    with mp.workdps(MP_DIGITS):
        target = k * mp.mpf(delta) + mp.mpf(delta_prime)
        assert mp_total_delta(value, epsilon, delta, k, first) <= target
        if value > 0:
            assert mp_total_delta(value * (1 - RTOL), epsilon, delta, k, first) > target


# ---------------------------------------------------------------------------------------------
# Public reference values (docs/reference-values.md: 100-fold composition)


def test_spec_table():
    # reference values (docs/reference-values.md): 100-fold composition of 0.1-DP, delta' = 1e-5 ->
    # basic 10.0, advanced 5.850235, optimal 4.30679 (rounded as printed there).
    result = compose(0.1, 0.0, 100, 1e-5)
    assert result.basic == core.Bound(10.0, 0.0)
    assert result.advanced.epsilon == pytest.approx(5.850235, abs=5e-7)
    assert result.optimal.epsilon == pytest.approx(4.30679, abs=5e-6)
    assert result.advanced.delta == result.optimal.delta == 1e-5
    assert result.best == "optimal"
    assert result.simplified_valid is False and result.warnings


def test_advanced_formula():
    # DR Thm 3.20 written out.
    bound = advanced_composition(0.2, 1e-7, 50, 1e-6)
    expected = 0.2 * math.sqrt(2 * 50 * math.log(1e6)) + 50 * 0.2 * math.expm1(0.2)
    assert bound.epsilon == pytest.approx(expected, rel=1e-15)
    assert bound.delta == pytest.approx(50e-7 + 1e-6, rel=1e-15)


def test_simplified_validity():
    # Valid: eps' = 2 * 0.001 * sqrt(200 ln 1e5) = 0.096 < 1 and above the advanced epsilon.
    bound, valid = simplified_composition(0.001, 0.0, 100, 1e-5)
    assert bound.epsilon == pytest.approx(2 * 0.001 * math.sqrt(200 * math.log(1e5)), rel=1e-15)
    assert valid
    # Not valid at eps' >= 1.
    assert simplified_composition(0.1, 0.0, 100, 1e-5)[1] is False
    # eps' < 1 but delta' close to 1: the corollary's proof needs ln(1/delta') large enough; the
    # advanced epsilon (0.553) is above eps' (0.459), so the simplified statement is refused.
    bound, valid = simplified_composition(0.5, 0.0, 1, 0.9)
    assert bound.epsilon < 1.0 and not valid


# ---------------------------------------------------------------------------------------------
# The exact optimum against mpmath


@pytest.mark.parametrize("epsilon", [1e-3, 0.05, 0.5, 3.0])
@pytest.mark.parametrize("k", [1, 7, 100, pytest.param(5000, marks=pytest.mark.slow)])
@pytest.mark.parametrize("delta_prime", [1e-5, 1e-12])
@pytest.mark.parametrize("delta", [0.0, 1e-8])
def test_optimal_matches_mpmath(epsilon, k, delta_prime, delta):
    value = optimal_epsilon(epsilon, k, delta, delta_prime)
    assert_optimal_is_tight(value, epsilon, delta, k, delta_prime)


@pytest.mark.parametrize("epsilon, k, delta, delta_prime", [
    (1e-4, 3, 0.0, 1e-50),      # eps_g at the top atom: delta' below every atom's reach
    (2.0, 1, 1e-7, 1e-50),      # delta' lost next to k delta in float64: allowance from the exact excess
    (0.1, 1000, 0.0, 0.5),      # a loose target
    (1e-4, 100, 0.0, 0.3),      # eps_g = 0: the total variation is within the target
    (10.0, 3, 0.0, 1e-300),
    (0.7, 4321, 1e-12, 1e-40),  # delta' far below k delta: the allowance needs the (k delta)^2 term
])
def test_optimal_edge_cases_match_mpmath(epsilon, k, delta, delta_prime):
    value = optimal_epsilon(epsilon, k, delta, delta_prime)
    assert_optimal_is_tight(value, epsilon, delta, k, delta_prime)


def test_optimal_zero_cases():
    assert optimal_epsilon(0.0, 1000, 0.0, 1e-5) == 0.0
    # total variation of 100-fold 1e-4-randomized response ~ 0.004 < 0.3
    assert optimal_epsilon(1e-4, 100, 0.0, 0.3) == 0.0


def _window_start(epsilon, k):
    q = 1 / (1 + math.exp(epsilon))
    return max(0, int(k * q - 60 * math.sqrt(k * q * (1 - q))))


@pytest.mark.slow
@pytest.mark.parametrize("epsilon, k, delta_prime", [pytest.param(0.01, 10**5, 1e-9, marks=pytest.mark.slow), (0.3, 30000, 1e-5)])
def test_optimal_large_k_matches_mpmath(epsilon, k, delta_prime):
    # Terms below 60 standard deviations from the mode are below e^-1800: left out of the sum.
    value = optimal_epsilon(epsilon, k, 0.0, delta_prime)
    assert_optimal_is_tight(value, epsilon, 0.0, k, delta_prime, first=_window_start(epsilon, k))


@pytest.mark.slow
@pytest.mark.parametrize("epsilon, k, delta_prime", [
    (1e-3, 10**6, 1e-5), (0.1, 10**6, 1e-5), (1.0, 10**6, 1e-5), (1e-4, 10**6, 1e-30),
])
def test_optimal_million_matches_mpmath(epsilon, k, delta_prime):
    value = optimal_epsilon(epsilon, k, 0.0, delta_prime)
    assert_optimal_is_tight(value, epsilon, 0.0, k, delta_prime, first=_window_start(epsilon, k))


def test_numpy_walk_agrees_with_pure_python(monkeypatch):
    # Large k walks the window in numpy chunks; the same atoms, the same answer.
    for epsilon, k in [(0.1, 10**6), (1e-3, 10**6), (1.0, 10**5), (0.01, 12345)]:
        pure = optimal_epsilon(epsilon, k, 0.0, 1e-5)
        monkeypatch.setattr(optimal, "_NUMPY_WALK_FROM_SD", 0.0)
        monkeypatch.setattr(optimal, "_WALK_CHUNK", 1000)  # several chunks
        vectorised = optimal_epsilon(epsilon, k, 0.0, 1e-5)
        monkeypatch.undo()
        assert vectorised == pytest.approx(pure, rel=1e-13)


def test_very_large_k_uses_the_numpy_walk():
    # k = 1e10, eps = 1e-3: about 2e6 atoms in the window. By the central limit theorem the
    # composition is close to mu-GDP with mu = sqrt(k) eps (Dong, Roth, Su Thm 3.5); its
    # epsilon at 1e-5 is 5425.5, and the exact value must agree to a small fraction.
    from dpcalc.core.gdp import epsilon_for_delta

    value = optimal_epsilon(1e-3, 10**10, 0.0, 1e-5)
    assert value == pytest.approx(epsilon_for_delta(1e-5, 1e-3 * 1e5), rel=1e-3)


@pytest.mark.parametrize("epsilon, k, delta", [(0.1, 100, 0.0), (0.5, 30, 1e-7), (1.0, 60, 1e-6), (0.05, 200, 0.0)])
def test_against_dp_accounting(epsilon, k, delta):
    # dp_accounting 0.6.0 pld.accountant.advanced_composition evaluates KOV Thm 3.3 only at the
    # grid eps_g = (k - 2i) eps and returns the smallest grid point that holds: ours, solved
    # between grid points, is at most that and more than the grid point below it.
    from dp_accounting.pld import accountant, common

    total = k * delta + 1e-5
    theirs = accountant.advanced_composition(common.DifferentialPrivacyParameters(epsilon, delta), k, total)
    ours = optimal_epsilon(epsilon, k, delta, 1e-5)
    assert theirs - 2 * epsilon < ours <= theirs * (1 + 1e-11)


def test_optimal_delta_round_trip():
    for epsilon, k, delta in [(0.1, 100, 0.0), (0.5, 40, 1e-7), (2.0, 5, 0.0)]:
        value = optimal_epsilon(epsilon, k, delta, 1e-5)
        total = optimal_delta(value, epsilon, delta, k)
        assert total <= (k * delta + 1e-5) * (1 + 1e-12)
        # delta falls steeply in eps_g (d log delta / d eps_g = e^eps_g B / delta ~ 1e5 here), so the
        # 4e-12 rounding margin on eps_g shows as ~1e-6 relative in delta.
        assert total == pytest.approx(k * delta + 1e-5, rel=1e-4)
        assert float(mp_total_delta(value, epsilon, delta, k)) == pytest.approx(total, rel=1e-12)


@pytest.mark.parametrize("n", [1, 2, 16, 17, 1000, 10**6, 10**12])
@pytest.mark.parametrize("success", [1e-9, 0.01, 0.3, 0.5, 0.9])
def test_log_binomial_pmf_matches_mpmath(n, success):
    log_s, log_f = math.log(success), math.log1p(-success)
    with mp.workdps(MP_DIGITS):
        for x in sorted({0, 1, n // 3, int(n * success), n // 2, n - 1, n} - {-1}):
            if not 0 <= x <= n:
                continue
            expected = (mp.loggamma(n + 1) - mp.loggamma(x + 1) - mp.loggamma(n - x + 1)
                        + x * mp.log(mp.mpf(success)) + (n - x) * mp.log1p(-mp.mpf(success)))
            # absolute error of a log is the relative error of the probability
            assert log_binomial_pmf(x, n, log_s, log_f) == pytest.approx(float(expected), rel=1e-14, abs=1e-12)


def test_allowance_keeps_delta_prime_next_to_k_delta():
    # delta_RR allowed = ((1 - delta)^k - 1 + k delta + delta') / (1 - delta)^k.
    with mp.workdps(MP_DIGITS):
        for delta, k, delta_prime in [(1e-12, 4321, 1e-40), (1e-3, 50, 1e-5), (0.2, 3, 1e-9), (0.0, 10, 1e-300)]:
            d, dp = mp.mpf(delta), mp.mpf(delta_prime)
            survival = (1 - d) ** k
            expected = mp.log((survival - 1 + k * d + dp) / survival)
            assert optimal._log_allowed_rr_delta([(delta, k)], delta_prime) == pytest.approx(float(expected), rel=1e-13)


# ---------------------------------------------------------------------------------------------
# Heterogeneous composition


def brute_force_optimal(epsilons, deltas, delta_prime):
    """KOV Thm 3.5 by enumerating all 2^k randomized-response outcomes, in mpmath."""
    with mp.workdps(MP_DIGITS):
        atoms: dict = {}
        for signs in itertools.product((1, -1), repeat=len(epsilons)):
            loss, probability = mp.mpf(0), mp.mpf(1)
            for sign, epsilon in zip(signs, epsilons):
                e = mp.mpf(epsilon)
                loss += sign * e
                probability *= (mp.exp(e) if sign > 0 else 1) / (1 + mp.exp(e))
            atoms[loss] = atoms.get(loss, 0) + probability
        survival = mp.fprod(1 - mp.mpf(d) for d in deltas)
        allowed = 1 - (1 - mp.fsum(mp.mpf(d) for d in deltas) - mp.mpf(delta_prime)) / survival

        def rr(eg):
            return mp.fsum(p * -mp.expm1(eg - loss) for loss, p in atoms.items() if loss > eg)

        if rr(0) <= allowed:
            return mp.mpf(0)
        return mp.findroot(lambda x: rr(x) - allowed, (mp.mpf(0), mp.fsum(mp.mpf(e) for e in epsilons)),
                           solver="anderson")


HETEROGENEOUS = [
    ([0.3, 0.5, 1.0, 0.2], [0, 1e-6, 0, 0], 1e-5),
    ([0.1] * 5 + [0.7] * 3, [0] * 8, 1e-3),
    ([2.0, 0.01, 0.5], [1e-9] * 3, 1e-12),
    ([0.05 * i for i in range(1, 11)], [0] * 10, 1e-6),
    ([0.0, 0.4, 0.0, 0.4], [1e-7, 0, 0, 0], 1e-5),
]


@pytest.mark.parametrize("epsilons, deltas, delta_prime", slow_cases(HETEROGENEOUS, 3))
def test_heterogeneous_exact_matches_brute_force(epsilons, deltas, delta_prime):
    result = compose_heterogeneous(epsilons, deltas, delta_prime)
    expected = brute_force_optimal(epsilons, deltas, delta_prime)
    assert result.optimal.method == "exact"
    assert result.optimal.epsilon_lower <= expected <= result.optimal.epsilon
    assert result.optimal.tolerance <= 1e-11 * result.optimal.epsilon
    assert result.optimal.epsilon == pytest.approx(float(expected), rel=RTOL)


@pytest.mark.parametrize("epsilons, deltas, delta_prime", slow_cases(HETEROGENEOUS, 3))
def test_lattice_brackets_brute_force(epsilons, deltas, delta_prime, monkeypatch):
    monkeypatch.setattr(heterogeneous, "EXACT_ATOM_LIMIT", 1)
    result = compose_heterogeneous(epsilons, deltas, delta_prime)
    expected = brute_force_optimal(epsilons, deltas, delta_prime)
    assert result.optimal.epsilon_lower <= expected <= result.optimal.epsilon
    if len({e for e in epsilons if e > 0}) == 1:
        assert result.optimal.method == "exact"  # one distinct epsilon: the binomial walk
        return
    assert result.optimal.method == "lattice"
    assert result.optimal.tolerance <= 1e-3
    assert any("lattice" in warning for warning in result.warnings)


@pytest.mark.slow
def test_lattice_for_a_long_list():
    # 40 distinct values: 2^40 atoms, so the lattice; its bracket contains the exact optimum,
    # which the exact path gives for a coarser copy of the list where the values pair up.
    epsilons = [round(0.01 * i, 2) for i in range(1, 41)]
    result = compose_heterogeneous(epsilons, [0.0] * 40, 1e-5)
    assert result.optimal.method == "lattice"
    assert 0.0 < result.optimal.tolerance < 1e-3
    assert result.optimal.epsilon <= result.advanced.epsilon
    assert result.optimal.epsilon <= result.basic.epsilon


def test_heterogeneous_with_equal_values_is_homogeneous():
    homogeneous = compose(0.1, 1e-7, 100, 1e-5)
    listed = compose_heterogeneous([0.1] * 100, [1e-7] * 100, 1e-5)
    assert listed.optimal.epsilon == pytest.approx(homogeneous.optimal.epsilon, rel=1e-12)
    assert listed.advanced.epsilon == pytest.approx(homogeneous.advanced.epsilon, rel=1e-12)
    assert listed.simplified.epsilon == pytest.approx(homogeneous.simplified.epsilon, rel=1e-12)
    assert listed.basic.epsilon == pytest.approx(10.0, rel=1e-14)


def test_heterogeneous_advanced_formula():
    epsilons, deltas = [0.1, 0.2, 0.4], [0.0, 1e-6, 2e-6]
    result = compose_heterogeneous(epsilons, deltas, 1e-5)
    expected = math.sqrt(2 * math.log(1e5) * sum(e * e for e in epsilons)) + sum(e * math.expm1(e) for e in epsilons)
    assert result.advanced.epsilon == pytest.approx(expected, rel=1e-15)
    assert result.advanced.delta == pytest.approx(3e-6 + 1e-5, rel=1e-15)
    assert result.basic == core.Bound(pytest.approx(0.7), pytest.approx(3e-6))


# ---------------------------------------------------------------------------------------------
# Inverse questions


@pytest.mark.parametrize("epsilon, delta, target, delta_prime", [
    (0.1, 0.0, 4.30679, 1e-5), (0.1, 0.0, 10.0, 1e-5), (0.01, 1e-7, 1.0, 1e-5), (0.3, 0.0, 1000.0, 1e-5),
    (0.5, 0.0, 0.4, 1e-5),
])
def test_max_k_is_the_largest_within_target(epsilon, delta, target, delta_prime):
    result = max_compositions(epsilon, delta, target, delta_prime)
    values = {
        "basic": lambda k: k * epsilon,
        "advanced": lambda k: advanced_composition(epsilon, delta, k, delta_prime).epsilon,
        "simplified": lambda k: simplified_composition(epsilon, delta, k, delta_prime)[0].epsilon,
        "optimal": lambda k: optimal_epsilon(epsilon, k, delta, delta_prime),
    }
    for name, value in values.items():
        k = getattr(result, name).value
        if k > 0:
            assert value(k) <= target
            assert getattr(result, name).epsilon == value(k)
        assert value(k + 1) > target
    assert result.optimal.value >= max(result.basic.value, result.advanced.value)


def test_max_k_spec_example():
    # 100 mechanisms give 4.306791 (docs/reference-values.md), so a target just below it allows 99.
    assert max_compositions(0.1, 0.0, 4.30679, 1e-5).optimal.value == 99
    assert max_compositions(0.1, 0.0, 4.3068, 1e-5).optimal.value == 100


def test_max_k_with_delta_reports_the_delta_cap():
    # With delta = 1e-3 the optimal epsilon peaks near 3.77 and falls again as k delta -> 1:
    # every k up to the delta cap stays within 5.
    result = max_compositions(0.1, 1e-3, 5.0, 1e-5)
    assert result.optimal.value == 999
    assert any("total delta staying below 1" in warning for warning in result.warnings)
    # Within 3.7, the first crossing (about 365) is found, not the late return below 3.7.
    crossing = max_compositions(0.1, 1e-3, 3.7, 1e-5).optimal.value
    assert optimal_epsilon(0.1, crossing, 1e-3, 1e-5) <= 3.7 < optimal_epsilon(0.1, crossing + 1, 1e-3, 1e-5)
    assert crossing < 500


@pytest.mark.slow
def test_max_k_beyond_the_search_limit():
    result = max_compositions(1e-5, 0.0, 10.0, 1e-5)
    assert result.optimal.value == core.MAX_K_SEARCHED
    assert any("largest k searched" in warning for warning in result.warnings)


@pytest.mark.parametrize("k, delta, target, delta_prime", [
    (100, 0.0, 4.30679, 1e-5), (10000, 0.0, 1.0, 1e-5), (1, 0.0, 1.0, 1e-5), (10, 1e-6, 0.5, 1e-5), (3, 0.0, 50.0, 1e-5),
])
def test_max_epsilon_per_mechanism(k, delta, target, delta_prime):
    result = max_epsilon_per_mechanism(k, delta, target, delta_prime)
    values = {
        "basic": lambda e: basic_composition(e, delta, k).epsilon,
        "advanced": lambda e: advanced_composition(e, delta, k, delta_prime).epsilon,
        "optimal": lambda e: optimal_epsilon(e, k, delta, delta_prime),
    }
    for name, value in values.items():
        epsilon = getattr(result, name).value
        assert value(epsilon) <= target
        assert value(epsilon * (1 + 1e-9)) > target
    assert result.simplified.value == pytest.approx(target / (2 * math.sqrt(2 * k * math.log(1 / delta_prime))))
    # docs/reference-values.md: 100 mechanisms of 0.1 give 4.30679..., so the largest
    # per-mechanism eps is just below 0.1.
    if (k, target) == (100, 4.30679):
        assert result.optimal.value == pytest.approx(0.1, rel=1e-5) and result.optimal.value < 0.1


# ---------------------------------------------------------------------------------------------
# Input checks


@pytest.mark.parametrize("call, name", [
    (lambda: compose(-0.1, 0.0, 10, 1e-5), "epsilon"),
    (lambda: compose(math.inf, 0.0, 10, 1e-5), "epsilon"),
    (lambda: compose(0.1, 1.0, 10, 1e-5), "delta"),
    (lambda: compose(0.1, 0.0, 0, 1e-5), "k"),
    (lambda: compose(0.1, 0.0, 2.5, 1e-5), "k"),
    (lambda: compose(0.1, 0.0, 10**11, 1e-5), "k"),
    (lambda: compose(0.1, 0.0, 10, 0.0), "delta_prime"),
    (lambda: compose(0.1, 0.1, 10, 1e-5), "k * delta + delta_prime"),
    (lambda: compose_heterogeneous([0.1, -1.0], [0.0, 0.0], 1e-5), "epsilon[1]"),
    (lambda: compose_heterogeneous([0.1, 0.1], [0.6, 0.6], 1e-5), "sum(delta) + delta_prime"),
    (lambda: max_compositions(0.0, 0.0, 1.0, 1e-5), "epsilon"),
    (lambda: max_epsilon_per_mechanism(10, 0.2, 1.0, 1e-5), "k * delta + delta_prime"),
])
def test_invalid_parameters(call, name):
    with pytest.raises(ParameterError) as error:
        call()
    assert error.value.name == name


# ---------------------------------------------------------------------------------------------
# Properties

epsilons = st.floats(min_value=1e-4, max_value=5.0)
ks = st.integers(min_value=1, max_value=3000)
slacks = st.floats(min_value=1e-30, max_value=0.5)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(epsilons, ks, slacks)
def test_optimal_is_below_advanced_and_basic(epsilon, k, delta_prime):
    result = compose(epsilon, 0.0, k, delta_prime)
    assert result.optimal.epsilon <= result.advanced.epsilon * (1 + 1e-11)
    assert result.optimal.epsilon <= result.basic.epsilon * (1 + 1e-11)
    assert result.best in ("optimal", "simplified")


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(epsilons, ks, slacks)
def test_optimal_grows_with_k(epsilon, k, delta_prime):
    assert optimal_epsilon(epsilon, k, 0.0, delta_prime) <= optimal_epsilon(epsilon, k + 1, 0.0, delta_prime)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(epsilons, epsilons, ks, slacks)
def test_optimal_grows_with_epsilon(e1, e2, k, delta_prime):
    low, high = sorted((e1, e2))
    assert optimal_epsilon(low, k, 0.0, delta_prime) <= optimal_epsilon(high, k, 0.0, delta_prime)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(epsilons, ks, slacks, slacks)
def test_optimal_falls_with_delta_prime(epsilon, k, s1, s2):
    low, high = sorted((s1, s2))
    assert optimal_epsilon(epsilon, k, 0.0, high) <= optimal_epsilon(epsilon, k, 0.0, low)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(epsilons, st.integers(min_value=1, max_value=400), st.floats(min_value=1e-12, max_value=1e-4), slacks)
def test_optimal_delta_at_the_optimum_is_within_the_target(epsilon, k, delta, delta_prime):
    assume(k * delta + delta_prime < 0.9)
    value = optimal_epsilon(epsilon, k, delta, delta_prime)
    assert optimal_delta(value, epsilon, delta, k) <= (k * delta + delta_prime) * (1 + 1e-9)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.05, 0.2, 0.5, 1.0, 2.0]), min_size=1, max_size=10), slacks)
def test_heterogeneous_optimal_between_zero_and_the_other_bounds(values, delta_prime):
    result = compose_heterogeneous(values, [0.0] * len(values), delta_prime)
    assert 0.0 <= result.optimal.epsilon <= result.basic.epsilon * (1 + 1e-11)
    assert result.optimal.epsilon <= result.advanced.epsilon * (1 + 1e-11)
    groups = Counter(v for v in values if v > 0)
    if len(groups) == 1:
        (epsilon, count), = groups.items()
        assert result.optimal.epsilon == pytest.approx(optimal_epsilon(epsilon, count, 0.0, delta_prime), rel=1e-10)


# ---------------------------------------------------------------------------------------------
# One total delta for every theorem (total_delta)

# KOV at a total delta D: soundness (the exact total delta at the returned epsilon is <= D) and
# tightness (at epsilon * (1 - TOTAL_RTOL) it is > D), in 60-digit mpmath. TOTAL_RTOL = 1e-10:
# the segment is solved in closed form (~5e-13 relative, see RTOL above) and raised by the
# 4e-12 rounding margin, and the allowance 1 - (1 - D) / (1 - delta)^k enters rounded once
# (1e-16 relative), so the returned epsilon is within ~5e-12 relative above the optimum
# (1e-11 passes on every case below); 1e-10 keeps 20x headroom for other platforms' libm.
TOTAL_RTOL = 1e-10


def exact(value):
    """A float input as the decimal it prints as (what was typed; composition.optimal._slack reads it so)."""
    return mp.mpf(repr(value))


def mp_kov_total_delta(epsilon_total, epsilon, delta, k):
    """KOV Thm 3.3, written out as stated: 1 - (1 - delta)^k (1 - delta_RR(eps_g)),
    delta_RR(eps_g) = sum_{l=0..k} C(k, l) (e^((k-l) eps) - e^(eps_g + l eps))_+ / (1 + e^eps)^k.

    Independent of mp_rr_delta above (binomial probabilities there, this sum as the theorem has
    it); the terms with l >= (k eps - eps_g) / (2 eps) are <= 0, so the sum stops there.
    """
    with mp.workdps(60):
        eg, eps, d = mp.mpf(epsilon_total), exact(epsilon), exact(delta)
        total = mp.mpf(0)
        for l in range(k + 1):
            term = mp.exp((k - l) * eps) - mp.exp(eg + l * eps)
            if term <= 0:
                break
            total += mp.binomial(k, l) * term
        rr = total / (1 + mp.exp(eps)) ** k
        return 1 - (1 - d) ** k * (1 - rr)


@pytest.mark.parametrize("epsilon, delta, k, total", [
    (0.1, 1e-6, 50, 1e-4),  # the issue's mechanisms, well inside the total
    (0.1, 1e-6, 100, 1e-4),  # k delta = D exactly: no delta' left for advanced, optimal still exact
    (0.1, 1e-6, 100, 9.9999e-5),  # below k delta: only the optimal theorem reaches D
    (0.5, 0.01, 50, 0.45),  # large deltas: 1 - (1 - delta)^k = 0.395 < D < k delta = 0.5
    (0.3, 1e-8, 200, 3e-6),
    (1.0, 0.0, 20, 1e-6),  # delta = 0: the same as delta' = D
    (0.01, 1e-12, 1000, 1.000001e-9),  # delta_RR ~ 1e-15 next to D ~ 1e-9: needs the exact slack
])
def test_optimal_at_a_total_delta_matches_mpmath(epsilon, delta, k, total):
    value = compose(epsilon, delta, k, total_delta=total).optimal.epsilon
    with mp.workdps(60):
        assert mp_kov_total_delta(value, epsilon, delta, k) <= exact(total)
        assert mp_kov_total_delta(value * (1 - TOTAL_RTOL), epsilon, delta, k) > exact(total)


def test_compose_at_a_total_delta():
    result = compose(0.1, 1e-6, 50, total_delta=1e-4)
    assert result.total_delta == 1e-4 and result.delta_prime is None and result.not_applicable == ()
    for name in ("basic", "advanced", "simplified", "optimal"):
        assert getattr(result, name).delta == 1e-4
    assert result.basic.epsilon == pytest.approx(5.0)
    # advanced at delta' = D - k delta = 5e-5 (DRV Thm III.3)
    expected = 0.1 * math.sqrt(2 * 50 * math.log(1 / 5e-5)) + 50 * 0.1 * math.expm1(0.1)
    assert result.advanced.epsilon == pytest.approx(expected, rel=1e-14)
    assert result.optimal.epsilon < min(result.basic.epsilon, result.advanced.epsilon)
    assert result.best == "optimal"


def test_a_theorem_that_cannot_reach_the_total_delta_is_not_applicable():
    # 100 x 1e-6 = 1e-4 exactly in decimal: basic reaches D = 1e-4, advanced needs delta' > 0.
    at = compose(0.1, 1e-6, 100, total_delta=1e-4)
    assert at.not_applicable == ("advanced", "simplified")
    assert at.basic.epsilon == pytest.approx(10.0)
    assert math.isinf(at.advanced.epsilon) and math.isinf(at.simplified.epsilon) and not at.simplified_valid
    assert any("advanced and simplified theorems do not reach" in warning for warning in at.warnings)
    # Just below k delta only the exact (KOV) total 1 - (1 - delta)^k = 9.99951e-5 fits.
    below = compose(0.1, 1e-6, 100, total_delta=9.9999e-5)
    assert below.not_applicable == ("basic", "advanced", "simplified")
    assert math.isinf(below.basic.epsilon) and math.isfinite(below.optimal.epsilon)
    assert below.best == "optimal"
    # Decimal, not binary: 50 x 0.01 reaches 0.5 (the float product of the binary 0.01 is above it).
    assert compose(0.5, 0.01, 50, total_delta=0.5).basic.epsilon == 25.0


def test_no_theorem_reaches_a_total_below_the_mechanisms_own_delta():
    with pytest.raises(ParameterError) as error:
        compose(0.1, 1e-6, 100, total_delta=9.99e-5)
    assert error.value.name == "total_delta" and "1 - (1 - delta)^k = 9.99951e-05" in error.value.requirement
    with pytest.raises(ParameterError):
        max_compositions(0.1, 1e-5, 1.0, total_delta=1e-6)  # one mechanism alone is above D
    with pytest.raises(ParameterError):
        compose_heterogeneous([0.1, 0.2], [1e-6, 1e-6], total_delta=1.5e-6)
    for call in (lambda: compose(0.1, 0.0, 10), lambda: compose(0.1, 0.0, 10, 1e-5, 1e-5)):
        with pytest.raises(ValueError, match="exactly one of delta_prime"):
            call()


def test_with_delta_zero_the_total_delta_is_delta_prime():
    slack, total = compose(0.2, 0.0, 300, 1e-7), compose(0.2, 0.0, 300, total_delta=1e-7)
    for name in ("advanced", "simplified", "optimal"):
        assert getattr(total, name) == getattr(slack, name)
    inverse_slack, inverse_total = max_compositions(0.1, 0.0, 5.0, 1e-5), max_compositions(0.1, 0.0, 5.0, total_delta=1e-5)
    for name in ("basic", "advanced", "simplified", "optimal"):
        assert getattr(inverse_total, name).value == getattr(inverse_slack, name).value
        assert getattr(inverse_total, name).epsilon == getattr(inverse_slack, name).epsilon
    assert inverse_slack.total_delta == inverse_total.total_delta == 1e-5


def test_heterogeneous_at_a_total_delta_agrees_with_homogeneous():
    hetero = compose_heterogeneous([0.1] * 30, [1e-6] * 30, total_delta=1e-4)
    homo = compose(0.1, 1e-6, 30, total_delta=1e-4)
    assert hetero.optimal.epsilon == pytest.approx(homo.optimal.epsilon, rel=1e-12)
    assert hetero.advanced.epsilon == pytest.approx(homo.advanced.epsilon, rel=1e-12)
    assert hetero.basic == homo.basic and hetero.total_delta == 1e-4
    mixed = compose_heterogeneous([0.5, 0.5, 1.0, 2.0], [0.0, 0.0, 1e-6, 1e-6], total_delta=1.2e-5)
    assert all(getattr(mixed, name).delta == 1.2e-5 for name in ("basic", "advanced", "simplified", "optimal"))
    # the same mechanisms with delta' = 1e-5 reach 2e-6 + 1e-5 = 1.2e-5: the same optimum
    slack = compose_heterogeneous([0.5, 0.5, 1.0, 2.0], [0.0, 0.0, 1e-6, 1e-6], 1e-5)
    assert mixed.optimal.epsilon == pytest.approx(slack.optimal.epsilon, rel=1e-12)


def test_max_k_at_a_total_delta_issue_example():
    """eps 0.1, delta 1e-6, target 5: every theorem's k is the largest that reaches D = 1e-4 within 5."""
    epsilon, delta, target, total = 0.1, 1e-6, 5.0, 1e-4
    result = max_compositions(epsilon, delta, target, total_delta=total)
    assert (result.basic.value, result.advanced.value, result.optimal.value) == (50, 79, 99)
    assert result.best == "optimal" and result.total_delta == total and result.delta_prime is None
    assert all(getattr(result, name).delta == total for name in ("basic", "advanced", "simplified", "optimal"))

    def fits(name, k):
        """Independent of the search: the theorem's own delta condition at D and its epsilon at D."""
        slack = exact(total) - k * exact(delta)
        if name == "basic":
            return slack >= 0 and k * epsilon <= target
        if name in ("advanced", "simplified"):
            if slack <= 0:
                return False
            with mp.workdps(30):
                root = mp.sqrt(2 * k * mp.log(1 / slack))
                value = 2 * epsilon * root if name == "simplified" else epsilon * root + k * epsilon * mp.expm1(epsilon)
            return value <= target
        try:
            return compose(epsilon, delta, k, total_delta=total).optimal.epsilon <= target
        except ParameterError:
            return False

    for name in ("basic", "advanced", "simplified", "optimal"):
        k = getattr(result, name).value
        assert fits(name, k) and not fits(name, k + 1), name
    # The optimum at k = 100 has only delta_RR ~ 5e-9 left (1 - (1 - 1e-6)^100 ~ 1e-4 - 5e-9).
    assert compose(epsilon, delta, 100, total_delta=total).optimal.epsilon > target


def test_max_k_at_a_total_delta_reports_theorems_that_cannot_reach_it():
    # delta = D: one mechanism reaches D under basic (k delta <= D) but leaves no delta' > 0.
    result = max_compositions(0.1, 1e-5, 5.0, total_delta=1e-5)
    assert result.basic.value == result.optimal.value == 1
    assert result.advanced == core.InverseEntry(0, math.inf, 1e-5, valid=True, applicable=False)
    assert not result.simplified.applicable and not result.simplified.valid
    assert any("limited by the total delta" in warning for warning in result.warnings)


@pytest.mark.parametrize("k, delta, target, total", [(50, 1e-6, 5.0, 1e-4), (10, 0.0, 0.5, 1e-5), (1000, 1e-9, 2.0, 1e-5)])
def test_max_epsilon_per_mechanism_at_a_total_delta(k, delta, target, total):
    result = max_epsilon_per_mechanism(k, delta, target, total_delta=total)
    assert result.total_delta == total
    values = {
        "basic": lambda e: k * e,
        "advanced": lambda e: compose(e, delta, k, total_delta=total).advanced.epsilon,
        "optimal": lambda e: compose(e, delta, k, total_delta=total).optimal.epsilon,
    }
    for name, value in values.items():
        epsilon = getattr(result, name).value
        assert getattr(result, name).delta == total
        assert value(epsilon) <= target < value(epsilon * (1 + 1e-9)), name
    assert result.optimal.value >= max(result.basic.value, result.advanced.value)


def test_max_epsilon_per_mechanism_when_only_the_optimum_reaches_the_total():
    result = max_epsilon_per_mechanism(100, 1e-6, 5.0, total_delta=9.9999e-5)
    for name in ("basic", "advanced", "simplified"):
        entry = getattr(result, name)
        assert (entry.value, entry.epsilon, entry.applicable) == (None, math.inf, False)
    assert result.best == "optimal" and result.optimal.epsilon <= 5.0


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(epsilons, st.integers(min_value=1, max_value=400), st.floats(min_value=0.0, max_value=1e-4),
       st.floats(min_value=1e-12, max_value=0.5))
def test_at_a_total_delta_every_answer_holds_there(epsilon, k, delta, total):
    try:
        result = compose(epsilon, delta, k, total_delta=total)
    except ParameterError:
        assume(False)
    assert result.best not in result.not_applicable
    assert optimal_delta(result.optimal.epsilon, epsilon, delta, k) <= total * (1 + 1e-9)
    for name in ("basic", "advanced"):
        bound = getattr(result, name)
        assert bound.delta == total
        if name not in result.not_applicable:
            assert result.optimal.epsilon <= bound.epsilon * (1 + 1e-11)
    assert ("basic" in result.not_applicable) == (k * exact(delta) > exact(total))
