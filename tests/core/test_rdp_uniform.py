"""RDP of the Gaussian mechanism on fixed-size batches (sampling without replacement, replace-one
neighbours): `dpcalc.core.rdp.without_replacement`, WBK Thm 27 (Wang, Balle, Kasiviswanathan,
AISTATS 2019, arXiv 1808.00087).

Oracles: mpmath (Theorem 27 re-evaluated with the alternating sums Xi_{2k} summed exactly, at a
precision chosen so that their cancellation leaves 40 digits), dp_accounting 0.6.0 run live
(`SampledWithoutReplacementDpEvent` under REPLACE_ONE, whose noise multiplier is relative to the
replace-one sensitivity 2C: ours sigma is its 2 nm), and the Poisson-subsampled Gaussian of
`dpcalc.core.rdp.subsampled_gaussian_rdp` as a lower bound (the RDP of one attainable pair of
neighbouring datasets: see test_lower_bound_by_an_attained_pair).
"""

from __future__ import annotations

import math
import warnings

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core.rdp import DEFAULT_ORDERS, subsampled_gaussian_rdp
from dpcalc.core.rdp import without_replacement as wor
from dpcalc.core.rdp.without_replacement import uniform_gaussian_rdp
from dpcalc.core.validation import ParameterError
from tests.slow import slow_cases

dp_accounting = pytest.importorskip("dp_accounting")

# ----------------------------------------------------------------------------- mpmath oracle


def mp_log_xi_even(kappa: mpmath.mpf, k: int) -> mpmath.mpf:
    """log Xi_{2k} = log sum_i (-1)^i C(2k, i) e^(kappa i (i - 1)), summed exactly at a working
    precision raised until the cancellation (largest term over the sum) leaves 40 digits."""
    n = 2 * k
    digits = 50
    while True:
        with mpmath.workdps(digits):
            kap = mpmath.mpf(kappa)
            terms = [(-1) ** i * mpmath.binomial(n, i) * mpmath.exp(kap * i * (i - 1)) for i in range(n + 1)]
            total = mpmath.fsum(terms)
            largest = max(abs(term) for term in terms)
            if total > 0 and mpmath.log10(largest / total) < digits - 40:
                return mpmath.log(total)
        digits *= 2


def mp_cgf_bound(gamma: float, sigma: float, order: int) -> mpmath.mpf:
    """c(a) = min(log A_a, (a - 1) kappa a) at an integer order a >= 2, WBK Thm 27 (module
    docstring of without_replacement), in 60-digit arithmetic once the Xi are known."""
    with mpmath.workdps(60):
        g, s = mpmath.mpf(gamma), mpmath.mpf(sigma)
        kappa = 2 / (s * s)
        log_xi = {k: mp_log_xi_even(kappa, k) for k in range(1, (order + 1) // 2 + 1)}
        total = mpmath.mpf(0)
        for j in range(2, order + 1):
            log_b = log_xi[j // 2] if j % 2 == 0 else (log_xi[j // 2] + log_xi[(j + 1) // 2]) / 2
            term = min(4 * mpmath.exp(log_b), 2 * mpmath.exp(kappa * j * (j - 1)))
            total += mpmath.binomial(order, j) * g**j * term
        return min(mpmath.log1p(total), (order - 1) * kappa * order)


def mp_rdp(gamma: float, sigma: float, order: float) -> mpmath.mpf:
    """The documented curve: c(a) / (a - 1) at integer orders, the chord of c over
    [floor a, ceil a] (over [1, 2] with c(1) = 0) at fractional ones, at most 2 a / sigma^2."""
    with mpmath.workdps(60):
        s = mpmath.mpf(sigma)
        unsampled = 2 * mpmath.mpf(order) / (s * s)
        if float(order).is_integer():
            return min(mp_cgf_bound(gamma, sigma, int(order)) / (order - 1), unsampled)
        low = max(math.floor(order), 1)
        high = max(math.floor(order) + 1, 2)
        c_low = mp_cgf_bound(gamma, sigma, low) if low >= 2 else mpmath.mpf(0)
        c_high = mp_cgf_bound(gamma, sigma, high)
        t = mpmath.mpf(order) - low
        return min(((1 - t) * c_low + t * c_high) / (mpmath.mpf(order) - 1), unsampled)


@pytest.mark.parametrize(
    ("gamma", "sigma", "order"),
    [
        (0.01, 1.1, 2),  # only the j = 2 term: min(4 (e^eps(2) - 1), 2 e^eps(2))
        (0.01, 1.1, 7),
        (256 / 60000, 0.8, 32),
        (0.1, 0.5, 20),  # small sigma: the moment term 2 e^(kappa j (j - 1)) wins from j = 3
        pytest.param(0.3, 2.0, 101, marks=pytest.mark.slow),  # odd order: B_101 = sqrt(Xi_100 Xi_102)
        (0.5, 50.0, 31),  # dp_accounting 0.6.0: 1.5e-8 below this (its forward differences cancel)
        (0.5, 50.0, 64),  # dp_accounting 0.6.0: 2x above
        (1e-6, 50.0, 40),  # RDP ~ 1e-14: relative precision of tiny values
        (0.9, 8.0, 50),  # most terms matter
        (1e-3, 1e4, 16),  # huge sigma: Xi_{2k} ~ (4e-8)^k (2k - 1)!!
        (0.05, 3.0, 5.5),  # fractional: the chord between 5 and 6
        (0.05, 3.0, 1.5),  # 1 < a < 2: c(2)
    ],
)
def test_matches_mpmath_theorem_27(gamma, sigma, order):
    # rel 1e-9 (closed forms and series, docs/mathematics.md §9); measured: below 1e-14.
    ours = uniform_gaussian_rdp(gamma, sigma, [order])[0]
    reference = float(mp_rdp(gamma, sigma, order))
    assert ours == pytest.approx(reference, rel=1e-9)


@pytest.mark.parametrize("kappa", [2e-8, 8e-4, 0.03125, 0.5, 2.0, 8.0])
def test_xi_quadrature_matches_mpmath_alternating_sum(kappa):
    # The tilted half-line integrals against the alternating sum, on both trapezoid rules (k < 16
    # and k >= 16): abs 1e-12 on log Xi, i.e. rel 1e-12 on Xi; measured: a few 1e-16.
    k = np.array([2, 3, 4, 7, 15, 16, 17, 30, 60])
    ours = wor._log_xi_integral(kappa, k.astype(np.float64))
    reference = np.array([float(mp_log_xi_even(mpmath.mpf(kappa), int(one))) for one in k])
    np.testing.assert_allclose(ours, reference, rtol=1e-13, atol=1e-12)


def test_xi_quadrature_is_converged_for_large_k():
    # k up to 5e4 (order 1e5): the rules against a far wider and finer one (60 widths left, 30
    # right, 8 nodes a width); agreement to 1e-13 relative on log Xi (measured: ~2e-15).
    k = np.unique(np.round(np.geomspace(2, 50_000, 40)))
    for kappa in (2e-200, 2e-8, 1e-5, 8e-4, 0.03, 2.0, 22.0):
        ours = wor._log_xi_integral(kappa, k)
        rules = (wor._RULE_SMALL_K, wor._RULE_LARGE_K)
        try:
            wor._RULE_SMALL_K = wor._RULE_LARGE_K = (60.0, 30.0, 8.0)
            reference = wor._log_xi_integral(kappa, k)
        finally:
            wor._RULE_SMALL_K, wor._RULE_LARGE_K = rules
        np.testing.assert_allclose(ours, reference, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("sigma", [0.3, 1.1, 8.0, 50.0, 1e4])
def test_leaving_out_xi_changes_no_term(sigma, monkeypatch):
    # Xi_{2k} is left out where a lower bound shows 4 B_j >= 2 e^(kappa j (j - 1)): the terms
    # must equal those with every Xi computed (a threshold above 1 disables the leaving out).
    kappa = 2.0 / sigma**2
    terms = wor._log_thm27_terms(kappa, 3000)
    monkeypatch.setattr(wor, "_XI_NEEDED_BELOW", 2.0)
    every_xi = wor._log_thm27_terms(kappa, 3000)
    np.testing.assert_array_equal(terms[2:], every_xi[2:])


def test_chunking_changes_nothing(monkeypatch):
    orders = [2, 3.5, 17, 64, 200.25, 1000, 4096]
    whole = uniform_gaussian_rdp(0.01, 1.3, orders)
    monkeypatch.setattr(wor, "_TERMS_PER_CHUNK", 300)
    monkeypatch.setattr(wor, "_XI_PER_CHUNK", 7)
    np.testing.assert_array_equal(uniform_gaussian_rdp(0.01, 1.3, orders), whole)


# ----------------------------------------------------------------------------- dp_accounting oracle

# A subset of the default grid: dp_accounting's Theorem 27 costs O(a^2) Python steps per order
# up to 256 (the whole grid: ~0.5 s a case; see the slow test below).
SUBSET_ORDERS = [o for o in DEFAULT_ORDERS if o < 64][::4] + [64.0, 100.0, 128.0, 176.0, 256.0, 512.0, 1024.0, 4096.0]
GRID = [(n, b, sigma) for n, b in [(60000, 256), (1000, 10), (100, 50)] for sigma in (0.5, 1.1, 2.0, 8.0)]


@pytest.fixture(autouse=True)
def _quiet_absl():
    from absl import logging

    logging.set_verbosity(logging.ERROR)


def dp_accounting_rdp(n: int, b: int, sigma: float, orders: list[float]) -> np.ndarray:
    """dp_accounting 0.6.0's per-step RDP of sampling b of n without replacement, Gaussian noise
    sigma / 2 relative to the replace-one sensitivity (= sigma relative to the clipping norm)."""
    accountant = dp_accounting.rdp.RdpAccountant(orders, neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    accountant.compose(dp_accounting.SampledWithoutReplacementDpEvent(n, b, dp_accounting.GaussianDpEvent(sigma / 2)))
    return np.asarray(accountant._rdp, dtype=np.float64)


def _check_against_dp_accounting(n: int, b: int, sigma: float, orders: list[float]) -> None:
    ours = uniform_gaussian_rdp(b / n, sigma, orders)
    theirs = dp_accounting_rdp(n, b, sigma, orders)
    # Never looser than dp_accounting: measured at most 8e-14 above it (rounding) on this grid.
    assert np.all(ours <= theirs * (1.0 + 1e-9))
    # The same theorem: at integer orders up to 256 (where dp_accounting evaluates every term of
    # Theorem 27) and below the unsampled cap, the two agree to 1e-9 (measured: 1.4e-13).
    order_array = np.array(orders)
    same = (order_array == np.floor(order_array)) & (order_array <= 256) & (ours < 2 * order_array / sigma**2)
    np.testing.assert_allclose(ours[same], theirs[same], rtol=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize(("n", "b", "sigma"), slow_cases(GRID, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10))
def test_never_looser_than_dp_accounting(n, b, sigma):
    _check_against_dp_accounting(n, b, sigma, SUBSET_ORDERS)


@pytest.mark.slow
@pytest.mark.parametrize(("n", "b", "sigma"), GRID)
def test_never_looser_than_dp_accounting_on_the_default_grid(n, b, sigma):
    _check_against_dp_accounting(n, b, sigma, list(DEFAULT_ORDERS))


def test_tighter_than_dp_accounting_where_it_drops_the_pearson_vajda_terms():
    # dp_accounting 0.6.0 uses the term 4 B_j only up to order 256; above, its bound is WBK Thm 9's
    # 2 e^(kappa j (j - 1)) alone. At sigma = 50 (kappa = 8e-4) B_j is far smaller: ours is lower
    # there, by 99% at order 512 (measured).
    ours = uniform_gaussian_rdp(256 / 60000, 50.0, [512.0, 1024.0])
    theirs = dp_accounting_rdp(60000, 256, 50.0, [512.0, 1024.0])
    assert np.all(ours < 0.1 * theirs)


# ----------------------------------------------------------------------------- properties

gammas = st.floats(min_value=1e-9, max_value=1.0)
sigmas = st.floats(min_value=0.2, max_value=200.0)
some_orders = st.lists(st.sampled_from(DEFAULT_ORDERS[::3] + (5000.0, 12345.5)), min_size=1, max_size=6)
# Rounding: values within a few ulps may come out in either order.
ROUNDING = 1e-12


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(gamma=gammas, other=gammas, sigma=sigmas, orders=some_orders)
def test_non_decreasing_in_gamma(gamma, other, sigma, orders):
    low, high = sorted((gamma, other))
    assert np.all(uniform_gaussian_rdp(low, sigma, orders) <= uniform_gaussian_rdp(high, sigma, orders) * (1 + ROUNDING))


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(gamma=gammas, sigma=sigmas, other=sigmas, orders=some_orders)
def test_non_increasing_in_sigma(gamma, sigma, other, orders):
    low, high = sorted((sigma, other))
    assert np.all(uniform_gaussian_rdp(gamma, high, orders) <= uniform_gaussian_rdp(gamma, low, orders) * (1 + ROUNDING))


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(gamma=gammas, sigma=sigmas)
def test_non_decreasing_in_the_order(gamma, sigma):
    orders = np.array(sorted(set(DEFAULT_ORDERS) | {5000.0, 5000.5, 5001.0}))
    rdp = uniform_gaussian_rdp(gamma, sigma, orders)
    assert np.all(rdp[1:] >= rdp[:-1] * (1 - ROUNDING))


@settings(max_examples=40, deadline=None)
@given(gamma=gammas, sigma=sigmas, orders=some_orders)
def test_at_most_the_unsampled_gaussian(gamma, sigma, orders):
    # min(Thm 27, 2 a / sigma^2): never above the unsampled value, bit for bit.
    assert np.all(uniform_gaussian_rdp(gamma, sigma, orders) <= 2.0 * np.array(orders) / (sigma * sigma))


@settings(max_examples=30, deadline=None)
@given(gamma=gammas, sigma=sigmas, orders=some_orders)
def test_lower_bound_by_an_attained_pair(gamma, sigma, orders):
    # An attainable pair of neighbouring outputs: every record's clipped gradient is -C e except
    # one, +C e, replaced by a -C e record. In units of C, shifted: P = (1 - gamma) N(0, sigma^2)
    # + gamma N(2, sigma^2), Q = N(0, sigma^2), whose Renyi divergence is the Poisson-subsampled
    # Gaussian's with sampling probability gamma and noise multiplier sigma / 2 (MTZ Thm 4). The
    # RDP, and so any upper bound of it, is at least that (rel 1e-9: the Poisson curve's accuracy).
    lower, _ = subsampled_gaussian_rdp(gamma, sigma / 2, orders)
    assert np.all(uniform_gaussian_rdp(gamma, sigma, orders) >= lower * (1 - 1e-9))


# ----------------------------------------------------------------------------- edge cases


@pytest.mark.parametrize("sigma", [0.1, 0.9, 7.0, 1e4])
def test_full_batch_is_the_unsampled_gaussian(sigma):
    orders = np.array([1.05, 2.0, 7.5, 100.0, 1e5])
    np.testing.assert_array_equal(uniform_gaussian_rdp(1.0, sigma, orders), 2.0 * orders / (sigma * sigma))


@pytest.mark.parametrize(("gamma", "sigma"), [(1e-9, 1.1), (1e-9, 50.0), (1e-3, 1e4), (1e-6, 1e4)])
def test_tiny_values_keep_their_relative_precision(gamma, sigma):
    # A_a - 1 = C(a, 2) gamma^2 T_2 (1 + O(a gamma)) when a gamma and kappa a are small, with
    # T_2 = min(4 (e^(2 kappa) - 1), 2 e^(2 kappa)): log1p and the leading term agree to
    # a gamma ~ 1e-5 and better; the value must not be rounded away (it is ~1e-18 and below).
    kappa = 2.0 / sigma**2
    orders = [2.0, 3.0, 10.0]
    term_2 = min(4.0 * math.expm1(2.0 * kappa), 2.0 * math.exp(2.0 * kappa))
    leading = [math.comb(int(a), 2) * gamma**2 * term_2 / (a - 1) for a in orders]
    np.testing.assert_allclose(uniform_gaussian_rdp(gamma, sigma, orders), leading, rtol=1e-4)


@pytest.mark.parametrize(("gamma", "sigma"), [(0.01, 0.1), (0.5, 0.1), (1e-9, 0.1), (0.01, 0.3), (0.999, 1e4)])
def test_extreme_orders_are_finite_without_warnings(gamma, sigma):
    orders = [1.01, 2.0, 99999.5, 1e5]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rdp = uniform_gaussian_rdp(gamma, sigma, orders)
    assert rdp.dtype == np.float64
    assert not np.any(np.isnan(rdp))
    assert np.all(rdp > 0.0)
    assert np.all(np.isfinite(rdp))


@pytest.mark.parametrize("sigma", [1e-160, 1e-150, 1e100, 1e160])
def test_sigma_at_the_ends_of_float64(sigma):
    orders = np.array([1.5, 2.0, 1e5])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rdp = uniform_gaussian_rdp(0.5, sigma, orders)
    if sigma < 1e-154:
        assert np.all(np.isinf(rdp))  # 2 / sigma^2 overflows
    elif sigma < 1.0:
        # 2 a / sigma^2 is finite but every term j >= 3 of Thm 27 overflows: the unsampled value
        np.testing.assert_array_equal(rdp, 2.0 * orders / (sigma * sigma))
    elif sigma < 1e154:
        assert np.all((rdp > 0.0) & (rdp <= 2.0 * orders / (sigma * sigma)))
    else:
        assert np.all(rdp == 0.0)  # sigma^2 overflows: 2 a / sigma^2 rounds to 0 as well


@pytest.mark.parametrize(
    ("gamma", "sigma", "orders"),
    [
        (-1e-300, 1.0, [2.0]),
        (-0.1, 1.0, [2.0]),
        (1.5, 1.0, [2.0]),
        (math.nan, 1.0, [2.0]),
        (0.1, 0.0, [2.0]),
        (0.1, -1.0, [2.0]),
        (0.1, math.inf, [2.0]),
        (0.1, math.nan, [2.0]),
        (0.1, 1.0, [1.0]),
        (0.1, 1.0, [0.5]),
        (0.1, 1.0, [2e100]),
        (0.1, 1.0, [math.nan]),
    ],
)
def test_invalid_inputs_raise(gamma, sigma, orders):
    with pytest.raises(ParameterError):
        uniform_gaussian_rdp(gamma, sigma, orders)


def test_no_orders_raise():
    with pytest.raises(ValueError, match="orders"):
        uniform_gaussian_rdp(0.1, 1.0, [])
