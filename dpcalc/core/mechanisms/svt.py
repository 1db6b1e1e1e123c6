"""The sparse vector technique: AboveThreshold and Sparse (c answers), with Dwork and Roth's constants.

Source: Dwork, Roth, "The Algorithmic Foundations of Differential Privacy" (2014), "DR" below,
Sec. 3.6: Algorithm 1 (AboveThreshold) and Algorithm 2 (Sparse, pure version, delta = 0).
Only these proved variants are implemented; many published SVT variants are not private
(Lyu, Su, Li, VLDB 2017, Sec. 3-4).

Sparse answers up to c of k queries of sensitivity Delta above a threshold T: a noisy threshold
T + Lap(2 c Delta / eps), redrawn after each positive answer, each query compared after adding
Lap(4 c Delta / eps); it halts after c positive answers. It is eps-DP (DR Thm 3.23 for c = 1,
AboveThreshold; Thm 3.25 for c answers: c runs of AboveThreshold at eps / c each). DR state
both for Delta = 1; a query of sensitivity Delta with all noise multiplied by Delta is the
query divided by Delta, so the accuracy below scales by Delta.

Accuracy (DR Def. 3.9): with probability at least 1 - beta every positive answer is to a query
>= T - alpha and every negative answer to a query <= T + alpha, for any k queries of which at
most c are >= T - alpha (for c = 1, only the last may be), at

    alpha = 8 c Delta (ln k + ln(2 c / beta)) / eps      (DR Thm 3.24 for c = 1, Thm 3.26),

an upper bound (the proof's union bound over the k + c noise draws). Solved in closed form for
each of eps, alpha, beta (beta = 2 c k e^(-eps alpha / (8 c Delta)), reported as 1 when the
bound is vacuous).

Pure Python (math only): this module is on the start-up path of `dpcalc mechanism svt`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from dpcalc.core.mechanisms import exactly_two
from dpcalc.core.mechanisms.accuracy import AccuracyPoint, accuracy_table
from dpcalc.core.validation import OPEN_UNIT, POSITIVE, POSITIVE_INTEGER, ParameterError

# the one of epsilon, alpha and beta computed from the other two, or "accuracy": epsilon alone, its
# alpha at the standard failure probabilities (dpcalc.core.mechanisms.accuracy)
Unknown = Literal["epsilon", "alpha", "beta", "accuracy"]

PRIVACY_SOURCE = {1: "Dwork and Roth 2014, Thm 3.23 (AboveThreshold)", 2: "Dwork and Roth 2014, Thm 3.25 (Sparse, delta = 0)"}
ACCURACY_SOURCE = {1: "Dwork and Roth 2014, Thm 3.24", 2: "Dwork and Roth 2014, Thm 3.26 (delta = 0)"}


@dataclass(frozen=True)
class SVTAccuracy:
    """AboveThreshold (answers = 1) or Sparse: epsilon, its noise scales, and the (alpha, beta) accuracy
    (None from epsilon alone); `accuracy` holds alpha (as `error`) at the standard failure probabilities."""

    epsilon: float
    alpha: float | None
    beta: float | None
    queries: int
    answers: int
    sensitivity: float
    solved_for: Unknown
    warnings: tuple[str, ...] = ()
    accuracy: tuple[AccuracyPoint, ...] = ()

    @property
    def threshold_scale(self) -> float:
        """The Laplace scale of the noisy threshold, 2 c Delta / eps (DR Alg. 2, sigma)."""
        return 2.0 * self.answers * self.sensitivity / self.epsilon

    @property
    def query_scale(self) -> float:
        """The Laplace scale added to each query, 4 c Delta / eps (DR Alg. 2, 2 sigma)."""
        return 4.0 * self.answers * self.sensitivity / self.epsilon

    @property
    def algorithm(self) -> str:
        return "AboveThreshold" if self.answers == 1 else "Sparse"

    @property
    def source(self) -> str:
        key = 1 if self.answers == 1 else 2
        return f"privacy: {PRIVACY_SOURCE[key]}; accuracy: {ACCURACY_SOURCE[key]}"


def svt_log_terms(queries: int, answers: int, beta: float) -> float:
    """ln k + ln(2 c / beta), the bracket of DR Thm 3.24/3.26."""
    return math.log(queries) + math.log(2.0 * answers) - math.log(beta)


def svt_accuracy(
    *,
    queries: int,
    answers: int = 1,
    epsilon: float | None = None,
    alpha: float | None = None,
    beta: float | None = None,
    sensitivity: float = 1.0,
) -> SVTAccuracy:
    """Solve alpha = 8 c Delta (ln k + ln(2 c / beta)) / eps for the one of epsilon, alpha, beta not given."""
    POSITIVE_INTEGER.check("queries", queries)
    POSITIVE_INTEGER.check("answers", answers)
    POSITIVE.check("sensitivity", sensitivity)
    if answers > queries:
        raise ParameterError("answers", f"at most the number of queries {queries}", answers)
    exactly_two("epsilon, alpha, beta", (("epsilon", epsilon), ("alpha", alpha), ("beta", beta)), first_alone=True)
    if epsilon is not None:
        POSITIVE.check("epsilon", epsilon)
    if alpha is not None:
        POSITIVE.check("alpha", alpha)
    if beta is not None:
        OPEN_UNIT.check("beta", beta)
    scale = 8.0 * answers * sensitivity
    if not math.isfinite(scale):
        raise ParameterError("sensitivity", f"below {1.7976931348623157e308 / (8.0 * answers):.4g} "
                             "(8 c Delta must be a finite float64)", sensitivity)
    warnings: list[str] = []
    solved: Unknown
    if epsilon is None:
        assert alpha is not None and beta is not None
        epsilon = scale * svt_log_terms(queries, answers, beta) / alpha
        solved = "epsilon"
    elif alpha is None and beta is None:
        solved = "accuracy"
    elif alpha is None:
        assert beta is not None
        alpha = scale * svt_log_terms(queries, answers, beta) / epsilon
        solved = "alpha"
    else:
        log_beta = math.log(queries) + math.log(2.0 * answers) - epsilon * alpha / scale
        if log_beta >= 0.0:
            beta = 1.0
            warnings.append(
                f"the bound is vacuous at this alpha: alpha must exceed 8 c Delta ln(2 c k) / eps = "
                f"{scale * (math.log(queries) + math.log(2.0 * answers)) / epsilon:.6g} for a failure "
                "probability below 1")
        else:
            beta = max(math.exp(log_beta), math.ulp(0.0))
        solved = "beta"
    at = epsilon
    table = accuracy_table(lambda q: scale * svt_log_terms(queries, answers, q) / at)
    return SVTAccuracy(epsilon, alpha, beta, queries, answers, sensitivity, solved, tuple(warnings), table)
