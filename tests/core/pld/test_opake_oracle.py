"""Our certified lower bound against opake-accounting, an independent PLD accountant (oracle only).

opake-accounting 0.16.1 (compiled; benchmarks/opake_epsilon.py says exactly what is asked of it):
the Gaussian mechanism's PLD discretised by connecting the dots (Doroshenko, Ghazi, Kamath,
Kumar, Manurangsi, PETS 2022, arXiv 2207.04380) on a grid of interval 1e-4, Poisson-subsampled
under add/remove adjacency (both directions kept), composed T times by FFT; its epsilon is the
worst case over the two directions. That is a pessimistic estimate, not a certified bound (its
tails are truncated and its floating point is not bounded), so the check is one-sided, as for
dp_accounting in test_peers.py: its epsilon must not be below our certified epsilon_lower, and
our epsilon_upper is within 0.2% of it.

opake 0.16.1 needs Python 3.13 (on 3.11 its import fails with a TypeError). These tests run it
in this interpreter if it imports here; else in the interpreter named by DPCALC_OPAKE_PYTHON
(a subprocess, JSON over stdout); else they are skipped and say why. The recorded values are
checked against our lower bound without opake.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import platform
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from dpcalc.core.phases import Phase
from dpcalc.core.pld import PLDResult, tight_epsilon

pytestmark = pytest.mark.slow

ENVIRONMENT_VARIABLE = "DPCALC_OPAKE_PYTHON"
SCRIPT = Path(__file__).resolve().parents[3] / "benchmarks" / "opake_epsilon.py"
DELTA = 1e-5

# opake-accounting 0.16.1's epsilon at delta 1e-5 with its default DiscretizationConfig
# (benchmarks/opake_epsilon.py; Python 3.13.0, x86_64, 2026-11-24): (p, sigma, T) -> epsilon.
REFERENCE_VERSION = "0.16.1"
REFERENCES = {
    (0.004, 1.1, 10_000): 1.8411271383317203,  # the design card
    (1e-4, 0.8, 1_000_000): 0.7246380234069629,
    (0.01, 1.1, 1_000): 1.5154423566628403,
}
# The same release on another CPU may take another FFT code path: agreement to 1e-6 relative.
REFERENCE_RTOL = 1e-6
# Our upper bound is within 0.2% of a pessimistic peer on a 1e-4 grid (as in test_peers.py).
UPPER_RTOL = 2e-3

OpakeEpsilon = Callable[[float, float, int, float], dict]


@functools.cache
def ours(p: float, sigma: float, steps: int) -> PLDResult:
    return tight_epsilon([Phase("gaussian", p, sigma, None, steps)], DELTA)


def _script_in_process() -> OpakeEpsilon:
    spec = importlib.util.spec_from_file_location("opake_epsilon", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.opake_epsilon


def _script_in(python: str, p: float, sigma: float, steps: int, delta: float, cap: int | None = None,
               dataset_size: int | None = None) -> dict:
    argv = [python, "-I", str(SCRIPT), repr(p), repr(sigma), str(steps), repr(delta)]
    if cap is not None:
        argv += [str(cap), str(dataset_size)]
    completed = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    return json.loads(completed.stdout)


@pytest.fixture(scope="module")
def opake() -> OpakeEpsilon:
    """opake's accounting, here if it imports, else in $DPCALC_OPAKE_PYTHON; skips otherwise."""
    try:
        importlib.import_module("opake.api.accounting.core")
    except (ImportError, TypeError):  # 0.16.1 installed on Python 3.11 fails with a TypeError
        python = os.environ.get(ENVIRONMENT_VARIABLE)
        if not python:
            pytest.skip(f"opake-accounting does not import in Python {platform.python_version()}, and "
                        f"{ENVIRONMENT_VARIABLE} names no interpreter where it does")
        try:
            probe = subprocess.run([python, "-I", "-c", "import opake.api.accounting.core"], capture_output=True,
                                   text=True, timeout=120)
        except OSError as error:
            pytest.skip(f"{ENVIRONMENT_VARIABLE}={python} cannot be run: {error}")
        if probe.returncode != 0:
            last = (probe.stderr.strip().splitlines() or ["no message"])[-1]
            pytest.skip(f"opake-accounting does not import in {ENVIRONMENT_VARIABLE}={python}: {last}")
        return functools.partial(_script_in, python)
    return _script_in_process()


@pytest.mark.parametrize(("p", "sigma", "steps"), list(REFERENCES))
def test_opake_is_not_below_our_lower_bound(opake, p, sigma, steps):
    figures = opake(p, sigma, steps, DELTA)
    assert "error" not in figures, figures
    epsilon = figures["epsilon"]
    result = ours(p, sigma, steps)
    assert result.epsilon_lower <= epsilon
    assert result.epsilon_upper <= epsilon * (1 + UPPER_RTOL)
    if figures["version"] == REFERENCE_VERSION:
        assert epsilon == pytest.approx(REFERENCES[p, sigma, steps], rel=REFERENCE_RTOL)


@pytest.mark.parametrize(("p", "sigma", "steps"), list(REFERENCES))
def test_recorded_opake_values_are_not_below_our_lower_bound(p, sigma, steps):
    reference = REFERENCES[p, sigma, steps]
    result = ours(p, sigma, steps)
    assert result.epsilon_lower <= reference
    assert result.epsilon_upper <= reference * (1 + UPPER_RTOL)


# opake-accounting 0.16.1's truncated-Poisson PLD of the design card as a dataset (n 62500, p
# 0.004, sigma 1.1, T 10000) at delta 1e-5 (benchmarks/opake_epsilon.py ... CAP 62500; Python
# 3.13.0, x86_64, 2026-11-27): cap -> epsilon. A pessimistic figure, not a certified bound.
TRUNCATED_REFERENCES = {
    280: 4.438051877174724,
    300: 2.6966657886897565,
    320: 2.3590492799740788,
    360: 2.3559668276358234,
    400: 1.8411271383317203,
}


@functools.cache
def ours_capped(cap: int) -> PLDResult:
    from dpcalc.core.pld.truncation import Truncation, account_truncated

    return account_truncated([Phase("gaussian", 0.004, 1.1, None, 10_000)], Truncation(62_500, cap), delta=DELTA,
                             epsilon=None, accuracy=1e-3)[0]


@pytest.mark.parametrize("cap", list(TRUNCATED_REFERENCES))
def test_opake_capped_is_not_below_our_lower_bound(opake, cap):
    """One-sided, as above; our step-by-step upper bound lies below opake's figure at every cap
    but 400, where the cap costs nothing visible and opake's figure lies inside our interval."""
    figures = opake(0.004, 1.1, 10_000, DELTA, cap, 62_500)
    assert "error" not in figures, figures
    result = ours_capped(cap)
    assert result.epsilon_lower <= figures["epsilon"]
    if figures["version"] == REFERENCE_VERSION:
        assert figures["epsilon"] == pytest.approx(TRUNCATED_REFERENCES[cap], rel=REFERENCE_RTOL)


@pytest.mark.parametrize("cap", list(TRUNCATED_REFERENCES))
def test_recorded_opake_capped_values_are_not_below_our_lower_bound(cap):
    reference = TRUNCATED_REFERENCES[cap]
    result = ours_capped(cap)
    assert result.epsilon_lower <= reference
    if cap < 400:
        assert result.epsilon_upper < reference
    else:
        assert result.epsilon_upper <= reference * (1 + UPPER_RTOL)
