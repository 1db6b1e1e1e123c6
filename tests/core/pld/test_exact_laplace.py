"""The exact profile of k unsubsampled Laplace releases (dpcalc.core.pld.exact_laplace).

References, each independent of the module's evaluation:
- k = 1: the closed form delta(eps) = 1 - e^((eps - a)/2) for eps < a = 1/b.
- k = 2, 3: the composition by numerical integration at 30-50 digits, delta_k(eps) =
  E_P[delta_(k-1)(eps - L)] over one release's loss law (atoms and density, breakpoints at the
  kinks), with delta_1 in closed form for any real argument.
- k up to 8: the multinomial sum over (j uniforms, m atoms at +a) of the Irwin-Hall density,
  integrated by mpmath at 100 digits piece by piece.
- The PLD grid's certified interval (dpcalc.core.pld.accountant.account_grid) must contain
  the exact interval.
- dp_accounting 0.6.0's Laplace PLD (test-only oracle, its pessimistic discretisation at 1e-4),
  to its discretisation error.
The certified interval must contain each reference and be a few units in the last place wide.
"""

from __future__ import annotations

import math

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core.phases import Phase
from dpcalc.core.pld import analysis_of, tight_delta, tight_epsilon, tight_epsilons_over_steps, upper_epsilon
from dpcalc.core.pld.accountant import account_grid
from dpcalc.core.pld.exact import exact_laplace_run
from dpcalc.core.pld.exact_laplace import (
    EXACT_LAPLACE_ANALYSIS,
    MAX_STEPS,
    MIN_SCALE,
    laplace_composed_delta,
    laplace_composed_epsilon,
)
from tests.core.pld.test_api import DERANDOMIZE

# Widest relative interval accepted: a few units in the last place.
WIDTH = 8 * 2.0**-52


def _nested(k: int, a: mp.mpf, t: mp.mpf) -> mp.mpf:
    """delta_k(t) = E_P[delta_(k-1)(t - L)] for any real t (numerical integration)."""
    if k == 1:
        if t >= a:
            return mp.mpf(0)
        if t <= -a:
            return 1 - mp.exp(t)
        return 1 - mp.exp((t - a) / 2)
    inner = lambda loss: _nested(k - 1, a, t - loss)  # noqa: E731
    kinks = {t - (2 * i - (k - 1)) * a for i in range(k)}
    points = sorted({-a, a} | {x for x in kinks if -a < x < a})
    density = mp.quad(lambda loss: inner(loss) * mp.exp((loss - a) / 2) / 4, points)
    return inner(a) / 2 + inner(-a) * mp.exp(-a) / 2 + density


def nested_delta(k: int, scale: float, eps: float, dps: int) -> mp.mpf:
    with mp.workdps(dps):
        return _nested(k, 1 / mp.mpf(scale), mp.mpf(eps))


def multinomial_delta(k: int, scale: float, eps: float, dps: int = 100) -> mp.mpf:
    """The multinomial / Irwin-Hall form: mu = c [delta_a + delta_-a + a U(-a, a)], c = e^(-a/2)/2;
    delta = sum over j, m of k!/(j! m! (k-j-m)!) c^k a^j int g(x) f_j(x - s) dx with g(x) =
    (e^(x/2) - e^eps e^(-x/2))_+, f_j the density of j uniforms on (-a, a) and s = (2m + j - k) a."""
    with mp.workdps(dps):
        a, eps_ = 1 / mp.mpf(scale), mp.mpf(eps)
        c = mp.exp(-a / 2) / 2

        def g(x: mp.mpf) -> mp.mpf:
            return mp.exp(x / 2) - mp.exp(eps_ - x / 2) if x > eps_ else mp.mpf(0)

        total = mp.mpf(0)
        for j in range(k + 1):
            for m in range(k - j + 1):
                weight = mp.mpf(math.comb(k, j) * math.comb(k - j, m)) * c**k * a**j
                shift = (2 * m + j - k) * a
                if j == 0:
                    total += weight * g(shift)
                    continue

                def density(z: mp.mpf, j: int = j) -> mp.mpf:  # Irwin-Hall on [0, j]
                    return mp.fsum((-1) ** i * mp.binomial(j, i) * (z - i) ** (j - 1)
                                   for i in range(j + 1) if z > i) / mp.factorial(j - 1)

                # x = shift - j a + 2 a z, z in [0, j]
                start = max(mp.mpf(0), (eps_ - shift + j * a) / (2 * a))
                if start >= j:
                    continue
                points = sorted({start, mp.mpf(j)} | {mp.mpf(i) for i in range(j) if i > start})
                origin = shift - j * a
                total += weight * mp.quad(lambda z, origin=origin: g(origin + 2 * a * z) * density(z), points)
        return total


def _contains(interval: tuple[float, float], value: mp.mpf) -> bool:
    return interval[0] <= value <= interval[1]


@pytest.mark.parametrize("scale", [0.3, 1.0, 7.0])
@pytest.mark.parametrize("eps", [0.0, 0.1, 1.0, 3.0])
def test_one_release_is_the_closed_form(scale, eps):
    a = 1.0 / scale
    with mp.workdps(40):
        reference = 1 - mp.exp((mp.mpf(eps) - 1 / mp.mpf(scale)) / 2) if eps < a else mp.mpf(0)
    interval = laplace_composed_delta(1, scale, eps)
    assert _contains(interval, reference)
    assert interval[1] - interval[0] <= WIDTH * interval[1]


@pytest.mark.parametrize(("scale", "eps"), [(0.7, 0.0), (0.7, 0.5), (0.7, 2.5), (3.0, 0.2), (0.2, 4.0), (1.0, 1.999)])
def test_two_releases_match_numerical_integration(scale, eps):
    reference = nested_delta(2, scale, eps, 50)
    interval = laplace_composed_delta(2, scale, eps)
    assert _contains(interval, reference), (interval, reference)
    assert interval[1] - interval[0] <= WIDTH * interval[1]


@pytest.mark.slow
@pytest.mark.parametrize(("scale", "eps"), [(0.7, 0.5), (0.7, 4.0), (0.2, 2.5)])
def test_three_releases_match_numerical_integration(scale, eps):
    reference = nested_delta(3, scale, eps, 30)  # nested quadrature: ~4 s a point
    interval = laplace_composed_delta(3, scale, eps)
    assert abs(reference - mp.mpf(interval[0])) <= 1e-25 + WIDTH * interval[1]


@pytest.mark.parametrize(("k", "scale", "eps"), [(3, 0.7, 1.5), pytest.param(4, 2.0, 0.3, marks=pytest.mark.slow), pytest.param(5, 0.5, 6.0, marks=pytest.mark.slow), pytest.param(6, 4.0, 1.2, marks=pytest.mark.slow),
                                                  pytest.param(8, 10.0, 0.5, marks=pytest.mark.slow), pytest.param(8, 10.0, 0.79, marks=pytest.mark.slow)])
def test_matches_the_multinomial_form_at_100_digits(k, scale, eps):
    reference = multinomial_delta(k, scale, eps)
    interval = laplace_composed_delta(k, scale, eps)
    assert _contains(interval, reference), (interval, reference)
    assert interval[1] - interval[0] <= WIDTH * interval[1]


@pytest.mark.slow
def test_tiny_delta_near_the_largest_loss():
    # eps just below k a: delta is the top atom's 2^-k (1 - e^(eps - ka)) plus a power of the gap
    k, scale = 4, 1.0
    eps = 4.0 - 1e-6
    reference = multinomial_delta(k, scale, eps)
    interval = laplace_composed_delta(k, scale, eps)
    assert _contains(interval, reference)
    assert interval[1] - interval[0] <= WIDTH * interval[1]
    assert laplace_composed_delta(k, scale, 4.0) == (0.0, 0.0)


@pytest.mark.parametrize(("k", "scale", "delta"), [(2, 1.0, 1e-6), (5, 0.5, 1e-3), (10, 2.0, 1e-6), pytest.param(30, 10.0, 1e-5, marks=pytest.mark.slow),
                                                    pytest.param(MAX_STEPS, 20.0, 1e-10, marks=pytest.mark.slow), (12, 1.0, 1e-300)])
def test_epsilon_is_certified_by_the_profile(k, scale, delta):
    lower, upper = laplace_composed_epsilon(k, scale, delta)
    assert 0.0 < lower <= upper
    assert upper - lower <= 4 * WIDTH * upper
    assert laplace_composed_delta(k, scale, upper)[1] <= delta
    assert laplace_composed_delta(k, scale, lower)[0] > delta


@pytest.mark.slow
def test_epsilon_against_mpmath_root():
    k, scale, delta = 3, 0.7, 1e-3
    with mp.workdps(40):
        root = mp.findroot(lambda e: multinomial_delta(k, scale, e, 40) - delta, mp.mpf(3.6))
    lower, upper = laplace_composed_epsilon(k, scale, delta)
    assert lower <= root <= upper


def test_epsilon_zero_and_past_the_atom():
    # delta(0) <= delta: epsilon 0
    assert laplace_composed_epsilon(2, 1e4, 0.5) == (0.0, 0.0)
    # delta so small that only the atom at k a holds it: the root is k/b to a float
    lower, upper = laplace_composed_epsilon(4, 1.0, 1e-300)
    assert lower == math.nextafter(4.0, 0.0) and upper == 4.0


@pytest.mark.parametrize(("k", "scale"), [pytest.param(2, 1.0, marks=pytest.mark.slow), pytest.param(10, 2.0, marks=pytest.mark.slow), (5, 0.5), pytest.param(40, 10.0, marks=pytest.mark.slow)])
def test_the_grid_interval_contains_the_exact_one(k, scale):
    phases = (Phase("laplace", 1.0, None, scale, k),)
    for eps in (0.1, 1.0):
        grid = account_grid(phases, delta=None, epsilon=eps, accuracy=1e-3).result
        lower, upper = laplace_composed_delta(k, scale, eps)
        assert grid.delta_lower <= lower <= upper <= grid.delta_upper
    grid = account_grid(phases, delta=1e-6, epsilon=None, accuracy=1e-3).result
    lower, upper = laplace_composed_epsilon(k, scale, 1e-6)
    assert grid.epsilon_lower <= lower <= upper <= grid.epsilon_upper


@pytest.mark.parametrize(("k", "scale", "eps"), [(3, 1.0, 0.5), (10, 5.0, 1.0)])
def test_dp_accounting_laplace_pld(k, scale, eps):
    from dp_accounting.pld import privacy_loss_distribution as pld

    peer = pld.from_laplace_mechanism(scale, sensitivity=1.0, value_discretization_interval=1e-4)
    peer = peer.self_compose(k)
    lower, upper = laplace_composed_delta(k, scale, eps)
    # pessimistic: an upper bound, within its discretisation (k steps of 1e-4 in the loss)
    assert peer.get_delta_for_epsilon(eps) >= lower
    assert peer.get_delta_for_epsilon(eps) <= upper * (1 + 5e-3) + 1e-12


@pytest.mark.slow
@settings(max_examples=25, deadline=None, derandomize=DERANDOMIZE)
@given(k=st.integers(1, 12), scale=st.floats(0.2, 50.0), eps=st.floats(0.0, 5.0), step=st.floats(1e-3, 1.0))
def test_delta_falls_in_epsilon_and_grows_in_k(k, scale, eps, step):
    lower, upper = laplace_composed_delta(k, scale, eps)
    assert 0.0 <= lower <= upper <= 1.0
    # monotone in eps (strictly below k a), and more releases never lose privacy less
    assert laplace_composed_delta(k, scale, eps + step)[0] <= upper
    assert laplace_composed_delta(k + 1, scale, eps)[1] >= lower
    # continuous: a relative nudge of eps moves delta by at most |delta'| times it
    nudged = laplace_composed_delta(k, scale, eps * (1 + 1e-12))
    assert abs(nudged[0] - lower) <= 1e-9


@pytest.mark.slow
def test_the_accountant_routes_to_the_exact_profile():
    phases = [Phase("laplace", 1.0, None, 2.0, 10)]
    assert exact_laplace_run(phases)
    assert exact_laplace_run([Phase("laplace", 1.0, None, 2.0, 4), Phase("laplace", 1.0, None, 2.0, 6)])
    assert not exact_laplace_run([Phase("laplace", 1.0, None, 2.0, 1)])  # one release: its own closed form
    assert not exact_laplace_run([Phase("laplace", 1.0, None, 2.0, MAX_STEPS + 1)])
    assert not exact_laplace_run([Phase("laplace", 1.0, None, MIN_SCALE / 2, 2)])  # cost grows with k/b
    assert not exact_laplace_run([Phase("laplace", 0.5, None, 2.0, 10)])
    assert not exact_laplace_run([Phase("laplace", 1.0, None, 2.0, 4), Phase("laplace", 1.0, None, 3.0, 4)])
    result = tight_epsilon(phases, 1e-6)
    assert result.exact and result.grid_step == 0.0
    assert (result.epsilon_lower, result.epsilon_upper) == laplace_composed_epsilon(10, 2.0, 1e-6)
    assert analysis_of(result.phases) == EXACT_LAPLACE_ANALYSIS
    assert upper_epsilon(phases, 1e-6) == (result.epsilon_upper, 0.0)
    at_eps = tight_delta(phases, 1.0)
    assert at_eps.exact and (at_eps.delta_lower, at_eps.delta_upper) == laplace_composed_delta(10, 2.0, 1.0)
    split = tight_epsilon([Phase("laplace", 1.0, None, 2.0, 4), Phase("laplace", 1.0, None, 2.0, 6)], 1e-6)
    assert split.epsilon_upper == result.epsilon_upper
    grid = tight_epsilon([Phase("laplace", 1.0, None, 2.0, MAX_STEPS + 1)], 1e-6)
    assert not grid.exact
    # a sweep over T: the exact rows as tight_epsilon gives them, the grid past the cutoff
    rows = tight_epsilons_over_steps(Phase("laplace", 1.0, None, 2.0, 1), 1e-6, [2, 10, 30, MAX_STEPS + 12])
    assert [row.exact for row in rows] == [True, True, True, False]
    assert rows[1] == result


@pytest.mark.parametrize("bad", [(0, 1.0, 0.5), (2, 0.0, 0.5), (2, math.inf, 0.5), (2, 1.0, -1.0)])
def test_bad_arguments(bad):
    with pytest.raises(ValueError):
        laplace_composed_delta(*bad)
    with pytest.raises(ValueError):
        laplace_composed_epsilon(2, 1.0, 1.5)
