"""Apply splits: stable partition of each split node's rows into left, then right."""

from numba import njit, prange

from ..common import goes_left
from .prefetch import PREFETCH_DISTANCE, is_sparse, prefetch_row


@njit(parallel=True, cache=True)
def apply_splits(
    X_binned, sample_indices, scratch, node_start, node_stop, n_left, split_feature, split_bin,
    split_missing_left, missing_bin,
):
    """Partition ``sample_indices[node_start:node_stop]`` of every split node.

    Afterwards the left child owns ``[start, start + n_left)`` and the right
    child ``[start + n_left, stop)``; rows keep their relative order.

    Parameters
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype uint8, Fortran order
    sample_indices, scratch : ndarray of shape (n_entries,), dtype int32
        ``scratch`` is working memory of the same size.
    node_start, node_stop, n_left : ndarray of shape (n_nodes,), dtype int64
    split_feature, split_bin : ndarray of shape (n_nodes,), dtype int32
    split_missing_left : ndarray of shape (n_nodes,), dtype bool
    """
    for node in prange(node_start.shape[0]):
        start, stop, feature_idx = node_start[node], node_stop[node], split_feature[node]
        split = (start + n_left[node], feature_idx, split_bin[node], split_missing_left[node], missing_bin)
        # Scattered rows: their bins are prefetched (in a version of its own: the test slows dense nodes).
        if is_sparse(sample_indices, start, stop):
            _partition_node(X_binned, sample_indices, scratch, start, stop, *split, X_binned[:, feature_idx])
        else:
            _partition_node(X_binned, sample_indices, scratch, start, stop, *split, None)


@njit(cache=True)
def _partition_node(
    X_binned, sample_indices, scratch, start, stop, right_position, feature_idx, threshold_bin, missing_left,
    missing_bin, prefetch_column,
):
    """Partition one node's positions ``[start, stop)``: left from ``start``, right from ``right_position``.

    ``prefetch_column``: the split feature's column, to prefetch from; None: no prefetching.
    """
    left_position = start
    for position in range(start, stop):
        if prefetch_column is not None and position + PREFETCH_DISTANCE < stop:
            prefetch_row(prefetch_column, sample_indices[position + PREFETCH_DISTANCE])
        row = sample_indices[position]
        left = goes_left(X_binned[row, feature_idx], threshold_bin, missing_left, missing_bin)
        # A select, not a branch: which side a row goes to is unpredictable.
        scratch[left_position if left else right_position] = row
        left_position += left
        right_position += not left
    for position in range(start, stop):
        sample_indices[position] = scratch[position]
