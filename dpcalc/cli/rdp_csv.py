"""`rdp --csv`: one row per order of the RDP curve (docs/json.md, "CSV").

Each row holds the run's inputs (a phase's p, sigma or scale, T, ...; several phases as
phase1.p, phase2.p, ...; a sweep's swept inputs and the run quantities they change), the
target delta (or --eps) and the conversion, then `order`, `rdp` (the composed RDP at that
order) and what that order alone gives: `epsilon` at the target delta, or `delta` at --eps (a
sound bound each; the command's own figure is their minimum). Loaded only with --csv.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dpcalc.cli.phases import phase_inputs
from dpcalc.core.rdp.accountant import delta_by_order, epsilon_by_order

# A sweep row's result keys, not inputs: the per-order rows carry their own figures.
_RESULTS = ("epsilon", "delta", "order", "conversion", "tight_epsilon", "curve", "within_budget")


def run_inputs(phases: Sequence[Any]) -> dict[str, Any]:
    """The inputs of a run of phases: one phase's keys, or each phase's under phase1, phase2, ..."""
    if len(phases) == 1:
        return phase_inputs(phases[0])
    return {f"phase{index}": phase_inputs(phase) for index, phase in enumerate(phases, start=1)}


def order_rows(run: dict[str, Any], curve: Sequence[dict[str, float]], *, delta: float | None,
               epsilon: float | None, conversion: str) -> list[dict[str, Any]]:
    """One row per {"order", "rdp"} of `curve`: the run, the target, `order`, `rdp` and the
    epsilon at `delta` (or the delta at `epsilon`) of that order."""
    orders = [point["order"] for point in curve]
    values = [point["rdp"] for point in curve]
    base = {**run, **({"delta": delta} if delta is not None else {"eps": epsilon}), "conversion": conversion}
    if delta is not None:
        solved = "epsilon", epsilon_by_order(orders, values, delta, conversion)  # type: ignore[arg-type]
    else:
        assert epsilon is not None, "a target delta or epsilon"
        solved = "delta", delta_by_order(orders, values, epsilon, conversion)  # type: ignore[arg-type]
    name, figures = solved
    return [{**base, "order": order, "rdp": value, name: figure}
            for order, value, figure in zip(orders, values, figures)]


def sweep_rows(rows: Sequence[dict[str, Any]], targets: Sequence[tuple[float | None, float | None]],
               conversion: str) -> list[dict[str, Any]]:
    """The per-order rows of each row of a sweep (its `values`), with that row's (delta, eps)."""
    table = []
    for values, (delta, epsilon) in zip(rows, targets):
        run = {key: value for key, value in values.items() if key not in _RESULTS}
        table += order_rows(run, values["curve"], delta=delta, epsilon=epsilon, conversion=conversion)
    return table
