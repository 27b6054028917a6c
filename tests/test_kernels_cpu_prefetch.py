"""Kernel tier, kernels/cpu/prefetch.py: ``is_sparse`` against its definition (the rows span more than
``SPARSE_SPREAD`` times as many rows as there are positions), and ``prefetch_row`` as a hint only: loops that
prefetch every row, the last included, of 1-D and 2-D arrays give what numpy gives."""

import numpy as np
import pytest
from numba import njit

from gpuforest.kernels.cpu.prefetch import SPARSE_SPREAD, is_sparse, prefetch_row


def spans_widely(sample_indices, start, stop):
    """The rows at positions ``[start, stop)`` lie farther apart than ``SPARSE_SPREAD`` rows on average."""
    rows = sample_indices[start:stop]
    return rows.size > 0 and np.ptp(rows) > SPARSE_SPREAD * rows.size


@pytest.mark.parametrize("seed", range(3))
def test_is_sparse_follows_its_definition(seed):
    rng = np.random.default_rng(seed)
    for max_gap in (1, 4, 6, 12):
        sample_indices = np.cumsum(rng.integers(1, max_gap + 1, size=60)).astype(np.int32)
        for start, stop in rng.integers(0, 61, size=(40, 2)):
            start, stop = min(start, stop), max(start, stop)
            assert is_sparse(sample_indices, start, stop) == spans_widely(sample_indices, start, stop)


def test_is_sparse_at_the_boundary():
    n_positions = 5
    at_the_limit = np.arange(n_positions) * SPARSE_SPREAD * n_positions // (n_positions - 1)
    assert at_the_limit[-1] - at_the_limit[0] == SPARSE_SPREAD * n_positions
    assert not is_sparse(at_the_limit, 0, n_positions)
    one_more = at_the_limit.copy()
    one_more[-1] += 1
    assert is_sparse(one_more, 0, n_positions)
    assert not is_sparse(one_more, 3, 3)  # no positions


@njit
def prefetched_sum(array, rows):
    """Sum of ``array[rows]``, prefetching each row before it is read."""
    total = 0.0
    for position in range(rows.shape[0]):
        prefetch_row(array, rows[position])
        for value in array[rows[position]:rows[position] + 1].ravel():
            total += value
    return total


@pytest.mark.parametrize("shape", [(37,), (37, 3)])
@pytest.mark.parametrize("row_dtype", [np.int32, np.int64])
def test_prefetch_row_changes_no_result(shape, row_dtype):
    rng = np.random.default_rng(1)
    array = rng.integers(0, 100, size=shape).astype(np.float64)
    rows = np.concatenate([rng.permutation(shape[0]), [shape[0] - 1, 0]]).astype(row_dtype)
    assert prefetched_sum(array, rows) == array[rows].sum()
