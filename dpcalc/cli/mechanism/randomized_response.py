"""`dpcalc mechanism randomized-response`: binary and k-ary randomized response."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from dpcalc.cli.declare import App, Group, Option
from dpcalc.cli.mechanism.given import answer, option_error, two_of_three
from dpcalc.cli.options import InputError, Json, MaxEpsilon, conflict, number, parse_real
from dpcalc.cli.output import Answer, Report, Table, format_number, format_upper
from dpcalc.core.validation import OPEN_UNIT, POSITIVE, PROBABILITY, Interval, ParameterError

if TYPE_CHECKING:
    from dpcalc.core.mechanisms.randomized_response import RandomizedResponse

app = App()

HELP = """Randomized response, binary (--k 2) or k-ary: privacy, noise and accuracy.

Each respondent reports the true value with probability e^eps / (e^eps + k - 1), each other
value with probability 1 / (e^eps + k - 1): eps-LDP (Warner 1965; Kairouz et al. 2016). The
flip probability (a value other than the true one is reported) is (k - 1) / (e^eps + k - 1).
--eps and --flip-probability convert either way. With --n respondents, the standard error of
the debiased frequency estimate (c/n - q) / (p - q) is exact (Wang et al. 2017, Sec. 3), at
--frequency or, by default, at the worst frequency. Give two of privacy (--eps or
--flip-probability), --n and --std-error; the third is computed.

\b
Examples:
  dpcalc mechanism randomized-response --eps 1
  dpcalc mechanism randomized-response --eps 1 --n 10000 --k 4
  dpcalc mechanism randomized-response --n 10000 --std-error 0.01 --json
  dpcalc mechanism randomized-response --flip-probability 0.25 --std-error 0.01
"""

_K = Interval(2.0, 1e15, low_closed=True, high_closed=True, integer=True)


Epsilon = Annotated[
    float | None,
    Option("--eps", metavar="FLOAT", help="Epsilon (local DP) of each report, > 0.", click_type=number(POSITIVE)),
]
FlipProbability = Annotated[
    float | None,
    Option("--flip-probability", metavar="FLOAT",
           help="Instead of --eps: the probability of reporting a value other than the true one, "
                "in (0, (k-1)/k).", click_type=number(OPEN_UNIT)),
]
Values = Annotated[
    int,
    Option("--k", metavar="INT", help="Number of possible values (2: binary), >= 2.", show_default=True,
           click_type=number(_K)),
]
Respondents = Annotated[
    int | None,
    Option("--n", "--respondents", metavar="INT", help="Number of respondents, >= 1.",
           click_type=number(Interval(1.0, 1e300, low_closed=True, integer=True))),
]
StdError = Annotated[
    float | None,
    Option("--std-error", metavar="FLOAT", help="Standard error of the debiased frequency estimate, > 0.",
           click_type=number(POSITIVE)),
]
Frequency = Annotated[
    float | None,
    Option("--frequency", metavar="FLOAT",
           help="True frequency of the value estimated, in [0, 1] [default: the worst case, 1].",
           click_type=number(PROBABILITY)),
]


@dataclass(frozen=True, repr=False, eq=False)
class RandomizedResponseRequest:
    """The options of `mechanism randomized-response`: privacy alone, or two of privacy (epsilon or
    the flip probability), respondents and standard error."""

    eps: Epsilon = None
    flip_probability: FlipProbability = None
    k: Values = 2
    respondents: Respondents = None
    std_error: StdError = None
    frequency: Frequency = None
    max_eps: MaxEpsilon = None
    json_output: Json = False

    def inputs(self) -> dict[str, object]:
        return {"eps": self.eps, "flip_probability": self.flip_probability, "k": self.k, "n": self.respondents,
                "std_error": self.std_error, "frequency": self.frequency, "max_eps": self.max_eps}


@app.command("randomized-response", help=HELP)
def randomized_response(request: Annotated[RandomizedResponseRequest, Group()]) -> Answer:
    from dpcalc.core.mechanisms import randomized_response as core

    _check(request, core.flip_interval(request.k) if request.flip_probability is not None else None)
    try:
        result = core.randomized_response(epsilon=request.eps, flip=request.flip_probability, k=request.k,
                                          respondents=request.respondents, std_error=request.std_error,
                                          frequency=request.frequency)
    except ParameterError as problem:
        raise option_error(problem, {"std_error": "--std-error", "flip": "--flip-probability", "respondents": "--n"}) from None
    return answer(_report(request, result), request.json_output, request.max_eps)


def _check(request: RandomizedResponseRequest, flip_range: Interval | None) -> None:
    """Privacy alone, or two of privacy, --n and --std-error; the flip probability in `flip_range`."""
    eps, flip, respondents, std_error = request.eps, request.flip_probability, request.respondents, request.std_error
    if eps is not None and flip is not None:
        raise conflict("--eps", "--flip-probability", "give one (they are the same privacy level)")
    privacy = eps is not None or flip is not None
    if not (privacy and respondents is None and std_error is None):
        two_of_three(
            (("--eps or --flip-probability", None, privacy), ("--n", None, respondents is not None),
             ("--std-error", None, std_error is not None)),
            "--eps 1 --n 10000 to get the standard error",
        )
    if flip is not None and flip_range is not None and not flip_range.contains(flip):
        parse_real("--flip-probability", str(flip), flip_range)  # the standard message
    if request.frequency is not None and respondents is None and std_error is None:
        raise InputError("--frequency goes with --n or --std-error (the standard error at that frequency)",
                         options=("--frequency", "--n", "--std-error"))


def _report(request: RandomizedResponseRequest, result: RandomizedResponse) -> Report:
    return Report(
        command="mechanism randomized-response",
        inputs=request.inputs(),
        result={
            "epsilon": result.epsilon,
            "k": result.k,
            "flip_probability": result.flip_probability,
            "keep_probability": result.keep_probability,
            "other_probability": result.other_probability,
            "n": result.respondents,
            "std_error": result.std_error,
            "frequency": result.frequency,
            "solved_for": result.solved_for,
            "source": result.source,
        },
        tables=[_table(result, request.flip_probability is not None)],
        warnings=list(result.warnings),
        epsilon=result.epsilon,
        basis="randomized response's pure epsilon (exact: the likelihood ratio e^eps is attained)",
    )


def _table(result: RandomizedResponse, flip_given: bool) -> Table:
    if flip_given:
        epsilon_note = "computed from the flip probability"
    elif result.solved_for == "epsilon":
        epsilon_note = "computed: the smallest"
    else:
        epsilon_note = "given"
    rows = [
        ("epsilon", format_upper(result.epsilon), f"{epsilon_note} (local DP)"),
        ("flip probability", format_number(result.flip_probability), "reports another value"),
        ("keep probability p", format_number(result.keep_probability), "e^eps / (e^eps + k - 1)"),
        ("other value q", format_number(result.other_probability), "1 / (e^eps + k - 1), each"),
    ]
    if result.respondents is not None:
        at = "worst frequency" if result.frequency is None else f"frequency {format_number(result.frequency)}"
        rows.append(("respondents n", format_number(result.respondents),
                     "computed: the fewest" if result.solved_for == "respondents" else "given"))
        rows.append(("std error", format_upper(result.std_error),
                     f"{'computed' if result.solved_for == 'std_error' else 'reached'}: debiased, {at}"))
    kind = "binary" if result.k == 2 else f"k-ary, k = {result.k}"
    return Table(columns=("quantity", "value", "note"), rows=rows,
                 title=f"Randomized response ({kind}; Warner 1965, Wang et al. 2017)")
