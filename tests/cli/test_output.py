"""The shared output path: table rendering and strict JSON."""

from __future__ import annotations

import json
import math

import pytest

from dpcalc.cli.output import EXIT_OK, EXIT_OVER_BUDGET, Report, Table, emit, json_safe


def _reject(constant: str):
    raise ValueError(f"non-strict JSON constant {constant}")


def _report(**overrides) -> Report:
    fields = dict(
        command="demo",
        inputs={"x": 1.0},
        result={"epsilon": math.inf, "values": [1.0, -math.inf]},
        tables=[Table(columns=("quantity", "value", "note"), rows=[("epsilon", "inf", "see [inf, 2] :smile:")],
                      title="release [v2]")],
        warnings=["careful [bold]"],
        epsilon=math.inf,
        basis="a test bound",
    )
    fields.update(overrides)
    return Report(**fields)


def test_table_cells_are_plain_text_not_markup(capsys):
    # Rich would read "[inf, 2]" as a style tag and ":smile:" as an emoji code
    assert emit(_report(), json_mode=False) == EXIT_OK
    out, err = capsys.readouterr()
    assert "see [inf, 2] :smile:" in out
    assert "release [v2]" in out
    assert err == "Warning: careful [bold]\n"


def test_json_is_strict_and_non_finite_numbers_are_strings(capsys):
    assert emit(_report(), json_mode=True) == EXIT_OK
    out, err = capsys.readouterr()
    document = json.loads(out, parse_constant=_reject)
    assert document["result"] == {"epsilon": "inf", "values": [1.0, "-inf"]}
    assert document["warnings"] == ["careful [bold]"]
    assert set(document) == {"command", "version", "inputs", "result", "warnings"}
    assert err == ""


def test_budget_exceeded_adds_the_budget_object_and_exit_code_1(capsys):
    code = emit(_report(epsilon=2.5), json_mode=True, max_epsilon=2.0)
    out, err = capsys.readouterr()
    assert code == EXIT_OVER_BUDGET
    assert json.loads(out, parse_constant=_reject)["budget"] == {
        "max_epsilon": 2.0, "epsilon": 2.5, "basis": "a test bound", "within_budget": False}
    assert err == "Budget exceeded: epsilon 2.5 (a test bound) > --max-eps 2\n"


def test_json_safe_keeps_finite_values():
    assert json_safe({"a": (1, 2.5), "b": None, "c": "x"}) == {"a": [1, 2.5], "b": None, "c": "x"}


# What the terminal cannot show never stops the output: through the real command line.

UNICODE_BUDGET = """[budget]
epsilon = 5
delta = 1e-6

[[release]]
name = "modèle v2 — 日本"
mechanism = "dp"
epsilon = 1
delta = 1e-7
"""


def _check(path, *options, **env):
    import os
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "dpcalc", "check", path, *options], capture_output=True,
                          env={**os.environ, **env}, timeout=120)


@pytest.mark.parametrize("options", [pytest.param((), marks=pytest.mark.slow), ("--csv",)], ids=["table", "csv"])
def test_an_ascii_terminal_gets_the_table_and_csv_with_replacements(tmp_path, options):
    budget = tmp_path / "budget.toml"
    budget.write_text(UNICODE_BUDGET, encoding="utf-8")
    run = _check(str(budget), *options, PYTHONIOENCODING="ascii")
    assert (run.returncode, run.stderr) == (0, b"")
    assert b"mod?le v2 ? ??" in run.stdout and run.stdout.isascii()


@pytest.mark.slow
def test_an_ascii_terminal_gets_strict_ascii_json(tmp_path):
    budget = tmp_path / "budget.toml"
    budget.write_text(UNICODE_BUDGET, encoding="utf-8")
    run = _check(str(budget), "--json", PYTHONIOENCODING="ascii")
    assert run.returncode == 0 and run.stdout.isascii()
    assert json.loads(run.stdout)["result"]["releases"][0]["name"] == "modèle v2 — 日本"


@pytest.mark.slow
def test_a_file_name_that_is_not_utf8_is_echoed_with_a_replacement(tmp_path):
    import os

    budget = os.path.join(os.fsencode(tmp_path), b"bud\xffget.toml")
    with open(budget, "w", encoding="utf-8") as file:
        file.write(UNICODE_BUDGET)
    run = _check(budget, "--json", PYTHONIOENCODING="utf-8")
    assert run.returncode == 0
    document = json.loads(run.stdout.decode("utf-8"))  # strict UTF-8: a lone surrogate is not valid JSON text
    assert document["inputs"]["budget_file"] == os.fsdecode(tmp_path) + "/bud\ufffdget.toml"
    assert b"\\udcff" not in run.stdout
    table = _check(budget, PYTHONIOENCODING="utf-8")
    assert table.returncode == 0 and b"bud?get.toml" in table.stdout
