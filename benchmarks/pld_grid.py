"""The PLD accountant on the 100-case grid and the hard corners: width, work and time per case.

    python benchmarks/pld_grid.py [--accuracy 1e-3] [--delta 1e-5] [--out table.tsv]

Cases: the 100-case grid, p in {1e-4, 1e-3, 1e-2, 0.1, 1}, sigma in {0.5, 0.8, 1.1, 1.5, 5} and
T in {1, 1e2, 1e4, 1e6}, then the corners that have missed the accuracy or been slow. For each case it
prints the certified interval's relative width, whether it meets the accuracy, the work in bin
operations (dpcalc.core.pld.work: a count that does not depend on the machine), the number
of grid attempts, the wall time on this machine, and the warnings. Keep its output beside a
change to the engine, so that the next change can be compared case by case.
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import time

from dpcalc.core import pld
from dpcalc.core.phases import Phase
from dpcalc.core.pld import work
from dpcalc.core.pld.api import cached

GRID = [(p, sigma, steps) for p in (1e-4, 1e-3, 1e-2, 0.1, 1.0) for sigma in (0.5, 0.8, 1.1, 1.5, 5.0)
        for steps in (1, 100, 10_000, 1_000_000)]
CORNERS = [(0.004, 1.1, 10_000), (1e-5, 0.5, 10**7), (1e-4, 0.8, 10**6), (0.001, 0.6, 10**5),
           (0.004, 0.61, 10**4), (0.004, 1.1, 10**9), (0.004, 1.1, 10**11)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--accuracy", type=float, default=pld.DEFAULT_ACCURACY)
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--out", help="also write the table (tab-separated) to this file")
    args = parser.parse_args()
    lines = [f"# {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
             f"accuracy {args.accuracy:g}, delta {args.delta:g}",
             "p\tsigma\tT\twidth\tmeets\twork\tattempts\tseconds\twarnings"]
    print(lines[0])
    print(lines[1])
    misses, total_work, total_time = 0, 0.0, 0.0
    for p, sigma, steps in GRID + CORNERS:
        cached.cache_clear()
        with work.limited(math.inf) as meter:
            start = time.perf_counter()
            result = pld.tight_epsilon([Phase("gaussian", p, sigma, None, steps)], args.delta, accuracy=args.accuracy)
            seconds = time.perf_counter() - start
        upper, lower = result.epsilon_upper, result.epsilon_lower
        width = (upper - lower) / upper if math.isfinite(upper) and upper > 0 else (0.0 if upper == 0 else math.inf)
        meets = width <= args.accuracy
        misses += not meets
        total_work += meter.used
        total_time += seconds
        line = (f"{p:g}\t{sigma:g}\t{steps}\t{width:.2e}\t{'yes' if meets else 'NO'}\t{meter.used:.3e}\t"
                f"{result.attempts}\t{seconds:.3f}\t{len(result.warnings)}")
        print(line, flush=True)
        lines.append(line)
    summary = f"# {misses} of {len(GRID) + len(CORNERS)} miss the accuracy; work {total_work:.3e}; {total_time:.1f} s"
    print(summary)
    lines.append(summary)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
