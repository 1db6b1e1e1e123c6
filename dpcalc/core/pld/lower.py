"""The merge shares of a lower measure's coarsening (S4 of docs/pld-soundness.md), chosen along
the chain of odd atoms so that every share of an atom that a neighbour can match is merged.

Coarsening a lower measure to the grid of step 2h (`coarsen.coarsen`) merges, onto each even
point g, a part alpha of the odd atom at g - h with a part beta of the odd atom at g + h, in the
P-mass proportion 1 : e^h that puts the merged likelihood ratio exactly at e^g (a garbling: S4).
What an odd atom gives to neither pair is rounded down by h: a first-order loss, h times its
mass. Pair i (between odd atoms i and i + 1) needs, in tilted units (t = m e^(lam s)),

    beta_i t_(i+1) >= e^c alpha_i t_i,   c = (1 + 2 lam) h,

and atom i gives alpha_i to the pair above it and beta_(i-1) to the pair below, at most all of it.
The shares of `coarsen._merge_shares` follow the local geometric ratio of the odd atoms; where
the atoms are not log-linear (the end of the support, the lumpy early powers of a subsampled
step) the pairs' two offers disagree, and up to a seventh of the tilted mass was rounded down at
a coarsening (p = 0.004, sigma = 1.1 on a grid of 48 points per standard deviation). Here the
shares are found along the chain instead: from the lowest atom up to the meeting point, each atom
lifts all that its down-share left (the atom above gives down what matching it needs, or, when
that is more than all of it, all of it, and the lift shrinks to what that matches); from the
highest atom down to the meeting point, each atom gives down all that its up-share left. Each sweep runs
in the direction in which the map from one atom's share to the next is a contraction (slope
e^c t_i / t_(i+1) < 1 where the masses grow faster than e^c an atom, t_(i+1) / (e^c t_i) < 1 where
they do not),
so a log-linear stretch is merged completely whatever its start, and the two sweeps meet at the
largest odd_i e^(-c i), where the atom's two shares are scaled to sum to at most 1. Any shares with
alpha, beta >= 0, alpha_i + beta_(i-1) <= 1 and the pair inequality for the true masses give a
garbling; the shares are computed with bounds on the true masses (within `margin` of the stored
ones) and rechecked, as `coarsen._merge_shares` does, so the result is as sound as its shares
are; which shares are chosen affects only the accuracy.
"""

from __future__ import annotations

import math

import numpy as np

from dpcalc.core.pld.measure import Tilted, U

# The pair inequality is met with this relative margin in the sweeps, so that the final recheck
# (margin 8 u) never undoes a pair for the rounding of the sweeps' own arithmetic.
_SWEEP_MARGIN = 64.0 * U


def merge_margin(m: Tilted) -> float:
    """A bound on |t_i - t*_i| for every atom i of a lower measure m, t* the exact measure it
    represents (tilted units): its error bound in the L2 norm (at most the L1 one, `Tilted.l2`),
    since no component of a vector exceeds its 2-norm.

    The merges of a coarsening need the exact masses of the measure they merge, not those of the
    garbled pair behind it (docs/pld-soundness.md, S4, "What a lower measure is"): a lower measure
    mu is any measure with E_mu[g_eps] <= delta(eps) for every eps, and mu with the Q-masses
    mu e^(-s) is a pair of (sub-probability) measures of its own, so a garbling of that pair is
    again a lower measure. `Tilted.deficiency` (how far the represented masses lie below the
    garbled pair's) is therefore not part of the margin."""
    return m.l2


def chain_shares(odd: np.ndarray, margin: float, c: float) -> tuple[np.ndarray, np.ndarray]:
    """The shares (alpha_i of odd[i], beta_i of odd[i + 1]) that pair i merges onto the even point
    between odd atoms i and i + 1, as `coarsen._merge_shares` returns them: beta_i times the true
    odd[i + 1] is at least e^c alpha_i times the true odd[i], the true masses being within `margin`
    of the stored ones, and alpha_i + beta_(i-1) <= 1."""
    pairs = max(len(odd) - 1, 0)
    if c >= 700.0 or pairs == 0:
        return np.zeros(pairs), np.zeros(pairs)
    ec = math.exp(c) * (1.0 + _SWEEP_MARGIN)
    hi = odd + margin
    lo = np.maximum(odd - margin, 0.0)
    # pair i needs beta_i >= ratio_i alpha_i, ratio_i = e^c hi_i / lo_(i+1) (inf where lo is 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = ec * hi[:-1] / lo[1:]
    usable = (lo[1:] > 0.0) & (hi[:-1] > 0.0) & np.isfinite(ratio)
    ratio_list = np.where(usable, ratio, math.inf).tolist()
    alpha = [0.0] * pairs
    beta = [0.0] * pairs
    # the sweeps meet where the chain's map changes from contracting upwards to contracting
    # downwards: the largest odd_i e^(-c i) (the largest sqrt(P Q) of an odd atom, in the untilted
    # masses), above which odd_(i+1) < e^c odd_i
    with np.errstate(divide="ignore"):
        log_odd = np.log(np.maximum(odd, 0.0))  # (a stored mass may be slightly negative: FFT noise)
    mode = int(np.argmax(log_odd - c * np.arange(len(odd))))
    # upward sweep, pairs 0 .. mode - 1: atom i lifts what its down-share left
    down = 0.0  # beta_(i-1): the share of atom i given to the pair below
    for i in range(min(mode, pairs)):
        r = ratio_list[i]
        free = 1.0 - down
        if free <= 0.0 or r == math.inf:
            down = 0.0
            continue
        need = r * free
        if need <= 1.0:
            alpha[i], beta[i] = free, need
            down = need
        else:
            alpha[i], beta[i] = 1.0 / r, 1.0
            down = 1.0
    # downward sweep, pairs pairs - 1 .. mode: atom i + 1 gives down what its up-share left
    up = 0.0  # alpha_(i+1): the share of atom i + 1 given to the pair above
    for i in range(pairs - 1, mode - 1, -1):
        r = ratio_list[i]
        free = 1.0 - up
        if free <= 0.0 or r == math.inf:
            up = 0.0
            continue
        lift = free / r
        if lift <= 1.0:
            alpha[i], beta[i] = lift, free
            up = lift
        else:
            alpha[i], beta[i] = 1.0, r
            up = 1.0
    # the mode's atom: beta_(mode-1) from the upward sweep, alpha_mode from the downward one
    if 0 < mode < pairs:
        total = beta[mode - 1] + alpha[mode]
        if total > 1.0:
            scale = 1.0 / total
            beta[mode - 1] *= scale
            alpha[mode - 1] *= scale
            alpha[mode] *= scale
            beta[mode] *= scale
    a = np.array(alpha)
    b = np.array(beta)
    np.minimum(b, 1.0, out=b)
    # the shares of an atom sum to at most 1 (the sweeps keep them so up to rounding)
    used = a.copy()
    used[1:] += b[:-1]
    over = used > 1.0
    if over.any():
        room = np.ones(pairs)
        room[1:] -= b[:-1]
        a = np.where(over, np.maximum(room, 0.0) * (1.0 - 4.0 * U), a)
    # the merged ratio needs beta * above_true >= e^c alpha * below_true: recheck with bounds
    ok = b * lo[1:] >= math.exp(c) * a * hi[:-1] * (1.0 + 8.0 * U)
    ok &= np.minimum(hi[:-1], lo[1:]) > 0.0
    a = np.where(ok, a, 0.0)
    b = np.where(ok, b, 0.0)
    return a, b
