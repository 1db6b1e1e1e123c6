"""What every accountant command does first, and how it ends: the shared prologue.

`gdp`, `rdp`, `pld` and `calibrate` hand their numeric options, already parsed by their click
types (numbers, or `Swept` for a list or range: dpcalc.cli.options), to `start`, which

  * refuses --phase beside a sweep (a sweep varies the single-phase flags),
  * limits the number of combinations (dpcalc.cli.syntax.MAX_ROWS),
  * settles --delta and --eps: not both; --delta is 1e-5 unless one of them is given,
  * refuses a budget gate on a figure given (--max-eps with --eps, --max-delta without it:
    options.check_gates),
  * checks --plot before any work is done,

and returns a `Request`: the inputs as given (the JSON `inputs` of the command), one row of
numbers per combination of the swept options (one row when nothing is swept), and `answer`,
the report with how it is printed (--json, --max-eps or --max-delta, --plot and --chart), which
the command returns.

Order of the rows: the values of each option in the order given; with several swept options,
the product in the order the options appear on the command line, the last one varying fastest.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from dpcalc.cli.errors import InputError, conflict
from dpcalc.cli.options import DEFAULT_DELTA, Formats, Gates, Outputs, SweepOutputs, Swept, check_gates
from dpcalc.cli.output import Answer
from dpcalc.cli.syntax import MAX_ROWS
from dpcalc.core import record

if TYPE_CHECKING:
    from pathlib import Path  # annotations only: pathlib stays off the start-up path

    from dpcalc.cli.output import Report


Row = TypeVar("Row")
Inputs = TypeVar("Inputs")


class Request(record.Value, Generic[Row]):
    """A command's inputs as rows to compute, and the options that decide how its report is printed."""

    given: dict[str, Any]  # input name -> its value as given: a list for a swept input, None when not given
    swept: tuple[str, ...]  # the swept inputs, in command-line order
    rows: tuple[Row, ...]  # one per combination: the inputs with one number (or None) each
    max_epsilon: float | None = None
    json_output: bool = False
    plot: Path | None = None
    chart: bool = False
    csv_output: bool = False
    max_delta: float | None = None
    x_axis: str | None = None  # --x: the swept input on a sweep figure's x axis (None: the last swept)

    @property
    def is_sweep(self) -> bool:
        return bool(self.swept)

    @property
    def x_key(self) -> str:
        """The swept input a sweep's figure puts on its x axis (--x, or the last one swept)."""
        return self.x_axis or self.swept[-1]

    @property
    def series_keys(self) -> list[str]:
        """The other swept inputs: the figure draws one line per combination of their values."""
        return [name for name in self.swept if name != self.x_key]

    def answer(self, report: Report) -> Answer:
        """The report with how this request prints it (a table, or JSON with --json; the figure
        with --plot or --chart; the gates): what the command returns."""
        return Answer(report, json_output=self.json_output, max_epsilon=self.max_epsilon, plot=self.plot,
                      chart=self.chart, csv_output=self.csv_output, max_delta=self.max_delta)

    def emit(self, report: Report) -> int:
        """Print the report and return its exit code (1 when epsilon exceeds --max-eps)."""
        return self.answer(report).emit()


@overload
def start(inputs: dict[str, Any], *, outputs: Formats | None = ..., gates: Gates | None = ...,
          max_eps: float | None = ..., json_output: bool = ..., plot: str | None = ..., chart: bool = ...,
          phase: list[str] | None = ..., csv_output: bool = ..., max_delta: float | None = ...,
          x_axis: str | None = ...) -> Request[dict[str, Any]]: ...


@overload
def start(inputs: Inputs, *, outputs: Formats | None = ..., gates: Gates | None = ...,
          max_eps: float | None = ..., json_output: bool = ..., plot: str | None = ..., chart: bool = ...,
          phase: list[str] | None = ..., csv_output: bool = ..., max_delta: float | None = ...,
          x_axis: str | None = ...) -> Request[Inputs]: ...


def start(
    inputs: Any,
    *,
    outputs: Formats | None = None,
    gates: Gates | None = None,
    max_eps: float | None = None,
    json_output: bool = False,
    plot: str | None = None,
    chart: bool = False,
    phase: list[str] | None = None,
    csv_output: bool = False,
    max_delta: float | None = None,
    x_axis: str | None = None,
) -> Request[Any]:
    """The Request of a command whose numeric options are `inputs`: a frozen record or dataclass (whose fields,
    and its groups' fields, are named as the JSON names the inputs), or a dict by input name; each
    value a number, a `Swept`, or None when not given. The rows are of the same type. `phase` holds the --phase values (refused
    beside a sweep); `outputs` (Outputs, or Formats for a command that draws nothing) and `gates`
    are the option groups of those names, the other arguments the options of the same names (for
    a command that takes them one by one)."""
    if outputs is not None:
        json_output, csv_output = outputs.json_output, outputs.csv_output
    if isinstance(outputs, Outputs):
        plot, chart = outputs.plot, outputs.chart
    if isinstance(outputs, SweepOutputs):
        x_axis = outputs.x_axis
    if gates is not None:
        max_eps, max_delta = gates.max_eps, gates.max_delta
    typed = _is_typed(inputs)
    values = fields_of(inputs) if typed else inputs
    sweeps = {name: value for name, value in values.items() if isinstance(value, Swept)}
    if json_output and csv_output:
        raise conflict("--json", "--csv", "give one output format")
    if phase and sweeps:
        first = next(iter(sweeps.values()))
        raise InputError(
            f"--phase cannot be combined with a sweep ({first.option} {first.text}); sweeps vary the single-phase "
            "flags (--p, --sigma, --T, ...): give the run with them, or run once per --phase value",
            options=tuple(dict.fromkeys(("--phase", first.option, "--p", "--sigma", "--T"))),
        )
    swept = command_line_order(list(sweeps))
    _check_size([sweeps[name] for name in swept])
    given = {name: list(value.values) if isinstance(value, Swept) else value for name, value in values.items()}
    if "delta" in given:
        if given["delta"] is not None and given.get("eps") is not None:
            raise conflict("--delta", "--eps", "give --delta to get epsilon, or --eps to get delta")
        check_gates(epsilon_given=given.get("eps") is not None, max_eps=max_eps, max_delta=max_delta)
        if given["delta"] is None and given.get("eps") is None:
            given["delta"] = DEFAULT_DELTA
    combinations = itertools.product(*(sweeps[name].values for name in swept))
    if typed:
        settled = {"delta": given["delta"]} if "delta" in given else {}
        rows: tuple[Any, ...] = tuple(_replaced(inputs, {**settled, **dict(zip(swept, combination))})
                                      for combination in combinations)
    else:
        rows = tuple({**given, **dict(zip(swept, combination))} for combination in combinations)
    plot_path = None
    if plot is not None:
        from dpcalc.cli.figures import check_plot_path

        plot_path = check_plot_path(plot)
    if x_axis is not None:  # --x (dpcalc.cli.axis)
        from dpcalc.cli.axis import x_key

        x_axis = x_key(x_axis, swept, sweeps, plot is not None or chart)
    return Request(given, tuple(swept), rows, max_eps, json_output, plot_path, chart, csv_output, max_delta, x_axis)


def _is_typed(value: Any) -> bool:
    """True for a record or a dataclass of inputs (dpcalc.core.record), not a value (a `Swept` is one)."""
    return (record.is_record(value) or dataclasses.is_dataclass(value)) and not isinstance(value, Swept)


def _names(inputs: Any) -> tuple[str, ...]:
    if record.is_record(inputs):
        return record.fields(inputs)
    return tuple(item.name for item in dataclasses.fields(inputs))


def fields_of(inputs: Any) -> dict[str, Any]:
    """The fields of a record (or dataclass) of inputs by name, a group's fields (a group field) in its place."""
    values: dict[str, Any] = {}
    for name in _names(inputs):
        value = getattr(inputs, name)
        if _is_typed(value):
            values.update(fields_of(value))
        else:
            values[name] = value
    return values


def _replaced(inputs: Inputs, values: dict[str, Any]) -> Inputs:
    """`inputs` with the fields named in `values` (its groups' fields too) set to those values."""
    changes: dict[str, Any] = {}
    for name in _names(inputs):
        value = getattr(inputs, name)
        if _is_typed(value):
            changes[name] = _replaced(value, values)
        elif name in values:
            changes[name] = values[name]
    if record.is_record(inputs):
        return record.replace(inputs, **changes)  # type: ignore[type-var]
    return dataclasses.replace(inputs, **changes)  # type: ignore[type-var]


def _check_size(sweeps: list[Swept]) -> None:
    """A sweep takes at most MAX_ROWS combinations: a typo such as 1:1e9:1 fails at once."""
    if not sweeps:
        return
    count = math.prod(len(swept.values) for swept in sweeps)
    if count > MAX_ROWS:
        sizes = " x ".join(f"{swept.option} {len(swept.values)}" for swept in sweeps)
        raise InputError(f"the sweep has {count} rows ({sizes}); a sweep takes at most {MAX_ROWS} rows",
                         options=tuple(dict.fromkeys(swept.option for swept in sweeps)), allowed=f"at most {MAX_ROWS} rows")


def command_line_order(names: list[str]) -> list[str]:
    """`names` (of a command's parameters) reordered as the user typed them; outside a command, unchanged.

    click records the parameters of the running command in the order they were given on the
    command line (`Context.params`).
    """
    import click

    context = click.get_current_context(silent=True)
    if context is None:
        return names
    typed = [name for name in context.params if name in names]
    return typed + [name for name in names if name not in typed]
