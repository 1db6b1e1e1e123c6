"""The model that steers the calibration search: the central-limit GDP epsilon, continuous in T.

m(x), the epsilon of the central-limit approximation of the run (Bu, Dong, Long, Su 2020,
Thm 4, with real T; Dong, Roth, Su 2022, Cor. 2.13), is cheap, smooth and continuous in the
quantity x; the search follows it, corrected by the residual log(accountant / model).
"""

from __future__ import annotations

import math

from dpcalc.core import gdp
from dpcalc.core.special import log_expm1

# Model log epsilons are clipped to this magnitude inside the predictor, so that an epsilon of
# 0 or inf at the edge of the model's range still gives a usable sign.
LOG_CLIP = 700.0


def model_log_mu(p: float, sigma: float, steps: float) -> float:
    """log mu of the central-limit approximation for real T (BDLS Thm 4: mu = p sqrt(T (e^(1/sigma^2) - 1)));
    -inf at p = 0 (nothing sampled: mu = 0); at p = 1 the exact sqrt(T)/sigma (DRS Cor. 3.3), as
    `gdp.noisy_sgd_gdp` and the gdp accountant give it."""
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return min(0.5 * math.log(steps) - math.log(sigma), 700.0)
    square = sigma * sigma
    if square == 0.0:  # sigma below 1e-162: 1/sigma^2 overflows, and so does mu
        return 700.0
    inverse = 1.0 / square
    # sigma above about 1e154: 1/sigma^2 underflows to 0, where log(e^x - 1) = log x + O(x)
    log_excess = log_expm1(inverse) if inverse > 0.0 else -2.0 * math.log(sigma)
    return min(math.log(p) + 0.5 * math.log(steps) + 0.5 * log_excess, 700.0)


def laplace_model_log_mu(unit_scale: float, steps: float) -> float:
    """log mu of k = `steps` Laplace releases of scale b per unit of sensitivity, as mu-GDP by the
    central limit: mu = sqrt(2 k KL), KL = eps0 - 1 + e^(-eps0) the Kullback-Leibler divergence of
    Lap(0, b) and Lap(D, b), eps0 = D/b (for the Gaussian mechanism mu^2/2 is its KL; DRS Thm 3.5
    gives mu = sqrt(k) eps0 for small eps0, as here). It only steers the search."""
    pure = 1.0 / unit_scale
    if pure < 0.5:  # KL = e^(-y) - 1 + y by its series: no cancellation for small y
        term, kl, n = 0.5 * pure * pure, 0.5 * pure * pure, 2
        while abs(term) > 1e-17 * kl:
            n += 1
            term *= -pure / n
            kl += term
    else:
        kl = pure + math.expm1(-pure)
    return min(0.5 * (math.log(2.0) + math.log(steps) + math.log(kl)), 700.0)


def model_log_epsilon(p: float, sigma: float, steps: float, delta: float, *, log_mu: float | None = None) -> float:
    """log of the central-limit GDP epsilon for real T (BDLS Thm 4; DRS Cor. 2.13); at `log_mu`
    when given (the Laplace mechanism's, `laplace_model_log_mu`)."""
    if log_mu is None and not (p > 0.0 and sigma > 0.0 and steps > 0.0):
        return -LOG_CLIP
    mu = math.exp(model_log_mu(p, sigma, steps) if log_mu is None else log_mu)
    epsilon = gdp.epsilon_for_delta(delta, mu)
    if epsilon <= 0.0:
        return -LOG_CLIP
    return min(math.log(epsilon), LOG_CLIP)
