"""What one grid of the accountant composes (`Composition`): which directions, and which of them
with a lower measure. Each caller names the policy it wants (`Composition.interval()`, ...);
`accountant.attempt` reads it. Leaving a lower measure out is sound: the lower bound is the
largest over the directions composed with one (docs/pld-soundness.md, S7).
"""

from __future__ import annotations

from typing import Literal

from dpcalc.core.record import Value

# Which compositions carry a lower measure (`Composition.lower`).
Lower = Literal["none", "every", "where it raises", "first"]


class Composition(Value):
    """A grid's composition policy.

    `every_direction`: every direction is composed and its measures are kept (a profile reads
    them at any epsilon); otherwise a direction after the first is composed only when a cheaper
    upper bound for it exceeds the bound it could raise, and a short run's lower measure is
    composed on a coarser grid (`plan.Plan.short_runs_coarser`).

    `lower`, which compositions carry a lower measure: "none", the upper bound alone (directions
    that only bound from below are left out); "every"; with `every_direction`, "where it raises":
    a direction after the first that bounds from above is composed upper-only, and again with its
    lower measure only where that upper bound at the target exceeds the lower bound found (the
    direction could raise it), its plan kept for `accountant.compose_spared` otherwise; "first":
    the first direction alone, the others' plans kept (delta at eps = 0 of a remove and an add
    direction, whose lower bounds bound the same delta(0): docs/pld-soundness.md, "Both orders
    at eps = 0").
    """

    every_direction: bool
    lower: Lower

    def __post_init__(self) -> None:
        if self.lower in ("where it raises", "first") and not self.every_direction:
            raise ValueError(f"lower measures {self.lower!r} are spared only when every direction is composed")

    @classmethod
    def interval(cls) -> Composition:
        """The certified interval at the target, as cheaply as the directions allow (`tight_epsilon`)."""
        return cls(every_direction=False, lower="every")

    @classmethod
    def upper_bound(cls) -> Composition:
        """The upper bound at the target alone (`upper_epsilon`, `steering_epsilon`)."""
        return cls(every_direction=False, lower="none")

    @classmethod
    def in_full(cls) -> Composition:
        """Every direction with both measures, kept (a profile read at every epsilon)."""
        return cls(every_direction=True, lower="every")

    @classmethod
    def sparing_lower(cls) -> Composition:
        """Every direction's upper measure, and a lower measure where it could raise the lower bound
        at the target (`privacy_profile.ProfileBounds` with `spare_lower`)."""
        return cls(every_direction=True, lower="where it raises")

    @classmethod
    def first_lower(cls) -> Composition:
        """Every direction's upper measure, and the first direction's lower measure alone (a
        profile's target at eps = 0, `privacy_profile.ProfileBounds` with `at_zero`)."""
        return cls(every_direction=True, lower="first")

    @property
    def lower_measures(self) -> bool:
        """Whether any composition carries a lower measure."""
        return self.lower != "none"

    @property
    def spares_lower(self) -> bool:
        """Whether a direction after the first is composed upper-only first ("where it raises",
        "first")."""
        return self.lower in ("where it raises", "first")
