"""S4 of docs/pld-soundness.md: the lower measure's masses on the grid, from a garbling of the
pair. Centred cells are outcomes of a coarsening of the pair; each is moved onto its grid point
by merging in part of a neighbour (`lower_masses`), and a cell at an end of the support is
first merged into the next one (`_merge_edges`). Merging outcomes, or parts of them chosen at
random, is a post-processing, so every composition of the result is dominated by the true
composition. `discretise` tilts the masses into a measure.
"""

from __future__ import annotations

import math

import numpy as np

from dpcalc.core.pld.measure import U
from dpcalc.core.special_array import finite_abs, log_add, log_slack, log_sub

# The largest fraction of the next cell that the lower-bound construction may need to lift a
# cell's likelihood ratio onto the grid (see `lower_masses`); beyond it the cell is rounded down.
_MAX_BORROW = 1.0


def _merge_edges(grid: np.ndarray, p_lo: np.ndarray, p_hi: np.ndarray, q_hi: np.ndarray,
                 top_empty: bool) -> None:
    """Merge a cell at an end of the support into its neighbour, in place, where that lets the
    borrowing of `lower_masses` place it (merging two outcomes is a garbling, S4).

    The lowest cell with mass has no lower neighbour to lend it ratio: when its ratio lies
    above its grid point it would be rounded down by up to h/2. For a subsampled mechanism the
    pile of losses just above log(1 - p) makes that first-order cost a large part of the
    tilted weight (p = 1e-4, sigma = 0.8: about 1.4e-6 of log E[e^(lam L)] per step, 1.4 over
    1e6 steps). Merged with the next cell it reaches that cell's grid point by borrowing from
    the cell after it, which costs O(h^2). Likewise the highest cell with mass, whose ratio
    lies below its grid point and which has no upper neighbour to borrow from, would go down a
    whole step; merged with the cell below it is placed there. The decisions use the bounds'
    central values only: either choice is sound.
    """
    finite = np.flatnonzero(np.isfinite(p_hi))
    if len(finite) < 3:
        return
    first, last = int(finite[0]), int(finite[-1])
    if first + 2 < len(grid) and p_lo[first] > grid[first] + q_hi[first]:
        g = grid[first + 1]
        merged_p = np.logaddexp(p_lo[first], p_lo[first + 1])
        merged_q = np.logaddexp(q_hi[first], q_hi[first + 1])
        need = math.exp(g + merged_q) - math.exp(merged_p)
        room = math.exp(p_lo[first + 2]) - math.exp(g + q_hi[first + 2])
        if need <= 0.5 * room:
            _merge_into(first, first + 1, p_lo, p_hi, q_hi)
            if last == first:
                return
    if top_empty and last >= 2 and last - 1 > first and p_lo[last] < grid[last] + q_hi[last]:
        g = grid[last - 1]
        merged_p = np.logaddexp(p_lo[last], p_lo[last - 1])
        merged_q = np.logaddexp(q_hi[last], q_hi[last - 1])
        if merged_p >= g + merged_q:
            _merge_into(last, last - 1, p_lo, p_hi, q_hi)


def _merge_into(source: int, target: int, p_lo: np.ndarray, p_hi: np.ndarray, q_hi: np.ndarray) -> None:
    """Add the log masses of cell `source` to cell `target` (bounds of a sum are sums of bounds;
    the rounding of the sum moves the lower bound down and the upper bounds up)."""
    for values, sign in ((p_lo, -1.0), (p_hi, 1.0), (q_hi, 1.0)):
        total = np.logaddexp(values[source], values[target])
        values[target] = total + sign * 4.0 * U * (1.0 + abs(total))
        values[source] = -math.inf


def lower_masses(grid: np.ndarray, lp: np.ndarray, lpl: np.ndarray, lq: np.ndarray, lql: np.ndarray, h: float,
                  tail_to_top: bool = True) -> tuple[np.ndarray, np.ndarray, float]:
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
    A cell reserves for its neighbours the fractions they may take (at most _MAX_BORROW of their
    own share each; the shares are found by a short fixed-point iteration, see below) and keeps
    the rest, a_k >= 1 - 2 _MAX_BORROW; unused reserves and cells that cannot borrow enough are
    rounded down to (k-1) h, which all their losses (>= kh - h/2) exceed; a cell with
    r_k >= e^(kh) that cannot borrow is rounded down to kh. The cells at the ends of the support
    have no neighbour beyond them and are first merged into the next one (`_merge_edges`). Masses are lower bounds; returns log masses and the per-cell deficiency
    (upper minus lower bound of P_k).
    """
    # (evaluated with few temporaries, in place: every quantity by the floating-point operations
    # of the formula in its comment, in that order, so the values are those of the plain
    # expressions; a long grid's temporaries are what this step's time goes to)
    count = len(grid)
    # centred cell k is halves 2(k-k_lo)+1, 2(k-k_lo)+2; "cell count" is the top half plus
    # the tail above (all at or above (k_hi + 1/2) h): it can lend but not borrow.
    # p_lo = log_add(lpl[1 + 2k], lpl[2 + 2k]) - 4 u, p_hi and q_hi likewise + 4 u
    lower_half, upper_half = slice(1, 2 * count, 2), slice(2, 2 * count + 1, 2)
    p_lo = log_add(lpl[lower_half], lpl[upper_half])
    p_lo -= 4.0 * U
    p_hi = log_add(lp[lower_half], lp[upper_half])
    p_hi += 4.0 * U
    q_hi = log_add(lq[lower_half], lq[upper_half])
    q_hi += 4.0 * U
    top_p_lo = float(lpl[2 * count + 1]) - 4.0 * U
    top_p_hi = float(lp[2 * count + 1]) + 4.0 * U
    top_q_hi = float(lq[2 * count + 1]) + 4.0 * U
    _merge_edges(grid, p_lo, p_hi, q_hi, top_empty=not np.isfinite(top_p_hi))
    slack = 8.0 * U

    grid_abs = finite_abs(grid)

    def widen(x: np.ndarray, sign: float) -> np.ndarray:
        # x + sign slack (1 + |x| + |grid|), in a new array
        out = finite_abs(x)
        out += 1.0
        out += grid_abs
        out *= sign * slack
        out += x
        return out

    def shifted_down(x: np.ndarray, last: float) -> np.ndarray:
        # x[k + 1] at k, `last` at the end: np.append(x[1:], last)
        out = np.empty(count)
        out[:-1] = x[1:]
        out[-1] = last
        return out

    def shifted_up(x: np.ndarray, first: float) -> np.ndarray:
        # x[k - 1] at k, `first` at 0: np.concatenate(([first], x[:-1]))
        out = np.empty(count)
        out[0] = first
        out[1:] = x[:-1]
        return out

    # e^(kh) Q bounds of the cell itself and of its neighbours
    eq_hi = widen(grid + q_hi, +1)
    next_p_lo = shifted_down(p_lo, top_p_lo)
    next_eq = shifted_down(q_hi, top_q_hi)
    next_eq += grid
    next_eq_hi = widen(next_eq, +1)
    # r_k < e^(kh) possible: need <= e^(kh) Q_k - P_k (upper bound)
    log_need = log_sub(eq_hi, p_lo)
    # P_{k+1} - e^(kh) Q_{k+1} (lower bound)
    log_room_up = log_sub(next_p_lo, next_eq_hi)
    # r_k > e^(kh) surely: excess >= P_k - e^(kh) Q_k (lower bound), where log_need is -inf
    # (np.where(np.isneginf(log_need), log_sub(p_lo, eq_hi), -inf), log_sub there only)
    surely = np.isneginf(log_need)
    log_excess = np.full(count, -math.inf)
    log_excess[surely] = log_sub(p_lo[surely], eq_hi[surely])
    # e^(kh) Q_{k-1} - P_{k-1} (upper bound)
    prev_eq = shifted_up(q_hi, -math.inf)
    prev_eq += grid
    prev_p_lo = shifted_up(p_lo, -math.inf)
    log_room_down = log_sub(widen(prev_eq, +1), prev_p_lo)
    # Wanted fractions of the neighbour, per unit of the cell's own share: up-borrowing must
    # be complete (else the cell is rounded down a whole step), down-borrowing may be partial
    # (the ratio then stays above e^(kh), which is still rounded down only to kh).
    with np.errstate(invalid="ignore", over="ignore"):
        # c_up = exp(min(log_need - log_room_up + slack, 700))
        c_up = log_need - log_room_up
        c_up += slack
        np.minimum(c_up, 700.0, out=c_up)
        np.exp(c_up, out=c_up)
        # c_down = exp(min(log_excess - log_room_down - slack, 700))
        c_down = log_excess - log_room_down
        c_down -= slack
        np.minimum(c_down, 700.0, out=c_down)
        np.exp(c_down, out=c_down)
    want_up = np.isfinite(log_need) & np.isfinite(log_room_up) & (c_up <= _MAX_BORROW)
    want_down = np.isfinite(log_excess) & np.isfinite(log_room_down)
    # c_up = where(want_up, c_up, 0); c_down = where(want_down, min(c_down, 1), 0)
    c_up[~want_up] = 0.0
    np.minimum(c_down, 1.0, out=c_down)
    c_down[~want_down] = 0.0
    # requests on cell j: from j + 1 (down-borrowing) and from j - 1 (up-borrowing), each the
    # borrower's fraction times its own share; when they exceed the whole cell both are scaled
    # down. The shares depend on the requests and the requests on the shares: the map from
    # shares to shares is antitone, so from shares of 1 its iterates alternate around the fixed
    # point; the reserves are taken from the fourth iterate, whose shares are at least the final
    # ones (the fifth), so every borrower finds its take reserved, and the unused reserves
    # (rounded down a step) are about c^5 of what reserving for full shares left. (Reserves
    # from the second iterate left c^3: at p = 1e-5, sigma = 0.5, h = 2^-15 that cost 7e-11 of
    # the mean loss a step, 3% of it, next to the pile where c ~ 0.05.)
    def reserve(borrower_share: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # from_above = (c_down share)[k + 1], 0 at the end; from_below = (c_up share)[k - 1], 0 at 0
        from_above = np.empty(count)
        np.multiply(c_down[1:], borrower_share[1:], out=from_above[:-1])
        from_above[-1] = 0.0
        from_below = np.empty(count)
        from_below[0] = 0.0
        np.multiply(c_up[:-1], borrower_share[:-1], out=from_below[1:])
        requested = from_above + from_below
        over = requested > 1.0
        if over.any():
            scale = np.where(over, 1.0 / np.where(over, requested, 1.0), 1.0)
            above, below = from_above * scale, from_below * scale
        else:  # a scale of 1 everywhere, and x * 1 = x exactly
            above, below = from_above, from_below
        # share = max(1 - above - below, 0)
        share = np.subtract(1.0, above, out=requested)
        share -= below
        return above, below, np.maximum(share, 0.0, out=share)

    share = np.ones(count)
    for _ in range(4):
        _, _, share = reserve(share)
    # fractions of cell j kept for cells j + 1 and j - 1, and its own share a_j
    reserved_above, reserved_below, share = reserve(share)
    # what each borrower takes
    avail_down = shifted_up(reserved_above, 0.0)  # of cell k - 1, for cell k
    avail_up = shifted_down(reserved_below, 0.0)  # of cell k + 1, for cell k
    take_down = np.multiply(c_down, share)
    np.minimum(avail_down, take_down, out=take_down)  # min(avail_down, c_down share)
    wanted_up = np.multiply(c_up, share)  # c_up share
    up_ok = want_up & (avail_up >= wanted_up * (1.0 - 1e-12))
    take_up = np.where(up_ok, wanted_up, 0.0)
    # unused reserves are rounded down with their cell:
    # junk = max(reserved_above - taken_by_next, 0) + max(reserved_below - taken_by_prev, 0)
    junk = reserved_above - shifted_down(take_down, 0.0)
    np.maximum(junk, 0.0, out=junk)
    unused_below = reserved_below - shifted_up(take_up, 0.0)
    junk += np.maximum(unused_below, 0.0, out=unused_below)
    # a cell whose ratio may be below e^(kh) and that could not borrow goes down a step
    on_grid = surely | up_ok
    with np.errstate(divide="ignore"):
        # own = log(share) + p_lo; from_next = log(take_up) + next_p_lo;
        # from_prev = log(take_down) + prev_p_lo; log_junk = log(junk) + p_lo
        own = np.log(share)
        own += p_lo
        from_next = np.log(take_up)
        from_next += next_p_lo
        from_prev = np.log(take_down)
        from_prev += prev_p_lo
        log_junk = np.log(junk)
        log_junk += p_lo
    with np.errstate(invalid="ignore", over="ignore"):  # (as `log_add`)
        # outcome = log_add(log_add(own, from_next), from_prev)
        outcome = np.logaddexp(own, from_next, out=own)
        np.logaddexp(outcome, from_prev, out=outcome)
    log_m = np.where(on_grid, outcome, -math.inf)
    # down_one = log_add(where(on_grid, -inf, outcome), log_junk), to index k - 1
    outcome[on_grid] = -math.inf
    down_one = log_add(outcome, log_junk)
    log_m[:-1] = log_add(log_m[:-1], down_one[1:])  # index 0's part is dropped
    # the top tail: what the last cell did not borrow is rounded down to k_hi h (or left to
    # the caller, who puts it on a coarser grid)
    used = min(float(take_up[-1]), 1.0)
    if tail_to_top and np.isfinite(top_p_lo):
        rest_top = top_p_lo + math.log1p(-used) if used < 1.0 else -math.inf
        log_m[-1] = float(log_add(np.array(log_m[-1]), np.array(rest_top)))
    log_m -= log_slack(log_m, 4.0 * U)  # log_m - 4 u (1 + |log_m|)
    with np.errstate(invalid="ignore", over="ignore"):
        gap = np.exp(p_hi)
        gap -= np.exp(p_lo)  # exp(p_hi) - exp(p_lo)
    gap[np.isnan(gap)] = 0.0
    if tail_to_top and np.isfinite(top_p_hi):
        gap[-1] += max(math.exp(top_p_hi) - (math.exp(top_p_lo) if np.isfinite(top_p_lo) else 0.0), 0.0)
    return log_m, gap, used
