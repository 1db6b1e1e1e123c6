"""RDP accounting: per-order values against mpmath and dp_accounting 0.6.0, conversions, properties.

Oracles: mpmath at 50 digits (the binomial sum for integer orders; adaptive quadrature of
E[(1 + x)^a - 1 - a x], a non-negative integrand, for fractional orders), and dp_accounting
0.6.0 run live (`rdp_privacy_accountant`), whose own rounding and series are characterised
in the tests that use it.
"""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core import rdp as core
from dpcalc.core.phases import Phase
from dpcalc.core.rdp import curves, fractional_orders
from dpcalc.core.validation import ParameterError

dp_rdp = pytest.importorskip("dp_accounting.rdp.rdp_privacy_accountant")
dp_accounting = pytest.importorskip("dp_accounting")

# dp_accounting 0.6.0 DEFAULT_RDP_ORDERS, frozen here so that the reference values below
# (docs/reference-values.md) keep their meaning.
DP_ACCOUNTING_DEFAULT_ORDERS = [1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024]

INTEGER_ORDERS = [2, 3, 5, 10, 32, 64, 128, 256, 512, 1024]
FRACTIONAL_ORDERS = [1.1, 1.5, 2.5, 5.5, 10.9, 63.5, 100.5]
PROBABILITIES = [1e-6, 1e-4, 1e-2, 0.1, 0.5, 0.9]
SIGMAS = [0.3, 0.7, 1.1, 5.0, 50.0]


@pytest.fixture(autouse=True)
def _quiet_absl():
    # dp_accounting logs a warning whenever its fractional series gives up; that is expected here.
    from absl import logging

    logging.set_verbosity(logging.ERROR)


def mp_rdp(q: float, sigma: float, order: float, digits: int = 50) -> mpmath.mpf:
    """RDP of the Poisson-subsampled Gaussian at `order` in high precision (MTZ Thm 4)."""
    with mpmath.workdps(digits):
        q_, s = mpmath.mpf(q), mpmath.mpf(sigma)
        if q == 1.0:
            return mpmath.mpf(order) / (2 * s * s)
        if float(order).is_integer():
            a = int(order)
            b = mpmath.fsum(
                mpmath.binomial(a, k) * (1 - q_) ** (a - k) * q_**k * mpmath.expm1(mpmath.mpf(k * k - k) / (2 * s * s))
                for k in range(2, a + 1)
            )
            return mpmath.log1p(b) / (a - 1)
        a = mpmath.mpf(order)

        def integrand(z):
            x = q_ * (mpmath.exp((2 * z - 1) / (2 * s * s)) - 1)
            return mpmath.npdf(z, 0, s) * ((1 + x) ** a - 1 - a * x)

        z0 = s * s * mpmath.log(1 / q_ - 1) + mpmath.mpf(1) / 2
        points = sorted({-mpmath.inf, -5 * s, mpmath.mpf(0), mpmath.mpf(1) / 2, mpmath.mpf(1), mpmath.mpf(2), a, z0, a + 5 * s, mpmath.inf})
        return mpmath.log1p(mpmath.quad(integrand, points, maxdegree=12)) / (a - 1)


def ours(q: float, sigma: float, orders) -> np.ndarray:
    values, bounded = core.subsampled_gaussian_rdp(q, sigma, orders)
    assert bounded == ()
    return values


# ----------------------------------------------------------------------------- against mpmath


@pytest.mark.parametrize("q, sigma", list(itertools.product([1e-6, 1e-3, 0.1, 0.9, 0.999999], [0.3, 1.1, 50.0])))
def test_integer_orders_match_mpmath_binomial_sum(q, sigma):
    # mpmath 50 digits; rtol 1e-11: all terms are positive, so only gammaln's rounding remains.
    orders = [2, 3, 7, 64, 256]
    for order, value in zip(orders, ours(q, sigma, orders)):
        assert value == pytest.approx(float(mp_rdp(q, sigma, order)), rel=1e-11, abs=0)


@pytest.mark.parametrize(
    "q, sigma, order",
    [
        pytest.param(0.01, 1.1, 5.5, marks=pytest.mark.slow),
        pytest.param(1e-6, 0.3, 1.1, marks=pytest.mark.slow),  # dp_accounting: 14% too large here
        pytest.param(0.5, 0.3, 1.1, marks=pytest.mark.slow),  # dp_accounting: series gives up (inf)
        pytest.param(0.1, 50.0, 1.1, marks=pytest.mark.slow),  # dp_accounting: 185x too large here
        (1e-6, 50.0, 2.5),  # RDP ~ 1e-16: needs A - 1 without the leading 1
        pytest.param(0.9, 0.7, 3.5, marks=pytest.mark.slow),
        pytest.param(0.004, 1.1, 9.8, marks=pytest.mark.slow),
    ],
)
def test_fractional_orders_match_mpmath_quadrature(q, sigma, order):
    # mpmath 50 digits, adaptive quadrature of a non-negative integrand; rtol 1e-10 (measured
    # worst 1e-11 over p in [1e-6, 0.999], sigma in [0.3, 50], orders 1.1..63.5).
    assert ours(q, sigma, [order])[0] == pytest.approx(float(mp_rdp(q, sigma, order)), rel=1e-10, abs=0)


@pytest.mark.slow
@pytest.mark.parametrize("q, sigma", list(itertools.product([1e-6, 0.01, 0.5, 0.999], [0.3, 1.1, 50.0, 200.0])))
def test_fractional_orders_match_mpmath_everywhere(q, sigma):
    # rtol 1e-9 where the series is trusted; where it is not (sigma = 200, q >= 0.5, order 1.1)
    # the value is the interpolation bound: at least the exact value, at most the next integer's.
    orders = [1.1, 1.5, 2.5, 5.5, 10.9, 63.5]
    values, bounded = core.subsampled_gaussian_rdp(q, sigma, orders)
    bounded_orders = {bound.order for bound in bounded}
    assert sigma >= 200.0 or not bounded_orders
    for order, value in zip(orders, values):
        exact = float(mp_rdp(q, sigma, order))
        if order in bounded_orders:
            assert exact <= value <= ours(q, sigma, [math.ceil(order)])[0]
        else:
            assert value == pytest.approx(exact, rel=1e-9, abs=0)


def test_sampling_probability_one_is_plain_gaussian():
    # Mironov 2017 Prop. 7: a / (2 sigma^2), exactly.
    orders = [1.5, 2.0, 10.0, 1024.0]
    assert ours(1.0, 1.1, orders).tolist() == [a / (2 * 1.1 * 1.1) for a in orders]


def test_orders_next_to_an_integer_are_continuous():
    # The reflection form of |C(a, i)| keeps orders 1e-9 away from an integer accurate.
    q, sigma = 0.01, 1.0
    at_five = ours(q, sigma, [5.0])[0]
    for order in (5.0 - 1e-9, 5.0 + 1e-9):
        assert ours(q, sigma, [order])[0] == pytest.approx(at_five, rel=1e-7)


def test_cvz_acceleration_sums_an_alternating_moment_sequence():
    # sum (-1)^k / (k + 1) = log 2; the weights reach it to rounding.
    terms = np.array([1.0 / (k + 1) for k in range(fractional_orders._TAIL_TERMS)])
    assert float(fractional_orders._CVZ_WEIGHTS @ terms) == pytest.approx(math.log(2.0), rel=1e-15)


# ----------------------------------------------------------------------------- large sigma


@pytest.mark.slow
def test_ill_conditioned_fractional_orders_fall_back_to_a_sound_bound():
    # sigma = 5000: the series' cancellation (~4 sigma^2 = 1e8) exceeds its limit, so the value
    # is the chord between orders 2 and 3 of the convex log A_a: above the exact value
    # (mpmath) and at most the value at order 3.
    q, sigma, order = 0.01, 5000.0, 2.5
    values, bounded = core.subsampled_gaussian_rdp(q, sigma, [order, 3.0])
    assert [bound.order for bound in bounded] == [order]
    exact = float(mp_rdp(q, sigma, order))
    assert exact <= values[0] <= values[1]
    assert values[0] == pytest.approx(exact, rel=0.1)  # O(q^2) curvature: a few percent loose


def test_fallback_is_reported_as_a_warning():
    result = core.rdp_accountant([Phase(sampling_probability=0.01, noise_multiplier=5000.0, steps=10)], delta=1e-5)
    assert result.bounded_orders
    assert any("sound upper bound" in warning for warning in result.warnings)


# ----------------------------------------------------------------------------- against dp_accounting


@pytest.mark.parametrize("q, sigma", list(itertools.product(PROBABILITIES, SIGMAS)))
def test_integer_orders_match_dp_accounting(q, sigma):
    # dp_accounting adds the a + 1 terms of A_a = 1 + tiny in log space, so its log A_a carries
    # an absolute rounding error that grows with the order (measured against mpmath: 8e-16 at
    # a = 2, 8e-14 at a = 256; ours stays within 4e-15 relative). Compare (a - 1) * rdp = log A_a
    # with rtol 1e-9 and atol 1e-15 * a: where log A_a > 1e-6 * a this is rtol 1e-9 on the RDP.
    orders = np.array(INTEGER_ORDERS, dtype=float)
    mine = ours(q, sigma, orders)
    theirs = dp_rdp._compute_rdp_poisson_subsampled_gaussian(q, sigma, orders)
    assert np.all(np.abs(mine - theirs) * (orders - 1) <= 1e-9 * mine * (orders - 1) + 1e-15 * orders)
    large = mine * (orders - 1) > 1e-6 * orders
    np.testing.assert_allclose(mine[large], theirs[large], rtol=1e-9)


def test_dp_accounting_integer_rounding_is_theirs():
    # Where the two differ by more than 1e-9 relative, mpmath sides with dpcalc.
    q, sigma, order = 1e-6, 50.0, 2
    exact = float(mp_rdp(q, sigma, order))
    theirs = float(dp_rdp._compute_rdp_poisson_subsampled_gaussian(q, sigma, [order])[0])
    assert abs(theirs - exact) / exact > 1e-6
    assert ours(q, sigma, [order])[0] == pytest.approx(exact, rel=1e-12)


@pytest.mark.parametrize("q, sigma", list(itertools.product(PROBABILITIES, SIGMAS)))
def test_fractional_orders_never_exceed_dp_accounting(q, sigma):
    # dp_accounting sums |C(a, i)| where C(a, i) < 0 (i >= floor(a) + 2): its value is an upper
    # bound on the exact one, or inf when its series gives up. Ours is exact (mpmath tests), so
    # never above theirs beyond rounding.
    orders = np.array(FRACTIONAL_ORDERS)
    mine = ours(q, sigma, orders)
    theirs = dp_rdp._compute_rdp_poisson_subsampled_gaussian(q, sigma, orders)
    assert np.all(np.isfinite(mine))
    assert np.all(mine * (orders - 1) <= theirs * (orders - 1) * (1 + 1e-9) + 1e-15 * orders)


@pytest.mark.parametrize("q, sigma, order", [(0.01, 1.1, 5.5), pytest.param(0.3, 0.5, 2.5, marks=pytest.mark.slow)])
def test_dp_accounting_fractional_value_is_the_absolute_value_series(q, sigma, order):
    # The explanation of the gap: mpmath's MTZ series with |C(a, i)| reproduces dp_accounting
    # (rtol 1e-9), the same series with signs reproduces dpcalc.
    def series(signed: bool) -> float:
        with mpmath.workdps(40):
            q_, s, a = mpmath.mpf(q), mpmath.mpf(sigma), mpmath.mpf(order)
            z0 = s * s * mpmath.log(1 / q_ - 1) + mpmath.mpf(1) / 2
            total = mpmath.mpf(0)
            for i in range(300):
                c = mpmath.binomial(a, i)
                c = c if signed else abs(c)
                j = a - i
                total += c * (1 - q_) ** (a - i) * q_**i * mpmath.exp((i * i - i) / (2 * s * s)) * mpmath.ncdf((z0 - i) / s)
                total += c * q_ ** (a - i) * (1 - q_) ** i * mpmath.exp((j * j - j) / (2 * s * s)) * mpmath.ncdf((j - z0) / s)
            return float(mpmath.log(total) / (a - 1))

    theirs = float(dp_rdp._compute_rdp_poisson_subsampled_gaussian(q, sigma, [order])[0])
    assert theirs == pytest.approx(series(signed=False), rel=1e-9)
    assert ours(q, sigma, [order])[0] == pytest.approx(series(signed=True), rel=1e-10)
    assert theirs > ours(q, sigma, [order])[0] * (1 + 1e-7)


@pytest.mark.slow
def test_dp_accounting_gives_up_where_we_converge():
    # q = 0.5, sigma = 0.3, order 1.1: |terms| decay like i^-3.1, dp_accounting stops after
    # 1000 terms and returns inf; the signed series with the CVZ tail converges (mpmath).
    assert math.isinf(dp_rdp._compute_rdp_poisson_subsampled_gaussian(0.5, 0.3, [1.1])[0])
    assert ours(0.5, 0.3, [1.1])[0] == pytest.approx(float(mp_rdp(0.5, 0.3, 1.1)), rel=1e-10)


def _dp_accountant(phases, orders):
    accountant = dp_rdp.RdpAccountant(orders=orders)
    for phase in phases:
        event = dp_accounting.PoissonSampledDpEvent(
            phase.sampling_probability, dp_accounting.GaussianDpEvent(phase.noise_multiplier)
        )
        accountant.compose(dp_accounting.SelfComposedDpEvent(event, phase.steps))
    return accountant


RUNS = [
    [Phase(sampling_probability=0.004, noise_multiplier=1.1, steps=10000)],
    [Phase(sampling_probability=0.01, noise_multiplier=0.9, steps=1800)],
    [Phase(sampling_probability=256 / 60000, noise_multiplier=1.1, steps=14062)],
    [Phase(sampling_probability=0.02, noise_multiplier=2.0, steps=500), Phase(sampling_probability=0.01, noise_multiplier=0.8, steps=3000)],
    [Phase(sampling_probability=1e-4, noise_multiplier=0.5, steps=10**6)],
    [Phase(sampling_probability=0.3, noise_multiplier=5.0, steps=20)],
    [Phase(sampling_probability=1.0, noise_multiplier=3.0, steps=4)],
]


@pytest.mark.parametrize("phases", RUNS)
def test_epsilon_matches_dp_accounting_with_the_same_integer_orders(phases):
    # dp_accounting get_epsilon / get_delta with the same orders: rtol 1e-9.
    orders = list(range(2, 64)) + [128, 256, 512, 1024]
    accountant = _dp_accountant(phases, orders)
    result = core.rdp_accountant(phases, orders=orders, delta=1e-5)
    epsilon, order = accountant.get_epsilon_and_optimal_order(1e-5)
    assert result.epsilon == pytest.approx(epsilon, rel=1e-9)
    assert result.order == order
    by_epsilon = core.rdp_accountant(phases, orders=orders, epsilon=1.0)
    assert by_epsilon.delta == pytest.approx(accountant.get_delta(1.0), rel=1e-8)


@pytest.mark.parametrize("phases", RUNS)
def test_default_grid_never_worse_than_dp_accounting_default(phases):
    # Our default grid contains dp_accounting's and our fractional values are exact where
    # theirs are upper bounds: epsilon <= theirs * (1 + 1e-6) (the bound).
    theirs = _dp_accountant(phases, None).get_epsilon(1e-5)
    assert set(DP_ACCOUNTING_DEFAULT_ORDERS) <= set(core.DEFAULT_ORDERS)
    assert core.rdp_accountant(phases, delta=1e-5).epsilon <= theirs * (1 + 1e-6)


@pytest.mark.slow
@settings(max_examples=10, deadline=None)
@given(
    p=st.floats(1e-6, 1.0),
    sigma=st.floats(0.3, 50.0),
    steps=st.integers(1, 10**6),
    delta=st.sampled_from([1e-3, 1e-5, 1e-8]),
)
def test_default_grid_never_worse_than_dp_accounting_property(p, sigma, steps, delta):
    phases = [Phase(sampling_probability=p, noise_multiplier=sigma, steps=steps)]
    theirs = _dp_accountant(phases, None).get_epsilon(delta)
    assert core.rdp_accountant(phases, delta=delta).epsilon <= theirs * (1 + 1e-6) + 1e-12


# ----------------------------------------------------------- reference values (docs/reference-values.md)


def test_design_card_with_dp_accounting_orders():
    # docs/reference-values.md: p = 0.004, sigma = 1.1, T = 10000, dp_accounting default orders:
    # eps 2.01306 at order 9.8 (delta 1e-5); printed to 6 digits, so abs 5e-6.
    result = core.rdp_accountant(
        [Phase(sampling_probability=0.004, noise_multiplier=1.1, steps=10000)],
        orders=DP_ACCOUNTING_DEFAULT_ORDERS,
        delta=1e-5,
    )
    assert result.epsilon == pytest.approx(2.01306, abs=5e-6)
    assert result.order == 9.8


def test_adadp_seed_with_dp_accounting_orders():
    # docs/reference-values.md: ADADP seed p = 600/60000, sigma = 0.9, T = 1800: RDP eps 3.4487 (4 decimals).
    result = core.rdp_accountant(
        [Phase(sampling_probability=0.01, noise_multiplier=0.9, steps=1800)],
        orders=DP_ACCOUNTING_DEFAULT_ORDERS,
        delta=1e-5,
    )
    assert result.epsilon == pytest.approx(3.4487, abs=5e-5)


def mp_improved_epsilon(q: float, sigma: float, steps: int, order: float, delta: float) -> float:
    """T times the RDP at one order, converted (CKS Prop. 12), in mpmath at 50 digits."""
    with mpmath.workdps(50):
        a = mpmath.mpf(order)
        rdp = steps * mp_rdp(q, sigma, order)
        return float(rdp + mpmath.log1p(-1 / a) - (mpmath.log(mpmath.mpf(delta)) + mpmath.log(a)) / (a - 1))


@pytest.mark.slow
@pytest.mark.parametrize("phase, public", [(Phase(sampling_probability=0.004, noise_multiplier=1.1, steps=10000), 2.01306),
                                           pytest.param(Phase(sampling_probability=0.01, noise_multiplier=0.9, steps=1800), 3.4487, marks=pytest.mark.slow)])
def test_default_grid_on_the_spec_cases(phase, public):
    # The denser default grid on the design card and the ADADP seed (docs/reference-values.md:
    # 2.0130594444 at 9.8 and 3.4484912949 at 5.65). The optimal order: dp_accounting 0.6.0 on the
    # same grid. The epsilon there: mpmath, rel 1e-9 (fractional orders are accurate to 1e-10;
    # dp_accounting's fractional series is an upper bound, 1.2e-5 high at 5.65). Never above the
    # public figures with dp_accounting's orders (2.01306 and 3.4487): this grid contains them.
    result = core.rdp_accountant([phase], delta=1e-5)
    _, order = _dp_accountant([phase], list(core.DEFAULT_ORDERS)).get_epsilon_and_optimal_order(1e-5)
    assert result.order == order
    p, sigma, steps = phase.sampling_probability, phase.noise_multiplier, phase.steps
    assert result.epsilon == pytest.approx(mp_improved_epsilon(p, sigma, steps, order, 1e-5), rel=1e-9)
    assert result.epsilon <= public


# ----------------------------------------------------------------------------- Laplace


@pytest.mark.parametrize("scale", [0.1, 1.0, 10.0, 1e3, 1e6])
def test_laplace_matches_mironov_prop6_in_mpmath(scale):
    # Mironov 2017 Prop. 6 evaluated at 50 digits; rtol 1e-12 (the curve is laplace.laplace_rdp
    # order by order, whose A(y) = e^y - 1 - y form keeps large scales, where the bracket is
    # 1 + O(1/b^2), accurate; tests/core/test_laplace_rdp.py checks it more widely).
    orders = [1.05, 1.5, 2.0, 9.8, 100.0, 4096.0]
    values = core.laplace_rdp_curve(orders, scale)
    with mpmath.workdps(50):
        for order, value in zip(orders, values):
            a, b = mpmath.mpf(order), mpmath.mpf(scale)
            bracket = a / (2 * a - 1) * mpmath.exp((a - 1) / b) + (a - 1) / (2 * a - 1) * mpmath.exp(-a / b)
            assert value == pytest.approx(float(mpmath.log(bracket) / (a - 1)), rel=1e-12)


def test_laplace_matches_dp_accounting():
    # dp_accounting's _laplace_rdp(eps = 1/b, order); rtol 1e-9.
    for scale in (0.5, 2.0, 20.0):
        for order in (1.5, 2.0, 10.0, 64.0):
            assert core.laplace_rdp_curve([order], scale)[0] == pytest.approx(dp_rdp._laplace_rdp(1 / scale, order), rel=1e-9)


def test_laplace_tends_to_pure_dp():
    # RDP -> 1/b as the order grows (pure epsilon-DP with epsilon = 1/b).
    assert core.laplace_rdp_curve([1e5], 2.0)[0] == pytest.approx(0.5, rel=1e-4)
    assert core.laplace_rdp_curve([1e5], 2.0)[0] <= 0.5


def test_subsampled_laplace_is_refused():
    with pytest.raises(ParameterError, match="sampling_probability must be 1 for the laplace mechanism"):
        core.phase_rdp(Phase("laplace", sampling_probability=0.5, scale=1.0), [2.0])


# ----------------------------------------------------------------------------- composition and conversion


def test_composition_adds_phases_and_multiplies_steps():
    orders = [2.0, 5.5, 32.0]
    first = Phase(sampling_probability=0.01, noise_multiplier=1.0, steps=300)
    second = Phase(sampling_probability=0.02, noise_multiplier=2.0, steps=7)
    release = Phase("laplace", scale=5.0, steps=2)
    total, _ = core.composed_rdp([first, second, release], orders)
    expected = 300 * ours(0.01, 1.0, orders) + 7 * ours(0.02, 2.0, orders) + 2 * core.laplace_rdp_curve(orders, 5.0)
    np.testing.assert_allclose(total, expected, rtol=1e-15)
    merged, _ = core.composed_rdp([first, Phase(sampling_probability=0.01, noise_multiplier=1.0, steps=700)], orders)
    np.testing.assert_allclose(merged, 1000 * ours(0.01, 1.0, orders), rtol=1e-15)


def test_huge_step_counts_scale_linearly():
    phase = Phase(sampling_probability=1e-4, noise_multiplier=1.0, steps=10**9)
    result = core.rdp_accountant([phase], orders=[2.0, 3.5], delta=1e-5)
    np.testing.assert_allclose(result.rdp, 1e9 * ours(1e-4, 1.0, [2.0, 3.5]), rtol=1e-15)


def test_single_step_curve_is_per_step():
    result = core.rdp_accountant([Phase(sampling_probability=0.01, noise_multiplier=1.0, steps=1)], delta=1e-5)
    np.testing.assert_allclose(result.rdp, ours(0.01, 1.0, result.orders), rtol=0)


def test_classic_conversion_is_never_better():
    phases = [Phase(sampling_probability=0.004, noise_multiplier=1.1, steps=10000)]
    improved = core.rdp_accountant(phases, delta=1e-5)
    classic = core.rdp_accountant(phases, delta=1e-5, conversion="classic")
    assert classic.conversion == "classic" and classic.epsilon > improved.epsilon
    # Mironov Prop. 3 at the winning order, by hand.
    index = classic.orders.index(classic.order)
    assert classic.epsilon == pytest.approx(classic.rdp[index] + math.log(1e5) / (classic.order - 1), rel=1e-15)


def test_total_variation_bound_gives_zero_epsilon_like_dp_accounting():
    # RDP ~ 1e-12: delta = 1e-5 >= sqrt(1 - e^-rdp), so (0, delta)-DP (dp_accounting agrees).
    phases = [Phase(sampling_probability=1e-6, noise_multiplier=10.0, steps=1)]
    result = core.rdp_accountant(phases, orders=list(range(2, 64)), delta=1e-5)
    assert result.epsilon == 0.0
    assert _dp_accountant(phases, list(range(2, 64))).get_epsilon(1e-5) == 0.0
    assert core.rdp_accountant(phases, orders=list(range(2, 64)), delta=1e-5, conversion="classic").epsilon > 0.0


def test_delta_direction_is_the_inverse():
    phases = [Phase(sampling_probability=0.004, noise_multiplier=1.1, steps=10000)]
    forward = core.rdp_accountant(phases, delta=1e-5)
    backward = core.rdp_accountant(phases, epsilon=forward.epsilon)
    assert backward.delta == pytest.approx(1e-5, rel=1e-9)
    assert backward.order == forward.order


def test_grid_end_warnings():
    phases = [Phase(sampling_probability=0.5, noise_multiplier=0.5, steps=1000)]
    low = core.rdp_accountant(phases, orders=[3.0, 4.0, 5.0], delta=1e-5)
    assert low.order == 3.0 and "smallest order of the grid (3)" in low.warnings[0]
    tiny = [Phase(sampling_probability=1e-3, noise_multiplier=20.0, steps=1)]
    high = core.rdp_accountant(tiny, orders=[2.0, 4.0, 8.0], delta=1e-5)
    assert high.order == 8.0 and "largest order of the grid (8)" in high.warnings[0]
    inside = core.rdp_accountant([Phase(sampling_probability=0.004, noise_multiplier=1.1, steps=10000)], delta=1e-5)
    assert inside.warnings == () and inside.grid_edge is None


def test_grid_end_warning_names_no_option_unless_asked():
    # The core words the warning without a command-line option; a command names its own.
    phases = [Phase(sampling_probability=0.5, noise_multiplier=0.5, steps=1000)]
    low = core.rdp_accountant(phases, orders=[3.0, 4.0, 5.0], delta=1e-5)
    assert low.grid_edge == "smallest"
    assert low.warnings == (
        "the optimum is at the smallest order of the grid (3); a wider grid of orders may give a smaller epsilon.",
    )
    assert low.messages(orders_option="--orders") == (
        "the optimum is at the smallest order of the grid (3); a wider grid (--orders) may give a smaller epsilon.",
    )
    assert not any("--" in warning for warning in low.warnings)


def test_orders_are_validated():
    for bad in ([1.0], [0.5], [core.MAX_ORDER * 2], [math.nan]):
        with pytest.raises(ParameterError, match="order must be in"):
            core.subsampled_gaussian_rdp(0.1, 1.0, bad)
    with pytest.raises(ValueError, match="exactly one of delta and epsilon"):
        core.rdp_accountant([Phase(noise_multiplier=1.0)], delta=1e-5, epsilon=1.0)


# ----------------------------------------------------------------------------- properties


def _epsilon(p, sigma, steps, delta=1e-5):
    return core.rdp_accountant([Phase(sampling_probability=p, noise_multiplier=sigma, steps=steps)], delta=delta).epsilon


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(
    p=st.floats(1e-5, 0.5),
    sigma=st.floats(0.4, 20.0),
    steps=st.integers(1, 10**5),
    factor=st.floats(1.01, 2.0),
)
def test_epsilon_monotone(p, sigma, steps, factor):
    base = _epsilon(p, sigma, steps)
    slack = 1e-12 * (1 + base)
    assert _epsilon(min(1.0, p * factor), sigma, steps) >= base - slack
    assert _epsilon(p, sigma, int(steps * factor) + 1) >= base - slack
    assert _epsilon(p, sigma * factor, steps) <= base + slack
    assert _epsilon(p, sigma, steps, delta=1e-5 * factor) <= base + slack


@settings(max_examples=40, deadline=None)
@given(p=st.floats(1e-6, 0.999), sigma=st.floats(0.3, 50.0))
def test_rdp_curve_non_decreasing_in_the_order(p, sigma):
    # Renyi divergences are non-decreasing in the order (van Erven, Harremoes 2014, Thm 3).
    orders = np.array(core.DEFAULT_ORDERS)
    values, bounded = core.subsampled_gaussian_rdp(p, sigma, orders)
    assert bounded == ()
    assert np.all(np.diff(values) >= -1e-12 * values[1:])


def test_chunked_evaluation_gives_the_same_values(monkeypatch):
    # Long lists of orders are evaluated in groups of at most _TERMS_PER_CHUNK terms.
    orders = [5.0, 7.5, 33.0, 40.5, 64.0, 3.5]
    whole = ours(0.01, 1.0, orders)
    monkeypatch.setattr(curves, "_TERMS_PER_CHUNK", 50)
    np.testing.assert_array_equal(ours(0.01, 1.0, orders), whole)


def test_largest_orders_are_allowed_and_monotone():
    values = ours(0.01, 1.0, [50000.0, 99999.5, core.MAX_ORDER])
    assert np.all(np.diff(values) > 0)


@settings(max_examples=40, deadline=None)
@given(log_p=st.floats(-12.0, 0.0), log_sigma=st.floats(-3.0, 6.0))
def test_curve_is_sane_over_extreme_inputs(log_p, log_sigma):
    # Everywhere, including the large-sigma fallback: no nan, never negative, non-decreasing in
    # the order, and never above the Gaussian without subsampling, a / (2 sigma^2).
    p, sigma = 10.0**log_p, 10.0**log_sigma
    orders = np.array(core.DEFAULT_ORDERS)
    values, _ = core.subsampled_gaussian_rdp(p, sigma, orders)
    assert not np.isnan(values).any() and np.all(values >= 0)
    assert np.all(np.diff(values) >= -1e-9 * values[1:])
    assert np.all(values <= orders / (2 * sigma * sigma) * (1 + 1e-9))
