"""Categorical splits in the split and partition kernels, against brute force.

A categorical feature's bins are its category codes; a split sends a subset of the
node's occupied categories left. The brute force here tries every subset of them (with
the missing values on either side) and computes each gain from ``tests/reference.py``'s
node costs. Where sorting the categories makes a prefix scan optimal (two classes:
Breiman et al. 1984, Theorem 4.5; regression: Fisher 1958; newton without
regularization), the kernels' best gain equals the brute force's; with more classes the
kernels try every subset of at most ``MAX_EXHAUSTIVE_CATEGORIES`` categories (the same
split as the brute force, ties included) and otherwise scan the order of the node's
majority class (written here with numpy's lexsort). Both split paths agree bit for bit
on the CPU; ``test_kernels_cuda_splitting.py`` holds the CUDA kernels (numba's simulator)
to the CPU's.
"""

import math

import numpy as np
import pytest

from gpuforest import statistics
from gpuforest.backend import split_constraints
from gpuforest.kernels.common import MAX_EXHAUSTIVE_CATEGORIES, NO_SPLIT
from gpuforest.kernels.cpu import partitioning, splitting
from gpuforest.kernels.cuda import partitioning as cuda_partitioning
from gpuforest.tree import CATEGORY_WORDS, MAX_CATEGORIES

try:
    from . import reference as ref
except ImportError:
    import reference as ref

MAX_BINS = 16
MISSING_BIN = MAX_BINS - 1


# --- problems ----------------------------------------------------------------------------------


def make_statistics(rng, criterion, n_samples, n_classes=2, l2=0.0, l1=0.0):
    """Fixed-point statistics of random targets and weights (continuous: no exact ties of gains)."""
    weight = rng.uniform(0.5, 2.0, n_samples)
    if criterion in ref.CLASSIFICATION:
        y = rng.integers(0, n_classes, n_samples)
        return statistics.classification_statistics(criterion, y, n_classes, weight)
    if criterion in ("squared_error", "poisson"):
        y = rng.gamma(2.0, 1.5, n_samples)
        return statistics.regression_statistics(criterion, y, weight)
    return statistics.newton_statistics(rng.normal(size=n_samples), rng.uniform(0.1, 1.0, n_samples), l2, l1)


def make_rows(rng, n_samples, n_categories, missing_rate=0.15):
    """One tree's rows, two features: 0 categorical (codes below ``n_categories``, some of them never
    used), 1 numeric; the nodes: the root and two sub-ranges."""
    X_binned = np.empty((n_samples, 2), dtype=np.uint8, order="F")
    used = np.sort(rng.choice(n_categories, max(2, n_categories - 2), replace=False))
    X_binned[:, 0] = rng.choice(used, n_samples)
    X_binned[:, 1] = rng.integers(0, MISSING_BIN, n_samples)
    X_binned[rng.random((n_samples, 2)) < missing_rate] = MISSING_BIN
    half = n_samples // 2
    return {
        "X_binned": X_binned,
        "sample_indices": rng.permutation(n_samples).astype(np.int32),
        "sample_counts": np.ones((1, n_samples), dtype=np.int32),
        "node_start": np.array([0, 0, half], dtype=np.int64),
        "node_stop": np.array([n_samples, half, n_samples], dtype=np.int64),
        "node_tree": np.zeros(3, dtype=np.int64),
        "n_bins_non_missing": np.array([n_categories, MISSING_BIN], dtype=np.int32),
    }


def node_totals(rows, stats):
    return ref.node_totals(
        rows["sample_indices"], rows["node_start"], rows["node_stop"], rows["node_tree"], rows["sample_counts"],
        stats.row_slot, stats.row_stats, stats.n_slots, stats.stats_stride,
    )


def run_cpu_kernels(rows, stats, masks, draws=None, min_samples_leaf=1, min_weight_leaf=None):
    """Both CPU split paths with feature 0 categorical; returns their outputs as two dicts."""
    n_nodes, n_slots = rows["node_start"].shape[0], stats.n_slots
    totals = node_totals(rows, stats)
    hist = ref.build_histograms(
        rows["X_binned"], rows["sample_indices"], rows["node_start"], rows["node_stop"], rows["node_tree"],
        rows["sample_counts"], stats.row_slot, stats.row_stats, MAX_BINS, n_slots, stats.stats_stride,
    )
    draws = np.empty((0, 2)) if draws is None else draws
    min_weight_leaf = np.zeros(n_nodes) if min_weight_leaf is None else min_weight_leaf
    categorical_features = np.array([0], dtype=np.int32)
    bin_values = ref.skewed_bin_values(masks.shape[1], MISSING_BIN + 1)
    common_args = (
        stats.criterion, stats.inv_scales, stats.regularization, min_samples_leaf, min_weight_leaf,
        *split_constraints(None, None, masks.shape),
    )

    def outputs():
        return {
            "gain": np.empty(n_nodes), "feature": np.empty(n_nodes, np.int32), "bin": np.empty(n_nodes, np.int32),
            "missing_left": np.empty(n_nodes, bool), "left_totals": np.empty((n_nodes, n_slots), np.int64),
            "next_bin": np.empty(n_nodes, np.int32), "categorical": np.empty(n_nodes, bool),
            "category_bitset": np.empty((n_nodes, CATEGORY_WORDS), np.uint32),
        }

    from_hist, from_rows = outputs(), outputs()
    splitting.find_best_splits_from_histograms(
        hist, np.arange(n_nodes), totals, masks, categorical_features, draws, bin_values, rows["n_bins_non_missing"],
        MISSING_BIN, *common_args, *from_hist.values(),
    )
    splitting.find_best_splits_from_rows(
        np.ascontiguousarray(rows["X_binned"]), rows["sample_indices"], rows["node_start"], rows["node_stop"],
        rows["node_tree"], rows["sample_counts"], stats.row_slot, stats.row_stats, stats.stats_stride, totals, masks,
        categorical_features, draws, bin_values, MISSING_BIN, *common_args, *from_rows.values(),
    )
    for name in from_hist:
        np.testing.assert_array_equal(from_hist[name], from_rows[name], err_msg=name)
    return from_hist, hist, totals


# --- the brute force -----------------------------------------------------------------------------


def subset_gain(criterion, left, parent, inv_scales, regularization, min_samples_leaf=1, min_weight_leaf=0.0):
    """Gain of sending ``left`` (int sums) left, from the reference's node costs; -inf if not allowed."""
    right = [int(p) - int(l) for p, l in zip(parent, left)]
    if left[-1] < min_samples_leaf or right[-1] < min_samples_leaf:
        return -math.inf
    stats = [ref.node_stats(criterion, side, inv_scales) for side in (parent, left, right)]
    if min(stats[1]["W"], stats[2]["W"]) < max(min_weight_leaf, 1e-300):
        return -math.inf
    if criterion == "poisson" and min(stats[1]["S"], stats[2]["S"]) <= 0:
        return -math.inf
    parent_cost, left_cost, right_cost = (ref.node_cost(criterion, s, regularization) for s in stats)
    return parent_cost - left_cost - right_cost


def subsets(feature_hist, candidates, step=1):
    """``(mask, missing_left, left sums)`` of each subset of ``candidates`` (bit ``i``: ``candidates[i]``) in
    increasing mask order, missing values right then left (when the node has any); ``step=2``: the subsets
    holding ``candidates[0]``, every split once."""
    missing = feature_hist[MISSING_BIN]
    for mask in range(1, 1 << len(candidates), step):
        chosen = [code for i, code in enumerate(candidates) if mask >> i & 1]
        left = feature_hist[chosen].sum(axis=0)
        yield mask, False, left
        if missing[-1] > 0:
            yield mask, True, left + missing


def occupied(feature_hist, n_categories):
    return [code for code in range(n_categories) if feature_hist[code, -1] > 0]


def bitset_codes(bitset):
    """The codes whose bit is set in one row of ``category_bitset``."""
    return [code for code in range(MAX_CATEGORIES) if bitset[code // 32] >> (code % 32) & 1]


def check_split_partition(result, node, feature_hist, totals, n_categories):
    """The bitset holds the chosen occupied categories and, when missing values go left, every category
    without rows; the left totals are those of the set plus the missing values when they go left."""
    codes = bitset_codes(result["category_bitset"][node])
    occupied_codes = occupied(feature_hist, n_categories)
    left_occupied = [code for code in codes if code in occupied_codes]
    missing_left = bool(result["missing_left"][node])
    expected_left = feature_hist[left_occupied].sum(axis=0) + (feature_hist[MISSING_BIN] if missing_left else 0)
    np.testing.assert_array_equal(result["left_totals"][node], expected_left)
    unoccupied = [code for code in range(MAX_CATEGORIES) if code not in occupied_codes]
    assert set(codes) - set(left_occupied) == (set(unoccupied) if missing_left else set())
    assert 0 < len(left_occupied) <= len(occupied_codes)
    if feature_hist[MISSING_BIN, -1] == 0:  # no missing values here: they follow the larger child
        assert missing_left == (2 * expected_left[-1] >= totals[node, -1])
    assert result["categorical"][node] and result["bin"][node] == NO_SPLIT and result["next_bin"][node] == NO_SPLIT


# --- the scan ------------------------------------------------------------------------------------

# Orderings under which a sorted scan is optimal: (criterion, newton's (l2, l1)).
OPTIMAL_ORDERINGS = [("gini", None), ("entropy", None), ("misclassification", None), ("squared_error", None),
                     ("newton", (0.0, 0.0))]


@pytest.mark.parametrize("criterion, regularization", OPTIMAL_ORDERINGS)
@pytest.mark.parametrize("seed", range(3))
def test_sorted_scan_finds_the_best_subset(criterion, regularization, seed):
    """Two classes, regression and newton: the best gain over every subset (brute force), from the scan
    of the sorted categories; the split's bitset and left totals describe one subset of that gain."""
    rng = np.random.default_rng(seed)
    n_categories = 10
    rows = make_rows(rng, 60, n_categories)
    stats = make_statistics(rng, criterion, 60, *(regularization or ()))
    masks = np.array([[True, False]] * 3)
    result, hist, totals = run_cpu_kernels(rows, stats, masks)
    for node in range(3):
        feature_hist = hist[node, 0]
        gains = [
            subset_gain(criterion, left, totals[node], stats.inv_scales, stats.regularization)
            for _, _, left in subsets(feature_hist, occupied(feature_hist, n_categories))
        ]
        best = max(gains)
        assert best > -math.inf and result["feature"][node] == 0
        assert result["gain"][node] == pytest.approx(best, rel=1e-9, abs=1e-12)
        check_split_partition(result, node, feature_hist, totals, n_categories)
        own_gain = subset_gain(
            criterion, result["left_totals"][node], totals[node], stats.inv_scales, stats.regularization
        )
        assert own_gain == pytest.approx(best, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_few_categories_of_many_classes_try_every_subset(criterion):
    """Three classes, at most MAX_EXHAUSTIVE_CATEGORIES categories: the brute force's split, the first of
    the largest gain in its order (the subsets holding the lowest category by increasing mask, missing
    values right then left), the best over every subset."""
    rng = np.random.default_rng(4)
    n_categories = MAX_EXHAUSTIVE_CATEGORIES + 2  # two codes unused: 8 occupied at most
    rows = make_rows(rng, 80, n_categories)
    stats = make_statistics(rng, criterion, 80, n_classes=3)
    masks = np.array([[True, False]] * 3)
    result, hist, totals = run_cpu_kernels(rows, stats, masks)
    for node in range(3):
        feature_hist = hist[node, 0]
        candidates = occupied(feature_hist, n_categories)
        assert len(candidates) <= MAX_EXHAUSTIVE_CATEGORIES
        scored = [
            (subset_gain(criterion, left, totals[node], stats.inv_scales, stats.regularization), mask, missing_left)
            for mask, missing_left, left in subsets(feature_hist, candidates, step=2)
        ]
        best = max(gain for gain, _, _ in scored)
        _, mask, _ = next(entry for entry in scored if entry[0] >= best - 1e-12 * abs(best))
        chosen = {code for i, code in enumerate(candidates) if mask >> i & 1}
        assert result["gain"][node] == pytest.approx(best, rel=1e-9)
        assert chosen == set(bitset_codes(result["category_bitset"][node])) & set(candidates)
        every_subset = max(
            subset_gain(criterion, left, totals[node], stats.inv_scales, stats.regularization)
            for _, _, left in subsets(feature_hist, candidates)
        )
        assert best == pytest.approx(every_subset, rel=1e-12)
        check_split_partition(result, node, feature_hist, totals, n_categories)


def test_many_categories_of_many_classes_scan_the_majority_class_order():
    """Three classes, more than MAX_EXHAUSTIVE_CATEGORIES categories: the best prefix of the categories
    ordered by the proportion of the node's majority class (ties by code), no better than the brute force."""
    rng = np.random.default_rng(5)
    n_categories = 13
    rows = make_rows(rng, 120, n_categories, missing_rate=0.1)
    stats = make_statistics(rng, "gini", 120, n_classes=3)
    masks = np.array([[True, False]] * 3)
    result, hist, totals = run_cpu_kernels(rows, stats, masks)
    for node in range(3):
        feature_hist = hist[node, 0]
        candidates = np.array(occupied(feature_hist, n_categories))
        assert len(candidates) > MAX_EXHAUSTIVE_CATEGORIES
        counts = feature_hist[candidates, :-1] * stats.inv_scales[:-1]
        majority = np.argmax(totals[node, :-1] * stats.inv_scales[:-1])
        ordered = candidates[np.lexsort((candidates, counts[:, majority] / counts.sum(axis=1)))]
        prefix_gains = [
            subset_gain("gini", left, totals[node], stats.inv_scales, stats.regularization)
            for k in range(1, len(ordered) + 1)
            for left in [feature_hist[ordered[:k]].sum(axis=0)] + (
                [feature_hist[ordered[:k]].sum(axis=0) + feature_hist[MISSING_BIN]]
                if feature_hist[MISSING_BIN, -1] else []
            )
        ]
        assert result["gain"][node] == pytest.approx(max(prefix_gains), rel=1e-9)
        check_split_partition(result, node, feature_hist, totals, n_categories)
        best_subset = max(
            subset_gain("gini", left, totals[node], stats.inv_scales, stats.regularization)
            for _, _, left in subsets(feature_hist, list(candidates))
        )
        assert result["gain"][node] <= best_subset * (1 + 1e-12)


def test_min_samples_leaf_and_min_weight_leaf_bound_the_children():
    rng = np.random.default_rng(6)
    rows = make_rows(rng, 60, 10)
    stats = make_statistics(rng, "squared_error", 60)
    masks = np.array([[True, False]] * 3)
    totals = node_totals(rows, stats)
    min_weight_leaf = 0.3 * totals[:, 0] * stats.inv_scales[0]
    result, hist, totals = run_cpu_kernels(rows, stats, masks, min_samples_leaf=8, min_weight_leaf=min_weight_leaf)
    for node in range(3):
        best = max(
            subset_gain("squared_error", left, totals[node], stats.inv_scales, stats.regularization, 8,
                        min_weight_leaf[node])
            for _, _, left in subsets(hist[node, 0], occupied(hist[node, 0], 10))
        )
        if best == -math.inf:
            assert result["feature"][node] == NO_SPLIT
            continue
        left, right = result["left_totals"][node], totals[node] - result["left_totals"][node]
        assert min(left[-1], right[-1]) >= 8
        assert min(left[0], right[0]) * stats.inv_scales[0] >= min_weight_leaf[node]
        # Bounded, the sorted scan need not find the best subset, but never beats it.
        assert result["gain"][node] <= best * (1 + 1e-12)


def test_random_thresholds_take_one_prefix_of_the_sorted_categories():
    """Extra trees: the ``1 + min(int(u * (m - 1)), m - 2)`` first of the m sorted categories, missing
    values on the better side."""
    rng = np.random.default_rng(7)
    n_categories = 10
    rows = make_rows(rng, 60, n_categories)
    stats = make_statistics(rng, "gini", 60)
    masks = np.array([[True, False]] * 3)
    draws = rng.random((3, 2))
    result, hist, totals = run_cpu_kernels(rows, stats, masks, draws=draws)
    for node in range(3):
        feature_hist = hist[node, 0]
        candidates = np.array(occupied(feature_hist, n_categories))
        counts = feature_hist[candidates, :-1] * stats.inv_scales[:-1]
        ordered = candidates[np.lexsort((candidates, counts[:, 1] / counts.sum(axis=1)))]
        m = len(ordered)
        n_left = 1 + min(int(draws[node, 0] * (m - 1)), m - 2)
        left = feature_hist[ordered[:n_left]].sum(axis=0)
        gains = [subset_gain("gini", left, totals[node], stats.inv_scales, stats.regularization)]
        if feature_hist[MISSING_BIN, -1]:
            gains.append(subset_gain("gini", left + feature_hist[MISSING_BIN], totals[node], stats.inv_scales,
                                     stats.regularization))
        assert result["gain"][node] == pytest.approx(max(gains), rel=1e-9)
        assert set(bitset_codes(result["category_bitset"][node])) & set(candidates) == set(ordered[:n_left])


def test_numeric_and_categorical_features_compete():
    """With both features searched, each node takes the better of the two, as each alone would give it."""
    rng = np.random.default_rng(8)
    rows = make_rows(rng, 60, 10)
    stats = make_statistics(rng, "entropy", 60)
    both, _, _ = run_cpu_kernels(rows, stats, np.ones((3, 2), dtype=bool))
    alone = [run_cpu_kernels(rows, stats, np.array([[f == 0, f == 1]] * 3))[0] for f in (0, 1)]
    for node in range(3):
        winner = alone[int(alone[1]["gain"][node] > alone[0]["gain"][node])]
        for name in both:
            np.testing.assert_array_equal(both[name][node], winner[name][node], err_msg=name)
    assert set(both["feature"]) == {0, 1}  # the test is not vacuous


# --- partition by bitset ------------------------------------------------------------------------


def partition_problem(rng):
    """Four disjoint nodes of 90 rows, two categorical splits (missing values left in one, right in the
    other) and two numeric ones; returns the ``apply_splits`` arguments and the expected partition."""
    rows = make_rows(rng, 90, 12)
    X_binned, sample_indices = rows["X_binned"], rows["sample_indices"]
    node_start = np.array([0, 20, 45, 60], dtype=np.int64)
    node_stop = np.array([20, 45, 60, 90], dtype=np.int64)
    categorical = np.array([True, False, True, False])
    feature = np.where(categorical, 0, 1).astype(np.int32)
    split_bin = np.array([NO_SPLIT, 6, NO_SPLIT, 3], dtype=np.int32)
    missing_left = np.array([True, False, False, True])
    bitset = rng.integers(0, 2**32, (4, CATEGORY_WORDS), dtype=np.uint32) * categorical[:, None]
    expected = sample_indices.copy()
    n_left = np.empty(4, dtype=np.int64)
    for node in range(4):
        node_rows = sample_indices[node_start[node]:node_stop[node]]
        bins = X_binned[node_rows, feature[node]].astype(int)
        if categorical[node]:
            left = np.isin(bins, bitset_codes(bitset[node]))
        else:
            left = bins <= split_bin[node]
        left = np.where(bins == MISSING_BIN, missing_left[node], left)
        expected[node_start[node]:node_stop[node]] = np.concatenate([node_rows[left], node_rows[~left]])
        n_left[node] = left.sum()
    args = (
        X_binned, sample_indices.copy(), np.empty_like(sample_indices), node_start, node_stop, n_left, feature,
        split_bin, missing_left, MISSING_BIN, categorical, bitset,
    )
    return args, expected


def test_apply_splits_by_bitset():
    """A row goes left when its category's bit is set (missing values by missing_left); stable."""
    args, expected = partition_problem(np.random.default_rng(9))
    original = args[1].copy()
    partitioning.apply_splits(*args)
    np.testing.assert_array_equal(args[1], expected)
    assert expected.shape == original.shape and np.any(expected != original)  # rows moved


def test_apply_splits_by_bitset_on_cuda():
    args, expected = partition_problem(np.random.default_rng(10))
    cuda_partitioning.apply_splits(*args)
    np.testing.assert_array_equal(args[1], expected)
