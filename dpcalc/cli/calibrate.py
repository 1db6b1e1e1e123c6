"""`dpcalc calibrate`: the noise multiplier, steps, epochs, sampling rate, batch size or Laplace scale that meets a
target epsilon."""

from __future__ import annotations

import math
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any

from dpcalc.cli.declare import App, Exit, Option
from dpcalc.cli.like import Like, calibrate_like, refuse_sweep, with_like
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
    SweepableReal,
    number,
    single,
    sweepable,
)
from dpcalc.cli.output import EXIT_OVER_BUDGET, Report, Table, format_lower, format_number, format_upper
from dpcalc.cli.phases import (
    ExamplesPerUserOption,
    MechanismChoice,
    NeighboursChoice,
    NeighboursOption,
    SamplingChoice,
    SamplingOption,
)
from dpcalc.cli.request import start
from dpcalc.cli.sweeps import (
    Column,
    Row,
    SweepOutput,
    echo_rows,
    sweep_caption,
    sweep_columns,
    sweep_panels,
    sweep_report,
)
from dpcalc.core.limits import CALIBRATION_DELTA, DEFAULT_PRECISION, PRECISION
from dpcalc.core.validation import FALSE_POSITIVE_RATE, NON_NEGATIVE, OPEN_UNIT, POSITIVE

if TYPE_CHECKING:
    pass


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


# What the table says about each quantity's answer.
ROUNDING = {
    "sigma": "smallest with epsilon <= target, rounded up",
    "T": "largest with epsilon <= target (exact)",
    "epochs": "largest whole number with epsilon <= target",
    "p": "largest with epsilon <= target, rounded down",
    "batch_size": "largest with epsilon <= target (exact)",
    "scale": "smallest with epsilon <= target, rounded up",
}
TITLE = {
    "sigma": "the smallest noise multiplier",
    "T": "the most steps",
    "epochs": "the most epochs",
    "p": "the largest sampling probability",
    "batch_size": "the largest batch size",
    "scale": "the smallest Laplace scale",
}
ACCOUNTANT_NOTE = {
    "pld": "pld: certified upper bound",
    "rdp": "rdp: Renyi DP, default orders",
    "gdp": "gdp: central-limit approximation",
}

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


@app.command("calibrate", help=HELP)
def calibrate(
    target_epsilon: TargetEpsilon = None,
    delta: CalibrationDelta = None,
    accountant: Annotated[
        AccountantChoice,
        Option("--accountant", help="pld (certified tight bound), rdp, or gdp (central-limit approximation)."),
    ] = AccountantChoice.pld,
    solve: Annotated[
        SolveChoice | None,
        Option("--solve", help="The quantity to solve for; the others are given "
                     "[default: sigma; scale with --mechanism laplace]."),
    ] = None,
    mechanism: Annotated[
        MechanismChoice | None,
        Option("--mechanism", case_sensitive=False,
                     help="gaussian (default: a noisy-SGD run) or laplace (the scale of --T releases of the "
                          "Laplace mechanism, no subsampling)."),
    ] = None,
    sensitivity: Annotated[
        float | None,
        Option("--sensitivity", metavar="FLOAT", click_type=single(POSITIVE),
                     help="The query's sensitivity (> 0): laplace, the L1 sensitivity the scale is for "
                          "[default: 1]; gaussian, the L2 sensitivity --noise-std is divided by (and the "
                          "solved sigma multiplied by: noise_std). Not with --sigma."),
    ] = None,
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
    precision: Annotated[
        SweepableReal | None,
        Option(
            "--precision",
            metavar="FLOAT",
            help=f"Relative precision of sigma and p, in [1e-12, 0.1] [default: {DEFAULT_PRECISION:g}].",
            click_type=sweepable(PRECISION),
        ),
    ] = None,
    target_advantage: Annotated[
        float | None,
        Option("--target-advantage", metavar="FLOAT",
                     help="Calibrate to attack risk: the largest certified advantage (TPR - FPR), in (0, 1).",
                     click_type=number(OPEN_UNIT)),
    ] = None,
    target_tpr: Annotated[
        float | None,
        Option("--target-tpr", metavar="FLOAT",
                     help="Calibrate to attack risk: the largest certified TPR at --at-fpr, in (0, 1).",
                     click_type=number(OPEN_UNIT)),
    ] = None,
    at_fpr: Annotated[
        float | None,
        Option("--at-fpr", metavar="FLOAT", help="The false-positive rate of --target-tpr, in [1e-300, 1).",
                     click_type=number(FALSE_POSITIVE_RATE)),
    ] = None,
    max_batch_size: MaxBatchSize = None,
    max_eps: MaxEpsilon = None,
    json_output: Json = False,
    csv_output: Csv = False,
    plot: PlotFile = None,
    chart: Chart = False,
    like: Like = None,
) -> None:
    from dpcalc.core.calibrate.inputs import (
        SOLVED_KEY,
        capped,
        certified_result,
        check_accountant,
        check_cap,
        check_mechanism,
        check_scheme,
        parse_problem,
    )

    mechanism_name = "gaussian" if mechanism is None else mechanism.value
    solved = solve.value if solve is not None else ("scale" if mechanism_name == "laplace" else "sigma")
    quantity = SOLVED_KEY[solved]
    scheme = _scheme_options(sampling, neighbours, examples_per_user)
    if max_batch_size is not None:
        check_cap(max_batch_size, solved, accountant.value, mechanism_name, sampling,
                   target_advantage is not None or target_tpr is not None or at_fpr is not None, n)
    if target_advantage is not None or target_tpr is not None or at_fpr is not None:
        from dpcalc.cli.calibrate_risk import calibrate_to_risk

        if like is not None:
            raise InputError("--like shows a framework's epsilon: calibrate with --target-eps to compare it")
        if scheme:
            raise InputError(f"{_first_given(sampling, neighbours, examples_per_user)}: risk targets calibrate "
                             "Poisson-sampled examples under add-remove; calibrate other runs with --target-eps")

        if mechanism_name == "laplace" or sensitivity is not None:
            raise InputError(f"{'--mechanism laplace' if mechanism_name == 'laplace' else '--sensitivity'}: risk "
                             "targets calibrate Gaussian training runs (sigma is noise / sensitivity); calibrate a "
                             "Laplace scale with --target-eps")
        if noise_std is not None:
            raise InputError("--noise-std: risk targets take the noise multiplier --sigma (noise std / sensitivity), "
                             "or --target-eps takes --noise-std with --sensitivity")
        calibrate_to_risk(
            {"target_advantage": target_advantage, "target_tpr": target_tpr, "at_fpr": at_fpr,
             "target_epsilon": target_epsilon, "delta": delta, "p": p, "sigma": sigma, "T": T, "n": n,
             "batch_size": batch_size, "epochs": epochs, "precision": precision},
            quantity=quantity, solve=solved, accountant=accountant.value,
            max_eps=max_eps, json_output=json_output, plot=plot, chart=chart, csv_output=csv_output)
    request = start({"target_epsilon": target_epsilon, "delta": delta, "p": p, "sigma": sigma, "noise_std": noise_std,
                     "sensitivity": sensitivity, "T": T, "n": n,
                     "batch_size": batch_size, "epochs": epochs, "precision": precision},
                    max_eps=max_eps, json_output=json_output, plot=plot, chart=chart, csv_output=csv_output)
    refuse_sweep(like, request.is_sweep)
    if (request.plot is not None or request.chart) and not request.is_sweep:
        raise InputError(
            "--plot and --chart draw a sweep: give a list or range, e.g. --target-eps 1,2,4,8 or --epochs 10:60:10"
        )
    check_mechanism(mechanism_name, solved, accountant.value, request.given, sensitivity)
    # Every row is parsed before any is computed, so that a bad value fails at once.
    problems = [parse_problem(row, solved, mechanism_name) for row in request.rows]
    if mechanism_name == "laplace":
        if scheme:
            raise InputError(f"{_first_given(sampling, neighbours, examples_per_user)}: --mechanism laplace calibrates "
                             "releases without subsampling; the sampling scheme and relation apply to Gaussian runs")
        for problem in problems:
            problem.update(mechanism="laplace", sensitivity=1.0 if sensitivity is None else sensitivity)
    if scheme:
        check_accountant(accountant.value, scheme)
        for problem, row in zip(problems, request.rows):
            check_scheme(row, solved, sampling, neighbours, examples_per_user)
            problem.update(scheme)
    if max_batch_size is not None:
        for problem, row in zip(problems, request.rows):
            capped(problem, row, max_batch_size)

    import dataclasses

    from dpcalc.cli import progress
    from dpcalc.cli.options import large_delta_warnings
    from dpcalc.cli.tight import paused_gc
    from dpcalc.core import calibrate as core

    results = []
    previous = None
    with paused_gc():
        for index, (problem, row) in enumerate(zip(problems, request.rows)):
            progress.describe(f"solving for {solved} ({accountant.value} accountant)"
                              + (f", row {index + 1} of {len(problems)}" if len(problems) > 1 else ""))
            calibrated = core.calibrate(quantity, accountant=accountant.value, hint=previous, **problem)
            if calibrated.feasible and calibrated.accountant == "gdp":
                progress.describe("certified epsilon (PLD accountant)")
            result = certified_result(calibrated, use_pld="--accountant pld")
            extra = [w for w in large_delta_warnings(row["n"], problem["delta"]) if w not in result.warnings]
            result = dataclasses.replace(result, warnings=(*result.warnings, *extra))
            results.append(result)
            previous = result if result.feasible else previous
    inputs = dict(request.given)
    if inputs["precision"] is None and solved in ("sigma", "p", "scale"):
        inputs["precision"] = DEFAULT_PRECISION
    gaussian = mechanism_name == "gaussian"
    inputs.update({"sampling": "poisson" if gaussian else None, "neighbours": "add-remove" if gaussian else None,
                   "examples_per_user": 1 if gaussian else None})
    inputs.update(scheme)
    inputs.update({"max_batch_size": max_batch_size})
    inputs.update({"accountant": accountant.value, "solve": quantity, "max_eps": request.max_epsilon,
                   "mechanism": mechanism_name,
                   "sensitivity": 1.0 if sensitivity is None and mechanism_name == "laplace" else sensitivity})
    solved_std = sensitivity if mechanism_name == "gaussian" and quantity == "sigma" else None
    if request.is_sweep:
        swept_keys = list(request.swept)
        rows = [Row({**{key: row[key] for key in swept_keys}, **_result_keys(result, solved_std)}, result.warnings,
                    *_gate(result))
                for row, result in zip(request.rows, results)]
        echo_rows(inputs, rows, swept_keys, swept_keys)
        report = sweep_report(
            SweepOutput(
                command="calibrate",
                inputs=inputs,
                swept_keys=swept_keys,
                columns=_sweep_columns(swept_keys, quantity),
                title=f"Calibration sweep: {TITLE[quantity]} with epsilon <= target ({accountant.value})",
                max_epsilon=request.max_epsilon,
                figures=lambda: _sweep_figure([row.values for row in rows], swept_keys, quantity, accountant.value,
                                              sweep_caption(inputs, _CAPTION_KEYS)),
            ),
            rows,
        )
    else:
        result = results[0]
        gate_epsilon, gate_basis, no_gate = _gate(result)
        report = Report(
            command="calibrate",
            inputs=inputs,
            result=_result_keys(result, solved_std),
            tables=[_summary_table(result, solved_std, scheme)],
            warnings=list(result.warnings),
            epsilon=gate_epsilon,
            basis=gate_basis,
            no_gate=no_gate,
        )
        with_like(report, calibrate_like(like, result, scheme))
    code = request.emit(report)
    infeasible = [result for result in results if not result.feasible]
    for result in infeasible:
        import sys

        sys.stderr.write(f"No solution: {_no_solution_message(result)}\n")
    raise Exit(EXIT_OVER_BUDGET if infeasible else code)


def _gate(result) -> tuple[float | None, str | None, str | None]:
    """(epsilon, basis, no_gate) for --max-eps: the certified epsilon at the answer."""
    if not result.feasible:
        return None, None, "no value meets the target, so there is no answer to check against --max-eps"
    if result.certified_epsilon is None:
        return None, None, ("the PLD accountant could not certify the gdp answer's epsilon; "
                            "use --accountant pld or rdp")
    basis = "PLD certified upper bound at the gdp answer" if result.accountant == "gdp" else result.basis
    return result.certified_epsilon, basis, None


def _run_keys(result) -> dict[str, Any]:
    """The run at the answer (at the closest value tried when infeasible)."""
    run = {"p": result.sampling_probability, "sigma": result.noise_multiplier, "T": result.steps}
    if result.mechanism == "laplace":
        run.update(sigma=None, scale=result.value if result.feasible else result.closest,
                   sensitivity=result.sensitivity)
    return run


def solved_noise_std(sigma: float | None, sensitivity: float | None) -> float | None:
    """The noise std of a solved sigma, sigma x sensitivity, rounded up (never below the noise needed)."""
    if sigma is None or sensitivity is None:
        return None
    from fractions import Fraction

    product = sigma * sensitivity
    if Fraction(product) < Fraction(sigma) * Fraction(sensitivity):
        product = math.nextafter(product, math.inf)
    return product


def _result_keys(result, sensitivity: float | None = None) -> dict[str, Any]:
    """The result keys of one run; `sensitivity` (solving sigma with --sensitivity) adds noise_std."""
    key = result.quantity
    keys = {
        key: result.value,
        "epsilon": result.epsilon if result.feasible else None,
        "certified_epsilon": result.certified_epsilon if result.feasible else None,
        "target_epsilon": result.target_epsilon,
        "accountant": result.accountant,
        "evaluations": result.evaluations,
        "delta": result.delta,
        "feasible": result.feasible,
        "epsilon_lower": result.epsilon_lower if result.feasible else None,
        "precision": result.precision,
        "boundary": result.boundary,
        "run": _run_keys(result),
        "basis": result.basis,
        "rejected": None if result.rejected is None else {key: result.rejected, "epsilon": result.rejected_epsilon},
        "closest": None if result.feasible else {key: result.closest, "epsilon": result.epsilon},
        "message": _no_solution_message(result),
    }
    if result.quantity == "sigma":
        keys["noise_std"] = solved_noise_std(result.value, sensitivity)
    keys["truncation"] = None if result.max_batch_size is None else {
        "max_batch_size": result.max_batch_size, "overflow_probability": result.overflow}
    return keys


def _no_solution_message(result) -> str | None:
    """The core's reason for no solution, naming the option that solves for T where it suggests that."""
    if not result.suggest_solve_steps:
        return result.message
    from dpcalc.core.calibrate import SOLVE_STEPS_HINT

    return result.message.replace(SOLVE_STEPS_HINT, f"{SOLVE_STEPS_HINT} (--solve T)", 1)


def _value_text(value) -> str:
    """The solved value in full: sigma and p are short decimals (6 significant digits at the
    default precision), and rounding them for display could show a less conservative value."""
    if value is None:
        return "-"
    return repr(value) if isinstance(value, float) else str(value)


def _scheme_options(sampling: SamplingChoice | None, neighbours: NeighboursChoice | None,
                    examples_per_user: int | None) -> dict[str, Any]:
    """The run's sampling scheme, relation and unit of privacy by input name, when any of them is
    given ({} otherwise: a Poisson run of examples under add-remove)."""
    if sampling is None and neighbours is None and examples_per_user is None:
        return {}
    return {"sampling": (sampling or SamplingChoice.poisson).value,
            "neighbours": (neighbours or NeighboursChoice.add_remove).value,
            "examples_per_user": 1 if examples_per_user is None else examples_per_user}


def _first_given(sampling: SamplingChoice | None, neighbours: NeighboursChoice | None,
                 examples_per_user: int | None) -> str:
    """The first of --sampling, --neighbours and --examples-per-user given, as the user wrote it."""
    for option, value in (("--sampling", sampling), ("--neighbours", neighbours),
                          ("--examples-per-user", examples_per_user)):
        if value is not None:
            return f"{option} {value.value if isinstance(value, (SamplingChoice, NeighboursChoice)) else value}"
    raise AssertionError("called when one of them is given")


def _summary_table(result, sensitivity: float | None = None, scheme: dict[str, Any] | None = None) -> Table:
    q = result.quantity
    name = {"batch_size": "batch size"}.get(q, q)
    rows = []
    if result.feasible:
        note = ROUNDING[q]
        if result.accountant == "gdp":
            note = note.replace("with epsilon", "with central-limit epsilon")
        rows.append((name, _value_text(result.value), note))
        if q == "sigma" and sensitivity is not None:
            rows.append(("noise std", _value_text(solved_noise_std(result.value, sensitivity)),
                         f"sigma x sensitivity {format_number(sensitivity)}, rounded up"))
        if result.exact:
            rows.append(("epsilon", format_upper(result.epsilon),
                         "exact: the Laplace mechanism's privacy profile, one release"))
        elif result.closed_form == "composition":
            rows.append(("epsilon", format_upper(result.epsilon),
                         f"basic composition of pure DP, k sensitivity / scale: below the {result.accountant} "
                         "bound here"))
        elif result.accountant == "gdp":
            rows.append(("epsilon", format_number(result.epsilon), ACCOUNTANT_NOTE[result.accountant]))
            rows.append(("certified epsilon", format_upper(result.certified_epsilon),
                         "PLD accountant at this value, certified upper bound"))
        else:
            rows.append(("epsilon", format_upper(result.epsilon), ACCOUNTANT_NOTE[result.accountant]))
        if result.epsilon_lower is not None and not result.exact:
            rows.append(("epsilon lower bound", format_lower(result.epsilon_lower), "the true epsilon is at least this"))
        if result.rejected is not None:
            rows.append((f"next {name}", _value_text(result.rejected),
                         f"epsilon {format_number(result.rejected_epsilon)} > target"))
        elif result.boundary is not None:
            rows.append((f"{name} at target", format_number(result.boundary), "interpolated: epsilon = target"))
    else:
        rows.append((name, "none", "no value meets the target"))
        rows.append((f"closest {name}", _value_text(result.closest),
                     f"epsilon {format_number(result.epsilon)} > target"))
    rows.append(("target epsilon", format_number(result.target_epsilon), f"delta = {format_number(result.delta)}"))
    if result.mechanism == "laplace":
        rows.append(("T", str(result.steps), "releases of the Laplace mechanism, no subsampling"))
        rows.append(("sensitivity", format_number(result.sensitivity), "L1"))
    else:
        run = [("p", format_number(result.sampling_probability)), ("sigma", format_number(result.noise_multiplier)),
               ("T", str(result.steps))]
        run = [(key, value) for key, value in run if key != q]
        for index, (key, value) in enumerate(run):
            rows.append((key, value, "the rest of the run" if index == 0 else ""))
        if result.max_batch_size is not None:
            rows.append(("max batch size", str(result.max_batch_size), "batches cut to this"))
            rows.append(("overflow probability", format_upper(result.overflow),
                         "some batch above the cap; (1 + e^eps) times this is in delta"))
        if scheme:
            per_user = scheme["examples_per_user"]
            rows.append(("sampling", scheme["sampling"], f"{scheme['neighbours']} neighbours"
                         + (f", {per_user} examples per user" if per_user > 1 else "")))
    if result.exact:
        rows.append(("evaluations", "0", "closed form: no accountant calls"))
    else:
        rows.append(("evaluations", str(result.evaluations), f"{result.accountant} accountant calls"))
    return Table(
        columns=("quantity", "value", "note"),
        rows=rows,
        title=(f"Calibration: {TITLE[q]} for {'central-limit ' if result.accountant == 'gdp' else ''}epsilon <= "
               f"{format_number(result.target_epsilon)} ({result.accountant})"),
        justify=("left", "right", "left"),
    )


def _sweep_columns(swept_keys: list[str], quantity: str) -> list[Column]:
    """The swept inputs, the solved quantity (and the T or p it sets), its epsilon and the evaluations."""
    shown = [quantity] if quantity not in swept_keys else []
    shown += {"epochs": ["run.T"], "batch_size": ["run.p"]}.get(quantity, []) + ["epsilon", "evaluations"]
    return sweep_columns([], swept_keys, (), shown, headers={"run.T": "T", "run.p": "p"}, upward={"epsilon": True})


# The inputs a sweep's figure names when every row shares them (input key, shown name).
_CAPTION_KEYS = (("accountant", "accountant"), ("target_epsilon", "target epsilon"), ("delta", "delta"),
                 ("p", "p"), ("sigma", "sigma"), ("T", "T"), ("n", "n"), ("batch_size", "batch size"),
                 ("epochs", "epochs"))


def _sweep_figure(rows: list[dict[str, Any]], swept_keys: list[str], quantity: str, accountant: str,
                  caption: str):
    """The solved quantity against the last swept input, one series per value of the others, in
    the accountant's colour; `caption` names the target and run the rows share."""
    x_key = swept_keys[-1]
    plotted = [{**row, "T": row["run"]["T"]} for row in rows]
    names = {"target_epsilon": "target epsilon", "batch_size": "batch size"}
    return sweep_panels(
        plotted,
        x_key=x_key,
        y_key=quantity,
        series_keys=swept_keys[:-1],
        title=f"{names.get(quantity, quantity)} against {names.get(x_key, x_key)}",
        xlabel=names.get(x_key, x_key),
        ylabel=names.get(quantity, quantity),
        accountant=accountant,
        caption=caption,
    )
