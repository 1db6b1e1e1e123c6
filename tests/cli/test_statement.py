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
    assert set(document["inputs"]) == {"phases", "delta", "accuracy", "n", "batch_size"}


@pytest.mark.slow
def test_design_card(dpcalc) -> None:
    document = dpcalc("statement", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--json").json()
    low, high = DESIGN_CARD_CERTIFIED_UPPER
    assert low <= document["result"]["epsilon"] <= high


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
