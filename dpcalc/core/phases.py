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


def count_as_float(count: int) -> float:
    """A count of steps as a float: inf past float64's range (such a count makes every upper
    bound that scales with it infinite, which is sound), instead of an OverflowError."""
    try:
        return float(count)
    except OverflowError:
        return math.inf


@dataclass(frozen=True)
class Phase:
    """`steps` repetitions of a Poisson-subsampled mechanism.

    gaussian: noise std `noise_multiplier` times the L2 sensitivity;
    laplace:  noise scale `scale` (b) for L1 sensitivity 1.
    `sampling_probability` = 1 means no subsampling.
    """

    mechanism: Mechanism = "gaussian"
    sampling_probability: float = 1.0
    noise_multiplier: float | None = None
    scale: float | None = None
    steps: int = 1

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
