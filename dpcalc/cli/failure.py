"""A failure under --json: one JSON object on stdout too, besides the one line on stderr.

A script that reads `dpcalc ... --json` gets one strict JSON object whatever happens:

    {"command": "gdp", "version": "...", "error": {"option": "--T", "options": ["--T"],
     "message": "--T must be an integer in [1, inf), got 0", "allowed": "an integer in [1, inf)",
     "got": "0", "choices": null}}

for bad input (exit 2: a bad value, a conflict, a missing option, click's usage errors) and for
an internal error (exit 70) met before the report is printed (one met while it is printed or
drawn, in `output.emit`, may follow the result's own JSON: none then); never for an output that
cannot be written (74: stdout itself failed, or the result was printed already). What an error is about comes from where it was
raised (dpcalc.cli.errors.InputError's fields, core.validation.ParameterError's, the click
parameter of click's errors), never from its message's text. Loaded only when a command fails.
"""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass
from typing import Any

import click

from dpcalc.cli.errors import ChoiceError, InputError, as_typed
from dpcalc.cli.output import EXIT_USAGE
from dpcalc.core.validation import ParameterError, RunError


@dataclass(frozen=True)
class ErrorFields:
    """The `error` object of the JSON (docs/json.md, "Errors")."""

    option: str | None  # the first option (or argument) the error names, as declared: "--T", "BUDGET"
    options: tuple[str, ...]  # every option it names, in order: both of a conflict
    message: str  # the line printed on stderr, without "Error: "
    allowed: str | None  # what the option takes: "an integer in [1, inf)"
    got: str | None  # the value received, as typed
    choices: tuple[str, ...] | None  # the values of a choice option, else None


def error_fields(error: BaseException, message: str) -> ErrorFields:
    """What `error` (printed as `message`) is about, from the error itself."""
    option: str | None = None
    options: tuple[str, ...] = ()
    allowed = got = None
    choices: tuple[str, ...] | None = None
    if isinstance(error, InputError):
        option, options, allowed, got, choices = error.option, error.options, error.allowed, error.got, error.choices
    elif isinstance(error, RunError):
        from dpcalc.cli.options import option_name

        options = tuple(option_name(keyword) for keyword in error.named)
        option = options[0] if options else None
        allowed, got = error.allowed, as_typed(error.received)
    elif isinstance(error, ParameterError):  # a budget file's or the core's name: not an option
        allowed, got = error.requirement, as_typed(error.received)
    elif isinstance(error, (click.NoSuchOption, click.BadOptionUsage)):
        option = error.option_name
    elif isinstance(error, click.BadParameter) and error.param is not None:  # MissingParameter too
        option = _declared_name(error.param)
        if isinstance(error.param.type, click.Choice):
            choices = tuple(str(choice) for choice in error.param.type.choices)
            allowed = f"one of {', '.join(choices)}"
        got = error.got if isinstance(error, ChoiceError) else None
    if option is not None and not options:
        options = (option,)
    return ErrorFields(option, options, message, allowed, got, choices)


def _declared_name(param: click.Parameter) -> str:
    if isinstance(param, click.Option) and param.opts:
        return param.opts[0]
    return param.human_readable_name


def _while_printing(error: BaseException) -> bool:
    """Whether `error` was raised while a report was printed (`output.emit` in its traceback)."""
    from dpcalc.cli.output import emit  # loaded already: the commands print through it

    traceback = error.__traceback__
    while traceback is not None:
        if traceback.tb_frame.f_code is emit.__code__:
            return True
        traceback = traceback.tb_next
    return False


def json_command(root: click.Command, args: list[str]) -> str | None:
    """The command `args` run ("gdp", "mechanism gaussian") when it takes --json and `args` give
    it (before any "--"); None otherwise, and for a command that cannot be found."""
    context = click.Context(root, info_name="dpcalc")
    command, path, rest = root, [], list(args)
    try:
        while isinstance(command, click.Group):
            names = [index for index, arg in enumerate(rest) if not arg.startswith("-")]
            if not names:
                return None
            found = command.get_command(context, rest[names[0]])
            if found is None:
                return None
            path.append(rest[names[0]])
            rest = rest[names[0] + 1:]
            command, context = found, click.Context(found, info_name=path[-1], parent=context)
    except Exception:  # noqa: BLE001 - a module that does not load: no JSON, the line on stderr says why
        return None
    if not any("--json" in getattr(param, "opts", ()) for param in command.params):
        return None
    given = rest[:rest.index("--")] if "--" in rest else rest
    return " ".join(path) if "--json" in given else None


def write_json(root: click.Command, args: list[str], error: BaseException, message: str, code: int) -> None:
    """With --json, the error as one strict JSON object on stdout (nothing without --json)."""
    command = json_command(root, args)
    if command is None or (code != EXIT_USAGE and _while_printing(error)):
        return
    import json

    from dpcalc import __version__
    from dpcalc.cli.output import json_safe

    fields: dict[str, Any] = asdict(error_fields(error, message))
    document = {"command": command, "version": __version__, "error": fields}
    sys.stdout.write(json.dumps(json_safe(document), allow_nan=False) + "\n")
