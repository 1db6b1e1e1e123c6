"""Composition of (epsilon, delta)-DP mechanisms: basic, advanced, simplified and optimal.

Sources:
- Basic composition: Dwork, Roth, "The Algorithmic Foundations of Differential Privacy"
  (2014), "DR" below, Thm 3.16: k mechanisms, each (eps, delta) -> (k eps, k delta).
- Advanced composition: Dwork, Rothblum, Vadhan, "Boosting and Differential Privacy"
  (FOCS 2010), "DRV" below, Thm III.3; DR Thm 3.20: for every delta' > 0,
  (eps sqrt(2k ln(1/delta')) + k eps (e^eps - 1), k delta + delta'). Its heterogeneous form
  (the same martingale argument, one term per mechanism):
  (sqrt(2 ln(1/delta') sum eps_i^2) + sum eps_i (e^eps_i - 1), sum delta_i + delta').
- The simplified form eps' = 2 eps sqrt(2k ln(1/delta')): DR Cor. 3.21, which holds only for
  eps' < 1.
- Optimal composition: Kairouz, Oh, Viswanath, "The Composition Theorem for Differential
  Privacy" (ICML 2015, arXiv 1311.0776), "KOV" below, Thm 3.3 and Thm 3.5: the k-fold
  composition of (eps_i, delta_i)-DP mechanisms is dominated by that of the randomized-response
  pairs with the same parameters, and is exactly
  (eps_g, 1 - prod(1 - delta_i) (1 - delta_RR(eps_g)))-DP, delta_RR the privacy profile of the
  composed randomized responses; for different (eps_i, delta_i) this is Murtagh, Vadhan, "The
  Complexity of Computing the Optimal Composition of Differential Privacy" (TCC 2016), Thm 1.5.
  It reaches every total delta from 1 - prod(1 - delta_i) up (where eps_g = sum eps_i),
  continuously (docs/mathematics.md §5).

At a fixed total delta D (`total_delta`, instead of a slack delta'), every theorem is stated at
that one D: basic when sum delta_i <= D, advanced and simplified with delta' = D - sum delta_i
(> 0), and optimal with delta_RR = 1 - (1 - D) / prod(1 - delta_i) (>= 0). A theorem that cannot
reach D is not applicable (epsilon inf). These conditions are decided in exact arithmetic on the
decimal values of the inputs (`optimal._slack`), so no rounding puts a theorem on the wrong side: with
delta = 0.01, 50 mechanisms reach D = 0.5 under basic composition, and with delta = 1e-6, 100
mechanisms leave the advanced theorem no delta' > 0 at D = 1e-4.

The package, one concept a module:
- `results`: the result types (`Bound`, `OptimalBound`, `CompositionResult`, `InverseEntry`,
  `InverseResult`), the input domains and the input checks shared by the others;
- `theorems`: basic, advanced (DRV), the simplified corollary and its validity, and `compose`,
  the four theorems for k identical mechanisms;
- `binomial`: binomial probabilities in log space (Loader 2000), scalar and numpy;
- `optimal`: the optimal (KOV) epsilon: the privacy-loss walk, the allowances at a slack or
  total delta, `optimal_epsilon` and `optimal_delta`;
- `heterogeneous`: `compose_heterogeneous`, per-mechanism lists, exact or on a lattice;
- `inverse`: the inverse questions (`max_compositions`, `max_epsilon_per_mechanism`);
- `search`: the monotone searches behind them (the largest k, the largest epsilon).
"""

from dpcalc.core.composition.binomial import log_binomial_pmf
from dpcalc.core.composition.heterogeneous import EXACT_ATOM_LIMIT, compose_counted, compose_heterogeneous
from dpcalc.core.composition.inverse import max_compositions, max_epsilon_per_mechanism
from dpcalc.core.composition.optimal import optimal_delta, optimal_epsilon
from dpcalc.core.composition.results import (
    COMPOSITIONS,
    PER_MECHANISM_DELTA,
    Bound,
    CompositionResult,
    InverseEntry,
    InverseResult,
    OptimalBound,
)
from dpcalc.core.composition.search import MAX_K_SEARCHED
from dpcalc.core.composition.theorems import (
    advanced_composition,
    basic_composition,
    compose,
    simplified_composition,
)

__all__ = [
    "COMPOSITIONS",
    "EXACT_ATOM_LIMIT",
    "MAX_K_SEARCHED",
    "PER_MECHANISM_DELTA",
    "Bound",
    "CompositionResult",
    "InverseEntry",
    "InverseResult",
    "OptimalBound",
    "advanced_composition",
    "basic_composition",
    "compose",
    "compose_counted",
    "compose_heterogeneous",
    "log_binomial_pmf",
    "max_compositions",
    "max_epsilon_per_mechanism",
    "optimal_delta",
    "optimal_epsilon",
    "simplified_composition",
]
