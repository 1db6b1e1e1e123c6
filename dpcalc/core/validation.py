"""Typed parameter errors and the intervals they are checked against.

The core raises `ParameterError` with the parameter's name, its allowed range and the value
received; the command line reuses the same intervals so that both say the same thing.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from dpcalc.core.record import Value


class ParameterError(ValueError):
    """A parameter outside its allowed range: names the parameter, the range and the value."""

    def __init__(self, name: str, requirement: str, received: object) -> None:
        self.name = name
        self.requirement = requirement
        self.received = received
        super().__init__(f"{name} must be {requirement}, got {received}")

    def worded(self, spell: Callable[[str], str]) -> str:
        """The message with the parameter named by `spell` (the command line: its option)."""
        return f"{spell(self.name)} must be {self.requirement}, got {self.received}"


class RunError(ParameterError):
    """Parameters of a run refused together, or one missing (`T` without `epochs`).

    `template` names each parameter by its keyword in braces ("{T} and {epochs} cannot be given
    together"); `values` fill the other fields (numbers as written, reasons). The message names
    the keywords as they are (the Python API); `worded(spell)` names them as a caller spells
    them (the command line: `--T`, `--epochs`). `name` is the first parameter named, `named`
    every one in order; `allowed` the requirement when one was given, else None.
    """

    def __init__(self, template: str, *, requirement: str | None = None, received: object = None,
                 **values: object) -> None:
        self.template = template
        self.values = values
        named: list[str] = []

        def as_keyword(name: str) -> str:
            named.append(name)
            return name

        message = self._spelled(as_keyword)
        super().__init__(named[0] if named else "", message if requirement is None else requirement, received)
        self.args = (message,)
        self.named = tuple(dict.fromkeys(named))
        self.allowed = requirement

    def worded(self, spell: Callable[[str], str]) -> str:
        return self._spelled(spell)

    def _spelled(self, spell: Callable[[str], str]) -> str:
        return self.template.format_map(_Spelled(spell, self.values))


class _Spelled(dict[str, object]):
    """The fields of a RunError's template: its values, and the parameters as `spell` names them."""

    def __init__(self, spell: Callable[[str], str], values: dict[str, object]) -> None:
        super().__init__(values)
        self.spell = spell

    def __missing__(self, key: str) -> str:
        return self.spell(key)


def conflict(first: str, second: str, hint: str = "") -> RunError:
    """Two parameters that cannot be given together: `first`, `second` and `hint` are templates
    ("{p}", "{n}/{batch_size}", "{solve} p")."""
    suffix = f"; {hint}" if hint else ""
    return RunError(f"{first} and {second} cannot be given together{suffix}")


class Interval(Value):
    """A real interval such as (0, 1] or [1, inf); `integer` restricts it to whole numbers."""

    low: float = -math.inf
    high: float = math.inf
    low_closed: bool = False
    high_closed: bool = False
    integer: bool = False

    def __str__(self) -> str:
        left = "[" if self.low_closed else "("
        right = "]" if self.high_closed else ")"
        return f"{left}{_format_bound(self.low)}, {_format_bound(self.high)}{right}"

    @property
    def requirement(self) -> str:
        """The phrase used in error messages, e.g. 'in (0, 1]' or 'an integer in [1, inf)'."""
        return f"an integer in {self}" if self.integer else f"in {self}"

    def contains(self, value: float) -> bool:
        """Whether `value` lies in the interval (and is whole, for an integer interval). An int
        of any size is compared exactly (math.isnan would overflow past 1e308)."""
        exact_int = isinstance(value, int)
        if not exact_int and math.isnan(value):
            return False
        if self.integer and not exact_int and not (math.isfinite(value) and value == int(value)):
            return False
        above = value >= self.low if self.low_closed else value > self.low
        below = value <= self.high if self.high_closed else value < self.high
        return above and below

    def check(self, name: str, value: float) -> float:
        """Return `value` when it lies in the interval, else raise `ParameterError`."""
        if not self.contains(value):
            raise ParameterError(name, self.requirement, value)
        return value


def _format_bound(value: float) -> str:
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:g}"


# Intervals shared by several modules.
PROBABILITY = Interval(0.0, 1.0, low_closed=True, high_closed=True)  # sampling probability p (0: nothing sampled)
OPEN_UNIT = Interval(0.0, 1.0)  # delta, a probability strictly between 0 and 1
POSITIVE = Interval(0.0, math.inf)  # sigma, mu > 0
NON_NEGATIVE = Interval(0.0, math.inf, low_closed=True)  # epsilon >= 0
POSITIVE_INTEGER = Interval(1.0, math.inf, low_closed=True, integer=True)  # steps T
# A false-positive rate (or kappa) that attack risk is read at: the TPR bounds use e^eps up to
# log(1 / FPR), which overflows float64 below about 6e-309; 1e-300 leaves room.
FALSE_POSITIVE_RATE = Interval(1e-300, 1.0, low_closed=True)

# Counts (steps, releases) at or above this are refused where they are read: no run has that
# many, floats overflow not far past it, and an exact integer of 10^(10^9) would take the memory.
MAX_COUNT_DIGITS = 300
MAX_COUNT = 10**MAX_COUNT_DIGITS


def large_delta_warnings(n: str | float | None, delta: float | None) -> list[str]:
    """A warning when delta >= 1/n for a dataset of n records (n users for user-level runs).

    A mechanism that publishes each record with probability delta is (0, delta)-DP, so such a
    delta allows leaking a record in expectation (Dwork, Roth 2014, Sec. 2.3).
    """
    if n is None or delta is None:
        return []
    size = int(float(n)) if isinstance(n, str) else int(n)
    if size < 1 or delta * size < 1.0:
        return []
    return [
        f"delta = {delta:g} is at least 1/n = 1/{size}: publishing each record with probability delta is "
        f"(0, delta)-DP, so this delta allows leaking about {delta * size:.3g} records in expectation "
        "(Dwork, Roth 2014, Sec. 2.3); choose delta much smaller than 1/n."
    ]
