"""Strategy matrices, Toeplitz coefficients and participation schemas: what is built, what is refused."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dpcalc.core.mf.participation import Participation, best_linear, patterns_of_size
from dpcalc.core.mf.strategy import read_strategy, strategy_matrix, toeplitz_strategy
from dpcalc.core.validation import ParameterError
from tests.core.mf.oracle import patterns


@pytest.mark.parametrize(("matrix", "message"), [
    ([[1.0, 0.5], [0.0, 1.0]], "strategy must be lower-triangular (every entry above the diagonal 0), "
                               "got 0.5 at row 1, column 2"),
    ([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]], "strategy must be a square lower-triangular matrix of finite numbers, "
                                         "got an array of shape (2, 3)"),
    ([1.0, 2.0], "got an array of shape (2,)"),
    ([[1.0, 0.0], [math.nan, 1.0]], "got nan at row 2, column 1"),
    ([[math.inf]], "got inf at row 1, column 1"),
    ([[0.0, 0.0], [0.0, 0.0]], "strategy must be a matrix with a nonzero entry, got a zero matrix"),
    ([["a"]], "strategy must be a square lower-triangular matrix of finite numbers, got entries that are not numbers"),
    (np.zeros((0, 0)), "got an array of shape (0, 0)"),
])
def test_bad_strategy_matrices(matrix, message):
    with pytest.raises(ParameterError, match=None) as error:
        strategy_matrix(matrix)
    assert message in str(error.value)
    assert error.value.name == "strategy" and "\n" not in str(error.value)


@pytest.mark.parametrize(("coefficients", "steps", "message"), [
    ([], 3, "coefficients must be finite numbers, at most 3 of them (one per step), not all 0, got 0 coefficients"),
    ([1.0, 0.5, 0.2, 0.1], 3, "got 4 coefficients (1, 0.5, 0.2, 0.1)"),
    ([0.0, 0.0], 3, "got 2 coefficients (0, 0)"),
    ([1.0, math.nan], 3, "got 2 coefficients (1, nan)"),
])
def test_bad_coefficients(coefficients, steps, message):
    with pytest.raises(ParameterError) as error:
        toeplitz_strategy(coefficients, steps)
    assert message in str(error.value)


def test_bad_steps_for_coefficients():
    with pytest.raises(ParameterError, match=r"steps must be an integer in \[1, inf\), got 0"):
        toeplitz_strategy([1.0], 0)


def test_toeplitz_matrix_and_bands():
    strategy = toeplitz_strategy([1.0, -0.5, 0.25, 0.0, 0.0], 6)
    assert strategy.bands == 3 and strategy.coefficients is not None and strategy.coefficients.size == 3
    dense = strategy.dense()
    expected = np.array([[[1.0, -0.5, 0.25][i - j] if 0 <= i - j < 3 else 0.0 for j in range(6)] for i in range(6)])
    np.testing.assert_array_equal(dense, expected)
    np.testing.assert_allclose(strategy.column_norms_squared(), (dense**2).sum(axis=0), rtol=1e-15)
    assert strategy_matrix(dense).bands == 3
    assert strategy_matrix(np.eye(4)).bands == 1
    assert strategy_matrix(np.tri(4)).bands == 4
    sparse = np.zeros((5, 5))
    sparse[4, 1] = 2.0
    assert strategy_matrix(sparse).bands == 4


@pytest.mark.parametrize(("k", "s", "n", "message"), [
    (0, 1, 5, "participations must be an integer in [1, inf), got 0"),
    (1, 0, 5, "min_separation must be an integer in [1, inf), got 0"),
    (1, 1, 2.5, "steps must be an integer in [1, inf), got 2.5"),
    (3, 3, 6, "participations = 3 participations at least min_separation = 3 steps apart do not fit in "
              "steps = 6 steps: they need (k - 1) s < n; lower participations or min_separation"),
    (2, 10, 10, "do not fit in steps = 10 steps"),
    (1, 11, 10, "min_separation must be an integer in [1, 10] (at most the number of steps), got 11"),
])
def test_bad_schemas(k, s, n, message):
    with pytest.raises(ParameterError) as error:
        Participation(k, s, n)
    assert message in str(error.value)


def test_pattern_counts_and_enumeration():
    for n in range(1, 9):
        for s in range(1, n + 1):
            for k in range(1, (n - 1) // s + 2):
                schema = Participation(k, s, n)
                expected = sorted(patterns(n, k, s))
                assert schema.pattern_count() == len(expected)
                built = sorted(tuple(int(x) for x in row) for size in range(1, k + 1)
                               for row in patterns_of_size(schema, size))
                assert built == expected
                assert schema.greedy_pattern in expected


def test_best_linear_against_every_pattern():
    rng = np.random.default_rng(11)
    for n, k, s in itertools.product((1, 4, 9), (1, 2, 3), (1, 2, 4)):
        if (k - 1) * s >= n or s > n:
            continue
        weights = rng.normal(size=(3, n))
        best = best_linear(weights, Participation(k, s, n))
        expected = [max([0.0] + [row[list(p)].sum() for p in patterns(n, k, s)]) for row in weights]
        np.testing.assert_allclose(best, expected, rtol=1e-12, atol=1e-15)


def test_read_strategy_files(tmp_path):
    matrix = np.tril(np.arange(1.0, 10.0).reshape(3, 3))
    np.save(tmp_path / "c.npy", matrix)
    np.savetxt(tmp_path / "c.csv", matrix, delimiter=",")
    for name in ("c.npy", "c.csv"):
        strategy = read_strategy(tmp_path / name)
        np.testing.assert_array_equal(strategy.matrix, matrix)
    (tmp_path / "one.csv").write_text("2.5\n")
    assert read_strategy(tmp_path / "one.csv").steps == 1
    (tmp_path / "upper.csv").write_text("1,1\n0,1\n")
    with pytest.raises(ParameterError, match=r"strategy must be lower-triangular .* got 1.0 at row 1, column 2"):
        read_strategy(tmp_path / "upper.csv")
    (tmp_path / "words.csv").write_text("1,0\nx,1\n")
    with pytest.raises(ParameterError, match=r"strategy must be a \.npy file or CSV file of numbers, got .*words\.csv"):
        read_strategy(tmp_path / "words.csv")
    with pytest.raises(ParameterError, match=r"strategy must be a readable \.npy file or CSV file, got .*missing\.npy"):
        read_strategy(tmp_path / "missing.npy")
    np.save(tmp_path / "objects.npy", np.array([[{}]], dtype=object), allow_pickle=True)
    with pytest.raises(ParameterError, match="of numbers"):
        read_strategy(tmp_path / "objects.npy")
