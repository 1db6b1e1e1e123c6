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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from dpcalc.core.accountants import Accountant, accountant
from dpcalc.core.budget.releases import (
    DP_MECHANISMS,
    PHASE_MECHANISMS,
    PURE_DP_MECHANISMS,
    bounded_range,
    cap_cost_of,
    capped_phase_of,
    guarantee_basis,
    guarantee_release,
    merged_phases,
    overflow_of,
    privacy_basis,
    release_phase,
    total_overflow,
    truncation_of,
)
from dpcalc.core.budget.risk import RiskCheck, budget_risk
from dpcalc.core.budget.schema import BudgetFile, Release
from dpcalc.core.phases import NOTHING_SAMPLED, Neighbours, Phase
from dpcalc.core.pld.truncated_profile import capped_epsilon
from dpcalc.core.validation import large_delta_warnings

# Shares of delta tried for the first of two groups (any split is a valid bound; the best is kept).
_SPLIT_SHARES = (0.01, 0.05, 0.1, 0.2, 0.35, 0.5, 0.65, 0.8, 0.9, 0.95, 0.99)
# Coarser shares per group for three groups (their sum must stay below one).
_SPLIT_SHARES_3 = (0.05, 0.2, 0.4, 0.6, 0.8)


@dataclass(frozen=True)
class ReleaseEpsilon:
    """One release's own (epsilon, delta), and what it was computed with.

    A release given by its mechanism (noise, sampling, count) or as zCDP is accounted at the
    budget's delta; a pre-computed (eps, delta) release keeps its own pair (`_dp_release`).
    """

    name: str
    mechanism: str
    epsilon: float
    delta: float
    method: str
    overflow: float | None = None  # a capped release's overflow probability (max_batch_size)


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


def _rdp_with_zcdp_epsilon(phases: Sequence[Phase], rho: float, delta: float) -> float:
    """The RDP group: the mechanism phases and rho-zCDP on one curve (RDP order * rho at every
    order, Bun, Steinke 2016, Def. 1.1), converted as the RDP accountant converts."""
    import numpy as np

    from dpcalc.core.rdp import DEFAULT_ORDERS, composed_rdp, epsilon_from_curve

    orders = np.asarray(DEFAULT_ORDERS)
    curve = rho * orders
    if phases:
        curve = curve + composed_rdp(phases, DEFAULT_ORDERS)[0]
    return epsilon_from_curve(DEFAULT_ORDERS, curve, delta)[0]


def _zcdp_epsilon(rho: float, delta: float) -> float:
    from dpcalc.core.zcdp import zcdp_epsilon

    return zcdp_epsilon(rho, delta)[0]


# Up to this many uses in all, (eps, delta) releases are composed as the list of their uses;
# beyond it by their distinct pairs and counts (`composition.compose_counted`).
_LISTED_UP_TO = 2**16


def _dp_epsilon(releases: list[Release], delta: float) -> float:
    """Pre-computed (eps_i, delta_i) releases composed at the total delta `delta`: the best of
    basic, advanced and the optimum (Kairouz, Oh, Viswanath 2015, Thm 3.3; Murtagh, Vadhan
    2016, Thm 1.5), all stated at that one total (docs/mathematics.md §5). The optimum reaches
    every total delta from the releases' own composed delta 1 - prod(1 - delta_i) up, where it
    is sum eps_i, and falls continuously as the total grows; below that floor no epsilon holds
    (inf)."""
    from dpcalc.core import composition
    from dpcalc.core.validation import ParameterError

    pairs = {(r.number("epsilon"), r.get("delta", 0.0)) for r in releases}
    total = sum(int(r.get("count", 1)) for r in releases)
    if total > _LISTED_UP_TO:
        # many uses: each distinct pair with its count summed, never a list over the count
        counted: dict[tuple[float, float], int] = {}
        for r in releases:
            pair = (r.number("epsilon"), r.get("delta", 0.0))
            counted[pair] = counted.get(pair, 0) + int(r.get("count", 1))
        try:
            return min(composition.compose_counted([(e, d, c) for (e, d), c in counted.items()], delta))
        except ParameterError as error:
            if error.name != "total_delta":
                raise
            return math.inf
    try:
        if len(pairs) == 1:
            epsilon, own_delta = pairs.pop()
            result = composition.compose(epsilon, own_delta, total, total_delta=delta)
        else:
            epsilons = [r.number("epsilon") for r in releases for _ in range(int(r.get("count", 1)))]
            deltas = [r.get("delta", 0.0) for r in releases for _ in range(int(r.get("count", 1)))]
            result = composition.compose_heterogeneous(epsilons, deltas, total_delta=delta)
    except ParameterError as error:
        if error.name != "total_delta":
            raise
        return math.inf  # below the releases' own composed delta
    return min(result.basic.epsilon, result.advanced.epsilon, result.optimal.epsilon)


def _bounded_range_epsilon(releases: list[Release], delta: float) -> float:
    """Exponential mechanisms, each eps_i-DP and eps_i-bounded-range, composed at `delta`: the
    smaller of two valid bounds, the zCDP conversion of sum eps_i^2 / 8 (eps-BR implies
    eps^2/8-zCDP, Cesar, Rogers 2021; zCDP composes additively, Bun, Steinke 2016) and their
    optimal composition as eps-DP mechanisms (`_dp_epsilon`). Few releases favour the latter,
    many the former (its rho is a quarter of pure eps-DP's eps^2/2)."""
    rho = math.fsum(r.number("epsilon") ** 2 / 8.0 * r.get("count", 1) for r in releases)
    return min(_zcdp_epsilon(rho, delta), _dp_epsilon(releases, delta))


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
            accounted, warnings = _capped_pld_epsilon(members, group_delta, cost, step_by_step)
            notes[("pld", group_delta)] = warnings
            return accounted
        return epsilon

    if budget.accountant == "rdp" and (phases or zcdp_releases):
        if cost > 0.0:
            groups["rdp"] = lambda d: capped_epsilon(lambda d2: _rdp_with_zcdp_epsilon(phases, rho, d2), d, cost)
        else:
            groups["rdp"] = lambda d: _rdp_with_zcdp_epsilon(phases, rho, d)
    else:
        if phases:
            # identical releases joined into one phase of their steps summed (`merged_phases`)
            joined = merged_phases(phases)
            groups["pld"] = capped_pld_group(joined) if cost > 0.0 else pld_group("pld", joined)
        if shuffled:
            groups["shuffled"] = pld_group("shuffled", shuffled)
        if zcdp_releases:
            groups["zcdp"] = lambda d: _zcdp_epsilon(rho, d)
    if dp_releases:
        groups["dp"] = lambda d: _dp_epsilon(dp_releases, d)
    if ranged:
        groups["bounded-range"] = lambda d: _bounded_range_epsilon(ranged, d)

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

    own = [_release_epsilon(r, delta, release_accountant, budget.neighbours, budget.accountant)
           for r in budget.releases]
    own = [_as_stated(accounted, release) for accounted, release in zip(own, stated.releases)]
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


def _capped_pld_epsilon(phases: Sequence[Phase], delta: float, overflow: float,
                        step_by_step: Sequence[Phase] = ()) -> tuple[float, tuple[str, ...]]:
    """(the certified epsilon of a capped run of PLD phases at delta, the accountant's warnings):
    the smallest eps found with delta_upper(eps) + (1 + e^eps) c <= delta on the run's certified
    profile, c = `overflow` what the caps may add (`core.pld.truncated_profile.capped_upper_epsilon`, as
    `dpcalc pld --max-batch-size`). Where that lies above the uncapped run's epsilon by more than
    the accuracy and `step_by_step` (the run with its capped phases as `CappedPhase`s) has such
    phases, the smaller of it and their composition (`truncation.composed_upper`)."""
    from dpcalc.core.accountants import merge_full_batch_gaussians
    from dpcalc.core.limits import DEFAULT_ACCURACY
    from dpcalc.core.pld.capped_phase import CappedPhase
    from dpcalc.core.pld.privacy_profile import ProfileBounds
    from dpcalc.core.pld.truncated_profile import capped_upper_epsilon
    from dpcalc.core.pld.truncation import composed_upper

    profile = ProfileBounds(merge_full_batch_gaussians(phases), [(delta, None)])
    upper = capped_upper_epsilon(profile, delta, overflow)
    warnings = tuple(profile.warnings)
    if any(isinstance(phase, CappedPhase) for phase in step_by_step):
        uncapped = capped_upper_epsilon(profile, delta, 0.0)
        if not upper <= uncapped * (1.0 + DEFAULT_ACCURACY):
            composed = composed_upper(step_by_step, delta=delta, epsilon=None, accuracy=DEFAULT_ACCURACY)
            if composed is not None and composed[0] < upper:
                upper, warnings = composed
    return upper, warnings


def _capped_release_epsilon(release: Release, phase: Phase, delta: float) -> float:
    """A capped release's own certified epsilon at delta: `dpcalc pld --max-batch-size`'s figure
    (`core.pld.truncation.account_truncated`)."""
    from dpcalc.core.limits import DEFAULT_ACCURACY
    from dpcalc.core.pld.truncation import account_truncated

    truncation = truncation_of(release)
    assert truncation is not None, "a capped release"
    truncated, _poisson, _overflow = account_truncated([phase], truncation, delta=delta, epsilon=None,
                                                       accuracy=DEFAULT_ACCURACY)
    return truncated.epsilon_upper


def _as_stated(accounted: ReleaseEpsilon, release: Release) -> ReleaseEpsilon:
    """A ptr or smooth-sensitivity release's own pair under its own mechanism's name, with the
    guarantee it was accounted by (`guarantee_basis`) before the method."""
    if accounted.mechanism == release.mechanism:
        return accounted
    return replace(accounted, mechanism=release.mechanism, method=f"{guarantee_basis(release)}; {accounted.method}")


def _release_epsilon(release: Release, delta: float, mechanisms: Accountant,
                     neighbours: Neighbours = "add-remove", accountant_name: str = "pld") -> ReleaseEpsilon:
    """One release's own epsilon at delta; a mechanism release by the budget's accountant, a
    pre-computed (eps, delta) release by `_dp_release` (at its own delta)."""
    if "max_batch_size" in release.parameters:
        overflow = overflow_of(release, neighbours)
        phase = release_phase(release, neighbours)
        cap = int(release.number("max_batch_size"))
        step_by_step = capped_phase_of(release, neighbours) is not phase
        if accountant_name == "rdp":
            cost = cap_cost_of(release, neighbours)
            epsilon = capped_epsilon(lambda d: mechanisms.epsilon([phase], d).epsilon, delta, cost)
            method = "RDP"
            share = "it" if cost == overflow else f"{cost:.3g} (step by step)"
            method += f", batches capped at {cap}: overflow probability <= {overflow:.3g}, (1 + e^eps) times {share} " \
                      "added to delta"
        else:
            epsilon = _capped_release_epsilon(release, phase, delta)
            method = "PLD (certified)"
            method += (f", batches capped at {cap} (overflow probability <= {overflow:.3g}): the tighter of the "
                       "overflow bound and the step-by-step bound" if step_by_step else
                       f", batches capped at {cap}: overflow probability <= {overflow:.3g}, (1 + e^eps) times it "
                       "added to delta")
        return ReleaseEpsilon(release.name, release.mechanism, epsilon, delta, method, overflow)
    if release.mechanism == "zcdp":
        epsilon = _zcdp_epsilon(release.number("rho") * release.get("count", 1), delta)
        method = "zCDP"
    elif release.mechanism in DP_MECHANISMS:
        return _dp_release(release, delta)
    elif release.mechanism in PURE_DP_MECHANISMS:
        return _textbook_release(release, delta)
    else:
        accounted = mechanisms.epsilon([release_phase(release, neighbours)], delta)
        epsilon, method = accounted.epsilon, accounted.method
    return ReleaseEpsilon(release.name, release.mechanism, epsilon, delta, method)


def _dp_release(release: Release, delta: float) -> ReleaseEpsilon:
    """A pre-computed (eps, delta) release's own pair.

    Used once (count 1) it is the pair stated in the file. Used c times, it is the c-fold
    composition: at the budget's delta when that reaches the release's own composed delta
    1 - (1 - delta_r)^c, else at that floor, where the optimum is exactly c eps (Kairouz, Oh,
    Viswanath 2015, Thm 3.3). The floor is rounded up (a delta presented with an epsilon is an
    upper bound).
    """
    epsilon, own_delta = release.number("epsilon"), release.get("delta", 0.0)
    count = int(release.get("count", 1))
    if count == 1:
        given = "given" if release.mechanism == "dp" else "exact (randomized response is pure epsilon-DP)"
        return ReleaseEpsilon(release.name, release.mechanism, epsilon, own_delta, given)
    method = "optimal composition"
    composed = _dp_epsilon([release], delta)
    if math.isfinite(composed):
        return ReleaseEpsilon(release.name, release.mechanism, composed, delta, method)
    floor = -math.expm1(count * math.log1p(-own_delta))
    floor = min(math.nextafter(floor * (1.0 + 1e-14), 1.0), 1.0)
    return ReleaseEpsilon(release.name, release.mechanism, epsilon * count, floor, method)


def _textbook_release(release: Release, delta: float) -> ReleaseEpsilon:
    """A textbook mechanism's own pair: eps-DP at its epsilon (`privacy_basis`), used `count`
    times as `_dp_release` composes a pre-computed pair; for an exponential mechanism used more
    than once, the zCDP bound at eps^2/8 each when it is smaller (`_bounded_range_epsilon`)."""
    own = _dp_release(release, delta)
    basis = privacy_basis(release)
    count = int(release.get("count", 1))
    if count > 1 and bounded_range(release):
        rho = count * release.number("epsilon") ** 2 / 8.0
        converted = _zcdp_epsilon(rho, delta)
        if converted < own.epsilon:
            return ReleaseEpsilon(release.name, release.mechanism, converted, delta,
                                  "zCDP, eps^2/8 each: eps-bounded range (Cesar and Rogers 2021)")
    method = basis if count == 1 else f"optimal composition, {basis}"
    return ReleaseEpsilon(release.name, release.mechanism, own.epsilon, own.delta, method)


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
