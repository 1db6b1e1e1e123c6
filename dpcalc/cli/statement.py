"""`dpcalc statement`: a privacy statement of one training run, Markdown to paste into a paper or a
model card (dpcalc.core.statement)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from dpcalc.cli.declare import App, Group, Option
from dpcalc.cli.errors import InputError
from dpcalc.cli.like import Like, LikeChoice, like_figure
from dpcalc.cli.options import DEFAULT_DELTA, Delta, Json, Swept, one
from dpcalc.cli.output import Answer, Report
from dpcalc.cli.phases import Accuracy, RunOptions, phase_inputs
from dpcalc.cli.tight import paused_gc
from dpcalc.core import record
from dpcalc.core.limits import DEFAULT_ACCURACY

if TYPE_CHECKING:
    from dpcalc.core.phases import Phase

app = App()

HELP = """A privacy statement of one training run: Markdown to paste into a paper or a model card.

It states the pipeline (sampling, neighbour relation, example or user level, noise, steps), the
certified epsilon at delta with both ends of its interval (the PLD accountant, as `dpcalc pld`),
what an attacker can learn (the certified largest membership-inference advantage and the TPR at
FPR 0.001, as `dpcalc risk`), the assumptions the guarantee rests on, and its sources. Numbers
are rounded outward. --like FRAMEWORK adds the epsilon that framework prints by default for the
run (an estimate, labelled as such; docs/presets.md). The run options are those of `dpcalc pld`; a sweep is refused (one run, one
statement). --json gives the figures and the Markdown as one JSON object.

\b
Examples:
  dpcalc statement --n 60000 --batch-size 256 --epochs 60 --sigma 1.12
  dpcalc statement --p 0.004 --sigma 1.1 --T 10000 --delta 1e-6 --like opacus
  dpcalc statement --n 60000 --batch-size 240 --epochs 10 --sigma 1.1 --sampling shuffle --neighbours zero-out
"""


@dataclass(frozen=True, repr=False, eq=False)
class StatementRequest:
    """One run to state: its phases, the target delta, the accuracy, and the run as given in examples."""

    phases: tuple[Phase, ...]
    delta: float
    accuracy: float
    dataset_size: int | None
    batch_size: int | None


@app.command("statement", help=HELP)
def statement(
    run: Annotated[RunOptions, Group()],
    accuracy: Accuracy = None,
    delta: Delta = None,
    json_output: Json = False,
    like: Like = None,
    budget: Annotated[str | None, Option("--budget", metavar="FILE", help=(
        "State a project's budget file (TOML, as `dpcalc check` reads it) instead of one run: every "
        "release, the certified total and the budget's verdict."))] = None,
) -> Answer:
    if budget is not None:
        return _budget_statement(budget, run, accuracy, delta, like, json_output)
    request = _request(run, accuracy, delta)
    framework = _framework(like, request)
    from dpcalc import __version__
    from dpcalc.core import pld
    from dpcalc.core.risk import attack_risk
    from dpcalc.core.statement import STATEMENT_FPR, FrameworkFigure
    from dpcalc.core.statement import statement as make_statement

    with paused_gc():
        result = pld.tight_epsilon(list(request.phases), request.delta, accuracy=request.accuracy)
        risk = attack_risk(request.phases, fprs=(STATEMENT_FPR,), accuracy=request.accuracy)
    made = make_statement(request.phases, result, risk, dataset_size=request.dataset_size,
                          batch_size=request.batch_size, version=__version__,
                          framework=None if framework is None else FrameworkFigure(
                              f"{framework['library']} ({framework['accountant']} accountant)", framework['epsilon']))
    report = Report(
        command="statement",
        inputs={"phases": [phase_inputs(item) for item in request.phases], "delta": request.delta,
                "accuracy": request.accuracy, "n": request.dataset_size, "batch_size": request.batch_size,
                "like": None if like is None else like.value},
        result={"markdown": made.markdown, "delta": made.delta, "epsilon": made.epsilon_upper,
                "epsilon_lower": made.epsilon_lower, "max_advantage": made.advantage_upper, "fpr": made.fpr,
                "tpr": made.tpr_upper, "framework": framework},
        tables=[],
        warnings=list(dict.fromkeys([*result.warnings, *risk.warnings])),
        text=made.markdown,
    )
    return Answer(report, json_output=json_output)


def _request(run: RunOptions, accuracy: float | Swept | None, delta: float | Swept | None) -> StatementRequest:
    """The one run the options describe (a sweep is refused)."""
    numbers = run.numbers()
    for value in (*(getattr(numbers, name) for name in record.fields(numbers)), accuracy, delta):
        if isinstance(value, Swept):
            raise InputError(f"{value.option} {value.text}: a statement describes one run; give each option one value",
                             option=value.option, got=value.text)
    phases = tuple(run.phases(numbers))
    delta, accuracy = one(delta), one(accuracy)
    return StatementRequest(phases, DEFAULT_DELTA if delta is None else delta,
                            DEFAULT_ACCURACY if accuracy is None else accuracy,
                            one(run.n), one(run.batch_size))


def _framework(like: LikeChoice | None, request: StatementRequest) -> dict[str, Any] | None:
    """What the framework --like names prints by default for the run (`dpcalc.cli.like`): TF
    Privacy's statement uses its RDP accountant, the others their numerical accountant."""
    family: Literal["rdp", "pld"] = "rdp" if like is not None and like.value.startswith("tf-privacy") else "pld"
    return like_figure(like, request.phases, request.delta, family)


def _budget_statement(budget: str, run: RunOptions, accuracy: float | Swept | None, delta: float | Swept | None,
                      like: LikeChoice | None, json_output: bool) -> Answer:
    """The statement of a budget file: its releases, the certified total and the verdict."""
    given = [name for name, value in (("--accuracy", accuracy), ("--delta", delta), ("--like", like)) if value is not None]
    given += [f"--{name.replace('_', '-')}" for name in record.fields(run) if getattr(run, name) is not None]
    if given:
        from dpcalc.cli.errors import conflict

        raise conflict("--budget", given[0], "the budget file describes the releases and their delta")
    from dpcalc import __version__
    from dpcalc.cli.check import read_and_account
    from dpcalc.core.statement import budget_statement

    _text, result = read_and_account(budget, "--budget")
    made = budget_statement(result, version=__version__)
    report = Report(
        command="statement",
        inputs={"budget": budget},
        result={"markdown": made.markdown, "delta": made.delta, "epsilon": made.epsilon,
                "within_budget": made.within_budget},
        tables=[],
        warnings=list(result.warnings),
        text=made.markdown,
    )
    return Answer(report, json_output=json_output)
