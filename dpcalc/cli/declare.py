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

Options that several commands share are declared once, as the fields of a frozen record
(`class RunOptions(Record)`, dpcalc.core.record: nothing generated at import) or of a frozen
dataclass, each field `Annotated[type, Option(...)] = default`, as a parameter would be; a
command takes them as one parameter, `run: Annotated[RunOptions, Group()]`: `build` gives it one
click option per field, in the order of the fields, where the parameter stands, and the function
receives one instance of the class (dpcalc.cli.options holds the shared groups).

A command function ends by returning what it prints (an `Answer`: `emit()` prints it and gives
the exit code, dpcalc.cli.request), or None; it may still end by raising `Exit(code)`.

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
from typing import Any, Protocol

import click
from click.exceptions import Exit  # `raise Exit(code)` ends a command with that exit code

from dpcalc.cli.errors import Choice
from dpcalc.core import record

__all__ = ["Answer", "App", "Argument", "Exit", "Group", "Option", "build"]

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


class Group:
    """Options declared as the fields of a frozen record (dpcalc.core.record) or dataclass, taken
    as one parameter: `Annotated[RunOptions, Group()]` (each field `Annotated[type, Option(...)] = default`)."""


class Answer(Protocol):
    """What a command function may return: its output, printed by `emit`, which gives the exit code."""

    def emit(self) -> int: ...


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
        self.built: click.Command | None = None  # `build`'s command, made once (click commands are reusable)

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
    """The click command (or group, for an App with `cls`) that `app` declares, made on the first
    call and kept on the App (a command is looked up more than once a call: resolving it and its
    help; in the tests, thousands of calls in one process)."""
    if app.built is None:
        app.built = _build(app)
    return app.built


def _build(app: App) -> click.Command:
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


# How the function's parameters are made from click's values, in order: (name, conversion);
# a conversion takes the dict of click's values and returns the parameter's value.
_Converters = list[tuple[str, Callable[[dict[str, Any]], Any]]]


def _invoker(function: Callable[..., Any], converters: _Converters) -> Callable[..., Any]:
    def invoke(**values: Any) -> Any:
        arguments = {name: convert(values) for name, convert in converters}
        answer = function(**arguments)
        if answer is None or isinstance(answer, int):
            return answer
        raise Exit(answer.emit())  # printed inside the command, as a `raise Exit(code)` there would be

    return invoke


def _parameters(function: Callable[..., Any]) -> tuple[list[click.Parameter], _Converters]:
    """The click parameters of `function`'s parameters (a group's: one per field), and how each
    parameter's value is made from click's values (an Enum, a list, a group's dataclass)."""
    hints = typing.get_type_hints(function, include_extras=True)
    defaults = {name: parameter.default for name, parameter in inspect.signature(function).parameters.items()}
    return _declared(function.__qualname__, hints, defaults, set())


def _declared(owner: str, hints: dict[str, Any], defaults: dict[str, Any],
              taken: set[str]) -> tuple[list[click.Parameter], _Converters]:
    """The click parameters and conversions of the names in `defaults` (in their order), each
    annotated in `hints`; `taken` holds the click names used so far (a name used twice is refused)."""
    params: list[click.Parameter] = []
    converters: _Converters = []
    for name, default in defaults.items():
        annotated = hints.get(name)
        declared = [item for item in getattr(annotated, "__metadata__", ())
                    if isinstance(item, (Option, Argument, Group))]
        if len(declared) != 1:
            raise TypeError(f"parameter {name!r} of {owner} needs Annotated[type, Option(...) or Argument(...)]")
        if isinstance(declared[0], Group):
            group_params, group_converter = _group(name, annotated.__origin__, taken)  # type: ignore[union-attr]
            params.extend(group_params)
            converters.append((name, group_converter))
            continue
        if name in taken:
            raise TypeError(f"parameter {name!r} of {owner} is declared twice (a group's field has its name)")
        taken.add(name)
        param, convert = _parameter(name, annotated.__origin__, declared[0], default)  # type: ignore[union-attr]
        params.append(param)
        converters.append((name, _taking(name, convert)))
    return params, converters


def _taking(name: str, convert: Callable[[Any], Any] | None) -> Callable[[dict[str, Any]], Any]:
    if convert is None:
        return lambda values: values[name]
    return lambda values: convert(values[name])


def _group(name: str, cls: Any, taken: set[str]) -> tuple[list[click.Parameter], Callable[[dict[str, Any]], Any]]:
    """The click options of a group's fields, and the conversion that makes its record (or dataclass)."""
    if isinstance(cls, type) and issubclass(cls, record.Record):
        defaults = {field: _MISSING if default is record.MISSING else default
                    for field, default in record.defaults(cls).items()}
    else:
        import dataclasses  # here, not at the top: --help makes no group (a dataclass's module has loaded it)

        if not (dataclasses.is_dataclass(cls) and isinstance(cls, type)):
            raise TypeError(f"parameter {name!r}: Group() annotates a record or a dataclass, got {cls!r}")
        fields = [item for item in dataclasses.fields(cls) if item.init]
        defaults = {item.name: _MISSING if item.default is dataclasses.MISSING else item.default for item in fields}
    params, converters = _declared(cls.__qualname__, typing.get_type_hints(cls, include_extras=True), defaults, taken)

    def make(values: dict[str, Any]) -> Any:
        return cls(**{field: convert(values) for field, convert in converters})

    return params, make


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
    elif isinstance(click_type, click.Choice) and isinstance(base, type) and issubclass(base, enum.Enum):
        convert = _enum_of(base)  # a choice of the Enum's values given as click_type (dpcalc.cli.errors.Choice)
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
        return Choice([str(member.value) for member in enumeration], case_sensitive=case_sensitive), _enum_of(enumeration)
    if base is int:
        minimum = declared.min if isinstance(declared, Option) else None
        return (click.INT if minimum is None else click.IntRange(min=minimum)), None
    if base is float:
        return click.FLOAT, None
    if base is str:
        return click.STRING, None
    raise TypeError(f"no click type for {base!r}: give the option a click_type")


def _enum_of(enumeration: type[enum.Enum]) -> Callable[[Any], Any]:
    return lambda value: None if value is None else enumeration(value)


def _once_converter(option: str, each: Callable[[Any], Any] | None, default: Any) -> Callable[[Any], Any]:
    """The one value of an option declared `once` (collected by click as a repeated option), or
    its default when it was not given; a usage error (exit 2) naming it when it was given twice."""

    def convert(values: Any) -> Any:
        values = tuple(values or ())
        if len(values) > 1:
            shown = " ".join(f"{option} {getattr(value, 'text', value)}" for value in values)
            raise click.BadOptionUsage(option, f"{option} was given {len(values)} times ({shown}): give it once")
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
