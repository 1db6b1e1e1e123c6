"""Truncated Poisson sampling (dpcalc.core.pld.truncation): the overflow probability against
mpmath, and the truncated bounds against the Poisson run's certified profile they are read off."""

from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core.phases import Phase
from dpcalc.core.pld import tight_delta, tight_epsilon
from dpcalc.core.pld.privacy_profile import ProfileBounds
from dpcalc.core.pld.truncated_profile import truncated_delta, truncated_epsilon
from dpcalc.core.pld.truncation import Truncation, account_truncated, overflow_probability
from dpcalc.core.validation import ParameterError

DESIGN_CARD = Phase("gaussian", 0.004, 1.1, None, 10000)


def binomial_tail(records: int, p: float, cap: int) -> mpmath.mpf:
    """P[Binomial(records, p) > cap], summed exactly at 50 digits."""
    with mpmath.workdps(50):
        q = mpmath.mpf(p)
        return mpmath.fsum(mpmath.binomial(records, k) * q**k * (1 - q) ** (records - k)
                           for k in range(cap + 1, records + 1))


@pytest.mark.parametrize(("n", "p", "cap", "steps"), [
    (1000, 0.05, 60, 1), (1000, 0.05, 80, 30), pytest.param(5000, 0.01, 75, 200, marks=pytest.mark.slow), (200, 0.3, 90, 7), (300, 0.5, 200, 3),
])
def test_overflow_probability_bounds_the_exact_one_tightly(n, p, cap, steps):
    # add-remove: the largest neighbour has n + 1 records; batches are independent across steps
    tail = binomial_tail(n + 1, p, cap)
    with mpmath.workdps(50):
        exact = float(1 - (1 - tail) ** steps)
    bound = overflow_probability([Phase("gaussian", p, 1.0, None, steps)], Truncation(n, cap))
    assert exact <= bound <= exact * (1 + 1e-8)


def test_replace_one_counts_the_dataset_itself():
    phase = Phase("gaussian", 0.05, 1.0, None, 1, sampling="poisson", neighbours="zero-out")
    assert overflow_probability([phase], Truncation(1000, 60)) == pytest.approx(float(binomial_tail(1000, 0.05, 60)),
                                                                                   rel=1e-8)


def test_a_cap_no_batch_can_reach_costs_nothing():
    assert overflow_probability([Phase("gaussian", 0.5, 1.0, None, 10)], Truncation(99, 100)) == 0.0
    assert overflow_probability([Phase("gaussian", 0.0, 1.0, None, 10)], Truncation(1000, 1)) == 0.0


def test_only_poisson_gaussian_phases_are_capped():
    with pytest.raises(ParameterError, match="max batch size"):
        overflow_probability([Phase("laplace", 0.5, None, 1.0, 10)], Truncation(1000, 600))


@pytest.fixture(scope="module")
def design_card_profile():
    return ProfileBounds([DESIGN_CARD], [(1e-5, None)])


@pytest.mark.slow
def test_no_overflow_gives_the_poisson_interval(design_card_profile):
    poisson = tight_epsilon([DESIGN_CARD], 1e-5)
    upper, lower = truncated_epsilon(design_card_profile, 1e-5, 0.0)
    assert upper == pytest.approx(poisson.epsilon_upper, rel=1e-9)
    # the profile composes its lower measure on the full grid, `tight_epsilon` a short run's on a
    # coarser one (`plan.lower_coarse_share`): both lower bounds, within the accuracy of each other
    assert lower == pytest.approx(poisson.epsilon_lower, rel=1e-3) and lower <= upper


@pytest.mark.parametrize("overflow", [1e-12, 1e-9, 2.4e-7, 5e-7])
def test_truncated_epsilon_meets_its_certificates(design_card_profile, overflow):
    upper, lower = truncated_epsilon(design_card_profile, 1e-5, overflow)
    delta_upper, _ = design_card_profile.at([upper])
    assert delta_upper[0] + (1 + math.exp(upper)) * overflow <= 1e-5  # (upper, 1e-5) is certified
    _, delta_lower = design_card_profile.at([lower])
    assert lower == 0.0 or delta_lower[0] - (1 + math.exp(lower)) * overflow > 1e-5  # (lower, 1e-5) is refuted
    poisson_upper, poisson_lower = truncated_epsilon(design_card_profile, 1e-5, 0.0)
    assert lower <= poisson_lower <= poisson_upper <= upper


def test_an_overflow_too_likely_for_delta_meets_no_epsilon(design_card_profile):
    assert truncated_epsilon(design_card_profile, 1e-5, 1e-5)[0] == math.inf
    assert truncated_epsilon(design_card_profile, 1e-5, 0.5) == (math.inf, 0.0)


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(small=st.floats(1e-14, 1e-7), factor=st.floats(1.0, 100.0))
def test_the_upper_bound_grows_with_the_overflow(design_card_profile, small, factor):
    first, _ = truncated_epsilon(design_card_profile, 1e-5, small)
    second, _ = truncated_epsilon(design_card_profile, 1e-5, min(small * factor, 5e-7))
    assert first <= second


@pytest.mark.slow
def test_delta_at_epsilon_moves_by_the_overflow_cost(design_card_profile):
    poisson = tight_delta([DESIGN_CARD], 2.0)
    upper, lower = truncated_delta(design_card_profile, 2.0, 1e-7)
    assert upper >= poisson.delta_upper + (1 + math.exp(2.0)) * 1e-7 * (1 - 1e-12)
    assert lower <= poisson.delta_lower


@pytest.mark.slow
def test_account_truncated_reports_both_runs():
    truncated, poisson, overflow = account_truncated([DESIGN_CARD], Truncation(62500, 360), delta=1e-5, epsilon=None,
                                                     accuracy=1e-3)
    assert 2e-7 < overflow < 3e-7
    assert poisson.epsilon_lower <= poisson.epsilon_upper < truncated.epsilon_upper
    assert truncated.epsilon_lower <= poisson.epsilon_lower
    assert truncated.epsilon == truncated.epsilon_upper and truncated.delta == 1e-5
