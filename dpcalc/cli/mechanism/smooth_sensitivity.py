"""`dpcalc mechanism smooth-sensitivity`: admissible (alpha, beta), the noise and its accuracy."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Annotated

from dpcalc.cli.declare import App, Group, Option
from dpcalc.cli.laplace_eps import parse_probability
from dpcalc.cli.mechanism.given import answer, check_two_of_three, complement, notes, option_error
from dpcalc.cli.options import InputError, Json, MaxEpsilon, Parsed, as_typed, number
from dpcalc.cli.output import Answer, Report, Table, format_number
from dpcalc.core.validation import OPEN_UNIT, POSITIVE, Interval, ParameterError

if TYPE_CHECKING:
    from dpcalc.core.mechanisms.smooth_sensitivity import SmoothSensitivityResult

app = App()
DEGREES = Interval(1.0, 100.0, low_closed=True, high_closed=True, integer=True)  # as core.DEGREES (not imported at start-up)


class NoiseChoice(str, Enum):
    laplace = "laplace"
    cauchy = "cauchy"
    laplace_log_normal = "laplace-log-normal"
    student_t = "student-t"


HELP = """Smooth sensitivity: give two of privacy (or noise), error and confidence, get the third.

The release is f(x) + (S/alpha) Z with S a beta-smooth upper bound on the local sensitivity
(its value at the data is --smooth-sensitivity) and Z (alpha, beta)-admissible noise:
laplace (alpha = eps/2, beta = eps/(2 ln(2/delta)), (eps, delta)-DP) and cauchy (alpha =
beta = eps/6, pure eps-DP, no delta) after Nissim, Raskhodnikova and Smith 2007;
laplace-log-normal and student-t after Bun and Steinke 2019 (alpha = s, beta = t given as
--smoothness; laplace-log-normal: eps = t/sigma + e^(3 sigma^2/2) s, (eps^2/2)-CDP = rho-zCDP; student-t
with d degrees of freedom: eps = (d+1)(t + s/(2 sqrt d)), pure eps-DP). Accuracy is exact
for laplace, cauchy and student-t, an upper bound (Chebyshev with the exact variance) for
laplace-log-normal.

\b
Examples:
  dpcalc mechanism smooth-sensitivity --eps 1 --delta 1e-6 --confidence 0.95
  dpcalc mechanism smooth-sensitivity --noise cauchy --eps 1 --smooth-sensitivity 0.5 --error 10
  dpcalc mechanism smooth-sensitivity --noise laplace-log-normal --smoothness 0.1 --error 5 --confidence 0.9
  dpcalc mechanism smooth-sensitivity --noise cauchy --error 10 --confidence 0.9 --json
  dpcalc mechanism smooth-sensitivity --noise student-t --degrees 3 --smoothness 0.05 --eps 1 --confidence 0.95
"""

_OPTION = {"epsilon": "--eps", "scale": "--scale", "delta": "--delta", "smooth_sensitivity": "--smooth-sensitivity",
           "error": "--error", "failure_probability": "--confidence", "beta": "--smoothness", "sigma": "--lln-sigma",
           "noise": "--noise", "degrees": "--degrees"}


Noise = Annotated[
    NoiseChoice,
    Option("--noise", help="Noise family: laplace, cauchy (NRS 2007), laplace-log-normal or student-t (Bun, Steinke 2019).",
           case_sensitive=False),
]
Epsilon = Annotated[
    float | None,
    Option("--eps", metavar="FLOAT", help="Epsilon of the release, > 0 (laplace-log-normal: of (eps^2/2)-CDP).",
           click_type=number(POSITIVE)),
]
Scale = Annotated[
    float | None,
    Option("--scale", metavar="FLOAT", help="The noise scale S / alpha, > 0 (instead of --eps).", click_type=number(POSITIVE)),
]
Delta = Annotated[
    float | None,
    Option("--delta", metavar="FLOAT", help="Delta, in (0, 1): laplace noise only (cauchy, student-t: pure DP).",
           click_type=number(OPEN_UNIT)),
]
Smooth = Annotated[
    float,
    Option("--smooth-sensitivity", metavar="FLOAT", help="S(x), the beta-smooth bound at the data, > 0.  [default: 1]",
           show_default=False, click_type=number(POSITIVE)),
]
Error = Annotated[
    float | None,
    Option("--error", metavar="FLOAT", help="Error bound (|noise| <= error), > 0.", click_type=number(POSITIVE)),
]
Confidence = Annotated[
    float | None,
    Option("--confidence", metavar="FLOAT", help="Probability that the noise is within --error, in (0, 1).",
           click_type=Parsed(parse_probability)),
]
# --smoothness, not --beta: elsewhere (exponential, svt, noisy-max) --beta is a failure probability
Smoothness = Annotated[
    float | None,
    Option("--smoothness", metavar="FLOAT", help="laplace-log-normal, student-t: the smoothness t of S (beta), > 0.",
           click_type=number(POSITIVE)),
]
# --lln-sigma, not --sigma: elsewhere --sigma is a Gaussian noise multiplier (click suggests the new name)
LogNormalSigma = Annotated[
    float | None,
    Option("--lln-sigma", metavar="FLOAT",
           help="laplace-log-normal: the shape sigma of e^(sigma Y), > 0 (default: the best for the other inputs).",
           click_type=number(POSITIVE)),
]
Degrees = Annotated[
    int | None,
    Option("--degrees", metavar="INT", help="student-t: degrees of freedom d, an integer in [1, 100] (default 3).",
           click_type=number(DEGREES)),
]

_PRIVACY = {"laplace": "(eps, delta)-DP", "cauchy": "eps-DP", "laplace-log-normal": "(eps^2/2)-CDP",
            "student-t": "eps-DP"}


@dataclass(frozen=True, repr=False, eq=False)
class SmoothSensitivityRequest:
    """The options of `mechanism smooth-sensitivity`: the noise family with the parameters it takes,
    and two of privacy (epsilon or scale), error and confidence."""

    noise: Noise = NoiseChoice.laplace
    eps: Epsilon = None
    scale: Scale = None
    delta: Delta = None
    smooth: Smooth = 1.0
    error: Error = None
    confidence: Confidence = None
    smoothness: Smoothness = None
    lln_sigma: LogNormalSigma = None
    degrees: Degrees = None
    max_eps: MaxEpsilon = None
    json_output: Json = False

    def inputs(self) -> dict[str, object]:
        return {"noise": self.noise.value, "eps": self.eps, "scale": self.scale, "delta": self.delta,
                "smooth_sensitivity": self.smooth, "error": self.error, "confidence": self.confidence,
                "smoothness": self.smoothness, "lln_sigma": self.lln_sigma, "degrees": self.degrees, "max_eps": self.max_eps}


@app.command("smooth-sensitivity", help=HELP)
def smooth_sensitivity(request: Annotated[SmoothSensitivityRequest, Group()]) -> Answer:
    from dpcalc.core.mechanisms import smooth_sensitivity as core

    kind = next(name for name in core.NOISES if name == request.noise.value)
    _check(request, kind)
    try:
        result = core.smooth_sensitivity(
            noise=kind, epsilon=request.eps, scale=request.scale, delta=request.delta,
            smooth_sensitivity=request.smooth, error=request.error, failure_probability=complement(request.confidence),
            beta=request.smoothness, sigma=request.lln_sigma, degrees=request.degrees,
        )
    except ParameterError as problem:
        raise option_error(problem, _OPTION) from None
    return answer(_report(request, result), request.json_output, request.max_eps)


def _check(request: SmoothSensitivityRequest, kind: str) -> None:
    """The parameters of each noise family (--delta, --smoothness, --lln-sigma, --degrees), then two of
    privacy, error and confidence."""
    delta, smoothness = request.delta, request.smoothness
    if kind == "laplace" and delta is None:
        raise InputError("--delta is required with --noise laplace: its beta is eps / (2 ln(2/delta)) "
                         "(or use --noise cauchy for pure DP)", options=("--delta", "--noise"))
    if kind in ("cauchy", "student-t") and delta is not None:
        family = "Cauchy-type" if kind == "cauchy" else "Student's T"
        raise InputError(f"--delta must be absent with --noise {kind}: {family} noise gives pure eps-DP "
                         f"(delta = 0) only, got {delta}", options=("--delta", "--noise"),
                         allowed=f"absent with --noise {kind}", got=as_typed(delta))
    if kind == "laplace-log-normal" and delta is not None:
        raise InputError(f"--delta must be absent with --noise laplace-log-normal: it gives (eps^2/2)-CDP "
                         f"(rho-zCDP; dpcalc convert states it at a delta), got {delta}", options=("--delta", "--noise"),
                         allowed="absent with --noise laplace-log-normal", got=as_typed(delta))
    if kind in ("laplace-log-normal", "student-t") and smoothness is None:
        raise InputError(f"--smoothness is required with --noise {kind}: the smoothness t of S, > 0",
                         options=("--smoothness", "--noise"))
    if kind in ("laplace", "cauchy") and smoothness is not None:
        raise InputError(f"--smoothness must be absent with --noise {kind}: the smoothness beta follows from eps, "
                         f"got {smoothness}", options=("--smoothness", "--noise"),
                         allowed=f"absent with --noise {kind}", got=as_typed(smoothness))
    if kind != "laplace-log-normal" and request.lln_sigma is not None:
        raise InputError(f"--lln-sigma must be absent with --noise {kind}: it belongs to laplace-log-normal, "
                         f"got {request.lln_sigma}", options=("--lln-sigma", "--noise"),
                         allowed=f"absent with --noise {kind}", got=as_typed(request.lln_sigma))
    if kind != "student-t" and request.degrees is not None:
        raise InputError(f"--degrees must be absent with --noise {kind}: degrees belong to student-t, "
                         f"got {request.degrees}", options=("--degrees", "--noise"),
                         allowed=f"absent with --noise {kind}", got=as_typed(request.degrees))
    check_two_of_three(request.eps, request.scale, request.error, request.confidence)


def _report(request: SmoothSensitivityRequest, result: SmoothSensitivityResult) -> Report:
    privacy = _PRIVACY[result.noise]
    lln = result.noise == "laplace-log-normal"
    return Report(
        command="mechanism smooth-sensitivity",
        inputs=request.inputs(),
        result={
            "noise": result.noise,
            "privacy": privacy,
            "epsilon": result.epsilon,
            "delta": result.delta,
            "rho": result.rho,
            "alpha": result.alpha,
            "smoothness": result.beta,
            "lln_sigma": result.sigma,
            "degrees": result.degrees,
            "smooth_sensitivity": result.smooth_sensitivity,
            "scale": result.scale,
            "std": result.std,
            "error": result.error,
            "confidence": result.confidence,
            "failure_probability": result.failure_probability,
            "accuracy_exact": result.accuracy_exact,
            "solved_for": result.solved_for,
            "source": result.source,
        },
        tables=[_table(result, privacy)],
        warnings=(["the accuracy is an upper bound on the failure probability (Chebyshev with the exact variance), "
                   "not its exact value"] if lln and result.error is not None else []),
        epsilon=None if lln else result.epsilon,
        basis=None if lln else f"the release's {privacy} epsilon ({result.source})",
        no_gate=("laplace-log-normal noise gives (eps^2/2)-CDP, not an (eps, delta) bound: state it at a delta with "
                 "dpcalc convert (rho = eps^2/2)") if lln else None,
    )


def _table(result: SmoothSensitivityResult, privacy: str) -> Table:
    note = notes(result.solved_for, ("epsilon", "error", "confidence"))
    rows = [("epsilon", format_number(result.epsilon), f"{note['epsilon']}: {privacy}")]
    if result.noise == "laplace":
        rows.append(("delta", format_number(result.delta), "given"))
        rows += [("alpha", format_number(result.alpha), "eps / 2"),
                 ("beta", format_number(result.beta), "eps / (2 ln(2/delta)): S must be beta-smooth")]
    elif result.noise == "cauchy":
        rows.append(("delta", "0", "pure DP"))
        rows += [("alpha", format_number(result.alpha), "eps / 6 (gamma = 2)"),
                 ("beta", format_number(result.beta), "eps / 6: S must be beta-smooth")]
    elif result.noise == "student-t":
        rows.append(("delta", "0", "pure DP"))
        rows += [("alpha = s", format_number(result.alpha), "eps = (d+1)(t + s/(2 sqrt d))"),
                 ("beta = t", format_number(result.beta), "given: S must be beta-smooth"),
                 ("degrees d", str(result.degrees), "of Student's T")]
    else:
        rows += [("rho (zCDP)", format_number(result.rho), "eps^2 / 2"),
                 ("alpha = s", format_number(result.alpha), "eps = t/sigma + e^(3 sigma^2/2) s"),
                 ("beta = t", format_number(result.beta), "given: S must be beta-smooth"),
                 ("sigma", format_number(result.sigma), "of Z = Lap(1) e^(sigma N(0,1))")]
    rows += [("smooth sensitivity S", format_number(result.smooth_sensitivity), "at the data"),
             ("noise scale", format_number(result.scale), "S / alpha"),
             ("noise std", format_number(result.std), _std_note(result))]
    if result.error is not None:
        how = "exact" if result.accuracy_exact else "a lower bound, Chebyshev"
        rows += [("error", format_number(result.error), f"{note['error']}: |noise| <= error"),
                 ("confidence", format_number(result.confidence), f"{note['confidence']} ({how})"),
                 ("1 - confidence", format_number(result.failure_probability),
                  "exact" if result.accuracy_exact else "upper bound")]
    return Table(columns=("quantity", "value", "note"), rows=rows,
                 title=f"Smooth sensitivity, {result.noise} noise ({result.source})")


def _std_note(result: SmoothSensitivityResult) -> str:
    if result.noise == "cauchy":
        return "inf: Cauchy has no variance"
    if result.noise == "student-t":
        return "sqrt(d / (d - 2)) S / alpha" if (result.degrees or 0) > 2 else "inf: no variance for d <= 2"
    return "sqrt(2) S / alpha" if result.noise == "laplace" else "sqrt(2) e^(sigma^2) S / alpha"
