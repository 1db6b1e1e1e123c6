"""Sums of independent lattice laws by FFT with certified errors: the convolutions behind
`allocation` (its factors are `lognormal_lattice`'s).

- `sum_laws`: x_1 * ... * b^(*m) by FFT, under several exponential tilts, each entry with a bound
  on its error (`_Convolver`: Higham 2002, Thm 24.2, carried through the power);
- `fft_length`: how long an FFT must be for the folded mass to stay below e^-_ALIAS_LOG.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpcalc.core.pld import work
from dpcalc.core.pld.fft import FFT_ETA, fast_length
from dpcalc.core.pld.pairs.base import U, _log_sum

# The FFT length is chosen so that the convolution's mass beyond it is below e^-_ALIAS_LOG
# (`fft_length`); BEYOND bounds that mass, per unit of the measure's mass. e^-60 ~ 1e-26: times
# r + 1 (`allocation`), still far below a factor's own P-mass at +inf (~1e-18, _Z_TOP); e^-80
# made the bulk's FFTs a quarter longer for nothing (design card: 100000 against 80000).
_ALIAS_LOG = 60.0
BEYOND = math.exp(-_ALIAS_LOG) * 1.01
# A tilt's FFT is long enough for its tilted measures to fold back less than e^-_TILT_ALIAS_LOG,
# below the FFT's own rounding error (`sum_laws`).
_TILT_ALIAS_LOG = 40.0


def _norms(x: np.ndarray) -> tuple[float, float]:
    return float(np.abs(x).sum()), float(np.sqrt((x * x).sum()))


def _spectrum_l2(f: np.ndarray, n: int) -> float:
    """The 2-norm of a length-n real signal's full spectrum from its rfft half."""
    weight = np.full(len(f), 2.0)
    weight[0] = 1.0
    if n % 2 == 0:
        weight[-1] = 1.0
    return float(np.sqrt((weight * (f.real ** 2 + f.imag ** 2)).sum()))


def _power(f: np.ndarray, m: int) -> tuple[np.ndarray, int]:
    """f^m elementwise by binary powering, and the number of rounded multiplications on any path."""
    result = np.ones_like(f)
    base = f.copy()
    count = 0
    while m:
        if m & 1:
            result = result * base
            count += 1
        m >>= 1
        if m:
            base = base * base
            count += 1
    return result, count


class _Convolver:
    """x_1 * ... * x_k * b^(*m) by FFT of length n (circular), with a bound on the 2-norm of its error.

    Rounding (Higham 2002, Thm 24.2, as in `fft`): a transform errs by at most eta ||F x||_2 in
    2-norm, eta = log2(n) FFT_ETA, and ||F x||_2 = sqrt(n) ||x||_2. With B = ||b||_1 >= |F b| and
    D = eta sqrt(n) ||b||_2 (a bound on both the 2-norm and every entry of the error of F b),
    |a^m - c^m| <= m max(|a|, |c|)^(m-1) |a - c| bounds the power's error by m (B + D)^(m-1) D in
    2-norm; likewise each factor x_i errs by D_i = eta sqrt(n) ||x_i||_2 and is at most ||x_i||_1;
    each complex product errs by at most 3u relative. The caller bounds the folding of mass at or
    beyond n.
    """

    def __init__(self, b: np.ndarray, m: int, n: int) -> None:
        self.n = n
        self.eta = math.log2(max(n, 2)) * FFT_ETA
        self.b = self.spectrum(b)
        b_spectrum, b_size, d = self.b
        self.power, count = _power(b_spectrum, m)
        growth = (1.0 + 3.0 * U) ** count
        self.power_max = b_size ** m * growth  # >= |computed power| at every frequency
        self.power_err = m * b_size ** max(m - 1, 0) * d + (growth - 1.0) * _spectrum_l2(self.power, n) * 1.01

    def spectrum(self, x: np.ndarray) -> tuple[np.ndarray, float, float]:
        """The computed transform of x, a bound on its entries (||x||_1 + D) and on its error D."""
        x1, x2 = _norms(x)
        d = self.eta * math.sqrt(self.n) * x2
        return np.fft.rfft(x, self.n), x1 + d, d

    def apply(self, *factors: tuple[np.ndarray, float, float]) -> tuple[np.ndarray, float]:
        """(the convolution on 0..n-1, a bound on the 2-norm of its error), of factors given by
        their `spectrum`s (a spectrum serves every product it enters)."""
        n = self.n
        product = self.power
        for spectrum, _, _ in factors:
            product = product * spectrum
        sizes = [size for _, size, _ in factors]
        y = np.fft.irfft(product, n)
        spectrum_err = math.prod(sizes) * self.power_err + 3.0 * U * len(factors) * _spectrum_l2(product, n) * 1.01
        for i, (_, _, d) in enumerate(factors):
            spectrum_err += d * math.prod(sizes[:i] + sizes[i + 1:]) * self.power_max * math.sqrt(n)
        err = spectrum_err / math.sqrt(n) + (self.eta + 2.0 * U) * float(np.sqrt((y * y).sum())) * 1.01
        return y, err


# Exponential tilts (`sum_laws`) of the bulk's sum, in units of 1/(the bulk's last index), and of a
# sum with one factor beyond the bulk, in units of 1/(the lattice's last index): enough to compute
# each atom from the bulk to either end of the support to its own relative precision. (Measured on
# the design card: tilts of 1, 2, 4 and 8 improved no atom's bound by more than a factor 1.25, at
# relative errors near 5e-9; tail tilts of 32 and 48 none of mass above 1e-20. Bulk tilts of 32
# and 64 reach beyond twice the FFT's length, so are never taken; those of -32, -256 and -4096
# between the others moved no interval of six allocation runs, at delta 1e-5 and 1e-10, by more
# than 3e-6 relative, at a third of the bulk's FFTs.)
BULK_TILTS = (0.0, 16.0, -16.0, -64.0, -1024.0, -16384.0)
TAIL_TILTS = (0.0, 16.0, 64.0)


def tilts(units: tuple[float, ...], top: int) -> tuple[float, ...]:
    return tuple(tau / max(top, 1) for tau in units)


def _log_mgf(log_m: np.ndarray, theta: float) -> float:
    """log sum_k m_k e^(theta k) from log m_k."""
    return _log_sum(log_m + theta * np.arange(len(log_m)))


# Blocks of a measure in its Chernoff bounds (`_Blocks`): 2048 gave the design card's FFT lengths
# within 2% of those of 4096 blocks, at half the cost.
_BLOCKS = 2048


@dataclass(frozen=True)
class _Blocks:
    """A measure m on 0..size-1 (from its log masses) summed in at most _BLOCKS blocks of
    consecutive indices, for cheap Chernoff bounds on long lattices (`upper_log_mgf`)."""

    size: int
    block_log: np.ndarray  # log of each block's mass
    first: np.ndarray  # each block's first index
    last: np.ndarray  # and last

    @staticmethod
    def of(log_m: np.ndarray) -> _Blocks:
        size = max(1, -(-len(log_m) // _BLOCKS))
        padded = np.full(size * -(-len(log_m) // size), -math.inf)
        padded[:len(log_m)] = log_m
        blocks = padded.reshape(-1, size)
        peak = blocks.max(axis=1)
        finite = np.isfinite(peak)
        with np.errstate(invalid="ignore", divide="ignore"):
            block_log = np.where(finite, peak + np.log(np.exp(blocks - np.where(finite, peak, 0.0)[:, None]).sum(axis=1)), -math.inf)
        first = np.arange(len(block_log)) * size
        return _Blocks(len(log_m), block_log, first, np.minimum(first + size, len(log_m)) - 1)

    def upper_log_mgf(self, thetas: np.ndarray) -> np.ndarray:
        """Upper bounds on log M(theta), M(theta) = sum_k m_k e^(theta k), for real thetas: each
        block's mass at its last index (theta >= 0) or its first (theta < 0)."""
        up = thetas >= 0.0
        values = np.empty((len(thetas), len(self.block_log)))
        values[up] = self.block_log[None, :] + thetas[up, None] * self.last[None, :]
        values[~up] = self.block_log[None, :] + thetas[~up, None] * self.first[None, :]
        top = values.max(axis=1)
        safe = np.where(np.isfinite(top), top, 0.0)
        with np.errstate(divide="ignore"):
            out: np.ndarray = safe + np.log(np.exp(values - safe[:, None]).sum(axis=1))
        return out


# A measure in a Chernoff bound: its blocks, how many times it is convolved, and an exponential
# tilt: the measure m_k e^(shift k - log_norm).
_Part = tuple[_Blocks, int, float, float]


def _upper_mgfs(parts: list[_Part], thetas: np.ndarray, memo: dict[tuple[int, float], np.ndarray] | None = None
                ) -> np.ndarray:
    """Upper bounds on sum_i count_i log M_i(theta) for theta >= 0, M_i(theta) the MGF of the i-th
    (tilted) measure (`_Blocks.upper_log_mgf`; the block sums' rounding inside the margin). `memo`
    keeps each measure's bounds at a shift for the other sums it enters (same thetas)."""
    total = np.zeros(len(thetas))
    for blocks, count, shift, log_norm in parts:
        key = (id(blocks), shift)
        value = memo.get(key) if memo is not None else None
        if value is None:
            value = blocks.upper_log_mgf(thetas + shift)
            if memo is not None:
                memo[key] = value
        total += count * (value - log_norm)
    return total * (1.0 + 1e-12) + 1e-12


def _thetas(parts: list[_Part]) -> np.ndarray:
    top = max(blocks.size for blocks, *_ in parts)
    return 2.0 ** np.arange(-8, 16) / max(top - 1, 1)


def _tail_bound(thetas: np.ndarray, mgfs: np.ndarray, n: int) -> float:
    """Bound on the mass at or beyond index n of a convolution whose log MGF is at most `mgfs` at
    `thetas` > 0 (`_upper_mgfs`): the best of the Chernoff bounds M(theta) e^(-theta n)."""
    best = float((mgfs - thetas * n).min())
    return math.exp(min(best, 700.0)) * 1.01


def _chernoff_length(parts: list[_Part]) -> float:
    """An index beyond which the convolution holds less than e^-_ALIAS_LOG: the Chernoff bound at
    the best theta of a grid of powers of two, then of a grid 2^(1/16) apart around it (every
    theta > 0 gives a bound)."""
    thetas = _thetas(parts)
    coarse = (_upper_mgfs(parts, thetas) + _ALIAS_LOG) / thetas
    around = float(thetas[int(np.argmin(coarse))]) * 2.0 ** (np.arange(-16, 17) / 16.0)
    return min(float(coarse.min()), float(((_upper_mgfs(parts, around) + _ALIAS_LOG) / around).min()))


def fft_length(parts: list[tuple[np.ndarray, int]], full: int) -> int:
    """An FFT length beyond which the convolution of the measures with log masses log_m, each
    `count` times, holds less than e^-_ALIAS_LOG (at most `full`, the length of its whole support)."""
    best = _chernoff_length([(_Blocks.of(log_m), count, 0.0, 0.0) for log_m, count in parts])
    n = fast_length(int(min(full, math.ceil(best) + 1)))
    work.check_atoms(n, "random allocation: the epoch's lattice convolution")
    return n


def logs(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        out: np.ndarray = np.log(np.maximum(x, 0.0))
    return out


def sum_laws(b: np.ndarray, factor_sets: tuple[tuple[np.ndarray, ...], ...], m: int, n: int,
              tilts: tuple[float, ...]) -> list[tuple[np.ndarray, np.ndarray]]:
    """For each set of factors x_1, ...: x_1 * ... * b^(*m) on 0..n-1 (all >= 0) and a bound on
    each entry's error, the best of several exponential tilts: with every measure multiplied by
    e^(theta k) and normalised, the FFT's error is relative to the tilted measure, and untilting
    multiplies entry j's error by e^(-theta j) times the normalisers, so a tail far from the bulk
    is computed to its own relative precision. A tilt's FFT is as long as its tilted measures need
    (a Chernoff bound, `_upper_mgfs`: they fold back less than e^-_TILT_ALIAS_LOG; at least the
    inputs' length, and n untilted; at most about 2n) and gives the entries below its length: a
    tilt towards 0 concentrates the measures near 0 and needs a shorter one. The tilts come in
    increasing size within each sign; once one reaches beyond 2n, the larger ones of its sign
    (reaching further still, their normalisers dominated by mass beyond the entries asked for) are
    left out. The mass the circular convolution folds back is bounded by `_tail_bound`.
    The power of b and each factor's transform are taken once a tilt for all the sets."""
    # each distinct measure (b, the factors; a measure may enter several sets) once: its logs and blocks
    arrays = {id(x): x for x in (b, *(x for factors in factor_sets for x in factors))}
    log_of = {key: logs(x) for key, x in arrays.items()}
    blocks_of = {key: _Blocks.of(log_x) for key, log_x in log_of.items()}
    log_b0, blocks_b = log_of[id(b)], blocks_of[id(b)]
    sets = [[log_of[id(x)] for x in factors] for factors in factor_sets]
    set_blocks = [[blocks_of[id(x)] for x in factors] for factors in factor_sets]
    empty = [any(not np.isfinite(log_x).any() for log_x in set_logs) for set_logs in sets]
    longest = max([len(b), *(len(x) for factors in factor_sets for x in factors)])
    thetas = 2.0 ** np.arange(-8, 16) / max(longest - 1, 1)
    # the length of the whole support of the longest convolution (no FFT needs more)
    support = m * (len(b) - 1) + max(sum(len(x) - 1 for x in factors) for factors in factor_sets) + 1
    limit = max(n, min(support, fast_length(2 * n)))
    out = [(np.zeros(n), np.zeros(n) if gone else np.full(n, math.inf)) for gone in empty]
    capped: set[bool] = set()  # the signs of the tilts whose measures reached beyond the limit
    for theta in tilts:
        if (theta > 0.0) in capped:
            continue  # a larger tilt of a sign whose smaller one was capped reaches further still
        norm_of = {key: _log_mgf(log_x, theta) for key, log_x in log_of.items()}
        norm_b = norm_of[id(b)]
        norms = [[norm_of[id(x)] for x in factors] for factors in factor_sets]
        # the tilted measures' Chernoff bounds: where each set's convolution ends, and its folded mass
        memo: dict[tuple[int, float], np.ndarray] = {}  # a measure's bounds, once a tilt for every set it enters
        mgfs = [_upper_mgfs([(blocks_b, m, theta, norm_b), *((bl, 1, theta, norm) for bl, norm in
                                                              zip(blocks, set_norms, strict=True))], thetas, memo)
                for blocks, set_norms in zip(set_blocks, norms, strict=True)]
        reach = max((float(((mgf + _TILT_ALIAS_LOG) / thetas).min()) for mgf, gone in zip(mgfs, empty, strict=True)
                     if not gone), default=0.0)
        # at most twice n (the work bounded; the folded mass is bounded whatever the length), and
        # n untilted (the untilted FFT gives every entry below n)
        length = min(max(fast_length(int(min(reach, limit)) + 1), longest), limit)
        if theta == 0.0:
            length = max(length, n)
        elif reach > limit:
            capped.add(theta > 0.0)
        kept = min(length, n)
        index = np.arange(kept)
        log_b = log_b0 + theta * np.arange(len(b)) - norm_b
        convolver = _Convolver(np.exp(log_b), m, length)
        spectra = {id(b): convolver.b}  # each tilted factor's transform, taken once a tilt
        for k, set_logs in enumerate(sets):
            if empty[k]:
                continue
            for x, log_x, norm in zip(factor_sets[k], set_logs, norms[k], strict=True):
                if id(x) not in spectra:
                    spectra[id(x)] = convolver.spectrum(np.exp(log_x + theta * np.arange(len(log_x)) - norm))
            y, err = convolver.apply(*(spectra[id(x)] for x in factor_sets[k]))
            err += _tail_bound(thetas, mgfs[k], length)
            with np.errstate(over="ignore", invalid="ignore"):
                scale = np.exp(np.minimum(m * norm_b + sum(norms[k]) - theta * index, 700.0))
                tilt_err = err * scale
                values, errors = out[k]
                better = tilt_err < errors[:kept]
            values[:kept] = np.where(better, y[:kept] * scale, values[:kept])
            errors[:kept] = np.where(better, tilt_err, errors[:kept])
    return out
