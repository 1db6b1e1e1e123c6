"""dp_accounting's PLD accountant as it runs by default, for the dp-accounting and tf-privacy
presets: what `PLDAccountant().compose(...).get_epsilon(delta)` prints for Poisson-sampled
Gaussian steps (dp_accounting 0.6.0; docs/presets.md). An estimate, not one of dpcalc's
certified bounds (its tails are truncated at e^-50 and its discretisation is pessimistic only
up to that truncation).

The recipe, per step and for each of the two directions of add-remove neighbours (remove: the
mixture (1-q) N(0, s^2) + q N(-1, s^2) against N(0, s^2); add: N(0, s^2) against
(1-q) N(0, s^2) + q N(1, s^2)):

1. the outputs x are truncated where N(0, s^2) leaves 0.5 e^-50 in each tail (the truncation
   widened by the sensitivity on the side of the shifted component), and the privacy losses at
   the two truncation points bound a grid of losses i h, h = 1e-4;
2. the pessimistic connect-the-dots masses of Doroshenko, Ghazi, Kamath, Kumar, Manurangsi
   ("Connect the Dots", PETS 2022, arXiv 2207.04380, Alg. 1) on that grid, from the exact
   hockey-stick divergence delta(i h) of the step, with delta at the top loss put at infinity;
3. T steps composed by one FFT of a length covering the Chernoff bounds on the composed loss
   at tail mass 1e-15 (40 orders, +-1..20 over the grid's length), and 1e-15 added to the mass at
   infinity; phases composed by convolution, tails of 5e-16 a side folded pessimistically;
4. epsilon at delta: the smallest eps with inf + sum_{l > eps} p_l (1 - e^(eps - l)) <= delta,
   the larger of the two directions.

With q = 1 the accountant folds the T steps into one Gaussian of noise sigma / sqrt(T) (one
direction; no composition).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import fft, signal
from scipy.special import log_ndtr, ndtr, ndtri

from dpcalc.core.presets.limits import check_grid_size

INTERVAL = 1e-4  # PLDAccountant's value_discretization_interval
LOG_MASS_TRUNCATION = -50.0  # from_gaussian_mechanism's log_mass_truncation_bound
TAIL_MASS = 1e-15  # self_compose's and compose's tail_mass_truncation
_CHERNOFF_ORDERS = np.concatenate((np.arange(-20, 0), np.arange(1, 21))).astype(np.float64)


def _check_size(points: int) -> None:
    check_grid_size("the dp_accounting PLD grid", points)


def _loss(x: np.ndarray | float, q: float, sigma: float, direction: str) -> np.ndarray:
    """The step's privacy loss at output x (decreasing in x in both directions)."""
    x = np.asarray(x, dtype=np.float64)
    if direction == "remove":  # log(1 - q + q e^((-2x - 1) / (2 s^2)))
        return np.logaddexp(math.log(q) + (-2 * x - 1) / (2 * sigma * sigma), math.log1p(-q) if q < 1 else -np.inf)
    return -np.logaddexp(math.log(q) + (2 * x - 1) / (2 * sigma * sigma), math.log1p(-q) if q < 1 else -np.inf)


def _deltas(epsilons: np.ndarray, q: float, sigma: float, direction: str) -> np.ndarray:
    """The step's hockey-stick divergence delta(eps) = P(x <= x(eps)) - e^eps Q(x <= x(eps)),
    x(eps) the output where the loss is eps (the loss falls with x), in [0, 1]."""
    out = np.zeros_like(epsilons)
    if direction == "remove":
        inside = epsilons > (math.log1p(-q) if q < 1 else -np.inf)
        out[~inside] = -np.expm1(epsilons[~inside])
        e = epsilons[inside]
        x = -sigma * sigma * np.log((np.expm1(e) + q) / q) - 0.5
        upper = (1 - q) * ndtr(x / sigma) + q * ndtr((x + 1) / sigma)
        out[inside] = upper - np.exp(e + log_ndtr(x / sigma))
    else:
        inside = epsilons < (-math.log1p(-q) if q < 1 else np.inf)
        e = epsilons[inside]
        x = sigma * sigma * np.log((np.expm1(-e) + q) / q) + 0.5
        lower = np.logaddexp(math.log1p(-q) + log_ndtr(x / sigma) if q < 1 else -np.inf,
                             math.log(q) + log_ndtr((x - 1) / sigma))
        out[inside] = ndtr(x / sigma) - np.exp(e + lower)
    clipped: np.ndarray = np.clip(out, 0.0, 1.0)
    return clipped


def _step_pmf(q: float, sigma: float, direction: str) -> tuple[int, np.ndarray, float]:
    """One step's connect-the-dots PMF: (index of its lowest loss, masses, mass at infinity)."""
    low_x = sigma * float(ndtri(0.5 * math.exp(LOG_MASS_TRUNCATION)))
    high_x = -low_x
    if direction == "add":
        high_x += 1.0
    else:
        low_x -= 1.0
    top = math.ceil(float(_loss(low_x, q, sigma, direction)) / INTERVAL)
    bottom = math.floor(float(_loss(high_x, q, sigma, direction)) / INTERVAL)
    _check_size(top - bottom + 1)
    deltas = np.minimum.accumulate(_deltas(np.arange(bottom, top + 1) * INTERVAL, q, sigma, direction))
    if top == bottom:
        return bottom, np.array([1.0 - deltas[0]]), float(deltas[0])
    steps = np.diff(deltas)
    masses = np.empty_like(deltas)
    masses[0] = 1.0 - deltas[0] + steps[0] / math.expm1(INTERVAL)
    masses[1:-1] = (steps[1:] - steps[:-1] * math.exp(INTERVAL)) / math.expm1(INTERVAL)
    masses[-1] = steps[-1] / math.expm1(-INTERVAL)
    return bottom, np.maximum(masses, 0.0), float(deltas[-1])


def _self_compose(bottom: int, masses: np.ndarray, infinity: float, count: int) -> tuple[int, np.ndarray, float]:
    """`count` copies composed by one FFT over the Chernoff window of the composed loss."""
    if count == 1 and len(masses) <= 1000:  # a small PMF composed once is returned as it is
        return bottom, masses, infinity
    size = len(masses)
    low, high = 0, (size - 1) * count
    index = np.arange(size, dtype=np.float64)
    for order in _CHERNOFF_ORDERS / size:
        with np.errstate(divide="ignore"):
            log_mgf = float(np.log(np.dot(masses, np.exp(index * order))))
        bound = (count * log_mgf + math.log(2 / TAIL_MASS)) / order
        if math.isfinite(bound):
            if order > 0:
                high = min(high, math.ceil(bound))
            else:
                low = max(low, math.floor(bound))
    length = high - low + 1
    _check_size(max(length, size))
    n = fft.next_fast_len(max(length, size))
    composed = np.real(fft.ifft(fft.fft(masses, n) ** count))
    composed = np.roll(composed, -low)[:length]
    return bottom * count + low, composed, TAIL_MASS - math.expm1(count * math.log1p(-infinity))


def _compose(a: tuple[int, np.ndarray, float], b: tuple[int, np.ndarray, float]) -> tuple[int, np.ndarray, float]:
    """Two PMFs convolved, the tails of at most TAIL_MASS / 2 a side folded pessimistically (the
    left into the lowest kept loss, the right to infinity)."""
    masses = signal.fftconvolve(a[1], b[1])
    infinity = a[2] + b[2] - a[2] * b[2]
    left = int(np.searchsorted(np.cumsum(masses), TAIL_MASS / 2, side="right"))
    right = len(masses) - int(np.searchsorted(np.cumsum(masses[::-1]), TAIL_MASS / 2, side="right"))
    right = max(right, left + 1)
    kept = masses[left:right].copy()
    kept[0] += masses[:left].sum()
    return a[0] + b[0] + left, kept, infinity + float(masses[right:].sum())


def _epsilon(bottom: int, masses: np.ndarray, infinity: float, delta: float) -> float:
    """The smallest eps >= 0 with infinity + sum_{l > eps} p_l (1 - e^(eps - l)) <= delta."""
    if infinity > delta:
        return math.inf
    losses = (np.arange(len(masses))[::-1] + bottom) * INTERVAL
    p = masses[::-1]
    upper = infinity + np.concatenate(([0.0], np.cumsum(p)))
    lower = np.concatenate(([0.0], np.cumsum(np.exp(-losses) * p)))
    with np.errstate(divide="ignore", invalid="ignore"):
        crossing = (upper[:-1] > delta) & (lower[:-1] > 0) & (np.log((upper[:-1] - delta) / lower[:-1]) >= losses)
    stop = int(np.argmax(crossing)) if crossing.any() else len(p)
    empty = (upper[1:stop + 1] >= delta) & (lower[1:stop + 1] == 0)
    if empty.any():
        return max(0.0, float(losses[int(np.argmax(empty))]))
    if upper[stop] <= lower[stop] + delta:
        return 0.0
    return float(math.log((upper[stop] - delta) / lower[stop]))


def dp_accounting_pld_epsilon(steps: Sequence[tuple[float, float, int]], delta: float) -> float:
    """dp_accounting's PLDAccountant epsilon at `delta` for the phases `steps`, each (sampling
    probability q in (0, 1], noise multiplier sigma > 0, count >= 1)."""
    result = 0.0
    for direction in ("remove", "add"):
        total: tuple[int, np.ndarray, float] = (0, np.array([1.0]), 0.0)  # the accountant's identity
        for q, sigma, count in steps:
            if q == 1.0:
                if direction == "add":
                    continue  # one symmetric Gaussian: the remove direction covers it
                phase = _step_pmf(1.0, sigma / math.sqrt(count), "remove")
            else:
                phase = _self_compose(*_step_pmf(q, sigma, direction), count)
            total = _compose(total, phase)
        if direction == "add" and all(q == 1.0 for q, _, _ in steps):
            break
        result = max(result, _epsilon(*total, delta))
    return result
