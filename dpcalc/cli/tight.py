"""The certified tight epsilon that `gdp` and `rdp` report beside their own figure (`--no-tight` skips it)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from dpcalc.core.pld import PLDResult

NoTight = Annotated[
    bool,
    typer.Option("--no-tight", help="Skip the certified tight epsilon (PLD accountant), where speed matters."),
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


def shared_over_steps(runs) -> dict[int, PLDResult]:
    """The PLD results (core.pld.PLDResult) of a sweep's runs that can share one composition.

    `runs` is a list of (phases, target delta or None, accuracy). Single-phase runs at a
    target delta that differ only in T are accounted together by
    `core.pld.tight_epsilons_over_steps`; the answer maps their positions in `runs` to their
    results, and leaves out the others (to be accounted one by one).
    """
    import dataclasses

    groups: dict[tuple, list[int]] = {}
    for index, (phases, delta, accuracy) in enumerate(runs):
        if len(phases) == 1 and delta is not None:
            groups.setdefault((dataclasses.replace(phases[0], steps=1), delta, accuracy), []).append(index)
    shared: dict[int, PLDResult] = {}
    if not any(len({runs[i][0][0].steps for i in members}) > 1 for members in groups.values()):
        return shared
    from dpcalc.core.pld import tight_epsilons_over_steps

    for (phase, delta, accuracy), members in groups.items():
        steps = [runs[index][0][0].steps for index in members]
        shared.update(zip(members, tight_epsilons_over_steps(phase, delta, steps, accuracy=accuracy)))
    return shared


def tight_epsilons(runs) -> list[tuple[float | None, list[str]]]:
    """`tight_epsilon` for every (phases, delta) of a sweep, sharing the work across T
    ((None, []) where delta is None)."""
    from dpcalc.core.pld import DEFAULT_ACCURACY

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
    """(certified upper bound on epsilon at delta, warnings) from the PLD accountant.

    The tight figure is an addition to the command's own answer: when the accountant cannot
    handle a run (extreme noise multipliers overflow its grid), the figure is left out
    (None) with a warning rather than failing the whole command.
    """
    import warnings as python_warnings

    from dpcalc.core.pld import tight_epsilon as account

    try:
        with python_warnings.catch_warnings():
            python_warnings.simplefilter("ignore", RuntimeWarning)
            result = account(phases, delta)
    except (ArithmeticError, ValueError, MemoryError) as error:
        return None, [f"no tight epsilon: the PLD accountant could not account this run ({type(error).__name__})."]
    return result.epsilon_upper, list(result.warnings)


def gap_percent(value: float, tight: float) -> float:
    """How far `value` lies from the tight figure, in percent of the tight figure."""
    return 100.0 * (value - tight) / tight if tight > 0 else 0.0
