"""Growth of a small batch of trees in one compiled call: depth-wise every remaining level, best-first every step.

A level of the grower (``TreeGrower``'s loop), or a step of best-first
growth (``grower._BestFirst``), is a dozen kernels and bookkeeping steps,
each called from Python: for a small fit (a few thousand rows, or the deep
levels of a larger one) that host work costs more than the nodes' rows.
These loops run the same steps without returning to Python: node values,
``level.stopping_rules``, the histograms of the nodes large enough
(``level.histogram_plan``: the smaller child built, the larger derived by
subtraction), the split search from those histograms or from the rows,
``level.allowed_splits``, the children's numbers and the partition; for
best-first growth also ``best_first``'s ``commit_splits`` and
``leaves_to_expand`` over a node table and a histogram pool. Same kernels and
rules in the same order: the same trees, nodes numbered alike, as the
grower's own loops (and so as the CUDA backend's growth).

The grower calls ``grow_levels`` (``Backend.grow_levels``) when a level's
histograms are bounded by a few megabytes whatever the level below
(``TreeGrower._grows_in_backend``): two buffers of ``hist_capacity``
histograms, the level's and its parents'. ``grow_best_first``
(``Backend.grow_best_first``) grows whole trees in the pool the grower sized.
"""

import numpy as np
from numba import njit

from ...best_first import commit_splits, leaves_to_expand, push_leaves
from ...level import allowed_splits, histogram_plan, number_children, split_children, stopping_rules
from ..common import FROM_ROWS, NOT_SEARCHED
from .chunks import chunk_rows_for
from .histogram import _build_histograms, _subtract_histograms
from .leaf_values import level_node_values
from .partitioning import apply_splits_in_tasks
from .sampling import feature_masks, threshold_draws
from .splitting import (
    _finish_histogram_nodes, _record_unsearched, _scan_histogram_nodes, _search_row_nodes, row_search_space,
)

# Columns of the packed records: a node's (tree, node_idx, depth, count, start), a split's (tree, node_idx,
# feature, bin, next_bin, missing_left, left, right, categorical).
NODE_COLUMNS = 5
SPLIT_COLUMNS = 9
# Integer columns of best-first growth's node table (``best_first.NodeTable``'s): a node's place and rows,
# its histogram row in the pool (-1: none), its children's uids (-1: not expanded), whether it can split.
TREE, NODE_IDX, DEPTH, START, STOP, HIST_ROW, LEFT_UID, RIGHT_UID, CAN_SPLIT = range(9)
TABLE_COLUMNS = 9


@njit(cache=True)
def grow_levels(nodes, rows, search, rules, features, hist_buffers, n_values, n_words, max_blocks, n_threads,
                next_node_idx):
    """Grow ``nodes`` (a level, children lefts then rights, or roots) and all their descendants.

    Parameters
    ----------
    nodes : tuple
        ``(tree, node_idx, depth, start, stop)``, ndarrays of shape (n_nodes,), dtype int64, and
        ``totals`` (n_nodes, n_slots) int64.
    rows : tuple
        ``(X_binned, histogram_bins, sample_indices, scratch, sample_counts, hist_counts, row_slot, row_stats,
        stats_stride, constant_hessian, count_bits)``: ``backend.RowData``'s arrays, the partition's
        scratch (``sample_indices``' shape) and the histogram kernel's options (``hist_counts``: None for
        unit counts; ``histogram.build_histograms``).
    search : tuple
        ``(categorical_features, bin_values, n_bins_non_missing, missing_bin, criterion, inv_scales,
        regularization, monotonic_cst, value_bounds)``, as ``splitting.find_best_splits`` takes them
        (no constraint: arrays of no rows).
    rules : tuple
        ``(min_weight_leaf, kernel_weight_outputs, root_weight, max_depth, min_samples_split,
        min_samples_leaf, stops_when_pure, min_rows_histogram, min_impurity_decrease, min_split_gain)``:
        per-tree ``min_weight_leaf`` and ``root_weight`` (n_trees,) float64 and the ``GrowthParams``
        rules (``level.stopping_rules``, ``level.allowed_splits``).
    features : tuple
        ``(seed, first_tree, allowed_features, n_node_features, draws_features, random_thresholds)``: each
        tree's allowed features (n_trees, n_allowed) int64; with ``draws_features`` every splittable
        node evaluates ``n_node_features`` of them (``sampling.feature_masks``) and nothing is subtracted,
        else every node all of them.
    hist_buffers : tuple of 2 ndarrays of shape (hist_capacity, n_features, n_bins, n_slots), dtype int64
        A level's histograms go in one buffer, its children's in the other.
    n_values, n_words : int
        Values per node, and words of a split's category bitset.
    max_blocks, n_threads : int
        The split search's blocks and the partition's threads (read on the host).
    next_node_idx : ndarray of shape (n_trees,), dtype int64
        Each tree's next free node index, advanced by the splits.

    Returns
    -------
    node_records : ndarray of shape (n_grown, NODE_COLUMNS), dtype int64
    node_values : ndarray of shape (n_grown, n_values + 2), dtype float64
        Each grown node's values, then impurity and weight.
    split_records : ndarray of shape (n_splits, SPLIT_COLUMNS), dtype int64
    split_bitsets : ndarray of shape (n_splits, n_words), dtype uint32
        The category bitset of each split.
    """
    tree, node_idx, depth, start, stop, totals = nodes
    draws_features = features[4]
    records = _empty_records(n_values, n_words)
    n_grown = n_splits = 0
    # The histogram rows of the level's pairs' parents (-1: none), in the other buffer.
    parent_rows = np.empty(0, dtype=np.int64)
    row_space = _row_space(None, start, stop, totals.shape[1], rows, search, rules, max_blocks)
    level = 0
    while tree.shape[0] > 0:
        hist, parent_hist = hist_buffers[level % 2], hist_buffers[1 - level % 2]
        level += 1
        n_nodes = tree.shape[0]
        values, impurity, weight, splittable, needs_hist = _node_stats(tree, depth, totals, search, rules, n_values)
        records = _record_nodes(records, n_grown, tree, node_idx, depth, start, totals, values, impurity, weight)
        n_grown += n_nodes
        searched = splittable.nonzero()[0]
        if searched.shape[0] == 0:
            break
        masks = _feature_masks(tree, node_idx, searched, rows[1].shape[1], features)
        hist_rows = _level_histograms(hist, parent_hist, parent_rows, needs_hist, masks, tree, start, stop, totals,
                                      rows, n_threads)
        split, can_split, row_space = _best_splits(
            hist, hist_rows, splittable, tree, node_idx, start, stop, totals, masks, rows, search, rules, features,
            n_words, max_blocks, row_space,
        )
        chosen = can_split.nonzero()[0]
        if chosen.shape[0] == 0:
            break
        left, right = number_children(tree[chosen], next_node_idx)
        chosen_split = _taken(split, chosen)
        records = _record_splits(records, n_splits, tree[chosen], node_idx[chosen], chosen_split, left, right)
        n_splits += chosen.shape[0]
        tree, depth, start, stop, totals = _partition(
            rows, search, tree[chosen], depth[chosen], start[chosen], stop[chosen], totals[chosen], chosen_split,
            n_threads,
        )
        node_idx = np.concatenate((left, right))
        # Per-node feature subsets differ from their parents': nothing is subtracted.
        parent_rows = np.empty(0, dtype=np.int64) if draws_features else hist_rows[chosen]
    return _packed(records, n_grown, n_splits)


@njit(cache=True)
def grow_best_first(roots, rows, search, rules, features, pool, heaps, n_values, n_words, max_blocks, n_threads,
                    max_leaf_nodes, exact, keep_histograms, table_capacity, next_node_idx):
    """Grow the trees of ``roots`` best-first to ``max_leaf_nodes`` leaves each (``grower._BestFirst.grow``).

    Parameters
    ----------
    roots, rows, search, rules, features, n_values, n_words, max_blocks, n_threads, next_node_idx
        As ``grow_levels`` takes them; ``roots`` are every tree's root.
    pool : tuple
        ``(hist, free_rows, n_free)``: ``best_first.HistogramPool``'s histograms (n_pool, n_features,
        n_bins, n_slots) int64, its free rows (n_pool,) int64, taken from the end, and how many are free.
    heaps : tuple
        ``(heap, heap_start, heap_size)``: room for each tree's open leaves (``best_first``), empty.
    max_leaf_nodes : int
    exact : bool
        Each step expands each tree's best leaf only (``_BestFirst.exact``).
    keep_histograms : bool
        Open leaves keep their histograms, for their children's subtraction.
    table_capacity : int
        Nodes the node table holds before it first grows.

    Returns
    -------
    The packed records of ``grow_levels``.
    """
    heap, heap_start, heap_size = heaps
    hist, free_rows, n_free = pool
    n_trees = heap_start.shape[0]
    n_slots = roots[5].shape[1]
    table = (
        np.empty((table_capacity, TABLE_COLUMNS), dtype=np.int64), np.empty((table_capacity, n_values + 3)),
        np.empty((table_capacity, n_slots), dtype=np.int64), _split_arrays(table_capacity, n_slots, n_words),
    )
    row_space = _row_space(None, roots[3], roots[4], n_slots, rows, search, rules, max_blocks)
    table, n_free, row_space = _evaluate_into_table(
        table, 0, roots, np.empty(0, dtype=np.int64), hist, free_rows, n_free, rows, search, rules, features,
        keep_histograms, n_values, n_words, max_blocks, n_threads, row_space,
    )
    n_table = n_trees
    ints, floats = table[0], table[1]
    open_roots = ints[:n_trees, CAN_SPLIT].nonzero()[0]
    push_leaves(heap, heap_start, heap_size, open_roots, ints[open_roots, TREE], floats[:, n_values + 2],
                ints[:, NODE_IDX])
    selected = np.empty(heap.shape[0], dtype=np.int64)
    committed = np.empty(n_trees * max_leaf_nodes, dtype=np.int64)
    n_committed = 0
    while True:
        ints, floats = table[0], table[1]
        gain, node_idx, can_split = floats[:, n_values + 2], ints[:, NODE_IDX], ints[:, CAN_SPLIT]
        n_new = commit_splits(
            heap, heap_start, heap_size, gain, node_idx, ints[:, LEFT_UID], ints[:, RIGHT_UID], can_split,
            next_node_idx, max_leaf_nodes, selected,
        )
        committed[n_committed:n_committed + n_new] = selected[:n_new]
        n_committed += n_new
        n_expand = leaves_to_expand(
            heap, heap_start, heap_size, gain, node_idx, ints[:, LEFT_UID], ints[:, RIGHT_UID], can_split,
            next_node_idx, max_leaf_nodes, exact, selected,
        )
        if n_expand == 0:
            break
        table, n_free, row_space = _expand(
            table, n_table, selected[:n_expand].copy(), hist, free_rows, n_free, rows, search, rules, features,
            keep_histograms, exact, n_values, n_words, max_blocks, n_threads, next_node_idx, row_space,
        )
        n_table += 2 * n_expand
    return _table_records(table, committed[:n_committed], n_trees, n_values, n_words)


@njit(cache=True)
def _expand(table, n_table, uids, hist, free_rows, n_free, rows, search, rules, features, keep_histograms, exact,
            n_values, n_words, max_blocks, n_threads, next_node_idx, row_space):
    """Partition the rows of the table's leaves ``uids`` and evaluate their children (``_BestFirst._expand``):
    appended at ``n_table``, lefts then rights. Returns the table, the pool's free count and ``row_space``
    (``_best_splits``)."""
    ints, _, totals, split = table
    n_parents = uids.shape[0]
    tree = ints[uids, TREE]
    if exact:
        # Each tree's best leaf, split next: its children's indices are known.
        left_idx = next_node_idx[tree]
        children_idx = np.concatenate((left_idx, left_idx + 1))
    else:
        children_idx = np.full(2 * n_parents, -1, dtype=np.int64)
    children = _partition(
        rows, search, tree, ints[uids, DEPTH], ints[uids, START], ints[uids, STOP], totals[uids],
        _taken(split, uids), n_threads,
    )
    child_tree, child_depth, child_start, child_stop, child_totals = children
    parent_rows = ints[uids, HIST_ROW]
    table, n_free, row_space = _evaluate_into_table(
        table, n_table, (child_tree, children_idx, child_depth, child_start, child_stop, child_totals), parent_rows,
        hist, free_rows, n_free, rows, search, rules, features, keep_histograms, n_values, n_words, max_blocks,
        n_threads, row_space,
    )
    ints = table[0]
    for k in range(n_parents):
        n_free = _give(free_rows, n_free, ints[uids[k], HIST_ROW])
        ints[uids[k], HIST_ROW] = -1
        ints[uids[k], LEFT_UID] = n_table + k
        ints[uids[k], RIGHT_UID] = n_table + n_parents + k
    return table, n_free, row_space


@njit(cache=True)
def _evaluate_into_table(table, n_table, nodes, parent_rows, hist, free_rows, n_free, rows, search, rules, features,
                         keep_histograms, n_values, n_words, max_blocks, n_threads, row_space):
    """Values, best split and pool histogram of ``nodes`` (children lefts then rights of parents whose pool rows
    are ``parent_rows``, or roots: no rows), written to the table from row ``n_table`` (``_BestFirst._evaluate``).
    Returns the table (grown if needed), the pool's free count and ``row_space`` (``_best_splits``)."""
    tree, node_idx, depth, start, stop, totals = nodes
    n_nodes = tree.shape[0]
    values, impurity, weight, splittable, needs_hist = _node_stats(tree, depth, totals, search, rules, n_values)
    masks = _feature_masks(tree, node_idx, splittable.nonzero()[0], rows[1].shape[1], features)
    hist_rows, n_free = _pool_histograms(hist, free_rows, n_free, parent_rows, needs_hist, masks, tree, start, stop,
                                         totals, rows, n_threads)
    split, can_split, row_space = _best_splits(
        hist, hist_rows, splittable, tree, node_idx, start, stop, totals, masks, rows, search, rules, features, n_words,
        max_blocks, row_space,
    )
    for node in range(n_nodes):
        if not (keep_histograms and can_split[node]):
            n_free = _give(free_rows, n_free, hist_rows[node])
            hist_rows[node] = -1
    table = _table_reserved(table, n_table + n_nodes)
    ints, floats, table_totals, table_split = table
    for node in range(n_nodes):
        row = ints[n_table + node]
        row[TREE], row[NODE_IDX], row[DEPTH], row[START], row[STOP] = (
            tree[node], node_idx[node], depth[node], start[node], stop[node]
        )
        row[HIST_ROW], row[LEFT_UID], row[RIGHT_UID], row[CAN_SPLIT] = hist_rows[node], -1, -1, can_split[node]
        floats[n_table + node, :n_values] = values[node]
        floats[n_table + node, n_values] = impurity[node]
        floats[n_table + node, n_values + 1] = weight[node]
        floats[n_table + node, n_values + 2] = split[0][node]
        table_totals[n_table + node] = totals[node]
    _put(table_split, n_table, split)
    return table, n_free, row_space


@njit(cache=True)
def _table_records(table, committed, n_trees, n_values, n_words):
    """The packed records (``grow_levels``') of the roots, the ``committed`` splits and their children."""
    ints, floats, totals, split = table
    left, right = ints[committed, LEFT_UID], ints[committed, RIGHT_UID]
    grown = np.concatenate((np.arange(n_trees), left, right))
    records = _empty_records(n_values, n_words)
    records = _record_nodes(
        records, 0, ints[grown, TREE], ints[grown, NODE_IDX], ints[grown, DEPTH], ints[grown, START],
        totals[grown], floats[grown, :n_values], floats[grown, n_values], floats[grown, n_values + 1],
    )
    records = _record_splits(
        records, 0, ints[committed, TREE], ints[committed, NODE_IDX], _taken(split, committed), ints[left, NODE_IDX],
        ints[right, NODE_IDX],
    )
    return _packed(records, grown.shape[0], committed.shape[0])


@njit(cache=True)
def _node_stats(tree, depth, totals, search, rules, n_values):
    """``(values, impurity, weight, splittable, needs_hist)`` of nodes: ``level_node_values``, then
    ``level.stopping_rules``."""
    criterion, inv_scales, regularization = search[4], search[5], search[6]
    (min_weight_leaf, _, _, max_depth, min_samples_split, min_samples_leaf, stops_when_pure, min_rows_histogram,
     _, _) = rules
    n_nodes = tree.shape[0]
    values = np.empty((n_nodes, n_values))
    impurity, weight = np.empty(n_nodes), np.empty(n_nodes)
    level_node_values(criterion, totals, inv_scales, regularization, values, impurity, weight)
    counts = np.ascontiguousarray(totals[:, totals.shape[1] - 1])
    splittable, needs_hist = stopping_rules(
        counts, depth, weight, impurity, tree, min_weight_leaf, max_depth, min_samples_split, min_samples_leaf,
        stops_when_pure, min_rows_histogram,
    )
    return values, impurity, weight, splittable, needs_hist


@njit(cache=True)
def _best_splits(hist, hist_rows, splittable, tree, node_idx, start, stop, totals, masks, rows, search, rules,
                 features, n_words, max_blocks, row_space):
    """The best split of every splittable node over its features in ``masks``, from its histogram
    (``hist_rows``) or its rows (``splitting.find_best_splits``' stages), and which are allowed
    (``level.allowed_splits``): ``(split, can_split, row_space)``, ``split`` as ``_split_arrays``, ``row_space``
    the row search's working memory (``_row_space``), grown if a node needed more."""
    (_, histogram_bins, sample_indices, _, sample_counts, _, row_slot, row_stats, stats_stride, _, _) = rows
    (categorical_features, bin_values, n_bins_non_missing, missing_bin, criterion, inv_scales, regularization,
     monotonic_cst, value_bounds) = search
    (min_weight_leaf, kernel_weight_outputs, root_weight, _, _, min_samples_leaf, _, _, min_impurity_decrease,
     min_split_gain) = rules
    seed, first_tree, random_thresholds = features[0], features[1], features[5]
    n_nodes, n_features = tree.shape[0], masks.shape[1]
    n_categorical = categorical_features.shape[0]
    draws = np.empty((0, n_features))
    if random_thresholds:
        draws = np.empty((n_nodes, n_features))
        threshold_draws(seed, tree + first_tree, node_idx, n_features, draws)
    split = _split_arrays(n_nodes, totals.shape[1], n_words)
    # Where each node is searched: splitting.find_best_splits' hist_rows.
    search_rows = hist_rows.copy()
    for node in range(n_nodes):
        if not splittable[node]:
            search_rows[node] = NOT_SEARCHED
    scanned = (
        np.empty((n_nodes, n_features)), np.empty((n_nodes, n_features), dtype=np.int32),
        np.empty((n_nodes, n_features), dtype=np.bool_),
        np.empty((n_nodes, n_categorical, 2, n_words), dtype=np.uint32),
    )
    node_min_weight = min_weight_leaf[tree] * kernel_weight_outputs
    hist_nodes = (search_rows >= 0).nonzero()[0]
    row_nodes = (search_rows == FROM_ROWS).nonzero()[0]
    if hist_nodes.shape[0] > 0:
        _scan_histogram_nodes(
            max_blocks, hist, search_rows, hist_nodes, totals, masks, categorical_features, draws, bin_values,
            n_bins_non_missing, missing_bin, criterion, inv_scales, regularization, min_samples_leaf,
            node_min_weight, monotonic_cst, value_bounds, *scanned,
        )
    if row_nodes.shape[0] > 0:
        row_space = _row_space(
            row_space, start[row_nodes], stop[row_nodes], totals.shape[1], rows, search, rules, max_blocks
        )
        _search_row_nodes(
            row_space, histogram_bins, sample_indices, start, stop, tree, sample_counts, row_slot, row_stats,
            stats_stride, row_nodes, totals, masks, categorical_features, draws, bin_values, missing_bin,
            criterion, inv_scales, regularization, min_samples_leaf, node_min_weight, monotonic_cst,
            value_bounds, *scanned, *split,
        )
    if hist_nodes.shape[0] > 0:
        _finish_histogram_nodes(
            hist, search_rows, hist_nodes, totals, categorical_features, n_bins_non_missing, missing_bin, *scanned,
            *split,
        )
    unsearched_nodes = (search_rows == NOT_SEARCHED).nonzero()[0]
    if unsearched_nodes.shape[0] > 0:
        _record_unsearched(unsearched_nodes, scanned[0], scanned[1], categorical_features, *split)
    can_split = allowed_splits(splittable, split[1], split[0], tree, root_weight, min_impurity_decrease,
                               min_split_gain)
    return split, can_split, row_space


@njit(cache=True)
def _row_space(row_space, start, stop, n_slots, rows, search, rules, max_blocks):
    """``splitting.row_search_space`` for ``max_blocks`` blocks of nodes with rows ``[start, stop)``: at first
    (``row_space`` None) for the nodes below ``min_rows_histogram`` rows of a growth from those, which the
    growth's row searches then keep."""
    max_rows = (stop - start).max() if start.shape[0] > 0 else 0
    if row_space is None:
        max_rows = min(max_rows, rules[7])
    return row_search_space(row_space, max_blocks, max_rows, search[3] + 1, n_slots, rows[1], rows[7].shape[1])


@njit(cache=True)
def _split_arrays(n_nodes, n_slots, n_words):
    """``(gain, feature, bin, missing_left, left_totals, next_bin, categorical, category_bitset)`` of ``n_nodes``
    splits: ``splitting.find_best_splits``' outputs."""
    return (
        np.empty(n_nodes), np.empty(n_nodes, dtype=np.int32), np.empty(n_nodes, dtype=np.int32),
        np.empty(n_nodes, dtype=np.bool_), np.empty((n_nodes, n_slots), dtype=np.int64),
        np.empty(n_nodes, dtype=np.int32), np.empty(n_nodes, dtype=np.bool_),
        np.empty((n_nodes, n_words), dtype=np.uint32),
    )


@njit(cache=True)
def _taken(split, positions):
    """The splits of ``split`` (``_split_arrays``) at ``positions``."""
    return (
        split[0][positions], split[1][positions], split[2][positions], split[3][positions], split[4][positions],
        split[5][positions], split[6][positions], split[7][positions],
    )


@njit(cache=True)
def _put(target, first, split):
    """Write ``split`` (``_split_arrays``) into ``target``'s rows from ``first``."""
    n_nodes = split[0].shape[0]
    target[0][first:first + n_nodes] = split[0]
    target[1][first:first + n_nodes] = split[1]
    target[2][first:first + n_nodes] = split[2]
    target[3][first:first + n_nodes] = split[3]
    target[4][first:first + n_nodes] = split[4]
    target[5][first:first + n_nodes] = split[5]
    target[6][first:first + n_nodes] = split[6]
    target[7][first:first + n_nodes] = split[7]


@njit(cache=True)
def _partition(rows, search, tree, depth, start, stop, totals, split, n_threads):
    """Partition the rows of split nodes by ``split`` (theirs); returns their children, lefts then rights
    (``level.split_children``)."""
    X_binned, sample_indices, scratch = rows[0], rows[2], rows[3]
    categorical_features, missing_bin = search[0], search[3]
    _, feature, bin_idx, missing_left, left_totals, _, categorical, category_bitset = split
    n_left = np.ascontiguousarray(left_totals[:, left_totals.shape[1] - 1])
    chunk_rows = chunk_rows_for(int((stop - start).sum()), n_threads)
    if categorical_features.shape[0] > 0 and categorical.any():
        apply_splits_in_tasks(
            X_binned, sample_indices, scratch, start, stop, n_left, feature, bin_idx, missing_left, missing_bin,
            categorical, category_bitset, chunk_rows,
        )
    else:
        apply_splits_in_tasks(
            X_binned, sample_indices, scratch, start, stop, n_left, feature, bin_idx, missing_left, missing_bin,
            None, None, chunk_rows,
        )
    return split_children(tree, depth, start, stop, totals, left_totals)


@njit(cache=True)
def _level_histograms(hist, parent_hist, parent_rows, needs_hist, masks, tree, start, stop, totals, rows, n_threads):
    """The histograms of the nodes that need one, in ``hist``: built, or derived from ``parent_hist`` by
    subtraction (``TreeGrower._histograms``). Returns each node's row of ``hist``, or ``FROM_ROWS``."""
    n_nodes = tree.shape[0]
    hist_rows = np.full(n_nodes, FROM_ROWS, dtype=np.int64)
    if not needs_hist.any():
        return hist_rows
    counts = np.ascontiguousarray(totals[:, totals.shape[1] - 1])
    build, derive, derive_from, derive_parent = histogram_plan(counts, needs_hist, parent_rows)
    n_build = build.shape[0]
    hist_rows[build] = np.arange(n_build)
    _build_into(hist, hist_rows[build], build, masks, tree, start, stop, rows, n_threads)
    if derive.shape[0] > 0:
        derived_rows = n_build + np.arange(derive.shape[0])
        _subtract_histograms(parent_hist, derive_parent, hist, hist_rows[derive_from], hist, derived_rows)
        hist_rows[derive] = derived_rows
    return hist_rows


@njit(cache=True)
def _pool_histograms(hist, free_rows, n_free, parent_rows, needs_hist, masks, tree, start, stop, totals, rows,
                     n_threads):
    """Pool rows of the histograms of nodes, -1 for none (``_BestFirst._histograms``): built, or derived from
    a parent's kept histogram; a pool short of rows leaves the last ones without. Returns them and the free
    count."""
    n_nodes = tree.shape[0]
    hist_rows = np.full(n_nodes, -1, dtype=np.int64)
    if not needs_hist.any():
        return hist_rows, n_free
    counts = np.ascontiguousarray(totals[:, totals.shape[1] - 1])
    build, derive, derive_from, derive_parent = histogram_plan(counts, needs_hist, parent_rows)
    for k in range(build.shape[0]):
        hist_rows[build[k]], n_free = _take(free_rows, n_free)
    build = build[hist_rows[build] >= 0]
    # A node whose built sibling found no row is scanned from its rows.
    derivable = hist_rows[derive_from] >= 0
    derive, derive_from, derive_parent = derive[derivable], derive_from[derivable], derive_parent[derivable]
    for k in range(derive.shape[0]):
        hist_rows[derive[k]], n_free = _take(free_rows, n_free)
    derived = hist_rows[derive] >= 0
    derive, derive_from, derive_parent = derive[derived], derive_from[derived], derive_parent[derived]
    if build.shape[0] > 0:
        _build_into(hist, hist_rows[build], build, masks, tree, start, stop, rows, n_threads)
    if derive.shape[0] > 0:
        _subtract_histograms(hist, derive_parent, hist, hist_rows[derive_from], hist, hist_rows[derive])
    return hist_rows, n_free


@njit(cache=True)
def _build_into(hist, out_rows, build, masks, tree, start, stop, rows, n_threads):
    """Build the histograms of nodes ``build`` into rows ``out_rows`` of ``hist``."""
    (_, histogram_bins, sample_indices, _, _, hist_counts, row_slot, row_stats, stats_stride, constant_hessian,
     count_bits) = rows
    build_start, build_stop = start[build], stop[build]
    _build_histograms(
        histogram_bins, sample_indices, build_start, build_stop, tree[build], masks[build], hist_counts, row_slot,
        row_stats, stats_stride, chunk_rows_for(int((build_stop - build_start).sum()), n_threads), hist, out_rows,
        constant_hessian, count_bits,
    )


@njit(cache=True)
def _take(free_rows, n_free):
    """A free row of the pool (the last one; -1 when none is) and the new free count."""
    if n_free == 0:
        return -1, n_free
    return free_rows[n_free - 1], n_free - 1


@njit(cache=True)
def _give(free_rows, n_free, row):
    """Free ``row`` (-1 is none); returns the new free count."""
    if row < 0:
        return n_free
    free_rows[n_free] = row
    return n_free + 1


@njit(cache=True)
def _feature_masks(tree, node_idx, searched, n_features, features):
    """The features each node evaluates, (n_nodes, n_features) bool: ``TreeGrower._feature_masks`` without
    interaction groups (all of its tree's allowed features, or ``n_node_features`` of them drawn for each
    searched node)."""
    seed, first_tree, allowed_features, n_node_features, draws_features = features[:5]
    n_nodes, n_allowed = tree.shape[0], allowed_features.shape[1]
    masks = np.zeros((n_nodes, n_features), dtype=np.bool_)
    if draws_features:
        drawn = np.empty((searched.shape[0], n_allowed), dtype=np.bool_)
        feature_masks(seed, tree[searched] + first_tree, node_idx[searched], n_allowed, n_node_features, drawn)
        for k in range(searched.shape[0]):
            for position in range(n_allowed):
                masks[searched[k], allowed_features[tree[searched[k]], position]] = drawn[k, position]
    else:
        for node in range(n_nodes):
            for position in range(n_allowed):
                masks[node, allowed_features[tree[node], position]] = True
    return masks


@njit(cache=True)
def _empty_records(n_values, n_words):
    """Empty packed records: ``(node_records, node_values, split_records, split_bitsets)``."""
    return (
        np.empty((0, NODE_COLUMNS), dtype=np.int64), np.empty((0, n_values + 2)),
        np.empty((0, SPLIT_COLUMNS), dtype=np.int64), np.empty((0, n_words), dtype=np.uint32),
    )


@njit(cache=True)
def _record_nodes(records, first, tree, node_idx, depth, start, totals, values, impurity, weight):
    """The records with nodes written from row ``first`` (grown when needed)."""
    n_nodes = tree.shape[0]
    node_records, node_floats = _reserved(records[0], first + n_nodes), _reserved(records[1], first + n_nodes)
    n_values = values.shape[1]
    for node in range(n_nodes):
        record = node_records[first + node]
        record[0], record[1], record[2], record[3], record[4] = (
            tree[node], node_idx[node], depth[node], totals[node, totals.shape[1] - 1], start[node]
        )
        node_floats[first + node, :n_values] = values[node]
        node_floats[first + node, n_values] = impurity[node]
        node_floats[first + node, n_values + 1] = weight[node]
    return node_records, node_floats, records[2], records[3]


@njit(cache=True)
def _record_splits(records, first, tree, node_idx, split, left, right):
    """The records with the splits of nodes (``split``, theirs) written from row ``first`` (grown when needed)."""
    n_nodes = tree.shape[0]
    split_records, split_bitsets = _reserved(records[2], first + n_nodes), _reserved(records[3], first + n_nodes)
    _, feature, bin_idx, missing_left, _, next_bin, categorical, category_bitset = split
    for k in range(n_nodes):
        record = split_records[first + k]
        record[0], record[1], record[2], record[3], record[4] = (
            tree[k], node_idx[k], feature[k], bin_idx[k], next_bin[k]
        )
        record[5], record[6], record[7], record[8] = missing_left[k], left[k], right[k], categorical[k]
        split_bitsets[first + k] = category_bitset[k]
    return records[0], records[1], split_records, split_bitsets


@njit(cache=True)
def _packed(records, n_grown, n_splits):
    return records[0][:n_grown], records[1][:n_grown], records[2][:n_splits], records[3][:n_splits]


@njit(cache=True)
def _table_reserved(table, n_rows):
    """``table`` with room for at least ``n_rows`` nodes (doubling)."""
    ints, floats, totals, split = table
    if ints.shape[0] >= n_rows:
        return table
    capacity = max(n_rows, 2 * ints.shape[0])
    grown_split = _split_arrays(capacity, totals.shape[1], split[7].shape[1])
    _put(grown_split, 0, split)
    return _reserved(ints, capacity), _reserved(floats, capacity), _reserved(totals, capacity), grown_split


@njit(cache=True)
def _reserved(records, n_rows):
    """``records``, or a copy with room for at least ``n_rows`` rows (doubling)."""
    if records.shape[0] >= n_rows:
        return records
    grown = np.empty((max(n_rows, 2 * records.shape[0]), records.shape[1]), dtype=records.dtype)
    grown[:records.shape[0]] = records
    return grown
