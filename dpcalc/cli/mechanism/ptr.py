"""`dpcalc mechanism ptr`: propose-test-release - its threshold, "no reply", total privacy and accuracy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from dpcalc.cli.declare import App, Group, Option
from dpcalc.cli.laplace_eps import parse_probability
from dpcalc.cli.mechanism.given import answer, check_two_of_three, complement, notes, option_error
from dpcalc.cli.options import InputError, Json, MaxEpsilon, Parsed, number
from dpcalc.cli.output import Answer, Report, Table, format_number
from dpcalc.core.validation import NON_NEGATIVE, OPEN_UNIT, POSITIVE, ParameterError

if TYPE_CHECKING:
    from dpcalc.core.mechanisms.ptr import PTRResult

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


Epsilon = Annotated[
    float | None,
    Option("--eps", metavar="FLOAT", help="Epsilon each step spends (test and release), > 0; the total is 2 eps.",
           click_type=number(POSITIVE)),
]
Scale = Annotated[
    float | None,
    Option("--scale", metavar="FLOAT", help="The release's Laplace scale b / eps, > 0 (instead of --eps).",
           click_type=number(POSITIVE)),
]
Delta = Annotated[
    float | None,
    Option("--delta", metavar="FLOAT", help="Delta of the whole mechanism, in (0, 1); the test's threshold is ln(1/delta)/eps.",
           click_type=number(OPEN_UNIT)),
]
Bound = Annotated[
    float,
    Option("--bound", metavar="FLOAT", help="The proposed bound b on the local sensitivity, > 0.  [default: 1]",
           show_default=False, click_type=number(POSITIVE)),
]
Error = Annotated[
    float | None,
    Option("--error", metavar="FLOAT", help="Error bound of the release (|noise| <= error), > 0.",
           click_type=number(POSITIVE)),
]
Confidence = Annotated[
    float | None,
    Option("--confidence", metavar="FLOAT", help="Probability that the release is within --error, in (0, 1).",
           click_type=Parsed(parse_probability)),
]
Distance = Annotated[
    float | None,
    Option("--distance", metavar="FLOAT", help="True distance to instability (records), >= 0: the chance of \"no reply\" there.",
           click_type=number(NON_NEGATIVE)),
]
ReplyProbability = Annotated[
    float | None,
    Option("--reply-probability", metavar="FLOAT", help="Probability of a reply, in (0, 1): the distance it needs.",
           click_type=Parsed(parse_probability)),
]


@dataclass(frozen=True, repr=False, eq=False)
class PTRRequest:
    """The options of `mechanism ptr`: --delta, and privacy (epsilon or scale) or error with confidence."""

    eps: Epsilon = None
    scale: Scale = None
    delta: Delta = None
    bound: Bound = 1.0
    error: Error = None
    confidence: Confidence = None
    distance: Distance = None
    reply_probability: ReplyProbability = None
    max_eps: MaxEpsilon = None
    json_output: Json = False

    def inputs(self) -> dict[str, object]:
        return {"eps": self.eps, "scale": self.scale, "delta": self.delta, "bound": self.bound, "error": self.error,
                "confidence": self.confidence, "distance": self.distance,
                "reply_probability": self.reply_probability, "max_eps": self.max_eps}


@app.command("ptr", help=HELP)
def ptr(request: Annotated[PTRRequest, Group()]) -> Answer:
    from dpcalc.core.mechanisms import ptr as core

    if request.delta is None:
        raise InputError("--delta is required: PTR's test threshold ln(1/delta)/eps and its guarantee (2 eps, delta) depend on it",
                         option="--delta")
    check_two_of_three(request.eps, request.scale, request.error, request.confidence)
    try:
        result = core.ptr(
            epsilon=request.eps, scale=request.scale, delta=request.delta, bound=request.bound, error=request.error,
            failure_probability=complement(request.confidence), distance=request.distance,
            reply_probability=request.reply_probability, no_reply=complement(request.reply_probability),
        )
    except ParameterError as problem:
        raise option_error(problem, _OPTION) from None
    return answer(_report(request, result, core.SOURCE), request.json_output, request.max_eps)


def _report(request: PTRRequest, result: PTRResult, source: str) -> Report:
    return Report(
        command="mechanism ptr",
        inputs=request.inputs(),
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
            "source": source,
        },
        tables=[_table(result)],
        epsilon=result.total_epsilon,
        basis="PTR's total epsilon 2 eps at its delta (test eps + release eps, Dwork and Roth 2014, Sec. 7.2)",
    )


def _table(result: PTRResult) -> Table:
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
