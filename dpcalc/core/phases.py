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
Sampling = Literal["poisson", "uniform"]
Neighbours = Literal["add-remove", "replace-one", "zero-out"]

SAMPLINGS: tuple[str, ...] = ("poisson", "uniform")
NEIGHBOURS: tuple[str, ...] = ("add-remove", "replace-one", "zero-out")

# Why a combination of sampling, neighbour relation and mechanism has no accounting (None: it has).
UNIFORM_NEEDS_REPLACE_ONE = (
    "uniform sampling (fixed-size batches) is analysed under replace-one neighbours: with a fixed "
    "batch size an added record pushes another out of the batch, and no dominating pair covers that; "
    "use replace-one (its figure holds for zero-out too: a zero-out neighbour replaces a record by the null record)"
)


def unsupported(mechanism: str, sampling: str, neighbours: str) -> str | None:
    """Why `mechanism` under `sampling` and `neighbours` cannot be accounted, or None."""
    if sampling == "uniform" and neighbours != "replace-one":
        return UNIFORM_NEEDS_REPLACE_ONE
    if mechanism == "laplace" and (sampling != "poisson" or neighbours == "replace-one"):
        return ("the laplace mechanism is accounted under Poisson sampling with add-remove or zero-out "
                "neighbours only")
    return None


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
    `sampling_probability` = 1 means no subsampling.
    `sampling`: "poisson" (each record joins a step independently with probability p) or
    "uniform" (a fixed-size batch of b of the n records, drawn without replacement: p = b/n).
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

    @property
    def shift(self) -> float:
        """The distance between the two datasets' noiseless outputs, in units of the sensitivity:
        2 under replace-one (one clipped contribution exchanged for its opposite), else 1."""
        return 2.0 if self.neighbours == "replace-one" else 1.0

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
        why = unsupported(self.mechanism, self.sampling, self.neighbours)
        if why is not None:
            raise ValueError(why)
