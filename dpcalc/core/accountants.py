"""The accountants behind one interface: epsilon of a run of phases at delta, picked by name.

A run is a sequence of `Phase`s (dpcalc.core.phases); each accountant turns it into an
epsilon at a given delta (`Accounted`: the figure, a lower bound where there is one, the
accountant's warnings and what was used):

    pld  the tight PLD accountant (dpcalc.core.pld.tight_epsilon), a certified upper bound;
         outside its grid's range it certifies by closed forms (docs/pld-soundness.md)
    rdp  RDP with the default orders and the improved conversion (dpcalc.core.rdp), an upper
         bound (docs/mathematics.md §2)
    gdp  the central-limit approximation: mu = p sqrt(T (e^(1/sigma^2) - 1)) per phase (Bu,
         Dong, Long, Su 2020, Thm 4), mu_i-GDP composing to sqrt(sum mu_i^2)-GDP (Dong, Roth,
         Su 2022, Cor. 3.3), epsilon(delta) by DRS Cor. 2.13. A limit, not a bound.

`certified` says whether a figure may gate a budget: pld's and rdp's may, gdp's may not. The
users: calibration (dpcalc.core.calibrate) searches with any of the three, a budget file
(dpcalc.core.budget) composes its releases with a certified one, and the command line's tight
column beside `gdp` and `rdp` is the PLD accountant's figure. `shared_over_steps` accounts the
runs of a sweep that differ only in T by one PLD composition.

Pure Python at import: the accountants load numpy only when they first account a run.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from dpcalc.core.phases import NOTHING_SAMPLED, Phase, samples_nothing

if TYPE_CHECKING:
    from dpcalc.core.pld import PLDResult

AccountantName = Literal["pld", "rdp", "gdp"]

# What `Accounted.method` says for the PLD accountant's figures.
EXACT_GAUSSIAN = "exact (Gaussian DP)"
EXACT_LAPLACE = "exact (Laplace composition)"
PLD_CERTIFIED = "PLD (certified)"
CLOSED_FORMS = "closed forms (certified)"


@dataclass(frozen=True)
class Accounted:
    """An accountant's epsilon of one run at one delta.

    `epsilon` is an upper bound when the accountant is `certified`, else an approximation;
    `epsilon_lower` is a certified lower bound where the accountant has one (pld on its grid).
    `method` names what gave the figure (e.g. "PLD (certified)", "closed forms (certified)").
    """

    epsilon: float
    epsilon_lower: float | None
    warnings: tuple[str, ...]
    method: str


class Accountant(Protocol):
    """Epsilon at delta of a run of phases; `certified`: may the figure gate a budget."""

    name: AccountantName
    certified: bool

    def epsilon(self, phases: Sequence[Phase], delta: float) -> Accounted:
        """Epsilon of the composition of `phases` at `delta`."""
        ...


class GDPAccountant:
    """The central-limit GDP accountant (BDLS Thm 4; DRS Cor. 3.3 and 2.13): an approximation.

    Every subsampled phase gets the central-limit mu; an unsampled one (p = 1) its exact
    sqrt(T) / sigma, as `dpcalc gdp` does (the central-limit formula would give sqrt(T (e^(1/sigma^2)
    - 1)) there). Gaussian phases only.
    """

    name: AccountantName = "gdp"
    certified = False

    def epsilon(self, phases: Sequence[Phase], delta: float) -> Accounted:
        """The central-limit epsilon at delta (an approximation, never certified)."""
        from dpcalc.core import gdp

        for phase in phases:
            if phase.mechanism != "gaussian":
                raise ValueError(f"the central-limit GDP accountant takes Gaussian phases, got {phase.mechanism!r}")
            if phase.sampling != "poisson" or phase.neighbours == "replace-one" or phase.examples_per_user > 1:
                raise ValueError("the central-limit GDP accountant takes Poisson sampling of records under "
                                 "add-remove or zero-out neighbours")
        if all(samples_nothing(phase) for phase in phases):  # mu = 0 exactly: no approximation
            return Accounted(0.0, None, (NOTHING_SAMPLED,), "central-limit GDP")
        mus = [gdp.phase_mu(phase) for phase in phases]  # exact sqrt(T)/sigma unsampled, else central limit
        # hypot: sqrt of the sum of squares without overflow, and exactly mu for one phase
        epsilon = gdp.epsilon_for_delta(delta, math.hypot(*(mu for mu, _ in mus)))
        if not any(approximate for _, approximate in mus):
            return Accounted(epsilon, None, (), "exact GDP of unsampled phases")
        return Accounted(epsilon, None, (gdp.CLT_WARNING,), "central-limit GDP")


class RDPAccountant:
    """RDP with the default orders and the improved conversion (dpcalc.core.rdp.rdp_accountant).

    The per-step curve of each mechanism (mechanism, p, sigma or scale) is computed once per
    accountant and scaled by the steps (M17 Prop. 1), so a calibration over T or a sweep
    computes one curve; the figures are the accountant's own, to the last bit.
    """

    name: AccountantName = "rdp"
    certified = True

    def __init__(self) -> None:
        self._per_step: dict[object, object] = {}

    def epsilon(self, phases: Sequence[Phase], delta: float) -> Accounted:
        """The RDP accountant's epsilon at delta (an upper bound, M17 Prop. 1 and the conversion of
        docs/mathematics.md §2)."""
        from dpcalc.core import rdp

        result = rdp.rdp_accountant(phases, delta=delta, per_step_cache=self._per_step)
        nothing = (NOTHING_SAMPLED,) if all(samples_nothing(phase) for phase in phases) else ()
        return Accounted(result.epsilon, None, nothing + result.warnings, "RDP")


class PLDAccountant:
    """The tight PLD accountant at its default accuracy: the certified upper bound `dpcalc pld` prints.

    A run of unsubsampled Gaussian phases alone is exactly mu-GDP, and the PLD accountant gives
    its closed form (`pld.exact`; method EXACT_GAUSSIAN), certified to its floating-point error;
    so is a run of 2 to 48 unsubsampled Laplace releases of one scale (method EXACT_LAPLACE).
    With `exact_gaussian`, full-batch Gaussian phases among subsampled ones are first merged into
    one (`merge_full_batch_gaussians`): fewer phases for the grid, not a looser bound. Without it
    (calibration, the tight column) the phases go to the PLD accountant as given, so that its
    figure is the one `dpcalc pld` prints for the same phases.
    """

    name: AccountantName = "pld"
    certified = True

    def __init__(self, *, exact_gaussian: bool = False) -> None:
        self.exact_gaussian = exact_gaussian

    def epsilon(self, phases: Sequence[Phase], delta: float) -> Accounted:
        """The certified upper bound at delta (docs/pld-soundness.md), exact for runs of
        unsubsampled Gaussian phases."""
        if self.exact_gaussian:
            phases = merge_full_batch_gaussians(phases)
        # looked up on the module at each call (tests record the calls)
        from dpcalc.core import pld

        result = pld.tight_epsilon(phases, delta)
        # grid step 0: outside the grid's range the accountant certifies by closed forms
        exact_method = EXACT_LAPLACE if result.phases[0].mechanism == "laplace" else EXACT_GAUSSIAN
        method = exact_method if result.exact else PLD_CERTIFIED if result.grid_step > 0.0 else CLOSED_FORMS
        return Accounted(result.epsilon_upper, result.epsilon_lower, result.warnings, method)


_CLASSES = (PLDAccountant, RDPAccountant, GDPAccountant)
ACCOUNTANTS: tuple[str, ...] = tuple(kind.name for kind in _CLASSES)  # pld, rdp, gdp
# The accountants whose figures may gate a budget: pld, rdp.
CERTIFIED_ACCOUNTANTS: tuple[str, ...] = tuple(kind.name for kind in _CLASSES if kind.certified)


def accountant(name: str, *, exact_gaussian: bool = False) -> Accountant:
    """The accountant called `name` (one of ACCOUNTANTS); `exact_gaussian` is the PLD
    accountant's (see PLDAccountant: the others have no exact special case to take)."""
    if name == "pld":
        return PLDAccountant(exact_gaussian=exact_gaussian)
    if name == "rdp":
        return RDPAccountant()
    if name == "gdp":
        return GDPAccountant()
    raise ValueError(f"accountant must be one of {', '.join(ACCOUNTANTS)}, got accountant={name!r}")


def merge_full_batch_gaussians(phases: Sequence[Phase]) -> list[Phase]:
    """Gaussian phases without subsampling compose exactly into one: mu-GDP with
    mu^2 = sum of steps (shift / sigma)^2 (Dong, Roth, Su 2022, Cor. 3.3; the shift is 2 under
    replace-one), the Gaussian mechanism with noise multiplier shift/mu under the run's relation.
    Fewer, simpler phases make the PLD accountant faster, not looser."""
    from dpcalc.core.pld.exact import exact_mu, exact_run

    full = [phase for phase in phases if exact_run((phase,))]
    if len(full) <= 1:
        return list(phases)
    mu = exact_mu(full)
    if mu is None or not 0.0 < mu < math.inf:
        return list(phases)
    rest = [phase for phase in phases if not exact_run((phase,))]
    neighbours = full[0].neighbours  # one relation per run (pld.check_phases)
    # each phase's own shift (2 under replace-one, k at user level) is in mu; the merged phase is
    # example-level, its shift that of the relation
    shift = 2.0 if neighbours == "replace-one" else 1.0
    return rest + [Phase("gaussian", 1.0, shift / mu, None, 1, neighbours=neighbours)]


# A run of a sweep for `shared_over_steps`: (phases, target delta or None, accuracy).
SweepRun = tuple[Sequence[Phase], float | None, float]


def shared_over_steps(runs: Sequence[SweepRun]) -> dict[int, PLDResult]:
    """The PLD results (dpcalc.core.pld.PLDResult) of a sweep's runs that can share one composition.

    Single-phase runs at a target delta that differ only in T are accounted together by
    `pld.tight_epsilons_over_steps` (one discretisation, binary powers shared); the answer maps
    their positions in `runs` to their results, and leaves out the others (to be accounted one
    by one). Nothing is shared, and numpy not loaded, when no two runs differ only in T.
    """
    groups: dict[tuple[Phase, float, float], list[int]] = {}
    for index, (phases, delta, accuracy) in enumerate(runs):
        if len(phases) == 1 and delta is not None and phases[0].sampling_probability > 0.0:  # p = 0: exact, alone
            groups.setdefault((dataclasses.replace(phases[0], steps=1), delta, accuracy), []).append(index)
    shared: dict[int, PLDResult] = {}
    if not any(len({runs[i][0][0].steps for i in members}) > 1 for members in groups.values()):
        return shared
    from dpcalc.core.pld import tight_epsilons_over_steps

    for (phase, delta, accuracy), members in groups.items():
        steps = [runs[index][0][0].steps for index in members]
        shared.update(zip(members, tight_epsilons_over_steps(phase, delta, steps, accuracy=accuracy)))
    return shared


def certified_epsilon(phases: Sequence[Phase], delta: float) -> tuple[float | None, list[str]]:
    """(certified upper bound on epsilon at delta, warnings) from the PLD accountant, where it
    can account the run: a figure beside another answer (the gdp calibration's, `gdp`'s and
    `rdp`'s tight epsilon), left out (None) with a warning where the accountant cannot handle the
    run (extreme noise multipliers overflow its grid) rather than failing the whole call."""
    import warnings as python_warnings

    try:
        with python_warnings.catch_warnings():
            python_warnings.simplefilter("ignore", RuntimeWarning)
            accounted = PLDAccountant().epsilon(phases, delta)
    except (ArithmeticError, ValueError) as error:
        return None, [f"no tight epsilon: the PLD accountant could not account this run ({type(error).__name__})."]
    return accounted.epsilon, list(accounted.warnings)
