"""Figures read out of printed text, and the brackets they are checked against.

A test that checks a message holding a certified PLD figure should not pin its printed digits:
the figure is certified to 1e-3 relative and its last digit can move between machines and with
any change to the grid. `number_in` reads the figure out of the message (the rest of the text is
still compared exactly) so the test can hold it to a reference with the tolerance it deserves.
Where the value comes from, and why the tolerance, is written beside each constant below and in
docs/reference-values.md; CONTRIBUTING.md ("Reference values and snapshots") says when a value
of dpcalc's own may serve as a regression snapshot and how it is labelled.
"""

from __future__ import annotations

import re

_NUMBER = r"([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"

# Design card (p = 0.004, sigma = 1.1, T = 10000, delta = 1e-5), the certified PLD upper bound.
# Reference: tight epsilon 1.8410 +- 0.001 (dp_accounting 0.6.0: 1.841037; prv_accountant 0.2.0:
# 1.840963; docs/reference-values.md). An upper bound is at least the true value (>= 1.8400) and
# at most the true value plus the certified interval's width, 1e-3 relative (<= 1.8410 + 0.001 +
# 0.0019 = 1.8439).
DESIGN_CARD_CERTIFIED_UPPER = (1.8400, 1.8439)


def numbers_in(text: str, template: str, *, whole: bool = False) -> tuple[float, ...]:
    """The numbers at the `{}` places of `template`, which must occur in `text` (the rest verbatim).

    whole: `template` must be all of `text`, not a part of it.
    """
    pattern = _NUMBER.join(re.escape(part) for part in template.split("{}"))
    found = (re.fullmatch if whole else re.search)(pattern, text)
    assert found, f"{template!r} not {'all' if whole else 'found in'} {text!r}"
    return tuple(float(group) for group in found.groups())


def number_in(text: str, template: str, *, whole: bool = False) -> float:
    """The one number at the `{}` place of `template` in `text`."""
    (value,) = numbers_in(text, template, whole=whole)
    return value
