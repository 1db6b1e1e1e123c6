"""`dpcalc calibrate --mechanism mf`: the smallest sigma of a matrix-factorisation mechanism, round trips, refusals."""

from __future__ import annotations

import pytest

BANDS = ("--mechanism", "mf", "--bands", "4", "--n", "60000", "--batch-size", "240", "--epochs", "10")
TOEPLITZ = ("--mechanism", "mf", "--coefficients", "1,0.5,0.25", "--T", "1000", "--participations", "4",
            "--min-sep", "250")


@pytest.mark.slow
@pytest.mark.parametrize(("mechanism", "flags"), [
    (BANDS, ("--bands", "4", "--n", "60000", "--batch-size", "240", "--epochs", "10")),
    (TOEPLITZ, TOEPLITZ[2:]),
])
def test_round_trip_through_mf(dpcalc, mechanism, flags):
    # the answer spends at most the target by `dpcalc mf` at that sigma; a sigma 1e-3 lower spends more
    result = dpcalc("calibrate", *mechanism, "--target-eps", "2", "--json").json()["result"]
    assert result["feasible"] and result["certified_epsilon"] <= 2
    sigma = result["value"]
    at = dpcalc("mf", *flags, "--sigma", repr(sigma), "--json").json()["result"]
    assert at["epsilon_upper"] <= 2 + 2e-3 * 2  # the same reduced run, the PLD grid's accuracy 1e-3 apart
    below = dpcalc("mf", *flags, "--sigma", repr(sigma * 0.99), "--json").json()["result"]
    assert below["epsilon_lower"] > 2


def test_sigma_is_the_reduced_sigma_times_the_sensitivity(dpcalc):
    result = dpcalc("calibrate", *TOEPLITZ, "--target-eps", "3", "--json").json()["result"]
    sens = result["sensitivity"]["value"]
    assert result["value"] / sens >= result["reduced"]["sigma"]
    assert result["value"] == pytest.approx(result["reduced"]["sigma"] * sens, rel=1e-14)
    assert result["reduced"] == {"p": 1.0, "sigma": result["reduced"]["sigma"], "T": 1, "neighbours": "zero-out"}


def test_tree_table_and_gate(dpcalc):
    run = dpcalc("calibrate", "--mechanism", "mf", "--tree", "--n", "60000", "--batch-size", "600", "--epochs", "5",
                 "--target-eps", "8")
    assert run.code == 0 and "Calibration of a matrix-factorisation mechanism" in run.stdout
    run = dpcalc("calibrate", "--mechanism", "mf", "--tree", "--n", "60000", "--batch-size", "600", "--epochs", "5",
                 "--target-eps", "8", "--max-eps", "7")
    assert run.code == 1 and "Budget exceeded" in run.stderr


@pytest.mark.parametrize(("arguments", "message"), [
    (("--sigma", "1"), "--sigma does not apply to --mechanism mf"),
    (("--accountant", "rdp"), "--accountant does not apply to --mechanism mf"),
    (("--solve", "T"), "--solve does not apply to --mechanism mf"),
    (("--max-batch-size", "300"), "--max-batch-size does not apply"),
    (("--sampling", "uniform"), "--sampling must be poisson"),
])
def test_refusals(dpcalc, arguments, message):
    run = dpcalc("calibrate", *BANDS, "--target-eps", "2", *arguments)
    assert run.code == 2 and len(run.stderr.strip().splitlines()) == 1 and message in run.stderr, run.stderr


def test_more_refusals(dpcalc):
    run = dpcalc("calibrate", "--bands", "4", "--p", "0.01", "--T", "100", "--target-eps", "2")
    assert run.code == 2 and "--bands applies to --mechanism mf" in run.stderr
    run = dpcalc("calibrate", *BANDS, "--target-eps", "1,2")
    assert run.code == 2 and "--mechanism mf calibrates one run: give --target-eps one value" in run.stderr
    run = dpcalc("calibrate", *BANDS)
    assert run.code == 2 and "--target-eps is required" in run.stderr
    run = dpcalc("calibrate", "--mechanism", "mf", "--bands", "-2", "--p", "0.01", "--T", "100", "--target-eps", "2")
    assert run.code == 2 and "--bands must be an integer in [1, inf), got -2" in run.stderr
    run = dpcalc("calibrate", "--mechanism", "mf", "--coefficients", "1", "--T", "10", "--participations", "2",
                 "--min-sep", "20", "--target-eps", "2")
    assert run.code == 2 and "--min-sep must be an integer in [1, 10]" in run.stderr
