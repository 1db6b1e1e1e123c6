"""Numbers as text: as they were written (`WrittenFloat`, `WrittenInt`, `exact`) and as they are
shown to people (`format_number`; certified bounds rounded outward, `format_upper` and
`format_lower`; a message wrapped to a width, `wrap_words`).

A number parsed from text keeps the text it was written as: messages about a value quote it as
typed, and `exact` takes the decimal itself, so that quotients such as epochs / p are exact. A
number from Python (the API) is quoted by its repr. The command line parses its options into
these types (dpcalc.cli.options); the core's rules and messages read them (dpcalc.core.training)
and its results' warnings show numbers with the same digits the command prints.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fractions import Fraction


class WrittenFloat(float):
    """A float parsed from text that keeps the text it was written as (`text`)."""

    text: str

    def __new__(cls, value: float, text: str) -> WrittenFloat:
        number = super().__new__(cls, value)
        number.text = text
        return number

    def __getnewargs__(self) -> tuple[float, str]:  # type: ignore[override]  # copy and pickle keep the text
        return float(self), self.text


class WrittenInt(int):
    """An integer parsed from text that keeps the text it was written as (`text`, e.g. "1e4")."""

    text: str

    def __new__(cls, value: int, text: str) -> WrittenInt:
        number = super().__new__(cls, value)
        number.text = text
        return number

    def __getnewargs__(self) -> tuple[int, str]:  # type: ignore[override]  # copy and pickle keep the text
        return int(self), self.text


def written(value: float) -> str:
    """How a number was written (its repr when it was not parsed from text)."""
    return value.text if isinstance(value, (WrittenFloat, WrittenInt)) else repr(value)


def exact(value: float) -> Fraction:
    """The decimal a number was written as, exactly (0.001 is 1/1000, not the nearest float)."""
    from fractions import Fraction  # imported only where a quotient must be exact: start-up time

    if value == 0:  # "0e-999999999" is 0: Fraction would compute 10**999999999 first
        return Fraction(0)
    return Fraction(written(value).strip())


def format_number(value: Any) -> str:
    """A number for people: integers as they are, reals to about seven significant digits."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if value == 0.0:
            return "0"
        if 1e-3 <= abs(value) < 1e7:
            text = f"{value:.6f}".rstrip("0").rstrip(".")
            return text
        return f"{value:.6g}"
    return str(value)


def format_bound(value: Any, upward: bool) -> str:
    """A certified bound for people: `format_number`'s digits, rounded outward.

    An upper bound is never printed below its value, nor a lower bound above it: where rounding
    to nearest went the wrong way, the last printed digit moves one unit outward.
    """
    text = format_number(value)
    if not isinstance(value, float) or not math.isfinite(value) or value == 0.0:
        return text
    for _ in range(3):
        shown = float(text)
        if (shown >= value) if upward else (shown <= value):
            return text
        fixed = 1e-3 <= abs(shown) < 1e7 and "e" not in text
        quantum = 1e-6 if fixed else 10.0 ** (math.floor(math.log10(abs(shown))) - 5)
        text = format_number(shown + quantum if upward else shown - quantum)
    return text


def format_upper(value: Any) -> str:
    """An upper bound (epsilon, delta, noise to add) rounded up for display."""
    return format_bound(value, True)


def format_lower(value: Any) -> str:
    """A lower bound rounded down for display."""
    return format_bound(value, False)


# Indent of a wrapped warning's second and later lines.
CONTINUATION_INDENT = "  "


def wrap_words(text: str, width: int, indent: str = CONTINUATION_INDENT) -> str:
    """`text` wrapped at spaces to lines of at most `width` characters, later lines indented.

    A word is never broken, nor split at a hyphen ("add-remove", "1e-05"): a word longer than
    the line stands alone on its line, whole.
    """
    import textwrap

    return "\n".join(textwrap.wrap(text, width=max(width, len(indent) + 1), subsequent_indent=indent,
                                   break_long_words=False, break_on_hyphens=False)) or text
