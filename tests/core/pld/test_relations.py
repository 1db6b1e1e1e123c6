"""Neighbour relations and fixed-size batches in the PLD accountant (docs/mathematics.md §3):
the replace-one pair, the symmetrised two-part pair, the roles of the directions, refusals."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from dpcalc.core import gdp, pld
from dpcalc.core.phases import Phase
from dpcalc.core.pld.model import check_phases, directions_of
from dpcalc.core.pld.pairs import GaussianPair, ReplaceOnePair, SymmetrisedPair
from dpcalc.core.rdp import rdp_accountant


def gaussian(p: float, sigma: float, steps: int, **relation: str) -> Phase:
    return Phase("gaussian", p, sigma, None, steps, **relation)


def _loss(p: float, sigma: float, x: mp.mpf) -> mp.mpf:
    r = lambda y: (1 - mp.mpf(p)) + mp.mpf(p) * mp.e ** ((y - mp.mpf(1) / 2) / mp.mpf(sigma) ** 2)  # noqa: E731
    return mp.log(r(x)) - mp.log(r(-x))


@pytest.mark.parametrize("p", [1e-5, 0.004, 0.5, 1.0])
@pytest.mark.parametrize("sigma", [0.3, 1.1, 5.0])
def test_replace_one_inverse_within_its_error_bound(p, sigma):
    """x(l) solves L(x) = l to within the returned bound (mpmath, 40 digits)."""
    mp.mp.dps = 40
    pair = ReplaceOnePair(p, sigma)
    losses = np.array([-50.0, -1.0, -1e-6, 0.0, 1e-6, 0.5, 5.0, 50.0])
    xs, errs = pair.inverse(losses)
    for loss, x, err in zip(losses, xs, errs):
        X = mp.mpf(float(x))
        slope = mp.diff(lambda y: _loss(p, sigma, y), X)
        assert abs((_loss(p, sigma, X) - mp.mpf(float(loss))) / slope) <= err


def _exact_delta(log_p, log_q, x0: float, eps: float) -> mp.mpf:
    """delta(eps) = integral over x > x0 of P(x) - e^eps Q(x), x0 where the loss is eps (mpmath)."""
    f = lambda x: mp.e ** log_p(x) - mp.e ** (eps + log_q(x))  # noqa: E731
    return mp.quad(f, [x0, x0 + 3, x0 + 10, mp.inf])


def test_replace_one_one_step_reference():
    """One step at p = 0.004, sigma = 1.1, eps = 0.05: delta = 8.944e-6 with the pair of Lebeda,
    Regehr, Kamath, Steinke 2024 (arXiv 2405.20769), 6.7e-4 with the sensitivity doubled."""
    mp.mp.dps = 30
    p, s, eps = 0.004, 1.1, 0.05
    P, S = mp.mpf(p), mp.mpf(s)
    log_p = lambda x: mp.log((1 - P) * mp.npdf(x, 0, S) + P * mp.npdf(x, 1, S))  # noqa: E731
    log_q = lambda x: mp.log((1 - P) * mp.npdf(x, 0, S) + P * mp.npdf(x, -1, S))  # noqa: E731
    x0 = float(ReplaceOnePair(p, s).inverse(np.array([eps]))[0][0])
    exact = float(_exact_delta(log_p, log_q, x0, eps))
    assert exact == pytest.approx(8.944e-6, rel=1e-3)
    result = pld.tight_delta([gaussian(p, s, 1, neighbours="replace-one")], eps)
    assert result.delta_lower <= exact <= result.delta_upper
    doubled = pld.tight_delta([gaussian(p, s / 2.0, 1)], eps)
    assert doubled.delta_lower > 50 * result.delta_upper


@pytest.mark.slow
def test_uniform_one_step_brackets_the_attained_pair():
    """Fixed-size batches, one step: the attained pair ((1 - g) N(0, s^2) + g N(2, s^2), N(0, s^2))
    has its exact delta (mpmath) inside the certified interval, whose upper end also bounds the
    dominating pair's profile (equal to the attained pair's at eps >= 0)."""
    mp.mp.dps = 30
    g, s = 0.01, 1.0
    G, S = mp.mpf(g), mp.mpf(s)
    log_p = lambda x: mp.log((1 - G) * mp.npdf(x, 0, S) + G * mp.npdf(x, 2, S))  # noqa: E731
    log_q = lambda x: mp.log(mp.npdf(x, 0, S))  # noqa: E731
    ratio = GaussianPair(g, s / 2.0, "remove").ratio
    for eps in (0.0, 0.01, 0.05):
        x0 = 2.0 * float(ratio.inverse(np.array([eps]))[0][0])  # the remove pair at shift 1, noise s/2
        exact = float(_exact_delta(log_p, log_q, x0, eps))
        result = pld.tight_delta([gaussian(g, s, 1, sampling="uniform", neighbours="replace-one")], eps)
        assert result.delta_lower <= exact <= result.delta_upper


def test_symmetrised_pair_masses_atom_and_profile():
    g, s = 0.004, 0.55
    pair = SymmetrisedPair(GaussianPair(g, s, "remove"), GaussianPair(g, s, "add"))
    assert math.exp(pair.log_atom) == pytest.approx((1 - g) * math.erf(1 / (2 * s * math.sqrt(2))), rel=1e-14)
    edges = np.concatenate(([-np.inf], np.linspace(-0.1, 0.1, 4001), [np.inf]))
    cells = pair.cell_masses(edges)
    assert np.exp(cells.log_p).sum() == pytest.approx(1.0, abs=1e-12)
    assert np.exp(cells.log_q).sum() == pytest.approx(1.0, abs=1e-12)

    def profile(masses, eps):
        return float(np.maximum(np.exp(masses.log_p) - math.exp(eps) * np.exp(masses.log_q), 0.0).sum())

    for eps in (-0.01, 0.0, 0.01):
        sides = [profile(side.cell_masses(edges), eps) for side in (pair.remove, pair.add)]
        assert profile(cells, eps) == pytest.approx(max(sides), rel=1e-9)


def test_zero_out_equals_add_remove_under_poisson():
    base = pld.tight_epsilon([gaussian(0.01, 1.0, 500)], 1e-5)
    zero_out = pld.tight_epsilon([gaussian(0.01, 1.0, 500, neighbours="zero-out")], 1e-5)
    assert (zero_out.epsilon_lower, zero_out.epsilon_upper) == (base.epsilon_lower, base.epsilon_upper)


def test_replace_one_without_subsampling_is_gaussian_with_shift_two():
    result = pld.tight_epsilon([gaussian(1.0, 4.0, 20, neighbours="replace-one")], 1e-5)
    exact = gdp.epsilon_for_delta(1e-5, 2.0 * math.sqrt(20) / 4.0)
    assert result.epsilon_lower <= exact <= result.epsilon_upper


@pytest.mark.slow
def test_design_card_orderings():
    """Replace-one lies between add-remove and the doubled sensitivity; fixed-size batches are
    bracketed by the attained pair (= Poisson at sigma/2) and the dominating pair."""
    add_remove = pld.tight_epsilon([gaussian(0.004, 1.1, 10000)], 1e-5)
    replace_one = pld.tight_epsilon([gaussian(0.004, 1.1, 10000, neighbours="replace-one")], 1e-5)
    doubled = pld.tight_epsilon([gaussian(0.004, 0.55, 10000)], 1e-5)
    uniform = pld.tight_epsilon([gaussian(0.004, 1.1, 10000, sampling="uniform", neighbours="replace-one")], 1e-5)
    assert add_remove.epsilon_upper < replace_one.epsilon_lower < replace_one.epsilon_upper < doubled.epsilon_lower
    assert replace_one.binding == uniform.binding == "symmetric"
    assert uniform.epsilon_lower == pytest.approx(doubled.epsilon_lower, rel=1e-3)
    assert uniform.epsilon_upper > doubled.epsilon_upper
    assert any("gap between the pair" in warning for warning in uniform.warnings)


def test_directions_carry_their_roles():
    uniform = directions_of([gaussian(0.01, 1.0, 5, sampling="uniform", neighbours="replace-one")])
    assert [(d.name, d.upper, d.lower) for d in uniform] == [
        ("symmetric", True, False), ("remove", False, True), ("add", False, True)]
    replace = directions_of([gaussian(0.01, 1.0, 5, neighbours="replace-one")])
    assert [(d.name, d.upper, d.lower) for d in replace] == [("symmetric", True, True)]


def test_refusals():
    with pytest.raises(ValueError, match="zero-out or replace-one"):
        gaussian(0.01, 1.0, 5, sampling="shuffle", epoch_steps=100)
    with pytest.raises(ValueError, match="need a batch smaller than the dataset"):
        gaussian(1.0, 1.0, 5, sampling="uniform")
    with pytest.raises(ValueError, match="fixed-size batches under zero-out takes only other Gaussian phases"):
        check_phases([gaussian(0.01, 1.0, 5, sampling="uniform", neighbours="zero-out"),
                      Phase("laplace", 0.1, None, 1.0, 5, neighbours="zero-out")])
    with pytest.raises(ValueError, match="laplace"):
        Phase("laplace", 0.1, None, 1.0, 5, neighbours="replace-one")
    with pytest.raises(ValueError, match="neighbours must be one of"):
        gaussian(0.01, 1.0, 5, neighbours="swap")
    with pytest.raises(ValueError, match="RDP accountant covers Poisson"):
        rdp_accountant([gaussian(0.01, 1.0, 5, neighbours="replace-one")], delta=1e-5)
    with pytest.raises(ValueError, match="one neighbour relation"):
        check_phases([gaussian(0.01, 1.0, 5), gaussian(0.01, 1.0, 5, neighbours="zero-out")])
