"""`dpcalc calibrate --max-batch-size` (truncated Poisson sampling): the quantity solved for the
capped run's epsilon (`pld --max-batch-size` at the answer), and every refusal."""

from __future__ import annotations

import math

import pytest

from dpcalc.core.accountants import accountant
from dpcalc.core.phases import Phase
from dpcalc.core.pld.truncated_profile import capped_epsilon
from dpcalc.core.pld.truncation import Truncation, account_truncated, cap_costs, overflow_probability

# the design card as a dataset: n 62500, expected batch 250 (p = 0.004)
CARD = ("calibrate", "--target-eps", "3", "--n", "62500", "--batch-size", "250")


def exact_overflow(records: int, p: float, cap: int, steps: int) -> float:
    """1 - (1 - P[Binomial(records, p) > cap])^steps at 40 digits (mpmath): the overflow probability
    eta bounds it from above, by the 1e-9 relative margin of core.pld.truncation."""
    import mpmath

    with mpmath.workdps(40):
        q = mpmath.mpf(p)  # the float p the run is given, exactly
        tail = mpmath.fsum(mpmath.binomial(records, k) * q**k * (1 - q) ** (records - k)
                           for k in range(cap + 1, records + 1))
        return float(1 - (1 - tail) ** steps)


def capped_pld(sigma: float, steps: int, p: float = 0.004, n: int = 62500, cap: int = 360) -> float:
    truncated, _poisson, _eta = account_truncated([Phase("gaussian", p, sigma, None, steps)], Truncation(n, cap),
                                                  delta=1e-5, epsilon=None, accuracy=1e-3)
    return truncated.epsilon_upper


@pytest.mark.slow
def test_sigma_of_a_capped_run(dpcalc):
    run = dpcalc(*CARD, "--T", "10000", "--max-batch-size", "360", "--json")
    assert (run.code, run.stderr) == (0, "")
    document = run.json()
    result = document["result"]
    assert document["inputs"]["max_batch_size"] == 360
    eta = overflow_probability([Phase("gaussian", 0.004, 1.0, None, 10000)], Truncation(62500, 360))
    assert result["truncation"] == {"max_batch_size": 360, "overflow_probability": eta}
    assert "batches capped at 360" in result["basis"]
    # the answer's epsilon is `dpcalc pld --max-batch-size 360`'s there, to the last bit, and meets the
    # target; the next grid value below exceeds it (measured: 0.873409 against 0.856809 without the cap)
    assert result["epsilon"] == capped_pld(result["sigma"], 10000) <= 3.0
    assert result["rejected"]["epsilon"] == capped_pld(result["rejected"]["sigma"], 10000) > 3.0
    plain = dpcalc(*CARD, "--T", "10000", "--json").json()["result"]
    assert plain["truncation"] is None
    assert plain["sigma"] < result["sigma"] < plain["sigma"] * 1.05


@pytest.mark.slow
def test_steps_of_a_capped_run(dpcalc):
    arguments = ("calibrate", "--target-eps", "2", "--n", "62500", "--batch-size", "250", "--solve", "T", "--sigma", "1.1")
    run = dpcalc(*arguments, "--max-batch-size", "360", "--json")
    assert run.code == 0
    result = run.json()["result"]
    # the exact largest T (measured: 11305 against 11646 without the cap); T + 1 exceeds the target
    assert result["epsilon"] == capped_pld(1.1, result["T"]) <= 2.0
    assert result["rejected"] == {"T": result["T"] + 1, "epsilon": capped_pld(1.1, result["T"] + 1)}
    assert result["rejected"]["epsilon"] > 2.0
    plain = dpcalc(*arguments, "--json").json()["result"]
    assert result["T"] < plain["T"]


@pytest.mark.slow
def test_sigma_of_a_small_capped_run(dpcalc):
    run = dpcalc("calibrate", "--target-eps", "1", "--n", "1000", "--batch-size", "100", "--T", "100",
                 "--max-batch-size", "165", "--json")
    assert run.code == 0
    result = run.json()["result"]
    eta = result["truncation"]["overflow_probability"]
    assert exact_overflow(1001, 0.1, 165, 100) <= eta <= exact_overflow(1001, 0.1, 165, 100) * (1 + 1e-8)
    assert result["epsilon"] == capped_pld(result["sigma"], 100, p=0.1, n=1000, cap=165) <= 1.0
    assert capped_pld(result["rejected"]["sigma"], 100, p=0.1, n=1000, cap=165) > 1.0


def test_batch_size_of_a_capped_run_with_rdp(dpcalc):
    run = dpcalc("calibrate", "--target-eps", "2", "--solve", "batch-size", "--n", "62500", "--epochs", "40",
                 "--sigma", "1.1", "--max-batch-size", "360", "--accountant", "rdp", "--json")
    assert run.code == 0
    result = run.json()["result"]
    rdp = accountant("rdp")

    def capped_rdp(batch: int) -> float:
        phase = Phase("gaussian", batch / 62500, 1.1, None, math.ceil(40 * 62500 / batch))
        cost = cap_costs([phase], Truncation(62500, 360))[0]  # what the cap adds above (eta or less)
        return capped_epsilon(lambda d: rdp.epsilon([phase], d).epsilon, 1e-5, cost)

    assert result["epsilon"] == capped_rdp(result["batch_size"]) <= 2.0
    assert result["rejected"]["epsilon"] == capped_rdp(result["batch_size"] + 1) > 2.0
    plain = dpcalc("calibrate", "--target-eps", "2", "--solve", "batch-size", "--n", "62500", "--epochs", "40",
                   "--sigma", "1.1", "--accountant", "rdp", "--json").json()["result"]
    assert result["batch_size"] <= plain["batch_size"]


@pytest.mark.slow
def test_a_cap_that_keeps_the_target_out_of_reach_says_so(dpcalc):
    # zero-out: the overflow alone, eta = 3.3e-6 at delta 1e-5: (1 + e^eps) eta > delta for every eps
    # above log(1e-5 / eta - 1) = 0.717
    run = dpcalc("calibrate", "--target-eps", "2", "--n", "1000", "--batch-size", "10", "--T", "50",
                 "--max-batch-size", "30", "--accountant", "rdp", "--neighbours", "zero-out", "--json")
    assert run.code == 0
    document = run.json()
    result = document["result"]
    eta = result["truncation"]["overflow_probability"]
    assert exact_overflow(1000, 0.01, 30, 50) <= eta <= exact_overflow(1000, 0.01, 30, 50) * (1 + 1e-8)
    assert result["epsilon"] <= math.log(1e-5 / eta - 1) < 2.0
    assert result["rejected"]["epsilon"] == "inf"
    assert any(warning.startswith("some batch overflows the cap 30 with probability up to 3.2") and
               "exceeds delta = 1e-05 at every epsilon above 0.7" in warning for warning in document["warnings"])


@pytest.mark.slow
def test_step_by_step_the_same_cap_leaves_the_target_in_reach(dpcalc):
    """Under add-remove the same cap costs (1 + e^eps) times T w p tv, w the chance that the other
    records fill B - 1 places (~1e-8 here), not eta: the target is spent, with no warning."""
    run = dpcalc("calibrate", "--target-eps", "2", "--n", "1000", "--batch-size", "10", "--T", "50",
                 "--max-batch-size", "30", "--accountant", "rdp", "--json")
    assert run.code == 0
    document = run.json()
    result = document["result"]
    assert 1.9 < result["epsilon"] <= 2.0
    assert not any(warning.startswith("some batch overflows") for warning in document["warnings"])


@pytest.mark.slow
def test_the_table_shows_the_cap(dpcalc):
    run = dpcalc("calibrate", "--target-eps", "1", "--n", "1000", "--batch-size", "100", "--T", "100",
                 "--max-batch-size", "200")
    assert run.code == 0
    assert "max batch size" in run.stdout and "overflow probability" in run.stdout


@pytest.mark.parametrize("arguments, message", [
    (("--n", "1000", "--batch-size", "10", "--T", "50", "--max-batch-size", "0"),
     "--max-batch-size must be an integer in [1, inf), got 0"),
    (("--n", "1000", "--batch-size", "10", "--T", "50", "--max-batch-size", "3.5"),
     "--max-batch-size must be an integer in [1, inf), got 3.5"),
    (("--p", "0.01", "--T", "50", "--max-batch-size", "30"),
     "--max-batch-size needs the dataset size: give the run as --n, --batch-size and --epochs (or --T), so that the "
     "chance of a batch above the cap is known"),
    (("--solve", "p", "--T", "50", "--sigma", "1", "--max-batch-size", "30"),
     "--max-batch-size and --solve p cannot be given together; the cap needs the dataset size: give --n and solve "
     "for the batch size (--solve batch-size)"),
    (("--n", "1000", "--batch-size", "10", "--T", "50", "--max-batch-size", "30", "--accountant", "gdp"),
     "--max-batch-size 30: the central-limit gdp accountant has no capped figure; use --accountant pld or rdp"),
    (("--n", "1000", "--batch-size", "10", "--T", "50", "--max-batch-size", "30", "--sampling", "shuffle", "--neighbours", "zero-out"),
     "--max-batch-size caps Poisson batches of the gaussian mechanism, got shuffle sampling of the gaussian "
     "mechanism"),
    (("--mechanism", "laplace", "--T", "5", "--max-batch-size", "30"),
     "--max-batch-size and --mechanism laplace cannot be given together; the cap applies to Poisson batches of a "
     "Gaussian run"),
], ids=["zero", "fraction", "no-n", "solve-p", "gdp", "shuffle", "laplace"])
def test_refusals(dpcalc, arguments, message):
    run = dpcalc("calibrate", "--target-eps", "2", *arguments)
    assert run.code == 2
    assert run.stderr == f"Error: {message}\n"


def test_refused_with_a_risk_target(dpcalc):
    run = dpcalc("calibrate", "--target-advantage", "0.1", "--n", "1000", "--batch-size", "10", "--T", "50",
                 "--max-batch-size", "30")
    assert run.code == 2
    assert run.stderr == ("Error: --max-batch-size 30: risk targets calibrate the Poisson run; calibrate a capped run "
                          "with --target-eps, or check its risk with dpcalc risk --max-batch-size\n")


@pytest.mark.slow
def test_the_python_api_takes_the_cap(dpcalc):
    from dpcalc import calibrate

    result = calibrate(solve="T", target_eps=1, delta=1e-5, n=1000, batch_size=100, sigma=1.5, max_batch_size=165)
    document = dpcalc("calibrate", "--target-eps", "1", "--n", "1000", "--batch-size", "100", "--solve", "T",
                      "--sigma", "1.5", "--max-batch-size", "165", "--json").json()["result"]
    assert (result.value, result.epsilon, result.overflow) == (
        document["T"], document["epsilon"], document["truncation"]["overflow_probability"])
    with pytest.raises(ValueError, match=r"^max_batch_size needs the dataset size: give the run as n, batch_size"):
        calibrate(target_eps=3, delta=1e-5, p=0.004, T=100, max_batch_size=360)
