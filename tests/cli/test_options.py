"""Option values parsed once, by their click type: numbers that keep their text, and the errors."""

from __future__ import annotations

import pickle
from fractions import Fraction

import click
import pytest

from dpcalc.cli.options import (
    InputError,
    Parsed,
    WrittenFloat,
    WrittenInt,
    exact,
    number,
    parse_integer,
    parse_real,
    sweepable,
    written,
)
from dpcalc.core.validation import POSITIVE_INTEGER, PROBABILITY


def test_a_parsed_number_keeps_its_text_and_its_exact_decimal():
    p = parse_real("--p", "0.001", PROBABILITY)
    assert p == 0.001 and isinstance(p, WrittenFloat) and written(p) == "0.001"
    assert exact(p) == Fraction(1, 1000) != Fraction(0.001)  # the decimal typed, not the nearest float
    steps = parse_integer("--T", "1e4")
    assert steps == 10000 and isinstance(steps, WrittenInt) and written(steps) == "1e4"
    assert exact(0.25) == Fraction(1, 4) and written(3) == "3"  # numbers not parsed from text: their repr
    assert pickle.loads(pickle.dumps(p)).text == "0.001"


def option(name: str) -> click.Option:
    return click.Option([name])


def test_the_click_type_raises_the_one_line_message_naming_the_option():
    with pytest.raises(InputError) as error:
        number(PROBABILITY).convert("2", option("--p"), None)
    assert str(error.value) == "--p must be in [0, 1], got 2"
    with pytest.raises(InputError) as error:
        sweepable(POSITIVE_INTEGER).convert("1:3:0.5", option("--T"), None)
    assert str(error.value) == "--T takes integers: a range needs integer start, stop and step, got '1:3:0.5'"


def test_the_click_type_leaves_a_number_as_it_is():
    """click hands a default that is already a number to the type: it passes through."""
    assert number(PROBABILITY).convert(0.5, option("--p"), None) == 0.5
    assert Parsed(lambda name, text: (name, text)).convert("x", option("--orders"), None) == ("--orders", "x")


def test_bad_values_exit_2_with_the_message_and_no_click_prefix(dpcalc):
    run = dpcalc("gdp", "--p", "0.004", "--sigma", "-1", "--T", "10", "--no-tight")
    assert (run.code, run.stdout, run.stderr) == (2, "", "Error: --sigma must be in (0, inf), got -1\n")
    run = dpcalc("laplace-eps", "--tolerance", "1", "--probability", "abc")
    assert run.stderr == "Error: --probability must be a number in (0, 1), got 'abc'\n"
