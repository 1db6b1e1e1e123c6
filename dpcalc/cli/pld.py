"""`dpcalc pld`: tight privacy accounting with a certified interval (privacy loss distributions)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from dpcalc.cli.options import (
    RANGES,
    BatchSize,
    DatasetSize,
    Delta,
    Epochs,
    Epsilon,
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
from dpcalc.core.validation import Interval

# Kept in step with dpcalc.core.pld.DEFAULT_ACCURACY (not imported here: it loads numpy).
DEFAULT_ACCURACY = 1e-3
ACCURACY_RANGE = Interval(0.0, 1.0)

app = typer.Typer(add_completion=False, rich_markup_mode=None)

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

\b
Examples:
  dpcalc pld --p 0.004 --sigma 1.1 --T 10000
  dpcalc pld --n 60000 --batch-size 256 --epochs 60 --sigma 1.1 --json
  dpcalc pld --phase p=0.01,sigma=2,T=500 --phase p=0.01,sigma=0.9,T=1800
  dpcalc pld --mechanism laplace --scale 10 --T 50 --delta 1e-6
  dpcalc pld --p 0.004 --sigma 1.1 --T 10000 --eps 2
  dpcalc pld --p 0.004 --sigma 1.1 --T 10000 --accuracy 1e-4 --max-eps 2
  dpcalc pld --n 60000 --batch-size 256 --epochs 10:60:10 --sigma 0.8,1.1

Sweeps: any numeric option may be a list (0.8,1.1) or a range start:stop:step (10:60:10);
one row is printed per combination, in the order given, and --max-eps checks every row.
Not with --phase.
"""


@app.command("pld", help=HELP)
def pld(
    p: SamplingProbability = None,
    sigma: NoiseMultiplier = None,
    T: Steps = None,
    n: DatasetSize = None,
    batch_size: BatchSize = None,
    epochs: Epochs = None,
    mechanism: Mechanism = None,
    scale: Scale = None,
    phase: PhaseList = None,
    accuracy: Annotated[
        Optional[str],
        typer.Option(
            "--accuracy",
            metavar="FLOAT",
            help=f"Target relative width of the certified interval, in (0, 1) [default: {DEFAULT_ACCURACY:g}].",
        ),
    ] = None,
    delta: Delta = None,
    eps: Epsilon = None,
    max_eps: MaxEpsilon = None,
    json_output: Json = False,
) -> None:
    import gc

    gc.disable()  # the run allocates large arrays and no cycles: collection only costs time
    texts = {"--p": p, "--sigma": sigma, "--T": T, "--n": n, "--batch-size": batch_size, "--epochs": epochs,
             "--scale": scale, "--accuracy": accuracy, "--delta": delta, "--eps": eps}
    if any(text is not None and ("," in text or ":" in text) for text in texts.values()):
        # a list or range: the sweep module is loaded only then (start-up time)
        from dpcalc.cli.sweeps import parse_sweep, refuse_phase_sweep

        refuse_phase_sweep(phase, texts)
        _pld_sweep(parse_sweep(texts, integer=INTEGER_OPTIONS), mechanism, max_eps, json_output)
    target_delta, target_epsilon = parse_delta_or_epsilon(delta, eps)
    max_epsilon = parse_real("--max-eps", max_eps, RANGES["--max-eps"])
    width = _parse_accuracy(accuracy)
    phases = parse_phases(
        phase, p=p, sigma=sigma, T=T, n=n, batch_size=batch_size, epochs=epochs, mechanism=mechanism, scale=scale
    )
    result = account(phases, target_delta, target_epsilon, width)
    inputs = {
        "phases": [_phase_inputs(item) for item in phases],
        "delta": target_delta,
        "eps": target_epsilon,
        "accuracy": width,
        "max_eps": max_epsilon,
    }
    report = Report(
        command="pld",
        inputs=inputs,
        result=_result_keys(result),
        tables=[_summary_table(result, target_delta is not None)]
        + ([_phases_table(phases)] if len(phases) > 1 else []),
        warnings=list(result.warnings),
        epsilon=result.epsilon,
    )
    raise typer.Exit(emit(report, json_mode=json_output, max_epsilon=max_epsilon))


def _parse_accuracy(text: str | None) -> float:
    return DEFAULT_ACCURACY if text is None else parse_real("--accuracy", text, ACCURACY_RANGE)


def account(phases, target_delta: float | None, target_epsilon: float | None, accuracy: float):
    """One run through the PLD accountant (core.pld.PLDResult): epsilon at delta, or delta at epsilon.

    Sweeps call this once per row; it is the one place to change should the core offer reuse
    across runs that differ only in T.
    """
    from dpcalc.core import pld as core

    if target_delta is not None:
        return core.tight_epsilon(phases, target_delta, accuracy=accuracy)
    return core.tight_delta(phases, target_epsilon, accuracy=accuracy)


def _result_keys(result) -> dict:
    return {
        "epsilon": result.epsilon,
        "epsilon_lower": result.epsilon_lower,
        "epsilon_upper": result.epsilon_upper,
        "delta": result.delta,
        "delta_lower": result.delta_lower,
        "delta_upper": result.delta_upper,
        "accuracy": result.accuracy,
        "grid": {"step": result.grid_step, "size": result.grid_size},
        "binding": result.binding,
    }


# The sweepable options (integer ones take integer ranges) and their JSON names.
INTEGER_OPTIONS = ("--T", "--n", "--batch-size")
_INPUT_KEY = {"--p": "p", "--sigma": "sigma", "--scale": "scale", "--T": "T", "--n": "n",
              "--batch-size": "batch_size", "--epochs": "epochs", "--accuracy": "accuracy", "--delta": "delta",
              "--eps": "eps"}
_HEADERS = {"batch_size": "batch size", "epsilon_lower": "epsilon lower", "delta_lower": "delta lower"}


def _pld_sweep(sweep, mechanism, max_eps, json_output: bool) -> None:
    """One row per combination of the swept options (row shape: see dpcalc.cli.sweeps).

    A row holds the swept inputs, the run (p, sigma or scale, T) and the result keys of a
    single run (epsilon, epsilon_lower, epsilon_upper, delta, delta_lower, delta_upper,
    accuracy, grid, binding). Every row is parsed before any is computed.
    """
    from dpcalc.cli.sweeps import (
        Column, Row, SweepOutput, fixed_description, given_inputs, input_value, phase_run, sweep_report,
    )

    max_epsilon = parse_real("--max-eps", max_eps, RANGES["--max-eps"])
    runs = []
    for values in sweep.rows():
        target_delta, target_epsilon = parse_delta_or_epsilon(values["--delta"], values["--eps"])
        width = _parse_accuracy(values["--accuracy"])
        phases = parse_phases(
            None, p=values["--p"], sigma=values["--sigma"], T=values["--T"], n=values["--n"],
            batch_size=values["--batch-size"], epochs=values["--epochs"], mechanism=mechanism,
            scale=values["--scale"],
        )
        runs.append((values, phases, target_delta, target_epsilon, width))
    swept_keys = [_INPUT_KEY[option] for option in sweep.swept]
    rows = []
    for values, phases, target_delta, target_epsilon, width in runs:
        result = account(phases, target_delta, target_epsilon, width)
        row = {_INPUT_KEY[option]: input_value(option, values[option], integer=INTEGER_OPTIONS)
               for option in sweep.swept}
        for key, value in {**phase_run(phases[0]), **_result_keys(result)}.items():
            row.setdefault(key, value)
        rows.append(Row(row, result.warnings, result.epsilon))
    inputs = {"mechanism": runs[0][1][0].mechanism, **given_inputs(sweep, _INPUT_KEY, integer=INTEGER_OPTIONS)}
    if inputs["delta"] is None and inputs["eps"] is None:
        inputs["delta"] = runs[0][2]
    if inputs["accuracy"] is None:
        inputs["accuracy"] = DEFAULT_ACCURACY
    inputs["max_eps"] = max_epsilon
    # The table shows what varies: the swept inputs, the run quantities they change (T for
    # --epochs) and the certified interval of epsilon (or delta); --json has every key.
    run_keys = [key for key in phase_run(runs[0][1][0]) if key not in swept_keys]
    table_rows = [row.values for row in rows]
    varying = [key for key in run_keys if len({row[key] for row in table_rows}) > 1]
    y_key = "epsilon" if inputs["eps"] is None else "delta"
    shown = [key for key in (y_key, f"{y_key}_lower") if key not in swept_keys]
    fixed = fixed_description(table_rows, run_keys)
    headers = {**_HEADERS, y_key: f"{y_key} (certified)"}
    report = sweep_report(
        SweepOutput(
            command="pld",
            inputs=inputs,
            swept_keys=swept_keys,
            columns=[Column(key, headers.get(key, key)) for key in swept_keys + varying + shown],
            title=f"Tight accounting (PLD) sweep{': ' + fixed if fixed else ''}",
            max_epsilon=max_epsilon,
        ),
        rows,
    )
    raise typer.Exit(emit(report, json_mode=json_output, max_epsilon=max_epsilon))


def _phase_inputs(item) -> dict:
    return {
        "mechanism": item.mechanism,
        "p": item.sampling_probability,
        "sigma": item.noise_multiplier,
        "scale": item.scale,
        "T": item.steps,
    }


def _summary_table(result, epsilon_solved: bool) -> Table:
    if epsilon_solved:
        rows = [
            ("epsilon", format_number(result.epsilon_upper), "certified upper bound (quote this)"),
            ("epsilon lower bound", format_number(result.epsilon_lower), "the true epsilon is at least this"),
            ("delta", format_number(result.delta), "given"),
        ]
    else:
        rows = [
            ("delta", format_number(result.delta_upper), "certified upper bound (quote this)"),
            ("delta lower bound", format_number(result.delta_lower), "the true delta is at least this"),
            ("epsilon", format_number(result.epsilon), "given"),
        ]
    rows += [
        ("binding direction", result.binding, "remove or add adjacency"),
        ("final grid step", format_number(result.grid_step), f"largest grid {result.grid_size} bins"),
    ]
    return Table(columns=("quantity", "value", "note"), rows=rows, title=_title(result.phases))


def _describe(item) -> str:
    noise = (
        f"sigma = {format_number(item.noise_multiplier)}"
        if item.mechanism == "gaussian"
        else f"Laplace, scale = {format_number(item.scale)}"
    )
    return f"p = {format_number(item.sampling_probability)}, {noise}, T = {item.steps}"


def _title(phases) -> str:
    if len(phases) == 1:
        return f"Tight accounting (PLD): {_describe(phases[0])}"
    return f"Tight accounting (PLD) of {len(phases)} phases (below)"


def _phases_table(phases) -> Table:
    rows = []
    for index, item in enumerate(phases, start=1):
        noise = (
            f"sigma = {format_number(item.noise_multiplier)}"
            if item.mechanism == "gaussian"
            else f"scale = {format_number(item.scale)}"
        )
        rows.append((str(index), item.mechanism, format_number(item.sampling_probability), noise, str(item.steps)))
    return Table(columns=("phase", "mechanism", "p", "noise", "T"), rows=rows, title="Phases")
