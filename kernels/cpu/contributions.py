"""Exact TreeSHAP over root-to-leaf paths: feature contributions and interaction values of every row.

Lundberg, Erion & Lee (2018), "Consistent individualized feature attribution for tree ensembles",
Algorithm 2, written per leaf as GPUTreeSHAP does (Mitchell, Frank & Holmes 2022, section 3): a leaf's
path keeps one element per distinct feature, with its zero fraction (the product of the path's
training cover ratios at that feature's splits, the same for every row) and its one fraction (1 when
the row takes the path's way at every split on that feature, else 0). EXTEND then gives the
permutation weights of the path's subsets and UNWIND takes one element back out
(``gpuforest.contributions`` builds the paths).
"""

import numpy as np
from numba import njit, prange

from ..common import split_child


@njit(cache=True, inline="always")
def _extend(weights, depth, zero_fraction, one_fraction):
    """EXTEND (Algorithm 2): add an element with these fractions to a path of ``depth`` elements whose
    subset weights are ``weights[:depth]``; the new weights are ``weights[:depth + 1]``."""
    weights[depth] = 1.0 if depth == 0 else 0.0
    for i in range(depth - 1, -1, -1):
        weights[i + 1] += one_fraction * weights[i] * (i + 1) / (depth + 1)
        weights[i] = zero_fraction * weights[i] * (depth - i) / (depth + 1)


@njit(cache=True, inline="always")
def _unwound_sum(weights, depth, zero_fraction, one_fraction):
    """Sum of the weights of the path of ``depth + 1`` weights with the element of these fractions taken
    out (UNWIND of Algorithm 2 followed by the sum, as shap's ``unwound_path_sum``)."""
    total = 0.0
    next_one = weights[depth]
    for i in range(depth - 1, -1, -1):
        if one_fraction != 0.0:
            part = next_one * (depth + 1) / ((i + 1) * one_fraction)
            total += part
            next_one = weights[i] - part * zero_fraction * (depth - i) / (depth + 1)
        elif zero_fraction != 0.0:
            total += weights[i] / zero_fraction * (depth + 1) / (depth - i)
    return total


@njit(cache=True, inline="always")
def _one_fractions(X, row, path, split_start, split_node, split_rank, split_element, element_start, split_value,
                   node_info, category_bitset, one):
    """``one[k]`` of each element ``k`` of path ``path``: 1.0 when row ``row`` takes the path's child at
    every split on the element's feature, else 0.0."""
    for k in range(element_start[path + 1] - element_start[path]):
        one[k] = 1.0
    for s in range(split_start[path], split_start[path + 1]):
        node = split_node[s]
        info = node_info[node]
        value = X[row, (info >> 3) & 0x1FFFFFFF]
        if split_child(value, info, split_value[node], category_bitset) != split_rank[s]:
            one[split_element[s]] = 0.0


@njit(parallel=True, cache=True)
def path_contributions(X, split_value, node_info, category_bitset, split_start, split_node, split_rank, split_element,
                       element_start, element_feature, element_zero, path_value, out):
    """SHAP values of every row: each leaf's path adds its share to the features on it.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), dtype float32
    split_value, node_info, category_bitset
        The trees' packed node arrays (``tree.pack_forest``).
    split_start : ndarray of shape (n_paths + 1,), dtype int64
        Path ``p``'s splits are ``split_start[p]`` to ``split_start[p + 1] - 1``.
    split_node, split_rank, split_element : ndarray of shape (n_splits,), dtype int64
        Each split's packed node, the rank of the path's child there, and the index of its feature's
        element within the path.
    element_start : ndarray of shape (n_paths + 1,), dtype int64
    element_feature : ndarray of shape (n_elements,), dtype int64
    element_zero : ndarray of shape (n_elements,), dtype float64
        Each path's distinct features and their zero fractions.
    path_value : ndarray of shape (n_paths, n_values), dtype float64
        The leaf's value (scaled as the ensemble adds it up).
    out : ndarray of shape (n_samples, n_features + 1, n_values), dtype float64
        Output, added to: the features' contributions (the last slot, the expected value, is left alone).
    """
    max_elements = np.max(element_start[1:] - element_start[:-1])
    for row in prange(X.shape[0]):
        one = np.empty(max_elements)
        weights = np.empty(max_elements + 1)
        for path in range(element_start.shape[0] - 1):
            first = element_start[path]
            n_elements = element_start[path + 1] - first
            _one_fractions(X, row, path, split_start, split_node, split_rank, split_element, element_start,
                           split_value, node_info, category_bitset, one)
            # Element 0 is the empty root (both fractions 1) that the subset weights grow from.
            _extend(weights, 0, 1.0, 1.0)
            for k in range(n_elements):
                _extend(weights, k + 1, element_zero[first + k], one[k])
            for k in range(n_elements):
                zero = element_zero[first + k]
                scale = _unwound_sum(weights, n_elements, zero, one[k]) * (one[k] - zero)
                for v in range(path_value.shape[1]):
                    out[row, element_feature[first + k], v] += scale * path_value[path, v]


@njit(parallel=True, cache=True)
def path_interactions(X, split_value, node_info, category_bitset, split_start, split_node, split_rank, split_element,
                      element_start, element_feature, element_zero, path_value, out):
    """SHAP interaction values off the diagonal of every row (Lundberg et al. 2018, section 4):
    ``phi_ij = (phi_j(i on) - phi_j(i off)) / 2``. Conditioning on feature ``i`` takes its element out of
    the path and scales the leaf by its one fraction (on) or zero fraction (off), so a path adds
    ``(one_i - zero_i) / 2`` times ``j``'s share in the path without ``i``.

    Parameters as ``path_contributions``; ``out`` of shape (n_samples, n_features + 1, n_features + 1, n_values),
    added to off the diagonal.
    """
    max_elements = np.max(element_start[1:] - element_start[:-1])
    for row in prange(X.shape[0]):
        one = np.empty(max_elements)
        weights = np.empty(max_elements + 1)
        for path in range(element_start.shape[0] - 1):
            first = element_start[path]
            n_elements = element_start[path + 1] - first
            _one_fractions(X, row, path, split_start, split_node, split_rank, split_element, element_start,
                           split_value, node_info, category_bitset, one)
            for i in range(n_elements):
                condition = 0.5 * (one[i] - element_zero[first + i])
                if condition == 0.0:
                    continue
                _extend(weights, 0, 1.0, 1.0)
                depth = 0
                for k in range(n_elements):
                    if k != i:
                        depth += 1
                        _extend(weights, depth, element_zero[first + k], one[k])
                for j in range(n_elements):
                    if j == i:
                        continue
                    zero = element_zero[first + j]
                    scale = condition * _unwound_sum(weights, depth, zero, one[j]) * (one[j] - zero)
                    for v in range(path_value.shape[1]):
                        out[row, element_feature[first + i], element_feature[first + j], v] += (
                            scale * path_value[path, v]
                        )
