"""The calibration problem: the inputs, their ranges, and how a value of the quantity completes the run.

Given all but one quantity of a Poisson-sampled noisy-SGD run (sampling probability p, noise
multiplier sigma, steps T; or the training form: dataset size n, batch size b with p = b / n,
and epochs with T = ceil(epochs / p)), a value of the remaining quantity completes the run: a
Gaussian `Phase` for the accountant (`Problem.run`), and a continuous run with real T for the
model (`Problem.model_run`). `grid_and_start` picks the grid searched and the model's answer.

The Laplace mechanism (quantity "scale"): k = `steps` releases of a query of L1 sensitivity
D with Laplace noise of scale b, no subsampling; a value of b completes the run as one Laplace
`Phase` with scale b / D (the phase's scale is for sensitivity 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Literal, TypeVar

from dpcalc.core import gdp
from dpcalc.core.calibrate.grids import DecimalGrid, Grid, IntegerGrid
from dpcalc.core.calibrate.model import LOG_CLIP, laplace_model_log_mu, model_log_epsilon, model_log_mu
from dpcalc.core.limits import CALIBRATION_DELTA as CALIBRATION_DELTA  # re-exported: calibrate's limits
from dpcalc.core.limits import DEFAULT_PRECISION as DEFAULT_PRECISION
from dpcalc.core.limits import PRECISION as PRECISION
from dpcalc.core.phases import EPOCH_SAMPLINGS, Mechanism, Neighbours, Phase, Sampling, step_shift, unsupported
from dpcalc.core.special import find_root
from dpcalc.core.validation import POSITIVE, POSITIVE_INTEGER, PROBABILITY, ParameterError

Quantity = Literal["sigma", "T", "p", "epochs", "batch_size", "scale"]
QUANTITIES: tuple[str, ...] = ("sigma", "T", "p", "epochs", "batch_size", "scale")
# The quantity each mechanism solves for: the Gaussian run any of its five, the Laplace
# mechanism its scale (k releases of it, no subsampling).
MECHANISM_QUANTITIES: dict[str, tuple[str, ...]] = {
    "gaussian": ("sigma", "T", "p", "epochs", "batch_size"),
    "laplace": ("scale",),
}

# The relative precision of sigma and p and the delta a calibration meets: dpcalc.core.limits.


# The search ranges: the most private end (sigma_max, p_min, T = 1, ...) decides feasibility.
# sigma = 1e6 makes epsilon 0 for any run a float64 can describe; p = 1e-10 is below any
# dataset; 1e9 steps are more than any training run, and the PLD accountant composes them in
# seconds (far more steps cost it minutes).
SIGMA_RANGE = (Decimal("0.01"), Decimal("1e6"))
# The Laplace scale's range, in units of the sensitivity D: b = 1e6 D makes every k up to
# MAX_STEPS releases spend epsilon 0 at any delta > 1e-3 (TV <= k / (2e6)), and the smallest
# delta to a few e-6 relative.
SCALE_RANGE = (Decimal("0.01"), Decimal("1e6"))
P_RANGE = (Decimal("1e-10"), Decimal(1))
MAX_STEPS = 10**9

_T = TypeVar("_T")


@dataclass(frozen=True)
class Problem:
    """The fixed inputs of a calibration, exact where epochs / p needs it."""

    quantity: Quantity
    sampling_probability: float | None  # fixed p (float), or None
    exact_probability: Fraction | None  # fixed p as an exact fraction (for epochs / p)
    noise_multiplier: float | None
    steps: int | None
    epochs: Fraction | None
    dataset_size: int | None
    mechanism: Mechanism = "gaussian"
    sensitivity: float = 1.0  # laplace: the L1 sensitivity D of the released query
    # how batches are drawn and what neighbouring datasets are (docs/mathematics.md §3): the
    # Gaussian run's phase carries them; shuffled and allocated runs have ceil(1/p) = ceil(n/b)
    # steps an epoch
    sampling: Sampling = "poisson"
    neighbours: Neighbours = "add-remove"
    examples_per_user: int = 1

    @property
    def plain(self) -> bool:
        """A Poisson-sampled, example-level run under add-remove or zero-out: the run the model,
        the shared composition over T and the gdp accountant describe."""
        return self.sampling == "poisson" and self.neighbours != "replace-one" and self.examples_per_user == 1

    # The inputs make_problem fixes for the quantity solved (None only when solving for another):
    # sigma, T, epochs fix p; all but sigma fix the noise multiplier; sigma fixes T; batch_size n.
    @property
    def fixed_probability(self) -> float:
        """p, fixed when solving for sigma, T or epochs (`make_problem`)."""
        return _fixed(self.sampling_probability, "sampling_probability")

    @property
    def fixed_exact_probability(self) -> Fraction:
        """p as an exact fraction, fixed when solving for sigma, T or epochs (`make_problem`)."""
        return _fixed(self.exact_probability, "exact_probability")

    @property
    def fixed_noise_multiplier(self) -> float:
        """sigma, fixed unless solving for it (`make_problem`)."""
        return _fixed(self.noise_multiplier, "noise_multiplier")

    @property
    def fixed_steps(self) -> int:
        """T, fixed when solving for sigma (given, or ceil(epochs / p); `make_problem`)."""
        return _fixed(self.steps, "steps")

    @property
    def fixed_dataset_size(self) -> int:
        """n, fixed when solving for the batch size (`make_problem`)."""
        return _fixed(self.dataset_size, "dataset_size")

    def run(self, value: Decimal | int) -> Phase:
        """The run at a grid value (Decimal for sigma and p, int otherwise): one Gaussian phase."""
        q = self.quantity
        if q == "scale":
            return Phase("laplace", scale=_unit_scale(Decimal(value), self.sensitivity), steps=self.fixed_steps)
        if q == "sigma":
            return self._run(self.fixed_exact_probability, float(value), self.fixed_steps)
        if q == "T":
            return self._run(self.fixed_exact_probability, self.fixed_noise_multiplier, int(value))
        if q == "epochs":
            return self._run(self.fixed_exact_probability, self.fixed_noise_multiplier,
                             steps_for_epochs(value, self.fixed_exact_probability))
        if q == "p":
            return self._run(Fraction(value), self.fixed_noise_multiplier, self._steps_at(Fraction(value)))
        # batch_size
        exact = Fraction(int(value), self.fixed_dataset_size)
        return self._run(exact, self.fixed_noise_multiplier, self._steps_at(exact))

    def _run(self, exact_probability: Fraction, noise_multiplier: float, steps: int) -> Phase:
        """The run as the accountants take it: one subsampled Gaussian phase, drawn and related as
        the problem says (an epoch of a shuffled or allocated run is ceil(1/p) steps)."""
        epoch_steps = math.ceil(1 / exact_probability) if self.sampling in EPOCH_SAMPLINGS else None
        return Phase("gaussian", sampling_probability=float(exact_probability), noise_multiplier=noise_multiplier,
                     steps=steps, sampling=self.sampling, neighbours=self.neighbours, epoch_steps=epoch_steps,
                     examples_per_user=self.examples_per_user)

    def model_run(self, x: float) -> tuple[float, float, float]:
        """(p, sigma, T) at a real value x of the quantity, T real: the model's continuous run.

        The model is the Poisson run's (it steers the search; the accountant decides): a run
        under replace-one (or of fixed-size batches under add-remove), or with k examples a user,
        moves the sum by 2 or k clipping norms, so its model has sigma / 2 or sigma / k; a shuffled run's upper bound is one unsubsampled
        Gaussian an epoch, so its model has p = 1 and T p steps."""
        p, noise, steps = self._model_poisson_run(x)
        noise /= step_shift(self.sampling, self.neighbours, self.examples_per_user)
        if self.sampling == "shuffle":
            return 1.0, noise, max(steps * min(p, 1.0), 1.0)
        return p, noise, steps

    def _model_poisson_run(self, x: float) -> tuple[float, float, float]:
        q = self.quantity
        if q == "scale":
            return 1.0, x / self.sensitivity, float(self.fixed_steps)
        if q == "sigma":
            return self.fixed_probability, x, float(self.fixed_steps)
        if q == "T":
            return self.fixed_probability, self.fixed_noise_multiplier, x
        if q == "epochs":
            return self.fixed_probability, self.fixed_noise_multiplier, x / self.fixed_probability
        if q == "p":
            return x, self.fixed_noise_multiplier, self._real_steps_at(x)
        p = x / self.fixed_dataset_size
        return p, self.fixed_noise_multiplier, self._real_steps_at(p)

    def _steps_at(self, exact_probability: Fraction) -> int:
        """T at a value of p (solving for p or the batch size): the given steps, or ceil(epochs / p)."""
        if self.steps is not None:
            return self.steps
        return steps_for_epochs(_fixed(self.epochs, "epochs"), exact_probability)

    def _real_steps_at(self, p: float) -> float:
        """The model's T at a real p (solving for p or the batch size): steps, or epochs / p; at least 1."""
        steps = float(self.steps) if self.steps is not None else float(_fixed(self.epochs, "epochs")) / p
        return max(steps, 1.0)

    def model_log_epsilon(self, x: float, delta: float) -> float:
        """log of the model's epsilon (dpcalc.core.calibrate.model) at a real value x of the quantity."""
        p, noise, steps = self.model_run(x)
        if self.mechanism == "laplace":
            return model_log_epsilon(1.0, 1.0, 1.0, delta, log_mu=laplace_model_log_mu(noise, steps))
        return model_log_epsilon(min(p, 1.0), noise, steps, delta)

    def model_log_mu(self, x: float) -> float:
        """log of the model's mu (dpcalc.core.calibrate.model) at a real value x of the quantity."""
        p, noise, steps = self.model_run(x)
        if self.mechanism == "laplace":
            return laplace_model_log_mu(noise, steps)
        return model_log_mu(min(p, 1.0), noise, steps)


def steps_for_epochs(epochs: int | float | Fraction | Decimal, exact_probability: Fraction) -> int:
    """T = ceil(epochs / p) in exact rational arithmetic (never rounded down), at least 1."""
    return max(1, math.ceil(Fraction(epochs) / exact_probability))


def _fixed(value: _T | None, name: str) -> _T:
    """`value`, an input `make_problem` fixes for the quantity solved (None only for the others)."""
    assert value is not None, f"{name} is fixed for this quantity (make_problem)"
    return value


def _unit_scale(scale: Decimal, sensitivity: float) -> float:
    """b / D as a float, rounded down (less noise per unit of sensitivity: epsilon only grows)."""
    exact = Fraction(scale) / Fraction(sensitivity)
    unit = float(exact)
    return math.nextafter(unit, 0.0) if Fraction(unit) > exact else unit


def make_problem(quantity: Quantity, sampling_probability: float | Fraction | None, noise_multiplier: float | None,
                 steps: int | None, epochs: float | Fraction | None, dataset_size: int | None,
                 batch_size: int | None, mechanism: Mechanism = "gaussian", sensitivity: float | None = None,
                 sampling: Sampling = "poisson", neighbours: Neighbours = "add-remove", examples_per_user: int = 1,
                 ) -> Problem:
    """Check that exactly the inputs `quantity` needs are given, and fix p and T."""
    if (sampling, neighbours, examples_per_user) != ("poisson", "add-remove", 1):
        problem = make_problem(quantity, sampling_probability, noise_multiplier, steps, epochs, dataset_size,
                               batch_size, mechanism, sensitivity)
        return _with_scheme(problem, sampling, neighbours, examples_per_user)
    if mechanism not in MECHANISM_QUANTITIES:
        raise ValueError(f"mechanism must be one of {', '.join(MECHANISM_QUANTITIES)}, got mechanism={mechanism!r}")
    if quantity not in MECHANISM_QUANTITIES[mechanism]:
        raise ValueError(f"the {mechanism} mechanism solves for {', '.join(MECHANISM_QUANTITIES[mechanism])}, "
                         f"not {quantity}")
    if mechanism == "laplace":
        return _laplace_problem(sampling_probability, noise_multiplier, steps, epochs, dataset_size, batch_size,
                                sensitivity)
    if sensitivity is not None:
        raise ValueError("sensitivity applies to the laplace mechanism: the gaussian noise multiplier is "
                         "already relative to the sensitivity (the clipping norm)")
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
            if sampling_probability == 0 and (quantity == "epochs" or epochs is not None):
                # p = 0 (nothing sampled) is a run of any T, but not of epochs: an epoch is 1/p steps
                raise ParameterError("sampling_probability", "in (0, 1] with epochs (T = ceil(epochs / p))", 0)
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
            assert epochs is not None, "exactly one of steps and epochs (checked above)"
            POSITIVE.check("epochs", float(epochs))
            if math.isinf(float(epochs)):
                raise ValueError("epochs must be finite")
            exact_epochs = Fraction(epochs)
            if quantity == "sigma":
                assert exact_probability is not None, "fixed above when solving for sigma"
                total_steps = steps_for_epochs(exact_epochs, exact_probability)
    return Problem(quantity, probability, exact_probability, noise_multiplier, total_steps, exact_epochs, dataset_size)


def _with_scheme(problem: Problem, sampling: Sampling, neighbours: Neighbours, examples_per_user: int) -> Problem:
    """The problem with its batches drawn by `sampling` under `neighbours`, `examples_per_user`
    examples a user; refused where no accountant covers the combination (`phases.unsupported`)."""
    import dataclasses

    POSITIVE_INTEGER.check("examples_per_user", examples_per_user)
    why = unsupported(problem.mechanism, sampling, neighbours, examples_per_user)
    if why is not None:
        raise ValueError(why)
    if sampling in EPOCH_SAMPLINGS and problem.quantity == "p":
        # an epoch is ceil(n/b) = ceil(1/p) steps for p = b/n exactly: a p off the grid of b/n has no epoch
        raise ValueError(f"{sampling} sampling: an epoch is ceil(n / b) steps; solve for batch_size (with "
                         "dataset_size), not for p")
    return dataclasses.replace(problem, sampling=sampling, neighbours=neighbours, examples_per_user=examples_per_user)


def _laplace_problem(sampling_probability: float | Fraction | None, noise_multiplier: float | None,
                     steps: int | None, epochs: float | Fraction | None, dataset_size: int | None,
                     batch_size: int | None, sensitivity: float | None) -> Problem:
    """k = `steps` releases of the Laplace mechanism with L1 `sensitivity` (default 1), solving for its scale."""
    given = {"sampling_probability": sampling_probability, "noise_multiplier": noise_multiplier, "epochs": epochs,
             "dataset_size": dataset_size, "batch_size": batch_size}
    for name, value in given.items():
        if value is not None:
            raise ValueError(f"{name} does not apply to the laplace mechanism (k releases, no subsampling)")
    if steps is None:
        raise ValueError("steps (the number of releases k) is required for the laplace mechanism")
    POSITIVE_INTEGER.check("steps", steps)
    unit = 1.0 if sensitivity is None else sensitivity
    POSITIVE.check("sensitivity", unit)  # (0, inf): finite
    return Problem("scale", 1.0, Fraction(1), None, int(steps), None, None, "laplace", unit)


def grid_and_start(problem: Problem, precision: float, target: float, delta: float) -> tuple[Grid, int, float]:
    """The grid of candidate values, the sign (+1: epsilon grows with the value) and a start value.

    The start is the model's own answer (found by bracketing in log x over the whole range):
    for E > 0 where the central-limit epsilon meets E, for E = 0 where mu-GDP's delta(0) meets
    delta; a typical value when the model has no answer in the range.
    """
    q = problem.quantity
    grid: Grid
    if q == "scale":
        unit = Decimal(problem.sensitivity)
        grid = DecimalGrid(precision, unit * SCALE_RANGE[0], unit * SCALE_RANGE[1])
        sign, default = -1, problem.sensitivity
    elif q == "sigma":
        grid, sign, default = DecimalGrid(precision, *SIGMA_RANGE), -1, 1.0
    elif q == "p":
        grid, sign, default = DecimalGrid(precision, *P_RANGE), 1, 0.01
    elif q == "T":
        grid, sign, default = IntegerGrid(1, MAX_STEPS), 1, 1000.0
    elif q == "epochs":
        most = max(1, math.floor(MAX_STEPS * problem.fixed_exact_probability))
        grid, sign, default = IntegerGrid(1, most), 1, 10.0
    else:
        n = problem.fixed_dataset_size
        grid, sign, default = IntegerGrid(1, n), 1, max(1.0, n / 100.0)
    start = default
    low, high = math.log(float(grid.low)), math.log(float(grid.high))
    if target > 0.0:
        log_target = math.log(target)

        def excess(u: float) -> float:
            return sign * (problem.model_log_epsilon(math.exp(u), delta) - log_target)
    else:
        # epsilon = 0 holds once delta(0) = TV <= delta; for mu-GDP that is 2 Phi(mu/2) - 1 <= delta
        log_delta = math.log(delta)

        def excess(u: float) -> float:
            advantage = gdp.max_advantage(math.exp(problem.model_log_mu(math.exp(u))))
            return sign * ((math.log(advantage) if advantage > 0.0 else -LOG_CLIP) - log_delta)

    f_low, f_high = excess(low), excess(high)
    if f_low < 0.0 < f_high:
        start = math.exp(find_root(excess, low, high, rtol=1e-10))
    elif f_high <= 0.0:
        start = float(grid.high)
    elif f_low >= 0.0:
        start = float(grid.low)
    return grid, sign, start

