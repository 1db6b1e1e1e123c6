"""The one powering engine: n-fold compositions of one discretised step (`Powers`), and the
composition of a whole run's phases (`compose_run`).

Every product of discretised dominating pairs is a dominating pair (S1 of
docs/pld-soundness.md), and every coarsening and truncation keeps the order of S3/S4/S6, so the
order in which the convolutions are taken changes the width of an interval, never its
soundness. What the order does change is how often a factor is coarsened; the two orders
below keep every measure about log2(n) convolutions deep.
"""

from __future__ import annotations

import math
from dataclasses import replace

from dpcalc.core.pld import layers
from dpcalc.core.pld.coarsen import coarsen
from dpcalc.core.pld.layers import Layered
from dpcalc.core.pld.measure import split_growth
from dpcalc.core.pld.model import PhaseModel
from dpcalc.core.pld.plan import (
    LONG_RUN_STEPS,
    LONG_RUN_UPPER_FACTOR,
    TAIL_SHARE,
    Plan,
    lower_coarse_share,
    run_mantissa,
    step_measures,
    step_widened,
    upper_step_measure,
)
from dpcalc.core.record import Mutable, Record

# Hard limit on the bins of any composed measure (each layer's FFT works on twice as many
# doubles): keeps the peak memory of a call near 150 MiB and the time near log2(T) times one
# such convolution. Past it the measure is coarsened and the interval widens (with a warning).
MAX_POWER_BINS = 1 << 18


class Usage(Mutable):
    """What a composition used: the most bins of any measure, and whether the bin limit
    coarsened one (`capped`: a finer grid would not help)."""

    bins: int = 0
    capped: bool = False

    def note(self, m: Layered) -> Layered:
        """Record m's bins; m itself is returned."""
        self.bins = max(self.bins, m.bins)
        return m


class Measures(Record):
    """The composed upper measure of a run in one direction and, when asked for, the lower one."""

    upper: Layered
    lower: Layered | None = None


def limit(m: Layered, usage: Usage) -> Layered:
    """Coarsen (S3/S4: a sound discretisation, only a coarser one) until m has at most
    MAX_POWER_BINS bins, so that memory and time stay bounded whatever T is; the interval
    widens instead, and the accuracy check reports it."""
    while m.bins > MAX_POWER_BINS:
        usage.capped = True
        if m.tail is None or len(m.bulk.t) >= len(m.tail.t):
            m = layers.coarsen_bulk(m)
        else:
            # the whole-measure bounds on E[e^(-theta S)], on the bulk, take the tail's split
            bulk = m.bulk
            if bulk.log_theta_mgf is not None:
                bulk = replace(bulk, log_theta_mgf=bulk.log_theta_mgf + split_growth(m.tail.h, 2.0 * m.tail.h))
            m = Layered(bulk, coarsen(m.tail))
    return m


def cut(m: Layered, plan: Plan, multiplicity: int) -> Layered:
    """Move the light top of the bulk to the tail layer, then cut the windows (S3, S6)."""
    if m.tail is not None:
        # moving a tilted weight w by at most H changes delta by at most about w H (lam + 1)
        # times the Chernoff bound, in each of `multiplicity` copies
        share = TAIL_SHARE / (multiplicity * m.tail.h * (m.bulk.lam + 1.0))
        m = layers.resplit(m, math.log(share))
    return layers.truncate(
        m,
        log_inf_budget=plan.log_inf_budget - math.log(plan.events) - math.log(multiplicity),
        log_rho_budget=plan.log_rho_budget - math.log(plan.events),
        multiplicity=multiplicity,
    )


def product(a: Layered, b: Layered, plan: Plan) -> Layered:
    """a * b on the coarser of their grids, windows cut once (multiplicity 1)."""
    a = layers.align(a, b.bulk.h)
    b = layers.align(b, a.bulk.h)
    return cut(layers.convolve(a, b), plan, 1)


class Powers:
    """The compositions P^n of one discretised step P of a phase, for n up to `top`.

    The binary powers P^(2^k) are squared once each, their windows cut for the top >> k copies
    a run of `top` steps holds, and coarsened to the grid 2^k steps need (S3/S4). Two ways to
    combine them:
    - `compose(n)`: the powers of n's binary digits, the lowest first, each product left on the
      grid of its coarser factor (each partial product is coarsened once per level it climbs;
      the highest first would coarsen every small factor to the top grid on its own and lose
      ~1e-4 relative in epsilon at T ~ 1e4);
    - `balanced(n)`: n split into two known compositions of comparable size, remembered, the
      product coarsened to the grid n steps need (a running product P^(T_i) * P^(T_(i+1) - T_i)
      would coarsen the narrow increment once per row, and the errors would add up along a sweep).
    """

    def __init__(self, model: PhaseModel, base: Layered, plan: Plan, top: int, usage: Usage) -> None:
        self.model, self.plan, self.top, self.usage = model, plan, top, usage
        self.coarse = plan.upper_coarse_bins if base.kind == "upper" else (
            plan.lower_coarse_bins * lower_coarse_share(model.steps, plan.short_runs_coarser,
                                                        step_widened(model, plan, base.bulk.h)))
        if base.kind == "upper" and model.steps >= LONG_RUN_STEPS:
            self.coarse *= LONG_RUN_UPPER_FACTOR
        self.chain = [usage.note(base)]
        self.known: dict[int, Layered] = {1: base}

    def _grown(self, m: Layered, count: int) -> Layered:
        """m on the grid a `count`-fold composition needs, within the bin limit."""
        sd = self.model.sd * math.sqrt(count)
        while 2.0 * m.bulk.h <= sd / self.coarse:
            m = layers.coarsen_bulk(m)
        return self.usage.note(limit(m, self.usage))

    def power_of_two(self, level: int) -> Layered:
        """P^(2^level), squaring the last known power as often as needed."""
        while len(self.chain) <= level:
            last = self.chain[-1]
            copies = max(1, self.top >> len(self.chain))
            square = cut(layers.convolve(last, last, copies), self.plan, copies)
            self.chain.append(self._grown(square, 1 << len(self.chain)))
        return self.chain[level]

    def product(self, a: Layered, b: Layered) -> Layered:
        """a * b left on the grid of its coarser factor, within the bin limit."""
        return self.usage.note(limit(product(a, b, self.plan), self.usage))

    def compose(self, count: int) -> Layered:
        """P^count from the binary powers, the lowest first."""
        result: Layered | None = None
        for level in range(count.bit_length()):
            if count >> level & 1:
                power = self.power_of_two(level)
                result = power if result is None else self.product(result, power)
        assert result is not None, "count must be positive"
        return result

    def extend(self, known: Layered | None, count: int, target: int) -> Layered:
        """P^target from P^count (`known`; None when count = 0) times P^(target - count)."""
        if known is None:
            return self.compose(target)
        return self.product(known, self.compose(target - count))

    def at(self, counts: list[int]) -> list[tuple[int, Layered]]:
        """(c, P^c) for the sorted counts, each from the one before."""
        out = []
        previous, count = None, 0
        for c in counts:
            previous, count = self.extend(previous, count, c), c
            out.append((c, previous))
        return out

    def balanced(self, count: int) -> Layered:
        """P^count as the product of two remembered compositions of comparable size."""
        if count not in self.known:
            if count & (count - 1) == 0:
                self.known[count] = self.power_of_two(count.bit_length() - 1)
            else:
                # best: two known compositions, neither below a quarter (one convolution)
                pairs = [known for known in self.known if 4 * known >= count and 2 * known <= count
                         and count - known in self.known]
                half = max(pairs) if pairs else max(known for known in self.known if known <= count // 2)
                if 2 * half < count // 2:  # nothing close below the half: split at a power of two
                    half = 1 << ((count // 2).bit_length() - 1)
                    self.balanced(half)
                joined = product(self.balanced(half), self.balanced(count - half), self.plan)
                self.known[count] = self._grown(joined, count)
        return self.known[count]


def compose_run(models: list[PhaseModel], plan: Plan, want_lower: bool, usage: Usage) -> Measures:
    """Upper (and lower) measures of the whole run in one direction: each phase's step
    discretised (`plan.step_measures`), raised to its number of steps, and the phases composed."""
    uppers: list[Layered] = []
    lowers: list[Layered] = []
    mantissa = run_mantissa(models, plan)  # the phases' grids must share one lattice of steps
    for model in models:
        steps = model.steps
        if want_lower:
            upper, lower = step_measures(model, plan, align=len(models) == 1, mantissa=mantissa)
            lowers.append(Powers(model, lower, plan, steps, usage).compose(steps))
        else:
            upper = upper_step_measure(model, plan, mantissa)
        uppers.append(Powers(model, upper, plan, steps, usage).compose(steps))
    return Measures(_join(uppers, plan), _join(lowers, plan) if want_lower else None)


def _join(measures: list[Layered], plan: Plan) -> Layered:
    total = measures[0]
    for other in measures[1:]:
        total = product(total, other, plan)
    return total
