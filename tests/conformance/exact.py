"""Independent checks for the corpus: closed forms and quadratures in mpmath (50 digits), written
from the papers (docs/mathematics.md), never from dpcalc's code or a peer's."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import mpmath as mp

DIGITS = 50


def _bisect(f: Callable[[mp.mpf], mp.mpf], lo: float, hi: float, steps: int = 200) -> float:
    """The root of an increasing f on [lo, hi] (f(lo) <= 0 <= f(hi)), by bisection until both ends
    round to the same double (or `steps` halvings)."""
    a, b = mp.mpf(lo), mp.mpf(hi)
    assert f(a) <= 0 <= f(b), "bracket does not hold the root"
    for _ in range(steps):
        if float(a) == float(b):
            break
        m = (a + b) / 2
        if f(m) <= 0:
            a = m
        else:
            b = m
    return float((a + b) / 2)


def gaussian_delta(mu: float, eps: float) -> float:
    """delta(eps) of mu-GDP: Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Balle, Wang 2018, Thm 8;
    Dong, Roth, Su 2022, Cor. 2.13)."""
    with mp.workdps(DIGITS):
        m, e = mp.mpf(mu), mp.mpf(eps)
        return float(mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2))


def gaussian_eps(mu: float, delta: float) -> float:
    """The epsilon at which mu-GDP has the given delta (inverse of gaussian_delta)."""
    with mp.workdps(DIGITS):
        d = mp.mpf(delta)

        def f(e: mp.mpf) -> mp.mpf:
            m = mp.mpf(mu)
            return d - (mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2))

        return _bisect(f, 0.0, 10 * mu * mu + 20 * mu + 10)


def gaussian_sigma(eps: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest noise std meeting (eps, delta) for L2 sensitivity Delta (Balle, Wang 2018, Thm 8)."""
    with mp.workdps(DIGITS):

        def f(s: mp.mpf) -> mp.mpf:
            m = mp.mpf(sensitivity) / s
            e = mp.mpf(eps)
            return mp.mpf(delta) - (mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2))

        return _bisect(f, 1e-6 * sensitivity, 1e6 * sensitivity)


def subsampled_gaussian_delta(q: float, sigma: float, eps: float) -> float:
    """delta(eps) of one Poisson-subsampled Gaussian step, the larger of the remove pair
    ((1-q) N(0, s^2) + q N(1, s^2) against N(0, s^2)) and the add pair (the reverse); both
    likelihood ratios are monotone, so each delta is a difference of normal tails (Zhu, Dong,
    Wang 2022, Sec. 5)."""
    with mp.workdps(DIGITS):
        q_, s, e = mp.mpf(q), mp.mpf(sigma), mp.mpf(eps)
        best = mp.mpf(0)
        if q == 1:
            return gaussian_delta(1 / sigma, eps)
        # remove: loss log(1 - q + q e^((2x-1)/(2 s^2))) > eps  <=>  x > x1
        if mp.exp(e) > 1 - q_:
            x1 = s * s * mp.log((mp.exp(e) - (1 - q_)) / q_) + mp.mpf(1) / 2
            p_tail = (1 - q_) * mp.ncdf(-x1 / s) + q_ * mp.ncdf(-(x1 - 1) / s)
            best = max(best, p_tail - mp.exp(e) * mp.ncdf(-x1 / s))
        # add: loss -log(1 - q + q e^((2x-1)/(2 s^2))) > eps  <=>  x < x2
        if mp.exp(-e) > 1 - q_:
            x2 = s * s * mp.log((mp.exp(-e) - (1 - q_)) / q_) + mp.mpf(1) / 2
            q_tail = (1 - q_) * mp.ncdf(x2 / s) + q_ * mp.ncdf((x2 - 1) / s)
            best = max(best, mp.ncdf(x2 / s) - mp.exp(e) * q_tail)
        return float(best)


def subsampled_gaussian_sigma(q: float, eps: float, delta: float) -> float:
    """The smallest noise multiplier for which one Poisson-subsampled Gaussian step is (eps, delta)-DP."""
    return _bisect(lambda s: mp.mpf(delta) - subsampled_gaussian_delta(q, float(s), eps), 0.05, 100.0, steps=80)


def laplace_delta(pure_eps: float, eps: float) -> float:
    """delta(eps) of the Laplace mechanism with Delta/b = pure_eps: 1 - e^((eps - pure_eps)/2) for
    0 <= eps <= pure_eps (the privacy profile of Laplace, e.g. Balle et al. 2018)."""
    with mp.workdps(DIGITS):
        return float(max(mp.mpf(0), -mp.expm1((mp.mpf(eps) - mp.mpf(pure_eps)) / 2)))


def subsampled_gaussian_rdp(q: float, sigma: float, order: float) -> float:
    """RDP of the Poisson-subsampled Gaussian at `order` (Mironov, Talwar, Zhang 2019): the binomial
    sum at integer orders, the integral E_{N(0, s^2)}[(1 - q + q e^((2z-1)/(2 s^2)))^a] otherwise."""
    with mp.workdps(DIGITS):
        q_, s = mp.mpf(q), mp.mpf(sigma)
        if q == 1:
            return float(mp.mpf(order) / (2 * s * s))
        if float(order).is_integer():
            a = int(order)
            total = mp.fsum(
                mp.binomial(a, k) * (1 - q_) ** (a - k) * q_**k * mp.expm1(mp.mpf(k * k - k) / (2 * s * s))
                for k in range(2, a + 1)
            )
            return float(mp.log1p(total) / (a - 1))
        a = mp.mpf(order)

        def integrand(z: mp.mpf) -> mp.mpf:
            x = q_ * mp.expm1((2 * z - 1) / (2 * s * s))
            return mp.npdf(z, 0, s) * ((1 + x) ** a - 1 - a * x)

        z0 = s * s * mp.log(1 / q_ - 1) + mp.mpf(1) / 2
        points = sorted({-mp.inf, -5 * s, mp.mpf(0), mp.mpf(1) / 2, mp.mpf(1), mp.mpf(2), a, z0, a + 5 * s, mp.inf})
        return float(mp.log1p(mp.quad(integrand, points, maxdegree=12)) / (a - 1))


def improved_epsilon(curve: Sequence[tuple[float, float]], delta: float) -> float:
    """min over orders of rdp + log1p(-1/a) - (log delta + log a)/(a - 1) (Canonne, Kamath, Steinke
    2020, Prop. 12), never below 0."""
    with mp.workdps(DIGITS):
        best = mp.inf
        for a_, r in curve:
            a = mp.mpf(a_)
            e = mp.mpf(r) + mp.log1p(-1 / a) - (mp.log(mp.mpf(delta)) + mp.log(a)) / (a - 1)
            best = min(best, e)
        return float(max(best, mp.mpf(0)))


def improved_delta(order: float, rdp: float, eps: float) -> float:
    """The delta of one RDP point at epsilon eps, the inverse of the conversion above (CKS 2020, Prop. 12)."""
    with mp.workdps(DIGITS):
        a = mp.mpf(order)
        log_delta = (a - 1) * (mp.mpf(rdp) - mp.mpf(eps) + mp.log1p(-1 / a)) - mp.log(a)
        return float(min(mp.mpf(1), mp.exp(log_delta)))


def kov_delta(eps_total: float, eps: float, delta: float, k: int) -> float:
    """The exact total delta at eps_total of k (eps, delta)-DP mechanisms: 1 - (1 - delta)^k (1 - delta_RR)
    with delta_RR = sum_l C(k,l) p^(k-l) q^l (1 - e^(eps_total - (k-2l) eps))_+, p = e^eps/(1+e^eps)
    (Kairouz, Oh, Viswanath 2015, Thm 3.3)."""
    with mp.workdps(DIGITS):
        eg, e = mp.mpf(eps_total), mp.mpf(eps)
        p = mp.exp(e) / (1 + mp.exp(e))
        rr = mp.fsum(
            mp.binomial(k, l) * p ** (k - l) * (1 - p) ** l * -mp.expm1(eg - (k - 2 * l) * e)
            for l in range(k + 1)
            if (k - 2 * l) * e > eg
        )
        return float(1 - (1 - mp.mpf(delta)) ** k * (1 - rr))


def kov_eps(total_delta: float, eps: float, delta: float, k: int) -> float:
    """The smallest total epsilon at total delta of k (eps, delta)-DP mechanisms (KOV Thm 3.3)."""
    return _bisect(lambda g: mp.mpf(total_delta) - kov_delta(float(g), eps, delta, k), 0.0, k * eps)


def kov_max_eps(total_eps: float, total_delta: float, delta: float, k: int) -> float:
    """The largest per-mechanism epsilon whose k-fold composition is (total_eps, total_delta)-DP."""
    return _bisect(lambda e: kov_delta(total_eps, float(e), delta, k) - mp.mpf(total_delta), 1e-9, total_eps)
