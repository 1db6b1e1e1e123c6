"""The run rules in the core (dpcalc.core.training, core.as_poisson, core.calibrate.inputs): the
training form, refusals that name keywords (worded with options by the command line), and the
as-Poisson comparison as data."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from dpcalc.core.as_poisson import PoissonComparison, batch_scheme, compare_with_poisson
from dpcalc.core.calibrate.inputs import GivenRun, check_cap, parse_problem
from dpcalc.core.phases import Phase
from dpcalc.core.training import RunParameters, single_phase, training_run, with_relation
from dpcalc.core.validation import ParameterError, RunError, conflict


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def test_a_refusal_names_keywords_and_is_worded_with_options_by_the_caller():
    error = conflict("{p}", "{n}/{batch_size}", "p is batch-size / n; give one form")
    assert isinstance(error, ParameterError) and error.name == "p"
    assert str(error) == "p and n/batch_size cannot be given together; p is batch-size / n; give one form"
    assert error.worded(flag) == "--p and --n/--batch-size cannot be given together; p is batch-size / n; give one form"
    # values fill their fields as they are, never spelled; braces in a value stay text
    error = RunError("{epochs} {value} is too many", value="{T}")
    assert (str(error), error.worded(flag), error.name) == ("epochs {T} is too many", "--epochs {T} is too many", "epochs")


def test_the_training_form_is_exact():
    # 2.5 / 0.1 is 25.000000000000004 in floats: T = ceil(epochs / p) is computed on the decimals
    assert training_run(RunParameters(p=0.1, sigma=1.0, epochs=2.5)) == (0.1, 1.0, 25)
    assert training_run(RunParameters(n=60000, batch_size=256, epochs=3, noise_std=2.2, sensitivity=2.0)) == (
        256 / 60000, 1.1, 704)


@pytest.mark.parametrize(("values", "name", "message", "worded"), [
    ({"p": 0.004, "sigma": 1.1}, "T", "give the number of steps: T, or epochs",
     "give the number of steps: --T, or --epochs"),
    ({"p": 0.1, "T": 10, "epochs": 2, "sigma": 1.0}, "T", "T and epochs cannot be given together",
     "--T and --epochs cannot be given together"),
    ({"n": 100, "batch_size": 1000, "T": 10, "sigma": 1.0}, "batch_size",
     "batch_size must be in [1, n] = [1, 100], got 1000", "--batch-size must be in [1, n] = [1, 100], got 1000"),
    ({"p": 0.1, "T": 10, "sigma": 1.0, "sensitivity": 2.0}, "sensitivity",
     "sensitivity goes with noise_std (or scale): sigma is already noise std / sensitivity",
     "--sensitivity goes with --noise-std (or --scale): --sigma is already noise std / sensitivity"),
    ({"mechanism": "laplace", "T": 3}, "scale", "scale is required with mechanism laplace",
     "--scale is required with --mechanism laplace"),
])
def test_refusals_of_a_run_name_its_keywords(values, name, message, worded):
    with pytest.raises(RunError) as raised:
        single_phase(RunParameters(**values))
    assert raised.value.name == name and str(raised.value).startswith(message)
    assert raised.value.worded(flag).startswith(worded)


def test_the_relation_and_the_calibration_rules_name_keywords():
    with pytest.raises(RunError, match=r"^sampling shuffle needs neighbours zero-out or replace-one"):
        with_relation([Phase("gaussian", 0.1, 1.0, steps=10, epoch_steps=10)], "shuffle", None)
    with pytest.raises(RunError, match=r"^solve sigma and sigma cannot be given together"):
        parse_problem(GivenRun(target_epsilon=1.0, delta=1e-5, p=0.1, sigma=1.0, T=10), "sigma")
    with pytest.raises(RunError, match=r"^max_batch_size needs the dataset size: give the run as n, batch_size"):
        check_cap(10, "sigma", "pld", "gaussian", None, False, False)


def test_the_poisson_comparison_is_data():
    shuffled = (Phase("gaussian", 0.1, 1.0, steps=10, sampling="shuffle", neighbours="zero-out", epoch_steps=10),)
    assert batch_scheme(shuffled) == "shuffled" and batch_scheme([Phase("gaussian", 0.1, 1.0, steps=10)]) is None
    result = SimpleNamespace(phases=shuffled, epsilon_lower=1.0, epsilon_upper=1.1, delta_lower=1e-6, delta_upper=2e-6)
    poisson = SimpleNamespace(epsilon_upper=0.9, delta_upper=3e-6)
    assert compare_with_poisson(result, poisson, True) == PoissonComparison("shuffled", "epsilon", 0.9, 1.0, True)
    assert compare_with_poisson(result, poisson, False) == PoissonComparison("shuffled", "delta", 3e-6, 1e-6, False)
