"""The subsampled Gaussian's RDP above SUMMED_ORDER (dpcalc.core.rdp.large_orders) against mpmath.

Reference: A_a = E_{z ~ N(0, sigma^2)}[(1 - q + q e^((2z - 1)/(2 sigma^2)))^a] (Mironov, Talwar,
Zhang 2019, Thm 4), integrated by mpmath.quad at 40 digits with the integrand's peak (z ~ a)
as a break point; the RDP is log(A_a) / (a - 1).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core import rdp as core
from dpcalc.core.limits import SUMMED_ORDER
from dpcalc.core.rdp.large_orders import large_order_rdp


def reference(q: float, sigma: float, order: float) -> mpmath.mpf:
    with mpmath.workdps(40):
        q_, s, a = mpmath.mpf(q), mpmath.mpf(sigma), mpmath.mpf(order)

        def integrand(z):
            log_ratio = (2 * z - 1) / (2 * s * s)
            return mpmath.exp(a * mpmath.log(1 - q_ + q_ * mpmath.exp(log_ratio)) - z * z / (2 * s * s))

        points = [-mpmath.inf, 0, a - 60 * s, a - 10 * s, a, a + 10 * s, a + 60 * s, mpmath.inf]
        total = mpmath.quad(integrand, points) / mpmath.sqrt(2 * mpmath.pi * s * s)
        return mpmath.log(total) / (a - 1)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("q", "sigma", "order"),
    [
        pytest.param(0.01, 1.0, 2e5, marks=pytest.mark.slow),
        pytest.param(0.01, 5.0, 1e6, marks=pytest.mark.slow),
        pytest.param(0.001, 50.0, 2e5, marks=pytest.mark.slow),
        pytest.param(0.3, 1.0, 1e10, marks=pytest.mark.slow),
        (0.004, 1.1, 1e10),
        pytest.param(1e-6, 10.0, 123456.5, marks=pytest.mark.slow),  # fractional: the chord of the integer bounds
        (0.5, 3.0, 1e100),
    ],
)
def test_exact_where_the_bracket_is_narrow(q, sigma, order):
    values, bounded = core.subsampled_gaussian_rdp(q, sigma, [order])
    assert bounded == ()
    if order < 1e15:  # mpmath's quadrature at order 1e100 is beyond its reach; the closed form:
        assert float(abs(values[0] - reference(q, sigma, order)) / reference(q, sigma, order)) < 1e-10
    else:
        assert values[0] == pytest.approx(order / (2 * sigma * sigma) + math.log(q), rel=1e-15)


@pytest.mark.slow
def test_flagged_bound_where_the_noise_is_large_for_the_order():
    # sigma = 1000 at order 2e5: the bracket is wide; the value is a sound upper bound, named
    values, bounded = core.subsampled_gaussian_rdp(0.01, 1000.0, [2e5, 3e5])
    assert [bound.order for bound in bounded] == [2e5, 3e5]
    assert values[0] >= float(reference(0.01, 1000.0, 2e5))
    assert np.all(values <= np.array([2e5, 3e5]) / (2 * 1000.0**2))  # the unsampled Gaussian


@pytest.mark.parametrize(("q", "sigma"), [(0.01, 1.0), (0.004, 1.1), (1e-4, 20.0), (0.5, 40.0)])
def test_agrees_with_the_term_by_term_sum_at_the_boundary(q, sigma):
    # at order SUMMED_ORDER both computations apply: the binomial sum (integer_orders) and the bracket
    summed, _ = core.subsampled_gaussian_rdp(q, sigma, [SUMMED_ORDER])
    bracket, exact = large_order_rdp(q, sigma, np.array([SUMMED_ORDER]))
    assert exact[0]
    assert bracket[0] == pytest.approx(summed[0], rel=1e-12)


def test_uniform_sampling_above_the_summed_orders_is_the_unsampled_value():
    from dpcalc.core.rdp.without_replacement import uniform_gaussian_rdp

    values = uniform_gaussian_rdp(0.01, 2.0, [8.0, 2e5, 1e10])
    assert values[1:].tolist() == [2 * 2e5 / 4.0, 2 * 1e10 / 4.0]
    assert values[0] == uniform_gaussian_rdp(0.01, 2.0, [8.0])[0]


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(
    log_q=st.floats(-8.0, -0.01),
    log_sigma=st.floats(-1.0, 4.0),
    log_order=st.floats(5.0001, 60.0),
)
def test_sound_and_monotone(log_q, log_sigma, log_order):
    # between the lower side a log q + a(a-1)/(2 sigma^2) (over a - 1) and the unsampled Gaussian,
    # and non-decreasing in the order (van Erven, Harremoes 2014, Thm 3), also across SUMMED_ORDER
    q, sigma, order = 10.0**log_q, 10.0**log_sigma, 10.0**log_order
    orders = [SUMMED_ORDER, order, order * 1.5]
    values, _ = core.subsampled_gaussian_rdp(q, sigma, orders)
    unsampled = np.array(orders) / (2 * sigma * sigma)
    assert np.all(values <= unsampled * (1 + 1e-12))
    lower = max(0.0, order / (order - 1) * math.log(q) + order / (2 * sigma * sigma))
    assert values[1] >= lower * (1 - 1e-12)
    assert np.all(np.diff(values) >= -1e-10 * values[1:])
