"""Row statistics in fixed point on the GPU (twin of ``kernels.cpu.fixed_point``).

A column's largest absolute value and its int64 sum of absolute values at a scale: each block reduces its rows
in shared memory and adds its result with one atomic (a maximum and an int64 sum are the same in any order, so
the CPU's numbers); the columns at their scales: one thread per row. A launch per column (boosting's two).
"""

import math

import numpy as np
from numba import cuda, njit, types

from . import jit_kernel
from .launch import BLOCK_SIZE, MAX_BLOCKS, elementwise_config

# From this magnitude on every float64 is an integer; below it, adding and taking it away again rounds to an
# integer, half to even (IEEE round to nearest): numpy's ``rint``.
_INTEGRAL_MAGNITUDE = 2.0**52


@njit(cache=True, inline="always")
def rint(value):
    """``value`` rounded to the nearest integer, half to even (``np.rint``), in float operations a GPU has."""
    magnitude = abs(value)
    if magnitude >= _INTEGRAL_MAGNITUDE:
        return value
    return math.copysign((magnitude + _INTEGRAL_MAGNITUDE) - _INTEGRAL_MAGNITUDE, value)


@cuda.jit(device=True)
def _reduce_block(block_values, tid, take_max):
    """Reduce the block's ``BLOCK_SIZE`` values (a thread's each) into ``block_values[0]``: their maximum with
    ``take_max``, else their sum; the whole block calls it."""
    cuda.syncthreads()
    step = BLOCK_SIZE // 2
    while step > 0:
        if tid < step:
            other = block_values[tid + step]
            block_values[tid] = max(block_values[tid], other) if take_max else block_values[tid] + other
        cuda.syncthreads()
        step //= 2


def _abs_max_kernel(values, out, column):
    block_max = cuda.shared.array(BLOCK_SIZE, types.float64)
    tid = cuda.threadIdx.x
    largest = 0.0
    for row in range(cuda.grid(1), values.shape[0], cuda.gridsize(1)):
        largest = max(largest, abs(values[row]))
    block_max[tid] = largest
    _reduce_block(block_max, tid, True)
    if tid == 0:
        cuda.atomic.max(out, column, block_max[0])


def _fixed_abs_sum_kernel(values, scale, out, column):
    block_sum = cuda.shared.array(BLOCK_SIZE, types.int64)
    tid = cuda.threadIdx.x
    total = 0
    for row in range(cuda.grid(1), values.shape[0], cuda.gridsize(1)):
        total += np.int64(rint(abs(values[row]) * scale))
    block_sum[tid] = total
    _reduce_block(block_sum, tid, False)
    if tid == 0:
        cuda.atomic.add(out, column, block_sum[0])


def _to_fixed_point_kernel(values, scale, out, column):
    for row in range(cuda.grid(1), values.shape[0], cuda.gridsize(1)):
        out[row, column] = np.int64(rint(values[row] * scale))


_abs_max = jit_kernel(_abs_max_kernel)
_fixed_abs_sum = jit_kernel(_fixed_abs_sum_kernel)
_to_fixed_point = jit_kernel(_to_fixed_point_kernel)


def _reduction_blocks(n_rows):
    """Blocks of ``BLOCK_SIZE`` threads (the reductions' power of two) for ``n_rows`` rows."""
    return min(-(-n_rows // BLOCK_SIZE), MAX_BLOCKS)


def column_abs_max(columns, out):
    """``out[c]``: the largest absolute value of ``columns[c]`` (a tuple of 1-D float64 device arrays of one
    length); 0 without rows. ``out`` (n_columns,) float64 on the device."""
    out[...] = 0.0
    n_rows = columns[0].shape[0]
    for column, values in enumerate(columns):
        if n_rows:
            _abs_max[_reduction_blocks(n_rows), BLOCK_SIZE](values, out, column)


def column_fixed_abs_sums(columns, scales, out):
    """``out[c]``: the int64 sum of ``rint(|value| * scales[c])`` over ``columns[c]``; ``scales`` (n_columns,) on
    the host, ``out`` (n_columns,) int64 on the device."""
    out[...] = 0
    n_rows = columns[0].shape[0]
    for column, values in enumerate(columns):
        if n_rows:
            _fixed_abs_sum[_reduction_blocks(n_rows), BLOCK_SIZE](values, float(scales[column]), out, column)


def to_fixed_point(columns, scales, out):
    """``out[:, c] = rint(columns[c] * scales[c])`` in int64; ``scales`` on the host, ``out`` (n_rows, n_columns)
    on the device."""
    if out.shape[0] == 0:
        return
    blocks, threads = elementwise_config(out.shape[0])
    for column, values in enumerate(columns):
        _to_fixed_point[blocks, threads](values, float(scales[column]), out, column)


def ptx_specializations():
    """``(name, python_function, argument_types, block_size)`` of every kernel launched here."""
    float64_1d = types.Array(types.float64, 1, "C")
    return [
        ("column_abs_max", _abs_max_kernel, (float64_1d, float64_1d, types.int64), BLOCK_SIZE),
        (
            "column_fixed_abs_sums", _fixed_abs_sum_kernel,
            (float64_1d, types.float64, types.Array(types.int64, 1, "C"), types.int64), BLOCK_SIZE,
        ),
        (
            "to_fixed_point", _to_fixed_point_kernel,
            (float64_1d, types.float64, types.Array(types.int64, 2, "C"), types.int64), BLOCK_SIZE,
        ),
    ]
