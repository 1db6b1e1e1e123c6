"""p = 0 on every command: nothing is sampled, the run reveals nothing.

Reference (exact): with p = 0 no record is ever used, so the output distributions on two
neighbouring datasets are equal: epsilon 0 at every delta (certified interval [0, 0]), delta 0
at every epsilon, RDP 0 at every order (van Erven, Harremoes 2014, Thm 8: D_a(P||Q) = 0 iff
P = Q), mu = 0. The values are compared exactly.
"""

from __future__ import annotations

import pytest

from dpcalc.core.phases import NOTHING_SAMPLED
from dpcalc.core.rdp import DEFAULT_ORDERS

RUN = ("--p", "0", "--sigma", "1.1", "--T", "10000")


@pytest.mark.parametrize("command", ["gdp", "rdp", "pld"])
def test_p_zero_gives_epsilon_zero(dpcalc, command):
    run = dpcalc(command, *RUN, "--json")
    assert (run.code, run.stderr) == (0, "")
    document = run.json()
    result = document["result"]
    assert result["epsilon"] == 0.0 and result["delta"] == 1e-5
    if command != "pld":
        assert result["tight_epsilon"] == 0.0
    else:
        assert result["epsilon_lower"] == result["epsilon_upper"] == 0.0
        assert result["grid"] == {"step": 0.0, "size": 0}
    assert document["warnings"] == [NOTHING_SAMPLED]
    table = dpcalc(command, *RUN)
    assert table.code == 0 and table.stderr == f"Warning: {NOTHING_SAMPLED}\n"


def test_gdp_p_zero_is_mu_zero(dpcalc):
    result = dpcalc("gdp", *RUN, "--no-tight", "--json").json()["result"]
    assert result["mu"] == 0.0 and result["max_advantage"] == 0.0 and result["tight_epsilon"] is None
    assert all(point["beta"] == pytest.approx(1.0 - point["alpha"], abs=1e-15) for point in result["tradeoff"])
    delta = dpcalc("gdp", *RUN, "--eps", "0", "--json").json()["result"]
    assert delta["delta"] == 0.0


@pytest.mark.parametrize("conversion", ["improved", "classic"])
def test_rdp_curve_is_zero_at_every_order(dpcalc, conversion):
    document = dpcalc("rdp", *RUN, "--conversion", conversion, "--no-tight", "--json").json()
    curve = document["result"]["curve"]
    assert [point["order"] for point in curve] == list(DEFAULT_ORDERS)
    assert all(point["rdp"] == 0.0 for point in curve)
    assert document["result"]["epsilon"] == 0.0 and document["warnings"] == [NOTHING_SAMPLED]
    # with --eps: delta 0, whatever the conversion (equal distributions)
    assert dpcalc("rdp", *RUN, "--conversion", conversion, "--eps", "0", "--no-tight", "--json").json()[
        "result"]["delta"] == 0.0
    # orders past the summed range too
    large = dpcalc("rdp", *RUN, "--orders", "2,1e10", "--no-tight", "--json").json()["result"]["curve"]
    assert [point["rdp"] for point in large] == [0.0, 0.0]


def test_fixed_size_batches_p_zero(dpcalc):
    args = (*RUN, "--sampling", "uniform", "--neighbours", "replace-one", "--json")
    for command in ("rdp", "pld"):
        result = dpcalc(command, *args).json()["result"]
        assert result["epsilon"] == 0.0
    assert all(point["rdp"] == 0.0 for point in dpcalc("rdp", *args).json()["result"]["curve"])


def test_pld_at_a_given_epsilon(dpcalc):
    document = dpcalc("pld", *RUN, "--eps", "0.5", "--json").json()
    assert document["result"]["delta"] == document["result"]["delta_lower"] == document["result"]["delta_upper"] == 0.0
    assert document["warnings"] == [NOTHING_SAMPLED]


@pytest.mark.parametrize("command", ["rdp", "pld"])
def test_a_p_zero_phase_adds_nothing(dpcalc, command):
    with_empty = dpcalc(command, "--phase", "p=0,sigma=0.5,T=1000", "--phase", "p=0.01,sigma=1,T=100", "--json").json()
    alone = dpcalc(command, "--phase", "p=0.01,sigma=1,T=100", "--json").json()
    assert with_empty["result"]["epsilon"] == alone["result"]["epsilon"] > 0
    assert len(with_empty["inputs"]["phases"]) == 2
    only_empty = dpcalc(command, "--phase", "p=0,sigma=1,T=10", "--phase", "p=0,sigma=2,T=5", "--json").json()
    assert only_empty["result"]["epsilon"] == 0.0 and only_empty["warnings"] == [NOTHING_SAMPLED]


@pytest.mark.parametrize("command", ["gdp", "rdp", "pld"])
def test_sweep_through_zero(dpcalc, command):
    document = dpcalc(command, "--p", "0,0.001", "--sigma", "1.1", "--T", "100,200", "--json").json()
    rows = document["result"]["rows"]
    assert [(row["p"], row["T"]) for row in rows] == [(0.0, 100), (0.0, 200), (0.001, 100), (0.001, 200)]
    assert [row["epsilon"] for row in rows[:2]] == [0.0, 0.0]
    for row in rows[2:]:
        single = dpcalc(command, "--p", "0.001", "--sigma", "1.1", "--T", str(row["T"]), "--json").json()["result"]
        assert row["epsilon"] == single["epsilon"] > 0
    assert NOTHING_SAMPLED in document["warnings"]
    if command == "rdp":
        assert all(point["rdp"] == 0.0 for point in rows[0]["curve"])


@pytest.mark.parametrize("accountant", ["pld", "rdp", "gdp"])
def test_calibrate_with_p_zero(dpcalc, accountant):
    sigma = dpcalc("calibrate", "--target-eps", "1", "--p", "0", "--T", "100", "--accountant", accountant, "--json")
    assert sigma.code == 0
    document = sigma.json()
    result = document["result"]
    # every sigma meets the target: the smallest searched is returned, with what that means
    assert (result["sigma"], result["epsilon"], result["certified_epsilon"]) == (0.01, 0.0, 0.0)
    assert document["warnings"] == [NOTHING_SAMPLED, "the smallest noise multiplier searched, 0.0100000, already "
                                    "meets the target."]
    steps = dpcalc("calibrate", "--target-eps", "0", "--solve", "T", "--p", "0", "--sigma", "1",
                   "--accountant", accountant, "--json").json()["result"]
    assert (steps["T"], steps["epsilon"]) == (10**9, 0.0)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("gdp", "--p", "0", "--sigma", "1", "--epochs", "3"),
         "--epochs needs --p above 0 (T = ceil(epochs / p), and p = 0 samples no record in any number of steps); "
         "give --T with --p 0"),
        (("calibrate", "--target-eps", "1", "--p", "0", "--epochs", "3"),
         "--epochs needs --p above 0 (T = ceil(epochs / p), and p = 0 samples no record in any number of steps); "
         "give --T with --p 0"),
        (("calibrate", "--target-eps", "1", "--solve", "epochs", "--p", "0", "--sigma", "1"),
         "--solve epochs needs --p above 0 (an epoch is 1/p steps); solve T with --p 0"),
        (("gdp", "--p", "-0.1", "--sigma", "1", "--T", "3"), "--p must be in [0, 1], got -0.1"),
        (("rdp", "--p", "-0.1", "--sigma", "1", "--T", "3"), "--p must be in [0, 1], got -0.1"),
        (("pld", "--p", "-0.1", "--sigma", "1", "--T", "3"), "--p must be in [0, 1], got -0.1"),
        (("calibrate", "--target-eps", "1", "--p", "-0.1", "--T", "3"), "--p must be in [0, 1], got -0.1"),
        (("rdp", "--p", "0,-0.1", "--sigma", "1", "--T", "3"), "--p must be in [0, 1], got -0.1"),
        (("pld", "--phase", "p=-1,sigma=1,T=3"), "--phase 1: p must be in [0, 1], got -1"),
    ],
)
def test_errors(dpcalc, args, message):
    run = dpcalc(*args)
    assert (run.code, run.stdout, run.stderr) == (2, "", f"Error: {message}\n")


BUDGET = """[budget]
epsilon = 1
delta = 1e-5
accountant = "{accountant}"

[[release]]
name = "nothing"
mechanism = "subsampled-gaussian"
p = 0
sigma = 1
{steps}
"""


@pytest.mark.parametrize("accountant", ["pld", "rdp"])
def test_budget_file_release_with_p_zero(dpcalc, tmp_path, accountant):
    path = tmp_path / "budget.toml"
    path.write_text(BUDGET.format(accountant=accountant, steps="T = 1000"))
    run = dpcalc("check", str(path), "--json")
    assert run.code == 0
    document = run.json()
    assert document["result"]["releases"][0]["epsilon"] == 0.0 and document["result"]["total"]["epsilon"] == 0.0
    assert document["warnings"] == [f"release 'nothing': {NOTHING_SAMPLED}"]
    path.write_text(BUDGET.format(accountant=accountant, steps="epochs = 3"))
    refused = dpcalc("check", str(path))
    assert refused.code == 2 and refused.stderr == (
        f"Error: {path}:6: release 'nothing': epochs needs p above 0 (T = ceil(epochs / p), and p = 0 samples no "
        "record in any number of steps); give T with p = 0\n"
    )
