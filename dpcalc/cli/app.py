"""The `dpcalc` entry point: joins the subcommands and turns every failure into an exit code.

Subcommands load lazily: `dpcalc gdp` imports the gdp module only, and `dpcalc --help` lists
the commands from the table below without importing any of them. Every call is a new
process, so this keeps start-up close to the cost of importing typer and rich.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from typing import Annotated, Optional

import click
import typer
from typer.core import TyperGroup

from dpcalc import __version__
from dpcalc.cli.output import EXIT_INTERNAL, EXIT_USAGE

# Before numpy loads: the accountants' few vector products go through OpenBLAS, whose worker
# threads then spin on a second core without saving any wall time at these sizes (measured: a
# calibrate sweep used 3.3 s of CPU for 2.3 s of wall time, 2.1 s with one thread; one pld
# call starts about 5 ms sooner). A value the user set is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# name -> (module that defines `app` with the one command, one-line help for `dpcalc --help`)
COMMANDS: dict[str, tuple[str, str]] = {
    "gdp": ("dpcalc.cli.gdp", "Gaussian DP of noisy SGD: mu, epsilon(delta), trade-off curve."),
    "convert": ("dpcalc.cli.convert", "Convert between dp, gdp, zcdp, rdp; calibrate Gaussian/Laplace noise; group privacy."),
    "laplace-eps": ("dpcalc.cli.laplace_eps", "Laplace noise: epsilon, tolerance, probability - give two, get the third."),
    "advanced-composition": ("dpcalc.cli.advanced_composition", "k (eps, delta)-DP mechanisms: basic, advanced, simplified, optimal (KOV)."),
    "rdp": ("dpcalc.cli.rdp", "Renyi DP of (multi-phase) subsampled Gaussian and Laplace runs: epsilon over orders."),
    "check": ("dpcalc.cli.check", "Check a privacy budget file (TOML): compose all releases, exit 1 when over."),
    "pld": ("dpcalc.cli.pld", "Tight epsilon(delta) with a certified interval: privacy loss distributions by FFT."),
    "calibrate": ("dpcalc.cli.calibrate", "Solve for sigma, T, epochs, p or batch size that meets a target epsilon; sweeps."),
}


class LazyGroup(TyperGroup):
    """A group that imports a subcommand's module only when that subcommand is used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> Optional[click.Command]:
        if cmd_name not in COMMANDS:
            return None
        module = importlib.import_module(COMMANDS[cmd_name][0])
        command = typer.main.get_command(module.app)
        command.name = cmd_name
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, summary) for name, (_, summary) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _print_version(value: bool) -> None:
    if value:
        sys.stdout.write(f"dpcalc {__version__}\n")
        raise typer.Exit()


app = typer.Typer(
    cls=LazyGroup,
    name="dpcalc",
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def root(
    version: Annotated[
        bool,
        typer.Option("--version", is_eager=True, callback=_print_version, help="Print the version and exit."),
    ] = False,
    debug: Annotated[
        bool,
        typer.Option("--debug", help="On an internal error, print the Python traceback (may follow any command)."),
    ] = False,
) -> None:
    """A differential-privacy calculator: Gaussian DP, Renyi DP, tight accounting, conversions.

    Every command prints a table, or one strict JSON object with --json. Exit codes: 0 success,
    1 over budget (--max-eps), 2 invalid input, 70 internal error.

    \b
    Example:
      dpcalc gdp --p 0.004 --sigma 1.1 --T 10000
    """


def main(argv: list[str] | None = None) -> int:
    """Run dpcalc with `argv` (default sys.argv[1:]) and return the exit code."""
    from dpcalc.cli.options import InputError
    from dpcalc.core.validation import ParameterError

    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    args = [arg for arg in args if arg != "--debug"]
    if not args:
        args = ["--help"]
    command = typer.main.get_command(app)
    try:
        outcome = command.main(args=args, prog_name="dpcalc", standalone_mode=False)
    except (InputError, ParameterError) as error:
        sys.stderr.write(f"Error: {error}\n")
        return EXIT_USAGE
    except click.UsageError as error:
        sys.stderr.write(f"Error: {error.format_message()}\n")
        return EXIT_USAGE
    except click.ClickException as error:
        sys.stderr.write(f"Error: {error.format_message()}\n")
        return error.exit_code
    except (click.Abort, KeyboardInterrupt):
        sys.stderr.write("Aborted.\n")
        return 130
    except BrokenPipeError:
        # The reader went away (`dpcalc ... | head`); nothing left to say.
        sys.stderr.close()
        return 0
    except Exception as error:  # noqa: BLE001 - the one edge where every failure becomes a message
        if debug:
            traceback.print_exc()
        sys.stderr.write(
            f"Error: internal error ({type(error).__name__}: {error}). This is a bug in dpcalc; "
            "rerun with --debug for the traceback and report it.\n"
        )
        return EXIT_INTERNAL
    return outcome if isinstance(outcome, int) else 0


if __name__ == "__main__":
    sys.exit(main())
