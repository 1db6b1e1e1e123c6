"""A budget file's mechanism releases as accountant phases (dpcalc.core.phases.Phase)."""

from __future__ import annotations

import math
from typing import cast

from dpcalc.core.budget.schema import Release
from dpcalc.core.phases import Neighbours, Phase, Sampling

# The releases an accountant of phases composes; zcdp and dp releases are their own groups.
PHASE_MECHANISMS = ("subsampled-gaussian", "gaussian", "laplace", "gdp")
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
    states its noise std (sigma or noise_std) and its L2 sensitivity for the budget's
    relation, and a gdp release its mu: both are the unsampled Gaussian at that distance over the
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
    if release.mechanism == "gaussian":
        std = release.number("sigma") if "sigma" in release.parameters else release.number("noise_std")
        return Phase("gaussian", 1.0, shift * std / sensitivity, None, count, neighbours=neighbours)
    if release.mechanism == "laplace":
        # Scale relative to the L1 sensitivity: b / sensitivity, or 1/epsilon when epsilon is given.
        scale = release.number("scale") / sensitivity if "scale" in release.parameters else 1.0 / release.number("epsilon")
        return Phase("laplace", 1.0, None, scale, count, neighbours=neighbours)
    if release.mechanism == "gdp":
        # mu-GDP is exactly the Gaussian mechanism with noise multiplier 1/mu (Dong, Roth, Su 2022).
        return Phase("gaussian", 1.0, shift / release.number("mu"), None, count, neighbours=neighbours)
    raise ValueError(f"release {release.name!r} ({release.mechanism}) is not a mechanism phase")
