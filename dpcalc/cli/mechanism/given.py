"""What the mechanism commands share about their options: the two-of-three rule (exactly two of
privacy, noise or accuracy given, the third computed; one message per way of breaking it,
modelled on `dpcalc laplace-eps`), a core ParameterError restated with the option's name, and how
their tables show the given and the computed quantity."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from dpcalc.cli.options import InputError, as_typed
from dpcalc.cli.output import Answer, format_number, format_upper
from dpcalc.core.text import exact_complement
from dpcalc.core.validation import ParameterError

if TYPE_CHECKING:
    from dpcalc.cli.output import Report
    from dpcalc.core.mechanisms.accuracy import AccuracyPoint


def answer(report: Report, json_output: bool, max_eps: float | None) -> Answer:
    """What a mechanism command returns: its report, a table or JSON with --json, with --max-eps
    gating its epsilon."""
    return Answer(report, json_output=json_output, max_epsilon=max_eps)


def complement(probability: float | None) -> float | None:
    """1 - probability, exact from the decimal text the option was written with (options.exact):
    a confidence near 1 keeps its failure probability's digits."""
    return None if probability is None else exact_complement(probability)


def two_of_three(slots: Sequence[tuple[str, str | None, bool]], example: str, alone: str | None = None) -> None:
    """Check that exactly two of three (option, quantity, given) slots are given, or, with `alone`
    (what the first gives by itself, "alpha at beta 0.5 to 0.01"), the first alone.

    With the quantities named, the messages say what dropping or adding each option computes
    ("add --beta (to get alpha)"); with None, they name the options only. `example` completes
    "e.g. ..." in the message for none given.
    """
    options = [option for option, _, _ in slots]
    listed = f"{options[0]}, {options[1]} and {options[2]}"
    named = _named(options)
    given = [index for index, (_, _, there) in enumerate(slots) if there]
    if len(given) == 2 or (alone is not None and given == [0]):
        return
    if alone is not None and not given:
        raise InputError(f"give {options[0]} (alone: {alone}), or two of {listed} (the third is computed), "
                         f"e.g. {example}", options=named)

    def to_get(index: int) -> str:
        quantity = slots[index][1]
        return f" (to get {quantity})" if quantity is not None else ""

    if len(given) == 3:
        quantities = all(quantity is not None for _, quantity, _ in slots)
        drops = ", ".join(f"{option} to get {quantity}" for option, quantity, _ in slots)
        raise InputError(f"{listed} cannot all be given: drop the one to compute" + (f" (drop {drops})" if quantities else ""),
                         options=named)
    if given:
        only = given[0]
        first, second = (index for index in range(3) if index != only)
        raise InputError(f"give two of {listed}, got only {options[only]}: add {options[first]}{to_get(second)} "
                         f"or {options[second]}{to_get(first)}", options=named)
    raise InputError(f"give two of {listed} (the third is computed), e.g. {example}", options=named)


def _named(labels: Sequence[str]) -> tuple[str, ...]:
    """The options of the slots' labels, in order: "--eps or --flip-probability" is two."""
    return tuple(dict.fromkeys(option for label in labels for option in label.split(" or ")))


def check_two_of_three(eps: float | None, scale: float | None, error: float | None, confidence: float | None) -> None:
    """Privacy (--eps, or the noise --scale), --error and --confidence: two of them give the
    third; privacy or noise alone gives the rest of the mechanism."""
    if eps is not None and scale is not None:
        raise InputError("--eps and --scale cannot both be given: the scale is the noise the epsilon sets (drop one)",
                         options=("--eps", "--scale"))
    privacy = "--eps" if eps is not None else "--scale" if scale is not None else None
    if privacy is not None and error is not None and confidence is not None:
        raise InputError(f"{privacy}, --error and --confidence cannot all be given: drop the one to compute "
                         f"(drop {privacy} to get epsilon, --error to get the error, --confidence to get the confidence)",
                         options=(privacy, "--error", "--confidence"))
    if privacy is None:
        if error is not None and confidence is not None:
            return
        if error is not None:
            raise InputError("give two of --eps (or --scale), --error and --confidence, got only --error: "
                             "add --confidence (to get epsilon) or --eps (to get the confidence)", options=_ACCURACY)
        if confidence is not None:
            raise InputError("give two of --eps (or --scale), --error and --confidence, got only --confidence: "
                             "add --error (to get epsilon) or --eps (to get the error)", options=_ACCURACY)
        raise InputError("give --eps (or --scale), or --error with --confidence to get epsilon, "
                         "e.g. --eps 1 --confidence 0.95 to get the error", options=_ACCURACY)


_ACCURACY = ("--eps", "--scale", "--error", "--confidence")  # as check_two_of_three's messages name them


def privacy_alone_or_two(privacy: str | None, error: bool, confidence: bool, *, options: Sequence[str],
                         example: str) -> None:
    """Privacy alone (the option given, `privacy`: it fixes the noise, whose accuracy is shown at the
    standard confidences), or two of privacy, --error and --confidence (the third computed).
    `options` are the privacy options (("--eps", "--scale"), named "--eps or --scale"); `example`
    completes "e.g. ..."."""
    privacy_options = tuple(options)
    listed = " or ".join(filter(None, (", ".join(privacy_options[:-1]), privacy_options[-1])))
    if privacy is not None and error and confidence:
        raise InputError(f"{listed}, --error and --confidence cannot all be given: drop the one to compute",
                         options=(*privacy_options, "--error", "--confidence"))
    if privacy is not None or (error and confidence):
        return
    if error:
        raise InputError(f"--error needs --confidence (to get epsilon) or the privacy, {listed} (to get the confidence)",
                         options=("--error", "--confidence", *privacy_options))
    if confidence:
        raise InputError(f"--confidence needs --error (to get epsilon) or the privacy, {listed} (to get the error)",
                         options=("--confidence", "--error", *privacy_options))
    raise InputError(f"give {listed} (the noise, and its error at confidences 0.5 to 0.99), or --error with "
                     f"--confidence (to get epsilon), e.g. {example}",
                     options=(*privacy_options, "--error", "--confidence"))


def accuracy_rows(points: Sequence[AccuracyPoint]) -> list[tuple[str, str]]:
    """The rows of the accuracy table: each standard confidence and the error bound met with it
    (rounded up: a bound)."""
    return [(format_number(point.confidence), format_upper(point.error)) for point in points]


def beta_rows(points: Sequence[AccuracyPoint]) -> list[tuple[str, str]]:
    """The rows of a (beta, bound) accuracy table: each standard failure probability beta and the
    bound (alpha, or the gap) that holds except with probability beta (rounded up)."""
    return [(format_number(point.failure_probability), format_upper(point.error)) for point in points]


def beta_document(points: Sequence[AccuracyPoint], name: str) -> list[dict[str, float]]:
    """The JSON `accuracy` list of a (beta, bound) mechanism: {"beta", `name`} per standard beta."""
    return [{"beta": point.failure_probability, name: point.error} for point in points]


def accuracy_document(points: Sequence[AccuracyPoint]) -> list[dict[str, float]]:
    """The JSON `accuracy` list: {"confidence", "failure_probability", "error"} per standard confidence."""
    return [{"confidence": point.confidence, "failure_probability": point.failure_probability, "error": point.error}
            for point in points]


def option_error(error: ParameterError, options: dict[str, str]) -> InputError:
    """A core ParameterError restated with the option's name (`options`: core name -> option)."""
    spelled = options.get(error.name, error.name)  # "--sensitivities / --noise-stds" names two
    return InputError(f"{spelled} must be {error.requirement}, got {error.received}",
                      options=tuple(name for name in spelled.split(" / ") if name.startswith("--")),
                      allowed=error.requirement, got=as_typed(error.received))


def notes(solved_for: str, names: Sequence[str]) -> dict[str, str]:
    """The first word of each quantity's note in a table: "computed" for the one solved for,
    "given" for the others."""
    return {name: ("computed" if solved_for == name else "given") for name in names}


def shown(solved_for: str, name: str, value: float) -> str:
    """A quantity as a table prints it: the computed one rounded up (a bound), a given one as is."""
    return format_upper(value) if solved_for == name else format_number(value)
