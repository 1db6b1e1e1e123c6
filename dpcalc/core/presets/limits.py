"""The size limit of the presets' grids (a leaf: the preset modules import it)."""

from __future__ import annotations

# The most points of a preset's grid (one step's PMF, or an FFT): a grid this large takes about a
# second and ~1 GB; a run that needs more is refused, with its size (the library would take as
# long, or run out of memory: dp_accounting's PLD at p 0.5, sigma 0.3, T 1e6 asked for more than
# 24 GiB).
MAX_POINTS = 1 << 25


def check_grid_size(grid: str, points: int) -> None:
    """ValueError naming `grid` ("the PRV grid") when it would hold more than MAX_POINTS points."""
    if points > MAX_POINTS:
        raise ValueError(f"{grid} for this run would hold {points} points, more than {MAX_POINTS}")
