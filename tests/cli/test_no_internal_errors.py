"""No input reaches an internal error: every command answers (exit 0 or 1) or refuses (exit 2).

Hypothesis starts from a valid call of each command and sets one to three options to values at
and beyond the edges of their ranges (0, subnormals, 1e300, nan, negative numbers, lists and
ranges, text). Random calls of this kind found a hang (a subnormal epsilon in convert) and four
overflows (T past 1e300 from --T or --epochs, laplace-eps at a tolerance far below the scale,
advanced-composition at a target of 1e300) that the example-based tests had missed; subnormals,
1e308, huge integers, digits of other scripts, underscores and sweeps with an astronomical stop
found about sixty more (tests/cli/test_extreme_inputs.py), which the values below now draw.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EDGES = ["0", "1", "1e-300", "1e300", "1e308", "5e-324", "1e-320", "1e-12", "1e12", "-1", "nan", "inf", "0.999999",
         "1,2", "1:3:1", "abc", "", "1" + "0" * 40, "1" + "0" * 400, "\u0661\u0661", "1_1", "1:1e999999999:1",
         "0:1:1e-999999999", "1e-400"]
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
    "mechanism laplace": (["--eps", "1", "--confidence", "0.95", "--bins", "10"],
                          ["--eps", "--scale", "--error", "--confidence", "--bins", "--sensitivity"]),
    "mechanism gaussian": (["--sigma", "2", "--error", "10"],
                           ["--eps", "--delta", "--sigma", "--sensitivity", "--error", "--confidence", "--dims"]),
    "mechanism exponential": (["--outcomes", "100", "--eps", "1", "--beta", "0.05"],
                              ["--outcomes", "--eps", "--alpha", "--beta", "--sensitivity"]),
    "mechanism noisy-max": (["--noise", "gumbel", "--candidates", "10", "--gap", "5", "--beta", "0.05"],
                            ["--candidates", "--eps", "--scale", "--gap", "--beta", "--sensitivity"]),
    "mechanism svt": (["--queries", "100", "--answers", "1", "--alpha", "5", "--beta", "0.05"],
                      ["--queries", "--answers", "--eps", "--scale", "--alpha", "--beta", "--sensitivity"]),
    "mechanism ptr": (["--eps", "1", "--delta", "1e-5", "--bound", "1", "--confidence", "0.9"],
                      ["--eps", "--scale", "--delta", "--bound", "--error", "--confidence", "--distance"]),
    "mechanism randomized-response": (["--eps", "1", "--k", "2", "--n", "1000"],
                                      ["--eps", "--flip-probability", "--k", "--n", "--std-error", "--frequency"]),
    "mechanism smooth-sensitivity": (["--noise", "laplace-log-normal", "--eps", "1", "--smoothness", "0.1", "--error", "5"],
                                     ["--eps", "--scale", "--smooth-sensitivity", "--error", "--confidence", "--smoothness",
                                      "--sigma"]),
    "mechanism smooth-sensitivity-cauchy": (["--noise", "cauchy", "--eps", "1", "--error", "5"],
                                            ["--eps", "--scale", "--smooth-sensitivity", "--error", "--confidence"]),
}
SLOW_COMMANDS = {
    "rdp": (["--p", "0.004", "--sigma", "1.1", "--T", "10000", "--no-tight"],
            ["--p", "--sigma", "--T", "--delta", "--eps", "--orders"]),
    "pld": (["--p", "0.004", "--sigma", "1.1", "--T", "10000"],
            ["--p", "--sigma", "--T", "--delta", "--eps", "--accuracy", "--examples-per-user", "--max-batch-size"]),
    "calibrate": (["--target-eps", "2", "--p", "0.004", "--T", "10000"],
                  ["--target-eps", "--p", "--T", "--delta", "--precision", "--accountant", "--solve"]),
    "calibrate-T": (["--target-eps", "2", "--p", "0.004", "--sigma", "1", "--solve", "T", "--accountant", "rdp"],
                    ["--target-eps", "--p", "--sigma", "--delta", "--precision"]),
    "calibrate-risk": (["--target-tpr", "0.05", "--at-fpr", "0.01", "--p", "0.004", "--T", "1000"],
                       ["--target-tpr", "--at-fpr", "--p", "--T"]),
    "risk": (["--p", "0.004", "--sigma", "1.1", "--T", "10000"],
             ["--p", "--sigma", "--T", "--fpr", "--prior", "--kappa", "--accuracy", "--examples-per-user"]),
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
        return command_words(name) + args + ["--json"]

    return draw()


def command_words(name: str) -> list[str]:
    """The command of a COMMANDS key: "convert-gdp-dp" is convert, "mechanism smooth-sensitivity-cauchy"
    is mechanism smooth-sensitivity."""
    if name.startswith(("gdp-", "convert-", "calibrate-")):
        return [name.split("-")[0]]
    if name.startswith("mechanism "):
        return ["mechanism", name.split()[1].removesuffix("-cauchy")]
    return [name]


def check(dpcalc, args):
    run = dpcalc(*args)
    assert run.code in (0, 1, 2), (args, run.stderr)
    assert "internal error" not in run.stderr and "Traceback" not in run.stderr, (args, run.stderr)
    if run.code == 2:
        assert run.only_error and run.stderr.startswith("Error: ") and run.stderr.count("\n") == 1, (args, run.stderr)
    else:
        run.json()  # strict JSON on stdout


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=calls(COMMANDS))
def test_closed_form_commands_never_fail_internally(dpcalc, args):
    check(dpcalc, args)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=calls(COMMANDS))
def test_closed_form_commands_never_fail_internally_more_examples(dpcalc, args):
    check(dpcalc, args)


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(args=calls(SLOW_COMMANDS))
def test_accounting_commands_never_fail_internally(dpcalc, args):
    check(dpcalc, args)


# Each numeric option of the accounting commands at the values that once failed, one call each
# (the random calls above reach them rarely): a sweep with an astronomical stop, subnormals, 1e308,
# huge integers, digits of other scripts and underscores. Cheap: all but the answers are refused
# while the options are read.
@pytest.mark.parametrize("command, option", [
    ("gdp", "--p"), ("gdp", "--sigma"), ("gdp", "--T"), ("gdp", "--epochs"), ("gdp", "--delta"), ("gdp", "--mu"),
    ("rdp", "--sigma"), ("rdp", "--T"), ("rdp", "--orders"), ("pld", "--T"), ("pld", "--examples-per-user"),
    ("pld", "--accuracy"), ("risk", "--fpr"), ("risk", "--kappa"), ("risk", "--T"), ("calibrate", "--target-eps"),
    ("calibrate", "--delta"), ("calibrate", "--precision"), ("calibrate", "--T"),
])
@pytest.mark.parametrize("value", ["1:1e999999999:1", "\u0661\u0661", "1_1", "1" + "0" * 400, "1e-400"])
def test_values_that_once_failed_are_refused_while_the_options_are_read(dpcalc, command, option, value):
    base = {"gdp": ["--p", "0.004", "--sigma", "1.1", "--T", "100", "--no-tight"],
            "rdp": ["--p", "0.004", "--sigma", "1.1", "--T", "100", "--no-tight"],
            "pld": ["--p", "0.004", "--sigma", "1.1", "--T", "100"],
            "risk": ["--p", "0.004", "--sigma", "1.1", "--T", "100"],
            "calibrate": ["--target-eps", "2", "--p", "0.004", "--T", "100"]}[command]
    args = list(base)
    if option in args:
        args[args.index(option) + 1] = value
    else:
        args += [option, value]
    if option == "--epochs":  # the training form's T: not beside --T
        args = [item for item in args if item not in ("--T", "100")]
    check(dpcalc, [command, *args, "--json"])


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
