"""Node values, impurities and weights on the GPU (twin of ``kernels.cpu.leaf_values``).

``node_values``: one thread per node (grid-stride), calling ``common.node_values_at``
as a device function.
``add_leaf_values``: one thread per row (grid-stride). ``add_range_values``: one
thread per position (grid-stride), its range by a binary search in ``boundaries``
(``histogram._node_of_chunk``).
"""

import functools

from numba import cuda, types

from ..common import criterion_outputs, node_values_at
from . import jit_kernel
from .histogram import _node_of_chunk
from .launch import BLOCK_SIZE, elementwise_config
from .splitting import CONSTRAINED_MAX_REGISTERS, pair_criterion


@functools.lru_cache(maxsize=None)
def _node_values_kernel(multi_output):
    """``node_values``'s ``(python_function, kernel)``; ``multi_output``: for the criteria of several outputs
    (``common.multi_output_criterion``), capped at ``splitting.CONSTRAINED_MAX_REGISTERS`` (half occupancy)."""

    def node_values_kernel(criterion, totals, inv_scales, regularization, out_value, out_impurity, out_weight):
        for node in range(cuda.grid(1), totals.shape[0], cuda.gridsize(1)):
            node_values_at(criterion, totals, node, inv_scales, regularization, out_value, out_impurity, out_weight)

    return node_values_kernel, jit_kernel(node_values_kernel, max_registers=_max_registers(multi_output))


def _max_registers(multi_output):
    """ptxas's register cap of ``node_values``: the multi-output build's (see ``_node_values_kernel``)."""
    return CONSTRAINED_MAX_REGISTERS if multi_output else None


def node_values(criterion, totals, inv_scales, regularization, out_value, out_impurity, out_weight):
    """Value, impurity and weighted sample count of every node (see ``kernels.cpu.leaf_values``).

    Launch: one thread per node, blocks of up to 256 threads.
    """
    n_nodes = totals.shape[0]
    if n_nodes == 0:
        return
    blocks, threads = elementwise_config(n_nodes)
    _node_values_kernel(criterion_outputs(criterion) > 1)[1][blocks, threads](
        criterion, totals, inv_scales, regularization, out_value, out_impurity, out_weight
    )


def _add_leaf_values_kernel(raw, score_idx, rows, leaves, values):
    for i in range(cuda.grid(1), rows.shape[0], cuda.gridsize(1)):
        raw[rows[i], score_idx] += values[leaves[i]]


_add_leaf_values = jit_kernel(_add_leaf_values_kernel)


def add_leaf_values(raw, score_idx, rows, leaves, values):
    """``raw[rows[i], score_idx] += values[leaves[i]]`` (see ``kernels.cpu.leaf_values``); rows are distinct,
    so no atomics. Launch: one thread per row, blocks of up to 256 threads."""
    if rows.shape[0] == 0:
        return
    blocks, threads = elementwise_config(rows.shape[0])
    _add_leaf_values[blocks, threads](raw, score_idx, rows, leaves, values)


def _add_range_values_kernel(raw, score_idx, rows, boundaries, values):
    n_ranges = values.shape[0]
    for p in range(boundaries[0] + cuda.grid(1), boundaries[n_ranges], cuda.gridsize(1)):
        raw[rows[p], score_idx] += values[_node_of_chunk(boundaries, n_ranges, p)]


_add_range_values = jit_kernel(_add_range_values_kernel)


def add_range_values(raw, score_idx, rows, boundaries, values):
    """``raw[rows[p], score_idx] += values[r]`` for every position ``p`` of range ``r`` (see
    ``kernels.cpu.leaf_values``). Launch: one thread per entry of ``rows`` (the ranges lie within them;
    the boundaries stay on the device), blocks of up to 256 threads."""
    if values.shape[0] == 0 or rows.shape[0] == 0:
        return
    blocks, threads = elementwise_config(rows.shape[0])
    _add_range_values[blocks, threads](raw, score_idx, rows, boundaries, values)


def ptx_specializations():
    """``(name, python_function, argument_types, block_size[, max_registers])`` of every kernel launched here."""
    float64_1d = types.Array(types.float64, 1, "C")
    node_values_types = (
        types.int64, types.Array(types.int64, 2, "C"), float64_1d, types.UniTuple(types.float64, 2),
        types.Array(types.float64, 2, "C"), float64_1d, float64_1d,
    )
    return [
        (
            f"node_values{build}", _node_values_kernel(multi_output)[0],
            pair_criterion(node_values_types, 0) if multi_output else node_values_types, BLOCK_SIZE,
            _max_registers(multi_output),
        )
        for multi_output, build in ((False, ""), (True, "_multi_output"))
    ] + [
        (
            "add_leaf_values",
            _add_leaf_values_kernel,
            (
                types.Array(types.float64, 2, "C"), types.int64, types.Array(types.int32, 1, "C"),
                types.Array(types.int64, 1, "C"), float64_1d,
            ),
            BLOCK_SIZE,
        ),
        (
            "add_range_values",
            _add_range_values_kernel,
            (
                types.Array(types.float64, 2, "C"), types.int64, types.Array(types.int32, 1, "C"),
                types.Array(types.int64, 1, "C"), float64_1d,
            ),
            BLOCK_SIZE,
        ),
    ]
