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
(`lognormal_lattice`, `lattice_sums`). Each atom of the result is a loss with an interval of possible
locations and intervals of its P- and Q-masses (`atoms.Atoms`); `cell_masses` sums them per loss
cell, an atom's lower mass only where its location is certain, its upper mass wherever it may lie.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from dpcalc.core.pld.pairs.atoms import AtomPair, Atoms
from dpcalc.core.pld.pairs.base import Pair, U
from dpcalc.core.pld.pairs.lattice_sums import BEYOND, BULK_TILTS, TAIL_TILTS, fft_length, logs, sum_laws, tilts
from dpcalc.core.pld.pairs.lognormal_lattice import (
    Lattice,
    absolute_errors,
    cells_coarser,
    lattice,
    split_absolute,
    split_errors,
    spread_coarser,
)
from dpcalc.core.special import ndtri


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


def _upper_atoms(lat: Lattice, t: int, r: int) -> Atoms:
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
    return Atoms(r_lo=ratio * (1.0 - 4.0 * U), r_hi=ratio * (1.0 + 4.0 * U), q=q, p=p, q_err=q_err,
                  p_err=q_err * ratio * (1.0 + 4.0 * U) + 4.0 * U * np.abs(p), grow=(1.0 + rho) ** r,
                  in_err=_in_error(l1, rho, r) + _in_error(l1_c, rho, r), p_in_err=0.0, p_rel_q=0.0,
                  inf_p=r / t * lat.inf_mass + more_p + folded * (t - r + reach) / t,
                  zero_q=more_q + folded, rest=None)


def _lower_atoms(lat: Lattice, t: int, r: int) -> Atoms:
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
    return Atoms(
        r_lo=np.maximum((base + shift_lo) / t * (1.0 - 8.0 * U), 0.0), r_hi=(base + shift_hi) / t * (1.0 + 8.0 * U),
        q=mass, p=(base * mass + moments) / t, q_err=mass_err,
        p_err=(base * mass_err + mom_err) / t + 8.0 * U * np.abs(base * mass + moments) / t,
        grow=grow, in_err=_in_error(l1, rho, r) + _in_error(l1_c, rho, r),
        p_in_err=r * (h * _in_error(l1, rho, r) + big_h * _in_error(l1_c, rho, r)) / t + e_light,
        p_rel_q=r * e_err / t, inf_p=0.0, zero_q=0.0, rest=(rest_r, rest_q, rest_p),
    )


def _support(t: int, r: int, direction: str) -> tuple[float, float]:
    """R >= (t - r)/t: the remove loss is at least log(1 - r/t), the add loss at most -log(1 - r/t)."""
    end = math.log1p(-r / t) if r < t else -math.inf
    return (end, math.inf) if direction == "remove" else (-math.inf, -end)


@functools.lru_cache(maxsize=8)
def _atoms(noise: float, t: int, r: int, kind: str) -> Atoms:
    factor = lattice(1.0 / noise)
    return _upper_atoms(factor, t, r) if kind == "upper" else _lower_atoms(factor, t, r)


class AllocationPair(AtomPair):
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
        self._attained: AtomPair | None = None

    def attained(self) -> Pair:
        if self._attained is None:
            self._attained = AtomPair(_atoms(self.noise, self.t, self.r, "lower"), self.direction, self.support)
        return self._attained
