"""Calibration: the noise, length or sampling rate of a noisy-SGD run that meets a target epsilon.

Given a target epsilon E at delta and all but one quantity of a Poisson-sampled noisy-SGD run
(sampling probability p, noise multiplier sigma, steps T; or the training form: dataset size
n, batch size b with p = b / n, and epochs with T = ceil(epochs / p)), find the value of the
remaining quantity that spends the budget best according to one accountant:

    sigma        the smallest noise multiplier       with epsilon(sigma) <= E
    T, epochs    the largest number of steps/epochs  with epsilon <= E
    p            the largest sampling probability    with epsilon <= E
    batch_size   the largest batch size              with epsilon <= E
    scale        the smallest Laplace scale          with epsilon <= E, for k = steps releases of
                 the Laplace mechanism (mechanism="laplace", L1 sensitivity D, no subsampling;
                 docs/mathematics.md §7); one release under pld in closed form, exactly

The accountants (dpcalc.core.accountants): `pld` (dpcalc.core.pld.tight_epsilon, the
certified upper bound), `rdp` (dpcalc.core.rdp with its default orders and the improved
conversion) and `gdp` (the central-limit approximation, Bu, Dong, Long, Su 2020, Thm 4, which
is not a bound).

Guarantees
----------
* Conservative by construction. The returned value is always a point at which the accountant
  itself was run and gave epsilon <= E; that epsilon is returned with it and is checked
  against E again before the result is built. sigma is only ever rounded up, the other
  quantities down.
* Precision. sigma, p and the Laplace scale are searched on a decimal grid with
  ceil(-log10(precision)) + 2 significant digits (6 at the default 1e-4: neighbours at most
  precision / 10 apart).
  - gdp and rdp: the answer is the smallest sigma (largest p) on the grid with epsilon <= E,
    and its neighbour, evaluated and reported as `rejected`, exceeds E. The answer does not
    depend on the search path, so a sweep row and a single run agree.
  - pld, whose evaluations cost 0.05-0.5 s: the answer is within `precision` (relative) of the
    boundary where the accountant's epsilon meets E, either shown by an evaluated `rejected`
    value that close, or, without it, by interpolating between the two nearest evaluations
    (the `boundary`), or, with one full evaluation, by extrapolating from it with the slope of
    the two nearest steering evaluations (all within 2% of the boundary; the answer is at most
    `precision` from the boundary, so a slope error of a few percent moves the boundary by
    ~1e-6). Interpolation and extrapolation rely on the accountant's epsilon being smooth in
    sigma; its jitter is ~3e-5 relative in epsilon (measured), ~2e-5 in sigma. At p = 1 the
    run is exactly mu-GDP (`pld.exact`): sigma is the root of the closed form's certified
    epsilon, rounded up to the grid, and the answer is the smallest grid value with epsilon
    <= E, its neighbour below `rejected`, as for gdp and rdp (`solve._exact_sigma`).
  - T, epochs and batch size are integers: the answer is the exact largest one, and
    `rejected` = answer + 1 exceeds E (for pld T and epochs the answer's epsilon is
    `tight_epsilon`'s and the neighbour's the shared composition's, see `solve`).
  These statements rely on the accountant's epsilon being monotone in the quantity, which holds
  for the mathematics (epsilon falls with sigma and grows with T, p and the batch size; with
  epochs fixed, a larger batch loses more privacy per epoch); soundness never needs it.
* Infeasible targets: the most private end of the search range (T = 1, one epoch, batch size
  1, p = 1e-10, sigma = 1e6) is tried, and when even it exceeds E the result says so, with the
  epsilon there as the closest achievable figure. As sigma grows, epsilon falls to 0 for any p
  and T (delta(0) = TV distance <= delta once the noise is large enough), so a sigma exists for
  every E >= 0, including E = 0; only the accountant's numerical range can defeat it.

The package, one concept a module:
- `problem`: the inputs, their ranges and checks, and how a value completes the run;
- `model`: the central-limit epsilon that steers the search;
- `grids`: the decimal and integer grids of candidate values;
- `engines`: the accountant at the calibration's delta, and the PLD search's cheaper bounds;
- `prediction`: the boundary predicted by the model and the residuals of the points so far;
- `search`: the search for the pass/fail boundary on a grid;
- `result`: `CalibrationResult`, built from the search's outcome, and its messages;
- `solve`: `calibrate`, and the shared PLD composition over T.
"""

from dpcalc.core.accountants import ACCOUNTANTS
from dpcalc.core.calibrate.problem import (
    DEFAULT_PRECISION,
    MAX_STEPS,
    MECHANISM_QUANTITIES,
    P_RANGE,
    PRECISION,
    QUANTITIES,
    SCALE_RANGE,
    SIGMA_RANGE,
    Quantity,
    steps_for_epochs,
)
from dpcalc.core.calibrate.result import SOLVE_STEPS_HINT, CalibrationResult
from dpcalc.core.calibrate.solve import calibrate

__all__ = [
    "ACCOUNTANTS",
    "DEFAULT_PRECISION",
    "MAX_STEPS",
    "MECHANISM_QUANTITIES",
    "PRECISION",
    "P_RANGE",
    "QUANTITIES",
    "SCALE_RANGE",
    "SIGMA_RANGE",
    "SOLVE_STEPS_HINT",
    "CalibrationResult",
    "Quantity",
    "calibrate",
    "steps_for_epochs",
]
