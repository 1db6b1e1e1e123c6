"""Ctrl-C that CPython could not raise where it landed, kept to be raised at the next safe point
(`dpcalc.cli.app` and `dpcalc.cli.output.emit`)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

# Ctrl-Cs that CPython could not raise: one that lands in a weakref callback (importlib runs
# one as each import finishes) is printed as "Exception ignored in: ..." and dropped, and the
# command would run on and exit 0. keep_lost_interrupts records them; raise_lost_interrupt
# raises one after the subcommand's imports, before any output (`output.emit`: a command that
# imports as it computes must not print a result it was asked to abandon) and after the command.
_lost_interrupts: list[BaseException] = []


@contextlib.contextmanager
def keep_lost_interrupts() -> Iterator[None]:
    """Record, while the block runs, every KeyboardInterrupt that CPython reports as unraisable."""
    previous = sys.unraisablehook

    def hook(unraisable: sys.UnraisableHookArgs) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            _lost_interrupts.append(unraisable.exc_value)
        else:
            previous(unraisable)

    _lost_interrupts.clear()
    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = previous


def raise_lost_interrupt() -> None:
    """Raise KeyboardInterrupt if one was recorded (`keep_lost_interrupts`) and not yet raised."""
    if _lost_interrupts:
        _lost_interrupts.clear()
        raise KeyboardInterrupt
