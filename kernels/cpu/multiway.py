"""Multiway splits: their gains from the nodes' histograms, and the k-way partition of the split nodes' rows.

A node split multiway on a categorical feature has one child per category
code ``0 .. n_children - 1`` (a categorical feature's bin is its code). Its
rows are sorted stably by *part*: part ``c`` is child ``c``, and the last part,
``n_children``, holds the rows with any other bin (a missing value), which stay
at the node. The sort is a counting sort over chunks of rows
(``chunks.node_chunks``, as ``partitioning.apply_splits``): each chunk counts
its rows per part, the counts give each chunk's first position per part (after
the node's rows of lower parts, then after the part's rows of the node's
earlier chunks), each chunk writes its rows there in ``scratch`` and the
node's range is copied back.

``c45_split_gains`` evaluates C4.5's splits (``common.c45_split_gain``): per
(node, feature), the information gain, the gain ratio and, for a numeric
feature, the threshold bin of the largest gain.
"""

import math

import numpy as np
from numba import njit, prange

from ..common import NO_SPLIT, c45_split_gain, multiway_gain
from .chunks import chunk_range, node_chunks, rows_per_chunk


@njit(parallel=True, cache=True)
def multiway_gains(
    hist, hist_rows, totals, feature_mask, n_bins_non_missing, missing_bin, criterion, inv_scales, regularization,
    min_samples_leaf, min_weight_leaf, out_gain,
):
    """Gain of the multiway split of every node on every feature (``common.multiway_gain``).

    Parameters
    ----------
    hist : ndarray of shape (n_hist, n_features, n_bins, n_slots), dtype int64
    hist_rows : ndarray of shape (n_nodes,), dtype int64
        The histogram of each node: ``hist[hist_rows[node]]``.
    totals : ndarray of shape (n_nodes, n_slots), dtype int64
    feature_mask : ndarray of shape (n_nodes, n_features), dtype bool
        The (node, feature) pairs to evaluate; the others get ``-inf``.
    n_bins_non_missing : ndarray of shape (n_features,), dtype int32
    missing_bin, criterion : int
    inv_scales : ndarray of shape (n_slots,), dtype float64
    regularization : tuple of 2 float64
    min_samples_leaf : int
    min_weight_leaf : ndarray of shape (n_nodes,), dtype float64
    out_gain : ndarray of shape (n_nodes, n_features), dtype float64
        ``-inf`` where the split is not allowed.
    """
    n_nodes, n_features = feature_mask.shape
    for task in prange(n_nodes * n_features):
        node = task // n_features
        feature_idx = task % n_features
        gain = -math.inf
        if feature_mask[node, feature_idx]:
            gain = multiway_gain(
                criterion, totals[node], hist[hist_rows[node], feature_idx], n_bins_non_missing[feature_idx],
                missing_bin, inv_scales, regularization, min_samples_leaf, min_weight_leaf[node],
            )
        out_gain[node, feature_idx] = gain


@njit(parallel=True, cache=True)
def c45_split_gains(
    hist, hist_rows, totals, feature_mask, is_categorical, n_bins_non_missing, missing_bin, inv_scales, min_objects,
    work, out_gain, out_gain_ratio, out_bin,
):
    """C4.5's split of every node on every feature (``common.c45_split_gain``).

    Parameters
    ----------
    hist : ndarray of shape (n_hist, n_features, n_bins, n_slots), dtype int64
    hist_rows : ndarray of shape (n_nodes,), dtype int64
    totals : ndarray of shape (n_nodes, n_slots), dtype int64
    feature_mask : ndarray of shape (n_nodes, n_features), dtype bool
        The (node, feature) pairs to evaluate; the others get ``-inf``.
    is_categorical : ndarray of shape (n_features,), dtype bool
    n_bins_non_missing : ndarray of shape (n_features,), dtype int32
    missing_bin : int
    inv_scales : ndarray of shape (n_slots,), dtype float64
    min_objects : float
    work : ndarray of shape (n_nodes * n_features, 2, n_slots), dtype int64
        Scratch, a row per (node, feature).
    out_gain, out_gain_ratio : ndarray of shape (n_nodes, n_features), dtype float64
        ``-inf`` and 0 where no split is valid.
    out_bin : ndarray of shape (n_nodes, n_features), dtype int32
        The threshold bin of a numeric split, else ``NO_SPLIT``.
    """
    n_nodes, n_features = feature_mask.shape
    for task in prange(n_nodes * n_features):
        node = task // n_features
        feature_idx = task % n_features
        gain, gain_ratio, bin_idx = -math.inf, 0.0, NO_SPLIT
        if feature_mask[node, feature_idx]:
            gain, gain_ratio, bin_idx = c45_split_gain(
                totals[node], hist[hist_rows[node], feature_idx], is_categorical[feature_idx],
                n_bins_non_missing[feature_idx], missing_bin, inv_scales, min_objects, work[task],
            )
        out_gain[node, feature_idx] = gain
        out_gain_ratio[node, feature_idx] = gain_ratio
        out_bin[node, feature_idx] = bin_idx


def apply_multiway_splits(
    X_binned, sample_indices, scratch, node_start, node_stop, split_feature, n_children, out_part_counts
):
    """Sort ``sample_indices[node_start:node_stop]`` of every split node stably by part (see the module docstring).

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype uint8 (the backends': Fortran order)
    sample_indices, scratch : ndarray of shape (n_entries,), dtype int32
        ``scratch`` is working memory of the same size.
    node_start, node_stop : ndarray of shape (n_nodes,), dtype int64
    split_feature : ndarray of shape (n_nodes,), dtype int32
    n_children : ndarray of shape (n_nodes,), dtype int64
        Children of each node: a row with bin ``b`` goes to part ``min(b, n_children)``.
    out_part_counts : ndarray of shape (n_nodes, n_parts), dtype int64
        Rows of each part of each node (zero beyond ``n_children``), ``n_parts >= max(n_children) + 1``.
    """
    _apply_multiway_splits(
        X_binned, sample_indices, scratch, node_start, node_stop, split_feature, n_children, out_part_counts,
        rows_per_chunk(node_start, node_stop),
    )


@njit(parallel=True, cache=True)
def _apply_multiway_splits(
    X_binned, sample_indices, scratch, node_start, node_stop, split_feature, n_children, out_part_counts, chunk_rows,
):
    """``apply_multiway_splits`` with tasks of at most ``chunk_rows`` rows."""
    first_chunk, chunk_node = node_chunks(node_start, node_stop, chunk_rows)
    n_chunks = chunk_node.shape[0]
    # A chunk's rows per part, then (after the scan) the position of its next row of each part.
    chunk_next = np.zeros((n_chunks, out_part_counts.shape[1]), dtype=np.int64)
    for chunk in prange(n_chunks):
        node = chunk_node[chunk]
        start, stop = chunk_range(chunk, node, first_chunk, node_start, node_stop, chunk_rows)
        column = X_binned[:, split_feature[node]]
        for position in range(start, stop):
            chunk_next[chunk, min(np.int64(column[sample_indices[position]]), n_children[node])] += 1
    for node in prange(node_start.shape[0]):
        position = node_start[node]
        for part in range(out_part_counts.shape[1]):
            first_position = position
            for chunk in range(first_chunk[node], first_chunk[node + 1]):
                n_rows = chunk_next[chunk, part]
                chunk_next[chunk, part] = position
                position += n_rows
            out_part_counts[node, part] = position - first_position
    for chunk in prange(n_chunks):
        node = chunk_node[chunk]
        start, stop = chunk_range(chunk, node, first_chunk, node_start, node_stop, chunk_rows)
        column = X_binned[:, split_feature[node]]
        for position in range(start, stop):
            row = sample_indices[position]
            part = min(np.int64(column[row]), n_children[node])
            scratch[chunk_next[chunk, part]] = row
            chunk_next[chunk, part] += 1
    for chunk in prange(n_chunks):
        start, stop = chunk_range(chunk, chunk_node[chunk], first_chunk, node_start, node_stop, chunk_rows)
        sample_indices[start:stop] = scratch[start:stop]
