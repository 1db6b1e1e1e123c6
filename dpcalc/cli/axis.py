"""--x: the swept option a sweep's figure (--plot, --chart) puts on its x axis; the figure draws
one line per combination of the other swept options, named in its legend. Without --x the x
axis is the last option swept. Loaded only when --x is given."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import click

from dpcalc.cli.errors import InputError


def x_key(text: str, swept: Sequence[str], sweeps: Mapping[str, Any], drawn: bool) -> str:
    """The input `--x text` names (an option as declared or by an alias, with or without its
    dashes: --T, --steps, T), refused unless a figure is drawn and that option is swept."""
    if not drawn:
        raise InputError(f"--x chooses the x axis of a sweep's figure: give --plot FILE or --chart, got --x {text}",
                         options=("--x", "--plot", "--chart"), got=text)
    name = _input_name(text.strip())
    if name in swept:
        return name
    listed = ", ".join(sweeps[key].option for key in swept)
    which = f"one of {listed}" if swept else "a swept option: give it a list or range, e.g. --sigma 0.8,1.1"
    named = tuple(sweeps[key].option for key in swept) if swept else ("--sigma",)
    raise InputError(f"--x must name {which}, got {text}", options=tuple(dict.fromkeys(("--x", *named))),
                     allowed=f"one of {listed}" if swept else "a swept option", got=text)


def _input_name(text: str) -> str:
    """The parameter of the running command that `text` names (its name, or an option string of
    it with or without the leading dashes); `text` itself when none does."""
    context = click.get_current_context(silent=True)
    if context is not None:
        for param in context.command.params:
            options = getattr(param, "opts", []) + getattr(param, "secondary_opts", [])
            if text == param.name or text in options or f"--{text}" in options:
                return param.name or text
    return text
