"""What every accountant command does first, and how it ends: the shared prologue.

`gdp`, `rdp`, `pld` and `calibrate` hand their numeric options, already parsed by their click
types (numbers, or `Swept` for a list or range: dpcalc.cli.options), to `start`, which

  * refuses --phase beside a sweep (a sweep varies the single-phase flags),
  * limits the number of combinations (dpcalc.cli.sweeps.MAX_ROWS),
  * settles --delta and --eps: not both; --delta is 1e-5 unless one of them is given,
  * refuses a budget gate on a figure given (--max-eps with --eps, --max-delta without it:
    options.check_gates),
  * checks --plot before any work is done,

and returns a `Request`: the inputs as given (the JSON `inputs` of the command), one row of
numbers per combination of the swept options (one row when nothing is swept), and `finish`,
which prints the report with --json, --max-eps or --max-delta, --plot and --chart and exits.

Order of the rows: the values of each option in the order given; with several swept options,
the product in the order the options appear on the command line, the last one varying fastest.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from dpcalc.cli.declare import Exit
from dpcalc.cli.options import DEFAULT_DELTA, InputError, Swept, check_gates, conflict
from dpcalc.cli.output import emit

if TYPE_CHECKING:
    from pathlib import Path  # annotations only: pathlib stays off the start-up path

    from dpcalc.cli.output import Report


@dataclass(frozen=True)
class Request:
    """A command's inputs as rows to compute, and the options that decide how its report is printed."""

    given: dict[str, Any]  # input name -> its value as given: a list for a swept input, None when not given
    swept: tuple[str, ...]  # the swept inputs, in command-line order
    rows: tuple[dict[str, Any], ...]  # one per combination: input name -> one number (or None)
    max_epsilon: float | None = None
    json_output: bool = False
    plot: Path | None = None
    chart: bool = False
    csv_output: bool = False
    max_delta: float | None = None

    @property
    def is_sweep(self) -> bool:
        return bool(self.swept)

    def emit(self, report: Report) -> int:
        """Print the report (a table, or JSON with --json; the figure with --plot or --chart) and
        return its exit code (1 when epsilon exceeds --max-eps)."""
        return emit(report, json_mode=self.json_output, max_epsilon=self.max_epsilon, plot=self.plot, chart=self.chart,
                    csv_mode=self.csv_output, max_delta=self.max_delta)

    def finish(self, report: Report) -> NoReturn:
        """Print the report and exit with its code."""
        raise Exit(self.emit(report))


def start(
    inputs: dict[str, Any],
    *,
    max_eps: float | None = None,
    json_output: bool = False,
    plot: str | None = None,
    chart: bool = False,
    phase: list[str] | None = None,
    csv_output: bool = False,
    max_delta: float | None = None,
) -> Request:
    """The Request of a command whose numeric options are `inputs`, by input name (as the JSON names
    them): a number, a `Swept`, or None when not given. `phase` holds the --phase values (refused
    beside a sweep); the other arguments are the options of the same names."""
    sweeps = {name: value for name, value in inputs.items() if isinstance(value, Swept)}
    if json_output and csv_output:
        raise conflict("--json", "--csv", "give one output format")
    if phase and sweeps:
        first = next(iter(sweeps.values()))
        raise InputError(
            f"--phase cannot be combined with a sweep ({first.option} {first.text}); sweeps vary the single-phase "
            "flags (--p, --sigma, --T, ...): give the run with them, or run once per --phase value"
        )
    swept = command_line_order(list(sweeps))
    _check_size([sweeps[name] for name in swept])
    given = {name: list(value.values) if isinstance(value, Swept) else value for name, value in inputs.items()}
    if "delta" in given:
        if given["delta"] is not None and given.get("eps") is not None:
            raise conflict("--delta", "--eps", "give --delta to get epsilon, or --eps to get delta")
        check_gates(epsilon_given=given.get("eps") is not None, max_eps=max_eps, max_delta=max_delta)
        if given["delta"] is None and given.get("eps") is None:
            given["delta"] = DEFAULT_DELTA
    rows = tuple(
        {**given, **dict(zip(swept, combination))}
        for combination in itertools.product(*(sweeps[name].values for name in swept))
    )
    plot_path = None
    if plot is not None:
        from dpcalc.cli.figures import check_plot_path

        plot_path = check_plot_path(plot)
    return Request(given, tuple(swept), rows, max_eps, json_output, plot_path, chart, csv_output, max_delta)


def _check_size(sweeps: list[Swept]) -> None:
    """A sweep takes at most MAX_ROWS combinations: a typo such as 1:1e9:1 fails at once."""
    if not sweeps:
        return
    from dpcalc.cli.sweeps import MAX_ROWS

    count = math.prod(len(swept.values) for swept in sweeps)
    if count > MAX_ROWS:
        sizes = " x ".join(f"{swept.option} {len(swept.values)}" for swept in sweeps)
        raise InputError(f"the sweep has {count} rows ({sizes}); a sweep takes at most {MAX_ROWS} rows")


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
