"""Composition of (epsilon, delta)-DP mechanisms: basic, advanced, simplified and optimal.

Sources:
- Basic composition: Dwork, Roth, "The Algorithmic Foundations of Differential Privacy"
  (2014), "DR" below, Thm 3.16: k mechanisms, each (eps, delta) -> (k eps, k delta).
- Advanced composition: Dwork, Rothblum, Vadhan, "Boosting and Differential Privacy"
  (FOCS 2010), "DRV" below, Thm III.3; DR Thm 3.20: for every delta' > 0,
  (eps sqrt(2k ln(1/delta')) + k eps (e^eps - 1), k delta + delta'). Its heterogeneous form
  (the same martingale argument, one term per mechanism):
  (sqrt(2 ln(1/delta') sum eps_i^2) + sum eps_i (e^eps_i - 1), sum delta_i + delta').
- The simplified form eps' = 2 eps sqrt(2k ln(1/delta')): DR Cor. 3.21, which holds only for
  eps' < 1.
- Optimal composition: Kairouz, Oh, Viswanath, "The Composition Theorem for Differential
  Privacy" (ICML 2015, arXiv 1311.0776), "KOV" below, Thm 3.3 and Thm 3.5: the k-fold
  composition of (eps_i, delta_i)-DP mechanisms is dominated by that of the randomized-response
  pairs with the same parameters, and is exactly
  (eps_g, 1 - prod(1 - delta_i) (1 - delta_RR(eps_g)))-DP, delta_RR the privacy profile of the
  composed randomized responses.

At a fixed total delta D (`total_delta`, instead of a slack delta'), every theorem is stated at
that one D: basic when sum delta_i <= D, advanced and simplified with delta' = D - sum delta_i
(> 0), and optimal with delta_RR = 1 - (1 - D) / prod(1 - delta_i) (>= 0). A theorem that cannot
reach D is not applicable (epsilon inf). These conditions are decided in exact arithmetic on the
decimal values of the inputs (`_slack`), so no rounding puts a theorem on the wrong side: with
delta = 0.01, 50 mechanisms reach D = 0.5 under basic composition, and with delta = 1e-6, 100
mechanisms leave the advanced theorem no delta' > 0 at D = 1e-4.

The optimal epsilon is computed from the privacy-loss distribution of the composed randomized
responses (Koskela, Jalko, Honkela, AISTATS 2020; Gopi, Lee, Wutschitz, NeurIPS 2021): with
atoms of loss L_j and probability P_j under the first distribution,

    delta_RR(eps_g) = sum_{L_j > eps_g} P_j (1 - e^(eps_g - L_j)) = A(eps_g) - e^eps_g B(eps_g),

A the P-mass and B the Q-mass (Q_j = P_j e^(-L_j)) of the atoms above eps_g. Between two
consecutive atoms A and B are constant, so delta_RR(eps_g) = target is solved in closed form,
eps_g = log(A - target) - log B, once the atoms are walked in decreasing order of loss until the
segment that holds the answer (`_solve_profile`). For k identical mechanisms the atoms are
L_l = (k - 2l) eps with binomial probabilities (KOV Thm 3.3; docs/mathematics.md §5):

    delta_RR(eps_g) = sum_l C(k, l) (e^((k-l) eps) - e^(eps_g + l eps))_+ / (1 + e^eps)^k,

and only the atoms within a window around the binomial mode carry mass above float64
resolution; the mass below the window is bounded by a Chernoff bound and counted at +inf
(pessimistically), so one optimal epsilon costs O(sqrt(k)) terms. k = 1e6 takes a few
milliseconds in pure Python; no numpy is imported for identical mechanisms.

Different mechanisms (heterogeneous lists) are composed exactly, atom by atom, while the
number of composed atoms is small (`EXACT_ATOM_LIMIT`); beyond it they are composed on a
lattice with numpy (`_lattice_optimal`): the atoms of each group of equal eps rounded up to the
lattice for a certified upper bound, convolved exactly, and a lower bound J h below it (J
groups, h the lattice step); their difference is reported as the tolerance.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dpcalc.core.special import find_root, log_add, log_sub
from dpcalc.core.validation import NON_NEGATIVE, OPEN_UNIT, Interval, ParameterError

if TYPE_CHECKING:
    from fractions import Fraction

PER_MECHANISM_DELTA = Interval(0.0, 1.0, low_closed=True)  # delta of one mechanism, [0, 1)
# k: one optimal epsilon at k = 1e10 takes ~0.1 s (the window grows like sqrt(k)); an inverse
# question evaluates it ~10 times.
COMPOSITIONS = Interval(1.0, 1e10, low_closed=True, high_closed=True, integer=True)

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)

# Mass below the window of a binomial is bounded by e^(-TAIL_MARGIN) times the target delta:
# 40 nats (a factor 4e-18) is below float64 resolution of any delta it is added to.
_TAIL_MARGIN = 40.0

# The optimal epsilon is raised by this relative amount so that floating-point rounding cannot
# leave it below the exact optimum: against mpmath (80 digits) the unrounded value is within
# 5e-13 relative for k up to 5000 and within 1e-13 at k = 1e6 (tests/core/test_composition.py).
_ROUNDING_MARGIN = 4e-12

# Heterogeneous lists whose composed randomized responses have at most this many atoms
# are composed exactly in pure Python (a list of up to 14 distinct values, or a few distinct
# values repeated); larger ones go to the lattice (numpy).
EXACT_ATOM_LIMIT = 2**14

# Lattice composition: points per unit of total work; the grid is chosen so that
# (lattice points) x (number of atoms convolved) stays near this many multiply-adds,
# which takes about half a second with numpy, and within [2^12, 2^20] points.
_LATTICE_WORK = 2**27
_LATTICE_POINTS_MIN = 2**12
_LATTICE_POINTS_MAX = 2**20

# The largest k the inverse question (max_k) searches up to; beyond it the answer is reported
# as at least this many with a warning.
MAX_K_SEARCHED = 10**10


@dataclass(frozen=True)
class Bound:
    """An (epsilon, delta) guarantee."""

    epsilon: float
    delta: float


@dataclass(frozen=True)
class OptimalBound:
    """The optimal (KOV) epsilon at `delta`.

    `epsilon` is an upper bound and `epsilon_lower` a lower bound of the true optimum;
    `tolerance` is their difference. `method` is "exact" (closed form per segment: the bounds
    differ only by the floating-point rounding margin, ~1e-11 relative) or "lattice"
    (heterogeneous lists with many distinct atoms, see `_lattice_optimal`).
    """

    epsilon: float
    delta: float
    epsilon_lower: float
    method: str = "exact"
    grid_step: float | None = None

    @property
    def tolerance(self) -> float:
        return 0.0 if self.epsilon == self.epsilon_lower else self.epsilon - self.epsilon_lower


@dataclass(frozen=True)
class CompositionResult:
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


@dataclass(frozen=True)
class InverseEntry:
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


@dataclass(frozen=True)
class InverseResult:
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


# ---------------------------------------------------------------------------------------------
# Closed forms


def basic_composition(epsilon: float, delta: float, k: int) -> Bound:
    """(k eps, k delta) (DR Thm 3.16)."""
    _check_mechanism(epsilon, delta)
    COMPOSITIONS.check("k", k)
    return Bound(k * epsilon, k * delta)


def advanced_composition(epsilon: float, delta: float, k: int, delta_prime: float) -> Bound:
    """(eps sqrt(2k ln(1/delta')) + k eps (e^eps - 1), k delta + delta') (DRV Thm III.3, DR Thm 3.20)."""
    _check_mechanism(epsilon, delta)
    COMPOSITIONS.check("k", k)
    OPEN_UNIT.check("delta_prime", delta_prime)
    return Bound(_advanced_epsilon(epsilon, k, delta_prime), k * delta + delta_prime)


def _advanced_epsilon(epsilon: float, k: float, delta_prime: float) -> float:
    if epsilon == 0.0:
        return 0.0
    return epsilon * math.sqrt(2.0 * k * -math.log(delta_prime)) + k * epsilon * _expm1(epsilon)


def _fsum(values) -> float:
    """math.fsum, inf where the sum overflows float64 (fsum raises there)."""
    try:
        return math.fsum(values)
    except OverflowError:
        return math.inf


def _expm1(value: float) -> float:
    """e^x - 1, inf where it overflows float64 (math.expm1 raises there)."""
    return math.inf if value > _LOG_LARGEST else math.expm1(value)


_LOG_LARGEST = math.log(1.7976931348623157e308)


def simplified_composition(epsilon: float, delta: float, k: int, delta_prime: float) -> tuple[Bound, bool]:
    """eps' = 2 eps sqrt(2k ln(1/delta')) at delta k delta + delta' (DR Cor. 3.21), and whether it holds.

    DR Cor. 3.21 holds for eps' < 1 (it bounds k eps (e^eps - 1) by eps' / 2 there); `valid`
    also checks that eps' is at least the advanced epsilon it simplifies, which is what makes
    the statement true (it fails for delta' close to 1 even when eps' < 1).
    """
    _check_mechanism(epsilon, delta)
    COMPOSITIONS.check("k", k)
    OPEN_UNIT.check("delta_prime", delta_prime)
    value = 2.0 * epsilon * math.sqrt(2.0 * k * -math.log(delta_prime))
    valid = value < 1.0 and value >= _advanced_epsilon(epsilon, k, delta_prime)
    return Bound(value, k * delta + delta_prime), valid


# ---------------------------------------------------------------------------------------------
# Binomial probabilities in log space (Loader 2000)

# Stirling-series coefficients of lgamma(n + 1) - (n + 1/2) log n + n - log sqrt(2 pi)
# (Loader, "Fast and Accurate Computation of Binomial Probabilities", 2000).
_S0, _S1, _S2, _S3, _S4 = 1.0 / 12, 1.0 / 360, 1.0 / 1260, 1.0 / 1680, 1.0 / 1188


def _stirling_error(n: float) -> float:
    """lgamma(n + 1) - (n + 1/2) log n + n - log sqrt(2 pi), for n >= 1 (Loader 2000)."""
    if n <= 15.0:
        return math.lgamma(n + 1.0) - (n + 0.5) * math.log(n) + n - _LOG_SQRT_2PI
    nn = n * n
    return (_S0 - (_S1 - (_S2 - (_S3 - _S4 / nn) / nn) / nn) / nn) / n


def _deviance(x: float, mean: float, log_mean: float) -> float:
    """x log(x / mean) + mean - x without cancellation (Loader 2000, bd0); x > 0."""
    if abs(x - mean) < 0.1 * (x + mean):
        v = (x - mean) / (x + mean)
        total = (x - mean) * v
        term = 2.0 * x * v
        v2 = v * v
        j = 1
        while True:
            term *= v2
            updated = total + term / (2 * j + 1)
            if updated == total:
                return updated
            total = updated
            j += 1
    return x * (math.log(x) - log_mean) + mean - x


def log_binomial_pmf(x: int, n: int, log_success: float, log_failure: float) -> float:
    """log( C(n, x) s^x f^(n-x) ), s = e^log_success, f = e^log_failure, s + f = 1.

    Loader's saddle-point form (2000): log pmf = stirlerr(n) - stirlerr(x) - stirlerr(n - x)
    - bd0(x, n s) - bd0(n - x, n f) + log sqrt(n / (2 pi x (n - x))). Unlike
    lgamma(n+1) - lgamma(x+1) - lgamma(n-x+1), whose terms are of size n log n, no term is
    large near the mode, so the result keeps ~1e-14 absolute accuracy (tested against mpmath
    for n up to 1e12).
    """
    if x == 0:
        return n * log_failure
    if x == n:
        return n * log_success
    log_n = math.log(n)
    success_mean = math.exp(log_n + log_success)
    failure_mean = math.exp(log_n + log_failure)
    return (
        _stirling_error(n) - _stirling_error(x) - _stirling_error(n - x)
        - _deviance(x, success_mean, log_n + log_success)
        - _deviance(n - x, failure_mean, log_n + log_failure)
        + 0.5 * (log_n - math.log(x) - math.log(n - x)) - _LOG_SQRT_2PI
    )


def _randomized_response_logs(epsilon: float) -> tuple[float, float]:
    """(log p, log q) of eps-randomized response: p = e^eps / (1 + e^eps), q = 1 / (1 + e^eps)."""
    softplus = math.log1p(math.exp(-epsilon))
    return -softplus, -epsilon - softplus


def _log_lower_tail_chernoff(a: float, n: int, log_success: float, log_failure: float) -> float:
    """log of the Chernoff bound P(Binom(n, s) <= a) <= exp(-n KL(a/n || s)), for a <= n s."""
    x = a / n
    success = math.exp(log_success)
    if x <= 0.0:
        return n * log_failure
    if x >= success:
        return 0.0
    divergence = x * (math.log(x) - log_success) + (1.0 - x) * (math.log1p(-x) - log_failure)
    return -n * max(divergence, 0.0)


# ---------------------------------------------------------------------------------------------
# The optimal epsilon from a privacy-loss distribution


def _solve_profile(
    atoms: Iterable[tuple[float, float]],
    log_allowed: float,
    log_mass_above: float = -math.inf,
) -> float:
    """The smallest eps_g >= 0 with delta(eps_g) = sum_{L_j > eps_g} P_j (1 - e^(eps_g - L_j)) <= allowed.

    `atoms` yields (L_j, log P_j) in non-increasing order of L_j (equal losses are harmless: an
    atom contributes nothing to delta at its own loss); `log_mass_above` is
    P-mass at +inf loss (it counts fully in delta, with no Q-mass). Walks the atoms down;
    at each atom checks delta at eps_g = L_j, which only needs the masses A, B of the atoms
    already passed: delta(L_j) <= allowed <=> A <= allowed + e^L_j B (no subtraction). In the
    first segment where the check fails, delta = A - e^eps_g B is solved exactly, and the
    result raised by _ROUNDING_MARGIN (relative) so that rounding errs on the safe side.
    """
    log_a = log_mass_above  # P-mass of the atoms above the current point
    log_b = -math.inf  # Q-mass of the same atoms
    upper = math.inf  # the loss of the last atom passed: the top of the current segment
    for loss, log_p in atoms:
        if loss <= 0.0:
            break
        if log_a > log_add(log_allowed, loss + log_b):
            return _solve_segment(log_a, log_b, log_allowed, loss, upper)
        log_a = log_add(log_a, log_p)
        log_b = log_add(log_b, log_p - loss)
        upper = loss
    if log_a <= log_add(log_allowed, log_b):
        return 0.0
    return _solve_segment(log_a, log_b, log_allowed, 0.0, upper)


def _solve_segment(log_a: float, log_b: float, log_allowed: float, lower: float, upper: float) -> float:
    """eps_g in [lower, upper] with A - e^eps_g B = allowed: eps_g = log(A - allowed) - log B."""
    if log_b == -math.inf:
        return upper * (1.0 + _ROUNDING_MARGIN)
    value = log_sub(log_a, log_allowed) - log_b
    return min(max(value, lower), upper) * (1.0 + _ROUNDING_MARGIN)


def _log_allowed_rr_delta(deltas: Iterable[tuple[float, int]], delta_prime: float) -> float:
    """log of the largest delta_RR with 1 - prod(1 - delta_i) (1 - delta_RR) <= sum delta_i + delta' (KOV Thm 3.5).

    delta_RR = (prod(1 - delta_i) - 1 + sum delta_i + delta') / prod(1 - delta_i). The part
    f = prod(1 - delta_i) - 1 + sum delta_i >= 0 is of order (sum delta_i)^2 and would be lost
    to rounding in 1 - (1 - total) / prod(...) when delta' is far below sum delta_i (delta' = 1e-40
    next to k delta = 1e-9). With S = sum log1p(-delta_i) = -sum delta_i - R, R = sum r(delta_i),
    r(d) = -log1p(-d) - d, it is f = (e^S - 1 - S) - R, both parts by series.
    `deltas` holds (delta, count) pairs.
    """
    log_survival, excess = _survival(deltas)
    return math.log(excess + delta_prime) - log_survival


def _survival(deltas: Iterable[tuple[float, int]]) -> tuple[float, float]:
    """(S, f): S = log prod(1 - delta_i) (log1p), f = prod(1 - delta_i) - 1 + sum delta_i >= 0 by series.

    `deltas` holds (delta, count) pairs; see `_log_allowed_rr_delta`.
    """
    log_survival = 0.0
    residual = 0.0
    for delta, count in deltas:
        log_survival += count * math.log1p(-delta)
        residual += count * _log1p_residual(delta)
    excess = max(_expm1_residual(log_survival) - residual, 0.0)  # rounding could make it -0
    return log_survival, excess


def _slack(deltas: Iterable[tuple[float, int]], total_delta: float) -> Fraction:
    """D - sum delta_i, exactly, each value read as the shortest decimal that gives its float.

    Basic composition reaches the total delta D when it is >= 0; the advanced theorems when it
    is > 0, and it is then their delta'. The decimals are what was typed (--delta 1e-6 is
    10^-6, not the binary float next to it), so a total met exactly in decimal (100 x 1e-6 =
    1e-4) is met here too, where float arithmetic would be off by an ulp either way.
    `deltas` holds (delta, count) pairs.
    """
    from fractions import Fraction  # only here: not imported at start-up

    def exact(value: float) -> Fraction:
        return Fraction(repr(value))

    return exact(total_delta) - sum((count * exact(delta) for delta, count in deltas), Fraction(0))


def _log_allowed_at_total(deltas: Iterable[tuple[float, int]], total_delta: float) -> float | None:
    """log of the delta_RR that KOV Thm 3.5 allows at the total delta D: 1 - (1 - D) / prod(1 - delta_i).

    None when it is negative (D is below 1 - prod(1 - delta_i), the mechanisms' own deltas
    composed: no epsilon reaches D); -inf when it is 0 (only eps_g = sum eps_i reaches D, where
    delta_RR is 0). The numerator prod(1 - delta_i) - (1 - D) = (D - sum delta_i) + f is formed
    from the exact `_slack` and the series f of `_survival` (log1p), rounded once, so a delta
    of 1e-12 next to a D of 1e-9 keeps its digits (1 - (1 - D) / (1 - delta)^k in floats
    would not).
    """
    from fractions import Fraction

    deltas = list(deltas)
    log_survival, excess = _survival(deltas)
    numerator = _slack(deltas, total_delta) + Fraction(excess)
    if numerator < 0:
        return None
    value = float(numerator)
    return -math.inf if value == 0.0 else math.log(value) - log_survival


def _require_reachable(deltas: Iterable[tuple[float, int]], total_delta: float, floor_text: str) -> float:
    """`_log_allowed_at_total`, or a ParameterError when not even the optimal theorem reaches D."""
    OPEN_UNIT.check("total_delta", total_delta)
    deltas = list(deltas)
    log_allowed = _log_allowed_at_total(deltas, total_delta)
    if log_allowed is None:
        floor = -math.expm1(_survival(deltas)[0])
        raise ParameterError(
            "total_delta",
            f"at least {floor_text} = {floor:.6g}, the delta of the mechanisms themselves "
            "(no composition theorem reaches a smaller total)",
            total_delta,
        )
    return log_allowed


def _log1p_residual(delta: float) -> float:
    """r(d) = -log1p(-d) - d = d^2/2 + d^3/3 + ... >= 0, accurate for small d."""
    if delta >= 0.5:
        return -math.log1p(-delta) - delta
    total, power, j = 0.0, delta, 1
    while True:
        j += 1
        power *= delta
        updated = total + power / j
        if updated == total:
            return total
        total = updated


def _expm1_residual(value: float) -> float:
    """e^s - 1 - s = s^2/2 + s^3/6 + ... >= 0, accurate for small |s|."""
    if abs(value) >= 0.5:
        return math.expm1(value) - value
    total, term, j = 0.0, value, 1
    while True:
        j += 1
        term *= value / j
        updated = total + term
        if updated == total:
            return total
        total = updated


def _homogeneous_window(epsilon: float, k: int, log_allowed: float) -> tuple[int, int, float]:
    """(first, last, log tail) of the atoms of k-fold eps-randomized response that are walked.

    Atom l (l responses flipped) has loss (k - 2l) eps and probability Binom(k, q) at l,
    q = 1 / (1 + e^eps); only l <= last = floor((k - 1) / 2) have a positive loss. The atoms
    with l < first are not walked: their total mass is at most the Chernoff bound
    P(Binom(k, q) <= first - 1) <= exp(-k KL((first - 1)/k || q)), which is below
    allowed * e^(-TAIL_MARGIN), and it is counted at +inf loss, which can only raise delta.
    """
    log_p, log_q = _randomized_response_logs(epsilon)
    threshold = log_allowed - _TAIL_MARGIN

    def excess(a: float) -> float:
        return _log_lower_tail_chernoff(a, k, log_q, log_p) - threshold

    first, log_tail = 0, -math.inf
    mean = k * math.exp(log_q)
    if excess(0.0) <= 0.0 < excess(mean):
        a = math.floor(find_root(excess, 0.0, mean, rtol=1e-12))
        while a > 0 and excess(a) > 0.0:
            a -= 1
        first = a + 1
        log_tail = _log_lower_tail_chernoff(a, k, log_q, log_p)
    return first, (k - 1) // 2, log_tail


def optimal_epsilon(epsilon: float, k: int, delta: float = 0.0, delta_prime: float = 1e-5) -> float:
    """The smallest eps_g whose exact KOV delta for k-fold (eps, delta)-DP is at most k delta + delta'.

    KOV Thm 3.3: the composition is (eps_g, 1 - (1 - delta)^k (1 - delta_RR(eps_g)))-DP and no
    smaller delta holds. Returns 0 when delta_RR(0), the total variation distance of the
    composed randomized responses, is already within the allowance.
    """
    _check_mechanism(epsilon, delta)
    COMPOSITIONS.check("k", k)
    OPEN_UNIT.check("delta_prime", delta_prime)
    _check_total_delta(k * delta + delta_prime, "k * delta + delta_prime")
    return _optimal_homogeneous(epsilon, k, _log_allowed_rr_delta([(delta, k)], delta_prime))


def _optimal_at(epsilon: float, k: int, log_allowed: float) -> float:
    """`_optimal_homogeneous`, also at an allowance of 0 (log -inf): then only eps_g = k eps holds."""
    if log_allowed == -math.inf:
        return k * epsilon
    return _optimal_homogeneous(epsilon, k, log_allowed)


def _optimal_homogeneous(epsilon: float, k: int, log_allowed: float) -> float:
    """The optimal epsilon of k-fold eps-randomized response at delta_RR = e^log_allowed.

    Walks the binomial window in pure Python, or with numpy in chunks when the window is
    long (its width grows like sqrt(k); see _NUMPY_WALK_FROM_SD).
    """
    if epsilon == 0.0:
        return 0.0
    largest_loss = k * epsilon
    if math.isinf(largest_loss):
        return math.inf  # the largest loss overflows float64, and the optimum is within e^-eps of it
    # Pinsker: delta_RR(0), the total variation, is at most sqrt(KL / 2), KL = k eps tanh(eps / 2).
    # For a subnormal eps, eps / 2 underflows: log tanh(eps / 2) <= log(eps / 2) bounds it there.
    half = 0.5 * epsilon
    log_tanh = math.log(math.tanh(half)) if half > 1e-300 else math.log(epsilon) - math.log(2.0)
    if 0.5 * (math.log(largest_loss) - math.log(2.0) + log_tanh) <= log_allowed:
        return 0.0
    first, last, log_tail = _homogeneous_window(epsilon, k, log_allowed)
    log_p, log_q = _randomized_response_logs(epsilon)
    spread = math.sqrt(k * math.exp(log_p + log_q))
    if spread >= _NUMPY_WALK_FROM_SD:
        value = _walk_numpy(epsilon, k, first, last, log_tail, log_allowed)
    else:
        atoms = (((k - 2 * l) * epsilon, log_binomial_pmf(l, k, log_q, log_p)) for l in range(first, last + 1))
        value = _solve_profile(atoms, log_allowed, log_tail)
    # eps_g = k eps always holds (delta_RR is 0 there): the rounding margin never goes above it.
    return min(value, largest_loss)


def _walk_numpy(epsilon: float, k: int, first: int, last: int, log_tail: float, log_allowed: float) -> float:
    """`_solve_profile` over atoms first..last of k-fold eps-randomized response, in numpy chunks.

    The prefix sums A and B are carried from chunk to chunk in log space
    (np.logaddexp.accumulate); the walk stops in the first chunk that holds the answer.
    """
    import numpy as np

    log_p, log_q = _randomized_response_logs(epsilon)
    log_a, log_b = log_tail, -math.inf
    upper = math.inf
    for start in range(first, last + 1, _WALK_CHUNK):
        flips = np.arange(start, min(start + _WALK_CHUNK, last + 1), dtype=np.float64)
        losses = (k - 2.0 * flips) * epsilon
        log_mass = _log_binomial_pmf_array(flips, k, log_q, log_p)
        cumulative_a = np.logaddexp.accumulate(np.concatenate(([log_a], log_mass)))
        cumulative_b = np.logaddexp.accumulate(np.concatenate(([log_b], log_mass - losses)))
        # delta(L_j) <= allowed  <=>  A_j <= allowed + e^L_j B_j  (masses of the atoms above j)
        fails = cumulative_a[:-1] > np.logaddexp(log_allowed, losses + cumulative_b[:-1])
        if fails.any():
            j = int(np.argmax(fails))
            top = float(losses[j - 1]) if j > 0 else upper
            return _solve_segment(float(cumulative_a[j]), float(cumulative_b[j]), log_allowed, float(losses[j]), top)
        log_a, log_b = float(cumulative_a[-1]), float(cumulative_b[-1])
        upper = float(losses[-1])
    if log_a <= log_add(log_allowed, log_b):
        return 0.0
    return _solve_segment(log_a, log_b, log_allowed, 0.0, upper)


def _log_binomial_pmf_array(x, n: int, log_success: float, log_failure: float):
    """`log_binomial_pmf` for an array of 0 <= x < n (numpy; the same Loader 2000 formulas)."""
    import numpy as np

    if x[0] == 0.0:
        head = np.array([n * log_failure])
        return np.concatenate((head, _log_binomial_pmf_array(x[1:], n, log_success, log_failure))) if x.size > 1 else head
    log_n = math.log(n)
    log_success_mean, log_failure_mean = log_n + log_success, log_n + log_failure
    return (
        _stirling_error(n) - _stirling_error_array(x) - _stirling_error_array(n - x)
        - _deviance_array(x, math.exp(log_success_mean), log_success_mean)
        - _deviance_array(n - x, math.exp(log_failure_mean), log_failure_mean)
        + 0.5 * (log_n - np.log(x) - np.log(n - x)) - _LOG_SQRT_2PI
    )


def _stirling_error_array(n):

    nn = n * n
    series = (_S0 - (_S1 - (_S2 - (_S3 - _S4 / nn) / nn) / nn) / nn) / n
    small = n <= 15.0
    if small.any():
        series = series.copy()
        series[small] = [_stirling_error(float(v)) for v in n[small]]
    return series


def _deviance_array(x, mean: float, log_mean: float):
    import numpy as np

    result = x * (np.log(x) - log_mean) + mean - x
    near = np.abs(x - mean) < 0.1 * (x + mean)
    if near.any():
        xs = x[near]
        v = (xs - mean) / (xs + mean)
        total = (xs - mean) * v
        term = 2.0 * xs * v
        v2 = v * v
        for j in range(1, _DEVIANCE_TERMS + 1):
            term = term * v2
            total = total + term / (2 * j + 1)
        result[near] = total
    return result


# |v| < 0.1 in the series branch of the deviance, so v^2j < 1e-17 after this many terms.
_DEVIANCE_TERMS = 9

# Above this binomial standard deviation sqrt(k p q) the walk over the window (about 10 standard
# deviations of atoms) runs in numpy: ~30,000 atoms, where pure Python takes longer than
# importing numpy. It is reached at k ~ 4e7 for small eps, never for k <= 1e6.
_NUMPY_WALK_FROM_SD = 3000.0
_WALK_CHUNK = 2**15


def optimal_delta(epsilon_total: float, epsilon: float, delta: float, k: int) -> float:
    """The exact KOV total delta of k-fold (eps, delta)-DP at eps_g = epsilon_total (KOV Thm 3.3).

    delta_RR(eps_g) = sum_{(k-2l) eps > eps_g} Binom(k, q)(l) * (-expm1(eps_g - (k - 2l) eps)),
    a sum of positive terms (no cancellation), over every l: O(k), for checking and for tables.
    """
    _check_mechanism(epsilon, delta)
    COMPOSITIONS.check("k", k)
    NON_NEGATIVE.check("epsilon_total", epsilon_total)
    log_rr = -math.inf
    if epsilon > 0.0:
        log_p, log_q = _randomized_response_logs(epsilon)
        terms = []
        for l in range((k - 1) // 2 + 1):
            loss = (k - 2 * l) * epsilon
            if loss <= epsilon_total:
                break
            terms.append(log_binomial_pmf(l, k, log_q, log_p) + math.log(-math.expm1(epsilon_total - loss)))
        if terms:
            top = max(terms)
            log_rr = top + math.log(math.fsum(math.exp(t - top) for t in terms)) if top > -math.inf else top
    log_survival = k * math.log1p(-delta)
    # 1 - (1 - delta)^k (1 - delta_RR) = -expm1(log_survival + log1p(-delta_RR))
    return -math.expm1(log_survival + math.log1p(-math.exp(log_rr)))


# ---------------------------------------------------------------------------------------------
# Homogeneous and heterogeneous composition


def compose(
    epsilon: float,
    delta: float,
    k: int,
    delta_prime: float | None = None,
    total_delta: float | None = None,
) -> CompositionResult:
    """Basic, advanced (DRV), simplified (DR Cor. 3.21) and optimal (KOV) composition of k (eps, delta)-DP mechanisms.

    Give exactly one of `delta_prime` and `total_delta`. With `delta_prime`, the advanced,
    simplified and optimal guarantees are stated at the same total delta k delta + delta';
    basic at k delta (which also holds at the larger total). With `total_delta` D, all four at D
    (`_theorems_at_total`); a ParameterError when D is below 1 - (1 - delta)^k.
    """
    _check_mechanism(epsilon, delta)
    COMPOSITIONS.check("k", k)
    _check_one_of(delta_prime, total_delta)
    if total_delta is not None:
        pairs = [(delta, k)]
        log_allowed = _require_reachable(pairs, total_delta, "1 - (1 - delta)^k")
        basic, advanced, simplified, valid, missing, warnings = _theorems_at_total(
            pairs,
            total_delta,
            k * epsilon,
            lambda slack: _advanced_epsilon(epsilon, k, slack),
            lambda slack: 2.0 * epsilon * math.sqrt(2.0 * k * -math.log(slack)),
            "k * delta",
        )
        optimal = _exact_bound(min(_optimal_at(epsilon, k, log_allowed), k * epsilon), total_delta)
        return CompositionResult(
            k=k,
            epsilons=(epsilon,),
            deltas=(delta,),
            delta_prime=None,
            basic=basic,
            advanced=advanced,
            simplified=simplified,
            simplified_valid=valid,
            optimal=optimal,
            best=_best(basic, advanced, simplified, valid, optimal, missing),
            warnings=warnings,
            total_delta=total_delta,
            not_applicable=missing,
        )
    OPEN_UNIT.check("delta_prime", delta_prime)
    total_delta = k * delta + delta_prime
    _check_total_delta(total_delta, "k * delta + delta_prime")
    basic = basic_composition(epsilon, delta, k)
    advanced = advanced_composition(epsilon, delta, k, delta_prime)
    simplified, valid = simplified_composition(epsilon, delta, k, delta_prime)
    # eps_g = k eps always holds (delta_RR(k eps) = 0): the rounding margin never goes above it.
    value = min(optimal_epsilon(epsilon, k, delta, delta_prime), basic.epsilon)
    optimal = _exact_bound(value, total_delta)
    return CompositionResult(
        k=k,
        epsilons=(epsilon,),
        deltas=(delta,),
        delta_prime=delta_prime,
        basic=basic,
        advanced=advanced,
        simplified=simplified,
        simplified_valid=valid,
        optimal=optimal,
        best=_best(basic, advanced, simplified, valid, optimal),
        warnings=_simplified_warning(simplified.epsilon, valid),
        total_delta=total_delta,
    )


def compose_heterogeneous(
    epsilons: Sequence[float],
    deltas: Sequence[float],
    delta_prime: float | None = None,
    total_delta: float | None = None,
) -> CompositionResult:
    """The four theorems for mechanisms with their own (eps_i, delta_i).

    Basic: (sum eps_i, sum delta_i). Advanced (heterogeneous DRV):
    sqrt(2 ln(1/delta') sum eps_i^2) + sum eps_i (e^eps_i - 1). Simplified: twice the square
    root term, valid under the same rule as the homogeneous form. Optimal: the composed
    randomized-response privacy-loss distribution (KOV Thm 3.5), exact when it has at most
    EXACT_ATOM_LIMIT atoms, else on a lattice with a certified upper bound. Give exactly one
    of `delta_prime` and `total_delta`, as for `compose`.
    """
    if len(epsilons) != len(deltas) or not epsilons:
        raise ValueError(f"epsilons and deltas need the same positive length, got {len(epsilons)} and {len(deltas)}")
    for index, (epsilon, delta) in enumerate(zip(epsilons, deltas)):
        _check_mechanism(epsilon, delta, suffix=f"[{index}]")
    _check_one_of(delta_prime, total_delta)
    k = len(epsilons)
    sum_squares = _fsum(e * e for e in epsilons)
    drift = _fsum(e * _expm1(e) for e in epsilons)
    basic_epsilon = _fsum(epsilons)
    delta_counts = list(Counter(deltas).items())

    def advanced_value(slack: float) -> float:
        return math.sqrt(2.0 * -math.log(slack) * sum_squares) + drift

    def simplified_value(slack: float) -> float:
        return 2.0 * math.sqrt(2.0 * -math.log(slack) * sum_squares)

    missing: tuple[str, ...] = ()
    if total_delta is None:
        OPEN_UNIT.check("delta_prime", delta_prime)
        total_delta = math.fsum(deltas) + delta_prime
        _check_total_delta(total_delta, "sum(delta) + delta_prime")
        basic = Bound(basic_epsilon, math.fsum(deltas))
        advanced = Bound(advanced_value(delta_prime), total_delta)
        simplified = Bound(simplified_value(delta_prime), total_delta)
        valid = simplified.epsilon < 1.0 and simplified.epsilon >= advanced.epsilon
        warnings = list(_simplified_warning(simplified.epsilon, valid))
        log_allowed = _log_allowed_rr_delta(delta_counts, delta_prime)
    else:
        log_allowed = _require_reachable(delta_counts, total_delta, "1 - prod(1 - delta_i)")
        basic, advanced, simplified, valid, missing, found = _theorems_at_total(
            delta_counts, total_delta, basic_epsilon, advanced_value, simplified_value, "the sum of the deltas"
        )
        warnings = list(found)

    groups = Counter(e for e in epsilons if e > 0.0)
    if log_allowed == -math.inf:
        optimal = _exact_bound(basic_epsilon, total_delta)  # an allowance of 0: only eps_g = sum eps_i
    elif len(groups) <= 1:
        # One distinct epsilon (the deltas may differ): the fast exact path.
        value = 0.0
        if groups:
            (epsilon, count), = groups.items()
            value = _optimal_homogeneous(epsilon, count, log_allowed)
        optimal = _exact_bound(value, total_delta)
    elif math.isinf(basic_epsilon):
        optimal = OptimalBound(math.inf, total_delta, math.inf)  # the largest loss overflows float64
    elif math.prod(count + 1 for count in groups.values()) <= EXACT_ATOM_LIMIT:
        optimal = _exact_bound(_solve_profile(_exact_atoms(groups), log_allowed), total_delta)
    else:
        optimal = _lattice_optimal(groups, log_allowed, total_delta, advanced.epsilon)
    if optimal.epsilon > basic_epsilon:  # eps_g = sum eps_i always holds: delta_RR is 0 there
        optimal = OptimalBound(basic_epsilon, total_delta, min(optimal.epsilon_lower, basic_epsilon),
                               optimal.method, optimal.grid_step)
    if optimal.method == "lattice":
        warnings.append(
            f"the optimal epsilon of these {k} mechanisms is computed on a lattice (step "
            f"{optimal.grid_step:.3g}): it is a certified upper bound, at most {optimal.tolerance:.3g} "
            "above the exact optimum (epsilon_lower is a lower bound)."
        )
    return CompositionResult(
        k=k,
        epsilons=tuple(epsilons),
        deltas=tuple(deltas),
        delta_prime=delta_prime,
        basic=basic,
        advanced=advanced,
        simplified=simplified,
        simplified_valid=valid,
        optimal=optimal,
        best=_best(basic, advanced, simplified, valid, optimal, missing),
        warnings=tuple(warnings),
        total_delta=total_delta,
        not_applicable=missing,
    )


def _check_one_of(delta_prime: float | None, total_delta: float | None) -> None:
    if (delta_prime is None) == (total_delta is None):
        raise ValueError("give exactly one of delta_prime (the slack of the advanced theorems) and total_delta")


def _theorems_at_total(
    deltas: list[tuple[float, int]],
    total_delta: float,
    basic_epsilon: float,
    advanced_value,
    simplified_value,
    sum_text: str,
) -> tuple[Bound, Bound, Bound, bool, tuple[str, ...], tuple[str, ...]]:
    """(basic, advanced, simplified, simplified valid, not applicable, warnings), all at the total delta D.

    Basic (sum eps_i, sum delta_i) holds at D when sum delta_i <= D (a guarantee at a smaller
    delta holds at a larger one). The advanced and simplified forms hold at sum delta_i + delta'
    for any delta' > 0: at D with delta' = D - sum delta_i, when that is > 0. `advanced_value`
    and `simplified_value` map delta' to their epsilon. A theorem that cannot reach D gets
    epsilon inf (a true but empty statement) and is named in the returned tuple.
    """
    slack = _slack(deltas, total_delta)
    sum_deltas = math.fsum(delta * count for delta, count in deltas)  # for the messages
    missing: list[str] = []
    warnings: list[str] = []
    basic = Bound(basic_epsilon, total_delta)
    if slack < 0:
        basic = Bound(math.inf, total_delta)
        missing.append("basic")
        warnings.append(
            f"basic composition does not reach the total delta {total_delta:.6g}: {sum_text} = "
            f"{sum_deltas:.6g} is above it (reported as epsilon inf)."
        )
    delta_prime = float(slack) if slack > 0 else 0.0
    if delta_prime > 0.0:
        advanced = Bound(advanced_value(delta_prime), total_delta)
        value = simplified_value(delta_prime)
        valid = value < 1.0 and value >= advanced.epsilon
        simplified = Bound(value, total_delta)
        warnings.extend(_simplified_warning(value, valid))
    else:
        advanced = simplified = Bound(math.inf, total_delta)
        valid = False
        missing += ["advanced", "simplified"]
        warnings.append(
            f"the advanced and simplified theorems do not reach the total delta {total_delta:.6g}: they "
            f"need delta' = total delta - {sum_text} > 0, and {sum_text} = {sum_deltas:.6g} "
            "(reported as epsilon inf)."
        )
    return basic, advanced, simplified, valid, tuple(missing), tuple(warnings)


def _exact_bound(value: float, total_delta: float) -> OptimalBound:
    """An exactly solved optimum: the true value lies within the rounding margin below `value`."""
    return OptimalBound(value, total_delta, value * (1.0 - 2.0 * _ROUNDING_MARGIN))


def _exact_atoms(groups: Counter) -> list[tuple[float, float]]:
    """All atoms (loss, log P) of the composed randomized responses, one group per distinct eps, sorted down.

    A group of c mechanisms with the same eps has atoms (c - 2b) eps with probability
    Binom(c, q)(b); the composition is every combination, loss and log P summed.
    """
    combined = [(0.0, 0.0)]
    for epsilon, count in groups.items():
        log_p, log_q = _randomized_response_logs(epsilon)
        group = [((count - 2 * b) * epsilon, log_binomial_pmf(b, count, log_q, log_p)) for b in range(count + 1)]
        combined = [(loss + g_loss, log_prob + g_log) for loss, log_prob in combined for g_loss, g_log in group]
    combined.sort(key=lambda atom: atom[0], reverse=True)
    return combined


def _lattice_optimal(
    groups: Counter, log_allowed: float, total_delta: float, advanced_epsilon: float
) -> OptimalBound:
    """Upper and lower bounds on the optimal epsilon from a lattice composition (numpy).

    The mechanisms with the same eps form a group whose composition is exact: atoms
    (c - 2b) eps with binomial probabilities. Atoms with probability below
    allowed * e^(-TAIL_MARGIN) / (number of atoms) are moved to +inf loss (pessimistic; their
    total is far below float64 resolution of the target). The others are rounded up to the
    lattice h Z (a privacy loss that is never smaller gives a delta that is never smaller:
    pessimistic), and the groups are convolved exactly by shift-and-add (no FFT, so no
    negative or lost mass). Every composed loss is at most J h above the exact one (J groups),
    so the exact profile at eps_g is at least the lattice one at eps_g + J h: the upper bound
    minus J h is a lower bound. h is chosen so that the work, (lattice points) x (atoms),
    stays near _LATTICE_WORK. The optimum is also never above the advanced (DRV) epsilon at
    the same delta, so the upper bound is the smaller of the two.
    """
    import numpy as np

    atoms_total = sum(count + 1 for count in groups.values())
    threshold = max(log_allowed - _TAIL_MARGIN - math.log(atoms_total), _LOG_SMALLEST_MASS)
    log_dropped = -math.inf
    kept: list[tuple[list[float], list[float]]] = []
    for epsilon, count in groups.items():
        log_p, log_q = _randomized_response_logs(epsilon)
        losses, masses = [], []
        for b in range(count + 1):
            log_mass = log_binomial_pmf(b, count, log_q, log_p)
            if log_mass < threshold:
                log_dropped = log_add(log_dropped, log_mass)
            else:
                losses.append((count - 2 * b) * epsilon)
                masses.append(math.exp(log_mass))
        kept.append((losses, masses))
    span = math.fsum(max(losses) - min(losses) for losses, _ in kept)
    kept_atoms = sum(len(losses) for losses, _ in kept)
    points = int(min(max(_LATTICE_WORK // kept_atoms, _LATTICE_POINTS_MIN), _LATTICE_POINTS_MAX))
    step = (span if span > 0.0 else max(groups)) / points

    distribution = np.ones(1)
    offset = 0  # lattice index of distribution[0]
    operations = 0
    for losses, masses in kept:
        indices = [math.ceil(loss / step) for loss in losses]
        low, high = min(indices), max(indices)
        result = np.zeros(distribution.size + high - low)
        for index, mass in zip(indices, masses):
            start = index - low
            result[start:start + distribution.size] += mass * distribution
        operations += len(indices) * distribution.size
        distribution = result
        offset += low
    # Products below the smallest normal float64 may flush to zero: at most this much mass.
    log_dropped = log_add(log_dropped, math.log(2.3e-308 * max(operations, 1)))
    support = np.nonzero(distribution)[0]
    support = support[support + offset > 0][::-1]  # positive losses, largest first
    upper = _solve_profile_arrays((support + offset) * step, distribution[support], log_allowed, log_dropped)
    lower = max(upper / (1.0 + _ROUNDING_MARGIN) - len(groups) * step, 0.0)
    upper = min(upper, advanced_epsilon)
    return OptimalBound(upper, total_delta, min(lower, upper), method="lattice", grid_step=step)


def _solve_profile_arrays(losses, masses, log_allowed: float, log_mass_above: float) -> float:
    """`_solve_profile` vectorised with numpy, for the many atoms of a lattice.

    losses: strictly decreasing positive losses; masses: their probabilities (linear scale,
    all positive). The prefix sums A, B are plain cumulative sums of positive terms.
    """
    import numpy as np

    if log_allowed < _LOG_SMALLEST_MASS or losses.size == 0:
        return _solve_profile(zip(losses.tolist(), np.log(masses).tolist()), log_allowed, log_mass_above)
    allowed = math.exp(log_allowed)
    mass_above = math.exp(log_mass_above)
    a_before = mass_above + np.concatenate(([0.0], np.cumsum(masses)[:-1]))
    b_before = np.concatenate(([0.0], np.cumsum(masses * np.exp(-losses))[:-1]))
    with np.errstate(divide="ignore", over="ignore"):
        # delta(L_j) <= allowed  <=>  A <= allowed + e^L_j B  (no subtraction)
        fails = a_before > allowed + np.exp(losses + np.log(b_before))
    index = int(np.argmax(fails)) if fails.any() else None
    if index is None:
        log_a = math.log(mass_above + float(np.sum(masses)))
        log_b = math.log(float(np.sum(masses * np.exp(-losses))))
        if log_a <= log_add(log_allowed, log_b):
            return 0.0
        return _solve_segment(log_a, log_b, log_allowed, 0.0, float(losses[-1]))
    upper = float(losses[index - 1]) if index > 0 else math.inf
    log_b = math.log(float(b_before[index])) if b_before[index] > 0.0 else -math.inf
    return _solve_segment(math.log(float(a_before[index])), log_b, log_allowed, float(losses[index]), upper)


# Lattice atoms below this log-probability are not placed (they would underflow float64); their
# mass is counted at +inf loss instead.
_LOG_SMALLEST_MASS = -700.0


def _best(
    basic: Bound, advanced: Bound, simplified: Bound, valid: bool, optimal: OptimalBound, missing: Sequence[str] = ()
) -> str:
    """The theorem with the smallest epsilon among those that hold (not `missing`: not applicable)."""
    candidates = [("optimal", optimal.epsilon), ("advanced", advanced.epsilon)]
    if valid:
        candidates.append(("simplified", simplified.epsilon))
    candidates.append(("basic", basic.epsilon))
    candidates = [item for item in candidates if item[0] not in missing] or candidates
    return min(candidates, key=lambda item: item[1])[0]


def _simplified_warning(value: float, valid: bool) -> tuple[str, ...]:
    if valid:
        return ()
    return (
        f"the simplified form (Dwork-Roth Cor. 3.21) gives {value:.6g}, which does not hold: "
        "the corollary needs it below 1. Use the advanced or optimal epsilon.",
    )


# ---------------------------------------------------------------------------------------------
# Inverse questions


def max_compositions(
    epsilon: float,
    delta: float,
    target_epsilon: float,
    delta_prime: float | None = None,
    total_delta: float | None = None,
) -> InverseResult:
    """The largest k whose composition stays within `target_epsilon`, under each theorem.

    Basic: k eps <= E. Advanced: the quadratic a s^2 + b s <= E in s = sqrt(k),
    a = eps (e^eps - 1), b = eps sqrt(2 ln(1/delta')). Simplified: 2 eps sqrt(2k ln(1/delta'))
    <= E. Optimal: bisection on k (the KOV epsilon grows with k), starting from the larger of
    the basic and advanced answers (the optimum is never above either). With delta > 0, k is
    also limited by k delta + delta' < 1 (k delta < 1 for basic); each theorem's total delta
    then depends on its own k, so `total_delta` of the result is None. Give exactly one of
    `delta_prime` and `total_delta` (then see `_max_compositions_at_total`).
    """
    _check_mechanism(epsilon, delta)
    if epsilon == 0.0:
        raise ParameterError("epsilon", "in (0, inf) for max_k (with epsilon 0 every k stays within any target)", epsilon)
    NON_NEGATIVE.check("target_epsilon", target_epsilon)
    _check_one_of(delta_prime, total_delta)
    if total_delta is not None:
        return _max_compositions_at_total(epsilon, delta, target_epsilon, total_delta)
    OPEN_UNIT.check("delta_prime", delta_prime)
    warnings: list[str] = []
    delta_cap = _delta_cap(delta, delta_prime)
    basic_cap = _delta_cap(delta, 0.0)
    cap = min(delta_cap, MAX_K_SEARCHED)

    def basic_value(k: int) -> float:
        return k * epsilon

    def advanced_value(k: int) -> float:
        return _advanced_epsilon(epsilon, k, delta_prime)

    def simplified_value(k: int) -> float:
        return 2.0 * epsilon * math.sqrt(2.0 * k * log_factor)

    def optimal_value(k: int) -> float:
        return optimal_epsilon(epsilon, k, delta, delta_prime)

    log_factor = -math.log(delta_prime)
    a = epsilon * _expm1(epsilon)
    b = epsilon * math.sqrt(2.0 * log_factor)
    root = 2.0 * target_epsilon / (b + math.sqrt(b * b + 4.0 * a * target_epsilon))  # sqrt(k), stable form
    basic_k = _largest_k(basic_value, target_epsilon, _guess(target_epsilon / epsilon), basic_cap)
    advanced_k = _largest_k(advanced_value, target_epsilon, _guess(root * root), cap)
    half = target_epsilon / (2.0 * b)
    simplified_k = _largest_k(simplified_value, target_epsilon, _guess(half * half), cap)  # not **: it raises on overflow
    # The optimum is never above the basic or advanced epsilon: their answers are lower bounds.
    optimal_k = _largest_k(optimal_value, target_epsilon, max(min(basic_k, cap), advanced_k), cap)
    for name, value in (("basic", basic_k), ("advanced", advanced_k), ("simplified", simplified_k), ("optimal", optimal_k)):
        if value >= MAX_K_SEARCHED:
            warnings.append(f"max_k under the {name} theorem is at least {MAX_K_SEARCHED:.0e}, the largest k searched.")
        elif delta > 0.0 and value == (basic_cap if name == "basic" else delta_cap):
            total = value * delta + (0.0 if name == "basic" else delta_prime)
            warnings.append(
                f"max_k under the {name} theorem is limited only by the total delta staying below 1: "
                f"at k = {value} it is {total:.6g}, a weak guarantee."
            )

    def entry(k: int, bound) -> InverseEntry:
        if k == 0:
            return InverseEntry(0, None, None)
        return InverseEntry(k, *bound(k))

    basic = entry(basic_k, lambda k: (basic_value(k), k * delta))
    advanced = entry(advanced_k, lambda k: (advanced_value(k), k * delta + delta_prime))
    simplified = entry(simplified_k, lambda k: (simplified_value(k), k * delta + delta_prime))
    valid = simplified_k > 0 and simplified.epsilon < 1.0 and simplified.epsilon >= _advanced_epsilon(epsilon, simplified_k, delta_prime)
    simplified = InverseEntry(simplified.value, simplified.epsilon, simplified.delta, valid)
    optimal = entry(optimal_k, lambda k: (optimal_value(k), k * delta + delta_prime))
    if not valid and simplified_k > 0:
        warnings.extend(_simplified_warning(simplified.epsilon, False))
    entries = {"optimal": optimal, "advanced": advanced, "simplified": simplified, "basic": basic}
    best = max((name for name in entries if entries[name].valid), key=lambda name: entries[name].value)
    return InverseResult(
        question="max_k",
        target_epsilon=target_epsilon,
        epsilon=epsilon,
        k=None,
        delta=delta,
        delta_prime=delta_prime,
        basic=basic,
        advanced=advanced,
        simplified=simplified,
        optimal=optimal,
        best=best,
        warnings=tuple(warnings),
        total_delta=delta_prime if delta == 0.0 else None,
    )


def _max_compositions_at_total(epsilon: float, delta: float, target_epsilon: float, total_delta: float) -> InverseResult:
    """The largest k under each theorem whose epsilon at the one total delta D is within the target.

    Each theorem's k must also let it reach D (`_theorems_at_total`): basic k delta <= D,
    advanced and simplified k delta < D (their delta' = D - k delta), optimal
    1 - (1 - delta)^k <= D. Within those caps every epsilon grows with k at fixed D (the
    advanced ones also through their shrinking delta'; the KOV optimum because composing one
    more mechanism never lowers the privacy profile), so `_largest_k` applies as in the
    slack form. A ParameterError when even one mechanism exceeds D (delta > D).
    """
    _require_reachable([(delta, 1)], total_delta, "delta")
    warnings: list[str] = []

    def slack(k: int) -> float:
        return float(_slack([(delta, k)], total_delta))

    def basic_value(k: int) -> float:
        return k * epsilon

    def advanced_value(k: int) -> float:
        return _advanced_epsilon(epsilon, k, slack(k))

    def simplified_value(k: int) -> float:
        return 2.0 * epsilon * math.sqrt(2.0 * k * -math.log(slack(k)))

    def optimal_value(k: int) -> float:
        log_allowed = _log_allowed_at_total([(delta, k)], total_delta)
        return math.inf if log_allowed is None else min(_optimal_at(epsilon, k, log_allowed), k * epsilon)

    linear_cap = total_delta / delta if delta > 0.0 else math.inf
    basic_cap = _largest_count(lambda k: _slack([(delta, k)], total_delta) >= 0, linear_cap)
    advanced_cap = _largest_count(lambda k: slack(k) > 0.0, linear_cap)
    optimal_cap = _largest_count(
        lambda k: _log_allowed_at_total([(delta, k)], total_delta) is not None,
        math.log1p(-total_delta) / math.log1p(-delta) if delta > 0.0 else math.inf,
    )
    # Guesses from delta' = D, the largest delta' any k has: upper bounds, which _largest_k lowers.
    log_factor = -math.log(total_delta)
    a = epsilon * _expm1(epsilon)
    b = epsilon * math.sqrt(2.0 * log_factor)
    root = 2.0 * target_epsilon / (b + math.sqrt(b * b + 4.0 * a * target_epsilon))  # sqrt(k), stable form
    half = target_epsilon / (2.0 * b)
    basic_k = _largest_k(basic_value, target_epsilon, _guess(target_epsilon / epsilon), basic_cap)
    advanced_k = _largest_k(advanced_value, target_epsilon, _guess(root * root), advanced_cap)
    simplified_k = _largest_k(simplified_value, target_epsilon, _guess(half * half), advanced_cap)
    # The optimum is never above the basic or advanced epsilon at D: their answers are lower bounds.
    optimal_k = _largest_k(optimal_value, target_epsilon, max(basic_k, advanced_k), optimal_cap)

    answers = {
        "optimal": (optimal_k, optimal_cap, optimal_value),
        "advanced": (advanced_k, advanced_cap, advanced_value),
        "simplified": (simplified_k, advanced_cap, simplified_value),
        "basic": (basic_k, basic_cap, basic_value),
    }
    entries = {}
    for name, (k, cap, value) in answers.items():
        if cap == 0:
            entries[name] = InverseEntry(0, math.inf, total_delta, valid=name != "simplified", applicable=False)
            warnings.append(
                f"the {name} theorem does not reach the total delta {total_delta:.6g} even for one mechanism "
                f"of delta {delta:.6g} (reported as max_k 0, epsilon inf)."
            )
            continue
        entries[name] = InverseEntry(k, None, None) if k == 0 else InverseEntry(k, value(k), total_delta)
        if k >= MAX_K_SEARCHED:
            warnings.append(f"max_k under the {name} theorem is at least {MAX_K_SEARCHED:.0e}, the largest k searched.")
        elif delta > 0.0 and k == cap:
            warnings.append(
                f"max_k under the {name} theorem is limited by the total delta {total_delta:.6g}, not by the "
                f"target epsilon: with {k + 1} mechanisms it does not reach that total delta."
            )
    simplified = entries["simplified"]
    if simplified.applicable and simplified_k > 0:
        valid = simplified.epsilon < 1.0 and simplified.epsilon >= advanced_value(simplified_k)
        entries["simplified"] = InverseEntry(simplified.value, simplified.epsilon, simplified.delta, valid)
        warnings.extend(_simplified_warning(simplified.epsilon, valid))
    return InverseResult(
        question="max_k",
        target_epsilon=target_epsilon,
        epsilon=epsilon,
        k=None,
        delta=delta,
        delta_prime=None,
        best=_inverse_best(entries),
        warnings=tuple(warnings),
        total_delta=total_delta,
        **entries,
    )


def _inverse_best(entries: dict[str, InverseEntry]) -> str:
    """The theorem with the largest answer among those that hold (valid and applicable)."""
    names = [name for name in entries if entries[name].valid and entries[name].applicable] or list(entries)
    return max(names, key=lambda name: entries[name].value or 0)


def _largest_count(holds, estimate: float) -> int:
    """The largest k in [0, MAX_K_SEARCHED] with holds(k), for holds true up to some k and false beyond.

    `estimate` is that k up to floating-point rounding (a few units at most): the exact test
    `holds` settles the last units.
    """
    k = MAX_K_SEARCHED if not estimate < MAX_K_SEARCHED else max(int(estimate), 0)
    while k > 0 and not holds(k):
        k -= 1
    while k < MAX_K_SEARCHED and holds(k + 1):
        k += 1
    return k


def max_epsilon_per_mechanism(
    k: int,
    delta: float,
    target_epsilon: float,
    delta_prime: float | None = None,
    total_delta: float | None = None,
) -> InverseResult:
    """The largest per-mechanism eps whose k-fold composition stays within `target_epsilon`.

    Basic: E / k. Simplified: E / (2 sqrt(2k ln(1/delta'))). Advanced and optimal: the root of
    a monotone function of eps, bracketed from below by 0 and from above by doubling; the
    returned value is checked to stay within the target (stepped down by ulps if rounding
    put it a hair above), so it can be used as is. Give exactly one of `delta_prime` (all at
    k delta + delta', basic at k delta) and `total_delta` (all at that one total delta, see
    `_theorems_at_total`).
    """
    PER_MECHANISM_DELTA.check("delta", delta)
    COMPOSITIONS.check("k", k)
    NON_NEGATIVE.check("target_epsilon", target_epsilon)
    _check_one_of(delta_prime, total_delta)
    if total_delta is not None:
        return _max_epsilon_at_total(k, delta, target_epsilon, total_delta)
    OPEN_UNIT.check("delta_prime", delta_prime)
    total_delta = k * delta + delta_prime
    _check_total_delta(total_delta, "k * delta + delta_prime")
    log_factor = -math.log(delta_prime)
    log_allowed = _log_allowed_rr_delta([(delta, k)], delta_prime)

    def advanced_value(epsilon: float) -> float:
        return _advanced_epsilon(epsilon, k, delta_prime)

    def optimal_value(epsilon: float) -> float:
        return _optimal_homogeneous(epsilon, k, log_allowed)

    basic_eps = target_epsilon / k
    while basic_eps * k > target_epsilon:
        basic_eps = math.nextafter(basic_eps, 0.0)
    simplified_eps = target_epsilon / (2.0 * math.sqrt(2.0 * k * log_factor))
    advanced_eps = _largest_epsilon(advanced_value, target_epsilon, simplified_eps)
    optimal_eps = _largest_epsilon(optimal_value, target_epsilon, max(advanced_eps, basic_eps))

    simplified_total = 2.0 * simplified_eps * math.sqrt(2.0 * k * log_factor)
    valid = simplified_total < 1.0 and simplified_total >= advanced_value(simplified_eps)
    warnings = list(_simplified_warning(simplified_total, valid))
    entries = {
        "optimal": InverseEntry(optimal_eps, optimal_value(optimal_eps), total_delta),
        "advanced": InverseEntry(advanced_eps, advanced_value(advanced_eps), total_delta),
        "simplified": InverseEntry(simplified_eps, simplified_total, total_delta, valid),
        "basic": InverseEntry(basic_eps, basic_eps * k, k * delta),
    }
    best = max((name for name in entries if entries[name].valid), key=lambda name: entries[name].value)
    return InverseResult(
        question="max_eps_per_mechanism",
        target_epsilon=target_epsilon,
        epsilon=None,
        k=k,
        delta=delta,
        delta_prime=delta_prime,
        best=best,
        warnings=tuple(warnings),
        total_delta=total_delta,
        **entries,
    )


def _max_epsilon_at_total(k: int, delta: float, target_epsilon: float, total_delta: float) -> InverseResult:
    """max_epsilon_per_mechanism with every theorem at the one total delta D.

    Basic needs k delta <= D, the advanced ones delta' = D - k delta > 0, the optimum
    1 - (1 - delta)^k <= D (else a ParameterError: no theorem reaches D). A theorem that does
    not reach D gets max_eps_per_mechanism None and epsilon inf.
    """
    pairs = [(delta, k)]
    log_allowed = _require_reachable(pairs, total_delta, "1 - (1 - delta)^k")
    slack = _slack(pairs, total_delta)
    warnings: list[str] = []
    missing = InverseEntry(None, math.inf, total_delta, applicable=False)

    def optimal_value(epsilon: float) -> float:
        return _optimal_at(epsilon, k, log_allowed)

    basic_eps = target_epsilon / k
    while basic_eps * k > target_epsilon:
        basic_eps = math.nextafter(basic_eps, 0.0)
    entries = {"optimal": None, "advanced": missing, "simplified": InverseEntry(None, math.inf, total_delta, False, False)}
    advanced_eps = 0.0
    delta_prime = float(slack) if slack > 0 else 0.0
    if delta_prime > 0.0:
        log_factor = -math.log(delta_prime)

        def advanced_value(epsilon: float) -> float:
            return _advanced_epsilon(epsilon, k, delta_prime)

        simplified_eps = target_epsilon / (2.0 * math.sqrt(2.0 * k * log_factor))
        advanced_eps = _largest_epsilon(advanced_value, target_epsilon, simplified_eps)
        simplified_total = 2.0 * simplified_eps * math.sqrt(2.0 * k * log_factor)
        valid = simplified_total < 1.0 and simplified_total >= advanced_value(simplified_eps)
        warnings.extend(_simplified_warning(simplified_total, valid))
        entries["advanced"] = InverseEntry(advanced_eps, advanced_value(advanced_eps), total_delta)
        entries["simplified"] = InverseEntry(simplified_eps, simplified_total, total_delta, valid)
    else:
        warnings.append(
            f"the advanced and simplified theorems do not reach the total delta {total_delta:.6g} with "
            f"k = {k}: they need delta' = total delta - k * delta > 0, and k * delta = "
            f"{k * delta:.6g} (reported as epsilon inf)."
        )
    # k eps_b <= E: the optimum at eps_b is within the target too, a lower bound for its answer.
    optimal_eps = _largest_epsilon(optimal_value, target_epsilon, max(advanced_eps, basic_eps))
    entries["optimal"] = InverseEntry(optimal_eps, optimal_value(optimal_eps), total_delta)
    if slack >= 0:
        entries["basic"] = InverseEntry(basic_eps, basic_eps * k, total_delta)
    else:
        entries["basic"] = missing
        warnings.append(
            f"basic composition does not reach the total delta {total_delta:.6g} with k = {k}: k * delta = "
            f"{k * delta:.6g} is above it (reported as epsilon inf)."
        )
    return InverseResult(
        question="max_eps_per_mechanism",
        target_epsilon=target_epsilon,
        epsilon=None,
        k=k,
        delta=delta,
        delta_prime=None,
        best=_inverse_best(entries),
        warnings=tuple(warnings),
        total_delta=total_delta,
        **entries,
    )


def _largest_epsilon(total, target: float, start: float) -> float:
    """The largest eps with total(eps) <= target, total continuous and increasing from total(0) = 0.

    `start` is a value expected to be within the target. The bracket grows from it by the
    proportional step eps * target / total(eps) (the totals grow about linearly in eps), at
    least 10% and 16-fold while the total is still 0; then Brent's method. The returned value
    is stepped down (by ulps) if rounding put it a hair above the target.
    """
    if target == 0.0:
        return 0.0
    low = 0.0
    high = max(start, 1e-300)
    while True:
        value = total(high)
        if value > target:
            break
        low = high
        high = high * 16.0 if value == 0.0 else max(high * 1.1, high * target / value)
        if math.isinf(high):
            return low
    while math.isinf(total(high)):  # Brent needs finite values: shrink geometrically
        middle = math.sqrt(max(low, 1e-300) * high)
        if total(middle) <= target:
            low = middle
        else:
            high = middle
        if high <= low * (1.0 + 1e-15):
            return low
    value = find_root(lambda e: total(e) - target, low, high, rtol=1e-13)
    step = 2.0**-52
    while total(value) > target and value > low:
        value = max(value * (1.0 - step), low)
        step *= 2.0
    return value


def _largest_k(value, target: float, guess: int, limit: int) -> int:
    """The largest k in [0, limit] with value(k) <= target, for value increasing in k.

    Gallops up from `guess` (exact for the closed forms, so two calls) in steps of at most
    1/8 of k, then closes a wide bracket with Brent's method on the continuous relaxation
    x -> value(floor(x)) (value is smooth at large scale, so this takes a handful of calls
    where bisection would take log2(k)), and settles the last integers by bisection.
    When value is not monotone (the optimal epsilon with delta > 0 falls again once
    k delta nears 1), this finds the end of the first run within the target that the
    1/8 steps do not jump over.
    """
    if limit < 1 or value(1) > target:
        return 0
    low = min(max(guess, 1), limit)
    if value(low) > target:
        low, high = 1, low
    else:
        growth = 1
        while True:
            if low == limit:
                return limit
            candidate = min(low + growth, limit)
            if value(candidate) > target:
                high = candidate
                break
            low = candidate
            growth = max(low // 8, 1)
    # value(low) <= target < value(high)
    if high - low > 8:
        root = find_root(lambda x: value(math.floor(x)) - target, float(low), float(high), xtol=1.0)
        k = min(max(math.floor(root), low), high - 1)
        step = 1
        if value(k) <= target:
            low = k
            while low + step < high and value(low + step) <= target:
                low, step = low + step, 2 * step
            high = min(high, low + step)
        else:
            high = k
            while high - step > low and value(high - step) > target:
                high, step = high - step, 2 * step
            low = max(low, high - step)
    while high - low > 1:
        middle = (low + high) // 2
        if value(middle) <= target:
            low = middle
        else:
            high = middle
    return low


def _guess(value: float) -> int:
    if not math.isfinite(value) or value > MAX_K_SEARCHED:
        return MAX_K_SEARCHED
    return int(value)


def _delta_cap(delta: float, delta_prime: float) -> int:
    """The largest k with k delta + delta' < 1 (MAX_K_SEARCHED when delta = 0)."""
    if delta == 0.0:
        return MAX_K_SEARCHED
    quotient = (1.0 - delta_prime) / delta
    if not quotient < MAX_K_SEARCHED:  # also inf, for a subnormal delta
        return MAX_K_SEARCHED
    k = int(quotient)
    while k > 0 and k * delta + delta_prime >= 1.0:
        k -= 1
    return min(k, MAX_K_SEARCHED)


def _check_mechanism(epsilon: float, delta: float, suffix: str = "") -> None:
    NON_NEGATIVE.check(f"epsilon{suffix}", epsilon)
    if math.isinf(epsilon):
        raise ParameterError(f"epsilon{suffix}", "in [0, inf)", epsilon)
    PER_MECHANISM_DELTA.check(f"delta{suffix}", delta)


def _check_total_delta(total_delta: float, description: str) -> None:
    if not total_delta < 1.0:
        raise ParameterError(description, "below 1 (a total delta of 1 says nothing)", total_delta)
