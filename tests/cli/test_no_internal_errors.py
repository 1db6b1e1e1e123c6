"""No input reaches an internal error: every command answers (exit 0 or 1) or refuses (exit 2).

Hypothesis starts from a valid call of each command and sets one to three options to values at
and beyond the edges of their ranges (0, subnormals, 1e300, nan, negative numbers, lists and
ranges, text). Random calls of this kind found a hang (a subnormal epsilon in convert) and four
overflows (T past 1e300 from --T or --epochs, laplace-eps at a tolerance far below the scale,
advanced-composition at a target of 1e300) that the example-based tests had missed.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EDGES = ["0", "1", "1e-300", "1e300", "1e308", "5e-324", "1e-12", "1e12", "-1", "nan", "inf", "0.999999", "1,2",
         "1:3:1", "abc", ""]
TYPICAL = ["0.004", "0.5", "1.1", "2", "3", "10", "100", "256", "1e-5", "1e6", "60000"]
VALUES = st.one_of(st.sampled_from(EDGES), st.sampled_from(TYPICAL))

# command -> (a valid call, the options that may be changed or added)
COMMANDS = {
    "gdp": (["--p", "0.004", "--sigma", "1.1", "--T", "10000", "--no-tight"],
            ["--p", "--sigma", "--T", "--n", "--batch-size", "--epochs", "--delta", "--eps", "--mu", "--max-eps"]),
    "gdp-uniform": (["--p", "0.004", "--sigma", "1.1", "--T", "10000", "--no-tight", "--sampling", "uniform"],
                    ["--p", "--sigma", "--T", "--delta", "--eps"]),
    "convert-dp-gaussian": (["--from", "dp", "--eps", "1", "--delta", "1e-5", "--to", "gaussian"],
                            ["--eps", "--delta", "--sensitivity", "--group"]),
    "convert-gdp-dp": (["--from", "gdp", "--mu", "1", "--to", "dp"], ["--mu", "--delta", "--eps", "--group"]),
    "convert-zcdp-dp": (["--from", "zcdp", "--rho", "0.5", "--to", "dp"], ["--rho", "--delta", "--eps", "--group"]),
    "convert-rdp-dp": (["--from", "rdp", "--order", "2", "--rdp-eps", "0.5", "--to", "dp"],
                       ["--order", "--rdp-eps", "--delta", "--group"]),
    "convert-tradeoff": (["--from", "gdp", "--mu", "1", "--to", "tradeoff"], ["--mu", "--points"]),
    "laplace-eps": (["--tolerance", "1e-5", "--probability", "0.9"],
                    ["--tolerance", "--probability", "--eps", "--sensitivity", "--dims"]),
    "advanced-composition": (["--eps", "0.1", "--k", "100"], ["--eps", "--delta", "--k", "--target-eps", "--delta-prime", "--total-delta"]),
}
SLOW_COMMANDS = {
    "rdp": (["--p", "0.004", "--sigma", "1.1", "--T", "10000", "--no-tight"],
            ["--p", "--sigma", "--T", "--delta", "--eps", "--orders"]),
    "pld": (["--p", "0.004", "--sigma", "1.1", "--T", "10000"], ["--p", "--sigma", "--T", "--delta", "--eps", "--accuracy"]),
    "calibrate": (["--target-eps", "2", "--p", "0.004", "--T", "10000"],
                  ["--target-eps", "--p", "--T", "--delta", "--precision", "--accountant", "--solve"]),
    "risk": (["--p", "0.004", "--sigma", "1.1", "--T", "10000"],
             ["--p", "--sigma", "--T", "--fpr", "--prior", "--kappa", "--accuracy"]),
}


def calls(commands):
    @st.composite
    def draw(draw_one):
        name = draw_one(st.sampled_from(sorted(commands)))
        base, options = commands[name]
        args = list(base)
        for option in draw_one(st.lists(st.sampled_from(options), min_size=1, max_size=3, unique=True)):
            value = draw_one(VALUES)
            if option in args:
                args[args.index(option) + 1] = value
            else:
                args += [option, value]
        return [name.split("-")[0] if name.startswith(("gdp-", "convert-")) else name] + args + ["--json"]

    return draw()


def check(dpcalc, args):
    run = dpcalc(*args)
    assert run.code in (0, 1, 2), (args, run.stderr)
    assert "internal error" not in run.stderr and "Traceback" not in run.stderr, (args, run.stderr)
    if run.code == 2:
        assert run.stdout == "" and run.stderr.startswith("Error: ") and run.stderr.count("\n") == 1, (args, run.stderr)
    else:
        run.json()  # strict JSON on stdout


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=calls(COMMANDS))
def test_closed_form_commands_never_fail_internally(dpcalc, args):
    check(dpcalc, args)


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=calls(SLOW_COMMANDS))
def test_accounting_commands_never_fail_internally(dpcalc, args):
    check(dpcalc, args)


@pytest.mark.parametrize("args", [
    ["convert", "--from", "dp", "--eps", "5e-324", "--delta", "1e-12", "--to", "gaussian", "--json"],
    ["laplace-eps", "--tolerance", "3", "--eps", "1e-300", "--json"],
    ["advanced-composition", "--delta", "5e-324", "--target-eps", "1e300", "--eps", "0.999999", "--json"],
    ["gdp", "--p", "0.5", "--sigma", "1", "--epochs", "1e308", "--no-tight", "--json"],
    ["convert", "--from", "zcdp", "--rho", "1e308", "--to", "dp", "--json"],
    ["convert", "--from", "dp", "--eps", "1e300", "--delta", "1e-5", "--to", "gaussian", "--sensitivity", "1e-300", "--json"],
])
def test_inputs_that_once_failed(dpcalc, args):
    check(dpcalc, args)
