"""What tiny pipelines leak, computed exactly: an independent check of dpcalc's certified bounds.

The pipeline (1-D, clipping norm C = 1). Each record has a gradient in {-1, 0, +1}; a step
releases the sum of its batch's gradients plus N(0, sigma^2). With the gradients fixed the
output of T steps is a finite mixture of Gaussians N(m, sigma^2 I), m in Z^T, whose weights are
the probabilities of the batch sums under the sampling scheme (`law`):

- poisson: each record joins each step independently with probability p (binomial weights);
- uniform: each step an independent uniformly random b-subset (hypergeometric weights);
- shuffle: each epoch a uniform permutation cut into consecutive batches of b, the last possibly
  smaller (sequential hypergeometric weights: every partition's sums, exactly);
- allocation: each record joins one uniformly chosen step of the epoch's t (multinomial);
- truncated: a Poisson draw; above B records, B of the drawn chosen uniformly are kept;
- user level is Poisson sampling of examples, a neighbour holding one user's k examples more.

Only the multiset of gradients matters for these schemes (each is exchangeable: the law of the
batch sums depends on the dataset only through its counts of -1, 0 and +1), so a dataset is a
triple of counts and the weights are exact rationals (`fractions.Fraction`), rounded to float64
once. A neighbour relation is a pair of such datasets (`pairs`): add-remove (D plus x against D,
both orders), replace-one (x against x') and zero-out (x against a null record, a gradient-0
record that keeps its slot in the batch).

delta(eps) = sup_A P(A) - e^eps Q(A) of a pair is bracketed, never estimated:

- one dimension (`delta_1d`): the line is cut into cells; on a cell each component's density lies
  between its values at the cell's nearest and farthest points, which bounds f = p - e^eps q from
  above and below. Cells where f >= 0 certainly are integrated exactly (differences of normal
  CDFs); cells where f <= 0 are dropped; the others are halved, 40 times. The lower end is
  P(A) - e^eps Q(A) for A the union of the cells kept (a valid lower bound for any A); the upper
  end adds, for each cell left undecided, its width times the bound on f there, and the P-mass
  outside the range (12 standard deviations beyond every mean). Rounding is bounded by
  1e-15 (1 + e^eps) per cell or interval integrated, and subtracted from the lower end and added
  to the upper one. So T = 1 is exact to the interval's width (about 1e-13);
- two dimensions (`delta_2d`): the same on rectangles (the density of N(m, diag(s1^2, s2^2))
  factorises, so its bounds on a rectangle are products of the 1-D bounds), split in four,
  until the undecided cells' bound is below 1e-3 of the value (at most 10 times): T = 2 is
  bracketed, the bracket's width stated by the result;
- T >= 3 (`lower_bound`): any function of the output is a post-processing, so the delta of the
  pair of its laws is a valid lower bound on the pair's delta. The projections y -> u.y onto
  integer directions u (coordinate axes, all-ones, and every primitive vector with entries in
  {-2..2} or {-1, 0, 1}) give 1-D mixtures N(u.m, sigma^2 |u|^2), bracketed as above; their lower
  ends bound the true delta from below. For T = 2 the 2-D bracket's lower end is used too.

So every lower end is a rigorous lower bound on what a dataset pair attains, every upper end a
rigorous upper bound on it (T <= 2). Tests compare a lower end against dpcalc's certified upper
bound and an upper end against dpcalc's certified lower bound, never a point estimate.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

import numpy as np
from scipy.special import ndtr

Counts = tuple[int, int, int]  # how many records have gradient -1, 0, +1
SCHEMES = ("poisson", "uniform", "shuffle", "allocation", "truncated", "user")
RELATIONS = ("add-remove", "replace-one", "zero-out")

_RANGE_1D = 12.0  # standard deviations beyond every mean: P-mass outside <= 2 Phi(-12) = 3.6e-33
_RANGE_2D = 9.0  # the 2-D box: P-mass outside <= 4 Phi(-9) = 4.5e-19
_NEGLIGIBLE = 1e-16  # a cell whose bound on the integral of f+ is below this is not split further
_ROUNDING = 1e-15  # absolute rounding of one integral of one unit-weight component (a CDF difference)


# --- the laws of the batch sums --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Scheme:
    """A sampling scheme with its parameters. `steps`: steps (poisson, uniform, truncated, user) or
    epochs (shuffle, allocation); `rate`: p (poisson, truncated, user); `batch`: b (uniform, shuffle,
    truncated's cap B is `cap`); `epoch_steps`: t (allocation; shuffle takes ceil(n / b))."""

    name: str
    steps: int
    rate: Fraction | None = None
    batch: int | None = None
    epoch_steps: int | None = None
    cap: int | None = None


Mixture = tuple[np.ndarray, np.ndarray]  # (means: int array (K, T), weights: float array (K,))


def _binomial(m: int, p: Fraction) -> list[Fraction]:
    return [math.comb(m, i) * p**i * (1 - p) ** (m - i) for i in range(m + 1)]


@cache
def _step_poisson(counts: Counts, p: Fraction) -> dict[int, Fraction]:
    minus, _zero, plus = counts
    law: dict[int, Fraction] = {}
    for i, wi in enumerate(_binomial(plus, p)):
        for j, wj in enumerate(_binomial(minus, p)):
            law[i - j] = law.get(i - j, Fraction(0)) + wi * wj
    return law


@cache
def _step_uniform(counts: Counts, b: int) -> dict[int, Fraction]:
    """A uniformly random b-subset of the records (all of them when there are fewer than b)."""
    minus, zero, plus = counts
    n = minus + zero + plus
    b = min(b, n)
    total = math.comb(n, b)
    law: dict[int, Fraction] = {}
    for i in range(min(plus, b) + 1):
        for j in range(min(minus, b - i) + 1):
            rest = b - i - j
            if rest <= zero:
                law[i - j] = law.get(i - j, Fraction(0)) + Fraction(math.comb(plus, i) * math.comb(minus, j)
                                                                    * math.comb(zero, rest), total)
    return law


@cache
def _step_truncated(counts: Counts, p: Fraction, cap: int) -> dict[int, Fraction]:
    """A Poisson draw; when more than `cap` records are drawn, `cap` of them kept uniformly."""
    minus, zero, plus = counts
    law: dict[int, Fraction] = {}
    for i, wi in enumerate(_binomial(plus, p)):
        for j, wj in enumerate(_binomial(minus, p)):
            for k, wk in enumerate(_binomial(zero, p)):
                drawn = wi * wj * wk
                if i + j + k <= cap:
                    law[i - j] = law.get(i - j, Fraction(0)) + drawn
                    continue
                for key, weight in _step_uniform((j, k, i), cap).items():
                    law[key] = law.get(key, Fraction(0)) + drawn * weight
    return law


@cache
def _epoch_shuffle(counts: Counts, b: int) -> dict[tuple[int, ...], Fraction]:
    """One epoch: a uniform permutation cut into batches of b (the last one smaller): the law of the
    vector of batch sums, each batch a uniform subset of what the earlier ones left."""
    minus, zero, plus = counts
    n = minus + zero + plus
    if n == 0:
        return {(): Fraction(1)}
    size = min(b, n)
    total = math.comb(n, size)
    law: dict[tuple[int, ...], Fraction] = {}
    for i in range(min(plus, size) + 1):
        for j in range(min(minus, size - i) + 1):
            rest = size - i - j
            if rest > zero:
                continue
            weight = Fraction(math.comb(plus, i) * math.comb(minus, j) * math.comb(zero, rest), total)
            for tail, tail_weight in _epoch_shuffle((minus - j, zero - rest, plus - i), b).items():
                key = (i - j, *tail)
                law[key] = law.get(key, Fraction(0)) + weight * tail_weight
    return law


@cache
def _epoch_allocation(counts: Counts, t: int) -> dict[tuple[int, ...], Fraction]:
    """One epoch: each record joins one of the t steps, uniformly and independently."""
    minus, _zero, plus = counts
    law: dict[tuple[int, ...], Fraction] = {(0,) * t: Fraction(1)}
    share = Fraction(1, t)
    for gradient in (-1,) * minus + (1,) * plus:
        moved: dict[tuple[int, ...], Fraction] = {}
        for key, weight in law.items():
            for step in range(t):
                new = list(key)
                new[step] += gradient
                moved[tuple(new)] = moved.get(tuple(new), Fraction(0)) + weight * share
        law = moved
    return law


def _block(scheme: Scheme, counts: Counts) -> dict[tuple[int, ...], Fraction]:
    """The law of one independent block of the run: one step, or one epoch."""
    if scheme.name in ("poisson", "user"):
        assert scheme.rate is not None
        return {(s,): w for s, w in _step_poisson(counts, scheme.rate).items()}
    if scheme.name == "uniform":
        assert scheme.batch is not None
        return {(s,): w for s, w in _step_uniform(counts, scheme.batch).items()}
    if scheme.name == "truncated":
        assert scheme.rate is not None and scheme.cap is not None
        return {(s,): w for s, w in _step_truncated(counts, scheme.rate, scheme.cap).items()}
    if scheme.name == "shuffle":
        assert scheme.batch is not None
        return _epoch_shuffle(counts, scheme.batch)
    if scheme.name == "allocation":
        assert scheme.epoch_steps is not None
        return _epoch_allocation(counts, scheme.epoch_steps)
    raise ValueError(f"unknown scheme {scheme.name!r}")


def law(scheme: Scheme, counts: Counts) -> Mixture:
    """The output of the whole run on a dataset with these counts: the mixture's means and weights
    (blocks independent: the product of the block laws)."""
    block = {key: weight for key, weight in _block(scheme, counts).items() if weight}
    keys = np.array(list(block), dtype=np.int64)
    weights = np.array([float(w) for w in block.values()])
    means, mass = keys, weights
    for _ in range(scheme.steps - 1):
        means = np.concatenate([np.repeat(means, len(keys), axis=0), np.tile(keys, (len(means), 1))], axis=1)
        mass = np.outer(mass, weights).ravel()
    return means, mass


# --- the neighbouring datasets ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Pair:
    """Two neighbouring datasets (counts of -1, 0, +1), first the one whose law is P."""

    first: Counts
    second: Counts
    label: str


def _with(counts: Counts, gradient: int, times: int = 1) -> Counts:
    updated = list(counts)
    updated[gradient + 1] += times
    return (updated[0], updated[1], updated[2])


def datasets(size: int) -> Iterator[Counts]:
    """Every multiset of `size` gradients in {-1, 0, +1}."""
    for minus in range(size + 1):
        for plus in range(size - minus + 1):
            yield (minus, size - minus - plus, plus)


def pairs(relation: str, others: Counts, group: Counts = (0, 0, 1)) -> Iterator[Pair]:
    """The neighbouring pairs built on the records `others`: add-remove (others plus the `group`,
    one record or one user's examples, against others, both orders), replace-one (others plus x
    against others plus x', x != x') and zero-out (others plus x against others plus a null
    record; a user's examples against as many null records). Pairs that only mirror others (every gradient negated) are left out."""
    if relation == "add-remove":
        bigger = tuple(o + g for o, g in zip(others, group, strict=True))
        label = f"{others} + {group}"
        yield Pair(bigger, others, f"{label} remove")  # type: ignore[arg-type]  # a 3-tuple
        yield Pair(others, bigger, f"{label} add")  # type: ignore[arg-type]
    elif relation == "replace-one":
        for x, y in ((1, -1), (1, 0), (0, 1), (-1, 1), (0, -1), (-1, 0)):
            yield Pair(_with(others, x), _with(others, y), f"{others} + ({x} -> {y})")
    elif relation == "zero-out" and group != (0, 0, 1):
        # a user's examples each replaced by a null record (gradient 0, still sampled on its own)
        bigger = tuple(o + g for o, g in zip(others, group, strict=True))
        nulled = (others[0], others[1] + sum(group), others[2])
        label = f"{others} + ({group} -> nulls)"
        yield Pair(bigger, nulled, label)  # type: ignore[arg-type]  # a 3-tuple
        yield Pair(nulled, bigger, f"{label} reversed")  # type: ignore[arg-type]
    elif relation == "zero-out":
        for x in (1, -1):
            yield Pair(_with(others, x), _with(others, 0), f"{others} + ({x} -> null)")
            yield Pair(_with(others, 0), _with(others, x), f"{others} + (null -> {x})")
    else:
        raise ValueError(f"unknown relation {relation!r}")


def user_groups(k: int) -> Iterator[Counts]:
    """Every multiset of one user's k examples' gradients, up to negation (at least one +1)."""
    for counts in datasets(k):
        if counts[2] >= counts[0] and counts != (0, k, 0):
            yield counts


# --- delta of a pair of mixtures -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Bracket:
    """lower <= delta(eps) <= upper, both rigorous (upper is inf where not computed)."""

    lower: float
    upper: float = math.inf


def _mass(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Phi(b) - Phi(a) for a <= b, without cancellation in the upper tail."""
    return np.where(a > 0, ndtr(-a) - ndtr(-b), ndtr(b) - ndtr(a))


def _density_bounds(t0: np.ndarray, t1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The largest and smallest standard normal density on [t0, t1] (elementwise)."""
    near = np.where((t0 <= 0) & (t1 >= 0), 0.0, np.minimum(np.abs(t0), np.abs(t1)))
    far = np.maximum(np.abs(t0), np.abs(t1))
    scale = 1.0 / math.sqrt(2 * math.pi)
    return scale * np.exp(-0.5 * near * near), scale * np.exp(-0.5 * far * far)


def _combined(p: tuple[np.ndarray, np.ndarray], q: tuple[np.ndarray, np.ndarray], eps: float
              ) -> tuple[np.ndarray, np.ndarray]:
    """f = p - e^eps q as one list of components: distinct means (rows) and coefficients."""
    means = np.concatenate([p[0], q[0]])
    coefficients = np.concatenate([p[1], -math.exp(eps) * q[1]])
    unique, inverse = np.unique(means, axis=0, return_inverse=True)
    summed = np.zeros(len(unique))
    np.add.at(summed, inverse.ravel(), coefficients)
    return unique, summed


def delta_1d(p: tuple[np.ndarray, np.ndarray], q: tuple[np.ndarray, np.ndarray], sd: float, eps: float,
             depth: int = 40) -> Bracket:
    """delta(eps) of P = sum w N(m, sd^2) against Q, both given as (means (K,), weights (K,)): a
    rigorous bracket (module docstring)."""
    means, coef = _combined((np.asarray(p[0], float).ravel(), p[1]), (np.asarray(q[0], float).ravel(), q[1]), eps)
    means = means.ravel()
    budget = float(np.abs(coef).sum())
    lo, hi = means.min() - _RANGE_1D * sd, means.max() + _RANGE_1D * sd
    edges = np.linspace(lo, hi, math.ceil((hi - lo) / (sd / 8)) + 1)
    x0, x1 = edges[:-1], edges[1:]
    plus, minus = np.maximum(coef, 0.0), np.minimum(coef, 0.0)
    sure_cells: list[tuple[np.ndarray, np.ndarray]] = []
    open_a = open_b = np.empty(0)
    open_bound = 0.0
    for level in range(depth + 1):
        if len(x0) == 0:
            break
        high, low = _density_bounds((x0[:, None] - means[None, :]) / sd, (x1[:, None] - means[None, :]) / sd)
        upper_f = (high @ plus + low @ minus) / sd
        lower_f = (low @ plus + high @ minus) / sd
        sure = lower_f >= 0
        sure_cells.append((x0[sure], x1[sure]))
        open_ = (~sure) & (upper_f > 0)
        # a cell whose bound on the integral of f+ is negligible is settled: counted above only
        small = open_ & ((x1 - x0) * upper_f < _NEGLIGIBLE)
        open_bound += float(np.sum((x1[small] - x0[small]) * upper_f[small]))
        open_ &= ~small
        if level == depth or open_.sum() > 200_000:
            # undecided at the end: the upper end counts each cell's width times the bound on f
            open_a, open_b = x0[open_], x1[open_]
            open_bound += float(np.sum((open_b - open_a) * upper_f[open_]))
            break
        middle = 0.5 * (x0[open_] + x1[open_])
        x0, x1 = np.concatenate([x0[open_], middle]), np.concatenate([middle, x1[open_]])
    starts = np.concatenate([cell[0] for cell in sure_cells])
    ends = np.concatenate([cell[1] for cell in sure_cells])
    a, b = _merged(starts, ends)
    sure_value = float(np.sum(_integrals(a, b, means, coef, sd)))
    # the lower end's set: the sure cells and the undecided ones whose exact integral is positive
    gain = _integrals(open_a, open_b, means, coef, sd)
    chosen = gain > 0
    la, lb = _merged(np.concatenate([starts, open_a[chosen]]), np.concatenate([ends, open_b[chosen]]))
    lower_value = float(np.sum(_integrals(la, lb, means, coef, sd)))
    rounding = _ROUNDING * (len(a) + len(la) + 2) * budget
    tail = 2 * float(ndtr(-_RANGE_1D)) * float(p[1].sum())
    return Bracket(max(lower_value - rounding, 0.0), min(sure_value + open_bound + rounding + tail, 1.0))


def _integrals(a: np.ndarray, b: np.ndarray, means: np.ndarray, coef: np.ndarray, sd: float) -> np.ndarray:
    """The exact integral of f over each interval [a_i, b_i]."""
    if len(a) == 0:
        return np.empty(0)
    masses = _mass((a[:, None] - means[None, :]) / sd, (b[:, None] - means[None, :]) / sd)
    result: np.ndarray = masses @ coef
    return result


def _merged(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Adjacent cells joined into intervals (cells come from halving, so shared ends are equal)."""
    if len(starts) == 0:
        return starts, ends
    order = np.argsort(starts)
    starts, ends = starts[order], ends[order]
    new = np.ones(len(starts), dtype=bool)
    new[1:] = starts[1:] != ends[:-1]
    group = np.cumsum(new) - 1
    last = np.full(group[-1] + 1, -np.inf)
    np.maximum.at(last, group, ends)
    return starts[new], last


def delta_2d(p: Mixture, q: Mixture, sds: tuple[float, float], eps: float, depth: int = 10,
             gap: float = 1e-3) -> Bracket:
    """delta(eps) of two mixtures of N(m, diag(sds^2)) in two dimensions: a rigorous bracket
    (rectangles, split in four near the boundary of {f > 0}, up to `depth` times, until the
    undecided cells' bound is below `gap` times the value)."""
    means, coef = _combined((np.asarray(p[0], float), p[1]), (np.asarray(q[0], float), q[1]), eps)
    budget = float(np.abs(coef).sum())
    s1, s2 = sds
    boxes = []
    for axis, sd in ((0, s1), (1, s2)):
        lo, hi = means[:, axis].min() - _RANGE_2D * sd, means[:, axis].max() + _RANGE_2D * sd
        boxes.append(np.linspace(lo, hi, math.ceil((hi - lo) / (sd / 2)) + 1))
    gx, gy = np.meshgrid(np.arange(len(boxes[0]) - 1), np.arange(len(boxes[1]) - 1), indexing="ij")
    x0, x1 = boxes[0][gx.ravel()], boxes[0][gx.ravel() + 1]
    y0, y1 = boxes[1][gy.ravel()], boxes[1][gy.ravel() + 1]
    plus, minus = np.maximum(coef, 0.0), np.minimum(coef, 0.0)
    sure_value = open_gain = open_bound = 0.0
    cells = 0
    for level in range(depth + 1):
        if len(x0) == 0:
            break
        hx, lx = _density_bounds((x0[:, None] - means[None, :, 0]) / s1, (x1[:, None] - means[None, :, 0]) / s1)
        hy, ly = _density_bounds((y0[:, None] - means[None, :, 1]) / s2, (y1[:, None] - means[None, :, 1]) / s2)
        upper_f = (hx * hy @ plus + lx * ly @ minus) / (s1 * s2)
        lower_f = (lx * ly @ plus + hx * hy @ minus) / (s1 * s2)
        sure = lower_f >= 0
        open_ = (~sure) & (upper_f > 0)
        area = (x1 - x0) * (y1 - y0)
        small = open_ & (area * upper_f < _NEGLIGIBLE)
        open_bound += float(np.sum(area[small] * upper_f[small]))
        open_ &= ~small
        sure_value += float(np.sum(_integrals_2d(x0[sure], x1[sure], y0[sure], y1[sure], means, coef, sds)))
        cells += int(sure.sum())
        pending = float(np.sum(area[open_] * upper_f[open_]))
        if level == depth or open_.sum() > 20_000 or pending < gap * (sure_value + 1e-9):
            open_bound += float(np.sum(area[open_] * upper_f[open_]))
            gain = _integrals_2d(x0[open_], x1[open_], y0[open_], y1[open_], means, coef, sds)
            open_gain = float(np.sum(gain[gain > 0]))
            cells += int(open_.sum())
            break
        mx, my = 0.5 * (x0[open_] + x1[open_]), 0.5 * (y0[open_] + y1[open_])
        ax, bx, ay, by = x0[open_], x1[open_], y0[open_], y1[open_]
        x0, x1 = np.concatenate([ax, mx, ax, mx]), np.concatenate([mx, bx, mx, bx])
        y0, y1 = np.concatenate([ay, ay, my, my]), np.concatenate([my, my, by, by])
    rounding = 2 * _ROUNDING * (cells + 1) * budget
    tail = 4 * float(ndtr(-_RANGE_2D)) * float(p[1].sum())
    return Bracket(max(sure_value + open_gain - rounding, 0.0), min(sure_value + open_bound + rounding + tail, 1.0))


def _integrals_2d(x0: np.ndarray, x1: np.ndarray, y0: np.ndarray, y1: np.ndarray, means: np.ndarray,
                  coef: np.ndarray, sds: tuple[float, float]) -> np.ndarray:
    if len(x0) == 0:
        return np.empty(0)
    s1, s2 = sds
    mx = _mass((x0[:, None] - means[None, :, 0]) / s1, (x1[:, None] - means[None, :, 0]) / s1)
    my = _mass((y0[:, None] - means[None, :, 1]) / s2, (y1[:, None] - means[None, :, 1]) / s2)
    result: np.ndarray = (mx * my) @ coef
    return result


# --- a pair's delta: exact, bracketed, or bounded from below -----------------------------------------------------

def directions(dimension: int) -> list[tuple[int, ...]]:
    """Integer directions to project on: every primitive vector with entries in {-2..2} (up to
    three dimensions) or {-1, 0, 1} (more), one of each pair u, -u; the coordinate axes and the
    all-ones vector first."""
    span = range(-2, 3) if dimension <= 3 else range(-1, 2)
    found = []
    for vector in itertools.product(span, repeat=dimension):
        if not any(vector) or math.gcd(*vector) != 1:
            continue
        first = next(v for v in vector if v)
        if first > 0:
            found.append(vector)
    # the axes and the all-ones direction first, then by size: a prefix is a cheap screen
    return sorted(found, key=lambda v: (sum(map(abs, v)) != 1, v != (1,) * dimension, sum(map(abs, v)), v))


def project(mixture: Mixture, direction: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """The law of u.y: means u.m (integers, merged) and their weights."""
    means, weights = mixture
    keys = means @ np.asarray(direction, dtype=np.int64)
    unique, inverse = np.unique(keys, return_inverse=True)
    summed = np.zeros(len(unique))
    np.add.at(summed, inverse.ravel(), weights)
    return unique.astype(float), summed


def bracket(p: Mixture, q: Mixture, sigma: float, eps: float, *, search: bool = True,
            max_directions: int | None = None) -> Bracket:
    """delta(eps) of the pair: exact for T = 1, bracketed for T = 2, bounded from below (the best
    projection) for more; `search` adds the projections for T = 2 as well."""
    dimension = p[0].shape[1]
    if dimension == 1:
        return delta_1d((p[0][:, 0].astype(float), p[1]), (q[0][:, 0].astype(float), q[1]), sigma, eps)
    best = 0.0
    upper = math.inf
    if dimension == 2:
        two = delta_2d(p, q, (sigma, sigma), eps)
        best, upper = two.lower, two.upper
        if not search:
            return two
    chosen = directions(dimension)
    if max_directions is not None:
        chosen = chosen[:max_directions]
    for direction in chosen:
        sd = sigma * math.sqrt(sum(v * v for v in direction))
        best = max(best, delta_1d(project(p, direction), project(q, direction), sd, eps).lower)
    return Bracket(best, upper)


def gaussian_pair_delta(shift: float, sigma: float, eps: float) -> float:
    """delta(eps) of N(shift, sigma^2) against N(0, sigma^2), in closed form (float64)."""
    mu = shift / sigma
    if mu == 0:
        return 0.0
    return float(ndtr(-eps / mu + mu / 2) - math.exp(eps) * ndtr(-eps / mu - mu / 2))
