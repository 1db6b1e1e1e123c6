"""The Laplace mechanism for counting queries, histograms and probability vectors.

Source: Dwork, Roth, "The Algorithmic Foundations of Differential Privacy" (2014), "DR" below:
Def. 3.3 and Thm 3.6 (adding Lap(b), b = Delta_1 / epsilon, to a query of L1 sensitivity
Delta_1 is epsilon-DP), Fact 3.7 (P(|Y| >= t b) = e^(-t)) and Sec. 3.3 (histogram queries).

The L1 sensitivity follows from what is released (docs/mathematics.md, "Mechanisms: laplace"):

* counts (a counting query, or a histogram of m disjoint bins): one person changes one bin by
  1 when added or removed (Delta_1 = 1), and two bins by 1 each when replaced by another
  (Delta_1 = 2);
* simplex (vectors on the probability simplex, such as one client's softmax output under local
  DP): two probability vectors p, p' differ by up to ||p - p'||_1 = 2 (their mass moved from
  one coordinate to another), not 1;
* real: a query whose L1 sensitivity the user states.

The accuracy is the simultaneous error over all m coordinates: with independent noise in
each, P(max_i |Y_i| <= t) = (1 - e^(-t/b))^m exactly (the product, no union bound). It is
solved by the same functions as `dpcalc laplace-eps` (dpcalc.core.laplace): failure
probabilities are carried as 1 - P with log1p/expm1, so confidences near 1 keep their digits.

Pure Python (math only): on the start-up path of `dpcalc mechanism laplace`.
"""

from __future__ import annotations

import math
from typing import Literal

from dpcalc.core.laplace import laplace_accuracy, scaled_tolerance_for
from dpcalc.core.mechanisms.accuracy import AccuracyPoint, accuracy_table
from dpcalc.core.record import Value
from dpcalc.core.validation import POSITIVE, POSITIVE_INTEGER, ParameterError

Domain = Literal["counts", "simplex", "real"]
DOMAINS: tuple[str, ...] = ("counts", "simplex", "real")
Relation = Literal["add-remove", "replace-one"]
RELATIONS: tuple[str, ...] = ("add-remove", "replace-one")
# what was computed: one of epsilon, error and confidence from the other two, or, from privacy
# alone, the scale (from epsilon) or epsilon (from the scale)
Unknown = Literal["epsilon", "error", "confidence", "scale"]

SOURCE = "Dwork and Roth 2014, Thm 3.6 (privacy), Fact 3.7 (accuracy, exact product over the bins)"

SIMPLEX_NOTE = (
    "domain simplex: two probability vectors differ by up to 2 in L1 (all mass moved from one "
    "coordinate to another), not 1, so the noise is calibrated to sensitivity 2."
)


class LaplaceMechanism(Value):
    """The Laplace mechanism on `bins` coordinates: privacy, noise and simultaneous accuracy.

    `confidence` is the probability that all `bins` coordinates are within +-`error` of the
    truth; `failure_probability` = 1 - confidence, kept separately (the precise quantity near
    1). `solved_for` names the one of epsilon (with its scale), error and confidence computed;
    from privacy alone (epsilon or the scale), error and confidence are None and `solved_for` is
    "scale" or "epsilon". `accuracy` is the error bound at the standard confidences
    (dpcalc.core.mechanisms.accuracy), whatever was given.
    """

    epsilon: float
    scale: float
    sensitivity: float
    domain: Domain
    neighbours: Relation
    bins: int
    error: float | None
    confidence: float | None
    failure_probability: float | None
    solved_for: Unknown
    accuracy: tuple[AccuracyPoint, ...] = ()
    source: str = SOURCE
    warnings: tuple[str, ...] = ()

    @property
    def std(self) -> float:
        """The standard deviation of each coordinate's noise Lap(b): sqrt(2) b (DR Def. 3.2)."""
        return math.sqrt(2.0) * self.scale

    @property
    def per_bin_failure_probability(self) -> float | None:
        """P(|Y_i| > error) for one coordinate: e^(-error / b) (DR Fact 3.7); None without an error."""
        if self.error is None or self.failure_probability is None:
            return None
        if not self.scale > 0.0:
            return 0.0
        ratio = self.error / self.scale
        if math.isnan(ratio):  # error and scale both overflowed (epsilon near 1e-320): from the simultaneous q
            return -math.expm1(math.log1p(-self.failure_probability) / self.bins)
        return math.exp(-ratio)


def l1_sensitivity(domain: Domain, neighbours: Relation, sensitivity: float | None = None) -> float:
    """The L1 sensitivity of what is released (the module docstring): counts 1 under add/remove
    and 2 under replace-one, simplex 2, real the value given (default 1)."""
    if domain == "counts":
        if sensitivity is not None:
            raise ParameterError("sensitivity", "not given with domain counts (1 under add-remove, 2 under replace-one)",
                                 sensitivity)
        return 1.0 if neighbours == "add-remove" else 2.0
    if domain == "simplex":
        if sensitivity is not None:
            raise ParameterError("sensitivity", "not given with domain simplex (2: the L1 diameter of the simplex)",
                                 sensitivity)
        return 2.0
    if domain == "real":
        value = 1.0 if sensitivity is None else sensitivity
        POSITIVE.check("sensitivity", value)
        if math.isinf(value):
            raise ParameterError("sensitivity", "in (0, inf)", value)
        return value
    raise ParameterError("domain", f"one of {', '.join(DOMAINS)}", domain)


def laplace_mechanism(
    *,
    epsilon: float | None = None,
    scale: float | None = None,
    error: float | None = None,
    confidence: float | None = None,
    domain: Domain = "counts",
    neighbours: Relation = "add-remove",
    bins: int = 1,
    sensitivity: float | None = None,
    failure_probability_exact: float | None = None,
) -> LaplaceMechanism:
    """Solve for the one of privacy (epsilon, or its noise scale b = Delta_1 / epsilon), error
    and confidence not given (DR Thm 3.6, Fact 3.7; docs/mathematics.md, "Mechanisms: laplace").

    At most one of `epsilon` and `scale` (they are the same quantity); two of {epsilon or scale,
    error, confidence}, or privacy alone (the noise, and its accuracy at the standard
    confidences). `failure_probability_exact` may accompany `confidence` with 1 - confidence
    computed exactly from its decimal text.
    """
    if epsilon is not None and scale is not None:
        raise ValueError("give epsilon or scale, not both (scale = sensitivity / epsilon)")
    if neighbours not in RELATIONS:
        raise ParameterError("neighbours", f"one of {', '.join(RELATIONS)}", neighbours)
    POSITIVE_INTEGER.check("bins", bins)
    delta_1 = l1_sensitivity(domain, neighbours, sensitivity)
    if scale is not None:
        if math.isnan(scale) or not 0.0 < scale < math.inf:
            raise ParameterError("scale", "in (0, inf)", scale)
        epsilon = delta_1 / scale
        if math.isinf(epsilon):
            raise ParameterError("scale", f"at least sensitivity / 1.8e308 = {delta_1 / 1.7976931348623157e308:g}", scale)
    if error is None and confidence is None and epsilon is not None:
        POSITIVE.check("epsilon", epsilon)
        return LaplaceMechanism(
            epsilon=epsilon, scale=delta_1 / epsilon if scale is None else scale, sensitivity=delta_1, domain=domain,
            neighbours=neighbours, bins=bins, error=None, confidence=None, failure_probability=None,
            solved_for="scale" if scale is None else "epsilon", accuracy=_accuracy(epsilon, delta_1, bins),
            warnings=(SIMPLEX_NOTE,) if domain == "simplex" else (),
        )
    accuracy = laplace_accuracy(
        tolerance=error,
        probability=confidence,
        epsilon=epsilon,
        sensitivity=delta_1,
        dims=bins,
        failure_probability_exact=failure_probability_exact,
    )
    unknown: Unknown = "error" if accuracy.solved_for == "tolerance" else (
        "confidence" if accuracy.solved_for == "probability" else "epsilon")
    warnings = list(accuracy.warnings)
    if domain == "simplex":
        warnings.insert(0, SIMPLEX_NOTE)
    return LaplaceMechanism(
        epsilon=accuracy.epsilon,
        scale=accuracy.scale if scale is None else scale,
        sensitivity=delta_1,
        domain=domain,
        neighbours=neighbours,
        bins=bins,
        error=accuracy.tolerance,
        confidence=accuracy.probability,
        failure_probability=accuracy.failure_probability,
        solved_for=unknown,
        accuracy=_accuracy(accuracy.epsilon, delta_1, bins),
        warnings=tuple(warnings),
    )


def _accuracy(epsilon: float, sensitivity: float, bins: int) -> tuple[AccuracyPoint, ...]:
    """The error bound for all `bins` at the standard confidences: t = x Delta_1 / epsilon with x
    the scaled tolerance of DR Fact 3.7 (the relation `laplace_accuracy` solves), inf at epsilon 0."""
    if not epsilon > 0.0:
        return accuracy_table(lambda q: math.inf)
    return accuracy_table(lambda q: scaled_tolerance_for(q, bins, False, 1.0 - q) * sensitivity / epsilon)
