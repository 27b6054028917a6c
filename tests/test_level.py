"""The per-node bookkeeping of gpuforest.level against numpy expressions of the same rules."""

import numpy as np
import pytest

from gpuforest.kernels.common import NO_SPLIT
from gpuforest.level import (
    EPSILON, allowed_splits, histogram_plan, number_children, split_children, stopping_rules, tree_node_arrays,
)
from gpuforest.tree import CATEGORICAL, NUMERIC, TREE_LEAF, TREE_UNDEFINED


@pytest.mark.parametrize("stops_when_pure", [True, False])
def test_stopping_rules(stops_when_pure):
    rng = np.random.default_rng(0)
    n_nodes, n_trees = 200, 3
    count = rng.integers(0, 60, n_nodes)
    depth = rng.integers(0, 6, n_nodes)
    weight = rng.uniform(0, 30, n_nodes)
    impurity = np.where(rng.random(n_nodes) < 0.2, 0.0, rng.random(n_nodes))
    tree = rng.integers(0, n_trees, n_nodes)
    min_weight_leaf = rng.uniform(0, 10, n_trees)
    splittable, needs_hist = stopping_rules(
        count, depth, weight, impurity, tree, min_weight_leaf, 4, 10, 3, stops_when_pure, 25,
    )
    expected = (
        (depth < 4) & (count >= 10) & (count >= 6) & (weight >= 2 * min_weight_leaf[tree])
        & ((impurity > EPSILON) | (not stops_when_pure))
    )
    assert 0 < expected.sum() < n_nodes
    np.testing.assert_array_equal(splittable, expected)
    np.testing.assert_array_equal(needs_hist, expected & (count >= 25))


def test_allowed_splits():
    rng = np.random.default_rng(1)
    n_nodes = 200
    splittable = rng.random(n_nodes) < 0.8
    feature = np.where(rng.random(n_nodes) < 0.2, NO_SPLIT, rng.integers(0, 5, n_nodes)).astype(np.int32)
    gain = rng.uniform(-0.1, 2.0, n_nodes)
    tree = rng.integers(0, 2, n_nodes)
    root_weight = np.array([4.0, 10.0])
    can_split = allowed_splits(splittable, feature, gain, tree, root_weight, 0.05, 0.1)
    expected = (
        splittable & (feature != NO_SPLIT) & (gain / root_weight[tree] + EPSILON >= 0.05) & (gain >= 0.1)
    )
    assert 0 < expected.sum() < n_nodes
    np.testing.assert_array_equal(can_split, expected)


def test_histogram_plan_roots_build_what_needs_a_histogram():
    needs_hist = np.array([True, False, True])
    build, derive, derive_from, derive_parent = histogram_plan(
        np.array([5, 1, 9]), needs_hist, np.empty(0, dtype=np.int64)
    )
    np.testing.assert_array_equal(build, [0, 2])
    assert derive.size == derive_from.size == derive_parent.size == 0


def test_histogram_plan_pairs():
    rng = np.random.default_rng(2)
    n_pairs = 60
    count = rng.integers(1, 30, 2 * n_pairs)
    count[n_pairs:2 * n_pairs:7] = count[0:n_pairs:7]  # ties: the left child is the larger
    needs_hist = rng.random(2 * n_pairs) < 0.7
    parent_rows = np.where(rng.random(n_pairs) < 0.3, -1, rng.permutation(n_pairs))
    build, derive, derive_from, derive_parent = histogram_plan(count, needs_hist, parent_rows)
    left, right = np.arange(n_pairs), np.arange(n_pairs, 2 * n_pairs)
    larger = np.where(count[left] >= count[right], left, right)
    smaller = np.where(count[left] >= count[right], right, left)
    subtract = (parent_rows >= 0) & needs_hist[larger]
    expected_build = needs_hist.copy()
    expected_build[larger[subtract]] = False
    expected_build[smaller[subtract]] = True
    assert 0 < subtract.sum() < n_pairs
    np.testing.assert_array_equal(build, np.flatnonzero(expected_build))
    np.testing.assert_array_equal(derive, larger[subtract])
    np.testing.assert_array_equal(derive_from, smaller[subtract])
    np.testing.assert_array_equal(derive_parent, parent_rows[subtract])


def test_split_children():
    rng = np.random.default_rng(3)
    n_split, n_slots = 7, 3
    start = np.cumsum(rng.integers(5, 20, n_split))
    stop = start + rng.integers(2, 30, n_split)
    totals = rng.integers(0, 1000, (n_split, n_slots))
    totals[:, -1] = stop - start
    left_totals = rng.integers(0, 500, (n_split, n_slots))
    left_totals[:, -1] = rng.integers(1, totals[:, -1])
    tree = rng.integers(0, 3, n_split)
    depth = rng.integers(0, 5, n_split)
    child_tree, child_depth, child_start, child_stop, child_totals = split_children(
        tree, depth, start, stop, totals, left_totals
    )
    middle = start + left_totals[:, -1]
    np.testing.assert_array_equal(child_tree, np.concatenate([tree, tree]))
    np.testing.assert_array_equal(child_depth, np.concatenate([depth + 1, depth + 1]))
    np.testing.assert_array_equal(child_start, np.concatenate([start, middle]))
    np.testing.assert_array_equal(child_stop, np.concatenate([middle, stop]))
    np.testing.assert_array_equal(child_totals, np.concatenate([left_totals, totals - left_totals]))


def test_number_children_in_order_within_each_tree():
    tree = np.array([2, 0, 2, 1, 0, 2])
    next_node_idx = np.array([1, 5, 3])
    left, right = number_children(tree, next_node_idx)
    # Tree 2's splits take 3, 5, 7; tree 0's 1, 3; tree 1's 5.
    np.testing.assert_array_equal(left, [3, 1, 5, 5, 3, 7])
    np.testing.assert_array_equal(right, left + 1)
    np.testing.assert_array_equal(next_node_idx, [5, 7, 9])


def test_tree_node_arrays_place_each_record_at_its_node():
    """Records of two trees interleaved, in no order (a tree of 7 nodes: root 0 split numerically into 1 and 2,
    node 2 categorically into 3 and 4, node 3 into 5 and 6), values of 2 outputs x 3 classes: each tree's
    arrays are its records placed at their node indices (numpy fancy assignment), defaults elsewhere."""
    rng = np.random.default_rng(4)
    n_outputs, n_values, node_count = 2, 3, 7
    record_tree = np.array([1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 1, 1, 1, 0])
    record_node = np.array([0, 4, 0, 2, 2, 1, 1, 3, 6, 3, 4, 5, 6, 5])
    n_records = record_tree.shape[0]
    nodes = (record_tree, record_node, rng.integers(0, 4, n_records), rng.integers(1, 99, n_records),
             rng.random((n_records, n_outputs * n_values)), rng.random(n_records), rng.random(n_records))
    split_tree = np.array([0, 1, 0, 0, 1])
    split_node = np.array([0, 0, 2, 3, 2])
    splits = (split_tree, split_node, np.array([4, 1, 2, 0, 3], dtype=np.int32), np.array([7, 9, 2, 5, 1],
              dtype=np.int32), np.array([True, False, True, False, False]), np.array([1, 1, 3, 5, 3]),
              np.array([2, 2, 4, 6, 4]), np.array([False, False, True, False, False]))
    threshold = np.where(splits[7], float(TREE_UNDEFINED), rng.normal(size=5))
    for tree_idx in (0, 1):
        arrays = tree_node_arrays(tree_idx, node_count, nodes, splits, threshold, n_outputs)
        mine, at = record_tree == tree_idx, split_node[split_tree == tree_idx]
        mine_split = split_tree == tree_idx
        expected_value = np.empty((node_count, n_outputs * n_values))
        expected_value[record_node[mine]] = nodes[4][mine]
        np.testing.assert_array_equal(arrays[6], expected_value.reshape(node_count, n_outputs, n_values))
        for position, column, fill in ((7, 5, 0.0), (8, 3, 0), (9, 6, 0.0), (10, 2, 0)):
            expected = np.full(node_count, fill)
            expected[record_node[mine]] = nodes[column][mine]
            np.testing.assert_array_equal(arrays[position], expected)
        for position, column, fill in ((0, 5, TREE_LEAF), (1, 6, TREE_LEAF), (2, 2, TREE_UNDEFINED), (5, 4, False)):
            expected = np.full(node_count, fill)
            expected[at] = splits[column][mine_split]
            np.testing.assert_array_equal(arrays[position], expected)
        expected_threshold = np.full(node_count, float(TREE_UNDEFINED))
        expected_threshold[at] = threshold[mine_split]
        np.testing.assert_array_equal(arrays[3], expected_threshold)
        categorical = splits[7][mine_split]
        expected_bin = np.full(node_count, TREE_UNDEFINED)
        expected_bin[at[~categorical]] = splits[3][mine_split][~categorical]
        np.testing.assert_array_equal(arrays[4], expected_bin)
        expected_type = np.full(node_count, NUMERIC)
        expected_type[at[categorical]] = CATEGORICAL
        np.testing.assert_array_equal(arrays[11], expected_type)
    assert (tree_node_arrays(0, node_count, nodes, splits, threshold, n_outputs)[11] == CATEGORICAL).sum() == 1
