"""The grids of candidate values a calibration searches: decimals of fixed significant digits, integers.

sigma and p are searched on a decimal grid (`DecimalGrid`), T, epochs and the batch size on
the integers (`IntegerGrid`); the answer is always a grid value, rounded toward privacy.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal


class DecimalGrid:
    """Decimals with a fixed number of significant digits, within [low, high].

    digits = ceil(-log10(precision)) + 2, so that neighbours are at most precision / 10 apart
    (relative): 6 digits at the default 1e-4, e.g. 1.04908, 1.04909, ..., 9.99999, 10.0000.
    """

    integer = False

    def __init__(self, precision: float, low: Decimal, high: Decimal) -> None:
        self.digits = max(1, math.ceil(-math.log10(precision) - 1e-9)) + 2
        self.low, self.high = low, high

    def _quantum(self, value: Decimal) -> Decimal:
        return Decimal(1).scaleb(value.adjusted() - self.digits + 1)

    def _round(self, x: float, rounding: str) -> Decimal:
        if x <= float(self.low):
            return self.low
        if x >= float(self.high):
            return self.high
        value = Decimal(x)
        return min(max(value.quantize(self._quantum(value), rounding=rounding), self.low), self.high)

    def up(self, x: float) -> Decimal:
        """The smallest grid value >= x (clamped to the range): sigma is only rounded up
        (dpcalc.core.calibrate, "Conservative by construction")."""
        return self._round(x, ROUND_CEILING)

    def down(self, x: float) -> Decimal:
        """The largest grid value <= x (clamped to the range): p is only rounded down
        (dpcalc.core.calibrate, "Conservative by construction")."""
        return self._round(x, ROUND_FLOOR)

    def above(self, value: Decimal) -> Decimal:
        """The next grid value above `value` (a grid value)."""
        return min(value + self._quantum(value), self.high)

    def below(self, value: Decimal) -> Decimal:
        """The next grid value below `value` (a grid value); 9.9999 below 10.000."""
        step = self._quantum(value)
        candidate = value - step
        if candidate.adjusted() < value.adjusted():
            candidate = value - step / 10
        return max(candidate, self.low)


class IntegerGrid:
    """The integers in [low, high]."""

    integer = True

    def __init__(self, low: int, high: int) -> None:
        self.low, self.high = low, high

    def up(self, x: float) -> int:
        """The smallest integer >= x in [low, high] (the high end for +inf, the low end for -inf)."""
        return int(min(max(math.ceil(x), self.low), self.high)) if math.isfinite(x) else (self.high if x > 0 else self.low)

    def down(self, x: float) -> int:
        """The largest integer <= x in [low, high]: T, epochs and the batch size are only rounded down
        (dpcalc.core.calibrate, "Conservative by construction")."""
        return int(min(max(math.floor(x), self.low), self.high)) if math.isfinite(x) else (self.high if x > 0 else self.low)

    def above(self, value: int) -> int:
        """value + 1, at most high."""
        return min(value + 1, self.high)

    def below(self, value: int) -> int:
        """value - 1, at least low."""
        return max(value - 1, self.low)


# A grid of either kind (`integer` tells them apart), and a value on one.
Grid = DecimalGrid | IntegerGrid
Value = Decimal | int
