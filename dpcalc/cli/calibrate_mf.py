"""`dpcalc calibrate --mechanism mf`: the smallest noise multiplier of a matrix-factorisation mechanism.

The mechanism is the one `dpcalc mf` takes (--bands, --strategy or --coefficients with
--participations and --min-sep, --tree); its reduction to one Gaussian phase is calibrated by
the PLD accountant and the answer rescaled (`dpcalc.core.mf.calibrate`, which says why that is
sound). Loaded only for --mechanism mf.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dpcalc.cli.errors import InputError
from dpcalc.cli.options import Formats, Swept, one, option_error
from dpcalc.cli.output import Answer, Report, Table, format_lower, format_number, format_upper
from dpcalc.cli.request import start
from dpcalc.core import record
from dpcalc.core.training import RunParameters
from dpcalc.core.validation import ParameterError

if TYPE_CHECKING:
    from dpcalc.cli.phases import Factorisation
    from dpcalc.core.mf.accounting import MFAccounting


@dataclass(frozen=True)
class MfCalibration:
    """What calibrate --mechanism mf computes from: the target, the run but sigma, the precision."""

    target_epsilon: float | None
    delta: float | None
    run: RunParameters
    precision: float | None


def calibrate_mf(quantities: Any, chosen: Factorisation, neighbours: str | None, refused: dict[str, bool],
                 max_eps: float | None, outputs: Formats) -> tuple[Answer, str | None]:
    """The answer for the mechanism `chosen` (its report, and the reason when no sigma meets the
    target); `quantities` are calibrate's numeric inputs, `refused` the options given that do not
    apply to --mechanism mf (option -> given)."""
    for option, given in refused.items():
        if given:
            raise InputError(f"{option} does not apply to --mechanism mf (it solves for the noise multiplier "
                             "sigma of the mechanism with the pld accountant)", options=(option, "--mechanism"))
    for value in vars(quantities).values():
        if isinstance(value, Swept):
            raise InputError(f"--mechanism mf calibrates one run: give {value.option} one value, got {value.text}",
                             option=value.option, got=value.text)
    if quantities.target_epsilon is None:
        raise InputError("--target-eps is required (the epsilon to meet, >= 0)", option="--target-eps")
    run = RunParameters(p=one(quantities.p), T=one(quantities.T), n=one(quantities.n),
                        batch_size=one(quantities.batch_size), epochs=one(quantities.epochs))
    request = start(MfCalibration(one(quantities.target_epsilon), one(quantities.delta), run,
                                  one(quantities.precision)), outputs=outputs, max_eps=max_eps)
    row = request.rows[0]
    assert row.target_epsilon is not None and row.delta is not None
    from dpcalc.cli.mf import _accounting, _dpsgd_phase, _spell
    from dpcalc.cli.tight import paused_gc
    from dpcalc.core.mf.calibrate import calibrate_sigma

    def reduction(sigma: float) -> MFAccounting:
        at = record.replace(row.run, sigma=sigma)
        return _accounting(at, chosen, neighbours, _dpsgd_phase(at, neighbours, chosen.bands is not None))

    try:
        reduction(1.0)  # the inputs refused before any search
    except ParameterError as error:
        raise option_error(error, _spell) from None
    with paused_gc():
        found = calibrate_sigma(reduction, row.target_epsilon, row.delta, precision=row.precision)
    return request.answer(_report(row, chosen, neighbours, found)), found.reduced.message if found.sigma is None else None


def _report(row: MfCalibration, chosen: Factorisation, neighbours: str | None, found: Any) -> Report:
    accounting, reduced = found.accounting, found.reduced
    (phase,) = accounting.phases
    certified = reduced.certified_epsilon if reduced.certified_epsilon is not None else reduced.epsilon
    sens = accounting.sensitivity
    inputs = {"target_epsilon": row.target_epsilon, "delta": row.delta, "mechanism": "mf", "accountant": "pld",
              "p": row.run.p, "T": row.run.T, "n": row.run.n, "batch_size": row.run.batch_size,
              "epochs": row.run.epochs, "bands": chosen.bands, "strategy": chosen.strategy,
              "coefficients": None if chosen.coefficients is None else list(chosen.coefficients),
              "participations": chosen.participations, "min_sep": chosen.min_sep, "tree": chosen.tree,
              "neighbours": neighbours, "precision": reduced.precision}
    result = {
        "quantity": "sigma", "value": found.sigma, "feasible": found.sigma is not None,
        "certified_epsilon": certified if found.sigma is not None else None,
        "epsilon_lower": reduced.epsilon_lower if found.sigma is not None else None,
        "target_epsilon": row.target_epsilon, "evaluations": reduced.evaluations,
        "reduced": {"p": phase.sampling_probability, "sigma": reduced.value, "T": phase.steps,
                    "neighbours": phase.neighbours},
        "factorisation": accounting.factorisation, "participation": accounting.participation,
        "theorem": accounting.theorem, "figure": accounting.figure,
        "sensitivity": None if sens is None else {"value": sens.value, "exact": sens.exact, "method": sens.method},
        "assumptions": list(accounting.assumptions),
    }
    rows = [("sigma", "none" if found.sigma is None else format_upper(found.sigma),
             "smallest with epsilon <= target, rounded up"),
            ("certified epsilon", "" if found.sigma is None else format_upper(certified),
             "PLD certified upper bound at the reduced run's sigma; the mechanism's is at most this"),
            ("epsilon lower bound", "" if reduced.epsilon_lower is None else format_lower(reduced.epsilon_lower),
             "of the reduced run"),
            ("target epsilon", format_number(row.target_epsilon), f"at delta {format_number(row.delta)}"),
            ("reduced run", "", f"p = {format_number(phase.sampling_probability)}, sigma = "
             f"{'none' if reduced.value is None else format_upper(reduced.value)}, T = {phase.steps} ({phase.neighbours})"),
            ("figure", accounting.figure, "exact, or the theorem's upper bound"),
            ("factorisation", "", accounting.factorisation), ("participation", "", accounting.participation)]
    if sens is not None:
        rows.append(("sensitivity", format_upper(sens.value), ("exact" if sens.exact else "upper bound") + f": {sens.method}"))
    rows += [("theorem", "", accounting.theorem), *(("assumption", "", text) for text in accounting.assumptions)]
    return Report(command="calibrate", inputs=inputs, result=result,
                  tables=[Table(columns=("quantity", "value", "note"), rows=rows,
                                title="Calibration of a matrix-factorisation mechanism: the smallest noise multiplier")],
                  warnings=list(reduced.warnings), epsilon=certified if found.sigma is not None else None,
                  basis="PLD certified upper bound" if found.sigma is not None else None,
                  no_gate=None if found.sigma is not None else "no sigma meets the target")
