"""Privacy budgets as code: a budget file read and checked, its releases composed against it.

A budget file is TOML: one `[budget]` table (epsilon, delta, optional accountant) and any
number of `[[release]]` tables, each naming a mechanism and its parameters.

The package, one concept a module:
- `schema`: the file's schema, the keys of each table and their ranges (`MECHANISMS`), and the
  file as read (`BudgetFile`, `Release`, `BudgetFileError` with the file, the line and the problem);
- `load`: the file's text read and checked field by field against the schema (`load_budget`);
- `releases`: mechanism releases as accountant phases (`release_phase`, `steps_of`);
- `kinds`: how each kind of release is accounted: a group's epsilon at its share of delta, by
  the accountants of dpcalc.core.accountants or the composition theorems, and each release's
  own epsilon (`ReleaseEpsilon`);
- `account`: the releases sorted into groups and the composed total against the budget
  (`account_budget`, `BudgetResult`), and the release that takes an over-budget file over its
  budget (`crossing_release`).
"""

from dpcalc.core.budget.account import (
    NO_RELEASES,
    BudgetResult,
    Crossing,
    account_budget,
    crossing_release,
)
from dpcalc.core.budget.kinds import ReleaseEpsilon
from dpcalc.core.budget.load import load_budget
from dpcalc.core.budget.releases import PHASE_MECHANISMS, release_phase, sampling_probability_of, steps_of
from dpcalc.core.budget.schema import (
    ACCOUNTANTS,
    BUDGET_KEYS,
    MECHANISMS,
    UNIT_OR_ZERO,
    BudgetFile,
    BudgetFileError,
    Release,
)

__all__ = [
    "ACCOUNTANTS",
    "BUDGET_KEYS",
    "MECHANISMS",
    "NO_RELEASES",
    "PHASE_MECHANISMS",
    "UNIT_OR_ZERO",
    "BudgetFile",
    "BudgetFileError",
    "BudgetResult",
    "Crossing",
    "Release",
    "ReleaseEpsilon",
    "account_budget",
    "crossing_release",
    "load_budget",
    "release_phase",
    "sampling_probability_of",
    "steps_of",
]
