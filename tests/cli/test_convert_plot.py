"""`dpcalc convert --to tradeoff --plot/--chart`: the converted guarantee's trade-off curve as a picture."""

from __future__ import annotations

import importlib.util

import pytest

from dpcalc.cli import convert as cli
from dpcalc.cli import convert_report as report
from dpcalc.core import conversions, gdp
from tests.fresh_process import loaded_by_calls

needs_matplotlib = pytest.mark.skipif(
    importlib.util.find_spec("matplotlib") is None, reason="matplotlib (the plot extra) is not installed"
)

GDP = ("convert", "--from", "gdp", "--mu", "1", "--to", "tradeoff")
DP = ("convert", "--from", "dp", "--eps", "1", "--delta", "1e-5", "--to", "tradeoff")


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


@pytest.mark.slow
@needs_matplotlib
@pytest.mark.parametrize("args", [pytest.param(GDP, marks=pytest.mark.slow), pytest.param(DP, marks=pytest.mark.slow), ("convert", "--from", "gaussian", "--sigma", "2", "--to", "tradeoff")])
def test_plot_png(dpcalc, tmp_path, args):
    path = tmp_path / "tradeoff.png"
    run = dpcalc(*args, "--plot", str(path))
    assert run.code == 0, run.stderr
    width, height = _png_size(path.read_bytes())
    assert 400 <= width <= 3000 and 300 <= height <= 2000
    assert path.stat().st_size > 10_000
    assert run.stderr.endswith(f"Wrote {path}\n")


@needs_matplotlib
def test_plot_svg_in_json_mode_keeps_stdout_json(dpcalc, tmp_path):
    path = tmp_path / "tradeoff.svg"
    run = dpcalc(*DP, "--group", "2", "--plot", str(path), "--json")
    assert run.code == 0, run.stderr
    document = run.json()
    assert len(document["result"]["tradeoff"]) == cli.DEFAULT_POINTS  # --points still sets the table only
    text = path.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text and len(text) > 10_000
    assert run.stderr == ""


def test_chart_shape(dpcalc):
    run = dpcalc(*GDP, "--chart")
    assert run.code == 0
    chart = run.stdout[run.stdout.index("Trade-off curve, mu = 1\n"):].splitlines()
    assert chart[1] == "type II error beta"
    plot_rows = [line for line in chart if "│" in line]
    assert len(plot_rows) == 18  # the chart's default height
    assert all(len(line.split("│", 1)[1]) == 60 for line in plot_rows)  # and width
    assert plot_rows[0].startswith("1 │●") and plot_rows[-1].startswith("0 │")
    assert "└" + "─" * 60 in run.stdout
    assert "type I error alpha" in run.stdout
    assert "● 1-GDP   · no privacy lost (1 - alpha)" in run.stdout
    # the diagonal: the top-left and bottom-right corners lie on it, the curve (●) stays on top
    assert plot_rows[-1].endswith("●")


def test_chart_labels_per_source(dpcalc):
    dp = dpcalc(*DP, "--chart").stdout
    assert "Trade-off curve of (1, 1e-05)-DP" in dp and "● (1, 1e-05)-DP" in dp
    pure = dpcalc("convert", "--from", "dp", "--eps", "1", "--to", "tradeoff", "--chart").stdout
    mu = conversions.pure_dp_to_mu(1.0)
    assert f"· implied {report.format_number(mu)}-GDP (weaker)" in pure and "+ no privacy lost" in pure
    gaussian = dpcalc("convert", "--from", "gaussian", "--noise-std", "4", "--sensitivity", "2", "--to", "tradeoff",
                      "--group", "3", "--chart").stdout
    assert "Trade-off curve, mu = 1.5, groups of 3" in gaussian
    assert "● Gaussian mechanism: 1.5-GDP (mu = sensitivity/noise std)" in gaussian


def test_chart_goes_to_stderr_in_json_mode(dpcalc):
    run = dpcalc(*GDP, "--chart", "--json")
    assert run.code == 0
    run.json()
    assert "Trade-off curve, mu = 1" in run.stderr and "●" in run.stderr


def test_panel_curves_are_the_exact_functions():
    result = conversions.convert(conversions.Guarantee("gdp", mu=2.0), conversions.Target("tradeoff"), group=2)
    (panel,) = report.tradeoff_panels(result)
    curve, diagonal = panel.series
    assert panel.square and diagonal.dashed and (diagonal.x, diagonal.y) == ([0.0, 1.0], [1.0, 0.0])
    assert curve.x == sorted(curve.x) and curve.x[0] == 0.0 and curve.x[-1] == 1.0
    assert len(curve.x) > 400 and min(x for x in curve.x if x > 0) <= 1e-8  # fine, reaching towards alpha = 0
    assert curve.y == [gdp.tradeoff(alpha, 4.0) for alpha in curve.x]  # group of 2: mu = 4
    dp = conversions.convert(conversions.Guarantee("dp", epsilon=1.0, delta=0.1), conversions.Target("tradeoff"))
    (panel,) = report.tradeoff_panels(dp)
    curve = panel.series[0]
    corner = 0.9 / (1.0 + 2.718281828459045)  # f_{1, 0.1}'s corner, where its two lines meet
    assert any(abs(alpha - corner) < 1e-15 for alpha in curve.x) and 0.9 in curve.x
    assert curve.y == [conversions.dp_tradeoff(alpha, 1.0, 0.1) for alpha in curve.x]
    assert len(panel.series) == 2  # delta > 0: no implied GDP curve


@pytest.mark.parametrize(
    "args, message",
    [
        (("convert", "--from", "gdp", "--mu", "1", "--to", "dp", "--plot", "x.png"),
         "--plot draws a trade-off curve: it applies only with --to tradeoff, got --to dp"),
        (("convert", "--from", "gaussian", "--sigma", "1", "--to", "rdp", "--chart"),
         "--chart draws a trade-off curve: it applies only with --to tradeoff, got --to rdp"),
        ((*GDP, "--plot", "out.txt"), "--plot must name a .png, .svg or .pdf file, got out.txt"),
        ((*GDP, "--plot", "/no/such/folder/out.png"),
         "--plot: folder /no/such/folder does not exist, got /no/such/folder/out.png"),
        (("convert", "--from", "zcdp", "--rho", "1", "--to", "tradeoff", "--chart"), None),
    ],
)
def test_errors(dpcalc, args, message):
    run = dpcalc(*args)
    assert run.code == 2 and run.stdout == ""
    assert run.stderr.count("\n") == 1
    if message is None:
        assert run.stderr.startswith("Error: no conversion zcdp -> tradeoff:")
    else:
        assert run.stderr == f"Error: {message}\n"


def test_plot_without_matplotlib_says_how_to_install(dpcalc, monkeypatch, tmp_path):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    run = dpcalc(*GDP, "--plot", str(tmp_path / "x.png"))
    assert (run.code, run.stderr) == (2, "Error: --plot needs matplotlib, which is not installed: pip install matplotlib\n")
    assert not (tmp_path / "x.png").exists()


@pytest.mark.slow
def test_matplotlib_stays_lazy():
    """convert without --plot (with --chart too) never imports matplotlib: a fresh process is checked."""
    calls = [["convert", "--from", "gdp", "--mu", "1", "--to", "tradeoff"],
             ["convert", "--from", "dp", "--eps", "1", "--to", "tradeoff", "--chart"]]
    assert loaded_by_calls(calls, ("matplotlib", "numpy")) == ([0, 0], [])
