"""Framework presets: the epsilon another library would print by default for the same run.

Each preset runs the library's default accountant with its default orders, conversion and
discretisation (docs/presets.md cites the file and version of each fact). The figure is that
library's estimate, shown beside dpcalc's certified bound and never used by a budget gate: it
can be below the truth (an RDP figure on a sparse grid is an upper bound, but the PRV estimate,
the central-limit GDP figure and a discretised PLD need not be).

The command decides which of the library's accountants answers (`Family`): "rdp" its RDP
accountant, "pld" its numerical accountant (PRV or PLD), "gdp" its Gaussian-DP accountant. A
library without one answers with its numerical accountant (TF Privacy 0.5, which had none, with
its RDP figure).

The libraries model Poisson-sampled Gaussian steps between add-remove neighbours, one example
per user; a run outside that is refused (zero-out neighbours, the same pair under Poisson
sampling, are accepted).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from dpcalc.core.phases import Phase, samples_nothing

Family = Literal["rdp", "pld", "gdp"]

FRAMEWORKS: tuple[str, ...] = ("opacus", "tf-privacy", "tf-privacy-0.5", "dp-accounting", "prv")

# Opacus 1.5.4, opacus/accountants/rdp.py: RDPAccountant.DEFAULT_ALPHAS (prv_accountant 0.2.0's
# other_accountants.RDP uses the same list).
OPACUS_ORDERS: tuple[float, ...] = tuple([1 + x / 10.0 for x in range(1, 100)] + [float(a) for a in range(12, 64)])
# TF Privacy 0.9.0, compute_dp_sgd_privacy_lib.compute_dp_sgd_privacy and
# compute_noise_from_budget_lib.compute_noise.
TF_PRIVACY_ORDERS: tuple[float, ...] = tuple(
    [1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 3.0, 3.5, 4.0, 4.5] + [float(a) for a in range(5, 64)] + [128.0, 256.0, 512.0]
)
# dp_accounting 0.6.0, rdp/rdp_privacy_accountant.py: DEFAULT_RDP_ORDERS.
DP_ACCOUNTING_ORDERS: tuple[float, ...] = tuple(
    [1 + x / 10.0 for x in range(1, 100)] + [float(a) for a in range(11, 64)] + [128.0, 256.0, 512.0, 1024.0]
)
# TF Privacy 0.5.1, compute_dp_sgd_privacy_lib.compute_dp_sgd_privacy: the same list, with the
# classic conversion of its own rdp_accountant (the improved one came in be8175b, 2020-12-30).
TF_PRIVACY_05_ORDERS = TF_PRIVACY_ORDERS

# The PRV accountants' error targets: Opacus's PRVAccountant.get_epsilon (eps_error 0.01, its
# upper figure) and prv_accountant's compute-dp-epsilon script (eps_error 0.1, its estimate);
# both take delta_error = delta / 1000.
OPACUS_EPS_ERROR = 0.01
PRV_EPS_ERROR = 0.1
DELTA_ERROR_SHARE = 1e-3


@dataclass(frozen=True)
class PresetResult:
    """The figure a library would print, how it was obtained, and the library's name and version."""

    framework: str
    epsilon: float
    accountant: str  # "RDP", "PRV", "PLD", "GDP"
    library: str  # e.g. "Opacus 1.5.4"
    basis: str  # one line: what was run, ending in "estimate"
    order: float | None = None  # the RDP order of an RDP figure


_LIBRARIES = {
    "opacus": "Opacus 1.5.4",
    "tf-privacy": "TF Privacy 0.9.0",
    "tf-privacy-0.5": "TF Privacy 0.5.1",
    "dp-accounting": "dp_accounting 0.6.0",
    "prv": "prv_accountant 0.2.0",
}


def check_framework(framework: str) -> None:
    if framework not in FRAMEWORKS:
        raise ValueError(f"framework must be one of {', '.join(FRAMEWORKS)}, got {framework!r}")


def modelled(phases: Sequence[Phase]) -> str | None:
    """Why the libraries cannot account this run (their model: module docstring), or None."""
    for phase in phases:
        if phase.mechanism != "gaussian":
            return "the frameworks' default accountants take Gaussian steps only (this run has a Laplace release)"
        if phase.sampling != "poisson" or phase.neighbours == "replace-one":
            return ("the frameworks' default accountants take Poisson sampling under add-remove neighbours "
                    f"(this run has {phase.sampling} sampling, {phase.neighbours} neighbours)")
        if phase.examples_per_user > 1:
            return "the frameworks' default accountants are example-level (this run has several examples per user)"
    return None


def framework_epsilon(framework: str, phases: Sequence[Phase], delta: float, family: Family) -> PresetResult:
    """The epsilon at `delta` that `framework` prints by default for the run of `phases`, with the
    accountant of `family` (module docstring). ValueError for a run the libraries do not model."""
    check_framework(framework)
    why = modelled(phases)
    if why is not None:
        raise ValueError(why)
    steps = [(p.sampling_probability, float(p.noise_multiplier or math.inf), p.steps)
             for p in phases if not samples_nothing(p)]
    library = _LIBRARIES[framework]
    if not steps:
        return PresetResult(framework, 0.0, "none", library, f"{library}: nothing sampled, epsilon 0")
    if family == "rdp" or (framework == "tf-privacy-0.5" and family == "pld"):
        return _rdp(framework, library, phases, delta)
    if family == "gdp" and framework in ("opacus", "tf-privacy", "tf-privacy-0.5"):
        return _gdp(framework, library, steps, delta)
    if framework in ("opacus", "prv"):
        return _prv(framework, library, steps, delta)
    return _pld(framework, library, steps, delta)


def mu_epsilon(framework: str, mu: float, delta: float) -> PresetResult:
    """A given mu converted to epsilon: every library's figure is the mu-GDP conversion (Dong,
    Roth, Su 2022, Cor. 2.13), which Opacus and TF Privacy solve with brentq on [0, 500]."""
    from dpcalc.core import gdp

    check_framework(framework)
    library = _LIBRARIES[framework]
    return PresetResult(framework, gdp.epsilon_for_delta(delta, mu), "GDP", library,
                        f"{library}: the mu-GDP conversion of the mu given, estimate")


def _rdp(framework: str, library: str, phases: Sequence[Phase], delta: float) -> PresetResult:
    from dpcalc.core.rdp import rdp_accountant
    from dpcalc.core.rdp_conversion import Conversion

    table: dict[str, tuple[tuple[float, ...], Conversion, str]] = {
        "opacus": (OPACUS_ORDERS, "improved", "RDPAccountant, DEFAULT_ALPHAS (1.1 to 63)"),
        "tf-privacy": (TF_PRIVACY_ORDERS, "improved", "compute_dp_sgd_privacy's orders (1.25 to 512)"),
        "tf-privacy-0.5": (TF_PRIVACY_05_ORDERS, "classic", "compute_dp_sgd_privacy (orders 1.25 to 512, classic conversion)"),
        "dp-accounting": (DP_ACCOUNTING_ORDERS, "improved", "RdpAccountant, DEFAULT_RDP_ORDERS (1.1 to 1024)"),
        "prv": (OPACUS_ORDERS, "improved", "other_accountants.RDP, orders 1.1 to 63"),
    }
    orders, conversion, what = table[framework]
    plain = [Phase(sampling_probability=p.sampling_probability, noise_multiplier=p.noise_multiplier, steps=p.steps)
             for p in phases]
    result = rdp_accountant(plain, orders=orders, delta=delta, conversion=conversion)
    epsilon, order = result.epsilon, result.order
    if framework in ("dp-accounting", "tf-privacy"):  # dp_accounting's own fractional-order series
        from dpcalc.core.presets.absolute_series import library_curve
        from dpcalc.core.rdp import epsilon_from_curve

        curve = library_curve(plain, result.orders, result.rdp)
        epsilon, order = epsilon_from_curve(result.orders, curve, delta, conversion)
    return PresetResult(framework, epsilon, "RDP", library, f"{library} {what}, estimate", order)


def _gdp(framework: str, library: str, steps: Sequence[tuple[float, float, int]], delta: float) -> PresetResult:
    """Opacus's GaussianAccountant and TF Privacy's gdp_accountant (Poisson): mu = q sqrt(T (e^(1/sigma^2) - 1))
    (Bu, Dong, Long, Su 2020, Thm 4), the phases' mu composed in quadrature, then the mu-GDP conversion."""
    from dpcalc.core import gdp

    mu = math.sqrt(math.fsum(gdp.clt_mu(q, s, t) ** 2 for q, s, t in steps))
    what = "GaussianAccountant (Poisson)" if framework == "opacus" else "gdp_accountant.compute_eps_poisson"
    epsilon = gdp.epsilon_for_delta(delta, mu) if math.isfinite(mu) else math.inf
    return PresetResult(framework, epsilon, "GDP", library, f"{library} {what}, central-limit estimate")


def _prv(framework: str, library: str, steps: Sequence[tuple[float, float, int]], delta: float) -> PresetResult:
    from dpcalc.core.presets.prv import prv_epsilon

    error = OPACUS_EPS_ERROR if framework == "opacus" else PRV_EPS_ERROR
    figures = prv_epsilon(steps, delta, eps_error=error, delta_error=delta * DELTA_ERROR_SHARE)
    if framework == "opacus":
        return PresetResult(framework, figures.upper, "PRV", library,
                            f"{library} PRVAccountant (eps_error {error:g}, delta_error delta/1000), its upper figure, "
                            "estimate")
    return PresetResult(framework, figures.estimate, "PRV", library,
                        f"{library} PRVAccountant (eps_error {error:g}, delta_error delta/1000), its eps_estimate")


def _pld(framework: str, library: str, steps: Sequence[tuple[float, float, int]], delta: float) -> PresetResult:
    """dp_accounting's PLDAccountant (value_discretization_interval 1e-4, pessimistic
    connect-the-dots), which TF Privacy's privacy statement runs with the PLD accountant."""
    from dpcalc.core.presets.dp_accounting_pld import dp_accounting_pld_epsilon

    name = "PLDAccountant" if framework == "dp-accounting" else "privacy statement, PLD accountant"
    return PresetResult(framework, dp_accounting_pld_epsilon(steps, delta), "PLD", library,
                        f"{library} {name} (interval 1e-4, connect-the-dots), estimate")
