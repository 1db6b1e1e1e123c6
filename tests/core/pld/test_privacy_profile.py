"""tight_profile: certified privacy profiles from one composition per tilt.

References: the mu-GDP closed form (DRS Cor. 2.13, dpcalc.core.gdp.delta_for_epsilon) is the
exact profile of the unsubsampled Gaussian mechanism composed T times (mu = sqrt(T)/sigma);
tight_delta's certified interval for the subsampled case (both intervals contain the truth, so
they must overlap).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcalc.core import gdp
from dpcalc.core.phases import Phase
from dpcalc.core.pld import PrivacyProfile, tight_delta, tight_profile
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
