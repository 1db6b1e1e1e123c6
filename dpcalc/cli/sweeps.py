"""Sweeps: any numeric option given as a comma list or a range start:stop:step.

An option written as `1,2,4` or `1:60:1` (or a list mixing both: `1:5:1,10,20`) is expanded
by its click type (dpcalc.cli.options.sweepable; the syntax: dpcalc.cli.syntax.expand), which
checks every value as it would check one, so a bad value gets the same message as it would
alone. The command then runs once per combination (dpcalc.cli.request: `Request.rows`) and
prints one table row and one element of `result.rows` per combination (`sweep_report`).

The order of the rows: see dpcalc.cli.request.

Row shape (JSON, `result.rows`): each row is one flat object holding the swept inputs under
their input names, then the command's run inputs a sweep may change (for example `T`, which
`--epochs` sets), then the scalar result keys of the single-run command (list-valued keys such
as a trade-off curve are left out: run the single command for them), and `within_budget` when
--max-eps or --max-delta is given. `result.swept` lists the swept input names. The gate checks
every row: the exit code is 1 when any row exceeds it.

Per command (besides the swept inputs and `within_budget`):
  gdp        p, sigma, T (training form), mu, epsilon, delta, max_advantage, tight_epsilon
  rdp        p, sigma (scale for --mechanism laplace), T, epsilon, delta, order, conversion,
             tight_epsilon, curve (the row's RDP curve, as the single command gives it)
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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dpcalc.cli.output import Report, Table, format_bound, format_number

if TYPE_CHECKING:
    from dpcalc.cli.request import Request

RUN_KEYS = ("p", "sigma", "scale", "T")

# The header of a sweep table's column, where it is not the JSON key.
HEADERS = {"batch_size": "batch size", "tight_epsilon": "tight epsilon", "epsilon_lower": "epsilon lower",
           "delta_lower": "delta lower", "target_epsilon": "target eps"}


def echo_rows(inputs: dict[str, Any], rows: list[Row], keys: Iterable[str], swept_keys: list[str]) -> None:
    """Replace each of `keys` in a sweep's `inputs` by its per-row values, as `inputs` promises
    (docs/json.md): a list when the input is swept or differs between rows (T for --epochs, p for
    --batch-size), else its one value. Keys that the rows do not hold are left as they are."""
    for key in keys:
        if key not in inputs or key not in rows[0].values:
            continue
        per_row = [row.values[key] for row in rows]
        inputs[key] = per_row if key in swept_keys or any(value != per_row[0] for value in per_row) else per_row[0]


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


def sweep_columns(
    rows: Sequence[dict[str, Any]],
    swept: Sequence[str],
    run_keys: Sequence[str],
    shown: Sequence[str],
    *,
    headers: dict[str, str] | None = None,
    upward: dict[str, bool] | None = None,
) -> list[Column]:
    """The columns of a sweep's table, which shows what varies: the swept inputs, the run
    quantities that differ between rows (T for --epochs), then `shown` (--json has every key).

    `headers` adds to HEADERS; `upward` marks the columns of certified bounds (see Column).
    """
    names = {**HEADERS, **(headers or {})}
    sides = upward or {}
    varying = [key for key in run_keys if len({row[key] for row in rows}) > 1]
    return [Column(key, names.get(key, key), upward=sides.get(key)) for key in [*swept, *varying, *shown]]


@dataclass(frozen=True)
class PhaseSweep:
    """What the sweep of a one-phase run (rdp, pld) echoes and shows besides its result keys."""

    inputs: dict[str, Any]  # the JSON inputs: the mechanism, the options as given, each row's run
    run_keys: list[str]  # the run quantities (p, sigma or scale, T) not swept
    y_key: str  # "epsilon", or "delta" with --eps
    fixed: str  # the run quantities equal in every row, for the title ("p = 0.004, sigma = 1.1")


def phase_row(swept: Sequence[str], row: dict[str, Any], phase: Any, results: dict[str, Any]) -> dict[str, Any]:
    """One JSON row of a one-phase sweep: the swept inputs (of `row`, the request's row by input
    name: request.fields_of), then the run, then the result keys."""
    values = {key: row[key] for key in swept}
    for key, value in {**phase_run(phase), **results}.items():
        values.setdefault(key, value)
    return values


def phase_sweep(request: Request, phase: Any, rows: list[Row]) -> PhaseSweep:
    """The inputs and table layout of a one-phase sweep whose first row's run is `phase`."""
    swept = list(request.swept)
    inputs = {"mechanism": phase.mechanism, "sampling": phase.sampling, "neighbours": phase.neighbours,
              "examples_per_user": phase.examples_per_user, **request.given}
    # the run as resolved per row, as the single command echoes its resolved phases
    echo_rows(inputs, rows, [*swept, *RUN_KEYS], swept)
    run_keys = [key for key in phase_run(phase) if key not in swept]
    return PhaseSweep(inputs, run_keys, "epsilon" if inputs["eps"] is None else "delta",
                      fixed_description([row.values for row in rows], run_keys))


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
    # what --max-delta compares, likewise (a certified upper delta at the row's --eps)
    delta: float | None = None
    delta_basis: str | None = None
    no_delta_gate: str | None = None


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
    max_delta: float | None = None


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
        elif output.max_delta is not None and row.delta is not None:
            values["within_budget"] = row.delta <= output.max_delta
        json_rows.append(values)
    columns = list(output.columns)
    if output.max_epsilon is not None or output.max_delta is not None:
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
    # --max-delta's gate: the largest certified delta of the rows, likewise
    delta_ungated = [row for row in rows if row.delta is None]
    worst_delta = None if delta_ungated else max((row.delta for row in rows if row.delta is not None),
                                                  key=lambda value: (math.isnan(value), value))
    delta_bases = list(dict.fromkeys(row.delta_basis for row in rows if row.delta_basis))
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
        delta=worst_delta,
        delta_basis="; ".join(delta_bases) or None,
        no_delta_gate=delta_ungated[0].no_delta_gate if delta_ungated else None,
        figures=output.figures,
        csv_rows=json_rows,
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
    accountant: str,
    name: str = "",
    also: Sequence[tuple[str, str, str]] = (),
    caption: str = "",
    budget: float | None = None,
    ylog: bool = False,
):
    """One panel: y against x, one series per combination of the other swept inputs, a marker
    on every row. `accountant` colours the series (dpcalc.cli.figures.ACCOUNTANT_STYLES);
    `name` names the y series in the legend, `also` adds further y keys as (key, accountant,
    name), e.g. the tight epsilon beside a central-limit one; `caption` names what the rows share;
    `budget` (--max-eps) is drawn as a horizontal line; `ylog` puts y on a log scale (delta)."""
    from dpcalc.cli.figures import Guide, Panel, Series

    groups: dict[tuple, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(row.get(key) for key in series_keys), []).append(row)
    curves = [(y_key, accountant, name), *also]
    series = []
    for key_y, owner, curve_name in curves:
        for key, members in groups.items():
            points = [
                (float(row[x_key]), float(row[key_y]))
                for row in members
                if _finite_number(row.get(x_key)) and _finite_number(row.get(key_y))
            ]
            if not points and key_y != y_key:
                continue  # a further key with no value (tight_epsilon not computed)
            points.sort()
            combination = ", ".join(f"{swept} = {format_number(value)}" for swept, value in zip(series_keys, key))
            label = ", ".join(part for part in (curve_name, combination) if part) or key_y
            series.append(Series(label, [x for x, _ in points], [y for _, y in points], accountant=owner,
                                 markers=True))
    guides = [] if budget is None else [Guide(f"epsilon budget = {format_number(budget)}", y=budget)]
    return [Panel(title=title, xlabel=xlabel, ylabel=ylabel, series=series, caption=caption, guides=guides,
                  ylog=ylog)]


def sweep_caption(inputs: dict[str, Any], names: Sequence[tuple[str, str]]) -> str:
    """What every row of a sweep shares, for its figure: 'p = 0.004, sigma = 1.1, delta = 1e-05'
    from the echoed `inputs` (key, shown name), leaving out inputs not given and those that
    differ between rows (echoed as lists)."""
    from dpcalc.cli.figures import run_caption

    return run_caption([(name, None if isinstance(inputs.get(key), list) else inputs.get(key))
                        for key, name in names])


def _finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
