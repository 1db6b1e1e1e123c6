"""`dpcalc calibrate --target-advantage | --target-tpr --at-fpr`: calibration to an attack-risk
target (dpcalc.core.calibrate.risk_target), the risk counterpart of calibrating to epsilon."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn

from dpcalc.cli.declare import Exit
from dpcalc.cli.options import InputError, Swept, conflict
from dpcalc.cli.output import EXIT_OVER_BUDGET, Report, Table, format_lower, format_number, format_upper
from dpcalc.cli.request import start

if TYPE_CHECKING:
    from dpcalc.core.calibrate.risk_target import RiskCalibration

_ROUNDING = {
    "sigma": "smallest meeting the target, rounded up",
    "T": "largest meeting the target (exact)",
    "epochs": "largest whole number meeting the target",
    "p": "largest meeting the target, rounded down",
    "batch_size": "largest meeting the target (exact)",
}


def calibrate_to_risk(given: dict[str, Any], *, quantity: str, solve: str, accountant: str, max_eps: float | None,
                      json_output: bool, plot: str | None, chart: bool, csv_output: bool = False) -> NoReturn:
    """Parse the options of a risk calibration, solve it, print it and exit (1 when infeasible)."""
    from dpcalc.core.calibrate.inputs import parse_problem

    advantage, tpr, fpr = given["target_advantage"], given["target_tpr"], given["at_fpr"]
    if advantage is not None and tpr is not None:
        raise conflict("--target-advantage", "--target-tpr", "calibrate to one risk figure at a time")
    if given["target_epsilon"] is not None:
        raise conflict("--target-advantage" if advantage is not None else "--target-tpr", "--target-eps",
                       "calibrate to attack risk or to epsilon")
    if tpr is not None and fpr is None:
        raise InputError("--target-tpr needs --at-fpr (the false-positive rate it is stated at, in (0, 1))")
    if fpr is not None and tpr is None:
        raise InputError("--at-fpr goes with --target-tpr (the largest TPR to allow at that FPR)")
    if tpr is not None and fpr is not None and not tpr > fpr:
        raise InputError(f"--target-tpr must exceed --at-fpr {format_number(fpr)} (no attack does worse than "
                         f"guessing: TPR >= FPR), got {format_number(tpr)}")
    if accountant != "pld":
        raise InputError(f"--accountant {accountant}: risk targets are certified by the PLD accountant "
                         "(the default); drop --accountant")
    if plot is not None or chart:
        raise InputError("--plot and --chart draw sweeps of epsilon targets; a risk calibration has no figure")
    swept = next((value for value in given.values() if isinstance(value, Swept)), None)
    if swept is not None:
        raise InputError(f"a risk calibration takes one run, got a list or range for {swept.option}: "
                         "run it once per value")
    request = start({key: value for key, value in given.items()
                     if key not in ("target_advantage", "target_tpr", "at_fpr", "target_epsilon")},
                    max_eps=max_eps, json_output=json_output, csv_output=csv_output)
    row = {**request.rows[0], "target_epsilon": 0.0}
    problem = parse_problem(row, solve)
    problem.pop("target_epsilon")

    from dpcalc.cli import progress
    from dpcalc.cli.tight import paused_gc
    from dpcalc.core.calibrate.risk_target import calibrate_risk

    figure = "advantage" if advantage is not None else "tpr"
    target = advantage if advantage is not None else tpr
    progress.describe(f"solving for {solve} at the attack-risk target (PLD accountant)")
    with paused_gc():
        result = calibrate_risk(quantity, figure, target, fpr=fpr, **problem)  # type: ignore[arg-type]
    inputs = {key: value for key, value in request.given.items()}
    inputs.update({"target_advantage": advantage, "target_tpr": tpr, "at_fpr": fpr, "target_epsilon": None,
                   "accountant": "pld", "solve": quantity, "max_eps": request.max_epsilon,
                   "precision": result.precision, "mechanism": "gaussian", "noise_std": None, "sensitivity": None})
    report = Report(
        command="calibrate",
        inputs=inputs,
        result=_result_keys(result),
        tables=[_table(result)],
        warnings=list(result.warnings),
        epsilon=result.epsilon if result.feasible else None,
        basis="PLD certified upper bound at the answer",
        no_gate="no value meets the target, so there is no answer to check against --max-eps",
    )
    code = request.emit(report)
    if not result.feasible:
        import sys

        sys.stderr.write(f"No solution: {result.message}\n")
        raise Exit(EXIT_OVER_BUDGET)
    raise Exit(code)


def _result_keys(result: RiskCalibration) -> dict[str, Any]:
    key = result.quantity
    return {
        key: result.value,
        "basis": "PLD certified upper bound",  # what `epsilon` is, as in every calibrate result
        "figure": result.figure,
        "target": result.target,
        "fpr": result.fpr,
        "risk": result.risk if result.feasible else None,
        "risk_lower": result.risk_lower if result.feasible else None,
        "epsilon": result.epsilon,
        "epsilon_lower": result.epsilon_lower,
        "delta": result.delta,
        "accountant": "pld",
        "evaluations": result.evaluations,
        "feasible": result.feasible,
        "precision": result.precision,
        "boundary": result.boundary,
        "run": {"p": result.sampling_probability, "sigma": result.noise_multiplier, "T": result.steps},
        "rejected": None if result.rejected is None else {key: result.rejected, "risk": result.rejected_risk},
        "closest": None if result.feasible else {key: result.closest, "risk": result.risk},
        "message": result.message,
    }


def _table(result: RiskCalibration) -> Table:
    key = result.quantity
    label = key.replace("_", " ")
    figure = "max advantage" if result.figure == "advantage" else f"TPR at FPR {format_number(result.fpr)}"
    rows: list[tuple[str, str, str]] = []
    if result.feasible:
        rows.append((label, format_number(result.value), _ROUNDING[key]))
        rows.append((figure, format_upper(result.risk), f"certified upper bound; target {format_number(result.target)}"))
        rows.append((f"{figure} lower bound", format_lower(result.risk_lower), "the true figure is at least this"))
    else:
        rows.append((f"closest {label}", format_number(result.closest), "the most private value tried: over the target"))
        rows.append((figure, format_upper(result.risk), f"certified upper bound; target {format_number(result.target)}"))
    rows.append(("epsilon", format_upper(result.epsilon),
                 f"certified upper bound at delta {format_number(result.delta)} (lower {format_lower(result.epsilon_lower)})"))
    if result.rejected is not None and result.rejected_risk is not None:
        rows.append((f"next {label}", format_number(result.rejected), f"{figure} {format_number(result.rejected_risk)}: over"))
    elif result.boundary is not None:
        rows.append((f"{label} at target", format_number(result.boundary), "interpolated where the figure meets the target"))
    rows.append(("run", "", f"p = {format_number(result.sampling_probability)}, sigma = "
                            f"{format_number(result.noise_multiplier)}, T = {result.steps}"))
    rows.append(("evaluations", str(result.evaluations), "certified evaluations of the figure (PLD)"))
    return Table(columns=("quantity", "value", "note"), rows=rows,
                 title=f"Calibration to attack risk: {figure} <= {format_number(result.target)} (PLD, certified)")
