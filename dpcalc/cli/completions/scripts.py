"""The completion scripts for bash, zsh and fish, generated from the dpcalc command tree.

Read from the same click objects the command line runs (nested groups such as `dpcalc
mechanism` included), so a new option or subcommand appears in them as soon as they are
regenerated (`python -m dpcalc.cli.completions`, which writes the repository's completions/
folder; `--check` exits 1 while it is out of date).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

import click

from dpcalc.cli.completions import FILES, HEADER

# The source of the scripts: the repository's top-level completions/ folder (dpcalc/completions/
# in the wheel is the same files).
SOURCE = Path(__file__).resolve().parents[3] / "completions"

# Options and arguments whose value is a path: completed with file names.
_PATH_METAVARS = {"FILE", "PATH", "BUDGET"}
# Paths of a known kind: only the files matching the pattern (and directories) are offered.
_FILE_PATTERNS = {"BUDGET": "*.toml"}


@dataclass(frozen=True)
class OptionSpec:
    names: tuple[str, ...]
    help: str
    takes_value: bool
    choices: tuple[str, ...] = ()
    is_path: bool = False


@dataclass(frozen=True)
class ArgumentSpec:
    """A command's positional argument: one of `choices`, or else a file (matching `pattern`);
    `many`: one or more of them (`dpcalc check BUDGET...`)."""

    choices: tuple[str, ...] = ()
    pattern: str | None = None  # e.g. "*.toml"; None: any file
    many: bool = False


@dataclass(frozen=True)
class CommandSpec:
    """A command, or a group with `subcommands` (the root `dpcalc`, `dpcalc mechanism`)."""

    name: str
    help: str
    options: tuple[OptionSpec, ...]
    argument: ArgumentSpec | None = None
    subcommands: tuple[CommandSpec, ...] = ()
    is_group: bool = False


def _first_sentence(text: str | None) -> str:
    """Up to the first '.' or ';' followed by a space, outside parentheses."""
    text = " ".join((text or "").split())
    depth = 0
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth <= 0 and char in ".;" and text[index + 1:index + 2] == " ":
            text = text[:index]
            break
    return text.rstrip(".;")


def _option_spec(param: click.Option) -> OptionSpec:
    choices = tuple(param.type.choices) if isinstance(param.type, click.Choice) else ()
    metavar = (param.metavar or "").upper()
    is_path = isinstance(param.type, (click.Path, click.File)) or metavar in _PATH_METAVARS
    return OptionSpec(
        names=tuple(param.opts) + tuple(param.secondary_opts),
        help=_first_sentence(param.help),
        takes_value=not param.is_flag and param.nargs != 0,
        choices=tuple(str(choice) for choice in choices),
        is_path=is_path,
    )


def _argument_spec(param: click.Argument) -> ArgumentSpec:
    if isinstance(param.type, click.Choice):
        return ArgumentSpec(choices=tuple(str(choice) for choice in param.type.choices))
    metavar = (param.metavar or param.name or "").upper().removesuffix("...")
    return ArgumentSpec(pattern=_FILE_PATTERNS.get(metavar), many=param.nargs == -1)


def _command_spec(command: click.Command, context: click.Context, name: str, summary: str) -> CommandSpec:
    """`command` and, for a group, every subcommand in it, however deep (loaded as when used)."""
    params = command.get_params(context)
    arguments = [_argument_spec(p) for p in params if isinstance(p, click.Argument)]
    subcommands = []
    if isinstance(command, click.Group):
        table: dict[str, tuple[str, str]] = getattr(command, "table", {})  # a LazyGroup's summaries
        for sub_name in command.list_commands(context):
            sub = command.get_command(context, sub_name)
            assert sub is not None, f"{sub_name} is listed by {name}, so it loads"
            sub_context = click.Context(sub, info_name=sub_name, parent=context, **sub.context_settings)
            sub_summary = table[sub_name][1] if sub_name in table else sub.get_short_help_str(limit=200)
            subcommands.append(_command_spec(sub, sub_context, sub_name, sub_summary))
    return CommandSpec(
        name=name,
        help=summary.rstrip("."),
        options=tuple(_option_spec(p) for p in params if isinstance(p, click.Option)),
        argument=arguments[0] if arguments else None,
        subcommands=tuple(subcommands),
        is_group=isinstance(command, click.Group),
    )


def command_tree() -> CommandSpec:
    """The root `dpcalc`: its options and every (nested) subcommand's, read from the running app."""
    from dpcalc.cli.app import app
    from dpcalc.cli.declare import build

    group = build(app)
    context = click.Context(group, info_name="dpcalc", **group.context_settings)
    return _command_spec(group, context, "dpcalc", "")


def _walk(command: CommandSpec, path: str = "dpcalc") -> list[tuple[str, CommandSpec]]:
    """(path, command) for the command and everything under it: "dpcalc", "dpcalc/mechanism", ..."""
    nodes = [(path, command)]
    for sub in command.subcommands:
        nodes += _walk(sub, f"{path}/{sub.name}")
    return nodes


def _words(options: tuple[OptionSpec, ...]) -> str:
    return " ".join(name for option in options for name in option.names)


def bash_script(root: CommandSpec) -> str:
    nodes = _walk(root)
    steps = "|".join(path for path, _ in nodes[1:])
    lines = [
        f"# bash completion for dpcalc. {HEADER}",
        "# Install: `dpcalc completions install bash` (copies it to",
        "# ${XDG_DATA_HOME:-~/.local/share}/bash-completion/completions/dpcalc), or source it from ~/.bashrc",
        "_dpcalc() {",
        '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" path=dpcalc word',
        "    # the (sub)command being completed: dpcalc, dpcalc/gdp, dpcalc/mechanism/NAME, ...",
        '    for word in "${COMP_WORDS[@]:1:COMP_CWORD-1}"; do',
        '        case "$path/$word" in',
        f'            {steps}) path="$path/$word" ;;',
        "        esac",
        "    done",
        '    case "$path" in',
    ]
    for path, command in nodes:
        lines.append(f"        {path})")
        values = []
        for option in command.options:
            if option.choices:
                values.append(
                    f"                {'|'.join(option.names)}) "
                    f'COMPREPLY=($(compgen -W "{" ".join(option.choices)}" -- "$cur")); return ;;'
                )
            elif option.is_path:
                values.append(f'                {"|".join(option.names)}) COMPREPLY=($(compgen -f -- "$cur")); return ;;')
            elif option.takes_value:
                values.append(f"                {'|'.join(option.names)}) return ;;")
        if values:
            lines += ['            case "$prev" in', *values, "            esac"]
        lines.append('            if [[ "$cur" == -* ]]; then')
        lines.append(f'                COMPREPLY=($(compgen -W "{_words(command.options)}" -- "$cur"))')
        if command.is_group:
            names = " ".join(sub.name for sub in command.subcommands)
            lines += ["            else", f'                COMPREPLY=($(compgen -W "{names}" -- "$cur"))']
        elif command.argument is not None and command.argument.choices:
            lines += ["            else",
                      f'                COMPREPLY=($(compgen -W "{" ".join(command.argument.choices)}" -- "$cur"))']
        elif command.argument is not None and command.argument.pattern:
            lines += [
                "            else",
                "                compopt -o filenames 2>/dev/null",
                f"                COMPREPLY=($(compgen -f -X '!{command.argument.pattern}' -- \"$cur\")"
                ' $(compgen -d -- "$cur"))',
            ]
        elif command.argument is not None:
            lines += ["            else", '                COMPREPLY=($(compgen -f -- "$cur"))']
        lines.append("            fi ;;")
    lines += ["    esac", "}", "complete -o default -F _dpcalc dpcalc", ""]
    return "\n".join(lines)


def _zsh_text(text: str) -> str:
    """A description inside '...' for _arguments: quotes dropped, [ ] : escaped with a backslash."""
    text = re.sub(r"['\\`$\"]", "", text)
    return re.sub(r"([\[\]:])", r"\\\1", text)


def _unquoted(text: str) -> str:
    return re.sub(r"['`$]", "", text)


def _zsh_option(option: OptionSpec) -> str:
    if option.takes_value:
        if option.choices:
            action = f":{option.names[0].lstrip('-')}:({' '.join(option.choices)})"
        elif option.is_path:
            action = ":file:_files"
        else:
            action = ":value: "
    else:
        action = ""
    spec = f"[{_zsh_text(option.help)}]{action}"
    if len(option.names) == 1:
        return f"'{option.names[0]}{spec}'"
    group = " ".join(option.names)
    return f"'({group})'{{{','.join(option.names)}}}'{spec}'"


def _zsh_argument(argument: ArgumentSpec) -> str:
    if argument.choices:
        return f"'1:value:({' '.join(argument.choices)})'"
    if argument.pattern:
        return f"'{'*' if argument.many else '1'}:file:_files -g \"{argument.pattern}\"'"
    return "'1:file:_files'"


def _zsh_function(path: str) -> str:
    return "_" + re.sub(r"[^A-Za-z0-9]", "_", path)


def zsh_script(root: CommandSpec) -> str:
    lines = [
        "#compdef dpcalc",
        f"# zsh completion for dpcalc. {HEADER}",
        "# Install: `dpcalc completions install zsh` (copies it as _dpcalc into ~/.zfunc, which must",
        "# be on $fpath: fpath=(~/.zfunc $fpath) before compinit in ~/.zshrc).",
    ]
    # One function a group: _dpcalc, _dpcalc_mechanism, ...; `*::` hands each the words from
    # its own name on, so a nested group completes as the root does.
    for path, group in _walk(root):
        if not group.is_group:
            continue
        lines += [f"{_zsh_function(path)}() {{", "    local -a commands", "    commands=("]
        # _describe splits 'name:description' at the first colon; later colons are plain text.
        lines += [f"        '{sub.name}:{_unquoted(sub.help)}'" for sub in group.subcommands]
        lines += ["    )", "    local context state line", "    _arguments -C \\"]
        lines += [f"        {_zsh_option(option)} \\" for option in group.options]
        lines += [
            "        '1: :->command' \\",
            "        '*:: :->arguments'",
            "    case $state in",
            "        command) _describe 'command' commands ;;",
            "        arguments)",
            "            case $words[1] in",
        ]
        for sub in group.subcommands:
            lines.append(f"                {sub.name})")
            if sub.is_group:
                lines.append(f"                    {_zsh_function(f'{path}/{sub.name}')} ;;")
                continue
            specs = [_zsh_option(option) for option in sub.options]
            if sub.argument is not None:
                specs.append(_zsh_argument(sub.argument))
            lines.append("                    _arguments \\")
            lines += [f"                        {spec} \\" for spec in specs[:-1]]
            lines.append(f"                        {specs[-1]} ;;")
        lines += ["            esac ;;", "    esac", "}"]
    lines += ['_dpcalc "$@"', ""]
    return "\n".join(lines)


def _fish_text(text: str) -> str:
    return text.replace("\\", "").replace("'", "")


def fish_script(root: CommandSpec) -> str:
    nodes = _walk(root)
    lines = [
        f"# fish completion for dpcalc. {HEADER}",
        "# Install: `dpcalc completions install fish` (copies it to ~/.config/fish/completions/dpcalc.fish)",
        "complete -c dpcalc -f",
        "# True when the words before the cursor name the (sub)command $argv[1]: dpcalc, dpcalc/gdp, ...",
        "function __dpcalc_at",
        "    set -l path dpcalc",
        "    for word in (commandline -opc)[2..-1]",
        '        switch "$path/$word"',
        f"            case {' '.join(path for path, _ in nodes[1:])}",
        '                set path "$path/$word"',
        "        end",
        "    end",
        '    test "$path" = "$argv[1]"',
        "end",
    ]

    def option_line(condition: str, option: OptionSpec) -> str:
        parts = [f"complete -c dpcalc -n '{condition}'"]
        for name in option.names:
            parts.append(f"-l {name[2:]}" if name.startswith("--") else f"-s {name[1:]}")
        if option.choices:
            parts.append(f"-x -a '{' '.join(option.choices)}'")
        elif option.is_path:
            parts.append("-r -F")
        elif option.takes_value:
            parts.append("-x")
        parts.append(f"-d '{_fish_text(option.help)}'")
        return " ".join(parts)

    for path, command in nodes:
        condition = f"__dpcalc_at {path}"
        lines += [option_line(condition, option) for option in command.options]
        for sub in command.subcommands:
            lines.append(f"complete -c dpcalc -n '{condition}' -a {sub.name} -d '{_fish_text(sub.help)}'")
        argument = command.argument
        if argument is not None and argument.choices:
            lines.append(f"complete -c dpcalc -n '{condition}' -a '{' '.join(argument.choices)}'")
        elif argument is not None and argument.pattern:
            # fish's helper lists the matching files, then directories, then every other file:
            # keep the first two only
            suffix = argument.pattern.lstrip("*")
            keep = f'"^.*(?:{re.escape(suffix)}|/)\\\\$"'
            lines.append(f"complete -c dpcalc -n '{condition}' -k -a '(__fish_complete_suffix {suffix} | string match -r -- {keep})'")
        elif argument is not None:
            lines.append(f"complete -c dpcalc -n '{condition}' -F")
    lines.append("")
    return "\n".join(lines)


def scripts() -> dict[str, str]:
    """File name -> script text, for every shell."""
    root = command_tree()
    return {FILES["bash"]: bash_script(root), FILES["zsh"]: zsh_script(root), FILES["fish"]: fish_script(root)}


def main(argv: list[str] | None = None) -> int:
    """`python -m dpcalc.cli.completions [--check] [DIRECTORY]` (default: the repository's completions/)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m dpcalc.cli.completions",
        description="Write the bash, zsh and fish completion scripts generated from the dpcalc app.",
    )
    parser.add_argument("--check", action="store_true", help="only report scripts that are out of date (exit 1)")
    parser.add_argument("directory", nargs="?", type=Path, default=SOURCE,
                        help="where the scripts are (default: completions/ of this checkout)")
    options = parser.parse_args(argv)
    check, directory = options.check, options.directory
    stale = []
    for name, text in scripts().items():
        path = directory / name
        if check:
            if not path.exists() or path.read_text() != text:
                stale.append(str(path))
        else:
            directory.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    if stale:
        sys.stderr.write(
            "out of date: " + ", ".join(stale) + "; regenerate with `python -m dpcalc.cli.completions`\n"
        )
        return 1
    return 0
