"""The participation schema of a matrix mechanism, and the dynamic programs over its patterns.

A record takes part in at most k of the n steps, any two of them at least s steps apart: the
"b-min-sep participation" of Choquette-Choo et al. 2023 (arXiv 2306.08153, Sec. 2) with b = s.
The fixed epochs of Choquette-Choo et al. 2023 (arXiv 2211.06530), where a record's steps are
exactly one epoch of s steps apart, are patterns of this schema, so a sensitivity under it bounds
theirs. A pattern is the set of steps one record takes part in (0-based).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import numpy.typing as npt

from dpcalc.core.validation import POSITIVE_INTEGER, ParameterError, RunError

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Participation:
    """At most `participations` (k) of `steps` (n) steps, any two at least `min_separation` (s) apart."""

    participations: int
    min_separation: int
    steps: int

    def __post_init__(self) -> None:
        for name in ("participations", "min_separation", "steps"):
            POSITIVE_INTEGER.check(name, getattr(self, name))
            object.__setattr__(self, name, int(getattr(self, name)))
        k, s, n = self.participations, self.min_separation, self.steps
        if s > n:
            raise ParameterError("min_separation", f"an integer in [1, {n}] (at most the number of steps)", s)
        if (k - 1) * s >= n:
            raise RunError(
                "{participations} = {k} participations at least {min_separation} = {s} steps apart do not fit "
                "in {steps} = {n} steps: they need (k - 1) s < n; lower {participations} or {min_separation}",
                k=k, s=s, n=n,
            )

    @property
    def described(self) -> str:
        """The schema in words, for results."""
        k, s, n = self.participations, self.min_separation, self.steps
        if k == 1:
            return f"one participation in {n} steps"
        return f"at most {k} participations at least {s} step{'s' if s != 1 else ''} apart, in {n} steps"

    @property
    def greedy_pattern(self) -> tuple[int, ...]:
        """The earliest pattern of k steps exactly s apart: 0, s, ..., (k - 1) s."""
        return tuple(range(0, self.participations * self.min_separation, self.min_separation))

    def pattern_count(self) -> int:
        """How many non-empty patterns the schema allows: m steps with gaps >= s among n are the
        m-subsets of n - (m - 1)(s - 1) slots (close each gap by s - 1), summed over m <= k."""
        n, s = self.steps, self.min_separation
        return sum(math.comb(n - (m - 1) * (s - 1), m) for m in range(1, self.participations + 1))


def patterns_of_size(participation: Participation, size: int) -> IntArray:
    """Every pattern of exactly `size` steps, one a row (the bijection of `pattern_count`)."""
    n, s = participation.steps, participation.min_separation
    slots = n - (size - 1) * (s - 1)
    if slots < size:
        return np.empty((0, size), dtype=np.int64)
    chosen = np.array(list(combinations(range(slots), size)), dtype=np.int64).reshape(-1, size)
    return chosen + (s - 1) * np.arange(size, dtype=np.int64)


def best_linear(weights: FloatArray, participation: Participation) -> FloatArray:
    """max over patterns pi of sum_{i in pi} weights[..., i], for each row of `weights` (last axis: steps).

    The dynamic program of Choquette-Choo et al. 2023 (arXiv 2306.08153, Algorithm 3), run left
    to right: after round m, best[..., i] is the largest sum of at most m weights among steps 0..i
    at least s apart, either without step i (best[..., i - 1]) or with it as the last one
    (weights[..., i] plus the previous round's best among steps 0..i - s). k rounds of a running
    maximum over the last axis: O(k n) a row, vectorised over the rows. The empty pattern (0)
    is allowed, so negative weights are never forced in.
    """
    s = participation.min_separation
    best = np.zeros_like(weights)
    candidate = np.empty_like(weights)
    for _ in range(participation.participations):
        np.copyto(candidate, weights)
        candidate[..., s:] += best[..., :-s]
        np.maximum(candidate, best, out=candidate)
        np.maximum.accumulate(candidate, axis=-1, out=best)
    return np.maximum(best[..., -1], 0.0)
