"""Privacy budgets as code: the budget file's schema, read and checked field by field.

A budget file is TOML: one `[budget]` table (epsilon, delta, optional accountant) and any
number of `[[release]]` tables, each naming a mechanism and its parameters. Every problem is
reported with the file name, the line of the release and what is wrong, e.g.

    privacy-budget.toml:12: release 'counts': unknown key 'sigam' (did you mean 'sigma'?)
"""

from __future__ import annotations

import difflib
import math
import re
import sys
from dataclasses import dataclass, field
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 reads TOML with tomli, tomllib's origin
    import tomli as tomllib

from dpcalc.core.validation import (
    MAX_COUNT,
    MAX_COUNT_DIGITS,
    NON_NEGATIVE,
    OPEN_UNIT,
    POSITIVE,
    POSITIVE_INTEGER,
    PROBABILITY,
    Interval,
    large_delta_warnings,
)

ACCOUNTANTS = ("pld", "rdp")
UNIT_OR_ZERO = Interval(0.0, 1.0, low_closed=True)  # a release's own delta may be 0

# mechanism -> {key: (interval or None for text, required?)}; "name" and "mechanism" are common.
# Alternatives (sigma/T vs n/batch_size/epochs, scale vs epsilon) are checked after the keys.
MECHANISMS: dict[str, dict[str, Interval]] = {
    "subsampled-gaussian": {
        "p": PROBABILITY, "sigma": POSITIVE, "T": POSITIVE_INTEGER,
        "n": POSITIVE_INTEGER, "batch_size": POSITIVE_INTEGER, "epochs": POSITIVE,
    },
    "gaussian": {"sigma": POSITIVE, "sensitivity": POSITIVE, "count": POSITIVE_INTEGER},
    "laplace": {"scale": POSITIVE, "epsilon": POSITIVE, "sensitivity": POSITIVE, "count": POSITIVE_INTEGER},
    "dp": {"epsilon": NON_NEGATIVE, "delta": UNIT_OR_ZERO, "count": POSITIVE_INTEGER},
    "gdp": {"mu": POSITIVE, "count": POSITIVE_INTEGER},
    "zcdp": {"rho": POSITIVE, "count": POSITIVE_INTEGER},
}
BUDGET_KEYS = {"epsilon": POSITIVE, "delta": OPEN_UNIT}


class BudgetFileError(ValueError):
    """A malformed budget file; the message names the file, the line or release, and the problem."""


@dataclass(frozen=True)
class Release:
    """One thing the project releases, with its parameters as given (defaults applied)."""

    name: str
    mechanism: str
    parameters: dict[str, float] = field(default_factory=dict)
    line: int = 0

    def get(self, key: str, default: float | None = None) -> float | None:
        return self.parameters.get(key, default)


@dataclass(frozen=True)
class BudgetFile:
    epsilon: float
    delta: float
    accountant: str
    releases: tuple[Release, ...]
    source: str


def load_budget(text: str, source: str) -> BudgetFile:
    """Parse and check a budget file's text; `source` names it in error messages."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise BudgetFileError(f"{source}: TOML syntax error: {error}") from None
    release_lines = _release_lines(text)
    unknown = set(document) - {"budget", "release"}
    if unknown:
        key = sorted(unknown)[0]
        raise BudgetFileError(f"{source}:{_line_of(text, key)}: unknown top-level key '{key}'"
                              f"{_suggest(key, ['budget', 'release'])}; expected [budget] and [[release]]")
    if "budget" not in document or not isinstance(document["budget"], dict):
        raise BudgetFileError(f"{source}: missing [budget] table with epsilon and delta")
    budget = document["budget"]
    where = f"{source}:{_line_of(text, '[budget]')}: [budget]"
    for key in budget:
        if key not in (*BUDGET_KEYS, "accountant"):
            raise BudgetFileError(f"{where}: unknown key '{key}'{_suggest(key, [*BUDGET_KEYS, 'accountant'])}")
    values = {key: _number(where, key, budget.get(key), interval) for key, interval in BUDGET_KEYS.items()}
    accountant = budget.get("accountant", "pld")
    if accountant not in ACCOUNTANTS:
        raise BudgetFileError(f"{where}: accountant must be one of {', '.join(ACCOUNTANTS)}, got {accountant!r}")
    raw_releases = document.get("release", [])
    if not isinstance(raw_releases, list):
        raise BudgetFileError(f"{source}: 'release' must be an array of tables, written [[release]]")
    releases = []
    names: set[str] = set()
    for index, raw in enumerate(raw_releases):
        line = release_lines[index] if index < len(release_lines) else 0
        release = _release(raw, index, line, source)
        if release.name in names:
            raise BudgetFileError(f"{source}:{line}: release '{release.name}': the name is used twice")
        names.add(release.name)
        releases.append(release)
    # No [[release]] entries: a project that has released nothing, within any budget (account_budget).
    return BudgetFile(values["epsilon"], values["delta"], accountant, tuple(releases), source)


def _release(raw: Any, index: int, line: int, source: str) -> Release:
    label = f"release {index + 1}"
    if not isinstance(raw, dict):
        raise BudgetFileError(f"{source}:{line}: {label}: must be a table")
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise BudgetFileError(f"{source}:{line}: {label}: missing 'name' (a non-empty string)")
    where = f"{source}:{line}: release '{name}'"
    mechanism = raw.get("mechanism")
    if mechanism not in MECHANISMS:
        allowed = ", ".join(MECHANISMS)
        if mechanism is None:
            raise BudgetFileError(f"{where}: missing 'mechanism' (one of {allowed})")
        raise BudgetFileError(f"{where}: unknown mechanism {mechanism!r}"
                              f"{_suggest(str(mechanism), list(MECHANISMS))}; expected one of {allowed}")
    schema = MECHANISMS[mechanism]
    parameters: dict[str, float] = {}
    for key, value in raw.items():
        if key in ("name", "mechanism"):
            continue
        if key not in schema:
            raise BudgetFileError(
                f"{where}: unknown key '{key}' for mechanism '{mechanism}'{_suggest(key, list(schema))}; "
                f"allowed: {', '.join(schema)}"
            )
        parameters[key] = _number(where, key, value, schema[key])
    _check_alternatives(where, mechanism, parameters)
    return Release(name=name, mechanism=mechanism, parameters=parameters, line=line)


def _check_alternatives(where: str, mechanism: str, parameters: dict[str, float]) -> None:
    def need(*keys: str) -> None:
        missing = [key for key in keys if key not in parameters]
        if missing:
            raise BudgetFileError(f"{where}: missing '{missing[0]}' for mechanism '{mechanism}'")

    def one_of(first: str, second: str) -> None:
        if (first in parameters) == (second in parameters):
            raise BudgetFileError(f"{where}: give exactly one of '{first}' and '{second}'")

    if mechanism == "subsampled-gaussian":
        need("sigma")
        if "p" in parameters and ("n" in parameters or "batch_size" in parameters):
            raise BudgetFileError(f"{where}: give 'p' or 'n' with 'batch_size', not both")
        if "p" not in parameters:
            need("n", "batch_size")
            if parameters["batch_size"] > parameters["n"]:
                raise BudgetFileError(f"{where}: batch_size must be at most n = {parameters['n']:g}, "
                                      f"got {parameters['batch_size']:g}")
        one_of("T", "epochs")
        if "epochs" in parameters:
            p = parameters["p"] if "p" in parameters else parameters["batch_size"] / parameters["n"]
            if parameters["epochs"] / p >= MAX_COUNT:
                raise BudgetFileError(f"{where}: epochs = {parameters['epochs']:g} gives T = ceil(epochs / p) "
                                      f"above 1e+{MAX_COUNT_DIGITS} steps; lower epochs or raise p")
    elif mechanism == "gaussian":
        need("sigma")
    elif mechanism == "laplace":
        one_of("scale", "epsilon")
    elif mechanism == "dp":
        need("epsilon")
    elif mechanism == "gdp":
        need("mu")
    elif mechanism == "zcdp":
        need("rho")


def _number(where: str, key: str, value: Any, interval: Interval) -> float:
    if value is None:
        raise BudgetFileError(f"{where}: missing '{key}' ({interval.requirement})")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BudgetFileError(f"{where}: {key} must be a number {interval.requirement}, got {value!r}")
    if abs(value) >= MAX_COUNT:  # also keeps float(value) from overflowing for a huge integer
        shown = f"an integer of {len(str(abs(value)))} digits" if isinstance(value, int) else f"{value:g}"
        raise BudgetFileError(f"{where}: {key} must be {interval.requirement} and below 1e+{MAX_COUNT_DIGITS}, "
                              f"got {shown}")
    if not interval.contains(float(value)):
        raise BudgetFileError(f"{where}: {key} must be {interval.requirement}, got {value}")
    return int(value) if interval.integer else float(value)


def _suggest(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _release_lines(text: str) -> list[int]:
    return [number for number, line in enumerate(text.splitlines(), 1) if re.match(r"\s*\[\[\s*release\s*\]\]", line)]


def _line_of(text: str, key: str) -> int:
    """The first line that defines `key`: `key = ...`, `[key]` or `[[key]]` (1 when not found)."""
    name = re.escape(key.strip("[]"))
    pattern = re.compile(rf"\s*(\[\[?\s*{name}\s*\]\]?|{name}\s*=)")
    for number, line in enumerate(text.splitlines(), 1):
        if pattern.match(line):
            return number
    return 1


def steps_of(release: Release) -> int:
    """T for a subsampled-gaussian release: given, or ceil(epochs * n / batch_size)."""
    if "T" in release.parameters:
        return int(release.parameters["T"])
    if "n" in release.parameters:
        return math.ceil(release.parameters["epochs"] * release.parameters["n"] / release.parameters["batch_size"])
    return math.ceil(release.parameters["epochs"] / release.parameters["p"])


def sampling_probability_of(release: Release) -> float:
    if "p" in release.parameters:
        return release.parameters["p"]
    return release.parameters["batch_size"] / release.parameters["n"]


# ---------------------------------------------------------------------------------------------
# Composing the releases

# Shares of delta tried for the first of two groups (any split is a valid bound; the best is kept).
_SPLIT_SHARES = (0.01, 0.05, 0.1, 0.2, 0.35, 0.5, 0.65, 0.8, 0.9, 0.95, 0.99)
# Coarser shares per group for three groups (their sum must stay below one).
_SPLIT_SHARES_3 = (0.05, 0.2, 0.4, 0.6, 0.8)


@dataclass(frozen=True)
class ReleaseEpsilon:
    """One release's own epsilon at the budget's delta, and what it was computed with."""

    name: str
    mechanism: str
    epsilon: float
    delta: float
    method: str


@dataclass(frozen=True)
class BudgetResult:
    """The composed total of every release against the budget.

    `total_epsilon` is a valid bound at `total_delta` <= the budget's delta: the groups
    (mechanisms accounted together, zCDP releases, pre-computed (eps, delta) releases) are
    each accounted as tightly as their kind allows and joined by basic composition with the
    best of a few splits of delta (`split` maps group to its share of delta).
    """

    budget: BudgetFile
    releases: tuple[ReleaseEpsilon, ...]
    total_epsilon: float
    total_delta: float
    within_budget: bool
    method: str
    split: dict[str, float]
    warnings: tuple[str, ...] = ()

    @property
    def headroom(self) -> float:
        return self.budget.epsilon - self.total_epsilon


def release_phase(release: Release):
    """The accountant phase of a mechanism release (gaussian, subsampled-gaussian, laplace, gdp)."""
    from dpcalc.core.phases import Phase

    count = int(release.get("count", 1))
    sensitivity = release.get("sensitivity", 1.0)
    if release.mechanism == "subsampled-gaussian":
        return Phase("gaussian", sampling_probability_of(release), release.get("sigma"), None, steps_of(release))
    if release.mechanism == "gaussian":
        return Phase("gaussian", 1.0, release.get("sigma") / sensitivity, None, count)
    if release.mechanism == "laplace":
        # Scale relative to the L1 sensitivity: b / sensitivity, or 1/epsilon when epsilon is given.
        scale = release.get("scale") / sensitivity if "scale" in release.parameters else 1.0 / release.get("epsilon")
        return Phase("laplace", 1.0, None, scale, count)
    if release.mechanism == "gdp":
        # mu-GDP is exactly the Gaussian mechanism with noise multiplier 1/mu (Dong, Roth, Su 2022).
        return Phase("gaussian", 1.0, 1.0 / release.get("mu"), None, count)
    raise ValueError(f"release {release.name!r} ({release.mechanism}) is not a mechanism phase")


def _merge_full_batch_gaussians(phases):
    """Gaussian phases without subsampling compose exactly into one: mu-GDP with
    mu^2 = sum of steps / sigma^2 (Dong, Roth, Su 2022, Cor. 3.3), the Gaussian mechanism with
    noise multiplier 1/mu. Fewer, simpler phases make the PLD accountant faster, not looser."""
    from dpcalc.core.phases import Phase

    full = [ph for ph in phases if ph.mechanism == "gaussian" and ph.sampling_probability == 1.0]
    if len(full) <= 1:
        return list(phases)
    mu_squared = math.fsum(ph.steps / ph.noise_multiplier**2 for ph in full)
    rest = [ph for ph in phases if not (ph.mechanism == "gaussian" and ph.sampling_probability == 1.0)]
    return rest + [Phase("gaussian", 1.0, 1.0 / math.sqrt(mu_squared), None, 1)]


def _mechanism_epsilon(phases, delta: float, accountant: str) -> tuple[float, tuple[str, ...]]:
    if accountant == "pld":
        from dpcalc.core import gdp
        from dpcalc.core.pld import tight_epsilon

        phases = _merge_full_batch_gaussians(phases)
        if len(phases) == 1 and phases[0].mechanism == "gaussian" and phases[0].sampling_probability == 1.0:
            # Exact: the Gaussian mechanism is mu-GDP, converted by DRS Cor. 2.13.
            mu = math.sqrt(phases[0].steps) / phases[0].noise_multiplier
            return gdp.epsilon_for_delta(delta, mu), ()
        result = tight_epsilon(phases, delta)
        return result.epsilon_upper, result.warnings
    from dpcalc.core.rdp import rdp_accountant

    rdp_result = rdp_accountant(phases, delta=delta)
    return rdp_result.epsilon, rdp_result.warnings


def _rdp_with_zcdp_epsilon(phases, rho: float, delta: float) -> float:
    """RDP accountant over mechanism phases plus rho-zCDP (RDP order * rho at every order)."""
    import numpy as np

    from dpcalc.core.rdp import DEFAULT_ORDERS, composed_rdp, epsilon_from_curve

    orders = np.asarray(DEFAULT_ORDERS)
    curve = rho * orders
    if phases:
        curve = curve + composed_rdp(phases, DEFAULT_ORDERS)[0]
    return epsilon_from_curve(DEFAULT_ORDERS, curve, delta)[0]


def _zcdp_epsilon(rho: float, delta: float) -> float:
    from dpcalc.core.zcdp import zcdp_epsilon

    return zcdp_epsilon(rho, delta)[0]


def _dp_epsilon(releases: list[Release], delta: float) -> float:
    """Pre-computed (eps_i, delta_i) releases composed at total delta: exact KOV when they are
    identical, else the best of basic, advanced and the numerical optimum; inf when their own
    deltas already exceed `delta`."""
    from dpcalc.core import composition

    own = math.fsum(r.get("delta", 0.0) * r.get("count", 1) for r in releases)
    slack = delta - own
    if slack <= 0.0:
        return math.inf
    pairs = {(r.get("epsilon"), r.get("delta", 0.0)) for r in releases}
    total = sum(int(r.get("count", 1)) for r in releases)
    if len(pairs) == 1:
        epsilon, own_delta = pairs.pop()
        if total == 1:
            return epsilon
        return min(epsilon * total, composition.optimal_epsilon(epsilon, total, own_delta, slack))
    epsilons = [r.get("epsilon") for r in releases for _ in range(int(r.get("count", 1)))]
    deltas = [r.get("delta", 0.0) for r in releases for _ in range(int(r.get("count", 1)))]
    result = composition.compose_heterogeneous(epsilons, deltas, slack)
    candidates = [result.basic.epsilon, result.advanced.epsilon, result.optimal.epsilon]
    return min(candidates)


NO_RELEASES = "no releases are listed: nothing released yet, total epsilon 0, within budget."


def account_budget(budget: BudgetFile) -> BudgetResult:
    """Compose every release of the budget file and compare the total with the budget."""
    if not budget.releases:
        # Nothing released costs nothing: epsilon 0 at delta 0, the whole budget is headroom.
        return BudgetResult(budget=budget, releases=(), total_epsilon=0.0, total_delta=0.0, within_budget=True,
                            method="no releases", split={}, warnings=(NO_RELEASES,))
    delta = budget.delta
    mechanisms = [r for r in budget.releases if r.mechanism in ("subsampled-gaussian", "gaussian", "laplace", "gdp")]
    zcdp_releases = [r for r in budget.releases if r.mechanism == "zcdp"]
    dp_releases = [r for r in budget.releases if r.mechanism == "dp"]
    phases = [release_phase(r) for r in mechanisms]
    rho = math.fsum(r.get("rho") * r.get("count", 1) for r in zcdp_releases)
    warnings: list[str] = []

    # Each group's epsilon as a function of its share of delta.
    groups: dict[str, Any] = {}
    # the accountant's own warnings (e.g. the PLD grid's closed-form fallback) per (group, delta)
    notes: dict[tuple[str, float], tuple[str, ...]] = {}

    def pld_group(group_delta: float) -> float:
        epsilon, group_notes = _mechanism_epsilon(phases, group_delta, "pld")
        notes[("pld", group_delta)] = group_notes
        return epsilon

    if budget.accountant == "rdp" and (phases or zcdp_releases):
        groups["rdp"] = lambda d: _rdp_with_zcdp_epsilon(phases, rho, d)
    else:
        if phases:
            groups["pld"] = pld_group
        if zcdp_releases:
            groups["zcdp"] = lambda d: _zcdp_epsilon(rho, d)
    if dp_releases:
        groups["dp"] = lambda d: _dp_epsilon(dp_releases, d)

    cache: dict[tuple[str, float], float] = {}

    def epsilon_of(group: str, share: float) -> float:
        key = (group, share)
        if key not in cache:
            cache[key] = groups[group](share * delta)
        return cache[key]

    names = list(groups)
    splits: list[tuple[float, ...]]
    if len(names) == 1:
        splits = [(1.0,)]
    elif len(names) == 2:
        splits = [(s, 1.0 - s) for s in _SPLIT_SHARES]
    else:
        splits = [(a, b, 1.0 - a - b) for a in _SPLIT_SHARES_3 for b in _SPLIT_SHARES_3 if a + b < 0.999]
    best_total, best_split = math.inf, splits[0]
    for split in splits:
        total = math.fsum(epsilon_of(name, share) for name, share in zip(names, split))
        if total < best_total:
            best_total, best_split = total, split

    own = [_release_epsilon(r, budget) for r in budget.releases]
    for name, share in zip(names, best_split):
        for note in notes.get((name, share * delta), ()):
            if f"total: {note}" not in warnings:
                warnings.append(f"total: {note}")
    if len(names) > 1:
        warnings.append(
            "releases of different kinds were joined by basic composition with the best of a few "
            "splits of delta (" + ", ".join(f"{n} {s:g}" for n, s in zip(names, best_split)) + "): a valid bound, "
            "possibly looser than one accountant over all of them."
        )
    for release in budget.releases:
        if "n" in release.parameters:
            warnings += [f"release '{release.name}': {warning}"
                         for warning in large_delta_warnings(release.parameters["n"], delta)]
    if not math.isfinite(best_total):
        warnings.append("no finite total epsilon at the budget's delta (the releases' own deltas use it up, or the noise is too small).")
    method = {
        "pld": "tight PLD accountant (certified upper bound)",
        "rdp": "RDP accountant",
        "zcdp": "zCDP (Canonne, Kamath, Steinke 2020)",
        "dp": "optimal composition of (eps, delta) releases (Kairouz, Oh, Viswanath 2015)",
    }
    return BudgetResult(
        budget=budget,
        releases=tuple(own),
        total_epsilon=best_total,
        total_delta=delta,
        within_budget=best_total <= budget.epsilon,
        method="; ".join(method[name] for name in names),
        split=dict(zip(names, best_split)),
        warnings=tuple(warnings),
    )


def _release_epsilon(release: Release, budget: BudgetFile) -> ReleaseEpsilon:
    delta = budget.delta
    if release.mechanism == "zcdp":
        epsilon = _zcdp_epsilon(release.get("rho") * release.get("count", 1), delta)
        method = "zCDP"
    elif release.mechanism == "dp":
        epsilon = _dp_epsilon([release], delta)
        method = "given" if release.get("count", 1) == 1 else "optimal composition"
    elif budget.accountant == "rdp":
        epsilon = _rdp_with_zcdp_epsilon([release_phase(release)], 0.0, delta)
        method = "RDP"
    else:
        phase = release_phase(release)
        if phase.mechanism == "gaussian" and phase.sampling_probability == 1.0:
            epsilon = _mechanism_epsilon([phase], delta, "pld")[0]
            method = "exact (Gaussian DP)"
        else:
            from dpcalc.core.pld import tight_epsilon

            result = tight_epsilon([phase], delta)
            epsilon = result.epsilon_upper
            # grid step 0: outside the grid's range the accountant certifies by closed forms
            method = "PLD (certified)" if result.grid_step > 0.0 else "closed forms (certified)"
    return ReleaseEpsilon(release.name, release.mechanism, epsilon, delta, method)
