"""measure: the tilted, normalised measure (`Tilted`) and the operations that move no mass
(add, piece, renormalise, trim, bare), with their error fields (S5 of docs/pld-soundness.md),
and the weight kappa(lam).

References: kappa(lam) is the supremum of e^(-lam y) (1 - e^(-y)) over y > 0, found here by
maximising in mpmath (50 digits: a grid search, then a root of the derivative), independently
of the closed form lam^lam / (lam + 1)^(lam + 1) the code uses. The operations are checked
by properties that must hold exactly up to rounding: the untilted masses they represent are
kept (or summed), the error bounds in absolute units never shrink, and the whole-measure
fields are summed or dropped as the docstrings say.
"""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest

from dpcalc.core.pld import measure
from tests.core.pld.helpers import U, masses, tilted


def _mp_supremum(lam: float):
    """sup_{y > 0} e^(-lam y) (1 - e^(-y)) by maximisation in mpmath."""
    lam = mp.mpf(lam)
    f = lambda y: mp.exp(-lam * y) * -mp.expm1(-y)  # noqa: E731
    if lam == 0:
        return mp.mpf(1)  # f increases to its supremum 1 as y -> inf
    grid = [mp.mpf(10) ** (k / mp.mpf(8)) for k in range(-80, 40)]
    best = max(range(len(grid)), key=lambda i: f(grid[i]))
    derivative = lambda y: mp.exp(-lam * y) * (mp.exp(-y) * (1 + lam) - lam)  # noqa: E731
    top = mp.findroot(derivative, (grid[max(best - 1, 0)], grid[best + 1]), solver="bisect")
    return f(top)


@pytest.mark.parametrize("lam", [0.0, 1e-3, 0.01, 0.5, 1.0, 3.7, 10.0, 1e3, 1e5])
def test_kappa_is_the_supremum(lam):
    exact = _mp_supremum(lam)
    # kappa multiplies error terms: it is rounded up, and stays within a few ulps for every lam
    assert exact <= measure.kappa(lam) <= exact * (1 + 32 * U)


def _pair(kind="upper"):
    rng = np.random.default_rng(4)
    x = tilted(kind, rng.random(30), lam=2.0, k0=-4, log_z=0.3, err=1e-12, log_z_err=1e-14, inf_mass=1e-6,
               drop_rel=1e-9, drop_mass=1e-10, log_mass=0.01, deficiency=1e-11 if kind == "lower" else 0.0,
               log_theta_mgf=np.full(len(measure.THETAS), 0.5))
    y = tilted(kind, rng.random(50), lam=2.0, k0=10, log_z=-1.2, err=3e-12, log_z_err=2e-14, inf_mass=2e-6,
               drop_rel=2e-9, drop_mass=2e-10, log_mass=0.02, deficiency=2e-11 if kind == "lower" else 0.0,
               log_theta_mgf=np.full(len(measure.THETAS), 0.25))
    return x, y


def _at(m, k):
    """The untilted mass of m at grid index k (0 off its window)."""
    i = k - m.k0
    return float(masses(m)[i]) if 0 <= i < len(m.t) else 0.0


@pytest.mark.parametrize("kind", ["upper", "lower"])
def test_add_sums_the_masses_and_the_fields(kind):
    x, y = _pair(kind)
    out = measure.add(x, y)
    assert (out.k0, len(out.t)) == (-4, 64)
    for k in range(-4, 60):
        assert _at(out, k) == pytest.approx(_at(x, k) + _at(y, k), rel=1e-14)
    assert abs(out.t.sum() - 1.0) <= 1e-14
    # errors in absolute units (err Z) add; the rest of the fields are sums
    assert out.err * math.exp(out.log_z) >= x.err * math.exp(x.log_z) + y.err * math.exp(y.log_z)
    assert out.deficiency * math.exp(out.log_z) >= (x.deficiency * math.exp(x.log_z)
                                                     + y.deficiency * math.exp(y.log_z)) * (1 - 1e-15)
    assert out.log_z_err >= max(x.log_z_err, y.log_z_err)
    assert (out.inf_mass, out.drop_rel, out.drop_mass) == pytest.approx((3e-6, 3e-9, 3e-10), rel=1e-15)
    assert out.log_mass == pytest.approx(math.log(math.exp(0.01) + math.exp(0.02)), rel=1e-15)
    assert out.log_theta_mgf == pytest.approx(np.logaddexp(0.5, 0.25), rel=1e-15)
    for other in (replace(y, lam=3.0), replace(y, offset=2.0**-20)):
        with pytest.raises(ValueError, match="same kind, tilt, grid step and offset"):
            measure.add(x, other)


def test_offset_grids_are_exact_or_refused():
    # losses = offset + k h is computed exactly when both are multiples of one power of two
    # (offset.grid_offset chooses such offsets); offsets add exactly under composition
    m = tilted("lower", [0.25, 0.5, 0.25], lam=2.0, h=2.0**-10, k0=-5)
    shifted = replace(m, offset=37 * 2.0**-22)
    assert list(shifted.losses) == [37 * 2.0**-22 + k * 2.0**-10 for k in (-5, -4, -3)]
    assert measure.add_offsets(3 * 2.0**-22, 5 * 2.0**-22) == 8 * 2.0**-22
    with pytest.raises(FloatingPointError):
        measure.add_offsets(1.0, 2.0**-60)
    with pytest.raises(FloatingPointError):
        _ = replace(m, offset=0.1, k0=1000, h=1.0).losses  # 1000.1 is not a float


def test_losses_on_a_step_of_one_and_a_half_powers_of_two_are_exact():
    # h = 1.5 2^-10 = 3 2^-11 (`plan.grid_mantissa`): k h = 3k 2^-11, and an offset of 37 units
    # h 2^-12 is 111 2^-23; the sums are those of exact rationals. From index 2^50 on, 3k could
    # leave the 53-bit significand: refused.
    h = 1.5 * 2.0**-10
    m = tilted("lower", [0.25, 0.5, 0.25], lam=2.0, h=h, k0=-5)
    offset = 37 * h * 2.0**-12
    assert Fraction(offset) == Fraction(111, 2**23)
    assert [Fraction(x) for x in m.losses] == [k * Fraction(3, 2**11) for k in (-5, -4, -3)]
    shifted = replace(m, offset=offset)
    assert [Fraction(x) for x in shifted.losses] == [Fraction(111, 2**23) + k * Fraction(3, 2**11) for k in (-5, -4, -3)]
    with pytest.raises(FloatingPointError):
        _ = replace(m, k0=2**50).losses


def test_losses_at_a_few_points_are_those_of_the_whole_grid():
    # truncations read single losses (`loss_at`) and ranges (`losses_at`): the same floats, bit
    # for bit, and the same refusals
    m = tilted("lower", [0.25] * 9, lam=2.0, h=1.5 * 2.0**-10, k0=-7)
    for grid in (m, replace(m, offset=37 * 1.5 * 2.0**-22)):
        assert [grid.loss_at(i) for i in range(9)] == list(grid.losses)
        assert grid.losses_at(np.arange(3, 7)).tobytes() == grid.losses[3:7].tobytes()
    for bad in (replace(m, offset=0.1, k0=1000, h=1.0), replace(m, k0=2**50)):
        with pytest.raises(FloatingPointError):
            bad.loss_at(1)
        with pytest.raises(FloatingPointError):
            bad.losses_at(np.arange(2))


def test_piece_keeps_the_masses_and_the_error_of_the_whole():
    x, _ = _pair()
    part = measure.piece(x, 5, 17)
    assert (part.k0, len(part.t)) == (x.k0 + 5, 12)
    assert masses(part) == pytest.approx(masses(x)[5:17], rel=1e-14)
    assert abs(part.t.sum() - 1.0) <= 1e-14
    # the error bound of the whole bounds the error of any part (absolute units)
    assert part.err * math.exp(part.log_z) >= x.err * math.exp(x.log_z)
    assert part.log_z_err >= x.log_z_err
    # the quantities of a whole measure are not counted again on a part
    assert (part.inf_mass, part.drop_rel, part.drop_mass, part.log_mass, part.log_theta_mgf) == (0, 0, 0, 0, None)
    assert x.inf_mass == 1e-6 and len(x.t) == 30  # the whole is unchanged


@pytest.mark.parametrize("kind", ["upper", "lower"])
def test_renormalise_moves_the_sum_into_log_z(kind):
    x, _ = _pair(kind)
    before = masses(x) * 7.5  # the measure x with its tilted masses scaled up in place
    out = replace(x, t=x.t * 7.5)
    out = measure.renormalise(out, x)
    assert masses(out) == pytest.approx(before, rel=1e-14)
    assert abs(out.t.sum() - 1.0) <= 1e-14
    assert out.err * math.exp(out.log_z) >= x.err * math.exp(x.log_z) * (1 - 1e-14)
    assert out.deficiency * math.exp(out.log_z) >= x.deficiency * math.exp(x.log_z) * (1 - 1e-14)
    assert out.log_z_err >= x.log_z_err


def test_trim_and_bare_move_no_mass():
    m = tilted("upper", [0.0, 0.0, 0.25, 0.5, 0.0, 0.25, 0.0], k0=3, inf_mass=1e-3, drop_rel=1e-9, drop_mass=1e-9,
               log_mass=0.1, log_theta_mgf=np.zeros(len(measure.THETAS)))
    trimmed = measure.trim(m)
    assert trimmed.k0 == 5 and list(trimmed.t) == [0.25, 0.5, 0.0, 0.25]
    assert list(trimmed.losses) == [k * m.h for k in (5, 6, 7, 8)]
    assert measure.trim(trimmed) is trimmed and measure.trim(tilted("upper", [0.0, 0.0])).k0 == 0
    signed = measure.trim(tilted("upper", [-0.0, 0.5, 0.5, -0.0], k0=3))  # -0.0 is a zero too
    assert signed.k0 == 4 and list(signed.t) == [0.5, 0.5]
    stripped = measure.bare(m)
    assert (stripped.inf_mass, stripped.drop_rel, stripped.drop_mass, stripped.log_mass) == (0, 0, 0, 0)
    assert stripped.log_theta_mgf is None and stripped.t is m.t
    copied = m.copy()
    copied.t[2] = 1.0
    assert m.t[2] == 0.25


def test_split_growth_adds_the_growth_of_every_split():
    """split_growth(h, 8h) is the sum of the growths of the splits at h, 2h and 4h (each at least
    1e-12 and at least the log of the split's factor for E[e^(-theta S)]); it is remembered,
    so it is read-only."""
    h = 2.0**-7
    total = measure.split_growth(h, 8 * h)
    assert measure.split_growth(h, 8 * h) is total and not total.flags.writeable
    steps = [measure.split_growth(x, 2 * x) for x in (h, 2 * h, 4 * h)]
    np.testing.assert_allclose(total, sum(steps), rtol=1e-15, atol=1e-18)
    for x, step in zip((h, 2 * h, 4 * h), steps):
        factor = np.logaddexp(measure.THETAS * x, (1.0 - measure.THETAS) * x) - math.log1p(math.exp(x))
        assert np.all(step >= np.maximum(factor, 0.0)) and np.all(step >= 1e-12)
    assert not measure.split_growth(h, h).any()
