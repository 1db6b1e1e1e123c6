"""discretise: one step of a pair on a grid, the upper measure by connecting the dots and the
lower by garbling (S1-S4 of docs/pld-soundness.md), against the exact one-step profile in
mpmath (50 digits; tests/core/pld/helpers.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcalc.core.pld import bounds, discretise, layers
from dpcalc.core.pld.pairs import GaussianPair
from tests.core.pld.helpers import exact_one_step_delta, pile_mean_loss_shortfall


def test_one_step_discretised_profiles_bracket_the_exact_one():
    pair = GaussianPair(0.004, 1.1, "remove")
    h = 2.0**-13
    k_lo = math.floor(math.log1p(-0.004) / h) - 1
    upper, lower = discretise.discretise_step(pair, h, k_lo, int(2.5 / h), 9.0, 1)
    for eps in (0.0, 0.001, 0.01, 0.1, 0.5, 1.0):
        exact = exact_one_step_delta(0.004, 1.1, eps)  # the remove direction dominates here
        assert bounds.delta_bound(layers.single(lower), eps) <= exact <= bounds.delta_bound(layers.single(upper), eps)


def test_discretised_step_masses():
    # The upper measure keeps at least the whole mass; the lower at most; neither contains nan.
    pair = GaussianPair(0.004, 1.1, "remove")
    for exponent in (11, 13, 15):
        h = 2.0**-exponent
        k_lo = math.floor(math.log1p(-0.004) / h) - 1
        upper, lower = discretise.discretise_step(pair, h, k_lo, int(1.0 / h), 1.0, 1)
        for measure in (upper, lower):
            assert np.isfinite(measure.t).all()
        total = lambda m: float((m.t * np.exp(m.log_z - m.lam * m.losses)).sum())  # noqa: E731
        assert total(upper) + upper.inf_mass >= 1.0 - 1e-12
        assert total(lower) <= 1.0 + 1e-12


@pytest.mark.slow
def test_lower_measure_loses_little_at_the_edges_of_the_support():
    # p = 1e-4, sigma = 0.8: half of one step's mass piles up within p/2 of an end of the
    # support (log(1 - p) in the remove direction, -log(1 - p) in the add one). The lowest
    # (highest) cell has no neighbour beyond it to borrow from; it is merged into the next one
    # (S4) and the borrowing is reserved for the shares the borrowers keep. The garbling's
    # log E[e^(lam L)] then falls short of the pair's (quadrature, no cap) by about as much as
    # the connect-the-dots measure exceeds it. Before, at h = 2^-17: 7.3e-8 (remove, lam 1) and
    # 3.7e-6 (add, lam 21.5); over T = 1e6 steps such losses left the certified interval of
    # p = 1e-4, sigma = 0.8, T = 1e6 10% wide.
    h = 2.0**-17
    edge = math.log1p(-1e-4)
    for direction, lam, k_lo, k_hi in (("remove", 1.0, math.floor(edge / h) - 1, int(6.0 / h)),
                                      ("add", 21.5, math.floor(-0.4 / h), math.floor(-edge / h) + 2)):
        pair = GaussianPair(1e-4, 0.8, direction)
        full = pair.log_mgf(lam, math.inf)
        upper, lower = discretise.discretise_step(pair, h, k_lo, k_hi, lam, 1)
        assert -1e-10 <= full - lower.log_z <= 1e-8
        assert upper.log_z - full >= -1e-10


def test_the_lowest_cell_is_cut_where_its_ratio_reaches_its_point():
    # p = 0.004, sigma = 0.61, h = 2^-12: the pile at log(1 - p) is wider than half a cell, so
    # no grid offset puts it at a point (`offset.grid_offset`); with the centred cell its ratio lay
    # 0.05 h above its point, 17% of the mass was rounded down by that much, and
    # log E[e^(lam L)] of the lower measure fell 4e-6 short of the pair's (a lower bound 0.3%
    # low at T = 1e4). Cut where the cell's ratio reaches its point, the shortfall is that of
    # a grid twice as fine (~1e-8), and the upper measure has the same cells.
    pair = GaussianPair(0.004, 0.61, "remove")
    h, lam = 2.0**-12, 1.9074
    k_lo, k_hi = math.floor(math.log1p(-0.004) / h) - 1, 32832
    full = pair.log_mgf(lam, math.inf)
    upper, lower = discretise.discretise_step(pair, h, k_lo, k_hi, lam, 1)
    assert 0.0 <= full - lower.log_z <= 5e-8
    edges = (2 * k_lo - 1 + np.arange(2 * (k_hi - k_lo + 1) + 1)) * (0.5 * h)
    lifted = discretise._lift_first_cell(pair, edges)
    moved = np.flatnonzero(lifted != edges)
    assert len(moved) == 1
    i = int(moved[0])
    g = edges[i - 1]  # the cell's grid point
    assert g <= lifted[i] < edges[i]
    cell = pair.cell_masses(np.array([-math.inf, pair.support[0], lifted[i], math.inf]))
    assert 0.0 <= float(cell.log_p[1] - cell.log_q[1]) - g <= 1e-5 * h  # the cut found to 64^-3 of h/2
    unlifted = discretise._lift_first_cell
    try:
        discretise._lift_first_cell = lambda pair, half_edges: half_edges
        upper_before, _ = discretise.discretise_step(pair, h, k_lo, k_hi, lam, 1)
    finally:
        discretise._lift_first_cell = unlifted
    assert upper_before.k0 == upper.k0
    # the same cells; only the error bounds of the two halves, combined, differ (~3e-11 relative)
    np.testing.assert_allclose(upper.t, upper_before.t, rtol=1e-9, atol=1e-300)
    # a pile whose cell already lies at or below its point keeps its edges
    assert discretise._lift_first_cell(GaussianPair(0.004, 0.61, "add"), edges) is edges


def test_lower_measure_reserves_little_beyond_what_its_borrowers_take():
    # p = 1e-5, sigma = 0.5 at h = 2^-15 (the step T = 1e7 gets at the default accuracy), remove,
    # on the grid whose point 0 is the pile (`offset.grid_offset`): next to the pile each cell borrows
    # c ~ 0.05 of the next and reserves for its own lender; unused reserves go down a step. The mean
    # loss of the lower measure over its first 500 cells (losses below 0.015) is compared with that
    # of the same cells cut into 64 parts each (a finer garbling of the pair). Reserving from the
    # second iterate of the shares lost 8.6e-11 a step (3% of the exact mean loss 2.66e-9), from the
    # fourth 1.5e-11.
    assert -1e-12 <= pile_mean_loss_shortfall(1e-5, 0.5, 2.0**-15, 4.4, 500) <= 3e-11


def test_a_lowest_cell_whose_losses_all_lie_above_its_point_joins_the_next_cell():
    # p = 0.01, sigma = 0.8, h = 2^-11: log(1 - p) lies above the point of its centred cell, so
    # every loss of that cell, and its ratio, lie above the point (by up to h/2): rounded down,
    # log E[e^(lam L)] of the lower measure fell 7.3e-6 short of the pair's (p = 0.01, sigma = 0.8,
    # T = 1e4 then needed a grid twice as fine). The cell is emptied and its losses join the next
    # cell, cut where the joined cell's ratio reaches that cell's point: 1.4e-7 short.
    pair = GaussianPair(0.01, 0.8, "remove")
    h, lam = 2.0**-11, 3.0
    k_lo, k_hi = math.floor(math.log1p(-0.01) / h) - 1, int(8.0 / h)
    full = pair.log_mgf(lam, math.inf)
    _, lower = discretise.discretise_step(pair, h, k_lo, k_hi, lam, 1)
    assert 0.0 <= full - lower.log_z <= 5e-7
    edges = (2 * k_lo - 1 + np.arange(2 * (k_hi - k_lo + 1) + 1)) * (0.5 * h)
    lifted = discretise._lift_first_cell(pair, edges)
    first, cut = np.flatnonzero(lifted != edges)
    assert lifted[first] == edges[first - 1] < pair.support[0]  # emptied: its upper edge at its point
    g = edges[cut - 1]  # the next cell's point
    assert g <= lifted[cut] < edges[cut]
    cell = pair.cell_masses(np.array([-math.inf, pair.support[0], lifted[cut], math.inf]))
    assert 0.0 <= float(cell.log_p[1] - cell.log_q[1]) - g <= 1e-5 * h  # the cut found to 64^-3 of h/2


@pytest.mark.slow
def test_the_small_p_small_sigma_corner_step_brackets_the_exact_profile():
    """p = 1e-5, sigma = 0.5 (T = 1e7): the binding remove direction's one step on the grid the
    accountant chooses (widened to 2.4 points per sd, shifted to the pile) brackets the exact
    profile at every epsilon read; the corner's width comes from the bulk's placement within
    cells (docs/pld-soundness.md, S4), not from these values."""
    from dpcalc.core.phases import Phase
    from dpcalc.core.pld import accountant, plan

    setup = accountant.prepare((Phase("gaussian", 1e-5, 0.5, None, 10**7),), 1e-5, None, 1e-3)
    lam, estimate = setup.tilts["remove"]
    model = setup.models["remove"][0]
    grid_plan = plan.make_plan(lam, estimate, 1e-5, setup.scale, plan.INF_SHARE, setup.events, 0.0)
    upper, lower = plan.step_measures(model, grid_plan, align=True)
    assert upper.tail is None and upper.bulk.h == 2.0**-15
    for eps in (0.0, 1e-4, 1e-3, 0.01, 0.1, 1.0, 3.0, 5.0):
        exact = exact_one_step_delta(1e-5, 0.5, eps)
        assert bounds.delta_bound(lower, eps) <= exact <= bounds.delta_bound(upper, eps)
