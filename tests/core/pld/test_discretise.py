"""discretise: one step of a pair on a grid, the upper measure by connecting the dots and the
lower by garbling (S1-S4 of docs/pld-soundness.md), against the exact one-step profile in
mpmath (50 digits; tests/core/pld/helpers.py)."""

from __future__ import annotations

import math

import numpy as np

from dpcalc.core.pld import bounds, discretise, layers
from dpcalc.core.pld.pairs import GaussianPair
from tests.core.pld.helpers import exact_one_step_delta


def test_one_step_discretised_profiles_bracket_the_exact_one():
    pair = GaussianPair(0.004, 1.1, "remove")
    h = 2.0**-13
    k_lo = math.floor(math.log1p(-0.004) / h) - 1
    upper, lower = discretise.discretise_step(pair, h, k_lo, int(2.5 / h), 9.0, 1)
    for eps in (0.0, 0.001, 0.01, 0.1, 0.5, 1.0):
        exact = exact_one_step_delta(0.004, 1.1, eps)  # the remove direction dominates here
        assert bounds.delta_bound(layers.single(lower), eps) <= exact <= bounds.delta_bound(layers.single(upper), eps)


def test_discretised_step_masses():
    # The upper measure keeps at least the whole mass; the lower at most; neither contains nan.
    pair = GaussianPair(0.004, 1.1, "remove")
    for exponent in (11, 13, 15):
        h = 2.0**-exponent
        k_lo = math.floor(math.log1p(-0.004) / h) - 1
        upper, lower = discretise.discretise_step(pair, h, k_lo, int(1.0 / h), 1.0, 1)
        for measure in (upper, lower):
            assert np.isfinite(measure.t).all()
        total = lambda m: float((m.t * np.exp(m.log_z - m.lam * m.losses)).sum())  # noqa: E731
        assert total(upper) + upper.inf_mass >= 1.0 - 1e-12
        assert total(lower) <= 1.0 + 1e-12
