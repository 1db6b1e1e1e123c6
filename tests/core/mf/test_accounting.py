"""The three matrix-factorisation mechanisms as phases, accounted by the PLD engine."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from dpcalc.core.mf.accounting import amplified_bandmf, matrix_mechanism, partition_probability, tree_aggregation
from dpcalc.core.mf.participation import Participation
from dpcalc.core.mf.strategy import strategy_matrix, toeplitz_strategy
from dpcalc.core.phases import Phase
from dpcalc.core.pld import tight_epsilon
from dpcalc.core.training import RunParameters, single_phase
from dpcalc.core.validation import ParameterError

DELTA = 1e-5
# Both sides are exact Gaussian (mu-GDP) runs or the same phases: the engine's closed form; the
# sensitivity's outward rounding (~1e-12 relative) is the only difference.
RTOL = 1e-9


def _epsilon(phases) -> float:
    return tight_epsilon(list(phases), DELTA).epsilon_upper


@pytest.mark.parametrize("sigma", [0.7, 2.0, 10.0])
def test_identity_with_one_participation_is_one_gaussian_release(sigma):
    result = matrix_mechanism(strategy_matrix(np.eye(50)), Participation(1, 1, 50), sigma)
    assert result.figure == "exact" and len(result.phases) == 1
    one_release = Phase("gaussian", sampling_probability=1.0, noise_multiplier=sigma, steps=1, neighbours="zero-out")
    assert _epsilon(result.phases) == pytest.approx(_epsilon([one_release]), rel=RTOL)


@pytest.mark.parametrize(("k", "s"), [(2, 1), (5, 10), (10, 5)])
def test_identity_with_k_participations_is_k_gaussian_releases(k, s):
    result = matrix_mechanism(strategy_matrix(np.eye(50)), Participation(k, s, 50), 3.0)
    releases = Phase("gaussian", sampling_probability=1.0, noise_multiplier=3.0, steps=k, neighbours="zero-out")
    assert _epsilon(result.phases) == pytest.approx(_epsilon([releases]), rel=RTOL)


def test_replace_one_doubles_the_shift():
    result = matrix_mechanism(toeplitz_strategy([1.0, 0.5], 20), Participation(2, 2, 20), 4.0, neighbours="replace-one")
    (phase,) = result.phases
    assert phase.neighbours == "replace-one" and phase.shift == 2.0
    assert phase.noise_multiplier == pytest.approx(4.0 / math.sqrt(2 * 1.25), rel=1e-11)


@pytest.mark.parametrize("function", ["matrix", "tree"])
def test_add_remove_is_refused_without_sampling(function):
    with pytest.raises(ParameterError) as error:
        if function == "matrix":
            matrix_mechanism(strategy_matrix(np.eye(3)), Participation(1, 1, 3), 1.0, neighbours="add-remove")
        else:
            tree_aggregation(1.0, 8, 4, neighbours="add-remove")
    assert str(error.value).startswith("neighbours must be zero-out or replace-one (a participation schema")
    assert str(error.value).endswith("got 'add-remove'")


def _dpsgd(n=60000, batch_size=240, epochs=10, sigma=1.0) -> Phase:
    (phase,) = single_phase(RunParameters(n=n, batch_size=batch_size, epochs=epochs, sigma=sigma))
    return phase


def test_one_band_is_dp_sgd():
    run = _dpsgd()
    result = amplified_bandmf(run, 1)
    assert result.phases == (run,) and result.figure == "exact"
    # a diagonal strategy with unit entries is the same run
    small = _dpsgd(n=1000, batch_size=50, epochs=2)
    with_identity = amplified_bandmf(small, 1, strategy=strategy_matrix(np.eye(small.steps)))
    assert with_identity.phases == (small,) and with_identity.figure == "exact"
    assert _epsilon(with_identity.phases) == _epsilon([small])


def test_bands_partition_the_run():
    run = _dpsgd()  # p = 0.004, T = 2500
    result = amplified_bandmf(run, 4)
    (phase,) = result.phases
    assert phase.sampling_probability == pytest.approx(0.016, rel=1e-15) and phase.sampling_probability >= 0.016
    assert phase.steps == 625 and phase.noise_multiplier == 1.0 and phase.sampling == "poisson"
    assert result.figure == "upper bound" and "Thm 4" in result.theorem
    assert any("norm at most 1" in text for text in result.assumptions)
    assert partition_probability(60000, 240, 4) == 240 / 15000
    # 10 steps in 3 partitions: partition 0 takes steps 0, 3, 6, 9
    assert amplified_bandmf(dataclasses.replace(run, steps=10), 3).phases[0].steps == 4


def test_strategy_column_norms_scale_the_noise():
    run = _dpsgd(n=2000, batch_size=100, epochs=1, sigma=2.0)  # 20 steps
    coefficients = [1.0, 0.6, 0.3]
    strategy = toeplitz_strategy(coefficients, run.steps)
    (phase,) = amplified_bandmf(run, 3, strategy=strategy).phases
    largest = math.sqrt(1 + 0.36 + 0.09)
    assert phase.noise_multiplier == pytest.approx(2.0 / largest, rel=1e-12) and phase.noise_multiplier <= 2.0 / largest
    # more epsilon than the same partitioned run with unit column norms
    assert _epsilon([phase]) > _epsilon(amplified_bandmf(run, 3).phases)


def test_amplified_bandmf_refusals():
    run = _dpsgd(n=2000, batch_size=100, epochs=1)
    with pytest.raises(ParameterError, match="bands = 21 is more than the T = 20 steps"):
        amplified_bandmf(run, 21)
    with pytest.raises(ParameterError, match="has 3 bands, more than bands = 2"):
        amplified_bandmf(run, 2, strategy=toeplitz_strategy([1.0, 0.5, 0.2], 20))
    with pytest.raises(ParameterError, match="has 19 steps but the run has T = 20"):
        amplified_bandmf(run, 2, strategy=toeplitz_strategy([1.0], 19))
    with pytest.raises(ParameterError, match=r"partition_probability must be in \[0, 1\], got 1.05"):
        amplified_bandmf(dataclasses.replace(run, sampling_probability=0.35), 3)
    with pytest.raises(ParameterError, match="bands must be an integer in"):
        amplified_bandmf(run, -1)
    with pytest.raises(ParameterError, match="partitions of n = 1000 records hold 333 records each"):
        partition_probability(1000, 400, 3)
    shuffled = Phase("gaussian", sampling_probability=0.05, noise_multiplier=1.0, steps=20, sampling="shuffle",
                     neighbours="zero-out", epoch_steps=20)
    with pytest.raises(ParameterError, match="run must be a gaussian phase with poisson sampling"):
        amplified_bandmf(shuffled, 2)


def test_tree_counts_the_complete_nodes_over_a_leaf():
    # tensorflow/privacy 2fe51d2e, tensorflow_privacy/privacy/analysis/tree_aggregation_accountant.py,
    # _compute_rdp_tree_restart: floor(log2 steps) + 1 nodes a tree, summed over the restarts
    for steps, epoch, nodes in ((8, 8, 4), (10, 4, 3 + 3 + 2), (1, 1, 1), (7, 7, 3), (2500, 250, 10 * 8)):
        result = tree_aggregation(1.5, steps, epoch)
        assert result.sensitivity is not None
        assert result.sensitivity.value == pytest.approx(math.sqrt(nodes), rel=1e-15)
        assert result.sensitivity.value >= math.sqrt(nodes) and result.figure == "exact"
    # the restarted trees compose: one Gaussian release per tree at sigma / sqrt(its nodes)
    result = tree_aggregation(3.0, 10, 4)
    per_tree = [Phase("gaussian", sampling_probability=1.0, noise_multiplier=3.0 / math.sqrt(h), steps=1,
                      neighbours="zero-out") for h in (3, 3, 2)]
    assert _epsilon(result.phases) == pytest.approx(_epsilon(per_tree), rel=1e-6)
