"""Exact TreeSHAP of every row over the trees' root-to-leaf paths: a row per thread
(``common.add_path_contributions`` and ``common.add_path_interactions``; the paths as
``gpuforest.contributions.TreePaths`` builds them)."""

import numpy as np
from numba import njit, prange

from ..common import add_path_contributions, add_path_interactions


@njit(parallel=True, cache=True)
def path_contributions(X, split_value, node_info, category_bitset, split_start, split_node, split_rank, split_element,
                       element_start, element_feature, element_zero, path_value, out):
    """Add the SHAP values of every row to ``out``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), dtype float32
    split_value, node_info, category_bitset
        The trees' packed node arrays (``tree.pack_forest``).
    split_start : ndarray of shape (n_paths + 1,), dtype int64
    split_node, split_rank, split_element : ndarray of shape (n_splits,), dtype int64
    element_start : ndarray of shape (n_paths + 1,), dtype int64
    element_feature : ndarray of shape (n_elements,), dtype int64
    element_zero : ndarray of shape (n_elements,), dtype float64
    path_value : ndarray of shape (n_paths, n_values), dtype float64
        The paths (see ``kernels.common``'s TreeSHAP section).
    out : ndarray of shape (n_samples, n_features + 1, n_values), dtype float64
        Added to; the last feature slot (the expected value) is left alone.
    """
    max_elements = np.max(element_start[1:] - element_start[:-1])
    for row in prange(X.shape[0]):
        add_path_contributions(
            X, row, split_value, node_info, category_bitset, split_start, split_node, split_rank, split_element,
            element_start, element_feature, element_zero, path_value, np.empty(max_elements),
            np.empty(max_elements + 1), out[row],
        )


@njit(parallel=True, cache=True)
def path_interactions(X, split_value, node_info, category_bitset, split_start, split_node, split_rank, split_element,
                      element_start, element_feature, element_zero, path_value, out):
    """Add the SHAP interaction values off the diagonal of every row to ``out`` (n_samples, n_features + 1,
    n_features + 1, n_values); the other parameters as ``path_contributions``."""
    max_elements = np.max(element_start[1:] - element_start[:-1])
    for row in prange(X.shape[0]):
        add_path_interactions(
            X, row, split_value, node_info, category_bitset, split_start, split_node, split_rank, split_element,
            element_start, element_feature, element_zero, path_value, np.empty(max_elements),
            np.empty(max_elements + 1), out[row],
        )
