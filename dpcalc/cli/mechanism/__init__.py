"""`dpcalc mechanism NAME`: the textbook mechanisms, one subcommand each, loaded lazily.

Each subcommand answers three questions about its mechanism: the noise a privacy level needs,
the accuracy that noise gives, and the privacy an accuracy target needs (any two of privacy,
noise and accuracy give the third). A subcommand lives in its own module here, defining `app`
with the one command, and is listed in MECHANISMS; its mathematics is in dpcalc/core/mechanisms.
"""

from __future__ import annotations

import click

from dpcalc.cli.app import LazyGroup
from dpcalc.cli.declare import App

# name -> (module that defines `app` with the one command, one-line help for `dpcalc mechanism --help`)
MECHANISMS: dict[str, tuple[str, str]] = {
    "laplace": ("dpcalc.cli.mechanism.laplace",
                "Laplace noise on counts, histograms, probability vectors: epsilon, error, confidence."),
    "gaussian": ("dpcalc.cli.mechanism.gaussian",
                 "Gaussian noise, isotropic or per coordinate: epsilon at delta, error, confidence."),
    "exponential": ("dpcalc.cli.mechanism.exponential",
                    "Exponential mechanism: epsilon, error bound, failure probability - give two, get the third."),
    "noisy-max": ("dpcalc.cli.mechanism.noisy_max",
                  "Report noisy max (Laplace, Gumbel, exponential noise): epsilon, gap, failure probability."),
    "svt": ("dpcalc.cli.mechanism.svt",
            "Sparse vector (AboveThreshold, c answers): epsilon, error bound, failure probability."),
    "ptr": ("dpcalc.cli.mechanism.ptr", "Propose-test-release: threshold, \"no reply\", total (2 eps, delta), accuracy."),
    "randomized-response": ("dpcalc.cli.mechanism.randomized_response",
                            "Binary and k-ary randomized response: epsilon, flip probability, standard error."),
    "smooth-sensitivity": ("dpcalc.cli.mechanism.smooth_sensitivity",
                           "Smooth sensitivity: admissible (alpha, beta) noise and its accuracy."),
}


class MechanismGroup(LazyGroup):
    """`dpcalc mechanism`: imports a mechanism's module only when it is used."""

    table = MECHANISMS

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, args or ["--help"])  # `dpcalc mechanism` alone: the list


app = App(cls=MechanismGroup, context_settings={"help_option_names": ["-h", "--help"]})


@app.callback(invoke_without_command=False)
def mechanism() -> None:
    """Textbook mechanisms: privacy, noise and accuracy - give two, get the third.

    Each subcommand takes the same output options as every dpcalc command (a table, or one
    strict JSON object with --json; --max-eps gates the privacy it reports).

    \b
    Examples:
      dpcalc mechanism laplace --eps 1 --confidence 0.95 --bins 10
      dpcalc mechanism gaussian --sensitivities 12,6 --noise-stds 17,8.5 --delta 1e-5
      dpcalc mechanism svt --eps 1 --queries 1000 --beta 0.05 --json
    """
