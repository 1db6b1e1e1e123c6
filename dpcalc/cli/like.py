"""--like FRAMEWORK (rdp, pld, gdp, calibrate): the epsilon another library would print by
default for the same run, shown beside dpcalc's certified figure (`dpcalc.core.presets`;
docs/presets.md). JSON: result.like, null when not asked. Never a gate's figure."""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any

from dpcalc.cli.declare import Option
from dpcalc.cli.options import InputError
from dpcalc.cli.output import Table, format_number
from dpcalc.core import record

if TYPE_CHECKING:
    from dpcalc.core.phases import Phase
    from dpcalc.core.presets import Family, PresetResult


class LikeChoice(str, Enum):
    opacus = "opacus"
    tf_privacy = "tf-privacy"
    tf_privacy_05 = "tf-privacy-0.5"
    dp_accounting = "dp-accounting"
    prv = "prv"


Like = Annotated[
    LikeChoice | None,
    Option("--like", help="Also show the epsilon this framework prints by default for the run (its accountant, "
                          "orders, conversion and grid; docs/presets.md): its estimate, beside dpcalc's certified "
                          "figure, never used by --max-eps."),
]

# Why --like has no figure to give: it reports epsilon at a delta, for one run.
NEEDS_DELTA = "--like reports the framework's epsilon at a delta: give --delta (or its default), not --eps"
NOT_IN_SWEEPS = "--like takes one run, not a sweep: give one value per option"


def refuse_sweep(like: LikeChoice | None, swept: bool) -> None:
    """--like in a sweep is refused (before any row is computed)."""
    if like is not None and swept:
        raise InputError(NOT_IN_SWEEPS, option="--like")


def like_figure(like: LikeChoice | None, phases: Sequence[Phase], delta: float | None,
                family: Family) -> dict[str, Any] | None:
    """result.like for the run of `phases` at `delta` (None when --like is not given); a run the
    frameworks do not model or a delta not given is an InputError naming --like."""
    if like is None:
        return None
    if delta is None:
        raise InputError(NEEDS_DELTA, option="--like", options=("--like", "--delta", "--eps"))
    from dpcalc.core.presets import framework_epsilon

    try:
        return as_json(framework_epsilon(like.value, phases, delta, family))
    except ValueError as error:
        raise InputError(f"--like {like.value}: {error}", option="--like", got=like.value) from None
    except (ArithmeticError, RuntimeError) as error:  # the framework's own numerics fail at this extreme
        raise InputError(f"--like {like.value}: the framework's accountant has no figure for this run ({error})",
                         option="--like", got=like.value) from None


def like_of_mu(like: LikeChoice | None, mu: float, delta: float | None) -> dict[str, Any] | None:
    """result.like for a given mu (gdp --mu): the mu-GDP conversion every framework computes."""
    if like is None:
        return None
    if delta is None:
        raise InputError(NEEDS_DELTA, option="--like", options=("--like", "--delta", "--eps"))
    from dpcalc.core.presets import mu_epsilon

    return as_json(mu_epsilon(like.value, mu, delta))


def as_json(result: PresetResult) -> dict[str, Any]:
    """The documented keys of result.like (docs/json.md)."""
    return {
        "framework": result.framework,
        "library": result.library,
        "accountant": result.accountant,
        "epsilon": result.epsilon,
        "order": result.order,
        "basis": result.basis,
    }


def with_like_row(table: Table, like: dict[str, Any] | None) -> Table:
    """`table` (a quantity/value/note summary) with a row "<framework> estimate" appended."""
    if like is None:
        return table
    row = (f"{like['framework']} estimate", format_number(like["epsilon"]), like["basis"])
    return record.replace(table, rows=[*table.rows, row])


def gdp_like(like: LikeChoice | None, result: Any, delta: float | None, given_mu: bool) -> dict[str, Any] | None:
    """result.like of `dpcalc gdp` (`result`: its core GDPResult): the frameworks' GDP figure of
    the run, or the mu-GDP conversion of a given mu."""
    if like is None:
        return None
    if given_mu:
        return like_of_mu(like, result.mu, delta)
    from dpcalc.core.phases import Phase

    phase = Phase(sampling_probability=result.sampling_probability, noise_multiplier=result.noise_multiplier,
                  steps=result.steps, sampling=result.sampling)
    return like_figure(like, [phase], delta, "gdp")


def with_like(report: Any, like: dict[str, Any] | None) -> Any:
    """`report` (a dpcalc.cli.output.Report) with result.like set and, when asked, the framework's
    row appended to its first table (the summary)."""
    report.result["like"] = like
    if like is not None:
        report.tables[0] = with_like_row(report.tables[0], like)
    return report


def calibrate_like(like: LikeChoice | None, result: Any, scheme: dict[str, Any]) -> dict[str, Any] | None:
    """result.like of `dpcalc calibrate` (`result`: its CalibrationResult; `scheme`: the sampling,
    neighbours and examples per user given): the framework's epsilon at the answer, with its
    accountant of the kind --accountant names; None when no value meets the target."""
    if like is None or not result.feasible:
        return None
    if (result.mechanism != "gaussian" or scheme.get("sampling", "poisson") != "poisson"
            or scheme.get("neighbours") == "replace-one" or scheme.get("examples_per_user", 1) > 1):
        raise InputError(f"--like {like.value}: the frameworks' default accountants take Gaussian runs of "
                         "Poisson-sampled examples under add-remove neighbours", option="--like", got=like.value)
    from dpcalc.core.phases import Phase

    phase = Phase(sampling_probability=result.sampling_probability, noise_multiplier=result.noise_multiplier,
                  steps=result.steps)
    return like_figure(like, [phase], result.delta, result.accountant)
