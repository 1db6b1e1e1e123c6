"""--plot figures fit for a paper: the run in the caption, markers on swept points, one colour per
accountant in every figure, coinciding curves told apart by their dashes, the target marked.

Each test writes an SVG through the command line and reads it back: write_plot names every curve
panel{i}-series{j}-{accountant} and every target panel{i}-target{j} (SVG group ids), and the SVG
carries each text as a comment beside its glyphs.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import pytest

from dpcalc.cli.figures import ACCOUNTANT_STYLES, Panel, Series, series_style

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("matplotlib") is None, reason="matplotlib (the plot extra) is not installed"
)

SVG = "{http://www.w3.org/2000/svg}"
SMALL = ("--p", "0.1", "--sigma", "2", "--T", "10")


def _figure(dpcalc, tmp_path, *args: str) -> tuple[str, dict[str, ElementTree.Element]]:
    """(the SVG's text, its groups by id) of `dpcalc ARGS --plot FILE.svg`."""
    path = tmp_path / "figure.svg"
    run = dpcalc(*args, "--plot", str(path))
    assert run.code in (0, 1), run.stderr  # 1: a sweep over --max-eps
    text = path.read_text()
    groups = {group.get("id", ""): group for group in ElementTree.fromstring(text).iter(f"{SVG}g")}
    return text, groups


def _curves(groups: dict[str, ElementTree.Element]) -> dict[str, tuple[str, str | None, int]]:
    """id -> (stroke colour, dash array or None, number of markers) of every drawn curve."""
    curves = {}
    for name, group in groups.items():
        if re.fullmatch(r"panel\d+-(series\d+-\w+|target\d+)", name):
            line = group.find(f"{SVG}path")  # none when only markers are drawn: read the first marker's style
            drawn = line if line is not None else group.find(f".//{SVG}use")
            style = dict(part.split(": ", 1) for part in drawn.get("style").split("; "))
            markers = len(group.findall(f".//{SVG}use"))
            curves[name] = (style.get("stroke", "none"), style.get("stroke-dasharray"), markers)
    return curves


def _colours(curves) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for name, (colour, _, _) in curves.items():
        if "-series" in name:
            found.setdefault(name.rsplit("-", 1)[1], set()).add(colour)
    return found


# --- titles or captions carry the run ----------------------------------------------------------

@pytest.mark.parametrize(
    "args, caption",
    [
        pytest.param(("gdp", *SMALL), "p = 0.1, sigma = 2, T = 10, delta = 1e-05", marks=pytest.mark.slow),
        pytest.param(("gdp", "--mu", "1", "--eps", "2"), "mu = 1, epsilon = 2", marks=pytest.mark.slow),
        pytest.param(("pld", *SMALL, "--eps", "0.5"), "p = 0.1, sigma = 2, T = 10, epsilon = 0.5", marks=pytest.mark.slow),
        pytest.param(("pld", "--phase", "p=0.1,sigma=2,T=10", "--phase", "p=0.2,sigma=3,T=5"),
         "(p = 0.1, sigma = 2, T = 10) then (p = 0.2, sigma = 3, T = 5), delta = 1e-05", marks=pytest.mark.slow),
        pytest.param(("risk", *SMALL), "p = 0.1, sigma = 2, T = 10", marks=pytest.mark.slow),
        pytest.param(("pld", "--p", "0.1", "--sigma", "2,3", "--T", "5,10"), "p = 0.1, delta = 1e-05", marks=pytest.mark.slow),
        (("gdp", "--p", "0.1", "--sigma", "2", "--T", "5,10", "--no-tight"), "p = 0.1, sigma = 2, delta = 1e-05"),
        pytest.param(("calibrate", "--target-eps", "1,2", "--p", "0.1", "--T", "10", "--accountant", "rdp"),
         "accountant = rdp, delta = 1e-05, p = 0.1, T = 10", marks=pytest.mark.slow),
        (("convert", "--from", "gaussian", "--sigma", "2", "--to", "tradeoff"),
         "Gaussian noise std 2, L2 sensitivity 1"),
    ],
)
def test_caption_names_the_run(dpcalc, tmp_path, args, caption):
    text, _ = _figure(dpcalc, tmp_path, *args)
    assert f"<!-- {caption} -->" in text


def test_caption_in_the_text_chart(dpcalc):
    run = dpcalc("pld", *SMALL, "--chart")
    assert "Trade-off curve (tight, certified) (p = 0.1, sigma = 2, T = 10, delta = 1e-05)" in run.stdout


# --- markers on swept points --------------------------------------------------------------------

@pytest.mark.parametrize(
    "args, counts",
    [
        (("pld", "--p", "0.1", "--sigma", "2,3", "--T", "5,10,20"), {"panel0-series0-pld": 3, "panel0-series1-pld": 3}),
        (("gdp", "--p", "0.1", "--sigma", "2", "--T", "5:20:5"),
         {"panel0-series0-gdp": 4, "panel0-series1-pld": 4}),  # the tight epsilon beside the central-limit one
        (("calibrate", "--target-eps", "1,2,4", "--p", "0.1", "--T", "10", "--accountant", "rdp"),
         {"panel0-series0-rdp": 3}),
    ],
)
def test_markers_on_swept_points(dpcalc, tmp_path, args, counts):
    _, groups = _figure(dpcalc, tmp_path, *args)
    curves = _curves(groups)
    assert {name: markers for name, (_, _, markers) in curves.items() if "-series" in name} == counts


@pytest.mark.slow
def test_single_run_curves_have_no_markers(dpcalc, tmp_path):
    _, groups = _figure(dpcalc, tmp_path, "pld", *SMALL)
    assert all(markers == 0 for _, _, markers in _curves(groups).values())


@pytest.mark.slow
def test_risk_marks_the_asked_fprs(dpcalc, tmp_path):
    text, groups = _figure(dpcalc, tmp_path, "risk", *SMALL, "--fpr", "0.001,0.01,0.1")
    (asked,) = [name for name, (_, _, markers) in _curves(groups).items() if markers]
    assert _curves(groups)[asked][2] == 3 and "<!-- the asked FPRs (table) -->" in text


# --- one colour per accountant across all figures -----------------------------------------------

# every accountant and the no-privacy reference, in three figures
EVERY_ACCOUNTANT = [
    ("gdp", *SMALL),  # pld, gdp, none
    ("convert", "--from", "dp", "--eps", "1", "--to", "tradeoff"),  # dp, and the implied gdp
    ("calibrate", "--target-eps", "1,2", "--p", "0.1", "--T", "10", "--accountant", "rdp"),  # rdp
]
EVERY_FIGURE = [
    ("pld", *SMALL, "--eps", "1"),
    ("risk", *SMALL),
    ("convert", "--from", "gdp", "--mu", "1", "--to", "tradeoff"),
    ("gdp", "--p", "0.1", "--sigma", "2,3", "--T", "5,10"),
    ("pld", "--p", "0.1", "--sigma", "2,3", "--T", "5,10"),
    ("calibrate", "--target-eps", "1,2", "--p", "0.1", "--T", "10", "--accountant", "gdp"),
    ("calibrate", "--target-eps", "1,2", "--p", "0.1", "--T", "10"),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    "figures",
    [pytest.param(EVERY_ACCOUNTANT, id="three"),
     pytest.param(EVERY_ACCOUNTANT + EVERY_FIGURE, id="every-command", marks=pytest.mark.slow)],
)
def test_one_colour_per_accountant_across_figures(dpcalc, tmp_path, figures):
    found: dict[str, set[str]] = {}
    for args in figures:
        _, groups = _figure(dpcalc, tmp_path, *args)
        for accountant, colours in _colours(_curves(groups)).items():
            found.setdefault(accountant, set()).update(colours)
    assert set(found) == {"pld", "gdp", "rdp", "dp", "none"}
    assert all(colours == {ACCOUNTANT_STYLES[name][0].lower()} for name, colours in found.items())
    assert len({ACCOUNTANT_STYLES[name][0] for name in found}) == len(found)  # distinct accountants, distinct colours


# --- curves that coincide stay distinguishable --------------------------------------------------

@pytest.mark.slow
def test_coinciding_curves_differ_in_dashes(dpcalc, tmp_path):
    # unsampled Gaussian phases: the certified PLD curve is the exact GDP curve, drawn twice
    _, groups = _figure(dpcalc, tmp_path, "pld", "--p", "1", "--sigma", "2", "--T", "4")
    curves = _curves(groups)
    pld_curve, gdp_curve = curves["panel0-series0-pld"], curves["panel0-series1-gdp"]
    assert pld_curve[1] is None and gdp_curve[1] is not None  # solid under dashed: both colours show
    assert pld_curve[0] != gdp_curve[0]
    assert curves["panel1-series0-pld"][1] is None and curves["panel1-series1-gdp"][1] is not None


@pytest.mark.slow
def test_series_of_one_accountant_differ_in_dashes_and_markers(dpcalc, tmp_path):
    text, groups = _figure(dpcalc, tmp_path, "pld", "--p", "0.1", "--sigma", "2,3,4", "--T", "5,10")
    curves = [curve for name, curve in _curves(groups).items() if "-series" in name]
    assert len(curves) == 3 and len({dashes for _, dashes, _ in curves}) == 3 and len({c for c, _, _ in curves}) == 1
    root = ElementTree.fromstring(text)
    shapes = set()
    for name in ("panel0-series0-pld", "panel0-series1-pld", "panel0-series2-pld"):
        group = next(g for g in root.iter(f"{SVG}g") if g.get("id") == name)
        shapes.add(group.find(f"{SVG}defs/{SVG}path").get("d"))
    assert len(shapes) == 3  # a marker shape per series


def test_series_style_rules():
    panel = Panel("t", "x", "y", series=[
        Series("a", [0.0], [0.0]), Series("b", [0.0], [0.0], accountant="gdp"),
        Series("c", [0.0], [0.0], markers=True), Series("d", [0.0], [0.0], dashed=True),
        Series("e", [0.0], [0.0], accountant="gdp", markers=True),
    ])
    a, b, c, d, e = series_style(panel)
    assert a["color"] == c["color"] == d["color"] == ACCOUNTANT_STYLES["pld"][0] != b["color"] == e["color"]
    assert len({repr(style["linestyle"]) for style in (a, c, d)}) == 3
    assert b["linestyle"] != e["linestyle"] and "marker" in c and "marker" in e and "marker" not in a
    assert b["zorder"] > a["zorder"]  # the dashed curve on top of the solid one


# --- the target delta or epsilon marked ---------------------------------------------------------

@pytest.mark.parametrize(
    "args, label, horizontal",
    [
        pytest.param(("gdp", *SMALL), "target delta = 1e-05", True, marks=pytest.mark.slow),
        pytest.param(("pld", *SMALL, "--delta", "1e-6"), "target delta = 1e-06", True, marks=pytest.mark.slow),
        pytest.param(("pld", *SMALL, "--eps", "0.5"), "target epsilon = 0.5", False, marks=pytest.mark.slow),
        pytest.param(("gdp", "--mu", "1", "--eps", "2"), "target epsilon = 2", False, marks=pytest.mark.slow),
        (("pld", "--p", "0.1", "--sigma", "2,3", "--T", "10", "--max-eps", "1"), "epsilon budget = 1", True),
        pytest.param(("gdp", "--p", "0.1", "--sigma", "2,3", "--T", "10", "--max-eps", "1"), "epsilon budget = 1", True, marks=pytest.mark.slow),
    ],
)
def test_target_marked(dpcalc, tmp_path, args, label, horizontal):
    text, groups = _figure(dpcalc, tmp_path, *args)
    (target,) = [group for name, group in groups.items() if re.fullmatch(r"panel\d+-target0", name)]
    points = re.findall(r"([ML]) ([-\d.]+) ([-\d.]+)", target.find(f"{SVG}path").get("d"))
    (_, x0, y0), (_, x1, y1) = points
    assert (y0 == y1) if horizontal else (x0 == x1)
    assert f"<!-- {label} -->" in text


def test_no_target_without_one(dpcalc, tmp_path):
    _, groups = _figure(dpcalc, tmp_path, "pld", "--p", "0.1", "--sigma", "2,3", "--T", "10")
    assert not [name for name in groups if "-target" in name]


# --- the files themselves -----------------------------------------------------------------------

@pytest.mark.slow
def test_same_inputs_same_file(dpcalc, tmp_path):
    first, _ = _figure(dpcalc, tmp_path, "convert", "--from", "gdp", "--mu", "1", "--to", "tradeoff")
    second, _ = _figure(dpcalc, tmp_path, "convert", "--from", "gdp", "--mu", "1", "--to", "tradeoff")
    assert first == second and "<dc:date>" not in first


@pytest.mark.slow
def test_pdf_embeds_truetype_fonts(dpcalc, tmp_path):
    path = tmp_path / "figure.pdf"
    assert dpcalc("convert", "--from", "gdp", "--mu", "1", "--to", "tradeoff", "--plot", str(path)).code == 0
    data = path.read_bytes()
    assert b"/FontFile2" in data and b"/Subtype /Type3" not in data  # Type 42, no Type 3 fonts
    assert b"/CreationDate" not in data


@pytest.mark.slow  # a fresh process
def test_plot_does_not_load_pyplot(tmp_path):
    """The figure is drawn without pyplot (its import and backend set-up are a third of --plot's cost)."""
    script = (
        "import sys\n"
        "from dpcalc.cli.app import main\n"
        f"code = main(['convert', '--from', 'gdp', '--mu', '1', '--to', 'tradeoff', '--plot', {str(tmp_path / 'f.png')!r}])\n"
        "print(code, 'matplotlib.figure' in sys.modules, 'matplotlib.pyplot' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines()[-1] == "0 True False"


@pytest.mark.parametrize("command", ["gdp", pytest.param("pld", marks=pytest.mark.slow)])
def test_swept_delta_on_a_log_axis(dpcalc, tmp_path, command):
    text, _ = _figure(dpcalc, tmp_path, command, "--p", "0.1", "--sigma", "1,2", "--T", "10", "--eps", "0.5")
    assert re.search(r"<!-- \$\\mathdefault\{10\^\{-\d+\}\}\$ -->", text)  # decades as tick labels


@pytest.mark.slow
def test_figure_warnings_name_the_figures_accuracy(dpcalc):
    """The profile is drawn at its own accuracy (PROFILE_ACCURACY): its warnings say so, not the command's."""
    from dpcalc.cli.figures import PROFILE_ACCURACY

    run = dpcalc("pld", *SMALL, "--neighbours", "replace-one", "--sampling", "uniform", "--chart")
    assert run.code == 0
    assert "the grid meets the requested accuracy 0.001" in run.stderr  # the command's own result
    assert f"the grid meets the figure's accuracy {PROFILE_ACCURACY:g}" in run.stderr
    assert f"requested accuracy {PROFILE_ACCURACY:g}" not in run.stderr
