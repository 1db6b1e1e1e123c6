"""gdp's central-limit mu exists for Poisson and fixed-size batches only: the schemes and options
pld covers beyond them are refused with where to go (one line, exit 2), never a figure."""

from __future__ import annotations

import pytest

RUN = ["--p", "0.004", "--sigma", "1.1", "--T", "100"]


@pytest.mark.parametrize("scheme", ["shuffle", "allocation"])
def test_shuffle_and_allocation_point_to_pld(dpcalc, scheme):
    run = dpcalc("gdp", *RUN, "--sampling", scheme)
    assert (run.code, run.stdout) == (2, "")
    assert run.stderr == (f"Error: gdp --sampling takes poisson or uniform, got {scheme}: gdp's central-limit mu "
                          f"covers Poisson and fixed-size batches only; for {scheme} use dpcalc pld --sampling {scheme}\n")


def test_the_json_error_names_the_option_and_value(dpcalc):
    error = dpcalc("gdp", *RUN, "--sampling", "shuffle", "--json").json()["error"]
    assert (error["option"], error["got"], error["allowed"]) == ("--sampling", "shuffle", "one of poisson, uniform")
    assert error["choices"] == ["poisson", "uniform"]


@pytest.mark.parametrize("option", ["--neighbours", "--examples-per-user", "--max-batch-size"])
def test_options_only_pld_takes_point_to_pld(dpcalc, option):
    run = dpcalc("gdp", *RUN, option, "2")
    assert run.code == 2 and run.stderr.startswith(f"Error: gdp takes no {option}: ") and run.stderr.count("\n") == 1
    assert f"dpcalc pld {option}" in run.stderr
    assert dpcalc("gdp", *RUN, f"{option}=2").stderr == run.stderr


def test_poisson_and_uniform_still_run_and_other_values_are_clicks_error(dpcalc):
    assert dpcalc("gdp", *RUN, "--sampling", "uniform", "--no-tight").code == 0
    run = dpcalc("gdp", *RUN, "--sampling", "foo")
    assert run.stderr == "Error: Invalid value for '--sampling': 'foo' is not one of 'poisson', 'uniform'.\n"
    assert dpcalc("pld", *RUN, "--neighbours", "x").stderr.startswith("Error: Invalid value for '--neighbours'")
