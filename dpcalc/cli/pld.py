"""`dpcalc pld`: tight privacy accounting with a certified interval (privacy loss distributions)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

from dpcalc.cli import progress
from dpcalc.cli.declare import App, Option
from dpcalc.cli.like import Like, like_figure, refuse_sweep, with_like_row
from dpcalc.cli.options import (
    GIVEN_DELTA,
    GIVEN_EPSILON,
    BatchSize,
    Chart,
    Csv,
    DatasetSize,
    Delta,
    Epochs,
    Epsilon,
    InputError,
    Json,
    MaxBatchSize,
    MaxDelta,
    MaxEpsilon,
    NoiseMultiplier,
    NoiseStd,
    PlotFile,
    SamplingProbability,
    Sensitivity,
    Steps,
    SweepableReal,
    conflict,
    sweepable,
)
from dpcalc.cli.output import Report, Table, format_lower, format_number, format_upper
from dpcalc.cli.phases import (
    ExamplesPerUserOption,
    Mechanism,
    NeighboursOption,
    PhaseList,
    SamplingOption,
    Scale,
    parse_phases,
    phase_inputs,
    phases_caption,
    phases_table,
    phases_title,
)
from dpcalc.cli.request import Request, start
from dpcalc.cli.tight import paused_gc
from dpcalc.core.as_poisson import as_poisson as _as_poisson
from dpcalc.core.as_poisson import batch_scheme, compare_with_poisson
from dpcalc.core.limits import ACCURACY, DEFAULT_ACCURACY
from dpcalc.core.training import with_relation
from dpcalc.core.validation import large_delta_warnings

if TYPE_CHECKING:
    from dpcalc.cli.figures import Panel
    from dpcalc.cli.phases import MechanismChoice, NeighboursChoice, SamplingChoice
    from dpcalc.core.phases import Phase
    from dpcalc.core.pld import PLDResult

# One run of a sweep: its row of inputs and its phases.
_Run = tuple[dict[str, Any], list["Phase"]]

# --accuracy, shared with `dpcalc risk` (here, not in options.py: the closed-form commands'
# start-up does not load core.limits for it).
Accuracy = Annotated[
    SweepableReal | None,
    Option(
        "--accuracy",
        metavar="FLOAT",
        help=f"Target relative width of the PLD accountant's certified interval, in (0, 1) [default: {DEFAULT_ACCURACY:g}].",
        click_type=sweepable(ACCURACY),
    ),
]


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


@app.command("pld", help=HELP)
def pld(
    p: SamplingProbability = None,
    sigma: NoiseMultiplier = None,
    noise_std: NoiseStd = None,
    sensitivity: Sensitivity = None,
    T: Steps = None,
    n: DatasetSize = None,
    batch_size: BatchSize = None,
    epochs: Epochs = None,
    mechanism: Mechanism = None,
    scale: Scale = None,
    phase: PhaseList = None,
    sampling: SamplingOption = None,
    neighbours: NeighboursOption = None,
    examples_per_user: ExamplesPerUserOption = None,
    max_batch_size: MaxBatchSize = None,
    accuracy: Accuracy = None,
    delta: Delta = None,
    eps: Epsilon = None,
    max_eps: MaxEpsilon = None,
    max_delta: MaxDelta = None,
    json_output: Json = False,
    csv_output: Csv = False,
    plot: PlotFile = None,
    chart: Chart = False,
    like: Like = None,
) -> None:
    if max_batch_size is not None:
        _check_truncation(n, phase, plot, chart)
    request = start({"p": p, "sigma": sigma, "noise_std": noise_std, "sensitivity": sensitivity, "scale": scale, "T": T, "n": n, "batch_size": batch_size,
                     "epochs": epochs, "accuracy": accuracy, "delta": delta, "eps": eps},
                    max_eps=max_eps, json_output=json_output, plot=plot, chart=chart, phase=phase,
                    csv_output=csv_output, max_delta=max_delta)
    refuse_sweep(like, request.is_sweep)
    if request.is_sweep:
        if max_batch_size is not None:
            raise InputError("--max-batch-size takes one run: give the swept options one value each")
        with paused_gc():
            _pld_sweep(request, mechanism, sampling, neighbours, examples_per_user)
    row = request.rows[0]
    target_delta, target_epsilon, width = row["delta"], row["eps"], _accuracy(row)
    phases = with_relation(parse_phases(phase, {**row, "mechanism": mechanism}), sampling, neighbours, examples_per_user)
    framework = like_figure(like, phases, target_delta, "pld")
    truncation: dict[str, Any] | None = None
    as_poisson: PLDResult | None
    progress.describe(f"PLD accountant, epsilon at delta {format_number(target_delta)}" if target_delta is not None
                      else f"PLD accountant, delta at epsilon {format_number(target_epsilon)}")
    with paused_gc():
        if max_batch_size is not None:
            result, as_poisson, overflow = _truncated(phases, row["n"], max_batch_size, target_delta, target_epsilon, width)
            truncation = {"max_batch_size": max_batch_size, "n": row["n"], "overflow_probability": overflow,
                          "analysis": _cap_analysis(phases, row["n"], max_batch_size)}
        else:
            result = account(phases, target_delta, target_epsilon, width)
            as_poisson = _as_poisson(phases, target_delta, target_epsilon, width)
    warnings = list(result.warnings) + large_delta_warnings(row["n"], target_delta)
    comparison = (None if truncation is not None or as_poisson is None
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
        panels, figure_warnings = pld_panels(phases, target_delta, target_epsilon)
        warnings += [warning for warning in figure_warnings if warning not in warnings]
    inputs = {
        "phases": [phase_inputs(item) for item in phases],
        "noise_std": row["noise_std"],
        "sensitivity": row["sensitivity"],
        "delta": target_delta,
        "eps": target_epsilon,
        "accuracy": width,
        "max_batch_size": max_batch_size,
        "max_eps": request.max_epsilon,
        "max_delta": request.max_delta,
    }
    report = Report(
        command="pld",
        inputs=inputs,
        result={**_result_keys(result), "as_poisson": None if as_poisson is None else _bounds_keys(as_poisson),
                "truncation": truncation, "like": framework},
        tables=[with_like_row(_summary_table(result, target_delta is not None, as_poisson, truncation), framework)]
        + ([phases_table(phases)] if len(phases) > 1 else []),
        warnings=warnings,
        **gates(result, target_delta is not None),
        figures=None if panels is None else (lambda: panels),
    )
    request.finish(report)


def _check_truncation(n: Any, phase: list[str] | None, plot: str | None, chart: bool) -> None:
    """--max-batch-size applies to one Poisson-sampled Gaussian run of known dataset size."""
    if phase:
        raise conflict("--max-batch-size", "--phase", "the cap applies to a single-phase run given with the flags")
    if n is None:
        raise InputError("--max-batch-size needs the dataset size: give the run as --n, --batch-size and --epochs "
                         "(or --T), so that the chance of a batch above the cap is known")
    if plot is not None or chart:
        raise conflict("--max-batch-size", "--plot" if plot is not None else "--chart",
                       "the figures draw the Poisson run's profile; give them without the cap")


def _truncated(phases: Sequence[Phase], dataset_size: int, max_batch_size: int, target_delta: float | None,
               target_epsilon: float | None, accuracy: float) -> tuple[PLDResult, PLDResult, float]:
    """(truncated run's result, Poisson run's result, overflow probability) (core.pld.truncation)."""
    from dpcalc.core.pld.truncation import Truncation, account_truncated

    for item in phases:
        if item.mechanism != "gaussian" or item.sampling != "poisson":
            raise InputError(f"--max-batch-size caps Poisson batches of the gaussian mechanism, got {item.sampling} "
                             f"sampling of the {item.mechanism} mechanism")
    return account_truncated(phases, Truncation(dataset_size, max_batch_size), delta=target_delta,
                             epsilon=target_epsilon, accuracy=accuracy)


def pld_panels(phases: Sequence[Phase], target_delta: float | None,
               target_epsilon: float | None) -> tuple[list[Panel], list[str]]:
    """(panels, warnings): the certified trade-off curve and privacy profile of the run.

    Both come from the accountant's certified upper bounds on delta(eps) over a grid of eps
    (dpcalc.core.pld.tight_profile); the trade-off curve is the one they imply (Dong, Roth,
    Su 2022, Prop. 2.12; dpcalc.core.tradeoff), a valid lower bound on the true curve. For
    Gaussian runs the mu-GDP curve is drawn beside it: the central-limit mu (Bu et al. 2020)
    for subsampled phases, labelled as the approximation it is, the exact sqrt(T)/sigma
    for unsampled ones; mu composes as the root of the sum of squares.
    """
    from dpcalc.cli.figures import (
        SMALLEST_DELTA_DRAWN,
        Series,
        positive_points,
        profile_panel,
        run_caption,
        target_guides,
        tight_curves,
        tradeoff_panel,
    )
    from dpcalc.core import gdp
    from dpcalc.core.gdp import gdp_mu

    smallest = SMALLEST_DELTA_DRAWN if target_delta is None else min(target_delta, SMALLEST_DELTA_DRAWN)
    curves = tight_curves(phases, smallest_delta=smallest,
                          extra_epsilons=() if target_epsilon is None else (target_epsilon,))
    mu, approximate = gdp_mu(phases)
    gdp_label = "" if mu is None else f"{format_number(mu)}-GDP" + (
        ", central-limit approximation" if approximate else " (exact)")
    alphas = curves.alphas
    caption = run_caption([("", phases_caption(phases)), ("delta", target_delta), ("epsilon", target_epsilon)])
    series = [Series("tight (PLD, certified)", alphas, curves.betas)]
    if mu is not None:
        series.append(Series(gdp_label, alphas, [gdp.tradeoff(alpha, mu) for alpha in alphas], accountant="gdp"))
    series.append(Series("no privacy lost (1 - alpha)", alphas, [1.0 - alpha for alpha in alphas], dashed=True, accountant="none"))
    tradeoff = tradeoff_panel("Trade-off curve (tight, certified)", series, caption=caption)
    epsilons, deltas = positive_points(curves.epsilons, curves.delta_upper)
    profile_series = [Series("tight delta (PLD, certified upper bound)", epsilons, deltas)]
    if mu is not None:
        x, y = positive_points(curves.epsilons, [gdp.delta_for_epsilon(e, mu) for e in curves.epsilons])
        profile_series.append(Series(gdp_label, x, y, accountant="gdp"))
    profile = profile_panel(profile_series, caption=caption, guides=target_guides(target_delta, target_epsilon))
    return [tradeoff, profile], curves.warnings


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


def _accuracy(row: Mapping[str, Any]) -> float:
    return DEFAULT_ACCURACY if row["accuracy"] is None else row["accuracy"]


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

    shared = shared_over_steps([(phases, row["delta"], _accuracy(row)) for row, phases in runs])
    return [
        shared[index] if index in shared else account(phases, row["delta"], row["eps"], _accuracy(row))
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


def _pld_sweep(request: Request, mechanism: MechanismChoice | None, sampling: SamplingChoice | None,
               neighbours: NeighboursChoice | None, examples_per_user: int | None) -> NoReturn:
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

    runs = [(row, with_relation(parse_phases(None, {**row, "mechanism": mechanism}), sampling, neighbours,
                                examples_per_user))
            for row in request.rows]
    rows = []
    progress.describe(f"PLD accountant, {len(runs)} runs of a sweep")
    for (row, phases), result in zip(runs, _account_rows(runs)):
        as_poisson = _as_poisson(phases, row["delta"], row["eps"], _accuracy(row))
        keys = {**_result_keys(result), "as_poisson": None if as_poisson is None else _bounds_keys(as_poisson),
                "truncation": None}
        rows.append(Row(phase_row(request.swept, row, phases[0], keys),
                        [*result.warnings, *large_delta_warnings(row["n"], row["delta"])],
                        **gates(result, row["delta"] is not None)))
    layout = phase_sweep(request, runs[0][1][0], rows)
    inputs = layout.inputs
    if inputs["accuracy"] is None:
        inputs["accuracy"] = DEFAULT_ACCURACY
    inputs["max_eps"] = request.max_epsilon
    inputs["max_delta"] = request.max_delta
    # The table shows what varies: the swept inputs, the run quantities they change (T for
    # --epochs) and the certified interval of epsilon (or delta); --json has every key.
    y_key = layout.y_key
    shown = [key for key in (y_key, f"{y_key}_lower") if key not in request.swept]
    table_rows = [row.values for row in rows]
    x_key = request.swept[-1]
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
            figures=lambda: _sweep_figure(table_rows, x_key, y_key, list(request.swept[:-1]),
                                          sweep_caption(inputs, _CAPTION_KEYS), request.max_epsilon),
        ),
        rows,
    )
    request.finish(report)


# The inputs a sweep's figure names when every row shares them (input key, shown name).
_CAPTION_KEYS = (("p", "p"), ("sigma", "sigma"), ("scale", "scale"), ("T", "T"), ("delta", "delta"), ("eps", "epsilon"))


def _sweep_figure(rows: list[dict[str, Any]], x_key: str, y_key: str, series_keys: list[str], caption: str,
                  budget: float | None) -> list[Panel]:
    """The certified epsilon (or delta, on a log axis) against the last swept input; --max-eps
    drawn as a line."""
    from dpcalc.cli.sweeps import sweep_panels

    names = {"batch_size": "batch size"}
    panels: list[Panel] = sweep_panels(
        rows, x_key=x_key, y_key=y_key, series_keys=series_keys,
        title=f"certified {y_key} against {names.get(x_key, x_key)} (PLD)",
        xlabel=names.get(x_key, x_key), ylabel=f"{y_key} (certified upper bound)",
        accountant="pld", caption=caption, budget=budget if y_key == "epsilon" else None, ylog=y_key == "delta",
    )
    return panels


_BINDING_NOTES = {
    "remove": "remove or add adjacency",
    "add": "remove or add adjacency",
    "symmetric": "replace-one: the pair is its own reverse",
}
_SHUFFLE_BINDING = "shuffled batches: an epoch's unsubsampled Gaussian, its own reverse"


def _summary_table(result: PLDResult, epsilon_solved: bool, as_poisson: PLDResult | None = None,
                   truncation: dict[str, Any] | None = None) -> Table:
    from dpcalc.core.pld import analysis_of

    if epsilon_solved:
        rows = [
            ("epsilon", format_upper(result.epsilon_upper), "certified upper bound (quote this)"),
            ("epsilon lower bound", format_lower(result.epsilon_lower), "the true epsilon is at least this"),
            ("delta", format_number(result.delta), "given"),
        ]
        if truncation is not None and as_poisson is not None:
            rows += _truncation_rows(truncation, as_poisson, epsilon_solved)
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
            rows += _truncation_rows(truncation, as_poisson, epsilon_solved)
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


def _cap_analysis(phases: list[Any], dataset_size: int, max_batch_size: int) -> str:
    """Which analyses bound the capped run (`core.pld.truncation.cap_analysis`)."""
    from dpcalc.core.pld.truncation import Truncation, cap_analysis

    return cap_analysis(phases, Truncation(dataset_size, max_batch_size))


def _cap_note(analysis: str) -> str:
    """What a capped run's figures rest on, for the tables of pld and risk."""
    from dpcalc.core.pld.truncation import STEP_BY_STEP

    if analysis == STEP_BY_STEP:
        return ("the tighter of the overflow bound and the step-by-step one (an added example pushes at most one "
                "other out of a full batch)")
    return "the overflow bound: (1 + e^eps) times the overflow probability added to delta"


def _truncation_rows(truncation: dict[str, Any], poisson: PLDResult, epsilon_solved: bool) -> list[tuple[str, str, str]]:
    """The rows that say what the batch-size cap costs: the overflow probability, the analyses
    used, and the uncapped Poisson run's figure."""
    quantity = "epsilon" if epsilon_solved else "delta"
    return [
        ("max batch size", str(truncation["max_batch_size"]), f"batches cut to this; n = {truncation['n']}"),
        ("overflow probability", format_upper(truncation["overflow_probability"]), "some batch above the cap"),
        ("cap analysis", "", _cap_note(truncation["analysis"])),
        (f"{quantity} without the cap", format_upper(getattr(poisson, quantity + "_upper")), "plain Poisson sampling"),
    ]
