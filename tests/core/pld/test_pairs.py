"""pairs: the dominating pairs' cell masses with error bounds (S2 of docs/pld-soundness.md),
against the exact masses in mpmath (50 digits; tests/core/pld/helpers.py)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from dpcalc.core.pld.pairs import GaussianPair, _SubsampledRatio
from tests.core.pld.helpers import gaussian_masses


@pytest.mark.parametrize("p, sigma", [(0.004, 1.1), (0.3, 0.7), (1.0, 2.0)])
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_gaussian_cell_masses_contain_the_exact_ones(p, sigma, direction):
    pair = GaussianPair(p, sigma, direction)
    lo_s, hi_s = pair.support
    centre = 0.0 if direction == "remove" else -0.0
    edges = np.sort(np.concatenate([centre + np.linspace(-0.02, 0.05, 25), np.linspace(0.05, 3.0, 12)]))
    if math.isfinite(lo_s):
        edges = edges[edges > lo_s - 0.01]
    if math.isfinite(hi_s):
        edges = edges[edges < hi_s + 0.01]
    cells = pair.cell_masses(edges)
    for i in range(len(edges) - 1):
        exact_p, exact_q = gaussian_masses(p, sigma, direction, edges[i], edges[i + 1])
        for log_value, rel, exact in ((cells.log_p[i], cells.rel_p[i], exact_p), (cells.log_q[i], cells.rel_q[i], exact_q)):
            value = mp.exp(mp.mpf(log_value)) if math.isfinite(log_value) else mp.mpf(0)
            assert exact <= value * (1 + mp.mpf(rel)) * (1 + mp.mpf(1e-13)) + mp.mpf(1e-300)
            if rel < 1:
                assert exact >= value * (1 - mp.mpf(rel)) * (1 - mp.mpf(1e-13))


# ---------------------------------------------------------------------------------------------
# The point where the subsampled likelihood ratio reaches a loss: value and error bound (S2)


def _exact(loss: float, p: float, scale: float):
    """y with log(1 - p + p e^((y - 1/2)/scale)) = loss, in mpmath (-inf below the support)."""
    inner = (mp.exp(mp.mpf(loss)) - 1 + mp.mpf(p)) / mp.mpf(p)
    return mp.mpf(0.5) + mp.mpf(scale) * mp.log(inner) if inner > 0 else -mp.inf


@pytest.mark.parametrize("p", [1e-10, 1e-4, 0.004, 0.3, 0.999])
@pytest.mark.parametrize("scale", [0.0025, 1.21, 25.0, 1e4])
def test_inverse_is_within_its_error_bound(p, scale):
    ratio = _SubsampledRatio(p, scale)
    floor = math.log1p(-p)
    # grid-like losses near the bulk (where the fine cells are), and far out in both tails
    losses = np.concatenate([
        np.arange(-64, 65) * 2.0**-27, np.arange(-64, 65) * 2.0**-13, np.linspace(floor * 0.999, 0.0, 40),
        np.array([0.5, 1.0, 1.0 + 2.0**-20, 2.0, 30.0, 700.0, 5000.0]),
    ])
    y, err = ratio.inverse(losses)
    for loss, value, bound in zip(losses, y, err):
        exact = _exact(float(loss), p, scale)
        if exact == -mp.inf:
            assert value == -math.inf
            continue
        assert abs(mp.mpf(float(value)) - exact) <= bound, (loss, value, bound, exact)


def test_inverse_near_the_bulk_is_accurate_to_the_grid():
    # The cells of a fine grid (p = 1e-4, sigma = 5: loss step ~1e-7) are ~0.015 wide in y;
    # the bound on y must be far below that: it was ~4e-13 before the log1p form, and is now a
    # few ulps of c log1p(b) and of y (~2e-15).
    ratio = _SubsampledRatio(1e-4, 25.0)
    _, err = ratio.inverse(np.arange(-50, 51) * 1.2e-7)
    assert float(err.max()) < 1e-14


def test_gaussian_cell_masses_of_a_long_grid_are_those_of_one_piece(monkeypatch):
    # cell_masses evaluates a long grid in pieces (gaussian._CHUNK_CELLS cells): the same floats.
    from dpcalc.core.pld.pairs import gaussian

    edges = np.concatenate([[-np.inf], np.linspace(-0.5, 12.0, 5001), [np.inf]])
    for direction in ("remove", "add"):
        pair = GaussianPair(0.01, 0.9, direction)
        monkeypatch.setattr(gaussian, "_CHUNK_CELLS", 700)
        pieces = pair.cell_masses(edges)
        monkeypatch.setattr(gaussian, "_CHUNK_CELLS", 10**9)
        whole = pair.cell_masses(edges)
        for name in ("log_p", "rel_p", "log_q", "rel_q"):
            assert getattr(pieces, name).tobytes() == getattr(whole, name).tobytes()
