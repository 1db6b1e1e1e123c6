"""One step of a mechanism's dominating pair on a grid: the upper measure by connecting the
dots (S1-S3 of docs/pld-soundness.md) and the lower measure by garbling (S4), both tilted and
normalised (`measure.Tilted`, S5), from bounds on the pair's cell masses (S2).

Sources: Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, "Connect the dots: tighter discrete
approximations of privacy loss distributions" (PETS 2022, arXiv 2207.04380), Sec. 4, for the
upper split; Koskela, Jalko, Honkela (AISTATS 2020, arXiv 1906.03049) for discretising a PLD.
"""

from __future__ import annotations

import math

import numpy as np

from dpcalc.core.pld import work
from dpcalc.core.pld.garbling import lower_masses
from dpcalc.core.pld.measure import Tilted, U
from dpcalc.core.pld.pairs import Pair
from dpcalc.core.pld.theta_table import theta_table
from dpcalc.core.special_array import CHUNK, finite_abs, log1mexp, log_add, log_slack


def _bounds(log_value: np.ndarray, rel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log of upper and lower bounds of a value known to relative error rel."""
    if log_value.ndim == 1 and len(log_value) > CHUNK:
        upper, lower = np.empty(len(log_value)), np.empty(len(log_value))
        for start in range(0, len(log_value), CHUNK):
            piece = slice(start, start + CHUNK)
            upper[piece], lower[piece] = _bounds(log_value[piece], rel[piece])
        return upper, lower
    with np.errstate(divide="ignore", invalid="ignore"):
        upper = log_value + np.log1p(rel) + 8.0 * U * (1.0 + finite_abs(log_value))
        lower = np.where(rel < 1.0, log_value + np.log1p(-np.minimum(rel, 1.0)) - 8.0 * U * (1.0 + finite_abs(log_value)), -math.inf)
    upper = np.where(np.isneginf(log_value), -math.inf, upper)
    lower = np.where(np.isneginf(log_value), -math.inf, lower)
    return upper, lower


def discretise_step(pair: Pair, h: float, k_lo: int, k_hi: int, lam: float,
                    drop_multiplicity: int, offset: float = 0.0) -> tuple[Tilted, Tilted]:
    """One step of `pair` on the grid {o + k h : k_lo <= k <= k_hi}, o = `offset` (0, or a
    multiple of h 2^-12 or of a coarser such unit: `offset.grid_offset`), tilted by exp(lam * loss).
    Below, "kh" stands for the grid point o + kh.

    Returns the upper measure (S1, S2) and the lower one (S4): both from the pair's cell masses, or
    the lower one from those of its attained pair when the pair itself is not attained (`Pair.attained`).

    upper: the cell [k h, (k+1) h) is split between its end points as in "connect the dots"
    (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022, arXiv 2207.04380, Sec. 4): a loss l in
    the cell goes to (k+1) h with probability (e^(-kh) - e^(-l))/(e^(-kh) - e^(-(k+1)h)), which
    keeps the Q-mass, so the split pair dominates the pair (merging the two halves back is a
    post-processing). Summed over the cell the upper part is
        U = (P(cell) - e^(kh) Q(cell)) / (1 - e^(-h)),
    computed from upper/lower bounds of the masses so that it can only be too large: moving
    mass up is a rounding up, which is safe (S3). Mass at or above k_hi h goes to +inf; mass
    below k_lo h is dropped and accounted for by S6 (none when k_lo h is below the support).

    lower: see `garbling.lower_masses`.
    """
    count = k_hi - k_lo + 1
    work.charge(work.DISCRETISE_COST * count)
    # half-grid edges e_j = (2 k_lo - 1 + j) h/2, j = 0 .. 2 count; cells: tail, halves, tail
    half_edges = _lift_first_cell(pair.attained(), offset + (2 * k_lo - 1 + np.arange(2 * count + 1)) * (0.5 * h))
    edges = np.concatenate(([-math.inf], half_edges, [math.inf]))
    # the upper measure from the pair's masses, the lower one from its attained pair's (`Pair.attained`)
    lp, lpl, lq, lql = _mass_bounds(pair, edges)
    Lp, Lpl, Lq, Lql = (lp, lpl, lq, lql) if pair.attained() is pair else _mass_bounds(pair.attained(), edges)
    # index 0: below e_0; 1 .. 2count: halves; 2count + 1: at or above e_{2count}
    grid = offset + (k_lo + np.arange(count)) * h
    upper = _upper_step(h, k_lo, grid, lp, lql, lam, drop_multiplicity)
    upper.log_theta_mgf = theta_table(upper)
    lower = _lower_step(h, k_lo, grid, Lp, Lpl, Lq, Lql, lam)
    return upper, lower


def discretise_upper_step(pair: Pair, h: float, k_lo: int, k_hi: int, lam: float,
                          drop_multiplicity: int) -> Tilted:
    """The upper measure of `discretise_step` alone, on the grid {k h} (no offset), from one mass
    per cell [k h, (k+1) h) instead of two halves (half the mass evaluations; a cell's bounds are
    at least as tight as the sum of its halves'): laid out as `_upper_step` reads the halves, each
    cell in its first half and nothing in its second."""
    count = k_hi - k_lo + 1
    work.charge(work.DISCRETISE_COST * count)
    edges = np.concatenate(([-math.inf], (k_lo + np.arange(count)) * h, [math.inf]))
    lp_cells, _, _, lql_cells = _mass_bounds(pair, edges)
    # cells: below k_lo h, [k h, (k+1) h) for k = k_lo .. k_hi - 1, at or above k_hi h
    lp = np.full(2 * count + 2, -math.inf)
    lql = np.full(2 * count + 2, -math.inf)
    lp[0::2], lql[0::2] = lp_cells, lql_cells
    grid = (k_lo + np.arange(count)) * h
    upper = _upper_step(h, k_lo, grid, lp, lql, lam, drop_multiplicity)
    upper.log_theta_mgf = theta_table(upper)
    return upper


def _lift_first_cell(pair: Pair, half_edges: np.ndarray) -> np.ndarray:
    """The half-cell edges with the upper edge of the lowest centred cell moved down, where that
    puts the cell's likelihood ratio at its grid point instead of above it (S4).

    The lowest cell with mass, [e, g + h/2) for the lower end e of the support in the centred
    cell of the grid point g, has no cell below to lend it a lower ratio: if its ratio r lies
    above e^g it is rounded down to g, a first-order cost of (log r - g) times its mass in every
    step. Where the pile of losses at e is wider than half a cell no grid offset avoids that
    (`offset.grid_offset`): p = 0.004, sigma = 0.61 put 17% of a step's mass 0.05 h above its point
    on the grid of step 2^-12, and its lower bound lagged 0.3% at T = 1e4. The cells of a garbling
    may be any partition of the losses, so the edge g + h/2 moves down to the point c in [g, g + h/2)
    where the ratio of [e, c) reaches e^g (from above, by three rounds of 64 cuts): the cell
    sits at its point, and [c, g + 3h/2), now with a lower ratio, lifts itself by borrowing from the
    cell above as every other cell does (`garbling.lower_masses`, O(h^2)). The edge lies inside the upper
    measure's cell [g, g + h), which is the union of the two halves whatever the edge, so the upper
    measure is unchanged. The choice of c affects accuracy only: any partition is a garbling.
    """
    end = pair.support[0]
    if not math.isfinite(end) or len(half_edges) < 7:
        return half_edges
    # centred cell i is [half_edges[2i], half_edges[2i + 2]), its grid point half_edges[2i + 1]
    i = int(np.searchsorted(half_edges[0::2], end, side="right")) - 1
    if i < 0 or 2 * i + 4 >= len(half_edges):
        return half_edges
    out = half_edges
    if end > float(half_edges[2 * i + 1]):
        # every loss of the cell lies above its point, so its ratio does too, by up to h/2: the
        # cell is emptied (its upper edge moved down to its point, inside the upper measure's
        # cell [g, g + h)) and its losses join the next cell, whose point lies above them all
        if 2 * i + 6 >= len(half_edges):
            return half_edges
        out = half_edges.copy()
        out[2 * i + 2] = half_edges[2 * i + 1]
        i += 1
    g, top = float(half_edges[2 * i + 1]), float(half_edges[2 * i + 2])

    def excess(cuts: np.ndarray) -> np.ndarray:  # log ratio of [e, c) minus g, for sorted cuts c
        masses = pair.cell_masses(np.concatenate(([-math.inf, end], cuts, [math.inf])))
        with np.errstate(invalid="ignore"):
            log_ratio: np.ndarray = (np.logaddexp.accumulate(masses.log_p[1:-1])
                                     - np.logaddexp.accumulate(masses.log_q[1:-1]) - g)
        return log_ratio

    # the ratio of [e, c) rises with c (what joins lies at c, above the ratio), from below g at
    # c = g when e < g (every loss below g; when e = g, an atom at e, the first cut reaches g and
    # the cell keeps little more than the atom): three rounds of 64 cuts each (one evaluation a
    # round) narrow the first cut whose ratio reaches g to 64^-3 of the half cell
    lo, hi = g, top
    for _ in range(3):
        cuts = np.linspace(lo, hi, 65)[1:]
        values = excess(cuts)
        reached = np.flatnonzero(values >= 0.0)
        if len(reached) == 0 or np.isnan(values[: reached[0]]).any():
            return out  # at or below its point at the top (it borrows), or no mass
        j = int(reached[0])
        lo, hi = (float(cuts[j - 1]) if j > 0 else lo), float(cuts[j])
    lifted: np.ndarray = out.copy()
    lifted[2 * i + 2] = hi
    return lifted


def _mass_bounds(pair: Pair, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """log of upper and lower bounds of the P- and Q-masses of the cells [edges[i], edges[i+1])."""
    cells = pair.cell_masses(edges)
    lp, lpl = _bounds(cells.log_p, cells.rel_p)
    lq, lql = _bounds(cells.log_q, cells.rel_q)
    return lp, lpl, lq, lql


def discretise_step_layers(pair: Pair, h: float, k_lo: int, k_cut: int, tail_step: float, j_hi: int,
                           lam: float, drop_multiplicity: int,
                           offset: float = 0.0) -> tuple[Tilted, Tilted, Tilted, Tilted | None]:
    """One step as two layers: the bulk on the grid h up to k_cut h, the tail on a grid of
    step H = tail_step (a power-of-two multiple of h, k_cut h a multiple of H) up to j_hi H;
    both grids shifted by `offset` (see `discretise_step`).

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
    half_edges = _lift_first_cell(pair.attained(), offset + (2 * k_lo - 1 + np.arange(2 * count + 1)) * (0.5 * h))
    coarse_halves = offset + (2 * j0 + 1 + np.arange(2 * tail_count + 1)) * (0.5 * H)
    edges = np.concatenate(([-math.inf], half_edges, coarse_halves, [math.inf]))
    # the upper layers from the pair's masses, the lower ones from its attained pair's (`Pair.attained`)
    lp, lpl, lq, lql = _mass_bounds(pair, edges)
    Lp, Lpl, Lq, Lql = (lp, lpl, lq, lql) if pair.attained() is pair else _mass_bounds(pair.attained(), edges)
    nb = 2 * count + 1  # cells 0 .. nb - 1: below, the bulk's halves; then the gap, coarse halves, top
    grid = offset + (k_lo + np.arange(count)) * h

    def rest(x: np.ndarray) -> float:
        return float(np.logaddexp.reduce(x))

    # bulk: everything at or above (k_cut + 1/2) h is "the tail" of the one-layer code
    upper = _upper_step(h, k_lo, grid, np.append(lp[:nb], rest(lp[nb:])), np.append(lql[:nb], rest(lql[nb:])), lam,
                        drop_multiplicity)
    blp = np.append(Lp[:nb], rest(Lp[nb:]))
    blq = np.append(Lq[:nb], rest(Lq[nb:]))
    blpl = np.append(Lpl[:nb], rest(Lpl[nb:]))
    blql = np.append(Lql[:nb], rest(Lql[nb:]))
    lower = _lower_step(h, k_lo, grid, blp, blpl, blq, blql, lam, tail_to_top=False)
    # tail part of the cell arrays: gap, 2 tail_count coarse halves, top
    gap = nb
    halves = nb + 1 + np.arange(2 * tail_count)
    top = nb + 1 + 2 * tail_count
    tail_grid = offset + np.arange(j0, j_hi + 1) * H
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

        def sl(x: np.ndarray) -> np.ndarray:
            out: np.ndarray = np.concatenate(([x[gap]], x[halves], [x[top]])) + log_keep
            return out

        t_lp, t_lpl, t_lq, t_lql = sl(Lp), sl(Lpl), sl(Lq), sl(Lql)
        centred = offset + (j0 + 1 + np.arange(tail_count)) * H
        log_m, gap_mass, _ = lower_masses(centred, t_lp, t_lpl, t_lq, t_lql, H, tail_to_top=True)
        # the gap [(k_cut + 1/2) h, (j0 + 1/2) H) is rounded down to j0 H
        log_lo = np.concatenate(([t_lpl[0]], log_m))
        log_lo = log_lo - log_slack(log_lo, 4.0 * U)
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
    upper.log_theta_mgf = np.logaddexp(theta_table(upper), theta_table(upper_tail))
    upper_tail.log_mass = upper.log_mass
    return upper, upper_tail, lower, lower_tail


def _connect_dots(left: np.ndarray, width: float, p_up: np.ndarray, q_low: np.ndarray) -> np.ndarray:
    """S1/S2: log masses at the points left[0], ..., left[-1] + width of the split cells.

    Cell i is [left[i], left[i] + width) with P-mass at most e^p_up[i] and Q-mass at least
    e^q_low[i]; its upper part U = (P - e^left Q)/(1 - e^-width) is bounded from above so that
    the mass put at each point, and above it, can only be too large.
    """
    # (with few temporaries: each quantity by the operations of the formula in its comment, in
    # that order, so the values are those of the plain expressions)
    # p_up = p_up + 4 u (1 + |p_up|); q_low = q_low - 4 u (1 + |q_low|) (new arrays)
    p_up = np.add(p_up, log_slack(p_up, 4.0 * U))
    margin = log_slack(q_low, 4.0 * U)
    q_low = np.subtract(q_low, margin, out=margin)
    # N / P(cell) = 1 - exp(left + log Q - log P) is largest for the smallest exponent
    with np.errstate(invalid="ignore"):
        exponent = left + q_low
        exponent -= p_up
    # exponent = exponent - 8 u (|left| + |q_low| + |p_up| + 1)
    slack = finite_abs(left)
    slack += finite_abs(q_low)
    slack += finite_abs(p_up)
    slack += 1.0
    slack *= 8.0 * U
    exponent -= slack
    # exponent = where(isnan(exponent), -inf, min(exponent, 0))
    unknown = np.isnan(exponent)
    np.minimum(exponent, 0.0, out=exponent)
    exponent[unknown] = -math.inf
    # log_share = min(log1mexp(exponent) - log(-expm1(-width)) + 8 u, 0): the up part is at
    # most the whole cell
    log_share = log1mexp(exponent)
    log_share -= math.log(-math.expm1(-width))
    log_share += 8.0 * U
    np.minimum(log_share, 0.0, out=log_share)
    log_up = p_up + log_share
    # log_down = where(isneginf(p_up), -inf, p_up + log1p(-exp(log_share)) + 4 u)
    with np.errstate(divide="ignore"):
        log_down = np.exp(log_share, out=log_share)
        np.negative(log_down, out=log_down)
        np.log1p(log_down, out=log_down)
        np.add(p_up, log_down, out=log_down)
        log_down += 4.0 * U
    log_down[np.isneginf(p_up)] = -math.inf
    log_m = np.full(len(left) + 1, -math.inf)
    log_m[:-1] = log_down
    log_m[1:] = log_add(log_m[1:], log_up)
    # log_m + 4 u (1 + |log_m|)
    log_m += log_slack(log_m, 4.0 * U)
    return log_m


def _upper_step(h: float, k_lo: int, grid: np.ndarray, lp: np.ndarray, lql: np.ndarray, lam: float,
                drop_multiplicity: int) -> Tilted:
    """S1-S3: the upper measure from the half-cell bounds (see `discretise_step`)."""
    count = len(grid)
    # pessimistic cell [k h, (k+1) h) for k = k_lo .. k_hi - 1 is halves 2(k-k_lo)+2, 2(k-k_lo)+3
    # in the 1-based half indexing of `edges` (index 0 is the tail below).
    # (as strided slices: halves 2, 4, .., 2 count - 2 and 3, 5, .., 2 count - 1)
    first_half, second_half = slice(2, 2 * count - 1, 2), slice(3, 2 * count, 2)
    p_up = log_add(lp[first_half], lp[second_half])  # upper bound of P(cell)
    q_low = log_add(lql[first_half], lql[second_half])  # lower bound of Q(cell)
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


def _lower_step(h: float, k_lo: int, grid: np.ndarray, lp: np.ndarray, lpl: np.ndarray, lq: np.ndarray,
                lql: np.ndarray, lam: float, tail_to_top: bool = True) -> Tilted:
    """S4: the lower measure from the centred-cell bounds (see `garbling.lower_masses`)."""
    log_m, gap, used = lower_masses(grid, lp, lpl, lq, lql, h, tail_to_top)
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
    # the grid is offset + (k_lo + i) h, each point exact (`Tilted.losses`), so is the difference
    offset = float(grid[0]) - k_lo * h
    return Tilted(kind=kind, lam=lam, h=h, k0=k_lo, t=t, log_z=log_z, log_z_err=4.0 * U * (abs(log_z) + 1.0), err=err,
                  offset=offset)

