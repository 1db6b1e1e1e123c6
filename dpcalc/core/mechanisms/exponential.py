"""The exponential mechanism: epsilon, error bound alpha and failure probability beta, each from the other two.

Source: McSherry, Talwar (2007); Dwork, Roth, "The Algorithmic Foundations of Differential
Privacy" (2014), "DR" below, Def. 3.4, Thm 3.10 (privacy) and Thm 3.11 (utility).

The mechanism outputs r in a finite range R with probability proportional to exp(eps u(x, r) /
(2 Delta)), Delta the sensitivity of the utility u; it is eps-DP (DR Thm 3.10) and

    Pr[u(output) <= OPT - (2 Delta / eps)(ln|R| + t)] <= e^-t          (DR Thm 3.11).

When the utility is monotone in the data set (adding a record raises every score, or lowers
every score), sampling proportionally to exp(eps u / Delta) is already eps-DP (DR, remark after
Thm 3.10; McSherry, Talwar 2007), and the same argument gives the bound with Delta / eps in
place of 2 Delta / eps. The refinement holds only for that sampling rule: `monotone` names it.

With c = 2 (standard) or c = 1 (monotone) and beta = e^-t the relation is

    alpha = (c Delta / eps)(ln|R| + ln(1 / beta)),

solved in closed form for each of eps, alpha, beta (beta in log space). The bound is vacuous
(beta >= 1) when alpha <= (c Delta / eps) ln|R|; beta is then reported as 1.

Pure Python (math only): this module is on the start-up path of `dpcalc mechanism exponential`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from dpcalc.core.mechanisms import exactly_two
from dpcalc.core.mechanisms.accuracy import AccuracyPoint, accuracy_table
from dpcalc.core.validation import OPEN_UNIT, POSITIVE, POSITIVE_INTEGER

# the one of epsilon, alpha and beta computed from the other two, or "accuracy": epsilon alone, its
# alpha at the standard failure probabilities (dpcalc.core.mechanisms.accuracy)
Unknown = Literal["epsilon", "alpha", "beta", "accuracy"]

SOURCE = "Dwork and Roth 2014, Thm 3.11 (McSherry and Talwar 2007)"
SOURCE_MONOTONE = "Dwork and Roth 2014, Thm 3.11 with the monotone-utility refinement after Thm 3.10 (McSherry and Talwar 2007)"
PRIVACY_SOURCE = "Dwork and Roth 2014, Thm 3.10"


@dataclass(frozen=True)
class ExponentialAccuracy:
    """The exponential mechanism's epsilon and the utility guarantee it gives.

    Pr[u(output) <= OPT - alpha] <= beta, for a utility of sensitivity `sensitivity` over
    `outcomes` possible outputs; `monotone` selects the sampling rule exp(eps u / Delta) (a
    monotone utility) instead of exp(eps u / (2 Delta)). `solved_for` names the computed one;
    from epsilon alone, alpha and beta are None. `accuracy` holds alpha (as `error`) at the
    standard failure probabilities beta.
    """

    epsilon: float
    alpha: float | None
    beta: float | None
    sensitivity: float
    outcomes: int
    monotone: bool
    solved_for: Unknown
    warnings: tuple[str, ...] = ()
    accuracy: tuple[AccuracyPoint, ...] = ()

    @property
    def factor(self) -> int:
        """c in alpha = (c Delta / eps)(ln|R| + t): 2 for the standard rule, 1 for the monotone one."""
        return 1 if self.monotone else 2

    @property
    def t(self) -> float | None:
        """t = ln(1 / beta) of DR Thm 3.11's e^-t (0 for a vacuous bound); None without a beta."""
        return None if self.beta is None else -math.log(self.beta)

    @property
    def sampling(self) -> str:
        """The sampling rule the guarantee assumes, in words."""
        return "exp(eps u / Delta)" if self.monotone else "exp(eps u / (2 Delta))"

    @property
    def source(self) -> str:
        """The theorem the guarantee comes from."""
        return SOURCE_MONOTONE if self.monotone else SOURCE


def exponential_alpha(epsilon: float, beta: float, *, sensitivity: float = 1.0, outcomes: int,
                      monotone: bool = False) -> float:
    """alpha = (c Delta / eps)(ln|R| + ln(1 / beta)) (DR Thm 3.11; c = 1 for a monotone utility)."""
    factor = 1.0 if monotone else 2.0
    return factor * sensitivity / epsilon * (math.log(outcomes) - math.log(beta))


def exponential_log_beta(epsilon: float, alpha: float, *, sensitivity: float = 1.0, outcomes: int,
                         monotone: bool = False) -> float:
    """log beta = ln|R| - eps alpha / (c Delta), the log of the bound's failure probability (may be >= 0:
    then the bound is vacuous)."""
    factor = 1.0 if monotone else 2.0
    return math.log(outcomes) - epsilon * alpha / (factor * sensitivity)


def exponential_accuracy(
    *,
    epsilon: float | None = None,
    alpha: float | None = None,
    beta: float | None = None,
    sensitivity: float = 1.0,
    outcomes: int,
    monotone: bool = False,
) -> ExponentialAccuracy:
    """Solve DR Thm 3.11's relation for the one of epsilon, alpha, beta not given (exactly two given,
    or epsilon alone: alpha at the standard failure probabilities)."""
    POSITIVE.check("sensitivity", sensitivity)
    POSITIVE_INTEGER.check("outcomes", outcomes)
    exactly_two("epsilon, alpha, beta", (("epsilon", epsilon), ("alpha", alpha), ("beta", beta)), first_alone=True)
    if epsilon is not None:
        POSITIVE.check("epsilon", epsilon)
    if alpha is not None:
        POSITIVE.check("alpha", alpha)
    if beta is not None:
        OPEN_UNIT.check("beta", beta)
    warnings: list[str] = []
    factor = 1.0 if monotone else 2.0
    solved: Unknown
    if epsilon is None:
        assert alpha is not None and beta is not None
        epsilon = factor * sensitivity / alpha * (math.log(outcomes) - math.log(beta))
        solved = "epsilon"
    elif alpha is None and beta is None:
        solved = "accuracy"
    elif alpha is None:
        assert beta is not None
        alpha = exponential_alpha(epsilon, beta, sensitivity=sensitivity, outcomes=outcomes, monotone=monotone)
        solved = "alpha"
    else:
        log_beta = exponential_log_beta(epsilon, alpha, sensitivity=sensitivity, outcomes=outcomes, monotone=monotone)
        if log_beta >= 0.0:
            beta = 1.0
            warnings.append(
                f"the bound is vacuous at this alpha: alpha must exceed (c Delta / eps) ln|R| = "
                f"{factor * sensitivity / epsilon * math.log(outcomes):.6g} for a failure probability below 1")
        else:
            # never 0: a failure probability too small for a float is shown as the smallest one
            beta = max(math.exp(log_beta), math.ulp(0.0))
        solved = "beta"
    at = epsilon

    def alpha_at(q: float) -> float:
        return exponential_alpha(at, q, sensitivity=sensitivity, outcomes=outcomes, monotone=monotone)

    return ExponentialAccuracy(epsilon, alpha, beta, sensitivity, outcomes, monotone, solved, tuple(warnings),
                               accuracy_table(alpha_at))
