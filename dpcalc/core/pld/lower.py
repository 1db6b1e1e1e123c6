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


def chain_shares(odd: np.ndarray, margin: float, c: float,
                 start: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The shares (alpha_i of odd[i], beta_i of odd[i + 1]) that pair i merges onto the even point
    between odd atoms i and i + 1, as `coarsen._merge_shares` returns them: beta_i times the true
    odd[i + 1] is at least e^c alpha_i times the true odd[i], the true masses being within `margin`
    of the stored ones, and alpha_i + beta_(i-1) <= 1.

    With `start` (shares that already meet these conditions, `coarsen._merge_shares`'s), the
    sweeps run only over windows around the atoms those shares leave partly unmerged (a part
    above 1e-12 of the largest atom), each window's ends keeping the shares of the pairs outside
    it: the geometric shares merge a log-linear stretch completely, and a loop over the atoms of
    the whole measure would cost a third of a short run's time."""
    pairs = max(len(odd) - 1, 0)
    if c >= 700.0 or pairs == 0:
        return np.zeros(pairs), np.zeros(pairs)
    ec = math.exp(c) * (1.0 + _SWEEP_MARGIN)
    hi = odd + margin
    lo = np.maximum(odd - margin, 0.0)
    # pair i needs beta_i >= ratio_i alpha_i, ratio_i = e^c hi_i / lo_(i+1) (0: the pair is unusable)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = ec * hi[:-1] / lo[1:]
    usable = (lo[1:] > 0.0) & (hi[:-1] > 0.0) & np.isfinite(ratio)
    ratio = np.where(usable, ratio, 0.0)
    with np.errstate(divide="ignore"):
        inverse = np.where(usable, 1.0 / np.where(usable, ratio, 1.0), 0.0)
        # the sweeps meet where the chain's map changes from contracting upwards to contracting
        # downwards: the largest odd_i e^(-c i) (the largest sqrt(P Q) of an odd atom, in the
        # untilted masses), above which odd_(i+1) < e^c odd_i
        log_odd = np.log(np.maximum(odd, 0.0))  # (a stored mass may be slightly negative: FFT noise)
    if start is None:
        alpha, beta = np.zeros(pairs), np.zeros(pairs)
        windows = [(0, pairs)]
    else:
        alpha, beta = start[0].copy(), start[1].copy()
        windows = _windows(odd, alpha, beta)
    key = log_odd - c * np.arange(len(odd))
    for first, last in windows:  # atoms first .. last, pairs first .. last - 1
        down = float(beta[first - 1]) if first > 0 else 0.0  # the share of atom `first` given below
        up = float(alpha[last]) if last < pairs else 0.0  # the share of atom `last` given above
        meet = first + int(np.argmax(key[first : last + 1]))
        # upward, pairs first .. meet - 1: atom i lifts all that its down-share d_i left, so
        # beta_i = d_(i+1) = min(1, r_i (1 - d_i)) and alpha_i = beta_i / r_i
        if meet > first:
            lifted = sweep(ratio[first:meet], down)
            beta[first:meet] = lifted
            alpha[first:meet] = lifted * inverse[first:meet]
        # downward, pairs last - 1 .. meet: atom i + 1 gives down all that its up-share u_(i+1)
        # left, so alpha_i = u_i = min(1, (1 - u_(i+1)) / r_i) and beta_i = r_i alpha_i
        if last > meet:
            given = sweep(inverse[meet:last][::-1], up)[::-1]
            alpha[meet:last] = given
            beta[meet:last] = given * ratio[meet:last]
    a, b = alpha, beta
    np.minimum(b, 1.0, out=b)
    # the shares of an atom sum to at most 1: where the sweeps meet (each window's meeting atom,
    # and its ends) the up-share gives way
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
    if start is not None and _left_over(odd, *start) < _left_over(odd, a, b):
        return start  # (where the sweeps' meeting points cost more than they save)
    return a, b


# Chains shorter than this are faster as a loop (measured: 1000 steps 0.28 ms as a loop, 0.32 ms in
# blocks; 4000 steps 1.1 ms and 0.68 ms; 60000 steps 22 ms and 4.1 ms).
_BLOCKED_FROM = 1024


def sweep(coefficients: np.ndarray, start: float) -> np.ndarray:
    """The chain x_0 = start, x_(k+1) = min(1, c_k (1 - x_k)) for c = coefficients (all >= 0, x in
    [0, 1]): returns x_1 .. x_n.

    Computed in blocks of about sqrt(n) steps, vectorised across the blocks, instead of a loop
    over the atoms: each step is the map x -> clip(c_k - c_k x, 0, 1) on [0, 1], and the maps
    x -> clip(A + B x, L, H) are closed under composition (the composition of two is
    clip(A2 + B2 A1 + B2 B1 x, L, H), [L, H] the image of [L1, H1] under the outer affine map
    clipped to [L2, H2]). First every block's composed map (sqrt(n) vectorised steps), then
    each block's starting value from the one before (a loop over the sqrt(n) blocks), then the
    values inside all blocks at once from their starts (sqrt(n) vectorised steps, the loop's
    own arithmetic). The block starts differ from the loop's by rounding (a few units in the
    last place times the chain's length of memory, 1 / (1 - its contraction factor));
    `chain_shares` rechecks every share it keeps, so this affects only which shares are kept.
    Where a composed slope overflows (a stretch that expands instead of contracting, which the
    sweeps' directions avoid), the loop is used."""
    n = len(coefficients)
    if n < _BLOCKED_FROM:
        return _sweep_loop(coefficients, start)
    size = math.isqrt(n)
    blocks = -(-n // size)
    padded = np.zeros(blocks * size)
    padded[:n] = coefficients
    steps = padded.reshape(blocks, size).T.copy()  # steps[j]: the j-th coefficient of every block
    a, b = np.zeros(blocks), np.ones(blocks)  # each block's map so far: x -> clip(a + b x, low, high)
    low, high = np.zeros(blocks), np.ones(blocks)
    with np.errstate(over="ignore", invalid="ignore"):
        for c in steps:  # compose the step x -> clip(c - c x, 0, 1) after the map so far
            e1, e2 = c - c * low, c - c * high  # (e1 >= e2: the slope -c is not positive)
            low, high = np.minimum(e2, 1.0), np.minimum(e1, 1.0)
            np.maximum(low, 0.0, out=low)
            a = c - c * a
            b = -c * b
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
            return _sweep_loop(coefficients, start)
    starts = np.empty(blocks)
    value = start
    for k, (ak, bk, lk, hk) in enumerate(zip(a.tolist(), b.tolist(), low.tolist(), high.tolist(), strict=True)):
        starts[k] = value
        value = min(max(ak + bk * value, lk), hk)
    out = np.empty_like(steps)
    x = starts
    for j, c in enumerate(steps):
        x = np.minimum(c * (1.0 - x), 1.0)
        out[j] = x
    values: np.ndarray = out.T.reshape(-1)[:n]
    return values


def _sweep_loop(coefficients: np.ndarray, start: float) -> np.ndarray:
    """`sweep` one atom at a time."""
    x = np.empty(len(coefficients))
    value = start
    for k, coefficient in enumerate(coefficients.tolist()):
        value = min(1.0, coefficient * (1.0 - value))
        x[k] = value
    return x


def _left_over(odd: np.ndarray, alpha: np.ndarray, beta: np.ndarray) -> float:
    """The tilted mass that the shares leave unmerged (rounded down by h)."""
    used = np.zeros(len(odd))
    used[:-1] += alpha
    used[1:] += beta
    return float((np.maximum(1.0 - used, 0.0) * np.maximum(odd, 0.0)).sum())


# Atoms on each side of a partly unmerged atom that its window takes in (`chain_shares`).
_WINDOW_REACH = 16


def _windows(odd: np.ndarray, alpha: np.ndarray, beta: np.ndarray) -> list[tuple[int, int]]:
    """Runs [first, last] of atoms around those that the shares leave partly unmerged (more than
    1e-12 of the largest atom), each widened by _WINDOW_REACH atoms and joined where they meet."""
    used = np.zeros(len(odd))
    used[:-1] += alpha
    used[1:] += beta
    left = np.maximum(1.0 - used, 0.0) * np.maximum(odd, 0.0)
    bad = np.flatnonzero(left > 1e-12 * float(odd.max()))
    if len(bad) == 0:
        return []
    starts = np.maximum(bad - _WINDOW_REACH, 0)
    ends = np.minimum(bad + _WINDOW_REACH, len(odd) - 1)
    # join overlapping or touching windows
    breaks = np.flatnonzero(starts[1:] > ends[:-1] + 1)
    firsts = np.concatenate(([starts[0]], starts[breaks + 1]))
    lasts = np.concatenate((ends[breaks], [ends[-1]]))
    return list(zip(firsts.tolist(), lasts.tolist(), strict=True))
