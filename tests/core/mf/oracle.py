"""An independent brute force over participation patterns, the oracle of the sensitivity tests.

For a pattern pi and per-step contributions u_i of norm at most 1, ||C u||^2 is
sum_{i, j in pi} X[i, j] <u_i, u_j> with X = C^T C. Two brackets of the largest value:
- below: u_i = +-1 (scalar contributions, every sign pattern), which any dimension can realise;
- above: sum_{i, j in pi} |X[i, j]|, since |<u_i, u_j>| <= 1.
They meet when X is nonnegative on the pairs a pattern holds (and when the cross terms vanish).
"""

from __future__ import annotations

import itertools

import numpy as np


def patterns(n: int, k: int, s: int):
    """Every non-empty set of at most k of the steps 0..n-1, any two at least s apart."""
    for size in range(1, k + 1):
        for pattern in itertools.combinations(range(n), size):
            if all(b - a >= s for a, b in zip(pattern, pattern[1:])):
                yield pattern


def brackets(matrix: np.ndarray, k: int, s: int) -> tuple[float, float]:
    """(lower, upper) brackets of the squared sensitivity, every pattern and sign pattern tried."""
    gram = matrix.T @ matrix
    lower = upper = 0.0
    for pattern in patterns(matrix.shape[0], k, s):
        block = gram[np.ix_(pattern, pattern)]
        upper = max(upper, float(np.abs(block).sum()))
        signs = np.array([(1.0,) + rest for rest in itertools.product((1.0, -1.0), repeat=len(pattern) - 1)])
        lower = max(lower, float(np.einsum("si,ij,sj->s", signs, block, signs).max()))
    return lower, upper
