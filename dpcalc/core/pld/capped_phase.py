"""One step of a capped Poisson phase under add-remove neighbours (`CappedPhase`): the pair that
dominates it (`capped_pair`), the rate at which a record is kept, which some neighbouring
datasets attain (`kept_rate`), and how far each lies from the Poisson pair (`step_distances`).

When a record's batch overflows the cap, the record can only push one other record out, so
each step is dominated by a revealed mixture of the Poisson pair at shift 1 and at shift 2
(`pairs.capped.RevealedMixture`), and a Poisson pair at the rate at which the record is kept is
attained (docs/mathematics.md, "Truncated Poisson sampling"). The run-level analysis, which
also bounds the cap by the overflow probability, is `truncation`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dpcalc.core.phases import Phase
from dpcalc.core.validation import POSITIVE_INTEGER

if TYPE_CHECKING:
    from dpcalc.core.pld.pairs.base import Pair

# scipy's binomial tail (the regularised incomplete beta function, Cephes) is accurate to a few
# ulps over its range (tests/core/pld/test_truncation.py checks it against mpmath at 50 digits);
# the overflow probability is taken this much larger, so that it bounds the truth from above.
TAIL_MARGIN = 1e-9
# The unit roundoff of float64.
_ULP = 2.0**-53


@dataclass(frozen=True)
class CappedPhase(Phase):
    """A Poisson-sampled Gaussian phase under add-remove neighbours whose batches are cut to at
    most `max_batch_size` records, on datasets of `dataset_size` records and their neighbours:
    the PLD accountant composes its step by step (`capped_pair`). Built by
    `truncation.account_truncated` only; the closed forms and the RDP curves do not know it."""

    dataset_size: int = 1
    max_batch_size: int = 1

    def __post_init__(self) -> None:
        super().__post_init__()
        POSITIVE_INTEGER.check("dataset size", self.dataset_size)
        POSITIVE_INTEGER.check("max batch size", self.max_batch_size)
        if not per_step_covers(self):
            raise ValueError("a capped phase is a Poisson-sampled gaussian phase under add-remove neighbours, "
                             "one example a user")


def per_step_covers(phase: Phase) -> bool:
    """Whether the step-by-step analysis of the cap applies: the Gaussian mechanism, Poisson
    sampling, add-remove neighbours, one example a user (module docstring)."""
    return (phase.mechanism == "gaussian" and phase.sampling == "poisson" and phase.neighbours == "add-remove"
            and phase.examples_per_user == 1)


def _tail(k: int, n: int, p: float) -> float:
    """P[Binomial(n, p) > k] (scipy's `bdtrc`, with its ends settled: 1 below 0, 0 from n on)."""
    from scipy.special import bdtrc

    if k < 0:
        return 1.0
    if k >= n:
        return 0.0
    return float(bdtrc(k, n, p))


def overflow_share(phase: CappedPhase) -> float:
    """w: an upper bound on the probability that the other records of a step fill at least B - 1
    places, P[Binomial(n - 1, p) >= B - 1], rounded up (docs/mathematics.md, "Truncated Poisson
    sampling"): the steps in which an added record may push another out, on either dataset of
    a neighbouring pair of n and n + 1 or n - 1 and n records."""
    share = _tail(phase.max_batch_size - 2, phase.dataset_size - 1, phase.sampling_probability)
    return min(1.0, share * (1.0 + TAIL_MARGIN))


def kept_rate(phase: CappedPhase) -> float:
    """q: a lower bound on the probability that a record joins the kept batch when the n - 1
    other records are drawn as well and B of the drawn ones are kept uniformly at random,
    p E[min(1, B/(K + 1))] for K ~ Binomial(n - 1, p), rounded down. With
    E[1/(K + 1); K >= B] = P[Binomial(n, p) > B]/(n p) (the binomial identity
    C(m, k)/(k + 1) = C(m + 1, k + 1)/(m + 1)), q = p P[K <= B - 1] + B P[Binomial(n, p) > B]/n."""
    p, b, others = phase.sampling_probability, phase.max_batch_size, phase.dataset_size - 1
    # each tail is taken TAIL_MARGIN to the side that lowers q; the sums and products add ulps
    below = 1.0 - _tail(b - 1, others, p) * (1.0 + TAIL_MARGIN)  # P[K <= B - 1]
    rate = p * below + b * _tail(b, others + 1, p) / (others + 1) * (1.0 - TAIL_MARGIN)
    return min(p, max(0.0, rate - 8.0 * _ULP * p))


def capped_pair(phase: CappedPhase, direction: str) -> Pair:
    """One step of a capped phase in `direction` (remove or add): the revealed mixture of the
    Poisson pair at shift 1, weight 1 - w, and at shift 2, weight w (`overflow_share`), which
    dominates the capped step (docs/mathematics.md, "Truncated Poisson sampling")."""
    from dpcalc.core.pld.pairs import GaussianPair
    from dpcalc.core.pld.pairs.capped import RevealedMixture

    share = overflow_share(phase)
    p, sigma = phase.sampling_probability, phase.noise
    return RevealedMixture([(1.0 - share, GaussianPair(p, sigma, direction)),
                            (share, GaussianPair(p, sigma / 2.0, direction))])


def step_distances(capped: Sequence[CappedPhase]) -> tuple[float, float]:
    """(above, below): bounds on how far, in total variation, the compositions of the capped
    pairs (above) and of the pairs at the kept rate (below) lie from the Poisson run's, on the
    side of each pair that differs; each moves delta(eps) by at most (1 + e^eps) times it, as an
    overflow probability does (docs/mathematics.md, "Truncated Poisson sampling").

    A capped pair differs from the Poisson pair only in its shift-2 branch, weight w, where the
    record's law is (1 - p) N(0) + p N(2) instead of (1 - p) N(0) + p N(1): at most w p tv a step,
    tv = P(|Z| < 1/(2 sigma)) the distance of N(2) from N(1). The pair at the kept rate q differs
    from the Poisson pair by (p - q) tv a step. Steps add up (a coupling a step)."""
    above = below = 0.0
    for phase in capped:
        p = phase.sampling_probability
        tv = min(1.0, math.erf(0.5 / (phase.noise * math.sqrt(2.0))) * (1.0 + 4e-16) + 1e-300)
        steps = phase.steps_float
        above += steps * overflow_share(phase) * p * tv
        below += steps * (p - kept_rate(phase)) * tv
    return min(1.0, above * (1.0 + 1e-12)), min(1.0, below * (1.0 + 1e-12))
