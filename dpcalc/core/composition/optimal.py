"""The optimal (KOV) epsilon of k identical mechanisms, and its numerics.

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

The allowance delta_RR at a slack delta' (`_log_allowed_rr_delta`) or at a total delta
(`_log_allowed_at_total`, from the exact `_slack`) is computed here too, for every theorem.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

from dpcalc.core.composition.binomial import (
    _log_binomial_pmf_array,
    _log_lower_tail_chernoff,
    _randomized_response_logs,
    log_binomial_pmf,
)
from dpcalc.core.composition.results import (
    COMPOSITIONS,
    OptimalBound,
    _check_mechanism,
    _check_total_delta,
)
from dpcalc.core.special import find_root, log_add, log_sub
from dpcalc.core.validation import NON_NEGATIVE, OPEN_UNIT, ParameterError

if TYPE_CHECKING:
    from fractions import Fraction

# Mass below the window of a binomial is bounded by e^(-TAIL_MARGIN) times the target delta:
# 40 nats (a factor 4e-18) is below float64 resolution of any delta it is added to.
_TAIL_MARGIN = 40.0

# The optimal epsilon is raised by this relative amount so that floating-point rounding cannot
# leave it below the exact optimum: against mpmath (80 digits) the unrounded value is within
# 5e-13 relative for k up to 5000 and within 1e-13 at k = 1e6 (tests/core/test_composition.py).
_ROUNDING_MARGIN = 4e-12


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
    delta_RR is 0). The numerator prod(1 - delta_i) - (1 - D) is exact on the decimals while
    that is cheap (`_exact_reserve`), so D = 1 - prod(1 - delta_i) itself is reached; else it is
    (D - sum delta_i) + f, from the exact `_slack` and the series f of `_survival` (log1p),
    rounded once, so a delta of 1e-12 next to a D of 1e-9 keeps its digits (1 - (1 - D) /
    (1 - delta)^k in floats would not).
    """
    from fractions import Fraction

    deltas = list(deltas)
    log_survival, excess = _survival(deltas)
    numerator = _exact_reserve(deltas, total_delta)
    if numerator is None:
        numerator = _slack(deltas, total_delta) + Fraction(excess)
    if numerator < 0:
        return None
    value = float(numerator)
    return -math.inf if value == 0.0 else math.log(value) - log_survival


def _exact_reserve(deltas: list[tuple[float, int]], total_delta: float) -> Fraction | None:
    """prod(1 - delta_i) - (1 - D), exactly on the decimals of the inputs, or None when that is costly.

    It is 0 when D is the mechanisms' own composed delta 1 - prod(1 - delta_i) (then only
    eps_g = sum eps_i reaches D), and the float series of `_survival` cannot tell 0 from a
    rounding error there: (1, 0.1) and (2, 0.2) at D = 0.28 = 1 - 0.9 x 0.8 would be refused.
    The product is formed in rational arithmetic while it has at most _EXACT_PRODUCT_DIGITS
    decimal digits (count x the digits of delta, summed); beyond that, where a total delta of
    at most 17 significant digits can hardly meet the floor exactly, the caller keeps the float
    series. `deltas` holds (delta, count) pairs.
    """
    from fractions import Fraction

    exact = [(Fraction(repr(delta)), count) for delta, count in deltas if delta > 0.0]
    digits = sum(count * len(str(value.denominator)) for value, count in exact)
    if digits > _EXACT_PRODUCT_DIGITS:
        return None
    product = Fraction(1)
    for value, count in exact:
        product *= (1 - value) ** count
    return product - (1 - Fraction(repr(total_delta)))


# The mechanisms' own composed delta is formed exactly while prod(1 - delta_i) has at most this
# many decimal digits (a few milliseconds of integer arithmetic).
_EXACT_PRODUCT_DIGITS = 2**14


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


def _exact_bound(value: float, total_delta: float) -> OptimalBound:
    """An exactly solved optimum: the true value lies within the rounding margin below `value`."""
    return OptimalBound(value, total_delta, value * (1.0 - 2.0 * _ROUNDING_MARGIN))
