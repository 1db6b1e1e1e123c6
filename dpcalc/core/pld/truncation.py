"""Truncated Poisson sampling: Poisson batches cut to at most B records, accounted from the
Poisson run's certified privacy profile (docs/mathematics.md, "Truncated Poisson sampling").

Pipelines that need a fixed memory bound draw a Poisson batch and, when it holds more than B
records, keep B of them. On every run in which no batch overflows, the truncated mechanism M'
outputs exactly what the Poisson mechanism M outputs; so for every event S and dataset D,
|P[M'(D) in S] - P[M(D) in S]| <= eta_D, the probability that some batch of D overflows. If M
is (eps, delta)-DP, then for neighbours D, D'

    P[M'(D) in S] <= P[M(D) in S] + eta_D <= e^eps P[M(D') in S] + delta + eta_D
                  <= e^eps P[M'(D') in S] + delta + eta_D + e^eps eta_D',

so M' is (eps, delta_M(eps) + (1 + e^eps) eta)-DP with eta the larger overflow probability,
and, the same way round, delta_M'(eps) >= delta_M(eps) - (1 + e^eps) eta. Chua et al. (NeurIPS
2024, "Scalable DP-SGD: shuffling vs. Poisson subsampling") absorb the overflow the same way.
Poisson batches are independent across steps, so with q = P[Binomial(m, p) > B] for a dataset
of m records, eta = 1 - (1 - q)^T exactly.

Under add-remove neighbours the cap is also accounted step by step (`capped_phase`): when a
record's batch overflows, the record can only push one other record out, so each step is
dominated by a revealed mixture of the Poisson pair at shift 1 and at shift 2, and a Poisson
pair at the rate at which the record is kept is attained (docs/mathematics.md, "Truncated
Poisson sampling"). The run's bounds are the tighter ends of the two analyses; each is read off
the Poisson run's profile with what the cap costs (`truncated_profile`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dpcalc.core.phases import Phase, samples_nothing
from dpcalc.core.pld.capped_phase import TAIL_MARGIN, CappedPhase, kept_rate, per_step_covers, step_distances
from dpcalc.core.pld.truncated_profile import capped_lower_epsilon, capped_upper_epsilon, truncated_delta
from dpcalc.core.validation import POSITIVE_INTEGER, ParameterError

if TYPE_CHECKING:
    from dpcalc.core.pld.result import PLDResult


@dataclass(frozen=True)
class Truncation:
    """Batches capped at `max_batch_size` records, from a dataset of `dataset_size` records."""

    dataset_size: int
    max_batch_size: int


@dataclass(frozen=True)
class TruncatedBounds:
    """The truncated run's certified interval, with what the truncation costs.

    `overflow` bounds from above the probability that some batch of the largest neighbouring
    dataset exceeds the cap (eta); `epsilon_*`/`delta_*` are the truncated run's bounds at the
    target (epsilon = inf when no epsilon meets delta: eta is too large for it)."""

    overflow: float
    epsilon_lower: float
    epsilon_upper: float
    delta_lower: float
    delta_upper: float



def overflow_probability(phases: Sequence[Phase], truncation: Truncation) -> float:
    """A certified upper bound on eta: the probability that any batch of the run holds more than
    `max_batch_size` records, on the largest dataset neighbouring one of `dataset_size` records
    (one user's examples more under add-remove; the same size under replace-one and zero-out)."""
    from scipy.special import bdtrc

    POSITIVE_INTEGER.check("dataset size", truncation.dataset_size)
    POSITIVE_INTEGER.check("max batch size", truncation.max_batch_size)
    log_none = 0.0  # log P[no batch overflows]
    for phase in phases:
        if phase.mechanism != "gaussian" or phase.sampling != "poisson":
            raise ParameterError("max batch size", "for Poisson-sampled Gaussian phases", truncation.max_batch_size)
        if phase.sampling_probability == 0.0:
            continue
        records = truncation.dataset_size + (phase.examples_per_user if phase.neighbours == "add-remove" else 0)
        if truncation.max_batch_size >= records:
            continue  # no batch can overflow
        tail = float(bdtrc(truncation.max_batch_size, records, phase.sampling_probability))  # P[X > B]
        tail = min(1.0, tail * (1.0 + TAIL_MARGIN))
        if tail >= 1.0:
            return 1.0
        log_none += phase.steps * math.log1p(-tail)
    return min(1.0, -math.expm1(log_none) * (1.0 + TAIL_MARGIN))


def account_truncated(phases: Sequence[Phase], truncation: Truncation, *, delta: float | None,
                      epsilon: float | None, accuracy: float) -> tuple[PLDResult, PLDResult, float]:
    """(truncated run's result, Poisson run's result, eta): the run's certified bounds at `delta`
    (or at `epsilon`) when its Poisson batches are cut to `truncation.max_batch_size` records.

    One composition serves the Poisson run and both analyses' first reading: the Poisson run's
    result is the composition's own, and the truncated bounds are read off its measures
    (`ProfileBounds`) with what the cap costs on each side (`cap_costs`). Under add-remove, where
    that leaves the interval wider than the accuracy, the capped pairs and the kept rate are
    composed as well (`_per_step`); each end is the tighter of its certified figures."""
    from dpcalc.core.pld.api import account
    from dpcalc.core.pld.privacy_profile import ProfileBounds
    from dpcalc.core.pld.result import PLDResult

    overflow = overflow_probability(phases, truncation)
    # a direction that cannot raise the lower bound at the target is composed upper-only (the
    # bounds are read near the target)
    profile = ProfileBounds(phases, [(delta, epsilon)], accuracy=accuracy, spare_lower=True)
    poisson = profile.results[0] if profile.results else account(tuple(phases), delta=delta, epsilon=epsilon,
                                                                  accuracy=accuracy)
    # what the cap costs above and below: eta, or less step by step (`cap_costs`); the bounds read
    # off the Poisson run's profile with these costs are at least as tight as with eta
    capped = capped_phases(phases, truncation)
    above, below = _costs(overflow, capped)
    if delta is not None:
        upper = capped_upper_epsilon(profile, delta, above, start=poisson.epsilon_upper)
        lower = min(capped_lower_epsilon(profile, delta, below), upper)
    else:
        assert epsilon is not None, "a target names delta or epsilon"
        upper, lower = truncated_delta(profile, epsilon, above)[0], truncated_delta(profile, epsilon, below)[1]
    warnings = tuple(profile.warnings)
    if capped is not None and not (math.isfinite(upper) and upper - lower <= accuracy * upper):
        # then composed: the capped pairs above, the pairs at the kept rate below
        # the kept rate's run is composed only where its distance cost the lower bound more than a
        # quarter of the accuracy against the Poisson run's (it cannot rise above that run's truth)
        poisson_lower = poisson.epsilon_lower if delta is not None else poisson.delta_lower
        poisson_upper = poisson.epsilon_upper if delta is not None else poisson.delta_upper
        step = _per_step(capped, delta=delta, epsilon=epsilon, accuracy=accuracy,
                         with_lower=lower < poisson_lower - 0.25 * accuracy * poisson_upper)
        if step is not None:
            step_upper, step_lower, step_warnings = step
            if step_upper < upper:
                upper, warnings = step_upper, warnings + step_warnings
            lower = max(lower, step_lower)
    if math.isinf(upper):
        warnings += (f"no epsilon meets delta = {delta:g}: a batch overflows the cap with probability up to "
                     f"{overflow:.3g}, and (1 + e^eps) times that already exceeds delta"
                     + ("" if capped is None else ", nor does the step-by-step bound meet it")
                     + "; raise the cap or delta",)
    elif delta is not None and upper - lower > accuracy * upper:
        gap = ("the gap between what bounds a capped batch from above (an added record may push another out "
               "of it) and what some neighbouring datasets attain (the record kept at the rate the cap allows)"
               if capped is not None else "what the overflow probability may cost on either side")
        warnings += (f"the certified interval is {upper - lower:.3g} wide (relative {(upper - lower) / upper:.2g}): "
                     f"the rest is {gap}; the true epsilon lies between the two ends.",)
    truncated = PLDResult.bounds(delta=delta, epsilon=epsilon, upper=upper, lower=min(lower, upper),
                                 accuracy=accuracy, grid_step=poisson.grid_step, grid_size=poisson.grid_size,
                                 binding=poisson.binding, attempts=poisson.attempts, phases=poisson.phases,
                                 warnings=warnings)
    return dataclasses.replace(truncated, exact=poisson.exact), poisson, overflow


def capped_phases(phases: Sequence[Phase], truncation: Truncation) -> tuple[CappedPhase, ...] | None:
    """The run's sampled phases as `CappedPhase`s, or None where the step-by-step analysis does
    not apply (`per_step_covers`) or nothing is sampled."""
    sampled = [phase for phase in phases if not samples_nothing(phase)]
    if not sampled or not all(per_step_covers(phase) for phase in sampled):
        return None
    return tuple(capped(phase, truncation) for phase in sampled)


def capped(phase: Phase, truncation: Truncation) -> CappedPhase:
    """`phase` with its batches capped (`CappedPhase`; `per_step_covers` must hold)."""
    return CappedPhase(**_phase_fields(phase), dataset_size=truncation.dataset_size,
                       max_batch_size=truncation.max_batch_size)


def _phase_fields(phase: Phase, **changes: Any) -> dict[str, Any]:
    """The `Phase` fields of `phase` (a `CappedPhase` has more), with `changes` made."""
    return {field.name: changes.get(field.name, getattr(phase, field.name)) for field in dataclasses.fields(Phase)}



STEP_BY_STEP = "overflow bound and step by step"
OVERFLOW_ONLY = "overflow bound"


def cap_analysis(phases: Sequence[Phase], truncation: Truncation) -> str:
    """Which analyses bound the capped run: the overflow bound always (any rule for the kept
    records), and step by step where the capped pairs apply (`capped_phases`)."""
    return OVERFLOW_ONLY if capped_phases(phases, truncation) is None else STEP_BY_STEP


def cap_costs(phases: Sequence[Phase], truncation: Truncation, overflow: float | None = None) -> tuple[float, float]:
    """(above, below): what the cap may move delta(eps) by, per (1 + e^eps), on the side of the
    upper bounds and on that of the lower bounds. eta (`overflow_probability`, given or computed)
    on both sides, for any rule that picks the kept records; under add-remove, where the capped
    pairs apply (`capped_phases`), the smaller of eta and their distance from the Poisson pairs on
    each side (`step_distances`; docs/mathematics.md, "Truncated Poisson sampling")."""
    eta = overflow_probability(phases, truncation) if overflow is None else overflow
    return _costs(eta, capped_phases(phases, truncation))


def _costs(eta: float, capped: Sequence[CappedPhase] | None) -> tuple[float, float]:
    """`cap_costs` from eta and the run's capped phases (None: no step-by-step analysis)."""
    if capped is None:
        return eta, eta
    far_above, far_below = step_distances(capped)
    return min(eta, far_above), min(eta, far_below)


def composed_upper(phases: Sequence[Phase], *, delta: float | None, epsilon: float | None,
                   accuracy: float) -> tuple[float, tuple[str, ...]] | None:
    """The grid accountant's certified upper bound (on epsilon at `delta`, or on delta at
    `epsilon`) of a run some of whose phases are `CappedPhase`s, and its warnings; None where the
    grid cannot run (no closed form knows the capped pairs).

    For epsilon, the first grid's upper measure alone (`accountant.first_upper`, as
    `api.upper_epsilon`): the capped pairs' own lower measure bounds nothing, and their upper bound
    on that grid lay within 1.3e-8 of the refined one at caps 280, 300 and 320 on the design card, in
    a third of the time; where it cannot certify the target, the refining accountant."""
    from dpcalc.core.pld.accountant import account_grid, first_upper
    from dpcalc.core.pld.api import in_grid
    from dpcalc.core.pld.fallback import out_of_range

    run = tuple(phases)
    if out_of_range(run) is not None:
        return None
    if delta is not None:
        first, _ = in_grid(lambda: first_upper(run, delta, accuracy))
        if first is not None and math.isfinite(first[0]):
            return first[0], ()
    grid, _ = in_grid(lambda: account_grid(run, delta=delta, epsilon=epsilon, accuracy=accuracy))
    if grid is None:
        return None
    upper = grid.result.epsilon_upper if delta is not None else grid.result.delta_upper
    return upper, grid.result.warnings


def _per_step(capped: tuple[CappedPhase, ...], *, delta: float | None, epsilon: float | None,
              accuracy: float, with_lower: bool = True) -> tuple[float, float, tuple[str, ...]] | None:
    """(upper, lower, the upper composition's warnings) of the step-by-step analysis of the cap
    at the target (epsilon bounds at `delta`, or delta bounds at `epsilon`), composed; None where
    the grid cannot run.

    Upper: the grid accountant composes each step's `capped_phase.capped_pair` (no closed form knows it).
    Lower: the Poisson run at the kept rate q (`kept_rate`), which some neighbouring datasets
    attain: every record other than the one added contributes 0 and the kept records are drawn
    uniformly (any other rule keeps the record at least as often for some order of the records).
    Without `with_lower`, the lower end is 0 (the caller keeps its own)."""
    from dpcalc.core.pld.api import cached

    above = composed_upper(capped, delta=delta, epsilon=epsilon, accuracy=accuracy)
    if above is None:
        return None
    if not with_lower:
        return above[0], 0.0, above[1]
    kept = tuple(Phase(**_phase_fields(phase, sampling_probability=kept_rate(phase))) for phase in capped)
    attained = cached(kept, delta, epsilon, accuracy)
    return above[0], attained.epsilon_lower if delta is not None else attained.delta_lower, above[1]


