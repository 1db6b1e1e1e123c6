"""What an attacker can learn from a run: certified bounds on membership-inference and
reconstruction risk, read off the run's trade-off curve.

Sources: Dong, Roth, Su, "Gaussian Differential Privacy" (JRSS-B 84(1), 2022, arXiv 1905.02383),
"DRS" below; Kulynych, Gomez, Kaissis, du Pin Calmon, Troncoso, "Attack-aware noise calibration
for differential privacy" (NeurIPS 2024, arXiv 2407.02191); Kaissis, Hayes, Ziller, Rueckert,
"Bounding data reconstruction attacks with the hypothesis testing interpretation of differential
privacy" (arXiv 2307.03928); Hayes, Mahloujifar, Balle, "Bounding training data reconstruction
in DP-SGD" (NeurIPS 2023). The mathematics is written out in docs/mathematics.md, "Attack risk".

A membership attack is a test between the run on D (the record in) and on D' (out). Its
false-positive rate alpha and true-positive rate 1 - beta obey beta >= f(alpha), where f is the
run's trade-off curve. For a run with the privacy profile delta(eps) (eps >= 0, the maximum
over both orders of neighbouring datasets) the f-DP guarantee is the symmetrised curve

    f(alpha) = sup_{eps >= 0} f_{eps, delta(eps)}(alpha),
    f_{eps, delta}(alpha) = max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha))

(DRS eq. (5) and Prop. 2.12; for Poisson-subsampled runs this is C_p(f), DRS Thm 4.2). With
certified upper bounds on delta at a grid of eps the supremum is a certified lower bound on f,
so TPR = 1 - f(alpha) is bounded from above: no attack does better. With certified lower
bounds on delta, f is bounded from above over each grid cell [eps_j, eps_j+1] by
f_{eps_j, delta_lower(eps_j+1)}: f_{eps, delta} falls in both eps and delta, and delta(eps)
falls in eps. That gives the lower end of each interval: how much better than the upper
bound no attack can be shown to do.

From the same curve: the maximum advantage max (TPR - FPR) = delta(0); the Bayes success of a
membership guess with prior pi, 1 - min_alpha [pi f(alpha) + (1 - pi) alpha] = 1 - m (1 -
delta(|log((1 - pi)/pi)|)) with m = min(pi, 1 - pi) (the conjugate relation of DRS Prop. 2.12);
the positive predictive value at an FPR, pi TPR / (pi TPR + (1 - pi) FPR); and the bound on
the success of reconstructing a record whose baseline success is kappa, 1 - f(kappa)
(Kaissis et al. 2023, Thm 1).

A run whose Poisson batches are capped (truncated Poisson sampling, `overflow` = eta, the
probability that some batch overflows) has output laws within total variation eta of the
uncapped run's under each dataset, so its curve f' obeys f'(alpha) >= f(alpha + eta) - eta: the
TPR at alpha is at most the uncapped TPR at alpha + eta plus eta (at least the uncapped TPR at
alpha - eta less eta), the advantage moves by at most 2 eta, the Bayes success by at most eta
(docs/mathematics.md, "Attack risk of a capped run").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dpcalc.core.arrays import sorted_distinct
from dpcalc.core.gdp import delta_for_epsilon, gdp_mu, max_advantage, tpr_at_fpr
from dpcalc.core.limits import DEFAULT_ACCURACY, DEFAULT_FPRS, DEFAULT_PRIOR
from dpcalc.core.phases import NOTHING_SAMPLED, Phase, samples_nothing
from dpcalc.core.pld.privacy_profile import ProfileBounds
from dpcalc.core.tradeoff import GRID_POINTS, MARGIN, capped_tpr_bounds, tpr_bounds
from dpcalc.core.validation import FALSE_POSITIVE_RATE, OPEN_UNIT, PROBABILITY

# The curve is read on GRID_POINTS evenly spaced eps (`tradeoff.GRID_POINTS`, `_read_profile`).
# A run that leaks little has its whole profile within a few cells of eps = 0, and a cell of width
# h there costs each TPR about h relative (TPR <= delta(eps) + e^eps alpha, read at grid points):
# p = 1e-4, sigma = 5, T = 100 ended 3.5e-3 wide at every FPR, e^h - 1 for the step h = 3.5e-3,
# whatever the composition's accuracy. Where the upper bound on delta falls to the accuracy times
# the smallest FPR before the grid's 1/_FINE_WHEN part, the range up to that point is read again on
# _FINE_POINTS evenly spaced points (`_read_profile`): beyond it no eps lowers a TPR's upper end
# by more than that share of it (e^eps alpha grows), and the cells beyond keep their bounds.
_FINE_WHEN = 16
_FINE_POINTS = 2001
# The curve printed in JSON and drawn: type I errors log-spaced from the smallest asked FPR (at
# most 1e-6) to 1, this many a decade, and evenly spaced ones on [0, 1].
_CURVE_SMALLEST = 1e-6
_CURVE_PER_DECADE = 10
_CURVE_LINEAR = 41
# The one composition that serves most runs: for epsilon at delta = min(_SHARED_DELTA_CAP,
# sqrt(_SHARED_DELTA_SCALE x the smallest FPR)), 1e-3 for the default FPRs, between the advantage
# (delta(0), often ~0.1) and the smallest FPR, at _SHARED_ACCURACY times the accuracy asked.
# Measured on six runs (the design card; p 0.01, sigma 0.8, T 1e3; p 1e-3, sigma 2, T 1e5; p 0.1,
# sigma 1, T 100; sigma 0.6; p 1e-4, sigma 5, T 1e6): the advantage within 2.7e-4 to 1.8e-3 and
# the TPR at FPR 1e-5 within 3.7e-4 to 2.3e-3 (relative widths), at the cost of one pld call.
_SHARED_DELTA_CAP = 1e-3
_SHARED_DELTA_SCALE = 0.1
_SHARED_ACCURACY = 0.7
# A composition for delta at one eps (the advantage, the Bayes point), made where the shared one
# leaves that figure wider than the accuracy, runs at this many times the accuracy asked: its
# interval at that eps is still about as narrow as asked (measured on the design card: 8.9e-4).
_POINT_ACCURACY_FACTOR = 3.0
# Where the shared composition leaves a TPR wider than the accuracy, the run is composed for epsilon
# at the smallest FPR, at the accuracy that would have narrowed the shared composition's widest TPR
# to _TPR_AIM of the accuracy (the grid's error, and the widths with it, scale with the accuracy
# a grid is planned for), at least _TPR_FINEST times the accuracy. The TPRs of a large epsilon are
# wider than the epsilon they are read from: p = 0.01, sigma = 1.1, T = 1e4 ended 1.5e-3 wide at
# FPR 1e-5 with that composition at the accuracy asked, 7.1e-4 now. Measured on 100 runs (p 1e-4
# to 0.1, sigma 0.6 to 5, T 100 to 1e5), with the finer reading near eps = 0 (_FINE_POINTS): 9
# end wider than the accuracy instead of 43, in the same total time; composing at the accuracy
# asked first and finer only where still wide: 15, with more compositions.
_TPR_AIM = 0.8
_TPR_FINEST = 0.125


@dataclass(frozen=True)
class Bounds:
    """A certified interval: the true value lies in [lower, upper]."""

    upper: float
    lower: float

    @property
    def relative_width(self) -> float:
        """(upper - lower) / upper, 0 for an interval at 0."""
        return (self.upper - self.lower) / self.upper if self.upper > 0.0 else 0.0


@dataclass(frozen=True)
class AttackPoint:
    """A membership attack at one false-positive rate: its largest true-positive rate and the
    positive predictive value that goes with it (at the result's prior)."""

    fpr: float
    tpr: Bounds
    ppv: Bounds


@dataclass(frozen=True)
class GaussianRisk:
    """The same figures for a mu-GDP curve: the central-limit mu of a subsampled run
    (`approximate`; Bu et al. 2020), or the exact mu of an unsubsampled one."""

    mu: float
    approximate: bool
    advantage: float
    tprs: tuple[float, ...]  # at RiskResult.points' FPRs
    bayes_success: float
    reconstruction: float | None


@dataclass(frozen=True)
class RiskResult:
    """Certified attack risk of a run (see the module docstring for each figure)."""

    phases: tuple[Phase, ...]
    advantage: Bounds  # max over attacks of TPR - FPR (= delta(0), the total variation)
    points: tuple[AttackPoint, ...]  # at the asked FPRs, in the order given
    prior: float
    bayes_success: Bounds  # of a membership guess at the prior
    bayes_baseline: float  # max(prior, 1 - prior): guessing without the release
    kappa: float | None
    reconstruction: Bounds | None  # 1 - f(kappa)
    curve_alphas: tuple[float, ...]
    curve_beta_lower: tuple[float, ...]  # certified: the true curve is never below (f-DP guarantee)
    curve_beta_upper: tuple[float, ...]  # the true curve is never above
    accuracy: float
    grid_step: float
    gaussian: GaussianRisk | None
    warnings: tuple[str, ...] = ()
    overflow: float = 0.0  # capped batches: what the upper figures were moved by (eta, or less: `cap_costs`)


def attack_risk(phases: Sequence[Phase], *, fprs: Sequence[float] = DEFAULT_FPRS, prior: float = DEFAULT_PRIOR,
                kappa: float | None = None, accuracy: float = DEFAULT_ACCURACY, overflow: float = 0.0,
                overflow_below: float | None = None) -> RiskResult:
    """Certified attack-risk figures of the run `phases` (any run the PLD accountant takes), or,
    with `overflow` = eta > 0, of the run with its Poisson batches capped, eta bounding the
    probability that some batch overflows (module docstring; the figures of the uncapped run are
    moved by eta, and the central-limit figures, which describe the uncapped run, are left out).
    `overflow_below` (default `overflow`) moves the lower ends instead, where a smaller distance
    is known for them (`core.pld.truncation.cap_costs`).

    Composes the run once, for epsilon at a delta between the advantage and the smallest asked
    FPR (or kappa), which serves every figure in most runs; where the advantage, the Bayes success
    (at the point |log((1 - pi)/pi)|) or the TPR at the smallest FPR is still wider than the
    accuracy, once more for it. Every composition gives sound bounds at
    every eps (`ProfileBounds`); the tighter are kept. The first composes the second direction
    of a remove/add run with its upper measure alone where it cannot raise the lower bound at
    the target, and its lower measure only when a figure is wider than the accuracy
    (`ProfileBounds.complete`; docs/mathematics.md §8, "Which δ bounds").
    """
    asked = tuple(float(FALSE_POSITIVE_RATE.check("fpr", value)) for value in fprs)
    if not asked:
        raise ValueError("give at least one false-positive rate")
    OPEN_UNIT.check("prior", prior)
    if kappa is not None:
        FALSE_POSITIVE_RATE.check("kappa", kappa)
    PROBABILITY.check("overflow", overflow)
    eta_below = overflow if overflow_below is None else PROBABILITY.check("overflow_below", overflow_below)
    bayes_eps = abs(math.log1p(-prior) - math.log(prior))
    special = np.array(asked + (() if kappa is None else (kappa,)))
    smallest = float(special.min())
    if all(samples_nothing(phase) for phase in phases):
        return _nothing_learnt(phases, asked, prior, kappa, accuracy)
    share = min(prior, 1.0 - prior)

    def read(profile: ProfileBounds, eta: float = 0.0, below: float = 0.0) -> tuple[
            np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, Bounds, Bounds]:
        grid, upper, lower = _read_profile(profile, smallest, accuracy)
        tpr_upper, tpr_lower = capped_tpr_bounds(grid, upper, lower, special, eta, below)
        (zero_upper, bayes_upper), (zero_lower, bayes_lower) = profile.at(np.array([0.0, bayes_eps]))
        # guessing alone succeeds with max(prior, 1 - prior): the true figure is never below it
        bayes = Bounds(min(1.0, (1.0 - share + share * float(bayes_upper) + eta) * (1.0 + MARGIN)),
                       max(1.0 - share, (1.0 - share + share * float(bayes_lower) - below) * (1.0 - MARGIN)))
        advantage = Bounds(float(zero_upper), float(zero_lower))
        if eta > 0.0 or below > 0.0:  # one eta on each law (module docstring)
            advantage = Bounds(min(1.0, (advantage.upper + 2.0 * eta) * (1.0 + MARGIN)),
                               max(0.0, (advantage.lower - 2.0 * below) * (1.0 - MARGIN)))
        return grid, upper, lower, tpr_upper, tpr_lower, advantage, bayes

    # One composition serves every figure in most runs: for epsilon at a delta between the
    # advantage (eps = 0) and the smallest FPR, at a little finer accuracy (_SHARED_TARGET). Where
    # a figure is still wider than the accuracy asked, the run is composed once more for it: for
    # delta at eps = 0 (the advantage), at the Bayes point, or for epsilon at the smallest FPR.
    profile, shared = _shared_profile(phases, smallest, accuracy)
    grid, upper, lower, tpr_upper, tpr_lower, advantage, bayes = read(profile)
    if profile.spared and max(advantage.relative_width, bayes.relative_width, _widest(tpr_upper, tpr_lower)) > accuracy:
        # a direction composed without its lower measure may be what leaves a figure wide: it is
        # composed on the same grid, and the compositions below get every lower measure
        profile.complete()
        profile.spare_lower = False
        grid, upper, lower, tpr_upper, tpr_lower, advantage, bayes = read(profile)
    coarse = min(_POINT_ACCURACY_FACTOR * accuracy, 0.1)
    extra: list[tuple[tuple[float | None, float | None], float]] = []
    if advantage.relative_width > accuracy:
        extra.append(((None, 0.0), coarse))
    if bayes_eps > 0.0 and bayes.relative_width > accuracy:
        extra.append(((None, bayes_eps), coarse))
    tpr_width = _widest(tpr_upper, tpr_lower)
    if smallest < shared and tpr_width > accuracy:
        extra.append(((smallest, None), _tpr_accuracy(accuracy, tpr_width)))
    for target, width in extra:
        # delta at eps = 0 (the advantage) is the same in both orders: one direction's lower measure serves
        profile.add(target, accuracy=width, at_zero=target == (None, 0.0))
    if extra:
        grid, upper, lower, tpr_upper, tpr_lower, advantage, bayes = read(profile)
    # the uncapped figures decide the compositions and say whether the grid met the accuracy
    uncapped = [advantage, bayes, *(Bounds(float(tpr_upper[i]), float(tpr_lower[i])) for i in range(len(asked)))]
    if overflow > 0.0 or eta_below > 0.0:
        grid, upper, lower, tpr_upper, tpr_lower, advantage, bayes = read(profile, overflow, eta_below)

    points = tuple(
        AttackPoint(fpr, Bounds(float(tpr_upper[i]), float(tpr_lower[i])),
                    Bounds(_ppv(prior, float(tpr_upper[i]), fpr), _ppv(prior, float(tpr_lower[i]), fpr)))
        for i, fpr in enumerate(asked)
    )
    reconstruction = None if kappa is None else Bounds(float(tpr_upper[-1]), float(tpr_lower[-1]))

    alphas = _curve_alphas(smallest)
    curve_upper, curve_lower = capped_tpr_bounds(grid, upper, lower, alphas, overflow, eta_below)
    return RiskResult(
        phases=profile.phases, advantage=advantage, points=points, prior=float(prior), bayes_success=bayes,
        bayes_baseline=max(prior, 1.0 - prior), kappa=kappa, reconstruction=reconstruction,
        curve_alphas=tuple(float(a) for a in alphas),
        curve_beta_lower=tuple(float(b) for b in 1.0 - curve_upper),
        curve_beta_upper=tuple(float(b) for b in 1.0 - curve_lower),
        accuracy=float(accuracy), grid_step=profile.grid_step,
        gaussian=_gaussian_risk(profile.phases, asked, prior, kappa) if overflow == eta_below == 0.0 else None,
        warnings=_warnings(profile, uncapped, accuracy), overflow=float(overflow),
    )


RiskFigure = Literal["advantage", "tpr"]


def risk_figure(phases: Sequence[Phase], figure: RiskFigure, *, fpr: float | None = None,
                accuracy: float = DEFAULT_ACCURACY) -> Bounds:
    """The certified interval of one figure of a run, composed once: the maximum advantage
    (delta at eps = 0) or the largest TPR at `fpr` (the run composed and read as `attack_risk`
    first does when `fpr` is the smallest FPR asked, so the two agree). What risk calibration
    evaluates at each candidate."""
    return risk_figure_profile(phases, figure, fpr=fpr, accuracy=accuracy)[0]


def risk_figure_profile(phases: Sequence[Phase], figure: RiskFigure, *, fpr: float | None = None,
                        accuracy: float = DEFAULT_ACCURACY) -> tuple[Bounds, ProfileBounds | None]:
    """`risk_figure` and the profile it was read off (None for a run that samples nothing): risk
    calibration reads the answer's (epsilon, delta) figure off it where that is narrow enough."""
    if all(samples_nothing(phase) for phase in phases):  # the release does not depend on the data
        exact = 0.0 if figure == "advantage" else float(fpr or 0.0)
        return Bounds(exact, exact), None
    if figure == "advantage":
        # delta(0) is the same in both orders: one direction's lower measure serves (`ProfileBounds.add`)
        zero = ProfileBounds(phases, [(None, 0.0)], accuracy=accuracy, at_zero=True)
        upper, lower = zero.at(np.array([0.0]))
        return Bounds(float(upper[0]), float(lower[0])), zero
    if fpr is None:
        raise ValueError("the TPR figure needs an fpr")
    FALSE_POSITIVE_RATE.check("fpr", fpr)
    # the composition `attack_risk` makes first when this FPR is the smallest it is asked
    profile, _ = _shared_profile(phases, fpr, accuracy)
    grid, upper, lower = _read_profile(profile, fpr, accuracy)
    tpr_upper, tpr_lower = tpr_bounds(grid, upper, lower, np.array([fpr]))
    if profile.spared and Bounds(float(tpr_upper[0]), float(tpr_lower[0])).relative_width > accuracy:
        profile.complete()  # as `attack_risk` does: the upper end stays, the lower end may rise
        grid, upper, lower = _read_profile(profile, fpr, accuracy)
        tpr_upper, tpr_lower = tpr_bounds(grid, upper, lower, np.array([fpr]))
    return Bounds(float(tpr_upper[0]), float(tpr_lower[0])), profile


def _shared_profile(phases: Sequence[Phase], smallest: float, accuracy: float) -> tuple[ProfileBounds, float]:
    """The one composition that serves every figure in most runs, and its target delta (see
    _SHARED_DELTA_CAP): for epsilon at delta = min(1e-3, sqrt(0.1 x the smallest FPR))."""
    shared = min(_SHARED_DELTA_CAP, math.sqrt(_SHARED_DELTA_SCALE * smallest))
    return ProfileBounds(phases, [(shared, None)], accuracy=accuracy * _SHARED_ACCURACY, spare_lower=True), shared


def _read_profile(profile: ProfileBounds, smallest: float, accuracy: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The grid of eps the curve is read on, and the profile's (delta_upper, delta_lower) on it:
    GRID_POINTS evenly spaced eps from 0 to where e^eps times the smallest type I error asked or
    drawn reaches 1 (beyond it every term of the bounds is 1: `tpr_bounds`), with those up to the
    first point where delta_upper is at most `accuracy` times the smallest FPR replaced by _FINE_POINTS,
    when that point lies within the first 1/_FINE_WHEN of the grid (see _FINE_POINTS). Any increasing
    grid of eps from 0 gives certified bounds (`tpr_bounds`): the finer part only narrows them."""
    grid = np.linspace(0.0, math.log(1.0 / min(smallest, _CURVE_SMALLEST)) + 0.1, GRID_POINTS)
    upper, lower = profile.at(grid)
    small = np.flatnonzero(upper <= accuracy * smallest)
    if len(small) == 0 or small[0] >= len(grid) // _FINE_WHEN:
        return grid, upper, lower
    end = max(int(small[0]), 1)  # the even points up to grid[end] give way to the finer ones
    fine = np.linspace(0.0, float(grid[end]), _FINE_POINTS)
    fine_upper, fine_lower = profile.at(fine)
    return (np.concatenate((fine, grid[end + 1:])), np.concatenate((fine_upper, upper[end + 1:])),
            np.concatenate((fine_lower, lower[end + 1:])))


def _widest(upper: np.ndarray, lower: np.ndarray) -> float:
    """The largest relative width of the TPR intervals [lower, upper]."""
    return max(Bounds(float(high), float(low)).relative_width for high, low in zip(upper, lower, strict=True))


def _tpr_accuracy(accuracy: float, width: float) -> float:
    """The accuracy of the composition for epsilon at the smallest FPR (`_TPR_AIM`) when the shared
    one, at _SHARED_ACCURACY times `accuracy`, left a TPR `width` wide (relative)."""
    wanted = _SHARED_ACCURACY * accuracy * _TPR_AIM * accuracy / width
    return max(_TPR_FINEST * accuracy, min(accuracy, wanted))


def _nothing_learnt(phases: Sequence[Phase], fprs: tuple[float, ...], prior: float, kappa: float | None,
                    accuracy: float) -> RiskResult:
    """The exact figures of a run that samples nothing (p = 0 throughout): its output does not
    depend on the data, so the trade-off curve is 1 - alpha, TPR = FPR, the advantage 0, and
    guessing succeeds with max(prior, 1 - prior)."""
    alphas = _curve_alphas(min(fprs + (() if kappa is None else (kappa,))))
    baseline = max(prior, 1.0 - prior)
    return RiskResult(
        phases=tuple(phases), advantage=Bounds(0.0, 0.0),
        points=tuple(AttackPoint(fpr, Bounds(fpr, fpr), Bounds(prior, prior)) for fpr in fprs),
        prior=float(prior), bayes_success=Bounds(baseline, baseline), bayes_baseline=baseline, kappa=kappa,
        reconstruction=None if kappa is None else Bounds(kappa, kappa),
        curve_alphas=tuple(float(a) for a in alphas),
        curve_beta_lower=tuple(float(1.0 - a) for a in alphas), curve_beta_upper=tuple(float(1.0 - a) for a in alphas),
        accuracy=accuracy, grid_step=0.0, gaussian=None, warnings=(NOTHING_SAMPLED,),
    )


def _warnings(profile: ProfileBounds, figures: Sequence[Bounds], accuracy: float) -> tuple[str, ...]:
    """The accountant's warnings, with those about its own epsilon or delta intervals replaced by
    one about the risk figures' widths when any is wider than the accuracy asked."""
    kept = [item for item in profile.warnings if not item.startswith("the certified interval is")]
    widest = max(item.relative_width for item in figures)
    if widest > accuracy:
        scheme = {"uniform": "fixed-size batches", "shuffle": "shuffled batches"}.get(
            next((phase.sampling for phase in profile.phases if phase.sampling in ("uniform", "shuffle")), ""))
        why = (f"the rest is the gap between the pair that dominates {scheme} (upper ends) and the pair that some "
               "neighbouring datasets attain (lower ends); the true figures lie between them" if scheme else
               "the accountant's grid (or the closed forms it fell back to) could not narrow them further")
        kept.append(f"the certified intervals are up to {widest:.2g} wide (relative), more than the accuracy "
                    f"{accuracy:g}: {why}.")
    return tuple(kept)


def _ppv(prior: float, tpr: float, fpr: float) -> float:
    """Positive predictive value of an attack: prior TPR / (prior TPR + (1 - prior) FPR), rising in TPR."""
    return prior * tpr / (prior * tpr + (1.0 - prior) * fpr)


def _curve_alphas(smallest: float) -> np.ndarray:
    low = math.floor(math.log10(min(smallest, _CURVE_SMALLEST)))
    logs = np.logspace(low, 0.0, -low * _CURVE_PER_DECADE + 1)
    return sorted_distinct(np.concatenate([[0.0], logs, np.linspace(0.0, 1.0, _CURVE_LINEAR)]))


def _gaussian_risk(phases: Sequence[Phase], fprs: Sequence[float], prior: float,
                   kappa: float | None) -> GaussianRisk | None:
    """The figures of the run's mu-GDP curve (`gdp.gdp_mu`), None where it has none."""
    mu, approximate = gdp_mu(phases)
    if mu is None:
        return None
    share = min(prior, 1.0 - prior)
    bayes_eps = abs(math.log1p(-prior) - math.log(prior))
    return GaussianRisk(
        mu=mu, approximate=approximate, advantage=max_advantage(mu),
        tprs=tuple(tpr_at_fpr(mu, fpr) for fpr in fprs),
        bayes_success=1.0 - share + share * delta_for_epsilon(bayes_eps, mu),
        reconstruction=None if kappa is None else tpr_at_fpr(mu, kappa),
    )
