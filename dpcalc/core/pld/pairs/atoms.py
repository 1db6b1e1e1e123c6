"""A discrete pair given by atoms whose locations and masses are known to intervals (`Atoms`),
in one direction (`AtomPair`): the form in which `allocation` brackets an epoch of random
allocation. `cell_masses` sums the atoms per loss cell: an atom's lower mass only where its
location is certain, its upper mass in every cell it may lie in.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from dpcalc.core.pld.pairs.base import CellMasses, Pair, U, _log_sum, _weighted_moments


@dataclass(frozen=True, eq=False)  # hashed by identity (`_losses` caches per object)
class Atoms:
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
def _losses(atoms: Atoms, direction: str) -> tuple[np.ndarray, np.ndarray]:
    """The ends of each atom's loss interval in `direction` (remove: log R; add: -log R)."""
    with np.errstate(divide="ignore"):
        if direction == "remove":
            return np.log(atoms.r_lo), np.log(atoms.r_hi)
        return -np.log(atoms.r_hi), -np.log(atoms.r_lo)


@functools.lru_cache(maxsize=8)
def _step(atoms: Atoms, direction: str) -> int:
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


def _cells(atoms: Atoms, edges: np.ndarray, direction: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
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
# (`AtomPair.search_log_mgf`).
_SEARCH_BIN = 1e-3


class AtomPair(Pair):
    """A discrete pair (`Atoms`) in one direction (remove: P = R Q; add: the reverse)."""

    def __init__(self, atoms: Atoms, direction: str, support: tuple[float, float]) -> None:
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
