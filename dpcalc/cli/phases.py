"""The phases of a run from the command line: the single-phase flags or repeated --phase.

Shared by the accountants that compose heterogeneous runs (`rdp`, `pld`): a command declares
the options with the aliases below and calls `parse_phases` once. A run is either

  * the short form, one phase: --p/--sigma/--T (or --n/--batch-size/--epochs), optionally
    --mechanism laplace --scale B (then --T, and --p = 1 by default), or
  * one or more `--phase KEY=VALUE,...` with keys
      mechanism  gaussian (default) or laplace
      p          sampling probability in [0, 1] (default 1: no subsampling; 0: nothing sampled)
      sigma      noise multiplier (gaussian): noise std / L2 sensitivity
      noise_std  instead of sigma: the noise std, with sensitivity (sigma = noise_std / sensitivity)
      scale      Laplace scale b (laplace), accounted as b / sensitivity
      sensitivity  the sensitivity the noise std or the scale is divided by (default 1; not with sigma)
      T          number of steps (required: a forgotten T must not silently mean 1)
      n, batch_size, epochs   the training form: p = batch_size / n, T = ceil(epochs / p)

The flags --noise-std and --sensitivity are the single-phase form of the same: the noise a
user adds and the sensitivity of the query, which `noise_multiplier` turns into sigma (and
`parse_phases` into the Laplace scale per unit of sensitivity).

Mixing --phase with the single-phase flags is an error. Errors name the phase by its position:
"--phase 2: sigma must be in (0, inf), got -1".

The flags arrive as numbers (their click types parse them: dpcalc.cli.options); this module
resolves the training form into p and T (`training_run`), which `gdp` and `calibrate` use too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any

from dpcalc.cli.declare import Option
from dpcalc.cli.options import (
    InputError,
    SweepableReal,
    conflict,
    exact,
    number,
    parse_integer,
    parse_real,
    sweepable,
    written,
)
from dpcalc.cli.output import Table, format_number
from dpcalc.core.phases import EPOCH_SAMPLINGS, Phase
from dpcalc.core.validation import MAX_COUNT, MAX_COUNT_DIGITS, POSITIVE, POSITIVE_INTEGER, PROBABILITY

if TYPE_CHECKING:
    from fractions import Fraction

    from dpcalc.core.phases import Neighbours, Sampling


class MechanismChoice(str, Enum):
    gaussian = "gaussian"
    laplace = "laplace"


PhaseList = Annotated[
    list[str] | None,
    Option(
        "--phase",
        metavar="KEY=VALUE,...",
        help=(
            "One phase of the run; repeat for several (their privacy losses compose). Keys: "
            "p, sigma (or noise_std with sensitivity), T, mechanism (gaussian|laplace), scale, or the training "
            "form n, batch_size, epochs. p defaults to 1; T is required. Example: --phase p=0.01,sigma=0.9,T=1800. "
            "Not with the single-phase flags."
        ),
    ),
]
Mechanism = Annotated[
    MechanismChoice | None,
    Option(
        "--mechanism",
        help="Single-phase form: gaussian (default; --sigma) or laplace (--scale).",
        case_sensitive=False,
    ),
]
Scale = Annotated[
    SweepableReal | None,
    Option("--scale", metavar="FLOAT", help="Laplace scale b (> 0) of --mechanism laplace, accounted as b / --sensitivity (L1).",
                 click_type=sweepable(POSITIVE)),
]

class SamplingChoice(str, Enum):
    poisson = "poisson"
    uniform = "uniform"
    shuffle = "shuffle"
    allocation = "allocation"


class NeighboursChoice(str, Enum):
    add_remove = "add-remove"
    replace_one = "replace-one"
    zero_out = "zero-out"


SamplingOption = Annotated[
    SamplingChoice | None,
    Option(
        "--sampling",
        help=("How each step's batch is drawn: poisson (each record independently with probability p; "
              "default), uniform (a fixed-size batch of b of the n records, p = b/n), shuffle (each epoch "
              "a random permutation cut into ceil(n/b) batches; needs --neighbours zero-out or "
              "replace-one) or allocation (random allocation, balls and bins: each record joins one "
              "of an epoch's ceil(n/b) steps at random; add-remove or zero-out). shuffle and allocation "
              "need --n and --batch-size. Applies to every phase."),
        case_sensitive=False,
    ),
]
NeighboursOption = Annotated[
    NeighboursChoice | None,
    Option(
        "--neighbours",
        help=("Neighbouring datasets: add-remove (one record added or removed; default), replace-one "
              "(one record replaced by another) or zero-out (one record replaced by a null record). "
              "sigma is always the noise std over the clipping norm C."),
        case_sensitive=False,
    ),
]

ExamplesPerUserOption = Annotated[
    int | None,
    Option(
        "--examples-per-user",
        metavar="INT",
        help=("User-level privacy: each user contributes up to this many examples, each sampled on its "
              "own (Poisson; add-remove or zero-out users) [default: 1, example level]."),
        click_type=number(POSITIVE_INTEGER),
    ),
]

PHASE_KEYS = ("mechanism", "p", "sigma", "noise_std", "sensitivity", "scale", "T", "n", "batch_size", "epochs")


def phase_inputs(item: Phase) -> dict:
    """How a resolved phase is echoed in JSON `inputs.phases`."""
    return {
        "mechanism": item.mechanism,
        "p": item.sampling_probability,
        "sigma": item.noise_multiplier,
        "scale": item.scale,
        "T": item.steps,
        "sampling": item.sampling,
        "neighbours": item.neighbours,
        "examples_per_user": item.examples_per_user,
        "epoch_steps": item.epoch_steps if item.sampling in EPOCH_SAMPLINGS else None,
    }


def with_relation(phases: list[Phase], sampling: SamplingChoice | None,
                  neighbours: NeighboursChoice | None, examples_per_user: int | None = None) -> list[Phase]:
    """The phases under --sampling, --neighbours and --examples-per-user (each applies to every
    phase), refused with the option named where the combination has no accounting
    (`core.phases.unsupported`)."""
    import dataclasses
    from typing import cast

    from dpcalc.core.phases import UNIFORM_ADD_REMOVE_NEEDS_B_BELOW_N, unsupported

    chosen_sampling = (sampling or SamplingChoice.poisson).value
    chosen_neighbours = (neighbours or NeighboursChoice.add_remove).value
    per_user = 1 if examples_per_user is None else examples_per_user
    from dpcalc.core.limits import EXAMPLES_PER_USER

    if not EXAMPLES_PER_USER.contains(per_user):  # the mixture pair's cost grows with it (core.limits)
        raise InputError(f"--examples-per-user must be {EXAMPLES_PER_USER.requirement} (the user-level pair's work "
                         f"grows with it; beyond, use group privacy: dpcalc convert --group), got {per_user}")
    for item in phases:
        why = unsupported(item.mechanism, chosen_sampling, chosen_neighbours, per_user)
        if why is None:
            if chosen_sampling == "uniform" and chosen_neighbours == "add-remove" and item.sampling_probability == 1.0:
                raise InputError(f"--sampling uniform: {UNIFORM_ADD_REMOVE_NEEDS_B_BELOW_N}")
            if chosen_sampling in EPOCH_SAMPLINGS and item.epoch_steps is None:
                raise InputError(f"--sampling {chosen_sampling} needs --n and --batch-size (or the phase keys n and "
                                 "batch_size): an epoch is ceil(n / batch size) steps, which p alone does not say")
            continue
        if chosen_sampling == "shuffle" and chosen_neighbours == "add-remove" and item.mechanism == "gaussian":
            raise InputError(f"--sampling shuffle needs --neighbours zero-out or replace-one, got --neighbours "
                             f"{chosen_neighbours}: {why}")
        if chosen_sampling == "allocation" and chosen_neighbours == "replace-one" and item.mechanism == "gaussian":
            raise InputError(f"--sampling allocation needs --neighbours add-remove or zero-out, got --neighbours "
                             f"{chosen_neighbours}: {why}")
        if per_user > 1 and item.mechanism == "gaussian":
            raise InputError(f"--examples-per-user must be 1 with --sampling {chosen_sampling} and --neighbours "
                             f"{chosen_neighbours}, got {per_user}: {why}")
        if per_user > 1:
            raise InputError(f"--examples-per-user must be 1 for --mechanism laplace, got {per_user}")
        if chosen_sampling != "poisson":
            raise InputError(f"--sampling must be poisson for --mechanism laplace, got {chosen_sampling}")
        raise InputError(f"--neighbours must be add-remove or zero-out for --mechanism laplace, got {chosen_neighbours}")
    return [dataclasses.replace(item, sampling=cast("Sampling", chosen_sampling),
                                neighbours=cast("Neighbours", chosen_neighbours), examples_per_user=per_user)
            for item in phases]


# The options of a training run and the single-phase flags: (option, input name), in the order
# a conflict names them.
TRAINING_FLAGS = (("--p", "p"), ("--sigma", "sigma"), ("--noise-std", "noise_std"), ("--sensitivity", "sensitivity"),
                  ("--T", "T"), ("--n", "n"), ("--batch-size", "batch_size"), ("--epochs", "epochs"))
_FLAGS = (*TRAINING_FLAGS, ("--mechanism", "mechanism"), ("--scale", "scale"))


def parse_phases(phase_specs: list[str] | None, flags: Mapping[str, Any]) -> list[Phase]:
    """The run's phases, from repeated --phase or from the single-phase flags (not both).

    `flags` holds the flags' values by input name (p, sigma, noise_std, sensitivity, T, n,
    batch_size, epochs, mechanism, scale; a missing one is not given).
    """
    given = {name: flags.get(name) for _, name in _FLAGS}
    if phase_specs:
        for option, name in _FLAGS:
            if given[name] is not None:
                raise conflict("--phase", option, "describe every phase with --phase, or give one phase with the flags")
        return [parse_phase_spec(spec, index) for index, spec in enumerate(phase_specs, start=1)]
    mechanism = given["mechanism"]
    if mechanism is None or mechanism == MechanismChoice.gaussian:
        if given["scale"] is not None:
            raise InputError("--scale is for --mechanism laplace; the gaussian mechanism takes --sigma")
        probability, noise, steps = training_run(given)
        return [Phase("gaussian", sampling_probability=probability, noise_multiplier=noise, steps=steps,
                      epoch_steps=epoch_steps(given.get("n"), given.get("batch_size")))]
    for option, name in (("--sigma", "sigma"), ("--noise-std", "noise_std"), ("--n", "n"), ("--batch-size", "batch_size"),
                         ("--epochs", "epochs")):
        if given[name] is not None:
            raise conflict("--mechanism laplace", option, "the laplace mechanism takes --scale, --T and optionally --p")
    if given["scale"] is None:
        raise InputError("--scale is required with --mechanism laplace (Laplace scale b, > 0)")
    if given["T"] is None:
        raise InputError("--T is required (number of releases, an integer >= 1)")
    probability = 1.0 if given["p"] is None else given["p"]
    scale = given["scale"] if given["sensitivity"] is None else given["scale"] / given["sensitivity"]
    return [Phase("laplace", sampling_probability=probability, scale=scale, steps=given["T"])]


def epoch_steps(n: int | None, batch_size: int | None) -> int | None:
    """The steps of an epoch, ceil(n / batch size), when both are given (shuffled batches need it)."""
    if n is None or batch_size is None or batch_size > n:
        return None
    return -(-n // batch_size)


def training_run(values: Mapping[str, Any]) -> tuple[float, float, int]:
    """(p, sigma, T) from either --p/--sigma/--T or the training form --n/--batch-size/--epochs.

    `values` holds the options by input name (p, sigma, T, n, batch_size, epochs). p comes from
    --p or from --batch-size / --n; T from --T or from ceil(epochs / p). Each quantity must come
    from exactly one source, so an inconsistent mix is refused.
    """
    p, T, n, batch_size, epochs = (values.get(name) for name in ("p", "T", "n", "batch_size", "epochs"))
    check_training_form(p, T, n, batch_size, epochs)
    sigma = noise_multiplier(values)
    if p is not None and epochs is None:
        # T does not come from epochs / p: p needs no exact form (and `fractions` is not imported)
        return p, sigma, steps_of(T, None, None)
    probability, exact_probability = sampling_probability(p, n, batch_size)
    return probability, sigma, steps_of(T, epochs, exact_probability)


def noise_multiplier(values: Mapping[str, Any]) -> float:
    """sigma from --sigma, or from --noise-std / --sensitivity (sensitivity 1 when not given).

    A noise multiplier is already relative to the sensitivity, so --sensitivity beside --sigma
    is refused rather than silently ignored or applied twice.
    """
    sigma, noise_std, sensitivity = (values.get(name) for name in ("sigma", "noise_std", "sensitivity"))
    if sigma is not None and noise_std is not None:
        raise conflict("--sigma", "--noise-std", "sigma is noise std / sensitivity; give one")
    if sigma is not None and sensitivity is not None:
        raise InputError(SENSITIVITY_WITH_SIGMA)
    if noise_std is not None:
        return noise_std if sensitivity is None else noise_std / sensitivity
    if sensitivity is not None:
        raise InputError("--sensitivity needs --noise-std (the noise std; sigma = noise std / sensitivity)")
    if sigma is None:
        raise InputError("--sigma is required (noise multiplier, > 0)")
    return sigma


SENSITIVITY_WITH_SIGMA = "--sensitivity goes with --noise-std (or --scale): --sigma is already noise std / sensitivity"


def check_training_form(p: float | None, T: int | None, n: int | None, batch_size: int | None,
                        epochs: float | None) -> None:
    """Refuse a mix of the two forms: p from --p or --batch-size / --n, T from --T or --epochs."""
    if p is not None and (n is not None or batch_size is not None):
        raise conflict("--p", "--n/--batch-size", "p is batch-size / n; give one form")
    if T is not None and epochs is not None:
        raise conflict("--T", "--epochs", "T is ceil(epochs * n / batch-size); give one form")
    if (n is None) != (batch_size is None):
        given, missing = ("--n", "--batch-size") if batch_size is None else ("--batch-size", "--n")
        raise InputError(f"{given} needs {missing} (p = batch-size / n)")


def sampling_probability(p: float | None, n: int | None, batch_size: int | None) -> tuple[float, Fraction]:
    """p, and p as an exact fraction (of the decimal given, or batch-size / n), so that epochs / p is exact."""
    from fractions import Fraction

    if p is not None:
        return p, exact(p)
    if n is not None and batch_size is not None:
        if batch_size > n:
            raise InputError(f"--batch-size must be in [1, n] = [1, {n}], got {written(batch_size)}")
        return batch_size / n, Fraction(batch_size, n)
    raise InputError("give the sampling probability: --p, or --n with --batch-size")


def steps_of(T: int | None, epochs: float | None, exact_probability: Fraction | None) -> int:
    """T from --T, or ceil(epochs / p) from --epochs (which needs `exact_probability`)."""
    if T is not None:
        return T
    if epochs is not None:
        assert exact_probability is not None, "with --epochs, callers pass p as an exact fraction"
        if exact_probability == 0:
            raise InputError("--epochs needs --p above 0 (T = ceil(epochs / p), and p = 0 samples no record in any "
                             "number of steps); give --T with --p 0")
        # Exact rational arithmetic: a float quotient such as 60 * 60000 / 256 is rounded up
        # (never down, which would under-count steps) only when it is not already whole.
        steps = max(1, math.ceil(exact(epochs) / exact_probability))
        if steps >= MAX_COUNT:
            raise InputError(
                f"--epochs {written(epochs).strip()} gives T = ceil(epochs / p) above 1e{MAX_COUNT_DIGITS} steps, "
                f"which is more than dpcalc accounts; lower --epochs or raise p"
            )
        return steps
    raise InputError("give the number of steps: --T, or --epochs")


def parse_phase_spec(spec: str, index: int) -> Phase:
    """One `--phase` value, e.g. "p=0.01,sigma=0.9,T=1800"; `index` counts from 1 for messages."""
    where = f"--phase {index}"
    values: dict[str, str] = {}
    for item in spec.split(","):
        item = item.strip()
        if not item:
            continue
        key, separator, value = item.partition("=")
        # batch-size and noise-std as the options spell them, beside batch_size and noise_std
        key, value = key.strip().replace("-", "_"), value.strip()
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
        if "sigma" in values and "noise_std" in values:
            raise InputError(f"{where}: sigma and noise_std cannot be given together; sigma is noise_std / sensitivity")
        if "sigma" in values and "sensitivity" in values:
            raise InputError(f"{where}: sensitivity goes with noise_std (or scale): sigma is already noise std / "
                             "sensitivity")
        if "sigma" not in values and "noise_std" not in values:
            raise InputError(f"{where}: sigma is required (noise multiplier, > 0; or noise_std with sensitivity)")
    else:
        for key in ("sigma", "noise_std"):
            if key in values:
                raise InputError(f"{where}: {key} is for the gaussian mechanism; mechanism=laplace takes scale")
        if "scale" not in values:
            raise InputError(f"{where}: scale is required for mechanism=laplace (Laplace scale b, > 0)")

    sensitivity = (parse_real(f"{where}: sensitivity", values["sensitivity"], POSITIVE)
                   if "sensitivity" in values else None)
    probability, exact_probability = _phase_probability(values, where)
    steps = _phase_steps(values, exact_probability, where)
    if mechanism == "gaussian":
        per_epoch = None
        if "n" in values:  # with batch_size (checked by _phase_probability): p = b/n exactly
            per_epoch = math.ceil(1 / exact_probability)
        noise: float
        if "sigma" in values:
            noise = parse_real(f"{where}: sigma", values["sigma"], POSITIVE)
        else:
            noise = parse_real(f"{where}: noise_std", values["noise_std"], POSITIVE)
            noise = noise if sensitivity is None else noise / sensitivity
        return Phase(
            "gaussian",
            sampling_probability=probability,
            noise_multiplier=noise,
            steps=steps,
            epoch_steps=per_epoch,
        )
    scale = parse_real(f"{where}: scale", values["scale"], POSITIVE)
    return Phase(
        "laplace",
        sampling_probability=probability,
        scale=scale if sensitivity is None else scale / sensitivity,
        steps=steps,
    )


def _phase_probability(values: dict[str, str], where: str) -> tuple[float, Fraction]:
    """p from `p`, or from `batch_size / n`; 1 (no subsampling) when neither is given."""
    from fractions import Fraction  # exact p, so that epochs / p is exact (imported only here: start-up time)

    training = [key for key in ("n", "batch_size") if key in values]
    if "p" in values and training:
        raise InputError(f"{where}: p and {training[0]} cannot be given together; p is batch_size / n")
    if "p" in values:
        probability = parse_real(f"{where}: p", values["p"], PROBABILITY)
        return probability, exact(probability)
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
        epochs = parse_real(f"{where}: epochs", values["epochs"], POSITIVE)
        return max(1, math.ceil(exact(epochs) / exact_probability))
    raise InputError(f"{where}: T is required (number of steps, an integer >= 1; epochs with n and batch_size also work)")


def phases_table(phases: list[Phase]) -> Table:
    """The phases of a run of several, one row each (rdp and pld print it below their summary)."""
    rows = []
    for index, item in enumerate(phases, start=1):
        noise = (
            f"sigma = {format_number(item.noise_multiplier)}"
            if item.mechanism == "gaussian"
            else f"scale = {format_number(item.scale)}"
        )
        rows.append((str(index), item.mechanism, format_number(item.sampling_probability), noise, str(item.steps)))
    return Table(columns=("phase", "mechanism", "p", "noise", "T"), rows=rows, title="Phases")


def phases_title(accountant: str, phases: list[Phase], *, laplace_p: bool = True) -> str:
    """A summary table's title: "{accountant}: p = 0.004, sigma = 1.1, T = 10000" for one phase,
    "{accountant} of 3 phases (below)" for several. `laplace_p`: a Laplace phase shows its p too
    (rdp's are never sampled)."""
    if len(phases) > 1:
        return f"{accountant} of {len(phases)} phases (below)"
    return f"{accountant}: {phase_caption(phases[0], laplace_p=laplace_p)}"


def phase_caption(item: Phase, *, laplace_p: bool = True) -> str:
    """"p = 0.004, sigma = 1.1, T = 10000" (a Laplace phase: its scale, and p with `laplace_p`)."""
    if item.mechanism == "gaussian":
        run = [f"p = {format_number(item.sampling_probability)}", f"sigma = {format_number(item.noise_multiplier)}"]
    else:
        run = [f"p = {format_number(item.sampling_probability)}"] if laplace_p else []
        run.append(f"Laplace, scale = {format_number(item.scale)}")
    return ", ".join([*run, f"T = {item.steps}"])


def phases_caption(phases: Sequence[Phase]) -> str:
    """A figure's run: the one phase's caption, or each phase's in parentheses, joined by " then "."""
    if len(phases) == 1:
        return phase_caption(phases[0])
    return " then ".join(f"({phase_caption(item)})" for item in phases)
