"""The package's shape (CONTRIBUTING.md): no module of dpcalc/ over 450 lines, no import cycle
among its modules (tools/import_cycles.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 450
def _import_cycles():
    spec = importlib.util.spec_from_file_location("import_cycles", ROOT / "tools" / "import_cycles.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def long_modules() -> dict[str, int]:
    """Every module of dpcalc/ over MAX_LINES lines, by path, with its number of lines."""
    lengths = {path.relative_to(ROOT).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
               for path in sorted((ROOT / "dpcalc").rglob("*.py"))}
    return {path: lines for path, lines in lengths.items() if lines > MAX_LINES}


def import_cycles() -> list[list[str]]:
    """The import cycles among dpcalc's modules, each as its modules' dotted names."""
    cycles: list[list[str]] = _import_cycles().import_cycles(ROOT)
    return cycles


def test_no_module_is_over_450_lines():
    assert long_modules() == {}


def test_no_import_cycle():
    assert import_cycles() == []


def test_the_cycle_finder_finds_a_cycle(tmp_path):
    # a package of three modules, two of them importing each other (one inside a function, one
    # by a relative import): one cycle of two, the third module outside it
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "first.py").write_text("def f():\n    from pkg import second\n")
    (package / "second.py").write_text("from .first import f\nfrom pkg import third\n")
    (package / "third.py").write_text("import math\n")
    assert _import_cycles().import_cycles(tmp_path, "pkg") == [["pkg.first", "pkg.second"]]
