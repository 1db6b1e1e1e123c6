"""layers: two-resolution measures, a fine bulk and a coarse tail (S3 of docs/pld-soundness.md).

Reference: the Gaussian mechanism without subsampling, whose n-fold composition is exactly
mu-GDP with mu = sqrt(n)/sigma (Dong, Roth, Su 2022, Cor. 3.3; `dpcalc.core.gdp`). One step is
discretised by hand into a bulk (step 2^-9) and a tail (step 2^-5); every operation on the
layers (products, moving the bulk's top into the tail, coarsening the bulk until the layers
merge, cutting the windows) must leave the certified profile bracketing the exact one.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcalc.core.pld import bounds, discretise, layers
from dpcalc.core.pld.layers import Layered
from dpcalc.core.pld.measure import THETAS
from dpcalc.core.pld.pairs import GaussianPair
from tests.core.pld.helpers import brackets, gdp_delta, gdp_epsilon

SIGMA = 1.0
BULK_STEP, TAIL_STEP = 2.0**-9, 2.0**-5
EPSILONS = np.linspace(0.0, 6.0, 13)


@pytest.fixture(scope="module")
def one_step():
    """(upper, lower) two-layer measures of one step of sigma = 1, p = 1 (loss N(1/2, 1)),
    tilted by lam = 1/2: the bulk up to 2.5, the tail up to 14.5."""
    pair = GaussianPair(1.0, SIGMA, "remove")
    k_lo = math.floor(-5.5 / BULK_STEP)
    k_cut = round(2.5 / TAIL_STEP) * round(TAIL_STEP / BULK_STEP)
    j_hi = math.ceil(14.5 / TAIL_STEP)
    ub, ut, lb, lt = discretise.discretise_step_layers(pair, BULK_STEP, k_lo, k_cut, TAIL_STEP, j_hi, 0.5, 1)
    assert ut is not None and lt is not None
    return Layered(ub, ut), Layered(lb, lt)


@pytest.fixture(scope="module")
def two_steps(one_step):
    upper, lower = one_step
    return layers.convolve(upper, upper), layers.convolve(lower, lower)


def assert_brackets_gdp(upper: Layered, lower: Layered, steps: int) -> None:
    for eps in EPSILONS:
        exact = gdp_delta(SIGMA, steps, float(eps))
        assert brackets(bounds.delta_bound(lower, eps), exact, bounds.delta_bound(upper, eps))
    for delta in (1e-3, 1e-6):
        exact = gdp_epsilon(SIGMA, steps, delta)
        assert brackets(bounds.epsilon_bound(lower, delta), exact, bounds.epsilon_bound(upper, delta))


def test_one_step_in_two_layers_brackets_gdp(one_step):
    upper, lower = one_step
    assert (upper.bulk.h, upper.tail.h) == (BULK_STEP, TAIL_STEP)
    assert upper.bins == len(upper.bulk.t) + len(upper.tail.t) and len(upper.layers()) == 2
    assert_brackets_gdp(upper, lower, 1)


def test_two_layer_convolutions_bracket_gdp(one_step, two_steps):
    upper, lower = two_steps
    # bulk * bulk on the fine grid, the cross and tail products on the coarse one
    assert (upper.bulk.h, upper.tail.h) == (BULK_STEP, TAIL_STEP) and upper.steps == 2
    assert upper.tail.inf_mass == 0.0 and upper.tail.log_theta_mgf is None  # whole-measure fields on the bulk
    assert_brackets_gdp(upper, lower, 2)
    # a product of two different measures (the cross products taken one by one)
    three = layers.convolve(one_step[0], upper), layers.convolve(one_step[1], lower)
    assert_brackets_gdp(*three, 3)


@pytest.mark.parametrize("log_weight_limit", [-2.0, -5.0, -8.0])
def test_resplit_moves_the_bulks_top_into_the_tail(two_steps, log_weight_limit):
    upper, lower = two_steps
    moved = layers.resplit(upper, log_weight_limit), layers.resplit(lower, log_weight_limit)
    for before, after in zip(two_steps, moved):
        assert len(after.bulk.t) < len(before.bulk.t) and after.tail.h == TAIL_STEP
        assert after.bulk.k0 == before.bulk.k0
    assert_brackets_gdp(*moved, 2)


@pytest.mark.parametrize("log_weight_limit", [-2.0, -5.0, -8.0, -700.0])
def test_resplit_cuts_at_the_first_light_bin_above_the_peak(two_steps, log_weight_limit):
    # the cut by its definition, scanned bin by bin: the first bin above the peak from which
    # up the bulk's weight is at most the limit, moved up to the tail grid (none: unchanged)
    for m in two_steps:
        bulk, t = m.bulk, m.bulk.t
        limit = math.exp(log_weight_limit + float(np.logaddexp(bulk.log_z, m.tail.log_z)) - bulk.log_z)
        above = np.cumsum(np.abs(t)[::-1])[::-1]
        first = next((i for i in range(int(np.argmax(t)) + 1, len(t)) if above[i] <= limit), None)
        moved = layers.resplit(m, log_weight_limit)
        if first is None:
            assert moved is m
            continue
        ratio = round(m.tail.h / bulk.h)
        cut = -(-(bulk.k0 + first) // ratio) * ratio - bulk.k0
        assert len(moved.bulk.t) == (len(t) if cut >= len(t) - 1 else cut)


def test_light_top_counts_as_one_running_sum():
    # taken a piece at a time from the top, the running weight is the one np.cumsum gives at once
    rng = np.random.default_rng(7)
    for n in [1, 5, 1023, 1024, 1025, 4096, 9001]:
        t = rng.standard_normal(n) * np.exp(rng.uniform(-60.0, 0.0, n))
        t[rng.random(n) < 0.2] = 0.0
        from_top = np.cumsum(np.abs(t)[::-1])
        for limit in [0.0, float(from_top[0]), float(from_top[n // 2]), float(from_top[-1]), 1e-30, math.inf,
                      math.nan]:
            expected = int(np.searchsorted(from_top, limit, side="right")) if limit == limit else 0
            assert layers._light_top(t, limit) == expected, (n, limit)


def test_coarsening_the_bulk_merges_the_layers(two_steps):
    upper, lower = two_steps
    while upper.tail is not None:
        upper, lower = layers.coarsen_bulk(upper), layers.coarsen_bulk(lower)
    assert upper.bulk.h == TAIL_STEP and lower.tail is None
    assert upper.bulk.inf_mass == two_steps[0].bulk.inf_mass  # the whole-measure fields counted once
    assert_brackets_gdp(upper, lower, 2)
    assert layers.align(two_steps[0], 4 * BULK_STEP).bulk.h == 4 * BULK_STEP
    assert two_steps[0].coarse_bulk(TAIL_STEP) is two_steps[0].coarse_bulk(TAIL_STEP)  # coarsened once


def test_truncating_layers_keeps_the_mass_at_inf_on_the_bulk(two_steps):
    budgets = {"log_inf_budget": math.log(1e-9), "log_rho_budget": math.log(1e-9), "multiplicity": 1}
    upper, lower = (layers.truncate(m, **budgets) for m in two_steps)
    assert upper.tail.inf_mass == 0.0 and 0.0 < upper.bulk.inf_mass <= 1e-9 * (1 + 1e-9)
    for before, after in zip(two_steps, (upper, lower)):
        assert after.bins < before.bins
    assert_brackets_gdp(upper, lower, 2)


def _assert_mgf_bounds(m: Layered) -> None:
    """The bulk's whole-measure bounds on log E[e^(-theta S)] hold for the represented layers
    (both signs of theta: the lower-tail bounds of S6 and the upper-tail ones of S3's caps), up
    to the FFT's noise: the represented masses differ from the exact ones by at most err (L1,
    tilted units) in each layer, which weighs at most e^(log_z - (lam + theta) s) there."""
    bound = m.bulk.log_theta_mgf
    assert bound is not None
    for index, theta in enumerate(THETAS):
        terms, noise = [], []
        for layer in m.layers():
            log_weight = layer.log_z - (layer.lam + theta) * layer.losses
            positive = layer.t > 0.0
            terms.append(np.log(layer.t[positive]) + log_weight[positive])
            noise.append(math.log(layer.err) + float(log_weight.max()))
        actual = float(np.logaddexp.reduce(np.concatenate(terms)))
        allowed = float(np.logaddexp.reduce([bound[index], *noise]))
        assert actual <= allowed + 1e-9, (theta, actual, bound[index])


def test_whole_measure_mgf_bounds_survive_layered_operations(one_step):
    """Cross products of coarsened bulks, moving the bulk's top into the tail and merging the
    layers all coarsen parts of the measure by S3 splits, which raise E[e^(-theta S)] for
    theta < 0 (and > 1): the whole-measure bounds take `measure.split_growth` each time."""
    upper, _ = one_step
    _assert_mgf_bounds(upper)
    square = layers.convolve(upper, upper)
    _assert_mgf_bounds(square)
    moved = layers.resplit(square, math.log(1e-3))
    assert len(moved.bulk.t) < len(square.bulk.t)
    _assert_mgf_bounds(moved)
    product = layers.convolve(moved, upper)
    _assert_mgf_bounds(product)
    merged = product
    while merged.tail is not None:
        merged = layers.coarsen_bulk(merged)
    _assert_mgf_bounds(merged)
