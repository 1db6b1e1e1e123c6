"""Matrix-factorisation mechanisms as phases for the PLD engine (`dpcalc.core.pld.tight_epsilon`).

- `matrix_mechanism`: C x + z with z ~ N(0, sigma^2) per coordinate (sigma in units of the
  clipping norm) and a record in the steps of one pattern of a participation schema: one
  Gaussian release at noise multiplier sigma / sens(C) (Choquette-Choo et al. 2023, arXiv
  2211.06530, extending Denisov et al. 2022, arXiv 2202.08312, to several participations).
- `amplified_bandmf`: a b-banded C, the records split into b partitions, step i Poisson-sampling
  partition i mod b: the privacy of DP-SGD on one partition, ceil(T / b) steps at the partition's
  sampling probability and noise multiplier sigma / (largest column norm of C) (Choquette-Choo et
  al. 2023, arXiv 2306.08153, Thm 4, with cyclic Poisson sampling, their Algorithm 2).
- `tree_aggregation`: DP-FTRL's online binary tree restarted each epoch (Kairouz et al. 2021,
  arXiv 2103.00039, Appendix D): each epoch a record is in one leaf, so in at most
  floor(log2 t) + 1 of the tree's released nodes; one Gaussian release at sigma / sqrt(sum of
  those counts over the epochs).

docs/matrix-factorisation.md states the theorems, their assumptions and what is exact.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np

from dpcalc.core.mf.participation import Participation
from dpcalc.core.mf.sensitivity import Sensitivity, sensitivity
from dpcalc.core.mf.strategy import Strategy
from dpcalc.core.phases import Neighbours, Phase
from dpcalc.core.validation import POSITIVE, POSITIVE_INTEGER, PROBABILITY, ParameterError, RunError

MATRIX_MECHANISM = ("the matrix mechanism C x + z is the Gaussian mechanism at noise multiplier sigma / sens(C), "
                    "also for adaptively chosen gradients (Denisov et al. 2022, arXiv 2202.08312; Choquette-Choo "
                    "et al. 2023, arXiv 2211.06530, for several participations)")
AMPLIFIED = ("amplified BandMF (Choquette-Choo et al. 2023, arXiv 2306.08153, Thm 4): with C b-banded and the "
             "records in b partitions, step i Poisson-sampling partition i mod b, the mechanism is as private "
             "as DP-SGD on one partition: ceil(T / b) steps at the partition's sampling probability and noise "
             "multiplier sigma / (largest column norm of C)")
TREE = ("tree aggregation with a restart each epoch (Kairouz et al. 2021, arXiv 2103.00039, Appendix D): a "
        "record is in one leaf of each epoch's tree, so in at most floor(log2 t) + 1 of the nodes released "
        "over t steps; the released nodes are the Gaussian mechanism at sigma / sqrt(sum over epochs of that count)")

# The neighbour relations of the unamplified mechanisms: the schema fixes the steps of a record.
FIXED_STEPS_NEED_POSITIONS = (
    "a participation schema (and the tree's leaves) fixes the steps each record is used in: under "
    "add-remove an added record moves the others' steps; account the run under zero-out (a record replaced "
    "by a null one, Kairouz et al. 2021) or replace-one neighbours"
)
COLUMN_NORMS_ASSUMED = ("every column of C has norm at most 1 (the column normalisation of arXiv 2306.08153); "
                        "give the strategy matrix to use its own column norms")
POISSON_PARTITIONS = ("each step Poisson-samples its partition; the assignment of records to partitions does not "
                      "depend on the data (by position; under add-remove or zero-out neighbours also at random)")
USERS_IN_ONE_PARTITION = "the partitions are of users: all of a user's examples are in one partition"
ONLINE_TREE = ("the tree releases only complete nodes (a node once all its leaves are in); a tree over a power "
               "of two leaves that releases partial nodes has ceil(log2 t) + 1 nodes a leaf")


@dataclass(frozen=True)
class MFAccounting:
    """A matrix-factorisation mechanism reduced to phases that `tight_epsilon` accounts.

    `figure` says whether the phases' privacy is that of the mechanism's release ("exact") or
    bounds it ("upper bound"); `sensitivity` is the strategy's or tree's sensitivity where the
    reduction uses one; `assumptions` are what the theorem needs of the run beyond its inputs.
    """

    factorisation: str
    participation: str
    theorem: str
    figure: Literal["exact", "upper bound"]
    phases: tuple[Phase, ...]
    noise_multiplier: float
    sensitivity: Sensitivity | None = None
    assumptions: tuple[str, ...] = ()


def _unamplified_neighbours(neighbours: str) -> Neighbours:
    if neighbours == "add-remove":
        raise ParameterError("neighbours", "zero-out or replace-one (" + FIXED_STEPS_NEED_POSITIONS + ")",
                             repr(neighbours))
    if neighbours not in ("zero-out", "replace-one"):
        raise ParameterError("neighbours", "zero-out or replace-one", repr(neighbours))
    return "zero-out" if neighbours == "zero-out" else "replace-one"


def _gaussian_release(noise_multiplier: float, sens: float, neighbours: Neighbours) -> Phase:
    """One Gaussian release of sensitivity `sens` (clipping norms) at noise `noise_multiplier`.
    Under replace-one the phase's shift doubles it (`Phase.shift`)."""
    return Phase("gaussian", sampling_probability=1.0, noise_multiplier=noise_multiplier / sens, steps=1,
                 neighbours=neighbours)


def matrix_mechanism(strategy: Strategy, participation: Participation, noise_multiplier: float, *,
                     neighbours: str = "zero-out") -> MFAccounting:
    """The matrix mechanism of `strategy` with a record in the steps of one pattern of `participation`."""
    POSITIVE.check("noise_multiplier", noise_multiplier)
    relation = _unamplified_neighbours(neighbours)
    sens = sensitivity(strategy, participation)
    theorem = f"{MATRIX_MECHANISM}; sensitivity: {sens.theorem}"
    return MFAccounting(strategy.described, participation.described, theorem, sens.figure,
                        (_gaussian_release(noise_multiplier, sens.value, relation),), noise_multiplier, sens)


def partition_probability(records: int, batch_size: int, bands: int) -> float:
    """The Poisson sampling probability within a partition: batch_size / floor(records / bands),
    the smallest partition's (the larger ones sample less), rounded up."""
    for name, value in (("n", records), ("batch_size", batch_size), ("bands", bands)):
        POSITIVE_INTEGER.check(name, value)
    smallest = records // bands
    if smallest < batch_size:
        raise RunError("{bands} = {b} partitions of {n} = {records} records hold {smallest} records each at "
                       "the least, fewer than {batch_size} = {batch}: use fewer bands or a smaller batch",
                       b=bands, records=records, smallest=smallest, batch=batch_size)
    return _rounded_up(Fraction(batch_size, smallest))


def _rounded_up(value: Fraction) -> float:
    """The smallest float >= value."""
    nearest = float(value)
    return nearest if Fraction(nearest) >= value else math.nextafter(nearest, math.inf)


def amplified_bandmf(run: Phase, bands: int, *, strategy: Strategy | None = None,
                     partition_probability: float | None = None) -> MFAccounting:
    """Amplified BandMF on the DP-SGD run `run` (Poisson sampling at p, noise multiplier sigma, T steps).

    The b partitions' sampling probability is `partition_probability` (from
    `partition_probability(n, batch_size, b)`), else b p rounded up (partitions of n / b records
    each, the batch of p n records drawn from one). `strategy`, when given, must be b-banded on
    T steps; its largest column norm scales sigma. With b = 1 and no strategy, the phases are
    `run` itself: DP-SGD.
    """
    if not isinstance(run, Phase) or run.mechanism != "gaussian" or run.sampling != "poisson":
        raise ParameterError("run", "a gaussian phase with poisson sampling (amplified BandMF samples each "
                             "partition by Poisson sampling)", repr(run))
    POSITIVE_INTEGER.check("bands", bands)
    bands = int(bands)
    if bands > run.steps:
        raise RunError("{bands} = {b} is more than the {T} = {steps} steps: at most one band a step",
                       b=bands, steps=run.steps)
    assert run.noise_multiplier is not None, "a gaussian phase has a noise multiplier"
    sigma, assumptions = run.noise_multiplier, [POISSON_PARTITIONS]
    if run.examples_per_user > 1:
        assumptions.append(USERS_IN_ONE_PARTITION)
    exact = bands == 1
    if strategy is None:
        assumptions.insert(0, COLUMN_NORMS_ASSUMED)
        factorisation = f"{bands}-banded strategy matrix C, columns of norm at most 1"
    else:
        if strategy.steps != run.steps:
            raise RunError("the strategy matrix has {matrix} steps but the run has {T} = {steps}: give one row "
                           "of C per step", matrix=strategy.steps, steps=run.steps)
        if strategy.bands > bands:
            raise RunError("the strategy matrix has {matrix} bands, more than {bands} = {b}: the partitions' "
                           "steps are b apart, so C may have at most b bands", matrix=strategy.bands, b=bands)
        norms = strategy.column_norms_squared()
        if strategy.bands == 1:  # diagonal: the column norms are |C[j, j]|, exactly
            magnitudes = np.abs(np.diag(strategy.dense()))
            largest = float(magnitudes.max())
            exact = exact and bool((magnitudes == largest).all())
        else:  # the computed squares and sums are off by at most (n + 1) u relative; 4 n u covers them
            largest = math.nextafter(math.sqrt(float(norms.max())) * (1.0 + 4.0 * strategy.steps * 2.0**-53),
                                     math.inf)
        sigma = sigma / largest
        factorisation = strategy.described
    if partition_probability is None:
        partition_probability = _rounded_up(Fraction(run.sampling_probability) * bands)
    PROBABILITY.check("partition_probability", partition_probability)
    if bands == 1 and strategy is None:
        phase = run
    else:
        phase = dataclasses.replace(run, sampling_probability=partition_probability, noise_multiplier=sigma,
                                    steps=-(-run.steps // bands), epoch_steps=None if bands > 1 else run.epoch_steps)
    participation = (f"{bands} partitions, Poisson sampling at {partition_probability:.6g} within a partition, "
                     f"{phase.steps} of the {run.steps} steps each")
    return MFAccounting(factorisation, participation, AMPLIFIED, "exact" if exact else "upper bound", (phase,),
                        run.noise_multiplier, None, tuple(assumptions))


def tree_aggregation(noise_multiplier: float, steps: int, epoch_steps: int, *,
                     neighbours: str = "zero-out") -> MFAccounting:
    """DP-FTRL's tree aggregation over `steps` steps, the tree restarted every `epoch_steps` steps
    (each record used once an epoch; the last epoch may be partial)."""
    POSITIVE.check("noise_multiplier", noise_multiplier)
    POSITIVE_INTEGER.check("steps", steps)
    POSITIVE_INTEGER.check("epoch_steps", epoch_steps)
    relation = _unamplified_neighbours(neighbours)
    epochs, last = divmod(int(steps), int(epoch_steps))
    trees: Sequence[int] = [int(epoch_steps)] * epochs + ([last] if last else [])
    # floor(log2 t) + 1 = t.bit_length(): the complete dyadic nodes over t leaves that hold leaf 0
    nodes = sum(t.bit_length() for t in trees)
    value = math.nextafter(math.sqrt(nodes), math.inf)
    schema = (f"one participation an epoch, {len(trees)} epoch{'s' if len(trees) != 1 else ''} of "
              f"{epoch_steps} steps" + (f" (the last of {last})" if last else ""))
    sens = Sensitivity(value, True, "tree depth", TREE, f"binary tree aggregation, restarted every {epoch_steps} steps",
                       schema)
    return MFAccounting(sens.factorisation, schema, TREE, "exact", (_gaussian_release(noise_multiplier, value, relation),),
                        noise_multiplier, sens, (ONLINE_TREE,))
