"""Truncation: a measure's window cut to where it matters; the top moved to +inf (upper
measures, S3 of docs/pld-soundness.md) and the bottom dropped with a certified bound on what
it weighed (S6).
"""

from __future__ import annotations

import math

import numpy as np

from dpcalc.core.pld.measure import LOWER_THETAS, THETAS, UPPER_THETAS, Tilted, U, renormalise, replace

# Tilted weight the lower bound may drop at its lower end per truncation (before dividing by
# the multiplicity): it lowers delta_lower by at most this part of the Chernoff bound.
_LOWER_DROP = 1e-8

def _log_mass_from(c: float, log_theta_mgf: np.ndarray) -> float:
    """log of an upper bound on the untilted mass at or above c, by Chernoff over theta < 0:
    P(S >= c) <= e^(theta c) E[e^(-theta S)], with a margin for the rounding of the sum."""
    theta = THETAS[UPPER_THETAS]
    mgf = log_theta_mgf[UPPER_THETAS]
    values = theta * c + mgf
    values = values + 4.0 * U * (np.abs(theta * c) + np.abs(mgf) + 1.0)
    return float(values.min())


def _chernoff_cut(s: np.ndarray, log_theta_mgf: np.ndarray, lo: int, hi: int, log_budget: float) -> int:
    """The smallest i in [lo, hi) whose mass above s_i (at or above s_(i+1)) is within the budget
    by `_log_mass_from`, or hi if none is (the bound decreases in i: a bisection)."""
    bad, good = lo - 1, hi
    while good - bad > 1:
        mid = (bad + good) // 2
        if _log_mass_from(float(s[mid + 1]), log_theta_mgf) <= log_budget:
            good = mid
        else:
            bad = mid
    return good


def truncate(m: Tilted, *, log_inf_budget: float, log_rho_budget: float, multiplicity: int,
             cap: bool = True, floor: bool = True, whole_theta_mgf: np.ndarray | None = None) -> Tilted:
    """Cut the window to where the measure matters (S3 for the upper end, S6 for the lower).

    Upper end: the lowest grid point above which the untilted mass, computed plus its error
    bound, is at most exp(log_inf_budget), or, for an upper measure, the Chernoff bound
    min_(theta < 0) e^(theta c) E[e^(-theta S)] on it (from `log_theta_mgf`, or from
    `whole_theta_mgf`, that of the whole measure m is a layer of); that mass moves to +inf
    (upper, a rounding up, counted as the smaller of the two bounds) or is dropped (lower). Lower end, kind upper: the highest grid point f with
    multiplicity * nu(f) e^(lam f) / MGF <= exp(log_rho_budget), nu(f) the Chernoff bound
    min(M, min_theta e^(theta f) E[e^(-theta S)]) on the mass below f; that mass is dropped and
    the bound of this one copy recorded (S6: compositions sum the records over the copies).
    Lower end, kind lower: bins whose tilted mass sums (from below) to at most
    exp(log_rho_budget)/multiplicity are dropped (dropping only lowers the lower bound).
    """
    t = m.t
    n = len(t)
    lam, h = m.lam, m.h
    s = m.losses
    peak = int(np.argmax(t))
    # --- upper end: untilted mass above s_i, relative to the budget, in linear space ---
    # (the cut lies at or above the peak: only that part is summed, from the top)
    cut = n - 1
    moved = 0.0
    whole_mgf = m.log_theta_mgf if whole_theta_mgf is None else whole_theta_mgf
    if cap:
        top_t, top_s = t[peak:], s[peak:]
        with np.errstate(divide="ignore"):
            expo = np.log(np.where(top_t > 0.0, top_t, 1.0)) - lam * top_s + (m.log_z - log_inf_budget)
        # (clipped: a value above e^300 fails the test as surely as an infinite one)
        expo = np.where(top_t > 0.0, np.minimum(expo, 300.0), -math.inf)
        suffix = np.cumsum(np.exp(expo)[::-1])[::-1]
        above = np.append(suffix[1:], 0.0)  # sum over j > i
        # error of the moved bins: weights exp(log_z - lam s_j) are largest at j = i + 1. Dropping
        # mass is safe for a lower bound whatever its size, so there only the computed mass counts.
        if m.kind == "upper":
            # sum_(j > i) |e_j| w_j <= min(err max_j w_j, err2 ||w||_2); over the whole grid above
            # s_i, ||w||_2 <= w_(i+1) / sqrt(1 - e^(-2 lam h)) (a geometric series)
            weight = np.exp(np.minimum(m.log_z - lam * (top_s + h) - log_inf_budget, 300.0))
            l2_term = m.l2 / math.sqrt(-math.expm1(-2.0 * lam * h)) * (1.0 + 8.0 * U) if lam * h > 0.0 else math.inf
            err_term = weight * min(m.err, l2_term)
        else:
            err_term = np.zeros(len(top_t))
        ok = above + err_term <= 1.0
        if ok.any():
            cut = peak + int(np.argmax(ok))
        if whole_mgf is not None and cut > peak:
            # Where the FFT's noise floor decides the cut above (a small tilt weighs the noise of
            # a high bin nearly as much as that of the peak), the Chernoff bound on the mass at or
            # above a point, from the tracked E[e^(-theta S)] (theta < 0), can place it lower (S3).
            cut = min(cut, _chernoff_cut(s, whole_mgf, peak, cut, log_inf_budget))
        if cut < n - 1:
            computed = float(above[cut - peak] + err_term[cut - peak]) * math.exp(log_inf_budget) * (1.0 + 4.0 * U * n)
            chernoff = (math.exp(min(_log_mass_from(float(s[cut + 1]), whole_mgf), 700.0)) * (1.0 + 4.0 * U)
                        if whole_mgf is not None and m.kind == "upper" else math.inf)
            moved = min(computed, chernoff)
    # --- lower end ---
    start = 0
    drop_rel = drop_mass = 0.0
    if not floor:
        pass
    elif m.kind == "upper":
        kept = float(t[: cut + 1].sum()) - m.err
        if kept > 0.0 and peak > 0:
            base = -m.log_z - math.log(kept)
            copies = math.log(multiplicity)

            def lhs(i: int) -> tuple[float, float]:
                log_nu = m.log_mass
                if m.log_theta_mgf is not None:
                    lower = THETAS[LOWER_THETAS] * float(s[i]) + m.log_theta_mgf[LOWER_THETAS]
                    log_nu = min(log_nu, float(lower.min()))
                return log_nu + lam * float(s[i]) + base, log_nu

            # lhs increases with i; find the largest i <= peak with multiplicity * rho <= budget
            lo_i, hi_i = -1, peak + 1
            while hi_i - lo_i > 1:
                mid = (lo_i + hi_i) // 2
                if lhs(mid)[0] + copies <= log_rho_budget:
                    lo_i = mid
                else:
                    hi_i = mid
            if lo_i > 0:
                start = lo_i
                value, log_nu = lhs(start)
                # rho and nu of this one copy: compositions add them up over the copies a run
                # holds (`fft.convolve`), so the multiplicity enters only the budget (S6)
                drop_rel = math.exp(value)
                drop_mass = math.exp(log_nu)
    else:
        # only tightness is at stake: a dropped tilted weight w lowers delta by at most
        # kappa e^(-lam eps) Z w, a part w of the Chernoff bound
        limit = _LOWER_DROP / multiplicity
        cumulative = np.cumsum(t[:peak])
        fine = np.flatnonzero(cumulative <= limit)
        if len(fine):
            start = int(fine[-1]) + 1
    if start == 0 and cut == n - 1:
        return m
    out = replace(m, t=t[start : cut + 1].copy(), k0=m.k0 + start)
    if m.kind == "upper":
        out.inf_mass = m.inf_mass + moved
        out.drop_rel = m.drop_rel + drop_rel
        out.drop_mass = m.drop_mass + drop_mass
    return renormalise(out, m)


