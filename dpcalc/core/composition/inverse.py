"""The inverse questions: the largest k (`max_compositions`) or per-mechanism epsilon
(`max_epsilon_per_mechanism`) whose composition stays within a target epsilon, under each
theorem, at a slack delta' or at one total delta."""

from __future__ import annotations

import math

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
)
from dpcalc.core.composition.theorems import _advanced_epsilon, _expm1, _simplified_warning
from dpcalc.core.special import find_root
from dpcalc.core.validation import NON_NEGATIVE, OPEN_UNIT, ParameterError

# The largest k the inverse question (max_k) searches up to; beyond it the answer is reported
# as at least this many with a warning.
MAX_K_SEARCHED = 10**10


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

    Each theorem's k must also let it reach D (`theorems._theorems_at_total`): basic k delta <= D,
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
    `theorems._theorems_at_total`).
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

