"""Pictures of a guarantee: `--plot FILE` (matplotlib, PNG, SVG or PDF) and `--chart` (Unicode text).

A command describes what to draw as plain `Panel`s; this module draws them. matplotlib is an
optional extra (`pip install '.[plot]'` from a checkout; the distribution is dpcalc-cli), imported only when a file is written; the text
chart needs nothing beyond the standard library.
"""

from __future__ import annotations

import importlib.util
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

from dpcalc.cli.declare import Option
from dpcalc.cli.options import InputError
from dpcalc.cli.output import wrap_words

PLOT_SUFFIXES = (".png", ".svg", ".pdf")
INSTALL_HINT = "pip install matplotlib"

PlotFile = Annotated[
    str | None,
    Option("--plot", metavar="FILE", help="Write a figure to FILE (.png, .svg or .pdf; needs matplotlib)."),
]
Chart = Annotated[
    bool,
    Option("--chart", help="Draw the curve in the terminal with Unicode characters."),
]


@dataclass
class Series:
    """One curve: points (x, y) and how to draw it."""

    label: str
    x: list[float]
    y: list[float]
    dashed: bool = False


@dataclass
class Panel:
    """One set of axes."""

    title: str
    xlabel: str
    ylabel: str
    series: list[Series] = field(default_factory=list)
    xlog: bool = False
    ylog: bool = False
    square: bool = False  # equal axes on [0, 1] x [0, 1] (trade-off curves)


def tradeoff_panel(title: str, series: list[Series]) -> Panel:
    """Trade-off curves: type II against type I error on the unit square."""
    return Panel(title=title, xlabel="type I error alpha", ylabel="type II error beta", series=series, square=True)


def profile_panel(series: list[Series]) -> Panel:
    """Privacy profiles delta(epsilon), delta on a log scale."""
    return Panel(title="Privacy profile", xlabel="epsilon", ylabel="delta(epsilon)", series=series, ylog=True)


def check_plot_path(path: str | None) -> Path | None:
    """Validate --plot before any work is done: suffix, folder, and matplotlib installed."""
    if path is None:
        return None
    target = Path(path)
    if target.suffix.lower() not in PLOT_SUFFIXES:
        raise InputError(f"--plot must name a .png, .svg or .pdf file, got {path}")
    if not target.parent.exists() and str(target.parent) not in ("", "."):
        raise InputError(f"--plot: folder {target.parent} does not exist, got {path}")
    if importlib.util.find_spec("matplotlib") is None:
        raise InputError(f"--plot needs matplotlib, which is not installed: {INSTALL_HINT}")
    return target


def write_plot(panels: list[Panel], path: Path) -> None:
    """Draw the panels side by side and save them; the format follows the file's suffix."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.6), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        for series in panel.series:
            ax.plot(series.x, series.y, linestyle="--" if series.dashed else "-", label=series.label,
                    linewidth=1.0 if series.dashed else 1.8)
        ax.set_title(panel.title, fontsize=10)
        ax.set_xlabel(panel.xlabel)
        ax.set_ylabel(panel.ylabel)
        if panel.xlog:
            ax.set_xscale("log")
        if panel.ylog:
            ax.set_yscale("log")
        if panel.square:
            ax.set_xlim(0.0, 1.0)
            ax.set_ylim(0.0, 1.0)
            ax.set_aspect("equal")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


# Marker characters for the series of a text chart, in order.
_MARKERS = "●·+×o"
# A text chart, its title and its legend fit in this many columns (a plain terminal's width).
CHART_COLUMNS = 80


def render_chart(panel: Panel, width: int = 60, height: int = 18) -> str:
    """A text chart of the panel: one marker character per series, axes with end labels.

    Every line fits CHART_COLUMNS: the plotting area gives way to wide axis labels, and the
    title, the axis names and the legend wrap (legend entries whole where they fit on a line).
    """
    transform_x = _log10 if panel.xlog else float
    transform_y = _log10 if panel.ylog else float
    points = [
        [(transform_x(x), transform_y(y)) for x, y in zip(series.x, series.y)
         if _plottable(x, panel.xlog) and _plottable(y, panel.ylog)]
        for series in panel.series
    ]
    every = [point for curve in points for point in curve]
    if not every:
        return f"{wrap_words(panel.title, CHART_COLUMNS, '')}\n(nothing to draw)\n"
    if panel.square:
        x_low, x_high, y_low, y_high = 0.0, 1.0, 0.0, 1.0
    else:
        x_low, x_high = min(p[0] for p in every), max(p[0] for p in every)
        y_low, y_high = min(p[1] for p in every), max(p[1] for p in every)
    x_span = (x_high - x_low) or 1.0
    y_span = (y_high - y_low) or 1.0
    top = _axis_label(y_high, panel.ylog)
    bottom = _axis_label(y_low, panel.ylog)
    margin = max(len(top), len(bottom))
    width = max(8, min(width, CHART_COLUMNS - margin - 2))
    grid = [[" "] * width for _ in range(height)]

    def cell(x: float, y: float) -> tuple[int, int]:
        column = round((x - x_low) / x_span * (width - 1))
        row = height - 1 - round((y - y_low) / y_span * (height - 1))
        return min(max(row, 0), height - 1), min(max(column, 0), width - 1)

    # Draw later series first so that the first (the main curve) stays on top.
    for index in reversed(range(len(points))):
        marker = _MARKERS[index % len(_MARKERS)]
        curve = sorted(points[index])
        previous = None
        for x, y in curve:
            row, column = cell(x, y)
            grid[row][column] = marker
            if previous is not None:  # fill the gap so that steep curves stay connected
                (last_row, last_column) = previous
                steps = max(abs(row - last_row), abs(column - last_column))
                for step in range(1, steps):
                    r = last_row + round((row - last_row) * step / steps)
                    c = last_column + round((column - last_column) * step / steps)
                    grid[r][c] = marker
            previous = (row, column)
    lines = [wrap_words(panel.title, CHART_COLUMNS, ""), wrap_words(panel.ylabel, CHART_COLUMNS, "")]
    for row_index, cells in enumerate(grid):
        label = top if row_index == 0 else bottom if row_index == height - 1 else ""
        lines.append(f"{label:>{margin}} │{''.join(cells)}")
    lines.append(f"{'':>{margin}} └{'─' * width}")
    left, right = _axis_label(x_low, panel.xlog), _axis_label(x_high, panel.xlog)
    lines.append(f"{'':>{margin}}  {left}{right:>{width - len(left)}}")
    indent = " " * (margin + 2)
    for line in wrap_words(panel.xlabel, width, "").split("\n"):
        lines.append(f"{indent}{line:^{width}}")
    entries = [f"{_MARKERS[i % len(_MARKERS)]} {series.label}" for i, series in enumerate(panel.series)]
    lines.extend(indent + line for line in _legend_lines(entries, CHART_COLUMNS - len(indent)))
    return "\n".join(lines) + "\n"


def _legend_lines(entries: list[str], room: int) -> list[str]:
    """The legend's entries three spaces apart, as many to a line as fit in `room` columns; an
    entry wider than a line wraps at its spaces, its later lines under its label."""
    lines: list[str] = []
    current = ""
    for entry in entries:
        if current and len(current) + 3 + len(entry) <= room:
            current += "   " + entry
            continue
        if current:
            lines.append(current)
        if len(entry) <= room:
            current = entry
        else:
            lines.extend(wrap_words(entry, room, "  ").split("\n"))
            current = ""
    if current:
        lines.append(current)
    return lines


def _plottable(value: float, log: bool) -> bool:
    return math.isfinite(value) and (value > 0.0 if log else True)


def _log10(value: float) -> float:
    return math.log10(value)


def _axis_label(value: float, log: bool) -> str:
    if log:
        return f"1e{value:.0f}" if abs(value - round(value)) < 1e-9 else f"{10 ** value:.2g}"
    return f"{value:.3g}"


# ---------------------------------------------------------------------------------------------
# The certified (tight) curves of a run, shared by `pld` and `gdp`

# The privacy profile is drawn from epsilon = 0 to the epsilon where the certified delta falls
# to this value: below it a log axis shows nothing a reader acts on, and the trade-off curve
# it implies is then exact to within this much near alpha = 0.
SMALLEST_DELTA_DRAWN = 1e-12

# Grid points of the profile and of the trade-off curve. The sup over a grid of epsilon lines
# (dpcalc.core.tradeoff) lies below the true curve by O(step^2): with 201 points the gap is
# about 1e-4, invisible at the figure's resolution.
PROFILE_POINTS = 201
TRADEOFF_POINTS = 201

# Accuracy of the one accountant call that finds the top of the epsilon axis: it only places
# the axis, so a coarse (cheaper) certified interval serves.
_AXIS_ACCURACY = 1e-2


@dataclass
class TightCurves:
    """The certified privacy profile of a run and the trade-off curve it implies."""

    epsilons: list[float]
    delta_upper: list[float]
    alphas: list[float]
    betas: list[float]
    warnings: list[str] = field(default_factory=list)


def tight_curves(phases, *, smallest_delta: float = SMALLEST_DELTA_DRAWN, extra_epsilons=()) -> TightCurves:
    """delta_upper(eps) on [0, eps(smallest_delta)] from the PLD accountant, and its trade-off curve.

    The trade-off curve is dpcalc.core.tradeoff.tradeoff_from_profile of the certified upper
    bounds (Dong, Roth, Su 2022, Prop. 2.12): a valid lower bound on the run's true curve.
    `extra_epsilons` (e.g. a given --eps) are added to the grid.
    """
    from dpcalc.core import pld
    from dpcalc.core.tradeoff import tradeoff_from_profile

    top = pld.tight_epsilon(phases, smallest_delta, accuracy=_AXIS_ACCURACY).epsilon_upper
    if not (math.isfinite(top) and top > 0.0):
        top = max([1.0, *(e for e in extra_epsilons if math.isfinite(e))])
    grid = sorted({top * i / (PROFILE_POINTS - 1) for i in range(PROFILE_POINTS)} | set(extra_epsilons))
    profile = pld.tight_profile(phases, grid)
    alphas = [i / (TRADEOFF_POINTS - 1) for i in range(TRADEOFF_POINTS)]
    betas = list(tradeoff_from_profile(profile.epsilons, profile.delta_upper, alphas))
    return TightCurves(list(profile.epsilons), list(profile.delta_upper), alphas, betas, list(profile.warnings))


def positive_points(x: list[float], y: list[float]) -> tuple[list[float], list[float]]:
    """The points with a finite, positive y (what a log axis can show)."""
    kept = [(a, b) for a, b in zip(x, y) if math.isfinite(a) and math.isfinite(b) and b > 0.0]
    return [a for a, _ in kept], [b for _, b in kept]
