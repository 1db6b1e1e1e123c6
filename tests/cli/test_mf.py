"""`dpcalc mf` on the command line: the three mechanisms, the DP-SGD figure beside them, the JSON contract, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

RESULT_KEYS = {"factorisation", "participation", "theorem", "figure", "sensitivity", "assumptions", "epsilon",
               "epsilon_lower", "epsilon_upper", "delta", "delta_lower", "delta_upper", "accuracy", "phases", "dp_sgd"}
RUN = ("--n", "60000", "--batch-size", "240", "--epochs", "10", "--sigma", "1")


def test_one_band_is_pld_on_the_same_run(dpcalc):
    # goal of issue 39: b = 1 equals `pld` on the same DP-SGD run (the same phases: equal figures,
    # well within the accuracy 1e-3)
    mf = dpcalc("mf", "--bands", "1", "--sampling", "poisson", *RUN, "--json").json()["result"]
    pld = dpcalc("pld", *RUN, "--json").json()["result"]
    assert set(mf) == RESULT_KEYS and mf["figure"] == "exact"
    assert mf["epsilon_upper"] == pytest.approx(pld["epsilon_upper"], rel=1e-3)
    assert mf["dp_sgd"]["epsilon_upper"] == pytest.approx(pld["epsilon_upper"], rel=1e-3)


def test_bands_table_names_everything(dpcalc):
    run = dpcalc("mf", "--bands", "4", *RUN)
    assert run.code == 0 and run.stderr == ""
    for text in ("Matrix factorisation (PLD)", "epsilon of DP-SGD", "upper bound", "Thm 4", "4 partitions",
                 "assumption", "certified upper bound (quote this)"):
        assert text in run.stdout


def test_bands_json(dpcalc):
    result = dpcalc("mf", "--bands", "4", *RUN, "--json").json()["result"]
    (phase,) = result["phases"]
    assert phase["p"] == pytest.approx(0.016) and phase["T"] == 625 and result["figure"] == "upper bound"
    assert result["epsilon_upper"] > result["dp_sgd"]["epsilon_upper"]  # four times the rate, a quarter of the steps
    assert result["sensitivity"] is None and any("norm at most 1" in text for text in result["assumptions"])


def test_bands_with_coefficients_scale_sigma(dpcalc):
    result = dpcalc("mf", "--bands", "2", "--coefficients", "1,0.5", "--p", "0.01", "--T", "100", "--sigma", "2",
                    "--json").json()["result"]
    assert result["phases"][0]["sigma"] == pytest.approx(2 / math.sqrt(1.25), rel=1e-12)
    assert result["phases"][0]["T"] == 50 and "Toeplitz" in result["factorisation"]


def test_identity_with_one_participation_is_one_gaussian_release_per_step(dpcalc, tmp_path):
    # goal of issue 39: C = I, k = 1: one Gaussian release at sigma (mu = 1 / sigma); compared
    # with `convert`-free closed form through pld's exact mu-GDP: p = 1, T = 1
    path = tmp_path / "eye.npy"
    np.save(path, np.eye(50))
    mf = dpcalc("mf", "--strategy", str(path), "--participations", "1", "--min-sep", "1", "--sigma", "2",
                "--json").json()["result"]
    one = dpcalc("pld", "--p", "1", "--sigma", "2", "--T", "1", "--neighbours", "zero-out", "--json").json()["result"]
    assert mf["figure"] == "exact" and mf["sensitivity"]["exact"] and mf["dp_sgd"] is None
    assert mf["epsilon_upper"] == pytest.approx(one["epsilon_upper"], rel=1e-9)


def test_csv_strategy_and_dp_sgd_beside(dpcalc, tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("\n".join(",".join("1" if i == j else "0" for j in range(10)) for i in range(10)) + "\n")
    result = dpcalc("mf", "--strategy", str(path), "--participations", "2", "--min-sep", "5", "--p", "0.2",
                    "--T", "10", "--sigma", "3", "--json").json()["result"]
    assert result["sensitivity"]["value"] == pytest.approx(math.sqrt(2), rel=1e-11)
    assert result["dp_sgd"]["epsilon_upper"] < result["epsilon_upper"]  # no amplification by sampling


def test_coefficients_with_participations(dpcalc):
    run = dpcalc("mf", "--coefficients", "1,0.5,0.25", "--T", "1000", "--participations", "4", "--min-sep", "250",
                 "--sigma", "3", "--json")
    result = run.json()["result"]
    assert result["sensitivity"]["value"] == pytest.approx(math.sqrt(4 * 1.3125), rel=1e-11)
    assert result["phases"][0]["sigma"] == pytest.approx(3 / math.sqrt(4 * 1.3125), rel=1e-11)


def test_tree_and_gate(dpcalc):
    run = dpcalc("mf", "--tree", "--n", "60000", "--batch-size", "600", "--epochs", "5", "--sigma", "2",
                 "--max-eps", "8")
    assert run.code == 1 and "Budget exceeded" in run.stderr
    result = dpcalc("mf", "--tree", "--n", "60000", "--batch-size", "600", "--epochs", "5", "--sigma", "2",
                    "--json").json()["result"]
    # 5 trees of 100 leaves: 7 complete nodes over a leaf each (floor(log2 100) + 1)
    assert result["sensitivity"]["value"] == pytest.approx(math.sqrt(35), rel=1e-15)
    assert dpcalc("mf", "--tree", "--n", "60000", "--batch-size", "600", "--epochs", "5", "--sigma", "2",
                  "--max-eps", "20").code == 0


@pytest.mark.slow
def test_eps_gives_delta_and_max_delta(dpcalc):
    document = dpcalc("mf", "--bands", "2", "--p", "0.01", "--T", "100", "--sigma", "1", "--eps", "1", "--json").json()
    assert document["result"]["delta_upper"] >= document["result"]["delta_lower"] > 0
    assert document["result"]["dp_sgd"]["delta_upper"] <= document["result"]["delta_upper"]
    run = dpcalc("mf", "--bands", "2", "--p", "0.01", "--T", "100", "--sigma", "1", "--eps", "1", "--max-delta", "1e-30")
    assert run.code == 1


def test_csv_output(dpcalc):
    run = dpcalc("mf", "--bands", "2", "--p", "0.01", "--T", "100", "--sigma", "1", "--csv")
    assert run.code == 0 and run.stdout.splitlines()[0].startswith("factorisation,participation,theorem,figure")


@pytest.mark.parametrize(("arguments", "message"), [
    (("--bands", "-1", "--p", "0.01", "--T", "100", "--sigma", "1"), "--bands must be an integer in [1, inf), got -1"),
    (("--bands", "5", "--p", "0.01", "--T", "4", "--sigma", "1"), "--bands = 5 is more than the --T = 4 steps"),
    (("--bands", "4", "--n", "1000", "--batch-size", "400", "--epochs", "1", "--sigma", "1"),
     "--bands = 4 partitions of --n = 1000 records hold 250 records"),
    (("--bands", "2", "--T", "10", "--sigma", "1"), "--bands needs the run's sampling"),
    (("--bands", "2", "--sampling", "uniform", "--p", "0.1", "--T", "10", "--sigma", "1"),
     "--sampling must be poisson (amplified BandMF's), got uniform"),
    (("--bands", "2", "--coefficients", "1,0.5,0.2", "--p", "0.1", "--T", "10", "--sigma", "1"),
     "the strategy matrix has 3 bands, more than --bands = 2"),
    (("--bands", "2", "--participations", "2", "--p", "0.1", "--T", "10", "--sigma", "1"),
     "--bands and --participations cannot be given together"),
    (("--bands", "2", "--p", "0.1", "--T", "10:20:5", "--sigma", "1"), "mf accounts one run: give --T one value"),
    (("--coefficients", "1,0.5", "--T", "100", "--participations", "2", "--min-sep", "200", "--sigma", "1"),
     "--min-sep must be an integer in [1, 100] (at most the number of steps), got 200"),
    (("--coefficients", "1,0.5", "--T", "100", "--participations", "3", "--min-sep", "50", "--sigma", "1"),
     "--participations = 3 participations at least --min-sep = 50 steps apart do not fit in --T = 100 steps"),
    (("--coefficients", "1,abc", "--T", "10", "--participations", "1", "--min-sep", "1", "--sigma", "1"),
     "--coefficients item 2 of 2 must be a number"),
    (("--coefficients", "0,0", "--T", "10", "--participations", "1", "--min-sep", "1", "--sigma", "1"),
     "--coefficients must be finite numbers"),
    (("--coefficients", "1", "--participations", "1", "--min-sep", "1", "--sigma", "1"),
     "--coefficients needs the run's steps"),
    (("--coefficients", "1", "--T", "10", "--sigma", "1"), "need --participations k and --min-sep s"),
    (("--coefficients", "1", "--T", "10", "--participations", "1", "--min-sep", "1"), "--sigma is required"),
    (("--strategy", "/nonexistent/C.npy", "--participations", "1", "--min-sep", "1", "--sigma", "1"),
     "--strategy must be a readable .npy file or CSV file, got '/nonexistent/C.npy'"),
    (("--strategy", "a.npy", "--coefficients", "1", "--T", "1", "--sigma", "1"),
     "--strategy and --coefficients cannot be given together"),
    (("--tree", "--p", "0.01", "--T", "100", "--sigma", "1"), "--tree needs --n and --batch-size"),
    (("--tree", "--bands", "2", "--p", "0.01", "--T", "100", "--sigma", "1"), "--tree and --bands cannot be given"),
    (("--tree", "--n", "100", "--batch-size", "10", "--epochs", "1", "--sigma", "1", "--neighbours", "add-remove"),
     "--neighbours must be zero-out or replace-one"),
    (("--tree", "--n", "100", "--batch-size", "10", "--epochs", "1", "--sigma", "1", "--sampling", "poisson"),
     "--sampling applies to --bands"),
    (("--sigma", "1", "--T", "10"), "mf needs a mechanism"),
    (("--bands", "2", "--p", "0.1", "--T", "10", "--sigma", "1", "--eps", "1", "--max-eps", "2"), "--max-eps cannot"),
])
def test_bad_input_is_one_line_exit_2(dpcalc, arguments, message):
    run = dpcalc("mf", *arguments)
    assert run.code == 2 and run.stdout == ""
    assert len(run.stderr.strip().splitlines()) == 1 and message in run.stderr, run.stderr


def test_strategy_refusals(dpcalc, tmp_path):
    upper = tmp_path / "upper.npy"
    np.save(upper, np.triu(np.ones((4, 4))))
    run = dpcalc("mf", "--strategy", str(upper), "--participations", "1", "--min-sep", "1", "--sigma", "1")
    assert run.code == 2 and "--strategy must be lower-triangular (every entry above the diagonal 0), got 1.0 at row 1, column 2" in run.stderr
    eye = tmp_path / "eye.npy"
    np.save(eye, np.eye(50))
    run = dpcalc("mf", "--strategy", str(eye), "--participations", "1", "--min-sep", "1", "--T", "40", "--sigma", "1")
    assert run.code == 2 and "--strategy has 50 rows but the run has 40 steps" in run.stderr
    text = tmp_path / "bad.csv"
    text.write_text("1,x\n0,1\n")
    run = dpcalc("mf", "--strategy", str(text), "--participations", "1", "--min-sep", "1", "--sigma", "1")
    assert run.code == 2 and run.stderr.count("\n") == 1 and "--strategy must be a .npy file or CSV file of numbers" in run.stderr
