"""Exit codes through the real command line: a closed pipe exits 141, Ctrl-C exits 130, an
output that cannot be written 74, SIGTERM 143 and SIGHUP 129.

A closed pipe follows the shell convention (128 + SIGPIPE), silently, so that under
`set -o pipefail` a reader tells it from a failed budget check (1). Ctrl-C gives one line,
"Aborted.", and 130 wherever it lands: in numpy, in an import, in Rich's rendering. A stdout
that is closed or full is one line and 74 (EX_IOERR), never 1; a stderr that is closed or full
only loses the warnings.
"""

from __future__ import annotations

import os
import random
import shlex
import signal
import subprocess
import sys
import time
import types

import pytest

import dpcalc.cli.app as app_module
from tests.slow import slow_cases

RDP = ["rdp", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--no-tight"]
# About 250 kB of JSON: more than a pipe holds, so the reader is gone while it is written.
LONG_JSON = [*RDP, "--json", "--orders", ",".join(f"{1 + i / 100:g}" for i in range(1, 5000))]
# Several seconds of PLD accounting (numpy FFTs), to be interrupted.
SLOW_PLD = ["pld", "--p", "0.001", "--sigma", "0.6", "--T", "100000", "--accuracy", "1e-6"]
GDP_WITH_WARNING = ["gdp", "--p", "0.004", "--sigma", "1.1", "--T", "10000"]  # warns on stderr


@pytest.fixture(params=["buffered", "unbuffered"])
def env(request):
    """The environment for the child, with and without PYTHONUNBUFFERED (python -u), under
    which sys.stdout ignores a short write: dpcalc must still see the closed pipe."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    if request.param == "unbuffered":
        env["PYTHONUNBUFFERED"] = "1"
    return env


# The unbuffered child repeats the buffered one's path except for a short write: the tests that
# run a long command run it unbuffered in the slow set only (the mid-output close below keeps it).
BUFFERED_BY_DEFAULT = pytest.mark.parametrize("env", ["buffered", pytest.param("unbuffered", marks=pytest.mark.slow)],
                                              indirect=True)


def closed_stdout(args, env, read=0):
    """Run `python -m dpcalc ARGS` with its stdout a pipe that is closed after `read` bytes."""
    process = subprocess.Popen(
        [sys.executable, "-m", "dpcalc", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    if read:
        assert len(process.stdout.read(read)) == read
    process.stdout.close()
    stderr = process.stderr.read().decode()
    process.stderr.close()
    return process.wait(timeout=120), stderr


@BUFFERED_BY_DEFAULT
@pytest.mark.parametrize(
    "args",
    [RDP, pytest.param([*RDP, "--json"], marks=pytest.mark.slow), pytest.param(GDP_WITH_WARNING, marks=pytest.mark.slow), ["rdp", "--help"], ["--help"], ["--version"]],
    ids=["table", "json", "table-with-warning", "command-help", "help", "version"],
)
def test_closed_pipe_exits_141_silently(env, args):
    code, stderr = closed_stdout(args, env)
    assert code == 141
    # Silent: no message, and no "Exception ignored ... BrokenPipeError" as the interpreter exits.
    # (gdp's warning goes to stderr before its table fails to print.)
    assert stderr == "" or (args is GDP_WITH_WARNING and stderr.startswith("Warning: ") and stderr.count("\n") == 1)


@pytest.mark.slow
@pytest.mark.parametrize("env", [pytest.param("buffered", marks=pytest.mark.slow), "unbuffered"], indirect=True)
def test_closed_pipe_in_the_middle_of_a_long_json_output(env):
    code, stderr = closed_stdout(LONG_JSON, env, read=10)
    assert (code, stderr) == (141, "")


@pytest.mark.slow
@BUFFERED_BY_DEFAULT
def test_closed_pipe_is_141_not_the_budget_failure_under_pipefail(env):
    """Under pipefail the same over-budget command exits 1 into `cat` and 141 into `head`."""
    command = shlex.join([sys.executable, "-m", "dpcalc", *LONG_JSON, "--max-eps", "0.5"])

    def pipeline(reader):
        return subprocess.run(["bash", "-c", f"set -o pipefail; {command} | {reader} >/dev/null"],
                              capture_output=True, text=True, env=env, timeout=120)

    read_all = pipeline("cat")
    assert read_all.returncode == 1 and read_all.stderr.startswith("Budget exceeded: ")
    closed = pipeline("head -c 10")
    assert (closed.returncode, closed.stderr) == (141, "")


@pytest.mark.slow  # test_closed_or_full_stderr_keeps_the_output_and_the_exit_code[table-2>&-] drops a warning too
@BUFFERED_BY_DEFAULT
def test_closed_stderr_while_warning_loses_only_the_warning(env):
    """The table's warning goes to stderr, whose reader is gone: the warning is dropped, the
    table printed, and the exit code is the command's."""
    process = subprocess.Popen(
        [sys.executable, "-m", "dpcalc", *GDP_WITH_WARNING], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    process.stderr.close()
    stdout = process.stdout.read().decode()
    process.stdout.close()
    assert process.wait(timeout=120) == 0
    assert stdout == subprocess.run([sys.executable, "-m", "dpcalc", *GDP_WITH_WARNING], capture_output=True,
                                    text=True, env=env).stdout


def default_sigint():
    """In the child: Ctrl-C's default action, which a shell gives to background jobs as ignored
    (and Python keeps ignored): pytest may run as one."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt(args, delay, env=None):
    process = subprocess.Popen(
        [sys.executable, "-m", "dpcalc", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        preexec_fn=default_sigint,
    )
    time.sleep(delay)
    assert process.poll() is None, "the command ended before it could be interrupted"
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    return process.returncode, stderr.decode()


@pytest.mark.slow
def test_ctrl_c_during_a_long_computation_exits_130_with_one_line():
    code, stderr = interrupt(SLOW_PLD, 0.7)
    assert (code, stderr) == (130, "Aborted.\n")


def test_ctrl_c_while_the_cli_loads_exits_130(tmp_path):
    """A SIGINT that arrives while app.py imports click: Ctrl-C is held (blocked) while the
    module loads and handled at its end, before any command runs."""
    (tmp_path / "sitecustomize.py").write_text(
        "import os, signal, sys\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'click':\n"
        "            os.kill(os.getpid(), signal.SIGINT)\n"
        "sys.meta_path.insert(0, Interrupt())\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-m", "dpcalc", "gdp", "--mu", "1"], capture_output=True, text=True,
                            env=env, timeout=120, preexec_fn=default_sigint)
    assert (result.returncode, result.stderr, result.stdout) == (130, "Aborted.\n", "")


def test_ctrl_c_in_a_string_exec_during_the_command_exits_130(tmp_path):
    """The same CPython flag, set later (numpy and scipy build dataclasses as they import); the
    flag matters only under `python -m`, so the probe runs as a module."""
    (tmp_path / "interrupt_probe.py").write_text(
        "import sys\n"
        "import dpcalc.cli.app as app\n"
        "import dpcalc.core.gdp as core\n"
        "def interrupted(*args, **kwargs):\n"
        "    exec('raise KeyboardInterrupt', {})\n"
        "core.noisy_sgd_gdp = interrupted\n"
        "sys.exit(app.main())\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-m", "interrupt_probe", "gdp", "--p", "0.01", "--sigma", "1", "--T", "10"],
                            capture_output=True, text=True, env=env, timeout=120)
    assert (result.returncode, result.stderr, result.stdout) == (130, "Aborted.\n", "")


@pytest.mark.parametrize("where", ["subcommand import", "computation", "rich rendering"])
def test_ctrl_c_anywhere_in_the_command_exits_130(dpcalc, monkeypatch, where):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    if where == "subcommand import":
        monkeypatch.setattr(app_module, "importlib", types.SimpleNamespace(import_module=interrupted))
    elif where == "computation":
        import dpcalc.core.gdp as core

        monkeypatch.setattr(core, "noisy_sgd_gdp", interrupted)
    else:
        from rich.console import Console

        monkeypatch.setattr(Console, "print", interrupted)
    args = ("gdp", "--mu", "1") if where == "rich rendering" else ("gdp", "--p", "0.01", "--sigma", "1", "--T", "10")
    run = dpcalc(*args)
    assert (run.code, run.stderr) == (130, "Aborted.\n")


def lose_an_interrupt():
    """What CPython does with a Ctrl-C that lands in a weakref callback (importlib runs one as
    each import ends): it cannot raise it there, so it reports it as unraisable and goes on."""
    import weakref

    class Thing:
        pass

    def callback(reference):
        raise KeyboardInterrupt

    thing = Thing()
    reference = weakref.ref(thing, callback)
    del thing
    return reference


def test_ctrl_c_lost_in_an_import_stops_the_command(dpcalc, monkeypatch):
    import importlib

    def import_module(name):
        module = importlib.import_module(name)
        lose_an_interrupt()
        return module

    ran = []
    monkeypatch.setattr(app_module, "importlib", types.SimpleNamespace(import_module=import_module))
    import dpcalc.core.gdp as core

    monkeypatch.setattr(core, "noisy_sgd_gdp", lambda *args, **kwargs: ran.append(1))
    run = dpcalc("gdp", "--p", "0.01", "--sigma", "1", "--T", "10")
    assert (run.code, run.stderr, run.stdout, ran) == (130, "Aborted.\n", "", [])


def test_ctrl_c_lost_during_the_command_still_exits_130(dpcalc, monkeypatch):
    import dpcalc.core.gdp as core

    original = core.noisy_sgd_gdp

    def computation(*args, **kwargs):
        lose_an_interrupt()
        return original(*args, **kwargs)

    monkeypatch.setattr(core, "noisy_sgd_gdp", computation)
    run = dpcalc("gdp", "--p", "0.01", "--sigma", "1", "--T", "10", "--json")
    assert (run.code, run.stderr) == (130, "Aborted.\n")


def test_other_unraisable_exceptions_still_reach_the_previous_hook(dpcalc, monkeypatch):
    seen = []

    def hook(unraisable):
        seen.append(unraisable.exc_type)

    monkeypatch.setattr(sys, "unraisablehook", hook)
    import dpcalc.core.gdp as core

    original = core.noisy_sgd_gdp

    def computation(*args, **kwargs):
        import weakref

        class Thing:
            pass

        def callback(reference):
            raise ValueError("from a callback")

        thing = Thing()
        reference = weakref.ref(thing, callback)  # noqa: F841 - kept alive until `thing` goes
        del thing
        return original(*args, **kwargs)

    monkeypatch.setattr(core, "noisy_sgd_gdp", computation)
    run = dpcalc("gdp", "--p", "0.01", "--sigma", "1", "--T", "10", "--json")
    assert run.code == 0 and seen == [ValueError]
    assert sys.unraisablehook is hook  # restored after the command


@pytest.mark.slow
def test_ctrl_c_at_any_moment_of_a_run_exits_130(tmp_path):
    """SIGINT at random moments from the end of the interpreter's start-up (a sitecustomize
    marks it; before that Python has no handler of its own) through dpcalc's imports, numpy's
    and scipy's, and the computation: always 130 and the one line."""
    marker = tmp_path / "started"
    (tmp_path / "sitecustomize.py").write_text(
        f"import os\nos.close(os.open({str(marker)!r}, os.O_CREAT | os.O_WRONLY))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    generator = random.Random(20240601)
    outcomes = []
    for _ in range(40):
        marker.unlink(missing_ok=True)
        process = subprocess.Popen([sys.executable, "-m", "dpcalc", *SLOW_PLD], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, env=env, preexec_fn=default_sigint)
        deadline = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.001)
        time.sleep(generator.uniform(0.0, 0.4))
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=120)
        outcomes.append((process.returncode, stderr.decode()))
    assert all(outcome == (130, "Aborted.\n") for outcome in outcomes), [o for o in outcomes if o != (130, "Aborted.\n")]


# Output that cannot be written: stdout closed (`>&-`) or full (`>/dev/full`, ENOSPC). One line
# and 74, for every command, --help and --version; never 1 (over budget), never a traceback.

MIXED_BUDGET = """[budget]
epsilon = 5
delta = 1e-6

[[release]]
name = "a"
mechanism = "zcdp"
rho = 0.1

[[release]]
name = "b"
mechanism = "dp"
epsilon = 1
delta = 1e-7
"""  # releases of two kinds: `check` warns that they were joined by basic composition

EVERY_COMMAND = {
    "help": ["--help"],
    "version": ["--version"],
    "command-help": ["pld", "--help"],
    "gdp": ["gdp", "--mu", "1"],
    "convert": ["convert", "--from", "zcdp", "--rho", "0.5", "--to", "dp"],
    "laplace-eps": ["laplace-eps", "--tolerance", "1e-5", "--probability", "0.9"],
    "advanced-composition": ["advanced-composition", "--eps", "0.01", "--k", "10"],
    "rdp": ["rdp", "--p", "0.004", "--sigma", "1.1", "--T", "1000", "--no-tight"],
    "check": ["check", "BUDGET", "--json"],
    "pld": ["pld", "--p", "0.01", "--sigma", "1", "--T", "10", "--json"],
    "risk": ["risk", "--p", "0.01", "--sigma", "1", "--T", "10", "--json"],
    "calibrate": ["calibrate", "--target-eps", "2", "--p", "0.01", "--T", "10", "--json"],
    "mechanism": ["mechanism", "laplace", "--eps", "1", "--confidence", "0.95", "--bins", "10"],
    "completions-show": ["completions", "show", "zsh"],
    "completions-install": ["completions", "install", "zsh"],
}


def redirected(args, redirection, tmp_path, **kwargs):
    """`python -m dpcalc ARGS REDIRECTION` through sh, HOME at `tmp_path`; BUDGET names a budget file there."""
    budget = tmp_path / "mixed.toml"
    budget.write_text(MIXED_BUDGET)
    args = [str(budget) if arg == "BUDGET" else arg for arg in args]
    command = f"exec {shlex.join([sys.executable, '-m', 'dpcalc', *args])} {redirection}"
    return subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "HOME": str(tmp_path)}, cwd=tmp_path, **kwargs)


# rdp, risk and calibrate (slow set) write their JSON as pld and check do
@pytest.mark.parametrize("args", slow_cases(EVERY_COMMAND.values(), 4, 5, 6, 7, 8, 9, 10, 11, 13, one_argument=True), ids=EVERY_COMMAND.keys())
def test_full_stdout_exits_74_with_one_line(args, tmp_path):
    run = redirected(args, ">/dev/full", tmp_path)
    assert run.returncode == 74
    assert run.stderr == "Error: cannot write the output to stdout: No space left on device\n"


@pytest.mark.parametrize("name", ["help", "version", "gdp", "check", "completions-install"])
def test_closed_stdout_exits_74_with_one_line_before_any_work(name, tmp_path):
    run = redirected(EVERY_COMMAND[name], ">&-", tmp_path)
    assert (run.returncode, run.stderr) == (74, "Error: cannot write the output to stdout: Bad file descriptor\n")
    assert not (tmp_path / ".zfunc").exists()  # nothing installed: nothing could have reported it


@pytest.mark.slow
def test_full_stdout_while_over_budget_is_74_not_1(tmp_path):
    """The verdict is on stderr first; the result could not be written: 74, never the budget's 1."""
    run = redirected([*RDP, "--max-eps", "0.5"], ">/dev/full", tmp_path)
    assert run.returncode == 74
    assert run.stderr.endswith("Error: cannot write the output to stdout: No space left on device\n")
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("redirection", ["2>&-", pytest.param("2>/dev/full", marks=pytest.mark.slow)])
@pytest.mark.parametrize("json_output", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["table", "json"])
def test_closed_or_full_stderr_keeps_the_output_and_the_exit_code(redirection, json_output, tmp_path):
    args = ["check", "BUDGET", *(["--json"] if json_output else [])]
    normal = redirected(args, "", tmp_path)
    assert normal.returncode == 0 and ("Warning: releases of different kinds" in normal.stderr) != json_output
    run = redirected(args, redirection, tmp_path)
    assert (run.returncode, run.stdout) == (0, normal.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("redirection", ["2>&-", "2>/dev/full"])
def test_closed_or_full_stderr_keeps_the_budget_verdict(redirection, tmp_path):
    run = redirected(["gdp", "--mu", "1", "--max-eps", "0.1"], redirection, tmp_path)
    assert run.returncode == 1 and "budget EXCEEDED" in run.stdout
    assert redirected(["gdp", "--mu", "x"], redirection, tmp_path).returncode == 2


# SIGTERM and SIGHUP: one line and 128 + the signal's number, as a shell reports a command they
# killed; a signal ignored when dpcalc starts (nohup) stays ignored.

def signalled(args, signum, delay, preexec_fn=default_sigint):
    process = subprocess.Popen([sys.executable, "-m", "dpcalc", *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, preexec_fn=preexec_fn)
    time.sleep(delay)
    assert process.poll() is None, "the command ended before the signal"
    process.send_signal(signum)
    return process


@pytest.mark.parametrize("signum, code, line", [(signal.SIGTERM, 143, "Terminated.\n"),
                                               pytest.param(signal.SIGHUP, 129, "Hung up.\n", marks=pytest.mark.slow)],
                         ids=["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_exit_128_plus_the_signal_with_one_line(signum, code, line):
    process = signalled(SLOW_PLD, signum, 0.7)
    stdout, stderr = process.communicate(timeout=120)
    assert (process.returncode, stderr.decode(), stdout) == (code, line, b"")


@pytest.mark.slow
def test_an_ignored_sighup_stays_ignored():
    def nohup():
        default_sigint()
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    process = signalled(SLOW_PLD, signal.SIGHUP, 0.7, preexec_fn=nohup)
    time.sleep(0.3)
    assert process.poll() is None, "an ignored SIGHUP ended the command"
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert (process.returncode, stderr.decode()) == (130, "Aborted.\n")


def interrupted_while_importing(tmp_path, module, command):
    """Run `command` with a SIGINT sent as the import system looks for `module`."""
    (tmp_path / "sitecustomize.py").write_text(  # signal itself is not imported here: it may be the one
        "import os, sys\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name == {module!r}:\n"
        f"            os.kill(os.getpid(), {int(signal.SIGINT)})\n"
        "sys.meta_path.insert(0, Interrupt())\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120, preexec_fn=default_sigint)


def test_ctrl_c_before_the_cli_module_loads_its_imports_exits_130(tmp_path):
    """The installed `dpcalc` script imports dpcalc.cli.app; a Ctrl-C as that module's first
    import (signal) is looked for is held, not raised in the middle of the import."""
    entry = "import sys\nfrom dpcalc.cli.app import main\nsys.exit(main())"
    result = interrupted_while_importing(tmp_path, "signal", [sys.executable, "-c", entry, "gdp", "--mu", "1"])
    assert (result.returncode, result.stderr, result.stdout) == (130, "Aborted.\n", "")


def test_ctrl_c_as_python_m_starts_importing_the_cli_exits_130(tmp_path):
    result = interrupted_while_importing(tmp_path, "dpcalc.cli", [sys.executable, "-m", "dpcalc", "gdp", "--mu", "1"])
    assert (result.returncode, result.stderr, result.stdout) == (130, "Aborted.\n", "")
