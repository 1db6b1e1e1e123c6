"""Smooth sensitivity: admissible noise parameters (alpha, beta), the noise and its accuracy.

Sources: Nissim, Raskhodnikova, Smith, "Smooth Sensitivity and Sampling in Private Data
Analysis" (STOC 2007), "NRS" below; Bun, Steinke, "Average-Case Averages: Private Algorithms
for Smooth Sensitivity and Mean Estimation" (NeurIPS 2019, arXiv 1906.02830), "BS19" below.

The framework (NRS Sec. 2): S is a beta-smooth upper bound on the local sensitivity of f
(S(x) >= LS_f(x) and S(x) <= e^beta S(y) for neighbours x, y), Z a noise distribution that is
(alpha, beta)-admissible; the release is

    A(x) = f(x) + (S(x) / alpha) Z,       its noise scale S(x) / alpha.

Three noise families, each with the (alpha, beta) it admits for a target epsilon:

- laplace (NRS, Laplace example): Z ~ Lap(1), alpha = epsilon / 2,
  beta = epsilon / (2 ln(2/delta)); (epsilon, delta)-DP (delta > 0 is needed).
  Accuracy (exact): P(|noise| > e) = e^(-e / scale) (Dwork, Roth 2014, Fact 3.7).
- cauchy (NRS, Cauchy-type example h(z) ~ 1 / (1 + |z|^gamma) with gamma = 2, the standard
  Cauchy): alpha = beta = epsilon / (2 (gamma + 1)) = epsilon / 6; pure epsilon-DP only
  (delta = 0). Accuracy (exact): P(|noise| > e) = (2/pi) arctan(scale / e).
- laplace-log-normal (BS19, Sec. 3.1.1): Z = X e^(sigma Y), X ~ Lap(1), Y ~ N(0, 1);
  with alpha = s and beta = t (any s, t > 0) the release is (epsilon^2 / 2)-CDP, i.e.
  rho-zCDP with rho = epsilon^2 / 2, for epsilon = t / sigma + e^(3 sigma^2 / 2) s. For a
  given epsilon and t, sigma is chosen to minimise the noise variance 2 e^(2 sigma^2) / s^2:
  the positive root of 5 (epsilon / t) sigma^3 - 5 sigma^2 - 1 = 0 (BS19 Sec. 3.1.1), and
  s = e^(-3 sigma^2 / 2) (epsilon - t / sigma). Accuracy is an upper bound (Chebyshev with the
  exact variance 2 e^(2 sigma^2) scale^2): P(|noise| > e) <= 2 e^(2 sigma^2) scale^2 / e^2.
- student-t (BS19, Thm 31): Z ~ T(d), Student's T with d degrees of freedom (d = 1 is the
  Cauchy); with alpha = s and beta = t, pure epsilon-DP for epsilon = (d + 1) (t + s / (2 sqrt d)).
  For a given epsilon and t, s = 2 sqrt(d) (epsilon / (d + 1) - t) (BS19's choice, all the
  rest of epsilon to s). Accuracy (exact, integer d): the tail P(|T| > z) as a positive series
  (`student_t.student_t_log_tail`).

Every direction is closed form except two one-dimensional equations, each solved on a proven
bracket (`dpcalc.core.special.find_root`): the cubic above, and the sigma that minimises
epsilon for a given noise (`_minimising_sigma`).

Pure Python (math only): on the start-up path of `dpcalc mechanism smooth-sensitivity`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from dpcalc.core.mechanisms.student_t import DEGREES, FAILURE_PROBABILITY, student_t_log_tail, student_t_quantile
from dpcalc.core.special import find_root
from dpcalc.core.validation import OPEN_UNIT, POSITIVE, ParameterError

Noise = Literal["laplace", "cauchy", "laplace-log-normal", "student-t"]
NOISES: tuple[Noise, ...] = ("laplace", "cauchy", "laplace-log-normal", "student-t")
Unknown = Literal["epsilon", "error", "confidence", "noise"]

# gamma of NRS's Cauchy-type density 1 / (1 + |z|^gamma) used here: 2, the standard Cauchy
CAUCHY_GAMMA = 2.0

SOURCES: dict[Noise, str] = {
    "laplace": "Nissim, Raskhodnikova and Smith 2007, Sec. 2 (admissible noise, Laplace example)",
    "cauchy": "Nissim, Raskhodnikova and Smith 2007, Sec. 2 (admissible noise, Cauchy-type example, gamma = 2)",
    "laplace-log-normal": "Bun and Steinke 2019, Sec. 3.1.1 (Laplace log-normal noise, (eps^2/2)-CDP)",
    "student-t": "Bun and Steinke 2019, Thm 31 (Student's T noise, pure eps-DP)",
}


@dataclass(frozen=True)
class SmoothSensitivityResult:
    """The admissible (alpha, beta), the noise they give at smooth sensitivity S, its accuracy.

    `epsilon` is the privacy parameter: of (epsilon, delta)-DP for laplace, of epsilon-DP for
    cauchy and student-t, and of (epsilon^2 / 2)-CDP for laplace-log-normal (`rho` = epsilon^2 / 2, zCDP).
    `beta` is the smoothness S must have. `accuracy_exact` says whether `failure_probability`
    is exact (laplace, cauchy, student-t) or an upper bound (laplace-log-normal, Chebyshev).
    """

    noise: Noise
    epsilon: float
    delta: float | None
    alpha: float
    beta: float
    sigma: float | None
    smooth_sensitivity: float
    error: float | None
    confidence: float | None
    failure_probability: float | None
    solved_for: Unknown
    degrees: int | None = None  # student-t: the degrees of freedom d

    @property
    def scale(self) -> float:
        """The multiplier of Z in the release: S / alpha."""
        return self.smooth_sensitivity / self.alpha

    @property
    def rho(self) -> float | None:
        """laplace-log-normal: the zCDP rho = epsilon^2 / 2 (BS19's (epsilon^2/2)-CDP); else None."""
        if self.noise != "laplace-log-normal":
            return None
        try:
            return 0.5 * self.epsilon**2
        except OverflowError:  # epsilon above 1e154
            return math.inf

    @property
    def std(self) -> float:
        """The noise's standard deviation: sqrt(2) scale (Laplace), inf (Cauchy has no variance),
        sqrt(2) e^(sigma^2) scale (Laplace log-normal: E[X^2] E[e^(2 sigma Y)] = 2 e^(2 sigma^2)),
        sqrt(d / (d - 2)) scale (Student's T, d > 2; inf for d <= 2)."""
        if self.noise == "laplace":
            return math.sqrt(2.0) * self.scale
        if self.noise == "cauchy":
            return math.inf
        if self.noise == "student-t":  # Var T(d) = d / (d - 2) for d > 2, infinite otherwise
            assert self.degrees is not None
            return self.scale * math.sqrt(self.degrees / (self.degrees - 2.0)) if self.degrees > 2 else math.inf
        assert self.sigma is not None
        return math.sqrt(2.0) * math.exp(self.sigma**2) * self.scale

    @property
    def accuracy_exact(self) -> bool:
        return self.noise != "laplace-log-normal"

    @property
    def source(self) -> str:
        return SOURCES[self.noise]


def admissible(noise: Noise, epsilon: float, delta: float | None = None) -> tuple[float, float]:
    """NRS's admissible (alpha, beta) for `epsilon` (and `delta`, laplace only): laplace
    (epsilon/2, epsilon/(2 ln(2/delta))), cauchy (epsilon/6, epsilon/6)."""
    POSITIVE.check("epsilon", epsilon)
    if noise == "laplace":
        if delta is None:
            raise ParameterError("delta", "given for laplace noise, in (0, 1)", None)
        OPEN_UNIT.check("delta", delta)
        return epsilon / 2.0, epsilon / (2.0 * (_LOG2 - math.log(delta)))
    if noise == "cauchy":
        share = epsilon / (2.0 * (CAUCHY_GAMMA + 1.0))
        return share, share
    raise ParameterError("noise", "laplace or cauchy (the other families take beta as given: smooth_sensitivity)", noise)


_LOG2 = math.log(2.0)


def lln_epsilon(alpha: float, beta: float, sigma: float) -> float:
    """BS19 Sec. 3.1.1: the CDP epsilon of Laplace log-normal noise, t / sigma + e^(3 sigma^2 / 2) s."""
    return beta / sigma + math.exp(1.5 * sigma * sigma) * alpha


def lln_optimal_sigma(epsilon: float, beta: float) -> float:
    """The positive root of 5 (epsilon / t) sigma^3 - 5 sigma^2 - 1 = 0 (BS19 Sec. 3.1.1): the
    sigma minimising the variance 2 e^(5 sigma^2) / (epsilon - t / sigma)^2 at (epsilon, t).

    With a = 5 epsilon / t, p(sigma) = a sigma^3 - 5 sigma^2 - 1 has one positive root
    (Descartes); p(a^(-1/3)) = -5 a^(-2/3) < 0 and p(5/a + a^(-1/3)) >= 0, a proven bracket.
    """
    POSITIVE.check("epsilon", epsilon)
    POSITIVE.check("beta", beta)
    a = 5.0 * epsilon / beta
    if not 0.0 < a < math.inf:
        raise ParameterError("beta", f"within a factor 1e300 of epsilon {epsilon:g} (5 epsilon / beta must be a "
                             "positive float64)", beta)
    low = a ** (-1.0 / 3.0)
    high = 5.0 / a + low

    def p(s: float) -> float:
        return (a * s - 5.0) * s * s - 1.0

    if p(low) < 0.0 <= p(high):
        return find_root(p, low, high)
    # Far from epsilon = beta, a s - 5 (a large) or the whole of p (a small) cancels in float64:
    # in u = a^(1/3) sigma the equation is g(u) = u^2 (u - b) - 1 = 0 with b = 5 a^(-2/3), and
    # g(max(b, 1)) <= 0 < g(max(b, 1) + 1) brackets its root.
    b = 5.0 * low * low
    if b > 1e100:  # the root lies in (b, b + 1 / b^2): b itself, in float64
        return float(b * low)
    start = max(b, 1.0)
    return float(find_root(lambda u: u * u * (u - b) - 1.0, start, start + max(1.0, 1e-15 * start)) * low)


def _minimising_sigma(beta: float, k: float, log_c: float) -> float:
    """The sigma minimising t / sigma + c e^(k sigma^2 / 2) (t = beta, k, c > 0; c given as its
    log, which may lie outside float64's range for c): the root of
    k c sigma^3 e^(k sigma^2 / 2) = t, solved in u = ln sigma, where
    h(u) = ln(k c) + 3 u + (k/2) e^(2u) - ln t is increasing. h(D/3) > 0 for D = ln t - ln(k c);
    the lower end steps down until h < 0 (h -> -inf as u -> -inf). e^(2u) is capped at e^700,
    where h is far above 0 already (its sign is all the root finder needs there)."""
    d = math.log(beta) - math.log(k) - log_c

    def h(u: float) -> float:
        return 3.0 * u + 0.5 * k * math.exp(min(2.0 * u, 700.0)) - d

    high = d / 3.0
    low = high - 1.0
    while h(low) >= 0.0:
        low -= 2.0 * abs(low) + 1.0
    return math.exp(find_root(h, low, high))


def smooth_sensitivity(
    *,
    noise: Noise = "laplace",
    epsilon: float | None = None,
    scale: float | None = None,
    delta: float | None = None,
    smooth_sensitivity: float = 1.0,
    error: float | None = None,
    failure_probability: float | None = None,
    beta: float | None = None,
    sigma: float | None = None,
    degrees: int | None = None,
) -> SmoothSensitivityResult:
    """The smooth-sensitivity release's parameters from epsilon (or the noise scale S / alpha),
    or from a target accuracy (error and failure probability q = 1 - confidence): give two of
    privacy-or-noise, error and q, or privacy-or-noise alone.

    laplace needs `delta` (the smoothness beta depends on it); cauchy is pure DP and refuses a
    delta; laplace-log-normal needs `beta` (the smoothness t) and takes an optional `sigma`
    (otherwise the variance-minimising sigma, or for a given noise or accuracy the
    epsilon-minimising one); student-t needs `beta` and takes `degrees` (default 3).
    """
    if noise not in NOISES:
        raise ParameterError("noise", f"one of {', '.join(NOISES)}", noise)
    S = POSITIVE.check("smooth_sensitivity", smooth_sensitivity)
    if noise == "laplace":
        if delta is None:
            raise ParameterError("delta", "given for laplace noise (its beta is epsilon / (2 ln(2/delta))), in (0, 1)", None)
        OPEN_UNIT.check("delta", delta)
    elif delta is not None:
        what = ("(epsilon^2/2)-CDP, stated without a delta" if noise == "laplace-log-normal"
                else "pure epsilon-DP (delta = 0) only")
        raise ParameterError("delta", f"absent for {noise} noise: it gives {what}", delta)
    if noise in ("laplace-log-normal", "student-t"):
        if beta is None:
            raise ParameterError("beta", f"given for {noise} noise (the smoothness t of S), > 0", None)
        POSITIVE.check("beta", beta)
    elif beta is not None:
        raise ParameterError("beta", f"absent for {noise} noise: it follows from epsilon", beta)
    if sigma is not None:
        if noise != "laplace-log-normal":
            raise ParameterError("sigma", "absent unless the noise is laplace-log-normal", sigma)
        POSITIVE.check("sigma", sigma)
    if noise == "student-t":
        degrees = 3 if degrees is None else int(DEGREES.check("degrees", degrees))
    elif degrees is not None:
        raise ParameterError("degrees", "absent unless the noise is student-t", degrees)
    if epsilon is not None and scale is not None:
        raise ParameterError("scale", "absent when epsilon is given (the scale follows from it)", scale)
    if epsilon is not None:
        POSITIVE.check("epsilon", epsilon)
    if scale is not None:
        POSITIVE.check("scale", scale)
    if error is not None:
        POSITIVE.check("error", error)
    if failure_probability is not None:
        FAILURE_PROBABILITY.check("failure_probability", failure_probability)
        if failure_probability == 1.0:
            raise ParameterError("failure_probability", "in (0, 1)", failure_probability)

    solved: Unknown
    if epsilon is None and scale is None:
        if error is None or failure_probability is None:
            raise ParameterError("epsilon", "given, or computed from an error and a confidence", None)
        solved = "epsilon"
        alpha, sigma = _alpha_for_accuracy(noise, S, error, failure_probability, beta, sigma, degrees)
    else:
        if error is not None and failure_probability is not None:
            raise ParameterError("error", "absent when the privacy (or noise) and the confidence are both given", error)
        if scale is not None:
            alpha = S / scale
            if not 0.0 < alpha < math.inf:
                raise ParameterError("scale", f"such that S / scale is positive and finite (S {S:g})", scale)
            if noise == "laplace-log-normal" and sigma is None:
                assert beta is not None
                sigma = _minimising_sigma(beta, 3.0, math.log(alpha))
        else:
            assert epsilon is not None
            alpha, sigma = _alpha_for_epsilon(noise, epsilon, beta, sigma, degrees)
            # epsilon near 5e-324 or S near 1e308 (the scale overflows), or epsilon near 1e308 with
            # S near 5e-324 (it underflows to 0)
            if not (alpha > 0.0 and 0.0 < S / alpha < math.inf):
                raise ParameterError("epsilon", f"such that the noise scale S / alpha is a positive finite float64 "
                                     f"(S = {S:g}, alpha = {alpha:g})", epsilon)
        solved = "noise"
        if error is not None:
            failure_probability = _failure(noise, S / alpha, error, sigma, degrees)
            solved = "confidence"
        elif failure_probability is not None:
            error = _error(noise, S / alpha, failure_probability, sigma, degrees)
            solved = "error"

    if noise == "laplace-log-normal":
        assert beta is not None and sigma is not None
        if epsilon is None:  # computed from the accuracy or the scale (given, epsilon stays exact)
            epsilon = lln_epsilon(alpha, beta, sigma)
        beta_out = beta
    elif noise == "student-t":
        assert beta is not None and degrees is not None
        if epsilon is None:
            epsilon = student_t_epsilon(alpha, beta, degrees)
        beta_out = beta
    else:
        if epsilon is None:
            epsilon = 2.0 * (CAUCHY_GAMMA + 1.0) * alpha if noise == "cauchy" else 2.0 * alpha
        beta_out = admissible(noise, epsilon, delta)[1]
    if not 0.0 < epsilon < math.inf:
        raise ParameterError("error" if solved == "epsilon" else "scale",
                             "such that epsilon is positive and finite", error if solved == "epsilon" else scale)
    return SmoothSensitivityResult(
        noise=noise,
        epsilon=epsilon,
        delta=delta if noise == "laplace" else (None if noise == "laplace-log-normal" else 0.0),
        alpha=alpha,
        beta=beta_out,
        sigma=sigma,
        smooth_sensitivity=S,
        error=error,
        confidence=None if failure_probability is None else 1.0 - failure_probability,
        failure_probability=failure_probability,
        solved_for=solved,
        degrees=degrees,
    )


def student_t_epsilon(alpha: float, beta: float, degrees: int) -> float:
    """BS19 Thm 31: the pure epsilon of Student's T noise T(d), (d + 1) (t + s / (2 sqrt d))."""
    return (degrees + 1.0) * (beta + alpha / (2.0 * math.sqrt(degrees)))


def _alpha_for_epsilon(noise: Noise, epsilon: float, beta: float | None,
                       sigma: float | None, degrees: int | None = None) -> tuple[float, float | None]:
    if noise == "student-t":
        assert beta is not None and degrees is not None
        share = epsilon / (degrees + 1.0) - beta
        if not share > 0.0:
            raise ParameterError("beta", f"below epsilon / (d + 1) = {epsilon / (degrees + 1.0):g} (Student's T "
                                 f"with d = {degrees} spends (d + 1) t of epsilon on the smoothness)", beta)
        return 2.0 * math.sqrt(degrees) * share, None
    if noise != "laplace-log-normal":
        return epsilon / (2.0 if noise == "laplace" else 2.0 * (CAUCHY_GAMMA + 1.0)), None
    assert beta is not None
    given_sigma = sigma is not None
    if sigma is None:
        sigma = lln_optimal_sigma(epsilon, beta)
    elif not epsilon * sigma > beta:
        raise ParameterError("sigma", f"above beta / epsilon = {beta / epsilon:g} (s = e^(-3 sigma^2/2) "
                             "(epsilon - beta / sigma) must be positive)", sigma)
    alpha = math.exp(-1.5 * sigma * sigma) * (epsilon - beta / sigma)
    if not alpha > 0.0 or not math.isfinite(1.0 / alpha):
        if given_sigma:
            raise ParameterError("sigma", "small enough that s = e^(-3 sigma^2 / 2) (epsilon - beta / sigma) "
                                 "is a normal float64", sigma)
        raise ParameterError("beta", f"small enough against epsilon {epsilon:g} that the noise scale is finite "
                             f"(sigma {sigma:g} makes e^(-3 sigma^2 / 2) underflow)", beta)
    return alpha, sigma


def _quantile(noise: Noise, failure_probability: float, sigma: float | None, degrees: int | None = None) -> float:
    """z with P(|Z| > z) = q (laplace, cauchy, student-t), or the Chebyshev z with bound q (laplace-log-normal)."""
    q = failure_probability
    if noise == "student-t":
        assert degrees is not None
        return student_t_quantile(q, degrees)
    if noise == "laplace":
        return -math.log(q)
    if noise == "cauchy":
        # (2/pi) arctan(1/z) = q: z = cot(pi q / 2) = tan(pi (1 - q) / 2), whichever is precise
        return 1.0 / math.tan(0.5 * math.pi * q) if q <= 0.5 else math.tan(0.5 * math.pi * (1.0 - q))
    assert sigma is not None
    return math.sqrt(2.0 / q) * math.exp(sigma * sigma)


def _error(noise: Noise, scale: float, failure_probability: float, sigma: float | None,
           degrees: int | None = None) -> float:
    return scale * _quantile(noise, failure_probability, sigma, degrees)


def _failure(noise: Noise, scale: float, error: float, sigma: float | None, degrees: int | None = None) -> float:
    z = error / scale
    if noise == "student-t":
        assert degrees is not None
        return math.exp(student_t_log_tail(z, degrees))
    if noise == "laplace":
        return math.exp(-z)
    if noise == "cauchy":
        return 2.0 / math.pi * math.atan(1.0 / z) if z > 0.0 else 1.0  # an error far below the scale
    assert sigma is not None
    square = z * z
    return min(1.0, 2.0 * math.exp(2.0 * sigma * sigma) / square) if square > 0.0 else 1.0


def _alpha_for_accuracy(noise: Noise, S: float, error: float, failure_probability: float,
                        beta: float | None, sigma: float | None, degrees: int | None = None) -> tuple[float, float | None]:
    """alpha = S / scale, the scale the largest with failure probability q at `error`; for
    laplace-log-normal without sigma, the sigma minimising epsilon = t / sigma +
    K e^(5 sigma^2 / 2), K = S sqrt(2/q) / error (Chebyshev scale error sqrt(q/2) e^(-sigma^2))."""
    if noise != "laplace-log-normal":
        return _alpha_at_scale(S, error, error / _quantile(noise, failure_probability, None, degrees)), None
    assert beta is not None
    if sigma is None:
        log_k = math.log(S) + 0.5 * math.log(2.0 / failure_probability) - math.log(error)
        sigma = _minimising_sigma(beta, 5.0, log_k)
    return _alpha_at_scale(S, error, error / _quantile(noise, failure_probability, sigma)), sigma


def _alpha_at_scale(S: float, error: float, scale: float) -> float:
    """alpha = S / scale for the scale an accuracy asks, refused where that scale (or alpha)
    leaves float64's range (S and the error some 1e300 apart)."""
    alpha = S / scale if scale > 0.0 else math.inf
    if not (0.0 < scale < math.inf and 0.0 < alpha < math.inf):
        raise ParameterError("error", f"such that the noise scale it needs is a positive finite float64, as is "
                             f"S / scale (S = {S:g}, scale = {scale:g})", error)
    return alpha
