"""`dpcalc mechanism noisy-max`: report noisy max with Laplace, Gumbel or exponential noise."""

from __future__ import annotations

from typing import Annotated, cast

import click

from dpcalc.cli.declare import App, Exit, Option
from dpcalc.cli.mechanism.given import notes, shown, two_of_three
from dpcalc.cli.options import InputError, Json, MaxEpsilon, conflict, number
from dpcalc.cli.output import Report, Table, emit, format_number
from dpcalc.core.validation import NON_NEGATIVE, OPEN_UNIT, POSITIVE, Interval, ParameterError

app = App()

CANDIDATES = Interval(2.0, float("inf"), low_closed=True, integer=True)

HELP = """Report noisy max: epsilon (or the noise scale), gap and failure probability - give two, get the third.

Adds noise of scale b to each of m scores of sensitivity Delta and reports the index of the
largest. It is eps-DP at b = 2 Delta / eps, or b = Delta / eps with --monotone (scores every
record moves the same way, such as counts): --noise laplace (Dwork and Roth 2014, Claim 3.9),
gumbel (the exponential mechanism, Thm 3.10) or exponential (permute-and-flip, McKenna and
Sheldon 2020; Ding et al. 2021). When the top score exceeds every other by at least --gap, the
top index is reported except with probability at most --beta: exact at the worst case for
gumbel and exponential noise, a union bound for laplace.

\b
Examples:
  dpcalc mechanism noisy-max --noise gumbel --candidates 10 --eps 1 --beta 0.05
  dpcalc mechanism noisy-max --noise laplace --candidates 100 --gap 20 --beta 0.01 --monotone
  dpcalc mechanism noisy-max --noise exponential --candidates 10 --scale 2 --gap 10 --json
"""

OPTION = {"epsilon": "--eps", "scale": "--scale", "gap": "--gap", "beta": "--beta"}


@app.command("noisy-max", help=HELP)
def noisy_max(
    noise: Annotated[
        str,
        Option("--noise", metavar="[laplace|gumbel|exponential]",
                     help="The noise added to each score: laplace, gumbel (exponential mechanism) or "
                          "exponential (permute-and-flip).",
                     click_type=click.Choice(["laplace", "gumbel", "exponential"])),
    ],
    candidates: Annotated[
        int,
        Option("--candidates", metavar="INT", help="Number of scores m compared, an integer >= 2.",
                     click_type=number(CANDIDATES)),
    ],
    eps: Annotated[
        float | None,
        Option("--eps", metavar="FLOAT", help="Epsilon of the mechanism, > 0 (or give --scale).",
                     click_type=number(POSITIVE)),
    ] = None,
    scale: Annotated[
        float | None,
        Option("--scale", metavar="FLOAT", help="Noise scale b, > 0 (instead of --eps; eps = c Delta / b).",
                     click_type=number(POSITIVE)),
    ] = None,
    gap: Annotated[
        float | None,
        Option("--gap", metavar="FLOAT", help="Margin of the top score over every other, >= 0.",
                     click_type=number(NON_NEGATIVE)),
    ] = None,
    beta: Annotated[
        float | None,
        Option("--beta", metavar="FLOAT", help="Probability of not reporting the top score, in (0, 1).",
                     click_type=number(OPEN_UNIT)),
    ] = None,
    sensitivity: Annotated[
        float,
        Option("--sensitivity", metavar="FLOAT", help="Sensitivity Delta of each score, > 0.  [default: 1]",
                     show_default=False, click_type=number(POSITIVE)),
    ] = 1.0,
    monotone: Annotated[
        bool,
        Option("--monotone", help="Monotone scores (such as counts): scale Delta / eps instead of 2 Delta / eps."),
    ] = False,
    max_eps: MaxEpsilon = None,
    json_output: Json = False,
) -> None:
    from dpcalc.core.mechanisms import noisy_max as core

    if eps is not None and scale is not None:
        raise conflict("--eps", "--scale", "the scale is c Delta / eps: give one")
    privacy_option = "--scale" if scale is not None else "--eps"
    two_of_three(((privacy_option, "epsilon", eps is not None or scale is not None), ("--gap", "gap", gap is not None),
                  ("--beta", "beta", beta is not None)), "--eps 1 --beta 0.05 to get the gap")
    try:
        result = core.noisy_max_accuracy(noise=cast("core.Noise", noise), candidates=candidates, epsilon=eps, scale=scale, gap=gap,
                                         beta=beta, sensitivity=sensitivity, monotone=monotone)
    except ParameterError as error:
        if error.name not in OPTION:
            raise
        raise InputError(f"{OPTION[error.name]} must be {error.requirement}, got {error.received:g}") from None
    inputs = {"noise": noise, "candidates": candidates, "eps": eps, "scale": scale, "gap": gap, "beta": beta,
              "sensitivity": sensitivity, "monotone": monotone, "max_eps": max_eps}
    report = Report(
        command="mechanism noisy-max",
        inputs=inputs,
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
            "solved_for": result.solved_for,
            "source": result.source,
        },
        tables=[_table(result, scale is not None)],
        warnings=list(result.warnings),
        epsilon=result.epsilon,
        basis=f"report noisy max's pure epsilon ({core.PRIVACY_SOURCES[result.noise]})",
    )
    raise Exit(emit(report, json_mode=json_output, max_epsilon=max_eps))


def _table(result, scale_given: bool) -> Table:
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
            ("gap", shown(result.solved_for, "gap", result.gap), f"{note['gap']}: top score minus every other"),
            ("beta", shown(result.solved_for, "beta", result.beta), f"{note['beta']}: top not reported ({kind})"),
            ("candidates m", format_number(result.candidates), "scores compared"),
            ("sensitivity", format_number(result.sensitivity), "of each score"),
        ],
        title=f"Report noisy max, {names[result.noise]} noise",
    )
