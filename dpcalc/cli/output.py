"""The one output path: a `Report` becomes a Rich table for people or one strict JSON object.

JSON is RFC 8259 strict: a non-finite number is written as the string "inf" (or "-inf"),
never as an Infinity/NaN literal. Warnings go to stderr in table mode and into the
`warnings` list in JSON mode. Rich is imported only when a table is printed.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from dpcalc.cli import progress
from dpcalc.cli.interrupts import raise_lost_interrupt

EXIT_OK = 0
EXIT_OVER_BUDGET = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 70
EXIT_BROKEN_PIPE = 141  # the reader closed the pipe (128 + SIGPIPE, the shell convention)

Justify = Literal["left", "right"]


@dataclass
class Table:
    """Plain table data; rendered with Rich only in table mode."""

    columns: tuple[str, ...]
    rows: Sequence[tuple[str, ...]]
    title: str | None = None
    # Per-column "left" or "right"; default: the first column and a "note" column left (text),
    # the others right (numbers).
    justify: tuple[Justify, ...] | None = None


@dataclass
class Report:
    """Everything a command prints: the JSON fields and the tables that show them."""

    command: str
    inputs: dict[str, Any]
    result: dict[str, Any]
    tables: list[Table]
    warnings: list[str] = field(default_factory=list)
    # What --max-eps compares: a sound upper bound on epsilon (never an approximation), and
    # what it is ("PLD certified upper bound"). None when the command has no sound figure;
    # `no_gate` then says why and what to change, and --max-eps is refused.
    epsilon: float | None = None
    basis: str | None = None
    no_gate: str | None = None
    # Builds the figure's panels (dpcalc.cli.figures.Panel) for --plot and --chart; called only then.
    figures: Callable[[], list[Any]] | None = None
    # The rows --csv prints, one per result (a sweep's combinations, a budget's releases); None:
    # one row, the result itself.
    csv_rows: list[dict[str, Any]] | None = None

    def __post_init__(self) -> None:
        # one line per distinct warning, in order (the command and its tight figure may say the same)
        self.warnings = list(dict.fromkeys(self.warnings))


def format_number(value: Any) -> str:
    """A number for people: integers as they are, reals to about seven significant digits."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if value == 0.0:
            return "0"
        if 1e-3 <= abs(value) < 1e7:
            text = f"{value:.6f}".rstrip("0").rstrip(".")
            return text
        return f"{value:.6g}"
    return str(value)


def format_bound(value: Any, upward: bool) -> str:
    """A certified bound for people: `format_number`'s digits, rounded outward.

    An upper bound is never printed below its value, nor a lower bound above it: where rounding
    to nearest went the wrong way, the last printed digit moves one unit outward.
    """
    text = format_number(value)
    if not isinstance(value, float) or not math.isfinite(value) or value == 0.0:
        return text
    for _ in range(3):
        shown = float(text)
        if (shown >= value) if upward else (shown <= value):
            return text
        fixed = 1e-3 <= abs(shown) < 1e7 and "e" not in text
        quantum = 1e-6 if fixed else 10.0 ** (math.floor(math.log10(abs(shown))) - 5)
        text = format_number(shown + quantum if upward else shown - quantum)
    return text


def format_significant(value: float, upward: bool, digits: int = 6) -> str:
    """A certified bound with `digits` significant digits, rounded outward (for rates such as a
    TPR of 0.004286, whose fixed six decimals would show four digits): never printed below an
    upper bound's value, nor above a lower bound's."""
    if not math.isfinite(value) or value == 0.0:
        return format_number(value)
    text = f"{value:.{digits}g}"
    for _ in range(3):
        shown = float(text)
        if (shown >= value) if upward else (shown <= value):
            return text
        quantum = 10.0 ** (math.floor(math.log10(abs(shown))) - digits + 1)
        text = f"{shown + quantum if upward else shown - quantum:.{digits}g}"
    return text


def format_upper(value: Any) -> str:
    """An upper bound (epsilon, delta, noise to add) rounded up for display."""
    return format_bound(value, True)


def format_lower(value: Any) -> str:
    """A lower bound rounded down for display."""
    return format_bound(value, False)


def json_safe(value: Any) -> Any:
    """Replace non-finite floats by the strings "inf", "-inf" (and "nan"), recursively."""
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return value


def emit(
    report: Report,
    *,
    json_mode: bool,
    max_epsilon: float | None = None,
    plot: Path | None = None,
    chart: bool = False,
    csv_mode: bool = False,
) -> int:
    """Print the report and return the exit code (1 when epsilon exceeds --max-eps).

    `plot` (already checked by figures.check_plot_path) receives the figure; `chart` prints it
    as text after the tables, or on stderr in JSON mode so that stdout stays one JSON object.
    """
    progress.stop()  # the spinner (shown after half a second of work on a terminal) is erased first
    raise_lost_interrupt()  # a Ctrl-C lost in an import during the computation: print nothing
    budget = None
    if max_epsilon is not None:
        if report.epsilon is None:
            from dpcalc.cli.options import InputError

            raise InputError(f"--max-eps: {report.no_gate or 'this result has no certified epsilon to compare'}")
        within = report.epsilon <= max_epsilon
        budget = {"max_epsilon": max_epsilon, "epsilon": report.epsilon, "basis": report.basis,
                  "within_budget": within}
    if json_mode:
        import json

        from dpcalc import __version__

        document: dict[str, Any] = {
            "command": report.command,
            "version": __version__,
            "inputs": report.inputs,
            "result": report.result,
            "warnings": list(report.warnings),
        }
        if budget is not None:
            document["budget"] = budget
        sys.stdout.write(json.dumps(json_safe(document), allow_nan=False) + "\n")
    elif csv_mode:
        for warning in report.warnings:
            sys.stderr.write(f"Warning: {warning}\n")
        write_csv(report.csv_rows if report.csv_rows is not None else [report.result], sys.stdout)
    else:
        for warning in report.warnings:
            sys.stderr.write(f"Warning: {warning}\n")
        _print_tables(report.tables, budget)
    if (plot is not None or chart) and report.figures is not None:
        from dpcalc.cli import figures

        panels = report.figures()
        if chart:
            stream = sys.stderr if (json_mode or csv_mode) else sys.stdout
            for panel in panels:
                stream.write("\n" + figures.render_chart(panel))
        if plot is not None:
            figures.write_plot(panels, plot)
            if not (json_mode or csv_mode):
                sys.stderr.write(f"Wrote {plot}\n")
    if budget is not None and not budget["within_budget"]:
        sys.stderr.write(
            f"Budget exceeded: epsilon {format_upper(report.epsilon)} ({report.basis}) > --max-eps "
            f"{format_number(max_epsilon)}\n"
        )
        return EXIT_OVER_BUDGET
    return EXIT_OK


def flat_row(values: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """One CSV row of a result: nested objects become dotted columns ("grid.step"), a list the
    JSON text of it, non-finite numbers "inf"/"-inf"/"nan", None an empty cell."""
    import json

    row: dict[str, Any] = {}
    for key, value in values.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            row.update(flat_row(value, name + "."))
        elif isinstance(value, (list, tuple)):
            row[name] = json.dumps(json_safe(list(value)), allow_nan=False)
        elif value is None:
            row[name] = ""
        else:
            row[name] = json_safe(value)
    return row


def write_csv(results: Sequence[dict[str, Any]], stream: Any) -> None:
    """A header line and one line per result (RFC 4180, by the csv module); the columns are the
    union of the results' keys, in order of first appearance."""
    import csv

    rows = [flat_row(result) for result in results]
    columns = list(dict.fromkeys(key for row in rows for key in row))
    writer = csv.DictWriter(stream, fieldnames=columns, lineterminator="\n", restval="")
    writer.writeheader()
    writer.writerows(rows)


def _print_tables(tables: list[Table], budget: dict[str, Any] | None) -> None:
    from rich.table import Table as RichTable

    # Cells are plain text: markup off, or a release named "model [v2]" would lose "[v2]" as a
    # style tag (and ":smile:" would become an emoji); it also spares importing those parsers.
    console = _console()
    for index, spec in enumerate(tables):
        table = RichTable(title=spec.title, title_justify="left")
        justify: tuple[Justify, ...] = spec.justify or tuple(
            "left" if position == 0 or column == "note" else "right" for position, column in enumerate(spec.columns)
        )
        for column, side in zip(spec.columns, justify):
            table.add_column(column, justify=side)
        rows = list(spec.rows)
        for row in rows:
            table.add_row(*row)
        if index == 0 and budget is not None:
            verdict = "within budget" if budget["within_budget"] else "budget EXCEEDED"
            relation = "<=" if budget["within_budget"] else ">"
            table.caption = (f"{verdict}: epsilon {format_upper(budget['epsilon'])} ({budget['basis']}) "
                             f"{relation} --max-eps {format_number(budget['max_epsilon'])}")
            table.caption_justify = "left"
        console.print(table)


def _console():
    """The table console: Rich with markup, highlighting and emoji off, whose closed pipe
    raises BrokenPipeError (`dpcalc ... | head` exits 141 through app.main) instead of Rich's
    default SystemExit(1), which would read as a failed budget check. Rich loads only here."""
    import errno
    import os

    from rich.console import Console

    class PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

    return PipeConsole(highlight=False, markup=False, emoji=False)
