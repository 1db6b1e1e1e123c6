"""The exact route for k unsubsampled Laplace releases of one scale (dpcalc.core.pld.exact_laplace)
through pld, calibrate and check: the JSON names the basis and the interval is a few units in
the last place wide. Reference values: the module's certified interval (tests/core/pld/
test_exact_laplace.py checks it against mpmath at 50-100 digits)."""

from __future__ import annotations

import pytest

from dpcalc.core.pld.exact_laplace import (
    EXACT_LAPLACE_ANALYSIS,
    MAX_STEPS,
    laplace_composed_delta,
    laplace_composed_epsilon,
)

WIDTH = 32 * 2.0**-52


def test_pld_epsilon_json(dpcalc):
    run = dpcalc("pld", "--mechanism", "laplace", "--scale", "2", "--T", "10", "--delta", "1e-6", "--json")
    assert run.code == 0 and run.stderr == ""
    result = run.json()["result"]
    assert result["analysis"] == EXACT_LAPLACE_ANALYSIS
    assert result["grid"] == {"step": 0.0, "size": 0}
    assert (result["epsilon_lower"], result["epsilon_upper"]) == laplace_composed_epsilon(10, 2.0, 1e-6)
    assert result["epsilon"] == result["epsilon_upper"] == pytest.approx(4.99897808944722, rel=1e-14)
    assert result["epsilon_upper"] - result["epsilon_lower"] <= WIDTH * result["epsilon_upper"]


def test_pld_delta_json_and_gate(dpcalc):
    run = dpcalc("pld", "--mechanism", "laplace", "--scale", "2", "--T", "10", "--eps", "1", "--json")
    assert run.code == 0
    result = run.json()["result"]
    assert (result["delta_lower"], result["delta_upper"]) == laplace_composed_delta(10, 2.0, 1.0)
    assert result["delta_upper"] - result["delta_lower"] <= WIDTH * result["delta_upper"]
    gated = dpcalc("pld", "--mechanism", "laplace", "--scale", "2", "--T", "10", "--delta", "1e-6",
                   "--max-eps", "5", "--json")
    assert gated.code == 0
    assert "exact Laplace composition" in gated.stdout


def test_pld_table_names_the_method(dpcalc):
    run = dpcalc("pld", "--mechanism", "laplace", "--scale", "2", "--T", "10", "--delta", "1e-6")
    assert run.code == 0
    assert "exact" in run.stdout and "no grid" in run.stdout


def test_past_the_cutoff_the_grid_answers(dpcalc):
    run = dpcalc("pld", "--mechanism", "laplace", "--scale", "20", "--T", str(MAX_STEPS + 1), "--delta", "1e-6",
                 "--json")
    assert run.code == 0
    result = run.json()["result"]
    assert result["analysis"] != EXACT_LAPLACE_ANALYSIS and result["grid"]["size"] > 0


@pytest.mark.slow
def test_calibrate_names_the_basis(dpcalc):
    run = dpcalc("calibrate", "--mechanism", "laplace", "--T", "5", "--target-eps", "1", "--delta", "1e-6", "--json")
    assert run.code == 0 and run.stderr == ""
    result = run.json()["result"]
    assert result["basis"] == "PLD certified upper bound (exact Laplace composition, no grid)"
    assert result["epsilon"] <= 1.0
    lower, upper = laplace_composed_epsilon(5, result["scale"], 1e-6)  # the scale as printed: within an ulp
    assert result["epsilon"] == pytest.approx(upper, rel=1e-14) and result["epsilon_lower"] == pytest.approx(lower, rel=1e-14)
    assert result["epsilon"] - result["epsilon_lower"] <= WIDTH * result["epsilon"]


def test_check_names_the_method(dpcalc, tmp_path):
    budget = tmp_path / "budget.toml"
    budget.write_text('[budget]\nepsilon = 4.0\ndelta = 1e-5\n\n[[release]]\nname = "counts"\nmechanism = "laplace"\n'
                      'scale = 20.0\nsensitivity = 1.0\ncount = 12\n')
    run = dpcalc("check", str(budget), "--json")
    assert run.code == 0
    document = run.json()["result"]
    assert document["releases"][0]["method"] == "exact (Laplace composition)"
    assert document["releases"][0]["epsilon"] == laplace_composed_epsilon(12, 20.0, 1e-5)[1]
