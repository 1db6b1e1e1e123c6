"""Coarsening: a measure moved to a grid of twice the step, by splitting atoms (upper measures,
S3 of docs/pld-soundness.md) or by merging them (lower measures, S4).
"""

from __future__ import annotations

import math

import numpy as np

from dpcalc.core.pld.measure import THETAS, Tilted, U, replace, trim


def coarsen(m: Tilted) -> Tilted:
    """The same measure on the grid of step 2h (S3 for upper, S4 for lower).

    upper: an atom at an odd multiple of h is split between its even neighbours with the
    connect-the-dots weights 1/(1 + e^h) (down) and e^h/(1 + e^h) (up), which keep its
    Q-mass: a split of outcomes, so the result dominates (and it preserves stochastic order).
    lower: an odd atom below and one above an even point 2jh are merged, in the P-mass
    proportion 1 : e^h that gives the merged outcome the likelihood ratio e^(2jh) exactly
    (a garbling); shares are computed from bounds on the true masses so that the ratio is at
    least that. What cannot be paired is rounded down by h.
    """
    t = m.t
    k0 = m.k0
    if k0 % 2:
        t = np.concatenate(([0.0], t))
        k0 -= 1
    if len(t) % 2 == 0:
        t = np.concatenate((t, [0.0]))
    even = t[0::2].copy()  # at k0, k0 + 2, ...
    odd = t[1::2]  # at k0 + 1, k0 + 3, ...; odd[i] lies between even[i] and even[i + 1]
    lam, h = m.lam, m.h
    log_one_plus = math.log1p(math.exp(h))
    if m.kind == "upper":
        # weights of the split in tilted units, all scaled by e^(-shift) so that none overflows
        # when lam h is large (log_z absorbs the shift)
        log_down = -lam * h - log_one_plus
        log_up = (1.0 + lam) * h - log_one_plus
        shift = max(0.0, log_up)
        keep, f_down, f_up = math.exp(-shift), math.exp(log_down - shift), math.exp(log_up - shift)
        even *= keep
        even[:-1] += f_down * odd
        even[1:] += f_up * odd
        norm = max(keep, f_down + f_up)
        mass = float(np.abs(t).sum())
        err = m.err * norm + 4.0 * U * mass * max(norm, 1.0)
        # L2 (S5): the map's absolute row sums are at most keep + f_down + f_up, its column sums
        # at most norm; the Schur test bounds its 2-norm by the root of their product. Its
        # rounding is a few u times M|t| componentwise: 4 u ||M||_2 ||t||_2 <= 4 u ||M||_2 ||t||_1.
        norm2 = math.sqrt((keep + f_down + f_up) * norm) * (1.0 + 4.0 * U)
        err2 = m.l2 * norm2 + 4.0 * U * mass * max(norm2, 1.0)
        out = replace(m, t=even, k0=k0 // 2, h=2.0 * h, err=err, err2=err2)
        if m.log_theta_mgf is not None:
            # a split atom's e^(-theta s) is multiplied by (e^(theta h) + e^((1 - theta) h))/(1 + e^h),
            # which exceeds 1 only for theta > 1
            growth = np.logaddexp(THETAS * h, (1.0 - THETAS) * h) - log_one_plus
            out.log_theta_mgf = m.log_theta_mgf + np.maximum(growth, 0.0) + 1e-12
    else:
        c = (1.0 + 2.0 * lam) * h
        margin = m.err + m.deficiency
        # pair (odd[i] below, odd[i+1] above) onto even[i+1]. In tilted units the merged ratio
        # is e^(2jh) when the share taken from above is e^c times that from below. Odd atom i
        # offers a fraction a_i to the pair above it (as its lower member) and 1 - a_i to the
        # pair below it; any a_i in [0, 1] is valid since each pair takes the smaller of the
        # two offers it receives. a_i = rho/(rho + e^c), rho the local ratio of consecutive
        # odd atoms, uses a geometric (log-linear) stretch completely.
        shift = lam * h  # the largest factor, e^(lam h) for the lower member moved up
        below, above = odd[:-1], odd[1:]
        alpha, beta = _merge_shares(odd, margin, c)
        used = np.zeros(len(odd))
        used[:-1] += alpha
        used[1:] += beta
        junk = np.maximum(0.0, 1.0 - used)
        keep, f_raise, f_lower = math.exp(-shift), 1.0, math.exp(-2.0 * shift)
        even *= keep
        even[1:-1] += alpha * below * f_raise + beta * above * f_lower
        # junk of odd[i] is rounded down to even[i]
        even[: len(odd)] += junk * odd * f_lower
        norm = max(keep, f_raise)
        mass = float(np.abs(t).sum())
        err = m.err * norm + 8.0 * U * mass
        # L2 (S5): the Schur test with the map's absolute row and column sums (the shares are
        # fixed numbers here; the exact measure goes through the same map). Odd atom i gives
        # alpha_i (f_raise = 1) up and beta_(i-1) + junk_i (times f_lower <= 1) down, at most
        # max(1, used_i) together; even point j takes keep, alpha_(j-1) and
        # (beta_(j-1) + junk_j) f_lower. Rounding as in the upper branch.
        column = max(keep, 1.0, float(used.max()) if len(used) else 0.0)
        row = keep + max(float((alpha + (beta + junk[1:]) * f_lower).max()) if len(alpha) else 0.0,
                         float(junk[0]) * f_lower if len(junk) else 0.0)
        norm2 = math.sqrt(row * column) * (1.0 + 8.0 * U)
        err2 = m.l2 * norm2 + 8.0 * U * mass * max(norm2, 1.0)
        out = replace(m, t=even, k0=k0 // 2, h=2.0 * h, err=err, err2=err2, deficiency=m.deficiency * norm)
    out.log_z = m.log_z + shift
    total = float(out.t.sum())
    out.t = out.t / total
    out.err2 = min(out.err2 / total + 2.0 * U, out.err / total + 2.0 * U)
    out.err = out.err / total + 2.0 * U
    if out.kind == "lower":
        out.deficiency = out.deficiency / total
    out.log_z_err = m.log_z_err + 4.0 * U * (abs(out.log_z) + shift + 1.0)
    out.log_z = out.log_z + math.log(total)
    return trim(out)


def _merge_shares(odd: np.ndarray, margin: float, c: float) -> tuple[np.ndarray, np.ndarray]:
    """The shares (alpha_i of odd[i], beta_i of odd[i + 1]) that the pair (odd[i], odd[i + 1]) of a
    lower measure merges onto the even point between them (`coarsen`, S4): beta_i times the true
    odd[i + 1] is at least e^c alpha_i times the true odd[i], the true masses being within
    `margin` of the stored ones."""
    below = odd[:-1]
    alpha = np.zeros(len(below))
    beta = np.zeros(len(below))
    if c < 700.0:
        ec = math.exp(c)
        hi = odd + margin
        lo = np.maximum(odd - margin, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            rho = np.sqrt(np.concatenate((lo[1:], [0.0])) / np.concatenate(([math.inf], hi[:-1])))
            rho = np.where(np.isfinite(rho) & (rho > 0.0), rho, 1.0)
        plan = rho / (rho + ec)
        hi_below, lo_above = hi[:-1], lo[1:]
        amount = np.maximum(np.minimum(plan[:-1] * hi_below, (1.0 - plan[1:]) * lo_above / ec), 0.0)
        positive = (hi_below > 0.0) & (lo_above > 0.0)
        alpha = np.where(positive, amount / np.where(positive, hi_below, 1.0), 0.0)
        beta = np.where(positive, amount * ec / np.where(positive, lo_above, 1.0), 0.0)
        alpha = np.minimum(alpha, plan[:-1]) * (1.0 - 8.0 * U)
        beta = np.minimum(np.minimum(beta, 1.0 - plan[1:]) * (1.0 + 8.0 * U), 1.0 - plan[1:])
        # the merged ratio needs beta * above_true >= e^c alpha * below_true: recheck with bounds
        ok = beta * lo_above >= ec * alpha * hi_below * (1.0 + 8.0 * U)
        alpha = np.where(ok, alpha, 0.0)
        beta = np.where(ok, beta, 0.0)
    return alpha, beta


def coarsen_to(m: Tilted, h: float) -> Tilted:
    """m coarsened (S3/S4) until its grid step is h (a power-of-two multiple of m.h)."""
    while m.h < h:
        m = coarsen(m)
    return m

