"""Randomized response, binary and k-ary: epsilon, flip probability and the estimate's error.

Sources: Warner, "Randomized response" (JASA 1965) for the binary mechanism; Kairouz, Bonawitz,
Ramage, "Discrete distribution estimation under local privacy" (ICML 2016), k-ary randomized
response (k-RR); Wang, Blocki, Li, Jha, "Locally differentially private protocols for frequency
estimation" (USENIX Security 2017), "WBLJ", Sec. 3 (pure LDP protocols: the debiased estimator
and its exact variance) and Sec. 4.1 (direct encoding, which is k-RR).

Each respondent reports their true value (one of k) with probability p = e^eps / (e^eps + k - 1)
and each other value with probability q = 1 / (e^eps + k - 1): p / q = e^eps, so the mechanism
is eps-LDP, and no smaller epsilon holds (the likelihood ratio e^eps is attained). The flip
probability, the chance of reporting a value other than the true one, is
    f = (k - 1) q = (k - 1) / (e^eps + k - 1),    eps = log(k - 1) + log(1 - f) - log f.
k = 2 is Warner's binary mechanism (f = 1 / (1 + e^eps)).

Estimation: with c_v of n reports equal to v, the debiased frequency is
    hat phi_v = (c_v / n - q) / (p - q)
(WBLJ Sec. 3), unbiased. c_v is a sum of n independent Bernoullis, n phi_v of them with mean p
and the others with mean q, so exactly
    Var(hat phi_v) = [q (1 - q) + phi_v (p - q)(1 - p - q)] / (n (p - q)^2)
                   = [(1 + phi_v (k - 2)) e^eps + (k - 2)(1 - phi_v)] / (n (e^eps - 1)^2)
(WBLJ Sec. 3's variance, divided by n^2; the second line substitutes p, q). It grows with
phi_v (slope (k - 2)/(n (e^eps - 1)) >= 0), so its largest value over phi_v in [0, 1] is at
phi_v = 1: (k - 1) e^eps / (n (e^eps - 1)^2); for k = 2 it does not depend on phi_v.
With w = e^eps - 1 = expm1(eps), a = 1 + phi (k - 2) and b = (k - 2)(1 - phi):
    n Var = (a w + a + b) / w^2,
solved for w given a target standard error s and n (V = n s^2):
    V w^2 - a w - (a + b) = 0,    w = (a + sqrt(a^2 + 4 V (a + b))) / (2 V)
(both terms positive: no cancellation), eps = log1p(w); and for n given eps and s:
n = ceil(n Var / s^2) (a relative excess below 1e-12 over an integer is taken as rounding).

Pure Python (math only): on the start-up path of `dpcalc mechanism randomized-response`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from dpcalc.core.validation import MAX_COUNT, Interval, ParameterError

Unknown = Literal["epsilon", "respondents", "std_error", "none"]

SOURCE = ("Warner 1965; Kairouz, Bonawitz and Ramage 2016 (k-RR, eps-LDP); Wang, Blocki, Li and Jha 2017, "
          "Sec. 3 and 4.1 (debiased estimator, exact variance)")

_K = Interval(2.0, math.inf, low_closed=True, integer=True)
_POSITIVE_FINITE = Interval(0.0, math.inf)
_UNIT_CLOSED = Interval(0.0, 1.0, low_closed=True, high_closed=True)
_RESPONDENTS = Interval(1.0, math.inf, low_closed=True, integer=True)


def flip_interval(k: int) -> Interval:
    """The flip probabilities of k-RR at some eps > 0: (0, (k - 1)/k) (eps = 0 is f = (k - 1)/k)."""
    return Interval(0.0, (k - 1) / k)


@dataclass(frozen=True)
class RandomizedResponse:
    """k-ary randomized response: its epsilon, flip probability, and (with `respondents`) the
    standard error of the debiased frequency estimate at `frequency` (None: the worst case
    over frequencies, phi = 1)."""

    epsilon: float
    k: int
    flip_probability: float
    keep_probability: float
    other_probability: float
    respondents: int | None
    std_error: float | None
    frequency: float | None
    solved_for: Unknown
    source: str = SOURCE
    warnings: tuple[str, ...] = ()

    @property
    def variance(self) -> float | None:
        """Var(hat phi) = std_error^2 for n respondents (WBLJ Sec. 3)."""
        return None if self.std_error is None else self.std_error**2


def flip_probability(epsilon: float, k: int = 2) -> float:
    """f = (k - 1) / (e^eps + k - 1) = 1 / (1 + e^(eps - log(k - 1))), the logistic function of
    log(k - 1) - eps, taken so that neither side loses relative precision."""
    z = math.log(k - 1) - epsilon
    if z >= 0.0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def epsilon_of_flip(flip: float, k: int = 2) -> float:
    """eps = log(k - 1) + log1p(-f) - log f, the inverse of `flip_probability`."""
    return math.log(k - 1) + math.log1p(-flip) - math.log(flip)


def scaled_variance(epsilon: float, k: int = 2, frequency: float | None = None) -> float:
    """n Var(hat phi) = (a w + a + b) / w^2 (the module docstring), w = expm1(eps); at the worst
    frequency phi = 1 when `frequency` is None."""
    phi = 1.0 if frequency is None else frequency
    a = 1.0 + phi * (k - 2)
    b = (k - 2) * (1.0 - phi)
    if epsilon > _LARGE_EPSILON:
        # w = e^eps overflows: n Var = a e^-eps (1 + O(e^-eps)), to float64 precision here
        return a * math.exp(-epsilon)
    w = math.expm1(epsilon)
    return (a * w + a + b) / w / w  # divided twice: w^2 would underflow for eps below 1e-154


def std_error_of(epsilon: float, k: int, respondents: int, frequency: float | None = None) -> float:
    """sqrt(Var(hat phi)) = sqrt((a w + a + b) / n) / w (`scaled_variance`, in an order that
    neither overflows nor underflows for eps from 1e-300 to 1e300 and n up to 1e300)."""
    phi = 1.0 if frequency is None else frequency
    a = 1.0 + phi * (k - 2)
    b = (k - 2) * (1.0 - phi)
    if epsilon > _LARGE_EPSILON:
        return math.sqrt(a / respondents) * math.exp(-0.5 * epsilon)
    w = math.expm1(epsilon)
    return math.sqrt((a * w + a + b) / respondents) / w


# Above this epsilon e^eps is near float64's limit; n Var is then a e^-eps to float64 precision.
_LARGE_EPSILON = 700.0


def _epsilon_for_scaled_variance(target: float, k: int, frequency: float | None) -> float:
    """The eps with n Var = `target` (the positive root of V w^2 - a w - (a + b), eps = log1p(w))."""
    phi = 1.0 if frequency is None else frequency
    a = 1.0 + phi * (k - 2)
    b = (k - 2) * (1.0 - phi)
    w = (a + math.sqrt(a * a + 4.0 * target * (a + b))) / (2.0 * target)
    return math.log1p(w)


def randomized_response(
    *,
    epsilon: float | None = None,
    flip: float | None = None,
    k: int = 2,
    respondents: int | None = None,
    std_error: float | None = None,
    frequency: float | None = None,
) -> RandomizedResponse:
    """Solve k-RR for the one of privacy (epsilon, or the flip probability), respondents and
    standard error not given; with privacy alone, convert between epsilon and the flip
    probability (docs/mathematics.md, "Mechanisms: randomized-response").
    """
    if epsilon is not None and flip is not None:
        raise ValueError("give epsilon or flip, not both")
    _K.check("k", k)
    if frequency is not None:
        _UNIT_CLOSED.check("frequency", frequency)
    if respondents is not None:
        _RESPONDENTS.check("respondents", respondents)
        if respondents >= MAX_COUNT:
            raise ParameterError("respondents", "below 1e300", respondents)
    if std_error is not None:
        _POSITIVE_FINITE.check("std_error", std_error)
    privacy_given = epsilon is not None or flip is not None
    given = sum((privacy_given, respondents is not None, std_error is not None))
    if given == 3 or not (privacy_given or given == 2):
        raise ValueError("give two of (epsilon or flip), respondents and std_error, or privacy alone")
    warnings: list[str] = []
    unknown: Unknown = "none"
    if flip is not None:
        flip_interval(k).check("flip", flip)
        epsilon = epsilon_of_flip(flip, k)
    elif epsilon is not None:
        _POSITIVE_FINITE.check("epsilon", epsilon)
    if epsilon is None:
        assert respondents is not None and std_error is not None
        unknown = "epsilon"
        target = respondents * std_error * std_error
        epsilon = _epsilon_for_scaled_variance(target, k, frequency) if target > 0.0 else math.inf
        if math.isinf(epsilon):
            raise ParameterError("std_error", "large enough for a finite epsilon at these respondents", std_error)
    elif respondents is not None:
        unknown = "std_error" if std_error is None else unknown
    elif std_error is not None:
        unknown = "respondents"
        ratio = std_error_of(epsilon, k, 1, frequency) / std_error
        needed = ratio * ratio  # inf, not OverflowError, past float64
        if not needed < MAX_COUNT:
            raise ParameterError("std_error", "large enough that fewer than 1e300 respondents reach it", std_error)
        # rounded up; a relative excess below 1e-12 is the float rounding of an exact integer (so the
        # standard error reached is the target to within 1e-12 relative)
        respondents = max(1, math.ceil(needed * (1.0 - 1e-12)))
    if flip is None:
        flip = flip_probability(epsilon, k)
    keep = 1.0 - flip
    # q = 1 / (e^eps + k - 1) = flip / (k - 1)
    other = flip / (k - 1)
    achieved: float | None = None
    if respondents is not None:
        achieved = std_error_of(epsilon, k, respondents, frequency)
        if unknown == "epsilon" and std_error is not None:
            achieved = std_error
    if k == 2 and frequency is not None:
        warnings.append("k = 2: the standard error does not depend on the frequency.")
    return RandomizedResponse(
        epsilon=epsilon,
        k=int(k),
        flip_probability=flip,
        keep_probability=keep,
        other_probability=other,
        respondents=None if respondents is None else int(respondents),
        std_error=achieved,
        frequency=frequency,
        solved_for=unknown,
        warnings=tuple(warnings),
    )
