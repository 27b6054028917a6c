"""Apply splits: stable partition of each split node's rows into left, then right.

In two parallel passes over chunks of rows (``chunks.node_chunks``, so that
the few large nodes near the root keep every core busy): each chunk writes
its left rows forwards and its right rows backwards into its own range of
``scratch``; then each chunk copies them to their final positions, after the
left (right) rows of its node's earlier chunks. A row goes left by
``common.goes_left`` at a numeric split, by ``common.category_goes_left`` (its
bin's bit in the node's bitset) at a categorical one.
"""

import numpy as np
from numba import njit, prange

from ..common import category_goes_left, goes_left
from .chunks import chunk_range, node_chunks, rows_per_chunk
from .prefetch import PREFETCH_DISTANCE, is_sparse, prefetch_row


def apply_splits(
    X_binned, sample_indices, scratch, node_start, node_stop, n_left, split_feature, split_bin,
    split_missing_left, missing_bin, split_categorical=None, split_category_bitset=None,
):
    """Partition ``sample_indices[node_start:node_stop]`` of every split node.

    Afterwards the left child owns ``[start, start + n_left)`` and the right
    child ``[start + n_left, stop)``; rows keep their relative order.

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype uint8 (the backends': Fortran order)
    sample_indices, scratch : ndarray of shape (n_entries,), dtype int32
        ``scratch`` is working memory of the same size.
    node_start, node_stop, n_left : ndarray of shape (n_nodes,), dtype int64
    split_feature, split_bin : ndarray of shape (n_nodes,), dtype int32
    split_missing_left : ndarray of shape (n_nodes,), dtype bool
    missing_bin : int
    split_categorical : ndarray of shape (n_nodes,), dtype bool, or None
        Categorical splits: a row goes left when its bin's bit is set in the
        node's row of ``split_category_bitset`` (n_nodes, n_words) uint32
        (``common.category_goes_left``), not by ``split_bin``. None (both):
        every split is numeric.
    """
    apply_splits_in_tasks(
        X_binned, sample_indices, scratch, node_start, node_stop, n_left, split_feature, split_bin,
        split_missing_left, missing_bin, split_categorical, split_category_bitset,
        rows_per_chunk(node_start, node_stop),
    )


@njit(cache=True)
def apply_splits_in_tasks(
    X_binned, sample_indices, scratch, node_start, node_stop, n_left, split_feature, split_bin,
    split_missing_left, missing_bin, split_categorical, split_category_bitset, chunk_rows,
):
    """``apply_splits`` with tasks of at most ``chunk_rows`` rows: in parallel, or, when the rows of all the
    nodes make one task, node after node without threads (a parallel loop's start and end would cost more than
    a small level's rows, and wait for a second thread that a busy machine is slow to give)."""
    if chunk_rows >= (node_stop - node_start).sum():
        for node in range(node_start.shape[0]):
            start, stop = node_start[node], node_stop[node]
            n_node_left = _partition_task(
                X_binned, sample_indices, scratch, start, stop, node, split_feature, split_bin, split_missing_left,
                missing_bin, split_categorical, split_category_bitset,
            )
            _copy_back(sample_indices, scratch, start, stop, n_node_left, start, start + n_node_left)
    else:
        _apply_splits(
            X_binned, sample_indices, scratch, node_start, node_stop, n_left, split_feature, split_bin,
            split_missing_left, missing_bin, split_categorical, split_category_bitset, chunk_rows,
        )


@njit(parallel=True, cache=True)
def _apply_splits(
    X_binned, sample_indices, scratch, node_start, node_stop, n_left, split_feature, split_bin,
    split_missing_left, missing_bin, split_categorical, split_category_bitset, chunk_rows,
):
    """``apply_splits`` with tasks of at most ``chunk_rows`` rows, in parallel."""
    first_chunk, chunk_node = node_chunks(node_start, node_stop, chunk_rows)
    n_chunks = chunk_node.shape[0]
    chunk_left = np.empty(n_chunks, dtype=np.int64)
    for chunk in prange(n_chunks):
        node = chunk_node[chunk]
        start, stop = chunk_range(chunk, node, first_chunk, node_start, node_stop, chunk_rows)
        chunk_left[chunk] = _partition_task(
            X_binned, sample_indices, scratch, start, stop, node, split_feature, split_bin, split_missing_left,
            missing_bin, split_categorical, split_category_bitset,
        )
    # Where each chunk's left and right rows go: after those of its node's earlier chunks.
    left_to = np.empty(n_chunks, dtype=np.int64)
    right_to = np.empty(n_chunks, dtype=np.int64)
    for node in range(node_start.shape[0]):
        left_position, right_position = node_start[node], node_start[node] + n_left[node]
        for chunk in range(first_chunk[node], first_chunk[node + 1]):
            start, stop = chunk_range(chunk, node, first_chunk, node_start, node_stop, chunk_rows)
            left_to[chunk], right_to[chunk] = left_position, right_position
            left_position += chunk_left[chunk]
            right_position += stop - start - chunk_left[chunk]
    for chunk in prange(n_chunks):
        start, stop = chunk_range(chunk, chunk_node[chunk], first_chunk, node_start, node_stop, chunk_rows)
        _copy_back(sample_indices, scratch, start, stop, chunk_left[chunk], left_to[chunk], right_to[chunk])


@njit(cache=True, inline="always")
def _partition_task(
    X_binned, sample_indices, scratch, start, stop, node, split_feature, split_bin, split_missing_left, missing_bin,
    split_categorical, split_category_bitset,
):
    """``_partition_rows`` of positions ``[start, stop)`` of ``node`` by its split; returns how many go left."""
    split = (split_bin[node], split_missing_left[node], missing_bin)
    column = X_binned[:, split_feature[node]]
    if split_categorical is not None and split_categorical[node]:
        return _partition_rows(column, sample_indices, scratch, start, stop, *split, split_category_bitset[node])
    return _partition_rows(column, sample_indices, scratch, start, stop, *split, None)


@njit(cache=True, inline="always")
def _copy_back(sample_indices, scratch, start, stop, n_chunk_left, left_to, right_to):
    """Copy a task's rows from ``scratch`` (``_partition_chunk``'s layout) to ``sample_indices``: its
    ``n_chunk_left`` left rows from ``left_to`` on, its right ones from ``right_to`` on, in order."""
    # Unsigned indices: numba leaves out the negative-index wraparound (1.4x faster).
    for k in range(n_chunk_left):
        sample_indices[np.uint64(left_to + k)] = scratch[np.uint64(start + k)]
    for k in range(stop - start - n_chunk_left):
        sample_indices[np.uint64(right_to + k)] = scratch[np.uint64(stop - 1 - k)]


@njit(cache=True)
def _partition_rows(
    column, sample_indices, scratch, start, stop, threshold_bin, missing_left, missing_bin, left_categories
):
    """``_partition_chunk``, with prefetching where the rows are scattered (in a version of its own: the
    test slows dense nodes)."""
    if is_sparse(sample_indices, start, stop):
        return _partition_chunk(
            column, sample_indices, scratch, start, stop, threshold_bin, missing_left, missing_bin, column,
            left_categories,
        )
    return _partition_chunk(
        column, sample_indices, scratch, start, stop, threshold_bin, missing_left, missing_bin, None, left_categories
    )


@njit(cache=True)
def _partition_chunk(
    column, sample_indices, scratch, start, stop, threshold_bin, missing_left, missing_bin, prefetch_column,
    left_categories,
):
    """Write the left rows of positions ``[start, stop)`` to ``scratch`` from ``start`` on, the right ones
    from ``stop - 1`` down; return how many go left.

    ``column``: the split feature's bins; ``prefetch_column``: the same, to prefetch from, or None: no prefetching;
    ``left_categories``: the node's row of the category bitset at a categorical split, None at a numeric one.
    """
    left_position = start
    right_position = stop - 1
    for position in range(start, stop):
        if prefetch_column is not None and position + PREFETCH_DISTANCE < stop:
            prefetch_row(prefetch_column, sample_indices[np.uint64(position + PREFETCH_DISTANCE)])
        row = sample_indices[np.uint64(position)]
        if left_categories is None:
            left = goes_left(column[np.uint32(row)], threshold_bin, missing_left, missing_bin)
        else:
            left = category_goes_left(column[np.uint32(row)], left_categories, missing_left, missing_bin)
        # A select, not a branch: which side a row goes to is unpredictable.
        scratch[np.uint64(left_position if left else right_position)] = row
        left_position += left
        right_position -= not left
    return left_position - start
