"""Time the sensitivity of 2000 x 2000 strategy matrices (dpcalc.core.mf.sensitivity).

The goal is under 2 s for a strategy read from a file. Each case reports the median wall and CPU
time of `--runs` calls: the CPU time is what a quiet machine's wall time approaches, since BLAS
may use every core for C^T C, while the wall time rises with whatever else the machine runs.

    python benchmarks/mf_sensitivity.py
    python benchmarks/mf_sensitivity.py --runs 5 --steps 1000
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from dpcalc.core.mf.participation import Participation
from dpcalc.core.mf.sensitivity import sensitivity
from dpcalc.core.mf.strategy import strategy_matrix, toeplitz_strategy


def cases(steps: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        "dense, nonnegative (relaxation)": np.tril(rng.random((steps, steps))),
        "dense, signed (upper bound)": np.tril(rng.normal(size=(steps, steps))),
        "dense Toeplitz, decreasing (greedy)": toeplitz_strategy(np.linspace(1, 0.01, steps), steps).dense(),
        "64 bands (orthogonal columns)": toeplitz_strategy(np.linspace(1, 0.1, 64), steps).dense(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=2000)
    args = parser.parse_args()
    schemas = [(5, args.steps // 20), (10, args.steps // 10), (2, args.steps // 2)]
    for name, matrix in cases(args.steps).items():
        for k, s in schemas:
            walls, cpus = [], []
            for _ in range(args.runs):
                wall, cpu = time.perf_counter(), time.process_time()
                result = sensitivity(strategy_matrix(matrix), Participation(k, s, args.steps))
                walls.append(time.perf_counter() - wall)
                cpus.append(time.process_time() - cpu)
            print(f"{name:38s} k {k:3d} s {s:5d}  wall {statistics.median(walls):5.2f} s  "
                  f"cpu {statistics.median(cpus):5.2f} s  {result.figure} ({result.method})")


if __name__ == "__main__":
    main()
