"""Log-space normal functions against mpmath at 60 digits."""

from __future__ import annotations

import math

import mpmath as mp
import pytest

from dpcalc.core.special import (
    find_root,
    log1mexp,
    log_add,
    log_expm1,
    log_ndtr,
    log_sub,
    log_sum_exp,
    mills_ratio,
    mills_ratio_slope,
    ndtr,
    ndtri,
)

mp.mp.dps = 60

# Relative tolerance for single special-function values: they are accurate to a few ulps;
# 1e-13 leaves room for the ~40 ulps of the quantile's Newton polish deep in the tail.
RTOL = 1e-13


@pytest.mark.parametrize(
    "x", [-1e5, -3000.0, -200.0, -40.0, -38.5, -37.0, -20.0, -5.0, -1.5, -1.4999, -1.0, -0.1, 0.0,
          0.3, 1.4999, 1.5, 2.0, 5.0, 8.0, 9.0, 20.0]
)
def test_log_ndtr_matches_mpmath(x):
    expected = mp.log(mp.ncdf(x)) if x <= 0 else mp.log1p(-mp.ncdf(-x))
    assert log_ndtr(x) == pytest.approx(float(expected), rel=RTOL, abs=1e-300)


@pytest.mark.parametrize("x", [-37.0, -10.0, -2.0, -1.0, 0.0, 1.0, 3.0])
def test_ndtr_matches_mpmath(x):
    assert ndtr(x) == pytest.approx(float(mp.ncdf(x)), rel=RTOL)


@pytest.mark.parametrize("t", [-1.49, -1.0, 0.0, 0.5, 1.4999, 1.5, 1.7, 2.0, 3.0, 5.0, 10.0, 37.0, 1e3, 1e8])
def test_mills_ratio_matches_mpmath(t):
    expected = mp.ncdf(-t) / mp.npdf(t)
    assert mills_ratio(t) == pytest.approx(float(expected), rel=RTOL)


def test_mills_ratio_limits():
    assert mills_ratio(math.inf) == 0.0
    assert math.isnan(mills_ratio(math.nan))


@pytest.mark.parametrize(
    "probability",
    [1e-320, 1e-300, 1e-200, 1e-50, 1e-16, 1e-5, 0.001, 0.0999, 0.1, 0.3, 0.4999, 0.49999999, 0.5001, 0.9, 0.999, 1 - 1e-10],
)
def test_ndtri_matches_mpmath(probability):
    expected = mp.findroot(lambda x: mp.log(mp.ncdf(x)) - mp.log(probability), ndtri(probability))
    assert ndtri(probability) == pytest.approx(float(expected), rel=RTOL, abs=1e-15)


def test_ndtri_endpoints_and_domain():
    assert ndtri(0.5) == 0.0
    assert ndtri(0.0) == -math.inf
    assert ndtri(1.0) == math.inf
    with pytest.raises(ValueError, match="probability"):
        ndtri(1.5)


def test_log_space_helpers():
    assert log_add(math.log(2.0), math.log(3.0)) == pytest.approx(math.log(5.0), rel=1e-15)
    assert log_add(-math.inf, 1.0) == 1.0
    assert log_sub(math.log(5.0), math.log(3.0)) == pytest.approx(math.log(2.0), rel=1e-15)
    assert log_sub(1.0, 1.0) == -math.inf
    assert log1mexp(-1e-20) == pytest.approx(math.log(1e-20), rel=1e-15)
    assert log1mexp(-50.0) == pytest.approx(-math.exp(-50.0), rel=1e-15)
    assert log_expm1(1000.0) == pytest.approx(1000.0, rel=1e-15)
    assert log_expm1(1e-10) == pytest.approx(math.log(1e-10), rel=1e-9)
    assert log_sum_exp([1000.0, 1000.0]) == pytest.approx(1000.0 + math.log(2.0), rel=1e-15)
    assert log_sum_exp([]) == -math.inf
    with pytest.raises(ValueError):
        log_sub(0.0, 1.0)


def test_find_root_refuses_a_non_bracketing_interval():
    with pytest.raises(ValueError, match="does not bracket"):
        find_root(lambda x: x * x + 1.0, -1.0, 1.0)
    assert find_root(lambda x: x * x - 2.0, 0.0, 2.0) == pytest.approx(math.sqrt(2.0), rel=1e-15)


@pytest.mark.parametrize("t", [-1.0, 0.0, 1.0, 1.4999, 1.5, 2.0, 5.0, 37.0, 1e4])
def test_mills_ratio_slope_matches_mpmath(t):
    # 1 - t R(t) = -R'(t); for large t it is ~1/t^2 and must not cancel.
    with mp.workdps(80):
        expected = 1 - t * mp.ncdf(-t) / mp.npdf(t)
    assert mills_ratio_slope(t) == pytest.approx(float(expected), rel=RTOL)
