"""Tight privacy accounting with certified bounds: privacy loss distributions composed by FFT.

Sources: Koskela, Jalko, Honkela, "Computing tight differential privacy guarantees using FFT"
(AISTATS 2020, arXiv 1906.03049); Gopi, Lee, Wutschitz, "Numerical composition of differential
privacy" (NeurIPS 2021, arXiv 2106.02848); Doroshenko, Ghazi, Kamath, Kumar, Manurangsi,
"Connect the dots: tighter discrete approximations of privacy loss distributions" (PETS 2022,
arXiv 2207.04380); Zhu, Dong, Wang, "Optimal accounting of differential privacy via
characteristic function" (AISTATS 2022, arXiv 2106.08567).

A run is a sequence of phases (`dpcalc.core.phases.Phase`), each `steps` repetitions of a
Poisson-subsampled Gaussian or Laplace mechanism. Under add/remove adjacency its privacy
profile is delta(eps) = max(delta_remove(eps), delta_add(eps)), where delta_dir is the hockey-
stick divergence of the composition of the phases' dominating pairs in that direction:
    delta_dir(eps) = E[(1 - exp(eps - S))_+],  S = sum of the privacy losses of all steps, under P.
`tight_epsilon` returns a certified interval [epsilon_lower, epsilon_upper] for the smallest eps
with delta(eps) <= delta; `tight_delta` an interval for delta(eps). epsilon_upper is the number
to quote: the run is (epsilon_upper, delta)-DP.

Why the bounds are sound is argued step by step (S1-S7) in docs/pld-soundness.md, which names
the module of each step. The modules, in the order the data flows:

    pairs        the mechanisms' dominating pairs: cell masses with error bounds (S2)
    normal       normal tails with certified relative error, numpy only (S2)
    normal_interval  interval masses of the normal from those tails, or Simpson's rule (S2)
    measure      a tilted, normalised measure on a grid, and its error fields (S5)
    discretise   one step on a grid: upper by connecting the dots, lower by garbling (S1-S4)
    garbling     the lower measure's masses: cells moved onto the grid by merging (S4)
    fft          composing two measures, with the FFT's rounding bound (S5)
    coarsen      a measure moved to a grid twice as coarse (S3, S4)
    truncate     windows: the top to +inf, the bottom dropped with its bound (S3, S6)
    layers       two-resolution measures: a fine bulk and a coarse tail (S3)
    bounds       delta at eps, and eps at delta, read off a composed measure (S5, S6)
    model        one phase in one direction, and the Chernoff tilt of a run
    offset       the offset of a step's grid: a point at the pile of losses (S4)
    plan         grid planning: steps, windows and the discretised step of a phase
    power        the one powering engine, and the composition of a run's phases
    work         the deterministic work limit and the one guard (S7)
    policy       what one grid composes: which directions, which with a lower measure
    accountant   the refinement loop: grids refined until the accuracy is met
    fallback     closed-form bounds outside the grid's range, or to tighten it (S7)
    exact        runs of unsubsampled Gaussian phases: exactly mu-GDP, no grid
    exact_laplace  2 to 48 unsubsampled Laplace releases of one scale: the exact k-fold
                 profile in interval arithmetic, no grid
    api          tight_epsilon, tight_delta, upper_epsilon
    over_steps   one phase at many numbers of steps (sweeps)
    largest      the largest number of steps within a budget (calibrate)
    privacy_profile  bounds on delta(eps) at many epsilons (trade-off curves)
    capped_phase     a capped Poisson step: the pair that dominates it, the rate attained
    truncated_profile  bounds of a capped run read off a profile with the cap's cost
    truncation   truncated Poisson sampling: the run's certified interval
    result       PLDResult, PrivacyProfile, DEFAULT_ACCURACY

The tests compare the bounds with exact values (mpmath for one step, the mu-GDP formula for
the Gaussian mechanism without subsampling, in any number of steps and phases) and with
dp_accounting and prv_accountant. numpy only: scipy is not imported.
"""

from typing import TYPE_CHECKING, Any

from dpcalc.core.pld.analysis import analysis_of
from dpcalc.core.pld.api import tight_delta, tight_epsilon, upper_epsilon
from dpcalc.core.pld.model import check_phases
from dpcalc.core.pld.result import ACCURACY, DEFAULT_ACCURACY, DIRECTIONS, PLDResult, PrivacyProfile
from dpcalc.core.pld.work import WorkLimitReached

if TYPE_CHECKING:
    from dpcalc.core.pld.largest import largest_steps
    from dpcalc.core.pld.over_steps import tight_epsilons_over_steps
    from dpcalc.core.pld.privacy_profile import tight_profile

# Imported on first use: one accounting (pld, risk) needs none of them (start-up).
_LAZY = {
    "largest_steps": "dpcalc.core.pld.largest",
    "tight_epsilons_over_steps": "dpcalc.core.pld.over_steps",
    "tight_profile": "dpcalc.core.pld.privacy_profile",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

__all__ = [
    "ACCURACY",
    "DEFAULT_ACCURACY",
    "DIRECTIONS",
    "PLDResult",
    "PrivacyProfile",
    "WorkLimitReached",
    "analysis_of",
    "check_phases",
    "largest_steps",
    "tight_delta",
    "tight_epsilon",
    "tight_epsilons_over_steps",
    "tight_profile",
    "upper_epsilon",
]
