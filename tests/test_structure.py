"""The package's shape (CONTRIBUTING.md): no module of dpcalc/ over 450 lines, no import cycle
among its modules (tools/import_cycles.py).

dpcalc/cli and dpcalc/core/pld are being restructured: the checks of the whole package are
marked xfail until that is done (delete the markers then), and meanwhile the rest of the package
is held to them strictly.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 450
# Being restructured: the modules over MAX_LINES and the import cycles there today.
RESTRUCTURED = ("dpcalc/cli", "dpcalc/core/pld")
LONG_TODAY = ("dpcalc/cli/app.py", "dpcalc/cli/calibrate.py", "dpcalc/cli/completions.py", "dpcalc/cli/convert.py",
              "dpcalc/cli/gdp.py", "dpcalc/cli/pld.py", "dpcalc/core/pld/discretise.py", "dpcalc/core/pld/normal.py",
              "dpcalc/core/pld/pairs/allocation.py", "dpcalc/core/pld/pairs/lognormal_lattice.py",
              "dpcalc/core/pld/plan.py", "dpcalc/core/pld/truncation.py")
CYCLES_TODAY = ("dpcalc/cli/{app,completions}.py", "dpcalc/cli/{figures,options,output,request,sweeps}.py",
                "dpcalc/core/pld/{accountant,api,fallback,model,plan,power,privacy_profile,truncation}.py")
BEING_RESTRUCTURED = "dpcalc/cli and dpcalc/core/pld are being restructured"


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


def _restructured(name: str) -> bool:
    """Whether a module (a path or a dotted name) lies in a part being restructured."""
    path = name.replace(".", "/") if not name.endswith(".py") else name
    return any(path == part or path.startswith(part + "/") for part in RESTRUCTURED)


@pytest.mark.xfail(strict=False, reason=f"{BEING_RESTRUCTURED}: over {MAX_LINES} lines: {', '.join(LONG_TODAY)}")
def test_no_module_is_over_450_lines():
    assert long_modules() == {}


@pytest.mark.xfail(strict=False, reason=f"{BEING_RESTRUCTURED}: import cycles among {'; '.join(CYCLES_TODAY)}")
def test_no_import_cycle():
    assert import_cycles() == []


def test_no_module_outside_the_restructuring_is_over_450_lines():
    assert {path: lines for path, lines in long_modules().items() if not _restructured(path)} == {}


def test_no_import_cycle_reaches_outside_the_restructuring():
    assert [cycle for cycle in import_cycles() if not all(_restructured(module) for module in cycle)] == []


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
