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
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fractions import Fraction

    from dpcalc.core.validation import Interval


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


def decimal_ratio(text: str) -> tuple[int, int]:
    """A decimal text as an exact ratio of integers (numerator, denominator > 0), as `exact`
    would give it: a plain decimal (0.9, .95, 1) directly, any other (1e-1) through Fraction
    (fractions and decimal cost a few ms to import). int / int is correctly rounded, as float()
    of a Fraction is."""
    whole, _, decimals = text.strip().lstrip("+").partition(".")
    if (whole + decimals).isascii() and (whole + decimals).isdigit():
        return int(whole + decimals), 10 ** len(decimals)
    from fractions import Fraction

    fraction = Fraction(text.strip())
    return fraction.numerator, fraction.denominator


def exact_complement(value: float) -> float:
    """float(1 - exact(value)), without Fraction for a plain decimal (`decimal_ratio`)."""
    if value == 0:  # as `exact`: "0e-999999999" is 0
        return 1.0
    numerator, denominator = decimal_ratio(written(value))
    return (denominator - numerator) / denominator


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

# Reading numbers from text. dpcalc reads numbers in ASCII decimal notation only
# (`decimal_text`, the one gate every numeric text passes: the options, sweep ranges, --phase
# values): Python's float() and int() would also take digits of other scripts (Arabic-Indic
# "\u0661\u0661" is 11) and underscores ("1_1" is 11), which dpcalc refuses by name rather than
# read silently. A refusal is a `TextError` whose message names the value by the caller's
# name for it (a keyword, or on the command line an option).

class TextError(ValueError):
    """A text that is not a number in the range asked for: the message names it, says the
    range and quotes the text; `requirement` is the range ("an integer in [1, inf)") and `text`
    the text as given."""

    def __init__(self, message: str, *, requirement: str | None = None, text: str | None = None) -> None:
        super().__init__(message)
        self.requirement = requirement
        self.text = text


# A number as dpcalc reads it: an optional sign, ASCII digits with an optional point, an
# optional exponent; or the words inf and nan, which each option's range then refuses by name.
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_WORDS = re.compile(r"[+-]?(?:inf|infinity|nan)", re.IGNORECASE)
_INTEGER = re.compile(r"[+-]?[0-9]+")
_BLANKS = " \t\n\r\f\v"  # ASCII whitespace around a number is ignored; other whitespace is not


def decimal_text(text: str) -> str | None:
    """`text` without its surrounding ASCII blanks when it is a number in ASCII decimal notation
    ("12", "-0.5", "1e-5", ".5", "inf", "nan"); None otherwise ("abc", "1_1", "\u0661", "0x10", "")."""
    cleaned = text.strip(_BLANKS)
    return cleaned if _DECIMAL.fullmatch(cleaned) or _WORDS.fullmatch(cleaned) else None


def not_a_number(name: str, what: str, text: str, *, where: str = "") -> TextError:
    """The error for a text that is not an ASCII decimal number: "{name} must be {what}, got
    {text!r}{where}", saying why when the text holds an underscore or a character outside ASCII
    (digits of another script, which float() would read)."""
    if "_" in text or not text.isascii():
        return TextError(f"{name} must be {what}, written with the ASCII digits 0-9 only (no underscores, no "
                          f"digits of other scripts), got {shown(text)!r}{where}", requirement=what, text=text)
    return TextError(f"{name} must be {what}, got {shown(text)!r}{where}", requirement=what, text=text)


def shown(text: str) -> str:
    """A value as a message quotes it: shortened in the middle when it is long."""
    return text if len(text) <= 40 else f"{text[:20]}...{text[-8:]} ({len(text)} characters)"


def read_real(name: str, text: str, interval: Interval) -> WrittenFloat:
    """`text` read as a finite real in `interval`; `name` is what messages call it."""
    cleaned = decimal_text(text)
    if cleaned is None:
        raise not_a_number(name, f"a number {interval.requirement}", text)
    value = float(cleaned)
    if not interval.contains(value) or math.isnan(value):
        raise TextError(f"{name} must be {interval.requirement}, got {shown(text)}", requirement=interval.requirement,
                        text=text)
    if value == 0 and any(digit in "123456789" for digit in cleaned.partition("e")[0].partition("E")[0]):
        # 1e-400 is not 0: read as 0.0 it would turn a tiny p or epsilon into none at all
        requirement = f"{interval.requirement}, 0 or at least 5e-324 (the smallest float64 number)"
        raise TextError(f"{name} must be {requirement}, got {shown(text)}", requirement=requirement, text=text)
    return WrittenFloat(value, text)


def _too_large(name: str, interval: Interval, text: str) -> TextError:
    from dpcalc.core.validation import MAX_COUNT_DIGITS

    requirement = f"{interval.requirement} and below 1e{MAX_COUNT_DIGITS}"
    return TextError(f"{name} must be {requirement}, got {shown(text)}", requirement=requirement, text=text)


def read_integer(name: str, text: str, interval: Interval | None = None) -> WrittenInt:
    """`text` read as an integer in `interval` (default: >= 1); "10000" and "1e4" are read, exactly."""
    from dpcalc.core.validation import MAX_COUNT, MAX_COUNT_DIGITS, POSITIVE_INTEGER

    interval = POSITIVE_INTEGER if interval is None else interval
    cleaned = decimal_text(text)
    if cleaned is None:
        raise not_a_number(name, interval.requirement, text)
    if _INTEGER.fullmatch(cleaned) and len(cleaned) <= MAX_COUNT_DIGITS + 1:
        value = int(cleaned)
    else:
        # scientific notation ("1e4", "2.5e20") is read exactly, not through a float
        from decimal import Decimal, InvalidOperation

        try:
            number = Decimal(cleaned)
        except InvalidOperation:  # an exponent beyond what a decimal holds (1e99999999999999999999)
            raise _too_large(name, interval, text) from None
        if not number.is_finite() or number != number.to_integral_value():
            raise TextError(f"{name} must be {interval.requirement}, got {shown(text)}", requirement=interval.requirement,
                            text=text) from None
        if number.adjusted() >= MAX_COUNT_DIGITS:  # before int(): 1e999999999 would not fit in memory
            raise _too_large(name, interval, text) from None
        value = int(number)
    if abs(value) >= MAX_COUNT:
        raise _too_large(name, interval, text)
    if not interval.contains(value):
        raise TextError(f"{name} must be {interval.requirement}, got {shown(text)}", requirement=interval.requirement,
                        text=text)
    return WrittenInt(value, text)
