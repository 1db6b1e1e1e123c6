"""Closed-form certified bounds (S7 of docs/pld-soundness.md): the whole answer outside the
grid's numerical range or when the grid fails, and a tightening of either side when the grid
falls short of the accuracy (`merge`).

Above: the smallest of mu-GDP (Dong, Roth, Su 2022, JRSS-B, arXiv 1905.02383), the RDP
accountant (Mironov 2017) and the total-variation bound. Below: one step of a phase, and the
exact mu-GDP value for unsubsampled Gaussian runs.
"""

from __future__ import annotations

import dataclasses
import math
import re
import sys
from collections.abc import Sequence

import numpy as np

from dpcalc.core.phases import EPOCH_SAMPLINGS, Phase
from dpcalc.core.pld.result import PLDResult

# Noise levels the grid handles. Below the lower ends one step's privacy loss reaches
# 1/(2 sigma^2) (Gaussian) or 1/b (Laplace): grids of float64 losses and the tail searches
# lose their resolution; above the upper ends the loss of one step is below 1e-12 and its
# moments underflow. Measured by the extreme-input sweep (tests/core/pld/test_extremes.py).
SIGMA_RANGE = (0.05, 1e5)
SCALE_RANGE = (0.05, 1e5)
# The grid doubles its step as T grows (cost ~ log T); beyond this many steps in all the
# composed losses are so large or so concentrated that the closed forms are as good.
MAX_TOTAL_STEPS = 10**13
# Relative margin put on closed forms computed in floating point (accurate to ~1e-9 relative down
# to delta = 1e-300, docs/mathematics.md §9).
_CLOSED_FORM_MARGIN = 1e-6
# Shares c of the loss given up in the one-step lower bound (see `_one_step_lower`).
_LOWER_SHARES = (0.01, 0.1, 0.5, 1.0, 2.0, 5.0)


def out_of_range(phases: Sequence[Phase]) -> str | None:
    """Why the grid accountant cannot be trusted to run for these phases (None: it can)."""
    if sum(phase.steps for phase in phases) > MAX_TOTAL_STEPS:
        return f"more than {MAX_TOTAL_STEPS:.0e} steps"
    for phase in phases:
        if phase.mechanism == "gaussian":
            value, (low, high), name = phase.noise, SIGMA_RANGE, "noise multiplier"
        else:
            value, (low, high), name = phase.noise, SCALE_RANGE, "Laplace scale"
        if not low <= value <= high:
            return f"a {name} of {value:g}, outside [{low:g}, {high:g}]"
    return None


def dominating_phases(phases: Sequence[Phase]) -> tuple[Phase, ...]:
    """The phases with each shuffled or allocated one replaced by what bounds it from above
    (`model.dominating_phase`)."""
    from dpcalc.core.pld.model import dominating_phase

    return tuple(dominating_phase(phase) for phase in phases)


def log_gdp_mu(phases: Sequence[Phase]) -> float:
    """log mu of sqrt(sum T_i (shift_i / sigma_i)^2) over the Gaussian phases (-inf if none):
    the shift is 2 under replace-one, the examples per user at user level, 1 otherwise
    (`Phase.shift`; a mixture of shifts up to k is dominated by the shift k, by joint convexity
    of the hockey-stick divergence). Shuffled and allocated phases count their epochs (`dominating_phases`)."""
    terms = [math.log(phase.steps) + 2.0 * (math.log(phase.shift) - math.log(phase.noise))
             for phase in dominating_phases(phases) if phase.mechanism == "gaussian"]
    if not terms:
        return -math.inf
    top = max(terms)
    return 0.5 * (top + math.log(math.fsum(math.exp(term - top) for term in terms)))


def _laplace_pure_epsilon(phases: Sequence[Phase]) -> float:
    """Sum over the Laplace steps of the largest privacy loss of one step (pure DP, both
    directions): log(1 + p (e^(1/b) - 1)) (remove) and -log(1 - p (1 - e^(-1/b))) (add),
    rounded up; inf when it overflows."""
    total = 0.0
    for phase in phases:
        if phase.mechanism != "laplace":
            continue
        p, inv_b = phase.sampling_probability, 1.0 / phase.noise
        remove = inv_b + math.log(p) if inv_b > 700.0 else math.log1p(p * math.expm1(inv_b))
        add = -math.log1p(-p * -math.expm1(-inv_b)) if p * -math.expm1(-inv_b) < 1.0 else math.inf
        total += phase.steps_float * max(remove, add) * (1.0 + 1e-12) + 1e-300
    return total


def _gdp_upper(phases: Sequence[Phase], delta: float | None, epsilon: float | None) -> float:
    """Upper bound from mu-GDP: the Gaussian phases are dominated by mu-GDP with
    mu = sqrt(sum T_i / sigma_i^2) (Dong, Roth, Su 2022: subsampling gives C_p(f) >= f, Thm 4.2,
    and composition is monotone in the trade-off functions, Sec. 3.2), and the Laplace phases are
    (eps_L, 0)-DP; composing (eps_G, delta) with (eps_L, 0) gives (eps_G + eps_L, delta)."""
    from dpcalc.core import gdp

    log_mu = log_gdp_mu(phases)
    eps_laplace = _laplace_pure_epsilon(phases)
    mu = math.exp(log_mu) if log_mu < 700.0 else math.inf
    margin = _CLOSED_FORM_MARGIN
    if delta is not None:
        if not math.isfinite(eps_laplace):
            return math.inf
        eps_gauss = gdp.epsilon_for_delta(delta * (1.0 - margin), mu) * (1.0 + margin) if mu > 0.0 else 0.0
        return eps_gauss + eps_laplace
    assert epsilon is not None
    if epsilon < eps_laplace:
        return 1.0
    if mu == 0.0:
        return 0.0
    log_value = gdp.log_delta_for_epsilon(max(epsilon - eps_laplace, 0.0) * (1.0 - margin), mu)
    # the smallest positive float when delta underflows: an upper bound, never 0
    return min(1.0, max(math.exp(log_value) * (1.0 + margin), math.ulp(0.0)))


def _total_variation_upper(phases: Sequence[Phase]) -> float:
    """delta(0) of the run is at most sum over steps of p TV(base pair): one subsampled step is
    (0, p TV)-DP (the mixture's total variation distance to its base is p times the base's), and
    total variation is subadditive under composition. TV = 2 Phi(1/(2 sigma)) - 1 for the
    Gaussian, 1 - e^(-1/(2b)) for the Laplace mechanism. Rounded up."""
    total = 0.0
    for phase in dominating_phases(phases):
        # the chance that the differing record (or one of the user's examples) is in the step
        hit = -math.expm1(phase.examples_per_user * math.log1p(-phase.sampling_probability)) \
            if phase.sampling_probability < 1.0 else 1.0
        if phase.mechanism == "gaussian":
            # the unsubsampled pair is N(0, sigma^2) against N(shift, sigma^2); under replace-one
            # Poisson and fixed-size batches alike the subsampled pair differs from it with probability p
            tv = math.erf(0.5 * phase.shift / (phase.noise * math.sqrt(2.0)))
        else:
            tv = -math.expm1(-0.5 / phase.noise)
        total += phase.steps_float * hit * tv * (1.0 + 1e-12)
    return min(total + 1e-300, 1.0)


# RDP deltas below this are not used (see `_rdp_upper`).
_RDP_DELTA_FLOOR = 1e-280


def _rdp_upper(phases: Sequence[Phase], delta: float | None, epsilon: float | None) -> float:
    """Upper bound from the RDP accountant (`dpcalc.core.rdp`); inf (or 1) if it fails."""
    from dpcalc.core.phases import rdp_covers

    fail = math.inf if delta is not None else 1.0
    if not all(rdp_covers(phase.sampling, phase.neighbours, phase.examples_per_user) for phase in phases):
        # outside what the RDP accountant covers (`rdp.curves.RDP_COVERS`): the accountant, whose
        # import costs as much as a grid (scipy.special), is not loaded
        return fail
    from dpcalc.core import rdp
    try:
        with np.errstate(all="ignore"):
            result = rdp.rdp_accountant(phases, delta=delta, epsilon=epsilon)
    except (ArithmeticError, ValueError):
        return fail
    value = result.epsilon if delta is not None else result.delta
    if math.isnan(value) or (delta is not None and value <= 0.0) or (delta is None and value < _RDP_DELTA_FLOOR):
        # not taken on trust at the ends of float64: rdp_accountant returns epsilon 0 for
        # sigma = 1e300, T = 1e15 at delta = 1e-300 (delta(0) = 1.3e-293 there) and delta 0 for
        # sigma = 1e300, T = 1 at epsilon 0 (the exact delta is 4e-301)
        return fail
    return min(value * (1.0 + 1e-9), fail)


def _one_step_lower(phase: Phase, delta: float | None, epsilon: float | None) -> float:
    """A certified lower bound from one step of the phase (the composition dominates any
    one of its steps: the other outputs can be discarded). delta(eps) = E_P[(1 - e^(eps - L))_+]
    >= P(L >= l) (1 - e^(eps - l)) for any l > eps (remove direction, P the mixture):

    Gaussian: L = log(1 - p + p e^((x - 1/2)/s^2)) >= log p + (x - 1/2)/s^2, and x >= 1 - z s has
    P-mass >= p Phi(z), so P(L >= l(z)) >= p Phi(z) with l(z) = log p + 1/(2 s^2) - z/s.
    Laplace: L takes its largest value a+ = log(1 + p (e^(1/b) - 1)) with P-mass
    m = ((1 - p) e^(-1/b) + p)/2 (x >= 1); k steps together reach k a+ with P-mass m^k.
    With eps = l - c the bound is P(L >= l) (1 - e^(-c)), for a few shares c; for the Laplace
    mechanism also with c solved for exactly, eps = k a+ + log(1 - delta / m^k), so that the
    bound tends to k a+ as delta -> 0.
    Returns epsilon_lower (delta given) or delta_lower (epsilon given); 0 when nothing is shown.

    Fixed-size batches (replace-one, add-remove): the same at noise sigma/2, their attained pair
    being the Poisson pair at sensitivity 2; under zero-out the attained pair is the Poisson pair
    at sensitivity 1 (noise sigma). Poisson, replace-one: L(x) = log r(x) - log r(-x) >= log r(x)
    where x >= -1/2 (r(-x) <= 1 there), so the bound holds for the z with 1 - z s >= -1/2.
    """
    from dpcalc.core.special import ndtr, ndtri

    p = phase.sampling_probability
    best = 0.0
    if phase.mechanism == "gaussian":
        s = phase.noise / 2.0 if phase.sampling == "uniform" and phase.neighbours != "zero-out" else phase.noise
        # replace-one Poisson: only thresholds x = 1 - z s >= -1/2
        z_max = 1.5 / s if (phase.neighbours == "replace-one" and phase.sampling == "poisson") else math.inf
        log_inv = -math.log(2.0) - 2.0 * math.log(s)  # log(1/(2 s^2))
        inv = math.exp(log_inv) if log_inv < 700.0 else math.inf
        for c in _LOWER_SHARES:
            gain = -math.expm1(-c)
            if delta is not None:
                # gain * p underflows to 0 for subnormal p: then no share of the loss is shown
                q = delta * (1.0 + 1e-9) / (gain * p) if gain * p > 0.0 else math.inf
                if not q < 1.0 - 1e-9:
                    continue
                z = ndtri(q)
                z += 1e-9 * (1.0 + abs(z))  # Phi(z) >= q despite the rounding of ndtri
                if z > z_max:
                    continue
                value = math.log(p) + inv - z / s - c
                if math.isinf(value):
                    return sys.float_info.max
                slack = 1e-12 * (abs(math.log(p)) + inv + abs(z / s) + c) + 1e-300
                best = max(best, value - slack)
            else:
                assert epsilon is not None
                z = s * (math.log(p) - epsilon - c) + (0.5 / s if s > 1e-300 else math.inf)
                z -= 1e-9 * (1.0 + abs(z)) if math.isfinite(z) else 0.0
                z = min(z, z_max)  # a smaller z still satisfies l(z) >= eps + c
                best = max(best, p * ndtr(z) * gain * (1.0 - 1e-9))
        return best
    inv_b = 1.0 / phase.noise
    a_plus = inv_b + math.log(p) if inv_b > 700.0 else math.log1p(p * math.expm1(inv_b))
    a_plus *= 1.0 - 1e-12
    mass = (0.5 * ((1.0 - p) * math.exp(-inv_b) + p)) * (1.0 - 1e-12)
    log_mass = math.log(mass)
    candidates = {phase.steps}
    for c in _LOWER_SHARES:
        gain = -math.expm1(-c)
        if delta is not None:
            # the most steps k <= T with m^k (1 - e^(-c)) > delta
            room = (math.log(gain) - math.log(delta) - 1e-9) / -log_mass if log_mass < 0.0 else math.inf
            k = min(phase.steps, math.floor(room)) if room > 0.0 else 0
            if k >= 1:
                value = k * a_plus - c
                if math.isinf(value):
                    return sys.float_info.max
                best = max(best, value)
                candidates.update((k, min(k + 1, phase.steps)))
        else:
            assert epsilon is not None
            # the fewest steps k with k a+ >= eps + c
            need = max(1, math.ceil((epsilon + c) / a_plus)) if a_plus > 0.0 else math.inf
            if need <= phase.steps:
                best = max(best, math.exp(need * log_mass) * gain * (1.0 - 1e-9))
    # the share solved for exactly: m^k (1 - e^(eps - k a+)) = delta at
    # eps = k a+ + log(1 - delta m^(-k)), the limit k a+ as delta -> 0 (a share c = 0.01 would
    # stop 0.01 short of it)
    for k in candidates:
        if delta is not None:
            log_ratio = math.log(delta) + math.log1p(1e-9) - k * log_mass
            if log_ratio < 0.0:
                top = k * a_plus
                if math.isinf(top):
                    return sys.float_info.max
                share = math.log(-math.expm1(log_ratio))
                best = max(best, top + share - 1e-12 * (top - share) - 1e-300)
        else:
            assert epsilon is not None
            if k * a_plus > epsilon:
                best = max(best, math.exp(k * log_mass) * -math.expm1(epsilon - k * a_plus) * (1.0 - 1e-9))
    return best


# The grid's warnings that its interval fell short of the accuracy, or that it could not certify
# the target at all (`accountant.account_grid`).
_FELL_SHORT = re.compile(r"^(the certified interval is .* more than the requested accuracy|the grid cannot certify this target)")


def merge(grid_result: PLDResult, closed: PLDResult, source: str | None = None) -> PLDResult:
    """The tighter of two certified intervals on each side (both are sound). `source` names
    where `closed` comes from (default: the closed forms of `closed_forms`)."""
    warnings = list(grid_result.warnings)
    upper_source = source or "the closed form (mu-GDP, RDP or total variation)"
    lower_source = source or "the closed form (one step or exact mu-GDP)"
    if closed.epsilon_upper < grid_result.epsilon_upper or closed.delta_upper < grid_result.delta_upper:
        warnings.append(f"the upper bound is from {upper_source}, tighter here than the grid's.")
    if closed.epsilon_lower > grid_result.epsilon_lower or closed.delta_lower > grid_result.delta_lower:
        warnings.append(f"the lower bound is from {lower_source}, tighter here than the grid's.")
    eps_hi = min(grid_result.epsilon_upper, closed.epsilon_upper)
    d_hi = min(grid_result.delta_upper, closed.delta_upper)
    eps_lo = min(max(grid_result.epsilon_lower, closed.epsilon_lower), eps_hi)
    d_lo = min(max(grid_result.delta_lower, closed.delta_lower), d_hi)
    upper, lower = (eps_hi, eps_lo) if grid_result.delta_upper == grid_result.delta_lower else (d_hi, d_lo)
    if upper - lower <= grid_result.accuracy * upper:
        # the merged interval meets the accuracy: the grid's note that it fell short no longer holds
        warnings = [item for item in warnings if not _FELL_SHORT.search(item)]
    return dataclasses.replace(
        grid_result, epsilon=eps_hi, epsilon_upper=eps_hi, epsilon_lower=eps_lo,
        delta=d_hi, delta_upper=d_hi, delta_lower=d_lo, warnings=tuple(warnings),
    )


# Relative error of the few floating-point operations of the Laplace profile (1/b, log1p, expm1,
# a sum): each within a few units in the last place; 16 units cover them with room.
_LAPLACE_ROUNDING = 16 * sys.float_info.epsilon


def one_laplace_release(phases: Sequence[Phase]) -> bool:
    """Whether the run is one release of the Laplace mechanism without subsampling, whose exact
    privacy profile the closed forms use (`_one_laplace_release`)."""
    return (len(phases) == 1 and phases[0].mechanism == "laplace" and phases[0].sampling_probability == 1.0
            and phases[0].steps == 1)


def _one_laplace_release(phases: Sequence[Phase], delta: float | None,
                         epsilon: float | None) -> tuple[float, float] | None:
    """[lower, upper] of epsilon at `delta` (or of delta at `epsilon`) for a run that is one
    release of the Laplace mechanism without subsampling, from its exact privacy profile
    delta(eps) = 1 - e^((eps - eps0)/2) below eps0 = 1/b and 0 from eps0 on (docs/mathematics.md
    §6; dpcalc.core.laplace), widened by the rounding of its few operations; None for other runs.
    """
    if not one_laplace_release(phases):
        return None
    from dpcalc.core.laplace import laplace_delta, laplace_epsilon

    pure = 1.0 / phases[0].noise
    if delta is not None:
        value = laplace_epsilon(delta, pure)
        error = _LAPLACE_ROUNDING * (pure - 2.0 * math.log1p(-delta))
        return max(0.0, value - error), max(0.0, value + error)
    assert epsilon is not None
    from fractions import Fraction  # only here: start-up time

    if Fraction(epsilon) * Fraction(phases[0].noise) >= 1:
        return 0.0, 0.0  # eps >= eps0 = 1/b, compared exactly: the loss never exceeds eps, delta is 0
    # delta falls in eps: the profile at eps moved by the rounding of eps - eps0 brackets it
    error = _LAPLACE_ROUNDING * (epsilon + pure)
    upper = min(1.0, laplace_delta(max(0.0, epsilon - error), pure) * (1.0 + _LAPLACE_ROUNDING))
    lower = max(0.0, laplace_delta(epsilon + error, pure) * (1.0 - _LAPLACE_ROUNDING))
    return lower, upper


def closed_forms(phases: tuple[Phase, ...], *, delta: float | None, epsilon: float | None, accuracy: float,
                 reason: str) -> PLDResult:
    """Closed-form certified bounds for runs outside the grid's numerical range.

    Upper: the smallest of the mu-GDP bound (`_gdp_upper`), the RDP accountant's and the
    total-variation bound delta(0) <= sum p TV (`_total_variation_upper`). Lower: the
    largest of the one-step bounds (`_one_step_lower`) and, for runs of unsubsampled Gaussian
    phases, the exact mu-GDP value (their composition is exactly mu-GDP; Dong, Roth, Su 2022,
    Cor. 3.3), each with a margin for the rounding of the closed forms.
    """
    from dpcalc.core import gdp

    upper = min(_gdp_upper(phases, delta, epsilon), _rdp_upper(phases, delta, epsilon))
    tv = _total_variation_upper(phases)
    if delta is not None and tv <= delta:
        upper = 0.0
    elif delta is None:
        upper = min(upper, tv)
    # a user's other examples may contribute nothing: the example-level step is attained; no
    # closed form is used below a shuffled or allocated run
    lower = max(_one_step_lower(dataclasses.replace(phase, examples_per_user=1), delta, epsilon)
                if phase.sampling not in EPOCH_SAMPLINGS else 0.0 for phase in phases)
    exact_gdp = all(phase.mechanism == "gaussian" and phase.sampling_probability == 1.0
                    and phase.examples_per_user == 1 and phase.sampling not in EPOCH_SAMPLINGS for phase in phases)
    if exact_gdp:
        log_mu = log_gdp_mu(phases)
        mu = math.exp(log_mu) if log_mu < 700.0 else math.inf
        margin = _CLOSED_FORM_MARGIN
        if delta is not None:
            value = gdp.epsilon_for_delta(delta * (1.0 + margin), mu) * (1.0 - margin) if delta * (1.0 + margin) < 1.0 else 0.0
            lower = max(lower, value if math.isfinite(value) else 0.0)
        else:
            assert epsilon is not None
            lower = max(lower, gdp.delta_for_epsilon(epsilon * (1.0 + margin), mu) * (1.0 - margin))
    single = _one_laplace_release(phases, delta, epsilon)
    if single is not None:
        lower, upper = max(lower, single[0]), min(upper, single[1])
    lower = min(lower, upper)
    warnings = [f"outside the PLD grid's numerical range ({reason}): the bounds are closed forms "
                "(mu-GDP or RDP above, one step or the exact mu-GDP below), wider than the grid's."]
    if single is not None:
        warnings = [f"outside the PLD grid's numerical range ({reason}): the bounds are the Laplace mechanism's "
                    "exact privacy profile (one release)."]
    if delta is not None and math.isinf(upper):
        warnings.append("epsilon is astronomically large: no finite upper bound can be certified.")
    return PLDResult.bounds(
        delta=delta, epsilon=epsilon, upper=upper, lower=lower, accuracy=accuracy, grid_step=0.0, grid_size=0,
        binding="remove", attempts=0, phases=phases, warnings=tuple(warnings),
    )
