"""`dpcalc mechanism gaussian`: the Gaussian mechanism, isotropic or with per-coordinate noise."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import partial
from typing import TYPE_CHECKING, Annotated

from dpcalc.cli.declare import App, Group, Option
from dpcalc.cli.laplace_eps import parse_probability
from dpcalc.cli.mechanism.given import (
    accuracy_document,
    accuracy_rows,
    answer,
    complement,
    notes,
    option_error,
    privacy_alone_or_two,
)
from dpcalc.cli.options import (
    DEFAULT_DELTA,
    InputError,
    Json,
    MaxEpsilon,
    Numbers,
    Parsed,
    as_typed,
    conflict,
    number,
    parse_list,
)
from dpcalc.cli.output import Answer, Report, Table, format_lower, format_number, format_upper
from dpcalc.core.validation import OPEN_UNIT, POSITIVE, POSITIVE_INTEGER, ParameterError

if TYPE_CHECKING:
    from dpcalc.core.mechanisms.gaussian import GaussianMechanism, PerCoordinateGaussian

app = App()

HELP = """The Gaussian mechanism: privacy, noise and accuracy - give two, get the third.

Noise N(0, s^2) on each of --dims coordinates of a query of L2 sensitivity --sensitivity: the
noise std s is --noise-std, or --sigma (the noise multiplier, s / sensitivity, as in every
dpcalc command) at sensitivity 1. Privacy is epsilon at --delta: exact for a given noise
(Balle, Wang 2018, Thm 8); from --eps, the noise is calibrated analytically (Thm 8) or
classically (Dwork, Roth 2014, Thm A.1, eps < 1). The error bound holds for all coordinates at
once: P(every |noise| <= error) = (1 - 2 Phi(-error/s))^dims, exact for independent noise (no
union bound). Privacy or the noise alone gives the rest, with the error bound at confidences
0.5, 0.9, 0.95 and 0.99.

Per-coordinate noise (--sensitivities and --noise-stds, one value per coordinate or layer): the
mechanism is mu-GDP with mu = sqrt(sum s_i^2 / sigma_i^2) (Xu et al. 2020, ADADP, Lemma 1),
exact under per-coordinate or per-layer clipping, an upper bound under --clipping joint. With
--target-multiplier or --eps, the factor that scales every sigma_i to meet that target.

\b
Examples:
  dpcalc mechanism gaussian --eps 1 --delta 1e-5 --confidence 0.95 --dims 100
  dpcalc mechanism gaussian --noise-std 4 --sensitivity 2 --delta 1e-5
  dpcalc mechanism gaussian --sigma 4 --error 10 --dims 1000 --json
  dpcalc mechanism gaussian --eps 0.5 --error 20 --calibration classic
  dpcalc mechanism gaussian --sensitivities 12,6 --noise-stds 17,8.5 --target-multiplier 1
"""


class CalibrationChoice(str, Enum):
    analytic = "analytic"
    classic = "classic"


class ClippingChoice(str, Enum):
    per_coordinate = "per-coordinate"
    per_layer = "per-layer"
    joint = "joint"


Epsilon = Annotated[
    float | None,
    Option("--eps", metavar="FLOAT", help="Epsilon at --delta, > 0 (with --noise-stds: the target).",
           click_type=number(POSITIVE)),
]
Delta = Annotated[
    float,
    Option("--delta", metavar="FLOAT", help=f"Delta, in (0, 1) [default: {DEFAULT_DELTA:g}].",
           show_default=False, click_type=number(OPEN_UNIT)),
]
Sigma = Annotated[
    float | None,
    Option("--sigma", metavar="FLOAT",
           help="Instead of --eps: the noise multiplier, noise std / sensitivity, > 0 (with --sensitivity: "
                "give --noise-std).", click_type=number(POSITIVE)),
]
NoiseStd = Annotated[
    float | None,
    Option("--noise-std", metavar="FLOAT", help="Instead of --eps: the noise std itself, > 0.",
           click_type=number(POSITIVE)),
]
Sensitivity = Annotated[
    float,
    Option("--sensitivity", metavar="FLOAT", help="L2 sensitivity of the query, > 0.  [default: 1]",
           show_default=False, click_type=number(POSITIVE)),
]
Error = Annotated[
    float | None,
    Option("--error", metavar="FLOAT", help="Error bound: every coordinate within +-error, > 0.",
           click_type=number(POSITIVE)),
]
Confidence = Annotated[
    float | None,
    Option("--confidence", metavar="FLOAT", help="Probability that every coordinate is within the error bound, in (0, 1).",
           click_type=Parsed(parse_probability)),
]
Dims = Annotated[
    int,
    Option("--dims", metavar="INT", help="Number of noisy coordinates, >= 1.", show_default=True,
           click_type=number(POSITIVE_INTEGER)),
]
Calibration = Annotated[
    CalibrationChoice,
    Option("--calibration", case_sensitive=False,
           help="How sigma is calibrated from --eps: analytic (Balle, Wang 2018; default) or classic "
                "(Dwork, Roth 2014, Thm A.1, eps < 1)."),
]
Sensitivities = Annotated[
    Numbers | None,
    Option("--sensitivities", metavar="LIST", help="Per-coordinate noise: sensitivity s_i of each coordinate "
           "or layer, a comma list of values > 0.", click_type=Parsed(partial(parse_list, interval=POSITIVE))),
]
# --noise-stds, not --sigmas: --sigma is the noise multiplier (--sigmas is refused with a pointer, cli.elsewhere)
NoiseStds = Annotated[
    Numbers | None,
    Option("--noise-stds", metavar="LIST", help="Per-coordinate noise: noise std sigma_i of each coordinate or "
           "layer, a comma list as long as --sensitivities.", click_type=Parsed(partial(parse_list, interval=POSITIVE))),
]
Clipping = Annotated[
    ClippingChoice,
    Option("--clipping", case_sensitive=False,
           help="With --noise-stds: per-coordinate or per-layer (all s_i reached at once: mu exact; "
                "default per-coordinate) or joint (mu an upper bound)."),
]
TargetMultiplier = Annotated[
    float | None,
    Option("--target-multiplier", metavar="FLOAT",
           help="With --noise-stds: the isotropic noise multiplier to meet, > 0 (gives the scale factor).",
           click_type=number(POSITIVE)),
]


@dataclass(frozen=True, repr=False, eq=False)
class GaussianRequest:
    """The options of `mechanism gaussian` as given."""

    eps: Epsilon = None
    delta: Delta = DEFAULT_DELTA
    sigma: Sigma = None
    noise_std: NoiseStd = None
    sensitivity: Sensitivity = 1.0
    error: Error = None
    confidence: Confidence = None
    dims: Dims = 1
    calibration: Calibration = CalibrationChoice.analytic
    sensitivities: Sensitivities = None
    noise_stds: NoiseStds = None
    clipping: Clipping = ClippingChoice.per_coordinate
    target_multiplier: TargetMultiplier = None
    max_eps: MaxEpsilon = None
    json_output: Json = False

    @property
    def per_coordinate(self) -> bool:
        return self.sensitivities is not None or self.noise_stds is not None

    @property
    def std(self) -> float | None:
        """The noise std given: --noise-std, or --sigma at sensitivity 1 (--sigma beside --sensitivity is refused)."""
        return self.noise_std if self.noise_std is not None else self.sigma

    @property
    def noise_option(self) -> str | None:
        return "--noise-std" if self.noise_std is not None else "--sigma" if self.sigma is not None else None


@app.command("gaussian", help=HELP)
def gaussian(request: Annotated[GaussianRequest, Group()]) -> Answer:
    # the options written on the command line (a default written out counts: --dims 1 beside --noise-stds is refused)
    given = given_on_command_line()
    report = _per_coordinate(request, given) if request.per_coordinate else _isotropic(request, given)
    return answer(report, request.json_output, request.max_eps)


def given_on_command_line() -> frozenset[str]:
    """The parameters of the running command that were written on its command line."""
    import click

    ctx = click.get_current_context()
    return frozenset(name for name in ctx.params
                     if (source := ctx.get_parameter_source(name)) is not None and source.name == "COMMANDLINE")


def _check_isotropic(request: GaussianRequest, given: frozenset[str]) -> None:
    for name, option in (("clipping", "--clipping"), ("target_multiplier", "--target-multiplier")):
        if name in given:
            raise InputError(f"{option} goes with --sensitivities and --noise-stds (per-coordinate noise)",
                             options=(option, "--sensitivities", "--noise-stds"))
    eps, noise = request.eps, request.noise_option
    if request.sigma is not None and request.noise_std is not None:
        raise conflict("--sigma", "--noise-std", "sigma is noise std / sensitivity; give one")
    if request.sigma is not None and "sensitivity" in given:
        # --sigma was the noise std here once: beside a sensitivity, the two meanings differ
        raise InputError("--sensitivity goes with --noise-std: --sigma is the noise multiplier, noise std / "
                         "sensitivity (for the noise std itself give --noise-std)",
                         options=("--sensitivity", "--noise-std", "--sigma"))
    if eps is not None and noise is not None:
        raise conflict("--eps", noise, "give one (the noise is calibrated from epsilon at --delta)")
    privacy_alone_or_two("--eps" if eps is not None else noise, request.error is not None,
                         request.confidence is not None, options=("--eps", "--sigma", "--noise-std"),
                         example="--eps 1 --confidence 0.95 to get the error bound")
    if "calibration" in given and eps is None:
        raise InputError("--calibration applies with --eps (how the noise is calibrated from epsilon); with "
                         "--sigma, --noise-std, or --error and --confidence, epsilon is exact",
                         options=("--calibration", "--eps", "--sigma", "--noise-std", "--error", "--confidence"))
    if request.calibration.value == "classic" and eps is not None and not eps < 1.0:
        raise InputError(f"--calibration classic needs --eps in (0, 1) (Dwork, Roth 2014, Thm A.1), got {eps:g}; "
                         "use --calibration analytic", options=("--calibration", "--eps"), allowed="in (0, 1)",
                         got=as_typed(eps))


def _isotropic(request: GaussianRequest, given: frozenset[str]) -> Report:
    """The isotropic mechanism: two of privacy (epsilon or sigma), error and confidence give the third."""
    _check_isotropic(request, given)
    from dpcalc.core.mechanisms import gaussian as core

    try:
        result = core.gaussian_mechanism(
            epsilon=request.eps, sigma=request.std, error=request.error, confidence=request.confidence,
            delta=request.delta, sensitivity=request.sensitivity, dims=request.dims,
            calibration=request.calibration.value, failure_probability_exact=complement(request.confidence),
        )
    except ParameterError as problem:
        raise option_error(problem, {"sigma": request.noise_option or "--sigma", "eps": "--eps", "error": "--error"}) from None
    inputs = {"eps": request.eps, "delta": request.delta, "sigma": request.sigma, "noise_std": request.noise_std,
              "sensitivity": request.sensitivity, "error": request.error, "confidence": request.confidence,
              "dims": request.dims, "calibration": request.calibration.value, "max_eps": request.max_eps}
    return Report(
        command="mechanism gaussian",
        inputs=inputs,
        result={
            "epsilon": result.epsilon,
            "delta": result.delta,
            "noise_std": result.sigma,
            "noise_multiplier": result.noise_multiplier,
            "mu": result.mu,
            "sensitivity": result.sensitivity,
            "calibration": result.calibration,
            "noise_std_analytic": result.sigma_analytic,
            "noise_std_classic": result.sigma_classic,
            "classic_valid": result.classic_valid,
            "dims": result.dims,
            "error": result.error,
            "confidence": result.confidence,
            "failure_probability": result.failure_probability,
            "per_coordinate_failure_probability": result.per_coordinate_failure_probability,
            "simultaneous": "exact product over independent coordinates",
            "accuracy": accuracy_document(result.accuracy),
            "solved_for": result.solved_for,
            "source": result.source,
        },
        tables=_tables(result, request.std is not None),
        warnings=list(result.warnings),
        epsilon=result.epsilon,
        basis="the Gaussian mechanism's exact epsilon at delta (Balle and Wang 2018, Thm 8)",
    )


def _check_per_coordinate(request: GaussianRequest, given: frozenset[str]) -> tuple[Numbers, Numbers]:
    sensitivities, sigmas = request.sensitivities, request.noise_stds
    if sensitivities is None or sigmas is None:
        missing, present = ("--noise-stds", "--sensitivities") if sigmas is None else ("--sensitivities", "--noise-stds")
        raise InputError(f"{present} needs {missing} (per-coordinate noise: one sensitivity and one noise std per "
                         "coordinate or layer)", options=(present, missing))
    for name, option in (("sigma", "--sigma"), ("noise_std", "--noise-std"), ("error", "--error"), ("confidence", "--confidence"),
                         ("dims", "--dims"), ("sensitivity", "--sensitivity"), ("calibration", "--calibration")):
        if name in given:
            raise InputError(f"{option} does not apply with --sensitivities and --noise-stds (per-coordinate noise "
                             "reports mu, the noise multiplier and epsilon at --delta)",
                             options=(option, "--sensitivities", "--noise-stds", "--delta"))
    if len(sensitivities) != len(sigmas):
        raise InputError(f"--noise-stds must have as many values as --sensitivities ({len(sensitivities)}), "
                         f"got {len(sigmas)}", options=("--noise-stds", "--sensitivities"),
                         allowed=f"as many values as --sensitivities ({len(sensitivities)})")
    if request.eps is not None and request.target_multiplier is not None:
        raise conflict("--eps", "--target-multiplier", "give one target")
    return sensitivities, sigmas


def _per_coordinate(request: GaussianRequest, given: frozenset[str]) -> Report:
    """Per-coordinate noise (--sensitivities, --noise-stds): mu, epsilon at delta, and the factor to a target."""
    sensitivities, sigmas = _check_per_coordinate(request, given)
    from dpcalc.core.mechanisms import gaussian as core

    clipping = request.clipping.value
    try:
        result = core.per_coordinate_gaussian(list(sensitivities), list(sigmas), delta=request.delta,
                                              clipping=clipping,  # type: ignore[arg-type]
                                              target_multiplier=request.target_multiplier, target_epsilon=request.eps)
    except ParameterError as problem:
        raise option_error(problem, {"sensitivities / sigmas": "--sensitivities / --noise-stds", "sigmas": "--noise-stds"}) from None
    inputs = {"sensitivities": list(sensitivities), "noise_stds": list(sigmas), "delta": request.delta, "clipping": clipping,
              "eps": request.eps, "target_multiplier": request.target_multiplier, "max_eps": request.max_eps}
    return Report(
        command="mechanism gaussian",
        inputs=inputs,
        result={
            "mu": result.mu,
            "noise_multiplier": result.noise_multiplier,
            "delta": result.delta,
            "epsilon": result.epsilon,
            "clipping": result.clipping,
            "exact": result.exact,
            "target_multiplier": result.target_multiplier,
            "target_epsilon": result.target_epsilon,
            "scale_factor": result.scale_factor,
            "scaled_noise_stds": None if result.scaled_sigmas is None else list(result.scaled_sigmas),
            "meets_target": result.meets_target,
            "solved_for": result.solved_for,
            "source": result.source,
        },
        tables=[_per_coordinate_table(result)],
        warnings=list(result.warnings),
        epsilon=result.epsilon,
        basis=("exact epsilon at delta of mu-GDP (Dong, Roth, Su 2022, Cor. 2.13), mu by Xu et al. 2020, Lemma 1"
               + ("" if result.exact else ", an upper bound under joint clipping")),
    )


def _tables(result: GaussianMechanism, noise_given: bool) -> list[Table]:
    """The mechanism's table; from privacy alone, then its error bound at the standard confidences."""
    note = notes(result.solved_for, ("epsilon", "error", "confidence"))
    if noise_given:
        note["epsilon"] = "computed"
    if result.solved_for == "epsilon" and not noise_given:
        noise_note = "computed from error and confidence"
    elif noise_given:
        noise_note = "given"
    else:
        noise_note = "calibrated: " + ("analytic (Balle-Wang Thm 8)" if result.calibration == "analytic"
                                       else "classic (Dwork-Roth Thm A.1)")
    coordinates = "the coordinate" if result.dims == 1 else f"all {result.dims} coordinates"
    rows = [
        ("epsilon", format_upper(result.epsilon), "exact at delta for this noise (Balle-Wang Thm 8)"
         if note["epsilon"] == "given" else "computed: exact at delta (Balle-Wang Thm 8)"),
        ("delta", format_number(result.delta), "given"),
        ("noise std", format_upper(result.sigma), noise_note),
        ("noise multiplier", format_number(result.noise_multiplier), "noise std / sensitivity = 1/mu"),
        ("classic std", format_upper(result.sigma_classic),
         "Dwork-Roth Thm A.1" + ("" if result.classic_valid else ": not valid, eps >= 1")),
        ("sensitivity", format_number(result.sensitivity), "L2"),
    ]
    if result.error is not None:
        rows += [
            ("error", format_upper(result.error), f"{note['error']}: {coordinates} within"),
            ("confidence", format_lower(result.confidence), f"{note['confidence']}: exact product"),
            ("1 - confidence", format_number(result.failure_probability), "some coordinate misses"),
            ("per coordinate", format_number(result.per_coordinate_failure_probability),
             "one coordinate misses: 2 Phi(-error/std)"),
        ]
    tables = [Table(columns=("quantity", "value", "note"), rows=rows,
                    title=f"Gaussian mechanism: dims = {result.dims}, {result.calibration} calibration")]
    if result.error is None:
        tables.append(Table(columns=("confidence", f"error ({coordinates})"), rows=accuracy_rows(result.accuracy),
                            title="Accuracy: every |noise| <= error (exact product)"))
    return tables


def _per_coordinate_table(result: PerCoordinateGaussian) -> Table:
    rows = [
        ("mu", format_upper(result.mu), "ADADP Lemma 1" + ("" if result.exact else ", upper bound")),
        ("noise multiplier", format_lower(result.noise_multiplier), "isotropic equivalent, 1/mu"),
        ("epsilon", format_upper(result.epsilon), f"at delta {format_number(result.delta)} (mu-GDP, exact)"),
        ("clipping", result.clipping, "all s_i reached at once: exact" if result.exact else "joint: upper bound"),
    ]
    if result.scale_factor is not None:
        target = (f"noise multiplier {format_number(result.target_multiplier)}" if result.target_multiplier is not None
                  else f"epsilon {format_number(result.target_epsilon)} at delta")
        rows.append(("scale factor c", format_upper(result.scale_factor), f"c * sigma_i meets {target}"))
        rows.append(("scaled noise stds", ", ".join(format_upper(s) for s in result.scaled_sigmas or ()), "c * sigma_i"))
        rows.append(("meets target", format_number(result.meets_target), "as given (c <= 1)"))
    return Table(columns=("quantity", "value", "note"), rows=rows,
                 title=f"Gaussian mechanism, per-coordinate noise: {len(result.sigmas)} coordinates or layers")
