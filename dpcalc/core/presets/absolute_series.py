"""dp_accounting's RDP at fractional orders, for the presets that run it (dp-accounting, and
tf-privacy, whose compute_dp_sgd_privacy runs dp_accounting's RdpAccountant).

dp_accounting 0.6.0 (rdp/rdp_privacy_accountant.py, `_compute_log_a_frac`, since commit 6f7deb3
of 2024-09-18) evaluates the two-sided series of Mironov, Talwar, Zhang (arXiv 1908.10530,
Sec. 3.3) with the absolute values |C(a, i)| of the binomial coefficients, all terms added:

    A_a <= sum_i |C(a, i)| [ q^i (1-q)^(a-i) e^((i^2 - i)/(2 sigma^2)) erfc((i - z0)/(sqrt2 sigma)) / 2
                            + q^(a-i) (1-q)^i e^((j^2 - j)/(2 sigma^2)) erfc((z0 - j)/(sqrt2 sigma)) / 2 ],

j = a - i, z0 = sigma^2 log(1/q - 1) + 1/2. Past i = a the coefficients alternate in sign, so
the sum with absolute values is an upper bound on A_a, above the signed sum dpcalc's curve
computes (the true value; `dpcalc.core.rdp.fractional_orders`) by up to ~1e-4 relative in
epsilon on DP-SGD runs. The series is summed until both parts decrease and fall 30 nats below
the running total, the library's stopping rule. Opacus, prv_accountant and TF Privacy before
0.6 sum the signed series, as dpcalc does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.special import gammaln, log_ndtr

from dpcalc.core.phases import Phase

# The library's iteration cap (`_MAX_STEPS_LOG_A_FRAC`); the orders the presets use converge
# within a few hundred terms.
_MAX_TERMS = 1000


def _log_abs_binomial(order: float, index: np.ndarray) -> np.ndarray:
    """log |C(order, i)| = log |Gamma(a + 1) / (Gamma(i + 1) Gamma(a - i + 1))|, by the
    reflection formula past i = a + 1 where Gamma(a - i + 1) changes sign."""
    below = index < order + 1.0
    direct = gammaln(order + 1.0) - gammaln(index + 1.0) - gammaln(np.where(below, order - index + 1.0, 1.0))
    with np.errstate(divide="ignore"):
        reflected = (np.log(abs(math.sin(math.pi * order))) - math.log(math.pi) + gammaln(order + 1.0)
                     + gammaln(np.where(below, 1.0, index - order)) - gammaln(index + 1.0))
    out: np.ndarray = np.where(below, direct, reflected)
    return out


def log_a_absolute(q: float, sigma: float, order: float) -> float:
    """log of the absolute-value series for A_order (module docstring); inf when it does not converge."""
    index = np.arange(_MAX_TERMS, dtype=np.float64)
    other = order - index
    log_coefficient = _log_abs_binomial(order, index)
    z0 = sigma * sigma * math.log(1.0 / q - 1.0) + 0.5
    log_q, log_1mq = math.log(q), math.log1p(-q)
    # (1/2) erfc(x / (sqrt2 sigma)) = Phi(-x / sigma): log_ndtr keeps the far tails
    first = (log_coefficient + index * log_q + other * log_1mq + (index * index - index) / (2 * sigma * sigma)
             + log_ndtr((z0 - index) / sigma))
    second = (log_coefficient + other * log_q + index * log_1mq + (other * other - other) / (2 * sigma * sigma)
              + log_ndtr((other - z0) / sigma))
    totals = np.logaddexp.accumulate(np.logaddexp(first, second))
    falling = np.zeros(_MAX_TERMS, dtype=bool)
    falling[1:] = (first[1:] < first[:-1]) & (second[1:] < second[:-1])
    done = np.flatnonzero(falling & (np.maximum(first, second) < totals - 30.0))
    return float(totals[done[0]]) if done.size else math.inf


def library_curve(phases: Sequence[Phase], orders: Sequence[float], curve: Sequence[float]) -> list[float]:
    """The composed curve `curve` (dpcalc's, over `orders`) with its fractional orders replaced by
    the absolute-value series summed over the Poisson-sampled Gaussian `phases`."""
    out = list(curve)
    for position, order in enumerate(orders):
        if float(order).is_integer():
            continue
        total = 0.0
        for phase in phases:
            q, sigma = phase.sampling_probability, phase.noise_multiplier
            if q == 0.0:
                continue
            assert sigma is not None, "a Gaussian phase has a noise multiplier"
            per_step = order / (2 * sigma * sigma) if q == 1.0 else log_a_absolute(q, sigma, order) / (order - 1.0)
            total += phase.steps * per_step
        out[position] = total
    return out
