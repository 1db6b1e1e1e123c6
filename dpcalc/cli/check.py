"""`dpcalc check BUDGET.toml`: compose everything a project releases and enforce its budget."""

from __future__ import annotations

import sys
from typing import Annotated

from dpcalc.cli import progress
from dpcalc.cli.declare import App, Argument, Exit
from dpcalc.cli.options import Csv, InputError, Json, conflict
from dpcalc.cli.output import EXIT_OVER_BUDGET, Report, Table, emit, format_lower, format_number, format_upper

app = App()

HELP = """Check a privacy budget file: compose every release and compare the total with the budget.

The file is TOML: a [budget] table (epsilon, delta, optional accountant = "pld" or "rdp") and
[[release]] tables, each with a name and a mechanism: subsampled-gaussian (p, sigma or
noise_std with sensitivity, T or n/batch_size/epochs, optional max_batch_size: truncated Poisson
batches), gaussian (sigma or noise_std: the noise
std; sensitivity, count), laplace (scale or epsilon,
sensitivity, count), dp (epsilon, delta, count), gdp (mu, count), zcdp (rho, count), or the
textbook mechanisms exponential, svt (epsilon, count) and noisy-max (noise, epsilon, count).
Exit 0 within budget (a file without releases is: total 0), 1 over budget, 2 for a malformed
file. The file is only read.

\b
Examples:
  dpcalc check privacy-budget.toml
  dpcalc check examples/privacy-budget.toml --json
"""


@app.command("check", help=HELP)
def check(
    budget_file: Annotated[str, Argument(metavar="BUDGET", help="The budget file (TOML) to check.")],
    json_output: Json = False,
    csv_output: Csv = False,
) -> None:
    from pathlib import Path

    if json_output and csv_output:
        raise conflict("--json", "--csv", "give one output format")
    from dpcalc.core.budget import BudgetFileError, account_budget, load_budget

    text = _read(Path(budget_file), budget_file)
    try:
        budget = load_budget(text, budget_file)
    except BudgetFileError as error:
        raise InputError(str(error)) from None
    progress.describe(f"composing {len(budget.releases)} releases ({budget.accountant} accountant)")
    try:
        result = account_budget(budget)
    except BudgetFileError as error:  # a combination of releases the risk limits cannot compose
        raise InputError(str(error)) from None
    releases = [
        {"name": r.name, "mechanism": r.mechanism, "epsilon": r.epsilon, "delta": r.delta, "method": r.method,
         "overflow_probability": r.overflow}
        for r in result.releases
    ]
    report = Report(
        command="check",
        inputs={"budget_file": budget_file},
        result={
            "budget": {"epsilon": budget.epsilon, "delta": budget.delta, "accountant": budget.accountant,
                       "neighbours": budget.neighbours, "gate": result.gate},
            "releases": releases,
            "total": {"epsilon": result.total_epsilon, "delta": result.total_delta,
                      "overflow_probability": result.overflow},
            "headroom": result.headroom,
            "within_budget": result.within_budget,
            "method": result.method,
            "split": result.split,
            "risk": _risk_keys(result),
        },
        tables=[_table(result)] + ([_risk_table(result)] if result.risk else []),
        warnings=list(result.warnings),
    )
    if csv_output:
        # one row a release, then the total (its epsilon at the budget's delta)
        report.csv_rows = [*releases, {"name": "total", "mechanism": "composed", "epsilon": result.total_epsilon,
                                       "delta": result.total_delta, "method": result.method,
                                       "overflow_probability": result.overflow}]
    code = emit(report, json_mode=json_output, csv_mode=csv_output)
    if not result.within_budget:
        if not result.epsilon_within:
            sys.stderr.write(
                f"Over budget: total epsilon {format_upper(result.total_epsilon)} > budget "
                f"{format_number(budget.epsilon)} at delta {format_number(budget.delta)}\n"
            )
        for check in result.risk:
            if not check.within:
                sys.stderr.write(f"Over budget: {_risk_name(check)} {format_upper(check.value)} > "
                                 f"{format_number(check.limit)} (certified, all releases composed)\n")
        code = EXIT_OVER_BUDGET
    raise Exit(code)


# The largest budget file read (1 MiB): a budget lists releases, never data; a larger file, or one
# that never ends (/dev/zero), is refused before it is read.
MAX_BUDGET_BYTES = 1 << 20


def _read(path, shown: str) -> str:
    """The budget file's text: a regular file of at most MAX_BUDGET_BYTES bytes, UTF-8 (a leading
    byte-order mark is dropped). Every failure is one line naming the path (exit 2)."""
    import os
    import stat

    if not shown:
        raise InputError("BUDGET: the path is empty; give the budget file (TOML) to check")
    try:
        status = os.stat(path)
    except FileNotFoundError:
        raise InputError(f"BUDGET: no such file: {shown}") from None
    except (OSError, ValueError) as error:  # a symlink loop, a name too long, a file in the path
        raise InputError(f"BUDGET: cannot read {shown}: {_reason(error)}") from None
    if stat.S_ISDIR(status.st_mode):
        raise InputError(f"BUDGET: {shown} is a directory; give the budget file (TOML) to check")
    if not stat.S_ISREG(status.st_mode):
        raise InputError(f"BUDGET: {shown} is not a regular file (a device, pipe or socket); give the budget file "
                         "(TOML) to check")
    if status.st_size > MAX_BUDGET_BYTES:
        raise InputError(f"BUDGET: a budget file must be at most {MAX_BUDGET_BYTES} bytes (1 MiB), got {shown} of "
                         f"{status.st_size} bytes")
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BUDGET_BYTES + 1)
    except (OSError, ValueError) as error:
        raise InputError(f"BUDGET: cannot read {shown}: {_reason(error)}") from None
    if len(data) > MAX_BUDGET_BYTES:  # grown since it was measured
        raise InputError(f"BUDGET: a budget file must be at most {MAX_BUDGET_BYTES} bytes (1 MiB), got {shown} of "
                         f"more than {MAX_BUDGET_BYTES} bytes")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(f"BUDGET: cannot read {shown}: not UTF-8 text ({error.reason} at byte {error.start})") from None


def _reason(error: BaseException) -> str:
    """An OS error's reason without the path it repeats ("Too many levels of symbolic links")."""
    return error.strerror if isinstance(error, OSError) and error.strerror else str(error)


def _table(result) -> Table:
    budget = result.budget
    # a release stated as an (epsilon, delta) pair keeps its own delta: the note says so
    rows = [
        (r.name, r.mechanism, format_upper(r.epsilon),
         r.method if r.delta == budget.delta else f"{r.method}, at delta {format_upper(r.delta)}")
        for r in result.releases
    ]
    if not result.releases:
        rows.append(("(none)", "", format_number(0.0), "no releases listed"))
    # each epsilon is an upper bound, printed rounded up; the headroom (budget minus the total)
    # rounded down
    rows.append(("total", "composed", format_upper(result.total_epsilon), result.method))
    if budget.epsilon is None:  # attack-risk limits alone: the total is reported, not gated
        rows.append(("budget", "", "none", f"delta {format_number(budget.delta)}; attack-risk limits alone"))
    else:
        rows.append(("budget", "", format_number(budget.epsilon), f"delta {format_number(budget.delta)}"))
        verdict = "within budget" if result.epsilon_within else "OVER BUDGET"
        rows.append(("headroom", "", format_lower(result.headroom), verdict))
    return Table(
        columns=("release", "mechanism", "epsilon", "note"),
        rows=rows,
        title=f"Privacy budget {budget.source}: each epsilon at delta = {format_number(budget.delta)}",
        justify=("left", "left", "right", "left"),
    )


def _risk_name(check) -> str:
    return "max advantage" if check.figure == "advantage" else f"TPR at FPR {format_number(check.fpr)}"


def _risk_keys(result) -> dict | None:
    """The JSON `risk` of check: null when the budget sets no risk limit."""
    if not result.risk:
        return None
    from dpcalc.core.budget.risk import risk_basis

    keys: dict = {"basis": risk_basis(result.budget)}
    for check in result.risk:
        name = "max_advantage" if check.figure == "advantage" else "tpr_at_fpr"
        keys[name] = {"fpr": check.fpr, "limit": check.limit, "value": check.value, "within_budget": check.within}
        if check.fpr is None:
            del keys[name]["fpr"]
    return keys


def _risk_table(result) -> Table:
    """The budget's attack-risk limits against all releases composed (certified upper bounds)."""
    rows = [(_risk_name(check), format_upper(check.value), format_number(check.limit),
             "within budget" if check.within else "OVER BUDGET") for check in result.risk]
    return Table(columns=("attack risk", "certified", "budget", "verdict"), rows=rows,
                 title="Attack risk of all releases composed (certified)",
                 justify=("left", "right", "right", "left"))
