"""dpcalc's certified bounds against every enumerated neighbouring pair of tiny pipelines, for each
sampling scheme and neighbour relation (tests/soundness/enumeration.py, cases.py):

(a) dpcalc's certified upper delta is at or above every pair's (lower bound on its) delta;
(b) where the run is bracketed (at most two steps), dpcalc's certified lower bound is at or below
    the delta some enumerated pair attains (its upper bound): dpcalc's lower bounds are all
    attained by pairs of this family (docs/mathematics.md §3).
"""

from __future__ import annotations

import pytest

from tests.slow import slow_cases
from tests.soundness.cases import FAST, SLOW, UNIFORM_FAST, Case, check


def _assert_sound(case: Case) -> None:
    for eps in case.eps:
        outcome = check(case, eps)
        assert not outcome.violations, f"{case} eps {eps}: " + "; ".join(outcome.violations[:3])
        if outcome.lower_checked:
            assert outcome.lower <= outcome.attained_upper, (
                f"{case} eps {eps}: certified lower {outcome.lower!r} above every pair's delta "
                f"(at most {outcome.attained_upper!r})")


@pytest.mark.parametrize("case", slow_cases(FAST, 1, 4, 5, 6, 7, 8, 9, one_argument=True), ids=str)
def test_certified_bounds_hold_for_every_enumerated_pair(case):
    _assert_sound(case)


@pytest.mark.slow
def test_tight_schemes_are_attained_by_an_enumerated_pair():
    """Poisson sampling (and user level) is tight: the worst enumerated pair comes within the
    certified interval's width (1e-3) of dpcalc's upper bound at one step."""
    for case in (FAST[0], FAST[1], FAST[-1]):
        outcome = check(case, case.eps[0])
        assert outcome.ratio >= 1 - 1.5e-3, (str(case), outcome.ratio)


@pytest.mark.parametrize("case", UNIFORM_FAST, ids=str)
def test_fixed_size_batches_under_add_remove_and_zero_out(case):
    """Needs the accounting of fixed-size batches under add-remove and zero-out."""
    _assert_sound(case)


@pytest.mark.slow
@pytest.mark.exhaustive
@pytest.mark.parametrize("combination", list(SLOW), ids="/".join)
def test_every_case_of_the_grid(combination):
    """The whole grid (about half an hour on two cores): `python -m pytest -m exhaustive`, or
    `python -m tests.soundness.report` for the table of ratios. CI runs the other slow tests."""
    for case in SLOW[combination]:
        _assert_sound(case)
