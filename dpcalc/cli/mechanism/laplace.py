"""`dpcalc mechanism laplace`: the Laplace mechanism on counts, histograms and probability vectors."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Annotated

from dpcalc.cli.declare import App, Group, Option
from dpcalc.cli.laplace_eps import parse_probability
from dpcalc.cli.mechanism.given import (
    accuracy_document,
    accuracy_rows,
    answer,
    complement,
    notes,
    option_error,
    privacy_alone_or_two,
)
from dpcalc.cli.options import InputError, Json, MaxEpsilon, Parsed, conflict, number
from dpcalc.cli.output import Answer, Report, Table, format_lower, format_number, format_upper
from dpcalc.core.record import Record
from dpcalc.core.validation import POSITIVE, POSITIVE_INTEGER, ParameterError

if TYPE_CHECKING:
    from dpcalc.core.mechanisms.laplace import LaplaceMechanism

app = App()

HELP = """The Laplace mechanism: privacy, noise and accuracy - give two, get the third.

Noise Lap(b), b = sensitivity / epsilon, on each of --bins coordinates (Dwork, Roth 2014,
Thm 3.6). The error bound holds for all bins at once: P(every |noise| <= error) =
(1 - e^(-error/b))^bins, exact for independent noise (no union bound). The L1 sensitivity comes
from --domain: counts (a counting query or histogram: 1 under add-remove, 2 under replace-one),
simplex (probability vectors, e.g. a client's softmax output in local DP: 2), or real
(--sensitivity, default 1; --sensitivity alone means --domain real). Privacy alone (--eps or
--scale) gives the noise and its error bound at confidences 0.5, 0.9, 0.95 and 0.99.
`dpcalc laplace-eps` answers the same questions: its --tolerance, --probability and --dims are
accepted here for --error, --confidence and --bins.

\b
Examples:
  dpcalc mechanism laplace --eps 1 --confidence 0.95 --bins 10
  dpcalc mechanism laplace --eps 0.5 --sensitivity 2
  dpcalc mechanism laplace --error 5 --confidence 0.99 --bins 100 --neighbours replace-one
  dpcalc mechanism laplace --scale 2 --error 6 --domain simplex --bins 10 --json
"""


class DomainChoice(str, Enum):
    counts = "counts"
    simplex = "simplex"
    real = "real"


class RelationChoice(str, Enum):
    add_remove = "add-remove"
    replace_one = "replace-one"


Epsilon = Annotated[
    float | None,
    Option("--eps", metavar="FLOAT", help="Epsilon of the mechanism (pure DP), > 0.", click_type=number(POSITIVE)),
]
Scale = Annotated[
    float | None,
    Option("--scale", metavar="FLOAT", help="Instead of --eps: the noise scale b, > 0 (epsilon = sensitivity / b).",
           click_type=number(POSITIVE)),
]
# --tolerance, --probability and --dims: the names `dpcalc laplace-eps` gives the same quantities
Error = Annotated[
    float | None,
    Option("--error", "--tolerance", metavar="FLOAT",
           help="Error bound: every bin within +-error of the truth, > 0 (alias --tolerance).",
           click_type=number(POSITIVE)),
]
Confidence = Annotated[
    float | None,
    Option("--confidence", "--probability", metavar="FLOAT",
           help="Probability that every bin is within the error bound, in (0, 1) (alias --probability).",
           click_type=Parsed(parse_probability)),
]
Bins = Annotated[
    int,
    Option("--bins", "--dims", metavar="INT",
           help="Number of coordinates (histogram bins, vector length), >= 1 (alias --dims).",
           show_default=True, click_type=number(POSITIVE_INTEGER)),
]
Domain = Annotated[
    DomainChoice | None,
    Option("--domain", case_sensitive=False,
           help="What is released: counts (counting query or histogram), simplex (probability "
                "vectors, sensitivity 2) or real (--sensitivity) [default: counts; real with --sensitivity]."),
]
Neighbours = Annotated[
    RelationChoice | None,
    Option("--neighbours", case_sensitive=False,
           help="For --domain counts: add-remove (sensitivity 1; default) or replace-one (2)."),
]
Sensitivity = Annotated[
    float | None,
    Option("--sensitivity", metavar="FLOAT", help="With --domain real: the L1 sensitivity, > 0 [default: 1].",
           click_type=number(POSITIVE)),
]


class LaplaceRequest(Record):
    """The options of `mechanism laplace`, checked: two of privacy (epsilon or scale), error and
    confidence, and the sensitivity's domain."""

    eps: Epsilon = None
    scale: Scale = None
    error: Error = None
    confidence: Confidence = None
    bins: Bins = 1
    domain: Domain = None
    neighbours: Neighbours = None
    sensitivity: Sensitivity = None
    max_eps: MaxEpsilon = None
    json_output: Json = False

    @property
    def chosen_domain(self) -> str:
        """--domain as given; without it counts, or real when --sensitivity is given."""
        if self.domain is not None:
            return self.domain.value
        return "counts" if self.sensitivity is None else "real"

    def inputs(self) -> dict[str, object]:
        """The JSON `inputs`: the options as given (the domain as chosen)."""
        return {"eps": self.eps, "scale": self.scale, "error": self.error, "confidence": self.confidence,
                "bins": self.bins, "domain": self.chosen_domain,
                "neighbours": self.neighbours.value if self.neighbours is not None else None,
                "sensitivity": self.sensitivity, "max_eps": self.max_eps}


@app.command("laplace", help=HELP)
def laplace(request: Annotated[LaplaceRequest, Group()]) -> Answer:
    _check(request)
    from dpcalc.core.mechanisms import laplace as core

    try:
        result = core.laplace_mechanism(
            epsilon=request.eps, scale=request.scale, error=request.error, confidence=request.confidence,
            domain=request.chosen_domain, neighbours=_relation(request), bins=request.bins,  # type: ignore[arg-type]
            sensitivity=request.sensitivity, failure_probability_exact=complement(request.confidence),
        )
    except ParameterError as problem:
        raise option_error(problem, {"scale": "--scale", "epsilon": "--eps", "tolerance": "--error", "bins": "--bins"}) from None
    return answer(_report(request, result), request.json_output, request.max_eps)


def _relation(request: LaplaceRequest) -> str:
    return "add-remove" if request.neighbours is None else request.neighbours.value


def _check(request: LaplaceRequest) -> None:
    """Privacy alone, or two of privacy, error and confidence; --sensitivity only with --domain
    real, --neighbours only with counts."""
    if request.eps is not None and request.scale is not None:
        raise conflict("--eps", "--scale", "give one (scale = sensitivity / epsilon)")
    privacy = "--eps" if request.eps is not None else "--scale" if request.scale is not None else None
    privacy_alone_or_two(privacy, request.error is not None, request.confidence is not None,
                         options=("--eps", "--scale"), example="--eps 1 --confidence 0.95 to get the error bound")
    chosen = request.chosen_domain
    if request.sensitivity is not None and chosen != "real":
        raise InputError(f"--sensitivity is set by --domain {chosen} "
                         f"({'1 under add-remove, 2 under replace-one' if chosen == 'counts' else '2'}); "
                         "use --domain real to give it", options=("--sensitivity", "--domain"))
    if request.neighbours is not None and chosen != "counts":
        raise InputError(f"--neighbours applies to --domain counts only, got --domain {chosen}",
                         options=("--neighbours", "--domain"))


def _report(request: LaplaceRequest, result: LaplaceMechanism) -> Report:
    from dpcalc.core.mechanisms.laplace import SIMPLEX_NOTE

    return Report(
        command="mechanism laplace",
        inputs=request.inputs(),
        result={
            "epsilon": result.epsilon,
            "scale": result.scale,
            "std": result.std,
            "sensitivity": result.sensitivity,
            "domain": result.domain,
            "neighbours": result.neighbours,
            "bins": result.bins,
            "error": result.error,
            "confidence": result.confidence,
            "failure_probability": result.failure_probability,
            "per_bin_failure_probability": result.per_bin_failure_probability,
            "simultaneous": "exact product over independent bins",
            "accuracy": accuracy_document(result.accuracy),
            "solved_for": result.solved_for,
            "source": result.source,
        },
        tables=_tables(result, request.scale is not None),
        # the core names the domain; the command line names its option
        warnings=[f"--{warning}" if warning == SIMPLEX_NOTE else warning for warning in result.warnings],
        epsilon=result.epsilon,
        basis="the Laplace mechanism's pure epsilon at this scale (exact; Dwork and Roth 2014, Thm 3.6)",
    )


def _tables(result: LaplaceMechanism, scale_given: bool) -> list[Table]:
    """The mechanism's table; from privacy alone, then its error bound at the standard confidences."""
    note = notes(result.solved_for, ("epsilon", "error", "confidence"))
    scale_note = "sensitivity / epsilon"
    if scale_given:
        note["epsilon"], scale_note = "computed", "given"
    bins = "the bin" if result.bins == 1 else f"all {result.bins} bins"
    sensitivity = {"counts": f"L1, counts under {result.neighbours}", "simplex": "L1, probability vectors",
                   "real": "L1, given"}[result.domain]
    rows = [
        ("epsilon", format_upper(result.epsilon), f"{note['epsilon']}: pure DP (Thm 3.6)"),
        ("scale b", format_upper(result.scale), scale_note),
        ("noise std", format_number(result.std), "sqrt(2) b"),
        ("sensitivity", format_number(result.sensitivity), sensitivity),
    ]
    if result.error is not None:
        rows += [
            ("error", format_upper(result.error), f"{note['error']}: |noise| <= error in {bins}"),
            ("confidence", format_lower(result.confidence), f"{note['confidence']}: exact product (Fact 3.7)"),
            ("1 - confidence", format_number(result.failure_probability), "chance some bin misses"),
        ]
    tables = [Table(
        columns=("quantity", "value", "note"),
        rows=rows,
        title=f"Laplace mechanism (Dwork-Roth Thm 3.6, Fact 3.7): {result.bins} bin{'s' if result.bins > 1 else ''}, "
              f"domain {result.domain}",
    )]
    if result.error is None:
        tables.append(Table(columns=("confidence", f"error ({bins})"), rows=accuracy_rows(result.accuracy),
                            title="Accuracy: every |noise| <= error (exact, Fact 3.7)"))
    return tables
