"""truncate: a measure's window cut to where it matters (S3 and S6 of docs/pld-soundness.md).

References (properties that must hold): an upper measure's top moves to +inf, where it is
counted in full (`inf_mass` grows by at least the mass that left the window, and by at most
the budget); its bottom is dropped with a certified bound (`drop_mass` at least the mass that
was dropped, `drop_rel` within its budget); the window only shrinks and the masses kept are
unchanged. A lower measure loses its top and a bottom whose tilted weight is at most the
allowance, and its profile can only fall.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from dpcalc.core.pld import discretise, fft, truncate
from dpcalc.core.pld.measure import THETAS, kappa
from dpcalc.core.pld.pairs import GaussianPair
from tests.core.pld.helpers import hockey_stick, masses


@pytest.fixture(scope="module")
def eight_steps():
    """Eight steps of p = 0.05, sigma = 1 (remove) composed: long windows to cut."""
    pair = GaussianPair(0.05, 1.0, "remove")
    h = 2.0**-9
    upper, lower = discretise.discretise_step(pair, h, math.floor(pair.support[0] / h) - 1, int(4.0 / h), 3.0, 1)
    for _ in range(3):
        upper, lower = fft.convolve(upper, upper), fft.convolve(lower, lower)
    return upper, lower


def _cut(m, inf_budget, rho_budget, multiplicity=1, **flags):
    return truncate.truncate(m, log_inf_budget=math.log(inf_budget), log_rho_budget=math.log(rho_budget),
                             multiplicity=multiplicity, **flags)


def _window(m, out):
    start = out.k0 - m.k0
    return start, start + len(out.t)


@pytest.mark.parametrize("inf_budget", [1e-12, 1e-9, 1e-6])
@pytest.mark.parametrize("rho_budget", [1e-12, 1e-6])
def test_upper_top_goes_to_inf_and_the_bottom_is_accounted(eight_steps, inf_budget, rho_budget):
    m, _ = eight_steps
    out = _cut(m, inf_budget, rho_budget)
    start, stop = _window(m, out)
    assert 0 < start < stop < len(m.t)  # both ends cut
    assert masses(out) == pytest.approx(masses(m)[start:stop], rel=1e-13)
    moved = masses(m)[stop:].sum()
    assert moved <= out.inf_mass - m.inf_mass <= inf_budget * (1 + 1e-9)  # (the rounding of the sum)
    assert masses(m)[:start].sum() <= out.drop_mass
    assert 0.0 < out.drop_rel <= rho_budget
    # the profile with the mass at +inf counted in full is at least the uncut one's (the
    # dropped bottom lies below zero, where the profile's weight is 0)
    assert m.losses[start] <= 0.0
    for eps in (0.0, 0.5, 1.0, 2.0):
        slack = kappa(m.lam) * math.exp(m.log_z - m.lam * eps) * (m.err + out.err)
        assert hockey_stick(out, eps) + out.inf_mass >= hockey_stick(m, eps) + m.inf_mass - slack


def test_multiplicity_and_budgets_widen_or_narrow_the_window(eight_steps):
    m, _ = eight_steps
    narrow = _cut(m, 1e-6, 1e-6)
    wide = _cut(m, 1e-12, 1e-12)
    many = _cut(m, 1e-6, 1e-6, multiplicity=1000)
    assert wide.k0 <= narrow.k0 and wide.k0 + len(wide.t) >= narrow.k0 + len(narrow.t)
    # the dropped bottom is shared among `multiplicity` copies: each may drop less, and the
    # record is that of one copy (compositions add the copies' records up)
    assert many.k0 <= narrow.k0 and 0.0 < many.drop_rel <= 1e-6 / 1000 * (1 + 1e-9)
    assert many.drop_rel < narrow.drop_rel
    # cap=False keeps the top; floor=False keeps the bottom
    no_cap = _cut(m, 1e-6, 1e-6, cap=False)
    no_floor = _cut(m, 1e-6, 1e-6, floor=False)
    assert no_cap.k0 + len(no_cap.t) == m.k0 + len(m.t) and no_cap.inf_mass == m.inf_mass
    assert no_floor.k0 == m.k0 and no_floor.drop_rel == m.drop_rel == 0.0


@pytest.mark.parametrize("inf_budget", [1e-12, 1e-6])
def test_lower_ends_are_dropped(eight_steps, inf_budget):
    _, m = eight_steps
    out = _cut(m, inf_budget, 1e-9, multiplicity=4)
    start, stop = _window(m, out)
    assert 0 < start < stop < len(m.t)
    assert masses(out) == pytest.approx(masses(m)[start:stop], rel=1e-13)
    # the top is dropped, not moved to +inf; the bottom's tilted weight within the allowance
    assert out.inf_mass == 0.0 and out.drop_rel == 0.0 and out.drop_mass == 0.0
    assert m.t[:start].sum() <= truncate._LOWER_DROP / 4
    for eps in (0.0, 0.5, 1.0, 2.0):
        slack = kappa(m.lam) * math.exp(m.log_z - m.lam * eps) * (m.err + out.err)
        assert hockey_stick(out, eps) <= hockey_stick(m, eps) + slack


def test_nothing_to_cut_returns_the_measure(eight_steps):
    m, _ = eight_steps
    assert _cut(m, 1e-6, 1e-6, cap=False, floor=False) is m
    assert np.isfinite(m.t).all()


@pytest.fixture(scope="module")
def eight_steps_small_tilt():
    """The eight steps of `eight_steps` tilted by lam = 0.03, as in runs of T ~ 1e9."""
    pair = GaussianPair(0.05, 1.0, "remove")
    h = 2.0**-9
    upper, lower = discretise.discretise_step(pair, h, math.floor(pair.support[0] / h) - 1, int(4.0 / h), 0.03, 1)
    for _ in range(3):
        upper, lower = fft.convolve(upper, upper), fft.convolve(lower, lower)
    return upper, lower


def test_small_tilt_cap_comes_from_the_chernoff_bound(eight_steps_small_tilt):
    """With a small tilt the FFT's noise weighs as much high up as at the peak: the computed mass
    and its error bound never fall below a small budget inside the window, so the top stayed;
    the Chernoff bound from the tracked E[e^(-theta S)], theta < 0, places the cap (S3)."""
    m, lower = eight_steps_small_tilt
    budget = 1e-15
    assert m.log_theta_mgf is not None
    blind = _cut(replace(m, log_theta_mgf=None), budget, 1e-300, floor=False)
    assert blind.k0 + len(blind.t) == m.k0 + len(m.t)
    out = _cut(m, budget, 1e-300, floor=False)
    _, stop = _window(m, out)
    assert stop < 0.75 * len(m.t)
    moved = masses(m)[stop:].sum()
    assert moved <= out.inf_mass - m.inf_mass <= budget * (1 + 1e-9)
    # the moved mass is certified by the Chernoff bound at the first point moved
    theta = THETAS[THETAS < 0]
    log_bound = float((theta * m.losses[stop] + m.log_theta_mgf[THETAS < 0]).min())
    assert out.inf_mass - m.inf_mass <= math.exp(log_bound) * (1 + 1e-9)
    for eps in (0.0, 0.5, 1.0, 2.0):
        slack = kappa(m.lam) * math.exp(m.log_z - m.lam * eps) * (m.err + out.err)
        assert hockey_stick(out, eps) + out.inf_mass >= hockey_stick(m, eps) + m.inf_mass - slack
    # a lower measure's cap follows estimates of the same kind (dropping is sound anywhere)
    guided = replace(lower, log_theta_mgf=m.log_theta_mgf.copy())
    cut_lower = _cut(guided, budget, 1e-300, floor=False)
    assert len(cut_lower.t) < len(lower.t) and cut_lower.inf_mass == 0.0
    for eps in (0.0, 0.5, 1.0, 2.0):
        slack = kappa(lower.lam) * math.exp(lower.log_z - lower.lam * eps) * (lower.err + cut_lower.err)
        assert hockey_stick(cut_lower, eps) <= hockey_stick(lower, eps) + slack


def _fields(m):
    return {key: value.tobytes() if isinstance(value, np.ndarray) else value for key, value in vars(m).items()}


@pytest.mark.parametrize("inf_budget", [1e-17, pytest.param(1e-9, marks=pytest.mark.slow), pytest.param(1e-3, marks=pytest.mark.slow)])
def test_the_top_down_scan_does_not_depend_on_its_chunks(eight_steps, eight_steps_small_tilt, monkeypatch, inf_budget):
    """The upper end is scanned from the top in chunks that stop once the mass above exceeds the
    budget: chunks of 5 points or one chunk over the whole range give the same measures, bit for
    bit (with a small tilt and the smallest budget the Chernoff cut lies below the chunks scanned
    and extends the scan)."""
    for m in (*eight_steps, *eight_steps_small_tilt):
        monkeypatch.setattr(truncate, "_SCAN_CHUNK", 10**9)
        whole = _cut(m, inf_budget, 1e-9)
        monkeypatch.setattr(truncate, "_SCAN_CHUNK", 5)
        monkeypatch.setattr(truncate, "_SCAN_PARTS", 10**9)
        assert _fields(_cut(m, inf_budget, 1e-9)) == _fields(whole)
