"""The examples of README.md and of the docs/*.md pages are the command's real output (at a
terminal width of 90 columns, or N for a command written `COLUMNS=N dpcalc ...`).

Each ```console block holding one `$ dpcalc ...` command and its output, in README.md or in a
page of docs/ (PAGES), is run in-process and compared with the page line by line (trailing
spaces ignored). Blocks with several commands, shell syntax or a `--plot` file are
illustrations of a workflow and are left out. `python tools/update_readme_examples.py`
rewrites the outputs in those pages (`--check` lists the blocks that differ). Below, "the
README" is whichever page holds the example. The outputs are regression snapshots of dpcalc itself: they show what
the commands print, not that it is right (the figures are checked against independent
references in the other tests, docs/reference-values.md).

How the figures are compared:

* Closed-form examples (`convert`, `laplace-eps`, `advanced-composition`, `gdp` with `--no-tight`,
  `--mu`, `--eps` or uniform sampling, `rdp` with `--no-tight` or `--eps`, `calibrate` with
  `--accountant rdp|gdp`) must match exactly, character for character: their figures are exact
  (closed forms, or deterministic series) and must not move between machines.
* Examples that run the numerical PLD accountant (`pld`, `calibrate`, `check`, and the tight
  epsilon of `gdp` and `rdp`): its figures are certified to 1e-3 relative and their last
  printed digit depends on the machine's floating point (an AMD EPYC printed 1.840846 where
  this README says 1.840845, and a largest grid of 140335 bins for 139979). Such a figure may
  differ by up to 2 units of its last printed digit or 1e-5 relative, whichever is larger;
  a grid size (`N bins`, JSON `grid.size`) by up to 3%. Which figures come from the PLD
  accountant is decided per command (`Policy`) from the table row, the column, the JSON key
  or, in a warning sentence, the words around the number; everything else in these examples
  (labels, text, the inputs echoed, counts of steps, epochs and evaluations, the closed-form
  figures that `gdp` and `rdp` print beside the tight one, grid steps) stays exact.
  Grid steps are powers of two picked from a smooth function of the inputs before anything
  is composed, so they stay exact: the machine-dependent rounding of the FFT composition moves
  the sizes and the bounds, not the step (the differences seen on the AMD EPYC were sizes).
* In those examples each line is compared token by token: a table row is split into cells at
  the box-drawing rules, a rule line is reduced to its corners and junctions, and each cell
  or text line into words and numbers, so that a figure printed one digit shorter (1.84085
  for 1.840846), which changes a column's width and with it the padding and the rules, still
  compares equal. A JSON line is parsed and compared structurally: keys, their order and
  strings exactly (a PLD figure quoted in a warning string follows the text rule above),
  numbers with the rules above.

The self-tests below show that the tolerance is what it claims: moving the last printed digit
of every PLD figure in the README by one unit either way is accepted, ten times the tolerance
is not, and moving the last digit of any exact figure is rejected.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def pages() -> list[Path]:
    """README.md and every page of docs/ that has a ```console block, in a fixed order."""
    docs = sorted(path for path in (ROOT / "docs").glob("*.md") if "```console" in path.read_text())
    return [README, *docs]


def page_name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()
WIDTH = "90"

_BLOCK = re.compile(r"```console\n(.*?)```", flags=re.S)


_NARROW = re.compile(r"COLUMNS=(\d+) ")


def argv_and_width(command: str) -> tuple[list[str], str]:
    """The arguments after `dpcalc` and the terminal width to run at: WIDTH, or N where the
    command starts `COLUMNS=N dpcalc` (an example of narrow-terminal output)."""
    narrow = _NARROW.match(command)
    if narrow:
        command = command[narrow.end():]
    return shlex.split(command)[1:], narrow.group(1) if narrow else WIDTH


def example_blocks(text: str) -> list[tuple[str, str, int, int]]:
    """(command without "$ ", output, start and end of the output in `text`) of every checked block."""
    found = []
    for match in _BLOCK.finditer(text):
        block = match.group(1)
        command, _, output = block.partition("\n")
        runs_dpcalc = command.startswith("$ dpcalc ") or re.match(r"\$ COLUMNS=\d+ dpcalc ", command)
        if not runs_dpcalc or "\n$ " in block or "--plot" in command:
            continue
        if any(mark in command for mark in (">", "|", ";", "&")):
            continue
        found.append((command[2:], output, match.start(1) + len(command) + 1, match.end(1)))
    return found


def page_examples() -> list[tuple[str, str, str]]:
    """(page, command, output) of every checked block of every page."""
    return [(page_name(path), command, output)
            for path in pages() for command, output, _, _ in example_blocks(path.read_text())]


def examples() -> list[tuple[str, str]]:
    return [(command, output) for _, command, output in page_examples()]


def output_lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.rstrip().splitlines()]


# ---------------------------------------------------------------------------------------------
# Which figures of an example come from the PLD accountant


@dataclass(frozen=True)
class Policy:
    """Where an example's PLD figures are. Everything not named here is compared exactly."""

    command: str
    pld: bool = False  # does the example print figures of the PLD accountant at all
    rows: frozenset[str] = frozenset()  # table rows (by label) whose figures are PLD figures
    columns: frozenset[str] = frozenset()  # table columns (by header) of PLD figures
    json_keys: frozenset[str] = frozenset()  # keys below "result" holding PLD figures

    @classmethod
    def of(cls, command: str) -> Policy:
        argv, _ = argv_and_width(command)
        name = argv[0] if argv else ""

        def given(option: str) -> bool:
            return any(arg == option or arg.startswith(option + "=") for arg in argv)

        def value(option: str, default: str) -> str:
            for index, arg in enumerate(argv):
                if arg.startswith(option + "="):
                    return arg.partition("=")[2]
                if arg == option and index + 1 < len(argv):
                    return argv[index + 1]
            return default

        if name == "pld":
            # the solved quantity and its certified interval; the other one is given
            y = "delta" if given("--eps") else "epsilon"
            return cls(name, True, rows=frozenset({y, f"{y} lower bound"}),
                       columns=frozenset({f"{y} (certified)", f"{y} lower"}),
                       json_keys=frozenset({y, f"{y}_lower", f"{y}_upper"}))
        if name in ("gdp", "rdp"):
            # the tight epsilon, the one PLD figure beside the closed-form ones (gdp: mu, epsilon,
            # the trade-off curve; rdp: the RDP curve and its epsilon)
            closed = given("--no-tight") or given("--eps")
            if name == "gdp":
                closed = closed or given("--mu") or value("--sampling", "poisson") == "uniform"
            if closed:
                return cls(name)
            tight = frozenset({"tight epsilon"})
            return cls(name, True, rows=tight, columns=tight, json_keys=frozenset({"tight_epsilon"}))
        if name == "calibrate":
            if value("--accountant", "pld") != "pld":
                return cls(name)
            solved = value("--solve", "sigma")
            label, key = solved.replace("-", " "), solved.replace("-", "_")
            if given("--target-tpr") or given("--target-advantage"):
                # calibration to attack risk: the solved value, its certified figure and epsilon
                figure = f"TPR at FPR {value('--at-fpr', '')}" if given("--target-tpr") else "max advantage"
                return cls(name, True,
                           rows=frozenset({label, figure, f"{figure} lower bound", "epsilon", f"{label} at target",
                                           f"next {label}"}),
                           json_keys=frozenset({key, "risk", "risk_lower", "epsilon", "epsilon_lower", "boundary"}))
            # the solved value (a real one: sigma, p) and what follows from it; the integer ones
            # (T, epochs, batch size) are counts and stay exact
            return cls(name, True,
                       rows=frozenset({label, "epsilon", "epsilon lower bound", f"{label} at target",
                                       f"next {label}", f"closest {label}"}),
                       columns=frozenset({label, "epsilon"}),
                       json_keys=frozenset({key, "epsilon", "epsilon_lower", "boundary"}))
        if name == "risk":
            # the certified intervals (and their widths); the mu-GDP column is a closed form
            certified = frozenset({"certified", "lower bound", "TPR (certified)", "TPR lower", "width",
                                   "PPV (certified)"})
            keys = {"relative_width", "beta", "beta_upper"}
            for figure in ("advantage", "tpr", "ppv", "bayes_success", "success"):
                keys |= {figure, f"{figure}_lower", f"{figure}_upper"}
            return cls(name, True, columns=certified, json_keys=frozenset(keys))
        if name == "check":
            return cls(name, True)  # by row: the releases and totals whose method is PLD
        return cls(name)

    def row_tolerant(self, label: str, note: str, table: list[tuple[str, str]]) -> bool:
        if not self.pld or note == "given":
            return False
        if self.command == "check":
            # a release or total accounted by PLD, and the headroom left by a PLD total
            return "PLD" in note or (label == "headroom" and any(
                name == "total" and "PLD" in text for name, text in table))
        return label in self.rows

    def json_kind(self, path: tuple, value, root) -> str:
        if not self.pld or path[:1] != ("result",) or isinstance(value, bool):
            return "exact"
        key, parent = path[-1], _at(root, path[:-1])
        if key == "size" and len(path) > 1 and path[-2] == "grid" and isinstance(value, int):
            return "grid"
        if not isinstance(value, float):
            return "exact"
        if self.command == "check":
            method = root.get("result", {}).get("method", "")
            if key == "epsilon" and isinstance(parent, dict) and "PLD" in str(parent.get("method", "")):
                return "real"
            return "real" if path in (("result", "total", "epsilon"), ("result", "headroom")) and "PLD" in method \
                else "exact"
        return "real" if key in self.json_keys else "exact"


def _at(document, path: tuple):
    for key in path:
        document = document[key]
    return document


# ---------------------------------------------------------------------------------------------
# Lines as tokens

_BOX = {chr(code) for code in range(0x2500, 0x2580)}
_VERTICAL = set("│┃║")
_HORIZONTAL = set("─━═╌╍┄┅┈┉")
_TOKEN = re.compile(r"(?P<number>\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)|[^\s\d]+")
_REAL = re.compile(r"\d+\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+")


@dataclass
class Token:
    text: str
    number: bool
    start: int  # position in the line
    end: int
    cell: int  # index of the segment between vertical rules (0 outside tables)
    kind: str = "text"  # "text", or for numbers "exact", "real" (PLD figure) or "grid" (a grid size)


@dataclass
class Line:
    text: str
    form: str  # "json", "rule", "header", "row" or "text"
    shape: object = None  # rule: its junctions; header/row: its number of segments
    tokens: list[Token] = field(default_factory=list)
    cells: list[str] = field(default_factory=list)  # header/row: each segment's text, spaces collapsed


def _segments(text: str) -> list[tuple[int, int]]:
    cuts = [index for index, char in enumerate(text) if char in _VERTICAL]
    bounds = [-1, *cuts, len(text)]
    return [(left + 1, right) for left, right in zip(bounds, bounds[1:])]


def _tokens(text: str, start: int, end: int, cell: int) -> list[Token]:
    return [Token(m.group(0), m.group("number") is not None, start + m.start(), start + m.end(), cell)
            for m in _TOKEN.finditer(text[start:end])]


def parse_line(text: str) -> Line:
    stripped = text.strip()
    if stripped.startswith("{"):
        return Line(text, "json")
    if stripped and set(stripped) <= _BOX and set(stripped) & _HORIZONTAL:
        return Line(text, "rule", "".join(char for char in stripped if char not in _HORIZONTAL))
    if stripped[:1] in _VERTICAL:
        segments = _segments(text)
        tokens = [token for cell, (start, end) in enumerate(segments) for token in _tokens(text, start, end, cell)]
        cells = [" ".join(text[start:end].split()) for start, end in segments]
        return Line(text, "header" if stripped[0] == "┃" else "row", len(segments), tokens, cells)
    return Line(text, "text", None, _tokens(text, 0, len(text), 0))


def _cell_text(line: Line, cell: int) -> str:
    return line.cells[cell] if cell < len(line.cells) else ""


def classify(command: str, text: str) -> list[Line]:
    """The README's output as lines whose number tokens carry how they are compared."""
    policy = Policy.of(command)
    lines = [parse_line(line) for line in output_lines(text)]
    for line in lines:
        for token in line.tokens:
            if token.number:
                token.kind = "exact"
    if not policy.pld:
        return lines
    # tables: headers name the columns; a body row (with its wrapped continuation lines) has a
    # label (first cell) and a note (the "note" column, else the last cell)
    columns: dict[int, str] = {}
    rows: list[dict] = []
    table: list[dict] = []
    for index, line in enumerate(lines):
        if line.form == "rule" and line.shape[:1] in ("┏", "┌"):
            columns, table = {}, []
        elif line.form == "header":
            for cell in range(1, line.shape - 1):
                columns[cell] = f"{columns.get(cell, '')} {_cell_text(line, cell)}".strip()
        elif line.form == "row":
            if _cell_text(line, 1) or not table:
                table.append({"lines": [], "columns": dict(columns), "table": table})
                rows.append(table[-1])
            table[-1]["lines"].append(index)
    for row in rows:
        members = [lines[index] for index in row["lines"]]
        names = row["columns"]
        note_cell = next((cell for cell, name in names.items() if name == "note"), members[0].shape - 2)
        label = " ".join(filter(None, (_cell_text(member, 1) for member in members)))
        note = " ".join(filter(None, (_cell_text(member, note_cell) for member in members)))
        whole_table = [(" ".join(_cell_text(lines[i], 1) for i in other["lines"]).strip(),
                        " ".join(_cell_text(lines[i], note_cell) for i in other["lines"]).strip())
                       for other in row["table"]]
        tolerant_row = policy.row_tolerant(label, note, whole_table)
        for member in members:
            for position, token in enumerate(member.tokens):
                if not token.number or token.cell <= 1:
                    continue
                following = member.tokens[position + 1] if position + 1 < len(member.tokens) else None
                if following is not None and following.text == "bins" and following.cell == token.cell:
                    token.kind = "grid"
                elif _REAL.fullmatch(token.text) and (tolerant_row or names.get(token.cell) in policy.columns):
                    token.kind = "real"
    # a sentence (a warning) with the lines it wraps onto (indented), read as one
    sentences: list[list[Line]] = []
    for index, line in enumerate(lines):
        if line.form != "text":
            continue
        if sentences and line.text.startswith("  ") and index > 0 and sentences[-1][-1] is lines[index - 1]:
            sentences[-1].append(line)
        else:
            sentences.append([line])
    for sentence in sentences:
        _classify_sentence([token for line in sentence for token in line.tokens],
                           " ".join(line.text.strip() for line in sentence))
    return lines


def _classify_sentence(tokens: list[Token], text: str) -> None:
    """In a sentence (a warning) of a PLD example, the figure after "certified" and a percentage
    in a sentence about the certified figure (a gap to it) are PLD figures; a grid size is
    "N bins"."""
    for position, token in enumerate(tokens):
        if not token.number:
            continue
        before = tokens[position - 1].text if position > 0 else ""
        after = tokens[position + 1].text if position + 1 < len(tokens) else ""
        if after == "bins":
            token.kind = "grid"
        elif _REAL.fullmatch(token.text) and (
                before == "certified" or (after.startswith("%") and "certified" in text)):
            token.kind = "real"


# ---------------------------------------------------------------------------------------------
# Comparing


def _unit(text: str) -> Decimal:
    """One unit of the last printed digit of a number as printed."""
    mantissa, _, exponent = text.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return Decimal(1).scaleb(-decimals + (int(exponent) if exponent else 0))


def allowed(want: str, got: str | None = None) -> Decimal:
    """How far a PLD figure printed as `want` may move: 2 units of its last printed digit (of
    the coarser of the two prints) or 1e-5 relative, whichever is larger."""
    unit = _unit(want)
    if got is not None and _REAL.fullmatch(got):
        unit = max(unit, _unit(got))
    return max(2 * unit, Decimal("1e-5") * abs(Decimal(want)))


def number_problem(kind: str, want: str, got: str) -> str | None:
    if kind == "exact" or want == got:
        return None if want == got else f"{got} where the README has {want}"
    difference = abs(Decimal(got) - Decimal(want))
    if kind == "grid":
        limit = Decimal("0.03") * abs(Decimal(want))
        return None if difference <= limit else f"grid size {got} is more than 3% from the README's {want}"
    limit = allowed(want, got)
    return None if difference <= limit else f"{got} is more than {limit:g} from the README's {want}"


def _token_problem(want_tokens: list[Token], got_tokens: list[Token]) -> str | None:
    for want, got in zip(want_tokens, got_tokens):
        if want.cell != got.cell or want.number != got.number:
            return f"{got.text!r} where the README has {want.text!r}"
        if not want.number:
            if want.text != got.text:
                return f"{got.text!r} where the README has {want.text!r}"
        else:
            problem = number_problem(want.kind, want.text, got.text)
            if problem:
                return problem
    if len(want_tokens) != len(got_tokens):
        words = lambda tokens: " ".join(token.text for token in tokens)  # noqa: E731
        return f"{len(got_tokens)} words where the README has {len(want_tokens)}: {words(got_tokens)!r}"
    return None


def json_problem(want, got, path: tuple, policy: Policy, root) -> str | None:
    where = ".".join(str(key) for key in path) or "the document"
    if isinstance(want, dict):
        if not isinstance(got, dict) or list(want) != list(got):
            return f"{where}: keys {list(got) if isinstance(got, dict) else got!r}, README {list(want)}"
        for key in want:
            problem = json_problem(want[key], got[key], (*path, key), policy, root)
            if problem:
                return problem
        return None
    if isinstance(want, list):
        if not isinstance(got, list) or len(want) != len(got):
            return f"{where}: {got!r} is not a list of {len(want)}"
        for index, (left, right) in enumerate(zip(want, got)):
            problem = json_problem(left, right, (*path, index), policy, root)
            if problem:
                return problem
        return None
    if type(want) is not type(got):
        return f"{where}: {got!r} where the README has {want!r}"
    if isinstance(want, str):
        if want == got or not policy.pld:
            return None if want == got else f"{where}: {got!r} where the README has {want!r}"
        # a warning may quote a PLD figure: the sentence rule of the table mode
        want_tokens, got_tokens = _tokens(want, 0, len(want), 0), _tokens(got, 0, len(got), 0)
        for token in want_tokens:
            token.kind = "exact" if token.number else "text"
        _classify_sentence(want_tokens, want)
        problem = _token_problem(want_tokens, got_tokens)
        return None if problem is None else f"{where}: {problem}"
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        kind = policy.json_kind(path, want, root)
        if kind == "exact":
            return None if want == got else f"{where}: {got!r} where the README has {want!r}"
        problem = number_problem(kind, repr(want), repr(got))
        return None if problem is None else f"{where}: {problem}"
    return None if want == got else f"{where}: {got!r} where the README has {want!r}"


def line_problem(want: Line, got_text: str, policy: Policy) -> str | None:
    if want.text == got_text:
        return None
    if want.form == "json":
        try:
            got = json.loads(got_text)
        except ValueError:
            return "the output line is not JSON"
        expected = json.loads(want.text)
        return json_problem(expected, got, (), policy, expected)
    if not policy.pld:
        return "differs (closed-form example: compared exactly)"
    got = parse_line(got_text)
    if got.form != want.form or got.shape != want.shape:
        return f"a {got.form} line where the README has a {want.form} line" if got.form != want.form \
            else "the table's columns differ"
    return _token_problem(want.tokens, got.tokens)


def mismatches(command: str, expected: str, actual: str) -> list[str]:
    """What differs between the README's output of `command` and its real output (empty if they agree)."""
    policy = Policy.of(command)
    want_lines = classify(command, expected)
    got_lines = output_lines(actual)
    problems = []
    for number, (want, got) in enumerate(zip(want_lines, got_lines), start=1):
        problem = line_problem(want, got, policy)
        if problem:
            problems.append(f"line {number}: {problem}\n  README: {want.text}\n  actual: {got}")
    if len(want_lines) != len(got_lines):
        longer, name = (want_lines, "README") if len(want_lines) > len(got_lines) else (got_lines, "actual")
        extra = [line.text if isinstance(line, Line) else line for line in longer[min(len(want_lines), len(got_lines)):]]
        problems.append(f"{len(got_lines)} lines where the README has {len(want_lines)}; the {name} output goes on:\n"
                        + "\n".join(f"  {name}: {line}" for line in extra))
    return problems


# ---------------------------------------------------------------------------------------------
# The tests


# command -> its real output (stdout + stderr): each command runs once per session
_OUTPUTS: dict[str, str] = {}


def _real_output(command: str, dpcalc, monkeypatch) -> str:
    if command not in _OUTPUTS:
        argv, width = argv_and_width(command)
        monkeypatch.setenv("COLUMNS", width)
        monkeypatch.chdir(ROOT)
        run = dpcalc(*argv)
        _OUTPUTS[command] = run.stdout + run.stderr
    return _OUTPUTS[command]


def test_the_readme_has_examples():
    assert len(examples()) >= 20


def test_the_quick_start_and_the_docs_pages_are_checked():
    """The README's quick start is five checked one-liners, and the guide's pages are covered."""
    quick_start = README.read_text().split("## Quick start\n", 1)[1].split("\n## ", 1)[0]
    assert len(example_blocks(quick_start)) == 5
    covered = {page for page, _, _ in page_examples()}
    assert {"README.md", "docs/accounting.md", "docs/sampling.md", "docs/calibrate.md", "docs/check.md",
            "docs/risk.md", "docs/mechanisms.md", "docs/conversions.md", "docs/guide.md"} <= covered
    for page, command, _ in page_examples():
        assert page == "README.md" or page.startswith("docs/"), (page, command)


def checked_examples() -> list:
    """The examples as test cases: a docs page's example that runs the PLD accountant is marked
    slow (the README's own examples and every closed-form one stay in the default run)."""
    return [pytest.param(page, command, output, id=f"{page}: {command}",
                         marks=[pytest.mark.slow] if page != "README.md" and Policy.of(command).pld else [])
            for page, command, output in page_examples()]


@pytest.mark.parametrize("page, command, output", checked_examples())
def test_readme_example_is_real_output(page, command, output, dpcalc, monkeypatch):
    problems = mismatches(command, output, _real_output(command, dpcalc, monkeypatch))
    if problems:
        pytest.fail(f"{page}: example `{command}` differs from its real output:\n" + "\n".join(problems), pytrace=False)


@dataclass
class Site:
    """One number of the README's output: where it is and how it is compared."""

    line: int
    kind: str
    text: str
    start: int = 0  # in a text line
    end: int = 0
    path: tuple = ()  # in a JSON line


def sites(command: str, expected: str) -> list[Site]:
    policy = Policy.of(command)
    found = []
    for index, line in enumerate(classify(command, expected)):
        if line.form != "json":
            found += [Site(index, token.kind, token.text, token.start, token.end)
                      for token in line.tokens if token.number]
            continue
        document = json.loads(line.text)

        def walk(value, path):
            if isinstance(value, dict):
                for key, item in value.items():
                    walk(item, (*path, key))
            elif isinstance(value, list):
                for key, item in enumerate(value):
                    walk(item, (*path, key))
            elif isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                found.append(Site(index, policy.json_kind(path, value, document), repr(value), path=path))  # noqa: B023 - walk runs within this iteration

        walk(document, ())
    return found


def shifted(text: str, units: int) -> str:
    """`text` (a number as printed) moved by `units` units of its last printed digit."""
    mantissa, marker, exponent = re.fullmatch(r"([-\d.]+)(?:([eE])([-+]?\d+))?", text).groups()
    decimals = len(mantissa.partition(".")[2])
    moved = Decimal(mantissa) + Decimal(units).scaleb(-decimals)
    return f"{moved:.{decimals}f}" + (marker + exponent if marker else "")


def perturbed(expected: str, changes: list[tuple[Site, str]]) -> str:
    """The README's output with the numbers at the given sites replaced by new texts."""
    lines = output_lines(expected)
    by_line: dict[int, list[tuple[Site, str]]] = {}
    for site, text in changes:
        by_line.setdefault(site.line, []).append((site, text))
    for index, edits in by_line.items():
        if lines[index].lstrip().startswith("{"):
            document = json.loads(lines[index])
            for site, text in edits:
                parent, key = _at(document, site.path[:-1]), site.path[-1]
                if isinstance(parent[key], int):
                    parent[key] = int(text)
                    continue
                value = float(text)
                if value == parent[key] and text != site.text:
                    # 17 significant digits are finer than a double: one unit in the last digit
                    # may round to the same number, so move to the next double that way instead
                    toward = math.inf if Decimal(text) > Decimal(site.text) else -math.inf
                    value = math.nextafter(value, toward)
                parent[key] = value
            lines[index] = json.dumps(document)
        else:
            line = lines[index]
            for site, text in sorted(edits, key=lambda edit: edit[0].start, reverse=True):
                line = line[:site.start] + text + line[site.end:]
            lines[index] = line
    return "\n".join(lines) + "\n"


def _in_sync_output(command: str, output: str, dpcalc, monkeypatch) -> str:
    """The real output, for the self-tests: they measure the comparator around an example the
    README has right, so an out-of-date example is reported once, by test_readme_example_is_real_output."""
    actual = _real_output(command, dpcalc, monkeypatch)
    if mismatches(command, output, actual):
        pytest.skip("the README's output is out of date (see test_readme_example_is_real_output)")
    return actual


# an example shown on two pages (the README's quick start repeats some) is measured once
_DISTINCT = list(dict.fromkeys(examples()))
PLD_EXAMPLES = [(command, output) for command, output in _DISTINCT if Policy.of(command).pld]
EXACT_EXAMPLES = [(command, output) for command, output in _DISTINCT if not Policy.of(command).pld]


def test_the_examples_are_classified():
    """The README has examples of both kinds, and the PLD ones are the commands that run it."""
    assert {Policy.of(command).command for command, _ in PLD_EXAMPLES} == {"gdp", "rdp", "pld", "calibrate", "check", "risk"}
    assert {Policy.of(command).command for command, _ in EXACT_EXAMPLES} >= {
        "gdp", "convert", "laplace-eps", "advanced-composition"}
    for command, output in PLD_EXAMPLES:
        assert any(site.kind == "real" for site in sites(command, output)), command
    for command, output in EXACT_EXAMPLES:
        assert all(site.kind == "exact" for site in sites(command, output)), command


@pytest.mark.parametrize("command, output", PLD_EXAMPLES, ids=[command for command, _ in PLD_EXAMPLES])
def test_pld_figures_may_move_in_their_last_digit(command, output, dpcalc, monkeypatch):
    actual = _in_sync_output(command, output, dpcalc, monkeypatch)
    found = sites(command, output)
    reals = [site for site in found if site.kind == "real"]
    for units in (1, -1):
        # every PLD figure one unit up (or down) in its last printed digit at once
        moved = perturbed(output, [(site, shifted(site.text, units)) for site in reals])
        assert moved != perturbed(output, []), command
        assert mismatches(command, moved, actual) == [], f"{units:+d} in the last digit"
    for site in reals:
        # ten times the tolerance is caught
        units = int(10 * allowed(site.text) / _unit(site.text)) + 1
        for sign in (1, -1):
            moved = perturbed(output, [(site, shifted(site.text, sign * units))])
            assert mismatches(command, moved, actual), f"{site.text} moved by {sign * units} units was accepted"
    for site in found:
        if site.kind == "grid":
            size = int(site.text)
            for factor, accepted in ((1.02, True), (0.98, True), (1.05, False), (0.95, False)):
                moved = perturbed(output, [(site, str(round(size * factor)))])
                assert (mismatches(command, moved, actual) == []) == accepted, f"grid size {size} x {factor}"
        elif site.kind == "exact":
            # the closed-form figures, the inputs, counts and grid steps of a PLD example stay exact
            for units in (1, -1):
                moved = perturbed(output, [(site, shifted(site.text, units))])
                assert mismatches(command, moved, actual), f"{site.text} -> {shifted(site.text, units)} was accepted"


@pytest.mark.parametrize("command, output", EXACT_EXAMPLES, ids=[command for command, _ in EXACT_EXAMPLES])
def test_closed_form_figures_are_exact(command, output, dpcalc, monkeypatch):
    actual = _in_sync_output(command, output, dpcalc, monkeypatch)
    for site in sites(command, output):
        for units in (1, -1):
            moved = perturbed(output, [(site, shifted(site.text, units))])
            assert mismatches(command, moved, actual), f"{site.text} -> {shifted(site.text, units)} was accepted"


def test_a_figure_printed_shorter_keeps_the_table_comparable():
    """1.840846 printed as 1.84085 narrows nothing here, but a lone wide figure would: the
    padding and the rules change with the width and still compare equal."""
    command = "dpcalc pld --p 0.004 --sigma 1.1 --T 10000"
    readme = "\n".join([
        "┏━━━━━━━━━━┳━━━━━━━━━━┓",
        "┃ quantity ┃    value ┃",
        "┡━━━━━━━━━━╇━━━━━━━━━━┩",
        "│ epsilon  │ 1.840846 │",
        "│ bins     │ 31114 bins │",
        "└──────────┴──────────┘",
    ])
    actual = "\n".join([
        "┏━━━━━━━━━━┳━━━━━━━━━┓",
        "┃ quantity ┃   value ┃",
        "┡━━━━━━━━━━╇━━━━━━━━━┩",
        "│ epsilon  │ 1.84085 │",
        "│ bins     │ 31500 bins │",
        "└──────────┴─────────┘",
    ])
    assert mismatches(command, readme, actual) == []
    wrong = actual.replace("1.84085", "1.84095")
    (problem,) = mismatches(command, readme, wrong)
    assert "README: │ epsilon  │ 1.840846 │" in problem and "actual: │ epsilon  │ 1.84095 │" in problem


def test_a_wrapped_warning_is_read_as_one_sentence():
    # the figure after "certified" is a PLD figure even where the warning wraps between them
    lines = classify("dpcalc gdp --p 0.004 --sigma 1.1 --T 10000",
                     "Warning: CLT epsilon 1.787 is 2.9% below the certified\n  1.841 (tight_epsilon).\nNext 1.5\n")
    kinds = {token.text: token.kind for line in lines for token in line.tokens if token.number}
    assert kinds == {"1.787": "exact", "2.9": "real", "1.841": "real", "1.5": "exact"}
