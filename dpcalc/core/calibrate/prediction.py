"""Where the calibration search expects the boundary: the model plus an interpolated residual.

Positions are keys k = s log x, with s = +1 when epsilon grows with the quantity x and -1 for
sigma, so that epsilon grows with k everywhere. The accountant's log epsilon F differs from the
model's log m (dpcalc.core.calibrate.model) by a residual r = F - log m that varies slowly and
smoothly, so the boundary is predicted where log m(k) + r(k) = log E, with r interpolated
linearly between the two most recent evaluations (held constant after the first), and its
slope taken from the steering evaluations while only one evaluation of the accountant is known.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from dpcalc.core.calibrate.grids import Value
from dpcalc.core.calibrate.model import LOG_CLIP
from dpcalc.core.special import find_root

# The estimate stopping rule trusts an interpolation of the residual only between accountant
# points within this distance (in log x) of the boundary: over 2% the residual's curvature is
# negligible (measured: the PLD epsilon's log-log second differences are ~1e-5).
_INTERPOLATION_REACH = 0.02

# With one accountant point, the stopping rule extrapolates from it with the slope of the two
# nearest steering points, which may lie this far (in log x) from the boundary. The
# extrapolation spans at most the precision, so a slope error s moves the estimated boundary
# by s * precision; over 5% the steering slope differs from the accountant's local slope by
# about 1% (measured: 0.4-0.6% for two points 0.3% apart, plus the residual's curvature).
_STEERING_REACH = 0.05

# ... and the accountant points it rests on must have an epsilon within this distance (in log
# epsilon) of the target. A point within the precision of the boundary is far closer (|d log
# epsilon / d log x| * precision); two neighbouring points far from the target (say epsilon
# 1e-8 against a target 1, where the accountant's jitter dwarfs their difference) could
# otherwise suggest any slope.
_ESTIMATE_LOG_EPSILON_REACH = 0.1

# r(k), the residual as a function of the position
Residual = Callable[[float], float]


@dataclass
class Point:
    """An evaluated value: its position, the epsilon there, and the residual it gives."""

    value: Value
    key: float  # position: log x, sign-adjusted so that epsilon grows with it
    epsilon: float
    passes: bool
    residual: float | None  # log(epsilon / model epsilon), None when either is 0 or inf


class Predictor:
    """The points evaluated so far (accountant and steering), and the boundary they predict.

    `model` is the log epsilon of the model at a real value x; `prior_residual` stands in for
    the residual before any point is known (a previous answer's, see `calibrate`'s `hint`).
    """

    def __init__(self, model: Callable[[float], float], target: float, sign: int, start_x: float,
                 prior_residual: float, k_min: float, k_max: float) -> None:
        self.model = model
        self.target = target
        self.log_target = math.log(target) if target > 0.0 else None
        self.sign = sign
        self.prior_residual = prior_residual
        self.k_min, self.k_max = k_min, k_max  # the most and least private ends
        self.start_key = self.sign * math.log(start_x)
        self.steering_points: list[Point] = []
        self.order: list[Point] = []  # accountant points in evaluation order

    # positions ------------------------------------------------------------------------------
    def _key(self, value: Value) -> float:
        return self.sign * math.log(float(value))

    def _x(self, key: float) -> float:
        return math.exp(self.sign * key)

    def _model_at(self, key: float) -> float:
        value = self.model(self._x(key))
        return max(-LOG_CLIP, min(LOG_CLIP, value))

    def _point(self, value: Value, epsilon: float) -> Point:
        key = self._key(value)
        residual = None
        if 0.0 < epsilon < math.inf:
            residual = math.log(epsilon) - self._model_at(key)
        return Point(value, key, epsilon, epsilon <= self.target, residual)

    # prediction -----------------------------------------------------------------------------
    def _residual(self, best: Point | None, fail: Point | None,
                  accountant_only: bool = False) -> tuple[Residual | None, list[Point]]:
        """r(k) for the prediction, and the anchors it rests on (None: not enough points).

        Accountant points set the level; the slope comes from two accountant points when there
        are two, else from two steering points, else it is 0. The most recent points are used
        (a converging search evaluates ever closer to the answer), the bracket ends first.
        """
        own = [p for p in (best, fail) if p is not None and p.residual is not None]
        own += [p for p in reversed(self.order) if p.residual is not None and p not in own]
        steering = [p for p in reversed(self.steering_points) if p.residual is not None]
        if len(own) >= 2:
            anchors = own[:2]
        elif accountant_only and not (len(own) == 1 and len(steering) >= 2):
            return None, []
        elif len(own) == 1 and len(steering) >= 2:
            a, b = steering[0], steering[1]
            if a.key == b.key:
                return (None, []) if accountant_only else (_constant(_known_residual(own[0])), own)
            level = own[0]
            return _line(level, _slope(a, b)), [level, a, b]
        elif own:
            return _constant(_known_residual(own[0])), own
        elif steering:
            anchors = steering[:2]
        else:
            return _constant(self.prior_residual), []
        if len(anchors) == 1 or anchors[0].key == anchors[1].key:
            return _constant(_known_residual(anchors[0])), anchors
        a, b = anchors
        return _line(a, _slope(a, b)), anchors

    def _predict(self, best: Point | None, fail: Point | None, accountant_only: bool = False) -> float | None:
        """The key where model + residual meets the target, or None."""
        log_target = self.log_target
        if log_target is None:
            return None
        residual, anchors = self._residual(best, fail, accountant_only)
        if residual is None:
            return None

        def excess(key: float) -> float:
            return self._model_at(key) + residual(key) - log_target

        if best is not None and fail is not None:
            low, high = best.key, fail.key
            if excess(low) < 0.0 < excess(high):
                return find_root(excess, low, high, rtol=1e-12)
            return None
        # one side known (or none): walk from the nearest known point toward the other side
        # until the sign changes, then solve on that bracket
        known = best if best is not None else fail
        if known is not None:
            origin = known.key
        elif anchors:
            origin = anchors[0].key
        else:
            origin = self.start_key
        f_origin = excess(origin)
        if f_origin == 0.0:
            return origin
        direction = 1.0 if f_origin < 0.0 else -1.0
        step = 0.05
        previous, f_previous = origin, f_origin
        for _ in range(60):
            key = min(max(previous + direction * step, self.k_min - 1.0), self.k_max + 1.0)
            f_key = excess(key)
            if (f_key > 0.0) != (f_previous > 0.0) or f_key == 0.0:
                low, high = sorted((previous, key))
                return find_root(excess, low, high, rtol=1e-12)
            if key <= self.k_min - 1.0 or key >= self.k_max + 1.0:
                return None
            previous, f_previous = key, f_key
            step *= 2.0
        return None

    def _estimated_boundary(self, best: Point | None, fail: Point | None) -> float | None:
        """The boundary interpolated between two accountant points, when both lie near it
        (decimal grids: the search asks only there)."""
        if best is None or self.log_target is None:
            return None
        predicted = self._predict(best, fail, accountant_only=True)
        if predicted is None:
            return None
        _, anchors = self._residual(best, fail, accountant_only=True)
        if not anchors:
            return None
        for anchor in anchors:
            own = any(anchor is point for point in self.order)
            if abs(anchor.key - predicted) > (_INTERPOLATION_REACH if own else _STEERING_REACH):
                return None
            if own and abs(math.log(anchor.epsilon) - self.log_target) > _ESTIMATE_LOG_EPSILON_REACH:
                return None
        return predicted


def _constant(value: float) -> Residual:
    """r(k) = value: the residual held constant."""
    return lambda key: value


def _known_residual(point: Point) -> float:
    """The residual of a point taken from those that have one (the lists in `_residual`)."""
    assert point.residual is not None, "only points with a residual are anchors"
    return point.residual


def _slope(a: Point, b: Point) -> float:
    """dr/dk between two points with residuals at different keys."""
    return (_known_residual(b) - _known_residual(a)) / (b.key - a.key)


def _line(anchor: Point, slope: float) -> Residual:
    """r(k) through the anchor's residual with the given slope."""
    level, key0 = _known_residual(anchor), anchor.key
    return lambda key: level + slope * (key - key0)

