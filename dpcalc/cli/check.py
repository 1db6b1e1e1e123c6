"""`dpcalc check BUDGET.toml`: compose everything a project releases and enforce its budget."""

from __future__ import annotations

import enum
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from dpcalc.cli import progress
from dpcalc.cli.declare import App, Argument, Group, Option
from dpcalc.cli.errors import InputError, conflict
from dpcalc.cli.options import Formats
from dpcalc.cli.output import (
    EXIT_OVER_BUDGET,
    EXIT_USAGE,
    Answer,
    Report,
    Table,
    format_lower,
    format_number,
    format_upper,
)
from dpcalc.core import record

if TYPE_CHECKING:
    from dpcalc.core.budget import BudgetResult

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
file. The file is only read. Several files are checked in turn, each with its table; the exit
code is then 2 when any file is malformed, else 1 when any is over budget.

\b
Examples:
  dpcalc check privacy-budget.toml
  dpcalc check examples/privacy-budget.toml --json
  dpcalc check budgets/*.toml --format github
"""


class Format(str, enum.Enum):
    """What `--format` prints beside the table."""

    table = "table"
    github = "github"


FORMAT_HELP = ("What follows each table: nothing (table) or GitHub Actions annotations (github). github writes "
               "workflow commands (::error file=...,line=...::...) to stdout: for a file over budget at its [budget] "
               "table and at the release that takes the total over it, for a malformed file at the line named.")


@dataclass(frozen=True)
class Checked:
    """One budget file checked: its report, then, over budget, the workflow commands of --format
    github on stdout and a line on stderr for each limit exceeded (exit 1). `where` names the
    file in those lines when several are checked; `text` is the file's, for the annotations' lines."""

    answer: Answer
    result: BudgetResult
    text: str
    github: bool = False
    where: str = ""

    def emit(self) -> int:
        code = self.answer.emit()
        if self.result.within_budget:
            return code
        if self.github:
            sys.stdout.write(_over_budget_annotations(self.result, self.text))
        for line in _over_budget_lines(self.result, self.where):
            sys.stderr.write(line)
        return EXIT_OVER_BUDGET


@dataclass(frozen=True)
class CheckedFiles:
    """Several files, or annotations: each file checked and printed in turn, a malformed one
    reported (and annotated with --format github) and the rest still checked. The exit code is
    the worst: 2 when any file is malformed, else 1 when any is over budget."""

    budget_files: tuple[str, ...]
    github: bool

    def emit(self) -> int:
        from dpcalc.core.validation import ParameterError

        code = 0
        for budget_file in self.budget_files:
            try:
                outcome = _check(budget_file, Formats(), github=self.github,
                                 named=len(self.budget_files) > 1).emit()
            except (InputError, ParameterError) as error:
                message = str(error).replace("\r", "\\r").replace("\n", "\\n")
                sys.stderr.write(f"Error: {message}\n")
                if self.github:
                    sys.stdout.write(_malformed_annotation(budget_file, str(error)))
                outcome = EXIT_USAGE
            code = max(code, outcome)
        return code


_FORMATS = Formats()


@app.command("check", help=HELP)
def check(
    budget_files: Annotated[list[str], Argument(metavar="BUDGET...", help="The budget files (TOML) to check, one or more.")],
    formats: Annotated[Formats, Group()] = _FORMATS,
    output_format: Annotated[Format, Option("--format", help=FORMAT_HELP)] = Format.table,
) -> Checked | CheckedFiles:
    json_output, csv_output = formats.json_output, formats.csv_output
    if json_output and csv_output:
        raise conflict("--json", "--csv", "give one output format")
    github = output_format is Format.github
    if github and (json_output or csv_output):
        raise conflict("--format github", "--json" if json_output else "--csv", "the annotations follow the table")
    if len(budget_files) > 1 and (json_output or csv_output):
        raise InputError(f"BUDGET: {'--json' if json_output else '--csv'} takes one budget file, got "
                         f"{len(budget_files)}; check each file in a call of its own",
                         options=("BUDGET", "--json" if json_output else "--csv"))
    if len(budget_files) == 1 and not github:
        return _check(budget_files[0], formats)
    return CheckedFiles(tuple(budget_files), github)


def _check(budget_file: str, formats: Formats, *, github: bool = False, named: bool = False) -> Checked:
    """Check one budget file: its report, and what says that it is over budget; `github` adds the
    workflow commands of an over-budget file, `named` names the file in the over-budget lines on
    stderr (several files checked)."""
    text, result = read_and_account(budget_file)
    answer = Answer(_report(result, budget_file, formats.csv_output), json_output=formats.json_output,
                    csv_output=formats.csv_output)
    return Checked(answer, result, text, github, f"{budget_file}: " if named else "")


def read_and_account(budget_file: str, option: str = "BUDGET") -> tuple[str, BudgetResult]:
    """A budget file's text and its releases composed (`core.budget.account_budget`); a file that
    cannot be read, or that the schema or the risk limits refuse, is one line (exit 2)."""
    from pathlib import Path

    from dpcalc.core.budget import BudgetFileError, account_budget, load_budget

    text = _read(Path(budget_file), budget_file, option)
    try:
        budget = load_budget(text, budget_file)
    except BudgetFileError as error:
        raise InputError(str(error)) from None
    progress.describe(f"composing {len(budget.releases)} releases ({budget.accountant} accountant)")
    try:
        return text, account_budget(budget)
    except BudgetFileError as error:  # a combination of releases the risk limits cannot compose
        raise InputError(str(error)) from None


def _report(result: BudgetResult, budget_file: str, csv_output: bool) -> Report:
    """The report of a checked budget: each release, the total and the headroom, the risk limits."""
    budget = result.budget
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
            "like": _like(budget),
        },
        tables=[_table(result)] + ([_risk_table(result)] if result.risk else []),
        warnings=list(result.warnings),
    )
    like = report.result["like"]
    if like is not None:  # beside the total, labelled an estimate; the gate compares the total alone
        report.tables[0] = record.replace(report.tables[0], rows=[
            *report.tables[0].rows, (f"{like['framework']} estimate", "composed", format_number(like["epsilon"]),
                                     like["basis"])])
    if csv_output:
        # one row a release, then the total (its epsilon at the budget's delta)
        report.csv_rows = [*releases, {"name": "total", "mechanism": "composed", "epsilon": result.total_epsilon,
                                       "delta": result.total_delta, "method": result.method,
                                       "overflow_probability": result.overflow}]
    return report


def _over_budget_lines(result: BudgetResult, where: str) -> list[str]:
    """The lines on stderr of a result over its budget: the total epsilon, each risk limit exceeded."""
    budget = result.budget
    lines = []
    if not result.epsilon_within:
        lines.append(f"Over budget: {where}total epsilon {format_upper(result.total_epsilon)} > budget "
                     f"{format_number(budget.epsilon)} at delta {format_number(budget.delta)}\n")
    for check in result.risk:
        if not check.within:
            lines.append(f"Over budget: {where}{_risk_name(check)} {format_upper(check.value)} > "
                         f"{format_number(check.limit)} (certified, all releases composed)\n")
    return lines


def _workflow_command(file: str, line: int | None, title: str, message: str) -> str:
    """A GitHub Actions `::error` workflow command: an annotation on `file` at `line` (none: the
    file as a whole). Its properties and message are escaped as the runner reads them (a line
    break, `%`, and in properties `:` and `,`)."""

    def data(text: str) -> str:
        return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")

    def prop(text: str) -> str:
        return data(text).replace(":", "%3A").replace(",", "%2C")

    where = f"file={prop(file)}" + ("" if line is None else f",line={line}")
    return f"::error {where},title={prop(title)}::{data(message)}\n"


def _malformed_annotation(budget_file: str, message: str) -> str:
    """The annotation of a file that could not be checked, at the line its message names
    ("FILE:LINE: ...")."""
    import re

    found = re.match(re.escape(budget_file) + r":(\d+): ", message)
    return _workflow_command(budget_file, int(found.group(1)) if found else None,
                             "dpcalc check: malformed budget file", message)


def _budget_line(text: str) -> int:
    """The line of the [budget] table (1 when it is written otherwise, e.g. as a dotted key)."""
    import re

    for number, line in enumerate(text.splitlines(), 1):
        if re.match(r"\s*\[\s*budget\s*\]", line):
            return number
    return 1


def _over_limits(result) -> list[str]:
    """What a result exceeds: its total epsilon, each attack-risk limit ("X > limit")."""
    budget = result.budget
    over = []
    if not result.epsilon_within:
        over.append(f"total epsilon {format_upper(result.total_epsilon)} > budget {format_number(budget.epsilon)} "
                    f"at delta {format_number(budget.delta)}")
    over += [f"{_risk_name(check)} {format_upper(check.value)} > {format_number(check.limit)}"
             for check in result.risk if not check.within]
    return over


def _over_budget_annotations(result, text: str) -> str:
    """The workflow commands of an over-budget file: at its [budget] table, what the total
    exceeds; at the release that takes the releases before it over the budget, the totals
    without and with it (`crossing_release`)."""
    from dpcalc.core.budget import BudgetFileError, crossing_release

    source = result.budget.source
    count = len(result.releases)
    lines = _workflow_command(source, _budget_line(text), "Over the privacy budget",
                              f"{'; '.join(_over_limits(result))} ({count} release{'s' * (count != 1)} composed, "
                              "certified)")
    try:
        crossing = crossing_release(result)
    except BudgetFileError:  # a backstop: the prefixes of a file that composes are expected to compose
        crossing = None
    if crossing is not None:
        release, before = crossing.release, crossing.before
        figures = [f"epsilon {format_upper(before.total_epsilon)} at delta {format_number(result.budget.delta)}"]
        figures += [f"{_risk_name(check)} {format_upper(check.value)}" for check in before.risk]
        over = "; ".join(_over_limits(crossing.with_it))
        if crossing.index == 0:
            message = f"release '{release.name}' alone is over the budget: {over}"
        else:
            above = ("the release above it is" if crossing.index == 1
                     else f"the {crossing.index} releases above it compose")
            message = f"{above} within the budget ({', '.join(figures)}); with release '{release.name}': {over}"
        lines += _workflow_command(source, release.line or None,
                                   f"Release '{release.name}' takes the total over the budget", message)
    return lines


# The largest budget file read (1 MiB): a budget lists releases, never data; a larger file, or one
# that never ends (/dev/zero), is refused before it is read.
MAX_BUDGET_BYTES = 1 << 20


def _read(path, shown: str, option: str = "BUDGET") -> str:
    """The budget file's text: a regular file of at most MAX_BUDGET_BYTES bytes, UTF-8 (a leading
    byte-order mark is dropped). Every failure is one line naming the option (the argument, or
    statement's --budget) and the path (exit 2)."""
    import os
    import stat

    def _file_error(message: str) -> InputError:  # for --json's error object: the argument and the path given
        return InputError(message, option=option, got=shown)

    if not shown:
        raise _file_error(f"{option}: the path is empty; give the budget file (TOML) to check")
    try:
        status = os.stat(path)
    except FileNotFoundError:
        raise _file_error(f"{option}: no such file: {shown}") from None
    except (OSError, ValueError) as error:  # a symlink loop, a name too long, a file in the path
        raise _file_error(f"{option}: cannot read {shown}: {_reason(error)}") from None
    if stat.S_ISDIR(status.st_mode):
        raise _file_error(f"{option}: {shown} is a directory; give the budget file (TOML) to check")
    if not stat.S_ISREG(status.st_mode):
        raise _file_error(f"{option}: {shown} is not a regular file (a device, pipe or socket); give the budget file "
                         "(TOML) to check")
    if status.st_size > MAX_BUDGET_BYTES:
        raise _file_error(f"{option}: a budget file must be at most {MAX_BUDGET_BYTES} bytes (1 MiB), got {shown} of "
                         f"{status.st_size} bytes")
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BUDGET_BYTES + 1)
    except (OSError, ValueError) as error:
        raise _file_error(f"{option}: cannot read {shown}: {_reason(error)}") from None
    if len(data) > MAX_BUDGET_BYTES:  # grown since it was measured
        raise _file_error(f"{option}: a budget file must be at most {MAX_BUDGET_BYTES} bytes (1 MiB), got {shown} of "
                         f"more than {MAX_BUDGET_BYTES} bytes")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise _file_error(f"{option}: cannot read {shown}: not UTF-8 text ({error.reason} at byte {error.start})") from None


def _reason(error: BaseException) -> str:
    """An OS error's reason without the path it repeats ("Too many levels of symbolic links")."""
    return error.strerror if isinstance(error, OSError) and error.strerror else str(error)


def _like(budget) -> dict | None:
    """result.like: the framework's estimate of the composed releases at the budget's delta, with
    the budget's accountant (docs/presets.md); never the gate's figure."""
    if budget.like is None:
        return None
    from dpcalc.cli.like import as_json
    from dpcalc.core.budget.releases import release_phase
    from dpcalc.core.presets import framework_epsilon

    phases = [release_phase(release, budget.neighbours) for release in budget.releases]
    try:
        return as_json(framework_epsilon(budget.like, phases, budget.delta, budget.accountant))
    except (ValueError, ArithmeticError, RuntimeError) as error:
        raise InputError(f"{budget.source}: like = {budget.like!r}: {error}") from None


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
