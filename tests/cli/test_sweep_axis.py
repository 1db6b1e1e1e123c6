"""--x OPTION: the swept option on a sweep figure's x axis, one line per value of the others,
named in the legend (gdp, pld, calibrate); refused, one line exit 2, when the option is not swept."""

from __future__ import annotations

import pytest

GDP = ["gdp", "--p", "0.004", "--sigma", "0.8,1.1", "--T", "1000,4000,10000", "--no-tight"]


def test_the_last_swept_option_is_the_default_axis(dpcalc):
    run = dpcalc(*GDP, "--chart")
    assert run.code == 0 and "epsilon against T" in run.stdout
    assert "sigma = 0.8" in run.stdout and "sigma = 1.1" in run.stdout  # the legend: one line per sigma


@pytest.mark.parametrize("spelling", ["sigma", "--sigma", "--noise-multiplier"])
def test_x_puts_the_option_named_on_the_axis(dpcalc, spelling):
    run = dpcalc(*GDP, "--chart", "--x", spelling)
    assert run.code == 0 and "epsilon against sigma" in run.stdout
    for steps in ("T = 1000", "T = 4000", "T = 10000"):  # one line per T, in the legend
        assert steps in run.stdout


def test_x_keeps_the_table_and_json(dpcalc):
    plain = dpcalc(*GDP, "--json").json()
    assert dpcalc(*GDP, "--json", "--chart", "--x", "sigma").json()["result"] == plain["result"]


@pytest.mark.slow
def test_pld_and_calibrate_take_x(dpcalc):
    run = dpcalc("pld", "--p", "0.004,0.01", "--sigma", "1.1", "--T", "100,1000", "--chart", "--x", "p")
    assert run.code == 0 and "T = 100" in run.stdout and "T = 1000" in run.stdout
    run = dpcalc("calibrate", "--target-eps", "1,2,4", "--p", "0.004", "--T", "1000,10000", "--chart",
                 "--x", "--target-eps")
    assert run.code == 0 and "against target epsilon" in run.stdout and "T = 10000" in run.stdout


def test_x_draws_a_legend_in_the_plot(dpcalc, tmp_path):
    pytest.importorskip("matplotlib")
    target = tmp_path / "sweep.svg"
    run = dpcalc(*GDP, "--plot", str(target), "--x", "sigma")
    assert run.code == 0 and "T = 4000" in target.read_text()


@pytest.mark.parametrize(("args", "message"), [
    ([*GDP, "--chart", "--x", "--p"], "Error: --x must name one of --sigma, --T, got --p\n"),
    ([*GDP, "--chart", "--x", "--bogus"], "Error: --x must name one of --sigma, --T, got --bogus\n"),
    (["gdp", "--p", "0.004", "--sigma", "1.1", "--T", "100", "--chart", "--x", "T"],
     "Error: --x must name a swept option: give it a list or range, e.g. --sigma 0.8,1.1, got T\n"),
    ([*GDP, "--x", "sigma"],
     "Error: --x chooses the x axis of a sweep's figure: give --plot FILE or --chart, got --x sigma\n"),
])
def test_x_refused_in_one_line(dpcalc, args, message):
    run = dpcalc(*args)
    assert (run.code, run.stdout, run.stderr) == (2, "", message)
