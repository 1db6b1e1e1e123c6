"""`dpcalc calibrate`: the noise multiplier, steps, epochs, sampling rate, batch size or Laplace scale that meets a
target epsilon."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

from dpcalc.cli.declare import App, Exit, Option
from dpcalc.cli.options import (
    DEFAULT_DELTA,
    BatchSize,
    Chart,
    Csv,
    DatasetSize,
    Epochs,
    InputError,
    Json,
    MaxBatchSize,
    MaxEpsilon,
    NoiseMultiplier,
    NoiseStd,
    PlotFile,
    SamplingProbability,
    Steps,
    SweepableCount,
    SweepableReal,
    Swept,
    number,
    single,
    sweepable,
)
from dpcalc.cli.output import EXIT_OVER_BUDGET
from dpcalc.cli.phases import ExamplesPerUserOption, MechanismChoice, NeighboursOption, SamplingOption
from dpcalc.cli.request import start
from dpcalc.core.limits import CALIBRATION_DELTA, DEFAULT_PRECISION, PRECISION
from dpcalc.core.validation import FALSE_POSITIVE_RATE, NON_NEGATIVE, OPEN_UNIT, POSITIVE

if TYPE_CHECKING:
    from dpcalc.core.calibrate.request import Calibration, GivenRun, Task
    from dpcalc.core.calibrate.result import CalibrationResult


class AccountantChoice(str, Enum):
    pld = "pld"
    rdp = "rdp"
    gdp = "gdp"


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
solved exactly in closed form).

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
    MechanismChoice | None,
    Option("--mechanism", case_sensitive=False,
           help="gaussian (default: a noisy-SGD run) or laplace (the scale of --T releases of the "
                "Laplace mechanism, no subsampling)."),
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


@dataclass(frozen=True)
class Quantities:
    """The numeric options of a calibration as given: a number, a list or range (`Swept`), or None."""

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

    def inputs(self) -> dict[str, Any]:
        """By input name, in the order the JSON `inputs` lists them (`request.start`'s argument)."""
        return dict(vars(self))


@dataclass(frozen=True)
class Output:
    """How the report is printed: the --max-eps gate, --json or --csv, --plot and --chart."""

    max_eps: float | None
    json_output: bool
    csv_output: bool
    plot: str | None
    chart: bool


@app.command("calibrate", help=HELP)
def calibrate(
    target_epsilon: TargetEpsilon = None,
    delta: CalibrationDelta = None,
    accountant: Accountant = AccountantChoice.pld,
    solve: Solve = None,
    mechanism: Mechanism = None,
    sensitivity: QuerySensitivity = None,
    p: SamplingProbability = None,
    sigma: NoiseMultiplier = None,
    noise_std: NoiseStd = None,
    T: Steps = None,
    n: DatasetSize = None,
    batch_size: BatchSize = None,
    epochs: Epochs = None,
    sampling: SamplingOption = None,
    neighbours: NeighboursOption = None,
    examples_per_user: ExamplesPerUserOption = None,
    precision: Precision = None,
    target_advantage: TargetAdvantage = None,
    target_tpr: TargetTPR = None,
    at_fpr: AtFPR = None,
    max_batch_size: MaxBatchSize = None,
    max_eps: MaxEpsilon = None,
    json_output: Json = False,
    csv_output: Csv = False,
    plot: PlotFile = None,
    chart: Chart = False,
) -> None:
    from dpcalc.core.calibrate.inputs import check_calibration, tasks
    from dpcalc.core.calibrate.request import Calibration, RiskTarget, Scheme

    mechanism_name = "gaussian" if mechanism is None else mechanism.value
    calibration = Calibration(
        solve=solve.value if solve is not None else ("scale" if mechanism_name == "laplace" else "sigma"),
        accountant=accountant.value, mechanism=mechanism_name, sensitivity=sensitivity,
        scheme=Scheme(None if sampling is None else sampling.value, None if neighbours is None else neighbours.value,
                      examples_per_user),
        max_batch_size=max_batch_size, risk=RiskTarget(target_advantage, target_tpr, at_fpr))
    quantities = Quantities(target_epsilon, delta, p, sigma, noise_std, sensitivity, T, n, batch_size, epochs, precision)
    output = Output(max_eps, json_output, csv_output, plot, chart)
    check_calibration(calibration, dataset_size_given=n is not None, noise_std_given=noise_std is not None)
    if calibration.risk.given:
        _to_risk(calibration, quantities, output)
    request = start(quantities.inputs(), max_eps=output.max_eps, json_output=output.json_output, plot=output.plot,
                    chart=output.chart, csv_output=output.csv_output)
    if (request.plot is not None or request.chart) and not request.is_sweep:
        raise InputError(
            "--plot and --chart draw a sweep: give a list or range, e.g. --target-eps 1,2,4,8 or --epochs 10:60:10"
        )
    runs = [given_run(row) for row in request.rows]
    # Every row is checked before any is computed, so that a bad value fails at once.
    results = _solve(calibration, runs, tasks(calibration, runs))

    from dpcalc.cli.calibrate_report import calibration_report, no_solution_message

    code = request.emit(calibration_report(calibration, request, results))
    infeasible = [result for result in results if not result.feasible]
    for result in infeasible:
        import sys

        sys.stderr.write(f"No solution: {no_solution_message(result)}\n")
    raise Exit(EXIT_OVER_BUDGET if infeasible else code)


def _to_risk(calibration: Calibration, quantities: Quantities, output: Output) -> NoReturn:
    """Check a calibration to an attack-risk target, solve it, print it and exit (1 when infeasible)."""
    from dpcalc.core.calibrate.inputs import check_risk_target, parse_problem

    check_risk_target(calibration.risk, quantities.target_epsilon is not None, calibration.accountant)
    if output.plot is not None or output.chart:
        raise InputError("--plot and --chart draw sweeps of epsilon targets; a risk calibration has no figure")
    given = quantities.inputs()
    swept = next((value for value in given.values() if isinstance(value, Swept)), None)
    if swept is not None:
        raise InputError(f"a risk calibration takes one run, got a list or range for {swept.option}: "
                         "run it once per value")
    request = start({key: value for key, value in given.items()
                     if key not in ("target_epsilon", "noise_std", "sensitivity")},
                    max_eps=output.max_eps, json_output=output.json_output, csv_output=output.csv_output)
    task = parse_problem(dataclasses.replace(given_run(request.rows[0]), target_epsilon=0.0), calibration.solve)

    from dpcalc.cli import progress
    from dpcalc.cli.calibrate_risk import risk_report
    from dpcalc.cli.tight import paused_gc

    progress.describe(f"solving for {calibration.solve} at the attack-risk target (PLD accountant)")
    with paused_gc():
        result = task.solve_risk(calibration.risk)
    code = request.emit(risk_report(calibration, request, result))
    if not result.feasible:
        import sys

        sys.stderr.write(f"No solution: {result.message}\n")
        raise Exit(EXIT_OVER_BUDGET)
    raise Exit(code)


def given_run(row: dict[str, Any]) -> GivenRun:
    """One row of a Request as the core's run quantities (the inputs it does not hold: None)."""
    from dpcalc.core.calibrate.request import GivenRun

    return GivenRun(**{key: row[key] for key in GivenRun.__dataclass_fields__ if key in row})


def _solve(calibration: Calibration, runs: list[GivenRun], found: list[Task]) -> list[CalibrationResult]:
    """Each run's answer with its certified epsilon and warnings, a sweep's rows each starting
    from the previous row's answer."""
    from dpcalc.cli import progress
    from dpcalc.cli.options import large_delta_warnings
    from dpcalc.cli.tight import paused_gc
    from dpcalc.core.calibrate.inputs import certified_result

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
