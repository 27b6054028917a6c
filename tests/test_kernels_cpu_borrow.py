"""Kernel tier, kernels/cpu/borrow.py: a borrowed view is the array's memory (reads and writes, views of it, calls
that take it), with its shape and strides, whatever its layout."""

import numpy as np
import pytest
from numba import njit

from gpuforest.kernels.cpu.borrow import borrowed


@njit
def column_sums(matrix):
    return matrix.sum(axis=0)


@njit
def through_a_borrowed_view(array, row):
    view = borrowed(array)
    view[row] = -view[row]  # written through
    return column_sums(borrowed(view[row:])), view.shape, view.strides


@pytest.mark.parametrize("layout", ["C", "F", "sliced"])
def test_a_borrowed_view_is_the_arrays_memory(layout):
    rng = np.random.default_rng(0)
    array = rng.normal(size=(7, 5))
    if layout == "F":
        array = np.asfortranarray(array)
    elif layout == "sliced":
        array = rng.normal(size=(14, 9))[::2, 1:6]
    expected = array.copy()
    expected[2] = -expected[2]
    sums, shape, strides = through_a_borrowed_view(array, 2)
    np.testing.assert_array_equal(array, expected)
    np.testing.assert_array_equal(sums, expected[2:].sum(axis=0))
    assert shape == array.shape and strides == array.strides
