"""Renyi differential privacy (RDP) of Poisson-subsampled Gaussian and Laplace mechanisms.

Sources: Mironov, "Renyi Differential Privacy" (CSF 2017, arXiv 1702.07476), "M17";
Mironov, Talwar, Zhang, "Renyi Differential Privacy of the Sampled Gaussian Mechanism"
(arXiv 1908.10530), "MTZ"; Canonne, Kamath, Steinke (NeurIPS 2020, arXiv 2004.00010), "CKS";
Cohen, Rodriguez Villegas, Zagier, "Convergence acceleration of alternating series"
(Experimental Mathematics 9, 2000), "CVZ". docs/mathematics.md §2 states every formula.

Per step, the Poisson-subsampled Gaussian with sampling probability q and noise multiplier
sigma has RDP eps(a) = log(A_a) / (a - 1), where, with mu0 = N(0, sigma^2), mu1 = N(1, sigma^2)
and the likelihood ratio r(z) = mu1(z)/mu0(z) = exp((2z - 1)/(2 sigma^2)) (MTZ Thm 4),

    A_a = E_{z ~ mu0}[(1 - q + q r(z))^a].

Both computations of log A_a return log(A_a - 1) from sums whose cancellation is controlled, so
that tiny RDP values (q = 1e-6, sigma = 50: eps ~ 1e-16) keep their relative precision; a
plain sum of the terms of A_a = 1 + tiny cannot.

One concept a module, the public API re-exported here:

- `orders`: the default order grid, the largest order, the check of a list of orders;
- `integer_orders`: log A_a at integer orders (MTZ Thm 4), log |C(a, i)|, the flat term layout;
- `fractional_orders`: log A_a at fractional orders (MTZ Sec. 3.3 with the CVZ tail), whether
  each value is trusted, and the sound upper bound used where it is not;
- `curves`: per-step curves (subsampled Gaussian, Laplace, a phase) and their composition (M17 Prop. 1);
- `accountant`: curve -> (epsilon, delta) over the orders, `rdp_accountant` and its result.

The package imports numpy and scipy.special at the top: only the rdp, pld (its closed-form
fallback), calibrate and check commands load it. Importing scipy.special at module level rather
than inside the functions that use it is measurably faster: the import's cost grows with the
depth of the Python stack it runs under (measured on CPython 3.11: about 112 ms at depth 0,
162 ms at depth 40), and the functions sit some 30 frames deep under click; `dpcalc rdp --json`
was 0.05 s slower.
"""

from __future__ import annotations

from dpcalc.core.limits import MAX_ORDER  # the largest order, also read by the command line
from dpcalc.core.rdp.accountant import (
    GridEdge,
    RDPResult,
    delta_from_curve,
    epsilon_from_curve,
    rdp_accountant,
)
from dpcalc.core.rdp.curves import (
    OrderBound,
    composed_rdp,
    laplace_rdp_curve,
    phase_rdp,
    subsampled_gaussian_rdp,
)
from dpcalc.core.rdp.orders import DEFAULT_ORDERS, ORDERS_RANGE

__all__ = [
    "DEFAULT_ORDERS",
    "MAX_ORDER",
    "ORDERS_RANGE",
    "GridEdge",
    "OrderBound",
    "RDPResult",
    "composed_rdp",
    "delta_from_curve",
    "epsilon_from_curve",
    "laplace_rdp_curve",
    "phase_rdp",
    "rdp_accountant",
    "subsampled_gaussian_rdp",
]
