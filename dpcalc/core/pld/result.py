"""What the PLD accountant returns: certified intervals (`PLDResult`, `PrivacyProfile`), and the
accuracy they are computed to."""

from __future__ import annotations

from dataclasses import dataclass

# The default relative width of the certified interval, (upper - lower) <= 0.001 * upper, and the
# widths a caller may ask for: in the numpy-free dpcalc.core.limits, where the command line reads them.
from dpcalc.core.limits import ACCURACY as ACCURACY
from dpcalc.core.limits import DEFAULT_ACCURACY as DEFAULT_ACCURACY
from dpcalc.core.phases import Phase

# The two directions of add/remove adjacency; each has its own dominating pair (`pairs`).
DIRECTIONS = ("remove", "add")
# The one direction of a run whose pairs are all their own reverse (replace-one neighbours).
SYMMETRIC = "symmetric"


@dataclass(frozen=True)
class PLDResult:
    """A certified privacy guarantee from the PLD accountant.

    With a target delta: `epsilon_upper` (the number to quote), `epsilon_lower`, and
    `epsilon` = `epsilon_upper`; delta, delta_lower and delta_upper echo the target. With a
    target epsilon: `delta_upper` (to quote), `delta_lower` and `delta` = `delta_upper`.
    `grid_step` is the step of the final grid (0 for the closed forms), `grid_size` the largest
    number of bins used; `binding` names the direction that sets the upper bound: remove or add
    (add-remove and zero-out neighbours), symmetric (replace-one, whose pairs are their own reverse).
    `exact`: the run is exactly mu-GDP (unsubsampled Gaussian phases) and the interval is the
    closed form's, as wide as its floating-point error (`pld.exact`; grid step 0, no grid).
    """

    epsilon: float
    epsilon_lower: float
    epsilon_upper: float
    delta: float
    delta_lower: float
    delta_upper: float
    accuracy: float
    grid_step: float
    grid_size: int
    binding: str
    attempts: int
    phases: tuple[Phase, ...]
    warnings: tuple[str, ...] = ()
    exact: bool = False

    @classmethod
    def bounds(cls, *, delta: float | None, epsilon: float | None, upper: float, lower: float, accuracy: float,
               grid_step: float, grid_size: int, binding: str, attempts: int, phases: tuple[Phase, ...],
               warnings: tuple[str, ...] = ()) -> PLDResult:
        """The result for bounds [lower, upper] on epsilon (a target `delta` given) or on delta
        (a target `epsilon` given); the other quantity echoes its target."""
        if delta is not None:
            eps_hi, eps_lo, d_hi, d_lo = upper, lower, delta, delta
        else:
            assert epsilon is not None
            eps_hi = eps_lo = epsilon
            d_hi, d_lo = upper, lower
        return cls(
            epsilon=eps_hi, epsilon_lower=eps_lo, epsilon_upper=eps_hi,
            delta=d_hi, delta_lower=d_lo, delta_upper=d_hi,
            accuracy=accuracy, grid_step=grid_step, grid_size=grid_size,
            binding=binding, attempts=attempts, phases=phases, warnings=warnings,
        )


@dataclass(frozen=True)
class PrivacyProfile:
    """Certified bounds on the privacy profile delta(eps) of a run at a list of epsilons.

    delta_upper[i] >= delta(epsilons[i]) >= delta_lower[i], delta the maximum over the add and
    remove directions. `grid_step` is the step of the grid used (0 for the closed forms).
    """

    epsilons: tuple[float, ...]
    delta_upper: tuple[float, ...]  # certified: the true delta(eps) (max over add/remove) <= delta_upper
    delta_lower: tuple[float, ...]  # certified lower bound
    phases: tuple[Phase, ...]
    grid_step: float
    warnings: tuple[str, ...] = ()
