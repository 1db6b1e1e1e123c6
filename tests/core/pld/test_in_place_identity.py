"""The in-place and single-branch forms of the discretisation's helpers give the floats of the
plain expressions they replace, bit for bit (the PLD bounds are compared bit for bit: see
tools/fingerprint.py). Each plain expression is written out here as it stood before."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcalc.core.pld.normal import log_density
from dpcalc.core.pld.pairs.base import U, _combine, _x_sensitivity
from dpcalc.core.pld.pairs.gaussian import _SubsampledRatio
from dpcalc.core.special_array import finite_abs, log1mexp, log_sub

_LOG2 = math.log(2.0)
_SPECIAL = np.array([0.0, -0.0, -math.inf, math.inf, math.nan, -_LOG2, np.nextafter(-_LOG2, 0.0),
                     np.nextafter(-_LOG2, -1.0), -1e-300, -5e-324, -708.0, -745.0, -800.0, 1.0])


def _plain_log1mexp(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.where(x > -_LOG2, np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def _plain_log_sub(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        d = b - a
        d = np.where(np.isnan(d), np.where(np.isneginf(b), -math.inf, 0.0), d)
        return np.where(d < 0.0, a + _plain_log1mexp(np.minimum(d, 0.0)), -math.inf)


def _same(x: np.ndarray, y: np.ndarray) -> bool:
    return bool(np.asarray(x).tobytes() == np.asarray(y).tobytes())


def _samples(rng: np.random.Generator) -> np.ndarray:
    n = int(rng.integers(0, 3000))
    x = np.concatenate([-rng.exponential(float(rng.choice([1e-3, 1.0, 10.0, 100.0])), n),
                        rng.choice(_SPECIAL, int(rng.integers(0, 40)))])
    rng.shuffle(x)
    return x


def test_log1mexp_finite_abs_log_sub_match_the_plain_expressions():
    rng = np.random.default_rng(5)
    for trial in range(150):
        x = _samples(rng)
        if trial % 3 == 0:
            x = np.sort(x)
        for y in (x, x[::2], np.abs(x) * -1e-3):
            assert _same(log1mexp(y), _plain_log1mexp(y))
            assert _same(finite_abs(y), np.abs(np.where(np.isfinite(y), y, 0.0)))
        a = rng.normal(0.0, 5.0, len(x))
        a[rng.random(len(x)) < 0.05] = -math.inf
        with np.errstate(invalid="ignore"):
            b = a + x
        b[rng.random(len(x)) < 0.05] = math.nan
        for first, second in ((a, b), (b, a), (a, x)):
            assert _same(log_sub(first, second), _plain_log_sub(first, second))
    for value in _SPECIAL:
        assert _same(log1mexp(value), _plain_log1mexp(np.asarray(value)))
        assert _same(log1mexp(np.array([value])), _plain_log1mexp(np.array([value])))


@pytest.mark.parametrize("p", [1e-5, 1e-4, 0.01, 0.5])
def test_subsampled_inverse_matches_the_gathered_forms(p):
    """`inverse` on grids taking one form everywhere (far, near) and both, against the forms at
    gathered points."""
    rng = np.random.default_rng(3)
    for scale in (0.25, 1.0, 4.0):
        ratio = _SubsampledRatio(p, scale)
        for trial in range(30):
            lo, hi = sorted(rng.normal(0.0, 3.0, 2))
            loss = np.linspace(lo, hi, int(rng.integers(1, 2000)))
            if trial % 4 == 0:
                loss = np.concatenate(([-math.inf], loss, [math.inf]))
            for grid in (loss, np.abs(loss) + 1.0001, np.linspace(-0.5, 0.5, 300) * float(rng.random())):
                y, err = ratio.inverse(grid)
                d = grid - ratio.log1m_p
                valid = d > 0.0
                with np.errstate(over="ignore", invalid="ignore"):
                    b = np.expm1(np.where(valid, grid, 0.0)) / p
                near = valid & (np.abs(grid) <= 1.0) & (b > -0.5)
                far = valid & ~near
                want_y, want_err = np.full(grid.shape, -math.inf), np.zeros(grid.shape)
                if far.any():
                    want_y[far], want_err[far] = ratio._far(d[far], grid[far])
                if near.any():
                    want_y[near], want_err[near] = ratio._near(b[near])
                assert _same(y, want_y)
                assert _same(err, np.where(np.isfinite(want_y), want_err, 0.0))


def test_x_sensitivity_and_combine_match_the_plain_expressions():
    rng = np.random.default_rng(7)
    s = 0.7
    for _ in range(50):
        n = int(rng.integers(1, 2000))
        t_lo = np.sort(rng.normal(0.0, 10.0, n))
        t_lo[rng.random(n) < 0.05] = -math.inf
        t_hi = t_lo + rng.exponential(0.1, n)
        t_hi[rng.random(n) < 0.05] = math.inf
        e_lo, e_hi = rng.random(n) * 1e-15, rng.random(n) * 1e-15
        log_mass = rng.normal(-20.0, 10.0, n)
        log_mass[rng.random(n) < 0.05] = -math.inf
        with np.errstate(invalid="ignore", over="ignore"):
            a = np.where(np.isfinite(t_lo), np.exp(np.minimum(log_density(t_lo) - log_mass, 700.0)) * e_lo / s, 0.0)
            b = np.where(np.isfinite(t_hi), np.exp(np.minimum(log_density(t_hi) - log_mass, 700.0)) * e_hi / s, 0.0)
        assert _same(_x_sensitivity(s, t_lo, e_lo, t_hi, e_hi, log_mass), np.where(np.isneginf(log_mass), 0.0, a + b))
        other = log_mass[::-1].copy()
        rel_a, rel_b = rng.random(n), rng.random(n)
        total, rel = _combine(log_mass, rel_a, other, rel_b)
        with np.errstate(invalid="ignore"):
            want_total = np.logaddexp(log_mass, other)
        assert _same(total, want_total)
        assert _same(rel, np.where(np.isneginf(want_total), 0.0, np.maximum(rel_a, rel_b) + 2.0 * U))
