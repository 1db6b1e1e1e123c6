"""`dpcalc convert`: move between privacy notions, calibrate a single mechanism, apply group privacy.

The options are read into one `ConvertRequest` (dpcalc.cli.convert_report): the source guarantee
and the target of dpcalc.core.conversions, the group size and the output settings; the core
converts; convert_report renders the Conversion.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Annotated

from dpcalc.cli.convert_report import ConvertInputs, ConvertRequest, report
from dpcalc.cli.declare import App, Group, Option
from dpcalc.cli.options import (
    DEFAULT_DELTA,
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
from dpcalc.cli.output import Answer
from dpcalc.core.limits import (
    DEFAULT_CONVERT_ORDERS,
    DEFAULT_TRADEOFF_POINTS,
    SOURCE_NOTIONS,
    TARGET_NOTIONS,
    TRADEOFF_POINTS,
)
from dpcalc.core.record import Record, replace
from dpcalc.core.validation import NON_NEGATIVE, OPEN_UNIT, POSITIVE, POSITIVE_INTEGER, Interval

if TYPE_CHECKING:
    from dpcalc.core.conversions import Guarantee, Target

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
  gaussian  --sigma, the noise multiplier (noise std / L2 sensitivity, > 0), or the noise std
            --noise-std (> 0) with L2 --sensitivity [default 1]
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
  dpcalc convert --from gaussian --noise-std 4 --sensitivity 2 --to dp
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
    "gaussian": ((), ("--sigma", "--noise-std", "--sensitivity")),  # one of --sigma, --noise-std: _check_noise
    "laplace": (("--scale",), ("--sensitivity",)),
}

_REQUIRED_HINTS = {
    "--eps": "epsilon, >= 0",
    "--mu": "mu, > 0",
    "--rho": "rho, > 0",
    "--order": "the Renyi order, > 1",
    "--rdp-eps": "the RDP epsilon at that order, >= 0",
    "--scale": "the Laplace scale b, > 0",
}

SOURCE_DELTA = Interval(0.0, 1.0, low_closed=True)  # a source (eps, delta)-DP guarantee may be pure
ORDER = Interval(1.0, float("inf"))

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


def _conversion_error(error) -> InputError:
    """A core ConversionError as the command states it, with its options: --from and --to for a
    conversion that does not exist ("no conversion dp -> zcdp: ..."), then those of the terms
    its reason and alternatives name, in order."""
    from string import Formatter

    named = [field for text in (error.reason, error.alternatives or "")
             for _, field, _, _ in Formatter().parse(text) if field]
    options = ["--from", "--to"] if error.alternatives is not None else []
    options += [word for field in named for word in _TERMS[field].replace(",", " ").split() if word.startswith("--")]
    return InputError(error.describe(_TERMS), options=tuple(dict.fromkeys(options)))


def _group_error(error) -> InputError:
    """A core GroupRefusal as the command states it, with its options."""
    if error.side == "source":
        return InputError(
            f"--group does not apply to --from {error.source}: group privacy for RDP changes the order "
            "(Mironov 2017); convert to dp first, then use --from dp --group", options=("--group", "--from")
        )
    return InputError(
        f"--group does not apply to --to {error.target}: group privacy weakens a guarantee, while "
        "calibrating noise that protects groups of k means multiplying --sensitivity by k",
        options=("--group", "--to", "--sensitivity"),
    )


def _notion(option: str, value: Enum | None, allowed: tuple[str, ...]) -> str:
    if value is None:
        raise InputError(f"{option} is required: one of {', '.join(allowed)}", option=option,
                         allowed=f"one of {', '.join(allowed)}", choices=allowed)
    return value.value


def _parse_orders(option: str, text: str) -> Numbers:
    """A comma list of Renyi orders (> 1) or ranges start:stop:step (`options.order_items`), as
    --orders takes them (the option's click type)."""
    pieces = order_items(option, text)
    if not pieces or any(not piece for piece in pieces):
        raise InputError(f"{option} must be a comma-separated list of numbers in {ORDER}, got {text!r}", option=option,
                         allowed=f"a comma-separated list of numbers in {ORDER}", got=text)
    return Numbers(parse_real(option, piece, ORDER) for piece in pieces)


# ---------------------------------------------------------------------------------------------
# The options, declared once

From = Annotated[
    SourceNotion | None,
    Option("--from", metavar="NOTION", help="Source notion: " + ", ".join(SOURCES) + "."),
]
To = Annotated[
    TargetNotion | None,
    Option("--to", metavar="NOTION", help="Target notion: " + ", ".join(TARGETS) + " (tradeoff is a target only)."),
]
Epsilon = Annotated[
    float | None,
    Option("--eps", metavar="FLOAT", help="dp: epsilon (>= 0); as a target, gives delta at this epsilon.",
           click_type=number(NON_NEGATIVE)),
]
# text: its range depends on its role (a source may be pure DP; a target delta is > 0), parsed later
Delta = Annotated[
    str | None,
    Option("--delta", metavar="FLOAT",
           help=f"dp: delta, in [0, 1) as a source (default 0), in (0, 1) as a target (default {DEFAULT_DELTA:g})."),
]
Mu = Annotated[float | None, Option("--mu", metavar="FLOAT", help="gdp: mu (> 0).", click_type=number(POSITIVE))]
Rho = Annotated[float | None, Option("--rho", metavar="FLOAT", help="zcdp: rho (> 0).", click_type=number(POSITIVE))]
Order = Annotated[
    float | None, Option("--order", metavar="FLOAT", help="rdp source: the Renyi order (> 1).", click_type=number(ORDER))
]
RdpEpsilon = Annotated[
    float | None,
    Option("--rdp-eps", metavar="FLOAT", help="rdp source: the RDP epsilon at --order (>= 0).",
           click_type=number(NON_NEGATIVE)),
]
Sigma = Annotated[
    float | None,
    Option("--sigma", metavar="FLOAT", help="gaussian: the noise multiplier, noise std / sensitivity (> 0).",
           click_type=number(POSITIVE)),
]
NoiseStd = Annotated[
    float | None,
    Option("--noise-std", metavar="FLOAT", help="gaussian: the noise standard deviation (> 0), with --sensitivity.",
           click_type=number(POSITIVE)),
]
Scale = Annotated[
    float | None, Option("--scale", metavar="FLOAT", help="laplace: noise scale b (> 0).", click_type=number(POSITIVE))
]
Sensitivity = Annotated[
    float | None,
    Option("--sensitivity", metavar="FLOAT", help="gaussian: L2, laplace: L1 sensitivity of the query (> 0) [default: 1].",
           click_type=number(POSITIVE)),
]
Orders = Annotated[
    Numbers | None,
    Option("--orders", metavar="LIST", help=f"rdp target: comma list of orders > 1 or ranges start:stop:step (e.g. 2:8:2,16) "
           f"[default: {DEFAULT_ORDERS_TEXT}].", click_type=Parsed(_parse_orders)),
]
Points = Annotated[
    int | None,
    Option("--points", metavar="INT", help=f"tradeoff target: number of alphas in [0, 1], 2..100000 [default: {DEFAULT_POINTS}].",
           click_type=number(TRADEOFF_POINTS)),
]
GroupSize = Annotated[
    int | None,
    Option("--group", metavar="INT", help="Group privacy: protect groups of k individuals (integer >= 1) [default: 1].",
           click_type=number(POSITIVE_INTEGER)),
]


class ConvertOptions(Record):
    """The options of `convert` as given (None: not given)."""

    source: From = None
    target: To = None
    eps: Epsilon = None
    delta: Delta = None
    mu: Mu = None
    rho: Rho = None
    order: Order = None
    rdp_eps: RdpEpsilon = None
    sigma: Sigma = None
    noise_std: NoiseStd = None
    scale: Scale = None
    sensitivity: Sensitivity = None
    orders: Orders = None
    points: Points = None
    group: GroupSize = None
    max_eps: MaxEpsilon = None
    max_delta: MaxDelta = None
    json_output: Json = False
    plot: PlotFile = None
    chart: Chart = False

    def by_option(self) -> dict[str, object]:
        """The options a conversion may take, by name: checked against the pair (`_check_options`)."""
        return {
            "--eps": self.eps, "--delta": self.delta, "--mu": self.mu, "--rho": self.rho, "--order": self.order,
            "--rdp-eps": self.rdp_eps, "--sigma": self.sigma, "--noise-std": self.noise_std,
            "--scale": self.scale,
            "--sensitivity": self.sensitivity, "--orders": self.orders, "--points": self.points,
            "--group": self.group, "--max-eps": self.max_eps, "--max-delta": self.max_delta,
        }


@app.command("convert", help=HELP)
def convert(options: Annotated[ConvertOptions, Group()]) -> Answer:
    request = read_request(options)
    from dpcalc.core import conversions as core

    try:
        result = core.convert(request.source, request.target, request.group)
    except core.GroupRefusal as error:
        raise _group_error(error) from None
    except core.ConversionError as error:
        raise _conversion_error(error) from None
    return Answer(report(request, result), json_output=request.json_output, max_epsilon=request.max_eps,
                  plot=request.plot, chart=request.chart, max_delta=request.max_delta)


# ---------------------------------------------------------------------------------------------
# From the options to the request


def read_request(options: ConvertOptions) -> ConvertRequest:
    """The request the options make, or the InputError of the first option that does not fit."""
    source = _notion("--from", options.source, SOURCES)
    target = _notion("--to", options.target, TARGETS)
    for option, value in (("--plot", options.plot), ("--chart", options.chart or None)):
        if value is not None and target != "tradeoff":
            raise InputError(f"{option} draws a trade-off curve: it applies only with --to tradeoff, got --to {target}",
                             options=(option, "--to"))
    from dpcalc.core import conversions as core

    refused = core.refusal(source, target)
    if refused is not None:
        raise _conversion_error(refused)
    _check_options(source, target, options.by_option())
    if source == "gaussian":
        _check_noise(options)
    plot_path = None
    if options.plot is not None:
        from dpcalc.cli.figures import check_plot_path  # (the drawing module: only for --plot and --chart)

        plot_path = check_plot_path(options.plot)
    _check_roles(source, target, options)
    group = 1 if options.group is None else options.group
    inputs = ConvertInputs(source, target, group, options.max_eps, options.max_delta)
    guarantee, inputs = _source(source, options, inputs)
    aim, inputs = _target(source, target, options, inputs)
    return ConvertRequest(guarantee, aim, group, inputs, options.json_output, plot_path, options.chart)


def _check_options(source: str, target: str, given: dict[str, object]) -> None:
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
            raise _group_error(refused)
    for option, value in given.items():
        if value is None or option in allowed:
            continue
        if option == "--max-eps":
            raise InputError("--max-eps applies only with --to dp, the only target with an epsilon",
                             options=("--max-eps", "--to"))
        if option == "--max-delta":
            raise InputError("--max-delta applies only with --to dp --eps, the delta at a given epsilon",
                             options=("--max-delta", "--to", "--eps"))
        reason = f"; it takes {', '.join(allowed)}"
        raise InputError(f"{option} does not apply to --from {source} --to {target}{reason}",
                         options=tuple(dict.fromkeys((option, "--from", "--to", *allowed))))
    for option in required:
        if given.get(option) is None:
            raise InputError(f"--from {source} needs {option} ({_REQUIRED_HINTS[option]})", options=("--from", option))


def _check_noise(options: ConvertOptions) -> None:
    """A gaussian source: --sigma (the noise multiplier) or --noise-std (with --sensitivity)."""
    if options.sigma is not None and options.noise_std is not None:
        raise conflict("--sigma", "--noise-std", "sigma is noise std / sensitivity; give one")
    if options.sigma is None and options.noise_std is None:
        raise InputError("--from gaussian needs --sigma (the noise multiplier, noise std / sensitivity, > 0) or "
                         "--noise-std (the noise std, > 0)", options=("--from", "--sigma", "--noise-std"))
    if options.sigma is not None and options.sensitivity is not None:
        # --sigma was the noise std here once: beside a sensitivity, the two meanings differ
        raise InputError("--sensitivity goes with --noise-std: --sigma is the noise multiplier, noise std / "
                         "sensitivity (for the noise std itself give --noise-std)",
                         options=("--sensitivity", "--noise-std", "--sigma"))


def _check_roles(source: str, target: str, options: ConvertOptions) -> None:
    """--eps and --delta of a dp target (one of them), and the gates that fit what is computed."""
    from dpcalc.core.conversions import target_takes_delta_or_epsilon

    takes_delta_or_epsilon = target_takes_delta_or_epsilon(source, target)
    if takes_delta_or_epsilon and options.delta is not None and options.eps is not None:
        raise conflict("--delta", "--eps", "give --delta to get epsilon, or --eps to get delta")
    if options.max_delta is not None and source == "dp":
        raise InputError("--max-delta checks the delta computed at a target --eps; from dp, --eps and --delta are "
                         "the source's own: gate the epsilon with --max-eps",
                         options=("--max-delta", "--eps", "--delta", "--max-eps"))
    if target == "dp":
        # a target --eps is given to get delta (from dp, --eps is the source's own)
        check_gates(epsilon_given=takes_delta_or_epsilon and options.eps is not None, max_eps=options.max_eps,
                    max_delta=options.max_delta)


def _source(notion: str, options: ConvertOptions, inputs: ConvertInputs) -> tuple[Guarantee, ConvertInputs]:
    """The source guarantee the options give, and the inputs with the source's values."""
    from dpcalc.core.conversions import Guarantee

    unit = 1.0 if options.sensitivity is None else options.sensitivity
    if notion == "dp":
        # a source delta may be 0 (pure DP): [0, 1)
        delta = parse_real("--delta", options.delta, SOURCE_DELTA) if options.delta is not None else 0.0
        return Guarantee(notion, epsilon=options.eps, delta=delta), replace(inputs, eps=options.eps, delta=delta)
    if notion == "gdp":
        return Guarantee(notion, mu=options.mu), replace(inputs, mu=options.mu)
    if notion == "zcdp":
        return Guarantee(notion, rho=options.rho), replace(inputs, rho=options.rho)
    if notion == "rdp":
        return (Guarantee(notion, order=options.order, rdp=options.rdp_eps),
                replace(inputs, order=options.order, rdp_eps=options.rdp_eps))
    if notion == "gaussian":
        # the noise std: --noise-std, or --sigma at sensitivity 1 (the multiplier times 1)
        std = options.noise_std if options.noise_std is not None else options.sigma
        return (Guarantee(notion, noise_std=std, sensitivity=unit),
                replace(inputs, sigma=options.sigma, noise_std=options.noise_std, sensitivity=unit))
    return Guarantee(notion, scale=options.scale, sensitivity=unit), replace(inputs, scale=options.scale, sensitivity=unit)


def _target(source: str, notion: str, options: ConvertOptions, inputs: ConvertInputs) -> tuple[Target, ConvertInputs]:
    """The target the options give, and the inputs with the target's parameters."""
    from dpcalc.core.conversions import Target, target_takes_delta_or_epsilon

    if source == "laplace" and notion == "dp" and options.eps is None:
        # optional here: without it (or at --delta 0) the pure-DP epsilon sensitivity/scale
        delta = parse_real("--delta", options.delta, SOURCE_DELTA) if options.delta is not None else 0.0
        inputs = replace(inputs, delta=None if options.delta is None else delta)
        return (Target(notion, delta=delta) if delta > 0.0 else Target(notion)), inputs
    if target_takes_delta_or_epsilon(source, notion):
        if options.eps is not None:
            return Target(notion, epsilon=options.eps), replace(inputs, eps=options.eps)
        delta = parse_real("--delta", options.delta, OPEN_UNIT) if options.delta is not None else DEFAULT_DELTA
        return Target(notion, delta=delta), replace(inputs, delta=delta)
    if notion == "rdp":
        orders = tuple(options.orders) if options.orders is not None else DEFAULT_CONVERT_ORDERS
        return Target(notion, orders=orders), replace(inputs, orders=orders)
    if notion == "tradeoff":
        points = DEFAULT_POINTS if options.points is None else options.points
        return Target(notion, points=points), replace(inputs, points=points)
    if notion in ("gaussian", "laplace"):
        unit = 1.0 if options.sensitivity is None else options.sensitivity
        return Target(notion, sensitivity=unit), replace(inputs, sensitivity=unit)
    return Target(notion), inputs
