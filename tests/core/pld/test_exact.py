"""Exact answers (dpcalc.core.pld.exact): runs of unsubsampled Gaussian phases are exactly mu-GDP
with mu = sqrt(sum T_i shift_i^2 / sigma_i^2) (Dong, Roth, Su 2022, Cor. 3.3), and the
accountant's interval is the closed form's floating-point error, nothing more.

Reference: the mu-GDP profile delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)
(DRS Cor. 2.13) in mpmath at 50 digits (conftest.py), and its root in eps by mpmath's solver;
the certified interval must contain the reference and be at most 1e-9 relative wide.
"""

from __future__ import annotations

import dataclasses
import math

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core import gdp
from dpcalc.core.phases import Phase
from dpcalc.core.pld import (
    analysis_of,
    largest_steps,
    tight_delta,
    tight_epsilon,
    tight_epsilons_over_steps,
    tight_profile,
    upper_epsilon,
)
from dpcalc.core.pld.exact import EXACT_ANALYSIS, LOG_DELTA_ERROR, exact_mu, exact_run
from tests.core.pld.test_api import DERANDOMIZE

# The widest relative interval the exact path may give (its floating-point error is ~1e-12).
WIDTH = 1e-9


def mp_delta(eps: float, mu: mp.mpf) -> mp.mpf:
    eps = mp.mpf(eps)
    return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)


def mp_mu(phases: list[Phase]) -> mp.mpf:
    return mp.sqrt(mp.fsum(mp.mpf(ph.steps) * (mp.mpf(ph.shift) / mp.mpf(ph.noise)) ** 2 for ph in phases))


def mp_epsilon(delta: float, mu: mp.mpf) -> mp.mpf:
    """The root of delta(eps; mu) = delta, by mpmath's solver in log delta from the float root."""
    start = gdp.epsilon_for_delta(delta, float(mu))
    if mp_delta(0.0, mu) <= delta:
        return mp.mpf(0)
    return mp.findroot(lambda e: mp.log(mp_delta(e, mu)) - mp.log(delta), mp.mpf(start))


def g(sigma: float, steps: int, **kw: object) -> Phase:
    return Phase("gaussian", 1.0, sigma, None, steps, **kw)  # type: ignore[arg-type]


RUNS = [
    [g(1.0, 5)],
    [g(0.3, 1)],
    [g(3.0, 50)],
    [g(20.0, 10_000)],
    [g(0.01, 1)],                           # below the grid's sigma range: exact all the same
    [g(1e6, 3)],                            # above it
    [g(1.0, 3), g(2.0, 8)],                 # heterogeneous phases
    [g(0.7, 2), g(5.0, 100), g(1.3, 1)],
    [g(1.0, 3, neighbours="replace-one"), g(2.0, 8, neighbours="replace-one")],   # shift 2
    [g(2.0, 10, sampling="uniform", neighbours="replace-one")],
    [g(1.5, 4, examples_per_user=3)],       # shift 3: all of a user's examples in every step
    [g(1.0, 4, neighbours="zero-out")],
    [g(2.0, 6, sampling="shuffle", neighbours="zero-out", epoch_steps=1)],
]
DELTAS = [0.5, 1e-3, 1e-6, 1e-14, 1e-30, 1e-100, 1e-300]


@pytest.mark.parametrize("phases", RUNS, ids=lambda run: "+".join(f"{ph.noise}x{ph.steps}" for ph in run))
def test_epsilon_brackets_mpmath(phases):
    mu = mp_mu(phases)
    assert exact_mu(phases) == pytest.approx(float(mu), rel=1e-15)
    for delta in DELTAS:
        result = tight_epsilon(phases, delta)
        assert result.exact and result.grid_step == 0.0 and not result.warnings
        reference = mp_epsilon(delta, mu)
        assert result.epsilon_lower <= reference <= result.epsilon_upper, (delta, result, reference)
        if reference > 1e-3:
            assert result.epsilon_upper - result.epsilon_lower <= WIDTH * result.epsilon_upper


@pytest.mark.parametrize("phases", RUNS[:9], ids=lambda run: "+".join(f"{ph.noise}x{ph.steps}" for ph in run))
def test_delta_brackets_mpmath(phases):
    mu = mp_mu(phases)
    for eps in (0.0, 0.1, 1.0, 5.0, 30.0, 300.0):
        result = tight_delta(phases, eps)
        assert result.exact
        reference = mp_delta(eps, mu)
        assert result.delta_lower <= reference <= result.delta_upper, (eps, result, reference)
        if reference > 1e-300:
            assert result.delta_upper - result.delta_lower <= WIDTH * result.delta_upper
        else:
            assert result.delta_upper > 0.0  # never 0 as an upper bound


def test_the_cli_example():
    # dpcalc pld --p 1 --sigma 1 --T 5 --delta 1e-6: mu = sqrt(5); the grid gave 12.5964
    result = tight_epsilon([g(1.0, 5)], 1e-6)
    assert result.epsilon_lower <= mp_epsilon(1e-6, mp.sqrt(5)) <= result.epsilon_upper
    assert round(result.epsilon_upper, 6) == 12.595247
    assert analysis_of(result.phases) == EXACT_ANALYSIS


@pytest.mark.slow
@settings(max_examples=60, deadline=None, derandomize=DERANDOMIZE)
@given(sigma=st.floats(0.05, 100.0), steps=st.integers(1, 10**6), log_delta=st.floats(-300.0, -0.5),
       second=st.none() | st.tuples(st.floats(0.05, 100.0), st.integers(1, 1000)))
def test_interval_contains_the_exact_value_and_is_narrow(sigma, steps, log_delta, second):
    phases = [g(sigma, steps)] + ([] if second is None else [g(*second)])
    delta = 10.0**log_delta
    mu = mp_mu(phases)
    result = tight_epsilon(phases, delta)
    reference = mp_epsilon(delta, mu)
    assert result.epsilon_lower <= reference <= result.epsilon_upper
    if reference > 1e-3:
        assert result.epsilon_upper - result.epsilon_lower <= WIDTH * result.epsilon_upper


def test_only_unsubsampled_gaussian_runs_are_exact():
    assert exact_run([g(1.0, 3), g(2.0, 4)])
    assert not exact_run([g(1.0, 3), Phase("gaussian", 0.5, 1.0, None, 3)])
    assert not exact_run([Phase("laplace", 1.0, None, 1.0, 3)])
    assert not exact_run([g(1.0, 3), Phase("laplace", 1.0, None, 1.0, 3)])
    assert not tight_epsilon([Phase("gaussian", 0.5, 1.0, None, 3)], 1e-5).exact
    assert analysis_of([Phase("gaussian", 0.5, 1.0, None, 3)]) != EXACT_ANALYSIS


def test_huge_mu_is_inf_with_a_warning():
    result = tight_epsilon([g(1e-300, 10**12)], 1e-5)
    assert result.epsilon_upper == math.inf and result.warnings


def test_margin_covers_the_measured_error():
    # the bound on log delta's error is ten times the largest error measured against mpmath
    worst = 0.0
    for mu in (1e-4, 0.009, 0.011, 0.3, 1.0, 3.0, 30.0, 1e3):
        for log_delta in (-0.7, -5.0, -30.0, -100.0, -300.0):
            delta = 10.0**log_delta
            if delta >= gdp.max_advantage(mu) * 0.999:
                continue
            eps = gdp.epsilon_for_delta(delta, mu)
            computed = gdp.log_delta_for_epsilon(eps, mu)
            worst = max(worst, abs(float(computed - mp.log(mp_delta(eps, mp.mpf(mu))))))
    assert worst * 10.0 <= LOG_DELTA_ERROR


def test_upper_epsilon_is_the_exact_upper_bound():
    phases = [g(3.0, 50)]
    for accuracy in (1.6e-2, 4e-3, 1e-3):
        upper, step = upper_epsilon(phases, 1e-5, accuracy=accuracy)
        assert (upper, step) == (tight_epsilon(phases, 1e-5, accuracy=accuracy).epsilon_upper, 0.0)


def test_sweeps_and_largest_steps_agree_with_single_calls():
    phase = g(4.0, 1)
    counts = [1, 2, 5, 10, 40, 100]
    rows = tight_epsilons_over_steps(phase, 1e-5, counts)
    for count, row in zip(counts, rows):
        single = tight_epsilon([dataclasses.replace(phase, steps=count)], 1e-5)
        assert row == single and row.exact
    answer, at_answer, at_witness = largest_steps(phase, 1e-5, 3.0, fallback=False)
    # mu-GDP: the largest T with epsilon(sqrt(T)/4) <= 3
    assert answer == 8 and at_answer is not None and at_witness is not None
    assert at_answer == tight_epsilon([dataclasses.replace(phase, steps=8)], 1e-5)
    assert at_answer.epsilon_upper <= 3.0 < at_witness.epsilon_upper


def test_profile_is_exact():
    phases = [g(1.0, 3), g(2.0, 8)]
    epsilons = [0.0, 0.5, 2.0, 10.0]
    profile = tight_profile(phases, epsilons)
    assert profile.grid_step == 0.0
    for eps, lower, upper in zip(epsilons, profile.delta_lower, profile.delta_upper):
        assert lower <= mp_delta(eps, mp_mu(phases)) <= upper
        assert (lower, upper) == (tight_delta(phases, eps).delta_lower, tight_delta(phases, eps).delta_upper)
