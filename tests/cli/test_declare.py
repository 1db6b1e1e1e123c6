"""Commands declared on their parameters (dpcalc.cli.declare) and built into click commands
without Typer: the values a command receives, its help, and what a call imports."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Annotated

import click
import pytest

from dpcalc.cli import completions
from dpcalc.cli.completions import scripts
from dpcalc.cli.declare import App, Argument, Exit, Group, Option, build
from dpcalc.cli.options import number
from dpcalc.core.validation import POSITIVE
from tests.fresh_process import loaded_by_calls


class Colour(str, Enum):
    red = "red"
    light_blue = "light-blue"


def demo_app():
    app = App()
    seen = {}

    @app.command("demo", help="A demo command.")
    def demo(
        name: Annotated[str, Argument(metavar="NAME", help="Who.")],
        colour: Annotated[Colour, Option("--colour", case_sensitive=False, help="A colour.")] = Colour.red,
        tag: Annotated[list[str] | None, Option("--tag", metavar="TEXT", help="Repeatable.")] = None,
        size: Annotated[float | None, Option("--size", metavar="FLOAT", help="Size.", click_type=number(POSITIVE))] = None,
        count: Annotated[int | None, Option("--count", metavar="INT", help="At least 1.", min=1)] = None,
        loud: Annotated[bool, Option("--loud", help="Louder.")] = False,
    ) -> None:
        seen.update(name=name, colour=colour, tag=tag, size=size, count=count, loud=loud)
        raise Exit(3)

    return build(app), seen


def invoke(*args):
    command, seen = demo_app()
    code = command.main(list(args), prog_name="demo", standalone_mode=False)
    return code, seen


def test_the_function_receives_enums_lists_and_parsed_numbers():
    code, seen = invoke("me", "--colour", "LIGHT-BLUE", "--tag", "a", "--tag", "b", "--size", "2.5", "--count", "4",
                        "--loud")
    assert code == 3
    assert seen == {"name": "me", "colour": Colour.light_blue, "tag": ["a", "b"], "size": 2.5, "count": 4, "loud": True}
    assert seen["size"].text == "2.5"  # the click type of dpcalc.cli.options, unchanged


def test_defaults_reach_the_function_as_declared():
    _, seen = invoke("me")
    assert seen == {"name": "me", "colour": Colour.red, "tag": None, "size": None, "count": None, "loud": False}


@pytest.mark.parametrize("args, message", [
    (("me", "--colour", "green"), "'green' is not one of 'red', 'light-blue'"),
    (("me", "--count", "0"), "0 is not in the range x>=1"),
    ((), "Missing"),
])
def test_bad_values_are_click_usage_errors(args, message):
    with pytest.raises(click.UsageError, match=message):
        invoke(*args)


def test_help_lists_the_argument_and_shows_defaults():
    command, _ = demo_app()
    text = command.get_help(click.Context(command, info_name="demo"))
    assert "Arguments:\n  NAME  Who.  [required]\n" in text
    assert "--colour [red|light-blue]  A colour.  [default: red]" in text
    assert "--loud " in text and "[default: False]" not in text


def test_an_undeclared_parameter_is_refused():
    app = App()

    @app.command("bad")
    def bad(value: int = 1) -> None:
        pass

    with pytest.raises(TypeError, match="needs Annotated"):
        build(app)


def test_a_call_imports_neither_typer_nor_pydantic():
    """The commands are built from click alone: any Typer release may be installed beside dpcalc."""
    calls = [["convert", "--from", "zcdp", "--rho", "0.5", "--to", "dp", "--json"]]
    assert loaded_by_calls(calls, ("typer", "pydantic")) == ([0], [])


def test_show_completion_prints_the_script_of_the_current_shell(dpcalc, monkeypatch):
    monkeypatch.setenv("SHELL", "/usr/bin/fish")
    run = dpcalc("--show-completion")
    assert run.code == 0
    assert run.stdout == (completions.DIRECTORY / "dpcalc.fish").read_text()  # `dpcalc completions show fish`


def test_install_completion_writes_where_the_shell_looks(dpcalc, monkeypatch, tmp_path):
    monkeypatch.setenv("SHELL", "/bin/bash")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    run = dpcalc("--install-completion")  # `dpcalc completions install bash`
    path = tmp_path / ".local/share/bash-completion/completions/dpcalc"
    assert run.code == 0
    assert run.stdout.startswith("Installed the bash completion: ~/.local/share/bash-completion/completions/dpcalc\n")
    assert path.read_text() == (completions.DIRECTORY / "dpcalc.bash").read_text()


def test_completion_for_an_unknown_shell_is_one_line_exit_2(dpcalc, monkeypatch):
    monkeypatch.setenv("SHELL", "/bin/tcsh")
    run = dpcalc("--show-completion")
    assert (run.code, run.stderr) == (2, "Error: SHELL: give one of bash, zsh, fish ($SHELL is /bin/tcsh, not one of "
                                         "them)\n")


@pytest.mark.slow
def test_a_tight_call_loads_no_module_it_does_not_use():
    """pathlib, traceback, fractions (with decimal) and the drawing module cost a few milliseconds of
    every call's start-up: `pld`, `risk`, `gdp` and `convert` load them only for --plot, --chart,
    --debug or a Laplace run. (A development install may import pathlib before dpcalc: only what
    dpcalc's own imports add is checked.)"""
    run = ["--p", "0.004", "--sigma", "1.1", "--T", "100", "--json"]
    calls = [["pld", *run], ["risk", *run], ["gdp", *run, "--no-tight"],
             ["convert", "--from", "zcdp", "--rho", "0.5", "--to", "dp", "--json"]]
    names = ("pathlib", "traceback", "fractions", "decimal", "dpcalc.cli.figures")
    assert loaded_by_calls(calls, names) == ([0, 0, 0, 0], [])


def test_a_list_argument_takes_one_or_more_values():
    app = App()
    seen = {}

    @app.command("many", help="Several files.")
    def many(files: Annotated[list[str], Argument(metavar="FILE...", help="One or more.")]) -> None:
        seen["files"] = files

    command = build(app)
    command.main(["a", "b", "c"], prog_name="many", standalone_mode=False)
    assert seen == {"files": ["a", "b", "c"]}
    command.main(["a"], prog_name="many", standalone_mode=False)
    assert seen == {"files": ["a"]}
    with pytest.raises(click.MissingParameter) as missing:
        command.main([], prog_name="many", standalone_mode=False)
    assert missing.value.format_message() == "Missing argument 'FILE...'."
    spec = scripts._argument_spec(command.params[0])
    assert spec.many and spec.pattern is None


@dataclass(frozen=True)
class Shape:
    width: Annotated[float | None, Option("--width", metavar="FLOAT", help="Width.", click_type=number(POSITIVE))] = None
    label: Annotated[str, Option("--label", help="Label.")] = "box"
    budget: Annotated[float | None, Option("--budget", metavar="FLOAT", help="Once.", once=True,
                                           click_type=number(POSITIVE))] = None


@dataclass(frozen=True)
class Framed(Shape):
    framed: Annotated[bool, Option("--framed", help="Framed.")] = False


@dataclass(frozen=True)
class Printed:
    report: str

    def emit(self) -> int:
        click.echo(self.report)
        return 4


def group_app():
    app = App()
    seen = {}

    @app.command("groups", help="A command with a group.")
    def groups(
        first: Annotated[int, Option("--first", help="Before the group.")] = 1,
        shape: Annotated[Framed, Group()] = Framed(),
        last: Annotated[bool, Option("--last", help="After the group.")] = False,
    ) -> Printed:
        seen.update(first=first, shape=shape, last=last)
        return Printed(f"{shape.label} {shape.width}")

    return build(app), seen


def test_a_group_is_one_option_per_field_and_the_function_receives_its_instance():
    command, seen = group_app()
    code = command.main(["--width", "2.5", "--framed", "--last"], prog_name="groups", standalone_mode=False)
    assert code == 4  # the returned answer was printed and gave the exit code
    assert seen == {"first": 1, "shape": Framed(width=2.5, label="box", budget=None, framed=True), "last": True}
    assert seen["shape"].width.text == "2.5"


def test_a_group_takes_its_defaults():
    command, seen = group_app()
    command.main([], prog_name="groups", standalone_mode=False)
    assert seen["shape"] == Framed()


def test_a_group_lists_its_fields_in_order_where_the_parameter_stands():
    command, _ = group_app()
    text = command.get_help(click.Context(command, info_name="groups"))
    order = [text.index(flag) for flag in ("--first", "--width", "--label", "--budget", "--framed", "--last")]
    assert order == sorted(order)
    assert "--label TEXT" in text and "[default: box]" in text


def test_once_holds_inside_a_group():
    command, _ = group_app()
    with pytest.raises(click.UsageError, match=r"--budget was given 2 times \(--budget 1 --budget 2\): give it once"):
        command.main(["--budget", "1", "--budget", "2"], prog_name="groups", standalone_mode=False)


def test_a_group_field_named_as_a_parameter_is_refused():
    app = App()

    @app.command("clash")
    def clash(label: Annotated[str, Option("--name")] = "", shape: Annotated[Shape, Group()] = Shape()) -> None:
        pass

    with pytest.raises(TypeError, match="'label' of Shape is declared twice"):
        build(app)
