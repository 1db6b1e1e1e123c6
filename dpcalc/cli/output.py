"""The one output path: a `Report` becomes a Rich table for people or one strict JSON object.

JSON is RFC 8259 strict: a non-finite number is written as the string "inf" (or "-inf"),
never as an Infinity/NaN literal. Warnings go to stderr in table mode and into the
`warnings` list in JSON mode. Rich is imported only when a table is printed. Tables fit the
terminal's width without ever cutting a number (`_print_tables`), and warnings wrap to it.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from dpcalc.cli import progress
from dpcalc.cli.errors import (  # noqa: F401 - re-exported: the exit codes' table is dpcalc.cli.errors'
    EXIT_BROKEN_PIPE,
    EXIT_HANGUP,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_IO_ERROR,
    EXIT_OK,
    EXIT_OVER_BUDGET,
    EXIT_TERMINATED,
    EXIT_USAGE,
    OutputError,
)
from dpcalc.cli.interrupts import raise_lost_interrupt
from dpcalc.core.record import Mutable, Record
from dpcalc.core.text import (  # noqa: F401 - re-exported
    format_bound,
    format_lower,
    format_number,
    format_upper,
    wrap_words,
)

if TYPE_CHECKING:
    from pathlib import Path  # annotations only: pathlib stays off the start-up path


Justify = Literal["left", "right"]


class Table(Mutable):
    """Plain table data; rendered with Rich only in table mode."""

    columns: tuple[str, ...]
    rows: Sequence[tuple[str, ...]]
    title: str | None = None
    # Per-column "left" or "right"; default: the first column and a "note" column left (text),
    # the others right (numbers).
    justify: tuple[Justify, ...] | None = None


class Report(Mutable):
    """Everything a command prints: the JSON fields and the tables that show them."""

    command: str
    inputs: dict[str, Any]
    result: dict[str, Any]
    tables: list[Table]
    warnings: list[str] = []  # noqa: RUF012 - never shared: __post_init__ makes each report its own list
    # What --max-eps compares: a sound upper bound on epsilon (never an approximation), and
    # what it is ("PLD certified upper bound"). None when the command has no sound figure;
    # `no_gate` then says why and what to change, and --max-eps is refused.
    epsilon: float | None = None
    basis: str | None = None
    no_gate: str | None = None
    # What --max-delta compares, likewise: a certified upper bound on delta at the given epsilon
    # (never an estimate or an approximation), what it is, or why there is none.
    delta: float | None = None
    delta_basis: str | None = None
    no_delta_gate: str | None = None
    # Builds the figure's panels (dpcalc.cli.figures.Panel) for --plot and --chart; called only then.
    figures: Callable[[], list[Any]] | None = None
    # The rows --csv prints, one per result (a sweep's combinations, a budget's releases); None:
    # one row, the result itself.
    csv_rows: list[dict[str, Any]] | None = None
    # Plain text printed instead of the tables (the Markdown of `dpcalc statement`); None: the tables.
    text: str | None = None

    def __post_init__(self) -> None:
        # one line per distinct warning, in order (the command and its tight figure may say the same)
        self.warnings = list(dict.fromkeys(self.warnings))


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


def json_safe(value: Any) -> Any:
    """Replace non-finite floats by the strings "inf", "-inf" (and "nan"), and in text a lone
    surrogate by U+FFFD, recursively: a file name that is not UTF-8 (Python reads its bytes
    from the command line as lone surrogates) is echoed so that the JSON is valid Unicode."""
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    if isinstance(value, str):
        return value if value.isascii() else _valid_unicode(value)
    if isinstance(value, dict):
        return {json_safe(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return value


def _valid_unicode(text: str) -> str:
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= char <= "\udfff" else char for char in text)


class Answer(Record):
    """A command's report and how it is printed (--json or --csv, --plot, --chart, the budget
    gates --max-eps and --max-delta): what a command function returns, printed by `emit`."""

    report: Report
    json_output: bool = False
    max_epsilon: float | None = None
    plot: Path | None = None
    chart: bool = False
    csv_output: bool = False
    max_delta: float | None = None

    def emit(self) -> int:
        """Print the report and return its exit code (1 when over a budget gate)."""
        return emit(self.report, json_mode=self.json_output, max_epsilon=self.max_epsilon, plot=self.plot,
                    chart=self.chart, csv_mode=self.csv_output, max_delta=self.max_delta)


def emit(
    report: Report,
    *,
    json_mode: bool,
    max_epsilon: float | None = None,
    plot: Path | None = None,
    chart: bool = False,
    csv_mode: bool = False,
    max_delta: float | None = None,
) -> int:
    """Print the report and return the exit code (1 when epsilon exceeds --max-eps, or delta
    --max-delta).

    `plot` (already checked by figures.check_plot_path) receives the figure; `chart` prints it
    as text after the tables, or on stderr in JSON mode so that stdout stays one JSON object.
    """
    progress.stop()  # the spinner (shown after half a second of work on a terminal) is erased first
    raise_lost_interrupt()  # a Ctrl-C lost in an import during the computation: print nothing
    budget = _budget(report, max_epsilon, max_delta)
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
        console = _console()
        width = _warning_width(console)
        for warning in report.warnings:
            text = f"Warning: {warning}"
            sys.stderr.write((text if width is None else wrap_words(text, width)) + "\n")
        if report.text is not None:
            sys.stdout.write(report.text)
        else:
            _print_tables(console, report.tables, budget)
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
        sys.stderr.write(f"Budget exceeded: {_verdict(budget)}\n")
        return EXIT_OVER_BUDGET
    return EXIT_OK


def _budget(report: Report, max_epsilon: float | None, max_delta: float | None) -> dict[str, Any] | None:
    """The JSON `budget` object of --max-eps ({max_epsilon, epsilon, basis, within_budget}) or
    --max-delta ({max_delta, delta, basis, within_budget}), None without a gate; a gate on a
    result without a sound figure is refused (InputError, with the report's reason)."""
    if max_epsilon is None and max_delta is None:
        return None
    from dpcalc.cli.errors import InputError

    if max_epsilon is not None and max_delta is not None:
        raise InputError("--max-eps and --max-delta cannot be given together: gate the quantity the command computes",
                         options=("--max-eps", "--max-delta"))
    if max_delta is None:
        assert max_epsilon is not None, "one of the two gates (checked above)"
        if report.epsilon is None:
            raise InputError(f"--max-eps: {report.no_gate or 'this result has no certified epsilon to compare'}",
                             option="--max-eps")  # the gate only: what the reason names is not known here
        return {"max_epsilon": max_epsilon, "epsilon": report.epsilon, "basis": report.basis,
                "within_budget": report.epsilon <= max_epsilon}
    if report.delta is None:
        raise InputError(f"--max-delta: {report.no_delta_gate or 'this result has no certified delta to compare'}",
                         option="--max-delta")
    return {"max_delta": max_delta, "delta": report.delta, "basis": report.delta_basis,
            "within_budget": report.delta <= max_delta}


def _verdict(budget: dict[str, Any]) -> str:
    """'epsilon 1.84 (basis) > --max-eps 1.5' (or delta and --max-delta), the figure rounded up."""
    quantity, option = ("epsilon", "--max-eps") if "max_epsilon" in budget else ("delta", "--max-delta")
    relation = "<=" if budget["within_budget"] else ">"
    limit = budget["max_epsilon"] if quantity == "epsilon" else budget["max_delta"]
    return f"{quantity} {format_upper(budget[quantity])} ({budget['basis']}) {relation} {option} {format_number(limit)}"


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


# How narrow a column of words (a note, a label) may become before a table that is too wide for
# the terminal is split: the words wrap within it and a longer word folds onto the next line.
# A number is never wrapped, folded or cut: its column stays at least as wide as the number.
WORD_COLUMN_FLOOR = 16
def _warning_width(console: Any) -> int | None:
    """The width a warning wraps to in table mode: the terminal's (COLUMNS where set, as Rich
    reads it), or None (each warning one line, as a log or grep wants it) when stderr is not a
    terminal and COLUMNS is not set."""
    import os

    isatty = getattr(sys.stderr, "isatty", None)
    if os.environ.get("COLUMNS", "").isdigit() or (isatty is not None and isatty()):
        return int(console.width)
    return None


def _column_floors(cells: Sequence[Sequence[str]]) -> tuple[list[int], list[int]]:
    """(natural, floor) width of each column: its widest line, and the narrowest it may be made.

    The floor keeps every word holding a digit (a number, "Thm 3.16", "1e-05)") whole, and a
    column's other words whole up to WORD_COLUMN_FLOOR characters.
    """
    from rich.cells import cell_len

    natural = [1] * len(cells[0])
    floor = [1] * len(cells[0])
    for row in cells:
        for index, cell in enumerate(row):
            for line in cell.split("\n"):
                natural[index] = max(natural[index], cell_len(line))
                for word in line.split():
                    keep = cell_len(word) if any(c.isdigit() for c in word) else min(cell_len(word), WORD_COLUMN_FLOOR)
                    floor[index] = max(floor[index], keep)
    return natural, floor


def _break_long_words(cell: str, width: int) -> str:
    """`cell` with each word wider than `width` broken onto several lines: after a hyphen where
    one falls within the width ("Dwork-Rothblum-" / "Vadhan"), else at the width. Rich then
    wraps the rest at spaces. Words holding a digit are never this wide (`_column_floors`)."""
    if all(len(word) <= width for word in cell.split()):
        return cell
    lines = []
    for line in cell.split("\n"):
        pieces = []
        for word in line.split(" "):
            parts = []
            while len(word) > width:
                cut = word.rfind("-", 0, width) + 1 or width
                parts.append(word[:cut])
                word = word[cut:]
            pieces.append("\n".join([*parts, word]))
        lines.append(" ".join(pieces))
    return "\n".join(lines)


def _frame(columns: int) -> int:
    """The characters a Rich table spends beside its cells: a rule at each edge and between
    columns, and one space of padding on each side of every cell."""
    return columns + 1 + 2 * columns


def _shrink(natural: list[int], floor: list[int], room: int) -> list[int] | None:
    """Column widths summing to at most `room`: the widest column above its floor gives one
    character at a time (as Rich narrows the widest wrappable column); None if the floors
    do not fit."""
    if sum(floor) > room:
        return None
    widths = list(natural)
    while sum(widths) > room:
        widest = max(width for width, least in zip(widths, floor) if width > least)
        index = next(i for i, width in enumerate(widths) if width == widest and width > floor[i])
        widths[index] -= 1
    return widths


def _column_groups(natural: list[int], floor: list[int], width: int) -> list[tuple[list[int], list[int]]]:
    """The table laid out in `width` characters: one or more (column indexes, widths), the
    first column (the row's name) repeated in each. A table is split only where its floors do
    not fit side by side, and then each part takes as many columns, in order, as fit; a part
    that does not fit even with one column is laid out at its floors."""
    count = len(natural)
    whole = _shrink(natural, floor, width - _frame(count))
    if whole is not None or count == 1:
        return [(list(range(count)), whole if whole is not None else list(floor))]
    groups: list[list[int]] = []
    current = [0]
    for index in range(1, count):
        trial = current + [index]
        if len(current) > 1 and sum(floor[i] for i in trial) > width - _frame(len(trial)):
            groups.append(current)
            current = [0, index]
        else:
            current = trial
    groups.append(current)
    laid_out = []
    for group in groups:
        widths = _shrink([natural[i] for i in group], [floor[i] for i in group], width - _frame(len(group)))
        laid_out.append((group, widths if widths is not None else [floor[i] for i in group]))
    return laid_out


def _print_tables(console: Any, tables: list[Table], budget: dict[str, Any] | None) -> None:
    """Each table fitted to the console's width: notes and headers wrap, numbers stay whole.

    A table whose numbers cannot stand side by side in the width is split into several tables
    of fewer columns, each repeating the first column and titled "(continued)" after the first.
    """
    from rich.table import Table as RichTable

    # Cells are plain text (the console has markup off), or a release named "model [v2]" would
    # lose "[v2]" as a style tag (and ":smile:" would become an emoji).
    for index, spec in enumerate(tables):
        justify: tuple[Justify, ...] = spec.justify or tuple(
            "left" if position == 0 or column == "note" else "right" for position, column in enumerate(spec.columns)
        )
        # a short row ends in empty cells, as Rich pads it
        rows = [(*row, *("",) * (len(spec.columns) - len(row))) for row in spec.rows]
        natural, floor = _column_floors([spec.columns, *rows])
        groups = _column_groups(natural, floor, console.width)
        for part, (group, widths) in enumerate(groups):
            title = spec.title if part == 0 else "(continued)"
            table = RichTable(title=title, title_justify="left")
            for column, width in zip(group, widths):
                table.add_column(_break_long_words(spec.columns[column], width), justify=justify[column], width=width,
                                 overflow="fold")
            for row in rows:
                table.add_row(*(_break_long_words(row[column], width) for column, width in zip(group, widths)))
            if index == 0 and budget is not None and part == len(groups) - 1:
                verdict = "within budget" if budget["within_budget"] else "budget EXCEEDED"
                table.caption = f"{verdict}: {_verdict(budget)}"
                table.caption_justify = "left"
            needed = sum(widths) + _frame(len(group))
            if needed > console.width:  # not even the floors fit: print wider than the terminal, nothing cut
                saved = console.width
                console.width = needed
                try:
                    console.print(table)
                finally:
                    console.width = saved
            else:
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
