"""Result types of the composition theorems (`_inverse_result` builds the inverse questions' one)
and the input checks they share."""

from __future__ import annotations

import math

from dpcalc.core.record import Value
from dpcalc.core.validation import NON_NEGATIVE, Interval, ParameterError

PER_MECHANISM_DELTA = Interval(0.0, 1.0, low_closed=True)  # delta of one mechanism, [0, 1)
# k: one optimal epsilon at k = 1e10 takes ~0.1 s (the window grows like sqrt(k)); an inverse
# question evaluates it ~10 times.
COMPOSITIONS = Interval(1.0, 1e10, low_closed=True, high_closed=True, integer=True)


class Bound(Value):
    """An (epsilon, delta) guarantee."""

    epsilon: float
    delta: float


class OptimalBound(Value):
    """The optimal (KOV) epsilon at `delta`.

    `epsilon` is an upper bound and `epsilon_lower` a lower bound of the true optimum;
    `tolerance` is their difference. `method` is "exact" (closed form per segment: the bounds
    differ only by the floating-point rounding margin, ~1e-11 relative) or "lattice"
    (heterogeneous lists with many distinct atoms, see `heterogeneous._lattice_optimal`).
    """

    epsilon: float
    delta: float
    epsilon_lower: float
    method: str = "exact"
    grid_step: float | None = None

    @property
    def tolerance(self) -> float:
        """epsilon - epsilon_lower: how far the reported optimum may be above the exact one
        (0 for the exact KOV walk; the lattice bound of docs/mathematics.md §5 otherwise)."""
        return 0.0 if self.epsilon == self.epsilon_lower else self.epsilon - self.epsilon_lower


class CompositionResult(Value):
    """The four composition theorems applied to the same mechanisms.

    `epsilons` and `deltas` are the per-mechanism parameters (one entry each when all k are
    identical). `best` names the theorem with the smallest epsilon among those that hold
    (the simplified form only when `simplified_valid`), all compared at `total_delta`: the
    given total delta, or sum delta_i + delta' (basic's own sum delta_i is smaller, and a
    guarantee at a smaller delta also holds at a larger one). `delta_prime` is None when the
    total delta was given; `not_applicable` names the theorems that cannot reach it (their
    epsilon is inf).
    """

    k: int
    epsilons: tuple[float, ...]
    deltas: tuple[float, ...]
    delta_prime: float | None
    basic: Bound
    advanced: Bound
    simplified: Bound
    simplified_valid: bool
    optimal: OptimalBound
    best: str
    warnings: tuple[str, ...] = ()
    total_delta: float | None = None
    not_applicable: tuple[str, ...] = ()


class InverseEntry(Value):
    """The answer of one theorem to an inverse question.

    `value` is max_k (an int) or max_eps_per_mechanism (a float); `epsilon` and `delta` are the
    total guarantee at that value (None when max_k is 0). A theorem that cannot reach the given
    total delta is not `applicable`: max_k 0 (or max_eps_per_mechanism None), epsilon inf.
    """

    value: float | None
    epsilon: float | None
    delta: float | None
    valid: bool = True
    applicable: bool = True


class InverseResult(Value):
    """The largest k (or per-mechanism epsilon) that keeps the total within `target_epsilon`."""

    question: str  # "max_k" or "max_eps_per_mechanism"
    target_epsilon: float
    epsilon: float | None  # the per-mechanism epsilon given (max_k)
    k: int | None  # the number of mechanisms given (max_eps_per_mechanism)
    delta: float
    delta_prime: float | None  # None when the total delta was given
    basic: InverseEntry
    advanced: InverseEntry
    simplified: InverseEntry
    optimal: InverseEntry
    best: str
    warnings: tuple[str, ...] = ()
    # The one total delta every answer holds at (None for max_k with delta > 0 and a slack
    # delta': each theorem's k then gives its own k delta).
    total_delta: float | None = None


def _inverse_result(
    question: str,
    target_epsilon: float,
    delta: float,
    entries: dict[str, InverseEntry],
    warnings: list[str],
    *,
    epsilon: float | None = None,
    k: int | None = None,
    delta_prime: float | None = None,
    total_delta: float | None = None,
) -> InverseResult:
    """The InverseResult of the four theorems' `entries`, naming the best of them."""
    return InverseResult(
        question=question,
        target_epsilon=target_epsilon,
        epsilon=epsilon,
        k=k,
        delta=delta,
        delta_prime=delta_prime,
        basic=entries["basic"],
        advanced=entries["advanced"],
        simplified=entries["simplified"],
        optimal=entries["optimal"],
        best=_inverse_best(entries),
        warnings=tuple(warnings),
        total_delta=total_delta,
    )


def _inverse_best(entries: dict[str, InverseEntry]) -> str:
    """The theorem with the largest answer among those that hold (valid and applicable)."""
    names = [name for name in entries if entries[name].valid and entries[name].applicable] or list(entries)
    return max(names, key=lambda name: entries[name].value or 0)


def _check_one_of(delta_prime: float | None, total_delta: float | None) -> None:
    if (delta_prime is None) == (total_delta is None):
        raise ValueError("give exactly one of delta_prime (the slack of the advanced theorems) and total_delta")


def _check_mechanism(epsilon: float, delta: float, suffix: str = "") -> None:
    NON_NEGATIVE.check(f"epsilon{suffix}", epsilon)
    if math.isinf(epsilon):
        raise ParameterError(f"epsilon{suffix}", "in [0, inf)", epsilon)
    PER_MECHANISM_DELTA.check(f"delta{suffix}", delta)


def _check_total_delta(total_delta: float, description: str) -> None:
    if not total_delta < 1.0:
        raise ParameterError(description, "below 1 (a total delta of 1 says nothing)", total_delta)
