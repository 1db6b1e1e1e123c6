"""A discretised privacy-loss distribution on a tilted uniform grid (`Tilted`), and the
operations that keep its error bounds while moving no mass (sums, pieces, renormalising).

A measure on the grid {o + k h} (o the grid's offset, 0 unless the step was aligned with an end
of its support, see `offset.grid_offset`) is stored tilted and normalised: the mass at loss
s = o + k h is
    m(s) = exp(log_z) * t[k - k0] * exp(-lam * s),
so that t sums to about 1 and holds the measure seen through exp(lam * s). Convolution
commutes with the tilt (exp(lam (s1 + s2)) = exp(lam s1) exp(lam s2)), so the FFT works on t,
whose relevant part (near the epsilon being solved for) is of order 1, not of order delta:
its rounding errors are relative to the part that matters, however small delta is (S5 of
docs/pld-soundness.md, which names the step of the argument each field serves).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

import numpy as np

from dpcalc.core.pld.normal import UNIT_ROUNDOFF

U = UNIT_ROUNDOFF

# Exponents theta of the Chernoff bounds that upper measures track: for theta >= 0,
# P(S < f) <= e^(theta f) E[e^(-theta S)] certifies how much mass a lower truncation drops (S6);
# for theta < 0, P(S >= c) <= e^(theta c) E[e^(-theta S)] how much an upper one moves to +inf (S3),
# where the FFT's noise hides it (`truncate.truncate`).
THETAS = np.concatenate(([0.0, 0.25, 0.5, 0.75], 2.0 ** np.arange(0, 21), -(2.0 ** (np.arange(-8, 25) / 2.0))))
# The exponents of the lower-tail bounds (theta >= 0), and of the upper-tail ones (theta < 0).
LOWER_THETAS = THETAS >= 0.0
UPPER_THETAS = THETAS < 0.0


# a loss or an array of them (`Tilted._offset_exactly`)
_Steps = TypeVar("_Steps", float, np.ndarray)


@lru_cache(maxsize=256)
def split_growth(h: float, top: float) -> np.ndarray:
    """log of the factor by which coarsening an upper measure from the step h to `top` (S3 splits,
    `coarsen.coarsen`) can raise E[e^(-theta S)], for theta in THETAS: the splits of the steps
    h, 2h, ..., top/2 multiply it by at most (e^(theta h) + e^((1 - theta) h))/(1 + e^h) each.
    Layers coarsen parts of a measure whose whole-measure bounds the bulk carries
    (`layers`): those bounds take this factor. Remembered (the same few pairs of steps recur):
    the array is read-only."""
    total = np.zeros(len(THETAS))
    while h < top:
        growth = np.logaddexp(THETAS * h, (1.0 - THETAS) * h) - np.logaddexp(0.0, h)
        total += np.maximum(growth, 0.0) + 1e-12
        h *= 2.0
    total.flags.writeable = False
    return total

@dataclass
class Tilted:
    """A discretised privacy-loss distribution (one direction), tilted and normalised.

    kind "upper": a measure whose survival function dominates that of a dominating pair's
    privacy loss (S1-S3); its profile bounds delta from above. kind "lower": a measure
    dominated by the privacy loss of a garbling of the pair (S4); it bounds delta from below.
    """

    kind: str
    lam: float
    h: float
    k0: int
    t: np.ndarray
    log_z: float
    log_z_err: float = 0.0  # bound on |computed log_z - exact log_z|
    err: float = 0.0  # bound on the L1 norm of (t - t_exact) (S5)
    err2: float = math.inf  # bound on the L2 norm of (t - t_exact) (S5); `l2` is the one to use
    inf_mass: float = 0.0  # upper: untilted mass at +inf (already an upper bound)
    drop_rel: float = 0.0  # upper: sum of multiplicity * nu e^(lam f) / MGF over dropped lower tails (S6)
    drop_mass: float = 0.0  # upper: sum of multiplicity * nu over dropped lower tails (S6)
    deficiency: float = 0.0  # lower: bound on (true - represented) masses, tilted units (S4)
    log_mass: float = 0.0  # upper: log of an upper bound on the untilted total mass
    log_theta_mgf: np.ndarray | None = None  # upper: log bounds on E[e^(-theta S)], theta in THETAS (S3, S6)
    steps: int = 1
    borrowed_from_tail: float = 0.0  # lower, one step: share of the tail above the grid merged in
    offset: float = 0.0  # the grid is {offset + k h}; offsets add under composition

    @property
    def losses(self) -> np.ndarray:
        """The grid's losses offset + (k0 + i) h, one per stored mass, computed exactly: h is j v
        with v a power of two and j in {1, 3} (`plan._MANTISSAS`), and the offset a multiple of
        h 2^-12 (`offset.grid_offset`), so every sum is a multiple of one power of two and exact while
        it stays below 2^53 of them (S5); it is checked (a rounded loss would break the orderings of
        S3/S4): the indices against 2^50, the sums with an offset by TwoSum."""
        return self.losses_at(np.arange(len(self.t)))

    def losses_at(self, indices: np.ndarray) -> np.ndarray:
        """The losses offset + (k0 + i) h at the stored positions i in `indices` (integers in
        [0, len(t))), each the float `losses` holds there (computed by the same operations) and
        checked the same way: a truncation needs a few of them, not the whole grid."""
        return self._offset_exactly((self.k0 + indices) * self.h)

    def loss_at(self, i: int) -> float:
        """The loss at stored position i, the float `losses` holds there (the same operations
        on one number, and the same checks)."""
        return self._offset_exactly((self.k0 + i) * self.h)

    def _offset_exactly(self, steps: _Steps) -> _Steps:
        """offset + steps, checked to be exact (`losses`): the indices against 2^50, the sums by
        TwoSum (Knuth), whose rounding error is zero when the sum is exact."""
        if max(abs(self.k0), abs(self.k0 + len(self.t))) >= _MAX_EXACT_INDEX:
            raise FloatingPointError("the grid's losses are not representable exactly")
        if self.offset == 0.0:
            return steps
        losses = self.offset + steps
        back = losses - self.offset
        error = (self.offset - (losses - back)) + (steps - back)
        if error != 0.0 if isinstance(error, float) else np.any(error != 0.0):
            raise FloatingPointError("the grid's losses are not representable exactly")
        return losses

    @property
    def l2(self) -> float:
        """The bound on the L2 norm of (t - t_exact) to use: err2, or err when that is smaller
        (the L2 norm of a vector is at most its L1 norm; a measure built without an L2 bound has
        err2 = inf and falls back on err)."""
        return min(self.err2, self.err)

    def copy(self) -> Tilted:
        """The same measure with its own copy of the masses."""
        return replace(self, t=self.t.copy())


def replace(m: Tilted, **changes: object) -> Tilted:
    """A shallow copy of m with the fields in `changes` set (as `dataclasses.replace`, without
    calling `__init__`: the engine makes a few hundred per accounting, and the generic version
    costs about a tenth of the design card's composition)."""
    fields = m.__dict__.copy()
    fields.update(changes)
    out = object.__new__(Tilted)
    out.__dict__ = fields
    return out



# Grid indices below this in magnitude give exact grid points k h: j |k| < 2^53 for h = j v
# (`Tilted.losses`).
_MAX_EXACT_INDEX = 2**50


def add_offsets(a: float, b: float) -> float:
    """a + b for two grid offsets, which must add exactly (`Tilted.losses`)."""
    total = a + b
    back = total - a
    if (a - (total - back)) + (b - back) != 0.0:
        raise FloatingPointError("the grid offsets do not add exactly")
    return total


def kappa(lam: float) -> float:
    """sup_{y > 0} e^(-lam y) (1 - e^(-y)) = lam^lam / (lam + 1)^(lam + 1) (S5: the weight that
    turns an error in tilted units into an error in delta)."""
    # -lam log1p(1/lam) keeps its accuracy for large lam (lam log(lam/(lam + 1)) loses ~lam ulps);
    # the factor rounds the few remaining ulps up, since kappa multiplies error terms
    if lam <= 0:
        return 1.0
    return math.exp(-lam * math.log1p(1.0 / lam) - math.log1p(lam)) * (1.0 + 8.0 * U)


def trim(m: Tilted) -> Tilted:
    """Drop exact zeros at both ends (no mass moves)."""
    if len(m.t) and m.t[0] != 0.0 and m.t[-1] != 0.0:
        return m  # the common case, without scanning the masses
    nonzero = np.flatnonzero(m.t)
    if len(nonzero) == 0:
        return m
    lo, hi = int(nonzero[0]), int(nonzero[-1])
    if lo == 0 and hi == len(m.t) - 1:
        return m
    return replace(m, t=m.t[lo : hi + 1], k0=m.k0 + lo)


def bare(m: Tilted) -> Tilted:
    """m without the quantities that belong to a whole measure (mass at +inf, dropped tails).

    A measure split into layers keeps those on one layer only; products that involve other
    layers must not count them again.
    """
    return replace(m, inf_mass=0.0, drop_rel=0.0, drop_mass=0.0, log_theta_mgf=None, log_mass=0.0)


def add(x: Tilted, y: Tilted) -> Tilted:
    """The sum of two measures on the same grid (same kind and tilt)."""
    if x.kind != y.kind or x.lam != y.lam or x.h != y.h or x.offset != y.offset:
        raise ValueError("add needs measures of the same kind, tilt, grid step and offset")
    lo = min(x.k0, y.k0)
    hi = max(x.k0 + len(x.t), y.k0 + len(y.t))
    log_z = max(x.log_z, y.log_z)
    wx, wy = math.exp(x.log_z - log_z), math.exp(y.log_z - log_z)
    t = np.zeros(hi - lo)
    t[x.k0 - lo : x.k0 - lo + len(x.t)] += wx * x.t
    t[y.k0 - lo : y.k0 - lo + len(y.t)] += wy * y.t
    out = replace(
        x, t=t, k0=lo, log_z=log_z,
        log_z_err=max(x.log_z_err, y.log_z_err) + 4.0 * U * (abs(log_z) + 1.0),
        err=wx * x.err + wy * y.err + 2.0 * U * (wx + wy),
        err2=wx * x.l2 + wy * y.l2 + 2.0 * U * (wx + wy),
        deficiency=wx * x.deficiency + wy * y.deficiency,
        inf_mass=x.inf_mass + y.inf_mass,
        drop_rel=x.drop_rel + y.drop_rel,
        drop_mass=x.drop_mass + y.drop_mass,
        log_mass=float(np.logaddexp(x.log_mass, y.log_mass)),
        log_theta_mgf=(np.logaddexp(x.log_theta_mgf, y.log_theta_mgf)
                       if x.log_theta_mgf is not None and y.log_theta_mgf is not None else None),
        steps=max(x.steps, y.steps),
    )
    return renormalise(out, out)


def piece(m: Tilted, start: int, stop: int) -> Tilted:
    """Bins [start, stop) of m as a measure of their own (a layer); the error bounds of the
    whole are kept (they bound the error of any part); whole-measure quantities are dropped."""
    out = bare(m)
    out = replace(out, t=m.t[start:stop].copy(), k0=m.k0 + start)
    return renormalise(out, m)



def renormalise(out: Tilted, before: Tilted) -> Tilted:
    """`out` (a part of `before`, or `before` changed in place) normalised again: its sum moves
    into log_z, and the error bounds are rescaled with it (S5)."""
    total = float(out.t.sum())
    out.t /= total
    # the division rounds each mass by at most u: at most u ||t||_2 <= u ||t||_1 in L2
    out.err2 = out.l2 / total + 2.0 * U
    out.err = out.err / total + 2.0 * U
    if out.kind == "lower":
        out.deficiency = out.deficiency / total
    out.log_z_err = before.log_z_err + 4.0 * U * (abs(before.log_z) + 1.0)
    out.log_z = before.log_z + math.log(total)
    return out

