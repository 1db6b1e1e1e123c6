"""Calibrating the Gaussian mechanism (pure Python: on the start-up path of `convert`).

The smallest Gaussian noise for a target (epsilon, delta): BW18's analytic sigma (Balle, Wang,
ICML 2018, arXiv 1805.06530, "BW18"), rounded up beyond the float64 error of delta(eps; mu),
and the classic sigma (Dwork, Roth 2014, Thm A.1) (docs/mathematics.md §1, §7).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpcalc.core import gdp
from dpcalc.core.special import find_root, log_ndtr, ndtri
from dpcalc.core.validation import NON_NEGATIVE, OPEN_UNIT, POSITIVE

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
        # at a subnormal delta mu_0 is subnormal too and delta(eps; mu_0) is computed with a
        # subnormal's few digits: halve until the sign is certain, or report mu = 0 (no finite
        # noise is certified; sigma = sensitivity / mu overflows float64 there anyway)
        while low > 0.0 and excess(low) > 0.0:
            low *= 0.5
        if not low > 0.0:
            return 0.0
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
    sigma = max(sensitivity / mu, math.ulp(0.0)) if mu > 0.0 else math.inf
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
        f"the classic noise std (Dwork, Roth 2014, Thm A.1) is valid only for 0 < eps < 1, not eps = {epsilon:g}: "
        "use the analytic one.",
    )
    return GaussianCalibration(epsilon, delta, sensitivity, sigma, classic, valid, warnings)
