"""User-level privacy with Poisson sampling of examples: `MixturePair`.

A user contributes up to k examples, each sampled into a step independently with probability
p and clipped to norm C, so the number of the user's examples in a batch is J ~ Bin(k, p) and the
worst case puts all of them in one direction. In units of C, with s the noise multiplier, the
dominating pair is (Ganesh 2024, arXiv 2401.10294; docs/mathematics.md, "User-level privacy")

    remove:  P = sum_j w_j N(j, s^2),  Q = N(0, s^2),     w_j = Bin(k, p)(j)
    add:     P = N(0, s^2),  Q = sum_j w_j N(j, s^2)

with the loss l(x) = log sum_j w_j e^((2 j x - j^2)/(2 s^2)), increasing and convex in x. k = 1 is
the example-level pair of `gaussian.GaussianPair`.

The inverse has no closed form. Above the support's lower end log w_0,

    l(x) = log w_0 + log(1 + e^(h(x))),   h(x) = log sum_(j >= 1) e^(a_j + j x / s^2),
    a_j = log w_j - log w_0 - j^2/(2 s^2),

and h is convex with slope in [1/s^2, k/s^2]: Newton's method started to the right of the root
(at the smallest x where one term alone reaches the target) descends to it, and the slope's lower
bound turns the residual into a certified error, |x - x*| <= s^2 |h(x) - h(x*)|.
"""

from __future__ import annotations

import math

import numpy as np

from dpcalc.core.arrays import sorted_distinct
from dpcalc.core.pld.normal import log_density
from dpcalc.core.pld.normal_interval import log_interval_mass
from dpcalc.core.pld.pairs.base import (
    CellMasses,
    Pair,
    U,
    _cell_ends,
    _combine,
    _directed,
    _log_sum,
    _settled,
    _weighted_moments,
    _x_sensitivity,
)
from dpcalc.core.special_array import log_expm1

# Newton iterations of the inverse: quadratic convergence from at most s^2 log k to the right of
# the root (the start's excess in h is at most log k, the slope at least 1/s^2) needs far fewer.
_NEWTON_ITERATIONS = 60


def binomial_log_weights(examples: int, p: float) -> tuple[np.ndarray, np.ndarray]:
    """log Bin(k, p)(j) for j = 0..k, and bounds on their absolute rounding errors (lgamma and
    log1p are within a few ulps of their results; each sum adds an ulp of its terms)."""
    j = np.arange(examples + 1, dtype=float)
    if p == 1.0:
        log_w = np.full(examples + 1, -math.inf)
        log_w[-1] = 0.0
        return log_w, np.zeros(examples + 1)
    log_choose = np.array([math.lgamma(examples + 1) - math.lgamma(i + 1) - math.lgamma(examples - i + 1)
                           for i in range(examples + 1)])
    log_p, log_q = math.log(p), math.log1p(-p)
    log_w = log_choose + j * log_p + (examples - j) * log_q
    magnitude = 3.0 * math.lgamma(examples + 1) + j * abs(log_p) + (examples - j) * abs(log_q)
    return log_w, 4.0 * U * (magnitude + 1.0)


class MixturePair(Pair):
    """The user-level pair: Bin(k, p) examples of one user in a step, one direction."""

    def __init__(self, sampling_probability: float, noise_multiplier: float, examples: int, direction: str) -> None:
        if direction not in ("remove", "add"):
            raise ValueError(f"direction must be 'remove' or 'add', got direction={direction!r}")
        from dpcalc.core.limits import EXAMPLES_PER_USER

        EXAMPLES_PER_USER.check("examples_per_user", examples)  # its cost grows with k (core.limits)
        self.p = float(sampling_probability)
        self.sigma = float(noise_multiplier)
        self.k = int(examples)
        self.direction = direction
        self.log_w, self.w_err = binomial_log_weights(self.k, self.p)
        s2 = self.sigma**2
        self.log_w0 = float(self.log_w[0])
        j = np.arange(1, self.k + 1, dtype=float)
        base = self.log_w0 if math.isfinite(self.log_w0) else 0.0
        self.a = self.log_w[1:] - base - j * j / (2.0 * s2)
        # terms of weight 0 (p = 1: all but j = k) take no part
        self._terms = [index for index in range(self.k) if math.isfinite(self.a[index])]
        finite_w = np.where(np.isfinite(self.log_w[1:]), np.abs(self.log_w[1:]), 0.0)
        self.a_err = self.w_err[1:] + self.w_err[0] + 4.0 * U * (finite_w + abs(base) + j * j / s2)
        self._a_err_max = float(self.a_err[self._terms].max())
        low = self.log_w0  # -inf when p = 1
        self.support = (low, math.inf) if direction == "remove" else (-math.inf, -low)

    def _h(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """h(x), its slope and a bound on the rounding error of h (module docstring)."""
        s2 = self.sigma**2
        acc = np.full(x.shape, -math.inf)
        biggest = np.zeros(x.shape)
        with np.errstate(over="ignore", invalid="ignore"):
            for index in self._terms:
                term = self.a[index] + (index + 1.0) * x / s2
                acc = np.logaddexp(acc, term)
                # j x / s^2 and its sum with a_j: an ulp each of the terms
                biggest = np.maximum(biggest, np.abs(term) + abs(float(self.a[index])))
            # the slope E[j]/s^2 under the weights e^(term_j - h) (a second pass: adding log j to a
            # term of size 1e20 would lose it to rounding)
            mean_j = np.zeros(x.shape)
            for index in self._terms:
                mean_j = mean_j + (index + 1.0) * np.exp(self.a[index] + (index + 1.0) * x / s2 - acc)
            slope = np.clip(mean_j, 1.0, float(self.k)) / s2
        # the terms' rounding, log a_j's own error and logaddexp's ulps per term
        err = 4.0 * U * (biggest + np.abs(acc) + len(self._terms)) + self._a_err_max
        return acc, slope, err

    def inverse(self, loss: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """x(l) for each loss l (-inf at or below the support's lower end), and a bound on its
        absolute error: Newton on h (module docstring), certified by the slope's lower bound."""
        loss = np.asarray(loss, dtype=float)
        s2 = self.sigma**2
        finite = np.isfinite(loss)
        if math.isfinite(self.log_w0):
            d = loss - self.log_w0
            valid = finite & (d > 0.0)
            d_safe = np.where(valid, d, 1.0)
            target = log_expm1(d_safe)
            # the error of d and its effect through d/dd log(e^d - 1) = 1/(1 - e^-d)
            target_err = 4.0 * U * (np.abs(np.where(finite, loss, 0.0)) + abs(self.log_w0)) / -np.expm1(-d_safe)
            target_err = target_err + 2.0 * U * np.abs(target)
        else:
            valid = finite
            target = np.where(valid, loss, 0.0)
            target_err = 2.0 * U * np.abs(target)
        j = np.arange(1, self.k + 1, dtype=float)
        # each term alone reaches the target at x_j = s^2 (target - a_j)/j: h(x_j) >= target
        starts = s2 * (target[..., None] - self.a) / j
        x = np.min(starts, axis=-1)
        for _ in range(_NEWTON_ITERATIONS):
            h, slope, _ = self._h(x)
            step = (h - target) / slope
            x_new = x - step
            settled = np.abs(step) <= 4.0 * U * (np.abs(x) + s2)
            x = x_new
            if np.all(settled | ~valid):
                break
        h, _, h_err = self._h(x)
        err = s2 * (np.abs(h - target) + 2.0 * h_err + target_err) + 4.0 * U * np.abs(x)
        x = np.where(valid, x, -math.inf)
        x = np.where(np.isposinf(loss), math.inf, x)
        err = np.where(np.isfinite(x), err, 0.0)
        return x, err

    def log_loss(self, x: np.ndarray) -> np.ndarray:
        """l(x) = log sum_j w_j e^((2 j x - j^2)/(2 s^2)) (quadrature only)."""
        s2 = self.sigma**2
        out = np.full(np.shape(x), -math.inf)
        for j in range(self.k + 1):
            if math.isfinite(self.log_w[j]):
                out = np.logaddexp(out, self.log_w[j] + (2.0 * j * x - j * j) / (2.0 * s2))
        return out

    def cell_masses(self, edges: np.ndarray) -> CellMasses:
        """`Pair.cell_masses`: the x-interval of each loss cell and its masses under N(0, s^2)
        and each N(j, s^2), as differences of normal tails with their error bounds (S2)."""
        edges = np.asarray(edges, dtype=float)
        x_lo, e_lo, x_hi, e_hi = _cell_ends(self.inverse, edges, self.direction)
        s = self.sigma
        mix_log: np.ndarray | float = -math.inf
        mix_rel: np.ndarray | float = 0.0
        log_m0 = rel_m0 = np.zeros(0)
        for j in range(self.k + 1):
            t_lo, t_hi = (x_lo - j) / s, (x_hi - j) / s
            # the subtraction and the division round: an ulp each of |x - j|
            ej_lo = e_lo + 4.0 * U * (np.abs(np.where(np.isfinite(x_lo), x_lo, 0.0)) + j)
            ej_hi = e_hi + 4.0 * U * (np.abs(np.where(np.isfinite(x_hi), x_hi, 0.0)) + j)
            log_m, rel_m = log_interval_mass(t_lo, t_hi)
            rel_m = rel_m + _x_sensitivity(s, t_lo, ej_lo, t_hi, ej_hi, log_m)
            if j == 0:
                log_m0, rel_m0 = log_m, rel_m
            if math.isfinite(self.log_w[j]):
                mix_log, mix_rel = _combine(mix_log, mix_rel, self.log_w[j] + log_m,
                                            rel_m + 2.0 * U + np.expm1(self.w_err[j]) + U)
        mix_log_arr, mix_rel_arr = _settled(np.asarray(mix_log, dtype=float), np.asarray(mix_rel, dtype=float))
        log_m0, rel_m0 = _settled(log_m0, rel_m0)
        return _directed(self.direction, (mix_log_arr, mix_rel_arr), (log_m0, rel_m0))

    def _weights(self, power: float, cap: float = math.inf) -> tuple[np.ndarray, np.ndarray]:
        """Points x and log weights of E_N(0,s^2)[e^(power l(x)) g(x)] (trapezoid in z = x/s over
        the windows where phi(z) e^(power l) lives: its maxima lie between 0 and power k/s, near
        power j/s for some j, each at least as wide as a standard normal). Points whose loss in
        this direction is at or above `cap` are left out (the truncated MGF)."""
        step = 0.125
        peaks = [power * j / self.sigma for j in range(self.k + 1)]
        low, high = min(peaks), max(peaks)
        if high - low <= 2000.0:
            z = np.arange(low - 40.0, high + 40.0 + step, step)
        else:
            z = sorted_distinct(np.concatenate([np.round(np.arange(c - 40.0, c + 40.0, step) / step) * step for c in peaks]))
        x = self.sigma * z
        loss = self.log_loss(x)
        directed = loss if self.direction == "remove" else -loss
        keep = directed < cap
        return x[keep], (log_density(z) + power * loss + math.log(step))[keep]

    def log_mgf(self, lam: float, cap: float = math.inf) -> float:
        """`Pair.log_mgf` by quadrature over x: E_P[e^(lam L)] = E_Q[e^((lam + 1) l)] (remove)
        or E_N(0)[e^(-lam l)] (add)."""
        power = lam + 1.0 if self.direction == "remove" else -lam
        _, values = self._weights(power, cap)
        return _log_sum(values)

    def moments(self) -> tuple[float, float]:
        """`Pair.moments`: mean and variance of the loss under P, by the same quadrature."""
        power = 1.0 if self.direction == "remove" else 0.0
        x, log_w = self._weights(power)
        weight = np.exp(log_w)
        loss = self.log_loss(x) * (1.0 if self.direction == "remove" else -1.0)
        return _weighted_moments(weight, loss)
