"""A number written with digit-group commas (--T 10,000) is refused with the way to write it,
not read as the sweep 10, 0 ("got 000"); lists that read as sweeps stay sweeps."""

from __future__ import annotations

import pytest

from dpcalc.cli.errors import InputError
from dpcalc.cli.syntax import refuse_digit_groups
from dpcalc.core.validation import OPEN_UNIT, POSITIVE, POSITIVE_INTEGER

RUN = ["--p", "0.004", "--sigma", "1.1", "--T", "100", "--no-tight"]


@pytest.mark.parametrize(("text", "number"), [("10,000", 10000), ("1,000,000", 1000000), ("14,062", 14062),
                                              ("60,000", 60000), ("1,234,123", 1234123)])
def test_grouped_integers_are_refused_with_the_number_to_write(text, number):
    with pytest.raises(InputError) as caught:
        refuse_digit_groups("--T", text, POSITIVE_INTEGER)
    assert str(caught.value) == (f"--T: write {number} (no digit-group commas); a list takes values like 10,20, "
                                 f"got {text}")
    assert (caught.value.option, caught.value.got) == ("--T", text)


@pytest.mark.parametrize("text", ["64,128,256", "512,256,128", "1,500", "100,200,300", "10,20", "0,001", "1,2,3"])
def test_lists_that_read_as_sweeps_stay_sweeps(text):
    refuse_digit_groups("--T", text, POSITIVE_INTEGER)  # no error


def test_a_grouped_number_outside_the_range_is_left_to_the_range_check():
    refuse_digit_groups("--delta", "1,000", OPEN_UNIT)  # 1000 is no delta: read as the list it is


@pytest.mark.parametrize(("command", "option", "args"), [
    ("gdp", "--T", ["--p", "0.004", "--sigma", "1.1"]),
    ("pld", "--T", ["--p", "0.004", "--sigma", "1.1"]),
    ("rdp", "--T", ["--p", "0.004", "--sigma", "1.1"]),
    ("gdp", "--n", ["--batch-size", "256", "--epochs", "1", "--sigma", "1.1"]),
    ("pld", "--batch-size", ["--n", "60000", "--epochs", "1", "--sigma", "1.1"]),
])
def test_every_sweepable_integer_option(dpcalc, command, option, args):
    run = dpcalc(command, *args, option, "10,000")
    assert run.code == 2
    assert run.stderr == f"Error: {option}: write 10000 (no digit-group commas); a list takes values like 10,20, got 10,000\n"


def test_real_options_that_sweep_and_those_that_do_not(dpcalc):
    run = dpcalc("gdp", "--p", "0.004", "--sigma", "1,000", "--T", "100")
    assert run.stderr == "Error: --sigma: write 1000 (no digit-group commas); a list takes values like 10,20, got 1,000\n"
    run = dpcalc("gdp", "--p", "0.004", "--noise-std", "2", "--sensitivity", "1,000", "--T", "100")
    assert (run.code, run.stderr) == (2, "Error: --sensitivity: write 1000 (no digit-group commas), got 1,000\n")


def test_calibrate_takes_the_same_rule(dpcalc):
    run = dpcalc("calibrate", "--target-eps", "1", "--p", "0.004", "--T", "10,000")
    assert run.code == 2 and "write 10000" in run.stderr


def test_a_sweep_that_looks_grouped_is_still_a_sweep(dpcalc):
    run = dpcalc("gdp", *RUN[:4], "--T", "1,500", "--no-tight", "--json")
    assert run.code == 0 and [row["T"] for row in run.json()["result"]["rows"]] == [1, 500]


def test_the_interval_is_the_options():
    refuse_digit_groups("--sigma", "1,500", POSITIVE)
    with pytest.raises(InputError):
        refuse_digit_groups("--sigma", "1,050", POSITIVE)
