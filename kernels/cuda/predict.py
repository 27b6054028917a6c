"""Route raw rows through many trees on the GPU (twin of ``kernels.cpu.predict``).

One thread per (row, tree) pair (grid-stride). Pairs are numbered tree-major
(``pair = tree * n_samples + row``), so the threads of a warp walk the same
tree: they read the same root and upper nodes (cache hits, broadcast loads)
and diverge less. The packed ``node_info = left_child << 32 | feature << 1 |
missing_go_left`` is read as on the CPU: a leaf has a negative ``node_info``,
the right child of a split node is ``left_child + 1``.

``predict_raw_complete`` walks complete binary trees (``tree.CompleteForest``)
with the CPU kernel's step, ``common.heap_child``, one thread per row: every thread
of a warp takes the same number of steps in a tree. ``predict_leaves_with_surrogates``
routes one tree with surrogate splits, one thread per row.
"""

import numpy as np
from numba import cuda, types

from ..common import add_fractional_value, heap_child, route_to_leaf, route_to_leaf_with_surrogates

from . import jit_kernel
from .launch import BLOCK_SIZE, elementwise_config



def _predict_leaves_kernel(X, tree_offsets, split_value, node_info, category_bitset, out):
    n_samples = X.shape[0]
    n_pairs = n_samples * tree_offsets.shape[0]
    for pair in range(cuda.grid(1), n_pairs, cuda.gridsize(1)):
        tree_idx = pair // n_samples
        row = pair - tree_idx * n_samples
        out[row, tree_idx] = route_to_leaf(X, row, tree_offsets[tree_idx], split_value, node_info, category_bitset)


_predict_leaves = jit_kernel(_predict_leaves_kernel)


def predict_leaves(X, tree_offsets, split_value, node_info, category_bitset, out):
    """Leaf reached by every row in every tree (see ``kernels.cpu.predict``).

    Launch: one thread per (row, tree) pair, tree-major, blocks of up to 256
    threads, at most 65535 blocks (grid-stride).
    """
    n_pairs = X.shape[0] * tree_offsets.shape[0]
    if n_pairs == 0:
        return
    blocks, threads = elementwise_config(n_pairs)
    _predict_leaves[blocks, threads](X, tree_offsets, split_value, node_info, category_bitset, out)


def _predict_leaves_with_surrogates_kernel(
    X, split_value, node_info, category_bitset, surrogate_feature, surrogate_split_type, surrogate_threshold,
    surrogate_left_is_le, surrogate_left_codes, surrogate_right_codes, out,
):
    surrogates = (
        surrogate_feature, surrogate_split_type, surrogate_threshold, surrogate_left_is_le, surrogate_left_codes,
        surrogate_right_codes,
    )
    for row in range(cuda.grid(1), X.shape[0], cuda.gridsize(1)):
        out[row] = route_to_leaf_with_surrogates(X, row, split_value, node_info, category_bitset, surrogates)


_predict_leaves_with_surrogates = jit_kernel(_predict_leaves_with_surrogates_kernel)


def predict_leaves_with_surrogates(
    X, split_value, node_info, category_bitset, surrogate_feature, surrogate_split_type, surrogate_threshold,
    surrogate_left_is_le, surrogate_left_codes, surrogate_right_codes, out,
):
    """Leaf reached by every row in one tree with surrogate splits (see ``kernels.cpu.predict``).

    Launch: one thread per row, blocks of up to 256 threads (grid-stride).
    """
    if X.shape[0] == 0:
        return
    blocks, threads = elementwise_config(X.shape[0])
    _predict_leaves_with_surrogates[blocks, threads](
        X, split_value, node_info, category_bitset, surrogate_feature, surrogate_split_type, surrogate_threshold,
        surrogate_left_is_le, surrogate_left_codes, surrogate_right_codes, out,
    )


def _predict_fractional_kernel(
    X, split_value, node_info, category_bitset, branch_share, value, stack_node, stack_weight, out,
):
    for row in range(cuda.grid(1), X.shape[0], cuda.gridsize(1)):
        for k in range(out.shape[1]):
            out[row, k] = 0.0
        add_fractional_value(
            X, row, split_value, node_info, category_bitset, branch_share, value, stack_node[row], stack_weight[row],
            out[row],
        )


_predict_fractional = jit_kernel(_predict_fractional_kernel)


def predict_fractional(X, split_value, node_info, category_bitset, branch_share, value, stack_node, stack_weight,
                       out):
    """Value of every row in one tree whose missing values go down every branch (see ``kernels.cpu.predict``).

    Launch: one thread per row (its rows of the stacks), blocks of up to 256 threads (grid-stride).
    """
    if X.shape[0] == 0:
        return
    blocks, threads = elementwise_config(X.shape[0])
    _predict_fractional[blocks, threads](
        X, split_value, node_info, category_bitset, branch_share, value, stack_node, stack_weight, out
    )


def _predict_raw_kernel(X, tree_offsets, split_value, node_info, category_bitset, leaf_value, out):
    n_scores = out.shape[1]
    for row in range(cuda.grid(1), X.shape[0], cuda.gridsize(1)):
        # One thread per row adds the trees in order, as training did.
        for tree_idx in range(tree_offsets.shape[0]):
            offset = tree_offsets[tree_idx]
            leaf = route_to_leaf(X, row, offset, split_value, node_info, category_bitset)
            out[row, tree_idx % n_scores] += leaf_value[offset + leaf]


_predict_raw = jit_kernel(_predict_raw_kernel)


def predict_raw(X, tree_offsets, split_value, node_info, category_bitset, leaf_value, out):
    """Add every tree's leaf value to its raw score (see ``kernels.cpu.predict``).

    Launch: one thread per row, blocks of up to 256 threads (grid-stride).
    """
    if X.shape[0] == 0:
        return
    blocks, threads = elementwise_config(X.shape[0])
    _predict_raw[blocks, threads](X, tree_offsets, split_value, node_info, category_bitset, leaf_value, out)


def _predict_raw_complete_kernel(X, tree_offsets, tree_depth, feature, threshold, missing_go_right, value, out):
    n_scores = out.shape[1]
    for row in range(cuda.grid(1), X.shape[0], cuda.gridsize(1)):
        for tree_idx in range(tree_offsets.shape[0]):
            offset = np.uint64(tree_offsets[tree_idx])  # uint64 + uint64: int64 + uint64 is a float
            slot = np.uint64(1)
            for _ in range(tree_depth[tree_idx]):
                at = offset + slot
                slot = heap_child(slot, X[row, feature[at]], threshold[at], missing_go_right[at], True)
            out[row, tree_idx % n_scores] += value[offset + slot]


_predict_raw_complete = jit_kernel(_predict_raw_complete_kernel)


def predict_raw_complete(X, tree_offsets, tree_depth, feature, threshold, missing_go_right, value, out):
    """``predict_raw`` over complete binary trees (see ``kernels.cpu.predict``).

    Launch: one thread per row, blocks of up to 256 threads (grid-stride).
    """
    if X.shape[0] == 0:
        return
    blocks, threads = elementwise_config(X.shape[0])
    _predict_raw_complete[blocks, threads](
        X, tree_offsets, tree_depth, feature, threshold, missing_go_right, value, out
    )


def ptx_specializations():
    """``(name, python_function, argument_types, block_size)`` of every kernel launched here."""
    return [
        (
            "predict_fractional",
            _predict_fractional_kernel,
            (
                types.Array(types.float32, 2, "C"),
                types.Array(types.float64, 1, "C"),
                types.Array(types.int64, 1, "C"),
                types.Array(types.uint32, 2, "C"),
                types.Array(types.float64, 1, "C"),
                types.Array(types.float64, 2, "C"),
                types.Array(types.int64, 2, "C"),
                types.Array(types.float64, 2, "C"),
                types.Array(types.float64, 2, "C"),
            ),
            BLOCK_SIZE,
        ),
        (
            "predict_leaves",
            _predict_leaves_kernel,
            (
                types.Array(types.float32, 2, "C"),
                types.Array(types.int64, 1, "C"),
                types.Array(types.float64, 1, "C"),
                types.Array(types.int64, 1, "C"),
                types.Array(types.uint32, 2, "C"),
                types.Array(types.int32, 2, "C"),
            ),
            BLOCK_SIZE,
        ),
        (
            "predict_leaves_with_surrogates",
            _predict_leaves_with_surrogates_kernel,
            (
                types.Array(types.float32, 2, "C"),
                types.Array(types.float64, 1, "C"),
                types.Array(types.int64, 1, "C"),
                types.Array(types.uint32, 2, "C"),
                types.Array(types.int32, 2, "C"),
                types.Array(types.uint8, 2, "C"),
                types.Array(types.float64, 2, "C"),
                types.Array(types.bool_, 2, "C"),
                types.Array(types.uint32, 3, "C"),
                types.Array(types.uint32, 3, "C"),
                types.Array(types.int32, 1, "C"),
            ),
            BLOCK_SIZE,
        ),
        (
            "predict_raw",
            _predict_raw_kernel,
            (
                types.Array(types.float32, 2, "C"),
                types.Array(types.int64, 1, "C"),
                types.Array(types.float64, 1, "C"),
                types.Array(types.int64, 1, "C"),
                types.Array(types.uint32, 2, "C"),
                types.Array(types.float64, 1, "C"),
                types.Array(types.float64, 2, "C"),
            ),
            BLOCK_SIZE,
        ),
        (
            "predict_raw_complete",
            _predict_raw_complete_kernel,
            (
                types.Array(types.float32, 2, "C"),
                types.Array(types.int64, 1, "C"),
                types.Array(types.int64, 1, "C"),
                types.Array(types.int32, 1, "C"),
                types.Array(types.float64, 1, "C"),
                types.Array(types.bool_, 1, "C"),
                types.Array(types.float64, 1, "C"),
                types.Array(types.float64, 2, "C"),
            ),
            BLOCK_SIZE,
        ),
    ]
