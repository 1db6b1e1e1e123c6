"""A budget file's attack-risk limits: the certified maximum advantage and TPR at an FPR of all
releases composed (docs/mathematics.md §8, "Risk limits in a budget file").

The mechanism releases are composed by the PLD accountant as one run (a shuffled release by
what bounds it from above: one unsubsampled Gaussian an epoch begun, `pld.model.dominating_phase`).
A release known only by (eps, delta) enters through its trade-off curve f_{eps,delta}, whose
dominating pair is the randomized response with an atom: with probability delta an outcome seen
under P only, otherwise privacy loss +eps or -eps with probabilities e^eps/(1 + e^eps) and
1/(1 + e^eps) under P (Kairouz, Oh, Viswanath 2015). Composing the run A with such pairs
(each used c times) gives, for every t,

    delta(t) = 1 - K + K sum_k w_k delta_A(t - s_k),  K = prod (1 - delta_i)^c_i,

where (s_k, w_k) is the law under P of the summed losses of the randomized responses, and
delta_A at a negative argument is 1 - e^s + e^s delta_A(-s) for the symmetric profile of A
(the maximum over both orders, which bounds each order's). Every term rises with delta_A, so
certified upper bounds of A's profile give certified upper bounds of delta; the advantage is
delta(0) and the TPR at FPR y is read off as in `dpcalc.core.risk`, by `dpcalc.core.tradeoff`
(the upper end only: a release given by (eps, delta) may be better than its pair, so no lower
end is claimed).

Capped releases (max_batch_size) move the composition's output law under every dataset by at
most eta in total variation (the union bound of their overflow probabilities), so the capped
curve f' obeys f'(alpha) >= f(alpha + eta) - eta: the advantage grows by at most 2 eta and the
TPR at FPR y is at most the uncapped TPR at y + eta, plus eta (docs/mathematics.md, "Attack risk
of a capped run").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpcalc.core.arrays import sorted_distinct
from dpcalc.core.budget.releases import (
    DP_MECHANISMS,
    PHASE_MECHANISMS,
    PURE_DP_MECHANISMS,
    guarantee_release,
    merged_phases,
    release_phase,
)
from dpcalc.core.budget.schema import BudgetFile, BudgetFileError, Release

# The randomized responses' summed losses may take at most this many distinct values (a few
# dozen (eps, delta) releases of different epsilons); a budget beyond it is refused.
MAX_SHIFTS = 4096


@dataclass(frozen=True)
class RiskCheck:
    """One risk limit of a budget and the certified figure of all releases composed."""

    figure: str  # "advantage" or "tpr"
    fpr: float | None  # the FPR of a TPR limit
    limit: float
    value: float  # certified upper bound of the composed releases' figure
    within: bool


def budget_risk(budget: BudgetFile, overflow: float = 0.0) -> tuple[tuple[RiskCheck, ...], tuple[str, ...]]:
    """The budget's risk limits checked against all its releases composed, and warnings; () when
    it sets none. `overflow` bounds the probability that a batch of a capped release overflows
    (module docstring)."""
    if budget.max_advantage is None and budget.tpr_at_fpr is None:
        return (), ()
    from dpcalc.core.pld.model import dominating_phase
    from dpcalc.core.pld.privacy_profile import ProfileBounds
    from dpcalc.core.tradeoff import GRID_POINTS, MARGIN, tpr_terms

    phases = [release_phase(r, budget.neighbours) for r in budget.releases if r.mechanism in PHASE_MECHANISMS]
    phases = merged_phases([dominating_phase(phase) if phase.sampling == "shuffle" else phase for phase in phases])
    # the textbook mechanisms enter as the eps-DP releases they are (delta 0)
    shifts, weights, log_keep = _randomized_responses(
        [r for r in budget.releases if r.mechanism in DP_MECHANISMS or r.mechanism in PURE_DP_MECHANISMS],
        budget.source)
    targets: list[tuple[float | None, float | None]] = []
    if budget.max_advantage is not None:
        targets.append((None, 0.0))
    if budget.tpr_at_fpr is not None:
        targets.append((budget.tpr_at_fpr[0], None))
    # only upper bounds are read: a direction's lower measure is composed only where the target
    # needs it (`ProfileBounds`'s spare_lower and at_zero)
    profile = ProfileBounds(phases, targets, spare_lower=True, at_zero=True) if phases else None
    warnings = () if profile is None else tuple(profile.warnings)

    def run_delta(points: np.ndarray) -> np.ndarray:
        """Certified upper bounds of A's symmetric profile at any real points."""
        size = np.abs(points)
        upper = np.zeros(len(points)) if profile is None else profile.at(size)[0]
        with np.errstate(over="ignore"):
            below = -np.expm1(points) + np.exp(points) * upper
        return np.where(points >= 0.0, upper, np.minimum(below, 1.0))

    keep = math.exp(log_keep)
    lost = -math.expm1(log_keep)

    def total_delta(points: np.ndarray) -> np.ndarray:
        composed = np.zeros(len(points))
        for shift, weight in zip(shifts, weights):
            composed += weight * run_delta(points - shift)
        return np.minimum(1.0, (lost + keep * composed) * (1.0 + MARGIN))

    checks = []
    if budget.max_advantage is not None:
        value = float(total_delta(np.array([0.0]))[0])
        if overflow > 0.0:
            value = min(1.0, (value + 2.0 * overflow) * (1.0 + MARGIN))
        checks.append(RiskCheck("advantage", None, budget.max_advantage, value, value <= budget.max_advantage))
    if budget.tpr_at_fpr is not None:
        fpr, limit = budget.tpr_at_fpr
        top = math.log(1.0 / fpr) + 0.1
        # the kinks of the randomized responses' profiles are where their bounds are decided
        kinks = [abs(shift) for shift in shifts if abs(shift) <= top]
        grid = sorted_distinct(np.concatenate([np.linspace(0.0, top, GRID_POINTS), kinks]))
        # capped: the uncapped TPR at fpr + eta, plus eta (1 when fpr + eta reaches 1)
        shifted = min(1.0, fpr + overflow)
        terms = tpr_terms(grid, total_delta(grid), np.array([shifted]))
        value = min(1.0, max(fpr, (float(np.min(terms)) + overflow) * (1.0 + MARGIN)))
        checks.append(RiskCheck("tpr", fpr, limit, value, value <= limit))
    return tuple(checks), warnings


def _randomized_responses(releases: Sequence[Release], source: str) -> tuple[list[float], list[float], float]:
    """The law under P of the summed losses of the (eps, delta) releases' randomized responses, as
    (losses, probabilities), and log K = sum c log(1 - delta) (the mass outside the atoms); a
    BudgetFileError naming the release (in the file `source`) past MAX_SHIFTS values."""
    law = {0.0: 1.0}
    log_keep = 0.0
    for release in releases:
        epsilon, delta = release.number("epsilon"), release.get("delta", 0.0)
        count = int(release.get("count", 1))
        log_keep += count * math.log1p(-delta) if delta < 1.0 else -math.inf
        if epsilon == 0.0:
            continue
        if count >= MAX_SHIFTS:  # its own law alone has count + 1 values
            raise BudgetFileError(f"{source}:{release.line}: release '{release.name}': beside the budget's "
                                  "attack-risk limits an (epsilon, delta) release is composed through its trade-off "
                                  f"curve, at most {MAX_SHIFTS - 1} times: count must be in [1, {MAX_SHIFTS - 1}], "
                                  f"got {count}")
        # P's probabilities of loss +eps and -eps: e^eps / (1 + e^eps) and 1 / (1 + e^eps)
        log_up, log_down = -math.log1p(math.exp(-epsilon)), -math.log1p(math.exp(epsilon))
        step = {}
        for j in range(count + 1):
            log_weight = (math.lgamma(count + 1) - math.lgamma(j + 1) - math.lgamma(count - j + 1)
                          + j * log_up + (count - j) * log_down)
            step[(2 * j - count) * epsilon] = math.exp(log_weight)
        combined: dict[float, float] = {}
        for loss, weight in law.items():
            for extra, probability in step.items():
                key = loss + extra
                combined[key] = combined.get(key, 0.0) + weight * probability
        if len(combined) > MAX_SHIFTS:
            raise BudgetFileError(f"{source}:{release.line}: release '{release.name}': beside the budget's "
                                  "attack-risk limits the (epsilon, delta) releases compose to more than "
                                  f"{MAX_SHIFTS} privacy-loss values; merge releases of the same epsilon into one "
                                  "with a count")
        law = combined
    return list(law), list(law.values()), log_keep


def risk_basis(budget: BudgetFile) -> str:
    """What the risk checks compose, in words."""
    kinds = {guarantee_release(release).mechanism for release in budget.releases}  # ptr, smooth-sensitivity: dp
    parts = []
    if kinds & set(PHASE_MECHANISMS):
        parts.append("mechanism releases by the PLD accountant (certified upper bound)")
    if kinds & set(DP_MECHANISMS) or kinds & set(PURE_DP_MECHANISMS):
        parts.append("(epsilon, delta) releases through their trade-off curves f_{eps,delta}")
    return "; ".join(parts) or "no releases"


