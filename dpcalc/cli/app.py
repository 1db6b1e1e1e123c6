"""The `dpcalc` entry point: joins the subcommands and turns every failure into an exit code.

Subcommands load lazily: `dpcalc gdp` imports the gdp module only, and `dpcalc --help` lists
the commands from the table below without importing any of them. Every call is a new
process, so this keeps start-up close to the cost of importing click and rich. The commands
are declared in their modules (dpcalc.cli.declare) and built into click commands on use.
"""

from __future__ import annotations

import signal
import sys

# Ctrl-C while this module loads waits, blocked, for its last lines, which handle it as main()
# does (one line, exit 130) instead of a traceback from the middle of an import.
_SIGNAL_MASK = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if hasattr(signal, "pthread_sigmask") else None

import contextlib  # noqa: E402 - after the mask
import importlib  # noqa: E402
import io  # noqa: E402
import os  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from typing import Annotated, Any, TextIO  # noqa: E402

# One BLAS thread, set before numpy loads: dpcalc's numerics are elementwise work and FFTs, and
# OpenBLAS starts a thread per core with a buffer each, which under a memory limit (ulimit -v) fails
# its allocations and ends the process with exit 1, the code of "over budget". The user's own
# setting is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import click  # noqa: E402

from dpcalc.cli.declare import App, Exit, Option, build  # noqa: E402
from dpcalc.cli.interrupts import keep_lost_interrupts, raise_lost_interrupt  # noqa: E402
from dpcalc.cli.output import EXIT_BROKEN_PIPE, EXIT_INTERNAL, EXIT_USAGE  # noqa: E402

# Before numpy loads: the accountants' few vector products go through OpenBLAS, whose worker
# threads then spin on a second core without saving any wall time at these sizes (measured: a
# calibrate sweep used 3.3 s of CPU for 2.3 s of wall time, 2.1 s with one thread; one pld
# call starts about 5 ms sooner). A value the user set is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

EXIT_INTERRUPTED = 130  # 128 + SIGINT: what a shell reports for a command stopped by Ctrl-C

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
    "calibrate": ("dpcalc.cli.calibrate", "Solve for sigma, T, epochs, p or batch size that meets a target epsilon; sweeps."),
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
        command = build(module.app)
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
    1 over budget (--max-eps), 2 invalid input, 70 internal error, 130 interrupted (Ctrl-C),
    141 output pipe closed (e.g. by head).

    \b
    Example:
      dpcalc gdp --p 0.004 --sigma 1.1 --T 10000
    """


def main(argv: list[str] | None = None) -> int:
    """Run dpcalc with `argv` (default sys.argv[1:]) and return the exit code."""
    stdout = sys.stdout
    try:
        try:
            sys.stdout = _checked_stdout(stdout)
            with keep_lost_interrupts():
                code = _run(argv)
                raise_lost_interrupt()
            sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
            return code
        except (KeyboardInterrupt, click.Abort):
            return _interrupted()
        except (BrokenPipeError, _ClosedPipe):
            return _closed_pipe()
    finally:
        if sys.stdout is not stdout:
            _flush_or_silence(sys.stdout)
            sys.stdout = stdout


def _run(args: list[str] | None) -> int:
    from dpcalc.cli.options import InputError
    from dpcalc.core.validation import ParameterError

    args = list(sys.argv[1:] if args is None else args)
    debug = "--debug" in args
    args = [arg for arg in args if arg != "--debug"]
    if not args:
        args = ["--help"]
    command = build(app)
    try:
        outcome = command.main(args=args, prog_name="dpcalc", standalone_mode=False)
    except (InputError, ParameterError) as error:
        sys.stderr.write(f"Error: {error}\n")
        return EXIT_USAGE
    except click.UsageError as error:
        sys.stderr.write(f"Error: {_case_hint(error) or error.format_message()}\n")
        return EXIT_USAGE
    except click.ClickException as error:
        sys.stderr.write(f"Error: {error.format_message()}\n")
        return error.exit_code
    except (click.Abort, BrokenPipeError, _ClosedPipe):
        raise  # main's: exit 130 or 141 (Abort is a RuntimeError, BrokenPipeError an OSError)
    except Exception as error:  # noqa: BLE001 - the one edge where every failure becomes a message
        if debug:
            import traceback  # only here: start-up time

            traceback.print_exc()
        sys.stderr.write(
            f"Error: internal error ({type(error).__name__}: {error}). This is a bug in dpcalc; "
            "rerun with --debug for the traceback and report it.\n"
        )
        return EXIT_INTERNAL
    if outcome == EXIT_INTERRUPTED:  # an exit code 130 raised as such (Exit(130)): reported as a Ctrl-C
        return _interrupted()
    return outcome if isinstance(outcome, int) else 0


def _interrupted() -> int:
    """Ctrl-C: one line on stderr (after the terminal's "^C" echo), exit 130, no traceback."""
    _forget_unhandled_interrupt()
    try:
        sys.stderr.write(("\n" if sys.stderr.isatty() else "") + "Aborted.\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed as well: the exit code says it
        _flush_or_silence(sys.stderr)
    return EXIT_INTERRUPTED


def _forget_unhandled_interrupt() -> None:
    """Keep CPython from ending the process by SIGINT (-2) instead of with our exit code.

    A KeyboardInterrupt that leaves a string exec or eval (dataclasses and namedtuple build
    their methods so, e.g. while numpy or click import) sets the interpreter's "unhandled
    KeyboardInterrupt" flag even when it is caught later; under `python -m dpcalc` the
    interpreter then kills itself by SIGINT on exit. Every string exec clears the flag as it
    starts, so an empty one does. Harmless where the flag does not exist."""
    exec("pass", {})


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
    _flush_or_silence(sys.stdout)
    _flush_or_silence(sys.stderr)
    return EXIT_BROKEN_PIPE


def _flush_or_silence(stream: TextIO) -> None:
    try:
        stream.flush()
        return
    except ValueError:  # already closed
        return
    except OSError:
        pass
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, stream.fileno())
        finally:
            os.close(devnull)
        stream.flush()
    except (OSError, ValueError):
        pass


def _checked_stdout(stream: TextIO) -> TextIO:
    """sys.stdout, or under `python -u` / PYTHONUNBUFFERED a line-buffered copy of it.

    Unbuffered, sys.stdout hands each write to the file descriptor once and ignores a short
    write: a reader that goes away in the middle of a long output (`dpcalc ... --json | head
    -c 10`) cuts it without an error, and the exit code says success. A buffered writer writes
    the rest and raises BrokenPipeError. Line buffering keeps the output as prompt as before.
    """
    if not isinstance(getattr(stream, "buffer", None), io.RawIOBase):
        return stream
    try:
        raw = io.FileIO(stream.fileno(), "w", closefd=False)
    except (OSError, ValueError):
        return stream
    return io.TextIOWrapper(
        io.BufferedWriter(raw), encoding=stream.encoding, errors=stream.errors, line_buffering=True
    )


# The module's last lines: a Ctrl-C that came while it loaded is raised as the mask is lifted.
if _SIGNAL_MASK is not None:
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, _SIGNAL_MASK)
    except KeyboardInterrupt:
        raise SystemExit(_interrupted()) from None


if __name__ == "__main__":
    sys.exit(main())
