"""The harness itself: its laws are probability laws with the right batch sums, and its brackets
contain closed-form deltas (the Gaussian pair's, docs/mathematics.md §1), in one and two dimensions."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from tests.conformance.exact import gaussian_delta
from tests.soundness import enumeration as E


@pytest.mark.parametrize("scheme", [
    E.Scheme("poisson", 2, rate=Fraction(1, 3)), E.Scheme("uniform", 2, batch=2), E.Scheme("shuffle", 2, batch=2),
    E.Scheme("allocation", 1, epoch_steps=3), E.Scheme("truncated", 2, rate=Fraction(1, 2), cap=2),
])
def test_every_law_is_a_probability_law_with_the_right_mean(scheme):
    counts = (2, 1, 3)
    means, weights = E.law(scheme, counts)
    assert math.isclose(weights.sum(), 1.0, rel_tol=1e-12) and (weights > 0).all()
    if scheme.name in ("poisson", "uniform", "shuffle", "allocation"):
        # each record is used with the same chance in every step: the expected sum is (+1 - 1 count) times it
        share = {"poisson": 1 / 3, "uniform": 2 / 6, "shuffle": 2 / 6, "allocation": 1 / 3}[scheme.name]
        assert np.allclose(weights @ means, (counts[2] - counts[0]) * share)


def test_shuffle_batches_are_a_partition():
    """Four records at -1 and one at +1, batches of 3: the larger dataset's two batch sums are
    (-1, -2) when the +1 record is in the first batch (chance 3/5) and (-3, 0) otherwise; the smaller
    dataset's are always (-3, -1)."""
    scheme = E.Scheme("shuffle", 1, batch=3)
    assert E._epoch_shuffle((4, 0, 1), 3) == {(-1, -2): Fraction(3, 5), (-3, 0): Fraction(2, 5)}
    means, weights = E.law(scheme, (4, 0, 0))
    assert means.tolist() == [[-3, -1]] and weights.tolist() == [1.0]


def test_truncation_keeps_a_uniform_subset():
    """Two records at +1 and one at -1, all drawn (p = 1), a cap of 2: the kept pair is uniform."""
    law = E._step_truncated((1, 0, 2), Fraction(1), 2)
    assert {key: weight for key, weight in law.items() if weight} == {2: Fraction(1, 3), 0: Fraction(2, 3)}


@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("eps", [0.0, 0.5, 2.0])
def test_the_one_dimensional_bracket_holds_the_gaussian_delta_tightly(sigma, eps):
    bracket = E.delta_1d((np.array([1.0]), np.array([1.0])), (np.array([0.0]), np.array([1.0])), sigma, eps)
    exact = gaussian_delta(1 / sigma, eps) if eps > 0 else math.erf(1 / (2 * sigma * math.sqrt(2)))
    assert bracket.lower <= exact <= bracket.upper
    assert bracket.upper - bracket.lower < 1e-12


def test_the_one_dimensional_bracket_finds_every_region():
    """A pair whose f = p - e^eps q is positive on three separate intervals: the bracket matches a
    fine midpoint sum of f+ and is narrow."""
    p = (np.array([-3.0, 0.0, 3.0]), np.array([0.3, 0.4, 0.3]))
    q = (np.array([-1.5, 1.5]), np.array([0.5, 0.5]))
    bracket = E.delta_1d(p, q, 0.6, 0.3)
    x = np.linspace(-12, 12, 400_001)
    def density(m, w):
        return (w[None, :] * np.exp(-0.5 * ((x[:, None] - m[None, :]) / 0.6) ** 2)).sum(axis=1) / (
            0.6 * math.sqrt(2 * math.pi))
    riemann = float(np.maximum(density(*p) - math.exp(0.3) * density(*q), 0).sum() * (x[1] - x[0]))
    assert bracket.upper - bracket.lower < 1e-12
    assert math.isclose(riemann, bracket.lower, rel_tol=1e-6)


@pytest.mark.parametrize("sigma", [0.5, 2.0])
def test_the_two_dimensional_bracket_holds_the_gaussian_delta(sigma):
    """N((1, 1), sigma^2 I) against N(0, sigma^2 I) is sqrt(2)/sigma-GDP."""
    bracket = E.delta_2d((np.array([[1, 1]]), np.array([1.0])), (np.array([[0, 0]]), np.array([1.0])),
                         (sigma, sigma), 1.0)
    exact = gaussian_delta(math.sqrt(2) / sigma, 1.0)
    assert bracket.lower <= exact <= bracket.upper
    assert bracket.upper - bracket.lower <= 0.05 * exact


def test_projections_are_lower_bounds_and_the_sum_is_the_best_for_a_diagonal_shift():
    p, q = (np.array([[1, 1, 1]]), np.array([1.0])), (np.array([[0, 0, 0]]), np.array([1.0]))
    exact = gaussian_delta(math.sqrt(3), 1.0)
    bracket = E.bracket(p, q, 1.0, 1.0)
    assert bracket.lower <= exact and math.isclose(bracket.lower, exact, rel_tol=1e-9)
