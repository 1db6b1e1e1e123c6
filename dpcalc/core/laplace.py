"""The accuracy of the Laplace mechanism: epsilon, tolerance and probability, each from the other two.

Source: Dwork, Roth, "The Algorithmic Foundations of Differential Privacy" (2014), "DR" below,
Def. 3.3 and Thm 3.6 (M(x) = f(x) + Lap(b) with b = sensitivity / epsilon is epsilon-DP) and
Fact 3.7 (P(|Y| >= t b) = e^(-t)).

With x = tolerance / scale = tolerance * epsilon / sensitivity, one coordinate misses the
tolerance with probability

    two-sided  P(|Y| > t) = e^(-x)          one-sided  P(Y > t) = e^(-x) / 2,

and all of `dims` i.i.d. coordinates are within the tolerance with probability
P = (1 - u)^dims, u the per-coordinate failure above. This is solved exactly (no union bound).
Everything is computed from the failure probability q = 1 - P with log1p/expm1, so that
P = 1 - 1e-12, or P = 1 - 1e-100 given exactly, keeps full relative precision in q:

    q = 1 - (1 - u)^dims = -expm1(dims * log1p(-u))
    u = 1 - (1 - q)^(1/dims) = -expm1(log1p(-q) / dims).

The mechanism's Renyi DP curve, `laplace_rdp` (Mironov 2017, Prop. 6), is here too: the one
implementation that `convert` (a scalar per order) and the RDP accountant (`rdp.phase_rdp`, a
vector over its order grid) both use.

Pure Python (math only): this module is on the start-up path of `dpcalc laplace-eps` and, through
`laplace_rdp`, of `dpcalc convert`.
"""

from __future__ import annotations

import math
from typing import Literal

from dpcalc.core.rdp_conversion import ORDER
from dpcalc.core.record import Value
from dpcalc.core.special import log_add
from dpcalc.core.validation import OPEN_UNIT, POSITIVE, POSITIVE_INTEGER, Interval, ParameterError

Unknown = Literal["epsilon", "tolerance", "probability"]

_LOG2 = math.log(2.0)

# Failure probabilities 1 - P below the smallest normal float64 lose relative precision
# (subnormals carry fewer digits), so they are refused rather than answered inexactly.
_SMALLEST_FAILURE_PROBABILITY = 2.2250738585072014e-308
FAILURE_PROBABILITY = Interval(_SMALLEST_FAILURE_PROBABILITY, 1.0, low_closed=True)
_UNIT_RIGHT_CLOSED = Interval(0.0, 1.0, high_closed=True)


class LaplaceAccuracy(Value):
    """The Laplace mechanism's epsilon, its noise scale and the accuracy it buys.

    `probability` is the chance that all `dims` coordinates are within `tolerance` (only
    above it when `one_sided`); `failure_probability` = 1 - probability, kept separately
    because it is the precise quantity when the probability is close to 1.
    `solved_for` names the one of epsilon, tolerance, probability that was computed.
    """

    epsilon: float
    scale: float
    tolerance: float
    probability: float
    failure_probability: float
    sensitivity: float
    dims: int
    one_sided: bool
    solved_for: Unknown
    warnings: tuple[str, ...] = ()

    @property
    def std(self) -> float:
        """The standard deviation of Lap(b): sqrt(2) * b (its variance is 2 b^2, DR Def. 3.2)."""
        return math.sqrt(2.0) * self.scale


def failure_probability(scaled_tolerance: float, dims: int = 1, one_sided: bool = False) -> float:
    """q = 1 - P(all `dims` coordinates within the tolerance), x = tolerance / scale (DR Fact 3.7).

    Two-sided u = e^(-x), one-sided u = e^(-x)/2; q = -expm1(dims * log1p(-u)), which keeps
    its relative precision when q is tiny (then q ~ dims * u).
    """
    if math.isnan(scaled_tolerance) or scaled_tolerance < 0.0:
        raise ParameterError("scaled_tolerance", "in [0, inf]", scaled_tolerance)
    POSITIVE_INTEGER.check("dims", dims)
    log_u = -scaled_tolerance - (_LOG2 if one_sided else 0.0)
    u = math.exp(log_u)
    if u < 1e-300:
        # q = dims * u * (1 + O(dims * u)): exact to float64 here, and safe from underflow in log space.
        return math.exp(math.log(dims) + log_u)
    return -math.expm1(_log_all_within(log_u, dims))


def _log_all_within(log_u: float, dims: int) -> float:
    """log P(all `dims` coordinates within the tolerance) = dims * log(1 - u), u = e^log_u.

    log1p(-u) for u <= 1/2; for u near 1 (a tolerance far below the scale) 1 - u = -expm1(log_u)
    keeps its precision, and it is 0 (log P = -inf) only at a tolerance of 0.
    """
    if log_u <= -_LOG2:
        return dims * math.log1p(-math.exp(log_u))
    one_minus_u = -math.expm1(log_u)
    return dims * math.log(one_minus_u) if one_minus_u > 0.0 else -math.inf


def scaled_tolerance_for(
    failure_probability: float, dims: int = 1, one_sided: bool = False, probability: float | None = None
) -> float:
    """The x = tolerance / scale at which 1 - P(all `dims` coordinates within) equals q (DR Fact 3.7).

    Inverts `failure_probability` exactly: u = -expm1(log1p(-q) / dims), x = -log u (two-sided)
    or x = -log(2u) (one-sided). One-sided, P >= 2^(-dims) holds at every scale (each
    coordinate is below +t with probability at least 1/2), so x = 0 is returned there.
    `probability` (= 1 - q, when known more precisely than 1 - q in float64) gives log P
    directly for P < 1/2, where log1p(-q) would lose the relative precision of a small P.
    """
    FAILURE_PROBABILITY.check("failure_probability", failure_probability)
    POSITIVE_INTEGER.check("dims", dims)
    if probability is not None and probability < 0.5:
        log_probability = math.log(probability)
    else:
        log_probability = math.log1p(-failure_probability)
    a = -log_probability / dims  # -log(1 - u) > 0
    if a < 1e-300:
        log_u = math.log(-log_probability) - math.log(dims)  # u = a (1 - a/2 ...)
    else:
        log_u = math.log(-math.expm1(-a))
    if one_sided:
        log_u += _LOG2
        if log_u >= 0.0:
            return 0.0
    return -log_u


def laplace_accuracy(
    *,
    tolerance: float | None = None,
    probability: float | None = None,
    epsilon: float | None = None,
    sensitivity: float = 1.0,
    dims: int = 1,
    one_sided: bool = False,
    failure_probability_exact: float | None = None,
) -> LaplaceAccuracy:
    """Solve the Laplace accuracy relation for the one of tolerance, probability, epsilon not given.

    The mechanism adds Lap(sensitivity / epsilon) to each coordinate (DR Def. 3.3, Thm 3.6); the
    relation is DR Fact 3.7 for all `dims` coordinates at once (docs/mathematics.md §4).

    Exactly two of `tolerance`, `probability`, `epsilon` are given. `failure_probability_exact`
    may accompany `probability` with 1 - probability computed exactly from its decimal text
    (1 - 0.999999999999 is 1.0000889e-12 in float64 arithmetic but 1e-12 exactly); it must
    agree with `probability` to float64 rounding.
    """
    given = {"tolerance": tolerance, "probability": probability, "epsilon": epsilon}
    missing = [name for name, value in given.items() if value is None]
    if len(missing) != 1:
        raise ValueError(f"give exactly two of tolerance, probability and epsilon, got {_given_names(given)}")
    POSITIVE.check("sensitivity", sensitivity)
    if math.isinf(sensitivity):
        raise ParameterError("sensitivity", "in (0, inf)", sensitivity)
    POSITIVE_INTEGER.check("dims", dims)
    warnings: list[str] = []
    unknown: Unknown = missing[0]  # type: ignore[assignment]

    q: float | None = None
    if probability is not None:
        # With the exact complement, probability may round to 1.0 (P = 1 - 1e-20 given exactly).
        (OPEN_UNIT if failure_probability_exact is None else _UNIT_RIGHT_CLOSED).check("probability", probability)
        q = 1.0 - probability if failure_probability_exact is None else failure_probability_exact
        if failure_probability_exact is not None and abs((1.0 - q) - probability) > 4.5e-16:
            raise ValueError(
                f"failure_probability_exact={q} does not match probability={probability}"
            )
        FAILURE_PROBABILITY.check("1 - probability", q)
    if tolerance is not None:
        POSITIVE.check("tolerance", tolerance)
    if epsilon is not None:
        POSITIVE.check("epsilon", epsilon)

    if unknown == "probability":
        assert tolerance is not None and epsilon is not None  # the two given
        x = tolerance * epsilon / sensitivity
        q = failure_probability(x, dims, one_sided)
        # P from log P = dims * log(1 - u): keeps its relative precision when P is small.
        log_u = -x - (_LOG2 if one_sided else 0.0)
        probability = 1.0 - q if q < 0.5 else math.exp(_log_all_within(log_u, dims))
    else:
        assert q is not None and probability is not None  # given, with its complement
        # epsilon and the tolerance enter only as their product: x = tolerance * epsilon / sensitivity.
        x = scaled_tolerance_for(q, dims, one_sided, probability)
        if unknown == "epsilon":
            assert tolerance is not None  # the other one given
            epsilon = solved = x * sensitivity / tolerance
            overflow = "epsilon overflows float64: the tolerance is too small for any finite epsilon."
        else:
            assert epsilon is not None  # the other one given
            tolerance = solved = x * sensitivity / epsilon
            overflow = "the tolerance overflows float64 at this epsilon."
        if x == 0.0:
            warnings.append(_one_sided_trivial(dims))
        elif math.isinf(solved):
            warnings.append(overflow)

    scale = sensitivity / epsilon if epsilon > 0.0 else math.inf
    return LaplaceAccuracy(
        epsilon=epsilon,
        scale=scale,
        tolerance=tolerance,
        probability=probability,
        failure_probability=q,
        sensitivity=sensitivity,
        dims=dims,
        one_sided=one_sided,
        solved_for=unknown,
        warnings=tuple(warnings),
    )


def _given_names(given: dict[str, float | None]) -> str:
    names = [name for name, value in given.items() if value is not None]
    return ", ".join(names) if names else "none"


def _one_sided_trivial(dims: int) -> str:
    return (
        f"every noise scale meets this probability one-sided: each coordinate is below +t with "
        f"probability at least 1/2, so all {dims} are with probability at least 2^-{dims}."
    )


# ---------------------------------------------------------------------------------------------
# Renyi DP of the Laplace mechanism

# A sensitivity may be +inf (group privacy carries it past float64): the RDP is then infinite.
_SENSITIVITY = Interval(0.0, math.inf, high_closed=True)


def laplace_rdp(order: float, scale: float, sensitivity: float = 1.0) -> float:
    """RDP at `order` of the Laplace mechanism with noise scale b and L1 sensitivity D.

    Mironov, "Renyi Differential Privacy" (CSF 2017, arXiv 1702.07476), Prop. 6, for sensitivity
    1 and scale b/D (the mechanism with sensitivity D and scale b is the one with sensitivity 1 and
    scale b/D, rescaled): with x = D/b,
        eps(order) = 1/(order - 1) log( order/(2 order - 1) e^((order - 1) x)
                                        + (order - 1)/(2 order - 1) e^(-order x) ).
    With t = order - 1 the bracket minus one is
        ((1 + t) A(t x) + t A(-(1 + t) x)) / (1 + 2t),    A(y) = e^y - 1 - y >= 0,
    (the first-order terms cancel exactly), a sum of non-negative terms: used for t x <= 1, it
    keeps full precision near order 1 and for large b, where the bracket is 1 + O(t x^2). For
    t x > 1 the bracket is summed in log space, with
        log(order/(2 order - 1)) = -log 2 - log1p(-1/(2 order)),
        log(t/(2 order - 1)) = -log 2 - log1p(1/(2t)),
    which, unlike the differences of two logarithms, do not cancel at large orders (log 1e4 -
    log(2e4 - 1) cost up to 4e-15 relative).
    Against mpmath (50 digits) the relative error is below 1e-15 for orders 1.0001 to 1e5 and
    scales 1e-3 to 1e6 (tests/core/test_laplace_rdp.py). +inf for x = inf (a scale whose
    reciprocal overflows, or an infinite sensitivity); as the order grows it tends to x, the
    pure-DP epsilon.
    """
    ORDER.check("order", order)
    POSITIVE.check("scale", scale)
    _SENSITIVITY.check("sensitivity", sensitivity)
    x = sensitivity / scale
    if math.isinf(x):
        return math.inf
    t = order - 1.0
    if t * x <= 1.0:
        excess = ((1.0 + t) * _expm1_minus_identity(t * x) + t * _expm1_minus_identity(-order * x)) / (1.0 + 2.0 * t)
        return math.log1p(excess) / t
    log_high = -(_LOG2 + math.log1p(-0.5 / order))  # log(order / (2 order - 1))
    log_low = -(_LOG2 + math.log1p(0.5 / t))  # log(t / (2 order - 1))
    return log_add(log_high + t * x, log_low - order * x) / t


def _expm1_minus_identity(y: float) -> float:
    """e^y - 1 - y, with its relative precision kept near y = 0 (Taylor series for |y| < 1/2).

    For |y| >= 1/2, expm1(y) - y loses at most a factor 4.7 to cancellation (at y = -1/2:
    -0.393 + 0.5; at y = 1/2: 0.649 - 0.5), about 5e-16 relative.
    """
    if abs(y) >= 0.5:
        return math.expm1(y) - y
    term = 0.5 * y * y
    total = term
    n = 2
    while abs(term) > 1e-17 * abs(total):
        n += 1
        term *= y / n
        total += term
    return total


# ---------------------------------------------------------------------------------------------
# The privacy profile of the Laplace mechanism (docs/mathematics.md §6, "The Laplace mechanism
# as (epsilon, delta)-DP")

# epsilons may be +inf here (a dp source after group privacy, an infinite sensitivity)
_PURE_EPSILON = Interval(0.0, math.inf, low_closed=True, high_closed=True)
_DELTA = Interval(0.0, 1.0, low_closed=True)


def laplace_delta(epsilon: float, pure_epsilon: float) -> float:
    """The tight delta(epsilon) of the Laplace mechanism whose pure-DP epsilon is eps0 = D/b.

    The hockey-stick divergence of P = Lap(0, b) and Q = Lap(D, b) (the same in both orders, by
    the reflection x -> D - x; derived in docs/mathematics.md §6):
        delta(eps) = 1 - e^((eps - eps0)/2)  for 0 <= eps < eps0,   0 for eps >= eps0,
    computed as -expm1((eps - eps0)/2), with full relative precision near eps0.
    delta(0) = 1 - e^(-eps0/2) is the total variation distance. 1 for eps0 = inf and finite eps.
    """
    _PURE_EPSILON.check("epsilon", epsilon)
    _PURE_EPSILON.check("pure_epsilon", pure_epsilon)
    if epsilon >= pure_epsilon:
        return 0.0
    return -math.expm1(0.5 * (epsilon - pure_epsilon))


def laplace_epsilon(delta: float, pure_epsilon: float) -> float:
    """The smallest epsilon with delta(epsilon) <= delta for the Laplace mechanism with pure-DP
    epsilon eps0 = D/b: max(0, eps0 + 2 log(1 - delta)), the inverse of `laplace_delta`
    (docs/mathematics.md §6). eps0 at delta = 0; inf for eps0 = inf.
    """
    _DELTA.check("delta", delta)
    _PURE_EPSILON.check("pure_epsilon", pure_epsilon)
    return max(0.0, pure_epsilon + 2.0 * math.log1p(-delta))


def laplace_pure_epsilon(epsilon: float, delta: float) -> float:
    """The largest pure-DP epsilon eps0 = D/b of a Laplace mechanism that is (epsilon, delta)-DP:
    eps0 = epsilon - 2 log(1 - delta) (`laplace_epsilon` solved for eps0; docs/mathematics.md §6).

    delta(eps) grows with eps0, so the smallest scale meeting (epsilon, delta) is b = D / eps0.
    epsilon at delta = 0 (pure DP: b = D/epsilon, Dwork, Roth 2014, Thm 3.6).
    """
    _PURE_EPSILON.check("epsilon", epsilon)
    _DELTA.check("delta", delta)
    return epsilon - 2.0 * math.log1p(-delta)

