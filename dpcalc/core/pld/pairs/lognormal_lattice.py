"""A lognormal factor on a lattice, bracketed in the convex order, with certified errors: the
factors whose sums (`lattice_sums`) are the numerical engine of `allocation` (whose docstring,
and docs/mathematics.md "Random allocation", give the mathematics).

- `lattice(a)`: one factor W, log W ~ N(-a^2/2, a^2), on {k h}: its spread masses (a
  mean-preserving spread, larger in the convex order), its cell masses and cell means, each with
  a relative error bound, from Gauss-Legendre sums of positive terms;
- the masses' error bounds split into a relative and an absolute part (`split_errors`), and
  lattices made coarser (`spread_coarser`, `cells_coarser`);
- the sums of such factors, by FFT, are `lattice_sums`'.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from dpcalc.core.pld.normal import log_upper_tail
from dpcalc.core.pld.pairs.base import U
from dpcalc.core.special import ndtri

# The lattice ends at w_max = K h where a P-distributed factor exceeds it with probability
# Phi(-_Z_TOP) ~ 1e-18: the upper pair's mass at +inf, far below any delta the accountant resolves.
_Z_TOP = 8.75
# Lattice step h = _RESOLUTION sd(W): the spread adds at most h^2/4 to a factor's variance
# sd(W)^2, the cells remove at most h^2/12; both move epsilon by far less than 1e-3 relative.
_RESOLUTION = 1.0 / 64.0
_SUBNORMAL = 5e-324  # the smallest positive float: the most one product can lose to underflow
# At most this many lattice points for one factor; beyond, h grows (sound, only coarser: the
# interval widens). An FFT is at most work.MAX_ATOMS long (`lattice_sums.fft_length`).
_MAX_LATTICE = 1 << 21
# Relative errors of lattice masses up to this are carried as a factor (1 + rho)^r; beyond it,
# as an absolute (L1) error of the convolution's input.
_RHO_CAP = 1e-10
# Gauss-Legendre pieces [c, d] of a cell have d <= _PIECE c (`lattice`).
_PIECE = 1.02


# With one factor beyond the bulk, the factors are taken on the lattice of step c h, c this
# (`allocation`): those outcomes have Q-probability below about 1e-10 and lie at R >= w_b/t,
# where c h/t is far below the loss grid's step; their convolution is c times shorter. The
# lattice itself has cells of width c h beyond w_f, where a factor lies with Q-probability
# 1e-10/_FINE_STEPS (the bulk of an epoch of up to _FINE_STEPS steps ends below it).
TAIL_COARSENING = 16
_FINE_STEPS = 1e4


@dataclass(frozen=True)
class Lattice:
    """One factor W on the lattice {k h}, with cells of width h up to w_f = K h and of width
    H = c h beyond, up to w_top: the step, the spread masses (upper) and the cell masses and
    cell excesses e(k) (lower), with their error bounds."""

    a: float
    h: float
    coarse: int  # c: H = c h, K a multiple of c
    spread: np.ndarray  # Q-masses at k h, k = 0..K
    spread_rel: np.ndarray  # relative error of each
    merged_spread: np.ndarray  # Q-masses at m H, m = K/c + 1, ..., w_top/H
    merged_spread_rel: np.ndarray
    inf_mass: float  # P-mass of one factor at +inf (the spread above w_top), an upper bound
    cells: np.ndarray  # Q-masses of [k h, (k+1) h), k = 0..K-1
    cells_rel: np.ndarray
    excess: np.ndarray  # e(k) in [0, h]
    excess_err: np.ndarray  # absolute error of e(k)
    merged: np.ndarray  # Q-masses of [m H, (m+1) H), m = K/c, ..., w_top/H - 1
    merged_rel: np.ndarray
    merged_excess: np.ndarray  # E[W | cell] - m H in [0, H]
    merged_excess_err: np.ndarray
    top: float  # Q-mass of [w_top, inf), an upper bound


@functools.lru_cache(maxsize=2)
def lattice(a: float) -> Lattice:
    """The lattice of one factor W, log W ~ N(-a^2/2, a^2) (module docstring).

    Lattice points w_k = fl(k h) (a sum of them is j h to within u relative, inside the slack of
    every ratio R below; the wide cells' ends m H = (c m) h are such points); cells [w_k, w_(k+1)).
    Each cell is cut into pieces [c, d] with d <= _PIECE c (from w_lo = e^(-40 a - a^2/2) up:
    below it W has probability Phi(-40), which is 0 in float64) and integrated in w by 8-point
    Gauss-Legendre sums of positive terms, f the density of W:
        P(cell) = int f,   A = E[W - w_k; cell] = int (w - w_k) f,   C = E[w_(k+1) - W; cell],
    free of cancellation. f is analytic on the disc of radius c/2 around a piece, where |f|
    exceeds its size on the piece by at most e^((|log c| + 1)/a^2); Cauchy's estimate bounds
    the rule's relative error by about (d/c - 1)^16 = 50^-16 times that, below 1e-18 on the
    lattice (and checked against mpmath in the tests). The spread moves W in a cell to its two
    ends (C/width to the left one, A/width to the right one): a mean-preserving spread whatever
    the cells' widths."""
    log_top = a * _Z_TOP + 0.5 * a * a
    sd = math.sqrt(math.expm1(a * a))
    h = max(_RESOLUTION * sd, math.exp(log_top) / _MAX_LATTICE)
    c = TAIL_COARSENING
    m_top = math.ceil(math.exp(log_top) / (c * h))
    z_fine = -ndtri(1e-10 / _FINE_STEPS)
    k_fine = min(c * math.ceil(math.ceil(math.exp(a * z_fine - 0.5 * a * a) / h) / c), c * m_top)
    w = np.concatenate((np.arange(k_fine + 1) * h, np.arange(k_fine // c + 1, m_top + 1) * (c * h)))
    cells = len(w) - 1
    w_lo = math.exp(-40.0 * a - 0.5 * a * a)
    # pieces: a cell with w_(k+1) <= _PIECE w_k is one piece; the others, geometric cuts of ratio
    # _PIECE from max(w_k, w_lo)
    single = np.flatnonzero(w[1:] <= _PIECE * w[:-1])
    starts, ends, owner = [w[single]], [w[single + 1]], [single]
    for k in np.flatnonzero(w[1:] > _PIECE * w[:-1]):
        lo, hi = max(float(w[k]), w_lo), float(w[k + 1])
        if lo >= hi:
            continue
        count = max(1, math.ceil(math.log(hi / lo) / math.log(_PIECE)))
        cuts = lo * (hi / lo) ** (np.arange(count + 1) / count)
        cuts[0], cuts[-1] = lo, hi
        starts.append(cuts[:-1])
        ends.append(cuts[1:])
        owner.append(np.full(count, k))
    lo_end, hi_end, cell = np.concatenate(starts), np.concatenate(ends), np.concatenate(owner)
    left, right = w[cell], w[cell + 1]
    n = len(lo_end)
    mass, to_left, to_right, node_rel = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    for s in range(0, n, _CHUNK):  # in chunks of pieces: the nodes' arrays stay in cache
        part = slice(s, s + _CHUNK)
        mass[part], to_left[part], to_right[part], node_rel[part] = _pieces(a, lo_end[part], hi_end[part],
                                                                             left[part], right[part])
    g = np.bincount(cell, weights=mass, minlength=cells)
    above = np.bincount(cell, weights=to_left, minlength=cells)
    below = np.bincount(cell, weights=to_right, minlength=cells)
    rel_g = np.zeros(cells)
    rel_g[single] = node_rel[:len(single)]  # the first pieces are the single cells, one each
    np.maximum.at(rel_g, cell[len(single):], node_rel[len(single):])
    rel_g += 16.0 * U
    part_err = (rel_g + 4.0 * U) * (above + below)
    cell_width = np.diff(w)
    # e(k) = E[W | cell] - w_k = A/P(cell)
    with np.errstate(divide="ignore", invalid="ignore"):
        excess = np.where(g > 0.0, above / g, 0.5 * cell_width)
        excess_err = np.where(g > 0.0, part_err / g + above / g * rel_g + 4.0 * U * w[1:], cell_width)
    excess_err = np.minimum(excess_err, 2.0 * cell_width)
    # the spread: to w_(k+1), A/width; to w_k, C/width
    spread = np.zeros(cells + 1)
    spread_err = np.zeros(cells + 1)
    spread[:-1] += below / cell_width
    spread[1:] += above / cell_width
    spread_err[:-1] += (part_err + 2.0 * U * below) / cell_width
    spread_err[1:] += (part_err + 2.0 * U * above) / cell_width
    # above w_top: its Q-mass to w_top, the excess over w_top to +inf (P-mass at most E[W; W >= w_top])
    z_top = (math.log(w[-1]) + 0.5 * a * a) / a
    top_err = 1e-12
    log_tail_q = float(log_upper_tail(np.array([z_top]))[0])
    log_tail_p = float(log_upper_tail(np.array([z_top - a]))[0])
    top = math.exp(log_tail_q) * (1.0 + top_err)
    spread[-1] += math.exp(log_tail_q)
    spread_err[-1] += top * top_err + 1e-300
    with np.errstate(divide="ignore", invalid="ignore"):
        spread_rel = np.where(spread > 0.0, spread_err / spread, np.inf)
    fine = slice(None, k_fine)
    wide = slice(k_fine, None)
    return Lattice(a=a, h=h, coarse=c, spread=spread[:k_fine + 1], spread_rel=spread_rel[:k_fine + 1],
                   merged_spread=spread[k_fine + 1:], merged_spread_rel=spread_rel[k_fine + 1:],
                   inf_mass=math.exp(log_tail_p) * (1.0 + top_err), cells=g[fine], cells_rel=rel_g[fine],
                   excess=excess[fine], excess_err=excess_err[fine], merged=g[wide], merged_rel=rel_g[wide],
                   merged_excess=excess[wide], merged_excess_err=excess_err[wide], top=top)


_CHUNK = 8192


def _pieces(a: float, c: np.ndarray, d: np.ndarray, left: np.ndarray,
            right: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The 8-point Gauss-Legendre sums of pieces [c, d] of cells [left, right) (`lattice`): P, A
    and C of each piece, and the relative error of the density at its nodes."""
    x, weights = _gauss_legendre_8()
    half = 0.5 * (d - c)
    nodes = c[:, None] + half[:, None] * (1.0 + x[None, :])
    zn = (np.log(nodes) + 0.5 * a * a) / a
    f = np.exp(-0.5 * zn * zn) / (math.sqrt(2.0 * math.pi) * a * nodes)
    total = f @ weights
    mass = half * total
    # distances of the nodes to the cell's ends, from exact differences of nearby floats (Sterbenz):
    # (c - left) + half (1 + x) at each node, summed against f as two sums of positive terms
    to_left = half * ((c - left) * total + half * (f @ ((1.0 + x) * weights)))  # A
    to_right = half * ((right - d) * total + half * (f @ ((1.0 - x) * weights)))  # C
    # f at a node: z errs by 4u (|log w| + a^2 + 1)/a, so log f by |z| that plus 4u (z^2 + |log w| + 2);
    # z rises with the node, so |z| is largest at the first or the last
    zmax = np.maximum(np.abs(zn[:, 0]), np.abs(zn[:, -1]))
    log_w = np.abs(np.log(c)) + 1.0
    node_rel = 8.0 * U * (zmax * (log_w + a * a + 1.0) / a + zmax * zmax + log_w + 20.0)
    return mass, to_left, to_right, node_rel


@functools.lru_cache(maxsize=1)
def _gauss_legendre_8() -> tuple[np.ndarray, np.ndarray]:
    """8-point Gauss-Legendre rule on [-1, 1]."""
    return np.polynomial.legendre.leggauss(8)


def split_errors(masses: np.ndarray, rel: np.ndarray) -> tuple[float, float]:
    """A mass vector's errors as a relative part (at most _RHO_CAP, returned as rho) and the L1
    norm of the rest (relative errors above the cap, and masses whose bound is unknown)."""
    excess = np.where(np.isfinite(rel), np.maximum(rel - _RHO_CAP, 0.0) * masses, 0.0)
    unknown = ~np.isfinite(rel)
    return _RHO_CAP, float(excess.sum()) + 1e-300 * float(unknown.sum())


def split_absolute(masses: np.ndarray, err: np.ndarray) -> tuple[float, float]:
    """`split_errors` of masses given with absolute error bounds."""
    return _RHO_CAP, float(np.maximum(err - _RHO_CAP * masses, 0.0).sum())


def absolute_errors(masses: np.ndarray, rel: np.ndarray) -> np.ndarray:
    """Absolute error bounds of masses with relative ones; an unknown one (a computed 0) at most
    1e-300, as `split_errors` counts it."""
    with np.errstate(invalid="ignore"):
        out: np.ndarray = np.where(np.isfinite(rel), rel * masses, 1e-300)
    return out


def spread_coarser(x: np.ndarray, err: np.ndarray, c: int) -> tuple[np.ndarray, np.ndarray]:
    """Masses x >= 0 at the lattice points k, within absolute errors err, spread onto the points
    c m (c a power of two): the mass at c m + i goes to c m with probability (c - i)/c and to
    c (m + 1) otherwise, a mean-preserving spread. The masses at m = 0, 1, ... and their error
    bounds: the spread of the errors (a positive linear map), and the rounding of each result, a
    sum of at most 2c positive terms whose weights are exact, at most (2c + 4) u of it."""
    blocks = -(-len(x) // c)
    up_weight = np.arange(c) / c  # exact
    out, out_err = np.zeros(blocks + 1), np.zeros(blocks + 1)
    for values, target in ((x, out), (err, out_err)):
        padded = np.zeros(blocks * c)
        padded[:len(values)] = values
        rows = padded.reshape(blocks, c)
        target[:-1] += rows @ (1.0 - up_weight)
        target[1:] += rows @ up_weight
    rounding = (2 * c + 4) * U
    # each output is a sum of at most 2c products, each of which may also underflow by at most the
    # smallest subnormal (a relative bound does not cover a mass or an error bound that underflows)
    return out, out_err * (1.0 + rounding) + rounding * out + 2 * c * _SUBNORMAL


def cells_coarser(lat: Lattice) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every cell of width H = c h of `lat`: the narrow cells merged c at a time, [c m h, c (m + 1) h),
    then its wide cells. Their Q-masses, relative error bounds, excesses e_H(m) = E[W | cell] - m H
    in [0, H] and absolute error bounds of those.

    A merged excess is the g-weighted mean of v = e(k) + i h over its cells k = c m + i, v in
    [0, H]. With each g within rho (relative) and each e(k) within err(k), it errs by at most
    (1 + rho)/(1 - rho) (sum g err)/(sum g) (the excesses' errors) plus 2 rho H/(1 - rho) (the
    weights': a mean of values in [0, H] moves by at most H/2 times the L1 change of the
    normalised weights, at most 4 rho/(1 - rho)), plus its rounding, at most (2c + 8) u H."""
    g, h, c = lat.cells, lat.h, lat.coarse
    blocks = len(g) // c  # a multiple of c
    big = c * h

    def rows(values: np.ndarray) -> np.ndarray:
        return values.reshape(blocks, c)

    cells = rows(g)
    mass = cells.sum(axis=1)
    rho = rows(lat.cells_rel).max(axis=1)
    moment = (cells * (rows(lat.excess) + np.arange(c) * h)).sum(axis=1)
    moment_err = (cells * rows(lat.excess_err)).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        excess = np.where(mass > 0.0, np.clip(moment / mass, 0.0, big), 0.5 * big)
        damp = np.where(rho < 0.5, (1.0 + rho) / (1.0 - rho), math.inf)
        excess_err = np.where(mass > 0.0, moment_err / mass * damp + 2.0 * rho * big * damp / (1.0 + rho)
                              + (2 * c + 8) * U * big, 2.0 * big)
    excess_err = np.minimum(np.nan_to_num(excess_err, nan=2.0 * big), 2.0 * big)
    return (np.concatenate((mass, lat.merged)), np.concatenate((rho + (c + 2) * U, lat.merged_rel)),
            np.concatenate((excess, lat.merged_excess)), np.concatenate((excess_err, lat.merged_excess_err)))
