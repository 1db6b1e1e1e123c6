"""A pair that shuffled batches attain: `MaxPair`, for the lower bound of a shuffled epoch.

An epoch of shuffled batches puts each record in exactly one of its t batches. Take neighbouring
datasets where every other record contributes 0 and the differing record +C (zero-out: against the
null record; add-remove: against its absence; replace-one: against a record contributing 0, one
of the records replace-one allows). In units of C and with s the noise multiplier, the t noisy
batch sums are then, for the two datasets,

    P: X_i ~ N(0, s^2) independent, except one uniformly random batch i with N(1, s^2);
    Q: X_i ~ N(0, s^2) independent.

Any statistic of the outputs gives a pair both datasets attain (post-processing), so the
composition of its law over the epochs is a certified lower bound (Chua et al., ICML 2024,
arXiv 2403.17673, and NeurIPS 2024, arXiv 2411.04205, bound shuffling from below this way with
the largest batch sum). `MaxPair` is the law of M = max_i X_i, in z = M/s. With a = 1/s and
Phi the standard normal CDF,

    Q:  F_Q(z) = Phi(z)^t,        P:  F_P(z) = Phi(z - a) Phi(z)^(t - 1),

and the likelihood ratio R(z) = (1/t) (e^(a z - a^2/2) + (t - 1) Phi(z - a)/Phi(z)) is increasing
(log Phi is concave). A partial epoch of r of the t batches holds the record with probability
q = r b / n: there P = (1 - q) Q + q (the law above with r batches), R = 1 - q + q R_r.

The loss L = log R has no closed-form inverse; it is found by safeguarded Newton steps and its
error certified by bracketing (`inverse`). Cell masses are differences of CDFs written as sums
of non-negative terms (`cell_masses`), so no two nearly equal numbers are subtracted.
"""

from __future__ import annotations

import math

import numpy as np

from dpcalc.core.arrays import sorted_distinct
from dpcalc.core.pld.normal import NORMAL_RELATIVE_ERROR, log_density, log_upper_tail, mills_ratio
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

_NEWTON_ITERATIONS = 100


def _log_cdf(z: np.ndarray) -> np.ndarray:
    """log Phi(z) (relative accuracy NORMAL_RELATIVE_ERROR in Phi)."""
    out: np.ndarray = log_upper_tail(-np.asarray(z, dtype=float))
    return out


def _mills_excess(x: np.ndarray, ratio: np.ndarray) -> np.ndarray:
    """1/R(x) - x for x >= 1.5 (R the Mills ratio, `ratio` = R(x)); 1/x, its limit to within
    2/x^3, past x = 1e4, where the difference would lose its digits."""
    out: np.ndarray = np.where(x < 1e4, 1.0 / ratio - x, 1.0 / x)
    return out


def _log_power_ratio(delta: np.ndarray, power: int) -> tuple[np.ndarray, np.ndarray]:
    """log g and its relative error for g = (1 - e^(-n delta))/(1 - e^(-delta)) = sum_(i < n) e^(-i delta),
    delta >= 0 (g = n at delta = 0): Phi_hi^n - Phi_lo^n = (Phi_hi - Phi_lo) Phi_hi^(n-1) g(delta) with
    delta = log(Phi_hi/Phi_lo). |d log g / d delta| <= n, so an error e in delta moves g by <= n e."""
    n = float(power)
    small = delta < 1e-300
    d = np.where(small, 1.0, delta)
    with np.errstate(divide="ignore", over="ignore"):
        value = np.log(-np.expm1(-n * d)) - np.log(-np.expm1(-d))
    return np.where(small, math.log(n), value), np.full(np.shape(delta), 8.0 * U)


class MaxPair(Pair):
    """The law of the largest of `batches` noisy batch sums, the record in one of them with
    probability `q` (module docstring); one direction ("remove": P has the record)."""

    def __init__(self, batches: int, q: float, noise: float, direction: str) -> None:
        if direction not in ("remove", "add"):
            raise ValueError(f"direction must be 'remove' or 'add', got direction={direction!r}")
        self.t = int(batches)
        self.q = float(q)
        self.sigma = float(noise)
        self.a = 1.0 / self.sigma
        self.direction = direction
        self.log1m_q = math.log1p(-self.q) if self.q < 1.0 else -math.inf
        self.support = (self.log1m_q, math.inf) if direction == "remove" else (-math.inf, -self.log1m_q)
        self._grid_range = (1, 0)  # empty: `_on_grid`'s cache
        self._grid_values = (np.zeros(0), np.zeros(0))

    # -- the loss and its inverse ---------------------------------------------------------------

    def _u(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """u(z) = log(e^(a z - a^2/2) + (t - 1) Phi(z - a)/Phi(z)) = log(t R_t(z)), its slope and a
        bound on its rounding error."""
        a, t = self.a, self.t
        first = a * z - 0.5 * a * a
        log_phi_lo, log_phi = _log_cdf(z - a), _log_cdf(z)
        # below z = -1.5, Phi(z - a)/Phi(z) = e^(a z - a^2/2) R(a - z)/R(-z) (R the Mills ratio):
        # free of the cancellation of two logarithms of size z^2/2
        deep = z <= -1.5
        with np.errstate(divide="ignore", invalid="ignore"):
            log_ratio = log_phi_lo - log_phi
            if deep.any():
                zd = z[deep]
                r_lo, r = mills_ratio(a - zd), mills_ratio(-zd)
                log_ratio[deep] = first[deep] + np.log(r_lo) - np.log(r)
            second = (math.log(t - 1) if t > 1 else -math.inf) + log_ratio
            u = np.logaddexp(first, second)
            # slope: a for the first term; m(z - a) - m(z) for the second, m = phi/Phi
            mills_lo = np.exp(log_density(z - a) - log_phi_lo)
            mills = np.exp(log_density(z) - log_phi)
            second_slope = mills_lo - mills
            if deep.any():
                # m(z) = 1/R(-z) there, and m(z - a) - m(z) = a + g(a - z) - g(-z) with
                # g(x) = 1/R(x) - x ~ 1/x: the difference of two numbers of size |z| would lose
                # every digit of the slope (Newton's steps) far out
                second_slope[deep] = a + _mills_excess(a - zd, r_lo) - _mills_excess(-zd, r)
            w_first = np.exp(first - u)
            slope = w_first * a + (1.0 - w_first) * second_slope
        # log Phi(z) carries NORMAL_RELATIVE_ERROR and, below 0, the rounding of z^2/2
        below = np.where(deep, 0.0, np.minimum(z - a, 0.0))
        logs = np.where(deep, np.abs(log_ratio) + np.abs(first), np.abs(log_phi_lo) + np.abs(log_phi))
        err = 4.0 * NORMAL_RELATIVE_ERROR + 4.0 * U * (np.abs(first) + logs + below * below + math.log(t) + np.abs(u) + 1.0)
        return u, slope, err

    def log_ratio(self, z: np.ndarray) -> np.ndarray:
        """log R(z) (the remove direction's loss)."""
        u, _, _ = self._u(np.asarray(z, dtype=float))
        log_rt = u - math.log(self.t)
        if self.q == 1.0:
            return log_rt
        out: np.ndarray = np.logaddexp(self.log1m_q, math.log(self.q) + log_rt)
        return out

    def inverse(self, loss: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """z(l) with log R(z) = l (-inf at or below the support's lower end), and a certified
        bound on its absolute error: after Newton steps the root is bracketed by evaluating u at
        z -+ e, e doubled until both signs are certain (u is increasing)."""
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return self._inverse(np.asarray(loss, dtype=float))

    def _inverse(self, loss: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`inverse` without its floating-point guard (ends of the support give infinities)."""
        finite = np.isfinite(loss)
        if self.q < 1.0:
            d = loss - self.log1m_q
            valid = finite & (d > 0.0)
            d_safe = np.where(valid, d, 1.0)
            # t R_t = t (e^l - (1 - q))/q = (t/q)(1 - q)(e^d - 1)
            target = math.log(self.t) - math.log(self.q) + self.log1m_q + log_expm1(d_safe)
            target_err = (4.0 * U * (np.abs(np.where(finite, loss, 0.0)) + abs(self.log1m_q)) / -np.expm1(-d_safe)
                          + 4.0 * U * (np.abs(target) + 1.0))
        else:
            valid = finite
            target = math.log(self.t) + np.where(valid, loss, 0.0)
            target_err = 4.0 * U * (np.abs(target) + 1.0)
        a = self.a
        # start: the first term alone gives u >= a z - a^2/2; the second alone u >= log(t - 1) +
        # log Phi(z - a) - log Phi(z) >= log(t - 1) - a z_+ ... use the first term's root, which is
        # to the right of the root, and a point far to the left as the bracket's other end
        hi = (target + 0.5 * a * a) / a
        lo = hi - 2.0 * (math.log(self.t) + 1.0) / a - 50.0
        z = np.clip(self._start(loss, valid, hi), lo, hi)
        # Newton steps kept inside the bracket [lo, hi] (bisection otherwise), on the points not
        # yet settled; the precision reached is certified below, so the stopping rule only saves work.
        # A point whose residual is within the rounding error of u, or whose step is below the
        # rounding of z, stays where it is: a further step only moves it by rounding noise (and a
        # bisection step would move it away from the root); u, its slope and error there are kept
        u_at, slope_at, err_at = np.zeros(len(z)), np.ones(len(z)), np.zeros(len(z))
        known = np.zeros(len(z), dtype=bool)
        active = np.flatnonzero(valid)
        for _ in range(_NEWTON_ITERATIONS):
            if active.size == 0:
                break
            za, ta = z[active], target[active]
            u, slope, u_err = self._u(za)
            found = np.abs(u - ta) <= u_err + target_err[active]
            above = u > ta
            hi_a = np.where(above, za, hi[active])
            lo_a = np.where(above, lo[active], za)
            with np.errstate(divide="ignore", invalid="ignore"):
                newton = za - (u - ta) / slope
            inside = np.isfinite(newton) & (newton > lo_a) & (newton < hi_a)
            z_new = np.where(inside, newton, 0.5 * (lo_a + hi_a))
            settled = found | (np.abs(z_new - za) <= 16.0 * U * (np.abs(za) + 1.0))
            z[active] = np.where(settled, za, z_new)
            hi[active], lo[active] = hi_a, lo_a
            done = active[settled]
            u_at[done], slope_at[done], err_at[done] = u[settled], slope[settled], u_err[settled]
            known[done] = True
            active = active[~settled]
        rest = np.flatnonzero(valid & ~known)  # points the iterations left unsettled
        if rest.size:
            u_at[rest], slope_at[rest], err_at[rest] = self._u(z[rest])
        # a last Newton step from the values kept leaves a residual of the order of the rounding:
        # e is sized for that (and checked: the root is certified below whatever z is)
        with np.errstate(divide="ignore", invalid="ignore"):
            last = z - (u_at - target) / slope_at
        step_ok = valid & np.isfinite(last) & (last >= lo) & (last <= hi)
        z = np.where(step_ok, last, z)
        residual = np.where(step_ok, 0.0, np.abs(u_at - target))
        # certify: e such that u(z - e) < target - errors and u(z + e) > target + errors, both
        # sides evaluated in one call, e doubled on the points not yet bracketed
        e = 2.0 * (residual + err_at + target_err) / np.maximum(slope_at, 1e-300) + 4.0 * U * (np.abs(z) + 1.0)
        e = np.where(valid, e, 0.0)
        pending = np.flatnonzero(valid)
        for _ in range(64):
            if pending.size == 0:
                break
            zp, ep, tp, tp_err = z[pending], e[pending], target[pending], target_err[pending]
            u_both, _, err_both = self._u(np.concatenate((zp - ep, zp + ep)))
            n = len(pending)
            ok = (u_both[:n] + err_both[:n] < tp - tp_err) & (u_both[n:] - err_both[n:] > tp + tp_err)
            e[pending[~ok]] *= 2.0
            pending = pending[~ok]
        else:  # pragma: no cover - a root that cannot be bracketed: give up on its precision
            e[pending] = math.inf
        z = np.where(valid, z, -math.inf)
        z = np.where(np.isposinf(loss), math.inf, z)
        return z, np.where(np.isfinite(z), e, 0.0)

    def _start(self, loss: np.ndarray, valid: np.ndarray, default: np.ndarray) -> np.ndarray:
        """Newton's starting points: z(l) interpolated in the table of log R at z = k/64 that the
        quadratures keep (`_on_grid`), where l lies inside it; `default` elsewhere. Only the
        number of Newton steps depends on it (the roots are certified in `_inverse`)."""
        k_lo, k_hi = self._grid_range
        table = self._grid_values[0]
        inside = valid & (loss > table[0]) & (loss < table[-1]) if k_lo < k_hi else np.zeros(len(loss), dtype=bool)
        if not inside.any():
            return np.array(default, dtype=float)
        z_table = np.arange(k_lo, k_hi + 1) / 64.0
        with np.errstate(invalid="ignore"):
            start = np.interp(np.where(inside, loss, table[0]), table, z_table)
        out: np.ndarray = np.where(inside & np.isfinite(start), start, default)
        return out

    # -- masses -------------------------------------------------------------------------------

    def _laws(self, z_lo: np.ndarray, e_lo: np.ndarray, z_hi: np.ndarray,
              e_hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """log Q([z_lo, z_hi)) and log P_r([z_lo, z_hi)) (the law with the record, q = 1), with
        relative errors. Q: Phi_hi^t - Phi_lo^t = m0 Phi_hi^(t-1) g_t; P_r: F_P differences
        split as m1 Phi_hi^(t-1) + Phi(z_lo - a) m0 Phi_hi^(t-2) g_(t-1), m0 and m1 the masses of
        [z_lo, z_hi) under N(0, 1) and N(a, 1)."""
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return self._laws_unguarded(z_lo, e_lo, z_hi, e_hi)

    def _laws_unguarded(self, z_lo: np.ndarray, e_lo: np.ndarray, z_hi: np.ndarray,
                        e_hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`_laws` without its floating-point guard (infinite end points make -inf - -inf)."""
        t, a = self.t, self.a
        log_m0, rel_m0 = log_interval_mass(z_lo, z_hi)
        rel_m0 = rel_m0 + _x_sensitivity(1.0, z_lo, e_lo, z_hi, e_hi, log_m0)
        log_m1, rel_m1 = log_interval_mass(z_lo - a, z_hi - a)
        e1_lo = e_lo + 2.0 * U * (np.abs(np.where(np.isfinite(z_lo), z_lo, 0.0)) + a)
        e1_hi = e_hi + 2.0 * U * (np.abs(np.where(np.isfinite(z_hi), z_hi, 0.0)) + a)
        rel_m1 = rel_m1 + _x_sensitivity(1.0, z_lo - a, e1_lo, z_hi - a, e1_hi, log_m1)
        log_hi = np.where(np.isposinf(z_hi), 0.0, _log_cdf(np.where(np.isposinf(z_hi), 0.0, z_hi)))
        log_lo = _log_cdf(z_lo)
        # delta = log(Phi_hi / Phi_lo) = log1p(m0 / Phi_lo): relative error rel_m0 + a few ulps
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            delta = np.log1p(np.exp(np.minimum(log_m0 - log_lo, 700.0)))
        delta = np.where(np.isneginf(log_m0), 0.0, delta)
        delta = np.where(np.isneginf(log_lo), math.inf, delta)
        # relative error of Phi_hi^(n) counted as n times its log's absolute error; the density
        # of Phi at the moved end point is in rel_m0 already
        cdf_err = NORMAL_RELATIVE_ERROR + 2.0 * U
        hi_err = cdf_err + np.where(np.isfinite(z_hi), np.exp(log_density(z_hi) - log_hi) * e_hi, 0.0)

        def power_term(n: int) -> tuple[np.ndarray, np.ndarray]:
            # log(Phi_hi^n - Phi_lo^n) = log m0 + (n - 1) log Phi_hi + log g_n
            if n == 1:
                return log_m0, rel_m0
            log_g, rel_g = _log_power_ratio(np.where(np.isfinite(delta), delta, 1e300), n)
            with np.errstate(invalid="ignore"):
                value = log_m0 + (n - 1) * log_hi + log_g
            # delta's absolute error is at most min(delta, 1) times its ratio's relative error
            delta_err = np.minimum(delta, 1.0) * (rel_m0 + cdf_err + 4.0 * U)
            rel = rel_m0 + (n - 1) * hi_err + rel_g + n * delta_err + 4.0 * U * np.abs(value)
            return value, rel

        log_q, rel_q = power_term(t)
        first = log_m1 + (t - 1) * log_hi
        first_rel = rel_m1 + (t - 1) * hi_err + 4.0 * U * np.abs(first)
        if t > 1:
            log_lo_a = _log_cdf(z_lo - a)
            lo_a_err = cdf_err + np.where(np.isfinite(z_lo), np.exp(log_density(z_lo - a) - log_lo_a) * e1_lo, 0.0)
            second_log, second_rel = power_term(t - 1)
            second_log = second_log + log_lo_a
            second_rel = second_rel + lo_a_err
            log_p, rel_p = _combine(first, first_rel, second_log, second_rel)
        else:
            log_p, rel_p = first, first_rel
        return log_q, rel_q, np.asarray(log_p, dtype=float), np.asarray(rel_p, dtype=float)

    def cell_masses(self, edges: np.ndarray) -> CellMasses:
        """`Pair.cell_masses`: the z-interval of each loss cell, its masses under both laws (S2)."""
        edges = np.asarray(edges, dtype=float)
        z_lo, e_lo, z_hi, e_hi = _cell_ends(self.inverse, edges, self.direction)
        log_q, rel_q, log_pr, rel_pr = self._laws(z_lo, e_lo, z_hi, e_hi)
        if self.q < 1.0:
            log_pr, rel_pr = _combine(self.log1m_q + log_q, rel_q + 2.0 * U, math.log(self.q) + log_pr, rel_pr + 2.0 * U)
            log_pr, rel_pr = np.asarray(log_pr, dtype=float), np.asarray(rel_pr, dtype=float)
        log_q, rel_q = _settled(log_q, rel_q)
        log_pr, rel_pr = _settled(log_pr, rel_pr)
        return _directed(self.direction, (log_pr, rel_pr), (log_q, rel_q))

    # -- quadrature ---------------------------------------------------------------------------

    def _weights(self, power: float, cap: float = math.inf) -> tuple[np.ndarray, np.ndarray]:
        """Points z and log weights of E_Q[R(z)^power g(z)]: trapezoid (step 1/64) over the
        windows where Q's density t phi(z) Phi(z)^(t-1) times R^power lives (around the
        largest of t normals and around power a, where R^power ~ e^(power a z) shifts it)."""
        step = 1.0 / 64.0
        # the third centre: below Q's bulk, R ~ e^(a z) against Q's density ~ e^(-t z^2/2)
        centres = (0.0, power * self.a, power * self.a / self.t)
        low, high = min(centres) - 40.0, max(centres) + 45.0
        if high - low <= 400.0:
            # points k/64: their values are kept across calls (the tilt search asks for many powers)
            k = np.arange(math.floor(low * 64.0), math.ceil(high * 64.0) + 1)
            log_r, log_q_density = self._on_grid(int(k[0]), int(k[-1]))
            z = k * step
        else:
            z = sorted_distinct(np.concatenate([np.round(np.arange(c - 40.0, c + 45.0, step) * 64.0) / 64.0 for c in centres]))
            log_r = self.log_ratio(z)
            log_q_density = math.log(self.t) + log_density(z) + (self.t - 1) * _log_cdf(z)
        loss = log_r if self.direction == "remove" else -log_r
        keep = loss < cap
        with np.errstate(invalid="ignore"):
            values = log_q_density + power * log_r + math.log(step)
        return z[keep], values[keep]

    def _on_grid(self, k_lo: int, k_hi: int) -> tuple[np.ndarray, np.ndarray]:
        """log R and log of Q's density at z = k/64 for k in [k_lo, k_hi], from a cache that grows
        to the union of the ranges asked for."""
        lo, hi = self._grid_range
        if not (lo <= k_lo and k_hi <= hi):
            lo, hi = (k_lo, k_hi) if lo > hi else (min(lo, k_lo), max(hi, k_hi))
            z = np.arange(lo, hi + 1) / 64.0
            self._grid_values = (self.log_ratio(z), math.log(self.t) + log_density(z) + (self.t - 1) * _log_cdf(z))
            self._grid_range = (lo, hi)
        log_r, log_q = self._grid_values
        return log_r[k_lo - lo:k_hi - lo + 1], log_q[k_lo - lo:k_hi - lo + 1]

    def log_mgf(self, lam: float, cap: float = math.inf) -> float:
        """`Pair.log_mgf`: E_P[e^(lam L)] = E_Q[R^(lam + 1)] (remove) or E_Q[R^(-lam)] (add)."""
        power = lam + 1.0 if self.direction == "remove" else -lam
        _, values = self._weights(power, cap)
        return _log_sum(values)

    def moments(self) -> tuple[float, float]:
        """`Pair.moments`: mean and variance of the loss under P, by the same quadrature."""
        power = 1.0 if self.direction == "remove" else 0.0
        z, log_w = self._weights(power)
        loss = self.log_ratio(z) * (1.0 if self.direction == "remove" else -1.0)
        keep = np.isfinite(log_w) & np.isfinite(loss)
        return _weighted_moments(np.exp(log_w[keep]), loss[keep])
