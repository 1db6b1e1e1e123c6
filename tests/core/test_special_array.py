"""Vectorised log-space helpers (dpcalc.core.special_array) against mpmath at 50 digits, their
edge cases, and hypothesis properties.

Tolerance. Every function f(x_1, ..., x_n) is checked as
    |computed - exact| <= C u (|f| + sum_i |x_i| |df/dx_i|) + 2^-1074,       u = 2^-53,
the right-hand side's bracket being the condition scale: the change in f that rounding each
input to float64 alone causes, per unit u (no float64 algorithm can do better on inputs that are
themselves rounded). Where it is of the order of |f| this is a relative bound of C u ~ 4.4e-16;
where f nearly cancels (log_add(-1, log(e - 1)) = 0, log_expm1 near log 2, log_sub with b near a)
it is absolute, as it must be. 2^-1074 (one subnormal unit) covers results that underflow.
Measured: at most 1.7 u of the condition scale for every function (and at most 1.9 u relative
for log1mexp and log1p_exp, whose errors are relative everywhere), so C = 4 leaves a factor 2;
an identity that cancels in the wrong place (log(1 - e^x) as log1p(-exp(x)) near 0, log(e^x - 1)
as log(expm1(x)) for large x) misses by many orders of magnitude. log1mexp and log1p_exp are
also checked for a purely relative error of 4 u, which is what their identities achieve.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core.special_array import finite_abs, log1mexp, log1p_exp, log_add, log_expm1, log_sub

DIGITS = 50
U = 2.0**-53
C = 4.0
SMALLEST_SUBNORMAL = 2.0**-1074
LOG2 = math.log(2.0)

# Magnitudes from the smallest subnormal to the largest float64, dense where the identities
# switch branches (log 2) or where float64 effects begin (1e-16, 36 ~ where e^-x < u, 709/745).
MAGNITUDES = sorted(
    {
        5e-324, 1e-310, 1e-300, 1e-200, 1e-30, 1e-17, 1e-16, 1e-10, 1e-5, 1e-3, 0.1, 0.3, 0.5,
        LOG2 * (1 - 1e-9), math.nextafter(LOG2, 0.0), LOG2, math.nextafter(LOG2, 1.0), LOG2 * (1 + 1e-9),
        0.7, 1.0, 2.0, 10.0, 36.0, 37.0, 40.0, 100.0, 700.0, 708.0, 709.0, 709.8, 745.0, 746.0, 1e3,
        1e5, 1e10, 1e100, 1e300, 1.7976931348623157e308,
    }
    | set(np.exp(np.random.default_rng(20240601).uniform(-40.0, 8.0, 400)).tolist())
)

# Log-values for the two-argument functions: both signs, the same edge points, random ones.
LOG_VALUES = sorted(
    {0.0, -1e-16, 1e-16, -1e-14, -1e-3, 1e-3, -0.5, 0.5, -LOG2, LOG2, -1.0, 1.0, -2.0, 2.0, -10.0, 10.0,
     -40.0, 40.0, -745.0, 745.0, -1e5, 1e5, -1e300, 1e300}
    | set(np.random.default_rng(7).uniform(-50.0, 50.0, 40).tolist())
    | set((-np.exp(np.random.default_rng(8).uniform(-40.0, 4.0, 20))).tolist())
)


def check(computed: float, exact: mp.mpf, inputs: list[tuple[float, mp.mpf]]) -> None:
    """|computed - exact| <= C u (|f| + sum |x df/dx|) + 2^-1074; inputs are (x, |df/dx|)."""
    scale = abs(exact) + sum(abs(mp.mpf(x)) * slope for x, slope in inputs)
    error = abs(mp.mpf(float(computed)) - exact)
    assert error <= C * U * scale + SMALLEST_SUBNORMAL, (computed, exact, float(error / (U * scale)) if scale else error)


def check_relative(computed: float, exact: mp.mpf) -> None:
    error = abs(mp.mpf(float(computed)) - exact)
    assert error <= C * U * abs(exact) + SMALLEST_SUBNORMAL, (computed, exact)


def mp_log1mexp(x: mp.mpf) -> mp.mpf:
    # log1p for x < -1 keeps 1 - e^x exact when e^x is below 10^-50 (log(1 - e^x) would round to 0)
    return mp.log1p(-mp.exp(x)) if x < -1 else mp.log(-mp.expm1(x))


def one(function, *args: float) -> float:
    """The function on 1-element arrays, as the PLD code calls it."""
    return float(function(*(np.array([a]) for a in args))[0])


# ----------------------------------------------------------------------------- against mpmath


def test_log1mexp_matches_mpmath():
    with mp.workdps(DIGITS):
        for m in MAGNITUDES:
            x = -m
            exact = mp_log1mexp(mp.mpf(x))
            value = one(log1mexp, x)
            check_relative(value, exact)
            check(value, exact, [(x, mp.exp(mp.mpf(x)) / -mp.expm1(mp.mpf(x)))])


def test_log_expm1_matches_mpmath():
    with mp.workdps(DIGITS):
        for x in MAGNITUDES:
            xm = mp.mpf(x)
            exact = mp.log(mp.expm1(xm))
            check(one(log_expm1, x), exact, [(x, 1 / -mp.expm1(-xm))])


def test_log_expm1_is_relative_away_from_log2():
    # The relative error is C u except where the result crosses 0 at x = log 2.
    with mp.workdps(DIGITS):
        for x in MAGNITUDES:
            if abs(x - LOG2) > 0.1:
                check_relative(one(log_expm1, x), mp.log(mp.expm1(mp.mpf(x))))


def test_log1p_exp_matches_mpmath():
    with mp.workdps(DIGITS):
        for m in MAGNITUDES:
            for x in (m, -m):
                exact = mp.log1p(mp.exp(mp.mpf(x)))
                check_relative(one(log1p_exp, x), exact)


@pytest.mark.slow
def test_log_add_matches_mpmath():
    with mp.workdps(DIGITS):
        for a in LOG_VALUES:
            for b in LOG_VALUES:
                am, bm = mp.mpf(a), mp.mpf(b)
                high, low = max(am, bm), min(am, bm)
                exact = high + mp.log1p(mp.exp(low - high))
                check(one(log_add, a, b), exact, [(a, mp.exp(am - exact)), (b, mp.exp(bm - exact))])


@pytest.mark.slow
def test_log_sub_matches_mpmath():
    with mp.workdps(DIGITS):
        for a in LOG_VALUES:
            for b in LOG_VALUES:
                if a <= b:
                    assert one(log_sub, a, b) == -math.inf
                    continue
                am, bm = mp.mpf(a), mp.mpf(b)
                exact = am + mp_log1mexp(bm - am)
                check(one(log_sub, a, b), exact, [(a, mp.exp(am - exact)), (b, mp.exp(bm - exact))])


def test_identities_hold_on_whole_arrays():
    # Elementwise on arrays exactly as on single elements (no cross-talk of np.where branches).
    x = -np.array(MAGNITUDES)
    np.testing.assert_array_equal(log1mexp(x), [one(log1mexp, v) for v in x])
    np.testing.assert_array_equal(log1p_exp(x), [one(log1p_exp, v) for v in x])
    np.testing.assert_array_equal(log_expm1(-x), [one(log_expm1, v) for v in -x])
    a = np.array(LOG_VALUES)
    b = a[::-1].copy()
    np.testing.assert_array_equal(log_add(a, b), [one(log_add, p, q) for p, q in zip(a, b)])
    np.testing.assert_array_equal(log_sub(a, b), [one(log_sub, p, q) for p, q in zip(a, b)])


# ----------------------------------------------------------------------------- edge cases

INF = math.inf
NAN = math.nan


def same(computed, expected) -> bool:
    """Equal as floats, nan equal to nan, and the sign of 0 compared."""
    computed, expected = float(computed), float(expected)
    if math.isnan(expected):
        return math.isnan(computed)
    return computed == expected and math.copysign(1.0, computed) == math.copysign(1.0, expected)


@pytest.mark.parametrize(
    "function, args, expected",
    [
        (log1mexp, (0.0,), -INF),
        (log1mexp, (-0.0,), -INF),
        (log1mexp, (-INF,), -0.0),
        (log1mexp, (5e-324,), NAN),
        (log1mexp, (1.0,), NAN),
        (log1mexp, (1000.0,), NAN),
        (log1mexp, (INF,), NAN),
        (log1mexp, (NAN,), NAN),
        (log1mexp, (-800.0,), -0.0),  # -e^-800 underflows
        (log_expm1, (0.0,), -INF),
        (log_expm1, (INF,), INF),
        (log_expm1, (1e300,), 1e300),
        (log_expm1, (-1.0,), NAN),
        (log_expm1, (-INF,), NAN),
        (log_expm1, (NAN,), NAN),
        (log1p_exp, (-INF,), 0.0),
        (log1p_exp, (INF,), INF),
        (log1p_exp, (0.0,), LOG2),
        (log1p_exp, (-800.0,), 0.0),
        (log1p_exp, (800.0,), 800.0),
        (log1p_exp, (1.7976931348623157e308,), 1.7976931348623157e308),
        (log1p_exp, (NAN,), NAN),
        (log_add, (-INF, -INF), -INF),
        (log_add, (-INF, 3.0), 3.0),
        (log_add, (3.0, -INF), 3.0),
        (log_add, (INF, 3.0), INF),
        (log_add, (INF, -INF), INF),
        (log_add, (INF, INF), INF),
        (log_add, (0.0, 0.0), LOG2),
        (log_add, (-1.7976931348623157e308, 1.7976931348623157e308), 1.7976931348623157e308),
        (log_add, (NAN, 0.0), NAN),
        (log_sub, (3.0, -INF), 3.0),
        (log_sub, (INF, 3.0), INF),
        (log_sub, (-INF, -INF), -INF),
        (log_sub, (INF, INF), -INF),
        (log_sub, (-INF, 3.0), -INF),
        (log_sub, (3.0, 3.0), -INF),
        (log_sub, (3.0, 4.0), -INF),
        (log_sub, (1.7976931348623157e308, -1.7976931348623157e308), 1.7976931348623157e308),
        (log_sub, (-1.7976931348623157e308, 1.7976931348623157e308), -INF),
        (log_sub, (NAN, 1.0), -INF),
        (log_sub, (1.0, NAN), -INF),
        (log_sub, (NAN, -INF), NAN),
        (finite_abs, (-2.5,), 2.5),
        (finite_abs, (-INF,), 0.0),
        (finite_abs, (INF,), 0.0),
        (finite_abs, (NAN,), 0.0),
        (finite_abs, (-0.0,), 0.0),
    ],
)
def test_edge_cases_without_floating_point_errors(function, args, expected):
    # The PLD grid's error state (pld.py): any overflow, division by zero or invalid operation
    # left unmasked by the helper would be a FloatingPointError here. Underflow is not an error
    # there: e^-800 = 0 is the documented result of log1mexp(-800) and log1p_exp(-800).
    with np.errstate(over="raise", divide="raise", invalid="raise", under="ignore"):
        value = one(function, *args)
    assert same(value, expected), (function.__name__, args, value)


def test_zero_dimensional_and_scalar_inputs():
    assert float(log1mexp(-1.0)) == float(log1mexp(np.array(-1.0))) == one(log1mexp, -1.0)
    assert float(log_add(1.0, 2.0)) == one(log_add, 1.0, 2.0)
    assert float(log_sub(2.0, 1.0)) == one(log_sub, 2.0, 1.0)
    assert float(finite_abs(-3.0)) == 3.0
    assert log1p_exp(np.zeros((2, 3))).shape == (2, 3)


def test_no_scipy():
    import subprocess
    import sys

    code = "import sys, dpcalc.core.special_array; print('scipy' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


# ----------------------------------------------------------------------------- properties

finite_logs = st.floats(min_value=-700.0, max_value=700.0, allow_nan=False)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(finite_logs, finite_logs)
def test_log_add_is_symmetric_and_above_both(a, b):
    value = one(log_add, a, b)
    assert value == one(log_add, b, a)
    assert value >= max(a, b)
    assert value <= max(a, b) + LOG2 * (1 + 2 * U) + 2 * U * abs(max(a, b))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(finite_logs, finite_logs)
def test_log_sub_undoes_log_add(a, b):
    # log_sub(log_add(a, b), b) = a up to the condition of the round trip: rounding log_add's
    # result c costs u |c| in c, which log_sub amplifies by e^c / e^a = 1 + e^(b - a).
    c = one(log_add, a, b)
    back = one(log_sub, c, b)
    if back == -math.inf:
        # only when c rounded to b: e^(a - b) = c - b exactly was below half an ulp of b
        assert c == b and math.exp(a - b) <= 2 * U * abs(b)
        return
    amplification = 1.0 + math.exp(b - a)
    assert abs(back - a) <= 2 * C * U * (abs(c) * amplification + abs(a) + abs(b) * math.exp(b - a) + 1e-300)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=-700.0, max_value=0.0, allow_nan=False, exclude_max=True))
def test_log1mexp_agrees_with_log_expm1(x):
    # log(1 - e^x) = x + log(e^-x - 1): two identities, one value, up to the rounding of the
    # sums (a few u of |x| + |result|).
    value = one(log1mexp, x)
    assert abs(value - (x + one(log_expm1, -x))) <= 2 * C * U * (abs(x) + abs(value))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=-700.0, max_value=700.0, allow_nan=False))
def test_log1p_exp_is_logistic(x):
    # log(1 + e^x) - log(1 + e^-x) = x, and both are positive.
    up, down = one(log1p_exp, x), one(log1p_exp, -x)
    assert up >= 0.0 and down >= 0.0
    assert abs((up - down) - x) <= 2 * C * U * (abs(x) + up + down)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=1e-300, max_value=700.0))
def test_log_expm1_and_log1p_exp_round_trip(x):
    # log(1 + e^log(e^x - 1)) = x
    assert one(log1p_exp, one(log_expm1, x)) == pytest.approx(x, rel=2 * C * U * (1 + 1 / x), abs=1e-300)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=20))
def test_no_floating_point_errors_on_any_input(values):
    x = np.array(values)
    y = x[::-1].copy()
    with np.errstate(over="raise", divide="raise", invalid="raise", under="ignore"):
        finite_abs(x)
        log1mexp(x)
        log1p_exp(x)
        log_expm1(x)
        log_add(x, y)
        log_sub(x, y)
