"""`dpcalc pld` at extreme inputs: exit 0, clean stderr, strict JSON, sound bounds."""

from __future__ import annotations

import warnings

import pytest

from tests.slow import slow_cases

CASES = [
    ["--p", "0.5", "--sigma", "1e-200", "--T", "10"],
    ["--p", "1", "--sigma", "1e300", "--T", "1000000000000000", "--delta", "1e-300"],
    ["--p", "1e-300", "--sigma", "1e-300", "--T", "1", "--eps", "1000000"],
    ["--p", "1", "--mechanism", "laplace", "--scale", "1e-300", "--T", "1000000000000000"],
    ["--phase", "p=0.01,sigma=1e-100,T=5", "--phase", "p=0.5,sigma=2,T=100"],
    ["--p", "0.004", "--sigma", "1.1", "--T", "100000000000"],
]


@pytest.mark.parametrize("args", slow_cases(CASES, 5, one_argument=True))
def test_extreme_inputs_exit_zero_with_clean_stderr(dpcalc, args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning would become an internal error
        run = dpcalc("pld", *args, "--json")
    assert run.code == 0, run.stderr
    assert run.stderr == ""
    result = run.json()["result"]
    low, high = result["epsilon_lower"], result["epsilon_upper"]
    assert high == "inf" or low <= high


def test_astronomical_epsilon_is_inf_with_a_warning(dpcalc):
    run = dpcalc("pld", "--p", "0.5", "--sigma", "1e-200", "--T", "10", "--json")
    data = run.json()
    assert data["result"]["epsilon_upper"] == "inf"
    assert data["result"]["epsilon_lower"] > 1e300  # one step already exceeds every float
    assert any("astronomically large" in w for w in data["warnings"])
