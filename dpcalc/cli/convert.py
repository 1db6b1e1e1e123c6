"""`dpcalc convert`: move between privacy notions, calibrate a single mechanism, apply group privacy."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any

from dpcalc.cli.declare import App, Exit, Option
from dpcalc.cli.options import (
    DEFAULT_DELTA,
    GIVEN_DELTA,
    GIVEN_EPSILON,
    Chart,
    InputError,
    Json,
    MaxDelta,
    MaxEpsilon,
    Numbers,
    Parsed,
    PlotFile,
    check_gates,
    conflict,
    number,
    order_items,
    parse_real,
)
from dpcalc.cli.output import Report, Table, emit, format_bound, format_number
from dpcalc.core.limits import (
    DEFAULT_CONVERT_ORDERS,
    DEFAULT_TRADEOFF_POINTS,
    SOURCE_NOTIONS,
    TARGET_NOTIONS,
    TRADEOFF_POINTS,
)
from dpcalc.core.validation import NON_NEGATIVE, OPEN_UNIT, POSITIVE, POSITIVE_INTEGER, Interval

app = App()

SOURCES = SOURCE_NOTIONS
TARGETS = TARGET_NOTIONS
# Built from the tuples above so that the two cannot drift; mypy reads only literal members.
SourceNotion = Enum("SourceNotion", {notion: notion for notion in SOURCES}, type=str)  # type: ignore[misc]
TargetNotion = Enum("TargetNotion", {notion: notion for notion in TARGETS}, type=str)  # type: ignore[misc]
DEFAULT_ORDERS_TEXT = ",".join(f"{order:g}" for order in DEFAULT_CONVERT_ORDERS)
DEFAULT_POINTS = DEFAULT_TRADEOFF_POINTS

HELP = f"""Convert a privacy guarantee between notions, calibrate a mechanism, or apply group privacy.

--from NOTION with its parameters, --to NOTION with the target's parameters:

\b
  dp        --eps (>= 0), --delta (in [0, 1), default 0 as a source; as a target --delta
            gives epsilon [default {DEFAULT_DELTA:g}] and --eps gives delta)
  gdp       --mu (> 0)
  zcdp      --rho (> 0)
  rdp       source: one point --order (> 1) and --rdp-eps (>= 0);
            target: the RDP curve at --orders [default {DEFAULT_ORDERS_TEXT}]
  gaussian  noise std --sigma (> 0), L2 --sensitivity [default 1]
  laplace   scale --scale (> 0), L1 --sensitivity [default 1]; --to dp gives its pure-DP
            epsilon, or with --delta (or --eps) the tight epsilon (delta) of its privacy profile
  tradeoff  (target only) the trade-off curve at --points evenly spaced alphas [default {DEFAULT_POINTS}];
            --plot FILE (.png, .svg or .pdf) and --chart draw it against the no-privacy diagonal

--group k applies group privacy for k individuals to the source first. Every result names the
theorem it used. A conversion that does not exist (e.g. approximate DP to zCDP) is refused with
the reason and what exists instead.

\b
Examples:
  dpcalc convert --from dp --eps 1 --delta 1e-5 --to gaussian
  dpcalc convert --from gdp --mu 0.5 --to dp --delta 1e-6
  dpcalc convert --from zcdp --rho 0.5 --to dp --json
  dpcalc convert --from gaussian --sigma 4 --to rdp --orders 2,8,32
  dpcalc convert --from dp --eps 0.5 --delta 1e-6 --to dp --group 3
  dpcalc convert --from gdp --mu 1 --to tradeoff --points 5
  dpcalc convert --from dp --eps 1 --delta 1e-5 --to tradeoff --chart
"""

# The options that name each notion's parameters (source side), required then optional.
_SOURCE_OPTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "dp": (("--eps",), ("--delta",)),
    "gdp": (("--mu",), ()),
    "zcdp": (("--rho",), ()),
    "rdp": (("--order", "--rdp-eps"), ()),
    "gaussian": (("--sigma",), ("--sensitivity",)),
    "laplace": (("--scale",), ("--sensitivity",)),
}

_REQUIRED_HINTS = {
    "--eps": "epsilon, >= 0",
    "--mu": "mu, > 0",
    "--rho": "rho, > 0",
    "--order": "the Renyi order, > 1",
    "--rdp-eps": "the RDP epsilon at that order, >= 0",
    "--sigma": "the noise standard deviation, > 0",
    "--scale": "the Laplace scale b, > 0",
}

SOURCE_DELTA = Interval(0.0, 1.0, low_closed=True)  # a source (eps, delta)-DP guarantee may be pure
ORDER = Interval(1.0, float("inf"))

_TARGET_TITLES = {
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
                     "sigma", "sigma_classic", "scale", "rho", "mu"})

_NOTES = {
    "epsilon_bs16": "Bun-Steinke bound (simpler, looser)",
    "delta_bs16": "Bun-Steinke bound (simpler, looser)",
    "epsilon_classic": "classic conversion (Mironov Prop. 3)",
    "delta_classic": "classic conversion (Mironov Prop. 3)",
    "order": "Renyi order that achieves it",
    "sigma_classic": "sqrt(2 ln(1.25/delta)) sensitivity/eps",
    "classic_valid": "the classic formula needs 0 < eps < 1",
    "scale": "sensitivity / eps",
}
_SCALE_NOTE_DELTA = "smallest scale that meets (eps, delta): sensitivity / (eps - 2 log(1 - delta))"


def _target_options(source: str, target: str) -> tuple[str, ...]:
    if target == "dp":
        return ("--delta", "--eps") if source != "dp" else ()
    return {
        "rdp": ("--orders",),
        "tradeoff": ("--points",),
        "gaussian": ("--sensitivity",),
        "laplace": ("--sensitivity",),
    }.get(target, ())


# The command's wording of the terms that the core's conversion refusals name (conversions.TERMS).
_TERMS = {
    "group": "--group",
    "delta": "--delta",
    "delta_zero": "--delta 0",
    "to_dp": "--to dp",
    "to_gaussian": "--to gaussian",
    "to_laplace": "--to laplace",
    "rdp_point": "--order, --rdp-eps",
    "source_and_target": "--from and --to",
    "from_gaussian_to_dp": "--from gaussian --to dp",
    "from_dp_to_laplace": "--from dp --to laplace",
    "from_laplace_to_dp": "--from laplace --to dp",
    "from_dp_to_gaussian": "--from dp --to gaussian",
}


def _conversion_message(error) -> str:
    """A core ConversionError as the command states it, with its options."""
    return error.describe(_TERMS)


def _group_message(error) -> str:
    """A core GroupRefusal as the command states it, with its options."""
    if error.side == "source":
        return (
            f"--group does not apply to --from {error.source}: group privacy for RDP changes the order "
            "(Mironov 2017); convert to dp first, then use --from dp --group"
        )
    return (
        f"--group does not apply to --to {error.target}: group privacy weakens a guarantee, while "
        "calibrating noise that protects groups of k means multiplying --sensitivity by k"
    )


def _notion(option: str, value: Enum | None, allowed: tuple[str, ...]) -> str:
    if value is None:
        raise InputError(f"{option} is required: one of {', '.join(allowed)}")
    return value.value


def _parse_orders(option: str, text: str) -> Numbers:
    """A comma list of Renyi orders (> 1) or ranges start:stop:step (`options.order_items`), as
    --orders takes them (the option's click type)."""
    pieces = order_items(option, text)
    if not pieces or any(not piece for piece in pieces):
        raise InputError(f"{option} must be a comma-separated list of numbers in {ORDER}, got {text!r}")
    return Numbers(parse_real(option, piece, ORDER) for piece in pieces)


def _check_options(source: str, target: str, given: dict[str, Any]) -> None:
    """Refuse options that do not belong to `source -> target`, then name the missing ones."""
    from dpcalc.core.conversions import group_refusal

    required, optional = _SOURCE_OPTIONS[source]
    allowed = [*required, *optional]
    for option in _target_options(source, target):
        if option not in allowed:
            allowed.append(option)
    allowed.append("--group")
    if target == "dp":
        allowed += ["--max-eps", "--max-delta"]
    if given.get("--group") is not None:
        refused = group_refusal(source, target)
        if refused is not None:
            raise InputError(_group_message(refused))
    for option, value in given.items():
        if value is None or option in allowed:
            continue
        if option == "--max-eps":
            raise InputError("--max-eps applies only with --to dp, the only target with an epsilon")
        if option == "--max-delta":
            raise InputError("--max-delta applies only with --to dp --eps, the delta at a given epsilon")
        reason = f"; it takes {', '.join(allowed)}"
        raise InputError(f"{option} does not apply to --from {source} --to {target}{reason}")
    for option in required:
        if given.get(option) is None:
            raise InputError(f"--from {source} needs {option} ({_REQUIRED_HINTS[option]})")


@app.command("convert", help=HELP)
def convert(
    source: Annotated[
        SourceNotion | None,
        Option("--from", metavar="NOTION", help="Source notion: " + ", ".join(SOURCES) + "."),
    ] = None,
    target: Annotated[
        TargetNotion | None,
        Option(
            "--to", metavar="NOTION", help="Target notion: " + ", ".join(TARGETS) + " (tradeoff is a target only)."
        ),
    ] = None,
    eps: Annotated[
        float | None,
        Option("--eps", metavar="FLOAT", help="dp: epsilon (>= 0); as a target, gives delta at this epsilon.",
                     click_type=number(NON_NEGATIVE)),
    ] = None,
    delta: Annotated[
        str | None,
        Option(
            "--delta", metavar="FLOAT",
            help=f"dp: delta, in [0, 1) as a source (default 0), in (0, 1) as a target (default {DEFAULT_DELTA:g}).",
        ),
    ] = None,
    mu: Annotated[
        float | None, Option("--mu", metavar="FLOAT", help="gdp: mu (> 0).", click_type=number(POSITIVE))
    ] = None,
    rho: Annotated[
        float | None, Option("--rho", metavar="FLOAT", help="zcdp: rho (> 0).", click_type=number(POSITIVE))
    ] = None,
    order: Annotated[
        float | None,
        Option("--order", metavar="FLOAT", help="rdp source: the Renyi order (> 1).", click_type=number(ORDER)),
    ] = None,
    rdp_eps: Annotated[
        float | None,
        Option("--rdp-eps", metavar="FLOAT", help="rdp source: the RDP epsilon at --order (>= 0).",
                     click_type=number(NON_NEGATIVE)),
    ] = None,
    sigma: Annotated[
        float | None,
        Option(
            "--sigma", metavar="FLOAT", help="gaussian: noise standard deviation (> 0), not divided by the sensitivity.",
            click_type=number(POSITIVE),
        ),
    ] = None,
    scale: Annotated[
        float | None,
        Option("--scale", metavar="FLOAT", help="laplace: noise scale b (> 0).", click_type=number(POSITIVE)),
    ] = None,
    sensitivity: Annotated[
        float | None,
        Option(
            "--sensitivity", metavar="FLOAT",
            help="gaussian: L2, laplace: L1 sensitivity of the query (> 0) [default: 1].",
            click_type=number(POSITIVE),
        ),
    ] = None,
    orders: Annotated[
        Numbers | None,
        Option(
            "--orders", metavar="LIST", help=f"rdp target: comma list of orders > 1 or ranges start:stop:step (e.g. 2:8:2,16) "
            f"[default: {DEFAULT_ORDERS_TEXT}].",
            click_type=Parsed(_parse_orders),
        ),
    ] = None,
    points: Annotated[
        int | None,
        Option(
            "--points", metavar="INT",
            help=f"tradeoff target: number of alphas in [0, 1], 2..100000 [default: {DEFAULT_POINTS}].",
            click_type=number(TRADEOFF_POINTS),
        ),
    ] = None,
    group: Annotated[
        int | None,
        Option(
            "--group", metavar="INT", help="Group privacy: protect groups of k individuals (integer >= 1) [default: 1].",
            click_type=number(POSITIVE_INTEGER),
        ),
    ] = None,
    max_eps: MaxEpsilon = None,
    max_delta: MaxDelta = None,
    json_output: Json = False,
    plot: PlotFile = None,
    chart: Chart = False,
) -> None:
    source_notion = _notion("--from", source, SOURCES)
    target_notion = _notion("--to", target, TARGETS)
    for option, value in (("--plot", plot), ("--chart", chart or None)):
        if value is not None and target_notion != "tradeoff":
            raise InputError(
                f"{option} draws a trade-off curve: it applies only with --to tradeoff, got --to {target_notion}"
            )
    from dpcalc.core import conversions as core

    refused = core.refusal(source_notion, target_notion)
    if refused is not None:
        raise InputError(_conversion_message(refused))
    given = {
        "--eps": eps, "--delta": delta, "--mu": mu, "--rho": rho, "--order": order, "--rdp-eps": rdp_eps,
        "--sigma": sigma, "--scale": scale, "--sensitivity": sensitivity, "--orders": orders,
        "--points": points, "--group": group, "--max-eps": max_eps, "--max-delta": max_delta,
    }
    _check_options(source_notion, target_notion, given)
    plot_path = None
    if plot is not None:
        from dpcalc.cli.figures import check_plot_path  # (the drawing module: only for --plot and --chart)

        plot_path = check_plot_path(plot)
    takes_delta_or_epsilon = core.target_takes_delta_or_epsilon(source_notion, target_notion)
    if takes_delta_or_epsilon and delta is not None and eps is not None:
        raise conflict("--delta", "--eps", "give --delta to get epsilon, or --eps to get delta")
    if max_delta is not None and source_notion == "dp":
        raise InputError("--max-delta checks the delta computed at a target --eps; from dp, --eps and --delta are "
                         "the source's own: gate the epsilon with --max-eps")
    if target_notion == "dp":
        # a target --eps is given to get delta (from dp, --eps is the source's own)
        check_gates(epsilon_given=takes_delta_or_epsilon and eps is not None, max_eps=max_eps, max_delta=max_delta)

    group_size = 1 if group is None else group
    unit = 1.0 if sensitivity is None else sensitivity
    inputs: dict[str, Any] = {
        "from": source_notion, "to": target_notion, "eps": None, "delta": None, "mu": None, "rho": None,
        "order": None, "rdp_eps": None, "sigma": None, "scale": None, "sensitivity": None,
        "orders": None, "points": None, "group": group_size, "max_eps": max_eps,
        "max_delta": max_delta,
    }

    fields: dict[str, Any] = {}
    if source_notion == "dp":
        fields["epsilon"] = inputs["eps"] = eps
        # --delta's range depends on its role (a source may be pure DP; a target delta is > 0): parsed here
        fields["delta"] = inputs["delta"] = parse_real("--delta", delta, SOURCE_DELTA) if delta is not None else 0.0
    elif source_notion == "gdp":
        fields["mu"] = inputs["mu"] = mu
    elif source_notion == "zcdp":
        fields["rho"] = inputs["rho"] = rho
    elif source_notion == "rdp":
        fields["order"] = inputs["order"] = order
        fields["rdp"] = inputs["rdp_eps"] = rdp_eps
    elif source_notion == "gaussian":
        fields["sigma"] = inputs["sigma"] = sigma
        fields["sensitivity"] = inputs["sensitivity"] = unit
    else:
        fields["scale"] = inputs["scale"] = scale
        fields["sensitivity"] = inputs["sensitivity"] = unit

    target_fields: dict[str, Any] = {}
    if source_notion == "laplace" and target_notion == "dp" and eps is None:
        # optional here: without it (or at --delta 0) the pure-DP epsilon sensitivity/scale
        target_delta = parse_real("--delta", delta, SOURCE_DELTA) if delta is not None else 0.0
        inputs["delta"] = None if delta is None else target_delta
        if target_delta > 0.0:
            target_fields["delta"] = target_delta
    elif takes_delta_or_epsilon:
        if eps is not None:
            target_fields["epsilon"] = inputs["eps"] = eps
        else:
            target_fields["delta"] = inputs["delta"] = (
                parse_real("--delta", delta, OPEN_UNIT) if delta is not None else DEFAULT_DELTA
            )
    elif target_notion == "rdp":
        target_fields["orders"] = orders if orders is not None else DEFAULT_CONVERT_ORDERS
        inputs["orders"] = list(target_fields["orders"])
    elif target_notion == "tradeoff":
        target_fields["points"] = inputs["points"] = DEFAULT_POINTS if points is None else points
    elif target_notion in ("gaussian", "laplace"):
        target_fields["sensitivity"] = inputs["sensitivity"] = unit

    try:
        result = core.convert(
            core.Guarantee(source_notion, **fields), core.Target(target_notion, **target_fields), group_size
        )
    except core.GroupRefusal as error:
        raise InputError(_group_message(error)) from None
    except core.ConversionError as error:
        raise InputError(_conversion_message(error)) from None

    report = Report(
        command="convert",
        inputs=inputs,
        result={**result.values, "theorem": result.theorem},
        tables=_tables(result, inputs),
        warnings=list(result.warnings),
        **_gates(result, source_notion, target_notion),
        figures=(lambda: tradeoff_panels(result, inputs)) if target_notion == "tradeoff" else None,
    )
    raise Exit(emit(report, json_mode=json_output, max_epsilon=max_eps, plot=plot_path, chart=chart,
                    max_delta=max_delta))


def _gates(result, source: str, target: str) -> dict[str, Any]:
    """What the gates compare: --max-eps the converted epsilon, --max-delta the delta at a target
    --eps (both sound bounds: see the theorem); never the figure given (options.check_gates)."""
    basis = f"{source} -> dp conversion (a sound bound; see theorem)"
    if target != "dp":
        why = f"--to {target} yields no epsilon to compare"
        return {"no_gate": f"--max-eps applies with --to dp: {why}", "no_delta_gate": f"--max-delta applies with --to dp: {why}"}
    if result.target.epsilon is not None:  # delta at the given epsilon
        return {"no_gate": GIVEN_EPSILON, "delta": result.values["delta"], "delta_basis": basis}
    return {"epsilon": result.epsilon, "basis": basis, "no_delta_gate": GIVEN_DELTA}


def _describe_source(inputs: dict[str, Any]) -> str:
    notion = inputs["from"]
    number = format_number
    if notion == "dp":
        text = f"({number(inputs['eps'])}, {number(inputs['delta'])})-DP"
    elif notion == "gdp":
        text = f"{number(inputs['mu'])}-GDP"
    elif notion == "zcdp":
        text = f"{number(inputs['rho'])}-zCDP"
    elif notion == "rdp":
        text = f"RDP epsilon {number(inputs['rdp_eps'])} at order {number(inputs['order'])}"
    elif notion == "gaussian":
        text = f"Gaussian noise sigma = {number(inputs['sigma'])}, L2 sensitivity {number(inputs['sensitivity'])}"
    else:
        text = f"Laplace noise scale = {number(inputs['scale'])}, L1 sensitivity {number(inputs['sensitivity'])}"
    if inputs["group"] > 1:
        text += f", for groups of {inputs['group']}"
    return text


def _tables(result, inputs: dict[str, Any]) -> list[Table]:
    """A table of the scalar values and the theorem used, then the curve, if any."""
    target = result.target
    title = f"{_describe_source(inputs)} -> {_TARGET_TITLES[target.notion]}"
    rows = []
    for key, value in result.values.items():
        if key == "curve":
            rows.append(("RDP curve", f"{len(value)} orders", "below"))
            continue
        if key == "tradeoff":
            rows.append(("trade-off curve", f"{len(value)} points", "below"))
            continue
        note = _NOTES.get(key, "")
        if key == "delta" and target.notion == "dp" and target.delta is not None:
            note = "given"
        elif key == "epsilon" and target.notion == "dp" and target.epsilon is not None:
            note = "given"
        elif key in ("epsilon", "delta") and ("epsilon_bs16" in result.values or "delta_bs16" in result.values):
            note = "optimal over the Renyi order for the RDP-to-DP conversion of Canonne, Kamath, Steinke 2020"
        elif key in ("epsilon", "delta") and ("epsilon_classic" in result.values or "delta_classic" in result.values):
            note = "improved conversion"
        elif key == "scale" and result.grouped.notion == "dp" and result.grouped.delta > 0.0:
            note = _SCALE_NOTE_DELTA
        elif key == "sigma" and "sigma_classic" in result.values:
            note = "analytic: the smallest noise std that meets (eps, delta)"
        rows.append((key, format_number(value) if note == "given" or not isinstance(value, float)
                     or key not in _UPWARD else format_bound(value, True), note))
    rows.append(("theorem", "", result.theorem))
    tables = [Table(columns=("quantity", "value", "note"), rows=rows, title=title, justify=("left", "right", "left"))]
    if "curve" in result.values:
        tables.append(Table(
            columns=("order", "RDP epsilon"),
            rows=[(format_number(point["order"]), format_bound(point["rdp"], True)) for point in result.values["curve"]],
        ))
    if "tradeoff" in result.values:
        tables.append(Table(
            columns=("alpha (type I)", "beta (type II)"),
            # beta is a lower bound on the type II error of any test: rounded down
            rows=[(format_number(point["alpha"]), format_bound(point["beta"], False))
                  for point in result.values["tradeoff"]],
        ))
    return tables


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


def tradeoff_panels(result, inputs: dict[str, Any]):
    """The converted guarantee's trade-off curve beside the no-privacy diagonal 1 - alpha.

    GDP and the Gaussian mechanism draw G_mu (labelled with mu); (eps, delta)-DP draws f_eps,delta,
    and pure eps-DP adds, dashed, the weaker mu-GDP curve it implies (pure_dp_to_mu).
    Group privacy is already applied: `result.grouped` is the guarantee drawn.
    """
    import math

    from dpcalc.cli.figures import Series, tradeoff_panel
    from dpcalc.core import gdp
    from dpcalc.core.conversions import dp_tradeoff, pure_dp_to_mu

    grouped = result.grouped
    number = format_number
    group = f", groups of {inputs['group']}" if inputs["group"] > 1 else ""
    series = []
    if grouped.notion == "dp":
        epsilon, delta = grouped.epsilon, grouped.delta
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
        mu = grouped.mu if grouped.notion == "gdp" else grouped.sensitivity / grouped.sigma
        alphas = _plot_alphas()
        title = f"Trade-off curve, mu = {number(mu)}{group}"
        label = f"{number(mu)}-GDP"
        if grouped.notion == "gaussian":
            label = f"Gaussian mechanism: {label} (mu = sensitivity/sigma)"
        series.append(Series(label, alphas, [gdp.tradeoff(alpha, mu) for alpha in alphas], accountant="gdp"))
    series.append(Series("no privacy lost (1 - alpha)", [0.0, 1.0], [1.0, 0.0], dashed=True, accountant="none"))
    # the title names the guarantee drawn; a mechanism's noise, which gives it, goes beneath
    caption = _describe_source(inputs) if grouped.notion == "gaussian" else ""
    return [tradeoff_panel(title, series, caption=caption)]
