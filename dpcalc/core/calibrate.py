"""Calibration: the noise, length or sampling rate of a noisy-SGD run that meets a target epsilon.

Given a target epsilon E at delta and all but one quantity of a Poisson-sampled noisy-SGD run
(sampling probability p, noise multiplier sigma, steps T; or the training form: dataset size
n, batch size b with p = b / n, and epochs with T = ceil(epochs / p)), find the value of the
remaining quantity that spends the budget best according to one accountant:

    sigma        the smallest noise multiplier       with epsilon(sigma) <= E
    T, epochs    the largest number of steps/epochs  with epsilon <= E
    p            the largest sampling probability    with epsilon <= E
    batch_size   the largest batch size              with epsilon <= E

The accountants: `pld` (dpcalc.core.pld.tight_epsilon, the certified upper bound), `rdp`
(dpcalc.core.rdp with its default orders and the improved conversion) and `gdp` (the central-
limit approximation, Bu, Dong, Long, Su 2020, Thm 4, which is not a bound).

Guarantees
----------
* Conservative by construction. The returned value is always a point at which the accountant
  itself was run and gave epsilon <= E; that epsilon is returned with it and is checked
  again (for rdp by the full accountant) before the result is built. sigma is only ever
  rounded up, the other quantities down.
* Precision. sigma and p are searched on a decimal grid with ceil(-log10(precision)) + 2
  significant digits (6 at the default 1e-4: neighbours at most precision / 10 apart).
  - gdp and rdp: the answer is the smallest sigma (largest p) on the grid with epsilon <= E,
    and its neighbour, evaluated and reported as `rejected`, exceeds E. The answer does not
    depend on the search path, so a sweep row and a single run agree.
  - pld, whose evaluations cost 0.05-0.5 s: the answer is within `precision` (relative) of the
    boundary where the accountant's epsilon meets E, either shown by an evaluated `rejected`
    value that close, or, without it, by interpolating between the two nearest evaluations
    (the `boundary`), or, with one full evaluation, by extrapolating from it with the slope of
    the two nearest steering evaluations (all within 2% of the boundary; the answer is at most
    `precision` from the boundary, so a slope error of a few percent moves the boundary by
    ~1e-6). Interpolation and extrapolation rely on the accountant's epsilon being smooth in
    sigma; its jitter is ~3e-5 relative in epsilon (measured), ~2e-5 in sigma.
  - T, epochs and batch size are integers: the answer is the exact largest one, and
    `rejected` = answer + 1 exceeds E (for pld T and epochs the answer's epsilon is
    `tight_epsilon`'s and the neighbour's the shared composition's, see below).
  These statements rely on the accountant's epsilon being monotone in the quantity, which holds
  for the mathematics (epsilon falls with sigma and grows with T, p and the batch size; with
  epochs fixed, a larger batch loses more privacy per epoch); soundness never needs it.
* Infeasible targets: the most private end of the search range (T = 1, one epoch, batch size
  1, p = 1e-10, sigma = 1e6) is tried, and when even it exceeds E the result says so, with the
  epsilon there as the closest achievable figure. As sigma grows, epsilon falls to 0 for any p
  and T (delta(0) = TV distance <= delta once the noise is large enough), so a sigma exists for
  every E >= 0, including E = 0; only the accountant's numerical range can defeat it.

The search
----------
Positions are logs of the quantity. A cheap model steers: the central-limit GDP epsilon m(x)
of the same run, continuous in the quantity x (BDLS Thm 4 with real T; DRS Cor. 2.13). The
accountant's log epsilon F differs from log m by a residual r = F - log m that varies slowly
and smoothly, so each next point solves log m(x) + r(x) = log E, with r interpolated linearly
between the two most recent evaluations (held constant after the first). The search starts at
the model's own answer. For gdp (where r = 0) this is two evaluations; for rdp three to five.
For pld, two to four steering evaluations at accuracy 1.6e-2 (the upper bound alone,
`pld.upper_epsilon`: a fifth to a third of the cost of a full evaluation each) first learn the
slope of r near the answer; one more at accuracy 4e-3 (upper bound alone) at the last of
them predicts the level of the full-accuracy epsilon there (Richardson extrapolation in the grid
step, see _LEVEL_ACCURACY), so that the first full evaluation already lands within ~5e-5 of
the boundary, placed 0.4 precision inside the passing side: one full evaluation in most runs
(the answer's), two when the prediction misses. Safeguards: a prediction outside the current bracket, or a bracket
that fails to halve in two steps, is replaced by the geometric midpoint; without a prediction
(E = 0, or an epsilon of 0 or inf) the bracket is found by steps growing fourfold and then
bisected. Nothing starts a solver on an interval that does not bracket (see special.find_root).

Reuse: the RDP accountant computes the per-step RDP curve of each (p, sigma) once and scales
it by T (Mironov 2017, Prop. 1), so calibrating T or epochs computes one curve. A previous
result (`hint`, e.g. the previous row of a sweep) starts the search from its answer and
residual; the PLD search still steers (upper-bound-only steering is cheaper than the full
evaluations a search without it needs: a sweep over 8 targets took 2.2 s with it, 3.4 s
without). The PLD accountant, solving for sigma or p, evaluates `tight_epsilon`
point by point (memoised per process, so the answer's evaluation is not repeated). Solving
for T or epochs it composes once for all T (`pld.largest_steps`: the step discretised once,
its binary powers shared, a greedy binary descent over T; the answer and its neighbour are
certified at the full accuracy, about one `tight_epsilon` call in all), and that composition
counts as one evaluation. The answer is then evaluated by `tight_epsilon` (the second
evaluation), so its epsilon is the number `dpcalc pld` prints there: `dpcalc pld` composes on
a grid of its own, and its certified upper bound differs from the shared composition's by far
less than either interval's width (~1e-7 relative on the design card), but not by nothing.
The neighbour's epsilon is the shared composition's, unless it lies within _GRID_AGREEMENT of
E, where `tight_epsilon` checks it too. When the shared composition cannot certify (an
interval wider than the accuracy, a floating-point exception, its work limit), or the two
accountings disagree about the target, the search above runs instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Literal

from dpcalc.core import gdp
from dpcalc.core.special import find_root, log_expm1
from dpcalc.core.validation import NON_NEGATIVE, OPEN_UNIT, POSITIVE, POSITIVE_INTEGER, PROBABILITY, Interval

if TYPE_CHECKING:
    import numpy as np

    from dpcalc.core.pld import PLDResult

Quantity = Literal["sigma", "T", "p", "epochs", "batch_size"]
Accountant = Literal["pld", "rdp", "gdp"]

QUANTITIES: tuple[str, ...] = ("sigma", "T", "p", "epochs", "batch_size")
ACCOUNTANTS: tuple[str, ...] = ("pld", "rdp", "gdp")

# Relative precision of sigma and p: the returned value and a rejected one are at most this far
# apart. 1e-4 is below what any training run can tell apart and costs about two evaluations
# beyond the ones needed to find the answer at all.
DEFAULT_PRECISION = 1e-4
PRECISION = Interval(0.0, 0.1, high_closed=True)

# The search ranges: the most private end (sigma_max, p_min, T = 1, ...) decides feasibility.
# sigma = 1e6 makes epsilon 0 for any run a float64 can describe; p = 1e-10 is below any
# dataset; 1e9 steps are more than any training run, and the PLD accountant composes them in
# seconds (far more steps cost it minutes).
SIGMA_RANGE = (Decimal("0.01"), Decimal("1e6"))
P_RANGE = (Decimal("1e-10"), Decimal(1))
MAX_STEPS = 10**9

# A search that has not converged after this many evaluations is a bug (each step at least
# halves the bracket, and the bracket starts at most ~60 doublings wide).
_MAX_EVALUATIONS = 200

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

# With one side of the boundary known, a prediction made from a point whose epsilon is more
# than a factor e^2 from the target moves the search at least as far as the expansion would
# (fourfold steps): far from the target a poor model can predict a boundary next to the point.
# A sweep row's first point (the previous row's answer, target 2x apart) is well within it.
_FAR_LOG_EPSILON = 2.0

# Steering evaluations of the PLD accountant: the upper bound alone at accuracy 1.6e-2 (a grid
# four times coarser than the default's) costs a fifth to a third of a full evaluation at the
# default 1e-3 (design card: 38 ms against 125 ms), and its slope
# d log epsilon / d log sigma matches the default's to 0.4-0.6% (measured on the design card
# and at p = 0.004, T = 1e4, target 1), far better than the model's 5-30%. At least two (a
# slope), at most four; steering stops once the last one is within _STEERING_CLOSE (in log
# epsilon) of the target: the slope then carries the level below over at most ~0.3% in sigma.
_STEERING_ACCURACY = 1.6e-2
_STEERING_MIN, _STEERING_MAX = 2, 4
_STEERING_CLOSE = 0.005

# How far apart two certified upper bounds of one run on different compositions may be taken
# to lie (relative): the shared composition of pld.largest_steps and tight_epsilon's agree to
# ~1e-7 on the design card. A neighbour closer than this to the target is checked by both.
_GRID_AGREEMENT = 1e-5

# The level of the default accuracy's upper bound, predicted before it is computed: at the
# last steering point the accountant also runs at _LEVEL_ACCURACY (a grid twice as coarse as
# the default's; the upper bound alone, a third of the cost). Both bounds err by O(h^2) in the
# grid step h (see dpcalc.core.pld), so from upper bounds U(h) and U(2h) the one on the default
# grid h/2 is about U(h) - (U(2h) - U(h)) / 4 (Richardson). Measured on 20 runs (p 1e-3..0.1,
# T 1e2..1e5, target 0.3..8): within 1.1e-4 of the default's epsilon (relative), typically
# 3e-5, against 2e-4..8e-4 for U(h) itself. It only steers: the answer is always evaluated at
# full accuracy.
_LEVEL_ACCURACY = 4e-3

# First step of the search for a bracket when no prediction is available (E = 0, or an
# epsilon of 0 or inf), in log x; it grows fourfold per evaluation. The start is the model's
# answer, so the first steps are small.
_EXPANSION_STEP = 0.05

# Model log epsilons are clipped to this magnitude inside the predictor, so that an epsilon of
# 0 or inf at the edge of the model's range still gives a usable sign.
_LOG_CLIP = 700.0


@dataclass(frozen=True)
class CalibrationResult:
    """The calibrated quantity, the run it completes, and the evidence.

    `value` is the answer (None when infeasible); `epsilon` is the accountant's epsilon at it
    (<= target_epsilon), or, when infeasible, at `closest`, the most private value tried.
    `rejected` is the neighbouring value that exceeds the target (None when the answer is the
    end of the range, e.g. p = 1), with `rejected_epsilon`. `sampling_probability`,
    `noise_multiplier` and `steps` describe the run at the answer (at `closest` when infeasible).
    """

    quantity: Quantity
    value: float | int | None
    epsilon: float
    target_epsilon: float
    delta: float
    accountant: Accountant
    evaluations: int
    feasible: bool
    sampling_probability: float
    noise_multiplier: float
    steps: int
    precision: float | None
    rejected: float | int | None = None
    rejected_epsilon: float | None = None
    closest: float | int | None = None
    epsilon_lower: float | None = None  # pld: the certified lower bound at the answer
    # a sound upper bound on epsilon at the answer: epsilon itself for pld and rdp; for gdp (an
    # approximation) the caller's check by a certified accountant, None until it is made
    certified_epsilon: float | None = None
    boundary: float | None = None  # sigma, p: the value where the accountant's epsilon meets the target, interpolated
    message: str | None = None  # why no value meets the target
    suggest_solve_steps: bool = False  # the message suggests solving for T instead (SOLVE_STEPS_HINT)
    residual: float | None = None  # log(accountant epsilon / model epsilon) at the answer, for hints
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Run:
    sampling_probability: float
    noise_multiplier: float
    steps: int


# ---------------------------------------------------------------------------------------------
# Accountants


class _GDP:
    """The central-limit GDP accountant (BDLS Thm 4; DRS Cor. 2.13 for epsilon(delta))."""

    name = "gdp"

    def __init__(self, delta: float) -> None:
        self.delta = delta

    def epsilon(self, run: _Run) -> float:
        mu = gdp.clt_mu(run.sampling_probability, run.noise_multiplier, run.steps)
        return gdp.epsilon_for_delta(self.delta, mu)

    def finish(self, run: _Run) -> tuple[float, float | None, tuple[str, ...]]:
        return self.epsilon(run), None, (gdp.CLT_WARNING,)


class _RDP:
    """RDP with the default orders: per-step curves cached by (p, sigma), scaled by T (M17 Prop. 1)."""

    name = "rdp"

    def __init__(self, delta: float) -> None:
        from dpcalc.core import rdp

        self.delta = delta
        self._rdp = rdp
        self._curves: dict[tuple[float, float], np.ndarray] = {}

    def epsilon(self, run: _Run) -> float:
        key = (run.sampling_probability, run.noise_multiplier)
        per_step = self._curves.get(key)
        if per_step is None:
            from dpcalc.core.phases import Phase

            phase = Phase("gaussian", sampling_probability=key[0], noise_multiplier=key[1], steps=1)
            per_step, _ = self._rdp.composed_rdp([phase], self._rdp.DEFAULT_ORDERS)
            self._curves[key] = per_step
        # The same arithmetic as composed_rdp for a phase of `steps` steps.
        curve = float(run.steps) * per_step
        epsilon, _ = self._rdp.epsilon_from_curve(self._rdp.DEFAULT_ORDERS, curve, self.delta)
        return float(epsilon)

    def finish(self, run: _Run) -> tuple[float, float | None, tuple[str, ...]]:
        """The full accountant at the answer: the same epsilon, and its warnings."""
        from dpcalc.core.phases import Phase

        phase = Phase("gaussian", sampling_probability=run.sampling_probability,
                      noise_multiplier=run.noise_multiplier, steps=run.steps)
        result = self._rdp.rdp_accountant([phase], delta=self.delta)
        return result.epsilon, None, result.warnings


class _PLD:
    """The certified PLD accountant at its default accuracy (the number `dpcalc pld` prints)."""

    name = "pld"

    def __init__(self, delta: float) -> None:
        from dpcalc.core import pld

        self.delta = delta
        self._pld = pld
        self._results: dict[_Run, PLDResult] = {}
        self._steering_step: float | None = None

    def epsilon(self, run: _Run) -> float:
        from dpcalc.core.phases import Phase

        phase = Phase("gaussian", sampling_probability=run.sampling_probability,
                      noise_multiplier=run.noise_multiplier, steps=run.steps)
        result = self._pld.tight_epsilon([phase], self.delta)
        self._results[run] = result
        return result.epsilon_upper

    def _coarse(self, run: _Run, accuracy: float) -> tuple[float, float]:
        """The upper bound alone (`pld.upper_epsilon`) at a coarser accuracy, and its grid step."""
        from dpcalc.core.phases import Phase

        phase = Phase("gaussian", sampling_probability=run.sampling_probability,
                      noise_multiplier=run.noise_multiplier, steps=run.steps)
        return self._pld.upper_epsilon([phase], self.delta, accuracy=accuracy)

    def steer(self, run: _Run) -> float:
        """The upper bound at the coarser steering accuracy (a different, cheaper function)."""
        upper, self._steering_step = self._coarse(run, _STEERING_ACCURACY)
        return upper

    def level(self, run: _Run, steering_epsilon: float) -> float | None:
        """A prediction of `epsilon(run)` (see _LEVEL_ACCURACY), or None; one call at _LEVEL_ACCURACY.

        `steering_epsilon` is the steering function at `run`, interpolated by the search
        between its steering points (close by: the last is within _STEERING_CLOSE of the
        target), on the grid of the last steering evaluation. When that grid's step is not
        twice the finer one, the extrapolation does not apply and the finer bound itself is
        the prediction.
        """
        finer, finer_step = self._coarse(run, _LEVEL_ACCURACY)
        if not 0.0 < finer < math.inf:
            return None
        if not (0.0 < steering_epsilon < math.inf) or self._steering_step != 2.0 * finer_step:
            return finer
        predicted = finer - 0.25 * (steering_epsilon - finer)
        return predicted if predicted > 0.0 else finer

    def largest_steps(self, target: float, sampling_probability: float, noise_multiplier: float, limit: int,
                      estimate: float, neighbours) -> tuple | None:
        """The largest admissible T <= limit with epsilon <= target by one shared composition
        (`pld.largest_steps`), or None. Its bounds are the shared composition's; `finish` still
        reports `tight_epsilon`'s, the number `dpcalc pld` prints at the answer."""
        from dpcalc.core.phases import Phase

        phase = Phase("gaussian", sampling_probability=sampling_probability, noise_multiplier=noise_multiplier,
                      steps=1)
        return self._pld.largest_steps(phase, self.delta, target, limit=limit, estimate=estimate,
                                       neighbours=neighbours, fallback=False)

    def finish(self, run: _Run) -> tuple[float, float | None, tuple[str, ...]]:
        result = self._results.get(run)
        if result is None:
            self.epsilon(run)
            result = self._results[run]
        return result.epsilon_upper, result.epsilon_lower, result.warnings


def _accountant(name: str, delta: float):
    if name == "gdp":
        return _GDP(delta)
    if name == "rdp":
        return _RDP(delta)
    if name == "pld":
        return _PLD(delta)
    raise ValueError(f"accountant must be one of {', '.join(ACCOUNTANTS)}, got accountant={name!r}")


# ---------------------------------------------------------------------------------------------
# Grids of candidate values


class _DecimalGrid:
    """Decimals with a fixed number of significant digits, within [low, high].

    digits = ceil(-log10(precision)) + 2, so that neighbours are at most precision / 10 apart
    (relative): 6 digits at the default 1e-4, e.g. 1.04908, 1.04909, ..., 9.99999, 10.0000.
    """

    integer = False

    def __init__(self, precision: float, low: Decimal, high: Decimal) -> None:
        self.digits = max(1, math.ceil(-math.log10(precision) - 1e-9)) + 2
        self.low, self.high = low, high

    def _quantum(self, value: Decimal) -> Decimal:
        return Decimal(1).scaleb(value.adjusted() - self.digits + 1)

    def _round(self, x: float, rounding: str) -> Decimal:
        if x <= float(self.low):
            return self.low
        if x >= float(self.high):
            return self.high
        value = Decimal(x)
        return min(max(value.quantize(self._quantum(value), rounding=rounding), self.low), self.high)

    def up(self, x: float) -> Decimal:
        return self._round(x, ROUND_CEILING)

    def down(self, x: float) -> Decimal:
        return self._round(x, ROUND_FLOOR)

    def above(self, value: Decimal) -> Decimal:
        """The next grid value above `value` (a grid value)."""
        return min(value + self._quantum(value), self.high)

    def below(self, value: Decimal) -> Decimal:
        """The next grid value below `value` (a grid value); 9.9999 below 10.000."""
        step = self._quantum(value)
        candidate = value - step
        if candidate.adjusted() < value.adjusted():
            candidate = value - step / 10
        return max(candidate, self.low)


class _IntegerGrid:
    """The integers in [low, high]."""

    integer = True

    def __init__(self, low: int, high: int) -> None:
        self.low, self.high = low, high

    def up(self, x: float) -> int:
        return int(min(max(math.ceil(x), self.low), self.high)) if math.isfinite(x) else (self.high if x > 0 else self.low)

    def down(self, x: float) -> int:
        return int(min(max(math.floor(x), self.low), self.high)) if math.isfinite(x) else (self.high if x > 0 else self.low)

    def above(self, value: int) -> int:
        return min(value + 1, self.high)

    def below(self, value: int) -> int:
        return max(value - 1, self.low)


# ---------------------------------------------------------------------------------------------
# The problem: how a value of the quantity completes the run


@dataclass(frozen=True)
class _Problem:
    quantity: Quantity
    sampling_probability: float | None  # fixed p (float), or None
    exact_probability: Fraction | None  # fixed p as an exact fraction (for epochs / p)
    noise_multiplier: float | None
    steps: int | None
    epochs: Fraction | None
    dataset_size: int | None

    def run(self, value) -> _Run:
        """The run at a grid value (Decimal for sigma and p, int otherwise)."""
        q = self.quantity
        if q == "sigma":
            return _Run(self.sampling_probability, float(value), self.steps)
        if q == "T":
            return _Run(self.sampling_probability, self.noise_multiplier, int(value))
        if q == "epochs":
            return _Run(self.sampling_probability, self.noise_multiplier, steps_for_epochs(value, self.exact_probability))
        if q == "p":
            steps = self.steps if self.steps is not None else steps_for_epochs(self.epochs, Fraction(value))
            return _Run(float(value), self.noise_multiplier, steps)
        # batch_size
        n = self.dataset_size
        steps = self.steps if self.steps is not None else steps_for_epochs(self.epochs, Fraction(int(value), n))
        return _Run(int(value) / n, self.noise_multiplier, steps)

    def model_run(self, x: float) -> tuple[float, float, float]:
        """(p, sigma, T) at a real value x of the quantity, T real: the model's continuous run."""
        q = self.quantity
        if q == "sigma":
            return self.sampling_probability, x, float(self.steps)
        if q == "T":
            return self.sampling_probability, self.noise_multiplier, x
        if q == "epochs":
            return self.sampling_probability, self.noise_multiplier, x / self.sampling_probability
        if q == "p":
            steps = float(self.steps) if self.steps is not None else float(self.epochs) / x
            return x, self.noise_multiplier, max(steps, 1.0)
        p = x / self.dataset_size
        steps = float(self.steps) if self.steps is not None else float(self.epochs) / p
        return p, self.noise_multiplier, max(steps, 1.0)


def steps_for_epochs(epochs, exact_probability: Fraction) -> int:
    """T = ceil(epochs / p) in exact rational arithmetic (never rounded down), at least 1."""
    return max(1, math.ceil(Fraction(epochs) / exact_probability))


def _model_log_mu(p: float, sigma: float, steps: float) -> float:
    """log mu of the central-limit approximation for real T (BDLS Thm 4: mu = p sqrt(T (e^(1/sigma^2) - 1)))."""
    return min(math.log(p) + 0.5 * math.log(steps) + 0.5 * log_expm1(1.0 / (sigma * sigma)), 700.0)


def _model_log_epsilon(p: float, sigma: float, steps: float, delta: float) -> float:
    """log of the central-limit GDP epsilon for real T (BDLS Thm 4; DRS Cor. 2.13)."""
    if not (p > 0.0 and sigma > 0.0 and steps > 0.0):
        return -_LOG_CLIP
    mu = math.exp(_model_log_mu(p, sigma, steps))
    epsilon = gdp.epsilon_for_delta(delta, mu)
    if epsilon <= 0.0:
        return -_LOG_CLIP
    return min(math.log(epsilon), _LOG_CLIP)


# ---------------------------------------------------------------------------------------------
# The search


@dataclass
class _Point:
    value: object
    key: float  # position: log x, sign-adjusted so that epsilon grows with it
    epsilon: float
    passes: bool
    residual: float | None  # log(epsilon / model epsilon), None when either is 0 or inf


@dataclass
class _Outcome:
    best: _Point | None  # the passing point nearest the answer
    rejected: _Point | None  # the failing neighbour, when it was evaluated
    closest: _Point | None  # when infeasible: the most private point, which fails
    at_bound: bool
    evaluations: int
    boundary: float | None = None  # interpolated value where epsilon = target (decimal grids)


class _Search:
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

    def __init__(self, evaluate: Callable[[object], float], model: Callable[[float], float], grid,
                 target: float, sign: int, precision: float, start_x: float, prior_residual: float,
                 *, steer: Callable[[object], float] | None = None, steering: int = 0,
                 level: Callable[[object, float], float | None] | None = None, estimate: bool = False) -> None:
        self.evaluate = evaluate
        self.model = model  # log epsilon of the model at a real value x
        self.grid = grid
        self.target = target
        self.log_target = math.log(target) if target > 0.0 else None
        self.sign = sign
        self.precision = precision
        self.prior_residual = prior_residual
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
        self.points: dict[object, _Point] = {}
        self.steering_points: list[_Point] = []
        self.order: list[_Point] = []  # accountant points in evaluation order
        self.k_min = self._key(grid.low if sign > 0 else grid.high)  # the most private end
        self.k_max = self._key(grid.high if sign > 0 else grid.low)
        self.start_key = self.sign * math.log(start_x)
        self.widths: list[float] = []
        self.calls = 0

    # positions ------------------------------------------------------------------------------
    def _key(self, value) -> float:
        return self.sign * math.log(float(value))

    def _x(self, key: float) -> float:
        return math.exp(self.sign * key)

    def _toward_pass(self, key: float):
        """The grid value at or just below `key` (never on the failing side of it)."""
        x = self._x(key)
        return self.grid.down(x) if self.sign > 0 else self.grid.up(x)

    def _toward_fail(self, key: float):
        """The grid value just above `key` (strictly on the failing side of a grid value)."""
        x = self._x(key)
        value = self.grid.up(x) if self.sign > 0 else self.grid.down(x)
        if value == self._toward_pass(key):
            value = self._fail_neighbour(value)
        return value

    def _fail_neighbour(self, value):
        """The adjacent grid value on the failing side."""
        return self.grid.above(value) if self.sign > 0 else self.grid.below(value)

    def _adjacent(self, best: _Point, fail: _Point) -> bool:
        return self._fail_neighbour(best.value) == fail.value

    def _model_at(self, key: float) -> float:
        value = self.model(self._x(key))
        return max(-_LOG_CLIP, min(_LOG_CLIP, value))

    def _clamp(self, key: float) -> float:
        return min(max(key, self.k_min), self.k_max)

    # state ----------------------------------------------------------------------------------
    def _point(self, value, epsilon: float) -> _Point:
        key = self._key(value)
        residual = None
        if 0.0 < epsilon < math.inf:
            residual = math.log(epsilon) - self._model_at(key)
        return _Point(value, key, epsilon, epsilon <= self.target, residual)

    def _add(self, value) -> _Point:
        point = self.points.get(value)
        if point is not None:
            return point
        self.calls += 1
        point = self._point(value, self.evaluate(value))
        self.points[value] = point
        self.order.append(point)
        return point

    def _add_steering(self, value) -> None:
        self.calls += 1
        self.steering_points.append(self._point(value, self.steer(value)))

    def _bracket(self) -> tuple[_Point | None, _Point | None]:
        fails = [p for p in self.points.values() if not p.passes]
        fail = min(fails, key=lambda p: p.key) if fails else None
        passes = [p for p in self.points.values() if p.passes and (fail is None or p.key < fail.key)]
        best = max(passes, key=lambda p: p.key) if passes else None
        return best, fail

    # prediction -----------------------------------------------------------------------------
    def _residual(self, best: _Point | None, fail: _Point | None, accountant_only: bool = False):
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
                return (None, []) if accountant_only else (_constant(own[0].residual), own)
            slope = (b.residual - a.residual) / (b.key - a.key)
            level = own[0]
            return (lambda key: level.residual + slope * (key - level.key)), [level, a, b]
        elif own:
            return _constant(own[0].residual), own
        elif steering:
            anchors = steering[:2]
        else:
            return _constant(self.prior_residual), []
        if len(anchors) == 1 or anchors[0].key == anchors[1].key:
            return _constant(anchors[0].residual), anchors
        a, b = anchors
        slope = (b.residual - a.residual) / (b.key - a.key)
        return (lambda key: a.residual + slope * (key - a.key)), anchors

    def _predict(self, best: _Point | None, fail: _Point | None, accountant_only: bool = False) -> float | None:
        """The key where model + residual meets the target, or None."""
        if self.log_target is None:
            return None
        residual, anchors = self._residual(best, fail, accountant_only)
        if residual is None:
            return None

        def excess(key: float) -> float:
            return self._model_at(key) + residual(key) - self.log_target

        if best is not None and fail is not None:
            low, high = best.key, fail.key
            if excess(low) < 0.0 < excess(high):
                return find_root(excess, low, high, rtol=1e-12)
            return None
        # one side known (or none): walk from the nearest known point toward the other side
        # until the sign changes, then solve on that bracket
        if best is not None or fail is not None:
            origin = best.key if best is not None else fail.key
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

    def _estimated_boundary(self, best: _Point | None, fail: _Point | None) -> float | None:
        """The boundary interpolated between two accountant points, when both lie near it."""
        if self.grid.integer or best is None:
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

    # the next value -------------------------------------------------------------------------
    def _next(self, best: _Point | None, fail: _Point | None):
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
            if best is None and fail is None:
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

    def _far(self, point: _Point) -> bool:
        """Whether the point's epsilon is more than a factor e^_FAR_LOG_EPSILON from the target."""
        if self.log_target is None or not 0.0 < point.epsilon < math.inf:
            return True
        return abs(math.log(point.epsilon) - self.log_target) > _FAR_LOG_EPSILON

    def _one_sided(self, best: _Point | None, fail: _Point | None, key: float, predicted: float | None):
        """The grid value at `key` when at most one side of the boundary is known (see _next)."""
        key = self._clamp(key)
        candidate = self._toward_pass(key) if best is None or self.estimate else self._toward_fail(key)
        # never repeat a point, and move toward the missing side
        known = best if best is not None else fail
        if known is not None and (candidate in self.points
                                  or (best is not None and self._key(candidate) <= best.key)
                                  or (best is None and self._key(candidate) >= fail.key)):
            step = _EXPANSION_STEP if predicted is None else 1e-6
            for _ in range(200):
                key = self._clamp(known.key + (step if best is not None else -step))
                candidate = self._toward_fail(key) if best is not None else self._toward_pass(key)
                if candidate not in self.points:
                    break
                step *= 2.0
        return candidate

    def _inside(self, value, best: _Point, fail: _Point) -> bool:
        key = self._key(value)
        return best.key < key < fail.key and value not in self.points

    def _midpoint(self, best: _Point, fail: _Point):
        middle = 0.5 * (best.key + fail.key)
        for candidate in (self._toward_pass(middle), self._toward_fail(middle)):
            if self._inside(candidate, best, fail):
                return candidate
        # no grid point strictly inside by rounding the midpoint: step one grid point in
        return self._fail_neighbour(best.value)

    # driver ---------------------------------------------------------------------------------
    def run(self) -> _Outcome:
        most_private = self.grid.low if self.sign > 0 else self.grid.high
        least_private = self.grid.high if self.sign > 0 else self.grid.low
        while self.steering_left > 0:
            self.steering_left -= 1
            last = self.steering_points[-1] if self.steering_points else None
            if (last is not None and len(self.steering_points) >= _STEERING_MIN and last.residual is not None
                    and abs(math.log(last.epsilon) - self.log_target) < _STEERING_CLOSE):
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
                return _Outcome(best, fail, None, False, self.calls, self._boundary(best, fail))
            if fail is not None and fail.value == most_private:
                return _Outcome(None, None, fail, False, self.calls)
            if best is not None and best.value == least_private:
                return _Outcome(best, None, None, True, self.calls)
            if self.estimate:
                boundary = self._estimated_boundary(best, fail)
                if boundary is not None and boundary - best.key <= math.log1p(self.precision):
                    return _Outcome(best, None, None, False, self.calls, self._x(boundary))
            candidate = self._next(best, fail)
            if candidate in self.points:
                raise RuntimeError(f"calibration search revisited {candidate}: no progress")
            self._add(candidate)
        raise RuntimeError(f"calibration did not converge in {_MAX_EVALUATIONS} evaluations")

    def _shift_steering_to_level(self) -> None:
        """Move the steering residuals to the level `level` predicts at the steering answer.

        The steering function and the accountant differ by a nearly constant offset in log
        epsilon near the answer (the coarser grid's larger discretisation error); the shift
        keeps the steering slope and replaces the offset by its prediction, made where the
        steering function meets the target (next to the accountant's boundary, so that the
        slope carries the level only a short way).
        """
        if self.level is None or len(self.steering_points) < _STEERING_MIN:
            return
        predicted_key = self._predict(None, None)
        if predicted_key is None:
            return
        value = self._toward_pass(self._clamp(predicted_key))
        residual, anchors = self._residual(None, None)
        if not anchors:
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

    def _boundary(self, best: _Point, fail: _Point) -> float | None:
        if self.grid.integer:
            return None
        predicted = self._predict(best, fail, accountant_only=True)
        return None if predicted is None else self._x(predicted)


def _constant(value: float):
    return lambda key: value


# ---------------------------------------------------------------------------------------------
# The public function


def calibrate(
    quantity: Quantity,
    target_epsilon: float,
    delta: float,
    *,
    accountant: Accountant = "pld",
    sampling_probability: float | Fraction | None = None,
    noise_multiplier: float | None = None,
    steps: int | None = None,
    epochs: float | Fraction | None = None,
    dataset_size: int | None = None,
    batch_size: int | None = None,
    precision: float = DEFAULT_PRECISION,
    hint: CalibrationResult | None = None,
) -> CalibrationResult:
    """Solve for `quantity` so that the accountant's epsilon at `delta` is at most `target_epsilon`.

    The other quantities: p as `sampling_probability` (a Fraction keeps epochs / p exact) or as
    `batch_size` / `dataset_size`; T as `steps` or as ceil(`epochs` / p); `noise_multiplier`.
    Exactly the inputs the quantity needs must be given (the solved one is not). `hint`, a
    previous result for a nearby problem with the same quantity and accountant, starts the search
    from its answer's residual. See the module docstring for the guarantees.
    """
    if quantity not in QUANTITIES:
        raise ValueError(f"quantity must be one of {', '.join(QUANTITIES)}, got quantity={quantity!r}")
    NON_NEGATIVE.check("target_epsilon", target_epsilon)  # [0, inf): also refuses inf and nan
    OPEN_UNIT.check("delta", delta)
    PRECISION.check("precision", precision)
    problem = _problem(quantity, sampling_probability, noise_multiplier, steps, epochs, dataset_size, batch_size)
    engine = _accountant(accountant, delta)
    grid, sign, start = _grid_and_start(problem, precision, target_epsilon, delta)
    prior = 0.0
    if hint is not None and hint.quantity == quantity and hint.accountant == accountant and hint.residual is not None:
        prior = hint.residual
        if hint.value is not None:
            start = float(hint.value)

    def evaluate(value) -> float:
        return engine.epsilon(problem.run(value))

    def model(x: float) -> float:
        p, sigma, steps_real = problem.model_run(x)
        return _model_log_epsilon(min(p, 1.0), sigma, steps_real, delta)

    steer = level = None
    if isinstance(engine, _PLD):
        def steer(value) -> float:
            return engine.steer(problem.run(value))

        def level(value, steering_epsilon: float) -> float | None:
            return engine.level(problem.run(value), steering_epsilon)

    if isinstance(engine, _PLD) and quantity in ("T", "epochs"):
        shared = _largest_steps(problem, engine, grid, start, target_epsilon)
        if shared is not None:
            return _result(problem, engine, shared, target_epsilon, delta, precision, grid)

    search = _Search(evaluate, model, grid, target_epsilon, sign, precision, start, prior,
                     steer=steer, steering=_STEERING_MAX, level=level,
                     estimate=isinstance(engine, _PLD))
    outcome = search.run()
    return _result(problem, engine, outcome, target_epsilon, delta, precision, grid)


def _largest_steps(problem: _Problem, engine: _PLD, grid: _IntegerGrid, start: float, target: float) -> _Outcome | None:
    """T or epochs by one shared PLD composition (`pld.largest_steps`); None when it cannot
    certify, and the search then evaluates the accountant point by point.

    epochs: T(e) = ceil(e / p) grows with e, and T(e) <= t exactly when e <= t p, so the
    largest whole number of epochs within t steps is floor(t p) (exact fractions); the shared
    composition answers for the admissible counts T(e) only, with T(e + 1) as the witness.
    The answer's epsilon is `tight_epsilon`'s (what `finish` reports and `dpcalc pld` prints).
    """
    exact_p = problem.exact_probability
    if problem.quantity == "T":
        limit, neighbours, estimate = grid.high, None, start
    else:
        most = grid.high

        def neighbours(count: int) -> tuple[int, int | None]:
            epochs = min(math.floor(count * exact_p), most)
            below = steps_for_epochs(epochs, exact_p) if epochs >= 1 else 0
            return below, (steps_for_epochs(epochs + 1, exact_p) if epochs < most else None)

        limit, estimate = steps_for_epochs(most, exact_p), start / problem.sampling_probability
    found = engine.largest_steps(target, problem.sampling_probability, problem.noise_multiplier, limit, estimate,
                                 neighbours)
    if found is None:
        return None
    answer, at_answer, at_witness = found

    def value_of(steps: int) -> int:
        return steps if problem.quantity == "T" else math.floor(steps * exact_p)

    def point(steps: int, epsilon: float) -> _Point:
        value = value_of(steps)
        residual = None
        if 0.0 < epsilon < math.inf:
            p, sigma, steps_real = problem.model_run(float(value))
            residual = math.log(epsilon) - _model_log_epsilon(min(p, 1.0), sigma, steps_real, engine.delta)
        return _Point(value, math.log(value), epsilon, epsilon <= target, residual)

    if at_answer is None:  # even the most private value (T = 1, one epoch) exceeds the target
        return _Outcome(None, None, point(at_witness.phases[0].steps, at_witness.epsilon_upper), False, 1)
    # The answer is checked by the accountant `dpcalc pld` runs (a grid of its own; the two
    # certified upper bounds differ by ~1e-7 relative), so the reported epsilon is the one a
    # user sees when running pld at the answer. Where the two disagree about the target, the
    # point-by-point search decides instead.
    value = value_of(answer)
    epsilon = engine.epsilon(problem.run(value))
    if not epsilon <= target:
        return None
    best = point(answer, epsilon)
    rejected = None
    if at_witness is not None:
        witness = at_witness.epsilon_upper
        if witness <= target * (1.0 + _GRID_AGREEMENT):
            witness = engine.epsilon(problem.run(value_of(at_witness.phases[0].steps)))
            if witness <= target:
                return None
        rejected = point(at_witness.phases[0].steps, witness)
    return _Outcome(best, rejected, None, rejected is None, 2)


def _problem(quantity, sampling_probability, noise_multiplier, steps, epochs, dataset_size, batch_size) -> _Problem:
    """Check that exactly the inputs `quantity` needs are given, and fix p and T."""
    given = {
        "sampling_probability": sampling_probability, "noise_multiplier": noise_multiplier, "steps": steps,
        "epochs": epochs, "dataset_size": dataset_size, "batch_size": batch_size,
    }
    solved_input = {"sigma": "noise_multiplier", "T": "steps", "epochs": "epochs", "p": "sampling_probability",
                    "batch_size": "batch_size"}[quantity]
    if given[solved_input] is not None:
        raise ValueError(f"{solved_input} is the quantity solved for ({quantity}); do not give it")
    if quantity in ("T", "epochs") and (steps is not None or epochs is not None):
        raise ValueError(f"give neither steps nor epochs when solving for {quantity}")
    if quantity == "p" and (dataset_size is not None or batch_size is not None):
        raise ValueError("solving for p takes neither dataset_size nor batch_size (solve batch_size instead)")
    if quantity != "sigma":
        if noise_multiplier is None:
            raise ValueError(f"noise_multiplier is required when solving for {quantity}")
        POSITIVE.check("noise_multiplier", noise_multiplier)
        if math.isinf(noise_multiplier):
            raise ValueError("noise_multiplier must be finite")
    if quantity == "batch_size":
        if dataset_size is None:
            raise ValueError("dataset_size is required when solving for batch_size (p = batch_size / dataset_size)")
        POSITIVE_INTEGER.check("dataset_size", dataset_size)
        if sampling_probability is not None:
            raise ValueError("sampling_probability is batch_size / dataset_size: do not give it when solving for batch_size")
    exact_probability: Fraction | None = None
    probability: float | None = None
    if quantity in ("sigma", "T", "epochs"):
        if sampling_probability is not None:
            if dataset_size is not None or batch_size is not None:
                raise ValueError("give sampling_probability or dataset_size and batch_size, not both")
            PROBABILITY.check("sampling_probability", float(sampling_probability))
            exact_probability = Fraction(sampling_probability)
            probability = float(sampling_probability)
        elif dataset_size is not None and batch_size is not None:
            POSITIVE_INTEGER.check("dataset_size", dataset_size)
            POSITIVE_INTEGER.check("batch_size", batch_size)
            if batch_size > dataset_size:
                raise ValueError(f"batch_size must be in [1, dataset_size] = [1, {dataset_size}], got {batch_size}")
            exact_probability = Fraction(batch_size, dataset_size)
            probability = batch_size / dataset_size
        else:
            raise ValueError("give sampling_probability, or dataset_size and batch_size")
    total_steps: int | None = None
    exact_epochs: Fraction | None = None
    if quantity in ("sigma", "p", "batch_size"):
        if (steps is None) == (epochs is None):
            raise ValueError(f"give exactly one of steps and epochs when solving for {quantity}")
        if steps is not None:
            POSITIVE_INTEGER.check("steps", steps)
            total_steps = int(steps)
        else:
            POSITIVE.check("epochs", float(epochs))
            if math.isinf(float(epochs)):
                raise ValueError("epochs must be finite")
            exact_epochs = Fraction(epochs)
            if quantity == "sigma":
                total_steps = steps_for_epochs(exact_epochs, exact_probability)
    return _Problem(quantity, probability, exact_probability, noise_multiplier, total_steps, exact_epochs, dataset_size)


def _grid_and_start(problem: _Problem, precision: float, target: float, delta: float):
    """The grid of candidate values, the sign (+1: epsilon grows with the value) and a start value.

    The start is the model's own answer (found by bracketing in log x over the whole range):
    for E > 0 where the central-limit epsilon meets E, for E = 0 where mu-GDP's delta(0) meets
    delta; a typical value when the model has no answer in the range.
    """
    q = problem.quantity
    grid: _DecimalGrid | _IntegerGrid
    if q == "sigma":
        grid, sign, default = _DecimalGrid(precision, *SIGMA_RANGE), -1, 1.0
    elif q == "p":
        grid, sign, default = _DecimalGrid(precision, *P_RANGE), 1, 0.01
    elif q == "T":
        grid, sign, default = _IntegerGrid(1, MAX_STEPS), 1, 1000.0
    elif q == "epochs":
        most = max(1, math.floor(MAX_STEPS * problem.exact_probability))
        grid, sign, default = _IntegerGrid(1, most), 1, 10.0
    else:
        grid, sign, default = _IntegerGrid(1, problem.dataset_size), 1, max(1.0, problem.dataset_size / 100.0)
    start = default
    low, high = math.log(float(grid.low)), math.log(float(grid.high))
    if target > 0.0:
        log_target = math.log(target)

        def excess(u: float) -> float:
            p, sigma, steps = problem.model_run(math.exp(u))
            return sign * (_model_log_epsilon(min(p, 1.0), sigma, steps, delta) - log_target)
    else:
        # epsilon = 0 holds once delta(0) = TV <= delta; for mu-GDP that is 2 Phi(mu/2) - 1 <= delta
        log_delta = math.log(delta)

        def excess(u: float) -> float:
            p, sigma, steps = problem.model_run(math.exp(u))
            advantage = gdp.max_advantage(math.exp(_model_log_mu(min(p, 1.0), sigma, steps)))
            return sign * ((math.log(advantage) if advantage > 0.0 else -_LOG_CLIP) - log_delta)

    f_low, f_high = excess(low), excess(high)
    if f_low < 0.0 < f_high:
        start = math.exp(find_root(excess, low, high, rtol=1e-10))
    elif f_high <= 0.0:
        start = float(grid.high)
    elif f_low >= 0.0:
        start = float(grid.low)
    return grid, sign, start


def _result(problem: _Problem, engine, outcome: _Outcome, target: float, delta: float, precision: float,
            grid) -> CalibrationResult:
    quantity = problem.quantity
    warnings: list[str] = []

    def output_value(value):
        return float(value) if isinstance(value, Decimal) else int(value)

    if outcome.best is None:
        point = outcome.closest
        run = problem.run(point.value)
        epsilon, epsilon_lower, extra = engine.finish(run)
        warnings.extend(extra)
        message = _infeasible_message(quantity, point.value, run, epsilon, target, delta, engine.name)
        return CalibrationResult(
            quantity=quantity, value=None, epsilon=epsilon, target_epsilon=target, delta=delta,
            accountant=engine.name, evaluations=outcome.evaluations, feasible=False,
            sampling_probability=run.sampling_probability, noise_multiplier=run.noise_multiplier,
            steps=run.steps, precision=None if grid.integer else precision,
            closest=output_value(point.value), epsilon_lower=epsilon_lower, message=message,
            suggest_solve_steps=quantity == "epochs",
            warnings=tuple(warnings),
        )
    best = outcome.best
    run = problem.run(best.value)
    epsilon, epsilon_lower, extra = engine.finish(run)
    warnings.extend(extra)
    # the returned value's epsilon, recomputed by the accountant, must meet the target
    if not epsilon <= target or epsilon != best.epsilon:
        raise RuntimeError(
            f"calibration check failed: epsilon {epsilon!r} at {quantity} = {best.value} "
            f"(search saw {best.epsilon!r}), target {target!r}"
        )
    if outcome.at_bound:
        warnings.append(_bound_note(quantity, best.value, problem))
    rejected = outcome.rejected
    return CalibrationResult(
        quantity=quantity, value=output_value(best.value), epsilon=epsilon, target_epsilon=target, delta=delta,
        accountant=engine.name, evaluations=outcome.evaluations, feasible=True,
        sampling_probability=run.sampling_probability, noise_multiplier=run.noise_multiplier, steps=run.steps,
        precision=None if grid.integer else precision,
        rejected=None if rejected is None else output_value(rejected.value),
        rejected_epsilon=None if rejected is None else rejected.epsilon,
        epsilon_lower=epsilon_lower, boundary=outcome.boundary, residual=best.residual, warnings=tuple(warnings),
    )


# The remedy an infeasible whole-epoch target suggests (`suggest_solve_steps`): callers may name
# how to do it after these words.
SOLVE_STEPS_HINT = "solve for T"

_NAMES = {"sigma": "sigma", "T": "T", "p": "p", "epochs": "epochs", "batch_size": "batch size"}


def _infeasible_message(quantity, value, run: _Run, epsilon: float, target: float, delta: float,
                        accountant: str) -> str:
    figure = f"epsilon {_short(epsilon)} > target {_short(target)} ({accountant}, delta = {delta:g})"
    if quantity == "sigma":
        return (f"no noise multiplier up to {value} meets the target: even sigma = {value} gives {figure}; "
                "the accountant cannot certify this target")
    if quantity == "T":
        return f"even T = 1 step gives {figure}: no number of steps meets the target; raise sigma or lower p"
    if quantity == "epochs":
        return (f"even 1 epoch (T = {run.steps} steps) gives {figure}: no whole number of epochs meets the "
                f"target; raise sigma, lower p, or {SOLVE_STEPS_HINT} to train part of an epoch")
    if quantity == "p":
        return f"even p = {float(value):g} gives {figure}: no sampling probability meets the target; raise sigma or lower T"
    return f"even batch size 1 (p = {run.sampling_probability:g}, T = {run.steps}) gives {figure}; raise sigma or lower T"


def _bound_note(quantity, value, problem: _Problem) -> str:
    if quantity == "p":
        return "p = 1 (every example in every step) already meets the target: no subsampling is needed."
    if quantity == "batch_size":
        return f"the full dataset as one batch (batch size {value} = n) already meets the target."
    if quantity == "sigma":
        return f"the smallest noise multiplier searched, {value}, already meets the target."
    return f"{_NAMES[quantity]} = {value}, the end of the search range, already meets the target."


def _short(value: float) -> str:
    return f"{value:.6g}" if math.isfinite(value) else "inf"
