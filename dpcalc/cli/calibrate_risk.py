"""The report of `dpcalc calibrate --target-advantage | --target-tpr --at-fpr`: calibration to an
attack-risk target (dpcalc.core.calibrate.risk_target), the risk counterpart of calibrating to
epsilon."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dpcalc.cli.output import Report, Table, format_lower, format_number, format_upper

if TYPE_CHECKING:
    from dpcalc.cli.request import Request
    from dpcalc.core.calibrate.request import Calibration
    from dpcalc.core.calibrate.risk_target import RiskCalibration

# The run's inputs as the JSON `inputs` lists them first.
_RUN_INPUTS = ("delta", "p", "sigma", "T", "n", "batch_size", "epochs", "precision")

_ROUNDING = {
    "sigma": "smallest meeting the target, rounded up",
    "T": "largest meeting the target (exact)",
    "epochs": "largest whole number meeting the target",
    "p": "largest meeting the target, rounded down",
    "batch_size": "largest meeting the target (exact)",
}


def risk_report(calibration: Calibration, request: Request, result: RiskCalibration) -> Report:
    """The report of a calibration to an attack-risk target: the answer, the risk figure and the
    answer's (epsilon, delta), which --max-eps gates on."""
    risk = calibration.risk
    inputs = {key: request.given[key] for key in _RUN_INPUTS}
    inputs.update({"target_advantage": risk.advantage, "target_tpr": risk.tpr, "at_fpr": risk.fpr,
                   "target_epsilon": None, "accountant": "pld", "solve": calibration.quantity,
                   "max_eps": request.max_epsilon, "precision": result.precision, "mechanism": "gaussian",
                   "noise_std": None, "sensitivity": None})
    return Report(
        command="calibrate",
        inputs=inputs,
        result=_result_keys(result),
        tables=[_table(result)],
        warnings=list(result.warnings),
        epsilon=result.epsilon if result.feasible else None,
        basis="PLD certified upper bound at the answer",
        no_gate="no value meets the target, so there is no answer to check against --max-eps",
    )


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
