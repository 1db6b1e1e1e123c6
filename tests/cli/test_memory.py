"""Memory never decides a result: the same input takes the same path on every machine.

The PLD accountant bounds memory by counts decided from the inputs (a grid's bins, the atoms of
random allocation's lattice convolutions: `core.pld.work.MAX_ATOMS`), so an input over a count
takes the closed forms everywhere, with a warning naming the limit. A MemoryError that still
happens (a process limit below what the counts allow) ends the command with exit code 70 and one
line: it never sends the run to another method.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys

import pytest

from dpcalc.core.pld import work

# n = 1e6, batch size 10: an epoch of 1e5 steps, whose lattice convolution needs 6.7e6 atoms
# (2 GiB, 25 s before the limit); over MAX_ATOMS, so the closed forms, at once.
ALLOCATION = ["pld", "--sampling", "allocation", "--n", "1e6", "--batch-size", "10", "--epochs", "1", "--sigma", "1",
              "--max-eps", "1"]
ONE_GIB = 1 << 30


@pytest.mark.slow
def test_allocation_over_the_atom_limit_takes_the_closed_forms(dpcalc):
    run = dpcalc(*ALLOCATION, "--json")
    assert run.code == 1  # the closed forms' certified epsilon is over the budget
    document = run.json()
    assert document["result"]["grid"]["size"] == 0
    assert document["budget"]["basis"] == "certified upper bound (closed forms)"
    assert not document["budget"]["within_budget"]
    (warning,) = [text for text in document["warnings"] if "size limit" in text]
    assert f"more than its size limit of {work.MAX_ATOMS}" in warning


def _limited(limit: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def _run(args: list[str], limit: int | None) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "dpcalc", *args], capture_output=True, text=True, env=env,
                          preexec_fn=None if limit is None else _limited(limit), timeout=120)


@pytest.mark.slow
@pytest.mark.parametrize("args", [pytest.param(ALLOCATION, marks=pytest.mark.slow), ["pld", "--p", "0.004", "--sigma", "1.1", "--T", "1000", "--max-eps", "1"]],
                         ids=["allocation", "poisson"])
def test_the_path_does_not_depend_on_a_memory_limit(args):
    free = _run([*args, "--json"], None)
    limited = _run([*args, "--json"], ONE_GIB)
    assert limited.returncode == free.returncode, limited.stderr
    assert json.loads(limited.stdout) == json.loads(free.stdout)
    assert limited.stdout == free.stdout


def _out_of_memory(*args, **kwargs):
    raise MemoryError


def test_a_memory_error_in_the_grid_is_an_error_not_the_closed_forms(dpcalc, monkeypatch):
    import dpcalc.core.pld.api as api

    monkeypatch.setattr(api, "account_grid", _out_of_memory)
    run = dpcalc("pld", "--p", "0.0137", "--sigma", "1.3", "--T", "321", "--max-eps", "5")
    assert run.code == 70
    assert run.stdout == ""
    assert run.stderr.startswith("Error: out of memory") and run.stderr.count("\n") == 1
    assert "Traceback" not in run.stderr


def test_a_memory_error_in_the_tight_figure_is_an_error_not_a_missing_figure(dpcalc, monkeypatch):
    from dpcalc.core.accountants import PLDAccountant

    monkeypatch.setattr(PLDAccountant, "epsilon", _out_of_memory)
    run = dpcalc("gdp", "--p", "0.0137", "--sigma", "1.3", "--T", "321")
    assert run.code == 70
    assert run.stderr.startswith("Error: out of memory") and run.stderr.count("\n") == 1
