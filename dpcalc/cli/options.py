"""Options shared by the subcommands, defined once, and the parsing of their values.

Numeric options are declared as strings and parsed here, so that every bad value, whether
"abc", "nan", "inf" or out of range, gets the same one-line message naming the option, its
allowed range and the value received.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated, overload

import typer

from dpcalc.core.validation import (
    MAX_COUNT,
    MAX_COUNT_DIGITS,
    NON_NEGATIVE,
    OPEN_UNIT,
    POSITIVE,
    POSITIVE_INTEGER,
    PROBABILITY,
    Interval,
    large_delta_warnings,  # noqa: F401 - re-exported: the commands import it from here
)

if TYPE_CHECKING:
    from fractions import Fraction


class InputError(Exception):
    """Invalid command-line input: printed as one line on stderr, exit code 2."""


@overload
def parse_real(option: str, text: str, interval: Interval) -> float: ...
@overload
def parse_real(option: str, text: str | None, interval: Interval) -> float | None: ...
def parse_real(option: str, text: str | None, interval: Interval) -> float | None:
    """Parse `text` as a finite real in `interval`; None stays None."""
    if text is None:
        return None
    try:
        value = float(text.strip())
    except ValueError:
        raise InputError(f"{option} must be a number {interval.requirement}, got {text!r}") from None
    if not interval.contains(value) or math.isnan(value):
        raise InputError(f"{option} must be {interval.requirement}, got {text}")
    return value


def _too_large(option: str, interval: Interval, text: str) -> InputError:
    shown = text if len(text) <= 40 else f"{text[:20]}...{text[-8:]} ({len(text)} characters)"
    return InputError(f"{option} must be {interval.requirement} and below 1e{MAX_COUNT_DIGITS}, got {shown}")


@overload
def parse_integer(option: str, text: str, interval: Interval = POSITIVE_INTEGER) -> int: ...
@overload
def parse_integer(option: str, text: str | None, interval: Interval = POSITIVE_INTEGER) -> int | None: ...
def parse_integer(option: str, text: str | None, interval: Interval = POSITIVE_INTEGER) -> int | None:
    """Parse `text` as an integer in `interval` ("10000", "1e4" and "1_000" are accepted)."""
    if text is None:
        return None
    cleaned = text.strip()
    try:
        value = int(cleaned)
    except ValueError:
        # scientific notation ("1e4", "2.5e20") is read exactly, not through a float
        from decimal import Decimal, InvalidOperation

        try:
            number = Decimal(cleaned)
        except InvalidOperation:
            raise InputError(f"{option} must be {interval.requirement}, got {text!r}") from None
        if not number.is_finite() or number != number.to_integral_value():
            raise InputError(f"{option} must be {interval.requirement}, got {text}") from None
        if number.adjusted() >= MAX_COUNT_DIGITS:  # before int(): 1e999999999 would not fit in memory
            raise _too_large(option, interval, text) from None
        value = int(number)
    if abs(value) >= MAX_COUNT:
        raise _too_large(option, interval, text)
    if not interval.contains(value):
        raise InputError(f"{option} must be {interval.requirement}, got {text}")
    return value


def conflict(first: str, second: str, hint: str = "") -> InputError:
    """The error for two options that cannot be given together."""
    suffix = f"; {hint}" if hint else ""
    return InputError(f"{first} and {second} cannot be given together{suffix}")


# The intervals the shared options are checked against.
RANGES = {
    "--p": PROBABILITY,
    "--sigma": POSITIVE,
    "--T": POSITIVE_INTEGER,
    "--n": POSITIVE_INTEGER,
    "--batch-size": POSITIVE_INTEGER,
    "--epochs": POSITIVE,
    "--delta": OPEN_UNIT,
    "--eps": NON_NEGATIVE,
    "--max-eps": NON_NEGATIVE,
    "--mu": POSITIVE,
}

DEFAULT_DELTA = 1e-5

SamplingProbability = Annotated[
    str | None,
    typer.Option("--p", metavar="FLOAT", help="Poisson sampling probability per step, in (0, 1]."),
]
NoiseMultiplier = Annotated[
    str | None,
    typer.Option("--sigma", metavar="FLOAT", help="Noise multiplier: noise std / L2 sensitivity, > 0."),
]
Steps = Annotated[
    str | None,
    typer.Option("--T", metavar="INT", help="Number of steps, an integer >= 1."),
]
DatasetSize = Annotated[
    str | None,
    typer.Option("--n", metavar="INT", help="Training form: dataset size (p = batch-size / n)."),
]
BatchSize = Annotated[
    str | None,
    typer.Option("--batch-size", metavar="INT", help="Training form: expected batch size."),
]
Epochs = Annotated[
    str | None,
    typer.Option("--epochs", metavar="FLOAT", help="Training form: epochs (T = ceil(epochs * n / batch-size))."),
]
Delta = Annotated[
    str | None,
    typer.Option("--delta", metavar="FLOAT", help=f"Target delta in (0, 1) giving epsilon [default: {DEFAULT_DELTA:g}]."),
]
Epsilon = Annotated[
    str | None,
    typer.Option("--eps", metavar="FLOAT", help="Give epsilon (>= 0) instead of --delta to get delta."),
]
MaxEpsilon = Annotated[
    str | None,
    typer.Option("--max-eps", metavar="FLOAT", help="Budget: exit 1 when epsilon exceeds this value."),
]
Json = Annotated[
    bool,
    typer.Option("--json", help="Print one strict JSON object instead of a table."),
]


def parse_delta_or_epsilon(delta: str | None, eps: str | None) -> tuple[float | None, float | None]:
    """(delta, epsilon) with exactly one set: --delta defaults to 1e-5 unless --eps is given."""
    if delta is not None and eps is not None:
        raise conflict("--delta", "--eps", "give --delta to get epsilon, or --eps to get delta")
    if eps is not None:
        return None, parse_real("--eps", eps, RANGES["--eps"])
    if delta is None:
        return DEFAULT_DELTA, None
    return parse_real("--delta", delta, RANGES["--delta"]), None


def parse_training_run(
    p: str | None,
    sigma: str | None,
    T: str | None,
    n: str | None,
    batch_size: str | None,
    epochs: str | None,
) -> tuple[float, float, int]:
    """(p, sigma, T) from either --p/--sigma/--T or the training form --n/--batch-size/--epochs.

    p comes from --p or from --batch-size / --n; T from --T or from ceil(epochs / p). Each
    quantity must come from exactly one source, so an inconsistent mix is refused.
    """
    check_training_form(p, T, n, batch_size, epochs)
    if sigma is None:
        raise InputError("--sigma is required (noise multiplier, > 0)")
    noise = parse_real("--sigma", sigma, RANGES["--sigma"])
    if p is not None and epochs is None:
        # T does not come from epochs / p: p needs no exact form (and `fractions` is not imported)
        return parse_real("--p", p, RANGES["--p"]), noise, parse_steps(T, None, None)
    probability, exact_probability = parse_sampling_probability(p, n, batch_size)
    steps = parse_steps(T, epochs, exact_probability)
    return probability, noise, steps


def check_training_form(
    p: str | None, T: str | None, n: str | None, batch_size: str | None, epochs: str | None
) -> None:
    """Refuse a mix of the two forms: p from --p or --batch-size / --n, T from --T or --epochs."""
    if p is not None and (n is not None or batch_size is not None):
        raise conflict("--p", "--n/--batch-size", "p is batch-size / n; give one form")
    if T is not None and epochs is not None:
        raise conflict("--T", "--epochs", "T is ceil(epochs * n / batch-size); give one form")
    if (n is None) != (batch_size is None):
        given, missing = ("--n", "--batch-size") if batch_size is None else ("--batch-size", "--n")
        raise InputError(f"{given} needs {missing} (p = batch-size / n)")


def parse_sampling_probability(p: str | None, n: str | None, batch_size: str | None) -> tuple[float, Fraction]:
    """p, and p as an exact fraction (of its decimal text, or batch-size / n), so that epochs / p is exact."""
    from fractions import Fraction

    if p is not None:
        probability = parse_real("--p", p, RANGES["--p"])
        return probability, Fraction(p.strip())
    if n is not None:
        assert batch_size is not None, "callers check that --n comes with --batch-size"
        size = parse_integer("--n", n)
        batch = parse_integer("--batch-size", batch_size)
        if batch > size:
            raise InputError(f"--batch-size must be in [1, n] = [1, {size}], got {batch_size}")
        return batch / size, Fraction(batch, size)
    raise InputError("give the sampling probability: --p, or --n with --batch-size")


def parse_steps(T: str | None, epochs: str | None, exact_probability: Fraction | None) -> int:
    """T from --T, or ceil(epochs / p) from --epochs (which needs `exact_probability`)."""
    if T is not None:
        return parse_integer("--T", T)
    if epochs is not None:
        from fractions import Fraction

        parse_real("--epochs", epochs, RANGES["--epochs"])
        assert exact_probability is not None, "with --epochs, callers pass p as an exact fraction"
        # Exact rational arithmetic: a float quotient such as 60 * 60000 / 256 is rounded up
        # (never down, which would under-count steps) only when it is not already whole.
        steps = max(1, math.ceil(Fraction(epochs.strip()) / exact_probability))
        if steps >= MAX_COUNT:
            raise InputError(
                f"--epochs {epochs.strip()} gives T = ceil(epochs / p) above 1e{MAX_COUNT_DIGITS} steps, "
                f"which is more than dpcalc accounts; lower --epochs or raise p"
            )
        return steps
    raise InputError("give the number of steps: --T, or --epochs")
