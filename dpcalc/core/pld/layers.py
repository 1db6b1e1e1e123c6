"""Two-resolution discretised PLDs: a bulk on a fine grid and a light tail on a coarse one.

The privacy loss of one step of a subsampled mechanism has a narrow bulk (width ~ p) and a
long upper tail of tiny mass. One uniform grid fine enough for the bulk would need millions
of bins to reach the end of the tail. Here a measure is the sum of two layers (`measure.Tilted`
each): the bulk on the step h and the tail on a step H = 2^K h. Composition expands the
product: bulk * bulk on the fine grid, and the cross and tail products on the coarse grid
after coarsening the bulk (S3/S4 of docs/pld-soundness.md: each coarsening is itself a valid
discretisation, only less accurate, and it touches only terms whose weight is that of the
tail). After each product the upper end of the bulk, where its tilted weight has become
small, moves to the tail layer; once the bulk's own step has grown to H the layers merge.

Quantities of the whole measure (mass at +inf, dropped lower tails, total mass, the bounds on
E[e^(-theta S)]) live on the bulk layer; the tail layer and the cross products carry none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from dpcalc.core.pld import fft
from dpcalc.core.pld import truncate as one_layer
from dpcalc.core.pld.coarsen import coarsen, coarsen_to
from dpcalc.core.pld.measure import Tilted, add, bare, piece, renormalise, replace, split_growth


@dataclass
class Layered:
    """A measure as the sum of a bulk on a fine grid and an optional light tail on a coarser one
    (S3 of docs/pld-soundness.md); the whole-measure quantities live on the bulk."""

    bulk: Tilted
    tail: Tilted | None = None
    # the bulk coarsened to the tail's step, as the cross products of `convolve` use it (a
    # power of one step enters several products: it is coarsened once); never copied
    _coarse_bulks: dict[float, Tilted] = field(default_factory=dict, init=False, repr=False, compare=False)

    def coarse_bulk(self, h: float) -> Tilted:
        """The bulk alone (`bare`) on the step h."""
        coarse = self._coarse_bulks.get(h)
        if coarse is None:
            coarse = self._coarse_bulks[h] = bare(coarsen_to(self.bulk, h))
        return coarse

    @property
    def kind(self) -> str:
        """"upper" or "lower": which side of delta the measure bounds."""
        return self.bulk.kind

    @property
    def steps(self) -> int:
        """How many steps of the phase the measure composes."""
        return self.bulk.steps

    @property
    def bins(self) -> int:
        """The number of grid points held, over both layers."""
        return len(self.bulk.t) + (len(self.tail.t) if self.tail is not None else 0)

    def layers(self) -> list[Tilted]:
        """The layers, the bulk first."""
        return [self.bulk] + ([self.tail] if self.tail is not None else [])


def single(m: Tilted) -> Layered:
    """A one-grid measure as a layered one (no tail)."""
    return Layered(m, None)


def convolve(a: Layered, b: Layered, copies: int = 1) -> Layered:
    """a * b: bulk * bulk on the fine grid, the rest on the coarse one; `copies` as in
    `fft.convolve`."""
    fine = fft.convolve(a.bulk, b.bulk, copies)
    if a.tail is None and b.tail is None:
        return Layered(fine, None)
    coarse_h = max(m.h for m in (a.tail, b.tail) if m is not None)
    if fine.log_theta_mgf is not None:
        # the whole product's bounds on E[e^(-theta S)] (on the bulk): the cross and tail products
        # are of factors coarsened from the bulk's step to coarse_h, each by at most split_growth
        fine.log_theta_mgf = fine.log_theta_mgf + 2.0 * split_growth(fine.h, coarse_h)
    terms = []
    a_bulk = a.coarse_bulk(coarse_h)
    b_bulk = b.coarse_bulk(coarse_h)
    a_tail = coarsen_to(a.tail, coarse_h) if a.tail is not None else None
    b_tail = a_tail if b is a else (coarsen_to(b.tail, coarse_h) if b.tail is not None else None)
    if b is a and a_tail is not None:
        # a_bulk * a_tail twice: one convolution, the sum is the same measure with twice the weight
        cross = fft.convolve(a_bulk, a_tail, copies)
        cross.log_z += math.log(2.0)
        terms.append(cross)
    else:
        if b_tail is not None:
            terms.append(fft.convolve(a_bulk, b_tail, copies))
        if a_tail is not None:
            terms.append(fft.convolve(a_tail, b_bulk, copies))
    if a_tail is not None and b_tail is not None:
        terms.append(fft.convolve(a_tail, b_tail, copies))
    tail = terms[0]
    for term in terms[1:]:
        tail = add(tail, term)
    tail.steps = fine.steps
    return Layered(fine, bare(tail))


def coarsen_bulk(m: Layered) -> Layered:
    """The bulk on a grid twice as coarse; the layers merge when it reaches the tail's step."""
    bulk = coarsen(m.bulk)
    if m.tail is not None and bulk.h >= m.tail.h:
        tail = coarsen_to(m.tail, bulk.h)
        merged = add(bulk, bare(tail))
        # add() summed the whole-measure fields, which only the bulk carried
        # (the tail coarsened to the bulk's step: the whole-measure bounds take its growth)
        whole_mgf = None if bulk.log_theta_mgf is None else bulk.log_theta_mgf + split_growth(m.tail.h, bulk.h)
        merged = replace(
            merged, inf_mass=bulk.inf_mass, drop_rel=bulk.drop_rel, drop_mass=bulk.drop_mass,
            log_mass=bulk.log_mass, log_theta_mgf=whole_mgf, steps=bulk.steps,
        )
        return Layered(merged, None)
    return Layered(bulk, m.tail)


def align(a: Layered, h: float) -> Layered:
    """Coarsen the bulk until its step is at least h."""
    while a.bulk.h < h:
        a = coarsen_bulk(a)
    return a


def resplit(m: Layered, log_weight_limit: float) -> Layered:
    """Move the upper end of the bulk into the tail layer.

    The bins above the first point (above the bulk's peak) beyond which the bulk's tilted
    weight is at most exp(log_weight_limit) (relative to the whole measure) are coarsened to
    the tail's step (S3/S4) and added to the tail.
    """
    if m.tail is None:
        return m
    bulk = m.bulk
    t = bulk.t
    peak = int(np.argmax(t))
    # weight relative to the whole measure: bulk weights are relative to the bulk's own Z
    total_log_z = float(np.logaddexp(bulk.log_z, m.tail.log_z))
    limit = math.exp(log_weight_limit + total_log_z - bulk.log_z)
    light = _light_top(t, limit)
    cut = max(len(t) - light, peak + 1)  # the first bin above the peak from which up the weight is at most the limit
    if cut >= len(t):
        return m
    ratio = round(m.tail.h / bulk.h)
    # align the cut to the tail grid (a multiple of the tail step), moving it up
    absolute = bulk.k0 + cut
    absolute = -(-absolute // ratio) * ratio
    cut = absolute - bulk.k0
    if cut >= len(t) - 1:
        return m
    top = coarsen_to(piece(bulk, cut, len(t)), m.tail.h)
    kept = replace(bulk, t=bulk.t[:cut].copy())
    kept = renormalise(kept, bulk)
    if kept.log_theta_mgf is not None:  # the top moved was coarsened to the tail's step
        kept.log_theta_mgf = kept.log_theta_mgf + split_growth(bulk.h, m.tail.h)
    tail = add(m.tail, top)
    tail.steps = bulk.steps
    return Layered(kept, bare(tail))


def _light_top(t: np.ndarray, limit: float) -> int:
    """How many of the top bins of t weigh, from each up, at most `limit`.

    The weight from bin len(t) - 1 - j up is the running sum np.cumsum(np.abs(t)[::-1])[j], of
    non-negative terms, so non-decreasing in j (each rounded partial sum too; a NaN stays, and
    sorts last): the light bins are the top ones, counted by bisection. The running sum is taken
    a piece at a time from the top, each piece continuing from the last sum before it (the same
    additions in the same order, so the same floats), and stops at the first piece that passes
    the limit: the light top is often a small part of a long bulk."""
    if limit != limit:  # NaN: no weight is at most it
        return 0
    n, top = len(t), t[::-1]
    size = max(1024, n // 4)
    light, carry = 0, None
    for start in range(0, n, size):
        weights = np.abs(top[start : start + size])
        if carry is None:
            sums = np.cumsum(weights)
        else:
            sums = np.cumsum(np.concatenate(([carry], weights)))[1:]
        count = int(np.searchsorted(sums, limit, side="right"))
        light += count
        if count < len(sums):
            break
        carry = sums[-1]
    return light


def truncate(m: Layered, *, log_inf_budget: float, log_rho_budget: float, multiplicity: int) -> Layered:
    """Windows (S3, S6): the floor on the bulk, the cap on the top layer."""
    if m.tail is None:
        return Layered(
            one_layer.truncate(m.bulk, log_inf_budget=log_inf_budget, log_rho_budget=log_rho_budget,
                          multiplicity=multiplicity), None)
    bulk = one_layer.truncate(m.bulk, log_inf_budget=log_inf_budget, log_rho_budget=log_rho_budget,
                         multiplicity=multiplicity, cap=False)
    # The lower end of a lower bound's tail is cut like its bulk's (dropping mass only lowers a
    # lower bound; the cross products with the bulk otherwise extend it downwards by the bulk's
    # width at every product). An upper bound's dropped tails are accounted on its bulk (S6).
    # the tail's mass above its cap is at most the whole measure's, whose bounds on
    # E[e^(-theta S)] the bulk carries
    tail = one_layer.truncate(m.tail, log_inf_budget=log_inf_budget, log_rho_budget=log_rho_budget,
                         multiplicity=multiplicity, floor=m.kind == "lower", whole_theta_mgf=m.bulk.log_theta_mgf)
    if tail.inf_mass:
        bulk = replace(bulk, inf_mass=bulk.inf_mass + tail.inf_mass)
        tail = replace(tail, inf_mass=0.0)
    return Layered(bulk, tail)


