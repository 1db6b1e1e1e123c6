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
