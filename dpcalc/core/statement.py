"""A privacy statement of a training run: a Markdown paragraph and table to paste into a paper or a
model card.

The statement says what was run (the sampling scheme, the neighbour relation, example or user
level, the noise, the length), what is guaranteed (the certified epsilon at delta with both ends
of its interval, from the PLD accountant), what an attacker can learn (the certified largest
membership-inference advantage and the true-positive rate at a small false-positive rate), the
figure a common framework would have printed for the same run where one is given (a point
estimate, labelled as such), the assumptions the guarantee rests on, and its sources.

Compared with TF Privacy's `compute_dp_sgd_privacy_statement`, which prints RDP epsilons for two
assumed data orders (each example once an epoch; Poisson sampling, "believed" closer), the
statement accounts the sampling the run used, certifies both ends of its epsilon, and adds the
attack-risk figures the guarantee implies. Numbers are rounded outward: an upper bound is never
printed below its value, nor a lower bound above it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dpcalc.core.text import format_lower, format_number, format_upper

if TYPE_CHECKING:
    from dpcalc.core.budget import BudgetResult
    from dpcalc.core.phases import Phase
    from dpcalc.core.pld import PLDResult
    from dpcalc.core.risk import RiskResult

# The false-positive rate of the statement's membership-inference figure: small, as attacks are
# judged at low FPR (Carlini et al. 2022).
STATEMENT_FPR = 1e-3

_SAMPLING = {
    "poisson": "Poisson sampling (each example joins each step independently with probability {p})",
    "uniform": "fixed-size batches drawn without replacement (sampling rate {p})",
    "shuffle": "shuffled epochs (each epoch a random permutation cut into batches: every example once an epoch)",
    "allocation": "random allocation (each example assigned to one step of each epoch, uniformly at random)",
}
_NEIGHBOURS = {
    "add-remove": "add-remove neighbours (one example added or removed)",
    "replace-one": "replace-one neighbours (one example replaced by another)",
    "zero-out": "zero-out neighbours (one example replaced by a null example that contributes nothing)",
}
_USER_NEIGHBOURS = {
    "add-remove": "add-remove neighbours (one user's examples added or removed)",
    "zero-out": "zero-out neighbours (one user's examples replaced by null examples that contribute nothing)",
}
_REFERENCES = (
    "Abadi et al. 2016, \"Deep learning with differential privacy\" (DP-SGD)",
    "Zhu, Dong, Wang 2022, \"Optimal accounting of differential privacy via characteristic function\" (dominating pairs)",
    "Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022, \"Connect the dots\" (PLD discretisation)",
    "Dong, Roth, Su 2022, \"Gaussian differential privacy\" (trade-off curves and attack risk)",
)


@dataclass(frozen=True)
class FrameworkFigure:
    """The epsilon a framework would have printed for the same run: a point estimate, not a bound."""

    framework: str  # e.g. "TF Privacy (RDP accountant, its default orders)"
    epsilon: float


@dataclass(frozen=True)
class Statement:
    """A run's privacy statement: `markdown` to paste, and the figures it states."""

    markdown: str
    delta: float
    epsilon_upper: float
    epsilon_lower: float
    advantage_upper: float
    fpr: float
    tpr_upper: float
    framework: FrameworkFigure | None


def statement(phases: Sequence[Phase], result: PLDResult, risk: RiskResult, *, dataset_size: int | None = None,
              batch_size: int | None = None, framework: FrameworkFigure | None = None,
              version: str | None = None) -> Statement:
    """The statement of the run `phases`, from its PLD result (epsilon at delta) and its attack
    risk (`risk` must hold the point at STATEMENT_FPR); `dataset_size` and `batch_size` describe
    the run as given in examples, when they are known."""
    point = next(item for item in risk.points if item.fpr == STATEMENT_FPR)
    rows = [
        (f"epsilon at delta = {format_number(result.delta)} (certified upper bound)", format_upper(result.epsilon_upper)),
        ("epsilon, certified lower bound", format_lower(result.epsilon_lower)),
    ]
    if framework is not None:
        rows.append((f"epsilon as {framework.framework} reports it (an estimate, not a bound)",
                     format_number(framework.epsilon)))
    rows += [
        ("largest membership-inference advantage (TPR - FPR)", f"<= {format_upper(risk.advantage.upper)}"),
        (f"largest TPR of a membership-inference attack at FPR = {format_number(STATEMENT_FPR)}",
         f"<= {format_upper(point.tpr.upper)}"),
    ]
    table = ["| quantity | value |", "|---|---|", *(f"| {name} | {value} |" for name, value in rows)]
    tool = "dpcalc" if version is None else f"dpcalc {version}"
    paragraph = (
        f"{_pipeline(phases, dataset_size, batch_size)} The released models satisfy "
        f"({format_upper(result.epsilon_upper)}, {format_number(result.delta)})-differential privacy at the "
        f"{_level(phases)}: the privacy loss distributions of the run, composed with certified error bounds "
        f"({tool}), put the smallest such epsilon in [{format_lower(result.epsilon_lower)}, "
        f"{format_upper(result.epsilon_upper)}]."
    )
    assumptions = [
        "every intermediate model is released (the guarantee covers all checkpoints, not only the last);",
        "each example's gradient is clipped to L2 norm C before the batch is summed, and the Gaussian noise "
        "added to the sum has standard deviation sigma C, independent across steps;",
        f"batches are formed by {_SAMPLING[phases[0].sampling].split(' (')[0]} as stated, with randomness "
        "hidden from the adversary;",
        "hyper-parameters were not tuned on the private data (tuning has a privacy cost of its own).",
    ]
    markdown = "\n".join([
        "**Privacy statement.** " + paragraph,
        "",
        *table,
        "",
        "Assumptions: " + " ".join(assumptions),
        "",
        "References: " + "; ".join(_REFERENCES) + ".",
        "",
    ])
    return Statement(markdown, result.delta, result.epsilon_upper, result.epsilon_lower, risk.advantage.upper,
                     STATEMENT_FPR, point.tpr.upper, framework)


def _pipeline(phases: Sequence[Phase], dataset_size: int | None, batch_size: int | None) -> str:
    """What was run, in a sentence or two."""
    first = phases[0]
    if len(phases) == 1:
        noise = f"noise multiplier {format_number(first.noise_multiplier)}" if first.mechanism == "gaussian" else (
            f"Laplace noise of scale {format_number(first.scale)} times the L1 sensitivity")
        data = ("" if dataset_size is None or batch_size is None
                else f" on {dataset_size} examples with batches of {batch_size} on average"
                if first.sampling in ("poisson", "allocation") else f" on {dataset_size} examples with batches of {batch_size}")
        run = f"The model was trained with DP-SGD{data} for {first.steps} steps, {noise}."
    else:
        parts = ", then ".join(
            f"{item.steps} steps at sampling rate {format_number(item.sampling_probability)} and noise multiplier "
            f"{format_number(item.noise_multiplier)}" for item in phases)
        run = f"The model was trained with DP-SGD in {len(phases)} phases: {parts}."
    sampling = _SAMPLING[first.sampling].format(p=format_number(first.sampling_probability))
    return f"{run} Batches were formed by {sampling}."


def _level(phases: Sequence[Phase]) -> str:
    first = phases[0]
    if first.examples_per_user > 1:
        return (f"user level (each user contributing at most {first.examples_per_user} examples), under "
                + _USER_NEIGHBOURS[first.neighbours])
    return "example level, under " + _NEIGHBOURS[first.neighbours]


@dataclass(frozen=True)
class BudgetStatement:
    """A project's privacy statement from its budget file: `markdown` to paste, and the total it states."""

    markdown: str
    epsilon: float  # certified upper bound of all releases composed, at `delta`
    delta: float
    within_budget: bool


def budget_statement(result: BudgetResult, *, version: str | None = None) -> BudgetStatement:
    """The statement of a checked budget file (`dpcalc.core.budget.account_budget`): every release
    with its own (epsilon, delta), the certified total, the budget and its verdict, the risk limits."""
    budget = result.budget
    tool = "dpcalc" if version is None else f"dpcalc {version}"
    count = len(result.releases)
    rows = [f"| {item.name} | {item.mechanism} | {format_upper(item.epsilon)} | {format_number(item.delta)} | "
            f"{item.method} |" for item in result.releases]
    total = (f"| all {count} releases composed | | {format_upper(result.total_epsilon)} | "
             f"{format_number(result.total_delta)} | {result.method} |")
    table = ["| release | mechanism | epsilon | delta | accounted by |", "|---|---|---|---|---|", *rows, total]
    verdict = ("" if budget.epsilon is None else
               f" The total is {'within' if result.within_budget else 'over'} the budget of epsilon "
               f"{format_number(budget.epsilon)} at delta {format_number(budget.delta)}.")
    paragraph = (
        f"**Privacy statement.** The project made {count} release{'s' if count != 1 else ''} of the same data, "
        f"listed below with the guarantee of each. Composed, they satisfy "
        f"({format_upper(result.total_epsilon)}, {format_number(result.total_delta)})-differential privacy under "
        f"{_NEIGHBOURS[budget.neighbours]}, a certified upper bound computed by {tool} from the budget file "
        f"{budget.source}.{verdict}"
    )
    risks = [f"the largest membership-inference {'advantage' if check.figure == 'advantage' else f'TPR at FPR {format_number(check.fpr)}'}"
             f" of all releases together is at most {format_upper(check.value)} (limit {format_number(check.limit)})"
             for check in result.risk]
    markdown = "\n".join([
        paragraph,
        "",
        *table,
        "",
        *(["Attack risk: " + "; ".join(risks) + ".", ""] if risks else []),
        "Assumptions: every release is published (each guarantee covers all it outputs); each release's "
        "randomness is independent of the others' and hidden from the adversary; the budget file lists every "
        "release of this data.",
        "",
        "References: Dwork, Roth 2014, \"The algorithmic foundations of differential privacy\" (composition); "
        + "; ".join(_REFERENCES[1:]) + ".",
        "",
    ])
    return BudgetStatement(markdown, result.total_epsilon, result.total_delta, result.within_budget)
