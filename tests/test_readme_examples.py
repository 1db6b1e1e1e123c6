"""The README's examples are the command's real output (at a terminal width of 90 columns).

Each ```console block holding one `$ dpcalc ...` command and its output is run in-process and
compared line by line (trailing spaces ignored). Blocks with several commands, shell syntax or a
`--plot` file are illustrations of a workflow and are left out.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WIDTH = "90"


def examples() -> list[tuple[str, str]]:
    found = []
    for block in re.findall(r"```console\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S):
        command, _, output = block.partition("\n")
        if not command.startswith("$ dpcalc ") or "\n$ " in block or "--plot" in command:
            continue
        if any(mark in command for mark in (">", "|", ";", "&")):
            continue
        found.append((command[2:], output))
    return found


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.rstrip().splitlines()]


def test_the_readme_has_examples():
    assert len(examples()) >= 20


@pytest.mark.parametrize("command, output", examples(), ids=[command for command, _ in examples()])
def test_readme_example_is_real_output(command, output, dpcalc, monkeypatch):
    monkeypatch.setenv("COLUMNS", WIDTH)
    monkeypatch.chdir(ROOT)
    run = dpcalc(*shlex.split(command)[1:])
    assert _lines(run.stdout + run.stderr) == _lines(output)
