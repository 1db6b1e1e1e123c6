"""The two-of-three rule of the mechanism commands: exactly two of privacy, noise or accuracy
options given, the third computed; one message per way of breaking it."""

from __future__ import annotations

from collections.abc import Sequence

from dpcalc.cli.options import InputError


def two_of_three(slots: Sequence[tuple[str, str, object]], example: str) -> None:
    """Check that exactly two of three (option, quantity, value) slots are given.

    `example` completes "e.g. ... to get <quantity>" in the message for none given.
    """
    options = [option for option, _, _ in slots]
    listed = f"{options[0]}, {options[1]} and {options[2]}"
    given = [index for index, (_, _, value) in enumerate(slots) if value is not None]
    if len(given) == 2:
        return
    if len(given) == 3:
        drops = ", ".join(f"{option} to get {quantity}" for option, quantity, _ in slots)
        raise InputError(f"{listed} cannot all be given: drop the one to compute (drop {drops})")
    if given:
        only = given[0]
        first, second = (index for index in range(3) if index != only)
        raise InputError(
            f"give two of {listed}, got only {options[only]}: add {options[first]} (to get "
            f"{slots[second][1]}) or {options[second]} (to get {slots[first][1]})")
    raise InputError(f"give two of {listed} (the third is computed), e.g. {example}")
