"""`dpcalc mechanism svt`: every option, every error path, the JSON contract."""

from __future__ import annotations

import math

import pytest

RESULT_KEYS = {"algorithm", "epsilon", "alpha", "beta", "queries", "answers", "sensitivity", "threshold_scale",
               "query_scale", "accuracy", "solved_for", "source"}
INPUT_KEYS = {"queries", "answers", "eps", "scale", "alpha", "beta", "sensitivity", "max_eps"}


def test_above_threshold_table_and_json(dpcalc):
    run = dpcalc("mechanism", "svt", "--queries", "1000", "--eps", "1", "--beta", "0.05")
    # DR Thm 3.24: alpha = 8 (ln 1000 + ln 40) = 8 ln 40000 = 84.773077...; printed rounded up
    assert run.code == 0 and "84.773078" in run.stdout and "AboveThreshold" in run.stdout
    document = dpcalc("mechanism", "svt", "--queries", "1000", "--eps", "1", "--beta", "0.05", "--json").json()
    assert document["command"] == "mechanism svt"
    assert set(document["inputs"]) == INPUT_KEYS and set(document["result"]) == RESULT_KEYS
    result = document["result"]
    assert result["alpha"] == pytest.approx(8 * math.log(40000), rel=1e-15)
    assert (result["threshold_scale"], result["query_scale"]) == (2.0, 4.0)
    assert result["source"] == ("privacy: Dwork and Roth 2014, Thm 3.23 (AboveThreshold); accuracy: "
                                "Dwork and Roth 2014, Thm 3.24")


def test_sparse_epsilon(dpcalc):
    result = dpcalc("mechanism", "svt", "--queries", "1000", "--answers", "10", "--alpha", "500", "--beta", "0.05",
                    "--sensitivity", "2", "--json").json()["result"]
    # DR Thm 3.26 (delta = 0): eps = 8 c Delta (ln k + ln(2c/beta)) / alpha = 160 ln 400000 / 500
    assert result["epsilon"] == pytest.approx(160 * math.log(400000) / 500, rel=1e-15)
    assert result["algorithm"] == "Sparse" and "Thm 3.26" in result["source"]
    assert result["threshold_scale"] == pytest.approx(40 / result["epsilon"], rel=1e-15)


def test_scale_gives_the_privacy(dpcalc):
    # threshold scale 20 with c = 5, Delta = 1: eps = 2 c Delta / scale = 0.5
    document = dpcalc("mechanism", "svt", "--queries", "100", "--answers", "5", "--scale", "20", "--beta", "0.1",
                      "--json").json()
    result = document["result"]
    assert result["epsilon"] == 0.5 and result["threshold_scale"] == 20.0 and result["query_scale"] == 40.0
    assert result["alpha"] == pytest.approx(8 * 5 * math.log(100 * 100) / 0.5, rel=1e-15)  # 8c(ln k + ln(2c/beta))/eps
    assert document["inputs"]["scale"] == 20.0 and document["inputs"]["eps"] is None


def test_beta_and_vacuous_warning(dpcalc):
    result = dpcalc("mechanism", "svt", "--queries", "100", "--eps", "0.5", "--alpha", "200", "--json").json()["result"]
    assert result["beta"] == pytest.approx(200 * math.exp(-12.5), rel=1e-14)
    run = dpcalc("mechanism", "svt", "--queries", "10", "--eps", "1", "--alpha", "1")
    assert run.code == 0 and run.stderr.startswith("Warning: the bound is vacuous at this alpha")


def test_max_eps_gate(dpcalc):
    assert dpcalc("mechanism", "svt", "--queries", "10", "--alpha", "100", "--beta", "0.1", "--max-eps", "1").code == 0
    assert dpcalc("mechanism", "svt", "--queries", "10", "--alpha", "10", "--beta", "0.1", "--max-eps", "1").code == 1


@pytest.mark.parametrize("args, message", [
    (("--queries", "10", "--beta", "0.1"),
     "Error: give two of --eps, --alpha and --beta, got only --beta: add --eps (to get alpha) or --alpha (to get "
     "epsilon)\n"),
    (("--queries", "10", "--eps", "1", "--alpha", "1", "--beta", "0.1"),
     "Error: --eps, --alpha and --beta cannot all be given: drop the one to compute (drop --eps to get epsilon, "
     "--alpha to get alpha, --beta to get beta)\n"),
    (("--queries", "10", "--eps", "1", "--scale", "2", "--beta", "0.1"),
     "Error: --eps and --scale cannot be given together; the threshold's scale is 2 c Delta / eps: give one\n"),
    (("--queries", "10"),
     "Error: give --eps (alone: alpha at beta 0.5 to 0.01), or two of --eps, --alpha and --beta (the third is "
     "computed), e.g. --eps 1 --beta 0.05 to get alpha\n"),
    (("--queries", "10", "--scale", "0", "--beta", "0.1"), "Error: --scale must be in (0, inf), got 0\n"),
    (("--queries", "10", "--answers", "11", "--eps", "1", "--beta", "0.1"),
     "Error: --answers must be at most --queries 10, got 11\n"),
    (("--queries", "0", "--eps", "1", "--beta", "0.1"), "Error: --queries must be an integer in [1, inf), got 0\n"),
    (("--queries", "10", "--answers", "0", "--eps", "1", "--beta", "0.1"),
     "Error: --answers must be an integer in [1, inf), got 0\n"),
    (("--queries", "10", "--eps", "-1", "--beta", "0.1"), "Error: --eps must be in (0, inf), got -1\n"),
    (("--queries", "10", "--alpha", "inf", "--beta", "0.1"), "Error: --alpha must be in (0, inf), got inf\n"),
    (("--queries", "10", "--eps", "1", "--beta", "1.5"), "Error: --beta must be in (0, 1), got 1.5\n"),
    (("--queries", "10", "--eps", "1", "--beta", "0.1", "--sensitivity", "0"),
     "Error: --sensitivity must be in (0, inf), got 0\n"),
])
def test_errors(dpcalc, args, message):
    run = dpcalc("mechanism", "svt", *args)
    assert (run.code, run.stdout, run.stderr) == (2, "", message)


def test_queries_required(dpcalc):
    run = dpcalc("mechanism", "svt", "--eps", "1", "--beta", "0.1")
    assert run.code == 2 and run.stderr == "Error: Missing option '--queries'.\n"


def test_help_lists_examples(dpcalc):
    run = dpcalc("mechanism", "svt", "--help")
    assert run.code == 0 and "dpcalc mechanism svt --queries 1000 --answers 10 --alpha 500 --beta 0.05" in run.stdout
    assert "Lyu" in " ".join(run.stdout.split())


def test_privacy_alone_gives_alpha_at_standard_betas(dpcalc):
    # alpha = 8 c Delta (ln k + ln(2 c / beta)) / eps (Dwork, Roth 2014, Thm 3.26), c = 5, eps = 2 c / scale = 0.5
    run = dpcalc("mechanism", "svt", "--queries", "100", "--answers", "5", "--scale", "20", "--json")
    assert run.code == 0
    result = run.json()["result"]
    assert set(result) == RESULT_KEYS and result["alpha"] is None and result["solved_for"] == "accuracy"
    assert result["epsilon"] == 0.5
    for point in result["accuracy"]:
        assert point["alpha"] == pytest.approx(8 * 5 * (math.log(100) + math.log(10 / point["beta"])) / 0.5, rel=1e-14)
