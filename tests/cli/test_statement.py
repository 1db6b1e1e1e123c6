"""`dpcalc statement` on the command line: the Markdown, the JSON contract, the error paths."""

from __future__ import annotations

import pytest

from tests.snapshots import DESIGN_CARD_CERTIFIED_UPPER

SMALL = ("statement", "--p", "0.01", "--sigma", "1.0", "--T", "100")
RESULT_KEYS = {"markdown", "delta", "epsilon", "epsilon_lower", "max_advantage", "fpr", "tpr", "framework"}


def test_markdown_on_stdout(dpcalc) -> None:
    run = dpcalc(*SMALL)
    assert run.code == 0, run.stderr
    assert run.stdout.startswith("**Privacy statement.** The model was trained with DP-SGD for 100 steps")
    assert "| quantity | value |" in run.stdout and run.stdout.count("\n| ") == 5
    assert "Poisson sampling" in run.stdout and "References:" in run.stdout


def test_json_contract(dpcalc) -> None:
    run = dpcalc(*SMALL, "--json")
    assert run.code == 0, run.stderr
    document = run.json()
    assert set(document) == {"command", "version", "inputs", "result", "warnings"}
    assert document["command"] == "statement"
    result = document["result"]
    assert set(result) == RESULT_KEYS
    assert result["epsilon_lower"] <= result["epsilon"] and result["fpr"] == 1e-3
    assert result["markdown"].startswith("**Privacy statement.**")
    assert set(document["inputs"]) == {"phases", "delta", "accuracy", "n", "batch_size", "like"}


@pytest.mark.slow
def test_design_card(dpcalc) -> None:
    document = dpcalc("statement", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--json").json()
    low, high = DESIGN_CARD_CERTIFIED_UPPER
    assert low <= document["result"]["epsilon"] <= high


@pytest.mark.slow
def test_training_form_and_pipeline(dpcalc) -> None:
    run = dpcalc("statement", "--n", "1000", "--batch-size", "10", "--epochs", "1", "--sigma", "1",
                 "--sampling", "uniform", "--neighbours", "replace-one")
    assert run.code == 0, run.stderr
    assert "on 1000 examples with batches of 10 for 100 steps" in run.stdout
    assert "fixed-size batches" in run.stdout and "replace-one neighbours" in run.stdout


@pytest.mark.parametrize(("args", "message"), [
    (("--sigma", "1,2"), "Error: --sigma 1,2: a statement describes one run; give each option one value"),
    (("--delta", "2"), "Error: --delta must be in (0, 1), got 2"),
])
def test_errors_are_one_line(dpcalc, args, message) -> None:
    base = [item for item in SMALL if item not in ("--sigma", "1.0")] if "--sigma" in args else list(SMALL)
    run = dpcalc(*base, *args)
    assert run.code == 2
    assert run.stderr.strip() == message


def test_shuffle_under_add_remove_is_refused(dpcalc) -> None:
    run = dpcalc("statement", "--n", "1000", "--batch-size", "10", "--epochs", "1", "--sigma", "1",
                 "--sampling", "shuffle")
    assert run.code == 2 and len(run.stderr.strip().splitlines()) == 1


def test_like_adds_the_frameworks_estimate(dpcalc) -> None:
    document = dpcalc(*SMALL, "--like", "opacus", "--json").json()
    framework = document["result"]["framework"]
    assert framework["framework"] == "opacus" and framework["epsilon"] > 0
    assert document["inputs"]["like"] == "opacus"
    assert "(an estimate, not a bound)" in document["result"]["markdown"]


def test_like_refuses_a_run_the_frameworks_do_not_model(dpcalc) -> None:
    run = dpcalc("statement", "--n", "1000", "--batch-size", "10", "--epochs", "1", "--sigma", "1",
                 "--sampling", "uniform", "--like", "opacus")
    assert run.code == 2 and run.stderr.startswith("Error: --like opacus:")


def test_budget_file(dpcalc, tmp_path) -> None:
    budget = tmp_path / "budget.toml"
    budget.write_text('[budget]\nepsilon = 1\ndelta = 1e-5\n\n[[release]]\nname = "counts"\nmechanism = "laplace"\n'
                      'scale = 10\ncount = 2\n')
    run = dpcalc("statement", "--budget", str(budget), "--json")
    assert run.code == 0, run.stderr
    result = run.json()["result"]
    assert set(result) == {"markdown", "delta", "epsilon", "within_budget"}
    # two Laplace releases of scale 10: at most basic composition's 2/10, at delta 1e-5 a little below it
    assert result["within_budget"] is True and 0.199 < result["epsilon"] <= 0.2
    assert "| counts | laplace |" in result["markdown"] and "within the budget of epsilon 1" in result["markdown"]


@pytest.mark.parametrize(("args", "message"), [
    (("--budget", "/no/such.toml"), "Error: --budget: no such file: /no/such.toml"),
    (("--budget", "x.toml", "--sigma", "1"),
     "Error: --budget and --sigma cannot be given together; the budget file describes the releases and their delta"),
])
def test_budget_errors(dpcalc, args, message) -> None:
    run = dpcalc("statement", *args)
    assert run.code == 2 and run.stderr.strip() == message
