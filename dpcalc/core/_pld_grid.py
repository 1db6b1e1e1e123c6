"""Discretised privacy-loss distributions on a tilted uniform grid, and their composition.

See the docstring of `dpcalc.core.pld` for the argument that the numbers produced here bound
the true privacy profile; the comments below name the step of that argument each operation
relies on ("S1" ... "S6").

A measure on the grid {k h} is stored tilted and normalised: the mass at loss s = k h is
    m(s) = exp(log_z) * t[k - k0] * exp(-lam * s),
so that t sums to about 1 and holds the measure seen through exp(lam * s). Convolution
commutes with the tilt (exp(lam (s1 + s2)) = exp(lam s1) exp(lam s2)), so the FFT works on t,
whose relevant part (near the epsilon being solved for) is of order 1, not of order delta:
its rounding errors are relative to the part that matters, however small delta is (S5).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from dpcalc.core import _pld_work as work
from dpcalc.core._pld_normal import UNIT_ROUNDOFF
from dpcalc.core._pld_pairs import Pair
from dpcalc.core.special_array import finite_abs, log1mexp, log_add, log_sub

U = UNIT_ROUNDOFF

# Relative error of one complex FFT pass of length n, per level of the radix-2 recursion:
# Higham, "Accuracy and Stability of Numerical Algorithms" (2002), Thm 24.2, gives
# ||fl(FFT x) - FFT x||_2 <= log2(n) eta/(1 - log2(n) eta) ||FFT x||_2 with eta = mu + gamma_4 (sqrt 2 + mu),
# mu the error of the twiddle factors; with mu <= u that is eta <= 6.7 u. 16 u adds margin for
# the mixed radix-4/2 passes and the real-input packing of pocketfft (numpy.fft).
_FFT_ETA = 16.0 * U

# Below this many multiplications a direct convolution is faster than the FFT.
_DIRECT_CONVOLUTION_BELOW = 40_000

# Exponents theta of the Chernoff bound P(S < f) <= e^(theta f) E[e^(-theta S)] that upper
# measures track, to certify how much mass a lower truncation drops (S6).
THETAS = np.concatenate(([0.0, 0.25, 0.5, 0.75], 2.0 ** np.arange(0, 21)))
# exp(-x) is exactly 0 in float64 for x above about 745.1.
_EXP_UNDERFLOW = 750.0

# Tilted weight the lower bound may drop at its lower end per truncation (before dividing by
# the multiplicity): it lowers delta_lower by at most this part of the Chernoff bound.
_LOWER_DROP = 1e-8

# The largest fraction of the next cell that the lower-bound construction may need to lift a
# cell's likelihood ratio onto the grid (see `_lower_masses`); beyond it the cell is rounded down.
_MAX_BORROW = 1.0


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
    inf_mass: float = 0.0  # upper: untilted mass at +inf (already an upper bound)
    drop_rel: float = 0.0  # upper: sum of multiplicity * nu e^(lam f) / MGF over dropped lower tails (S6)
    drop_mass: float = 0.0  # upper: sum of multiplicity * nu over dropped lower tails (S6)
    deficiency: float = 0.0  # lower: bound on (true - represented) masses, tilted units (S4)
    log_mass: float = 0.0  # upper: log of an upper bound on the untilted total mass
    log_theta_mgf: np.ndarray | None = None  # upper: log bounds on E[e^(-theta S)], theta in THETAS (S6)
    steps: int = 1
    borrowed_from_tail: float = 0.0  # lower, one step: share of the tail above the grid merged in

    @property
    def losses(self) -> np.ndarray:
        return (self.k0 + np.arange(len(self.t))) * self.h

    def copy(self) -> Tilted:
        return replace(self, t=self.t.copy())


# --------------------------------------------------------------------------------------------
# S1-S4: discretising one step of a pair
# --------------------------------------------------------------------------------------------


def _bounds(log_value: np.ndarray, rel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log of upper and lower bounds of a value known to relative error rel."""
    with np.errstate(divide="ignore", invalid="ignore"):
        upper = log_value + np.log1p(rel) + 8.0 * U * (1.0 + finite_abs(log_value))
        lower = np.where(rel < 1.0, log_value + np.log1p(-np.minimum(rel, 1.0)) - 8.0 * U * (1.0 + finite_abs(log_value)), -math.inf)
    upper = np.where(np.isneginf(log_value), -math.inf, upper)
    lower = np.where(np.isneginf(log_value), -math.inf, lower)
    return upper, lower


def discretise_step(pair: Pair, h: float, k_lo: int, k_hi: int, lam: float,
                    drop_multiplicity: int) -> tuple[Tilted, Tilted]:
    """One step of `pair` on the grid {k h : k_lo <= k <= k_hi}, tilted by exp(lam * loss).

    Returns the upper measure (S1, S2) and the lower one (S4), from the same cell masses.

    upper: the cell [k h, (k+1) h) is split between its end points as in "connect the dots"
    (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022, arXiv 2207.04380, Sec. 4): a loss l in
    the cell goes to (k+1) h with probability (e^(-kh) - e^(-l))/(e^(-kh) - e^(-(k+1)h)), which
    keeps the Q-mass, so the split pair dominates the pair (merging the two halves back is a
    post-processing). Summed over the cell the upper part is
        U = (P(cell) - e^(kh) Q(cell)) / (1 - e^(-h)),
    computed from upper/lower bounds of the masses so that it can only be too large: moving
    mass up is a rounding up, which is safe (S3). Mass at or above k_hi h goes to +inf; mass
    below k_lo h is dropped and accounted for by S6 (none when k_lo h is below the support).

    lower: see `_lower_masses`.
    """
    count = k_hi - k_lo + 1
    work.charge(work.DISCRETISE_COST * count)
    # half-grid edges e_j = (2 k_lo - 1 + j) h/2, j = 0 .. 2 count; cells: tail, halves, tail
    half_edges = (2 * k_lo - 1 + np.arange(2 * count + 1)) * (0.5 * h)
    edges = np.concatenate(([-math.inf], half_edges, [math.inf]))
    cells = pair.cell_masses(edges)
    lp, lpl = _bounds(cells.log_p, cells.rel_p)
    lq, lql = _bounds(cells.log_q, cells.rel_q)
    # index 0: below e_0; 1 .. 2count: halves; 2count + 1: at or above e_{2count}
    grid = (k_lo + np.arange(count)) * h
    upper = _upper_step(h, k_lo, grid, lp, lql, lam, drop_multiplicity)
    upper.log_theta_mgf = _theta_table(upper)
    lower = _lower_step(h, k_lo, grid, lp, lpl, lq, lql, lam)
    return upper, lower


def discretise_step_layers(pair: Pair, h: float, k_lo: int, k_cut: int, tail_step: float, j_hi: int,
                           lam: float, drop_multiplicity: int) -> tuple[Tilted, Tilted, Tilted, Tilted | None]:
    """One step as two layers: the bulk on the grid h up to k_cut h, the tail on a grid of
    step H = tail_step (a power-of-two multiple of h, k_cut h a multiple of H) up to j_hi H.

    Returns (upper bulk, upper tail, lower bulk, lower tail). The bulk layers carry the
    quantities of the whole measure (mass at +inf, dropped lower tail, total mass, the
    E[e^(-theta S)] bounds); the tail layers do not. Both tails use the constructions of the
    bulk on the coarse grid: connect the dots on [jH, (j+1)H) (mass from j_hi H on goes to
    +inf) and the merged centred cells [(j - 1/2)H, (j + 1/2)H) for j > j0 = k_cut h / H; the
    lower tail's first piece [(k_cut + 1/2) h, (j0 + 1/2) H) is rounded down to j0 H.
    """
    H = tail_step
    ratio = round(H / h)
    if k_cut % ratio:
        raise ValueError("k_cut h must be a multiple of the tail step")
    j0 = k_cut // ratio
    count = k_cut - k_lo + 1
    tail_count = j_hi - j0
    work.charge(work.DISCRETISE_COST * (count + tail_count))
    half_edges = (2 * k_lo - 1 + np.arange(2 * count + 1)) * (0.5 * h)
    coarse_halves = (2 * j0 + 1 + np.arange(2 * tail_count + 1)) * (0.5 * H)
    edges = np.concatenate(([-math.inf], half_edges, coarse_halves, [math.inf]))
    cells = pair.cell_masses(edges)
    lp, lpl = _bounds(cells.log_p, cells.rel_p)
    lq, lql = _bounds(cells.log_q, cells.rel_q)
    nb = 2 * count + 1  # cells 0 .. nb - 1: below, the bulk's halves; then the gap, coarse halves, top
    grid = (k_lo + np.arange(count)) * h

    def rest(x: np.ndarray) -> float:
        return float(np.logaddexp.reduce(x))

    # bulk: everything at or above (k_cut + 1/2) h is "the tail" of the one-layer code
    blp = np.append(lp[:nb], rest(lp[nb:]))
    blq = np.append(lq[:nb], rest(lq[nb:]))
    blpl = np.append(lpl[:nb], rest(lpl[nb:]))
    blql = np.append(lql[:nb], rest(lql[nb:]))
    upper = _upper_step(h, k_lo, grid, blp, blql, lam, drop_multiplicity)
    lower = _lower_step(h, k_lo, grid, blp, blpl, blq, blql, lam, tail_to_top=False)
    # tail part of the cell arrays: gap, 2 tail_count coarse halves, top
    gap = nb
    halves = nb + 1 + np.arange(2 * tail_count)
    top = nb + 1 + 2 * tail_count
    tail_grid = np.arange(j0, j_hi + 1) * H
    # upper: cell j0 = the bulk's last half + gap + first coarse half; then pairs of halves
    first_p = rest(np.array([lp[nb - 1], lp[gap], lp[halves[0]]]))
    first_q = rest(np.array([lql[nb - 1], lql[gap], lql[halves[0]]]))
    pair_idx = halves[1:-1].reshape(-1, 2) if tail_count > 1 else np.zeros((0, 2), dtype=int)
    p_cells = np.concatenate(([first_p], np.logaddexp(lp[pair_idx[:, 0]], lp[pair_idx[:, 1]])))
    q_cells = np.concatenate(([first_q], np.logaddexp(lql[pair_idx[:, 0]], lql[pair_idx[:, 1]])))
    log_up = _connect_dots(tail_grid[:-1], H, p_cells, q_cells)
    upper_tail = _tilt("upper", log_up, tail_grid, H, j0, lam)
    # the one-layer code sent [k_cut h, inf) to +inf: the tail layer holds it now
    log_inf = rest(np.array([lp[halves[-1]], lp[top]]))
    upper.inf_mass = math.exp(log_inf) * (1.0 + 8.0 * U) if np.isfinite(log_inf) else 0.0
    # lower: what the bulk did not merge in, as the one-layer construction on the coarse grid
    keep = 1.0 - lower.borrowed_from_tail
    lower_tail = None
    if keep > 0.0:
        log_keep = math.log(keep)
        sl = lambda x: np.concatenate(([x[gap]], x[halves], [x[top]])) + log_keep  # noqa: E731
        t_lp, t_lpl, t_lq, t_lql = sl(lp), sl(lpl), sl(lq), sl(lql)
        centred = (j0 + 1 + np.arange(tail_count)) * H
        log_m, gap_mass, _ = _lower_masses(centred, t_lp, t_lpl, t_lq, t_lql, H, tail_to_top=True)
        # the gap [(k_cut + 1/2) h, (j0 + 1/2) H) is rounded down to j0 H
        log_lo = np.concatenate(([t_lpl[0]], log_m))
        log_lo = log_lo - 4.0 * U * (1.0 + finite_abs(log_lo))
        if np.isfinite(log_lo).any():
            lower_tail = _tilt("lower", log_lo, tail_grid, H, j0, lam)
            gap0 = max(math.exp(t_lp[0]) - math.exp(t_lpl[0]), 0.0) if np.isfinite(t_lp[0]) else 0.0
            gaps = np.concatenate(([gap0], gap_mass))
            with np.errstate(over="ignore", invalid="ignore"):
                tilted = gaps * np.exp(lam * (tail_grid + H) - lower_tail.log_z)
            lower_tail.deficiency = float(np.where(np.isnan(tilted), math.inf, tilted).sum()) * (1.0 + 1e-12)
    # whole-measure quantities on the bulk layers
    # (upper.log_mass from the one-layer code already counts [k_cut h, inf) once; counting the
    # tail layer again only overstates the bound on the total mass)
    total = math.exp(upper.log_mass) if np.isfinite(upper.log_mass) else 0.0
    tail_total = float(np.exp(np.logaddexp.reduce(log_up[np.isfinite(log_up)]))) if np.isfinite(log_up).any() else 0.0
    upper.log_mass = math.log(total + tail_total + upper.inf_mass) + 1e-12
    upper.log_theta_mgf = np.logaddexp(_theta_table(upper), _theta_table(upper_tail))
    upper_tail.log_mass = upper.log_mass
    return upper, upper_tail, lower, lower_tail


def _theta_table(measure: Tilted) -> np.ndarray:
    """log of upper bounds on E[e^(-theta S)] of an upper measure for theta in THETAS (S6).

    The stored t differs from the exact measure by at most err in L1 (tilted units); one
    tilted unit at s weighs exp(log_z - (lam + theta) s) in E[e^(-theta S)], so err times the
    largest weight is added.

    The losses are the uniform grid (k0 + i) h, so for each theta the largest weight sits at one
    end, and only points within _EXP_UNDERFLOW of it in the exponent are summed: every other
    weight, divided by the largest, is below e^-750 and is exactly 0 in float64 anyway. For
    large theta this is a few points instead of the whole grid (the same sum, ~4x cheaper).
    """
    s = measure.losses
    t = np.where(measure.t > 0.0, measure.t, 0.0)
    count = len(t)
    values = np.empty(len(THETAS))
    for index, rate in enumerate(measure.lam + THETAS):
        lo, hi = 0, count
        if rate * measure.h > 0.0:  # largest weight at the low end
            hi = min(count, math.ceil(_EXP_UNDERFLOW / (rate * measure.h)) + 1)
        elif rate * measure.h < 0.0:  # at the high end
            lo = max(0, count - 1 - math.ceil(_EXP_UNDERFLOW / (-rate * measure.h)))
        exponent = measure.log_z - rate * s[lo:hi]
        top = exponent.max()
        with np.errstate(divide="ignore"):
            values[index] = np.log(np.exp(exponent - top) @ t[lo:hi] + measure.err) + top
    return values + 1e-12


def _connect_dots(left: np.ndarray, width: float, p_up: np.ndarray, q_low: np.ndarray) -> np.ndarray:
    """S1/S2: log masses at the points left[0], ..., left[-1] + width of the split cells.

    Cell i is [left[i], left[i] + width) with P-mass at most e^p_up[i] and Q-mass at least
    e^q_low[i]; its upper part U = (P - e^left Q)/(1 - e^-width) is bounded from above so that
    the mass put at each point, and above it, can only be too large.
    """
    p_up = p_up + 4.0 * U * (1.0 + finite_abs(p_up))
    q_low = q_low - 4.0 * U * (1.0 + finite_abs(q_low))
    # N / P(cell) = 1 - exp(left + log Q - log P) is largest for the smallest exponent
    with np.errstate(invalid="ignore"):
        exponent = left + q_low - p_up
    exponent = exponent - 8.0 * U * (finite_abs(left) + finite_abs(q_low) + finite_abs(p_up) + 1.0)
    exponent = np.where(np.isnan(exponent), -math.inf, np.minimum(exponent, 0.0))
    log_share = log1mexp(exponent) - math.log(-math.expm1(-width)) + 8.0 * U
    log_share = np.minimum(log_share, 0.0)  # the up part is at most the whole cell
    log_up = p_up + log_share
    with np.errstate(divide="ignore"):
        log_down = p_up + np.log1p(-np.exp(log_share)) + 4.0 * U
    log_down = np.where(np.isneginf(p_up), -math.inf, log_down)
    log_m = np.full(len(left) + 1, -math.inf)
    log_m[:-1] = log_down
    log_m[1:] = log_add(log_m[1:], log_up)
    return log_m + 4.0 * U * (1.0 + finite_abs(log_m))


def _upper_step(h, k_lo, grid, lp, lql, lam, drop_multiplicity):
    count = len(grid)
    # pessimistic cell [k h, (k+1) h) for k = k_lo .. k_hi - 1 is halves 2(k-k_lo)+2, 2(k-k_lo)+3
    # in the 1-based half indexing of `edges` (index 0 is the tail below).
    a_idx = 2 + 2 * np.arange(count - 1)
    p_up = log_add(lp[a_idx], lp[a_idx + 1])  # upper bound of P(cell)
    q_low = log_add(lql[a_idx], lql[a_idx + 1])  # lower bound of Q(cell)
    log_m = _connect_dots(grid[:-1], h, p_up, q_low)
    # Mass at or above k_hi h: the half [k_hi h, (k_hi + 1/2) h) and the tail above -> +inf.
    log_inf = log_add(lp[2 * count], lp[2 * count + 1])
    inf_mass = float(np.exp(log_inf)) * (1.0 + 8.0 * U) if np.isfinite(log_inf) else 0.0
    # Mass below k_lo h: the tail and the half [(k_lo - 1/2) h, k_lo h).
    log_below = float(log_add(lp[0], lp[1]))
    measure = _tilt("upper", log_m, grid, h, k_lo, lam)
    measure.inf_mass = inf_mass
    total = float(np.exp(np.logaddexp.reduce(log_m[np.isfinite(log_m)]))) if np.isfinite(log_m).any() else 0.0
    measure.log_mass = math.log(total + inf_mass) + 1e-12 if total + inf_mass > 0 else -math.inf
    if np.isfinite(log_below):
        # S6: the dropped tail has mass nu = exp(log_below) (an upper bound) below k_lo h.
        # MGF of the kept part >= exp(log_z) (1 - err); the dropped losses are below grid[0].
        nu = math.exp(log_below)
        measure.drop_rel = drop_multiplicity * nu * math.exp(lam * grid[0] - measure.log_z) / (1.0 - measure.err)
        measure.drop_mass = drop_multiplicity * nu
    return measure


def _lower_masses(grid, lp, lpl, lq, lql, h, tail_to_top: bool = True):
    """S4: masses on the grid of a garbling of the pair, losses rounded down.

    Centred cells C_k = [kh - h/2, kh + h/2) are outcomes of a coarsening (a garbling) of the
    pair, with likelihood ratio r_k = P_k/Q_k in [e^(kh - h/2), e^(kh + h/2)]. Each is moved
    onto the grid by merging in part of a neighbour (merging parts of outcomes chosen at random
    is a garbling too), so that the merged ratio is at least e^(kh):
      r_k < e^(kh): a fraction c of C_{k+1} (ratio > e^(kh)) lifts it,
          c = (e^(kh) Q_k - P_k) / (P_{k+1} - e^(kh) Q_{k+1}),  computed to be too large;
      r_k > e^(kh): a fraction c of C_{k-1} (ratio < e^(kh)) lowers it to no less than e^(kh),
          c = (P_k - e^(kh) Q_k) / (e^(kh) Q_{k-1} - P_{k-1}),  computed to be too small.
    Merging rather than rounding r_k down to e^(kh) matters: the rounding costs about
    h^2/12 d(log density)/dl per step, which for a narrow per-step loss (small p) adds up over T.
    A cell reserves for its neighbours the fractions they may take (at most _MAX_BORROW each,
    computed as if they kept all of themselves) and keeps the rest, a_k >= 1 - 2 _MAX_BORROW;
    unused reserves and cells that cannot borrow enough are rounded down to (k-1) h, which all
    their losses (>= kh - h/2) exceed; a cell with r_k >= e^(kh) that cannot borrow is rounded
    down to kh. Masses are lower bounds; returns log masses and the per-cell deficiency
    (upper minus lower bound of P_k).
    """
    count = len(grid)
    # centred cell k is halves 2(k-k_lo)+1, 2(k-k_lo)+2; "cell count" is the top half plus
    # the tail above (all at or above (k_hi + 1/2) h): it can lend but not borrow.
    c_idx = 1 + 2 * np.arange(count)
    p_lo = log_add(lpl[c_idx], lpl[c_idx + 1]) - 4.0 * U
    p_hi = log_add(lp[c_idx], lp[c_idx + 1]) + 4.0 * U
    q_hi = log_add(lq[c_idx], lq[c_idx + 1]) + 4.0 * U
    top_p_lo = float(lpl[2 * count + 1]) - 4.0 * U
    top_p_hi = float(lp[2 * count + 1]) + 4.0 * U
    top_q_hi = float(lq[2 * count + 1]) + 4.0 * U
    slack = 8.0 * U

    def widen(x, sign):
        return x + sign * slack * (1.0 + finite_abs(x) + finite_abs(grid))

    # e^(kh) Q bounds of the cell itself and of its neighbours
    eq_hi = widen(grid + q_hi, +1)
    next_p_lo = np.append(p_lo[1:], top_p_lo)
    next_eq_hi = widen(grid + np.append(q_hi[1:], top_q_hi), +1)
    # r_k < e^(kh) possible: need <= e^(kh) Q_k - P_k (upper bound)
    log_need = log_sub(eq_hi, p_lo)
    # P_{k+1} - e^(kh) Q_{k+1} (lower bound)
    log_room_up = log_sub(next_p_lo, next_eq_hi)
    # r_k > e^(kh) surely: excess >= P_k - e^(kh) Q_k (lower bound)
    log_excess = np.where(np.isneginf(log_need), log_sub(p_lo, eq_hi), -math.inf)
    # e^(kh) Q_{k-1} - P_{k-1} (upper bound)
    log_room_down = log_sub(widen(grid + np.insert(q_hi[:-1], 0, -math.inf), +1), np.insert(p_lo[:-1], 0, -math.inf))
    # Wanted fractions of the neighbour, per unit of the cell's own share: up-borrowing must
    # be complete (else the cell is rounded down a whole step), down-borrowing may be partial
    # (the ratio then stays above e^(kh), which is still rounded down only to kh).
    with np.errstate(invalid="ignore", over="ignore"):
        c_up = np.exp(np.minimum(log_need - log_room_up + slack, 700.0))
        c_down = np.exp(np.minimum(log_excess - log_room_down - slack, 700.0))
    want_up = np.isfinite(log_need) & np.isfinite(log_room_up) & (c_up <= _MAX_BORROW)
    want_down = np.isfinite(log_excess) & np.isfinite(log_room_down)
    c_up = np.where(want_up, c_up, 0.0)
    c_down = np.where(want_down, np.minimum(c_down, 1.0), 0.0)
    # requests on cell j: from j + 1 (down-borrowing) and from j - 1 (up-borrowing); when they
    # exceed the whole cell both are scaled down
    from_above = np.append(c_down[1:], 0.0)
    from_below = np.insert(c_up[:-1], 0, 0.0)
    requested = from_above + from_below
    scale = np.where(requested > 1.0, 1.0 / np.where(requested > 1.0, requested, 1.0), 1.0)
    reserved_above = from_above * scale  # fraction of cell j kept for cell j + 1
    reserved_below = from_below * scale  # fraction of cell j kept for cell j - 1
    share = np.maximum(1.0 - reserved_above - reserved_below, 0.0)  # a_j
    # what each borrower takes
    avail_down = np.insert(reserved_above[:-1], 0, 0.0)  # of cell k - 1, for cell k
    avail_up = np.append(reserved_below[1:], 0.0)  # of cell k + 1, for cell k
    take_down = np.minimum(avail_down, c_down * share)
    up_ok = want_up & (avail_up >= c_up * share * (1.0 - 1e-12))
    take_up = np.where(up_ok, c_up * share, 0.0)
    # unused reserves are rounded down with their cell
    taken_by_next = np.append(take_down[1:], 0.0)
    taken_by_prev = np.insert(take_up[:-1], 0, 0.0)
    junk = np.maximum(reserved_above - taken_by_next, 0.0) + np.maximum(reserved_below - taken_by_prev, 0.0)
    # a cell whose ratio may be below e^(kh) and that could not borrow goes down a step
    on_grid = np.isneginf(log_need) | up_ok
    with np.errstate(divide="ignore"):
        own = np.log(share) + p_lo
        from_next = np.log(take_up) + next_p_lo
        prev_p_lo = np.insert(p_lo[:-1], 0, -math.inf)
        from_prev = np.log(take_down) + prev_p_lo
        log_junk = np.log(junk) + p_lo
    outcome = log_add(log_add(own, from_next), from_prev)
    log_m = np.where(on_grid, outcome, -math.inf)
    down_one = log_add(np.where(on_grid, -math.inf, outcome), log_junk)  # to index k - 1
    log_m[:-1] = log_add(log_m[:-1], down_one[1:])  # index 0's part is dropped
    # the top tail: what the last cell did not borrow is rounded down to k_hi h (or left to
    # the caller, who puts it on a coarser grid)
    used = min(float(take_up[-1]), 1.0)
    if tail_to_top and np.isfinite(top_p_lo):
        rest_top = top_p_lo + math.log1p(-used) if used < 1.0 else -math.inf
        log_m[-1] = float(log_add(np.array(log_m[-1]), np.array(rest_top)))
    log_m = log_m - 4.0 * U * (1.0 + finite_abs(log_m))
    with np.errstate(invalid="ignore", over="ignore"):
        gap = np.exp(p_hi) - np.exp(p_lo)
    gap = np.where(np.isnan(gap), 0.0, gap)
    if tail_to_top and np.isfinite(top_p_hi):
        gap[-1] += max(math.exp(top_p_hi) - (math.exp(top_p_lo) if np.isfinite(top_p_lo) else 0.0), 0.0)
    return log_m, gap, used


def _lower_step(h, k_lo, grid, lp, lpl, lq, lql, lam, tail_to_top: bool = True):
    log_m, gap, used = _lower_masses(grid, lp, lpl, lq, lql, h, tail_to_top)
    measure = _tilt("lower", log_m, grid, h, k_lo, lam)
    # parts of cell k are assigned to (k-1) h, kh or (k+1) h: weight its gap by e^(lam (k+1) h)
    with np.errstate(over="ignore", invalid="ignore"):
        tilted_gap = gap * np.exp(lam * (grid + h) - measure.log_z)
    tilted_gap = np.where(np.isnan(tilted_gap), math.inf, tilted_gap)
    measure.deficiency = float(tilted_gap.sum()) * (1.0 + 1e-12)
    measure.borrowed_from_tail = used
    return measure


def _tilt(kind: str, log_m: np.ndarray, grid: np.ndarray, h: float, k_lo: int, lam: float) -> Tilted:
    """Tilt log masses by e^(lam s) and normalise; the rounding of e^x counts into err (S5)."""
    if np.isnan(log_m).any():
        raise FloatingPointError("nan in the discretised masses")
    finite = np.isfinite(log_m)
    if not finite.any():
        raise ValueError("the discretised privacy loss distribution is empty")
    log_t = np.where(finite, log_m + lam * grid, -math.inf)
    top = float(log_t[finite].max())
    with np.errstate(under="ignore"):
        t = np.exp(log_t - top)
    log_z = top + math.log(float(t.sum()))
    t = t / t.sum()
    # exp of an argument with absolute error u(|log m| + |lam s| + |top|) * 4
    arg_err = 4.0 * U * (np.abs(np.where(finite, log_m, 0.0)) + np.abs(lam * grid) + abs(top) + 1.0)
    err = float((t * np.expm1(arg_err)).sum()) + 4.0 * U
    # values flushed to zero by exp underflow are below 1e-300 relative each
    err += float((~finite).sum() * 0.0 + (t == 0.0).sum()) * 1e-300
    return Tilted(kind=kind, lam=lam, h=h, k0=k_lo, t=t, log_z=log_z, log_z_err=4.0 * U * (abs(log_z) + 1.0), err=err)


# --------------------------------------------------------------------------------------------
# Composition (S5)
# --------------------------------------------------------------------------------------------


def _fast_length(n: int) -> int:
    """The smallest 2^a 3^b 5^c >= n: FFT lengths pocketfft handles at full speed, with less
    zero padding than the next power of two (which wastes a quarter on average)."""
    best = 1 << (n - 1).bit_length()
    five = 1
    while five < best:
        three = five
        while three < best:
            length = three
            while length < n:
                length *= 2
            best = min(best, length)
            three *= 3
        five *= 5
    return best


def _fft_error_l1(n_fft: int, a: np.ndarray, b: np.ndarray) -> float:
    """L1 bound on the rounding error of the FFT convolution of a and b (S5).

    The 2-norm bound of an FFT-based convolution c = F^-1(F a . F b) is
    gamma (||a||_2 ||b||_1 + ||a||_1 ||b||_2) with gamma = 3 log2(n) eta + 8u: each of the three
    transforms contributes log2(n) eta relative to its input (Higham Thm 24.2 for radix 2; the
    radix-3 and -5 passes of a 2^a 3^b 5^c length are within the same margin, and the test
    measures it), and |F a|_inf <=
    ||a||_1 turns the pointwise product into the stated norms. The L1 norm is at most sqrt(n)
    times the 2-norm.
    """
    gamma = 3.0 * math.log2(n_fft) * _FFT_ETA + 8.0 * U
    na1, nb1 = float(np.abs(a).sum()), float(np.abs(b).sum())
    na2, nb2 = float(np.sqrt((a * a).sum())), float(np.sqrt((b * b).sum()))
    return math.sqrt(n_fft) * gamma * (na2 * nb1 + na1 * nb2)


def convolve(a: Tilted, b: Tilted) -> Tilted:
    """The composition a * b (same kind, tilt and grid step)."""
    if a.kind != b.kind or a.lam != b.lam or a.h != b.h:
        raise ValueError("convolve needs measures of the same kind, tilt and grid step")
    n = len(a.t) + len(b.t) - 1
    if len(a.t) * len(b.t) < _DIRECT_CONVOLUTION_BELOW:
        work.charge(len(a.t) * len(b.t))
        c = np.convolve(a.t, b.t)
        # each output is a sum of at most min(len) products: gamma_n sum |a_i| |b_j|
        m = min(len(a.t), len(b.t))
        fresh = 1.01 * m * U * float(np.abs(a.t).sum()) * float(np.abs(b.t).sum())
    else:
        n_fft = _fast_length(n)
        work.charge(work.fft_cost(n_fft))
        fa = np.fft.rfft(a.t, n_fft)
        fb = fa if b is a else np.fft.rfft(b.t, n_fft)
        c = np.fft.irfft(fa * fb, n_fft)[:n]
        fresh = _fft_error_l1(n_fft, a.t, b.t)
    a1 = float(np.abs(a.t).sum())
    b1 = float(np.abs(b.t).sum())
    err = fresh + a.err * b1 + a1 * b.err + a.err * b.err
    total = float(c.sum())
    if not total > 0.0:
        raise FloatingPointError("composition lost all mass")
    c /= total
    err = err / total + 2.0 * U
    log_s = math.log(total)
    log_z = a.log_z + b.log_z + log_s
    log_z_err = a.log_z_err + b.log_z_err + 4.0 * U * (abs(log_z) + abs(a.log_z) + abs(log_s) + 1.0)
    out = Tilted(
        kind=a.kind, lam=a.lam, h=a.h, k0=a.k0 + b.k0, t=c, log_z=log_z, log_z_err=log_z_err, err=err,
        steps=a.steps + b.steps,
    )
    if a.kind == "upper":
        ma, mb = math.exp(a.log_mass), math.exp(b.log_mass)
        # (finite_a + inf_a)(finite_b + inf_b): the inf part is at most inf_a M_b + M_a inf_b
        out.inf_mass = (a.inf_mass * mb + ma * b.inf_mass) * (1.0 + 8.0 * U)
        out.log_mass = a.log_mass + b.log_mass + math.log1p(a.inf_mass * b.inf_mass / (ma * mb)) + 8.0 * U
        out.drop_rel = a.drop_rel + b.drop_rel
        out.drop_mass = a.drop_mass + b.drop_mass
        if a.log_theta_mgf is not None and b.log_theta_mgf is not None:
            out.log_theta_mgf = a.log_theta_mgf + b.log_theta_mgf + 1e-12
    else:
        # true = represented + D; true_a * true_b - rep_a * rep_b = D_a * true_b + rep_a * D_b
        out.deficiency = (a.deficiency * (b1 + b.err + b.deficiency) + (a1 + a.err) * b.deficiency) / total * (1 + 8 * U)
    return out


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
        err = m.err * norm + 4.0 * U * float(np.abs(t).sum()) * max(norm, 1.0)
        out = replace(m, t=even, k0=k0 // 2, h=2.0 * h, err=err)
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
        err = m.err * norm + 8.0 * U * float(np.abs(t).sum())
        out = replace(m, t=even, k0=k0 // 2, h=2.0 * h, err=err, deficiency=m.deficiency * norm)
    out.log_z = m.log_z + shift
    total = float(out.t.sum())
    out.t = out.t / total
    out.err = out.err / total + 2.0 * U
    if out.kind == "lower":
        out.deficiency = out.deficiency / total
    out.log_z_err = m.log_z_err + 4.0 * U * (abs(out.log_z) + shift + 1.0)
    out.log_z = out.log_z + math.log(total)
    return _trim(out)


def _trim(m: Tilted) -> Tilted:
    """Drop exact zeros at both ends (no mass moves)."""
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
    if x.kind != y.kind or x.lam != y.lam or x.h != y.h:
        raise ValueError("add needs measures of the same kind, tilt and grid step")
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
        deficiency=wx * x.deficiency + wy * y.deficiency,
        inf_mass=x.inf_mass + y.inf_mass,
        drop_rel=x.drop_rel + y.drop_rel,
        drop_mass=x.drop_mass + y.drop_mass,
        log_mass=float(np.logaddexp(x.log_mass, y.log_mass)),
        log_theta_mgf=(np.logaddexp(x.log_theta_mgf, y.log_theta_mgf)
                       if x.log_theta_mgf is not None and y.log_theta_mgf is not None else None),
        steps=max(x.steps, y.steps),
    )
    return _renormalise(out, out)


def piece(m: Tilted, start: int, stop: int) -> Tilted:
    """Bins [start, stop) of m as a measure of their own (a layer); the error bounds of the
    whole are kept (they bound the error of any part); whole-measure quantities are dropped."""
    out = bare(m)
    out = replace(out, t=m.t[start:stop].copy(), k0=m.k0 + start)
    return _renormalise(out, m)


def coarsen_to(m: Tilted, h: float) -> Tilted:
    """m coarsened (S3/S4) until its grid step is h (a power-of-two multiple of m.h)."""
    while m.h < h:
        m = coarsen(m)
    return m


def truncate(m: Tilted, *, log_inf_budget: float, log_rho_budget: float, multiplicity: int,
             cap: bool = True, floor: bool = True) -> Tilted:
    """Cut the window to where the measure matters (S3 for the upper end, S6 for the lower).

    Upper end: the lowest grid point above which the untilted mass, computed plus its error
    bound, is at most exp(log_inf_budget); that mass moves to +inf (upper, a rounding up) or
    is dropped (lower). Lower end, kind upper: the highest grid point f with
    multiplicity * nu(f) e^(lam f) / MGF <= exp(log_rho_budget), nu(f) the Chernoff bound
    min(M, min_theta e^(theta f) E[e^(-theta S)]) on the mass below f; that mass is dropped and
    the bound recorded (S6).
    Lower end, kind lower: bins whose tilted mass sums (from below) to at most
    exp(log_rho_budget)/multiplicity are dropped (dropping only lowers the lower bound).
    """
    t = m.t
    n = len(t)
    lam, h = m.lam, m.h
    s = m.losses
    peak = int(np.argmax(t))
    # --- upper end: untilted mass above s_i, relative to the budget, in linear space ---
    with np.errstate(divide="ignore"):
        expo = np.log(np.where(t > 0.0, t, 1.0)) - lam * s + (m.log_z - log_inf_budget)
    # (clipped: a value above e^300 fails the test as surely as an infinite one)
    expo = np.where(t > 0.0, np.minimum(expo, 300.0), -math.inf)
    suffix = np.cumsum(np.exp(expo)[::-1])[::-1]
    above = np.append(suffix[1:], 0.0)  # sum over j > i
    # error of the moved bins: weights exp(log_z - lam s_j) are largest at j = i + 1. Dropping
    # mass is safe for a lower bound whatever its size, so there only the computed mass counts.
    if m.kind == "upper":
        err_term = np.exp(np.minimum(m.log_z - lam * (s + h) - log_inf_budget, 300.0)) * m.err
    else:
        err_term = np.zeros(n)
    ok = above + err_term <= 1.0
    cut = n - 1
    moved = 0.0
    if cap and ok[peak:].any():
        cut = peak + int(np.argmax(ok[peak:]))
        if cut < n - 1:
            moved = float(above[cut] + err_term[cut]) * math.exp(log_inf_budget) * (1.0 + 4.0 * U * n)
    # --- lower end ---
    start = 0
    drop_rel = drop_mass = 0.0
    if not floor:
        pass
    elif m.kind == "upper":
        kept = float(t[: cut + 1].sum()) - m.err
        if kept > 0.0 and peak > 0:
            base = -m.log_z - math.log(kept) + math.log(multiplicity)

            def lhs(i: int) -> tuple[float, float]:
                log_nu = m.log_mass
                if m.log_theta_mgf is not None:
                    log_nu = min(log_nu, float((THETAS * float(s[i]) + m.log_theta_mgf).min()))
                return log_nu + lam * float(s[i]) + base, log_nu

            # lhs increases with i; find the largest i <= peak with lhs <= budget
            lo_i, hi_i = -1, peak + 1
            while hi_i - lo_i > 1:
                mid = (lo_i + hi_i) // 2
                if lhs(mid)[0] <= log_rho_budget:
                    lo_i = mid
                else:
                    hi_i = mid
            if lo_i > 0:
                start = lo_i
                value, log_nu = lhs(start)
                drop_rel = math.exp(value)  # multiplicity * rho
                drop_mass = multiplicity * math.exp(log_nu)
    else:
        # only tightness is at stake: a dropped tilted weight w lowers delta by at most
        # kappa e^(-lam eps) Z w, a part w of the Chernoff bound
        limit = _LOWER_DROP / multiplicity
        cumulative = np.cumsum(t[:peak])
        fine = np.flatnonzero(cumulative <= limit)
        if len(fine):
            start = int(fine[-1]) + 1
    if start == 0 and cut == n - 1:
        return m
    out = replace(m, t=t[start : cut + 1].copy(), k0=m.k0 + start)
    if m.kind == "upper":
        out.inf_mass = m.inf_mass + moved
        out.drop_rel = m.drop_rel + drop_rel
        out.drop_mass = m.drop_mass + drop_mass
    return _renormalise(out, m)


def _renormalise(out: Tilted, before: Tilted) -> Tilted:
    total = float(out.t.sum())
    out.t /= total
    out.err = out.err / total + 2.0 * U
    if out.kind == "lower":
        out.deficiency = out.deficiency / total
    out.log_z_err = before.log_z_err + 4.0 * U * (abs(before.log_z) + 1.0)
    out.log_z = before.log_z + math.log(total)
    return out


# --------------------------------------------------------------------------------------------
# The privacy profile of a discretised measure
# --------------------------------------------------------------------------------------------


def _kappa(lam: float) -> float:
    """sup_{y > 0} e^(-lam y) (1 - e^(-y)) = lam^lam / (lam + 1)^(lam + 1)."""
    return math.exp(lam * math.log(lam / (lam + 1.0)) - math.log(lam + 1.0)) if lam > 0 else 1.0


def _tail_sums(m: Tilted, index: int) -> tuple[float, float]:
    """(sum_{j >= index} t_j e^(-lam (s_j - s_index)), same with lam + 1), t_j > 0 only."""
    t = m.t[index:]
    y = np.arange(len(t)) * m.h
    t = np.where(t > 0.0, t, 0.0)
    return float(t @ np.exp(-m.lam * y)), float(t @ np.exp(-(m.lam + 1.0) * y))


def _bound_in_cell(m: Tilted, index: int, sums: tuple[float, float], eps: float) -> float:
    """delta_bound(m, eps) for eps with exactly the bins j >= index above eps.

    With A = sum_{j >= index} t_j e^(-lam s_j) and B = sum t_j e^(-(lam+1) s_j) the profile is
    inf + Z (A - e^eps B): the tilted sums are taken relative to s_index, so that
    Z A = exp(log_z - lam s_index) * sums[0] never overflows where it matters.
    """
    s_index = (m.k0 + index) * m.h
    a, b = sums
    log_scale = m.log_z - m.lam * s_index
    core = 0.0
    if a > 0.0:
        # Z (A - e^eps B) = e^(log_scale) (a - e^(eps - s_index) b), clipped at zero
        inner = a - math.exp(eps - s_index) * b
        if inner > 0.0:
            core = math.exp(min(log_scale + math.log(inner), 700.0))
    value = core + (m.inf_mass if m.kind == "upper" else 0.0)
    err = _error_terms(m, eps, value)
    if m.kind == "upper":
        return min(1.0, value + err)
    return max(0.0, value - err)


def _error_terms(m: Tilted, eps: float, value: float) -> float:
    """S5 and S6 terms, the error of Z, and the rounding of the sums (len(t) u relative)."""
    kappa = _kappa(m.lam)
    base = kappa * m.err
    if m.kind == "upper":
        if m.drop_rel >= 0.5:
            return math.inf
        base += kappa * m.drop_rel * (1.0 + m.err) / (1.0 - m.drop_rel)
    scaled = math.exp(min(m.log_z - m.lam * eps, 700.0)) * base if base > 0.0 else 0.0
    extra = 2.0 * m.drop_mass * m.inf_mass if m.kind == "upper" else 0.0
    return scaled + extra + value * (math.expm1(m.log_z_err) + 8.0 * U * len(m.t))


def _first_above(m: Tilted, eps: float) -> int:
    """Index of the first bin with loss > eps (len(t) if none)."""
    k = math.floor(eps / m.h) + 1  # smallest grid index with k h > eps
    return int(min(max(k - m.k0, 0), len(m.t)))


def delta_bound(m: Tilted, eps: float) -> float:
    """Certified delta(eps): an upper bound for kind upper, a lower bound for kind lower."""
    index = _first_above(m, eps)
    if index >= len(m.t):
        return _bound_in_cell(m, len(m.t), (0.0, 0.0), eps)
    return _bound_in_cell(m, index, _tail_sums(m, index), eps)


def epsilon_bound(m: Tilted, delta: float) -> float:
    """A certified bound on the smallest eps >= 0 with delta(eps) <= delta.

    upper kind: the smallest eps >= 0 with delta_bound(m, eps) <= delta (inf if none): there
    the true delta is at most delta. delta_bound is non-increasing in eps here, so bisection
    over the bins brackets the answer in one grid cell, where the set of bins above eps is
    fixed and the bound is a smooth function of eps (`_bound_in_cell`), solved by bisection.

    lower kind: the largest eps with delta_bound(m, eps) > delta (0 if none): the true delta
    exceeds delta there, hence at every smaller eps, so the true epsilon is at least that. The
    lower bound need not be monotone (its error term grows like e^(-lam eps) away from the
    tilt point), so it is evaluated at every grid point and the last crossing is refined.
    """
    if m.kind == "lower":
        return _epsilon_lower(m, delta)
    if delta_bound(m, 0.0) <= delta:
        return 0.0
    s = m.losses
    n = len(s)
    # past the last bin only the +inf mass and the error terms remain
    if _bound_in_cell(m, n, (0.0, 0.0), float(s[-1])) > delta:
        return math.inf
    # For eps in I_i = [s_{i-1}, s_i) exactly the bins j >= i lie above eps. The root lies in
    # the I_i of the largest i whose left end still has bound > delta.
    first = _first_above(m, 0.0)
    cache: dict[int, tuple[float, float]] = {}

    def sums(i: int) -> tuple[float, float]:
        if i >= n:
            return (0.0, 0.0)
        if i not in cache:
            cache[i] = _tail_sums(m, i)
        return cache[i]

    def f_left(i: int) -> float:
        eps_left = max(0.0, float(s[i - 1])) if i >= 1 else 0.0
        return _bound_in_cell(m, i, sums(i), eps_left)

    lo_i, hi_i = first, n  # f_left(first) > delta (eps = 0 fails), f_left(n) <= delta (checked)
    while hi_i - lo_i > 1:
        mid_i = (lo_i + hi_i) // 2
        if f_left(mid_i) > delta:
            lo_i = mid_i
        else:
            hi_i = mid_i
    i = lo_i
    low = max(0.0, float(s[i - 1])) if i >= 1 else 0.0
    high = float(s[i])
    cell = sums(i)
    for _ in range(100):
        mid = 0.5 * (low + high)
        if not low < mid < high:
            break
        if _bound_in_cell(m, i, cell, mid) > delta:
            low = mid
        else:
            high = mid
    return high


def _epsilon_lower(m: Tilted, delta: float) -> float:
    """The largest grid-refined eps >= 0 where the lower bound of delta exceeds delta."""
    s = m.losses
    n = len(s)
    t = np.where(m.t > 0.0, m.t, 0.0)
    # a_i = sum_{j > i} t_j e^(-lam (s_j - s_i)), b_i likewise with lam + 1, via log-cumsums
    with np.errstate(divide="ignore"):
        log_t = np.log(t)
    la = np.logaddexp.accumulate((log_t - m.lam * s)[::-1])[::-1]
    lb = np.logaddexp.accumulate((log_t - (m.lam + 1.0) * s)[::-1])[::-1]
    la = np.append(la[1:], -math.inf) + m.lam * s  # bins strictly above s_i
    lb = np.append(lb[1:], -math.inf) + (m.lam + 1.0) * s
    # value at eps = s_i: exp(log_z - lam s_i) (a_i - b_i)
    with np.errstate(invalid="ignore", over="ignore"):
        inner = np.exp(la) * (-np.expm1(np.minimum(lb - la, 0.0)))
        value = np.exp(np.minimum(m.log_z - m.lam * s, 700.0)) * np.where(np.isfinite(la), inner, 0.0)
    kappa = _kappa(m.lam)
    err = np.exp(np.minimum(m.log_z - m.lam * s, 700.0)) * kappa * m.err
    bound = value - err - value * (math.expm1(m.log_z_err) + 8.0 * U * n)
    above = np.flatnonzero((bound > delta) & (s >= 0.0))
    if len(above) == 0:
        # perhaps only between 0 and the first positive grid point
        return 0.0
    i = int(above[-1])
    if i == n - 1:
        return float(s[i])
    # refine inside [s_i, s_{i+1}): bins j >= i + 1 are above eps there
    cell = _tail_sums(m, i + 1)
    low, high = float(s[i]), float(s[i + 1])
    for _ in range(100):
        mid = 0.5 * (low + high)
        if not low < mid < high:
            break
        if _bound_in_cell(m, i + 1, cell, mid) > delta:
            low = mid
        else:
            high = mid
    return low
