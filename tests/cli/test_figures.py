"""--plot and --chart: valid image files of sensible size, clear errors, text charts."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

DESIGN_CARD = ("gdp", "--p", "0.004", "--sigma", "1.1", "--T", "10000")

needs_matplotlib = pytest.mark.skipif(
    importlib.util.find_spec("matplotlib") is None, reason="matplotlib (the plot extra) is not installed"
)


@pytest.mark.slow
@needs_matplotlib
def test_gdp_plot_png(dpcalc, tmp_path):
    path = tmp_path / "gdp.png"
    run = dpcalc(*DESIGN_CARD, "--plot", str(path))
    assert run.code == 0
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert 600 <= width <= 3000 and 300 <= height <= 2000
    assert f"Wrote {path}" in run.stderr


@pytest.mark.slow
@needs_matplotlib
def test_gdp_plot_svg_in_json_mode(dpcalc, tmp_path):
    path = tmp_path / "gdp.svg"
    run = dpcalc(*DESIGN_CARD, "--plot", str(path), "--json")
    assert run.code == 0
    run.json()  # stdout stays one strict JSON object
    text = path.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text and len(text) > 10_000


@pytest.mark.slow
def test_plot_writes_pdf(dpcalc, tmp_path):
    path = tmp_path / "gdp.pdf"
    run = dpcalc(*DESIGN_CARD, "--plot", str(path), "--json")
    assert run.code == 0
    run.json()
    assert path.read_bytes().startswith(b"%PDF-")  # a PDF document, for a paper


@pytest.mark.parametrize(
    "target, message",
    [
        ("out.txt", "--plot must name a .png, .svg or .pdf file, got out.txt"),
        ("/no/such/folder/out.png", "--plot: folder /no/such/folder does not exist, got /no/such/folder/out.png"),
    ],
)
def test_plot_path_errors(dpcalc, target, message):
    run = dpcalc(*DESIGN_CARD, "--plot", target)
    assert (run.code, run.stderr) == (2, f"Error: {message}\n")


def test_plot_without_matplotlib_says_how_to_install(dpcalc, monkeypatch, tmp_path):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    run = dpcalc(*DESIGN_CARD, "--plot", str(tmp_path / "x.png"))
    assert run.code == 2
    assert run.stderr == "Error: --plot needs matplotlib, which is not installed: pip install matplotlib\n"


@pytest.mark.slow
def test_chart_draws_both_curves(dpcalc):
    run = dpcalc(*DESIGN_CARD, "--chart")
    assert run.code == 0
    assert "Trade-off curve, mu = 0.453464" in run.stdout and "Privacy profile" in run.stdout
    assert "●" in run.stdout and "└" in run.stdout


@pytest.mark.slow
def test_chart_goes_to_stderr_in_json_mode(dpcalc):
    run = dpcalc(*DESIGN_CARD, "--chart", "--json")
    run.json()
    assert "Privacy profile" in run.stderr


def test_plot_to_a_folder_is_refused_before_the_work(dpcalc, tmp_path):
    folder = tmp_path / "figure.png"
    folder.mkdir()
    run = dpcalc(*DESIGN_CARD, "--plot", str(folder), "--json")
    assert run.code == 2 and run.json()["error"]["message"] == run.stderr[len("Error: "):-1]
    assert run.stderr == f"Error: --plot must name a file, not a folder, got {folder}\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write to a read-only folder")
def test_plot_into_a_read_only_folder_is_refused_before_the_work(dpcalc, tmp_path):
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    run = dpcalc(*DESIGN_CARD, "--plot", str(folder / "x.png"), "--json")
    assert (run.code, run.stdout) == (2, "")
    assert run.stderr == (f"Error: --plot must name a file dpcalc may write: the folder {folder} is read-only, "
                          f"got {folder / 'x.png'}\n")


@pytest.mark.slow
@needs_matplotlib
@pytest.mark.parametrize("max_eps", [None, pytest.param("0.1", marks=pytest.mark.slow)], ids=["within", "over-budget"])
def test_plot_that_cannot_be_written_exits_74_after_the_json(tmp_path, max_eps):
    """A plot file on a full device (a link to /dev/full): the JSON is printed, then one line
    and 74, also when the result is over budget (never 70, never the budget's 1)."""
    target = tmp_path / "figure.png"
    target.symlink_to("/dev/full")
    gate = ["--max-eps", max_eps] if max_eps else []
    run = subprocess.run([sys.executable, "-m", "dpcalc", "gdp", "--mu", "1", "--json", "--plot", str(target), *gate],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 74
    assert json.loads(run.stdout)["command"] == "gdp"
    assert run.stderr.endswith(f"Error: cannot write the --plot file {target}: No space left on device\n")
    assert "Traceback" not in run.stderr
