"""Which conversions of `dpcalc convert` exist (pure Python: on its start-up path).

The notions, the source (Guarantee) and the target (Target) of a conversion, and the refusals:
the conversions that never exist or that dpcalc does not offer, and why (ConversionError,
GroupRefusal), in the command's terms (TERMS). `dpcalc.core.conversions.dispatch.convert`
carries out the ones that exist (docs/mathematics.md §1, §2, §6, §7).
"""

from __future__ import annotations

import math

from dpcalc.core.conversions.guarantees import DP_DELTA, EXTENDED_NON_NEGATIVE, EXTENDED_POSITIVE
from dpcalc.core.limits import (
    DEFAULT_CONVERT_ORDERS,
    DEFAULT_TRADEOFF_POINTS,
    SOURCE_NOTIONS,
    TARGET_NOTIONS,
    TRADEOFF_POINTS,
)
from dpcalc.core.rdp_conversion import ORDER
from dpcalc.core.record import Value
from dpcalc.core.validation import NON_NEGATIVE, OPEN_UNIT, POSITIVE, Interval

# ---------------------------------------------------------------------------------------------
# `dpcalc convert`: which conversions exist, and the dispatch
# (the notions, SOURCE_NOTIONS and TARGET_NOTIONS, DEFAULT_CONVERT_ORDERS and the trade-off
# points live in dpcalc.core.limits, which the command line reads without importing this package)

# The terms of the command that refusals name, as {placeholders}: str() of an error fills them
# with these neutral words; the command line fills them with its options (the same keys).
TERMS: dict[str, str] = {
    "group": "group privacy",
    "delta": "delta",
    "delta_zero": "delta = 0",
    "to_dp": "the dp target",
    "to_gaussian": "the gaussian target",
    "to_laplace": "the laplace target",
    "rdp_point": "an order and its RDP epsilon",
    "source_and_target": "source and target",
    "from_gaussian_to_dp": "gaussian -> dp",
    "from_dp_to_laplace": "dp -> laplace",
    "from_laplace_to_dp": "laplace -> dp",
    "from_dp_to_gaussian": "dp -> gaussian",
}


class ConversionError(ValueError):
    """A conversion that does not exist or that dpcalc does not offer: `source -> target`, why, what exists.

    `reason` and `alternatives` (where `source` converts to; None when the conversion exists but
    these parameters do not) may name the command's terms as {placeholders} of TERMS.
    """

    def __init__(self, source: str, target: str, reason: str, alternatives: str | None = None) -> None:
        self.source = source
        self.target = target
        self.reason = reason
        self.alternatives = alternatives
        super().__init__(self.describe(TERMS))

    def describe(self, terms: dict[str, str]) -> str:
        """The message, with the terms named by `terms` (TERMS for neutral words); the reasons are
        those of docs/mathematics.md §6."""
        reason = self.reason.format_map(terms)
        if self.alternatives is None:
            return reason
        return (f"no conversion {self.source} -> {self.target}: {reason}. "
                f"From {self.source}, dpcalc converts to: {self.alternatives.format_map(terms)}.")


class GroupRefusal(ConversionError):
    """Group privacy that does not apply to `source -> target`; `side` ("source" or "target") says which refuses it."""

    def __init__(self, source: str, target: str, side: str) -> None:
        self.side = side
        if side == "source":
            reason = (f"group privacy does not apply to the {source} source: group privacy for RDP changes the "
                      "order (Mironov 2017); convert to dp first, then apply group privacy to the dp guarantee")
        else:
            reason = (f"group privacy does not apply to the {target} target: group privacy weakens a guarantee, "
                      "while calibrating noise that protects groups of k means multiplying the sensitivity by k")
        super().__init__(source, target, reason)


class Guarantee(Value):
    """The source of a conversion: a privacy guarantee or a mechanism; `notion` says which fields are set.

    dp: epsilon, delta (0 for pure DP); gdp: mu; zcdp: rho; rdp: one point (order, rdp);
    gaussian: the noise std and L2 sensitivity; laplace: scale and L1 sensitivity.
    """

    notion: str
    epsilon: float | None = None
    delta: float | None = None
    mu: float | None = None
    rho: float | None = None
    order: float | None = None
    rdp: float | None = None
    noise_std: float | None = None
    scale: float | None = None
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        if self.notion not in SOURCE_NOTIONS:
            raise ValueError(f"notion must be one of {', '.join(SOURCE_NOTIONS)}, got notion={self.notion!r}")
        for name, interval in _SOURCE_FIELDS[self.notion]:
            value = getattr(self, name)
            if value is None:
                raise ValueError(f"a {self.notion} source needs {name}")
            interval.check(name, value)


_SOURCE_FIELDS: dict[str, tuple[tuple[str, Interval], ...]] = {
    "dp": (("epsilon", EXTENDED_NON_NEGATIVE), ("delta", DP_DELTA)),
    "gdp": (("mu", EXTENDED_POSITIVE),),
    "zcdp": (("rho", EXTENDED_POSITIVE),),
    "rdp": (("order", Interval(1.0, math.inf)), ("rdp", NON_NEGATIVE)),
    "gaussian": (("noise_std", POSITIVE), ("sensitivity", EXTENDED_POSITIVE)),
    "laplace": (("scale", POSITIVE), ("sensitivity", EXTENDED_POSITIVE)),
}


# ---------------------------------------------------------------------------------------------
# The fields of a source's notion, as floats (Guarantee.__post_init__ checks that they are set;
# `converters._mu_of` reads mu, or sensitivity / noise_std)


def _given(value: float | None) -> float:
    """A field of a source that its notion sets."""
    assert value is not None, "Guarantee.__post_init__ checks the fields of its notion"
    return value


def _dp_pair(source: Guarantee) -> tuple[float, float]:
    """(epsilon, delta) of a dp source."""
    return _given(source.epsilon), _given(source.delta)


def _rdp_point(source: Guarantee) -> tuple[float, float]:
    """(order, rdp) of an rdp source."""
    return _given(source.order), _given(source.rdp)


class Target(Value):
    """What to convert to, with its parameters.

    dp: exactly one of `delta` (gives epsilon) and `epsilon` (gives delta), except from dp
    (group privacy), which takes neither, and from laplace, which takes at most one (neither:
    its pure-DP epsilon at delta = 0); rdp: `orders`; tradeoff:
    `points`; gaussian and laplace: the `sensitivity` of the query to calibrate for.
    """

    notion: str
    delta: float | None = None
    epsilon: float | None = None
    orders: tuple[float, ...] = DEFAULT_CONVERT_ORDERS
    points: int = DEFAULT_TRADEOFF_POINTS
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        if self.notion not in TARGET_NOTIONS:
            raise ValueError(f"notion must be one of {', '.join(TARGET_NOTIONS)}, got notion={self.notion!r}")
        if self.delta is not None:
            OPEN_UNIT.check("delta", self.delta)
        if self.epsilon is not None:
            NON_NEGATIVE.check("epsilon", self.epsilon)
        if not self.orders:
            raise ValueError("orders must not be empty")
        for order in self.orders:
            ORDER.check("order", order)
        TRADEOFF_POINTS.check("points", self.points)
        POSITIVE.check("sensitivity", self.sensitivity)


# Where each source may go, for the messages of conversions that do not exist.
AVAILABLE: dict[str, str] = {
    "dp": "dp (with {group}), gaussian, laplace, tradeoff; and, for pure DP (delta = 0), gdp, zcdp, rdp",
    "gdp": "dp, gdp (with {group}), zcdp, rdp, gaussian, tradeoff",
    "zcdp": "dp, zcdp (with {group}), rdp, gaussian",
    "rdp": "dp, gaussian",
    "gaussian": "dp, gdp, zcdp, rdp, tradeoff",
    "laplace": "dp, zcdp, rdp",
}

_NOT_OFFERED = "dpcalc does not offer this conversion"

# Conversions that never exist (or are not offered), whatever the parameters: the reason.
_REFUSALS: dict[tuple[str, str], str] = {
    ("gdp", "laplace"): (
        f"{_NOT_OFFERED}: no Laplace scale is calibrated to mu-GDP here; the Gaussian mechanism "
        "with sigma = sensitivity/mu is exactly mu-GDP ({to_gaussian})"
    ),
    ("zcdp", "gdp"): (
        "rho-zCDP does not imply mu-GDP in general: zCDP bounds Renyi divergences, which do not "
        "determine the trade-off curve, and no valid general conversion is known; gdp -> zcdp "
        "(rho = mu^2/2) exists, one way only"
    ),
    ("zcdp", "laplace"): f"{_NOT_OFFERED}: zCDP is met by Gaussian noise ({{to_gaussian}})",
    ("zcdp", "tradeoff"): (
        f"{_NOT_OFFERED}: a trade-off curve is not derived from zCDP here; {{to_dp}} gives its "
        "(epsilon, delta) points"
    ),
    ("rdp", "gdp"): (
        "one RDP point ({rdp_point}) bounds a single Renyi divergence, while mu-GDP constrains "
        "the whole trade-off curve: no conversion exists (gdp -> rdp exists, one way only)"
    ),
    ("rdp", "zcdp"): (
        "one RDP point ({rdp_point}) bounds a single Renyi divergence, while rho-zCDP needs a "
        "bound at every order: no conversion exists (zcdp -> rdp exists, one way only)"
    ),
    ("rdp", "rdp"): (
        "one RDP point does not determine a curve: only smaller orders are bounded (by the same "
        "value), and larger orders not at all"
    ),
    ("rdp", "laplace"): f"{_NOT_OFFERED}: {{to_gaussian}} calibrates noise to one RDP point",
    ("rdp", "tradeoff"): f"{_NOT_OFFERED}: {{to_dp}} gives (epsilon, delta) from one RDP point",
    ("gaussian", "gaussian"): "{source_and_target} are both gaussian: there is nothing to convert",
    ("gaussian", "laplace"): (
        "one mechanism's noise does not convert into another's: state the guarantee you need, "
        "e.g. {from_gaussian_to_dp}, then calibrate from it with {from_dp_to_laplace}"
    ),
    ("laplace", "laplace"): "{source_and_target} are both laplace: there is nothing to convert",
    ("laplace", "gaussian"): (
        "one mechanism's noise does not convert into another's: state the guarantee you need, "
        "e.g. {from_laplace_to_dp}, then calibrate from it with {from_dp_to_gaussian}"
    ),
    ("laplace", "gdp"): (
        f"{_NOT_OFFERED}: the Laplace mechanism's trade-off curve is not Gaussian, and the exact "
        "mu is not computed here"
    ),
    ("laplace", "tradeoff"): f"{_NOT_OFFERED}: {{to_dp}} states the Laplace mechanism as pure DP",
}


def _refused(source: str, target: str, reason: str) -> ConversionError:
    return ConversionError(source, target, reason, AVAILABLE[source])


def refusal(source: str, target: str) -> ConversionError | None:
    """Why `source -> target` does not exist whatever its parameters, or None when it may exist
    (docs/mathematics.md §6).

    Whether dp -> gdp/zcdp/rdp/laplace/gaussian exists depends on delta; `convert` decides those.
    """
    if source not in SOURCE_NOTIONS:
        raise ValueError(f"source must be one of {', '.join(SOURCE_NOTIONS)}, got {source!r}")
    if target not in TARGET_NOTIONS:
        raise ValueError(f"target must be one of {', '.join(TARGET_NOTIONS)}, got {target!r}")
    reason = _REFUSALS.get((source, target))
    return None if reason is None else _refused(source, target, reason)


def group_refusal(source: str, target: str) -> GroupRefusal | None:
    """Why group privacy cannot be applied to `source -> target`, or None when it can
    (docs/mathematics.md §6, group privacy)."""
    if source == "rdp":
        return GroupRefusal(source, target, "source")
    if target in ("gaussian", "laplace"):
        return GroupRefusal(source, target, "target")
    return None

