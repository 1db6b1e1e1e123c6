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
from functools import lru_cache

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


@lru_cache(maxsize=None)
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


def check(case: Case, eps: float, *, full: int = FULL) -> Outcome:
    """Enumerate the case's pairs and compare them with dpcalc's interval at eps.

    T = 1: every pair exact. T >= 2: every pair screened by the axes and all-ones projections,
    the `full` best bracketed in full (every direction, and the 2-D bracket for T = 2). For
    dpcalc's lower bound (T <= 2) the pairs are bracketed in the screen's order until one's upper
    end reaches it: the check fails only when every pair's delta is certainly below it.
    """
    result = certified(case, eps)
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
