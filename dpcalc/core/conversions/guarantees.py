"""Conversions between guarantees (pure Python: on the start-up path of `convert`).

Pure DP as mu-GDP (Dong, Roth, Su, JRSS-B 2022, arXiv 1905.02383, "DRS") and as RDP (the
randomized-response curve), trade-off curves of (epsilon, delta)-DP, and group privacy
(docs/mathematics.md §1, §2, §6). The dispatch of `dpcalc convert` over these is in
`dpcalc.core.conversions.dispatch`.
"""

from __future__ import annotations

import math

from dpcalc.core.limits import TRADEOFF_POINTS
from dpcalc.core.rdp_conversion import ORDER
from dpcalc.core.special import log_add, log_expm1
from dpcalc.core.validation import POSITIVE_INTEGER, Interval

# The ranges of a source guarantee. Group privacy may carry a finite input to a vacuous one
# (delta = 1) or past float64 (inf), and both must still convert, so these include the ends.
DP_DELTA = Interval(0.0, 1.0, low_closed=True, high_closed=True)  # 0 is pure DP, 1 vacuous
EXTENDED_NON_NEGATIVE = Interval(0.0, math.inf, low_closed=True, high_closed=True)
EXTENDED_POSITIVE = Interval(0.0, math.inf, high_closed=True)


# ---------------------------------------------------------------------------------------------
# Pure epsilon-DP as GDP and RDP; RDP curves of single mechanisms (docs/mathematics.md §2, §6)


def pure_dp_to_mu(epsilon: float) -> float:
    """The smallest mu such that every eps-DP mechanism is mu-GDP: mu = 2 Phi^{-1}(e^eps / (1 + e^eps)).

    eps-DP is f_{eps,0}-DP (Wasserman, Zhou 2010; DRS §2), and f_{eps,0} is the
    maximum of two lines meeting on the diagonal at alpha* = 1/(1 + e^eps). G_mu is convex with
    G_mu(0) = 1 = f(0) and G_mu(1) = 0 = f(1), so G_mu <= f everywhere iff G_mu(alpha*) <= alpha*,
    i.e. iff the diagonal point Phi(-mu/2) of G_mu is at most alpha*. Tight: randomized response
    is eps-DP with trade-off exactly f_{eps,0}. Then 2 Phi(mu/2) - 1 = tanh(eps/2).
    """
    EXTENDED_NON_NEGATIVE.check("epsilon", epsilon)
    if math.isinf(epsilon):
        return math.inf
    # here, not at the top: the conversions that do not calibrate Gaussian noise never load it (start-up)
    from dpcalc.core.conversions.gaussian import _mu_with_max_advantage

    log_tail = -epsilon - math.log1p(math.exp(-epsilon))  # log(1 / (1 + e^eps))
    return _mu_with_max_advantage(math.tanh(0.5 * epsilon), log_tail)


def randomized_response_rdp(order: float, epsilon: float) -> float:
    """Renyi divergence of order `order` of eps-randomized response: the RDP curve of pure eps-DP.

    Randomized response (Mironov 2017): with w = e^eps/(1 + e^eps),
        D = log(w e^x + (1 - w) e^(-x)) / (order - 1),     x = (order - 1) eps.
    Every eps-DP pair is a post-processing of randomized response (Kairouz, Oh, Viswanath
    2015), so by data processing no eps-DP mechanism has a larger Renyi divergence.
    For x <= 1 the sum minus one is 2 sinh^2(x/2) + tanh(eps/2) sinh(x) (two non-negative
    terms, no cancellation near order 1); beyond, the log-sum is taken in log space.
    """
    ORDER.check("order", order)
    EXTENDED_NON_NEGATIVE.check("epsilon", epsilon)
    if epsilon == 0.0:
        return 0.0
    if math.isinf(epsilon):
        return math.inf
    t = order - 1.0
    x = t * epsilon
    if math.isinf(order):
        return epsilon
    if x <= 1.0:
        excess = 2.0 * math.sinh(0.5 * x) ** 2 + math.tanh(0.5 * epsilon) * math.sinh(x)
        return math.log1p(excess) / t
    log_w = -math.log1p(math.exp(-epsilon))
    log_one_minus_w = -epsilon + log_w
    return min(epsilon, log_add(log_w + x, log_one_minus_w - x) / t)


# ---------------------------------------------------------------------------------------------
# Trade-off curves and group privacy (docs/mathematics.md §1, §6); the number of points a curve
# may have, TRADEOFF_POINTS, and its default are in dpcalc.core.limits

def tradeoff_alphas(points: int) -> tuple[float, ...]:
    """`points` type-I errors evenly spaced on [0, 1], both ends included: where a trade-off curve
    (DRS §2; docs/mathematics.md §1) is reported."""
    TRADEOFF_POINTS.check("points", points)
    return tuple(i / (points - 1) for i in range(points))


def dp_tradeoff(alpha: float, epsilon: float, delta: float) -> float:
    """f_{eps,delta}(alpha) = max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha)).

    The trade-off function of (eps, delta)-DP (Wasserman, Zhou 2010; DRS §2).

    e^eps alpha is compared in log space, so eps beyond 709 does not overflow.
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got alpha={alpha}")
    EXTENDED_NON_NEGATIVE.check("epsilon", epsilon)
    DP_DELTA.check("delta", delta)
    remaining = 1.0 - delta
    if remaining == 0.0:
        return 0.0
    if alpha == 0.0:
        steep = remaining
    elif epsilon + math.log(alpha) >= math.log(remaining):
        steep = 0.0
    else:
        steep = remaining - math.exp(epsilon + math.log(alpha))
    flat = math.exp(-epsilon) * (remaining - alpha)
    return max(0.0, steep, flat)


def group_dp(epsilon: float, delta: float, group: int) -> tuple[float, float]:
    """(eps_k, delta_k) for groups of k individuals from (eps, delta)-DP.

    Chaining the guarantee along k neighbouring steps, P_0(S) <= e^eps P_1(S) + delta, gives
    eps_k = k eps and delta_k = delta (1 + e^eps + ... + e^((k-1) eps)) = delta (e^(k eps) - 1)/(e^eps - 1),
    at most the usual k e^((k-1) eps) delta (docs/mathematics.md §6: group privacy; Dwork, Roth
    2014, Thm 2.2 for delta = 0).
    Computed in log space; capped at 1.
    """
    EXTENDED_NON_NEGATIVE.check("epsilon", epsilon)
    DP_DELTA.check("delta", delta)
    POSITIVE_INTEGER.check("group", group)
    grouped_epsilon = group * epsilon
    if delta == 0.0 or group == 1:
        return grouped_epsilon, delta
    if epsilon == 0.0:
        return grouped_epsilon, min(1.0, group * delta)
    if math.isinf(grouped_epsilon):
        return grouped_epsilon, 1.0
    log_delta = math.log(delta) + log_expm1(grouped_epsilon) - log_expm1(epsilon)
    return grouped_epsilon, math.exp(min(0.0, log_delta))
