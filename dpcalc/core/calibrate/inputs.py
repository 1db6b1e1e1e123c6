"""A calibration's inputs checked: which quantities a solve takes, the cap, and the certified figure.

The rules shared by `dpcalc calibrate` and the Python API (`dpcalc.api.calibrate`). A caller
states the calibration and each run's quantities as given (`core.calibrate.request`);
`check_calibration` refuses what no run of it can be, and `tasks` (or the steps it takes:
`check_mechanism`, `parse_problem`, `check_accountant`, `check_scheme`, `capped`) turns each
run into the `Task` that `core.calibrate` solves. `certified_result`
gives the answer its certified epsilon. Refusals are `RunError`s naming the keywords (`solve`,
`T`, `max_batch_size`); the command line words them with its options. `solve` is one of sigma,
T, epochs, p, batch-size, scale.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from typing import TYPE_CHECKING

from dpcalc.core.calibrate.request import SOLVED_KEY, Calibration, GivenRun, RiskTarget, Scheme, Task
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
    from collections.abc import Sequence

    from dpcalc.core.calibrate.result import CalibrationResult

# The parameters of the Gaussian run, which the Laplace mechanism's calibration does not take.
_GAUSSIAN_ONLY = ("p", "sigma", "noise_std", "n", "batch_size", "epochs")
_LAPLACE_TAKES = "{target_eps}, {delta}, {T}, {sensitivity}, {accountant} pld or rdp, {precision}"


def check_calibration(calibration: Calibration, *, dataset_size_given: bool, noise_std_given: bool) -> None:
    """Refuse what no run of `calibration` can be: the cap where it does not apply (`check_cap`),
    and a risk target beside another scheme or mechanism, or beside a noise std."""
    if calibration.max_batch_size is not None:
        check_cap(calibration.max_batch_size, calibration.solve, calibration.accountant, calibration.mechanism,
                  calibration.scheme.sampling, calibration.risk.given, dataset_size_given)
    if not calibration.risk.given:
        return
    # a risk target calibrates a Poisson-sampled Gaussian training run of examples under add-remove
    if calibration.scheme.given:
        keyword, value = calibration.scheme.first_given()
        raise RunError("{" + keyword + "} {value}: risk targets calibrate Poisson-sampled examples under add-remove; "
                       "calibrate other runs with {target_eps}", value=value)
    if calibration.mechanism == "laplace" or calibration.sensitivity is not None:
        raise RunError(("{mechanism} laplace" if calibration.mechanism == "laplace" else "{sensitivity}")
                       + ": risk targets calibrate Gaussian training runs (sigma is noise / sensitivity); calibrate "
                       "a Laplace scale with {target_eps}")
    if noise_std_given:
        raise RunError("{noise_std}: risk targets take the noise multiplier {sigma} (noise std / sensitivity), "
                       "or {target_eps} takes {noise_std} with {sensitivity}")


def check_risk_target(risk: RiskTarget, epsilon_target_given: bool, accountant: str) -> None:
    """One risk figure, its FPR with a TPR (below it), not beside an epsilon target, certified by pld."""
    if risk.advantage is not None and risk.tpr is not None:
        raise conflict("{target_advantage}", "{target_tpr}", "calibrate to one risk figure at a time")
    if epsilon_target_given:
        raise conflict("{target_advantage}" if risk.advantage is not None else "{target_tpr}", "{target_eps}",
                       "calibrate to attack risk or to epsilon")
    if risk.tpr is not None and risk.fpr is None:
        raise RunError("{target_tpr} needs {at_fpr} (the false-positive rate it is stated at, in (0, 1))")
    if risk.fpr is not None and risk.tpr is None:
        raise RunError("{at_fpr} goes with {target_tpr} (the largest TPR to allow at that FPR)")
    if risk.tpr is not None and risk.fpr is not None and not risk.tpr > risk.fpr:
        raise RunError("{target_tpr} must exceed {at_fpr} {fpr} (no attack does worse than guessing: TPR >= FPR), "
                       "got {tpr}", fpr=format_number(risk.fpr), tpr=format_number(risk.tpr))
    if accountant != "pld":
        raise RunError("{accountant} {value}: risk targets are certified by the PLD accountant (the default); drop "
                       "{accountant}", value=accountant)


def tasks(calibration: Calibration, runs: Sequence[GivenRun]) -> list[Task]:
    """The task of each run (all checked before any is solved, so that a bad one fails at once)."""
    check_mechanism(calibration.mechanism, calibration.solve, calibration.accountant, runs[0],
                    calibration.sensitivity)
    found = [parse_problem(run, calibration.solve, calibration.mechanism) for run in runs]
    scheme = calibration.scheme
    if calibration.mechanism == "laplace":
        if scheme.given:
            keyword, value = scheme.first_given()
            raise RunError("{" + keyword + "} {value}: {mechanism} laplace calibrates releases without subsampling; "
                           "the sampling scheme and relation apply to Gaussian runs", value=value)
        sensitivity = 1.0 if calibration.sensitivity is None else calibration.sensitivity
        found = [task._replace(mechanism="laplace", sensitivity=sensitivity) for task in found]
    if scheme.given:
        check_accountant(calibration.accountant, scheme)
        for run in runs:
            check_scheme(run, calibration.solve, scheme)
        found = [task._replace(scheme=scheme) for task in found]
    if calibration.max_batch_size is not None:
        found = [capped(task, run, calibration.max_batch_size) for task, run in zip(found, runs)]
    return found


def check_mechanism(mechanism: str, solve: str, accountant: str, given: GivenRun, sensitivity: float | None) -> None:
    """Refuse the parameters that do not belong to the mechanism calibrated (the Gaussian run's
    with the laplace mechanism, and a sensitivity beside sigma or solve scale without it)."""
    if mechanism == "gaussian":
        if solve == "scale":
            raise RunError("{solve} scale is the Laplace mechanism's scale: give {mechanism} laplace")
        if sensitivity is not None and given.sigma is not None:
            raise RunError(SENSITIVITY_WITH_SIGMA)
        return
    if solve != "scale":
        raise RunError("{mechanism} laplace solves for the Laplace scale ({solve} scale, the default with it), "
                       "got {solve} {value}", value=solve)
    if accountant == "gdp":
        raise RunError("{accountant} gdp (the central limit of the subsampled Gaussian) does not apply to "
                       "{mechanism} laplace: use pld or rdp")
    for key in _GAUSSIAN_ONLY:
        if getattr(given, key) is not None:
            raise RunError("{" + key + "} does not apply to {mechanism} laplace ({T} releases of the Laplace "
                           "mechanism, no subsampling); it takes " + _LAPLACE_TAKES)
    if given.T is None:
        raise RunError("{mechanism} laplace needs {T} (the number of releases, an integer >= 1)")


def parse_problem(row: GivenRun, solve: str, mechanism: str = "gaussian") -> Task:
    """The task of one run (`row`: its quantities, target_epsilon, delta and precision as given), checked."""
    target = row.target_epsilon
    if target is None:
        raise RunError("{target_eps} is required (the epsilon to meet, >= 0)")
    p, T, n, batch_size, epochs = row.p, row.T, row.n, row.batch_size, row.epochs
    if row.precision is not None and solve not in ("sigma", "p", "scale"):
        raise RunError("{precision} applies to {solve} sigma and {solve} p; {value} is an integer and is solved exactly",
                       value=solve)
    quantity = SOLVED_KEY[solve]
    task = Task(quantity, target, row.delta, DEFAULT_PRECISION if row.precision is None else row.precision)
    if solve == "scale":
        return task._replace(steps=T)
    if getattr(row, quantity) is not None:
        raise RunError("{solve} {value} and {" + quantity + "} cannot be given together; {value} is what "
                       "calibrate solves for", value=solve)
    if solve == "sigma" and row.noise_std is not None:
        raise conflict("{solve} sigma", "{noise_std}", "the noise std is what calibrate solves for (noise_std = sigma "
                       "x {sensitivity})")
    _check_given_form(solve, p, T, n, batch_size, epochs)
    if solve != "sigma":
        task = task._replace(noise_multiplier=noise_multiplier(row.sigma, row.noise_std, row.sensitivity))
    if solve in ("sigma", "T", "epochs"):
        _probability, exact_probability = sampling_probability(p, n, batch_size)
        task = task._replace(sampling_probability=exact_probability)
        if solve == "epochs" and exact_probability == 0:
            raise RunError("{solve} epochs needs {p} above 0 (an epoch is 1/p steps); solve T with {p} 0")
        if solve == "sigma":
            task = task._replace(steps=steps_of(T, epochs, exact_probability))
        return task
    if solve == "batch-size":
        task = task._replace(dataset_size=n)
    if T is not None:
        return task._replace(steps=T)
    if epochs is not None:
        return task._replace(epochs=exact(epochs))
    raise RunError("give the number of steps: {T}, or {epochs}")


def _check_given_form(solve: str, p: float | None, T: int | None, n: int | None, batch_size: int | None,
                      epochs: float | None) -> None:
    """Refuse the quantities that determine the one solved for, and a mix of the two forms."""
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


def check_accountant(accountant: str, scheme: Scheme) -> None:
    """The gdp accountant describes Poisson-sampled examples under add-remove or zero-out; rdp has
    bounds for those and for fixed-size batches under replace-one (`core.phases.rdp_covers`)."""
    from dpcalc.core.phases import rdp_covers

    sampling, neighbours, per_user = scheme.resolved
    described = f"{sampling} sampling, {neighbours} neighbours" + (f", {per_user} examples per user" if per_user > 1 else "")
    if accountant == "gdp" and (sampling != "poisson" or neighbours == "replace-one" or per_user > 1):
        raise RunError("{accountant} gdp: the central-limit accountant describes Poisson-sampled examples under "
                       "add-remove or zero-out, not {described}; use {accountant} pld", described=described)
    if accountant == "rdp" and not rdp_covers(sampling, neighbours, per_user):
        raise RunError("{accountant} rdp has no bound for {described}; use {accountant} pld", described=described)


def check_scheme(row: GivenRun, solve: str, scheme: Scheme) -> None:
    """Refuse, with `pld`'s messages (`core.training.with_relation`), a scheme no accountant
    covers; and shuffled or allocated runs without n and the batch size (an epoch is ceil(n / b)
    steps)."""
    from dpcalc.core.phases import EPOCH_SAMPLINGS, Phase

    chosen = scheme.sampling
    if chosen is not None and chosen in EPOCH_SAMPLINGS and solve == "p":
        raise RunError("{solve} p with {sampling} {value}: an epoch is ceil(n / batch size) steps; give {n} and solve "
                       "for the batch size ({solve} batch-size)", value=chosen)
    batch = 1 if solve == "batch-size" else row.batch_size
    steps = epoch_steps(row.n, batch)
    probe = Phase("gaussian", 0.5 if steps is None else 1.0 / steps, 1.0, None, 1, epoch_steps=steps)
    with_relation([probe], scheme.sampling, scheme.neighbours, scheme.examples_per_user)


def check_cap(max_batch_size: int, solve: str, accountant: str, mechanism: str, sampling: str | None,
              risk_target: bool, dataset_size_given: bool) -> None:
    """A cap on the batch size applies to the Poisson batches of a Gaussian run of known dataset
    size, calibrated to epsilon by pld or rdp (`core.calibrate`, `max_batch_size`)."""
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
    if not dataset_size_given:
        raise RunError("{max_batch_size} needs the dataset size: give the run as {n}, {batch_size} and {epochs} "
                       "(or {T}), so that the chance of a batch above the cap is known")


def capped(task: Task, row: GivenRun, max_batch_size: int) -> Task:
    """One run's task with the cap: the dataset size (and batch size, for p) as core.calibrate takes them."""
    if row.n is None:  # pragma: no cover - check_cap refuses a cap without n
        raise RunError("{max_batch_size} needs one {n} a row")
    if task.sampling_probability is not None:  # sigma, T, epochs: p = batch size / n, given as the two
        task = task._replace(sampling_probability=None, batch_size=row.batch_size)
    return task._replace(dataset_size=row.n, max_batch_size=max_batch_size)


def solved_noise_std(sigma: float | int | None, sensitivity: float | None) -> float | None:
    """The noise std of a solved sigma, sigma x sensitivity, rounded up (never below the noise needed)."""
    if sigma is None or sensitivity is None:
        return None
    product = sigma * sensitivity
    if Fraction(product) < Fraction(sigma) * Fraction(sensitivity):
        product = math.nextafter(product, math.inf)
    return product


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
