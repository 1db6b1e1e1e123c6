"""Time whole dpcalc commands against the start-up floors and peers, measured in the same run.

Every dpcalc call is a new process, so what a user feels is the wall time of the whole
command. Each case runs `--runs` times, interleaved with its floor so that machine load
affects both alike; the median is reported with its ratio to the floor, and the peak resident
memory of the case's slowest run.

    python benchmarks/bench.py              # all cases
    python benchmarks/bench.py --runs 31 --only gdp
    python benchmarks/bench.py --json       # machine-readable
    python benchmarks/bench.py --python /path/to/venv/bin/python --only "(design card, table)"

Run it from the environment dpcalc is installed in (it calls the `dpcalc` next to this Python),
or name another environment's interpreter with --python: the script then runs under it. The
floors import what dpcalc's commands are built on, click and Rich (dpcalc does not use Typer:
CONTRIBUTING.md, "Why click").
Measure a regular install (`pip install '.[test]'`), as users have: an editable one (`pip install
-e`) loads its import hook and pathlib at every start, about 10 ms a call.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

PYTHON = sys.executable
BIN = Path(PYTHON).parent


def _tool(name: str) -> str:
    local = BIN / name
    return str(local) if local.exists() else (shutil.which(name) or name)


DPCALC = _tool("dpcalc")

FLOORS = {
    "click+rich": [PYTHON, "-c", "import click, rich"],
    # What a table costs at least: import click, print one five-row Rich table (the table mode's floor).
    "click+rich table": [PYTHON, "-c", (
        "import click; from rich.console import Console; from rich.table import Table; "
        "table = Table('quantity', 'value'); [table.add_row(f'row {i}', str(i)) for i in range(5)]; "
        "Console().print(table)"
    )],
    "click+rich+numpy+scipy.special": [PYTHON, "-c", "import click, rich, numpy, scipy.special"],
    # One tight accounting of the design card: what calibrate and sweeps are measured against.
    "dpcalc pld (design card)": [DPCALC, "pld", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--json"],
    # One RDP accounting of the design card, for the RDP sweep.
    "dpcalc rdp --no-tight (design card)": [
        DPCALC, "rdp", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--no-tight", "--json",
    ],
    # One certified calibration of sigma on the design card: what risk calibration is measured against.
    "dpcalc calibrate sigma (design card)": [
        DPCALC, "calibrate", "--target-eps", "2", "--p", "0.004", "--T", "10000", "--json",
    ],
    # The attack-risk peer (issue 19): riskcal 1.5.1 on a dp_accounting PLD of the design card,
    # the advantage and the TPR at the five FPRs `dpcalc risk` prints by default.
    "riskcal (design card: advantage, TPR at 5 FPRs)": [PYTHON, "-c", (
        "import numpy as np; from riskcal import analysis as a; "
        "from dp_accounting.pld import privacy_loss_distribution as P; "
        "pld = P.from_gaussian_mechanism(1.1, sampling_prob=0.004, value_discretization_interval=1e-3, "
        "use_connect_dots=True).self_compose(10000); "
        "print(a.get_advantage_from_pld(pld), 1 - a.get_beta_from_pld(pld, alpha=np.array([1e-5, 1e-4, 1e-3, 1e-2, 0.1])))"
    )],
    # The compiled peer opake-accounting 0.16.1 computing the same figures (advantage, TPR at the
    # five FPRs) on the design card; it needs Python 3.13: name an interpreter where it imports
    # with DPCALC_OPAKE_PYTHON, else the case comparing with it is left out.
    "opake (design card: advantage, TPR at 5 FPRs)": [os.environ.get("DPCALC_OPAKE_PYTHON", ""), "-c", (
        "import opake.api.accounting.core as o; n = o.opake_accounting; "
        "run = n.poisson_pld(n.gaussian_pld(1.1, n.DiscretizationConfig()), 0.004).self_compose(10000); "
        "print(run.advantage(), [1 - run.beta_at(a) for a in (1e-5, 1e-4, 1e-3, 1e-2, 0.1)])"
    )],
    # The peer: prv_accountant's command line for the design card (installed by the test extra).
    "prv_accountant compute-dp-epsilon": [
        _tool("compute-dp-epsilon"), "-p", "0.004", "-s", "1.1", "-i", "10000", "-d", "1e-5",
    ],
}


@dataclass(frozen=True)
class Case:
    name: str
    argv: list[str]
    floor: str
    goal: float | None  # the largest acceptable ratio to the floor; None: reported only
    peak_mib: float | None = None  # the largest acceptable peak memory


def dpcalc(*args: str) -> list[str]:
    return [DPCALC, *args]


# The design card as a dataset (n 62500, batch 250: p = 0.004), for the sampling schemes and caps.
CARD_AS_DATASET = ("pld", "--n", "62500", "--batch-size", "250", "--T", "10000", "--sigma", "1.1")


# Issue 21: the closed-form commands at most 1.15x the table floor in table mode, 1.25x
# `import click, rich` with --json; --help at most 1.25x `import click, rich`.
CASES = [
    Case("dpcalc --help", dpcalc("--help"), "click+rich", 1.25),
    Case("dpcalc gdp --no-tight (design card, table)",
         dpcalc("gdp", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--no-tight"), "click+rich table", 1.15,
         peak_mib=60),
    Case("dpcalc gdp --no-tight (design card, --json)",
         dpcalc("gdp", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--no-tight", "--json"), "click+rich", 1.25,
         peak_mib=60),
    Case("dpcalc gdp (design card, with tight epsilon)",
         dpcalc("gdp", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--json"), "click+rich", None),
    Case("dpcalc rdp --no-tight (design card, table)",
         dpcalc("rdp", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--no-tight"),
         "click+rich+numpy+scipy.special", 1.2),
    Case("dpcalc rdp --no-tight (design card, --json)",
         dpcalc("rdp", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--no-tight", "--json"),
         "click+rich+numpy+scipy.special", 1.2),
    Case("dpcalc rdp --no-tight (10 phases, --json)",
         dpcalc("rdp", *[a for k in range(1, 11) for a in ("--phase", f"p={0.001 * k:g},sigma={0.5 + 0.1 * k:g},T=1000")],
                "--no-tight", "--json"),
         "click+rich+numpy+scipy.special", 1.2),
    Case("dpcalc rdp --no-tight (T = 1e9, --json)",
         dpcalc("rdp", "--p", "0.004", "--sigma", "1.1", "--T", "1e9", "--no-tight", "--json"),
         "click+rich+numpy+scipy.special", 1.2),
    # Tight accounting: at most 0.4x the peer's command line for the same case.
    Case("dpcalc pld (design card, --json)",
         dpcalc("pld", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--json"),
         "prv_accountant compute-dp-epsilon", 0.4, peak_mib=300),
    # Issue 16: one tight accounting at most 0.8x the compiled peer's accounting of the same run.
    *([Case("dpcalc pld (design card, --json) vs opake",
            dpcalc("pld", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--json"),
            "opake (design card: advantage, TPR at 5 FPRs)", 0.8, peak_mib=300)]
      if os.environ.get("DPCALC_OPAKE_PYTHON") else []),
    Case("dpcalc pld (T = 1e6, --json)",
         dpcalc("pld", "--p", "0.004", "--sigma", "1.1", "--T", "1e6", "--json"), "click+rich", None, peak_mib=300),
    Case("dpcalc pld (T = 1e7, --json)",
         dpcalc("pld", "--p", "0.004", "--sigma", "1.1", "--T", "1e7", "--json"), "click+rich", None, peak_mib=300),
    Case("dpcalc pld (T = 1e9, --json)",
         dpcalc("pld", "--p", "0.004", "--sigma", "1.1", "--T", "1e9", "--json"), "click+rich", None, peak_mib=300),
    Case("dpcalc pld (T = 1e11, --json)",
         dpcalc("pld", "--p", "0.004", "--sigma", "1.1", "--T", "1e11", "--json"), "click+rich", None, peak_mib=300),
    # Issue 7: calibrating sigma under 2x one pld call; a 60-point epochs sweep under 3x one call.
    Case("dpcalc calibrate sigma (design card, pld)",
         dpcalc("calibrate", "--target-eps", "2", "--p", "0.004", "--T", "10000", "--json"), "dpcalc pld (design card)",
         2.0, peak_mib=300),
    # Issue 16: calibrating toward a large epsilon (small sigma, where the grid works hardest)
    # under 2x one pld call, four targets in one call under 4x.
    Case("dpcalc calibrate sigma, --target-eps 8 (design card, pld)",
         dpcalc("calibrate", "--target-eps", "8", "--p", "0.004", "--T", "10000", "--json"), "dpcalc pld (design card)",
         2.0, peak_mib=300),
    Case("dpcalc calibrate sigma, --target-eps 1,2,4,8 (design card, pld)",
         dpcalc("calibrate", "--target-eps", "1,2,4,8", "--p", "0.004", "--T", "10000", "--json"),
         "dpcalc pld (design card)", 4.0, peak_mib=300),
    Case("dpcalc calibrate T (design card, pld)",
         dpcalc("calibrate", "--target-eps", "2", "--p", "0.004", "--sigma", "1.1", "--solve", "T", "--json"),
         "dpcalc pld (design card)", None, peak_mib=300),
    Case("dpcalc calibrate epochs (n = 60000, batch 256, pld)",
         dpcalc("calibrate", "--target-eps", "2", "--n", "60000", "--batch-size", "256", "--sigma", "1.1", "--solve",
                "epochs", "--json"),
         "dpcalc pld (design card)", None, peak_mib=300),
    # Issue 19: attack risk within 1.5x one pld call, and against riskcal computing the same
    # figures; calibration to a risk target within 2x calibration to epsilon.
    Case("dpcalc risk (design card, --json)",
         dpcalc("risk", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--json"), "dpcalc pld (design card)", 1.5,
         peak_mib=300),
    Case("dpcalc risk (design card, --json) vs riskcal",
         dpcalc("risk", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--json"),
         "riskcal (design card: advantage, TPR at 5 FPRs)", 1.0, peak_mib=300),
    *([Case("dpcalc risk (design card, --json) vs opake",
            dpcalc("risk", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--json"),
            "opake (design card: advantage, TPR at 5 FPRs)", 1.0, peak_mib=300)]
      if os.environ.get("DPCALC_OPAKE_PYTHON") else []),
    Case("dpcalc calibrate --target-tpr 0.05 --at-fpr 0.01 (design card)",
         dpcalc("calibrate", "--target-tpr", "0.05", "--at-fpr", "0.01", "--p", "0.004", "--T", "10000", "--json"),
         "dpcalc calibrate sigma (design card)", 2.0, peak_mib=300),
    Case("dpcalc calibrate --target-advantage 0.1 (design card)",
         dpcalc("calibrate", "--target-advantage", "0.1", "--p", "0.004", "--T", "10000", "--json"),
         "dpcalc calibrate sigma (design card)", 2.0, peak_mib=300),
    Case("dpcalc pld sweep, epochs 1:60:1 (--json)",
         dpcalc("pld", "--n", "60000", "--batch-size", "256", "--epochs", "1:60:1", "--sigma", "1.1", "--json"),
         "dpcalc pld (design card)", 3.0, peak_mib=300),
    Case("dpcalc rdp --no-tight sweep, epochs 1:60:1 (--json)",
         dpcalc("rdp", "--n", "60000", "--batch-size", "256", "--epochs", "1:60:1", "--sigma", "1.1", "--no-tight",
                "--json"),
         "dpcalc rdp --no-tight (design card)", None),
    # Issue 18: each sampling scheme within 2x the Poisson pld call on the design card (t = 250
    # steps an epoch, 40 epochs); allocation on the 60-epoch MNIST run in seconds.
    Case("dpcalc pld --sampling uniform --neighbours replace-one (design card, --json)",
         dpcalc(*CARD_AS_DATASET, "--sampling", "uniform",
                "--neighbours", "replace-one", "--json"), "dpcalc pld (design card)", 2.0, peak_mib=500),
    Case("dpcalc pld --sampling shuffle --neighbours zero-out (design card, --json)",
         dpcalc(*CARD_AS_DATASET, "--sampling", "shuffle",
                "--neighbours", "zero-out", "--json"), "dpcalc pld (design card)", 2.0, peak_mib=500),
    Case("dpcalc pld --sampling allocation (design card, --json)",
         dpcalc(*CARD_AS_DATASET, "--sampling", "allocation",
                "--json"), "dpcalc pld (design card)", 2.0, peak_mib=500),
    Case("dpcalc pld --sampling allocation (n 60000, b 256, 60 epochs, --json)",
         dpcalc("pld", "--n", "60000", "--batch-size", "256", "--T", "14100", "--sigma", "1.1", "--sampling", "allocation",
                "--json"), "dpcalc pld (design card)", None, peak_mib=500),
    # Truncated Poisson (a cap on the batch size): a cap well above the mean batch (360 over 250)
    # is read off the Poisson run's profile; a cap near it (300) also composes the capped pairs
    # and the pairs at the kept rate (reported only).
    Case("dpcalc pld --max-batch-size 360 (design card as n 62500, b 250, --json)",
         dpcalc(*CARD_AS_DATASET, "--max-batch-size", "360",
                "--json"), "dpcalc pld (design card)", 2.0, peak_mib=300),
    Case("dpcalc pld --max-batch-size 300 (design card as n 62500, b 250, --json)",
         dpcalc(*CARD_AS_DATASET, "--max-batch-size", "300",
                "--json"), "dpcalc pld (design card)", None, peak_mib=300),
    Case("dpcalc check examples/privacy-budget.toml (--json)",
         dpcalc("check", str(Path(__file__).resolve().parent.parent / "examples" / "privacy-budget.toml"), "--json"),
         "dpcalc pld (design card)", None, peak_mib=300),
    Case("dpcalc convert dp -> gaussian (table)",
         dpcalc("convert", "--from", "dp", "--eps", "1", "--delta", "1e-5", "--to", "gaussian"), "click+rich table", 1.15),
    Case("dpcalc convert dp -> gaussian (--json)",
         dpcalc("convert", "--from", "dp", "--eps", "1", "--delta", "1e-5", "--to", "gaussian", "--json"),
         "click+rich", 1.25),
    Case("dpcalc convert zcdp -> dp (--json)",
         dpcalc("convert", "--from", "zcdp", "--rho", "0.5", "--to", "dp", "--json"), "click+rich", 1.25),
    Case("dpcalc laplace-eps (seed, table)",
         dpcalc("laplace-eps", "--tolerance", "1e-5", "--probability", "0.9"), "click+rich table", 1.15),
    Case("dpcalc laplace-eps (seed, --json)",
         dpcalc("laplace-eps", "--tolerance", "1e-5", "--probability", "0.9", "--json"), "click+rich", 1.25),
    # Issue 20: the closed-form mechanism commands start like the other closed-form commands.
    Case("dpcalc mechanism laplace (table)",
         dpcalc("mechanism", "laplace", "--eps", "1", "--confidence", "0.95", "--bins", "10"),
         "click+rich table", 1.15),
    Case("dpcalc mechanism laplace (--json)",
         dpcalc("mechanism", "laplace", "--eps", "1", "--confidence", "0.95", "--bins", "10", "--json"),
         "click+rich", 1.25),
    Case("dpcalc advanced-composition k=100 (table)",
         dpcalc("advanced-composition", "--eps", "0.1", "--k", "100"), "click+rich table", 1.15),
    Case("dpcalc advanced-composition k=1e4 (--json)",
         dpcalc("advanced-composition", "--eps", "0.01", "--k", "10000", "--json"), "click+rich", 1.25),
    # k = 1e6 must finish under 1 s end to end: about 12x the floor.
    Case("dpcalc advanced-composition k=1e6 (--json)",
         dpcalc("advanced-composition", "--eps", "0.001", "--k", "1000000", "--json"), "click+rich", 12.0),
]


# Children may write bytecode caches even where the caller's environment forbids it: an
# installed package has them, and without them every run of a source checkout recompiles.
CHILD_ENVIRONMENT = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def _run_once(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS in MiB) of one run of argv, output discarded."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=CHILD_ENVIRONMENT)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        raise SystemExit(f"benchmark command failed with exit {process.returncode}: {' '.join(argv)}")
    return elapsed, usage.ru_maxrss / 1024.0  # ru_maxrss is KiB on Linux


def measure(cases: list[Case], runs: int) -> list[dict]:
    floors_needed = {case.floor for case in cases}
    timings: dict[str, list[float]] = {name: [] for name in floors_needed}
    peaks: dict[str, float] = {}
    for case in cases:
        timings[case.name] = []
        peaks[case.name] = 0.0
    for name in floors_needed:  # warm the file cache once
        _run_once(FLOORS[name])
    for case in cases:
        _run_once(case.argv)
    for _ in range(runs):
        for name in floors_needed:
            timings[name].append(_run_once(FLOORS[name])[0])
        for case in cases:
            elapsed, peak = _run_once(case.argv)
            timings[case.name].append(elapsed)
            peaks[case.name] = max(peaks[case.name], peak)
    rows = []
    for case in cases:
        median = statistics.median(timings[case.name])
        floor = statistics.median(timings[case.floor])
        ratio = median / floor
        within = (case.goal is None or ratio <= case.goal) and (
            case.peak_mib is None or peaks[case.name] <= case.peak_mib
        )
        rows.append(
            {
                "case": case.name,
                "median_ms": round(1e3 * median, 1),
                "floor": case.floor,
                "floor_ms": round(1e3 * floor, 1),
                "ratio": round(ratio, 2),
                "goal": case.goal,
                "peak_mib": round(peaks[case.name], 1),
                "peak_goal_mib": case.peak_mib,
                "within_goal": within,
            }
        )
    return rows


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def environment() -> str:
    """The versions of the command-line libraries in this environment (the floors import click and Rich)."""
    from importlib.metadata import PackageNotFoundError, version

    def installed(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "not installed"

    return ", ".join(f"{name} {installed(name)}" for name in ("click", "rich"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21, help="runs per case (median is reported)")
    parser.add_argument("--only", default="", help="only cases whose name contains this text (or one of several, "
                        "separated by |)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--python", help="run under this interpreter: the cases and floors of its environment")
    args = parser.parse_args()
    if args.python and Path(args.python).absolute() != Path(PYTHON).absolute():
        rest = [arg for index, arg in enumerate(sys.argv[1:]) if arg != "--python" and sys.argv[index] != "--python"
                and not arg.startswith("--python=")]
        os.execv(args.python, [args.python, str(Path(__file__).resolve()), *rest])
    cases = [case for case in CASES if any(text in case.name for text in args.only.split("|"))]
    if not cases:
        parser.error(f"no case matches --only {args.only!r}")
    rows = measure(cases, args.runs)
    if args.json:
        print(json.dumps({"machine": machine(), "environment": environment(), "runs": args.runs, "cases": rows},
                         indent=2))
    else:
        print(f"machine: {machine()}; {args.runs} runs per case, medians")
        print(f"environment: {environment()}")
        print(f"{'case':44} {'median':>9} {'floor':>9} {'ratio':>6} {'goal':>5} {'peak':>9}  ok")
        for row in rows:
            print(
                f"{row['case']:44} {row['median_ms']:7.1f}ms {row['floor_ms']:7.1f}ms {row['ratio']:6.2f} "
                f"{'-' if row['goal'] is None else format(row['goal'], '.2f'):>5} {row['peak_mib']:6.1f}MiB  "
                f"{'yes' if row['within_goal'] else 'NO'}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
