"""Apply splits on the GPU: stable partition of each split node's rows (twin of ``kernels.cpu.partitioning``).

Every node's rows are cut into tiles of ``ROWS_PER_THREAD`` rows per thread of a
block, one tile per block, so a node of a million rows spreads over hundreds of
blocks on every SM. Four
launches (counts, scan, scatter, as XGBoost's row partitioner and CUB's
partition do):

1. ``histogram.chunk_table``: one block turns the nodes' row counts into
   ``offsets``, the prefix sum of their tiles (block ``b`` takes tile ``b``; its
   node by a binary search in ``offsets``).
2. ``count_left``: each block counts its tile's left rows (``common.goes_left``, or
   ``common.category_goes_left`` at a categorical split).
3. ``scatter``: each block adds up the left counts of its node's earlier tiles,
   then walks its tile in chunks of a row per thread: a block-wide
   scan of the flags gives each row its place among the node's left rows, and
   it is written to ``scratch``: left rows from ``start``, right rows from
   ``start + n_left``, both in their original order.
4. ``copy_back``: each block copies its tile of ``scratch`` to ``sample_indices``.

Nodes must not overlap (as on the CPU). The device levels of ``growth`` launch
``count_left`` and ``scatter`` over every node of a level with ``node_splits``
(0 or 1 per node; empty: all split): a node that does not split counts no left
rows and ``scatter`` copies its rows as they are, so that ``scratch`` holds
every node's rows and the next level reads it (no ``copy_back``).
"""

import functools

import numba
import numpy as np
from numba import cuda, types

from ..common import category_goes_left, goes_left
from . import jit_kernel
from .histogram import MAX_THREADS, _node_of_chunk, array_namespace, block_threads, chunk_table, inclusive_scan

ROWS_PER_THREAD = 16  # a tile holds ROWS_PER_THREAD * threads rows


@cuda.jit(device=True)
def _block_tile(offsets, tile_rows, node_start, node_stop):
    """``(tile, node, first, last)``: this block's tile, its node and the positions of its rows; ``tile`` -1
    for a block past the last tile."""
    tile = cuda.blockIdx.x
    if tile >= offsets[node_start.shape[0]]:
        return -1, 0, 0, 0
    node = _node_of_chunk(offsets, node_start.shape[0], tile)
    first = node_start[node] + (tile - offsets[node]) * tile_rows[0]
    return tile, node, first, min(first + tile_rows[0], node_stop[node])


@functools.lru_cache(maxsize=None)
def _row_goes_left(categorical_splits):
    """Device function ``(bin_idx, threshold_bin, missing_left, missing_bin, split_categorical,
    split_category_bitset, node) -> bool``: by ``common.goes_left``, or, with ``categorical_splits``, at a
    node whose split is categorical by its category's bit. The numeric one ignores the last three
    arguments (placeholders), so that partitions of numeric splits run the plain threshold code."""
    if categorical_splits:

        @cuda.jit(device=True, inline="always")
        def row_goes_left_by_kind(
            bin_idx, threshold_bin, missing_left, missing_bin, split_categorical, split_category_bitset, node,
        ):
            if split_categorical[node]:
                return category_goes_left(bin_idx, split_category_bitset[node], missing_left, missing_bin)
            return goes_left(bin_idx, threshold_bin, missing_left, missing_bin)

        return row_goes_left_by_kind

    @cuda.jit(device=True, inline="always")
    def row_goes_left(
        bin_idx, threshold_bin, missing_left, missing_bin, split_categorical, split_category_bitset, node,
    ):
        return goes_left(bin_idx, threshold_bin, missing_left, missing_bin)

    return row_goes_left


@cuda.jit(device=True, inline="always")
def splits_at(node_splits, node):
    """Whether ``node`` splits: ``node_splits[node]`` (0 or 1), every node when ``node_splits`` is empty."""
    return node_splits.shape[0] == 0 or node_splits[node] != 0


@functools.lru_cache(maxsize=None)
def _partition_kernels(categorical_splits):
    """``(count_left, scatter, copy_back)``, each ``(python_function, kernel)``, for blocks of any of
    ``BLOCK_SIZES`` (read from ``blockDim``: one compilation whatever the level's size);
    ``categorical_splits``: some of the splits may be categorical (``_row_goes_left``)."""
    row_goes_left = _row_goes_left(categorical_splits)

    def count_left_kernel(
        X_binned, sample_indices, node_start, node_stop, split_feature, split_bin, split_missing_left,
        missing_bin, split_categorical, split_category_bitset, node_splits, offsets, tile_rows, tile_left,
    ):
        threads = cuda.blockDim.x
        tile, node, first, last = _block_tile(offsets, tile_rows, node_start, node_stop)
        if tile < 0:
            return
        if not splits_at(node_splits, node):
            if cuda.threadIdx.x == 0:
                tile_left[tile] = 0
            return
        feature_idx = split_feature[node]
        threshold_bin = split_bin[node]
        missing_left = split_missing_left[node]
        n_left = 0
        for chunk_start in range(first, last, threads):  # the same trips for every thread
            position = chunk_start + cuda.threadIdx.x
            left = 0
            if position < last:
                bin_idx = X_binned[sample_indices[position], feature_idx]
                if row_goes_left(
                    bin_idx, threshold_bin, missing_left, missing_bin, split_categorical, split_category_bitset, node
                ):
                    left = 1
            n_left += cuda.syncthreads_count(left)
        if cuda.threadIdx.x == 0:
            tile_left[tile] = n_left

    def scatter_kernel(
        X_binned, sample_indices, scratch, node_start, node_stop, n_left, split_feature, split_bin,
        split_missing_left, missing_bin, split_categorical, split_category_bitset, node_splits, offsets, tile_rows,
        tile_left,
    ):
        scan = cuda.shared.array(MAX_THREADS, numba.int32)
        tid = cuda.threadIdx.x
        threads = cuda.blockDim.x
        tile, node, first, last = _block_tile(offsets, tile_rows, node_start, node_stop)
        if tile < 0:
            return
        if not splits_at(node_splits, node):
            # Its rows stay in order: copied, so that scratch holds every node's rows.
            for position in range(first + tid, last, threads):
                scratch[position] = sample_indices[position]
            return
        earlier_left = 0
        for earlier in range(offsets[node] + tid, tile, threads):
            earlier_left += tile_left[earlier]
        inclusive_scan(scan, tid, earlier_left, threads)
        n_left_before = scan[threads - 1]  # the node's left rows before this chunk
        cuda.syncthreads()
        start = node_start[node]
        right_start = start + n_left[node]
        feature_idx = split_feature[node]
        threshold_bin = split_bin[node]
        missing_left = split_missing_left[node]
        for chunk_start in range(first, last, threads):
            position = chunk_start + tid
            row = 0
            left = 0
            if position < last:
                row = sample_indices[position]
                bin_idx = X_binned[row, feature_idx]
                if row_goes_left(
                    bin_idx, threshold_bin, missing_left, missing_bin, split_categorical, split_category_bitset, node
                ):
                    left = 1
            left_before = n_left_before + inclusive_scan(scan, tid, left, threads) - left
            if position < last:
                if left == 1:
                    scratch[start + left_before] = row
                else:
                    scratch[right_start + (position - start - left_before)] = row
            n_left_before += scan[threads - 1]
            cuda.syncthreads()  # everyone has read the scan before the next chunk writes it

    def copy_back_kernel(sample_indices, scratch, node_start, node_stop, offsets, tile_rows):
        threads = cuda.blockDim.x
        tile, _, first, last = _block_tile(offsets, tile_rows, node_start, node_stop)
        if tile < 0:
            return
        for position in range(first + cuda.threadIdx.x, last, threads):
            sample_indices[position] = scratch[position]

    return tuple((kernel, jit_kernel(kernel)) for kernel in (count_left_kernel, scatter_kernel, copy_back_kernel))


def apply_splits(
    X_binned, sample_indices, scratch, node_start, node_stop, n_left, split_feature, split_bin,
    split_missing_left, missing_bin, split_categorical=None, split_category_bitset=None,
):
    """Partition ``sample_indices[node_start:node_stop]`` of every split node (see ``kernels.cpu``;
    ``split_categorical`` None: every split numeric, today's kernels).

    Launch: ``chunk_table`` (one block), then the three tile kernels on ``n_nodes +
    ceil(n_entries / tile)`` blocks (enough for every tile of non-overlapping nodes;
    blocks past the last tile return at once) of ``threads``: the smallest block of
    ``histogram.BLOCK_SIZES`` that covers a node's mean rows / ``ROWS_PER_THREAD``,
    with tiles of ``ROWS_PER_THREAD * threads`` rows.
    """
    n_nodes = node_start.shape[0]
    if n_nodes == 0:
        return
    n_entries = sample_indices.shape[0]
    threads = block_threads(-(-n_entries // (n_nodes * ROWS_PER_THREAD)))
    n_blocks, offsets, tile_rows = chunk_table(node_start, node_stop, n_entries, ROWS_PER_THREAD * threads)
    xp = array_namespace(node_start)
    tile_left = xp.empty(n_blocks, dtype=sample_indices.dtype)
    count_left, scatter, copy_back = (
        kernel for _, kernel in _partition_kernels(split_categorical is not None)
    )
    if split_categorical is None:  # the numeric kernels ignore them; a GPU launch takes no None
        split_categorical, split_category_bitset = split_missing_left, _no_category_bitsets(xp)
    split = (split_feature, split_bin, split_missing_left, missing_bin, split_categorical, split_category_bitset)
    every_node = _every_node_splits(xp)
    count_left[n_blocks, threads](
        X_binned, sample_indices, node_start, node_stop, *split, every_node, offsets, tile_rows, tile_left
    )
    scatter[n_blocks, threads](
        X_binned, sample_indices, scratch, node_start, node_stop, n_left, *split, every_node, offsets, tile_rows,
        tile_left,
    )
    copy_back[n_blocks, threads](sample_indices, scratch, node_start, node_stop, offsets, tile_rows)


@functools.cache
def _no_category_bitsets(xp):
    return xp.zeros((1, 1), dtype=np.uint32)


@functools.cache
def _every_node_splits(xp):
    """The partition kernels' ``node_splits`` of no entries: every node splits."""
    return xp.zeros(0, dtype=np.int64)


def ptx_specializations():
    """``(name, python_function, argument_types, block_size)`` of every kernel launched here."""
    int64_1d = types.Array(types.int64, 1, "C")
    int32_1d = types.Array(types.int32, 1, "C")
    X_binned = types.Array(types.uint8, 2, "F")
    split = (int32_1d, int32_1d, types.Array(types.boolean, 1, "C"), types.int64,
             types.Array(types.boolean, 1, "C"), types.Array(types.uint32, 2, "C"))
    specs = []
    for categorical_splits, suffix in ((False, ""), (True, "_categorical")):
        argument_types = (
            (X_binned, int32_1d, int64_1d, int64_1d, *split, int64_1d, int64_1d, int64_1d, int32_1d),
            (X_binned, int32_1d, int32_1d, int64_1d, int64_1d, int64_1d, *split, int64_1d, int64_1d, int64_1d,
             int32_1d),
            (int32_1d, int32_1d, int64_1d, int64_1d, int64_1d, int64_1d),
        )
        names = ("count_left", "scatter") if categorical_splits else ("count_left", "scatter", "copy_back")
        specs += [
            (f"{name}{suffix}", function, types_, MAX_THREADS)
            for name, (function, _), types_ in zip(names, _partition_kernels(categorical_splits), argument_types)
        ]
    return specs
