"""Each conversion of `dpcalc convert` that exists, one function a (source, target) pair, and
the table `CONVERTERS` that `dispatch.convert` looks them up in.

Pure Python: on the start-up path of `convert`. Each function cites its theorem in the result
it returns; the numerics are in `dpcalc.core.conversions.gaussian` and
`dpcalc.core.conversions.guarantees`, and in `dpcalc.core.gdp`, `dpcalc.core.zcdp`,
`dpcalc.core.rdp_conversion` and `dpcalc.core.laplace` (docs/mathematics.md §1, §2, §6, §7).
A Guarantee sets the fields of its notion (checked when it is made): `table._given`,
`_dp_pair` and `_rdp_point`, and `_mu_of` here, read them as floats.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from dpcalc.core.conversions.table import (
    ConversionError,
    Guarantee,
    Target,
    _dp_pair,
    _given,
    _rdp_point,
    _refused,
)
from dpcalc.core.record import Value

# The numerics each conversion uses are imported inside it: a call runs one conversion, and
# importing them all (gdp, zcdp, laplace, the RDP conversion, ...) cost about 10 ms of every
# `dpcalc convert` (measured). The one implementation of the Laplace profile is core.laplace,
# shared with rdp.


class _Outcome(Value):
    """What one conversion gives: the target's values, the theorem it used, warnings."""

    values: dict[str, Any]
    theorem: str
    warnings: tuple[str, ...] = ()


# ---------------------------------------------------------------------------------------------
# Shared by the conversions


def _mu_of(source: Guarantee) -> float:
    """mu of a gdp source, or sensitivity / sigma of a gaussian one (Dong, Roth, Su 2022)."""
    if source.notion == "gdp":
        return _given(source.mu)
    return source.sensitivity / _given(source.noise_std)


def _require_pure(source: Guarantee, target: str, reason: str) -> None:
    if _dp_pair(source)[1] > 0.0:
        raise _refused("dp", target, f"(eps, delta)-DP with delta > 0 {reason}")


_DELTA_POSITIVE_GDP = (
    "implies no mu-GDP for any mu: its trade-off curve starts at 1 - delta, below G_mu(0) = 1. "
    "To find the Gaussian noise that meets (eps, delta), use {to_gaussian}"
)
_DELTA_POSITIVE_RENYI = (
    "implies no {name}: with probability delta the output may single out an individual, which no "
    "Renyi divergence bound allows. Pure DP ({{delta_zero}}) converts ({formula}); the converse {converse} exists"
)


def _dp_target(
    epsilon_for: Callable[[float], float], delta_for: Callable[[float], float], target: Target
) -> tuple[float, float]:
    """(epsilon, delta) at the target's delta or epsilon, from the two directions of a conversion."""
    if target.delta is not None and target.epsilon is None:
        return epsilon_for(target.delta), target.delta
    if target.epsilon is not None and target.delta is None:
        return target.epsilon, delta_for(target.epsilon)
    raise ValueError("a dp target needs exactly one of delta and epsilon")


def _infinite_epsilon_warning(epsilon: float) -> tuple[str, ...]:
    if math.isinf(epsilon):
        return ("epsilon is infinite (overflows float64): no finite epsilon holds at this delta.",)
    return ()


def _curve(orders: Sequence[float], rdp_at: Callable[[float], float]) -> list[dict[str, float]]:
    return [{"order": order, "rdp": rdp_at(order)} for order in orders]


def _tradeoff(points: int, beta_at: Callable[[float], float]) -> list[dict[str, float]]:
    from dpcalc.core.conversions.guarantees import tradeoff_alphas

    return [{"alpha": alpha, "beta": beta_at(alpha)} for alpha in tradeoff_alphas(points)]


# --- from (epsilon, delta)-DP


def _dp_to_dp(source: Guarantee, target: Target) -> _Outcome:
    epsilon, delta = _dp_pair(source)
    warnings: tuple[str, ...] = ()
    if delta >= 1.0:
        warnings = ("delta reached 1 after group privacy: the guarantee is vacuous.",)
    return _Outcome({"epsilon": epsilon, "delta": delta}, "", warnings)


def _dp_to_gaussian(source: Guarantee, target: Target) -> _Outcome:
    from dpcalc.core.conversions.gaussian import calibrate_gaussian

    epsilon, delta = _dp_pair(source)
    if delta == 0.0:
        raise _refused(
            "dp", "gaussian",
            "no Gaussian noise gives pure DP (delta = 0): its privacy loss is unbounded. Give {delta} > 0, "
            "or use {to_laplace} for pure DP",
        )
    if delta >= 1.0:
        raise ConversionError("dp", "gaussian", "delta reached 1 after group privacy: there is nothing to calibrate")
    calibration = calibrate_gaussian(epsilon, delta, target.sensitivity)
    return _Outcome(
        {
            "noise_std": calibration.sigma,
            "noise_std_classic": calibration.sigma_classic,
            "classic_valid": calibration.classic_valid,
        },
        "Balle, Wang 2018, Thm 8 (analytic, exact); classic: Dwork, Roth 2014, Thm A.1",
        calibration.warnings,
    )


def _dp_to_laplace(source: Guarantee, target: Target) -> _Outcome:
    from dpcalc.core.laplace import laplace_pure_epsilon

    epsilon, delta = _dp_pair(source)
    if delta >= 1.0:
        raise ConversionError("dp", "laplace", "delta reached 1 after group privacy: there is nothing to calibrate")
    if delta == 0.0:
        if epsilon == 0.0:
            raise ConversionError("dp", "laplace", "{to_laplace} needs eps > 0: eps = 0 would need infinite noise")
        return _Outcome({"scale": target.sensitivity / epsilon}, "Dwork, Roth 2014, Thm 3.6")
    # delta(eps) grows with eps0 = sensitivity/scale: the smallest scale has the largest eps0
    return _Outcome(
        {"scale": target.sensitivity / laplace_pure_epsilon(epsilon, delta)},
        f"{_LAPLACE_PROFILE}, solved for the scale: sensitivity / (eps - 2 log(1 - delta)) (exact)",
    )


def _dp_to_gdp(source: Guarantee, target: Target) -> _Outcome:
    from dpcalc.core.conversions.guarantees import pure_dp_to_mu

    _require_pure(source, "gdp", _DELTA_POSITIVE_GDP)
    return _Outcome(
        {"mu": pure_dp_to_mu(_dp_pair(source)[0])},
        "pure eps-DP is mu-GDP for mu = 2 Phi^-1(e^eps/(1+e^eps)), tight "
        "(trade-off f_eps,0 vs G_mu; Dong, Roth, Su 2022)",
    )


def _dp_to_zcdp(source: Guarantee, target: Target) -> _Outcome:
    _require_pure(source, "zcdp", _DELTA_POSITIVE_RENYI.format(
        name="rho-zCDP for any rho", formula="rho = eps^2/2", converse="zcdp -> dp"))
    epsilon = _dp_pair(source)[0]
    return _Outcome({"rho": 0.5 * epsilon * epsilon}, "Bun, Steinke 2016, Prop. 1.4")


def _dp_to_rdp(source: Guarantee, target: Target) -> _Outcome:
    from dpcalc.core.conversions.guarantees import randomized_response_rdp

    _require_pure(source, "rdp", _DELTA_POSITIVE_RENYI.format(
        name="RDP curve", formula="the randomized-response curve", converse="rdp -> dp"))
    epsilon = _dp_pair(source)[0]
    return _Outcome(
        {"curve": _curve(target.orders, lambda order: randomized_response_rdp(order, epsilon))},
        "randomized response is the worst eps-DP pair (Kairouz, Oh, Viswanath 2015); its RDP: Mironov 2017",
    )


def _dp_to_tradeoff(source: Guarantee, target: Target) -> _Outcome:
    from dpcalc.core.conversions.guarantees import dp_tradeoff

    epsilon, delta = _dp_pair(source)
    return _Outcome(
        {"tradeoff": _tradeoff(target.points, lambda alpha: dp_tradeoff(alpha, epsilon, delta))},
        "f_eps,delta (Wasserman, Zhou 2010; Kairouz, Oh, Viswanath 2015; Dong, Roth, Su 2022)",
    )


# --- from mu-GDP and the Gaussian mechanism (mu = sensitivity / sigma)


def _gdp_to_dp(source: Guarantee, target: Target) -> _Outcome:
    from dpcalc.core import gdp

    mu = _mu_of(source)
    epsilon, delta = _dp_target(lambda d: gdp.epsilon_for_delta(d, mu), lambda e: gdp.delta_for_epsilon(e, mu), target)
    values = {"epsilon": epsilon, "delta": delta}
    if source.notion == "gdp":
        theorem = "Dong, Roth, Su 2022, Cor. 2.13 (exact)"
    else:
        values["mu"] = mu
        theorem = "Balle, Wang 2018, Thm 8 (exact; = Dong, Roth, Su 2022, Cor. 2.13 at mu = sensitivity/sigma)"
    return _Outcome(values, theorem, _infinite_epsilon_warning(epsilon))


def _gdp_to_gdp(source: Guarantee, target: Target) -> _Outcome:
    mu = _mu_of(source)
    theorem = "" if source.notion == "gdp" else "Gaussian mechanism: mu = sensitivity/sigma (Dong, Roth, Su 2022)"
    return _Outcome({"mu": mu}, theorem)


def _gdp_to_zcdp(source: Guarantee, target: Target) -> _Outcome:
    mu = _mu_of(source)
    if source.notion == "gdp":
        theorem = "mu-GDP is dominated by N(0,1) vs N(mu,1), which is mu^2/2-zCDP (Bun, Steinke 2016, Prop. 1.6)"
    else:
        theorem = "the Gaussian mechanism is sensitivity^2/(2 sigma^2)-zCDP (Bun, Steinke 2016, Prop. 1.6)"
    return _Outcome({"rho": 0.5 * mu * mu}, theorem)


def _gdp_to_rdp(source: Guarantee, target: Target) -> _Outcome:
    mu = _mu_of(source)
    half_square = 0.5 * mu * mu
    if source.notion == "gdp":
        theorem = (
            "mu-GDP is dominated by N(0,1) vs N(mu,1), whose RDP is order * mu^2 / 2 (Mironov 2017, Gaussian mechanism)"
        )
    else:
        theorem = "Gaussian RDP: order * sensitivity^2 / (2 sigma^2) (Mironov 2017, Gaussian mechanism)"
    return _Outcome({"curve": _curve(target.orders, lambda order: order * half_square)}, theorem)


def _gdp_to_gaussian(source: Guarantee, target: Target) -> _Outcome:
    return _Outcome(
        {"noise_std": target.sensitivity / _mu_of(source)},
        "the Gaussian mechanism is exactly (sensitivity/sigma)-GDP (Dong, Roth, Su 2022)",
    )


def _gdp_to_tradeoff(source: Guarantee, target: Target) -> _Outcome:
    from dpcalc.core import gdp

    mu = _mu_of(source)
    theorem = "G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu) (Dong, Roth, Su 2022, Def. 2.7)"
    if source.notion == "gaussian":
        theorem += " at mu = sensitivity/sigma"
    return _Outcome({"tradeoff": _tradeoff(target.points, lambda alpha: gdp.tradeoff(alpha, mu))}, theorem)


# --- from rho-zCDP


def _zcdp_to_dp(source: Guarantee, target: Target) -> _Outcome:
    from dpcalc.core import zcdp

    result = zcdp.zcdp_guarantee(_given(source.rho), delta=target.delta, epsilon=target.epsilon)
    if target.delta is not None:
        values = {"epsilon": result.epsilon, "epsilon_bs16": result.epsilon_bs16, "delta": result.delta}
    else:
        values = {"epsilon": result.epsilon, "delta": result.delta, "delta_bs16": result.delta_bs16}
    values["order"] = result.order
    return _Outcome(
        values,
        "Canonne, Kamath, Steinke 2020, Prop. 12, minimised over the order; bs16: Bun, Steinke 2016, Prop. 1.3",
        _infinite_epsilon_warning(result.epsilon),
    )


def _zcdp_to_zcdp(source: Guarantee, target: Target) -> _Outcome:
    return _Outcome({"rho": _given(source.rho)}, "")


def _zcdp_to_rdp(source: Guarantee, target: Target) -> _Outcome:
    rho = _given(source.rho)
    return _Outcome(
        {"curve": _curve(target.orders, lambda order: order * rho)},
        "definition of rho-zCDP: RDP order * rho at every order (Bun, Steinke 2016, Def. 1.1)",
    )


def _zcdp_to_gaussian(source: Guarantee, target: Target) -> _Outcome:
    return _Outcome(
        {"noise_std": target.sensitivity / math.sqrt(2.0 * _given(source.rho))},
        "the Gaussian mechanism is exactly sensitivity^2/(2 sigma^2)-zCDP (Bun, Steinke 2016, Prop. 1.6)",
    )


# --- from one RDP point


def _rdp_to_dp(source: Guarantee, target: Target) -> _Outcome:
    from dpcalc.core.rdp_conversion import rdp_to_delta, rdp_to_epsilon

    order, value = _rdp_point(source)
    if target.delta is not None:
        values = {
            "epsilon": rdp_to_epsilon(order, value, target.delta, "improved"),
            "epsilon_classic": rdp_to_epsilon(order, value, target.delta, "classic"),
            "delta": target.delta,
        }
    elif target.epsilon is None:
        raise ValueError("a dp target needs exactly one of delta and epsilon")
    else:
        values = {
            "epsilon": target.epsilon,
            "delta": rdp_to_delta(order, value, target.epsilon, "improved"),
            "delta_classic": rdp_to_delta(order, value, target.epsilon, "classic"),
        }
    return _Outcome(
        values,
        "Canonne, Kamath, Steinke 2020, Prop. 12 / Balle et al. 2020, Thm 21; classic: Mironov 2017, Prop. 3",
    )


def _rdp_to_gaussian(source: Guarantee, target: Target) -> _Outcome:
    order, value = _rdp_point(source)
    warnings: tuple[str, ...] = ()
    if value == 0.0:
        warnings = ("rdp-eps = 0 needs infinite noise.",)
        sigma = math.inf
    else:
        sigma = target.sensitivity * math.sqrt(order / (2.0 * value))
    return _Outcome(
        {"noise_std": sigma},
        "Gaussian RDP order * sensitivity^2 / (2 sigma^2) (Mironov 2017, Gaussian mechanism), solved for sigma",
        warnings,
    )


# --- from the Laplace mechanism


def _laplace_epsilon(source: Guarantee) -> float:
    """sensitivity / scale: the Laplace mechanism's pure-DP epsilon (Dwork, Roth 2014, Thm 3.6)."""
    return source.sensitivity / _given(source.scale)


_LAPLACE_PROFILE = (
    "the Laplace mechanism's tight privacy profile delta(eps) = 1 - e^((eps - eps0)/2) for eps < eps0 = "
    "sensitivity/scale (hockey-stick divergence of Lap(0, b) and Lap(sensitivity, b))"
)


def _laplace_to_dp(source: Guarantee, target: Target) -> _Outcome:
    from dpcalc.core.laplace import laplace_delta, laplace_epsilon

    pure = _laplace_epsilon(source)
    if target.delta is None and target.epsilon is None:
        return _Outcome(
            {"epsilon": pure, "delta": 0.0},
            "Dwork, Roth 2014, Thm 3.6 (pure DP, delta = 0; a target delta or epsilon gives the tight privacy profile)",
            _infinite_epsilon_warning(pure),
        )
    epsilon, delta = _dp_target(lambda d: laplace_epsilon(d, pure), lambda e: laplace_delta(e, pure), target)
    return _Outcome(
        {"epsilon": epsilon, "delta": delta}, f"{_LAPLACE_PROFILE} (exact)", _infinite_epsilon_warning(epsilon)
    )


def _laplace_to_zcdp(source: Guarantee, target: Target) -> _Outcome:
    epsilon = _laplace_epsilon(source)
    return _Outcome(
        {"rho": 0.5 * epsilon * epsilon},
        "pure eps-DP with eps = sensitivity/scale (Dwork, Roth 2014, Thm 3.6) is eps^2/2-zCDP "
        "(Bun, Steinke 2016, Prop. 1.4)",
    )


def _laplace_to_rdp(source: Guarantee, target: Target) -> _Outcome:
    from dpcalc.core.laplace import laplace_rdp

    return _Outcome(
        {"curve": _curve(target.orders, lambda order: laplace_rdp(order, _given(source.scale), source.sensitivity))},
        "Mironov 2017, Prop. 6 (scale / sensitivity)",
    )


CONVERTERS: dict[tuple[str, str], Callable[[Guarantee, Target], _Outcome]] = {
    ("dp", "dp"): _dp_to_dp,
    ("dp", "gaussian"): _dp_to_gaussian,
    ("dp", "laplace"): _dp_to_laplace,
    ("dp", "gdp"): _dp_to_gdp,
    ("dp", "zcdp"): _dp_to_zcdp,
    ("dp", "rdp"): _dp_to_rdp,
    ("dp", "tradeoff"): _dp_to_tradeoff,
    ("gdp", "dp"): _gdp_to_dp,
    ("gdp", "gdp"): _gdp_to_gdp,
    ("gdp", "zcdp"): _gdp_to_zcdp,
    ("gdp", "rdp"): _gdp_to_rdp,
    ("gdp", "gaussian"): _gdp_to_gaussian,
    ("gdp", "tradeoff"): _gdp_to_tradeoff,
    ("zcdp", "dp"): _zcdp_to_dp,
    ("zcdp", "zcdp"): _zcdp_to_zcdp,
    ("zcdp", "rdp"): _zcdp_to_rdp,
    ("zcdp", "gaussian"): _zcdp_to_gaussian,
    ("rdp", "dp"): _rdp_to_dp,
    ("rdp", "gaussian"): _rdp_to_gaussian,
    ("gaussian", "dp"): _gdp_to_dp,
    ("gaussian", "gdp"): _gdp_to_gdp,
    ("gaussian", "zcdp"): _gdp_to_zcdp,
    ("gaussian", "rdp"): _gdp_to_rdp,
    ("gaussian", "tradeoff"): _gdp_to_tradeoff,
    ("laplace", "dp"): _laplace_to_dp,
    ("laplace", "zcdp"): _laplace_to_zcdp,
    ("laplace", "rdp"): _laplace_to_rdp,
}
