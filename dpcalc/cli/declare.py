"""How a command module declares its command, and how the declaration becomes a click command.

A command is a function whose parameters carry their options,

    @app.command("gdp", help=HELP)
    def gdp(sigma: Annotated[float | None, Option("--sigma", metavar="FLOAT", help=..., click_type=...)] = None): ...

on an `App` (one command; or a group, `@app.callback()`, whose subcommands come from its click
class, dpcalc.cli.app.LazyGroup). `build` turns an App into that click command: one click
option (or argument) per parameter, its type from `click_type` or from the annotation (bool: a
flag; an Enum: a click.Choice of its values, handed to the function as the Enum; list[str]: an
option given repeatedly, a list or None; int, float, str), the default shown in the help unless
show_default=False.

The declarations read as Typer's (the names and keywords dpcalc used with Typer 0.20-0.25),
but the commands are built here, from click alone. Typer 0.26 and later build on a reduced copy
of click without parameter types (so `click_type` is gone), and 0.29.2 converts every option
through pydantic: a ten-option Typer app took 262 ms on 0.29.2 against 109 ms on 0.25.1, with
`import typer, rich` 107 ms on both (medians of 15 interleaved runs, loaded 2-core machine).
Importing Typer at all is about a quarter of that floor (`import click, rich`: 79 ms), so no
command imports it, and any Typer release can be installed beside dpcalc.
"""

from __future__ import annotations

import enum
import inspect
import typing
from collections.abc import Callable
from typing import Any

import click
from click.exceptions import Exit  # `raise Exit(code)` ends a command with that exit code

__all__ = ["App", "Argument", "Exit", "Option", "build"]

_MISSING: Any = inspect.Parameter.empty


class Option:
    """An option of a command, declared on its parameter: `Annotated[type, Option("--name", ...)]`.

    The default is the parameter's; `callback` takes the option's value (for --version);
    `min` bounds an int option from below; `once` refuses the option given more than once (a
    budget gate: click would keep the last of `--max-eps 1 --max-eps 100` without a word)."""

    def __init__(
        self,
        *param_decls: str,
        help: str | None = None,
        metavar: str | None = None,
        click_type: click.ParamType | None = None,
        show_default: bool = True,
        case_sensitive: bool = True,
        is_eager: bool = False,
        callback: Callable[[Any], Any] | None = None,
        min: int | None = None,
        once: bool = False,
    ) -> None:
        self.param_decls = param_decls
        self.help = help
        self.metavar = metavar
        self.click_type = click_type
        self.show_default = show_default
        self.case_sensitive = case_sensitive
        self.is_eager = is_eager
        self.callback = callback
        self.min = min
        self.once = once


class Argument:
    """A positional argument, declared on its parameter: `Annotated[str, Argument(metavar="FILE")]`;
    `Annotated[list[str], Argument(...)]` takes one or more (none when it has a default)."""

    def __init__(self, *, metavar: str | None = None, help: str | None = None) -> None:
        self.metavar = metavar
        self.help = help


class App:
    """What a command module defines as `app`: one command (`@app.command`), or a group (`cls`,
    a click.Group subclass, with `@app.callback` for the group's own options and help)."""

    def __init__(self, *, cls: type[click.Group] | None = None, name: str | None = None,
                 context_settings: dict[str, Any] | None = None) -> None:
        self.cls = cls
        self.name = name
        self.context_settings = context_settings or {}
        self.function: Callable[..., Any] | None = None
        self.command_name: str | None = None
        self.help: str | None = None
        self.invoke_without_command = False

    def command(self, name: str, *, help: str | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def register(function: Callable[..., Any]) -> Callable[..., Any]:
            self.function, self.command_name, self.help = function, name, help
            return function

        return register

    def callback(self, *, invoke_without_command: bool = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def register(function: Callable[..., Any]) -> Callable[..., Any]:
            self.function, self.invoke_without_command = function, invoke_without_command
            return function

        return register


def build(app: App) -> click.Command:
    """The click command (or group, for an App with `cls`) that `app` declares."""
    function = app.function
    if function is None:
        raise TypeError("the App declares no command: decorate a function with @app.command or @app.callback")
    params, converters = _parameters(function)
    help_text = app.help if app.help is not None else inspect.getdoc(function)
    callback = _invoker(function, converters)
    if app.cls is not None:
        # no_args_is_help=False: a group given no arguments decides itself (dpcalc shows its help,
        # exit 0; click would make that a usage error, exit 2)
        return app.cls(name=app.name, params=params, callback=callback, help=help_text,
                       context_settings=app.context_settings, invoke_without_command=app.invoke_without_command,
                       no_args_is_help=False)
    return Command(app.command_name or app.name, params=params, callback=callback, help=help_text,
                   context_settings=app.context_settings)


class Command(click.Command):
    """A click command whose help lists its arguments too ("Arguments:", before "Options:")."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [_argument_row(param) for param in self.get_params(ctx) if isinstance(param, _Argument)]
        if rows:
            with formatter.section("Arguments"):
                formatter.write_dl(rows)
        super().format_options(ctx, formatter)


class _Argument(click.Argument):
    """A click argument with a description, for the command's "Arguments:" section (kept apart
    from click's own `help`, which click 8.5+ lists in a section of its own)."""

    def __init__(self, *args: Any, description: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.description = description


def _argument_row(param: _Argument) -> tuple[str, str]:
    extra = "  [required]" if param.required else ""
    return param.human_readable_name, f"{param.description or ''}{extra}".strip()


def _invoker(function: Callable[..., Any], converters: dict[str, Callable[[Any], Any]]) -> Callable[..., Any]:
    def invoke(**values: Any) -> Any:
        for name, convert in converters.items():
            values[name] = convert(values[name])
        return function(**values)

    return invoke


def _parameters(function: Callable[..., Any]) -> tuple[list[click.Parameter], dict[str, Callable[[Any], Any]]]:
    """The click parameters of `function`'s parameters, and the conversions of their values
    (Enum, list) that click does not make, by parameter name."""
    hints = typing.get_type_hints(function, include_extras=True)
    params: list[click.Parameter] = []
    converters: dict[str, Callable[[Any], Any]] = {}
    for name, parameter in inspect.signature(function).parameters.items():
        annotated = hints.get(name)
        declared = [item for item in getattr(annotated, "__metadata__", ()) if isinstance(item, (Option, Argument))]
        if len(declared) != 1:
            raise TypeError(f"parameter {name!r} of {function.__qualname__} needs Annotated[type, Option(...) or Argument(...)]")
        param, convert = _parameter(name, annotated.__origin__, declared[0], parameter.default)  # type: ignore[union-attr]
        params.append(param)
        if convert is not None:
            converters[name] = convert
    return params, converters


def _without_none(annotation: Any) -> Any:
    arguments = [item for item in typing.get_args(annotation) if item is not type(None)]
    if type(None) in typing.get_args(annotation) and len(arguments) == 1:
        return arguments[0]
    return annotation


def _parameter(name: str, annotation: Any, declared: Option | Argument,
               default: Any) -> tuple[click.Parameter, Callable[[Any], Any] | None]:
    base = _without_none(annotation)
    repeated = typing.get_origin(base) is list
    if repeated:
        (base,) = typing.get_args(base)
    convert: Callable[[Any], Any] | None = None
    click_type = declared.click_type if isinstance(declared, Option) else None
    if click_type is None:
        click_type, convert = _click_type(base, declared)
        if convert is not None and isinstance(default, enum.Enum):
            default = default.value
    once = isinstance(declared, Option) and declared.once
    if repeated:
        each = convert
        convert = _list_converter(each, none_when_empty=default in (None, _MISSING))
    elif isinstance(declared, Option) and declared.once:
        # collected as a repeated option, so that a repeat is seen (click keeps only the last value
        # of an option given twice), then handed to the function as its one value or the default
        if declared.is_eager or declared.callback is not None or base is bool:
            raise TypeError(f"parameter {name!r}: once=True takes a plain option with a value")
        convert = _once_converter(declared.param_decls[0] if declared.param_decls else name, convert, default)
        repeated = True
    required = default is _MISSING
    # a required parameter gets no default at all: click 8.5 takes an explicit default=None as a value given
    defaults = {} if required else {"default": default}
    if once and not required:
        defaults = {"default": ()} if default is None else {"default": (default,)}
    if isinstance(declared, Argument):
        # a list[str] argument takes one or more values (nargs=-1; required: at least one)
        return _Argument([name], type=click_type, required=required, metavar=declared.metavar,
                         nargs=-1 if repeated else 1, description=declared.help, **defaults), convert
    option_callback = declared.callback
    return click.Option(
        [name, *declared.param_decls],
        type=click_type,
        is_flag=True if base is bool else None,
        multiple=repeated,
        required=required,
        metavar=declared.metavar,
        help=declared.help,
        show_default=declared.show_default,
        is_eager=declared.is_eager,
        callback=None if option_callback is None else (lambda context, param, value: option_callback(value)),
        **defaults,
    ), convert


def _click_type(base: Any, declared: Option | Argument) -> tuple[click.ParamType, Callable[[Any], Any] | None]:
    if base is bool:
        return click.BOOL, None
    if isinstance(base, type) and issubclass(base, enum.Enum):
        enumeration = base
        case_sensitive = declared.case_sensitive if isinstance(declared, Option) else True
        choice = click.Choice([str(member.value) for member in enumeration], case_sensitive=case_sensitive)
        return choice, (lambda value: None if value is None else enumeration(value))
    if base is int:
        minimum = declared.min if isinstance(declared, Option) else None
        return (click.INT if minimum is None else click.IntRange(min=minimum)), None
    if base is float:
        return click.FLOAT, None
    if base is str:
        return click.STRING, None
    raise TypeError(f"no click type for {base!r}: give the option a click_type")


def _once_converter(option: str, each: Callable[[Any], Any] | None, default: Any) -> Callable[[Any], Any]:
    """The one value of an option declared `once` (collected by click as a repeated option), or
    its default when it was not given; a usage error (exit 2) naming it when it was given twice."""

    def convert(values: Any) -> Any:
        values = tuple(values or ())
        if len(values) > 1:
            shown = " ".join(f"{option} {getattr(value, 'text', value)}" for value in values)
            raise click.UsageError(f"{option} was given {len(values)} times ({shown}): give it once")
        if not values:
            return default
        return values[0] if each is None else each(values[0])

    return convert


def _list_converter(each: Callable[[Any], Any] | None, *, none_when_empty: bool) -> Callable[[Any], Any]:
    """A repeated option's values as a list (each converted), or None when it was not given and
    its default is None."""

    def convert(values: Any) -> Any:
        if values is None or (none_when_empty and len(values) == 0):
            return None
        return [each(value) if each is not None else value for value in values]

    return convert
