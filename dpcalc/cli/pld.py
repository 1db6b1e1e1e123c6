"""`dpcalc pld`: tight privacy accounting with a certified interval (privacy loss distributions)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

from dpcalc.cli import progress
from dpcalc.cli.declare import App, Group
from dpcalc.cli.errors import InputError
from dpcalc.cli.like import Like, like_figure, refuse_sweep, with_like_row
from dpcalc.cli.options import (
    GIVEN_DELTA,
    GIVEN_EPSILON,
    Delta,
    Epsilon,
    Gates,
    MaxBatchSize,
    SweepOutputs,
    Swept,
    one,
)
from dpcalc.cli.output import Answer, Report, Table, format_lower, format_number, format_upper
from dpcalc.cli.phases import (
    Accuracy,
    RunNumbers,
    RunOptions,
    phase_inputs,
    phases_table,
    phases_title,
)
from dpcalc.cli.request import Request, fields_of, start
from dpcalc.cli.tight import paused_gc
from dpcalc.core.as_poisson import as_poisson as _as_poisson
from dpcalc.core.as_poisson import batch_scheme, compare_with_poisson
from dpcalc.core.limits import DEFAULT_ACCURACY
from dpcalc.core.record import Record, Value
from dpcalc.core.validation import large_delta_warnings

if TYPE_CHECKING:
    from dpcalc.cli.caps import Cap
    from dpcalc.core.phases import Phase
    from dpcalc.core.pld import PLDResult

# One run of a sweep: its row of inputs and its phases.
_Run = tuple["PldInputs", list["Phase"]]

app = App()

HELP = f"""Tight (epsilon, delta) of a run with a certified interval: privacy loss distributions by FFT.

Each phase is a Poisson-subsampled Gaussian (--p, --sigma, --T) or Laplace mechanism
(--mechanism laplace --scale B, optionally --p); under add/remove adjacency both orders of
the dominating pair are composed (Koskela et al. 2020; Gopi et al. 2021). The loss is
discretised pessimistically ("connect the dots", Doroshenko et al. 2022) for an upper bound
and by merging outcomes for a lower bound, composed by FFT with repeated squaring, and the
floating-point error of every step is bounded and added: epsilon is the certified upper
bound, the number to quote; epsilon_lower bounds it from below. --accuracy sets the target
relative width of the interval [default: {DEFAULT_ACCURACY:g}]; the grid is refined until it
is met. With --eps the same holds for delta.

--neighbours add-remove|replace-one|zero-out and --sampling poisson|uniform|shuffle|allocation
apply to every phase: replace-one uses the tight pair of Lebeda et al. 2024; fixed-size batches
(uniform) under add-remove the Poisson pair at sensitivity 2, which is attained, and under
replace-one or zero-out the two-part pair above (Zhu, Dong, Wang 2022) and an attained pair
below; shuffled batches need zero-out or replace-one (docs/sampling.md).

\b
Examples:
  dpcalc pld --p 0.004 --sigma 1.1 --T 10000
  dpcalc pld --n 60000 --batch-size 256 --epochs 60 --sigma 1.1 --json
  dpcalc pld --phase p=0.01,sigma=2,T=500 --phase p=0.01,sigma=0.9,T=1800
  dpcalc pld --mechanism laplace --scale 10 --T 50 --delta 1e-6
  dpcalc pld --p 0.004 --sigma 1.1 --T 10000 --eps 2
  dpcalc pld --p 0.004 --sigma 1.1 --T 10000 --neighbours replace-one
  dpcalc pld --p 0.004 --sigma 1.1 --T 10000 --accuracy 1e-4 --max-eps 2
  dpcalc pld --n 60000 --batch-size 256 --epochs 10:60:10 --sigma 0.8,1.1
  dpcalc pld --p 0.004 --sigma 1.1 --T 10000 --plot pld.png

--plot FILE (.png, .svg or .pdf, needs matplotlib) and --chart draw the certified trade-off curve
(type II against type I error, implied by the certified delta(eps): Dong, Roth, Su 2022,
Prop. 2.12) with the mu-GDP curve of Gaussian runs and the no-privacy diagonal, and the
privacy profile delta(eps) on a log scale; for a sweep, epsilon against the swept quantity.

Sweeps: any numeric option may be a list (0.8,1.1) or a range start:stop:step (10:60:10);
one row is printed per combination, in the order given, and --max-eps checks every row.
Not with --phase.
"""


class PldInputs(Record):
    """What pld computes from: the run's numbers, the accuracy and the target delta or epsilon."""

    run: RunNumbers
    accuracy: float | Swept | None
    delta: float | Swept | None
    eps: float | Swept | None

    @property
    def width(self) -> float:
        """The target relative width of the certified interval (--accuracy, or its default)."""
        return DEFAULT_ACCURACY if self.accuracy is None else one(self.accuracy)


class Accounted(Value):
    """One run through the accountant: its result, the run accounted as Poisson sampling (None when
    it is Poisson already), and the cap when its batches are capped."""

    result: PLDResult
    as_poisson: PLDResult | None
    cap: Cap | None


@app.command("pld", help=HELP)
def pld(
    run: Annotated[RunOptions, Group()],
    max_batch_size: MaxBatchSize = None,
    accuracy: Accuracy = None,
    delta: Delta = None,
    eps: Epsilon = None,
    gates: Annotated[Gates, Group()] = Gates(),
    outputs: Annotated[SweepOutputs, Group()] = SweepOutputs(),
    like: Like = None,
) -> Answer:
    if max_batch_size is not None:
        from dpcalc.cli.caps import check_cap

        check_cap(run, outputs)
    request = start(PldInputs(run.numbers(), accuracy, delta, eps), outputs=outputs, gates=gates, phase=run.phase)
    refuse_sweep(like, request.is_sweep)
    if request.is_sweep:
        if max_batch_size is not None:
            raise InputError("--max-batch-size takes one run: give the swept options one value each",
                             option="--max-batch-size")
        with paused_gc():
            return _pld_sweep(request, run)
    row = request.rows[0]
    phases = run.phases(row.run)
    target_delta, target_epsilon = one(row.delta), one(row.eps)
    framework = like_figure(like, phases, target_delta, "pld")
    progress.describe(f"PLD accountant, epsilon at delta {format_number(target_delta)}" if target_delta is not None
                      else f"PLD accountant, delta at epsilon {format_number(target_epsilon)}")
    with paused_gc():
        accounted = _account_run(phases, row, max_batch_size)
    return request.answer(_report(request, row, phases, accounted, max_batch_size, framework))


def _account_run(phases: list[Phase], row: PldInputs, max_batch_size: int | None) -> Accounted:
    """The run's result, as Poisson sampling too, and with the cap when its batches are capped."""
    target_delta, target_epsilon, width = one(row.delta), one(row.eps), row.width
    if max_batch_size is None:
        return Accounted(account(phases, target_delta, target_epsilon, width),
                         _as_poisson(phases, target_delta, target_epsilon, width), None)
    from dpcalc.cli.caps import capped_run

    n = one(row.run.n)
    assert n is not None, "a cap needs the dataset size (check_cap)"
    return Accounted(*capped_run(phases, n, max_batch_size, target_delta, target_epsilon, width))


def _report(request: Request[PldInputs], row: PldInputs, phases: list[Phase], accounted: Accounted,
            max_batch_size: int | None, framework: dict[str, Any] | None) -> Report:
    """The report of one run (`framework`: result.like, --like's figure, or None)."""
    target_delta, target_epsilon = one(row.delta), one(row.eps)
    result, as_poisson, cap = accounted.result, accounted.as_poisson, accounted.cap
    warnings = list(result.warnings) + large_delta_warnings(one(row.run.n), target_delta)
    comparison = (None if cap is not None or as_poisson is None
                  else compare_with_poisson(result, as_poisson, target_delta is not None))
    if comparison is not None and comparison.under_reports:
        warnings.append(
            f"accounted as Poisson sampling this run's {comparison.quantity} would be "
            f"{format_upper(comparison.poisson_upper)}, below the {comparison.scheme} run's certified "
            f"lower bound {format_lower(comparison.run_lower)}: reporting the Poisson figure for "
            f"{comparison.scheme} batches provably under-reports here"
            + (" (Chua et al. 2024)." if comparison.scheme == "shuffled" else "."))
    panels = None
    if request.plot is not None or request.chart:
        # drawn before the report: the profile's own warnings belong beside the result's
        from dpcalc.cli.pld_figures import pld_panels

        panels, figure_warnings = pld_panels(phases, target_delta, target_epsilon)
        warnings += [warning for warning in figure_warnings if warning not in warnings]
    inputs = {
        "phases": [phase_inputs(item) for item in phases],
        "noise_std": row.run.noise_std,
        "sensitivity": row.run.sensitivity,
        "delta": target_delta,
        "eps": target_epsilon,
        "accuracy": row.width,
        "max_batch_size": max_batch_size,
        "max_eps": request.max_epsilon,
        "max_delta": request.max_delta,
    }
    return Report(
        command="pld",
        inputs=inputs,
        result={**_result_keys(result), "as_poisson": None if as_poisson is None else _bounds_keys(as_poisson),
                "truncation": None if cap is None else cap.keys(), "like": framework},
        tables=[with_like_row(_summary_table(result, target_delta is not None, as_poisson, cap), framework)]
        + ([phases_table(phases)] if len(phases) > 1 else []),
        warnings=warnings,
        **gates(result, target_delta is not None),
        figures=None if panels is None else (lambda: panels),
    )


def gate_basis(result: PLDResult) -> str:
    """What the certified upper bound of a PLD result rests on (the basis --max-eps and
    --max-delta name)."""
    if result.exact:
        laplace = result.phases[0].mechanism == "laplace"
        return f"certified upper bound (exact {'Laplace composition' if laplace else 'mu-GDP'})"
    if result.grid_size == 0:
        return "certified upper bound (closed forms)"
    return "PLD certified upper bound"


def gates(result: PLDResult, epsilon_solved: bool) -> dict[str, Any]:
    """What the gates compare (Report's and Row's epsilon, basis, no_gate, delta, delta_basis,
    no_delta_gate): --max-eps the certified upper epsilon at --delta, --max-delta the certified
    upper delta at --eps; neither the figure given (options.check_gates)."""
    if epsilon_solved:
        return {"epsilon": result.epsilon_upper, "basis": gate_basis(result), "no_gate": None,
                "delta": None, "delta_basis": None, "no_delta_gate": GIVEN_DELTA}
    return {"epsilon": None, "basis": None, "no_gate": GIVEN_EPSILON,
            "delta": result.delta_upper, "delta_basis": gate_basis(result), "no_delta_gate": None}


def account(phases: Sequence[Phase], target_delta: float | None, target_epsilon: float | None,
            accuracy: float) -> PLDResult:
    """One run through the PLD accountant (core.pld.PLDResult): epsilon at delta, or delta at epsilon.

    Sweeps call this for the rows that cannot share a composition (see `_account_rows`).
    """
    from dpcalc.core import pld as core

    if target_delta is not None:
        return core.tight_epsilon(phases, target_delta, accuracy=accuracy)
    assert target_epsilon is not None, "exactly one of --delta and --eps (checked by the request)"
    return core.tight_delta(phases, target_epsilon, accuracy=accuracy)


def _account_rows(runs: Sequence[_Run]) -> list[PLDResult]:
    """The results of a sweep's runs (row, phases), in order: runs that differ only in T share one
    composition (`core.accountants.shared_over_steps`); the others are accounted one by one."""
    from dpcalc.core.accountants import shared_over_steps

    shared = shared_over_steps([(phases, one(row.delta), row.width) for row, phases in runs])
    return [
        shared[index] if index in shared else account(phases, one(row.delta), one(row.eps), row.width)
        for index, (row, phases) in enumerate(runs)
    ]


def _bounds_keys(result: PLDResult) -> dict[str, Any]:
    return {
        "epsilon": result.epsilon,
        "epsilon_lower": result.epsilon_lower,
        "epsilon_upper": result.epsilon_upper,
        "delta": result.delta,
        "delta_lower": result.delta_lower,
        "delta_upper": result.delta_upper,
    }


def _result_keys(result: PLDResult) -> dict[str, Any]:
    from dpcalc.core.pld import analysis_of

    return {
        **_bounds_keys(result),
        "accuracy": result.accuracy,
        "grid": {"step": result.grid_step, "size": result.grid_size},
        "binding": result.binding,
        "analysis": analysis_of(result.phases),
    }


def _pld_sweep(request: Request[PldInputs], run: RunOptions) -> Answer:
    """One row per combination of the swept options (row shape: see dpcalc.cli.sweeps).

    A row holds the swept inputs, the run (p, sigma or scale, T) and the result keys of a
    single run (epsilon, epsilon_lower, epsilon_upper, delta, delta_lower, delta_upper,
    accuracy, grid, binding). Every row is parsed before any is computed.
    """
    from dpcalc.cli.sweeps import (
        Row,
        SweepOutput,
        phase_row,
        phase_sweep,
        sweep_caption,
        sweep_columns,
        sweep_report,
    )

    runs = [(row, run.phases(row.run)) for row in request.rows]
    rows = []
    progress.describe(f"PLD accountant, {len(runs)} runs of a sweep")
    for (row, phases), result in zip(runs, _account_rows(runs)):
        target_delta = one(row.delta)
        as_poisson = _as_poisson(phases, target_delta, one(row.eps), row.width)
        keys = {**_result_keys(result), "as_poisson": None if as_poisson is None else _bounds_keys(as_poisson),
                "truncation": None}
        rows.append(Row(phase_row(request.swept, fields_of(row), phases[0], keys),
                        [*result.warnings, *large_delta_warnings(one(row.run.n), target_delta)],
                        **gates(result, target_delta is not None)))
    layout = phase_sweep(request, runs[0][1][0], rows)
    inputs = layout.inputs
    if inputs["accuracy"] is None:
        inputs["accuracy"] = DEFAULT_ACCURACY
    inputs["max_eps"] = request.max_epsilon
    inputs["max_delta"] = request.max_delta
    from dpcalc.cli.pld_figures import sweep_figure

    # The table shows what varies: the swept inputs, the run quantities they change (T for
    # --epochs) and the certified interval of epsilon (or delta); --json has every key.
    y_key = layout.y_key
    shown = [key for key in (y_key, f"{y_key}_lower") if key not in request.swept]
    table_rows = [row.values for row in rows]
    x_key = request.x_key
    report = sweep_report(
        SweepOutput(
            command="pld",
            inputs=inputs,
            swept_keys=list(request.swept),
            columns=sweep_columns(table_rows, request.swept, layout.run_keys, shown,
                                  headers={y_key: f"{y_key} (certified)"},
                                  upward={y_key: True, f"{y_key}_lower": False}),
            title=f"Tight accounting (PLD) sweep{': ' + layout.fixed if layout.fixed else ''}",
            max_epsilon=request.max_epsilon,
            max_delta=request.max_delta,
            figures=lambda: sweep_figure(table_rows, x_key, y_key, request.series_keys,
                                          sweep_caption(inputs, _CAPTION_KEYS), request.max_epsilon),
        ),
        rows,
    )
    return request.answer(report)


# The inputs a sweep's figure names when every row shares them (input key, shown name).
_CAPTION_KEYS = (("p", "p"), ("sigma", "sigma"), ("scale", "scale"), ("T", "T"), ("delta", "delta"), ("eps", "epsilon"))


_BINDING_NOTES = {
    "remove": "remove or add adjacency",
    "add": "remove or add adjacency",
    "symmetric": "replace-one: the pair is its own reverse",
}
_SHUFFLE_BINDING = "shuffled batches: an epoch's unsubsampled Gaussian, its own reverse"


def _summary_table(result: PLDResult, epsilon_solved: bool, as_poisson: PLDResult | None = None,
                   truncation: Cap | None = None) -> Table:
    from dpcalc.cli.caps import truncation_rows
    from dpcalc.core.pld import analysis_of

    if epsilon_solved:
        rows = [
            ("epsilon", format_upper(result.epsilon_upper), "certified upper bound (quote this)"),
            ("epsilon lower bound", format_lower(result.epsilon_lower), "the true epsilon is at least this"),
            ("delta", format_number(result.delta), "given"),
        ]
        if truncation is not None and as_poisson is not None:
            rows += truncation_rows(truncation, as_poisson, epsilon_solved)
        elif as_poisson is not None:
            rows.append(("epsilon as if Poisson", format_upper(as_poisson.epsilon_upper),
                         f"what Poisson accounting reports; not a bound for {batch_scheme(result.phases)} batches"))
    else:
        rows = [
            ("delta", format_upper(result.delta_upper), "certified upper bound (quote this)"),
            ("delta lower bound", format_lower(result.delta_lower), "the true delta is at least this"),
            ("epsilon", format_number(result.epsilon), "given"),
        ]
        if truncation is not None and as_poisson is not None:
            rows += truncation_rows(truncation, as_poisson, epsilon_solved)
        elif as_poisson is not None:
            rows.append(("delta as if Poisson", format_upper(as_poisson.delta_upper),
                         f"what Poisson accounting reports; not a bound for {batch_scheme(result.phases)} batches"))
    rows.append(("analysis", "", analysis_of(result.phases)))
    if result.exact:
        rows.append(("method", "exact", "closed form; the interval is its floating-point error, no grid"))
    elif result.grid_size == 0:
        # outside the grid's range (or where it failed) the bounds are closed forms: no grid
        # and no binding direction to report
        rows.append(("method", "closed forms", "certified closed-form bounds; no grid (see the warning)"))
    else:
        rows += [
            ("binding direction", result.binding,
             _SHUFFLE_BINDING if batch_scheme(result.phases) == "shuffled" else _BINDING_NOTES.get(result.binding, "")),
            ("final grid step", format_number(result.grid_step), f"largest grid {result.grid_size} bins"),
        ]
    return Table(columns=("quantity", "value", "note"), rows=rows, title=phases_title("Tight accounting (PLD)", list(result.phases)))


