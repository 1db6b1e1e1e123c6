"""The documentation: the README stays a front door, docs/cli.md is every command's current
`--help` (tools/cli_reference.py), docs/README.md lists every page, and every link between the
pages points at a file and a heading that exist."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _cli_reference():
    spec = importlib.util.spec_from_file_location("cli_reference", ROOT / "tools" / "cli_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_cli_reference_is_up_to_date():
    assert (DOCS / "cli.md").read_text() == _cli_reference().page(), \
        "docs/cli.md is out of date: run `python tools/cli_reference.py`"


def test_the_cli_reference_has_every_command():
    from dpcalc.cli.app import COMMANDS

    text = (DOCS / "cli.md").read_text()
    headings = set(re.findall(r"^## `(dpcalc[^`]*)`$", text, flags=re.M))
    assert {"dpcalc", *(f"dpcalc {name}" for name in COMMANDS)} <= headings
    assert {"dpcalc mechanism laplace", "dpcalc mechanism svt", "dpcalc completions install"} <= headings
    assert "Usage: dpcalc pld [OPTIONS]" in text


def test_the_check_mode_reports_a_stale_reference(tmp_path, monkeypatch, capsys):
    reference = _cli_reference()
    monkeypatch.setattr(reference, "PAGE", tmp_path / "cli.md")
    assert reference.main(["--check"]) == 1
    assert "out of date" in capsys.readouterr().err
    assert reference.main([]) == 0
    assert reference.main(["--check"]) == 0
    assert (tmp_path / "cli.md").read_text() == (DOCS / "cli.md").read_text()


def test_the_readme_is_a_front_door():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 300
    headings = re.findall(r"^## (.*)$", text, flags=re.M)
    assert headings == ["Set-up", "Quick start", "Exit codes", "JSON output", "Where to read on"]


def test_the_docs_index_lists_every_page():
    index = (DOCS / "README.md").read_text()
    pages = sorted(path.name for path in DOCS.iterdir() if path.is_file() and path.name != "README.md")
    missing = [name for name in pages if name not in index]
    assert not missing, f"docs/README.md does not list {missing}"


def _slug(heading: str) -> str:
    """The anchor a Markdown renderer (GitHub's) gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(text: str) -> set[str]:
    found, block = set(), False
    for line in text.splitlines():
        if line.startswith("```"):
            block = not block
        elif not block and re.match(r"#{1,6} ", line):
            found.add(_slug(line.lstrip("#")))
    return found


def _links(text: str) -> list[str]:
    without_code = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.findall(r"\]\(([^)\s]+)\)", without_code)


DOCUMENTS = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


@pytest.mark.parametrize("document", DOCUMENTS, ids=[path.relative_to(ROOT).as_posix() for path in DOCUMENTS])
def test_links_point_at_files_and_headings_that_exist(document):
    broken = []
    for link in _links(document.read_text()):
        if re.match(r"[a-z]+:", link):
            continue  # a web address
        target, _, anchor = link.partition("#")
        path = (document.parent / target).resolve() if target else document
        if not path.exists():
            broken.append(link)
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path.read_text()):
            broken.append(link)
    assert not broken, f"{document.relative_to(ROOT)}: broken links {broken}"


def test_the_slugs_are_the_renderers():
    assert _slug(" Gates on a single command: `--max-eps` and `--max-delta`") == \
        "gates-on-a-single-command---max-eps-and---max-delta"
    assert _slug(" `dpcalc mechanism noisy-max`") == "dpcalc-mechanism-noisy-max"
