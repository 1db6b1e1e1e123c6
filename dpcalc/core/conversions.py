"""Conversions between privacy notions (pure Python: on the start-up path of `convert`).

RDP -> (epsilon, delta) lives in `dpcalc.core.rdp_conversion` and is re-exported here.
The rest of the module is `dpcalc convert`: calibrating the Gaussian mechanism (Balle, Wang,
ICML 2018, arXiv 1805.06530, "BW18"; Dwork, Roth 2014, Thm A.1), pure DP as RDP, GDP and
zCDP, the RDP curves of single mechanisms, trade-off curves (Dong, Roth, Su, JRSS-B 2022,
arXiv 1905.02383, "DRS"), group privacy, and the table of which conversions exist
(docs/mathematics.md §1, §2, §6, §7). zCDP -> (epsilon, delta) lives in `dpcalc.core.zcdp`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from dpcalc.core import gdp, zcdp
from dpcalc.core.laplace import laplace_rdp  # the one implementation, shared with rdp
from dpcalc.core.rdp_conversion import (  # noqa: F401 - part of this module's interface
    ORDER,
    best_delta,
    best_epsilon,
    rdp_to_delta,
    rdp_to_epsilon,
)
from dpcalc.core.special import find_root, log_add, log_expm1, log_ndtr, ndtri
from dpcalc.core.validation import NON_NEGATIVE, OPEN_UNIT, POSITIVE, POSITIVE_INTEGER, Interval

# The ranges of a source guarantee. Group privacy may carry a finite input to a vacuous one
# (delta = 1) or past float64 (inf), and both must still convert, so these include the ends.
DP_DELTA = Interval(0.0, 1.0, low_closed=True, high_closed=True)  # 0 is pure DP, 1 vacuous
EXTENDED_NON_NEGATIVE = Interval(0.0, math.inf, low_closed=True, high_closed=True)
EXTENDED_POSITIVE = Interval(0.0, math.inf, high_closed=True)


# ---------------------------------------------------------------------------------------------
# The Gaussian mechanism: delta(eps; mu) for small mu, and calibration (docs/mathematics.md §1, §7)

def _mu_with_max_advantage(advantage: float, log_tail: float) -> float:
    """The mu with 2 Phi(mu/2) - 1 = erf(mu / (2 sqrt 2)) = advantage; log_tail = log((1 - advantage)/2).

    Both forms of the same number are passed so that each end keeps its precision: for
    advantage <= 1/2 the root of erf(mu / (2 sqrt 2)) / advantage - 1 is bracketed below by
    advantage * sqrt(2 pi) (erf(x) <= 2x/sqrt(pi)) and above by doubling; beyond 1/2,
    mu = -2 Phi^{-1}(tail), and for a tail below 1e-300 (which would underflow) the root of
    log Phi(-mu/2) = log_tail, bracketed above by mu = 2 sqrt(-2 log(2 tail)) (there
    Phi(-mu/2) <= e^(-mu^2/8)/2 = tail) and below by halving.
    """
    if advantage <= 0.0:
        return 0.0
    if advantage > 0.5:
        if log_tail > _LOG_TAIL_UNDERFLOW:
            return -2.0 * ndtri(math.exp(log_tail))

        def log_tail_excess(mu: float) -> float:
            return log_ndtr(-0.5 * mu) - log_tail

        high = 2.0 * math.sqrt(-2.0 * (log_tail + math.log(2.0)))
        low = 0.5 * high
        while log_tail_excess(low) < 0.0:
            low *= 0.5
        return find_root(log_tail_excess, low, high)
    scale = 1.0 / (2.0 * math.sqrt(2.0))

    def excess(mu: float) -> float:
        return math.erf(mu * scale) / advantage - 1.0

    low = advantage * math.sqrt(2.0 * math.pi)
    high = 2.0 * low
    while excess(high) < 0.0:
        low, high = high, 2.0 * high
    return find_root(excess, low, high)


# Below this log probability exp() leaves the normal float64 range; ndtri is then replaced
# by a root of log_ndtr.
_LOG_TAIL_UNDERFLOW = -690.0


def analytic_gaussian_mu(epsilon: float, delta: float) -> float:
    """The largest mu with delta(eps; mu) <= delta: sigma = sensitivity / mu is BW18's analytic sigma.

    BW18 Thm 8: noise N(0, s^2) on a query of L2 sensitivity D is (eps, delta)-DP iff
    Phi(D/(2s) - eps s/D) - e^eps Phi(-D/(2s) - eps s/D) <= delta, i.e. delta(eps; D/s) <= delta
    with the mu-GDP privacy profile (DRS Cor. 2.13). delta(eps; mu) increases with mu, so the
    smallest s is D / mu* for the root mu* of log delta(eps; mu) = log delta.

    Bracket, proven: delta(eps; mu) < Phi(-eps/mu + mu/2), which equals delta at
    mu_low = -z + sqrt(z^2 + 2 eps) with z = -Phi^{-1}(delta) (written 2 eps / (z + sqrt(z^2 + 2 eps))
    when z > 0, to avoid cancellation), so log delta(eps; mu_low) < log delta. delta(eps; mu)
    tends to 1 > delta as mu grows, so doubling from mu_low reaches an upper end; each end's
    sign is evaluated before the solver starts. eps = 0 is the equation 2 Phi(mu/2) - 1 = delta.
    """
    NON_NEGATIVE.check("epsilon", epsilon)
    OPEN_UNIT.check("delta", delta)
    if epsilon == 0.0:
        return _mu_with_max_advantage(delta, math.log1p(-delta) - math.log(2.0))
    if math.isinf(epsilon):
        return math.inf
    log_target = math.log(delta)

    def excess(mu: float) -> float:
        return gdp.log_delta_for_epsilon(epsilon, mu) - log_target

    z = -ndtri(delta)
    root = math.sqrt(z * z + 2.0 * epsilon)
    low = 2.0 * epsilon / (z + root) if z > 0.0 else root - z
    while low > 0.0 and excess(low) > 0.0:  # only if rounding put mu_low a hair too high
        low *= 0.5
    if not low > 0.0:
        # eps so small (subnormal) that mu_low underflows to 0: the eps = 0 answer mu_0 is a
        # lower end too, since delta(eps; mu_0) <= delta(0; mu_0) = delta
        low = _mu_with_max_advantage(delta, math.log1p(-delta) - math.log(2.0))
    high = 2.0 * low
    while excess(high) < 0.0:
        low, high = high, 2.0 * high
    return find_root(excess, low, high)


def classic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """sigma = sqrt(2 ln(1.25/delta)) * sensitivity / eps (Dwork, Roth 2014, Thm A.1; valid only for eps < 1)."""
    NON_NEGATIVE.check("epsilon", epsilon)
    OPEN_UNIT.check("delta", delta)
    POSITIVE.check("sensitivity", sensitivity)
    if epsilon == 0.0:
        return math.inf
    return math.sqrt(2.0 * math.log(1.25 / delta)) * sensitivity / epsilon


@dataclass(frozen=True)
class GaussianCalibration:
    """The noise std for a target (epsilon, delta): analytic (BW18) and classic (Dwork-Roth) side by side."""

    epsilon: float
    delta: float
    sensitivity: float
    sigma: float
    sigma_classic: float
    classic_valid: bool
    warnings: tuple[str, ...] = ()


def _log_delta_error_bound(epsilon: float, mu: float) -> float:
    """A bound on the float64 error of `gdp.log_delta_for_epsilon(epsilon, mu)`.

    t1 = eps/mu - mu/2 is rounded by a few ulps of eps/mu + mu/2, and log delta moves by about
    |t1| + 1 per unit of t1; the special functions add about 1e-12 at most. Measured against
    mpmath (400 digits) for eps from 0 to 1e12 and delta from 1e-300 to 0.99 around the
    calibrated mu, the actual error stays below 0.31 of this bound.
    """
    return (abs(epsilon / mu - 0.5 * mu) + 2.0) * (epsilon / mu + 0.5 * mu) * 16.0 * _ULP + 1e-12


_ULP = 2.0**-52

# How many times calibrate_gaussian may raise sigma (by a relative step that doubles from one
# ulp) until delta(eps; sensitivity/sigma) <= delta holds beyond the evaluation error.
_SIGMA_NUDGES = 64


def calibrate_gaussian(epsilon: float, delta: float, sensitivity: float = 1.0) -> GaussianCalibration:
    """The smallest Gaussian noise std giving (epsilon, delta)-DP (BW18 Thm 8), with the classic one.

    The analytic sigma is rounded up, never down: sigma is raised (by one ulp, then steps that
    double) until log delta(eps; sensitivity/sigma) plus its evaluation error bound is at most
    log delta, so floating point cannot make the returned sigma too small. The cost is a
    relative increase of about 1e-12 or less.
    """
    NON_NEGATIVE.check("epsilon", epsilon)
    OPEN_UNIT.check("delta", delta)
    POSITIVE.check("sensitivity", sensitivity)
    mu = analytic_gaussian_mu(epsilon, delta)
    # below the smallest positive float sigma would round to 0 (e.g. sensitivity 1e-300 at
    # epsilon 1e300): the smallest positive float is then the answer rounded up
    sigma = max(sensitivity / mu, math.ulp(0.0))
    log_target = math.log(delta)
    step = _ULP
    for _ in range(_SIGMA_NUDGES):
        if math.isinf(sigma):
            break
        mu = sensitivity / sigma
        if gdp.log_delta_for_epsilon(epsilon, mu) + _log_delta_error_bound(epsilon, mu) <= log_target:
            break
        sigma *= 1.0 + step
        step *= 2.0
    classic = classic_gaussian_sigma(epsilon, delta, sensitivity)
    valid = 0.0 < epsilon < 1.0
    warnings = () if valid else (
        f"sigma_classic (Dwork, Roth 2014, Thm A.1) is valid only for 0 < eps < 1, not eps = {epsilon:g}: "
        "use sigma (analytic).",
    )
    return GaussianCalibration(epsilon, delta, sensitivity, sigma, classic, valid, warnings)


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
# Trade-off curves and group privacy (docs/mathematics.md §1, §6)

DEFAULT_TRADEOFF_POINTS = 11  # alpha = 0, 0.1, ..., 1
TRADEOFF_POINTS = Interval(2.0, 100_000.0, low_closed=True, high_closed=True, integer=True)


def tradeoff_alphas(points: int) -> tuple[float, ...]:
    """`points` type-I errors evenly spaced on [0, 1], both ends included."""
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


# ---------------------------------------------------------------------------------------------
# `dpcalc convert`: which conversions exist, and the dispatch

SOURCE_NOTIONS = ("dp", "gdp", "zcdp", "rdp", "gaussian", "laplace")
TARGET_NOTIONS = (*SOURCE_NOTIONS, "tradeoff")


# The orders of the RDP curve when none are given: where the optimum of the conversion to
# (epsilon, delta) usually falls for single mechanisms, plus a few large ones.
DEFAULT_CONVERT_ORDERS = (1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 16.0, 32.0, 64.0)


# The terms of the command that refusals name, as {placeholders}: str() of an error fills them
# with these neutral words; the command line fills them with its options (the same keys).
TERMS: dict[str, str] = {
    "group": "group privacy",
    "delta": "delta",
    "delta_zero": "delta = 0",
    "to_dp": "the dp target",
    "to_gaussian": "the gaussian target",
    "to_laplace": "the laplace target",
    "rdp_point": "an order and its RDP epsilon",
    "source_and_target": "source and target",
    "from_gaussian_to_dp": "gaussian -> dp",
    "from_dp_to_laplace": "dp -> laplace",
    "from_laplace_to_dp": "laplace -> dp",
    "from_dp_to_gaussian": "dp -> gaussian",
}


class ConversionError(ValueError):
    """A conversion that does not exist or that dpcalc does not offer: `source -> target`, why, what exists.

    `reason` and `alternatives` (where `source` converts to; None when the conversion exists but
    these parameters do not) may name the command's terms as {placeholders} of TERMS.
    """

    def __init__(self, source: str, target: str, reason: str, alternatives: str | None = None) -> None:
        self.source = source
        self.target = target
        self.reason = reason
        self.alternatives = alternatives
        super().__init__(self.describe(TERMS))

    def describe(self, terms: dict[str, str]) -> str:
        """The message, with the terms named by `terms` (TERMS for neutral words)."""
        reason = self.reason.format_map(terms)
        if self.alternatives is None:
            return reason
        return (f"no conversion {self.source} -> {self.target}: {reason}. "
                f"From {self.source}, dpcalc converts to: {self.alternatives.format_map(terms)}.")


class GroupRefusal(ConversionError):
    """Group privacy that does not apply to `source -> target`; `side` ("source" or "target") says which refuses it."""

    def __init__(self, source: str, target: str, side: str) -> None:
        self.side = side
        if side == "source":
            reason = (f"group privacy does not apply to the {source} source: group privacy for RDP changes the "
                      "order (Mironov 2017); convert to dp first, then apply group privacy to the dp guarantee")
        else:
            reason = (f"group privacy does not apply to the {target} target: group privacy weakens a guarantee, "
                      "while calibrating noise that protects groups of k means multiplying the sensitivity by k")
        super().__init__(source, target, reason)


@dataclass(frozen=True)
class Guarantee:
    """The source of a conversion: a privacy guarantee or a mechanism; `notion` says which fields are set.

    dp: epsilon, delta (0 for pure DP); gdp: mu; zcdp: rho; rdp: one point (order, rdp);
    gaussian: noise std sigma and L2 sensitivity; laplace: scale and L1 sensitivity.
    """

    notion: str
    epsilon: float | None = None
    delta: float | None = None
    mu: float | None = None
    rho: float | None = None
    order: float | None = None
    rdp: float | None = None
    sigma: float | None = None
    scale: float | None = None
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        if self.notion not in SOURCE_NOTIONS:
            raise ValueError(f"notion must be one of {', '.join(SOURCE_NOTIONS)}, got notion={self.notion!r}")
        for name, interval in _SOURCE_FIELDS[self.notion]:
            value = getattr(self, name)
            if value is None:
                raise ValueError(f"a {self.notion} source needs {name}")
            interval.check(name, value)


_SOURCE_FIELDS: dict[str, tuple[tuple[str, Interval], ...]] = {
    "dp": (("epsilon", EXTENDED_NON_NEGATIVE), ("delta", DP_DELTA)),
    "gdp": (("mu", EXTENDED_POSITIVE),),
    "zcdp": (("rho", EXTENDED_POSITIVE),),
    "rdp": (("order", Interval(1.0, math.inf)), ("rdp", NON_NEGATIVE)),
    "gaussian": (("sigma", POSITIVE), ("sensitivity", EXTENDED_POSITIVE)),
    "laplace": (("scale", POSITIVE), ("sensitivity", EXTENDED_POSITIVE)),
}


@dataclass(frozen=True)
class Target:
    """What to convert to, with its parameters.

    dp: exactly one of `delta` (gives epsilon) and `epsilon` (gives delta), except from dp
    (group privacy) and laplace (pure DP), which take neither; rdp: `orders`; tradeoff:
    `points`; gaussian and laplace: the `sensitivity` of the query to calibrate for.
    """

    notion: str
    delta: float | None = None
    epsilon: float | None = None
    orders: tuple[float, ...] = DEFAULT_CONVERT_ORDERS
    points: int = DEFAULT_TRADEOFF_POINTS
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        if self.notion not in TARGET_NOTIONS:
            raise ValueError(f"notion must be one of {', '.join(TARGET_NOTIONS)}, got notion={self.notion!r}")
        if self.delta is not None:
            OPEN_UNIT.check("delta", self.delta)
        if self.epsilon is not None:
            NON_NEGATIVE.check("epsilon", self.epsilon)
        if not self.orders:
            raise ValueError("orders must not be empty")
        for order in self.orders:
            ORDER.check("order", order)
        TRADEOFF_POINTS.check("points", self.points)
        POSITIVE.check("sensitivity", self.sensitivity)


@dataclass(frozen=True)
class Conversion:
    """The result of `convert`: the target's values (keys as documented), the theorem used, warnings.

    `grouped` is the source after group privacy (the source itself when group = 1).
    """

    source: Guarantee
    target: Target
    group: int
    grouped: Guarantee
    values: dict[str, Any]
    theorem: str
    warnings: tuple[str, ...] = ()

    @property
    def epsilon(self) -> float | None:
        """The epsilon a budget is checked against: present when the target is (epsilon, delta)-DP."""
        return self.values.get("epsilon") if self.target.notion == "dp" else None


@dataclass(frozen=True)
class _Outcome:
    values: dict[str, Any]
    theorem: str
    warnings: tuple[str, ...] = field(default=())


# Where each source may go, for the messages of conversions that do not exist.
AVAILABLE: dict[str, str] = {
    "dp": "dp (with {group}), gaussian, tradeoff; and, for pure DP (delta = 0), gdp, zcdp, rdp, laplace",
    "gdp": "dp, gdp (with {group}), zcdp, rdp, gaussian, tradeoff",
    "zcdp": "dp, zcdp (with {group}), rdp, gaussian",
    "rdp": "dp, gaussian",
    "gaussian": "dp, gdp, zcdp, rdp, tradeoff",
    "laplace": "dp, zcdp, rdp",
}

_NOT_OFFERED = "dpcalc does not offer this conversion"

# Conversions that never exist (or are not offered), whatever the parameters: the reason.
_REFUSALS: dict[tuple[str, str], str] = {
    ("gdp", "laplace"): (
        f"{_NOT_OFFERED}: no Laplace scale is calibrated to mu-GDP here; the Gaussian mechanism "
        "with sigma = sensitivity/mu is exactly mu-GDP ({to_gaussian})"
    ),
    ("zcdp", "gdp"): (
        "rho-zCDP does not imply mu-GDP in general: zCDP bounds Renyi divergences, which do not "
        "determine the trade-off curve, and no valid general conversion is known; gdp -> zcdp "
        "(rho = mu^2/2) exists, one way only"
    ),
    ("zcdp", "laplace"): f"{_NOT_OFFERED}: zCDP is met by Gaussian noise ({{to_gaussian}})",
    ("zcdp", "tradeoff"): (
        f"{_NOT_OFFERED}: a trade-off curve is not derived from zCDP here; {{to_dp}} gives its "
        "(epsilon, delta) points"
    ),
    ("rdp", "gdp"): (
        "one RDP point ({rdp_point}) bounds a single Renyi divergence, while mu-GDP constrains "
        "the whole trade-off curve: no conversion exists (gdp -> rdp exists, one way only)"
    ),
    ("rdp", "zcdp"): (
        "one RDP point ({rdp_point}) bounds a single Renyi divergence, while rho-zCDP needs a "
        "bound at every order: no conversion exists (zcdp -> rdp exists, one way only)"
    ),
    ("rdp", "rdp"): (
        "one RDP point does not determine a curve: only smaller orders are bounded (by the same "
        "value), and larger orders not at all"
    ),
    ("rdp", "laplace"): f"{_NOT_OFFERED}: {{to_gaussian}} calibrates noise to one RDP point",
    ("rdp", "tradeoff"): f"{_NOT_OFFERED}: {{to_dp}} gives (epsilon, delta) from one RDP point",
    ("gaussian", "gaussian"): "{source_and_target} are both gaussian: there is nothing to convert",
    ("gaussian", "laplace"): (
        "one mechanism's noise does not convert into another's: state the guarantee you need, "
        "e.g. {from_gaussian_to_dp}, then calibrate from it with {from_dp_to_laplace}"
    ),
    ("laplace", "laplace"): "{source_and_target} are both laplace: there is nothing to convert",
    ("laplace", "gaussian"): (
        "one mechanism's noise does not convert into another's: state the guarantee you need, "
        "e.g. {from_laplace_to_dp}, then calibrate from it with {from_dp_to_gaussian}"
    ),
    ("laplace", "gdp"): (
        f"{_NOT_OFFERED}: the Laplace mechanism's trade-off curve is not Gaussian, and the exact "
        "mu is not computed here"
    ),
    ("laplace", "tradeoff"): f"{_NOT_OFFERED}: {{to_dp}} states the Laplace mechanism as pure DP",
}


def _refused(source: str, target: str, reason: str) -> ConversionError:
    return ConversionError(source, target, reason, AVAILABLE[source])


def refusal(source: str, target: str) -> ConversionError | None:
    """Why `source -> target` does not exist whatever its parameters, or None when it may exist.

    Whether dp -> gdp/zcdp/rdp/laplace/gaussian exists depends on delta; `convert` decides those.
    """
    if source not in SOURCE_NOTIONS:
        raise ValueError(f"source must be one of {', '.join(SOURCE_NOTIONS)}, got {source!r}")
    if target not in TARGET_NOTIONS:
        raise ValueError(f"target must be one of {', '.join(TARGET_NOTIONS)}, got {target!r}")
    reason = _REFUSALS.get((source, target))
    return None if reason is None else _refused(source, target, reason)


def group_refusal(source: str, target: str) -> GroupRefusal | None:
    """Why group privacy cannot be applied to `source -> target`, or None when it can."""
    if source == "rdp":
        return GroupRefusal(source, target, "source")
    if target in ("gaussian", "laplace"):
        return GroupRefusal(source, target, "target")
    return None


def _require_pure(source: Guarantee, target: str, reason: str) -> None:
    if source.delta > 0.0:
        raise _refused("dp", target, f"(eps, delta)-DP with delta > 0 {reason}")


_DELTA_POSITIVE_GDP = (
    "implies no mu-GDP for any mu: its trade-off curve starts at 1 - delta, below G_mu(0) = 1. "
    "To find the Gaussian noise that meets (eps, delta), use {to_gaussian}"
)
_DELTA_POSITIVE_RENYI = (
    "implies no {name}: with probability delta the output may single out an individual, which no "
    "Renyi divergence bound allows. Pure DP ({{delta_zero}}) converts ({formula}); the converse {converse} exists"
)


def _apply_group(source: Guarantee, group: int) -> tuple[Guarantee, str]:
    """The source after group privacy for `group` individuals (docs/mathematics.md §6), and its citation."""
    if group == 1:
        return source, ""
    notion = source.notion
    if notion == "dp":
        epsilon, delta = group_dp(source.epsilon, source.delta, group)
        return replace(source, epsilon=epsilon, delta=delta), (
            f"group privacy, k = {group}: (k eps, delta (e^(k eps) - 1)/(e^eps - 1)) by chaining "
            "(Dwork, Roth 2014, Thm 2.2)"
        )
    if notion == "gdp":
        return replace(source, mu=group * source.mu), f"group privacy, k = {group}: k mu (Dong, Roth, Su 2022)"
    if notion == "zcdp":
        return replace(source, rho=group * group * source.rho), (
            f"group privacy, k = {group}: k^2 rho (Bun, Steinke 2016)"
        )
    if notion in ("gaussian", "laplace"):
        norm = "L2" if notion == "gaussian" else "L1"
        return replace(source, sensitivity=group * source.sensitivity), (
            f"group privacy, k = {group}: {norm} sensitivity k Delta (triangle inequality)"
        )
    raise GroupRefusal(notion, "", "source")


def _dp_target(epsilon_for: Callable[[float], float], delta_for: Callable[[float], float], target: Target):
    """(epsilon, delta) at the target's delta or epsilon, from the two directions of a conversion."""
    if (target.delta is None) == (target.epsilon is None):
        raise ValueError("a dp target needs exactly one of delta and epsilon")
    if target.delta is not None:
        return epsilon_for(target.delta), target.delta
    return target.epsilon, delta_for(target.epsilon)


def _infinite_epsilon_warning(epsilon: float) -> tuple[str, ...]:
    if math.isinf(epsilon):
        return ("epsilon is infinite (overflows float64): no finite epsilon holds at this delta.",)
    return ()


def _curve(orders: Sequence[float], rdp_at: Callable[[float], float]) -> list[dict[str, float]]:
    return [{"order": order, "rdp": rdp_at(order)} for order in orders]


def _tradeoff(points: int, beta_at: Callable[[float], float]) -> list[dict[str, float]]:
    return [{"alpha": alpha, "beta": beta_at(alpha)} for alpha in tradeoff_alphas(points)]


# --- from (epsilon, delta)-DP


def _dp_to_dp(source: Guarantee, target: Target) -> _Outcome:
    warnings: tuple[str, ...] = ()
    if source.delta >= 1.0:
        warnings = ("delta reached 1 after group privacy: the guarantee is vacuous.",)
    return _Outcome({"epsilon": source.epsilon, "delta": source.delta}, "", warnings)


def _dp_to_gaussian(source: Guarantee, target: Target) -> _Outcome:
    if source.delta == 0.0:
        raise _refused(
            "dp", "gaussian",
            "no Gaussian noise gives pure DP (delta = 0): its privacy loss is unbounded. Give {delta} > 0, "
            "or use {to_laplace} for pure DP",
        )
    if source.delta >= 1.0:
        raise ConversionError("dp", "gaussian", "delta reached 1 after group privacy: there is nothing to calibrate")
    calibration = calibrate_gaussian(source.epsilon, source.delta, target.sensitivity)
    return _Outcome(
        {
            "sigma": calibration.sigma,
            "sigma_classic": calibration.sigma_classic,
            "classic_valid": calibration.classic_valid,
        },
        "Balle, Wang 2018, Thm 8 (analytic, exact); classic: Dwork, Roth 2014, Thm A.1",
        calibration.warnings,
    )


def _dp_to_laplace(source: Guarantee, target: Target) -> _Outcome:
    if source.delta > 0.0:
        raise _refused(
            "dp", "laplace",
            "the Laplace mechanism gives pure DP: {to_laplace} needs {delta_zero}; for delta > 0 use {to_gaussian}",
        )
    if source.epsilon == 0.0:
        raise ConversionError("dp", "laplace", "{to_laplace} needs eps > 0: eps = 0 would need infinite noise")
    return _Outcome({"scale": target.sensitivity / source.epsilon}, "Dwork, Roth 2014, Thm 3.6")


def _dp_to_gdp(source: Guarantee, target: Target) -> _Outcome:
    _require_pure(source, "gdp", _DELTA_POSITIVE_GDP)
    return _Outcome(
        {"mu": pure_dp_to_mu(source.epsilon)},
        "pure eps-DP is mu-GDP for mu = 2 Phi^-1(e^eps/(1+e^eps)), tight "
        "(trade-off f_eps,0 vs G_mu; Dong, Roth, Su 2022)",
    )


def _dp_to_zcdp(source: Guarantee, target: Target) -> _Outcome:
    _require_pure(source, "zcdp", _DELTA_POSITIVE_RENYI.format(
        name="rho-zCDP for any rho", formula="rho = eps^2/2", converse="zcdp -> dp"))
    return _Outcome({"rho": 0.5 * source.epsilon * source.epsilon}, "Bun, Steinke 2016, Prop. 1.4")


def _dp_to_rdp(source: Guarantee, target: Target) -> _Outcome:
    _require_pure(source, "rdp", _DELTA_POSITIVE_RENYI.format(
        name="RDP curve", formula="the randomized-response curve", converse="rdp -> dp"))
    return _Outcome(
        {"curve": _curve(target.orders, lambda order: randomized_response_rdp(order, source.epsilon))},
        "randomized response is the worst eps-DP pair (Kairouz, Oh, Viswanath 2015); its RDP: Mironov 2017",
    )


def _dp_to_tradeoff(source: Guarantee, target: Target) -> _Outcome:
    return _Outcome(
        {"tradeoff": _tradeoff(target.points, lambda alpha: dp_tradeoff(alpha, source.epsilon, source.delta))},
        "f_eps,delta (Wasserman, Zhou 2010; Kairouz, Oh, Viswanath 2015; Dong, Roth, Su 2022)",
    )


# --- from mu-GDP and the Gaussian mechanism (mu = sensitivity / sigma)


def _mu_of(source: Guarantee) -> float:
    return source.mu if source.notion == "gdp" else source.sensitivity / source.sigma


def _gdp_to_dp(source: Guarantee, target: Target) -> _Outcome:
    mu = _mu_of(source)
    epsilon, delta = _dp_target(lambda d: gdp.epsilon_for_delta(d, mu), lambda e: gdp.delta_for_epsilon(e, mu), target)
    values = {"epsilon": epsilon, "delta": delta}
    if source.notion == "gdp":
        theorem = "Dong, Roth, Su 2022, Cor. 2.13 (exact)"
    else:
        values["mu"] = mu
        theorem = "Balle, Wang 2018, Thm 8 (exact; = Dong, Roth, Su 2022, Cor. 2.13 at mu = sensitivity/sigma)"
    return _Outcome(values, theorem, _infinite_epsilon_warning(epsilon))


def _gdp_to_gdp(source: Guarantee, target: Target) -> _Outcome:
    mu = _mu_of(source)
    theorem = "" if source.notion == "gdp" else "Gaussian mechanism: mu = sensitivity/sigma (Dong, Roth, Su 2022)"
    return _Outcome({"mu": mu}, theorem)


def _gdp_to_zcdp(source: Guarantee, target: Target) -> _Outcome:
    mu = _mu_of(source)
    if source.notion == "gdp":
        theorem = "mu-GDP is dominated by N(0,1) vs N(mu,1), which is mu^2/2-zCDP (Bun, Steinke 2016, Prop. 1.6)"
    else:
        theorem = "the Gaussian mechanism is sensitivity^2/(2 sigma^2)-zCDP (Bun, Steinke 2016, Prop. 1.6)"
    return _Outcome({"rho": 0.5 * mu * mu}, theorem)


def _gdp_to_rdp(source: Guarantee, target: Target) -> _Outcome:
    mu = _mu_of(source)
    half_square = 0.5 * mu * mu
    if source.notion == "gdp":
        theorem = (
            "mu-GDP is dominated by N(0,1) vs N(mu,1), whose RDP is order * mu^2 / 2 (Mironov 2017, Gaussian mechanism)"
        )
    else:
        theorem = "Gaussian RDP: order * sensitivity^2 / (2 sigma^2) (Mironov 2017, Gaussian mechanism)"
    return _Outcome({"curve": _curve(target.orders, lambda order: order * half_square)}, theorem)


def _gdp_to_gaussian(source: Guarantee, target: Target) -> _Outcome:
    return _Outcome(
        {"sigma": target.sensitivity / source.mu},
        "the Gaussian mechanism is exactly (sensitivity/sigma)-GDP (Dong, Roth, Su 2022)",
    )


def _gdp_to_tradeoff(source: Guarantee, target: Target) -> _Outcome:
    mu = _mu_of(source)
    theorem = "G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu) (Dong, Roth, Su 2022, Def. 2.7)"
    if source.notion == "gaussian":
        theorem += " at mu = sensitivity/sigma"
    return _Outcome({"tradeoff": _tradeoff(target.points, lambda alpha: gdp.tradeoff(alpha, mu))}, theorem)


# --- from rho-zCDP


def _zcdp_to_dp(source: Guarantee, target: Target) -> _Outcome:
    result = zcdp.zcdp_guarantee(source.rho, delta=target.delta, epsilon=target.epsilon)
    if target.delta is not None:
        values = {"epsilon": result.epsilon, "epsilon_bs16": result.epsilon_bs16, "delta": result.delta}
    else:
        values = {"epsilon": result.epsilon, "delta": result.delta, "delta_bs16": result.delta_bs16}
    values["order"] = result.order
    return _Outcome(
        values,
        "Canonne, Kamath, Steinke 2020, Prop. 12, minimised over the order; bs16: Bun, Steinke 2016, Prop. 1.3",
        _infinite_epsilon_warning(result.epsilon),
    )


def _zcdp_to_zcdp(source: Guarantee, target: Target) -> _Outcome:
    return _Outcome({"rho": source.rho}, "")


def _zcdp_to_rdp(source: Guarantee, target: Target) -> _Outcome:
    return _Outcome(
        {"curve": _curve(target.orders, lambda order: order * source.rho)},
        "definition of rho-zCDP: RDP order * rho at every order (Bun, Steinke 2016, Def. 1.1)",
    )


def _zcdp_to_gaussian(source: Guarantee, target: Target) -> _Outcome:
    return _Outcome(
        {"sigma": target.sensitivity / math.sqrt(2.0 * source.rho)},
        "the Gaussian mechanism is exactly sensitivity^2/(2 sigma^2)-zCDP (Bun, Steinke 2016, Prop. 1.6)",
    )


# --- from one RDP point


def _rdp_to_dp(source: Guarantee, target: Target) -> _Outcome:
    order, value = source.order, source.rdp
    if target.delta is not None:
        values = {
            "epsilon": rdp_to_epsilon(order, value, target.delta, "improved"),
            "epsilon_classic": rdp_to_epsilon(order, value, target.delta, "classic"),
            "delta": target.delta,
        }
    else:
        values = {
            "epsilon": target.epsilon,
            "delta": rdp_to_delta(order, value, target.epsilon, "improved"),
            "delta_classic": rdp_to_delta(order, value, target.epsilon, "classic"),
        }
    return _Outcome(
        values,
        "Canonne, Kamath, Steinke 2020, Prop. 12 / Balle et al. 2020, Thm 21; classic: Mironov 2017, Prop. 3",
    )


def _rdp_to_gaussian(source: Guarantee, target: Target) -> _Outcome:
    warnings: tuple[str, ...] = ()
    if source.rdp == 0.0:
        warnings = ("rdp-eps = 0 needs infinite noise.",)
        sigma = math.inf
    else:
        sigma = target.sensitivity * math.sqrt(source.order / (2.0 * source.rdp))
    return _Outcome(
        {"sigma": sigma},
        "Gaussian RDP order * sensitivity^2 / (2 sigma^2) (Mironov 2017, Gaussian mechanism), solved for sigma",
        warnings,
    )


# --- from the Laplace mechanism


def _laplace_epsilon(source: Guarantee) -> float:
    return source.sensitivity / source.scale


def _laplace_to_dp(source: Guarantee, target: Target) -> _Outcome:
    epsilon = _laplace_epsilon(source)
    return _Outcome(
        {"epsilon": epsilon, "delta": 0.0},
        "Dwork, Roth 2014, Thm 3.6 (pure DP: holds for every delta)",
        _infinite_epsilon_warning(epsilon),
    )


def _laplace_to_zcdp(source: Guarantee, target: Target) -> _Outcome:
    epsilon = _laplace_epsilon(source)
    return _Outcome(
        {"rho": 0.5 * epsilon * epsilon},
        "pure eps-DP with eps = sensitivity/scale (Dwork, Roth 2014, Thm 3.6) is eps^2/2-zCDP "
        "(Bun, Steinke 2016, Prop. 1.4)",
    )


def _laplace_to_rdp(source: Guarantee, target: Target) -> _Outcome:
    return _Outcome(
        {"curve": _curve(target.orders, lambda order: laplace_rdp(order, source.scale, source.sensitivity))},
        "Mironov 2017, Prop. 6 (scale / sensitivity)",
    )


_CONVERTERS: dict[tuple[str, str], Callable[[Guarantee, Target], _Outcome]] = {
    ("dp", "dp"): _dp_to_dp,
    ("dp", "gaussian"): _dp_to_gaussian,
    ("dp", "laplace"): _dp_to_laplace,
    ("dp", "gdp"): _dp_to_gdp,
    ("dp", "zcdp"): _dp_to_zcdp,
    ("dp", "rdp"): _dp_to_rdp,
    ("dp", "tradeoff"): _dp_to_tradeoff,
    ("gdp", "dp"): _gdp_to_dp,
    ("gdp", "gdp"): _gdp_to_gdp,
    ("gdp", "zcdp"): _gdp_to_zcdp,
    ("gdp", "rdp"): _gdp_to_rdp,
    ("gdp", "gaussian"): _gdp_to_gaussian,
    ("gdp", "tradeoff"): _gdp_to_tradeoff,
    ("zcdp", "dp"): _zcdp_to_dp,
    ("zcdp", "zcdp"): _zcdp_to_zcdp,
    ("zcdp", "rdp"): _zcdp_to_rdp,
    ("zcdp", "gaussian"): _zcdp_to_gaussian,
    ("rdp", "dp"): _rdp_to_dp,
    ("rdp", "gaussian"): _rdp_to_gaussian,
    ("gaussian", "dp"): _gdp_to_dp,
    ("gaussian", "gdp"): _gdp_to_gdp,
    ("gaussian", "zcdp"): _gdp_to_zcdp,
    ("gaussian", "rdp"): _gdp_to_rdp,
    ("gaussian", "tradeoff"): _gdp_to_tradeoff,
    ("laplace", "dp"): _laplace_to_dp,
    ("laplace", "zcdp"): _laplace_to_zcdp,
    ("laplace", "rdp"): _laplace_to_rdp,
}


def target_takes_delta_or_epsilon(source: str, target: str) -> bool:
    """Whether `source -> target` reads a target delta or epsilon (dp targets, except from dp and laplace)."""
    return target == "dp" and source not in ("dp", "laplace")


def convert(source: Guarantee, target: Target, group: int = 1) -> Conversion:
    """Convert `source` to `target`, after group privacy for `group` individuals
    (docs/mathematics.md §1, §2, §6, §7).

    Raises ConversionError, with the reason and what exists instead, for a conversion that does
    not exist (e.g. approximate DP to zCDP) or that dpcalc does not offer; GroupRefusal (a
    ConversionError) when group privacy does not apply.
    """
    POSITIVE_INTEGER.check("group", group)
    refused = refusal(source.notion, target.notion)
    if refused is None and group > 1:
        refused = group_refusal(source.notion, target.notion)
    if refused is not None:
        raise refused
    grouped, group_theorem = _apply_group(source, group)
    outcome = _CONVERTERS[(source.notion, target.notion)](grouped, target)
    theorem = "; then ".join(part for part in (group_theorem, outcome.theorem) if part) or "identity"
    return Conversion(
        source=source,
        target=target,
        group=group,
        grouped=grouped,
        values=outcome.values,
        theorem=theorem,
        warnings=outcome.warnings,
    )
