"""Kernel tier, kernels/cpu/splitting.py: the best splits from histograms and from rows, and a brute force over every
candidate (every subset of a categorical feature's categories); against the naive reference of ``tests/reference.py``.

Inputs: the small random problems of ``tests/kernel_problems.py``.
"""

import math

import numpy as np
import pytest
from numba import njit

from gpuforest import statistics
from gpuforest.backend import split_constraints
from gpuforest.tree import MAX_CATEGORIES
from gpuforest.kernels.common import (
    FROM_ROWS, MAX_EXHAUSTIVE_CATEGORIES, NO_SPLIT, NOT_SEARCHED, parent_cost, scan_threshold,
)
from gpuforest.kernels.cpu import splitting

try:
    from . import reference as ref
    from .kernel_problems import (
        CATEGORY_MISSING_BIN, CRITERIA, bitset_codes, both_split_paths, categorical_rows, cpu_rows,
        find_best_splits, make_rows, make_statistics, reference_histograms, reference_totals, tree_statistics,
    )
except ImportError:
    import reference as ref
    from kernel_problems import (
        CATEGORY_MISSING_BIN, CRITERIA, bitset_codes, both_split_paths, categorical_rows, cpu_rows,
        find_best_splits, make_rows, make_statistics, reference_histograms, reference_totals, tree_statistics,
    )


def run_split_kernels(rows, stats, totals, masks, min_samples_leaf, min_weight_leaf, rng, draws=None):
    """The split search of the same nodes from their histograms and from their rows; returns the outputs of
    both as two dicts.

    ``draws`` (n_nodes, n_features) asks for random thresholds; ``None``, for the best ones.
    """
    n_nodes = totals.shape[0]
    if draws is None:
        draws = np.empty((0, masks.shape[1]))
    node_hist = reference_histograms(rows, stats)
    # Histograms at shuffled rows among unrelated ones, to check the hist_rows indirection.
    n_hist = n_nodes + 3
    hist = rng.integers(-(10**6), 10**6, (n_hist,) + node_hist.shape[1:])
    hist_rows = rng.permutation(n_hist)[:n_nodes].astype(np.int64)
    hist[hist_rows] = node_hist
    bin_values = ref.skewed_bin_values(masks.shape[1], rows["missing_bin"] + 1)
    return both_split_paths(
        splitting, hist, hist_rows, cpu_rows(rows), stats, totals, masks, np.empty(0, dtype=np.int32), draws,
        bin_values, rows["missing_bin"], min_samples_leaf, min_weight_leaf, *split_constraints(None, None, masks.shape),
    )


def reference_splits(rows, stats, criterion, totals, masks, min_samples_leaf, min_weight_leaf):
    expected = []
    n_samples = rows["X_binned"].shape[0]
    for node in range(totals.shape[0]):
        node_rows = ref.node_rows(rows["sample_indices"], rows["node_start"], rows["node_stop"], node)
        tree = rows["node_tree"][node]
        expected.append(
            ref.best_split(
                criterion, rows["X_binned"], node_rows,
                rows["sample_counts"][tree], *tree_statistics(stats, tree, n_samples), totals[node],
                masks[node], rows["n_bins_non_missing"], rows["missing_bin"], stats.inv_scales,
                stats.regularization, min_samples_leaf, min_weight_leaf[node],
            )
        )
    return expected


def assert_split_matches(result, expected, node, label):
    where = f"{label}, node {node}"
    assert result["feature"][node] == expected["feature"], where
    assert result["bin"][node] == expected["bin"], where
    assert bool(result["missing_left"][node]) == bool(expected["missing_left"]), where
    np.testing.assert_array_equal(result["left_totals"][node], expected["left_totals"], err_msg=where)
    assert result["next_bin"][node] == expected["next_bin"], where
    gain = result["gain"][node]
    if expected["feature"] == ref.NO_SPLIT:
        assert gain == -math.inf, where
    else:
        tolerance = 1e-9 * abs(expected["gain"]) + 1e-12 * expected["scale"]
        assert abs(gain - expected["gain"]) <= tolerance, (where, gain, expected["gain"])


SPLIT_SETTINGS = [
    # seed, min_samples_leaf, min_weight_leaf as a fraction of the node's weight
    (0, 1, 0.0),
    (1, 1, 0.0),
    (2, 3, 0.1),
    (3, 5, 0.25),
    (4, 2, 0.4),
]


@pytest.mark.parametrize("n_trees", [None, 2])  # statistics shared by the trees, or per tree
@pytest.mark.parametrize("criterion", CRITERIA)
@pytest.mark.parametrize("seed, min_samples_leaf, weight_fraction", SPLIT_SETTINGS)
def test_best_splits_match_brute_force(criterion, seed, min_samples_leaf, weight_fraction, n_trees):
    rng = np.random.default_rng(1000 * seed + CRITERIA.index(criterion))
    rows = make_rows(rng)
    stats = make_statistics(
        rng, criterion, rows["X_binned"].shape[0], l2_regularization=1.5 * (seed % 2),
        l1_regularization=0.5 * (seed % 3), n_trees=n_trees,
    )
    totals = reference_totals(rows, stats)
    n_nodes, n_features = totals.shape[0], rows["X_binned"].shape[1]
    masks = rng.random((n_nodes, n_features)) < 0.7
    masks[0] = True
    masks[-1] = False  # no feature at all: no split
    masks[1, 0] = False  # the feature that never misses is excluded
    weights = np.array([ref.node_stats(criterion, t, stats.inv_scales)["W"] for t in totals])
    min_weight_leaf = weight_fraction * weights

    from_hist, from_rows = run_split_kernels(rows, stats, totals, masks, min_samples_leaf, min_weight_leaf, rng)
    expected = reference_splits(rows, stats, criterion, totals, masks, min_samples_leaf, min_weight_leaf)

    for node in range(n_nodes):
        assert_split_matches(from_hist, expected[node], node, "from_histograms")
        assert_split_matches(from_rows, expected[node], node, "from_rows")
        if expected[node]["feature"] != ref.NO_SPLIT:
            assert masks[node, expected[node]["feature"]]
    # The two paths agree bit for bit.
    for key in from_hist:
        np.testing.assert_array_equal(from_hist[key], from_rows[key], err_msg=key)
    assert expected[-1]["feature"] == ref.NO_SPLIT
    if weight_fraction < 0.4:
        assert sum(e["feature"] != ref.NO_SPLIT for e in expected) >= 3  # the test is not vacuous


@pytest.mark.parametrize("criterion", CRITERIA)
@pytest.mark.parametrize("seed, min_samples_leaf", [(0, 1), (1, 2)])
def test_few_rows_over_many_bins_match_brute_force(criterion, seed, min_samples_leaf):
    """Nodes of at most ``SPARSE_MAX_ROWS`` rows over 255 bins: the row path scans their occupied bins only
    (``_compact_feature_hist``), and still finds the brute force's split, as the histogram path does."""
    rng = np.random.default_rng(500 + 10 * seed + CRITERIA.index(criterion))
    rows = make_rows(rng, n_samples=splitting.SPARSE_MAX_ROWS, max_bins=256)
    stats = make_statistics(rng, criterion, rows["X_binned"].shape[0], l2_regularization=1.0)
    totals = reference_totals(rows, stats)
    n_nodes, n_features = totals.shape[0], rows["X_binned"].shape[1]
    masks = np.ones((n_nodes, n_features), dtype=bool)
    min_weight_leaf = np.zeros(n_nodes)
    counts = totals[:, -1]
    spans = [np.ptp(rows["X_binned"][ref.node_rows(rows["sample_indices"], rows["node_start"], rows["node_stop"],
                                                   node), 0]) for node in range(n_nodes)]
    assert any(splitting.SPARSE_SPAN_RATIO * count < span for count, span in zip(counts, spans))  # compacted

    from_hist, from_rows = run_split_kernels(rows, stats, totals, masks, min_samples_leaf, min_weight_leaf, rng)
    expected = reference_splits(rows, stats, criterion, totals, masks, min_samples_leaf, min_weight_leaf)
    for node in range(n_nodes):
        assert_split_matches(from_rows, expected[node], node, "from_rows")
    for key in from_hist:
        np.testing.assert_array_equal(from_hist[key], from_rows[key], err_msg=key)
    assert sum(e["feature"] != ref.NO_SPLIT for e in expected) >= 3  # the test is not vacuous


def test_the_row_search_space_is_kept_and_grown():
    """``row_search_space`` gives back a space with room enough, else a larger one: at least twice the rows, as
    many blocks as either asks for, its feature histograms and bitsets of occupied bins zero."""
    X_binned = np.zeros((10, 3), dtype=np.uint8)
    space = splitting.row_search_space(None, 2, 5, 8, 3, X_binned, 2)
    assert space[1].shape == (2, 8, 3) and space[5].shape == (2, 3, 5) and space[7].shape == (2, 5, 2)
    assert space[4].shape == (2, splitting.OCCUPIED_WORDS) and not space[4].any()
    kept = splitting.row_search_space(space, 1, 5, 8, 3, X_binned, 2)
    assert all(np.shares_memory(array, kept_array) for array, kept_array in zip(space[1:], kept[1:]))
    grown = splitting.row_search_space(space, 1, 6, 8, 3, X_binned, 2)
    assert grown[1].shape == (2, 8, 3) and grown[5].shape == (2, 3, 10) and not grown[1].any()
    assert not grown[4].any()
    assert splitting.row_search_space(grown, 4, 3, 8, 3, X_binned, 2)[6].shape == (4, 10)


@pytest.mark.parametrize("criterion", ["gini", "squared_error", "newton"])
def test_a_row_search_space_serves_the_next_search_as_a_new_one(criterion, monkeypatch):
    """The row search leaves its space's feature histograms zero, so that a growth keeps one space for all its
    levels: searches of two problems in one space give the splits of searches each in a new one."""
    rng = np.random.default_rng(21 + CRITERIA.index(criterion))
    problems = []
    for n_samples in (96, 64):
        rows = cpu_rows(make_rows(rng, n_samples=n_samples))
        stats = make_statistics(rng, criterion, rows["X_binned"].shape[0])
        problems.append((rows, stats, reference_totals(rows, stats)))

    def search(rows, stats, totals):
        n_nodes, n_features = totals.shape[0], rows["X_binned"].shape[1]
        masks = np.ones((n_nodes, n_features), dtype=bool)
        return find_best_splits(
            splitting, np.zeros((0,) + (n_features, rows["missing_bin"] + 1, totals.shape[1]), dtype=np.int64),
            np.full(n_nodes, FROM_ROWS), rows, stats, totals, masks, np.empty(0, dtype=np.int32),
            np.empty((0, n_features)), ref.skewed_bin_values(n_features, rows["missing_bin"] + 1),
            rows["missing_bin"], 1, np.zeros(n_nodes), *split_constraints(None, None, masks.shape),
        )

    expected = [search(*problem) for problem in problems]
    kept = {}
    new_space = splitting.row_search_space

    def kept_space(space, *args):
        kept["space"] = new_space(kept.get("space"), *args)
        return kept["space"]

    monkeypatch.setattr(splitting, "row_search_space", kept_space)
    for problem, splits in zip(problems, expected):
        result = search(*problem)
        for name in splits:
            np.testing.assert_array_equal(result[name], splits[name], err_msg=name)
        assert (splits["feature"] != NO_SPLIT).any()  # not vacuous
        assert not kept["space"][1].any()


@pytest.mark.parametrize("criterion", ["gini", "squared_error", "newton"])
def test_one_search_takes_each_node_its_own_way(criterion):
    """A level's nodes in one call, each from its histogram, from its rows or not searched (``hist_rows``): each
    searched node's split is the one of a search of every node, a node not searched has the outputs of a node
    without any feature."""
    rng = np.random.default_rng(11 + CRITERIA.index(criterion))
    rows = cpu_rows(make_rows(rng, n_samples=96))
    stats = make_statistics(rng, criterion, rows["X_binned"].shape[0])
    totals = reference_totals(rows, stats)
    hist = reference_histograms(rows, stats)
    n_nodes, n_features = totals.shape[0], rows["X_binned"].shape[1]
    way = np.arange(n_nodes) % 3
    hist_rows = np.where(way == 0, np.arange(n_nodes), np.where(way == 1, FROM_ROWS, NOT_SEARCHED))

    def search(masks, node_hist_rows):
        return find_best_splits(
            splitting, hist, node_hist_rows, rows, stats, totals, masks, np.empty(0, dtype=np.int32),
            np.empty((0, n_features)), ref.skewed_bin_values(n_features, rows["missing_bin"] + 1),
            rows["missing_bin"], 1, np.zeros(n_nodes), *split_constraints(None, None, masks.shape),
        )

    masks = np.ones((n_nodes, n_features), dtype=bool)
    mixed = search(masks, hist_rows)
    masks[way == 2] = False
    expected = search(masks, np.arange(n_nodes))
    for name in expected:
        np.testing.assert_array_equal(mixed[name], expected[name], err_msg=name)
    assert (mixed["feature"][way == 2] == NO_SPLIT).all()
    for searched in (0, 1):
        assert (mixed["feature"][way == searched] != NO_SPLIT).any()  # not vacuous


@pytest.mark.parametrize("criterion", CRITERIA)
def test_best_splits_respect_constraints(criterion):
    """The chosen split leaves both children at least min_samples_leaf rows and min_weight_leaf weight."""
    rng = np.random.default_rng(77 + CRITERIA.index(criterion))
    rows = make_rows(rng, n_samples=80)
    stats = make_statistics(rng, criterion, rows["X_binned"].shape[0], l2_regularization=0.5, l1_regularization=0.3)
    totals = reference_totals(rows, stats)
    masks = np.ones((totals.shape[0], rows["X_binned"].shape[1]), dtype=bool)
    min_samples_leaf = 6
    weights = np.array([ref.node_stats(criterion, t, stats.inv_scales)["W"] for t in totals])
    min_weight_leaf = 0.3 * weights
    from_hist, from_rows = run_split_kernels(rows, stats, totals, masks, min_samples_leaf, min_weight_leaf, rng)
    expected = reference_splits(rows, stats, criterion, totals, masks, min_samples_leaf, min_weight_leaf)
    n_split = 0
    for node in range(totals.shape[0]):
        assert_split_matches(from_hist, expected[node], node, "from_histograms")
        assert_split_matches(from_rows, expected[node], node, "from_rows")
        if from_hist["feature"][node] == ref.NO_SPLIT:
            # Then no candidate at all satisfies the constraints.
            assert not any(c["valid"] for c in expected[node]["candidates"])
            continue
        n_split += 1
        left = from_hist["left_totals"][node]
        right = totals[node] - left
        for side in (left, right):
            assert side[-1] >= min_samples_leaf
            assert ref.node_stats(criterion, side, stats.inv_scales)["W"] >= min_weight_leaf[node]
    assert n_split >= 1


def test_split_ties_go_to_lowest_feature_and_missing_right():
    """Duplicated features tie: the lowest wins. Missing rows of zero weight tie: they go right."""
    rng = np.random.default_rng(5)
    n_samples = 40
    base = rng.integers(0, 6, n_samples)
    X_binned = np.empty((n_samples, 3), dtype=np.uint8, order="F")
    X_binned[:, 0] = rng.integers(0, 6, n_samples)  # noise
    X_binned[:, 1] = base
    X_binned[:, 2] = base
    y = (base >= 3).astype(np.int64)  # feature 1 (and 2) split perfectly at bin 2
    weight = np.ones(n_samples)
    missing_rows = rng.choice(n_samples, 5, replace=False)
    weight[missing_rows] = 0.0
    X_binned[missing_rows, 1:] = 7  # missing in both duplicated features, weightless
    stats = statistics.classification_statistics("gini", y, 2, weight)
    rows = {
        "X_binned": X_binned,
        "sample_indices": np.arange(n_samples, dtype=np.int32),
        "sample_counts": np.ones((1, n_samples), dtype=np.int32),
        "node_start": np.array([0], dtype=np.int64),
        "node_stop": np.array([n_samples], dtype=np.int64),
        "node_tree": np.array([0], dtype=np.int64),
        "n_bins_non_missing": np.array([6, 6, 6], dtype=np.int32),
        "missing_bin": 7,
        "max_bins": 8,
    }
    totals = reference_totals(rows, stats)
    masks = np.ones((1, 3), dtype=bool)
    min_weight_leaf = np.zeros(1)
    from_hist, from_rows = run_split_kernels(rows, stats, totals, masks, 1, min_weight_leaf, rng)
    expected = reference_splits(rows, stats, "gini", totals, masks, 1, min_weight_leaf)[0]
    assert (expected["feature"], expected["bin"], expected["missing_left"]) == (1, 2, False)
    for result, label in ((from_hist, "from_histograms"), (from_rows, "from_rows")):
        assert_split_matches(result, expected, 0, label)


@pytest.mark.parametrize(
    "bins, expected_missing_left",
    [([0, 0, 0, 1, 1], True), ([0, 0, 1, 1, 1], False), ([0, 0, 1, 1], True)],
)
def test_missing_direction_without_missing_values_follows_the_majority(bins, expected_missing_left):
    """No missing value in the node: future ones go to the child with more rows, ties left."""
    n_samples = len(bins)
    X_binned = np.asfortranarray(np.array(bins, dtype=np.uint8)[:, None])
    y = np.array(bins, dtype=np.int64)
    stats = statistics.classification_statistics("gini", y, 2, np.ones(n_samples))
    rows = {
        "X_binned": X_binned,
        "sample_indices": np.arange(n_samples, dtype=np.int32),
        "sample_counts": np.full((1, n_samples), 2, dtype=np.int32),
        "node_start": np.array([0], dtype=np.int64),
        "node_stop": np.array([n_samples], dtype=np.int64),
        "node_tree": np.array([0], dtype=np.int64),
        "n_bins_non_missing": np.array([2], dtype=np.int32),
        "missing_bin": 3,
        "max_bins": 4,
    }
    totals = reference_totals(rows, stats)
    masks = np.ones((1, 1), dtype=bool)
    rng = np.random.default_rng(0)
    from_hist, from_rows = run_split_kernels(rows, stats, totals, masks, 1, np.zeros(1), rng)
    expected = reference_splits(rows, stats, "gini", totals, masks, 1, np.zeros(1))[0]
    assert (expected["feature"], expected["bin"], expected["missing_left"]) == (0, 0, expected_missing_left)
    for result, label in ((from_hist, "from_histograms"), (from_rows, "from_rows")):
        assert_split_matches(result, expected, 0, label)


def reference_random_splits(rows, stats, criterion, totals, masks, draws, min_samples_leaf, min_weight_leaf):
    expected = []
    n_samples = rows["X_binned"].shape[0]
    for node in range(totals.shape[0]):
        node_rows = ref.node_rows(rows["sample_indices"], rows["node_start"], rows["node_stop"], node)
        tree = rows["node_tree"][node]
        expected.append(
            ref.random_threshold_split(
                criterion, rows["X_binned"], node_rows,
                rows["sample_counts"][tree], *tree_statistics(stats, tree, n_samples), totals[node],
                masks[node], draws[node], rows["n_bins_non_missing"], rows["missing_bin"], stats.inv_scales,
                stats.regularization, min_samples_leaf, min_weight_leaf[node],
                ref.skewed_bin_values(masks.shape[1], rows["missing_bin"] + 1),
            )
        )
    return expected


RANDOM_SPLIT_SETTINGS = [
    # criterion, seed, min_samples_leaf, min_weight_leaf as a fraction of the node's weight
    ("gini", 0, 1, 0.0),
    ("entropy", 1, 1, 0.0),
    ("misclassification", 2, 2, 0.0),
    ("squared_error", 3, 1, 0.1),
    ("poisson", 4, 1, 0.0),
    ("newton", 5, 1, 0.0),
    ("gini", 6, 6, 0.0),  # min_samples_leaf rejects many random thresholds
    ("squared_error", 7, 8, 0.2),
]


@pytest.mark.parametrize("n_trees", [None, 2])  # statistics shared by the trees, or per tree
@pytest.mark.parametrize("criterion, seed, min_samples_leaf, weight_fraction", RANDOM_SPLIT_SETTINGS)
def test_random_threshold_splits_match_reference(criterion, seed, min_samples_leaf, weight_fraction, n_trees):
    rng = np.random.default_rng(2000 + seed)
    rows = make_rows(rng)
    stats = make_statistics(
        rng, criterion, rows["X_binned"].shape[0], l2_regularization=1.0 * (seed % 2),
        l1_regularization=0.5 * (seed % 2), n_trees=n_trees,
    )
    totals = reference_totals(rows, stats)
    n_nodes, n_features = totals.shape[0], rows["X_binned"].shape[1]
    masks = rng.random((n_nodes, n_features)) < 0.8
    masks[0] = True
    masks[-1] = False  # no feature at all: no split
    draws = ref.threshold_draws(seed, rows["node_tree"], np.arange(n_nodes), n_features)
    draws[0, 0] = np.nextafter(1.0, 0.0)  # the largest draw still falls below hi
    weights = np.array([ref.node_stats(criterion, t, stats.inv_scales)["W"] for t in totals])
    min_weight_leaf = weight_fraction * weights

    from_hist, from_rows = run_split_kernels(
        rows, stats, totals, masks, min_samples_leaf, min_weight_leaf, rng, draws
    )
    expected = reference_random_splits(rows, stats, criterion, totals, masks, draws, min_samples_leaf, min_weight_leaf)
    best = reference_splits(rows, stats, criterion, totals, masks, min_samples_leaf, min_weight_leaf)
    for node in range(n_nodes):
        assert_split_matches(from_hist, expected[node], node, "from_histograms")
        assert_split_matches(from_rows, expected[node], node, "from_rows")
        if expected[node]["feature"] != ref.NO_SPLIT:
            # The random threshold of the chosen feature, which never beats the best split.
            assert expected[node]["bin"] == expected[node]["thresholds"][expected[node]["feature"]]
            assert expected[node]["gain"] <= best[node]["gain"] + 1e-9 * best[node]["scale"]
    for key in from_hist:
        np.testing.assert_array_equal(from_hist[key], from_rows[key], err_msg=key)
    assert expected[-1]["feature"] == ref.NO_SPLIT
    assert sum(e["feature"] != ref.NO_SPLIT for e in expected) >= 2  # the test is not vacuous
    # Some random threshold differs from the best one, so the mode is really in use.
    assert any(e["feature"] != b["feature"] or e["bin"] != b["bin"] for e, b in zip(expected, best))
    if min_samples_leaf > 1:
        # A random threshold that min_samples_leaf rejects: its feature gives no split.
        rejected = [
            c for e in expected for c in e["candidates"] if not c["valid"] and c["left"][-1] < min_samples_leaf
        ]
        assert rejected


def test_random_thresholds_stay_between_the_lowest_and_highest_bins():
    """Over many draws every occupied bin in [lo, hi) is chosen, never hi; one occupied bin gives no split."""
    n_samples = 12
    # Feature 0: bins 1, 3, 4, 6 occupied (lo = 1, hi = 6); feature 1: bin 2 only, and missing values.
    X_binned = np.asfortranarray(np.array(
        [[1, 2], [1, 7], [3, 2], [3, 2], [4, 7], [4, 2], [6, 2], [6, 2], [1, 2], [3, 7], [4, 2], [6, 2]],
        dtype=np.uint8,
    ))
    y = np.arange(n_samples) % 2
    stats = statistics.classification_statistics("gini", y, 2, np.ones(n_samples))
    n_nodes = 200
    rows = {
        "X_binned": X_binned,
        "sample_indices": np.arange(n_samples, dtype=np.int32),
        "sample_counts": np.ones((1, n_samples), dtype=np.int32),
        "node_start": np.zeros(n_nodes, dtype=np.int64),
        "node_stop": np.full(n_nodes, n_samples, dtype=np.int64),
        "node_tree": np.zeros(n_nodes, dtype=np.int64),
        "n_bins_non_missing": np.array([7, 7], dtype=np.int32),
        "missing_bin": 7,
        "max_bins": 8,
    }
    totals = np.repeat(reference_totals(rows, stats)[:1], n_nodes, axis=0)
    masks = np.ones((n_nodes, 2), dtype=bool)
    draws = ref.threshold_draws(3, rows["node_tree"], np.arange(n_nodes), 2)
    from_hist, from_rows = run_split_kernels(
        rows, stats, totals, masks, 1, np.zeros(n_nodes), np.random.default_rng(0), draws
    )
    for result in (from_hist, from_rows):
        np.testing.assert_array_equal(result["feature"], 0)
        assert set(result["bin"]) == {1, 3, 4}
    # Bin values b**3 (ref.skewed_bin_values): the threshold t = 1 + 215 u, uniform between the values of
    # bins 1 and 6, falls in bin 1 or 2 below 27 (candidate 1), in bin 3 below 64 (candidate 3), else in 4 or 5.
    threshold = (1 - draws[:, 0]) * 1.0 + draws[:, 0] * 216.0
    np.testing.assert_array_equal(from_hist["bin"], np.select([threshold < 27, threshold < 64], [1, 3], 4))


# --- categorical features -----------------------------------------------------------------------

# A categorical feature's bins are its category codes; a split sends a subset of the node's occupied
# categories left. The brute force here tries every subset of them (with the missing values on either side)
# and computes each gain from ``tests/reference.py``'s node costs. Where sorting the categories makes a prefix
# scan optimal (two classes: Breiman et al. 1984, Theorem 4.5; regression: Fisher 1958; newton without
# regularization), the kernels' best gain equals the brute force's; with more classes the kernels try every
# subset of at most ``MAX_EXHAUSTIVE_CATEGORIES`` categories (the same split as the brute force, ties
# included) and otherwise scan the order of the node's majority class (written here with numpy's lexsort).
# Both split paths agree bit for bit.


def continuous_statistics(rng, criterion, n_samples, n_classes=2, l2=0.0, l1=0.0):
    """Fixed-point statistics of random targets and weights (continuous: no exact ties of gains)."""
    weight = rng.uniform(0.5, 2.0, n_samples)
    if criterion in ref.CLASSIFICATION:
        y = rng.integers(0, n_classes, n_samples)
        return statistics.classification_statistics(criterion, y, n_classes, weight)
    if criterion in ("squared_error", "poisson"):
        y = rng.gamma(2.0, 1.5, n_samples)
        return statistics.regression_statistics(criterion, y, weight)
    return statistics.newton_statistics(rng.normal(size=n_samples), rng.uniform(0.1, 1.0, n_samples), l2, l1)


def run_categorical_split_kernels(rows, stats, masks, draws=None, min_samples_leaf=1, min_weight_leaf=None):
    """Both CPU split paths with feature 0 categorical; returns their outputs as two dicts."""
    n_nodes = rows["node_start"].shape[0]
    totals = reference_totals(rows, stats)
    hist = reference_histograms(rows, stats)
    draws = np.empty((0, 2)) if draws is None else draws
    min_weight_leaf = np.zeros(n_nodes) if min_weight_leaf is None else min_weight_leaf
    categorical_features = np.array([0], dtype=np.int32)
    bin_values = ref.skewed_bin_values(masks.shape[1], CATEGORY_MISSING_BIN + 1)
    from_hist, from_rows = both_split_paths(
        splitting, hist, np.arange(n_nodes), cpu_rows(rows), stats, totals, masks, categorical_features, draws,
        bin_values, CATEGORY_MISSING_BIN, min_samples_leaf, min_weight_leaf,
        *split_constraints(None, None, masks.shape),
    )
    for name in from_hist:
        np.testing.assert_array_equal(from_hist[name], from_rows[name], err_msg=name)
    return from_hist, hist, totals


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
    missing = feature_hist[CATEGORY_MISSING_BIN]
    for mask in range(1, 1 << len(candidates), step):
        chosen = [code for i, code in enumerate(candidates) if mask >> i & 1]
        left = feature_hist[chosen].sum(axis=0)
        yield mask, False, left
        if missing[-1] > 0:
            yield mask, True, left + missing


def occupied(feature_hist, n_categories):
    return [code for code in range(n_categories) if feature_hist[code, -1] > 0]


def check_split_partition(result, node, feature_hist, totals, n_categories):
    """The bitset holds the chosen occupied categories and, when missing values go left, every category
    without rows; the left totals are those of the set plus the missing values when they go left."""
    codes = bitset_codes(result["category_bitset"][node])
    occupied_codes = occupied(feature_hist, n_categories)
    left_occupied = [code for code in codes if code in occupied_codes]
    missing_left = bool(result["missing_left"][node])
    missing = feature_hist[CATEGORY_MISSING_BIN] if missing_left else 0
    expected_left = feature_hist[left_occupied].sum(axis=0) + missing
    np.testing.assert_array_equal(result["left_totals"][node], expected_left)
    unoccupied = [code for code in range(MAX_CATEGORIES) if code not in occupied_codes]
    assert set(codes) - set(left_occupied) == (set(unoccupied) if missing_left else set())
    assert 0 < len(left_occupied) <= len(occupied_codes)
    if feature_hist[CATEGORY_MISSING_BIN, -1] == 0:  # no missing values here: they follow the larger child
        assert missing_left == (2 * expected_left[-1] >= totals[node, -1])
    assert result["categorical"][node] and result["bin"][node] == NO_SPLIT and result["next_bin"][node] == NO_SPLIT


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
    rows = categorical_rows(rng, 60, n_categories)
    stats = continuous_statistics(rng, criterion, 60, *(regularization or ()))
    masks = np.array([[True, False]] * 3)
    result, hist, totals = run_categorical_split_kernels(rows, stats, masks)
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
    rows = categorical_rows(rng, 80, n_categories)
    stats = continuous_statistics(rng, criterion, 80, n_classes=3)
    masks = np.array([[True, False]] * 3)
    result, hist, totals = run_categorical_split_kernels(rows, stats, masks)
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
    rows = categorical_rows(rng, 120, n_categories, missing_rate=0.1)
    stats = continuous_statistics(rng, "gini", 120, n_classes=3)
    masks = np.array([[True, False]] * 3)
    result, hist, totals = run_categorical_split_kernels(rows, stats, masks)
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
                [feature_hist[ordered[:k]].sum(axis=0) + feature_hist[CATEGORY_MISSING_BIN]]
                if feature_hist[CATEGORY_MISSING_BIN, -1] else []
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
    rows = categorical_rows(rng, 60, 10)
    stats = continuous_statistics(rng, "squared_error", 60)
    masks = np.array([[True, False]] * 3)
    totals = reference_totals(rows, stats)
    min_weight_leaf = 0.3 * totals[:, 0] * stats.inv_scales[0]
    result, hist, totals = run_categorical_split_kernels(
        rows, stats, masks, min_samples_leaf=8, min_weight_leaf=min_weight_leaf
    )
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
    rows = categorical_rows(rng, 60, n_categories)
    stats = continuous_statistics(rng, "gini", 60)
    masks = np.array([[True, False]] * 3)
    draws = rng.random((3, 2))
    result, hist, totals = run_categorical_split_kernels(rows, stats, masks, draws=draws)
    for node in range(3):
        feature_hist = hist[node, 0]
        candidates = np.array(occupied(feature_hist, n_categories))
        counts = feature_hist[candidates, :-1] * stats.inv_scales[:-1]
        ordered = candidates[np.lexsort((candidates, counts[:, 1] / counts.sum(axis=1)))]
        m = len(ordered)
        n_left = 1 + min(int(draws[node, 0] * (m - 1)), m - 2)
        left = feature_hist[ordered[:n_left]].sum(axis=0)
        gains = [subset_gain("gini", left, totals[node], stats.inv_scales, stats.regularization)]
        if feature_hist[CATEGORY_MISSING_BIN, -1]:
            gains.append(subset_gain("gini", left + feature_hist[CATEGORY_MISSING_BIN], totals[node], stats.inv_scales,
                                     stats.regularization))
        assert result["gain"][node] == pytest.approx(max(gains), rel=1e-9)
        assert set(bitset_codes(result["category_bitset"][node])) & set(candidates) == set(ordered[:n_left])


def test_numeric_and_categorical_features_compete():
    """With both features searched, each node takes the better of the two, as each alone would give it."""
    rng = np.random.default_rng(8)
    rows = categorical_rows(rng, 60, 10)
    stats = continuous_statistics(rng, "entropy", 60)
    both, _, _ = run_categorical_split_kernels(rows, stats, np.ones((3, 2), dtype=bool))
    alone = [run_categorical_split_kernels(rows, stats, np.array([[f == 0, f == 1]] * 3))[0] for f in (0, 1)]
    for node in range(3):
        winner = alone[int(alone[1]["gain"][node] > alone[0]["gain"][node])]
        for name in both:
            np.testing.assert_array_equal(both[name][node], winner[name][node], err_msg=name)
    assert set(both["feature"]) == {0, 1}  # the test is not vacuous


@njit
def generic_scan(feature_hist, node_totals, n_bins_non_missing, missing_bin, criterion, inv_scales, regularization,
                 min_samples_leaf, min_weight_leaf):
    """The documented scan (``common.scan_threshold`` over every bin in order, missing right then left), the
    CUDA kernels' code: the reference of ``splitting._best_pair_threshold``."""
    n_slots = feature_hist.shape[1]
    left, left_with_missing = np.zeros(n_slots, dtype=np.int64), np.zeros(n_slots, dtype=np.int64)
    missing = feature_hist[missing_bin]
    cost = parent_cost(criterion, node_totals, n_slots - 1, inv_scales, regularization)
    best_gain, best_bin, best_missing_left = -math.inf, NO_SPLIT, False
    for bin_idx in range(n_bins_non_missing):
        if feature_hist[bin_idx, n_slots - 1] == 0:
            continue
        left += feature_hist[bin_idx]
        best_gain, best_bin, best_missing_left = scan_threshold(
            bin_idx, node_totals, cost, left, missing, left_with_missing, missing[n_slots - 1] > 0, best_gain,
            best_bin, best_missing_left, criterion, n_slots - 1, inv_scales, regularization, min_samples_leaf,
            min_weight_leaf, 0, -math.inf, math.inf,
        )
    return best_gain, best_bin, best_missing_left


# The criteria of two statistics: two classes' gini, squared error, newton (with and without regularization).
PAIR_CRITERIA = [("gini", 2, (0.0, 0.0)), ("squared_error", None, (0.0, 0.0)), ("newton", None, (0.0, 0.0)),
                 ("newton", None, (1.0, 0.5))]


def pair_statistics(rng, criterion, n_classes, regularization, n_rows):
    """Statistics of ``n_rows`` rows for a criterion of ``PAIR_CRITERIA`` (about a tenth of weight zero), and
    their weights."""
    weight = rng.uniform(0.2, 3.0, n_rows) * (rng.random(n_rows) > 0.1)
    if criterion == "gini":
        stats = statistics.classification_statistics(criterion, rng.integers(0, n_classes, n_rows), n_classes,
                                                      weight)
    elif criterion == "squared_error":
        stats = statistics.regression_statistics(criterion, rng.normal(0.5, 2.0, n_rows), weight)
    else:
        stats = statistics.newton_statistics(rng.normal(size=n_rows), rng.uniform(0.05, 1.0, n_rows), *regularization)
    return stats, weight


def feature_histogram(stats, bins, missing_bin):
    """The histogram (missing_bin + 1, n_slots) of rows in ``bins``, row by row."""
    feature_hist = np.zeros((missing_bin + 1, stats.n_slots), dtype=np.int64)
    for row, bin_idx in enumerate(bins):
        feature_hist[bin_idx, stats.row_slot[row]:stats.row_slot[row] + stats.row_stats.shape[1]] += stats.row_stats[row]
        feature_hist[bin_idx, -1] += 1
    return feature_hist


@pytest.mark.parametrize("criterion, n_classes, regularization", PAIR_CRITERIA)
@pytest.mark.parametrize("seed", range(4))
def test_pair_scans_equal_the_generic_scan_bit_for_bit(criterion, n_classes, regularization, seed):
    """``_best_threshold``'s three-pass scan of two-statistic criteria (``_best_pair_threshold``) finds the
    generic scan's split, gain bits included: the CUDA kernels scan generically, and the backends' trees are the
    same bit for bit."""
    rng = np.random.default_rng(seed)
    n_rows, missing_bin = 300, 40
    stats, weight = pair_statistics(rng, criterion, n_classes, regularization, n_rows)
    bins = rng.integers(0, missing_bin + 1, n_rows)  # missing values included (bin missing_bin)
    n_slots = stats.n_slots
    feature_hist = feature_histogram(stats, bins, missing_bin)
    feature_hist[rng.integers(0, missing_bin, 8)] = 0  # empty bins
    node_totals = feature_hist.sum(axis=0)
    scratch = splitting._blocks_scratch(1, missing_bin + 1, n_slots)
    n_found = 0
    for min_samples_leaf, weight_fraction in [(1, 0.0), (20, 0.0), (1, 0.2)]:
        min_weight_leaf = weight_fraction * float(np.sum(weight))
        for has_missing in (True, False):
            hist = feature_hist.copy()
            if not has_missing:
                hist[missing_bin] = 0
            totals = hist.sum(axis=0)
            expected = generic_scan(hist, totals, missing_bin, missing_bin, stats.criterion, stats.inv_scales,
                                    stats.regularization, min_samples_leaf, min_weight_leaf)
            found = splitting._best_threshold(
                hist, totals, np.int64(0), np.int64(missing_bin), missing_bin, -1.0, np.empty(0),
                stats.criterion, stats.inv_scales, stats.regularization, min_samples_leaf, min_weight_leaf,
                0, -math.inf, math.inf, *(array[0] for array in scratch[:4]),
            )
            assert found[1:] == expected[1:]
            assert np.float64(found[0]).tobytes() == np.float64(expected[0]).tobytes()
            n_found += found[1] != NO_SPLIT
    assert n_found >= 4  # not vacuous


@pytest.mark.parametrize("criterion, n_classes, regularization", PAIR_CRITERIA)
@pytest.mark.parametrize("seed", range(3))
def test_pair_scan_of_the_occupied_bins_equals_the_generic_scan_bit_for_bit(criterion, n_classes, regularization,
                                                                           seed):
    """``_best_pair_threshold_of_occupied`` (the bins a node's rows mark while ``_add_feature_rows`` adds them,
    and those only) finds the generic scan's split of the same histogram, gain bits included: from one row to
    ``OCCUPIED_MAX_ROWS``, rows sharing bins, bins in every word of the bitset, missing rows,
    ``min_samples_leaf`` and ``min_weight_leaf``; and leaves the histogram's bitset zero for the next feature."""
    rng = np.random.default_rng(100 + seed)
    missing_bin = 255
    occupied_words = np.zeros(splitting.OCCUPIED_WORDS, dtype=np.uint64)
    left_sums, bin_gains = np.empty((4, missing_bin + 1), dtype=np.int64), np.empty((2, missing_bin + 1))
    n_found = 0
    for n_rows in (1, 2, 3, 7, 20, splitting.OCCUPIED_MAX_ROWS):
        stats, weight = pair_statistics(rng, criterion, n_classes, regularization, n_rows)
        # Rows share a few bins, spread over the four words; about one in five is missing.
        bins = np.where(rng.random(n_rows) < 0.2, missing_bin, 13 * rng.integers(0, 19, n_rows)).astype(np.uint8)
        node_slots, node_stats = stats.row_slot.astype(np.int64), stats.row_stats
        pair, gini, first_slot, second_slot, pair_regularization = splitting._pair_criterion(
            stats.criterion, stats.n_slots, stats.regularization
        )
        assert pair
        for min_samples_leaf, weight_fraction in [(1, 0.0), (2, 0.0), (1, 0.2)]:
            min_weight_leaf = weight_fraction * float(np.sum(weight))
            feature_hist = np.zeros((missing_bin + 1, stats.n_slots), dtype=np.int64)
            splitting._add_feature_rows(feature_hist, bins, node_slots, node_stats, n_rows, missing_bin,
                                        occupied_words)
            np.testing.assert_array_equal(feature_hist, feature_histogram(stats, bins, missing_bin))
            totals = feature_hist.sum(axis=0)
            expected = generic_scan(feature_hist, totals, missing_bin, missing_bin, stats.criterion, stats.inv_scales,
                                    stats.regularization, min_samples_leaf, min_weight_leaf)
            found = splitting._best_pair_threshold_of_occupied(
                feature_hist, occupied_words, missing_bin, totals, gini, first_slot, second_slot, stats.inv_scales,
                pair_regularization, min_samples_leaf, min_weight_leaf, left_sums, bin_gains,
            )
            assert found[1:] == expected[1:]
            assert np.float64(found[0]).tobytes() == np.float64(expected[0]).tobytes()
            assert not occupied_words.any()
            n_found += found[1] != NO_SPLIT
    assert n_found >= 5  # not vacuous


@pytest.mark.parametrize("n_slots", [2, 3, 4, 6])
def test_clearing_a_nodes_rows_zeroes_their_bins_only(n_slots):
    """``_clear_feature_rows`` (compiled per count of slots) zeroes every slot of the bins the rows fall in, and
    no other bin."""
    rng = np.random.default_rng(n_slots)
    feature_hist = rng.integers(1, 100, (64, n_slots))
    feature_bins = rng.integers(0, 64, 20).astype(np.uint8)
    expected = feature_hist.copy()
    expected[feature_bins[:15]] = 0
    splitting._clear_feature_rows(feature_hist, feature_bins, 15)
    np.testing.assert_array_equal(feature_hist, expected)
    assert feature_hist.any()  # not vacuous
