"""The textbook mechanisms' privacy, noise and accuracy, one mechanism a module (pure numerics)."""

from __future__ import annotations

from collections.abc import Sequence

from dpcalc.core.validation import ParameterError


def exactly_two(label: str, values: Sequence[tuple[str, float | None]], *, first_alone: bool = False) -> None:
    """ParameterError naming `label` unless exactly two of the (name, value) pairs are given, or
    (with `first_alone`) the first alone: privacy alone fixes the noise, and with it the accuracy
    at every failure probability (dpcalc.core.mechanisms.accuracy)."""
    given = [name for name, value in values if value is not None]
    if first_alone and given == [values[0][0]]:
        return
    if len(given) != 2:
        raise ParameterError(label, "exactly two of them given" + (", or the first alone" if first_alone else ""),
                             ", ".join(given) or "none")
