"""The L2 sensitivity of a strategy matrix C under a participation schema: exact, or a certified upper bound.

A record changes the steps' gradient sums x in the rows of one pattern pi, each by a vector of
norm at most 1 (the clipping norm), so C x moves by C u with u zero outside pi, and

    sens^2 = max over pi, over u of sum_{i, j in pi} X[i, j] <u_i, u_j>,   X = C^T C.

Which of the following applies is decided in this order (docs/matrix-factorisation.md):

1. One participation: the largest squared column norm (Denisov et al. 2022, arXiv 2202.08312).
2. Columns of C whose steps are s or more apart are orthogonal (C has at most s bands, say): the
   cross terms vanish, and sens^2 is the largest sum of squared column norms over a pattern
   (Choquette-Choo et al. 2023, arXiv 2306.08153, Sec. 4; `participation.best_linear`). Exact.
3. X >= 0 on the pairs a pattern can hold: sens^2 = max over pi of sum_{i, j in pi} X[i, j], the
   maximum at u_i all equal (Choquette-Choo et al. 2023, arXiv 2211.06530, Sec. 2). When those
   entries do not increase down a diagonal nor along a row away from the diagonal, the pattern
   0, s, ..., (k - 1) s attains it (proved in the docs; for Toeplitz C with nonnegative,
   non-increasing coefficients, Kalinin and Lampert 2024, arXiv 2405.13763, Thm 2); otherwise,
   for few patterns, every pattern is evaluated. Exact.
4. Otherwise a certified upper bound: the same maxima over |X| (|<u_i, u_j>| <= 1), bounded by
   the smaller of the greedy pattern on the least monotone majorant of |X|, the row relaxation
   of arXiv 2306.08153 (each row's best pattern, then the best pattern of those row values) and,
   for Toeplitz C, the greedy pattern on its coefficients made nonnegative and non-increasing.

Every figure is rounded up by a bound on the floating-point error of C^T C and of the sums
(`_certified`), so the value is never below the sensitivity it states.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from dpcalc.core.mf.participation import FloatArray, Participation, best_linear, patterns_of_size
from dpcalc.core.mf.strategy import MATERIALISE_LIMIT, Strategy
from dpcalc.core.validation import RunError

SINGLE = ("one participation: the sensitivity is the largest column norm of C "
          "(Denisov et al. 2022, arXiv 2202.08312)")
ORTHOGONAL = ("columns of C for steps at least s apart are orthogonal (C has at most s bands), so the cross "
              "terms vanish: the squared sensitivity is the largest sum of squared column norms over a "
              "pattern (Choquette-Choo et al. 2023, arXiv 2306.08153), found by a dynamic program")
NONNEGATIVE = ("C^T C is nonnegative on the pairs of steps a pattern can hold, so the squared sensitivity is "
               "the largest sum of C^T C over a pattern's pairs (Choquette-Choo et al. 2023, arXiv 2211.06530)")
GREEDY = ("; those entries do not increase down a diagonal nor along a row away from the diagonal, so the "
          "pattern 0, s, ..., (k - 1) s attains it (docs/matrix-factorisation.md)")
TOEPLITZ_GREEDY = ("; the Toeplitz coefficients are nonnegative and non-increasing, so the pattern 0, s, ..., "
                   "(k - 1) s attains it (Kalinin and Lampert 2024, arXiv 2405.13763, Thm 2)")
ENUMERATED = "; every pattern was evaluated"
ABSOLUTE = ("an upper bound: the largest sum of |C^T C| over a pattern's pairs bounds the squared sensitivity "
            "(C^T C has negative entries on pairs a pattern can hold)")
RELAXED = ("an upper bound: the smallest of the greedy pattern on the least monotone majorant of C^T C's "
           "entries, the row relaxation (Choquette-Choo et al. 2023, arXiv 2306.08153) and, for Toeplitz C, "
           "the greedy pattern on nonnegative non-increasing coefficients above |c|")

# Evaluate every pattern when their entries sum to at most this many (patterns x size^2).
ENUMERATION_LIMIT = 2_000_000
# The row relaxation's dynamic program costs k passes over the n x n matrix; above this many
# entries visited, each row's k largest entries bound its best pattern instead.
RELAXATION_LIMIT = 40_000_000
_UNIT_ROUNDOFF = 2.0**-53


@dataclass(frozen=True)
class Sensitivity:
    """The L2 sensitivity of C under a participation schema, in units of the clipping norm.

    `value` is certified (never below the sensitivity it states, `_certified`); `exact` says
    whether it is the sensitivity itself (to that rounding, ~1e-12 relative) or an upper bound;
    `pattern` is a pattern attaining it, when known.
    """

    value: float
    exact: bool
    method: str
    theorem: str
    factorisation: str
    participation: str
    pattern: tuple[int, ...] | None = None

    @property
    def figure(self) -> Literal["exact", "upper bound"]:
        return "exact" if self.exact else "upper bound"


class _Result(Protocol):
    def __call__(self, squared: float, exact: bool, method: str, theorem: str,
                 pattern: tuple[int, ...] | None = None) -> Sensitivity: ...


def sensitivity(strategy: Strategy, participation: Participation) -> Sensitivity:
    """The sensitivity of `strategy` when a record takes part as `participation` allows."""
    if participation.steps != strategy.steps:
        raise RunError("the participation schema has {steps} = {schema} steps but the strategy matrix has "
                       "{matrix}: give one step per row of C", schema=participation.steps, matrix=strategy.steps)
    k, s = participation.participations, participation.min_separation
    norms = strategy.column_norms_squared()
    scale = k * k * float(norms.max())  # bounds the sum of |C^T C| over a pattern's k^2 pairs

    def result(squared: float, exact: bool, method: str, theorem: str,
               pattern: tuple[int, ...] | None = None) -> Sensitivity:
        return Sensitivity(_certified(squared, scale, strategy.steps, k), exact, method, theorem,
                           strategy.described, participation.described, pattern)

    if k == 1:
        best = int(np.argmax(norms))
        return result(float(norms[best]), True, "single participation", SINGLE, (best,))
    if strategy.bands <= s:
        return result(float(best_linear(norms, participation)), True, "orthogonal columns", ORTHOGONAL)
    toeplitz_bound = math.inf
    if strategy.coefficients is not None:
        c = strategy.coefficients
        if (c >= 0).all() and (np.diff(c) <= 0).all():
            return result(_toeplitz_greedy(c, participation), True, "greedy pattern", NONNEGATIVE + TOEPLITZ_GREEDY,
                          participation.greedy_pattern)
        # |c| raised to its running maximum from the right: nonnegative, non-increasing, >= |c|
        # entrywise, so its C^T C majorises |C^T C| and its greedy pattern bounds ours
        majorant = np.maximum.accumulate(np.abs(c)[::-1])[::-1]
        toeplitz_bound = _toeplitz_greedy(majorant, participation)
        if strategy.steps > MATERIALISE_LIMIT:
            return result(toeplitz_bound, False, "toeplitz majorant", RELAXED)
    return _dense(strategy.dense(), participation, toeplitz_bound, result)


def _dense(matrix: FloatArray, participation: Participation, toeplitz_bound: float, result: _Result) -> Sensitivity:
    """Cases 2 to 4 of the module docstring, on the materialised C."""
    k, s, n = participation.participations, participation.min_separation, participation.steps
    gram = matrix.T @ matrix
    far = _sheared(gram, s)  # the pairs i < j a pattern can hold (j - i >= s), and zeros
    if not far.any():
        return result(float(best_linear(np.diag(gram).copy(), participation)), True, "orthogonal columns",
                      ORTHOGONAL)
    # The rest as they are (X >= 0 there) or in absolute value (a bound); entries 0 < |i - j| < s
    # never meet in a pattern and are zeroed.
    nonnegative = bool((far >= 0).all())
    weights = gram if nonnegative else np.abs(gram, out=gram)
    if not nonnegative:
        np.abs(far, out=far)
    greedy, monotone = _greedy_on_majorant(np.diag(weights), far, participation)
    if monotone:
        theorem = NONNEGATIVE + GREEDY if nonnegative else ABSOLUTE + GREEDY
        return result(greedy, nonnegative, "greedy pattern", theorem, participation.greedy_pattern)
    del far
    for lag in range(1, s):
        weights.reshape(-1)[lag::n + 1][: n - lag] = 0.0
        weights.reshape(-1)[lag * n::n + 1] = 0.0
    if k == 2:
        value, pattern = _best_pair(weights, s)
        theorem = NONNEGATIVE + ENUMERATED if nonnegative else ABSOLUTE + ENUMERATED
        return result(value, nonnegative, "enumeration", theorem, pattern)
    if sum(math.comb(n - (m - 1) * (s - 1), m) * m * m for m in range(1, k + 1)) <= ENUMERATION_LIMIT:
        value, pattern = _enumerated(weights, participation)
        theorem = NONNEGATIVE + ENUMERATED if nonnegative else ABSOLUTE + ENUMERATED
        return result(value, nonnegative, "enumeration", theorem, pattern)
    if n * n * k <= RELAXATION_LIMIT:
        rows = best_linear(weights, participation)
    else:
        rows = np.partition(weights, n - k, axis=1)[:, n - k:].sum(axis=1)
    relaxed = float(best_linear(rows, participation))
    return result(min(greedy, relaxed, toeplitz_bound), False, "relaxation", RELAXED)


def _sheared(gram: FloatArray, s: int) -> FloatArray:
    """far[n - 1 - i, n - 1 - d] = gram[i, i + d] for d >= s, 0 past the last column: the entries a
    pattern's pairs can use, by row i and lag d, each axis reversed (so that a forward running
    maximum is a maximum over i' >= i and d' >= d). Row i of the padded matrix read from column
    i + s on is a strided view."""
    n = gram.shape[0]
    padded = np.zeros((n, 2 * n))
    padded[:, :n] = gram
    view = np.lib.stride_tricks.as_strided(padded[:, s:], shape=(n, n - s),
                                           strides=((2 * n + 1) * padded.itemsize, padded.itemsize))
    return np.ascontiguousarray(view[::-1, ::-1])


def _greedy_on_majorant(diagonal: FloatArray, far: FloatArray, participation: Participation) -> tuple[float, bool]:
    """The greedy pattern's sum on the least majorant of the weights (`diagonal`, and `far` as
    `_sheared` lays it out) that does not increase down a diagonal nor along a row away from the
    diagonal, and whether the weights are that majorant.

    In coordinates (i, d) for the entry at row i, column i + d, the majorant is the running
    maximum over i' >= i and d' >= d (d >= s; the diagonal d = 0 on its own). Its greedy sum
    bounds every pattern's sum on the weights (docs/matrix-factorisation.md) and equals the
    greedy pattern's own sum when nothing was raised.
    """
    k, s, n = participation.participations, participation.min_separation, participation.steps
    diagonal_majorant = np.maximum.accumulate(diagonal[::-1])[::-1]
    majorant = np.maximum.accumulate(far, axis=1)
    np.maximum.accumulate(majorant, axis=0, out=majorant)
    monotone = bool((diagonal_majorant == diagonal).all() and (majorant == far).all())
    # the greedy pair (a s, (a + gap) s) is at i = a s, d = gap s
    steps = np.arange(k) * s
    total = float(diagonal_majorant[steps].sum())
    for gap in range(1, k):
        total += 2.0 * float(majorant[n - 1 - steps[: k - gap], n - 1 - gap * s].sum())
    return total, monotone


def _enumerated(weights: FloatArray, participation: Participation) -> tuple[float, tuple[int, ...]]:
    """The largest sum of `weights` over a pattern's pairs, every pattern evaluated, and that pattern."""
    best, argbest = -math.inf, tuple[int, ...]()
    for size in range(1, participation.participations + 1):
        patterns = patterns_of_size(participation, size)
        if not len(patterns):
            break
        sums = weights[patterns[:, :, None], patterns[:, None, :]].sum(axis=(1, 2))
        top = int(np.argmax(sums))
        if sums[top] > best:
            best, argbest = float(sums[top]), tuple(int(step) for step in patterns[top])
    return best, argbest


def _best_pair(weights: FloatArray, s: int) -> tuple[float, tuple[int, ...]]:
    """The largest sum of `weights` (>= 0) over a pattern of at most two steps at least s apart:
    w[i, i] + w[j, j] + 2 w[i, j] over j - i >= s, each pair evaluated at once (O(n^2))."""
    diagonal = np.diag(weights)
    pairs = np.triu(2.0 * weights + diagonal[:, None] + diagonal[None, :], s)
    i, j = np.unravel_index(int(np.argmax(pairs)), pairs.shape)
    single = int(np.argmax(diagonal))
    if diagonal[single] >= pairs[i, j]:
        return float(diagonal[single]), (single,)
    return float(pairs[i, j]), (int(i), int(j))


def _toeplitz_greedy(coefficients: FloatArray, participation: Participation) -> float:
    """||C 1_g||^2 for the Toeplitz C of `coefficients` and the greedy pattern g = 0, s, ..., (k - 1) s:
    the sum of C^T C over g's pairs, as the squared norm of the sum of g's columns."""
    n, total = participation.steps, np.zeros(participation.steps)
    for start in participation.greedy_pattern:
        width = min(coefficients.size, n - start)
        total[start:start + width] += coefficients[:width]
    return float(total @ total)


def _certified(squared: float, scale: float, steps: int, participations: int) -> float:
    """sqrt(squared) rounded up past the floating-point error of its computation.

    Each computed entry of C^T C is off by at most gamma_n ||c_i|| ||c_j|| <= gamma_n max ||c||^2
    (Higham 2002, Sec. 3.5), and the figure sums at most k^2 of them (`scale` = k^2 max ||c||^2);
    the sums themselves (of at most n + k^2 terms, nonnegative) are off by at most
    (n + k^2) u times their value. Twice both is added before the square root, which is rounded up.
    """
    u = _UNIT_ROUNDOFF
    margin = 2.0 * u * ((steps + 2) * scale + (steps + participations**2) * squared)
    return math.nextafter(math.sqrt(squared + margin), math.inf)
