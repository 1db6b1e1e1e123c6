"""The phases of a run from the command line: the single-phase flags or repeated --phase.

Shared by the accountants that compose heterogeneous runs (`rdp`, `pld`): a command declares
the options with the aliases below and calls `parse_phases` once. A run is either

  * the short form, one phase: --p/--sigma/--T (or --n/--batch-size/--epochs), optionally
    --mechanism laplace --scale B (then --T, and --p = 1 by default), or
  * one or more `--phase KEY=VALUE,...` with keys
      mechanism  gaussian (default) or laplace
      p          sampling probability in (0, 1] (default 1: no subsampling)
      sigma      noise multiplier (gaussian)
      scale      Laplace scale b for L1 sensitivity 1 (laplace)
      T          number of steps (required: a forgotten T must not silently mean 1)
      n, batch_size, epochs   the training form: p = batch_size / n, T = ceil(epochs / p)

Mixing --phase with the single-phase flags is an error. Errors name the phase by its position:
"--phase 2: sigma must be in (0, inf), got -1".
"""

from __future__ import annotations

import math
from enum import Enum
from typing import TYPE_CHECKING, Annotated

import typer

from dpcalc.cli.options import RANGES, InputError, conflict, parse_integer, parse_real, parse_training_run
from dpcalc.core.phases import Phase
from dpcalc.core.validation import POSITIVE

if TYPE_CHECKING:
    from fractions import Fraction


class MechanismChoice(str, Enum):
    gaussian = "gaussian"
    laplace = "laplace"


PhaseList = Annotated[
    list[str] | None,
    typer.Option(
        "--phase",
        metavar="KEY=VALUE,...",
        help=(
            "One phase of the run; repeat for several (their privacy losses compose). Keys: "
            "p, sigma, T, mechanism (gaussian|laplace), scale, or the training form n, batch_size, "
            "epochs. p defaults to 1; T is required. Example: --phase p=0.01,sigma=0.9,T=1800. "
            "Not with the single-phase flags."
        ),
    ),
]
Mechanism = Annotated[
    MechanismChoice | None,
    typer.Option(
        "--mechanism",
        help="Single-phase form: gaussian (default; --sigma) or laplace (--scale).",
        case_sensitive=False,
    ),
]
Scale = Annotated[
    str | None,
    typer.Option("--scale", metavar="FLOAT", help="Laplace scale b (> 0) for L1 sensitivity 1 (--mechanism laplace)."),
]

PHASE_KEYS = ("mechanism", "p", "sigma", "scale", "T", "n", "batch_size", "epochs")


def phase_inputs(item: Phase) -> dict:
    """How a resolved phase is echoed in JSON `inputs.phases`."""
    return {
        "mechanism": item.mechanism,
        "p": item.sampling_probability,
        "sigma": item.noise_multiplier,
        "scale": item.scale,
        "T": item.steps,
    }


def parse_phases(
    phase_specs: list[str] | None,
    *,
    p: str | None,
    sigma: str | None,
    T: str | None,
    n: str | None,
    batch_size: str | None,
    epochs: str | None,
    mechanism: MechanismChoice | None,
    scale: str | None,
) -> list[Phase]:
    """The run's phases, from repeated --phase or from the single-phase flags (not both)."""
    if phase_specs:
        single = (
            ("--p", p), ("--sigma", sigma), ("--T", T), ("--n", n), ("--batch-size", batch_size),
            ("--epochs", epochs), ("--mechanism", mechanism), ("--scale", scale),
        )
        for name, value in single:
            if value is not None:
                raise conflict("--phase", name, "describe every phase with --phase, or give one phase with the flags")
        return [parse_phase_spec(spec, index) for index, spec in enumerate(phase_specs, start=1)]
    if mechanism is None or mechanism == MechanismChoice.gaussian:
        if scale is not None:
            raise InputError("--scale is for --mechanism laplace; the gaussian mechanism takes --sigma")
        probability, noise, steps = parse_training_run(p, sigma, T, n, batch_size, epochs)
        return [Phase("gaussian", sampling_probability=probability, noise_multiplier=noise, steps=steps)]
    for name, value in (("--sigma", sigma), ("--n", n), ("--batch-size", batch_size), ("--epochs", epochs)):
        if value is not None:
            raise conflict("--mechanism laplace", name, "the laplace mechanism takes --scale, --T and optionally --p")
    if scale is None:
        raise InputError("--scale is required with --mechanism laplace (Laplace scale b, > 0)")
    if T is None:
        raise InputError("--T is required (number of releases, an integer >= 1)")
    probability = 1.0 if p is None else parse_real("--p", p, RANGES["--p"])
    return [
        Phase(
            "laplace",
            sampling_probability=probability,
            scale=parse_real("--scale", scale, POSITIVE),
            steps=parse_integer("--T", T),
        )
    ]


def parse_phase_spec(spec: str, index: int) -> Phase:
    """One `--phase` value, e.g. "p=0.01,sigma=0.9,T=1800"; `index` counts from 1 for messages."""
    where = f"--phase {index}"
    values: dict[str, str] = {}
    for item in spec.split(","):
        item = item.strip()
        if not item:
            continue
        key, separator, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not separator or not key:
            raise InputError(f"{where}: expected KEY=VALUE items separated by commas, got {item!r}")
        if key not in PHASE_KEYS:
            raise InputError(f"{where}: unknown key {key!r}; keys are {', '.join(PHASE_KEYS)}")
        if key in values:
            raise InputError(f"{where}: key {key!r} given twice")
        if not value:
            raise InputError(f"{where}: {key} needs a value")
        values[key] = value
    if not values:
        raise InputError(f"{where}: empty; give e.g. p=0.01,sigma=0.9,T=1800")

    mechanism = values.pop("mechanism", "gaussian").lower()
    if mechanism not in ("gaussian", "laplace"):
        raise InputError(f"{where}: mechanism must be gaussian or laplace, got {mechanism!r}")
    if mechanism == "gaussian":
        if "scale" in values:
            raise InputError(f"{where}: scale is for mechanism=laplace; the gaussian mechanism takes sigma")
        if "sigma" not in values:
            raise InputError(f"{where}: sigma is required (noise multiplier, > 0)")
    else:
        if "sigma" in values:
            raise InputError(f"{where}: sigma is for the gaussian mechanism; mechanism=laplace takes scale")
        if "scale" not in values:
            raise InputError(f"{where}: scale is required for mechanism=laplace (Laplace scale b, > 0)")

    probability, exact_probability = _phase_probability(values, where)
    steps = _phase_steps(values, exact_probability, where)
    if mechanism == "gaussian":
        return Phase(
            "gaussian",
            sampling_probability=probability,
            noise_multiplier=parse_real(f"{where}: sigma", values["sigma"], POSITIVE),
            steps=steps,
        )
    return Phase(
        "laplace",
        sampling_probability=probability,
        scale=parse_real(f"{where}: scale", values["scale"], POSITIVE),
        steps=steps,
    )


def _phase_probability(values: dict[str, str], where: str) -> tuple[float, Fraction]:
    """p from `p`, or from `batch_size / n`; 1 (no subsampling) when neither is given."""
    from fractions import Fraction  # exact p, so that epochs / p is exact (imported only here: start-up time)

    training = [key for key in ("n", "batch_size") if key in values]
    if "p" in values and training:
        raise InputError(f"{where}: p and {training[0]} cannot be given together; p is batch_size / n")
    if "p" in values:
        probability = parse_real(f"{where}: p", values["p"], RANGES["--p"])
        return probability, Fraction(values["p"])
    if training:
        if len(training) == 1:
            missing = "batch_size" if training[0] == "n" else "n"
            raise InputError(f"{where}: {training[0]} needs {missing} (p = batch_size / n)")
        size = parse_integer(f"{where}: n", values["n"])
        batch = parse_integer(f"{where}: batch_size", values["batch_size"])
        if batch > size:
            raise InputError(f"{where}: batch_size must be in [1, n] = [1, {size}], got {values['batch_size']}")
        return batch / size, Fraction(batch, size)
    return 1.0, Fraction(1)


def _phase_steps(values: dict[str, str], exact_probability: Fraction, where: str) -> int:
    """T from `T`, or ceil(epochs / p) (exact rational arithmetic, never rounded down)."""
    if "T" in values and "epochs" in values:
        raise InputError(f"{where}: T and epochs cannot be given together; T is ceil(epochs * n / batch_size)")
    if "T" in values:
        return parse_integer(f"{where}: T", values["T"])
    if "epochs" in values:
        parse_real(f"{where}: epochs", values["epochs"], RANGES["--epochs"])
        from fractions import Fraction

        return max(1, math.ceil(Fraction(values["epochs"]) / exact_probability))
    raise InputError(f"{where}: T is required (number of steps, an integer >= 1; epochs with n and batch_size also work)")
