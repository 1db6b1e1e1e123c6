"""Two-resolution discretised PLDs: a bulk on a fine grid and a light tail on a coarse one.

The privacy loss of one step of a subsampled mechanism has a narrow bulk (width ~ p) and a
long upper tail of tiny mass. One uniform grid fine enough for the bulk would need millions
of bins to reach the end of the tail. Here a measure is the sum of two layers (`_pld_grid.Tilted`
each): the bulk on the step h and the tail on a step H = 2^K h. Composition expands the
product: bulk * bulk on the fine grid, and the cross and tail products on the coarse grid
after coarsening the bulk (S3/S4 of `dpcalc.core.pld`: each coarsening is itself a valid
discretisation, only less accurate, and it touches only terms whose weight is that of the
tail). After each product the upper end of the bulk, where its tilted weight has become
small, moves to the tail layer; once the bulk's own step has grown to H the layers merge.

Quantities of the whole measure (mass at +inf, dropped lower tails, total mass, the bounds on
E[e^(-theta S)]) live on the bulk layer; the tail layer and the cross products carry none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from dpcalc.core import _pld_grid as grid

U = grid.U


@dataclass
class Layered:
    bulk: grid.Tilted
    tail: grid.Tilted | None = None
    # the bulk coarsened to the tail's step, as the cross products of `convolve` use it (a
    # power of one step enters several products: it is coarsened once); never copied
    _coarse_bulks: dict[float, grid.Tilted] = field(default_factory=dict, init=False, repr=False, compare=False)

    def coarse_bulk(self, h: float) -> grid.Tilted:
        """The bulk alone (`grid.bare`) on the step h."""
        coarse = self._coarse_bulks.get(h)
        if coarse is None:
            coarse = self._coarse_bulks[h] = grid.bare(grid.coarsen_to(self.bulk, h))
        return coarse

    @property
    def kind(self) -> str:
        return self.bulk.kind

    @property
    def steps(self) -> int:
        return self.bulk.steps

    @property
    def bins(self) -> int:
        return len(self.bulk.t) + (len(self.tail.t) if self.tail is not None else 0)

    def layers(self) -> list[grid.Tilted]:
        return [self.bulk] + ([self.tail] if self.tail is not None else [])


def single(m: grid.Tilted) -> Layered:
    return Layered(m, None)


def convolve(a: Layered, b: Layered) -> Layered:
    """a * b: bulk * bulk on the fine grid, the rest on the coarse one."""
    fine = grid.convolve(a.bulk, b.bulk)
    if a.tail is None and b.tail is None:
        return Layered(fine, None)
    coarse_h = max(m.h for m in (a.tail, b.tail) if m is not None)
    terms = []
    a_bulk = a.coarse_bulk(coarse_h)
    b_bulk = b.coarse_bulk(coarse_h)
    a_tail = grid.coarsen_to(a.tail, coarse_h) if a.tail is not None else None
    b_tail = a_tail if b is a else (grid.coarsen_to(b.tail, coarse_h) if b.tail is not None else None)
    if b is a:
        # a_bulk * a_tail twice: one convolution, the sum is the same measure with twice the weight
        cross = grid.convolve(a_bulk, a_tail)
        cross.log_z += math.log(2.0)
        terms.append(cross)
    else:
        if b_tail is not None:
            terms.append(grid.convolve(a_bulk, b_tail))
        if a_tail is not None:
            terms.append(grid.convolve(a_tail, b_bulk))
    if a_tail is not None and b_tail is not None:
        terms.append(grid.convolve(a_tail, b_tail))
    tail = terms[0]
    for term in terms[1:]:
        tail = grid.add(tail, term)
    tail.steps = fine.steps
    return Layered(fine, grid.bare(tail))


def coarsen_bulk(m: Layered) -> Layered:
    """The bulk on a grid twice as coarse; the layers merge when it reaches the tail's step."""
    bulk = grid.coarsen(m.bulk)
    if m.tail is not None and bulk.h >= m.tail.h:
        tail = grid.coarsen_to(m.tail, bulk.h)
        merged = grid.add(bulk, grid.bare(tail))
        # add() summed the whole-measure fields, which only the bulk carried
        merged = replace(
            merged, inf_mass=bulk.inf_mass, drop_rel=bulk.drop_rel, drop_mass=bulk.drop_mass,
            log_mass=bulk.log_mass, log_theta_mgf=bulk.log_theta_mgf, steps=bulk.steps,
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
    above = np.cumsum(np.abs(t)[::-1])[::-1]  # weight of bins >= i
    ratio = round(m.tail.h / bulk.h)
    candidates = np.flatnonzero(above[peak + 1 :] <= limit)
    if len(candidates) == 0:
        return m
    cut = peak + 1 + int(candidates[0])
    # align the cut to the tail grid (a multiple of the tail step), moving it up
    absolute = bulk.k0 + cut
    absolute = -(-absolute // ratio) * ratio
    cut = absolute - bulk.k0
    if cut >= len(t) - 1:
        return m
    top = grid.coarsen_to(grid.piece(bulk, cut, len(t)), m.tail.h)
    kept = replace(bulk, t=bulk.t[:cut].copy())
    kept = grid._renormalise(kept, bulk)
    tail = grid.add(m.tail, top)
    tail.steps = bulk.steps
    return Layered(kept, grid.bare(tail))


def truncate(m: Layered, *, log_inf_budget: float, log_rho_budget: float, multiplicity: int) -> Layered:
    """Windows (S3, S6): the floor on the bulk, the cap on the top layer."""
    if m.tail is None:
        return Layered(
            grid.truncate(m.bulk, log_inf_budget=log_inf_budget, log_rho_budget=log_rho_budget,
                          multiplicity=multiplicity), None)
    bulk = grid.truncate(m.bulk, log_inf_budget=log_inf_budget, log_rho_budget=log_rho_budget,
                         multiplicity=multiplicity, cap=False)
    # The lower end of a lower bound's tail is cut like its bulk's (dropping mass only lowers a
    # lower bound; the cross products with the bulk otherwise extend it downwards by the bulk's
    # width at every product). An upper bound's dropped tails are accounted on its bulk (S6).
    tail = grid.truncate(m.tail, log_inf_budget=log_inf_budget, log_rho_budget=log_rho_budget,
                         multiplicity=multiplicity, floor=m.kind == "lower")
    if tail.inf_mass:
        bulk = replace(bulk, inf_mass=bulk.inf_mass + tail.inf_mass)
        tail = replace(tail, inf_mass=0.0)
    return Layered(bulk, tail)


# --------------------------------------------------------------------------------------------
# Bounds of the profile of a layered measure
# --------------------------------------------------------------------------------------------


class _LayerProfile:
    """Precomputed suffix sums of one layer, for evaluating its part of delta at any eps.

    sum over the layer's bins s > x of m(s) (1 - e^(x - s)) is Z (A_j - e^x B_j), with
    A_j = sum_{i >= j} t_i e^(-lam s_i), B_j likewise with lam + 1, and j the first bin above x;
    the sums are accumulated in log space.
    """

    def __init__(self, layer: grid.Tilted, floor: float = 0.0) -> None:
        self.layer = layer
        # only bins above x contribute at x, and x >= floor (`Profile.at`): bins at losses <= floor are left out
        keep = int(np.searchsorted(layer.losses, floor, side="right"))
        s = layer.losses[keep:]
        t = layer.t[keep:]
        with np.errstate(divide="ignore"):
            log_t = np.where(t > 0.0, np.log(np.where(t > 0.0, t, 1.0)), -math.inf)
        self.s = s
        self.la = np.append(np.logaddexp.accumulate((log_t - layer.lam * s)[::-1])[::-1], -math.inf)
        self.lb = np.append(np.logaddexp.accumulate((log_t - (layer.lam + 1.0) * s)[::-1])[::-1], -math.inf)

    def values(self, x: np.ndarray) -> np.ndarray:
        j = np.searchsorted(self.s, x, side="right")
        log_a, log_b = self.la[j], self.lb[j]
        with np.errstate(invalid="ignore", over="ignore"):
            share = -np.expm1(np.minimum(x + log_b - log_a, 0.0))
            value = np.exp(np.minimum(self.layer.log_z + log_a, 700.0)) * share
        return np.where(np.isfinite(log_a), value, 0.0)


class Profile:
    """Certified bounds of delta(eps) for a layered measure (upper or lower by kind), at
    eps >= floor (the bins at or below the floor take no part)."""

    def __init__(self, m: Layered, floor: float = 0.0) -> None:
        self.kind = m.kind
        self.floor = max(0.0, floor)
        self.parts = [_LayerProfile(layer, self.floor) for layer in m.layers()]
        self.points = np.concatenate([part.s for part in self.parts])

    def at(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if len(x) and not float(x.min()) >= self.floor:
            raise ValueError(f"this profile is evaluated at eps >= {self.floor} only")
        total = np.zeros(len(x))
        error = np.zeros(len(x))
        for position, part in enumerate(self.parts):
            layer = part.layer
            value = part.values(x)
            kappa = grid._kappa(layer.lam)
            base = kappa * layer.err
            if position == 0 and layer.kind == "upper":
                if layer.drop_rel >= 0.5:
                    return np.ones(len(x))
                # S6: dropped lower tails, and their interaction with the mass at +inf
                base += kappa * layer.drop_rel * (1.0 + layer.err) / (1.0 - layer.drop_rel)
                error += 2.0 * layer.drop_mass * layer.inf_mass
                total += layer.inf_mass
            with np.errstate(over="ignore"):
                error += np.exp(np.minimum(layer.log_z - layer.lam * x, 700.0)) * base
            # the error of Z and the rounding of the sums (at most len(t) u relative)
            error += value * (math.expm1(layer.log_z_err) + 8.0 * U * len(layer.t))
            total += value
        if self.kind == "upper":
            return np.minimum(1.0, total + error)
        return np.maximum(0.0, total - error)

    def one(self, eps: float) -> float:
        return float(self.at(np.array([float(eps)]))[0])


def bound_at(m: Layered, x: np.ndarray) -> np.ndarray:
    """Certified delta at the points x (upper or lower bound by kind), vectorised."""
    return Profile(m).at(x)


def delta_bound(m: Layered, eps: float) -> float:
    """Certified delta(eps): an upper bound (kind upper) or a lower bound (kind lower)."""
    return Profile(m).one(eps)


def epsilon_bound(m: Layered, delta: float, window: tuple[float, float] | None = None) -> float:
    """A certified bound on the smallest eps >= 0 with delta(eps) <= delta.

    upper: the smallest eps >= 0 where the upper bound of delta is at most delta (inf if
    none): the true delta is at most delta there. lower: the largest eps where the lower bound
    exceeds delta (0 if none): the true delta exceeds delta there, hence at every smaller eps.
    (The lower bound need not be monotone: its error term grows like e^(-lam eps) away from the
    tilt.) The bound is evaluated at every grid point of every layer, which brackets the
    answer in an interval free of grid points, where it is smooth; a vectorised bisection refines it.

    `window` = (low, high), lower kind only: search [low, high] alone (0 when the lower bound
    exceeds delta nowhere there). When high is the certified upper bound of epsilon the lower
    bound cannot exceed delta above it, so only answers below low are missed; a caller that
    needs the interval no wider than high - low loses nothing, and the profile is built from
    the bins above low only (much cheaper for a long measure).
    """
    floor, ceiling = 0.0, math.inf
    if window is not None:
        if m.kind != "lower":
            raise ValueError("a search window is for lower bounds")
        floor, ceiling = max(0.0, window[0]), window[1]
    profile = Profile(m, floor)
    points = np.concatenate((np.array([floor]), profile.points))
    if math.isfinite(ceiling):
        points = np.append(points[points <= ceiling], max(ceiling, floor))
    points = np.sort(points[points >= floor])
    points = points[np.concatenate(([True], np.diff(points) > 0.0))]
    values = profile.at(points)
    above = values > delta
    if m.kind == "upper":
        if not above[0]:
            return 0.0
        if above[-1]:
            # beyond the last point only the +inf mass and error terms remain
            far = float(points[-1]) + 1.0
            if profile.one(far) > delta:
                return math.inf
            low, high = float(points[-1]), far
        else:
            i = int(np.argmax(~above))  # first point at or below delta
            low, high = float(points[i - 1]), float(points[i])
    else:
        hits = np.flatnonzero(above)
        if len(hits) == 0:
            return 0.0
        i = int(hits[-1])
        if i == len(points) - 1:
            return float(points[i])
        low, high = float(points[i]), float(points[i + 1])
    # Refine the bracket with _REFINE_POINTS evaluations at a time. Any point where the upper
    # bound is at most delta is a valid upper bound of epsilon, and any point where the lower
    # bound exceeds delta a valid lower bound, so the bracket need not hold a unique crossing.
    for _ in range(_REFINE_ROUNDS):
        if high - low <= _REFINE_TOLERANCE * high:
            break
        inner = np.linspace(low, high, _REFINE_POINTS + 2)[1:-1]
        inner = inner[(inner > low) & (inner < high)]
        if len(inner) == 0:
            break
        over = profile.at(inner) > delta
        if m.kind == "upper":
            below = np.flatnonzero(~over)
            if len(below):
                high = float(inner[below[0]])
            k = (below[0] if len(below) else len(inner)) - 1
            if k >= 0:
                low = float(inner[k])
        else:
            hits = np.flatnonzero(over)
            if len(hits):
                low = float(inner[hits[-1]])
            k = (hits[-1] if len(hits) else -1) + 1
            if k < len(inner):
                high = float(inner[k])
    return high if m.kind == "upper" else max(0.0, low)


# The final bracket of `epsilon_bound`: refined 62-fold per round down to a relative width of
# 1e-13 (a few units in the last place; at most 8 rounds from a grid cell).
_REFINE_POINTS = 62
_REFINE_ROUNDS = 8
_REFINE_TOLERANCE = 1e-13
