"""`dpcalc mechanism svt`: the sparse vector technique (AboveThreshold, Sparse with c answers)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from dpcalc.cli.declare import App, Group, Option
from dpcalc.cli.mechanism.given import answer, beta_document, beta_rows, notes, option_error, shown, two_of_three
from dpcalc.cli.options import InputError, Json, MaxEpsilon, as_typed, conflict, number
from dpcalc.cli.output import Answer, Report, Table, format_number
from dpcalc.core.validation import OPEN_UNIT, POSITIVE, POSITIVE_INTEGER, ParameterError

if TYPE_CHECKING:
    from dpcalc.core.mechanisms.accuracy import AccuracyPoint
    from dpcalc.core.mechanisms.svt import SVTAccuracy

app = App()

HELP = """The sparse vector technique: epsilon, error bound alpha and failure probability beta - give two, get the third.

Sparse answers which of k queries of sensitivity Delta are above a threshold T, halting after c
positive answers (--answers 1: AboveThreshold): a noisy threshold T + Lap(2 c Delta / eps),
redrawn after each positive answer, each query compared after adding Lap(4 c Delta / eps). It
is eps-DP (Dwork and Roth 2014, Thm 3.23, 3.25). When at most c queries are >= T - alpha, every
answer is right to within alpha (a positive answer means >= T - alpha, a negative one <= T +
alpha) except with probability at most beta, for alpha = 8 c Delta (ln k + ln(2 c / beta)) / eps
(Thm 3.24, 3.26). --scale gives the privacy as the threshold's noise scale instead of --eps;
either alone gives alpha at beta = 0.5, 0.1, 0.05 and 0.01. Only these proved variants are
offered: many published SVT variants are not private (Lyu, Su, Li 2017).

\b
Examples:
  dpcalc mechanism svt --queries 1000 --eps 1 --beta 0.05
  dpcalc mechanism svt --queries 1000 --answers 10 --alpha 500 --beta 0.05
  dpcalc mechanism svt --queries 100 --eps 0.5 --alpha 200 --json
  dpcalc mechanism svt --queries 100 --answers 5 --scale 20 --beta 0.1
"""


Queries = Annotated[
    int,
    Option("--queries", metavar="INT", help="Number of queries k asked, an integer >= 1.",
           click_type=number(POSITIVE_INTEGER)),
]
Answers = Annotated[
    int,
    Option("--answers", metavar="INT", help="Positive answers c before halting, 1 <= c <= k (1: AboveThreshold).",
           show_default=True, click_type=number(POSITIVE_INTEGER)),
]
Epsilon = Annotated[
    float | None, Option("--eps", metavar="FLOAT", help="Epsilon of the whole run, > 0.", click_type=number(POSITIVE))
]
Scale = Annotated[
    float | None,
    Option("--scale", metavar="FLOAT",
           help="Laplace scale of the threshold's noise, > 0 (instead of --eps; eps = 2 c Delta / scale).",
           click_type=number(POSITIVE)),
]
Alpha = Annotated[
    float | None, Option("--alpha", metavar="FLOAT", help="Error bound of every answer, > 0.", click_type=number(POSITIVE))
]
Beta = Annotated[
    float | None,
    Option("--beta", metavar="FLOAT", help="Probability that some answer is off by more than alpha, in (0, 1).",
           click_type=number(OPEN_UNIT)),
]
Sensitivity = Annotated[
    float,
    Option("--sensitivity", metavar="FLOAT", help="Sensitivity Delta of each query, > 0.  [default: 1]",
           show_default=False, click_type=number(POSITIVE)),
]


@dataclass(frozen=True, repr=False, eq=False)
class SVTRequest:
    """The options of `mechanism svt`: two of privacy (epsilon or the threshold's scale), alpha and beta."""

    queries: Queries
    answers: Answers = 1
    eps: Epsilon = None
    scale: Scale = None
    alpha: Alpha = None
    beta: Beta = None
    sensitivity: Sensitivity = 1.0
    max_eps: MaxEpsilon = None
    json_output: Json = False

    @property
    def privacy_option(self) -> str:
        return "--scale" if self.scale is not None else "--eps"

    @property
    def epsilon(self) -> float | None:
        """Epsilon as given, or from the threshold's scale: eps = 2 c Delta / scale (DR Thm 3.25)."""
        return self.eps if self.scale is None else 2.0 * self.answers * self.sensitivity / self.scale

    def inputs(self) -> dict[str, object]:
        return {"queries": self.queries, "answers": self.answers, "eps": self.eps, "scale": self.scale,
                "alpha": self.alpha, "beta": self.beta, "sensitivity": self.sensitivity, "max_eps": self.max_eps}


@app.command("svt", help=HELP)
def svt(request: Annotated[SVTRequest, Group()]) -> Answer:
    from dpcalc.core.mechanisms import svt as core

    _check(request)
    try:
        result = core.svt_accuracy(queries=request.queries, answers=request.answers, epsilon=request.epsilon,
                                   alpha=request.alpha, beta=request.beta, sensitivity=request.sensitivity)
    except ParameterError as problem:
        raise option_error(problem, {"sensitivity": "--sensitivity", "epsilon": request.privacy_option,
                                     "alpha": "--alpha", "beta": "--beta", "queries": "--queries",
                                     "answers": "--answers"}) from None
    source = core.PRIVACY_SOURCE[1 if result.answers == 1 else 2]
    return answer(_report(request, result, source), request.json_output, request.max_eps)


def _check(request: SVTRequest) -> None:
    if request.answers > request.queries:
        raise InputError(f"--answers must be at most --queries {request.queries}, got {request.answers}",
                         options=("--answers", "--queries"), allowed=f"at most --queries {request.queries}",
                         got=as_typed(request.answers))
    if request.eps is not None and request.scale is not None:
        raise conflict("--eps", "--scale", "the threshold's scale is 2 c Delta / eps: give one")
    privacy_given = (request.eps if request.scale is None else request.scale) is not None
    two_of_three(((request.privacy_option, "epsilon", privacy_given), ("--alpha", "alpha", request.alpha is not None),
                  ("--beta", "beta", request.beta is not None)),
                 "--eps 1 --beta 0.05 to get alpha", alone="alpha at beta 0.5 to 0.01")


def _report(request: SVTRequest, result: SVTAccuracy, privacy_source: str) -> Report:
    return Report(
        command="mechanism svt",
        inputs=request.inputs(),
        result={
            "algorithm": result.algorithm,
            "epsilon": result.epsilon,
            "alpha": result.alpha,
            "beta": result.beta,
            "queries": result.queries,
            "answers": result.answers,
            "sensitivity": result.sensitivity,
            "threshold_scale": result.threshold_scale,
            "query_scale": result.query_scale,
            "accuracy": beta_document(result.accuracy, "alpha"),
            "solved_for": result.solved_for,
            "source": result.source,
        },
        tables=[_table(result)] + ([] if result.alpha is not None else [_accuracy_table(result.accuracy)]),
        warnings=list(result.warnings),
        epsilon=result.epsilon,
        basis=f"the pure epsilon of {result.algorithm} ({privacy_source})",
    )


def _table(result: SVTAccuracy) -> Table:
    note = notes(result.solved_for, ("epsilon", "alpha", "beta"))
    theorem = "Thm 3.24" if result.answers == 1 else "Thm 3.26"
    return Table(
        columns=("quantity", "value", "note"),
        rows=[
            ("epsilon", shown(result.solved_for, "epsilon", result.epsilon), note["epsilon"]),
            *([] if result.alpha is None or result.beta is None else [
                ("alpha", shown(result.solved_for, "alpha", result.alpha), f"{note['alpha']}: error bound of every answer"),
                ("beta", shown(result.solved_for, "beta", result.beta), f"{note['beta']}: some answer off by more"),
            ]),
            ("queries k", format_number(result.queries), "asked"),
            ("answers c", format_number(result.answers), "positive answers before halting"),
            ("threshold noise", format_number(result.threshold_scale), "Laplace scale 2 c Delta / eps"),
            ("query noise", format_number(result.query_scale), "Laplace scale 4 c Delta / eps"),
            ("sensitivity", format_number(result.sensitivity), "of each query"),
        ],
        title=f"{result.algorithm}: alpha = 8 c Delta (ln k + ln(2c/beta)) / eps (Dwork-Roth {theorem})",
    )


def _accuracy_table(points: tuple[AccuracyPoint, ...]) -> Table:
    return Table(columns=("beta", "alpha"), rows=beta_rows(points),
                 title="Accuracy at beta")
