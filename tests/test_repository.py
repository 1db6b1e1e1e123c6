"""The repository stands alone: code, tests, tools and docs cite docs/ and the papers only.

Every formula, source and reference value the code and tests rely on is written down in docs/
(docs/mathematics.md, docs/pld-soundness.md, docs/reference-values.md). A citation of a
specification that is not part of the repository, or a path into a shared directory outside
it, would leave someone who clones the repository without the text it points to.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("dpcalc", "tests", "tools", "benchmarks", "docs")
SKIPPED_DIRECTORIES = {"__pycache__"}

# The two things that must not appear: the word (whole word, case-sensitive) and the path.
FORBIDDEN = (
    ("the word " + "SPEC", re.compile(r"\b" + "SPEC" + r"\b")),
    ("the path " + "shared/", re.compile(re.escape("shared" + "/"))),
)


def _text_files():
    this_file = Path(__file__).resolve()
    for top in SCANNED:
        base = ROOT / top
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if not path.is_file() or path.resolve() == this_file:
                continue
            relative = path.relative_to(ROOT)
            if any(part in SKIPPED_DIRECTORIES or part.startswith(".") for part in relative.parts):
                continue
            data = path.read_bytes()
            if b"\0" in data[:8192]:
                continue  # binary (e.g. docs/gdp-design-card.png)
            yield relative, data.decode("utf-8", errors="replace")


def _offending_lines() -> list[str]:
    found = []
    for relative, text in _text_files():
        for number, line in enumerate(text.splitlines(), start=1):
            for what, pattern in FORBIDDEN:
                if pattern.search(line):
                    found.append(f"{relative}:{number}: {what}: {line.strip()}")
    return found


def test_the_scan_covers_the_repository():
    scanned = {relative.parts[0] for relative, _ in _text_files()}
    assert {"dpcalc", "tests", "docs"} <= scanned
    assert (ROOT / "docs" / "mathematics.md").is_file()
    assert (ROOT / "docs" / "pld-soundness.md").is_file()
    assert (ROOT / "docs" / "reference-values.md").is_file()


def test_no_reference_to_an_external_specification():
    offending = _offending_lines()
    assert not offending, "cite docs/ or the papers instead:\n" + "\n".join(offending)
