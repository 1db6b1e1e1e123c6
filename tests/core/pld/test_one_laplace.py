"""One release of the Laplace mechanism, without subsampling: the PLD accountant answers with its
exact privacy profile (fallback.one_laplace_release; docs/mathematics.md §6).

Reference: delta(eps) = 1 - e^((eps - eps0)/2) below eps0 = 1/b, 0 from eps0 on, and its inverse
eps(delta) = max(0, eps0 + 2 log(1 - delta)), both in mpmath at 50 digits. The certified interval
must contain them and be as narrow as the floating-point rounding (1e-12 relative or absolute).
"""

from __future__ import annotations

import mpmath as mp
import pytest

from dpcalc.core import pld
from dpcalc.core.phases import Phase

mp.mp.dps = 50
SCALES = (0.01, 0.3, 1.0, 2.5, 40.0, 3e4)


def one(scale: float) -> list[Phase]:
    return [Phase("laplace", scale=scale, steps=1)]


def _profile_cases() -> list:
    """(scale, share) for every scale and share; eps just below eps0 is slow, and so is eps = eps0
    (delta exactly 0, a costly grid) but at the smallest and largest scale."""
    cases = []
    for share in (0.0, 0.3, 0.999999, 1.0, 1.5):
        for scale in SCALES:
            slow = share == 0.999999 or (share == 1.0 and scale not in (SCALES[0], SCALES[-1]))
            cases.append(pytest.param(scale, share, marks=[pytest.mark.slow] if slow else [], id=f"{share}-{scale}"))
    return cases


@pytest.mark.parametrize("scale, share", _profile_cases())
def test_delta_interval_contains_the_exact_profile(scale, share):
    pure = mp.mpf(1) / mp.mpf(scale)
    epsilon = float(pure * share)
    exact = 0 if mp.mpf(epsilon) >= pure else -mp.expm1((mp.mpf(epsilon) - pure) / 2)
    result = pld.tight_delta(one(scale), epsilon)
    assert result.delta_lower <= exact <= result.delta_upper
    # near eps0 the profile is ill-conditioned (1 - e^x for x -> 0): the width is twice the margin on x,
    # 16 units in the last place of eps + eps0, relative to delta ~ -x
    slack = 64 * 2.3e-16 * (epsilon + float(pure))
    assert result.delta_upper - result.delta_lower <= 1e-12 * float(exact) + slack
    if mp.mpf(epsilon) >= pure:
        assert result.delta_upper == 0.0  # exactly: the loss never exceeds eps0


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("delta", (1e-300, 1e-14, 1e-6, 0.1, 0.5))
def test_epsilon_interval_contains_the_exact_inverse(scale, delta):
    exact = max(mp.mpf(0), mp.mpf(1) / mp.mpf(scale) + 2 * mp.log1p(-mp.mpf(delta)))
    result = pld.tight_epsilon(one(scale), delta)
    assert result.epsilon_lower <= exact <= result.epsilon_upper
    assert result.epsilon_upper - result.epsilon_lower <= 1e-12 * max(float(exact), 1.0)


def test_only_one_unsubsampled_release_is_answered_exactly():
    from dpcalc.core.pld.fallback import one_laplace_release

    assert one_laplace_release(one(1.0))
    assert not one_laplace_release([Phase("laplace", scale=1.0, steps=2)])
    assert not one_laplace_release([Phase("laplace", sampling_probability=0.5, scale=1.0, steps=1)])
    assert not one_laplace_release([Phase("gaussian", noise_multiplier=1.0, steps=1)])
