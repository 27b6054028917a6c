"""Multiway splits on the GPU (twin of ``kernels.cpu.multiway``): gains, and the k-way partition.

``multiway_gains``: one thread per (node, feature) (grid-stride) calls
``common.multiway_gain``, the CPU's sequential sum over the bins, so the gains
are the CPU's bit for bit.

``apply_multiway_splits``: a counting sort of each node's rows by part, on the
tiles of ``partitioning`` (``ROWS_PER_THREAD`` rows per thread of a block, one
tile per block, from ``histogram.chunk_table``), in four more launches:

1. ``count_parts``: each block counts its tile's rows per part (shared atomics).
2. ``place_parts``: one block per node, a thread per part (at most
   ``MAX_PARTS``): the prefix sums of the part's counts over the node's tiles,
   then a block-wide scan of the node's part totals, turn each tile's counts
   into the position of its first row of each part.
3. ``scatter_parts``: each block walks its tile in chunks of a row per thread;
   a row's rank among the chunk's rows of its part (the threads before it with
   the same part, read from shared memory) keeps the sort stable.
4. ``partitioning``'s ``copy_back``: each block copies its tile of ``scratch``
   to ``sample_indices``.
"""

import functools

import numpy as np
from numba import cuda, types

from ..common import NO_SPLIT, c45_split_gain, multiway_gain
from . import jit_kernel
from .histogram import MAX_THREADS, array_namespace, block_threads, chunk_table, inclusive_scan
from .launch import BLOCK_SIZE, elementwise_config
from .partitioning import ROWS_PER_THREAD, _block_tile, _partition_kernels

# Parts of a node: up to 255 children (codes of uint8 bins below the missing bin) and its rows with no child.
MAX_PARTS = 256


def _multiway_gains_kernel(
    hist, hist_rows, totals, feature_mask, n_bins_non_missing, missing_bin, criterion, inv_scales, regularization,
    min_samples_leaf, min_weight_leaf, out_gain,
):
    n_features = feature_mask.shape[1]
    for task in range(cuda.grid(1), feature_mask.shape[0] * n_features, cuda.gridsize(1)):
        node = task // n_features
        feature_idx = task % n_features
        gain = -np.inf
        if feature_mask[node, feature_idx]:
            gain = multiway_gain(
                criterion, totals[node], hist[hist_rows[node], feature_idx], n_bins_non_missing[feature_idx],
                missing_bin, inv_scales, regularization, min_samples_leaf, min_weight_leaf[node],
            )
        out_gain[node, feature_idx] = gain


_multiway_gains = jit_kernel(_multiway_gains_kernel)


def multiway_gains(
    hist, hist_rows, totals, feature_mask, n_bins_non_missing, missing_bin, criterion, inv_scales, regularization,
    min_samples_leaf, min_weight_leaf, out_gain,
):
    """Gain of the multiway split of every node on every feature (see ``kernels.cpu.multiway``).

    Launch: one thread per (node, feature), blocks of up to 256 threads.
    """
    n_tasks = feature_mask.shape[0] * feature_mask.shape[1]
    if n_tasks == 0:
        return
    blocks, threads = elementwise_config(n_tasks)
    _multiway_gains[blocks, threads](
        hist, hist_rows, totals, feature_mask, n_bins_non_missing, missing_bin, criterion, inv_scales, regularization,
        min_samples_leaf, min_weight_leaf, out_gain,
    )


# At most 64 registers a thread: 4 blocks of 256 threads an SM (50% occupancy); ptxas fits the numeric
# scan in them without spills (benchmarks/ptx_resources.py).
C45_MAX_REGISTERS = 64


@functools.lru_cache(maxsize=None)
def _c45_split_gains_kernel(categorical):
    """``(python_function, kernel)`` of C4.5's split of the categorical (``categorical``) or of the numeric
    features: two specialisations, each with one of ``common.c45_split_gain``'s paths (fewer registers)."""

    def c45_split_gains_kernel(
        hist, hist_rows, totals, feature_mask, is_categorical, n_bins_non_missing, missing_bin, inv_scales,
        min_objects, work, out_gain, out_gain_ratio, out_bin,
    ):
        n_features = feature_mask.shape[1]
        for task in range(cuda.grid(1), feature_mask.shape[0] * n_features, cuda.gridsize(1)):
            node = task // n_features
            feature_idx = task % n_features
            if is_categorical[feature_idx] != categorical:
                continue
            gain, gain_ratio, bin_idx = -np.inf, 0.0, NO_SPLIT
            if feature_mask[node, feature_idx]:
                gain, gain_ratio, bin_idx = c45_split_gain(
                    totals[node], hist[hist_rows[node], feature_idx], categorical, n_bins_non_missing[feature_idx],
                    missing_bin, inv_scales, min_objects, work[task],
                )
            out_gain[node, feature_idx] = gain
            out_gain_ratio[node, feature_idx] = gain_ratio
            out_bin[node, feature_idx] = bin_idx

    return c45_split_gains_kernel, jit_kernel(c45_split_gains_kernel, max_registers=C45_MAX_REGISTERS)


def c45_split_gains(
    hist, hist_rows, totals, feature_mask, is_categorical, n_bins_non_missing, missing_bin, inv_scales, min_objects,
    work, out_gain, out_gain_ratio, out_bin,
):
    """C4.5's split of every node on every feature (see ``kernels.cpu.multiway``).

    Launch: one thread per (node, feature), blocks of up to 256 threads; the categorical and the
    numeric features in a launch each.
    """
    n_tasks = feature_mask.shape[0] * feature_mask.shape[1]
    if n_tasks == 0:
        return
    blocks, threads = elementwise_config(n_tasks)
    for categorical in (True, False):
        _c45_split_gains_kernel(categorical)[1][blocks, threads](
            hist, hist_rows, totals, feature_mask, is_categorical, n_bins_non_missing, missing_bin, inv_scales,
            min_objects, work, out_gain, out_gain_ratio, out_bin,
        )


def _count_parts_kernel(
    X_binned, sample_indices, node_start, node_stop, split_feature, n_children, offsets, tile_rows, tile_parts,
):
    counts = cuda.shared.array(MAX_PARTS, types.int32)
    tid = cuda.threadIdx.x
    threads = cuda.blockDim.x
    tile, node, first, last = _block_tile(offsets, tile_rows, node_start, node_stop)
    if tile < 0:
        return
    n_parts = n_children[node] + 1
    for part in range(tid, n_parts, threads):
        counts[part] = 0
    cuda.syncthreads()
    feature_idx = split_feature[node]
    for position in range(first + tid, last, threads):
        cuda.atomic.add(counts, min(X_binned[sample_indices[position], feature_idx], n_children[node]), 1)
    cuda.syncthreads()
    for part in range(tid, n_parts, threads):
        tile_parts[tile, part] = counts[part]


def _scatter_parts_kernel(
    X_binned, sample_indices, scratch, node_start, node_stop, split_feature, n_children, offsets, tile_rows,
    tile_parts,
):
    next_position = cuda.shared.array(MAX_PARTS, types.int64)
    chunk_parts = cuda.shared.array(MAX_THREADS, types.int32)
    tid = cuda.threadIdx.x
    threads = cuda.blockDim.x
    tile, node, first, last = _block_tile(offsets, tile_rows, node_start, node_stop)
    if tile < 0:
        return
    for part in range(tid, n_children[node] + 1, threads):
        next_position[part] = tile_parts[tile, part]
    feature_idx = split_feature[node]
    for chunk_start in range(first, last, threads):  # the same trips for every thread
        position = chunk_start + tid
        row = 0
        part = -1
        if position < last:
            row = sample_indices[position]
            part = min(X_binned[row, feature_idx], n_children[node])
        chunk_parts[tid] = part
        cuda.syncthreads()
        rank = 0
        n_same = 0
        for other in range(threads):
            if chunk_parts[other] == part:
                n_same += 1
                rank += other < tid
        if part >= 0:
            scratch[next_position[part] + rank] = row
        cuda.syncthreads()  # everyone has read next_position and chunk_parts
        if part >= 0 and rank == n_same - 1:
            next_position[part] += n_same


def _place_parts_kernel(node_start, n_children, offsets, tile_parts, out_part_counts):
    """Block ``node`` (a thread per part at least): ``tile_parts[tile, part]`` from the tile's rows of the part
    to the position of its first one; ``out_part_counts[node]``: the node's rows per part."""
    scan = cuda.shared.array(MAX_THREADS, types.int64)
    node = cuda.blockIdx.x
    part = cuda.threadIdx.x
    threads = cuda.blockDim.x
    n_parts = n_children[node] + 1
    total = 0
    if part < n_parts:
        for tile in range(offsets[node], offsets[node + 1]):
            n_rows = tile_parts[tile, part]
            tile_parts[tile, part] = total
            total += n_rows
    if part < out_part_counts.shape[1]:
        out_part_counts[node, part] = total
    part_start = node_start[node] + inclusive_scan(scan, part, total, threads) - total
    if part < n_parts:
        for tile in range(offsets[node], offsets[node + 1]):
            tile_parts[tile, part] += part_start


# Blocks of any of BLOCK_SIZES threads (read from blockDim: one compilation whatever the level's size).
_count_parts = jit_kernel(_count_parts_kernel)
_scatter_parts = jit_kernel(_scatter_parts_kernel)
_place_parts = jit_kernel(_place_parts_kernel)


def apply_multiway_splits(
    X_binned, sample_indices, scratch, node_start, node_stop, split_feature, n_children, out_part_counts
):
    """Sort each split node's rows stably by part (see ``kernels.cpu.multiway``).

    Launch: ``chunk_table`` and the tile kernels as ``partitioning.apply_splits`` (blocks of
    ``threads``, tiles of ``ROWS_PER_THREAD * threads`` rows), ``place_parts`` on one block
    per node of the smallest of ``histogram.BLOCK_SIZES`` that holds a thread per part.
    """
    n_nodes = node_start.shape[0]
    if n_nodes == 0:
        return
    n_entries = sample_indices.shape[0]
    n_parts = out_part_counts.shape[1]
    threads = block_threads(-(-n_entries // (n_nodes * ROWS_PER_THREAD)))
    n_blocks, offsets, tile_rows = chunk_table(node_start, node_stop, n_entries, ROWS_PER_THREAD * threads)
    tile_parts = array_namespace(node_start).empty((n_blocks, n_parts), dtype=np.int64)
    _count_parts[n_blocks, threads](
        X_binned, sample_indices, node_start, node_stop, split_feature, n_children, offsets, tile_rows, tile_parts
    )
    place_threads = block_threads(n_parts)
    _place_parts[n_nodes, place_threads](
        node_start, n_children, offsets, tile_parts, out_part_counts
    )
    _scatter_parts[n_blocks, threads](
        X_binned, sample_indices, scratch, node_start, node_stop, split_feature, n_children, offsets, tile_rows,
        tile_parts,
    )
    copy_back = _partition_kernels(False)[2][1]
    copy_back[n_blocks, threads](sample_indices, scratch, node_start, node_stop, offsets, tile_rows)


def ptx_specializations():
    """``(name, python_function, argument_types, block_size)`` of every kernel launched here."""
    int64_1d = types.Array(types.int64, 1, "C")
    int32_1d = types.Array(types.int32, 1, "C")
    int64_2d = types.Array(types.int64, 2, "C")
    float64_1d = types.Array(types.float64, 1, "C")
    X_binned = types.Array(types.uint8, 2, "F")
    gains = (
        types.Array(types.int64, 4, "C"), int64_1d, int64_2d, types.Array(types.boolean, 2, "C"), int32_1d,
        types.int64, types.int64, float64_1d, types.UniTuple(types.float64, 2), types.int64, float64_1d,
        types.Array(types.float64, 2, "C"),
    )
    nodes = (int64_1d, int64_1d, int32_1d, int64_1d, int64_1d, int64_1d, int64_2d)
    count_types = (X_binned, int32_1d) + nodes
    scatter_types = (X_binned, int32_1d, int32_1d) + nodes
    place_types = (int64_1d, int64_1d, int64_1d, int64_2d, int64_2d)
    c45_gains = (
        types.Array(types.int64, 4, "C"), int64_1d, int64_2d, types.Array(types.boolean, 2, "C"),
        types.Array(types.boolean, 1, "C"), int32_1d, types.int64, float64_1d, types.float64,
        types.Array(types.int64, 3, "C"), types.Array(types.float64, 2, "C"), types.Array(types.float64, 2, "C"),
        types.Array(types.int32, 2, "C"),
    )
    specs = [
        ("multiway_gains", _multiway_gains_kernel, gains, BLOCK_SIZE),
    ] + [
        (f"c45_split_gains_{kind}", _c45_split_gains_kernel(categorical)[0], c45_gains, BLOCK_SIZE, C45_MAX_REGISTERS)
        for kind, categorical in (("categorical", True), ("numeric", False))
    ]
    specs += [
        ("count_parts", _count_parts_kernel, count_types, MAX_THREADS),
        ("place_parts", _place_parts_kernel, place_types, MAX_THREADS),
        ("scatter_parts", _scatter_parts_kernel, scatter_types, MAX_THREADS),
    ]
    return specs
