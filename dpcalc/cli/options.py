"""Options shared by the subcommands, defined once, and the parsing of their values.

Every numeric option is parsed once, by its click type (`Parsed`), as click reads the command
line: the command receives numbers (or, for a list or range, a `Swept`), never text. Every bad
value, whether "abc", "nan", "inf" or out of range, gets the same one-line message naming the
option, its allowed range and the value received (`InputError`, exit code 2).

Numbers are read in ASCII decimal notation only (dpcalc.core.text.decimal_text, the one gate every numeric
text passes, sweep ranges and --phase values included): Python's float() and int() would also
take digits of other scripts (Arabic-Indic "\u0661\u0661" is 11) and underscores ("1_1" is 11), which dpcalc refuses by
name rather than read silently.

A parsed number keeps the text it was written as (`WrittenFloat`, `WrittenInt`): messages about
a value that is valid alone but not beside another option quote it as typed, and `exact` takes
the decimal itself, so that quotients such as epochs / p are exact.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import click

from dpcalc.cli.declare import Option
from dpcalc.cli.errors import InputError, as_typed, conflict  # noqa: F401 - re-exported for the commands
from dpcalc.cli.syntax import expand, refuse_digit_groups
from dpcalc.core.record import Record
from dpcalc.core.record import Value as ComparedRecord  # `Value` is a type variable here
from dpcalc.core.text import (  # noqa: F401 - re-exported for the commands
    TextError,
    WrittenFloat,
    WrittenInt,
    decimal_text,
    exact,
    read_integer,
    read_real,
    written,
)
from dpcalc.core.text import not_a_number as text_error
from dpcalc.core.validation import (
    NON_NEGATIVE,
    OPEN_UNIT,
    POSITIVE,
    POSITIVE_INTEGER,
    PROBABILITY,
    Interval,
    ParameterError,
    RunError,
    large_delta_warnings,  # noqa: F401 - re-exported: the commands import it from here
)


class Swept(ComparedRecord):
    """The values of an option written as a list (1,2,4) or a range (1:60:1): a sweep."""

    option: str  # e.g. "--sigma"
    text: str  # as given
    values: tuple[Any, ...]  # WrittenFloat or WrittenInt, in the order given


Value = TypeVar("Value")


def one(value: Value | Swept) -> Value:
    """An input of one row of a request: a number (or None), never a `Swept` (a sweep's rows each
    hold one of its values: dpcalc.cli.request)."""
    assert not isinstance(value, Swept), "a row of a request holds one value per input"
    return value


class Numbers(tuple[float, ...]):
    """Several numbers given as one option, a comma list (--orders 2,4,8; not a sweep).

    Its own class, not list[float]: a list annotation declares an option given repeatedly (dpcalc.cli.declare).
    """


def parse_real(option: str, text: str, interval: Interval) -> WrittenFloat:
    """Parse `text` as a finite real in `interval` (`core.text.read_real`, its error an InputError)."""
    try:
        return read_real(option, text, interval)
    except TextError as error:
        raise InputError.of_text(error, option) from None


def parse_integer(option: str, text: str, interval: Interval = POSITIVE_INTEGER) -> WrittenInt:
    """Parse `text` as an integer in `interval` ("10000" and "1e4" are accepted, exactly;
    `core.text.read_integer`, its error an InputError)."""
    try:
        return read_integer(option, text, interval)
    except TextError as error:
        raise InputError.of_text(error, option) from None


def not_a_number(option: str, what: str, text: str, *, where: str = "") -> InputError:
    """The InputError for a text that is not an ASCII decimal number (`core.text.not_a_number`)."""
    return InputError.of_text(text_error(option, what, text, where=where), option)


def parse_number(option: str, text: str, interval: Interval) -> WrittenFloat | WrittenInt:
    """An integer when `interval` holds integers only, a real otherwise."""
    return parse_integer(option, text, interval) if interval.integer else parse_real(option, text, interval)


def is_sweep_text(text: str) -> bool:
    """True when an option's text is a list or a range rather than one value."""
    return "," in text or ":" in text


def parse_sweepable(option: str, text: str, interval: Interval) -> WrittenFloat | WrittenInt | Swept:
    """One number, or the numbers of a list or range (dpcalc.cli.syntax), each checked against `interval`."""
    if not is_sweep_text(text):
        return parse_number(option, text, interval)
    refuse_digit_groups(option, text, interval)
    items = expand(option, text, integer=interval.integer)
    return Swept(option, text, tuple(parse_number(option, item, interval) for item in items))


def parse_single(option: str, text: str, interval: Interval) -> WrittenFloat | WrittenInt:
    """One number in `interval`, a list or range refused by name (an option that is not swept)."""
    if is_sweep_text(text):
        refuse_digit_groups(option, text, interval, sweeps=False)
        raise InputError(f"{option} takes one value, not a list or range, got {text}", option=option,
                         allowed=f"one number {interval.requirement}", got=text)
    return parse_number(option, text, interval)


def parse_list(option: str, text: str, interval: Interval) -> Numbers:
    """A single number or a comma list of numbers, each in `interval` (the click type of --eps and --delta)."""
    items = text.split(",")
    if len(items) == 1:
        return Numbers((parse_real(option, text, interval),))
    values = []
    for position, item in enumerate(items, start=1):
        if not item.strip():
            raise InputError(f"{option} item {position} of {len(items)} is empty, got {text!r}", option=option, got=text)
        try:
            values.append(read_real(f"{option} item {position} of {len(items)}", item, interval))
        except TextError as error:
            raise InputError.of_text(error, option) from None
    return Numbers(values)


def order_items(option: str, text: str) -> list[str]:
    """The item texts of an --orders list, each range start:stop:step expanded as sweeps expand
    theirs (stop included when on the grid; dpcalc.cli.syntax.expand), at most MAX_ORDERS."""
    from dpcalc.core.limits import MAX_ORDERS

    if ":" not in text:
        items = [item.strip() for item in text.split(",")]
    else:
        items = expand(option, text, limit=MAX_ORDERS,
                       limit_text=f"{option} takes at most {MAX_ORDERS} orders (ranges expanded)")
    if len(items) > MAX_ORDERS:
        raise InputError(f"{option}: the list has {len(items)} orders; {option} takes at most {MAX_ORDERS} orders",
                         option=option, allowed=f"at most {MAX_ORDERS} orders", got=text)
    return items


class Parsed(click.ParamType):
    """A click type that parses an option's text with `parse(option, text)`, once, as click reads it.

    A bad value raises InputError, which the entry point prints as it is ("--sigma must be in
    (0, inf), got -1"); click's own `self.fail` would wrap it as "Invalid value for '--sigma': ...".
    """

    name = "value"

    def __init__(self, parse: Callable[[str, str], Any]) -> None:
        self.parse = parse

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):  # a default given as a number, or a value converted already
            return value
        option = param.opts[0] if param is not None and param.opts else "value"
        return self.parse(option, value)


def number(interval: Interval) -> Parsed:
    """The click type of a number in `interval` (an integer when the interval holds integers only)."""
    return Parsed(partial(parse_number, interval=interval))


def single(interval: Interval) -> Parsed:
    """The click type of one number in `interval` that refuses a list or range by name."""
    return Parsed(partial(parse_single, interval=interval))


def sweepable(interval: Interval) -> Parsed:
    """The click type of a number in `interval`, or a list or range of them (a `Swept`)."""
    return Parsed(partial(parse_sweepable, interval=interval))


def option_name(keyword: str) -> str:
    """The option of a core keyword: `batch_size` is --batch-size, `T` is --T."""
    return "--" + keyword.replace("_", "-")


def option_error(error: ParameterError, spell: Callable[[str], str] = option_name) -> InputError:
    """A core refusal (`core.validation.ParameterError`, or a run's `RunError`, naming keywords)
    worded with the options `spell` names them by (`option_name`: --T for T), and what it is
    about: those options in order (a name `spell` leaves without "--" is not an option; "--a / --b"
    is two), the requirement and the value received."""
    if isinstance(error, RunError):
        named, allowed = tuple(spell(keyword) for keyword in error.named), error.allowed
    else:
        named, allowed = tuple(spell(error.name).split(" / ")), error.requirement
    options = tuple(dict.fromkeys(name for name in named if name.startswith("--")))
    return InputError(error.worded(spell), options=options, allowed=allowed, got=as_typed(error.received))


@contextmanager
def options_named() -> Iterator[None]:
    """The core's refusals of a run raised in the block as `InputError`s naming the options."""
    try:
        yield
    except RunError as error:
        raise option_error(error) from None


if TYPE_CHECKING:
    # What the click type of a sweepable option returns: a number, or a list or range of them.
    SweepableReal = float | Swept
    SweepableCount = int | Swept
else:
    # The declaration reads one Python type per option (dpcalc.cli.declare); `click_type` does the parsing.
    SweepableReal = float
    SweepableCount = int

DEFAULT_DELTA = 1e-5

# The options of a training run: (option, input name), in the order a conflict names them.
TRAINING_FLAGS = (("--p", "p"), ("--sigma", "sigma"), ("--noise-std", "noise_std"), ("--sensitivity", "sensitivity"),
                  ("--T", "T"), ("--n", "n"), ("--batch-size", "batch_size"), ("--epochs", "epochs"))

# --plot and --chart of the commands that draw (the drawing itself: `dpcalc.cli.figures`, loaded
# only when one is asked for)
PlotFile = Annotated[
    str | None,
    Option("--plot", metavar="FILE", help="Write a figure to FILE (.png, .svg or .pdf; needs matplotlib)."),
]
Chart = Annotated[
    bool,
    Option("--chart", help="Draw the curve in the terminal with Unicode characters."),
]
SamplingProbability = Annotated[
    SweepableReal | None,
    Option("--p", "--sample-rate", "--sampling-probability", metavar="FLOAT",
                 help="Poisson sampling probability per step, in [0, 1] (0: nothing sampled, epsilon 0).",
                 click_type=sweepable(PROBABILITY)),
]
NoiseMultiplier = Annotated[
    SweepableReal | None,
    Option("--sigma", "--noise-multiplier", metavar="FLOAT", help="Noise multiplier: noise std / L2 sensitivity, > 0.",
                 click_type=sweepable(POSITIVE)),
]
NoiseStd = Annotated[
    SweepableReal | None,
    Option("--noise-std", metavar="FLOAT",
                 help="Instead of --sigma: the Gaussian noise std (> 0); sigma = noise std / --sensitivity.",
                 click_type=sweepable(POSITIVE)),
]
Sensitivity = Annotated[
    float | None,
    Option("--sensitivity", metavar="FLOAT",
                 help="The query's sensitivity (> 0; L2 for --noise-std, L1 for --scale) that the noise given "
                      "is divided by [default: 1]. Not with --sigma, already noise std / sensitivity.",
                 click_type=single(POSITIVE)),
]
# pld's, risk's and calibrate's: truncated Poisson sampling (docs/mathematics.md, "Truncated Poisson sampling")
MaxBatchSize = Annotated[
    int | None,
    Option("--max-batch-size", metavar="INT",
           help="Truncated Poisson sampling: batches larger than this are cut to it (needs the dataset size, "
                "--n with --batch-size); accounted by the overflow probability and, under add-remove, step by "
                "step, the tighter kept.",
           click_type=number(POSITIVE_INTEGER)),
]
# gdp's: a Gaussian run only (no --scale)
GaussianSensitivity = Annotated[
    float | None,
    Option("--sensitivity", metavar="FLOAT",
           help="The query's L2 sensitivity (> 0) that --noise-std is divided by [default: 1]. Not with --sigma, "
                "already noise std / sensitivity.",
           click_type=single(POSITIVE)),
]
Steps = Annotated[
    SweepableCount | None,
    Option("--T", "--steps", metavar="INT", help="Number of steps, an integer >= 1.", click_type=sweepable(POSITIVE_INTEGER)),
]
DatasetSize = Annotated[
    SweepableCount | None,
    Option("--n", metavar="INT", help="Training form: dataset size (p = batch-size / n).",
                 click_type=sweepable(POSITIVE_INTEGER)),
]
BatchSize = Annotated[
    SweepableCount | None,
    Option("--batch-size", metavar="INT", help="Training form: expected batch size.",
                 click_type=sweepable(POSITIVE_INTEGER)),
]
Epochs = Annotated[
    SweepableReal | None,
    Option("--epochs", metavar="FLOAT", help="Training form: epochs (T = ceil(epochs * n / batch-size)).",
                 click_type=sweepable(POSITIVE)),
]
Delta = Annotated[
    SweepableReal | None,
    Option("--delta", metavar="FLOAT", help=f"Target delta in (0, 1) giving epsilon [default: {DEFAULT_DELTA:g}].",
                 click_type=sweepable(OPEN_UNIT)),
]
Epsilon = Annotated[
    SweepableReal | None,
    Option("--eps", metavar="FLOAT", help="Give epsilon (>= 0) instead of --delta to get delta.",
                 click_type=sweepable(NON_NEGATIVE)),
]
MaxEpsilon = Annotated[
    float | None,
    Option("--max-eps", metavar="FLOAT", help="Budget: exit 1 when epsilon exceeds this value.",
                 click_type=number(NON_NEGATIVE), once=True),
]
# the commands that report delta at a given epsilon (pld, rdp, gdp, convert --to dp)
MaxDelta = Annotated[
    float | None,
    Option("--max-delta", metavar="FLOAT",
           help="Budget, with --eps: exit 1 when the certified upper bound on delta at --eps exceeds this value, "
                "in [0, 1].",
           click_type=number(PROBABILITY), once=True),
]

# The one rule for a budget gate beside --eps and --delta: a gate compares what the command
# computes, never what it was given. With --eps the epsilon is the user's own (its delta may be
# 1), so --max-eps would pass whatever the run; with --delta (or its default) likewise for
# --max-delta. Every command that takes --eps to get delta applies it (`check_gates`).
GIVEN_EPSILON = ("--max-eps cannot check a run given --eps: its epsilon is then the one given and the privacy "
                 "spent shows in its delta; drop --eps to compare the epsilon computed at --delta, or keep --eps "
                 "and gate the delta with --max-delta")
GIVEN_DELTA = ("--max-delta checks the delta computed at --eps: give --eps (with --delta, or neither, delta is the "
               "one given; gate the epsilon with --max-eps)")
# the options each names, in order
GIVEN_EPSILON_OPTIONS = ("--max-eps", "--eps", "--delta", "--max-delta")
GIVEN_DELTA_OPTIONS = ("--max-delta", "--eps", "--delta", "--max-eps")


def check_gates(*, epsilon_given: bool, max_eps: float | None, max_delta: float | None) -> None:
    """Refuse a gate on a figure the user gave (GIVEN_EPSILON, GIVEN_DELTA): `epsilon_given` is
    True when epsilon is an input (--eps, to get delta) rather than a result."""
    if epsilon_given and max_eps is not None:
        raise InputError(GIVEN_EPSILON, options=GIVEN_EPSILON_OPTIONS)
    if not epsilon_given and max_delta is not None:
        raise InputError(GIVEN_DELTA, options=GIVEN_DELTA_OPTIONS)
XAxis = Annotated[
    str | None,
    Option("--x", metavar="OPTION",
           help="The swept option on the x axis of a sweep's --plot or --chart (default: the last one swept); "
                "one line per value of the other swept options."),
]
Csv = Annotated[
    bool,
    Option("--csv", help="Print CSV instead of a table: a header line, one row per result (per combination of a sweep)."),
]
Json = Annotated[
    bool,
    Option("--json", help="Print one strict JSON object instead of a table."),
]



# The option groups shared by the commands (dpcalc.cli.declare.Group): each is declared once
# here, a frozen record (dpcalc.core.record: nothing generated at import), and taken by a command
# as one parameter, `outputs: Annotated[Outputs, Group()]`, which gives one option per field, in
# this order, where the parameter stands.

class Formats(Record):
    """--json and --csv: the output formats besides the table."""

    json_output: Json = False
    csv_output: Csv = False


class Outputs(Formats):
    """--json and --csv, and the figure: --plot and --chart."""

    plot: PlotFile = None
    chart: Chart = False


class SweepOutputs(Outputs):
    """Outputs, and the x axis of a sweep's figure: --x."""

    x_axis: XAxis = None


class Gates(Record):
    """The budget gates: --max-eps, and with --eps --max-delta."""

    max_eps: MaxEpsilon = None
    max_delta: MaxDelta = None


class GaussianRun(Record):
    """A Gaussian training run, as its steps (--p, --sigma or --noise-std, --T) or in the training
    form (--n, --batch-size, --epochs)."""

    p: SamplingProbability = None
    sigma: NoiseMultiplier = None
    noise_std: NoiseStd = None
    sensitivity: GaussianSensitivity = None
    T: Steps = None
    n: DatasetSize = None
    batch_size: BatchSize = None
    epochs: Epochs = None
