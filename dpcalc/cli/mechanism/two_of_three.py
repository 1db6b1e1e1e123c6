"""The check shared by the mechanism commands: of three quantities, exactly two are given.

Modelled on `dpcalc laplace-eps` (dpcalc.cli.laplace_eps._check_two_of_three): giving all
three, or fewer than two, is one line on stderr saying which to drop or add (exit 2).
"""

from __future__ import annotations

from collections.abc import Sequence

from dpcalc.cli.options import InputError
from dpcalc.core.validation import ParameterError


def check_two_of_three(given: Sequence[tuple[str, bool]], example: str) -> None:
    """`given`: the three quantities' option names (e.g. "--eps or --scale") and whether each
    was given. `example` is a call that works, shown when none was given."""
    names = [name for name, _ in given]
    present = [name for name, there in given if there]
    listed = f"{names[0]}, {names[1]} and {names[2]}"
    if len(present) == 3:
        raise InputError(f"{listed} cannot all be given: drop the one to compute")
    if len(present) == 2:
        return
    if present:
        others = [name for name in names if name != present[0]]
        raise InputError(f"give two of {listed}, got only {present[0]}: add {others[0]} or {others[1]}")
    raise InputError(f"give two of {listed} (the third is computed), e.g. {example}")


def option_error(error: ParameterError, options: dict[str, str]) -> InputError:
    """A core ParameterError restated with the option's name (`options`: core name -> option)."""
    return InputError(f"{options.get(error.name, error.name)} must be {error.requirement}, got {error.received}")
