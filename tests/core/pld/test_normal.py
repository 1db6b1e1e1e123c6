"""normal: vectorised normal tails with certified relative error, against mpmath (50 digits).

The error model is that of S2 in docs/pld-soundness.md: every tail value within
`normal.NORMAL_RELATIVE_ERROR` (beyond the u t^2/2 of exp(-t^2/2) in the upper tail), the Mills
ratio within a few units of round-off, and every interval mass within its returned bound.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from dpcalc.core.pld import normal, normal_interval
from tests.core.pld.helpers import U


@pytest.mark.slow
def test_normal_tails_against_mpmath():
    t = np.concatenate([np.linspace(-8.0, 37.0, 1801), np.random.default_rng(7).uniform(-10.0, 37.0, 400)])
    tail = normal.upper_tail(t)
    log_tail = normal.log_upper_tail(t)
    for ti, vi, li in zip(t, tail, log_tail):
        exact = mp.ncdf(-mp.mpf(ti))
        # relative error of the tail beyond the u t^2/2 of exp(-t^2/2) (module docstring)
        assert abs((mp.mpf(vi) - exact) / exact) <= normal.NORMAL_RELATIVE_ERROR * (1 + max(ti, 0) ** 2 / 2)
        assert abs(mp.mpf(li) - mp.log(exact)) <= 32 * U * max(1.0, abs(float(mp.log(exact))))


@pytest.mark.slow
def test_mills_ratio_against_mpmath():
    # Taylor series about anchors below 4, continued fraction above: a few ulps everywhere.
    t = np.concatenate([np.linspace(1.5, 8.0, 2001), np.linspace(8.0, 60.0, 200)])
    values = normal.mills_ratio(t)
    worst = max(
        abs(float((mp.mpf(v) - mp.ncdf(-mp.mpf(x)) / mp.npdf(mp.mpf(x))) / (mp.ncdf(-mp.mpf(x)) / mp.npdf(mp.mpf(x)))))
        for x, v in zip(t, values)
    )
    assert worst <= 16 * U


@pytest.mark.slow
def test_interval_masses_lie_within_their_bounds():
    rng = np.random.default_rng(3)
    low = rng.uniform(-40.0, 40.0, 600)
    high = low + 10.0 ** rng.uniform(-7.0, 1.0, 600)
    log_mass, rel = normal_interval.log_interval_mass(low, high)
    for a, b, lm, r in zip(low, high, log_mass, rel):
        if a + b > 0:
            exact = mp.ncdf(-mp.mpf(a)) - mp.ncdf(-mp.mpf(b))
        else:
            exact = mp.ncdf(mp.mpf(b)) - mp.ncdf(mp.mpf(a))
        if exact == 0:
            continue
        assert abs(mp.exp(mp.mpf(lm)) - exact) <= r * exact * (1 + 1e-12) or r >= 1


def _mp_interval_mass(a: float, b: float):
    """P(a <= Z < b) in mpmath, as a difference of the tails on the side where both are small."""
    a_mp, b_mp = mp.mpf(a), mp.mpf(b)
    return mp.ncdf(-a_mp) - mp.ncdf(-b_mp) if a + b > 0 else mp.ncdf(b_mp) - mp.ncdf(a_mp)


def test_narrow_interval_masses_are_within_their_bound_and_far_tighter():
    # Simpson's rule on the density for narrow intervals (normal_interval._narrow_intervals): the bound
    # must hold against mpmath, and for a cell 1e-4 wide it must be far below the ~1e-10 that the
    # difference of two tails allows (that error, amplified by 1/h, biased fine PLD grids).
    rng = np.random.default_rng(20261124)
    starts = np.concatenate([rng.uniform(-8.0, 8.0, 300), rng.uniform(-38.0, 38.0, 100)])
    widths = 10.0 ** rng.uniform(-12.0, 0.5, len(starts))
    log_mass, rel = normal_interval.log_interval_mass(starts, starts + widths)
    with mp.workdps(60):
        for a, w, lm, r in zip(starts, widths, log_mass, rel):
            b = float(a + w)
            exact = _mp_interval_mass(float(a), b)
            if exact == 0 or not b > a:
                continue
            got = mp.e ** mp.mpf(float(lm))
            assert abs(got - exact) <= r * got
    _, narrow = normal_interval.log_interval_mass(np.array([0.5, 2.0, -1.0]), np.array([0.5001, 2.0001, -0.9999]))
    assert float(narrow.max()) < 1e-13


@pytest.mark.slow
def test_contiguous_cells_evaluate_each_shared_end_once_with_the_same_values():
    # log_interval_mass evaluates the tail (or Mills ratio) at an end two neighbouring cells
    # share once: every cell's mass and bound equal those of the cell computed on its own,
    # for cells listed upwards, downwards (mirrored: the add direction) and with gaps.
    edges = np.concatenate([[-np.inf], np.linspace(-9.0, 9.0, 3001), [np.inf]])
    gapped = np.linspace(-9.0, 9.0, 400)
    for low, high in ((edges[:-1], edges[1:]), (edges[-2::-1], edges[:0:-1]), (gapped[:-1:2], gapped[1::2])):
        assert (high > low).all()
        log_mass, rel = normal_interval.log_interval_mass(low, high)
        for i in range(0, len(low), 7):
            alone_mass, alone_rel = normal_interval.log_interval_mass(low[i:i + 1], high[i:i + 1])
            assert log_mass[i] == alone_mass[0] and rel[i] == alone_rel[0]


def test_each_point_gets_the_value_it_gets_alone():
    # The continued fraction runs all its buckets in one pass over the terms, and upper_tail
    # takes whole arrays when one branch covers them: each point's value is still the one it
    # has evaluated on its own, bit for bit, across the bucket and branch edges and at the ends.
    edges = [1.5, 2.0, 3.0, 4.0, 6.0, 10.0]
    near = [np.nextafter(e, d) for e in edges for d in (-np.inf, np.inf)] + edges
    t = np.array(near + [3.984375, 4.0 - 2.0**-6, 38.0, 1e3, 1e10, 1e300, np.inf])
    t = np.random.default_rng(5).permutation(np.concatenate([t, np.linspace(1.5, 12.0, 57)]))
    for function, points in ((normal._mills_ratio_cf, t), (normal.mills_ratio, t),
                             (normal.upper_tail, np.concatenate([t, -t, [0.0, 0.7, -1.2]]))):
        with np.errstate(over="ignore"):  # t^2 overflows at 1e300 (the tail is 0 there)
            values = function(points)
            alone = np.array([function(points[i:i + 1])[0] for i in range(len(points))])
        assert values.tobytes() == alone.tobytes()
    assert normal.mills_ratio(np.array([np.inf]))[0] == 0.0
    assert len(normal.upper_tail(np.array([]))) == 0
