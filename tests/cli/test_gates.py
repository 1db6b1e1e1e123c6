"""Budget gates that can fail: --max-eps and --max-delta compare what the command computes.

With --eps (delta at a given epsilon) the epsilon is the user's own, and its delta may be 1:
--max-eps is refused there (one rule, options.check_gates), and --max-delta gates the certified
upper delta instead; --max-delta without --eps, or where only an approximation exists, is refused.
A gate option given twice is refused, naming it (declare.Option(once=True)).
"""

from __future__ import annotations

import pytest

from tests.snapshots import number_in

PLD = ["pld", "--p", "0.004", "--sigma", "1.1", "--T", "1000"]
RDP = ["rdp", "--p", "0.004", "--sigma", "1.1", "--T", "1000", "--no-tight"]


def _one_line_usage_error(run, start: str) -> None:
    assert run.code == 2 and run.stdout == ""
    assert run.stderr.startswith(f"Error: {start}") and run.stderr.count("\n") == 1
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("args", [
    ["pld", "--p", "0.9", "--sigma", "0.3", "--T", "10000", "--eps", "1", "--max-eps", "1"],  # delta 1
    ["rdp", "--p", "0.9", "--sigma", "0.3", "--T", "10000", "--eps", "1", "--max-eps", "1"],
    ["convert", "--from", "gdp", "--mu", "3", "--to", "dp", "--eps", "1", "--max-eps", "1.5"],  # delta 0.79
    ["convert", "--from", "laplace", "--scale", "1", "--to", "dp", "--eps", "0.5", "--max-eps", "1"],
    ["gdp", "--mu", "3", "--eps", "1", "--max-eps", "1.5"],
    ["gdp", "--p", "0.004", "--sigma", "1.1", "--T", "1000", "--eps", "1", "--max-eps", "1.5"],
    [*PLD, "--eps", "1,2", "--max-eps", "5"],  # a sweep
    ["gdp", "--mu", "1:3:1", "--eps", "1", "--max-eps", "5"],
], ids=["pld", "rdp", "convert-gdp", "convert-laplace", "gdp-mu", "gdp-run", "pld-sweep", "gdp-sweep"])
def test_max_eps_beside_a_given_eps_is_refused(dpcalc, args):
    run = dpcalc(*args)
    _one_line_usage_error(run, "--max-eps cannot check a run given --eps")
    assert "drop --eps" in run.stderr and "--max-delta" in run.stderr


@pytest.mark.slow
def test_max_delta_gates_the_certified_upper_delta_of_pld(dpcalc):
    within = dpcalc(*PLD, "--eps", "1", "--max-delta", "1e-5", "--json")
    assert within.code == 0
    document = within.json()
    assert document["inputs"]["max_delta"] == 1e-5 and document["inputs"]["max_eps"] is None
    assert document["budget"] == {"max_delta": 1e-5, "delta": document["result"]["delta_upper"],
                                  "basis": "PLD certified upper bound", "within_budget": True}
    upper = document["result"]["delta_upper"]
    over = dpcalc(*PLD, "--eps", "1", "--max-delta", f"{upper * 0.999:.6g}", "--json")
    assert over.code == 1 and over.json()["budget"]["within_budget"] is False
    assert over.stderr.startswith("Budget exceeded: delta ") and "> --max-delta" in over.stderr
    # the run: delta 1 at epsilon 1, which --max-eps 1 let through
    run = dpcalc("pld", "--p", "0.9", "--sigma", "0.3", "--T", "10000", "--eps", "1", "--max-delta", "0.5")
    assert run.code == 1
    text = " ".join(run.stdout.split())
    assert number_in(text, "budget EXCEEDED: delta {} (PLD certified upper bound) > --max-delta 0.5") == 1.0


def test_max_delta_in_rdp_gdp_and_convert(dpcalc):
    rdp = dpcalc(*RDP, "--eps", "1", "--max-delta", "1e-5", "--json")
    document = rdp.json()
    assert rdp.code == 0 and document["budget"]["delta"] == document["result"]["delta"]
    assert document["budget"]["basis"] == "RDP upper bound (improved conversion)"
    gdp = dpcalc("gdp", "--mu", "3", "--eps", "1", "--max-delta", "0.5", "--json")
    assert gdp.code == 1 and gdp.json()["budget"]["delta"] == gdp.json()["result"]["delta"]  # 0.79, exact
    assert gdp.json()["budget"]["basis"].startswith("exact for the given mu")
    unsampled = dpcalc("gdp", "--p", "1", "--sigma", "10", "--T", "100", "--eps", "1", "--max-delta", "0.5", "--json")
    assert unsampled.code == 0 and unsampled.json()["budget"]["basis"].startswith("exact: T unsampled")
    convert = dpcalc("convert", "--from", "gdp", "--mu", "3", "--to", "dp", "--eps", "1", "--max-delta", "0.5", "--json")
    assert convert.code == 1
    assert convert.json()["budget"] == {"max_delta": 0.5, "delta": convert.json()["result"]["delta"],
                                        "basis": "gdp -> dp conversion (a sound bound; see theorem)",
                                        "within_budget": False}


def test_max_delta_on_the_central_limit_delta_is_refused(dpcalc):
    run = dpcalc("gdp", "--p", "0.004", "--sigma", "1.1", "--T", "1000", "--eps", "1", "--max-delta", "0.5")
    _one_line_usage_error(run, "--max-delta: with --eps gdp computes delta from the central-limit mu")
    assert "dpcalc pld --eps" in run.stderr


@pytest.mark.parametrize("args", [
    [*PLD, "--max-delta", "1e-5"],
    [*PLD, "--delta", "1e-6", "--max-delta", "1e-5"],
    [*RDP, "--max-delta", "1e-5"],
    ["gdp", "--mu", "1", "--max-delta", "0.1"],
    ["convert", "--from", "gdp", "--mu", "1", "--to", "dp", "--delta", "1e-5", "--max-delta", "1e-5"],
], ids=["pld", "pld-delta", "rdp", "gdp", "convert"])
def test_max_delta_without_eps_is_refused(dpcalc, args):
    _one_line_usage_error(dpcalc(*args), "--max-delta checks the delta computed at --eps")


def test_max_delta_where_no_delta_at_a_given_epsilon_is_refused(dpcalc):
    _one_line_usage_error(dpcalc("convert", "--from", "dp", "--eps", "1", "--delta", "1e-5", "--to", "dp", "--group", "2",
                                 "--max-delta", "0.5"), "--max-delta checks the delta computed at a target --eps")
    _one_line_usage_error(dpcalc("convert", "--from", "gdp", "--mu", "1", "--to", "zcdp", "--max-delta", "0.5"),
                          "--max-delta applies only with --to dp --eps")


@pytest.mark.slow
def test_max_delta_checks_every_row_of_a_sweep(dpcalc):
    run = dpcalc(*PLD[:-1], "1000,3000", "--eps", "1", "--max-delta", "5e-6", "--json")
    rows = run.json()["result"]["rows"]
    assert [row["within_budget"] for row in rows] == [row["delta_upper"] <= 5e-6 for row in rows] == [True, False]
    assert run.code == 1 and run.json()["budget"]["delta"] == rows[1]["delta_upper"]


@pytest.mark.parametrize("args", [
    ["gdp", "--p", "0.01", "--sigma", "1", "--T", "100"],
    PLD,
    RDP,
    ["calibrate", "--target-eps", "2", "--p", "0.004", "--T", "1000", "--accountant", "rdp"],
    ["convert", "--from", "gdp", "--mu", "1", "--to", "dp"],
    ["laplace-eps", "--eps", "1", "--probability", "0.95"],
    ["advanced-composition", "--eps", "0.1", "--k", "10"],
    ["mechanism", "laplace", "--eps", "1", "--confidence", "0.95"],
], ids=["gdp", "pld", "rdp", "calibrate", "convert", "laplace-eps", "advanced-composition", "mechanism"])
def test_a_repeated_max_eps_is_refused(dpcalc, args):
    run = dpcalc(*args, "--max-eps", "1", "--max-eps", "100")
    _one_line_usage_error(run, "--max-eps was given 2 times (--max-eps 1 --max-eps 100)")
    assert dpcalc(*args, "--max-eps", "100").code == 0  # once is fine


@pytest.mark.parametrize("command", [PLD, RDP, ["gdp", "--mu", "1"]], ids=["pld", "rdp", "gdp"])
def test_a_repeated_max_delta_is_refused(dpcalc, command):
    run = dpcalc(*command, "--eps", "1", "--max-delta", "1e-5", "--max-delta=1")
    _one_line_usage_error(run, "--max-delta was given 2 times (--max-delta 1e-5 --max-delta 1)")
