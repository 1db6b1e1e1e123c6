"""`dpcalc advanced-composition`: k (epsilon, delta)-DP mechanisms composed, under four theorems."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any

from dpcalc.cli.declare import App, Option
from dpcalc.cli.errors import InputError, conflict
from dpcalc.cli.options import Json, MaxEpsilon, Numbers, Parsed, number, parse_list, written
from dpcalc.cli.output import Answer, Report, Table, format_bound, format_lower, format_number, format_upper
from dpcalc.core.composition import COMPOSITIONS, PER_MECHANISM_DELTA
from dpcalc.core.record import Value
from dpcalc.core.validation import NON_NEGATIVE, OPEN_UNIT, ParameterError

if TYPE_CHECKING:
    from dpcalc.core.composition import CompositionResult, InverseResult

app = App()

HELP = """Total epsilon of k (epsilon, delta)-DP mechanisms: basic, advanced, simplified, optimal.

basic: (k eps, k delta). advanced: Dwork-Rothblum-Vadhan, at total delta k delta + delta'.
simplified: 2 eps sqrt(2k ln(1/delta')), valid only below 1. optimal: exact
(Kairouz-Oh-Viswanath Thm 3.3), the smallest epsilon at total delta k delta + delta'.
--eps and --delta may be comma lists, one value per mechanism (k is the list length).
--total-delta D states all four at the one total delta D instead (basic when k delta <= D,
advanced and simplified with delta' = D - k delta, optimal exactly); a theorem that cannot
reach D is reported as not applicable (epsilon inf).
With --target-eps: the largest k (given --eps) or the largest per-mechanism epsilon
(given --k) that stays within the target, under each theorem; with --delta > 0 it needs
--total-delta.

\b
Examples:
  dpcalc advanced-composition --eps 0.1 --k 100
  dpcalc advanced-composition --eps 0.01 --delta 1e-8 --k 1000000 --json
  dpcalc advanced-composition --eps 0.5,0.5,1,2 --delta 0,0,1e-6,1e-6
  dpcalc advanced-composition --eps 0.1 --delta 1e-6 --k 50 --total-delta 1e-4
  dpcalc advanced-composition --eps 0.1 --target-eps 5
  dpcalc advanced-composition --eps 0.1 --delta 1e-6 --target-eps 5 --total-delta 1e-4
  dpcalc advanced-composition --k 1000 --target-eps 1 --delta-prime 1e-6
"""

DEFAULT_DELTA_PRIME = 1e-5

_NOTES = {
    "basic": "Dwork-Roth Thm 3.16",
    "advanced": "Dwork-Rothblum-Vadhan",
    "simplified": "Dwork-Roth Cor. 3.21",
    "optimal": "exact, Kairouz-Oh-Viswanath",
}


Epsilons = Annotated[
    Numbers | None,
    Option("--eps", metavar="FLOAT[,FLOAT...]", help="Epsilon of each mechanism, >= 0, or a comma list (one per mechanism).",
           click_type=Parsed(partial(parse_list, interval=NON_NEGATIVE))),
]
Deltas = Annotated[
    Numbers | None,
    Option("--delta", metavar="FLOAT[,FLOAT...]", help="Delta of each mechanism, in [0, 1), or a comma list [default: 0].",
           click_type=Parsed(partial(parse_list, interval=PER_MECHANISM_DELTA))),
]
Count = Annotated[
    int | None,
    Option("--k", metavar="INT", help="Number of mechanisms, an integer in [1, 1e10] (the list length with lists).",
           click_type=number(COMPOSITIONS)),
]
DeltaPrime = Annotated[
    float | None,
    Option("--delta-prime", metavar="FLOAT", help=f"The slack delta' in (0, 1) of the advanced theorems [default: {DEFAULT_DELTA_PRIME:g}].",
           click_type=number(OPEN_UNIT)),
]
TotalDelta = Annotated[
    float | None,
    Option(
        "--total-delta",
        metavar="FLOAT",
        help="One total delta in (0, 1) at which every theorem is stated (advanced: delta' = total-delta - k delta); "
        "instead of --delta-prime, and needed with --target-eps when --delta > 0.",
        click_type=number(OPEN_UNIT),
    ),
]
TargetEpsilon = Annotated[
    float | None,
    Option("--target-eps", metavar="FLOAT", help="Inverse question: the total epsilon to stay within (with --eps: max k; with --k: max eps per mechanism).",
           click_type=number(NON_NEGATIVE)),
]


class Question(Value):
    """What is composed: each mechanism's epsilon (one value or a list; None with --k and
    --target-eps) and delta, their number k, and the delta the theorems are stated at, delta'
    (`slack`) or one total delta; with `target_eps`, the inverse question."""

    epsilons: Numbers | None
    deltas: Numbers
    k: int | None
    slack: float | None
    total_delta: float | None
    target_eps: float | None = None


@app.command("advanced-composition", help=HELP)
def advanced_composition(
    eps: Epsilons = None,
    delta: Deltas = None,
    k: Count = None,
    delta_prime: DeltaPrime = None,
    total_delta: TotalDelta = None,
    target_eps: TargetEpsilon = None,
    max_eps: MaxEpsilon = None,
    json_output: Json = False,
) -> Answer:
    if total_delta is not None and delta_prime is not None:
        raise conflict("--total-delta", "--delta-prime", "with --total-delta the advanced theorems' delta' is total-delta - k * delta")
    slack = None
    if total_delta is None:
        slack = DEFAULT_DELTA_PRIME if delta_prime is None else delta_prime
    question = Question(eps, delta if delta is not None else Numbers((0.0,)), k, slack, total_delta, target_eps)
    if target_eps is not None:
        if max_eps is not None:
            raise conflict("--max-eps", "--target-eps", "--target-eps already is the budget")
        return Answer(_inverse_report(_inverse(question), question), json_output=json_output)
    return Answer(_forward_report(_forward(question), max_eps, total_delta), json_output=json_output,
                  max_epsilon=max_eps)


def _forward(question: Question) -> CompositionResult:
    """The total epsilon of the mechanisms under each theorem (dpcalc.core.composition)."""
    from dpcalc.core import composition as core

    eps, deltas, k, slack, total_delta = (question.epsilons, question.deltas, question.k, question.slack,
                                          question.total_delta)
    if eps is None:
        raise InputError("--eps is required (the epsilon of each mechanism, >= 0, or a comma list)", option="--eps")
    if len(eps) > 1 or len(deltas) > 1:
        mechanisms = _mechanism_lists(eps, deltas, k)
        if slack is not None:  # no --total-delta: the total is the deltas plus delta'
            _check_total_delta(sum(mechanisms[1]), slack, len(mechanisms[0]), deltas, per_mechanism=False)
        with _total_delta_errors(total_delta):
            return core.compose_heterogeneous(*mechanisms, slack, total_delta)
    if k is None:
        raise InputError("--k is required with a single --eps (or give --eps as a comma list, one value per mechanism)",
                         options=("--k", "--eps"))
    if slack is not None:
        _check_total_delta(k * deltas[0], slack, k, deltas, per_mechanism=True)
    with _total_delta_errors(total_delta):
        return core.compose(eps[0], deltas[0], k, slack, total_delta)


def _mechanism_lists(epsilons: Numbers, deltas: Numbers, count: int | None) -> tuple[list[float], list[float]]:
    """Per-mechanism (epsilons, deltas): a single value is repeated to the length of the other list."""
    if len(epsilons) > 1 and len(deltas) > 1 and len(epsilons) != len(deltas):
        raise InputError(
            f"--eps lists {len(epsilons)} mechanisms and --delta lists {len(deltas)}: give one value per "
            "mechanism in each, or a single value for all", options=("--eps", "--delta")
        )
    length = max(len(epsilons), len(deltas))
    if count is not None and count != length:
        raise InputError(f"--k is {count} but the lists give {length} mechanisms: drop --k (k is the list length)",
                         option="--k", got=written(count))
    return list(epsilons) * (length if len(epsilons) == 1 else 1), list(deltas) * (length if len(deltas) == 1 else 1)


def _check_total_delta(sum_deltas: float, slack: float, count: int, deltas: Numbers, per_mechanism: bool) -> None:
    if sum_deltas + slack < 1.0:
        return
    if per_mechanism:
        allowed = f"below (1 - delta-prime) / k = {(1.0 - slack) / count:.6g}"
        raise InputError(
            f"--delta must be {allowed} so that the "
            f"total delta k * delta + delta-prime stays below 1, got {written(deltas[0])}",
            option="--delta", allowed=allowed, got=written(deltas[0]),
        )
    raise InputError(
        f"--delta must sum to below 1 - delta-prime = {1.0 - slack:.6g} so that the total delta "
        f"stays below 1, got a sum of {sum_deltas:.6g}",
        option="--delta", allowed=f"a sum below 1 - delta-prime = {1.0 - slack:.6g}",
    )


@contextmanager
def _total_delta_errors(total_delta: float | None) -> Iterator[None]:
    """The core's refusal of a total delta below the mechanisms' own, as an --total-delta error."""
    try:
        yield
    except ParameterError as error:
        if error.name != "total_delta" or total_delta is None:
            raise
        raise InputError(f"--total-delta must be {error.requirement}, got {written(total_delta)}", option="--total-delta",
                         allowed=error.requirement, got=written(total_delta)) from None


def _inverse(question: Question) -> InverseResult:
    """The inverse question (--target-eps): the largest k (given --eps) or the largest epsilon per
    mechanism (given --k) under each theorem (dpcalc.core.composition.inverse)."""
    from dpcalc.core import composition as core

    epsilons, deltas, count, slack, fixed_total = (question.epsilons, question.deltas, question.k, question.slack,
                                                   question.total_delta)
    target = question.target_eps
    assert target is not None, "the inverse question has its target"

    if (epsilons is None) == (count is None):
        raise InputError(
            "--target-eps needs exactly one of --eps (to get the largest k) and --k "
            "(to get the largest epsilon per mechanism)", options=("--target-eps", "--eps", "--k")
        )
    if len(deltas) > 1 or (epsilons is not None and len(epsilons) > 1):
        raise InputError("--target-eps takes a single --eps and --delta, not comma lists",
                         options=("--target-eps", "--eps", "--delta"))
    if epsilons is not None and epsilons[0] == 0.0:
        raise InputError(
            f"--eps must be in (0, inf) with --target-eps (with --eps 0 every k stays within any target), "
            f"got {written(epsilons[0])}", options=("--eps", "--target-eps"), allowed="in (0, inf)",
            got=written(epsilons[0]),
        )
    if deltas[0] > 0.0 and fixed_total is None:
        if epsilons is not None:
            reason = (
                "each theorem's largest k would bring its own total delta k * delta (+ delta'), so no "
                "default total delta compares them"
            )
        else:
            reason = (
                "basic composition's total delta k * delta and the others' k * delta + delta' differ, so "
                "the theorems need one total delta to be compared at"
            )
        raise InputError(
            f"--total-delta is required with --target-eps when --delta > 0: {reason}; "
            "add --total-delta D, the one total delta in (0, 1) to state every theorem at",
            options=("--total-delta", "--target-eps", "--delta"),
        )
    if epsilons is not None:
        if fixed_total is not None:
            with _total_delta_errors(fixed_total):
                return core.max_compositions(epsilons[0], deltas[0], target, total_delta=fixed_total)
        return core.max_compositions(epsilons[0], deltas[0], target, slack)
    assert count is not None, "exactly one of --eps and --k (checked above)"
    if fixed_total is not None:
        with _total_delta_errors(fixed_total):
            return core.max_epsilon_per_mechanism(count, deltas[0], target, total_delta=fixed_total)
    return core.max_epsilon_per_mechanism(count, deltas[0], target, slack)


def _note(name: str, applicable: bool = True, valid: bool = True) -> str:
    if not applicable:
        return f"{_NOTES[name]}: NOT APPLICABLE at this delta"
    return _NOTES[name] + ("" if valid else ": NOT VALID (needs < 1)")


def _forward_report(result: CompositionResult, max_epsilon: float | None, fixed_total: float | None) -> Report:
    heterogeneous = len(result.epsilons) > 1 or len(result.deltas) > 1
    optimal = result.optimal
    entries: dict[str, dict[str, Any]] = {
        "basic": {"epsilon": result.basic.epsilon, "delta": result.basic.delta},
        "advanced": {"epsilon": result.advanced.epsilon, "delta": result.advanced.delta},
        "simplified": {"epsilon": result.simplified.epsilon, "delta": result.simplified.delta, "valid": result.simplified_valid},
        "optimal": {
            "epsilon": optimal.epsilon,
            "delta": optimal.delta,
            "epsilon_lower": optimal.epsilon_lower,
            "tolerance": optimal.tolerance,
            "method": optimal.method,
        },
    }
    inputs = {
        "eps": list(result.epsilons) if heterogeneous else result.epsilons[0],
        "delta": list(result.deltas) if heterogeneous else result.deltas[0],
        "k": result.k,
        "delta_prime": result.delta_prime,
        "target_eps": None,
        "max_eps": max_epsilon,
        "total_delta": fixed_total,
    }
    notes = {name: _note(name, name not in result.not_applicable) for name in entries}
    if heterogeneous and "advanced" not in result.not_applicable:
        notes["advanced"] = "Dwork-Rothblum-Vadhan, heterogeneous"
    if heterogeneous and optimal.method == "lattice":
        notes["optimal"] = f"upper bound; the exact optimum is >= {format_lower(optimal.epsilon_lower)}"
    if "simplified" not in result.not_applicable:
        notes["simplified"] = _note("simplified", valid=result.simplified_valid)
    rows = [
        (name, format_upper(entry["epsilon"]), format_number(entry["delta"]), notes[name])
        for name, entry in entries.items()
    ]
    # Every theorem that holds, holds at this one total delta (basic's smaller one included):
    # "best" compares them there.
    rows.append(("best", format_upper(entries[result.best]["epsilon"]), format_number(result.total_delta),
                 f"{result.best}: smallest epsilon at this delta"))
    at = (f"total delta = {format_number(fixed_total)}" if fixed_total is not None
          else f"delta' = {format_number(result.delta_prime)}")
    if heterogeneous:
        title = f"Composition of {result.k} mechanisms with their own (epsilon, delta), {at}"
    else:
        title = (
            f"Composition of k = {result.k} mechanisms, each ({format_number(result.epsilons[0])}, "
            f"{format_number(result.deltas[0])})-DP, {at}"
        )
    return Report(
        command="advanced-composition",
        inputs=inputs,
        result={**entries, "best": result.best, "total_delta": result.total_delta},
        tables=[Table(columns=("theorem", "epsilon", "delta", "note"), rows=rows, title=title)],
        warnings=list(result.warnings),
        epsilon=entries[result.best]["epsilon"],
        basis=f"{result.best} composition (the smallest sound epsilon of the four theorems)",
    )


def _inverse_report(result: InverseResult, question: Question) -> Report:
    epsilons, deltas, count, slack, fixed_total = (question.epsilons, question.deltas, question.k, question.slack,
                                                   question.total_delta)
    key = result.question
    entries: dict[str, dict[str, Any]] = {}
    rows = []
    for name in ("basic", "advanced", "simplified", "optimal"):
        entry = getattr(result, name)
        entries[name] = {key: entry.value, "epsilon": entry.epsilon, "delta": entry.delta}
        if name == "simplified":
            entries[name]["valid"] = entry.valid
        note = _note(name, entry.applicable, entry.valid)
        # a largest per-mechanism epsilon is printed rounded down (a larger one may exceed the target)
        value = format_bound(entry.value, False) if key != "max_k" else format_number(entry.value)
        rows.append((name, value, format_upper(entry.epsilon), format_number(entry.delta), note))
    largest = "largest k" if key == "max_k" else "largest eps"
    best_value = entries[result.best][key]
    rows.append(("best", format_number(best_value) if key == "max_k" else format_bound(best_value, False), "",
                 format_number(result.total_delta),
                 f"{result.best}: {largest} at this delta"))
    at = (f"total delta = {format_number(fixed_total)}" if fixed_total is not None
          else f"delta' = {format_number(slack)}")
    if key == "max_k":
        title = (
            f"Largest k within total epsilon {format_number(result.target_epsilon)}: each mechanism "
            f"({format_number(result.epsilon)}, {format_number(result.delta)})-DP, {at}"
        )
        columns = ("theorem", "max k", "total epsilon", "total delta", "note")
    else:
        title = (
            f"Largest epsilon per mechanism within total epsilon {format_number(result.target_epsilon)}: "
            f"k = {result.k}, delta = {format_number(result.delta)}, {at}"
        )
        columns = ("theorem", "max eps each", "total epsilon", "total delta", "note")
    inputs = {
        "eps": None if epsilons is None else epsilons[0],
        "delta": deltas[0],
        "k": count,
        "delta_prime": slack,
        "target_eps": result.target_epsilon,
        "max_eps": None,
        "total_delta": fixed_total,
    }
    return Report(
        command="advanced-composition",
        inputs=inputs,
        result={"target_epsilon": result.target_epsilon, **entries, "best": result.best,
                "total_delta": result.total_delta},
        tables=[Table(columns=columns, rows=rows, title=title)],
        warnings=list(result.warnings),
    )
