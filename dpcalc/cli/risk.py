"""`dpcalc risk`: what an attacker can learn from a run, certified (membership inference,
Bayes success, reconstruction), from the PLD accountant's trade-off curve."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any

from dpcalc.cli import progress
from dpcalc.cli.declare import App, Group, Option
from dpcalc.cli.options import (
    InputError,
    MaxBatchSize,
    Numbers,
    Outputs,
    Parsed,
    Swept,
    number,
    one,
    parse_list,
)
from dpcalc.cli.output import Answer, Report, Table, format_lower, format_number, format_significant, format_upper
from dpcalc.cli.phases import (
    Accuracy,
    RunNumbers,
    RunOptions,
    phase_inputs,
    phases_caption,
    phases_table,
    phases_title,
)
from dpcalc.cli.request import start
from dpcalc.cli.tight import paused_gc
from dpcalc.core.limits import DEFAULT_ACCURACY, DEFAULT_FPRS, DEFAULT_PRIOR
from dpcalc.core.validation import FALSE_POSITIVE_RATE, OPEN_UNIT

if TYPE_CHECKING:
    from dpcalc.cli.caps import Cap
    from dpcalc.cli.figures import Panel
    from dpcalc.core.phases import Phase
    from dpcalc.core.risk import Bounds, RiskResult

app = App()


HELP = f"""What an attacker can learn from a run, certified: membership-inference TPR at low FPR,
the maximum advantage, Bayes success and reconstruction risk.

Takes any run `dpcalc pld` takes (--p/--sigma/--T, the training form, --phase, --sampling,
--neighbours, --examples-per-user, the Laplace mechanism). The run's trade-off curve f(alpha),
the smallest type II error any attack reaches at type I error alpha (Dong, Roth, Su 2022), is
read off the PLD accountant's certified privacy profile: at each FPR the TPR = 1 - f(FPR) is
given as a certified interval, whose upper end no attack exceeds (the number to quote).
For subsampled runs this is the symmetrised curve over both orders of neighbouring datasets.

\b
Printed:
  max advantage     max over attacks of TPR - FPR (the total variation, delta at eps = 0)
  TPR at FPR        at --fpr [default: {",".join(f"{value:g}" for value in DEFAULT_FPRS)}], with the
                    positive predictive value at --prior and the relative width of each interval
  Bayes success     of a membership guess with prior --prior [default: {DEFAULT_PRIOR:g}]
  reconstruction    1 - f(kappa), the success of reconstructing a record whose baseline
                    success is --kappa (Kaissis et al. 2023; given only with --kappa)
Beside them, the mu-GDP figures of Gaussian runs: the central-limit mu of subsampled runs is an
approximation (it can under-report the risk), the exact sqrt(T)/sigma of unsampled ones.

\b
Examples:
  dpcalc risk --p 0.004 --sigma 1.1 --T 10000
  dpcalc risk --n 60000 --batch-size 256 --epochs 60 --sigma 1.1 --fpr 1e-6,1e-3 --json
  dpcalc risk --p 0.004 --sigma 1.1 --T 10000 --prior 0.01 --kappa 1e-3
  dpcalc risk --p 0.004 --sigma 1.1 --T 10000 --plot risk.png

--max-batch-size B (truncated Poisson sampling, with --n and --batch-size): the capped run's
output is within total variation eta of the Poisson run's, eta the probability that some batch
exceeds B, so every figure is moved by eta: the TPR at FPR alpha is at most the Poisson run's
at alpha + eta plus eta, the advantage grows by 2 eta, the Bayes success by eta
(docs/mathematics.md, "Attack risk of a capped run").

--plot FILE (.png, .svg or .pdf, needs matplotlib) and --chart draw TPR against FPR on log-log axes:
the certified bound and the lower end of its interval, the mu-GDP curve and the diagonal
TPR = FPR of an attack that learns nothing. One run: no sweeps.
"""



@dataclass(frozen=True, repr=False, eq=False)
class Attacks:
    """What risk asks of the attacks: the false-positive rates, the prior, the reconstruction baseline."""

    fpr: Annotated[
        Numbers | None,
        Option("--fpr", metavar="FLOATS",
                     help="False-positive rates, a comma list, each in [1e-300, 1) [default: "
                          f"{','.join(f'{value:g}' for value in DEFAULT_FPRS)}].",
                     click_type=Parsed(partial(parse_list, interval=FALSE_POSITIVE_RATE))),
    ] = None
    prior: Annotated[
        float | None,
        Option("--prior", metavar="FLOAT",
                     help=f"Prior probability that the record is in, in (0, 1) [default: {DEFAULT_PRIOR:g}].",
                     click_type=number(OPEN_UNIT)),
    ] = None
    kappa: Annotated[
        float | None,
        Option("--kappa", metavar="FLOAT",
                     help="Baseline success of a reconstruction attack, in [1e-300, 1): bound its success.",
                     click_type=number(FALSE_POSITIVE_RATE)),
    ] = None


@dataclass(frozen=True, repr=False, eq=False)
class RiskInputs:
    """What risk computes from: the run's numbers and the accuracy (risk takes one run: no sweep)."""

    run: RunNumbers
    accuracy: float | Swept | None


@app.command("risk", help=HELP)
def risk(
    run: Annotated[RunOptions, Group()],
    attacks: Annotated[Attacks, Group()] = Attacks(),
    max_batch_size: MaxBatchSize = None,
    accuracy: Accuracy = None,
    outputs: Annotated[Outputs, Group()] = Outputs(),
) -> Answer:
    if max_batch_size is not None:
        from dpcalc.cli.caps import check_cap

        check_cap(run)
    request = start(RiskInputs(run.numbers(), accuracy), outputs=outputs, phase=run.phase)
    if request.is_sweep:
        first = request.swept[0]
        option = f"--{first.replace('_', '-')}"
        raise InputError(f"dpcalc risk takes one run, got a list or range for {option}: "
                         "run it once per value, or sweep epsilon with dpcalc pld", option=option)
    row = request.rows[0]
    width = DEFAULT_ACCURACY if row.accuracy is None else one(row.accuracy)
    fprs = tuple(DEFAULT_FPRS if attacks.fpr is None else attacks.fpr)
    chosen_prior = DEFAULT_PRIOR if attacks.prior is None else attacks.prior
    phases = run.phases(row.run)

    from dpcalc.core.risk import attack_risk

    cap, above, below = _cap(phases, one(row.run.n), max_batch_size)
    progress.describe("certified attack risk (PLD accountant)")
    with paused_gc():
        result = attack_risk(phases, fprs=fprs, prior=chosen_prior, kappa=attacks.kappa, accuracy=width,
                             overflow=above, overflow_below=below)
    inputs = {
        "phases": [phase_inputs(item) for item in phases],
        "noise_std": row.run.noise_std,
        "sensitivity": row.run.sensitivity,
        "fprs": list(fprs),
        "prior": chosen_prior,
        "kappa": attacks.kappa,
        "accuracy": width,
        "max_batch_size": max_batch_size,
    }
    return request.answer(Report(
        command="risk",
        inputs=inputs,
        result={**result_keys(result), "truncation": None if cap is None else cap.keys()},
        tables=[_summary_table(result, cap), _attack_table(result)]
        + ([phases_table(phases)] if len(phases) > 1 else []),
        warnings=list(result.warnings) + _gdp_warnings(result) + _cap_warnings(cap, above, below),
        no_gate="dpcalc risk bounds attack success, not epsilon: gate a budget with dpcalc pld --max-eps",
        figures=(lambda: risk_panels(result)) if (request.plot is not None or request.chart) else None,
    ))


def _cap(phases: list[Phase], n: int | None, max_batch_size: int | None) -> tuple[Cap | None, float, float]:
    """The cap of the run's batches (None without --max-batch-size) and what it may move the
    figures by above and below (dpcalc.cli.caps.cap_costs)."""
    if max_batch_size is None:
        return None, 0.0, 0.0
    from dpcalc.cli.caps import cap_costs

    assert n is not None, "a cap needs the dataset size (check_cap)"
    return cap_costs(phases, n, max_batch_size)


def _cap_warnings(cap: Cap | None, above: float, below: float) -> list[str]:
    """What the cap moves the figures by, when some batch may overflow it."""
    if cap is None or cap.overflow_probability <= 0.0:
        return []
    moved = ("by it" if (above, below) == (cap.overflow_probability,) * 2 else
             f"by {above:.3g} above and {below:.3g} below (step by step: a record added to a capped batch pushes "
             "at most one other out)")
    return [f"batches capped at {cap.max_batch_size}: some batch overflows with probability at most "
            f"{cap.overflow_probability:.3g}; every figure is the Poisson run's moved {moved} "
            "(the central-limit GDP figures, of the uncapped run, are left out)."]


def _interval(bounds: Bounds, name: str) -> dict[str, float]:
    return {name: bounds.upper, f"{name}_lower": bounds.lower, f"{name}_upper": bounds.upper}


def result_keys(result: RiskResult) -> dict[str, Any]:
    """The JSON `result` of `dpcalc risk` (keys documented in docs/json.md)."""
    from dpcalc.core.pld import analysis_of

    gaussian = result.gaussian
    attacks = []
    for index, point in enumerate(result.points):
        attacks.append({
            "fpr": point.fpr,
            **_interval(point.tpr, "tpr"),
            "relative_width": point.tpr.relative_width,
            **_interval(point.ppv, "ppv"),
            "tpr_gdp": None if gaussian is None else gaussian.tprs[index],
        })
    reconstruction = None
    if result.reconstruction is not None:
        reconstruction = {"kappa": result.kappa, **_interval(result.reconstruction, "success"),
                          "success_gdp": None if gaussian is None else gaussian.reconstruction}
    return {
        **_interval(result.advantage, "advantage"),
        "attacks": attacks,
        "prior": result.prior,
        **_interval(result.bayes_success, "bayes_success"),
        "bayes_baseline": result.bayes_baseline,
        "reconstruction": reconstruction,
        "gdp": None if gaussian is None else {
            "mu": gaussian.mu, "approximate": gaussian.approximate, "advantage": gaussian.advantage,
            "bayes_success": gaussian.bayes_success,
        },
        "curve": [{"alpha": alpha, "beta": low, "beta_upper": high}
                  for alpha, low, high in zip(result.curve_alphas, result.curve_beta_lower, result.curve_beta_upper)],
        "accuracy": result.accuracy,
        "grid": {"step": result.grid_step},
        "analysis": analysis_of(result.phases),
    }


def _gdp_header(result: RiskResult) -> str:
    gaussian = result.gaussian
    if gaussian is None:
        return "GDP"
    return "GDP (central limit)" if gaussian.approximate else "GDP (exact)"


def _summary_table(result: RiskResult, truncation: Cap | None = None) -> Table:
    from dpcalc.core.pld import analysis_of

    gaussian = result.gaussian
    rows = [
        ("max advantage", format_upper(result.advantage.upper), format_lower(result.advantage.lower),
         format_number(None if gaussian is None else gaussian.advantage), "TPR - FPR of the best attack"),
        (f"Bayes success (prior {format_number(result.prior)})", format_upper(result.bayes_success.upper),
         format_lower(result.bayes_success.lower), format_number(None if gaussian is None else gaussian.bayes_success),
         f"{format_number(result.bayes_baseline)} by guessing"),
    ]
    if result.reconstruction is not None:
        rows.append((f"reconstruction (kappa {format_number(result.kappa)})", format_upper(result.reconstruction.upper),
                     format_lower(result.reconstruction.lower),
                     format_number(None if gaussian is None else gaussian.reconstruction), "1 - f(kappa)"))
    if gaussian is not None:
        rows.append(("mu (GDP)", "", "", format_number(gaussian.mu),
                     "central-limit approximation" if gaussian.approximate else "exact"))
    if truncation is not None:
        rows.append(("max batch size", str(truncation.max_batch_size), "", "",
                     f"batches cut to this; n = {truncation.n}"))
        from dpcalc.core.pld.truncation import STEP_BY_STEP

        rows.append(("overflow probability", format_upper(truncation.overflow_probability), "", "",
                     "some batch above the cap" + ("; every figure moved by it" if truncation.analysis != STEP_BY_STEP
                                                   else "; figures moved by the smaller distance step by step")))
    rows.append(("analysis", "", "", "", analysis_of(result.phases)))
    return Table(columns=("quantity", "certified", "lower bound", _gdp_header(result), "note"), rows=rows,
                 title=phases_title("Attack risk (PLD, certified)", list(result.phases)))


def _attack_table(result: RiskResult) -> Table:
    gaussian = result.gaussian
    rows = []
    for index, point in enumerate(result.points):
        rows.append((
            format_number(point.fpr),
            format_significant(point.tpr.upper, True),
            format_significant(point.tpr.lower, False),
            f"{point.tpr.relative_width:.1e}",
            "-" if gaussian is None else f"{gaussian.tprs[index]:.6g}",
            format_significant(point.ppv.upper, True),
        ))
    return Table(
        columns=("FPR", "TPR (certified)", "TPR lower", "width", _gdp_header(result), "PPV (certified)"),
        rows=rows, title=f"Membership inference: the largest TPR at each FPR; PPV at prior {format_number(result.prior)}",
        justify=("right",) * 6,
    )


def _gdp_warnings(result: RiskResult) -> list[str]:
    """A warning where the central-limit figures fall below the certified lower bounds."""
    gaussian = result.gaussian
    if gaussian is None or not gaussian.approximate:
        return []
    under = [f"FPR {format_number(point.fpr)}" for index, point in enumerate(result.points)
             if gaussian.tprs[index] < point.tpr.lower]
    if gaussian.advantage < result.advantage.lower:
        under.insert(0, "the advantage")
    if not under:
        return []
    places = ", ".join(under)
    return [f"the central-limit GDP figures under-report the risk at {places}: they lie below the certified "
            "lower bounds; quote the certified figures."]


def risk_panels(result: RiskResult) -> list[Panel]:
    """TPR against FPR on log-log axes: the certified bound and its lower end, mu-GDP, and TPR = FPR;
    the asked false-positive rates (the table's rows) marked on the certified bound."""
    from dpcalc.cli.figures import Panel, Series
    from dpcalc.core.gdp import tpr_at_fpr

    alphas = [alpha for alpha in result.curve_alphas if 0.0 < alpha < 1.0]
    pairs = {alpha: (1.0 - low, 1.0 - high) for alpha, low, high in
             zip(result.curve_alphas, result.curve_beta_lower, result.curve_beta_upper)}
    series = [
        Series("TPR, certified upper bound (PLD)", alphas, [pairs[alpha][0] for alpha in alphas]),
        Series("lower end of the certified interval", alphas, [pairs[alpha][1] for alpha in alphas], dashed=True),
    ]
    gaussian = result.gaussian
    if gaussian is not None:
        series.append(Series(f"{format_number(gaussian.mu)}-GDP ({_gdp_header(result)[5:-1]})", alphas,
                             [tpr_at_fpr(gaussian.mu, alpha) for alpha in alphas], accountant="gdp"))
    series.append(Series("no privacy lost (TPR = FPR)", alphas, list(alphas), dashed=True, accountant="none"))
    series.append(Series("the asked FPRs (table)", [point.fpr for point in result.points],
                         [point.tpr.upper for point in result.points], markers=True, line=False))
    return [Panel(title="Attack risk (PLD, certified)", caption=phases_caption(list(result.phases)),
                  xlabel="false-positive rate", ylabel="true-positive rate", series=series, xlog=True, ylog=True,
                  legend="lower right")]
