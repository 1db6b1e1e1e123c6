"""The privacy statement (dpcalc.core.statement): its figures are the accountant's, rounded outward,
and its text describes the run that was accounted."""

from __future__ import annotations

import re

import pytest

from dpcalc.core import pld
from dpcalc.core.phases import Phase
from dpcalc.core.risk import attack_risk
from dpcalc.core.statement import STATEMENT_FPR, FrameworkFigure, statement

DESIGN = [Phase("gaussian", 0.004, 1.1, None, 10_000)]


def _statement(phases, **keywords):
    result = pld.tight_epsilon(phases, 1e-5)
    risk = attack_risk(phases, fprs=(STATEMENT_FPR,))
    return result, risk, statement(phases, result, risk, **keywords)


def _table(markdown: str) -> dict[str, str]:
    rows = re.findall(r"^\| (.+?) \| (.+?) \|$", markdown, flags=re.MULTILINE)
    return dict(row for row in rows if row[0] != "quantity")


def test_design_card_figures_are_the_accountants_rounded_outward() -> None:
    result, risk, made = _statement(DESIGN, dataset_size=62_500, batch_size=250)
    table = _table(made.markdown)
    upper = float(table["epsilon at delta = 1e-05 (certified upper bound)"])
    lower = float(table["epsilon, certified lower bound"])
    assert upper >= result.epsilon_upper and upper - result.epsilon_upper < 2e-6
    assert lower <= result.epsilon_lower and result.epsilon_lower - lower < 2e-6
    # the design card's tight epsilon, 1.8410 (dp_accounting 0.6.0: 1.841037; prv_accountant 0.2.0:
    # 1.840963), lies inside the stated interval
    assert lower <= 1.840963 and 1.841037 <= upper
    advantage = float(table["largest membership-inference advantage (TPR - FPR)"].removeprefix("<= "))
    assert advantage >= risk.advantage.upper
    assert made.epsilon_upper == result.epsilon_upper and made.tpr_upper == risk.points[0].tpr.upper


def test_text_describes_the_run() -> None:
    *_, made = _statement(DESIGN, dataset_size=62_500, batch_size=250)
    text = made.markdown
    assert text.startswith("**Privacy statement.** The model was trained with DP-SGD on 62500 examples")
    assert "Poisson sampling" in text and "add-remove neighbours" in text and "example level" in text
    assert "every intermediate model is released" in text
    assert "References: Abadi et al. 2016" in text


@pytest.mark.slow
@pytest.mark.parametrize(("sampling", "neighbours", "words"), [
    ("uniform", "replace-one", "fixed-size batches"),
    ("shuffle", "zero-out", "shuffled epochs"),
])
def test_other_pipelines_are_named(sampling: str, neighbours: str, words: str) -> None:
    phases = [Phase("gaussian", 0.004, 1.1, None, 500, sampling=sampling, neighbours=neighbours, epoch_steps=250)]
    *_, made = _statement(phases)
    assert words in made.markdown and f"{neighbours} neighbours" in made.markdown


@pytest.mark.slow
def test_user_level_and_framework_figure() -> None:
    phases = [Phase("gaussian", 0.004, 1.1, None, 1000, examples_per_user=2)]
    *_, made = _statement(phases, framework=FrameworkFigure("TF Privacy (RDP accountant)", 0.5))
    assert "user level (each user contributing at most 2 examples)" in made.markdown
    assert "one user's examples added or removed" in made.markdown
    assert _table(made.markdown)["epsilon as TF Privacy (RDP accountant) reports it (an estimate, not a bound)"] == "0.5"
