"""Coarsening: a measure moved to a grid of twice the step, by splitting atoms (upper measures,
S3 of docs/pld-soundness.md) or by merging them (lower measures, S4).

The engine coarsens a few hundred medium-sized measures per accounting, so the array work is
written with few temporaries (in-place updates, each product computed once, no copies for the
padding); every quantity is still computed by the floating-point operations of the formula in
its comment, in that order, so the results are those of the plain expressions, bit for bit.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from dpcalc.core.pld.lower import chain_shares, merge_margin
from dpcalc.core.pld.measure import THETAS, Tilted, U, replace, trim


def coarsen(m: Tilted, chain: bool = True) -> Tilted:
    """The same measure on the grid of step 2h (S3 for upper, S4 for lower).

    `chain`: a lower measure's shares are completed along the chain of odd atoms (`lower`);
    without, the geometric shares alone (cheaper, for the layers' cross products and top moves).

    upper: an atom at an odd multiple of h is split between its even neighbours with the
    connect-the-dots weights 1/(1 + e^h) (down) and e^h/(1 + e^h) (up), which keep its
    Q-mass: a split of outcomes, so the result dominates (and it preserves stochastic order).
    lower: an odd atom below and one above an even point 2jh are merged, in the P-mass
    proportion 1 : e^h that gives the merged outcome the likelihood ratio e^(2jh) exactly
    (a garbling); shares are computed from bounds on the true masses so that the ratio is at
    least that. What cannot be paired is rounded down by h.
    """
    t = m.t
    # the masses padded with zeros to an odd length that starts and ends at an even point
    # (k0, k0 + 2, ...: the points of the coarser grid): a zero below when k0 is odd, then a
    # zero above when the length is even. odd[i], at k0 + 2i + 1, lies between the even points
    # i and i + 1; it is a view of t (the padding zeros are all at even points).
    lead = m.k0 % 2
    k0 = m.k0 - lead
    trail = 1 - (len(t) + lead) % 2
    odd = t[1 - lead :: 2]
    lam, h = m.lam, m.h
    log_one_plus = math.log1p(math.exp(h))
    if m.kind == "upper":
        # weights of the split in tilted units, all scaled by e^(-shift) so that none overflows
        # when lam h is large (log_z absorbs the shift)
        log_down = -lam * h - log_one_plus
        log_up = (1.0 + lam) * h - log_one_plus
        shift = max(0.0, log_up)
        keep, f_down, f_up = math.exp(-shift), math.exp(log_down - shift), math.exp(log_up - shift)
        # even point i: keep even_i + f_down odd_i + f_up odd_(i-1), summed in that order
        even = _even_times(t, lead, trail, keep)
        moved = f_down * odd
        even[:-1] += moved
        np.multiply(odd, f_up, out=moved)
        even[1:] += moved
        norm = max(keep, f_down + f_up)
        mass = _abs_sum(t, lead, trail)
        err = m.err * norm + 4.0 * U * mass * max(norm, 1.0)
        # L2 (S5): the map's absolute row sums are at most keep + f_down + f_up, its column sums
        # at most norm; the Schur test bounds its 2-norm by the root of their product. Its
        # rounding is a few u times M|t| componentwise: 4 u ||M||_2 ||t||_2 <= 4 u ||M||_2 ||t||_1.
        norm2 = math.sqrt((keep + f_down + f_up) * norm) * (1.0 + 4.0 * U)
        err2 = m.l2 * norm2 + 4.0 * U * mass * max(norm2, 1.0)
        out = replace(m, t=even, k0=k0 // 2, h=2.0 * h, err=err, err2=err2)
        if m.log_theta_mgf is not None:
            # S6: the bounds on E[e^(-theta S)] take the split's growth (`_split_growth`)
            out.log_theta_mgf = m.log_theta_mgf + _split_growth(h) + 1e-12
    else:
        c = (1.0 + 2.0 * lam) * h
        margin = merge_margin(m)
        # pair (odd[i] below, odd[i+1] above) onto even[i+1]. In tilted units the merged ratio
        # is e^(2jh) when the share taken from above is e^c times that from below. Odd atom i
        # offers a fraction a_i to the pair above it (as its lower member) and 1 - a_i to the
        # pair below it; any a_i in [0, 1] is valid since each pair takes the smaller of the
        # two offers it receives. a_i = rho/(rho + e^c), rho the local ratio of consecutive
        # odd atoms, uses a geometric (log-linear) stretch completely.
        shift = lam * h  # the largest factor, e^(lam h) for the lower member moved up
        below, above = odd[:-1], odd[1:]
        alpha, beta = _merge_shares(odd, margin, c)
        if chain:
            alpha, beta = chain_shares(odd, margin, c, (alpha, beta))  # (`lower`: along the chain)
        # used_i: the fraction of odd atom i merged (alpha_i up, beta_(i-1) down); its junk,
        # max(0, 1 - used_i), is rounded down to even[i]
        used = np.zeros(len(odd))
        used[:-1] += alpha
        used[1:] += beta
        junk = np.subtract(1.0, used)
        np.maximum(0.0, junk, out=junk)
        # tilted factors: the kept atom e^(-shift), the lower member raised by h
        # e^(lam h - shift) = 1 (f_raise), the upper member and the junk lowered by h
        # e^(-lam h - shift) (f_lower). even[j] is keep even_j + (alpha_(j-1) below +
        # beta_(j-1) above f_lower) + junk_j odd_j f_lower, summed in that order.
        keep, f_lower = math.exp(-shift), math.exp(-2.0 * shift)
        even = _even_times(t, lead, trail, keep)
        merged = alpha * below
        lowered = beta * above
        lowered *= f_lower
        merged += lowered
        even[1:-1] += merged
        norm = max(keep, 1.0)
        mass = _abs_sum(t, lead, trail)
        err = m.err * norm + 8.0 * U * mass
        # L2 (S5): the Schur test with the map's absolute row and column sums (the shares are
        # fixed numbers here; the exact measure goes through the same map). Odd atom i gives
        # alpha_i (f_raise = 1) up and beta_(i-1) + junk_i (times f_lower <= 1) down, at most
        # max(1, used_i) together; even point j takes keep, alpha_(j-1) and
        # (beta_(j-1) + junk_j) f_lower. Rounding as in the upper branch.
        column = max(keep, 1.0, float(used.max()) if len(used) else 0.0)
        rows = np.add(beta, junk[1:], out=lowered)
        rows *= f_lower
        rows += alpha
        row = keep + max(float(rows.max()) if len(alpha) else 0.0,
                         float(junk[0]) * f_lower if len(junk) else 0.0)
        junk *= odd
        junk *= f_lower
        even[: len(odd)] += junk
        norm2 = math.sqrt(row * column) * (1.0 + 8.0 * U)
        err2 = m.l2 * norm2 + 8.0 * U * mass * max(norm2, 1.0)
        out = replace(m, t=even, k0=k0 // 2, h=2.0 * h, err=err, err2=err2, deficiency=m.deficiency * norm)
    out.log_z = m.log_z + shift
    total = float(even.sum())
    even /= total
    out.err2 = min(out.err2 / total + 2.0 * U, out.err / total + 2.0 * U)
    out.err = out.err / total + 2.0 * U
    if out.kind == "lower":
        out.deficiency = out.deficiency / total
    out.log_z_err = m.log_z_err + 4.0 * U * (abs(out.log_z) + shift + 1.0)
    out.log_z = out.log_z + math.log(total)
    return trim(out)


def _even_times(t: np.ndarray, lead: int, trail: int, factor: float) -> np.ndarray:
    """factor times the padded masses at the even points (`coarsen`), as a new array."""
    at_even = t[lead::2]
    if not lead and not trail:
        return at_even * factor
    even = np.zeros(lead + len(at_even) + trail)
    np.multiply(at_even, factor, out=even[lead : lead + len(at_even)])
    return even


def _abs_sum(t: np.ndarray, lead: int, trail: int) -> float:
    """The sum of the absolute padded masses (`coarsen`), zeros included: numpy's pairwise sum
    rounds by the positions of the terms, and the error terms are those of the padded array."""
    if not lead and not trail:
        return float(np.abs(t).sum())
    padded = np.zeros(lead + len(t) + trail)
    np.abs(t, out=padded[lead : lead + len(t)])
    return float(padded.sum())


@lru_cache(maxsize=256)
def _split_growth(h: float) -> np.ndarray:
    """max(0, log of the factor by which a split of the step h (upper `coarsen`) multiplies
    E[e^(-theta S)]), for theta in THETAS: a split atom's e^(-theta s) is multiplied by
    (e^(theta h) + e^((1 - theta) h))/(1 + e^h), which exceeds 1 only for theta > 1. Read-only
    (shared between calls)."""
    growth = np.logaddexp(THETAS * h, (1.0 - THETAS) * h) - math.log1p(math.exp(h))
    out = np.maximum(growth, 0.0)
    out.flags.writeable = False
    return out


def _merge_shares(odd: np.ndarray, margin: float, c: float) -> tuple[np.ndarray, np.ndarray]:
    """The shares (alpha_i of odd[i], beta_i of odd[i + 1]) that the pair (odd[i], odd[i + 1]) of a
    lower measure merges onto the even point between them (`coarsen`, S4): beta_i times the true
    odd[i + 1] is at least e^c alpha_i times the true odd[i], the true masses being within
    `margin` of the stored ones.

    With hi, lo the bounds on the true masses (lo clipped at 0), plan_i = rho_i/(rho_i + e^c)
    the fraction odd atom i offers to the pair above it (rho_i = sqrt(lo_(i+1)/hi_(i-1)) where
    that is positive and finite, else 1, as at both ends), a pair merges the amount
    max(0, min(plan_i hi_i, (1 - plan_(i+1)) lo_(i+1) / e^c)): alpha_i = min(amount/hi_i, plan_i)
    (1 - 8u), beta_i = min(min(amount e^c/lo_(i+1), 1 - plan_(i+1)) (1 + 8u), 1 - plan_(i+1)).
    A pair keeps its shares only where both bounds are positive and the recheck
    beta_i lo_(i+1) >= e^c alpha_i hi_i (1 + 8u) holds (the rounding of the shares); elsewhere
    both are 0."""
    pairs = max(len(odd) - 1, 0)
    if c >= 700.0 or pairs == 0:
        return np.zeros(pairs), np.zeros(pairs)
    ec = math.exp(c)
    hi = odd + margin
    lo = odd - margin
    np.maximum(lo, 0.0, out=lo)
    hi_below, lo_above = hi[:-1], lo[1:]
    rho = np.ones(len(odd))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = lo[2:] / hi[:-2]
        valid = ratio > 0.0
        valid &= ratio < math.inf
        np.sqrt(ratio, out=rho[1:-1], where=valid)
        plan = rho + ec
        np.divide(rho, plan, out=plan)
        offer_above = 1.0 - plan[1:]
        amount = plan[:-1] * hi_below
        bound = offer_above * lo_above
        bound /= ec
        np.minimum(amount, bound, out=amount)
        np.maximum(amount, 0.0, out=amount)
        # where a bound is not positive these quotients are not used (0/0 is NaN: ignored)
        alpha = amount / hi_below
        beta = amount * ec
        beta /= lo_above
        np.minimum(alpha, plan[:-1], out=alpha)
        alpha *= 1.0 - 8.0 * U
        np.minimum(beta, offer_above, out=beta)
        beta *= 1.0 + 8.0 * U
        np.minimum(beta, offer_above, out=beta)
        # the merged ratio needs beta * above_true >= e^c alpha * below_true: recheck with bounds
        needed = np.multiply(ec, alpha, out=bound)
        needed *= hi_below
        needed *= 1.0 + 8.0 * U
        ok = beta * lo_above >= needed
        ok &= np.minimum(hi_below, lo_above) > 0.0  # both bounds positive (NaN: not)
    np.logical_not(ok, out=ok)
    np.copyto(alpha, 0.0, where=ok)
    np.copyto(beta, 0.0, where=ok)
    return alpha, beta


def coarsen_to(m: Tilted, h: float) -> Tilted:
    """m coarsened (S3/S4) until its grid step is h (a power-of-two multiple of m.h). The layers
    use it for a bulk's part in cross products and its light top moved to the tail, where the
    geometric shares are accurate enough (most of the design card's lower coarsenings: with the
    sweeps of `lower.chain_shares` there too, its lower bound rose by 2e-6 relative for 1.75
    times the CPU time)."""
    while m.h < h:
        m = coarsen(m, chain=False)
    return m
