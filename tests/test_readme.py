"""The README's two set-up commands are the ones CI runs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAIN_JOB = "pip install . && dpcalc gdp --p 0.004 --sigma 1.1 --T 10000"
TEST_JOB = "pip install -e '.[test]' && python -m pytest"


def shell_blocks(text: str) -> list[str]:
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S)]


def test_readme_has_exactly_the_two_setup_commands():
    assert shell_blocks((ROOT / "README.md").read_text()) == [MAIN_JOB, TEST_JOB]


def test_ci_runs_the_readme_commands():
    ci = (ROOT / ".ci" / "run").read_text()
    assert any(line.strip() == MAIN_JOB for line in ci.splitlines())
    assert any(line.strip() == TEST_JOB for line in ci.splitlines())


# The distribution is dpcalc-cli, not on the package index yet; the name `dpcalc` there belongs
# to an unrelated project. An install instruction may name only a local path (`.`, `./dpcalc`)
# or matplotlib (the plot extra's one dependency).
ALLOWED_INSTALLS = {".", "./dpcalc", "matplotlib", "pre-commit"}


def _install_targets(text: str) -> list[str]:
    """What each `pip install` line installs; a direct reference `NAME @ URL` (PEP 508) installs
    from the URL, not the index, and counts as a source checkout when it is a git URL."""
    targets = []
    for match in re.finditer(r"pip install ([^\n`]*)", text):
        line = re.sub(r"""(["']?)[\w.-]+ @ git\+https://\S+?\1(?=\s|$)""", "./dpcalc", match.group(1))
        for word in line.split():
            if word in ("&&", "|", ";") or word.startswith("#"):
                break
            if word.startswith("-"):
                continue
            targets.append(re.sub(r"\[.*\]$", "", word.strip("'\"")))
    return targets


def test_no_instruction_installs_a_name_we_do_not_own():
    texts = [(ROOT / name).read_text() for name in ("README.md", "CONTRIBUTING.md")]
    texts += [path.read_text() for path in (ROOT / "docs").glob("*.md")]
    texts += [path.read_text() for path in (ROOT / "dpcalc").rglob("*.py")]
    targets = [target for text in texts for target in _install_targets(text)]
    assert "." in targets and not set(targets) - ALLOWED_INSTALLS, sorted(set(targets) - ALLOWED_INSTALLS)
