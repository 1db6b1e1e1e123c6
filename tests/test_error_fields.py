"""Every refusal that names an option says which, for --json's error object (docs/json.md,
"Errors"): an `InputError(...)` under dpcalc/cli whose message names an option (`--T`) or an
argument (`BUDGET: ...`) passes `option=` or `options=`, and the options it passes as written
are the ones its message names, in order. Read from the source with `ast`: no command is run."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = ROOT / "dpcalc" / "cli"

# An option as a message names it (--T, --max-eps), or an argument that opens it ("BUDGET: ...").
OPTION = re.compile(r"(?<![\w-])--[A-Za-z][A-Za-z0-9-]*")
ARGUMENT = re.compile(r"^([A-Z]+):")

# Calls whose message names an option but that rightly pass none, by "path: message start" with
# the reason. None so far.
EXEMPT: dict[str, str] = {}


@dataclass(frozen=True)
class Raised:
    """One `InputError(...)` call: where, its message's fixed text (each {field} as "\\0"), and
    the options it passes as written (None for an expression, such as a variable)."""

    where: str
    text: str
    passes_option: bool
    options: tuple[str | None, ...] | None

    @property
    def named(self) -> list[str]:
        """The options and arguments the fixed text names, in order, each once."""
        found = ARGUMENT.findall(self.text) + OPTION.findall(self.text)
        return list(dict.fromkeys(found))


def _text(node: ast.expr) -> str | None:
    """The fixed text of a message: a string, an f-string (each field as "\\0") or a sum of them;
    None for a message the call does not spell out (a variable, str(error))."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(part.value if isinstance(part, ast.Constant) else "\0" for part in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left), _text(node.right)
        return None if left is None or right is None else left + right
    return None


def _literal(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def raised(source: str, name: str) -> list[Raised]:
    """The `InputError(...)` calls of `source` (the module `name`) whose message is spelled out."""
    calls = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        callee = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
        text = _text(node.args[0])
        if callee != "InputError" or text is None:
            continue
        keywords = {keyword.arg: keyword.value for keyword in node.keywords}
        options: tuple[str | None, ...] | None = None
        if "options" in keywords:
            given = keywords["options"]
            options = tuple(_literal(item) for item in given.elts) if isinstance(given, ast.Tuple) else None
        elif "option" in keywords:
            options = (_literal(keywords["option"]),)
        calls.append(Raised(f"{name}:{node.lineno}", text, "option" in keywords or "options" in keywords, options))
    return calls


def cli_raised() -> list[Raised]:
    return [call for path in sorted(CLI.rglob("*.py"))
            for call in raised(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())]


def _exempt(call: Raised) -> bool:
    path = call.where.rsplit(":", 1)[0]
    return any(key == f"{path}: {call.text[:len(key) - len(path) - 2]}" for key in EXEMPT)


def unnamed(calls: list[Raised]) -> list[str]:
    """The calls whose message names an option but that pass neither option= nor options=."""
    return [f"{call.where}: {call.text[:80]!r}" for call in calls
            if call.named and not call.passes_option and not _exempt(call)]


def misnamed(calls: list[Raised]) -> list[str]:
    """The calls that pass options all written out that are not those their message names, in order."""
    return [f"{call.where}: passes {list(call.options)}, names {call.named}" for call in calls
            if call.options is not None and None not in call.options and list(call.options) != call.named]


def test_the_scan_reads_the_raise_sites():
    calls = cli_raised()
    assert len(calls) > 100
    assert any(call.where.startswith("dpcalc/cli/mechanism/") for call in calls)


def test_every_refusal_that_names_an_option_passes_it():
    assert unnamed(cli_raised()) == []


def test_the_options_passed_are_those_the_message_names():
    assert misnamed(cli_raised()) == []


def test_the_scan_finds_a_refusal_without_its_option():
    source = '''
raise InputError("--k is required")
raise InputError(f"--x is {x}, got {y}", option="--x")
raise InputError(f"{option} needs --n", options=(option, "--n"))
raise InputError("BUDGET: no such file")
raise InputError("no option here")
raise InputError(message)
raise InputError("--a and --b", options=("--b", "--a"))
'''
    calls = raised(source, "m.py")
    assert unnamed(calls) == ["m.py:2: '--k is required'", "m.py:5: 'BUDGET: no such file'"]
    assert misnamed(calls) == ["m.py:8: passes ['--b', '--a'], names ['--a', '--b']"]
