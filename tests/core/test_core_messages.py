"""Core messages name no command-line flags: the command line maps the core's typed errors and
warnings to its options (CONTRIBUTING.md, "Architecture"), so that the core reads the same
from Python as from any command.

The check reads the string literals of dpcalc/core (f-string pieces included), leaving out
docstrings, which may describe how a command uses a function.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "dpcalc" / "core"
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*")


def _flags(source: str) -> list[tuple[int, str]]:
    """(line, flag) for each flag named in a string literal of `source` that is not a docstring."""
    tree = ast.parse(source)
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return [(node.lineno, flag) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
            for flag in FLAG.findall(node.value)]


def test_core_string_literals_name_no_flags():
    offending = [f"{path.relative_to(CORE)}:{line}: {flag}"
                 for path in sorted(CORE.rglob("*.py"))
                 for line, flag in _flags(path.read_text(encoding="utf-8"))]
    assert not offending, "name the parameter and let the command line map it:\n" + "\n".join(offending)


def test_the_check_sees_a_flag_outside_docstrings():
    source = 'def f():\n    """Uses --orders."""\n    raise ValueError(f"a wider grid (--orders) at {1}")\n'
    assert _flags(source) == [(3, "--orders")]
