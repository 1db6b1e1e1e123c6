"""User-level privacy (`pairs.mixture.MixturePair`) and shuffled batches (`pairs.shuffle.MaxPair`
below, one unsubsampled Gaussian an epoch above) in the PLD accountant.

Exact references (mpmath, 50 digits from conftest.py):
  * user level, k examples per user, Poisson rate p, noise s (units of C): the pair
    P = sum_j Bin(k, p)(j) N(j, s^2) against Q = N(0, s^2) (Ganesh 2024, arXiv 2401.10294); its
    loss and the point where the loss reaches a value by mp.findroot on the loss itself; one step's
    hockey-stick divergence in both orders by mp.quad of the densities;
  * a shuffled epoch of t batches: the law of the largest of t noisy batch sums, one of them
    shifted by the sensitivity (Chua et al., ICML 2024, arXiv 2403.17673): densities
    t phi(z) Phi(z)^(t-1) and phi(z - a) Phi(z)^(t-1) + (t-1) Phi(z - a) phi(z) Phi(z)^(t-2), a = 1/s;
    its hockey-stick divergence by mp.quad, split where the integrand changes sign;
  * the upper bound of E epochs: exactly (sqrt(E)/s)-GDP (Dong, Roth, Su 2022, Cor. 3.3).
"""

from __future__ import annotations

import math
import os

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core import gdp
from dpcalc.core.phases import Phase
from dpcalc.core.pld import tight_delta, tight_epsilon
from dpcalc.core.pld.pairs import GaussianPair
from dpcalc.core.pld.pairs.mixture import MixturePair
from dpcalc.core.pld.pairs.shuffle import MaxPair


def user(p: float, sigma: float, steps: int, k: int) -> Phase:
    return Phase("gaussian", p, sigma, None, steps, examples_per_user=k)


def shuffled(n: int, b: int, sigma: float, steps: int, neighbours: str = "zero-out") -> Phase:
    return Phase("gaussian", b / n, sigma, None, steps, sampling="shuffle", neighbours=neighbours,
                 epoch_steps=-(-n // b))


# ---------------------------------------------------------------------------------------------
# mpmath references
# ---------------------------------------------------------------------------------------------


def _weights(k: int, p: float) -> list:
    return [mp.binomial(k, j) * mp.mpf(p) ** j * (1 - mp.mpf(p)) ** (k - j) for j in range(k + 1)]


def _mixture_loss(x, k: int, p: float, s: float):
    s2 = mp.mpf(s) ** 2
    return mp.log(sum(w * mp.exp((2 * j * x - j * j) / (2 * s2)) for j, w in enumerate(_weights(k, p))))


def _mixture_delta(k: int, p: float, s: float, epsilon: float) -> float:
    """max over both orders of the one-step hockey-stick divergence of the user-level pair: the
    loss is increasing in x, so each order's divergence is a difference of normal tails beyond
    the point where the loss crosses +-epsilon (mp.findroot on the loss)."""
    s = mp.mpf(s)
    weights = _weights(k, p)
    e = mp.e ** mp.mpf(epsilon)
    x_up = mp.findroot(lambda x: _mixture_loss(x, k, p, s) - epsilon, mp.mpf(k))
    remove = sum(w * mp.ncdf(-(x_up - j) / s) for j, w in enumerate(weights)) - e * mp.ncdf(-x_up / s)
    add = mp.mpf(0)
    if -epsilon > mp.log(weights[0]):  # the add loss -l(x) exceeds epsilon somewhere
        x_down = mp.findroot(lambda x: _mixture_loss(x, k, p, s) + epsilon, mp.mpf(-1))
        add = mp.ncdf(x_down / s) - e * sum(w * mp.ncdf((x_down - j) / s) for j, w in enumerate(weights))
    return float(max(remove, add))


def _max_delta(t: int, s: float, epsilon: float) -> float:
    """max over both orders of the hockey-stick divergence of one shuffled epoch's largest batch sum."""
    a = 1 / mp.mpf(s)

    def q(z):
        return t * mp.npdf(z) * mp.ncdf(z) ** (t - 1)

    def p(z):
        return mp.npdf(z - a) * mp.ncdf(z) ** (t - 1) + (t - 1) * mp.ncdf(z - a) * mp.npdf(z) * mp.ncdf(z) ** (t - 2)

    e = mp.e ** mp.mpf(epsilon)
    span = [-40, -5, 0, 2, 4, a, a + 4, a + 40]

    def divergence(f):
        # the positive part of f has a kink where f changes sign: quadrature across it erred by
        # 3e-5 relative (t = 10, s = 0.7, epsilon = 0.5), so the span is split there
        scan = [mp.mpf(z) / 8 for z in range(-40 * 8, int((a + 40) * 8))]
        roots = [mp.findroot(f, (x, y), solver="anderson") for x, y in zip(scan, scan[1:]) if f(x) * f(y) < 0]
        return mp.quad(lambda z: max(f(z), 0), sorted(set(span) | set(roots)))

    remove = divergence(lambda z: p(z) - e * q(z))
    add = divergence(lambda z: q(z) - e * p(z))
    return float(max(remove, add))


# ---------------------------------------------------------------------------------------------
# The user-level pair
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_one_example_per_user_is_the_example_level_pair(direction):
    mixture, plain = MixturePair(0.004, 1.1, 1, direction), GaussianPair(0.004, 1.1, direction)
    edges = np.array([-math.inf, -2.0, -0.5, -1e-3, 0.0, 1e-3, 0.5, 3.0, 20.0, math.inf])
    a, b = mixture.cell_masses(edges), plain.cell_masses(edges)
    for mine, theirs, rel in ((a.log_p, b.log_p, a.rel_p), (a.log_q, b.log_q, a.rel_q)):
        finite = np.isfinite(theirs)
        assert np.array_equal(np.isfinite(mine), finite)
        assert np.all(np.abs(np.expm1(mine[finite] - theirs[finite])) <= rel[finite] + 1e-12)
    assert mixture.log_mgf(3.0) == pytest.approx(plain.log_mgf(3.0), rel=1e-12)
    assert mixture.moments() == pytest.approx(plain.moments(), rel=1e-10)


@pytest.mark.parametrize("k, p, sigma", [(4, 0.004, 1.1), (8, 0.01, 0.8), (2, 0.5, 2.0), (3, 1.0, 1.5)])
def test_mixture_inverse_is_within_its_bound(k, p, sigma):
    pair = MixturePair(p, sigma, k, "remove")
    low = pair.support[0]
    losses = [l for l in (-0.5, -1e-3, 0.0, 0.3, 2.0, 10.0, 80.0) if l > low]
    if math.isfinite(low):
        losses += [low + 1e-9, low + 1e-3]
    x, err = pair.inverse(np.array(losses))
    for loss, xi, ei in zip(losses, x, err):
        exact = mp.findroot(lambda y, loss=loss: _mixture_loss(y, k, p, sigma) - mp.mpf(loss), mp.mpf(float(xi)))
        assert abs(float(exact) - xi) <= ei, (loss, xi, float(exact), ei)
        assert ei <= 1e-9 * (1.0 + abs(xi)) or loss < low + 1e-6


@pytest.mark.parametrize("k, p, sigma, epsilon", [(2, 0.05, 1.0, 0.5), pytest.param(4, 0.004, 1.1, 0.05, marks=pytest.mark.slow), pytest.param(8, 0.01, 0.8, 1.0, marks=pytest.mark.slow)])
def test_one_user_level_step_brackets_the_exact_delta(k, p, sigma, epsilon):
    exact = _mixture_delta(k, p, sigma, epsilon)
    result = tight_delta([user(p, sigma, 1, k)], epsilon)
    assert result.delta_lower <= exact * (1 + 1e-9) and exact <= result.delta_upper * (1 + 1e-9)
    assert result.delta_upper <= exact * 1.01


@pytest.mark.slow  # a comparison with group privacy, not a bound: test_user_level_shuffle keeps the bounds
@pytest.mark.parametrize("k", [pytest.param(2, marks=pytest.mark.slow), pytest.param(4, marks=pytest.mark.slow), 8])
def test_user_level_beats_group_privacy_on_the_design_card(k):
    """Below the group-privacy route: an (e1, d1) example-level guarantee gives
    (k e1, k e^((k-1) e1) d1) for groups of k; the best such figure at delta 1e-5 over a grid of
    d1, taking e1 from the tight example-level accounting (tighter than the RDP epsilon that route
    usually starts from)."""
    ours = tight_epsilon([user(0.004, 1.1, 10_000, k)], 1e-5)
    group = math.inf
    for log_d1 in np.linspace(math.log(1e-5) - 12.0, math.log(1e-5 / k), 13):
        e1 = tight_epsilon([user(0.004, 1.1, 10_000, 1)], math.exp(log_d1)).epsilon_lower
        if k * math.exp((k - 1) * e1 + log_d1) <= 1e-5:
            group = min(group, k * e1)
    assert ours.epsilon_upper < group
    assert ours.epsilon_upper - ours.epsilon_lower <= 1e-3 * ours.epsilon_upper


@pytest.mark.slow
def test_user_level_grows_with_the_examples_per_user():
    """k = 1 is the example-level figure, and more examples per user cost more."""
    example = tight_epsilon([Phase("gaussian", 0.004, 1.1, None, 10_000)], 1e-5)
    results = [tight_epsilon([user(0.004, 1.1, 10_000, k)], 1e-5) for k in (1, 2, 3)]
    assert (results[0].epsilon_lower, results[0].epsilon_upper) == (example.epsilon_lower, example.epsilon_upper)
    for smaller, larger in zip(results, results[1:]):
        assert smaller.epsilon_upper < larger.epsilon_lower


# ---------------------------------------------------------------------------------------------
# Shuffled batches
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_one_batch_shuffle_is_the_gaussian(direction):
    mine, plain = MaxPair(1, 1.0, 1.3, direction), GaussianPair(1.0, 1.3, direction)
    edges = np.array([-math.inf, -3.0, -0.5, 0.0, 0.2, 1.0, 4.0, math.inf])
    a, b = mine.cell_masses(edges), plain.cell_masses(edges)
    assert np.allclose(np.exp(a.log_p), np.exp(b.log_p), rtol=1e-9, atol=1e-300)
    assert np.allclose(np.exp(a.log_q), np.exp(b.log_q), rtol=1e-9, atol=1e-300)


@pytest.mark.parametrize("t, q", [(235, 1.0), (10, 1.0), (50, 0.3)])
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_max_pair_masses_are_probabilities(t, q, direction):
    pair = MaxPair(t, q, 1.1, direction)
    edges = np.concatenate(([-math.inf], np.linspace(-4.0, 6.0, 41), [math.inf]))
    cells = pair.cell_masses(edges)
    assert math.fsum(np.exp(cells.log_p)) == pytest.approx(1.0, abs=1e-12)
    assert math.fsum(np.exp(cells.log_q)) == pytest.approx(1.0, abs=1e-12)
    assert np.all(cells.rel_p[np.isfinite(cells.log_p)] < 1e-8)


def test_max_pair_inverse_is_within_its_bound():
    pair = MaxPair(235, 1.0, 1.1, "remove")
    a = 1 / mp.mpf(1.1)

    def loss(z):
        return mp.log((mp.e ** (a * z - a * a / 2) + 234 * mp.ncdf(z - a) / mp.ncdf(z)) / 235)

    losses = np.array([-30.0, -2.0, -1e-3, 0.0, 1e-4, 0.5, 3.0, 40.0])
    z, err = pair.inverse(losses)
    for value, zi, ei in zip(losses, z, err):
        exact = mp.findroot(lambda y, value=value: loss(y) - mp.mpf(float(value)), mp.mpf(float(zi)))
        assert abs(float(exact) - zi) <= ei and ei < 1e-9 * (1 + abs(zi))


@pytest.mark.parametrize("q", [1.0, 0.3])
def test_max_pair_inverse_far_out_and_from_its_table(q):
    """Roots far below the bulk (the slope of u there is computed without cancellation) and
    roots started from the quadrature's table (`MaxPair._start`) are within their bounds, and
    the search takes a few evaluations of u, not tens (mpmath at 40 digits)."""
    pair = MaxPair(235, q, 1.1, "remove")
    pair.log_mgf(3.0)  # fills the table of log R the starting points come from
    a = 1 / mp.mpf(1.1)

    def remove_loss(z):
        ratio = (mp.e ** (a * z - a * a / 2) + 234 * mp.ncdf(z - a) / mp.ncdf(z)) / 235
        return mp.log(1 - mp.mpf(q) + mp.mpf(q) * ratio)

    losses = np.array([-1e6, -300.0, -30.0, -0.2, 0.0, 0.3, 2.0, 40.0]) if q == 1.0 else np.array([-0.3, -0.1, 0.0, 0.3, 2.0])
    calls = []
    original = MaxPair._u

    def counted(self, z):
        calls.append(len(z))
        return original(self, z)

    with mp.workdps(40), pytest.MonkeyPatch.context() as patch:
        patch.setattr(MaxPair, "_u", counted)
        z, err = pair.inverse(losses)
        patch.undo()
        assert len(calls) <= 8
        for value, zi, ei in zip(losses, z, err):
            exact = mp.findroot(lambda y, value=value: remove_loss(y) - mp.mpf(float(value)), mp.mpf(float(zi)))
            assert abs(float(exact) - zi) <= ei and ei < 1e-9 * (1 + abs(zi))


def test_max_pair_slope_far_below_the_bulk():
    """The slope of u(z) = log(t R_t(z)) (Newton's steps) against mpmath's derivative, from the
    bulk to z = -1e12, where the difference of the two Mills ratios it is made of cancels."""
    pair = MaxPair(250, 1.0, 1.1, "remove")
    a = 1 / mp.mpf(1.1)
    with mp.workdps(50):
        for z in (5.0, 0.0, -1.6, -3.0, -100.0, -1e4, -1e6, -1e12):
            _, slope, _ = pair._u(np.array([z]))
            exact = mp.diff(lambda y: mp.log(mp.e ** (a * y - a * a / 2) + 249 * mp.ncdf(y - a) / mp.ncdf(y)), mp.mpf(z))
            assert float(slope[0]) == pytest.approx(float(exact), rel=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("t, sigma, epsilon", [(10, 0.7, 0.5), pytest.param(235, 0.4, 2.0, marks=pytest.mark.slow), pytest.param(235, 1.1, 0.05, marks=pytest.mark.slow)])
def test_one_shuffled_epoch_brackets_its_attained_pair(t, sigma, epsilon):
    """One epoch: the lower bound is at most the max pair's exact delta, the upper bound at least it
    and equal to the unsubsampled Gaussian's (1/sigma-GDP) to the grid's accuracy."""
    n = 1000 * t
    result = tight_delta([shuffled(n, 1000, sigma, t)], epsilon)
    attained = _max_delta(t, sigma, epsilon)
    assert result.delta_lower <= attained * (1 + 1e-9) <= result.delta_upper * (1 + 1e-9)
    assert result.delta_lower >= attained * 0.99
    exact_gdp = gdp.delta_for_epsilon(epsilon, 1.0 / sigma)
    assert exact_gdp * (1 - 1e-9) <= result.delta_upper <= exact_gdp * 1.01


@pytest.mark.slow
def test_shuffled_epochs_upper_is_the_epoch_gaussian_and_replace_one_doubles_it():
    """E epochs begun are (sqrt(E)/sigma)-GDP above (2 sqrt(E)/sigma under replace-one); a partial
    last epoch counts as one. Below, every relation attains distance 1 (replace-one: the record
    against one contributing 0), not 2: only the record's own batch moves."""
    lowers = []
    for neighbours, shift in (("zero-out", 1.0), ("replace-one", 2.0)):
        phase = shuffled(60_000, 256, 1.1, 235 * 3 + 10, neighbours)
        result = tight_epsilon([phase], 1e-5)
        exact = gdp.epsilon_for_delta(1e-5, shift * math.sqrt(4) / 1.1)
        assert exact * (1 - 1e-9) <= result.epsilon_upper <= exact * 1.002
        assert 0.0 < result.epsilon_lower < result.epsilon_upper
        lowers.append(result.epsilon_lower)
    # the same pair, composed on the grid each run chooses: equal to the accuracy
    assert lowers[1] == pytest.approx(lowers[0], rel=1e-3)


@pytest.mark.slow
def test_shuffled_lower_bound_grows_with_epochs_and_falls_with_noise():
    e1 = tight_epsilon([shuffled(60_000, 256, 0.5, 235)], 1e-5)
    e3 = tight_epsilon([shuffled(60_000, 256, 0.5, 3 * 235)], 1e-5)
    quieter = tight_epsilon([shuffled(60_000, 256, 0.7, 3 * 235)], 1e-5)
    assert e1.epsilon_lower < e3.epsilon_lower and quieter.epsilon_lower < e3.epsilon_lower
    for result in (e1, e3, quieter):
        assert result.epsilon_lower <= result.epsilon_upper


def test_shuffle_refusals():
    with pytest.raises(ValueError, match="epoch_steps"):
        Phase("gaussian", 0.01, 1.0, None, 10, sampling="shuffle", neighbours="zero-out")
    with pytest.raises(ValueError, match="needs p = b/n"):
        Phase("gaussian", 0.01, 1.0, None, 10, sampling="shuffle", neighbours="zero-out", epoch_steps=50)
    with pytest.raises(ValueError, match="user-level"):
        Phase("gaussian", 0.01, 1.0, None, 10, sampling="shuffle", neighbours="zero-out", epoch_steps=100, examples_per_user=2)
    with pytest.raises(ValueError, match="user-level"):
        Phase("gaussian", 0.01, 1.0, None, 10, neighbours="replace-one", examples_per_user=2)
    with pytest.raises(ValueError, match="another sampling scheme"):
        tight_epsilon([shuffled(1000, 10, 1.0, 100), Phase("gaussian", 0.01, 1.0, None, 10, neighbours="zero-out")], 1e-5)
    # under add-remove an added record moves a record across every later batch boundary (issue: the
    # one-Gaussian-an-epoch figure was below what a pair of datasets attains)
    with pytest.raises(ValueError, match="shuffled batches are accounted under zero-out or replace-one"):
        Phase("gaussian", 0.01, 1.0, None, 100, sampling="shuffle", epoch_steps=100)


@pytest.mark.slow
@pytest.mark.parametrize("k, steps", [(2, 1000), pytest.param(4, 10_000, marks=pytest.mark.slow)])
def test_user_level_agrees_with_dp_accounting_mixture_of_gaussians(k, steps):
    """dp_accounting's PLD of `MixtureOfGaussiansDpEvent` (the same pair; pessimistic
    discretisation at 1e-3, a test-only oracle and a point estimate, not a certified bound): above our
    certified lower bound, and within 0.2% of our upper bound (design card, k = 4: 9.14361 against
    our [9.14065, 9.14331])."""
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.dp_event import MixtureOfGaussiansDpEvent

    weights = [float(_weights(k, 0.004)[j]) for j in range(k + 1)]
    event = dp_accounting.SelfComposedDpEvent(
        MixtureOfGaussiansDpEvent(1.1, [float(j) for j in range(k + 1)], weights), steps)
    accountant = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-3)
    accountant.compose(event)
    theirs = accountant.get_epsilon(1e-5)
    ours = tight_epsilon([user(0.004, 1.1, steps, k)], 1e-5)
    assert ours.epsilon_lower <= theirs <= ours.epsilon_upper * 1.002


# ---------------------------------------------------------------------------------------------
# Properties: the true epsilon is monotone in sigma, p and T, so each certified interval's lower
# end never exceeds the upper end of a run that is at least as revealing.
# ---------------------------------------------------------------------------------------------

DERANDOMIZE = os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.mark.slow
@settings(max_examples=6, deadline=None, derandomize=DERANDOMIZE)
@given(k=st.integers(2, 5), sigma=st.floats(0.7, 3.0), p=st.floats(1e-3, 0.05), steps=st.integers(1, 3000),
       factor=st.floats(1.05, 2.0))
def test_user_level_is_monotone(k, sigma, p, steps, factor):
    base = tight_epsilon([user(p, sigma, steps, k)], 1e-5)
    noisier = tight_epsilon([user(p, sigma * factor, steps, k)], 1e-5)
    sparser = tight_epsilon([user(p / factor, sigma, steps, k)], 1e-5)
    longer = tight_epsilon([user(p, sigma, math.ceil(steps * factor), k)], 1e-5)
    more = tight_epsilon([user(p, sigma, steps, k + 1)], 1e-5)
    for smaller in (noisier, sparser):
        assert smaller.epsilon_lower <= base.epsilon_upper
    for larger in (longer, more):
        assert base.epsilon_lower <= larger.epsilon_upper


@pytest.mark.slow
@settings(max_examples=5, deadline=None, derandomize=DERANDOMIZE)
@given(batches=st.integers(2, 300), sigma=st.floats(0.4, 2.0), epochs=st.integers(1, 4), factor=st.floats(1.05, 2.0))
def test_shuffle_bounds_are_ordered_and_monotone(batches, sigma, epochs, factor):
    n = 10 * batches
    base = tight_epsilon([shuffled(n, 10, sigma, epochs * batches)], 1e-5)
    noisier = tight_epsilon([shuffled(n, 10, sigma * factor, epochs * batches)], 1e-5)
    longer = tight_epsilon([shuffled(n, 10, sigma, (epochs + 1) * batches)], 1e-5)
    for result in (base, noisier, longer):
        assert 0.0 <= result.epsilon_lower <= result.epsilon_upper
    assert noisier.epsilon_lower <= base.epsilon_upper and noisier.epsilon_upper <= base.epsilon_upper
    assert base.epsilon_lower <= longer.epsilon_upper and base.epsilon_upper <= longer.epsilon_upper
