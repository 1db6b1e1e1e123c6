"""Shared test helpers: run the command line in-process and parse its JSON strictly."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from dpcalc.cli.app import main


def strict_json(text: str):
    """json.loads that rejects the non-standard NaN/Infinity literals (RFC 8259)."""

    def reject(constant: str):
        raise ValueError(f"non-standard JSON constant {constant}")

    return json.loads(text, parse_constant=reject)


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str

    def json(self):
        return strict_json(self.stdout)


@pytest.fixture
def dpcalc(capsys):
    """Call `dpcalc ARGS...` in-process; returns Run(code, stdout, stderr)."""

    def run(*args: str) -> Run:
        code = main([str(arg) for arg in args])
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run
