"""The calibration search: the pass/fail boundary of epsilon(value) <= target on a grid.

Positions are logs of the quantity. A cheap model steers: the central-limit GDP epsilon m(x)
of the same run, continuous in the quantity x (BDLS Thm 4 with real T; DRS Cor. 2.13). The
accountant's log epsilon F differs from log m by a residual r = F - log m that varies slowly
and smoothly, so each next point solves log m(x) + r(x) = log E, with r interpolated linearly
between the two most recent evaluations (held constant after the first). The search starts at
the model's own answer. For gdp (where r = 0) this is two evaluations; for rdp three to five.
For pld, two to four steering evaluations at accuracy 1.6e-2 (the upper bound alone, of the
leading direction, `pld.api.steering_epsilon`: a sixth to a fifth of the cost of a full
evaluation each) first learn the slope of r near the answer; one more at accuracy 4e-3 (upper bound alone) at the last of
them predicts the level of the full-accuracy epsilon there (Richardson extrapolation in the grid
step, see engines.LEVEL_ACCURACY), so that the first full evaluation already lands within ~5e-5 of
the boundary, placed 0.4 precision inside the passing side: one full evaluation in most runs
(the answer's), two when the prediction misses. Safeguards: a prediction outside the current bracket, or a bracket
that fails to halve in two steps, is replaced by the geometric midpoint; without a prediction
(E = 0, or an epsilon of 0 or inf) the bracket is found by steps growing fourfold and then
bisected. Nothing starts a solver on an interval that does not bracket (see special.find_root).

The search's answer never rests on the model or on steering: it returns accountant points
only (`Outcome`), and `calibrate` checks the answer's epsilon again before the result is built.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from dpcalc.core.calibrate.grids import Grid, Value
from dpcalc.core.calibrate.prediction import Point, Predictor

# A search that has not converged after this many evaluations is a bug (each step at least
# halves the bracket, and the bracket starts at most ~60 doublings wide).
_MAX_EVALUATIONS = 200

# With one side of the boundary known, a prediction made from a point whose epsilon is more
# than a factor e^2 from the target moves the search at least as far as the expansion would
# (fourfold steps): far from the target a poor model can predict a boundary next to the point.
# A sweep row's first point (the previous row's answer, target 2x apart) is well within it.
_FAR_LOG_EPSILON = 2.0

# Steering evaluations (the PLD accountant's upper bound at engines.STEERING_ACCURACY): at
# least two (a slope), at most four; steering stops once the last one is within STEERING_CLOSE
# (in log epsilon) of the target: the slope then carries the level below over at most ~0.3% in
# sigma. When the last two lie on either side of the target, the level's point lies between
# them, where the line through them errs by at most |r''| (k - a)(b - k) / 2 (r'' the residual's
# curvature): STEERING_CLOSE_BRACKETED suffices. Measured on 60 runs (p 1e-3..0.15, T 1e2..2e4,
# target 0.3..8) and five target sweeps: no more full evaluations than with STEERING_CLOSE, 3
# (and 2) steering evaluations fewer; 0.02 cost three more full evaluations.
STEERING_MIN, STEERING_MAX = 2, 4
STEERING_CLOSE = 0.005
STEERING_CLOSE_BRACKETED = 0.01

# First step of the search for a bracket when no prediction is available (E = 0, or an
# epsilon of 0 or inf), in log x; it grows fourfold per evaluation. The start is the model's
# answer, so the first steps are small.
_EXPANSION_STEP = 0.05


@dataclass
class Outcome:
    """What the search found: the answer's point and its evidence, or the closest infeasible one."""

    best: Point | None  # the passing point nearest the answer
    rejected: Point | None  # the failing neighbour, when it was evaluated
    closest: Point | None  # when infeasible: the most private point, which fails
    at_bound: bool
    evaluations: int
    boundary: float | None = None  # interpolated value where epsilon = target (decimal grids)

    @property
    def reported(self) -> Point:
        """The point a result reports: the answer's, or when infeasible the closest one."""
        point = self.best if self.best is not None else self.closest
        assert point is not None, "a search ends with an answer or with the closest point"
        return point


class Search(Predictor):
    """Find the pass/fail boundary of epsilon(value) <= target on a grid (see the module docstring).

    Positions are keys k = s log x with s = +1 when epsilon grows with x and -1 for sigma, so
    that epsilon grows with k everywhere: passing points lie below the boundary.

    `steer`, when given, is a cheaper and coarser version of the accountant (the PLD accountant
    at a lower accuracy): the first `steering` evaluations use it to learn the shape of the
    residual near the answer; its points only steer and are never returned or used as
    evidence. `level`, when given, predicts the accountant's epsilon at the last steering
    value; the steering residuals are then shifted to that level, so that the first accountant
    evaluation lands next to the boundary. With `estimate`, the search may also stop at a
    passing point whose distance to the boundary, interpolated between two evaluations of the
    accountant itself (or extrapolated from one with the steering slope), is within the
    precision, without evaluating the failing neighbour.
    """

    def __init__(self, evaluate: Callable[[Value], float], model: Callable[[float], float], grid: Grid,
                 target: float, sign: int, precision: float, start_x: float, prior_residual: float,
                 *, steer: Callable[[Value], float] | None = None, steering: int = 0,
                 level: Callable[[Value, float], float | None] | None = None, estimate: bool = False) -> None:
        most_private, least_private = (grid.low, grid.high) if sign > 0 else (grid.high, grid.low)
        super().__init__(model, target, sign, start_x, prior_residual,
                         sign * math.log(float(most_private)), sign * math.log(float(least_private)))
        self.evaluate = evaluate
        self.grid = grid
        self.precision = precision
        # With an interpolated stop the search aims this far inside the passing side of the
        # predicted boundary: 0.4 precision clears the accountant's jitter (~2e-5 relative in
        # sigma, measured for pld) and leaves the answer within the precision.
        self.margin = 0.4 * math.log1p(precision)
        # The first evaluation after a level prediction aims into the window [boundary,
        # boundary (1 + precision)] that lets the search stop at once. Measured on 20 runs (p
        # 1e-3..0.15, T 1e2..2e4, target 0.3..8, precision 1e-4): aiming 0.45 precision inside
        # landed 0.49 (median) inside, from -0.10 to 1.16, as the level prediction errs by up
        # to ~1e-4 in epsilon and rounding to the grid moves up to precision / 10 inside; 0.3
        # centres the landings in the window (18 of the 20 land in it).
        self.first_margin = 0.3 * math.log1p(precision)
        self.steer = steer
        self.steering_left = steering if steer is not None else 0
        self.level = level
        self.estimate = estimate and not grid.integer
        self.points: dict[Value, Point] = {}
        self.widths: list[float] = []
        self.calls = 0

    # positions ------------------------------------------------------------------------------
    def _toward_pass(self, key: float) -> Value:
        """The grid value at or just below `key` (never on the failing side of it)."""
        x = self._x(key)
        return self.grid.down(x) if self.sign > 0 else self.grid.up(x)

    def _toward_fail(self, key: float) -> Value:
        """The grid value just above `key` (strictly on the failing side of a grid value)."""
        x = self._x(key)
        value = self.grid.up(x) if self.sign > 0 else self.grid.down(x)
        if value == self._toward_pass(key):
            value = self._fail_neighbour(value)
        return value

    def _fail_neighbour(self, value: Value) -> Value:
        """The adjacent grid value on the failing side."""
        grid = self.grid
        return grid.above(value) if self.sign > 0 else grid.below(value)  # type: ignore[arg-type]  # value is of grid's kind

    def _adjacent(self, best: Point, fail: Point) -> bool:
        return self._fail_neighbour(best.value) == fail.value

    def _clamp(self, key: float) -> float:
        return min(max(key, self.k_min), self.k_max)

    # state ----------------------------------------------------------------------------------
    def _add(self, value: Value) -> Point:
        point = self.points.get(value)
        if point is not None:
            return point
        self.calls += 1
        point = self._point(value, self.evaluate(value))
        self.points[value] = point
        self.order.append(point)
        return point

    def _add_steering(self, value: Value) -> None:
        assert self.steer is not None, "steering evaluations are made only with `steer` (steering_left)"
        self.calls += 1
        self.steering_points.append(self._point(value, self.steer(value)))

    def _bracket(self) -> tuple[Point | None, Point | None]:
        fails = [p for p in self.points.values() if not p.passes]
        fail = min(fails, key=lambda p: p.key) if fails else None
        passes = [p for p in self.points.values() if p.passes and (fail is None or p.key < fail.key)]
        best = max(passes, key=lambda p: p.key) if passes else None
        return best, fail

    # the next value -------------------------------------------------------------------------
    def _next(self, best: Point | None, fail: Point | None) -> Value:
        predicted = self._predict(best, fail)
        if best is not None and fail is not None:
            width = fail.key - best.key
            self.widths.append(width)
            stalled = len(self.widths) >= 3 and self.widths[-1] > 0.5 * self.widths[-3]
            candidate = None
            if predicted is not None and not stalled:
                # the grid value next to the prediction on the side whose known point is farther
                # away; with an interpolated stop, a little inside the passing side
                if self.estimate:
                    candidate = self._toward_pass(predicted - self.margin)
                elif predicted - best.key > fail.key - predicted:
                    candidate = self._toward_pass(predicted)
                else:
                    candidate = self._toward_fail(predicted)
            if candidate is None or not self._inside(candidate, best, fail):
                candidate = self._midpoint(best, fail)
            return candidate
        known = best if best is not None else fail
        if known is not None and predicted is not None and self._far(known):
            # Far from the target the prediction rests on a poor model (or on points whose
            # difference is the accountant's jitter): move at least as far as the expansion
            # would, and toward the missing side.
            direction = 1.0 if best is not None else -1.0
            expansion = _EXPANSION_STEP * 4.0 ** min(len(self.points) - 1, 40)
            distance = max(direction * (predicted - known.key), expansion)
            return self._one_sided(best, fail, known.key + direction * distance, predicted)
        if predicted is None:
            if known is None:  # neither side known yet
                return self._toward_pass(self._clamp(self.start_key))
            direction = 1.0 if best is not None else -1.0
            key = known.key + direction * _EXPANSION_STEP * 4.0 ** min(len(self.points) - 1, 40)
        elif self.estimate and (best is not None or self.points):
            key = predicted - self.margin
        elif self.estimate and self.steering_points:
            key = predicted - self.first_margin
        else:
            key = predicted
        return self._one_sided(best, fail, key, predicted)

    def _far(self, point: Point) -> bool:
        """Whether the point's epsilon is more than a factor e^_FAR_LOG_EPSILON from the target."""
        if self.log_target is None or not 0.0 < point.epsilon < math.inf:
            return True
        return abs(math.log(point.epsilon) - self.log_target) > _FAR_LOG_EPSILON

    def _one_sided(self, best: Point | None, fail: Point | None, key: float, predicted: float | None) -> Value:
        """The grid value at `key` when at most one side of the boundary is known (see _next)."""
        key = self._clamp(key)
        candidate = self._toward_pass(key) if best is None or self.estimate else self._toward_fail(key)
        # never repeat a point, and move toward the missing side
        known = best if best is not None else fail
        if known is not None and (candidate in self.points
                                  or (best is not None and self._key(candidate) <= best.key)
                                  or (best is None and self._key(candidate) >= known.key)):
            step = _EXPANSION_STEP if predicted is None else 1e-6
            for _ in range(200):
                key = self._clamp(known.key + (step if best is not None else -step))
                candidate = self._toward_fail(key) if best is not None else self._toward_pass(key)
                if candidate not in self.points:
                    break
                step *= 2.0
        return candidate

    def _inside(self, value: Value, best: Point, fail: Point) -> bool:
        key = self._key(value)
        return best.key < key < fail.key and value not in self.points

    def _midpoint(self, best: Point, fail: Point) -> Value:
        middle = 0.5 * (best.key + fail.key)
        for candidate in (self._toward_pass(middle), self._toward_fail(middle)):
            if self._inside(candidate, best, fail):
                return candidate
        # no grid point strictly inside by rounding the midpoint: step one grid point in
        return self._fail_neighbour(best.value)

    # driver ---------------------------------------------------------------------------------
    def run(self) -> Outcome:
        """Steer, then evaluate the accountant until the boundary is bracketed within the precision
        (the module docstring); the outcome rests on accountant points only."""
        most_private = self.grid.low if self.sign > 0 else self.grid.high
        least_private = self.grid.high if self.sign > 0 else self.grid.low
        while self.steering_left > 0:
            self.steering_left -= 1
            if self._steered_close():
                break
            predicted = self._predict(None, None)
            if predicted is None:
                break
            value = self._toward_pass(self._clamp(predicted))
            if any(point.value == value for point in self.steering_points):
                break
            self._add_steering(value)
        self._shift_steering_to_level()
        for _ in range(_MAX_EVALUATIONS):
            best, fail = self._bracket()
            if best is not None and fail is not None and (
                self._adjacent(best, fail)
                or (self.estimate and fail.key - best.key <= math.log1p(self.precision))
            ):
                return Outcome(best, fail, None, False, self.calls, self._boundary(best, fail))
            if fail is not None and fail.value == most_private:
                return Outcome(None, None, fail, False, self.calls)
            if best is not None and best.value == least_private:
                return Outcome(best, None, None, True, self.calls)
            if self.estimate and best is not None:
                boundary = self._estimated_boundary(best, fail)
                if boundary is not None and boundary - best.key <= math.log1p(self.precision):
                    return Outcome(best, None, None, False, self.calls, self._x(boundary))
            candidate = self._next(best, fail)
            if candidate in self.points:
                raise RuntimeError(f"calibration search revisited {candidate}: no progress")
            self._add(candidate)
        raise RuntimeError(f"calibration did not converge in {_MAX_EVALUATIONS} evaluations")

    def _steered_close(self) -> bool:
        """Whether the last steering point is close enough to the target to stop steering
        (STEERING_CLOSE, or STEERING_CLOSE_BRACKETED when the last two bracket the target)."""
        if len(self.steering_points) < STEERING_MIN or self.log_target is None:
            return False
        before, last = self.steering_points[-2:]
        if last.residual is None:
            return False
        bracketed = before.residual is not None and before.passes != last.passes
        return abs(math.log(last.epsilon) - self.log_target) < (STEERING_CLOSE_BRACKETED if bracketed
                                                                 else STEERING_CLOSE)

    def _shift_steering_to_level(self) -> None:
        """Move the steering residuals to the level `level` predicts at the steering answer.

        The steering function and the accountant differ by a nearly constant offset in log
        epsilon near the answer (the coarser grid's larger discretisation error); the shift
        keeps the steering slope and replaces the offset by its prediction, made where the
        steering function meets the target (next to the accountant's boundary, so that the
        slope carries the level only a short way).
        """
        if self.level is None or len(self.steering_points) < STEERING_MIN:
            return
        predicted_key = self._predict(None, None)
        if predicted_key is None:
            return
        value = self._toward_pass(self._clamp(predicted_key))
        residual, anchors = self._residual(None, None)
        if residual is None or not anchors:
            return
        key = self._key(value)
        steering_log_epsilon = self._model_at(key) + residual(key)
        self.calls += 1
        predicted = self.level(value, math.exp(steering_log_epsilon))
        if predicted is None or not 0.0 < predicted < math.inf:
            return
        shift = math.log(predicted) - steering_log_epsilon
        for point in self.steering_points:
            if point.residual is not None:
                point.residual += shift

    def _boundary(self, best: Point, fail: Point) -> float | None:
        if self.grid.integer:
            return None
        predicted = self._predict(best, fail, accountant_only=True)
        return None if predicted is None else self._x(predicted)

