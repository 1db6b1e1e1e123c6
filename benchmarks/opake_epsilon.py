"""One opake-accounting accounting of a Poisson-subsampled Gaussian run, as one JSON line.

    python benchmarks/opake_epsilon.py P SIGMA T DELTA     # with an interpreter where opake imports
    python benchmarks/opake_epsilon.py P SIGMA T DELTA CAP N    # batches capped at CAP of N records

opake-accounting (a compiled PLD accountant, a peer of dpcalc's) is used by
benchmarks/peers_pld.py (timed as a whole process) and by tests/core/pld/test_opake_oracle.py
(as an oracle). It needs Python 3.13 in its release 0.16.1, so both run this file in another
interpreter; it imports nothing but the standard library and opake.

What is computed, with opake's defaults (DiscretizationConfig(): grid interval 1e-4, tails
below exp(-50) truncated, tail mass budget 1e-15 in composition, at most 1e7 bins): the PLD
of the Gaussian mechanism with noise multiplier SIGMA (sensitivity 1), Poisson-subsampled
with probability P (both add and remove adjacency, an asymmetric PLD), composed T times; the
epsilon at DELTA is the worst case over the two directions. opake composes at most 2**32 - 1
times in one call, so a larger T is composed as (step^chunk)^q, then r more steps. With CAP and
N, the step is opake's truncated-Poisson PLD (`truncated_poisson_gaussian_pld`: Poisson batches
of a dataset of N records cut to at most CAP).

Output: {"epsilon": float or "inf", "infinity_mass", "summary", "version"}, or
{"error": "Type: message"} with exit code 1.
"""

from __future__ import annotations

import json
import math
import sys

# opake's largest count in one self_compose call, and the chunk used above it.
MAX_COUNT = 2**32 - 1
CHUNK = 2**31


def opake_epsilon(p: float, sigma: float, steps: int, delta: float, cap: int | None = None,
                  dataset_size: int | None = None) -> dict[str, object]:
    """epsilon at `delta` of `steps` Poisson-subsampled Gaussian steps by opake-accounting (with
    `cap` and `dataset_size`, its batches capped)."""
    import opake.api.accounting.core as opake  # type: ignore[import-not-found]  # Python 3.13 only, not in our venv

    native = opake.opake_accounting  # the compiled extension, loaded by the package
    if cap is not None:
        step = native.truncated_poisson_gaussian_pld(sigma, p, cap, dataset_size, native.DiscretizationConfig())
    else:
        step = native.poisson_pld(native.gaussian_pld(sigma, native.DiscretizationConfig()), p)
    if steps <= MAX_COUNT:
        run = step.self_compose(steps)
    else:
        quotient, remainder = divmod(steps, CHUNK)
        run = step.self_compose(CHUNK).self_compose(quotient)
        if remainder:
            run = run.compose(step.self_compose(remainder))
    epsilon = run.epsilon_at(delta)
    return {
        "epsilon": epsilon if math.isfinite(epsilon) else "inf",
        "infinity_mass": run.infinity_mass,
        "summary": repr(run),
        "version": opake.__version__,
    }


def main(argv: list[str]) -> int:
    p, sigma, steps, delta = float(argv[0]), float(argv[1]), int(float(argv[2])), float(argv[3])
    cap, dataset_size = (int(argv[4]), int(argv[5])) if len(argv) > 5 else (None, None)
    try:
        result = opake_epsilon(p, sigma, steps, delta, cap, dataset_size)
    except Exception as error:  # noqa: BLE001 - any failure of the peer is a result, reported as such
        print(json.dumps({"error": f"{type(error).__name__}: {error}"}))
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
