"""A run from its parameters: the training form, the single phase and the relation of its batches.

The rules that decide which runs are valid, shared by the command line and the Python API. A
run of one phase is p, sigma, T, or the training form n, batch_size, epochs with p = batch_size / n
and T = ceil(epochs / p) (exactly: epochs / p is computed on the decimals as written, never
rounded down); noise_std with sensitivity instead of sigma (sigma = noise_std / sensitivity);
mechanism="laplace" with scale. `with_relation` applies sampling, neighbours and
examples_per_user to every phase, and refuses a combination no accountant covers.

Refusals are `RunError`s (a `ParameterError`) naming each parameter by its keyword (`T`,
`batch_size`); the command line names them by their options (`--T`, `--batch-size`).
Numbers are quoted as they were written (`core.text.written`).
"""

from __future__ import annotations

import math
from enum import Enum
from typing import TYPE_CHECKING, Any

from dpcalc.core.phases import EPOCH_SAMPLINGS, Phase
from dpcalc.core.record import Record
from dpcalc.core.text import exact, written
from dpcalc.core.validation import MAX_COUNT, MAX_COUNT_DIGITS, RunError, conflict

if TYPE_CHECKING:
    from fractions import Fraction

class RunParameters(Record):
    """A run of one phase by its parameters, each None when not given: p, sigma (or noise_std with
    sensitivity), T, or the training form n, batch_size, epochs; mechanism ("gaussian", the
    default, or "laplace") and the Laplace scale."""

    p: float | None = None
    sigma: float | None = None
    noise_std: float | None = None
    sensitivity: float | None = None
    T: int | None = None
    n: int | None = None
    batch_size: int | None = None
    epochs: float | None = None
    mechanism: str | Enum | None = None
    scale: float | None = None


SENSITIVITY_WITH_SIGMA = "{sensitivity} goes with {noise_std} (or {scale}): {sigma} is already noise std / sensitivity"


def single_phase(values: RunParameters) -> list[Phase]:
    """The run of one phase from its parameters."""
    mechanism = values.mechanism
    if isinstance(mechanism, Enum):
        mechanism = mechanism.value
    if mechanism is None or mechanism == "gaussian":
        if values.scale is not None:
            raise RunError("{scale} is for {mechanism} laplace; the gaussian mechanism takes {sigma}")
        probability, noise, steps = training_run(values)
        return [Phase("gaussian", sampling_probability=probability, noise_multiplier=noise, steps=steps,
                      epoch_steps=epoch_steps(values.n, values.batch_size))]
    for name in ("sigma", "noise_std", "n", "batch_size", "epochs"):
        if getattr(values, name) is not None:
            raise conflict("{mechanism} laplace", "{" + name + "}",
                           "the laplace mechanism takes {scale}, {T} and optionally {p}")
    scale, releases, p, sensitivity = (getattr(values, name) for name in ("scale", "T", "p", "sensitivity"))
    if scale is None:
        raise RunError("{scale} is required with {mechanism} laplace (Laplace scale b, > 0)")
    if releases is None:
        raise RunError("{T} is required (number of releases, an integer >= 1)")
    probability = 1.0 if p is None else p
    return [Phase("laplace", sampling_probability=probability, scale=scale if sensitivity is None else scale / sensitivity,
                  steps=releases)]


def epoch_steps(n: int | None, batch_size: int | None) -> int | None:
    """The steps of an epoch, ceil(n / batch size), when both are given (shuffled batches need it)."""
    if n is None or batch_size is None or batch_size > n:
        return None
    return -(-n // batch_size)


def training_run(values: RunParameters) -> tuple[float, float, int]:
    """(p, sigma, T) from either p, sigma, T or the training form n, batch_size, epochs.

    p comes from p or from batch_size / n; T from T or from ceil(epochs / p). Each
    quantity must come from exactly one source, so an inconsistent mix is refused.
    """
    p, T, n, batch_size, epochs = (getattr(values, name) for name in ("p", "T", "n", "batch_size", "epochs"))
    check_training_form(p, T, n, batch_size, epochs)
    sigma = noise_multiplier(values.sigma, values.noise_std, values.sensitivity)
    if p is not None and epochs is None:
        # T does not come from epochs / p: p needs no exact form (and `fractions` is not imported)
        return p, sigma, steps_of(T, None, None)
    probability, exact_probability = sampling_probability(p, n, batch_size)
    return probability, sigma, steps_of(T, epochs, exact_probability)


def noise_multiplier(sigma: float | None, noise_std: float | None, sensitivity: float | None) -> float:
    """sigma from sigma, or from noise_std / sensitivity (sensitivity 1 when not given).

    A noise multiplier is already relative to the sensitivity, so a sensitivity beside sigma is
    refused rather than silently ignored or applied twice.
    """
    if sigma is not None and noise_std is not None:
        raise conflict("{sigma}", "{noise_std}", "sigma is noise std / sensitivity; give one")
    if sigma is not None and sensitivity is not None:
        raise RunError(SENSITIVITY_WITH_SIGMA)
    if noise_std is not None:
        noise: float = noise_std if sensitivity is None else noise_std / sensitivity
        return noise
    if sensitivity is not None:
        raise RunError("{sensitivity} needs {noise_std} (the noise std; sigma = noise std / sensitivity)")
    if sigma is None:
        raise RunError("{sigma} is required (noise multiplier, > 0)")
    given: float = sigma  # as given: a number parsed from text keeps its text
    return given


def check_training_form(p: float | None, T: int | None, n: int | None, batch_size: int | None,
                        epochs: float | None) -> None:
    """Refuse a mix of the two forms: p from p or batch_size / n, T from T or epochs."""
    if p is not None and (n is not None or batch_size is not None):
        raise conflict("{p}", "{n}/{batch_size}", "p is batch-size / n; give one form")
    if T is not None and epochs is not None:
        raise conflict("{T}", "{epochs}", "T is ceil(epochs * n / batch-size); give one form")
    if (n is None) != (batch_size is None):
        raise RunError("{n} needs {batch_size} (p = batch-size / n)" if batch_size is None
                       else "{batch_size} needs {n} (p = batch-size / n)")


def sampling_probability(p: float | None, n: int | None, batch_size: int | None) -> tuple[float, Fraction]:
    """p, and p as an exact fraction (of the decimal given, or batch_size / n), so that epochs / p is exact."""
    from fractions import Fraction

    if p is not None:
        return p, exact(p)
    if n is not None and batch_size is not None:
        if batch_size > n:
            raise RunError("{batch_size} must be in [1, n] = [1, {n_value}], got {value}", n_value=n,
                           requirement=f"in [1, n] = [1, {n}]", received=written(batch_size), value=written(batch_size))
        return batch_size / n, Fraction(batch_size, n)
    raise RunError("give the sampling probability: {p}, or {n} with {batch_size}")


def steps_of(T: int | None, epochs: float | None, exact_probability: Fraction | None) -> int:
    """T as given, or ceil(epochs / p) from epochs (which needs `exact_probability`)."""
    if T is not None:
        return T
    if epochs is not None:
        assert exact_probability is not None, "with epochs, callers pass p as an exact fraction"
        if exact_probability == 0:
            raise RunError("{epochs} needs {p} above 0 (T = ceil(epochs / p), and p = 0 samples no record in any "
                           "number of steps); give {T} with {p} 0")
        # Exact rational arithmetic: a float quotient such as 60 * 60000 / 256 is rounded up
        # (never down, which would under-count steps) only when it is not already whole.
        steps = max(1, math.ceil(exact(epochs) / exact_probability))
        if steps >= MAX_COUNT:
            raise RunError("{epochs} {value} gives T = ceil(epochs / p) above 1e{digits} steps, which is more than "
                           "dpcalc accounts; lower {epochs} or raise p", value=written(epochs).strip(),
                           digits=MAX_COUNT_DIGITS)
        return steps
    raise RunError("give the number of steps: {T}, or {epochs}")


def with_relation(phases: list[Phase], sampling: str | None, neighbours: str | None,
                  examples_per_user: int | None = None) -> list[Phase]:
    """The phases under `sampling`, `neighbours` and `examples_per_user` (each applies to every
    phase; None: poisson, add-remove, 1), refused with the parameter named where the combination
    has no accounting (`core.phases.unsupported`)."""
    import dataclasses
    from typing import cast

    from dpcalc.core.limits import EXAMPLES_PER_USER
    from dpcalc.core.phases import UNIFORM_ADD_REMOVE_NEEDS_B_BELOW_N, unsupported

    chosen_sampling = "poisson" if sampling is None else _value(sampling)
    chosen_neighbours = "add-remove" if neighbours is None else _value(neighbours)
    per_user = 1 if examples_per_user is None else examples_per_user
    if not EXAMPLES_PER_USER.contains(per_user):  # the mixture pair's cost grows with it (core.limits)
        raise RunError("{examples_per_user} must be {range} (the user-level pair's work grows with it; beyond, use "
                       "group privacy: dpcalc convert {group}), got {value}", range=EXAMPLES_PER_USER.requirement,
                       requirement=EXAMPLES_PER_USER.requirement, received=per_user, value=per_user)
    for item in phases:
        why = unsupported(item.mechanism, chosen_sampling, chosen_neighbours, per_user, item.sampling_probability)
        if why == UNIFORM_ADD_REMOVE_NEEDS_B_BELOW_N:
            raise RunError("{sampling} uniform: {why}", why=why)
        if why is None:
            if chosen_sampling in EPOCH_SAMPLINGS and item.epoch_steps is None:
                raise RunError("{sampling} {chosen} needs {n} and {batch_size} (or the phase keys n and "
                               "batch_size): an epoch is ceil(n / batch size) steps, which p alone does not say",
                               chosen=chosen_sampling)
            continue
        given: dict[str, Any] = {"chosen": chosen_sampling, "relation": chosen_neighbours, "why": why, "value": per_user}
        if chosen_sampling == "shuffle" and chosen_neighbours == "add-remove" and item.mechanism == "gaussian":
            raise RunError("{sampling} shuffle needs {neighbours} zero-out or replace-one, got {neighbours} "
                           "{relation}: {why}", **given)
        if chosen_sampling == "allocation" and chosen_neighbours == "replace-one" and item.mechanism == "gaussian":
            raise RunError("{sampling} allocation needs {neighbours} add-remove or zero-out, got {neighbours} "
                           "{relation}: {why}", **given)
        if per_user > 1 and item.mechanism == "gaussian":
            raise RunError("{examples_per_user} must be 1 with {sampling} {chosen} and {neighbours} {relation}, got "
                           "{value}: {why}", **given)
        if per_user > 1:
            raise RunError("{examples_per_user} must be 1 for {mechanism} laplace, got {value}", **given)
        if chosen_sampling != "poisson":
            raise RunError("{sampling} must be poisson for {mechanism} laplace, got {chosen}", **given)
        raise RunError("{neighbours} must be add-remove or zero-out for {mechanism} laplace, got {relation}", **given)
    return [dataclasses.replace(item, sampling=cast("Sampling", chosen_sampling),
                                neighbours=cast("Neighbours", chosen_neighbours), examples_per_user=per_user)
            for item in phases]


def _value(choice: str) -> str:
    """A choice's text (a command-line choice is an Enum of str)."""
    return str(choice.value) if isinstance(choice, Enum) else choice


if TYPE_CHECKING:
    from dpcalc.core.phases import Neighbours, Sampling


def check_cap_dataset(n: object) -> None:
    """Truncated Poisson sampling (a cap on the batch size) needs the dataset size: the chance of a
    batch above the cap depends on it (docs/mathematics.md, "Truncated Poisson sampling")."""
    if n is None:
        raise RunError("{max_batch_size} needs the dataset size: give the run as {n}, {batch_size} and {epochs} "
                       "(or {T}), so that the chance of a batch above the cap is known")


def check_capped_phases(phases: list[Phase]) -> None:
    """A cap on the batch size applies to Poisson-sampled Gaussian phases only."""
    for item in phases:
        if item.mechanism != "gaussian" or item.sampling != "poisson":
            raise RunError("{max_batch_size} caps Poisson batches of the gaussian mechanism, got {scheme} sampling of "
                           "the {kind} mechanism", scheme=item.sampling, kind=item.mechanism)
