"""Exact answers where they exist: runs of unsubsampled Gaussian phases are exactly mu-GDP.

The Gaussian mechanism with noise multiplier sigma and shift c (`Phase.shift`: 1 under add-remove
and zero-out, 2 under replace-one, k with k examples per user) is exactly (c/sigma)-GDP: its
dominating pair is N(0, sigma^2) against N(c, sigma^2), attained, in both orders (Dong, Roth, Su
2022, JRSS-B, arXiv 1905.02383, Thm 2.7). Without subsampling (p = 1, under every sampling scheme:
each step then uses every record) T_i such steps of the phases i compose to exactly mu-GDP with

    mu = sqrt(sum_i T_i c_i^2 / sigma_i^2)        (DRS Cor. 3.3),

whose profile is delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (DRS Cor. 2.13,
evaluated in log space by `dpcalc.core.gdp`). Such runs never go to the grid: the certified
interval is the closed form widened by bounds on its floating-point error (below), not the
grid's discretisation error. A subsampled phase leaves the run to the grid.

Runs of k = 2 to `exact_laplace.MAX_STEPS` unsubsampled releases of the Laplace mechanism, all
of one scale (at least `exact_laplace.MIN_SCALE`), are answered from the exact privacy profile of the k-fold composition
(`exact_laplace`: the convolution of the privacy-loss law in closed form, evaluated in interval
arithmetic); longer runs, and runs mixing scales or mechanisms, go to the grid.

The error bounds, measured against mpmath at 50-60 digits (mu from 1e-4 to 1e5, delta from 0.5
down to 1e-300, tests/core/pld/test_exact.py): `gdp.log_delta_for_epsilon` is within 1.7e-12 of
log delta (absolute; the largest at mu = 1e3, eps = 5e5, where it is the conditioning of the
input eps), and `gdp.epsilon_for_delta` within 5.4e-15 relative of the root. The margins below
are ten and twenty times those.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from dpcalc.core.phases import Phase
from dpcalc.core.pld.result import PLDResult

# The analysis a result of this module rests on, as `dpcalc pld` shows it.
EXACT_ANALYSIS = "exact: mu-GDP, mu = sqrt(sum T shift^2 / sigma^2) (Dong, Roth, Su 2022, Cor. 3.3)"
# Bound on the absolute error of the computed log delta(eps; mu) (measured: 1.7e-12).
LOG_DELTA_ERROR = 2e-11
# Bound on the relative error of the root found by gdp.epsilon_for_delta beyond the error of
# log delta (its tolerance is 4e-16 relative; measured in all: 5.4e-15).
EPSILON_RELATIVE_ERROR = 1e-13


def exact_run(phases: Sequence[Phase]) -> bool:
    """Whether the run is exactly mu-GDP: every phase an unsubsampled Gaussian one."""
    return bool(phases) and all(phase.mechanism == "gaussian" and phase.sampling_probability == 1.0
                                for phase in phases)


def exact_laplace_run(phases: Sequence[Phase]) -> bool:
    """Whether the run is k = 2 to `exact_laplace.MAX_STEPS` releases of the Laplace mechanism
    without subsampling, all of one scale, at least `exact_laplace.MIN_SCALE` (the exact k-fold
    profile, `exact_laplace`)."""
    if not (phases and all(phase.mechanism == "laplace" and phase.sampling_probability == 1.0
                           and phase.examples_per_user == 1 for phase in phases)):
        return False  # (the exact route's module, and fractions with it, loaded only for a Laplace run)
    from dpcalc.core.pld.exact_laplace import MAX_STEPS, MIN_SCALE

    return (len({phase.noise for phase in phases}) == 1 and phases[0].noise >= MIN_SCALE
            and 2 <= sum(phase.steps for phase in phases) <= MAX_STEPS)


def exact_analysis(phases: Sequence[Phase]) -> str | None:
    """The exact analysis a run rests on (`exact_run`, `exact_laplace_run`), or None."""
    if exact_run(phases):
        return EXACT_ANALYSIS
    if exact_laplace_run(phases):
        from dpcalc.core.pld.exact_laplace import EXACT_LAPLACE_ANALYSIS

        return EXACT_LAPLACE_ANALYSIS
    return None


def exact_mu(phases: Sequence[Phase]) -> float | None:
    """mu of a run that is exactly mu-GDP (`exact_run`), inf when it overflows float64; None otherwise.

    Formed from logarithms, log mu = (1/2) log sum_i exp(log T_i + 2 log(c_i / sigma_i)), so that
    neither a tiny sigma nor a huge T overflows an intermediate; rounded to nearest (relative
    error a few units of round-off, covered by the margins of `exact_result`).
    """
    if not exact_run(phases):
        return None
    terms = [math.log(phase.steps) + 2.0 * (math.log(phase.shift) - math.log(phase.noise)) for phase in phases]
    top = max(terms)
    log_mu = 0.5 * (top + math.log(math.fsum(math.exp(term - top) for term in terms)))
    return math.exp(log_mu) if log_mu < 709.0 else math.inf


def exact_epsilon(mu: float, delta: float) -> tuple[float, float]:
    """Certified [lower, upper] on the smallest eps with delta(eps; mu) <= delta for mu-GDP.

    The roots at delta e^(-/+ LOG_DELTA_ERROR) bracket the true one (the computed log delta is
    within LOG_DELTA_ERROR of the true one, and delta(eps) falls with eps), each widened by
    EPSILON_RELATIVE_ERROR and rounded outward.
    """
    from dpcalc.core import gdp

    if math.isinf(mu):
        return math.inf, math.inf
    loose = delta * math.exp(-LOG_DELTA_ERROR)
    tight = delta * math.exp(LOG_DELTA_ERROR)
    upper = gdp.epsilon_for_delta(loose, mu) * (1.0 + EPSILON_RELATIVE_ERROR)
    lower = gdp.epsilon_for_delta(tight, mu) * (1.0 - EPSILON_RELATIVE_ERROR) if tight < 1.0 else 0.0
    return max(lower, 0.0), upper


def exact_delta(mu: float, epsilon: float) -> tuple[float, float]:
    """Certified [lower, upper] on delta(epsilon; mu) for mu-GDP; the upper bound is at least the
    smallest positive float (never 0), the lower one 0 where it underflows."""
    from dpcalc.core import gdp

    if math.isinf(mu):
        return (1.0, 1.0) if math.isfinite(epsilon) else (0.0, 0.0)
    log_value = gdp.log_delta_for_epsilon(epsilon, mu)
    if log_value == -math.inf:
        # mu = 0 or eps = inf: delta is exactly 0
        return 0.0, 0.0
    upper = min(1.0, max(math.exp(log_value + LOG_DELTA_ERROR), math.ulp(0.0)))
    lower = min(math.exp(log_value - LOG_DELTA_ERROR), upper)
    return lower, upper


def exact_result(phases: tuple[Phase, ...], *, delta: float | None, epsilon: float | None,
                 accuracy: float) -> PLDResult:
    """The certified result of a run that is exactly mu-GDP (`exact_run`): the closed form with
    an interval as wide as its floating-point error, grid step 0 and `exact` set; for a run of
    unsubsampled Laplace releases (`exact_laplace_run`), the exact k-fold profile."""
    if exact_laplace_run(phases):
        return _exact_laplace_result(phases, delta=delta, epsilon=epsilon, accuracy=accuracy)
    mu = exact_mu(phases)
    assert mu is not None, "exact_result needs a run of unsubsampled Gaussian phases"
    warnings: tuple[str, ...] = ()
    if delta is not None:
        lower, upper = exact_epsilon(mu, delta)
        if math.isinf(upper):
            warnings = ("epsilon is astronomically large: no finite upper bound can be certified.",)
    else:
        assert epsilon is not None
        lower, upper = exact_delta(mu, epsilon)
    # both directions (and replace-one's one) compose the same pair: `binding` names the first
    binding = "symmetric" if phases[0].neighbours == "replace-one" else "remove"
    result = PLDResult.bounds(
        delta=delta, epsilon=epsilon, upper=upper, lower=lower, accuracy=accuracy, grid_step=0.0, grid_size=0,
        binding=binding, attempts=0, phases=phases, warnings=warnings,
    )
    return dataclasses.replace(result, exact=True)


def _exact_laplace_result(phases: tuple[Phase, ...], *, delta: float | None, epsilon: float | None,
                          accuracy: float) -> PLDResult:
    """`exact_result` for k unsubsampled Laplace releases of one scale (`exact_laplace`)."""
    from dpcalc.core.pld.exact_laplace import laplace_composed_delta, laplace_composed_epsilon

    steps = sum(phase.steps for phase in phases)
    scale = phases[0].noise
    if delta is not None:
        lower, upper = laplace_composed_epsilon(steps, scale, delta)
    else:
        assert epsilon is not None
        lower, upper = laplace_composed_delta(steps, scale, epsilon)
    # the Laplace pair is symmetric: both directions compose the same pair
    result = PLDResult.bounds(
        delta=delta, epsilon=epsilon, upper=upper, lower=lower, accuracy=accuracy, grid_step=0.0, grid_size=0,
        binding="remove", attempts=0, phases=phases, warnings=(),
    )
    return dataclasses.replace(result, exact=True)
