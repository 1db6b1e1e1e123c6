"""Random allocation (balls and bins): `AllocationPair`, one epoch's pair, bracketed between a
discrete pair that dominates it (the upper measure) and one that it attains (the lower measure).

An epoch of t steps puts each record in exactly one step, chosen uniformly at random and
independently of the other records. With the other records' contributions fixed, the t noisy
sums are, in units of C and with s the noise multiplier (remove: P has the record),

    P: Y_i ~ N(0, s^2) independent, except one uniformly random i with N(1, s^2);    Q: Y ~ N(0, s^2 I);

Feldman and Shenfeld (2025, arXiv 2502.08202; ICML 2026, arXiv 2602.17284) show that this pair
(remove) and its reverse (add) bound an epoch of adaptively chosen Gaussian steps. Its likelihood
ratio is R = (1/t) sum_i W_i, W_i = exp((Y_i - 1/2)/s^2): under Q the W_i are independent
lognormal, log W ~ N(-a^2/2, a^2) with a = 1/s, and E W = 1. A last, partial epoch of r < t steps
holds the record with probability r/t: R = (t - r + W_1 + ... + W_r)/t.

A pair is determined by the law of R under Q (P = R Q). If R' has the same mean and E f(R') >=
E f(R) for every convex f (R' is larger in the convex order), the pair of R' dominates the pair of
R: the hockey-stick divergences E_Q (R - e^eps)_+ and E_Q (1 - e^eps R)_+ of both orders are convex
in R (docs/mathematics.md, "Random allocation"). Sums of independent terms keep the order, so:

- above: each W is spread onto the lattice {0, h, 2h, ..., K h}, a value w in [kh, (k+1)h) to kh
  with probability ((k+1)h - w)/h and to (k+1)h otherwise (the mean is kept: a spread); a value
  above K h goes to K h or to infinity, mean kept (the limit of spreads onto {K h, M}). The part
  at infinity is P-mass at loss +inf (Q-mass at -inf in the add order). Far in the tail the
  cells are c h wide (`lognormal_lattice.lattice`): W goes to their ends the same way.
- below: an observer who sees only the cell [kh, (k+1)h) of each W_i (cells from K h up merged into
  one, "top") and then only the sum J of the indices when no cell is the top one. This is a
  post-processing of the outputs, so both datasets attain the pair; its likelihood ratio at J = j
  is E_Q[R | J = j] = (t - r + j h + E[sum_i e(G_i) | J = j])/t, e(k) = E[W | cell k] - k h in [0, h).

Both laws are r-fold convolutions of lattice masses, taken by FFT with a certified error bound
(`lognormal_lattice`). Each atom of the result is a loss with an interval of possible locations and
intervals of its P- and Q-masses (`_Atoms`); `cell_masses` sums them per loss cell, an atom's
lower mass only where its location is certain, its upper mass wherever it may lie.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from dpcalc.core.pld.pairs.base import CellMasses, Pair, U, _log_sum, _weighted_moments
from dpcalc.core.pld.pairs.lognormal_lattice import (
    BEYOND,
    BULK_TILTS,
    TAIL_TILTS,
    Lattice,
    absolute_errors,
    cells_coarser,
    fft_length,
    lattice,
    logs,
    split_absolute,
    split_errors,
    spread_coarser,
    sum_laws,
    tilts,
)
from dpcalc.core.special import ndtri


@dataclass(frozen=True, eq=False)  # hashed by identity (`_losses` caches per object)
class _Atoms:
    """A discrete pair in the remove order. Atom j: likelihood ratio R in [r_lo[j], r_hi[j]],
    computed Q-mass q[j] and P-mass p[j], within q_err[j] and p_err[j] (absolute), then a relative
    factor in [2 - grow, grow] on both, an absolute L1 error in_err of q (R in_err + p_in_err of p)
    and p_rel_q of P error per unit of Q-mass. `inf_p`: P-mass at R = inf (Q-mass 0); `zero_q`:
    Q-mass at R = 0 (P-mass 0), both upper bounds. `rest`: (R from below, Q-mass, P-mass) of an
    outcome whose location is known only from below, upper bounds of its masses."""

    r_lo: np.ndarray
    r_hi: np.ndarray
    q: np.ndarray
    p: np.ndarray
    q_err: np.ndarray
    p_err: np.ndarray
    grow: float
    in_err: float
    p_in_err: float
    p_rel_q: float
    inf_p: float
    zero_q: float
    rest: tuple[float, float, float] | None


def _bulk_top(lat: Lattice, r: int) -> int:
    """The last lattice index of the bulk: a factor lies beyond it with Q-probability about
    1e-10/r (so two of r do with probability about 1e-20), or the narrow cells' end, rounded up
    to one below a multiple of the coarsening c. Only a split point: the masses beyond it are
    bounded from the lattice itself (`_two_or_more`)."""
    a = lat.a
    z = max(0.0, -ndtri(1e-10 / r))
    w = math.exp(a * z - 0.5 * a * a)
    top = min(max(math.ceil(w / lat.h), 1), len(lat.cells) - 1)
    return lat.coarse * (top // lat.coarse + 1) - 1


def _two_or_more(r: int, t: int, q_tail: float, p_tail: float) -> tuple[float, float]:
    """Upper bounds on the Q- and P-probability that at least two of r factors lie in the tail (Q-
    probability q_tail each; the record's factor, present with probability r/t under P, p_tail)."""
    pairs = 0.5 * r * (r - 1) * q_tail * q_tail
    return pairs, pairs + (r / t) * p_tail * (r - 1) * q_tail


def _in_error(l1: float, rho: float, r: int) -> float:
    """A bound on the L1 error of an r-fold convolution whose factors err by rho (relative, carried
    as the factor (1 + rho)^r) and by l1 beyond (`split_errors`)."""
    return r * l1 * (1.0 + rho + l1) ** max(r - 1, 0)


def _upper_atoms(lat: Lattice, t: int, r: int) -> _Atoms:
    """The spread pair's atoms: S = sum of r spread factors on {j h}, R = (t - r + j h)/t, taken by
    the number of factors beyond the bulk (`_bulk_top`): none (the bulk's r-fold sum, tilted),
    one (r times the tail against the bulk's (r - 1)-fold sum), or more (revealed: its P-mass at
    R = inf, its Q-mass at R = 0, both bounded). With one beyond, every factor is spread further
    onto the multiples of c h (`spread_coarser`, c = lat.coarse): given the factors, the sum then
    has the mean it had, so its law is larger in the convex order (the whole sum, taken over the
    three cases, likewise: docs/mathematics.md, "Random allocation")."""
    c = lat.coarse
    rho, l1 = split_errors(lat.spread, lat.spread_rel)
    kb = _bulk_top(lat, r)
    bulk = lat.spread[:kb + 1]
    log_bulk = logs(bulk)
    n0 = fft_length([(log_bulk, r)], r * kb + 1)
    [(q0, e0)] = sum_laws(bulk, ((bulk,),), r - 1, n0, tilts(BULK_TILTS, kb))
    # one beyond, on the coarse lattice: the narrow points beyond the bulk spread onto it, then the
    # wide cells' points (from m = K/c + 1); its sums start at index (kb + 1)/c (exactly 0 below)
    err = absolute_errors(lat.spread, lat.spread_rel)
    beyond = np.arange(len(lat.spread)) > kb
    bulk_c, bulk_c_err = spread_coarser(bulk, err[:kb + 1], c)
    near, near_err = spread_coarser(np.where(beyond, lat.spread, 0.0), np.where(beyond, err, 0.0), c)
    offset = (len(lat.spread) - 1) // c + 1
    tail_c, tail_c_err = np.zeros(offset + len(lat.merged_spread)), np.zeros(offset + len(lat.merged_spread))
    tail_c[:offset], tail_c_err[:offset] = near[:offset], near_err[:offset]  # the rest of `near` is 0
    tail_c[offset:], tail_c_err[offset:] = lat.merged_spread, absolute_errors(lat.merged_spread,
                                                                              lat.merged_spread_rel)
    first = (kb + 1) // c
    n1 = fft_length([(logs(bulk_c), r - 1), (logs(tail_c), 1)], (r - 1) * (len(bulk_c) - 1) + len(tail_c))
    [(q1, e1)] = sum_laws(bulk_c, ((tail_c,),), r - 1, n1, tilts(TAIL_TILTS, len(tail_c) - 1))
    _, l1_c = split_absolute(np.concatenate((bulk_c, tail_c)), np.concatenate((bulk_c_err, tail_c_err)))
    # the atoms: j = 0..n0-1 (none beyond, and one beyond at multiples of c), then j = c m beyond
    start = max(first, -(-n0 // c))
    j = np.concatenate((np.arange(n0), c * np.arange(start, max(n1, start))))
    q, q_err = np.zeros(len(j)), np.zeros(len(j))
    q[:n0], q_err[:n0] = q0, e0
    inside = np.arange(first, min(start, n1))
    q[c * inside] += r * q1[inside]
    q_err[c * inside] += r * e1[inside]
    q[n0:], q_err[n0:] = r * q1[start:], r * e1[start:]
    ratio = (t - r + j * lat.h) / t
    # a factor beyond the bulk: Q-probability and E[W; beyond] (the spreads keep both)
    q_tail = float(tail_c.sum()) * (1.0 + 1e-9)
    p_tail = float((tail_c * np.arange(len(tail_c)) * (c * lat.h)).sum()) * (1.0 + 1e-9) + lat.inf_mass
    more_q, more_p = _two_or_more(r, t, q_tail, p_tail)
    # the sums beyond the FFTs' lengths (`fft_length`), revealed: no factor beyond the bulk, or one (r ways)
    folded = BEYOND * (1.0 + r)
    p = q * ratio  # each product and ratio rounded: at most 4u of |p|
    reach = r * (len(tail_c) + 1) * c * lat.h
    return _Atoms(r_lo=ratio * (1.0 - 4.0 * U), r_hi=ratio * (1.0 + 4.0 * U), q=q, p=p, q_err=q_err,
                  p_err=q_err * ratio * (1.0 + 4.0 * U) + 4.0 * U * np.abs(p), grow=(1.0 + rho) ** r,
                  in_err=_in_error(l1, rho, r) + _in_error(l1_c, rho, r), p_in_err=0.0, p_rel_q=0.0,
                  inf_p=r / t * lat.inf_mass + more_p + folded * (t - r + reach) / t,
                  zero_q=more_q + folded, rest=None)


def _lower_atoms(lat: Lattice, t: int, r: int) -> _Atoms:
    """The cell-sum pair's atoms (module docstring), refined by whether one factor lies beyond the
    bulk (the observer also sees that: still a post-processing). No factor beyond: Q-mass p_j =
    P(J = j), P-mass ((t - r + j h) p_j + c_j)/t with c_j = E[sum e(G_i); J = j] = r ((g e) *
    g^(*(r-1)))_j, so R_j = (t - r + j h + c_j/p_j)/t, c_j/p_j in [0, r h]. One factor beyond: the
    observer sees only the cells of width H = c h (`cells_coarser`: the narrow cells merged c at a
    time, and the wide ones) and the sum J of their indices: the same with the tail's g and g e
    against the bulk's (r - 1)-fold sum on those cells, R = (t - r + J H + c_J/p_J)/t, c_J/p_J in
    [0, r H]. Two or more, or one in the top cell: the `rest` outcome."""
    g, h, c = lat.cells, lat.h, lat.coarse
    big_h = c * h
    rho, l1 = split_errors(g, lat.cells_rel)
    grow = (1.0 + rho) ** r
    kb = _bulk_top(lat, r)
    moment = g * lat.excess
    bulk, bulk_moment = g[:kb + 1], moment[:kb + 1]
    log_bulk = logs(bulk)
    n0 = fft_length([(log_bulk, r)], r * kb + 1)
    (p0, ep0), (c0, ec0) = sum_laws(bulk, ((bulk,), (bulk_moment,)), r - 1, n0, tilts(BULK_TILTS, kb))
    # one beyond, on the merged cells: the bulk is the merged cells below (kb + 1)/c, the tail the rest
    g_c, rel_c, excess_c, excess_c_err = cells_coarser(lat)
    first = (kb + 1) // c
    _, l1_c = split_errors(g_c, rel_c)
    moment_c = g_c * excess_c
    bulk_c, bulk_moment_c = g_c[:first], moment_c[:first]
    beyond_c = np.arange(len(g_c)) >= first
    tail_c, tail_moment_c = np.where(beyond_c, g_c, 0.0), np.where(beyond_c, moment_c, 0.0)
    n1 = fft_length([(logs(bulk_c), r - 1), (logs(tail_c), 1)], (r - 1) * (len(bulk_c) - 1) + len(tail_c))
    tail_tilts = tilts(TAIL_TILTS, len(g_c) - 1)
    # E[sum e; J, one factor beyond]: the far factor's own e (r ways), or a bulk factor's (r (r - 1) ways)
    if r > 1:  # one pass: the (r - 2)-fold power against (tail, bulk), (tail moment, bulk), (tail, bulk moment)
        (p1, ep1), (c1, ec1), (c2, ec2) = sum_laws(bulk_c, ((tail_c, bulk_c), (tail_moment_c, bulk_c),
                                                            (tail_c, bulk_moment_c)), r - 2, n1, tail_tilts)
        c1, ec1 = c1 + (r - 1) * c2, ec1 + (r - 1) * ec2
    else:
        (p1, ep1), (c1, ec1) = sum_laws(bulk_c, ((tail_c,), (tail_moment_c,)), r - 1, n1, tail_tilts)
    light, light_c = g < 1e-200, g_c < 1e-200
    e_err = max(float(lat.excess_err[~light].max()) if (~light).any() else h,
                float(excess_c_err[~light_c].max()) if (~light_c).any() else big_h)
    e_light = r * h * float(g[light].sum()) / t + r * big_h * float(g_c[light_c].sum()) / t
    # one factor beyond puts the sum at or beyond `first` merged cells: no outcome (exactly 0) below, left out
    p1, ep1, c1, ec1 = (law[first:] for law in (p1, ep1, c1, ec1))
    mass, mass_err = np.concatenate((p0, r * p1)), np.concatenate((ep0, r * ep1))
    mom, mom_err = np.concatenate((r * c0, r * c1)), np.concatenate((r * ec0, r * ec1))
    base = t - r + np.concatenate((np.arange(n0) * h, np.arange(first, max(n1, first)) * big_h))
    # e(k) lies in [0, h] (a cell's mean lies in the cell), a merged cell's in [0, H]
    e_hi = np.concatenate((np.full(n0, h), np.full(len(p1), big_h)))
    cap = r * e_hi * np.maximum(mass, 0.0)
    moments = np.clip(mom, 0.0, cap)
    resolved = mass > 1e3 * mass_err + 1e-300
    safe = np.where(resolved, mass, 1.0)
    slack = np.where(resolved, (mom_err + mass_err * r * e_hi) / safe + r * e_err + 1e-9 * r * e_hi, r * e_hi)
    shift = np.where(resolved, moments / safe, 0.0)
    shift_lo = np.clip(shift - slack, 0.0, r * e_hi)
    shift_hi = np.clip(shift + slack, 0.0, r * e_hi)
    # two or more factors beyond the bulk, or one in the top cell, or beyond the FFT's reach
    q_tail = float(tail_c.sum()) * (1.0 + 1e-9) + lat.top
    p_tail = float((tail_c * np.arange(len(g_c)) * big_h + tail_moment_c).sum()) * (1.0 + 1e-9) + lat.inf_mass
    more_q, more_p = _two_or_more(r, t, q_tail, p_tail)
    # the sums beyond the FFTs' lengths (`fft_length`): no factor beyond the bulk, or one (r ways)
    folded = BEYOND * (1.0 + r)
    rest_q = more_q + r * lat.top * (1.0 + 1e-9) + folded
    rest_p = more_p + r * lat.top + (r / t) * lat.inf_mass * (1.0 + 1e-9) + folded * (t - r + r * (len(g_c) + 1) * big_h) / t
    # the rest lies beyond the bulk or in the top cell: R >= (t - r + min(kb + 1, c M) h)/t, M H = w_top
    rest_r = (t - r + min(kb + 1, c * len(g_c)) * h) / t * (1.0 - 8.0 * U)
    return _Atoms(
        r_lo=np.maximum((base + shift_lo) / t * (1.0 - 8.0 * U), 0.0), r_hi=(base + shift_hi) / t * (1.0 + 8.0 * U),
        q=mass, p=(base * mass + moments) / t, q_err=mass_err,
        p_err=(base * mass_err + mom_err) / t + 8.0 * U * np.abs(base * mass + moments) / t,
        grow=grow, in_err=_in_error(l1, rho, r) + _in_error(l1_c, rho, r),
        p_in_err=r * (h * _in_error(l1, rho, r) + big_h * _in_error(l1_c, rho, r)) / t + e_light,
        p_rel_q=r * e_err / t, inf_p=0.0, zero_q=0.0, rest=(rest_r, rest_q, rest_p),
    )


def _range_add(out: np.ndarray, lo: np.ndarray, hi: np.ndarray, values: np.ndarray) -> None:
    """out[lo[i]:hi[i] + 1] += at least values[i] (>= 0) for every i: a running sum of a difference
    array, which cancels to within (its terms) u of the sum of the values; that is added where some
    range covers a cell, and a negative residue is clipped."""
    size = len(out) + 1
    diff = np.bincount(lo, weights=values, minlength=size) - np.bincount(hi + 1, weights=values, minlength=size)
    cover = np.bincount(lo, minlength=size) - np.bincount(hi + 1, minlength=size)
    covered = np.cumsum(cover[:-1]) > 0
    margin = 2.0 * (len(values) + 2) * U * float(values.sum())
    out += np.where(covered, np.maximum(np.cumsum(diff[:-1]), 0.0) + margin, 0.0)


@functools.lru_cache(maxsize=8)
def _losses(atoms: _Atoms, direction: str) -> tuple[np.ndarray, np.ndarray]:
    """The ends of each atom's loss interval in `direction` (remove: log R; add: -log R)."""
    with np.errstate(divide="ignore"):
        if direction == "remove":
            return np.log(atoms.r_lo), np.log(atoms.r_hi)
        return -np.log(atoms.r_hi), -np.log(atoms.r_lo)


@functools.lru_cache(maxsize=8)
def _step(atoms: _Atoms, direction: str) -> int:
    """1 (-1) when both ends of the atoms' loss intervals ascend (descend) with their index, as the
    spread pair's do; 0 otherwise."""
    loss_lo, loss_hi = _losses(atoms, direction)
    for step in (1, -1):
        lo, hi = loss_lo[::step], loss_hi[::step]
        if bool(np.all(lo[1:] >= lo[:-1])) and bool(np.all(hi[1:] >= hi[:-1])):
            return step
    return 0


def _cell_of(edges: np.ndarray, x: np.ndarray, ascending: bool) -> np.ndarray:
    """searchsorted(edges, x, side="right") - 1: for ascending x, from the edges' places among x."""
    if not ascending:
        out: np.ndarray = np.searchsorted(edges, x, side="right") - 1
        return out
    counts = np.diff(np.concatenate(([0], np.searchsorted(x, edges, side="left"), [len(x)])))
    return np.repeat(np.arange(-1, len(edges)), counts)


def _cells(atoms: _Atoms, edges: np.ndarray, direction: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Bounds [q_lo, q_hi], [p_lo, p_hi] (remove order) of the Q- and P-mass of each cell
    [edges[i], edges[i+1]) of the direction's loss (remove: log R; add: -log R). An atom counts in
    a cell's lower bounds only when its whole location interval lies in the cell, and in the upper
    bounds of every cell it may lie in. Atoms whose intervals ascend (`_step`) are taken in that
    order: their cells by bisection of the edges among them, each cell's sums over one run."""
    cells = len(edges) - 1
    step = _step(atoms, direction)
    view = slice(None, None, step or 1)
    loss_lo, loss_hi = (x[view] for x in _losses(atoms, direction))
    q, p, q_err, p_err, r_hi = (x[view] for x in (atoms.q, atoms.p, atoms.q_err, atoms.p_err, atoms.r_hi))
    # cell of each end of an atom's location; -1 below the first edge, `cells` at or above the last
    i_lo = _cell_of(edges, loss_lo, step != 0)
    i_hi = _cell_of(edges, loss_hi, step != 0)
    if edges[-1] == math.inf:  # +inf itself lies in the last cell [e, inf] (an atom at R = inf or 0)
        i_lo, i_hi = np.minimum(i_lo, cells - 1), np.minimum(i_hi, cells - 1)
    inside = (i_hi >= 0) & (i_lo < cells)
    i_lo, i_hi = np.clip(i_lo, 0, cells - 1), np.clip(i_hi, 0, cells - 1)
    sure = inside & (i_lo == i_hi)
    idx = i_lo[sure]
    every = len(idx) == len(sure)

    def chosen(x: np.ndarray) -> np.ndarray:
        return x if every else x[sure]

    sums = np.zeros((6, cells))
    count, r_max = np.zeros(cells), np.zeros(cells)
    if step and len(idx):  # idx ascends: each cell's sure atoms are one run
        starts = np.flatnonzero(np.concatenate(([True], idx[1:] != idx[:-1])))
        hit = idx[starts]
        for row, x in enumerate((q, p, q_err, p_err)):
            x = chosen(x)
            sums[row, hit] = np.add.reduceat(x, starts)
            if row < 2:
                sums[row + 4, hit] = np.add.reduceat(np.abs(x), starts)
        count[hit] = np.diff(np.append(starts, len(idx)))
        r_max[hit] = np.maximum.reduceat(chosen(r_hi), starts)
    elif len(idx):
        for row, x in enumerate((q, p, q_err, p_err, np.abs(q), np.abs(p))):
            sums[row] = np.bincount(idx, weights=x[sure], minlength=cells)
        count = np.bincount(idx, minlength=cells).astype(float)
        np.maximum.at(r_max, idx, r_hi[sure])
    sum_q, sum_p, err_q, err_p, abs_q, abs_p = sums
    # summation rounding: at most (count + 2) u of the sum of absolute values
    sum_err = (count + 2.0) * U
    q_spread = err_q + abs_q * sum_err
    p_spread = err_p + abs_p * sum_err
    occupied = count > 0
    q_in = np.where(occupied, atoms.in_err, 0.0)
    p_in = np.where(occupied, atoms.in_err * r_max + atoms.p_in_err, 0.0)
    q_hi = (np.maximum(sum_q, 0.0) + q_spread) * atoms.grow + q_in
    q_lo = np.maximum(sum_q - q_spread, 0.0) * (2.0 - atoms.grow) - q_in
    p_spread = p_spread + atoms.p_rel_q * q_hi
    p_hi = (np.maximum(sum_p, 0.0) + p_spread) * atoms.grow + p_in
    p_lo = np.maximum(sum_p - p_spread, 0.0) * (2.0 - atoms.grow) - p_in
    loose = inside & ~sure
    if loose.any():
        q_up = (np.maximum(q[loose], 0.0) + q_err[loose]) * atoms.grow + atoms.in_err
        r_up = np.minimum(r_hi[loose], 1e300)
        p_up = ((np.maximum(p[loose], 0.0) + p_err[loose]) * atoms.grow + atoms.p_rel_q * q_up
                + atoms.in_err * r_up + atoms.p_in_err)
        _range_add(q_hi, i_lo[loose], i_hi[loose], q_up)
        _range_add(p_hi, i_lo[loose], i_hi[loose], p_up)
    if atoms.rest is not None:  # anywhere at remove loss >= log r_rest (add loss <= -log r_rest)
        r_rest, q_rest, p_rest = atoms.rest
        if direction == "remove":
            start = int(np.clip(np.searchsorted(edges, math.log(r_rest), side="right") - 1, 0, cells))
            q_hi[start:] += q_rest
            p_hi[start:] += p_rest
        else:
            stop = int(np.searchsorted(edges, -math.log(r_rest), side="right") - 1)
            q_hi[:max(stop + 1, 0)] += q_rest
            p_hi[:max(stop + 1, 0)] += p_rest
    # R = inf: P-mass at remove loss +inf (add loss -inf); R = 0: Q-mass at remove loss -inf (add +inf)
    at_plus, at_minus = edges[-1] == math.inf, edges[0] == -math.inf
    inf_cell = cells - 1 if direction == "remove" else 0
    zero_cell = 0 if direction == "remove" else cells - 1
    if (at_plus if direction == "remove" else at_minus) and atoms.inf_p > 0.0:
        p_hi[inf_cell] += atoms.inf_p
        p_lo[inf_cell] += atoms.inf_p
    if (at_minus if direction == "remove" else at_plus) and atoms.zero_q > 0.0:
        q_hi[zero_cell] += atoms.zero_q
        q_lo[zero_cell] += atoms.zero_q
    return np.maximum(q_lo, 0.0), q_hi, np.maximum(p_lo, 0.0), p_hi


def _log_masses(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A mass known to lie in [lo, hi] as log of the midpoint and relative error."""
    mid = 0.5 * (lo + hi)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(mid > 0.0, (hi - lo) / (hi + lo), 0.0)
        return np.log(mid), np.minimum(rel, 1.0) * (1.0 + 4.0 * U) + 2.0 * U


# Width in log R of a group of atoms in the tilt search's estimate of the MGF
# (`_AtomPair.search_log_mgf`).
_SEARCH_BIN = 1e-3


class _AtomPair(Pair):
    """A discrete pair (`_Atoms`) in one direction (remove: P = R Q; add: the reverse)."""

    def __init__(self, atoms: _Atoms, direction: str, support: tuple[float, float]) -> None:
        self.atoms, self.direction, self.support = atoms, direction, support
        self._below_cap: dict[float, tuple[np.ndarray, np.ndarray]] = {}
        self._groups_cap: dict[float, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        if direction == "remove":
            self.inf_mass = atoms.inf_p
        else:  # the Q-mass at R = 0, and the atom at R = 0 (all r factors at 0) if there is one
            at_zero = atoms.r_hi <= 0.0
            self.inf_mass = atoms.zero_q + float(((np.maximum(atoms.q[at_zero], 0.0) + atoms.q_err[at_zero]) * atoms.grow
                                                  + atoms.in_err).sum())

    def cell_masses(self, edges: np.ndarray) -> CellMasses:
        q_lo, q_hi, p_lo, p_hi = _cells(self.atoms, np.asarray(edges, dtype=float), self.direction)
        log_q, rel_q = _log_masses(q_lo, q_hi)
        log_p, rel_p = _log_masses(p_lo, p_hi)
        if self.direction == "remove":
            return CellMasses(log_p, rel_p, log_q, rel_q)
        return CellMasses(log_q, rel_q, log_p, rel_p)

    @functools.cached_property
    def _ratio_and_mass(self) -> tuple[np.ndarray, np.ndarray]:
        """log R (its computed value) and log Q-mass of the atoms with positive mass and R."""
        ratio = 0.5 * (self.atoms.r_lo + self.atoms.r_hi)
        keep = (self.atoms.q > 0.0) & (ratio > 0.0)
        return np.log(ratio[keep]), np.log(self.atoms.q[keep])

    def _loss_and_weight(self, power: float) -> tuple[np.ndarray, np.ndarray]:
        """The direction's loss at each atom and log of P-mass times e^(power loss)."""
        log_r, log_q = self._ratio_and_mass
        if self.direction == "remove":
            return log_r, log_q + (1.0 + power) * log_r
        return -log_r, log_q - power * log_r

    def _below(self, cap: float) -> tuple[np.ndarray, np.ndarray]:
        """`_ratio_and_mass` of the atoms whose loss lies below cap, kept per cap (the accountant
        asks for the MGF at many tilts and one or two caps)."""
        cache = self._below_cap
        if cap not in cache:
            log_r, log_q = self._ratio_and_mass
            below = (log_r if self.direction == "remove" else -log_r) < cap
            cache[cap] = (np.ascontiguousarray(log_r[below]), np.ascontiguousarray(log_q[below]))
        return cache[cap]

    def log_mgf(self, lam: float, cap: float = math.inf) -> float:
        log_r, log_q = self._below(cap)
        return _log_sum(log_q + ((1.0 + lam) if self.direction == "remove" else -lam) * log_r)

    def _groups(self, cap: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The atoms below cap (`_below`) grouped by log R into bins of width _SEARCH_BIN: each
        group's log Q-mass and the Q-weighted mean and variance of its log R; kept per cap."""
        cache = self._groups_cap
        if cap not in cache:
            log_r, log_q = self._below(cap)
            if not bool(np.all(log_r[1:] >= log_r[:-1])):  # the spread pair's atoms ascend already
                order = np.argsort(log_r, kind="stable")
                log_r, log_q = log_r[order], log_q[order]
            key = np.floor(log_r / _SEARCH_BIN)
            starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
            owner = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(key))))
            top = np.maximum.reduceat(log_q, starts)
            weight = np.exp(log_q - top[owner])
            mass = np.add.reduceat(weight, starts)
            mean = np.add.reduceat(weight * log_r, starts) / mass
            variance = np.add.reduceat(weight * (log_r - mean[owner]) ** 2, starts) / mass
            cache[cap] = (top + np.log(mass), mean, variance)
        return cache[cap]

    def search_log_mgf(self, lam: float, cap: float = math.inf) -> float:
        """`Pair.search_log_mgf`: each group of atoms (`_groups`) as a lognormal in R with its
        Q-mass and the mean and variance of its log R, E[R^s] ~ e^(s m + s^2 v/2) (exact when the
        group's R is one value, else to third order in s times its width): some thousands of
        terms instead of every atom."""
        log_mass, mean, variance = self._groups(cap)
        s = (1.0 + lam) if self.direction == "remove" else -lam
        return _log_sum(log_mass + s * mean + 0.5 * s * s * variance)

    def moments(self) -> tuple[float, float]:
        loss, log_w = self._loss_and_weight(0.0)
        keep = np.isfinite(loss) & np.isfinite(log_w)
        return _weighted_moments(np.exp(log_w[keep]), loss[keep])


def _support(t: int, r: int, direction: str) -> tuple[float, float]:
    """R >= (t - r)/t: the remove loss is at least log(1 - r/t), the add loss at most -log(1 - r/t)."""
    end = math.log1p(-r / t) if r < t else -math.inf
    return (end, math.inf) if direction == "remove" else (-math.inf, -end)


@functools.lru_cache(maxsize=8)
def _atoms(noise: float, t: int, r: int, kind: str) -> _Atoms:
    factor = lattice(1.0 / noise)
    return _upper_atoms(factor, t, r) if kind == "upper" else _lower_atoms(factor, t, r)


class AllocationPair(_AtomPair):
    """One epoch of random allocation over `steps` steps, `executed` of them run (the last epoch
    may be partial), noise multiplier `noise`, in `direction` ("remove": P has the record): the
    spread pair, which dominates it; `attained()` gives the cell-sum pair, which it attains."""

    def __init__(self, steps: int, executed: int, noise: float, direction: str) -> None:
        if direction not in ("remove", "add"):
            raise ValueError(f"direction must be 'remove' or 'add', got direction={direction!r}")
        if not 1 <= executed <= steps:
            raise ValueError(f"executed steps must be in [1, {steps}], got {executed}")
        self.t, self.r, self.noise = int(steps), int(executed), float(noise)
        super().__init__(_atoms(self.noise, self.t, self.r, "upper"), direction, _support(self.t, self.r, direction))
        self._attained: _AtomPair | None = None

    def attained(self) -> Pair:
        if self._attained is None:
            self._attained = _AtomPair(_atoms(self.noise, self.t, self.r, "lower"), self.direction, self.support)
        return self._attained
