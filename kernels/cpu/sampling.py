"""Random draws from the counter-based hash RNG of ``kernels.common``.

Each draw is a pure function of (seed, purpose, tree, node or row), so the
same numbers come out whatever the order, the thread count or the device.
"""

import numpy as np
from numba import njit, prange

from ..common import PURPOSE_FEATURES, PURPOSE_THRESHOLD, bootstrap_row, hash_uniform


@njit(parallel=True, cache=True)
def uniform_per_row(seed, purpose, stream, n_rows, out):
    """``out[row] = U(seed, purpose, stream, row)`` for every row."""
    for row in prange(n_rows):
        out[row] = hash_uniform(seed, purpose, stream, row)


@njit(parallel=True, cache=True)
def feature_masks(seed, node_tree, node_idx, n_features, max_features, out):
    """Per node, a random subset of ``max_features`` features.

    Feature ``f`` of node ``node_idx`` of tree ``tree`` gets the priority
    ``U(seed, features, tree * 2**32 + node_idx, f)``; the ``max_features``
    lowest priorities are drawn (ties: lower feature index first).

    Parameters
    ----------
    node_tree, node_idx : ndarray of shape (n_nodes,), dtype int64
        Tree of each node and the node's index within its tree.
    out : ndarray of shape (n_nodes, n_features), dtype bool
    """
    for position in prange(node_tree.shape[0]):
        stream = (node_tree[position] << 32) + node_idx[position]
        priorities = np.empty(n_features)
        for feature_idx in range(n_features):
            priorities[feature_idx] = hash_uniform(seed, PURPOSE_FEATURES, stream, feature_idx)
        order = np.argsort(priorities, kind="mergesort")
        for feature_idx in range(n_features):
            out[position, feature_idx] = False
        for rank in range(max_features):
            out[position, order[rank]] = True


@njit(parallel=True, cache=True)
def threshold_draws(seed, node_tree, node_idx, n_features, out):
    """Per node and feature, the uniform that draws its random threshold (``common.random_threshold_bin``).

    ``out[p, f] = U(seed, threshold, tree * 2**32 + node_idx, f)`` for node
    ``node_idx[p]`` of tree ``node_tree[p]``.

    Parameters
    ----------
    node_tree, node_idx : ndarray of shape (n_nodes,), dtype int64
        Tree of each node and the node's index within its tree.
    out : ndarray of shape (n_nodes, n_features), dtype float64
    """
    for position in prange(node_tree.shape[0]):
        stream = (node_tree[position] << 32) + node_idx[position]
        for feature_idx in range(n_features):
            out[position, feature_idx] = hash_uniform(seed, PURPOSE_THRESHOLD, stream, feature_idx)


@njit(parallel=True, cache=True)
def bootstrap_counts(seed, first_tree, n_draws, out):
    """How many times each row is drawn, with replacement, for each tree.

    Draw ``j`` of tree ``first_tree + t`` picks row ``common.bootstrap_row``
    of (seed, tree, j), so a batch of trees gets the same counts as the
    same trees grown one by one.

    Parameters
    ----------
    first_tree : int
        Global index of the first tree of the batch.
    n_draws : int
        Draws per tree (``max_samples``).
    out : ndarray of shape (n_trees, n_samples), dtype int32
        Output; overwritten.
    """
    n_trees, n_samples = out.shape
    for tree in prange(n_trees):
        out[tree] = 0
        for draw in range(n_draws):
            out[tree, bootstrap_row(seed, first_tree + tree, draw, n_samples)] += 1
