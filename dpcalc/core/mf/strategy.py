"""The strategy matrix C of a matrix mechanism: from an array, or from banded Toeplitz coefficients.

C is n x n and lower-triangular (step i's release mixes the gradients of steps up to i; Denisov
et al. 2022, arXiv 2202.08312), with finite entries and at least one nonzero entry. A banded
Toeplitz C has C[i, j] = c[i - j] for 0 <= i - j < len(c) and 0 elsewhere (the BandMF strategies
of Choquette-Choo et al. 2023, arXiv 2306.08153, and McKenna 2024, arXiv 2405.15913); it is kept
as its coefficients and materialised only when a computation needs the whole matrix.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dpcalc.core.validation import POSITIVE_INTEGER, ParameterError

FloatArray = npt.NDArray[np.float64]

# Toeplitz strategies up to this size are materialised when no structured formula applies
# (8 * 4096^2 bytes = 128 MiB for C, as much again for C^T C); larger ones get the structured
# upper bound alone.
MATERIALISE_LIMIT = 4096


@dataclass(frozen=True, eq=False)
class Strategy:
    """A lower-triangular strategy matrix of `steps` rows: `matrix`, or Toeplitz `coefficients`;
    `bands` diagonals from the main one down hold its nonzero entries (1: diagonal)."""

    steps: int
    bands: int
    matrix: FloatArray | None = None
    coefficients: FloatArray | None = None

    @property
    def described(self) -> str:
        """The factorisation in words, for results."""
        n, bands = self.steps, f"{self.bands} band{'s' if self.bands != 1 else ''}"
        if self.coefficients is not None:
            return f"banded Toeplitz strategy matrix C ({n} x {n}, {bands})"
        return f"lower-triangular strategy matrix C ({n} x {n}, {bands})"

    def dense(self) -> FloatArray:
        """C as an n x n array (a Toeplitz strategy materialised)."""
        if self.matrix is not None:
            return self.matrix
        assert self.coefficients is not None
        n, c = self.steps, self.coefficients
        lags = np.subtract.outer(np.arange(n), np.arange(n))
        padded = np.concatenate([c, np.zeros(1)])
        inside = (lags >= 0) & (lags < c.size)
        return np.where(inside, padded[np.clip(lags, 0, c.size)], 0.0)

    def column_norms_squared(self) -> FloatArray:
        """||C[:, j]||^2 for each step j; for a Toeplitz C, the first n - j coefficients' squares."""
        if self.matrix is not None:
            norms: FloatArray = np.einsum("ij,ij->j", self.matrix, self.matrix)
            return norms
        assert self.coefficients is not None
        totals = np.cumsum(self.coefficients**2)
        kept = np.minimum(self.coefficients.size, self.steps - np.arange(self.steps))
        squares: FloatArray = totals[kept - 1]
        return squares


def strategy_matrix(matrix: npt.ArrayLike) -> Strategy:
    """The strategy of a square, lower-triangular array of finite numbers with a nonzero entry."""
    requirement = "a square lower-triangular matrix of finite numbers"
    try:
        array = np.array(matrix, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ParameterError("strategy", requirement, f"entries that are not numbers ({error})") from None
    if array.ndim != 2 or array.shape[0] != array.shape[1] or array.size == 0:
        raise ParameterError("strategy", requirement, f"an array of shape {array.shape}")
    if not np.isfinite(array).all():
        row, column = np.argwhere(~np.isfinite(array))[0]
        raise ParameterError("strategy", requirement, f"{float(array[row, column])!r} at row {row + 1}, column {column + 1}")
    above = np.argwhere(np.triu(array, 1) != 0)
    if above.size:
        row, column = above[0]
        raise ParameterError("strategy", "lower-triangular (every entry above the diagonal 0)",
                             f"{float(array[row, column])!r} at row {row + 1}, column {column + 1}")
    if not array.any():
        raise ParameterError("strategy", "a matrix with a nonzero entry", "a zero matrix")
    array.setflags(write=False)
    return Strategy(steps=array.shape[0], bands=_bands(array), matrix=array)


def _bands(array: FloatArray) -> int:
    """How many diagonals from the main one down hold a nonzero entry (1: diagonal): one more
    than the largest i - j over the last nonzero entry i of each nonzero column j."""
    nonzero = array != 0
    n = array.shape[0]
    last = n - 1 - np.argmax(nonzero[::-1], axis=0)
    used = nonzero.any(axis=0)
    return int((last - np.arange(n))[used].max()) + 1


def read_strategy(path: str | os.PathLike[str]) -> Strategy:
    """The strategy matrix in a `.npy` file (numpy's format, no pickled objects) or a text file of
    comma-separated rows (`.csv`, any other name)."""
    name = os.fspath(path)
    try:
        if name.endswith(".npy"):
            array = np.load(name, allow_pickle=False)
        else:
            array = np.loadtxt(name, delimiter=",", dtype=np.float64, ndmin=2)
    except OSError as error:
        raise ParameterError("strategy", "a readable .npy file or CSV file", f"{name!r} ({error.strerror or error})") from None
    except ValueError as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ParameterError("strategy", "a .npy file or CSV file of numbers", f"{name!r} ({reason})") from None
    return strategy_matrix(array)


def toeplitz_strategy(coefficients: Sequence[float] | npt.ArrayLike, steps: int) -> Strategy:
    """The banded lower-triangular Toeplitz strategy with C[i, j] = c[i - j] on `steps` steps."""
    POSITIVE_INTEGER.check("steps", steps)
    requirement = f"finite numbers, at most {steps} of them (one per step), not all 0"
    try:
        c = np.array(coefficients, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as error:
        raise ParameterError("coefficients", requirement, f"entries that are not numbers ({error})") from None
    if c.size == 0 or c.size > steps or not np.isfinite(c).all() or not c.any():
        shown = ", ".join(f"{value:g}" for value in c[:8]) + (", ..." if c.size > 8 else "")
        raise ParameterError("coefficients", requirement, f"{c.size} coefficients ({shown})")
    c = c[: int(np.flatnonzero(c)[-1]) + 1]  # trailing zeros are no bands
    c.setflags(write=False)
    return Strategy(steps=int(steps), bands=c.size, coefficients=c)
