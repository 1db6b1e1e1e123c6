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

`limited(units)` opens a budget; `charge(units)` spends from every open budget and raises
`WorkLimitReached` once one is exhausted. Outside any budget `charge` only counts (the tests
use `Meter.used` to measure the work of a call). `WorkLimitReached` is an ArithmeticError, so
the guard treats it like any failure of the grid, and the messages name the limit by its count
of bin operations, which does not depend on the machine.

Memory is bounded the same way, by counts decided from the inputs alone: the accountant's
grids by their bins (`accountant.MAX_BINS`), the lattice convolutions of random allocation by
their atoms (`MAX_ATOMS`, `check_atoms`). An input over a count takes the same path on every
machine (the closed forms, with a warning naming the limit), whatever memory is free.

`guard(units)` is the one guard every grid computation runs under (docs/pld-soundness.md, S7):
a work budget, floating-point exceptions raised rather than warned about, and any failure
(overflow, the work or a size limit, a failed sanity check) recorded as a reason instead of
propagating, so that the caller falls back to bounds that are sound whatever the inputs. A
MemoryError is not such a failure: which inputs meet one depends on the machine, so it
propagates (the command ends with an error, never with another method's figure).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from dpcalc.core.record import Mutable

# Cost of discretising one grid point, in bin operations (see the module docstring).
DISCRETISE_COST = 64.0
# Work limit of one accounting, in bin operations. It is a count, not a clock, so a result never
# depends on the machine's speed or load. The bin limits bound the work of one grid already;
# this bounds the attempts' total. Past it the last completed attempt is reported, or the
# closed-form bounds. 1e9 is about 4 s on one core of a 2026 Xeon; every case of the 100-case
# grid at the default accuracy but p = 1e-4, sigma = 0.8, T = 1e6 needs less than 7e8 (measured).
WORK_LIMIT = 1e9


# The most atoms (entries of one lattice convolution) a random-allocation pair may take
# (`pairs.lattice_sums.fft_length`): peak memory grows by about 300 bytes an atom (the atoms'
# arrays and the tilted FFTs), so 2^20 stays near 300 MiB. Every allocation run of the tests and
# benchmarks needs at most 80000 (the design card); n = 1e6, batch size 10 (1e5 steps an epoch,
# sigma 1) would need 6.7e6, 2 GiB.
MAX_ATOMS = 1 << 20


class WorkLimitReached(ArithmeticError):
    """The grid computation spent its work limit."""


class SizeLimitReached(ArithmeticError):
    """A computation would exceed a size limit counted from the inputs (its message names it)."""


def check_atoms(count: int, what: str) -> None:
    """Raise SizeLimitReached when `what` needs more than MAX_ATOMS atoms."""
    if count > MAX_ATOMS:
        raise SizeLimitReached(f"{what} needs {count} atoms, more than its size limit of {MAX_ATOMS}")


class Meter(Mutable):
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


class Guard(Mutable):
    """How a guarded grid computation ended: `failure` is None when it finished, else why not."""

    limit: float
    failure: str | None = None


def limit_reason(units: float) -> str:
    """The message that names a work limit of `units` bin operations."""
    return f"the grid computation reached its work limit of {units:.3g} bin operations"


@contextmanager
def guard(units: float | None = None) -> Iterator[Guard]:
    """Run the block as a grid computation: a work budget of `units` (default WORK_LIMIT, read
    at the call), floating-point exceptions
    raised (every place where an infinity or a zero is intended is wrapped locally in
    np.errstate), and a failure recorded in `Guard.failure` rather than raised.

    An overflow anywhere, a failed sanity check (ValueError), the work limit or a size limit
    ends the block; the caller reads `failure` and falls back to bounds that are sound. A
    MemoryError propagates: whether it happens depends on the machine, not on the inputs.
    """
    if units is None:
        units = WORK_LIMIT
    outcome = Guard(float(units))
    try:
        with limited(units), np.errstate(over="raise", divide="raise", invalid="raise", under="ignore"):
            yield outcome
    except WorkLimitReached:
        outcome.failure = limit_reason(units)
    except SizeLimitReached as exc:
        outcome.failure = str(exc)
    except (ArithmeticError, ValueError) as exc:
        outcome.failure = f"the grid computation failed ({type(exc).__name__})"


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
