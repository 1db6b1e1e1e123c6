"""The textbook mechanisms' privacy, noise and accuracy, one mechanism a module (pure numerics)."""

from __future__ import annotations

from collections.abc import Sequence

from dpcalc.core.validation import ParameterError


def exactly_two(label: str, values: Sequence[tuple[str, float | None]]) -> None:
    """ParameterError naming `label` unless exactly two of the (name, value) pairs are given."""
    given = [name for name, value in values if value is not None]
    if len(given) != 2:
        raise ParameterError(label, "exactly two of them given", ", ".join(given) or "none")
