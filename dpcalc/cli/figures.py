"""Pictures of a guarantee: `--plot FILE` (matplotlib, PNG, SVG or PDF) and `--chart` (Unicode text).

A command describes what to draw as plain `Panel`s (curves named by the accountant that drew
them, the run as a caption, targets as guide lines); this module draws them, in one colour and
line style per accountant across every figure (ACCOUNTANT_STYLES). matplotlib is an
optional extra (`pip install '.[plot]'` from a checkout; the distribution is dpcalc-cli), imported only when a file is written; the text
chart needs nothing beyond the standard library.
"""

from __future__ import annotations

import importlib.util
import math
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dpcalc.cli.errors import InputError, OutputError
from dpcalc.core.text import format_number, wrap_words

if TYPE_CHECKING:
    from pathlib import Path

PLOT_SUFFIXES = (".png", ".svg", ".pdf")
INSTALL_HINT = "pip install matplotlib"



# One colour per accountant, the same in every figure (colour-blind safe, Okabe and Ito 2008),
# with its own line style, so that curves which coincide stay apart where they overlap (a
# dashed curve drawn over a solid one shows both colours) and in black-and-white print.
# "none" is the no-privacy reference (the diagonal), "target" a target delta or epsilon.
ACCOUNTANT_STYLES: dict[str, tuple[str, object]] = {
    "pld": ("#0072B2", "-"),  # tight, certified (PLD)
    "gdp": ("#D55E00", "--"),  # mu-GDP, exact or central-limit
    "rdp": ("#009E73", "-."),  # Renyi DP
    "dp": ("#CC79A7", "-"),  # an (epsilon, delta)-DP guarantee (convert)
    "none": ("#7f7f7f", ":"),  # no privacy lost
    "target": ("#000000", (0, (1, 2))),  # the target delta or epsilon
}

# The further series of one accountant in a panel (a sweep's combinations): the same colour,
# each with its own dash pattern (after the accountant's own) and marker shape.
_DASHES: tuple[object, ...] = ((0, (1.5, 1.5)), (0, (6, 2, 1.5, 2)), (0, (10, 3)), (0, (3, 1.5, 1.5, 1.5, 1.5, 1.5)),
                               (0, (6, 2)))
_MARKER_SHAPES = "osD^vP*X"


@dataclass
class Series:
    """One curve: points (x, y) and how to draw it.

    `accountant` picks the colour and line style (ACCOUNTANT_STYLES); `dashed` marks a secondary
    curve (a lower end, a weaker implied guarantee), drawn thinner and dashed; `markers` marks
    each point (a sweep's rows); without `line` only the markers are drawn."""

    label: str
    x: list[float]
    y: list[float]
    dashed: bool = False
    accountant: str = "pld"
    markers: bool = False
    line: bool = True


@dataclass
class Guide:
    """A target marked on a panel: a horizontal line at `y`, or a vertical one at `x`."""

    label: str
    x: float | None = None
    y: float | None = None


@dataclass
class Panel:
    """One set of axes. `caption` names the run (p, sigma, T, delta) under the figure's title."""

    title: str
    xlabel: str
    ylabel: str
    series: list[Series] = field(default_factory=list)
    xlog: bool = False
    ylog: bool = False
    square: bool = False  # equal axes on [0, 1] x [0, 1] (trade-off curves)
    caption: str = ""
    guides: list[Guide] = field(default_factory=list)
    legend: str = "best"  # matplotlib's legend location; a fixed corner saves the search


def series_style(panel: Panel) -> list[dict[str, object]]:
    """matplotlib's line properties for each series of the panel, in order.

    Colour and base line style come from the series' accountant; a second, third... series of
    the same accountant keeps the colour and takes the next dash pattern and marker shape.
    Secondary curves are thinner. Dashed and dotted curves are drawn above the solid ones, so
    where a dashed curve coincides with a solid one both colours show."""
    seen: dict[str, int] = {}
    styles: list[dict[str, object]] = []
    for series in panel.series:
        colour, base = ACCOUNTANT_STYLES[series.accountant]
        rank = seen.get(series.accountant, 0)
        seen[series.accountant] = rank + 1
        linestyle: object = base if rank == 0 else _DASHES[(rank - 1) % len(_DASHES)]
        if series.dashed:
            linestyle = (0, (4, 2)) if base == "-" else base
        style: dict[str, object] = {
            "color": colour, "linestyle": linestyle, "linewidth": 1.0 if series.dashed else 1.8,
            "zorder": 2.0 + len(styles) * 0.01 + (0.5 if series.dashed or base != "-" else 0.0),
        }
        if series.markers:
            style.update(marker=_MARKER_SHAPES[rank % len(_MARKER_SHAPES)], markersize=5.0)
        if not series.line:
            style.update(linestyle="none", zorder=3.0)
        styles.append(style)
    return styles


def run_caption(pairs: list[tuple[str, object]]) -> str:
    """'p = 0.004, sigma = 1.1, T = 10000, delta = 1e-05' from (name, value) pairs: values of
    None are left out, a pair with no name gives its value (already text) alone."""
    parts = []
    for name, value in pairs:
        if value is None or value == "":
            continue
        text = value if isinstance(value, str) else format_number(value)
        parts.append(f"{name} = {text}" if name else text)
    return ", ".join(parts)


def tradeoff_panel(title: str, series: list[Series], caption: str = "") -> Panel:
    """Trade-off curves: type II against type I error on the unit square (the curves bow
    towards the origin, leaving the upper right corner for the legend)."""
    return Panel(title=title, xlabel="type I error alpha", ylabel="type II error beta", series=series, square=True,
                 caption=caption, legend="upper right")


def profile_panel(series: list[Series], caption: str = "", guides: list[Guide] | None = None) -> Panel:
    """Privacy profiles delta(epsilon), delta on a log scale (falling: the legend goes upper right)."""
    return Panel(title="Privacy profile", xlabel="epsilon", ylabel="delta(epsilon)", series=series, ylog=True,
                 caption=caption, guides=guides or [], legend="upper right")


def target_guides(delta: float | None, epsilon: float | None) -> list[Guide]:
    """The given delta (a horizontal line) and the given epsilon (a vertical one) of a profile."""
    guides = []
    if delta is not None:
        guides.append(Guide(f"target delta = {format_number(delta)}", y=delta))
    if epsilon is not None:
        guides.append(Guide(f"target epsilon = {format_number(epsilon)}", x=epsilon))
    return guides


def check_plot_path(path: str | None) -> Path | None:
    """Validate --plot before any work is done: suffix, folder, and matplotlib installed."""
    if path is None:
        return None
    from pathlib import Path  # only with --plot: start-up time

    target = Path(path)
    if target.suffix.lower() not in PLOT_SUFFIXES:
        raise InputError(f"--plot must name a .png, .svg or .pdf file, got {path}", option="--plot",
                         allowed="a .png, .svg or .pdf file", got=path)
    if not target.parent.exists() and str(target.parent) not in ("", "."):
        raise InputError(f"--plot: folder {target.parent} does not exist, got {path}", option="--plot", got=path)
    if target.is_dir():
        raise InputError(f"--plot must name a file, not a folder, got {path}", option="--plot",
                         allowed="a file, not a folder", got=path)
    if not (os.access(target, os.W_OK) if target.exists() else os.access(target.parent, os.W_OK | os.X_OK)):
        where = f"file {path}" if target.exists() else f"folder {target.parent}"
        raise InputError(f"--plot must name a file dpcalc may write: the {where} is read-only, got {path}",
                         option="--plot", allowed="a file dpcalc may write", got=path)
    if importlib.util.find_spec("matplotlib") is None:
        raise InputError(f"--plot needs matplotlib, which is not installed: {INSTALL_HINT}", option="--plot")
    return target


def write_plot(panels: list[Panel], path: Path) -> None:
    """Draw the panels side by side and save them; the format follows the file's suffix.

    The figure is built without pyplot and laid out with fixed margins (no tight_layout, no
    legend search unless a panel asks for it): start-up and drawing are most of --plot's cost.
    The run (`Panel.caption`) heads the figure; fonts are embedded as TrueType in PDF (journals
    refuse Type 3) and the files carry no date, so the same inputs give the same file."""
    import matplotlib
    import matplotlib.artist

    # Each Artist subclass that matplotlib defines on import renders a property table into the
    # docstring of its set() (matplotlib.artist.kwdoc): about a third of the import, for help
    # text this process never shows. Only this process, which exits after the figure, sees the
    # short docstrings.
    matplotlib.artist.kwdoc = lambda artist: ""
    from matplotlib.figure import Figure

    count = len(panels)
    captions = list(dict.fromkeys(panel.caption for panel in panels if panel.caption))
    # titley fixed: matplotlib would otherwise measure every tick label to place the titles
    with matplotlib.rc_context({"pdf.fonttype": 42, "svg.hashsalt": "dpcalc", "axes.titley": 1.0}):
        figure = Figure(figsize=(5.2 * count, 4.9 if captions else 4.6))
        axes = figure.subplots(1, count, squeeze=False)[0]
        top = 0.86 if captions else 0.92
        figure.subplots_adjust(left=0.11 / count + 0.02, right=0.98, bottom=0.11, top=top, wspace=0.3)
        if captions:
            figure.suptitle("; ".join(captions), fontsize=10, y=0.985)
        for number, (ax, panel) in enumerate(zip(axes, panels)):
            _draw_panel(ax, panel, number)
        suffix = path.suffix.lower()
        metadata = {".svg": {"Date": None}, ".pdf": {"CreationDate": None}}.get(suffix)
        try:
            figure.savefig(path, dpi=120, metadata=metadata)
        except OSError as error:  # checked writable before the work: a full disk, a device, a race
            raise OutputError(f"the --plot file {path}", error) from None


def _draw_panel(ax, panel: Panel, number: int) -> None:
    """One panel on `ax`. Each curve and target is its own SVG group, named
    panel{number}-series{index}-{accountant} and panel{number}-target{index}."""
    for index, (series, style) in enumerate(zip(panel.series, series_style(panel))):
        (line,) = ax.plot(series.x, series.y, label=series.label, **style)
        line.set_gid(f"panel{number}-series{index}-{series.accountant}")
    colour, linestyle = ACCOUNTANT_STYLES["target"]
    for index, guide in enumerate(panel.guides):
        common = {"color": colour, "linestyle": linestyle, "linewidth": 1.0, "zorder": 4.0, "label": guide.label}
        if guide.y is not None:
            artist = ax.axhline(guide.y, **common)
        else:
            artist = ax.axvline(guide.x, **common)
        artist.set_gid(f"panel{number}-target{index}")
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
    ax.legend(fontsize=8, loc=panel.legend)


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
    title = f"{panel.title} ({panel.caption})" if panel.caption else panel.title
    if not every:
        return f"{wrap_words(title, CHART_COLUMNS, '')}\n(nothing to draw)\n"
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
    lines = [wrap_words(title, CHART_COLUMNS, ""), wrap_words(panel.ylabel, CHART_COLUMNS, "")]
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

# Accuracy of the drawn profile: the certified interval's relative width. The curves drawn are
# its upper ends, sound at any accuracy; 2% of delta is a hundredth of a decade on the log
# axis, below the figure's resolution, and costs a third of the default 0.1%.
PROFILE_ACCURACY = 2e-2


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
    profile = pld.tight_profile(phases, grid, accuracy=PROFILE_ACCURACY)
    alphas = [i / (TRADEOFF_POINTS - 1) for i in range(TRADEOFF_POINTS)]
    betas = list(tradeoff_from_profile(profile.epsilons, profile.delta_upper, alphas))
    # the accountant's warnings name the accuracy it was asked for: here the figure's, not the command's
    warnings = [item.replace("the requested accuracy", "the figure's accuracy") for item in profile.warnings]
    return TightCurves(list(profile.epsilons), list(profile.delta_upper), alphas, betas, warnings)


def positive_points(x: list[float], y: list[float]) -> tuple[list[float], list[float]]:
    """The points with a finite, positive y (what a log axis can show)."""
    kept = [(a, b) for a, b in zip(x, y) if math.isfinite(a) and math.isfinite(b) and b > 0.0]
    return [a for a, _ in kept], [b for _, b in kept]
