"""--csv: a header line and one row per result (each combination of a sweep, each release of a
budget and its total), for spreadsheets and plotting tools; the same figures as --json."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "privacy-budget.toml"
SWEEP = ["pld", "--n", "60000", "--batch-size", "256", "--epochs", "10:30:10", "--sigma", "1.1"]


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


@pytest.mark.slow
def test_a_sweep_gives_one_row_per_combination_with_the_json_figures(dpcalc):
    table = dpcalc(*SWEEP, "--csv")
    assert (table.code, table.stderr) == (0, "")
    document = dpcalc(*SWEEP, "--json").json()
    got = rows(table.stdout)
    assert len(got) == len(document["result"]["rows"]) == 3
    for line, row in zip(got, document["result"]["rows"]):
        assert float(line["epsilon"]) == row["epsilon"] and float(line["epsilon_lower"]) == row["epsilon_lower"]
        assert int(line["T"]) == row["T"] and float(line["grid.step"]) == row["grid"]["step"]  # nested: dotted
    assert table.stdout.splitlines()[0].startswith("epochs,p,sigma,T,epsilon,")


@pytest.mark.slow
def test_a_sweep_with_a_budget_has_the_verdict_column(dpcalc):
    run = dpcalc(*SWEEP, "--max-eps", "1.5", "--csv")
    assert run.code == 1  # the 30-epoch row spends more than 1.5
    assert [line["within_budget"] for line in rows(run.stdout)] == ["True", "True", "False"]
    assert run.stderr.startswith("Budget exceeded: epsilon")


def test_a_single_run_is_one_row(dpcalc):
    run = dpcalc("pld", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--csv")
    (line,) = rows(run.stdout)
    result = dpcalc("pld", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--json").json()["result"]
    assert float(line["epsilon"]) == result["epsilon"] and line["as_poisson"] == ""  # null: an empty cell


def test_a_list_is_its_json_text(dpcalc):
    run = dpcalc("gdp", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--no-tight", "--csv")
    (line,) = rows(run.stdout)
    assert json.loads(line["tradeoff"])[0]["alpha"] == 0.001


@pytest.mark.slow
def test_check_gives_a_row_per_release_and_the_total(dpcalc):
    run = dpcalc("check", str(EXAMPLE), "--csv")
    assert run.code == 0
    got = rows(run.stdout)
    document = dpcalc("check", str(EXAMPLE), "--json").json()["result"]
    assert [line["name"] for line in got] == [r["name"] for r in document["releases"]] + ["total"]
    assert float(got[-1]["epsilon"]) == document["total"]["epsilon"]


@pytest.mark.parametrize("command", [
    ["gdp", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--no-tight"],
    ["check", str(EXAMPLE)],
])
def test_json_and_csv_together_are_refused(dpcalc, command):
    run = dpcalc(*command, "--json", "--csv")
    assert run.code == 2 and run.only_error  # with --json: the error as JSON
    assert run.stderr == "Error: --json and --csv cannot be given together; give one output format\n"


@pytest.mark.slow
def test_warnings_and_charts_go_to_stderr(dpcalc):
    run = dpcalc("gdp", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--csv", "--chart")
    assert run.code == 0
    assert run.stderr.startswith("Warning: mu comes from the central-limit approximation")
    assert "│" in run.stderr and "│" not in run.stdout  # the chart went to stderr
    assert len(rows(run.stdout)) == 1  # stdout stays CSV
