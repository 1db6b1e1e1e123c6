"""`dpcalc rdp` sweeps: rows, their order and shape, reuse of the per-step curve, every error path."""

from __future__ import annotations

import math

import pytest

from dpcalc.cli.syntax import MAX_ROWS

RDP = ("rdp", "--p", "0.004", "--sigma", "1.1", "--no-tight")
ROW_KEYS = {"p", "sigma", "T", "epsilon", "delta", "order", "conversion", "tight_epsilon", "curve"}
SWEEP_INPUT_KEYS = {"mechanism", "sampling", "neighbours", "examples_per_user", "p", "sigma", "noise_std", "sensitivity", "scale", "T", "n", "batch_size", "epochs", "delta", "eps", "orders",
                    "conversion", "max_eps", "max_delta", "no_tight"}


def test_t_sweep_json_rows_equal_single_runs(dpcalc):
    run = dpcalc(*RDP, "--T", "1000,10000", "--json")
    assert (run.code, run.stderr) == (0, "")
    document = run.json()
    assert set(document["inputs"]) == SWEEP_INPUT_KEYS
    assert document["inputs"]["T"] == [1000, 10000] and document["inputs"]["p"] == 0.004
    assert document["inputs"]["delta"] == 1e-5 and document["inputs"]["orders"] == "default"
    result = document["result"]
    assert set(result) == {"swept", "rows"} and result["swept"] == ["T"]
    assert [set(row) for row in result["rows"]] == [ROW_KEYS] * 2
    for row, steps in zip(result["rows"], (1000, 10000)):
        single = dpcalc("rdp", "--p", "0.004", "--sigma", "1.1", "--T", str(steps), "--no-tight", "--json").json()
        expected = single["result"]
        # the same arithmetic (steps times the per-step curve): equal to the last bit
        assert (row["T"], row["epsilon"], row["order"], row["delta"]) == (
            steps, expected["epsilon"], expected["order"], expected["delta"]
        )
        assert row["curve"] == expected["curve"]  # each row's whole curve, as the single run gives it
    # reference value (docs/reference-values.md, dp_accounting default orders): design card RDP epsilon 2.01306 at order 9.8
    assert result["rows"][1]["epsilon"] == pytest.approx(2.01306, abs=5e-6) and result["rows"][1]["order"] == 9.8
    assert document["warnings"] == []


@pytest.mark.slow
def test_epochs_sweep_computes_the_per_step_curve_once(dpcalc, monkeypatch):
    from dpcalc.core.rdp import curves  # where composed_rdp looks phase_rdp up

    calls = []
    real = curves.phase_rdp
    monkeypatch.setattr(curves, "phase_rdp", lambda *args: calls.append(args[0]) or real(*args))
    run = dpcalc("rdp", "--n", "60000", "--batch-size", "256", "--epochs", "1:60:1", "--sigma", "1.1", "--no-tight",
                 "--json")
    assert run.code == 0
    rows = run.json()["result"]["rows"]
    assert len(rows) == 60 and len(calls) == 1  # one curve for 60 rows
    # T = ceil(epochs * 60000 / 256), exactly; epsilon grows with the epochs
    assert [row["T"] for row in rows] == [math.ceil(e * 60000 / 256) for e in range(1, 61)]
    assert [row["epochs"] for row in rows] == [float(e) for e in range(1, 61)]
    assert all(a["epsilon"] < b["epsilon"] for a, b in zip(rows, rows[1:]))
    # two noise levels: two curves
    calls.clear()
    dpcalc("rdp", "--p", "0.01", "--sigma", "1,2", "--T", "10:50:10", "--no-tight", "--json")
    assert len(calls) == 2


def test_rows_follow_the_command_line_order(dpcalc):
    first = dpcalc("rdp", "--p", "0.01", "--T", "10,20", "--sigma", "1,2", "--no-tight", "--json").json()
    assert first["result"]["swept"] == ["T", "sigma"]
    assert [(row["T"], row["sigma"]) for row in first["result"]["rows"]] == [(10, 1.0), (10, 2.0), (20, 1.0), (20, 2.0)]
    second = dpcalc("rdp", "--p", "0.01", "--sigma", "1,2", "--T", "10,20", "--no-tight", "--json").json()
    assert second["result"]["swept"] == ["sigma", "T"]
    assert [(row["sigma"], row["T"]) for row in second["result"]["rows"]] == [(1.0, 10), (1.0, 20), (2.0, 10), (2.0, 20)]


def test_table_shows_what_varies(dpcalc):
    run = dpcalc("rdp", "--n", "60000", "--batch-size", "256", "--epochs", "10:60:10", "--sigma", "0.8,1.1",
                 "--no-tight")
    assert (run.code, run.stderr) == (0, "")
    assert "Renyi DP sweep: p = 0.004267" in run.stdout
    header = next(line for line in run.stdout.splitlines() if "epochs" in line)
    assert [cell.strip() for cell in header.strip("┃").split("┃")] == ["epochs", "sigma", "T", "epsilon", "order"]
    # 60 epochs at sigma 1.1: 2.5966555287 at order 8.1 (mpmath, 50 digits; dp_accounting 0.6.0 on the
    # same grid picks 8.1), printed rounded up to six decimals; the figure is accurate to 1e-9
    assert "14063" in run.stdout and "2.596656" in run.stdout
    classic = dpcalc(*RDP, "--T", "10,20", "--conversion", "classic")
    assert "classic conversion" in classic.stdout


def test_tight_epsilon_per_row(dpcalc):
    document = dpcalc("rdp", "--p", "0.1", "--sigma", "2", "--T", "10,20", "--json").json()
    rows = document["result"]["rows"]
    assert all(0 < row["tight_epsilon"] < row["epsilon"] for row in rows)  # RDP is above the tight figure
    single = dpcalc("pld", "--p", "0.1", "--sigma", "2", "--T", "20", "--json").json()["result"]
    assert rows[1]["tight_epsilon"] == single["epsilon_upper"]
    table = dpcalc("rdp", "--p", "0.1", "--sigma", "2", "--T", "10,20")
    assert "tight epsilon" in table.stdout


def test_eps_sweep_solves_delta(dpcalc):
    document = dpcalc(*RDP, "--T", "10000", "--eps", "1,2", "--json").json()
    rows = document["result"]["rows"]
    assert document["result"]["swept"] == ["eps"] and document["inputs"]["delta"] is None
    assert [row["eps"] for row in rows] == [1.0, 2.0]
    assert rows[0]["delta"] > rows[1]["delta"] > 0
    assert all(row["tight_epsilon"] is None for row in rows)
    single = dpcalc(*RDP, "--T", "10000", "--eps", "2", "--json").json()["result"]
    assert rows[1]["delta"] == single["delta"] and rows[1]["epsilon"] == 2.0


def test_delta_sweep(dpcalc):
    rows = dpcalc(*RDP, "--T", "10000", "--delta", "1e-5,1e-7", "--json").json()["result"]["rows"]
    assert [row["delta"] for row in rows] == [1e-5, 1e-7]
    assert rows[0]["epsilon"] < rows[1]["epsilon"]


def test_laplace_scale_sweep(dpcalc):
    document = dpcalc("rdp", "--mechanism", "laplace", "--scale", "1,2,4", "--T", "10", "--no-tight", "--json").json()
    rows = document["result"]["rows"]
    assert document["inputs"]["mechanism"] == "laplace"
    assert set(rows[0]) == {"scale", "p", "T", "epsilon", "delta", "order", "conversion", "tight_epsilon", "curve"}
    assert [row["scale"] for row in rows] == [1.0, 2.0, 4.0] and all(row["p"] == 1.0 for row in rows)
    assert rows[0]["epsilon"] > rows[1]["epsilon"] > rows[2]["epsilon"] > 0


def test_orders_are_not_swept(dpcalc):
    # --orders is a list of orders for one run, never a sweep
    document = dpcalc(*RDP, "--T", "10000", "--orders", "8,9,10,11", "--json").json()
    assert "rows" not in document["result"] and document["result"]["order"] in (8.0, 9.0, 10.0, 11.0)
    swept = dpcalc(*RDP, "--T", "100,10000", "--orders", "8,9,10,11", "--json").json()
    assert swept["inputs"]["orders"] == [8.0, 9.0, 10.0, 11.0]
    assert swept["result"]["rows"][1]["epsilon"] == document["result"]["epsilon"]
    # a range in --orders is the orders it expands to, not a sweep
    ranged = dpcalc(*RDP, "--T", "100,10000", "--orders", "8:11:1", "--json").json()
    assert ranged["inputs"]["orders"] == [8.0, 9.0, 10.0, 11.0] and ranged["result"] == swept["result"]
    assert [point["order"] for point in ranged["result"]["rows"][0]["curve"]] == [8.0, 9.0, 10.0, 11.0]


def test_max_eps_checks_every_row(dpcalc):
    run = dpcalc(*RDP, "--T", "1000,10000", "--max-eps", "1.5", "--json")
    assert run.code == 1
    document = run.json()
    assert [row["within_budget"] for row in document["result"]["rows"]] == [True, False]
    assert document["budget"]["within_budget"] is False and document["budget"]["max_epsilon"] == 1.5
    assert "Budget exceeded: epsilon 2.01306 (RDP upper bound (improved conversion)) > --max-eps 1.5" in run.stderr
    within = dpcalc(*RDP, "--T", "1000,2000", "--max-eps", "1.5", "--json")
    assert within.code == 0 and within.json()["budget"]["within_budget"] is True
    table = dpcalc(*RDP, "--T", "1000,10000", "--max-eps", "1.5")
    assert table.code == 1 and "NO" in table.stdout and "EXCEEDED" in table.stdout


def test_single_run_is_unchanged_by_the_sweep_code(dpcalc):
    document = dpcalc(*RDP, "--T", "10000", "--json").json()
    assert "rows" not in document["result"] and "phases" in document["inputs"]


@pytest.mark.parametrize(
    "args, message",
    [
        (("--T", "10,0"), "--T must be an integer in [1, inf), got 0"),  # the single-run message
        (("--T", "10,abc"), "--T must be an integer in [1, inf), got 'abc'"),
        (("--T", "10,,20"), "--T: empty item in the list '10,,20'; separate values with single commas"),
        (("--T", "1:10:0.5"), "--T takes integers: a range needs integer start, stop and step, got '1:10:0.5'"),
        (("--T", "1:10"), "--T: a range is start:stop:step, got '1:10'"),
        (("--T", "10:1:1"), "--T: the step 1 never reaches 1 from 10 in '10:1:1' (a rising step needs stop >= start)"),
        (("--T", "10", "--sigma", "1,0"), "--sigma must be in (0, inf), got 0"),
        (("--T", "10", "--delta", "1e-5,2"), "--delta must be in (0, 1), got 2"),
        (("--T", "10", "--delta", "1e-5,1e-6", "--eps", "1"),
         "--delta and --eps cannot be given together; give --delta to get epsilon, or --eps to get delta"),
        (("--T", "10,20", "--max-eps", "-1"), "--max-eps must be in [0, inf), got -1"),
        (("--T", "10,20", "--orders", "1"),
         "--orders must be a comma-separated list of orders in (1, 1e+100] or ranges start:stop:step, got 1"),
        (("--T", "1:200:1", "--delta", "1e-5:1e-3:1e-5"),
         f"the sweep has 20000 rows (--T 200 x --delta 100); a sweep takes at most {MAX_ROWS} rows"),
        (("--T", "1:20000:1"), f"--T: the range '1:20000:1' has 20000 values; a sweep takes at most {MAX_ROWS} rows"),
    ],
)
def test_sweep_errors(dpcalc, args, message):
    run = dpcalc(*RDP, *args)
    assert (run.code, run.stdout, run.stderr) == (2, "", f"Error: {message}\n")


@pytest.mark.parametrize(
    "args, message",
    [
        (("--phase", "p=0.01,sigma=1,T=10", "--delta", "1e-5,1e-6"),
         "--phase cannot be combined with a sweep (--delta 1e-5,1e-6); sweeps vary the single-phase flags "
         "(--p, --sigma, --T, ...): give the run with them, or run once per --phase value"),
        (("--phase", "p=0.01,sigma=1,T=10", "--T", "1:5:1"),
         "--phase cannot be combined with a sweep (--T 1:5:1); sweeps vary the single-phase flags "
         "(--p, --sigma, --T, ...): give the run with them, or run once per --phase value"),
        (("--mechanism", "laplace", "--scale", "1,2", "--T", "1", "--p", "0.5"),
         "--p must be 1 for the laplace mechanism (RDP of the Poisson-subsampled Laplace mechanism is not "
         "implemented), got 0.5"),
    ],
)
def test_sweep_run_description_errors(dpcalc, args, message):
    run = dpcalc("rdp", "--no-tight", *args)
    assert (run.code, run.stdout, run.stderr) == (2, "", f"Error: {message}\n")


def test_a_phase_with_commas_alone_is_not_a_sweep(dpcalc):
    run = dpcalc("rdp", "--phase", "p=0.01,sigma=1,T=10", "--phase", "p=0.01,sigma=2,T=10", "--no-tight", "--json")
    assert run.code == 0 and "rows" not in run.json()["result"]


def test_help_shows_a_sweep_example(dpcalc):
    run = dpcalc("rdp", "--help")
    assert "dpcalc rdp --n 60000 --batch-size 256 --epochs 10:60:10 --sigma 0.8,1.1 --no-tight" in run.stdout
    assert "Sweeps:" in run.stdout


def test_sweep_inputs_hold_per_row_values_and_the_resolved_run(dpcalc):
    """README: in a sweep, an input that differs between rows is the list of its per-row values;
    the run is echoed as resolved (T for --epochs, p for --batch-size), as the single command
    echoes its resolved phases."""
    run = dpcalc("rdp", "--n", "60000", "--batch-size", "256,512", "--sigma", "1.1", "--epochs", "1,2", "--no-tight",
                 "--json")
    inputs = run.json()["inputs"]
    assert inputs["batch_size"] == [256, 256, 512, 512] and inputs["epochs"] == [1.0, 2.0, 1.0, 2.0]
    assert inputs["T"] == [235, 469, 118, 235] and inputs["p"] == [256 / 60000] * 2 + [512 / 60000] * 2
    assert inputs["sigma"] == 1.1 and inputs["n"] == 60000
