"""power: the one powering engine (`Powers`: binary powers, `compose` and `balanced`), the bin
limit (`limit`) and the composition of a run's phases (`compose_run`).

Reference: the Gaussian mechanism without subsampling, whose n-fold composition is exactly
mu-GDP with mu = sqrt(n)/sigma, and a run of such phases mu = sqrt(sum T_i/sigma_i^2) (DRS
Cor. 3.3; `dpcalc.core.gdp`). Every composition order must bracket it (S1: every product of
discretised dominating pairs is a dominating pair), however the measures were coarsened.
"""

from __future__ import annotations

import math

import pytest

from dpcalc.core import gdp
from dpcalc.core.pld import bounds, power
from dpcalc.core.pld.accountant import prepare
from dpcalc.core.pld.plan import INF_SHARE, make_plan
from dpcalc.core.pld.power import Powers, Usage, compose_run
from dpcalc.core.pld.result import DEFAULT_ACCURACY
from tests.core.pld.helpers import brackets, discretised_step, gaussian, gdp_epsilon

SIGMA, TOP, DELTA = 2.0, 1000, 1e-6


@pytest.fixture(scope="module")
def step():
    """One step of sigma = 2, p = 1, planned for 1000 steps at delta = 1e-6."""
    return discretised_step(gaussian(1.0, SIGMA, TOP), DELTA)


def _assert_brackets(upper, lower, count):
    exact = gdp_epsilon(SIGMA, count, DELTA)
    assert brackets(bounds.epsilon_bound(lower, DELTA), exact, bounds.epsilon_bound(upper, DELTA))


@pytest.mark.parametrize("how", ["compose", "balanced"])
def test_both_orders_bracket_gdp(step, how):
    usage = Usage()
    uppers = Powers(step.model, step.upper, step.plan, TOP, usage)
    lowers = Powers(step.model, step.lower, step.plan, TOP, usage)
    for count in (1, 3, 10, 77, 256, 1000):
        upper, lower = getattr(uppers, how)(count), getattr(lowers, how)(count)
        assert upper.steps == lower.steps == count
        _assert_brackets(upper, lower, count)
        # the usage records the largest measure it has seen
        assert usage.bins >= max(upper.bins, lower.bins)
    assert not usage.capped
    # the binary powers are computed once and shared
    assert uppers.power_of_two(3) is uppers.power_of_two(3) and len(uppers.chain) <= TOP.bit_length()


def test_at_composes_each_count_from_the_one_before(step):
    uppers = Powers(step.model, step.upper, step.plan, TOP, Usage())
    lowers = Powers(step.model, step.lower, step.plan, TOP, Usage())
    counts = [5, 17, 100]
    for (count, upper), (same, lower) in zip(uppers.at(counts), lowers.at(counts)):
        assert count == same and upper.steps == count
        _assert_brackets(upper, lower, count)


def test_the_bin_limit_coarsens_and_says_so(step, monkeypatch):
    monkeypatch.setattr(power, "MAX_POWER_BINS", 300)
    usage = Usage()
    upper = Powers(step.model, step.upper, step.plan, TOP, usage).compose(TOP)
    lower = Powers(step.model, step.lower, step.plan, TOP, usage).compose(TOP)
    assert usage.capped and upper.bins <= 300 and lower.bins <= 300
    _assert_brackets(upper, lower, TOP)  # wider, still certified


def test_compose_run_brackets_gdp_over_phases():
    phases = (gaussian(1.0, 3.0, 40), gaussian(1.0, 6.0, 300), gaussian(1.0, 1.5, 7))
    mu = math.sqrt(40 / 9 + 300 / 36 + 7 / 2.25)
    setup = prepare(phases, DELTA, None, DEFAULT_ACCURACY)
    plan = make_plan(*setup.tilts["remove"], DELTA, setup.scale, INF_SHARE, setup.events,
                     setup.per_step_error(setup.reference))
    usage = Usage()
    measures = compose_run(setup.models["remove"], plan, True, usage)
    assert measures.upper.steps == 347 and usage.bins > 0
    exact = gdp.epsilon_for_delta(DELTA, mu)
    assert brackets(bounds.epsilon_bound(measures.lower, DELTA), exact, bounds.epsilon_bound(measures.upper, DELTA))
    assert compose_run(setup.models["remove"], plan, False, Usage()).lower is None
