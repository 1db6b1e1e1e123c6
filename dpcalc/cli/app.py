"""The `dpcalc` entry point: joins the subcommands and turns every failure into an exit code.

Subcommands load lazily: `dpcalc gdp` imports the gdp module only, and `dpcalc --help` lists
the commands from the table below without importing any of them. Every call is a new
process, so this keeps start-up close to the cost of importing click and rich. The commands
are declared in their modules (dpcalc.cli.declare) and built into click commands on use.
"""

from __future__ import annotations

# Ctrl-C while this module loads waits, blocked, for its last lines, which handle it as main()
# does (one line, exit 130) instead of a traceback from the middle of an import. The first
# statement: _signal is built in and already loaded (the signal module would import enum first).
import _signal  # type: ignore[import-not-found]  # built in; typeshed has no stub for it

_SIGNAL_MASK = (_signal.pthread_sigmask(_signal.SIG_BLOCK, {_signal.SIGINT})
                if hasattr(_signal, "pthread_sigmask") else None)

import contextlib  # noqa: E402 - after the mask
import importlib  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from typing import Annotated, Any  # noqa: E402

# One BLAS thread, set before numpy loads: dpcalc's numerics are elementwise work and FFTs, and
# OpenBLAS starts a thread per core with a buffer each, which under a memory limit (ulimit -v) fails
# its allocations and ends the process with exit 1, the code of "over budget"; its worker threads
# would also spin on a second core without saving wall time at these sizes (a calibrate sweep:
# 3.3 s of CPU for 2.3 s of wall time, 2.1 s with one thread). The user's own setting is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import click  # noqa: E402

from dpcalc.cli.declare import App, Exit, Option, build  # noqa: E402
from dpcalc.cli.errors import (  # noqa: E402
    EXIT_BROKEN_PIPE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_IO_ERROR,
    EXIT_USAGE,
    OutputError,
)
from dpcalc.cli.interrupts import keep_lost_interrupts, raise_lost_interrupt  # noqa: E402
from dpcalc.cli.streams import checked_stdout, flush_or_silence, quiet_stderr  # noqa: E402

# name -> (module that defines `app` with the one command, one-line help for `dpcalc --help`)
COMMANDS: dict[str, tuple[str, str]] = {
    "gdp": ("dpcalc.cli.gdp", "Gaussian DP of noisy SGD: mu, epsilon(delta), trade-off curve."),
    "convert": ("dpcalc.cli.convert", "Convert between dp, gdp, zcdp, rdp; calibrate Gaussian/Laplace noise; group privacy."),
    "laplace-eps": ("dpcalc.cli.laplace_eps", "Laplace noise: epsilon, tolerance, probability - give two, get the third."),
    "advanced-composition": ("dpcalc.cli.advanced_composition", "k (eps, delta)-DP mechanisms: basic, advanced, simplified, optimal (KOV)."),
    "rdp": ("dpcalc.cli.rdp", "Renyi DP of (multi-phase) subsampled Gaussian and Laplace runs: epsilon over orders."),
    "check": ("dpcalc.cli.check", "Check a privacy budget file (TOML): compose all releases, exit 1 when over."),
    "pld": ("dpcalc.cli.pld", "Tight epsilon(delta) with a certified interval: privacy loss distributions by FFT."),
    "risk": ("dpcalc.cli.risk", "What an attacker can learn, certified: membership-inference TPR at low FPR, advantage, reconstruction."),
    "mf": ("dpcalc.cli.mf", "Matrix-factorisation mechanisms (BandMF, DP-FTRL's tree): certified epsilon beside DP-SGD's."),
    "calibrate": ("dpcalc.cli.calibrate", "Solve for sigma, T, epochs, p or batch size that meets a target epsilon; sweeps."),
    "statement": ("dpcalc.cli.statement", "A privacy statement of a training run: Markdown for a paper or a model card."),
    "mechanism": ("dpcalc.cli.mechanism", "Textbook mechanisms: privacy, noise and accuracy - give two, get the third."),
    "completions": ("dpcalc.cli.completions", "Shell completions: install the static script for bash, zsh or fish, or print it."),
}


class _ClosedPipe(Exception):
    """A BrokenPipeError carried past click's main, which would turn it into exit code 1."""


@contextlib.contextmanager
def _to_main() -> Iterator[None]:
    """Hand Ctrl-C and a closed pipe to `main` rather than to click: click's main writes a blank
    line for KeyboardInterrupt and turns BrokenPipeError (an OSError) into exit 1.
    click.Abort and _ClosedPipe pass through it (standalone_mode=False) to `main`."""
    try:
        yield
    except KeyboardInterrupt:
        raise click.Abort() from None
    except BrokenPipeError as error:
        raise _ClosedPipe() from error


class LazyGroup(click.Group):
    """A group that imports a subcommand's module only when that subcommand is used.

    `table` maps each subcommand's name to (module defining `app`, one-line summary); a
    nested group (`dpcalc mechanism`) subclasses this with its own table."""

    table: dict[str, tuple[str, str]] = COMMANDS

    def make_context(self, *args, **kwargs) -> click.Context:  # parses; prints --help, --version
        with _to_main():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: click.Context):  # imports and runs the subcommand, prints its output
        with _to_main():
            return super().invoke(ctx)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.table)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.table:
            return None
        module = importlib.import_module(self.table[cmd_name][0])
        raise_lost_interrupt()  # most of a command's imports (numpy, scipy) happen just above
        command = build(module.app)  # made once a process: wrapped once
        if command.name != cmd_name or not getattr(command.callback, "with_progress", False):
            command.name = cmd_name
            if not isinstance(command, click.Group) and command.callback is not None:
                command.callback = _with_progress(command, f"{ctx.command_path} {cmd_name}".strip())
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, summary) for name, (_, summary) in self.table.items()]
        if not rows:
            return
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _with_progress(command: click.Command, label: str) -> Callable[..., Any]:
    """The command's callback, run with a progress spinner on stderr when it works longer than
    half a second (`dpcalc.cli.progress`): only on a terminal, never with --json or --csv."""
    from dpcalc.cli import progress

    callback = command.callback
    assert callback is not None
    quiet_flags = [param.name for param in command.params
                   if isinstance(param, click.Option) and {"--json", "--csv"} & set(param.opts)]

    def run(**params: Any) -> Any:
        quiet = any(params.get(name) for name in quiet_flags if name is not None)
        with progress.working(label, quiet=quiet):
            return callback(**params)

    run.with_progress = True  # type: ignore[attr-defined]  # get_command wraps a command once
    return run


def _print_version(value: bool) -> None:
    if value:
        from dpcalc import __version__

        sys.stdout.write(f"dpcalc {__version__}\n")
        raise Exit()


def _show_completion(value: bool) -> None:
    if value:  # `dpcalc completions show` for the shell $SHELL names
        from dpcalc.cli.completions import show

        show(None)
        raise Exit()


def _install_completion(value: bool) -> None:
    if value:  # `dpcalc completions install` for the shell $SHELL names
        from dpcalc.cli.completions import install

        install(None)
        raise Exit()


app = App(cls=LazyGroup, name="dpcalc", context_settings={"help_option_names": ["-h", "--help"]})


@app.callback()
def root(
    version: Annotated[
        bool,
        Option("--version", is_eager=True, callback=_print_version, help="Print the version and exit."),
    ] = False,
    debug: Annotated[
        bool,
        Option("--debug", help="On an internal error, print the Python traceback (may follow any command)."),
    ] = False,
    install_completion: Annotated[
        bool,
        Option("--install-completion", is_eager=True, callback=_install_completion,
               help="Install completion for the current shell."),
    ] = False,
    show_completion: Annotated[
        bool,
        Option("--show-completion", is_eager=True, callback=_show_completion,
               help="Show completion for the current shell, to copy it or customize the installation."),
    ] = False,
) -> None:
    """A differential-privacy calculator: Gaussian DP, Renyi DP, tight accounting, conversions.

    Every command prints a table, or one strict JSON object with --json. Exit codes: 0 success,
    1 over budget (--max-eps, --max-delta), 2 invalid input, 70 internal error, 74 output not written (stdout
    closed or full), 129 hung up (SIGHUP), 130 interrupted (Ctrl-C), 141 output pipe closed
    (e.g. by head), 143 terminated (SIGTERM).

    \b
    Example:
      dpcalc gdp --p 0.004 --sigma 1.1 --T 10000
    """


def main(argv: list[str] | None = None) -> int:
    """Run dpcalc with `argv` (default sys.argv[1:]) and return the exit code.

    The one place that turns a failure into its exit code (the table in dpcalc.cli.output): bad
    input 2 and internal errors 70 in `_run`; here a signal (130, 129, 143), a closed pipe (141)
    and an output that cannot be written (74). Warnings on a stderr that is closed or full are
    dropped: the result and its exit code do not depend on them."""
    stdout, stderr = sys.stdout, sys.stderr
    handlers = _catch_termination()
    try:
        sys.stderr = quiet_stderr(stderr)
        if stdout is None:  # started with stdout closed (`dpcalc ... >&-`): nothing could be printed
            return _io_error(OutputError("the output to stdout", OSError(9, os.strerror(9))))  # 9: EBADF
        try:
            sys.stdout = checked_stdout(stdout)
            with keep_lost_interrupts():
                code = _run(argv)
                raise_lost_interrupt()
            sys.stdout.flush()  # a closed pipe or a full disk shows here, not at interpreter exit
            return code
        except (KeyboardInterrupt, click.Abort):
            return _interrupted()
        except (BrokenPipeError, _ClosedPipe):
            return _closed_pipe()
        except OutputError as error:
            return _io_error(error)
    finally:
        if sys.stdout is not stdout:
            flush_or_silence(sys.stdout)
            sys.stdout = stdout
        if sys.stderr is not stderr:
            flush_or_silence(sys.stderr)
            sys.stderr = stderr
        for signum, handler in handlers.items():
            signal.signal(signum, handler)


def _run(args: list[str] | None) -> int:
    from dpcalc.cli.errors import InputError

    args = list(sys.argv[1:] if args is None else args)
    debug = "--debug" in args
    args = [arg for arg in args if arg != "--debug"]
    if not args:
        args = ["--help"]
    command = build(app)
    try:
        outcome = command.main(args=args, prog_name="dpcalc", standalone_mode=False)
    except InputError as error:
        return _refused(command, args, error)
    except click.UsageError as error:
        from dpcalc.cli.elsewhere import elsewhere_hint

        hint = elsewhere_hint(error) or _case_hint(error)
        return _failed(command, args, error, hint or _one_line(error.format_message()), EXIT_USAGE)
    except click.ClickException as error:
        return _failed(command, args, error, _one_line(error.format_message()), error.exit_code)
    except (click.Abort, BrokenPipeError, _ClosedPipe, OutputError):
        raise  # main's: exit 130, 141 or 74 (Abort is a RuntimeError, the others OSErrors)
    except MemoryError as error:
        # never met by a bound decided from the inputs (the work and size limits), so it depends on
        # the memory this process may use: an error, never a silent change of method
        if debug:
            import traceback

            traceback.print_exc()
        return _failed(command, args, error, "out of memory: the computation needed more memory than this process "
                       "may use; no other method was substituted. Rerun with more memory.", EXIT_INTERNAL)
    except Exception as error:  # noqa: BLE001 - the one edge where every failure becomes a message
        if _is_parameter_error(error):
            return _refused(command, args, error)
        if debug:
            import traceback  # only here: start-up time

            traceback.print_exc()
        return _failed(command, args, error, f"internal error ({type(error).__name__}: {error}). This is a bug in dpcalc; "
                       "rerun with --debug for the traceback and report it.", EXIT_INTERNAL)
    if outcome == EXIT_INTERRUPTED:  # an exit code 130 raised as such (Exit(130)): reported as a Ctrl-C
        return _interrupted()
    return outcome if isinstance(outcome, int) else 0


def _is_parameter_error(error: BaseException) -> bool:
    """True for a core refusal of the inputs (dpcalc.core.validation.ParameterError): looked up
    only when something failed, so that --help does not import the validation module (a
    ParameterError can only come from a module that has imported it)."""
    validation = sys.modules.get("dpcalc.core.validation")
    return validation is not None and isinstance(error, validation.ParameterError)


def _refused(command: click.Command, args: list[str], error: Exception) -> int:
    """Bad input (an InputError, or a core ParameterError): its one line, exit 2."""
    from dpcalc.cli.options import option_error
    from dpcalc.core.validation import RunError

    # a core refusal of a run names keywords: worded here with the options (--T for T)
    message = option_error(error) if isinstance(error, RunError) else error
    # one line even when the value quoted holds a line break (--sigma $'\\n-1')
    return _failed(command, args, error, str(message).replace("\r", "\\r").replace("\n", "\\n"), EXIT_USAGE)


def _failed(command: click.Command, args: list[str], error: BaseException, message: str, code: int) -> int:
    """The failure's one line on stderr, and with --json its JSON object on stdout (dpcalc.cli.failure)."""
    sys.stderr.write(f"Error: {message}\n")
    try:
        from dpcalc.cli.failure import write_json

        write_json(command, args, error, message, code)
    except OSError:
        raise  # main's: a closed pipe (141) or an output not written (74)
    except Exception:  # noqa: BLE001 - out of memory again: the line on stderr has said it
        pass
    return code


# SIGTERM and SIGHUP end dpcalc as Ctrl-C does (one line, no traceback, what is half-written
# removed), with their own exit code: 128 + the signal's number, as a shell reports a command
# they killed. A signal ignored when dpcalc starts (`nohup`) stays ignored.
_STOPPED_BY: dict[int, str] = {signal.SIGINT: "Aborted.", signal.SIGTERM: "Terminated.", signal.SIGHUP: "Hung up."}
_received: list[int] = []  # the signal behind the KeyboardInterrupt being handled (none: SIGINT)


def _catch_termination() -> dict[int, Any]:
    """Handle SIGTERM and SIGHUP while main runs; returns the handlers to put back after."""
    previous: dict[int, Any] = {}
    for signum in (signal.SIGTERM, signal.SIGHUP):
        try:
            if signal.getsignal(signum) == signal.SIG_DFL:
                previous[signum] = signal.signal(signum, _on_termination)
        except ValueError:  # main() called outside the main thread: signals stay as they are
            break
    _received.clear()
    return previous


def _on_termination(signum: int, frame: Any) -> None:
    _received.append(signum)
    raise KeyboardInterrupt  # unwinds like Ctrl-C, through every handler of it; _interrupted reads the signal


def _interrupted() -> int:
    """Ctrl-C (or SIGTERM, SIGHUP): one line on stderr (after the terminal's "^C" echo), exit
    128 + the signal's number (130 for Ctrl-C), no traceback."""
    _forget_unhandled_interrupt()
    signum = _received[-1] if _received else signal.SIGINT
    _received.clear()
    try:
        echo = "\n" if signum == signal.SIGINT and sys.stderr.isatty() else ""
        sys.stderr.write(f"{echo}{_STOPPED_BY[signum]}\n")
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):  # stderr closed as well: the exit code says it
        flush_or_silence(sys.stderr)
    return EXIT_INTERRUPTED if signum == signal.SIGINT else 128 + signum


def _forget_unhandled_interrupt() -> None:
    """Keep CPython from ending the process by SIGINT (-2) instead of with our exit code.

    A KeyboardInterrupt that leaves a string exec or eval (dataclasses and namedtuple build
    their methods so, e.g. while numpy or click import) sets the interpreter's "unhandled
    KeyboardInterrupt" flag even when it is caught later; under `python -m dpcalc` the
    interpreter then kills itself by SIGINT on exit. Every string exec clears the flag as it
    starts, so an empty one does. Harmless where the flag does not exist."""
    exec("pass", {})


def _one_line(message: str) -> str:
    """click's message on one line, as every dpcalc error is: a missing choice option lists its
    choices one a line ("Missing option '--noise'. Choose from:\\n\\tlaplace,\\n\\tgumbel")."""
    return " ".join(message.split())


def _case_hint(error: click.UsageError) -> str | None:
    """For an unknown option that differs from a real one only in case (--t for --T), the message
    that names the real one; click's own suggestions compare letters case-sensitively."""
    if not isinstance(error, click.NoSuchOption) or error.ctx is None:
        return None
    wanted = error.option_name.lower()
    names = [name for param in error.ctx.command.params for name in getattr(param, "opts", [])]
    matches = [name for name in names if name.lower() == wanted and name != error.option_name]
    if not matches:
        return None
    return f"No such option '{error.option_name}'. Did you mean '{matches[0]}'? (options are case-sensitive)"


def _closed_pipe() -> int:
    """The reader went away (`dpcalc ... | head`): exit 141 silently, as a shell reports a
    command killed by SIGPIPE (128 + 13), so that `set -o pipefail` tells it from a failed
    budget check (1). What is still buffered for the closed stream goes to /dev/null, or the
    interpreter would report the pipe again as it flushes at exit."""
    flush_or_silence(sys.stdout)
    flush_or_silence(sys.stderr)
    return EXIT_BROKEN_PIPE


def _io_error(error: OutputError) -> int:
    """The output could not be written (stdout closed or full, the --plot file): one line on
    stderr where it works, exit 74 (EX_IOERR), never 1 (over budget)."""
    flush_or_silence(sys.stdout)
    sys.stderr.write(f"Error: cannot write {error.target}: {error.strerror}\n")
    flush_or_silence(sys.stderr)
    return EXIT_IO_ERROR


# The module's last lines: a Ctrl-C that came while it loaded is raised as the mask is lifted.
if _SIGNAL_MASK is not None:
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, _SIGNAL_MASK)
    except KeyboardInterrupt:
        raise SystemExit(_interrupted()) from None


if __name__ == "__main__":
    sys.exit(main())
