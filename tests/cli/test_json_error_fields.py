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
    # the shared options: the gates, --x
    (["convert", "--from", "gdp", "--mu", "1", "--to", "dp", "--eps", "1", "--max-eps", "1"], "--max-eps",
     ["--max-eps", "--eps", "--delta", "--max-delta"], None, None),
    (["gdp", "--p", "0.01", "--sigma", "1,2", "--T", "10", "--chart", "--x", "p"], "--x", ["--x", "--sigma"],
     "one of --sigma", "p"),
    (["gdp", *RUN, "--no-tight", "--max-eps", "1"], "--max-eps", ["--max-eps"], None, None),
    # mf and calibrate (--mechanism mf: the core's refusal, its requirement and the value received)
    (["calibrate", *MF, "--p", "0.01", "--chart"], "--plot", ["--plot", "--chart", "--target-eps", "--epochs"],
     None, None),
    (["calibrate", "--p", "0.01,0.02", "--T", "100", "--target-advantage", "0.1"], "--p", ["--p"], None, None),
    (["calibrate", "--p", "0.01", "--T", "100", "--target-advantage", "0.1", "--like", "opacus"], "--like",
     ["--like", "--target-eps"], None, None),
    (["calibrate", *MF, "--p", "0.01", "--bands", "2"], "--bands", ["--bands", "--mechanism"], None, None),
    (["calibrate", "--mechanism", "mf", *MF, "--coefficients", "1,0.5", "--participations", "2", "--min-sep", "500"],
     "--min-sep", ["--min-sep"], "an integer in [1, 100] (at most the number of steps)", "500"),
    (["calibrate", "--mechanism", "mf", *MF, "--bands", "2", "--p", "0.01", "--sigma", "1"], "--sigma",
     ["--sigma", "--mechanism"], None, None),
    (["mf", "--T", "100", "--sigma", "1", "--coefficients", "1,0.5", "--participations", "2", "--min-sep", "500"],
     "--min-sep", ["--min-sep"], "an integer in [1, 100] (at most the number of steps)", "500"),
    (["mf", *RUN, "--tree"], "--tree", ["--tree", "--n", "--batch-size", "--epochs", "--T"], None, None),
    (["mf", *RUN, "--coefficients", "1,0.5"], "--strategy",
     ["--strategy", "--coefficients", "--participations", "--min-sep"], None, None),
    (["mf", "--n", "1000", "--batch-size", "10", "--T", "100", "--bands", "2"], "--sigma", ["--sigma"], None, None),
    # the run commands: the --plot file, --phase, sweeps, --orders
    (["pld", *RUN, "--plot", "a.txt"], "--plot", ["--plot"], "a .png, .svg or .pdf file", "a.txt"),
    (["pld", "--phase", "p=0.01,sigma=-1,T=10"], "--phase", ["--phase"], "in (0, inf)", "-1"),
    (["pld", "--phase", "p=0.01,sigma=1,T=10", "--sigma", "1,2"], "--phase", ["--phase", "--sigma", "--p", "--T"],
     None, None),
    (["pld", "--n", "1000", "--batch-size", "10,20", "--sigma", "1", "--epochs", "1", "--max-batch-size", "10"],
     "--max-batch-size", ["--max-batch-size"], None, None),
    (["rdp", *RUN, "--orders", "90000:100000:1"], "--orders", ["--orders"], None, "90000:100000:1"),
    (["risk", "--p", "0.01,0.02", "--sigma", "1", "--T", "10"], "--p", ["--p"], None, None),
    (["statement", "--p", "0.01,0.02", "--sigma", "1", "--T", "10"], "--p", ["--p"], None, "0.01,0.02"),
    # check
    (["check", "a.toml", "b.toml"], "BUDGET", ["BUDGET", "--json"], None, None),
    # advanced-composition, convert, laplace-eps
    (["advanced-composition", "--eps", "0.1"], "--k", ["--k", "--eps"], None, None),
    (["advanced-composition", "--eps", "0.1", "--delta", "0.5", "--k", "10"], "--delta", ["--delta"],
     "below (1 - delta-prime) / k = 0.099999", "0.5"),
    (["advanced-composition", "--eps", "0", "--target-eps", "1"], "--eps", ["--eps", "--target-eps"],
     "in (0, inf)", "0"),
    (["advanced-composition", "--eps", "0.1", "--delta", "1e-6", "--k", "10", "--total-delta", "1e-9"],
     "--total-delta", ["--total-delta"], ..., "1e-9"),
    (["convert", "--to", "dp"], "--from", ["--from"], "one of dp, gdp, zcdp, rdp, gaussian, laplace", None),
    (["convert", "--from", "gdp", "--mu", "1", "--to", "laplace"], "--from", ["--from", "--to", "--group"], None, None),
    (["convert", "--from", "dp", "--eps", "1", "--to", "gaussian", "--delta", "0"], "--from",
     ["--from", "--to", "--delta", "--group"], None, None),
    (["convert", "--from", "rdp", "--order", "2", "--rdp-eps", "1", "--to", "dp", "--group", "2"], "--group",
     ["--group", "--from"], None, None),
    (["convert", "--from", "gaussian", "--to", "dp"], "--from", ["--from", "--sigma", "--noise-std"], None, None),
    (["convert", "--from", "gdp", "--mu", "1", "--to", "dp", "--plot", "a.png"], "--plot", ["--plot", "--to"],
     None, None),
    (["laplace-eps", "--error", "1"], "--tolerance", ["--tolerance", "--probability", "--eps"], None, None),
    (["laplace-eps", "--tolerance", "1", "--probability", "1.0"], "--probability", ["--probability"],
     "in (0, 1)", "1.0"),
    # the mechanisms
    (["mechanism", "gaussian", "--error", "1"], "--error",
     ["--error", "--confidence", "--eps", "--sigma", "--noise-std"], None, None),
    (["mechanism", "gaussian", "--eps", "2", "--calibration", "classic"], "--calibration",
     ["--calibration", "--eps"], "in (0, 1)", "2"),
    (["mechanism", "gaussian", "--sensitivities", "1,2", "--noise-stds", "1"], "--noise-stds",
     ["--noise-stds", "--sensitivities"], "as many values as --sensitivities (2)", None),
    (["mechanism", "laplace", "--domain", "counts", "--sensitivity", "2", "--eps", "1"], "--sensitivity",
     ["--sensitivity", "--domain"], None, None),
    (["mechanism", "exponential", "--alpha", "1", "--outcomes", "10"], "--eps", ["--eps", "--alpha", "--beta"],
     None, None),
    (["mechanism", "noisy-max", "--candidates", "3", "--eps", "1", "--beta", "2"], "--beta", ["--beta"],
     "in (0, 1)", "2"),
    (["mechanism", "ptr", "--eps", "1", "--bound", "1"], "--delta", ["--delta"], None, None),
    (["mechanism", "randomized-response", "--eps", "1", "--n", "10", "--std-error", "0.1"], "--eps",
     ["--eps", "--flip-probability", "--n", "--std-error"], None, None),
    (["mechanism", "randomized-response", "--eps", "1", "--frequency", "0.5"], "--frequency",
     ["--frequency", "--n", "--std-error"], None, None),
    (["mechanism", "svt", "--queries", "2", "--answers", "3", "--eps", "1", "--alpha", "1"], "--answers",
     ["--answers", "--queries"], "at most --queries 2", "3"),
    (["mechanism", "smooth-sensitivity", "--noise", "laplace-log-normal", "--eps", "1", "--smooth-sensitivity", "1",
      "--error", "1"], "--smoothness", ["--smoothness", "--noise"], None, None),
    (["mechanism", "smooth-sensitivity", "--noise", "cauchy", "--eps", "1", "--smooth-sensitivity", "1",
      "--delta", "1e-5"], "--delta", ["--delta", "--noise"], "absent with --noise cauchy", "1e-5"),
    (["mechanism", "smooth-sensitivity", "--noise", "cauchy", "--eps", "1", "--smooth-sensitivity", "1",
      "--scale", "1"], "--eps", ["--eps", "--scale"], None, None),
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


def test_a_refusal_that_names_no_option_has_none(dpcalc, tmp_path):
    malformed = tmp_path / "bad.toml"
    malformed.write_text("[budget\n")
    error = fields(dpcalc, "check", malformed)
    assert (error["option"], error["options"]) == (None, [])


def test_the_shell_argument_of_completions(monkeypatch):
    from dpcalc.cli.completions import _shell
    from dpcalc.cli.errors import InputError

    monkeypatch.setenv("SHELL", "/bin/tcsh")
    with pytest.raises(InputError) as raised:
        _shell(None)
    error = raised.value
    assert (error.option, error.options, error.allowed, error.got) == (
        "SHELL", ("SHELL",), "one of bash, zsh, fish", "/bin/tcsh")


def test_input_error_takes_option_or_options():
    from dpcalc.cli.errors import InputError

    assert (InputError("m", options=("--a", "--b")).option, InputError("m", option="--a").options) == ("--a", ("--a",))
    assert (InputError("m").option, InputError("m").options) == (None, ())


def test_a_core_refusal_worded_with_the_options_keeps_its_fields():
    from dpcalc.cli.options import option_error
    from dpcalc.core.text import WrittenFloat
    from dpcalc.core.validation import ParameterError, RunError

    run = option_error(RunError("{T} and {epochs} cannot be given together"))
    assert (str(run), run.options, run.allowed, run.got) == (
        "--T and --epochs cannot be given together", ("--T", "--epochs"), None, None)
    value = option_error(ParameterError("noise_multiplier", "in (0, inf)", WrittenFloat(-1.0, "-1e0")),
                         {"noise_multiplier": "--sigma"}.__getitem__)
    assert (str(value), value.option, value.allowed, value.got) == (
        "--sigma must be in (0, inf), got -1.0", "--sigma", "in (0, inf)", "-1e0")
    unspelled = option_error(ParameterError("strategy rows", "one a step", 3), str)
    assert (unspelled.option, unspelled.options, unspelled.got) == (None, (), "3")
