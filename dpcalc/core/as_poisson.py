"""A run of epochs or fixed-size batches beside the same run accounted as Poisson-sampled.

Shuffled, allocated and fixed-size batches are often reported with the Poisson figure of the
same p, sigma and T. `as_poisson` accounts that figure (the PLD accountant, certified), and
`compare_with_poisson` says, as data, whether it lies below the run's own certified lower bound:
then reporting it provably under-reports. The command line words the comparison as a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from dpcalc.core.record import Value

if TYPE_CHECKING:
    from dpcalc.core.phases import Phase
    from dpcalc.core.pld import PLDResult

Scheme = Literal["shuffled", "allocated", "fixed-size"]


class PoissonComparison(Value):
    """The Poisson figure of a run against the run's own certified bounds."""

    scheme: Scheme  # the run's batches
    quantity: Literal["epsilon", "delta"]  # what is compared: epsilon at delta, or delta at epsilon
    poisson_upper: float  # the Poisson-sampled run's certified upper bound
    run_lower: float  # the run's certified lower bound
    under_reports: bool  # poisson_upper < run_lower: the Poisson figure provably under-reports


def batch_scheme(phases: Sequence[Phase]) -> Scheme | None:
    """"shuffled" or "allocated" for a run of epochs (each record used once an epoch), "fixed-size"
    for a run of fixed-size batches, else None (a Poisson run: nothing to compare)."""
    if any(item.sampling == "shuffle" for item in phases):
        return "shuffled"
    if any(item.sampling == "allocation" for item in phases):
        return "allocated"
    if any(item.sampling == "uniform" for item in phases):
        return "fixed-size"
    return None


def as_poisson(phases: Sequence[Phase], delta: float | None, epsilon: float | None,
               accuracy: float) -> PLDResult | None:
    """A shuffled, allocated or fixed-size run accounted as if its batches were Poisson-sampled
    (epsilon at `delta`, or delta at `epsilon`); None for other runs."""
    import dataclasses

    from dpcalc.core.pld import tight_delta, tight_epsilon

    if batch_scheme(phases) is None:
        return None
    poisson = [dataclasses.replace(item, sampling="poisson") for item in phases]
    if delta is not None:
        return tight_epsilon(poisson, delta, accuracy=accuracy)
    assert epsilon is not None, "exactly one of delta and epsilon"
    return tight_delta(poisson, epsilon, accuracy=accuracy)


def compare_with_poisson(result: PLDResult, poisson: PLDResult, epsilon_solved: bool) -> PoissonComparison:
    """The Poisson figure `poisson` of the run of `result` against the run's certified lower bound
    (epsilon's when `epsilon_solved`, else delta's)."""
    scheme = batch_scheme(result.phases)
    assert scheme is not None, "a run of shuffled, allocated or fixed-size batches"
    if epsilon_solved:
        return PoissonComparison(scheme, "epsilon", poisson.epsilon_upper, result.epsilon_lower,
                                 poisson.epsilon_upper < result.epsilon_lower)
    return PoissonComparison(scheme, "delta", poisson.delta_upper, result.delta_lower,
                             poisson.delta_upper < result.delta_lower)
