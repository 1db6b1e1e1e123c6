"""Budgets in CI: `dpcalc check` on several files, its GitHub annotations (--format github), the
pre-commit hook (.pre-commit-hooks.yaml, run by the real pre-commit) and the composite GitHub
Action (action.yml, its check step run by bash)."""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from statistics import NormalDist

import pytest

from dpcalc.core import gdp
from tests.snapshots import numbers_in

ROOT = Path(__file__).resolve().parents[2]

# Gaussian DP throughout (exact, fast): 3 Gaussian releases at sigma 8 are sqrt(3/64)-GDP, which
# is within epsilon 1 at delta 1e-5; the 0.5-GDP report below them takes the total over it.
OVER = """\
[budget]
epsilon = 1.0
delta = 1e-5

[[release]]
name = "means"
mechanism = "gaussian"
sigma = 8.0
count = 3

[[release]]
name = "report, v2: final"
mechanism = "gdp"
mu = 0.5

[[release]]
name = "extra"
mechanism = "gdp"
mu = 0.1
"""
WITHIN = OVER.replace("epsilon = 1.0", "epsilon = 3.0")


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def epsilon(mu_squared: float) -> float:
    """The exact epsilon at delta 1e-5 of sqrt(mu_squared)-GDP (Dong, Roth, Su Cor. 2.13, 3.3)."""
    return gdp.epsilon_for_delta(1e-5, math.sqrt(mu_squared))


def test_github_annotations_at_the_budget_and_the_crossing_release(dpcalc, tmp_path):
    path = write(tmp_path, "budget.toml", OVER)
    run = dpcalc("check", path, "--format", "github")
    assert run.code == 1
    assert "OVER BUDGET" in run.stdout  # the table comes first, as without --format
    first, second = [line for line in run.stdout.splitlines() if line.startswith("::")]
    (total,) = numbers_in(first, f"::error file={path},line=1,title=Over the privacy budget::total epsilon {{}} > "
                                 "budget 1 at delta 1e-05 (3 releases composed, certified)", whole=True)
    # the certified upper bound of the exact composition (above it by its floating-point error only)
    assert total == pytest.approx(epsilon(3 / 64 + 0.25 + 0.01), rel=1e-5) and total >= epsilon(3 / 64 + 0.25 + 0.01)
    # the release's line (11), its name escaped in the title (`,` and `:` are the properties' separators)
    before, with_it = numbers_in(
        second,
        f"::error file={path},line=11,title=Release 'report%2C v2%3A final' takes the total over the budget::"
        "the release above it is within the budget (epsilon {} at delta 1e-05); with release 'report, v2: final': "
        "total epsilon {} > budget 1 at delta 1e-05", whole=True)
    assert before == pytest.approx(epsilon(3 / 64), rel=1e-5) and before >= epsilon(3 / 64)
    assert with_it == pytest.approx(epsilon(3 / 64 + 0.25), rel=1e-5) and with_it >= epsilon(3 / 64 + 0.25)
    assert run.stderr.startswith("Over budget: total epsilon ")  # stderr as without --format


def test_github_annotations_of_a_release_over_the_budget_alone(dpcalc, tmp_path):
    small = "".join(f'[[release]]\nname = "r{index}"\nmechanism = "gdp"\nmu = 0.05\n\n' for index in range(3))
    text = f'[budget]\nepsilon = 1.0\ndelta = 1e-5\n\n{small}[[release]]\nname = "big"\nmechanism = "gdp"\nmu = 3.0\n'
    path = write(tmp_path, "budget.toml", text)
    run = dpcalc("check", path, "--format", "github")
    assert run.code == 1
    before, with_it = numbers_in(
        run.stdout.splitlines()[-1],
        f"::error file={path},line=20,title=Release 'big' takes the total over the budget::the 3 releases above it "
        "compose within the budget (epsilon {} at delta 1e-05); with release 'big': total epsilon {} > budget 1 at "
        "delta 1e-05", whole=True)
    assert before == pytest.approx(epsilon(3 * 0.05**2), rel=1e-5) and before >= epsilon(3 * 0.05**2)
    assert with_it == pytest.approx(epsilon(3 * 0.05**2 + 9), rel=1e-5) and with_it >= epsilon(3 * 0.05**2 + 9)
    # a file whose first release is over the budget by itself
    path.write_text(text.replace("mu = 0.05", "mu = 3.0", 1))
    annotation = dpcalc("check", path, "--format", "github").stdout.splitlines()[-1]
    assert annotation.startswith(f"::error file={path},line=5,title=Release 'r0' takes the total over the budget::"
                                 "release 'r0' alone is over the budget: total epsilon ")


def test_github_annotations_of_an_attack_risk_limit(dpcalc, tmp_path):
    text = OVER.replace("epsilon = 1.0", "max_advantage = 0.2")
    path = write(tmp_path, "budget.toml", text)
    run = dpcalc("check", path, "--format", "github")
    assert run.code == 1
    first, second = [line for line in run.stdout.splitlines() if line.startswith("::")]
    # the advantage of mu-GDP is 2 Phi(mu / 2) - 1 (Dong, Roth, Su 2022, Cor. 2.13; docs/mathematics.md §8)
    (total,) = numbers_in(first, f"::error file={path},line=1,title=Over the privacy budget::max advantage {{}} > 0.2 "
                                 "(3 releases composed, certified)", whole=True)
    assert total >= 2 * NormalDist().cdf(math.sqrt(3 / 64 + 0.25 + 0.01) / 2) - 1
    epsilon_before, advantage_before, advantage = numbers_in(
        second,
        f"::error file={path},line=11,title=Release 'report%2C v2%3A final' takes the total over the budget::"
        "the release above it is within the budget (epsilon {} at delta 1e-05, max advantage {}); "
        "with release 'report, v2: final': max advantage {} > 0.2", whole=True)
    assert epsilon_before >= epsilon(3 / 64)
    assert advantage_before >= 2 * NormalDist().cdf(math.sqrt(3 / 64) / 2) - 1 and advantage_before <= 0.2
    assert advantage >= 2 * NormalDist().cdf(math.sqrt(3 / 64 + 0.25) / 2) - 1 and advantage > 0.2


def test_within_budget_prints_no_annotation(dpcalc, tmp_path):
    run = dpcalc("check", write(tmp_path, "budget.toml", WITHIN), "--format", "github")
    assert run.code == 0 and "::" not in run.stdout.replace("┃", "") and run.stderr == ""


def test_a_malformed_file_is_annotated_at_its_line(dpcalc, tmp_path):
    path = write(tmp_path, "budget.toml", OVER.replace("mu = 0.5", "mu = -0.5"))
    run = dpcalc("check", path, "--format", "github")
    assert run.code == 2
    (message,) = run.stderr.splitlines()
    assert message.startswith(f"Error: {path}:11: release 'report, v2: final': ")
    escaped = message.removeprefix("Error: ").replace("%", "%25")
    assert run.stdout == f"::error file={path},line=11,title=dpcalc check%3A malformed budget file::{escaped}\n"


def test_several_files_each_checked_worst_exit_code(dpcalc, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # short names: the tables' titles stay on one line
    within, over = write(Path(), "a.toml", WITHIN), write(Path(), "b.toml", OVER)
    run = dpcalc("check", within, over)
    assert run.code == 1
    assert run.stdout.count("Privacy budget ") == 2 and f"Privacy budget {within}" in run.stdout
    (line,) = run.stderr.splitlines()
    assert line.startswith(f"Over budget: {over}: total epsilon ")
    # a malformed file is reported, the others still checked; 2 wins over 1
    run = dpcalc("check", "missing.toml", over, within)
    assert run.code == 2
    assert run.stdout.count("Privacy budget ") == 2
    assert run.stderr.splitlines()[0] == "Error: BUDGET: no such file: missing.toml"
    assert dpcalc("check", within, within).code == 0


@pytest.mark.parametrize("flags, message", [
    (["--json"], "Error: BUDGET: --json takes one budget file, got 2; check each file in a call of its own\n"),
    (["--csv"], "Error: BUDGET: --csv takes one budget file, got 2; check each file in a call of its own\n"),
    (["--format", "github", "--json"],
     "Error: --format github and --json cannot be given together; the annotations follow the table\n"),
])
def test_json_and_csv_take_one_file(dpcalc, tmp_path, flags, message):
    path = write(tmp_path, "a.toml", WITHIN)
    run = dpcalc("check", path, path, *flags)
    assert (run.code, run.stderr) == (2, message)
    assert run.stdout == "" if "--json" not in flags else run.only_error  # --json: the error as JSON too


def test_one_file_without_format_is_unchanged(dpcalc, tmp_path):
    path = write(tmp_path, "a.toml", WITHIN)
    assert dpcalc("check", path).stdout == dpcalc("check", path, "--format", "table").stdout
    assert dpcalc("check", path, "--json").json()["inputs"] == {"budget_file": str(path)}


def test_the_hook_definition():
    yaml = pytest.importorskip("yaml")
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "dpcalc-check"
    assert hook["language"] == "python" and hook["entry"] == "dpcalc check" and hook.get("pass_filenames", True)
    assert 'dpcalc = "dpcalc.cli.app:main"' in (ROOT / "pyproject.toml").read_text()  # the entry's command
    files = re.compile(hook["files"])
    assert files.search("privacy/budget.toml") and not files.search("budget.toml.bak")


def _action():
    yaml = pytest.importorskip("yaml")
    return yaml.safe_load((ROOT / "action.yml").read_text())


def test_the_action_definition():
    action = _action()
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) == {"files", "python-version", "version", "working-directory"}
    assert action["inputs"]["files"]["required"] is True
    steps = {step["name"]: step for step in action["runs"]["steps"]}
    assert "--format github" in steps["Check the privacy budgets"]["run"]
    assert steps["Set up Python"]["uses"].startswith("actions/setup-python@")
    for step in steps.values():  # inputs reach the scripts through the environment, never spliced into them
        assert "${{" not in step.get("run", "")


def _run_check_step(cwd: Path, files: str) -> tuple[subprocess.CompletedProcess, str]:
    """The action's check step, run by bash as the runner runs it (GITHUB_OUTPUT a file)."""
    step = next(step for step in _action()["runs"]["steps"] if step.get("id") == "check")
    output = cwd / "github_output"
    output.write_text("")
    environment = {**os.environ, "DPCALC_FILES": files, "DPCALC_PYTHON": sys.executable,
                   "GITHUB_OUTPUT": str(output), "PYTHONPATH": str(ROOT)}
    script = cwd / "step.sh"
    script.write_text(step["run"])
    # the runner's own command line for `shell: bash`
    run = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=cwd, env=environment,
                         capture_output=True, text=True)
    return run, output.read_text()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_the_action_check_step_fails_on_an_over_budget_file(tmp_path):
    write(tmp_path, "privacy/a.toml", WITHIN)
    write(tmp_path, "privacy/nested/b.toml", OVER)
    run, output = _run_check_step(tmp_path, "privacy/**/*.toml\n")
    assert run.returncode == 1, run.stderr
    assert output == "exit-code=1\n"
    annotations = [line for line in run.stdout.splitlines() if line.startswith("::error ")]
    assert [line.split("::")[1] for line in annotations] == [
        "error file=privacy/nested/b.toml,line=1,title=Over the privacy budget",
        "error file=privacy/nested/b.toml,line=11,title=Release 'report%2C v2%3A final' takes the total over the budget",
    ]
    # a pattern that matches nothing fails the step, before dpcalc runs
    run, output = _run_check_step(tmp_path, "privacy/a.toml budgets/*.toml")
    assert (run.returncode, output) == (2, "exit-code=2\n")
    assert run.stdout == f"::error title=dpcalc check::no budget file matches 'budgets/*.toml' in {tmp_path}\n"


def _git(cwd: Path, *args: str) -> str:
    environment = {**os.environ, "GIT_AUTHOR_NAME": "test", "GIT_AUTHOR_EMAIL": "test@example.com",
                   "GIT_COMMITTER_NAME": "test", "GIT_COMMITTER_EMAIL": "test@example.com"}
    return subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args], cwd=cwd,
                          env=environment, capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_hook_in_a_real_pre_commit_run(tmp_path):
    """pre-commit installs this checkout (its working tree, committed into a copy) into a fresh
    virtual environment and runs the hook on a project's budget files."""
    pytest.importorskip("pre_commit")
    hooks = tmp_path / "dpcalc"
    tracked = _git(ROOT, "ls-files", "--cached", "--others", "--exclude-standard", "-z").split("\0")
    for name in filter(None, tracked):
        if (ROOT / name).is_file():
            (hooks / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, hooks / name)
    _git(hooks, "init", "-q")
    _git(hooks, "add", "-A")
    _git(hooks, "commit", "-q", "-m", "the checkout")
    revision = _git(hooks, "rev-parse", "HEAD")

    project = tmp_path / "project"
    write(project, "privacy/training.toml", WITHIN)
    write(project, "pyproject.toml", "[project]\nname = 'a project'\n")  # not a budget file: left out by `files`
    write(project, ".pre-commit-config.yaml", f"""\
repos:
  - repo: {hooks}
    rev: {revision}
    hooks:
      - id: dpcalc-check
        files: ^privacy/.*\\.toml$
""")
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    environment = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "PRE_COMMIT_COLOR": "never"}
    environment.pop("PYTHONPATH", None)  # the hook runs the dpcalc pre-commit installed, not this checkout

    def pre_commit() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=project,
                              env=environment, capture_output=True, text=True, timeout=1800)

    run = pre_commit()
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(r"dpcalc check \(privacy budgets\)\.+Passed", run.stdout), run.stdout

    write(project, "privacy/survey.toml", OVER)
    _git(project, "add", "-A")
    run = pre_commit()
    assert run.returncode == 1, run.stdout + run.stderr
    assert re.search(r"dpcalc check \(privacy budgets\)\.+Failed", run.stdout), run.stdout
    assert "exit code: 1" in run.stdout
    assert "Privacy budget privacy/survey.toml" in run.stdout and "report, v2: final" in run.stdout
    assert "OVER BUDGET" in run.stdout
    assert re.search(r"Over budget: (privacy/survey.toml: )?total epsilon ", run.stdout), run.stdout
    assert "pyproject.toml" not in run.stdout
