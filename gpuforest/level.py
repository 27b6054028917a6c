"""The per-node bookkeeping of a level (or of a best-first step), one compiled pass each.

A level's nodes are columns of host arrays; each function here is one
``njit`` loop over them, so a level's bookkeeping costs a few calls whatever
its number of nodes, instead of a dozen numpy operations per rule.
Children are laid out lefts then rights: pair ``k`` is ``(k, k + n_pairs)``.
"""

import numpy as np
from numba import njit

from .kernels.common import NO_SPLIT
from .tree import CATEGORICAL, NUMERIC, TREE_LEAF, TREE_UNDEFINED

EPSILON = np.finfo(np.float64).eps


@njit(cache=True)
def stopping_rules(
    count, depth, weight, impurity, tree, min_weight_leaf, max_depth, min_samples_split, min_samples_leaf,
    stops_when_pure, min_rows_histogram,
):
    """The pre-split stopping rules (scikit-learn's meanings) of every node.

    Parameters
    ----------
    count, depth : ndarray of shape (n_nodes,), dtype int64
    weight, impurity : ndarray of shape (n_nodes,), dtype float64
    tree : ndarray of shape (n_nodes,), dtype int64
    min_weight_leaf : ndarray of shape (n_trees,), dtype float64
        Smallest weight of a child, per tree.
    max_depth, min_samples_split, min_samples_leaf : int
    stops_when_pure : bool
        Whether a node of zero impurity is a leaf (not for gradient statistics).
    min_rows_histogram : int
        Fewer rows: the node is scanned from its rows, not from a histogram.

    Returns
    -------
    splittable, needs_hist : ndarray of shape (n_nodes,), dtype bool
        Which nodes may split, and which of those get a histogram.
    """
    n_nodes = count.shape[0]
    splittable = np.empty(n_nodes, dtype=np.bool_)
    needs_hist = np.empty(n_nodes, dtype=np.bool_)
    for node in range(n_nodes):
        splittable[node] = (
            depth[node] < max_depth
            and count[node] >= min_samples_split
            and count[node] >= 2 * min_samples_leaf
            and weight[node] >= 2 * min_weight_leaf[tree[node]]
            and (impurity[node] > EPSILON or not stops_when_pure)
        )
        needs_hist[node] = splittable[node] and count[node] >= min_rows_histogram
    return splittable, needs_hist


@njit(cache=True)
def allowed_splits(splittable, feature, gain, tree, root_weight, min_impurity_decrease, min_split_gain):
    """Which splittable nodes' best split is allowed: a split found, ``gain / root_weight`` (scikit-learn's
    weighted impurity decrease) at least ``min_impurity_decrease``, ``gain`` at least ``min_split_gain``.

    Returns ndarray of shape (n_nodes,), dtype bool.
    """
    n_nodes = splittable.shape[0]
    can_split = np.empty(n_nodes, dtype=np.bool_)
    for node in range(n_nodes):
        can_split[node] = (
            splittable[node]
            and feature[node] != NO_SPLIT
            and gain[node] / root_weight[tree[node]] + EPSILON >= min_impurity_decrease
            and gain[node] >= min_split_gain
        )
    return can_split


@njit(cache=True)
def histogram_plan(count, needs_hist, parent_rows):
    """Which nodes' histograms are built and which derived by subtraction.

    Parameters
    ----------
    count : ndarray of shape (n_nodes,), dtype int64
    needs_hist : ndarray of shape (n_nodes,), dtype bool
    parent_rows : ndarray of shape (n_pairs,), dtype int64
        With the nodes sibling pairs (lefts then rights), the histogram row of
        each pair's parent (-1: none kept); empty when they are not pairs.

    Returns
    -------
    build : ndarray of shape (n_build,), dtype int64
        Positions of the nodes to build, increasing: those needing a
        histogram, except a larger sibling whose parent's histogram is kept,
        plus that sibling's smaller one (built, even if it needs none itself).
    derive, derive_from, derive_parent : ndarray of shape (n_derive,), dtype int64
        Positions of each derived node (a pair's larger child; ties: the left)
        and of its built sibling, and its parent's histogram row.
    """
    n_pairs = parent_rows.shape[0]
    build_mask = needs_hist.copy()
    derive = np.empty(n_pairs, dtype=np.int64)
    derive_from = np.empty(n_pairs, dtype=np.int64)
    derive_parent = np.empty(n_pairs, dtype=np.int64)
    n_derive = 0
    for pair in range(n_pairs):
        left, right = pair, pair + n_pairs
        larger, smaller = (left, right) if count[left] >= count[right] else (right, left)
        if parent_rows[pair] >= 0 and needs_hist[larger]:
            build_mask[larger] = False
            build_mask[smaller] = True
            derive[n_derive] = larger
            derive_from[n_derive] = smaller
            derive_parent[n_derive] = parent_rows[pair]
            n_derive += 1
    return np.flatnonzero(build_mask), derive[:n_derive], derive_from[:n_derive], derive_parent[:n_derive]


@njit(cache=True)
def split_children(tree, depth, start, stop, totals, left_totals):
    """The children of splitting nodes (all of those given), lefts then rights.

    Parameters
    ----------
    tree, depth, start, stop : ndarray of shape (n_split,), dtype int64
    totals, left_totals : ndarray of shape (n_split, n_slots), dtype int64
        The last slot counts rows: the left child's come first in the parent's range.

    Returns
    -------
    (tree, depth, start, stop, totals) of the children: ndarrays of shape
    (2 * n_split,), totals (2 * n_split, n_slots).
    """
    n_split, n_slots = totals.shape
    child_tree = np.empty(2 * n_split, dtype=np.int64)
    child_depth = np.empty(2 * n_split, dtype=np.int64)
    child_start = np.empty(2 * n_split, dtype=np.int64)
    child_stop = np.empty(2 * n_split, dtype=np.int64)
    child_totals = np.empty((2 * n_split, n_slots), dtype=np.int64)
    for node in range(n_split):
        left, right = node, node + n_split
        middle = start[node] + left_totals[node, n_slots - 1]
        child_tree[left] = child_tree[right] = tree[node]
        child_depth[left] = child_depth[right] = depth[node] + 1
        child_start[left], child_stop[left] = start[node], middle
        child_start[right], child_stop[right] = middle, stop[node]
        for slot in range(n_slots):
            child_totals[left, slot] = left_totals[node, slot]
            child_totals[right, slot] = totals[node, slot] - left_totals[node, slot]
    return child_tree, child_depth, child_start, child_stop, child_totals


@njit(cache=True)
def number_children(tree, next_node_idx):
    """Node indices of the children of splits in trees ``tree``, numbered in order within each tree.

    ``next_node_idx`` (n_trees,) int64: each tree's next free index, advanced
    by 2 per split. Returns ``(left, right)``, ndarrays of shape (n_split,).
    """
    left = np.empty(tree.shape[0], dtype=np.int64)
    for node in range(tree.shape[0]):
        left[node] = next_node_idx[tree[node]]
        next_node_idx[tree[node]] += 2
    return left, left + 1


@njit(cache=True)
def number_multiway_children(tree, n_children, next_node_idx):
    """Node index of the first child of each multiway split in trees ``tree``, numbered in order within each tree.

    Split ``k`` has the children ``first[k] .. first[k] + n_children[k] - 1``;
    ``next_node_idx`` (n_trees,) int64 is advanced by them. Returns ``first``,
    ndarray of shape (n_split,), dtype int64.
    """
    first = np.empty(tree.shape[0], dtype=np.int64)
    for node in range(tree.shape[0]):
        first[node] = next_node_idx[tree[node]]
        next_node_idx[tree[node]] += n_children[node]
    return first


@njit(cache=True)
def multiway_children(tree, depth, start, n_children, first_child, part_counts):
    """The children of multiway splits, each split's in order of their codes.

    Parameters
    ----------
    tree, depth, start, n_children, first_child : ndarray of shape (n_split,), dtype int64
    part_counts : ndarray of shape (n_split, n_parts), dtype int64
        Rows of each child (``Backend.apply_multiway_splits``): child ``c`` owns
        the ``part_counts[k, c]`` positions after those of children ``0 .. c - 1``.

    Returns
    -------
    (parent, tree, node_idx, depth, start, stop) of the children: ndarrays of
    shape (sum(n_children),), dtype int64; ``parent`` is the split's position.
    """
    n_total = 0
    for split in range(tree.shape[0]):
        n_total += n_children[split]
    parent = np.empty(n_total, dtype=np.int64)
    child_tree = np.empty(n_total, dtype=np.int64)
    node_idx = np.empty(n_total, dtype=np.int64)
    child_depth = np.empty(n_total, dtype=np.int64)
    child_start = np.empty(n_total, dtype=np.int64)
    child_stop = np.empty(n_total, dtype=np.int64)
    child = 0
    for split in range(tree.shape[0]):
        position = start[split]
        for code in range(n_children[split]):
            parent[child] = split
            child_tree[child] = tree[split]
            node_idx[child] = first_child[split] + code
            child_depth[child] = depth[split] + 1
            child_start[child] = position
            position += part_counts[split, code]
            child_stop[child] = position
            child += 1
    return parent, child_tree, node_idx, child_depth, child_start, child_stop


@njit(cache=True)
def tree_node_arrays(tree_idx, node_count, nodes, splits, threshold, n_outputs):
    """The node arrays of tree ``tree_idx`` (``node_count`` nodes) from the grower's records of every tree, in one
    pass over them.

    Parameters
    ----------
    tree_idx, node_count : int
    nodes : tuple
        ``(tree, node_idx, depth, n_samples, values, impurity, weight)``: int64 arrays of shape (n_records,),
        ``values`` (n_records, n_outputs * n_values) float64, ``impurity`` and ``weight`` float64.
    splits : tuple
        ``(tree, node_idx, feature, bin, missing_left, left, right, categorical)``: the split records, arrays of
        shape (n_splits,) (``feature`` and ``bin`` int32, ``missing_left`` and ``categorical`` bool).
    threshold : ndarray of shape (n_splits,), dtype float64
        Each split's raw threshold (``TREE_UNDEFINED`` for a categorical one).
    n_outputs : int

    Returns
    -------
    ``(children_left, children_right, feature, threshold, bin_threshold, missing_go_to_left, value, impurity,
    n_node_samples, weighted_n_node_samples, depth, split_type)``: ``gpuforest.tree.Tree``'s arrays (leaves'
    children ``TREE_LEAF``, their feature, thresholds ``TREE_UNDEFINED``, a categorical split's bin too).
    """
    tree, node_idx, depth, n_samples, values, impurity, weight = nodes
    split_tree, split_node, feature, bin_idx, missing_left, left, right, categorical = splits
    n_values = values.shape[1] // n_outputs
    children_left = np.full(node_count, TREE_LEAF, dtype=np.int32)
    children_right = np.full(node_count, TREE_LEAF, dtype=np.int32)
    node_feature = np.full(node_count, TREE_UNDEFINED, dtype=np.int32)
    node_threshold = np.full(node_count, float(TREE_UNDEFINED))
    bin_threshold = np.full(node_count, TREE_UNDEFINED, dtype=np.int32)
    missing_go_to_left = np.zeros(node_count, dtype=np.bool_)
    split_type = np.full(node_count, NUMERIC, dtype=np.uint8)
    node_values = np.empty((node_count, n_outputs, n_values))
    node_impurity, node_weight = np.zeros(node_count), np.zeros(node_count)
    node_samples = np.zeros(node_count, dtype=np.int64)
    node_depth = np.zeros(node_count, dtype=np.int32)
    for record in range(tree.shape[0]):
        if tree[record] != tree_idx:
            continue
        node = node_idx[record]
        for output in range(n_outputs):
            for value in range(n_values):
                node_values[node, output, value] = values[record, output * n_values + value]
        node_impurity[node], node_weight[node] = impurity[record], weight[record]
        node_samples[node], node_depth[node] = n_samples[record], depth[record]
    for record in range(split_tree.shape[0]):
        if split_tree[record] != tree_idx:
            continue
        node = split_node[record]
        children_left[node], children_right[node] = left[record], right[record]
        node_feature[node], node_threshold[node] = feature[record], threshold[record]
        missing_go_to_left[node] = missing_left[record]
        if categorical[record]:
            split_type[node] = CATEGORICAL
        else:
            bin_threshold[node] = bin_idx[record]
    return (
        children_left, children_right, node_feature, node_threshold, bin_threshold, missing_go_to_left, node_values,
        node_impurity, node_samples, node_weight, node_depth, split_type,
    )
