#!/usr/bin/env python3
"""Find import cycles among dpcalc's modules: the strongly connected components of the import graph.

    python tools/import_cycles.py          # list the cycles; exit 1 when there is one, 0 when none

The graph is read from the source with `ast`, nothing is imported: an edge runs from a module to
every dpcalc module it imports, wherever the import statement stands (at the top, inside a
function, under `if TYPE_CHECKING:`), since each is a dependency a reader has to follow. `from
package import name` is an edge to the submodule `package.name` when that is a module, else to
the package. Importing a submodule also runs its parent packages' `__init__`, but those implied
edges are left out: with them every package that hands on its modules' names would be a cycle.
A cycle is a component of two or more modules (or a module that imports itself), printed as
its modules in order, with the imports that join them.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "dpcalc"


def module_files(root: Path = ROOT, package: str = PACKAGE) -> dict[str, Path]:
    """Every module of `package` under `root`, by dotted name (a package by its `__init__.py`)."""
    modules = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> Iterator[str]:
    """The dotted names an import statement may refer to (modules or names in modules)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
        return
    if node.level:  # relative: from the module's own package, one level up per further dot
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    yield source
    for alias in node.names:
        yield f"{source}.{alias.name}"


def import_graph(root: Path = ROOT, package: str = PACKAGE) -> dict[str, set[str]]:
    """Each module of `package` and the modules of `package` it imports."""
    files = module_files(root, package)
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        targets: set[str] = set()
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            names = list(_imported(node, module, path.name == "__init__.py"))
            if isinstance(node, ast.ImportFrom):
                source, *members = names
                submodules = [name for name in members if name in files]
                # `from package import module` names the module; any other name lives in the source
                targets.update(submodules)
                if len(submodules) < len(members) and source in files:
                    targets.add(source)
            else:
                targets.update(name for name in names if name in files)
        graph[module] = targets
    return graph


def strongly_connected(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of `graph` (Tarjan's algorithm, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph.get(successor, ())))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def import_cycles(root: Path = ROOT, package: str = PACKAGE) -> list[list[str]]:
    """The import cycles of `package`: its components of two or more modules, and any module
    that imports itself, in order of their first module."""
    graph = import_graph(root, package)
    cycles = [component for component in strongly_connected(graph)
              if len(component) > 1 or component[0] in graph[component[0]]]
    return sorted(cycles)


def describe(cycle: list[str], graph: Mapping[str, set[str]]) -> str:
    """A cycle as text: its modules, then each import between two of them."""
    members = set(cycle)
    lines = [f"{len(cycle)} modules: {', '.join(cycle)}"]
    lines += [f"    {module} imports {target}"
              for module in cycle for target in sorted(graph[module] & members)]
    return "\n".join(lines)


def main() -> int:
    graph = import_graph()
    cycles = import_cycles()
    if not cycles:
        print(f"no import cycles among the {len(graph)} modules of {PACKAGE}")
        return 0
    print(f"{len(cycles)} import cycle{'s' if len(cycles) > 1 else ''} among the modules of {PACKAGE}:")
    for cycle in cycles:
        print(describe(cycle, graph))
    return 1


if __name__ == "__main__":
    sys.exit(main())
