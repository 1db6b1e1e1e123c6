"""A progress indicator on stderr for commands that work longer than half a second.

`LazyGroup` runs every subcommand inside `working`: after DELAY seconds of work, a Rich spinner
with what is being computed and the time elapsed appears on stderr, and `output.emit` (or the
end of the command, an error, Ctrl-C) erases it before anything else is printed. It appears
only when stderr is a terminal and stdout no pipe, and never with --json or --csv, so stdout,
pipes, files and every result stay exactly as without it: the clock decides only whether the
spinner is drawn.

Rich's progress display is imported only when the spinner is drawn, by the timer thread; a
command that finishes within DELAY imports nothing more than `threading`.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

DELAY = 0.5  # seconds of work before the spinner appears


def wanted(quiet: bool) -> bool:
    """Whether a spinner may be drawn: stderr is a terminal (not a pipe, a file or a dumb
    terminal), stdout is not a pipe (`dpcalc ... | less`: the reader may be drawing on the same
    terminal) and the output is not machine-readable (`quiet`: --json or --csv)."""
    return not quiet and os.environ.get("TERM") != "dumb" and _stderr_is_terminal() and not _stdout_is_pipe()


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # no stderr, or a closed one
        return False


def _stdout_is_pipe() -> bool:
    try:
        return stat.S_ISFIFO(os.fstat(sys.stdout.fileno()).st_mode)
    except (AttributeError, ValueError, OSError):  # no file behind stdout (an in-memory stream), or closed
        return False


class _Indicator:
    """The spinner of one command: drawn by a timer thread after DELAY seconds, erased by stop()."""

    def __init__(self, command: str) -> None:
        self.command = command  # "dpcalc pld": the start of the label, before what is being computed
        self.label = f"{command}: computing"
        self._begin = time.monotonic()
        self._lock = threading.Lock()
        self._stopped = False
        self._progress: Any = None  # rich.progress.Progress once drawn
        self._task: Any = None
        self._timer = threading.Timer(DELAY, self._show)
        self._timer.daemon = True

    def start(self) -> None:
        self._timer.start()

    def _show(self) -> None:
        with self._lock:
            if self._stopped:
                return
            from rich.console import Console
            from rich.progress import Progress, ProgressColumn, SpinnerColumn, TextColumn
            from rich.text import Text

            begin = self._begin

            class Elapsed(ProgressColumn):
                """The time since the command started (the spinner appears DELAY seconds in)."""

                def render(self, task: Any) -> Text:
                    seconds = int(time.monotonic() - begin)
                    return Text(f"{seconds // 60}:{seconds % 60:02d}", style="progress.elapsed")

            # stdout and stderr are left alone (no redirection): the spinner only draws and erases
            # its own line on the terminal; force_terminal because wanted() checked stderr itself.
            progress = Progress(
                SpinnerColumn(), TextColumn("{task.description}"), Elapsed(),
                console=Console(stderr=True, force_terminal=True, highlight=False),
                transient=True, redirect_stdout=False, redirect_stderr=False,
            )
            self._task = progress.add_task(self.label, total=None)
            progress.start()
            self._progress = progress

    def describe(self, what: str) -> None:
        with self._lock:
            self.label = f"{self.command}: {what}"
            if self._progress is not None:
                self._progress.update(self._task, description=self.label)

    def stop(self) -> None:
        self._timer.cancel()
        with self._lock:
            self._stopped = True
            progress, self._progress = self._progress, None
            if progress is not None:
                progress.stop()  # transient: erases the spinner's line, shows the cursor again


_current: _Indicator | None = None


@contextlib.contextmanager
def working(command: str, *, quiet: bool) -> Iterator[None]:
    """Run the block with a spinner labelled "`command`: computing" (until `describe` says more)
    if it lasts longer than DELAY seconds and `wanted(quiet)`; the spinner is gone when the
    block ends, however it ends."""
    global _current
    if not wanted(quiet):
        yield
        return
    indicator = _current = _Indicator(command)
    indicator.start()
    try:
        yield
    finally:
        indicator.stop()
        if _current is indicator:
            _current = None


def describe(what: str) -> None:
    """Say what is being computed now ("PLD accountant, epsilon at delta 1e-05"); a no-op when
    there is no spinner. Only the label changes: nothing here may change a result."""
    if _current is not None:
        _current.describe(what)


def stop() -> None:
    """Erase the spinner for good, before the command prints (`output.emit`)."""
    if _current is not None:
        _current.stop()
