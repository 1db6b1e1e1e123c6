"""The certified tight epsilon that `gdp` and `rdp` report beside their own figure (`--no-tight` skips it)."""

from __future__ import annotations

from typing import Annotated

import typer

NoTight = Annotated[
    bool,
    typer.Option("--no-tight", help="Skip the certified tight epsilon (PLD accountant), where speed matters."),
]


def tight_epsilon(phases, delta: float) -> tuple[float, list[str]]:
    """(certified upper bound on epsilon at delta, warnings) from the PLD accountant."""
    from dpcalc.core.pld import tight_epsilon as account

    result = account(phases, delta)
    return result.epsilon_upper, list(result.warnings)


def gap_percent(value: float, tight: float) -> float:
    """How far `value` lies from the tight figure, in percent of the tight figure."""
    return 100.0 * (value - tight) / tight if tight > 0 else 0.0
