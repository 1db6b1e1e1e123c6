"""Marking some cases of a parametrised test slow: the default run keeps the others."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

_ParameterSet = type(pytest.param(None))


def slow_cases(values: Iterable, *slow: int, one_argument: bool = False) -> list:
    """The parameter sets `values` with those at the positions `slow` marked @pytest.mark.slow: they
    repeat a path a faster case already takes, and `python -m pytest -m slow` runs them. A tuple is
    one case's arguments unless the test takes `one_argument`."""
    cases = []
    for index, value in enumerate(values):
        if index not in slow:
            cases.append(value)
        elif isinstance(value, _ParameterSet):
            cases.append(pytest.param(*value.values, marks=[*value.marks, pytest.mark.slow], id=value.id))
        elif isinstance(value, tuple) and not one_argument:
            cases.append(pytest.param(*value, marks=pytest.mark.slow))
        else:
            cases.append(pytest.param(value, marks=pytest.mark.slow))
    return cases
