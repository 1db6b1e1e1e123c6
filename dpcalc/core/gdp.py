"""Gaussian differential privacy (mu-GDP) and the central-limit accountant for noisy SGD.

Sources: Dong, Roth, Su, "Gaussian Differential Privacy" (JRSS-B 2022, arXiv 1905.02383),
"DRS" below; Bu, Dong, Long, Su, "Deep Learning with Gaussian Differential Privacy"
(HDSR 2020, arXiv 1911.11607), "BDLS" below.

Pure Python (math only): this module is on the start-up path of `dpcalc gdp`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from dpcalc.core.special import (
    find_root,
    log_expm1,
    log_norm_pdf,
    mills_ratio,
    mills_ratio_slope,
    ndtr,
    ndtri,
)
from dpcalc.core.validation import NON_NEGATIVE, OPEN_UNIT, POSITIVE, POSITIVE_INTEGER, PROBABILITY

if TYPE_CHECKING:
    from dpcalc.core.phases import Phase

Sampling = Literal["poisson", "uniform"]

# The type-I errors at which `dpcalc gdp` reports the trade-off curve.
DEFAULT_TRADEOFF_ALPHAS = (0.001, 0.01, 0.05, 0.1, 0.25, 0.5)

CLT_WARNING = (
    "mu comes from the central-limit approximation (Bu et al. 2020, Thm 4), which is a limit, "
    "not a bound: at finite T it can under-report epsilon."
)


@dataclass(frozen=True)
class TradeoffPoint:
    """One point of a trade-off curve: type-II error `beta` at type-I error `alpha`."""

    alpha: float
    beta: float


@dataclass(frozen=True)
class GDPResult:
    """A mu-GDP guarantee stated as (epsilon, delta) and as a trade-off curve.

    `epsilon` and `delta` are one point of the privacy profile: with a target delta the
    epsilon is solved for, with a target epsilon the delta is computed. The noisy-SGD inputs
    are echoed (None when mu was given directly).
    """

    mu: float
    epsilon: float
    delta: float
    max_advantage: float
    tradeoff: tuple[TradeoffPoint, ...]
    sampling_probability: float | None = None
    noise_multiplier: float | None = None
    steps: int | None = None
    sampling: Sampling | None = None
    warnings: tuple[str, ...] = ()
    approximate: bool = False  # mu is the central-limit approximation of a subsampled run


def clt_log_mu(
    sampling_probability: float,
    noise_multiplier: float,
    steps: int,
    sampling: Sampling = "poisson",
) -> float:
    """log mu of the central-limit approximation for noisy SGD (BDLS Thm 4 and Cor. 5).

    Poisson sampling:   mu = p * sqrt(T * (e^(1/sigma^2) - 1))
    uniform sampling:   mu = sqrt(2) * p * sqrt(T * (e^(1/sigma^2) Phi(1.5/sigma) + 3 Phi(-0.5/sigma) - 2))

    Computed in log space so that sigma < 0.0376, where e^(1/sigma^2) overflows float64,
    still gives the right (possibly finite) mu.
    """
    PROBABILITY.check("sampling_probability", sampling_probability)
    POSITIVE.check("noise_multiplier", noise_multiplier)
    if math.isinf(noise_multiplier) or sampling_probability == 0.0:  # p = 0: nothing sampled, mu = 0
        return -math.inf
    POSITIVE_INTEGER.check("steps", steps)
    u = 1.0 / noise_multiplier
    u2 = u * u
    base = math.log(sampling_probability) + 0.5 * math.log(steps)
    if sampling == "poisson":
        if u2 == 0.0:
            return -math.inf
        return base + 0.5 * log_expm1(u2)
    if sampling == "uniform":
        return base + 0.5 * math.log(2.0) + 0.5 * _log_uniform_bracket(u)
    raise ValueError(f"sampling must be 'poisson' or 'uniform', got sampling={sampling!r}")


def _log_uniform_bracket(u: float) -> float:
    """log(e^(u^2) Phi(1.5u) + 3 Phi(-0.5u) - 2), u = 1/sigma, without cancellation.

    Written as expm1(u^2) Phi(1.5u) + D with D = erf(1.5u/sqrt2)/2 - 3 erf(0.5u/sqrt2)/2
    (from Phi(x) = (1 + erf(x/sqrt2))/2): the bracket is ~u^2/2 for small u and both parts
    keep their relative precision.
    """
    u2 = u * u
    if u2 > 700.0:
        return u2 + math.log(ndtr(1.5 * u))
    d = 0.5 * math.erf(1.5 * u / math.sqrt(2.0)) - 1.5 * math.erf(0.5 * u / math.sqrt(2.0))
    value = math.expm1(u2) * ndtr(1.5 * u) + d
    return math.log(value) if value > 0.0 else -math.inf


def clt_mu(
    sampling_probability: float,
    noise_multiplier: float,
    steps: int,
    sampling: Sampling = "poisson",
) -> float:
    """mu of the central-limit approximation (BDLS Thm 4); inf when it overflows float64."""
    log_mu = clt_log_mu(sampling_probability, noise_multiplier, steps, sampling)
    return math.exp(log_mu) if log_mu < 709.0 else math.inf


def gdp_mu(phases: Sequence[Phase]) -> tuple[float | None, bool]:
    """(mu, approximate) of a Gaussian run, None for a run with a Laplace phase or an infinite mu.

    Unsampled phases are exactly sqrt(T)/sigma-GDP (DRS Thm 2.7 and Cor. 3.3); subsampled ones
    get the central-limit mu (BDLS Thm 4), which is an approximation (`approximate` is then
    True). mu_i-GDP phases compose to sqrt(sum mu_i^2)-GDP. Under replace-one an unsampled
    phase is 2 sqrt(T)/sigma-GDP (k sqrt(T)/sigma with k examples per user); a subsampled one has
    no central-limit formula here (None), nor has a subsampled user-level phase.
    """
    if any(item.mechanism != "gaussian" for item in phases):
        return None, False
    if any(item.sampling_probability < 1.0 and (item.sampling != "poisson" or item.neighbours == "replace-one"
                                                or item.examples_per_user > 1) for item in phases):
        return None, False
    mus = [phase_mu(item) for item in phases]
    mu = math.hypot(*(value for value, _ in mus))  # sqrt of the sum of squares, without overflow
    approximate = any(approximated for _, approximated in mus)
    return (mu, approximate) if math.isfinite(mu) and mu > 0.0 else (None, approximate)


def phase_mu(phase: Phase) -> tuple[float, bool]:
    """(mu, approximate) of one Gaussian phase: exactly shift sqrt(T)/sigma unsampled (DRS Cor. 3.3),
    the central-limit mu (BDLS Thm 4) subsampled (`approximate`); see `gdp_mu` for the phases it takes."""
    if phase.sampling_probability == 1.0:
        return phase.shift * math.sqrt(phase.steps) / phase.noise, False
    return clt_mu(phase.sampling_probability, phase.noise, phase.steps), True


def log_delta_for_epsilon(epsilon: float, mu: float) -> float:
    """log delta(eps; mu) for mu-GDP (DRS Cor. 2.13).

    delta = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2). With t1 = eps/mu - mu/2,
    t2 = t1 + mu and e^eps phi(t2) = phi(t1), this is exactly
        delta = phi(t1) * (R(t1) - R(t2)),        R the Mills ratio,
    which has no overflowing factor and keeps its relative precision down to delta = 1e-300
    and below (the log is returned, so delta may underflow while log delta does not).
    """
    NON_NEGATIVE.check("epsilon", epsilon)
    if math.isnan(mu) or mu < 0.0:
        raise ValueError(f"mu must be >= 0, got mu={mu}")
    if mu == 0.0 or epsilon == math.inf:
        return -math.inf
    if mu == math.inf:
        return 0.0
    return _log_delta_at(epsilon / mu - 0.5 * mu, mu)


def _log_delta_at(t1: float, mu: float) -> float:
    """log delta as a function of t1 = eps/mu - mu/2 (see `log_delta_for_epsilon`)."""
    t2 = t1 + mu
    if mu < _SMALL_MU:
        # R(t1) - R(t2) = int_{t1}^{t2} (1 - t R(t)) dt since R'(t) = t R(t) - 1: a positive
        # integrand over a short interval, taken by 5-point Gauss-Legendre quadrature, whose
        # error on an interval of length mu < 0.01 is far below float64 precision.
        half = 0.5 * mu
        middle = t1 + half
        integral = half * math.fsum(w * mills_ratio_slope(middle + half * x) for x, w in _GAUSS_LEGENDRE_5)
        if integral <= 0.0:
            return -math.inf
        return log_norm_pdf(t1) + math.log(integral)
    if t1 >= -_CANCELLATION_FREE_BELOW:
        difference = mills_ratio(t1) - mills_ratio(t2)
        if difference <= 0.0:
            return -math.inf
        return log_norm_pdf(t1) + math.log(difference)
    # t1 < -2: Phi(-t1) > 0.977 while phi(t1) R(t2) < 0.068, so the plain difference is exact.
    return math.log(ndtr(-t1) - math.exp(log_norm_pdf(t1)) * mills_ratio(t2))


# Below this mu the difference R(t1) - R(t2) loses about log10(1/mu) digits to cancellation
# (1e-10 relative at mu = 1e-6 against mpmath), so its integral is taken instead.
_SMALL_MU = 0.01

# 5-point Gauss-Legendre rule on [-1, 1]: (node, weight).
_GAUSS_LEGENDRE_5 = (
    (0.0, 0.5688888888888889),
    (-0.5384693101056831, 0.4786286704993665),
    (0.5384693101056831, 0.4786286704993665),
    (-0.9061798459386640, 0.2369268850561891),
    (0.9061798459386640, 0.2369268850561891),
)


# For t1 below -2, R(t1) grows like e^(t1^2/2); the plain difference Phi(-t1) - phi(t1) R(t2)
# is used there instead (no cancellation).
_CANCELLATION_FREE_BELOW = 2.0

# Above this mu, eps/mu - mu/2 cancels in float64, so epsilon_for_delta solves for t1 instead
# and returns eps = mu (t1 + mu/2), where t1 > 0 and nothing cancels.
_SOLVE_IN_T_ABOVE = 1e4


def delta_for_epsilon(epsilon: float, mu: float) -> float:
    """delta(eps; mu) for mu-GDP (DRS Cor. 2.13); 0 when it underflows float64."""
    return math.exp(log_delta_for_epsilon(epsilon, mu))


def epsilon_for_delta(delta: float, mu: float) -> float:
    """The smallest eps with delta(eps; mu) <= delta, for mu-GDP (DRS Cor. 2.13).

    eps = 0 when delta(0; mu) = 2 Phi(mu/2) - 1 <= delta. Otherwise the root is bracketed by
    [0, mu * (s + mu/2)] with s = sqrt(2 ln(1/delta)): there Phi(-eps/mu + mu/2) = Phi(-s)
    <= e^(-s^2/2) / (s sqrt(2 pi)) <= delta, so delta(eps) <= delta. No fixed bracket: the
    upper end grows with mu and delta, and inf is returned only when it overflows float64.
    """
    OPEN_UNIT.check("delta", delta)
    if math.isnan(mu) or mu < 0.0:
        raise ValueError(f"mu must be >= 0, got mu={mu}")
    if mu == 0.0:
        return 0.0
    if mu == math.inf:
        return math.inf
    if max_advantage(mu) <= delta:
        return 0.0
    s = math.sqrt(-2.0 * math.log(delta))
    high = mu * (s + 0.5 * mu)
    if math.isinf(high):
        return math.inf
    log_target = math.log(delta)
    if mu > _SOLVE_IN_T_ABOVE:
        t1 = find_root(lambda t: _log_delta_at(t, mu) - log_target, -0.5 * mu, s)
        return mu * (t1 + 0.5 * mu)
    return find_root(lambda eps: log_delta_for_epsilon(eps, mu) - log_target, 0.0, high)


def max_advantage(mu: float) -> float:
    """delta(0; mu) = 2 Phi(mu/2) - 1 = erf(mu / (2 sqrt 2)): the largest TPR - FPR of any attacker (DRS)."""
    return math.erf(mu / (2.0 * math.sqrt(2.0)))


def tradeoff(alpha: float, mu: float) -> float:
    """G_mu(alpha) = Phi(Phi^{-1}(1 - alpha) - mu), the mu-GDP trade-off function (DRS Def. 2.7).

    Phi^{-1}(1 - alpha) is taken as -Phi^{-1}(alpha) so that small alpha keeps its precision.
    """
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got alpha={alpha}")
    if mu == math.inf:
        return 0.0 if alpha > 0.0 else 1.0
    return ndtr(-ndtri(alpha) - mu)


def tpr_at_fpr(mu: float, fpr: float) -> float:
    """The largest TPR at FPR `fpr` against mu-GDP: 1 - G_mu(fpr) = Phi(mu + Phi^-1(fpr)) (DRS eq. (6)),
    computed without forming 1 - beta (no cancellation at small rates)."""
    if fpr <= 0.0:
        return 0.0
    if fpr >= 1.0 or mu == math.inf:
        return 1.0
    return ndtr(mu + ndtri(fpr))


def gdp_guarantee(
    mu: float,
    *,
    delta: float | None = None,
    epsilon: float | None = None,
    alphas: tuple[float, ...] = DEFAULT_TRADEOFF_ALPHAS,
) -> GDPResult:
    """Describe mu-GDP: epsilon at `delta`, or delta at `epsilon` (exactly one is given), by DRS
    Cor. 2.13, with the largest advantage and the trade-off curve G_mu at `alphas` (DRS Def. 2.7)."""
    if (delta is None) == (epsilon is None):
        raise ValueError("give exactly one of delta and epsilon")
    if math.isnan(mu) or mu < 0.0:
        raise ValueError(f"mu must be >= 0, got mu={mu}")
    warnings: list[str] = []
    if delta is not None:
        OPEN_UNIT.check("delta", delta)
        epsilon = epsilon_for_delta(delta, mu)
        if math.isinf(epsilon):
            warnings.append(
                f"epsilon overflows float64 for mu = {mu:.6g}: no finite epsilon holds at delta = {delta:g}."
            )
    else:
        assert epsilon is not None  # exactly one of the two, checked above
        NON_NEGATIVE.check("epsilon", epsilon)
        delta = delta_for_epsilon(epsilon, mu)
    return GDPResult(
        mu=mu,
        epsilon=epsilon,
        delta=delta,
        max_advantage=max_advantage(mu),
        tradeoff=tuple(TradeoffPoint(a, tradeoff(a, mu)) for a in alphas),
        warnings=tuple(warnings),
    )


def noisy_sgd_gdp(
    sampling_probability: float,
    noise_multiplier: float,
    steps: int,
    *,
    sampling: Sampling = "poisson",
    delta: float | None = None,
    epsilon: float | None = None,
) -> GDPResult:
    """The GDP guarantee of noisy SGD: the central-limit mu (BDLS Thm 4), with its warning
    attached, or the exact mu where there is one.

    Poisson sampling at p = 1 uses every record at every step: T Gaussian releases with noise
    multiplier sigma, exactly sqrt(T)/sigma-GDP (DRS Cor. 3.3), no approximation to warn of (the
    central-limit formula would give sqrt(T (e^(1/sigma^2) - 1)) instead). At p = 0 no record is
    ever used: mu = 0 exactly."""
    full_batches = sampling_probability == 1.0 and sampling == "poisson"
    if full_batches:
        mu = math.sqrt(steps) / noise_multiplier
    else:
        mu = clt_mu(sampling_probability, noise_multiplier, steps, sampling)
    base = gdp_guarantee(mu, delta=delta, epsilon=epsilon)
    if full_batches:
        warnings = list(base.warnings)
    else:
        from dpcalc.core.phases import NOTHING_SAMPLED  # here: `convert` uses this module without the phases

        warnings = [NOTHING_SAMPLED if sampling_probability == 0.0 else CLT_WARNING, *base.warnings]
    if math.isinf(mu):
        warnings.append(f"mu overflows float64 (noise_multiplier = {noise_multiplier:g} is too small).")
    return GDPResult(
        mu=base.mu,
        epsilon=base.epsilon,
        delta=base.delta,
        max_advantage=base.max_advantage,
        tradeoff=base.tradeoff,
        sampling_probability=sampling_probability,
        noise_multiplier=noise_multiplier,
        steps=steps,
        sampling=sampling,
        warnings=tuple(warnings),
        approximate=not (full_batches or sampling_probability == 0.0),
    )
