"""Small random problems of the kernel tests, CPU and CUDA: two trees with rows drawn up to three
times, NaN / missing bins, sample weights (some zero), three classes and the regression and Newton
statistics built with ``gpuforest.statistics``; random trees of every split kind for prediction.
"""

from dataclasses import replace

import numpy as np

from gpuforest import statistics
from gpuforest.tree import CATEGORICAL, CATEGORY_WORDS, MULTIWAY, NUMERIC, Tree
from gpuforest.kernels import common

try:
    from . import reference as ref
except ImportError:
    import reference as ref

CRITERIA = ("gini", "entropy", "misclassification", "squared_error", "poisson", "newton")


CRITERION_ID = {
    **statistics.CLASSIFICATION_CRITERIA,
    **statistics.REGRESSION_CRITERIA,
    "newton": common.NEWTON,
}


N_CLASSES = 3


MAX_COUNT = 3  # largest number of times a row is drawn for a tree


def make_statistics(rng, criterion, n_samples, l2_regularization=0.0, l1_regularization=0.0, n_trees=None):
    """Fixed-point row statistics of random targets and sample weights (about 8% zero).

    The regularization applies to ``newton`` only. With ``n_trees``, each of the
    trees gets statistics of its own (``stats_stride = n_samples``; ``newton``'s
    from ``(n_samples, n_trees)`` gradients), one scale per statistic for all.
    """
    n_rows = n_samples * (n_trees or 1)
    if criterion == "misclassification":
        # Dyadic weights keep every sum exact in float64, so that the many
        # exact ties of ``1 - max p`` stay exact ties in the kernels too.
        weight = rng.integers(0, 9, n_rows) / 4.0
    else:
        weight = rng.uniform(0.2, 3.0, n_rows) * (rng.random(n_rows) > 0.08)
    if criterion in ref.CLASSIFICATION:
        y = rng.integers(0, N_CLASSES, n_rows)
        stats = statistics.classification_statistics(criterion, y, N_CLASSES, weight, max_multiplicity=MAX_COUNT)
    elif criterion == "squared_error":
        y = rng.normal(0.5, 2.0, n_rows)
        stats = statistics.regression_statistics(criterion, y, weight, max_multiplicity=MAX_COUNT)
    elif criterion == "poisson":
        # Zeros (so that a child can have a zero mean), small counts and reals.
        y = np.where(rng.random(n_rows) < 0.35, 0.0, rng.gamma(2.0, 1.5, n_rows))
        small = rng.random(n_rows) < 0.3
        y[small] = rng.integers(0, 4, small.sum())
        stats = statistics.regression_statistics(criterion, y, weight, max_multiplicity=MAX_COUNT)
    else:
        gradients = rng.normal(0.0, 1.0, n_rows)
        hessians = rng.uniform(0.05, 1.0, n_rows)
        if n_trees is not None:
            gradients, hessians = (column.reshape(n_trees, n_samples).T for column in (gradients, hessians))
        return statistics.newton_statistics(
            gradients, hessians, l2_regularization, l1_regularization, max_multiplicity=MAX_COUNT
        )
    return stats if n_trees is None else replace(stats, stats_stride=n_samples)


def tree_statistics(stats, tree, n_samples):
    """``(row_slot, row_stats)`` of one tree, indexed by row."""
    first = tree * stats.stats_stride
    return stats.row_slot[first:first + n_samples], stats.row_stats[first:first + n_samples]


def make_rows(rng, n_samples=64, n_features=5, max_bins=9, n_trees=2):
    """Binned rows, per-tree draws and a batch of nodes (each tree's root and sub-ranges)."""
    missing_bin = max_bins - 1
    n_bins_non_missing = rng.integers(1, missing_bin + 1, n_features).astype(np.int32)
    n_bins_non_missing[0] = missing_bin
    X_binned = np.empty((n_samples, n_features), dtype=np.uint8, order="F")
    for feature in range(n_features):
        X_binned[:, feature] = rng.integers(0, n_bins_non_missing[feature], n_samples)
        if feature > 0:  # feature 0 never misses
            missing_rate = rng.choice([0.0, 0.1, 0.3])
            X_binned[rng.random(n_samples) < missing_rate, feature] = missing_bin
    sample_counts = np.zeros((n_trees, n_samples), dtype=np.int32)
    parts, offsets = [], [0]
    for tree in range(n_trees):
        drawn = rng.random(n_samples) < 0.8
        sample_counts[tree, drawn] = rng.integers(1, MAX_COUNT + 1, drawn.sum())
        parts.append(rng.permutation(np.flatnonzero(drawn)))
        offsets.append(offsets[-1] + drawn.sum())
    sample_indices = np.concatenate(parts).astype(np.int32)
    node_start, node_stop, node_tree = [], [], []
    for tree in range(n_trees):
        low, high = offsets[tree], offsets[tree + 1]
        node_start.append(low)
        node_stop.append(high)
        node_tree.append(tree)
        for _ in range(3):
            length = int(rng.integers(2, high - low + 1))
            start = int(rng.integers(low, high - length + 1))
            node_start.append(start)
            node_stop.append(start + length)
            node_tree.append(tree)
    as_int64 = lambda values: np.array(values, dtype=np.int64)  # noqa: E731
    return {
        "X_binned": X_binned,
        "sample_indices": sample_indices,
        "sample_counts": sample_counts,
        "node_start": as_int64(node_start),
        "node_stop": as_int64(node_stop),
        "node_tree": as_int64(node_tree),
        "n_bins_non_missing": n_bins_non_missing,
        "missing_bin": missing_bin,
        "max_bins": max_bins,
    }


def reference_totals(rows, stats):
    return ref.node_totals(
        rows["sample_indices"], rows["node_start"], rows["node_stop"], rows["node_tree"], rows["sample_counts"],
        stats.row_slot, stats.row_stats, stats.n_slots, stats.stats_stride,
    )


def reference_histograms(rows, stats):
    return ref.build_histograms(
        rows["X_binned"], rows["sample_indices"], rows["node_start"], rows["node_stop"], rows["node_tree"],
        rows["sample_counts"], stats.row_slot, stats.row_stats, rows["max_bins"], stats.n_slots, stats.stats_stride,
    )


def random_feature_mask(rng, n_nodes, n_features):
    """A random (n_nodes, n_features) bool mask: the first node has every feature, the last none."""
    mask = rng.random((n_nodes, n_features)) < 0.5
    mask[0] = True
    mask[-1] = False
    return mask


def range_problem(rng, n_samples, n_ranges):
    """``(raw, score_idx, rows, boundaries, values)``: ranges (one empty) of permuted rows, from position 3."""
    rows = rng.permutation(n_samples + 5)[:n_samples].astype(np.int32)
    cuts = np.sort(rng.choice(np.arange(4, n_samples + 3), n_ranges - 2, replace=False))
    boundaries = np.concatenate([[3], cuts[:1], cuts, [n_samples + 3]]).astype(np.int64)  # range 1 is empty
    rows = np.concatenate([rng.permutation(np.arange(n_samples + 5, n_samples + 8)).astype(np.int32), rows])
    return rng.normal(size=(n_samples + 8, 3)), 2, rows, boundaries, rng.normal(size=n_ranges)


NO_BITSETS = np.zeros((0, CATEGORY_WORDS), dtype=np.uint32)  # the category bitsets of trees without any


def random_tree(rng, X, max_depth):
    """A random tree in the flat format, numbered breadth-first (siblings consecutive).

    Thresholds often equal a data value.
    """
    feature, threshold, missing_left, left, right, depth = [-2], [-2.0], [False], [ref.LEAF], [ref.LEAF], [0]
    node = 0
    while node < len(feature):
        if depth[node] < max_depth and (depth[node] < 2 or rng.random() >= 0.3):
            f = int(rng.integers(0, X.shape[1]))
            values = X[:, f][~np.isnan(X[:, f])].astype(np.float64)
            value = float(rng.choice(values))
            feature[node] = f
            threshold[node] = value if rng.random() < 0.5 else value + 0.01
            missing_left[node] = bool(rng.random() < 0.5)
            left[node], right[node] = len(feature), len(feature) + 1
            for column, fill in ((feature, -2), (threshold, -2.0), (missing_left, False), (left, ref.LEAF), (right, ref.LEAF)):
                column += [fill, fill]
            depth += [depth[node] + 1] * 2
        node += 1
    return (
        np.array(feature, dtype=np.int32), np.array(threshold), np.array(missing_left, dtype=bool),
        np.array(left, dtype=np.int32), np.array(right, dtype=np.int32),
    )


def as_tree(arrays, leaf_value, n_features):
    """A ``Tree`` of ``random_tree``'s arrays with ``leaf_value`` (node_count,) as its values."""
    feature, threshold, missing_left, left, right = arrays
    depth = np.zeros(feature.size, dtype=np.int64)
    for node in np.flatnonzero(left != ref.LEAF):  # parents come before their children
        depth[left[node]] = depth[right[node]] = depth[node] + 1
    zeros = np.zeros(feature.size)
    return Tree(
        n_features, left, right, feature, threshold, np.zeros(feature.size, dtype=np.int32), missing_left,
        leaf_value.reshape(-1, 1, 1), zeros, np.ones(feature.size, dtype=np.int64), zeros, depth,
    )


NOT_CODES = (-1.0, 2.5, -0.5, 256.0, 1e9)  # values of a categorical feature that are no category code


def categorical_problem(rng, n_samples, n_categories):
    """Float32 X of 4 features, 1 and 3 categorical: codes ``0 .. n_categories - 1``, and in about
    a fifth of the rows NaN or a value of ``NOT_CODES``; the numeric ones with NaN too. Returns
    ``(X, is_categorical)``."""
    X = rng.normal(size=(n_samples, 4)).astype(np.float32)
    is_categorical = np.array([False, True, False, True])
    for feature in np.flatnonzero(is_categorical):
        X[:, feature] = rng.integers(0, n_categories, n_samples)
        odd = rng.random(n_samples) < 0.2
        X[odd, feature] = rng.choice([np.nan, *NOT_CODES], odd.sum())
    X[:, ~is_categorical] = np.where(rng.random((n_samples, 2)) < 0.1, np.nan, X[:, ~is_categorical])
    return X, is_categorical


def random_mixed_tree(rng, X, max_depth, is_categorical, n_categories):
    """A ``Tree`` with every kind of split, numbered breadth-first (siblings consecutive): numeric
    splits on the numeric features; on the categorical ones categorical splits (a random subset
    of the 256 codes goes left) or multiway splits of 2 to ``n_categories`` children (codes
    beyond them have none). Values are random (one per node)."""
    columns = dict(feature=[-2], threshold=[-2.0], missing_left=[False], left=[ref.LEAF], right=[ref.LEAF],
                   split_type=[NUMERIC], depth=[0])
    bitsets = [np.zeros(CATEGORY_WORDS, dtype=np.uint32)]
    node = 0
    while node < len(columns["feature"]):
        if columns["depth"][node] < max_depth and (node == 0 or rng.random() >= 0.2):
            feature = int(rng.integers(0, X.shape[1]))
            n_children = 2
            if not is_categorical[feature]:
                values = X[:, feature][~np.isnan(X[:, feature])]
                columns["threshold"][node] = float(rng.choice(values))
            elif rng.random() < 0.5:
                columns["split_type"][node] = CATEGORICAL
                bitsets[node] = rng.integers(0, 2**32, CATEGORY_WORDS, dtype=np.uint32)
            else:
                columns["split_type"][node] = MULTIWAY
                n_children = int(rng.integers(2, n_categories + 1))
            columns["feature"][node] = feature
            columns["missing_left"][node] = bool(rng.random() < 0.5)
            first = len(columns["feature"])
            columns["left"][node], columns["right"][node] = first, first + n_children - 1
            for name, fill in (("feature", -2), ("threshold", -2.0), ("missing_left", False), ("left", ref.LEAF),
                               ("right", ref.LEAF), ("split_type", NUMERIC), ("depth", columns["depth"][node] + 1)):
                columns[name] += [fill] * n_children
            bitsets += [np.zeros(CATEGORY_WORDS, dtype=np.uint32)] * n_children
        node += 1
    n_nodes = len(columns["feature"])
    zeros = np.zeros(n_nodes)
    tree = Tree(
        X.shape[1], np.array(columns["left"], dtype=np.int32), np.array(columns["right"], dtype=np.int32),
        np.array(columns["feature"], dtype=np.int32), np.array(columns["threshold"]), np.zeros(n_nodes, np.int32),
        np.array(columns["missing_left"]), rng.normal(size=(n_nodes, 1, 1)), zeros, np.ones(n_nodes, np.int64), zeros,
        np.array(columns["depth"], dtype=np.int64),
    )
    tree.split_type = np.array(columns["split_type"], dtype=np.uint8)
    tree.category_bitset = np.array(bitsets)
    return tree


def mixed_forest(rng, n_samples):
    """``(X, trees)``: ``categorical_problem`` rows and trees of every split kind (a single leaf, a
    stump, deep trees)."""
    X, is_categorical = categorical_problem(rng, n_samples, n_categories=6)
    trees = [random_mixed_tree(rng, X, max_depth, is_categorical, 6) for max_depth in (0, 1, 4, 6, 6)]
    return X, trees


def float32_edge_thresholds(rng, X, threshold, feature, left):
    """Half of the split nodes' thresholds moved halfway between a data value and the next float32 up.

    Rounding such a threshold to the nearest float32 would send the next float32 (also put in
    ``X``) the wrong way.
    """
    threshold = threshold.copy()
    for node in np.flatnonzero(left != ref.LEAF):
        if rng.random() < 0.5:
            column = X[:, feature[node]]
            value = rng.choice(column[~np.isnan(column)])
            above = np.nextafter(value, np.float32(np.inf))
            threshold[node] = (float(value) + float(above)) / 2
            X[rng.integers(0, X.shape[0], 2), feature[node]] = [value, above]
    return threshold
