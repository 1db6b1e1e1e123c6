"""A mechanism's accuracy at the standard confidences: what its noise alone implies.

Privacy alone fixes a mechanism's noise (Laplace: b = Delta_1 / epsilon, Dwork and Roth 2014,
Thm 3.6; Gaussian: the analytic sigma of Balle and Wang 2018, Thm 8), and the noise fixes the
error bound met with each probability. `accuracy_table` states that bound at the confidences
STANDARD_CONFIDENCES (failure probabilities 0.5, 0.1, 0.05 and 0.01), each solved exactly by
the mechanism's own accuracy relation (the error function it is given).

Pure Python: on the start-up path of `dpcalc mechanism`.
"""

from __future__ import annotations

from collections.abc import Callable

from dpcalc.core.record import Value

# The failure probabilities of the table, exact in binary as 1 - confidence would not be
# (1 - 0.9 is 0.09999999999999998): the confidences 0.5, 0.9, 0.95, 0.99 are 1 - q, each exact.
STANDARD_FAILURE_PROBABILITIES: tuple[float, ...] = (0.5, 0.1, 0.05, 0.01)
STANDARD_CONFIDENCES: tuple[float, ...] = tuple(1.0 - q for q in STANDARD_FAILURE_PROBABILITIES)


class AccuracyPoint(Value):
    """The error bound met with probability `confidence` (= 1 - `failure_probability`)."""

    confidence: float
    failure_probability: float
    error: float


def accuracy_table(error_at: Callable[[float], float]) -> tuple[AccuracyPoint, ...]:
    """The error bound at each standard confidence; `error_at(q)` is the error met except with
    probability q."""
    return tuple(AccuracyPoint(1.0 - q, q, error_at(q)) for q in STANDARD_FAILURE_PROBABILITIES)
