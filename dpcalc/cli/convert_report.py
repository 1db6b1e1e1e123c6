"""How `dpcalc convert` shows a conversion: its JSON inputs, its table, its gates and its figure.

The command (dpcalc.cli.convert) reads the options into a `ConvertRequest`; the core
(dpcalc.core.conversions) turns the request's source and target into a `Conversion`; this module
renders the two as the one Report of dpcalc.cli.output.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from dpcalc.cli.options import GIVEN_DELTA, GIVEN_EPSILON
from dpcalc.cli.output import Report, Table, format_bound, format_number
from dpcalc.core.record import Record

if TYPE_CHECKING:
    from pathlib import Path

    from dpcalc.core.conversions import Conversion, Guarantee, Target


class ConvertInputs(Record):
    """The JSON `inputs` of `convert`: each option as the conversion read it (None when it plays no
    part), in the documented order (README, docs/cli.md)."""

    source: str
    target: str
    group: int
    max_eps: float | None
    max_delta: float | None
    eps: float | None = None
    delta: float | None = None
    mu: float | None = None
    rho: float | None = None
    order: float | None = None
    rdp_eps: float | None = None
    sigma: float | None = None
    noise_std: float | None = None
    scale: float | None = None
    sensitivity: float | None = None
    orders: tuple[float, ...] | None = None
    points: int | None = None

    def document(self) -> dict[str, Any]:
        return {
            "from": self.source, "to": self.target, "eps": self.eps, "delta": self.delta, "mu": self.mu,
            "rho": self.rho, "order": self.order, "rdp_eps": self.rdp_eps, "sigma": self.sigma,
            "noise_std": self.noise_std, "scale": self.scale,
            "sensitivity": self.sensitivity, "orders": None if self.orders is None else list(self.orders),
            "points": self.points, "group": self.group, "max_eps": self.max_eps, "max_delta": self.max_delta,
        }


class ConvertRequest(Record):
    """What `convert` was asked: the source guarantee (after parsing, before group privacy), the
    target with its parameters, the group size, and how the answer is printed."""

    source: Guarantee
    target: Target
    group: int
    inputs: ConvertInputs
    json_output: bool = False
    plot: Path | None = None
    chart: bool = False

    @property
    def max_eps(self) -> float | None:
        return self.inputs.max_eps

    @property
    def max_delta(self) -> float | None:
        return self.inputs.max_delta


TARGET_TITLES = {
    "dp": "(epsilon, delta)-DP",
    "gdp": "mu-GDP",
    "zcdp": "rho-zCDP",
    "rdp": "RDP curve",
    "gaussian": "Gaussian noise",
    "laplace": "Laplace noise",
    "tradeoff": "trade-off curve",
}

# Computed values that are upper bounds (privacy spent, or noise to add): printed rounded up.
_UPWARD = frozenset({"epsilon", "delta", "epsilon_bs16", "delta_bs16", "epsilon_classic", "delta_classic",
                     "noise_std", "noise_std_classic", "scale", "rho", "mu"})

_NOTES = {
    "epsilon_bs16": "Bun-Steinke bound (simpler, looser)",
    "delta_bs16": "Bun-Steinke bound (simpler, looser)",
    "epsilon_classic": "classic conversion (Mironov Prop. 3)",
    "delta_classic": "classic conversion (Mironov Prop. 3)",
    "order": "Renyi order that achieves it",
    "noise_std_classic": "sqrt(2 ln(1.25/delta)) sensitivity/eps",
    "classic_valid": "the classic formula needs 0 < eps < 1",
    "scale": "sensitivity / eps",
}
_SCALE_NOTE_DELTA = "smallest scale that meets (eps, delta): sensitivity / (eps - 2 log(1 - delta))"


def report(request: ConvertRequest, result: Conversion) -> Report:
    """The Report of `result`, the conversion `request` asked for."""
    target = request.target.notion
    return Report(
        command="convert",
        inputs=request.inputs.document(),
        result={**result.values, "theorem": result.theorem},
        tables=tables(result),
        warnings=list(result.warnings),
        **_gates(result, request.source.notion, target),
        figures=(lambda: tradeoff_panels(result)) if target == "tradeoff" else None,
    )


def _gates(result: Conversion, source: str, target: str) -> dict[str, Any]:
    """What the gates compare: --max-eps the converted epsilon, --max-delta the delta at a target
    --eps (both sound bounds: see the theorem); never the figure given (options.check_gates)."""
    basis = f"{source} -> dp conversion (a sound bound; see theorem)"
    if target != "dp":
        why = f"--to {target} yields no epsilon to compare"
        return {"no_gate": f"--max-eps applies with --to dp: {why}", "no_delta_gate": f"--max-delta applies with --to dp: {why}"}
    if result.target.epsilon is not None:  # delta at the given epsilon
        return {"no_gate": GIVEN_EPSILON, "delta": result.values["delta"], "delta_basis": basis}
    return {"epsilon": result.epsilon, "basis": basis, "no_delta_gate": GIVEN_DELTA}


def describe_source(source: Guarantee, group: int) -> str:
    """The source guarantee in words, as the table's title and the figure's caption name it."""
    notion = source.notion
    number = format_number
    if notion == "dp":
        text = f"({number(source.epsilon)}, {number(source.delta)})-DP"
    elif notion == "gdp":
        text = f"{number(source.mu)}-GDP"
    elif notion == "zcdp":
        text = f"{number(source.rho)}-zCDP"
    elif notion == "rdp":
        text = f"RDP epsilon {number(source.rdp)} at order {number(source.order)}"
    elif notion == "gaussian":
        text = f"Gaussian noise std {number(source.noise_std)}, L2 sensitivity {number(source.sensitivity)}"
    else:
        text = f"Laplace noise scale = {number(source.scale)}, L1 sensitivity {number(source.sensitivity)}"
    if group > 1:
        text += f", for groups of {group}"
    return text


def _note(result: Conversion, key: str) -> str:
    """The note of one row of the table: what the value is, or which theorem gave it."""
    target, values = result.target, result.values
    if key == "delta" and target.notion == "dp" and target.delta is not None:
        return "given"
    if key == "epsilon" and target.notion == "dp" and target.epsilon is not None:
        return "given"
    if key in ("epsilon", "delta") and ("epsilon_bs16" in values or "delta_bs16" in values):
        return "optimal over the Renyi order for the RDP-to-DP conversion of Canonne, Kamath, Steinke 2020"
    if key in ("epsilon", "delta") and ("epsilon_classic" in values or "delta_classic" in values):
        return "improved conversion"
    if key == "scale" and result.grouped.notion == "dp" and result.grouped.delta > 0.0:  # type: ignore[operator]
        return _SCALE_NOTE_DELTA
    if key == "noise_std" and "noise_std_classic" in values:
        return "analytic: the smallest noise std that meets (eps, delta)"
    return _NOTES.get(key, "")


def tables(result: Conversion) -> list[Table]:
    """A table of the scalar values and the theorem used, then the curve, if any."""
    title = f"{describe_source(result.source, result.group)} -> {TARGET_TITLES[result.target.notion]}"
    rows = []
    for key, value in result.values.items():
        if key == "curve":
            rows.append(("RDP curve", f"{len(value)} orders", "below"))
            continue
        if key == "tradeoff":
            rows.append(("trade-off curve", f"{len(value)} points", "below"))
            continue
        note = _note(result, key)
        rows.append((key, format_number(value) if note == "given" or not isinstance(value, float)
                     or key not in _UPWARD else format_bound(value, True), note))
    rows.append(("theorem", "", result.theorem))
    shown = [Table(columns=("quantity", "value", "note"), rows=rows, title=title, justify=("left", "right", "left"))]
    if "curve" in result.values:
        shown.append(Table(
            columns=("order", "RDP epsilon"),
            rows=[(format_number(point["order"]), format_bound(point["rdp"], True)) for point in result.values["curve"]],
        ))
    if "tradeoff" in result.values:
        shown.append(Table(
            columns=("alpha (type I)", "beta (type II)"),
            # beta is a lower bound on the type II error of any test: rounded down
            rows=[(format_number(point["alpha"]), format_bound(point["beta"], False))
                  for point in result.values["tradeoff"]],
        ))
    return shown


# The figure's type-I errors: an even grid for the body of the curve and a geometric one towards
# alpha = 0, where a strong guarantee's curve falls fastest (G_mu'(0) is infinite). Independent
# of --points, which only sets the printed table.
_PLOT_EVEN_POINTS = 400
_PLOT_SMALL_ALPHAS = tuple(10.0 ** (exponent / 4) for exponent in range(-32, -9))  # 1e-8 .. 10^-2.5


def _plot_alphas(kinks: tuple[float, ...] = ()) -> list[float]:
    """Sorted type-I errors in [0, 1] for a figure, with `kinks` (corners of a curve) included exactly."""
    grid = {i / _PLOT_EVEN_POINTS for i in range(_PLOT_EVEN_POINTS + 1)}
    grid.update(_PLOT_SMALL_ALPHAS)
    grid.update(alpha for alpha in kinks if 0.0 <= alpha <= 1.0)
    return sorted(grid)


def tradeoff_panels(result: Conversion) -> list[Any]:
    """The converted guarantee's trade-off curve beside the no-privacy diagonal 1 - alpha.

    GDP and the Gaussian mechanism draw G_mu (labelled with mu); (eps, delta)-DP draws f_eps,delta,
    and pure eps-DP adds, dashed, the weaker mu-GDP curve it implies (pure_dp_to_mu).
    Group privacy is already applied: `result.grouped` is the guarantee drawn.
    """
    from dpcalc.cli.figures import Series, tradeoff_panel
    from dpcalc.core import gdp
    from dpcalc.core.conversions import dp_tradeoff, pure_dp_to_mu

    grouped = result.grouped
    number = format_number
    group = f", groups of {result.group}" if result.group > 1 else ""
    series = []
    if grouped.notion == "dp":
        epsilon, delta = float(grouped.epsilon), float(grouped.delta)  # type: ignore[arg-type]
        remaining = 1.0 - delta
        corner = remaining / (1.0 + math.exp(epsilon)) if epsilon < 700.0 else 0.0
        alphas = _plot_alphas((corner, remaining))
        name = f"({number(epsilon)}, {number(delta)})-DP"
        title = f"Trade-off curve of {name}{group}"
        series.append(Series(name, alphas, [dp_tradeoff(alpha, epsilon, delta) for alpha in alphas], accountant="dp"))
        if delta == 0.0 and 0.0 < epsilon < math.inf:
            mu = pure_dp_to_mu(epsilon)
            series.append(Series(f"implied {number(mu)}-GDP (weaker)", alphas,
                                 [gdp.tradeoff(alpha, mu) for alpha in alphas], dashed=True, accountant="gdp"))
    else:
        mu = float(grouped.mu if grouped.notion == "gdp" else grouped.sensitivity / grouped.noise_std)  # type: ignore[operator,arg-type]
        alphas = _plot_alphas()
        title = f"Trade-off curve, mu = {number(mu)}{group}"
        label = f"{number(mu)}-GDP"
        if grouped.notion == "gaussian":
            label = f"Gaussian mechanism: {label} (mu = sensitivity/noise std)"
        series.append(Series(label, alphas, [gdp.tradeoff(alpha, mu) for alpha in alphas], accountant="gdp"))
    series.append(Series("no privacy lost (1 - alpha)", [0.0, 1.0], [1.0, 0.0], dashed=True, accountant="none"))
    # the title names the guarantee drawn; a mechanism's noise, which gives it, goes beneath
    caption = describe_source(result.source, result.group) if grouped.notion == "gaussian" else ""
    return [tradeoff_panel(title, series, caption=caption)]
