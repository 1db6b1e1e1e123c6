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
