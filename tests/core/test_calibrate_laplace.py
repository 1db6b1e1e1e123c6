"""Calibrating the Laplace mechanism over k releases (docs/mathematics.md §7): the closed form at
k = 1 against mpmath, round trips through the PLD accountant, dp_accounting's Laplace PLD as an
independent oracle, the bracket between one release and basic composition, and the refusals."""

from __future__ import annotations

import math
from decimal import Decimal

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core import pld
from dpcalc.core.accountants import accountant
from dpcalc.core.calibrate import DEFAULT_PRECISION, calibrate
from dpcalc.core.calibrate.model import laplace_model_log_mu
from dpcalc.core.laplace import laplace_epsilon
from dpcalc.core.phases import Phase
from dpcalc.core.validation import ParameterError


def mp_boundary(target, delta, sensitivity):
    """The exact scale where one release's epsilon(delta) meets the target (mathematics.md §6), 40 digits."""
    with mp.workdps(40):
        return mp.mpf(sensitivity) / (mp.mpf(target) - 2 * mp.log1p(-mp.mpf(delta)))


def laplace(target, delta, steps, sensitivity=None, **options):
    return calibrate("scale", target, delta, steps=steps, mechanism="laplace", sensitivity=sensitivity, **options)


@pytest.mark.parametrize("target, delta, sensitivity", [
    (1.0, 1e-5, 1.0), (0.1, 1e-10, 2.0), (5.0, 0.2, 0.5), (0.0, 1e-5, 1.0), (2e-6, 1e-300, 3.0), (30.0, 1e-3, 1.0),
])
def test_one_release_is_the_closed_form_rounded_up(target, delta, sensitivity):
    result = laplace(target, delta, 1, sensitivity)
    assert result.exact and result.evaluations == 0 and result.feasible
    assert result.basis == "exact closed form (one Laplace release)"
    # the boundary is the closed form: one log1p and a division, ~1e-16 relative against mpmath
    exact = mp_boundary(target, delta, sensitivity)
    assert result.boundary == pytest.approx(float(exact), rel=1e-14)
    # the answer: the smallest six-digit decimal at or above it, whose exact epsilon meets the target
    assert exact <= mp.mpf(result.value) <= exact * (1 + DEFAULT_PRECISION / 10)
    assert len(Decimal(repr(result.value)).normalize().as_tuple().digits) <= 6
    # the closed form raised by its rounding error (3 ulps): an upper bound, within the target
    assert laplace_epsilon(delta, sensitivity / result.value) <= result.epsilon <= target
    assert result.certified_epsilon == result.epsilon == result.epsilon_lower
    # its grid neighbour below exceeds the target
    assert result.rejected is not None and result.rejected < result.value
    assert result.rejected_epsilon > target
    assert (result.sensitivity, result.steps, result.sampling_probability) == (sensitivity, 1, 1.0)


def test_one_release_beyond_the_grid_is_the_exact_float():
    # target 0 at delta 1e-300: b* = 1/(2e-300), past the grid's 1e6 sensitivities
    result = laplace(0.0, 1e-300, 1)
    assert result.precision is None and result.epsilon == 0.0
    assert result.value == pytest.approx(float(mp_boundary(0.0, 1e-300, 1.0)), rel=1e-14)
    assert result.value >= result.boundary


@pytest.mark.slow
@pytest.mark.parametrize("target, steps, sensitivity", [pytest.param(1.0, 20, 1.0, marks=pytest.mark.slow), (1.0, 10, 2.0), pytest.param(2.0, 100, 1.0, marks=pytest.mark.slow),
                                                        pytest.param(0.5, 30, 1.0, marks=pytest.mark.slow)])
def test_round_trip_through_the_pld_accountant(target, steps, sensitivity):
    delta = 1e-5
    result = laplace(target, delta, steps, sensitivity)
    assert result.feasible and not result.exact and result.accountant == "pld"
    # the answer's epsilon is the certified upper bound the accountant gives at that scale (the
    # search accounts b / D rounded down to a float, an ulp below the float nearest b / D at
    # most: toward a larger epsilon, by ~1e-14 relative)
    phase = Phase("laplace", scale=result.value / sensitivity, steps=steps)
    accounted = pld.tight_epsilon([phase], delta)
    assert result.epsilon == pytest.approx(accounted.epsilon_upper, rel=1e-12) and result.epsilon <= target
    assert result.epsilon_lower == pytest.approx(accounted.epsilon_lower, rel=1e-12)
    # within the precision of the boundary (interpolated, or shown by the rejected neighbour)
    if result.rejected is not None:
        assert result.rejected_epsilon > target
        assert (result.value - result.rejected) / result.value <= DEFAULT_PRECISION
    else:
        assert result.boundary is not None
        assert result.boundary * (1 - 1e-6) <= result.value <= result.boundary * (1 + DEFAULT_PRECISION)
    # bracketed by one release (the composition is no more private) and basic composition (k eps0)
    one = laplace(target, delta, 1, sensitivity).boundary
    assert one < result.value <= steps * sensitivity / target


def test_never_more_noise_than_basic_composition():
    # k = 2, eps0 = 1/2 each: basic composition gives exactly 1-DP at b = 2, the truth at delta
    # 1e-5 is a little below. With the RDP accountant, whose bound at b = 2 is above 1, the answer
    # is basic composition's scale.
    result = laplace(1.0, 1e-5, 2, accountant="rdp")
    assert result.value == 2.0 and result.epsilon == 1.0 and result.closed_form == "composition"
    assert result.basis == "basic composition of pure DP (k sensitivity / scale)"
    # the PLD accountant answers two releases from their exact profile (pld.exact_laplace): near the
    # top atom delta(eps) ~ (2/b - eps)/4, so b = 1.99998 already gives eps = 0.99997 < 1
    exact = laplace(1.0, 1e-5, 2)
    assert exact.value == 1.99998 and exact.epsilon <= 1.0 and exact.closed_form is None
    assert exact.basis == "PLD certified upper bound (exact Laplace composition, no grid)"
    assert exact.boundary is not None and exact.boundary <= exact.value
    # the same at a scale whose inverse is inexact: k D / b is rounded up, so never above the target
    odd = laplace(0.3, 1e-5, 3, 0.1, accountant="rdp")
    # (0.1 and 0.3 as binary floats make 3 D / E a hair above 1: the next grid value up)
    assert 1.0 <= odd.value <= 1.00001 and odd.epsilon <= 0.3


@pytest.mark.parametrize("target, steps", [(1.0, 2), pytest.param(1.0, 10, marks=pytest.mark.slow), pytest.param(2.0, 100, marks=pytest.mark.slow)])
def test_against_dp_accounting(target, steps):
    from dp_accounting.pld import privacy_loss_distribution

    result = laplace(target, 1e-5, steps)
    # dp_accounting 0.6.0 PLD of the Laplace mechanism (pessimistic estimate, discretisation 1e-4),
    # composed k times: an upper bound of its own, a few 1e-5 relative above the truth. At the
    # answer it must be within the target up to its discretisation, and not far below (the
    # answer spends the budget: within the precision, which moves epsilon by about as much).
    loss = privacy_loss_distribution.from_laplace_mechanism(result.value, sensitivity=1.0,
                                                            value_discretization_interval=1e-4)
    epsilon = loss.self_compose(steps).get_epsilon_for_delta(1e-5)
    assert target * (1 - 2e-3) <= epsilon <= target * (1 + 1e-3)


@pytest.mark.slow
def test_the_rdp_accountant_and_the_pld_ordering():
    result = laplace(1.0, 1e-5, 10, accountant="rdp")
    assert result.feasible and result.accountant == "rdp" and not result.exact
    phase = Phase("laplace", scale=result.value, steps=10)
    # the engine scales one step's RDP curve by k; the accountant sums it: equal to rounding
    assert result.epsilon == pytest.approx(accountant("rdp").epsilon([phase], 1e-5).epsilon, rel=1e-13)
    assert result.epsilon <= 1.0
    assert result.rejected_epsilon > 1.0
    # the tight accountant needs less noise than the RDP bound
    assert laplace(1.0, 1e-5, 10).value < result.value


@pytest.mark.slow
def test_more_releases_need_more_noise():
    scales = [laplace(1.0, 1e-5, steps).value for steps in (1, 2, 5, 20)]
    assert scales == sorted(scales)


@pytest.mark.slow
def test_sensitivity_scales_the_answer():
    # the grid is absolute, so the two answers agree to the precision, not exactly
    one, two = laplace(1.0, 1e-5, 10, 1.0).value, laplace(1.0, 1e-5, 10, 2.0).value
    assert two == pytest.approx(2.0 * one, rel=2 * DEFAULT_PRECISION)


@pytest.mark.parametrize("pure", [1e-6, 0.3, 0.499999, 0.5, 0.500001, 3.0, 80.0])
def test_the_model_matches_mpmath(pure):
    # log mu = (log 2 + log k + log KL)/2, KL = eps0 - 1 + e^-eps0 (mpmath, 40 digits): the
    # series below eps0 = 1/2 and expm1 above agree with it to 1e-14
    with mp.workdps(40):
        x = mp.mpf(pure)
        expected = (mp.log(2) + mp.log(7) + mp.log(x - 1 + mp.exp(-x))) / 2
    assert laplace_model_log_mu(1.0 / pure, 7.0) == pytest.approx(float(expected), rel=1e-13)


@pytest.mark.parametrize("options, message", [
    ({"accountant": "gdp"}, "the gdp accountant"),
    ({"sampling_probability": 0.5}, "sampling_probability does not apply to the laplace mechanism"),
    ({"noise_multiplier": 1.0}, "noise_multiplier does not apply to the laplace mechanism"),
    ({"steps": None}, "steps (the number of releases k) is required"),
])
def test_refusals(options, message):
    arguments = {"steps": 3, **options}
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        calibrate("scale", 1.0, 1e-5, mechanism="laplace", **arguments)


def test_refusals_of_quantity_and_mechanism():
    with pytest.raises(ValueError, match="the laplace mechanism solves for scale, not sigma"):
        calibrate("sigma", 1.0, 1e-5, mechanism="laplace", steps=3)
    with pytest.raises(ValueError, match="the gaussian mechanism solves for sigma, T, p, epochs, batch_size, not scale"):
        calibrate("scale", 1.0, 1e-5, steps=3)
    with pytest.raises(ValueError, match="sensitivity applies to the laplace mechanism"):
        calibrate("sigma", 1.0, 1e-5, sampling_probability=0.1, steps=3, sensitivity=2.0)
    with pytest.raises(ParameterError):
        calibrate("scale", 1.0, 1e-5, mechanism="laplace", steps=3, sensitivity=-1.0)
    with pytest.raises(ParameterError, match=r"sensitivity must be in \(0, inf\), got inf"):
        calibrate("scale", 1.0, 1e-5, mechanism="laplace", steps=3, sensitivity=math.inf)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.floats(0.0, 50.0), st.floats(1e-12, 0.5), st.floats(1e-3, 1e3))
def test_one_release_property(target, delta, sensitivity):
    # the answer's exact epsilon (the closed form, mpmath at 40 digits from the float inputs)
    # meets the target, and the scale is within the precision of the exact boundary
    result = laplace(target, delta, 1, sensitivity)
    with mp.workdps(40):
        exact_epsilon = max(mp.mpf(0), mp.mpf(sensitivity) / mp.mpf(result.value) + 2 * mp.log1p(-mp.mpf(delta)))
    assert exact_epsilon <= result.epsilon <= target
    boundary = mp_boundary(target, delta, sensitivity)
    if result.precision is not None:
        assert boundary <= mp.mpf(result.value) <= boundary * (1 + DEFAULT_PRECISION / 10)
