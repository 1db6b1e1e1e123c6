"""`dpcalc convert`: `convert`, which applies group privacy to the source and dispatches to the
conversion of `dpcalc.core.conversions.converters` for its (source, target) pair.

Pure Python: on the start-up path of `convert`. Which conversions exist, and the refusals of the
others, are in `dpcalc.core.conversions.table` (docs/mathematics.md §1, §2, §6, §7).
"""

from __future__ import annotations

from typing import Any

from dpcalc.core.conversions.converters import CONVERTERS, _mu_of
from dpcalc.core.conversions.table import GroupRefusal, Guarantee, Target, _dp_pair, _given, group_refusal, refusal
from dpcalc.core.record import Value, replace
from dpcalc.core.validation import POSITIVE_INTEGER


class Conversion(Value):
    """The result of `convert`: the target's values (keys as documented), the theorem used, warnings.

    `grouped` is the source after group privacy (the source itself when group = 1).
    """

    source: Guarantee
    target: Target
    group: int
    grouped: Guarantee
    values: dict[str, Any]
    theorem: str
    warnings: tuple[str, ...] = ()

    @property
    def epsilon(self) -> float | None:
        """The epsilon a budget is checked against: present when the target is (epsilon, delta)-DP
        (docs/mathematics.md §6)."""
        return self.values.get("epsilon") if self.target.notion == "dp" else None


def _apply_group(source: Guarantee, group: int) -> tuple[Guarantee, str]:
    """The source after group privacy for `group` individuals (docs/mathematics.md §6), and its citation."""
    if group == 1:
        return source, ""
    notion = source.notion
    if notion == "dp":
        from dpcalc.core.conversions.guarantees import group_dp  # only with --group: start-up time

        epsilon, delta = group_dp(*_dp_pair(source), group)
        return replace(source, epsilon=epsilon, delta=delta), (
            f"group privacy, k = {group}: (k eps, delta (e^(k eps) - 1)/(e^eps - 1)) by chaining "
            "(Dwork, Roth 2014, Thm 2.2)"
        )
    if notion == "gdp":
        return replace(source, mu=group * _mu_of(source)), f"group privacy, k = {group}: k mu (Dong, Roth, Su 2022)"
    if notion == "zcdp":
        return replace(source, rho=group * group * _given(source.rho)), (
            f"group privacy, k = {group}: k^2 rho (Bun, Steinke 2016)"
        )
    if notion in ("gaussian", "laplace"):
        norm = "L2" if notion == "gaussian" else "L1"
        return replace(source, sensitivity=group * source.sensitivity), (
            f"group privacy, k = {group}: {norm} sensitivity k Delta (triangle inequality)"
        )
    raise GroupRefusal(notion, "", "source")


def target_takes_delta_or_epsilon(source: str, target: str) -> bool:
    """Whether `source -> target` reads a target delta or epsilon: dp targets, except from dp, whose
    (epsilon, delta) is the source itself (docs/mathematics.md §6). From laplace the target's delta
    or epsilon is optional (neither: the pure-DP epsilon at delta = 0)."""
    return target == "dp" and source != "dp"


def convert(source: Guarantee, target: Target, group: int = 1) -> Conversion:
    """Convert `source` to `target`, after group privacy for `group` individuals
    (docs/mathematics.md §1, §2, §6, §7).

    Raises ConversionError, with the reason and what exists instead, for a conversion that does
    not exist (e.g. approximate DP to zCDP) or that dpcalc does not offer; GroupRefusal (a
    ConversionError) when group privacy does not apply.
    """
    POSITIVE_INTEGER.check("group", group)
    refused = refusal(source.notion, target.notion)
    if refused is None and group > 1:
        refused = group_refusal(source.notion, target.notion)
    if refused is not None:
        raise refused
    grouped, group_theorem = _apply_group(source, group)
    outcome = CONVERTERS[(source.notion, target.notion)](grouped, target)
    theorem = "; then ".join(part for part in (group_theorem, outcome.theorem) if part) or "identity"
    return Conversion(
        source=source,
        target=target,
        group=group,
        grouped=grouped,
        values=outcome.values,
        theorem=theorem,
        warnings=outcome.warnings,
    )
