"""Small numpy helpers shared across the accountants (numpy only).

`np.unique` imports numpy.ma (about 7 ms of start-up, to check for a masked array) the first
time it is called; the commands that need distinct sorted values use these instead.
"""

from __future__ import annotations

import numpy as np


def sorted_distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values in increasing order (`np.unique` of values without NaN). Neighbours in
    sorted order are compared, not subtracted: inf - inf would warn."""
    ordered = np.sort(np.asarray(values))
    kept: np.ndarray = ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))] if len(ordered) else ordered
    return kept


def first_of_distinct(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values in increasing order, the index of each one's first occurrence): what
    `np.unique(values, return_index=True)` returns, for values without NaN."""
    values = np.asarray(values)
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    kept = np.concatenate(([True], ordered[1:] != ordered[:-1])) if len(ordered) else np.zeros(0, dtype=bool)
    return ordered[kept], order[kept]
