"""tight_profile: certified privacy profiles from one composition per tilt.

References: the mu-GDP closed form (DRS Cor. 2.13, dpcalc.core.gdp.delta_for_epsilon) is the
exact profile of the unsubsampled Gaussian mechanism composed T times (mu = sqrt(T)/sigma);
tight_delta's certified interval for the subsampled case (both intervals contain the truth, so
they must overlap).
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from dpcalc.core import gdp
from dpcalc.core.phases import Phase
from dpcalc.core.pld import PrivacyProfile, tight_delta, tight_profile
from dpcalc.core.pld.privacy_profile import ProfileBounds
from dpcalc.core.validation import ParameterError


def test_exact_gdp_profile_is_bracketed():
    phase = Phase("gaussian", sampling_probability=1.0, noise_multiplier=2.0, steps=50)
    mu = math.sqrt(50) / 2.0
    epsilons = np.linspace(0.0, 30.0, 100)
    profile = tight_profile([phase], epsilons)
    assert isinstance(profile, PrivacyProfile)
    assert profile.epsilons == tuple(float(e) for e in epsilons)
    for eps, low, high in zip(epsilons, profile.delta_lower, profile.delta_upper):
        exact = gdp.delta_for_epsilon(float(eps), mu)
        assert low <= exact <= high
        if exact > 1e-6:
            # about the default accuracy (1e-3) where delta is not tiny (measured: <= 2.3e-3 at 3e-10)
            assert high - low <= 2e-3 * exact


@pytest.mark.slow
def test_design_card_profile_overlaps_tight_delta():
    phase = Phase("gaussian", sampling_probability=0.004, noise_multiplier=1.1, steps=10_000)
    epsilons = np.linspace(0.0, 5.5, 100)  # 3x the epsilon at delta = 1e-5 (1.841, docs/reference-values.md)
    profile = tight_profile([phase], epsilons)
    assert all(0.0 <= lo <= hi <= 1.0 for lo, hi in zip(profile.delta_lower, profile.delta_upper))
    for eps in (0.0, 1.0, 1.8, 3.0):
        i = int(np.argmin(abs(epsilons - eps)))
        single = tight_delta([phase], float(epsilons[i]))
        # both intervals contain the true delta: they overlap
        assert profile.delta_lower[i] <= single.delta_upper
        assert single.delta_lower <= profile.delta_upper[i]
        assert profile.delta_upper[i] - profile.delta_lower[i] <= 5e-3 * profile.delta_upper[i]
    # delta(eps) is non-increasing: the upper bound at eps bounds every later lower bound
    assert all(lo <= min(profile.delta_upper[: i + 1]) for i, lo in enumerate(profile.delta_lower))


def test_profile_outside_grid_range_is_closed_form():
    phase = Phase("gaussian", sampling_probability=0.5, noise_multiplier=1e-200, steps=10)
    profile = tight_profile([phase], [0.0, 1.0, 1e6])
    assert profile.grid_step == 0.0 and profile.warnings
    assert all(0.0 <= lo <= hi <= 1.0 for lo, hi in zip(profile.delta_lower, profile.delta_upper))
    assert profile.delta_lower[0] > 0.4  # one step: P(huge loss) >= p/2


def test_profile_rejects_bad_input():
    phase = Phase("gaussian", sampling_probability=1.0, noise_multiplier=1.0, steps=1)
    with pytest.raises(ParameterError):
        tight_profile([phase], [-1.0])
    with pytest.raises(ValueError):
        tight_profile([phase], [])


# ---------------------------------------------------------------------------------------------
# ProfileBounds: lower measures composed only where needed (spare_lower, at_zero, complete)
# ---------------------------------------------------------------------------------------------

def _poisson(p: float, sigma: float, steps: int, neighbours: str = "add-remove") -> list[Phase]:
    return [Phase("gaussian", sampling_probability=p, noise_multiplier=sigma, steps=steps, neighbours=neighbours)]


def test_spared_lower_measures_keep_the_bounds_certified():
    # remove binds this run at every eps (its Chernoff estimate is the larger), so the add
    # direction is composed upper-only; both evaluators are certified, so they overlap, and the
    # spared one's upper bounds are the full one's to the discretisation error of the upper-only
    # step measure (measured: 2e-6 relative at eps = 0)
    phases = _poisson(0.01, 1.0, 200)
    epsilons = np.linspace(0.0, 6.0, 121)
    full = ProfileBounds(phases, [(1e-3, None)])
    spared = ProfileBounds(phases, [(1e-3, None)], spare_lower=True)
    assert spared.spared and not full.spared
    upper, lower = spared.at(epsilons)
    full_upper, full_lower = full.at(epsilons)
    assert np.all(np.maximum(lower, full_lower) <= np.minimum(upper, full_upper))
    assert np.all(lower <= full_lower)  # the same remove composition, without the add direction's lower bound
    big = full_upper > 1e-6
    assert np.all(np.abs(upper[big] - full_upper[big]) <= 1e-4 * full_upper[big])
    # complete: the add direction's lower measure on its own grid; the upper bounds do not move
    spared.complete()
    assert not spared.spared
    completed_upper, completed_lower = spared.at(epsilons)
    assert np.array_equal(completed_upper, upper)
    assert np.all(completed_lower >= lower)
    assert np.array_equal(completed_lower, full_lower)  # the same two compositions as the full evaluator


@pytest.mark.slow
def test_one_direction_is_spared_only_where_there_are_two():
    # replace-one: one direction, its own reverse; nothing to spare
    assert not ProfileBounds(_poisson(0.01, 1.0, 200, "replace-one"), [(1e-3, None)], spare_lower=True).spared
    assert not ProfileBounds(_poisson(0.01, 1.0, 200, "replace-one"), [(None, 0.0)], at_zero=True).spared
    # a target at eps = 0 spares the second direction's lower measure whatever spare_lower says
    assert ProfileBounds(_poisson(0.01, 1.0, 200), [(None, 0.0)], at_zero=True).spared
    assert not ProfileBounds(_poisson(0.01, 1.0, 200), [(None, 0.5)], at_zero=True).spared


@pytest.mark.parametrize(("p", "sigma"), [(0.01, 1.0), (0.3, 0.8), (0.9, 2.0)])
def test_advantage_from_one_lower_measure_brackets_the_total_variation(p, sigma):
    # one step: delta(0) is the total variation between (1 - p) N(0, s^2) + p N(1, s^2) and
    # N(0, s^2), p (2 Phi(1 / (2 s)) - 1), the same in either order (mpmath, 40 digits); the add
    # direction's lower measure is left out, the remove direction's bounds it from below
    with mp.workdps(40):
        exact = mp.mpf(p) * mp.erf(1 / (2 * mp.sqrt(2) * mp.mpf(sigma)))
    evaluator = ProfileBounds(_poisson(p, sigma, 1), [(None, 0.0)], at_zero=True)
    assert evaluator.spared
    (upper,), (lower,) = evaluator.at([0.0])
    assert mp.mpf(lower) <= exact <= mp.mpf(upper)
    assert upper - lower <= 3e-3 * upper


@pytest.mark.slow
def test_advantage_from_one_lower_measure_overlaps_the_full_composition():
    phases = _poisson(0.004, 1.1, 2000)
    (upper,), (lower,) = ProfileBounds(phases, [(None, 0.0)], at_zero=True).at([0.0])
    (full_upper,), (full_lower,) = ProfileBounds(phases, [(None, 0.0)]).at([0.0])
    assert max(lower, full_lower) <= min(upper, full_upper)
    assert upper - lower <= 1e-3 * upper
