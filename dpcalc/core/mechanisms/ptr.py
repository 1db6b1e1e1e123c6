"""Propose-test-release (PTR): the test's threshold and cost, "no reply", the release's accuracy.

Sources: Dwork, Lei, "Differential Privacy and Robust Statistics" (STOC 2009), and Dwork,
Roth, "The Algorithmic Foundations of Differential Privacy" (2014), "DR" below, Sec. 7.2
(Propose-Test-Release).

The analyst proposes a bound b on the local sensitivity of f. With d the distance from the
data to instability (the fewest records to change so that some neighbour's local sensitivity
exceeds b; a count, so changing one record moves it by at most 1), PTR with the user's epsilon:

    1. test:    d' = d + Lap(1/epsilon);  if d' <= T = ln(1/delta) / epsilon, answer "no reply"
    2. release: otherwise f(x) + Lap(b / epsilon)

The test is the Laplace mechanism on a sensitivity-1 count (epsilon-DP, DR Thm 3.6); the
release is epsilon-DP between neighbours whose local sensitivity is at most b, and it is
reached from an unstable dataset (d = 0) only when Lap(1/epsilon) > T, with probability
delta / 2 <= delta. PTR is therefore (2 epsilon, delta)-DP in total: the user supplies the
epsilon that each step spends, and the total is twice it.

Closed forms (Z ~ Lap(1/epsilon), so P(Z > z) = e^(-epsilon z)/2 for z >= 0, DR Fact 3.7):

    P(no reply | d) = P(Z <= T - d) = 1 - delta e^(epsilon d) / 2   for d <= T
                                    = e^(-epsilon (d - T)) / 2      for d >= T
    the distance at which PTR replies with probability p:  d_p = T + F^-1(p),
        F^-1 the Lap(1/epsilon) quantile (p >= 1/2: -ln(2 (1 - p)) / epsilon; else ln(2 p) / epsilon)
    release accuracy: P(|Lap(b/epsilon)| > e) = e^(-e epsilon / b), so e = (b/epsilon) ln(1/q) at
        failure probability q (exact), and epsilon = b ln(1/q) / e for a target (e, q).

Pure Python (math only): on the start-up path of `dpcalc mechanism ptr`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from dpcalc.core.validation import NON_NEGATIVE, OPEN_UNIT, POSITIVE, Interval, ParameterError

Unknown = Literal["epsilon", "error", "confidence", "noise"]

SOURCE = "Dwork and Roth 2014, Sec. 7.2 (Propose-Test-Release); Dwork and Lei 2009"
_LOG2 = math.log(2.0)
# q = 1 - confidence: at least the smallest normal float64 (a subnormal carries fewer digits)
FAILURE_PROBABILITY = Interval(2.2250738585072014e-308, 1.0, low_closed=True)


@dataclass(frozen=True)
class PTRResult:
    """One PTR configuration: the user's epsilon (each step spends it), its total (2 epsilon, delta),
    the test's threshold, the release's noise and accuracy, and the "no reply" figures.

    `failure_probability` = 1 - confidence, kept apart because it is the precise quantity when
    the confidence is close to 1; likewise `reply_probability` beside `no_reply_probability`
    (both at the true `distance`). `required_distance` is the distance at which PTR replies
    with probability `target_reply_probability`.
    `solved_for` names what was computed from the rest: epsilon (from an error and confidence),
    noise (from epsilon or the release scale alone), error, or confidence.
    """

    epsilon: float
    delta: float
    bound: float
    error: float | None
    confidence: float | None
    failure_probability: float | None
    distance: float | None
    no_reply_probability: float | None
    reply_probability: float | None
    target_reply_probability: float | None
    required_distance: float | None
    solved_for: Unknown

    @property
    def total_epsilon(self) -> float:
        """The whole mechanism's epsilon: the test's epsilon plus the release's (basic composition, DR Thm 3.16)."""
        return 2.0 * self.epsilon

    @property
    def threshold(self) -> float:
        """T = ln(1/delta) / epsilon: the noisy distance must exceed it for a reply."""
        return -math.log(self.delta) / self.epsilon

    @property
    def scale(self) -> float:
        """The release's Laplace scale b / epsilon."""
        return self.bound / self.epsilon

    @property
    def test_scale(self) -> float:
        """The test's Laplace scale 1 / epsilon (the distance has sensitivity 1)."""
        return 1.0 / self.epsilon

    @property
    def std(self) -> float:
        """The release noise's standard deviation, sqrt(2) b / epsilon (DR Def. 3.2)."""
        return math.sqrt(2.0) * self.scale

    @property
    def unstable_reply_probability(self) -> float:
        """P(reply) at distance 0 (an unstable dataset): delta / 2, the event the delta covers."""
        return self.delta / 2.0

    @property
    def required_records(self) -> int | None:
        """The distance needed, as a whole number of records (the distance is a count): ceil(d_p)."""
        if self.required_distance is None:
            return None
        return max(0, math.ceil(self.required_distance))


def no_reply_probability(distance: float, epsilon: float, delta: float) -> tuple[float, float]:
    """(P(no reply), P(reply)) at a true distance to instability `distance` (module docstring).

    With x = epsilon (T - d) = ln(1/delta) - epsilon d: x >= 0 gives P(reply) = e^(-x)/2,
    x < 0 gives P(no reply) = e^x / 2; the other is its complement. Each is returned at full
    relative precision where it is the small one.
    """
    NON_NEGATIVE.check("distance", distance)
    POSITIVE.check("epsilon", epsilon)
    OPEN_UNIT.check("delta", delta)
    x = -math.log(delta) - epsilon * distance
    if x >= 0.0:
        reply = 0.5 * math.exp(-x)
        return 1.0 - reply, reply
    no_reply = 0.5 * math.exp(x)
    return no_reply, 1.0 - no_reply


def distance_for_reply(reply_probability: float, epsilon: float, delta: float,
                       no_reply: float | None = None) -> float:
    """The true distance at which PTR replies with probability `reply_probability` (module docstring).

    d_p = T + F^-1(p), F^-1 the Lap(1/epsilon) quantile; `no_reply` (1 - p, when known more
    precisely than 1 - p in float64) keeps the precision for p close to 1. A result below 0
    means the probability is met on every dataset (at distance 0 PTR replies with
    probability delta / 2); 0 is returned then.
    """
    OPEN_UNIT.check("reply_probability", reply_probability)
    POSITIVE.check("epsilon", epsilon)
    OPEN_UNIT.check("delta", delta)
    complement = 1.0 - reply_probability if no_reply is None else no_reply
    if reply_probability >= 0.5:
        quantile = -(_LOG2 + math.log(complement))
    else:
        quantile = _LOG2 + math.log(reply_probability)
    return max(0.0, (quantile - math.log(delta)) / epsilon)


def ptr(
    *,
    epsilon: float | None = None,
    scale: float | None = None,
    delta: float,
    bound: float = 1.0,
    error: float | None = None,
    failure_probability: float | None = None,
    distance: float | None = None,
    reply_probability: float | None = None,
    no_reply: float | None = None,
) -> PTRResult:
    """PTR's figures from the user's epsilon (or the release scale b / epsilon) or from a target
    accuracy (error and failure probability q = 1 - confidence): give two of privacy-or-noise,
    error and q, or privacy-or-noise alone. `distance` adds P(no reply) at that distance,
    `reply_probability` the distance that reply probability needs (`no_reply` = 1 - it, exact).
    """
    OPEN_UNIT.check("delta", delta)
    POSITIVE.check("bound", bound)
    if epsilon is not None and scale is not None:
        raise ParameterError("scale", "absent when epsilon is given (epsilon = bound / scale)", scale)
    if epsilon is not None:
        POSITIVE.check("epsilon", epsilon)
    if scale is not None:
        epsilon = bound / POSITIVE.check("scale", scale)
        if not 0.0 < epsilon < math.inf:
            raise ParameterError("scale", f"such that bound / scale is a positive finite epsilon (bound {bound:g})", scale)
    if error is not None:
        POSITIVE.check("error", error)
    if failure_probability is not None:
        FAILURE_PROBABILITY.check("failure_probability", failure_probability)
        if failure_probability == 1.0:
            raise ParameterError("failure_probability", "in (0, 1)", failure_probability)
    solved: Unknown
    if epsilon is None:
        if error is None or failure_probability is None:
            raise ParameterError("epsilon", "given, or computed from an error and a confidence", None)
        epsilon = bound * -math.log(failure_probability) / error
        solved = "epsilon"
        if not 0.0 < epsilon < math.inf:
            raise ParameterError("error", "such that epsilon = bound ln(1/q) / error is finite and positive", error)
    elif error is not None and failure_probability is not None:
        raise ParameterError("error", "absent when epsilon and the confidence are both given", error)
    elif error is not None:
        failure_probability = math.exp(-error * epsilon / bound)
        solved = "confidence"
    elif failure_probability is not None:
        error = bound / epsilon * -math.log(failure_probability)
        solved = "error"
    else:
        solved = "noise"
    no_reply_p = reply_p = None
    if distance is not None:
        no_reply_p, reply_p = no_reply_probability(distance, epsilon, delta)
    required = None
    if reply_probability is not None:
        required = distance_for_reply(reply_probability, epsilon, delta, no_reply)
    return PTRResult(
        epsilon=epsilon,
        delta=delta,
        bound=bound,
        error=error,
        confidence=None if failure_probability is None else 1.0 - failure_probability,
        failure_probability=failure_probability,
        distance=distance,
        no_reply_probability=no_reply_p,
        reply_probability=reply_p,
        target_reply_probability=reply_probability,
        required_distance=required,
        solved_for=solved,
    )
