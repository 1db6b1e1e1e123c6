"""pld --plot/--chart (certified trade-off curve and privacy profile; sweeps), gdp's tight curve."""

from __future__ import annotations

import importlib.util
import math
import subprocess
import sys

import pytest

SMALL = ("pld", "--p", "0.1", "--sigma", "2", "--T", "10")
GDP = ("gdp", "--p", "0.1", "--sigma", "2", "--T", "10")

needs_matplotlib = pytest.mark.skipif(
    importlib.util.find_spec("matplotlib") is None, reason="matplotlib (the plot extra) is not installed"
)


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


@pytest.mark.slow
@needs_matplotlib
def test_pld_plot_png(dpcalc, tmp_path):
    path = tmp_path / "pld.png"
    run = dpcalc(*SMALL, "--plot", str(path))
    assert run.code == 0 and f"Wrote {path}" in run.stderr
    width, height = _png_size(path.read_bytes())
    assert 1000 <= width <= 3000 and 400 <= height <= 2000  # two panels side by side
    assert path.stat().st_size > 20_000
    assert "Tight accounting (PLD): p = 0.1, sigma = 2, T = 10" in run.stdout  # the table is unchanged


@pytest.mark.slow
@needs_matplotlib
def test_pld_plot_svg_in_json_mode_with_eps(dpcalc, tmp_path):
    path = tmp_path / "pld.svg"
    run = dpcalc(*SMALL, "--eps", "0.5", "--plot", str(path), "--json")
    assert run.code == 0
    document = run.json()  # stdout stays one strict JSON object
    assert "rows" not in document["result"]
    text = path.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text and len(text) > 20_000
    for label in ("tight (PLD, certified)", "central-limit approximation", "no privacy lost", "Privacy profile"):
        assert label in text


def test_pld_chart_draws_both_panels(dpcalc):
    run = dpcalc(*SMALL, "--chart")
    assert run.code == 0
    assert "Trade-off curve (tight, certified)" in run.stdout and "Privacy profile" in run.stdout
    assert "tight (PLD, certified)" in run.stdout and "GDP, central-limit approximation" in run.stdout
    assert "●" in run.stdout and "└" in run.stdout
    in_json = dpcalc(*SMALL, "--chart", "--json")
    in_json.json()
    assert "Privacy profile" in in_json.stderr


@pytest.mark.slow
def test_pld_figure_gdp_curve_only_for_gaussian_runs(dpcalc):
    laplace = dpcalc("pld", "--mechanism", "laplace", "--scale", "10", "--T", "5", "--chart")
    assert laplace.code == 0 and "tight (PLD, certified)" in laplace.stdout and "GDP" not in laplace.stdout
    # unsampled Gaussian phases are exactly sqrt(T)/sigma-GDP: sqrt(4)/2 = 1
    exact = dpcalc("pld", "--p", "1", "--sigma", "2", "--T", "4", "--chart")
    assert "1-GDP (exact)" in exact.stdout and "central-limit" not in exact.stdout


def test_pld_panels_are_certified_curves():
    from dpcalc.cli.pld_figures import pld_panels
    from dpcalc.core import gdp
    from dpcalc.core.phases import Phase
    from dpcalc.core.pld import tight_epsilon

    phases = [Phase("gaussian", 0.1, 2.0, None, 10)]
    (tradeoff, profile), _ = pld_panels(phases, 1e-5, None)
    tight, clt, diagonal = tradeoff.series
    assert tradeoff.square and profile.ylog
    assert all(0.0 <= beta <= 1.0 - alpha + 1e-12 for alpha, beta in zip(tight.x, tight.y))
    assert all(a >= b for a, b in zip(tight.y, tight.y[1:]))  # non-increasing
    assert diagonal.dashed and clt.y == [gdp.tradeoff(a, gdp.clt_mu(0.1, 2.0, 10)) for a in clt.x]
    # the profile is the accountant's certified upper bound: at the certified epsilon for
    # delta = 1e-5 it is at most about 1e-5, and it falls with epsilon
    certified = tight_epsilon(phases, 1e-5)
    points = profile.series[0]
    assert points.x[0] == 0.0 and all(a >= b for a, b in zip(points.y, points.y[1:]))
    below = max(index for index, eps in enumerate(points.x) if eps <= certified.epsilon_upper)
    assert points.y[below] >= 1e-5 * (1 - 1e-2)  # left of the certified epsilon: delta not below target
    # the trade-off curve is (eps, delta_upper(eps))-DP at every grid point
    for eps, delta in list(zip(points.x, points.y))[::20]:
        for alpha, beta in zip(tight.x, tight.y):
            assert beta >= max(0.0, 1 - delta - math.exp(eps) * alpha, math.exp(-eps) * (1 - delta - alpha)) - 1e-12


@pytest.mark.slow
def test_pld_sweep_chart_and_plot(dpcalc, tmp_path):
    run = dpcalc("pld", "--p", "0.1", "--sigma", "2", "--T", "10:40:10", "--chart")
    assert run.code == 0 and "certified epsilon against T (PLD)" in run.stdout
    deltas = dpcalc("pld", "--p", "0.1", "--sigma", "2", "--T", "10,20", "--eps", "0.5", "--chart")
    # regression snapshot (dpcalc 7acfb53, 2026-11): the axis' top label, delta 0.003349 at T = 20 to two
    # digits; its certified interval [0.0033484, 0.0033489] is far inside that rounding
    assert "certified delta against T (PLD)" in deltas.stdout and "0.0033" in deltas.stdout
    if importlib.util.find_spec("matplotlib") is None:
        return
    target = tmp_path / "sweep.svg"
    run = dpcalc("pld", "--p", "0.1", "--sigma", "1,2", "--T", "10:40:10", "--plot", str(target))
    assert run.code == 0 and target.exists() and target.stat().st_size > 10_000
    assert "sigma = 1" in target.read_text()  # one series per sigma
    png = tmp_path / "sweep.png"
    assert dpcalc("pld", "--p", "0.1", "--sigma", "2", "--T", "10,20", "--plot", str(png)).code == 0
    width, height = _png_size(png.read_bytes())
    assert 500 <= width <= 2000 and 400 <= height <= 2000


@pytest.mark.parametrize("sweep", [(), ("--T", "10,20")], ids=["single", "sweep"])
@pytest.mark.parametrize(
    "target, message",
    [
        ("out.txt", "--plot must name a .png, .svg or .pdf file, got out.txt"),
        ("/no/such/folder/out.png", "--plot: folder /no/such/folder does not exist, got /no/such/folder/out.png"),
    ],
)
def test_pld_plot_path_errors(dpcalc, sweep, target, message):
    args = ("pld", "--p", "0.1", "--sigma", "2", *(sweep or ("--T", "10")))
    run = dpcalc(*args, "--plot", target)
    assert (run.code, run.stdout, run.stderr) == (2, "", f"Error: {message}\n")


def test_pld_plot_without_matplotlib_says_how_to_install(dpcalc, monkeypatch, tmp_path):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    run = dpcalc(*SMALL, "--plot", str(tmp_path / "x.png"))
    assert (run.code, run.stdout) == (2, "")
    assert run.stderr == "Error: --plot needs matplotlib, which is not installed: pip install matplotlib\n"


@pytest.mark.slow
def test_pld_without_plot_does_not_import_matplotlib():
    code = (
        "import sys; from dpcalc.cli.app import main; "
        "main(['pld', '--p', '0.1', '--sigma', '2', '--T', '10', '--json']); "
        "main(['pld', '--p', '0.1', '--sigma', '2', '--T', '10', '--chart']); "
        "sys.stderr.write(str(sorted(m for m in sys.modules if m.startswith('matplotlib'))))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stderr.endswith("[]")


def test_gdp_chart_shows_the_tight_curve(dpcalc):
    run = dpcalc(*GDP, "--chart")
    assert run.code == 0
    assert "tight (PLD, certified)" in run.stdout and "tight delta (PLD, certified upper bound)" in run.stdout
    assert "0.168531-GDP (central-limit mu)" in run.stdout  # 0.1 sqrt(10 (e^(1/4) - 1))
    skipped = dpcalc(*GDP, "--chart", "--no-tight")
    assert "tight" not in skipped.stdout.split("Trade-off curve, mu")[1]
    given_mu = dpcalc("gdp", "--mu", "0.5", "--chart")
    assert "0.5-GDP" in given_mu.stdout and "tight" not in given_mu.stdout and "central-limit" not in given_mu.stdout


@pytest.mark.slow
@needs_matplotlib
def test_gdp_plot_has_the_tight_curve(dpcalc, tmp_path):
    path = tmp_path / "gdp.svg"
    assert dpcalc(*GDP, "--plot", str(path)).code == 0
    assert "tight (PLD, certified)" in path.read_text()


@pytest.mark.parametrize("sampling, phase_keys", [
    ("poisson", {}),
    pytest.param("uniform", {"sampling": "uniform", "neighbours": "replace-one"}, marks=pytest.mark.slow),  # as gdp's tight_epsilon accounts it
])
def test_gdp_figure_draws_the_run_its_tight_epsilon_accounts(sampling, phase_keys):
    """gdp's certified curves are those of the run behind its tight_epsilon: for fixed-size batches
    the uniform, replace-one run (a Poisson curve would not bound it), equal to pld's figure of it."""
    from dpcalc.cli import gdp as cli
    from dpcalc.cli.gdp_figures import gdp_panels
    from dpcalc.cli.pld_figures import pld_panels
    from dpcalc.core import gdp
    from dpcalc.core.phases import Phase

    result = gdp.noisy_sgd_gdp(0.1, 2.0, 10, sampling=sampling, delta=1e-5)
    tradeoff, profile = gdp_panels(result.mu, 1e-5, tight_run=cli._tight_run(result), approximate=True)
    (pld_tradeoff, pld_profile), _ = pld_panels([Phase("gaussian", 0.1, 2.0, None, 10, **phase_keys)], 1e-5, None)
    assert tradeoff.series[1].y == pld_tradeoff.series[0].y
    assert (profile.series[1].x, profile.series[1].y) == (pld_profile.series[0].x, pld_profile.series[0].y)
