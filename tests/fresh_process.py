"""What a command loads: dpcalc run in a fresh process, as every call is (start-up tests)."""

from __future__ import annotations

import json
import subprocess
import sys


def loaded_by_calls(calls: list[list[str]], names: tuple[str, ...]) -> tuple[list[int], list[str]]:
    """Run `dpcalc` once per argument list of `calls` in one fresh process: their exit codes, and
    which of the modules `names` dpcalc's import and the calls loaded (those a development install
    had loaded before dpcalc are not counted)."""
    script = (
        "import json, sys; before = set(sys.modules); from dpcalc.cli.app import main\n"
        f"codes = [main(arguments) for arguments in {calls!r}]\n"
        f"print(json.dumps([codes, sorted(name for name in {names!r} if name in set(sys.modules) - before)]))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    codes, loaded = json.loads(result.stdout.splitlines()[-1])
    return codes, loaded
