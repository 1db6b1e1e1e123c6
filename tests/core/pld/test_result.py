"""result: what the PLD accountant returns (`PLDResult`, `PrivacyProfile`) and the accuracy it is
computed to. Reference: the field contract of the `PLDResult` docstring (with a target delta the
bounds are on epsilon and delta echoes the target; with a target epsilon the reverse; the
number to quote is the upper bound)."""

from __future__ import annotations

import dataclasses

import pytest

from dpcalc.core import limits
from dpcalc.core.pld.result import ACCURACY, DEFAULT_ACCURACY, DIRECTIONS, PLDResult, PrivacyProfile
from tests.core.pld.helpers import gaussian

PHASES = (gaussian(0.004, 1.1, 10),)
RECORD = {"accuracy": 1e-3, "grid_step": 0.25, "grid_size": 123, "binding": "add", "attempts": 2, "phases": PHASES}


def test_a_delta_target_bounds_epsilon():
    result = PLDResult.bounds(delta=1e-5, epsilon=None, upper=2.0, lower=1.5, warnings=("w",), **RECORD)
    assert (result.epsilon, result.epsilon_upper, result.epsilon_lower) == (2.0, 2.0, 1.5)
    assert (result.delta, result.delta_upper, result.delta_lower) == (1e-5, 1e-5, 1e-5)
    assert (result.grid_step, result.grid_size, result.binding, result.attempts) == (0.25, 123, "add", 2)
    assert result.phases == PHASES and result.warnings == ("w",) and result.accuracy == 1e-3


def test_an_epsilon_target_bounds_delta():
    result = PLDResult.bounds(delta=None, epsilon=1.0, upper=3e-6, lower=2e-6, **RECORD)
    assert (result.delta, result.delta_upper, result.delta_lower) == (3e-6, 3e-6, 2e-6)
    assert (result.epsilon, result.epsilon_upper, result.epsilon_lower) == (1.0, 1.0, 1.0)
    assert result.warnings == ()


def test_results_are_frozen_and_the_constants_shared():
    result = PLDResult.bounds(delta=1e-5, epsilon=None, upper=2.0, lower=1.5, **RECORD)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.epsilon = 0.0  # type: ignore[misc]
    profile = PrivacyProfile(epsilons=(0.0, 1.0), delta_upper=(0.5, 0.1), delta_lower=(0.4, 0.09), phases=PHASES,
                             grid_step=0.25)
    assert profile.warnings == ()
    # the command line reads the accuracy from the numpy-free limits module: one definition
    assert (DEFAULT_ACCURACY, ACCURACY) == (limits.DEFAULT_ACCURACY, limits.ACCURACY) and DEFAULT_ACCURACY == 1e-3
    assert DIRECTIONS == ("remove", "add")
