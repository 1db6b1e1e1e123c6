"""`dpcalc pld --max-batch-size` (truncated Poisson sampling): the figures the core computes, the
uncapped Poisson figure beside them, the table, and every refusal."""

from __future__ import annotations

import pytest

from dpcalc.core.phases import Phase
from dpcalc.core.pld import tight_epsilon
from dpcalc.core.pld.truncation import Truncation, account_truncated

# the design card as a dataset: n 62500, expected batch 250 (p = 0.004), T = 10000
CARD = ("pld", "--n", "62500", "--batch-size", "250", "--T", "10000", "--sigma", "1.1")
RUN = Phase("gaussian", 0.004, 1.1, None, 10000)


@pytest.mark.slow
def test_a_cap_costs_what_the_step_by_step_analysis_says(dpcalc):
    run = dpcalc(*CARD, "--max-batch-size", "360", "--json")
    assert (run.code, run.stderr) == (0, "")
    document = run.json()
    assert document["inputs"]["max_batch_size"] == 360
    result = document["result"]
    truncated, _poisson, overflow = account_truncated([RUN], Truncation(62500, 360), delta=1e-5, epsilon=None,
                                                     accuracy=1e-3)
    assert result["truncation"] == {"max_batch_size": 360, "n": 62500, "overflow_probability": overflow,
                                    "analysis": "overflow bound and step by step"}
    assert (result["epsilon_lower"], result["epsilon_upper"]) == (truncated.epsilon_lower, truncated.epsilon_upper)
    plain = tight_epsilon([RUN], 1e-5)
    assert result["as_poisson"]["epsilon_upper"] == pytest.approx(plain.epsilon_upper, rel=1e-9)
    # measured: [1.840905, 1.841539] against [1.840904, 1.841477] without the cap; the overflow
    # probability (2.4e-7) alone would give [1.822114, 1.864614]
    assert result["epsilon_upper"] == pytest.approx(1.841539, rel=1e-5)
    assert plain.epsilon_upper <= result["epsilon_upper"] <= plain.epsilon_upper * (1 + 1e-3)
    assert result["epsilon_lower"] <= plain.epsilon_upper
    assert result["epsilon_upper"] - result["epsilon_lower"] <= 1e-3 * result["epsilon_upper"]
    assert document["warnings"] == []


@pytest.mark.slow
def test_the_overflow_alone_is_looser(dpcalc):
    """The bound from the overflow probability alone (any rule for the kept records) is the
    tighter one nowhere here: the step-by-step bound is kept."""
    from dpcalc.core.pld.privacy_profile import ProfileBounds
    from dpcalc.core.pld.truncated_profile import truncated_epsilon
    from dpcalc.core.pld.truncation import overflow_probability

    profile = ProfileBounds([RUN], [(1e-5, None)])
    upper, lower = truncated_epsilon(profile, 1e-5, overflow_probability([RUN], Truncation(62500, 360)))
    assert upper == pytest.approx(1.864614, rel=1e-5) and lower == pytest.approx(1.822114, rel=1e-5)
    result = dpcalc(*CARD, "--max-batch-size", "360", "--json").json()["result"]
    assert lower < result["epsilon_lower"] <= result["epsilon_upper"] < upper


def test_a_generous_cap_costs_almost_nothing(dpcalc):
    result = dpcalc(*CARD, "--max-batch-size", "500", "--json").json()["result"]
    assert result["truncation"]["overflow_probability"] < 1e-25
    assert result["epsilon_upper"] == pytest.approx(result["as_poisson"]["epsilon_upper"], rel=1e-9)


@pytest.mark.slow
def test_delta_at_a_given_epsilon(dpcalc):
    run = dpcalc(*CARD, "--max-batch-size", "360", "--eps", "2", "--json")
    result = run.json()["result"]
    assert result["epsilon"] == 2.0
    assert result["delta_lower"] <= result["as_poisson"]["delta_upper"]
    assert result["as_poisson"]["delta_lower"] <= result["delta_upper"]
    assert result["delta_upper"] >= result["as_poisson"]["delta_upper"]


def test_the_table_says_what_the_cap_costs(dpcalc):
    run = dpcalc(*CARD, "--max-batch-size", "360")
    assert run.code == 0
    for text in ("max batch size", "overflow probability", "epsilon without the cap", "1.841539", "1.841477"):
        assert text in run.stdout


@pytest.mark.slow
def test_a_cap_near_the_mean_batch_is_accounted_step_by_step(dpcalc):
    """A cap of 300 over batches of 250 on average overflows almost surely (eta ~ 1), so the
    overflow alone leaves no guarantee; step by step, a record pushes another out in about 0.1% of
    the steps, and the interval is the gap between the capped pair and the attained one."""
    run = dpcalc(*CARD, "--max-batch-size", "300", "--json")
    assert run.code == 0
    document = run.json()
    result = document["result"]
    assert result["truncation"]["overflow_probability"] > 0.99
    # measured: [1.840806, 2.539362]; opake-accounting 0.16.1's truncated-Poisson PLD gives 2.697
    assert result["epsilon_upper"] == pytest.approx(2.539362, rel=1e-4)
    assert result["epsilon_lower"] == pytest.approx(1.840806, rel=1e-4)
    assert result["epsilon_lower"] <= result["as_poisson"]["epsilon_upper"] < result["epsilon_upper"] < 2.697
    assert any("the gap between what bounds a capped batch from above" in warning for warning in document["warnings"])
    assert dpcalc(*CARD, "--max-batch-size", "300", "--max-eps", "2").code == 1
    assert dpcalc(*CARD, "--max-batch-size", "300", "--max-eps", "3").code == 0


@pytest.mark.slow
def test_a_cap_below_the_batches_meets_no_epsilon_under_zero_out(dpcalc):
    """zero-out neighbours have no step-by-step analysis here: the overflow alone (eta ~ 1)."""
    run = dpcalc(*CARD, "--max-batch-size", "300", "--neighbours", "zero-out", "--json")
    assert run.code == 0
    document = run.json()
    assert document["result"]["epsilon"] == "inf"
    assert any("no epsilon meets delta" in warning for warning in document["warnings"])
    assert dpcalc(*CARD, "--max-batch-size", "300", "--neighbours", "zero-out", "--max-eps", "10").code == 1


@pytest.mark.parametrize(("extra", "message"), [
    (("pld", "--p", "0.004", "--T", "10000", "--sigma", "1.1", "--max-batch-size", "300"),
     "Error: --max-batch-size needs the dataset size: give the run as --n, --batch-size and --epochs (or --T), "
     "so that the chance of a batch above the cap is known\n"),
    ((*CARD, "--max-batch-size", "0"), "Error: --max-batch-size must be an integer in [1, inf), got 0\n"),
    ((*CARD, "--max-batch-size", "300", "--sampling", "uniform", "--neighbours", "replace-one"),
     "Error: --max-batch-size caps Poisson batches of the gaussian mechanism, got uniform sampling of the gaussian "
     "mechanism\n"),
    (("pld", "--phase", "p=0.004,sigma=1.1,T=10", "--n", "1000", "--max-batch-size", "300"),
     "Error: --max-batch-size and --phase cannot be given together; the cap applies to a single-phase run given "
     "with the flags\n"),
    ((*CARD, "--max-batch-size", "300", "--chart"),
     "Error: --max-batch-size and --chart cannot be given together; the figures draw the Poisson run's profile; "
     "give them without the cap\n"),
    (("pld", "--n", "62500,70000", "--batch-size", "250", "--T", "10000", "--sigma", "1.1", "--max-batch-size", "300"),
     "Error: --max-batch-size takes one run: give the swept options one value each\n"),
    ((*CARD, "--max-batch-size", "300", "--accuracy", "1e-3,1e-4"),
     "Error: --max-batch-size takes one run: give the swept options one value each\n"),
])
def test_refusals(dpcalc, extra, message):
    run = dpcalc(*extra)
    assert (run.code, run.stderr) == (2, message)
