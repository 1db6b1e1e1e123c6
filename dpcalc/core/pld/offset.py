"""The offset of one step's grid {o + k h}: a grid point at the likelihood ratio of the pile of
losses at an end of the support, which the lower measure places at a point (`grid_offset`; S4
and S5 of docs/pld-soundness.md). Any offset gives sound measures: it only serves accuracy.
"""

from __future__ import annotations

import math

import numpy as np

from dpcalc.core.phases import count_as_float
from dpcalc.core.pld.model import PhaseModel
from dpcalc.core.pld.pairs import Pair

# A grid offset is a multiple of a unit u = h 2^-b, b <= _OFFSET_BITS, chosen so that the
# offsets of up to `steps` compositions and the grid points add exactly (`measure.Tilted.losses`);
# where u would have to exceed h 2^-_MIN_OFFSET_BITS the grid is not aligned.
_OFFSET_BITS = 12
_MIN_OFFSET_BITS = 4


def grid_offset(model: PhaseModel, h: float, lam: float) -> float:
    """An offset o for one step's grid {o + k h}: o itself is the grid point at the likelihood ratio
    of the cell at an end of the support (S4 of docs/pld-soundness.md). It is the point k = 0 of
    every coarsening of the grid, and n o, the point of n steps' piles, that of every coarsening
    an n-fold composition goes through.

    A subsampled mechanism's losses pile up at an end of their support: half of one step's
    mass lies within p/2 of log(1 - p) (remove) or of -log(1 - p) (add), and the Laplace pair
    has atoms at both ends. When the pile is narrower than h the lower measure must place the
    whole pile at a grid point at or below its ratio; off the grid that costs up to h per step
    (p = 1e-5, sigma = 0.5, T = 1e7 kept a lower bound of 0). For the lower end e the cell of a
    point g in [e, e + h/2] is [e, g + h/2) (nothing lies below e); its ratio r(g) grows more
    slowly than g, so r(g) = g has at most one root there, found by bisection and rounded to a
    multiple u of h 2^-12 (a coarser multiple for runs so long that n o would not be exact, none
    beyond h 2^-4). The rounding goes towards the inside of the support. At the lower end the
    point is rounded up, so the pile's ratio lies at most u below its point, and the pile lifts
    it by borrowing a small fraction of the cell above, which costs only O(u h) (`discretise`);
    rounded down, the pile (half of the mass or more) would be rounded down by up to u, which
    lowers the mean loss of every step by up to u times the pile's mass, and T steps add it up
    (p = 1e-5, sigma = 0.5, h = 2^-17: 1.1e-9 of the exact 2.66e-9 per step; now 1.6e-11).
    It is rounded down when that cell has too little room to lend. The upper end likewise, with
    the cell [g - h/2, e] and its point rounded down: a ratio above its point is lowered by
    borrowing from the cell below. Without a root (a pile wider than half
    a cell, which the grid resolves, the lower measure merging the end cell into its neighbour:
    `garbling._merge_edges`) or a finite end the offset is 0. Of two finite ends the one whose
    cell has the larger tilted mass is aligned. The choice affects accuracy only: any offset
    gives sound measures.
    """
    pair = model.pair
    lo, hi = pair.support
    best: tuple[float, float, float, bool] | None = None  # (log tilted mass of the cell, a, b, lower end)
    for end in (lo, hi):
        if not math.isfinite(end):
            continue
        below = end == lo

        def cell(g: float, end: float = end, below: bool = below) -> tuple[float, float]:
            edges = [end, g + 0.5 * h] if below else [g - 0.5 * h, end]
            masses = pair.cell_masses(np.array([-math.inf, *edges, math.inf]))
            return float(masses.log_p[1]), float(masses.log_q[1])

        def excess(g: float) -> float:  # r(g) - g, decreasing in g
            log_p, log_q = cell(g)
            return log_p - log_q - g if math.isfinite(log_p) and math.isfinite(log_q) else math.nan

        a, b = (end, end + 0.5 * h) if below else (end - 0.5 * h, end)
        at_a, at_b = excess(a), excess(b)
        if math.isnan(at_a) or math.isnan(at_b):
            continue
        if not (at_a >= 0.0 >= at_b):
            continue  # a pile wider than half a cell: the grid resolves it
        for _ in range(40):
            if _same_unit(a, b, h, model.steps):
                break  # every point of [a, b) rounds down to the offset a would (see below)
            middle = 0.5 * (a + b)
            if excess(middle) >= 0.0:
                a = middle
            else:
                b = middle
        log_p = cell(a)[0]
        if best is None or log_p + lam * a > best[0]:
            best = (log_p + lam * a, a, b, below)  # r(a) >= a, r(b) < b
    if best is None:
        return 0.0
    _, a, b, below = best
    # n g / u < 2^50 for n up to steps, so that every composed offset is exact
    unit = _offset_unit(max(abs(a), abs(b)), h, model.steps)
    if unit is None:
        return 0.0
    down = math.floor(a / unit) * unit
    if not below:
        return down
    up = math.ceil(b / unit) * unit
    return up if up <= lo + 0.5 * h and _can_lift(pair, lo, up, h) else down


def _offset_unit(g: float, h: float, steps: int) -> float | None:
    """The unit u = h 2^-b that the offset at g is a multiple of (None: no offset): n g / u < 2^50 for
    n up to steps, so that every composed offset is exact (h = j v with v a power of two and j at
    most 3: n g is a multiple of v 2^-b below 3 2^50 of them, S5)."""
    bits = min(_OFFSET_BITS, math.floor(50.0 - math.log2(count_as_float(steps)) - math.log2(abs(g) / h + 1.0)))
    return None if bits < _MIN_OFFSET_BITS else h * 2.0**-bits


def _same_unit(a: float, b: float, h: float, steps: int) -> bool:
    """Whether every g in [a, b) gives the offset a gives: a and b on one side of 0 (u is monotone
    in |g| there) with one unit u, and floor(g/u) equal at both ends (floor is monotone): the
    bisection of `grid_offset` can stop, its answer is known."""
    if a < 0.0 < b:
        return False
    unit = _offset_unit(a, h, steps)
    return unit is not None and unit == _offset_unit(b, h, steps) and math.floor(a / unit) == math.floor(b / unit)


def _can_lift(pair: Pair, end: float, g: float, h: float) -> bool:
    """Whether the cell [end, g + h/2) of the grid point g, whose ratio lies below e^g, can be lifted
    to e^g by merging in at most a quarter of the cell [g + h/2, g + 3h/2) above it (S4), judged,
    as the lower measure's borrowing is (`garbling.lower_masses`), from bounds on the masses:
    where the lift fails there, the whole pile goes down a step. (The masses next to a subsampled
    Laplace pair's atom are known to ~2.5e-11 relative, more than the pile's ratio lies below its
    point: judged from central values, the lower bound of p = 1e-4, b = 1, T = 1e6 fell by 4%.) Either
    answer gives a sound measure (`grid_offset`)."""
    masses = pair.cell_masses(np.array([-math.inf, end, g + 0.5 * h, g + 1.5 * h, math.inf]))
    log_p, log_q = masses.log_p[1:3], masses.log_q[1:3]
    if not (np.isfinite(log_p).all() and np.isfinite(log_q).all()):
        return False
    rel_p, rel_q = masses.rel_p[1:3], masses.rel_q[1:3]
    # e^g Q - P of the pile's cell, at most; P - e^g Q of the cell above, at least
    need = math.exp(g + log_q[0]) * (1.0 + rel_q[0]) - math.exp(log_p[0]) * (1.0 - rel_p[0])
    room = math.exp(log_p[1]) * (1.0 - rel_p[1]) - math.exp(g + log_q[1]) * (1.0 + rel_q[1])
    return bool(need <= 0.25 * room)
