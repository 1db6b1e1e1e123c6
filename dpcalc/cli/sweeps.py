"""Sweeps: any numeric option given as a comma list or a range start:stop:step.

A command hands the texts of its numeric options to `parse_sweep`; options written as
`1,2,4` or `1:60:1` (or a list mixing both: `1:5:1,10,20`) become lists of value texts, every
other option stays one text. The command then runs once per combination (`Sweep.rows`) with
exactly the parsing and validation of a single run, so a bad value gets the same message as
it would alone, and prints one table row and one element of `result.rows` per combination
(`sweep_report`).

Ranges use exact decimal arithmetic, so `0.1:0.5:0.1` is 0.1, 0.2, 0.3, 0.4, 0.5: the stop is
included when it lands on the grid of start + k step, and the step may be negative for a
falling range. Integer options take integer ranges only.

Order: the values of each option in the order given; with several swept options, the product
in the order the options appear on the command line, the last one varying fastest.

Row shape (JSON, `result.rows`): each row is one flat object holding the swept inputs under
their input names, then the command's run inputs a sweep may change (for example `T`, which
`--epochs` sets), then the scalar result keys of the single-run command (list-valued keys such
as a trade-off curve are left out: run the single command for them), and `within_budget` when
--max-eps is given. `result.swept` lists the swept input names. --max-eps checks every row:
the exit code is 1 when any row exceeds it.

Per command (besides the swept inputs and `within_budget`):
  gdp        p, sigma, T (training form), mu, epsilon, delta, max_advantage, tight_epsilon
  rdp        p, sigma (scale for --mechanism laplace), T, epsilon, delta, order, conversion,
             tight_epsilon (the RDP curve is left out)
  pld        p, sigma (or scale), T, epsilon, epsilon_lower, epsilon_upper, delta, delta_lower,
             delta_upper, accuracy, grid {step, size}, binding
  calibrate  the result keys of a single run (the solved quantity, epsilon, target_epsilon, ...)
The JSON `inputs` of an rdp or pld sweep echo the options as given, by input name (mechanism,
p, sigma, scale, T, n, batch_size, epochs, ...): a list for a swept option, one value
otherwise, None when not given; the run each row resolves (p from n and batch size, T from
epochs) is in the row. rdp and pld sweep the single-phase flags only: --phase is refused
beside a list or range, and --orders (a list of orders for one run) is never swept.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dpcalc.cli.options import InputError
from dpcalc.cli.output import Report, Table, format_bound, format_number

if TYPE_CHECKING:
    from decimal import Decimal

# The largest number of rows (combinations) one sweep may have: beyond it the output is no
# longer a table anyone reads, and a typo such as 1:1e9:1 should fail at once, not run for hours.
MAX_ROWS = 10_000


def is_sweep_text(text: str | None) -> bool:
    """True when an option's text is a list or a range rather than one value."""
    return text is not None and ("," in text or ":" in text)


def expand(option: str, text: str | None, *, integer: bool = False) -> list[str] | None:
    """The value texts of one option: [text] for one value, the items of a list or range otherwise.

    Items are returned as texts for the command's own parser (parse_real / parse_integer), which
    checks each against the option's range; only the sweep syntax is checked here.
    """
    if text is None:
        return None
    if not is_sweep_text(text):
        return [text]
    values: list[str] = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            raise InputError(f"{option}: empty item in the list {text!r}; separate values with single commas")
        if ":" in item:
            values.extend(_expand_range(option, item, integer))
        else:
            values.append(item)
        if len(values) > MAX_ROWS:
            raise InputError(f"{option}: {text!r} has more than {MAX_ROWS} values; a sweep takes at most {MAX_ROWS} rows")
    return values


def _expand_range(option: str, item: str, integer: bool) -> list[str]:
    from decimal import Decimal, InvalidOperation  # exact steps; imported only for ranges

    parts = item.split(":")
    if len(parts) != 3 or not all(part.strip() for part in parts):
        raise InputError(f"{option}: a range is start:stop:step, got {item!r}")
    numbers = []
    for name, part in zip(("start", "stop", "step"), parts):
        try:
            number = Decimal(part.strip())
        except InvalidOperation:
            raise InputError(f"{option}: the range {name} must be a number, got {part.strip()!r} in {item!r}") from None
        if not number.is_finite():
            raise InputError(f"{option}: the range {name} must be finite, got {part.strip()!r} in {item!r}")
        if integer and number != number.to_integral_value():
            raise InputError(
                f"{option} takes integers: a range needs integer start, stop and step, got {item!r}"
            )
        numbers.append(number)
    start, stop, step = numbers
    if step == 0:
        raise InputError(f"{option}: the range step must not be 0, got {item!r}")
    if (stop - start) * step < 0:
        direction = "rising" if step > 0 else "falling"
        raise InputError(
            f"{option}: the step {part_text(step)} never reaches {part_text(stop)} from {part_text(start)} "
            f"in {item!r} (a {direction} step needs stop {'>=' if step > 0 else '<='} start)"
        )
    count = int((stop - start) / step) + 1
    if count > MAX_ROWS:
        raise InputError(f"{option}: the range {item!r} has {count} values; a sweep takes at most {MAX_ROWS} rows")
    return [part_text(start + k * step) for k in range(count)]


def part_text(number: Decimal) -> str:
    """A decimal as plain text ('0.3', '10', '0.0001'); scientific notation only when that is long."""
    if number == number.to_integral_value() and abs(number) < 10**15:
        return str(int(number))
    text = format(number.normalize(), "f")
    return text if len(text) <= 24 else str(number.normalize())


@dataclass
class Sweep:
    """The value texts of a command's numeric options and the combinations they make."""

    values: dict[str, list[str] | None]  # option -> value texts (None: not given)
    swept: list[str]  # options given as a list or range, in command-line order

    @property
    def is_sweep(self) -> bool:
        return bool(self.swept)

    def __len__(self) -> int:
        return math.prod(len(self.values[option] or ()) for option in self.swept) if self.swept else 1

    def rows(self) -> Iterator[dict[str, str | None]]:
        """One {option: text} per combination: the product in `swept` order, the last fastest."""
        fixed = {option: (texts[0] if texts else None) for option, texts in self.values.items()}

        def walk(index: int, chosen: dict[str, str | None]) -> Iterator[dict[str, str | None]]:
            if index == len(self.swept):
                yield {**fixed, **chosen}
                return
            option = self.swept[index]
            for text in self.values[option] or ():
                yield from walk(index + 1, {**chosen, option: text})

        yield from walk(0, {})


def parse_sweep(options: dict[str, str | None], *, integer: Iterable[str] = ()) -> Sweep:
    """Expand the options' texts; the swept ones are ordered as they appear on the command line."""
    integer = set(integer)
    values = {option: expand(option, text, integer=option in integer) for option, text in options.items()}
    swept = [option for option in command_line_order(list(options)) if is_sweep_text(options[option])]
    sweep = Sweep(values, swept)
    if len(sweep) > MAX_ROWS:
        sizes = " x ".join(f"{option} {len(values[option] or ())}" for option in swept)
        raise InputError(f"the sweep has {len(sweep)} rows ({sizes}); a sweep takes at most {MAX_ROWS} rows")
    return sweep


def input_value(option: str, text: str | None, *, integer: Iterable[str] = ()) -> Any:
    """One value text of an option (already checked by the command's parser) as it appears in JSON."""
    if text is None:
        return None
    from dpcalc.cli.options import parse_integer

    return parse_integer(option, text) if option in set(integer) else float(text)


def given_inputs(sweep: Sweep, keys: dict[str, str], *, integer: Iterable[str] = ()) -> dict[str, Any]:
    """The options as given, by JSON name: a list of values for a swept option, one value otherwise."""
    integer = tuple(integer)
    inputs: dict[str, Any] = {}
    for option, key in keys.items():
        texts = sweep.values.get(option)
        if texts is None:
            inputs[key] = None
        elif option in sweep.swept:
            inputs[key] = [input_value(option, text, integer=integer) for text in texts]
        else:
            inputs[key] = input_value(option, texts[0], integer=integer)
    return inputs


RUN_KEYS = ("p", "sigma", "scale", "T")


def echo_rows(inputs: dict[str, Any], rows: list[Row], keys: Iterable[str], swept_keys: list[str]) -> None:
    """Replace each of `keys` in a sweep's `inputs` by its per-row values, as `inputs` promises
    (README): a list when the input is swept or differs between rows (T for --epochs, p for
    --batch-size), else its one value. Keys that the rows do not hold are left as they are."""
    for key in keys:
        if key not in inputs or key not in rows[0].values:
            continue
        per_row = [row.values[key] for row in rows]
        inputs[key] = per_row if key in swept_keys or any(value != per_row[0] for value in per_row) else per_row[0]


def refuse_phase_sweep(phase_specs: list[str] | None, options: dict[str, str | None]) -> None:
    """A sweep varies the single-phase flags: --phase is refused beside any list or range."""
    if not phase_specs:
        return
    for option, text in options.items():
        if is_sweep_text(text):
            raise InputError(
                f"--phase cannot be combined with a sweep ({option} {text}); sweeps vary the single-phase "
                "flags (--p, --sigma, --T, ...): give the run with them, or run once per --phase value"
            )


def phase_run(phase) -> dict[str, Any]:
    """The run quantities of a one-phase sweep row: p, sigma (or scale for Laplace) and T."""
    noise = ("sigma", phase.noise_multiplier) if phase.mechanism == "gaussian" else ("scale", phase.scale)
    return {"p": phase.sampling_probability, noise[0]: noise[1], "T": phase.steps}


def fixed_description(rows: list[dict[str, Any]], keys: Sequence[str]) -> str:
    """'p = 0.004, sigma = 1.1' for the keys whose value is the same in every row (for a title)."""
    parts = []
    for key in keys:
        values = {repr(row.get(key)) for row in rows}
        if len(values) == 1 and rows and rows[0].get(key) is not None:
            parts.append(f"{key} = {format_number(rows[0][key])}")
    return ", ".join(parts)


def command_line_order(options: list[str]) -> list[str]:
    """`options` (names such as '--p') reordered as the user typed them; unknown ones keep their place.

    click records the parameters of the running command in the order they were given on the
    command line (`Context.params`); outside a click command the order is unchanged.
    """
    import click

    context = click.get_current_context(silent=True)
    if context is None:
        return options
    option_of = {param.name: param.opts[0] for param in context.command.params if param.opts}
    typed = [option_of[name] for name in context.params if option_of.get(name) in options]
    return typed + [option for option in options if option not in typed]


@dataclass
class Column:
    """One column of a sweep table: the JSON key of a row and its header."""

    key: str
    header: str
    note: str = ""  # shown in the header, e.g. units
    # True for a column of certified upper bounds (printed rounded up), False for lower bounds
    # (rounded down), None for the rest (rounded to nearest).
    upward: bool | None = None


@dataclass
class Row:
    """One combination: its values by JSON key, the warnings of its run, and what --max-eps
    compares (a sound epsilon and its basis; None, with the reason in `no_gate`, when the row
    has no sound figure)."""

    values: dict[str, Any]
    warnings: Sequence[str] = ()
    epsilon: float | None = None
    basis: str | None = None
    no_gate: str | None = None


@dataclass
class SweepOutput:
    """What `sweep_report` needs besides the rows."""

    command: str
    inputs: dict[str, Any]
    swept_keys: list[str]  # the JSON names of the swept inputs
    columns: list[Column]
    title: str
    max_epsilon: float | None = None
    extra_result: dict[str, Any] = field(default_factory=dict)
    figures: Callable[[], list[Any]] | None = None


def sweep_report(output: SweepOutput, rows: list[Row]) -> Report:
    """The report of a sweep: `result.rows` (one flat object per combination) and one table.

    `Report.epsilon` is the largest epsilon of the rows, so --max-eps fails when any row
    exceeds it; with --max-eps every row also carries `within_budget`. Warnings shared by
    several rows are listed once.
    """
    json_rows = []
    for row in rows:
        values = dict(row.values)
        if output.max_epsilon is not None and row.epsilon is not None:
            values["within_budget"] = row.epsilon <= output.max_epsilon
        json_rows.append(values)
    columns = list(output.columns)
    if output.max_epsilon is not None:
        columns.append(Column("within_budget", "within budget"))
    table_rows = [tuple(_cell(_lookup(values, column.key), column.upward) for column in columns)
                  for values in json_rows]
    warnings: list[str] = []
    for row in rows:
        for warning in row.warnings:
            if warning not in warnings:
                warnings.append(warning)
    # the gate: the largest sound epsilon of the rows; none at all when any row lacks one
    ungated = [row for row in rows if row.epsilon is None]
    gated = [row.epsilon for row in rows if row.epsilon is not None]  # every row's, when none is ungated
    worst = None if ungated else max(gated, key=lambda value: (math.isnan(value), value))
    bases = list(dict.fromkeys(row.basis for row in rows if row.basis))
    return Report(
        command=output.command,
        inputs=output.inputs,
        result={"swept": output.swept_keys, **output.extra_result, "rows": json_rows},
        tables=[
            Table(
                columns=tuple(column.header for column in columns),
                rows=table_rows,
                title=output.title,
                justify=tuple("right" for _ in columns),
            )
        ],
        warnings=warnings,
        epsilon=worst,
        basis="; ".join(bases) or None,
        no_gate=ungated[0].no_gate if ungated else None,
        figures=output.figures,
    )


def _lookup(values: Any, key: str) -> Any:
    """values[key], where a dotted key such as 'run.T' reaches into a nested object."""
    for part in key.split("."):
        if not isinstance(values, dict):
            return None
        values = values.get(part)
    return values


def _cell(value: Any, upward: bool | None = None) -> str:
    if isinstance(value, bool):
        return "yes" if value else "NO"
    return format_number(value) if upward is None else format_bound(value, upward)


def sweep_panels(
    rows: list[dict[str, Any]],
    *,
    x_key: str,
    y_key: str,
    series_keys: Sequence[str],
    title: str,
    xlabel: str,
    ylabel: str,
):
    """One panel: y against x, one series per combination of the other swept inputs."""
    from dpcalc.cli.figures import Panel, Series

    groups: dict[tuple, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(row.get(key) for key in series_keys), []).append(row)
    series = []
    for key, members in groups.items():
        points = [
            (float(row[x_key]), float(row[y_key]))
            for row in members
            if _finite_number(row.get(x_key)) and _finite_number(row.get(y_key))
        ]
        points.sort()
        label = ", ".join(f"{name} = {format_number(value)}" for name, value in zip(series_keys, key)) or y_key
        series.append(Series(label, [x for x, _ in points], [y for _, y in points]))
    return [Panel(title=title, xlabel=xlabel, ylabel=ylabel, series=series)]


def _finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
