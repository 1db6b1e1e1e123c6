"""The phases of a run from the command line: the single-phase flags or repeated --phase.

Shared by the accountants that compose heterogeneous runs (`rdp`, `pld`, `risk`): a command
takes the run's options as one group (`PhaseFlags`, or `RunOptions` with --examples-per-user),
puts its numbers (`RunNumbers`) in its request, and turns each row's numbers into the run's
phases with `phases`. A run is either

  * the short form, one phase: --p/--sigma/--T (or --n/--batch-size/--epochs), optionally
    --mechanism laplace --scale B (then --T, and --p = 1 by default), resolved by the core
    (`core.training.single_phase`: --sigma becomes the phase's noise multiplier; --noise-std
    with --sensitivity is divided first), or
  * one or more `--phase KEY=VALUE,...`, each read by the core (`core.phase_text`, whose keys
    mechanism, p, sigma, noise_std, sensitivity, scale, T, n, batch_size, epochs mean what the
    flags do; T is required: a forgotten T must not silently mean 1).

Mixing --phase with the single-phase flags is an error. Errors name the phase by its position:
"--phase 2: sigma must be in (0, inf), got -1".

The flags arrive as numbers (their click types parse them: dpcalc.cli.options); the core
resolves the single-phase form and the training form into p and T and applies --sampling,
--neighbours and --examples-per-user (dpcalc.core.training, its refusals worded with the
options' names: `options.options_named`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from enum import Enum
from functools import partial
from typing import Annotated, Any

from dpcalc.cli.declare import Option
from dpcalc.cli.options import (
    TRAINING_FLAGS,
    BatchSize,
    DatasetSize,
    Epochs,
    InputError,
    NoiseMultiplier,
    NoiseStd,
    Numbers,
    Parsed,
    SamplingProbability,
    Sensitivity,
    Steps,
    SweepableReal,
    Swept,
    conflict,
    number,
    one,
    options_named,
    parse_list,
    sweepable,
)
from dpcalc.cli.output import Table, format_number
from dpcalc.core.limits import ACCURACY, DEFAULT_ACCURACY
from dpcalc.core.phases import EPOCH_SAMPLINGS, Phase
from dpcalc.core.record import Record, Value
from dpcalc.core.training import RunParameters, single_phase, with_relation
from dpcalc.core.validation import POSITIVE, POSITIVE_INTEGER, Interval


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

# --accuracy of pld and risk (here, not in options.py: the closed-form commands' start-up does
# not load core.limits for it)
Accuracy = Annotated[
    SweepableReal | None,
    Option(
        "--accuracy",
        metavar="FLOAT",
        help=f"Target relative width of the PLD accountant's certified interval, in (0, 1) [default: {DEFAULT_ACCURACY:g}].",
        click_type=sweepable(ACCURACY),
    ),
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

class RunNumbers(Record):
    """The numbers of a one-phase run as the flags give them (each a number, a `Swept` in a
    sweep's request, or None when not given), in the order the JSON `inputs` echo them."""

    p: float | Swept | None = None
    sigma: float | Swept | None = None
    noise_std: float | Swept | None = None
    sensitivity: float | None = None
    scale: float | Swept | None = None
    T: int | Swept | None = None
    n: int | Swept | None = None
    batch_size: int | Swept | None = None
    epochs: float | Swept | None = None


class PhaseFlags(Record):
    """The run of rdp: the single-phase flags (the training form among them) or repeated --phase,
    and the relation of its batches (--sampling, --neighbours)."""

    p: SamplingProbability = None
    sigma: NoiseMultiplier = None
    noise_std: NoiseStd = None
    sensitivity: Sensitivity = None
    T: Steps = None
    n: DatasetSize = None
    batch_size: BatchSize = None
    epochs: Epochs = None
    mechanism: Mechanism = None
    scale: Scale = None
    phase: PhaseList = None
    sampling: SamplingOption = None
    neighbours: NeighboursOption = None

    def numbers(self) -> RunNumbers:
        """The run's numbers, for the command's request (which sweeps them)."""
        return RunNumbers(p=self.p, sigma=self.sigma, noise_std=self.noise_std, sensitivity=self.sensitivity,
                          scale=self.scale, T=self.T, n=self.n, batch_size=self.batch_size, epochs=self.epochs)

    def phases(self, numbers: RunNumbers, *, examples_per_user: int | None = None) -> list[Phase]:
        """The run's phases for one row of the request: --phase, or the core's single phase of the
        flags' `numbers` (`core.training.single_phase`: --sigma becomes the phase's noise multiplier),
        under --sampling and --neighbours."""
        parameters = RunParameters(p=one(numbers.p), sigma=one(numbers.sigma), noise_std=one(numbers.noise_std),
                                   sensitivity=numbers.sensitivity, T=one(numbers.T), n=one(numbers.n),
                                   batch_size=one(numbers.batch_size), epochs=one(numbers.epochs),
                                   mechanism=self.mechanism, scale=one(numbers.scale))
        return with_relation(parse_phases(self.phase, parameters), self.sampling, self.neighbours, examples_per_user)


class RunOptions(PhaseFlags):
    """The run of pld and risk: rdp's, and user-level privacy (--examples-per-user)."""

    examples_per_user: ExamplesPerUserOption = None

    def phases(self, numbers: RunNumbers, *, examples_per_user: int | None = None) -> list[Phase]:
        return super().phases(numbers, examples_per_user=self.examples_per_user)


# The mechanism of `dpcalc mf` and `calibrate --mechanism mf` (docs/matrix-factorisation.md);
# a Toeplitz coefficient is any finite real.
_FINITE = Interval(-math.inf, math.inf)


Bands = Annotated[int | None, Option("--bands", metavar="INT", click_type=number(POSITIVE_INTEGER),
                                     help="Amplified BandMF with b bands and b partitions (an integer >= 1).")]
SamplingMF = Annotated[str | None, Option("--sampling", metavar="poisson",
                                          help="With --bands: poisson (the only sampling amplified BandMF accounts).")]
StrategyFile = Annotated[str | None, Option("--strategy", metavar="FILE",
                                            help="The strategy matrix C: a .npy file or a CSV file of rows, "
                                                 "square and lower-triangular, one row per step.")]
Coefficients = Annotated[Numbers | None, Option("--coefficients", metavar="c0,c1,...",
                                                click_type=Parsed(partial(parse_list, interval=_FINITE)),
                                                help="Instead of --strategy: a banded Toeplitz C, C[i, j] = c[i - j].")]
Participations = Annotated[int | None, Option("--participations", metavar="INT", click_type=number(POSITIVE_INTEGER),
                                              help="With --strategy or --coefficients: at most k steps a record.")]
MinSeparation = Annotated[int | None, Option("--min-sep", metavar="INT", click_type=number(POSITIVE_INTEGER),
                                             help="With --participations: a record's steps at least s apart.")]
Tree = Annotated[bool, Option("--tree", help="DP-FTRL's tree aggregation, restarted each epoch.")]


class MatrixMechanism(Value):
    """Which mechanism, and its strategy and schema (calibrate's: its --sampling is its own)."""

    bands: Bands = None
    strategy: StrategyFile = None
    coefficients: Coefficients = None
    participations: Participations = None
    min_sep: MinSeparation = None
    tree: Tree = False


class Factorisation(MatrixMechanism):
    """mf's: the mechanism and --sampling."""

    sampling: SamplingMF = None


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


# The single-phase flags: (option, input name), in the order a conflict names them.
_FLAGS = (*TRAINING_FLAGS, ("--mechanism", "mechanism"), ("--scale", "scale"))


def parse_phases(phase_specs: list[str] | None, flags: RunParameters | Mapping[str, Any]) -> list[Phase]:
    """The run's phases, from repeated --phase or from the single-phase flags (not both).

    `flags` holds the flags' values (p, sigma, noise_std, sensitivity, T, n, batch_size, epochs,
    mechanism, scale; None, or missing from a mapping, when not given).
    """
    if not isinstance(flags, RunParameters):
        flags = RunParameters(**{name: flags.get(name) for _, name in _FLAGS})
    if phase_specs:
        for option, name in _FLAGS:
            if getattr(flags, name) is not None:
                raise conflict("--phase", option, "describe every phase with --phase, or give one phase with the flags")
        return [parse_phase_spec(spec, index) for index, spec in enumerate(phase_specs, start=1)]
    with options_named():
        return single_phase(flags)


def parse_phase_spec(spec: str, index: int) -> Phase:
    """One `--phase` value, e.g. "p=0.01,sigma=0.9,T=1800" (`core.phase_text.phase_from_text`);
    `index` counts from 1 for messages: "--phase 2: sigma must be in (0, inf), got -1"."""
    from dpcalc.core.phase_text import phase_from_text
    from dpcalc.core.text import TextError

    try:
        return phase_from_text(spec)
    except TextError as error:
        raise InputError(f"--phase {index}: {error}", option="--phase", allowed=error.requirement, got=error.text) from None


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
