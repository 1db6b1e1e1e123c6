"""The Laplace mechanism's privacy profile (docs/mathematics.md §6): the closed forms against
mpmath, dp_accounting's LaplacePrivacyLoss (a test-only oracle) and a quadrature of the
hockey-stick divergence, their round trips, and `convert` in both directions."""

from __future__ import annotations

import math

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core.conversions import Guarantee, Target, convert
from dpcalc.core.laplace import laplace_delta, laplace_epsilon, laplace_pure_epsilon
from dpcalc.core.validation import ParameterError

MP_DIGITS = 40

# Each closed form is one expm1 or log1p of an exact difference or sum: ~1e-16 relative
# against mpmath, so 1e-13 has room and still catches a formula that cancels (1 - exp(x) in
# float loses every digit near eps0). Near the zero of eps0 + 2 log(1 - delta) the difference
# cancels by nature: there the comparison is absolute, at the size of eps0's last digit.
RTOL = 1e-13


def mp_delta(epsilon, pure):
    with mp.workdps(MP_DIGITS):
        if epsilon >= pure:
            return mp.mpf(0)
        return 1 - mp.exp((mp.mpf(epsilon) - mp.mpf(pure)) / 2)


def mp_epsilon(delta, pure):
    with mp.workdps(MP_DIGITS):
        return max(mp.mpf(0), mp.mpf(pure) + 2 * mp.log(1 - mp.mpf(delta)))


def quadrature_delta(epsilon, scale, sensitivity):
    """The hockey-stick divergence E_Q[(p/q - e^eps)+] of Lap(0, b) and Lap(D, b) by quadrature
    (mpmath, split at the loss's kinks 0 and D and at x* where the loss equals eps)."""
    with mp.workdps(30):
        b, d, e = mp.mpf(scale), mp.mpf(sensitivity), mp.mpf(epsilon)

        def integrand(x):
            p = mp.exp(-abs(x) / b) / (2 * b)
            q = mp.exp(-abs(x - d) / b) / (2 * b)
            return max(p - mp.exp(e) * q, 0)

        cut = (d - e * b) / 2
        points = sorted({-mp.inf, mp.mpf(0), min(max(cut, 0), d), d, mp.inf})
        return mp.quad(integrand, points)


@pytest.mark.parametrize("pure", [1e-8, 1e-3, 0.5, 1.0, 7.0, 50.0, 700.0, 1e5])
@pytest.mark.parametrize("fraction", [0.0, 1e-9, 0.1, 0.5, 0.9, 0.999999, 1.0, 2.0])
def test_delta_matches_mpmath(pure, fraction):
    epsilon = fraction * pure
    assert laplace_delta(epsilon, pure) == pytest.approx(float(mp_delta(epsilon, pure)), rel=RTOL, abs=0.0)


@pytest.mark.parametrize("pure", [1e-3, 0.5, 1.0, 7.0, 50.0, 1e5])
@pytest.mark.parametrize("delta", [0.0, 1e-300, 1e-12, 1e-5, 0.01, 0.2, 0.5, 0.999999])
def test_epsilon_matches_mpmath(pure, delta):
    expected = mp_epsilon(delta, pure)
    assert laplace_epsilon(delta, pure) == pytest.approx(float(expected), rel=RTOL, abs=4 * math.ulp(pure))


@pytest.mark.parametrize("scale, sensitivity", [(1.0, 1.0), (2.0, 1.0), (0.5, 3.0)])
@pytest.mark.parametrize("epsilon", [0.0, 0.3, 0.9, 1.7])
def test_delta_matches_the_hockey_stick_divergence_and_dp_accounting(scale, sensitivity, epsilon):
    from dp_accounting.pld.privacy_loss_mechanism import LaplacePrivacyLoss

    pure = sensitivity / scale
    value = laplace_delta(epsilon, pure)
    # mpmath quadrature at 30 digits: the integrand is smooth between the split points
    assert value == pytest.approx(float(quadrature_delta(epsilon, scale, sensitivity)), rel=1e-12, abs=1e-15)
    # dp_accounting 0.6.0 LaplacePrivacyLoss(b, sensitivity).get_delta_for_epsilon: its own
    # closed form in float (agrees to a few ulps; its 5.6e-17 at eps = eps0 is rounding)
    oracle = LaplacePrivacyLoss(scale, sensitivity=sensitivity).get_delta_for_epsilon(epsilon)
    assert value == pytest.approx(oracle, rel=1e-12, abs=1e-15)


def test_reference_values():
    # delta(0) at eps0 = 1: 1 - e^(-1/2) = 0.393469340287366576... (mpmath, 40 digits)
    assert laplace_delta(0.0, 1.0) == pytest.approx(0.39346934028736658, rel=1e-15)
    assert laplace_epsilon(0.0, 1.0) == 1.0 and laplace_pure_epsilon(1.0, 0.0) == 1.0
    assert laplace_delta(1.0, 1.0) == 0.0 and laplace_delta(3.0, 1.0) == 0.0
    assert laplace_epsilon(0.5, 1.0) == 0.0  # delta above delta(0) = 0.3935
    assert laplace_delta(0.0, math.inf) == 1.0 and laplace_epsilon(1e-5, math.inf) == math.inf


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.floats(1e-6, 1e4), st.floats(0.0, 0.999999))
def test_round_trips(pure, fraction):
    epsilon = fraction * pure
    delta = laplace_delta(epsilon, pure)
    # delta's rounding (an ulp, 1.1e-16) moves 2 log(1 - delta) by 2.2e-16 / (1 - delta): the
    # problem's own conditioning, which grows without bound as delta nears 1 (eps0 above ~30)
    if not 1e-300 < delta < 1.0 - 1e-6:  # a delta that underflows says nothing about epsilon
        return
    slack = 1e-14 * pure + 4.5e-16 / (1.0 - delta)
    assert laplace_epsilon(delta, pure) == pytest.approx(epsilon, rel=1e-9, abs=slack)
    # the largest eps0 meeting (epsilon, delta) is eps0 itself
    assert laplace_pure_epsilon(epsilon, delta) == pytest.approx(pure, rel=1e-9, abs=slack)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.floats(0.0, 50.0), st.floats(0.0, 50.0), st.floats(1e-3, 50.0))
def test_delta_falls_with_epsilon_and_grows_with_pure_epsilon(first, second, pure):
    low, high = sorted((first, second))
    assert laplace_delta(high, pure) <= laplace_delta(low, pure)
    assert laplace_delta(low, pure) <= laplace_delta(low, 2.0 * pure)


@pytest.mark.parametrize("call", [
    lambda: laplace_delta(-1.0, 1.0),
    lambda: laplace_delta(0.0, -1.0),
    lambda: laplace_epsilon(1.0, 1.0),
    lambda: laplace_pure_epsilon(1.0, -0.1),
])
def test_out_of_range_arguments_are_refused(call):
    with pytest.raises(ParameterError):
        call()


def test_convert_laplace_to_dp_and_back():
    source = Guarantee("laplace", scale=2.0, sensitivity=3.0)
    at_delta = convert(source, Target("dp", delta=1e-5)).values
    assert at_delta == {"epsilon": laplace_epsilon(1e-5, 1.5), "delta": 1e-5}
    at_epsilon = convert(source, Target("dp", epsilon=0.5)).values
    assert at_epsilon == {"epsilon": 0.5, "delta": laplace_delta(0.5, 1.5)}
    assert convert(source, Target("dp")).values == {"epsilon": 1.5, "delta": 0.0}
    scale = convert(Guarantee("dp", epsilon=at_delta["epsilon"], delta=1e-5), Target("laplace", sensitivity=3.0))
    assert scale.values["scale"] == pytest.approx(2.0, rel=1e-14)
    assert "privacy profile" in scale.theorem
