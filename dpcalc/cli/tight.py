"""The certified tight epsilon that `gdp` and `rdp` report beside their own figure (`--no-tight` skips it)."""

from __future__ import annotations

from typing import Annotated

import typer

NoTight = Annotated[
    bool,
    typer.Option("--no-tight", help="Skip the certified tight epsilon (PLD accountant), where speed matters."),
]


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
