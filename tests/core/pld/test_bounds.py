"""bounds: delta at eps, and eps at delta, read off a composed measure (S5, S6 and the final
step of docs/pld-soundness.md).

References (properties that must hold): `epsilon_bound` and `delta_bound` are inverse to each
other within the refinement tolerance of the final bisection (`bounds._REFINE_TOLERANCE`,
1e-13 relative): at the upper bound of epsilon the upper bound of delta is at most the target
and just below it above; at the lower bound of epsilon the lower bound of delta exceeds the
target and just above it does not. The upper profile is non-increasing, and the lower one
below it. The measures are 64 steps of p = 0.01, sigma = 1 composed as the accountant does.
(Against exact values: tests/core/pld/test_layers.py, test_power.py and test_api.py.)
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from dpcalc.core.pld import bounds
from dpcalc.core.pld.layers import Layered, single
from dpcalc.core.pld.power import Powers, Usage
from tests.core.pld.helpers import discretised_step, gaussian

TOLERANCE = 2 * bounds._REFINE_TOLERANCE


@pytest.fixture(scope="module")
def composed():
    """(upper, lower): 64 steps of p = 0.01, sigma = 1 at delta = 1e-5 (one shared plan)."""
    step = discretised_step(gaussian(0.01, 1.0, 64), 1e-5)
    upper = Powers(step.model, step.upper, step.plan, 64, Usage()).balanced(64)
    lower = Powers(step.model, step.lower, step.plan, 64, Usage()).balanced(64)
    return upper, lower


def test_lower_bound_search_window(composed):
    upper, lower = composed
    uppers, lowers = {64: upper}, {64: lower}
    high = bounds.epsilon_bound(uppers[64], 1e-5)
    full = bounds.epsilon_bound(lowers[64], 1e-5)
    assert 0.0 < full <= high
    # the window holding the answer finds the same answer; a window above it finds nothing (0)
    assert bounds.epsilon_bound(lowers[64], 1e-5, (0.99 * full, high)) == pytest.approx(full, rel=1e-12)
    assert bounds.epsilon_bound(lowers[64], 1e-5, (1.0001 * high, 2.0 * high)) == 0.0
    with pytest.raises(ValueError):
        bounds.epsilon_bound(uppers[64], 1e-5, (0.0, high))
    with pytest.raises(ValueError):
        bounds.Profile(lowers[64], floor=0.5 * full).at([0.25 * full])


@pytest.mark.parametrize("delta", [1e-2, 1e-5, 1e-8])
def test_epsilon_bound_inverts_delta_bound(composed, delta):
    upper, lower = composed
    high = bounds.epsilon_bound(upper, delta)
    low = bounds.epsilon_bound(lower, delta)
    assert 0.0 < low <= high < math.inf
    # upper: the smallest eps where the upper bound of delta is at most the target
    assert bounds.delta_bound(upper, high) <= delta < bounds.delta_bound(upper, high * (1 - TOLERANCE))
    # lower: the largest eps where the lower bound of delta exceeds the target
    assert bounds.delta_bound(lower, low * (1 + TOLERANCE)) <= delta < bounds.delta_bound(lower, low)
    # the other way round: eps -> delta -> eps
    for eps in (0.5, 1.0, 2.0):
        assert bounds.epsilon_bound(upper, bounds.delta_bound(upper, eps)) == pytest.approx(eps, rel=TOLERANCE)
        target = bounds.delta_bound(lower, eps) * (1 - 1e-12)
        assert bounds.epsilon_bound(lower, target) == pytest.approx(eps, rel=TOLERANCE + 1e-12)


def test_profiles_are_ordered_and_vectorised(composed):
    upper, lower = composed
    eps = np.linspace(0.0, 4.0, 200)
    high, low = bounds.bound_at(upper, eps), bounds.bound_at(lower, eps)
    assert list(high[:3]) == [bounds.delta_bound(upper, float(x)) for x in eps[:3]]
    assert np.all(np.diff(high) <= 0.0)  # delta(eps) is non-increasing; so is its upper bound
    assert np.all((0.0 <= low) & (low <= high) & (high <= 1.0))


def test_the_ends_of_the_range(composed):
    upper, lower = composed
    # a target at or above delta(0): epsilon 0 (upper), nothing exceeds it (lower)
    assert bounds.epsilon_bound(upper, bounds.delta_bound(upper, 0.0)) == 0.0
    assert bounds.epsilon_bound(lower, 0.999) == 0.0
    # mass at +inf above the target: no finite epsilon can be certified
    heavy = Layered(replace(upper.bulk, inf_mass=0.01), upper.tail)
    assert bounds.epsilon_bound(heavy, 1e-3) == math.inf
    assert bounds.delta_bound(heavy, 1e6) >= 0.01
    # dropped lower tails weighing half the measure or more: nothing is certified (S6)
    assert bounds.delta_bound(single(replace(upper.bulk, drop_rel=0.5)), 1.0) == 1.0


def test_a_bound_that_overflowed_to_nan_bounds_nothing(composed):
    # An upper measure whose terms overflowed (a mass at +inf of NaN, as a forced two-layer split
    # of p = 1e-5, sigma = 0.5 gave at T = 3e6 before this was caught) bounds delta by 1, and
    # epsilon by inf; a NaN mass in an upper (lower) measure bounds delta by 1 (from below by 0).
    # Read as NaN, "delta_upper > target" was false everywhere, and epsilon_upper came out 0.
    upper, lower = composed
    broken = Layered(replace(upper.bulk, inf_mass=math.nan), upper.tail)
    assert np.all(bounds.bound_at(broken, np.array([0.0, 0.5, 1.0, 5.0])) == 1.0)
    assert bounds.epsilon_bound(broken, 1e-5) == math.inf
    for measure, nothing in ((upper, 1.0), (lower, 0.0)):  # a NaN mass, not read as no mass
        t = measure.bulk.t.copy()
        t[len(t) // 2] = math.nan
        broken = Layered(replace(measure.bulk, t=t), measure.tail)
        assert np.all(bounds.bound_at(broken, np.array([0.0, 0.5, 1.0])) == nothing)
        assert bounds.epsilon_bound(broken, 1e-5) == (math.inf if nothing else 0.0)
