"""Kernel tier, kernels/cpu/fixed_point.py: each pass against numpy's own operations on the same columns, with
one chunk of rows, several, and none."""

import numpy as np
import pytest

from gpuforest.kernels.cpu import fixed_point
from gpuforest.kernels.cpu.fixed_point import CHUNK_ROWS


def columns_of(n_rows, seed=0):
    rng = np.random.default_rng(seed)
    gradients = rng.normal(scale=3.0, size=n_rows)
    hessians = rng.uniform(0.0, 0.25, size=n_rows)
    if n_rows:
        gradients[rng.integers(n_rows)] = -7.5  # the largest magnitude, negative
    return gradients, hessians


@pytest.mark.parametrize("n_rows", [0, 1, 37, CHUNK_ROWS + 5])
def test_column_abs_max_against_numpy(n_rows):
    columns = columns_of(n_rows)
    out = np.full(2, np.nan)
    fixed_point.column_abs_max(columns, out)
    expected = [np.abs(column).max() if n_rows else 0.0 for column in columns]
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("n_rows", [0, 1, 37, 2 * CHUNK_ROWS + 5])
def test_column_fixed_abs_sums_against_numpy(n_rows):
    columns = columns_of(n_rows, seed=1)
    scales = np.array([2.0**40, 2.0**-3])
    out = np.full(2, -1, dtype=np.int64)
    fixed_point.column_fixed_abs_sums(columns, scales, out)
    expected = [np.rint(np.abs(column) * scale).astype(np.int64).sum() for column, scale in zip(columns, scales)]
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("n_rows", [0, 37, CHUNK_ROWS + 5])
def test_to_fixed_point_against_numpy(n_rows):
    columns = columns_of(n_rows, seed=2)
    scales = np.array([2.0**50, 2.0**10])
    out = np.empty((n_rows, 2), dtype=np.int64)
    fixed_point.to_fixed_point(columns, scales, out)
    expected = np.column_stack([np.rint(column * scale) for column, scale in zip(columns, scales)]).astype(np.int64)
    np.testing.assert_array_equal(out, expected.reshape(n_rows, 2))
