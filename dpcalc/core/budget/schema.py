"""The budget file's schema: what a budget file may say, and the file as read.

A budget file is TOML: one `[budget]` table (epsilon, delta, optional accountant, neighbours,
attack-risk limits) and any number of `[[release]]` tables, each naming a mechanism and its
parameters. The tables below list each key a table takes and the range of its value; the file
as read is a `BudgetFile` of `Release`s, and a malformed one raises `BudgetFileError`. Reading
and checking the text against this schema is `load.load_budget`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import overload

from dpcalc.core.accountants import CERTIFIED_ACCOUNTANTS
from dpcalc.core.limits import EXAMPLES_PER_USER
from dpcalc.core.mechanisms.gaussian import CLIPPINGS
from dpcalc.core.mechanisms.laplace import DOMAINS
from dpcalc.core.mechanisms.noisy_max import NOISES
from dpcalc.core.phases import NEIGHBOURS, SAMPLINGS, Neighbours
from dpcalc.core.presets import FRAMEWORKS
from dpcalc.core.validation import (
    NON_NEGATIVE,
    OPEN_UNIT,
    POSITIVE,
    POSITIVE_INTEGER,
    PROBABILITY,
    Interval,
)

ACCOUNTANTS = CERTIFIED_ACCOUNTANTS  # pld, rdp: a budget is gated by certified figures only
RR_VALUES = Interval(2.0, 1e15, low_closed=True, high_closed=True, integer=True)  # k of randomized response
UNIT_OR_ZERO = Interval(0.0, 1.0, low_closed=True)  # a release's own delta may be 0
# The count of a release composed by the composition theorems (dp, randomized response, ptr, smooth
# sensitivity, the textbook mechanisms): their k, at most 1e10 (core.composition.results.COMPOSITIONS)
COMPOSED_COUNT = Interval(1.0, 1e10, low_closed=True, high_closed=True, integer=True)

# mechanism -> {key: (interval or None for text, required?)}; "name" and "mechanism" are common.
# Alternatives (sigma/T vs n/batch_size/epochs, scale vs epsilon) are checked after the keys.
MECHANISMS: dict[str, dict[str, Interval]] = {
    # sigma is the noise multiplier (noise std / L2 sensitivity), or noise_std with sensitivity
    "subsampled-gaussian": {
        "p": PROBABILITY, "sigma": POSITIVE, "noise_std": POSITIVE, "sensitivity": POSITIVE, "T": POSITIVE_INTEGER,
        "n": POSITIVE_INTEGER, "batch_size": POSITIVE_INTEGER, "epochs": POSITIVE,
        "examples_per_user": EXAMPLES_PER_USER, "max_batch_size": POSITIVE_INTEGER,
    },
    # amplified BandMF (docs/matrix-factorisation.md §4): the DP-SGD run's keys and the bands b,
    # the columns of the strategy matrix of norm at most 1
    "bandmf": {
        "p": PROBABILITY, "sigma": POSITIVE, "T": POSITIVE_INTEGER, "n": POSITIVE_INTEGER,
        "batch_size": POSITIVE_INTEGER, "epochs": POSITIVE, "bands": POSITIVE_INTEGER,
    },
    # sigma is the noise multiplier (noise std / L2 sensitivity, as in subsampled-gaussian), or
    # noise_std with sensitivity; or per-coordinate noise, the lists sensitivities and noise_stds
    # (LIST_KEYS) with clipping
    "gaussian": {"sigma": POSITIVE, "noise_std": POSITIVE, "sensitivity": POSITIVE, "count": POSITIVE_INTEGER},
    # sensitivity: the L1 sensitivity, set by domain (counts 1, simplex 2) unless domain is real
    "laplace": {"scale": POSITIVE, "epsilon": POSITIVE, "sensitivity": POSITIVE, "count": POSITIVE_INTEGER},
    "dp": {"epsilon": NON_NEGATIVE, "delta": UNIT_OR_ZERO, "count": COMPOSED_COUNT},
    "gdp": {"mu": POSITIVE, "count": POSITIVE_INTEGER},
    "zcdp": {"rho": POSITIVE, "count": POSITIVE_INTEGER},
    # pure eps-DP per respondent; flip_probability in (0, (k - 1)/k) instead of epsilon
    "randomized-response": {"epsilon": POSITIVE, "flip_probability": OPEN_UNIT, "k": RR_VALUES,
                            "count": COMPOSED_COUNT},
    # propose-test-release: epsilon is what the test and the release each spend ((2 epsilon, delta)-DP)
    "ptr": {"epsilon": POSITIVE, "delta": OPEN_UNIT, "count": COMPOSED_COUNT},
    # smooth sensitivity: noise laplace ((epsilon, delta)-DP), cauchy or student-t (epsilon-DP), or
    # laplace-log-normal ((epsilon^2/2)-CDP)
    "smooth-sensitivity": {"epsilon": POSITIVE, "delta": OPEN_UNIT, "count": COMPOSED_COUNT},
    # the textbook mechanisms of `dpcalc mechanism`, each eps-DP at its epsilon (noisy-max also names its noise)
    "exponential": {"epsilon": POSITIVE, "count": COMPOSED_COUNT},
    "noisy-max": {"epsilon": POSITIVE, "count": COMPOSED_COUNT},
    "svt": {"epsilon": POSITIVE, "count": COMPOSED_COUNT},
}
BUDGET_KEYS = {"epsilon": POSITIVE, "delta": OPEN_UNIT}
# Text keys: of the budget (the neighbour relation the budget is stated in) and of a
# subsampled-gaussian release (how its batches are drawn), with their allowed values.
BUDGET_TEXT_KEYS = {"accountant": ACCOUNTANTS, "neighbours": NEIGHBOURS, "like": FRAMEWORKS}
# Attack-risk limits of a budget: max_advantage = A, tpr_at_fpr = {fpr = Y, tpr = X}.
BUDGET_RISK_KEYS = ("max_advantage", "tpr_at_fpr")
SMOOTH_SENSITIVITY_NOISES = ("laplace", "cauchy", "laplace-log-normal", "student-t")
RELEASE_TEXT_KEYS: dict[str, dict[str, tuple[str, ...]]] = {
    "subsampled-gaussian": {"sampling": SAMPLINGS}, "gaussian": {"clipping": CLIPPINGS},
    "laplace": {"domain": DOMAINS}, "smooth-sensitivity": {"noise": SMOOTH_SENSITIVITY_NOISES},
    "noisy-max": {"noise": NOISES}}
# Keys whose value is a list of numbers: a gaussian release's per-coordinate noise (the mechanism
# of `dpcalc mechanism gaussian --sensitivities --noise-stds`).
LIST_KEYS = {"gaussian": {"sensitivities": POSITIVE, "noise_stds": POSITIVE}}
# Keys of an earlier meaning, refused with their new name: (mechanism, key) -> the message's reason.
RENAMED_KEYS = {
    ("gaussian", "sigmas"): "'sigma' is a noise multiplier elsewhere; the per-coordinate noise stds are 'noise_stds'",
}


class BudgetFileError(ValueError):
    """A malformed budget file; the message names the file, the line or release, and the problem."""


@dataclass(frozen=True)
class Release:
    """One thing the project releases, with its parameters as given (defaults applied)."""

    name: str
    mechanism: str
    parameters: dict[str, float] = field(default_factory=dict)
    line: int = 0
    sampling: str = "poisson"  # subsampled-gaussian: poisson, uniform, shuffle or allocation
    texts: dict[str, str] = field(default_factory=dict)  # the other text keys given (clipping, domain)
    lists: dict[str, tuple[float, ...]] = field(default_factory=dict)  # list keys (sensitivities, noise_stds)

    @property
    def noise(self) -> str:
        """The noise a release names: smooth-sensitivity (laplace, cauchy, laplace-log-normal or
        student-t) and noisy-max (laplace, gumbel or exponential); "" otherwise."""
        return self.texts.get("noise", "")

    @overload
    def get(self, key: str) -> float | None: ...

    @overload
    def get(self, key: str, default: float) -> float: ...

    def get(self, key: str, default: float | None = None) -> float | None:
        """The parameter `key` as given, or `default` (a float default gives a float)."""
        return self.parameters.get(key, default)

    def number(self, key: str) -> float:
        """A parameter the mechanism requires, present once the release is checked (`load.load_budget`)."""
        return self.parameters[key]


@dataclass(frozen=True)
class BudgetFile:
    """A budget file: the total (epsilon, delta) allowed, the accountant that composes the
    mechanism releases (pld or rdp, both certified: docs/mathematics.md §3, §2), and the releases.
    `epsilon` is None in a budget of attack-risk limits alone (then the total epsilon at delta is
    reported, not gated)."""

    epsilon: float | None
    delta: float
    accountant: str
    releases: tuple[Release, ...]
    source: str
    neighbours: Neighbours = "add-remove"  # the relation the budget is stated in
    # Attack-risk limits (docs/mathematics.md §8): the largest certified advantage, and the
    # largest certified TPR at an FPR, as (fpr, tpr); None when the budget sets none.
    max_advantage: float | None = None
    tpr_at_fpr: tuple[float, float] | None = None
    like: str | None = None  # a framework whose estimate is shown beside the total (never gated)
