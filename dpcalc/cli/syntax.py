"""How a list or range of numbers is written on the command line, before any option's range.

A list or range (`1,2,4`, `1:60:1`, or a list mixing both: `1:5:1,10,20`) is expanded into the texts of its values (`expand`), which the
option's own parser then reads one by one (dpcalc.cli.options), so a bad value gets the same
message as it would alone. Numbers are read in ASCII decimal notation only
(`core.text.decimal_text`, the one gate every numeric text passes).

A number written with digit-group commas (10,000) is not read as the list 10, 0: `refuse_digit_groups`
says to write 10000 (dpcalc.cli.options applies it to every option that sweeps).

Ranges use exact decimal arithmetic, so `0.1:0.5:0.1` is 0.1, 0.2, 0.3, 0.4, 0.5: the stop is
included when it lands on the grid of start + k step, and the step may be negative for a
falling range. Integer options take integer ranges only.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from dpcalc.cli.errors import InputError
from dpcalc.core.text import decimal_text, not_a_number

if TYPE_CHECKING:
    from decimal import Decimal

    from dpcalc.core.validation import Interval

# The largest number of rows (combinations) one sweep may have: beyond it the output is no
# longer a table anyone reads, and a typo such as 1:1e9:1 should fail at once, not run for hours.
MAX_ROWS = 10_000


# A whole number written with digit-group commas: 1 to 3 digits, then groups of exactly 3.
_DIGIT_GROUPS = re.compile(r"[1-9][0-9]{0,2}(?:,[0-9]{3})+")


def refuse_digit_groups(option: str, text: str, interval: Interval, *, sweeps: bool = True) -> None:
    """Refuse a list that reads as one number written with digit-group commas ("10,000", "1,000,000").

    Such a list is a grouped number when its items are 1-3 digits and then groups of exactly 3,
    the number lies in the option's range, and the items do not read as a sweep: a later item
    begins with 0 ("000", "062": no one writes a sweep value so) or the values do not rise or fall
    steadily. "64,128,256" and "512,256,128" stay sweeps; so does "1,500" (the values 1 and 500).
    `sweeps`: whether the option takes a list (the message then says how one is written).
    """
    cleaned = text.strip(" \t")
    if not _DIGIT_GROUPS.fullmatch(cleaned):
        return
    items = cleaned.split(",")
    values = [int(item) for item in items]
    steps = [later - earlier for earlier, later in zip(values, values[1:])]
    monotone = all(step > 0 for step in steps) or all(step < 0 for step in steps)
    grouped = int("".join(items))
    if (monotone and not any(item.startswith("0") for item in items[1:])) or not interval.contains(grouped):
        return
    lists = "; a list takes values like 10,20" if sweeps else ""
    raise InputError(f"{option}: write {grouped} (no digit-group commas){lists}, got {text}",
                     option=option, allowed=interval.requirement, got=text)


def expand(option: str, text: str, *, integer: bool = False, limit: int = MAX_ROWS,
           limit_text: str = f"a sweep takes at most {MAX_ROWS} rows") -> list[str]:
    """The value texts of a list or range: its items, each range expanded ([text] for one value).

    Items are returned as texts for the option's own parser (options.parse_number), which checks
    each against the option's range; only the sweep syntax is checked here. `limit` caps the
    number of values (`limit_text` says so in the error); --orders uses it with its own cap.
    """
    values: list[str] = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            raise InputError(f"{option}: empty item in the list {text!r}; separate values with single commas", option=option,
                             got=text)
        if ":" in item:
            values.extend(_expand_range(option, item, integer, limit, limit_text))
        else:
            values.append(item)
        if len(values) > limit:
            raise InputError(f"{option}: {text!r} has more than {limit} values; {limit_text}", option=option,
                             got=text)
    return values


def _expand_range(option: str, item: str, integer: bool, limit: int = MAX_ROWS,
                  limit_text: str = f"a sweep takes at most {MAX_ROWS} rows") -> list[str]:
    """The values of one range start:stop:step, exactly. Their number is worked out from start,
    stop and step (and refused past `limit`) before any value is made: 1:1e999999999:1 fails at once."""
    from decimal import Decimal, InvalidOperation  # exact steps; imported only for ranges

    parts = item.split(":")
    if len(parts) != 3 or not all(part.strip() for part in parts):
        raise InputError(f"{option}: a range is start:stop:step, got {item!r}", option=option, got=item)
    numbers = []
    for name, part in zip(("start", "stop", "step"), parts):
        cleaned = decimal_text(part)
        if cleaned is None:
            raise InputError(str(not_a_number(f"{option}: the range {name}", "a number", part.strip(),
                                              where=f" in {item!r}")), option=option, allowed="a number", got=item)
        try:
            number = Decimal(cleaned)
        except InvalidOperation:  # an exponent beyond a decimal's own (1e99999999999999999999)
            raise _out_of_size(option, name, part, item) from None
        if not number.is_finite():
            raise InputError(f"{option}: the range {name} must be finite, got {part.strip()!r} in {item!r}",
                             option=option, allowed="finite", got=item)
        if integer and number != number.to_integral_value():
            raise InputError(
                f"{option} takes integers: a range needs integer start, stop and step, got {item!r}",
                option=option, allowed="integer start, stop and step", got=item)
        numbers.append(number)
    start, stop, step = numbers
    if step == 0:
        raise InputError(f"{option}: the range step must not be 0, got {item!r}", option=option, got=item)
    if (stop > start and step < 0) or (stop < start and step > 0):
        direction = "rising" if step > 0 else "falling"
        raise InputError(
            f"{option}: the step {part_text(step)} never reaches {part_text(stop)} from {part_text(start)} "
            f"in {item!r} (a {direction} step needs stop {'>=' if step > 0 else '<='} start)", option=option, got=item)
    count = _range_size(start, stop, step, limit)
    if isinstance(count, str):
        raise InputError(f"{option}: the range {item!r} has {count} values; {limit_text}", option=option,
                         got=item)
    for name, part, number in zip(("start", "stop", "step"), parts, numbers):
        if number and not -_MAGNITUDE <= number.adjusted() <= _MAGNITUDE:
            raise _out_of_size(option, name, part, item)
    # Exactly: the values' digits lie between the largest magnitude and the finest unit written.
    units = [int(number.as_tuple().exponent) for number in numbers if number]  # finite: an int
    digits = max(number.adjusted() for number in numbers if number) - min(units) + len(str(count)) + 4
    exact = _context(max(digits, 28), traps=True)
    count = int(exact.divide_int(exact.subtract(stop, start), step)) + 1
    return [part_text(exact.fma(k, step, start)) for k in range(count)]


# A range's start, stop and step are 0 or within 1e-400 to 1e400 in size: beyond float64 and the
# largest count (1e300), no option takes such a value, and exact arithmetic on them would be long.
_MAGNITUDE = 400


def _out_of_size(option: str, name: str, part: str, item: str) -> InputError:
    return InputError(f"{option}: the range {name} must be 0 or between 1e-{_MAGNITUDE} and 1e{_MAGNITUDE} in size "
                      f"(beyond every option's range), got {part.strip()!r} in {item!r}", option=option, got=item)


def _context(precision: int, *, traps: bool):
    """A decimal context of `precision` digits and the widest exponent range; with `traps`, a
    rounded result raises (the exact arithmetic of a range's values)."""
    from decimal import MAX_EMAX, MIN_EMIN, Context, Inexact, Overflow, Underflow

    return Context(prec=precision, Emax=MAX_EMAX, Emin=MIN_EMIN,
                   traps=[Inexact, Overflow, Underflow] if traps else [])


def _range_size(start: Decimal, stop: Decimal, step: Decimal, limit: int) -> int | str:
    """The number of values of start:stop:step (stop included when on the grid), or, above `limit`,
    that number as text ("1000000000", "about 1e+999999999"). It is read off a 40-digit quotient,
    so that no astronomically large number is ever formed."""
    rough = _context(40, traps=False)
    quotient = rough.divide(rough.subtract(stop, start), step)  # >= 0: the direction is checked
    if not quotient.is_finite():
        return "more than 1e+999999999999999999"
    if quotient >= limit:
        if quotient.adjusted() < 18:
            return str(int(quotient) + 1)
        return f"about {quotient:.0e}"
    return int(quotient) + 1  # about: the range counts its values exactly once they are few


def part_text(number: Decimal) -> str:
    """A decimal as plain text ('0.3', '10', '0.0001'); scientific notation only when that is long."""
    if not number:
        return "0"
    if not -30 < number.adjusted() < 30:  # 1E+300: the option's parser reads it, or refuses it by its range
        return str(number.normalize(_context(len(number.as_tuple().digits), traps=False)))
    if number == number.to_integral_value() and abs(number) < 10**15:
        return str(int(number))
    text = format(number, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text if len(text) <= 24 else str(number.normalize(_context(len(number.as_tuple().digits), traps=False)))


