"""`dpcalc mechanism exponential`: the exponential mechanism's epsilon, error bound and failure probability."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from dpcalc.cli.declare import App, Group, Option
from dpcalc.cli.mechanism.given import answer, beta_document, beta_rows, notes, shown, two_of_three
from dpcalc.cli.options import Json, MaxEpsilon, number
from dpcalc.cli.output import Answer, Report, Table, format_number
from dpcalc.core.validation import OPEN_UNIT, POSITIVE, POSITIVE_INTEGER

if TYPE_CHECKING:
    from dpcalc.core.mechanisms.accuracy import AccuracyPoint
    from dpcalc.core.mechanisms.exponential import ExponentialAccuracy

app = App()

HELP = """The exponential mechanism: epsilon, error bound alpha and failure probability beta - give two, get the third.

Sampling an output r of R with probability proportional to exp(eps u(r) / (2 Delta)) is
eps-DP, and Pr[u(output) <= OPT - alpha] <= beta at alpha = (2 Delta / eps)(ln|R| + ln(1/beta))
(Dwork and Roth 2014, Thm 3.10, 3.11). With --monotone (a utility that every record moves the
same way) the mechanism samples proportionally to exp(eps u(r) / Delta), still eps-DP, and the
factor 2 drops; the output names the sampling rule assumed. --eps alone gives alpha at beta =
0.5, 0.1, 0.05 and 0.01.

\b
Examples:
  dpcalc mechanism exponential --outcomes 1000 --eps 1 --beta 0.05
  dpcalc mechanism exponential --outcomes 1000 --eps 1
  dpcalc mechanism exponential --outcomes 1000 --alpha 20 --beta 0.01 --sensitivity 2
  dpcalc mechanism exponential --outcomes 1e6 --eps 0.5 --alpha 100 --monotone --json
"""


Outcomes = Annotated[
    int,
    Option("--outcomes", metavar="INT", help="Number of possible outputs |R|, an integer >= 1.",
           click_type=number(POSITIVE_INTEGER)),
]
Epsilon = Annotated[
    float | None, Option("--eps", metavar="FLOAT", help="Epsilon of the mechanism, > 0.", click_type=number(POSITIVE))
]
Alpha = Annotated[
    float | None,
    Option("--alpha", metavar="FLOAT", help="Error bound: utility at least OPT - alpha, > 0.", click_type=number(POSITIVE)),
]
Beta = Annotated[
    float | None,
    Option("--beta", metavar="FLOAT", help="Failure probability: Pr[utility <= OPT - alpha], in (0, 1).",
           click_type=number(OPEN_UNIT)),
]
Sensitivity = Annotated[
    float,
    Option("--sensitivity", metavar="FLOAT", help="Sensitivity Delta of the utility, > 0.  [default: 1]",
           show_default=False, click_type=number(POSITIVE)),
]
Monotone = Annotated[
    bool,
    Option("--monotone", help="Monotone utility, sampled proportionally to exp(eps u / Delta): "
                              "the refined bound (Delta / eps instead of 2 Delta / eps)."),
]


@dataclass(frozen=True, repr=False, eq=False)
class ExponentialRequest:
    """The options of `mechanism exponential`: two of epsilon, alpha and beta."""

    outcomes: Outcomes
    eps: Epsilon = None
    alpha: Alpha = None
    beta: Beta = None
    sensitivity: Sensitivity = 1.0
    monotone: Monotone = False
    max_eps: MaxEpsilon = None
    json_output: Json = False

    def inputs(self) -> dict[str, object]:
        return {"outcomes": self.outcomes, "eps": self.eps, "alpha": self.alpha, "beta": self.beta,
                "sensitivity": self.sensitivity, "monotone": self.monotone, "max_eps": self.max_eps}


@app.command("exponential", help=HELP)
def exponential(request: Annotated[ExponentialRequest, Group()]) -> Answer:
    from dpcalc.core.mechanisms import exponential as core

    two_of_three((("--eps", "epsilon", request.eps is not None), ("--alpha", "alpha", request.alpha is not None),
                  ("--beta", "beta", request.beta is not None)),
                 "--eps 1 --beta 0.05 to get alpha", alone="alpha at beta 0.5 to 0.01")
    result = core.exponential_accuracy(epsilon=request.eps, alpha=request.alpha, beta=request.beta,
                                       sensitivity=request.sensitivity, outcomes=request.outcomes,
                                       monotone=request.monotone)
    return answer(_report(request, result, core.PRIVACY_SOURCE), request.json_output, request.max_eps)


def _report(request: ExponentialRequest, result: ExponentialAccuracy, privacy_source: str) -> Report:
    return Report(
        command="mechanism exponential",
        inputs=request.inputs(),
        result={
            "epsilon": result.epsilon,
            "alpha": result.alpha,
            "beta": result.beta,
            "t": result.t,
            "sensitivity": result.sensitivity,
            "outcomes": result.outcomes,
            "monotone": result.monotone,
            "sampling": result.sampling,
            "accuracy": beta_document(result.accuracy, "alpha"),
            "solved_for": result.solved_for,
            "source": result.source,
        },
        tables=[_table(result)] + ([] if result.alpha is not None else [_accuracy_table(result.accuracy)]),
        warnings=list(result.warnings),
        epsilon=result.epsilon,
        basis=f"the exponential mechanism's pure epsilon ({privacy_source})",
    )


def _table(result: ExponentialAccuracy) -> Table:
    note = notes(result.solved_for, ("epsilon", "alpha", "beta"))
    factor = "Delta/eps" if result.monotone else "2 Delta/eps"
    theorem = "Thm 3.11, monotone" if result.monotone else "Thm 3.11"
    return Table(
        columns=("quantity", "value", "note"),
        rows=[
            ("epsilon", shown(result.solved_for, "epsilon", result.epsilon), note["epsilon"]),
            *([] if result.alpha is None or result.beta is None else [
                ("alpha", shown(result.solved_for, "alpha", result.alpha), f"{note['alpha']}: error bound"),
                ("beta", shown(result.solved_for, "beta", result.beta), f"{note['beta']}: Pr[u <= OPT - alpha]"),
            ]),
            ("outcomes |R|", format_number(result.outcomes), "possible outputs"),
            ("sensitivity", format_number(result.sensitivity), "of the utility"),
            ("sampling", result.sampling, "assumed"),
        ],
        title=f"Exponential mechanism: alpha = ({factor})(ln|R| + ln(1/beta)) (Dwork-Roth {theorem})",
    )


def _accuracy_table(points: tuple[AccuracyPoint, ...]) -> Table:
    return Table(columns=("beta", "alpha"), rows=beta_rows(points),
                 title="Accuracy at beta")
