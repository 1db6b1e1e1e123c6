"""`dpcalc mechanism laplace`: the Laplace mechanism on counts, histograms and probability vectors."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

from dpcalc.cli.declare import App, Exit, Option
from dpcalc.cli.laplace_eps import parse_probability
from dpcalc.cli.mechanism.given import notes, option_error, two_of_three
from dpcalc.cli.options import InputError, Json, MaxEpsilon, Parsed, conflict, exact, number
from dpcalc.cli.output import Report, Table, emit, format_lower, format_number, format_upper
from dpcalc.core.validation import POSITIVE, POSITIVE_INTEGER, ParameterError

app = App()

HELP = """The Laplace mechanism: privacy, noise and accuracy - give two, get the third.

Noise Lap(b), b = sensitivity / epsilon, on each of --bins coordinates (Dwork, Roth 2014,
Thm 3.6). The error bound holds for all bins at once: P(every |noise| <= error) =
(1 - e^(-error/b))^bins, exact for independent noise (no union bound). The L1 sensitivity comes
from --domain: counts (a counting query or histogram: 1 under add-remove, 2 under replace-one),
simplex (probability vectors, e.g. a client's softmax output in local DP: 2), or real
(--sensitivity, default 1).

\b
Examples:
  dpcalc mechanism laplace --eps 1 --confidence 0.95 --bins 10
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


@app.command("laplace", help=HELP)
def laplace(
    eps: Annotated[
        float | None,
        Option("--eps", metavar="FLOAT", help="Epsilon of the mechanism (pure DP), > 0.", click_type=number(POSITIVE)),
    ] = None,
    scale: Annotated[
        float | None,
        Option("--scale", metavar="FLOAT", help="Instead of --eps: the noise scale b, > 0 (epsilon = sensitivity / b).",
                     click_type=number(POSITIVE)),
    ] = None,
    error: Annotated[
        float | None,
        Option("--error", metavar="FLOAT", help="Error bound: every bin within +-error of the truth, > 0.",
                     click_type=number(POSITIVE)),
    ] = None,
    confidence: Annotated[
        float | None,
        Option("--confidence", metavar="FLOAT",
                     help="Probability that every bin is within the error bound, in (0, 1).",
                     click_type=Parsed(parse_probability)),
    ] = None,
    bins: Annotated[
        int,
        Option("--bins", metavar="INT", help="Number of coordinates (histogram bins, vector length), >= 1.",
                     show_default=True, click_type=number(POSITIVE_INTEGER)),
    ] = 1,
    domain: Annotated[
        DomainChoice,
        Option("--domain", case_sensitive=False,
                     help="What is released: counts (counting query or histogram), simplex (probability "
                          "vectors, sensitivity 2) or real (--sensitivity)."),
    ] = DomainChoice.counts,
    neighbours: Annotated[
        RelationChoice | None,
        Option("--neighbours", case_sensitive=False,
                     help="For --domain counts: add-remove (sensitivity 1; default) or replace-one (2)."),
    ] = None,
    sensitivity: Annotated[
        float | None,
        Option("--sensitivity", metavar="FLOAT", help="With --domain real: the L1 sensitivity, > 0 [default: 1].",
                     click_type=number(POSITIVE)),
    ] = None,
    max_eps: MaxEpsilon = None,
    json_output: Json = False,
) -> None:
    from dpcalc.core.mechanisms import laplace as core

    if eps is not None and scale is not None:
        raise conflict("--eps", "--scale", "give one (scale = sensitivity / epsilon)")
    two_of_three(
        (("--eps or --scale", None, eps is not None or scale is not None), ("--error", None, error is not None),
         ("--confidence", None, confidence is not None)),
        "--eps 1 --confidence 0.95 to get the error bound",
    )
    chosen = domain.value
    if sensitivity is not None and chosen != "real":
        raise InputError(f"--sensitivity is set by --domain {chosen} "
                         f"({'1 under add-remove, 2 under replace-one' if chosen == 'counts' else '2'}); "
                         "use --domain real to give it")
    if neighbours is not None and chosen != "counts":
        raise InputError(f"--neighbours applies to --domain counts only, got --domain {chosen}")
    relation = "add-remove" if neighbours is None else neighbours.value
    try:
        result = core.laplace_mechanism(
            epsilon=eps, scale=scale, error=error, confidence=confidence, domain=chosen,  # type: ignore[arg-type]
            neighbours=relation, bins=bins, sensitivity=sensitivity,  # type: ignore[arg-type]
            failure_probability_exact=None if confidence is None else float(1 - exact(confidence)),
        )
    except ParameterError as problem:
        raise option_error(problem, {"scale": "--scale", "epsilon": "--eps", "tolerance": "--error", "bins": "--bins"}) from None
    inputs = {"eps": eps, "scale": scale, "error": error, "confidence": confidence, "bins": bins, "domain": chosen,
              "neighbours": neighbours.value if neighbours is not None else None, "sensitivity": sensitivity,
              "max_eps": max_eps}
    report = Report(
        command="mechanism laplace",
        inputs=inputs,
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
            "solved_for": result.solved_for,
            "source": result.source,
        },
        tables=[_table(result, scale is not None)],
        # the core names the domain; the command line names its option
        warnings=[f"--{warning}" if warning == core.SIMPLEX_NOTE else warning for warning in result.warnings],
        epsilon=result.epsilon,
        basis="the Laplace mechanism's pure epsilon at this scale (exact; Dwork and Roth 2014, Thm 3.6)",
    )
    raise Exit(emit(report, json_mode=json_output, max_epsilon=max_eps))


def _table(result, scale_given: bool) -> Table:
    note = notes(result.solved_for, ("epsilon", "error", "confidence"))
    scale_note = "sensitivity / epsilon"
    if scale_given:
        note["epsilon"], scale_note = "computed", "given"
    bins = "the bin" if result.bins == 1 else f"all {result.bins} bins"
    sensitivity = {"counts": f"L1, counts under {result.neighbours}", "simplex": "L1, probability vectors",
                   "real": "L1, given"}[result.domain]
    return Table(
        columns=("quantity", "value", "note"),
        rows=[
            ("epsilon", format_upper(result.epsilon), f"{note['epsilon']}: pure DP (Thm 3.6)"),
            ("scale b", format_upper(result.scale), scale_note),
            ("noise std", format_number(result.std), "sqrt(2) b"),
            ("sensitivity", format_number(result.sensitivity), sensitivity),
            ("error", format_upper(result.error), f"{note['error']}: |noise| <= error in {bins}"),
            ("confidence", format_lower(result.confidence), f"{note['confidence']}: exact product (Fact 3.7)"),
            ("1 - confidence", format_number(result.failure_probability), "chance some bin misses"),
        ],
        title=f"Laplace mechanism (Dwork-Roth Thm 3.6, Fact 3.7): {result.bins} bin{'s' if result.bins > 1 else ''}, "
              f"domain {result.domain}",
    )
