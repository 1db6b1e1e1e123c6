"""A budget file's mechanism releases as accountant phases (dpcalc.core.phases.Phase)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from dpcalc.core.budget.schema import Release
from dpcalc.core.phases import Neighbours, Phase, Sampling, samples_nothing

if TYPE_CHECKING:
    from dpcalc.core.pld.truncation import Truncation

# The releases an accountant of phases composes; zcdp and dp releases are their own groups.
PHASE_MECHANISMS = ("subsampled-gaussian", "gaussian", "laplace", "gdp", "bandmf")
# The releases composed as pure or (eps, delta)-DP pairs: dp, and randomized response, which is
# exactly eps-DP (its likelihood ratio e^eps is attained) and the worst case of every eps-DP
# mechanism under composition (Kairouz, Oh, Viswanath 2015), so the optimum composes it exactly.
DP_MECHANISMS = ("dp", "randomized-response")
# The textbook mechanisms of `dpcalc mechanism` given by their pure epsilon. Each is eps-DP; the
# exponential mechanism (and noisy max with Gumbel noise, the same mechanism) is also
# eps-bounded-range (`bounded_range`), which composes better (docs/mathematics.md, "Mechanisms:
# exponential").
PURE_DP_MECHANISMS = ("exponential", "noisy-max", "svt")


def bounded_range(release: Release) -> bool:
    """Whether a release is an exponential mechanism: eps-bounded-range at its epsilon (Durfee,
    Rogers 2019), hence eps^2/8-zCDP (Cesar, Rogers 2021). Both sampling rules of
    `dpcalc mechanism exponential` are: the privacy loss of any two outputs differs by at most eps."""
    return release.mechanism == "exponential" or (release.mechanism == "noisy-max" and release.noise == "gumbel")


def privacy_basis(release: Release) -> str:
    """The theorem that makes a textbook-mechanism release eps-DP at its epsilon."""
    if bounded_range(release):
        return "eps-DP, eps-bounded range (Dwork and Roth 2014, Thm 3.10; Durfee and Rogers 2019)"
    if release.mechanism == "svt":
        return "eps-DP (Dwork and Roth 2014, Thm 3.23, 3.25)"
    if release.noise == "laplace":
        return "eps-DP (Dwork and Roth 2014, Claim 3.9)"
    return "eps-DP, permute-and-flip (McKenna and Sheldon 2020, Thm 1)"


def bandmf_phase(release: Release, neighbours: Neighbours = "add-remove") -> Phase:
    """A bandmf release's phase: the DP-SGD run on one of its b partitions (amplified BandMF,
    `core.mf.accounting.amplified_bandmf`; an upper bound for b > 1, DP-SGD itself for b = 1).
    Raises the core's ParameterError for bands the run cannot hold (`load` words it)."""
    from dpcalc.core.mf.accounting import amplified_bandmf, partition_probability

    bands = int(release.number("bands"))
    run = Phase("gaussian", sampling_probability_of(release), release.number("sigma"), None, steps_of(release),
                neighbours=neighbours)
    probability = None
    if "n" in release.parameters:
        probability = partition_probability(int(release.number("n")), int(release.number("batch_size")), bands)
    (phase,) = amplified_bandmf(run, bands, partition_probability=probability).phases
    return phase


def steps_of(release: Release) -> int:
    """T for a subsampled-gaussian release: given, or ceil(epochs * n / batch_size) (epochs / p
    steps, as the calibration's training form, docs/mathematics.md §7)."""
    if "T" in release.parameters:
        return int(release.parameters["T"])
    if "n" in release.parameters:
        return math.ceil(release.parameters["epochs"] * release.parameters["n"] / release.parameters["batch_size"])
    return math.ceil(release.parameters["epochs"] / release.parameters["p"])


def sampling_probability_of(release: Release) -> float:
    """p for a subsampled-gaussian release: given, or batch_size / n (the Poisson sampling rate,
    docs/mathematics.md, Notation)."""
    if "p" in release.parameters:
        return release.parameters["p"]
    return release.parameters["batch_size"] / release.parameters["n"]


def release_phase(release: Release, neighbours: Neighbours = "add-remove") -> Phase:
    """The accountant phase of a mechanism release (gaussian, subsampled-gaussian, laplace, gdp)
    in a budget stated under `neighbours`.

    A subsampled-gaussian release (clipping norm C, sigma = noise std / C, or noise_std with
    sensitivity C) takes the relation, its sampling and examples per user. A gaussian release
    states its noise multiplier sigma, or its noise std (noise_std) and L2 sensitivity, for the
    budget's relation, and a gdp release its mu: both are the unsampled Gaussian at that distance over the
    noise, written under the relation with the noise scaled by the relation's shift (2 under
    replace-one) so that shift / noise is unchanged. mu-GDP is the Gaussian mechanism with noise
    multiplier 1/mu (DRS Thm 2.7, docs/mathematics.md §1)."""
    count = int(release.get("count", 1))
    sensitivity = release.get("sensitivity", 1.0)
    shift = 2.0 if neighbours == "replace-one" else 1.0
    if release.mechanism == "subsampled-gaussian":
        per_epoch = None
        if "n" in release.parameters:
            per_epoch = -(-int(release.parameters["n"]) // int(release.parameters["batch_size"]))
        sampling = cast("Sampling", release.sampling)
        noise = (release.number("sigma") if "sigma" in release.parameters
                 else release.number("noise_std") / sensitivity)
        return Phase("gaussian", sampling_probability_of(release), noise, None, steps_of(release),
                     sampling=sampling, neighbours=neighbours, epoch_steps=per_epoch,
                     examples_per_user=int(release.get("examples_per_user", 1)))
    if release.mechanism == "bandmf":
        return bandmf_phase(release, neighbours)
    if release.mechanism == "gaussian":
        if "noise_stds" in release.lists:
            # per-coordinate noise: mu-GDP with mu = sqrt(sum s_i^2 / sigma_i^2) (Xu et al. 2020,
            # ADADP, Lemma 1), exact when all s_i are reached at once, an upper bound otherwise:
            # the Gaussian mechanism with noise multiplier 1/mu (DRS Thm 2.7)
            from dpcalc.core.mechanisms.gaussian import per_coordinate_mu

            mu = per_coordinate_mu(release.lists["sensitivities"], release.lists["noise_stds"])
            return Phase("gaussian", 1.0, shift / mu, None, count, neighbours=neighbours)
        # sigma is the multiplier itself (the schema refuses it beside sensitivity)
        multiplier = (release.number("sigma") if "sigma" in release.parameters
                      else release.number("noise_std") / sensitivity)
        return Phase("gaussian", 1.0, shift * multiplier, None, count, neighbours=neighbours)
    if release.mechanism == "laplace":
        # The L1 sensitivity from the domain: counts 1 (a record added, removed or zeroed out
        # changes one bin by 1), simplex 2, real the sensitivity given (Dwork, Roth 2014, Sec. 3.3).
        domain = release.texts.get("domain", "real")
        if domain != "real":
            sensitivity = 1.0 if domain == "counts" else 2.0
        # Scale relative to the L1 sensitivity: b / sensitivity, or 1/epsilon when epsilon is given.
        scale = release.number("scale") / sensitivity if "scale" in release.parameters else 1.0 / release.number("epsilon")
        return Phase("laplace", 1.0, None, scale, count, neighbours=neighbours)
    if release.mechanism == "gdp":
        # mu-GDP is exactly the Gaussian mechanism with noise multiplier 1/mu (Dong, Roth, Su 2022).
        return Phase("gaussian", 1.0, shift / release.number("mu"), None, count, neighbours=neighbours)
    raise ValueError(f"release {release.name!r} ({release.mechanism}) is not a mechanism phase")


def truncation_of(release: Release) -> Truncation | None:
    """A capped release's cap and dataset size (`core.pld.truncation.Truncation`), None without a cap."""
    if "max_batch_size" not in release.parameters:
        return None
    from dpcalc.core.pld.truncation import Truncation

    return Truncation(int(release.number("n")), int(release.number("max_batch_size")))


def overflow_of(release: Release, neighbours: Neighbours = "add-remove") -> float:
    """A certified upper bound on the probability that some batch of a capped subsampled-gaussian
    release (max_batch_size) exceeds its cap, on the largest dataset neighbouring one of n records
    (`core.pld.truncation.overflow_probability`); 0 for a release without a cap."""
    truncation = truncation_of(release)
    if truncation is None:
        return 0.0
    from dpcalc.core.pld.truncation import overflow_probability

    return overflow_probability([release_phase(release, neighbours)], truncation)


def cap_cost_of(release: Release, neighbours: Neighbours = "add-remove") -> float:
    """What a capped release may add to delta, per (1 + e^eps), on the side of the upper bounds:
    its overflow probability, or less, step by step under add-remove
    (`core.pld.truncation.cap_costs`); 0 for a release without a cap."""
    truncation = truncation_of(release)
    if truncation is None:
        return 0.0
    from dpcalc.core.pld.truncation import cap_costs

    return cap_costs([release_phase(release, neighbours)], truncation)[0]


def capped_phase_of(release: Release, neighbours: Neighbours = "add-remove") -> Phase:
    """A release's phase, with its batches capped where it has a cap and the step-by-step analysis
    applies (`core.pld.capped_phase.CappedPhase`): what the PLD accountant composes for it."""
    phase = release_phase(release, neighbours)
    truncation = truncation_of(release)
    if truncation is None:
        return phase
    from dpcalc.core.pld.capped_phase import per_step_covers
    from dpcalc.core.pld.truncation import capped

    if not per_step_covers(phase) or samples_nothing(phase):
        return phase
    return capped(phase, truncation)


def total_overflow(overflows: Sequence[float]) -> float:
    """A certified upper bound on the probability that a batch of any capped release overflows:
    the sum of their bounds (the union bound, whatever the dependence between releases), rounded
    up, at most 1."""
    terms = [value for value in overflows if value > 0.0]
    if len(terms) <= 1:
        return terms[0] if terms else 0.0  # one bound as it is: no sum to round
    return min(1.0, math.fsum(terms) * (1.0 + 1e-15))


# Releases of `dpcalc mechanism` accounted through a guarantee they state: ptr and
# smooth-sensitivity (laplace, cauchy) as (epsilon, delta) releases, smooth-sensitivity with
# laplace-log-normal noise as a zCDP release (docs/mathematics.md, "Mechanisms: ptr",
# "Mechanisms: smooth-sensitivity").
GUARANTEE_MECHANISMS = ("ptr", "smooth-sensitivity")


def guarantee_basis(release: Release) -> str:
    """The theorem behind the guarantee a ptr or smooth-sensitivity release is accounted with."""
    if release.mechanism == "ptr":
        return "PTR is (2 eps, delta)-DP: test eps + release eps (Dwork and Roth 2014, Sec. 7.2)"
    if release.noise == "laplace":
        return "(eps, delta)-DP smooth-sensitivity Laplace noise (Nissim, Raskhodnikova and Smith 2007)"
    if release.noise == "cauchy":
        return "eps-DP smooth-sensitivity Cauchy noise (Nissim, Raskhodnikova and Smith 2007)"
    if release.noise == "student-t":
        return "eps-DP smooth-sensitivity Student's T noise (Bun and Steinke 2019, Thm 31)"
    return "(eps^2/2)-CDP = rho-zCDP Laplace log-normal noise (Bun and Steinke 2019, Sec. 3.1.1)"


def guarantee_release(release: Release) -> Release:
    """A ptr or smooth-sensitivity release as the dp or zcdp release with its guarantee (the same
    name, count and line): ptr (2 epsilon, delta); smooth-sensitivity laplace (epsilon, delta),
    cauchy and student-t (epsilon, 0), laplace-log-normal rho = epsilon^2 / 2. Any other release
    unchanged."""
    if release.mechanism not in GUARANTEE_MECHANISMS:
        return release
    count = {"count": release.parameters["count"]} if "count" in release.parameters else {}
    epsilon = release.number("epsilon")
    if release.mechanism == "ptr":
        parameters = {"epsilon": 2.0 * epsilon, "delta": release.number("delta"), **count}
        return Release(release.name, "dp", parameters, release.line)
    if release.noise == "laplace-log-normal":
        return Release(release.name, "zcdp", {"rho": 0.5 * epsilon * epsilon, **count}, release.line)
    return Release(release.name, "dp", {"epsilon": epsilon, "delta": release.get("delta", 0.0), **count}, release.line)


def merged_phases(phases: Sequence[Phase]) -> list[Phase]:
    """The run with identical phases joined: phases that differ only in their steps, whose steps are
    independent (Poisson or fixed-size batches, or no subsampling), become one phase with the
    steps summed, in the place of the first. The composition is the same mechanism (T1 steps then
    T2 steps of one step mechanism are T1 + T2 steps of it), and the PLD accountant composes one
    phase's T steps by repeated squaring instead of convolving the phases one by one: 200
    identical releases cost one release of 200 times the steps. Shuffled and allocated phases,
    whose epochs are the unit of their accounting, are kept as given."""
    steps: dict[Phase, int] = {}  # a group (its phase at one step) -> its steps summed
    places: list[Phase | tuple[Phase]] = []  # a phase kept as given, or (its group,)
    for phase in phases:
        if phase.sampling not in ("poisson", "uniform"):
            places.append(phase)
            continue
        group = dataclasses.replace(phase, steps=1)
        if group not in steps:
            steps[group] = 0
            places.append((group,))
        steps[group] += phase.steps
    return [place if isinstance(place, Phase) else dataclasses.replace(place[0], steps=steps[place[0]])
            for place in places]
