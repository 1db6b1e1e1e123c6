"""`dpcalc pld --neighbours/--sampling`: every value, the echo in JSON, and every refusal."""

from __future__ import annotations

import pytest

DESIGN_CARD = ("pld", "--p", "0.004", "--sigma", "1.1", "--T", "10000")


@pytest.mark.parametrize(("options", "binding"), [
    ((), "remove"),
    (("--neighbours", "zero-out"), "remove"),
    (("--neighbours", "replace-one"), "symmetric"),
    (("--neighbours", "Replace-One", "--sampling", "uniform"), "symmetric"),
    (("--sampling", "poisson", "--neighbours", "add-remove"), "remove"),
])
def test_relations_are_echoed(dpcalc, options, binding):
    run = dpcalc(*DESIGN_CARD, *options, "--json")
    assert run.code == 0
    document = run.json()
    phase = document["inputs"]["phases"][0]
    lowered = [option.lower() for option in options]
    assert phase["sampling"] == ("uniform" if "uniform" in lowered else "poisson")
    assert phase["neighbours"] == next((v for o, v in zip(lowered, lowered[1:]) if o == "--neighbours"), "add-remove")
    assert document["result"]["binding"] == binding


@pytest.mark.parametrize(("options", "message"), [
    (("--sampling", "uniform", "--p", "1"), "--sampling uniform: fixed-size batches under add-remove need a batch "
     "smaller than the dataset"),
    (("--neighbours", "swap"), "--neighbours"),
    (("--sampling", "shuffle"), "--sampling"),
])
def test_refusals(dpcalc, options, message):
    run = dpcalc(*DESIGN_CARD, *options)
    assert run.code == 2 and run.stdout == ""
    assert message in run.stderr and len(run.stderr.strip().splitlines()) == 1


def test_laplace_refuses_replace_one(dpcalc):
    run = dpcalc("pld", "--mechanism", "laplace", "--scale", "2", "--T", "5", "--neighbours", "replace-one")
    assert run.code == 2
    assert "--neighbours must be add-remove or zero-out for --mechanism laplace, got replace-one" in run.stderr


def test_every_phase_and_every_row_take_the_relation(dpcalc):
    run = dpcalc("pld", "--phase", "p=0.01,sigma=2,T=50", "--phase", "p=0.01,sigma=1,T=50",
                 "--neighbours", "replace-one", "--json")
    assert run.code == 0
    assert {phase["neighbours"] for phase in run.json()["inputs"]["phases"]} == {"replace-one"}
    sweep = dpcalc("pld", "--p", "0.01", "--sigma", "1.1,2", "--T", "100", "--neighbours", "replace-one", "--json")
    assert sweep.code == 0
    rows = sweep.json()["result"]["rows"]
    assert len(rows) == 2 and all(row["binding"] == "symmetric" for row in rows)
