"""Shared test helpers: run the command line in-process and parse its JSON strictly."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import pytest
from hypothesis import settings

from dpcalc.cli.app import main

# Property tests must give the same verdict on any machine and under any load: no per-example
# time deadline; under CI (CI set, as .ci/run and most CI services set it) the examples are
# derandomized, so a CI run is repeatable; elsewhere they vary from run to run.
settings.register_profile("dpcalc", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI", "").lower() in ("1", "true", "yes") else "dpcalc")


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

    @property
    def only_error(self) -> bool:
        """A refusal prints nothing on stdout, or with --json only its error object, the same line
        as stderr's (docs/json.md, "Errors")."""
        if self.stdout == "":
            return True
        document = self.json()
        return set(document) == {"command", "version", "error"} and self.stderr == f"Error: {document['error']['message']}\n"


@pytest.fixture
def dpcalc(capsys):
    """Call `dpcalc ARGS...` in-process; returns Run(code, stdout, stderr)."""

    def run(*args: str) -> Run:
        code = main([str(arg) for arg in args])
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run
