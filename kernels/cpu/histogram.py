"""Histograms of fixed-point row statistics for a batch of nodes of many trees.

Row ``i`` of tree ``t`` adds ``sample_counts[t, i] * row_stats[j, s]`` to slot
``row_slot[j] + s`` and 1 to the last (row count) slot, with ``j = t *
stats_stride + i`` (``stats_stride``: 0 when the trees share the row
statistics, ``n_samples`` when each has its own). Sums are int64, so they do
not depend on the order of the additions.

Row-wise (XGBoost's ``hist``, LightGBM's multi-value bins): a task adds a
chunk of one node's rows to all the node's features, reading each row's bins
(one cache line of the C-ordered ``X_binned``) and statistics once. A node's
first chunk fills its histogram, the others partial ones that are added to it
afterwards; the chunks (``chunks.node_chunks``) keep every core busy on the
few large nodes near the root.
"""

import numpy as np
from numba import njit, prange

from ..common import accumulate_row
from .chunks import chunk_range, node_chunks, rows_per_chunk
from .prefetch import PREFETCH_DISTANCE, is_sparse, prefetch_row


def build_histograms(
    X_binned, sample_indices, node_start, node_stop, node_tree, feature_mask, sample_counts, row_slot, row_stats,
    stats_stride, hist, unit_counts=False, constant_hessian=None, count_bits=0, hist_rows=None,
):
    """Fill node ``k``'s row ``hist_rows[k]`` of ``hist`` for every (node, feature) pair of ``feature_mask``,
    in parallel over chunks of rows.

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype uint8, C order
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
    hist : ndarray of shape (n_hist, n_features, n_bins, n_slots), dtype int64
        Output; the nodes' rows are overwritten where ``feature_mask`` is True, unspecified elsewhere.
    unit_counts : bool
        Every entry of ``sample_counts`` is 1 (no bootstrap): they are not read
        (one cache miss less per row of a deep node).
    constant_hessian : int or None
        With (gradient, hessian) statistics and ``count_bits``, every row's
        hessian when all are equal and ``unit_counts``: the hessians are not
        added, the hessian slot is the row count times it (the same int64 sum,
        LightGBM's constant-hessian histograms).
    count_bits : int
        With (gradient, hessian) statistics, 0 or ``RowStatistics.count_bits``:
        the row count is added in the low ``count_bits`` bits of the hessian
        (with ``constant_hessian``: of the gradient) and taken apart at the end
        (one read-modify-write less per row and feature, into a histogram of
        two or one slots). The statistic's scale leaves those bits free and a
        tree's ``n_samples`` rows fit in them, so the sums are the same.
    hist_rows : ndarray of shape (n_nodes,), dtype int64, or None
        The distinct rows of ``hist`` the nodes fill (a workspace's free rows); None: ``0 .. n_nodes - 1``.
    """
    n_samples = sample_counts.shape[1]
    if count_bits and (row_stats.shape[1] != 2 or hist.shape[3] != 3 or 2**count_bits <= n_samples):
        raise ValueError(
            f"count_bits={count_bits} needs (gradient, hessian) statistics, 3 histogram slots and more than "
            f"n_samples={n_samples} values in the bits."
        )
    if constant_hessian is not None and not (count_bits and unit_counts):
        raise ValueError("constant_hessian needs count_bits and unit counts.")
    _build_histograms(
        X_binned, sample_indices, node_start, node_stop, node_tree, feature_mask, None if unit_counts else sample_counts,
        row_slot, row_stats, stats_stride, rows_per_chunk(node_start, node_stop), hist,
        default_rows(hist_rows, node_start.shape[0]), None if constant_hessian is None else np.int64(constant_hessian),
        count_bits,
    )


def default_rows(rows, n_nodes):
    """``rows``, or ``0 .. n_nodes - 1`` when None: the histogram rows of a batch of nodes."""
    return np.arange(n_nodes, dtype=np.int64) if rows is None else rows


@njit(parallel=True, cache=True)
def _build_histograms(
    X_binned, sample_indices, node_start, node_stop, node_tree, feature_mask, sample_counts, row_slot, row_stats,
    stats_stride, chunk_rows, hist, hist_rows, constant_hessian, count_bits,
):
    """``build_histograms`` with tasks of at most ``chunk_rows`` rows; ``sample_counts`` None: all 1."""
    n_nodes, n_features = node_start.shape[0], hist.shape[1]
    first_chunk, chunk_node = node_chunks(node_start, node_stop, chunk_rows)
    n_chunks = chunk_node.shape[0]
    # A node's first chunk fills hist[hist_rows[node]], any other chunk c partial[extra_chunk[c]].
    extra_chunk = np.arange(n_chunks) - chunk_node - 1
    partial = np.empty((n_chunks - n_nodes,) + hist.shape[1:], dtype=np.int64)
    for chunk in prange(n_chunks):
        node = chunk_node[chunk]
        features = np.flatnonzero(feature_mask[node])
        target = hist[hist_rows[node]] if chunk == first_chunk[node] else partial[extra_chunk[chunk]]
        start, stop = chunk_range(chunk, node, first_chunk, node_start, node_stop, chunk_rows)
        counts = None if sample_counts is None else sample_counts[node_tree[node]]
        _add_rows(
            target, features, X_binned, sample_indices, start, stop, counts, node_tree[node] * stats_stride, row_slot,
            row_stats, constant_hessian, count_bits,
        )
    if n_chunks == n_nodes:
        return
    for task in prange(n_nodes * n_features):
        node = task // n_features
        feature_idx = task % n_features
        if feature_mask[node, feature_idx]:
            for chunk in range(first_chunk[node] + 1, first_chunk[node + 1]):
                _add_into(hist[hist_rows[node], feature_idx], partial[extra_chunk[chunk], feature_idx])


@njit(cache=True, inline="always")
def _add_into(target, source):
    """``target += source`` of two (n_bins, n_slots) histograms, in loops (an array expression allocates)."""
    for bin_idx in range(target.shape[0]):
        for slot in range(target.shape[1]):
            target[bin_idx, slot] += source[bin_idx, slot]


@njit(cache=True)
def _add_rows(
    node_hist, features, X_binned, sample_indices, start, stop, counts, stats_base, row_slot, row_stats,
    constant_hessian, count_bits,
):
    """Set ``node_hist`` (n_features, n_bins, n_slots) for ``features`` to the sums of the rows at positions
    ``[start, stop)``.

    ``counts``: each row's multiplicity, or None for 1 (numba compiles a
    version without the reads). ``constant_hessian``, ``count_bits``: see ``build_histograms``.
    """
    args = (X_binned, sample_indices, start, stop, counts, stats_base)
    all_features = features.shape[0] == X_binned.shape[1]
    if count_bits:
        if all_features:
            _add_rows_packed(node_hist, None, *args, row_stats, constant_hessian, count_bits)
        else:
            _add_rows_packed(node_hist, features, *args, row_stats, constant_hessian, count_bits)
        return
    # The packed path writes its sums; these add them.
    for feature_idx in features:
        node_hist[feature_idx] = 0
    if all_features:
        _add_rows_of(node_hist, None, *args, row_slot, row_stats)
    else:
        _add_rows_of(node_hist, features, *args, row_slot, row_stats)


@njit(cache=True)
def _add_rows_of(node_hist, features, X_binned, sample_indices, start, stop, counts, stats_base, row_slot, row_stats):
    """``_add_rows`` for ``features``, or every feature when None (a counted loop: 1.5x faster).

    One statistic (class weights) and two (gradient, hessian) have loops of
    their own: a loop over a fixed number of statistics runs 2.5x faster
    than one whose length numba only knows at run time.
    """
    n_slots = node_hist.shape[2]
    count_slot = n_slots - 1
    n_row_stats = row_stats.shape[1]
    n_loop = X_binned.shape[1] if features is None else features.shape[0]
    sparse = is_sparse(sample_indices, start, stop)
    if n_row_stats == 1:
        for position in range(start, stop):
            if sparse and position + PREFETCH_DISTANCE < stop:
                prefetch_row(X_binned, sample_indices[position + PREFETCH_DISTANCE])
                prefetch_row(row_stats, stats_base + sample_indices[position + PREFETCH_DISTANCE])
            row = sample_indices[position]
            first_slot = row_slot[stats_base + row]
            weight = _multiplicity(counts, row) * row_stats[stats_base + row, 0]
            for k in range(n_loop):
                feature_idx = k if features is None else features[k]
                bin_idx = X_binned[row, feature_idx]
                node_hist[feature_idx, bin_idx, first_slot] += weight
                node_hist[feature_idx, bin_idx, count_slot] += 1
    elif n_row_stats == 2 and n_slots == 3:
        # (gradient, hessian, count): the slots are constants (row_slot can only be 0).
        for position in range(start, stop):
            if sparse and position + PREFETCH_DISTANCE < stop:
                prefetch_row(X_binned, sample_indices[position + PREFETCH_DISTANCE])
                prefetch_row(row_stats, stats_base + sample_indices[position + PREFETCH_DISTANCE])
            row = sample_indices[position]
            gradient = _multiplicity(counts, row) * row_stats[stats_base + row, 0]
            hessian = _multiplicity(counts, row) * row_stats[stats_base + row, 1]
            for k in range(n_loop):
                feature_idx = k if features is None else features[k]
                bin_idx = X_binned[row, feature_idx]
                node_hist[feature_idx, bin_idx, 0] += gradient
                node_hist[feature_idx, bin_idx, 1] += hessian
                node_hist[feature_idx, bin_idx, 2] += 1
    else:
        for position in range(start, stop):
            row = sample_indices[position]
            first_slot = row_slot[stats_base + row]
            multiplicity = _multiplicity(counts, row)
            for k in range(n_loop):
                feature_idx = k if features is None else features[k]
                bin_idx = X_binned[row, feature_idx]
                for stat_idx in range(n_row_stats):
                    node_hist[feature_idx, bin_idx, first_slot + stat_idx] += multiplicity * row_stats[stats_base + row, stat_idx]
                node_hist[feature_idx, bin_idx, count_slot] += 1


@njit(cache=True)
def _add_rows_packed(
    node_hist, features, X_binned, sample_indices, start, stop, counts, stats_base, row_stats, constant_hessian,
    count_bits,
):
    """``_add_rows`` of (gradient, hessian) statistics with the row count in the last added one's low bits.

    The rows go to a compact histogram of 2 slots (gradient, hessian << count_bits
    | count), 1 with ``constant_hessian`` (gradient << count_bits | count): on a
    1M-row fit's levels 1.3x (2 slots) and 1.6x (1 slot) faster than the 3
    slots' updates (fewer of them, a smaller histogram in the cache).
    """
    n_loop = X_binned.shape[1] if features is None else features.shape[0]
    n_packed = 2 if constant_hessian is None else 1
    packed = np.zeros((n_loop, node_hist.shape[1], n_packed), dtype=np.int64)
    sparse = is_sparse(sample_indices, start, stop)
    for position in range(start, stop):
        if sparse and position + PREFETCH_DISTANCE < stop:
            prefetch_row(X_binned, sample_indices[position + PREFETCH_DISTANCE])
            prefetch_row(row_stats, stats_base + sample_indices[position + PREFETCH_DISTANCE])
        # Unsigned indices: numba leaves out the negative-index wraparound.
        row = np.uint32(sample_indices[position])
        stats_row = np.uint64(stats_base + row)
        gradient = _multiplicity(counts, row) * row_stats[stats_row, 0]
        if constant_hessian is None:
            hessian_count = ((_multiplicity(counts, row) * row_stats[stats_row, 1]) << count_bits) + 1
            for k in range(n_loop):
                bin_idx = X_binned[row, k if features is None else features[k]]
                packed[k, bin_idx, 0] += gradient
                packed[k, bin_idx, 1] += hessian_count
        else:
            gradient_count = (gradient << count_bits) + 1
            for k in range(n_loop):
                packed[k, X_binned[row, k if features is None else features[k]], 0] += gradient_count
    # Two's complement: the low bits of (sum << count_bits) + count are the count, whatever the sum's sign.
    count_mask = (np.int64(1) << count_bits) - 1
    for k in range(n_loop):
        feature_hist = node_hist[k if features is None else features[k]]
        for bin_idx in range(feature_hist.shape[0]):
            last = packed[k, bin_idx, n_packed - 1]
            count = last & count_mask
            if constant_hessian is None:
                feature_hist[bin_idx, 0] = packed[k, bin_idx, 0]
                feature_hist[bin_idx, 1] = last >> count_bits
            else:
                feature_hist[bin_idx, 0] = last >> count_bits
                feature_hist[bin_idx, 1] = count * constant_hessian
            feature_hist[bin_idx, 2] = count


@njit(cache=True, inline="always")
def _multiplicity(counts, row):
    """How many times ``row`` is drawn: ``counts[row]``, 1 when ``counts`` is None."""
    return 1 if counts is None else counts[row]


def node_totals(
    sample_indices, node_start, node_stop, node_tree, sample_counts, row_slot, row_stats, stats_stride, totals,
    unit_counts=False,
):
    """Sum every node's rows into ``totals`` of shape (n_nodes, n_slots) (arguments as in ``build_histograms``).

    In parallel over the chunks of ``chunks.node_chunks`` (the roots are one node per tree).
    """
    _node_totals(
        sample_indices, node_start, node_stop, node_tree, None if unit_counts else sample_counts, row_slot, row_stats,
        stats_stride, rows_per_chunk(node_start, node_stop), totals,
    )


@njit(parallel=True, cache=True)
def _node_totals(
    sample_indices, node_start, node_stop, node_tree, sample_counts, row_slot, row_stats, stats_stride, chunk_rows,
    totals,
):
    """``node_totals`` with tasks of at most ``chunk_rows`` rows, summed per node afterwards (int64: order-free);
    ``sample_counts`` None: all 1."""
    n_nodes = totals.shape[0]
    first_chunk, chunk_node = node_chunks(node_start, node_stop, chunk_rows)
    chunk_totals = np.zeros((chunk_node.shape[0], totals.shape[1]), dtype=np.int64)
    for chunk in prange(chunk_node.shape[0]):
        node = chunk_node[chunk]
        counts = None if sample_counts is None else sample_counts[node_tree[node]]
        start, stop = chunk_range(chunk, node, first_chunk, node_start, node_stop, chunk_rows)
        stats_base = node_tree[node] * stats_stride
        _add_totals(chunk_totals[chunk], sample_indices, start, stop, counts, stats_base, row_slot, row_stats)
    for node in prange(n_nodes):
        totals[node] = 0
        for chunk in range(first_chunk[node], first_chunk[node + 1]):
            totals[node] += chunk_totals[chunk]


@njit(cache=True)
def _add_totals(target, sample_indices, start, stop, counts, stats_base, row_slot, row_stats):
    """Add the rows at positions ``[start, stop)`` into ``target`` (n_slots,); ``counts`` None: all 1.

    (gradient, hessian) statistics sum in registers (2.5x faster than ``accumulate_row``'s slot loop).
    """
    if row_stats.shape[1] == 2 and target.shape[0] == 3:
        gradient = 0
        hessian = 0
        for position in range(start, stop):
            row = sample_indices[position]
            multiplicity = _multiplicity(counts, row)
            gradient += multiplicity * row_stats[stats_base + row, 0]
            hessian += multiplicity * row_stats[stats_base + row, 1]
        target[0] += gradient
        target[1] += hessian
        target[2] += stop - start
    else:
        for position in range(start, stop):
            row = sample_indices[position]
            accumulate_row(target, stats_base + row, _multiplicity(counts, row), row_slot, row_stats)


def subtract_histograms(parent_hist, parent_rows, child_hist, child_rows, sibling_hist, sibling_rows=None):
    """``sibling_hist[sibling_rows[k]] = parent_hist[parent_rows[k]] - child_hist[child_rows[k]]`` (exact in int64).

    Parameters
    ----------
    parent_hist, child_hist : ndarray of shape (n_hist, n_features, n_bins, n_slots), dtype int64
    parent_rows, child_rows : ndarray of shape (n_siblings,), dtype int64
    sibling_hist : ndarray of shape (n_out, n_features, n_bins, n_slots), dtype int64
        Output; may be the array read, at other rows.
    sibling_rows : ndarray of shape (n_siblings,), dtype int64, or None
        The distinct rows of ``sibling_hist`` written; None: ``0 .. n_siblings - 1``.
    """
    _subtract_histograms(
        parent_hist, parent_rows, child_hist, child_rows, sibling_hist, default_rows(sibling_rows, parent_rows.shape[0])
    )


@njit(parallel=True, cache=True)
def _subtract_histograms(parent_hist, parent_rows, child_hist, child_rows, sibling_hist, sibling_rows):
    n_features = sibling_hist.shape[1]
    for task in prange(sibling_rows.shape[0] * n_features):
        sibling, feature_idx = task // n_features, task % n_features
        parent = parent_hist[parent_rows[sibling], feature_idx]
        child = child_hist[child_rows[sibling], feature_idx]
        target = sibling_hist[sibling_rows[sibling], feature_idx]
        for bin_idx in range(target.shape[0]):
            for slot in range(target.shape[1]):
                target[bin_idx, slot] = parent[bin_idx, slot] - child[bin_idx, slot]
