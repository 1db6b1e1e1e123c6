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
    target_delta, target_epsilon = parse_delta_or_epsilon(delta, eps)
    max_epsilon = parse_real("--max-eps", max_eps, RANGES["--max-eps"])
    width = DEFAULT_ACCURACY if accuracy is None else parse_real("--accuracy", accuracy, ACCURACY_RANGE)
    phases = parse_phases(
        phase, p=p, sigma=sigma, T=T, n=n, batch_size=batch_size, epochs=epochs, mechanism=mechanism, scale=scale
    )

    from dpcalc.core import pld as core

    if target_delta is not None:
        result = core.tight_epsilon(phases, target_delta, accuracy=width)
    else:
        result = core.tight_delta(phases, target_epsilon, accuracy=width)
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
        result={
            "epsilon": result.epsilon,
            "epsilon_lower": result.epsilon_lower,
            "epsilon_upper": result.epsilon_upper,
            "delta": result.delta,
            "delta_lower": result.delta_lower,
            "delta_upper": result.delta_upper,
            "accuracy": result.accuracy,
            "grid": {"step": result.grid_step, "size": result.grid_size},
            "binding": result.binding,
        },
        tables=[_summary_table(result, target_delta is not None)]
        + ([_phases_table(phases)] if len(phases) > 1 else []),
        warnings=list(result.warnings),
        epsilon=result.epsilon,
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
