"""coarsen: a measure moved to a grid of twice the step, by splitting atoms (upper, S3 of
docs/pld-soundness.md) or merging them (lower, S4).

References (properties that must hold): an upper measure's split keeps every atom's P- and
Q-mass (connect the dots), so the total mass is kept, the mass at or above every point of the
coarse grid can only grow, and the profile E[(1 - e^(eps - s))_+] can only grow (a split of
outcomes is dominated in the sense of S1); a lower measure's merge is a garbling, so its
profile can only fall, and it loses no P-mass. Profiles are compared on the represented
masses, within the error bound of S5 that each measure carries (kappa Z e^(-lam eps) err).
The bounds on E[e^(-theta S)] (S6) must bound the coarse measure's own.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcalc.core.pld import discretise, fft
from dpcalc.core.pld.coarsen import coarsen, coarsen_to
from dpcalc.core.pld.measure import THETAS, kappa, replace
from dpcalc.core.pld.pairs import GaussianPair
from tests.core.pld.helpers import hockey_stick, masses

EPSILONS = np.linspace(0.0, 3.0, 61)


def one_step(p, sigma, lam, h=2.0**-9):
    """One step of the remove pair on the grid h, upper and lower (S1-S5)."""
    pair = GaussianPair(p, sigma, "remove")
    mean = 0.5 / sigma**2 if p == 1.0 else 0.0
    lo_s, _ = pair.support
    k_lo = math.floor(lo_s / h) - 1 if math.isfinite(lo_s) else math.floor((mean - 8.0 / sigma) / h)
    k_hi = int((mean + 12.0 / sigma if p == 1.0 else 4.0) / h)
    return discretise.discretise_step(pair, h, k_lo, k_hi, lam, 1)


def two_steps(p, sigma, lam):
    """Two steps of the remove pair composed, upper and lower."""
    upper, lower = one_step(p, sigma, lam)
    return fft.convolve(upper, upper), fft.convolve(lower, lower)


def _slack(m, eps):
    """The S5 bound on the error of m's profile at eps, from its own error field."""
    return kappa(m.lam) * math.exp(m.log_z - m.lam * eps) * m.err


CASES = [(1.0, 2.0, 1.0), (0.05, 1.0, 3.0), (0.3, 0.7, 0.5)]


@pytest.mark.parametrize("p, sigma, lam", CASES)
def test_upper_coarsening_splits_atoms(p, sigma, lam):
    fine, _ = two_steps(p, sigma, lam)
    coarse = coarsen(fine)
    assert coarse.h == 2 * fine.h and coarse.kind == "upper"
    # P- and Q-masses kept
    assert masses(coarse).sum() == pytest.approx(masses(fine).sum(), rel=1e-13)
    q = lambda m: float((masses(m) * np.exp(-m.losses)).sum())  # noqa: E731
    assert q(coarse) == pytest.approx(q(fine), rel=1e-13)
    # at every point of the coarse grid, at least as much mass at or above it (within the S5
    # error of the masses there: at most Z e^(-lam x) err untilted)
    for x in coarse.losses[::7]:
        slack = sum(math.exp(m.log_z - m.lam * x) * m.err for m in (fine, coarse))
        assert masses(coarse)[coarse.losses >= x].sum() >= masses(fine)[fine.losses >= x].sum() - slack
    for eps in EPSILONS:
        assert hockey_stick(coarse, eps) >= hockey_stick(fine, eps) - _slack(fine, eps) - _slack(coarse, eps)
    assert coarse.err >= fine.err and coarse.inf_mass == fine.inf_mass


@pytest.mark.parametrize("p, sigma, lam", CASES)
def test_the_bounds_on_the_lower_tail_hold_after_splits(p, sigma, lam):
    """S6: log_theta_mgf bounds log E[e^(-theta S)] for every theta, split after split. (On one
    step, whose masses carry no FFT noise: at theta = 2^20 a noise of 1e-19 in t at a negative
    loss would outweigh everything.)"""
    m, _ = one_step(p, sigma, lam)
    for _ in range(3):
        m = coarsen(m)
        log_masses = np.log(np.where(masses(m) > 0.0, masses(m), 1e-320))
        for theta, bound in zip(THETAS, m.log_theta_mgf):
            assert np.logaddexp.reduce(log_masses - theta * m.losses) <= bound


@pytest.mark.parametrize("p, sigma, lam", CASES)
def test_lower_coarsening_merges_atoms(p, sigma, lam):
    _, fine = two_steps(p, sigma, lam)
    coarse = coarsen(fine)
    assert coarse.h == 2 * fine.h and coarse.kind == "lower"
    assert masses(coarse).sum() <= masses(fine).sum() * (1 + 1e-13)
    for eps in EPSILONS:
        assert hockey_stick(coarse, eps) <= hockey_stick(fine, eps) + _slack(fine, eps) + _slack(coarse, eps)
    assert coarse.err >= fine.err and coarse.deficiency >= fine.deficiency


def test_coarsen_to_doubles_until_the_step():
    fine, lower = two_steps(0.05, 1.0, 3.0)
    for m in (fine, lower):
        coarse = coarsen_to(m, 8 * m.h)
        assert coarse.h == 8 * m.h and coarse.kind == m.kind
        assert coarsen_to(coarse, coarse.h) is coarse
    # upper: still at least the fine profile, three splits later
    coarse = coarsen_to(fine, 8 * fine.h)
    for eps in EPSILONS[::10]:
        assert hockey_stick(coarse, eps) >= hockey_stick(fine, eps) - _slack(fine, eps) - _slack(coarse, eps)


@pytest.mark.parametrize("kind", ["upper", "lower"])
@pytest.mark.parametrize("lead, trail", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_the_padding_is_that_of_explicit_zeros(kind, lead, trail):
    """`coarsen` pads the masses to start and end at points of the coarse grid without copying
    them: the result is bit for bit that of the same measure with those zeros written out
    (masses, every error field, the bounds on E[e^(-theta S)])."""
    upper, lower = two_steps(0.05, 1.0, 3.0)
    m = upper if kind == "upper" else lower
    t = m.t[: len(m.t) - (len(m.t) + lead + trail + 1) % 2]  # lead + len(t) + trail is odd
    k0 = 2 * (m.k0 // 2) + lead
    implicit = replace(m, t=t.copy(), k0=k0)
    explicit = replace(m, t=np.concatenate(([0.0] * lead, t, [0.0] * trail)), k0=k0 - lead)
    assert (len(explicit.t) % 2, explicit.k0 % 2) == (1, 0)
    a, b = coarsen(implicit), coarsen(explicit)
    assert a.t.tobytes() == b.t.tobytes() and a.k0 == b.k0
    for field in ("err", "err2", "deficiency", "log_z", "log_z_err"):
        assert getattr(a, field) == getattr(b, field), field
    if kind == "upper":
        assert a.log_theta_mgf.tobytes() == b.log_theta_mgf.tobytes()
