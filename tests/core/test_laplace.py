"""Laplace accuracy core: the seed value (docs/reference-values.md), mpmath references, round
trips and properties."""

from __future__ import annotations

import math

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core.laplace import (
    failure_probability,
    laplace_accuracy,
    scaled_tolerance_for,
)
from dpcalc.core.validation import ParameterError

MP_DIGITS = 50

# Every quantity here is a few elementary operations (log1p, expm1, log); against mpmath at
# 50 digits they keep ~1e-15 relative accuracy, so 1e-12 leaves room and still catches any
# formula that cancels (1 - P computed as a float difference loses 4 digits at P = 1 - 1e-12).
RTOL = 1e-12


def mp_scaled_tolerance(failure, dims, one_sided):
    """x with 1 - (1 - u)^dims = failure, u = e^-x (two-sided) or e^-x / 2 (one-sided), in mpmath."""
    with mp.workdps(MP_DIGITS):
        u = -mp.expm1(mp.log1p(-mp.mpf(failure)) / dims)
        return -mp.log(2 * u) if one_sided else -mp.log(u)


def mp_failure(x, dims, one_sided):
    with mp.workdps(MP_DIGITS):
        u = mp.exp(-mp.mpf(x)) / (2 if one_sided else 1)
        return -mp.expm1(dims * mp.log1p(-u))


def test_spec_seed_value():
    # docs/mathematics.md §4 / docs/reference-values.md: tolerance 1e-5, probability 0.9, sensitivity 1 ->
    # eps = ln(10) / 1e-5 = 230258.509299 (the seeds deploy 230260).
    result = laplace_accuracy(tolerance=1e-5, probability=0.9, failure_probability_exact=0.1)
    assert result.epsilon == pytest.approx(230258.509299, abs=5e-7)
    assert result.epsilon == pytest.approx(math.log(10) / 1e-5, rel=1e-15)
    assert result.scale == pytest.approx(1e-5 / math.log(10), rel=1e-15)
    assert result.std == pytest.approx(math.sqrt(2) * 1e-5 / math.log(10), rel=1e-15)
    assert result.solved_for == "epsilon" and result.warnings == ()


def test_probability_close_to_one():
    # P = 1 - 1e-12: eps = ln(1e12) / t exactly (two-sided, one coordinate); the float
    # difference 1 - 0.999999999999 = 1.0000889e-12 would be off by 3e-6 relative.
    result = laplace_accuracy(tolerance=1.0, probability=1 - 1e-12, failure_probability_exact=1e-12)
    assert result.epsilon == pytest.approx(12 * math.log(10), rel=1e-15)
    assert result.failure_probability == 1e-12
    # Without the exact complement the float P itself is used, also exactly.
    plain = laplace_accuracy(tolerance=1.0, probability=1 - 1e-12)
    assert plain.epsilon == pytest.approx(-math.log(1.0 - (1 - 1e-12)), rel=1e-15)


def test_probability_that_rounds_to_one():
    # 1 - 1e-20 is 1.0 in float64; given with its exact complement it still works.
    result = laplace_accuracy(tolerance=2.0, probability=1.0, failure_probability_exact=1e-20)
    assert result.epsilon == pytest.approx(20 * math.log(10) / 2.0, rel=1e-15)


@pytest.mark.parametrize("failure", [1e-300, 1e-100, 1e-20, 1e-12, 1e-6, 0.01, 0.1, 0.5, 0.9, 0.999999])
@pytest.mark.parametrize("dims", [1, 2, 10, 1000, 10**6, 10**9])
@pytest.mark.parametrize("one_sided", [False, True])
def test_scaled_tolerance_matches_mpmath(failure, dims, one_sided):
    expected = mp_scaled_tolerance(failure, dims, one_sided)
    if expected <= 0:
        assert scaled_tolerance_for(failure, dims, one_sided) == 0.0
        return
    if one_sided and expected < 1e-3:
        pytest.skip("P close to 2^-dims one-sided: x ~ (P - 2^-dims) is ill-conditioned in P itself")
    assert scaled_tolerance_for(failure, dims, one_sided) == pytest.approx(float(expected), rel=RTOL)


@pytest.mark.parametrize("x", [1e-8, 1e-3, 0.1, 1.0, 5.0, 30.0, 100.0, 700.0, 745.0, 1e4])
@pytest.mark.parametrize("dims", [1, 3, 1000, 10**9])
@pytest.mark.parametrize("one_sided", [False, True])
def test_failure_probability_matches_mpmath(x, dims, one_sided):
    expected = mp_failure(x, dims, one_sided)
    value = failure_probability(x, dims, one_sided)
    if expected < 1e-300:
        assert value == pytest.approx(float(expected), rel=1e-9, abs=1e-305)
    else:
        assert value == pytest.approx(float(expected), rel=RTOL)


@pytest.mark.parametrize("dims", [1, 7, 10**6])
@pytest.mark.parametrize("one_sided", [False, True])
@pytest.mark.parametrize("sensitivity", [0.01, 1.0, 3.0])
def test_round_trips(dims, one_sided, sensitivity):
    forward = laplace_accuracy(tolerance=0.25, probability=0.999, sensitivity=sensitivity, dims=dims,
                               one_sided=one_sided, failure_probability_exact=1e-3)
    back = laplace_accuracy(epsilon=forward.epsilon, tolerance=0.25, sensitivity=sensitivity, dims=dims,
                            one_sided=one_sided)
    assert back.solved_for == "probability"
    assert back.failure_probability == pytest.approx(1e-3, rel=1e-12)
    again = laplace_accuracy(epsilon=forward.epsilon, probability=0.999, sensitivity=sensitivity, dims=dims,
                             one_sided=one_sided, failure_probability_exact=1e-3)
    assert again.solved_for == "tolerance"
    assert again.tolerance == pytest.approx(0.25, rel=1e-14)


def test_dims_needs_no_union_bound():
    # k = 10 coordinates all within t with probability 0.9: (1 - e^-x)^10 = 0.9 exactly; the
    # union bound 10 e^-x = 0.1 gives a larger epsilon.
    exact = laplace_accuracy(tolerance=1.0, probability=0.9, dims=10, failure_probability_exact=0.1)
    assert (1 - math.exp(-exact.epsilon)) ** 10 == pytest.approx(0.9, rel=1e-15)
    assert exact.epsilon < math.log(10 / 0.1)


def test_one_sided_formula():
    # P(Y <= t) = 1 - e^(-t/b) / 2 (docs/mathematics.md §4).
    result = laplace_accuracy(epsilon=2.0, tolerance=0.5, one_sided=True)
    assert result.probability == pytest.approx(1 - math.exp(-1.0) / 2, rel=1e-15)


def test_one_sided_probability_below_half_power_is_met_by_any_scale():
    result = laplace_accuracy(tolerance=1.0, probability=0.2, dims=2, one_sided=True)
    assert result.epsilon == 0.0 and math.isinf(result.scale)
    assert "every noise scale" in result.warnings[0]
    tolerance = laplace_accuracy(epsilon=1.0, probability=0.5, one_sided=True)
    assert tolerance.tolerance == 0.0 and tolerance.warnings


def test_overflowing_epsilon_is_inf_with_a_warning():
    result = laplace_accuracy(tolerance=1e-308, probability=0.999999)
    assert math.isinf(result.epsilon) and result.scale == 0.0
    assert "overflows" in result.warnings[0]


def test_probability_underflowing_to_one():
    result = laplace_accuracy(epsilon=1.0, tolerance=800.0)
    assert result.probability == 1.0
    assert result.failure_probability == pytest.approx(float(mp_failure(800.0, 1, False)), rel=1e-12)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"tolerance": 1.0},
        {"tolerance": 1.0, "probability": 0.5, "epsilon": 1.0},
        {},
    ],
)
def test_exactly_two_of_three(kwargs):
    with pytest.raises(ValueError, match="give exactly two"):
        laplace_accuracy(**kwargs)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"tolerance": 0.0, "probability": 0.5}, "tolerance"),
        ({"tolerance": math.inf, "probability": 0.5}, "tolerance"),
        ({"tolerance": 1.0, "probability": 1.0}, "probability"),
        ({"tolerance": 1.0, "probability": 0.0}, "probability"),
        ({"epsilon": -1.0, "probability": 0.5}, "epsilon"),
        ({"epsilon": math.nan, "tolerance": 1.0}, "epsilon"),
        ({"tolerance": 1.0, "probability": 0.5, "sensitivity": 0.0}, "sensitivity"),
        ({"tolerance": 1.0, "probability": 0.5, "sensitivity": math.inf}, "sensitivity"),
        ({"tolerance": 1.0, "probability": 0.5, "dims": 0}, "dims"),
        ({"tolerance": 1.0, "probability": 0.5, "dims": 1.5}, "dims"),
    ],
)
def test_invalid_parameters(kwargs, name):
    with pytest.raises(ParameterError) as error:
        laplace_accuracy(**kwargs)
    assert error.value.name == name


def test_inconsistent_exact_complement_is_refused():
    with pytest.raises(ValueError, match="does not match"):
        laplace_accuracy(tolerance=1.0, probability=0.9, failure_probability_exact=0.2)


probabilities = st.floats(min_value=1e-6, max_value=1 - 1e-9)
tolerances = st.floats(min_value=1e-6, max_value=1e3)
dims_values = st.integers(min_value=1, max_value=10**6)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(probabilities, probabilities, tolerances, dims_values)
def test_epsilon_grows_with_probability(p1, p2, tolerance, dims):
    low, high = sorted((p1, p2))
    assert (laplace_accuracy(tolerance=tolerance, probability=low, dims=dims).epsilon
            <= laplace_accuracy(tolerance=tolerance, probability=high, dims=dims).epsilon)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(probabilities, tolerances, tolerances, dims_values, st.booleans())
def test_epsilon_falls_with_tolerance_and_one_sided_needs_less(probability, t1, t2, dims, one_sided):
    low, high = sorted((t1, t2))
    loose = laplace_accuracy(tolerance=high, probability=probability, dims=dims, one_sided=one_sided).epsilon
    tight = laplace_accuracy(tolerance=low, probability=probability, dims=dims, one_sided=one_sided).epsilon
    assert loose <= tight
    two_sided = laplace_accuracy(tolerance=low, probability=probability, dims=dims).epsilon
    one = laplace_accuracy(tolerance=low, probability=probability, dims=dims, one_sided=True).epsilon
    assert one <= two_sided


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(probabilities, tolerances, dims_values)
def test_more_dims_need_more_epsilon(probability, tolerance, dims):
    assert (laplace_accuracy(tolerance=tolerance, probability=probability, dims=dims).epsilon
            <= laplace_accuracy(tolerance=tolerance, probability=probability, dims=dims + 1).epsilon)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=1e-3, max_value=1e4), tolerances, dims_values, st.booleans())
def test_probability_round_trip(epsilon, tolerance, dims, one_sided):
    forward = laplace_accuracy(epsilon=epsilon, tolerance=tolerance, dims=dims, one_sided=one_sided)
    if forward.failure_probability < 1e-300 or forward.failure_probability >= 1.0 or (
        one_sided and forward.probability <= 2.0**-dims * (1 + 1e-6)
    ):
        return
    back = laplace_accuracy(epsilon=epsilon, probability=forward.probability, dims=dims, one_sided=one_sided,
                            failure_probability_exact=forward.failure_probability)
    assert back.tolerance == pytest.approx(tolerance, rel=1e-6)


@pytest.mark.parametrize("x", [3e-300, 1e-20, 1e-8, 0.5, 0.69, 0.7, 1.0, 50.0])
@pytest.mark.parametrize("dims", [1, 7, 10**6])
def test_failure_probability_against_mpmath_down_to_tiny_tolerances(x, dims):
    """A tolerance far below the scale (u = e^-x rounds to 1) used to fail in log1p(-u)."""
    with mp.workdps(50):
        exact = -mp.expm1(dims * mp.log(1 - mp.exp(-mp.mpf(x))))
    assert failure_probability(x, dims) == pytest.approx(float(exact), rel=1e-12)
