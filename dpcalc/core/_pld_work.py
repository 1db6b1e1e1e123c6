"""The PLD accountant's deterministic work limit.

A result must be a function of its inputs alone: the same command gives the same numbers, bit
for bit, on a busy machine and an idle one. So the grid computation is bounded by a count of
the work it does, never by the clock. Work is counted in "bin operations":

- an FFT convolution of length n costs n log2(n) (the FFT's own count, up to a constant);
  a direct convolution of lengths a and b costs a b;
- discretising one step on n grid points costs `DISCRETISE_COST` per point (each point needs
  several normal-CDF evaluations in log space). The weight is a rough one: with it, the cases
  that reach the work limit run at 1.5e8 to 3e8 bin operations a second on one core of the
  2026 Xeon the benchmarks name (benchmarks/pld_grid.py prints work and time per case).

`limited(units)` opens a budget; `charge(units)` spends from the innermost open budget and
raises `WorkLimitReached` once it is exhausted. Outside any budget `charge` only counts (the
tests use `Meter.used` to measure the work of a call). `WorkLimitReached` is an
ArithmeticError, so the accountant's guards treat it like any failure of the grid, and the
messages name the limit by its count of bin operations, which does not depend on the machine.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

# Cost of discretising one grid point, in bin operations (see the module docstring).
DISCRETISE_COST = 64.0


class WorkLimitReached(ArithmeticError):
    """The grid computation spent its work limit."""


@dataclass
class Meter:
    """Work spent (`used`) against a `limit`, both in bin operations."""

    limit: float
    used: float = 0.0


_open: list[Meter] = []


@contextmanager
def limited(units: float) -> Iterator[Meter]:
    """A work budget of `units` bin operations for the computation inside the block."""
    meter = Meter(float(units))
    _open.append(meter)
    try:
        yield meter
    finally:
        _open.remove(meter)


@contextmanager
def guarded(units: float) -> Iterator[Meter]:
    """The grid computation's one guard: a work budget of `units`, and floating-point
    exceptions raised rather than warned about (every place where an infinity or a zero is
    intended is wrapped locally in np.errstate), so that an overflow anywhere, or the work
    limit, ends the computation and the caller falls back to bounds that are sound."""
    with limited(units) as meter, np.errstate(over="raise", divide="raise", invalid="raise", under="ignore"):
        yield meter


def charge(units: float) -> None:
    """Spend `units` from every open budget; raise WorkLimitReached when one is exhausted."""
    for meter in _open:
        meter.used += units
    for meter in _open:
        if meter.used > meter.limit:
            raise WorkLimitReached(f"work limit of {meter.limit:.3g} bin operations reached")


def fft_cost(n_fft: int) -> float:
    """The work of one FFT convolution of length n_fft."""
    return n_fft * math.log2(max(n_fft, 2))
