"""The accountant protocol: each accountant gives its own module's figures, to the last bit.

Oracles: the accountants' own modules (dpcalc.core.gdp, rdp, pld) called directly, without the
protocol's caches; for the exact full-batch Gaussian, mu-GDP composition (Dong, Roth, Su 2022,
Cor. 3.3) checked against the closed form; mpmath for the central-limit composition.
"""

from __future__ import annotations

import math
import subprocess
import sys

import mpmath
import pytest

from dpcalc.core import gdp, pld
from dpcalc.core.accountants import (
    ACCOUNTANTS,
    CERTIFIED_ACCOUNTANTS,
    CLOSED_FORMS,
    EXACT_GAUSSIAN,
    PLD_CERTIFIED,
    Accountant,
    GDPAccountant,
    PLDAccountant,
    RDPAccountant,
    accountant,
    merge_full_batch_gaussians,
    shared_over_steps,
)
from dpcalc.core.phases import Phase
from dpcalc.core.rdp import rdp_accountant

DESIGN_CARD = Phase("gaussian", 0.004, 1.1, None, 10000)


def test_the_accountants_by_name():
    assert ACCOUNTANTS == ("pld", "rdp", "gdp")
    # the central-limit figure is an approximation: it may not gate a budget
    assert CERTIFIED_ACCOUNTANTS == ("pld", "rdp")
    for name in ACCOUNTANTS:
        chosen: Accountant = accountant(name)
        assert chosen.name == name and chosen.certified == (name in CERTIFIED_ACCOUNTANTS)
    assert isinstance(accountant("pld", exact_gaussian=True), PLDAccountant)
    assert accountant("pld", exact_gaussian=True).exact_gaussian
    with pytest.raises(ValueError, match="accountant must be one of pld, rdp, gdp, got accountant='zcdp'"):
        accountant("zcdp")


def test_gdp_is_the_central_limit_figure():
    accounted = GDPAccountant().epsilon([DESIGN_CARD], 1e-5)
    assert accounted.epsilon == gdp.epsilon_for_delta(1e-5, gdp.clt_mu(0.004, 1.1, 10000))
    assert accounted.epsilon_lower is None and accounted.warnings == (gdp.CLT_WARNING,)


def test_gdp_composes_phases_by_the_root_of_the_sum_of_squares():
    # mpmath, 30 digits: mu_i = p sqrt(T (e^(1/sigma^2) - 1)) (BDLS Thm 4) for a subsampled phase,
    # exactly sqrt(T)/sigma for an unsampled one (DRS Cor. 3.3)
    phases = [Phase("gaussian", 0.01, 2.0, None, 500), Phase("gaussian", 1.0, 9.0, None, 3)]
    with mpmath.workdps(30):
        subsampled = mpmath.mpf("0.01") ** 2 * 500 * mpmath.expm1(1 / mpmath.mpf(2) ** 2)
        mu = float(mpmath.sqrt(subsampled + mpmath.mpf(3) / 81))
    assert GDPAccountant().epsilon(phases, 1e-5).epsilon == pytest.approx(gdp.epsilon_for_delta(1e-5, mu), rel=1e-12)
    with pytest.raises(ValueError, match="Gaussian phases"):
        GDPAccountant().epsilon([Phase("laplace", 1.0, None, 2.0, 3)], 1e-5)


def test_gdp_of_unsampled_phases_is_exact():
    # T Gaussian releases with noise multiplier sigma are exactly sqrt(T)/sigma-GDP (DRS Cor. 3.3)
    accounted = GDPAccountant().epsilon([Phase("gaussian", 1.0, 2.0, None, 4)], 1e-5)
    assert accounted.epsilon == gdp.epsilon_for_delta(1e-5, 1.0) and accounted.warnings == ()


def test_rdp_with_its_cache_is_the_rdp_accountant_exactly():
    engine = RDPAccountant()
    laplace = Phase("laplace", 1.0, None, 5.0, 2)
    for steps in (1, 17, 10000, 10**9):
        run = [Phase("gaussian", 0.004, 1.1, None, steps), laplace]
        expected = rdp_accountant(run, delta=1e-5)  # a fresh curve each time
        accounted = engine.epsilon(run, 1e-5)
        assert accounted.epsilon == expected.epsilon and accounted.warnings == expected.warnings
        assert accounted.method == "RDP" and accounted.epsilon_lower is None


def test_pld_is_the_certified_interval_of_tight_epsilon():
    expected = pld.tight_epsilon([DESIGN_CARD], 1e-5)
    accounted = PLDAccountant().epsilon([DESIGN_CARD], 1e-5)
    assert (accounted.epsilon, accounted.epsilon_lower) == (expected.epsilon_upper, expected.epsilon_lower)
    assert accounted.method == PLD_CERTIFIED and accounted.warnings == expected.warnings


def test_pld_outside_its_grid_reports_closed_forms():
    accounted = PLDAccountant().epsilon([Phase("laplace", 1.0, None, 1e7, 1)], 1e-5)
    assert accounted.method == CLOSED_FORMS and accounted.warnings


def test_full_batch_gaussians_exact():
    # Three Gaussian releases at sigma 4 and one at 2: mu^2 = 3/16 + 1/4 (DRS Cor. 3.3), exactly
    # mu-GDP: the PLD accountant gives the closed form, certified, merged or not
    phases = [Phase("gaussian", 1.0, 4.0, None, 3), Phase("gaussian", 1.0, 2.0, None, 1)]
    value = gdp.epsilon_for_delta(1e-5, math.sqrt(3 / 16 + 1 / 4))
    exact = PLDAccountant(exact_gaussian=True).epsilon(phases, 1e-5)
    assert exact.epsilon == pytest.approx(value, rel=1e-11)  # the certified interval is ~1e-12 wide
    assert exact.epsilon_lower is not None and exact.epsilon_lower <= value <= exact.epsilon
    assert exact.method == EXACT_GAUSSIAN
    plain = PLDAccountant().epsilon(phases, 1e-5)
    assert plain.epsilon == pld.tight_epsilon(phases, 1e-5).epsilon_upper == pytest.approx(value, rel=1e-11)
    assert plain.method == EXACT_GAUSSIAN
    # a subsampled phase sends the run to the grid
    sampled = [*phases, Phase("gaussian", 0.01, 1.0, None, 100)]
    assert PLDAccountant().epsilon(sampled, 1e-5).method == PLD_CERTIFIED


def test_merge_full_batch_gaussians():
    sampled = Phase("gaussian", 0.01, 1.0, None, 100)
    assert merge_full_batch_gaussians([sampled, Phase("gaussian", 1.0, 3.0, None, 2)]) == [
        sampled, Phase("gaussian", 1.0, 3.0, None, 2)]  # one full-batch phase: as it is
    merged = merge_full_batch_gaussians([Phase("gaussian", 1.0, 4.0, None, 3), sampled,
                                         Phase("gaussian", 1.0, 2.0, None, 1)])
    assert merged[0] == sampled and len(merged) == 2
    assert merged[1].steps == 1 and merged[1].noise_multiplier == pytest.approx(1 / math.sqrt(3 / 16 + 1 / 4), rel=1e-15)


def test_runs_that_differ_only_in_steps_share_one_composition():
    one = Phase("gaussian", 0.01, 1.0, None, 100)
    runs = [
        ([one], 1e-5, 1e-3),
        ([Phase("gaussian", 0.01, 1.0, None, 400)], 1e-5, 1e-3),
        ([one], None, 1e-3),  # a target epsilon: accounted one by one
        ([one, one], 1e-5, 1e-3),  # two phases: one by one
        ([Phase("gaussian", 0.02, 1.0, None, 100)], 1e-5, 1e-3),  # alone in its group
    ]
    shared = shared_over_steps(runs)
    expected = pld.tight_epsilons_over_steps(Phase("gaussian", 0.01, 1.0, None, 1), 1e-5, [100, 400])
    assert sorted(shared) == [0, 1, 4]
    assert [(shared[i].epsilon_upper, shared[i].epsilon_lower) for i in (0, 1)] == [
        (result.epsilon_upper, result.epsilon_lower) for result in expected]
    assert shared_over_steps(runs[2:]) == {}  # no two runs differ only in T: nothing shared


def test_the_module_loads_no_numpy():
    code = "import sys, dpcalc.core.accountants; print('numpy' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"
