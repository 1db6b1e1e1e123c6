"""The inverse questions: the largest k (`max_compositions`) or per-mechanism epsilon
(`max_epsilon_per_mechanism`) whose composition stays within a target epsilon, under each
theorem (DR Thm 3.16, DRV Thm III.3, DR Cor. 3.21, KOV Thm 3.3), at a slack delta' or at one
total delta (docs/mathematics.md §5). The searches themselves are in `search`."""

from __future__ import annotations

import math
from collections.abc import Callable

from dpcalc.core.composition.optimal import (
    _log_allowed_at_total,
    _log_allowed_rr_delta,
    _optimal_at,
    _optimal_homogeneous,
    _require_reachable,
    _slack,
    optimal_epsilon,
)
from dpcalc.core.composition.results import (
    COMPOSITIONS,
    PER_MECHANISM_DELTA,
    InverseEntry,
    InverseResult,
    _check_mechanism,
    _check_one_of,
    _check_total_delta,
    _inverse_result,
)
from dpcalc.core.composition.search import (
    MAX_K_SEARCHED,
    delta_cap,
    guess,
    largest_count,
    largest_epsilon,
    largest_k,
)
from dpcalc.core.composition.theorems import _advanced_epsilon, _expm1, _simplified_holds, _simplified_warning
from dpcalc.core.record import replace
from dpcalc.core.validation import NON_NEGATIVE, OPEN_UNIT, ParameterError

# ---------------------------------------------------------------------------------------------
# The largest k


def max_compositions(
    epsilon: float,
    delta: float,
    target_epsilon: float,
    delta_prime: float | None = None,
    total_delta: float | None = None,
) -> InverseResult:
    """The largest k whose composition stays within `target_epsilon`, under each theorem.

    Basic (DR Thm 3.16): k eps <= E. Advanced (DRV Thm III.3): the quadratic a s^2 + b s <= E
    in s = sqrt(k), a = eps (e^eps - 1), b = eps sqrt(2 ln(1/delta')). Simplified (DR Cor. 3.21):
    2 eps sqrt(2k ln(1/delta')) <= E. Optimal (KOV Thm 3.3): bisection on k (the KOV epsilon
    grows with k), starting from the larger of the basic and advanced answers (the optimum is
    never above either). With delta > 0, k is also limited by k delta + delta' < 1 (k delta < 1
    for basic); each theorem's total delta then depends on its own k, so `total_delta` of the
    result is None. Give exactly one of `delta_prime` and `total_delta` (then see
    `_max_compositions_at_total`).
    """
    _check_mechanism(epsilon, delta)
    if epsilon == 0.0:
        raise ParameterError("epsilon", "in (0, inf) for max_k (with epsilon 0 every k stays within any target)", epsilon)
    NON_NEGATIVE.check("target_epsilon", target_epsilon)
    _check_one_of(delta_prime, total_delta)
    if total_delta is not None:
        return _max_compositions_at_total(epsilon, delta, target_epsilon, total_delta)
    assert delta_prime is not None  # exactly one of the two (_check_one_of)
    OPEN_UNIT.check("delta_prime", delta_prime)
    warnings: list[str] = []
    slack_cap = delta_cap(delta, delta_prime)
    basic_cap = delta_cap(delta, 0.0)
    cap = min(slack_cap, MAX_K_SEARCHED)
    log_factor = -math.log(delta_prime)

    def basic_value(k: int) -> float:
        return k * epsilon

    def advanced_value(k: int) -> float:
        return _advanced_epsilon(epsilon, k, delta_prime)

    def simplified_value(k: int) -> float:
        return 2.0 * epsilon * math.sqrt(2.0 * k * log_factor)

    def optimal_value(k: int) -> float:
        return optimal_epsilon(epsilon, k, delta, delta_prime)

    basic_guess, advanced_guess, simplified_guess = _closed_form_guesses(epsilon, target_epsilon, delta_prime)
    basic_k = largest_k(basic_value, target_epsilon, basic_guess, basic_cap)
    advanced_k = largest_k(advanced_value, target_epsilon, advanced_guess, cap)
    simplified_k = largest_k(simplified_value, target_epsilon, simplified_guess, cap)
    # The optimum is never above the basic or advanced epsilon: their answers are lower bounds.
    optimal_k = largest_k(optimal_value, target_epsilon, max(min(basic_k, cap), advanced_k), cap)
    for name, value in (("basic", basic_k), ("advanced", advanced_k), ("simplified", simplified_k), ("optimal", optimal_k)):
        total = value * delta + (0.0 if name == "basic" else delta_prime)
        warnings.extend(_limit_warning(
            name, value, basic_cap if name == "basic" else slack_cap, delta,
            f"only by the total delta staying below 1: at k = {value} it is {total:.6g}, a weak guarantee.",
        ))

    def entry(k: int, value: Callable[[int], float], entry_delta: float) -> InverseEntry:
        return InverseEntry(0, None, None) if k == 0 else InverseEntry(k, value(k), entry_delta)

    simplified = entry(simplified_k, simplified_value, simplified_k * delta + delta_prime)
    if simplified_k > 0:
        simplified, found = _checked_simplified(simplified, advanced_value(simplified_k))
        warnings.extend(found)
    else:
        simplified = replace(simplified, valid=False)
    entries = {
        "optimal": entry(optimal_k, optimal_value, optimal_k * delta + delta_prime),
        "advanced": entry(advanced_k, advanced_value, advanced_k * delta + delta_prime),
        "simplified": simplified,
        "basic": entry(basic_k, basic_value, basic_k * delta),
    }
    return _inverse_result(
        "max_k", target_epsilon, delta, entries, warnings,
        epsilon=epsilon, delta_prime=delta_prime, total_delta=delta_prime if delta == 0.0 else None,
    )


def _max_compositions_at_total(epsilon: float, delta: float, target_epsilon: float, total_delta: float) -> InverseResult:
    """The largest k under each theorem whose epsilon at the one total delta D is within the target.

    Each theorem's k must also let it reach D (`theorems._theorems_at_total`): basic k delta <= D,
    advanced and simplified k delta < D (their delta' = D - k delta), optimal
    1 - (1 - delta)^k <= D. Within those caps every epsilon grows with k at fixed D (the
    advanced ones also through their shrinking delta'; the KOV optimum because composing one
    more mechanism never lowers the privacy profile), so `search.largest_k` applies as in the
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
    basic_cap = largest_count(lambda k: _slack([(delta, k)], total_delta) >= 0, linear_cap)
    advanced_cap = largest_count(lambda k: slack(k) > 0.0, linear_cap)
    optimal_cap = largest_count(
        lambda k: _log_allowed_at_total([(delta, k)], total_delta) is not None,
        math.log1p(-total_delta) / math.log1p(-delta) if delta > 0.0 else math.inf,
    )
    # Guesses from delta' = D, the largest delta' any k has: upper bounds, which largest_k lowers.
    basic_guess, advanced_guess, simplified_guess = _closed_form_guesses(epsilon, target_epsilon, total_delta)
    basic_k = largest_k(basic_value, target_epsilon, basic_guess, basic_cap)
    advanced_k = largest_k(advanced_value, target_epsilon, advanced_guess, advanced_cap)
    simplified_k = largest_k(simplified_value, target_epsilon, simplified_guess, advanced_cap)
    # The optimum is never above the basic or advanced epsilon at D: their answers are lower bounds.
    optimal_k = largest_k(optimal_value, target_epsilon, max(basic_k, advanced_k), optimal_cap)

    answers = {
        "optimal": (optimal_k, optimal_cap, optimal_value),
        "advanced": (advanced_k, advanced_cap, advanced_value),
        "simplified": (simplified_k, advanced_cap, simplified_value),
        "basic": (basic_k, basic_cap, basic_value),
    }
    entries: dict[str, InverseEntry] = {}
    for name, (k, cap, value) in answers.items():
        if cap == 0:
            entries[name] = InverseEntry(0, math.inf, total_delta, valid=name != "simplified", applicable=False)
            warnings.append(
                f"the {name} theorem does not reach the total delta {total_delta:.6g} even for one mechanism "
                f"of delta {delta:.6g} (reported as max_k 0, epsilon inf)."
            )
            continue
        entries[name] = InverseEntry(k, None, None) if k == 0 else InverseEntry(k, value(k), total_delta)
        warnings.extend(_limit_warning(
            name, k, cap, delta,
            f"by the total delta {total_delta:.6g}, not by the target epsilon: with {k + 1} mechanisms it "
            "does not reach that total delta.",
        ))
    if entries["simplified"].applicable and simplified_k > 0:
        entries["simplified"], found = _checked_simplified(entries["simplified"], advanced_value(simplified_k))
        warnings.extend(found)
    return _inverse_result("max_k", target_epsilon, delta, entries, warnings, epsilon=epsilon, total_delta=total_delta)


def _closed_form_guesses(epsilon: float, target_epsilon: float, delta_prime: float) -> tuple[int, int, int]:
    """The closed-form max_k of basic, advanced and simplified at slack delta': starting guesses for
    `search.largest_k` (exact at a fixed delta', upper bounds when delta' shrinks with k).

    Basic E / eps; advanced s^2 for the root s of a s^2 + b s = E, a = eps (e^eps - 1),
    b = eps sqrt(2 ln(1/delta')) (DRV Thm III.3); simplified (E / 2b)^2 (DR Cor. 3.21).
    """
    a = epsilon * _expm1(epsilon)
    b = epsilon * math.sqrt(2.0 * -math.log(delta_prime))
    root = 2.0 * target_epsilon / (b + math.sqrt(b * b + 4.0 * a * target_epsilon))  # sqrt(k), stable form
    half = target_epsilon / (2.0 * b)
    return guess(target_epsilon / epsilon), guess(root * root), guess(half * half)  # not **: it raises on overflow


def _limit_warning(name: str, k: int, cap: int, delta: float, capped: str) -> tuple[str, ...]:
    """The warning when a theorem's max_k is the end of the search or the delta cap, not the target."""
    if k >= MAX_K_SEARCHED:
        return (f"max_k under the {name} theorem is at least {MAX_K_SEARCHED:.0e}, the largest k searched.",)
    if delta > 0.0 and k == cap:
        return (f"max_k under the {name} theorem is limited {capped}",)
    return ()


# ---------------------------------------------------------------------------------------------
# The largest epsilon per mechanism


def max_epsilon_per_mechanism(
    k: int,
    delta: float,
    target_epsilon: float,
    delta_prime: float | None = None,
    total_delta: float | None = None,
) -> InverseResult:
    """The largest per-mechanism eps whose k-fold composition stays within `target_epsilon`.

    Basic (DR Thm 3.16): E / k. Simplified (DR Cor. 3.21): E / (2 sqrt(2k ln(1/delta'))).
    Advanced (DRV Thm III.3) and optimal (KOV Thm 3.3): the root of a monotone function of
    eps, bracketed from below by 0 and from above by doubling; the returned value is checked
    to stay within the target (stepped down by ulps if rounding put it a hair above), so it
    can be used as is. Give exactly one of `delta_prime` (all at k delta + delta', basic at
    k delta) and `total_delta` (all at that one total delta, see `theorems._theorems_at_total`).
    """
    PER_MECHANISM_DELTA.check("delta", delta)
    COMPOSITIONS.check("k", k)
    NON_NEGATIVE.check("target_epsilon", target_epsilon)
    _check_one_of(delta_prime, total_delta)
    if total_delta is not None:
        return _max_epsilon_at_total(k, delta, target_epsilon, total_delta)
    assert delta_prime is not None  # exactly one of the two (_check_one_of)
    OPEN_UNIT.check("delta_prime", delta_prime)
    total_delta = k * delta + delta_prime
    _check_total_delta(total_delta, "k * delta + delta_prime")
    log_allowed = _log_allowed_rr_delta([(delta, k)], delta_prime)

    def optimal_value(epsilon: float) -> float:
        return _optimal_homogeneous(epsilon, k, log_allowed)

    basic_eps = _basic_epsilon(k, target_epsilon)
    advanced, simplified, warnings = _advanced_answers(k, delta_prime, target_epsilon, total_delta)
    optimal_eps = largest_epsilon(optimal_value, target_epsilon, max(advanced.value or 0.0, basic_eps))
    entries = {
        "optimal": InverseEntry(optimal_eps, optimal_value(optimal_eps), total_delta),
        "advanced": advanced,
        "simplified": simplified,
        "basic": InverseEntry(basic_eps, basic_eps * k, k * delta),
    }
    return _inverse_result(
        "max_eps_per_mechanism", target_epsilon, delta, entries, warnings,
        k=k, delta_prime=delta_prime, total_delta=total_delta,
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

    basic_eps = _basic_epsilon(k, target_epsilon)
    delta_prime = float(slack) if slack > 0 else 0.0
    if delta_prime > 0.0:
        advanced, simplified, found = _advanced_answers(k, delta_prime, target_epsilon, total_delta)
        warnings.extend(found)
    else:
        advanced, simplified = missing, InverseEntry(None, math.inf, total_delta, False, False)
        warnings.append(
            f"the advanced and simplified theorems do not reach the total delta {total_delta:.6g} with "
            f"k = {k}: they need delta' = total delta - k * delta > 0, and k * delta = "
            f"{k * delta:.6g} (reported as epsilon inf)."
        )
    # k eps_b <= E: the optimum at eps_b is within the target too, a lower bound for its answer.
    optimal_eps = largest_epsilon(optimal_value, target_epsilon, max(advanced.value or 0.0, basic_eps))
    basic = InverseEntry(basic_eps, basic_eps * k, total_delta) if slack >= 0 else missing
    if slack < 0:
        warnings.append(
            f"basic composition does not reach the total delta {total_delta:.6g} with k = {k}: k * delta = "
            f"{k * delta:.6g} is above it (reported as epsilon inf)."
        )
    entries = {
        "optimal": InverseEntry(optimal_eps, optimal_value(optimal_eps), total_delta),
        "advanced": advanced,
        "simplified": simplified,
        "basic": basic,
    }
    return _inverse_result("max_eps_per_mechanism", target_epsilon, delta, entries, warnings, k=k, total_delta=total_delta)


def _basic_epsilon(k: int, target_epsilon: float) -> float:
    """E / k, stepped down by ulps until k eps <= E holds in float64 (DR Thm 3.16)."""
    basic_eps = target_epsilon / k
    while basic_eps * k > target_epsilon:
        basic_eps = math.nextafter(basic_eps, 0.0)
    return basic_eps


def _advanced_answers(
    k: int, delta_prime: float, target_epsilon: float, total_delta: float
) -> tuple[InverseEntry, InverseEntry, list[str]]:
    """The advanced (DRV Thm III.3) and simplified (DR Cor. 3.21) largest eps at slack delta' > 0,
    as entries at `total_delta`, and the simplified form's warning when it does not hold."""
    log_factor = -math.log(delta_prime)

    def advanced_value(epsilon: float) -> float:
        return _advanced_epsilon(epsilon, k, delta_prime)

    simplified_eps = target_epsilon / (2.0 * math.sqrt(2.0 * k * log_factor))
    advanced_eps = largest_epsilon(advanced_value, target_epsilon, simplified_eps)
    simplified_total = 2.0 * simplified_eps * math.sqrt(2.0 * k * log_factor)
    valid = _simplified_holds(simplified_total, advanced_value(simplified_eps))
    return (
        InverseEntry(advanced_eps, advanced_value(advanced_eps), total_delta),
        InverseEntry(simplified_eps, simplified_total, total_delta, valid),
        list(_simplified_warning(simplified_total, valid)),
    )


# ---------------------------------------------------------------------------------------------
# Shared by both questions (and `results._inverse_result`)


def _checked_simplified(simplified: InverseEntry, advanced_epsilon: float) -> tuple[InverseEntry, tuple[str, ...]]:
    """The simplified entry with its validity (DR Cor. 3.21: below 1 and at least the advanced
    epsilon at the same k), and the warning when it does not hold."""
    assert simplified.epsilon is not None  # an entry with k > 0 carries its epsilon
    valid = _simplified_holds(simplified.epsilon, advanced_epsilon)
    return replace(simplified, valid=valid), _simplified_warning(simplified.epsilon, valid)
