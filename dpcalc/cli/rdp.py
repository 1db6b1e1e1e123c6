"""`dpcalc rdp`: Renyi-DP accounting of (heterogeneous) subsampled Gaussian runs and Laplace releases."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Optional

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
    parse_delta_or_epsilon,
    parse_real,
)
from dpcalc.cli.output import Report, Table, emit, format_number
from dpcalc.cli.phases import Mechanism, PhaseList, Scale, parse_phases
from dpcalc.cli.tight import NoTight, gap_percent, tight_epsilon


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
        Optional[str],
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
    target_delta, target_epsilon = parse_delta_or_epsilon(delta, eps)
    max_epsilon = parse_real("--max-eps", max_eps, RANGES["--max-eps"])
    phases = parse_phases(
        phase, p=p, sigma=sigma, T=T, n=n, batch_size=batch_size, epochs=epochs, mechanism=mechanism, scale=scale
    )
    for index, item in enumerate(phases, start=1):
        if item.mechanism == "laplace" and item.sampling_probability != 1.0:
            option = f"--phase {index}: p" if phase else "--p"
            raise InputError(
                f"{option} must be 1 for the laplace mechanism (RDP of the Poisson-subsampled Laplace "
                f"mechanism is not implemented), got {format_number(item.sampling_probability)}"
            )
    grid = parse_orders(orders)

    from dpcalc.core.rdp import rdp_accountant

    result = rdp_accountant(
        phases, orders=grid, delta=target_delta, epsilon=target_epsilon, conversion=conversion.value
    )
    curve = [{"order": order, "rdp": value} for order, value in zip(result.orders, result.rdp)]
    warnings = list(result.warnings)
    tight = None
    if target_delta is not None and not no_tight:
        tight, tight_warnings = tight_epsilon(phases, target_delta)
        warnings += tight_warnings
    inputs = {
        "phases": [_phase_inputs(item) for item in phases],
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
        epsilon=result.epsilon,
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


def _phase_inputs(item) -> dict:
    return {
        "mechanism": item.mechanism,
        "p": item.sampling_probability,
        "sigma": item.noise_multiplier,
        "scale": item.scale,
        "T": item.steps,
    }


def _summary_table(result, epsilon_solved: bool, tight: float | None) -> Table:
    conversion_note = (
        "Canonne, Kamath, Steinke 2020, Prop. 12" if result.conversion == "improved" else "Mironov 2017, Prop. 3"
    )
    extra = []
    if tight is not None:
        extra.append((
            "tight epsilon",
            format_number(tight),
            f"PLD, certified upper bound; RDP is {gap_percent(result.epsilon, tight):.1f}% above",
        ))
    return Table(
        columns=("quantity", "value", "note"),
        rows=[("epsilon", format_number(result.epsilon), "minimised over the orders" if epsilon_solved else "given")]
        + extra
        + [
            ("delta", format_number(result.delta), "given" if epsilon_solved else "minimised over the orders"),
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
