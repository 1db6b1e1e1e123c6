"""The Laplace mechanism on counts, histograms and probability vectors (dpcalc.core.mechanisms.laplace).

References: closed forms in mpmath at 50 digits (Dwork, Roth 2014, Thm 3.6 and Fact 3.7; the
simultaneous error over m independent bins is the product (1 - e^(-t/b))^m); Monte Carlo with
numpy (fixed seed, 1e5 draws) for the accuracy claim, which is stated as exact.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core.mechanisms.laplace import SIMPLEX_NOTE, l1_sensitivity, laplace_mechanism
from dpcalc.core.validation import ParameterError

mpmath.mp.dps = 50


def _mp_confidence(error: float, scale: float, bins: int) -> mpmath.mpf:
    return (1 - mpmath.exp(-mpmath.mpf(error) / mpmath.mpf(scale))) ** bins


def test_sensitivity_by_domain_and_relation():
    # Dwork, Roth 2014, Sec. 3.3: a histogram has L1 sensitivity 1 under add/remove, 2 under
    # replace-one; two probability vectors differ by up to 2 in L1.
    assert l1_sensitivity("counts", "add-remove") == 1.0
    assert l1_sensitivity("counts", "replace-one") == 2.0
    assert l1_sensitivity("simplex", "add-remove") == 2.0
    assert l1_sensitivity("real", "add-remove", 3.5) == 3.5
    assert l1_sensitivity("real", "add-remove") == 1.0
    with pytest.raises(ParameterError, match="sensitivity must be not given with domain counts"):
        l1_sensitivity("counts", "add-remove", 2.0)
    with pytest.raises(ParameterError, match="sensitivity must be not given with domain simplex"):
        l1_sensitivity("simplex", "add-remove", 2.0)
    with pytest.raises(ParameterError, match="domain must be one of counts, simplex, real"):
        l1_sensitivity("reals", "add-remove")  # type: ignore[arg-type]


@pytest.mark.parametrize("epsilon, confidence, bins, relation", [
    (1.0, 0.95, 10, "add-remove"), (0.1, 0.999999, 1000, "replace-one"), (5.0, 0.5, 1, "add-remove"),
    (1e-3, 1 - 1e-12, 1e6, "add-remove"),
])
def test_error_from_epsilon_and_confidence_matches_mpmath(epsilon, confidence, bins, relation):
    bins = int(bins)
    result = laplace_mechanism(epsilon=epsilon, confidence=confidence, bins=bins, neighbours=relation)
    sensitivity = 1 if relation == "add-remove" else 2
    # mpmath: t = -b log(1 - confidence^(1/m)), b = sensitivity / epsilon
    b = mpmath.mpf(sensitivity) / mpmath.mpf(epsilon)
    reference = -b * mpmath.log(1 - mpmath.mpf(confidence) ** (mpmath.mpf(1) / bins))
    assert result.error == pytest.approx(float(reference), rel=1e-12)
    assert result.scale == pytest.approx(float(b), rel=1e-15)
    assert result.solved_for == "error"


@pytest.mark.parametrize("scale, error, bins", [(2.0, 6.0, 10), (1.0, 40.0, 1), (0.5, 0.01, 3), (1e-3, 0.05, 10**4)])
def test_confidence_from_scale_and_error_matches_mpmath(scale, error, bins):
    result = laplace_mechanism(scale=scale, error=error, bins=bins, domain="real", sensitivity=1.0)
    reference = _mp_confidence(error, scale, bins)
    assert result.confidence == pytest.approx(float(reference), rel=1e-12)
    assert result.failure_probability == pytest.approx(float(1 - reference), rel=1e-12)
    assert result.epsilon == 1.0 / scale and result.solved_for == "confidence"


def test_epsilon_from_error_and_confidence_matches_mpmath():
    result = laplace_mechanism(error=5.0, confidence=0.99, bins=100, neighbours="replace-one")
    # mpmath: epsilon = sensitivity / b with b = t / (-log(1 - 0.99^(1/100)))
    x = -mpmath.log(1 - mpmath.mpf("0.99") ** (mpmath.mpf(1) / 100))
    assert result.epsilon == pytest.approx(float(2 * x / 5), rel=1e-12)
    assert result.solved_for == "epsilon" and result.sensitivity == 2.0


def test_simplex_uses_sensitivity_two_and_says_so():
    result = laplace_mechanism(epsilon=1.0, confidence=0.9, domain="simplex", bins=10)
    assert result.sensitivity == 2.0 and result.scale == 2.0
    assert result.warnings[0] == SIMPLEX_NOTE and "differ by up to 2 in L1" in SIMPLEX_NOTE


def test_per_bin_failure_probability():
    result = laplace_mechanism(scale=2.0, error=6.0, bins=4)
    assert result.per_bin_failure_probability == pytest.approx(math.exp(-3.0), rel=1e-15)
    assert result.std == pytest.approx(2.0 * math.sqrt(2.0), rel=1e-15)


def test_bad_arguments():
    with pytest.raises(ValueError, match="give epsilon or scale, not both"):
        laplace_mechanism(epsilon=1.0, scale=1.0, error=1.0)
    with pytest.raises(ParameterError, match="bins must be an integer in"):
        laplace_mechanism(epsilon=1.0, error=1.0, bins=0)
    with pytest.raises(ParameterError, match="neighbours must be one of add-remove, replace-one"):
        laplace_mechanism(epsilon=1.0, error=1.0, neighbours="zero-out")  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="scale must be in"):
        laplace_mechanism(scale=-1.0, error=1.0)
    with pytest.raises(ParameterError, match="scale must be at least"):
        laplace_mechanism(scale=1e-320, error=1.0)


@pytest.mark.parametrize("bins, error, scale", [(1, 2.0, 1.0), (10, 5.0, 1.0), pytest.param(100, 12.0, 1.5, marks=pytest.mark.slow)])
def test_monte_carlo_confidence_is_exact(bins, error, scale):
    # The simultaneous confidence is stated as exact: 1e5 draws of `bins` independent Lap(b)
    # coordinates must match it within sampling error (4 standard errors of a proportion).
    result = laplace_mechanism(scale=scale, error=error, bins=bins)
    rng = np.random.default_rng(20260127)
    noise = rng.laplace(0.0, scale, size=(100_000, bins))
    observed = float(np.mean(np.max(np.abs(noise), axis=1) <= error))
    tolerance = 4.0 * math.sqrt(result.confidence * (1 - result.confidence) / 100_000)
    assert abs(observed - result.confidence) <= tolerance


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.floats(1e-3, 1e3), st.floats(1e-6, 1 - 1e-9), st.integers(1, 10**6))
def test_error_round_trip(epsilon, confidence, bins):
    forward = laplace_mechanism(epsilon=epsilon, confidence=confidence, bins=bins)
    back = laplace_mechanism(epsilon=epsilon, error=forward.error, bins=bins)
    assert back.failure_probability == pytest.approx(forward.failure_probability, rel=1e-9)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.floats(1e-3, 1e3), st.floats(1e-6, 1 - 1e-9), st.integers(1, 10**4))
def test_epsilon_round_trip(error, confidence, bins):
    forward = laplace_mechanism(error=error, confidence=confidence, bins=bins, domain="simplex")
    back = laplace_mechanism(epsilon=forward.epsilon, confidence=confidence, bins=bins, domain="simplex")
    assert back.error == pytest.approx(error, rel=1e-9)
