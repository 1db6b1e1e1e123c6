"""What analysis a run's accounting rests on, in words: the sampling scheme, the neighbour
relation and the theorem behind each pair (`analysis_of`), for the result a user reads."""

from __future__ import annotations

from collections.abc import Sequence

from dpcalc.core.phases import Phase
from dpcalc.core.pld.exact import exact_analysis


def _one(phase: Phase) -> str:
    relation = phase.neighbours
    if phase.examples_per_user > 1:
        return (f"user level ({phase.examples_per_user} examples a user), Poisson, {relation}: binomial mixture "
                "pair (Ganesh 2024)")
    if phase.sampling == "shuffle":
        return (f"shuffled batches, {relation}: a Gaussian an epoch above, the largest batch sum below "
                "(Chua et al. 2024)")
    if phase.sampling == "allocation":
        return (f"random allocation (each record in one of {phase.epoch_steps} steps an epoch), {relation}: "
                "lattice pairs above and below the epoch's pair (Feldman and Shenfeld 2025)")
    if phase.sampling == "uniform":
        if relation == "add-remove":
            return ("fixed-size batches, add-remove: the Poisson pair at sensitivity 2, attained (docs/mathematics.md, "
                    "\"Fixed-size batches under add-remove\")")
        return (f"fixed-size batches, {relation}: two-part pair above, attained pair below (Zhu, Dong, Wang 2022)")
    if phase.mechanism == "laplace":
        return f"Poisson, {relation}: subsampled Laplace pairs (Zhu, Dong, Wang 2022)"
    if relation == "replace-one":
        return "Poisson, replace-one: the pair of Lebeda et al. 2024"
    return f"Poisson, {relation}: remove and add pairs (Zhu, Dong, Wang 2022)"


def analysis_of(phases: Sequence[Phase]) -> str:
    """The sampling scheme, neighbour relation and source of the pairs of each kind of phase in
    the run, joined by "; " (each kind once, in the order of the phases); for a run that is
    exactly mu-GDP (unsubsampled Gaussian phases, `exact.exact_run`) or k unsubsampled Laplace
    releases of one scale (`exact.exact_laplace_run`) the exact analysis."""
    exact = exact_analysis(phases)
    if exact is not None:
        return exact
    seen: list[str] = []
    for phase in phases:
        text = _one(phase)
        if text not in seen:
            seen.append(text)
    return "; ".join(seen)
