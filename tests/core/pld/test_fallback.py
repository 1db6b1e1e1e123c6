"""fallback: closed-form certified bounds (S7 of docs/pld-soundness.md), the whole answer outside
the grid's range and a tightening of either side when the grid falls short (`merge`).

References: the exact mu-GDP value for unsubsampled Gaussian runs (DRS Cor. 3.3, mu =
sqrt(sum T_i/sigma_i^2), in both modes, including runs far outside the grid's range), the exact
one-step epsilon in mpmath (50 digits) for subsampled runs, and the grid's own certified
interval (both are certified, so they must overlap).
"""

from __future__ import annotations

import math

import pytest

from dpcalc.core import gdp
from dpcalc.core.phases import Phase
from dpcalc.core.pld import tight_epsilon
from dpcalc.core.pld.fallback import MAX_TOTAL_STEPS, closed_forms, log_gdp_mu, merge, out_of_range
from dpcalc.core.pld.result import DEFAULT_ACCURACY, PLDResult
from tests.core.pld.helpers import DESIGN_CARD, brackets, exact_one_step_epsilon, gaussian, gdp_delta, gdp_epsilon


def _closed(phases, delta=None, epsilon=None):
    return closed_forms(tuple(phases), delta=delta, epsilon=epsilon, accuracy=DEFAULT_ACCURACY, reason="a test")


# in the grid's range, below it (sigma = 0.01), above its number of steps, and large sigma
@pytest.mark.parametrize("sigma, steps, delta", [(1.0, 1, 1e-5), (2.0, 100, 1e-5), (0.01, 10, 1e-10),
                                                 (1e4, 10**6, 1e-2), (3.0, 10**14, 1e-5)])
def test_closed_forms_bracket_gdp(sigma, steps, delta):
    phases = [gaussian(1.0, sigma, steps)]
    by_delta = _closed(phases, delta=delta)
    exact = gdp_epsilon(sigma, steps, delta)
    assert brackets(by_delta.epsilon_lower, exact, by_delta.epsilon_upper)
    # within the margin of the closed forms (1e-6 relative) at p = 1, where mu-GDP is exact
    assert by_delta.epsilon_upper - by_delta.epsilon_lower <= 4e-6 * exact
    by_epsilon = _closed(phases, epsilon=exact)
    assert brackets(by_epsilon.delta_lower, gdp_delta(sigma, steps, exact), by_epsilon.delta_upper)
    assert by_delta.grid_step == 0.0 and "a test" in by_delta.warnings[0]


def test_closed_forms_bracket_gdp_over_phases():
    phases = [gaussian(1.0, 3.0, 40), gaussian(1.0, 6.0, 300), gaussian(1.0, 1.5, 7)]
    mu = math.sqrt(40 / 9 + 300 / 36 + 7 / 2.25)
    assert log_gdp_mu(phases) == pytest.approx(math.log(mu), rel=1e-15)
    result = _closed(phases, delta=1e-6)
    assert brackets(result.epsilon_lower, gdp.epsilon_for_delta(1e-6, mu), result.epsilon_upper)


@pytest.mark.parametrize("p, sigma", [(0.004, 1.1), (0.3, 0.7), (0.01, 0.05)])
def test_closed_forms_bracket_one_subsampled_step(p, sigma):
    result = _closed([gaussian(p, sigma, 1)], delta=1e-5)
    assert brackets(result.epsilon_lower, exact_one_step_epsilon(p, sigma, 1e-5), result.epsilon_upper, rtol=0.0)


def test_closed_forms_overlap_the_grid():
    phases = [gaussian(*DESIGN_CARD)]
    grid, closed = tight_epsilon(phases, 1e-5), _closed(phases, delta=1e-5)
    assert closed.epsilon_lower <= grid.epsilon_lower <= grid.epsilon_upper <= closed.epsilon_upper
    # a delta above the total variation bound sum T p TV: epsilon 0
    assert _closed([gaussian(1e-6, 1.0, 10)], delta=1e-4).epsilon_upper == 0.0


def _result(lower, upper, delta=None, epsilon=None, warnings=()):
    return PLDResult.bounds(delta=delta, epsilon=epsilon, upper=upper, lower=lower, accuracy=1e-3, grid_step=0.1,
                            grid_size=10, binding="add", attempts=2, phases=(gaussian(0.5, 1.0, 3),),
                            warnings=warnings)


def test_merge_keeps_the_tighter_side():
    grid = _result(1.0, 3.0, delta=1e-5, warnings=("the grid fell short",))
    merged = merge(grid, _result(2.0, 4.0, delta=1e-5))
    assert (merged.epsilon_lower, merged.epsilon_upper, merged.epsilon) == (2.0, 3.0, 3.0)
    assert merged.warnings[0] == "the grid fell short" and "lower bound is from the closed form" in merged.warnings[1]
    assert (merged.grid_step, merged.binding, merged.attempts) == (0.1, "add", 2)  # the grid's record
    merged = merge(grid, _result(0.5, 2.5, delta=1e-5), "the grid of the default accuracy")
    assert (merged.epsilon_lower, merged.epsilon_upper) == (1.0, 2.5)
    assert merged.warnings[1] == "the upper bound is from the grid of the default accuracy, tighter here than the grid's."
    # epsilon mode: the same on delta
    merged = merge(_result(1e-6, 3e-6, epsilon=1.0), _result(2e-6, 5e-6, epsilon=1.0))
    assert (merged.delta_lower, merged.delta_upper, merged.delta, merged.epsilon) == (2e-6, 3e-6, 3e-6, 1.0)
    assert merge(grid, grid).warnings == grid.warnings  # nothing tighter: nothing said


def test_out_of_range():
    assert out_of_range([gaussian(0.5, 1.0, 10)]) is None
    assert out_of_range([gaussian(0.5, 0.01, 3)]) == "a noise multiplier of 0.01, outside [0.05, 100000]"
    assert out_of_range([gaussian(0.5, 1.0, MAX_TOTAL_STEPS), gaussian(0.5, 1.0, 1)]) == "more than 1e+13 steps"
    laplace = Phase("laplace", sampling_probability=0.5, scale=1e6, steps=1)
    assert out_of_range([laplace]) == "a Laplace scale of 1e+06, outside [0.05, 100000]"
    assert log_gdp_mu([laplace]) == -math.inf


@pytest.mark.parametrize("p", [5e-324, 1e-320, 1e-300])
def test_closed_forms_at_subnormal_sampling_probabilities(p):
    # gain * p underflows to 0 in the one-step lower bound: no lower bound is shown, no error
    for delta, epsilon in ((1e-5, None), (None, 1.0)):
        result = _closed([gaussian(p, 1.1, 100)], delta=delta, epsilon=epsilon)
        assert 0.0 <= result.epsilon_lower <= result.epsilon_upper and 0.0 <= result.delta_lower <= result.delta_upper


def test_closed_forms_at_a_step_count_past_float_range():
    # 10**400 steps: the counts that scale the bounds become inf (Phase.steps_float), not an error
    result = _closed([gaussian(0.004, 1.1, 10**400)], delta=1e-5)
    assert result.epsilon_upper == math.inf and result.epsilon_lower >= 0.0
    result = _closed([gaussian(0.004, 1.1, 10**400)], epsilon=1.0)
    assert result.delta_upper == 1.0


@pytest.mark.slow
def test_closed_forms_of_a_run_the_rdp_accountant_does_not_cover_do_not_load_it():
    """Shuffled batches are outside the RDP accountant (`phases.rdp_covers`): its import, which
    loads scipy.special, is skipped."""
    import subprocess
    import sys

    code = ("import sys; from dpcalc.core.phases import Phase; from dpcalc.core.pld.fallback import closed_forms; "
            "phase = Phase(sampling_probability=0.004, noise_multiplier=1.1, steps=10000, sampling='shuffle', "
            "neighbours='zero-out', epoch_steps=250); closed_forms((phase,), delta=1e-5, epsilon=None, accuracy=1e-3, reason=''); "
            "print('dpcalc.core.rdp' in sys.modules, 'scipy.special' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "False False\n"
