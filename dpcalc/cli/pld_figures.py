"""The figures of `dpcalc pld` (--plot, --chart): imported only when one is drawn."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dpcalc.cli.phases import phases_caption
from dpcalc.core.text import format_number

if TYPE_CHECKING:
    from dpcalc.cli.figures import Panel
    from dpcalc.core.phases import Phase


def pld_panels(phases: Sequence[Phase], target_delta: float | None,
               target_epsilon: float | None) -> tuple[list[Panel], list[str]]:
    """(panels, warnings): the certified trade-off curve and privacy profile of the run.

    Both come from the accountant's certified upper bounds on delta(eps) over a grid of eps
    (dpcalc.core.pld.tight_profile); the trade-off curve is the one they imply (Dong, Roth,
    Su 2022, Prop. 2.12; dpcalc.core.tradeoff), a valid lower bound on the true curve. For
    Gaussian runs the mu-GDP curve is drawn beside it: the central-limit mu (Bu et al. 2020)
    for subsampled phases, labelled as the approximation it is, the exact sqrt(T)/sigma
    for unsampled ones; mu composes as the root of the sum of squares.
    """
    from dpcalc.cli.figures import (
        SMALLEST_DELTA_DRAWN,
        Series,
        positive_points,
        profile_panel,
        run_caption,
        target_guides,
        tight_curves,
        tradeoff_panel,
    )
    from dpcalc.core import gdp
    from dpcalc.core.gdp import gdp_mu

    smallest = SMALLEST_DELTA_DRAWN if target_delta is None else min(target_delta, SMALLEST_DELTA_DRAWN)
    curves = tight_curves(phases, smallest_delta=smallest,
                          extra_epsilons=() if target_epsilon is None else (target_epsilon,))
    mu, approximate = gdp_mu(phases)
    gdp_label = "" if mu is None else f"{format_number(mu)}-GDP" + (
        ", central-limit approximation" if approximate else " (exact)")
    alphas = curves.alphas
    caption = run_caption([("", phases_caption(phases)), ("delta", target_delta), ("epsilon", target_epsilon)])
    series = [Series("tight (PLD, certified)", alphas, curves.betas)]
    if mu is not None:
        series.append(Series(gdp_label, alphas, [gdp.tradeoff(alpha, mu) for alpha in alphas], accountant="gdp"))
    series.append(Series("no privacy lost (1 - alpha)", alphas, [1.0 - alpha for alpha in alphas], dashed=True, accountant="none"))
    tradeoff = tradeoff_panel("Trade-off curve (tight, certified)", series, caption=caption)
    epsilons, deltas = positive_points(curves.epsilons, curves.delta_upper)
    profile_series = [Series("tight delta (PLD, certified upper bound)", epsilons, deltas)]
    if mu is not None:
        x, y = positive_points(curves.epsilons, [gdp.delta_for_epsilon(e, mu) for e in curves.epsilons])
        profile_series.append(Series(gdp_label, x, y, accountant="gdp"))
    profile = profile_panel(profile_series, caption=caption, guides=target_guides(target_delta, target_epsilon))
    return [tradeoff, profile], curves.warnings


def sweep_figure(rows: list[dict[str, Any]], x_key: str, y_key: str, series_keys: list[str], caption: str,
                  budget: float | None) -> list[Panel]:
    """The certified epsilon (or delta, on a log axis) against the last swept input; --max-eps
    drawn as a line."""
    from dpcalc.cli.sweeps import sweep_panels

    names = {"batch_size": "batch size"}
    panels: list[Panel] = sweep_panels(
        rows, x_key=x_key, y_key=y_key, series_keys=series_keys,
        title=f"certified {y_key} against {names.get(x_key, x_key)} (PLD)",
        xlabel=names.get(x_key, x_key), ylabel=f"{y_key} (certified upper bound)",
        accountant="pld", caption=caption, budget=budget if y_key == "epsilon" else None, ylog=y_key == "delta",
    )
    return panels
