#!/usr/bin/env python3
"""Re-run the console examples of README.md and docs/*.md and rewrite their outputs there.

    python tools/update_readme_examples.py           # rewrite the outputs that differ
    python tools/update_readme_examples.py --check   # only list them; exit 1 if any differ

The examples are the ones tests/test_readme_examples.py checks (the same pages, README.md and
every docs/*.md page with a ```console block, and the same selection: one `$ dpcalc ...`
command per ```console block, no shell syntax, no --plot), run in-process as
the test runs them: `dpcalc.cli.app.main(args)` from the repository's root, at COLUMNS=90 (or N
for `COLUMNS=N dpcalc ...`), stdout followed by stderr, trailing spaces dropped. A block
"differs" when its text would change; --check also says whether the test accepts the
difference (PLD figures may move in their last digit between machines, see the test's
docstring).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.test_readme_examples import (  # noqa: E402
    argv_and_width,
    example_blocks,
    mismatches,
    output_lines,
    page_name,
    pages,
)


def run(command: str) -> str:
    """`command` ("dpcalc ...") run in-process: its stdout and then its stderr, as the test sees them."""
    from dpcalc.cli.app import main

    saved_columns, saved_cwd = os.environ.get("COLUMNS"), os.getcwd()
    stdout, stderr = io.StringIO(), io.StringIO()
    # Rich reads COLUMNS when dpcalc creates its console, inside main
    argv, width = argv_and_width(command)
    os.environ["COLUMNS"] = width
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            main(argv)
    finally:
        os.chdir(saved_cwd)
        if saved_columns is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = saved_columns
    return stdout.getvalue() + stderr.getvalue()


def block_text(output: str) -> str:
    """An output as it stands in a README block: trailing spaces dropped, one final newline."""
    lines = output_lines(output)
    return "\n".join(lines) + "\n" if lines else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="only report the blocks whose output differs (exit 1 if any); nothing is written")
    args = parser.parse_args(argv)

    outputs: dict[str, str] = {}  # command -> its output: a command shown on two pages runs once
    total = differing = 0
    for path in pages():
        name = page_name(path)
        text = path.read_text()
        blocks = example_blocks(text)
        total += len(blocks)
        changed = []  # (start, end, new output)
        for command, old, start, end in blocks:
            if command not in outputs:
                outputs[command] = block_text(run(command))
            new = outputs[command]
            if output_lines(old) == output_lines(new):
                continue
            changed.append((start, end, new))
            problems = mismatches(command, old, new)
            verdict = ("beyond the test's tolerance (the test fails)" if problems
                       else "within the test's tolerance (the test passes)")
            print(f"{name}: differs, {verdict}: $ {command}")
            if args.check:
                diff = difflib.unified_diff(output_lines(old), output_lines(new), name, "real output",
                                            lineterm="", n=0)
                print("\n".join(f"    {line}" for line in diff))
        differing += len(changed)
        if args.check or not changed:
            continue
        if path.read_text() != text:
            print(f"{name} changed while the examples ran; nothing written to it, run again", file=sys.stderr)
            return 1
        for start, end, new in reversed(changed):
            text = text[:start] + new + text[end:]
        path.write_text(text)
        print(f"rewrote {len(changed)} example(s) in {name}")
    print(f"{total} examples, {differing} differ")
    return 1 if args.check and differing else 0

if __name__ == "__main__":
    sys.exit(main())
