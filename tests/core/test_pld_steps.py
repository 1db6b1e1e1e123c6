"""`tight_epsilons_over_steps`: one shared composition for runs that differ only in T.

References: the same accountant called once per T (`tight_epsilon`, itself tested against
mpmath, exact mu-GDP, dp_accounting and prv_accountant in test_pld.py), exact mu-GDP for the
Gaussian mechanism without subsampling (Dong, Roth, Su 2022, Cor. 3.3: T steps of sigma are
sqrt(T)/sigma-GDP), and dp_accounting 0.6.0's pessimistic PLD.
"""

from __future__ import annotations

import dataclasses
import math

import pytest

from dpcalc.core import gdp, pld
from dpcalc.core.phases import Phase
from dpcalc.core.validation import ParameterError

# An epochs sweep of the design card's shape: n = 60000, batch 256, epochs 1..20 (T = ceil(e n / b)).
EPOCH_STEPS = [math.ceil(epoch * 60000 / 256) for epoch in range(1, 21)]
DESIGN = Phase("gaussian", 256 / 60000, 1.1, None, 1)


@pytest.fixture(scope="module")
def epoch_rows():
    return pld.tight_epsilons_over_steps(DESIGN, 1e-5, EPOCH_STEPS)


def test_rows_are_certified_and_as_tight_as_one_call_each(epoch_rows):
    assert [row.phases[0].steps for row in epoch_rows] == EPOCH_STEPS
    for row in epoch_rows[::4]:
        single = pld.tight_epsilon(list(row.phases), 1e-5)
        # both intervals contain the true epsilon, so they overlap
        assert row.epsilon_lower <= single.epsilon_upper and single.epsilon_lower <= row.epsilon_upper
        # the shared composition meets the same accuracy
        assert row.epsilon_upper - row.epsilon_lower <= 1e-3 * row.epsilon_upper
        assert row.epsilon == row.epsilon_upper and row.delta == 1e-5 and not row.warnings


def test_rows_rise_with_T(epoch_rows):
    uppers = [row.epsilon_upper for row in epoch_rows]
    assert uppers == sorted(uppers)


def test_input_order_and_repeats_are_kept():
    steps = [400, 100, 200, 100, 300]
    rows = pld.tight_epsilons_over_steps(DESIGN, 1e-5, steps)
    assert [row.phases[0].steps for row in rows] == steps
    assert rows[1] == rows[3]


@pytest.mark.parametrize("sigma", [0.8, 3.0])
def test_unsubsampled_gaussian_brackets_exact_gdp(sigma):
    phase = Phase("gaussian", 1.0, sigma, None, 1)
    steps = [1, 5, 10, 50, 100, 500]
    for row, count in zip(pld.tight_epsilons_over_steps(phase, 1e-6, steps), steps):
        exact = gdp.epsilon_for_delta(1e-6, math.sqrt(count) / sigma)
        assert row.epsilon_lower <= exact * (1 + 1e-9) and exact <= row.epsilon_upper * (1 + 1e-9)


def test_laplace_rows_overlap_single_calls():
    phase = Phase("laplace", 0.05, None, 1.0, 1)
    steps = [10, 20, 40, 80]
    for row in pld.tight_epsilons_over_steps(phase, 1e-6, steps):
        single = pld.tight_epsilon(list(row.phases), 1e-6)
        assert row.epsilon_lower <= single.epsilon_upper and single.epsilon_lower <= row.epsilon_upper


def test_against_dp_accounting_pessimistic_pld():
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant

    phase = Phase("gaussian", 0.01, 1.0, None, 1)
    steps = [100, 200, 300, 400]
    for row, count in zip(pld.tight_epsilons_over_steps(phase, 1e-5, steps), steps):
        accountant = pld_privacy_accountant.PLDAccountant()
        event = dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0))
        accountant.compose(event, count)
        pessimistic = accountant.get_epsilon(1e-5)
        # certified: the lower bound is below the peer's pessimistic figure; tight: within 0.2%
        assert row.epsilon_lower <= pessimistic
        assert abs(row.epsilon_upper - pessimistic) <= 2e-3 * pessimistic


def test_out_of_range_runs_fall_back_to_one_call_each():
    phase = Phase("gaussian", 0.5, 1e-200, None, 1)
    rows = pld.tight_epsilons_over_steps(phase, 1e-5, [1, 2, 3])
    assert all(row == pld.tight_epsilon(list(row.phases), 1e-5) for row in rows)


def test_bad_input():
    with pytest.raises(ParameterError):
        pld.tight_epsilons_over_steps(DESIGN, 1.5, [1, 2])
    with pytest.raises(ParameterError):
        pld.tight_epsilons_over_steps(DESIGN, 1e-5, [0, 2])
    with pytest.raises(TypeError):
        pld.tight_epsilons_over_steps([DESIGN], 1e-5, [1])
    assert pld.tight_epsilons_over_steps(DESIGN, 1e-5, []) == ()


def test_a_single_shared_row_matches_its_own_phase():
    row = pld.tight_epsilons_over_steps(dataclasses.replace(DESIGN, steps=7), 1e-5, [5, 6, 8])[0]
    assert row.phases == (dataclasses.replace(DESIGN, steps=5),)


def test_lower_bound_search_window():
    from dpcalc.core.pld import bounds as layers
    from dpcalc.core.pld.accountant import prepare
    from dpcalc.core.pld.plan import INF_SHARE, make_plan, step_measures
    from dpcalc.core.pld.power import Powers, Usage

    top = Phase("gaussian", 0.01, 1.0, None, 64)
    setup = prepare((top,), 1e-5, None, 1e-3)
    direction = setup.order[0]
    model = setup.models[direction][0]
    plan = make_plan(*setup.tilts[direction], 1e-5, setup.scale, INF_SHARE, setup.events,
                     setup.per_step_error(setup.reference))
    upper, lower = step_measures(model, plan)
    uppers = {64: Powers(model, upper, plan, 64, Usage()).balanced(64)}
    lowers = {64: Powers(model, lower, plan, 64, Usage()).balanced(64)}
    high = layers.epsilon_bound(uppers[64], 1e-5)
    full = layers.epsilon_bound(lowers[64], 1e-5)
    assert 0.0 < full <= high
    # the window holding the answer finds the same answer; a window above it finds nothing (0)
    assert layers.epsilon_bound(lowers[64], 1e-5, (0.99 * full, high)) == pytest.approx(full, rel=1e-12)
    assert layers.epsilon_bound(lowers[64], 1e-5, (1.0001 * high, 2.0 * high)) == 0.0
    with pytest.raises(ValueError):
        layers.epsilon_bound(uppers[64], 1e-5, (0.0, high))
    with pytest.raises(ValueError):
        layers.Profile(lowers[64], floor=0.5 * full).at([0.25 * full])


# ---------------------------------------------------------------------------------------------
# largest_steps: the largest T within a budget, from one shared composition


def _bisection(phase, delta, target, limit=10**9):
    """The largest T with tight_epsilon's upper bound <= target (doubling, then bisection)."""
    def ok(count):
        return pld.tight_epsilon([dataclasses.replace(phase, steps=count)], delta).epsilon_upper <= target

    if not ok(1):
        return 0
    good, bad = 1, None
    while bad is None and good < limit:
        trial = min(2 * good, limit)
        good, bad = (trial, None) if ok(trial) else (good, trial)
    while bad is not None and bad - good > 1:
        middle = (good + bad) // 2
        good, bad = (middle, bad) if ok(middle) else (good, middle)
    return good


@pytest.mark.parametrize(
    "phase, delta, target, expected",
    [
        # the design card (bisection over tight_epsilon: 11648) and a Laplace run (181)
        (Phase("gaussian", 0.004, 1.1, None, 1), 1e-5, 2.0, 11648),
        (Phase("laplace", 0.05, None, 1.0, 1), 1e-6, 3.0, 181),
        (Phase("gaussian", 0.1, 2.0, None, 1), 1e-5, 1.0, 16),
    ],
)
def test_largest_steps_agrees_with_bisection(phase, delta, target, expected):
    count, at, above = pld.largest_steps(phase, delta, target, fallback=False)
    # certified at the full accuracy: the answer meets the target, its neighbour does not
    assert at.phases[0].steps == count and above.phases[0].steps == count + 1
    assert at.epsilon_upper <= target < above.epsilon_upper
    for result in (at, above):
        assert result.epsilon_upper - result.epsilon_lower <= 1e-3 * result.epsilon_upper and not result.warnings
        # both intervals hold the true epsilon, so they overlap tight_epsilon's
        single = pld.tight_epsilon(list(result.phases), delta)
        assert result.epsilon_lower <= single.epsilon_upper and single.epsilon_lower <= result.epsilon_upper
    # The shared composition and tight_epsilon bound epsilon on different grids, so their upper
    # bounds differ by up to either interval's width: tight_epsilon may put the boundary a few
    # steps away in general. Here they agree to ~1e-7 relative and give the same T: tight_epsilon
    # at T meets the target and at T + 1 exceeds it (by more than the difference of the bounds).
    assert count == expected
    if phase.mechanism == "gaussian" and phase.sampling_probability == 0.004:
        assert count == _bisection(phase, delta, target)
    assert pld.tight_epsilon([dataclasses.replace(phase, steps=count + 1)], delta).epsilon_upper > target
    assert pld.tight_epsilon([dataclasses.replace(phase, steps=count)], delta).epsilon_upper <= target


def test_largest_steps_infeasible_and_limit():
    # even one step exceeds the target: T = 0, and the result at T = 1 says by how much
    count, at, above = pld.largest_steps(Phase("gaussian", 0.02, 0.6, None, 1), 1e-5, 0.1)
    assert count == 0 and at is None and above.phases[0].steps == 1 and above.epsilon_upper > 0.1
    # the limit is the answer when it meets the target: no neighbour
    count, at, above = pld.largest_steps(DESIGN, 1e-5, 2.0, limit=5000)
    assert count == 5000 and above is None and at.epsilon_upper <= 2.0


def test_largest_steps_with_admissible_counts():
    # whole epochs of n = 60000, batch 256: T(e) = ceil(e n / b); the answer is the largest T(e)
    # within the budget and the witness T(e + 1) (bisection over tight_epsilon: 43 epochs, T = 10079)
    def neighbours(count):
        epochs = count * 256 // 60000
        below = math.ceil(epochs * 60000 / 256) if epochs else 0
        return below, math.ceil((epochs + 1) * 60000 / 256)

    count, at, above = pld.largest_steps(DESIGN, 1e-5, 2.0, neighbours=neighbours, fallback=False)
    assert count == math.ceil(43 * 60000 / 256) and above.phases[0].steps == math.ceil(44 * 60000 / 256)
    assert at.epsilon_upper <= 2.0 < above.epsilon_upper


def test_largest_steps_falls_back_to_single_calls():
    # outside the grid's range the shared composition is not tried: bisection over tight_epsilon
    phase = Phase("gaussian", 0.5, 0.01, None, 1)
    assert pld.largest_steps(phase, 1e-5, 1e6, limit=64, fallback=False) is None
    _count, at, above = pld.largest_steps(phase, 1e-5, 1e6, limit=64)
    assert at == pld.tight_epsilon(list(at.phases), 1e-5) and at.epsilon_upper <= 1e6
    assert above is None or above.epsilon_upper > 1e6
    with pytest.raises(ParameterError):
        pld.largest_steps(DESIGN, 1e-5, -1.0)
    with pytest.raises(ParameterError):
        pld.largest_steps(DESIGN, 1e-5, 1.0, limit=0)
