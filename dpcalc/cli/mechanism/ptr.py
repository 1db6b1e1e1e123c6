"""`dpcalc mechanism ptr`: propose-test-release - its threshold, "no reply", total privacy and accuracy."""

from __future__ import annotations

from typing import Annotated

from dpcalc.cli.declare import App, Exit, Option
from dpcalc.cli.laplace_eps import parse_probability
from dpcalc.cli.mechanism.given import notes, option_error
from dpcalc.cli.options import InputError, Json, MaxEpsilon, Parsed, exact, number
from dpcalc.cli.output import Report, Table, emit, format_number
from dpcalc.core.validation import NON_NEGATIVE, OPEN_UNIT, POSITIVE, ParameterError

app = App()

HELP = """Propose-test-release: give two of privacy (or noise), error and confidence, get the third.

PTR (Dwork and Roth 2014, Sec. 7.2; Dwork and Lei 2009) proposes a bound b on the local
sensitivity. With d the distance to instability (records to change before some neighbour's
local sensitivity exceeds b), it answers "no reply" when d + Lap(1/eps) <= ln(1/delta)/eps,
and otherwise releases f(x) + Lap(b/eps). --eps is what each step spends: the test costs eps,
the release eps, and the whole mechanism is (2 eps, delta)-DP. --distance gives the chance of
"no reply" at a true distance, --reply-probability the distance a reply needs.

\b
Examples:
  dpcalc mechanism ptr --eps 0.5 --delta 1e-6 --bound 2 --confidence 0.95
  dpcalc mechanism ptr --eps 0.5 --delta 1e-6 --distance 40 --reply-probability 0.99
  dpcalc mechanism ptr --error 10 --confidence 0.95 --bound 2 --delta 1e-6 --json
  dpcalc mechanism ptr --scale 4 --bound 2 --delta 1e-6 --error 10
"""

_OPTION = {"epsilon": "--eps", "scale": "--scale", "delta": "--delta", "bound": "--bound", "error": "--error",
           "failure_probability": "--confidence", "distance": "--distance", "reply_probability": "--reply-probability"}


@app.command("ptr", help=HELP)
def ptr(
    eps: Annotated[
        float | None,
        Option("--eps", metavar="FLOAT", help="Epsilon each step spends (test and release), > 0; the total is 2 eps.",
                     click_type=number(POSITIVE)),
    ] = None,
    scale: Annotated[
        float | None,
        Option("--scale", metavar="FLOAT", help="The release's Laplace scale b / eps, > 0 (instead of --eps).",
                     click_type=number(POSITIVE)),
    ] = None,
    delta: Annotated[
        float | None,
        Option("--delta", metavar="FLOAT", help="Delta of the whole mechanism, in (0, 1); the test's threshold is ln(1/delta)/eps.",
                     click_type=number(OPEN_UNIT)),
    ] = None,
    bound: Annotated[
        float,
        Option("--bound", metavar="FLOAT", help="The proposed bound b on the local sensitivity, > 0.  [default: 1]",
                     show_default=False, click_type=number(POSITIVE)),
    ] = 1.0,
    error: Annotated[
        float | None,
        Option("--error", metavar="FLOAT", help="Error bound of the release (|noise| <= error), > 0.",
                     click_type=number(POSITIVE)),
    ] = None,
    confidence: Annotated[
        float | None,
        Option("--confidence", metavar="FLOAT", help="Probability that the release is within --error, in (0, 1).",
                     click_type=Parsed(parse_probability)),
    ] = None,
    distance: Annotated[
        float | None,
        Option("--distance", metavar="FLOAT", help="True distance to instability (records), >= 0: the chance of \"no reply\" there.",
                     click_type=number(NON_NEGATIVE)),
    ] = None,
    reply_probability: Annotated[
        float | None,
        Option("--reply-probability", metavar="FLOAT", help="Probability of a reply, in (0, 1): the distance it needs.",
                     click_type=Parsed(parse_probability)),
    ] = None,
    max_eps: MaxEpsilon = None,
    json_output: Json = False,
) -> None:
    from dpcalc.core.mechanisms import ptr as core

    if delta is None:
        raise InputError("--delta is required: PTR's test threshold ln(1/delta)/eps and its guarantee (2 eps, delta) depend on it")
    check_two_of_three(eps, scale, error, confidence)
    try:
        result = core.ptr(
            epsilon=eps, scale=scale, delta=delta, bound=bound, error=error,
            failure_probability=None if confidence is None else float(1 - exact(confidence)),
            distance=distance, reply_probability=reply_probability,
            no_reply=None if reply_probability is None else float(1 - exact(reply_probability)),
        )
    except ParameterError as problem:
        raise option_error(problem, _OPTION) from None
    inputs = {"eps": eps, "scale": scale, "delta": delta, "bound": bound, "error": error, "confidence": confidence,
              "distance": distance, "reply_probability": reply_probability, "max_eps": max_eps}
    report = Report(
        command="mechanism ptr",
        inputs=inputs,
        result={
            "epsilon": result.epsilon,
            "total_epsilon": result.total_epsilon,
            "delta": result.delta,
            "bound": result.bound,
            "threshold": result.threshold,
            "test_scale": result.test_scale,
            "scale": result.scale,
            "std": result.std,
            "error": result.error,
            "confidence": result.confidence,
            "failure_probability": result.failure_probability,
            "unstable_reply_probability": result.unstable_reply_probability,
            "distance": result.distance,
            "no_reply_probability": result.no_reply_probability,
            "reply_probability": result.reply_probability,
            "target_reply_probability": result.target_reply_probability,
            "required_distance": result.required_distance,
            "required_records": result.required_records,
            "solved_for": result.solved_for,
            "source": core.SOURCE,
        },
        tables=[_table(result)],
        epsilon=result.total_epsilon,
        basis="PTR's total epsilon 2 eps at its delta (test eps + release eps, Dwork and Roth 2014, Sec. 7.2)",
    )
    raise Exit(emit(report, json_mode=json_output, max_epsilon=max_eps))


def check_two_of_three(eps: float | None, scale: float | None, error: float | None, confidence: float | None) -> None:
    """Privacy (--eps, or the noise --scale), --error and --confidence: two of them give the
    third; privacy or noise alone gives the rest of the mechanism."""
    if eps is not None and scale is not None:
        raise InputError("--eps and --scale cannot both be given: the scale is the noise the epsilon sets (drop one)")
    privacy = "--eps" if eps is not None else "--scale" if scale is not None else None
    if privacy is not None and error is not None and confidence is not None:
        raise InputError(f"{privacy}, --error and --confidence cannot all be given: drop the one to compute "
                         f"(drop {privacy} to get epsilon, --error to get the error, --confidence to get the confidence)")
    if privacy is None:
        if error is not None and confidence is not None:
            return
        if error is not None:
            raise InputError("give two of --eps (or --scale), --error and --confidence, got only --error: "
                             "add --confidence (to get epsilon) or --eps (to get the confidence)")
        if confidence is not None:
            raise InputError("give two of --eps (or --scale), --error and --confidence, got only --confidence: "
                             "add --error (to get epsilon) or --eps (to get the error)")
        raise InputError("give --eps (or --scale), or --error with --confidence to get epsilon, "
                         "e.g. --eps 1 --confidence 0.95 to get the error")


def _table(result) -> Table:
    note = notes(result.solved_for, ("epsilon", "error", "confidence"))
    rows = [
        ("epsilon (each step)", format_number(result.epsilon), f"{note['epsilon']}: spent by the test and the release"),
        ("total epsilon", format_number(result.total_epsilon), "the whole is (2 eps, delta)-DP"),
        ("delta", format_number(result.delta), "given: covers unstable data"),
        ("bound b", format_number(result.bound), "proposed local-sensitivity bound"),
        ("threshold T", format_number(result.threshold), "ln(1/delta)/eps: reply if d+Lap(1/eps) > T"),
        ("test scale", format_number(result.test_scale), "1 / eps (distance: sensitivity 1)"),
        ("release scale", format_number(result.scale), "b / eps"),
        ("release noise std", format_number(result.std), "sqrt(2) b / eps"),
    ]
    if result.error is not None:
        rows += [
            ("error", format_number(result.error), f"{note['error']}: |noise| <= error"),
            ("confidence", format_number(result.confidence), f"{note['confidence']} (exact, Laplace tail)"),
            ("1 - confidence", format_number(result.failure_probability), "e^(-error eps / b)"),
        ]
    rows.append(("P(reply) at d = 0", format_number(result.unstable_reply_probability), "delta / 2 (unstable data)"))
    if result.distance is not None:
        rows += [
            ("distance d", format_number(result.distance), "given: true distance to instability"),
            ("P(no reply) at d", format_number(result.no_reply_probability), "P(d + Lap(1/eps) <= T)"),
        ]
    if result.required_distance is not None:
        rows += [
            ("reply probability", format_number(result.target_reply_probability), "given"),
            ("distance needed", format_number(result.required_distance), f"T + Lap quantile; {result.required_records} records"),
        ]
    return Table(columns=("quantity", "value", "note"), rows=rows,
                 title="Propose-test-release (Dwork and Roth 2014, Sec. 7.2; Dwork and Lei 2009)")
