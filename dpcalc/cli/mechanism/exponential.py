"""`dpcalc mechanism exponential`: the exponential mechanism's epsilon, error bound and failure probability."""

from __future__ import annotations

from typing import Annotated

from dpcalc.cli.declare import App, Exit, Option
from dpcalc.cli.mechanism.given import notes, shown, two_of_three
from dpcalc.cli.options import Json, MaxEpsilon, number
from dpcalc.cli.output import Report, Table, emit, format_number
from dpcalc.core.validation import OPEN_UNIT, POSITIVE, POSITIVE_INTEGER

app = App()

HELP = """The exponential mechanism: epsilon, error bound alpha and failure probability beta - give two, get the third.

Sampling an output r of R with probability proportional to exp(eps u(r) / (2 Delta)) is
eps-DP, and Pr[u(output) <= OPT - alpha] <= beta at alpha = (2 Delta / eps)(ln|R| + ln(1/beta))
(Dwork and Roth 2014, Thm 3.10, 3.11). With --monotone (a utility that every record moves the
same way) the mechanism samples proportionally to exp(eps u(r) / Delta), still eps-DP, and the
factor 2 drops; the output names the sampling rule assumed.

\b
Examples:
  dpcalc mechanism exponential --outcomes 1000 --eps 1 --beta 0.05
  dpcalc mechanism exponential --outcomes 1000 --alpha 20 --beta 0.01 --sensitivity 2
  dpcalc mechanism exponential --outcomes 1e6 --eps 0.5 --alpha 100 --monotone --json
"""


@app.command("exponential", help=HELP)
def exponential(
    outcomes: Annotated[
        int,
        Option("--outcomes", metavar="INT", help="Number of possible outputs |R|, an integer >= 1.",
                     click_type=number(POSITIVE_INTEGER)),
    ],
    eps: Annotated[
        float | None,
        Option("--eps", metavar="FLOAT", help="Epsilon of the mechanism, > 0.", click_type=number(POSITIVE)),
    ] = None,
    alpha: Annotated[
        float | None,
        Option("--alpha", metavar="FLOAT", help="Error bound: utility at least OPT - alpha, > 0.",
                     click_type=number(POSITIVE)),
    ] = None,
    beta: Annotated[
        float | None,
        Option("--beta", metavar="FLOAT", help="Failure probability: Pr[utility <= OPT - alpha], in (0, 1).",
                     click_type=number(OPEN_UNIT)),
    ] = None,
    sensitivity: Annotated[
        float,
        Option("--sensitivity", metavar="FLOAT", help="Sensitivity Delta of the utility, > 0.  [default: 1]",
                     show_default=False, click_type=number(POSITIVE)),
    ] = 1.0,
    monotone: Annotated[
        bool,
        Option("--monotone", help="Monotone utility, sampled proportionally to exp(eps u / Delta): "
                                        "the refined bound (Delta / eps instead of 2 Delta / eps)."),
    ] = False,
    max_eps: MaxEpsilon = None,
    json_output: Json = False,
) -> None:
    from dpcalc.core.mechanisms import exponential as core

    two_of_three((("--eps", "epsilon", eps is not None), ("--alpha", "alpha", alpha is not None),
                  ("--beta", "beta", beta is not None)),
                 "--eps 1 --beta 0.05 to get alpha")
    result = core.exponential_accuracy(epsilon=eps, alpha=alpha, beta=beta, sensitivity=sensitivity,
                                       outcomes=outcomes, monotone=monotone)
    inputs = {"outcomes": outcomes, "eps": eps, "alpha": alpha, "beta": beta, "sensitivity": sensitivity,
              "monotone": monotone, "max_eps": max_eps}
    report = Report(
        command="mechanism exponential",
        inputs=inputs,
        result={
            "epsilon": result.epsilon,
            "alpha": result.alpha,
            "beta": result.beta,
            "t": result.t,
            "sensitivity": result.sensitivity,
            "outcomes": result.outcomes,
            "monotone": result.monotone,
            "sampling": result.sampling,
            "solved_for": result.solved_for,
            "source": result.source,
        },
        tables=[_table(result)],
        warnings=list(result.warnings),
        epsilon=result.epsilon,
        basis=f"the exponential mechanism's pure epsilon ({core.PRIVACY_SOURCE})",
    )
    raise Exit(emit(report, json_mode=json_output, max_epsilon=max_eps))


def _table(result) -> Table:
    note = notes(result.solved_for, ("epsilon", "alpha", "beta"))
    factor = "Delta/eps" if result.monotone else "2 Delta/eps"
    theorem = "Thm 3.11, monotone" if result.monotone else "Thm 3.11"
    return Table(
        columns=("quantity", "value", "note"),
        rows=[
            ("epsilon", shown(result.solved_for, "epsilon", result.epsilon), note["epsilon"]),
            ("alpha", shown(result.solved_for, "alpha", result.alpha), f"{note['alpha']}: error bound"),
            ("beta", shown(result.solved_for, "beta", result.beta), f"{note['beta']}: Pr[u <= OPT - alpha]"),
            ("outcomes |R|", format_number(result.outcomes), "possible outputs"),
            ("sensitivity", format_number(result.sensitivity), "of the utility"),
            ("sampling", result.sampling, "assumed"),
        ],
        title=f"Exponential mechanism: alpha = ({factor})(ln|R| + ln(1/beta)) (Dwork-Roth {theorem})",
    )
