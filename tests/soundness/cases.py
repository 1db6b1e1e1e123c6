"""One case of the harness: a tiny pipeline, dpcalc's certified interval on delta(eps) for it,
and every enumerated neighbouring pair's delta against that interval (enumeration.py).

A case names the dataset size n the user gives dpcalc. Its neighbouring pairs are those a dataset
of n records can be part of: under add-remove the other records number n - 1 or n (the larger
dataset holds n or n + 1 records; both must be covered by the figure for n), under replace-one
and zero-out n - 1 (both datasets hold n). Every multiset of the other records' gradients is
enumerated.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache

from tests.soundness import enumeration as E

# How many pairs, the best by a cheap screen (the axes and all-ones projections), get the full
# treatment (every direction; the 2-D bracket for T = 2). T = 1 is exact for every pair.
FULL = 3


@dataclass(frozen=True)
class Case:
    scheme: str  # poisson, uniform, shuffle, allocation, truncated, user
    relation: str  # add-remove, replace-one, zero-out
    n: int
    batch: int
    steps: int  # T (poisson, uniform, truncated, user) or epochs (shuffle, allocation)
    sigma: float
    eps: tuple[float, ...] = (0.5, 1.0, 2.0)
    cap: int | None = None  # truncated: the cap B
    k: int = 1  # user: examples per user

    def __str__(self) -> str:
        extra = f" cap {self.cap}" if self.cap else f" k {self.k}" if self.scheme == "user" else ""
        unit = "epochs" if self.scheme in ("shuffle", "allocation") else "T"
        return (f"{self.scheme}/{self.relation} n {self.n} b {self.batch} {unit} {self.steps} sigma {self.sigma}"
                f"{extra}")

    @property
    def rate(self) -> Fraction:
        """p as dpcalc receives it: the float b/n, exactly."""
        return Fraction(self.batch / self.n)

    def enumerated(self) -> E.Scheme:
        name = self.scheme
        if name in ("poisson", "user"):
            return E.Scheme(name, self.steps, rate=self.rate)
        if name == "truncated":
            return E.Scheme(name, self.steps, rate=self.rate, cap=self.cap)
        if name in ("uniform", "shuffle"):
            return E.Scheme(name, self.steps, batch=self.batch)
        if name == "allocation":
            return E.Scheme(name, self.steps, epoch_steps=math.ceil(self.n / self.batch))
        raise ValueError(name)

    def pairs(self) -> list[E.Pair]:
        if self.scheme == "user":
            return [pair for group in E.user_groups(self.k) for others in E.datasets(self.n - 1)
                    for pair in E.pairs(self.relation, others, group)]
        sizes = (self.n - 1, self.n) if self.relation == "add-remove" else (self.n - 1,)
        return [pair for size in sizes for others in E.datasets(size) for pair in E.pairs(self.relation, others)]


@cache
def certified(case: Case, eps: float):  # -> dpcalc.core.pld.PLDResult
    """dpcalc's certified interval on delta(eps) for the case (the Python API, as `pld --eps`)."""
    from dpcalc.api import pld_delta

    common = {"eps": eps, "sigma": case.sigma, "neighbours": case.relation}
    if case.scheme == "poisson":
        return pld_delta(p=case.batch / case.n, T=case.steps, **common)
    if case.scheme == "user":
        return pld_delta(p=case.batch / case.n, T=case.steps, examples_per_user=case.k, **common)
    if case.scheme == "truncated":
        return pld_delta(n=case.n, batch_size=case.batch, T=case.steps, max_batch_size=case.cap, **common)
    if case.scheme == "uniform":
        return pld_delta(n=case.n, batch_size=case.batch, T=case.steps, sampling="uniform", **common)
    return pld_delta(n=case.n, batch_size=case.batch, epochs=case.steps, sampling=case.scheme, **common)


@dataclass
class Outcome:
    """One case at one eps: dpcalc's interval and what the enumerated pairs attain."""

    case: Case
    eps: float
    upper: float  # dpcalc's certified upper bound on delta
    lower: float  # dpcalc's certified lower bound on delta
    pairs: int  # pairs checked
    best: E.Bracket  # the pair with the largest lower bound on its delta
    best_label: str
    attained_upper: float  # the largest upper bound on a pair's delta (inf where T > 2: not bracketed)
    violations: list[str] = field(default_factory=list)  # pairs whose delta is certainly above dpcalc's upper

    @property
    def ratio(self) -> float:
        """(attained lower bound on delta) / (dpcalc's certified upper delta)."""
        return self.best.lower / self.upper if self.upper > 0 else (math.inf if self.best.lower > 0 else 0.0)

    @property
    def lower_checked(self) -> bool:
        """Whether dpcalc's lower bound can be checked: every run of at most two steps is bracketed."""
        return math.isfinite(self.attained_upper)


def check(case: Case, eps: float, *, full: int = FULL, against=None) -> Outcome:
    """Enumerate the case's pairs and compare them with dpcalc's interval at eps.

    T = 1: every pair exact. T >= 2: every pair screened by the axes and all-ones projections,
    the `full` best bracketed in full (every direction, and the 2-D bracket for T = 2). For
    dpcalc's lower bound (T <= 2) the pairs are bracketed in the screen's order until one's upper
    end reaches it: the check fails only when every pair's delta is certainly below it.
    `against`: the interval to compare with (delta_lower, delta_upper) in place of dpcalc's for the case.
    """
    result = certified(case, eps) if against is None else against
    scheme = case.enumerated()
    entries: list[list] = []  # [bracket, pair, p, q, bracketed in full]
    for pair in case.pairs():
        p, q = E.law(scheme, pair.first), E.law(scheme, pair.second)
        dimension = p[0].shape[1]
        if dimension != q[0].shape[1]:
            raise ValueError(f"{pair.label}: the two datasets have different numbers of steps")
        if dimension == 1:
            entries.append([E.bracket(p, q, case.sigma, eps), pair, p, q, True])
            continue
        screen = max(E.delta_1d(E.project(p, u), E.project(q, u), case.sigma * math.sqrt(sum(v * v for v in u)),
                                eps).lower for u in E.directions(dimension)[:dimension + 1])
        entries.append([E.Bracket(screen), pair, p, q, False])
    entries.sort(key=lambda entry: -entry[0].lower)
    for entry in entries[:full]:
        if not entry[4]:
            entry[0], entry[4] = E.bracket(entry[2], entry[3], case.sigma, eps), True
    dimension = entries[0][2][0].shape[1]
    attained_upper = math.inf
    if dimension <= 2:
        attained_upper = 0.0
        for entry in entries:
            if not entry[4]:
                entry[0], entry[4] = E.bracket(entry[2], entry[3], case.sigma, eps), True
            attained_upper = max(attained_upper, entry[0].upper)
            if attained_upper >= result.delta_lower:
                break
    best = max(entries, key=lambda entry: entry[0].lower)
    violations = [f"{entry[1].label}: delta >= {entry[0].lower!r} > certified upper {result.delta_upper!r}"
                  for entry in entries if entry[0].lower > result.delta_upper]
    return Outcome(case, eps, result.delta_upper, result.delta_lower, len(entries), best[0], best[1].label,
                   attained_upper, violations)


# The default suite's cases: one eps each, a second or two apiece (T = 1, or one epoch of two steps).
FAST: tuple[Case, ...] = (
    Case("poisson", "add-remove", 6, 2, 1, 1.0, eps=(1.0,)),
    Case("poisson", "replace-one", 6, 2, 1, 0.5, eps=(1.0,)),
    Case("poisson", "zero-out", 6, 2, 1, 2.0, eps=(0.5,)),
    Case("uniform", "replace-one", 6, 2, 1, 1.0, eps=(1.0,)),
    Case("shuffle", "zero-out", 4, 2, 1, 1.0, eps=(1.0,)),
    Case("shuffle", "replace-one", 4, 2, 1, 1.0, eps=(1.0,)),
    Case("allocation", "add-remove", 4, 2, 1, 1.0, eps=(0.5,)),
    Case("truncated", "add-remove", 6, 2, 1, 1.0, eps=(1.0,), cap=2),
    Case("truncated", "zero-out", 6, 2, 1, 1.0, eps=(0.5,), cap=3),
    Case("user", "add-remove", 6, 2, 1, 1.0, eps=(1.0,), k=2),
    Case("user", "zero-out", 6, 2, 1, 1.0, eps=(1.0,), k=2),
)

# The cases that need the accounting of fixed-size batches under add-remove and zero-out.
UNIFORM_FAST: tuple[Case, ...] = (
    Case("uniform", "add-remove", 6, 2, 1, 1.0, eps=(1.0,)),
    Case("uniform", "zero-out", 6, 2, 1, 1.0, eps=(1.0,)),
)

SIGMAS = (0.5, 1.0, 2.0)


def _grid(scheme: str, relation: str) -> list[Case]:
    """The slow suite's cases of one scheme and relation: n from 4 to 12, T or epochs 1 to 3, every sigma."""
    if scheme in ("shuffle", "allocation"):
        shapes = [(4, 2, 1), (4, 2, 2), (12, 6, 1), (6, 3, 2)]
    else:
        shapes = [(4, 2, 1), (12, 4, 1), (6, 2, 2), (5, 2, 3)]
    cases = []
    for n, b, steps in shapes:
        for sigma in SIGMAS:
            if scheme == "truncated":
                cases += [Case(scheme, relation, n, b, steps, sigma, cap=cap) for cap in (b, b + 1)
                          if cap > b or steps == 1]
            elif scheme == "user":
                cases += [Case(scheme, relation, n, b, steps, sigma, k=k) for k in (2, 3) if steps == 1 or k == 2]
            else:
                cases.append(Case(scheme, relation, n, b, steps, sigma))
    return cases


# Every scheme and relation dpcalc answers (fixed-size batches under add-remove and zero-out
# once accounted), with the slow suite's cases.
COMBINATIONS: tuple[tuple[str, str], ...] = (
    ("poisson", "add-remove"), ("poisson", "replace-one"), ("poisson", "zero-out"),
    ("uniform", "replace-one"), ("uniform", "add-remove"), ("uniform", "zero-out"),
    ("shuffle", "zero-out"), ("shuffle", "replace-one"),
    ("allocation", "add-remove"), ("allocation", "zero-out"),
    ("truncated", "add-remove"), ("truncated", "zero-out"), ("truncated", "replace-one"),
    ("user", "add-remove"), ("user", "zero-out"),
)
SLOW: dict[tuple[str, str], list[Case]] = {combination: _grid(*combination) for combination in COMBINATIONS}
