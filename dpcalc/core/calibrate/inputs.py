"""A calibration's inputs checked: which quantities a solve takes, the cap, and the certified figure.

The rules shared by `dpcalc calibrate` and the Python API (`dpcalc.api.calibrate`): what the
mechanism calibrated takes (`check_mechanism`), the keyword arguments of `core.calibrate` for
one run of given quantities (`parse_problem`), the sampling scheme (`check_accountant`,
`check_scheme`), the batch-size cap (`check_cap`, `capped`), and
the answer's certified epsilon (`certified_result`). Refusals are `RunError`s naming the
keywords (`solve`, `T`, `max_batch_size`); the command line words them with its options.
`solve` is one of sigma, T, epochs, p, batch-size, scale.
"""

from __future__ import annotations

import dataclasses
import math
from enum import Enum
from typing import TYPE_CHECKING, Any

from dpcalc.core.limits import DEFAULT_PRECISION
from dpcalc.core.text import exact, format_number, format_upper
from dpcalc.core.training import (
    SENSITIVITY_WITH_SIGMA,
    check_training_form,
    epoch_steps,
    noise_multiplier,
    sampling_probability,
    steps_of,
    with_relation,
)
from dpcalc.core.validation import RunError, conflict

if TYPE_CHECKING:
    from dpcalc.core.calibrate.problem import Quantity
    from dpcalc.core.calibrate.result import CalibrationResult

# The quantity (and JSON key) of each solve.
SOLVED_KEY: dict[str, Quantity] = {"sigma": "sigma", "T": "T", "p": "p", "epochs": "epochs", "batch-size": "batch_size",
                                   "scale": "scale"}

# The parameters of the Gaussian run, which the Laplace mechanism's calibration does not take.
_GAUSSIAN_ONLY = ("p", "sigma", "noise_std", "n", "batch_size", "epochs")
_LAPLACE_TAKES = "{target_eps}, {delta}, {T}, {sensitivity}, {accountant} pld or rdp, {precision}"


def check_mechanism(mechanism: str, solve: str, accountant: str, given: dict[str, Any],
                    sensitivity: float | None) -> None:
    """Refuse the parameters that do not belong to the mechanism calibrated (the Gaussian run's
    with the laplace mechanism, and a sensitivity beside sigma or solve scale without it)."""
    if mechanism == "gaussian":
        if solve == "scale":
            raise RunError("{solve} scale is the Laplace mechanism's scale: give {mechanism} laplace")
        if sensitivity is not None and given.get("sigma") is not None:
            raise RunError(SENSITIVITY_WITH_SIGMA)
        return
    if solve != "scale":
        raise RunError("{mechanism} laplace solves for the Laplace scale ({solve} scale, the default with it), "
                       "got {solve} {value}", value=solve)
    if accountant == "gdp":
        raise RunError("{accountant} gdp (the central limit of the subsampled Gaussian) does not apply to "
                       "{mechanism} laplace: use pld or rdp")
    for key in _GAUSSIAN_ONLY:
        if given.get(key) is not None:
            raise RunError("{" + key + "} does not apply to {mechanism} laplace ({T} releases of the Laplace "
                           "mechanism, no subsampling); it takes " + _LAPLACE_TAKES)
    if given.get("T") is None:
        raise RunError("{mechanism} laplace needs {T} (the number of releases, an integer >= 1)")


def parse_problem(row: dict[str, Any], solve: str, mechanism: str = "gaussian") -> dict[str, Any]:
    """The keyword arguments of core.calibrate for one run (`row`: its quantities by keyword,
    target_epsilon, delta and precision; None where not given), checked."""
    target = row["target_epsilon"]
    if target is None:
        raise RunError("{target_eps} is required (the epsilon to meet, >= 0)")
    p, T = row["p"], row["T"]
    n, batch_size, epochs = row["n"], row["batch_size"], row["epochs"]
    if row["precision"] is not None and solve not in ("sigma", "p", "scale"):
        raise RunError("{precision} applies to {solve} sigma and {solve} p; {value} is an integer and is solved exactly",
                       value=solve)
    precision = DEFAULT_PRECISION if row["precision"] is None else row["precision"]
    if solve == "scale":
        return {"target_epsilon": target, "delta": row["delta"], "precision": precision, "steps": T}
    if row[SOLVED_KEY[solve]] is not None:
        raise RunError("{solve} {value} and {" + SOLVED_KEY[solve] + "} cannot be given together; {value} is what "
                       "calibrate solves for", value=solve)
    if solve == "sigma" and row.get("noise_std") is not None:
        raise conflict("{solve} sigma", "{noise_std}", "the noise std is what calibrate solves for (noise_std = sigma "
                       "x {sensitivity})")
    problem: dict[str, Any] = {"target_epsilon": target, "delta": row["delta"], "precision": precision}
    if solve == "T" and epochs is not None:
        raise conflict("{solve} T", "{epochs}", "use {solve} epochs for whole epochs")
    if solve == "epochs" and T is not None:
        raise conflict("{solve} epochs", "{T}", "T is ceil(epochs * n / batch-size)")
    if solve == "p" and (n is not None or batch_size is not None):
        raise conflict("{solve} p", "{n}/{batch_size}", "use {solve} batch-size for the training form")
    if solve == "batch-size":
        if p is not None:
            raise conflict("{solve} batch-size", "{p}", "p is batch-size / n")
        if n is None:
            raise RunError("{solve} batch-size needs {n} (p = batch-size / n)")
    else:
        check_training_form(p, T, n, batch_size, epochs)
    if solve != "sigma":
        problem["noise_multiplier"] = noise_multiplier(row.get("sigma"), row.get("noise_std"), row.get("sensitivity"))
    if solve in ("sigma", "T", "epochs"):
        _probability, exact_probability = sampling_probability(p, n, batch_size)
        problem["sampling_probability"] = exact_probability
        if solve == "epochs" and exact_probability == 0:
            raise RunError("{solve} epochs needs {p} above 0 (an epoch is 1/p steps); solve T with {p} 0")
        if solve == "sigma":
            problem["steps"] = steps_of(T, epochs, exact_probability)
        return problem
    if solve == "batch-size":
        problem["dataset_size"] = n
    if T is not None:
        problem["steps"] = T
    elif epochs is not None:
        problem["epochs"] = exact(epochs)
    else:
        raise RunError("give the number of steps: {T}, or {epochs}")
    return problem


def check_accountant(accountant: str, scheme: dict[str, Any]) -> None:
    """The gdp accountant describes Poisson-sampled examples under add-remove or zero-out; rdp has
    bounds for those and for fixed-size batches under replace-one (`core.phases.rdp_covers`).
    `scheme`: the run's sampling, neighbours and examples_per_user."""
    from dpcalc.core.phases import rdp_covers

    sampling, neighbours, per_user = (scheme[name] for name in ("sampling", "neighbours", "examples_per_user"))
    described = f"{sampling} sampling, {neighbours} neighbours" + (f", {per_user} examples per user" if per_user > 1 else "")
    if accountant == "gdp" and (sampling != "poisson" or neighbours == "replace-one" or per_user > 1):
        raise RunError("{accountant} gdp: the central-limit accountant describes Poisson-sampled examples under "
                       "add-remove or zero-out, not {described}; use {accountant} pld", described=described)
    if accountant == "rdp" and not rdp_covers(sampling, neighbours, per_user):
        raise RunError("{accountant} rdp has no bound for {described}; use {accountant} pld", described=described)


def check_scheme(row: dict[str, Any], solve: str, sampling: str | None, neighbours: str | None,
                 examples_per_user: int | None) -> None:
    """Refuse, with `pld`'s messages (`core.training.with_relation`), a scheme no accountant
    covers; and shuffled or allocated runs without n and the batch size (an epoch is ceil(n / b)
    steps). `row`: the run's n and batch_size by keyword."""
    from dpcalc.core.phases import EPOCH_SAMPLINGS, Phase

    chosen = None if sampling is None else str(sampling.value) if isinstance(sampling, Enum) else sampling
    if chosen is not None and chosen in EPOCH_SAMPLINGS and solve == "p":
        raise RunError("{solve} p with {sampling} {value}: an epoch is ceil(n / batch size) steps; give {n} and solve "
                       "for the batch size ({solve} batch-size)", value=chosen)
    batch = 1 if solve == "batch-size" else row["batch_size"]
    steps = epoch_steps(row["n"], batch)
    probe = Phase("gaussian", 0.5 if steps is None else 1.0 / steps, 1.0, None, 1, epoch_steps=steps)
    with_relation([probe], sampling, neighbours, examples_per_user)


def check_cap(max_batch_size: int, solve: str, accountant: str, mechanism: str, sampling: str | None,
              risk_target: bool, n: Any) -> None:
    """A cap on the batch size applies to the Poisson batches of a Gaussian run of known dataset
    size, calibrated to epsilon by pld or rdp (`core.calibrate`, `max_batch_size`)."""
    if isinstance(sampling, Enum):
        sampling = str(sampling.value)
    if risk_target:
        raise RunError("{max_batch_size} {value}: risk targets calibrate the Poisson run; calibrate a capped run "
                       "with {target_eps}, or check its risk with dpcalc risk {max_batch_size}", value=max_batch_size)
    if mechanism == "laplace":
        raise conflict("{max_batch_size}", "{mechanism} laplace", "the cap applies to Poisson batches of a Gaussian run")
    if accountant == "gdp":
        raise RunError("{max_batch_size} {value}: the central-limit gdp accountant has no capped figure; use "
                       "{accountant} pld or rdp", value=max_batch_size)
    if sampling is not None and sampling != "poisson":
        raise RunError("{max_batch_size} caps Poisson batches of the gaussian mechanism, got {value} sampling of the "
                       "gaussian mechanism", value=sampling)
    if solve == "p":
        raise conflict("{max_batch_size}", "{solve} p", "the cap needs the dataset size: give {n} and solve for the "
                       "batch size ({solve} batch-size)")
    if n is None:
        raise RunError("{max_batch_size} needs the dataset size: give the run as {n}, {batch_size} and {epochs} "
                       "(or {T}), so that the chance of a batch above the cap is known")


def capped(problem: dict[str, Any], row: dict[str, Any], max_batch_size: int) -> None:
    """One run's problem with the cap: the dataset size (and batch size, for p) as core.calibrate takes them."""
    if isinstance(row["n"], list) or row["n"] is None:  # pragma: no cover - rows hold one value each
        raise RunError("{max_batch_size} needs one {n} a row")
    if "sampling_probability" in problem:  # sigma, T, epochs: p = batch size / n, given as the two
        del problem["sampling_probability"]
        problem["batch_size"] = row["batch_size"]
    problem.update(dataset_size=row["n"], max_batch_size=max_batch_size)


def certified_result(result: CalibrationResult, *, use_pld: str = 'accountant="pld"') -> CalibrationResult:
    """The result with `certified_epsilon`: a sound upper bound on epsilon at the answer.

    pld's and rdp's epsilon already is one. The gdp accountant's is the central-limit
    approximation, which can under-report epsilon: its answer is checked by the PLD accountant,
    and a warning gives the gap when the certified epsilon exceeds the target, and says to use
    the PLD accountant as `use_pld` (the command line: its option and value).
    """
    if not result.feasible:
        return result
    if result.accountant != "gdp":
        return dataclasses.replace(result, certified_epsilon=result.epsilon)
    from dpcalc.core.accountants import certified_epsilon
    from dpcalc.core.phases import Phase

    run = [Phase("gaussian", result.sampling_probability, result.noise_multiplier, None, result.steps)]
    certified, warnings = certified_epsilon(run, result.delta)
    if certified is not None and certified > result.target_epsilon:
        gap = 100.0 * (certified - result.target_epsilon) / result.target_epsilon if result.target_epsilon > 0 else math.inf
        warnings.insert(0, (
            f"the answer meets the target only in the central-limit approximation: its certified epsilon "
            f"(PLD upper bound) is {format_upper(certified)}, {gap:.1f}% above the target "
            f"{format_number(result.target_epsilon)}. Use {use_pld} for an answer certified to meet it."
        ))
    return dataclasses.replace(result, certified_epsilon=certified,
                               warnings=tuple(result.warnings) + tuple(w for w in warnings if w not in result.warnings))
