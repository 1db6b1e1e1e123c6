"""work: the deterministic work limit and the one guard of every grid computation (S7 and "The
deterministic work limit" in docs/pld-soundness.md).

References: the rules the module states, checked directly (budgets count every charge, nest,
and raise once exhausted; the guard records why a grid computation failed and lets anything
else through), and the issue's requirements: the accountant never reads the clock, and a work
limit is a count, so that its effect is the same on every machine (the tests below never time
anything: they count).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcalc.core.pld import tight_epsilon, work
from dpcalc.core.pld.api import cached
from tests.core.pld.helpers import DESIGN_CARD, gaussian


@pytest.fixture(autouse=True)
def forget_results():
    """Results memoised under a lowered work limit must not be served to later tests."""
    yield
    cached.cache_clear()


def test_the_accountant_never_reads_the_clock(monkeypatch):
    import time

    def no_clock():
        raise AssertionError("the PLD accountant read the clock")

    for name in ("time", "monotonic", "perf_counter", "process_time"):
        monkeypatch.setattr(time, name, no_clock)
    cached.cache_clear()
    result = tight_epsilon([gaussian(0.004, 1.1, 10_000)], 1e-5)
    # the design card: [1.840278, 1.841477] at the default accuracy
    assert 1.8400 < result.epsilon_lower <= result.epsilon_upper < 1.8416


@pytest.mark.slow
def test_the_work_limit_is_a_count_and_its_warning_names_it(monkeypatch):
    phases = [gaussian(0.004, 1.1, 10_000)]
    cached.cache_clear()
    with work.limited(math.inf) as meter:
        free = tight_epsilon(phases, 1e-5)
    # the design card's work, in bin operations: a property of the input, not of the machine
    assert 1e6 < meter.used < 1e8 and meter.used < work.WORK_LIMIT
    monkeypatch.setattr(work, "WORK_LIMIT", meter.used / 2)
    cached.cache_clear()
    limited = tight_epsilon(phases, 1e-5)
    assert any("work limit of" in warning for warning in limited.warnings)
    assert limited.epsilon_lower <= free.epsilon_lower <= free.epsilon_upper <= limited.epsilon_upper
    cached.cache_clear()
    assert tight_epsilon(phases, 1e-5) == limited  # bit for bit, whatever the load


@pytest.mark.slow
def test_the_work_of_a_call_is_a_property_of_its_input():
    """The same input costs the same count of bin operations, run after run: a limit in these
    units stops every machine at the same point."""
    used = []
    for _ in range(2):
        cached.cache_clear()
        with work.limited(math.inf) as meter:
            tight_epsilon([gaussian(*DESIGN_CARD)], 1e-5)
        used.append(meter.used)
    assert used[0] == used[1] > 0


@pytest.mark.parametrize("failure, reason", [
    (work.WorkLimitReached("spent"), "the grid computation reached its work limit of 1e+03 bin operations"),
    (FloatingPointError("overflow"), "the grid computation failed (FloatingPointError)"),
    (ValueError("a failed sanity check"), "the grid computation failed (ValueError)"),
    (work.SizeLimitReached("a convolution needs 9 atoms, more than its size limit of 8"),
     "a convolution needs 9 atoms, more than its size limit of 8"),
    (ZeroDivisionError(), "the grid computation failed (ZeroDivisionError)"),
])
def test_the_guard_records_why_the_grid_failed(failure, reason):
    with work.guard(1e3) as guard:
        raise failure
    assert guard.failure == reason and guard.limit == 1e3


# MemoryError too: whether it happens depends on the machine, so it never selects another method
@pytest.mark.parametrize("failure", [KeyError("x"), TypeError("x"), AssertionError("x"), KeyboardInterrupt(),
                                     MemoryError()])
def test_the_guard_lets_other_exceptions_through(failure):
    with pytest.raises(type(failure)), work.guard(1e3):
        raise failure
    assert work._open == []  # its budget is closed all the same


def test_the_guard_spends_a_budget_and_raises_floating_point_exceptions(monkeypatch):
    with work.guard(100.0) as guard:
        work.charge(60.0)
        work.charge(60.0)
    assert guard.failure == work.limit_reason(100.0)
    with work.guard() as guard:
        np.float64(1e308) * 10.0  # overflow raises inside the guard
    assert guard.failure == "the grid computation failed (FloatingPointError)"
    with work.guard() as guard:
        tiny = np.float64(1e-300) * 1e-300  # underflow is allowed: the result is 0
    assert guard.failure is None and tiny == 0.0
    # the default budget is WORK_LIMIT as it is at the call
    monkeypatch.setattr(work, "WORK_LIMIT", 5.0)
    with work.guard() as guard:
        work.charge(6.0)
    assert guard.limit == 5.0 and guard.failure == work.limit_reason(5.0)


def test_budgets_nest_and_charge_outside_them_only_counts():
    work.charge(1e300)  # no budget open: nothing to exhaust
    with work.limited(100.0) as outer:
        work.charge(5.0)
        with pytest.raises(work.WorkLimitReached, match="work limit of 10 bin operations"):
            with work.limited(10.0) as inner:
                work.charge(5.0)
                assert (inner.used, outer.used) == (5.0, 10.0)  # every open budget is charged
                work.charge(6.0)
        assert inner.used == 11.0 and outer.used == 16.0
        work.charge(80.0)  # 96: within the outer budget once the inner one is closed
        with pytest.raises(work.WorkLimitReached, match="work limit of 100 bin operations"):
            work.charge(5.0)
    assert work._open == []
    assert issubclass(work.WorkLimitReached, ArithmeticError)  # the guard treats it like an overflow


def test_costs():
    assert work.fft_cost(1024) == 1024 * 10 and work.fft_cost(1) == 1.0
    assert work.limit_reason(1e9) == "the grid computation reached its work limit of 1e+09 bin operations"


def test_the_atom_limit_is_a_count_of_the_input():
    work.check_atoms(work.MAX_ATOMS, "a convolution")  # at the limit: allowed
    with pytest.raises(work.SizeLimitReached, match=f"needs {work.MAX_ATOMS + 1} atoms, more than its size limit"):
        work.check_atoms(work.MAX_ATOMS + 1, "a convolution")
