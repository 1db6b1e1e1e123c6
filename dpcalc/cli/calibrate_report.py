"""The report of `dpcalc calibrate` to epsilon: its JSON, its table (a sweep's rows), and the
figure --max-eps gates on. Loaded once the answers are found."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dpcalc.cli.output import Report, Table, format_lower, format_number, format_upper
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
from dpcalc.core.calibrate.inputs import solved_noise_std
from dpcalc.core.limits import DEFAULT_PRECISION

if TYPE_CHECKING:
    from dpcalc.cli.request import Request
    from dpcalc.core.calibrate.request import Calibration
    from dpcalc.core.calibrate.result import CalibrationResult

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

# The inputs a sweep's figure names when every row shares them (input key, shown name).
_CAPTION_KEYS = (("accountant", "accountant"), ("target_epsilon", "target epsilon"), ("delta", "delta"),
                 ("p", "p"), ("sigma", "sigma"), ("T", "T"), ("n", "n"), ("batch_size", "batch size"),
                 ("epochs", "epochs"))


def calibration_report(calibration: Calibration, request: Request, results: list[CalibrationResult]) -> Report:
    """The report of the answers, one per row of `request` (a sweep's table, or the one answer's)."""
    inputs = _inputs(calibration, request)
    quantity = calibration.quantity
    # solving for sigma with a sensitivity also gives the noise std
    solved_std = calibration.sensitivity if calibration.mechanism == "gaussian" and quantity == "sigma" else None
    if not request.is_sweep:
        result = results[0]
        gate_epsilon, gate_basis, no_gate = _gate(result)
        return Report(command="calibrate", inputs=inputs, result=_result_keys(result, solved_std),
                      tables=[_summary_table(result, solved_std, calibration)], warnings=list(result.warnings),
                      epsilon=gate_epsilon, basis=gate_basis, no_gate=no_gate)
    swept_keys = list(request.swept)
    rows = [Row({**{key: getattr(row, key) for key in swept_keys}, **_result_keys(result, solved_std)}, result.warnings,
                *_gate(result))
            for row, result in zip(request.rows, results)]
    echo_rows(inputs, rows, swept_keys, swept_keys)
    accountant = calibration.accountant
    output = SweepOutput(
        command="calibrate",
        inputs=inputs,
        swept_keys=swept_keys,
        columns=_sweep_columns(swept_keys, quantity),
        title=f"Calibration sweep: {TITLE[quantity]} with epsilon <= target ({accountant})",
        max_epsilon=request.max_epsilon,
        figures=lambda: _sweep_figure([row.values for row in rows], request, quantity, accountant,
                                      sweep_caption(inputs, _CAPTION_KEYS)),
    )
    return sweep_report(output, rows)


def _inputs(calibration: Calibration, request: Request) -> dict[str, Any]:
    """The JSON `inputs`: the options as given, with the defaults the calibration used."""
    inputs = dict(request.given)
    if inputs["precision"] is None and calibration.solve in ("sigma", "p", "scale"):
        inputs["precision"] = DEFAULT_PRECISION
    gaussian = calibration.mechanism == "gaussian"
    inputs.update({"sampling": "poisson" if gaussian else None, "neighbours": "add-remove" if gaussian else None,
                   "examples_per_user": 1 if gaussian else None})
    if calibration.scheme.given:
        inputs.update(zip(("sampling", "neighbours", "examples_per_user"), calibration.scheme.resolved))
    sensitivity = calibration.sensitivity
    inputs.update({"max_batch_size": calibration.max_batch_size})
    inputs.update({"accountant": calibration.accountant, "solve": calibration.quantity, "max_eps": request.max_epsilon,
                   "mechanism": calibration.mechanism,
                   "sensitivity": 1.0 if sensitivity is None and calibration.mechanism == "laplace" else sensitivity})
    return inputs


def _gate(result: CalibrationResult) -> tuple[float | None, str | None, str | None]:
    """(epsilon, basis, no_gate) for --max-eps: the certified epsilon at the answer."""
    if not result.feasible:
        return None, None, "no value meets the target, so there is no answer to check against --max-eps"
    if result.certified_epsilon is None:
        return None, None, ("the PLD accountant could not certify the gdp answer's epsilon; "
                            "use --accountant pld or rdp")
    basis = "PLD certified upper bound at the gdp answer" if result.accountant == "gdp" else result.basis
    return result.certified_epsilon, basis, None


def _run_keys(result: CalibrationResult) -> dict[str, Any]:
    """The run at the answer (at the closest value tried when infeasible)."""
    run: dict[str, Any] = {"p": result.sampling_probability, "sigma": result.noise_multiplier, "T": result.steps}
    if result.mechanism == "laplace":
        run.update(sigma=None, scale=result.value if result.feasible else result.closest,
                   sensitivity=result.sensitivity)
    return run


def _result_keys(result: CalibrationResult, sensitivity: float | None = None) -> dict[str, Any]:
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
        "message": no_solution_message(result),
    }
    if result.quantity == "sigma":
        keys["noise_std"] = solved_noise_std(result.value, sensitivity)
    keys["truncation"] = None if result.max_batch_size is None else {
        "max_batch_size": result.max_batch_size, "overflow_probability": result.overflow}
    return keys


def no_solution_message(result: CalibrationResult) -> str | None:
    """The core's reason for no solution, naming the option that solves for T where it suggests that."""
    if not result.suggest_solve_steps or result.message is None:
        return result.message
    from dpcalc.core.calibrate import SOLVE_STEPS_HINT

    return result.message.replace(SOLVE_STEPS_HINT, f"{SOLVE_STEPS_HINT} (--solve T)", 1)


def _value_text(value: float | int | None) -> str:
    """The solved value in full: sigma and p are short decimals (6 significant digits at the
    default precision), and rounding them for display could show a less conservative value."""
    if value is None:
        return "-"
    return repr(value) if isinstance(value, float) else str(value)


def _summary_table(result: CalibrationResult, sensitivity: float | None, calibration: Calibration) -> Table:
    q = result.quantity
    name = {"batch_size": "batch size"}.get(q, q)
    rows = _answer_rows(result, name, sensitivity) if result.feasible else [
        (name, "none", "no value meets the target"),
        (f"closest {name}", _value_text(result.closest), f"epsilon {format_number(result.epsilon)} > target")]
    rows.append(("target epsilon", format_number(result.target_epsilon), f"delta = {format_number(result.delta)}"))
    rows += _run_rows(result, calibration)
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


def _answer_rows(result: CalibrationResult, name: str, sensitivity: float | None) -> list[tuple[str, str, str]]:
    """The answer, its epsilon (and the certified one, the lower bound) and the value beyond it."""
    note = ROUNDING[result.quantity]
    if result.accountant == "gdp":
        note = note.replace("with epsilon", "with central-limit epsilon")
    rows = [(name, _value_text(result.value), note)]
    if result.quantity == "sigma" and sensitivity is not None:
        rows.append(("noise std", _value_text(solved_noise_std(result.value, sensitivity)),
                     f"sigma x sensitivity {format_number(sensitivity)}, rounded up"))
    if result.exact:
        rows.append(("epsilon", format_upper(result.epsilon), "exact: the Laplace mechanism's privacy profile, one release"))
    elif result.closed_form == "composition":
        rows.append(("epsilon", format_upper(result.epsilon),
                     f"basic composition of pure DP, k sensitivity / scale: below the {result.accountant} bound here"))
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
    return rows


def _run_rows(result: CalibrationResult, calibration: Calibration) -> list[tuple[str, str, str]]:
    """The rest of the run: the Laplace releases, or the Gaussian run's p, sigma, T, cap and scheme."""
    if result.mechanism == "laplace":
        return [("T", str(result.steps), "releases of the Laplace mechanism, no subsampling"),
                ("sensitivity", format_number(result.sensitivity), "L1")]
    run = [("p", format_number(result.sampling_probability)), ("sigma", format_number(result.noise_multiplier)),
           ("T", str(result.steps))]
    run = [(key, value) for key, value in run if key != result.quantity]
    rows = [(key, value, "the rest of the run" if index == 0 else "") for index, (key, value) in enumerate(run)]
    if result.max_batch_size is not None:
        rows.append(("max batch size", str(result.max_batch_size), "batches cut to this"))
        rows.append(("overflow probability", format_upper(result.overflow),
                     "some batch above the cap; (1 + e^eps) times this is in delta"))
    if calibration.scheme.given:
        sampling, neighbours, per_user = calibration.scheme.resolved
        rows.append(("sampling", sampling, f"{neighbours} neighbours"
                     + (f", {per_user} examples per user" if per_user > 1 else "")))
    return rows


def _sweep_columns(swept_keys: list[str], quantity: str) -> list[Column]:
    """The swept inputs, the solved quantity (and the T or p it sets), its epsilon and the evaluations."""
    shown = [quantity] if quantity not in swept_keys else []
    shown += {"epochs": ["run.T"], "batch_size": ["run.p"]}.get(quantity, []) + ["epsilon", "evaluations"]
    return sweep_columns([], swept_keys, (), shown, headers={"run.T": "T", "run.p": "p"}, upward={"epsilon": True})


def _sweep_figure(rows: list[dict[str, Any]], request: Request[Any], quantity: str, accountant: str,
                  caption: str) -> Any:
    """The solved quantity against the last swept input, one series per value of the others, in
    the accountant's colour; `caption` names the target and run the rows share."""
    x_key = request.x_key  # --x, or the last swept input
    plotted = [{**row, "T": row["run"]["T"]} for row in rows]
    names = {"target_epsilon": "target epsilon", "batch_size": "batch size"}
    return sweep_panels(
        plotted,
        x_key=x_key,
        y_key=quantity,
        series_keys=request.series_keys,
        title=f"{names.get(quantity, quantity)} against {names.get(x_key, x_key)}",
        xlabel=names.get(x_key, x_key),
        ylabel=names.get(quantity, quantity),
        accountant=accountant,
        caption=caption,
    )
