"""What a calibration is asked: the typed request a caller builds and the tasks core.calibrate solves.

`Calibration` states what is solved for, by which accountant, of which mechanism and sampling
scheme, with which cap or attack-risk target; `GivenRun` holds one run's quantities as given;
`Task` is one run checked (`inputs.tasks`), the keyword arguments of `core.calibrate` (or of
`calibrate_risk`), and solves itself.

They are immutable NamedTuples rather than frozen dataclasses: every calibration defines them
on its way to the first evaluation, and a NamedTuple costs about a fifth of a frozen
dataclass to define (0.6 ms against 2.7 ms each, measured on a loaded 2-core machine).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, NamedTuple

if TYPE_CHECKING:
    from fractions import Fraction

    from dpcalc.core.accountants import AccountantName
    from dpcalc.core.calibrate.problem import Quantity
    from dpcalc.core.calibrate.result import CalibrationResult
    from dpcalc.core.calibrate.risk_target import RiskCalibration

# The quantity (and JSON key) of each solve.
SOLVED_KEY: dict[str, Quantity] = {"sigma": "sigma", "T": "T", "p": "p", "epochs": "epochs", "batch-size": "batch_size",
                                   "scale": "scale"}


class GivenRun(NamedTuple):
    """One run's quantities as given, by keyword (None where not given): the target, delta and
    precision of the solve, and the run's p, sigma (or noise_std with sensitivity), T, or the
    training form n, batch_size, epochs."""

    target_epsilon: float | None = None
    delta: float = 1e-5
    precision: float | None = None
    p: float | None = None
    sigma: float | None = None
    noise_std: float | None = None
    sensitivity: float | None = None
    T: int | None = None
    n: int | None = None
    batch_size: int | None = None
    epochs: float | None = None


class Scheme(NamedTuple):
    """The run's sampling scheme, neighbouring relation and examples per user as given (None
    where not: poisson, add-remove, 1)."""

    sampling: str | None = None
    neighbours: str | None = None
    examples_per_user: int | None = None

    @property
    def given(self) -> bool:
        return self.sampling is not None or self.neighbours is not None or self.examples_per_user is not None

    @property
    def resolved(self) -> tuple[str, str, int]:
        """(sampling, neighbours, examples_per_user) with the defaults filled in."""
        return (self.sampling or "poisson", self.neighbours or "add-remove",
                1 if self.examples_per_user is None else self.examples_per_user)

    def first_given(self) -> tuple[str, object]:
        """The first of sampling, neighbours and examples_per_user given: (keyword, value)."""
        for keyword in ("sampling", "neighbours", "examples_per_user"):
            value = getattr(self, keyword)
            if value is not None:
                return keyword, value
        raise AssertionError("called when one of them is given")


class RiskTarget(NamedTuple):
    """An attack-risk target instead of epsilon: the largest advantage, or the largest TPR at an FPR."""

    advantage: float | None = None
    tpr: float | None = None
    fpr: float | None = None

    @property
    def given(self) -> bool:
        return self.advantage is not None or self.tpr is not None or self.fpr is not None

    @property
    def figure(self) -> Literal["advantage", "tpr"]:
        return "advantage" if self.advantage is not None else "tpr"

    @property
    def target(self) -> float:
        value = self.advantage if self.advantage is not None else self.tpr
        assert value is not None, "a checked risk target has its figure"
        return value


class Calibration(NamedTuple):
    """What a calibration solves: `solve` (sigma, T, epochs, p, batch-size, scale) by `accountant`,
    of the Gaussian run or the Laplace mechanism (its L1 `sensitivity`), under `scheme`, with the
    Poisson batches capped at `max_batch_size`, to epsilon or to the attack-risk target `risk`."""

    solve: str
    accountant: AccountantName = "pld"
    mechanism: str = "gaussian"
    sensitivity: float | None = None
    scheme: Scheme = Scheme()
    max_batch_size: int | None = None
    risk: RiskTarget = RiskTarget()

    @property
    def quantity(self) -> Quantity:
        return SOLVED_KEY[self.solve]


class Task(NamedTuple):
    """One run to solve: the keyword arguments of `core.calibrate` (of `calibrate_risk` for a risk
    target, which takes the Poisson run's quantities)."""

    quantity: Quantity
    target_epsilon: float
    delta: float
    precision: float
    sampling_probability: float | Fraction | None = None
    noise_multiplier: float | None = None
    steps: int | None = None
    epochs: float | Fraction | None = None
    dataset_size: int | None = None
    batch_size: int | None = None
    mechanism: Literal["gaussian", "laplace"] = "gaussian"
    sensitivity: float | None = None
    scheme: Scheme = Scheme()
    max_batch_size: int | None = None

    def solve(self, accountant: AccountantName, hint: CalibrationResult | None = None) -> CalibrationResult:
        """The calibration of this run by `accountant` (`core.calibrate`), `hint` a previous answer."""
        from dpcalc.core.calibrate.solve import calibrate

        sampling, neighbours, per_user = self.scheme.resolved
        return calibrate(self.quantity, self.target_epsilon, self.delta, accountant=accountant,
                         sampling_probability=self.sampling_probability, noise_multiplier=self.noise_multiplier,
                         steps=self.steps, epochs=self.epochs, dataset_size=self.dataset_size,
                         batch_size=self.batch_size, precision=self.precision, hint=hint, mechanism=self.mechanism,
                         sensitivity=self.sensitivity, sampling=sampling, neighbours=neighbours,  # type: ignore[arg-type]
                         examples_per_user=per_user, max_batch_size=self.max_batch_size)

    def solve_risk(self, risk: RiskTarget) -> RiskCalibration:
        """The calibration of this Poisson run to the attack-risk target (`calibrate_risk`)."""
        from dpcalc.core.calibrate.risk_target import calibrate_risk

        return calibrate_risk(self.quantity, risk.figure, risk.target, fpr=risk.fpr, delta=self.delta,
                              sampling_probability=self.sampling_probability, noise_multiplier=self.noise_multiplier,
                              steps=self.steps, epochs=self.epochs, dataset_size=self.dataset_size,
                              precision=self.precision)
