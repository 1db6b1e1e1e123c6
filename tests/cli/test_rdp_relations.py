"""`dpcalc rdp --sampling --neighbours`: fixed-size batches under replace-one (the bound of Wang,
Balle, Kasiviswanathan 2019, Thm 27: dpcalc.core.rdp.without_replacement), zero-out, and the
refusals where the RDP curves have no bound."""

from __future__ import annotations

import pytest

from dpcalc.core.phases import Phase
from dpcalc.core.rdp import rdp_accountant

RUN = ("rdp", "--n", "60000", "--batch-size", "256", "--epochs", "5", "--sigma", "1.1")


@pytest.mark.slow
def test_uniform_replace_one_is_the_core_figure_and_above_the_tight_one(dpcalc):
    run = dpcalc(*RUN, "--sampling", "uniform", "--neighbours", "replace-one", "--json")
    assert run.code == 0
    document = run.json()
    phase = document["inputs"]["phases"][0]
    assert (phase["sampling"], phase["neighbours"]) == ("uniform", "replace-one")
    core = rdp_accountant([Phase("gaussian", 256 / 60000, 1.1, None, phase["T"], sampling="uniform",
                                 neighbours="replace-one")], delta=1e-5)
    result = document["result"]
    assert result["epsilon"] == core.epsilon
    assert result["tight_epsilon"] <= result["epsilon"]


@pytest.mark.slow
def test_uniform_is_dearer_than_poisson(dpcalc):
    poisson = dpcalc(*RUN, "--json").json()["result"]["epsilon"]
    uniform = dpcalc(*RUN, "--sampling", "uniform", "--neighbours", "replace-one", "--json").json()["result"]["epsilon"]
    assert uniform > poisson


def test_zero_out_is_add_remove(dpcalc):
    plain = dpcalc(*RUN, "--json").json()["result"]
    zero_out = dpcalc(*RUN, "--neighbours", "zero-out", "--json").json()["result"]
    assert zero_out == plain


@pytest.mark.parametrize(
    "args, message",
    [
        (("--neighbours", "replace-one"), "--sampling poisson with --neighbours replace-one has no RDP bound here"),
        (("--sampling", "shuffle", "--neighbours", "zero-out"),
         "--sampling shuffle with --neighbours zero-out has no RDP bound here"),
        (("--sampling", "shuffle"), "--sampling shuffle needs --neighbours zero-out or replace-one, got --neighbours "
         "add-remove"),
    ],
)
def test_refusals(dpcalc, args, message):
    run = dpcalc(*RUN, *args)
    assert run.code == 2 and run.stdout == ""
    assert message in run.stderr and run.stderr.count("\n") == 1


def test_sweep_takes_the_relation(dpcalc):
    run = dpcalc("rdp", "--n", "60000", "--batch-size", "256", "--epochs", "1,2", "--sigma", "1.1", "--sampling",
                 "uniform", "--neighbours", "replace-one", "--no-tight", "--json")
    assert run.code == 0
    document = run.json()
    assert document["inputs"]["sampling"] == "uniform"
    rows = document["result"]["rows"]
    assert rows[0]["epsilon"] < rows[1]["epsilon"]
