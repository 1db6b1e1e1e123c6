"""The peers' option names as aliases (Opacus, TF Privacy, dp_accounting, prv_accountant users type
them): the same run, the same result, the same echoed inputs; and a case slip of --T gets a hint."""

from __future__ import annotations

import pytest

DESIGN = ["--p", "0.004", "--sigma", "1.1", "--T", "10000"]
ALIASED = ["--sample-rate", "0.004", "--noise-multiplier", "1.1", "--steps", "10000"]


@pytest.mark.parametrize("command", ["gdp", "rdp", "pld"])
def test_aliases_give_the_same_json(dpcalc, command):
    extra = ["--no-tight"] if command in ("gdp", "rdp") else []
    canonical = dpcalc(command, *DESIGN, *extra, "--json")
    aliased = dpcalc(command, *ALIASED, *extra, "--json")
    assert (aliased.code, aliased.stderr) == (0, "")
    assert aliased.json() == canonical.json()


def test_sampling_probability_alias(dpcalc):
    run = dpcalc("pld", "--sampling-probability", "0.004", "--sigma", "1.1", "--T", "10000", "--json")
    assert run.json()["inputs"]["phases"][0]["p"] == 0.004


def test_target_epsilon_alias(dpcalc):
    canonical = dpcalc("calibrate", "--target-eps", "8", "--p", "0.004", "--T", "10000", "--accountant", "rdp", "--json")
    aliased = dpcalc("calibrate", "--target-epsilon", "8", "--p", "0.004", "--T", "10000", "--accountant", "rdp",
                     "--json")
    assert aliased.json() == canonical.json()


def test_help_lists_the_aliases(dpcalc):
    text = dpcalc("pld", "--help").stdout
    for alias in ("--sample-rate", "--sampling-probability", "--noise-multiplier", "--steps"):
        assert alias in text
    assert "--target-epsilon" in dpcalc("calibrate", "--help").stdout


def test_an_alias_given_twice_with_its_option_is_the_last_value(dpcalc):
    # click treats an alias as the option itself: the last value given wins, as for --sigma twice
    run = dpcalc("pld", "--p", "0.004", "--sigma", "2", "--noise-multiplier", "1.1", "--T", "10000", "--json")
    assert run.json()["inputs"]["phases"][0]["sigma"] == 1.1


@pytest.mark.parametrize("typed, meant", [("--t", "--T"), ("--SIGMA", "--sigma")])
def test_a_case_slip_names_the_option(dpcalc, typed, meant):
    run = dpcalc("pld", "--p", "0.004", "--sigma", "1.1", typed, "100")
    assert run.code == 2
    assert run.stderr == f"Error: No such option '{typed}'. Did you mean '{meant}'? (options are case-sensitive)\n"


def test_phase_keys_take_the_options_spelling(dpcalc):
    dashed = dpcalc("pld", "--phase", "n=1000,batch-size=10,sigma=1,epochs=1", "--json").json()
    underscored = dpcalc("pld", "--phase", "n=1000,batch_size=10,sigma=1,epochs=1", "--json").json()
    assert dashed == underscored
