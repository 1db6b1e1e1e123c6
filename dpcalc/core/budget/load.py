"""Reading a budget file: its TOML text parsed and checked field by field against the schema.

The keys each table takes and their ranges are `schema`'s; `load_budget` reads the text into a
`schema.BudgetFile`. Every problem is reported with the file name, the line of the release and
what is wrong, e.g.

    privacy-budget.toml:12: release 'counts': unknown key 'sigam' (did you mean 'sigma'?)
"""

from __future__ import annotations

import math
import re
import sys
from typing import Any, cast

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 reads TOML with tomli, tomllib's origin
    import tomli as tomllib

from dpcalc.core.budget.schema import (
    ACCOUNTANTS,
    BUDGET_KEYS,
    BUDGET_RISK_KEYS,
    BUDGET_TEXT_KEYS,
    LIST_KEYS,
    MECHANISMS,
    RELEASE_TEXT_KEYS,
    RENAMED_KEYS,
    BudgetFile,
    BudgetFileError,
    Release,
)
from dpcalc.core.phases import NEIGHBOURS, Neighbours, rdp_covers, unsupported
from dpcalc.core.presets import FRAMEWORKS
from dpcalc.core.validation import FALSE_POSITIVE_RATE, MAX_COUNT, MAX_COUNT_DIGITS, OPEN_UNIT, Interval

# Limits on the file's text (the file itself is at most 1 MiB, `dpcalc check`): a release name
# of at most MAX_TEXT_LENGTH characters (a name is a label, printed in every table), arrays and
# inline tables nested at most MAX_NESTING deep; a value echoed in a message is shortened (`_shown`).
MAX_TEXT_LENGTH = 200
MAX_NESTING = 32
MAX_INTEGER_DIGITS = 4300  # Python's limit on converting digits to an integer (sys.get_int_max_str_digits)
# TOML's strings and comments, whose brackets do not nest, and the brackets that do.
_TOKENS = re.compile(r'"""(?:[^"\\]|\\.|"(?!""))*"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{}]',
                     re.DOTALL)


def load_budget(text: str, source: str) -> BudgetFile:
    """Parse and check a budget file's text; `source` names it in error messages.

    The format is `schema`'s (docs/check.md)."""
    _check_nesting(text, source)
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise BudgetFileError(f"{source}: TOML syntax error: {error}") from None
    except RecursionError:  # never reached below MAX_NESTING (`_check_nesting`); kept as a backstop
        raise BudgetFileError(f"{source}: arrays and inline tables may be nested at most {MAX_NESTING} deep") from None
    except ValueError:  # an integer of more digits than Python converts (4300)
        long = re.search(r"\d[\d_]{" + str(MAX_INTEGER_DIGITS) + ",}", text)
        line = text.count("\n", 0, long.start()) + 1 if long else 1
        raise BudgetFileError(f"{source}:{line}: a number must be below 1e+{MAX_COUNT_DIGITS}, got an integer of more "
                              f"than {MAX_INTEGER_DIGITS} digits") from None
    release_lines = _release_lines(text)
    unknown = set(document) - {"budget", "release"}
    if unknown:
        key = sorted(unknown)[0]
        raise BudgetFileError(f"{source}:{_line_of(text, key)}: unknown top-level key {_key(key)}"
                              f"{_suggest(key, ['budget', 'release'])}; expected [budget] and [[release]]")
    if "budget" not in document or not isinstance(document["budget"], dict):
        raise BudgetFileError(f"{source}: missing [budget] table with epsilon and delta (or delta with "
                              "max_advantage or tpr_at_fpr)")
    budget = document["budget"]
    where = f"{source}:{_line_of(text, '[budget]')}: [budget]"
    for key in budget:
        if key not in (*BUDGET_KEYS, *BUDGET_TEXT_KEYS, *BUDGET_RISK_KEYS):
            known = [*BUDGET_KEYS, *BUDGET_TEXT_KEYS, *BUDGET_RISK_KEYS]
            raise BudgetFileError(f"{where}: unknown key {_key(key)}{_suggest(key, known)}")
    # epsilon may be left out when the budget sets an attack-risk limit: it then gates on those alone
    risk_only = "epsilon" not in budget and any(key in budget for key in BUDGET_RISK_KEYS)
    values: dict[str, float | None] = {key: None if key == "epsilon" and risk_only else
                                       _number(where, key, budget.get(key), interval)
                                       for key, interval in BUDGET_KEYS.items()}
    accountant = _text(where, "accountant", budget.get("accountant", "pld"), ACCOUNTANTS)
    neighbours = cast("Neighbours", _text(where, "neighbours", budget.get("neighbours", "add-remove"), NEIGHBOURS))
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
    max_advantage = None if "max_advantage" not in budget else _number(where, "max_advantage", budget["max_advantage"],
                                                                         OPEN_UNIT)
    tpr_at_fpr = None if "tpr_at_fpr" not in budget else _tpr_at_fpr(where, budget["tpr_at_fpr"])
    # No [[release]] entries: a project that has released nothing, within any budget (account_budget).
    for release in releases:
        _check_relation(f"{source}:{release.line}: release '{release.name}'", release, neighbours, accountant)
        zcdp = release.mechanism == "zcdp" or release.noise == "laplace-log-normal"
        if zcdp and (max_advantage is not None or tpr_at_fpr is not None):
            raise BudgetFileError(
                f"{source}:{release.line}: release '{release.name}': a zcdp release has no trade-off curve to "
                "compose with the budget's risk limits (max_advantage, tpr_at_fpr); give it as a dp release "
                "(its epsilon at a delta)")
    like = None if "like" not in budget else _text(where, "like", budget["like"], FRAMEWORKS)
    if like is not None:
        _check_like(source, like, releases, neighbours)
    delta = values["delta"]
    assert delta is not None, "delta is required (_number)"
    return BudgetFile(values["epsilon"], delta, accountant, tuple(releases), source, neighbours,
                      max_advantage, tpr_at_fpr, like)


def _check_like(source: str, like: str, releases: list[Release], neighbours: str) -> None:
    """The frameworks' presets compose Poisson-sampled subsampled-gaussian releases between
    add-remove (or zero-out) neighbours, one example per user (dpcalc.core.presets)."""
    for release in releases:
        if (release.mechanism != "subsampled-gaussian" or release.sampling != "poisson"
                or release.get("examples_per_user", 1.0) > 1 or neighbours == "replace-one"):
            raise BudgetFileError(
                f"{source}:{release.line}: release '{release.name}': like = {like!r} shows the framework's figure "
                "for Poisson-sampled subsampled-gaussian releases under add-remove neighbours only; remove the "
                "like key to check this budget")


def _tpr_at_fpr(where: str, value: Any) -> tuple[float, float]:
    """The budget's tpr_at_fpr limit, an inline table {fpr = Y, tpr = X} with 0 < Y < X < 1."""
    if not isinstance(value, dict) or set(value) != {"fpr", "tpr"}:
        raise BudgetFileError(f"{where}: tpr_at_fpr must be a table {{fpr = Y, tpr = X}} (the largest TPR allowed "
                              f"at FPR Y), got {_shown(value)}")
    fpr = _number(where, "tpr_at_fpr.fpr", value["fpr"], FALSE_POSITIVE_RATE)
    tpr = _number(where, "tpr_at_fpr.tpr", value["tpr"], OPEN_UNIT)
    if not tpr > fpr:
        raise BudgetFileError(f"{where}: tpr_at_fpr.tpr must exceed tpr_at_fpr.fpr {fpr:g} (every attack has "
                              f"TPR >= FPR), got {tpr:g}")
    return fpr, tpr


def _text(where: str, key: str, value: Any, allowed: tuple[str, ...]) -> str:
    """A text key's value, one of `allowed`."""
    if value not in allowed:
        raise BudgetFileError(f"{where}: {key} must be one of {', '.join(allowed)}, got {_shown(value)}")
    return str(value)


def _check_relation(where: str, release: Release, neighbours: str, accountant: str) -> None:
    """Refuse a release the budget's neighbour relation and accountant cannot account
    (`core.phases.unsupported`; the RDP curves' coverage; laplace releases under replace-one)."""
    if release.mechanism == "laplace" and neighbours == "replace-one":
        raise BudgetFileError(f"{where}: a laplace release is accounted under add-remove or zero-out budgets; "
                              "under replace-one give it as a dp release with its epsilon")
    if release.mechanism != "subsampled-gaussian":
        return
    per_user = int(release.get("examples_per_user", 1))
    params = release.parameters
    # every record in every batch (p = 1, or b = n): only that value of p matters to `unsupported`
    full = params.get("p") == 1 or ("n" in params and params.get("batch_size") == params["n"])
    why = unsupported("gaussian", release.sampling, neighbours, per_user, 1.0 if full else None)
    if why is not None:
        raise BudgetFileError(f"{where}: sampling {release.sampling!r} with neighbours {neighbours!r}"
                              f"{f' and examples_per_user {per_user}' if per_user > 1 else ''}: {why}")
    if release.sampling in ("shuffle", "allocation") and "n" not in release.parameters:
        raise BudgetFileError(f"{where}: sampling {release.sampling!r} needs n and batch_size (an epoch is "
                              "ceil(n / batch_size) steps), not p")
    if accountant == "rdp" and not rdp_covers(release.sampling, neighbours, per_user):
        raise BudgetFileError(f"{where}: the rdp accountant has no bound for sampling {release.sampling!r} with "
                              f"neighbours {neighbours!r}{' at user level' if per_user > 1 else ''}; use accountant = \"pld\"")


def _release(raw: Any, index: int, line: int, source: str) -> Release:
    label = f"release {index + 1}"
    if not isinstance(raw, dict):
        raise BudgetFileError(f"{source}:{line}: {label}: must be a table")
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise BudgetFileError(f"{source}:{line}: {label}: missing 'name' (a non-empty string)")
    if len(name) > MAX_TEXT_LENGTH:
        raise BudgetFileError(f"{source}:{line}: {label}: name must be at most {MAX_TEXT_LENGTH} characters, got "
                              f"{_shown(name)}")
    where = f"{source}:{line}: release '{name}'"
    mechanism = raw.get("mechanism")
    if not isinstance(mechanism, str) or mechanism not in MECHANISMS:
        allowed = ", ".join(MECHANISMS)
        if mechanism is None:
            raise BudgetFileError(f"{where}: missing 'mechanism' (one of {allowed})")
        if not isinstance(mechanism, str):
            raise BudgetFileError(f"{where}: mechanism must be text, one of {allowed}, got {_shown(mechanism)}")
        raise BudgetFileError(f"{where}: unknown mechanism {_shown(mechanism)}"
                              f"{_suggest(mechanism, list(MECHANISMS))}; expected one of {allowed}")
    schema = MECHANISMS[mechanism]
    texts = RELEASE_TEXT_KEYS.get(mechanism, {})
    list_keys = LIST_KEYS.get(mechanism, {})
    parameters: dict[str, float] = {}
    lists: dict[str, tuple[float, ...]] = {}
    for key, value in raw.items():
        if key in ("name", "mechanism") or key in texts:
            continue
        if key in list_keys:
            lists[key] = _numbers(where, key, value, list_keys[key])
            continue
        if (mechanism, key) in RENAMED_KEYS:
            raise BudgetFileError(f"{where}: key {_key(key)} is refused: {RENAMED_KEYS[mechanism, key]}")
        if key not in schema:
            keys = [*schema, *list_keys, *texts]
            raise BudgetFileError(f"{where}: unknown key {_key(key)} for mechanism '{mechanism}'{_suggest(key, keys)}; "
                                  f"allowed: {', '.join(keys)}")
        parameters[key] = _number(where, key, value, schema[key])
    text_values = {key: _text(where, key, raw[key], allowed) for key, allowed in texts.items() if key in raw}
    _check_alternatives(where, mechanism, parameters, lists, text_values)
    if "noise" in texts:
        if "noise" not in raw:
            raise BudgetFileError(f"{where}: missing 'noise' for mechanism '{mechanism}' "
                                  f"(one of {', '.join(texts['noise'])})")
        if mechanism == "smooth-sensitivity":
            _check_smooth_sensitivity(where, text_values["noise"], parameters)
    sampling = text_values.pop("sampling", "poisson")
    return Release(name=name, mechanism=mechanism, parameters=parameters, line=line, sampling=sampling,
                   texts=text_values, lists=lists)


def _check_smooth_sensitivity(where: str, noise: str, parameters: dict[str, float]) -> None:
    """A smooth-sensitivity release states delta exactly when its noise needs one (laplace)."""
    if noise == "laplace" and "delta" not in parameters:
        raise BudgetFileError(f"{where}: missing 'delta' for smooth-sensitivity noise 'laplace' (in (0, 1))")
    if noise != "laplace" and "delta" in parameters:
        what = "(epsilon^2/2)-CDP, without a delta" if noise == "laplace-log-normal" else "pure epsilon-DP (delta = 0)"
        raise BudgetFileError(f"{where}: smooth-sensitivity noise '{noise}' gives {what}: remove 'delta'")


def _numbers(where: str, key: str, value: Any, interval: Interval) -> tuple[float, ...]:
    """A list key's value: a non-empty array of numbers, each in `interval`."""
    if not isinstance(value, list) or not value:
        raise BudgetFileError(f"{where}: {key} must be a non-empty array of numbers {interval.requirement}, "
                              f"got {_shown(value)}")
    return tuple(_number(where, f"{key} item {position} of {len(value)}", item, interval)
                 for position, item in enumerate(value, start=1))


def _check_alternatives(where: str, mechanism: str, parameters: dict[str, float],
                        lists: dict[str, tuple[float, ...]] | None = None, texts: dict[str, str] | None = None) -> None:
    lists = lists or {}
    texts = texts or {}

    def need(*keys: str) -> None:
        missing = [key for key in keys if key not in parameters]
        if missing:
            raise BudgetFileError(f"{where}: missing '{missing[0]}' for mechanism '{mechanism}'")

    def one_of(first: str, second: str) -> None:
        if (first in parameters) == (second in parameters):
            raise BudgetFileError(f"{where}: give exactly one of '{first}' and '{second}'")

    if mechanism == "bandmf":
        _check_bandmf(where, parameters, need, one_of)
    elif mechanism == "subsampled-gaussian":
        one_of("sigma", "noise_std")
        if "sigma" in parameters and "sensitivity" in parameters:
            raise BudgetFileError(f"{where}: 'sensitivity' goes with 'noise_std': 'sigma' is already noise std / "
                                  "sensitivity")
        if "p" in parameters and ("n" in parameters or "batch_size" in parameters):
            raise BudgetFileError(f"{where}: give 'p' or 'n' with 'batch_size', not both")
        if "p" not in parameters:
            need("n", "batch_size")
            if parameters["batch_size"] > parameters["n"]:
                raise BudgetFileError(f"{where}: batch_size must be at most n = {parameters['n']:g}, "
                                      f"got {parameters['batch_size']:g}")
        one_of("T", "epochs")
        if "max_batch_size" in parameters:
            _check_cap(where, parameters, texts)
        if "epochs" in parameters:
            p = parameters["p"] if "p" in parameters else parameters["batch_size"] / parameters["n"]
            if p == 0:
                raise BudgetFileError(f"{where}: epochs needs p above 0 (T = ceil(epochs / p), and p = 0 samples "
                                      "no record in any number of steps); give T with p = 0")
            if parameters["epochs"] / p >= MAX_COUNT:
                raise BudgetFileError(f"{where}: epochs = {parameters['epochs']:g} gives T = ceil(epochs / p) "
                                      f"above 1e+{MAX_COUNT_DIGITS} steps; lower epochs or raise p")
    elif mechanism == "gaussian":
        _check_gaussian(where, parameters, lists, texts)
    elif mechanism == "laplace":
        one_of("scale", "epsilon")
        domain = texts.get("domain", "real")
        if domain != "real" and "sensitivity" in parameters:
            raise BudgetFileError(f"{where}: 'sensitivity' is set by domain {domain!r} "
                                  f"({'1' if domain == 'counts' else '2: the L1 diameter of the simplex'}); "
                                  "give it with domain = \"real\"")
    elif mechanism == "randomized-response":
        one_of("epsilon", "flip_probability")
        if "flip_probability" in parameters:
            from dpcalc.core.mechanisms.randomized_response import epsilon_of_flip, flip_interval

            k = int(parameters.get("k", 2))
            flip = parameters["flip_probability"]
            if not flip_interval(k).contains(flip):
                raise BudgetFileError(f"{where}: flip_probability must be {flip_interval(k).requirement} for "
                                      f"k = {k}, got {flip:g}")
            # the release's pure epsilon, as the "dp" group reads it (parameters["epsilon"])
            parameters["epsilon"] = epsilon_of_flip(flip, k)
    elif mechanism == "dp":
        need("epsilon")
    elif mechanism == "gdp":
        need("mu")
    elif mechanism == "zcdp":
        need("rho")
    elif mechanism == "ptr":
        need("epsilon", "delta")
    elif mechanism in ("smooth-sensitivity", "exponential", "noisy-max", "svt"):
        need("epsilon")


def _check_bandmf(where: str, parameters: dict[str, float], need: Any, one_of: Any) -> None:
    """A bandmf release: sigma and bands, p or n with batch_size, T or epochs, and bands the run holds."""
    need("sigma", "bands")
    if "p" in parameters and ("n" in parameters or "batch_size" in parameters):
        raise BudgetFileError(f"{where}: give 'p' or 'n' with 'batch_size', not both")
    if "p" not in parameters:
        need("n", "batch_size")
    elif parameters["p"] == 0 and "epochs" in parameters:
        raise BudgetFileError(f"{where}: epochs needs p above 0 (T = ceil(epochs / p)); give T with p = 0")
    one_of("T", "epochs")
    if "epochs" in parameters:
        p = parameters["p"] if "p" in parameters else parameters["batch_size"] / parameters["n"]
        if parameters["epochs"] / p >= MAX_COUNT:
            raise BudgetFileError(f"{where}: epochs = {parameters['epochs']:g} gives T = ceil(epochs / p) "
                                  f"above 1e+{MAX_COUNT_DIGITS} steps; lower epochs or raise p")
    from dpcalc.core.budget.releases import bandmf_phase
    from dpcalc.core.validation import ParameterError

    try:
        bandmf_phase(Release("", "bandmf", parameters))
    except ParameterError as error:
        raise BudgetFileError(f"{where}: {error.worded(str)}") from None


def _check_cap(where: str, parameters: dict[str, float], texts: dict[str, str]) -> None:
    """A subsampled-gaussian release's max_batch_size (truncated Poisson sampling): Poisson batches
    only, with the dataset size n that the chance of a batch above the cap depends on."""
    cap = parameters["max_batch_size"]
    sampling = texts.get("sampling", "poisson")
    if sampling != "poisson":
        raise BudgetFileError(f"{where}: max_batch_size caps Poisson batches: it needs sampling \"poisson\", "
                              f"got sampling {sampling!r} with max_batch_size {cap:g}")
    if "n" not in parameters:
        raise BudgetFileError(f"{where}: max_batch_size needs the dataset size: give 'n' with 'batch_size' "
                              f"(not 'p'), got max_batch_size {cap:g} without 'n'")


def _check_gaussian(where: str, parameters: dict[str, float], lists: dict[str, tuple[float, ...]],
                    texts: dict[str, str]) -> None:
    """A gaussian release: one of sigma (the noise multiplier), noise_std (with sensitivity), or the lists sensitivities
    and noise_stds (per-coordinate noise, as long as each other; clipping only with them, sensitivity not)."""
    given = [key for key in ("sigma", "noise_std", "noise_stds") if key in parameters or key in lists]
    if len(given) != 1:
        if not lists:
            raise BudgetFileError(f"{where}: give exactly one of 'sigma' and 'noise_std'")
        raise BudgetFileError(f"{where}: give exactly one of 'sigma', 'noise_std' and 'noise_stds' (with 'sensitivities')")
    if "sigma" in parameters and "sensitivity" in parameters:
        # sigma is the noise multiplier, as in every release (it was the noise std here: refused, not reread)
        raise BudgetFileError(f"{where}: 'sensitivity' goes with 'noise_std': 'sigma' is the noise multiplier, "
                              "noise std / sensitivity (for the noise std itself write noise_std)")
    if ("sensitivities" in lists) != ("noise_stds" in lists):
        missing = "sensitivities" if "noise_stds" in lists else "noise_stds"
        raise BudgetFileError(f"{where}: missing '{missing}' for per-coordinate noise (one sensitivity and one noise std "
                              "per coordinate or layer)")
    if "noise_stds" in lists:
        if len(lists["noise_stds"]) != len(lists["sensitivities"]):
            raise BudgetFileError(f"{where}: noise_stds must have as many values as sensitivities "
                                  f"({len(lists['sensitivities'])}), got {len(lists['noise_stds'])}")
        if "sensitivity" in parameters:
            raise BudgetFileError(f"{where}: 'sensitivity' goes with 'sigma' or 'noise_std', not with 'sensitivities'")
        if not 0.0 < math.hypot(*(s / n for s, n in zip(lists["sensitivities"], lists["noise_stds"]))) < math.inf:
            raise BudgetFileError(f"{where}: sensitivities / noise_stds must have a positive finite root sum of squares")
    elif "clipping" in texts:
        raise BudgetFileError(f"{where}: 'clipping' goes with 'sensitivities' and 'noise_stds' (per-coordinate noise)")


def _number(where: str, key: str, value: Any, interval: Interval) -> float:
    if value is None:
        raise BudgetFileError(f"{where}: missing '{key}' ({interval.requirement})")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BudgetFileError(f"{where}: {key} must be a number {interval.requirement}, got {_shown(value)}")
    if abs(value) >= MAX_COUNT:  # also keeps float(value) from overflowing for a huge integer
        shown = f"an integer of {len(str(abs(value)))} digits" if isinstance(value, int) else f"{value:g}"
        raise BudgetFileError(f"{where}: {key} must be {interval.requirement} and below 1e+{MAX_COUNT_DIGITS}, "
                              f"got {shown}")
    if not interval.contains(float(value)):
        raise BudgetFileError(f"{where}: {key} must be {interval.requirement}, got {value}")
    return int(value) if interval.integer else float(value)


def _check_nesting(text: str, source: str) -> None:
    """Refuse arrays and inline tables nested deeper than MAX_NESTING (a table header, [x] or
    [[x]], counts as one or two), before the TOML parser recurses into them."""
    depth = 0
    for token in _TOKENS.finditer(text):
        bracket = token.group()
        if bracket in ("[", "{"):
            depth += 1
            if depth > MAX_NESTING:
                line = text.count("\n", 0, token.start()) + 1
                raise BudgetFileError(f"{source}:{line}: arrays and inline tables may be nested at most {MAX_NESTING} "
                                      f"deep, got more than {MAX_NESTING}")
        elif bracket in ("]", "}"):
            depth = max(depth - 1, 0)


def _shown(value: Any) -> str:
    """A value as a message shows it: its repr, shortened (long text, long or deep arrays and tables)."""
    import reprlib

    shortened = reprlib.Repr()
    shortened.maxlevel, shortened.maxlist, shortened.maxdict = 3, 6, 4
    shortened.maxstring, shortened.maxother, shortened.maxlong = 60, 60, 60
    text = shortened.repr(value)
    if isinstance(value, str) and len(value) > 60:
        text += f" ({len(value)} characters)"
    return text


def _key(key: str) -> str:
    """A key as a message shows it, quoted; a long one shortened."""
    return f"'{key}'" if len(key) <= 60 else _shown(key)


def _suggest(word: str, choices: list[str]) -> str:
    import difflib

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
