"""The certified tight epsilon that `gdp` and `rdp` report beside their own figure (`--no-tight` skips it)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated

from dpcalc.cli import progress
from dpcalc.cli.declare import Option

NoTight = Annotated[
    bool,
    Option("--no-tight", help="Skip the certified tight epsilon (PLD accountant), where speed matters."),
]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block, and back as it was after it.

    The PLD accountant allocates large arrays and no reference cycles: collections it triggers
    only cost time (measured: a few percent of a pld call).
    """
    import gc

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def tight_epsilons(runs) -> list[tuple[float | None, list[str]]]:
    """`tight_epsilon` for every (phases, delta) of a sweep, sharing the work across T
    ((None, []) where delta is None)."""
    from dpcalc.core.accountants import shared_over_steps
    from dpcalc.core.pld import DEFAULT_ACCURACY

    progress.describe("certified epsilon (PLD accountant)")
    shared = shared_over_steps([(phases, delta, DEFAULT_ACCURACY) for phases, delta in runs])
    answers: list[tuple[float | None, list[str]]] = []
    for index, (phases, delta) in enumerate(runs):
        if delta is None:
            answers.append((None, []))
        elif index in shared:
            answers.append((shared[index].epsilon_upper, list(shared[index].warnings)))
        else:
            answers.append(tight_epsilon(phases, delta))
    return answers


def tight_epsilon(phases, delta: float) -> tuple[float | None, list[str]]:
    """(certified upper bound on epsilon at delta, warnings) from the PLD accountant (the figure
    `dpcalc pld` prints; None with a warning where it cannot account the run:
    `core.accountants.certified_epsilon`)."""
    from dpcalc.core.accountants import certified_epsilon

    progress.describe("certified epsilon (PLD accountant)")
    return certified_epsilon(phases, delta)


def gap_percent(value: float, tight: float) -> float:
    """How far `value` lies from the tight figure, in percent of the tight figure."""
    return 100.0 * (value - tight) / tight if tight > 0 else 0.0
