"""Random draws from the counter-based hash RNG on the GPU (twin of ``kernels.cpu.sampling``).

Each draw is ``common.hash_uniform`` of (seed, purpose, stream, index), so the
GPU draws the same numbers as the CPU whatever the thread layout.

``feature_masks`` draws the ``max_features`` features with the lowest
priorities of each node, like the CPU's stable argsort, without sorting: the
rank of feature ``f`` in that order is the number of features ``g`` with a
smaller priority, or an equal one and ``g < f``; ``f`` is drawn when its rank
is below ``max_features``. One block per node: each round, the block hashes a
chunk of ``block`` priorities into shared memory and every thread counts how
many of them come before its own feature.
"""

import functools

import numba
from numba import cuda, types

from ..common import PURPOSE_FEATURES, PURPOSE_THRESHOLD, bootstrap_row, hash_uniform
from . import jit_kernel
from .launch import BLOCK_SIZE, MAX_BLOCKS, elementwise_config

# feature_masks: a block of threads per node, as many as the features (64 to 256).
FEATURE_BLOCK_SIZES = (64, 128, 256)


def _uniform_per_row_kernel(seed, purpose, stream, n_rows, out):
    for row in range(cuda.grid(1), n_rows, cuda.gridsize(1)):
        out[row] = hash_uniform(seed, purpose, stream, row)


_uniform_per_row = jit_kernel(_uniform_per_row_kernel)


def uniform_per_row(seed, purpose, stream, n_rows, out):
    """``out[row] = U(seed, purpose, stream, row)`` for every row (one thread per row)."""
    if n_rows <= 0:
        return
    blocks, threads = elementwise_config(n_rows)
    _uniform_per_row[blocks, threads](seed, purpose, stream, n_rows, out)


@functools.lru_cache(maxsize=None)
def feature_rank(block):
    """Device function ``(seed, stream, n_features, feature_idx, chunk) -> rank`` for a block of ``block``
    threads, which all call it: the rank of ``feature_idx`` (this thread's feature, possibly ``>= n_features``)
    among the priorities ``U(seed, features, stream, f)`` (ties: lower feature first), the block hashing a
    chunk of ``block`` of them at a time into the shared ``chunk``."""

    @cuda.jit(device=True)
    def rank_of(seed, stream, n_features, feature_idx, chunk):
        tid = cuda.threadIdx.x
        mine = 0.0
        if feature_idx < n_features:
            mine = hash_uniform(seed, PURPOSE_FEATURES, stream, feature_idx)
        rank = 0
        for other_first in range(0, n_features, block):
            if other_first + tid < n_features:
                chunk[tid] = hash_uniform(seed, PURPOSE_FEATURES, stream, other_first + tid)
            cuda.syncthreads()
            for k in range(min(block, n_features - other_first)):
                priority = chunk[k]
                if priority < mine or (priority == mine and other_first + k < feature_idx):
                    rank += 1
            cuda.syncthreads()
        return rank

    return rank_of


@functools.lru_cache(maxsize=None)
def _feature_masks_kernel(block):
    """The feature-mask kernel for ``block`` threads per block: ``(python_function, kernel)``."""
    rank_of = feature_rank(block)

    def feature_masks_kernel(seed, node_tree, node_idx, n_features, max_features, out):
        chunk = cuda.shared.array(block, numba.float64)
        for position in range(cuda.blockIdx.x, node_tree.shape[0], cuda.gridDim.x):
            stream = (node_tree[position] << 32) + node_idx[position]
            for first in range(0, n_features, block):
                feature_idx = first + cuda.threadIdx.x
                rank = rank_of(seed, stream, n_features, feature_idx, chunk)
                if feature_idx < n_features:
                    out[position, feature_idx] = rank < max_features

    return feature_masks_kernel, jit_kernel(feature_masks_kernel)


def feature_block(n_features):
    for block in FEATURE_BLOCK_SIZES:
        if n_features <= block:
            return block
    return FEATURE_BLOCK_SIZES[-1]


def feature_masks(seed, node_tree, node_idx, n_features, max_features, out):
    """Per node, a random subset of ``max_features`` features (see ``kernels.cpu.sampling``).

    Launch: one block per node (grid-stride over nodes, at most 65535 blocks)
    of 64, 128 or 256 threads, the smallest that covers ``n_features``.
    """
    n_nodes = node_tree.shape[0]
    if n_nodes == 0 or n_features <= 0:
        return
    block = feature_block(n_features)
    kernel = _feature_masks_kernel(block)[1]
    kernel[min(n_nodes, MAX_BLOCKS), block](seed, node_tree, node_idx, n_features, max_features, out)


def _threshold_draws_kernel(seed, node_tree, node_idx, n_features, out):
    for position in range(cuda.grid(1), node_tree.shape[0] * n_features, cuda.gridsize(1)):
        node = position // n_features
        feature_idx = position - node * n_features
        stream = (node_tree[node] << 32) + node_idx[node]
        out[node, feature_idx] = hash_uniform(seed, PURPOSE_THRESHOLD, stream, feature_idx)


_threshold_draws = jit_kernel(_threshold_draws_kernel)


def threshold_draws(seed, node_tree, node_idx, n_features, out):
    """Per node and feature, the uniform of its random threshold (see ``kernels.cpu.sampling``).

    Launch: one thread per (node, feature) (grid-stride beyond 65535 blocks).
    """
    n_items = node_tree.shape[0] * n_features
    if n_items <= 0:
        return
    blocks, threads = elementwise_config(n_items)
    _threshold_draws[blocks, threads](seed, node_tree, node_idx, n_features, out)


def _zero_counts_kernel(out):
    n_trees, n_samples = out.shape
    for position in range(cuda.grid(1), n_trees * n_samples, cuda.gridsize(1)):
        out[position // n_samples, position % n_samples] = 0


def _bootstrap_counts_kernel(seed, first_tree, n_draws, out):
    n_trees, n_samples = out.shape
    for position in range(cuda.grid(1), n_trees * n_draws, cuda.gridsize(1)):
        tree = position // n_draws
        row = bootstrap_row(seed, first_tree + tree, position % n_draws, n_samples)
        # Integer atomics: the counts do not depend on the order of the draws.
        cuda.atomic.add(out, (tree, row), 1)


_zero_counts = jit_kernel(_zero_counts_kernel)
_bootstrap_counts = jit_kernel(_bootstrap_counts_kernel)


def bootstrap_counts(seed, first_tree, n_draws, out):
    """Per (tree, row) bootstrap draw counts (see ``kernels.cpu.sampling``): one thread per draw."""
    n_trees, n_samples = out.shape
    if n_trees * n_samples == 0:
        return
    blocks, threads = elementwise_config(n_trees * n_samples)
    _zero_counts[blocks, threads](out)
    if n_draws > 0:
        blocks, threads = elementwise_config(n_trees * n_draws)
        _bootstrap_counts[blocks, threads](seed, first_tree, n_draws, out)


def ptx_specializations():
    """``(name, python_function, argument_types, block_size)`` of every kernel launched here."""
    int64_1d = types.Array(types.int64, 1, "C")
    specs = [
        (
            "uniform_per_row",
            _uniform_per_row_kernel,
            (types.int64, types.int64, types.int64, types.int64, types.Array(types.float64, 1, "C")),
            BLOCK_SIZE,
        )
    ]
    int32_2d = types.Array(types.int32, 2, "C")
    specs.append(("zero_counts", _zero_counts_kernel, (int32_2d,), BLOCK_SIZE))
    specs.append(
        ("bootstrap_counts", _bootstrap_counts_kernel, (types.int64, types.int64, types.int64, int32_2d), BLOCK_SIZE)
    )
    specs.append(
        (
            "threshold_draws",
            _threshold_draws_kernel,
            (types.int64, int64_1d, int64_1d, types.int64, types.Array(types.float64, 2, "C")),
            BLOCK_SIZE,
        )
    )
    for block in FEATURE_BLOCK_SIZES:
        specs.append(
            (
                f"feature_masks_block{block}",
                _feature_masks_kernel(block)[0],
                (types.int64, int64_1d, int64_1d, types.int64, types.int64, types.Array(types.boolean, 2, "C")),
                block,
            )
        )
    return specs
