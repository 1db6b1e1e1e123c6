"""Composing a budget file's releases: each one's own epsilon, the total, the verdict.

The releases fall into groups, each accounted as tightly as its kind allows: the mechanism
releases together by the budget's accountant (dpcalc.core.accountants: pld, with full-batch
Gaussians exact, or rdp, which also takes the zCDP releases on its curve), zCDP releases by
their conversion (Canonne, Kamath, Steinke 2020), pre-computed (eps, delta) releases and the
eps-DP textbook mechanisms (svt, noisy-max with Laplace or exponential noise) by optimal
composition (Kairouz, Oh, Viswanath 2015), exponential mechanisms (exponential, noisy-max with
Gumbel noise) by the better of two sound bounds, zCDP at eps^2/8 each (eps-bounded range,
Cesar, Rogers 2021) and optimal composition as eps-DP. The groups are joined by basic
composition with the best of a few splits of delta.

A subsampled-gaussian release with max_batch_size (truncated Poisson sampling) is accounted as
its Poisson run plus the overflow: the capped composition's output law is within total
variation eta (the union bound of the capped releases' overflow probabilities) of the
uncapped one's under every dataset, so the composition of the mechanism group is (eps,
delta_group(eps) + (1 + e^eps) eta)-DP at its own composed eps (`core.pld.truncation`;
docs/mathematics.md, "Truncated Poisson sampling").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from dpcalc.core.accountants import accountant
from dpcalc.core.budget.kinds import (
    ReleaseEpsilon,
    as_stated,
    bounded_range_epsilon,
    capped_pld_epsilon,
    dp_epsilon,
    rdp_with_zcdp_epsilon,
    release_epsilon,
    rho_epsilon,
)
from dpcalc.core.budget.releases import (
    DP_MECHANISMS,
    PHASE_MECHANISMS,
    PURE_DP_MECHANISMS,
    bounded_range,
    cap_cost_of,
    capped_phase_of,
    guarantee_release,
    merged_phases,
    overflow_of,
    release_phase,
    total_overflow,
)
from dpcalc.core.budget.risk import RiskCheck, budget_risk
from dpcalc.core.budget.schema import BudgetFile, Release
from dpcalc.core.phases import NOTHING_SAMPLED, Phase
from dpcalc.core.validation import large_delta_warnings

# Shares of delta tried for the first of two groups (any split is a valid bound; the best is kept).
_SPLIT_SHARES = (0.01, 0.05, 0.1, 0.2, 0.35, 0.5, 0.65, 0.8, 0.9, 0.95, 0.99)
# Coarser shares per group for three groups (their sum must stay below one).
_SPLIT_SHARES_3 = (0.05, 0.2, 0.4, 0.6, 0.8)


@dataclass(frozen=True)
class BudgetResult:
    """The composed total of every release against the budget.

    `total_epsilon` is a valid bound at `total_delta` <= the budget's delta: the groups
    (mechanisms accounted together, zCDP releases, pre-computed (eps, delta) releases) are
    each accounted as tightly as their kind allows and joined by basic composition with the
    best of a few splits of delta (`split` maps group to its share of delta).
    """

    budget: BudgetFile
    releases: tuple[ReleaseEpsilon, ...]
    total_epsilon: float
    total_delta: float
    within_budget: bool
    method: str
    split: dict[str, float]
    warnings: tuple[str, ...] = ()
    # the budget's attack-risk limits against all releases composed (empty when it sets none);
    # within_budget holds only when each of them does too
    risk: tuple[RiskCheck, ...] = ()
    # a certified upper bound on the probability that a batch of a capped release (max_batch_size)
    # overflows its cap; 0 without caps
    overflow: float = 0.0

    @property
    def headroom(self) -> float | None:
        """The budget's epsilon minus the composed total (negative when over budget); what basic
        composition (Dwork, Roth 2014, Thm 3.16) leaves for further releases at this delta. None
        in a budget of attack-risk limits alone (no epsilon)."""
        if self.budget.epsilon is None:
            return None
        return self.budget.epsilon - self.total_epsilon

    @property
    def gate(self) -> str:
        """What the verdict compares: "epsilon", "attack risk" (a budget without epsilon) or both."""
        if self.budget.epsilon is None:
            return "attack risk"
        return "epsilon and attack risk" if self.risk else "epsilon"

    @property
    def epsilon_within(self) -> bool:
        """Whether the total epsilon is within the budget's (always, when the budget sets none)."""
        return self.budget.epsilon is None or self.total_epsilon <= self.budget.epsilon


NO_RELEASES = "no releases are listed: nothing released yet, total epsilon 0, within budget."


def account_budget(budget: BudgetFile) -> BudgetResult:
    """Compose every release of the budget file and compare the total with the budget.

    The groups and their accounting are the module docstring's (docs/mathematics.md §2-§3 for
    the accountants, §5 for KOV and basic composition, DR Thm 3.16, §6 for zCDP)."""
    stated = budget
    # ptr and smooth-sensitivity releases are accounted as the dp or zcdp release of their guarantee
    budget = replace(budget, releases=tuple(guarantee_release(r) for r in budget.releases))
    if not budget.releases:
        # Nothing released costs nothing: epsilon 0 at delta 0, the whole budget is headroom.
        checks, _ = budget_risk(budget)
        return BudgetResult(budget=budget, releases=(), total_epsilon=0.0, total_delta=0.0, within_budget=True,
                            method="no releases", split={}, warnings=(NO_RELEASES,), risk=checks)
    delta = budget.delta
    mechanisms = [r for r in budget.releases if r.mechanism in PHASE_MECHANISMS]
    zcdp_releases = [r for r in budget.releases if r.mechanism == "zcdp"]
    # pre-computed (eps, delta) releases, randomized response and the eps-DP textbook mechanisms;
    # exponential mechanisms apart (bounded range)
    ranged = [r for r in budget.releases if r.mechanism in PURE_DP_MECHANISMS and bounded_range(r)]
    dp_releases = [r for r in budget.releases
                   if r.mechanism in DP_MECHANISMS or (r.mechanism in PURE_DP_MECHANISMS and not bounded_range(r))]
    phases = [release_phase(r, budget.neighbours) for r in mechanisms]
    rho = math.fsum(r.number("rho") * r.get("count", 1) for r in zcdp_releases)
    warnings: list[str] = []

    # the budget's accountant for the mechanisms: with pld, full-batch Gaussians are exact
    release_accountant = accountant(budget.accountant, exact_gaussian=True)

    # Each group's epsilon as a function of its share of delta.
    groups: dict[str, Callable[[float], float]] = {}
    # the accountant's own warnings (e.g. the PLD grid's closed-form fallback) per (group, delta)
    notes: dict[tuple[str, float], tuple[str, ...]] = {}

    # shuffled runs are accounted on their own (their upper and lower pairs differ from the other
    # phases'; pld.check_phases) and joined to the rest by basic composition
    shuffled = [phase for phase in phases if phase.sampling == "shuffle"]
    phases = [phase for phase in phases if phase.sampling != "shuffle"]

    def pld_group(group: str, members: list[Phase]) -> Callable[[float], float]:
        def epsilon(group_delta: float) -> float:
            accounted = release_accountant.epsilon(members, group_delta)
            notes[(group, group_delta)] = accounted.warnings
            return accounted.epsilon
        return epsilon

    # capped releases (max_batch_size): the overflow of all of them, paid once by the group
    # that composes them (shuffled runs take no cap)
    overflow = total_overflow([overflow_of(r, budget.neighbours) for r in mechanisms])
    # what the caps may add to delta, per (1 + e^eps): eta, or less step by step (`cap_cost_of`)
    cost = total_overflow([cap_cost_of(r, budget.neighbours) for r in mechanisms])
    # the group with its capped phases composed step by step, where that analysis applies
    step_by_step = [capped_phase_of(r, budget.neighbours) for r in mechanisms
                    if release_phase(r, budget.neighbours).sampling != "shuffle"]

    def capped_pld_group(members: list[Phase]) -> Callable[[float], float]:
        def epsilon(group_delta: float) -> float:
            accounted, warnings = capped_pld_epsilon(members, group_delta, cost, step_by_step)
            notes[("pld", group_delta)] = warnings
            return accounted
        return epsilon

    if budget.accountant == "rdp" and (phases or zcdp_releases):
        if cost > 0.0:
            from dpcalc.core.pld.truncated_profile import capped_epsilon

            groups["rdp"] = lambda d: capped_epsilon(lambda d2: rdp_with_zcdp_epsilon(phases, rho, d2), d, cost)
        else:
            groups["rdp"] = lambda d: rdp_with_zcdp_epsilon(phases, rho, d)
    else:
        if phases:
            # identical releases joined into one phase of their steps summed (`merged_phases`)
            joined = merged_phases(phases)
            groups["pld"] = capped_pld_group(joined) if cost > 0.0 else pld_group("pld", joined)
        if shuffled:
            groups["shuffled"] = pld_group("shuffled", shuffled)
        if zcdp_releases:
            groups["zcdp"] = lambda d: rho_epsilon(rho, d)
    if dp_releases:
        groups["dp"] = lambda d: dp_epsilon(dp_releases, d)
    if ranged:
        groups["bounded-range"] = lambda d: bounded_range_epsilon(ranged, d)

    cache: dict[tuple[str, float], float] = {}

    def epsilon_of(group: str, share: float) -> float:
        key = (group, share)
        if key not in cache:
            cache[key] = groups[group](share * delta)
        return cache[key]

    names = list(groups)
    splits: list[tuple[float, ...]]
    if len(names) == 1:
        splits = [(1.0,)]
    elif len(names) == 2:
        splits = [(s, 1.0 - s) for s in _SPLIT_SHARES]
    elif len(names) == 3:
        splits = [(a, b, 1.0 - a - b) for a in _SPLIT_SHARES_3 for b in _SPLIT_SHARES_3 if a + b < 0.999]
    else:  # four or five groups (pld, shuffled, zcdp, dp, bounded-range): equal shares
        splits = [tuple(1.0 / len(names) for _ in names)]
    best_total, best_split = math.inf, splits[0]
    for split in splits:
        total = math.fsum(epsilon_of(name, share) for name, share in zip(names, split))
        if total < best_total:
            best_total, best_split = total, split

    own = [release_epsilon(r, delta, release_accountant, budget.neighbours, budget.accountant)
           for r in budget.releases]
    own = [as_stated(accounted, release) for accounted, release in zip(own, stated.releases)]
    for name, share in zip(names, best_split):
        for note in notes.get((name, share * delta), ()):
            if note != NOTHING_SAMPLED and f"total: {note}" not in warnings:  # said per release, below
                warnings.append(f"total: {note}")
    if len(names) > 1:
        warnings.append(
            "releases of different kinds were joined by basic composition with the best of a few "
            "splits of delta (" + ", ".join(f"{n} {s:g}" for n, s in zip(names, best_split)) + "): a valid bound, "
            "possibly looser than one accountant over all of them."
        )
    for release in stated.releases:
        if release.mechanism == "randomized-response" and budget.neighbours == "add-remove":
            warnings.append(f"release '{release.name}': randomized response is eps-DP when one respondent's value is "
                            "replaced by another; under this add-remove budget that holds only if the number of "
                            "respondents is public (a report more or less shows who took part): publish it, or state "
                            "the budget under neighbours = \"replace-one\".")
    for release in budget.releases:
        if release.parameters.get("p") == 0:
            warnings.append(f"release '{release.name}': {NOTHING_SAMPLED}")
        if "n" in release.parameters:
            warnings += [f"release '{release.name}': {warning}"
                         for warning in large_delta_warnings(release.parameters["n"], delta)]
    if not math.isfinite(best_total):
        warnings.append("no finite total epsilon at the budget's delta (the releases' own deltas use it up, or the noise is too small).")
    method = {
        "pld": "tight PLD accountant (certified upper bound)",
        "shuffled": "tight PLD accountant, shuffled batches (certified upper bound)",
        "rdp": "RDP accountant",
        "zcdp": "zCDP (Canonne, Kamath, Steinke 2020)",
        "dp": "optimal composition of (eps, delta) releases (Kairouz, Oh, Viswanath 2015)",
        "bounded-range": "exponential mechanisms: the better of zCDP, eps^2/8 each (bounded range, Cesar, "
                         "Rogers 2021), and optimal composition",
    }
    if overflow > 0.0:
        groups_name = "rdp" if "rdp" in names else "pld"
        paid = ("its delta includes (1 + e^eps) times that" if cost == overflow else
                "the caps are accounted step by step (a record added to a capped batch pushes at most one other "
                "out; docs/mathematics.md, \"Truncated Poisson sampling\")")
        warnings.append(f"batches capped (max_batch_size): some batch overflows its cap with probability at most "
                        f"{overflow:.3g}; in the {groups_name} group {paid}.")
    checks, risk_warnings = budget_risk(budget, cost)
    warnings += [f"risk: {note}" for note in risk_warnings if f"risk: {note}" not in warnings]
    return BudgetResult(
        budget=stated,
        releases=tuple(own),
        total_epsilon=best_total,
        overflow=overflow,
        total_delta=delta,
        within_budget=(budget.epsilon is None or best_total <= budget.epsilon) and all(check.within for check in checks),
        method="; ".join(method[name] for name in names),
        split=dict(zip(names, best_split)),
        warnings=tuple(warnings),
        risk=checks,
    )


@dataclass(frozen=True)
class Crossing:
    """Where a budget file's releases, composed in the file's order, go over its budget: the
    releases before `index` compose within it (`before`), with release `index` they do not
    (`with_it`)."""

    index: int  # into budget.releases
    before: BudgetResult
    with_it: BudgetResult

    @property
    def release(self) -> Release:
        return self.with_it.budget.releases[self.index]


def crossing_release(result: BudgetResult) -> Crossing | None:
    """The release that takes an over-budget file's releases over its budget (None within budget).

    Prefixes of the file's releases are composed by `account_budget` and bisected between the
    empty prefix (within any budget: total 0) and the whole file (over budget): the answer is a
    release with its predecessors within budget and, with it, over. Both totals are the same
    certified bounds `account_budget` reports; where they do not grow with every release added
    (basic composition across groups, the best of a few delta splits), another release may cross
    too, and this one is the crossing the bisection meets. About log2(n) + 1 compositions of
    prefixes."""
    if result.within_budget or not result.budget.releases:
        return None
    budget = result.budget
    within, over = 0, len(budget.releases)  # prefixes: the empty one within, the whole file over
    before: BudgetResult | None = None
    with_it = result
    while over - within > 1:
        middle = (within + over) // 2
        prefix = account_budget(replace(budget, releases=budget.releases[:middle]))
        if prefix.within_budget:
            within, before = middle, prefix
        else:
            over, with_it = middle, prefix
    if before is None or len(before.budget.releases) != within:
        before = account_budget(replace(budget, releases=budget.releases[:within]))
    return Crossing(index=over - 1, before=before, with_it=with_it)
