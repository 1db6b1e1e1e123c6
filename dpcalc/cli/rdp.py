"""`dpcalc rdp`: Renyi-DP accounting of (heterogeneous) subsampled Gaussian runs and Laplace releases."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Annotated

from dpcalc.cli.declare import App, Group, Option
from dpcalc.cli.like import Like, like_figure, refuse_sweep, with_like_row
from dpcalc.cli.options import (
    GIVEN_DELTA,
    GIVEN_EPSILON,
    Delta,
    Epsilon,
    Formats,
    Gates,
    InputError,
    Numbers,
    Parsed,
    Swept,
    decimal_text,
    large_delta_warnings,
    not_a_number,
    one,
    order_items,
)
from dpcalc.cli.output import Answer, Report, Table, format_number, format_upper
from dpcalc.cli.phases import PhaseFlags, RunNumbers, phase_inputs, phases_table, phases_title
from dpcalc.cli.request import Request, fields_of, start
from dpcalc.cli.tight import NoTight, gap_percent, tight_epsilon, tight_epsilons
from dpcalc.core import record
from dpcalc.core.limits import MAX_ORDER, MAX_ORDER_TERMS, MAX_ORDERS, SUMMED_ORDER, default_orders_text, order_terms

if TYPE_CHECKING:
    from dpcalc.core.phases import Phase


class ConversionChoice(str, Enum):
    improved = "improved"
    classic = "classic"


DEFAULT_GRID_TEXT = default_orders_text()

app = App()

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


def parse_orders(option: str, text: str) -> Numbers:
    """--orders as a sorted list of distinct floats in (1, MAX_ORDER] (the option's click type);
    items may be ranges start:stop:step (`options.order_items`)."""
    requirement = f"a comma-separated list of orders in (1, {MAX_ORDER:g}] or ranges start:stop:step"
    items = order_items(option, text)
    if not any(items):
        raise InputError(f"{option} must be {requirement}, got {text!r}", option=option, allowed=requirement, got=text)
    values = []
    for item in items:
        if not item:
            raise InputError(f"{option} must be {requirement}, got an empty item in {text!r}", option=option,
                             allowed=requirement, got=text)
        cleaned = decimal_text(item)
        if cleaned is None:
            raise not_a_number(option, requirement, item)
        value = float(cleaned)
        if not (1.0 < value <= MAX_ORDER):  # also refuses nan
            raise InputError(f"{option} must be {requirement}, got {item}", option=option, allowed=requirement, got=item)
        values.append(value)
    orders = sorted(set(values))
    terms = order_terms(orders)
    if terms > MAX_ORDER_TERMS:  # the work, not the count: an order a up to 1e5 sums about a terms
        raise InputError(f"{option}: the orders up to {SUMMED_ORDER:g} must sum to at most {MAX_ORDER_TERMS:g} "
                         f"(each order a sums about a series terms: the work), got {terms:g}", option=option, got=text)
    return Numbers(orders)


Orders = Annotated[
    Numbers | None,
    Option(
        "--orders",
        metavar="LIST",
        help=f"Comma-separated Renyi orders in (1, {MAX_ORDER:g}], fractional allowed, or ranges start:stop:step "
        f"(stop included; e.g. 1.001:2:0.001,4,8; at most {MAX_ORDERS} orders, summing to at most "
        f"{MAX_ORDER_TERMS:g} below {SUMMED_ORDER:g}) [default: the grid above].",
        click_type=Parsed(parse_orders),
    ),
]
Conversion = Annotated[
    ConversionChoice,
    Option("--conversion", help="RDP to (epsilon, delta): improved (CKS 2020) or classic (Mironov 2017)."),
]


@dataclass(frozen=True, repr=False, eq=False)
class RdpInputs:
    """What rdp computes from: the run's numbers and the target delta or epsilon."""

    run: RunNumbers
    delta: float | Swept | None
    eps: float | Swept | None


@app.command("rdp", help=HELP)
def rdp(
    run: Annotated[PhaseFlags, Group()],
    orders: Orders = None,
    conversion: Conversion = ConversionChoice.improved,
    delta: Delta = None,
    eps: Epsilon = None,
    gates: Annotated[Gates, Group()] = Gates(),
    no_tight: NoTight = False,
    formats: Annotated[Formats, Group()] = Formats(),
    like: Like = None,
) -> Answer:
    request = start(RdpInputs(run.numbers(), delta, eps), outputs=formats, gates=gates, phase=run.phase)
    refuse_sweep(like, request.is_sweep)
    if request.is_sweep:
        return _rdp_sweep(request, run, orders, conversion, no_tight)
    row = request.rows[0]
    target_delta, target_epsilon = one(row.delta), one(row.eps)
    phases = _run_phases(run, row.run)
    framework = like_figure(like, phases, target_delta, "rdp")
    result, tight, warnings = _evaluate(phases, orders, target_delta, target_epsilon, conversion, no_tight)
    warnings += large_delta_warnings(one(row.run.n), target_delta)
    curve = _curve(result)
    inputs = {
        "phases": [phase_inputs(item) for item in phases],
        "noise_std": row.run.noise_std,
        "sensitivity": row.run.sensitivity,
        "orders": "default" if orders is None else list(result.orders),
        "conversion": conversion.value,
        "delta": target_delta,
        "eps": target_epsilon,
        "max_eps": request.max_epsilon,
        "max_delta": request.max_delta,
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
            "like": framework,
        },
        tables=[with_like_row(_summary_table(result, target_delta is not None, tight), framework)]
        + ([phases_table(phases)] if len(phases) > 1 else [])
        + [_curve_table(result)],
        warnings=warnings,
        **_gate(result, tight, target_delta is not None),
        csv_rows=_csv_rows(phases, curve, target_delta, target_epsilon, result.conversion) if request.csv_output else None,
    )
    return request.answer(report)


def _csv_rows(phases, curve, target_delta, target_epsilon, conversion) -> list[dict]:
    """--csv: one row per order (dpcalc.cli.rdp_csv, loaded only then)."""
    from dpcalc.cli.rdp_csv import order_rows, run_inputs

    return order_rows(run_inputs(phases), curve, delta=target_delta, epsilon=target_epsilon, conversion=conversion)


def _gate(result, tight: float | None, epsilon_solved: bool) -> dict:
    """What the gates compare. --max-eps: the larger of the two sound upper bounds the command
    has (the RDP epsilon and the PLD certified one), so that the check never rests on the lower
    one. --max-delta (with --eps): the RDP upper bound on delta. Never the figure given
    (options.check_gates)."""
    conversion = f"RDP upper bound ({result.conversion} conversion)"
    if not epsilon_solved:
        return {"epsilon": None, "basis": None, "no_gate": GIVEN_EPSILON,
                "delta": result.delta, "delta_basis": conversion, "no_delta_gate": None}
    given = {"no_gate": None, "delta": None, "delta_basis": None, "no_delta_gate": GIVEN_DELTA}
    if tight is not None and tight > result.epsilon:
        return {"epsilon": tight, "basis": "PLD certified upper bound", **given}
    return {"epsilon": result.epsilon, "basis": conversion, **given}


def _run_phases(run: PhaseFlags, numbers: RunNumbers) -> list[Phase]:
    """The run's phases for one row (dpcalc.cli.phases) under --sampling and --neighbours, refused
    where the RDP curves have no bound (`core.rdp.curves.covered`), with the laplace phases checked
    to be unsampled."""
    from dpcalc.core.rdp.curves import check_covered

    phases = run.phases(numbers)
    check_covered(phases, per_phase=bool(run.phase))
    return phases


def _evaluate(phases, grid, target_delta, target_epsilon, conversion, no_tight: bool, per_step_cache=None,
              tight_given=None):
    """One run: (core RDPResult, tight epsilon or None, warnings).

    `per_step_cache` (one dict for all rows of a sweep) keeps the per-step RDP curve of each
    mechanism, so that rows differing only in T cost one curve between them.
    """
    from dpcalc.core.phases import NOTHING_SAMPLED, samples_nothing
    from dpcalc.core.rdp import rdp_accountant

    result = rdp_accountant(
        phases, orders=grid, delta=target_delta, epsilon=target_epsilon, conversion=conversion.value,
        per_step_cache=per_step_cache,
    )
    warnings = list(result.messages(orders_option="--orders"))  # the core's warnings, naming this option
    if all(samples_nothing(item) for item in phases):
        warnings.insert(0, NOTHING_SAMPLED)
    tight = None
    if target_delta is not None and not no_tight:
        tight, tight_warnings = tight_given or tight_epsilon(phases, target_delta)
        warnings += tight_warnings
    return result, tight, warnings


# The scalar result keys a sweep row carries (and `curve`, the row's RDP curve, after them).
_ROW_RESULT_KEYS = ("epsilon", "delta", "order", "conversion", "tight_epsilon")


def _curve(result) -> list[dict[str, float]]:
    """The composed RDP curve as JSON: one {"order", "rdp"} object an order, ascending."""
    return [{"order": order, "rdp": value} for order, value in zip(result.orders, result.rdp)]


def _rdp_sweep(request: Request[RdpInputs], run: PhaseFlags, grid: Numbers | None, conversion: ConversionChoice,
               no_tight: bool) -> Answer:
    """One row per combination of the swept options (row shape: see dpcalc.cli.sweeps).

    A row holds the swept inputs, the run (p, sigma or scale, T), the scalar result keys
    (epsilon, delta, order, conversion, tight_epsilon) and the row's RDP curve (`curve`). Every row is
    parsed before any is computed, so that a bad value fails at once. The per-step RDP curve
    of each distinct mechanism is computed once and scaled by T (RDP composes additively).
    """
    from dpcalc.cli.sweeps import Row, SweepOutput, phase_row, phase_sweep, sweep_columns, sweep_report

    runs = [(row, _run_phases(run, row.run)) for row in request.rows]
    per_step_cache: dict = {}
    rows = []
    # the tight figures of rows that differ only in T share one PLD composition
    tights = [None] * len(runs) if no_tight else tight_epsilons([(phases, one(row.delta)) for row, phases in runs])
    for (row, phases), tight_given in zip(runs, tights):
        target_delta = one(row.delta)
        result, tight, warnings = _evaluate(
            phases, grid, target_delta, one(row.eps), conversion, no_tight, per_step_cache, tight_given
        )
        results = {key: tight if key == "tight_epsilon" else getattr(result, key) for key in _ROW_RESULT_KEYS}
        results["curve"] = _curve(result)
        gate = _gate(result, tight, target_delta is not None)
        warnings += large_delta_warnings(one(row.run.n), target_delta)
        rows.append(Row(phase_row(request.swept, fields_of(row), phases[0], results), warnings, **gate))
    layout = phase_sweep(request, runs[0][1][0], rows)
    inputs = layout.inputs
    inputs.update({
        "orders": "default" if grid is None else list(grid),
        "conversion": conversion.value,
        "max_eps": request.max_epsilon,
        "max_delta": request.max_delta,
        "no_tight": no_tight,
    })
    # The table shows what varies: the swept inputs, the run quantities they change (T for
    # --epochs), epsilon (or delta), the best order and the tight epsilon; --json has every key.
    shown = [key for key in (layout.y_key, "order") if key not in request.swept]
    if any(row.values["tight_epsilon"] is not None for row in rows):
        shown.append("tight_epsilon")
    report = sweep_report(
        SweepOutput(
            command="rdp",
            inputs=inputs,
            swept_keys=list(request.swept),
            columns=sweep_columns([row.values for row in rows], request.swept, layout.run_keys, shown,
                                  upward={layout.y_key: True, "tight_epsilon": True}),
            title=f"Renyi DP sweep{': ' + layout.fixed if layout.fixed else ''}"
            + (", classic conversion" if conversion is ConversionChoice.classic else ""),
            max_epsilon=request.max_epsilon,
            max_delta=request.max_delta,
        ),
        rows,
    )
    if request.csv_output:  # one row per order of each combination (dpcalc.cli.rdp_csv)
        from dpcalc.cli.rdp_csv import sweep_rows

        targets = [(one(row.delta), one(row.eps)) for row in request.rows]
        report = record.replace(report, csv_rows=sweep_rows([row.values for row in rows], targets, conversion.value))
    return request.answer(report)


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
        title=phases_title("Renyi DP", result.phases, laplace_p=False),
    )


def _curve_table(result) -> Table:
    """The curve at its first and last order and three orders either side of the optimum; a
    "..." row stands where orders are skipped and says how many (--json lists them all)."""
    orders = result.orders
    best = orders.index(result.order)
    shown = sorted({0, len(orders) - 1, *range(max(0, best - 3), min(len(orders), best + 4))})
    rows = []
    for previous, position in zip([-1, *shown], shown):
        skipped = position - previous - 1
        if skipped > 0:
            rows.append(("...", "", f"{skipped} order{'s' if skipped > 1 else ''} skipped"))
        marker = "<- optimum" if position == best else ""
        rows.append((format_number(orders[position]), format_number(result.rdp[position]), marker))
    return Table(
        columns=("order", "composed RDP", ""),
        rows=rows,
        title="RDP curve (all orders: --json)",
        justify=("left", "right", "left"),
    )
