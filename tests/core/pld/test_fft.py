"""fft: the composition of two measures, direct or by FFT, and its rounding bound (S5 of
docs/pld-soundness.md; Higham 2002, Thm 24.2).

References: numpy's direct convolution in extended precision (np.longdouble) for the product,
exact arithmetic for the masses and the fields that compose (total mass, mass at +inf,
deficiency), and a brute-force search for the FFT lengths. The stated error bound must hold,
and with room to spare (measured errors are a hundredth of it or less).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcalc.core.pld import fft, work
from dpcalc.core.pld.measure import Tilted
from tests.core.pld.helpers import masses, tilted


@pytest.mark.slow
def test_fft_convolution_error_is_within_the_bound():
    rng = np.random.default_rng(11)
    for n in (3000, 6000):
        # a smooth bump over sixteen orders of magnitude, like a tilted distribution
        x = np.exp(-0.5 * ((np.arange(n) - n / 3) / (n / 12)) ** 2) * (1 + 0.1 * rng.random(n))
        a = Tilted("upper", 1.0, 1e-3, 0, x / x.sum(), 0.0)
        b = Tilted("upper", 1.0, 1e-3, 0, x[::-1] / x.sum(), 0.0)
        c = fft.convolve(a, b)
        exact = np.convolve(a.t.astype(np.longdouble), b.t.astype(np.longdouble))
        exact = exact / exact.sum()
        measured = float(np.abs(c.t - exact).sum())
        assert measured <= c.err / 100


def _random_pair(rng, na, nb, kind="upper"):
    a = rng.random(na) ** 4
    b = rng.random(nb) ** 4
    return (tilted(kind, a / a.sum(), lam=1.5, h=2.0**-8, k0=3, log_z=0.2),
            tilted(kind, b / b.sum(), lam=1.5, h=2.0**-8, k0=-5, log_z=-0.1))


# (50, 70) and (150, 260) are below the direct-convolution threshold, (3000, 20) and (800, 900) above
@pytest.mark.parametrize("na, nb", [(50, 70), (150, 260), (3000, 20), (800, 900)])
def test_convolve_equals_the_direct_convolution_within_its_bound(na, nb):
    a, b = _random_pair(np.random.default_rng(na + nb), na, nb)
    with work.limited(math.inf) as meter:
        c = fft.convolve(a, b)
    exact = np.convolve(a.t.astype(np.longdouble), b.t.astype(np.longdouble))
    measured = float(np.abs(c.t - exact / exact.sum()).sum())
    assert measured <= c.err / 10
    # the work charged: a b for a direct convolution, n log2 n for an FFT of length n
    direct = na * nb < fft._DIRECT_CONVOLUTION_BELOW
    n_fft = fft.fast_length(na + nb - 1)
    assert meter.used == (na * nb if direct else work.fft_cost(n_fft))
    # the grid and the untilted masses compose exactly: the product of the totals
    assert (c.k0, c.h, c.lam, len(c.t), c.steps) == (a.k0 + b.k0, a.h, a.lam, na + nb - 1, a.steps + b.steps)
    assert masses(c).sum() == pytest.approx(masses(a).sum() * masses(b).sum(), rel=1e-13)
    assert abs(c.t.sum() - 1.0) <= 1e-13


def test_input_errors_and_whole_measure_fields_compose():
    rng = np.random.default_rng(2)
    a, b = _random_pair(rng, 40, 60)
    a.err, b.err = 1e-9, 3e-9
    a.inf_mass, b.inf_mass = 1e-7, 2e-7
    a.log_mass, b.log_mass = math.log(1.0 + 1e-7), math.log(1.0 + 2e-7)
    a.drop_rel, b.drop_rel, a.drop_mass, b.drop_mass = 1e-10, 2e-10, 1e-11, 2e-11
    c = fft.convolve(a, b)
    # Young's inequality: err_a |b|_1 + |a|_1 err_b + err_a err_b, the norms being 1
    assert c.err >= a.err + b.err + a.err * b.err
    ma, mb = math.exp(a.log_mass), math.exp(b.log_mass)
    assert c.inf_mass >= a.inf_mass * mb + ma * b.inf_mass
    assert math.exp(c.log_mass) >= (masses(a).sum() + a.inf_mass) * (masses(b).sum() + b.inf_mass) * (1 - 1e-12)
    assert (c.drop_rel, c.drop_mass) == pytest.approx((3e-10, 3e-11), rel=1e-15)
    # a lower measure's deficiency propagates like an error
    la, lb = _random_pair(rng, 40, 60, kind="lower")
    la.deficiency, lb.deficiency = 1e-8, 2e-8
    lc = fft.convolve(la, lb)
    assert lc.deficiency >= la.deficiency + lb.deficiency
    assert lc.inf_mass == 0.0


def test_convolve_refuses_measures_of_different_grids():
    a, b = _random_pair(np.random.default_rng(0), 10, 10)
    for other in (tilted("lower", b.t, lam=1.5, h=b.h), tilted("upper", b.t, lam=2.0, h=b.h),
                  tilted("upper", b.t, lam=1.5, h=2 * b.h)):
        with pytest.raises(ValueError, match="same kind, tilt and grid step"):
            fft.convolve(a, other)


def test_fft_lengths_are_the_smallest_five_smooth_numbers():
    def smooth(n):
        for prime in (2, 3, 5):
            while n % prime == 0:
                n //= prime
        return n == 1

    expected = 4096  # = 2^12; below it, the smallest 2^a 3^b 5^c >= n, found from above
    for n in range(4096, 0, -1):
        if smooth(n):
            expected = n
        assert fft.fast_length(n) == expected, n


def test_norm_sums_are_numpys_sums():
    # the 1- and 2-norm sums of a convolution's factors, bit for bit those of np.abs(x).sum()
    # and (x * x).sum() (pairwise summation: the same order for the same length and layout)
    rng = np.random.default_rng(5)
    for n in [1, 2, 7, 8, 9, 127, 128, 129, 1000, 4099, 70_001]:
        x = rng.standard_normal(n) * np.exp(rng.uniform(-40.0, 0.0, n))
        one, two = fft._norm_sums(x)
        assert one == float(np.abs(x).sum()) and two == float((x * x).sum())


needs_extended = pytest.mark.skipif(fft.extended_round_off() is None,
                                    reason="no hardware extended precision in numpy's FFT here")


def test_extended_precision_is_the_x87_format_or_none():
    u_ext = fft.extended_round_off()
    assert u_ext is None or u_ext == 2.0**-64
    if u_ext is not None:
        assert np.fft.irfft(np.fft.rfft(np.ones(4, dtype=np.longdouble))).dtype == np.longdouble


@needs_extended
@pytest.mark.parametrize("n, radix", [(3000, "5-smooth"), (4096, "power of two")])
def test_extended_fft_convolution_error_is_within_its_bound(n, radix):
    # Integer masses, so that the exact convolution is exact in int64 (products below 2^40,
    # sums of n of them below 2^52) and in long double: a smooth bump over six orders of
    # magnitude with 10% noise, and a rough one; the error of the long double transforms
    # against the exact product, in the 2-norm, a hundredth of the bound or less.
    rng = np.random.default_rng(n)
    bump = np.exp(-0.5 * ((np.arange(n) - n / 3) / (n / 12)) ** 2) * (1 + 0.1 * rng.random(n))
    a = np.round(bump * 2.0**20).astype(np.int64)
    b = rng.integers(0, 2**20, n)
    exact = np.convolve(a, b).astype(np.longdouble)
    n_fft = fft.fast_length(2 * n - 1)
    assert (n_fft & (n_fft - 1) == 0) == (radix == "power of two")
    fa = np.fft.rfft(a.astype(np.longdouble), n_fft)
    fb = np.fft.rfft(b.astype(np.longdouble), n_fft)
    product = np.fft.irfft(fa * fb, n_fft)[: 2 * n - 1]
    measured = float(np.sqrt(np.sum((product - exact) ** 2)))
    a1, b1 = float(a.sum()), float(b.sum())
    a2, b2 = float(np.sqrt(np.sum(a.astype(float) ** 2))), float(np.sqrt(np.sum(b.astype(float) ** 2)))
    bound = fft._fft_error_l2(n_fft, a2, b2, a1, b1, fft.extended_round_off())
    assert 0.0 < measured <= bound / 100
    # (in double the same product errs two thousand times more)
    double = np.fft.irfft(np.fft.rfft(a.astype(float), n_fft) * np.fft.rfft(b.astype(float), n_fft), n_fft)
    assert float(np.sqrt(np.sum((double[: 2 * n - 1] - exact) ** 2))) > 100 * measured


@needs_extended
def test_a_product_held_many_times_is_transformed_in_extended_precision():
    # the same square, once and as one of 1e12 copies: the second's rounding bound (transforms
    # at u = 2^-64, then each mass rounded to double) is hundreds of times smaller, its
    # measured error within it, and the work meter charges the slower transforms
    x = np.exp(-0.5 * ((np.arange(4000) - 1500) / 300.0) ** 2)
    a = Tilted("lower", 1.0, 1e-3, 0, x / x.sum(), 0.0)
    with work.limited(math.inf) as plain_meter:
        plain = fft.convolve(a, a)
    with work.limited(math.inf) as meter:
        held = fft.convolve(a, a, copies=10**12)
    assert held.err < plain.err / 500 and held.l2 < plain.l2 / 10
    exact = np.convolve(a.t.astype(np.longdouble), a.t.astype(np.longdouble))
    assert float(np.abs(held.t - exact / exact.sum()).sum()) <= held.err / 10
    assert meter.used == fft._EXTENDED_COST * plain_meter.used
    # below the threshold nothing changes, bit for bit
    assert np.array_equal(fft.convolve(a, a, copies=2).t, plain.t)


@needs_extended
@pytest.mark.slow
def test_a_very_long_run_meets_the_accuracy_with_extended_squares(monkeypatch):
    # p 0.004, sigma 1.1, T 1e11 (epsilon about 1.03e6): in double its first squares' rounding
    # adds up to 0.7 of the composed lower measure (12% wide); with them in extended precision
    # 3.4e-4 wide. Both intervals are certified, so they must overlap.
    from dpcalc import pld_epsilon
    from dpcalc.core.pld import api

    run = dict(p=0.004, sigma=1.1, T=10**11, delta=1e-5)
    api.cached.cache_clear()
    extended = pld_epsilon(**run)
    assert extended.epsilon_upper - extended.epsilon_lower <= 1e-3 * extended.epsilon_upper
    assert not extended.warnings
    monkeypatch.setattr(fft, "extended_round_off", lambda: None)
    api.cached.cache_clear()
    double = pld_epsilon(**run)
    api.cached.cache_clear()
    assert double.epsilon_upper - double.epsilon_lower > 1e-2 * double.epsilon_upper
    assert double.epsilon_lower <= extended.epsilon_upper and extended.epsilon_lower <= double.epsilon_upper
