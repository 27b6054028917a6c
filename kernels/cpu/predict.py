"""Route raw rows through many trees stored in one flat node array.

Prediction reads two arrays per visited node, not five: the threshold and a
packed ``node_info = left_child << 32 | feature << 1 | missing_go_left``
(``tree.pack_node_info``). Leaves have ``left_child == -1``, so their
``node_info`` is negative; a split node's right child is ``left_child + 1``
(the tree format numbers siblings consecutively).
"""

from numba import njit, prange

from ..common import route_to_leaf

ROWS_PER_BLOCK = 512


@njit(parallel=True, cache=True)
def predict_leaves(X, tree_offsets, threshold, node_info, out):
    """Leaf reached by every row in every tree.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), dtype float32
    tree_offsets : ndarray of shape (n_trees,), dtype int64
        Index of each tree's root in the flat node arrays; child indices are
        relative to it.
    threshold : ndarray of shape (n_nodes_total,), dtype float64
    node_info : ndarray of shape (n_nodes_total,), dtype int64
    out : ndarray of shape (n_samples, n_trees), dtype int32
        Output: the leaf's index within its tree.
    """
    n_samples = X.shape[0]
    # A block of rows goes through one tree at a time: the tree's nodes stay in cache
    # while the block's rows use them, instead of every row walking every tree.
    for block in prange((n_samples + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK):
        first_row = block * ROWS_PER_BLOCK
        stop_row = min(first_row + ROWS_PER_BLOCK, n_samples)
        for tree_idx in range(tree_offsets.shape[0]):
            for row in range(first_row, stop_row):
                out[row, tree_idx] = route_to_leaf(X, row, tree_offsets[tree_idx], threshold, node_info)


@njit(parallel=True, cache=True)
def predict_raw(X, tree_offsets, threshold, node_info, leaf_value, out):
    """Add every tree's leaf value to its raw score: tree ``t`` adds to column ``t % n_scores``.

    Boosting's prediction without an (n_samples, n_trees) matrix of leaves.
    Each row's scores receive the trees in order, the order training added
    them, so the sums are the training ones bit for bit.

    Parameters
    ----------
    X, tree_offsets, threshold, node_info : as ``predict_leaves``
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
                out[row, score] += leaf_value[offset + route_to_leaf(X, row, offset, threshold, node_info)]
