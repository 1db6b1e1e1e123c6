"""calibrate_sigma: the reduced Gaussian phase calibrated by the PLD accountant, rescaled by the strategy's factor."""

from __future__ import annotations

import math

import numpy as np

from dpcalc.core.mf.accounting import matrix_mechanism
from dpcalc.core.mf.calibrate import calibrate_sigma
from dpcalc.core.mf.participation import Participation
from dpcalc.core.mf.strategy import strategy_matrix
from dpcalc.core.pld import tight_epsilon


def test_identity_k_releases_is_the_gaussian_calibration():
    # C = 2 I, 3 participations: sensitivity 2 sqrt(3); sigma is that times the reduced phase's sigma
    strategy, schema = strategy_matrix(2.0 * np.eye(30)), Participation(3, 10, 30)
    found = calibrate_sigma(lambda sigma: matrix_mechanism(strategy, schema, sigma), 1.0, 1e-5)
    assert found.sigma is not None and found.reduced.feasible
    floor = float(found.reduced.value)
    assert found.accounting.phases[0].noise_multiplier >= floor
    assert math.isclose(found.sigma, floor * 2 * math.sqrt(3), rel_tol=1e-13)
    # the mechanism at the answer spends at most the target (exact mu-GDP: the closed form)
    assert tight_epsilon(list(found.accounting.phases), 1e-5).epsilon_upper <= 1.0


def test_infeasible_target_has_no_sigma():
    strategy, schema = strategy_matrix(np.eye(4)), Participation(1, 1, 4)
    found = calibrate_sigma(lambda sigma: matrix_mechanism(strategy, schema, sigma), 0.0, 1e-300)
    assert (found.sigma is None) == (not found.reduced.feasible)
