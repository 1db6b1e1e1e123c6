"""The PLD accountant at extreme inputs: never an exception, never a warning, bounded work,
bounds that contain the exact value where one is known (mu-GDP, DRS Cor. 2.13, for the
unsubsampled Gaussian mechanism: mu = sqrt(T)/sigma)."""

from __future__ import annotations

import math
import warnings

import pytest

from dpcalc.core import gdp
from dpcalc.core.phases import Phase
from dpcalc.core.pld import fft, tight_delta, tight_epsilon, work
from tests.slow import slow_cases

SIGMAS = [1e-300, 1e-200, 1e-10, 1e-3, 0.05, 1e5, 1e10, 1e300]
PROBABILITIES = [1e-300, 0.004, 1.0]
STEPS = [1, 1000, 10**15]
# One call may spend its work limit on the grid (then the closed forms answer, at no counted
# cost); a finer accuracy adds the default accuracy's call. A call past this is unbounded.
_MOST_WORK = 2.0 * work.WORK_LIMIT


def _check(result, exact_eps=None, exact_delta=None):
    values = (result.epsilon_lower, result.epsilon_upper, result.delta_lower, result.delta_upper)
    assert not any(math.isnan(v) for v in values)
    assert 0.0 <= result.epsilon_lower <= result.epsilon_upper
    assert 0.0 <= result.delta_lower <= result.delta_upper <= 1.0
    if exact_eps is not None and math.isfinite(exact_eps):
        assert result.epsilon_lower <= exact_eps * (1 + 1e-9) and exact_eps <= result.epsilon_upper * (1 + 1e-9)
    if exact_delta is not None:
        assert result.delta_lower <= exact_delta * (1 + 1e-9) + 1e-300 and exact_delta <= result.delta_upper


def _slow_if(sigma, p, steps):
    """Cases whose six calls take more than a second or two (the grid runs near its limits)."""
    slow = steps == 1000 or (p == 0.004 and sigma in (0.05, 1e5))
    return pytest.param(sigma, p, steps, marks=pytest.mark.slow) if slow else pytest.param(sigma, p, steps)


@pytest.mark.parametrize(
    ("sigma", "p", "steps"), slow_cases([_slow_if(s, p, t) for s in SIGMAS for p in PROBABILITIES for t in STEPS], 36, 45)
)
def test_extreme_gaussian_runs_are_certified_and_quiet(sigma, p, steps):
    phase = Phase("gaussian", sampling_probability=p, noise_multiplier=sigma, steps=steps)
    mu = math.sqrt(steps) / sigma if sigma > 1e-150 else math.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning fails the test
        for delta in (1e-5, 1e-300, 0.999):
            with work.limited(math.inf) as meter:
                result = tight_epsilon([phase], delta)
            # bounded by a count of work, which does not depend on the machine or its load
            assert meter.used <= _MOST_WORK
            exact = gdp.epsilon_for_delta(delta, mu) if p == 1.0 and math.isfinite(mu) else None
            _check(result, exact_eps=exact)
        for eps in (0.0, 1.0, 1e6):
            result = tight_delta([phase], eps)
            exact = gdp.delta_for_epsilon(eps, mu) if p == 1.0 and math.isfinite(mu) else None
            _check(result, exact_delta=exact)


@pytest.mark.parametrize("scale", [1e-300, 1e-3, 1e5, 1e300])
@pytest.mark.parametrize("steps", [1, 10**15])
def test_extreme_laplace_runs_are_certified_and_quiet(scale, steps):
    phase = Phase("laplace", sampling_probability=0.5, scale=scale, steps=steps)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _check(tight_epsilon([phase], 1e-5))
        _check(tight_delta([phase], 1.0))
    if steps == 1 and scale == 1e-3:
        # one step: the loss reaches log(1 + p (e^1000 - 1)) with P-mass >= p/2 = 1/4
        assert tight_epsilon([phase], 1e-5).epsilon_lower > 990.0


def test_heterogeneous_extreme_phases():
    phases = [Phase("gaussian", sampling_probability=0.01, noise_multiplier=1e-100, steps=5),
              Phase("gaussian", sampling_probability=0.5, noise_multiplier=2.0, steps=100),
              Phase("laplace", sampling_probability=1.0, scale=1e-300, steps=3)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = tight_epsilon(phases, 1e-5)
    _check(result)
    # three Laplace steps of scale 1e-300 alone: epsilon >= 3e300 - (one step's share of delta)
    assert result.epsilon_lower > 2.9e300 and result.warnings


@pytest.mark.slow
def test_large_steps_are_bounded_in_time():
    """The bin limit inside the powering keeps every T fast (was > 120 s and 3.4 GB at T = 1e11);
    the grid certifies the upper bound at T = 1e11."""
    for steps in (10**9, 10**11):
        phase = Phase("gaussian", sampling_probability=0.004, noise_multiplier=1.1, steps=steps)
        with work.limited(math.inf) as meter:
            result = tight_epsilon([phase], 1e-5)
        assert meter.used <= _MOST_WORK
        _check(result)
        assert math.isfinite(result.epsilon_upper)
        if steps == 10**9:
            # the window caps from the Chernoff bound keep the grid under its size limit: the
            # default accuracy is met (it was 0.38% wide, warned)
            assert not result.warnings
            assert result.epsilon_upper - result.epsilon_lower <= 1e-3 * result.epsilon_upper
        elif fft.extended_round_off() is not None:
            # the grid's own bounds (the upper was inf once, and the closed form's 4% above): with
            # the early squares in extended precision the default accuracy is met (it was 12% wide,
            # the lower bound lost to the FFTs' rounding bounds, which grow with T)
            assert not result.warnings
            assert result.epsilon_upper - result.epsilon_lower <= 1e-3 * result.epsilon_upper < 1.04e3
        else:
            assert result.epsilon_upper < 1.04e6 and "rounding error of the FFT" in result.warnings[0]
