"""Fingerprint of dpcalc's results: record them before a restructuring, compare after.

    python tools/fingerprint.py --out before.json            # record
    python tools/fingerprint.py --compare before.json        # every figure bit-identical
    python tools/fingerprint.py --compare before.json --interval
                                                             # certified figures inside their old interval

Two kinds of case:

* engine cases: the PLD accountant (dpcalc.core.pld) on the 107 cases of benchmarks/pld_grid.py
  (the 100-case grid and the hard corners) and the runs of benchmarks/peers_pld.py not among
  them, every sampling scheme under every neighbour
  relation it supports, Laplace runs, several phases, delta at a given epsilon. Each records
  the certified interval (lower, upper) of the figure solved for, with the grid size and the
  number of attempts.
* command cases: whole `dpcalc ... --json` invocations of every command (a new process each),
  recorded as the JSON they print without its "version" key.

`--compare` recomputes and prints each case that moved. Without --interval every recorded value
must be bit-identical (a pure restructuring). With --interval a certified interval may only
narrow: new lower >= old lower and new upper <= old upper (an engine change that tightens the
bounds); command cases that moved are listed for review and do not fail the comparison. Exit
code 0 when nothing moved (or only inside the intervals), 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "benchmarks"))  # peers_pld's own imports

from benchmarks.peers_pld import CASES as PEER_CASES
from benchmarks.pld_grid import CORNERS, GRID

DESIGN = "--p 0.004 --sigma 1.1 --T 10000"
RUN = "--n 60000 --batch-size 240 --epochs 10 --sigma 1.1"

# Every command, each a new process, with --json appended.
COMMANDS = [
    f"gdp {DESIGN}",
    f"gdp {DESIGN} --no-tight",
    f"gdp {RUN} --delta 1e-6",
    f"rdp {DESIGN}",
    f"rdp {RUN} --neighbours zero-out",
    f"rdp {RUN} --sampling uniform --neighbours replace-one",
    f"rdp {RUN} --sampling uniform",
    f"pld {DESIGN}",
    f"pld {DESIGN} --eps 2",
    f"pld {DESIGN} --accuracy 1e-4",
    f"pld {RUN} --sampling uniform",
    f"pld {RUN} --sampling shuffle --neighbours zero-out",
    f"pld {RUN} --sampling allocation",
    f"pld {RUN} --examples-per-user 3",
    f"pld {RUN} --max-batch-size 300",
    "pld --mechanism laplace --scale 10 --T 50 --delta 1e-6",
    "pld --phase p=0.01,sigma=2,T=500 --phase p=0.01,sigma=0.9,T=1800",
    "pld --n 60000 --batch-size 256 --epochs 10:30:10 --sigma 0.8,1.1",
    f"risk {DESIGN}",
    f"risk {DESIGN} --fpr 0.001",
    "risk --p 0.001 --sigma 0.6 --T 100000",
    "risk --p 0.01 --sigma 5 --T 1000000",
    "calibrate --n 60000 --batch-size 240 --epochs 10 --target-eps 3",
    "calibrate --n 60000 --batch-size 240 --sigma 1.1 --target-eps 3 --solve epochs",
    "calibrate --p 0.004 --T 10000 --target-eps 2 --accountant rdp",
    "convert --from gdp --mu 0.5 --to dp --delta 1e-6",
    "convert --from gdp --mu 1 --to tradeoff --points 5",
    "convert --from zcdp --rho 0.5 --to dp",
    "convert --from dp --eps 1 --delta 1e-5 --to zcdp",
    "convert --from gaussian --sigma 4 --to rdp --orders 2,8,32",
    "convert --from dp --eps 1 --delta 1e-5 --to gaussian",
    "convert --from laplace --scale 2 --to dp --delta 1e-6",
    "convert --from dp --eps 0.5 --delta 1e-6 --to dp --group 3",
    "laplace-eps --tolerance 1e-5 --probability 0.9",
    "advanced-composition --eps 0.1 --delta 1e-6 --k 100 --delta-prime 1e-5",
    "mechanism gaussian --eps 0.5 --error 20 --calibration classic",
    "mechanism gaussian --eps 1 --delta 1e-5 --error 5",
    "mechanism laplace --eps 0.5 --error 10",
    "mechanism randomized-response --eps 1",
    "mechanism exponential --outcomes 1000 --eps 1 --beta 0.05",
]


def engine_cases() -> Iterator[tuple[str, dict[str, object]]]:
    """(name, keywords of one tight_epsilon/tight_delta call) for every engine case."""
    for p, sigma, steps in GRID + CORNERS:
        yield f"grid p={p:g} sigma={sigma:g} T={steps}", {"phases": [("gaussian", p, sigma, None, steps, {})]}
    # the runs timed against the peers (benchmarks/peers_pld.py) that the grid does not hold
    for case in PEER_CASES:
        if (case.p, case.sigma, case.steps) not in GRID + CORNERS:
            yield (f"peers p={case.p:g} sigma={case.sigma:g} T={case.steps}",
                   {"phases": [("gaussian", case.p, case.sigma, None, case.steps, {})]})
    from dpcalc.core.phases import NEIGHBOURS, SAMPLINGS, unsupported

    run = {"epoch_steps": 250}
    for sampling in SAMPLINGS:
        for neighbours in NEIGHBOURS:
            for users in (1, 3):
                if unsupported("gaussian", sampling, neighbours, users, 0.004):
                    continue
                yield (f"scheme {sampling} {neighbours} k={users}",
                       {"phases": [("gaussian", 0.004, 1.1, None, 2500,
                                    {**run, "sampling": sampling, "neighbours": neighbours,
                                     "examples_per_user": users})]})
    yield "laplace T=50", {"phases": [("laplace", 1.0, None, 10.0, 50, {})], "delta": 1e-6}
    yield "laplace p=0.01 T=1000", {"phases": [("laplace", 0.01, None, 2.0, 1000, {})]}
    yield "two phases", {"phases": [("gaussian", 0.01, 2.0, None, 500, {}), ("gaussian", 0.01, 0.9, None, 1800, {})]}
    yield "delta at eps 2", {"phases": [("gaussian", 0.004, 1.1, None, 10_000, {})], "epsilon": 2.0}
    yield "delta at eps 0.5 replace-one", {"phases": [("gaussian", 0.004, 1.1, None, 10_000,
                                                       {"neighbours": "replace-one"})], "epsilon": 0.5}
    # delta at one epsilon of long runs (their lower measure composes on its own grid rule)
    for p, sigma, steps in ((1e-4, 0.5, 10_000), (0.01, 0.5, 10_000), (0.1, 1.5, 10_000), (0.001, 5.0, 10**6)):
        yield f"delta at eps 1 p={p:g} sigma={sigma:g} T={steps}", {
            "phases": [("gaussian", p, sigma, None, steps, {})], "epsilon": 1.0}


def run_engine(case: dict[str, object]) -> dict[str, object]:
    from dpcalc.core import pld
    from dpcalc.core.phases import Phase
    from dpcalc.core.pld.api import cached

    cached.cache_clear()
    phases = [Phase(mechanism, p, sigma, scale, steps, **extra)
              for mechanism, p, sigma, scale, steps, extra in case["phases"]]  # type: ignore[attr-defined]
    if "epsilon" in case:
        result = pld.tight_delta(phases, case["epsilon"])  # type: ignore[arg-type]
        interval = [result.delta_lower, result.delta_upper]
    else:
        result = pld.tight_epsilon(phases, case.get("delta", 1e-5))  # type: ignore[arg-type]
        interval = [result.epsilon_lower, result.epsilon_upper]
    return {"interval": [_number(value) for value in interval], "grid_size": result.grid_size,
            "attempts": result.attempts, "warnings": len(result.warnings)}


def run_command(command: str) -> object:
    done = subprocess.run([sys.executable, "-m", "dpcalc", *command.split(), "--json"], capture_output=True,
                          text=True, env={**os.environ, "COLUMNS": "120"})
    if done.returncode not in (0, 1):
        return {"exit": done.returncode, "stderr": done.stderr.strip()}
    document = json.loads(done.stdout)
    document.pop("version", None)
    return {"exit": done.returncode, "json": document}


def _number(value: float) -> float | str:
    return value if math.isfinite(value) else repr(value)


def record(only: str | None) -> dict[str, object]:
    cases: dict[str, object] = {}
    for name, case in engine_cases():
        if only is None or only in name:
            cases[name] = run_engine(case)
            print(f"{name}: {cases[name]}", flush=True)
    for command in COMMANDS:
        if only is None or only in f"dpcalc {command}":
            cases[f"dpcalc {command}"] = run_command(command)
            print(f"dpcalc {command}: exit {cases[f'dpcalc {command}']['exit']}", flush=True)  # type: ignore[index]
    return cases


def _inside(old: list[float], new: list[float]) -> bool:
    return float(new[0]) >= float(old[0]) and float(new[1]) <= float(old[1])


def compare(old: dict[str, object], new: dict[str, object], interval: bool) -> int:
    moved, failed = 0, 0
    for name, before in old.items():
        if name not in new:
            continue
        after = new[name]
        if after == before:
            continue
        moved += 1
        if interval and name.startswith("dpcalc "):
            print(f"MOVED (review) {name}")
            continue
        if interval and _inside(before["interval"], after["interval"]):  # type: ignore[index]
            print(f"narrowed {name}: {before['interval']} -> {after['interval']}")  # type: ignore[index]
            continue
        failed += 1
        print(f"CHANGED {name}:\n  before {before}\n  after  {after}")
    print(f"{len(old)} cases, {moved} moved, {failed} outside what --compare allows")
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the fingerprint to this file")
    parser.add_argument("--compare", help="compare with this fingerprint")
    parser.add_argument("--interval", action="store_true", help="certified intervals may narrow")
    parser.add_argument("--only", help="only the cases whose name contains this text")
    args = parser.parse_args()
    cases = record(args.only)
    if args.out:
        Path(args.out).write_text(json.dumps(cases, indent=1, sort_keys=True) + "\n")
    if args.compare:
        return compare(json.loads(Path(args.compare).read_text()), cases, args.interval)
    return 0


if __name__ == "__main__":
    sys.exit(main())
