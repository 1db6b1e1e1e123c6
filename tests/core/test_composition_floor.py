"""Optimal composition of different (eps_i, delta_i) at every total delta from the mechanisms' own
composed delta 1 - prod(1 - delta_i) up: exact at that floor, continuous and non-increasing above
it (docs/mathematics.md §5), against an mpmath evaluation of the subset-sum formula."""

from __future__ import annotations

import itertools
import math

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core.composition import compose, compose_heterogeneous
from dpcalc.core.composition import optimal as optimal_module
from dpcalc.core.validation import ParameterError

# The returned optimum is raised by the 4e-12 rounding margin and solved in closed form
# (~5e-13 relative): within 1e-10 of the mpmath root, and never below it.
RTOL = 1e-10


def mp_total_delta(epsilon_total, epsilons, deltas):
    """The exact total delta of the composition at eps_g, in 60-digit mpmath, as Murtagh, Vadhan 2016,
    Thm 1.5 states it: 1 - prod(1 - delta_i) (1 - delta_pure(eps_g)), with

        delta_pure(eps_g) = sum_{S subset [k]} (e^(sum_S eps_i) - e^eps_g e^(sum_not-S eps_i))_+ / prod(1 + e^eps_i),

    every subset enumerated (independent of dpcalc's atom walk). The inputs are read as the
    decimals they print as, as dpcalc reads them."""
    with mp.workdps(60):
        eg = mp.mpf(epsilon_total)
        eps = [mp.mpf(repr(e)) for e in epsilons]
        total = mp.mpf(0)
        for chosen in itertools.product((True, False), repeat=len(eps)):
            inside = mp.fsum(e for e, c in zip(eps, chosen) if c)
            outside = mp.fsum(e for e, c in zip(eps, chosen) if not c)
            total += max(mp.exp(inside) - mp.exp(eg + outside), 0)
        pure = total / mp.fprod(1 + mp.exp(e) for e in eps)
        survival = mp.fprod(1 - mp.mpf(repr(d)) for d in deltas)
        return 1 - survival * (1 - pure)


def mp_optimal(epsilons, deltas, total_delta):
    """The smallest eps_g with mp_total_delta(eps_g) <= D, by bisection in mpmath (80 steps on
    [0, sum eps_i]: a bracket 2^-80 of the sum wide)."""
    with mp.workdps(60):
        target = mp.mpf(repr(total_delta))
        low, high = mp.mpf(0), mp.fsum(mp.mpf(repr(e)) for e in epsilons)
        if mp_total_delta(low, epsilons, deltas) <= target:
            return low
        for _ in range(80):
            middle = (low + high) / 2
            if mp_total_delta(middle, epsilons, deltas) <= target:
                high = middle
            else:
                low = middle
        return high


EPSILONS, DELTAS = [1.0, 2.0], [0.1, 0.2]  # own composed delta 1 - 0.9 x 0.8 = 0.28


def test_at_the_floor_the_optimum_is_the_sum_of_the_epsilons():
    # 1 - prod(1 - delta_i) = 0.28 exactly in decimal: delta_pure must be 0, reached only at eps_g = 3.
    result = compose_heterogeneous(EPSILONS, DELTAS, total_delta=0.28)
    assert result.optimal.epsilon == 3.0 and result.optimal.epsilon_lower <= 3.0
    assert result.best == "optimal" and result.not_applicable == ("basic", "advanced", "simplified")
    # one ulp below the floor no epsilon holds
    with pytest.raises(ParameterError) as error:
        compose_heterogeneous(EPSILONS, DELTAS, total_delta=math.nextafter(0.28, 0.0))
    assert error.value.name == "total_delta" and "1 - prod(1 - delta_i) = 0.28" in error.value.requirement
    # the homogeneous (KOV Thm 3.3) path: 1 - 0.9^3 = 0.271 exactly
    assert compose(1.0, 0.1, 3, total_delta=0.271).optimal.epsilon == 3.0


@pytest.mark.parametrize("total", [0.2800001, 0.29, 0.3, 0.31, 0.5])
def test_above_the_floor_matches_mpmath(total):
    value = compose_heterogeneous(EPSILONS, DELTAS, total_delta=total).optimal.epsilon
    reference = mp_optimal(EPSILONS, DELTAS, total)
    with mp.workdps(60):
        assert mp_total_delta(value, EPSILONS, DELTAS) <= mp.mpf(repr(total))  # sound: never below the optimum
        assert value >= reference and value == pytest.approx(float(reference), rel=RTOL)


def test_the_issue_values():
    # mpmath bisection of the formula above (60 digits): 2.978194509580..., 2.933103064754...
    assert compose_heterogeneous(EPSILONS, DELTAS, total_delta=0.29).optimal.epsilon == pytest.approx(
        2.97819450958, rel=1e-10)
    assert compose_heterogeneous(EPSILONS, DELTAS, total_delta=0.31).optimal.epsilon == pytest.approx(
        2.93310306475, rel=1e-10)


def test_continuous_at_the_floor():
    # eps_g -> sum eps_i as D -> 0.28 from above (delta_pure is continuous and 0 only at eps_g = 3)
    values = [compose_heterogeneous(EPSILONS, DELTAS, total_delta=0.28 + gap).optimal.epsilon
              for gap in (1e-3, 1e-6, 1e-9, 1e-12)]
    assert values == sorted(values) and 3.0 - values[-1] < 1e-9


def test_a_long_list_keeps_the_float_floor():
    # prod(1 - delta_i) with too many digits for the exact floor: the series of the float path decides
    pairs = [(1e-6, 10**6)]
    assert optimal_module._exact_reserve(pairs, 0.7) is None
    floor = -math.expm1(10**6 * math.log1p(-1e-6))
    assert math.isfinite(compose(1e-3, 1e-6, 10**6, total_delta=floor * (1 + 1e-9)).optimal.epsilon)


lists = st.lists(
    st.tuples(st.floats(0.01, 3.0), st.sampled_from([0.0, 1e-6, 0.01, 0.05, 0.1, 0.2])),
    min_size=2, max_size=4,
).filter(lambda pairs: len({e for e, _ in pairs}) > 1)


@settings(max_examples=40, deadline=None)
@given(lists, st.floats(1e-6, 0.999), st.floats(1e-6, 0.999))
def test_finite_and_non_increasing_in_the_total_delta(pairs, a, b):
    epsilons, deltas = [e for e, _ in pairs], [d for _, d in pairs]
    floor = -math.expm1(math.fsum(math.log1p(-d) for d in deltas))
    # two totals strictly above the floor, anywhere in (floor, 1)
    low, high = sorted(floor + (1.0 - floor) * u for u in (a, b))
    at_low = compose_heterogeneous(epsilons, deltas, total_delta=low).optimal.epsilon
    at_high = compose_heterogeneous(epsilons, deltas, total_delta=high).optimal.epsilon
    assert math.isfinite(at_low) and math.isfinite(at_high)
    assert at_low <= math.fsum(epsilons)
    # non-increasing, up to the rounding of two closed-form solutions (1e-12 relative)
    assert at_high <= at_low * (1.0 + 1e-12)
