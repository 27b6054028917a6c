"""Apply splits on the GPU: stable partition of each split node's rows (twin of ``kernels.cpu.partitioning``).

Every node's rows are cut into tiles of ``TILE_ROWS`` rows, one tile per block,
so a node of a million rows spreads over hundreds of blocks on every SM. Four
launches (counts, scan, scatter, as XGBoost's row partitioner and CUB's
partition do):

1. ``histogram.chunk_table``: one block turns the nodes' row counts into
   ``offsets``, the prefix sum of their tiles (block ``b`` takes tile ``b``; its
   node by a binary search in ``offsets``).
2. ``count_left``: each block counts its tile's left rows (``common.goes_left``).
3. ``scatter``: each block adds up the left counts of its node's earlier tiles,
   then walks its tile in chunks of ``PARTITION_THREADS`` rows: a block-wide
   scan of the flags gives each row its place among the node's left rows, and
   it is written to ``scratch``: left rows from ``start``, right rows from
   ``start + n_left``, both in their original order.
4. ``copy_back``: each block copies its tile of ``scratch`` to ``sample_indices``.

Nodes must not overlap (as on the CPU).
"""

import numba
from numba import cuda, types

from ..common import goes_left
from . import jit_kernel
from .histogram import _node_of_chunk, array_namespace, chunk_table, inclusive_scan

PARTITION_THREADS = 256
TILE_ROWS = 16 * PARTITION_THREADS


@cuda.jit(device=True)
def _tile_rows(offsets, tile_rows, node_start, node_stop, tile):
    """``(node, first, last)``: the node of ``tile`` and the positions of its rows."""
    node = _node_of_chunk(offsets, node_start.shape[0], tile)
    first = node_start[node] + (tile - offsets[node]) * tile_rows[0]
    return node, first, min(first + tile_rows[0], node_stop[node])


def _count_left_kernel(
    X_binned, sample_indices, node_start, node_stop, split_feature, split_bin, split_missing_left, missing_bin,
    offsets, tile_rows, tile_left,
):
    tile = cuda.blockIdx.x
    if tile >= offsets[node_start.shape[0]]:
        return
    node, first, last = _tile_rows(offsets, tile_rows, node_start, node_stop, tile)
    feature_idx = split_feature[node]
    threshold_bin = split_bin[node]
    missing_left = split_missing_left[node]
    n_left = 0
    for chunk_start in range(first, last, PARTITION_THREADS):  # the same trips for every thread
        position = chunk_start + cuda.threadIdx.x
        left = 0
        if position < last:
            if goes_left(X_binned[sample_indices[position], feature_idx], threshold_bin, missing_left, missing_bin):
                left = 1
        n_left += cuda.syncthreads_count(left)
    if cuda.threadIdx.x == 0:
        tile_left[tile] = n_left


def _scatter_kernel(
    X_binned, sample_indices, scratch, node_start, node_stop, n_left, split_feature, split_bin, split_missing_left,
    missing_bin, offsets, tile_rows, tile_left,
):
    scan = cuda.shared.array(PARTITION_THREADS, numba.int32)
    tid = cuda.threadIdx.x
    tile = cuda.blockIdx.x
    if tile >= offsets[node_start.shape[0]]:
        return
    node, first, last = _tile_rows(offsets, tile_rows, node_start, node_stop, tile)
    earlier_left = 0
    for earlier in range(offsets[node] + tid, tile, PARTITION_THREADS):
        earlier_left += tile_left[earlier]
    inclusive_scan(scan, tid, earlier_left, PARTITION_THREADS)
    n_left_before = scan[PARTITION_THREADS - 1]  # the node's left rows before this chunk
    cuda.syncthreads()
    start = node_start[node]
    right_start = start + n_left[node]
    feature_idx = split_feature[node]
    threshold_bin = split_bin[node]
    missing_left = split_missing_left[node]
    for chunk_start in range(first, last, PARTITION_THREADS):
        position = chunk_start + tid
        row = 0
        left = 0
        if position < last:
            row = sample_indices[position]
            if goes_left(X_binned[row, feature_idx], threshold_bin, missing_left, missing_bin):
                left = 1
        left_before = n_left_before + inclusive_scan(scan, tid, left, PARTITION_THREADS) - left
        if position < last:
            if left == 1:
                scratch[start + left_before] = row
            else:
                scratch[right_start + (position - start - left_before)] = row
        n_left_before += scan[PARTITION_THREADS - 1]
        cuda.syncthreads()  # everyone has read the scan before the next chunk writes it


def _copy_back_kernel(sample_indices, scratch, node_start, node_stop, offsets, tile_rows):
    tile = cuda.blockIdx.x
    if tile >= offsets[node_start.shape[0]]:
        return
    _, first, last = _tile_rows(offsets, tile_rows, node_start, node_stop, tile)
    for position in range(first + cuda.threadIdx.x, last, PARTITION_THREADS):
        sample_indices[position] = scratch[position]


_count_left = jit_kernel(_count_left_kernel)
_scatter = jit_kernel(_scatter_kernel)
_copy_back = jit_kernel(_copy_back_kernel)


def apply_splits(
    X_binned, sample_indices, scratch, node_start, node_stop, n_left, split_feature, split_bin,
    split_missing_left, missing_bin,
):
    """Partition ``sample_indices[node_start:node_stop]`` of every split node (see ``kernels.cpu``).

    Launch: ``chunk_table`` (one block), then the three tile kernels on ``n_nodes +
    ceil(n_entries / TILE_ROWS)`` blocks of ``PARTITION_THREADS`` threads (enough for
    every tile of non-overlapping nodes; blocks past the last tile return at once).
    """
    if node_start.shape[0] == 0:
        return
    n_blocks, offsets, tile_rows = chunk_table(node_start, node_stop, sample_indices.shape[0], TILE_ROWS)
    tile_left = array_namespace(node_start).empty(n_blocks, dtype=sample_indices.dtype)
    split = (split_feature, split_bin, split_missing_left, missing_bin)
    _count_left[n_blocks, PARTITION_THREADS](
        X_binned, sample_indices, node_start, node_stop, *split, offsets, tile_rows, tile_left
    )
    _scatter[n_blocks, PARTITION_THREADS](
        X_binned, sample_indices, scratch, node_start, node_stop, n_left, *split, offsets, tile_rows, tile_left
    )
    _copy_back[n_blocks, PARTITION_THREADS](sample_indices, scratch, node_start, node_stop, offsets, tile_rows)


def ptx_specializations():
    """``(name, python_function, argument_types, block_size)`` of every kernel launched here."""
    int64_1d = types.Array(types.int64, 1, "C")
    int32_1d = types.Array(types.int32, 1, "C")
    X_binned = types.Array(types.uint8, 2, "F")
    split = (int32_1d, int32_1d, types.Array(types.boolean, 1, "C"), types.int64)
    return [
        ("count_left", _count_left_kernel,
         (X_binned, int32_1d, int64_1d, int64_1d, *split, int64_1d, int64_1d, int32_1d), PARTITION_THREADS),
        ("scatter", _scatter_kernel,
         (X_binned, int32_1d, int32_1d, int64_1d, int64_1d, int64_1d, *split, int64_1d, int64_1d, int32_1d),
         PARTITION_THREADS),
        ("copy_back", _copy_back_kernel, (int32_1d, int32_1d, int64_1d, int64_1d, int64_1d, int64_1d),
         PARTITION_THREADS),
    ]
