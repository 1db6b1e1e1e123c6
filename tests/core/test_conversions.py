"""Conversions core: mpmath references, public reference values (docs/reference-values.md), peers
as oracles, round trips and properties."""

from __future__ import annotations

import math

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core import conversions as conv
from dpcalc.core import gdp, zcdp
from dpcalc.core.conversions import (
    AVAILABLE,
    SOURCE_NOTIONS,
    TARGET_NOTIONS,
    TERMS,
    ConversionError,
    GroupRefusal,
    Guarantee,
    Target,
    analytic_gaussian_mu,
    calibrate_gaussian,
    classic_gaussian_sigma,
    convert,
    dp_tradeoff,
    group_dp,
    laplace_rdp,
    pure_dp_to_mu,
    randomized_response_rdp,
    refusal,
    tradeoff_alphas,
)
from dpcalc.core.conversions.converters import CONVERTERS
from dpcalc.core.validation import ParameterError

# The accuracy target against mpmath.
RTOL = 1e-9
DIGITS = 60


def mp_delta(epsilon, mu):
    """delta(eps; mu) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Dong, Roth, Su Cor. 2.13), 400 digits.

    The difference cancels to ~1e-300 relative for the tiny mu covered here, hence the digits.
    """
    with mp.workdps(400):
        epsilon, mu = mp.mpf(epsilon), mp.mpf(mu)
        if epsilon == 0:
            return +mp.erf(mu / (2 * mp.sqrt(2)))
        return +(mp.ncdf(-epsilon / mu + mu / 2) - mp.exp(epsilon) * mp.ncdf(-epsilon / mu - mu / 2))


# --- the Gaussian mechanism -----------------------------------------------------------------


def test_spec_gaussian_calibration():
    # reference values (docs/reference-values.md, Gaussian calibration): eps = 1, delta = 1e-5, sensitivity 1 ->
    # analytic 3.730632, classic 4.844805
    # (6 decimals printed, so abs 5e-7).
    calibration = calibrate_gaussian(1.0, 1e-5)
    assert calibration.sigma == pytest.approx(3.730632, abs=5e-7)
    assert calibration.sigma_classic == pytest.approx(4.844805, abs=5e-7)
    assert calibration.classic_valid is False
    assert "valid only for 0 < eps < 1" in calibration.warnings[0]


def test_classic_formula_and_validity():
    calibration = calibrate_gaussian(0.5, 1e-6, sensitivity=2.0)
    assert calibration.classic_valid is True and calibration.warnings == ()
    assert calibration.sigma_classic == 2.0 * math.sqrt(2.0 * math.log(1.25e6)) / 0.5
    # The classic sigma is valid (for eps < 1) but never smaller than the exact one.
    assert calibration.sigma < calibration.sigma_classic
    assert classic_gaussian_sigma(0.0, 1e-5) == math.inf


EPSILONS = [0.0, 1e-10, 1e-6, 1e-3, 0.1, 0.5, 1.0, 3.0, 10.0, 100.0, 1e4, 1e8]
CALIBRATION_DELTAS = [1e-300, 1e-100, 1e-20, 1e-10, 1e-5, 1e-2, 0.3, 0.7, 0.99]


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("delta", CALIBRATION_DELTAS)
def test_analytic_mu_matches_mpmath(epsilon, delta):
    # delta(eps; mu) increases with mu, so mu is correct to relative RTOL iff mpmath (400 digits)
    # puts delta on each side of the target at mu (1 -+ RTOL).
    mu = analytic_gaussian_mu(epsilon, delta)
    assert mp_delta(epsilon, mu * (1 - RTOL)) <= delta <= mp_delta(epsilon, mu * (1 + RTOL))


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize("delta", CALIBRATION_DELTAS)
def test_analytic_sigma_is_sound(epsilon, delta):
    # The returned sigma meets (eps, delta) exactly (mpmath), with a sensitivity that does not round.
    sigma = calibrate_gaussian(epsilon, delta, sensitivity=4.0).sigma
    assert mp_delta(epsilon, mp.mpf(4) / mp.mpf(sigma)) <= delta


@pytest.mark.parametrize("epsilon", [0.01, 0.1, 0.5, 1.0, 2.0, 8.0, 50.0])
@pytest.mark.parametrize("delta", [1e-12, 1e-8, 1e-5, 1e-3, 0.1])
def test_analytic_sigma_matches_dp_accounting(epsilon, delta):
    # dp_accounting 0.6.0 gaussian_mechanism.get_sigma_gaussian (scipy brentq, tol 1e-12 absolute on sigma).
    from dp_accounting.gaussian_mechanism import get_sigma_gaussian

    peer = get_sigma_gaussian(epsilon, delta, tol=1e-12)
    assert calibrate_gaussian(epsilon, delta).sigma == pytest.approx(peer, rel=1e-9)


def test_round_trip_gdp_to_dp_to_gaussian_gives_sensitivity_over_mu():
    # The round trip: gdp -> dp, then dp -> gaussian gives sigma = sensitivity / mu back.
    for mu in (0.05, 0.3, 1.0, 2.5, 10.0):
        for delta in (1e-10, 1e-5, 1e-2):
            epsilon = gdp.epsilon_for_delta(delta, mu)
            if epsilon == 0.0:
                continue
            sigma = calibrate_gaussian(epsilon, delta, sensitivity=3.0).sigma
            assert sigma == pytest.approx(3.0 / mu, rel=1e-9)


def test_calibration_epsilon_zero_is_the_advantage_equation():
    # eps = 0: 2 Phi(mu/2) - 1 = delta; for tiny delta mu = delta sqrt(2 pi) to first order.
    assert analytic_gaussian_mu(0.0, 1e-300) == pytest.approx(1e-300 * math.sqrt(2 * math.pi), rel=1e-15)
    assert gdp.max_advantage(analytic_gaussian_mu(0.0, 0.7)) == pytest.approx(0.7, rel=1e-14)


# --- zCDP -----------------------------------------------------------------------------------


def mp_zcdp_epsilon(rho, delta):
    """CKS: inf over a > 1 of a rho + (L + (a-1) ln(1 - 1/a) - ln a)/(a - 1), via the root of the derivative."""
    with mp.workdps(DIGITS):
        rho, level = mp.mpf(rho), -mp.log(mp.mpf(delta))
        g = lambda a: a * rho + (level + (a - 1) * mp.log(1 - 1 / a) - mp.log(a)) / (a - 1)  # noqa: E731
        h = lambda v: rho * mp.exp(2 * v) + mp.log1p(mp.exp(v)) - level  # noqa: E731
        low, high = mp.log(mp.mpf(10) ** -30), mp.log(mp.sqrt(level / rho))
        for _ in range(220):  # bisection: h increases in v
            middle = (low + high) / 2
            low, high = (middle, high) if h(middle) < 0 else (low, middle)
        return max(mp.mpf(0), g(1 + mp.exp(low)))


RHOS = [1e-12, 1e-6, 1e-3, 0.01, 0.1, 0.5, 1.0, 10.0, 1e3, 1e6]
ZCDP_DELTAS = [1e-300, 1e-50, 1e-10, 1e-5, 1e-2, 0.3, 0.9]


@pytest.mark.parametrize("rho", RHOS)
@pytest.mark.parametrize("delta", ZCDP_DELTAS)
def test_zcdp_epsilon_matches_mpmath(rho, delta):
    epsilon, order = zcdp.zcdp_epsilon(rho, delta)
    reference = float(mp_zcdp_epsilon(rho, delta))
    if reference == 0.0:
        assert epsilon == 0.0
    else:
        assert epsilon == pytest.approx(reference, rel=RTOL)
    assert order > 1.0


@pytest.mark.parametrize("rho", RHOS)
@pytest.mark.parametrize("delta", ZCDP_DELTAS)
def test_zcdp_epsilon_is_a_valid_bound_below_bs16(rho, delta):
    epsilon, order = zcdp.zcdp_epsilon(rho, delta)
    # Any order gives a valid epsilon (CKS Prop. 12): the reported one is that of its order.
    assert epsilon == pytest.approx(max(0.0, conv.rdp_to_epsilon(order, order * rho, delta)), rel=1e-12, abs=1e-300)
    assert epsilon <= zcdp.epsilon_bs16(rho, delta) * (1 + 1e-15)


def test_zcdp_delta_matches_mpmath_and_round_trips():
    for rho in (1e-4, 0.01, 0.5, 1.0, 10.0, 100.0):
        for delta in (1e-200, 1e-10, 1e-5, 0.01):
            epsilon, _ = zcdp.zcdp_epsilon(rho, delta)
            if epsilon == 0.0:
                continue
            back, order = zcdp.zcdp_delta(rho, epsilon)
            assert back == pytest.approx(delta, rel=1e-8)
            with mp.workdps(DIGITS):
                # mpmath: the minimum over a of log delta(a) is at least as small as ours.
                a = mp.mpf(order)
                log_delta = (a - 1) * (a * rho - epsilon + mp.log(1 - 1 / a)) - mp.log(a)
                assert math.log(back) == pytest.approx(float(log_delta), rel=1e-12)


@pytest.mark.slow
def test_zcdp_against_dp_accounting_fine_grid():
    # dp_accounting 0.6.0 compute_epsilon (the same CKS conversion) over a fine order grid: its
    # epsilon is never below the infimum, and approaches it.
    import numpy as np
    from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon

    orders = np.concatenate([1 + np.logspace(-4, 0, 2000), np.linspace(2.001, 200, 20000)])
    for rho in (0.01, 0.1, 0.5, 2.0):
        for delta in (1e-10, 1e-5):
            ours, _ = zcdp.zcdp_epsilon(rho, delta)
            peer, _ = compute_epsilon(orders, orders * rho, delta)
            assert ours <= peer * (1 + 1e-12)
            assert peer == pytest.approx(ours, rel=1e-5)


def test_bs16_values():
    # Bun, Steinke 2016 Prop. 1.3 at rho = 0.5, delta = 1e-5: 0.5 + 2 sqrt(0.5 ln 1e5).
    assert zcdp.epsilon_bs16(0.5, 1e-5) == pytest.approx(0.5 + 2 * math.sqrt(0.5 * math.log(1e5)), rel=1e-15)
    assert zcdp.delta_bs16(0.5, 0.4) == 1.0
    assert zcdp.delta_bs16(0.5, zcdp.epsilon_bs16(0.5, 1e-5)) == pytest.approx(1e-5, rel=1e-12)


def test_zcdp_edge_cases():
    assert zcdp.zcdp_delta(1e3, 10.0) == (1.0, 1.0)  # optimum within 1e-300 of order 1: vacuous
    delta, order = zcdp.zcdp_delta(1e-310, 1.0)  # subnormal rho: the largest order is used
    assert delta == 0.0 and order > 1e300
    with pytest.raises(ValueError):
        zcdp.zcdp_guarantee(0.5)
    with pytest.raises(ParameterError):
        zcdp.zcdp_epsilon(-1.0, 1e-5)


# --- pure DP, RDP curves ----------------------------------------------------------------------


def mp_rr_rdp(order, epsilon):
    """Mironov 2017, randomized response with p = e^eps/(1 + e^eps)."""
    with mp.workdps(DIGITS):
        order, epsilon = mp.mpf(order), mp.mpf(epsilon)
        w, v = 1 / (1 + mp.exp(-epsilon)), mp.exp(-epsilon) / (1 + mp.exp(-epsilon))
        return mp.log(w**order * v ** (1 - order) + v**order * w ** (1 - order)) / (order - 1)


def mp_laplace_rdp(order, x):
    """Mironov 2017 Prop. 6 with x = sensitivity / scale."""
    with mp.workdps(DIGITS):
        order, x = mp.mpf(order), mp.mpf(x)
        return mp.log(
            order / (2 * order - 1) * mp.exp((order - 1) * x) + (order - 1) / (2 * order - 1) * mp.exp(-order * x)
        ) / (order - 1)


ORDERS = [1 + 1e-10, 1.0001, 1.01, 1.5, 2.0, 10.0, 100.0, 1e4]


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("epsilon", [1e-8, 1e-3, 0.1, 1.0, 5.0, 50.0, 800.0])
def test_randomized_response_rdp_matches_mpmath(order, epsilon):
    value = randomized_response_rdp(order, epsilon)
    assert value == pytest.approx(float(mp_rr_rdp(order, epsilon)), rel=1e-13)
    # Below both simple bounds: eps (Mironov Prop. 1) and order eps^2/2 (Bun, Steinke Prop. 1.4).
    assert value <= min(epsilon, order * epsilon * epsilon / 2) * (1 + 1e-14)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("scale", [1e-3, 0.1, 1.0, 3.0, 100.0, 1e4, 1e8])
def test_laplace_rdp_matches_mpmath(order, scale):
    value = laplace_rdp(order, scale)
    assert value == pytest.approx(float(mp_laplace_rdp(order, 1 / mp.mpf(scale))), rel=1e-13)


@pytest.mark.parametrize("order", [1.2, 1.5, 2.0, 7.5, 64.0])
@pytest.mark.parametrize("scale", [0.5, 1.0, 10.0])
def test_laplace_rdp_matches_dp_accounting(order, scale):
    # dp_accounting 0.6.0 rdp_privacy_accountant._laplace_rdp(eps = 1/b, order).
    from dp_accounting.rdp.rdp_privacy_accountant import _laplace_rdp

    assert laplace_rdp(order, scale) == pytest.approx(_laplace_rdp(1 / scale, order), rel=1e-12)
    assert laplace_rdp(order, 2 * scale, sensitivity=2.0) == pytest.approx(laplace_rdp(order, scale), rel=1e-15)


@pytest.mark.parametrize("epsilon", [1e-12, 1e-6, 1e-3, 0.1, 1.0, 10.0, 100.0, 700.0, 1e4])
def test_pure_dp_to_mu_matches_mpmath(epsilon):
    mu = pure_dp_to_mu(epsilon)
    with mp.workdps(DIGITS):
        # Phi(-mu/2) = 1/(1 + e^eps), compared in log space.
        log_tail = -mp.mpf(epsilon) - mp.log1p(mp.exp(-mp.mpf(epsilon)))
        reference = mp.findroot(lambda m: mp.log(mp.ncdf(-m / 2)) - log_tail, mp.mpf(mu))
        assert mu == pytest.approx(float(reference), rel=RTOL)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0])
def test_pure_dp_mu_curve_lies_below_the_dp_curve_and_touches_it(epsilon):
    mu = pure_dp_to_mu(epsilon)
    for alpha in tradeoff_alphas(201):
        assert gdp.tradeoff(alpha, mu) <= dp_tradeoff(alpha, epsilon, 0.0) + 1e-15
    touch = 1 / (1 + math.exp(epsilon))
    assert gdp.tradeoff(touch, mu) == pytest.approx(touch, rel=1e-12)  # tight: they meet on the diagonal


def test_dp_tradeoff_values():
    assert dp_tradeoff(0.0, 1.0, 1e-5) == 1 - 1e-5
    assert dp_tradeoff(1.0, 1.0, 1e-5) == 0.0
    assert dp_tradeoff(0.1, 1.0, 0.0) == pytest.approx(1 - math.e * 0.1, rel=1e-15)
    assert dp_tradeoff(0.5, 1.0, 0.0) == pytest.approx(math.exp(-1) * 0.5, rel=1e-15)
    assert dp_tradeoff(0.25, 2000.0, 0.0) == 0.0  # e^eps alpha overflows float64: compared in logs
    assert tradeoff_alphas(5) == (0.0, 0.25, 0.5, 0.75, 1.0)


def test_group_dp():
    assert group_dp(1.0, 1e-6, 1) == (1.0, 1e-6)
    epsilon, delta = group_dp(0.5, 1e-6, 3)
    assert epsilon == 1.5
    assert delta == pytest.approx(1e-6 * (1 + math.exp(0.5) + math.exp(1.0)), rel=1e-14)
    assert delta <= 3 * math.exp(2 * 0.5) * 1e-6  # never above k e^((k-1) eps) delta (docs/mathematics.md §6)
    assert group_dp(0.0, 1e-3, 4) == (0.0, pytest.approx(4e-3))
    assert group_dp(2.0, 0.0, 5) == (10.0, 0.0)
    assert group_dp(1.0, 1e-5, 1000)[1] == 1.0  # capped


# --- dispatch ---------------------------------------------------------------------------------


def test_every_pair_is_converted_or_refused():
    for source in SOURCE_NOTIONS:
        for target in TARGET_NOTIONS:
            converted = (source, target) in CONVERTERS
            refused = refusal(source, target) is not None
            assert converted != refused, (source, target)
            if refused:
                error = refusal(source, target)
                assert (error.source, error.target, error.alternatives) == (source, target, AVAILABLE[source])
                assert f"From {source}, dpcalc converts to: {AVAILABLE[source].format_map(TERMS)}." in str(error)
                assert "--" not in str(error)  # the core names no command-line option


def test_zcdp_to_gdp_is_refused_as_one_way():
    with pytest.raises(ConversionError, match=r"gdp -> zcdp \(rho = mu\^2/2\) exists, one way only"):
        convert(Guarantee("zcdp", rho=0.5), Target("gdp"))


@pytest.mark.parametrize("target", ["gdp", "zcdp", "rdp"])
def test_approximate_dp_to_pure_notions_is_refused(target):
    with pytest.raises(ConversionError, match="delta > 0"):
        convert(Guarantee("dp", epsilon=1.0, delta=1e-5), Target(target))


def test_pure_dp_conversions():
    pure = Guarantee("dp", epsilon=1.0, delta=0.0)
    assert convert(pure, Target("zcdp")).values == {"rho": 0.5}
    assert convert(pure, Target("laplace", sensitivity=2.0)).values == {"scale": 2.0}
    assert convert(pure, Target("gdp")).values["mu"] == pure_dp_to_mu(1.0)
    curve = convert(pure, Target("rdp", orders=(2.0, 8.0))).values["curve"]
    assert [point["order"] for point in curve] == [2.0, 8.0]
    with pytest.raises(ConversionError, match="no Gaussian noise gives pure DP"):
        convert(pure, Target("gaussian"))


def test_mechanism_conversions_and_theorems():
    gaussian = Guarantee("gaussian", noise_std=2.0, sensitivity=3.0)
    assert convert(gaussian, Target("gdp")).values == {"mu": 1.5}
    assert convert(gaussian, Target("zcdp")).values == {"rho": 1.125}
    result = convert(gaussian, Target("dp", delta=1e-5))
    assert result.values["epsilon"] == gdp.epsilon_for_delta(1e-5, 1.5)
    assert "Balle, Wang 2018, Thm 8" in result.theorem
    laplace = Guarantee("laplace", scale=2.0, sensitivity=1.0)
    assert convert(laplace, Target("dp")).values == {"epsilon": 0.5, "delta": 0.0}
    assert convert(laplace, Target("zcdp")).values == {"rho": 0.125}
    assert convert(Guarantee("zcdp", rho=0.125), Target("gaussian")).values == {"noise_std": 2.0}
    assert convert(Guarantee("gdp", mu=0.5), Target("gaussian", sensitivity=2.0)).values == {"noise_std": 4.0}
    # rdp -> gaussian inverts the Gaussian RDP (Mironov 2017): order/(2 sigma^2) = rdp.
    sigma = convert(Guarantee("rdp", order=8.0, rdp=0.25), Target("gaussian")).values["noise_std"]
    assert 8.0 / (2 * sigma**2) == pytest.approx(0.25, rel=1e-15)


def test_group_privacy_applies_to_the_source():
    result = convert(Guarantee("gdp", mu=0.5), Target("dp", delta=1e-5), group=3)
    assert result.grouped.mu == 1.5
    assert result.values["epsilon"] == gdp.epsilon_for_delta(1e-5, 1.5)
    assert result.theorem.startswith("group privacy, k = 3")
    assert convert(Guarantee("zcdp", rho=0.5), Target("zcdp"), group=2).values == {"rho": 2.0}
    assert convert(Guarantee("laplace", scale=1.0), Target("dp"), group=4).values["epsilon"] == 4.0
    with pytest.raises(GroupRefusal, match="group privacy does not apply to the rdp source"):
        convert(Guarantee("rdp", order=2.0, rdp=0.1), Target("dp", delta=1e-5), group=2)
    with pytest.raises(GroupRefusal, match="multiplying the sensitivity by k"):
        convert(Guarantee("dp", epsilon=1.0, delta=1e-5), Target("gaussian"), group=2)


def test_guarantee_and_target_validation():
    with pytest.raises(ValueError, match="a gdp source needs mu"):
        Guarantee("gdp")
    with pytest.raises(ParameterError, match="delta must be in"):
        Guarantee("dp", epsilon=1.0, delta=1.5)
    with pytest.raises(ValueError, match="notion must be one of"):
        Guarantee("tradeoff")
    with pytest.raises(ParameterError, match="order must be in"):
        Target("rdp", orders=(1.0,))
    with pytest.raises(ValueError, match="exactly one of delta and epsilon"):
        convert(Guarantee("gdp", mu=1.0), Target("dp"))


# --- properties --------------------------------------------------------------------------------

positive_epsilon = st.floats(min_value=1e-4, max_value=50.0)
delta_values = st.floats(min_value=1e-30, max_value=0.5)


@settings(max_examples=60, deadline=None)
@given(positive_epsilon, positive_epsilon, delta_values)
def test_sigma_falls_as_epsilon_grows(first, second, delta):
    low, high = sorted((first, second))
    assert calibrate_gaussian(high, delta).sigma <= calibrate_gaussian(low, delta).sigma


@settings(max_examples=60, deadline=None)
@given(positive_epsilon, delta_values, delta_values)
def test_sigma_falls_as_delta_grows(epsilon, first, second):
    low, high = sorted((first, second))
    assert calibrate_gaussian(epsilon, high).sigma <= calibrate_gaussian(epsilon, low).sigma


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=1e-6, max_value=1e3), st.floats(min_value=1e-6, max_value=1e3), delta_values)
def test_zcdp_epsilon_grows_with_rho(first, second, delta):
    low, high = sorted((first, second))
    assert zcdp.zcdp_epsilon(low, delta)[0] <= zcdp.zcdp_epsilon(high, delta)[0]


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=1e-6, max_value=1e3), delta_values, delta_values)
def test_zcdp_epsilon_falls_as_delta_grows(rho, first, second):
    low, high = sorted((first, second))
    assert zcdp.zcdp_epsilon(rho, high)[0] <= zcdp.zcdp_epsilon(rho, low)[0]


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=1.0001, max_value=1e3), st.floats(min_value=1.0001, max_value=1e3),
       st.floats(min_value=1e-3, max_value=1e3))
def test_laplace_rdp_grows_with_order_and_falls_with_scale(first, second, scale):
    low, high = sorted((first, second))
    assert laplace_rdp(low, scale) <= laplace_rdp(high, scale) * (1 + 1e-13)
    assert laplace_rdp(low, 2 * scale) <= laplace_rdp(low, scale)


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=1.0001, max_value=1e3), st.floats(min_value=1e-4, max_value=100.0),
       st.floats(min_value=1e-4, max_value=100.0))
def test_randomized_response_rdp_grows_with_epsilon(order, first, second):
    low, high = sorted((first, second))
    assert randomized_response_rdp(order, low) <= randomized_response_rdp(order, high) * (1 + 1e-13)


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=0.0, max_value=1e5), st.floats(min_value=0.0, max_value=1e5))
def test_pure_dp_mu_grows_with_epsilon(first, second):
    low, high = sorted((first, second))
    assert pure_dp_to_mu(low) <= pure_dp_to_mu(high)


@pytest.mark.parametrize("epsilon", [5e-324, 1e-320, 1e-300])
def test_analytic_mu_at_a_subnormal_epsilon_is_the_epsilon_zero_answer(epsilon):
    """The bracket's lower end 2 eps / (z + sqrt(z^2 + 2 eps)) underflowed to 0 for eps = 5e-324,
    and doubling 0 never ended (the command hung)."""
    zero = conv.analytic_gaussian_mu(0.0, 1e-12)
    assert conv.analytic_gaussian_mu(epsilon, 1e-12) == pytest.approx(zero, rel=1e-12)


@pytest.mark.parametrize("epsilon, delta", [(5e-324, 5e-324), (1e-300, 1e-320), (5e-324, 1e-310)])
def test_gaussian_calibration_at_subnormal_targets_is_an_answer(epsilon, delta):
    # delta(eps; mu) at a subnormal mu has a subnormal's few digits: the calibration must still
    # answer (a sigma past float64's range is inf, which is sound: more noise is private too)
    sigma = calibrate_gaussian(epsilon, delta).sigma
    assert sigma > 1e300


def test_the_package_serves_each_name_from_its_module():
    """`dpcalc.core.conversions` loads a name's module on first use (start-up of `convert`): its
    map of homes covers __all__ exactly, and each name is the object its module defines."""
    import importlib

    assert set(conv._HOMES) == set(conv.__all__)
    for name, home in conv._HOMES.items():
        assert getattr(conv, name) is getattr(importlib.import_module(home), name)
    with pytest.raises(AttributeError, match="no attribute 'nosuch'"):
        conv.nosuch  # noqa: B018


def test_one_conversion_loads_only_what_it_uses():
    """dp -> gaussian needs the Gaussian calibration (and core.gdp), not zcdp, laplace or the phases."""
    import subprocess
    import sys

    code = (
        "import sys; from dpcalc.core import conversions as c; "
        "c.convert(c.Guarantee('dp', epsilon=1.0, delta=1e-5), c.Target('gaussian')); "
        "print(sorted(m for m in ('dpcalc.core.zcdp', 'dpcalc.core.laplace', 'dpcalc.core.phases') "
        "if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
