"""CART's surrogate splits for missing values (Breiman, Friedman, Olshen & Stone 1984, section 5.3).

Growth sends a row whose value of a split's feature is missing in the learned
direction (``Tree.missing_go_to_left``, the side that lowered the impurity
most). With ``use_surrogates=True`` a post-pass over the grown (and pruned)
tree's training rows then gives each ``NUMERIC`` and ``CATEGORICAL`` split node up
to ``max_surrogates`` surrogate splits, used when predicting: a row whose primary
value is missing (NaN; at a ``CATEGORICAL`` split, anything but a category code,
so also a category not seen at fit) takes the direction of the first surrogate
that sends it somewhere, and when none does, the majority direction (rpart's
``usesurrogate = 2``, Therneau & Atkinson, "An Introduction to Recursive
Partitioning Using the RPART Routines", section 5).

At a node, the rows counted are the training rows that growth sent there
(positive weight, weighted by ``sample_weight``); the primary sends a row with a
value left when ``x <= threshold`` (``NUMERIC``) or when the bit of its code is
set in the node's ``category_bitset`` (``CATEGORICAL``), as rpart's
``surrogate.c`` codes the primary's direction of each row. A surrogate on another
numeric feature ``f`` is the split ``x[f] <= t`` (or ``x[f] > t``) that sends
the most weight the way the primary split does, among the node's rows with
both values present; ``t`` is a midpoint between neighbouring values of ``f``,
as the primary thresholds are, and each side holds at least two of those rows
(rpart's ``choose_surg.c``, against surrogates that beat the majority rule by
isolating one row). A surrogate on a categorical feature sends each of its
category codes seen among those rows the way the primary sends most of that
code's weight (ties: the majority side), as rpart's ``choose_surg.c`` does; at
prediction, a code it did not see goes on to the next surrogate. With ``pL`` and
``pR`` the weight fractions of those rows that the primary sends left and right
and ``error`` the fraction the surrogate sends the other way, its predictive
association (Breiman et al., eq. 5.7; rpart's "adj") is::

    association = (min(pL, pR) - error) / min(pL, pR)

A surrogate is kept only when ``association > 0`` (better than sending every
row to the majority side), and a node's surrogates are ranked by decreasing
association (ties: the lower feature index). At a ``CATEGORICAL`` split, a code
seen at fit but without rows at the node goes where its bitset sends it (growth's
learned missing side), not to the surrogates as in rpart's ``pred_rpart.c``: the
tree keeps no record of a node's codes. ``MULTIWAY`` splits get no surrogates (a
row without a branch stops there, as without surrogates).
"""

import numpy as np
from numba import njit, prange

from .kernels.common import split_child, split_value_missing
from .tree import (
    CATEGORICAL,
    CATEGORY_WORDS,
    MAX_CATEGORIES,
    MULTIWAY,
    NUMERIC,
    TREE_LEAF,
    TREE_UNDEFINED,
    pack_node_info,
    pack_split_values,
)

# A surrogate split's side needs at least this many rows (rpart's choose_surg.c).
MIN_ROWS_PER_SIDE = 2


@njit(cache=True)
def _node_rows(X, rows, node_info, split_value, category_bitset, children_left, children_right):
    """The training rows of every node, as growth routed them (learned missing directions).

    Returns
    -------
    order : ndarray of shape (n_rows,), dtype int64
        ``rows`` reordered so that the rows of each node are consecutive.
    node_start, node_stop : ndarray of shape (n_nodes,), dtype int64
        The rows of node ``n`` are ``order[node_start[n]:node_stop[n]]``.
    """
    n_nodes = children_left.shape[0]
    order = rows.copy()
    node_start = np.zeros(n_nodes, dtype=np.int64)
    node_stop = np.zeros(n_nodes, dtype=np.int64)
    node_stop[0] = order.shape[0]
    child_rank = np.empty(order.shape[0], dtype=np.int64)
    scratch = np.empty_like(order)
    # Children always follow their parent's position in this list: parents are done first.
    pending = np.empty(n_nodes, dtype=np.int64)
    pending[0] = 0
    n_pending = 1
    while n_pending > 0:
        n_pending -= 1
        node = pending[n_pending]
        if children_left[node] == TREE_LEAF:
            continue
        info = node_info[node]
        n_children = children_right[node] - children_left[node] + 1
        # Counting sort by child rank; the rows a MULTIWAY node stops (rank -1) go last, in no child.
        counts = np.zeros(n_children + 1, dtype=np.int64)
        for i in range(node_start[node], node_stop[node]):
            row = order[i]
            rank = split_child(X[row, (info >> 3) & 0x1FFFFFFF], info, split_value[node], category_bitset)
            child_rank[i] = rank if rank >= 0 else n_children
            counts[child_rank[i]] += 1
        position = np.empty(n_children + 1, dtype=np.int64)
        position[0] = node_start[node]
        for rank in range(n_children):
            position[rank + 1] = position[rank] + counts[rank]
        for rank in range(n_children):
            child = children_left[node] + rank
            node_start[child] = position[rank]
            node_stop[child] = position[rank] + counts[rank]
            pending[n_pending] = child
            n_pending += 1
        for i in range(node_start[node], node_stop[node]):
            scratch[position[child_rank[i]]] = order[i]
            position[child_rank[i]] += 1
        for i in range(node_start[node], node_stop[node]):
            order[i] = scratch[i]
    return order, node_start, node_stop


@njit(cache=True)
def _numeric_surrogate(values, goes_left, row_weight, weight_left, weight_right):
    """``(agreement, threshold, left_is_le)`` of the best split ``x <= t`` / ``x > t`` of ``values`` (float32)
    that mimics ``goes_left``; ``agreement`` is the majority side's weight when no split beats it."""
    best, threshold, left_is_le = max(weight_left, weight_right), float(TREE_UNDEFINED), False
    sorted_rows = np.argsort(values, kind="mergesort")
    left_below = right_below = 0.0  # weight the primary sends left / right among the values <= t
    n_rows = values.shape[0]
    for k in range(n_rows - 1):
        j = sorted_rows[k]
        if goes_left[j]:
            left_below += row_weight[j]
        else:
            right_below += row_weight[j]
        upper = values[sorted_rows[k + 1]]
        if upper == values[j] or k + 1 < MIN_ROWS_PER_SIDE or n_rows - k - 1 < MIN_ROWS_PER_SIDE:
            continue
        agree_le = left_below + (weight_right - right_below)  # x <= t goes left
        agree_gt = (weight_left - left_below) + right_below  # x > t goes left
        if agree_le > best or agree_gt > best:
            left_is_le = agree_le >= agree_gt
            best = max(agree_le, agree_gt)
            threshold = (np.float64(values[j]) + np.float64(upper)) / 2
    return best, threshold, left_is_le


@njit(cache=True)
def _categorical_surrogate(codes, goes_left, row_weight, weight_left, weight_right, left_codes, right_codes):
    """Agreement of the split that sends each code of ``codes`` (float32 category codes) the way the primary
    sends most of its weight (ties: the majority side), rpart's ``choose_surg.c``; fills the code bitsets."""
    to_left = np.zeros(MAX_CATEGORIES)
    to_right = np.zeros(MAX_CATEGORIES)
    for j in range(codes.shape[0]):
        if goes_left[j]:
            to_left[int(codes[j])] += row_weight[j]
        else:
            to_right[int(codes[j])] += row_weight[j]
    majority_left = weight_left >= weight_right
    agreement = 0.0
    for code in range(MAX_CATEGORIES):
        if to_left[code] == 0 and to_right[code] == 0:
            continue
        if to_left[code] > to_right[code] or (to_left[code] == to_right[code] and majority_left):
            agreement += to_left[code]
            left_codes[code >> 5] |= np.uint32(1) << np.uint32(code & 31)
        else:
            agreement += to_right[code]
            right_codes[code >> 5] |= np.uint32(1) << np.uint32(code & 31)
    return agreement


@njit(cache=True, inline="always")
def _primary_goes_left(X, row, node, node_info, split_value, category_bitset):
    """1 when the primary split of ``node`` sends raw row ``row`` of ``X`` left, 0 right, -1 when the row's
    value of the split's feature is missing (``split_value_missing``)."""
    info = node_info[node]
    value = X[row, (info >> 3) & 0x1FFFFFFF]
    if split_value_missing(value, info):
        return -1
    return 1 if split_child(value, info, split_value[node], category_bitset) == 0 else 0


@njit(parallel=True, cache=True)
def _best_surrogate_splits(
    X, order, node_start, node_stop, node_info, split_value, category_bitset, weight, task_node, task_feature,
    task_categorical, out_threshold, out_left_is_le, out_left_codes, out_right_codes, out_association,
):
    """The best surrogate split of each (node, feature) task and its association (see the module docstring).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), dtype float64 or float32
    order, node_start, node_stop : ``_node_rows``'s
    node_info, split_value, category_bitset
        The primary splits, packed as for prediction (``tree.pack_node_info``, ``tree.pack_split_values``).
    weight : ndarray of shape (n_samples,), dtype float64
    task_node, task_feature : ndarray of shape (n_tasks,), dtype int64
    task_categorical : ndarray of shape (n_tasks,), dtype bool
        Whether the task's feature holds category codes.
    out_threshold : ndarray of shape (n_tasks,), dtype float64
    out_left_is_le : ndarray of shape (n_tasks,), dtype bool
        Whether ``x <= threshold`` goes left (else ``x > threshold`` does).
    out_left_codes, out_right_codes : ndarray of shape (n_tasks, CATEGORY_WORDS), dtype uint32, zeros
        The codes a categorical surrogate sends left and right.
    out_association : ndarray of shape (n_tasks,), dtype float64
        -inf where no split beats the majority rule or the primary sends every row one way.
    """
    for task in prange(task_node.shape[0]):
        node, surrogate = task_node[task], task_feature[task]
        n_node = node_stop[node] - node_start[node]
        values = np.empty(n_node, dtype=X.dtype)
        goes_left = np.empty(n_node, dtype=np.bool_)
        row_weight = np.empty(n_node)
        n_both = 0
        weight_left = weight_right = 0.0
        for i in range(node_start[node], node_stop[node]):
            row = order[i]
            primary_left = _primary_goes_left(X, row, node, node_info, split_value, category_bitset)
            value = X[row, surrogate]
            if primary_left < 0 or np.isnan(value):
                continue
            values[n_both] = value
            goes_left[n_both] = primary_left == 1
            row_weight[n_both] = weight[row]
            if goes_left[n_both]:
                weight_left += weight[row]
            else:
                weight_right += weight[row]
            n_both += 1
        out_association[task] = -np.inf
        out_threshold[task] = TREE_UNDEFINED
        out_left_is_le[task] = False
        minority, majority = min(weight_left, weight_right), max(weight_left, weight_right)
        if minority <= 0:
            continue
        if task_categorical[task]:
            agreement = _categorical_surrogate(
                values[:n_both], goes_left[:n_both], row_weight[:n_both], weight_left, weight_right,
                out_left_codes[task], out_right_codes[task],
            )
        else:
            agreement, out_threshold[task], out_left_is_le[task] = _numeric_surrogate(
                values[:n_both], goes_left[:n_both], row_weight[:n_both], weight_left, weight_right
            )
        if agreement > majority:
            out_association[task] = (agreement - majority) / minority


@njit(cache=True)
def _majority_goes_left(X, order, node_start, node_stop, node_info, split_value, category_bitset, weight, nodes):
    """Whether the primary split of each of ``nodes`` sends at least half of the weight of its rows with a
    value present left (rpart's ``lastsurrogate``: ties go left)."""
    left = np.empty(nodes.shape[0], dtype=np.bool_)
    for k in range(nodes.shape[0]):
        node = nodes[k]
        weight_left = weight_right = 0.0
        for i in range(node_start[node], node_stop[node]):
            primary_left = _primary_goes_left(X, order[i], node, node_info, split_value, category_bitset)
            if primary_left == 1:
                weight_left += weight[order[i]]
            elif primary_left == 0:
                weight_right += weight[order[i]]
        left[k] = weight_left >= weight_right
    return left


def add_surrogates(tree, X, sample_weight, sample_indices, max_surrogates, is_categorical=None):
    """Give every ``NUMERIC`` and ``CATEGORICAL`` split node of ``tree`` its surrogate splits and majority missing
    direction.

    Sets the ``tree.surrogate_*`` arrays (``Tree.set_surrogates``) and, at those splits, ``missing_go_to_left`` to
    the majority side; ``Tree.apply`` then routes a row with a missing primary value by them.

    Parameters
    ----------
    tree : Tree
        Grown on ``X[sample_indices]``; modified in place.
    X : ndarray of shape (n_samples, n_features), dtype float64 or float32
    sample_weight : ndarray of shape (n_samples,), dtype float64
    sample_indices : ndarray of shape (n_rows,), dtype int
        The rows the tree was grown on.
    max_surrogates : int
        At most this many surrogates per node (0: only the majority direction).
    is_categorical : ndarray of shape (n_features,), dtype bool, default=None
        The features that hold category codes (None: none).
    """
    n_features = X.shape[1]
    split_value, category_bitset = pack_split_values(
        tree.split_type, tree.threshold, tree.children_left, tree.children_right, tree.category_bitset
    )
    node_info = pack_node_info(tree.feature, tree.missing_go_to_left, tree.children_left, tree.split_type)
    order, node_start, node_stop = _node_rows(
        X, np.asarray(sample_indices, dtype=np.int64), node_info, split_value, category_bitset,
        tree.children_left.astype(np.int64), tree.children_right.astype(np.int64),
    )
    feature = tree.feature.astype(np.int64)
    weight = np.asarray(sample_weight, dtype=np.float64)
    binary_splits = np.flatnonzero((tree.children_left != TREE_LEAF) & (tree.split_type != MULTIWAY))
    tree.missing_go_to_left[binary_splits] = _majority_goes_left(
        X, order, node_start, node_stop, node_info, split_value, category_bitset, weight, binary_splits
    )

    categorical = np.zeros(n_features, dtype=bool) if is_categorical is None else np.asarray(is_categorical)
    task_node = np.repeat(binary_splits, n_features)
    task_feature = np.tile(np.arange(n_features), binary_splits.shape[0])
    other = task_feature != feature[task_node]
    task_node, task_feature = task_node[other], task_feature[other]
    n_tasks = task_node.shape[0]
    task_threshold = np.empty(n_tasks)
    task_left_is_le = np.empty(n_tasks, dtype=bool)
    task_left_codes = np.zeros((n_tasks, CATEGORY_WORDS), dtype=np.uint32)
    task_right_codes = np.zeros((n_tasks, CATEGORY_WORDS), dtype=np.uint32)
    association = np.full(n_tasks, -np.inf)
    if max_surrogates > 0 and n_tasks > 0:
        _best_surrogate_splits(
            X, order, node_start, node_stop, node_info, split_value, category_bitset, weight, task_node, task_feature,
            categorical[task_feature], task_threshold, task_left_is_le, task_left_codes, task_right_codes,
            association,
        )

    # Each node's tasks by decreasing association, then feature; the first max_surrogates positive ones stay.
    ranked = np.lexsort((task_feature, -association, task_node))
    rank = np.arange(n_tasks) - np.searchsorted(task_node[ranked], task_node[ranked])
    keep = (association[ranked] > 0) & (rank < max_surrogates)
    kept, kept_rank = ranked[keep], rank[keep]
    at = (task_node[kept], kept_rank)
    tree.set_surrogates(max_surrogates)
    tree.surrogate_feature[at] = task_feature[kept]
    tree.surrogate_split_type[at] = np.where(categorical[task_feature[kept]], CATEGORICAL, NUMERIC)
    tree.surrogate_threshold[at] = task_threshold[kept]
    tree.surrogate_left_is_le[at] = task_left_is_le[kept]
    tree.surrogate_left_codes[at] = task_left_codes[kept]
    tree.surrogate_right_codes[at] = task_right_codes[kept]
    tree.surrogate_association[at] = association[kept]
    return tree
