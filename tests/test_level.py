"""The per-node bookkeeping of gpuforest.level against numpy expressions of the same rules."""

import numpy as np
import pytest

from gpuforest.kernels.common import NO_SPLIT
from gpuforest.level import (
    EPSILON, allowed_splits, histogram_plan, number_children, split_children, stopping_rules,
)


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
