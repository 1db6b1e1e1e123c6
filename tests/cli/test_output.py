"""The shared output path: table rendering and strict JSON."""

from __future__ import annotations

import json
import math

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
