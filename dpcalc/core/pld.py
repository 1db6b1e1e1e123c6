"""Tight privacy accounting with certified bounds: privacy loss distributions composed by FFT.

Sources: Koskela, Jalko, Honkela, "Computing tight differential privacy guarantees using FFT"
(AISTATS 2020, arXiv 1906.03049); Gopi, Lee, Wutschitz, "Numerical composition of differential
privacy" (NeurIPS 2021, arXiv 2106.02848); Doroshenko, Ghazi, Kamath, Kumar, Manurangsi,
"Connect the dots: tighter discrete approximations of privacy loss distributions" (PETS 2022,
arXiv 2207.04380); Zhu, Dong, Wang, "Optimal accounting of differential privacy via
characteristic function" (AISTATS 2022, arXiv 2106.08567).

What is computed
----------------
A run is a sequence of phases (`dpcalc.core.phases.Phase`), each `steps` repetitions of a
Poisson-subsampled Gaussian or Laplace mechanism. Under add/remove adjacency its privacy
profile is delta(eps) = max(delta_remove(eps), delta_add(eps)), where delta_dir is the hockey-
stick divergence of the composition of the dominating pairs of the phases in that direction
(`_pld_pairs`):
    delta_dir(eps) = E[(1 - exp(eps - S))_+],  S = sum of the privacy losses of all steps, under P.
`tight_epsilon` returns a certified interval [epsilon_lower, epsilon_upper] for the smallest eps
with delta(eps) <= delta; `tight_delta` an interval for delta(eps). epsilon_upper is the number
to quote: the run is (epsilon_upper, delta)-DP.

Why the upper bound is sound
----------------------------
(Written out, with the functions that implement each step, in docs/pld-soundness.md.)
Write g(s) = (1 - e^(eps - s))_+, non-decreasing and >= 0 with g(+inf) = 1. For positive
measures mu, nu on [-inf, +inf] say mu >= nu ("dominates") when mu([s, +inf]) >= nu([s, +inf])
for every s; then E_mu[g] >= E_nu[g] (Abel summation), and mu1 * mu2 >= nu1 * nu2 for
convolutions (the same argument applied twice). Total masses above 1 are allowed.

S1  Connect the dots. Each loss cell [kh, (k+1)h) is split between its end points with the
    weights that keep the cell's Q-mass (Doroshenko et al. 2022). The split pair dominates the
    original pair in the sense of Blackwell (merging the two halves again is a
    post-processing), and products of post-processings are post-processings, so for every
    composition the split pairs' hockey-stick divergence is at least the true one (Zhu, Dong,
    Wang 2022 use the same ordering of dominating pairs). Its privacy loss sits on the grid.
    h is a power of two, so every grid point k h is exact in floating point.
S2  Masses. Cell masses come from the closed forms of the mechanism's pair, evaluated with
    upper and lower bounds (`_pld_normal.NORMAL_RELATIVE_ERROR`, checked against mpmath, plus
    the sensitivity to the rounding of every interval end point). The split is computed from
    these bounds so that the mass put at each grid point, and above it, can only be too large.
S3  Rounding up and splitting again. Moving mass to a higher loss, or to +inf (where g = 1),
    gives a dominating measure: this covers the upper tail beyond the grid. Coarsening a
    composed measure to a grid of twice the step splits each odd atom by S1 again, which also
    keeps the order ">=" above. A long, light upper tail may be kept on a coarser grid than the
    bulk (`_pld_layers`): the measure is then the sum of two layers, each built by S1-S3.
S4  (lower bound) Garbling. Cells centred on the grid points are merged outcomes of the pair
    (a post-processing, which can only lower the hockey-stick divergence); a cell whose
    likelihood ratio misses its grid point takes in a fraction of a neighbour so that the
    merged ratio is at least the grid value, and is rounded down to it (`_pld_grid._lower_masses`).
    Coarsening merges pairs of neighbouring odd atoms in the proportion that puts the merged
    ratio on the coarser grid. Shares use bounds on the true masses (represented mass plus a
    tracked deficiency), so the merged ratios are at least the grid values. Rounding losses
    down and dropping mass only lower E[g].
S5  Floating point. Measures are stored tilted, t(s) ~ m(s) e^(lam s), and normalised; lam is
    the saddle point of the Chernoff bound (the Renyi order minus one) for the part of the loss
    the grid keeps. Convolution commutes with the tilt, and the part of t near eps is of order
    1, so the FFT's round-off, which is relative to the whole vector, is relative to what
    matters even for delta = 1e-300 (tested against the exact GDP value). Every operation
    carries a bound on the L1 norm of (computed - exact) t: for an FFT convolution
    sqrt(n) gamma (||a||_2 ||b||_1 + ||a||_1 ||b||_2), gamma = 3 log2(n) 16u + 8u (Higham,
    "Accuracy and Stability of Numerical Algorithms", 2002, Thm 24.2, with margin; measured
    errors are a hundredth of it or less); input errors propagate by Young's inequality. Then
        |delta_computed(eps) - delta_exact(eps)| <= Z e^(-lam eps) kappa err_1,
        kappa = sup_y e^(-lam y)(1 - e^(-y)) = lam^lam/(lam + 1)^(lam + 1),
    for each layer, added to the upper bound and subtracted from the lower one, with the
    error of log Z and the rounding of the final sums.
S6  Lower tails. Mass below a floor f is dropped rather than moved up (moving it up would
    need its size, which FFT noise hides). Its contribution is bounded: for the dropped part nu
    of a component C composed with the rest R, E_{nu * R}[g] <= |nu| E_R[g(f + .)] <=
    |nu| (kappa e^(lam (f - eps)) MGF(R) + R(+inf)), and MGF(R) <= MGF(total)/MGF(C). |nu| is
    certified by min(total mass, min_theta e^(theta f) E_C[e^(-theta S)]) over a ladder of
    theta in [0, 2^20]; E[e^(-theta S)] is tracked as an upper bound through every operation
    (products multiply it, truncations lower it, and a split multiplies it by at most
    (e^(theta h) + e^((1 - theta) h))/(1 + e^h), which exceeds 1 only for theta > 1). The floor
    is placed where these terms are a negligible share of delta; their sum is added to the
    upper bound.

When the grid cannot certify the asked delta (+inf mass or the error terms exceed it), the
accountant refines and finally reports epsilon_upper = inf with a warning rather than a number
it cannot certify; when it cannot reach the asked accuracy within its size limits it reports
the wider interval it certified, with a warning. The size limits hold inside the powering too:
a composed measure with more than _MAX_POWER_BINS bins is coarsened (S3/S4, sound), so memory
and time stay bounded for any T, and the interval widens instead.

S7  Closed forms. Outside the grid's numerical range (noise below or above _SIGMA_RANGE /
    _SCALE_RANGE, more than _MAX_TOTAL_STEPS steps), when any floating-point exception is
    raised in the grid computation (they are raised there, not warned about), or past the work
    limit (`_pld_work`: a count of bin operations, never the clock), the bounds come from closed forms (`_fallback`): above, the smallest of mu-GDP
    with mu = sqrt(sum T/sigma^2) plus the Laplace phases' pure epsilon (subsampling and
    composition keep the mu-GDP order, Dong, Roth, Su 2022), the RDP accountant, and the total
    variation bound delta(0) <= sum p TV; below, one step of a phase (the run dominates each of
    its steps) and, for unsubsampled Gaussian runs, the exact mu-GDP value; each with a margin
    for its rounding. When the grid falls short of the accuracy they tighten either side.

The tests compare the bounds with exact values (mpmath for one step, the mu-GDP formula for
the Gaussian mechanism without subsampling, in any number of steps and phases) and with
dp_accounting and prv_accountant. numpy only: scipy is not imported.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from dpcalc.core import _pld_grid as grid
from dpcalc.core import _pld_layers as layers
from dpcalc.core import _pld_work as work
from dpcalc.core._pld_pairs import GaussianPair, LaplacePair, Pair
from dpcalc.core.phases import Phase
from dpcalc.core.validation import NON_NEGATIVE, OPEN_UNIT, POSITIVE_INTEGER, Interval

# The default relative width of the certified interval: (upper - lower) <= 0.001 * upper.
DEFAULT_ACCURACY = 1e-3

ACCURACY = Interval(0.0, 1.0, low_closed=False, high_closed=False)

# Share of delta that the mass moved to +inf by truncating upper tails may take, and the
# relative weight the dropped lower tails may have (S3, S6). Both are far below the accuracy.
_INF_SHARE = 1e-5
_DROP_SHARE = 1e-9

# Tilt range: lam is the Chernoff saddle point clipped to this interval (lam = order - 1).
_LAM_MIN = 1e-3
_LAM_MAX = 1e5

# Grid steps, in bins per standard deviation of the privacy loss being discretised, at the
# default accuracy (they scale with 1/sqrt(accuracy): both bounds err by O(h^2)). The per-step
# lower bound is built on the finest grid and the upper bound on one twice as coarse (its
# connect-the-dots error is far smaller); a composed measure of n steps is coarsened while its
# step stays below sqrt(n) * sd / (bins per sd), the lower bound more finely since merging
# atoms loses more than splitting them. Tuned on the design card (see tests).
_STEP_BINS_PER_SD = 48.0
_UPPER_COARSE_BINS_PER_SD = 48.0
_LOWER_COARSE_BINS_PER_SD = 1536.0
_MAX_BINS = 1 << 21
# Bins of one step's discretisation (its step h doubles until the window fits). At 2^17 the
# lower bound of small-noise runs stalled: p = 0.004, sigma = 0.5, T = 1e4 and p = 0.001,
# sigma = 0.8, T = 1e5 ended 0.25-0.6% wide (warned); at 2^18 both meet the default accuracy
# in about 2 s, and peak memory stays under 160 MiB (measured).
_MAX_STEP_BINS = 1 << 18
# Hard limit on the bins of any composed measure (each layer's FFT works on twice as many
# doubles): keeps the peak memory of a call near 150 MiB and the time near log2(T) times one
# such convolution. Past it the measure is coarsened and the interval widens (with a warning).
_MAX_POWER_BINS = 1 << 18
# Work limit of one accounting, in bin operations (`_pld_work`: an FFT of length n costs
# n log2 n). It is a count, not a clock, so a result never depends on the machine's speed or
# load. The bin limits bound the work of one grid already; this bounds the attempts' total.
# Past it the last completed attempt is reported, or the closed-form bounds. 1e9 is about 4 s
# on one core of a 2026 Xeon; every case of the 100-case grid at the default accuracy but
# p = 1e-4, sigma = 0.8, T = 1e6 needs less than 7e8 (measured).
_WORK_LIMIT = 1e9

# One step is split into a fine bulk and a coarse tail layer (`_pld_layers`) when its window
# exceeds _SINGLE_LAYER_BINS bins; the tail layer gets about _TAIL_BINS bins. Moving tail
# weight by at most the tail's step may change delta by at most _TAIL_SHARE of the Chernoff bound.
_SINGLE_LAYER_BINS = 4096
_TAIL_BINS = 2048
_TAIL_SHARE = 1e-5
_MAX_ATTEMPTS = 4
# A delta_upper at or below this is reported without refining for relative accuracy.
_NEGLIGIBLE_DELTA = 1e-300

DIRECTIONS = ("remove", "add")


@dataclass(frozen=True)
class PLDResult:
    """A certified privacy guarantee from the PLD accountant.

    With a target delta: `epsilon_upper` (the number to quote), `epsilon_lower`, and
    `epsilon` = `epsilon_upper`; delta, delta_lower and delta_upper echo the target. With a
    target epsilon: `delta_upper` (to quote), `delta_lower` and `delta` = `delta_upper`.
    `grid_step` is the step of the final grid, `grid_size` the largest number of bins used;
    `binding` names the direction (remove/add) that sets the upper bound.
    """

    epsilon: float
    epsilon_lower: float
    epsilon_upper: float
    delta: float
    delta_lower: float
    delta_upper: float
    accuracy: float
    grid_step: float
    grid_size: int
    binding: str
    attempts: int
    phases: tuple[Phase, ...]
    warnings: tuple[str, ...] = ()


def _pair(phase: Phase, direction: str) -> Pair:
    if phase.mechanism == "gaussian":
        return GaussianPair(phase.sampling_probability, phase.noise_multiplier, direction)
    return LaplacePair(phase.sampling_probability, phase.scale, direction)


class _PhaseModel:
    """One phase in one direction: its pair, the moments of its loss and a cached MGF."""

    def __init__(self, phase: Phase, direction: str) -> None:
        self.phase = phase
        self.pair = _pair(phase, direction)
        self.mean, self.variance = self.pair.moments()
        self.sd = math.sqrt(max(self.variance, 1e-300))
        self._mgf: dict[tuple[float, float], float] = {}
        self.cap = math.inf  # losses at or above go to +inf in the upper bound (see _set_caps)

    def log_mgf(self, lam: float) -> float:
        """log E[e^(lam L); L < cap]: the part of the MGF that the tilted grid represents."""
        key = (lam, self.cap)
        value = self._mgf.get(key)
        if value is None:
            value = self.pair.log_mgf(lam, self.cap)
            self._mgf[key] = value
        return value


def _golden_min(f, lo: float, hi: float, iterations: int = 40) -> float:
    """Minimiser of a unimodal f on [lo, hi] (golden-section search)."""
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = lo, hi
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(iterations):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = f(d)
    return 0.5 * (a + b)


def _chernoff(models: list[_PhaseModel], delta: float | None, epsilon: float | None) -> tuple[float, float]:
    """The tilt lam (Chernoff saddle point, = Renyi order - 1) and the Chernoff estimate.

    delta mode: lam minimises (K(lam) + log(1/delta))/lam with K = sum of steps * log MGF, and
    the estimate is that minimum (the RDP epsilon, an upper bound). epsilon mode: lam
    minimises K(lam) - lam eps and the estimate is that minimum (log of an upper bound on delta).
    """

    def total(lam: float) -> float:
        return sum(m.phase.steps * m.log_mgf(lam) for m in models)

    # delta(eps) = E[(1 - e^(eps - S))_+] <= kappa(lam) E[e^(lam (S - eps))] (see _pld_grid._kappa)
    if delta is not None:
        log_inv = -math.log(delta)

        def objective(x: float) -> float:
            lam = math.exp(x)
            return (total(lam) + math.log(grid._kappa(lam)) + log_inv) / lam
    else:

        def objective(x: float) -> float:
            lam = math.exp(x)
            return total(lam) + math.log(grid._kappa(lam)) - lam * epsilon

    x = _golden_min(objective, math.log(_LAM_MIN), math.log(_LAM_MAX))
    lam = min(max(math.exp(x), _LAM_MIN), _LAM_MAX)
    return lam, objective(math.log(lam))


def _log_tail_above(pair: Pair, points: np.ndarray) -> np.ndarray:
    """log of upper bounds on P(L >= c) for sorted points c."""
    cells = pair.cell_masses(np.append(points, math.inf))
    upper = cells.log_p + np.log1p(cells.rel_p) + 1e-12
    return np.logaddexp.accumulate(upper[::-1])[::-1]


def _log_tail_below(pair: Pair, points: np.ndarray) -> np.ndarray:
    """log of upper bounds on P(L < c) for sorted points c."""
    cells = pair.cell_masses(np.concatenate(([-math.inf], points)))
    upper = cells.log_p + np.log1p(cells.rel_p) + 1e-12
    return np.logaddexp.accumulate(upper)


def _grid_search(holds, start: float, step: float, upward: bool, h: float) -> int:
    """The grid index k nearest `start` (above it if upward, else below) where holds(k h) is true.

    holds(points) -> boolean array; monotone: false near start, true far away. Exponential
    search in multiples of `step`, then a search over grid indices.
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
    while abs(good - bad) > 1:
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


@dataclass
class _Plan:
    """Tilt, budgets and grid choices of one composition."""

    lam: float
    log_inf_budget: float  # total share of delta allowed at +inf from truncation
    log_rho_budget: float  # total relative weight of dropped lower tails
    step_bins: float
    upper_coarse_bins: float
    lower_coarse_bins: float
    events: int
    min_step: float = 0.0  # steps finer than this are not needed (error <= steps * h)


def _cap(model: _PhaseModel, log_inf_budget: float, events: int) -> float:
    """The loss above which one step's mass is moved to +inf (as `_step_window` does)."""
    h = 2.0 ** math.floor(math.log2(model.sd / 4.0))
    log_iota = log_inf_budget - math.log(events) - math.log(model.phase.steps)
    k = _grid_search(lambda c: _log_tail_above(model.pair, c) <= log_iota, model.mean, model.sd, True, h)
    return k * h


def _step_window(model: _PhaseModel, h: float, plan: _Plan) -> tuple[int, int]:
    """Grid indices [k_lo, k_hi] for one step of a phase (S3, S6 at the level of one step)."""
    pair = model.pair
    steps = model.phase.steps
    lo_support, hi_support = pair.support
    log_iota = plan.log_inf_budget - math.log(plan.events) - math.log(steps)
    k_hi = _grid_search(lambda c: _log_tail_above(pair, c) <= log_iota, model.mean, model.sd, True, h)
    if math.isfinite(hi_support):
        k_hi = min(k_hi, math.floor(hi_support / h) + 2)
    if math.isfinite(lo_support):
        k_lo = math.floor(lo_support / h) - 1
    else:
        log_z0 = model.log_mgf(plan.lam)
        log_rho = plan.log_rho_budget - math.log(plan.events) - math.log(steps)

        def holds(c: np.ndarray) -> np.ndarray:
            return _log_tail_below(pair, c) + plan.lam * c - log_z0 <= log_rho

        k_lo = _grid_search(holds, model.mean, model.sd, False, h)
    return min(k_lo, k_hi - 1), k_hi


def _power(model: _PhaseModel, base: layers.Layered, plan: _Plan, stats: dict) -> layers.Layered:
    """The steps-fold composition of one phase: binary powering, windows and coarsening."""
    steps = model.phase.steps
    coarse = plan.upper_coarse_bins if base.kind == "upper" else plan.lower_coarse_bins
    result: layers.Layered | None = None
    power = base
    level = 0
    remaining = steps
    stats["bins"] = max(stats.get("bins", 0), base.bins)
    while True:
        if remaining & 1:
            if result is None:
                result = power
            else:
                result = layers.align(result, power.bulk.h)
                power = layers.align(power, result.bulk.h)
                result = _cut(layers.convolve(result, power), plan, 1)
            result = _limit(result, stats)
            stats["bins"] = max(stats["bins"], result.bins)
        remaining >>= 1
        if not remaining:
            break
        level += 1
        power = _cut(layers.convolve(power, power), plan, steps >> level)
        sd = model.sd * math.sqrt(2.0**level)
        while 2.0 * power.bulk.h <= sd / coarse:
            power = layers.coarsen_bulk(power)
        power = _limit(power, stats)
        stats["bins"] = max(stats["bins"], power.bins)
    assert result is not None
    return result


def _limit(m: layers.Layered, stats: dict) -> layers.Layered:
    """Coarsen (S3/S4: a sound discretisation, only a coarser one) until m has at most
    _MAX_POWER_BINS bins, so that memory and time stay bounded whatever T is; the interval
    widens instead, and the accuracy check reports it."""
    while m.bins > _MAX_POWER_BINS:
        stats["capped"] = True
        if m.tail is None or len(m.bulk.t) >= len(m.tail.t):
            m = layers.coarsen_bulk(m)
        else:
            m = layers.Layered(m.bulk, grid.coarsen(m.tail))
    return m


def _work_reason() -> str:
    return f"the grid computation reached its work limit of {_WORK_LIMIT:.3g} bin operations"


def _cut(m: layers.Layered, plan: _Plan, multiplicity: int) -> layers.Layered:
    """Move the light top of the bulk to the tail layer, then cut the windows (S3, S6)."""
    if m.tail is not None:
        # moving a tilted weight w by at most H changes delta by at most about w H (lam + 1)
        # times the Chernoff bound, in each of `multiplicity` copies
        limit = _TAIL_SHARE / (multiplicity * m.tail.h * (m.bulk.lam + 1.0))
        m = layers.resplit(m, math.log(limit))
    return layers.truncate(
        m,
        log_inf_budget=plan.log_inf_budget - math.log(plan.events) - math.log(multiplicity),
        log_rho_budget=plan.log_rho_budget - math.log(plan.events),
        multiplicity=multiplicity,
    )


def _tail_split(model: _PhaseModel, h: float, k_lo: int, k_hi: int, lam: float) -> tuple[int, float, int] | None:
    """Where one step's bulk ends and its tail starts (k_cut), the tail's step H and end.

    None when one grid suffices. The tail starts where the tilted weight above falls below
    _TAIL_SHARE / (steps H (lam + 1)) (see `_cut`), at a multiple of H.
    """
    if k_hi - k_lo <= _SINGLE_LAYER_BINS:
        return None
    steps = model.phase.steps
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
    limit = math.log(_TAIL_SHARE / (steps * H * (lam + 1.0)))
    good = np.flatnonzero(log_suffix <= limit)
    if len(good) == 0:
        return None
    cut_point = points[int(good[0])]
    k_cut = round(cut_point / h)  # an int: numpy scalars round as floats do (numpy >= 1.19)
    j_hi = math.ceil(top / H)
    if (j_hi * ratio - k_cut) < 4 * ratio or k_cut <= k_lo + 2:
        return None
    return k_cut, H, j_hi


def _step_measures(model: _PhaseModel, plan: _Plan) -> tuple[layers.Layered, layers.Layered]:
    """One step of a phase discretised on the plan's grid (S1-S4, S6): (upper, lower)."""
    h = 2.0 ** math.floor(math.log2(max(model.sd / plan.step_bins, plan.min_step)))
    while True:
        k_lo, k_hi = _step_window(model, h, plan)
        split = _tail_split(model, h, k_lo, k_hi, plan.lam)
        if (k_hi if split is None else split[0]) - k_lo <= _MAX_STEP_BINS:
            break
        h *= 2.0
    if split is None:
        upper_bulk, lower_bulk = grid.discretise_step(model.pair, h, k_lo, k_hi, plan.lam, model.phase.steps)
        upper, lower = layers.single(upper_bulk), layers.single(lower_bulk)
    else:
        k_cut, tail_step, j_hi = split
        ub, ut, lb, lt = grid.discretise_step_layers(
            model.pair, h, k_lo, k_cut, tail_step, j_hi, plan.lam, model.phase.steps
        )
        upper, lower = layers.Layered(ub, ut), layers.Layered(lb, lt)
    for measure in (upper, lower):
        measure.bulk.steps = 1
        if measure.tail is not None:
            measure.tail.steps = 1
    # the upper bound's connect-the-dots error is far below the lower bound's: one step
    # twice as coarse (the same as discretising there directly) suffices.
    upper = layers.coarsen_bulk(upper)
    return upper, lower


def _compose(models: list[_PhaseModel], plan: _Plan, want_lower: bool, stats: dict) -> dict[str, layers.Layered]:
    """Upper (and lower) measures of the whole run in one direction."""
    parts: dict[str, list[layers.Layered]] = {"upper": [], "lower": []}
    for model in models:
        upper, lower = _step_measures(model, plan)
        parts["upper"].append(_power(model, upper, plan, stats))
        if want_lower:
            parts["lower"].append(_power(model, lower, plan, stats))
    out = {}
    for kind, measures in parts.items():
        if not measures:
            continue
        total = measures[0]
        for other in measures[1:]:
            total = layers.align(total, other.bulk.h)
            other = layers.align(other, total.bulk.h)
            total = _cut(layers.convolve(total, other), plan, 1)
        out[kind] = total
    return out


def _symmetric(phases: Sequence[Phase]) -> bool:
    """Without subsampling the Gaussian and Laplace pairs are symmetric: add = remove."""
    return all(phase.sampling_probability == 1.0 for phase in phases)


def _account(phases: Sequence[Phase], *, delta: float | None, epsilon: float | None,
             accuracy: float) -> PLDResult:
    """The grid accountant inside its numerical range; the closed-form bounds outside it.

    An accuracy finer than the default never gives a looser interval than the default: where
    the finer grids fall short (their work limit, their size limit), the default's interval,
    which is just as certified, tightens either side.
    """
    result = _account_at(phases, delta=delta, epsilon=epsilon, accuracy=accuracy)
    if accuracy < DEFAULT_ACCURACY and result.warnings:
        default = _cached(tuple(phases), delta, epsilon, DEFAULT_ACCURACY)
        merged = _merge(result, default, "the grid of the default accuracy")
        return dataclasses.replace(merged, accuracy=accuracy)
    return result


def _account_at(phases: Sequence[Phase], *, delta: float | None, epsilon: float | None,
                accuracy: float) -> PLDResult:
    reason = _out_of_range(phases)
    if reason is None:
        result, reason = _in_grid(lambda: _account_grid(phases, delta=delta, epsilon=epsilon, accuracy=accuracy))
        if result is not None:
            if not result.warnings:
                return result
            # the grid fell short of the accuracy: the closed forms may do better on either side
            return _merge(result, _fallback(tuple(phases), delta=delta, epsilon=epsilon, accuracy=accuracy,
                                            reason=""))
    return _fallback(tuple(phases), delta=delta, epsilon=epsilon, accuracy=accuracy, reason=reason)


_T = TypeVar("_T")


def _in_grid(compute: Callable[[], _T]) -> tuple[_T | None, str | None]:
    """(compute(), None) run under the grid's guards, or (None, why it failed).

    Floating-point exceptions are raised, not warned about, inside the grid computation (every
    place where an infinity or a zero is intended is wrapped locally in np.errstate), and the
    computation stops after _WORK_LIMIT bin operations: a run that overflows anywhere or runs
    out of work is left to `_fallback`, whose bounds are sound whatever the inputs.
    """
    try:
        with work.guarded(_WORK_LIMIT):
            return compute(), None
    except work.WorkLimitReached:
        return None, _work_reason()
    except (ArithmeticError, ValueError, MemoryError) as exc:
        return None, f"the grid computation failed ({type(exc).__name__})"


@dataclass
class _Setup:
    """What every attempt of one accounting shares: the models, tilts and grid scale."""

    models: dict[str, list[_PhaseModel]]
    tilts: dict[str, tuple[float, float]]
    order: list[str]  # directions, the likely binding one first
    events: int
    scale: float
    reference: float
    per_step_error: Callable[[float], float]
    coarse_first: bool


def _prepare(phases: Sequence[Phase], delta: float | None, epsilon: float | None, accuracy: float) -> _Setup:
    directions = DIRECTIONS[:1] if _symmetric(phases) else DIRECTIONS
    models = {d: [_PhaseModel(phase, d) for phase in phases] for d in directions}
    tilts = {d: _chernoff(models[d], delta, epsilon) for d in directions}
    # The tilt is chosen for the measure the grid represents: losses beyond the upper
    # truncation go to +inf and take no part in the tilt (for heavy-tailed losses, e.g. small
    # p, the full MGF is dominated by events far rarer than delta).
    events = sum(2 * (phase.steps.bit_length() + 1) for phase in phases) + 2 * len(phases) + 2
    for d in directions:
        delta_scale = delta if delta is not None else math.exp(min(tilts[d][1], 0.0))
        for model in models[d]:
            model.cap = _cap(model, math.log(_INF_SHARE * max(delta_scale, 1e-300)), events)
        tilts[d] = _chernoff(models[d], delta, epsilon)
    # the direction with the larger Chernoff estimate is most likely the binding one
    order = sorted(directions, key=lambda d: tilts[d][1], reverse=True)
    total_steps = sum(phase.steps for phase in phases)
    # both bounds err by O(h^2) per step and per coarsening; the number of coarsenings grows
    # with log T, so the grids are refined by sqrt(log2 T / 14) beyond T ~ 16000
    scale = math.sqrt(DEFAULT_ACCURACY / accuracy) * math.sqrt(max(1.0, math.log2(total_steps) / 14.0))
    if epsilon is not None:
        # a relative width a in delta is a width of about a / (lam + 1) in epsilon: that many
        # times finer than the same relative width in epsilon
        scale *= math.sqrt(max(1.0, (tilts[order[0]][0] + 1.0) * epsilon))
    # The error of either bound is at most about (number of steps) * h in epsilon, so a step of
    # accuracy * epsilon / (4 steps) always suffices; the variance rule is finer for long runs.
    if delta is not None:
        reference = max(tilts[order[0]][1], 0.0)
        per_step_error = lambda ref: accuracy * ref / (4.0 * total_steps)  # noqa: E731
    else:
        lam0 = tilts[order[0]][0]
        reference = 1.0
        per_step_error = lambda ref: accuracy / (4.0 * (lam0 + 1.0) * total_steps)  # noqa: E731
    # A run whose Chernoff bound already gives epsilon = 0 first tries a coarse grid, which
    # certifies epsilon_upper = 0 cheaply when that is the answer.
    coarse_first = delta is not None and tilts[order[0]][1] <= 0.0
    return _Setup(models, tilts, order, events, scale, reference, per_step_error, coarse_first)


def _account_grid(phases: Sequence[Phase], *, delta: float | None, epsilon: float | None,
                  accuracy: float, sink: dict | None = None) -> PLDResult:
    """The grid accountant. With `sink`, every direction is composed in full and the measures
    of the reported attempt are left in sink["measures"] (direction -> {"upper", "lower"})."""
    warnings: list[str] = []
    setup = _prepare(phases, delta, epsilon, accuracy)
    models, tilts, order, events = setup.models, setup.tilts, setup.order, setup.events
    scale, reference, per_step_error, coarse_first = (
        setup.scale, setup.reference, setup.per_step_error, setup.coarse_first)
    inf_share = _INF_SHARE
    attempts = 0
    outcome: dict = {}
    out_of_work = False
    for attempt in range(_MAX_ATTEMPTS):
        attempts += 1
        this_scale = scale / 8.0 if (coarse_first and attempt == 0) else scale
        min_step = per_step_error(reference)
        try:
            fresh = _attempt(models, tilts, order, delta, epsilon, this_scale, inf_share, events, min_step,
                             full=sink is not None)
        except work.WorkLimitReached:
            if not outcome:
                raise
            attempts -= 1
            out_of_work = True
            break
        outcome = fresh
        if sink is not None:
            sink["measures"] = fresh["measures"]
        if outcome["unresolved"]:
            if outcome["capped"]:
                break  # a finer grid would exceed the bin limit
            inf_share *= 1e-3
            scale *= 2.0
            continue
        if delta is not None and outcome["upper"] == 0.0:
            break
        if epsilon is not None and outcome["upper"] <= _NEGLIGIBLE_DELTA:
            break  # relative accuracy below 1e-300 is not worth a finer grid
        if outcome["width"] <= accuracy * outcome["value"]:
            break
        if delta is not None:
            reference = outcome["upper"]
        if coarse_first and attempt == 0:
            continue
        ratio = outcome["width"] / max(accuracy * outcome["value"], 1e-300)
        factor = 2.0 if ratio < 3.5 else 4.0
        if outcome["bins"] * factor > _MAX_BINS or outcome["capped"]:
            break
        scale *= factor
    if outcome["unresolved"]:
        warnings.append(
            "the grid cannot certify this target: the discretisation error exceeds it even on the "
            "finest grid tried, so the upper bound is reported as inf."
        )
    elif outcome["width"] > accuracy * outcome["value"] and not (
            epsilon is not None and outcome["upper"] <= _NEGLIGIBLE_DELTA):
        limit = (f"{_work_reason()} before a finer grid was done" if out_of_work
                 else "the grid it needs exceeds the size limit")
        reached = outcome["width"] / outcome["value"] if outcome["value"] > 0.0 else math.inf
        warnings.append(
            f"the certified interval is {outcome['width']:.3g} wide (relative {reached:.2g}), more than the "
            f"requested accuracy {accuracy:g} x {outcome['value']:.6g}: {limit}."
        )
    if delta is not None:
        eps_hi, eps_lo = outcome["upper"], outcome["lower"]
        d_hi = d_lo = delta
    else:
        eps_hi = eps_lo = epsilon
        d_hi, d_lo = outcome["upper"], outcome["lower"]
    return PLDResult(
        epsilon=eps_hi, epsilon_lower=eps_lo, epsilon_upper=eps_hi,
        delta=d_hi, delta_lower=d_lo, delta_upper=d_hi,
        accuracy=accuracy, grid_step=outcome["grid_step"], grid_size=outcome["bins"],
        binding=outcome["binding"], attempts=attempts, phases=tuple(phases), warnings=tuple(warnings),
    )


def upper_epsilon(phases: Sequence[Phase], delta: float, *, accuracy: float = DEFAULT_ACCURACY) -> tuple[float, float]:
    """A certified upper bound on epsilon at `delta`, and the grid step it was computed on.

    The upper bound of the first grid `tight_epsilon` tries at `accuracy` (the same number when
    that grid meets the accuracy, as it does for most runs), without the lower bound and without
    checking the interval's width: about 40% cheaper, for searches that steer by it. Where the
    first grid cannot certify the target (inf), it is `tight_epsilon`'s upper bound; outside the
    grid's range, or when the grid fails, the closed forms' (grid step 0), as in `_account`.
    """
    OPEN_UNIT.check("delta", delta)
    ACCURACY.check("accuracy", accuracy)
    checked = _check_phases(phases)
    reason = _out_of_range(checked)
    if reason is None:
        def first_grid() -> dict:
            setup = _prepare(checked, delta, None, accuracy)
            return _attempt(setup.models, setup.tilts, setup.order, delta, None, setup.scale, _INF_SHARE,
                            setup.events, setup.per_step_error(setup.reference), want_lower=False)

        outcome, reason = _in_grid(first_grid)
        if outcome is not None:
            if math.isfinite(outcome["upper"]):
                return outcome["upper"], outcome["grid_step"]
            result = tight_epsilon(checked, delta, accuracy=accuracy)  # finer grids may certify it
            return result.epsilon_upper, result.grid_step
    result = _fallback(checked, delta=delta, epsilon=None, accuracy=accuracy, reason=reason)
    return result.epsilon_upper, result.grid_step


def _plan(lam: float, estimate: float, delta: float | None, scale: float, inf_share: float, events: int,
          min_step: float) -> _Plan:
    delta_scale = delta if delta is not None else math.exp(min(estimate, 0.0))
    return _Plan(
        lam=lam,
        log_inf_budget=math.log(inf_share) + math.log(max(delta_scale, 1e-300)),
        log_rho_budget=math.log(_DROP_SHARE),
        step_bins=_STEP_BINS_PER_SD * scale,
        upper_coarse_bins=_UPPER_COARSE_BINS_PER_SD * scale,
        lower_coarse_bins=_LOWER_COARSE_BINS_PER_SD * scale,
        events=events,
        min_step=min_step / scale,
    )


def _bounds_of(measures: dict[str, layers.Layered], delta, epsilon) -> tuple[float, float | None]:
    """(upper, lower) of the target quantity for one direction."""
    if delta is not None:
        upper = layers.epsilon_bound(measures["upper"], delta)
        lower = layers.epsilon_bound(measures["lower"], delta) if "lower" in measures else None
    else:
        upper = layers.delta_bound(measures["upper"], epsilon)
        lower = layers.delta_bound(measures["lower"], epsilon) if "lower" in measures else None
    return upper, lower


def _attempt(models, tilts: dict[str, tuple[float, float]], order, delta, epsilon, scale, inf_share, events, min_step,
             full: bool = False, want_lower: bool = True) -> dict:
    """One grid of `_account_grid`: the bounds at `scale` (without `want_lower`, the upper bound
    only, "lower" and "width" then None)."""
    stats: dict = {}
    first = order[0]
    plan = _plan(*tilts[first], delta, scale, inf_share, events, min_step)
    measures = _compose(models[first], plan, want_lower, stats)
    kept = {first: measures}
    upper, lower = _bounds_of(measures, delta, epsilon)
    binding = first
    grid_step = measures["upper"].bulk.h
    for other in order[1:]:
        # A cheaper upper bound for the other direction settles most runs: if it does not
        # exceed the first direction's upper bound, the maximum over directions is unchanged
        # and the first direction's lower bound is a lower bound of the maximum.
        plan_other = _plan(*tilts[other], delta, scale * 0.5, inf_share, events, min_step)
        if not full:
            rough = _compose(models[other], plan_other, False, stats)
            rough_upper, _ = _bounds_of(rough, delta, epsilon)
            if rough_upper <= upper:
                continue
        plan_other = _plan(*tilts[other], delta, scale, inf_share, events, min_step)
        composed = _compose(models[other], plan_other, want_lower, stats)
        kept[other] = composed
        other_upper, other_lower = _bounds_of(composed, delta, epsilon)
        if other_upper > upper:
            binding = other
            grid_step = composed["upper"].bulk.h
        upper = max(upper, other_upper)
        if want_lower:
            lower = max(lower, other_lower)
    return {
        "upper": upper,
        "lower": lower,
        "value": upper if math.isfinite(upper) else 0.0,
        "width": upper - lower if want_lower else None,
        "unresolved": math.isinf(upper) and delta is not None,
        "binding": binding,
        "grid_step": grid_step,
        "bins": stats.get("bins", 0),
        "capped": stats.get("capped", False),
        "measures": kept,
    }


# --------------------------------------------------------------------------------------------
# Outside the grid's numerical range: closed-form bounds (sound for every input)
# --------------------------------------------------------------------------------------------

# Noise levels the grid handles. Below the lower ends one step's privacy loss reaches
# 1/(2 sigma^2) (Gaussian) or 1/b (Laplace): grids of float64 losses and the tail searches
# lose their resolution; above the upper ends the loss of one step is below 1e-12 and its
# moments underflow. Measured by the extreme-input sweep (tests/core/test_pld_extremes.py).
_SIGMA_RANGE = (0.05, 1e5)
_SCALE_RANGE = (0.05, 1e5)
# The grid doubles its step as T grows (cost ~ log T); beyond this many steps in all the
# composed losses are so large or so concentrated that the closed forms are as good.
_MAX_TOTAL_STEPS = 10**13
# Relative margin put on closed forms computed in floating point (accurate to ~1e-9 relative down
# to delta = 1e-300, docs/mathematics.md §9).
_CLOSED_FORM_MARGIN = 1e-6
# Shares c of the loss given up in the one-step lower bound (see `_one_step_lower`).
_LOWER_SHARES = (0.01, 0.1, 0.5, 1.0, 2.0, 5.0)


def _out_of_range(phases: Sequence[Phase]) -> str | None:
    """Why the grid accountant cannot be trusted to run for these phases (None: it can)."""
    if sum(phase.steps for phase in phases) > _MAX_TOTAL_STEPS:
        return f"more than {_MAX_TOTAL_STEPS:.0e} steps"
    for phase in phases:
        if phase.mechanism == "gaussian":
            value, (low, high), name = phase.noise_multiplier, _SIGMA_RANGE, "noise multiplier"
        else:
            value, (low, high), name = phase.scale, _SCALE_RANGE, "Laplace scale"
        if not low <= value <= high:
            return f"a {name} of {value:g}, outside [{low:g}, {high:g}]"
    return None


def _log_gdp_mu(phases: Sequence[Phase]) -> float:
    """log mu of sqrt(sum T_i / sigma_i^2) over the Gaussian phases (-inf if none)."""
    terms = [math.log(phase.steps) - 2.0 * math.log(phase.noise_multiplier)
             for phase in phases if phase.mechanism == "gaussian"]
    if not terms:
        return -math.inf
    top = max(terms)
    return 0.5 * (top + math.log(math.fsum(math.exp(term - top) for term in terms)))


def _laplace_pure_epsilon(phases: Sequence[Phase]) -> float:
    """Sum over the Laplace steps of the largest privacy loss of one step (pure DP, both
    directions): log(1 + p (e^(1/b) - 1)) (remove) and -log(1 - p (1 - e^(-1/b))) (add),
    rounded up; inf when it overflows."""
    total = 0.0
    for phase in phases:
        if phase.mechanism != "laplace":
            continue
        p, inv_b = phase.sampling_probability, 1.0 / phase.scale
        remove = inv_b + math.log(p) if inv_b > 700.0 else math.log1p(p * math.expm1(inv_b))
        add = -math.log1p(-p * -math.expm1(-inv_b)) if p * -math.expm1(-inv_b) < 1.0 else math.inf
        total += phase.steps * max(remove, add) * (1.0 + 1e-12) + 1e-300
    return total


def _gdp_upper(phases: Sequence[Phase], delta: float | None, epsilon: float | None) -> float:
    """Upper bound from mu-GDP: the Gaussian phases are dominated by mu-GDP with
    mu = sqrt(sum T_i / sigma_i^2) (Dong, Roth, Su 2022: subsampling gives C_p(f) >= f, Thm 4.2,
    and composition is monotone in the trade-off functions, Sec. 3.2), and the Laplace phases are
    (eps_L, 0)-DP; composing (eps_G, delta) with (eps_L, 0) gives (eps_G + eps_L, delta)."""
    from dpcalc.core import gdp

    log_mu = _log_gdp_mu(phases)
    eps_laplace = _laplace_pure_epsilon(phases)
    mu = math.exp(log_mu) if log_mu < 700.0 else math.inf
    margin = _CLOSED_FORM_MARGIN
    if delta is not None:
        if not math.isfinite(eps_laplace):
            return math.inf
        eps_gauss = gdp.epsilon_for_delta(delta * (1.0 - margin), mu) * (1.0 + margin) if mu > 0.0 else 0.0
        return eps_gauss + eps_laplace
    if epsilon < eps_laplace:
        return 1.0
    if mu == 0.0:
        return 0.0
    log_value = gdp.log_delta_for_epsilon(max(epsilon - eps_laplace, 0.0) * (1.0 - margin), mu)
    # the smallest positive float when delta underflows: an upper bound, never 0
    return min(1.0, max(math.exp(log_value) * (1.0 + margin), math.ulp(0.0)))


def _total_variation_upper(phases: Sequence[Phase]) -> float:
    """delta(0) of the run is at most sum over steps of p TV(base pair): one subsampled step is
    (0, p TV)-DP (the mixture's total variation distance to its base is p times the base's), and
    total variation is subadditive under composition. TV = 2 Phi(1/(2 sigma)) - 1 for the
    Gaussian, 1 - e^(-1/(2b)) for the Laplace mechanism. Rounded up."""
    total = 0.0
    for phase in phases:
        if phase.mechanism == "gaussian":
            tv = math.erf(0.5 / (phase.noise_multiplier * math.sqrt(2.0)))
        else:
            tv = -math.expm1(-0.5 / phase.scale)
        total += phase.steps * phase.sampling_probability * tv * (1.0 + 1e-12)
    return min(total + 1e-300, 1.0)


# RDP deltas below this are not used (see `_rdp_upper`).
_RDP_DELTA_FLOOR = 1e-280


def _rdp_upper(phases: Sequence[Phase], delta: float | None, epsilon: float | None) -> float:
    """Upper bound from the RDP accountant (`dpcalc.core.rdp`); inf (or 1) if it fails."""
    from dpcalc.core import rdp

    fail = math.inf if delta is not None else 1.0
    try:
        with np.errstate(all="ignore"):
            result = rdp.rdp_accountant(phases, delta=delta, epsilon=epsilon)
    except (ArithmeticError, ValueError, MemoryError):
        return fail
    value = result.epsilon if delta is not None else result.delta
    if math.isnan(value) or (delta is not None and value <= 0.0) or (delta is None and value < _RDP_DELTA_FLOOR):
        # not taken on trust at the ends of float64: rdp_accountant returns epsilon 0 for
        # sigma = 1e300, T = 1e15 at delta = 1e-300 (delta(0) = 1.3e-293 there) and delta 0 for
        # sigma = 1e300, T = 1 at epsilon 0 (the exact delta is 4e-301)
        return fail
    return min(value * (1.0 + 1e-9), fail)


def _one_step_lower(phase: Phase, delta: float | None, epsilon: float | None) -> float:
    """A certified lower bound from one step of the phase (the composition dominates any
    one of its steps: the other outputs can be discarded). delta(eps) = E_P[(1 - e^(eps - L))_+]
    >= P(L >= l) (1 - e^(eps - l)) for any l > eps (remove direction, P the mixture):

    Gaussian: L = log(1 - p + p e^((x - 1/2)/s^2)) >= log p + (x - 1/2)/s^2, and x >= 1 - z s has
    P-mass >= p Phi(z), so P(L >= l(z)) >= p Phi(z) with l(z) = log p + 1/(2 s^2) - z/s.
    Laplace: L takes its largest value a+ = log(1 + p (e^(1/b) - 1)) with P-mass
    m = ((1 - p) e^(-1/b) + p)/2 (x >= 1); k steps together reach k a+ with P-mass m^k.
    With eps = l - c the bound is P(L >= l) (1 - e^(-c)), for a few shares c.
    Returns epsilon_lower (delta given) or delta_lower (epsilon given); 0 when nothing is shown.
    """
    from dpcalc.core.special import ndtr, ndtri

    p = phase.sampling_probability
    best = 0.0
    if phase.mechanism == "gaussian":
        s = phase.noise_multiplier
        log_inv = -math.log(2.0) - 2.0 * math.log(s)  # log(1/(2 s^2))
        inv = math.exp(log_inv) if log_inv < 700.0 else math.inf
        for c in _LOWER_SHARES:
            gain = -math.expm1(-c)
            if delta is not None:
                q = delta * (1.0 + 1e-9) / (gain * p)
                if not q < 1.0 - 1e-9:
                    continue
                z = ndtri(q)
                z += 1e-9 * (1.0 + abs(z))  # Phi(z) >= q despite the rounding of ndtri
                value = math.log(p) + inv - z / s - c
                if math.isinf(value):
                    return sys.float_info.max
                slack = 1e-12 * (abs(math.log(p)) + inv + abs(z / s) + c) + 1e-300
                best = max(best, value - slack)
            else:
                z = s * (math.log(p) - epsilon - c) + (0.5 / s if s > 1e-300 else math.inf)
                z -= 1e-9 * (1.0 + abs(z)) if math.isfinite(z) else 0.0
                best = max(best, p * ndtr(z) * gain * (1.0 - 1e-9))
        return best
    inv_b = 1.0 / phase.scale
    a_plus = inv_b + math.log(p) if inv_b > 700.0 else math.log1p(p * math.expm1(inv_b))
    a_plus *= 1.0 - 1e-12
    mass = (0.5 * ((1.0 - p) * math.exp(-inv_b) + p)) * (1.0 - 1e-12)
    log_mass = math.log(mass)
    for c in _LOWER_SHARES:
        gain = -math.expm1(-c)
        if delta is not None:
            # the most steps k <= T with m^k (1 - e^(-c)) > delta
            room = (math.log(gain) - math.log(delta) - 1e-9) / -log_mass if log_mass < 0.0 else math.inf
            k = min(phase.steps, math.floor(room)) if room > 0.0 else 0
            if k >= 1:
                value = k * a_plus - c
                if math.isinf(value):
                    return sys.float_info.max
                best = max(best, value)
        else:
            # the fewest steps k with k a+ >= eps + c
            need = max(1, math.ceil((epsilon + c) / a_plus)) if a_plus > 0.0 else math.inf
            if need <= phase.steps:
                best = max(best, math.exp(need * log_mass) * gain * (1.0 - 1e-9))
    return best


def _merge(grid_result: PLDResult, closed: PLDResult, source: str | None = None) -> PLDResult:
    """The tighter of two certified intervals on each side (both are sound). `source` names
    where `closed` comes from (default: the closed forms of `_fallback`)."""
    warnings = list(grid_result.warnings)
    upper_source = source or "the closed form (mu-GDP, RDP or total variation)"
    lower_source = source or "the closed form (one step or exact mu-GDP)"
    if closed.epsilon_upper < grid_result.epsilon_upper or closed.delta_upper < grid_result.delta_upper:
        warnings.append(f"the upper bound is from {upper_source}, tighter here than the grid's.")
    if closed.epsilon_lower > grid_result.epsilon_lower or closed.delta_lower > grid_result.delta_lower:
        warnings.append(f"the lower bound is from {lower_source}, tighter here than the grid's.")
    eps_hi = min(grid_result.epsilon_upper, closed.epsilon_upper)
    d_hi = min(grid_result.delta_upper, closed.delta_upper)
    eps_lo = min(max(grid_result.epsilon_lower, closed.epsilon_lower), eps_hi)
    d_lo = min(max(grid_result.delta_lower, closed.delta_lower), d_hi)
    return dataclasses.replace(
        grid_result, epsilon=eps_hi, epsilon_upper=eps_hi, epsilon_lower=eps_lo,
        delta=d_hi, delta_upper=d_hi, delta_lower=d_lo, warnings=tuple(warnings),
    )


def _fallback(phases: tuple[Phase, ...], *, delta: float | None, epsilon: float | None, accuracy: float,
              reason: str) -> PLDResult:
    """Closed-form certified bounds for runs outside the grid's numerical range.

    Upper: the smaller of the mu-GDP bound (`_gdp_upper`) and the RDP accountant's. Lower: the
    largest of the one-step bounds (`_one_step_lower`) and, for runs of unsubsampled Gaussian
    phases, the exact mu-GDP value (their composition is exactly mu-GDP; Dong, Roth, Su 2022,
    Cor. 3.3), each with a margin for the rounding of the closed forms.
    """
    from dpcalc.core import gdp

    upper = min(_gdp_upper(phases, delta, epsilon), _rdp_upper(phases, delta, epsilon))
    tv = _total_variation_upper(phases)
    if delta is not None and tv <= delta:
        upper = 0.0
    elif delta is None:
        upper = min(upper, tv)
    lower = max(_one_step_lower(phase, delta, epsilon) for phase in phases)
    exact_gdp = all(phase.mechanism == "gaussian" and phase.sampling_probability == 1.0 for phase in phases)
    if exact_gdp:
        log_mu = _log_gdp_mu(phases)
        mu = math.exp(log_mu) if log_mu < 700.0 else math.inf
        margin = _CLOSED_FORM_MARGIN
        if delta is not None:
            value = gdp.epsilon_for_delta(delta * (1.0 + margin), mu) * (1.0 - margin) if delta * (1.0 + margin) < 1.0 else 0.0
            lower = max(lower, value if math.isfinite(value) else 0.0)
        else:
            lower = max(lower, gdp.delta_for_epsilon(epsilon * (1.0 + margin), mu) * (1.0 - margin))
    lower = min(lower, upper)
    warnings = [f"outside the PLD grid's numerical range ({reason}): the bounds are closed forms "
                "(mu-GDP or RDP above, one step or the exact mu-GDP below), wider than the grid's."]
    if delta is not None:
        if math.isinf(upper):
            warnings.append("epsilon is astronomically large: no finite upper bound can be certified.")
        eps_hi, eps_lo, d_hi, d_lo = upper, lower, delta, delta
    else:
        eps_hi = eps_lo = epsilon
        d_hi, d_lo = upper, lower
    return PLDResult(
        epsilon=eps_hi, epsilon_lower=eps_lo, epsilon_upper=eps_hi,
        delta=d_hi, delta_lower=d_lo, delta_upper=d_hi,
        accuracy=accuracy, grid_step=0.0, grid_size=0,
        binding="remove", attempts=0, phases=phases, warnings=tuple(warnings),
    )


def tight_epsilon(phases: Sequence[Phase], delta: float, *, accuracy: float = DEFAULT_ACCURACY) -> PLDResult:
    """Certified [epsilon_lower, epsilon_upper] at `delta` for the composition of `phases`.

    Cost: about 0.1 s for the design card (p = 0.004, sigma = 1.1, T = 10000) at the default
    accuracy, 0.2 to 0.25 s for T = 1e6 to 1e7 (one core); a coarser `accuracy` (say 1e-2) is
    several times cheaper, which suits searches that only need to steer. Results are memoised
    (the last _CACHE_SIZE distinct calls), so asking again for the same run is free.
    """
    OPEN_UNIT.check("delta", delta)
    ACCURACY.check("accuracy", accuracy)
    return _cached(_check_phases(phases), delta, None, float(accuracy))


def tight_delta(phases: Sequence[Phase], epsilon: float, *, accuracy: float = DEFAULT_ACCURACY) -> PLDResult:
    """Certified [delta_lower, delta_upper] at `epsilon` for the composition of `phases`."""
    NON_NEGATIVE.check("epsilon", epsilon)
    ACCURACY.check("accuracy", accuracy)
    return _cached(_check_phases(phases), None, float(epsilon), float(accuracy))


def tight_epsilons_over_steps(phase: Phase, delta: float, steps: Sequence[int], *,
                              accuracy: float = DEFAULT_ACCURACY) -> tuple[PLDResult, ...]:
    """Certified epsilon intervals of one phase run for every number of steps in `steps`.

    The same numbers `tight_epsilon` gives for each T (the same bounds S1-S7, each row checked
    against the accuracy), at a fraction of the cost of one call per T: the step is discretised
    once, its binary powers P^(2^k) are computed once, and the sorted T_1 < T_2 < ... are
    reached by running products P^(T_(i+1)) = P^(T_i) * P^(T_(i+1) - T_i), one convolution
    per row when the T are evenly spaced (an epochs sweep). The tilt and windows are those of
    the largest T; every product of discretised dominating pairs is a dominating pair (S1), so
    the order of the convolutions changes only the width of the interval, never its
    soundness. A row whose interval is wider than `accuracy` asks, or that the shared grid
    cannot certify, is recomputed on its own by `tight_epsilon`. Results are in input order.
    """
    OPEN_UNIT.check("delta", delta)
    ACCURACY.check("accuracy", accuracy)
    if not isinstance(phase, Phase):
        raise TypeError(f"phase must be a Phase, got {type(phase).__name__}")
    counts = tuple(steps)
    for count in counts:
        POSITIVE_INTEGER.check("steps", count)
    distinct = sorted(set(counts))
    shared: dict[int, PLDResult] = {}
    if len(distinct) >= _SHARED_MIN_ROWS:
        shared = _shared_steps(phase, float(delta), distinct, float(accuracy))
    return tuple(
        shared.get(count) or tight_epsilon([dataclasses.replace(phase, steps=count)], delta, accuracy=accuracy)
        for count in counts
    )


# Below this many distinct step counts one call per count costs no more than sharing.
_SHARED_MIN_ROWS = 3
# The shared composition's work limit grows with the rows it serves (measured: a 60-epoch sweep
# of the MNIST run costs 5.9e7 bin operations in all, 1e6 a row, and six rows 1.7e7; a row
# accounted on its own about 1.1e7 at the design card).
_SHARED_WORK_PER_ROW = 1e7


def _shared_steps(phase: Phase, delta: float, distinct: list[int], accuracy: float) -> dict[int, PLDResult]:
    """The rows of `tight_epsilons_over_steps` that one shared composition certifies."""
    top = dataclasses.replace(phase, steps=distinct[-1])
    if _out_of_range((top,)) is not None:
        return {}
    rows: dict[int, dict[str, Any]] = {
        count: {"upper": 0.0, "lower": 0.0, "binding": DIRECTIONS[0], "grid_step": 0.0} for count in distinct}
    stats: dict = {}
    try:
        with work.guarded(_WORK_LIMIT + _SHARED_WORK_PER_ROW * len(distinct)):
            setup = _prepare((top,), delta, None, accuracy)
            for position, direction in enumerate(setup.order):
                model = setup.models[direction][0]
                plan = _plan(*setup.tilts[direction], delta, setup.scale, _INF_SHARE, setup.events,
                             setup.per_step_error(setup.reference))
                upper, lower = _step_measures(model, plan)
                for kind, base in (("upper", upper), ("lower", lower)):
                    if kind == "lower" and position > 0 and all(row["binding"] != direction for row in rows.values()):
                        # the first direction's lower bound is a lower bound of the maximum (as in `_attempt`)
                        continue
                    for count, measure in _running_powers(model, base, plan, distinct, stats):
                        row = rows[count]
                        if kind == "upper":
                            value = layers.epsilon_bound(measure, delta)
                        else:
                            # a row is kept only if its interval is at most accuracy * upper wide,
                            # and the upper bounds are known: search that window alone
                            top = row["upper"]
                            window = (top * (1.0 - accuracy), top) if math.isfinite(top) else None
                            value = layers.epsilon_bound(measure, delta, window)
                        if kind == "upper" and value > row["upper"]:
                            row.update(upper=value, binding=direction, grid_step=measure.bulk.h)
                        elif kind == "lower":
                            row["lower"] = max(row["lower"], value)
    except (ArithmeticError, ValueError, MemoryError):
        return {}  # WorkLimitReached included: every row is then accounted on its own
    out = {}
    for count, row in rows.items():
        upper, lower = row["upper"], min(row["lower"], row["upper"])
        if not math.isfinite(upper) or (upper > 0.0 and upper - lower > accuracy * upper):
            continue
        out[count] = PLDResult(
            epsilon=upper, epsilon_lower=lower, epsilon_upper=upper,
            delta=delta, delta_lower=delta, delta_upper=delta,
            accuracy=accuracy, grid_step=row["grid_step"], grid_size=stats.get("bins", 0),
            binding=row["binding"], attempts=1, phases=(dataclasses.replace(phase, steps=count),),
        )
    return out


def _running_powers(model: _PhaseModel, base: layers.Layered, plan: _Plan, counts: list[int], stats: dict):
    """Yield (T, P^T) for the sorted `counts`: binary powers of the step, shared, and running products."""
    coarse = plan.upper_coarse_bins if base.kind == "upper" else plan.lower_coarse_bins
    largest = counts[-1]
    chain = [base]
    stats["bins"] = max(stats.get("bins", 0), base.bins)

    def grown(m: layers.Layered, count: int) -> layers.Layered:
        # the grid an n-fold composition needs (as in `_power`), and the bin limit
        sd = model.sd * math.sqrt(count)
        while 2.0 * m.bulk.h <= sd / coarse:
            m = layers.coarsen_bulk(m)
        m = _limit(m, stats)
        stats["bins"] = max(stats["bins"], m.bins)
        return m

    def product(a: layers.Layered, b: layers.Layered) -> layers.Layered:
        a = layers.align(a, b.bulk.h)
        b = layers.align(b, a.bulk.h)
        return _cut(layers.convolve(a, b), plan, 1)

    def power_of_two(level: int) -> layers.Layered:
        while len(chain) <= level:
            square = _cut(layers.convolve(chain[-1], chain[-1]), plan, max(1, largest >> len(chain)))
            chain.append(grown(square, 1 << len(chain)))
        return chain[level]

    # n-fold compositions computed so far; n is split into two halves of comparable size, so
    # both factors are resolved on the common grid and every measure is at most about log2 n
    # convolutions deep (a running product P^(T_i) * P^(T_(i+1) - T_i) would coarsen the narrow
    # increment once per row, and the errors would add up along the sweep).
    powers: dict[int, layers.Layered] = {1: base}

    def power(count: int) -> layers.Layered:
        if count not in powers:
            if count & (count - 1) == 0:
                powers[count] = power_of_two(count.bit_length() - 1)
            else:
                # best: two known compositions, neither below a quarter (one convolution)
                pairs = [known for known in powers if 4 * known >= count and 2 * known <= count
                         and count - known in powers]
                half = max(pairs) if pairs else max(known for known in powers if known <= count // 2)
                if 2 * half < count // 2:  # nothing close below the half: split at a power of two
                    half = 1 << ((count // 2).bit_length() - 1)
                    power(half)
                powers[count] = grown(product(power(half), power(count - half)), count)
        return powers[count]

    for count in counts:
        yield count, power(count)


@dataclass(frozen=True)
class PrivacyProfile:
    """Certified bounds on the privacy profile delta(eps) of a run at a list of epsilons.

    delta_upper[i] >= delta(epsilons[i]) >= delta_lower[i], delta the maximum over the add and
    remove directions. `grid_step` is the step of the grid used (0 for the closed forms).
    """

    epsilons: tuple[float, ...]
    delta_upper: tuple[float, ...]  # certified: the true delta(eps) (max over add/remove) <= delta_upper
    delta_lower: tuple[float, ...]  # certified lower bound
    phases: tuple[Phase, ...]
    grid_step: float
    warnings: tuple[str, ...] = ()


# The profile composes twice, with the tilts for these quantiles of the asked epsilons, and
# keeps the tighter bound at each epsilon. The error terms of S5 and S6 grow like
# e^(lam (eps_tilt - eps)) below a tilt point (where delta is larger, but not always by as
# much) and delta falls faster than them above it; one tilt in the lower and one in the upper
# part of the range keep both ends within about the accuracy asked.
_PROFILE_TILT_QUANTILES = (0.25, 0.85)


def tight_profile(phases: Sequence[Phase], epsilons: Sequence[float], *,
                  accuracy: float = DEFAULT_ACCURACY) -> PrivacyProfile:
    """Certified [delta_lower, delta_upper] at every epsilon of `epsilons`.

    Each direction is composed as `tight_delta` does, once with the tilt and grid chosen for
    the epsilon at the 0.25 quantile of the list and once for the 0.85 quantile, and the bounds
    of S1-S6 are evaluated at every epsilon from both; every one of them is sound, so the
    smaller upper and the larger lower bound are kept. Cost: about two `tight_delta` calls.
    Outside the grid's numerical range the closed forms of `_fallback` are used at each
    epsilon, and where the grid falls short of the accuracy they tighten either side.
    """
    ACCURACY.check("accuracy", accuracy)
    checked = _check_phases(phases)
    values = tuple(float(value) for value in epsilons)
    if not values:
        raise ValueError("give at least one epsilon")
    for value in values:
        NON_NEGATIVE.check("epsilon", value)
    finite = sorted(value for value in values if math.isfinite(value)) or [0.0]
    tilts = sorted({finite[min(len(finite) - 1, int(q * (len(finite) - 1) + 0.5))] for q in _PROFILE_TILT_QUANTILES})
    reason = _out_of_range(checked)
    points = np.array(values)
    upper = np.ones(len(points))
    lower = np.zeros(len(points))
    warnings: list[str] = []
    grid_step = 0.0
    done = 0
    if reason is None:
        for eps_tilt in tilts:
            sink: dict = {}
            try:
                with work.guarded(_WORK_LIMIT):
                    result = _account_grid(checked, delta=None, epsilon=eps_tilt, accuracy=float(accuracy), sink=sink)
                    this_upper = np.zeros(len(points))
                    this_lower = np.zeros(len(points))
                    for measures in sink["measures"].values():
                        this_upper = np.maximum(this_upper, layers.bound_at(measures["upper"], points))
                        this_lower = np.maximum(this_lower, layers.bound_at(measures["lower"], points))
            except work.WorkLimitReached:
                reason = _work_reason()
                continue
            except (ArithmeticError, ValueError, MemoryError, KeyError) as exc:
                reason = f"the grid computation failed ({type(exc).__name__})"
                continue
            upper = np.minimum(upper, this_upper)
            lower = np.maximum(lower, this_lower)
            warnings.extend(item for item in result.warnings if item not in warnings)
            grid_step = grid_step or result.grid_step
            done += 1
    if done < len(tilts) or warnings:
        # closed forms: the whole answer when the grid failed, a tightening when it fell short
        closed = [_fallback(checked, delta=None, epsilon=value, accuracy=float(accuracy), reason=reason or "")
                  for value in values]
        upper = np.minimum(upper, [item.delta_upper for item in closed])
        lower = np.maximum(lower, [item.delta_lower for item in closed])
        if done == 0:
            warnings = list(closed[0].warnings)
    upper = np.minimum(upper, 1.0)
    lower = np.minimum(lower, upper)
    return PrivacyProfile(
        epsilons=values,
        delta_upper=tuple(float(x) for x in upper),
        delta_lower=tuple(float(x) for x in lower),
        phases=checked, grid_step=grid_step, warnings=tuple(warnings),
    )


# Distinct calls remembered by tight_epsilon / tight_delta (results are immutable).
_CACHE_SIZE = 256


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _cached(phases: tuple[Phase, ...], delta: float | None, epsilon: float | None, accuracy: float) -> PLDResult:
    return _account(phases, delta=delta, epsilon=epsilon, accuracy=accuracy)


def _check_phases(phases: Sequence[Phase]) -> tuple[Phase, ...]:
    phases = tuple(phases)
    if not phases:
        raise ValueError("give at least one phase")
    for phase in phases:
        if not isinstance(phase, Phase):
            raise TypeError(f"phases must be Phase objects, got {type(phase).__name__}")
    return phases


# --------------------------------------------------------------------------------------------
# The largest number of steps within a budget: one shared composition (calibrate --solve T)
# --------------------------------------------------------------------------------------------

# The plan (tilt, windows, grid) of `largest_steps` is made for this many times the estimated
# answer, so that the answer and its neighbour lie within it even when the estimate (a
# central-limit model's, 5-10% off for the Gaussian and Laplace cases tried) is low; the
# results hardly depend on it (1.05 to 2 change epsilon by ~1e-7 relative on the design card,
# by ~1e-5 at p = 1e-4, T = 3e6). When the answer turns out larger, the plan is made again
# for _LARGEST_REPLAN times what is needed, at most _LARGEST_PLANS times in all.
_LARGEST_HEADROOM = 1.5
_LARGEST_REPLAN = 2.0
_LARGEST_PLANS = 3
# After the descent, counts one above the answer are tried one by one (the bounds of the
# shared composition are monotone in T only up to their jitter, ~1e-8 relative); more than
# this many is a contradiction, and the shared answer is given up.
_LARGEST_CREEP = 16


def largest_steps(phase: Phase, delta: float, target_epsilon: float, *, accuracy: float = DEFAULT_ACCURACY,
                  limit: int = 10**9, estimate: float | None = None,
                  neighbours: Callable[[int], tuple[int, int | None]] | None = None,
                  fallback: bool = True) -> tuple[int, PLDResult | None, PLDResult | None] | None:
    """The largest number of steps T <= `limit` of one phase whose certified epsilon_upper at
    `delta` is at most `target_epsilon`, with the certified results at T and at T + 1.

    Returns (T, result at T, result at T + 1): T = 0 (result None) when even one step exceeds
    the target, and the result at T + 1 is None when T = `limit`. The result at T has
    epsilon_upper <= target_epsilon (a certified upper bound at the full `accuracy`: sound, S1-S7)
    and the one at T + 1 exceeds it, both with intervals no wider than `accuracy` asks. These
    are the bounds of one composition shared by all candidate T, not of `tight_epsilon` at T,
    which composes on a grid of its own: the two certified intervals overlap, and their upper
    bounds may differ by up to the width of either (~1e-4 relative at the default accuracy).

    `neighbours`, when given, restricts the answer to admissible step counts (e.g. whole
    epochs): neighbours(t) = (a, b) with a the largest admissible count <= t (0 if none) and b
    the smallest admissible count > t (None if none is <= limit); the answer is then a, and the
    witness b. `estimate` (of the answer, e.g. a central-limit model's) chooses the plan; by
    default the normal approximation of the privacy loss gives it.

    The search (greedy binary descent on one composition): the step is discretised once (the
    plan of `_prepare` for 1.5 times the estimate), its powers P^(2^k) are squared until the
    upper bound exceeds the target (or 2^k passes the limit), and then for k from high to low
    the count + 2^k is kept when its upper bound meets the target. Each candidate is composed
    from the shared powers the lowest first, as `_power` does (a running product
    current * P^(2^k) would coarsen every small factor to the top grid on its own and lose
    ~1e-4 relative in epsilon); the upper measures are small (~600 bins on the design card),
    so these ~log2(T)^2 / 2 products cost a few ms. The lower measures (32 times finer), and
    the other direction (a rough upper bound first, as in `tight_epsilon`), are composed for
    the answer and its witness alone. A grid that falls short of the accuracy is refined as
    `tight_epsilon` refines it. Every product of discretised dominating pairs is a dominating
    pair (S1), so the order of the convolutions changes the width of an interval, never its
    soundness. Cost: 1.0-1.3 `tight_epsilon` calls (design card: 0.10 s against 0.09 s).

    When the shared composition cannot finish (out of the grid's range, a floating-point
    exception, its work limit) or certify (an interval wider than `accuracy`, or bounds that
    contradict the descent), the answer comes from a bisection over `tight_epsilon` calls
    (which relies on its epsilon growing with T), or, with fallback=False, None is returned.
    """
    OPEN_UNIT.check("delta", delta)
    ACCURACY.check("accuracy", accuracy)
    NON_NEGATIVE.check("target_epsilon", target_epsilon)
    POSITIVE_INTEGER.check("limit", limit)
    if not isinstance(phase, Phase):
        raise TypeError(f"phase must be a Phase, got {type(phase).__name__}")
    if neighbours is None:
        neighbours = _next_count(limit)
    found = _largest_shared(phase, float(delta), float(target_epsilon), float(accuracy), int(limit),
                            estimate, neighbours)
    if found is not None or not fallback:
        return found
    return _largest_by_bisection(phase, float(delta), float(target_epsilon), float(accuracy), int(limit),
                                 neighbours)


def _next_count(limit: int) -> Callable[[int], tuple[int, int | None]]:
    return lambda count: (count, count + 1 if count < limit else None)


def _gaussian_estimate(model: _PhaseModel, delta: float, target: float) -> float:
    """T where mu-GDP with mu^2 = T Var(L) (the normal approximation of the loss) meets target."""
    from dpcalc.core import gdp
    from dpcalc.core.special import find_root

    if target <= 0.0 or model.variance <= 0.0:
        return 1.0

    def excess(log_mu: float) -> float:
        return gdp.epsilon_for_delta(delta, math.exp(log_mu)) - target

    low, high = -20.0, 5.0
    if excess(low) >= 0.0:
        return 1.0
    if excess(high) <= 0.0:
        return math.inf
    mu = math.exp(find_root(excess, low, high, rtol=1e-6))
    return mu * mu / model.variance


def _largest_shared(phase: Phase, delta: float, target: float, accuracy: float, limit: int,
                    estimate: float | None, neighbours) -> tuple[int, PLDResult | None, PLDResult | None] | None:
    """`largest_steps` by one shared composition; None when it cannot finish or certify."""
    one = dataclasses.replace(phase, steps=1)
    if _out_of_range((one,)) is not None:
        return None
    try:
        with work.guarded(_WORK_LIMIT):
            if estimate is None or not estimate > 0.0:
                estimate = _gaussian_estimate(_PhaseModel(one, DIRECTIONS[0]), delta, target)
            top = min(float(limit) + 1.0, max(2.0, _LARGEST_HEADROOM * estimate))
            plans = refinements = 0
            setup = None
            while True:
                if setup is None:
                    plans += 1
                    top_steps = int(max(2, math.ceil(top)))
                    if plans > _LARGEST_PLANS or _out_of_range((dataclasses.replace(phase, steps=top_steps),)):
                        return None
                    setup = _prepare((dataclasses.replace(phase, steps=top_steps),), delta, None, accuracy)
                    scale, reference = setup.scale, setup.reference
                outcome = _descend(setup, phase, delta, target, accuracy, limit, top_steps, neighbours,
                                   scale, setup.per_step_error(reference))
                if outcome is None or outcome[0] == "done":
                    return outcome and outcome[1]
                if outcome[0] == "plan":  # the plan was made for too few steps
                    top, setup = _LARGEST_REPLAN * outcome[1], None
                    continue
                # "refine": an interval wider than the accuracy; a finer grid, as `_account_grid` does
                _, ratio, reference, bins, capped = outcome
                refinements += 1
                factor = 2.0 if ratio < 3.5 else 4.0
                if refinements >= _MAX_ATTEMPTS or capped or bins * factor > _MAX_BINS:
                    return None
                scale *= factor
    except (ArithmeticError, ValueError, MemoryError):
        return None  # WorkLimitReached included


def _descend(setup: _Setup, phase: Phase, delta: float, target: float, accuracy: float, limit: int, top: int,
             neighbours, scale: float, min_step: float):
    """One composition of `_largest_shared` with the plan made for `top` steps, on the grid of
    `scale`: ("done", result tuple); ("plan", count) when the plan is too small for `count`
    steps; ("refine", ratio of the width to the accuracy, upper bound, bins, capped) when an
    interval is too wide; None when the bounds contradict the descent."""
    first = setup.order[0]
    model = setup.models[first][0]
    plan = _plan(*setup.tilts[first], delta, scale, _INF_SHARE, setup.events, min_step)
    upper_base, lower_base = _step_measures(model, plan)
    stats: dict = {}
    powers = _PowerChain(model, upper_base, plan, top, stats)

    def epsilon(m: layers.Layered) -> float:
        return layers.epsilon_bound(m, delta)

    bound = min(limit, top)
    uppers: dict[int, tuple[layers.Layered, float]] = {}  # count -> (P^count, its epsilon_upper)

    def upper(count: int) -> float:
        if count not in uppers:
            m = powers.compose(count)
            uppers[count] = (m, epsilon(m))
        return uppers[count][1]

    count = 0
    if upper(1) <= target:
        level = 0
        while (2 << level) <= bound and upper(2 << level) <= target:
            level += 1
        count = 1 << level
        for j in range(level - 1, -1, -1):
            if count + (1 << j) <= bound and upper(count + (1 << j)) <= target:
                count += 1 << j
        # the bounds need not be exactly monotone in T: the next counts are checked one by one
        for _ in range(_LARGEST_CREEP):
            if count >= bound or upper(count + 1) > target:
                break
            count += 1
        else:
            return None
        if count == bound and bound < limit:
            return "plan", 2 * top  # the answer may lie beyond the plan
    answer, witness = neighbours(count)
    if witness is not None and witness > limit:
        witness = None
    if (witness is not None and witness > top) or answer > top:
        return "plan", max(answer, witness or 0)
    counts = [c for c in (answer, witness) if c is not None and c > 0]
    if not counts:
        return None
    rows: dict[int, dict[str, Any]] = {
        c: {"upper": upper(c), "lower": 0.0, "binding": first, "grid_step": uppers[c][0].bulk.h} for c in counts}
    # lower bounds of the binding direction, searched within the window the accuracy allows
    lowers = _PowerChain(model, lower_base, plan, top, stats)
    for c, m in lowers.at(counts):
        top_eps = rows[c]["upper"]
        window = (top_eps * (1.0 - accuracy), top_eps) if math.isfinite(top_eps) else None
        rows[c]["lower"] = layers.epsilon_bound(m, delta, window)
    # the other direction: a rough upper bound first; composed in full only when it may bind
    for other in setup.order[1:]:
        other_model = setup.models[other][0]
        rough_plan = _plan(*setup.tilts[other], delta, scale * 0.5, _INF_SHARE, setup.events, min_step)
        rough_upper, _ = _step_measures(other_model, rough_plan)
        rough = _PowerChain(other_model, rough_upper, rough_plan, top, stats)
        if all(epsilon(m) <= rows[c]["upper"] for c, m in rough.at(counts)):
            continue
        full_plan = _plan(*setup.tilts[other], delta, scale, _INF_SHARE, setup.events, min_step)
        other_upper, other_lower = _step_measures(other_model, full_plan)
        for c, m in _PowerChain(other_model, other_upper, full_plan, top, stats).at(counts):
            value = epsilon(m)
            if value > rows[c]["upper"]:
                rows[c].update(upper=value, binding=other, grid_step=m.bulk.h)
        for c, m in _PowerChain(other_model, other_lower, full_plan, top, stats).at(counts):
            top_eps = rows[c]["upper"]
            window = (top_eps * (1.0 - accuracy), top_eps) if math.isfinite(top_eps) else None
            rows[c]["lower"] = max(rows[c]["lower"], layers.epsilon_bound(m, delta, window))
    widest = max((row["upper"] - min(row["lower"], row["upper"])) / (accuracy * row["upper"])
                 if row["upper"] > 0.0 else 0.0 for row in rows.values())
    if not all(math.isfinite(row["upper"]) for row in rows.values()):
        return None
    if widest > 1.0:
        return "refine", widest, rows[counts[0]]["upper"], stats.get("bins", 0), stats.get("capped", False)
    results: dict[int, PLDResult] = {}
    for c, row in rows.items():
        row_upper, row_lower = row["upper"], min(row["lower"], row["upper"])
        results[c] = PLDResult(
            epsilon=row_upper, epsilon_lower=row_lower, epsilon_upper=row_upper,
            delta=delta, delta_lower=delta, delta_upper=delta,
            accuracy=accuracy, grid_step=row["grid_step"], grid_size=stats.get("bins", 0),
            binding=row["binding"], attempts=1, phases=(dataclasses.replace(phase, steps=c),),
        )
    at_answer = results.get(answer) if answer > 0 else None
    at_witness = results.get(witness) if witness is not None else None
    # the descent's claims, checked on the final bounds: the answer meets the target, its
    # neighbour does not (otherwise the composition contradicts itself: let the caller decide)
    if at_answer is not None and not at_answer.epsilon_upper <= target:
        return None
    if at_witness is not None and not at_witness.epsilon_upper > target:
        return None
    return "done", (answer, at_answer, at_witness)


class _PowerChain:
    """Upper measures P^(2^k) of one step, squared once each, and their products (`largest_steps`).

    The squares are cut and coarsened as `_running_powers` does for a run of `top` steps; a
    product is cut once (multiplicity 1) and left on the grid of its factors, as in `_power`.
    """

    def __init__(self, model: _PhaseModel, base: layers.Layered, plan: _Plan, top: int, stats: dict) -> None:
        self.model, self.plan, self.top, self.stats = model, plan, top, stats
        self.coarse = plan.upper_coarse_bins if base.kind == "upper" else plan.lower_coarse_bins
        self.chain = [base]
        stats["bins"] = max(stats.get("bins", 0), base.bins)

    def _grown(self, m: layers.Layered, count: int) -> layers.Layered:
        sd = self.model.sd * math.sqrt(count)
        while 2.0 * m.bulk.h <= sd / self.coarse:
            m = layers.coarsen_bulk(m)
        m = _limit(m, self.stats)
        self.stats["bins"] = max(self.stats["bins"], m.bins)
        return m

    def power_of_two(self, level: int) -> layers.Layered:
        while len(self.chain) <= level:
            last = self.chain[-1]
            square = _cut(layers.convolve(last, last), self.plan, max(1, self.top >> len(self.chain)))
            self.chain.append(self._grown(square, 1 << len(self.chain)))
        return self.chain[level]

    def product(self, a: layers.Layered, b: layers.Layered, count: int) -> layers.Layered:
        a = layers.align(a, b.bulk.h)
        b = layers.align(b, a.bulk.h)
        # left on the grid of its coarser factor, as `_power` leaves its products
        m = _limit(_cut(layers.convolve(a, b), self.plan, 1), self.stats)
        self.stats["bins"] = max(self.stats["bins"], m.bins)
        return m

    def compose(self, count: int) -> layers.Layered:
        """P^count from the binary powers, the lowest first (as `_power` composes: each
        partial product is coarsened once per level it climbs, which keeps the bounds as
        tight as `tight_epsilon`'s; the highest first coarsens every small factor to the
        top grid on its own and loses ~1e-4 relative in epsilon at T ~ 1e4)."""
        result = None
        for level in range(count.bit_length()):
            if count >> level & 1:
                power = self.power_of_two(level)
                result = power if result is None else self.product(result, power, count)
        assert result is not None
        return result

    def extend(self, known: layers.Layered | None, count: int, target: int) -> layers.Layered:
        """P^target from P^count (`known`; None when count = 0) times P^(target - count)."""
        if known is None:
            return self.compose(target)
        return self.product(known, self.compose(target - count), target)

    def at(self, counts: list[int]):
        """Yield (c, P^c) for the sorted counts, each from the one before."""
        previous, count = None, 0
        for c in counts:
            previous, count = self.extend(previous, count, c), c
            yield c, previous


def _largest_by_bisection(phase: Phase, delta: float, target: float, accuracy: float, limit: int,
                          neighbours) -> tuple[int, PLDResult | None, PLDResult | None]:
    """`largest_steps` by `tight_epsilon` calls: doubling, then bisection (epsilon grows with T)."""

    def at(count: int) -> PLDResult:
        return tight_epsilon([dataclasses.replace(phase, steps=count)], delta, accuracy=accuracy)

    if at(1).epsilon_upper > target:
        good = 0
    else:
        good, bad = 1, None
        while bad is None:
            trial = min(2 * good, limit)
            if trial == good:
                break
            if at(trial).epsilon_upper <= target:
                good = trial
            else:
                bad = trial
        while bad is not None and bad - good > 1:
            middle = (good + bad) // 2
            if at(middle).epsilon_upper <= target:
                good = middle
            else:
                bad = middle
    answer, witness = neighbours(good)
    if witness is not None and witness > limit:
        witness = None
    return answer, (at(answer) if answer > 0 else None), (at(witness) if witness is not None else None)
