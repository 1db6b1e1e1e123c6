"""The L2 bound on the error of a measure's tilted masses (`Tilted.err2`, S5 of
docs/pld-soundness.md), beside the L1 bound `err`.

References: exact rational arithmetic (fractions.Fraction) for the convolution (plain FFT,
direct, and the FFT with the largest atoms split off), both kinds of
coarsening and truncation of small measures whose inputs carry known errors (an exact vector
and a perturbed float copy of it: the input bounds are the exact norms of the difference); the
computed operation is replayed in floats to recover its normaliser, and checked to be the one
the engine used. The bounds must hold; err2 <= err must hold after every operation (the L2
norm of a vector is at most its L1 norm); and the L2 route can only tighten a profile.
mpmath at 40 digits for the 2-norm of the weights of S5.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core.pld import bounds, coarsen, fft, lower, truncate
from dpcalc.core.pld.layers import single
from dpcalc.core.pld.measure import Tilted, add, piece, renormalise, replace

F = Fraction


def _up(x: Fraction) -> float:
    """A float at least x (x >= 0)."""
    value = float(x)
    return value if F(value) >= x else math.nextafter(value, math.inf)


def _norms(diff: list[Fraction]) -> tuple[float, float]:
    """Upper bounds on the L1 and L2 norms of an exact vector."""
    l1 = _up(sum((abs(d) for d in diff), F(0)))
    square = sum((d * d for d in diff), F(0))
    l2 = math.sqrt(_up(square))
    while F(l2) * F(l2) < square:
        l2 = math.nextafter(l2, math.inf)
    return l1, l2


def _measure(rng, n, kind="upper", lam=1.5, h=2.0**-8, k0=0, noise=1e-9, spread=True):
    """A measure with an exact vector and a perturbed stored copy, and the exact vector."""
    exact = rng.random(n) ** 3 + 1e-3
    exact = exact / exact.sum()
    bump = rng.standard_normal(n) if spread else np.eye(1, n, n // 2)[0]
    stored = exact + noise * bump
    stored = np.where(stored > 0.0, stored, exact)
    exact_f = [F(float(x)) for x in exact]
    diff = [F(float(s)) - x for s, x in zip(stored, exact_f, strict=True)]
    err, err2 = _norms(diff)
    m = Tilted(kind, lam, h, k0, stored, 0.0, err=err, err2=err2)
    return m, exact_f


def _check(out: Tilted, exact: list[Fraction]) -> None:
    """The computed t is within out.err (L1) and out.err2 (L2) of `exact`."""
    assert len(out.t) == len(exact)
    l1, l2 = _norms([F(float(t)) - x for t, x in zip(out.t, exact, strict=True)])
    assert l1 <= out.err
    assert l2 <= out.err2 <= out.err
    # the L2 bound is not vacuous: within a modest factor of its L1 counterpart or of the truth
    assert out.err2 < out.err or l2 > 0.0


def _exact_convolution(x: list[Fraction], y: list[Fraction]) -> list[Fraction]:
    out = [F(0)] * (len(x) + len(y) - 1)
    for i, xi in enumerate(x):
        for j, yj in enumerate(y):
            out[i + j] += xi * yj
    return out


@pytest.mark.parametrize("fft_path", [False, True])
@pytest.mark.parametrize("noise, spread", [(0.0, True), (1e-9, True), (1e-7, False)])
def test_convolution_keeps_the_l2_bound(monkeypatch, fft_path, noise, spread):
    rng = np.random.default_rng(5)
    a, xa = _measure(rng, 90, noise=noise, spread=spread)
    b, xb = _measure(rng, 70, k0=-4, noise=noise, spread=spread)
    if fft_path:
        monkeypatch.setattr(fft, "_DIRECT_CONVOLUTION_BELOW", 0)
        # the plain FFT (`test_the_largest_atoms_split_off_before_the_fft` covers the split)
        monkeypatch.setattr(fft, "_split_convolve", lambda *args: None)
        n = len(a.t) + len(b.t) - 1
        n_fft = fft.fast_length(n)
        raw = np.fft.irfft(np.fft.rfft(a.t, n_fft) * np.fft.rfft(b.t, n_fft), n_fft)[:n]
    else:
        raw = np.convolve(a.t, b.t)
    c = fft.convolve(a, b)
    total = float(raw.sum())
    assert np.array_equal(raw / total, c.t)  # the replay is the engine's computation
    _check(c, [x / F(total) for x in _exact_convolution(xa, xb)])
    if noise == 0.0 and fft_path:
        # the fresh rounding alone: without the sqrt(n) of the L1 conversion
        assert c.err2 * 10 < c.err


def _pad(m: Tilted, exact: list[Fraction]) -> tuple[np.ndarray, list[Fraction], int]:
    """t and the exact vector padded as `coarsen` pads them (even k0, odd length)."""
    t, k0 = m.t, m.k0
    if k0 % 2:
        t, exact, k0 = np.concatenate(([0.0], t)), [F(0)] + exact, k0 - 1
    if len(t) % 2 == 0:
        t, exact = np.concatenate((t, [0.0])), exact + [F(0)]
    return t, exact, k0


@pytest.mark.parametrize("lam, h, k0", [(1.5, 2.0**-8, 0), (0.03, 2.0**-4, 3), (20.0, 2.0**-3, -5)])
@pytest.mark.parametrize("noise, spread", [(1e-9, True), (1e-7, False)])
def test_upper_coarsening_keeps_the_l2_bound(lam, h, k0, noise, spread):
    m, x = _measure(np.random.default_rng(7), 101, lam=lam, h=h, k0=k0, noise=noise, spread=spread)
    out = coarsen.coarsen(m)
    t, x, _ = _pad(m, x)
    log_one_plus = math.log1p(math.exp(h))
    log_down, log_up = -lam * h - log_one_plus, (1.0 + lam) * h - log_one_plus
    shift = max(0.0, log_up)
    keep, f_down, f_up = math.exp(-shift), math.exp(log_down - shift), math.exp(log_up - shift)
    even = t[0::2] * keep
    even[:-1] += f_down * t[1::2]
    even[1:] += f_up * t[1::2]
    total = float(even.sum())
    xe, xo = x[0::2], x[1::2]
    exact = [F(keep) * v for v in xe]
    for i, v in enumerate(xo):
        exact[i] += F(f_down) * v
        exact[i + 1] += F(f_up) * v
    nonzero = np.flatnonzero(even)
    lo, hi = int(nonzero[0]), int(nonzero[-1]) + 1
    assert all(v == 0 for v in exact[:lo] + exact[hi:])
    assert np.array_equal(even[lo:hi] / total, out.t)
    _check(out, [v / F(total) for v in exact[lo:hi]])


@pytest.mark.parametrize("lam, h, k0", [(1.5, 2.0**-8, 0), (0.03, 2.0**-4, 3), (6.0, 2.0**-3, -5)])
@pytest.mark.parametrize("noise, spread", [(1e-9, True), (1e-7, False)])
def test_lower_coarsening_keeps_the_l2_bound(lam, h, k0, noise, spread):
    m, x = _measure(np.random.default_rng(8), 101, kind="lower", lam=lam, h=h, k0=k0, noise=noise,
                    spread=spread)
    out = coarsen.coarsen(m)
    t, x, _ = _pad(m, x)
    odd = t[1::2]
    alpha, beta = lower.chain_shares(odd, lower.merge_margin(m), (1.0 + 2.0 * lam) * h)
    used = np.zeros(len(odd))
    used[:-1] += alpha
    used[1:] += beta
    junk = np.maximum(0.0, 1.0 - used)
    shift = lam * h
    keep, f_lower = math.exp(-shift), math.exp(-2.0 * shift)
    even = t[0::2] * keep
    even[1:-1] += alpha * odd[:-1] + beta * odd[1:] * f_lower
    even[: len(odd)] += junk * odd * f_lower
    total = float(even.sum())
    xe, xo = x[0::2], x[1::2]
    exact = [F(keep) * v for v in xe]
    for i in range(len(xo) - 1):
        exact[i + 1] += F(float(alpha[i])) * xo[i] + F(float(beta[i])) * xo[i + 1] * F(f_lower)
    for i, v in enumerate(xo):
        exact[i] += F(float(junk[i])) * v * F(f_lower)
    # `coarsen` trims exact zeros at the ends (here the padding, zero in the exact vector too)
    nonzero = np.flatnonzero(even)
    lo, hi = int(nonzero[0]), int(nonzero[-1]) + 1
    assert all(v == 0 for v in exact[:lo] + exact[hi:])
    assert np.array_equal(even[lo:hi] / total, out.t)
    _check(out, [v / F(total) for v in exact[lo:hi]])


@pytest.mark.parametrize("kind", ["upper", "lower"])
@pytest.mark.parametrize("lam, h", [(0.05, 2.0**-6), (2.0, 2.0**-6)])
def test_truncation_keeps_the_l2_bound_and_the_moved_mass(kind, lam, h):
    rng = np.random.default_rng(9)
    m, x = _measure(rng, 400, kind=kind, lam=lam, h=h, k0=-100, noise=1e-9)
    # a decaying tail above the peak, so that the cap falls inside the window
    decay = np.exp(-0.05 * np.maximum(np.arange(400) - 100, 0))
    t = m.t * decay
    x = [v * F(float(d)) for v, d in zip(x, decay, strict=True)]
    l1, l2 = _norms([F(float(a)) - b for a, b in zip(t, x, strict=True)])
    m = replace(m, t=t, err=l1, err2=l2)
    log_inf_budget = m.log_z - lam * float(m.losses[150]) - 5.0
    out = truncate.truncate(m, log_inf_budget=log_inf_budget, log_rho_budget=-30.0, multiplicity=1)
    start = out.k0 - m.k0
    cut = start + len(out.t) - 1
    assert cut < len(t) - 1  # the cap moved something
    kept = t[start : cut + 1]
    total = float(kept.sum())
    assert np.array_equal(kept / total, out.t)
    _check(out, [v / F(total) for v in x[start : cut + 1]])
    if kind == "upper":
        # the mass moved to +inf bounds the exact mass above the cut (S3)
        s = m.losses
        above = sum((x[j] * F(math.exp(m.log_z - lam * float(s[j]))) for j in range(cut + 1, len(t))), F(0))
        assert F(out.inf_mass) >= above


def test_the_moved_mass_takes_the_smaller_error_route():
    # an error bound far smaller in L2 than in L1 (an error spread thinly over many bins), and a
    # small tilt (the weights hardly decay above the cut): the L2 route places the cap lower
    n = 4000
    t = np.exp(-0.5 * ((np.arange(n) - 500) / 60.0) ** 2) + 1e-30
    t /= t.sum()
    m = Tilted("upper", 0.02, 2.0**-6, 0, t, 0.0, err=1e-7)
    budget = m.log_z - m.lam * float(m.losses[700]) - 18.0
    l1_only = truncate.truncate(m, log_inf_budget=budget, log_rho_budget=-60.0, multiplicity=1)
    both = truncate.truncate(replace(m, err2=1e-10), log_inf_budget=budget,
                             log_rho_budget=-60.0, multiplicity=1)
    assert len(both.t) < len(l1_only.t)


def test_weight_norms_match_mpmath():
    rng = np.random.default_rng(12)
    for lam, h in ((0.03, 2.0**-7), (1.5, 2.0**-8), (60.0, 2.0**-6)):
        t = rng.random(300) + 0.1
        m = Tilted("upper", lam, h, -40, t / t.sum(), 0.0, err=1e-6, err2=1e-8)
        part = bounds._LayerProfile(m)
        xs = np.array([0.0, 0.3 * h, 0.5, float(m.losses[200]) + 0.25 * h])
        got = part.weight_norms(xs)
        with mp.workdps(40):
            for x, value in zip(xs, got, strict=True):
                square = mp.mpf(0)
                for s in m.losses:
                    y = mp.mpf(float(s)) - mp.mpf(float(x))
                    if y > 0:
                        square += (mp.exp(-lam * y) * (1 - mp.exp(-y))) ** 2
                exact = mp.sqrt(square)
                assert exact <= value <= exact * (1 + 1e-6) + 1e-300


_OPS = st.lists(st.sampled_from(["square", "convolve", "coarsen", "add", "piece", "truncate"]),
                min_size=1, max_size=8)


@pytest.mark.slow
@given(ops=_OPS, kind=st.sampled_from(["upper", "lower"]), seed=st.integers(0, 2**16),
       noise=st.sampled_from([0.0, 1e-12, 1e-8]))
@settings(max_examples=60, deadline=None)
def test_l2_never_exceeds_l1_through_the_operations(ops, kind, seed, noise):
    rng = np.random.default_rng(seed)
    m, _ = _measure(rng, int(rng.integers(5, 60)), kind=kind, lam=0.7, h=2.0**-6, noise=noise)
    other, _ = _measure(rng, int(rng.integers(5, 60)), kind=kind, lam=0.7, h=2.0**-6, noise=noise)
    for op in ops:
        if op == "square":
            m = fft.convolve(m, m)
        elif op == "convolve":
            m = fft.convolve(m, other) if other.h == m.h else m
        elif op == "coarsen":
            m = coarsen.coarsen(m)
        elif op == "add" and other.h == m.h:
            m = add(m, other)
        elif op == "piece" and len(m.t) > 4:
            m = piece(m, 1, len(m.t) - 1)
        elif op == "truncate":
            m = truncate.truncate(m, log_inf_budget=m.log_z - 8.0, log_rho_budget=-30.0, multiplicity=1)
        m = renormalise(m.copy(), m) if op == "piece" else m
        assert m.err2 <= m.err
        assert m.l2 <= m.err


@pytest.mark.parametrize("kind", ["upper", "lower"])
def test_the_l2_route_only_tightens_the_profile(kind):
    rng = np.random.default_rng(13)
    m, _ = _measure(rng, 300, kind=kind, lam=0.8, h=2.0**-7, k0=-50, noise=0.0)
    c = fft.convolve(fft.convolve(m, m), m)
    assert c.err2 < c.err
    xs = np.linspace(0.0, 2.0, 41)
    with_l2 = bounds.Profile(single(c)).at(xs)
    without = bounds.Profile(single(replace(c, err2=math.inf))).at(xs)
    if kind == "upper":
        assert np.all(with_l2 <= without)
    else:
        assert np.all(with_l2 >= without)


@pytest.mark.slow
@pytest.mark.parametrize("same", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_the_largest_atoms_split_off_before_the_fft(monkeypatch, same):
    # measures that are nearly one atom (the first squarings of a subsampled step): only the rests
    # go through the FFT, whose round-off is then relative to their small norms
    rng = np.random.default_rng(21)
    a = rng.random(300) ** 3 * 1e-3
    a[120] = 1.0
    a /= a.sum()
    b = a if same else rng.random(250) ** 3 * 1e-3
    if not same:
        b[7] = 0.5
        b /= b.sum()
    n = len(a) + len(b) - 1
    n_fft = fft.fast_length(n)
    a1, b1 = float(np.abs(a).sum()), float(np.abs(b).sum())
    a2, b2 = float(np.sqrt((a * a).sum())), float(np.sqrt((b * b).sum()))
    plain1 = fft._fft_error_l1(n_fft, a2, b2, a1, b1)
    plain2 = fft._fft_error_l2(n_fft, a2 * (1 + 1e-12), b2 * (1 + 1e-12), a1, b1)
    out = fft._split_convolve(a, None if same else b, n, n_fft, a1, a2 * (1 + 1e-12), b1, b2 * (1 + 1e-12), plain1,
                              plain2, 1.0)
    assert out is not None
    c, l1, l2 = out
    assert l1 * 10 < plain1 and l2 * 10 < plain2
    exact = _exact_convolution([F(float(x)) for x in a], [F(float(x)) for x in b])
    err1, err2 = _norms([F(float(x)) - y for x, y in zip(c, exact, strict=True)])
    assert err1 <= l1 and err2 <= l2
    # convolve takes the split (for either kind: the gain is far above 16) and carries its bounds
    monkeypatch.setattr(fft, "_DIRECT_CONVOLUTION_BELOW", 0)
    for kind in ("upper", "lower"):
        ma = Tilted(kind, 1.0, 2.0**-8, 0, a, 0.0, err=0.0, err2=0.0)
        mb = ma if same else Tilted(kind, 1.0, 2.0**-8, 0, b, 0.0, err=0.0, err2=0.0)
        product = fft.convolve(ma, mb)
        total = float(c.sum())
        assert np.array_equal(product.t, c / total)
        assert product.err <= l1 / total + 3e-16 and product.err2 <= l2 / total + 3e-16


def test_no_split_where_it_does_not_pay():
    # a spread-out measure: splitting one atom off barely changes the norms, far from the gain of
    # 16 a lower measure's product asks for
    rng = np.random.default_rng(22)
    a = rng.random(400) + 0.5
    a /= a.sum()
    n = 2 * len(a) - 1
    n_fft = fft.fast_length(n)
    a1, a2 = float(np.abs(a).sum()), float(np.sqrt((a * a).sum()))
    plain1 = fft._fft_error_l1(n_fft, a2, a2, a1, a1)
    plain2 = fft._fft_error_l2(n_fft, a2, a2, a1, a1)
    assert fft._split_convolve(a, None, n, n_fft, a1, a2, a1, a2, plain1, plain2, 16.0) is None
    assert fft._split_convolve(a, None, n, n_fft, a1, a2, a1, a2, plain1, plain2, 1.0) is not None
