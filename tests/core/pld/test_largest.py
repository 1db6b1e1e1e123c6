"""`largest_steps`: the largest number of steps within a budget, from one shared composition.

References: a bisection over `tight_epsilon` (itself tested against mpmath, exact mu-GDP,
dp_accounting and prv_accountant in tests/core/pld/test_api.py and test_peers.py), whose answers
are recorded below: the design card's shape at target 2 (11646 steps), a subsampled Laplace
run (181) and p = 0.1, sigma = 2 at target 1 (16).
"""

from __future__ import annotations

import dataclasses
import math

import pytest

from dpcalc.core import pld
from dpcalc.core.phases import Phase
from dpcalc.core.validation import ParameterError

# One step of the epochs sweep of test_over_steps.py: n = 60000, batch 256, sigma = 1.1.
DESIGN = Phase("gaussian", 256 / 60000, 1.1, None, 1)


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
        # the design card (bisection over tight_epsilon: 11646) and a Laplace run (181)
        pytest.param(Phase("gaussian", 0.004, 1.1, None, 1), 1e-5, 2.0, 11646, marks=pytest.mark.slow),
        pytest.param(Phase("laplace", 0.05, None, 1.0, 1), 1e-6, 3.0, 181, marks=pytest.mark.slow),
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


@pytest.mark.slow
def test_largest_steps_infeasible_and_limit():
    # even one step exceeds the target: T = 0, and the result at T = 1 says by how much
    count, at, above = pld.largest_steps(Phase("gaussian", 0.02, 0.6, None, 1), 1e-5, 0.1)
    assert count == 0 and at is None and above.phases[0].steps == 1 and above.epsilon_upper > 0.1
    # the limit is the answer when it meets the target: no neighbour
    count, at, above = pld.largest_steps(DESIGN, 1e-5, 2.0, limit=5000)
    assert count == 5000 and above is None and at.epsilon_upper <= 2.0


@pytest.mark.slow
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
