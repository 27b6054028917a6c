"""Route raw rows through many trees stored in one flat node array."""

import math

from numba import njit, prange

TREE_LEAF = -1


@njit(parallel=True, cache=True)
def predict_leaves(X, tree_offsets, feature, threshold, missing_go_left, children_left, children_right, out):
    """Leaf reached by every row in every tree.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), dtype float32
    tree_offsets : ndarray of shape (n_trees,), dtype int64
        Index of each tree's root in the flat node arrays; child indices are
        relative to it.
    feature, threshold, missing_go_left, children_left, children_right : ndarray of shape (n_nodes_total,)
    out : ndarray of shape (n_samples, n_trees), dtype int32
        Output: the leaf's index within its tree.
    """
    n_samples = X.shape[0]
    for row in prange(n_samples):
        for tree_idx in range(tree_offsets.shape[0]):
            offset = tree_offsets[tree_idx]
            node = 0
            while children_left[offset + node] != TREE_LEAF:
                value = X[row, feature[offset + node]]
                if math.isnan(value):
                    left = missing_go_left[offset + node]
                else:
                    left = value <= threshold[offset + node]
                node = children_left[offset + node] if left else children_right[offset + node]
            out[row, tree_idx] = node
