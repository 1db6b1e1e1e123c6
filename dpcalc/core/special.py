"""Log-space special functions in pure Python.

The standard normal distribution functions here avoid scipy on purpose: importing
`scipy.special` costs about four times the whole start-up of the command line, and the
closed-form commands need only these few functions. Each is tested against mpmath.

The central identity is the Mills ratio R(t) = Phi(-t) / phi(t). In the upper tail
Phi(-t) = phi(t) R(t), so log Phi(-t) = log phi(t) + log R(t) never underflows, and a
difference of two tail probabilities becomes a difference of two ratios of order 1/t.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_SQRT_HALF_PI = math.sqrt(0.5 * math.pi)
_SQRT2 = math.sqrt(2.0)

# Below this t the Mills ratio is computed from erfc; above it from the continued fraction,
# which then converges to full precision within 20 + 400/t^2 terms (checked against mpmath).
_CONTINUED_FRACTION_FROM = 1.5


def log_add(a: float, b: float) -> float:
    """log(e^a + e^b) without overflow."""
    if a == -math.inf:
        return b
    if b == -math.inf:
        return a
    high, low = (a, b) if a >= b else (b, a)
    return high + math.log1p(math.exp(low - high))


def log_sub(a: float, b: float) -> float:
    """log(e^a - e^b) for a >= b without overflow; -inf when a == b."""
    if b > a:
        raise ValueError(f"log_sub needs a >= b, got a={a}, b={b}")
    if b == -math.inf:
        return a
    if a == b:
        return -math.inf
    return a + log1mexp(b - a)


def log1mexp(x: float) -> float:
    """log(1 - e^x) for x <= 0, accurate at both ends (Maechler 2012, 'Accurately computing log(1 - exp(-|a|))')."""
    if x > 0:
        raise ValueError(f"log1mexp needs x <= 0, got x={x}")
    if x > -math.log(2.0):
        return math.log(-math.expm1(x))
    return math.log1p(-math.exp(x))


def log_expm1(x: float) -> float:
    """log(e^x - 1) for x > 0 without overflow for large x."""
    if x > 40.0:
        return x + math.log1p(-math.exp(-x))
    return math.log(math.expm1(x))


def log_sum_exp(values: Iterable[float]) -> float:
    """log(sum(e^v)) over an iterable, stable for large and very negative values."""
    values = list(values)
    if not values:
        return -math.inf
    top = max(values)
    if top == -math.inf or top == math.inf:
        return top
    return top + math.log(math.fsum(math.exp(v - top) for v in values))


def log_norm_pdf(t: float) -> float:
    """log phi(t) for the standard normal density."""
    return -0.5 * t * t - _LOG_SQRT_2PI


def mills_ratio(t: float) -> float:
    """R(t) = Phi(-t) / phi(t), the Mills ratio of the standard normal.

    For t >= 1.5 the continued fraction R(t) = 1/(t + 1/(t + 2/(t + 3/(t + ...)))) (Laplace;
    Abramowitz and Stegun 26.2.14) is evaluated backwards; it involves no exponential, so it
    keeps full relative precision where erfc(t/sqrt 2) * exp(t^2/2) would lose t^2 ulps.
    Below 1.5 the erfc form is exact to a few ulps. R(t) ~ 1/t for large t; R(inf) = 0.
    """
    if math.isnan(t):
        return math.nan
    if t == math.inf:
        return 0.0
    if t < _CONTINUED_FRACTION_FROM:
        # Phi(-t) * sqrt(2 pi) * e^(t^2/2); t^2/2 <= 1.125 for t in [-1.5, 1.5] so exp is exact
        # to an ulp. For t < -1.5 the ratio grows like e^(t^2/2) and may overflow to inf.
        return 0.5 * math.erfc(t / _SQRT2) * math.sqrt(2.0 * math.pi) * math.exp(0.5 * t * t)
    terms = 20 + int(400.0 / (t * t))
    f = t
    for k in range(terms, 0, -1):
        f = t + k / f
    return 1.0 / f


def mills_ratio_slope(t: float) -> float:
    """1 - t R(t) = -R'(t), R the Mills ratio, without cancellation for large t.

    For t >= 1.5, from the continued fraction 1/R(t) = t + 1/G(t) with
    G(t) = t + 2/(t + 3/(t + ...)): 1 - t R(t) = 1 / (1 + t G(t)) (Abramowitz and Stegun 26.2.14).
    Below 1.5, t R(t) <= 0.6, so the plain difference keeps its precision.
    """
    if t < _CONTINUED_FRACTION_FROM:
        return 1.0 - t * mills_ratio(t)
    terms = 20 + int(400.0 / (t * t))
    f = t
    for k in range(terms, 1, -1):
        f = t + k / f
    return 1.0 / (1.0 + t * f)


def log_ndtr(x: float) -> float:
    """log Phi(x), accurate to a few ulps from x = -1e150 to +inf.

    Lower tail: log Phi(x) = log phi(x) + log R(-x) (Mills ratio); upper half:
    log Phi(x) = log1p(-Phi(-x)).
    """
    if math.isnan(x):
        return math.nan
    if x == -math.inf:
        return -math.inf
    if x <= -_CONTINUED_FRACTION_FROM:
        return log_norm_pdf(x) + math.log(mills_ratio(-x))
    if x < _CONTINUED_FRACTION_FROM:
        return math.log(0.5 * math.erfc(-x / _SQRT2))
    return math.log1p(-ndtr(-x))


def ndtr(x: float) -> float:
    """Phi(x), the standard normal CDF, with full relative precision in the lower tail."""
    if math.isnan(x):
        return math.nan
    if x <= -_CONTINUED_FRACTION_FROM:
        return math.exp(log_norm_pdf(x)) * mills_ratio(-x)
    return 0.5 * math.erfc(-x / _SQRT2)


def ndtri(probability: float) -> float:
    """Phi^{-1}(probability), the standard normal quantile, for probability in [0, 1].

    Lower half: the rational start of Abramowitz and Stegun 26.2.23 (|error| < 4.5e-4), then
    Newton steps, which converge quadratically: on Phi(x) - p near the centre and on
    log Phi(x) - log p in the tail, each keeping relative precision where it is used.
    Upper half by symmetry: 1 - p is exact for p > 1/2.
    """
    if math.isnan(probability) or not 0.0 <= probability <= 1.0:
        raise ValueError(f"ndtri needs probability in [0, 1], got probability={probability}")
    if probability == 0.0:
        return -math.inf
    if probability == 1.0:
        return math.inf
    if probability > 0.5:
        return -ndtri(1.0 - probability)
    if probability == 0.5:
        return 0.0
    log_p = math.log(probability)
    t = math.sqrt(-2.0 * log_p)
    x = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))))
    central = probability >= _CENTRAL_FROM
    offset = probability - 0.5  # exact for p in [1/4, 1/2] (Sterbenz)
    for _ in range(_NEWTON_STEPS):
        if central:
            # g(x) = Phi(x) - p = erf(x/sqrt2)/2 - (p - 1/2): no cancellation near x = 0.
            step = (0.5 * math.erf(x / _SQRT2) - offset) / math.exp(log_norm_pdf(x))
        else:
            # g(x) = log Phi(x) - log p has g'(x) = phi(x)/Phi(x) = 1/R(-x).
            step = (log_ndtr(x) - log_p) * mills_ratio(-x)
        x -= step
        if abs(step) <= 1e-16 * abs(x):
            break
    return x


# Above this probability Newton works on Phi itself (x near 0 keeps its relative precision);
# below it on log Phi (relative precision in the tail).
_CENTRAL_FROM = 0.1

# From an error below 4.5e-4, quadratic convergence reaches float64 precision in three steps;
# the fifth is a margin.
_NEWTON_STEPS = 5


def find_root(
    f: Callable[[float], float],
    lo: float,
    hi: float,
    *,
    xtol: float = 0.0,
    rtol: float = 4e-16,
    max_iterations: int = 200,
) -> float:
    """A root of f in [lo, hi], where f(lo) and f(hi) have opposite signs (Brent 1973, ch. 4).

    Raises ValueError when the interval does not bracket a root: a solver never starts on an
    interval that does not bracket.
    """
    a, b = lo, hi
    fa, fb = f(a), f(b)
    if fa == 0.0:
        return a
    if fb == 0.0:
        return b
    if (fa > 0.0) == (fb > 0.0):
        raise ValueError(f"find_root: [{lo}, {hi}] does not bracket a root (f = {fa}, {fb})")
    c, fc = a, fa
    d = e = b - a
    for _ in range(max_iterations):
        if (fb > 0.0) == (fc > 0.0):
            c, fc = a, fa
            d = e = b - a
        if abs(fc) < abs(fb):
            a, b, c = b, c, b
            fa, fb, fc = fb, fc, fb
        tol = 2.0 * rtol * abs(b) + 0.5 * xtol
        half = 0.5 * (c - b)
        if abs(half) <= tol or fb == 0.0:
            return b
        if abs(e) >= tol and abs(fa) > abs(fb):
            s = fb / fa
            if a == c:  # secant step
                p, q = 2.0 * half * s, 1.0 - s
            else:  # inverse quadratic interpolation
                q, r = fa / fc, fb / fc
                p = s * (2.0 * half * q * (q - r) - (b - a) * (r - 1.0))
                q = (q - 1.0) * (r - 1.0) * (s - 1.0)
            if p > 0.0:
                q = -q
            else:
                p = -p
            if 2.0 * p < min(3.0 * half * q - abs(tol * q), abs(e * q)):
                e, d = d, p / q
            else:
                d = e = half
        else:
            d = e = half
        a, fa = b, fb
        b += d if abs(d) > tol else math.copysign(tol, half)
        fb = f(b)
    return b
