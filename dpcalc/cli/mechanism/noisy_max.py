"""`dpcalc mechanism noisy-max`: report noisy max with Laplace, Gumbel or exponential noise."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, cast

import click

from dpcalc.cli.declare import App, Group, Option
from dpcalc.cli.mechanism.given import answer, beta_document, beta_rows, notes, shown, two_of_three
from dpcalc.cli.options import InputError, Json, MaxEpsilon, as_typed, conflict, number
from dpcalc.cli.output import Answer, Report, Table, format_number
from dpcalc.core.validation import NON_NEGATIVE, OPEN_UNIT, POSITIVE, Interval, ParameterError

if TYPE_CHECKING:
    from dpcalc.core.mechanisms.noisy_max import NoisyMaxAccuracy

app = App()

CANDIDATES = Interval(2.0, float("inf"), low_closed=True, integer=True)

HELP = """Report noisy max: epsilon (or the noise scale), gap and failure probability - give two, get the third.

Adds noise of scale b to each of m scores of sensitivity Delta and reports the index of the
largest. It is eps-DP at b = 2 Delta / eps, or b = Delta / eps with --monotone (scores every
record moves the same way, such as counts): --noise laplace (Dwork and Roth 2014, Claim 3.9),
gumbel (the exponential mechanism, Thm 3.10) or exponential (permute-and-flip, McKenna and
Sheldon 2020; Ding et al. 2021). When the top score exceeds every other by at least --gap, the
top index is reported except with probability at most --beta: exact at the worst case for
gumbel and exponential noise, a union bound for laplace. --eps or --scale alone gives the gap
at beta = 0.5, 0.1, 0.05 and 0.01.

\b
Examples:
  dpcalc mechanism noisy-max --noise gumbel --candidates 10 --eps 1 --beta 0.05
  dpcalc mechanism noisy-max --noise laplace --candidates 100 --gap 20 --beta 0.01 --monotone
  dpcalc mechanism noisy-max --noise exponential --candidates 10 --scale 2 --gap 10 --json
"""

OPTION = {"epsilon": "--eps", "scale": "--scale", "gap": "--gap", "beta": "--beta"}


NoiseName = Annotated[
    str,
    Option("--noise", metavar="[laplace|gumbel|exponential]",
           help="The noise added to each score: laplace, gumbel (exponential mechanism) or "
                "exponential (permute-and-flip).",
           click_type=click.Choice(["laplace", "gumbel", "exponential"])),
]
Candidates = Annotated[
    int,
    Option("--candidates", metavar="INT", help="Number of scores m compared, an integer >= 2.",
           click_type=number(CANDIDATES)),
]
Epsilon = Annotated[
    float | None,
    Option("--eps", metavar="FLOAT", help="Epsilon of the mechanism, > 0 (or give --scale).", click_type=number(POSITIVE)),
]
Scale = Annotated[
    float | None,
    Option("--scale", metavar="FLOAT", help="Noise scale b, > 0 (instead of --eps; eps = c Delta / b).",
           click_type=number(POSITIVE)),
]
Gap = Annotated[
    float | None,
    Option("--gap", metavar="FLOAT", help="Margin of the top score over every other, >= 0.", click_type=number(NON_NEGATIVE)),
]
Beta = Annotated[
    float | None,
    Option("--beta", metavar="FLOAT", help="Probability of not reporting the top score, in (0, 1).",
           click_type=number(OPEN_UNIT)),
]
Sensitivity = Annotated[
    float,
    Option("--sensitivity", metavar="FLOAT", help="Sensitivity Delta of each score, > 0.  [default: 1]",
           show_default=False, click_type=number(POSITIVE)),
]
Monotone = Annotated[
    bool, Option("--monotone", help="Monotone scores (such as counts): scale Delta / eps instead of 2 Delta / eps.")
]


@dataclass(frozen=True, repr=False, eq=False)
class NoisyMaxRequest:
    """The options of `mechanism noisy-max`: two of privacy (epsilon or scale), gap and beta."""

    noise: NoiseName
    candidates: Candidates
    eps: Epsilon = None
    scale: Scale = None
    gap: Gap = None
    beta: Beta = None
    sensitivity: Sensitivity = 1.0
    monotone: Monotone = False
    max_eps: MaxEpsilon = None
    json_output: Json = False

    def inputs(self) -> dict[str, object]:
        return {"noise": self.noise, "candidates": self.candidates, "eps": self.eps, "scale": self.scale,
                "gap": self.gap, "beta": self.beta, "sensitivity": self.sensitivity, "monotone": self.monotone,
                "max_eps": self.max_eps}


@app.command("noisy-max", help=HELP)
def noisy_max(request: Annotated[NoisyMaxRequest, Group()]) -> Answer:
    from dpcalc.core.mechanisms import noisy_max as core

    eps, scale = request.eps, request.scale
    if eps is not None and scale is not None:
        raise conflict("--eps", "--scale", "the scale is c Delta / eps: give one")
    privacy_option = "--scale" if scale is not None else "--eps"
    two_of_three(((privacy_option, "epsilon", eps is not None or scale is not None),
                  ("--gap", "gap", request.gap is not None), ("--beta", "beta", request.beta is not None)),
                 "--eps 1 --beta 0.05 to get the gap", alone="the gap at beta 0.5 to 0.01")
    try:
        result = core.noisy_max_accuracy(noise=cast("core.Noise", request.noise), candidates=request.candidates,
                                         epsilon=eps, scale=scale, gap=request.gap, beta=request.beta,
                                         sensitivity=request.sensitivity, monotone=request.monotone)
    except ParameterError as error:
        if error.name not in OPTION:
            raise
        raise InputError(f"{OPTION[error.name]} must be {error.requirement}, got {error.received:g}",
                         option=OPTION[error.name], allowed=error.requirement, got=as_typed(error.received)) from None
    return answer(_report(request, result, core.PRIVACY_SOURCES[result.noise]), request.json_output, request.max_eps)


def _report(request: NoisyMaxRequest, result: NoisyMaxAccuracy, privacy_source: str) -> Report:
    return Report(
        command="mechanism noisy-max",
        inputs=request.inputs(),
        result={
            "noise": result.noise,
            "epsilon": result.epsilon,
            "scale": result.scale,
            "gap": result.gap,
            "beta": result.beta,
            "exact": result.exact,
            "candidates": result.candidates,
            "sensitivity": result.sensitivity,
            "monotone": result.monotone,
            "accuracy": beta_document(result.accuracy, "gap"),
            "solved_for": result.solved_for,
            "source": result.source,
        },
        tables=[_table(result, request.scale is not None)]
        + ([] if result.gap is not None else [_accuracy_table(result)]),
        warnings=list(result.warnings),
        epsilon=result.epsilon,
        basis=f"report noisy max's pure epsilon ({privacy_source})",
    )


def _table(result: NoisyMaxAccuracy, scale_given: bool) -> Table:
    note = notes(result.solved_for, ("epsilon", "gap", "beta"))
    if scale_given:
        note["epsilon"] = "c Delta / b"
    scale_note = "given" if scale_given else "c Delta / eps"
    kind = "exact, worst case" if result.exact else "union bound"
    names = {"laplace": "Laplace", "gumbel": "Gumbel (exponential mechanism)", "exponential": "exponential (permute-and-flip)"}
    return Table(
        columns=("quantity", "value", "note"),
        rows=[
            ("epsilon", shown(result.solved_for, "epsilon", result.epsilon), note["epsilon"]),
            ("noise scale b", format_number(result.scale), f"{scale_note}, c = {1 if result.monotone else 2}"),
            *([] if result.gap is None or result.beta is None else [
                ("gap", shown(result.solved_for, "gap", result.gap), f"{note['gap']}: top score minus every other"),
                ("beta", shown(result.solved_for, "beta", result.beta), f"{note['beta']}: top not reported ({kind})"),
            ]),
            ("candidates m", format_number(result.candidates), "scores compared"),
            ("sensitivity", format_number(result.sensitivity), "of each score"),
        ],
        title=f"Report noisy max, {names[result.noise]} noise",
    )


def _accuracy_table(result: NoisyMaxAccuracy) -> Table:
    kind = "exact, worst case" if result.exact else "union bound"
    return Table(columns=("beta", "gap"), rows=beta_rows(result.accuracy),
                 title=f"Accuracy at beta ({kind})")
