"""p = 0 in the core: every accountant returns the exact answer without entering its numerics.

Reference (exact): a phase with p = 0 uses no record, so the two neighbouring output
distributions are equal: RDP 0 at every order, mu = 0, epsilon 0 at every delta and delta 0 at
every epsilon (van Erven, Harremoes 2014, Thm 8: D_a(P||Q) = 0 iff P = Q). A run mixing such
phases with others has the others' figures.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcalc.core import gdp, pld, rdp
from dpcalc.core.accountants import accountant
from dpcalc.core.phases import NOTHING_SAMPLED, Phase, samples_nothing
from dpcalc.core.rdp.accountant import delta_from_curve, epsilon_from_curve
from dpcalc.core.rdp.without_replacement import uniform_gaussian_rdp
from dpcalc.core.validation import ParameterError

EMPTY = Phase("gaussian", 0.0, 1.1, None, 10_000)


def test_phase_accepts_p_zero_and_refuses_negative_p():
    assert samples_nothing(EMPTY) and not samples_nothing(Phase("gaussian", 1e-300, 1.0, None, 1))
    with pytest.raises(ParameterError, match=r"sampling_probability must be in \[0, 1\], got -0.1"):
        Phase("gaussian", -0.1, 1.0, None, 1)


@pytest.mark.parametrize("sigma", [1e-300, 0.3, 1.1, 1e6])
def test_rdp_curves_are_zero(sigma):
    orders = [*rdp.DEFAULT_ORDERS, 2e5, 1e10]
    values, bounded = rdp.subsampled_gaussian_rdp(0.0, sigma, orders)
    assert bounded == () and np.all(values == 0.0)
    assert np.all(uniform_gaussian_rdp(0.0, sigma, orders) == 0.0)


@pytest.mark.parametrize("conversion", ["improved", "classic"])
def test_a_zero_rdp_value_converts_to_zero(conversion):
    # one order with RDP 0 is enough: equal distributions
    assert epsilon_from_curve([2.0, 8.0], [0.0, 0.0], 1e-10, conversion) == (0.0, 2.0)
    assert delta_from_curve([2.0, 8.0], [0.0, 0.0], 0.0, conversion) == (0.0, 2.0)
    result = rdp.rdp_accountant([EMPTY], delta=1e-5, conversion=conversion)
    assert result.epsilon == 0.0 and set(result.rdp) == {0.0} and result.grid_edge is None


def test_clt_mu_is_zero():
    assert gdp.clt_log_mu(0.0, 1.1, 10_000) == -math.inf
    assert gdp.clt_mu(0.0, 1.1, 10_000, "uniform") == 0.0
    result = gdp.noisy_sgd_gdp(0.0, 1.1, 10_000, delta=1e-5)
    assert (result.mu, result.epsilon, result.max_advantage) == (0.0, 0.0, 0.0)
    assert result.warnings == (NOTHING_SAMPLED,)


def test_pld_is_exact_without_the_grid(monkeypatch):
    # the grid accountant is never entered at p = 0
    monkeypatch.setattr("dpcalc.core.pld.api.account_grid", lambda *args, **kwargs: pytest.fail("grid entered"))
    result = pld.tight_epsilon([EMPTY], 1e-5)
    assert (result.epsilon_lower, result.epsilon_upper, result.delta) == (0.0, 0.0, 1e-5)
    assert result.warnings == (NOTHING_SAMPLED,) and result.grid_step == 0.0
    at_epsilon = pld.tight_delta([EMPTY], 0.0)
    assert (at_epsilon.delta_lower, at_epsilon.delta_upper) == (0.0, 0.0)
    assert pld.upper_epsilon([EMPTY], 1e-5) == (0.0, 0.0)
    replace_one = Phase("gaussian", 0.0, 1.0, None, 5, sampling="uniform", neighbours="replace-one")
    assert pld.tight_epsilon([replace_one], 1e-5).binding == "symmetric"


def test_pld_profile_over_steps_and_largest_steps():
    profile = pld.tight_profile([EMPTY], [0.0, 0.5, 3.0])
    assert profile.delta_upper == profile.delta_lower == (0.0, 0.0, 0.0)
    rows = pld.tight_epsilons_over_steps(EMPTY, 1e-5, [1, 10, 100, 1000])
    assert [row.epsilon_upper for row in rows] == [0.0] * 4
    count, at, witness = pld.largest_steps(EMPTY, 1e-5, 0.0, limit=1000)
    assert count == 1000 and at is not None and at.epsilon_upper == 0.0 and witness is None


def test_a_p_zero_phase_adds_nothing_to_a_run():
    sampled = Phase("gaussian", 0.01, 1.0, None, 100)
    with_empty = pld.tight_epsilon([EMPTY, sampled], 1e-5)
    alone = pld.tight_epsilon([sampled], 1e-5)
    assert with_empty.epsilon_upper == alone.epsilon_upper and with_empty.phases == (EMPTY, sampled)
    assert rdp.rdp_accountant([EMPTY, sampled], delta=1e-5).rdp == rdp.rdp_accountant([sampled], delta=1e-5).rdp


@pytest.mark.parametrize("name", ["pld", "rdp", "gdp"])
def test_accountants_say_what_p_zero_means(name):
    accounted = accountant(name).epsilon([EMPTY], 1e-5)
    assert accounted.epsilon == 0.0 and accounted.warnings[0] == NOTHING_SAMPLED
