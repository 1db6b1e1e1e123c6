"""Random allocation (balls and bins, `pairs.allocation`): the lattice pairs above and below one
epoch's pair, checked against independent exact values, and the accountant's figures.

Exact references (mpmath, 50 digits from conftest.py), with a = 1/sigma and c = e^eps:
  * one factor W = exp(a Z - a^2/2), Z ~ N(0, 1) (the law of W_i under Q): its cell masses
    P(u <= W < v) and partial moments E[W; u <= W < v] by mp.quad in z (the integrands phi(z)
    and e^(a z - a^2/2) phi(z) = phi(z - a) are smooth there), cut into pieces of width at most
    0.25 in z and scaled to 1 at their peak (mp.quad's error target is absolute), cross-checked
    against the closed forms Phi(z_v) - Phi(z_u) and Phi(z_v - a) - Phi(z_u - a) (each
    difference taken on the side of the median where it does not cancel);
  * one epoch of t steps, r of them run: R = (t - r + W_1 + ... + W_r)/t under Q, and
        remove: delta = E_Q[(R - c)_+] = E[(W_1 + ... + W_r - K)_+]/t,         K = t c - (t - r),
        add:    delta = E_Q[(1 - c R)_+] = (c/t) E[(K - W_1 - ... - W_r)_+],     K = t/c - (t - r).
    With one factor these are Black-Scholes closed forms, E[(W - K)_+] = Phi(a - b) - K Phi(-b)
    and E[(K - W)_+] = K Phi(b) - Phi(b - a), b = (log K + a^2/2)/a (0 or 1 - K when K <= 0).
    With two factors the inner expectation over W_2 is that closed form at K - W_1, and the outer
    one over z_1 is a 1-D mp.quad, split where W_1 = K (the kink) and at +-5, +-10; its error
    estimate is below 1e-50 on every case here, so the reference is exact to far more digits
    than the comparison needs. It is cross-checked once against scipy's dblquad of the 2-D
    integrand in (z_1, z_2) (a route that shares no code with it), to 1e-7 relative.
"""

from __future__ import annotations

import math
import os

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core.phases import Phase
from dpcalc.core.pld import api, tight_delta, tight_epsilon
from dpcalc.core.pld.pairs.allocation import AllocationPair
from dpcalc.core.pld.pairs.atoms import _cells
from dpcalc.core.pld.pairs.lognormal_lattice import cells_coarser, lattice, spread_coarser
from tests.slow import slow_cases

DERANDOMIZE = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def allocated(sigma: float, t: int, steps: int) -> Phase:
    return Phase(noise_multiplier=sigma, sampling_probability=1.0 / t, steps=steps, sampling="allocation",
                 epoch_steps=t)


def poisson(sigma: float, t: int, steps: int) -> Phase:
    return Phase(noise_multiplier=sigma, sampling_probability=1.0 / t, steps=steps)


# ---------------------------------------------------------------------------------------------
# mpmath references
# ---------------------------------------------------------------------------------------------


def _call(a, k):
    """E[(W - k)_+], log W ~ N(-a^2/2, a^2)."""
    if k <= 0:
        return 1 - k
    b = (mp.log(k) + a * a / 2) / a
    return mp.ncdf(a - b) - k * mp.ncdf(-b)


def _put(a, k):
    """E[(k - W)_+]."""
    if k <= 0:
        return mp.mpf(0)
    b = (mp.log(k) + a * a / 2) / a
    return k * mp.ncdf(b) - mp.ncdf(b - a)


def _exact_delta(t: int, r: int, sigma: float, epsilon: float, direction: str) -> mp.mpf:
    """The hockey-stick divergence of one epoch's pair (t steps, r <= 2 run) in `direction`."""
    a = 1 / mp.mpf(sigma)
    c = mp.e ** mp.mpf(epsilon)
    if direction == "remove":
        k, option, scale = t * c - (t - r), _call, 1 / mp.mpf(t)
    else:
        k, option, scale = t / c - (t - r), _put, c / t
    if r == 1:
        return scale * option(a, k)
    assert r == 2

    def outer(z):
        return mp.npdf(z) * option(a, k - mp.e ** (a * z - a * a / 2))

    points = [-mp.inf, -10, -5, 0, 5, 10, mp.inf]
    if k > 0:
        points = sorted({*points, (mp.log(k) + a * a / 2) / a})
    value, error = mp.quad(outer, points, error=True)
    assert error < mp.mpf(10) ** -40 * max(value, mp.mpf(10) ** -30)
    return scale * value


def _z(a, w):
    return -mp.inf if w == 0 else (mp.log(w) + a * a / 2) / a


def _scaled_quad(f, points, peak):
    """mp.quad of f over `points`, f scaled to 1 at `peak` (its largest value there): mp.quad's
    error target is absolute, and a cell far in the tails has a mass of 1e-107."""
    top = f(peak)
    return top * mp.quad(lambda z: f(z) / top, points)


def _cell_reference(a: float, lo: float, hi: float) -> tuple[mp.mpf, mp.mpf]:
    """(P(lo <= W < hi), E[W; lo <= W < hi]) by mp.quad in z, checked against the closed forms."""
    a = mp.mpf(a)
    z_lo, z_hi = _z(a, mp.mpf(lo)), _z(a, mp.mpf(hi))
    start = z_hi - 12 if z_lo == -mp.inf else z_lo  # below z_hi - 12: e^-70 of the mass, and its own piece
    pieces = max(2, math.ceil(float(z_hi - start) / 0.25))
    points = ([-mp.inf] if z_lo == -mp.inf else []) + list(mp.linspace(start, z_hi, pieces + 1))
    mass = _scaled_quad(mp.npdf, points, min(max(z_lo, 0), z_hi))
    # e^(a z - a^2/2) phi(z) = phi(z - a)
    moment = _scaled_quad(lambda z: mp.npdf(z - a), points, min(max(z_lo, a), z_hi))
    if z_hi <= 0:
        closed = mp.ncdf(z_hi) - mp.ncdf(z_lo), mp.ncdf(z_hi - a) - mp.ncdf(z_lo - a)
    else:
        closed = mp.ncdf(-z_lo) - mp.ncdf(-z_hi), mp.ncdf(a - z_lo) - mp.ncdf(a - z_hi)
    assert abs(closed[0] - mass) <= mp.mpf(10) ** -30 * mass
    assert abs(closed[1] - moment) <= mp.mpf(10) ** -30 * moment
    return mass, moment


@pytest.mark.slow
def test_the_two_factor_reference_agrees_with_a_two_dimensional_quadrature():
    """The mpmath route (closed-form inner integral) against scipy's dblquad over (z_1, z_2), the
    region where the integrand is positive given as the inner limits, so the integrand is smooth."""
    from scipy import integrate

    a, c = 1.0, math.exp(0.5)

    def w(z):
        return math.exp(a * z - a * a / 2)

    def density(z1, z2):
        return math.exp(-(z1 * z1 + z2 * z2) / 2) / (2 * math.pi)

    def remove_edge(z1):  # W_2 > 2c - W_1
        rest = 2 * c - w(z1)
        return -14.0 if rest <= 0 else min(max((math.log(rest) + a * a / 2) / a, -14.0), 14.0)

    remove, _ = integrate.dblquad(lambda z2, z1: ((w(z1) + w(z2)) / 2 - c) * density(z1, z2), -14, 14,
                                  remove_edge, 14, epsabs=1e-14, epsrel=1e-11)

    def add_edge(z1):  # W_2 < 2/c - W_1
        rest = 2 / c - w(z1)
        return -14.0 if rest <= 0 else min(max((math.log(rest) + a * a / 2) / a, -14.0), 14.0)

    add, _ = integrate.dblquad(lambda z2, z1: (1 - c * (w(z1) + w(z2)) / 2) * density(z1, z2), -14, 14,
                               -14, add_edge, epsabs=1e-14, epsrel=1e-11)
    assert float(_exact_delta(2, 2, 1.0, 0.5, "remove")) == pytest.approx(remove, rel=1e-7)
    assert float(_exact_delta(2, 2, 1.0, 0.5, "add")) == pytest.approx(add, rel=1e-7)
    # one factor, t = r = 1: the Gaussian's closed form
    gaussian = math.erfc((0.5 - 1 / 2) / math.sqrt(2)) / 2 - c * math.erfc((0.5 + 1 / 2) / math.sqrt(2)) / 2
    assert float(_exact_delta(1, 1, 1.0, 0.5, "remove")) == pytest.approx(gaussian, rel=1e-14)


# ---------------------------------------------------------------------------------------------
# One epoch: the lattice pairs bracket the exact pair
# ---------------------------------------------------------------------------------------------


def _edges(epsilon: float) -> np.ndarray:
    """Loss cells of width 1e-3 over [-30, 30], epsilon itself an edge, and the infinite ends."""
    inner = np.union1d(np.arange(-30000, 30001) * 1e-3, [epsilon])
    return np.concatenate(([-math.inf], inner, [math.inf]))


def _cell_delta(atoms, epsilon: float, direction: str, side: str) -> float:
    """The hockey-stick divergence at epsilon from `_cells`' bounds: sum over cells of
    max(P - e^eps Q, 0) with P at its upper bound and Q at its lower one (side "upper"), or the
    reverse ("lower"). `_cells` answers in the remove order: for add the pair's P is Q_remove and
    its Q is P_remove. Lower: grouping the atoms into cells is a post-processing, so it can only
    lower the divergence. Upper: epsilon is an edge, so in each cell every atom's P - e^eps Q has
    one sign and the cells lose nothing (an atom whose location straddles an edge counts in the
    upper bounds of every cell it may lie in). The P-mass at R = inf (atoms.inf_p) is in the last
    cell of the remove order, the edge there being +inf."""
    q_lo, q_hi, p_lo, p_hi = _cells(atoms, _edges(epsilon), direction)
    if direction == "add":
        (q_lo, q_hi), (p_lo, p_hi) = (p_lo, p_hi), (q_lo, q_hi)
    c = math.exp(epsilon)
    if side == "upper":
        return math.fsum(np.maximum(p_hi - c * q_lo, 0.0))
    return math.fsum(np.maximum(p_lo - c * q_hi, 0.0))


# (3, 2, 1.5) takes the two-factor path of the first three cases: those run in the slow set.
ONE_EPOCH_CASES = [pytest.param(2, 2, 1.0, marks=pytest.mark.slow), pytest.param(2, 2, 1.5, marks=pytest.mark.slow),
                   pytest.param(3, 2, 1.0, marks=pytest.mark.slow), pytest.param(3, 2, 1.5, marks=pytest.mark.slow), (3, 1, 1.0), (3, 1, 1.5)]


@pytest.mark.parametrize("direction", ["remove", "add"])
@pytest.mark.parametrize("t, r, sigma", ONE_EPOCH_CASES)
def test_one_epoch_lattice_pairs_bracket_the_exact_delta(t, r, sigma, direction):
    """lower pair's delta <= exact <= upper pair's delta at eps = 0.1, 0.5, 1, and the bracket is
    tight: measured, (upper - lower)/exact is at most 1.8e-3 wherever exact >= 1e-3 (largest for
    the add order at eps = 1, near the end of its support), and upper - lower at most 6.6e-7
    (t = 3, r = 2, sigma = 1, add, eps = 1: exact 1.9e-6 in [1.54e-6, 2.20e-6], where the add loss
    is bounded by log 3 = 1.0986 and the lattice step near W = 0 shows). Asserted: upper - lower
    <= 2.5e-3 exact + 1e-6."""
    pair = AllocationPair(t, r, sigma, direction)
    upper, lower = pair.atoms, pair.attained().atoms
    assert upper.inf_p <= 1e-16 and upper.zero_q <= 1e-16
    for epsilon in (0.1, 0.5, 1.0):
        exact = float(_exact_delta(t, r, sigma, epsilon, direction))
        above = _cell_delta(upper, epsilon, direction, "upper")
        below = _cell_delta(lower, epsilon, direction, "lower")
        case = (t, r, sigma, direction, epsilon, below, exact, above)
        assert below <= exact <= above, case
        assert above - below <= 2.5e-3 * exact + 1e-6, case


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_cells_of_ordered_atoms_agree_with_the_general_sums(direction, monkeypatch):
    """The spread pair's atoms ascend in loss (descend, add), and `_cells` sums each cell's atoms as
    one run; taking them as unordered (bincount per cell) gives the same bounds up to the order of
    the summation (at most (count + 2) u of each sum, inside the bounds' own margins): checked on
    edges that cover the line, and on edges that leave atoms below and above them."""
    from dpcalc.core.pld.pairs import atoms as atom_pairs

    atoms = AllocationPair(40, 10, 1.0, direction).atoms
    assert atom_pairs._step(atoms, direction) == (1 if direction == "remove" else -1)
    rng = np.random.default_rng(7)
    edge_sets = [np.concatenate(([-math.inf], np.arange(-300, 301) * 0.01, [math.inf])),
                 np.sort(rng.normal(0.0, 0.3, 40)), np.append(np.sort(rng.normal(0.0, 0.5, 25)), math.inf)]
    ordered = [_cells(atoms, edges, direction) for edges in edge_sets]
    monkeypatch.setattr(atom_pairs, "_step", lambda atoms, direction: 0)
    for edges, fast in zip(edge_sets, ordered, strict=True):
        for a, b in zip(fast, _cells(atoms, edges, direction), strict=True):
            assert np.all(np.abs(a - b) <= 1e-9 * np.maximum(a, b) + 1e-300)


@pytest.mark.slow
@pytest.mark.parametrize("t, steps, sigma, epsilon", [pytest.param(2, 2, 1.0, 0.5, marks=pytest.mark.slow), (3, 2, 1.5, 0.1)])
def test_the_accountant_brackets_one_epoch(t, steps, sigma, epsilon):
    """Through the whole accountant (both orders, the grid): [delta_lower, delta_upper] holds the
    exact max(remove, add) of one epoch; steps < t is one partial epoch of r = steps."""
    exact = max(float(_exact_delta(t, steps, sigma, epsilon, d)) for d in ("remove", "add"))
    result = tight_delta([allocated(sigma, t, steps)], epsilon)
    assert result.delta_lower <= exact <= result.delta_upper
    assert result.delta_upper - result.delta_lower <= 1e-2 * exact


# ---------------------------------------------------------------------------------------------
# The lattice of one factor
# ---------------------------------------------------------------------------------------------

SIGMAS = [1.0, 1.5, 4.0]


@pytest.mark.parametrize("sigma", SIGMAS)
def test_lattice_masses_are_a_probability_with_mean_one(sigma):
    lat = lattice(1.0 / sigma)
    big = lat.coarse * lat.h
    w = np.concatenate((np.arange(len(lat.spread)) * lat.h,
                        (len(lat.cells) // lat.coarse + 1 + np.arange(len(lat.merged_spread))) * big))
    spread = np.concatenate((lat.spread, lat.merged_spread))
    assert math.fsum(spread) == pytest.approx(1.0, abs=1e-12)
    assert math.fsum(spread * w) == pytest.approx(1.0, abs=1e-12)  # a spread keeps the mean
    assert math.fsum(np.concatenate((lat.cells, lat.merged))) == pytest.approx(1.0 - lat.top, abs=1e-12)
    assert np.all(spread >= 0.0) and np.all(lat.cells >= 0.0) and np.all(lat.merged >= 0.0)
    assert 0.0 < lat.inf_mass <= 1e-17 and 0.0 < lat.top <= 1e-17
    assert np.all((lat.excess >= 0.0) & (lat.excess <= lat.h))
    assert np.all((lat.merged_excess >= 0.0) & (lat.merged_excess <= big))
    assert len(lat.cells) % lat.coarse == 0 and len(lat.merged) > 0


def _probe_cells(lat) -> list[int]:
    """Small, medium and large w: the first cells, the cells of w = 1 and 3, and far in the tail."""
    last = len(lat.cells) - 1
    one = round(1.0 / lat.h)
    return sorted({0, 1, 5, one, 3 * one, last // 10, last // 2, last})


@pytest.mark.slow
@pytest.mark.parametrize("sigma", slow_cases(SIGMAS, 1, 2, one_argument=True))
def test_lattice_cells_agree_with_mpmath(sigma):
    """P(w_k <= W < w_(k+1)) and A = E[W - w_k; cell] to 1e-12 relative (measured at most 6.1e-15,
    down to the first cell of sigma = 4, of mass 1.7e-107), within the bounds cells_rel (2e-14 to
    3e-12 here) and excess_err; the spread masses within spread_rel."""
    a = 1.0 / sigma
    lat = lattice(a)
    w = np.arange(len(lat.spread)) * lat.h
    references = {}
    for k in _probe_cells(lat):
        mass, moment = _cell_reference(a, float(w[k]), float(w[k + 1]))
        references[k] = mass, moment - mp.mpf(float(w[k])) * mass
    for k, (mass, above) in references.items():
        computed, computed_above = lat.cells[k], lat.cells[k] * lat.excess[k]
        error = abs(float((mp.mpf(computed) - mass) / mass))
        assert error <= lat.cells_rel[k], (k, error, lat.cells_rel[k])
        excess = float(above / mass)
        assert abs(lat.excess[k] - excess) <= lat.excess_err[k], (k, lat.excess[k], excess, lat.excess_err[k])
        assert error <= 1e-12, (k, error)
        assert abs(float((mp.mpf(computed_above) - above) / above)) <= 1e-12, k
    # spread onto w_k: from cell k, E[w_(k+1) - W; cell k]/width; from cell k - 1, E[W - w_(k-1); cell k - 1]/width
    for k in _probe_cells(lat):
        if k == 0 or k + 1 >= len(lat.spread) - 1:
            continue
        mass, moment = _cell_reference(a, float(w[k]), float(w[k + 1]))
        below_mass, below_moment = _cell_reference(a, float(w[k - 1]), float(w[k]))
        wk, wk1, wk0 = (mp.mpf(float(x)) for x in (w[k], w[k + 1], w[k - 1]))
        spread = (wk1 * mass - moment) / (wk1 - wk) + (below_moment - wk0 * below_mass) / (wk - wk0)
        error = abs(float((mp.mpf(lat.spread[k]) - spread) / spread))
        assert error <= lat.spread_rel[k], (k, error, lat.spread_rel[k])


@pytest.mark.slow  # test_lattice_cells_agree_with_mpmath checks the cells against mpmath by default
@pytest.mark.parametrize("sigma", slow_cases(SIGMAS, 1, 2, one_argument=True))
def test_merged_cells_agree_with_mpmath(sigma):
    """The cells of width H = 16 h (one factor beyond the bulk, below: the narrow cells merged 16
    at a time, then the lattice's wide cells): their masses within their relative bounds and their
    excesses E[W | cell] - m H within their absolute bounds, against mpmath over the cell (the same
    references as the narrow cells), on both sides of the narrow cells' end."""
    a = 1.0 / sigma
    lat = lattice(a)
    c = lat.coarse
    mass, rel, excess, excess_err = cells_coarser(lat)
    assert math.fsum(mass) == pytest.approx(1.0 - lat.top, abs=1e-12)
    assert np.all((excess >= 0.0) & (excess <= c * lat.h))
    last = len(mass) - 1
    one = round(1.0 / (c * lat.h))
    wide = len(lat.cells) // c  # the first wide cell
    for m in sorted({0, 1, one, 3 * one, wide - 1, wide, last // 10, last // 2, last}):
        lo, hi = float(m * c * lat.h), float((m + 1) * c * lat.h)
        reference, moment = _cell_reference(a, lo, hi)
        error = abs(float((mp.mpf(mass[m]) - reference) / reference))
        assert error <= rel[m], (m, error, rel[m])
        assert abs(excess[m] - float(moment / reference - mp.mpf(lo))) <= excess_err[m], m
        assert excess_err[m] <= 1e-9 * c * lat.h, (m, excess_err[m])


@pytest.mark.slow
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=80), st.sampled_from([2, 4, 16]))
@settings(max_examples=50, deadline=None, derandomize=DERANDOMIZE)
def test_a_coarser_spread_keeps_mass_and_mean(masses, c):
    """Spreading lattice masses onto the multiples of c keeps their total and their mean (a
    mean-preserving spread), to its rounding bound; input errors pass through as a spread."""
    x = np.array(masses)
    out, err = spread_coarser(x, np.zeros(len(x)), c)
    assert np.all(out >= 0.0)
    k = np.arange(len(x))
    total = math.fsum(x)
    assert abs(math.fsum(out) - total) <= math.fsum(err) + 1e-15
    assert abs(math.fsum(out * c * np.arange(len(out))) - math.fsum(x * k)) <= math.fsum(err * c * np.arange(len(out))) + 1e-13
    _, err_only = spread_coarser(np.zeros(len(x)), x, c)
    assert math.fsum(err_only) >= total * (1.0 - 1e-15)


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_the_tilt_search_estimate_follows_the_mgf(direction):
    """The tilt search's estimate of the log MGF (atoms grouped by log R, `search_log_mgf`) against
    the sum over every atom, over the tilts the design card's searches visit (measured within
    1e-9 relative; any tilt is sound, the estimate only steers the search)."""
    pair = AllocationPair(250, 250, 1.1, direction)
    for lam in (0.01, 0.5, 3.0, 9.2, 14.4, 40.0):
        exact = pair.log_mgf(lam)
        assert pair.search_log_mgf(lam) == pytest.approx(exact, rel=1e-7, abs=1e-10), lam
    cap = 0.5
    assert pair.search_log_mgf(3.0, cap) == pytest.approx(pair.log_mgf(3.0, cap), rel=1e-7)


# ---------------------------------------------------------------------------------------------
# Against PLD_accounting (Feldman-Shenfeld's random allocation accountant)
# ---------------------------------------------------------------------------------------------

# gaussian_allocation_epsilon_range(delta=1e-5, sigma, num_steps=t, num_selected=1, num_epochs=E)
# -> (upper, lower): PLD_accounting 2.0 run on this machine; the 60-epoch MNIST figure (n 60000,
# batch 256, t = 235) from the issue that asked for the feature.
PLD_ACCOUNTING = {
    (1.0, 10, 1): (2.2089584, 2.1661686),
    (2.0, 100, 1): (0.1776740, 0.1694594),
    (1.1, 235, 1): (0.2779158, 0.2651850),
    (1.1, 235, 60): (2.3775, 2.2956),
}


@pytest.mark.parametrize("case", sorted(PLD_ACCOUNTING))
def test_inside_pld_accounting_interval(case):
    sigma, t, epochs = case
    upper, lower = PLD_ACCOUNTING[case]
    ours = tight_epsilon([allocated(sigma, t, t * epochs)], 1e-5)
    assert lower <= ours.epsilon_lower <= ours.epsilon_upper <= upper


@pytest.mark.slow
@pytest.mark.parametrize("case", [(1.0, 10, 1), (2.0, 100, 1)])
def test_pld_accounting_recomputed(case):
    accounting = pytest.importorskip("PLD_accounting")
    sigma, t, epochs = case
    upper, lower = accounting.gaussian_allocation_epsilon_range(delta=1e-5, sigma=sigma, num_steps=t,
                                                                num_selected=1, num_epochs=epochs)
    assert (upper, lower) == pytest.approx(PLD_ACCOUNTING[case], rel=1e-6)
    ours = tight_epsilon([allocated(sigma, t, t * epochs)], 1e-5)
    assert ours.epsilon_lower <= upper and lower <= ours.epsilon_upper  # the intervals overlap
    assert lower <= ours.epsilon_lower <= ours.epsilon_upper <= upper  # and ours is inside theirs


# ---------------------------------------------------------------------------------------------
# The accountant's figures
# ---------------------------------------------------------------------------------------------


def test_mnist_sixty_epochs_is_tight():
    """sigma 1.1, t = 235 (n 60000, batch 256), 60 epochs: [2.334824, 2.335374] measured, through
    `api.account` as the command line calls it; width below 1e-3 relative."""
    result = api.account((allocated(1.1, 235, 235 * 60),), delta=1e-5, epsilon=None, accuracy=1e-3)
    assert result.warnings == ()
    assert result.epsilon_lower == pytest.approx(2.334824, rel=2e-5)
    assert result.epsilon_upper == pytest.approx(2.335374, rel=2e-5)
    assert 0.0 < result.epsilon_upper - result.epsilon_lower <= 1e-3 * result.epsilon_upper
    assert result.delta_upper <= 1e-5


@pytest.mark.parametrize("sigma, t, epochs", [(1.1, 235, 60), (1.0, 10, 1), (2.0, 100, 1), (4.0, 60, 5), pytest.param(1.0, 2, 1, marks=pytest.mark.slow)])
def test_allocation_is_no_worse_than_poisson(sigma, t, epochs):
    """Random allocation of t steps against Poisson sampling at p = 1/t, the same steps (Feldman
    and Shenfeld find allocation at least as private for the Gaussian; measured, our allocation
    upper bound lies below even the Poisson lower bound on every case here, by 1.8% to 31%)."""
    ours = tight_epsilon([allocated(sigma, t, t * epochs)], 1e-5)
    theirs = tight_epsilon([poisson(sigma, t, t * epochs)], 1e-5)
    assert 0.0 < ours.epsilon_lower <= ours.epsilon_upper <= theirs.epsilon_upper
    assert ours.epsilon_upper <= theirs.epsilon_lower


@pytest.mark.slow
def test_partial_epoch_lies_between_whole_epochs():
    """t = 20, 50 steps: 2 epochs and a last one of 10 steps, between 2 and 3 full epochs."""
    two = tight_epsilon([allocated(1.5, 20, 40)], 1e-5)
    partial = tight_epsilon([allocated(1.5, 20, 50)], 1e-5)
    three = tight_epsilon([allocated(1.5, 20, 60)], 1e-5)
    for result in (two, partial, three):
        assert 0.0 < result.epsilon_lower <= result.epsilon_upper
    assert two.epsilon_upper < partial.epsilon_lower and partial.epsilon_upper < three.epsilon_lower


def test_epoch_of_one_step_is_the_gaussian():
    alone = tight_epsilon([allocated(1.3, 1, 5)], 1e-5)
    plain = tight_epsilon([Phase(noise_multiplier=1.3, steps=5)], 1e-5)
    assert (alone.epsilon_lower, alone.epsilon_upper) == (plain.epsilon_lower, plain.epsilon_upper)


def test_refusals():
    with pytest.raises(ValueError, match="needs epoch_steps"):
        Phase(noise_multiplier=1.0, sampling_probability=0.1, steps=10, sampling="allocation")
    with pytest.raises(ValueError, match="needs p = b/n"):
        Phase(noise_multiplier=1.0, sampling_probability=0.01, steps=10, sampling="allocation", epoch_steps=50)
    with pytest.raises(ValueError, match="add-remove or zero-out"):
        Phase(noise_multiplier=1.0, sampling_probability=0.1, steps=10, sampling="allocation", epoch_steps=10,
              neighbours="replace-one")
    with pytest.raises(ValueError, match="user-level"):
        Phase(noise_multiplier=1.0, sampling_probability=0.1, steps=10, sampling="allocation", epoch_steps=10,
              examples_per_user=2)
    with pytest.raises(ValueError, match="direction"):
        AllocationPair(10, 10, 1.0, "replace")
    with pytest.raises(ValueError, match="executed"):
        AllocationPair(10, 11, 1.0, "remove")
    with pytest.raises(ValueError, match="executed"):
        AllocationPair(10, 0, 1.0, "remove")


# ---------------------------------------------------------------------------------------------
# Properties: the true epsilon falls with sigma and grows with the epochs; the certified
# intervals are narrow (1e-3) next to the changes drawn here (sigma by 5% or more, one epoch more
# of at most six), so both ends move the same way.
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
@settings(max_examples=6, deadline=None, derandomize=DERANDOMIZE)
@given(sigma=st.floats(1.0, 4.0), t=st.integers(2, 60), epochs=st.integers(1, 5), factor=st.floats(1.05, 1.5))
def test_allocation_is_ordered_and_monotone(sigma, t, epochs, factor):
    base = tight_epsilon([allocated(sigma, t, t * epochs)], 1e-5)
    noisier = tight_epsilon([allocated(sigma * factor, t, t * epochs)], 1e-5)
    longer = tight_epsilon([allocated(sigma, t, t * (epochs + 1))], 1e-5)
    for result in (base, noisier, longer):
        assert 0.0 <= result.epsilon_lower <= result.epsilon_upper
    assert noisier.epsilon_upper <= base.epsilon_upper and noisier.epsilon_lower <= base.epsilon_lower
    assert base.epsilon_upper <= longer.epsilon_upper and base.epsilon_lower <= longer.epsilon_lower
