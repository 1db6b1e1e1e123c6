"""The closed-form composition theorems: basic (DR Thm 3.16), advanced (DRV Thm III.3, DR Thm 3.20)
and the simplified corollary (DR Cor. 3.21) with its validity; `compose` applies them, with the
optimal (KOV) epsilon of `optimal`, to k identical mechanisms, at a slack delta' or at one total delta.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

from dpcalc.core.composition.optimal import _exact_bound, _optimal_at, _require_reachable, _slack, optimal_epsilon
from dpcalc.core.composition.results import (
    COMPOSITIONS,
    Bound,
    CompositionResult,
    OptimalBound,
    _check_mechanism,
    _check_one_of,
    _check_total_delta,
)
from dpcalc.core.record import Value
from dpcalc.core.validation import OPEN_UNIT

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
    """eps sqrt(2k ln(1/delta')) + k eps (e^eps - 1) (DRV Thm III.3), 0 for eps = 0."""
    if epsilon == 0.0:
        return 0.0
    return epsilon * math.sqrt(2.0 * k * -math.log(delta_prime)) + k * epsilon * _expm1(epsilon)


def _fsum(values: Iterable[float]) -> float:
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
    return Bound(value, k * delta + delta_prime), _simplified_holds(value, _advanced_epsilon(epsilon, k, delta_prime))


def _simplified_holds(value: float, advanced_epsilon: float) -> bool:
    """Whether the simplified epsilon `value` is a true statement: below 1 (DR Cor. 3.21) and at
    least the advanced epsilon (DRV Thm III.3) it simplifies, at the same k and delta'."""
    return value < 1.0 and value >= advanced_epsilon


# ---------------------------------------------------------------------------------------------
# Homogeneous composition (heterogeneous lists: `heterogeneous.compose_heterogeneous`)

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
        closed = _theorems_at_total(
            pairs,
            total_delta,
            k * epsilon,
            lambda slack: _advanced_epsilon(epsilon, k, slack),
            lambda slack: 2.0 * epsilon * math.sqrt(2.0 * k * -math.log(slack)),
            "k * delta",
        )
        optimal = _exact_bound(min(_optimal_at(epsilon, k, log_allowed), k * epsilon), total_delta)
    else:
        assert delta_prime is not None  # exactly one of the two (_check_one_of)
        OPEN_UNIT.check("delta_prime", delta_prime)
        total_delta = k * delta + delta_prime
        _check_total_delta(total_delta, "k * delta + delta_prime")
        closed = _closed_forms(
            basic_composition(epsilon, delta, k),
            advanced_composition(epsilon, delta, k, delta_prime),
            simplified_composition(epsilon, delta, k, delta_prime)[0],
        )
        # eps_g = k eps always holds (delta_RR(k eps) = 0): the rounding margin never goes above it.
        value = min(optimal_epsilon(epsilon, k, delta, delta_prime), closed.basic.epsilon)
        optimal = _exact_bound(value, total_delta)
    # delta_prime is None when total_delta was given (_check_one_of)
    return _composition_result((epsilon,), (delta,), k, delta_prime, total_delta, closed, optimal)


class _ClosedForms(Value):
    """The basic, advanced and simplified bounds of one composition, whether the simplified one
    holds (DR Cor. 3.21), the theorems that cannot reach the total delta, and the warnings."""

    basic: Bound
    advanced: Bound
    simplified: Bound
    simplified_valid: bool
    not_applicable: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


def _closed_forms(basic: Bound, advanced: Bound, simplified: Bound) -> _ClosedForms:
    """The three closed forms at a slack delta' (all applicable), with the simplified one's validity."""
    valid = _simplified_holds(simplified.epsilon, advanced.epsilon)
    return _ClosedForms(basic, advanced, simplified, valid, (), _simplified_warning(simplified.epsilon, valid))


def _theorems_at_total(
    deltas: list[tuple[float, int]],
    total_delta: float,
    basic_epsilon: float,
    advanced_value: Callable[[float], float],
    simplified_value: Callable[[float], float],
    sum_text: str,
) -> _ClosedForms:
    """The basic, advanced and simplified bounds, all at the total delta D.

    Basic (sum eps_i, sum delta_i) holds at D when sum delta_i <= D (a guarantee at a smaller
    delta holds at a larger one). The advanced and simplified forms hold at sum delta_i + delta'
    for any delta' > 0: at D with delta' = D - sum delta_i, when that is > 0. `advanced_value`
    and `simplified_value` map delta' to their epsilon. A theorem that cannot reach D gets
    epsilon inf (a true but empty statement) and is named in `not_applicable`.
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
        valid = _simplified_holds(value, advanced.epsilon)
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
    return _ClosedForms(basic, advanced, simplified, valid, tuple(missing), tuple(warnings))


def _composition_result(
    epsilons: Sequence[float],
    deltas: Sequence[float],
    k: int,
    delta_prime: float | None,
    total_delta: float,
    closed: _ClosedForms,
    optimal: OptimalBound,
    more_warnings: Sequence[str] = (),
) -> CompositionResult:
    """The CompositionResult of the closed forms and the optimum, naming the best theorem."""
    return CompositionResult(
        k=k,
        epsilons=tuple(epsilons),
        deltas=tuple(deltas),
        delta_prime=delta_prime,
        basic=closed.basic,
        advanced=closed.advanced,
        simplified=closed.simplified,
        simplified_valid=closed.simplified_valid,
        optimal=optimal,
        best=_best(closed, optimal),
        warnings=closed.warnings + tuple(more_warnings),
        total_delta=total_delta,
        not_applicable=closed.not_applicable,
    )


def _best(closed: _ClosedForms, optimal: OptimalBound) -> str:
    """The theorem with the smallest epsilon among those that hold (not applicable ones left out)."""
    candidates = [("optimal", optimal.epsilon), ("advanced", closed.advanced.epsilon)]
    if closed.simplified_valid:
        candidates.append(("simplified", closed.simplified.epsilon))
    candidates.append(("basic", closed.basic.epsilon))
    candidates = [item for item in candidates if item[0] not in closed.not_applicable] or candidates
    return min(candidates, key=lambda item: item[1])[0]


def _simplified_warning(value: float, valid: bool) -> tuple[str, ...]:
    """The warning that the simplified form (DR Cor. 3.21) does not hold, when it does not."""
    if valid:
        return ()
    return (
        f"the simplified form (Dwork-Roth Cor. 3.21) gives {value:.6g}, which does not hold: "
        "the corollary needs it below 1. Use the advanced or optimal epsilon.",
    )

