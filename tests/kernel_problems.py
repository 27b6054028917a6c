"""Small random problems of the kernel tests, CPU and CUDA: two trees with rows drawn up to three
times, NaN / missing bins, sample weights (some zero), three classes and the regression and Newton
statistics built with ``gpuforest.statistics``; random trees of every split kind for prediction; the nodes of
categorical and multiway splits.
"""

from dataclasses import replace

import numpy as np

from gpuforest import statistics
from gpuforest.tree import CATEGORICAL, CATEGORY_WORDS, MAX_CATEGORIES, MULTIWAY, NUMERIC, Tree
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


# --- multiway splits (kernels/*/multiway.py) -------------------------------------------------------

WEIGHT_SCALE = 0.5  # class slots hold weights in units of 0.5


def multiway_node_rows(rng, n_rows, n_codes, missing_fraction):
    """Codes (NaN: missing) of each feature, classes and integer weights of one node's rows."""
    codes = np.stack([rng.integers(0, k, n_rows).astype(float) for k in n_codes], axis=1)
    codes[rng.random(codes.shape) < missing_fraction] = np.nan
    return codes, rng.integers(0, N_CLASSES, n_rows), rng.integers(1, 4, n_rows)


def multiway_histograms(nodes, n_features, missing_bin):
    """The histograms (n_nodes, n_features, missing_bin + 1, N_CLASSES + 1) of ``multiway_node_rows``' nodes: class
    weights and row counts per bin (a value's bin is the value; NaN: ``missing_bin``)."""
    hist = np.zeros((len(nodes), n_features, missing_bin + 1, N_CLASSES + 1), dtype=np.int64)
    for node, (codes, classes, weights) in enumerate(nodes):
        bins = np.where(np.isnan(codes), missing_bin, np.nan_to_num(codes)).astype(np.int64)
        for feature in range(n_features):
            np.add.at(hist[node, feature], (bins[:, feature], classes), weights)
            np.add.at(hist[node, feature], (bins[:, feature], N_CLASSES), 1)
    return hist


def multiway_gain_problem(rng, n_codes=(4, 2, 3, 1), missing_bin=5):
    """The gain kernels' inputs for nodes made of random rows, and the rows themselves."""
    nodes = [multiway_node_rows(rng, n_rows, n_codes, missing) for n_rows, missing in
             ((40, 0.0), (25, 0.2), (9, 0.0), (3, 0.0), (12, 0.5), (30, 0.1))]
    hist = multiway_histograms(nodes, len(n_codes), missing_bin)
    feature_mask = rng.random((len(nodes), len(n_codes))) < 0.8
    feature_mask[0] = True
    inv_scales = np.array([WEIGHT_SCALE] * N_CLASSES + [1.0])
    args = [
        hist, np.arange(len(nodes), dtype=np.int64)[::-1].copy(), hist[:, 0].sum(axis=1)[::-1].copy(),
        feature_mask[::-1].copy(), np.array(n_codes, dtype=np.int32), missing_bin, common.ENTROPY, inv_scales,
        (0.0, 0.0), 2, np.full(len(nodes), 1.0), np.empty((len(nodes), len(n_codes))),
    ]
    return args, nodes[::-1]


C45_MIN_OBJECTS = 2.0


def c45_problem(rng, is_categorical=(True, False, True, False), n_bins=(4, 7, 2, 5), missing_bin=8):
    """``c45_split_gains``' inputs for nodes of random rows (numeric features: bins as ordered values), and the rows."""
    nodes = [multiway_node_rows(rng, n_rows, n_bins, missing) for n_rows, missing in
             ((40, 0.0), (25, 0.2), (9, 0.0), (3, 0.0), (12, 0.5), (60, 0.1), (30, 0.0))]
    hist = multiway_histograms(nodes, len(n_bins), missing_bin)
    n_nodes, n_features = len(nodes), len(n_bins)
    n_slots = N_CLASSES + 1
    feature_mask = rng.random((n_nodes, n_features)) < 0.9
    feature_mask[0] = True
    args = [
        hist, np.arange(n_nodes, dtype=np.int64), hist[:, 0].sum(axis=1), feature_mask,
        np.array(is_categorical), np.array(n_bins, dtype=np.int32), missing_bin,
        np.array([WEIGHT_SCALE] * N_CLASSES + [1.0]), C45_MIN_OBJECTS,
        np.empty((n_nodes * n_features, 2, n_slots), dtype=np.int64), np.empty((n_nodes, n_features)),
        np.empty((n_nodes, n_features)), np.empty((n_nodes, n_features), dtype=np.int32),
    ]
    return args, nodes


def multiway_partition_problem(rng, node_sizes, n_codes=(3, 2, 5), missing_bin=7):
    """X_binned (codes and missing bins), shuffled sample indices, and nodes over disjoint ranges with
    a gap between them, each with a feature and its number of children."""
    n_samples = sum(node_sizes) + 2 * len(node_sizes)
    X_binned = np.asfortranarray(np.stack([rng.integers(0, k, n_samples) for k in n_codes], axis=1).astype(np.uint8))
    X_binned[rng.random(X_binned.shape) < 0.1] = missing_bin
    sample_indices = rng.permutation(n_samples).astype(np.int32)
    node_start = np.cumsum([0] + [size + 2 for size in node_sizes[:-1]]).astype(np.int64)
    node_stop = node_start + np.array(node_sizes, dtype=np.int64)
    split_feature = (np.arange(len(node_sizes)) % len(n_codes)).astype(np.int32)
    n_children = np.array(n_codes, dtype=np.int64)[split_feature]
    return X_binned, sample_indices, node_start, node_stop, split_feature, n_children


def multiway_partition_args(problem):
    X_binned, sample_indices, node_start, node_stop, split_feature, n_children = problem
    part_counts = np.empty((node_start.shape[0], int(n_children.max()) + 1), dtype=np.int64)
    return [X_binned, sample_indices, np.empty_like(sample_indices), node_start, node_stop, split_feature, n_children,
            part_counts]


# --- categorical splits (kernels/*/splitting.py, kernels/*/partitioning.py) -------------------------

CATEGORY_MAX_BINS = 16
CATEGORY_MISSING_BIN = CATEGORY_MAX_BINS - 1


def categorical_rows(rng, n_samples, n_categories, missing_rate=0.15):
    """One tree's rows, two features: 0 categorical (codes below ``n_categories``, some of them never
    used), 1 numeric; the nodes: the root and two sub-ranges."""
    X_binned = np.empty((n_samples, 2), dtype=np.uint8, order="F")
    used = np.sort(rng.choice(n_categories, max(2, n_categories - 2), replace=False))
    X_binned[:, 0] = rng.choice(used, n_samples)
    X_binned[:, 1] = rng.integers(0, CATEGORY_MISSING_BIN, n_samples)
    X_binned[rng.random((n_samples, 2)) < missing_rate] = CATEGORY_MISSING_BIN
    half = n_samples // 2
    return {
        "X_binned": X_binned,
        "sample_indices": rng.permutation(n_samples).astype(np.int32),
        "sample_counts": np.ones((1, n_samples), dtype=np.int32),
        "node_start": np.array([0, 0, half], dtype=np.int64),
        "node_stop": np.array([n_samples, half, n_samples], dtype=np.int64),
        "node_tree": np.zeros(3, dtype=np.int64),
        "n_bins_non_missing": np.array([n_categories, CATEGORY_MISSING_BIN], dtype=np.int32),
        "max_bins": CATEGORY_MAX_BINS,
    }


def bitset_codes(bitset):
    """The codes whose bit is set in one row of ``category_bitset``."""
    return [code for code in range(MAX_CATEGORIES) if bitset[code // 32] >> (code % 32) & 1]


def categorical_partition_problem(rng):
    """Four disjoint nodes of 90 rows, two categorical splits (missing values left in one, right in the
    other) and two numeric ones; returns the ``apply_splits`` arguments and the expected partition."""
    rows = categorical_rows(rng, 90, 12)
    X_binned, sample_indices = rows["X_binned"], rows["sample_indices"]
    node_start = np.array([0, 20, 45, 60], dtype=np.int64)
    node_stop = np.array([20, 45, 60, 90], dtype=np.int64)
    categorical = np.array([True, False, True, False])
    feature = np.where(categorical, 0, 1).astype(np.int32)
    split_bin = np.array([common.NO_SPLIT, 6, common.NO_SPLIT, 3], dtype=np.int32)
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
        left = np.where(bins == CATEGORY_MISSING_BIN, missing_left[node], left)
        expected[node_start[node]:node_stop[node]] = np.concatenate([node_rows[left], node_rows[~left]])
        n_left[node] = left.sum()
    args = (
        X_binned, sample_indices.copy(), np.empty_like(sample_indices), node_start, node_stop, n_left, feature,
        split_bin, missing_left, CATEGORY_MISSING_BIN, categorical, bitset,
    )
    return args, expected


# --- loss gradients (kernels/*/gradients.py) -------------------------------------------------------

LOSSES = {
    "squared_error": common.LOSS_SQUARED_ERROR, "absolute_error": common.LOSS_ABSOLUTE_ERROR,
    "huber": common.LOSS_HUBER, "quantile": common.LOSS_QUANTILE, "poisson": common.LOSS_POISSON,
    "gamma": common.LOSS_GAMMA, "binomial": common.LOSS_BINOMIAL, "exponential": common.LOSS_EXPONENTIAL,
    "multinomial": common.LOSS_MULTINOMIAL,
}
PARAMETER = {"huber": 0.7, "quantile": 0.3}


def loss_data(name, n_samples=200, seed=0):
    """Targets of the loss ``name``, raw scores (n_samples, n_scores) and sample weights."""
    rng = np.random.default_rng(seed)
    n_scores = 4 if name == "multinomial" else 1
    raw = rng.normal(scale=2.0, size=(n_samples, n_scores))
    if name == "multinomial":
        y = rng.integers(0, n_scores, n_samples).astype(np.float64)
    elif name in ("binomial", "exponential"):
        y = rng.integers(0, 2, n_samples).astype(np.float64)
    elif name in ("poisson",):
        y = rng.poisson(2.0, n_samples).astype(np.float64)
    elif name == "gamma":
        y = rng.gamma(2.0, 1.5, n_samples)
    else:
        y = rng.normal(scale=2.0, size=n_samples)
    return y, raw, rng.uniform(0.5, 2.0, n_samples)


# --- feature contributions (kernels/*/contributions.py) --------------------------------------------


def contribution_problem(n_samples=80, n_features=4, seed=0):
    """Features with NaN, a categorical feature 3 (codes 0..4), a target with interactions."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, n_features))
    X[:, 3] = rng.integers(0, 5, n_samples)
    y = 2 * X[:, 0] + X[:, 1] * X[:, 2] + (X[:, 3] % 2) + 0.1 * rng.normal(size=n_samples)
    X[rng.random((n_samples, n_features)) < 0.1] = np.nan
    return X, y


def cpu_rows(rows):
    """``rows`` with ``X_binned`` in the CPU split kernels' layout (C-ordered, as ``BinnedRows.histogram_bins``)."""
    return dict(rows, X_binned=np.ascontiguousarray(rows["X_binned"]))


def split_outputs(n_nodes, n_slots):
    """The outputs of ``find_best_splits``, each filled with garbage the kernels must overwrite."""
    return {
        "gain": np.full(n_nodes, 99.0),
        "feature": np.full(n_nodes, 99, dtype=np.int32),
        "bin": np.full(n_nodes, 99, dtype=np.int32),
        "missing_left": np.ones(n_nodes, dtype=bool),
        "left_totals": np.full((n_nodes, n_slots), 99, dtype=np.int64),
        "next_bin": np.full(n_nodes, 99, dtype=np.int32),
        "categorical": np.ones(n_nodes, dtype=bool),
        "category_bitset": np.full((n_nodes, CATEGORY_WORDS), 99, dtype=np.uint32),
    }


def find_best_splits(
    splitting, hist, hist_rows, rows, stats, totals, masks, categorical_features, draws, bin_values, missing_bin,
    min_samples_leaf, min_weight_leaf, monotonic_cst, value_bounds,
):
    """``splitting.find_best_splits`` (the cpu or cuda kernels' module) of the nodes of ``rows`` (``make_rows``'
    dict, or the CUDA tests' batches, with ``X_binned`` in the backend's layout); returns its outputs as a dict
    (``split_outputs``)."""
    out = split_outputs(totals.shape[0], totals.shape[1])
    splitting.find_best_splits(
        hist, hist_rows, rows["X_binned"], rows["sample_indices"], rows["node_start"],
        rows["node_stop"], rows["node_tree"], rows["sample_counts"], stats.row_slot, stats.row_stats,
        stats.stats_stride, totals, masks, categorical_features, draws, bin_values, rows["n_bins_non_missing"],
        missing_bin, stats.criterion, stats.inv_scales, stats.regularization, min_samples_leaf, min_weight_leaf,
        monotonic_cst, value_bounds, *out.values(),
    )
    return out


def both_split_paths(splitting, hist, hist_rows, rows, *args):
    """``find_best_splits`` of every node from its histogram (``hist[hist_rows]``), then of every node from its
    rows; ``args`` as in ``find_best_splits`` after ``rows``. Returns the two output dicts."""
    from_rows = np.full(hist_rows.shape[0], common.FROM_ROWS, dtype=np.int64)
    return (
        find_best_splits(splitting, hist, hist_rows, rows, *args),
        find_best_splits(splitting, hist, from_rows, rows, *args),
    )
