"""The errors the command line words for its user, below every module that raises them.

`InputError` (bad input: one line on stderr, exit 2) and `OutputError` (an output that could not
be written, exit 74) are caught at one edge, dpcalc.cli.app; `conflict` words two options that
cannot be given together.
"""

from __future__ import annotations


class InputError(Exception):
    """Invalid command-line input: printed as one line on stderr, exit code 2."""


class OutputError(OSError):
    """A write of dpcalc's output that failed (a full disk, a closed descriptor): `target` says
    what could not be written ("the output to stdout", "the --plot file F"). Never a closed
    pipe, which is BrokenPipeError (141)."""

    def __init__(self, target: str, error: OSError) -> None:
        super().__init__(error.errno, error.strerror or str(error))
        self.target = target


def conflict(first: str, second: str, hint: str = "") -> InputError:
    """The error for two options that cannot be given together."""
    suffix = f"; {hint}" if hint else ""
    return InputError(f"{first} and {second} cannot be given together{suffix}")
