"""The Gaussian mechanism: privacy, noise and accuracy, isotropic or with per-coordinate noise.

Sources: Balle, Wang, "Improving the Gaussian Mechanism for Differential Privacy" (ICML 2018,
arXiv 1805.06530), "BW18", Thm 8 (the exact (epsilon, delta) of N(0, sigma^2) noise on a query
of L2 sensitivity Delta, the analytic calibration); Dwork, Roth 2014, Thm A.1 (the classic
calibration, for epsilon < 1); Dong, Roth, Su, "Gaussian Differential Privacy" (JRSS-B 2022),
"DRS", Thm 2.7 and Cor. 2.13 (the Gaussian mechanism is Delta/sigma-GDP, and its privacy
profile); Xu, Ju, Chen, Zhu, Tan, Ye, "ADADP: Adaptive noise for differentially private deep
learning" (IEEE INFOCOM 2020), "ADADP", Lemma 1 (per-coordinate noise).

Accuracy: with independent N(0, sigma^2) noise in each of d coordinates,
    P(max_i |Z_i| <= t) = (1 - u)^d,     u = P(|Z| > t) = 2 Phi(-t / sigma),
exactly (the product, no union bound); carried as the failure probability
q = -expm1(d log1p(-u)), which keeps its relative precision when q is tiny.

Per-coordinate noise (ADADP Lemma 1): noise N(0, sigma_i^2) on coordinate i of a query whose
coordinate i moves by at most s_i. Whitening coordinate i by sigma_i turns the mechanism into
the isotropic unit-variance one on a query whose change is the vector (s_i / sigma_i), of L2
norm at most mu = sqrt(sum s_i^2 / sigma_i^2). By DRS Thm 2.7 it is mu-GDP: at most as
revealing as a one-dimensional Gaussian with sensitivity/noise = mu (noise multiplier 1/mu).
The bound is exact (the mechanism is exactly mu-GDP) when a neighbouring input can move every
coordinate by its full s_i at once, as with per-coordinate or per-layer clipping (each layer's
L2 norm clipped to s_i, its noise std sigma_i); with a joint constraint that keeps the s_i
from being reached together it is an upper bound.

Pure Python (math only): on the start-up path of `dpcalc mechanism gaussian`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from dpcalc.core import gdp
from dpcalc.core.conversions.gaussian import calibrate_gaussian, classic_gaussian_sigma
from dpcalc.core.laplace import FAILURE_PROBABILITY
from dpcalc.core.mechanisms.accuracy import AccuracyPoint, accuracy_table
from dpcalc.core.special import find_root, log_ndtr, ndtr, ndtri
from dpcalc.core.validation import OPEN_UNIT, POSITIVE, POSITIVE_INTEGER, ParameterError

Calibration = Literal["analytic", "classic"]
CALIBRATIONS: tuple[str, ...] = ("analytic", "classic")
Clipping = Literal["per-coordinate", "per-layer", "joint"]
CLIPPINGS: tuple[str, ...] = ("per-coordinate", "per-layer", "joint")
# what was computed: one of epsilon, error and confidence from the other two, or, from privacy
# alone, the noise std (from epsilon) or epsilon (from the noise)
Unknown = Literal["epsilon", "error", "confidence", "noise_std"]

SOURCE = ("Balle and Wang 2018, Thm 8 (exact epsilon at delta; analytic calibration); Dwork and Roth 2014, "
          "Thm A.1 (classic calibration); accuracy: P(max_i |Z_i| <= t) = (1 - 2 Phi(-t/sigma))^d, exact")
PER_COORDINATE_SOURCE = ("Xu et al. 2020 (ADADP), Lemma 1: mu = sqrt(sum s_i^2 / sigma_i^2); "
                         "Dong, Roth and Su 2022, Thm 2.7 and Cor. 2.13 (epsilon at delta of mu-GDP)")

_LOG2 = math.log(2.0)
# Below this, exp() of a log tail leaves the normal float64 range (dpcalc.core.conversions.gaussian).
_LOG_TAIL_UNDERFLOW = -690.0


# ---------------------------------------------------------------------------------------------
# Accuracy: the simultaneous error over d coordinates


def failure_probability(scaled_error: float, dims: int = 1) -> float:
    """q = 1 - P(all `dims` coordinates within t), x = t / sigma: q = 1 - (1 - 2 Phi(-x))^dims.

    u = 2 Phi(-x) has full relative precision in the tail (`special.ndtr`); for u below 1e-300
    q = dims * u to float64 precision, taken in log space so it cannot underflow early.
    """
    if math.isnan(scaled_error) or scaled_error < 0.0:
        raise ParameterError("scaled_error", "in [0, inf]", scaled_error)
    POSITIVE_INTEGER.check("dims", dims)
    log_u = _LOG2 + log_ndtr(-scaled_error)
    if log_u < -690.0:
        return math.exp(math.log(dims) + log_u)
    u = math.exp(log_u)
    if u >= 1.0:
        return 1.0
    return -math.expm1(dims * math.log1p(-u))


def log_all_within(scaled_error: float, dims: int = 1) -> float:
    """log P(all `dims` coordinates within t) = dims * log(1 - 2 Phi(-x)) = dims * log erf(x / sqrt 2)."""
    if scaled_error == 0.0:
        return -math.inf
    u = 2.0 * ndtr(-scaled_error)
    if u <= 0.5:
        return dims * math.log1p(-u)
    return dims * math.log(math.erf(scaled_error / math.sqrt(2.0)))


def scaled_error_for(failure_probability: float, dims: int = 1, probability: float | None = None) -> float:
    """The x = t / sigma at which 1 - P(all `dims` coordinates within t) equals q (inverts
    `failure_probability` exactly): u = -expm1(log1p(-q) / dims), x = -Phi^{-1}(u / 2).

    `probability` (= 1 - q, when known more precisely) gives log P directly for P < 1/2. For a
    per-coordinate tail u/2 below 1e-300 the root of log Phi(-x) = log(u/2) is taken instead,
    bracketed above by sqrt(-2 log(u/2)) (where Phi(-x) <= e^(-x^2/2)/2 <= u/2) and below by halving.
    """
    FAILURE_PROBABILITY.check("failure_probability", failure_probability)
    POSITIVE_INTEGER.check("dims", dims)
    if probability is not None and probability < 0.5:
        log_probability = math.log(probability)
    else:
        log_probability = math.log1p(-failure_probability)
    a = -log_probability / dims  # -log(1 - u) > 0
    log_u = math.log(-log_probability) - math.log(dims) if a < 1e-300 else math.log(-math.expm1(-a))
    log_tail = log_u - _LOG2  # log Phi(-x)
    if log_tail > _LOG_TAIL_UNDERFLOW:
        return -ndtri(math.exp(log_tail))

    def excess(x: float) -> float:
        return log_ndtr(-x) - log_tail

    high = math.sqrt(-2.0 * log_tail)
    low = 0.5 * high
    while excess(low) < 0.0:
        low *= 0.5
    return find_root(excess, low, high)


# ---------------------------------------------------------------------------------------------
# The isotropic Gaussian mechanism


@dataclass(frozen=True)
class GaussianMechanism:
    """N(0, sigma^2) noise on each of `dims` coordinates of a query of L2 sensitivity Delta.

    `epsilon` is the exact epsilon at `delta` of the noise std `sigma` (BW18 Thm 8), whichever
    calibration chose sigma; `sigma_analytic` and `sigma_classic` are the two calibrations'
    noise for that epsilon (classic valid only for 0 < epsilon < 1). `confidence` is the
    probability that all `dims` coordinates are within +-`error`; from privacy alone (epsilon,
    or the noise) error and confidence are None. `accuracy` is the error bound at the standard
    confidences (dpcalc.core.mechanisms.accuracy), whatever was given.
    """

    epsilon: float
    delta: float
    sigma: float
    sensitivity: float
    mu: float
    calibration: Calibration
    sigma_analytic: float
    sigma_classic: float
    classic_valid: bool
    dims: int
    error: float | None
    confidence: float | None
    failure_probability: float | None
    solved_for: Unknown
    accuracy: tuple[AccuracyPoint, ...] = ()
    source: str = SOURCE
    warnings: tuple[str, ...] = ()

    @property
    def noise_multiplier(self) -> float:
        """sigma / Delta = 1 / mu."""
        return self.sigma / self.sensitivity

    @property
    def per_coordinate_failure_probability(self) -> float | None:
        """P(|Z_i| > error) for one coordinate: 2 Phi(-error / sigma) (full relative precision in the
        tail); None without an error."""
        if self.error is None:
            return None
        return 2.0 * ndtr(-self.error / self.sigma)


def gaussian_mechanism(
    *,
    epsilon: float | None = None,
    sigma: float | None = None,
    error: float | None = None,
    confidence: float | None = None,
    delta: float = 1e-5,
    sensitivity: float = 1.0,
    dims: int = 1,
    calibration: Calibration = "analytic",
    failure_probability_exact: float | None = None,
) -> GaussianMechanism:
    """Solve for the one of privacy (epsilon at delta, or the noise std sigma that gives it),
    error and confidence not given (docs/mathematics.md, "Mechanisms: gaussian").

    At most one of `epsilon` and `sigma` (the noise std); two of {epsilon or sigma, error,
    confidence}, or privacy alone (epsilon gives sigma, sigma gives epsilon at delta).
    From epsilon, sigma is the `calibration`'s (analytic: BW18 Thm 8, rounded up; classic:
    Dwork, Roth Thm A.1, refused for epsilon >= 1); the epsilon reported is then the exact
    epsilon at delta of that sigma (equal to the target for analytic, below it for classic).
    """
    if epsilon is not None and sigma is not None:
        raise ValueError("give epsilon or sigma, not both (sigma is calibrated from epsilon)")
    given = {"privacy": epsilon if epsilon is not None else sigma, "error": error, "confidence": confidence}
    missing = [name for name, value in given.items() if value is None]
    if len(missing) != 1 and missing != ["error", "confidence"]:
        raise ValueError("give two of (epsilon or sigma), error and confidence, or epsilon or sigma alone")
    OPEN_UNIT.check("delta", delta)
    POSITIVE.check("sensitivity", sensitivity)
    POSITIVE_INTEGER.check("dims", dims)
    if calibration not in CALIBRATIONS:
        raise ParameterError("calibration", f"one of {', '.join(CALIBRATIONS)}", calibration)
    q: float | None = None
    if confidence is not None:
        if failure_probability_exact is None:
            OPEN_UNIT.check("confidence", confidence)
            q = 1.0 - confidence
        else:
            q = failure_probability_exact
        FAILURE_PROBABILITY.check("1 - confidence", q)
    if error is not None:
        POSITIVE.check("error", error)
    warnings: list[str] = []

    unknown: Unknown
    sigma_analytic = sigma_classic = math.nan
    if epsilon is not None:
        POSITIVE.check("epsilon", epsilon)
        calibrated = calibrate_gaussian(epsilon, delta, sensitivity)
        sigma_analytic, sigma_classic = calibrated.sigma, calibrated.sigma_classic
        if calibration == "classic":
            if not calibrated.classic_valid:
                raise ParameterError("eps", "in (0, 1) for the classic calibration (Dwork, Roth 2014, Thm A.1)",
                                     epsilon)
            sigma = sigma_classic
        else:
            sigma = sigma_analytic
    if sigma is not None:
        POSITIVE.check("sigma", sigma)
        if error is None and q is None:
            unknown = "noise_std" if epsilon is not None else "epsilon"
        elif error is None:
            assert q is not None and confidence is not None
            unknown = "error"
            error = sigma * scaled_error_for(q, dims, confidence)
        else:
            unknown = "confidence"
            x = error / sigma
            q = failure_probability(x, dims)
            confidence = 1.0 - q if q < 0.5 else math.exp(log_all_within(x, dims))
    else:
        assert error is not None and q is not None and confidence is not None
        unknown = "epsilon"
        sigma = error / scaled_error_for(q, dims, confidence)
    mu = sensitivity / sigma
    exact_epsilon = gdp.epsilon_for_delta(delta, mu)
    if epsilon is None:
        # the calibrations' noise for the epsilon this sigma gives (for comparison)
        sigma_analytic = sigma
        if 0.0 < exact_epsilon < math.inf:
            sigma_classic = classic_gaussian_sigma(exact_epsilon, delta, sensitivity)
        else:  # sqrt(2 ln(1.25/delta)) sensitivity / eps at eps = 0 or inf (sigma near 5e-324: mu overflows)
            sigma_classic = math.inf if exact_epsilon == 0.0 else 0.0
    classic_epsilon = exact_epsilon if epsilon is None else epsilon
    classic_valid = 0.0 < classic_epsilon < 1.0
    if not classic_valid:
        warnings.append(
            f"the classic noise std (Dwork, Roth 2014, Thm A.1) is valid only for 0 < eps < 1, not eps = "
            f"{classic_epsilon:g}: use the analytic one.")
    return GaussianMechanism(
        epsilon=exact_epsilon,
        delta=delta,
        sigma=sigma,
        sensitivity=sensitivity,
        mu=mu,
        calibration=calibration,
        sigma_analytic=sigma_analytic,
        sigma_classic=sigma_classic,
        classic_valid=classic_valid,
        dims=dims,
        error=error,
        confidence=confidence,
        failure_probability=q,
        solved_for=unknown,
        accuracy=_accuracy(sigma, dims),
        warnings=tuple(warnings),
    )


def _accuracy(sigma: float, dims: int) -> tuple[AccuracyPoint, ...]:
    """The error bound for all `dims` coordinates at the standard confidences: sigma x with x the
    scaled error at that failure probability (`scaled_error_for`, the relation solved above)."""
    return accuracy_table(lambda q: sigma * scaled_error_for(q, dims, 1.0 - q))


# ---------------------------------------------------------------------------------------------
# Per-coordinate noise (ADADP Lemma 1)


@dataclass(frozen=True)
class PerCoordinateGaussian:
    """Noise N(0, sigma_i^2) on coordinates (or layers) of sensitivity s_i: mu-GDP with
    mu = sqrt(sum s_i^2 / sigma_i^2) (ADADP Lemma 1), `exact` when all s_i are reached at once.

    `noise_multiplier` = 1/mu is the isotropic noise multiplier (noise std / L2 sensitivity)
    that is exactly as revealing; `epsilon` is the exact epsilon at `delta` of mu-GDP (DRS
    Cor. 2.13). With a target (`target_multiplier`, or `target_epsilon` at delta),
    `scale_factor` is the c such that the noise c * sigma_i meets it exactly: c = mu / mu_target
    (rounded up), with `scaled_sigmas` = c * sigma_i.
    """

    sensitivities: tuple[float, ...]
    sigmas: tuple[float, ...]
    clipping: Clipping
    exact: bool
    mu: float
    noise_multiplier: float
    delta: float
    epsilon: float
    target_multiplier: float | None
    target_epsilon: float | None
    scale_factor: float | None
    scaled_sigmas: tuple[float, ...] | None
    meets_target: bool | None
    source: str = PER_COORDINATE_SOURCE
    warnings: tuple[str, ...] = ()

    @property
    def solved_for(self) -> str:
        return "epsilon" if self.scale_factor is None else "scale_factor"


def per_coordinate_mu(sensitivities: Sequence[float], sigmas: Sequence[float]) -> float:
    """mu = sqrt(sum_i (s_i / sigma_i)^2) (ADADP Lemma 1), by math.hypot: correctly rounded
    to within an ulp and free of overflow in the squares."""
    if len(sensitivities) != len(sigmas):
        raise ParameterError("sigmas", f"a list as long as sensitivities ({len(sensitivities)} values)",
                             f"{len(sigmas)} values")
    if not sensitivities:
        raise ParameterError("sensitivities", "a non-empty list", "an empty list")
    for position, (s, sigma) in enumerate(zip(sensitivities, sigmas), start=1):
        POSITIVE.check(f"sensitivities item {position}", s)
        POSITIVE.check(f"sigmas item {position}", sigma)
    return math.hypot(*(s / sigma for s, sigma in zip(sensitivities, sigmas)))


def per_coordinate_gaussian(
    sensitivities: Sequence[float],
    sigmas: Sequence[float],
    *,
    delta: float = 1e-5,
    clipping: Clipping = "per-coordinate",
    target_multiplier: float | None = None,
    target_epsilon: float | None = None,
) -> PerCoordinateGaussian:
    """The per-coordinate Gaussian's mu, its isotropic noise multiplier and epsilon at delta;
    with a target, the factor c that scales every sigma_i to meet it (the module docstring)."""
    OPEN_UNIT.check("delta", delta)
    if clipping not in CLIPPINGS:
        raise ParameterError("clipping", f"one of {', '.join(CLIPPINGS)}", clipping)
    if target_multiplier is not None and target_epsilon is not None:
        raise ValueError("give target_multiplier or target_epsilon, not both")
    mu = per_coordinate_mu(sensitivities, sigmas)
    if math.isinf(mu) or mu == 0.0:
        raise ParameterError("sensitivities / sigmas", "ratios whose root sum of squares is a positive finite float",
                             mu)
    epsilon = gdp.epsilon_for_delta(delta, mu)
    factor: float | None = None
    if target_multiplier is not None:
        POSITIVE.check("target_multiplier", target_multiplier)
        factor = mu * target_multiplier
    elif target_epsilon is not None:
        POSITIVE.check("target_epsilon", target_epsilon)
        # the analytic noise multiplier for the target, rounded up (calibrate_gaussian)
        factor = mu * calibrate_gaussian(target_epsilon, delta, 1.0).sigma
    scaled: tuple[float, ...] | None = None
    meets: bool | None = None
    if factor is not None:
        factor = math.nextafter(math.nextafter(factor, math.inf), math.inf)  # rounded up: noise to add
        scaled = tuple(factor * sigma for sigma in sigmas)
        meets = factor <= 1.0
    exact = clipping != "joint"
    warnings: list[str] = []
    if not exact:
        warnings.append("clipping joint: the s_i cannot all be reached at once, so mu is an upper bound "
                        "(the mechanism may be more private than reported).")
    return PerCoordinateGaussian(
        sensitivities=tuple(float(s) for s in sensitivities),
        sigmas=tuple(float(s) for s in sigmas),
        clipping=clipping,
        exact=exact,
        mu=mu,
        noise_multiplier=1.0 / mu,
        delta=delta,
        epsilon=epsilon,
        target_multiplier=target_multiplier,
        target_epsilon=target_epsilon,
        scale_factor=factor,
        scaled_sigmas=scaled,
        meets_target=meets,
        warnings=tuple(warnings),
    )
