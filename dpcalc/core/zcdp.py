"""Zero-concentrated differential privacy (rho-zCDP) stated as (epsilon, delta)-DP.

Sources: Bun, Steinke, "Concentrated Differential Privacy: Simplifications, Extensions, and
Lower Bounds" (TCC 2016, arXiv 1605.02065), "BS16" below; Canonne, Kamath, Steinke, "The
Discrete Gaussian for Differential Privacy" (NeurIPS 2020, arXiv 2004.00010), "CKS" below.

rho-zCDP means the Renyi divergence of order a is at most a * rho for every a > 1 (BS16
Def. 1.1), so every order gives an (epsilon, delta) pair through CKS Prop. 12; the tight
conversion is the best order, found here as the root of a monotone function on a proven
bracket. Pure Python (math only): on the start-up path of `dpcalc convert`.
"""

from __future__ import annotations

import math

from dpcalc.core.record import Value
from dpcalc.core.special import find_root
from dpcalc.core.validation import NON_NEGATIVE, OPEN_UNIT, Interval

# rho > 0; inf (e.g. after group privacy overflows) gives the vacuous answers.
RHO = Interval(0.0, math.inf, high_closed=True)


class ZCDPConversion(Value):
    """rho-zCDP as one (epsilon, delta) point, with the Renyi order that gave it.

    `epsilon`/`delta` are the tight CKS values; `epsilon_bs16`/`delta_bs16` the simpler
    Bun-Steinke bound beside them (always at least as large).
    """

    rho: float
    epsilon: float
    delta: float
    order: float
    epsilon_bs16: float
    delta_bs16: float


def epsilon_bs16(rho: float, delta: float) -> float:
    """epsilon = rho + 2 sqrt(rho ln(1/delta)) (BS16 Prop. 1.3)."""
    RHO.check("rho", rho)
    OPEN_UNIT.check("delta", delta)
    return rho + 2.0 * math.sqrt(rho * -math.log(delta))


def delta_bs16(rho: float, epsilon: float) -> float:
    """delta = exp(-(epsilon - rho)^2 / (4 rho)) for epsilon > rho, else 1 (BS16 Prop. 1.3 inverted)."""
    RHO.check("rho", rho)
    NON_NEGATIVE.check("epsilon", epsilon)
    if epsilon <= rho:
        return 1.0
    excess = epsilon - rho
    return math.exp(-(excess * excess) / (4.0 * rho))


def _log_one_minus_inverse(u: float) -> float:
    """log(1 - 1/a) for a = 1 + u, accurate for small and large u."""
    if u < 1.0:
        return math.log(u) - math.log1p(u)
    return math.log1p(-1.0 / (1.0 + u))


def _epsilon_at(rho: float, log_inverse_delta: float, u: float) -> float:
    """CKS Prop. 12 at order a = 1 + u for the RDP curve a * rho:

        eps(a) = a rho + log(1 - 1/a) + (ln(1/delta) - log a) / (a - 1).

    Every a > 1 gives a valid epsilon; all terms are written in u = a - 1, so the value is
    that of one exact order even when 1 + u rounds.
    """
    return rho + u * rho + _log_one_minus_inverse(u) + (log_inverse_delta - math.log1p(u)) / u


def _log_delta_at(rho: float, epsilon: float, u: float) -> float:
    """log delta of CKS Prop. 12 at order a = 1 + u for the RDP curve a * rho:

        log delta(a) = (a - 1)(a rho - eps + log(1 - 1/a)) - log a.
    """
    return u * ((1.0 + u) * rho - epsilon + _log_one_minus_inverse(u)) - math.log1p(u)


def zcdp_epsilon(rho: float, delta: float) -> tuple[float, float]:
    """(epsilon, order): the tight (epsilon, delta) conversion of rho-zCDP (CKS Prop. 12 over all orders).

    epsilon = inf_{a > 1} a rho + (ln(1/delta) + (a - 1) ln(1 - 1/a) - ln a) / (a - 1)
    (docs/mathematics.md §6).
    With L = ln(1/delta) the derivative in a is rho - (L - ln a)/(a - 1)^2, so the minimiser is
    the unique root of h(u) = rho u^2 + log1p(u) - L in u = a - 1 > 0 (h increases from -L).
    Bracket, proven: h(2 sqrt(L/rho)) = 3L + log1p(u) > 0 (the factor 2 keeps the sign clear of
    rounding); and u0 = min(1, L / (2 (rho + 1))) has
    h(u0) <= (rho + 1) u0 - L < 0 (since u0 <= 1 gives rho u0^2 <= rho u0 and log1p(u0) <= u0),
    or when u0 = 1 (L >= 2 rho + 2) h(1) = rho + ln 2 - L < 0. The root is found in log u,
    so that u from 1e-150 to 1e150 keeps its relative precision; any rounding of the order
    still yields a valid epsilon because eps(a) is evaluated at the order returned.
    """
    RHO.check("rho", rho)
    OPEN_UNIT.check("delta", delta)
    if math.isinf(rho):
        return math.inf, math.inf
    log_inverse_delta = -math.log(delta)
    log_rho = math.log(rho)
    log_level = math.log(log_inverse_delta)

    def slope(v: float) -> float:
        # h(e^v) with rho e^(2v) written as exp(log rho + 2v): it never exceeds 4L on the bracket.
        return math.exp(log_rho + 2.0 * v) + math.log1p(math.exp(v)) - log_inverse_delta

    # log(min(1, L / (2 (rho + 1)))), in log space: the quotient underflows for rho near 1e308
    low = min(0.0, log_level - math.log(2.0) - math.log1p(rho))
    high = math.log(2.0) + 0.5 * (log_level - log_rho)
    v = find_root(slope, low, high)
    u = math.exp(v)
    return max(0.0, _epsilon_at(rho, log_inverse_delta, u)), 1.0 + u


def zcdp_delta(rho: float, epsilon: float) -> tuple[float, float]:
    """(delta, order): the smallest delta at `epsilon` from rho-zCDP (CKS Prop. 12 over all orders).

    log delta(a) = (a - 1)(a rho - eps + ln(1 - 1/a)) - ln a has derivative
    k(a) = (2a - 1) rho - eps + ln(1 - 1/a), increasing from -inf (a -> 1) to +inf, so the
    minimiser is its unique root; in v = log(a - 1) it is bracketed, provably, by
    v_low = min(0, eps - 3 rho - 1) (there e^v <= 1 gives k <= 3 rho - eps + v < 0) and
    v_high = log(max(2, (eps + 1)/rho)) (there 2 u rho >= 2 eps + 2 and log1p(1/u) <= 1/2, so
    k >= eps + 3/2 > 0; or u = 2 with rho >= (eps + 1)/2 and k = 5 rho - eps + ln(2/3) > 0).
    Capped at 1.
    """
    RHO.check("rho", rho)
    NON_NEGATIVE.check("epsilon", epsilon)
    if math.isinf(rho):
        return 1.0, math.inf
    if math.isinf(epsilon):
        return 0.0, math.inf

    def slope(v: float) -> float:
        u = math.exp(v)
        return (2.0 * u + 1.0) * rho - epsilon + _log_one_minus_inverse(u)

    low = min(0.0, epsilon - 3.0 * rho - 1.0)
    high = max(math.log(2.0), math.log1p(epsilon) - math.log(rho))
    if math.exp(low) == 0.0:
        # The optimal order is within 1e-300 of 1, which needs rho > 240: delta there is 1 to
        # double precision, so the bound is vacuous.
        return 1.0, 1.0
    if high > _LARGEST_LOG_ORDER:
        # Only for rho below ~1e-308 (subnormal). Any order gives a valid delta; use the largest
        # representable one when the optimum lies beyond it.
        high = _LARGEST_LOG_ORDER
        v = high if slope(high) <= 0.0 else find_root(slope, low, high)
    else:
        v = find_root(slope, low, high)
    u = math.exp(v)
    return math.exp(min(0.0, _log_delta_at(rho, epsilon, u))), 1.0 + u


# log(a - 1) above which exp overflows float64.
_LARGEST_LOG_ORDER = 709.0


def zcdp_guarantee(rho: float, *, delta: float | None = None, epsilon: float | None = None) -> ZCDPConversion:
    """rho-zCDP as (epsilon, delta): epsilon at `delta`, or delta at `epsilon` (exactly one given).

    The tight values over all orders (CKS Prop. 12, `zcdp_epsilon` / `zcdp_delta`), with the
    Bun-Steinke bound beside them (BS16 Prop. 1.3).
    """
    if (delta is None) == (epsilon is None):
        raise ValueError("give exactly one of delta and epsilon")
    if delta is not None:
        tight, order = zcdp_epsilon(rho, delta)
        return ZCDPConversion(rho, tight, delta, order, epsilon_bs16(rho, delta), delta)
    assert epsilon is not None  # exactly one of the two, checked above
    tight_delta, order = zcdp_delta(rho, epsilon)
    return ZCDPConversion(rho, epsilon, tight_delta, order, epsilon, delta_bs16(rho, epsilon))
