"""Certified bounds read off a composed (layered) measure: delta at any epsilon, and the
epsilon at a target delta (S5, S6 and the final step of docs/pld-soundness.md).

delta(eps) = E[(1 - e^(eps - S))_+] is evaluated from suffix sums of the tilted masses, with
the error terms of S5 (floating point, kappa(lam) times the L1 error, the error of log Z) and
S6 (dropped lower tails) added for the upper kind and subtracted for the lower kind.
"""

from __future__ import annotations

import math

import numpy as np

from dpcalc.core.pld.layers import Layered
from dpcalc.core.pld.measure import Tilted, U, kappa


class _LayerProfile:
    """Precomputed suffix sums of one layer, for evaluating its part of delta at any eps.

    sum over the layer's bins s > x of m(s) (1 - e^(x - s)) is Z (A_j - e^x B_j), with
    A_j = sum_{i >= j} t_i e^(-lam s_i), B_j likewise with lam + 1, and j the first bin above x;
    the sums are accumulated in log space.
    """

    def __init__(self, layer: Tilted, floor: float = 0.0) -> None:
        self.layer = layer
        # only bins above x contribute at x, and x >= floor (`Profile.at`): bins at losses <= floor are left out
        losses = layer.losses
        keep = int(np.searchsorted(losses, floor, side="right"))
        s = losses[keep:]
        t = layer.t[keep:]
        with np.errstate(divide="ignore"):
            log_t = np.where(t > 0.0, np.log(np.where(t > 0.0, t, 1.0)), -math.inf)
        self.s = s
        self.la = np.append(np.logaddexp.accumulate((log_t - layer.lam * s)[::-1])[::-1], -math.inf)
        self.lb = np.append(np.logaddexp.accumulate((log_t - (layer.lam + 1.0) * s)[::-1])[::-1], -math.inf)
        # the L2 route of S5 (only where it can be the smaller): R_k[j] = sum_(i >= j)
        # e^(-r_k (s_i - s_j)), r_k = 2 lam + k, k = 0, 1, 2, a geometric sum on the uniform grid
        self.rw: list[np.ndarray] | None = None
        if layer.l2 < layer.err and len(s) and layer.lam > 0.0:
            remaining = (len(s) - np.arange(len(s) + 1)) * layer.h  # exact: integers times a power of 2
            self.rw = []
            for k in (0.0, 1.0, 2.0):
                rate = 2.0 * layer.lam + k
                self.rw.append(np.expm1(-rate * remaining) / math.expm1(-rate * layer.h))
            self.s_above = np.append(s, math.inf)  # no bin above x: y = inf, every term 0

    def values(self, x: np.ndarray, j: np.ndarray | None = None) -> np.ndarray:
        """The layer's part of delta at x; j, when given, is the first bin above each x."""
        if j is None:
            j = np.searchsorted(self.s, x, side="right")
        log_a, log_b = self.la[j], self.lb[j]
        with np.errstate(invalid="ignore", over="ignore"):
            share = -np.expm1(np.minimum(x + log_b - log_a, 0.0))
            value = np.exp(np.minimum(self.layer.log_z + log_a, 700.0)) * share
        return np.where(np.isfinite(log_a), value, 0.0)

    def weight_norms(self, x: np.ndarray, j: np.ndarray | None = None) -> np.ndarray:
        """Upper bounds on ||w||_2, w_i = e^(-lam (s_i - x)) (1 - e^(-(s_i - x))) over the layer's
        bins s_i > x (S5: the weights of the errors of t in delta(x) / (Z e^(-lam x))); inf where
        not computed.

        With j the first bin above x and y = s_j - x, sum w_i^2 =
        e^(-2 lam y) (R_0[j] - 2 e^(-y) R_1[j] + e^(-2y) R_2[j]) (`rw`). The cancellation is
        covered by a margin: the sum of the three terms' sizes times their relative error (the
        geometric sums and exponentials to a few u, and the rounding of s_j - x, whose effect
        grows with the rates times the distances).
        """
        if self.rw is None:
            return np.full(len(x), math.inf)
        if len(x) == 0:
            return np.zeros(0)
        lam, s = self.layer.lam, self.s
        if j is None:
            j = np.searchsorted(s, x, side="right")
        r0, r1, r2 = (r[j] for r in self.rw)
        y = self.s_above[j] - x
        span = float(s[-1] - min(float(x.min()), float(s[0]))) + self.layer.h
        eps = 16.0 * U * (8.0 + (2.0 * lam + 2.0) * span)
        e1 = np.exp(-y)
        with np.errstate(under="ignore"):
            e1_r1 = 2.0 * e1 * r1
            e2_r2 = e1 * e1 * r2
            inner = np.maximum(r0 - e1_r1 + e2_r2, 0.0) + (r0 + e1_r1 + e2_r2) * eps
            square = np.exp(-2.0 * lam * y) * inner * (1.0 + eps)
        norms: np.ndarray = np.sqrt(square) * (1.0 + 4.0 * U)
        return norms


class Profile:
    """Certified bounds of delta(eps) for a layered measure (upper or lower by kind), at
    eps >= floor (the bins at or below the floor take no part)."""

    def __init__(self, m: Layered, floor: float = 0.0) -> None:
        self.kind = m.kind
        self.floor = max(0.0, floor)
        self.parts = [_LayerProfile(layer, self.floor) for layer in m.layers()]
        self.points = np.concatenate([part.s for part in self.parts])
        # a mass that is not a number (an overflow upstream) would read as no mass (its log is
        # taken where it is positive): such a measure bounds nothing (`at`)
        self.broken = any(bool(np.isnan(layer.t).any()) for layer in m.layers())

    def at(self, x: np.ndarray) -> np.ndarray:
        """The certified bound of delta at every point of x (each >= the floor): the layers'
        values plus (upper) or minus (lower) the error terms of S5 and S6."""
        x = np.asarray(x, dtype=float)
        if len(x) and not float(x.min()) >= self.floor:
            raise ValueError(f"this profile is evaluated at eps >= {self.floor} only")
        if self.broken:
            return np.full(len(x), 1.0 if self.kind == "upper" else 0.0)
        total = np.zeros(len(x))
        error = np.zeros(len(x))
        for position, part in enumerate(self.parts):
            layer = part.layer
            above = np.searchsorted(part.s, x, side="right")
            value = part.values(x, above)
            weight = kappa(layer.lam)
            # S5: the errors e of t weigh sum_i |e_i| w_i <= min(err max_i w_i, err2 ||w||_2)
            base = np.minimum(weight * layer.err, layer.l2 * part.weight_norms(x, above))
            if position == 0 and layer.kind == "upper":
                if not layer.drop_rel < 0.5:  # (NaN included)
                    return np.ones(len(x))
                # S6: dropped lower tails, and their interaction with the mass at +inf
                base = base + weight * layer.drop_rel * (1.0 + layer.err) / (1.0 - layer.drop_rel)
                error += 2.0 * layer.drop_mass * layer.inf_mass
                total += layer.inf_mass
            with np.errstate(over="ignore"):
                error += np.exp(np.minimum(layer.log_z - layer.lam * x, 700.0)) * base
            # the error of Z and the rounding of the sums (at most len(t) u relative)
            error += value * (math.expm1(layer.log_z_err) + 8.0 * U * len(layer.t))
            total += value
        # A value that is not a number (an overflow upstream: a bound so loose that its terms
        # overflowed) bounds nothing: the upper bound is then 1 and the lower bound 0, both
        # always true (np.fmin and np.fmax return the number where one operand is NaN). Read as
        # NaN, a comparison `> delta` is false, and an epsilon search would take it for a delta
        # below the target.
        if self.kind == "upper":
            return np.fmin(1.0, total + error)
        return np.fmax(0.0, total - error)

    def one(self, eps: float) -> float:
        """`at` for a single epsilon."""
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


def lower_epsilon_within(m: Layered, delta: float, upper: float, accuracy: float) -> float:
    """The lower bound on epsilon (kind lower), searched only within the width `accuracy`
    allows below a certified upper bound `upper` (everywhere when `upper` is not finite): a
    result kept only when its interval is at most accuracy * upper wide loses nothing by it."""
    window = (upper * (1.0 - accuracy), upper) if math.isfinite(upper) else None
    return epsilon_bound(m, delta, window)
