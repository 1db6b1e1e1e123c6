"""Grid planning: how finely and over which window one step of a phase is discretised (`Plan`,
`step_measures`), from the tilt and the shares of delta the truncations may take (S3, S6 of
docs/pld-soundness.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from dpcalc.core.phases import count_as_float
from dpcalc.core.pld import discretise
from dpcalc.core.pld.layers import Layered, coarsen_bulk, single
from dpcalc.core.pld.model import PhaseModel
from dpcalc.core.pld.offset import grid_offset
from dpcalc.core.pld.pairs import Pair
from dpcalc.core.record import Value

# Share of delta that the mass moved to +inf by truncating upper tails may take, and the
# relative weight the dropped lower tails may have (S3, S6). Both are far below the accuracy.
INF_SHARE = 1e-5
_DROP_SHARE = 1e-9

# Grid steps, in bins per standard deviation of the privacy loss being discretised, at the
# default accuracy (they scale with 1/sqrt(accuracy): both bounds err by O(h^2)). The per-step
# lower bound is built on the finest grid and the upper bound on one twice as coarse (its
# connect-the-dots error is far smaller); a composed measure of n steps is coarsened while its
# step stays below sqrt(n) * sd / (bins per sd), the lower bound more finely since merging
# atoms loses more than splitting them. Tuned on the design card (see tests).
_STEP_BINS_PER_SD = 48.0
# A step's grid step is its ideal one, sd / (bins per sd), rounded down to m 2^e with m one of
# these mantissas (e an integer): every coarsening doubles the step and stays on the lattice of m.
# With powers of two alone (m = 1) the grid held 48 to 96 bins per sd, 69 on average; with
# m in {1, 1.5}, 48 to 72.
_MANTISSAS = (1.0, 1.5)
_UPPER_COARSE_BINS_PER_SD = 48.0
_LOWER_COARSE_BINS_PER_SD = 1536.0
# ... for runs of LOWER_COARSE_FULL steps or more. The lower measure's merges lose a little at
# every coarsening, and the losses of a run's many early copies add up, so shorter runs need a
# coarser composed grid than that to meet the same accuracy: a share (steps / LOWER_COARSE_FULL)^0.3
# of the bins, at least a quarter (`lower_coarse_share`). Measured on the 100-case grid: a quarter
# everywhere kept the accuracy up to T = 1e4 but cost a second or third grid at T = 1e6 (16 cases);
# half cost one at T = 1e6 (2 cases); with the share, no case and no run of a 100-case grid of
# intermediate lengths (1e3 to 3e6) needed another grid, the widest interval is 9.4e-4, and the
# design card does a third less work (its interval 6.5e-4 wide instead of 3.2e-4). Only for
# epsilon at one delta (`Plan.short_runs_coarser`, `accountant.attempt`): delta at epsilon 2 on
# the design card needed a second grid with it, and the attack-risk figures, read off a profile
# at many points, had their lower ends widened past the accuracy.
LOWER_COARSE_FULL = 1e6
_LOWER_COARSE_GROWTH = 0.3
_LOWER_COARSE_LEAST = 0.25
# ... and at most half, however long the run: the lower measure's coarsening rounded down 5-15% of
# the tilted mass at each step (a first-order loss) until its merges followed the chain of odd
# atoms (`lower.chain_shares`); with those, the 107 cases of benchmarks/pld_grid.py keep every
# lower bound at or above its value with the old merges at the full 1536 bins, and long runs
# compose half as many (a quarter moved one: p = 1e-5, sigma = 0.5, T = 1e7, by 2e-4 relative).
# Delta at one epsilon and profiles keep the full grid below LOWER_COARSE_LONG steps.
_LOWER_COARSE_MOST = 0.5
# Runs of LOWER_COARSE_LONG steps or more compose their lower measure more coarsely still:
# _LOWER_LONG_BINS bins per standard deviation at LOWER_COARSE_LONG steps, growing as
# (steps / LOWER_COARSE_LONG)^0.3, and at most the share above. With the chain merges a coarsening
# costs second order, and a long run's lower measure spends most of its work on grids it does
# not need: on the 107 cases of benchmarks/pld_grid.py this saved 11% of the work (the design card
# 32%, p = 1e-3, sigma = 5, T = 1e5 62%), every upper bound unchanged, no case needing another
# grid, and every lower bound still inside its interval from before the chain merges (with 64
# bins, five were not; from 1e3 steps on, at 96 bins, one Laplace run was not). Shorter runs keep
# the grid above: their lower measures cost little, and their lower bounds are those of that
# interval to the digit, which any coarser grid lowers (by 1e-9 to 1e-7 relative at T = 100).
LOWER_COARSE_LONG = 1e4
_LOWER_LONG_BINS = 96.0
# ... and twice as many for the other queries (delta at one epsilon, profiles read at many
# points: attack risk, trade-off curves; the shared composition of a sweep over T, `over_steps`),
# growing the same way up to the full grid. Measured on 40 runs of benchmarks/pld_grid.py
# (T >= 1e4, p < 1) and two corners, delta at eps = 1 and `risk`'s figures, against the engine
# before the chain merges: at 96 bins 27 of the 84 calls had a figure outside its interval
# there (by up to 2e-3 relative, past the accuracy at one FPR); at 192 bins 7, five of them
# shared with the full grid and by the same largest amounts (up to 3e-4, in upper ends, which the
# lower grid does not change), two by at most 8e-6; the full grid had 13 (up to 8e-4). The design
# card's delta at eps = 2 does half the work.
_PROFILE_LONG_BINS = 192.0
# Neither long-run grid applies to a widened step (`step_widened`), whose lower measure starts
# coarser: p = 1e-4, sigma = 0.6, T = 1e6 left its old interval with it (docs S4).
# Bins of one step's discretisation (its step h doubles until the window fits). At 2^17 the
# lower bound of small-noise runs stalled: p = 0.004, sigma = 0.5, T = 1e4 and p = 0.001,
# sigma = 0.8, T = 1e5 ended 0.25-0.6% wide (warned); at 2^18 both meet the default accuracy
# in about 2 s, and peak memory stays under 160 MiB (measured).
_MAX_STEP_BINS = 1 << 18

# One step is split into a fine bulk and a coarse tail layer (`layers`) when its window
# exceeds _SINGLE_LAYER_BINS bins; the tail layer gets about _TAIL_BINS bins. Moving tail
# weight by at most the tail's step may change delta by at most TAIL_SHARE of the Chernoff bound.
_SINGLE_LAYER_BINS = 4096
_TAIL_BINS = 2048
TAIL_SHARE = 1e-5
# A phase of at least LONG_RUN_STEPS steps keeps one layer when it fits in _MAX_STEP_BINS: the
# tail layer's coarse step and the rounding error it carries into the bulk at every merge grow
# with the number of steps (p = 0.004, sigma = 1.1: at T = 1e8 the interval was 0.12% wide with
# the tail layer and 0.08% in one layer; at T = 1e10 the lower bound was lost; both layers agree
# at T = 1e7, where one layer costs 40% more work). Its upper measure is also composed on a grid
# LONG_RUN_UPPER_FACTOR times finer (`power.Powers`): the tilt of a long run is small (0.03 at
# T = 1e9), and an error in log delta moves epsilon by that error over the tilt; the upper
# measure is the cheaper one (T = 1e9: its bound fell from 10824.8 to 10821.8 for 10% more work,
# and the first grid met the accuracy instead of the second).
LONG_RUN_STEPS = 1 << 25
LONG_RUN_UPPER_FACTOR = 4.0


# Grid indices are int64 in numpy: a window whose ends lie further out is not a grid's.
_MAX_INDEX = 2**62


class Plan(Value):
    """Tilt, budgets and grid choices of one composition."""

    lam: float
    log_inf_budget: float  # total share of delta allowed at +inf from truncation
    log_rho_budget: float  # total relative weight of dropped lower tails
    step_bins: float
    upper_coarse_bins: float
    lower_coarse_bins: float
    events: int
    min_step: float = 0.0  # steps finer than this are not needed (error <= steps * h)
    # short runs' lower measures on a coarser grid, long ones' on the coarsest (`lower_coarse_share`):
    # for epsilon at one delta; delta at one epsilon (its relative widths are some lam times those in
    # epsilon) and profiles (risk) keep the full grid for short runs and twice the bins for long ones
    short_runs_coarser: bool = False


def lower_coarse_share(steps: int, short_runs_coarser: bool = True, widened: bool = False) -> float:
    """The share of `Plan.lower_coarse_bins` a composition of `steps` steps keeps in its lower
    measure's composed grid: from LOWER_COARSE_LONG steps the long-run rule (_LOWER_LONG_BINS, or
    _PROFILE_LONG_BINS without `short_runs_coarser`) unless the step is `widened` (`step_widened`);
    otherwise a quarter to a half with `short_runs_coarser` (epsilon at one delta), the whole
    without. Any grid gives a sound lower measure (S4); this only trades accuracy for work."""
    count = count_as_float(steps)
    if count >= LOWER_COARSE_LONG and not widened:
        growth = float((count / LOWER_COARSE_LONG) ** _LOWER_COARSE_GROWTH)
        if not short_runs_coarser:
            return min(1.0, _PROFILE_LONG_BINS / _LOWER_COARSE_BINS_PER_SD * growth)
        return min(_LOWER_COARSE_MOST, _LOWER_LONG_BINS / _LOWER_COARSE_BINS_PER_SD * growth)
    if not short_runs_coarser:
        return 1.0
    return min(_LOWER_COARSE_MOST,
               max(_LOWER_COARSE_LEAST, float((count / LOWER_COARSE_FULL) ** _LOWER_COARSE_GROWTH)))


def make_plan(lam: float, estimate: float, delta: float | None, scale: float, inf_share: float, events: int,
              min_step: float) -> Plan:
    """The plan of a grid `scale` times finer than the default accuracy's, for the tilt `lam`
    and Chernoff `estimate` of one direction (`model.chernoff`)."""
    delta_scale = delta if delta is not None else math.exp(min(estimate, 0.0))
    return Plan(
        lam=lam,
        log_inf_budget=math.log(inf_share) + math.log(max(delta_scale, 1e-300)),
        log_rho_budget=math.log(_DROP_SHARE),
        step_bins=_STEP_BINS_PER_SD * scale,
        upper_coarse_bins=_UPPER_COARSE_BINS_PER_SD * scale,
        lower_coarse_bins=_LOWER_COARSE_BINS_PER_SD * scale,
        events=events,
        min_step=min_step / scale,
    )


def log_tail_above(pair: Pair, points: np.ndarray) -> np.ndarray:
    """log of upper bounds on P(c <= L < inf) for sorted points c. The atom at +inf (`Pair.inf_mass`)
    goes to +inf whatever the cap, so it is left out, with the margins the bounds put on it: this
    only places a cap or a window's end (moving mass to +inf is sound at any point, S3)."""
    cells = pair.cell_masses(np.append(points, math.inf))
    upper = cells.log_p + np.log1p(cells.rel_p) + 1e-12
    tails: np.ndarray = np.logaddexp.accumulate(upper[::-1])[::-1]
    if pair.inf_mass > 0.0:
        with np.errstate(divide="ignore"):
            tails = np.log(np.maximum(np.exp(tails) - pair.inf_mass * (1.0 + 1e-9), 0.0))
    return tails


def log_tail_below(pair: Pair, points: np.ndarray) -> np.ndarray:
    """log of upper bounds on P(L < c) for sorted points c."""
    cells = pair.cell_masses(np.concatenate(([-math.inf], points)))
    upper = cells.log_p + np.log1p(cells.rel_p) + 1e-12
    return np.logaddexp.accumulate(upper)


def tails(model: PhaseModel, above: bool, points: np.ndarray) -> np.ndarray:
    """`log_tail_above` (or, not `above`, `log_tail_below`) of the model's pair at `points`,
    remembered on the model (`PhaseModel.tails`): the exponential phase of `grid_search` evaluates
    the same points for the cap (`cap`), every grid's window (`step_window`) and each attempt, and
    a window on the same grid is searched again by the same points. The values are those of the
    call itself (read-only)."""
    key = (above, points.tobytes())
    found = model.tails.get(key)
    if found is None:
        found = log_tail_above(model.pair, points) if above else log_tail_below(model.pair, points)
        found.flags.writeable = False
        model.tails[key] = found
    return found


def grid_search(holds: Callable[[np.ndarray], np.ndarray], start: float, step: float, upward: bool, h: float) -> int:
    """A grid index k beyond `start` (above it if upward, else below) where holds(k h) is true,
    at most 1/64 of its distance from `start` (or one index) farther than the nearest such index.

    holds(points) -> boolean array; monotone: false near start, true far away. Exponential
    search in multiples of `step`, then a search over grid indices (65 points a round) that
    stops at that resolution: every caller places a window's end or a cap, where any point at
    which `holds` is true is sound and the nearest one only saves a few bins.
    """
    sign = 1.0 if upward else -1.0
    points = start + sign * step * (2.0 ** np.arange(0, 90) - 1.0)
    order = points if upward else points[::-1]
    ok = holds(order)
    ok = ok if upward else ok[::-1]
    if not ok.any():
        raise FloatingPointError("the tail of the privacy loss does not decay")
    i = int(np.argmax(ok))
    far = points[i]
    near = points[i - 1] if i > 0 else start
    if upward:
        bad, good = math.floor(near / h), math.ceil(far / h)
    else:
        bad, good = math.ceil(near / h), math.floor(far / h)
    if max(abs(bad), abs(good)) > _MAX_INDEX:
        # e.g. a target epsilon of 1e300: the window would need grid indices past int64
        raise FloatingPointError("the tail of the privacy loss lies beyond the grid's index range")
    start_index = start / h
    while abs(good - bad) > max(1.0, abs(good - start_index) / 64.0):
        ks = np.linspace(bad, good, 66)[1:-1].round().astype(np.int64)
        ks = np.sort(ks)
        ks = ks[np.concatenate(([True], np.diff(ks) != 0))]
        vals = holds(ks * h)
        if upward:
            passing = ks[vals]
            if len(passing):
                good = int(passing.min())
            failing = ks[~vals & (ks < good)]
            bad = int(failing.max()) if len(failing) else bad
        else:
            passing = ks[vals]
            if len(passing):
                good = int(passing.max())
            failing = ks[~vals & (ks > good)]
            bad = int(failing.min()) if len(failing) else bad
        if len(ks) == 0:
            break
    return int(good)




def cap(model: PhaseModel, log_inf_budget: float, events: int) -> float:
    """The loss above which one step's mass is moved to +inf (as `step_window` does)."""
    h = 2.0 ** math.floor(math.log2(model.sd / 4.0))
    log_iota = log_inf_budget - math.log(events) - math.log(model.steps)
    k = grid_search(lambda c: tails(model, True, c) <= log_iota, model.mean, model.sd, True, h)
    return k * h


def step_window(model: PhaseModel, h: float, plan: Plan) -> tuple[int, int]:
    """Grid indices [k_lo, k_hi] for one step of a phase (S3, S6 at the level of one step)."""
    pair = model.pair
    steps = model.steps
    lo_support, hi_support = pair.support
    log_iota = plan.log_inf_budget - math.log(plan.events) - math.log(steps)
    k_hi = grid_search(lambda c: tails(model, True, c) <= log_iota, model.mean, model.sd, True, h)
    if math.isfinite(hi_support):
        k_hi = min(k_hi, math.floor(hi_support / h) + 2)
    if math.isfinite(lo_support):
        k_lo = math.floor(lo_support / h) - 1
    else:
        log_z0 = model.log_mgf(plan.lam)
        log_rho = plan.log_rho_budget - math.log(plan.events) - math.log(steps)

        def holds(c: np.ndarray) -> np.ndarray:
            return tails(model, False, c) + plan.lam * c - log_z0 <= log_rho

        k_lo = grid_search(holds, model.mean, model.sd, False, h)
    return min(k_lo, k_hi - 1), k_hi



def tail_split(model: PhaseModel, h: float, k_lo: int, k_hi: int, lam: float) -> tuple[int, float, int] | None:
    """Where one step's bulk ends and its tail starts (k_cut), the tail's step H and end.

    None when one grid suffices. The tail starts where the tilted weight above falls below
    TAIL_SHARE / (steps H (lam + 1)) (see `power.cut`), at a multiple of H.
    """
    if k_hi - k_lo <= _SINGLE_LAYER_BINS:
        return None
    steps = model.steps
    if steps >= LONG_RUN_STEPS and k_hi - k_lo <= _MAX_STEP_BINS:
        return None
    start = max(model.mean + 8.0 * model.sd, (k_lo + 1) * h)
    top = k_hi * h
    if top - start <= _SINGLE_LAYER_BINS * h:
        return None
    ratio = 2 ** max(1, math.ceil(math.log2((top - start) / (_TAIL_BINS * h))))
    H = ratio * h
    points = np.arange(math.floor(start / H), math.ceil(top / H) + 1) * H
    cells = model.pair.cell_masses(np.append(points, math.inf))
    # tilted weight of [c_j, c_{j+1}) at most P e^(lam c_{j+1}); the last cell is beyond the cap
    log_w = cells.log_p[:-1] + np.log1p(cells.rel_p[:-1]) + lam * points[1:]
    log_suffix = np.logaddexp.accumulate(log_w[::-1])[::-1] - model.log_mgf(lam)
    limit = math.log(TAIL_SHARE / (steps * H * (lam + 1.0)))
    good = np.flatnonzero(log_suffix <= limit)
    if len(good) == 0:
        return None
    cut_point = points[int(good[0])]
    k_cut = round(cut_point / h)  # an int: numpy scalars round as floats do (numpy >= 1.19)
    j_hi = math.ceil(top / H)
    if (j_hi * ratio - k_cut) < 4 * ratio or k_cut <= k_lo + 2:
        return None
    if k_hi - k_cut < (k_hi - k_lo) // 2:
        # a tail holding less than half the window saves fewer bins than the coarse layer costs
        # in accuracy (its step H was chosen for a tail starting near the bulk: with the cut at
        # 99.5% of the window, p = 1e-4, sigma = 0.5, T = 1e6 ended 0.33% wide; in one layer
        # 0.08% wide, in less time)
        return None
    return k_cut, H, j_hi


def _ideal_step(model: PhaseModel, plan: Plan) -> float:
    """The grid step the plan asks for one step of the phase, before rounding to a lattice step."""
    return max(model.sd / plan.step_bins, plan.min_step)


def step_widened(model: PhaseModel, plan: Plan, h: float) -> bool:
    """Whether a step grid of step `h` is coarser than the plan asks (`StepGrid.widened`): a
    lattice step is at most the ideal one and more than half of it, a widened one twice that."""
    return h > _ideal_step(model, plan)


def grid_mantissa(ideal: float) -> float:
    """The largest mantissa m of _MANTISSAS with m 2^e <= ideal, e = floor(log2(ideal)): the
    lattice of grid steps m 2^e (e an integer) that rounds `ideal` down by the least."""
    fraction, _ = math.frexp(ideal)  # ideal = fraction 2^e', fraction in [1/2, 1)
    return max(m for m in _MANTISSAS if m <= 2.0 * fraction)


def lattice_step(ideal: float, mantissa: float) -> float:
    """The largest step m 2^e (m = `mantissa`, e an integer) at most `ideal`, exact in floating
    point (the division only picks e: the result is m 2^e whatever its rounding)."""
    _, exponent = math.frexp(ideal / mantissa)
    return math.ldexp(mantissa, exponent - 1)


def run_mantissa(models: list[PhaseModel], plan: Plan) -> float:
    """One mantissa for all phases of a run: their measures are composed and aligned by doubling
    their steps (`layers.align`), so every step must be m times a power of two for one m. It is
    the one of the phase with the most steps (which holds most of the work); any mantissa keeps
    every phase's step within a factor 2 of the one it asks for."""
    longest = max(models, key=lambda model: model.steps)
    return grid_mantissa(_ideal_step(longest, plan))


class StepGrid(NamedTuple):
    """One step's grid (`_step_grid`): step h, window [k_lo, k_hi], tail split (`tail_split`), and
    whether h had to grow past the plan's step for the window to fit in _MAX_STEP_BINS."""

    h: float
    k_lo: int
    k_hi: int
    split: tuple[int, float, int] | None
    widened: bool


def _step_grid(model: PhaseModel, plan: Plan, mantissa: float | None = None) -> StepGrid:
    """One step's grid. The step is the ideal one rounded down to the lattice {m 2^e} of
    `mantissa` m (by default the one closest below the ideal step: `grid_mantissa`), doubled
    until the window fits."""
    ideal = _ideal_step(model, plan)
    h = lattice_step(ideal, grid_mantissa(ideal) if mantissa is None else mantissa)
    widened = False
    while True:
        k_lo, k_hi = step_window(model, h, plan)
        split = tail_split(model, h, k_lo, k_hi, plan.lam)
        if (k_hi if split is None else split[0]) - k_lo <= _MAX_STEP_BINS:
            return StepGrid(h, k_lo, k_hi, split, widened)
        h *= 2.0
        widened = True


def _upper_on(grid: StepGrid, upper: Layered) -> Layered:
    """One step's upper measure on its grid: the upper bound's connect-the-dots error is far below
    the lower bound's, so one step twice as coarse (the same as discretising there directly)
    suffices where the grid has the step the plan asks for. Where the window forced a coarser step
    (`StepGrid.widened`), the upper measure keeps it: coarsened once more, its per-step error set
    the width (p = 1e-4, sigma = 0.6, T = 1e6: [1.610563, 1.612348] on the first grid, 1.1e-3 wide,
    and a second grid twice as fine narrowed it by 6%; kept, [1.610563, 1.611391] on the first)."""
    return upper if grid.widened else coarsen_bulk(upper)


def upper_step_measure(model: PhaseModel, plan: Plan, mantissa: float | None = None) -> Layered:
    """One step's upper measure alone, for a composition that asks for no lower bound: the grid
    of `step_measures`, not shifted (the offset serves the lower measure's pile, S4), one mass
    per cell (`discretise.discretise_upper_step`). Any grid gives a sound upper measure (S1-S3).
    `mantissa` as for `_step_grid`."""
    grid = _step_grid(model, plan, mantissa)
    h, k_lo, k_hi, split = grid.h, grid.k_lo, grid.k_hi, grid.split
    if split is not None:
        return _step_measures_on(model, plan, grid, align=False)[0]
    upper = single(discretise.discretise_upper_step(model.pair, h, k_lo, k_hi, plan.lam, 1))
    upper.bulk.steps = 1
    return _upper_on(grid, upper)


def step_measures(model: PhaseModel, plan: Plan, align: bool = False,
                  mantissa: float | None = None) -> tuple[Layered, Layered]:
    """One step of a phase discretised on the plan's grid (S1-S4, S6): (upper, lower).

    With `align` (a run of one phase: the offsets of several phases, each exact, need not add
    exactly), a one-layer grid is shifted to put a point at the pile of losses at an end of the
    support (`grid_offset`). `mantissa` as for `_step_grid` (a run of several phases gives its
    `run_mantissa`)."""
    return _step_measures_on(model, plan, _step_grid(model, plan, mantissa), align)


def _step_measures_on(model: PhaseModel, plan: Plan, grid: StepGrid, align: bool) -> tuple[Layered, Layered]:
    """`step_measures` on the grid `_step_grid` chose."""
    h, k_lo, k_hi, split = grid.h, grid.k_lo, grid.k_hi, grid.split
    offset = grid_offset(model, h, plan.lam) if align and split is None else 0.0
    if offset:
        # the window in the shifted frame: o + k' h = r + (k' + q) h with r = o - q h in [0, h)
        # above the unshifted point; the lower end moves down one more step to stay below
        q = math.floor(offset / h)
        k_lo, k_hi = k_lo - q - 1, k_hi - q
    if split is None:
        # the dropped lower tail is recorded for one step (drop multiplicity 1): the compositions
        # add the records of the steps up (S6); the window above split the budget between them
        upper_bulk, lower_bulk = discretise.discretise_step(model.pair, h, k_lo, k_hi, plan.lam, 1, offset)
        upper, lower = single(upper_bulk), single(lower_bulk)
    else:
        k_cut, tail_step, j_hi = split
        ub, ut, lb, lt = discretise.discretise_step_layers(model.pair, h, k_lo, k_cut, tail_step, j_hi, plan.lam, 1,
                                                           offset)
        upper, lower = Layered(ub, ut), Layered(lb, lt)
    for measure in (upper, lower):
        measure.bulk.steps = 1
        if measure.tail is not None:
            measure.tail.steps = 1
    upper = _upper_on(grid, upper)
    # The lower measure carries the upper one's bounds on E[e^(-theta S)] as estimates: they only
    # place the cap of its windows (`truncate.truncate`), and dropping mass from a lower measure
    # is sound wherever it happens (S4), so they need not bound the lower measure itself.
    if upper.bulk.log_theta_mgf is not None:
        lower.bulk.log_theta_mgf = upper.bulk.log_theta_mgf.copy()
    return upper, lower

