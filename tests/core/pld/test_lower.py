"""lower: the merge shares of a lower measure's coarsening along the chain of odd atoms (S4 of
docs/pld-soundness.md).

References (properties that must hold):
  * the shares make a garbling: every odd atom gives nonnegative fractions to the two pairs
    beside it, at most all of it, and every pair's merged likelihood ratio is at least its grid
    point's for every measure within the margin of the stored one (hypothesis, on measures with
    lumps, zeros and a pile at an end);
  * the coarsening `coarsen.coarsen` then applies a column-stochastic kernel with nonnegative
    entries to the outcomes (the same fractions of an atom's P- and Q-mass), so P-mass is
    conserved exactly and every coarse point's merged ratio lies at or above it;
  * exact compositions: a few-point pair whose losses lie on the grid, composed 2^k times by
    enumeration (the integer convolution of its P-masses, float64, relative error below 1e-13 at
    these sizes), lies between the engine's lower and upper measures composed by squaring and
    coarsening at every epsilon; the Gaussian mechanism without subsampling (exactly mu-GDP,
    Dong, Roth, Su 2022, Cor. 3.3) lies inside the accountant's interval with the lower measure's
    composed grid as coarse as the upper one's;
  * accuracy: on a log-linear stretch, nothing but the ends is rounded down.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core.pld import accountant, bounds, coarsen, fft, lower
from dpcalc.core.pld import plan as plan_module
from dpcalc.core.pld.layers import single
from dpcalc.core.pld.measure import Tilted
from tests.core.pld.helpers import gaussian, gdp_delta, masses

U = 2.0**-53


def _check_shares(odd: np.ndarray, margin: float, c: float) -> tuple[np.ndarray, np.ndarray]:
    alpha, beta = lower.chain_shares(odd, margin, c)
    assert len(alpha) == len(beta) == max(len(odd) - 1, 0)
    assert np.all(alpha >= 0.0) and np.all(beta >= 0.0)
    used = np.zeros(len(odd))
    used[:-1] += alpha
    used[1:] += beta
    assert np.all(used <= 1.0)
    hi, lo = odd + margin, np.maximum(odd - margin, 0.0)
    # the merged ratio of pair i is at least its grid point's for every true mass in [lo, hi]:
    # beta_i true_(i+1) >= beta_i lo_(i+1) >= e^c alpha_i hi_i >= e^c alpha_i true_i
    assert np.all(beta * lo[1:] >= math.exp(c) * alpha * hi[:-1])
    return alpha, beta


_masses = st.lists(st.one_of(st.just(0.0), st.floats(1e-12, 1.0), st.floats(0.5, 1.0)), min_size=0, max_size=60)


@settings(max_examples=300, deadline=None)
@given(values=_masses, margin=st.one_of(st.just(0.0), st.floats(1e-16, 1e-2)), c=st.floats(1e-7, 6.0))
def test_the_shares_are_a_garbling(values, margin, c):
    _check_shares(np.array(values, dtype=float), margin, c)


@pytest.mark.parametrize("slope", [-0.3, -0.01, 0.0, 0.02, 0.5])
@pytest.mark.parametrize("c", [1e-4, 0.01, 0.2])
def test_a_log_linear_stretch_is_merged_completely(slope, c):
    odd = np.exp(slope * np.arange(400))
    odd /= odd.sum()
    alpha, beta = _check_shares(odd, 0.0, c)
    used = np.zeros(len(odd))
    used[:-1] += alpha
    used[1:] += beta
    junk = (1.0 - used) * odd
    # only the two ends (no partner beyond them) and the meeting point may keep a part
    inner = np.delete(junk, [0, 1, len(odd) - 2, len(odd) - 1, int(np.argmax(odd))])
    assert inner.sum() <= 1e-9


def _lower_measure(rng, n, lam, h, k0, lumpy):
    t = rng.random(n) ** 3 + 1e-4
    if lumpy:
        t[rng.integers(0, n, 5)] += 3.0
        t[: n // 4] *= np.linspace(0.0, 1.0, n // 4)  # a pile rising from zero at the end
    t /= t.sum()
    return Tilted("lower", lam, h, k0, t, 0.0, err=1e-12, err2=1e-13)


@pytest.mark.parametrize("lam, h, k0", [(1.5, 2.0**-8, 0), (0.03, 2.0**-4, 3), (6.0, 2.0**-3, -5)])
@pytest.mark.parametrize("lumpy", [False, True])
def test_the_coarsening_applies_a_stochastic_kernel(lam, h, k0, lumpy):
    """The coarsened measure is K applied to the outcomes, K column-stochastic and nonnegative,
    with each merged outcome's ratio at or above its grid point (the rest is a rounding down)."""
    m = _lower_measure(np.random.default_rng(3), 201, lam, h, k0, lumpy)
    out = coarsen.coarsen(m)
    # the padded fine grid, as `coarsen` lays it out: even points are the coarse grid
    lead = m.k0 % 2
    p_fine = masses(m)
    s_fine = m.losses
    if lead:
        p_fine, s_fine = np.concatenate(([0.0], p_fine)), np.concatenate(([s_fine[0] - h], s_fine))
    if len(p_fine) % 2 == 0:
        p_fine, s_fine = np.append(p_fine, 0.0), np.append(s_fine, s_fine[-1] + h)
    odd = m.t[1 - lead :: 2]
    alpha, beta = lower.chain_shares(odd, lower.merge_margin(m), (1.0 + 2.0 * lam) * h)
    n_even = (len(p_fine) + 1) // 2
    kernel = np.zeros((n_even, len(p_fine)))
    kernel[np.arange(n_even), 2 * np.arange(n_even)] = 1.0  # even atoms stay
    used = np.zeros(len(odd))
    for i in range(len(odd) - 1):  # pair i merges onto even point i + 1
        kernel[i + 1, 2 * i + 1] += alpha[i]
        kernel[i + 1, 2 * i + 3] += beta[i]
        used[i] += alpha[i]
        used[i + 1] += beta[i]
    for i in range(len(odd)):  # the rest of odd atom i goes down to even point i
        kernel[i, 2 * i + 1] += max(0.0, 1.0 - used[i])
    assert np.all(kernel >= 0.0)
    np.testing.assert_allclose(kernel.sum(axis=0), 1.0, rtol=0, atol=4 * U)
    q_fine = p_fine * np.exp(-s_fine)
    merged = np.zeros(n_even, dtype=bool)
    merged[1:-1] = (alpha > 0.0) | (beta > 0.0)
    # the merged outcomes alone (even atoms and pairs; junk is rounded down separately)
    pairs_only = kernel.copy()
    for i in range(len(odd)):
        pairs_only[i, 2 * i + 1] -= max(0.0, 1.0 - used[i])
    p_merged, q_merged = pairs_only @ p_fine, pairs_only @ q_fine
    s_coarse = s_fine[0::2]
    assert np.all(p_merged[merged] >= np.exp(s_coarse[merged]) * q_merged[merged] * (1.0 - 1e-12))
    # P-mass is conserved, and the stored coarse measure is K's image of the P-masses
    expected = kernel @ p_fine
    assert masses(out).sum() == pytest.approx(p_fine.sum(), rel=1e-12)
    got = np.zeros(n_even)
    start = (out.k0 * 2 - (m.k0 - lead)) // 2
    got[start : start + len(out.t)] = masses(out)
    np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-15)


def _exact_powers(ks, ps, level):
    """The P-masses of the 2^level-fold composition of the pair with atoms (k_i h, p_i), on the
    integer grid from 2^level min(k)."""
    lo = min(ks)
    base = np.zeros(max(ks) - lo + 1)
    for k, p in zip(ks, ps, strict=True):
        base[k - lo] += p
    out, first = base, lo
    for _ in range(level):
        out, first = np.convolve(out, out), 2 * first
    return out, first


def _measure_of(kind, ks, ps, h, lam):
    lo = min(ks)
    t = np.zeros(max(ks) - lo + 1)
    for k, p in zip(ks, ps, strict=True):
        t[k - lo] += p
    s = (lo + np.arange(len(t))) * h
    w = t * np.exp(lam * s)
    z = float(w.sum())
    return Tilted(kind, lam, h, lo, w / z, math.log(z), log_z_err=8 * U * (abs(math.log(z)) + 1),
                  err=16 * U, err2=16 * U, log_mass=math.log(sum(ps)) + 1e-12)


@settings(max_examples=25, deadline=None)
@given(ks=st.lists(st.integers(-12, 12), min_size=2, max_size=4, unique=True),
       raw=st.lists(st.floats(0.01, 1.0), min_size=4, max_size=4),
       lam=st.floats(0.05, 4.0), level=st.integers(1, 5))
def test_exact_composition_lies_between_the_measures(ks, raw, lam, level):
    """Lower <= exact <= upper at every epsilon, after squarings each followed by a coarsening."""
    h = 2.0**-4
    ps = [r / sum(raw[: len(ks)]) for r in raw[: len(ks)]]
    exact, first = _exact_powers(ks, ps, level)
    s_exact = (first + np.arange(len(exact))) * h
    measures = {kind: _measure_of(kind, ks, ps, h, lam) for kind in ("lower", "upper")}
    for kind, m in measures.items():
        for _ in range(level):
            m = coarsen.coarsen(fft.convolve(m, m))
        measures[kind] = m
    for eps in np.linspace(0.0, max(float(s_exact[-1]), 0.0) + 0.5, 23):
        above = s_exact > eps
        truth = float((exact[above] * -np.expm1(eps - s_exact[above])).sum())
        low = bounds.delta_bound(single(measures["lower"]), float(eps))
        high = bounds.delta_bound(single(measures["upper"]), float(eps))
        assert low <= truth * (1 + 1e-12) + 1e-300
        assert truth <= high * (1 + 1e-12) + 1e-300


@pytest.mark.parametrize("sigma, steps", [(0.8, 7), (2.0, 64), (1.1, 1000)])
def test_the_gaussian_mechanism_lies_inside_with_a_coarse_lower_grid(monkeypatch, sigma, steps):
    """mu-GDP (exact, 1e-9 relative) inside [lower, upper] of delta at several epsilons, with the
    lower measure's composed grid as coarse as the upper one's (many coarsenings)."""
    monkeypatch.setattr(plan_module, "_LOWER_COARSE_BINS_PER_SD", plan_module._UPPER_COARSE_BINS_PER_SD)
    for eps in (0.5, 2.0, 6.0):
        phases = (gaussian(1.0, sigma, steps),)
        found = accountant.account_grid(phases, delta=None, epsilon=eps, accuracy=1e-3).result
        exact = gdp_delta(sigma, steps, eps)
        assert found.delta_lower <= exact * (1 + 1e-9)
        assert exact <= found.delta_upper * (1 + 1e-9)


def _reference_shares(odd, margin, c):
    """The sweeps of `lower.chain_shares` as loops over the atoms (the definition)."""
    pairs = max(len(odd) - 1, 0)
    ec = math.exp(c) * (1.0 + lower._SWEEP_MARGIN)
    hi, lo = odd + margin, np.maximum(odd - margin, 0.0)
    alpha, beta = np.zeros(pairs), np.zeros(pairs)
    with np.errstate(divide="ignore"):
        mode = min(int(np.argmax(np.log(np.maximum(odd, 0.0)) - c * np.arange(len(odd)))), pairs)
    ratio = [ec * hi[i] / lo[i + 1] if lo[i + 1] > 0.0 and hi[i] > 0.0 else math.inf for i in range(pairs)]
    down = 0.0
    for i in range(mode):
        free, r = 1.0 - down, ratio[i]
        if free <= 0.0 or r == math.inf:
            down = 0.0
            continue
        beta[i] = down = min(1.0, r * free)
        alpha[i] = beta[i] / r
    up = 0.0
    for i in range(pairs - 1, mode - 1, -1):
        free, r = 1.0 - up, ratio[i]
        if free <= 0.0 or r == math.inf:
            up = 0.0
            continue
        alpha[i] = up = min(1.0, free / r)
        beta[i] = alpha[i] * r
    return alpha, beta


@settings(max_examples=200, deadline=None)
@given(values=_masses, c=st.floats(1e-7, 3.0))
def test_the_shares_follow_the_sweeps(values, c):
    """chain_shares gives the shares of the loops over the atoms, before the meeting atom's
    scaling and the recheck (which only lower them)."""
    odd = np.array(values, dtype=float)
    if len(odd) < 2:
        return
    alpha, beta = lower.chain_shares(odd, 0.0, c)
    ref_alpha, ref_beta = _reference_shares(odd, 0.0, c)
    with np.errstate(divide="ignore"):
        mode = min(int(np.argmax(np.log(np.maximum(odd, 0.0)) - c * np.arange(len(odd)))), len(odd) - 1)
    away = np.abs(np.arange(len(alpha)) - mode) > 1  # the meeting pairs may be scaled down
    np.testing.assert_allclose(alpha[away], ref_alpha[away], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(beta[away], np.minimum(ref_beta[away], 1.0), rtol=1e-9, atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(n=st.one_of(st.integers(1, 100), st.integers(1024, 6000)), contraction=st.floats(0.0, 0.999), expand=st.floats(1.0, 40.0),
       seed=st.integers(0, 2**32 - 1), start=st.floats(0.0, 1.0))
def test_the_blocked_sweep_is_the_loop(n, contraction, expand, seed, start):
    """`lower.sweep` (blocks of sqrt(n) steps, vectorised across the blocks) gives the chain
    x_(k+1) = min(1, c_k (1 - x_k)) of the loop over the steps, on chains that contract (as
    the sweeps' directions make them) with now and then a step above 1 or a zero (an unusable
    pair, which restarts the chain)."""
    rng = np.random.default_rng(seed)
    coefficients = rng.uniform(0.0, contraction, n)
    coefficients[rng.random(n) < 0.01] = expand
    coefficients[rng.random(n) < 0.005] = 0.0
    got = lower.sweep(coefficients, start)
    want = lower._sweep_loop(coefficients, start)
    assert got.shape == want.shape
    assert np.all((got >= 0.0) & (got <= 1.0))
    np.testing.assert_allclose(got, want, rtol=0.0, atol=1e-12)


def test_a_sweep_that_overflows_takes_the_loop(monkeypatch):
    coefficients = np.full(20_000, 1e4)  # each step expands by 1e4: a block's slope overflows
    want = lower._sweep_loop(coefficients, 0.25)
    calls = []
    loop = lower._sweep_loop
    monkeypatch.setattr(lower, "_sweep_loop", lambda *args: calls.append(1) or loop(*args))
    np.testing.assert_array_equal(lower.sweep(coefficients, 0.25), want)
    assert calls == [1]
