"""A phase of a run written as text: "p=0.01,sigma=0.9,T=1800" (the --phase value of the commands).

Keys (PHASE_KEYS): mechanism gaussian (default) or laplace; p, the sampling probability in
[0, 1] (default 1: no subsampling; 0: nothing sampled); sigma, the noise multiplier (gaussian),
or noise_std with sensitivity (sigma = noise_std / sensitivity); scale, the Laplace scale b
(laplace), accounted as b / sensitivity; T, the number of steps (required: a forgotten T must not
silently mean 1), or the training form n, batch_size, epochs (p = batch_size / n, T =
ceil(epochs / p), exactly). batch-size and noise-std may be written as the options spell them.

A text that does not describe a phase is refused with a `TextError` naming the key
("sigma must be in (0, inf), got -1"); the caller says which phase it was.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from dpcalc.core.phases import Phase
from dpcalc.core.text import TextError, exact, read_integer, read_real
from dpcalc.core.validation import POSITIVE, PROBABILITY

if TYPE_CHECKING:
    from fractions import Fraction

PHASE_KEYS = ("mechanism", "p", "sigma", "noise_std", "sensitivity", "scale", "T", "n", "batch_size", "epochs")


def phase_from_text(spec: str) -> Phase:
    """The phase a text describes, e.g. "p=0.01,sigma=0.9,T=1800" (keys: PHASE_KEYS)."""
    values: dict[str, str] = {}
    for item in spec.split(","):
        item = item.strip()
        if not item:
            continue
        key, separator, value = item.partition("=")
        # batch-size and noise-std as the options spell them, beside batch_size and noise_std
        key, value = key.strip().replace("-", "_"), value.strip()
        if not separator or not key:
            raise TextError(f"expected KEY=VALUE items separated by commas, got {item!r}")
        if key not in PHASE_KEYS:
            raise TextError(f"unknown key {key!r}; keys are {', '.join(PHASE_KEYS)}")
        if key in values:
            raise TextError(f"key {key!r} given twice")
        if not value:
            raise TextError(f"{key} needs a value")
        values[key] = value
    if not values:
        raise TextError("empty; give e.g. p=0.01,sigma=0.9,T=1800")

    mechanism = values.pop("mechanism", "gaussian").lower()
    if mechanism not in ("gaussian", "laplace"):
        raise TextError(f"mechanism must be gaussian or laplace, got {mechanism!r}")
    if mechanism == "gaussian":
        if "scale" in values:
            raise TextError("scale is for mechanism=laplace; the gaussian mechanism takes sigma")
        if "sigma" in values and "noise_std" in values:
            raise TextError("sigma and noise_std cannot be given together; sigma is noise_std / sensitivity")
        if "sigma" in values and "sensitivity" in values:
            raise TextError("sensitivity goes with noise_std (or scale): sigma is already noise std / sensitivity")
        if "sigma" not in values and "noise_std" not in values:
            raise TextError("sigma is required (noise multiplier, > 0; or noise_std with sensitivity)")
    else:
        for key in ("sigma", "noise_std"):
            if key in values:
                raise TextError(f"{key} is for the gaussian mechanism; mechanism=laplace takes scale")
        if "scale" not in values:
            raise TextError("scale is required for mechanism=laplace (Laplace scale b, > 0)")

    sensitivity = (read_real("sensitivity", values["sensitivity"], POSITIVE)
                   if "sensitivity" in values else None)
    probability, exact_probability = _probability(values)
    steps = _steps(values, exact_probability)
    if mechanism == "gaussian":
        per_epoch = None
        if "n" in values:  # with batch_size (checked by _probability): p = b/n exactly
            per_epoch = math.ceil(1 / exact_probability)
        noise: float
        if "sigma" in values:
            noise = read_real("sigma", values["sigma"], POSITIVE)
        else:
            noise = read_real("noise_std", values["noise_std"], POSITIVE)
            noise = noise if sensitivity is None else noise / sensitivity
        return Phase(
            "gaussian",
            sampling_probability=probability,
            noise_multiplier=noise,
            steps=steps,
            epoch_steps=per_epoch,
        )
    scale = read_real("scale", values["scale"], POSITIVE)
    return Phase(
        "laplace",
        sampling_probability=probability,
        scale=scale if sensitivity is None else scale / sensitivity,
        steps=steps,
    )


def _probability(values: dict[str, str]) -> tuple[float, Fraction]:
    """p from `p`, or from `batch_size / n`; 1 (no subsampling) when neither is given."""
    from fractions import Fraction  # exact p, so that epochs / p is exact (imported only here: start-up time)

    training = [key for key in ("n", "batch_size") if key in values]
    if "p" in values and training:
        raise TextError(f"p and {training[0]} cannot be given together; p is batch_size / n")
    if "p" in values:
        probability = read_real("p", values["p"], PROBABILITY)
        return probability, exact(probability)
    if training:
        if len(training) == 1:
            missing = "batch_size" if training[0] == "n" else "n"
            raise TextError(f"{training[0]} needs {missing} (p = batch_size / n)")
        size = read_integer("n", values["n"])
        batch = read_integer("batch_size", values["batch_size"])
        if batch > size:
            raise TextError(f"batch_size must be in [1, n] = [1, {size}], got {values['batch_size']}")
        return batch / size, Fraction(batch, size)
    return 1.0, Fraction(1)


def _steps(values: dict[str, str], exact_probability: Fraction) -> int:
    """T from `T`, or ceil(epochs / p) (exact rational arithmetic, never rounded down)."""
    if "T" in values and "epochs" in values:
        raise TextError("T and epochs cannot be given together; T is ceil(epochs * n / batch_size)")
    if "T" in values:
        return read_integer("T", values["T"])
    if "epochs" in values:
        epochs = read_real("epochs", values["epochs"], POSITIVE)
        return max(1, math.ceil(exact(epochs) / exact_probability))
    raise TextError("T is required (number of steps, an integer >= 1; epochs with n and batch_size also work)")
