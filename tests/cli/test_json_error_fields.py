"""What --json's error object says a refusal is about (docs/json.md, "Errors"), one representative
refusal of each command module: `option` the first option the message names, `options` every
one in order, `allowed` and `got` where the message states a range and the value received."""

from __future__ import annotations

import pytest

from tests.cli.test_json_errors import refused

RUN = ["--p", "0.004", "--sigma", "1.1", "--T", "100"]
MF = ["--target-eps", "1", "--T", "100"]


def fields(dpcalc, *args):
    return refused(dpcalc, *args, "--json")["error"]


# (arguments, option, options, allowed, got); allowed and got are checked where not ...
CASES = [
    # a conflict written with its value
    (["check", "a.toml", "--format", "github"], "--format", ["--format", "--json"], None, None),
]


@pytest.mark.parametrize(("args", "option", "options", "allowed", "got"), CASES,
                         ids=[" ".join(case[0][:3]) for case in CASES])
def test_a_refusal_names_its_options(dpcalc, args, option, options, allowed, got):
    error = fields(dpcalc, *args)
    assert (error["option"], error["options"]) == (option, options), error["message"]
    if allowed is not ...:
        assert error["allowed"] == allowed, error["message"]
    if got is not ...:
        assert error["got"] == got, error["message"]


def test_input_error_takes_option_or_options():
    from dpcalc.cli.errors import InputError

    assert (InputError("m", options=("--a", "--b")).option, InputError("m", option="--a").options) == ("--a", ("--a",))
    assert (InputError("m").option, InputError("m").options) == (None, ())
