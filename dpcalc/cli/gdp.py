"""`dpcalc gdp`: Gaussian differential privacy of noisy SGD (central-limit accountant)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, TypedDict

from dpcalc.cli.declare import App, Group, Option
from dpcalc.cli.errors import Choice, conflict
from dpcalc.cli.like import Like, gdp_like, refuse_sweep, with_like
from dpcalc.cli.options import (
    GIVEN_DELTA,
    GIVEN_EPSILON,
    TRAINING_FLAGS,
    Delta,
    Epsilon,
    Gates,
    GaussianRun,
    SweepableReal,
    SweepOutputs,
    Swept,
    one,
    sweepable,
)
from dpcalc.cli.output import Answer, Report, Table, format_number, format_upper
from dpcalc.cli.request import Request, start
from dpcalc.cli.tight import NoTight, gap_percent, tight_epsilon, tight_epsilons
from dpcalc.core.record import Record
from dpcalc.core.training import RunParameters, training_run
from dpcalc.core.validation import POSITIVE, large_delta_warnings

if TYPE_CHECKING:
    from dpcalc.cli.figures import Panel
    from dpcalc.core.gdp import GDPResult
    from dpcalc.core.phases import Phase


class SamplingScheme(str, Enum):
    poisson = "poisson"
    uniform = "uniform"


# pld's schemes that have no central-limit mu: where to go (the mu of Bu et al. 2020 is for Poisson
# and fixed-size batches only)
_ELSEWHERE = {scheme: (f"gdp --sampling takes poisson or uniform, got {scheme}: gdp's central-limit mu covers Poisson "
                       f"and fixed-size batches only; for {scheme} use dpcalc pld --sampling {scheme}")
              for scheme in ("shuffle", "allocation")}


app = App()

HELP = """Gaussian DP (mu-GDP) of noisy SGD, and the (epsilon, delta) and trade-off curve it implies.

mu comes from the central-limit approximation (Bu, Dong, Long, Su 2020, Thm 4), which is a
limit, not a bound: at finite T it can under-report epsilon; the result carries a warning.
With --mu a given mu is converted exactly instead.

\b
Examples:
  dpcalc gdp --p 0.004 --sigma 1.1 --T 10000
  dpcalc gdp --n 60000 --batch-size 256 --epochs 60 --sigma 1.1 --json
  dpcalc gdp --mu 0.5 --eps 1
  dpcalc gdp --p 0.004 --sigma 1.1 --T 10000 --max-eps 2
  dpcalc gdp --n 60000 --batch-size 256 --epochs 10:60:10 --sigma 0.8,1.1 --no-tight

Sweeps: any numeric option may be a list (0.8,1.1) or a range start:stop:step (10:60:10);
one row is printed per combination, in the order given, and --max-eps checks every row.
"""


class GdpInputs(Record):
    """What gdp computes from: a training run or a given mu, and the target delta or epsilon."""

    run: GaussianRun
    mu: float | Swept | None
    delta: float | Swept | None
    eps: float | Swept | None


@app.command("gdp", help=HELP)
def gdp(
    run: Annotated[GaussianRun, Group()],
    sampling: Annotated[
        SamplingScheme,
        Option("--sampling", help="poisson, or uniform (fixed-size batches without replacement).",
               click_type=Choice([scheme.value for scheme in SamplingScheme], elsewhere=_ELSEWHERE)),
    ] = SamplingScheme.poisson,
    mu: Annotated[
        SweepableReal | None,
        Option("--mu", metavar="FLOAT", help="Convert a given mu (> 0) instead of the training run.",
                     click_type=sweepable(POSITIVE)),
    ] = None,
    delta: Delta = None,
    eps: Epsilon = None,
    gates: Annotated[Gates, Group()] = Gates(),
    no_tight: NoTight = False,
    outputs: Annotated[SweepOutputs, Group()] = SweepOutputs(),
    like: Like = None,
) -> Answer:
    request = start(GdpInputs(run, mu, delta, eps), outputs=outputs, gates=gates)
    refuse_sweep(like, request.is_sweep)
    if request.is_sweep:
        return _gdp_sweep(request, sampling, no_tight)
    result, tight, warnings, inputs = _evaluate(request.rows[0], sampling, no_tight)
    inputs.update(max_eps=request.max_epsilon, max_delta=request.max_delta, no_tight=no_tight)
    given_mu = request.given["mu"] is not None
    tradeoff = [{"alpha": point.alpha, "beta": point.beta} for point in result.tradeoff]
    report = Report(
        command="gdp",
        inputs=inputs,
        result={
            "mu": result.mu,
            "epsilon": result.epsilon,
            "delta": result.delta,
            "max_advantage": result.max_advantage,
            "tradeoff": tradeoff,
            "tight_epsilon": tight,
        },
        tables=[_summary_table(result, not given_mu, tight), _tradeoff_table(tradeoff)],
        warnings=warnings,
        **_gate(result, tight, given_mu=given_mu, no_tight=no_tight, epsilon_given=inputs["eps"] is not None),
        figures=lambda: _figure(result, tight, inputs),
    )
    return request.answer(with_like(report, gdp_like(like, result, inputs["delta"], given_mu)))


def training_parameters(run: GaussianRun) -> RunParameters:
    """The core's parameters of a training run given by the options (a row: no sweep left)."""
    return RunParameters(p=one(run.p), sigma=one(run.sigma), noise_std=one(run.noise_std), sensitivity=run.sensitivity,
                         T=one(run.T), n=one(run.n), batch_size=one(run.batch_size), epochs=one(run.epochs))


class _Gate(TypedDict):
    """What the gates compare for one run: Report's epsilon, basis and no_gate (--max-eps), delta,
    delta_basis and no_delta_gate (--max-delta)."""

    epsilon: float | None
    basis: str | None
    no_gate: str | None
    delta: float | None
    delta_basis: str | None
    no_delta_gate: str | None


# One evaluated run: (core result, tight epsilon or None, warnings, echoed inputs).
_Evaluated = tuple["GDPResult", float | None, list[str], dict[str, Any]]


def _gate(result: GDPResult, tight: float | None, *, given_mu: bool, no_tight: bool,
          epsilon_given: bool) -> _Gate:
    """What the gates compare (Report's epsilon, basis, no_gate; delta, delta_basis,
    no_delta_gate): a sound figure or nothing, and never the figure given (options.check_gates).

    The central-limit mu is an approximation and never passes a gate: a training run's epsilon
    is checked by the PLD accountant's certified upper bound (tight epsilon), and its delta at
    --eps not at all (`dpcalc pld --eps` certifies it). A given mu, or an unsampled run, converts
    exactly.
    """
    if given_mu:
        basis: str | None = "exact for the given mu (Dong, Roth, Su 2022, Cor. 2.13)"
    elif not result.approximate:  # p = 1 (or 0): mu = sqrt(T)/sigma exactly
        basis = "exact: T unsampled Gaussian steps are sqrt(T)/sigma-GDP (Dong, Roth, Su 2022, Cor. 3.3 and 2.13)"
    else:
        basis = None
    if epsilon_given:
        no_delta_gate = None if basis is not None else (
            "with --eps gdp computes delta from the central-limit mu, an approximation that can under-report it "
            "and never passes a budget check; use dpcalc pld --eps with --max-delta for the certified upper delta")
        return _Gate(epsilon=None, basis=None, no_gate=GIVEN_EPSILON, delta=None if basis is None else result.delta,
                     delta_basis=basis, no_delta_gate=no_delta_gate)
    if basis is not None:
        epsilon, why = result.epsilon, None
    elif tight is not None:
        epsilon, basis, why = tight, "PLD certified upper bound", None
    elif no_tight:
        epsilon, why = None, ("--no-tight leaves only the central-limit epsilon, an approximation that can "
                              "under-report epsilon and never passes a budget check; drop --no-tight so that the "
                              "certified PLD upper bound is compared")
    else:
        epsilon, why = None, ("the PLD accountant could not certify this run (see the warning), and the "
                              "central-limit epsilon is an approximation that never passes a budget check")
    return _Gate(epsilon=epsilon, basis=basis, no_gate=why, delta=None, delta_basis=None, no_delta_gate=GIVEN_DELTA)


def _evaluate(row: GdpInputs, sampling: SamplingScheme, no_tight: bool, quote_gap: bool = True,
              tight_given: tuple[float | None, list[str]] | None = None) -> _Evaluated:
    """One run (a row of the Request): (core result, tight epsilon or None, warnings, echoed inputs
    without max_eps/no_tight).

    `quote_gap` adds the CLT-to-tight gap of this run to the CLT warning (a sweep shows it per
    row in the table instead, so that its rows share one CLT warning).
    """
    from dpcalc.core import gdp as core

    target_delta, target_epsilon = one(row.delta), one(row.eps)
    if row.mu is not None:
        for option, name in TRAINING_FLAGS:
            if getattr(row.run, name) is not None:
                raise conflict("--mu", option, "--mu converts a given mu; the training run gives its own")
        result = core.gdp_guarantee(one(row.mu), delta=target_delta, epsilon=target_epsilon)
        run = None
    else:
        run = training_run(training_parameters(row.run))  # (p, sigma, T)
        result = core.noisy_sgd_gdp(*run, sampling=sampling.value, delta=target_delta, epsilon=target_epsilon)
    probability, noise, steps = (None, None, None) if run is None else run
    warnings = list(result.warnings) + large_delta_warnings(one(row.run.n), target_delta)
    tight = None
    if run is not None and target_delta is not None and not no_tight:
        (phase,) = _tight_phases(*run, sampling.value)
        if sampling is not SamplingScheme.poisson:
            warnings.append(
                "the central-limit mu for uniform sampling (Bu et al. 2020) lets a replaced record move the "
                "sum by at most C; with sigma relative to the clipping norm C a replacement moves it by up to "
                "2C, so tight_epsilon is the certified upper bound of fixed-size batches under replace-one "
                "(dpcalc pld --sampling uniform --neighbours replace-one).")
        tight, tight_warnings = tight_given or tight_epsilon([phase], target_delta)
        if quote_gap and tight is not None and result.approximate:  # the gap goes into the CLT warning
            warnings[0] += _gap_sentence(result.epsilon, tight)
        warnings += tight_warnings
    inputs: dict[str, Any] = {
        "p": probability,
        "sigma": noise,
        "noise_std": row.run.noise_std,
        "sensitivity": row.run.sensitivity,
        "T": steps,
        "n": row.run.n,
        "batch_size": row.run.batch_size,
        "epochs": row.run.epochs,
        "sampling": sampling.value if row.mu is None else None,
        "mu": None if row.mu is None else result.mu,
        "delta": target_delta,
        "eps": target_epsilon,
    }
    return result, tight, warnings, inputs


# The inputs a sweep's figure names when every row shares them (input key, shown name).
_CAPTION_KEYS = (("mu", "mu"), ("p", "p"), ("sigma", "sigma"), ("T", "T"), ("delta", "delta"), ("eps", "epsilon"))

# The scalar result keys a sweep row carries.
_ROW_RESULT_KEYS = ("mu", "epsilon", "delta", "max_advantage", "tight_epsilon")


def _sweep_tights(rows: Sequence[GdpInputs], sampling: SamplingScheme,
                  no_tight: bool) -> list[tuple[float | None, list[str]] | None]:
    """The tight epsilon (and its warnings) of each row of a Poisson sweep, None where it is not
    computed here: the rows that differ only in T share one PLD composition."""
    tights: list[tuple[float | None, list[str]] | None] = [None] * len(rows)
    if no_tight or sampling is not SamplingScheme.poisson:
        return tights
    from dpcalc.core.phases import Phase

    runs, positions = [], []
    for position, row in enumerate(rows):
        if row.mu is None and row.delta is not None:
            probability, noise, steps = training_run(training_parameters(row.run))
            runs.append(([Phase("gaussian", probability, noise, None, steps)], one(row.delta)))
            positions.append(position)
    for position, answer in zip(positions, tight_epsilons(runs)):
        tights[position] = answer
    return tights


def _gdp_sweep(request: Request[GdpInputs], sampling: SamplingScheme, no_tight: bool) -> Answer:
    """One row per combination of the swept options (row shape: see dpcalc.cli.sweeps).

    A row holds the swept inputs, the run (p, sigma, T) when it comes from the training form,
    and the scalar result keys (the trade-off curve is left out: run the single command for it).
    """
    from dpcalc.cli.sweeps import (
        RUN_KEYS,
        Row,
        SweepOutput,
        echo_rows,
        sweep_caption,
        sweep_columns,
        sweep_panels,
        sweep_report,
    )

    evaluated = [_evaluate(row, sampling, no_tight, quote_gap=False, tight_given=tight_given)
                 for row, tight_given in zip(request.rows, _sweep_tights(request.rows, sampling, no_tight))]
    swept_keys = list(request.swept)
    first_inputs = evaluated[0][3]
    training = first_inputs["mu"] is None
    run_keys = [key for key in ("p", "sigma", "T") if training and key not in swept_keys]
    result_keys = [key for key in _ROW_RESULT_KEYS if key not in swept_keys]
    rows = []
    for result, tight, warnings, inputs in evaluated:
        values = {key: inputs[key] for key in swept_keys + run_keys}
        values.update({key: tight if key == "tight_epsilon" else getattr(result, key) for key in result_keys})
        gate = _gate(result, tight, given_mu=inputs["mu"] is not None, no_tight=no_tight,
                     epsilon_given=inputs["eps"] is not None)
        rows.append(Row(values, warnings, **gate))
    # inputs echo each row's value, as a list, for the swept inputs and for those they change
    # (T for --epochs): the single command echoes the resolved T too
    given = dict(first_inputs)
    echo_rows(given, rows, [*swept_keys, *RUN_KEYS], swept_keys)
    given["max_eps"] = request.max_epsilon
    given["max_delta"] = request.max_delta
    given["no_tight"] = no_tight
    y_key = "epsilon" if first_inputs["eps"] is None else "delta"
    # The table shows what varies: the swept inputs, the run quantities they change (T for
    # --epochs), mu, the solved epsilon (or delta) and the tight epsilon; --json has every key.
    shown = [key for key in ("mu", y_key, "tight_epsilon") if key in result_keys
             and not (key == "tight_epsilon" and all(row.values[key] is None for row in rows))]
    x_key = request.x_key
    report = sweep_report(
        SweepOutput(
            command="gdp",
            inputs=given,
            swept_keys=swept_keys,
            columns=sweep_columns([row.values for row in rows], swept_keys, run_keys, shown,
                                  upward={"tight_epsilon": True}),
            title=f"Gaussian DP sweep, {sampling.value} sampling (central-limit mu)" if training else "Gaussian DP sweep, given mu",
            max_epsilon=request.max_epsilon,
            max_delta=request.max_delta,
            figures=lambda: sweep_panels(
                [row.values for row in rows], x_key=x_key, y_key=y_key, series_keys=request.series_keys,
                title=f"{y_key} against {x_key}", xlabel=x_key, ylabel=y_key,
                accountant="gdp", name=f"{y_key} ({'central-limit ' if training else ''}mu-GDP)",
                also=[("tight_epsilon", "pld", "tight epsilon (PLD, certified)")] if "tight_epsilon" in shown else [],
                caption=sweep_caption(given, _CAPTION_KEYS),
                budget=request.max_epsilon if y_key == "epsilon" else None, ylog=y_key == "delta",
            ),
        ),
        rows,
    )
    return request.answer(report)


def _figure(result: GDPResult, tight: float | None, inputs: dict[str, Any]) -> list[Panel]:
    """The figure of one run (dpcalc.cli.gdp_figures, loaded only to draw it)."""
    from dpcalc.cli.gdp_figures import gdp_panels

    return gdp_panels(result.mu, result.delta, approximate=result.approximate,
                      tight_run=None if tight is None else _tight_run(result), caption=_caption(inputs),
                      targets=(inputs["delta"], inputs["eps"]))


def _caption(inputs: dict[str, Any]) -> str:
    """The run a figure shows: p, sigma, T (or mu) and the given delta or epsilon."""
    from dpcalc.cli.figures import run_caption

    return run_caption([("mu", inputs["mu"]), ("p", inputs["p"]), ("sigma", inputs["sigma"]), ("T", inputs["T"]),
                        ("sampling", inputs["sampling"] if inputs["sampling"] not in (None, "poisson") else None),
                        ("delta", inputs["delta"]), ("epsilon", inputs["eps"])])


def _tight_run(result: GDPResult) -> list[Phase]:
    """The phases of the run whose tight epsilon was computed, for its figure."""
    p, sigma, steps = result.sampling_probability, result.noise_multiplier, result.steps
    assert p is not None and sigma is not None and steps is not None, "a training run echoes its run (noisy_sgd_gdp)"
    return _tight_phases(p, sigma, steps, result.sampling)


def _tight_phases(p: float, sigma: float, steps: int, sampling: str | None) -> list[Phase]:
    """The PLD accountant's run for a gdp training run: one Poisson-subsampled Gaussian, or for
    fixed-size batches (uniform) one under replace-one: sigma is relative to the clipping norm C
    and a replacement moves the sum by up to 2C."""
    from dpcalc.core.phases import Phase

    if sampling == "uniform":
        return [Phase("gaussian", p, sigma, None, steps, sampling="uniform", neighbours="replace-one")]
    return [Phase("gaussian", p, sigma, None, steps)]


def _gap_sentence(clt_epsilon: float, tight: float) -> str:
    if not (math.isfinite(clt_epsilon) and math.isfinite(tight)) or tight <= 0.0:
        return f" The certified epsilon here is {format_number(tight)}."
    gap = gap_percent(clt_epsilon, tight)
    side = "below" if gap < 0 else "above"
    return (
        f" Here: CLT epsilon {clt_epsilon:.4g} is {abs(gap):.1f}% {side} the certified {tight:.4g} "
        "(tight_epsilon, PLD accountant)."
    )


def _summary_table(result: GDPResult, from_training_run: bool, tight: float | None) -> Table:
    if from_training_run:
        title = (
            f"Noisy SGD, p = {format_number(result.sampling_probability)}, "
            f"sigma = {format_number(result.noise_multiplier)}, T = {result.steps}, {result.sampling} sampling"
        )
        mu_note = ("central-limit approximation" if result.approximate
                   else "exact: sqrt(T)/sigma (Dong, Roth, Su, Cor. 3.3)" if result.sampling_probability == 1.0
                   else "exact: nothing is sampled")
    else:
        title = "Gaussian DP, given mu"
        mu_note = "given"
    return Table(
        columns=("quantity", "value", "note"),
        rows=[
            ("mu", format_number(result.mu), mu_note),
            ("epsilon", format_number(result.epsilon), "exact for this mu (Dong, Roth, Su, Cor. 2.13)"),
            *(
                [("tight epsilon", format_upper(tight), "PLD accountant, certified upper bound")]
                if tight is not None else []
            ),
            ("delta", format_number(result.delta), ""),
            ("max advantage", format_number(result.max_advantage), "2 Phi(mu/2) - 1: best TPR - FPR of any attack"),
        ],
        title=title,
        justify=("left", "right", "left"),
    )


def _tradeoff_table(tradeoff: list[dict[str, float]]) -> Table:
    return Table(
        columns=("alpha (type I)", "beta (type II)"),
        rows=[(format_number(point["alpha"]), format_number(point["beta"])) for point in tradeoff],
        title="Trade-off curve",
    )
