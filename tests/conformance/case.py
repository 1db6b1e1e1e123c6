"""One conformance case: a peer's published test value, the dpcalc command that answers the same
question, and how the two compare (see tests/conformance/__init__.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

# How a case compares dpcalc's figure with the peer's:
CLOSE = "close"  # |dpcalc - expected| <= abs + rel |expected|
WITHIN = "within"  # expected lies in dpcalc's certified interval [key_lower, key], widened by the tolerance
AT_MOST = "at_most"  # the peer asserts an upper bound (expected); dpcalc's figure must not exceed it
AT_LEAST = "at_least"  # the peer asserts a lower bound (expected); dpcalc's figure must not fall below it
REFUSED = "refused"  # the peer raises on this input; dpcalc must refuse it too (exit 2, one line)

# Which side of the truth dpcalc's figure is sound on (for `differs` cases):
UPPER = "upper"  # an upper bound (epsilon, delta, RDP, noise to add): sound when >= the truth
LOWER = "lower"  # a figure that must not exceed the truth (a per-mechanism budget, a largest k)


@dataclass(frozen=True)
class Case:
    """A peer's test value, mapped onto a dpcalc command.

    `source` names the project, the file and the test; `rel`/`abs` are the tolerance the peer's
    own test uses. A case with `differs` records why dpcalc's figure differs from the peer's and
    carries the independent check `exact` (mpmath or a closed form): the test then asserts that
    dpcalc matches `exact()` (to `exact_rel`, or from the sound side within `exact_rel` for a
    certified bound) and is at least as close to it as the peer, from the sound side. `defect`
    marks a case dpcalc cannot answer yet because of a known defect of issue 22 (strict xfail).
    """

    id: str
    source: str
    argv: tuple[str, ...]
    key: str
    expected: float
    rel: float = 0.0
    abs: float = 0.0
    compare: str = CLOSE
    key_lower: str | None = None
    differs: str | None = None
    exact: Callable[[], float] | None = None
    exact_rel: float = 1e-9
    sound: str = UPPER
    defect: int | None = None
    slow: bool = False
    note: str = ""

    def __post_init__(self) -> None:
        if self.differs is not None and self.exact is None:
            raise ValueError(f"{self.id}: a case that differs needs its independent check")
        if self.compare == WITHIN and self.key_lower is None:
            raise ValueError(f"{self.id}: an interval comparison needs key_lower")


def lookup(document: object, key: str) -> float:
    """The number at a dotted path ("result.curve.0.rdp") of a JSON document; "inf" -> inf."""
    node = document
    for part in key.split("."):
        if isinstance(node, list):
            node = node[int(part)]
        else:
            assert isinstance(node, dict), f"{key}: {part} is not a key of {node!r}"
            node = node[part]
    if node in ("inf", "-inf"):
        return float(node)  # type: ignore[arg-type]
    assert isinstance(node, (int, float)), f"{key}: not a number: {node!r}"
    return float(node)


def argv(text: str) -> tuple[str, ...]:
    """A command line as a user types it, split on spaces (no quoting needed in the corpus)."""
    return tuple(text.split())


def fmt(x: float) -> str:
    """A float on the command line exactly as Python prints it (repr round-trips)."""
    return repr(float(x))
