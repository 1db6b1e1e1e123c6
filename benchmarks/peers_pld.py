"""`dpcalc pld` against its peers, as whole processes on the same machine in the same run.

    python benchmarks/peers_pld.py --opake-python /path/to/python3.13   # or DPCALC_OPAKE_PYTHON
    python benchmarks/peers_pld.py --runs 5 --only corner --no-prv

Every case is one Poisson-subsampled Gaussian run (p, sigma, T) at delta 1e-5, computed by
  * `dpcalc pld --p P --sigma S --T T --json` (the console script next to this Python),
  * opake-accounting, one process: benchmarks/opake_epsilon.py in an interpreter where opake
    imports (its release 0.16.1 needs Python 3.13; say which with --opake-python),
  * prv_accountant's command line `compute-dp-epsilon` if it is installed next to this Python
    (it also runs its RDP accountant, and prints three significant digits).
Each process runs --runs times, interleaved, and the median wall time is reported. Checks:
opake's epsilon must not be below dpcalc's certified lower bound (the bound is certified, so a
figure below it is a bug in one of the two; `NO`), and whether dpcalc's upper bound is at most
opake's (where dpcalc is the tighter). The table is also written, tab-separated, to --out with a
header naming the machine, the versions and the date.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

from bench import CHILD_ENVIRONMENT, machine

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
OPAKE_SCRIPT = HERE / "opake_epsilon.py"


@dataclass(frozen=True)
class Case:
    label: str
    p: float
    sigma: float
    steps: int


DESIGN_CARD = Case("design card", 0.004, 1.1, 10_000)
CASES = [
    DESIGN_CARD,
    *(Case("grid", p, sigma, steps) for p in (1e-4, 1e-3, 1e-2) for sigma in (0.6, 1.1, 5.0)
      for steps in (1_000, 100_000, 1_000_000)),
    Case("corner", 1e-5, 0.5, 10**7),
    Case("corner", 1e-4, 0.8, 10**6),
    Case("corner", 0.001, 0.6, 10**5),
    Case("design card, T 1e9", 0.004, 1.1, 10**9),
    Case("design card, T 1e12", 0.004, 1.1, 10**12),
]


@dataclass(frozen=True)
class Figures:
    """What one tool reported for one case; `error` says why a figure is missing."""

    lower: float | None = None
    estimate: float | None = None
    upper: float | None = None
    note: str = ""
    error: str = ""


@dataclass(frozen=True)
class Tool:
    name: str
    argv: Callable[[Case, float], list[str]]
    read: Callable[[str], Figures]  # the process's stdout -> its figures


def _number(value: object) -> float:
    return math.inf if value == "inf" else float(value)  # type: ignore[arg-type]  # JSON numbers or "inf"


def _read_dpcalc(stdout: str) -> Figures:
    document = json.loads(stdout)
    result = document["result"]
    return Figures(lower=_number(result["epsilon_lower"]), upper=_number(result["epsilon_upper"]),
                   note=f"{len(document['warnings'])} warnings")


def _read_opake(stdout: str) -> Figures:
    document = json.loads(stdout)
    if "error" in document:
        return Figures(error=document["error"])
    return Figures(estimate=_number(document["epsilon"]), note=document["summary"])


def _read_prv(stdout: str) -> Figures:
    for line in stdout.splitlines():
        if line.startswith("PRV Accountant:"):
            if "n/a" in line:
                return Figures(error="n/a")
            # "PRV Accountant:\t\teps_lower =   1.74 eps_estimate =   1.84, eps_upper =   1.94 "
            values = [float(part.split("=")[1].strip(" ,")) for part in line.split("eps_")[1:]]
            return Figures(lower=values[0], estimate=values[1], upper=values[2])
    raise ValueError("no PRV line in its output")


def _dpcalc_tool() -> Tool:
    dpcalc = str(BIN / "dpcalc")
    return Tool("dpcalc", lambda case, delta: [
        dpcalc, "pld", "--p", repr(case.p), "--sigma", repr(case.sigma), "--T", str(case.steps),
        "--delta", repr(delta), "--json"], _read_dpcalc)


def _opake_tool(python: str) -> Tool:
    # -I: neither the script's folder nor the caller's environment on the path of the peer's interpreter.
    return Tool("opake", lambda case, delta: [
        python, "-I", str(OPAKE_SCRIPT), repr(case.p), repr(case.sigma), str(case.steps), repr(delta)], _read_opake)


def _prv_tool(command: Path) -> Tool:
    return Tool("prv", lambda case, delta: [
        str(command), "-p", repr(case.p), "-s", repr(case.sigma), "-i", str(case.steps), "-d", repr(delta)], _read_prv)


@dataclass(frozen=True)
class Timed:
    seconds: float | None  # the median over the runs that finished
    figures: Figures


def _run(argv: list[str], timeout: float) -> tuple[float, subprocess.CompletedProcess[str] | None]:
    start = time.perf_counter()
    try:
        completed = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=CHILD_ENVIRONMENT)
    except subprocess.TimeoutExpired:
        return time.perf_counter() - start, None
    return time.perf_counter() - start, completed


def _figures(tool: Tool, completed: subprocess.CompletedProcess[str] | None, timeout: float) -> Figures:
    if completed is None:
        return Figures(error=f"timed out after {timeout:g} s")
    try:
        return tool.read(completed.stdout)
    except (ValueError, KeyError, IndexError):
        last = (completed.stderr.strip().splitlines() or ["no output"])[-1]
        return Figures(error=f"exit {completed.returncode}: {last[:160]}")


def measure(case: Case, tools: list[Tool], runs: int, delta: float, timeout: float) -> dict[str, Timed]:
    """Each tool's median wall time over `runs` interleaved runs, and its figures from the first run."""
    times: dict[str, list[float]] = {tool.name: [] for tool in tools}
    figures: dict[str, Figures] = {}
    for _ in range(runs):
        for tool in tools:
            if tool.name in figures and figures[tool.name].error.startswith("timed out"):
                continue  # one time-out is enough
            seconds, completed = _run(tool.argv(case, delta), timeout)
            figures.setdefault(tool.name, _figures(tool, completed, timeout))
            if completed is not None:
                times[tool.name].append(seconds)
    return {tool.name: Timed(statistics.median(times[tool.name]) if times[tool.name] else None, figures[tool.name])
            for tool in tools}


def _printed_half_unit(value: float) -> float:
    """Half a unit in the last of the three significant digits prv's command line prints."""
    return 0.5 * 10.0 ** (math.floor(math.log10(abs(value))) - 2) if value else 0.0


def _verdict(condition: bool | None, no: str = "NO") -> str:
    return "-" if condition is None else ("yes" if condition else no)


COLUMNS = ["case", "p", "sigma", "T", "dpcalc_s", "opake_s", "dpcalc/opake", "dpcalc_lower", "dpcalc_upper",
           "dpcalc_notes", "opake_eps", "opake>=lower", "upper<=opake", "prv_s", "prv_lower", "prv_estimate",
           "prv_upper", "prv_upper>=lower", "errors"]


def _num(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def row(case: Case, timed: dict[str, Timed]) -> list[str]:
    """One line of the table: COLUMNS."""
    empty = Timed(None, Figures())
    ours, opake, prv = (timed.get(name, empty) for name in ("dpcalc", "opake", "prv"))
    lower, upper, eps = ours.figures.lower, ours.figures.upper, opake.figures.estimate
    ratio = None  # only where both computed the case
    if ours.seconds and opake.seconds and not (ours.figures.error or opake.figures.error):
        ratio = ours.seconds / opake.seconds
    opake_ok = None if lower is None or eps is None else eps >= lower
    tighter = None if upper is None or eps is None else upper <= eps
    prv_upper = prv.figures.upper
    prv_ok = None if prv_upper is None or lower is None else prv_upper + _printed_half_unit(prv_upper) >= lower
    errors = "; ".join(f"{name}: {t.figures.error}" for name, t in (("dpcalc", ours), ("opake", opake), ("prv", prv))
                       if t.figures.error)
    steps = f"{case.steps:.0e}" if case.steps >= 10**6 else str(case.steps)
    return [case.label, f"{case.p:g}", f"{case.sigma:g}", steps, _num(ours.seconds, ".3f"), _num(opake.seconds, ".3f"),
            _num(ratio, ".2f"), _num(lower, ".10g"), _num(upper, ".10g"), ours.figures.note, _num(eps, ".10g"),
            _verdict(opake_ok), _verdict(tighter, "no"), _num(prv.seconds, ".3f"), _num(prv.figures.lower, "g"),
            _num(prv.figures.estimate, "g"), _num(prv_upper, "g"), _verdict(prv_ok), errors]


def aligned(table: list[list[str]]) -> str:
    """The table with its columns padded to a common width (the last column, errors, left free)."""
    widths = [max(len(line[k]) for line in table) for k in range(len(table[0]) - 1)]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(line, widths)) + "  " + line[-1]
                     for line in table)


def _opake_identity(python: str | None) -> tuple[str, bool]:
    """A line for the header saying which opake ran, and whether it imports at all."""
    if not python:
        return "opake: no interpreter given (--opake-python or DPCALC_OPAKE_PYTHON), its columns are empty", False
    probe = "import platform, importlib.metadata as m; import opake.api.accounting.core; " \
            "print(m.version('opake-accounting'), platform.python_version())"
    try:
        completed = subprocess.run([python, "-I", "-c", probe], capture_output=True, text=True, timeout=120)
    except OSError as error:
        return f"opake: cannot run {python} ({error}), its columns are empty", False
    if completed.returncode != 0:
        last = (completed.stderr.strip().splitlines() or ["no output"])[-1]
        return f"opake: opake-accounting does not import in {python} ({last}), its columns are empty", False
    version, python_version = completed.stdout.split()
    return f"opake-accounting {version} on Python {python_version}", True


def header(opake_line: str, prv: bool, runs: int, delta: float) -> str:
    git = subprocess.run(["git", "-C", str(HERE), "describe", "--always", "--dirty"], capture_output=True, text=True)
    tree = git.stdout.strip() or "not a git checkout"
    load = "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    prv_line = f"prv_accountant {metadata.version('prv-accountant')}" if prv else "prv_accountant: left out"
    return (f"# {datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}; {platform.machine()}, {machine()}, load average "
            f"{load}; dpcalc {metadata.version('dpcalc-cli')} (tree {tree}); {opake_line}; {prv_line}; "
            f"{runs} runs per case, median wall seconds of the whole process; delta {delta:g}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per case and tool (the median is reported)")
    parser.add_argument("--opake-python", default=os.environ.get("DPCALC_OPAKE_PYTHON"),
                        help="a Python where opake-accounting imports (default: $DPCALC_OPAKE_PYTHON)")
    parser.add_argument("--no-prv", action="store_true", help="leave prv_accountant's command line out")
    parser.add_argument("--only", default="", help="only cases whose label contains this text")
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds before a process is stopped")
    parser.add_argument("--out", default=str(HERE / "peers_pld.tsv"), help="the tab-separated table ('' for none)")
    args = parser.parse_args()
    cases = [case for case in CASES if args.only in case.label]
    if not cases:
        parser.error(f"no case matches --only {args.only!r}")
    opake_line, opake_ok = _opake_identity(args.opake_python)
    print(opake_line, file=sys.stderr if not opake_ok else sys.stdout)
    tools = [_dpcalc_tool()] + ([_opake_tool(args.opake_python)] if opake_ok else [])
    prv_command = BIN / "compute-dp-epsilon"
    use_prv = not args.no_prv and prv_command.exists()
    tools += [_prv_tool(prv_command)] if use_prv else []
    first = header(opake_line, use_prv, args.runs, args.delta)
    print(first)
    for tool in tools:  # warm the file cache once, not counted
        _run(tool.argv(DESIGN_CARD, args.delta), args.timeout)
    table = [COLUMNS]
    for number, case in enumerate(cases, start=1):
        table.append(row(case, measure(case, tools, args.runs, args.delta, args.timeout)))
        print(f"[{number}/{len(cases)}] " + "\t".join(table[-1]), file=sys.stderr, flush=True)
    print(aligned(table))
    if args.out:
        Path(args.out).write_text("\n".join([first] + ["\t".join(line) for line in table]) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
