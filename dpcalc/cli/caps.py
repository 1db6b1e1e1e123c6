"""--max-batch-size of pld and risk: truncated Poisson sampling, its batches cut to a cap.

The rules of a capped run are the core's (`core.training.check_cap_dataset`,
`check_capped_phases`; the accounting: `core.pld.truncation`, docs/mathematics.md, "Truncated
Poisson sampling"); here they are applied to the options, and the cost of the cap is worded.
Imported only when --max-batch-size is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dpcalc.cli.errors import conflict
from dpcalc.core.record import Value
from dpcalc.core.text import format_upper
from dpcalc.core.training import check_cap_dataset, check_capped_phases

if TYPE_CHECKING:
    from dpcalc.cli.options import Outputs
    from dpcalc.cli.phases import RunOptions
    from dpcalc.core.phases import Phase
    from dpcalc.core.pld import PLDResult


class Cap(Value):
    """A run's batches cut to --max-batch-size (truncated Poisson sampling) and what that costs."""

    max_batch_size: int
    n: int
    overflow_probability: float
    analysis: str  # the analyses its figures rest on (`core.pld.truncation.cap_analysis`)

    def keys(self) -> dict[str, Any]:
        """The JSON `result.truncation`."""
        return {"max_batch_size": self.max_batch_size, "n": self.n, "overflow_probability": self.overflow_probability,
                "analysis": self.analysis}


def check_cap(run: RunOptions, outputs: Outputs | None = None) -> None:
    """--max-batch-size applies to one run given with the flags, of known dataset size
    (`core.training.check_cap_dataset`); pld (`outputs`) does not draw it."""
    if run.phase:
        raise conflict("--max-batch-size", "--phase", "the cap applies to a single-phase run given with the flags")
    check_cap_dataset(run.n)
    if outputs is not None and (outputs.plot is not None or outputs.chart):
        raise conflict("--max-batch-size", "--plot" if outputs.plot is not None else "--chart",
                       "the figures draw the Poisson run's profile; give them without the cap")


def capped_run(phases: Sequence[Phase], dataset_size: int, max_batch_size: int, target_delta: float | None,
               target_epsilon: float | None, accuracy: float) -> tuple[PLDResult, PLDResult, Cap]:
    """(truncated run's result, Poisson run's result, the cap) (core.pld.truncation)."""
    from dpcalc.core.pld.truncation import Truncation, account_truncated, cap_analysis

    check_capped_phases(list(phases))
    truncation = Truncation(dataset_size, max_batch_size)
    result, poisson, overflow = account_truncated(phases, truncation, delta=target_delta, epsilon=target_epsilon,
                                                  accuracy=accuracy)
    return result, poisson, Cap(max_batch_size, dataset_size, overflow, cap_analysis(phases, truncation))


def cap_costs(phases: Sequence[Phase], dataset_size: int, max_batch_size: int) -> tuple[Cap, float, float]:
    """The cap, with eta a certified upper bound on the probability that some batch exceeds it, and
    what it may move the figures by above and below (`core.pld.truncation.cap_costs`): risk's."""
    from dpcalc.core.pld.truncation import Truncation, cap_analysis, overflow_probability
    from dpcalc.core.pld.truncation import cap_costs as costs

    check_capped_phases(list(phases))
    truncation = Truncation(dataset_size, max_batch_size)
    overflow = overflow_probability(phases, truncation)
    above, below = costs(phases, truncation, overflow)
    return Cap(max_batch_size, dataset_size, overflow, cap_analysis(phases, truncation)), above, below


def cap_note(analysis: str) -> str:
    """What a capped run's figures rest on, for the tables of pld and risk."""
    from dpcalc.core.pld.truncation import STEP_BY_STEP

    if analysis == STEP_BY_STEP:
        return ("the tighter of the overflow bound and the step-by-step one (an added example pushes at most one "
                "other out of a full batch)")
    return "the overflow bound: (1 + e^eps) times the overflow probability added to delta"


def truncation_rows(truncation: Cap, poisson: PLDResult, epsilon_solved: bool) -> list[tuple[str, str, str]]:
    """The rows that say what the batch-size cap costs: the overflow probability, the analyses
    used, and the uncapped Poisson run's figure."""
    quantity = "epsilon" if epsilon_solved else "delta"
    return [
        ("max batch size", str(truncation.max_batch_size), f"batches cut to this; n = {truncation.n}"),
        ("overflow probability", format_upper(truncation.overflow_probability), "some batch above the cap"),
        ("cap analysis", "", cap_note(truncation.analysis)),
        (f"{quantity} without the cap", format_upper(getattr(poisson, quantity + "_upper")), "plain Poisson sampling"),
    ]
