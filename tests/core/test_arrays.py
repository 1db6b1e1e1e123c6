"""arrays: distinct sorted values without np.unique (which imports numpy.ma), against np.unique."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from dpcalc.core.arrays import first_of_distinct, sorted_distinct

# repeated values from a short list (what the callers meet: grids with shared points), and any floats
values = st.lists(st.one_of(st.sampled_from([0.0, 1e-6, 0.025, 0.1, 0.5, 1.0]), st.floats(allow_nan=False, width=64)),
                  max_size=40)


@given(values)
def test_sorted_distinct_is_np_unique(items):
    array = np.array(items, dtype=float)
    assert np.array_equal(sorted_distinct(array), np.unique(array))


@given(values)
def test_first_of_distinct_is_np_unique_with_first_indices(items):
    array = np.array(items, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning from infinite values (inf - inf)
        distinct, first = first_of_distinct(array)
        assert np.array_equal(sorted_distinct(array), np.unique(array))
    with np.errstate(invalid="ignore"):  # np.unique subtracts neighbours itself
        expected, expected_first = np.unique(array, return_index=True)
    assert np.array_equal(distinct, expected)
    assert np.array_equal(first, expected_first)


def test_neither_imports_numpy_ma():
    code = ("import sys, numpy as np; from dpcalc.core.arrays import first_of_distinct, sorted_distinct; "
            "sorted_distinct(np.array([2.0, 1.0, 2.0])); first_of_distinct(np.array([2.0, 1.0, 2.0])); "
            "print('numpy.ma' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"
