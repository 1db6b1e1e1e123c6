"""`dpcalc pld --sampling allocation` (random allocation, balls and bins): the figures the core
computes, their echo in the JSON, the Poisson figure beside them, the table, and every refusal."""

from __future__ import annotations

import pytest

from dpcalc.core.phases import Phase
from dpcalc.core.pld import tight_delta, tight_epsilon

# MNIST: n 60000, batch 256, an epoch of ceil(60000/256) = 235 steps; T = 14100 is 60 whole epochs
MNIST = ("pld", "--sigma", "1.1", "--n", "60000", "--batch-size", "256", "--sampling", "allocation")
SIXTY = (*MNIST, "--T", "14100")


def allocated(steps: int, neighbours: str = "add-remove") -> Phase:
    return Phase("gaussian", 256 / 60000, 1.1, None, steps, sampling="allocation", neighbours=neighbours,
                 epoch_steps=235)


@pytest.mark.slow
def test_allocation_reports_both_bounds_and_the_poisson_figure(dpcalc):
    run = dpcalc(*SIXTY, "--json")
    assert (run.code, run.stderr) == (0, "")
    document = run.json()
    (phase,) = document["inputs"]["phases"]
    assert phase == {"mechanism": "gaussian", "p": 256 / 60000, "sigma": 1.1, "scale": None, "T": 14100,
                     "sampling": "allocation", "neighbours": "add-remove", "examples_per_user": 1, "epoch_steps": 235}
    result = document["result"]
    assert {"epsilon", "epsilon_lower", "epsilon_upper", "analysis", "as_poisson"} <= set(result)
    # measured [2.334824, 2.335374]; PLD_accounting (Feldman and Shenfeld) gives [2.2956, 2.3775]
    assert result["epsilon_upper"] == pytest.approx(2.335374, rel=2e-4)
    assert result["epsilon_lower"] == pytest.approx(2.334824, rel=2e-4)
    assert result["epsilon"] == result["epsilon_upper"]
    assert 2.2956 <= result["epsilon_lower"] <= result["epsilon_upper"] <= 2.3775
    assert result["epsilon_upper"] - result["epsilon_lower"] <= 1e-3 * result["epsilon_upper"]
    core = tight_epsilon([allocated(14100)], 1e-5)
    assert (result["epsilon_lower"], result["epsilon_upper"]) == (core.epsilon_lower, core.epsilon_upper)
    assert "random allocation" in result["analysis"] and "235 steps" in result["analysis"]
    poisson = tight_epsilon([Phase("gaussian", 256 / 60000, 1.1, None, 14100)], 1e-5)
    assert isinstance(result["as_poisson"], dict)
    assert result["as_poisson"]["epsilon_upper"] == poisson.epsilon_upper
    assert result["as_poisson"]["epsilon_lower"] == poisson.epsilon_lower
    assert result["epsilon_upper"] < result["as_poisson"]["epsilon_lower"]  # allocation is the smaller here
    assert document["warnings"] == []


@pytest.mark.slow
def test_allocation_with_epochs(dpcalc):
    """--epochs 60 is T = ceil(60 n/b) = 14063 steps: 59 whole epochs and one of 198 steps, a
    little below 60 whole epochs."""
    document = dpcalc(*MNIST, "--epochs", "60", "--json").json()
    (phase,) = document["inputs"]["phases"]
    assert (phase["T"], phase["sampling"], phase["epoch_steps"]) == (14063, "allocation", 235)
    sixty = tight_epsilon([allocated(14100)], 1e-5)
    assert 0.0 < document["result"]["epsilon_lower"] <= document["result"]["epsilon_upper"] < sixty.epsilon_lower


@pytest.mark.slow
def test_allocation_table_says_random_allocation(dpcalc):
    run = dpcalc(*MNIST, "--epochs", "60")
    assert (run.code, run.stderr) == (0, "")
    text = " ".join(run.stdout.split())  # the table wraps with the terminal's width
    assert "random allocation" in text
    assert "as if Poisson" in text and "allocated batches" in text


@pytest.mark.slow
def test_allocation_with_eps_gives_delta_and_the_poisson_delta(dpcalc):
    document = dpcalc(*SIXTY, "--eps", "2", "--json").json()
    core = tight_delta([allocated(14100)], 2.0)
    result = document["result"]
    assert (result["delta_lower"], result["delta_upper"]) == (core.delta_lower, core.delta_upper)
    assert 0.0 < result["delta_lower"] <= result["delta_upper"] < result["as_poisson"]["delta_upper"]


@pytest.mark.slow
def test_zero_out_is_the_add_remove_figure(dpcalc):
    plain = dpcalc(*SIXTY, "--json").json()
    zero = dpcalc(*SIXTY, "--neighbours", "zero-out", "--json").json()
    assert zero["inputs"]["phases"][0]["neighbours"] == "zero-out"
    for key in ("epsilon_lower", "epsilon_upper"):
        assert zero["result"][key] == plain["result"][key]


@pytest.mark.slow
def test_allocation_phase_keys(dpcalc):
    run = dpcalc("pld", "--phase", "n=1000,batch_size=100,sigma=2,T=25", "--sampling", "allocation", "--json")
    assert run.code == 0
    (phase,) = run.json()["inputs"]["phases"]
    assert (phase["sampling"], phase["epoch_steps"]) == ("allocation", 10)


@pytest.mark.parametrize(
    "args, message, option",
    [
        ((*SIXTY, "--neighbours", "replace-one"),
         "Error: --sampling allocation needs --neighbours add-remove or zero-out, got --neighbours replace-one",
         "--neighbours"),
        (("pld", "--p", "0.004", "--sigma", "1.1", "--T", "100", "--sampling", "allocation"),
         "Error: --sampling allocation needs --n and --batch-size", "--batch-size"),
        (("pld", "--sigma", "1.1", "--n", "60000", "--T", "100", "--sampling", "allocation"),
         "Error: --n needs --batch-size", "--batch-size"),  # refused before the sampling is looked at
        ((*SIXTY, "--examples-per-user", "2"),
         "Error: --examples-per-user must be 1 with --sampling allocation and --neighbours add-remove, got 2",
         "--examples-per-user"),
        (("rdp", "--sigma", "1.1", "--n", "60000", "--batch-size", "256", "--epochs", "60", "--sampling",
          "allocation"),
         "Error: --sampling allocation with --neighbours add-remove has no RDP bound", "--sampling"),
    ],
)
def test_refusals(dpcalc, args, message, option):
    run = dpcalc(*args)
    assert run.code == 2 and run.stdout == ""
    assert message in run.stderr and option in run.stderr
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr


def test_help_lists_allocation(dpcalc):
    run = dpcalc("pld", "--help")
    assert run.code == 0
    text = " ".join(run.stdout.split())
    assert "[poisson|uniform|shuffle|allocation]" in text
    assert "allocation (random allocation, balls and bins" in text
