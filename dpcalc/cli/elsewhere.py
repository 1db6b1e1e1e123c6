"""Options one command lacks and another takes: the message that says where to go.

`dpcalc gdp --neighbours replace-one` is an unknown option to click ("No such option"); the
user is better told which command takes it. Loaded only when a command meets an unknown option.
"""

from __future__ import annotations

import click

# (command, option) -> the message for that option given to that command
ELSEWHERE: dict[tuple[str, str], str] = {
    ("gdp", "--neighbours"): (
        "gdp takes no --neighbours: its central-limit mu (Bu et al. 2020) comes with the neighbour relation of "
        "its --sampling; to choose the relation use dpcalc pld --neighbours add-remove, replace-one or zero-out"),
    ("gdp", "--examples-per-user"): (
        "gdp takes no --examples-per-user: for user-level privacy use dpcalc pld --examples-per-user"),
    ("gdp", "--max-batch-size"): (
        "gdp takes no --max-batch-size: for truncated Poisson sampling use dpcalc pld --max-batch-size"),
    # old spellings, refused with the new one: one meaning per option across dpcalc
    ("smooth-sensitivity", "--beta"): (
        "--beta is a failure probability elsewhere; the smoothness parameter is --smoothness"),
    ("gaussian", "--sigmas"): (
        "--sigma is a noise multiplier elsewhere; the per-coordinate noise stds are --noise-stds"),
}


def elsewhere_hint(error: click.UsageError) -> str | None:
    """For an unknown option that another command takes, the message that names that command."""
    if not isinstance(error, click.NoSuchOption) or error.ctx is None or error.ctx.command.name is None:
        return None
    return ELSEWHERE.get((error.ctx.command.name, error.option_name))
