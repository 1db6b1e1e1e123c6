"""Narrow terminals: tables fit 60 columns with every number whole, charts and their legends fit
80 columns, warnings wrap to the terminal's width, and the RDP curve table marks the orders it
skips.

The width is set as a user sets it, with COLUMNS (Rich reads it when dpcalc makes its console).
A number is "whole" when the narrow table shows exactly the numbers the same table shows at 200
columns, where nothing is squeezed: a number cut ("0.0005…"), folded onto two lines or wrapped
at a hyphen ("1e-" / "05") would leave a piece that is not one of them, or lose one.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from dpcalc.cli.figures import CHART_COLUMNS, Panel, Series, render_chart
from dpcalc.cli.output import Report, Table, emit, format_number, wrap_words
from tests.slow import slow_cases

# A number as the tables print it (0.453464, 1e-05, 1.68704e+07, 10000), alone between spaces,
# rules or punctuation; digits glued to letters (the "1" of "mu/2") are not read as numbers.
_NUMBER = re.compile(r"(?<![\w.+-])-?\d+(?:\.\d+)?(?:e[+-]\d+)?(?![\w.])")

DESIGN = ("--p", "0.004", "--sigma", "1.1", "--T", "10000")

# Every command with a table, and the sweeps; the slow ones (several PLD runs) are marked.
COMMANDS = [
    pytest.param(("gdp", *DESIGN), id="gdp"),
    pytest.param(("gdp", "--p", "0.004", "--sigma", "1.1", "--epochs", "1:5:1", "--no-tight"), id="gdp-sweep"),
    pytest.param(("gdp", "--mu", "0.5", "--eps", "1"), id="gdp-mu"),
    pytest.param(("rdp", *DESIGN), id="rdp"),
    pytest.param(("rdp", "--phase", "p=0.01,sigma=2,T=500", "--phase", "p=0.01,sigma=0.9,T=1800",
                  "--phase", "mechanism=laplace,scale=20,T=1", "--orders", "2,4,5.5,8,16", "--no-tight"), id="rdp-phases"),
    pytest.param(("rdp", "--n", "60000", "--batch-size", "256", "--epochs", "10:60:10", "--sigma", "1.1", "--no-tight"),
                 id="rdp-sweep"),
    pytest.param(("pld", *DESIGN), id="pld"),
    pytest.param(("pld", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--sampling", "uniform",
                  "--neighbours", "replace-one"), id="pld-replace-one"),
    pytest.param(("pld", "--p", "0.004,0.01", "--sigma", "0.9,1.1", "--T", "1000"), id="pld-sweep"),
    pytest.param(("risk", *DESIGN), id="risk"),
    pytest.param(("calibrate", "--target-eps", "1", "--mechanism", "laplace", "--T", "10", "--sensitivity", "2"),
                 id="calibrate-laplace"),
    pytest.param(("calibrate", "--target-eps", "2", "--p", "0.004", "--T", "10000", "--accountant", "rdp"),
                 id="calibrate-rdp"),
    pytest.param(("calibrate", "--target-tpr", "0.05", "--at-fpr", "0.01", "--p", "0.004", "--T", "10000"),
                 id="calibrate-risk", marks=pytest.mark.slow),
    pytest.param(("convert", "--from", "dp", "--eps", "1", "--delta", "1e-5", "--to", "gaussian"), id="convert-gaussian"),
    pytest.param(("convert", "--from", "zcdp", "--rho", "0.5", "--to", "dp"), id="convert-zcdp"),
    pytest.param(("convert", "--from", "gdp", "--mu", "1", "--to", "tradeoff", "--points", "5"), id="convert-tradeoff"),
    pytest.param(("laplace-eps", "--tolerance", "1e-5", "--probability", "0.9"), id="laplace-eps"),
    pytest.param(("advanced-composition", "--eps", "0.1", "--k", "100"), id="advanced-composition"),
    pytest.param(("advanced-composition", "--eps", "0.1", "--delta", "1e-6", "--target-eps", "5",
                  "--total-delta", "1e-4"), id="advanced-composition-target"),
    pytest.param(("check", "examples/privacy-budget.toml"), id="check", marks=pytest.mark.slow),
]


@pytest.fixture
def at_width(dpcalc, monkeypatch):
    """`dpcalc ARGS...` with the terminal COLUMNS wide."""

    def run(columns: int, *args: str):
        monkeypatch.setenv("COLUMNS", str(columns))
        return dpcalc(*args)

    return run


def numbers(text: str) -> set[str]:
    return set(_NUMBER.findall(text))


def too_wide(text: str, columns: int) -> list[str]:
    return [line for line in text.splitlines() if cell_len(line) > columns]


@pytest.fixture
def in_repository(monkeypatch):
    from pathlib import Path

    monkeypatch.chdir(Path(__file__).resolve().parents[2])


@pytest.mark.parametrize("args", slow_cases(COMMANDS, 8, 9, 10, one_argument=True))
def test_tables_fit_60_columns_with_every_number_whole(at_width, in_repository, args):
    wide = at_width(200, *args)
    narrow = at_width(60, *args)
    assert wide.code == narrow.code == 0
    assert too_wide(narrow.stdout, 60) == []
    assert "…" not in narrow.stdout
    assert numbers(narrow.stdout) == numbers(wide.stdout)
    # the words too, each whole (a long one such as "Dwork-Rothblum-Vadhan" may break after a hyphen)
    narrow_words = set(re.findall(r"[A-Za-z][\w-]*", narrow.stdout))
    for word in set(re.findall(r"[A-Za-z][\w-]*", wide.stdout)):
        assert word in narrow_words or all(any(piece in other for other in narrow_words)
                                           for piece in word.split("-")), word


@pytest.mark.slow
def test_the_json_figures_appear_whole_in_a_60_column_table(at_width):
    # the membership-inference table is the widest: six columns of figures such as 7.26719e-05
    document = at_width(60, "risk", *DESIGN, "--json").json()
    run = at_width(60, "risk", *DESIGN)
    shown = numbers(run.stdout)
    from dpcalc.cli.output import format_significant

    for row in document["result"]["attacks"]:
        for key, upward in (("tpr", True), ("tpr_lower", False), ("ppv", True)):
            assert format_significant(row[key], upward) in shown, (key, row[key])


@pytest.mark.slow
def test_a_table_too_wide_for_its_numbers_is_split_repeating_its_first_column(at_width):
    run = at_width(60, "risk", *DESIGN)
    assert too_wide(run.stdout, 60) == []
    assert run.stdout.count("(continued)") == 2
    headers = [line for line in run.stdout.splitlines() if line.startswith("┃") and "FPR" in line]
    assert len(headers) == 2 and all(line.split("┃")[1].strip() == "FPR" for line in headers)
    for fpr in ("1e-05", "0.0001", "0.001", "0.01", "0.1"):  # each row's name in both parts
        assert len([line for line in run.stdout.splitlines() if line.startswith(f"│ {fpr:>6} │")]) == 2
    wide = at_width(200, "risk", *DESIGN)
    assert "(continued)" not in wide.stdout


def test_the_budget_line_goes_under_the_last_part(at_width):
    run = at_width(60, "pld", *DESIGN, "--max-eps", "2")
    assert run.code == 0 and too_wide(run.stdout, 60) == []
    assert run.stdout.rstrip().splitlines()[-2].startswith("within budget: epsilon 1.84")


def _wide_report(columns: int) -> Report:
    figures = [f"{0.000123456 * 10 ** i:.6g}" for i in range(columns - 1)]
    return Report(command="demo", inputs={}, result={}, warnings=[],
                  tables=[Table(columns=("name", *(f"figure {i}" for i in range(columns - 1))),
                                rows=[("row", *figures)], title="demo")])


def test_numbers_stay_whole_even_where_no_layout_fits(monkeypatch, capsys):
    # 30 columns cannot hold "row" beside 0.000123456 with its rules: the table is printed
    # wider than the terminal (the terminal wraps the line) rather than cut
    monkeypatch.setenv("COLUMNS", "20")
    emit(_wide_report(3), json_mode=False)
    out = capsys.readouterr().out
    assert {"0.000123456", "0.00123456"} <= numbers(out)
    assert "…" not in out


def test_tables_that_fit_are_printed_as_before(monkeypatch, capsys):
    # at 200 columns nothing wraps: one header line, one row line
    monkeypatch.setenv("COLUMNS", "200")
    emit(_wide_report(6), json_mode=False)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 6 and "(continued)" not in "\n".join(lines)


_WORDS = ["p", "of", "the", "Thm", "3.16", "(certified)", "approximation", "Dwork-Rothblum-Vadhan",
          "Kairouz-Oh-Viswanath", "subsampled-gaussian", "1e-05", "upper", "bound;", "2022)", "x" * 25]


def _render(tables: list[Table], width: int) -> str:
    import io

    from rich.console import Console

    from dpcalc.cli.output import _print_tables

    stream = io.StringIO()
    _print_tables(Console(file=stream, width=width, highlight=False, markup=False, emoji=False), tables, None)
    return stream.getvalue()


@st.composite
def _tables(draw):
    count = draw(st.integers(1, 6))
    number = st.floats(-1e9, 1e9, allow_nan=False, allow_infinity=False).map(format_number)
    text = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=8).map(" ".join)
    kinds = draw(st.lists(st.booleans(), min_size=count, max_size=count))  # True: a column of numbers
    rows = draw(st.lists(st.tuples(*(number if kind else text for kind in kinds)), min_size=1, max_size=5))
    columns = tuple(draw(st.sampled_from(["value", "lower bound", "note", "TPR (certified)", "x"])) + str(i)
                    for i in range(count))
    return Table(columns=columns, rows=rows, title=draw(text))


@pytest.mark.slow
@settings(max_examples=60)
@given(table=_tables(), width=st.integers(40, 120))
def test_any_table_keeps_its_numbers_whole_at_any_width(table, width):
    narrow, wide = _render([table], width), _render([table], 1000)
    assert numbers(narrow) == numbers(wide)
    assert "…" not in narrow
    # a column of words is never made narrower than 16 characters, nor a number cut, and a
    # column of numbers beside the first column fits 40: so every table fits
    assert too_wide(narrow, width) == []


# ---------------------------------------------------------------------------------------------
# Warnings


def test_a_long_warning_wraps_to_the_terminal_width(at_width):
    warning = at_width(60, "gdp", *DESIGN, "--json").json()["warnings"][0]
    run = at_width(60, "gdp", *DESIGN)
    lines = run.stderr.splitlines()
    assert len(lines) > 2 and too_wide(run.stderr, 60) == []
    assert lines[0].startswith("Warning: mu comes from") and all(line.startswith("  ") for line in lines[1:])
    # wrapped at spaces only: joining the lines gives the sentence back, every word whole
    assert " ".join(line.strip() for line in lines) == f"Warning: {warning}"


def test_a_warning_stays_one_line_without_a_terminal(dpcalc, monkeypatch):
    # stderr to a file or pipe and no COLUMNS: one line a warning, as a log or grep wants it
    monkeypatch.delenv("COLUMNS", raising=False)
    run = dpcalc("gdp", *DESIGN)
    assert run.stderr.startswith("Warning: mu comes from") and run.stderr.count("\n") == 1


def test_warnings_in_json_mode_are_not_wrapped(at_width):
    run = at_width(60, "gdp", *DESIGN, "--json")
    assert run.stderr == "" and "\n" not in run.json()["warnings"][0]


def test_wrap_words_never_breaks_a_word_or_a_number():
    text = "Warning: FPR 1e-05, add-remove pairs and a_very_long_identifier_beyond_the_width here"
    wrapped = wrap_words(text, 16)
    assert wrapped.splitlines() == ["Warning: FPR", "  1e-05,", "  add-remove", "  pairs and",
                                    "  a_very_long_identifier_beyond_the_width", "  here"]
    assert wrap_words("short", 60) == "short"


# ---------------------------------------------------------------------------------------------
# --chart


CHARTS = [
    pytest.param(("gdp", *DESIGN, "--no-tight"), id="gdp"),
    pytest.param(("pld", *DESIGN), id="pld", marks=pytest.mark.slow),
    pytest.param(("risk", *DESIGN), id="risk"),
    pytest.param(("convert", "--from", "dp", "--eps", "1", "--delta", "1e-5", "--to", "tradeoff"), id="convert"),
    pytest.param(("gdp", "--p", "0.004,0.01", "--sigma", "1.1", "--epochs", "1:5:1", "--no-tight"), id="gdp-sweep"),
]


@pytest.mark.parametrize("args", CHARTS)
def test_chart_and_legend_fit_80_columns(at_width, args):
    run = at_width(80, *args, "--chart")
    assert run.code == 0
    assert "└" in run.stdout
    assert too_wide(run.stdout, 80) == []


@pytest.mark.slow
def test_the_legend_wraps_between_its_entries(at_width):
    run = at_width(80, "risk", *DESIGN, "--chart")
    chart = run.stdout[run.stdout.index("Attack risk (PLD, certified) (p = 0.004"):]
    legend = chart.splitlines()[-3:]
    # five entries, two a line, each whole
    assert [line.strip() for line in legend] == [
        "● TPR, certified upper bound (PLD)   · lower end of the certified interval",
        "+ 0.453464-GDP (central limit)   × no privacy lost (TPR = FPR)",
        "o the asked FPRs (table)",
    ]


def test_render_chart_fits_80_columns_whatever_its_labels():
    long = "a label far longer than any line of the chart could hold, with words to wrap at"
    panel = Panel(title="A title " * 15, xlabel="x " * 50, ylabel="y " * 50, xlog=False, ylog=False,
                  series=[Series(long, [0.0, 1.0], [-123456.789, 0.000123]), Series("short", [0.0, 1.0], [0.0, 1.0])])
    text = render_chart(panel)
    assert too_wide(text, CHART_COLUMNS) == []
    lines = text.splitlines()
    assert " ".join(line.strip() for line in lines[-3:]) == f"● {long} · short"


# ---------------------------------------------------------------------------------------------
# The RDP curve table


def _curve_rows(stdout: str) -> list[list[str]]:
    table = stdout[stdout.index("RDP curve (all orders: --json)"):]
    return [[cell.strip() for cell in line.split("│")[1:-1]] for line in table.splitlines() if line.startswith("│")]


def test_the_rdp_curve_table_marks_the_orders_it_skips(at_width):
    args = ("rdp", *DESIGN, "--no-tight")
    curve = at_width(60, *args, "--json").json()["result"]["curve"]
    rows = _curve_rows(at_width(60, *args).stdout)
    markers = [row for row in rows if row[0] == "..."]
    # the first order, three either side of the optimum (9.8) and the last: two gaps
    assert [row[2] for row in markers] == ["171 orders skipped", "132 orders skipped"]
    shown = [row for row in rows if row[0] != "..."]
    skipped = sum(int(row[2].split()[0]) for row in markers)
    assert len(shown) + skipped == len(curve) == 312
    # each marker stands where orders are missing: the orders beside it are not neighbours in the grid
    orders = [point["order"] for point in curve]
    for index, row in enumerate(rows):
        if row[0] == "...":
            before, after = float(rows[index - 1][0]), float(rows[index + 1][0])
            assert orders.index(after) - orders.index(before) - 1 == int(row[2].split()[0])


def test_the_rdp_curve_table_without_gaps_has_no_marker(at_width):
    rows = _curve_rows(at_width(60, "rdp", *DESIGN, "--no-tight", "--orders", "2,4,8,16").stdout)
    assert [row[0] for row in rows] == ["2", "4", "8", "16"]


def test_one_skipped_order_is_singular(at_width):
    # the optimum at the last of six orders (7, below 9.8): the first order and the four before
    # the optimum are shown, so one order (3) is skipped
    rows = _curve_rows(at_width(60, "rdp", *DESIGN, "--no-tight", "--orders", "2,3,4,5,6,7").stdout)
    assert [row[0] for row in rows] == ["2", "...", "4", "5", "6", "7"]
    assert rows[1][2] == "1 order skipped"


def test_a_long_word_breaks_after_a_hyphen_or_at_the_width():
    from dpcalc.cli.output import _break_long_words

    assert _break_long_words("exact, Kairouz-Oh-Viswanath", 16) == "exact, Kairouz-Oh-\nViswanath"
    assert _break_long_words("abcdefghij klm", 4) == "abcd\nefgh\nij klm"
    assert _break_long_words("two\nlines-here-and-more", 11) == "two\nlines-here-\nand-more"
    assert _break_long_words("fits as it is", 5) == "fits as it is"


def test_a_short_row_ends_in_empty_cells(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "60")
    emit(Report(command="demo", inputs={}, result={}, tables=[Table(columns=("a", "b", "note"), rows=[("x", "1.5")])]),
         json_mode=False)
    assert "│ x │ 1.5 │      │" in capsys.readouterr().out
