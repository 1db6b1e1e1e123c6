"""`dpcalc calibrate --sampling/--neighbours/--examples-per-user`: the run calibrated is the one
`dpcalc pld` accounts with the same options (its certified epsilon meets the target, the next
grid value misses it), and every refusal names its option."""

from __future__ import annotations

import pytest

from dpcalc.core.calibrate import calibrate
from dpcalc.core.phases import Phase
from dpcalc.core.pld import tight_epsilon

RUN = ("calibrate", "--target-eps", "3")


@pytest.mark.parametrize(("options", "phase"), [
    (("--neighbours", "replace-one", "--p", "0.004", "--T", "10000"),
     dict(sampling_probability=0.004, steps=10000, neighbours="replace-one")),
    pytest.param(("--examples-per-user", "4", "--p", "0.004", "--T", "10000"),
     dict(sampling_probability=0.004, steps=10000, examples_per_user=4), marks=pytest.mark.slow),
    pytest.param(("--sampling", "uniform", "--neighbours", "replace-one", "--n", "60000", "--batch-size", "256", "--epochs", "10"),
     dict(sampling_probability=256 / 60000, steps=2344, sampling="uniform", neighbours="replace-one"), marks=pytest.mark.slow),
])
def test_sigma_meets_the_target_for_the_run_pld_accounts(dpcalc, options, phase):
    run = dpcalc(*RUN, *options, "--json")
    assert (run.code, run.stderr) == (0, "")
    document = run.json()
    sigma = document["result"]["sigma"]
    inputs = document["inputs"]
    assert inputs["sampling"] == phase.get("sampling", "poisson")
    assert inputs["neighbours"] == phase.get("neighbours", "add-remove")
    assert inputs["examples_per_user"] == phase.get("examples_per_user", 1)
    at_answer = tight_epsilon([Phase("gaussian", noise_multiplier=sigma, **phase)], 1e-5)
    assert document["result"]["epsilon"] == at_answer.epsilon_upper <= 3.0
    # the answer is within the default precision (1e-4 relative) of where epsilon meets the target
    below = tight_epsilon([Phase("gaussian", noise_multiplier=sigma * (1 - 2e-4), **phase)], 1e-5)
    assert below.epsilon_upper > 3.0


@pytest.mark.slow
def test_a_scheme_costs_what_pld_says():
    # design card: Poisson add-remove 0.9999..., replace-one and user level need more noise
    plain = calibrate("sigma", 3.0, 1e-5, sampling_probability=0.004, steps=10000).value
    replaced = calibrate("sigma", 3.0, 1e-5, sampling_probability=0.004, steps=10000, neighbours="replace-one").value
    users = calibrate("sigma", 3.0, 1e-5, sampling_probability=0.004, steps=10000, examples_per_user=2).value
    assert plain < users < replaced or plain < replaced < users
    zero_out = calibrate("sigma", 3.0, 1e-5, sampling_probability=0.004, steps=10000, neighbours="zero-out").value
    assert zero_out == plain  # under Poisson sampling zero-out's figures are add-remove's


@pytest.mark.slow
def test_shuffled_epochs_are_one_gaussian_each(dpcalc):
    # the certified upper bound of a shuffled run is one unsubsampled Gaussian per epoch begun
    # (10 epochs: mu = sqrt(10)/sigma), which meets epsilon 3 at delta 1e-5 from sigma = 4.3974426
    # (DRS Cor. 2.13, solved by root finding); the answer lies within the precision 1e-4 above it
    run = dpcalc(*RUN, "--sampling", "shuffle", "--neighbours", "zero-out", "--n", "60000", "--batch-size", "256", "--epochs", "10", "--json")
    result = run.json()["result"]
    assert 4.3974426 <= result["sigma"] <= 4.3974427 * (1 + 1e-4)
    assert result["epsilon"] <= 3.0 and result["epsilon_lower"] < result["epsilon"]


@pytest.mark.slow
def test_solving_epochs_under_fixed_size_batches(dpcalc):
    run = dpcalc(*RUN, "--sampling", "uniform", "--neighbours", "replace-one", "--n", "60000", "--batch-size", "256",
                 "--solve", "epochs", "--sigma", "1.5", "--json")
    result = run.json()["result"]
    assert result["epochs"] == 12 and result["epsilon"] <= 3.0 < result["rejected"]["epsilon"]
    assert result["rejected"]["epochs"] == 13


def test_rdp_takes_fixed_size_batches_under_replace_one(dpcalc):
    run = dpcalc(*RUN, "--sampling", "uniform", "--neighbours", "replace-one", "--n", "60000", "--batch-size", "256",
                 "--epochs", "10", "--accountant", "rdp", "--json")
    assert run.code == 0 and run.json()["result"]["epsilon"] <= 3.0


@pytest.mark.slow
def test_the_table_names_the_scheme(dpcalc):
    run = dpcalc(*RUN, "--examples-per-user", "4", "--p", "0.004", "--T", "10000")
    assert "add-remove neighbours, 4 examples per user" in run.stdout


@pytest.mark.parametrize(("options", "message"), [
    (("--sampling", "shuffle", "--n", "60000", "--batch-size", "256", "--T", "100"),
     "Error: --sampling shuffle needs --neighbours zero-out or replace-one, got --neighbours add-remove: shuffled"),
    (("--sampling", "shuffle", "--neighbours", "zero-out", "--p", "0.004", "--T", "100"),
     "Error: --sampling shuffle needs --n and --batch-size"),
    (("--sampling", "allocation", "--n", "60000", "--batch-size", "256", "--epochs", "10", "--accountant", "rdp"),
     "Error: --accountant rdp has no bound for allocation sampling, add-remove neighbours; use --accountant pld\n"),
    (("--neighbours", "replace-one", "--p", "0.004", "--T", "100", "--accountant", "gdp"),
     "Error: --accountant gdp: the central-limit accountant describes Poisson-sampled examples under add-remove or "
     "zero-out, not poisson sampling, replace-one neighbours; use --accountant pld\n"),
    (("--examples-per-user", "2", "--sampling", "uniform", "--neighbours", "replace-one", "--n", "100",
      "--batch-size", "10", "--T", "10"),
     "Error: --examples-per-user must be 1 with --sampling uniform and --neighbours replace-one, got 2"),
    (("--neighbours", "replace-one", "--T", "100", "--mechanism", "laplace"),
     "Error: --neighbours replace-one: --mechanism laplace calibrates releases without subsampling"),
    (("--neighbours", "replace-one", "--p", "0.004", "--T", "100", "--target-advantage", "0.1"),
     "Error: --neighbours replace-one: risk targets calibrate Poisson-sampled examples under add-remove; "
     "calibrate other runs with --target-eps\n"),
    (("--examples-per-user", "0", "--p", "0.004", "--T", "100"), "Error: "),
])
def test_refusals(dpcalc, options, message):
    run = dpcalc(*RUN, *options)
    assert run.code == 2 and run.stderr.startswith(message) and run.stderr.count("\n") == 1
