"""`dpcalc mf`: matrix-factorisation mechanisms (amplified BandMF, a strategy matrix, DP-FTRL's tree), certified.

The command resolves the run (the Poisson DP-SGD run of --p/--T or --n/--batch-size/--epochs at
--sigma), hands the mechanism to the core (`dpcalc.core.mf.accounting`), which reduces it to
phases, and accounts those phases and the DP-SGD run beside them with the PLD engine
(`dpcalc.cli.pld.account`). docs/matrix-factorisation.md states the theorems.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Annotated, Any

from dpcalc.cli.declare import App, Group
from dpcalc.cli.errors import InputError, conflict
from dpcalc.cli.options import (
    BatchSize,
    DatasetSize,
    Delta,
    Epochs,
    Epsilon,
    Formats,
    Gates,
    NoiseMultiplier,
    SamplingProbability,
    Steps,
    Swept,
    one,
    option_error,
    option_name,
)
from dpcalc.cli.output import Answer, Report, Table, format_lower, format_number, format_upper
from dpcalc.cli.phases import Accuracy, Factorisation, NeighboursOption
from dpcalc.cli.request import start
from dpcalc.core.limits import DEFAULT_ACCURACY
from dpcalc.core.training import RunParameters
from dpcalc.core.validation import ParameterError

if TYPE_CHECKING:
    from dpcalc.core.mf.accounting import MFAccounting
    from dpcalc.core.mf.strategy import Strategy
    from dpcalc.core.phases import Phase
    from dpcalc.core.pld import PLDResult

app = App()

HELP = """Certified (epsilon, delta) of a matrix-factorisation mechanism, with the DP-SGD run of the same inputs beside it.

A matrix mechanism releases C x + z: a lower-triangular strategy matrix C mixes the steps'
clipped gradient sums x, and z is Gaussian noise at --sigma (docs/matrix-factorisation.md).
Give one of:

  --bands b [--sampling poisson]: amplified BandMF (Choquette-Choo et al. 2023, arXiv
    2306.08153, Thm 4): the records in b partitions, step i Poisson-sampling partition i mod b;
    accounted as DP-SGD on one partition (ceil(T / b) steps, probability batch / floor(n / b)).
    The columns of C are assumed of norm at most 1, unless --strategy or --coefficients give C.
  --strategy FILE (.npy, or CSV rows) or --coefficients c0,c1,... (banded Toeplitz C) with
    --participations k --min-sep s: a record in at most k steps at least s apart, no sampling;
    the Gaussian mechanism at sigma / sens(C), exact or a certified upper bound on sens(C).
  --tree: DP-FTRL's tree aggregation restarted each epoch (Kairouz et al. 2021), needs --n
    and --batch-size (an epoch is ceil(n / batch-size) steps).

Each result names the factorisation, the participation schema, the theorem and whether the
figure is exact or an upper bound; epsilon is the PLD engine's certified upper bound, the one
--max-eps checks. The DP-SGD figure is `dpcalc pld` of the Poisson run of the same --p (or
--n/--batch-size), --T (or --epochs) and --sigma.

\b
Examples:
  dpcalc mf --bands 4 --n 60000 --batch-size 240 --epochs 10 --sigma 1
  dpcalc mf --bands 2 --coefficients 1,0.5 --n 60000 --batch-size 240 --epochs 1 --sigma 1
  dpcalc mf --coefficients 1,0.5,0.25 --T 1000 --participations 4 --min-sep 250 --sigma 3
  dpcalc mf --strategy C.npy --participations 2 --min-sep 100 --sigma 4 --json
  dpcalc mf --tree --n 60000 --batch-size 600 --epochs 5 --sigma 2 --max-eps 8
"""

@dataclass(frozen=True)
class MfRun:
    """The run: --p/--T or the training form, and the noise multiplier."""

    p: SamplingProbability = None
    sigma: NoiseMultiplier = None
    T: Steps = None
    n: DatasetSize = None
    batch_size: BatchSize = None
    epochs: Epochs = None


@dataclass(frozen=True)
class MfInputs:
    """What mf computes from (one run: no option is swept)."""

    run: RunParameters
    accuracy: float | None
    delta: float | None
    eps: float | None


# the core's parameter names that are not the options' plain spelling
_SPELLED = {"min_separation": "--min-sep", "steps": "--T", "noise_multiplier": "--sigma",
            "batch_size": "--batch-size", "records": "--n", "partition_probability": "--bands"}


def _spell(name: str) -> str:
    return _SPELLED.get(name, option_name(name))


_FACTORISATION = Factorisation()


@app.command("mf", help=HELP)
def mf(
    run: Annotated[MfRun, Group()],
    mechanism: Annotated[Factorisation, Group()] = _FACTORISATION,
    neighbours: NeighboursOption = None,
    accuracy: Accuracy = None,
    delta: Delta = None,
    eps: Epsilon = None,
    gates: Annotated[Gates, Group()] = Gates(),
    outputs: Annotated[Formats, Group()] = Formats(),
) -> Answer:
    for value in [*(getattr(run, item.name) for item in fields(run)), accuracy, delta, eps]:
        if isinstance(value, Swept):
            raise InputError(f"mf accounts one run: give {value.option} one value, got {value.text}",
                             option=value.option, got=value.text)
    numbers = RunParameters(p=one(run.p), sigma=one(run.sigma), T=one(run.T), n=one(run.n),
                            batch_size=one(run.batch_size), epochs=one(run.epochs))
    request = start(MfInputs(numbers, one(accuracy), one(delta), one(eps)), outputs=outputs, gates=gates)
    row = request.rows[0]
    relation = None if neighbours is None else neighbours.value
    try:
        dpsgd = _dpsgd_phase(row.run, relation, mechanism.bands is not None)
        accounting = _accounting(row.run, mechanism, relation, dpsgd)
    except ParameterError as error:
        raise option_error(error, _spell) from None
    from dpcalc.cli.pld import account
    from dpcalc.cli.pld import gates as gate_keys
    from dpcalc.cli.tight import paused_gc

    width = DEFAULT_ACCURACY if row.accuracy is None else row.accuracy
    with paused_gc():
        result = account(accounting.phases, row.delta, row.eps, width)
        same = dpsgd is not None and accounting.phases == (dpsgd,)  # one band: DP-SGD itself
        beside = result if same else None if dpsgd is None else account([dpsgd], row.delta, row.eps, width)
    report = _report(row, width, accounting, result, beside, mechanism, relation)
    return request.answer(Report(**{**vars(report), **gate_keys(result, row.delta is not None)}))


def _dpsgd_phase(run: RunParameters, neighbours: str | None, amplified: bool) -> Phase | None:
    """The Poisson DP-SGD run of the inputs, or None without a sampling probability (--p or --n
    with --batch-size); amplified BandMF needs it."""
    if run.p is None and (run.n is None or run.batch_size is None):
        if amplified:
            raise InputError("--bands needs the run's sampling: --p with --T, or --n, --batch-size and --epochs",
                             options=("--bands", "--p", "--T", "--n", "--batch-size", "--epochs"))
        return None
    if run.sigma is None:
        raise InputError("--sigma is required (the noise multiplier: noise std / clipping norm, > 0)", option="--sigma")
    from dpcalc.cli.options import options_named
    from dpcalc.core.training import single_phase, with_relation

    with options_named():
        phases = single_phase(run)
        relation = neighbours if neighbours is not None else ("add-remove" if amplified else "zero-out")
        (phase,) = with_relation(phases, None, relation)
    return phase


def _accounting(run: RunParameters, chosen: Factorisation, neighbours: str | None, dpsgd: Phase | None) -> MFAccounting:
    """The core's reduction of the mechanism the options name."""
    from dpcalc.core.mf import accounting

    has_matrix = chosen.strategy is not None or chosen.coefficients is not None
    if chosen.strategy is not None and chosen.coefficients is not None:
        raise conflict("--strategy", "--coefficients", "give the strategy matrix as a file or as Toeplitz coefficients")
    if chosen.tree and (chosen.bands is not None or has_matrix):
        raise conflict("--tree", "--bands" if chosen.bands is not None else
                       ("--strategy" if chosen.strategy is not None else "--coefficients"),
                       "the tree is its own factorisation")
    if chosen.sampling is not None and chosen.sampling != "poisson":
        raise InputError(f"--sampling must be poisson (amplified BandMF's), got {chosen.sampling}",
                         option="--sampling", allowed="poisson", got=chosen.sampling)
    if chosen.sampling is not None and chosen.bands is None:
        raise InputError("--sampling applies to --bands: the strategy's participation schema and the tree fix a "
                         "record's steps (no sampling)", options=("--sampling", "--bands"))
    if chosen.bands is not None:
        for name, value in (("--participations", chosen.participations), ("--min-sep", chosen.min_sep)):
            if value is not None:
                raise conflict("--bands", name, "amplified BandMF's schema is its partitions")
        assert dpsgd is not None, "--bands needs the run (_dpsgd_phase)"
        strategy = _strategy(chosen, dpsgd.steps) if has_matrix else None
        probability = (accounting.partition_probability(run.n, run.batch_size, chosen.bands)
                       if run.n is not None and run.batch_size is not None else None)
        return accounting.amplified_bandmf(dpsgd, chosen.bands, strategy=strategy, partition_probability=probability)
    if run.sigma is None:
        raise InputError("--sigma is required (the noise multiplier: noise std / clipping norm, > 0)", option="--sigma")
    relation = "zero-out" if neighbours is None else neighbours
    if chosen.tree:
        if dpsgd is None or dpsgd.epoch_steps is None:
            raise InputError("--tree needs --n and --batch-size (an epoch is ceil(n / batch-size) steps), with "
                             "--epochs or --T", options=("--tree", "--n", "--batch-size", "--epochs", "--T"))
        for name, value in (("--participations", chosen.participations), ("--min-sep", chosen.min_sep)):
            if value is not None:
                raise conflict("--tree", name, "the tree's schema is one participation an epoch")
        return accounting.tree_aggregation(run.sigma, dpsgd.steps, dpsgd.epoch_steps, neighbours=relation)
    if not has_matrix:
        raise InputError("mf needs a mechanism: --bands b, --strategy FILE or --coefficients c0,c1,... with "
                         "--participations and --min-sep, or --tree",
                         options=("--bands", "--strategy", "--coefficients", "--participations", "--min-sep", "--tree"))
    if chosen.participations is None or chosen.min_sep is None:
        raise InputError("--strategy and --coefficients need --participations k and --min-sep s (a record in at "
                         "most k steps, at least s apart)",
                         options=("--strategy", "--coefficients", "--participations", "--min-sep"))
    steps = dpsgd.steps if dpsgd is not None else run.T
    strategy = _strategy(chosen, steps)
    from dpcalc.core.mf.participation import Participation

    schema = Participation(chosen.participations, chosen.min_sep, strategy.steps)
    return accounting.matrix_mechanism(strategy, schema, run.sigma, neighbours=relation)


def _strategy(chosen: Factorisation, steps: int | None) -> Strategy:
    """The strategy matrix of --strategy (its rows checked against the run's steps) or --coefficients."""
    from dpcalc.core.mf.strategy import read_strategy, toeplitz_strategy

    if chosen.coefficients is not None:
        if steps is None:
            raise InputError("--coefficients needs the run's steps: --T, or --n, --batch-size and --epochs",
                             options=("--coefficients", "--T", "--n", "--batch-size", "--epochs"))
        return toeplitz_strategy(list(chosen.coefficients), steps)
    assert chosen.strategy is not None
    strategy = read_strategy(chosen.strategy)
    if steps is not None and strategy.steps != steps:
        raise InputError(f"--strategy has {strategy.steps} rows but the run has {steps} steps (--T, or --epochs): "
                         "give one row of C per step", options=("--strategy", "--T", "--epochs"), got=chosen.strategy)
    return strategy


def _bounds(result: PLDResult) -> dict[str, Any]:
    return {"epsilon": result.epsilon, "epsilon_lower": result.epsilon_lower, "epsilon_upper": result.epsilon_upper,
            "delta": result.delta, "delta_lower": result.delta_lower, "delta_upper": result.delta_upper}


def _report(row: MfInputs, width: float, accounting: MFAccounting, result: PLDResult, beside: PLDResult | None,
            chosen: Factorisation, neighbours: str | None) -> Report:
    from dpcalc.cli.phases import phase_inputs

    sens = accounting.sensitivity
    inputs = {
        "p": row.run.p, "sigma": row.run.sigma, "T": row.run.T, "n": row.run.n, "batch_size": row.run.batch_size,
        "epochs": row.run.epochs, "bands": chosen.bands, "sampling": chosen.sampling, "strategy": chosen.strategy,
        "coefficients": None if chosen.coefficients is None else list(chosen.coefficients),
        "participations": chosen.participations, "min_sep": chosen.min_sep, "tree": chosen.tree,
        "neighbours": neighbours, "delta": row.delta, "eps": row.eps, "accuracy": width,
    }
    keys = {
        "factorisation": accounting.factorisation,
        "participation": accounting.participation,
        "theorem": accounting.theorem,
        "figure": accounting.figure,
        "sensitivity": None if sens is None else {"value": sens.value, "exact": sens.exact, "method": sens.method,
                                                  "pattern": None if sens.pattern is None else list(sens.pattern)},
        "assumptions": list(accounting.assumptions),
        **_bounds(result),
        "accuracy": result.accuracy,
        "phases": [phase_inputs(item) for item in accounting.phases],
        "dp_sgd": None if beside is None else _bounds(beside),
    }
    return Report(command="mf", inputs=inputs, result=keys, tables=[_table(row, accounting, result, beside)],
                  warnings=list(result.warnings) + ([] if beside is None else
                                                    [w for w in beside.warnings if w not in result.warnings]))


def _table(row: MfInputs, accounting: MFAccounting, result: PLDResult, beside: PLDResult | None) -> Table:
    figure_note = ("the mechanism's own privacy" if accounting.figure == "exact"
                   else "bounds the mechanism's privacy from above (the theorem's guarantee)")
    if row.delta is not None:
        rows = [("epsilon", format_upper(result.epsilon_upper), "certified upper bound (quote this)"),
                ("epsilon lower bound", format_lower(result.epsilon_lower), "of the reduced run"),
                ("delta", format_number(row.delta), "given")]
        if beside is not None:
            rows.append(("epsilon of DP-SGD", format_upper(beside.epsilon_upper),
                         "the same run as Poisson DP-SGD (dpcalc pld), certified upper bound"))
    else:
        rows = [("delta", format_upper(result.delta_upper), "certified upper bound (quote this)"),
                ("delta lower bound", format_lower(result.delta_lower), "of the reduced run"),
                ("epsilon", format_number(row.eps), "given")]
        if beside is not None:
            rows.append(("delta of DP-SGD", format_upper(beside.delta_upper),
                         "the same run as Poisson DP-SGD (dpcalc pld), certified upper bound"))
    rows += [("figure", accounting.figure, figure_note),
             ("factorisation", "", accounting.factorisation),
             ("participation", "", accounting.participation)]
    if accounting.sensitivity is not None:
        sens = accounting.sensitivity
        rows.append(("sensitivity", format_upper(sens.value), ("exact" if sens.exact else "upper bound")
                     + f": {sens.method}"))
    (phase,) = accounting.phases
    rows += [("accounted as", "", f"p = {format_number(phase.sampling_probability)}, sigma = "
              f"{format_number(phase.noise_multiplier)}, T = {phase.steps} ({phase.neighbours})"),
             ("theorem", "", accounting.theorem)]
    rows += [("assumption", "", text) for text in accounting.assumptions]
    return Table(columns=("quantity", "value", "note"), rows=rows, title="Matrix factorisation (PLD)")
