"""The command-line contract shared by every subcommand."""

from __future__ import annotations

import subprocess
import sys

import pytest

import dpcalc
from dpcalc.cli.app import COMMANDS, LazyGroup, app


def test_help_lists_every_command(dpcalc):
    run = dpcalc("--help")
    assert run.code == 0
    for name in COMMANDS:
        assert name in run.stdout


def test_no_arguments_prints_help(dpcalc):
    run = dpcalc()
    assert run.code == 0
    assert "Usage: dpcalc" in run.stdout


def test_version(dpcalc):
    run = dpcalc("--version")
    assert (run.code, run.stdout) == (0, f"dpcalc {dpcalc_version()}\n")


def dpcalc_version():
    return dpcalc.__version__


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_has_help_with_an_example(dpcalc, name):
    run = dpcalc(name, "--help")
    assert run.code == 0
    assert f"Usage: dpcalc {name}" in run.stdout
    assert "Example" in run.stdout
    assert f"dpcalc {name} --" in run.stdout or f"dpcalc {name} " in run.stdout.split("Example", 1)[1]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_loads_lazily_under_its_name(name):
    import click

    from dpcalc.cli.declare import build

    group = build(app)
    assert isinstance(group, LazyGroup)
    command = group.get_command(click.Context(group), name)
    assert command is not None and command.name == name


def test_unknown_command_and_option_are_usage_errors(dpcalc):
    run = dpcalc("nosuch")
    assert run.code == 2
    assert run.stderr.startswith("Error: ") and run.stderr.count("\n") == 1
    run = dpcalc("gdp", "--nosuch", "1")
    assert run.code == 2 and run.stderr.startswith("Error: No such option '--nosuch'.")
    assert run.stderr.count("\n") == 1


def test_missing_option_value(dpcalc):
    run = dpcalc("gdp", "--p")
    assert run.code == 2
    assert run.stderr == "Error: Option '--p' requires an argument.\n"


def test_internal_error_exits_70_without_traceback(dpcalc, monkeypatch):
    import dpcalc.core.gdp as core

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(core, "noisy_sgd_gdp", broken)
    run = dpcalc("gdp", "--p", "0.01", "--sigma", "1", "--T", "10")
    assert run.code == 70
    assert "internal error (RuntimeError: boom)" in run.stderr
    assert "--debug" in run.stderr
    assert "Traceback" not in run.stderr
    debug = dpcalc("gdp", "--p", "0.01", "--sigma", "1", "--T", "10", "--debug")
    assert debug.code == 70
    assert "Traceback" in debug.stderr


def test_help_lists_every_exit_code(dpcalc):
    text = " ".join(dpcalc("--help").stdout.split())
    for code in ("0 success", "1 over budget", "2 invalid input", "70 internal error", "130 interrupted",
                 "141 output pipe closed"):
        assert code in text


def test_python_dash_m_runs_the_cli():
    result = subprocess.run(
        [sys.executable, "-m", "dpcalc", "gdp", "--mu", "0.5", "--json"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert '"command": "gdp"' in result.stdout


@pytest.mark.parametrize("given, expected", [(None, "1"), pytest.param("3", "3", marks=pytest.mark.slow)])
def test_blas_threads_default_to_one_unless_set(given, expected):
    """The CLI asks OpenBLAS for one thread before numpy loads (its workers only burn a second
    core at these sizes); a value the user set is kept."""
    import os

    env = {key: value for key, value in os.environ.items() if key != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    code = "import os, dpcalc.cli.app, numpy; print(os.environ['OPENBLAS_NUM_THREADS'])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == expected
