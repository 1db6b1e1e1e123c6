"""What every dominating pair shares: the `Pair` interface, `CellMasses` (log masses of loss
cells with relative error bounds), and the helpers the pairs' discretisations and quadratures use.

A pair (P, Q) is described by its privacy loss L = log(dP/dQ) under P: for any loss interval
[a, b) the model returns P(a <= L < b) and Q(a <= L < b) (the same set of outcomes measured
under Q), as logarithms with bounds on their relative errors. That is all the discretisation
needs (see `discretise`). Every x a pair computes is a real number in floating point; the
sensitivity of each mass to the rounding of x is added to its error bound, so the bounds hold
for the exact interval (docs/pld-soundness.md, S2).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from dpcalc.core.pld.normal import UNIT_ROUNDOFF, log_density
from dpcalc.core.record import Record

U = UNIT_ROUNDOFF

# Bound on the rounding error of an atom's location log(1 - p + p e^(+-1/b)), relative to 1 + |loss|.
ATOM_SLACK = 16.0 * UNIT_ROUNDOFF


class CellMasses(Record):
    """log P and log Q of a sequence of loss intervals, with bounds on their relative errors.

    The true P-mass lies in [exp(log_p) (1 - rel_p), exp(log_p) (1 + rel_p)], likewise for Q;
    rel >= 1 means only the upper end is known.
    """

    log_p: np.ndarray
    rel_p: np.ndarray
    log_q: np.ndarray
    rel_q: np.ndarray


def _combine(log_a: np.ndarray | float, rel_a: np.ndarray | float, log_b: np.ndarray | float,
             rel_b: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """log(A + B) of two non-negative quantities and the relative error of the sum."""
    with np.errstate(invalid="ignore"):
        total = np.logaddexp(log_a, log_b)
    rel = np.maximum(rel_a, rel_b)
    if isinstance(rel, np.ndarray) and rel.shape == np.shape(total):
        # where(isneginf(total), 0, max(rel_a, rel_b) + 2 u), in place
        rel += 2.0 * U
        rel[np.isneginf(total)] = 0.0
        return total, rel
    rel = rel + 2.0 * U
    rel = np.where(np.isneginf(total), 0.0, rel)
    return total, rel


def _z_windows(peak: float) -> tuple[np.ndarray, float]:
    """Trapezoid points z (step 0.125) over +-40 around 0 and around `peak`: one window when the
    two are within 80 of each other, else two disjoint ones in increasing order (the Gaussian
    pairs' integrands phi(z) r^power have their maxima near those two points)."""
    step = 0.125
    low, high = sorted((0.0, peak))
    if high - low <= 80.0:
        return np.arange(low - 40.0, high + 40.0 + step, step), step
    return np.concatenate((np.arange(low - 40.0, low + 40.0, step), np.arange(high - 40.0, high + 40.0 + step, step))), step


def _settled(log_mass: np.ndarray, rel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A cell mass and its relative error with the ends of float64 settled: an empty cell (mass
    -inf) carries no error; a mass that could not be evaluated (nan, at losses beyond float64's
    resolution of the outcome) is unknown: at most 1, relative error 1."""
    with np.errstate(invalid="ignore"):
        unknown = np.isnan(log_mass) | np.isnan(rel)
        log_mass = np.where(unknown, 0.0, log_mass)
        rel = np.where(unknown, 1.0, rel)
        return log_mass, np.where(np.isneginf(log_mass), 0.0, rel)


def _log_sum(values: np.ndarray) -> float:
    """log of the sum of exp(values) over the finite ones (-inf when there are none): a
    quadrature's log MGF from its log weighted points."""
    values = values[np.isfinite(values)]
    if len(values) == 0:
        return -math.inf
    top = float(values.max())
    return top + math.log(float(np.exp(values - top).sum()))


def _weighted_moments(weight: np.ndarray, loss: np.ndarray) -> tuple[float, float]:
    """Mean and variance of `loss` under the quadrature weights `weight`."""
    total = weight.sum()
    mean = float((weight * loss).sum() / total)
    variance = float((weight * (loss - mean) ** 2).sum() / total)
    return mean, variance


def _cell_ends(inverse: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], edges: np.ndarray,
               direction: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """End points [lo, hi) of the loss cells in the outcome variable, with their error bounds, for
    a pair whose remove loss l(x) is increasing with inverse `inverse` (the point and its error).
    add: the loss is -l(x), so L >= e <=> x <= x(-e) and the cell [e_a, e_b) is x in (x(-e_b), x(-e_a)]."""
    if direction == "remove":
        x, err = inverse(edges)
        return x[:-1], err[:-1], x[1:], err[1:]
    x, err = inverse(-edges)
    return x[1:], err[1:], x[:-1], err[:-1]


def _directed(direction: str, with_record: tuple[np.ndarray, np.ndarray],
              without: tuple[np.ndarray, np.ndarray]) -> CellMasses:
    """The cell masses of a direction from the law with the record and the law without it (each
    log mass and relative error): remove has P with the record, add the reverse."""
    if direction == "remove":
        return CellMasses(*with_record, *without)
    return CellMasses(*without, *with_record)


class Pair:
    """Interface of a dominating pair in one direction."""

    #: lowest and highest value the loss can take (possibly infinite); mass at the ends may be atoms
    support: tuple[float, float]
    #: an upper bound on the P-mass at loss +inf, counted in the top cell of `cell_masses`; it goes
    #: to +inf in the upper measure at any cap, so the searches for the tail's end leave it out
    inf_mass: float = 0.0

    def cell_masses(self, edges: np.ndarray) -> CellMasses:  # pragma: no cover - interface
        """Masses of the intervals [edges[i], edges[i+1]); edges sorted, -inf/inf allowed."""
        raise NotImplementedError

    def log_mgf(self, lam: float, cap: float = math.inf) -> float:  # pragma: no cover - interface
        """log E_P[exp(lam L); L < cap] by quadrature (cap = inf: lam times the Renyi divergence of order lam + 1)."""
        raise NotImplementedError

    def search_log_mgf(self, lam: float, cap: float = math.inf) -> float:
        """What the Chernoff tilt search (`model.chernoff`) minimises over: `log_mgf` itself, or a
        cheaper estimate of it where a pair has one (any tilt is sound, docs/pld-soundness.md S5;
        the search's result is then evaluated with `log_mgf`)."""
        return self.log_mgf(lam, cap)

    def moments(self) -> tuple[float, float]:  # pragma: no cover - interface
        """Mean and variance of L under P."""
        raise NotImplementedError

    def attained(self) -> Pair:
        """The pair the lower measure is built from: one that neighbouring datasets attain and that
        this pair dominates. The pair itself when it is attained (every pair but those whose
        upper pair is a discrete one built to dominate, `allocation.AllocationPair`)."""
        return self



def _x_sensitivity(s: float, t_lo: np.ndarray, e_lo: np.ndarray, t_hi: np.ndarray, e_hi: np.ndarray,
                   log_mass: np.ndarray) -> np.ndarray:
    """Relative change of a normal interval mass when its end points x = s t move by e_lo, e_hi:
    density times error over mass (the rounding of x, S2)."""
    arrays = (t_lo, e_lo, t_hi, e_hi, log_mass)
    if all(isinstance(x, np.ndarray) for x in arrays) and all(x.shape == log_mass.shape for x in arrays):
        # the same values in place, one end at a time (`_end_sensitivity`)
        with np.errstate(invalid="ignore", over="ignore"):
            out = _end_sensitivity(s, t_lo, e_lo, log_mass)
            out += _end_sensitivity(s, t_hi, e_hi, log_mass)
        out[np.isneginf(log_mass)] = 0.0
        return out
    with np.errstate(invalid="ignore", over="ignore"):
        a = np.where(np.isfinite(t_lo), np.exp(np.minimum(log_density(t_lo) - log_mass, 700.0)) * e_lo / s, 0.0)
        b = np.where(np.isfinite(t_hi), np.exp(np.minimum(log_density(t_hi) - log_mass, 700.0)) * e_hi / s, 0.0)
    out = a + b
    return np.where(np.isneginf(log_mass), 0.0, out)


def _end_sensitivity(s: float, t: np.ndarray, e: np.ndarray, log_mass: np.ndarray) -> np.ndarray:
    """where(isfinite(t), exp(min(log_density(t) - log_mass, 700)) e / s, 0) of `_x_sensitivity`,
    in the one new array `log_density` makes (the caller ignores the floating-point flags)."""
    out = log_density(t)
    out -= log_mass
    np.minimum(out, 700.0, out=out)
    np.exp(out, out=out)
    out *= e
    out /= s
    out[~np.isfinite(t)] = 0.0
    return out



@functools.lru_cache(maxsize=1)
def _gauss_legendre_16() -> tuple[np.ndarray, np.ndarray]:
    """16-point Gauss-Legendre rule on [-1, 1]."""
    return np.polynomial.legendre.leggauss(16)


@functools.lru_cache(maxsize=1)
def _gauss_legendre() -> tuple[np.ndarray, np.ndarray]:
    """200-point Gauss-Legendre rule on [-1, 1] (an eigenvalue problem: computed once)."""
    return np.polynomial.legendre.leggauss(200)
