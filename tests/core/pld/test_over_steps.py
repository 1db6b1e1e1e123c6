"""`tight_epsilons_over_steps`: one shared composition for runs that differ only in T.

References: the same accountant called once per T (`tight_epsilon`, itself tested against
mpmath, exact mu-GDP, dp_accounting and prv_accountant in tests/core/pld/test_api.py and
test_peers.py), exact mu-GDP for the Gaussian mechanism without subsampling (Dong, Roth, Su
2022, Cor. 3.3: T steps of sigma are sqrt(T)/sigma-GDP), and dp_accounting 0.6.0's pessimistic
PLD.
"""

from __future__ import annotations

import dataclasses
import math

import pytest

from dpcalc.core import gdp, pld
from dpcalc.core.phases import Phase
from dpcalc.core.validation import ParameterError

# An epochs sweep of the design card's shape: n = 60000, batch 256, epochs 1..20 (T = ceil(e n / b)).
EPOCH_STEPS = [math.ceil(epoch * 60000 / 256) for epoch in range(1, 21)]
DESIGN = Phase("gaussian", 256 / 60000, 1.1, None, 1)


@pytest.fixture(scope="module")
def epoch_rows():
    return pld.tight_epsilons_over_steps(DESIGN, 1e-5, EPOCH_STEPS)


@pytest.mark.slow
def test_rows_are_certified_and_as_tight_as_one_call_each(epoch_rows):
    assert [row.phases[0].steps for row in epoch_rows] == EPOCH_STEPS
    for row in epoch_rows[::4]:
        single = pld.tight_epsilon(list(row.phases), 1e-5)
        # both intervals contain the true epsilon, so they overlap
        assert row.epsilon_lower <= single.epsilon_upper and single.epsilon_lower <= row.epsilon_upper
        # the shared composition meets the same accuracy
        assert row.epsilon_upper - row.epsilon_lower <= 1e-3 * row.epsilon_upper
        assert row.epsilon == row.epsilon_upper and row.delta == 1e-5 and not row.warnings


@pytest.mark.slow
def test_rows_rise_with_T(epoch_rows):
    uppers = [row.epsilon_upper for row in epoch_rows]
    assert uppers == sorted(uppers)


def test_input_order_and_repeats_are_kept():
    steps = [400, 100, 200, 100, 300]
    rows = pld.tight_epsilons_over_steps(DESIGN, 1e-5, steps)
    assert [row.phases[0].steps for row in rows] == steps
    assert rows[1] == rows[3]


@pytest.mark.parametrize("sigma", [0.8, 3.0])
def test_unsubsampled_gaussian_brackets_exact_gdp(sigma):
    phase = Phase("gaussian", 1.0, sigma, None, 1)
    steps = [1, 5, 10, 50, 100, 500]
    for row, count in zip(pld.tight_epsilons_over_steps(phase, 1e-6, steps), steps):
        exact = gdp.epsilon_for_delta(1e-6, math.sqrt(count) / sigma)
        assert row.epsilon_lower <= exact * (1 + 1e-9) and exact <= row.epsilon_upper * (1 + 1e-9)


@pytest.mark.slow
def test_laplace_rows_overlap_single_calls():
    phase = Phase("laplace", 0.05, None, 1.0, 1)
    steps = [10, 20, 40, 80]
    for row in pld.tight_epsilons_over_steps(phase, 1e-6, steps):
        single = pld.tight_epsilon(list(row.phases), 1e-6)
        assert row.epsilon_lower <= single.epsilon_upper and single.epsilon_lower <= row.epsilon_upper


@pytest.mark.slow
def test_against_dp_accounting_pessimistic_pld():
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant

    phase = Phase("gaussian", 0.01, 1.0, None, 1)
    steps = [100, 200, 300, 400]
    for row, count in zip(pld.tight_epsilons_over_steps(phase, 1e-5, steps), steps):
        accountant = pld_privacy_accountant.PLDAccountant()
        event = dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0))
        accountant.compose(event, count)
        pessimistic = accountant.get_epsilon(1e-5)
        # certified: the lower bound is below the peer's pessimistic figure; tight: within 0.2%
        assert row.epsilon_lower <= pessimistic
        assert abs(row.epsilon_upper - pessimistic) <= 2e-3 * pessimistic


def test_out_of_range_runs_fall_back_to_one_call_each():
    phase = Phase("gaussian", 0.5, 1e-200, None, 1)
    rows = pld.tight_epsilons_over_steps(phase, 1e-5, [1, 2, 3])
    assert all(row == pld.tight_epsilon(list(row.phases), 1e-5) for row in rows)


def test_bad_input():
    with pytest.raises(ParameterError):
        pld.tight_epsilons_over_steps(DESIGN, 1.5, [1, 2])
    with pytest.raises(ParameterError):
        pld.tight_epsilons_over_steps(DESIGN, 1e-5, [0, 2])
    with pytest.raises(TypeError):
        pld.tight_epsilons_over_steps([DESIGN], 1e-5, [1])
    assert pld.tight_epsilons_over_steps(DESIGN, 1e-5, []) == ()


def test_a_single_shared_row_matches_its_own_phase():
    row = pld.tight_epsilons_over_steps(dataclasses.replace(DESIGN, steps=7), 1e-5, [5, 6, 8])[0]
    assert row.phases == (dataclasses.replace(DESIGN, steps=5),)
