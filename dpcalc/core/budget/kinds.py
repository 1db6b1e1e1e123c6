"""How each kind of budget-file release is accounted: a group's epsilon at its share of delta,
and each release's own epsilon.

`account.account_budget` sorts a budget's releases into groups and joins the groups by basic
composition; what a group costs at a given delta, and what a release costs alone, is here:

- the mechanism releases with the zCDP releases on one RDP curve (`rdp_with_zcdp_epsilon`), or
  zCDP releases by their conversion (`rho_epsilon`; Canonne, Kamath, Steinke 2020);
- pre-computed (eps, delta) releases and the eps-DP textbook mechanisms by the best of basic,
  advanced and optimal composition (`dp_epsilon`; Kairouz, Oh, Viswanath 2015);
- exponential mechanisms by the better of zCDP at eps^2/8 each (eps-bounded range, Cesar,
  Rogers 2021) and optimal composition (`bounded_range_epsilon`);
- a PLD group with capped releases (max_batch_size) on its certified profile, with what the caps
  may add to delta (`capped_pld_epsilon`; docs/mathematics.md, "Truncated Poisson sampling");
- one release's own (epsilon, delta) and the method that gave it (`release_epsilon`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from dpcalc.core.accountants import Accountant
from dpcalc.core.budget.releases import (
    DP_MECHANISMS,
    PURE_DP_MECHANISMS,
    bounded_range,
    cap_cost_of,
    capped_phase_of,
    guarantee_basis,
    overflow_of,
    privacy_basis,
    release_phase,
    truncation_of,
)
from dpcalc.core.budget.schema import Release
from dpcalc.core.phases import Neighbours, Phase


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


def rdp_with_zcdp_epsilon(phases: Sequence[Phase], rho: float, delta: float) -> float:
    """The RDP group: the mechanism phases and rho-zCDP on one curve (RDP order * rho at every
    order, Bun, Steinke 2016, Def. 1.1), converted as the RDP accountant converts."""
    import numpy as np

    from dpcalc.core.rdp import DEFAULT_ORDERS, composed_rdp, epsilon_from_curve

    orders = np.asarray(DEFAULT_ORDERS)
    curve = rho * orders
    if phases:
        curve = curve + composed_rdp(phases, DEFAULT_ORDERS)[0]
    return epsilon_from_curve(DEFAULT_ORDERS, curve, delta)[0]


def rho_epsilon(rho: float, delta: float) -> float:
    """The epsilon at `delta` of rho-zCDP (Canonne, Kamath, Steinke 2020; `core.zcdp.zcdp_epsilon`)."""
    from dpcalc.core.zcdp import zcdp_epsilon

    return zcdp_epsilon(rho, delta)[0]


# Up to this many uses in all, (eps, delta) releases are composed as the list of their uses;
# beyond it by their distinct pairs and counts (`composition.compose_counted`).
_LISTED_UP_TO = 2**16


def dp_epsilon(releases: list[Release], delta: float) -> float:
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


def bounded_range_epsilon(releases: list[Release], delta: float) -> float:
    """Exponential mechanisms, each eps_i-DP and eps_i-bounded-range, composed at `delta`: the
    smaller of two valid bounds, the zCDP conversion of sum eps_i^2 / 8 (eps-BR implies
    eps^2/8-zCDP, Cesar, Rogers 2021; zCDP composes additively, Bun, Steinke 2016) and their
    optimal composition as eps-DP mechanisms (`dp_epsilon`). Few releases favour the latter,
    many the former (its rho is a quarter of pure eps-DP's eps^2/2)."""
    rho = math.fsum(r.number("epsilon") ** 2 / 8.0 * r.get("count", 1) for r in releases)
    return min(rho_epsilon(rho, delta), dp_epsilon(releases, delta))


def capped_pld_epsilon(phases: Sequence[Phase], delta: float, overflow: float,
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


def as_stated(accounted: ReleaseEpsilon, release: Release) -> ReleaseEpsilon:
    """A ptr or smooth-sensitivity release's own pair under its own mechanism's name, with the
    guarantee it was accounted by (`guarantee_basis`) before the method."""
    if accounted.mechanism == release.mechanism:
        return accounted
    return replace(accounted, mechanism=release.mechanism, method=f"{guarantee_basis(release)}; {accounted.method}")


def release_epsilon(release: Release, delta: float, mechanisms: Accountant,
                     neighbours: Neighbours = "add-remove", accountant_name: str = "pld") -> ReleaseEpsilon:
    """One release's own epsilon at delta; a mechanism release by the budget's accountant, a
    pre-computed (eps, delta) release by `_dp_release` (at its own delta)."""
    if "max_batch_size" in release.parameters:
        overflow = overflow_of(release, neighbours)
        phase = release_phase(release, neighbours)
        cap = int(release.number("max_batch_size"))
        step_by_step = capped_phase_of(release, neighbours) is not phase
        if accountant_name == "rdp":
            from dpcalc.core.pld.truncated_profile import capped_epsilon

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
        epsilon = rho_epsilon(release.number("rho") * release.get("count", 1), delta)
        method = "zCDP"
    elif release.mechanism in DP_MECHANISMS:
        return _dp_release(release, delta)
    elif release.mechanism in PURE_DP_MECHANISMS:
        return _textbook_release(release, delta)
    else:
        accounted = mechanisms.epsilon([release_phase(release, neighbours)], delta)
        epsilon, method = accounted.epsilon, accounted.method
        if release.mechanism == "bandmf":
            method += ("; amplified BandMF (arXiv 2306.08153, Thm 4), columns of C of norm at most 1"
                       + (", an upper bound" if release.number("bands") > 1 else ", DP-SGD itself"))
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
    composed = dp_epsilon([release], delta)
    if math.isfinite(composed):
        return ReleaseEpsilon(release.name, release.mechanism, composed, delta, method)
    floor = -math.expm1(count * math.log1p(-own_delta))
    floor = min(math.nextafter(floor * (1.0 + 1e-14), 1.0), 1.0)
    return ReleaseEpsilon(release.name, release.mechanism, epsilon * count, floor, method)


def _textbook_release(release: Release, delta: float) -> ReleaseEpsilon:
    """A textbook mechanism's own pair: eps-DP at its epsilon (`privacy_basis`), used `count`
    times as `_dp_release` composes a pre-computed pair; for an exponential mechanism used more
    than once, the zCDP bound at eps^2/8 each when it is smaller (`bounded_range_epsilon`)."""
    own = _dp_release(release, delta)
    basis = privacy_basis(release)
    count = int(release.get("count", 1))
    if count > 1 and bounded_range(release):
        rho = count * release.number("epsilon") ** 2 / 8.0
        converted = rho_epsilon(rho, delta)
        if converted < own.epsilon:
            return ReleaseEpsilon(release.name, release.mechanism, converted, delta,
                                  "zCDP, eps^2/8 each: eps-bounded range (Cesar and Rogers 2021)")
    method = basis if count == 1 else f"optimal composition, {basis}"
    return ReleaseEpsilon(release.name, release.mechanism, own.epsilon, own.delta, method)
