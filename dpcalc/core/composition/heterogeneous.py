"""Composition of different mechanisms (heterogeneous lists): the four theorems.

Different mechanisms (heterogeneous lists) are composed exactly, atom by atom, while the
number of composed atoms is small (`EXACT_ATOM_LIMIT`); beyond it they are composed on a
lattice with numpy (`_lattice_optimal`): the atoms of each group of equal eps rounded up to the
lattice for a certified upper bound, convolved exactly, and a lower bound J h below it (J
groups, h the lattice step); their difference is reported as the tolerance.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dpcalc.core.composition.binomial import (
    _log_binomial_pmf_array,
    _log_lower_tail_chernoff,
    _randomized_response_logs,
    log_binomial_pmf,
)
from dpcalc.core.composition.optimal import (
    _ROUNDING_MARGIN,
    _TAIL_MARGIN,
    _exact_bound,
    _log_allowed_rr_delta,
    _optimal_homogeneous,
    _require_reachable,
    _solve_profile,
    _solve_segment,
)
from dpcalc.core.composition.results import (
    Bound,
    CompositionResult,
    OptimalBound,
    _check_mechanism,
    _check_one_of,
    _check_total_delta,
)
from dpcalc.core.composition.theorems import (
    _closed_forms,
    _composition_result,
    _expm1,
    _fsum,
    _theorems_at_total,
)
from dpcalc.core.special import log_add
from dpcalc.core.validation import OPEN_UNIT

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Floats = npt.NDArray[np.floating[Any]]

# Heterogeneous lists whose composed randomized responses have at most this many atoms
# are composed exactly in pure Python (a list of up to 14 distinct values, or a few distinct
# values repeated); larger ones go to the lattice (numpy).
EXACT_ATOM_LIMIT = 2**14

# Lattice composition: points per unit of total work; the grid is chosen so that
# (lattice points) x (number of atoms convolved) stays near this many multiply-adds,
# which takes about half a second with numpy, and within [2^12, 2^20] points.
_LATTICE_WORK = 2**27
_LATTICE_POINTS_MIN = 2**12
_LATTICE_POINTS_MAX = 2**20


def compose_heterogeneous(
    epsilons: Sequence[float],
    deltas: Sequence[float],
    delta_prime: float | None = None,
    total_delta: float | None = None,
) -> CompositionResult:
    """The four theorems for mechanisms with their own (eps_i, delta_i).

    Basic: (sum eps_i, sum delta_i). Advanced (heterogeneous DRV):
    sqrt(2 ln(1/delta') sum eps_i^2) + sum eps_i (e^eps_i - 1). Simplified: twice the square
    root term, valid under the same rule as the homogeneous form. Optimal: the composed
    randomized-response privacy-loss distribution (KOV Thm 3.5), exact when it has at most
    EXACT_ATOM_LIMIT atoms, else on a lattice with a certified upper bound. Give exactly one
    of `delta_prime` and `total_delta`, as for `theorems.compose`.
    """
    if len(epsilons) != len(deltas) or not epsilons:
        raise ValueError(f"epsilons and deltas need the same positive length, got {len(epsilons)} and {len(deltas)}")
    for index, (epsilon, delta) in enumerate(zip(epsilons, deltas)):
        _check_mechanism(epsilon, delta, suffix=f"[{index}]")
    _check_one_of(delta_prime, total_delta)
    k = len(epsilons)
    sum_squares = _fsum(e * e for e in epsilons)
    drift = _fsum(e * _expm1(e) for e in epsilons)
    basic_epsilon = _fsum(epsilons)
    delta_counts = list(Counter(deltas).items())

    def advanced_value(slack: float) -> float:
        return math.sqrt(2.0 * -math.log(slack) * sum_squares) + drift

    def simplified_value(slack: float) -> float:
        return 2.0 * math.sqrt(2.0 * -math.log(slack) * sum_squares)

    if total_delta is None:
        assert delta_prime is not None  # exactly one of the two (_check_one_of)
        OPEN_UNIT.check("delta_prime", delta_prime)
        total_delta = math.fsum(deltas) + delta_prime
        _check_total_delta(total_delta, "sum(delta) + delta_prime")
        closed = _closed_forms(
            Bound(basic_epsilon, math.fsum(deltas)),
            Bound(advanced_value(delta_prime), total_delta),
            Bound(simplified_value(delta_prime), total_delta),
        )
        log_allowed = _log_allowed_rr_delta(delta_counts, delta_prime)
    else:
        log_allowed = _require_reachable(delta_counts, total_delta, "1 - prod(1 - delta_i)")
        closed = _theorems_at_total(
            delta_counts, total_delta, basic_epsilon, advanced_value, simplified_value, "the sum of the deltas"
        )

    groups = Counter(e for e in epsilons if e > 0.0)
    if log_allowed == -math.inf:
        optimal = _exact_bound(basic_epsilon, total_delta)  # an allowance of 0: only eps_g = sum eps_i
    elif len(groups) <= 1:
        # One distinct epsilon (the deltas may differ): the fast exact path.
        value = 0.0
        if groups:
            (epsilon, count), = groups.items()
            value = _optimal_homogeneous(epsilon, count, log_allowed)
        optimal = _exact_bound(value, total_delta)
    elif math.isinf(basic_epsilon):
        optimal = OptimalBound(math.inf, total_delta, math.inf)  # the largest loss overflows float64
    elif math.prod(count + 1 for count in groups.values()) <= EXACT_ATOM_LIMIT:
        optimal = _exact_bound(_solve_profile(_exact_atoms(groups), log_allowed), total_delta)
    else:
        optimal = _lattice_optimal(groups, log_allowed, total_delta, closed.advanced.epsilon)
    if optimal.epsilon > basic_epsilon:  # eps_g = sum eps_i always holds: delta_RR is 0 there
        optimal = OptimalBound(basic_epsilon, total_delta, min(optimal.epsilon_lower, basic_epsilon),
                               optimal.method, optimal.grid_step)
    warnings: tuple[str, ...] = ()
    if optimal.method == "lattice":
        warnings = (
            f"the optimal epsilon of these {k} mechanisms is computed on a lattice (step "
            f"{optimal.grid_step:.3g}): it is a certified upper bound, at most {optimal.tolerance:.3g} "
            "above the exact optimum (epsilon_lower is a lower bound).",
        )
    return _composition_result(epsilons, deltas, k, delta_prime, total_delta, closed, optimal, warnings)


def compose_counted(mechanisms: Sequence[tuple[float, float, int]], total_delta: float) -> tuple[float, float, float]:
    """(basic, advanced, optimal) epsilon at the total delta of mechanisms given as (eps_i, delta_i,
    count_i): `compose_heterogeneous` of each pair repeated count_i times, without the lists, so
    that the work grows with the distinct pairs and the binomial windows that matter, never with
    the counts (the theorems are the same; their sums are taken as count times term). Raises the
    ParameterError of `total_delta` below the mechanisms' own composed delta."""
    deltas: Counter[float] = Counter()
    groups: Counter[float] = Counter()
    for epsilon, delta, count in mechanisms:
        _check_mechanism(epsilon, delta)
        deltas[delta] += count
        if epsilon > 0.0:
            groups[epsilon] += count
    delta_counts = list(deltas.items())
    sum_squares = _fsum(count * e * e for e, _, count in mechanisms)
    drift = _fsum(count * e * _expm1(e) for e, _, count in mechanisms)
    basic_epsilon = _fsum(count * e for e, _, count in mechanisms)
    log_allowed = _require_reachable(delta_counts, total_delta, "1 - prod(1 - delta_i)")
    closed = _theorems_at_total(
        delta_counts, total_delta, basic_epsilon,
        lambda slack: math.sqrt(2.0 * -math.log(slack) * sum_squares) + drift,
        lambda slack: 2.0 * math.sqrt(2.0 * -math.log(slack) * sum_squares), "the sum of the deltas")
    if log_allowed == -math.inf or math.isinf(basic_epsilon):
        optimal = basic_epsilon
    elif len(groups) <= 1:
        optimal = 0.0
        if groups:
            (epsilon, count), = groups.items()
            optimal = _exact_bound(_optimal_homogeneous(epsilon, count, log_allowed), total_delta).epsilon
    elif math.prod(count + 1 for count in groups.values()) <= EXACT_ATOM_LIMIT:
        optimal = _exact_bound(_solve_profile(_exact_atoms(groups), log_allowed), total_delta).epsilon
    else:
        optimal = _lattice_optimal(groups, log_allowed, total_delta, closed.advanced.epsilon).epsilon
    return closed.basic.epsilon, closed.advanced.epsilon, min(optimal, basic_epsilon)


def _exact_atoms(groups: Counter[float]) -> list[tuple[float, float]]:
    """All atoms (loss, log P) of the composed randomized responses, one group per distinct eps, sorted down.

    A group of c mechanisms with the same eps has atoms (c - 2b) eps with probability
    Binom(c, q)(b); the composition is every combination, loss and log P summed.
    """
    combined = [(0.0, 0.0)]
    for epsilon, count in groups.items():
        log_p, log_q = _randomized_response_logs(epsilon)
        group = [((count - 2 * b) * epsilon, log_binomial_pmf(b, count, log_q, log_p)) for b in range(count + 1)]
        combined = [(loss + g_loss, log_prob + g_log) for loss, log_prob in combined for g_loss, g_log in group]
    combined.sort(key=lambda atom: atom[0], reverse=True)
    return combined


def _lattice_optimal(
    groups: Counter[float], log_allowed: float, total_delta: float, advanced_epsilon: float
) -> OptimalBound:
    """Upper and lower bounds on the optimal epsilon from a lattice composition (numpy).

    The mechanisms with the same eps form a group whose composition is exact: atoms
    (c - 2b) eps with binomial probabilities. Atoms with probability below
    allowed * e^(-TAIL_MARGIN) / (number of atoms) are moved to +inf loss (pessimistic; their
    total is far below float64 resolution of the target). The others are rounded up to the
    lattice h Z (a privacy loss that is never smaller gives a delta that is never smaller:
    pessimistic), and the groups are convolved exactly by shift-and-add (no FFT, so no
    negative or lost mass). Every composed loss is at most J h above the exact one (J groups),
    so the exact profile at eps_g is at least the lattice one at eps_g + J h: the upper bound
    minus J h is a lower bound. h is chosen so that the work, (lattice points) x (atoms),
    stays near _LATTICE_WORK. The optimum is also never above the advanced (DRV) epsilon at
    the same delta, so the upper bound is the smaller of the two.
    """
    import numpy as np

    atoms_total = sum(count + 1 for count in groups.values())
    threshold = max(log_allowed - _TAIL_MARGIN - math.log(atoms_total), _LOG_SMALLEST_MASS)
    log_dropped = -math.inf
    kept: list[tuple[list[float], list[float]]] = []
    for epsilon, count in groups.items():
        log_p, log_q = _randomized_response_logs(epsilon)
        if count > _WINDOW_FROM:
            losses, masses, log_outside = _windowed_atoms(epsilon, count, threshold)
            log_dropped = log_add(log_dropped, log_outside)
            kept.append((losses, masses))
            continue
        losses, masses = [], []
        for b in range(count + 1):
            log_mass = log_binomial_pmf(b, count, log_q, log_p)
            if log_mass < threshold:
                log_dropped = log_add(log_dropped, log_mass)
            else:
                losses.append((count - 2 * b) * epsilon)
                masses.append(math.exp(log_mass))
        kept.append((losses, masses))
    span = math.fsum(float(np.max(losses)) - float(np.min(losses)) if isinstance(losses, np.ndarray)
                     else max(losses) - min(losses) for losses, _ in kept)
    kept_atoms = sum(len(losses) for losses, _ in kept)
    points = int(min(max(_LATTICE_WORK // kept_atoms, _LATTICE_POINTS_MIN), _LATTICE_POINTS_MAX))
    step = (span if span > 0.0 else max(groups)) / points

    distribution = np.ones(1)
    offset = 0  # lattice index of distribution[0]
    operations = 0
    for losses, masses in kept:
        if isinstance(losses, np.ndarray):  # a windowed group: its atoms summed per lattice point first
            points_of, where = np.unique(np.ceil(losses / step).astype(np.int64), return_inverse=True)
            losses, masses = [], np.bincount(where, weights=masses).tolist()
            indices = points_of.tolist()
        else:
            indices = [math.ceil(loss / step) for loss in losses]
        low, high = min(indices), max(indices)
        result = np.zeros(distribution.size + high - low)
        for index, mass in zip(indices, masses):
            start = index - low
            result[start:start + distribution.size] += mass * distribution
        operations += len(indices) * distribution.size
        distribution = result
        offset += low
    # Products below the smallest normal float64 may flush to zero: at most this much mass.
    log_dropped = log_add(log_dropped, math.log(2.3e-308 * max(operations, 1)))
    support = np.nonzero(distribution)[0]
    support = support[support + offset > 0][::-1]  # positive losses, largest first
    upper = _solve_profile_arrays((support + offset) * step, distribution[support], log_allowed, log_dropped)
    lower = max(upper / (1.0 + _ROUNDING_MARGIN) - len(groups) * step, 0.0)
    upper = min(upper, advanced_epsilon)
    return OptimalBound(upper, total_delta, min(lower, upper), method="lattice", grid_step=step)


def _windowed_atoms(epsilon: float, count: int, threshold: float) -> tuple[Any, Any, float]:
    """The atoms of `count`-fold eps-randomized response whose log-probability is at least
    `threshold`, as arrays (losses (count - 2b) eps, probabilities), and the log of a bound on the
    mass left out: the flips b outside a window around the mean, whose two tails are each at most
    the Chernoff bound exp(-count KL) at the window's edge, plus the atoms inside it below the
    threshold. Work: the window, about a few dozen binomial standard deviations, not the count."""
    import numpy as np

    log_p, log_q = _randomized_response_logs(epsilon)
    mean = count * math.exp(log_q)

    def below(a: int) -> float:  # log of a bound on P(B <= a), B ~ Binom(count, q) the flips
        return _log_lower_tail_chernoff(a, count, log_q, log_p)

    def above(a: int) -> float:  # log of a bound on P(B >= a)
        return _log_lower_tail_chernoff(count - a, count, log_p, log_q)

    first, log_outside = 0, -math.inf
    if below(0) < threshold:  # the largest a <= mean whose lower tail is below the threshold
        low, high = 0, max(math.floor(mean), 0)
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (middle, high) if below(middle) < threshold else (low, middle)
        first, log_outside = low + 1, below(low)
    last = count
    if above(count) < threshold:  # the smallest a >= mean whose upper tail is below the threshold
        low, high = min(math.ceil(mean), count), count
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (low, middle) if above(middle) < threshold else (middle, high)
        last, log_outside = high - 1, log_add(log_outside, above(high))
    flips = np.arange(first, min(last, count - 1) + 1, dtype=np.float64)
    log_mass = _log_binomial_pmf_array(flips, count, log_q, log_p) if flips.size else np.zeros(0)
    if last == count:  # the pmf array takes b < count
        flips = np.append(flips, float(count))
        log_mass = np.append(log_mass, log_binomial_pmf(count, count, log_q, log_p))
    small = log_mass < threshold
    if small.any():
        log_outside = log_add(log_outside, float(np.logaddexp.reduce(log_mass[small])))
    flips, log_mass = flips[~small], log_mass[~small]
    return (count - 2.0 * flips) * epsilon, np.exp(log_mass), log_outside


# Above this count a group's binomial is walked in a window (`_windowed_atoms`) instead of atom by atom.
_WINDOW_FROM = 2**14


def _solve_profile_arrays(losses: Floats, masses: Floats, log_allowed: float, log_mass_above: float) -> float:
    """`optimal._solve_profile` vectorised with numpy, for the many atoms of a lattice.

    losses: strictly decreasing positive losses; masses: their probabilities (linear scale,
    all positive). The prefix sums A, B are plain cumulative sums of positive terms.
    """
    import numpy as np

    if log_allowed < _LOG_SMALLEST_MASS or losses.size == 0:
        return _solve_profile(zip(losses.tolist(), np.log(masses).tolist()), log_allowed, log_mass_above)
    allowed = math.exp(log_allowed)
    mass_above = math.exp(log_mass_above)
    a_before = mass_above + np.concatenate(([0.0], np.cumsum(masses)[:-1]))
    b_before = np.concatenate(([0.0], np.cumsum(masses * np.exp(-losses))[:-1]))
    with np.errstate(divide="ignore", over="ignore"):
        # delta(L_j) <= allowed  <=>  A <= allowed + e^L_j B  (no subtraction)
        fails = a_before > allowed + np.exp(losses + np.log(b_before))
    index = int(np.argmax(fails)) if fails.any() else None
    if index is None:
        log_a = math.log(mass_above + float(np.sum(masses)))
        log_b = math.log(float(np.sum(masses * np.exp(-losses))))
        if log_a <= log_add(log_allowed, log_b):
            return 0.0
        return _solve_segment(log_a, log_b, log_allowed, 0.0, float(losses[-1]))
    upper = float(losses[index - 1]) if index > 0 else math.inf
    log_b = math.log(float(b_before[index])) if b_before[index] > 0.0 else -math.inf
    return _solve_segment(math.log(float(a_before[index])), log_b, log_allowed, float(losses[index]), upper)


# Lattice atoms below this log-probability are not placed (they would underflow float64); their
# mass is counted at +inf loss instead.
_LOG_SMALLEST_MASS = -700.0
