"""Depth-wise growth of a small batch of trees, every level in one compiled call.

A level of the grower (``TreeGrower``'s loop) is a dozen kernels and
bookkeeping steps, each called from Python: for a small fit (a few thousand
rows, or the deep levels of a larger one) that host work costs more than the
levels' rows. This loop runs the same steps for every remaining level
without returning to Python: node values, ``level.stopping_rules``, the
histograms of the nodes large enough (``level.histogram_plan``: the smaller
child built, the larger derived by subtraction), the split search from those
histograms or from the rows, ``level.allowed_splits``, the children's
numbers and the partition. Same kernels and rules in the same order: the same
trees, nodes numbered alike, as the grower's own level loop (and so as the
CUDA backend's growth).

The grower calls it (``Backend.grow_levels``) when a level's histograms are
bounded by a few megabytes whatever the level below (``TreeGrower._grows_in_backend``):
two buffers of ``hist_capacity`` histograms, the level's and its parents'.
"""

import numpy as np
from numba import njit

from ...level import allowed_splits, histogram_plan, number_children, split_children, stopping_rules
from ..common import FROM_ROWS, NOT_SEARCHED
from .chunks import chunk_rows_for
from .histogram import _build_histograms, _subtract_histograms
from .leaf_values import node_values
from .partitioning import _apply_splits
from .sampling import feature_masks, threshold_draws
from .splitting import _finish_histogram_nodes, _scan_histogram_nodes, _search_row_nodes

# Columns of the packed records: a node's (tree, node_idx, depth, count, start), a split's (tree, node_idx,
# feature, bin, next_bin, missing_left, left, right, categorical).
NODE_COLUMNS = 5
SPLIT_COLUMNS = 9


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
    (X_binned, histogram_bins, sample_indices, scratch, sample_counts, hist_counts, row_slot, row_stats, stats_stride,
     constant_hessian, count_bits) = rows
    (categorical_features, bin_values, n_bins_non_missing, missing_bin, criterion, inv_scales, regularization,
     monotonic_cst, value_bounds) = search
    (min_weight_leaf, kernel_weight_outputs, root_weight, max_depth, min_samples_split, min_samples_leaf,
     stops_when_pure, min_rows_histogram, min_impurity_decrease, min_split_gain) = rules
    seed, first_tree, allowed_features, n_node_features, draws_features, random_thresholds = features
    n_features, n_slots = histogram_bins.shape[1], totals.shape[1]
    n_categorical = categorical_features.shape[0]
    node_records = np.empty((0, NODE_COLUMNS), dtype=np.int64)
    node_floats = np.empty((0, n_values + 2))
    split_records = np.empty((0, SPLIT_COLUMNS), dtype=np.int64)
    split_bitsets = np.empty((0, n_words), dtype=np.uint32)
    n_grown = n_splits = 0
    # The histogram rows of the level's pairs' parents (-1: none), in the other buffer.
    parent_rows = np.empty(0, dtype=np.int64)
    level = 0
    while tree.shape[0] > 0:
        hist, parent_hist = hist_buffers[level % 2], hist_buffers[1 - level % 2]
        level += 1
        n_nodes = tree.shape[0]
        counts = np.ascontiguousarray(totals[:, n_slots - 1])
        values = np.empty((n_nodes, n_values))
        impurity, weight = np.empty(n_nodes), np.empty(n_nodes)
        node_values(criterion, totals, inv_scales, regularization, values, impurity, weight)
        node_records = _reserved(node_records, n_grown + n_nodes)
        node_floats = _reserved(node_floats, n_grown + n_nodes)
        for node in range(n_nodes):
            record = node_records[n_grown + node]
            record[0], record[1], record[2], record[3], record[4] = (
                tree[node], node_idx[node], depth[node], counts[node], start[node]
            )
            node_floats[n_grown + node, :n_values] = values[node]
            node_floats[n_grown + node, n_values] = impurity[node]
            node_floats[n_grown + node, n_values + 1] = weight[node]
        n_grown += n_nodes
        splittable, needs_hist = stopping_rules(
            counts, depth, weight, impurity, tree, min_weight_leaf, max_depth, min_samples_split,
            min_samples_leaf, stops_when_pure, min_rows_histogram,
        )
        searched = splittable.nonzero()[0]
        if searched.shape[0] == 0:
            break
        masks = _feature_masks(tree, node_idx, searched, n_features, seed, first_tree, allowed_features,
                               n_node_features, draws_features)
        hist_rows = _level_histograms(
            hist, parent_hist, parent_rows, counts, needs_hist, masks, tree, start, stop, histogram_bins,
            sample_indices, hist_counts, row_slot, row_stats, stats_stride, constant_hessian, count_bits, n_threads,
        )
        draws = np.empty((0, n_features))
        if random_thresholds:
            draws = np.empty((n_nodes, n_features))
            threshold_draws(seed, tree + first_tree, node_idx, n_features, draws)
        split = (
            np.empty(n_nodes), np.empty(n_nodes, dtype=np.int32), np.empty(n_nodes, dtype=np.int32),
            np.empty(n_nodes, dtype=np.bool_), np.empty((n_nodes, n_slots), dtype=np.int64),
            np.empty(n_nodes, dtype=np.int32), np.empty(n_nodes, dtype=np.bool_),
            np.empty((n_nodes, n_words), dtype=np.uint32),
        )
        gain, feature, bin_idx, missing_left, left_totals, next_bin, categorical, category_bitset = split
        # Where each node is searched: splitting.find_best_splits' hist_rows.
        for node in range(n_nodes):
            if not splittable[node]:
                hist_rows[node] = NOT_SEARCHED
        scanned = (
            np.empty((n_nodes, n_features)), np.empty((n_nodes, n_features), dtype=np.int32),
            np.empty((n_nodes, n_features), dtype=np.bool_),
            np.empty((n_nodes, n_categorical, 2, n_words), dtype=np.uint32),
        )
        node_min_weight = min_weight_leaf[tree] * kernel_weight_outputs
        hist_nodes = (hist_rows >= 0).nonzero()[0]
        row_nodes = (hist_rows == FROM_ROWS).nonzero()[0]
        if hist_nodes.shape[0] > 0:
            _scan_histogram_nodes(
                max_blocks, hist, hist_rows, hist_nodes, totals, masks, categorical_features, draws, bin_values,
                n_bins_non_missing, missing_bin, criterion, inv_scales, regularization, min_samples_leaf,
                node_min_weight, monotonic_cst, value_bounds, *scanned,
            )
        if row_nodes.shape[0] > 0:
            _search_row_nodes(
                max_blocks, histogram_bins, sample_indices, start, stop, tree, sample_counts, row_slot, row_stats,
                stats_stride, row_nodes, totals, masks, categorical_features, draws, bin_values, missing_bin,
                criterion, inv_scales, regularization, min_samples_leaf, node_min_weight, monotonic_cst,
                value_bounds, *scanned, *split,
            )
        if row_nodes.shape[0] < n_nodes:
            _finish_histogram_nodes(
                hist, hist_rows, totals, categorical_features, n_bins_non_missing, missing_bin, *scanned, *split,
            )
        chosen = allowed_splits(
            splittable, feature, gain, tree, root_weight, min_impurity_decrease, min_split_gain
        ).nonzero()[0]
        if chosen.shape[0] == 0:
            break
        n_chosen = chosen.shape[0]
        left, right = number_children(tree[chosen], next_node_idx)
        split_records = _reserved(split_records, n_splits + n_chosen)
        split_bitsets = _reserved(split_bitsets, n_splits + n_chosen)
        for k in range(n_chosen):
            node = chosen[k]
            record = split_records[n_splits + k]
            record[0], record[1], record[2], record[3], record[4] = (
                tree[node], node_idx[node], feature[node], bin_idx[node], next_bin[node]
            )
            record[5], record[6], record[7], record[8] = missing_left[node], left[k], right[k], categorical[node]
            split_bitsets[n_splits + k] = category_bitset[node]
        n_splits += n_chosen
        chosen_start, chosen_stop = start[chosen], stop[chosen]
        chosen_left_totals = left_totals[chosen]
        n_left = np.ascontiguousarray(chosen_left_totals[:, n_slots - 1])
        chunk_rows = chunk_rows_for(int((chosen_stop - chosen_start).sum()), n_threads)
        partition = (feature[chosen], bin_idx[chosen], missing_left[chosen], missing_bin)
        if n_categorical > 0 and categorical[chosen].any():
            _apply_splits(
                X_binned, sample_indices, scratch, chosen_start, chosen_stop, n_left, *partition,
                categorical[chosen], category_bitset[chosen], chunk_rows,
            )
        else:
            _apply_splits(
                X_binned, sample_indices, scratch, chosen_start, chosen_stop, n_left, *partition, None, None,
                chunk_rows,
            )
        # Per-node feature subsets differ from their parents': nothing is subtracted.
        parent_rows = np.empty(0, dtype=np.int64) if draws_features else hist_rows[chosen]
        tree, depth, start, stop, totals = split_children(
            tree[chosen], depth[chosen], chosen_start, chosen_stop, totals[chosen], chosen_left_totals
        )
        node_idx = np.concatenate((left, right))
    return node_records[:n_grown], node_floats[:n_grown], split_records[:n_splits], split_bitsets[:n_splits]


@njit(cache=True)
def _level_histograms(
    hist, parent_hist, parent_rows, counts, needs_hist, masks, tree, start, stop, histogram_bins, sample_indices,
    hist_counts, row_slot, row_stats, stats_stride, constant_hessian, count_bits, n_threads,
):
    """The histograms of the nodes that need one, in ``hist``: built, or derived from ``parent_hist`` by
    subtraction (``TreeGrower._histograms``). Returns each node's row of ``hist``, or ``FROM_ROWS``."""
    n_nodes = counts.shape[0]
    hist_rows = np.full(n_nodes, FROM_ROWS, dtype=np.int64)
    if not needs_hist.any():
        return hist_rows
    build, derive, derive_from, derive_parent = histogram_plan(counts, needs_hist, parent_rows)
    n_build = build.shape[0]
    build_start, build_stop = start[build], stop[build]
    _build_histograms(
        histogram_bins, sample_indices, build_start, build_stop, tree[build], masks[build], hist_counts, row_slot,
        row_stats, stats_stride, chunk_rows_for(int((build_stop - build_start).sum()), n_threads), hist,
        np.arange(n_build), constant_hessian, count_bits,
    )
    hist_rows[build] = np.arange(n_build)
    if derive.shape[0] > 0:
        derived_rows = n_build + np.arange(derive.shape[0])
        _subtract_histograms(parent_hist, derive_parent, hist, hist_rows[derive_from], hist, derived_rows)
        hist_rows[derive] = derived_rows
    return hist_rows


@njit(cache=True)
def _feature_masks(tree, node_idx, searched, n_features, seed, first_tree, allowed_features, n_node_features,
                   draws_features):
    """The features each node evaluates, (n_nodes, n_features) bool: ``TreeGrower._feature_masks`` without
    interaction groups (all of its tree's allowed features, or ``n_node_features`` of them drawn for each
    searched node)."""
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
def _reserved(records, n_rows):
    """``records``, or a copy with room for at least ``n_rows`` rows (doubling)."""
    if records.shape[0] >= n_rows:
        return records
    grown = np.empty((max(n_rows, 2 * records.shape[0]), records.shape[1]), dtype=records.dtype)
    grown[:records.shape[0]] = records
    return grown
