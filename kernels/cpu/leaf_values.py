"""Node values, impurities and weights from the nodes' fixed-point totals; raw scores plus leaf values."""

import numpy as np
from numba import njit, prange

from ..common import node_values_at
from .prefetch import PREFETCH_DISTANCE, prefetch_row

RANGE_CHUNK = 16384  # positions per task of add_range_values
# Nodes below which ``level_node_values`` computes without threads: a node's values take tens of nanoseconds, a
# parallel loop's start and end microseconds (more on a busy machine, slow to give a second thread).
PARALLEL_MIN_NODES = 256


@njit(parallel=True, cache=True)
def node_values(criterion, totals, inv_scales, regularization, out_value, out_impurity, out_weight):
    """Value (prediction), impurity and weighted sample count of every node.

    Parameters
    ----------
    totals : ndarray of shape (n_nodes, n_slots), dtype int64
    inv_scales : ndarray of shape (n_slots,), dtype float64
    regularization : tuple of 2 float64
        ``(l2, l1)`` of ``newton`` (``kernels.common``); ignored by the others.
    out_value : ndarray of shape (n_nodes, n_values), dtype float64
        Class proportions for classification (output after output); ``sum(w y_k) / sum(w)`` of each
        output ``k`` for regression; the Newton step ``-T(G) / (H + l2)`` for ``newton``, with
        ``T = common.threshold_l1``.
    out_impurity, out_weight : ndarray of shape (n_nodes,), dtype float64
    """
    for node in prange(totals.shape[0]):
        node_values_at(criterion, totals, node, inv_scales, regularization, out_value, out_impurity, out_weight)


@njit(cache=True)
def level_node_values(criterion, totals, inv_scales, regularization, out_value, out_impurity, out_weight):
    """``node_values`` of a level's nodes: in parallel from ``PARALLEL_MIN_NODES`` nodes, else in one loop."""
    if totals.shape[0] >= PARALLEL_MIN_NODES:
        node_values(criterion, totals, inv_scales, regularization, out_value, out_impurity, out_weight)
        return
    for node in range(totals.shape[0]):
        node_values_at(criterion, totals, node, inv_scales, regularization, out_value, out_impurity, out_weight)


@njit(parallel=True, cache=True)
def add_leaf_values(raw, score_idx, rows, leaves, values):
    """``raw[rows[i], score_idx] += values[leaves[i]]`` for every ``i`` (boosting's update of the training scores).

    Parameters
    ----------
    raw : ndarray of shape (n_samples, n_scores), dtype float64
    score_idx : int
    rows : ndarray of shape (n_rows,), dtype int32
        Distinct rows (no two updates of one entry, so the order does not matter).
    leaves : ndarray of shape (n_rows,), dtype int64
        Each row's leaf: an index into ``values``.
    values : ndarray of shape (n_nodes,), dtype float64
    """
    n_rows = rows.shape[0]
    for i in prange(n_rows):
        # The rows of a leaf are scattered over raw: 3x faster with their entries prefetched
        # and unsigned indices (no negative-index wraparound).
        if i + PREFETCH_DISTANCE < n_rows:
            prefetch_row(raw, rows[i + PREFETCH_DISTANCE])
        raw[np.uint32(rows[i]), score_idx] += values[np.uint64(leaves[i])]


@njit(parallel=True, cache=True)
def add_range_values(raw, score_idx, rows, boundaries, values):
    """``raw[rows[p], score_idx] += values[r]`` for every position ``p`` of every range ``r``,
    ``[boundaries[r], boundaries[r + 1])`` (boosting's update when each leaf's rows are a range of the
    grower's positions: no leaf per row).

    Parameters
    ----------
    raw : ndarray of shape (n_samples, n_scores), dtype float64
    score_idx : int
    rows : ndarray of shape (n_entries,), dtype int32
        Distinct rows within the ranges.
    boundaries : ndarray of shape (n_ranges + 1,), dtype int64
        Increasing positions of ``rows``.
    values : ndarray of shape (n_ranges,), dtype float64
    """
    first, stop = boundaries[0], boundaries[-1]
    n_chunks = (stop - first + RANGE_CHUNK - 1) // RANGE_CHUNK
    for chunk in prange(n_chunks):
        chunk_start = first + chunk * RANGE_CHUNK
        chunk_stop = min(chunk_start + RANGE_CHUNK, stop)
        r = np.searchsorted(boundaries, chunk_start, side="right") - 1
        for p in range(chunk_start, chunk_stop):
            while p >= boundaries[r + 1]:
                r += 1
            if p + PREFETCH_DISTANCE < chunk_stop:
                prefetch_row(raw, rows[p + PREFETCH_DISTANCE])
            raw[np.uint32(rows[p]), score_idx] += values[r]

