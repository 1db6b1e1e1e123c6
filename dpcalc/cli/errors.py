"""The errors the command line words for its user, below every module that raises them.

`InputError` (bad input: one line on stderr, exit 2) and `OutputError` (an output that could not
be written, exit 74) are caught at one edge, dpcalc.cli.app; `conflict` words two options that
cannot be given together. `Choice` is click's choice of values whose refusal keeps the value
given (`ChoiceError`), and which may answer a value another command takes with where to go.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

# Every exit code dpcalc returns, one meaning each (README "Exit codes"; kept here,
# not in dpcalc.cli.output, so that `dpcalc --help` need not import that); dpcalc.cli.app.main
# is the one place that maps a failure to its code.
EXIT_OK = 0
EXIT_OVER_BUDGET = 1  # only this: a result over --max-eps, a budget file over its budget
EXIT_USAGE = 2
EXIT_INTERNAL = 70
EXIT_IO_ERROR = 74  # EX_IOERR: the output could not be written (stdout closed or full, the --plot file)
EXIT_HANGUP = 129  # 128 + SIGHUP
EXIT_INTERRUPTED = 130  # 128 + SIGINT: Ctrl-C
EXIT_BROKEN_PIPE = 141  # the reader closed the pipe (128 + SIGPIPE, the shell convention)
EXIT_TERMINATED = 143  # 128 + SIGTERM


class InputError(Exception):
    """Invalid command-line input: printed as one line on stderr, exit code 2.

    Where the error is raised knows what it is about, and says so for `--json`'s error object
    (dpcalc.cli.failure): `option`, the first option named (as typed: --T); `options`, every
    option it names, in order; `allowed`, the requirement ("an integer in [1, inf)"); `got`,
    the value as typed; `choices`, the values of an option that takes one of a list. Each is None
    (or empty) where the error has none. A caller gives `option` or `options`: either says the
    other (`option` is the first of `options`)."""

    def __init__(self, message: str, *, option: str | None = None, options: tuple[str, ...] = (),
                 allowed: str | None = None, got: str | None = None, choices: tuple[str, ...] | None = None) -> None:
        super().__init__(message)
        self.option = option if option is not None else (options[0] if options else None)
        self.options = options or ((option,) if option else ())
        self.allowed = allowed
        self.got = got
        self.choices = choices

    @classmethod
    def of_text(cls, error: Any, option: str) -> InputError:
        """The error of a text refused as a number (`core.text.TextError`) given to `option`."""
        return cls(str(error), option=option, allowed=getattr(error, "requirement", None),
                   got=getattr(error, "text", None))


def as_typed(value: object) -> str | None:
    """A value an error received, as text: as typed when it was parsed from text (the `text` of a
    `core.text.WrittenFloat`), else as printed; None for none."""
    if value is None:
        return None
    text = getattr(value, "text", None)
    return text if isinstance(text, str) else str(value)


class OutputError(OSError):
    """A write of dpcalc's output that failed (a full disk, a closed descriptor): `target` says
    what could not be written ("the output to stdout", "the --plot file F"). Never a closed
    pipe, which is BrokenPipeError (141)."""

    def __init__(self, target: str, error: OSError) -> None:
        super().__init__(error.errno, error.strerror or str(error))
        self.target = target


def conflict(first: str, second: str, hint: str = "") -> InputError:
    """The error for two options that cannot be given together; either may be written with its
    value ("--format github"): the option is its first word."""
    suffix = f"; {hint}" if hint else ""
    return InputError(f"{first} and {second} cannot be given together{suffix}",
                      options=(first.split()[0], second.split()[0]))


class ChoiceError(click.BadParameter):
    """click's refusal of a value not among an option's choices, worded as click words it, with
    the value given (`got`)."""

    def __init__(self, message: str, *, ctx: click.Context | None, param: click.Parameter | None, got: str) -> None:
        super().__init__(message, ctx=ctx, param=param)
        self.got = got


class Choice(click.Choice):
    """A click.Choice whose refusal keeps the value given (`ChoiceError`); `elsewhere` maps a
    value this option does not take, but another command does, to the message that says where
    to go (an `InputError`: one line, exit 2)."""

    def __init__(self, choices: Sequence[str], case_sensitive: bool = True,
                 elsewhere: dict[str, str] | None = None) -> None:
        super().__init__(choices, case_sensitive=case_sensitive)
        self.elsewhere = dict(elsewhere or {})

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value in self.elsewhere:
            option = param.opts[0] if isinstance(param, click.Option) else None
            choices = tuple(str(choice) for choice in self.choices)
            raise InputError(self.elsewhere[value], option=option, allowed=f"one of {', '.join(choices)}", got=value,
                             choices=choices)
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as error:
            raise ChoiceError(error.message, ctx=error.ctx, param=error.param, got=str(value)) from None
