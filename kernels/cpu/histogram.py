"""Histograms of fixed-point row statistics for a batch of nodes of many trees.

Row ``i`` of tree ``t`` adds ``sample_counts[t, i] * row_stats[j, s]`` to slot
``row_slot[j] + s`` and 1 to the last (row count) slot, with ``j = t *
stats_stride + i`` (``stats_stride``: 0 when the trees share the row
statistics, ``n_samples`` when each has its own). Sums are int64, so they do
not depend on the order of the additions.
"""

import numpy as np
from numba import njit, prange

from ..common import accumulate_row


@njit(parallel=True, cache=True)
def build_histograms(
    X_binned, sample_indices, node_start, node_stop, node_tree, feature_mask, sample_counts, row_slot, row_stats,
    stats_stride, hist,
):
    """Fill ``hist`` for every (node, feature) pair of ``feature_mask``, in parallel over the pairs.

    The nodes' row statistics (times the draw counts) are first gathered in
    the nodes' row order, so each feature's pass reads them sequentially
    instead of once per feature at random (LightGBM's "ordered gradients").

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype uint8, Fortran order
    sample_indices : ndarray of shape (n_entries,), dtype int32
        Rows of every tree, each node owning ``[node_start, node_stop)``.
    node_start, node_stop, node_tree : ndarray of shape (n_nodes,), dtype int64
    feature_mask : ndarray of shape (n_nodes, n_features), dtype bool
        The features each node evaluates; the other pairs are not filled (the split search skips them).
    sample_counts : ndarray of shape (n_trees, n_samples), dtype int32
        How many times each row is drawn for each tree.
    row_slot : ndarray of shape (n_stats_rows,), dtype int32
        First slot the row's statistics go to (its class, for classification).
    row_stats : ndarray of shape (n_stats_rows, n_row_stats), dtype int64
        Fixed-point statistics of each row.
    stats_stride : int
        Tree ``t``'s statistics of row ``i`` are at ``t * stats_stride + i``:
        0 (``n_stats_rows = n_samples``, shared by the trees) or ``n_samples``
        (``n_stats_rows = n_trees * n_samples``, one set per tree).
    hist : ndarray of shape (n_nodes, n_features, n_bins, n_slots), dtype int64
        Output; overwritten where ``feature_mask`` is True, unspecified elsewhere.
    """
    n_nodes, n_features = hist.shape[0], hist.shape[1]
    n_row_stats = row_stats.shape[1]
    gathered_start = np.zeros(n_nodes + 1, dtype=np.int64)
    for node in range(n_nodes):
        gathered_start[node + 1] = gathered_start[node] + node_stop[node] - node_start[node]
    gathered_stats = np.empty((gathered_start[n_nodes], n_row_stats), dtype=np.int64)
    gathered_slot = np.empty(gathered_start[n_nodes], dtype=np.int32)
    for node in prange(n_nodes):
        counts = sample_counts[node_tree[node]]
        stats_base = node_tree[node] * stats_stride
        offset = gathered_start[node] - node_start[node]
        for position in range(node_start[node], node_stop[node]):
            row = sample_indices[position]
            gathered_slot[offset + position] = row_slot[stats_base + row]
            for stat_idx in range(n_row_stats):
                gathered_stats[offset + position, stat_idx] = counts[row] * row_stats[stats_base + row, stat_idx]
    for task in prange(n_nodes * n_features):
        node = task // n_features
        feature_idx = task % n_features
        if not feature_mask[node, feature_idx]:
            continue
        node_hist = hist[node, feature_idx]
        node_hist[:] = 0
        _add_rows(
            node_hist, X_binned[:, feature_idx], sample_indices, node_start[node], node_stop[node],
            gathered_start[node] - node_start[node], gathered_slot, gathered_stats,
        )


@njit(cache=True)
def _add_rows(node_hist, bins, sample_indices, start, stop, offset, gathered_slot, gathered_stats):
    """Add the rows at positions ``[start, stop)`` to one feature's histogram (n_bins, n_slots).

    One statistic (class weights) and two (gradient, hessian) have loops of
    their own: a loop over a fixed number of statistics runs 2.5x faster
    than one whose length numba only knows at run time.
    """
    count_slot = node_hist.shape[1] - 1
    n_row_stats = gathered_stats.shape[1]
    if n_row_stats == 1:
        for position in range(start, stop):
            bin_idx = bins[sample_indices[position]]
            node_hist[bin_idx, gathered_slot[offset + position]] += gathered_stats[offset + position, 0]
            node_hist[bin_idx, count_slot] += 1
    elif n_row_stats == 2:
        for position in range(start, stop):
            bin_idx = bins[sample_indices[position]]
            first_slot = gathered_slot[offset + position]
            node_hist[bin_idx, first_slot] += gathered_stats[offset + position, 0]
            node_hist[bin_idx, first_slot + 1] += gathered_stats[offset + position, 1]
            node_hist[bin_idx, count_slot] += 1
    else:
        for position in range(start, stop):
            bin_idx = bins[sample_indices[position]]
            first_slot = gathered_slot[offset + position]
            for stat_idx in range(n_row_stats):
                node_hist[bin_idx, first_slot + stat_idx] += gathered_stats[offset + position, stat_idx]
            node_hist[bin_idx, count_slot] += 1


@njit(parallel=True, cache=True)
def node_totals(
    sample_indices, node_start, node_stop, node_tree, sample_counts, row_slot, row_stats, stats_stride, totals
):
    """Sum every node's rows into ``totals`` of shape (n_nodes, n_slots) (arguments as in ``build_histograms``)."""
    for node in prange(totals.shape[0]):
        totals[node] = 0
        counts = sample_counts[node_tree[node]]
        stats_base = node_tree[node] * stats_stride
        for position in range(node_start[node], node_stop[node]):
            row = sample_indices[position]
            accumulate_row(totals[node], stats_base + row, counts[row], row_slot, row_stats)


@njit(parallel=True, cache=True)
def subtract_histograms(parent_hist, child_hist, sibling_hist):
    """``sibling_hist[k] = parent_hist[k] - child_hist[k]`` (exact in int64)."""
    n_nodes = parent_hist.shape[0]
    parent = parent_hist.reshape(n_nodes, -1)
    child = child_hist.reshape(n_nodes, -1)
    sibling = sibling_hist.reshape(n_nodes, -1)
    for node in prange(n_nodes):
        for k in range(parent.shape[1]):
            sibling[node, k] = parent[node, k] - child[node, k]
