"""`dpcalc calibrate`: the noise multiplier, steps, epochs, sampling rate, batch size or Laplace scale that meets a
target epsilon."""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Annotated

from dpcalc.cli.declare import App, Group, Option
from dpcalc.cli.errors import InputError
from dpcalc.cli.like import Like, LikeChoice, calibrate_like, refuse_sweep, with_like
from dpcalc.cli.options import (
    DEFAULT_DELTA,
    BatchSize,
    DatasetSize,
    Epochs,
    MaxBatchSize,
    MaxEpsilon,
    NoiseMultiplier,
    NoiseStd,
    Outputs,
    SamplingProbability,
    Steps,
    SweepableCount,
    SweepableReal,
    SweepOutputs,
    Swept,
    number,
    single,
    sweepable,
)
from dpcalc.cli.output import EXIT_OVER_BUDGET, Answer
from dpcalc.cli.phases import ExamplesPerUserOption, MatrixMechanism, NeighboursOption, SamplingOption
from dpcalc.cli.request import start
from dpcalc.core import record
from dpcalc.core.limits import CALIBRATION_DELTA, DEFAULT_PRECISION, PRECISION
from dpcalc.core.validation import FALSE_POSITIVE_RATE, NON_NEGATIVE, OPEN_UNIT, POSITIVE

if TYPE_CHECKING:
    from dpcalc.core.calibrate.request import Calibration, GivenRun, Task
    from dpcalc.core.calibrate.result import CalibrationResult


class AccountantChoice(str, Enum):
    pld = "pld"
    rdp = "rdp"
    gdp = "gdp"


class CalibratedMechanism(str, Enum):
    gaussian = "gaussian"
    laplace = "laplace"
    mf = "mf"


class SolveChoice(str, Enum):
    sigma = "sigma"
    T = "T"
    p = "p"
    epochs = "epochs"
    batch_size = "batch-size"
    scale = "scale"


app = App()

HELP = f"""Solve for the noise multiplier (or steps, epochs, sampling rate, batch size, Laplace scale) that meets a target epsilon.

Give --target-eps and every quantity of the run but the one solved for (--solve, default
sigma): --p/--sigma/--T, or the training form --n/--batch-size/--epochs. The answer is
conservative: sigma is rounded up and the others down, and the accountant's epsilon at the
returned value, recomputed and checked, is at most the target. sigma and p are found to a
relative --precision [default: {DEFAULT_PRECISION:g}], T, epochs and batch size exactly; the
neighbouring value that exceeds the target is shown (for pld, usually the interpolated value
where epsilon meets the target instead). --accountant pld (default) is the
certified tight bound: `dpcalc pld` at the answer gives the same epsilon; rdp is the Renyi
bound, gdp the central-limit approximation (not a bound). Exit code 1 when no value meets the
target (the closest achievable figure is shown).

--mechanism laplace solves for the scale of --T releases of the Laplace mechanism on a query
of L1 --sensitivity [default: 1], without subsampling (pld or rdp; one release under pld is
solved exactly in closed form). --mechanism mf solves for the noise multiplier of the
matrix-factorisation mechanism `dpcalc mf` accounts (--bands, --strategy or --coefficients
with --participations and --min-sep, or --tree; pld only).

A Gaussian run's noise may be given as --noise-std with the L2 --sensitivity instead of
--sigma (sigma = noise std / sensitivity); solving for sigma with --sensitivity also gives
the noise std, sigma x sensitivity (rounded up).

Sweeps: any numeric option may be a list (1,2,4) or a range start:stop:step (10:60:10); one
row is printed per combination, in the order given; --plot/--chart draw the solved quantity
against the last swept option.

\b
Examples:
  dpcalc calibrate --target-eps 2 --p 0.004 --T 10000
  dpcalc calibrate --target-eps 3 --n 60000 --batch-size 256 --epochs 60 --json
  dpcalc calibrate --target-eps 2 --solve epochs --n 60000 --batch-size 256 --sigma 1.1
  dpcalc calibrate --target-eps 8 --solve batch-size --n 60000 --epochs 10 --sigma 1 --accountant rdp
  dpcalc calibrate --target-eps 1,2,4,8 --p 0.004 --T 10000 --accountant rdp --chart
  dpcalc calibrate --target-eps 1 --mechanism laplace --T 10 --sensitivity 2
  dpcalc calibrate --target-eps 2 --mechanism mf --bands 4 --n 60000 --batch-size 240 --epochs 10
  dpcalc calibrate --target-tpr 0.05 --at-fpr 0.01 --p 0.004 --T 10000

Attack risk instead of epsilon: --target-advantage A (the largest TPR - FPR of any membership
attack) or --target-tpr X --at-fpr Y (the largest TPR at FPR Y), certified as `dpcalc risk`
certifies them (Kulynych et al. 2024); the answer's (epsilon, delta) figure is shown beside.
"""

TargetEpsilon = Annotated[
    SweepableReal | None,
    Option("--target-eps", "--target-epsilon", metavar="FLOAT", help="The epsilon to meet (>= 0) at --delta. Required.",
                 click_type=sweepable(NON_NEGATIVE)),
]


# calibrate's --delta: at least 1e-300 (dpcalc.core.limits.CALIBRATION_DELTA)
CalibrationDelta = Annotated[
    SweepableReal | None,
    Option("--delta", metavar="FLOAT", help=f"Target delta in [1e-300, 1) giving epsilon [default: {DEFAULT_DELTA:g}].",
           click_type=sweepable(CALIBRATION_DELTA)),
]
Accountant = Annotated[
    AccountantChoice,
    Option("--accountant", help="pld (certified tight bound), rdp, or gdp (central-limit approximation)."),
]
Solve = Annotated[
    SolveChoice | None,
    Option("--solve", help="The quantity to solve for; the others are given "
                           "[default: sigma; scale with --mechanism laplace]."),
]
Mechanism = Annotated[
    CalibratedMechanism | None,
    Option("--mechanism", case_sensitive=False,
           help="gaussian (default: a noisy-SGD run), laplace (the scale of --T releases of the "
                "Laplace mechanism, no subsampling) or mf (the noise multiplier of the "
                "matrix-factorisation mechanism of --bands, --strategy, --coefficients or --tree)."),
]
QuerySensitivity = Annotated[
    float | None,
    Option("--sensitivity", metavar="FLOAT", click_type=single(POSITIVE),
           help="The query's sensitivity (> 0): laplace, the L1 sensitivity the scale is for "
                "[default: 1]; gaussian, the L2 sensitivity --noise-std is divided by (and the "
                "solved sigma multiplied by: noise_std). Not with --sigma."),
]
Precision = Annotated[
    SweepableReal | None,
    Option("--precision", metavar="FLOAT",
           help=f"Relative precision of sigma and p, in [1e-12, 0.1] [default: {DEFAULT_PRECISION:g}].",
           click_type=sweepable(PRECISION)),
]
TargetAdvantage = Annotated[
    float | None,
    Option("--target-advantage", metavar="FLOAT",
           help="Calibrate to attack risk: the largest certified advantage (TPR - FPR), in (0, 1).",
           click_type=number(OPEN_UNIT)),
]
TargetTPR = Annotated[
    float | None,
    Option("--target-tpr", metavar="FLOAT", help="Calibrate to attack risk: the largest certified TPR at --at-fpr, in (0, 1).",
           click_type=number(OPEN_UNIT)),
]
AtFPR = Annotated[
    float | None,
    Option("--at-fpr", metavar="FLOAT", help="The false-positive rate of --target-tpr, in [1e-300, 1).",
           click_type=number(FALSE_POSITIVE_RATE)),
]


@dataclass(frozen=True, repr=False, eq=False)
class CalibratedRun:
    """The run's quantities but the sensitivity: --p, --sigma or --noise-std, --T, or the training
    form --n, --batch-size, --epochs (all but the one solved for are given)."""

    p: SamplingProbability = None
    sigma: NoiseMultiplier = None
    noise_std: NoiseStd = None
    T: Steps = None
    n: DatasetSize = None
    batch_size: BatchSize = None
    epochs: Epochs = None


@dataclass(frozen=True, repr=False, eq=False)
class SchemeOptions:
    """How the Gaussian run's batches are drawn and what neighbouring datasets are."""

    sampling: SamplingOption = None
    neighbours: NeighboursOption = None
    examples_per_user: ExamplesPerUserOption = None


@dataclass(frozen=True, repr=False, eq=False)
class RiskOptions:
    """An attack-risk target instead of --target-eps."""

    target_advantage: TargetAdvantage = None
    target_tpr: TargetTPR = None
    at_fpr: AtFPR = None


_RUN, _SCHEME, _RISK, _OUTPUTS = CalibratedRun(), SchemeOptions(), RiskOptions(), SweepOutputs()
_FACTORISATION = MatrixMechanism()


@dataclass(frozen=True)
class Quantities:
    """The numeric inputs of a calibration to epsilon, by their JSON names, in the JSON's order: a
    number, a list or range (`Swept`), or None; a Request's rows hold one number each."""

    target_epsilon: SweepableReal | None
    delta: SweepableReal | None
    p: SweepableReal | None
    sigma: SweepableReal | None
    noise_std: SweepableReal | None
    sensitivity: float | None
    T: SweepableCount | None
    n: SweepableCount | None
    batch_size: SweepableCount | None
    epochs: SweepableReal | None
    precision: SweepableReal | None


class Calibrated:
    """What calibrate prints: the report, then a line on stderr for each run no value solves
    (exit 1, whatever the gates say). A plain class: a dataclass costs its start-up."""

    __slots__ = ("answer", "no_solution")

    def __init__(self, answer: Answer, no_solution: tuple[str | None, ...] = ()) -> None:
        self.answer = answer
        self.no_solution = no_solution

    def emit(self) -> int:
        code = self.answer.emit()
        for message in self.no_solution:
            sys.stderr.write(f"No solution: {message}\n")
        return EXIT_OVER_BUDGET if self.no_solution else code


@app.command("calibrate", help=HELP)
def calibrate(
    target_epsilon: TargetEpsilon = None,
    delta: CalibrationDelta = None,
    accountant: Accountant = AccountantChoice.pld,
    solve: Solve = None,
    mechanism: Mechanism = None,
    sensitivity: QuerySensitivity = None,
    run: Annotated[CalibratedRun, Group()] = _RUN,
    scheme: Annotated[SchemeOptions, Group()] = _SCHEME,
    precision: Precision = None,
    risk: Annotated[RiskOptions, Group()] = _RISK,
    max_batch_size: MaxBatchSize = None,
    max_eps: MaxEpsilon = None,
    outputs: Annotated[SweepOutputs, Group()] = _OUTPUTS,
    factorisation: Annotated[MatrixMechanism, Group()] = _FACTORISATION,
    like: Like = None,
) -> Calibrated:
    from dpcalc.core.calibrate.inputs import check_calibration

    quantities = Quantities(target_epsilon, delta, run.p, run.sigma, run.noise_std, sensitivity, run.T, run.n,
                            run.batch_size, run.epochs, precision)
    if mechanism is CalibratedMechanism.mf:
        if like is not None:
            raise InputError("--like applies to DP-SGD runs (the frameworks' accountants have no matrix "
                             "factorisation): calibrate without it", option="--like")
        return _to_mf(quantities, accountant, solve, sensitivity, scheme, risk, max_batch_size, max_eps, outputs,
                      factorisation)
    if factorisation != _FACTORISATION:
        given = next(f"--{name.replace('_', '-')}" for name in record.fields(factorisation)
                     if getattr(factorisation, name) != getattr(_FACTORISATION, name))
        raise InputError(f"{given} applies to --mechanism mf (a matrix-factorisation mechanism)",
                         options=(given, "--mechanism"))
    calibration = _calibration(accountant, solve, mechanism, sensitivity, scheme, max_batch_size, risk)
    check_calibration(calibration, dataset_size_given=run.n is not None, noise_std_given=run.noise_std is not None)
    if calibration.risk.given:
        if like is not None:
            raise InputError("--like shows a framework's epsilon: calibrate with --target-eps to compare it",
                             options=("--like", "--target-eps"))
        return _to_risk(calibration, quantities, max_eps, outputs)
    return _to_epsilon(calibration, quantities, max_eps, outputs, like)


def _to_mf(quantities: Quantities, accountant: AccountantChoice, solve: SolveChoice | None, sensitivity: float | None,
           scheme: SchemeOptions, risk: RiskOptions, max_batch_size: int | None, max_eps: float | None,
           outputs: SweepOutputs, given: MatrixMechanism) -> Calibrated:
    """calibrate --mechanism mf (dpcalc.cli.calibrate_mf): the noise multiplier of the mechanism."""
    from dpcalc.cli.calibrate_mf import calibrate_mf
    from dpcalc.cli.phases import Factorisation

    factorisation = Factorisation(**vars(given), sampling=None if scheme.sampling is None else scheme.sampling.value)
    refused = {"--sigma": quantities.sigma is not None, "--noise-std": quantities.noise_std is not None,
               "--sensitivity": sensitivity is not None, "--accountant": accountant is not AccountantChoice.pld,
               "--solve": solve not in (None, SolveChoice.sigma), "--examples-per-user": scheme.examples_per_user is not None,
               "--max-batch-size": max_batch_size is not None,
               "--target-advantage": risk.target_advantage is not None, "--target-tpr": risk.target_tpr is not None,
               "--plot": outputs.plot is not None, "--chart": outputs.chart, "--x": outputs.x_axis is not None}
    neighbours = None if scheme.neighbours is None else scheme.neighbours.value
    answer, no_solution = calibrate_mf(quantities, factorisation, neighbours, refused, max_eps, outputs)
    return Calibrated(answer, () if no_solution is None else (no_solution,))


def _calibration(accountant: AccountantChoice, solve: SolveChoice | None, mechanism: CalibratedMechanism | None,
                 sensitivity: float | None, scheme: SchemeOptions, max_batch_size: int | None,
                 risk: RiskOptions) -> Calibration:
    """The core's statement of the calibration the options ask for."""
    from dpcalc.core.calibrate.request import Calibration, RiskTarget, Scheme

    mechanism_name = "gaussian" if mechanism is None else mechanism.value
    return Calibration(
        solve=solve.value if solve is not None else ("scale" if mechanism_name == "laplace" else "sigma"),
        accountant=accountant.value, mechanism=mechanism_name, sensitivity=sensitivity,
        scheme=Scheme(None if scheme.sampling is None else scheme.sampling.value,
                      None if scheme.neighbours is None else scheme.neighbours.value, scheme.examples_per_user),
        max_batch_size=max_batch_size, risk=RiskTarget(risk.target_advantage, risk.target_tpr, risk.at_fpr))


def _to_epsilon(calibration: Calibration, quantities: Quantities, max_eps: float | None,
                outputs: Outputs, like: LikeChoice | None = None) -> Calibrated:
    """Calibrate each row to its target epsilon (every row checked before any is solved); with
    --like, one row's report shows the framework's epsilon at the answer."""
    from dpcalc.core.calibrate.inputs import tasks

    request = start(quantities, outputs=outputs, max_eps=max_eps)
    refuse_sweep(like, request.is_sweep)
    if (request.plot is not None or request.chart) and not request.is_sweep:
        raise InputError(
            "--plot and --chart draw a sweep: give a list or range, e.g. --target-eps 1,2,4,8 or --epochs 10:60:10",
            options=("--plot", "--chart", "--target-eps", "--epochs"),
        )
    runs = [given_run(row) for row in request.rows]
    results = _solve(calibration, runs, tasks(calibration, runs))

    from dpcalc.cli.calibrate_report import calibration_report, no_solution_message

    report = calibration_report(calibration, request, results)
    if not request.is_sweep:
        given = calibration.scheme
        scheme = {name: value for name, value in (
            ("sampling", given.sampling), ("neighbours", given.neighbours), ("examples_per_user", given.examples_per_user))
            if value is not None}
        with_like(report, calibrate_like(like, results[0], scheme))
    answer = request.answer(report)
    return Calibrated(answer, tuple(no_solution_message(result) for result in results if not result.feasible))


def _to_risk(calibration: Calibration, quantities: Quantities, max_eps: float | None, outputs: Outputs) -> Calibrated:
    """Calibrate one run to the attack-risk target (certified by the PLD accountant); the target
    epsilon, noise std and sensitivity are not given (refused before)."""
    from dpcalc.core.calibrate.inputs import check_risk_target, parse_problem

    check_risk_target(calibration.risk, quantities.target_epsilon is not None, calibration.accountant)
    if outputs.plot is not None or outputs.chart:
        raise InputError("--plot and --chart draw sweeps of epsilon targets; a risk calibration has no figure",
                         options=("--plot", "--chart"))
    swept = next((value for value in vars(quantities).values() if isinstance(value, Swept)), None)
    if swept is not None:
        raise InputError(f"a risk calibration takes one run, got a list or range for {swept.option}: "
                         "run it once per value", option=swept.option)
    request = start(quantities, outputs=outputs, max_eps=max_eps)
    task = parse_problem(given_run(request.rows[0])._replace(target_epsilon=0.0), calibration.solve)

    from dpcalc.cli import progress
    from dpcalc.cli.calibrate_risk import risk_report
    from dpcalc.cli.tight import paused_gc

    progress.describe(f"solving for {calibration.solve} at the attack-risk target (PLD accountant)")
    with paused_gc():
        result = task.solve_risk(calibration.risk)
    answer = request.answer(risk_report(calibration, request, result))
    return Calibrated(answer, () if result.feasible else (result.message,))


def given_run(row: Quantities) -> GivenRun:
    """One row of a Request (one number per input) as the core's run quantities."""
    from dpcalc.core.calibrate.request import GivenRun

    return GivenRun(**{item.name: getattr(row, item.name) for item in dataclasses.fields(row)})


def _solve(calibration: Calibration, runs: list[GivenRun], found: list[Task]) -> list[CalibrationResult]:
    """Each run's answer with its certified epsilon and warnings, a sweep's rows each starting
    from the previous row's answer."""
    from dpcalc.cli import progress
    from dpcalc.cli.tight import paused_gc
    from dpcalc.core.calibrate.inputs import certified_result
    from dpcalc.core.validation import large_delta_warnings

    accountant = calibration.accountant
    results: list[CalibrationResult] = []
    previous = None
    with paused_gc():
        for index, (task, run) in enumerate(zip(found, runs)):
            progress.describe(f"solving for {calibration.solve} ({accountant} accountant)"
                              + (f", row {index + 1} of {len(found)}" if len(found) > 1 else ""))
            calibrated = task.solve(accountant, hint=previous)
            if calibrated.feasible and calibrated.accountant == "gdp":
                progress.describe("certified epsilon (PLD accountant)")
            result = certified_result(calibrated, use_pld="--accountant pld")
            extra = [w for w in large_delta_warnings(run.n, task.delta) if w not in result.warnings]
            result = dataclasses.replace(result, warnings=(*result.warnings, *extra))
            results.append(result)
            previous = result if result.feasible else previous
    return results
