"""One phase of a training run or release: a mechanism repeated for a number of steps.

Shared by the RDP and PLD accountants: a run is a sequence of phases whose privacy losses
compose (RDP adds per order; PLDs convolve).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from dpcalc.core.validation import POSITIVE, POSITIVE_INTEGER, PROBABILITY

Mechanism = Literal["gaussian", "laplace"]
Sampling = Literal["poisson", "uniform", "shuffle", "allocation"]
Neighbours = Literal["add-remove", "replace-one", "zero-out"]

SAMPLINGS: tuple[str, ...] = ("poisson", "uniform", "shuffle", "allocation")
# Schemes whose unit of accounting is an epoch (each record is used once an epoch).
EPOCH_SAMPLINGS: tuple[str, ...] = ("shuffle", "allocation")
NEIGHBOURS: tuple[str, ...] = ("add-remove", "replace-one", "zero-out")

# Why a combination of sampling, neighbour relation and mechanism has no accounting (None: it has).
SHUFFLE_NEEDS_POSITIONS = (
    "shuffled batches are accounted under zero-out or replace-one neighbours, where the two datasets "
    "have the same records in the same places: under add-remove an added record moves one record "
    "across every later batch boundary (and a last, smaller batch changes the batch sizes), so many "
    "batch sums change and one Gaussian an epoch does not bound them (docs/mathematics.md, \"Shuffled "
    "batches\"); account them under zero-out (a record replaced by a null record) or replace-one neighbours"
)

UNIFORM_ADD_REMOVE_NEEDS_B_BELOW_N = (
    "fixed-size batches under add-remove need a batch smaller than the dataset (b < n, p < 1): "
    "a neighbour with one record fewer has no batch of n; a full batch is Poisson sampling with p = 1"
)


USER_LEVEL_COVERS = (
    "user-level accounting (examples per user above 1) covers Poisson sampling of examples under "
    "add-remove or zero-out neighbours (a user's examples added or removed); under shuffled, allocated or "
    "fixed-size batches, or replace-one, apply group privacy to the example-level figure (dpcalc convert)"
)

ALLOCATION_NEEDS_ADD_REMOVE = (
    "random allocation is analysed under add-remove or zero-out neighbours (Feldman and Shenfeld 2025): "
    "use one of those (a replace-one neighbour is a removal followed by an addition: group privacy of size 2)"
)


def unsupported(mechanism: str, sampling: str, neighbours: str, examples_per_user: int = 1,
                sampling_probability: float | None = None) -> str | None:
    """Why `mechanism` under `sampling` and `neighbours` (and `examples_per_user` per user, at
    `sampling_probability` when it is known) cannot be accounted, or None."""
    if sampling == "shuffle" and neighbours == "add-remove":
        return SHUFFLE_NEEDS_POSITIONS
    if sampling == "allocation" and neighbours == "replace-one":
        return ALLOCATION_NEEDS_ADD_REMOVE
    if examples_per_user > 1 and (mechanism != "gaussian" or sampling != "poisson" or neighbours == "replace-one"):
        return USER_LEVEL_COVERS
    if mechanism == "laplace" and (sampling != "poisson" or neighbours == "replace-one"):
        return ("the laplace mechanism is accounted under Poisson sampling with add-remove or zero-out "
                "neighbours only")
    if sampling == "uniform" and neighbours == "add-remove" and sampling_probability == 1.0:
        return UNIFORM_ADD_REMOVE_NEEDS_B_BELOW_N
    return None


def rdp_covers(sampling: str, neighbours: str, examples_per_user: int = 1) -> bool:
    """Whether the RDP curves (`dpcalc.core.rdp.curves`) have a bound for this sampling scheme,
    neighbour relation and unit of privacy: Poisson sampling of records under add-remove or
    zero-out (Mironov, Talwar, Zhang 2019); fixed-size batches under replace-one and zero-out
    (Wang, Balle, Kasiviswanathan 2019, Thm 27; a zero-out neighbour is a replace-one neighbour
    whose new record is the null one) and under add-remove (the Poisson curve at noise sigma / 2,
    docs/mathematics.md, "Fixed-size batches under add-remove"). Here, numpy-free, for the budget
    file's check."""
    if examples_per_user > 1:
        return False
    if sampling == "uniform":
        return True
    return sampling == "poisson" and neighbours != "replace-one"


def step_shift(sampling: str, neighbours: str, examples_per_user: int = 1) -> float:
    """The largest distance between the two datasets' noiseless outputs in one step, in units of
    the sensitivity: 2 under replace-one (one clipped contribution exchanged for its opposite)
    and for fixed-size batches under add-remove (the added record takes another's place in the
    batch), the examples per user at user level (all of a user's examples in one batch), else 1
    (fixed-size batches under zero-out too: in the steps whose batch holds the record, the two
    datasets' batches differ in that record alone)."""
    if neighbours == "replace-one" or (sampling == "uniform" and neighbours == "add-remove"):
        return 2.0
    return float(examples_per_user)


# The note every command gives for a run that samples nothing (all its phases have p = 0).
NOTHING_SAMPLED = "p = 0: no record is ever sampled; the run reveals nothing (epsilon 0, RDP 0 at every order)."


def samples_nothing(phase: Phase) -> bool:
    """Whether the phase uses no record at all (p = 0): its output does not depend on the data,
    so it adds nothing to any privacy loss, and a run of such phases is (0, 0)-DP exactly. The
    accountants leave these phases out before their numerics (no log p, no division by p)."""
    return phase.sampling_probability == 0.0


def count_as_float(count: int) -> float:
    """A count of steps as a float: inf past float64's range (such a count makes every upper
    bound that scales with it infinite, which is sound), instead of an OverflowError."""
    try:
        return float(count)
    except OverflowError:
        return math.inf


@dataclass(frozen=True)
class Phase:
    """`steps` repetitions of a subsampled mechanism.

    gaussian: noise std `noise_multiplier` times the L2 sensitivity (the clipping norm C);
    laplace:  noise scale `scale` (b) for L1 sensitivity 1.
    `sampling_probability` = 1 means no subsampling; 0 that no record is ever used
    (`samples_nothing`).
    `sampling`: "poisson" (each record joins a step independently with probability p) or
    "uniform" (a fixed-size batch of b of the n records, drawn without replacement: p = b/n).
    "shuffle" (each epoch a random permutation cut into `epoch_steps` batches of b, the last
    possibly smaller: every record is used once an epoch; p = b/n).
    "allocation" (random allocation, balls and bins: each record joins one of the epoch's
    `epoch_steps` steps, uniformly and independently of the others; batch sizes vary, b = n/t on
    average; p = b/n).
    `epoch_steps`: the number of steps in an epoch, ceil(n/b), when n and b are known (required
    for shuffle and allocation, where an epoch is the unit of the accounting; unused by the other schemes).
    `examples_per_user`: how many examples one user contributes at most (user-level privacy;
    1: example-level). Each example is sampled on its own.
    `neighbours`: the relation between neighbouring datasets, "add-remove" (one record added or
    removed), "replace-one" (one record replaced by another: the sums differ by up to 2C) or
    "zero-out" (one record replaced by a null record that contributes nothing; Kairouz et al.
    2021). Under Poisson sampling zero-out has the same dominating pair as add-remove.
    """

    mechanism: Mechanism = "gaussian"
    sampling_probability: float = 1.0
    noise_multiplier: float | None = None
    scale: float | None = None
    steps: int = 1
    sampling: Sampling = "poisson"
    neighbours: Neighbours = "add-remove"
    epoch_steps: int | None = None
    examples_per_user: int = 1

    @property
    def shift(self) -> float:
        """The largest distance between the two datasets' noiseless outputs in one step (`step_shift`)."""
        return step_shift(self.sampling, self.neighbours, self.examples_per_user)

    @property
    def epochs(self) -> tuple[int, int]:
        """A shuffled or allocated phase's full epochs and the steps of its last, partial epoch (0: none)."""
        assert self.epoch_steps is not None, "a shuffled or allocated phase has epoch_steps (__post_init__)"
        return divmod(self.steps, self.epoch_steps)

    @property
    def noise(self) -> float:
        """The noise parameter of the mechanism: the noise multiplier (gaussian) or the scale b
        (laplace); the other field is None."""
        value = self.noise_multiplier if self.mechanism == "gaussian" else self.scale
        assert value is not None, "checked in __post_init__"
        return value

    @property
    def steps_float(self) -> float:
        """`steps` as a float (`count_as_float`)."""
        return count_as_float(self.steps)

    def __post_init__(self) -> None:
        PROBABILITY.check("sampling_probability", self.sampling_probability)
        POSITIVE_INTEGER.check("steps", self.steps)
        if self.mechanism == "gaussian":
            if self.noise_multiplier is None:
                raise ValueError("a gaussian phase needs noise_multiplier")
            POSITIVE.check("noise_multiplier", self.noise_multiplier)
        elif self.mechanism == "laplace":
            if self.scale is None:
                raise ValueError("a laplace phase needs scale")
            POSITIVE.check("scale", self.scale)
        else:
            raise ValueError(f"mechanism must be 'gaussian' or 'laplace', got mechanism={self.mechanism!r}")
        if not isinstance(self.steps, int) and math.isinf(self.steps):
            raise ValueError("steps must be finite")
        if self.sampling not in SAMPLINGS:
            raise ValueError(f"sampling must be one of {', '.join(SAMPLINGS)}, got sampling={self.sampling!r}")
        if self.neighbours not in NEIGHBOURS:
            raise ValueError(f"neighbours must be one of {', '.join(NEIGHBOURS)}, got neighbours={self.neighbours!r}")
        POSITIVE_INTEGER.check("examples_per_user", self.examples_per_user)
        if self.sampling in EPOCH_SAMPLINGS:
            kind = "a shuffled" if self.sampling == "shuffle" else "an allocated"
            if self.epoch_steps is None:
                raise ValueError(f"{kind} phase needs epoch_steps (the steps of an epoch, ceil(n/b))")
            POSITIVE_INTEGER.check("epoch_steps", self.epoch_steps)
            # every record is in one of the epoch's batches: (t - 1) b < n <= t b
            t, p = self.epoch_steps, self.sampling_probability
            if not (t * p >= 1.0 - 1e-9 and (t - 1) * p < 1.0 + 1e-9):
                raise ValueError(f"{kind} epoch of {t} steps needs p = b/n in [1/{t}, 1/{t - 1}), got p={p!r}"
                                 if t > 1 else f"{kind} epoch of 1 step needs p = 1, got p={p!r}")
        elif self.epoch_steps is not None:
            POSITIVE_INTEGER.check("epoch_steps", self.epoch_steps)
        why = unsupported(self.mechanism, self.sampling, self.neighbours, self.examples_per_user,
                          self.sampling_probability)
        if why is not None:
            raise ValueError(why)
