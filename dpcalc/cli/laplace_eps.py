"""`dpcalc laplace-eps`: the epsilon that keeps Laplace noise within a tolerance with a given probability."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from dpcalc.cli.declare import App, Option
from dpcalc.cli.errors import InputError
from dpcalc.cli.options import (
    Json,
    MaxEpsilon,
    Parsed,
    WrittenFloat,
    decimal_text,
    number,
    parse_real,
)
from dpcalc.cli.output import Answer, Report, Table, format_number
from dpcalc.core.text import decimal_ratio, exact_complement
from dpcalc.core.validation import OPEN_UNIT, POSITIVE, POSITIVE_INTEGER

if TYPE_CHECKING:
    from dpcalc.core.laplace import LaplaceAccuracy

app = App()

HELP = """The Laplace mechanism's epsilon, tolerance and probability: give two, get the third.

With noise Lap(b), b = sensitivity / epsilon, all --dims coordinates are within +-tolerance
with probability (1 - e^(-tolerance/b))^dims (one-sided: below +tolerance,
(1 - e^(-tolerance/b)/2)^dims). Solved exactly, no union bound, and accurate for
probabilities close to 1 (1 - probability is taken exactly from the decimal you type).

\b
Examples:
  dpcalc laplace-eps --tolerance 1e-5 --probability 0.9
  dpcalc laplace-eps --tolerance 0.01 --probability 0.999999999999 --dims 10 --json
  dpcalc laplace-eps --eps 1 --probability 0.95 --sensitivity 2
  dpcalc laplace-eps --eps 1 --tolerance 3 --one-sided
"""

def parse_probability(option: str, text: str) -> WrittenFloat:
    """--probability in (0, 1), with 1 - probability representable (the option's click type).

    float(1 - 0.999999999999) is 1.00009e-12, not 1e-12: the complement is taken from the
    decimal text as an exact fraction (`options.exact`), so probabilities close to 1 keep their
    meaning (even those that round to 1.0 in float64, such as 0.99999999999999999999).
    """
    cleaned = decimal_text(text)
    if cleaned is None or cleaned.lstrip("+-")[:1].isalpha():  # not a number, or inf or nan
        parse_real(option, text, OPEN_UNIT)  # raises the standard message for 'abc', '1_1', inf, nan
    assert cleaned is not None
    numerator, denominator = decimal_ratio(cleaned)
    if not 0 < numerator < denominator:
        raise InputError(f"{option} must be {OPEN_UNIT.requirement}, got {text}", option=option,
                         allowed=OPEN_UNIT.requirement, got=text)
    # int / int is correctly rounded, as float() of a Fraction is
    complement = (denominator - numerator) / denominator
    if complement < 2.2250738585072014e-308:
        raise InputError(f"{option} must be at most 1 - 2.2e-308 (1 - probability is computed), got {text}",
                         option=option, allowed="at most 1 - 2.2e-308", got=text)
    if complement == 1.0:  # at most 2^-54: 1 - probability rounds to 1, a certain miss
        raise InputError(f"{option} must be at least 5.6e-17 (1 - probability is computed and must stay below 1), "
                         f"got {text}", option=option, allowed="at least 5.6e-17", got=text)
    return WrittenFloat(numerator / denominator, text)



Tolerance = Annotated[
    float | None,
    Option("--tolerance", "--error", metavar="FLOAT", help="Largest acceptable noise per coordinate, > 0 (alias --error).",
           click_type=number(POSITIVE)),
]
Probability = Annotated[
    float | None,
    Option("--probability", "--confidence", metavar="FLOAT",
           help="Probability that all coordinates are within the tolerance, in (0, 1) (alias --confidence).",
           click_type=Parsed(parse_probability)),
]
Epsilon = Annotated[
    float | None,
    Option("--eps", metavar="FLOAT", help="Epsilon of the Laplace mechanism, > 0.", click_type=number(POSITIVE)),
]
L1Sensitivity = Annotated[
    float,
    # the default written into the help as click writes it ("1", where click would print 1.0)
    Option("--sensitivity", metavar="FLOAT", help="L1 sensitivity of the query, > 0.  [default: 1]",
           show_default=False, click_type=number(POSITIVE)),
]
Dimensions = Annotated[
    int,
    Option("--dims", "--bins", metavar="INT", help="Number of i.i.d. noisy coordinates that must all be within (alias --bins).",
           show_default=True,
           click_type=number(POSITIVE_INTEGER)),
]
OneSided = Annotated[
    bool,
    Option("--one-sided", help="Only bound the noise from above: P(Y <= tolerance)."),
]


@app.command("laplace-eps", help=HELP)
def laplace_eps(
    tolerance: Tolerance = None,
    probability: Probability = None,
    eps: Epsilon = None,
    sensitivity: L1Sensitivity = 1.0,
    dims: Dimensions = 1,
    one_sided: OneSided = False,
    max_eps: MaxEpsilon = None,
    json_output: Json = False,
) -> Answer:
    from dpcalc.core import laplace as core

    _check_two_of_three(tolerance, probability, eps)
    result = core.laplace_accuracy(
        tolerance=tolerance,
        probability=probability,
        epsilon=eps,
        sensitivity=sensitivity,
        dims=dims,
        one_sided=one_sided,
        failure_probability_exact=None if probability is None else exact_complement(probability),
    )
    inputs = {"tolerance": tolerance, "probability": probability, "eps": eps, "sensitivity": sensitivity,
              "dims": dims, "one_sided": one_sided, "max_eps": max_eps}
    return Answer(_report(result, inputs), json_output=json_output, max_epsilon=max_eps)


def _report(result: LaplaceAccuracy, inputs: dict[str, Any]) -> Report:
    """The report of the solved triple; --max-eps gates on the mechanism's epsilon (exact)."""
    return Report(
        command="laplace-eps",
        inputs=inputs,
        result={
            "epsilon": result.epsilon,
            "scale": result.scale,
            "tolerance": result.tolerance,
            "probability": result.probability,
            "dims": result.dims,
            "one_sided": result.one_sided,
            "std": result.std,
            "failure_probability": result.failure_probability,
            "sensitivity": result.sensitivity,
            "solved_for": result.solved_for,
        },
        tables=[_table(result)],
        warnings=list(result.warnings),
        epsilon=result.epsilon,
        basis="the Laplace mechanism's pure epsilon at this scale (exact)",
    )


_THREE = ("--tolerance", "--probability", "--eps")  # the options of the two-of-three errors, as they name them


def _check_two_of_three(tolerance: float | None, probability: float | None, eps: float | None) -> None:
    given = [name for name, value in (("--tolerance", tolerance), ("--probability", probability), ("--eps", eps))
             if value is not None]
    if len(given) == 3:
        raise InputError(
            "--tolerance, --probability and --eps cannot all be given: drop the one to compute "
            "(drop --eps to get epsilon, --tolerance to get the tolerance, --probability to get the probability)",
            options=_THREE,
        )
    if len(given) == 2:
        return
    hints = {
        "--tolerance": "add --probability (to get epsilon) or --eps (to get the probability)",
        "--probability": "add --tolerance (to get epsilon) or --eps (to get the tolerance)",
        "--eps": "add --tolerance (to get the probability) or --probability (to get the tolerance)",
    }
    if given:
        raise InputError(f"give two of --tolerance, --probability and --eps, got only {given[0]}: {hints[given[0]]}",
                         options=_THREE)
    raise InputError(
        "give two of --tolerance, --probability and --eps (the third is computed), "
        "e.g. --tolerance 1e-5 --probability 0.9 to get epsilon", options=_THREE,
    )


def _table(result: LaplaceAccuracy) -> Table:
    sides = "one-sided (noise <= t)" if result.one_sided else "two-sided (|noise| <= t)"
    coordinates = "the coordinate" if result.dims == 1 else f"all {result.dims} coordinates"
    within = "below +t" if result.one_sided else "within +-t"
    note = {name: ("computed" if result.solved_for == name else "given") for name in ("epsilon", "tolerance", "probability")}
    return Table(
        columns=("quantity", "value", "note"),
        rows=[
            ("epsilon", format_number(result.epsilon), note["epsilon"]),
            ("scale b", format_number(result.scale), "sensitivity / epsilon"),
            ("noise std", format_number(result.std), "sqrt(2) b"),
            ("tolerance t", format_number(result.tolerance), note["tolerance"]),
            ("probability", format_number(result.probability), f"{note['probability']}: {coordinates} {within}"),
            ("1 - probability", format_number(result.failure_probability), "chance some coordinate misses"),
            ("sensitivity", format_number(result.sensitivity), "L1"),
        ],
        title=f"Laplace mechanism accuracy (Dwork-Roth Thm 3.6, Fact 3.7): dims = {result.dims}, {sides}",
    )
