"""plan: how finely and over which window one step of a phase is discretised (S3, S6 of
docs/pld-soundness.md).

References: for the Gaussian mechanism without subsampling the loss of one step is N(m, 2m),
m = 1/(2 sigma^2), whose tails are normal tails (`dpcalc.core.special.ndtr`, itself checked
against mpmath in tests/core/test_special.py); elsewhere properties that must hold: the
window holds the mean, the mass above it is within its share of the budget, and a plan for a
finer accuracy discretises on a finer grid.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core.phases import Phase
from dpcalc.core.pld import offset, plan
from dpcalc.core.pld.model import PhaseModel
from dpcalc.core.pld.pairs import GaussianPair
from dpcalc.core.special import ndtr
from tests.core.pld.helpers import DESIGN_CARD, discretised_step, gaussian, gaussian_masses, pile_mean_loss_shortfall

RUNS = [(gaussian(*DESIGN_CARD), 1e-5), (gaussian(1.0, 2.0, 100), 1e-5), (gaussian(0.1, 0.7, 1000), 1e-8)]


@pytest.mark.parametrize("phase, delta", RUNS)
def test_the_step_window_contains_the_mean(phase, delta):
    step = discretised_step(phase, delta)
    model, the_plan = step.model, step.plan
    h = step.lower.bulk.h
    k_lo, k_hi = plan.step_window(model, h, the_plan)
    assert k_lo * h < model.mean < k_hi * h
    assert model.pair.support[0] - 2 * h <= k_lo * h
    # the mass at or above the top is at most its share of the budget (one of `events`
    # truncations, for each of the phase's steps)
    share = the_plan.log_inf_budget - math.log(the_plan.events) - math.log(phase.steps)
    assert plan.log_tail_above(model.pair, np.array([k_hi * h]))[0] <= share
    assert model.cap >= model.mean and model.cap == plan.cap(model, the_plan.log_inf_budget, the_plan.events)


def test_the_tails_bound_the_exact_ones():
    pair = GaussianPair(1.0, 1.0, "remove")  # loss N(1/2, 1)
    points = np.array([-2.0, 0.0, 1.0, 3.0, 6.0, 9.0])
    above = np.exp(plan.log_tail_above(pair, points))
    below = np.exp(plan.log_tail_below(pair, points))
    for c, high, low in zip(points, above, below):
        exact_above, exact_below = ndtr(0.5 - c), ndtr(c - 0.5)
        assert exact_above <= high <= exact_above * (1 + 1e-9)
        assert exact_below <= low <= exact_below * (1 + 1e-9)


@pytest.mark.parametrize("phase, delta", RUNS)
def test_a_plan_twice_as_fine_halves_the_grid_step(phase, delta):
    step = discretised_step(phase, delta)
    lam, events = step.plan.lam, step.plan.events
    coarse = plan.make_plan(lam, 0.0, delta, 1.0, plan.INF_SHARE, events, 1e-6)
    fine = plan.make_plan(lam, 0.0, delta, 2.0, plan.INF_SHARE, events, 1e-6)
    assert (fine.step_bins, fine.upper_coarse_bins, fine.lower_coarse_bins) == (
        2 * coarse.step_bins, 2 * coarse.upper_coarse_bins, 2 * coarse.lower_coarse_bins)
    assert fine.min_step == coarse.min_step / 2
    assert coarse.log_inf_budget == pytest.approx(math.log(plan.INF_SHARE * delta), rel=1e-15)
    (upper, lower), (fine_upper, fine_lower) = (plan.step_measures(step.model, p) for p in (coarse, fine))
    assert fine_lower.bulk.h == lower.bulk.h / 2 and fine_upper.bulk.h == upper.bulk.h / 2
    # the upper bound's step is one coarsening above the lower bound's (its error is far smaller)
    assert upper.bulk.h == 2 * lower.bulk.h and upper.steps == lower.steps == 1
    # in epsilon mode the budget scales with the Chernoff bound on delta instead
    by_eps = plan.make_plan(lam, math.log(1e-7), None, 1.0, plan.INF_SHARE, events, 0.0)
    assert by_eps.log_inf_budget == pytest.approx(math.log(plan.INF_SHARE * 1e-7), rel=1e-15)


def test_long_tails_get_a_coarse_layer():
    design = discretised_step(gaussian(*DESIGN_CARD), 1e-5)
    assert design.upper.tail is not None and design.lower.tail is not None
    ratio = design.lower.tail.h / design.lower.bulk.h
    assert ratio >= 2 and ratio == 2 ** round(math.log2(ratio))
    narrow = discretised_step(gaussian(1.0, 2.0, 100), 1e-5)
    assert narrow.upper.tail is None
    model, h = narrow.model, narrow.lower.bulk.h
    assert plan.tail_split(model, h, *plan.step_window(model, h, narrow.plan), narrow.plan.lam) is None


@pytest.mark.parametrize("target", [3.7, 0.01, 29.99])
def test_grid_search_finds_the_first_grid_point(target):
    h = 2.0**-4
    assert plan.grid_search(lambda c: c >= target, 0.0, 1.0, True, h) == math.ceil(target / h)
    assert plan.grid_search(lambda c: c <= -target, 0.0, 1.0, False, h) == math.floor(-target / h)
    with pytest.raises(FloatingPointError, match="does not decay"):
        plan.grid_search(lambda c: np.zeros(len(c), dtype=bool), 0.0, 1.0, True, h)


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_the_grid_offset_puts_a_point_at_the_ratio_of_the_pile(direction):
    # p = 1e-5, sigma = 0.5: half of a step's mass lies within p/2 = 5e-6 of log(1 - p)
    # (remove) or -log(1 - p) (add), inside one cell of h = 2^-15. The offset is the point
    # whose cell, cut at the end of the support, has its likelihood ratio (mpmath), rounded
    # to a multiple of h 2^-12 towards the inside of the support: up at the lower end (remove),
    # down at the upper end (add).
    p, sigma, h = 1e-5, 0.5, 2.0**-15
    model = PhaseModel(gaussian(p, sigma, 10**7), direction)
    g = offset.grid_offset(model, h, 4.0)
    unit = h * 2.0**-12
    assert g == math.floor(g / unit) * unit and g != 0.0
    end = math.log1p(-p) if direction == "remove" else -math.log1p(-p)
    lo, hi = (end, g + h / 2) if direction == "remove" else (g - h / 2, end)
    assert lo < hi
    masses = gaussian_masses(p, sigma, direction, lo, hi)
    ratio = float(mp.log(masses[0] / masses[1]))
    if direction == "remove":
        assert g - unit * 1.001 <= ratio <= g
    else:
        assert g <= ratio <= g + unit * 1.001


def test_the_lower_measure_keeps_the_mean_loss_of_the_pile():
    # p = 1e-5, sigma = 0.5, h = 2^-17, remove: three quarters of one step's mass lie in the
    # lowest cell. The mean loss of the lower measure over its first 1000 cells (losses below
    # 0.0076) is compared with that of the same cells cut into 64 parts each (a finer garbling
    # of the pair, whose mean is within (h/64)^2 of the pair's there). With the pile's point
    # rounded down (below its ratio) the lower measure lost 1.1e-9 a step, 40% of the exact mean
    # loss 2.66e-9, and T = 1e7 steps add it up; rounded up (the pile borrows from the cell
    # above) it loses 1.6e-11.
    assert -1e-12 <= pile_mean_loss_shortfall(1e-5, 0.5, 2.0**-17, 4.4, 1000) <= 5e-11



def test_the_pile_is_rounded_down_where_the_cell_above_cannot_lift_it():
    # A subsampled Laplace pair (p = 1e-4, b = 1, remove) has an atom at the lower end of its
    # support; the masses next to it are known to ~2.5e-11 relative, more than the pile's ratio
    # would lie below a point rounded up at h = 2^-24, so the lift could fail and the pile would
    # go down a whole step: the point is rounded down, and the cell's ratio (central value) lies
    # at or above it.
    h = 2.0**-24
    model = PhaseModel(Phase("laplace", 1e-4, None, 1.0, 10**6), "remove")
    g = offset.grid_offset(model, h, 42.4)
    end = model.pair.support[0]
    assert g != 0.0 and end - h * 2.0**-12 <= g <= end
    cells = model.pair.cell_masses(np.array([-math.inf, end, g + h / 2, math.inf]))
    assert float(cells.log_p[1] - cells.log_q[1]) >= g

def test_no_offset_without_a_narrow_pile():
    # without subsampling the support has no end; at p = 1e-4, sigma = 0.8 and h = 2^-17 the
    # pile spans several cells and the grid resolves it
    assert offset.grid_offset(PhaseModel(gaussian(1.0, 1.0, 10), "remove"), 2.0**-10, 1.0) == 0.0
    assert offset.grid_offset(PhaseModel(gaussian(1e-4, 0.8, 10**6), "remove"), 2.0**-17, 18.0) == 0.0


@pytest.mark.parametrize("phase", [
    gaussian(*DESIGN_CARD),
    pytest.param(gaussian(1e-4, 0.8, 1_000_000), marks=pytest.mark.slow),
    pytest.param(Phase(sampling_probability=0.004, noise_multiplier=1.1, steps=10_000, sampling="uniform", neighbours="replace-one"), marks=pytest.mark.slow),
])
def test_grid_offset_stops_its_bisection_at_the_same_offset(phase, monkeypatch):
    """The bisection of `grid_offset` stops once every point left rounds to one offset
    (`offset._same_unit`): the offset is the one of the full 40 halvings, bit for bit."""
    from dpcalc.core.pld.model import directions_of

    for direction in directions_of([phase]):
        model = PhaseModel(phase, direction.name)
        for h in (2.0**-8, 2.0**-11, 2.0**-13):
            for lam in (0.5, 8.0):
                early = offset.grid_offset(model, h, lam)
                with monkeypatch.context() as patch:
                    patch.setattr(offset, "_same_unit", lambda *args: False)
                    assert offset.grid_offset(model, h, lam) == early


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=1e-12, max_value=1e3))
def test_the_grid_step_is_the_ideal_one_rounded_down_by_less_than_a_third(ideal):
    """A step m 2^e, m in {1, 1.5}: every grid point k h = (2 m k) 2^(e - 1) is exact (S1, S5), and
    the grid holds 48 to 72 bins per sd (powers of two alone: 48 to 96)."""
    mantissa = plan.grid_mantissa(ideal)
    h = plan.lattice_step(ideal, mantissa)
    assert mantissa in (1.0, 1.5) and 2.0 / 3.0 * ideal < h <= ideal
    assert math.frexp(h / mantissa)[0] == 0.5  # h / m is a power of two
    for other in (1.0, 1.5):  # any mantissa's lattice rounds down by less than half
        step = plan.lattice_step(ideal, other)
        assert 0.5 * ideal < step <= ideal and math.frexp(step / other)[0] == 0.5


@pytest.mark.slow
def test_the_phases_of_a_run_share_one_lattice(monkeypatch):
    """Phases whose own steps lie on different lattices (remove direction: p = 0.01, sigma = 1 on
    powers of two, p = 0.02, sigma = 0.8 on 1.5 times them) are discretised on the longest phase's,
    so that doubling brings their grids together; the certified interval overlaps the one of the
    grids of powers of two (both are certified)."""
    from dpcalc.core.pld import api
    from dpcalc.core.pld.accountant import prepare

    phases = (gaussian(0.01, 1.0, 300), gaussian(0.02, 0.8, 500))
    setup = prepare(phases, 1e-5, None, 1e-3)
    mixed = False
    for direction in setup.order:
        models = setup.models[direction]
        the_plan = plan.make_plan(*setup.tilts[direction], 1e-5, setup.scale, plan.INF_SHARE, setup.events,
                                  setup.per_step_error(setup.reference))
        own = [plan.grid_mantissa(plan._ideal_step(model, the_plan)) for model in models]
        mixed |= own == [1.0, 1.5]
        mantissa = plan.run_mantissa(models, the_plan)
        assert mantissa == own[1]  # the phase of more steps
        for model in models:
            upper, lower = plan.step_measures(model, the_plan, mantissa=mantissa)
            assert all(math.frexp(m.bulk.h / mantissa)[0] == 0.5 for m in (upper, lower))
    assert mixed
    lattice = api.account(phases, delta=1e-5, epsilon=None, accuracy=1e-3)
    monkeypatch.setattr(plan, "_MANTISSAS", (1.0,))
    powers = api.account(phases, delta=1e-5, epsilon=None, accuracy=1e-3)
    assert lattice.grid_step == 1.5 * powers.grid_step and not lattice.warnings
    for result in (lattice, powers):
        assert 0.0 < result.epsilon_lower <= result.epsilon_upper <= result.epsilon_lower * (1 + 1e-3)
    assert lattice.epsilon_lower <= powers.epsilon_upper and powers.epsilon_lower <= lattice.epsilon_upper


@pytest.mark.parametrize("phase, delta", RUNS)
def test_remembered_tails_do_not_change_a_window(phase, delta):
    # the tails a model remembers (`PhaseModel.tails`) serve every search of its run: a window found
    # after other searches (the cap, other grids) is the one a fresh model finds, and the values
    # remembered are those computed afresh
    step = discretised_step(phase, delta)
    h, the_plan = step.lower.bulk.h, step.plan
    fresh = PhaseModel(phase, "add")
    fresh.cap = step.model.cap
    expected = plan.step_window(fresh, h, the_plan)
    used = PhaseModel(phase, "add")
    used.cap = step.model.cap
    plan.cap(used, the_plan.log_inf_budget, the_plan.events)
    for other in (4.0 * h, 2.0 * h, h / 2.0):
        plan.step_window(used, other, the_plan)
    assert plan.step_window(used, h, the_plan) == expected
    for (above, points), tail in used.tails.items():
        values = np.frombuffer(points)
        afresh = plan.log_tail_above(used.pair, values) if above else plan.log_tail_below(used.pair, values)
        assert np.array_equal(tail, afresh)


@pytest.mark.parametrize("phase, widened", [(gaussian(*DESIGN_CARD), False), (gaussian(1e-4, 0.6, 10**6), True)])
def test_an_upper_measure_keeps_a_widened_step(phase, widened):
    """Where one step's window does not fit _MAX_STEP_BINS at the plan's step, the step grows
    (`StepGrid.widened`) and the upper measure keeps it instead of being coarsened once more; the
    upper-only path (`upper_step_measure`, one mass per cell instead of two halves, so its mass
    bounds differ in their last digits) puts the same measure on the same grid as
    `step_measures` without the pile's offset (which only the lower measure needs)."""
    step = discretised_step(phase, 1e-5)
    grid = plan._step_grid(step.model, step.plan)
    assert grid.widened is widened
    assert step.lower.bulk.h == grid.h
    assert step.upper.bulk.h == (grid.h if widened else 2.0 * grid.h)
    alone = plan.upper_step_measure(step.model, step.plan)
    unshifted, _ = plan.step_measures(step.model, step.plan, align=False)
    assert alone.bulk.h == unshifted.bulk.h and alone.bulk.k0 == unshifted.bulk.k0
    np.testing.assert_allclose(alone.bulk.t, unshifted.bulk.t, rtol=1e-3, atol=1e-15)


@pytest.mark.slow
def test_a_widened_step_meets_the_accuracy():
    """p = 1e-4, sigma = 0.6, T = 1e6 (a dataset of 10^7 examples in batches of 1000): one step's
    window needs a step twice the plan's; with the upper measure on it the interval meets 1e-3 on
    the first grid (coarsened once more, it stalled 1.04e-3 wide after two grids)."""
    from dpcalc.core import pld
    result = pld.tight_epsilon([gaussian(1e-4, 0.6, 10**6)], 1e-5)
    assert result.epsilon_upper - result.epsilon_lower <= 1e-3 * result.epsilon_upper
    assert not result.warnings
    # inside the interval the engine certified before the chain merges (after two grids, warned):
    # its lower measure keeps the grid of shorter runs (a widened step, `plan.step_widened`)
    assert 1.6105538096 <= result.epsilon_lower <= result.epsilon_upper <= 1.6122555363


def test_a_widened_step_keeps_the_lower_grid_of_shorter_runs():
    """A step whose window forced a coarser step than the plan's (small p, small sigma) composes
    its lower measure on the grid of runs under LOWER_COARSE_LONG steps, however long the run; the
    design card's step is not widened (docs/pld-soundness.md, S4)."""
    from dpcalc.core.pld import accountant

    for p, sigma, steps, widened in ((1e-4, 0.6, 10**6, True), (0.004, 1.1, 10_000, False)):
        setup = accountant.prepare([gaussian(p, sigma, steps)], 1e-5, None, 1e-3)
        model = setup.models["remove"][0]
        grid_plan = plan.make_plan(*setup.tilts["remove"], 1e-5, setup.scale, plan.INF_SHARE, setup.events,
                                   setup.per_step_error(setup.reference))
        grid = plan._step_grid(model, grid_plan)
        assert grid.widened is widened
        assert plan.step_widened(model, grid_plan, grid.h) is widened
        _, lower = plan.step_measures(model, grid_plan, align=True)
        assert plan.step_widened(model, grid_plan, lower.bulk.h) is widened
    for steps in (10**4, 10**6, 10**9):
        assert plan.lower_coarse_share(steps, True, widened=True) == min(0.5, max(0.25, (steps / 1e6) ** 0.3))
        assert plan.lower_coarse_share(steps, False, widened=True) == 1.0
    assert plan.lower_coarse_share(100, True, widened=True) == plan.lower_coarse_share(100)


def test_lower_coarse_share_of_long_runs():
    """Runs of LOWER_COARSE_LONG steps or more compose their lower measure on _LOWER_LONG_BINS
    points per sd, growing as (steps / LOWER_COARSE_LONG)^0.3 up to the half of the full grid;
    shorter runs keep a quarter to a half, as before (docs/pld-soundness.md, S4)."""
    full = plan._LOWER_COARSE_BINS_PER_SD
    assert plan.lower_coarse_share(100) == 0.25
    assert plan.lower_coarse_share(9_999) == pytest.approx((9_999 / 1e6) ** 0.3, rel=1e-12)
    assert plan.lower_coarse_share(10_000) * full == pytest.approx(96.0, rel=1e-12)
    assert plan.lower_coarse_share(10**6) * full == pytest.approx(96.0 * 100**0.3, rel=1e-12)
    assert plan.lower_coarse_share(10**12) == 0.5
    long_runs = [10**4, 3 * 10**4, 10**5, 10**6, 10**7, 10**8, 10**9]
    shares = [plan.lower_coarse_share(steps) for steps in long_runs]
    assert shares == sorted(shares)


def test_lower_coarse_share_of_other_queries():
    """Delta at one epsilon and profiles (Plan.short_runs_coarser false) keep the full grid below
    LOWER_COARSE_LONG steps, and from there _PROFILE_LONG_BINS points per sd, growing the same way
    up to the full grid (docs/pld-soundness.md, S4)."""
    full = plan._LOWER_COARSE_BINS_PER_SD
    assert plan.lower_coarse_share(100, False) == 1.0
    assert plan.lower_coarse_share(9_999, False) == 1.0
    assert plan.lower_coarse_share(10_000, False) * full == pytest.approx(192.0, rel=1e-12)
    assert plan.lower_coarse_share(10**6, False) * full == pytest.approx(192.0 * 100**0.3, rel=1e-12)
    assert plan.lower_coarse_share(10**12, False) == 1.0
    for steps in (10**4, 10**5, 10**6, 10**9):
        assert plan.lower_coarse_share(steps, False) >= plan.lower_coarse_share(steps)


def test_long_run_delta_and_risk_inside_their_earlier_intervals():
    """The design card's delta at eps = 2 and attack-risk figures on the coarser long-run grid:
    inside the certified intervals the engine gave before the chain merges (recorded then:
    delta [2.430202957e-06, 2.430802573e-06]; TPR at FPR 1e-5 from 7.261788e-05, advantage
    from 0.178388620), within the accuracy, on one grid."""
    from dpcalc.core import pld, risk

    phases = [Phase("gaussian", 0.004, 1.1, None, 10_000)]
    result = pld.tight_delta(phases, 2.0)
    assert result.attempts == 1 and result.warnings == ()
    assert 2.430202957e-06 <= result.delta_lower <= result.delta_upper <= 2.430802573e-06
    figures = risk.attack_risk(phases)
    assert figures.advantage.lower >= 0.178388620
    first = figures.points[0]
    assert first.fpr == 1e-5 and first.tpr.lower >= 7.261788e-05
    assert first.tpr.upper - first.tpr.lower <= 1e-3 * first.tpr.upper


@pytest.mark.parametrize("steps, before", [(10_000, (1.840277, 1.841477)), (10**6, None)])
def test_long_run_lower_bound_within_accuracy(steps, before):
    """A long run's coarser lower grid keeps the interval within the accuracy on its first grid,
    and (design card) inside the certified interval recorded before the chain merges."""
    from dpcalc.core import pld

    result = pld.tight_epsilon([Phase("gaussian", 0.004 if before else 1e-3, 1.1, None, steps)], 1e-5)
    assert result.attempts == 1 and result.warnings == ()
    assert result.epsilon_upper - result.epsilon_lower <= 1e-3 * result.epsilon_upper
    if before is not None:
        assert before[0] <= result.epsilon_lower <= result.epsilon_upper <= before[1]
