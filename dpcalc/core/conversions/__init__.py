"""Conversions between privacy notions (pure Python: on the start-up path of `convert`).

RDP -> (epsilon, delta) lives in `dpcalc.core.rdp_conversion` and is re-exported here.
The rest of the package is `dpcalc convert`: calibrating the Gaussian mechanism (Balle, Wang,
ICML 2018, arXiv 1805.06530, "BW18"; Dwork, Roth 2014, Thm A.1), pure DP as RDP, GDP and
zCDP, the RDP curves of single mechanisms, trade-off curves (Dong, Roth, Su, JRSS-B 2022,
arXiv 1905.02383, "DRS"), group privacy, and the table of which conversions exist
(docs/mathematics.md §1, §2, §6, §7). zCDP -> (epsilon, delta) lives in `dpcalc.core.zcdp`.

One concept a module, all re-exported here:

- `gaussian`: calibrating the Gaussian mechanism (the analytic sigma, rounded up; the classic one);
- `guarantees`: pure DP as mu-GDP and RDP, trade-off curves, group privacy;
- `table`: the notions, Guarantee and Target, which conversions exist and the refusals;
- `converters`: each conversion that exists, one function a (source, target) pair;
- `dispatch`: `convert`, which applies group privacy and dispatches to them.
"""

from __future__ import annotations

# The names below are served on first use (PEP 562 `__getattr__`), each from its own module:
# `dpcalc convert` loads only the modules its conversion needs (importing them all cost about
# 18 ms of every call, measured). typing is not imported at run time; type checkers see the names.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from dpcalc.core.conversions.dispatch import Conversion, convert, target_takes_delta_or_epsilon
    from dpcalc.core.conversions.gaussian import (
        GaussianCalibration,
        analytic_gaussian_mu,
        calibrate_gaussian,
        classic_gaussian_sigma,
    )
    from dpcalc.core.conversions.guarantees import (
        DP_DELTA,
        EXTENDED_NON_NEGATIVE,
        EXTENDED_POSITIVE,
        dp_tradeoff,
        group_dp,
        pure_dp_to_mu,
        randomized_response_rdp,
        tradeoff_alphas,
    )
    from dpcalc.core.conversions.table import (
        AVAILABLE,
        TERMS,
        ConversionError,
        GroupRefusal,
        Guarantee,
        Target,
        group_refusal,
        refusal,
    )
    from dpcalc.core.laplace import laplace_rdp  # the one implementation, shared with rdp
    from dpcalc.core.limits import (
        DEFAULT_CONVERT_ORDERS,
        DEFAULT_TRADEOFF_POINTS,
        SOURCE_NOTIONS,
        TARGET_NOTIONS,
        TRADEOFF_POINTS,
    )
    from dpcalc.core.rdp_conversion import ORDER, best_delta, best_epsilon, rdp_to_delta, rdp_to_epsilon

__all__ = [
    "AVAILABLE",
    "DEFAULT_CONVERT_ORDERS",
    "DEFAULT_TRADEOFF_POINTS",
    "DP_DELTA",
    "EXTENDED_NON_NEGATIVE",
    "EXTENDED_POSITIVE",
    "ORDER",
    "SOURCE_NOTIONS",
    "TARGET_NOTIONS",
    "TERMS",
    "TRADEOFF_POINTS",
    "Conversion",
    "ConversionError",
    "GaussianCalibration",
    "GroupRefusal",
    "Guarantee",
    "Target",
    "analytic_gaussian_mu",
    "best_delta",
    "best_epsilon",
    "calibrate_gaussian",
    "classic_gaussian_sigma",
    "convert",
    "dp_tradeoff",
    "group_dp",
    "group_refusal",
    "laplace_rdp",
    "pure_dp_to_mu",
    "randomized_response_rdp",
    "rdp_to_delta",
    "rdp_to_epsilon",
    "refusal",
    "target_takes_delta_or_epsilon",
    "tradeoff_alphas",
]

# name -> the module that defines it (a test checks this map against __all__ and the modules)
_HOMES = {
    **dict.fromkeys(("Conversion", "convert", "target_takes_delta_or_epsilon"), "dpcalc.core.conversions.dispatch"),
    **dict.fromkeys(("GaussianCalibration", "analytic_gaussian_mu", "calibrate_gaussian", "classic_gaussian_sigma"),
                    "dpcalc.core.conversions.gaussian"),
    **dict.fromkeys(("DP_DELTA", "EXTENDED_NON_NEGATIVE", "EXTENDED_POSITIVE", "dp_tradeoff", "group_dp",
                     "pure_dp_to_mu", "randomized_response_rdp", "tradeoff_alphas"), "dpcalc.core.conversions.guarantees"),
    **dict.fromkeys(("AVAILABLE", "TERMS", "ConversionError", "GroupRefusal", "Guarantee", "Target", "group_refusal",
                     "refusal"), "dpcalc.core.conversions.table"),
    "laplace_rdp": "dpcalc.core.laplace",
    **dict.fromkeys(("DEFAULT_CONVERT_ORDERS", "DEFAULT_TRADEOFF_POINTS", "SOURCE_NOTIONS", "TARGET_NOTIONS",
                     "TRADEOFF_POINTS"), "dpcalc.core.limits"),
    **dict.fromkeys(("ORDER", "best_delta", "best_epsilon", "rdp_to_delta", "rdp_to_epsilon"),
                    "dpcalc.core.rdp_conversion"),
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'dpcalc.core.conversions' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(home), name)
    globals()[name] = value  # served from the module's namespace from now on
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
