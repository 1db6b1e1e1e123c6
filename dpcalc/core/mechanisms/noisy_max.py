"""Report noisy max: privacy, noise scale, and the gap that returns the true maximum with probability 1 - beta.

The mechanism adds i.i.d. noise of scale b to each of m scores (each of sensitivity Delta) and
reports the index of the largest noisy score (not the score). Privacy, with c = 1 when the
scores are monotone (adding a record raises every score or lowers every score, as counts do)
and c = 2 otherwise, b = c Delta / eps:

- laplace: Lap(b) noise is eps-DP at b = Delta / eps for monotone queries such as counts
  (Dwork, Roth 2014, "DR", Claim 3.9) and at b = 2 Delta / eps in general (DR Sec. 3.3).
- gumbel: the index of the largest score plus Gumbel(b) noise has law proportional to
  exp(u / b) (the Gumbel-max identity), i.e. the exponential mechanism: eps-DP at b = 2 Delta /
  eps, and at b = Delta / eps for monotone scores (DR Thm 3.10 and the remark after it;
  McSherry, Talwar 2007).
- exponential: one-sided Exp(b) noise (mean b) is the permute-and-flip mechanism (Ding et al.
  2021), eps-DP at b = 2 Delta / eps (McKenna, Sheldon 2020, Thm 1), and at b = Delta / eps for
  monotone scores (McKenna, Sheldon 2020, their remark on monotone quality scores).

One argument covers the three (DR's proof of Claim 3.9): with the other noises fixed, index i
wins from its own noise r* on, and since a neighbour moves every score by at most Delta (all in
the same direction for monotone scores), it still wins from r* + 2 Delta on (r* + Delta); so
P(X >= a + s) >= e^-eps P(X >= a) for all a suffices, s = c Delta, and each noise meets it at
b = s / eps: their hazard rates are at most 1 / b (log-concave densities).

Accuracy. Let the top score exceed every other by at least the gap g, x = g / b. The chance of
reporting another index rises with every other score, so it is largest when all m - 1 others
sit exactly g below the top; at that worst case:

- gumbel (exact): beta = (m - 1) e^-x / (1 + (m - 1) e^-x)  (the exponential mechanism's law).
- exponential (exact): with X_i ~ Exp(1), P(correct) = E[(1 - e^-(X_1 + x))^(m-1)]
  = (1 - (1 - a)^m) / (m a), a = e^-x, so beta = ((1 - a)^m - 1 + m a) / (m a).
- laplace (union bound, an upper bound): the difference of two Lap(b) exceeds g with probability
  (2 + x) e^-x / 4, so beta <= (m - 1)(2 + x) e^-x / 4 (exact for m = 2).

The inverses: gumbel in closed form; laplace by Newton's method on y - ln y = L (y = x + 2,
convex and increasing for y > 1, started right of the root, so the iterates decrease to it);
exponential by bisection between the bounds e^-x / 2 <= beta <= (m - 1) e^-x / 2 (one pair; the
union over the pairs), which bracket the root for every input. All in log space.

Pure Python (math only): this module is on the start-up path of `dpcalc mechanism noisy-max`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from dpcalc.core.mechanisms import exactly_two
from dpcalc.core.mechanisms.accuracy import AccuracyPoint, accuracy_table
from dpcalc.core.validation import OPEN_UNIT, POSITIVE, Interval, ParameterError

Noise = Literal["laplace", "gumbel", "exponential"]
NOISES: tuple[Noise, ...] = ("laplace", "gumbel", "exponential")
# the one of epsilon, gap and beta computed from the other two, or "accuracy": privacy alone, the
# gap at the standard failure probabilities (dpcalc.core.mechanisms.accuracy)
Unknown = Literal["epsilon", "gap", "beta", "accuracy"]

CANDIDATES = Interval(2.0, math.inf, low_closed=True, integer=True)
NON_NEGATIVE_GAP = Interval(0.0, math.inf, low_closed=True)

PRIVACY_SOURCES: dict[Noise, str] = {
    "laplace": "Dwork and Roth 2014, Claim 3.9 (Laplace report noisy max)",
    "gumbel": "Dwork and Roth 2014, Thm 3.10 (the exponential mechanism, Gumbel-max)",
    "exponential": "McKenna and Sheldon 2020, Thm 1 (permute-and-flip); Ding et al. 2021",
}
ACCURACY_BASES: dict[Noise, str] = {
    "laplace": "union bound over the m - 1 pairwise Laplace differences (an upper bound)",
    "gumbel": "exact at the worst case (all other scores gap below the top)",
    "exponential": "exact at the worst case (all other scores gap below the top)",
}
_LOG2 = math.log(2.0)


@dataclass(frozen=True)
class NoisyMaxAccuracy:
    """Report noisy max: its epsilon, noise scale and the (gap, beta) accuracy.

    When the top score exceeds each of the other `candidates` - 1 by at least `gap`, the
    reported index is the top one except with probability at most `beta`. `exact` says whether
    beta is the exact worst-case probability (gumbel, exponential) or a union bound (laplace);
    from privacy alone gap and beta are None, and `accuracy` holds the gap (as `error`) at the
    standard failure probabilities.
    """

    noise: Noise
    epsilon: float
    scale: float
    gap: float | None
    beta: float | None
    candidates: int
    sensitivity: float
    monotone: bool
    solved_for: Unknown
    warnings: tuple[str, ...] = ()
    accuracy: tuple[AccuracyPoint, ...] = ()

    @property
    def exact(self) -> bool:
        """Whether beta is exact at the worst case (else an upper bound)."""
        return self.noise != "laplace"

    @property
    def source(self) -> str:
        """The results used: privacy, then accuracy."""
        return f"{PRIVACY_SOURCES[self.noise]}; accuracy: {ACCURACY_BASES[self.noise]}"


def scale_factor(monotone: bool) -> float:
    """c in b = c Delta / eps: 1 for monotone scores, 2 otherwise (the same for all three noises)."""
    return 1.0 if monotone else 2.0


def log_beta(noise: Noise, scaled_gap: float, candidates: int) -> float:
    """log of the probability of not reporting the top index, x = gap / scale, at the worst case
    (exact for gumbel and exponential, the union bound for laplace; module docstring)."""
    x = scaled_gap
    m = candidates
    log_others = math.log(m - 1)
    if noise == "gumbel":
        z = log_others - x  # beta = 1 / (1 + e^-z)
        return -math.log1p(math.exp(-z)) if z >= 0.0 else z - math.log1p(math.exp(z))
    if noise == "laplace":
        return min(0.0, log_others + math.log(2.0 + x) - x - 2.0 * _LOG2)
    return _log_beta_permute_and_flip(x, m)


def _log_beta_permute_and_flip(x: float, m: int) -> float:
    """log beta for Exp noise: beta = ((1 - a)^m - 1 + m a) / (m a), a = e^-x.

    For m a < 1/2 the numerator is the alternating series sum_{k>=2} C(m, k)(-a)^k, summed term by
    term (ratio (m - k) a / (k + 1) < 1/2) to keep its relative precision; beta =
    (m - 1) a / 2 * S with S = sum_{k>=2} C(m, k) / C(m, 2) (-a)^(k-2). Above, directly.
    """
    log_a = -x
    fm = float(m)
    if math.log(fm) + log_a < -_LOG2:
        a = math.exp(log_a)
        total, term, k = 1.0, 1.0, 2
        while True:
            term *= -(fm - k) * a / (k + 1)
            k += 1
            if term == 0.0 or abs(term) < 1e-17 * abs(total) or k > m:
                total += term
                break
            total += term
        return math.log((fm - 1.0) / 2.0) + log_a + math.log(total)
    a = math.exp(log_a)
    correct = -math.expm1(fm * math.log1p(-a)) / (fm * a) if a < 1.0 else 1.0 / fm
    return math.log1p(-correct)


def gap_for(noise: Noise, beta: float, candidates: int) -> float:
    """The smallest x = gap / scale with (worst-case) failure probability at most beta; 0 when
    equal scores already give beta."""
    target = math.log(beta)
    if target >= log_beta(noise, 0.0, candidates):
        return 0.0
    m = candidates
    log_others = math.log(m - 1)
    if noise == "gumbel":
        # beta = 1 / (1 + e^(x - ln(m - 1))): x = ln(m - 1) + ln((1 - beta) / beta)
        return log_others + math.log1p(-beta) - target
    if noise == "laplace":
        # (m - 1)(2 + x) e^-x / 4 = beta: y - ln y = L, y = 2 + x, L = ln((m - 1) / (4 beta)) + 2
        level = log_others - 2.0 * _LOG2 - target + 2.0
        y = 2.0 * level  # right of the root (level > 2 - ln 2 here, where 2L - ln 2L > L)
        for _ in range(200):
            step = (y - math.log(y) - level) / (1.0 - 1.0 / y)
            if step <= abs(y) * 1e-16:
                break
            y -= step
        return max(0.0, y - 2.0)
    # exponential noise: e^-x / 2 <= beta(x) <= (m - 1) e^-x / 2 brackets the root
    low = max(0.0, -_LOG2 - target)
    high = max(low, log_others - _LOG2 - target)
    while log_beta(noise, high, m) > target:  # float rounding at the bracket's end: step out
        high = high * 2.0 + 1.0
    for _ in range(2000):
        middle = 0.5 * (low + high)
        if middle <= low or middle >= high:
            break
        if log_beta(noise, middle, m) > target:
            low = middle
        else:
            high = middle
    return high  # beta(high) <= beta: the gap returned is sufficient


def noisy_max_accuracy(
    *,
    noise: Noise,
    candidates: int,
    epsilon: float | None = None,
    scale: float | None = None,
    gap: float | None = None,
    beta: float | None = None,
    sensitivity: float = 1.0,
    monotone: bool = False,
) -> NoisyMaxAccuracy:
    """Solve for the one of privacy (epsilon or scale), gap, beta not given; exactly two of the three given.

    epsilon and scale are one quantity (b = c Delta / eps, `scale_factor`): give at most one.
    """
    if noise not in NOISES:
        raise ParameterError("noise", f"one of {', '.join(NOISES)}", noise)
    CANDIDATES.check("candidates", candidates)
    POSITIVE.check("sensitivity", sensitivity)
    if epsilon is not None and scale is not None:
        raise ParameterError("epsilon, scale", "at most one of them given", "both")
    if epsilon is not None:
        POSITIVE.check("epsilon", epsilon)
    if scale is not None:
        POSITIVE.check("scale", scale)
    if gap is not None:
        NON_NEGATIVE_GAP.check("gap", gap)
    if beta is not None:
        OPEN_UNIT.check("beta", beta)
    privacy = epsilon if epsilon is not None else scale
    exactly_two("privacy (epsilon or scale), gap, beta", (("privacy", privacy), ("gap", gap), ("beta", beta)),
                first_alone=True)
    factor = scale_factor(monotone)
    warnings: list[str] = []
    solved: Unknown
    if privacy is None:
        assert gap is not None and beta is not None
        x = gap_for(noise, beta, candidates)
        if x == 0.0:
            raise ParameterError("beta", f"below {math.exp(log_beta(noise, 0.0, candidates)):.6g} (the failure "
                                 f"probability with equal scores: any epsilon gives it)", beta)
        if gap == 0.0:
            raise ParameterError("gap", "in (0, inf) to compute epsilon (a gap of 0 needs infinite epsilon)", gap)
        scale = gap / x
        if scale == 0.0:
            raise ParameterError("gap", f"large enough that the noise scale gap / {x:g} is above 0 in float64", gap)
        epsilon = factor * sensitivity / scale
        solved = "epsilon"
    else:
        if epsilon is None:
            assert scale is not None
            epsilon = factor * sensitivity / scale
        else:
            scale = factor * sensitivity / epsilon
        if gap is None and beta is None:
            solved = "accuracy"
        elif gap is None:
            assert beta is not None
            gap = gap_for(noise, beta, candidates) * scale
            solved = "gap"
        else:
            beta = max(math.exp(log_beta(noise, gap / scale, candidates)), math.ulp(0.0))
            solved = "beta"
    assert epsilon is not None and scale is not None
    if noise == "laplace" and beta is not None and beta >= 1.0:
        warnings.append("the union bound is vacuous at this gap (beta >= 1): raise the gap or epsilon")
    at = scale
    table = accuracy_table(lambda q: gap_for(noise, q, candidates) * at)
    return NoisyMaxAccuracy(noise, epsilon, scale, gap, beta, candidates, sensitivity, monotone, solved,
                            tuple(warnings), table)
