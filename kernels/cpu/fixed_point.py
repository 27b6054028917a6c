"""Row statistics in fixed point (``statistics._to_fixed``'s passes over the columns, in parallel over chunks of
rows): each column's largest absolute value, its int64 sum of absolute values at a first scale, and the columns
at their final scales.

The maximum and the int64 sums do not depend on the order of the operations, so the CUDA twin
(``kernels.cuda.fixed_point``) gets the same numbers, hence the same scales.
"""

import numpy as np
from numba import njit, prange

# Rows per task.
CHUNK_ROWS = 65536


@njit(parallel=True, cache=True)
def column_abs_max(columns, out):
    """``out[c]``: the largest absolute value of ``columns[c]`` (a tuple of 1-D float64 arrays of one length);
    0 without rows. ``out`` (n_columns,) float64."""
    n_rows, n_columns = columns[0].shape[0], len(columns)
    n_chunks = (n_rows + CHUNK_ROWS - 1) // CHUNK_ROWS
    chunk_max = np.zeros((n_chunks, n_columns))
    for chunk in prange(n_chunks):
        for column in range(n_columns):
            values = columns[column]
            for row in range(chunk * CHUNK_ROWS, min(n_rows, (chunk + 1) * CHUNK_ROWS)):
                chunk_max[chunk, column] = max(chunk_max[chunk, column], abs(values[row]))
    out[:] = 0.0
    for chunk in range(n_chunks):
        for column in range(n_columns):
            out[column] = max(out[column], chunk_max[chunk, column])


@njit(parallel=True, cache=True)
def column_fixed_abs_sums(columns, scales, out):
    """``out[c]``: the int64 sum of ``rint(|value| * scales[c])`` over ``columns[c]`` (exact, so in any order);
    ``scales`` and ``out`` (n_columns,)."""
    n_rows, n_columns = columns[0].shape[0], len(columns)
    n_chunks = (n_rows + CHUNK_ROWS - 1) // CHUNK_ROWS
    chunk_sums = np.zeros((n_chunks, n_columns), dtype=np.int64)
    for chunk in prange(n_chunks):
        for column in range(n_columns):
            values = columns[column]
            for row in range(chunk * CHUNK_ROWS, min(n_rows, (chunk + 1) * CHUNK_ROWS)):
                chunk_sums[chunk, column] += np.int64(np.rint(abs(values[row]) * scales[column]))
    out[:] = chunk_sums.sum(axis=0)


@njit(parallel=True, cache=True)
def to_fixed_point(columns, scales, out):
    """``out[:, c] = rint(columns[c] * scales[c])`` in int64; ``out`` (n_rows, n_columns)."""
    n_columns = len(columns)
    for row in prange(out.shape[0]):
        for column in range(n_columns):
            out[row, column] = np.int64(np.rint(columns[column][row] * scales[column]))
