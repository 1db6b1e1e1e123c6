"""Neighbour relations and fixed-size batches in the PLD accountant: the replace-one pair of
Lebeda, Regehr, Kamath, Steinke 2024 (arXiv 2405.20769), the symmetrised two-part pair of
fixed-size batches (Dong, Roth, Su 2022, Thm 4.2; Zhu, Dong, Wang 2022, arXiv 2106.08567), the
accountant's bounds built on them, and the refusals of the combinations without an accounting.

Exact references (mpmath; 50 digits from conftest.py unless a test says otherwise):
  * the replace-one pair P = (1 - p) N(0, s^2) + p N(1, s^2), Q = (1 - p) N(0, s^2) + p N(-1, s^2):
    its loss L(x) = log(P/Q)(x) and the point where L reaches a loss, solved by mp.findroot on L
    itself (not on the library's closed form); interval masses and one-step hockey-stick
    divergences by mp.quad of the mixture densities;
  * fixed-size batches: the attained pair (1 - g) N(0, s^2) + g N(2, s^2) against N(0, s^2) (the
    replaced record's clipped contribution C exchanged for -C at sampling rate g = b/n), its
    hockey-stick divergence in both orders by mp.quad;
  * the Poisson add-remove pair's profiles from normal tails (tests/core/pld/helpers.py);
  * without subsampling, T replace-one steps are exactly (2 sqrt(T)/sigma)-GDP (the Gaussian
    mechanism at sensitivity 2; Dong, Roth, Su 2022, Cor. 3.3; dpcalc.core.gdp).
"""

from __future__ import annotations

import dataclasses
import math
import os

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core import gdp
from dpcalc.core.phases import Phase
from dpcalc.core.pld import DEFAULT_ACCURACY, tight_delta, tight_epsilon
from dpcalc.core.pld.model import check_phases
from dpcalc.core.pld.pairs import GaussianPair, ReplaceOnePair, SymmetrisedPair
from dpcalc.core.rdp import rdp_accountant
from tests.core.pld.helpers import GDP_RTOL, brackets, exact_one_step_delta, gaussian_masses, mp_x
from tests.slow import slow_cases

# Under CI=true the property tests draw the same examples on every run (derandomized).
DERANDOMIZE = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def gaussian(p: float, sigma: float, steps: int, sampling: str = "poisson", neighbours: str = "add-remove") -> Phase:
    return Phase("gaussian", p, sigma, None, steps, sampling=sampling, neighbours=neighbours)


def replace_one(p: float, sigma: float, steps: int) -> Phase:
    return gaussian(p, sigma, steps, neighbours="replace-one")


def uniform(p: float, sigma: float, steps: int) -> Phase:
    return gaussian(p, sigma, steps, sampling="uniform", neighbours="replace-one")


# ---------------------------------------------------------------------------------------------
# mpmath references
# ---------------------------------------------------------------------------------------------


def _ratio(y, p, s):
    """r(y) = 1 - p + p e^((y - 1/2)/s^2): the density of (1 - p) N(0, s^2) + p N(1, s^2) over N(0, s^2)."""
    return (1 - p) + p * mp.exp((y - mp.mpf(0.5)) / (s * s))


def mp_loss(x, p, s):
    """L(x) = log P(x) - log Q(x) of the replace-one pair: log r(x) - log r(-x)."""
    p, s = mp.mpf(p), mp.mpf(s)
    return mp.log(_ratio(x, p, s)) - mp.log(_ratio(-x, p, s))


def mp_loss_slope(x, p, s):
    """dL/dx of the replace-one pair (positive: L is increasing)."""
    p, s = mp.mpf(p), mp.mpf(s)

    def term(y):
        grow = p * mp.exp((y - mp.mpf(0.5)) / (s * s)) / (s * s)
        return grow / _ratio(y, p, s)

    return term(x) + term(-x)


def mp_point(loss, p, s):
    """The x with L(x) = loss, by mp.findroot on L (a float loss is taken at its exact binary value)."""
    if loss == math.inf:
        return mp.inf
    if loss == -math.inf:
        return -mp.inf
    target = mp.mpf(loss)
    if p == 1:  # L(x) = 2x/s^2 exactly
        return mp.mpf(s) ** 2 * target / 2
    if target == 0:  # L is odd
        return mp.mpf(0)

    def miss(x):
        return mp_loss(x, p, s) - target

    # bracket the root (L is increasing), then a bracketing solver
    width = mp.mpf(1)
    while miss(-width) > 0 or miss(width) < 0:
        width *= 2
    low, high = (mp.mpf(0), width) if target > 0 else (-width, mp.mpf(0))
    root = mp.findroot(miss, (low, high), solver="illinois")
    assert abs(miss(root)) <= mp.mpf(10) ** (-mp.mp.dps + 8) * (1 + abs(target))
    return root


def _upper_quad(a, b):
    """int_a^b phi(t) dt for 0 <= a < b <= inf by mp.quad, as phi(a) int_0^(b-a) e^(-a u - u^2/2) du:
    the integrand starts at 1 and decays at rate a, so panels of width 1/a growing geometrically
    resolve it however far out a is (a plain mp.quad of phi over [46, 230] is off by 1e-3)."""
    width = b - a
    points = [mp.mpf(0)]
    step = 1 / (4 * max(a, mp.mpf(1)))
    while step < width and step < 64:
        points.append(step)
        step *= 4
    points.append(width)
    return mp.npdf(a) * mp.quad(lambda u: mp.exp(-a * u - u * u / 2), points)


def normal_mass(a, b):
    """P(a <= Z < b) for a standard normal Z, by quadrature of its density (on the side of its mode)."""
    if not a < b:
        return mp.mpf(0)
    if a >= 0:
        value = _upper_quad(a, b)
    elif b <= 0:
        value = _upper_quad(-b, -a)
    else:
        value = _upper_quad(mp.mpf(0), -a) + _upper_quad(mp.mpf(0), b)
    # the quadrature against the normal distribution function, taken where both tails are small
    closed = mp.ncdf(-a) - mp.ncdf(-b) if a >= 0 else mp.ncdf(b) - mp.ncdf(a)
    assert abs(value - closed) <= mp.mpf(10) ** -30 * closed
    return value


def replace_one_masses(p, sigma, lo, hi):
    """Exact (P, Q) masses of the loss interval [lo, hi) of the replace-one pair."""
    p, s = mp.mpf(p), mp.mpf(sigma)
    xa, xb = mp_point(lo, p, s), mp_point(hi, p, s)
    m0, up, down = (normal_mass((xa - shift) / s, (xb - shift) / s) for shift in (0, 1, -1))
    return (1 - p) * m0 + p * up, (1 - p) * m0 + p * down


def replace_one_delta(p, sigma, eps):
    """One step of the replace-one pair: the integral over L(x) > eps of P(x) - e^eps Q(x)."""
    p, s, e = mp.mpf(p), mp.mpf(sigma), mp.mpf(eps)
    x0 = mp_point(eps, p, s)

    def gap(x):
        P = (1 - p) * mp.npdf(x, 0, s) + p * mp.npdf(x, 1, s)
        Q = (1 - p) * mp.npdf(x, 0, s) + p * mp.npdf(x, -1, s)
        return P - mp.exp(e) * Q

    return mp.quad(gap, [x0, x0 + s, x0 + 4 * s, x0 + 12 * s, mp.inf])


def attained_delta(g, sigma, eps):
    """One step of fixed-size batches on the attained pair A = (1 - g) N(0, s^2) + g N(2, s^2),
    B = N(0, s^2) (s = sigma): the larger hockey-stick divergence of its two orders, by mp.quad.
    A/B = 1 - g + g e^((2x - 2)/s^2) is increasing, so each order's set {ratio > e^eps} is a half line."""
    g, s, e = mp.mpf(g), mp.mpf(sigma), mp.mpf(eps)

    def A(x):
        return (1 - g) * mp.npdf(x, 0, s) + g * mp.npdf(x, 2, s)

    def B(x):
        return mp.npdf(x, 0, s)

    def point(level):  # A/B = level; None where A/B > level everywhere
        inner = (level - 1 + g) / g
        return 1 + s * s / 2 * mp.log(inner) if inner > 0 else None

    x_ab = point(mp.exp(e))  # A > e^eps B  <=>  x > x_ab
    forward = (1 - mp.exp(e) if x_ab is None else
               mp.quad(lambda x: A(x) - mp.exp(e) * B(x), [x_ab, x_ab + s, x_ab + 4 * s, x_ab + 12 * s, mp.inf]))
    x_ba = point(mp.exp(-e))  # B > e^eps A  <=>  x < x_ba
    backward = (mp.mpf(0) if x_ba is None else
                mp.quad(lambda x: B(x) - mp.exp(e) * A(x), [-mp.inf, x_ba - 12 * s, x_ba - 4 * s, x_ba - s, x_ba]))
    return max(forward, backward)


def poisson_profiles(p, sigma, eps):
    """(delta_remove(eps), delta_add(eps)) of one step of the Poisson add-remove pair, from normal tails."""
    p, s, e = mp.mpf(p), mp.mpf(sigma), mp.mpf(eps)
    x = mp_x(e, p, s * s)  # remove: L > eps <=> X > x (-inf below the support)
    remove = (1 - p) * mp.ncdf(-x / s) + p * mp.ncdf(-(x - 1) / s) - mp.exp(e) * mp.ncdf(-x / s)
    add = mp.mpf(0)
    if p == 1 or mp.exp(-e) > 1 - p:
        y = mp_x(-e, p, s * s)  # add: L' > eps <=> X < y
        add = mp.ncdf(y / s) - mp.exp(e) * ((1 - p) * mp.ncdf(y / s) + p * mp.ncdf((y - 1) / s))
    return remove, add


def _mass(log_value: float):
    return mp.exp(mp.mpf(float(log_value))) if math.isfinite(log_value) else mp.mpf(0)


def _within(exact, log_value: float, rel: float) -> bool:
    """The exact mass lies in [e^log (1 - rel), e^log (1 + rel)] as returned (no slack); rel >= 1:
    only the upper end is claimed."""
    value = _mass(log_value)
    if exact > value * (1 + mp.mpf(float(rel))):
        return False
    return rel >= 1 or exact >= value * (1 - mp.mpf(float(rel)))


# ---------------------------------------------------------------------------------------------
# ReplaceOnePair: the inverse of the loss, cell masses, moments
# ---------------------------------------------------------------------------------------------

LOSSES = [-50.0, -1.0, -1e-6, 0.0, 1e-6, 0.5, 5.0, 50.0, 700.0]
REPLACE_ONE_CASES = [(p, sigma) for p in (1e-5, 0.004, 0.5, 1.0) for sigma in (0.3, 1.1, 5.0)]


@pytest.mark.parametrize("p, sigma", REPLACE_ONE_CASES)
def test_replace_one_inverse_is_within_its_error_bound(p, sigma):
    pair = ReplaceOnePair(p, sigma)
    x, err = pair.inverse(np.array(LOSSES))
    assert np.all(np.isfinite(x)) and np.all(err >= 0.0)
    assert np.all(np.diff(x) > 0.0)  # L is increasing, so is its inverse
    with mp.workdps(40):
        for loss, value, bound in zip(LOSSES, x, err):
            point = mp.mpf(float(value))
            # L at the returned point misses the loss by at most the slope times the bound ...
            miss = (mp_loss(point, p, sigma) - mp.mpf(loss)) / mp_loss_slope(point, p, sigma)
            assert abs(miss) <= bound, (loss, value, bound, miss)
            # ... and the returned point is within the bound of the exact one
            assert abs(point - mp_point(loss, p, sigma)) <= bound, (loss, value, bound)


@pytest.mark.parametrize("p, sigma", [(0.004, 1.1), (0.5, 0.3), (1.0, 5.0)])
def test_replace_one_inverse_is_odd_and_handles_infinite_losses(p, sigma):
    pair = ReplaceOnePair(p, sigma)
    losses = np.array(LOSSES)
    x, err = pair.inverse(losses)
    x_neg, err_neg = pair.inverse(-losses)
    assert np.array_equal(x_neg, -x) and np.array_equal(err_neg, err)
    ends, ends_err = pair.inverse(np.array([-math.inf, math.inf]))
    assert list(ends) == [-math.inf, math.inf] and list(ends_err) == [0.0, 0.0]
    assert pair.support == (-math.inf, math.inf)


# Loss cells: both infinite ends, the far tails, cells of 2^-30 and 2^-20 at 0 (where the x-interval
# is tiny and the masses are differences of nearly equal tails), the bulk and the shoulders.
CELL_EDGES = np.array([-math.inf, -30.0, -2.0, -0.25, -(2.0**-20), 0.0, 2.0**-30, 2.0**-20, 1e-3, 0.1, 1.0, 4.0, 30.0,
                       math.inf])


@pytest.mark.slow
@pytest.mark.parametrize(
    "p, sigma",
    slow_cases(REPLACE_ONE_CASES, 0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11),
)
def test_replace_one_cell_masses_contain_the_exact_ones(p, sigma):
    pair = ReplaceOnePair(p, sigma)
    cells = pair.cell_masses(CELL_EDGES)
    for i in range(len(CELL_EDGES) - 1):
        exact_p, exact_q = replace_one_masses(p, sigma, float(CELL_EDGES[i]), float(CELL_EDGES[i + 1]))
        assert _within(exact_p, cells.log_p[i], cells.rel_p[i]), ("P", CELL_EDGES[i], exact_p, cells.log_p[i], cells.rel_p[i])
        assert _within(exact_q, cells.log_q[i], cells.rel_q[i]), ("Q", CELL_EDGES[i], exact_q, cells.log_q[i], cells.rel_q[i])


def test_replace_one_cells_mirror_each_other():
    # L under Q is -L under P: the Q-mass of [a, b) is the P-mass of (-b, -a]
    pair = ReplaceOnePair(0.004, 1.1)
    finite = CELL_EDGES[1:-1]
    cells = pair.cell_masses(finite)
    mirrored = pair.cell_masses(-finite[::-1])
    np.testing.assert_allclose(cells.log_q, mirrored.log_p[::-1], rtol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("p, sigma", [pytest.param(0.004, 1.1, marks=pytest.mark.slow), pytest.param(0.3, 0.7, marks=pytest.mark.slow), pytest.param(1.0, 2.0, marks=pytest.mark.slow), (1e-5, 5.0)])
def test_replace_one_moments_and_mgf(p, sigma):
    pair = ReplaceOnePair(p, sigma)
    P, s = mp.mpf(p), mp.mpf(sigma)

    def density(x):
        return (1 - P) * mp.npdf(x, 0, s) + P * mp.npdf(x, 1, s)

    points = [-40 * s, -5 * s, -1, 0, 1, 5 * s, 40 * s]
    with mp.workdps(30):
        mean = mp.quad(lambda x: density(x) * mp_loss(x, p, sigma), points)
        variance = mp.quad(lambda x: density(x) * (mp_loss(x, p, sigma) - mean) ** 2, points)
        mgf = {}
        for lam in (0.5, 2.0, 10.0):
            def tilted(x, lam=lam):
                return density(x) * mp.exp(lam * mp_loss(x, p, sigma))

            mgf[lam] = mp.log(mp.quad(tilted, points + [lam * 4 * s * s + 40 * s]))
    got_mean, got_variance = pair.moments()
    assert got_mean == pytest.approx(float(mean), rel=1e-9)
    assert got_variance == pytest.approx(float(variance), rel=1e-9)
    for lam, exact in mgf.items():
        # log E_P[e^(lam L)] near 0 is a log of a sum near 1: its error is absolute, ~1e-16
        assert pair.log_mgf(lam) == pytest.approx(float(exact), rel=1e-9, abs=1e-14)
    if p == 1.0:  # mu-GDP with mu = 2/sigma: L ~ N(mu^2/2, mu^2) under P
        mu2 = 4.0 / sigma**2
        assert (got_mean, got_variance) == pytest.approx((mu2 / 2, mu2), rel=1e-12)


# ---------------------------------------------------------------------------------------------
# One step of replace-one and of fixed-size batches against exact values
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_replace_one_one_step_reference_value_of_the_issue():
    # Lebeda, Regehr, Kamath, Steinke 2024, arXiv 2405.20769: replace-one under Poisson sampling has
    # the tight pair (1 - p) N(0, s^2) + p N(1, s^2) vs (1 - p) N(0, s^2) + p N(-1, s^2), far tighter
    # than doubling the sensitivity (the 2C route: the add-remove pair at noise sigma/2). The issue
    # quotes delta = 8.94e-6 at p = 0.004, sigma = 1.1, eps = 0.05, one step.
    exact = replace_one_delta(0.004, 1.1, 0.05)
    assert float(exact) == pytest.approx(8.94e-6, rel=1e-3)
    # the same by normal tails: (1 - p)(1 - e^eps) Phi(-x0/s) + p Phi(-(x0 - 1)/s) - e^eps p Phi(-(x0 + 1)/s)
    p, s, e = mp.mpf(0.004), mp.mpf(1.1), mp.mpf(0.05)
    x0 = mp_point(0.05, p, s)
    tails = (1 - p) * (1 - mp.exp(e)) * mp.ncdf(-x0 / s) + p * mp.ncdf(-(x0 - 1) / s) - mp.exp(e) * p * mp.ncdf(-(x0 + 1) / s)
    assert abs(exact - tails) <= mp.mpf(10) ** -30 * tails
    result = tight_delta([replace_one(0.004, 1.1, 1)], 0.05)
    assert result.delta_lower <= exact <= result.delta_upper
    assert result.delta_upper - result.delta_lower <= DEFAULT_ACCURACY * result.delta_upper
    assert result.binding == "symmetric" and result.warnings == ()
    # the 2C route: about 6.7e-4, 75 times as much
    doubled = tight_delta([gaussian(0.004, 0.55, 1)], 0.05)
    exact_doubled = exact_one_step_delta(0.004, 0.55, 0.05)
    assert float(exact_doubled) == pytest.approx(6.709e-4, rel=1e-3)
    assert doubled.delta_lower <= exact_doubled <= doubled.delta_upper
    assert doubled.delta_lower > 50 * result.delta_upper


@pytest.mark.parametrize("p, sigma, eps", [pytest.param(0.3, 0.7, 0.5, marks=pytest.mark.slow), (1e-3, 2.0, 0.01), (0.05, 0.8, 2.0), pytest.param(1.0, 1.0, 1.0, marks=pytest.mark.slow)])
def test_replace_one_one_step_delta_bracketed(p, sigma, eps):
    exact = replace_one_delta(p, sigma, eps)
    result = tight_delta([replace_one(p, sigma, 1)], eps)
    assert result.delta_lower <= exact <= result.delta_upper
    if p == 1.0:  # the Gaussian mechanism at sensitivity 2: (2/sigma)-GDP
        assert float(exact) == pytest.approx(gdp.delta_for_epsilon(eps, 2.0 / sigma), rel=1e-9)


@pytest.mark.parametrize("g, sigma", [(0.004, 1.1), pytest.param(0.1, 2.0, marks=pytest.mark.slow),
                                      pytest.param(0.3, 0.8, marks=pytest.mark.slow)])
@pytest.mark.parametrize("eps", [pytest.param(0.0, marks=pytest.mark.slow), 0.05, pytest.param(2.0, marks=pytest.mark.slow)])
def test_uniform_one_step_delta_bracketed(g, sigma, eps):
    exact_attained = attained_delta(g, sigma, eps)
    result = tight_delta([uniform(g, sigma, 1)], eps)
    assert result.binding == "symmetric"
    assert result.delta_lower <= exact_attained <= result.delta_upper
    # The symmetrised pair's profile is max(delta_remove, delta_add) of the Poisson pair at (g, sigma/2)
    # (the attained pair in units of its shift 2), which at eps >= 0 is the remove order's: the upper
    # bound holds it.
    remove, add = poisson_profiles(g, sigma / 2, eps)
    assert add <= remove
    symmetrised = max(remove, add)
    assert abs(symmetrised - exact_attained) <= mp.mpf(10) ** -25 * symmetrised
    assert result.delta_upper >= symmetrised


# ---------------------------------------------------------------------------------------------
# SymmetrisedPair: a partition of the line, the atom at 0, the profile
# ---------------------------------------------------------------------------------------------

SYMMETRISED_CASES = [(0.004, 0.55), (0.3, 1.0), (0.05, 2.5)]


def symmetrised(g: float, s: float) -> SymmetrisedPair:
    return SymmetrisedPair(GaussianPair(g, s, "remove"), GaussianPair(g, s, "add"))


def _partition() -> np.ndarray:
    inner = np.concatenate([np.linspace(-20.0, 20.0, 4001), [-0.01, 0.0, 0.01]])
    return np.unique(np.concatenate([[-math.inf], inner, [math.inf]]))


@pytest.mark.parametrize("g, s", SYMMETRISED_CASES)
def test_symmetrised_cells_partition_the_line(g, s):
    cells = symmetrised(g, s).cell_masses(_partition())
    assert abs(math.fsum(np.exp(cells.log_p)) - 1.0) <= 1e-12
    assert abs(math.fsum(np.exp(cells.log_q)) - 1.0) <= 1e-12


@pytest.mark.parametrize("g, s", SYMMETRISED_CASES + [(1e-5, 0.3), (0.999, 10.0)])
def test_symmetrised_atom(g, s):
    pair = symmetrised(g, s)
    G, S = mp.mpf(g), mp.mpf(s)
    formula = (1 - G) * mp.erf(1 / (2 * S * mp.sqrt(2)))
    assert float(mp.exp(pair.log_atom)) == pytest.approx(float(formula), rel=1e-14)
    # independently: what the remove pair's P puts above loss 0 and the add pair's P below it leave over
    # (both losses change sign at x = 1/2), the same under Q
    h = 1 / (2 * S)
    rest_p = 1 - ((1 - G) * mp.ncdf(-h) + G * mp.ncdf(h)) - mp.ncdf(-h)
    rest_q = 1 - mp.ncdf(-h) - ((1 - G) * mp.ncdf(-h) + G * mp.ncdf(h))
    assert abs(rest_p - formula) <= mp.mpf(10) ** -40 and abs(rest_q - formula) <= mp.mpf(10) ** -40
    # the cell holding 0 carries it, in P and in Q, beside the remove pair's masses above 0 and the add
    # pair's below
    tiny = 2.0**-40
    cell = pair.cell_masses(np.array([-tiny, tiny]))
    above, below = gaussian_masses(g, s, "remove", 0.0, tiny), gaussian_masses(g, s, "add", -tiny, 0.0)
    assert _within(formula + above[0] + below[0], cell.log_p[0], cell.rel_p[0])
    assert _within(formula + above[1] + below[1], cell.log_q[0], cell.rel_q[0])


def test_symmetrised_no_atom_without_subsampling():
    pair = symmetrised(1.0, 2.0)
    assert pair.log_atom == -math.inf


@pytest.mark.slow
@pytest.mark.parametrize("g, s", slow_cases(SYMMETRISED_CASES, 0, 1))
def test_symmetrised_profile_is_the_larger_of_the_two(g, s):
    edges = _partition()
    cells = symmetrised(g, s).cell_masses(edges)
    P = [mp.exp(mp.mpf(float(v))) for v in cells.log_p]
    Q = [mp.exp(mp.mpf(float(v))) for v in cells.log_q]
    for eps in (-0.01, 0.0, 0.01):
        # eps is an edge, so every cell lies on one side of it and sum_cells (P - e^eps Q)_+ is exact
        from_cells = mp.fsum(max(p - mp.exp(eps) * q, 0) for p, q in zip(P, Q))
        remove, add = poisson_profiles(g, s, eps)
        assert abs(from_cells - max(remove, add)) <= 1e-9 * max(remove, add), (eps, from_cells, remove, add)


@pytest.mark.parametrize("g, s", SYMMETRISED_CASES)
@pytest.mark.parametrize("edges", [
    np.linspace(-3.0, 5.0, 801), np.linspace(0.1, 5.0, 50), np.linspace(-5.0, -0.1, 50), np.linspace(-5.0, 0.0, 51),
    np.linspace(0.0, 5.0, 51), np.array([-math.inf, -1.0, 0.0, 1.0, math.inf]), np.array([-math.inf, math.inf]),
    np.array([-math.inf, 0.0]), np.array([0.0, math.inf]), np.array([-0.5, -0.25]),
])
def test_symmetrised_halves_are_asked_only_for_their_cells(g, s, edges):
    """Each half computes the cells it has a part of; the result is the one of asking both halves
    for every cell (the other cells are [0, 0) for it, empty), bit for bit."""
    from dpcalc.core.pld.pairs.base import U as unit
    from dpcalc.core.pld.pairs.base import _combine

    pair = symmetrised(g, s)
    cells = pair.cell_masses(edges)
    below, above = pair.add.cell_masses(np.minimum(edges, 0.0)), pair.remove.cell_masses(np.maximum(edges, 0.0))
    log_p, rel_p = (np.array(v, dtype=float) for v in _combine(below.log_p, below.rel_p, above.log_p, above.rel_p))
    log_q, rel_q = (np.array(v, dtype=float) for v in _combine(below.log_q, below.rel_q, above.log_q, above.rel_q))
    index = int(np.searchsorted(edges, 0.0, side="right")) - 1
    if 0 <= index < len(edges) - 1:
        log_p[index], rel_p[index] = _combine(log_p[index], rel_p[index], pair.log_atom, 8.0 * unit)
        log_q[index], rel_q[index] = _combine(log_q[index], rel_q[index], pair.log_atom, 8.0 * unit)
    for mine, reference in ((cells.log_p, log_p), (cells.rel_p, rel_p), (cells.log_q, log_q), (cells.rel_q, rel_q)):
        assert np.array_equal(mine, reference)


def test_symmetrised_pair_takes_one_mechanism():
    with pytest.raises(ValueError, match="symmetrised pair"):
        SymmetrisedPair(GaussianPair(0.01, 1.0, "add"), GaussianPair(0.01, 1.0, "remove"))
    with pytest.raises(ValueError, match="symmetrised pair"):
        SymmetrisedPair(GaussianPair(0.01, 1.0, "remove"), GaussianPair(0.01, 1.1, "add"))


# ---------------------------------------------------------------------------------------------
# The accountant under each relation
# ---------------------------------------------------------------------------------------------


def _numbers(result):
    """A result without its echo of the phases."""
    return dataclasses.replace(result, phases=())


@pytest.mark.parametrize(
    "phase",
    [pytest.param(gaussian(0.004, 1.1, 10_000), marks=pytest.mark.slow), gaussian(0.05, 0.8, 300), gaussian(1.0, 2.0, 50),
     pytest.param(Phase("laplace", 0.05, None, 1.0, 100), marks=pytest.mark.slow)],
    ids=["design-card", "p0.05", "full-batch", "laplace"],
)
def test_zero_out_equals_add_remove_under_poisson(phase):
    zero_out = dataclasses.replace(phase, neighbours="zero-out")
    assert _numbers(tight_epsilon([zero_out], 1e-5)) == _numbers(tight_epsilon([phase], 1e-5))
    assert _numbers(tight_delta([zero_out], 1.0)) == _numbers(tight_delta([phase], 1.0))


@pytest.mark.parametrize("sigma, steps, delta", [(1.0, 1, 1e-5), (2.0, 100, 1e-5), (5.0, 1000, 1e-8), (0.8, 10, 1e-3)])
def test_replace_one_without_subsampling_matches_gdp(sigma, steps, delta):
    exact = gdp.epsilon_for_delta(delta, 2.0 * math.sqrt(steps) / sigma)
    for phase in (replace_one(1.0, sigma, steps), uniform(1.0, sigma, steps)):
        result = tight_epsilon([phase], delta)
        assert brackets(result.epsilon_lower, exact, result.epsilon_upper, rtol=GDP_RTOL)
        assert result.epsilon_upper - result.epsilon_lower <= DEFAULT_ACCURACY * result.epsilon_upper
        assert result.binding == "symmetric" and result.warnings == ()


def test_replace_one_full_batch_phases_match_gdp():
    phases = [replace_one(1.0, 3.0, 40), replace_one(1.0, 6.0, 300), replace_one(1.0, 1.5, 7)]
    mu = 2.0 * math.sqrt(40 / 9 + 300 / 36 + 7 / 2.25)
    result = tight_epsilon(phases, 1e-6)
    assert brackets(result.epsilon_lower, gdp.epsilon_for_delta(1e-6, mu), result.epsilon_upper)


def test_replace_one_design_card():
    # the commit message and README: 3.2267 on the design card, against 11.621 with the doubled sensitivity
    result = tight_epsilon([replace_one(0.004, 1.1, 10_000)], 1e-5)
    assert result.epsilon_upper == pytest.approx(3.2267, abs=1e-3)
    assert result.epsilon_upper - result.epsilon_lower <= DEFAULT_ACCURACY * result.epsilon_upper
    assert result.binding == "symmetric" and result.warnings == ()


@pytest.mark.parametrize("p, sigma, steps", [(0.05, 2.0, 100), (0.02, 1.5, 300)])
def test_uniform_lower_bound_is_the_attained_pair(p, sigma, steps):
    result = tight_epsilon([uniform(p, sigma, steps)], 1e-5)
    attained = tight_epsilon([gaussian(p, sigma / 2, steps)], 1e-5)  # Poisson add-remove at sigma/2
    assert result.binding == "symmetric"
    assert result.epsilon_lower == pytest.approx(attained.epsilon_lower, rel=1e-3)
    assert result.epsilon_lower <= attained.epsilon_upper
    # the two-part pair dominates the attained one: its upper bound is above the attained pair's epsilon
    assert result.epsilon_upper >= attained.epsilon_lower
    # the gap is between the pairs, not numerical, and a warning says so
    assert result.epsilon_upper - result.epsilon_lower > DEFAULT_ACCURACY * result.epsilon_upper
    assert len(result.warnings) == 1 and "gap between the pair" in result.warnings[0]
    # fixed-size batches cost more than Poisson replace-one at the same p and sigma
    assert result.epsilon_lower > tight_epsilon([replace_one(p, sigma, steps)], 1e-5).epsilon_upper


# The property of the issue: for random (p, sigma, T) replace-one under Poisson sampling has an ordered
# interval, is no worse than the 2C route (add-remove at sigma/2), no better than add-remove at sigma,
# and more noise never costs more. 1e-3 is the accuracy: each upper bound is within it of the truth.
@pytest.mark.slow
@settings(max_examples=15, deadline=None, derandomize=DERANDOMIZE)
@given(
    p=st.floats(-3.0, -1.0).map(lambda e: 10.0**e),
    sigma=st.floats(0.6, 3.0),
    steps=st.integers(1, 2000),
    more_noise=st.floats(1.0, 2.0),
)
def test_property_replace_one_between_add_remove_and_the_2c_route(p, sigma, steps, more_noise):
    result = tight_epsilon([replace_one(p, sigma, steps)], 1e-5)
    assert 0.0 <= result.epsilon_lower <= result.epsilon_upper < math.inf
    doubled = tight_epsilon([gaussian(p, sigma / 2, steps)], 1e-5)
    assert result.epsilon_upper <= doubled.epsilon_upper * (1 + 1e-3)
    add_remove = tight_epsilon([gaussian(p, sigma, steps)], 1e-5)
    assert result.epsilon_upper >= add_remove.epsilon_lower * (1 - 1e-3)
    noisier = tight_epsilon([replace_one(p, sigma * more_noise, steps)], 1e-5)
    assert noisier.epsilon_upper <= result.epsilon_upper * (1 + 1e-3)


# ---------------------------------------------------------------------------------------------
# Refusals
# ---------------------------------------------------------------------------------------------


def test_phase_fields_and_shift():
    assert (gaussian(0.01, 1.0, 5).sampling, gaussian(0.01, 1.0, 5).neighbours) == ("poisson", "add-remove")
    assert gaussian(0.01, 1.0, 5).shift == 1.0
    assert gaussian(0.01, 1.0, 5, neighbours="zero-out").shift == 1.0
    assert replace_one(0.01, 1.0, 5).shift == 2.0
    assert uniform(0.01, 1.0, 5).shift == 2.0
    # fixed-size batches: the added record takes another's place (add-remove); zero-out changes one record
    assert Phase("gaussian", 0.01, 1.0, None, 5, sampling="uniform").shift == 2.0
    assert Phase("gaussian", 0.01, 1.0, None, 5, sampling="uniform", neighbours="zero-out").shift == 1.0


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(sampling="shuffle", epoch_steps=100), "shuffled batches are accounted under zero-out or replace-one"),
        (dict(sampling="bogus"), "sampling must be one of poisson, uniform, shuffle, allocation, got sampling='bogus'"),
        (dict(neighbours="replace_one"), "neighbours must be one of add-remove, replace-one, zero-out"),
        (dict(neighbours="Replace-One"), "neighbours must be one of"),
    ],
)
def test_phase_refuses_gaussian_combinations(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Phase("gaussian", 0.01, 1.0, None, 10, **kwargs)


def test_fixed_size_batches_of_every_record_under_add_remove_are_refused():
    """b = n: a neighbour with one record fewer has no batch of n."""
    with pytest.raises(ValueError, match="fixed-size batches under add-remove need a batch smaller"):
        Phase("gaussian", 1.0, 1.0, None, 10, sampling="uniform")
    assert Phase("gaussian", 1.0, 1.0, None, 10, sampling="uniform", neighbours="zero-out").shift == 1.0


@pytest.mark.parametrize(
    "kwargs",
    [dict(neighbours="replace-one"), dict(sampling="uniform", neighbours="replace-one"), dict(sampling="uniform")],
)
def test_phase_refuses_laplace_combinations(kwargs):
    with pytest.raises(ValueError, match=r"laplace|uniform sampling"):
        Phase("laplace", 0.5, None, 2.0, 10, **kwargs)


def test_phase_accepts_laplace_zero_out():
    assert Phase("laplace", 0.5, None, 2.0, 10, neighbours="zero-out").neighbours == "zero-out"


@pytest.mark.parametrize("phase", [
    replace_one(0.01, 1.0, 10),
    replace_one(1.0, 1.0, 10),
    Phase("gaussian", 0.01, 1.0, None, 10, sampling="shuffle", neighbours="zero-out", epoch_steps=100),
    Phase("gaussian", 0.01, 1.0, None, 10, examples_per_user=2),
])
def test_rdp_refuses_poisson_replace_one_shuffle_and_user_level(phase):
    with pytest.raises(ValueError, match="RDP accountant covers Poisson sampling"):
        rdp_accountant([phase], delta=1e-5)
    with pytest.raises(ValueError, match="RDP accountant covers Poisson sampling"):
        rdp_accountant([phase], epsilon=1.0)


def test_rdp_zero_out_equals_add_remove():
    plain = rdp_accountant([gaussian(0.01, 1.0, 10)], delta=1e-5)
    zero_out = rdp_accountant([gaussian(0.01, 1.0, 10, neighbours="zero-out")], delta=1e-5)
    assert (zero_out.epsilon, zero_out.order) == (plain.epsilon, plain.order)


@pytest.mark.parametrize(
    "relations",
    [("add-remove", "replace-one"), ("add-remove", "zero-out"), ("zero-out", "replace-one")],
)
def test_phases_of_a_run_share_one_relation(relations):
    phases = [gaussian(0.01, 1.0, 10, neighbours=relations[0]), gaussian(0.02, 2.0, 5, neighbours=relations[1])]
    message = f"share one neighbour relation, got {', '.join(sorted(relations))}"
    with pytest.raises(ValueError, match=message):
        check_phases(phases)
    with pytest.raises(ValueError, match=message):
        tight_epsilon(phases, 1e-5)
    with pytest.raises(ValueError, match=message):
        tight_delta(phases, 1.0)


@pytest.mark.slow
def test_poisson_and_uniform_phases_may_share_replace_one():
    phases = [replace_one(0.01, 1.0, 10), uniform(0.01, 1.0, 10)]
    assert check_phases(phases) == tuple(phases)
    result = tight_epsilon(phases, 1e-5)
    assert result.epsilon_lower <= result.epsilon_upper < math.inf
