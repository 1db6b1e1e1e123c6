"""Student's T, the noise of smooth sensitivity's student-t family: its two-sided tail and quantile.

Source: Bun, Steinke, "Average-Case Averages: Private Algorithms for Smooth Sensitivity and Mean
Estimation" (NeurIPS 2019, arXiv 1906.02830), Thm 31, for the noise; Abramowitz, Stegun 26.7.3-4
for the distribution function of T(d) with a whole number d of degrees of freedom, whose tail
P(|T| > z) is computed here as a series of positive terms at full relative precision
(`student_t_log_tail`), and inverted on a bracket that widens until it holds the root
(`student_t_quantile`). What the tail means for a release: `smooth_sensitivity`.

Pure Python (math only): on the start-up path of `dpcalc mechanism smooth-sensitivity`.
"""

from __future__ import annotations

import math

from dpcalc.core.special import find_root
from dpcalc.core.validation import Interval, ParameterError

# Student's T degrees of freedom offered: whole numbers (the tail is then a finite-term series)
DEGREES = Interval(1.0, 100.0, low_closed=True, high_closed=True, integer=True)
# q = 1 - confidence: at least the smallest normal float64 (a subnormal carries fewer digits)
FAILURE_PROBABILITY = Interval(2.2250738585072014e-308, 1.0, low_closed=True)


def student_t_log_tail(z: float, degrees: int) -> float:
    """log P(|T| > z) for Student's T with a whole number d of degrees of freedom, z >= 0.

    With u = sqrt(d) / z (= cot theta, theta = arctan(z / sqrt d)) and c^2 = cos^2 theta =
    u^2 / (1 + u^2), the textbook finite sums for P(|T| <= z) (Abramowitz, Stegun 26.7.3-4) are
    the first terms of series summing to 1, so the tail is the rest, a series of positive terms
    (no cancellation, full relative precision however small the tail):

        d even:  sin theta * sum_{k >= d/2} a_k c^(2k),            a_k = (2k - 1)!! / (2k)!!
        d odd:   (2/pi) sin theta cos theta * sum_{k >= (d-1)/2} b_k c^(2k),   b_k = (2k)!! / (2k + 1)!!

    (sum_k a_k y^k = (1 - y)^(-1/2), and sum_k b_k y^k = arcsin(sqrt y) / sqrt(y (1 - y)), which
    at y = cos^2 theta is (pi/2 - theta) / (sin theta cos theta)). For c^2 > 1/2 (z < sqrt d)
    the series converges slowly, so there the tail is taken as 1 minus the finite sums wherever it
    is at least 0.1 (a cancellation of at most a factor 10); below sqrt(d) it can be far smaller
    for many degrees of freedom (d = 98, z = 9.89: about 6e-16), and then the series is summed.
    """
    DEGREES.check("degrees", degrees)
    if math.isnan(z) or z < 0.0:
        raise ParameterError("z", "in [0, inf]", z)
    if z == 0.0:
        return 0.0
    if math.isinf(z):
        return -math.inf
    log_u = 0.5 * math.log(degrees) - math.log(z)
    u2 = math.exp(2.0 * log_u) if log_u < 300.0 else math.inf
    odd = degrees % 2 == 1
    first = (degrees - 1) // 2 if odd else degrees // 2
    if u2 > 1.0:  # z < sqrt(d): 1 - P(|T| <= z) from the finite sums where the tail is >= 0.1
        c2 = 1.0 / (1.0 + 1.0 / u2)  # u2 may be inf (z below 1e-130): c2 = 1, sin theta = 0
        sin = 1.0 / math.sqrt(1.0 + u2)
        total, term = 0.0, 1.0
        for k in range(first):
            total += term
            term *= c2 * ((2 * k + 2) / (2 * k + 3) if odd else (2 * k + 1) / (2 * k + 2))
        if odd:
            theta = math.atan2(z, math.sqrt(degrees))
            inside = 2.0 / math.pi * (theta + sin * math.sqrt(c2) * total)
        else:
            inside = sin * total
        if inside <= 0.9:
            return math.log1p(-inside)
    log_c2 = 2.0 * log_u - math.log1p(u2)
    coefficient = 1.0  # a_first or b_first, a product of at most 50 ratios
    for k in range(first):
        coefficient *= (2 * k + 2) / (2 * k + 3) if odd else (2 * k + 1) / (2 * k + 2)
    c2 = math.exp(log_c2)
    series, ratio, k = 1.0, 1.0, first
    while ratio > 1e-17 * series:
        ratio *= c2 * ((2 * k + 2) / (2 * k + 3) if odd else (2 * k + 1) / (2 * k + 2))
        series += ratio
        k += 1
    log_prefactor = -0.5 * math.log1p(u2)  # log sin theta
    if odd:
        log_prefactor += math.log(2.0 / math.pi) + log_u - 0.5 * math.log1p(u2)  # (2/pi) cos theta
    return log_prefactor + first * log_c2 + math.log(coefficient) + math.log(series)


def student_t_quantile(failure_probability: float, degrees: int) -> float:
    """The z with P(|T(d)| > z) = q: the root of the decreasing log tail in log z, on a bracket
    around sqrt(d) that widens until it holds the root (no fixed bracket)."""
    FAILURE_PROBABILITY.check("failure_probability", failure_probability)
    log_q = math.log(failure_probability)

    def f(log_z: float) -> float:
        return student_t_log_tail(math.exp(log_z), degrees) - log_q

    low = high = 0.5 * math.log(degrees)
    step = 1.0
    while f(low) <= 0.0:
        low -= step
        step *= 2.0
    step = 1.0
    while f(high) > 0.0:
        high = min(high + step, 709.0)
        step *= 2.0
        if high == 709.0 and f(high) > 0.0:
            raise ParameterError("failure_probability", f"large enough that the Student's T quantile (d = {degrees}) "
                                 "is a finite float64", failure_probability)
    return math.exp(find_root(f, low, high))
