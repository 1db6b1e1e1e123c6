"""The figures of `dpcalc gdp` (--plot, --chart): imported only when one is drawn."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from dpcalc.core.text import format_number

if TYPE_CHECKING:
    from dpcalc.cli.figures import Panel, TightCurves
    from dpcalc.core.phases import Phase


def gdp_panels(mu: float, delta: float, tight_run: Sequence[Phase] | None = None,
               approximate: bool = False, caption: str = "",
               targets: tuple[float | None, float | None] = (None, None)) -> list[Panel]:
    """The trade-off curve of mu-GDP beside the no-privacy diagonal, and its privacy profile.

    `approximate`: mu is the central-limit mu of a training run (so labelled in the legend).
    `caption` names the run; `targets` (the given delta, the given epsilon) are marked on the
    profile.

    With `tight_run` (the run's phases, when its tight epsilon was computed) both panels also
    show the certified curves of the PLD accountant (dpcalc.cli.figures.tight_curves): the
    certified privacy profile and the trade-off curve it implies, which the central-limit
    mu-GDP curve may cross (at finite T it is an approximation, not a bound).
    """
    from dpcalc.cli.figures import Series, positive_points, profile_panel, target_guides, tradeoff_panel
    from dpcalc.core import gdp as core

    curves = _tight_curves(tight_run, delta) if tight_run is not None else None
    alphas = [i / 200 for i in range(201)]
    label = f"{format_number(mu)}-GDP" + (" (central-limit mu)" if approximate else "")
    tight_series = [Series("tight (PLD, certified)", curves.alphas, curves.betas)] if curves is not None else []
    tradeoff = tradeoff_panel(f"Trade-off curve, mu = {format_number(mu)}", [
        Series(label, alphas, [core.tradeoff(a, mu) for a in alphas], accountant="gdp"),
        *tight_series,
        Series("no privacy lost (1 - alpha)", alphas, [1.0 - a for a in alphas], dashed=True, accountant="none"),
    ], caption=caption)
    if not math.isfinite(mu) or mu == 0.0:
        return [tradeoff]
    top = core.epsilon_for_delta(min(delta, 1e-12), mu)
    epsilons = [top * i / 100 for i in range(101)]
    profile_series = [Series(label, epsilons, [core.delta_for_epsilon(e, mu) for e in epsilons], accountant="gdp")]
    if curves is not None:
        profile_series.append(Series("tight delta (PLD, certified upper bound)",
                                     *positive_points(curves.epsilons, curves.delta_upper)))
    profile = profile_panel(profile_series, caption=caption, guides=target_guides(*targets))
    return [tradeoff, profile]


def _tight_curves(phases: Sequence[Phase], delta: float) -> TightCurves | None:
    """The certified curves of the run for the figure, or None when the accountant cannot draw them
    (the tight figure is an addition: its absence must not fail the command)."""
    import warnings as python_warnings

    from dpcalc.cli.figures import SMALLEST_DELTA_DRAWN, tight_curves

    try:
        with python_warnings.catch_warnings():
            python_warnings.simplefilter("ignore", RuntimeWarning)
            return tight_curves(phases, smallest_delta=min(delta, SMALLEST_DELTA_DRAWN))
    except (ArithmeticError, ValueError):
        return None
