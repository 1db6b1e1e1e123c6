"""Truncation: a measure's window cut to where it matters; the top moved to +inf (upper
measures, S3 of docs/pld-soundness.md) and the bottom dropped with a certified bound on what
it weighed (S6).
"""

from __future__ import annotations

import math

import numpy as np

from dpcalc.core.pld.measure import THETAS, Tilted, U, renormalise, replace

# Tilted weight the lower bound may drop at its lower end per truncation (before dividing by
# the multiplicity): it lowers delta_lower by at most this part of the Chernoff bound.
_LOWER_DROP = 1e-8

def truncate(m: Tilted, *, log_inf_budget: float, log_rho_budget: float, multiplicity: int,
             cap: bool = True, floor: bool = True) -> Tilted:
    """Cut the window to where the measure matters (S3 for the upper end, S6 for the lower).

    Upper end: the lowest grid point above which the untilted mass, computed plus its error
    bound, is at most exp(log_inf_budget); that mass moves to +inf (upper, a rounding up) or
    is dropped (lower). Lower end, kind upper: the highest grid point f with
    multiplicity * nu(f) e^(lam f) / MGF <= exp(log_rho_budget), nu(f) the Chernoff bound
    min(M, min_theta e^(theta f) E[e^(-theta S)]) on the mass below f; that mass is dropped and
    the bound recorded (S6).
    Lower end, kind lower: bins whose tilted mass sums (from below) to at most
    exp(log_rho_budget)/multiplicity are dropped (dropping only lowers the lower bound).
    """
    t = m.t
    n = len(t)
    lam, h = m.lam, m.h
    s = m.losses
    peak = int(np.argmax(t))
    # --- upper end: untilted mass above s_i, relative to the budget, in linear space ---
    with np.errstate(divide="ignore"):
        expo = np.log(np.where(t > 0.0, t, 1.0)) - lam * s + (m.log_z - log_inf_budget)
    # (clipped: a value above e^300 fails the test as surely as an infinite one)
    expo = np.where(t > 0.0, np.minimum(expo, 300.0), -math.inf)
    suffix = np.cumsum(np.exp(expo)[::-1])[::-1]
    above = np.append(suffix[1:], 0.0)  # sum over j > i
    # error of the moved bins: weights exp(log_z - lam s_j) are largest at j = i + 1. Dropping
    # mass is safe for a lower bound whatever its size, so there only the computed mass counts.
    if m.kind == "upper":
        err_term = np.exp(np.minimum(m.log_z - lam * (s + h) - log_inf_budget, 300.0)) * m.err
    else:
        err_term = np.zeros(n)
    ok = above + err_term <= 1.0
    cut = n - 1
    moved = 0.0
    if cap and ok[peak:].any():
        cut = peak + int(np.argmax(ok[peak:]))
        if cut < n - 1:
            moved = float(above[cut] + err_term[cut]) * math.exp(log_inf_budget) * (1.0 + 4.0 * U * n)
    # --- lower end ---
    start = 0
    drop_rel = drop_mass = 0.0
    if not floor:
        pass
    elif m.kind == "upper":
        kept = float(t[: cut + 1].sum()) - m.err
        if kept > 0.0 and peak > 0:
            base = -m.log_z - math.log(kept) + math.log(multiplicity)

            def lhs(i: int) -> tuple[float, float]:
                log_nu = m.log_mass
                if m.log_theta_mgf is not None:
                    log_nu = min(log_nu, float((THETAS * float(s[i]) + m.log_theta_mgf).min()))
                return log_nu + lam * float(s[i]) + base, log_nu

            # lhs increases with i; find the largest i <= peak with lhs <= budget
            lo_i, hi_i = -1, peak + 1
            while hi_i - lo_i > 1:
                mid = (lo_i + hi_i) // 2
                if lhs(mid)[0] <= log_rho_budget:
                    lo_i = mid
                else:
                    hi_i = mid
            if lo_i > 0:
                start = lo_i
                value, log_nu = lhs(start)
                drop_rel = math.exp(value)  # multiplicity * rho
                drop_mass = multiplicity * math.exp(log_nu)
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


