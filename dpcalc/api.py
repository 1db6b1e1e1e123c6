"""The Python API: the commands as functions, for notebooks and scripts.

    >>> from dpcalc import pld_epsilon
    >>> pld_epsilon(p=0.004, sigma=1.1, T=10000, delta=1e-5).epsilon_upper  # doctest: +SKIP

Each function mirrors one command: it takes keyword arguments named like the command's
options (`--batch-size` is `batch_size`, `--eps` is `eps`, `--target-eps` is `target_eps`) and
returns the core's frozen result, the same object the command renders as a table or as its
JSON `result`. Nothing is printed and nothing is rounded: a certified bound is the bound itself
(`PLDResult.epsilon_upper`); the command rounds it up only to print it.

Bad input raises `ParameterError` (a `ValueError`): `name` is the keyword, with its allowed
range and the value received. A mix of keywords the command refuses (or a missing one) is a
`RunError` (a `ParameterError`) with the command's message, naming the keywords (`T`,
`batch_size`) where the command names its options (`--T`, `--batch-size`).

The command-line extras around the results are not part of the returned objects: the --max-eps
gate, sweeps, figures, the `as_poisson` figure of `pld` and the `tight_epsilon` of `gdp` and `rdp`
(call `pld_epsilon` for the certified figure of the same run).

`import dpcalc` does not import this module (nor numpy): `dpcalc.pld_epsilon` and the others
are loaded on first use (dpcalc/__init__.py).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from dpcalc.core.limits import ACCURACY, DEFAULT_ACCURACY, MAX_ORDER, PRECISION
from dpcalc.core.phases import NEIGHBOURS, SAMPLINGS, Phase
from dpcalc.core.validation import (
    MAX_COUNT,
    NON_NEGATIVE,
    OPEN_UNIT,
    POSITIVE,
    POSITIVE_INTEGER,
    PROBABILITY,
    Interval,
    ParameterError,
    RunError,
    conflict,
)

if TYPE_CHECKING:
    from dpcalc.core.budget import BudgetResult
    from dpcalc.core.calibrate import CalibrationResult
    from dpcalc.core.gdp import GDPResult
    from dpcalc.core.pld import PLDResult
    from dpcalc.core.rdp import RDPResult
    from dpcalc.core.risk import RiskResult

__all__ = [
    "ParameterError",
    "Phase",
    "calibrate",
    "calibrate_sigma",
    "check_budget",
    "gdp",
    "pld_delta",
    "pld_epsilon",
    "rdp",
    "risk",
]

Accountant = Literal["pld", "rdp", "gdp"]
Solve = Literal["sigma", "T", "epochs", "p", "batch_size"]
MechanismName = Literal["gaussian", "laplace"]
SamplingName = Literal["poisson", "uniform", "shuffle", "allocation"]
NeighboursName = Literal["add-remove", "replace-one", "zero-out"]


def pld_epsilon(*, delta: float, p: float | None = None, sigma: float | None = None, T: int | None = None,
                n: int | None = None, batch_size: int | None = None, epochs: float | None = None,
                noise_std: float | None = None, sensitivity: float | None = None,
                mechanism: MechanismName | None = None, scale: float | None = None,
                phases: Sequence[Phase] | None = None, sampling: SamplingName | None = None,
                neighbours: NeighboursName | None = None, examples_per_user: int | None = None,
                max_batch_size: int | None = None, accuracy: float = DEFAULT_ACCURACY) -> PLDResult:
    """Mirrors `dpcalc pld --delta`: a certified interval on epsilon at `delta`.

    The run is the single-phase form (p, sigma, T; or n, batch_size, epochs; noise_std with
    sensitivity instead of sigma; mechanism="laplace" with scale) or `phases`, a list of
    `Phase` (not both). `sampling`, `neighbours` and `examples_per_user` apply to every phase;
    `max_batch_size` caps Poisson batches (truncated Poisson sampling; needs `n`): the result is
    the capped run's, the overflow's cost included (`pld --max-batch-size`). `accuracy` is the
    certified interval's relative width.

    Returns `core.pld.PLDResult`; quote `epsilon_upper` (the run is (epsilon_upper, delta)-DP).
    """
    from dpcalc.core.pld import tight_epsilon

    OPEN_UNIT.check("delta", delta)
    run = _phases(p=p, sigma=sigma, T=T, n=n, batch_size=batch_size, epochs=epochs, noise_std=noise_std,
                  sensitivity=sensitivity, mechanism=mechanism, scale=scale, phases=phases, sampling=sampling,
                  neighbours=neighbours, examples_per_user=examples_per_user)
    width = ACCURACY.check("accuracy", accuracy)
    if max_batch_size is not None:
        return _truncated(run, n, max_batch_size, delta=delta, epsilon=None, accuracy=width)
    return tight_epsilon(run, delta, accuracy=width)


def _truncated(run: list[Phase], n: int | None, max_batch_size: int, *, delta: float | None, epsilon: float | None,
               accuracy: float) -> PLDResult:
    """The capped run's result (`core.pld.truncation`): one Poisson-sampled Gaussian phase of n records."""
    from dpcalc.core.pld.truncation import Truncation, account_truncated

    if n is None:
        raise RunError("{max_batch_size} needs the dataset size {n} (with {batch_size}): the chance of a batch above "
                       "the cap depends on it")
    truncated, _poisson, _overflow = account_truncated(run, Truncation(n, max_batch_size), delta=delta,
                                                       epsilon=epsilon, accuracy=accuracy)
    return truncated


def pld_delta(*, eps: float, p: float | None = None, sigma: float | None = None, T: int | None = None,
              n: int | None = None, batch_size: int | None = None, epochs: float | None = None,
              noise_std: float | None = None, sensitivity: float | None = None,
              mechanism: MechanismName | None = None, scale: float | None = None,
              phases: Sequence[Phase] | None = None, sampling: SamplingName | None = None,
              neighbours: NeighboursName | None = None, examples_per_user: int | None = None,
              max_batch_size: int | None = None, accuracy: float = DEFAULT_ACCURACY) -> PLDResult:
    """Mirrors `dpcalc pld --eps`: a certified interval on delta at epsilon `eps`.

    The run is given as for `pld_epsilon`. Returns `core.pld.PLDResult`; quote `delta_upper`.
    """
    from dpcalc.core.pld import tight_delta

    NON_NEGATIVE.check("eps", eps)
    run = _phases(p=p, sigma=sigma, T=T, n=n, batch_size=batch_size, epochs=epochs, noise_std=noise_std,
                  sensitivity=sensitivity, mechanism=mechanism, scale=scale, phases=phases, sampling=sampling,
                  neighbours=neighbours, examples_per_user=examples_per_user)
    width = ACCURACY.check("accuracy", accuracy)
    if max_batch_size is not None:
        return _truncated(run, n, max_batch_size, delta=None, epsilon=eps, accuracy=width)
    return tight_delta(run, eps, accuracy=width)


def gdp(*, delta: float | None = None, eps: float | None = None, p: float | None = None,
        sigma: float | None = None, T: int | None = None, n: int | None = None, batch_size: int | None = None,
        epochs: float | None = None, noise_std: float | None = None, sensitivity: float | None = None,
        sampling: Literal["poisson", "uniform"] = "poisson", mu: float | None = None) -> GDPResult:
    """Mirrors `dpcalc gdp`: Gaussian differential privacy, with epsilon at `delta` (or delta at `eps`).

    Either the training run (p, sigma, T or the training form, `sampling` poisson or uniform),
    whose mu is the central-limit approximation (labelled so in the result's warnings; not a
    bound: use `pld_epsilon` for the certified figure), or a given `mu`, converted exactly.
    Exactly one of `delta` and `eps`.

    Returns `core.gdp.GDPResult`.
    """
    from dpcalc.core import gdp as core

    target_delta, target_epsilon = _one_target(delta, eps)
    training = _checked(p=p, sigma=sigma, T=T, n=n, batch_size=batch_size, epochs=epochs, noise_std=noise_std,
                        sensitivity=sensitivity)
    if sampling not in ("poisson", "uniform"):
        raise ParameterError("sampling", "poisson or uniform", repr(sampling))
    if mu is not None:
        given = [name for name, value in training.items() if value is not None]
        if given:
            raise conflict("{mu}", "{" + given[0] + "}", "mu converts a given mu; the training run gives its own")
        return core.gdp_guarantee(POSITIVE.check("mu", mu), delta=target_delta, epsilon=target_epsilon)
    from dpcalc.core.training import RunParameters, training_run

    run = training_run(RunParameters(**training))
    return core.noisy_sgd_gdp(*run, sampling=sampling, delta=target_delta, epsilon=target_epsilon)


def rdp(*, delta: float | None = None, eps: float | None = None, p: float | None = None, sigma: float | None = None,
        T: int | None = None, n: int | None = None, batch_size: int | None = None, epochs: float | None = None,
        noise_std: float | None = None, sensitivity: float | None = None, mechanism: MechanismName | None = None,
        scale: float | None = None, phases: Sequence[Phase] | None = None, sampling: SamplingName | None = None,
        neighbours: NeighboursName | None = None, orders: Sequence[float] | None = None,
        conversion: Literal["improved", "classic"] = "improved") -> RDPResult:
    """Mirrors `dpcalc rdp`: Renyi DP of the run, with epsilon at `delta` (or delta at `eps`).

    The run is given as for `pld_epsilon` (the RDP curves cover Poisson sampling under add-remove
    or zero-out, fixed-size batches under replace-one, and unsampled Laplace phases). `orders`:
    the Renyi orders, in (1, 1e100] (default the command's grid); `conversion`: improved or
    classic. Exactly one of `delta` and `eps`.

    Returns `core.rdp.RDPResult` (`epsilon`, `delta`, the best `order`, the curve).
    """
    from dpcalc.core.rdp import rdp_accountant
    from dpcalc.core.rdp.curves import check_covered

    target_delta, target_epsilon = _one_target(delta, eps)
    grid = None
    if orders is not None:
        order_range = Interval(1.0, MAX_ORDER, high_closed=True)
        grid = sorted({float(order_range.check("orders", order)) for order in orders})
        if not grid:
            raise ParameterError("orders", "a non-empty list of orders in (1, 1e+100]", "[]")
    if conversion not in ("improved", "classic"):
        raise ParameterError("conversion", "improved or classic", repr(conversion))
    run = _phases(p=p, sigma=sigma, T=T, n=n, batch_size=batch_size, epochs=epochs, noise_std=noise_std,
                  sensitivity=sensitivity, mechanism=mechanism, scale=scale, phases=phases, sampling=sampling,
                  neighbours=neighbours, examples_per_user=None)
    check_covered(run, per_phase=phases is not None)
    return rdp_accountant(run, orders=grid, delta=target_delta, epsilon=target_epsilon, conversion=conversion)


def risk(*, p: float | None = None, sigma: float | None = None, T: int | None = None, n: int | None = None,
         batch_size: int | None = None, epochs: float | None = None, noise_std: float | None = None,
         sensitivity: float | None = None, mechanism: MechanismName | None = None, scale: float | None = None,
         phases: Sequence[Phase] | None = None, sampling: SamplingName | None = None,
         neighbours: NeighboursName | None = None, examples_per_user: int | None = None,
         fpr: Sequence[float] | None = None, prior: float | None = None, kappa: float | None = None,
         max_batch_size: int | None = None, accuracy: float = DEFAULT_ACCURACY) -> RiskResult:
    """Mirrors `dpcalc risk`: certified bounds on what an attacker can learn from the run.

    The run is given as for `pld_epsilon`. `fpr`: the false-positive rates at which the largest
    true-positive rate of a membership attack is bounded (default the command's); `prior`: the
    prior of the Bayes success figure; `kappa`: the baseline of the reconstruction figure;
    `max_batch_size` caps Poisson batches (needs `n`): every figure is the capped run's, the
    Poisson run's moved by the overflow probability or, step by step under add-remove, by less
    (`risk --max-batch-size`; `result.overflow` is what the upper ends moved by).

    Returns `core.risk.RiskResult` (e.g. `result.points[0].tpr.upper`, `result.advantage.upper`).
    """
    from dpcalc.core.limits import DEFAULT_FPRS, DEFAULT_PRIOR
    from dpcalc.core.risk import attack_risk

    run = _phases(p=p, sigma=sigma, T=T, n=n, batch_size=batch_size, epochs=epochs, noise_std=noise_std,
                  sensitivity=sensitivity, mechanism=mechanism, scale=scale, phases=phases, sampling=sampling,
                  neighbours=neighbours, examples_per_user=examples_per_user)
    above = below = 0.0
    if max_batch_size is not None:
        from dpcalc.core.pld.truncation import Truncation, cap_costs

        if n is None:
            raise RunError("{max_batch_size} needs the dataset size {n} (with {batch_size}): the chance of a batch "
                           "above the cap depends on it")
        above, below = cap_costs(run, Truncation(n, max_batch_size))
    return attack_risk(run, fprs=tuple(DEFAULT_FPRS if fpr is None else fpr),
                       prior=DEFAULT_PRIOR if prior is None else prior, kappa=kappa,
                       accuracy=ACCURACY.check("accuracy", accuracy), overflow=above, overflow_below=below)


def calibrate(*, solve: Solve = "sigma", target_eps: float, delta: float, accountant: Accountant = "pld",
              p: float | None = None, sigma: float | None = None, T: int | None = None, n: int | None = None,
              batch_size: int | None = None, epochs: float | None = None, noise_std: float | None = None,
              sensitivity: float | None = None, precision: float | None = None, sampling: SamplingName = "poisson",
              neighbours: NeighboursName = "add-remove", examples_per_user: int = 1,
              max_batch_size: int | None = None) -> CalibrationResult:
    """Mirrors `dpcalc calibrate --target-eps`: the value of `solve` (sigma, T, epochs, p or
    batch_size) that meets `target_eps` at `delta` under `accountant` (pld, rdp or gdp), the
    other quantities given as keywords. `precision`: the relative precision of sigma and p.
    `sampling`, `neighbours` and `examples_per_user` describe the run as for `pld_epsilon`
    (shuffle and allocation need n and batch_size). `max_batch_size` caps Poisson batches (needs
    n; pld or rdp): the capped run's epsilon is the one met (`calibrate --max-batch-size`).

    Returns `core.calibrate.CalibrationResult`; `feasible` says whether any value meets the
    target. Its `certified_epsilon` is a sound upper bound on epsilon at the answer (for the gdp
    accountant, the PLD accountant's; None where it could not be certified).
    """
    from dpcalc.core.calibrate.inputs import (
        capped,
        certified_result,
        check_accountant,
        check_cap,
        check_mechanism,
        check_scheme,
        parse_problem,
    )
    from dpcalc.core.calibrate.request import GivenRun, Scheme

    solved = "batch-size" if solve == "batch_size" else solve
    if solved not in ("sigma", "T", "epochs", "p", "batch-size"):
        raise ParameterError("solve", "one of sigma, T, epochs, p, batch_size", repr(solve))
    if accountant not in ("pld", "rdp", "gdp"):
        raise ParameterError("accountant", "pld, rdp or gdp", repr(accountant))
    if precision is not None:
        PRECISION.check("precision", precision)
    row = GivenRun(target_epsilon=NON_NEGATIVE.check("target_eps", target_eps), delta=OPEN_UNIT.check("delta", delta),
                   precision=precision,
                   **_checked(p=p, sigma=sigma, T=T, n=n, batch_size=batch_size, epochs=epochs, noise_std=noise_std,
                              sensitivity=sensitivity))
    check_mechanism("gaussian", solved, accountant, row, sensitivity)
    problem = parse_problem(row, solved)
    if (sampling, neighbours, examples_per_user) != ("poisson", "add-remove", 1):
        scheme = Scheme(sampling, neighbours, examples_per_user)
        check_accountant(accountant, scheme)
        check_scheme(row, solved, scheme)
        problem = problem._replace(scheme=scheme)
    if max_batch_size is not None:
        POSITIVE_INTEGER.check("max_batch_size", max_batch_size)
        check_cap(max_batch_size, solved, accountant, "gaussian", sampling, False, n is not None)
        problem = capped(problem, row, max_batch_size)
    return certified_result(problem.solve(accountant))


def calibrate_sigma(target_eps: float, *, delta: float, accountant: Accountant = "pld", p: float | None = None,
                    T: int | None = None, n: int | None = None, batch_size: int | None = None,
                    epochs: float | None = None, precision: float | None = None, sampling: SamplingName = "poisson",
                    neighbours: NeighboursName = "add-remove", examples_per_user: int = 1) -> CalibrationResult:
    """Mirrors `dpcalc calibrate --target-eps E` (solving sigma, the default): the smallest noise
    multiplier whose epsilon at `delta` is at most `target_eps`. `calibrate(solve="sigma", ...)`.

    Returns `core.calibrate.CalibrationResult` (`value` is sigma).
    """
    return calibrate(solve="sigma", target_eps=target_eps, delta=delta, accountant=accountant, p=p, T=T, n=n,
                     batch_size=batch_size, epochs=epochs, precision=precision, sampling=sampling,
                     neighbours=neighbours, examples_per_user=examples_per_user)


def check_budget(path: str | Path | None = None, *, text: str | None = None) -> BudgetResult:
    """Mirrors `dpcalc check BUDGET`: every release of a budget file composed and compared with
    its budget. Give the file's `path`, or its TOML `text` (not both).

    Returns `core.budget.BudgetResult` (`within_budget`, `total_epsilon`, `releases`, ...).
    A malformed file raises `core.budget.BudgetFileError`, a ValueError.
    """
    from dpcalc.core.budget import account_budget, load_budget

    if (path is None) == (text is None):
        raise RunError("give the budget file's {path} or its {text} (one of them)")
    if text is None:
        assert path is not None
        source = str(path)
        text = Path(path).read_text(encoding="utf-8")
    else:
        source = "<text>"
    return account_budget(load_budget(text, source))


# The keywords of a run and the interval each is checked against (the command's options').
_RANGES: dict[str, Interval] = {
    "p": PROBABILITY, "sigma": POSITIVE, "noise_std": POSITIVE, "sensitivity": POSITIVE, "T": POSITIVE_INTEGER,
    "n": POSITIVE_INTEGER, "batch_size": POSITIVE_INTEGER, "epochs": POSITIVE, "scale": POSITIVE,
}


def _checked(**values: float | None) -> dict[str, Any]:
    """The run's keywords, each checked against its interval; counts as int, the others as float."""
    checked: dict[str, float | None] = {}
    for name, value in values.items():
        if value is not None:
            interval = _RANGES[name]
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise ParameterError(name, interval.requirement, repr(value))
            interval.check(name, value)
            if interval.integer:
                if abs(value) >= MAX_COUNT:
                    raise ParameterError(name, f"{interval.requirement} below 1e300", value)
                value = int(value)
            else:
                value = float(value)  # numpy scalars too: the training form reads p's decimal from repr
        checked[name] = value
    return checked


def _phases(*, phases: Sequence[Phase] | None, mechanism: str | None, sampling: str | None,
            neighbours: str | None, examples_per_user: int | None, **flags: float | None) -> list[Phase]:
    """The run's phases, as the command builds them from its flags or from --phase."""
    from dpcalc.core.training import RunParameters, single_phase, with_relation

    if mechanism is not None and mechanism not in ("gaussian", "laplace"):
        raise ParameterError("mechanism", "gaussian or laplace", repr(mechanism))
    if sampling is not None and sampling not in SAMPLINGS:
        raise ParameterError("sampling", f"one of {', '.join(SAMPLINGS)}", repr(sampling))
    if neighbours is not None and neighbours not in NEIGHBOURS:
        raise ParameterError("neighbours", f"one of {', '.join(NEIGHBOURS)}", repr(neighbours))
    if examples_per_user is not None:
        POSITIVE_INTEGER.check("examples_per_user", examples_per_user)
    given = _checked(**flags)
    if phases is not None:
        given_flags = [name for name, value in given.items() if value is not None]
        if mechanism is not None or given_flags:
            raise conflict("{phases}", "{" + (given_flags[0] if given_flags else "mechanism") + "}",
                           "describe every phase in phases, or give one phase with the keywords")
        run = list(phases)
        if not run or not all(isinstance(item, Phase) for item in run):
            raise ParameterError("phases", "a non-empty list of Phase", repr(phases))
        # the relation of the keywords applies to every phase; without them, the phases' own
        if sampling is None and neighbours is None and examples_per_user is None:
            return run
    else:
        run = single_phase(RunParameters(**given, mechanism=mechanism))
    return with_relation(run, sampling, neighbours, None if examples_per_user is None else int(examples_per_user))


def _one_target(delta: float | None, eps: float | None) -> tuple[float | None, float | None]:
    """(delta, eps): exactly one of them, checked."""
    if (delta is None) == (eps is None):
        raise RunError("give exactly one of {delta} (for epsilon at delta) and {eps} (for delta at eps)")
    if delta is not None:
        return OPEN_UNIT.check("delta", delta), None
    assert eps is not None
    return None, NON_NEGATIVE.check("eps", eps)
