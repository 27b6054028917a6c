"""Route raw rows through many trees: flat node arrays, or complete binary trees.

Node arrays (``predict_leaves``, ``predict_raw``; ``tree.pack_forest``):
prediction reads two arrays per visited node, not five: the split value (a
threshold) and a packed ``node_info = left_child << 32 | feature << 3 |
split_type << 1 | missing_go_left`` (``tree.pack_node_info``). Leaves have
``left_child == -1``, so their ``node_info`` is negative; a split node's right
child is ``left_child + 1`` (the tree format numbers siblings consecutively).
A categorical split also reads its row of ``category_bitset``
(``common.route_to_leaf``). A tree with surrogate splits has a kernel of its own,
``predict_leaves_with_surrogates``, so trees without them pay nothing for them.
C4.5's trees share a row with a missing value among the branches
(``predict_fractional``, ``common.add_fractional_value``): a value per row, not a leaf.

Complete binary trees (``predict_raw_complete``; ``tree.pack_complete_forest``,
trees of bounded depth): a tree of depth ``d`` is a heap of ``2**(d + 1)``
slots, so a row's leaf is ``d`` steps of ``slot = 2 slot + goes_right`` from
slot 1, with no child index to load and no branch to mispredict
(``common.heap_child``). Blocks of rows are copied feature-major and pass through one
tree at a time, ``LANES`` rows in lockstep (independent load chains the core
overlaps); blocks without NaN take a path without the missing-value test.
"""

import numpy as np
from numba import njit, prange

from ..common import add_fractional_value, heap_child, route_to_leaf, route_to_leaf_with_surrogates

ROWS_PER_BLOCK = 512
COMPLETE_ROWS_PER_BLOCK = 256  # a feature-major block of 28 features is 28 KiB
LANES = 8  # rows routed in lockstep (written out in _add_complete_trees); more spill registers on x86-64


@njit(parallel=True, cache=True)
def predict_fractional(X, split_value, node_info, category_bitset, branch_share, value, stack_node, stack_weight,
                       out):
    """Value of every row in one tree whose missing values go down every branch (``common.add_fractional_value``).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), dtype float64 or float32
    split_value, node_info, category_bitset
        As in ``predict_leaves`` (one tree).
    branch_share : ndarray of shape (n_nodes,), dtype float64
        Each node's share of its parent's training weight.
    value : ndarray of shape (n_nodes, n_values), dtype float64
    stack_node, stack_weight : ndarray of shape (n_samples, stack_size), dtype int64 and float64
        Scratch, a row each.
    out : ndarray of shape (n_samples, n_values), dtype float64
    """
    for row in prange(X.shape[0]):
        out[row] = 0.0
        add_fractional_value(
            X, row, split_value, node_info, category_bitset, branch_share, value, stack_node[row], stack_weight[row],
            out[row],
        )


@njit(parallel=True, cache=True)
def predict_leaves(X, tree_offsets, split_value, node_info, category_bitset, out):
    """Leaf reached by every row in every tree (or the ``MULTIWAY`` node it stops at).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), dtype float64 or float32
    tree_offsets : ndarray of shape (n_trees,), dtype int64
        Index of each tree's root in the flat node arrays; child indices are
        relative to it.
    split_value : ndarray of shape (n_nodes_total,), dtype float64
        ``tree.pack_split_values``: numeric thresholds, bitset rows, numbers of children.
    node_info : ndarray of shape (n_nodes_total,), dtype int64
    category_bitset : ndarray of shape (n_categorical_splits, 8), dtype uint32
    out : ndarray of shape (n_samples, n_trees), dtype int32
        Output: the node's index within its tree.
    """
    n_samples = X.shape[0]
    # A block of rows goes through one tree at a time: the tree's nodes stay in cache
    # while the block's rows use them, instead of every row walking every tree.
    for block in prange((n_samples + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK):
        first_row = block * ROWS_PER_BLOCK
        stop_row = min(first_row + ROWS_PER_BLOCK, n_samples)
        for tree_idx in range(tree_offsets.shape[0]):
            for row in range(first_row, stop_row):
                out[row, tree_idx] = route_to_leaf(
                    X, row, tree_offsets[tree_idx], split_value, node_info, category_bitset
                )


@njit(parallel=True, cache=True)
def predict_leaves_with_surrogates(
    X, split_value, node_info, category_bitset, surrogate_feature, surrogate_split_type, surrogate_threshold,
    surrogate_left_is_le, surrogate_left_codes, surrogate_right_codes, out,
):
    """Leaf reached by every row in one tree whose numeric and categorical splits have surrogate splits
    (``common.route_to_leaf_with_surrogates``).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), dtype float64 or float32
    split_value, node_info, category_bitset : as ``predict_leaves``, of one tree
    surrogate_feature : ndarray of shape (n_nodes, max_surrogates), dtype int32
    surrogate_split_type : ndarray of shape (n_nodes, max_surrogates), dtype uint8
    surrogate_threshold : ndarray of shape (n_nodes, max_surrogates), dtype float64
    surrogate_left_is_le : ndarray of shape (n_nodes, max_surrogates), dtype bool
    surrogate_left_codes, surrogate_right_codes : ndarray of shape (n_nodes, max_surrogates, 8), dtype uint32
    out : ndarray of shape (n_samples,), dtype int32
        Output: the node's index in the tree.
    """
    surrogates = (
        surrogate_feature, surrogate_split_type, surrogate_threshold, surrogate_left_is_le, surrogate_left_codes,
        surrogate_right_codes,
    )
    for row in prange(X.shape[0]):
        out[row] = route_to_leaf_with_surrogates(X, row, split_value, node_info, category_bitset, surrogates)


@njit(parallel=True, cache=True)
def predict_raw(X, tree_offsets, split_value, node_info, category_bitset, leaf_value, out):
    """Add every tree's leaf value to its raw score: tree ``t`` adds to column ``t % n_scores``.

    Boosting's prediction without an (n_samples, n_trees) matrix of leaves.
    Each row's scores receive the trees in order, the order training added
    them, so the sums are the training ones bit for bit.

    Parameters
    ----------
    X, tree_offsets, split_value, node_info, category_bitset : as ``predict_leaves``
    leaf_value : ndarray of shape (n_nodes_total,), dtype float64
    out : ndarray of shape (n_samples, n_scores), dtype float64
        Starting scores (the baseline), updated in place.
    """
    n_samples, n_scores = X.shape[0], out.shape[1]
    for block in prange((n_samples + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK):
        first_row = block * ROWS_PER_BLOCK
        stop_row = min(first_row + ROWS_PER_BLOCK, n_samples)
        for tree_idx in range(tree_offsets.shape[0]):
            offset, score = tree_offsets[tree_idx], tree_idx % n_scores
            for row in range(first_row, stop_row):
                leaf = route_to_leaf(X, row, offset, split_value, node_info, category_bitset)
                out[row, score] += leaf_value[offset + leaf]


@njit(cache=True)
def _lane_step(X_block, row, slot, feature, threshold, missing_go_right, nan_aware):
    """One step of row ``row`` of the feature-major block at ``slot`` of one tree's arrays."""
    return heap_child(
        slot, X_block[np.uint64(feature[slot]), row], threshold[slot], missing_go_right[slot], nan_aware
    )


@njit(cache=True, inline="always")
def _add_complete_trees(X_block, n_rows, first_row, tree_offsets, tree_depth, feature, threshold,
                        missing_go_right, value, out, nan_aware):
    """Add every tree's leaf value to the scores of the block's rows, tree after tree."""
    n_scores = out.shape[1]
    for tree_idx in range(tree_offsets.shape[0]):
        offset, depth, score = tree_offsets[tree_idx], tree_depth[tree_idx], tree_idx % n_scores
        tree_feature, tree_threshold = feature[offset:], threshold[offset:]
        tree_missing, tree_value = missing_go_right[offset:], value[offset:]
        row = 0
        while row + LANES <= n_rows:
            # LANES (8) independent paths, written out: scalar variables stay in registers.
            s0 = s1 = s2 = s3 = s4 = s5 = s6 = s7 = np.uint64(1)
            for _ in range(depth):
                s0 = _lane_step(X_block, row, s0, tree_feature, tree_threshold, tree_missing, nan_aware)
                s1 = _lane_step(X_block, row + 1, s1, tree_feature, tree_threshold, tree_missing, nan_aware)
                s2 = _lane_step(X_block, row + 2, s2, tree_feature, tree_threshold, tree_missing, nan_aware)
                s3 = _lane_step(X_block, row + 3, s3, tree_feature, tree_threshold, tree_missing, nan_aware)
                s4 = _lane_step(X_block, row + 4, s4, tree_feature, tree_threshold, tree_missing, nan_aware)
                s5 = _lane_step(X_block, row + 5, s5, tree_feature, tree_threshold, tree_missing, nan_aware)
                s6 = _lane_step(X_block, row + 6, s6, tree_feature, tree_threshold, tree_missing, nan_aware)
                s7 = _lane_step(X_block, row + 7, s7, tree_feature, tree_threshold, tree_missing, nan_aware)
            out_row = first_row + row
            out[out_row, score] += tree_value[s0]
            out[out_row + 1, score] += tree_value[s1]
            out[out_row + 2, score] += tree_value[s2]
            out[out_row + 3, score] += tree_value[s3]
            out[out_row + 4, score] += tree_value[s4]
            out[out_row + 5, score] += tree_value[s5]
            out[out_row + 6, score] += tree_value[s6]
            out[out_row + 7, score] += tree_value[s7]
            row += LANES
        for tail_row in range(row, n_rows):
            s0 = np.uint64(1)
            for _ in range(depth):
                s0 = _lane_step(X_block, tail_row, s0, tree_feature, tree_threshold, tree_missing, nan_aware)
            out[first_row + tail_row, score] += tree_value[s0]


@njit(parallel=True, cache=True)
def predict_raw_complete(X, tree_offsets, tree_depth, feature, threshold, missing_go_right, value, out):
    """``predict_raw`` over complete binary trees (``tree.CompleteForest``): the same sums, bit for bit.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), dtype float64 or float32
    tree_offsets : ndarray of shape (n_trees,), dtype int64
        First slot of each tree; tree ``t`` of depth ``d`` has ``2**(d + 1)`` slots, its root at
        slot 1, the children of slot ``i`` at ``2 i`` and ``2 i + 1``, its leaves at slots
        ``2**d`` to ``2**(d + 1) - 1``.
    tree_depth : ndarray of shape (n_trees,), dtype int64
    feature : ndarray of shape (n_slots_total,), dtype int32
    threshold : ndarray of shape (n_slots_total,), dtype float64
        A row goes right when ``x[feature] > threshold``.
    missing_go_right : ndarray of shape (n_slots_total,), dtype bool
        Where NaN goes.
    value : ndarray of shape (n_slots_total,), dtype float64
        Leaf values at the leaf slots.
    out : ndarray of shape (n_samples, n_scores), dtype float64
        Starting scores (the baseline), updated in place: tree ``t`` adds to column
        ``t % n_scores``, trees in order.
    """
    n_samples, n_features = X.shape
    for block in prange((n_samples + COMPLETE_ROWS_PER_BLOCK - 1) // COMPLETE_ROWS_PER_BLOCK):
        first_row = block * COMPLETE_ROWS_PER_BLOCK
        n_rows = min(first_row + COMPLETE_ROWS_PER_BLOCK, n_samples) - first_row
        # Feature-major copy: a step reads X_block[feature, row + lane], the lanes side by side.
        X_block = np.empty((n_features, COMPLETE_ROWS_PER_BLOCK), dtype=X.dtype)
        has_nan = False
        for row in range(n_rows):
            for feature_idx in range(n_features):
                x = X[first_row + row, feature_idx]
                X_block[feature_idx, row] = x
                has_nan |= x != x
        # One call site per literal: each is compiled with and without the NaN test.
        if has_nan:
            _add_complete_trees(X_block, n_rows, first_row, tree_offsets, tree_depth, feature, threshold,
                                missing_go_right, value, out, True)
        else:
            _add_complete_trees(X_block, n_rows, first_row, tree_offsets, tree_depth, feature, threshold,
                                missing_go_right, value, out, False)
