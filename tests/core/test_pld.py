"""The PLD accountant: certified bounds against exact values, mpmath and the peer libraries.

Exact references used here:
  * mpmath (50 digits) for the normal tails, interval masses and one-step privacy profiles;
  * the mu-GDP formula (DRS Cor. 2.13, dpcalc.core.gdp) for the Gaussian mechanism without
    subsampling, whose T-fold composition is exactly (sqrt(T)/sigma)-GDP;
  * the public reference values of docs/reference-values.md (design card, ADADP, MNIST);
  * dp_accounting 0.6.0 (PLD, pessimistic with connect-the-dots at its default interval 1e-4)
    and prv_accountant 0.2.0 as independent oracles.
The certified interval must contain every exact value; it must be at most 1e-3 relative wide
by default; the peers' pessimistic figures must not be below our lower bound.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core import gdp
from dpcalc.core.phases import Phase
from dpcalc.core.pld import (
    DEFAULT_ACCURACY,
    bounds,
    discretise,
    fft,
    layers,
    normal,
    tight_delta,
    tight_epsilon,
    upper_epsilon,
    work,
)
from dpcalc.core.pld.api import cached
from dpcalc.core.pld.fallback import closed_forms
from dpcalc.core.pld.measure import Tilted
from dpcalc.core.pld.pairs import GaussianPair
from dpcalc.core.validation import ParameterError

U = 2.0**-53


@pytest.fixture(autouse=True)
def fifty_digits():
    """mpmath at 50 digits for every test here (other modules may change the global setting)."""
    with mp.workdps(50):
        yield


def gaussian(p, sigma, steps):
    return Phase("gaussian", sampling_probability=p, noise_multiplier=sigma, steps=steps)


# ---------------------------------------------------------------------------------------------
# Normal tails (the error model of S2)
# ---------------------------------------------------------------------------------------------


def test_normal_tails_against_mpmath():
    t = np.concatenate([np.linspace(-8.0, 37.0, 1801), np.random.default_rng(7).uniform(-10.0, 37.0, 400)])
    tail = normal.upper_tail(t)
    log_tail = normal.log_upper_tail(t)
    for ti, vi, li in zip(t, tail, log_tail):
        exact = mp.ncdf(-mp.mpf(ti))
        # relative error of the tail beyond the u t^2/2 of exp(-t^2/2) (module docstring)
        assert abs((mp.mpf(vi) - exact) / exact) <= normal.NORMAL_RELATIVE_ERROR * (1 + max(ti, 0) ** 2 / 2)
        assert abs(mp.mpf(li) - mp.log(exact)) <= 32 * U * max(1.0, abs(float(mp.log(exact))))


def test_mills_ratio_against_mpmath():
    # Taylor series about anchors below 4, continued fraction above: a few ulps everywhere.
    t = np.concatenate([np.linspace(1.5, 8.0, 2001), np.linspace(8.0, 60.0, 200)])
    values = normal.mills_ratio(t)
    worst = max(
        abs(float((mp.mpf(v) - mp.ncdf(-mp.mpf(x)) / mp.npdf(mp.mpf(x))) / (mp.ncdf(-mp.mpf(x)) / mp.npdf(mp.mpf(x)))))
        for x, v in zip(t, values)
    )
    assert worst <= 16 * U


def test_interval_masses_lie_within_their_bounds():
    rng = np.random.default_rng(3)
    low = rng.uniform(-40.0, 40.0, 600)
    high = low + 10.0 ** rng.uniform(-7.0, 1.0, 600)
    log_mass, rel = normal.log_interval_mass(low, high)
    for a, b, lm, r in zip(low, high, log_mass, rel):
        if a + b > 0:
            exact = mp.ncdf(-mp.mpf(a)) - mp.ncdf(-mp.mpf(b))
        else:
            exact = mp.ncdf(mp.mpf(b)) - mp.ncdf(mp.mpf(a))
        if exact == 0:
            continue
        assert abs(mp.exp(mp.mpf(lm)) - exact) <= r * exact * (1 + 1e-12) or r >= 1


# ---------------------------------------------------------------------------------------------
# Dominating pairs: cell masses and one-step profiles against mpmath
# ---------------------------------------------------------------------------------------------


def _mp_x(loss, p, scale):
    """mpmath inverse of log(1 - p + p exp((y - 1/2)/scale)) = loss."""
    if p == 1:
        return mp.mpf(0.5) + scale * loss
    inner = (mp.exp(loss) - 1 + p) / p
    return mp.mpf(0.5) + scale * mp.log(inner) if inner > 0 else -mp.inf


def _gaussian_masses(p, sigma, direction, lo, hi):
    """Exact (P, Q) masses of the loss interval [lo, hi) for the subsampled Gaussian pair."""
    p, s = mp.mpf(p), mp.mpf(sigma)
    if direction == "remove":
        xa, xb = _mp_x(mp.mpf(lo), p, s * s), _mp_x(mp.mpf(hi), p, s * s)
    else:
        xa, xb = _mp_x(-mp.mpf(hi), p, s * s), _mp_x(-mp.mpf(lo), p, s * s)
    m0 = mp.ncdf(xb / s) - mp.ncdf(xa / s)
    m1 = mp.ncdf((xb - 1) / s) - mp.ncdf((xa - 1) / s)
    mix = (1 - p) * m0 + p * m1
    return (mix, m0) if direction == "remove" else (m0, mix)


@pytest.mark.parametrize("p, sigma", [(0.004, 1.1), (0.3, 0.7), (1.0, 2.0)])
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_gaussian_cell_masses_contain_the_exact_ones(p, sigma, direction):
    pair = GaussianPair(p, sigma, direction)
    lo_s, hi_s = pair.support
    centre = 0.0 if direction == "remove" else -0.0
    edges = np.sort(np.concatenate([centre + np.linspace(-0.02, 0.05, 25), np.linspace(0.05, 3.0, 12)]))
    if math.isfinite(lo_s):
        edges = edges[edges > lo_s - 0.01]
    if math.isfinite(hi_s):
        edges = edges[edges < hi_s + 0.01]
    cells = pair.cell_masses(edges)
    for i in range(len(edges) - 1):
        exact_p, exact_q = _gaussian_masses(p, sigma, direction, edges[i], edges[i + 1])
        for log_value, rel, exact in ((cells.log_p[i], cells.rel_p[i], exact_p), (cells.log_q[i], cells.rel_q[i], exact_q)):
            value = mp.exp(mp.mpf(log_value)) if math.isfinite(log_value) else mp.mpf(0)
            assert exact <= value * (1 + mp.mpf(rel)) * (1 + mp.mpf(1e-13)) + mp.mpf(1e-300)
            if rel < 1:
                assert exact >= value * (1 - mp.mpf(rel)) * (1 - mp.mpf(1e-13))


def _exact_one_step_delta(p, sigma, eps):
    """max over directions of the one-step hockey-stick divergence, mpmath (DRS / Balle-Wang form)."""
    p, s, e = mp.mpf(p), mp.mpf(sigma), mp.mpf(eps)
    x = _mp_x(e, p, s * s)  # remove: L > eps <=> X > x
    remove = (1 - p) * mp.ncdf(-x / s) + p * mp.ncdf(-(x - 1) / s) - mp.exp(e) * mp.ncdf(-x / s)
    add = mp.mpf(0)
    if p == 1 or mp.exp(-e) > 1 - p:
        y = _mp_x(-e, p, s * s)  # add: L' > eps <=> X < y
        add = mp.ncdf(y / s) - mp.exp(e) * ((1 - p) * mp.ncdf(y / s) + p * mp.ncdf((y - 1) / s))
    return max(remove, add)


def _exact_one_step_epsilon(p, sigma, delta):
    f = lambda e: _exact_one_step_delta(p, sigma, e) - delta  # noqa: E731
    if f(0) <= 0:
        return 0.0
    hi = mp.mpf(1)
    while f(hi) > 0:
        hi *= 2
    return float(mp.findroot(f, (mp.mpf(0), hi), solver="bisect", tol=mp.mpf(10) ** -30))


@pytest.mark.parametrize(
    "p, sigma, delta",
    [(0.004, 1.1, 1e-5), (0.01, 0.9, 1e-12), (0.3, 0.7, 1e-5), (1.0, 1.0, 1e-5), (1e-3, 0.5, 1e-12), (0.05, 2.0, 1e-15)],
)
def test_one_step_epsilon_bracketed_by_exact_value(p, sigma, delta):
    result = tight_epsilon([gaussian(p, sigma, 1)], delta)
    exact = _exact_one_step_epsilon(p, sigma, delta)
    assert result.epsilon_lower <= exact <= result.epsilon_upper
    assert result.epsilon == result.epsilon_upper


def test_one_step_discretised_profiles_bracket_the_exact_one():
    pair = GaussianPair(0.004, 1.1, "remove")
    h = 2.0**-13
    k_lo = math.floor(math.log1p(-0.004) / h) - 1
    upper, lower = discretise.discretise_step(pair, h, k_lo, int(2.5 / h), 9.0, 1)
    for eps in (0.0, 0.001, 0.01, 0.1, 0.5, 1.0):
        exact = _exact_one_step_delta(0.004, 1.1, eps)  # the remove direction dominates here
        assert bounds.delta_bound(layers.single(lower), eps) <= exact <= bounds.delta_bound(layers.single(upper), eps)


def test_discretised_step_masses():
    # The upper measure keeps at least the whole mass; the lower at most; neither contains nan.
    pair = GaussianPair(0.004, 1.1, "remove")
    for exponent in (11, 13, 15):
        h = 2.0**-exponent
        k_lo = math.floor(math.log1p(-0.004) / h) - 1
        upper, lower = discretise.discretise_step(pair, h, k_lo, int(1.0 / h), 1.0, 1)
        for measure in (upper, lower):
            assert np.isfinite(measure.t).all()
        total = lambda m: float((m.t * np.exp(m.log_z - m.lam * m.losses)).sum())  # noqa: E731
        assert total(upper) + upper.inf_mass >= 1.0 - 1e-12
        assert total(lower) <= 1.0 + 1e-12


# ---------------------------------------------------------------------------------------------
# Exact compositions: the Gaussian mechanism without subsampling is (sqrt(T)/sigma)-GDP
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sigma, steps, delta",
    [(1.0, 1, 1e-5), (0.5, 10, 1e-5), (5.0, 1000, 1e-2), (20.0, 10**6, 1e-5), (2.0, 100, 1e-12)],
)
def test_full_batch_gaussian_matches_gdp(sigma, steps, delta):
    exact = gdp.epsilon_for_delta(delta, math.sqrt(steps) / sigma)
    result = tight_epsilon([gaussian(1.0, sigma, steps)], delta)
    assert result.epsilon_lower <= exact <= result.epsilon_upper
    assert result.epsilon_upper - result.epsilon_lower <= DEFAULT_ACCURACY * result.epsilon_upper


@pytest.mark.parametrize("delta", [1e-15, 1e-30, 1e-100])
def test_small_delta_is_certified(delta):
    # FFT round-off is relative to the tilted vector, not to delta: 1e-100 works like 1e-5.
    exact = gdp.epsilon_for_delta(delta, math.sqrt(50) / 2.0)
    result = tight_epsilon([gaussian(1.0, 2.0, 50)], delta)
    assert result.epsilon_lower <= exact <= result.epsilon_upper
    assert result.warnings == ()


def test_heterogeneous_full_batch_phases_match_gdp():
    phases = [gaussian(1.0, 3.0, 40), gaussian(1.0, 6.0, 300), gaussian(1.0, 1.5, 7)]
    mu = math.sqrt(40 / 9 + 300 / 36 + 7 / 2.25)
    exact = gdp.epsilon_for_delta(1e-6, mu)
    result = tight_epsilon(phases, 1e-6)
    assert result.epsilon_lower <= exact <= result.epsilon_upper


@settings(max_examples=12, deadline=None)
@given(
    sigma=st.floats(0.5, 20.0),
    steps=st.integers(1, 100_000),
    log_delta=st.floats(-12.0, -2.0),
)
def test_property_full_batch_gaussian_bracketed(sigma, steps, log_delta):
    delta = 10.0**log_delta
    exact = gdp.epsilon_for_delta(delta, math.sqrt(steps) / sigma)
    result = tight_epsilon([gaussian(1.0, sigma, steps)], delta, accuracy=1e-2)
    assert result.epsilon_lower <= exact * (1 + 1e-12) + 1e-15
    assert exact <= result.epsilon_upper * (1 + 1e-12) + 1e-15


# ---------------------------------------------------------------------------------------------
# Public reference values (docs/reference-values.md, delta = 1e-5) and the default width
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "p, sigma, steps, reference",
    [
        (0.004, 1.1, 10_000, 1.8410),  # design card, docs/reference-values.md: 1.8410 (+-0.001)
        (0.01, 0.9, 1800, 3.0636),  # ADADP seed
        (256 / 60000, 1.1, 14062, 2.3817),  # MNIST DP-SGD, 60 epochs
    ],
)
def test_spec_reference_values(p, sigma, steps, reference):
    result = tight_epsilon([gaussian(p, sigma, steps)], 1e-5)
    assert result.epsilon_upper == pytest.approx(reference, abs=1e-3)
    assert result.epsilon_lower <= result.epsilon_upper
    # the default accuracy: the certified interval is at most 0.1% of epsilon wide
    assert result.epsilon_upper - result.epsilon_lower <= 1e-3 * result.epsilon_upper
    assert result.warnings == ()
    assert result.grid_step > 0 and result.grid_size > 0 and result.binding in ("remove", "add")


def test_accuracy_option_narrows_the_interval():
    phases = [gaussian(0.004, 1.1, 10_000)]
    coarse = tight_epsilon(phases, 1e-5, accuracy=1e-2)
    fine = tight_epsilon(phases, 1e-5, accuracy=1e-4)
    assert fine.epsilon_upper - fine.epsilon_lower <= 1e-4 * fine.epsilon_upper
    assert coarse.epsilon_upper - coarse.epsilon_lower <= 1e-2 * coarse.epsilon_upper
    # intervals from different grids overlap: both contain the true epsilon
    assert coarse.epsilon_lower <= fine.epsilon_upper and fine.epsilon_lower <= coarse.epsilon_upper


@pytest.mark.parametrize("p, sigma, steps, accuracy", [
    (0.004, 1.1, 10_000, 1.6e-2), (0.004, 1.1, 10_000, 4e-3), (0.004, 1.1, 10_000, 1e-3),
    (0.01, 0.8, 1_000, 1.6e-2), (0.1, 2.0, 100, 4e-3), (1.0, 3.0, 50, 1.6e-2),
])
def test_upper_epsilon_is_the_first_grids_upper_bound(p, sigma, steps, accuracy):
    """Where the first grid meets the accuracy (every case here), upper_epsilon is
    tight_epsilon's upper bound, bit for bit, and its grid step."""
    phases = [gaussian(p, sigma, steps)]
    upper, step = upper_epsilon(phases, 1e-5, accuracy=accuracy)
    full = tight_epsilon(phases, 1e-5, accuracy=accuracy)
    assert full.attempts == 1
    assert (upper, step) == (full.epsilon_upper, full.grid_step)
    assert upper >= tight_epsilon(phases, 1e-5, accuracy=1e-4).epsilon_lower


def test_upper_epsilon_is_sound_where_the_first_grid_is_too_coarse():
    """p = 0.004, sigma = 0.75: tight_epsilon refines at 1.6e-2; the first grid's bound is
    looser but still above the true epsilon."""
    phases = [gaussian(0.004, 0.75, 10_000)]
    assert tight_epsilon(phases, 1e-5, accuracy=1.6e-2).attempts > 1
    upper, _ = upper_epsilon(phases, 1e-5, accuracy=1.6e-2)
    assert upper >= tight_epsilon(phases, 1e-5).epsilon_lower


def test_upper_epsilon_outside_the_grid_is_the_closed_form():
    phases = [gaussian(0.004, 0.01, 100)]
    upper, step = upper_epsilon(phases, 1e-5)
    assert (upper, step) == (tight_epsilon(phases, 1e-5).epsilon_upper, 0.0)


def test_upper_epsilon_past_the_work_limit_is_the_closed_form(monkeypatch):

    monkeypatch.setattr(work, "WORK_LIMIT", 0.0)
    phases = [gaussian(0.004, 1.3, 1000)]
    upper, step = upper_epsilon(phases, 1e-5)
    closed = closed_forms(tuple(phases), delta=1e-5, epsilon=None, accuracy=DEFAULT_ACCURACY, reason="")
    assert (upper, step) == (closed.epsilon_upper, 0.0)


# ---------------------------------------------------------------------------------------------
# epsilon -> delta
# ---------------------------------------------------------------------------------------------


def test_delta_mode_is_consistent_with_epsilon_mode():
    phases = [gaussian(0.004, 1.1, 10_000)]
    by_delta = tight_epsilon(phases, 1e-5)
    # at epsilon_upper the true delta is at most 1e-5; at epsilon_lower at least 1e-5
    assert tight_delta(phases, by_delta.epsilon_upper).delta_lower <= 1e-5
    assert tight_delta(phases, by_delta.epsilon_lower).delta_upper >= 1e-5
    result = tight_delta(phases, 2.0)
    assert result.epsilon == 2.0 and result.delta == result.delta_upper
    assert result.delta_lower <= result.delta_upper <= (1 + 1e-3) * result.delta_lower + 1e-300


def test_delta_mode_full_batch_matches_gdp():
    mu = math.sqrt(200) / 4.0
    exact = gdp.delta_for_epsilon(3.0, mu)
    result = tight_delta([gaussian(1.0, 4.0, 200)], 3.0)
    assert result.delta_lower <= exact <= result.delta_upper


# ---------------------------------------------------------------------------------------------
# Laplace
# ---------------------------------------------------------------------------------------------


def _laplace_delta(scale, eps):
    """One Laplace step (p = 1): delta(eps) = P(L > eps) - e^eps Q(L > eps), mpmath."""
    b, e = mp.mpf(scale), mp.mpf(eps)
    if e >= 1 / b:
        return mp.mpf(0)
    # L = (|x - 1| - |x|)/b under P = Lap(0, b) for the pair (Lap(0, b), Lap(1, b)): L > eps on x < x0
    x0 = (1 - b * e) / 2
    p_tail = mp.mpf(1) / 2 + (1 - mp.exp(-x0 / b)) / 2  # P(X < x0), x0 in (0, 1/2]
    q_tail = mp.exp((x0 - 1) / b) / 2  # Q(X < x0) = P(Lap(1, b) < x0)
    return p_tail - mp.exp(e) * q_tail


@pytest.mark.parametrize("scale, delta", [(2.0, 1e-3), (0.5, 1e-5), (10.0, 0.05)])
def test_one_laplace_step_bracketed(scale, delta):
    f = lambda e: _laplace_delta(scale, e) - delta  # noqa: E731
    exact = 0.0 if f(0) <= 0 else float(mp.findroot(f, (mp.mpf(0), mp.mpf(1) / scale), solver="bisect", verify=False))
    result = tight_epsilon([Phase("laplace", scale=scale, steps=1)], delta)
    assert result.epsilon_lower <= exact + 1e-12 and exact <= result.epsilon_upper + 1e-12


def test_laplace_composition_against_dp_accounting():
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    result = tight_epsilon([Phase("laplace", scale=10.0, steps=50)], 1e-6)
    reference = pld_lib.from_laplace_mechanism(10.0, value_discretization_interval=1e-4).self_compose(50)
    pessimistic = reference.get_epsilon_for_delta(1e-6)
    assert result.epsilon_lower <= pessimistic
    assert result.epsilon_upper <= pessimistic * 1.002


def test_subsampled_laplace_is_bounded():
    result = tight_epsilon([Phase("laplace", sampling_probability=0.05, scale=1.0, steps=500)], 1e-5)
    # never above basic composition of the subsampled pure-DP guarantee log(1 + p (e^(1/b) - 1))
    assert 0 < result.epsilon_lower <= result.epsilon_upper <= 500 * math.log1p(0.05 * math.expm1(1.0))


# ---------------------------------------------------------------------------------------------
# Peers
# ---------------------------------------------------------------------------------------------


def test_design_card_against_dp_accounting():
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    result = tight_epsilon([gaussian(0.004, 1.1, 10_000)], 1e-5)
    base = pld_lib.from_gaussian_mechanism(1.1, sampling_prob=0.004)  # default interval 1e-4
    pessimistic = base.self_compose(10_000).get_epsilon_for_delta(1e-5)
    assert result.epsilon_lower <= pessimistic
    assert abs(result.epsilon_upper / pessimistic - 1) <= 2e-3  # "within 0.2%"


def test_design_card_against_prv_accountant():
    from prv_accountant import PRVAccountant
    from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism

    accountant = PRVAccountant(
        prvs=[PoissonSubsampledGaussianMechanism(noise_multiplier=1.1, sampling_probability=0.004)],
        max_self_compositions=[10_000], eps_error=0.01, delta_error=1e-10,
    )
    low, _, high = accountant.compute_epsilon(delta=1e-5, num_self_compositions=[10_000])
    result = tight_epsilon([gaussian(0.004, 1.1, 10_000)], 1e-5)
    assert result.epsilon_upper >= low and result.epsilon_lower <= high
    # an interval at least ten times narrower than the peer's
    assert (result.epsilon_upper - result.epsilon_lower) * 10 <= high - low


def test_heterogeneous_phases_against_dp_accounting():
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    phases = [gaussian(0.01, 2.0, 500), gaussian(0.01, 0.9, 1800)]
    result = tight_epsilon(phases, 1e-5)
    first = pld_lib.from_gaussian_mechanism(2.0, sampling_prob=0.01).self_compose(500)
    second = pld_lib.from_gaussian_mechanism(0.9, sampling_prob=0.01).self_compose(1800)
    pessimistic = first.compose(second).get_epsilon_for_delta(1e-5)
    assert result.epsilon_lower <= pessimistic
    assert abs(result.epsilon_upper / pessimistic - 1) <= 2e-3
    # composing a phase can only cost privacy
    assert result.epsilon_lower > tight_epsilon(phases[1:], 1e-5).epsilon_upper


def test_subsampled_laplace_against_dp_accounting():
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    result = tight_epsilon([Phase("laplace", sampling_probability=0.1, scale=2.0, steps=200)], 1e-6)
    reference = pld_lib.from_laplace_mechanism(2.0, sampling_prob=0.1).self_compose(200)
    pessimistic = reference.get_epsilon_for_delta(1e-6)
    assert result.epsilon_lower <= pessimistic
    assert result.epsilon_upper <= pessimistic * 1.002


SWEEP = [
    (p, sigma, steps, delta)
    for p in (1e-5, 1e-3, 0.05, 0.5, 1.0)
    for sigma in (0.5, 1.0, 4.0, 20.0)
    for steps in (1, 10, 1000, 100_000)
    for delta in (1e-2, 1e-5, 1e-12)
]


@pytest.mark.slow
@pytest.mark.parametrize("p, sigma, steps, delta", SWEEP)
def test_sweep(p, sigma, steps, delta):
    """Exact values where they exist, RDP always, the peers where they are reliable.

    dp_accounting's estimates are themselves off at small delta and long runs (its tail
    truncation): with p = 1, where the exact value is the mu-GDP one, its pessimistic estimate
    at sigma = 20, T = 1e5, delta = 1e-12 is 231.01 against the exact 235.398 (ours:
    [235.3925, 235.4426]), and its optimistic one at sigma = 0.5, T = 1000, delta = 1e-2 is
    2147.08 against the exact 2146.149 (ours: [2146.106, 2146.688]). So at delta = 1e-12 the
    peers are not used, and elsewhere they are compared within 0.2%.
    """
    from dp_accounting import dp_event, rdp
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    result = tight_epsilon([gaussian(p, sigma, steps)], delta)
    assert 0.0 <= result.epsilon_lower <= result.epsilon_upper
    if result.epsilon_upper - result.epsilon_lower > DEFAULT_ACCURACY * result.epsilon_upper:
        assert result.warnings  # never a silent wide interval
    if p == 1.0:
        exact = gdp.epsilon_for_delta(delta, math.sqrt(steps) / sigma)
        assert result.epsilon_lower <= exact <= result.epsilon_upper
    if steps == 1:
        exact = _exact_one_step_epsilon(p, sigma, delta)
        assert result.epsilon_lower <= exact <= result.epsilon_upper
    accountant = rdp.RdpAccountant()
    accountant.compose(dp_event.PoissonSampledDpEvent(p, dp_event.GaussianDpEvent(sigma)), steps)
    assert result.epsilon_lower <= accountant.get_epsilon(delta) * (1 + 1e-9)  # RDP is an upper bound
    # dp_accounting's PLD needs several GiB (FFTs of 1e8 points and more) for p >= 0.5 at
    # T = 1e5: measured 14 GiB peak on this machine. Those cases are compared with RDP and, at
    # p = 1, with the exact value above.
    if delta >= 1e-5 and not (p >= 0.5 and steps >= 10**5):
        pessimistic = pld_lib.from_gaussian_mechanism(sigma, sampling_prob=p).self_compose(steps)
        optimistic = pld_lib.from_gaussian_mechanism(
            sigma, sampling_prob=p, pessimistic_estimate=False, use_connect_dots=False
        ).self_compose(steps)
        assert result.epsilon_lower <= pessimistic.get_epsilon_for_delta(delta) * 1.002 + 1e-12
        assert result.epsilon_upper >= optimistic.get_epsilon_for_delta(delta) * 0.998 - 2e-4


@pytest.mark.slow
@pytest.mark.parametrize("steps", [10**6, 10**7])
def test_long_runs(steps):
    result = tight_epsilon([gaussian(0.004, 1.1, steps)], 1e-5)
    assert result.epsilon_upper - result.epsilon_lower <= 1e-3 * result.epsilon_upper
    rdp_like = tight_epsilon([gaussian(0.004, 1.1, steps)], 1e-5, accuracy=1e-2)
    assert rdp_like.epsilon_lower <= result.epsilon_upper and result.epsilon_lower <= rdp_like.epsilon_upper


# ---------------------------------------------------------------------------------------------
# Floating point (S5): the FFT error bound holds with room to spare
# ---------------------------------------------------------------------------------------------


def test_fft_convolution_error_is_within_the_bound():
    rng = np.random.default_rng(11)
    for n in (3000, 6000):
        # a smooth bump over sixteen orders of magnitude, like a tilted distribution
        x = np.exp(-0.5 * ((np.arange(n) - n / 3) / (n / 12)) ** 2) * (1 + 0.1 * rng.random(n))
        a = Tilted("upper", 1.0, 1e-3, 0, x / x.sum(), 0.0)
        b = Tilted("upper", 1.0, 1e-3, 0, x[::-1] / x.sum(), 0.0)
        c = fft.convolve(a, b)
        exact = np.convolve(a.t.astype(np.longdouble), b.t.astype(np.longdouble))
        exact = exact / exact.sum()
        measured = float(np.abs(c.t - exact).sum())
        assert measured <= c.err / 100


# ---------------------------------------------------------------------------------------------
# Input checks
# ---------------------------------------------------------------------------------------------


def test_parameter_errors():
    phases = [gaussian(0.004, 1.1, 10)]
    with pytest.raises(ParameterError, match="accuracy must be in"):
        tight_epsilon(phases, 1e-5, accuracy=0.0)
    with pytest.raises(ParameterError, match="delta must be in"):
        tight_epsilon(phases, 1.0)
    with pytest.raises(ParameterError, match="epsilon must be in"):
        tight_delta(phases, -1.0)
    with pytest.raises(ValueError, match="at least one phase"):
        tight_epsilon([], 1e-5)


def test_epsilon_zero_when_delta_exceeds_the_total_variation():
    # one step at p = 1e-5 has total variation far below 0.01: epsilon is exactly 0
    result = tight_epsilon([gaussian(1e-5, 1.0, 1)], 1e-2)
    assert result.epsilon_upper == 0.0 == result.epsilon_lower


@pytest.mark.parametrize("p, sigma, steps", [(0.004, 0.5, 10_000), (0.001, 0.8, 100_000)])
def test_default_accuracy_is_met_at_small_noise(p, sigma, steps):
    """Regression: with one step's discretisation limited to 2^17 bins, these stopped at a
    relative width of 2.4e-3 (lower bound 0.25-0.6% low, with a warning); about 2 s each."""
    result = tight_epsilon([Phase("gaussian", p, sigma, None, steps)], 1e-5)
    assert result.warnings == ()
    assert result.epsilon_upper - result.epsilon_lower <= DEFAULT_ACCURACY * result.epsilon_upper


# Where the default accuracy is not met within the size and time limits (measured on a grid of
# p in 1e-4..1, sigma in 0.5..5, T in 1..1e6: these 6 of 100), the wider certified interval is
# reported with a warning. Recorded so that a change that fixes or breaks one of them is seen.
HEAVY_TAILS = [(1e-4, 0.5, 10**6), (1e-4, 0.8, 10**4), (1e-4, 0.8, 10**6), (1e-4, 2.0, 10**6), (1e-4, 5.0, 10**6),
               (1e-3, 0.5, 10**6)]


@pytest.mark.slow
@pytest.mark.parametrize("p, sigma, steps", HEAVY_TAILS)
def test_heavy_tails_say_when_the_interval_is_wider_than_asked(p, sigma, steps):
    result = tight_epsilon([Phase("gaussian", p, sigma, None, steps)], 1e-5)
    width = result.epsilon_upper - result.epsilon_lower
    assert 0.0 <= result.epsilon_lower <= result.epsilon_upper < math.inf
    assert (width > DEFAULT_ACCURACY * result.epsilon_upper) == bool(result.warnings)
    if result.warnings:
        assert "wider" in result.warnings[0] or "more than the requested accuracy" in result.warnings[0]


# ---------------------------------------------------------------------------------------------
# Reproducibility: a count of work, never the clock (issue: the same input, the same answer)
# ---------------------------------------------------------------------------------------------


def test_the_accountant_never_reads_the_clock(monkeypatch):
    import time


    def no_clock():
        raise AssertionError("the PLD accountant read the clock")

    for name in ("time", "monotonic", "perf_counter", "process_time"):
        monkeypatch.setattr(time, name, no_clock)
    cached.cache_clear()
    result = tight_epsilon([gaussian(0.004, 1.1, 10_000)], 1e-5)
    assert 1.8404 < result.epsilon_lower <= result.epsilon_upper < 1.8416


def test_the_work_limit_is_a_count_and_its_warning_names_it(monkeypatch):

    phases = [gaussian(0.004, 1.1, 10_000)]
    cached.cache_clear()
    with work.limited(math.inf) as meter:
        free = tight_epsilon(phases, 1e-5)
    # the design card's work, in bin operations: a property of the input, not of the machine
    assert 1e6 < meter.used < 1e8 and meter.used < work.WORK_LIMIT
    monkeypatch.setattr(work, "WORK_LIMIT", meter.used / 2)
    cached.cache_clear()
    limited = tight_epsilon(phases, 1e-5)
    assert any("work limit of" in warning for warning in limited.warnings)
    assert limited.epsilon_lower <= free.epsilon_lower <= free.epsilon_upper <= limited.epsilon_upper
    cached.cache_clear()
    assert tight_epsilon(phases, 1e-5) == limited  # bit for bit, whatever the load


@pytest.mark.parametrize("accuracy", [5e-6, pytest.param(1e-9, marks=pytest.mark.slow)])
def test_a_finer_accuracy_is_never_looser_than_the_default(accuracy):
    phases = [gaussian(0.004, 1.1, 10_000)]
    default = tight_epsilon(phases, 1e-5)
    finer = tight_epsilon(phases, 1e-5, accuracy=accuracy)
    assert default.epsilon_lower <= finer.epsilon_lower <= finer.epsilon_upper <= default.epsilon_upper
    assert finer.epsilon_upper - finer.epsilon_lower < 1e-4  # far tighter than the default's 5e-4
