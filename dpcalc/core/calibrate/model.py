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
    -inf at p = 0 (nothing sampled: mu = 0)."""
    if p == 0.0:
        return -math.inf
    return min(math.log(p) + 0.5 * math.log(steps) + 0.5 * log_expm1(1.0 / (sigma * sigma)), 700.0)


def model_log_epsilon(p: float, sigma: float, steps: float, delta: float) -> float:
    """log of the central-limit GDP epsilon for real T (BDLS Thm 4; DRS Cor. 2.13)."""
    if not (p > 0.0 and sigma > 0.0 and steps > 0.0):
        return -LOG_CLIP
    mu = math.exp(model_log_mu(p, sigma, steps))
    epsilon = gdp.epsilon_for_delta(delta, mu)
    if epsilon <= 0.0:
        return -LOG_CLIP
    return min(math.log(epsilon), LOG_CLIP)
