"""`dpcalc pld` sweeps: rows, their order and shape, the per-row accountant, every error path."""

from __future__ import annotations

import math

import pytest

from dpcalc.cli.syntax import MAX_ROWS

PLD = ("pld", "--p", "0.1", "--sigma", "2")
RESULT_KEYS = {"epsilon", "epsilon_lower", "epsilon_upper", "delta", "delta_lower", "delta_upper", "accuracy", "grid",
               "binding", "analysis", "as_poisson", "truncation"}
SWEEP_INPUT_KEYS = {"mechanism", "sampling", "neighbours", "examples_per_user", "p", "sigma", "noise_std", "sensitivity", "scale", "T", "n", "batch_size", "epochs", "accuracy", "delta", "eps",
                    "max_eps", "max_delta"}


def test_t_sweep_json_rows_equal_single_runs(dpcalc):
    run = dpcalc(*PLD, "--T", "10,40", "--json")
    assert (run.code, run.stderr) == (0, "")
    document = run.json()
    assert set(document["inputs"]) == SWEEP_INPUT_KEYS
    assert document["inputs"]["T"] == [10, 40] and document["inputs"]["accuracy"] == 1e-3
    assert document["inputs"]["delta"] == 1e-5 and document["inputs"]["mechanism"] == "gaussian"
    result = document["result"]
    assert set(result) == {"swept", "rows"} and result["swept"] == ["T"]
    assert [set(row) for row in result["rows"]] == [{"T", "p", "sigma"} | RESULT_KEYS] * 2
    for row, steps in zip(result["rows"], (10, 40)):
        single = dpcalc(*PLD, "--T", str(steps), "--json").json()["result"]
        assert {**{key: row[key] for key in RESULT_KEYS}, "like": None} == single
        assert row["epsilon_lower"] <= row["epsilon"] == row["epsilon_upper"]
    assert result["rows"][0]["epsilon"] < result["rows"][1]["epsilon"]


def test_design_card_in_a_sweep(dpcalc):
    # reference value (docs/reference-values.md, design card): tight epsilon 1.8410 (+-0.001) at T = 10000; the row is
    # the certified upper bound
    rows = dpcalc("pld", "--p", "0.004", "--sigma", "1.1", "--T", "5000,10000", "--json").json()["result"]["rows"]
    assert rows[1]["epsilon"] == pytest.approx(1.8410, abs=1e-3) and rows[1]["epsilon"] >= 1.8400
    assert rows[0]["epsilon"] < rows[1]["epsilon"]


def test_epochs_sweep_shows_the_steps(dpcalc):
    run = dpcalc("pld", "--n", "1000", "--batch-size", "100", "--epochs", "1:4:1", "--sigma", "2", "--json")
    rows = run.json()["result"]["rows"]
    assert [row["T"] for row in rows] == [math.ceil(e * 1000 / 100) for e in (1, 2, 3, 4)]
    assert [row["epochs"] for row in rows] == [1.0, 2.0, 3.0, 4.0] and all(row["p"] == 0.1 for row in rows)
    assert all(a["epsilon"] < b["epsilon"] for a, b in zip(rows, rows[1:]))
    table = dpcalc("pld", "--n", "1000", "--batch-size", "100", "--epochs", "1:4:1", "--sigma", "2")
    assert (table.code, table.stderr) == (0, "")
    assert "Tight accounting (PLD) sweep: p = 0.1, sigma = 2" in table.stdout
    header = next(line for line in table.stdout.splitlines() if "epochs" in line)
    assert [cell.strip() for cell in header.strip("┃").split("┃")] == [
        "epochs", "T", "epsilon (certified)", "epsilon lower"
    ]


def test_rows_follow_the_command_line_order(dpcalc):
    first = dpcalc("pld", "--p", "0.1", "--T", "10,20", "--sigma", "1,2", "--json").json()
    assert first["result"]["swept"] == ["T", "sigma"]
    assert [(row["T"], row["sigma"]) for row in first["result"]["rows"]] == [(10, 1.0), (10, 2.0), (20, 1.0), (20, 2.0)]
    second = dpcalc("pld", "--p", "0.1", "--sigma", "1,2", "--T", "10,20", "--json").json()
    assert [(row["sigma"], row["T"]) for row in second["result"]["rows"]] == [(1.0, 10), (1.0, 20), (2.0, 10), (2.0, 20)]


def test_eps_sweep_solves_delta(dpcalc):
    document = dpcalc(*PLD, "--T", "10", "--eps", "0.5,1", "--json").json()
    rows = document["result"]["rows"]
    assert document["result"]["swept"] == ["eps"] and document["inputs"]["delta"] is None
    assert [row["eps"] for row in rows] == [0.5, 1.0]
    assert rows[0]["delta"] > rows[1]["delta"] > 0
    assert all(row["delta_lower"] <= row["delta_upper"] == row["delta"] for row in rows)
    table = dpcalc(*PLD, "--T", "10", "--eps", "0.5,1")
    assert "delta (certified)" in table.stdout and "delta lower" in table.stdout


def test_accuracy_and_delta_sweeps(dpcalc):
    rows = dpcalc(*PLD, "--T", "10", "--accuracy", "1e-2,1e-3", "--json").json()["result"]["rows"]
    assert [row["accuracy"] for row in rows] == [1e-2, 1e-3]
    for row in rows:  # the interval meets the accuracy asked for
        assert row["epsilon_upper"] - row["epsilon_lower"] <= row["accuracy"] * row["epsilon_upper"]
    by_delta = dpcalc(*PLD, "--T", "10", "--delta", "1e-3,1e-6", "--json").json()["result"]["rows"]
    assert [row["delta"] for row in by_delta] == [1e-3, 1e-6] and by_delta[0]["epsilon"] < by_delta[1]["epsilon"]


def test_laplace_scale_sweep(dpcalc):
    rows = dpcalc("pld", "--mechanism", "laplace", "--scale", "5,10", "--T", "5", "--json").json()["result"]["rows"]
    assert [row["scale"] for row in rows] == [5.0, 10.0] and "sigma" not in rows[0]
    assert rows[0]["epsilon"] > rows[1]["epsilon"] > 0
    assert rows[1]["epsilon"] <= 5 * 0.1  # below basic composition of 5 releases at 0.1-DP


@pytest.mark.slow
def test_a_sweep_over_T_shares_one_composition(dpcalc, monkeypatch):
    from dpcalc.cli import pld as cli
    from dpcalc.core import pld as core

    shared, single = [], []
    real_shared, real_single = core.tight_epsilons_over_steps, cli.account
    monkeypatch.setattr(core, "tight_epsilons_over_steps",
                        lambda phase, delta, steps, **kw: shared.append(list(steps)) or real_shared(phase, delta, steps, **kw))
    monkeypatch.setattr(cli, "account", lambda *args: single.append(args[0][0].steps) or real_single(*args))
    document = dpcalc(*PLD, "--T", "30,10,20,10", "--json").json()
    assert shared == [[30, 10, 20, 10]] and single == []
    assert [row["T"] for row in document["result"]["rows"]] == [30, 10, 20, 10]
    # rows that differ in more than T (here sigma) form one group each; --eps rows go one by one
    shared.clear()
    dpcalc("pld", "--p", "0.01", "--sigma", "1,2", "--T", "10,20", "--json")
    assert shared == [[10, 20], [10, 20]]
    assert dpcalc(*PLD, "--T", "10,20", "--eps", "1", "--json").code == 0
    assert single == [10, 20]


def test_max_eps_checks_every_row(dpcalc):
    run = dpcalc(*PLD, "--T", "10,40", "--max-eps", "1", "--json")
    assert run.code == 1
    document = run.json()
    rows = document["result"]["rows"]
    assert [row["within_budget"] for row in rows] == [True, False]
    assert document["budget"] == {"max_epsilon": 1.0, "epsilon": rows[1]["epsilon_upper"],
                                  "basis": "PLD certified upper bound", "within_budget": False}
    within = dpcalc(*PLD, "--T", "10,20", "--max-eps", "5", "--json")
    assert within.code == 0 and within.json()["budget"]["within_budget"] is True
    table = dpcalc(*PLD, "--T", "10,40", "--max-eps", "1")
    assert table.code == 1 and "NO" in table.stdout and "EXCEEDED" in table.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (("--T", "10,0"), "--T must be an integer in [1, inf), got 0"),
        (("--T", "10,x"), "--T must be an integer in [1, inf), got 'x'"),
        (("--T", "10,"), "--T: empty item in the list '10,'; separate values with single commas"),
        (("--T", "1:10:0.5"), "--T takes integers: a range needs integer start, stop and step, got '1:10:0.5'"),
        (("--T", "1:b:1"), "--T: the range stop must be a number, got 'b' in '1:b:1'"),
        (("--T", "10", "--accuracy", "1e-3,1"), "--accuracy must be in (0, 1), got 1"),
        (("--T", "10", "--eps", "1,-1"), "--eps must be in [0, inf), got -1"),
        (("--T", "10,20", "--max-eps", "x"), "--max-eps must be a number in [0, inf), got 'x'"),
        (("--T", "1:101:1", "--delta", "1e-6:1e-4:1e-6"),
         f"the sweep has 10100 rows (--T 101 x --delta 100); a sweep takes at most {MAX_ROWS} rows"),
    ],
)
def test_sweep_errors(dpcalc, args, message):
    run = dpcalc(*PLD, *args)
    assert (run.code, run.stdout, run.stderr) == (2, "", f"Error: {message}\n")


def test_sweep_with_phase_is_refused(dpcalc):
    run = dpcalc("pld", "--phase", "p=0.01,sigma=1,T=10", "--eps", "1,2")
    assert (run.code, run.stdout) == (2, "")
    assert run.stderr == (
        "Error: --phase cannot be combined with a sweep (--eps 1,2); sweeps vary the single-phase flags "
        "(--p, --sigma, --T, ...): give the run with them, or run once per --phase value\n"
    )


def test_single_run_is_unchanged_by_the_sweep_code(dpcalc):
    document = dpcalc(*PLD, "--T", "10", "--json").json()
    assert set(document["result"]) == RESULT_KEYS | {"like"} and "phases" in document["inputs"]


@pytest.mark.slow
def test_sweep_inputs_hold_per_row_values_and_the_resolved_run(dpcalc):
    """README: in a sweep, an input that differs between rows is the list of its per-row values;
    the run is echoed as resolved (T for --epochs), as the single command echoes its phases."""
    inputs = dpcalc(*PLD, "--epochs", "0.1,0.2", "--json").json()["inputs"]
    assert inputs["epochs"] == [0.1, 0.2] and inputs["T"] == [1, 2]
    assert inputs["p"] == 0.1 and inputs["sigma"] == 2.0
    laplace = dpcalc("pld", "--mechanism", "laplace", "--p", "0.01", "--scale", "2,3", "--T", "100", "--json").json()
    assert laplace["inputs"]["scale"] == [2.0, 3.0] and laplace["inputs"]["T"] == 100
