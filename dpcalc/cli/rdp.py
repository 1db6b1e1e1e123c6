"""`dpcalc rdp`: Renyi-DP accounting of (heterogeneous) subsampled Gaussian runs and Laplace releases."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from dpcalc.cli.options import (
    RANGES,
    BatchSize,
    DatasetSize,
    Delta,
    Epochs,
    Epsilon,
    InputError,
    Json,
    MaxEpsilon,
    NoiseMultiplier,
    SamplingProbability,
    Steps,
    large_delta_warnings,
    parse_delta_or_epsilon,
    parse_real,
)
from dpcalc.cli.output import Report, Table, emit, format_number, format_upper
from dpcalc.cli.phases import Mechanism, PhaseList, Scale, parse_phases, phase_inputs
from dpcalc.cli.tight import NoTight, gap_percent, tight_epsilon, tight_epsilons


class ConversionChoice(str, Enum):
    improved = "improved"
    classic = "classic"


# Kept in step with dpcalc.core.rdp (which is not imported here: it loads numpy).
MAX_ORDER = 1e5
DEFAULT_GRID_TEXT = (
    "1.05-10.95 by 0.05, 11-31.5 by 0.5, 32-63 by 1, 64-124 by 4, 128-240 by 16, "
    "256-960 by 64, then 1024, 2048, 4096 (312 orders; a superset of dp_accounting's "
    "default orders)"
)

app = typer.Typer(add_completion=False, rich_markup_mode=None)

HELP = f"""Renyi DP of a training run: the RDP curve over orders and the (epsilon, delta) it gives.

Each phase is a Poisson-subsampled Gaussian (--p, --sigma, --T) or a Laplace release
(--mechanism laplace --scale B, no subsampling); RDP adds over phases and steps at each
order (Mironov 2017), the subsampled Gaussian per order from Mironov, Talwar, Zhang 2019.
epsilon is minimised over the orders; --conversion improved (Canonne, Kamath, Steinke 2020,
Prop. 12; default) or classic (Mironov 2017, Prop. 3).

Default orders: {DEFAULT_GRID_TEXT}.

\b
Examples:
  dpcalc rdp --p 0.004 --sigma 1.1 --T 10000
  dpcalc rdp --n 60000 --batch-size 600 --epochs 18 --sigma 0.9 --json
  dpcalc rdp --phase p=0.01,sigma=2,T=500 --phase p=0.01,sigma=0.9,T=1800
  dpcalc rdp --phase p=0.01,sigma=0.9,T=1800 --phase mechanism=laplace,scale=20,T=1
  dpcalc rdp --p 0.004 --sigma 1.1 --T 10000 --orders 8,9,10,11 --conversion classic
  dpcalc rdp --p 0.004 --sigma 1.1 --T 10000 --eps 2
  dpcalc rdp --n 60000 --batch-size 256 --epochs 10:60:10 --sigma 0.8,1.1 --no-tight

Sweeps: any numeric option may be a list (0.8,1.1) or a range start:stop:step (10:60:10);
one row is printed per combination, in the order given, and --max-eps checks every row.
Rows that differ only in T share one per-step RDP curve. Not with --phase.
"""


@app.command("rdp", help=HELP)
def rdp(
    p: SamplingProbability = None,
    sigma: NoiseMultiplier = None,
    T: Steps = None,
    n: DatasetSize = None,
    batch_size: BatchSize = None,
    epochs: Epochs = None,
    mechanism: Mechanism = None,
    scale: Scale = None,
    phase: PhaseList = None,
    orders: Annotated[
        str | None,
        typer.Option(
            "--orders",
            metavar="LIST",
            help=f"Comma-separated Renyi orders in (1, {MAX_ORDER:g}], fractional allowed [default: the grid above].",
        ),
    ] = None,
    conversion: Annotated[
        ConversionChoice,
        typer.Option("--conversion", help="RDP to (epsilon, delta): improved (CKS 2020) or classic (Mironov 2017)."),
    ] = ConversionChoice.improved,
    delta: Delta = None,
    eps: Epsilon = None,
    max_eps: MaxEpsilon = None,
    no_tight: NoTight = False,
    json_output: Json = False,
) -> None:
    texts = {"--p": p, "--sigma": sigma, "--T": T, "--n": n, "--batch-size": batch_size, "--epochs": epochs,
             "--scale": scale, "--delta": delta, "--eps": eps}
    if any(text is not None and ("," in text or ":" in text) for text in texts.values()):
        # a list or range: the sweep module is loaded only then (start-up time)
        from dpcalc.cli.sweeps import parse_sweep, refuse_phase_sweep

        refuse_phase_sweep(phase, texts)
        _rdp_sweep(parse_sweep(texts, integer=INTEGER_OPTIONS), mechanism, orders, conversion, max_eps, no_tight,
                   json_output)
    target_delta, target_epsilon = parse_delta_or_epsilon(delta, eps)
    max_epsilon = parse_real("--max-eps", max_eps, RANGES["--max-eps"])
    phases = _parse_run(
        phase, p=p, sigma=sigma, T=T, n=n, batch_size=batch_size, epochs=epochs, mechanism=mechanism, scale=scale
    )
    grid = parse_orders(orders)
    result, tight, warnings = _evaluate(phases, grid, target_delta, target_epsilon, conversion, no_tight)
    warnings += large_delta_warnings(n, target_delta)
    curve = [{"order": order, "rdp": value} for order, value in zip(result.orders, result.rdp)]
    inputs = {
        "phases": [phase_inputs(item) for item in phases],
        "orders": "default" if grid is None else list(result.orders),
        "conversion": conversion.value,
        "delta": target_delta,
        "eps": target_epsilon,
        "max_eps": max_epsilon,
        "no_tight": no_tight,
    }
    report = Report(
        command="rdp",
        inputs=inputs,
        result={
            "epsilon": result.epsilon,
            "delta": result.delta,
            "order": result.order,
            "conversion": result.conversion,
            "curve": curve,
            "tight_epsilon": tight,
        },
        tables=[_summary_table(result, target_delta is not None, tight)]
        + ([_phases_table(phases)] if len(phases) > 1 else [])
        + [_curve_table(result)],
        warnings=warnings,
        **_gate(result, tight, target_delta is not None),
    )
    raise typer.Exit(emit(report, json_mode=json_output, max_epsilon=max_epsilon))


def _gate(result, tight: float | None, epsilon_solved: bool) -> dict:
    """What --max-eps compares: the larger of the two sound upper bounds the command has (the
    RDP epsilon and the PLD certified one), so that the check never rests on the lower one."""
    conversion = f"RDP upper bound ({result.conversion} conversion)"
    if not epsilon_solved:
        return {"epsilon": result.epsilon, "basis": f"the given epsilon, at the {conversion} on delta"}
    if tight is not None and tight > result.epsilon:
        return {"epsilon": tight, "basis": "PLD certified upper bound"}
    return {"epsilon": result.epsilon, "basis": conversion}


def _parse_run(phase, **flags) -> list:
    """The run's phases (dpcalc.cli.phases), with the laplace phases checked to be unsampled."""
    phases = parse_phases(phase, **flags)
    for index, item in enumerate(phases, start=1):
        if item.mechanism == "laplace" and item.sampling_probability != 1.0:
            option = f"--phase {index}: p" if phase else "--p"
            raise InputError(
                f"{option} must be 1 for the laplace mechanism (RDP of the Poisson-subsampled Laplace "
                f"mechanism is not implemented), got {format_number(item.sampling_probability)}"
            )
    return phases


def _evaluate(phases, grid, target_delta, target_epsilon, conversion, no_tight: bool, per_step_cache=None,
              tight_given=None):
    """One run: (core RDPResult, tight epsilon or None, warnings).

    `per_step_cache` (one dict for all rows of a sweep) keeps the per-step RDP curve of each
    mechanism, so that rows differing only in T cost one curve between them.
    """
    from dpcalc.core.rdp import rdp_accountant

    result = rdp_accountant(
        phases, orders=grid, delta=target_delta, epsilon=target_epsilon, conversion=conversion.value,
        per_step_cache=per_step_cache,
    )
    warnings = list(result.warnings)
    tight = None
    if target_delta is not None and not no_tight:
        tight, tight_warnings = tight_given or tight_epsilon(phases, target_delta)
        warnings += tight_warnings
    return result, tight, warnings


# The sweepable options (integer ones take integer ranges) and their JSON names.
INTEGER_OPTIONS = ("--T", "--n", "--batch-size")
_INPUT_KEY = {"--p": "p", "--sigma": "sigma", "--scale": "scale", "--T": "T", "--n": "n",
              "--batch-size": "batch_size", "--epochs": "epochs", "--delta": "delta", "--eps": "eps"}
_ROW_RESULT_KEYS = ("epsilon", "delta", "order", "conversion", "tight_epsilon")
_HEADERS = {"batch_size": "batch size", "tight_epsilon": "tight epsilon"}


def _rdp_sweep(sweep, mechanism, orders, conversion, max_eps, no_tight: bool, json_output: bool) -> None:
    """One row per combination of the swept options (row shape: see dpcalc.cli.sweeps).

    A row holds the swept inputs, the run (p, sigma or scale, T) and the scalar result keys
    (epsilon, delta, order, conversion, tight_epsilon; the curve is left out). Every row is
    parsed before any is computed, so that a bad value fails at once. The per-step RDP curve
    of each distinct mechanism is computed once and scaled by T (RDP composes additively).
    """
    from dpcalc.cli.sweeps import (
        RUN_KEYS,
        Column,
        Row,
        SweepOutput,
        echo_rows,
        fixed_description,
        given_inputs,
        input_value,
        phase_run,
        sweep_report,
    )

    max_epsilon = parse_real("--max-eps", max_eps, RANGES["--max-eps"])
    runs = []
    for values in sweep.rows():
        target_delta, target_epsilon = parse_delta_or_epsilon(values["--delta"], values["--eps"])
        phases = _parse_run(
            None, p=values["--p"], sigma=values["--sigma"], T=values["--T"], n=values["--n"],
            batch_size=values["--batch-size"], epochs=values["--epochs"], mechanism=mechanism,
            scale=values["--scale"],
        )
        runs.append((values, phases, target_delta, target_epsilon))
    grid = parse_orders(orders)
    per_step_cache: dict = {}
    swept_keys = [_INPUT_KEY[option] for option in sweep.swept]
    rows = []
    # the tight figures of rows that differ only in T share one PLD composition
    tights = [None] * len(runs) if no_tight else tight_epsilons(
        [(phases, target_delta) for _, phases, target_delta, _ in runs])
    for (values, phases, target_delta, target_epsilon), tight_given in zip(runs, tights):
        result, tight, warnings = _evaluate(
            phases, grid, target_delta, target_epsilon, conversion, no_tight, per_step_cache, tight_given
        )
        row = {_INPUT_KEY[option]: input_value(option, values[option], integer=INTEGER_OPTIONS)
               for option in sweep.swept}
        for key, value in phase_run(phases[0]).items():
            row.setdefault(key, value)
        for key in _ROW_RESULT_KEYS:
            row.setdefault(key, tight if key == "tight_epsilon" else getattr(result, key))
        gate = _gate(result, tight, target_delta is not None)
        warnings += large_delta_warnings(values["--n"], target_delta)
        rows.append(Row(row, warnings, gate["epsilon"], gate["basis"]))
    inputs = {"mechanism": runs[0][1][0].mechanism, **given_inputs(sweep, _INPUT_KEY, integer=INTEGER_OPTIONS)}
    # the run as resolved per row, as the single command echoes its resolved phases
    echo_rows(inputs, rows, [*swept_keys, *RUN_KEYS], swept_keys)
    if inputs["delta"] is None and inputs["eps"] is None:
        inputs["delta"] = runs[0][2]
    inputs.update({
        "orders": "default" if grid is None else list(grid),
        "conversion": conversion.value,
        "max_eps": max_epsilon,
        "no_tight": no_tight,
    })
    # The table shows what varies: the swept inputs, the run quantities they change (T for
    # --epochs), epsilon (or delta), the best order and the tight epsilon; --json has every key.
    run_keys = [key for key in phase_run(runs[0][1][0]) if key not in swept_keys]
    table_rows = [row.values for row in rows]
    varying = [key for key in run_keys if len({row[key] for row in table_rows}) > 1]
    y_key = "epsilon" if inputs["eps"] is None else "delta"
    shown = [key for key in (y_key, "order") if key not in swept_keys]
    if any(row["tight_epsilon"] is not None for row in table_rows):
        shown.append("tight_epsilon")
    fixed = fixed_description(table_rows, run_keys)
    report = sweep_report(
        SweepOutput(
            command="rdp",
            inputs=inputs,
            swept_keys=swept_keys,
            columns=[Column(key, _HEADERS.get(key, key), upward=True if key in (y_key, "tight_epsilon") else None)
                     for key in swept_keys + varying + shown],
            title=f"Renyi DP sweep{': ' + fixed if fixed else ''}"
            + (", classic conversion" if conversion is ConversionChoice.classic else ""),
            max_epsilon=max_epsilon,
        ),
        rows,
    )
    raise typer.Exit(emit(report, json_mode=json_output, max_epsilon=max_epsilon))


def parse_orders(text: str | None) -> list[float] | None:
    """--orders as a list of floats in (1, MAX_ORDER]; None (the default grid) when not given."""
    if text is None:
        return None
    requirement = f"a comma-separated list of orders in (1, {MAX_ORDER:g}]"
    items = [item.strip() for item in text.split(",")]
    if not any(items):
        raise InputError(f"--orders must be {requirement}, got {text!r}")
    values = []
    for item in items:
        if not item:
            raise InputError(f"--orders must be {requirement}, got an empty item in {text!r}")
        try:
            value = float(item)
        except ValueError:
            raise InputError(f"--orders must be {requirement}, got {item!r}") from None
        if not (1.0 < value <= MAX_ORDER):  # also refuses nan
            raise InputError(f"--orders must be {requirement}, got {item}")
        values.append(value)
    return sorted(set(values))


def _summary_table(result, epsilon_solved: bool, tight: float | None) -> Table:
    conversion_note = (
        "Canonne, Kamath, Steinke 2020, Prop. 12" if result.conversion == "improved" else "Mironov 2017, Prop. 3"
    )
    extra = []
    if tight is not None:
        extra.append((
            "tight epsilon",
            format_upper(tight),
            f"PLD, certified upper bound; RDP is {gap_percent(result.epsilon, tight):.1f}% above",
        ))
    return Table(
        columns=("quantity", "value", "note"),
        rows=[("epsilon", format_upper(result.epsilon) if epsilon_solved else format_number(result.epsilon),
               "minimised over the orders" if epsilon_solved else "given")]
        + extra
        + [
            ("delta", format_number(result.delta) if epsilon_solved else format_upper(result.delta),
             "given" if epsilon_solved else "minimised over the orders"),
            ("order", format_number(result.order), "the order achieving the optimum"),
            ("conversion", result.conversion, conversion_note),
            ("orders in grid", str(len(result.orders)), f"{format_number(min(result.orders))} to {format_number(max(result.orders))}"),
        ],
        title=_title(result.phases),
    )


def _describe(item) -> str:
    if item.mechanism == "gaussian":
        return (
            f"p = {format_number(item.sampling_probability)}, sigma = {format_number(item.noise_multiplier)}, "
            f"T = {item.steps}"
        )
    return f"Laplace, scale = {format_number(item.scale)}, T = {item.steps}"


def _title(phases) -> str:
    if len(phases) == 1:
        return f"Renyi DP: {_describe(phases[0])}"
    return f"Renyi DP of {len(phases)} phases (below)"


def _phases_table(phases) -> Table:
    rows = []
    for index, item in enumerate(phases, start=1):
        noise = f"sigma = {format_number(item.noise_multiplier)}" if item.mechanism == "gaussian" else f"scale = {format_number(item.scale)}"
        rows.append((str(index), item.mechanism, format_number(item.sampling_probability), noise, str(item.steps)))
    return Table(columns=("phase", "mechanism", "p", "noise", "T"), rows=rows, title="Phases")


def _curve_table(result) -> Table:
    orders = result.orders
    best = orders.index(result.order)
    shown = sorted({0, len(orders) - 1, *range(max(0, best - 3), min(len(orders), best + 4))})
    rows = []
    for position in shown:
        marker = "<- optimum" if position == best else ""
        rows.append((format_number(orders[position]), format_number(result.rdp[position]), marker))
    return Table(
        columns=("order", "composed RDP", ""),
        rows=rows,
        title="RDP curve (all orders: --json)",
    )
