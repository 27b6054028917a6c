"""Kernel tier, kernels/cpu/predict.py: leaves and raw scores of every split kind, the complete-tree layout; against
the naive reference of ``tests/reference.py``.

Inputs: the small random problems of ``tests/kernel_problems.py``.
"""

import numpy as np
import pytest

from gpuforest.tree import COMPLETE_MAX_DEPTH, MULTIWAY, pack_complete_forest, pack_forest, pack_node_info
from gpuforest.kernels.cpu import predict

try:
    from . import reference as ref
    from .kernel_problems import NO_BITSETS, as_tree, float32_edge_thresholds, mixed_forest, random_tree
except ImportError:
    import reference as ref
    from kernel_problems import NO_BITSETS, as_tree, float32_edge_thresholds, mixed_forest, random_tree


@pytest.mark.parametrize("seed", range(3))
def test_predict_leaves_matches_reference(seed):
    rng = np.random.default_rng(500 + seed)
    X = rng.normal(size=(120, 4)).astype(np.float32)
    X[:, 2] = rng.integers(0, 4, 120)
    X[rng.random(X.shape) < 0.15] = np.nan
    trees = [random_tree(rng, X, max_depth) for max_depth in (0, 1, 4, 6)]
    tree_offsets = np.cumsum([0] + [t[0].size for t in trees[:-1]]).astype(np.int64)
    feature, threshold, missing_left, left, right = (np.concatenate(column) for column in zip(*trees))
    out = np.full((X.shape[0], len(trees)), -5, dtype=np.int32)
    predict.predict_leaves(X, tree_offsets, threshold, pack_node_info(feature, missing_left, left), NO_BITSETS, out)
    expected = ref.predict_leaves(X, tree_offsets, feature, threshold, missing_left, left, right)
    np.testing.assert_array_equal(out, expected)
    assert np.all(out[:, 0] == 0)  # a single-leaf tree
    assert np.unique(out[:, 3]).size > 2


@pytest.mark.parametrize("n_scores", [1, 2])
def test_predict_raw_adds_leaf_values_in_tree_order(n_scores):
    rng = np.random.default_rng(510)
    X = rng.normal(size=(120, 4)).astype(np.float32)
    X[rng.random(X.shape) < 0.15] = np.nan
    trees = [random_tree(rng, X, max_depth) for max_depth in (0, 1, 4, 6)]
    tree_offsets = np.cumsum([0] + [t[0].size for t in trees[:-1]]).astype(np.int64)
    feature, threshold, missing_left, left, right = (np.concatenate(column) for column in zip(*trees))
    leaf_value = rng.normal(size=feature.size)
    baseline = rng.normal(size=n_scores)
    out = np.tile(baseline, (X.shape[0], 1))
    node_info = pack_node_info(feature, missing_left, left)
    predict.predict_raw(X, tree_offsets, threshold, node_info, NO_BITSETS, leaf_value, out)
    # One tree after another, as boosting adds them.
    expected = ref.predict_raw(X, tree_offsets, feature, threshold, missing_left, left, right, leaf_value, baseline)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("seed", range(2))
def test_predict_leaves_and_raw_route_every_split_kind(seed):
    """``pack_forest`` + ``predict_leaves`` / ``predict_raw`` against the naive router, on trees of numeric,
    categorical and multiway splits and rows with codes, NaN and values that are no code."""
    rng = np.random.default_rng(515 + seed)
    X, trees = mixed_forest(rng, 200)
    tree_offsets, split_value, node_info, category_bitset, value, tree_node = pack_forest(trees)
    out = np.full((X.shape[0], len(trees)), -5, dtype=np.int32)
    predict.predict_leaves(X, tree_offsets, split_value, node_info, category_bitset, out)
    leaves = tree_node[tree_offsets + out]
    expected = np.column_stack([ref.apply_tree(tree, X) for tree in trees])
    np.testing.assert_array_equal(leaves, expected)
    stopped = np.concatenate([tree.split_type[expected[:, t]] for t, tree in enumerate(trees)])
    assert np.any(stopped == MULTIWAY)  # some rows stop at a multiway node
    raw = np.tile([0.5, -1.0], (X.shape[0], 1))
    leaf_value = np.ascontiguousarray(value[:, 0])
    predict.predict_raw(X, tree_offsets, split_value, node_info, category_bitset, leaf_value, raw)
    expected_raw = np.tile([0.5, -1.0], (X.shape[0], 1))
    for t, tree in enumerate(trees):  # in tree order, as the kernel adds them
        expected_raw[:, t % 2] += tree.value[expected[:, t], 0, 0]
    np.testing.assert_array_equal(raw, expected_raw)


@pytest.mark.parametrize("n_scores", [1, 3])
def test_predict_raw_complete_matches_the_node_reference(n_scores):
    """``pack_complete_forest`` + ``predict_raw_complete`` against the naive walk of the node arrays.

    Three blocks of rows and a tail of 3 (not a multiple of ``LANES``), NaN only in the first
    block (both paths of the kernel), a single-leaf tree, leaves at many depths (padding),
    thresholds between two float32 values.
    """
    rng = np.random.default_rng(530)
    n_samples = 2 * predict.COMPLETE_ROWS_PER_BLOCK + 3
    X = rng.normal(size=(n_samples, 5)).astype(np.float32)
    X[:, 2] = rng.integers(0, 4, n_samples)
    nan_rows = np.arange(predict.COMPLETE_ROWS_PER_BLOCK)
    X[nan_rows[:, None], np.arange(5)] = np.where(rng.random((nan_rows.size, 5)) < 0.2, np.nan, X[nan_rows])
    arrays = [random_tree(rng, X, max_depth) for max_depth in (0, 1, 4, 7, 3, 6)]
    arrays = [
        (feature, float32_edge_thresholds(rng, X, threshold, feature, left), missing_left, left, right)
        for feature, threshold, missing_left, left, right in arrays
    ]
    values = [rng.normal(size=a[0].size) for a in arrays]
    trees = [as_tree(a, v, X.shape[1]) for a, v in zip(arrays, values)]
    forest = pack_complete_forest(trees)
    assert forest.tree_depth.tolist() == [tree.max_depth for tree in trees]
    assert np.any(np.diff(np.concatenate([t.node_depth[t.children_left == ref.LEAF] for t in trees[2:4]])))
    baseline = rng.normal(size=n_scores)
    out = np.tile(baseline, (n_samples, 1))
    predict.predict_raw_complete(X, *forest, out)
    tree_offsets = np.cumsum([0] + [a[0].size for a in arrays[:-1]]).astype(np.int64)
    feature, threshold, missing_left, left, right = (np.concatenate(column) for column in zip(*arrays))
    expected = ref.predict_raw(
        X, tree_offsets, feature, threshold, missing_left, left, right, np.concatenate(values), baseline
    )
    np.testing.assert_array_equal(out, expected)
    first_block = predict.COMPLETE_ROWS_PER_BLOCK
    assert np.isnan(X[:first_block]).any() and not np.isnan(X[first_block:]).any()  # both paths taken


def test_pack_complete_forest_leaves_deep_trees_to_the_node_arrays():
    rng = np.random.default_rng(540)
    X = rng.normal(size=(50, 3)).astype(np.float32)
    arrays = [random_tree(rng, X, depth) for depth in (2, COMPLETE_MAX_DEPTH + 1)]
    trees = [as_tree(a, rng.normal(size=a[0].size), 3) for a in arrays]
    assert trees[1].max_depth == COMPLETE_MAX_DEPTH + 1
    assert pack_complete_forest(trees[:1]) is not None
    assert pack_complete_forest(trees) is None
