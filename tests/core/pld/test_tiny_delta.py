"""The Laplace mechanism at tiny delta (1e-12 down to 1e-300), against exact profiles in mpmath.

References (50 digits, conftest.py):

* T steps of the Laplace mechanism of scale b without subsampling, eps0 = 1/b. One step's
  privacy loss under P = Lap(0, b) against Q = Lap(1, b) is eps0 with mass 1/2 (x <= 0), -eps0
  with mass e^(-eps0)/2 (x >= 1), and (1 - 2x)/b in between, of density e^(-eps0/2) e^(l/2)/4 on
  (-eps0, eps0). The T-fold loss is a sum over how many steps take each atom; the continuous
  parts of n steps have density (e^(-eps0/2)/4)^n e^(s/2) V_n(s), V_n the volume of the slice
  {sum = s} of the cube (-eps0, eps0)^n (the Irwin-Hall density, a piecewise polynomial), so
  delta(eps) = E[(1 - e^(eps - S))_+] is a finite sum of exact integrals, taken by mpmath's
  quadrature piece by piece. For T = 1 it is 1 - e^((eps - eps0)/2), checked below.
* one step of the Poisson-subsampled Laplace mechanism: delta(eps) = max over the remove pair
  ((1 - p) Lap(0) + p Lap(1) against Lap(0)) and the add pair (the reverse) of
  integral (P - e^eps Q)_+ dx, in closed form outside (0, 1) and by quadrature inside.

The certified interval [lower, upper] contains the true epsilon exactly when
delta(upper) <= delta <= delta(lower) (delta(eps) falls with eps), which is what is checked:
no root of the reference is needed, so the check holds at any delta.
"""

from __future__ import annotations

import math

import mpmath as mp
import pytest

from dpcalc.core.phases import Phase
from dpcalc.core.pld import DEFAULT_ACCURACY, tight_delta, tight_epsilon
from dpcalc.core.pld.accountant import account_grid
from dpcalc.core.pld.api import in_grid

TINY = [1e-14, 1e-30, 1e-100, 1e-300]


def _irwin_hall_slice(n: int, s: mp.mpf, eps0: mp.mpf) -> mp.mpf:
    """Volume of {l in (-eps0, eps0)^n : sum l = s} (density of the sum of n uniforms, scaled)."""
    x = (s + n * eps0) / (2 * eps0)  # the sum of n uniforms on [0, 1]
    if x <= 0 or x >= n:
        return mp.mpf(0)
    total = mp.fsum((-1) ** m * mp.binomial(n, m) * (x - m) ** (n - 1) for m in range(int(mp.floor(x)) + 1))
    return total / mp.factorial(n - 1) * (2 * eps0) ** (n - 1)


def laplace_delta(eps: float, scale: float, steps: int) -> mp.mpf:
    """Exact delta(eps) of `steps` unsubsampled Laplace steps of scale b (module docstring)."""
    eps, eps0 = mp.mpf(eps), 1 / mp.mpf(scale)
    density = mp.exp(-eps0 / 2) / 4
    total = mp.mpf(0)
    for up in range(steps + 1):
        for down in range(steps - up + 1):
            n = steps - up - down
            weight = (mp.factorial(steps) / (mp.factorial(up) * mp.factorial(down) * mp.factorial(n))
                      * mp.mpf(0.5) ** up * (mp.exp(-eps0) / 2) ** down)
            shift = (up - down) * eps0
            if n == 0:
                total += weight * max(mp.mpf(0), -mp.expm1(eps - shift))
                continue
            low = max(-n * eps0, eps - shift)
            high = n * eps0
            if low >= high:
                continue
            knots = [low] + [-n * eps0 + 2 * eps0 * m for m in range(1, n) if low < -n * eps0 + 2 * eps0 * m] + [high]

            def integrand(s: mp.mpf, n: int = n, shift: mp.mpf = shift) -> mp.mpf:
                return density**n * mp.exp(s / 2) * _irwin_hall_slice(n, s, eps0) * -mp.expm1(eps - shift - s)

            total += weight * mp.quad(integrand, knots)
    return total


def subsampled_laplace_delta(eps: float, p: float, scale: float) -> mp.mpf:
    """Exact delta(eps) of one Poisson-subsampled Laplace step: the larger of the two directions."""
    eps, p, b = mp.mpf(eps), mp.mpf(p), mp.mpf(scale)

    def lap(x: mp.mpf, centre: int) -> mp.mpf:
        return mp.exp(-abs(x - centre) / b) / (2 * b)

    def hockey(first, second) -> mp.mpf:
        def gap(x: mp.mpf) -> mp.mpf:
            return max(first(x) - mp.exp(eps) * second(x), mp.mpf(0))
        return mp.quad(gap, [-mp.inf, 0, mp.mpf(0.25), mp.mpf(0.5), mp.mpf(0.75), 1, mp.inf])

    def mixture(x: mp.mpf) -> mp.mpf:
        return (1 - p) * lap(x, 0) + p * lap(x, 1)

    def base(x: mp.mpf) -> mp.mpf:
        return lap(x, 0)

    return max(hockey(mixture, base), hockey(base, mixture))


def _brackets(result, delta_of) -> None:
    assert delta_of(result.epsilon_upper) <= result.delta
    assert delta_of(result.epsilon_lower) >= result.delta


@pytest.mark.slow
def test_reference_one_step_is_the_closed_form():
    # one step: delta(eps) = 1 - e^((eps - eps0)/2) for eps < eps0
    for eps in (0.5, 2.0, 3.9):
        assert laplace_delta(eps, 0.25, 1) == pytest.approx(-mp.expm1((mp.mpf(eps) - 4) / 2), rel=1e-30)


@pytest.mark.parametrize("scale, steps", [(0.25, 1), (1.0, 1), (1.0, 3), (0.5, 2)])
@pytest.mark.parametrize("delta", TINY)
def test_laplace_at_tiny_delta(scale, steps, delta):
    result = tight_epsilon([Phase("laplace", 1.0, None, scale, steps)], delta)
    _brackets(result, lambda eps: laplace_delta(eps, scale, steps))
    # the answer tends to T eps0 from below as delta -> 0 (one step: eps0 + 2 log(1 - delta)): the
    # interval is ~1e-12 wide, within 1e-9 of T eps0, and meets the accuracy (no warning that it falls short)
    assert result.epsilon_upper - result.epsilon_lower <= 1e-9 * result.epsilon_upper
    assert result.epsilon_lower <= steps / scale
    assert result.epsilon_upper == pytest.approx(steps / scale, rel=1e-9)
    assert not any("requested accuracy" in item or "cannot certify" in item for item in result.warnings)


@pytest.mark.parametrize("delta", [pytest.param(1e-8, marks=pytest.mark.slow), 1e-12])
def test_k_fold_laplace_brackets_exact_at_moderate_delta(delta):
    result = tight_epsilon([Phase("laplace", 1.0, None, 1.0, 3)], delta)
    _brackets(result, lambda eps: laplace_delta(eps, 1.0, 3))


@pytest.mark.slow
@pytest.mark.parametrize("p, scale", [(0.5, 1.0), pytest.param(0.1, 0.5, marks=pytest.mark.slow), pytest.param(0.5, 0.25, marks=pytest.mark.slow)])
def test_subsampled_laplace_one_step_at_1e_12(p, scale):
    result = tight_epsilon([Phase("laplace", p, None, scale, 1)], 1e-12)
    _brackets(result, lambda eps: subsampled_laplace_delta(eps, p, scale))
    assert result.epsilon_upper - result.epsilon_lower <= 1e-3 * result.epsilon_upper


@pytest.mark.slow
def test_delta_near_the_largest_loss():
    # delta at epsilon just below T eps0: the atom's share, bracketed
    phases = [Phase("laplace", 1.0, None, 1.0, 3)]
    for eps in (2.9, 2.999):
        result = tight_delta(phases, eps)
        exact = laplace_delta(eps, 1.0, 3)
        assert result.delta_lower <= exact <= result.delta_upper
        assert math.isfinite(result.delta_upper)


@pytest.mark.parametrize("p, scale, steps", [(1.0, 0.25, 1), pytest.param(1.0, 1.0, 3, marks=pytest.mark.slow), pytest.param(0.5, 1.0, 1, marks=pytest.mark.slow),
                                              pytest.param(0.5, 0.1, 1, marks=pytest.mark.slow)])
@pytest.mark.parametrize("delta", [1e-12, 1e-300, *(pytest.param(d, marks=pytest.mark.slow) for d in TINY[:3])])
def test_the_grid_completes_at_any_delta(p, scale, steps, delta):
    # the grid itself (no closed forms): it used to raise FloatingPointError (a coarsening's
    # 0/0 once the tilt reached 1e5); now it completes, and its interval is sound
    phases = (Phase("laplace", p, None, scale, steps),)
    grid, failure = in_grid(lambda: account_grid(phases, delta=delta, epsilon=None, accuracy=DEFAULT_ACCURACY))
    assert failure is None and grid is not None
    if p == 1.0:
        _brackets(grid.result, lambda eps: laplace_delta(eps, scale, steps))
    elif delta == 1e-12:
        _brackets(grid.result, lambda eps: subsampled_laplace_delta(eps, p, scale))
    else:
        # below 1e-12 the reference's quadrature is not trusted: the pure epsilon bounds it above
        assert grid.result.epsilon_lower <= tight_epsilon(phases, delta).epsilon_upper
