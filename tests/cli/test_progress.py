"""The progress spinner: on stderr after half a second of work, only when stderr is a terminal,
never with --json or --csv or into a pipe; erased before the output, on errors and on Ctrl-C;
stdout and every result the same with or without it."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from dpcalc.cli import progress

ROOT = Path(__file__).resolve().parents[2]
GDP = ("gdp", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--no-tight")
ERASE = "\x1b[2K"  # Rich erases the spinner's line with it as it stops
SHOW_CURSOR = "\x1b[?25h"


def _spinner_drawn(timeout: float = 20.0) -> bool:
    """Wait until the current command's spinner is on screen (False: there is none to wait for)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        indicator = progress._current
        if indicator is None:
            return False
        if indicator._progress is not None:
            return True
        time.sleep(0.01)
    raise AssertionError("the spinner did not appear")


def _refresh_threads() -> list[threading.Thread]:
    """Rich's redrawing threads still running, a moment after their display stopped (Rich tells
    them to stop and lets them finish on their own)."""
    threads = [thread for thread in threading.enumerate() if type(thread).__name__ == "_RefreshThread"]
    for thread in threads:
        thread.join(timeout=5)
    return [thread for thread in threads if thread.is_alive()]


@pytest.fixture
def terminal(monkeypatch):
    """stderr taken for a terminal, and no delay before the spinner."""
    monkeypatch.setattr(progress, "_stderr_is_terminal", lambda: True)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.delenv("TERM", raising=False)


@pytest.fixture
def slow_gdp(monkeypatch):
    """gdp's computation waits for the spinner (when there is one) before it runs; `seen` records
    whether a spinner was drawn."""
    import dpcalc.core.gdp as core

    seen: list[bool] = []
    compute = core.noisy_sgd_gdp

    def waiting(*args, **kwargs):
        seen.append(_spinner_drawn())
        return compute(*args, **kwargs)

    monkeypatch.setattr(core, "noisy_sgd_gdp", waiting)
    return seen


def test_a_terminal_sees_the_spinner_and_stdout_is_unchanged(dpcalc, terminal, slow_gdp):
    run = dpcalc(*GDP)
    assert run.code == 0 and slow_gdp == [True]
    assert "dpcalc gdp: computing" in run.stderr
    assert progress._current is None and _refresh_threads() == []
    plain = _plain_run(dpcalc, *GDP)
    assert run.stdout == plain.stdout and run.stdout.strip()
    # the spinner erased (cursor shown again, its line cleared) before the command's own stderr
    spinner, _, rest = run.stderr.rpartition(SHOW_CURSOR + "\r\x1b[1A" + ERASE)
    assert spinner and rest == plain.stderr and "\x1b" not in rest


def _plain_run(dpcalc, *args):
    saved = progress._stderr_is_terminal
    progress._stderr_is_terminal = lambda: False
    try:
        return dpcalc(*args)
    finally:
        progress._stderr_is_terminal = saved


@pytest.mark.parametrize("option", ["--json", "--csv"])
def test_json_and_csv_never_show_it(dpcalc, terminal, slow_gdp, option):
    run = dpcalc(*GDP, option)
    assert run.code == 0 and slow_gdp == [False]
    assert "computing" not in run.stderr and "\x1b" not in run.stderr
    if option == "--json":
        assert json.loads(run.stdout)["command"] == "gdp"


def test_no_terminal_no_spinner(dpcalc, monkeypatch, slow_gdp):
    monkeypatch.setattr(progress, "DELAY", 0.0)  # stderr is pytest's capture: not a terminal
    run = dpcalc(*GDP)
    assert run.code == 0 and slow_gdp == [False] and "\x1b" not in run.stderr


def test_a_dumb_terminal_gets_none(dpcalc, terminal, monkeypatch, slow_gdp):
    monkeypatch.setenv("TERM", "dumb")
    assert dpcalc(*GDP).code == 0 and slow_gdp == [False]


def test_ctrl_c_erases_it(dpcalc, terminal, monkeypatch):
    import dpcalc.core.gdp as core

    def interrupted(*args, **kwargs):
        assert _spinner_drawn()
        raise KeyboardInterrupt

    monkeypatch.setattr(core, "noisy_sgd_gdp", interrupted)
    run = dpcalc(*GDP)
    assert (run.code, run.stdout) == (130, "")
    assert run.stderr.endswith(SHOW_CURSOR + "\r\x1b[1A" + ERASE + "Aborted.\n")
    assert progress._current is None and _refresh_threads() == []


def test_an_error_erases_it(dpcalc, terminal, monkeypatch):
    import dpcalc.core.gdp as core

    def broken(*args, **kwargs):
        assert _spinner_drawn()
        raise RuntimeError("boom")

    monkeypatch.setattr(core, "noisy_sgd_gdp", broken)
    run = dpcalc(*GDP)
    assert run.code == 70
    assert run.stderr.split(ERASE)[-1].startswith("Error: internal error (RuntimeError: boom)")
    assert progress._current is None and _refresh_threads() == []


def test_the_label_says_what_is_computed(dpcalc, terminal, monkeypatch):
    import dpcalc.core.pld as core

    compute = core.tight_epsilon

    def waiting(*args, **kwargs):
        assert _spinner_drawn()
        return compute(*args, **kwargs)

    monkeypatch.setattr(core, "tight_epsilon", waiting)
    run = dpcalc("pld", "--p", "0.01", "--sigma", "1", "--T", "10", "--delta", "1e-5")
    assert run.code == 0
    assert "dpcalc pld: PLD accountant, epsilon at delta 1e-05" in run.stderr


# A real terminal: the command in a child process with stderr on a pseudo-terminal.

# gdp's computation waits until the spinner is drawn (when there is one)
_WAIT = """
import time
import dpcalc.core.gdp as core
from dpcalc.cli import progress
compute = core.noisy_sgd_gdp
def waiting(*args, **kwargs):
    deadline = time.monotonic() + 20
    while progress._current is not None and progress._current._progress is None and time.monotonic() < deadline:
        time.sleep(0.01)
    return compute(*args, **kwargs)
core.noisy_sgd_gdp = waiting
"""
_RUN = """
import sys
from dpcalc.cli.app import main
code = main(sys.argv[1:])
sys.stdout.flush()
sys.stderr.write("imported rich.progress: %s\\n" % ("rich.progress" in sys.modules))
sys.exit(code)
"""


def _child(*args: str, stderr_on_terminal: bool, stdout_to: str = "file", slow: bool = True) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `dpcalc ARGS` in a child process: stderr on a pseudo-terminal
    or a pipe, stdout to a file or a pipe; with `slow`, the computation waits until the spinner is
    drawn (when there is one)."""
    import tempfile

    command = [sys.executable, "-c", (_WAIT if slow else "") + _RUN, *args]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm", "COLUMNS": "100"}
    with tempfile.TemporaryFile() as file:
        stdout_target = file if stdout_to == "file" else subprocess.PIPE
        if not stderr_on_terminal:
            result = subprocess.run(command, stdout=stdout_target, stderr=subprocess.PIPE, env=env, cwd=ROOT, timeout=120)
            code, out, err = result.returncode, result.stdout, result.stderr
        else:
            leader, follower = pty.openpty()
            child = subprocess.Popen(command, stdout=stdout_target, stderr=follower, env=env, cwd=ROOT)
            os.close(follower)
            err = b""
            while True:  # until the child has gone and the terminal is closed
                try:
                    chunk = os.read(leader, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                err += chunk
            os.close(leader)
            out = child.stdout.read() if child.stdout else None
            code = child.wait(timeout=120)
        if out is None:
            file.seek(0)
            out = file.read()
    return code, out.decode(), err.decode().replace("\r\n", "\n")


@pytest.mark.slow
def test_in_a_pseudo_terminal_the_spinner_shows_and_stdout_is_the_same():
    code, stdout, stderr = _child(*GDP, stderr_on_terminal=True)
    assert code == 0 and stdout.strip()
    assert "dpcalc gdp: computing" in stderr and ERASE in stderr
    plain = _child(*GDP, stderr_on_terminal=False)  # stderr to a pipe: no spinner, nothing imported for it
    assert plain[:2] == (0, stdout) and plain[2].endswith("imported rich.progress: False\n")
    assert stderr.endswith(ERASE + plain[2].replace("False", "True"))


@pytest.mark.slow
def test_stdout_into_a_pipe_gets_no_spinner():
    """`dpcalc ... | less`: the reader may be drawing on the terminal that stderr goes to."""
    code, stdout, stderr = _child(*GDP, stderr_on_terminal=True, stdout_to="pipe")
    assert code == 0 and stdout.strip()
    assert stderr.endswith("imported rich.progress: False\n") and "\x1b" not in stderr


@pytest.mark.slow
def test_a_quick_command_imports_nothing_for_it():
    code, stdout, stderr = _child(*GDP, stderr_on_terminal=True, slow=False)
    assert code == 0 and stdout
    assert stderr.endswith("imported rich.progress: False\n")  # done within half a second: no spinner
    assert "\x1b" not in stderr
