"""Kernel tier: every CPU kernel against the naive reference of ``tests/reference.py``.

Inputs are small random problems: two trees with rows drawn up to three
times, NaN / missing bins, sample weights (some zero), three classes and the
regression and Newton statistics built with ``gpuforest.statistics``.
"""

import math
from dataclasses import replace

import numpy as np
import pytest

from gpuforest import statistics
from gpuforest.backend import split_constraints
from gpuforest.tree import (
    CATEGORICAL, CATEGORY_WORDS, COMPLETE_MAX_DEPTH, MULTIWAY, NUMERIC, Tree, pack_complete_forest,
    pack_forest, pack_node_info,
)
from gpuforest.kernels import common
from gpuforest.kernels.cpu import binning, chunks, histogram, leaf_values, partitioning, predict, prefetch, sampling, splitting

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


# --- problem generators ------------------------------------------------------------------


@pytest.fixture(params=["one task per node", "several tasks per node"])
def chunking(request, monkeypatch):
    """The histogram and totals kernels as they run on these tiny nodes, and with every node cut into several tasks."""
    if request.param == "several tasks per node":
        monkeypatch.setattr(chunks, "MIN_CHUNK_ROWS", 1)
    return request.param


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


# --- binning -------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_map_to_bins_bucket_table_keeps_every_bin(seed):
    """The equal-width bucket table gives the binary search's bins where buckets are uneven: skewed
    thresholds (most in one bucket), a range too wide for float64 (one bucket), a single threshold,
    values equal to thresholds, beyond the range and infinite."""
    rng = np.random.default_rng(40 + seed)
    n_samples, max_bins = 3000, 256
    skewed = np.sort(np.unique(np.exp(rng.normal(0.0, 6.0, 400))))[: max_bins - 2]
    features = [
        skewed,
        np.array([-1e308, -1.0, 0.0, 2.5, 1e308]),  # width overflows to inf
        np.array([0.5]),
        np.sort(rng.uniform(-1.0, 1.0, max_bins - 2)),
        np.array([1.0, 1.0 + 2**-20, 1.0 + 2**-19]),  # a range narrower than float32's steps
    ]
    thresholds = np.full((len(features), max_bins), np.inf)
    n_thresholds = np.array([t.size for t in features], dtype=np.int32)
    for feature, chosen in enumerate(features):
        thresholds[feature, : chosen.size] = chosen
    X = np.empty((n_samples, len(features)), dtype=np.float32)
    for feature, chosen in enumerate(features):
        finite = chosen[np.abs(chosen) < 1e38]
        span = np.array([finite.min() - 1.0, finite.max() + 1.0])
        candidates = np.concatenate([finite, span, [np.inf, -np.inf, np.nan]])
        X[:, feature] = np.where(
            rng.random(n_samples) < 0.5, rng.choice(candidates, n_samples), rng.uniform(*span, n_samples)
        )
    missing_bin = max_bins - 1
    X_binned = np.empty(X.shape, dtype=np.uint8, order="F")
    binning.map_to_bins(X, thresholds, n_thresholds, missing_bin, X_binned)
    np.testing.assert_array_equal(X_binned, ref.map_to_bins(X, thresholds, n_thresholds, missing_bin))
    assert len(np.unique(X_binned[:, 0])) > 100  # the skewed feature's bins are all reached


@pytest.mark.parametrize("seed", range(4))
def test_map_to_bins_matches_reference(seed):
    rng = np.random.default_rng(seed)
    n_samples, n_features, max_bins = 200, 6, 16
    X = rng.normal(size=(n_samples, n_features)).astype(np.float32)
    X[:, 1] = rng.integers(0, 5, n_samples)  # few distinct values
    X[rng.random(X.shape) < 0.1] = np.nan
    X[0, 2], X[1, 2] = np.inf, -np.inf
    # At most max_bins - 2 thresholds: max_bins - 1 value bins, then the missing bin.
    thresholds = np.full((n_features, max_bins), np.inf)
    n_thresholds = np.zeros(n_features, dtype=np.int32)
    for feature in range(n_features):
        distinct = np.unique(X[:, feature][~np.isnan(X[:, feature])]).astype(np.float64)
        if feature == 3:
            chosen = np.empty(0)  # a constant feature: no threshold
        elif feature == 4:
            # Thresholds equal to data values: x == threshold must go to the lower bin.
            chosen = np.sort(rng.choice(distinct[np.isfinite(distinct)], max_bins - 2, replace=False))
        else:
            midpoints = (distinct[:-1] + distinct[1:]) / 2
            midpoints = midpoints[np.isfinite(midpoints)]
            size = min(midpoints.size, int(rng.integers(1, max_bins - 1)))
            chosen = np.sort(rng.choice(midpoints, size, replace=False))
        thresholds[feature, : chosen.size] = chosen
        n_thresholds[feature] = chosen.size
    missing_bin = max_bins - 1
    X_binned = np.full((n_samples, n_features), 77, dtype=np.uint8, order="F")
    binning.map_to_bins(X, thresholds, n_thresholds, missing_bin, X_binned)
    expected = ref.map_to_bins(X, thresholds, n_thresholds, missing_bin)
    np.testing.assert_array_equal(X_binned, expected)
    # The promise of the module: x <= thresholds[f, b] exactly when bin <= b.
    for feature in range(n_features):
        values = X[:, feature].astype(np.float64)
        present = ~np.isnan(values)
        for b in range(n_thresholds[feature]):
            np.testing.assert_array_equal(
                values[present] <= thresholds[feature, b], X_binned[present, feature] <= b
            )
    assert np.all((X_binned == missing_bin) == np.isnan(X))


# --- random draws ---------------------------------------------------------------------------


def test_uniform_per_row_matches_reference():
    out = np.full(50, -1.0)
    sampling.uniform_per_row(123, common.PURPOSE_BOOTSTRAP, 7, 50, out)
    np.testing.assert_array_equal(out, ref.uniform_per_row(123, common.PURPOSE_BOOTSTRAP, 7, 50))
    assert np.all((out >= 0) & (out < 1))
    assert np.unique(out).size == out.size


@pytest.mark.parametrize("seed", [0, 1, 2**31 - 1])
@pytest.mark.parametrize("n_features", [1, 4, 9])
def test_feature_masks_match_reference(seed, n_features):
    rng = np.random.default_rng(seed % 1000 + n_features)
    node_tree = np.array([0, 0, 1, 5, 1000, 3], dtype=np.int64)
    node_idx = np.array([0, 1, 2, 7, 3, 2**31], dtype=np.int64)
    for max_features in sorted({1, n_features, int(rng.integers(1, n_features + 1))}):
        out = np.zeros((node_tree.size, n_features), dtype=bool)
        out[:, 0] = True  # must be overwritten
        sampling.feature_masks(seed, node_tree, node_idx, n_features, max_features, out)
        expected = ref.feature_masks(seed, node_tree, node_idx, n_features, max_features)
        np.testing.assert_array_equal(out, expected)
        np.testing.assert_array_equal(out.sum(axis=1), max_features)


@pytest.mark.parametrize("seed", [0, 2**31 - 1])
def test_threshold_draws_match_reference(seed):
    node_tree = np.array([0, 0, 1, 5, 1000, 3], dtype=np.int64)
    node_idx = np.array([0, 1, 2, 7, 3, 2**31], dtype=np.int64)
    out = np.full((node_tree.size, 7), -1.0)
    sampling.threshold_draws(seed, node_tree, node_idx, 7, out)
    np.testing.assert_array_equal(out, ref.threshold_draws(seed, node_tree, node_idx, 7))
    assert np.all((out >= 0) & (out < 1)) and np.unique(out).size == out.size
    # Not the feature-sampling draws of the same nodes.
    assert not np.isin(out, [common.hash_uniform(seed, common.PURPOSE_FEATURES, 0, f) for f in range(7)]).any()


# --- histograms and totals --------------------------------------------------------------------


@pytest.mark.parametrize("unit_counts", [False, True])  # every row drawn once: counts not read
@pytest.mark.parametrize("n_trees", [None, 2])  # statistics shared by the trees, or per tree
@pytest.mark.parametrize("criterion", ["gini", "squared_error", "newton"])
@pytest.mark.parametrize("seed", range(3))
def test_node_totals_match_reference(criterion, seed, n_trees, unit_counts, chunking):
    rng = np.random.default_rng(seed)
    rows = make_rows(rng)
    if unit_counts:
        rows["sample_counts"][:] = 1
    stats = make_statistics(rng, criterion, rows["X_binned"].shape[0], 1.0, n_trees=n_trees)
    # An empty node too.
    node_start = np.append(rows["node_start"], 5)
    node_stop = np.append(rows["node_stop"], 5)
    node_tree = np.append(rows["node_tree"], 1)
    totals = np.full((node_start.size, stats.n_slots), 123, dtype=np.int64)
    histogram.node_totals(
        rows["sample_indices"], node_start, node_stop, node_tree, rows["sample_counts"], stats.row_slot,
        stats.row_stats, stats.stats_stride, totals, unit_counts=unit_counts,
    )
    expected = ref.node_totals(
        rows["sample_indices"], node_start, node_stop, node_tree, rows["sample_counts"], stats.row_slot,
        stats.row_stats, stats.n_slots, stats.stats_stride,
    )
    np.testing.assert_array_equal(totals, expected)
    np.testing.assert_array_equal(totals[:, -1], node_stop - node_start)
    assert not totals[-1].any()


@pytest.mark.parametrize("n_trees", [None, 2])  # statistics shared by the trees, or per tree
@pytest.mark.parametrize("criterion", ["entropy", "poisson", "newton"])
@pytest.mark.parametrize("seed", range(3))
def test_build_histograms_matches_reference(criterion, seed, n_trees, chunking):
    rng = np.random.default_rng(100 + seed)
    rows = make_rows(rng)
    stats = make_statistics(rng, criterion, rows["X_binned"].shape[0], n_trees=n_trees)
    shape = (rows["node_start"].size, rows["X_binned"].shape[1], rows["max_bins"], stats.n_slots)
    hist = rng.integers(-100, 100, shape)  # must be overwritten
    histogram.build_histograms(
        np.ascontiguousarray(rows["X_binned"]), rows["sample_indices"], rows["node_start"], rows["node_stop"],
        rows["node_tree"], np.ones(shape[:2], dtype=bool), rows["sample_counts"], stats.row_slot, stats.row_stats, stats.stats_stride,
        hist,
    )
    expected = reference_histograms(rows, stats)
    np.testing.assert_array_equal(hist, expected)
    # Summed over the bins of any feature, a histogram is the node's totals.
    np.testing.assert_array_equal(hist.sum(axis=2), np.repeat(reference_totals(rows, stats)[:, None], shape[1], 1))


@pytest.mark.parametrize("criterion", ["gini", "squared_error", "newton"])
def test_build_histograms_fills_the_pairs_of_the_feature_mask(criterion, chunking):
    rng = np.random.default_rng(["gini", "squared_error", "newton"].index(criterion) + 150)
    rows = make_rows(rng, n_features=7)
    stats = make_statistics(rng, criterion, rows["X_binned"].shape[0])
    shape = (rows["node_start"].size, rows["X_binned"].shape[1], rows["max_bins"], stats.n_slots)
    mask = random_feature_mask(rng, *shape[:2])
    before = rng.integers(-100, 100, shape)
    hist = before.copy()
    histogram.build_histograms(
        np.ascontiguousarray(rows["X_binned"]), rows["sample_indices"], rows["node_start"], rows["node_stop"],
        rows["node_tree"], mask, rows["sample_counts"], stats.row_slot, stats.row_stats, stats.stats_stride, hist,
    )
    np.testing.assert_array_equal(hist[mask], reference_histograms(rows, stats)[mask])
    # The other pairs are skipped, not filled.
    np.testing.assert_array_equal(hist[~mask], before[~mask])


@pytest.mark.parametrize("criterion", ["entropy", "poisson", "newton"])
def test_build_histograms_with_unit_counts_matches_reference(criterion, chunking):
    """``unit_counts=True`` (every row drawn once) skips the counts' reads and gives the same sums."""
    rng = np.random.default_rng(["entropy", "poisson", "newton"].index(criterion) + 170)
    rows = make_rows(rng, n_features=6)
    rows["sample_counts"][:] = 1
    stats = make_statistics(rng, criterion, rows["X_binned"].shape[0])
    shape = (rows["node_start"].size, rows["X_binned"].shape[1], rows["max_bins"], stats.n_slots)
    for mask in (np.ones(shape[:2], dtype=bool), random_feature_mask(rng, *shape[:2])):
        hist = rng.integers(-100, 100, shape)
        histogram.build_histograms(
            np.ascontiguousarray(rows["X_binned"]), rows["sample_indices"], rows["node_start"], rows["node_stop"],
            rows["node_tree"], mask, rows["sample_counts"], stats.row_slot, stats.row_stats, stats.stats_stride, hist,
            unit_counts=True,
        )
        np.testing.assert_array_equal(hist[mask], reference_histograms(rows, stats)[mask])


def build_rows_histograms(rows, stats, mask, hist, **options):
    """``histogram.build_histograms`` of ``make_rows``' nodes and ``stats`` into ``hist`` (C-ordered bins)."""
    histogram.build_histograms(
        np.ascontiguousarray(rows["X_binned"]), rows["sample_indices"], rows["node_start"], rows["node_stop"],
        rows["node_tree"], mask, rows["sample_counts"], stats.row_slot, stats.row_stats, stats.stats_stride, hist,
        **options,
    )


@pytest.mark.parametrize("criterion", ["gini", "newton"])
def test_build_histograms_into_workspace_rows(criterion, chunking):
    """``hist_rows``: node ``k`` fills row ``hist_rows[k]`` of a larger array, the other rows untouched
    (chunked nodes add their partial sums there too; packed counts with newton)."""
    rng = np.random.default_rng(160 + len(criterion))
    rows = make_rows(rng, n_features=5)
    rows["sample_counts"][:] = 1
    stats = make_statistics(rng, criterion, rows["X_binned"].shape[0])
    n_nodes = rows["node_start"].size
    shape = (2 * n_nodes + 1, rows["X_binned"].shape[1], rows["max_bins"], stats.n_slots)
    hist_rows = rng.permutation(shape[0])[:n_nodes]
    before = rng.integers(-100, 100, shape)
    hist = before.copy()
    options = {"count_bits": stats.count_bits} if criterion == "newton" else {}
    build_rows_histograms(
        rows, stats, np.ones((n_nodes, shape[1]), dtype=bool), hist, hist_rows=hist_rows, unit_counts=True, **options
    )
    np.testing.assert_array_equal(hist[hist_rows], reference_histograms(rows, stats))
    untouched = np.setdiff1d(np.arange(shape[0]), hist_rows)
    np.testing.assert_array_equal(hist[untouched], before[untouched])


@pytest.mark.parametrize("n_trees", [None, 2])
def test_build_histograms_with_constant_hessian_matches_reference(n_trees, chunking):
    """Squared error's (g, 1): the hessian slot derived from the row count equals the hessians' sum."""
    rng = np.random.default_rng(180)
    rows = make_rows(rng, n_features=6)
    rows["sample_counts"][:] = 1
    n_samples = rows["X_binned"].shape[0]
    shape = (n_samples,) if n_trees is None else (n_samples, n_trees)
    stats = statistics.newton_statistics(rng.normal(size=shape), np.full(shape, 0.7), 0.0)
    assert stats.constant_hessian == stats.row_stats[0, 1]
    hist_shape = (rows["node_start"].size, rows["X_binned"].shape[1], rows["max_bins"], 3)
    for mask in (np.ones(hist_shape[:2], dtype=bool), random_feature_mask(rng, *hist_shape[:2])):
        hist = rng.integers(-100, 100, hist_shape)
        build_rows_histograms(
            rows, stats, mask, hist, unit_counts=True, constant_hessian=stats.constant_hessian,
            count_bits=stats.count_bits,
        )
        np.testing.assert_array_equal(hist[mask], reference_histograms(rows, stats)[mask])
    hessians = np.full(shape, 0.7)
    hessians.flat[3] = 0.8
    assert statistics.newton_statistics(rng.normal(size=shape), hessians, 0.0).constant_hessian is None
    for kwargs in ({"count_bits": stats.count_bits}, {"unit_counts": True}):
        with pytest.raises(ValueError, match="count_bits and unit counts"):
            build_rows_histograms(rows, stats, mask, hist, constant_hessian=stats.constant_hessian, **kwargs)


@pytest.mark.parametrize("unit_counts", [False, True])
@pytest.mark.parametrize("n_trees", [None, 2])
def test_build_histograms_with_packed_counts_matches_reference(n_trees, unit_counts, chunking):
    """``count_bits``: each row's count added in the hessian's low bits gives the same (gradient, hessian,
    count) sums, negative gradient sums and bootstrap multiplicities included."""
    rng = np.random.default_rng(185)
    rows = make_rows(rng, n_features=6)
    if unit_counts:
        rows["sample_counts"][:] = 1
    n_samples = rows["X_binned"].shape[0]
    shape = (n_samples,) if n_trees is None else (n_samples, n_trees)
    stats = statistics.newton_statistics(
        rng.normal(-0.3, 1.0, shape), rng.uniform(0.0, 2.0, shape), 0.0, max_multiplicity=MAX_COUNT
    )
    assert stats.constant_hessian is None and stats.count_bits == n_samples.bit_length()
    hist_shape = (rows["node_start"].size, rows["X_binned"].shape[1], rows["max_bins"], 3)
    for mask in (np.ones(hist_shape[:2], dtype=bool), random_feature_mask(rng, *hist_shape[:2])):
        hist = rng.integers(-100, 100, hist_shape)
        build_rows_histograms(rows, stats, mask, hist, unit_counts=unit_counts, count_bits=stats.count_bits)
        expected = reference_histograms(rows, stats)
        np.testing.assert_array_equal(hist[mask], expected[mask])
    assert (expected[..., 0] < 0).any()
    with pytest.raises(ValueError, match="n_samples=64"):
        build_rows_histograms(rows, stats, mask, hist, count_bits=6)


@pytest.mark.parametrize("constant", [False, True])
def test_newton_statistics_leave_the_count_bits_free(constant):
    """The packed statistic's scale keeps ``(sum << count_bits) + count`` within int64 for every
    subset of rows, at the largest multiplicity; the other one uses its 62 bits."""
    rng = np.random.default_rng(186)
    n_samples, max_multiplicity = 1000, 3
    gradients = rng.normal(size=n_samples) * 1e5
    hessians = np.full(n_samples, 2.5) if constant else rng.uniform(0.0, 1e-3, n_samples)
    stats = statistics.newton_statistics(gradients, hessians, 0.0, max_multiplicity=max_multiplicity)
    assert stats.count_bits == 10 and (stats.constant_hessian is not None) == constant
    packed, other = (0, 1) if constant else (1, 0)
    packed_sum = int(np.abs(stats.row_stats[:, packed]).sum()) * max_multiplicity
    assert 2**61 < packed_sum << stats.count_bits <= 2**62
    if not constant:
        assert 2**61 < int(np.abs(stats.row_stats[:, other]).sum()) * max_multiplicity <= 2**62


@pytest.mark.parametrize("seed", range(3))
def test_subtract_histograms_gives_the_sibling(seed):
    rng = np.random.default_rng(200 + seed)
    rows = make_rows(rng)
    stats = make_statistics(rng, "gini" if seed % 2 else "squared_error", rows["X_binned"].shape[0])
    # Split each node's range at a random point: child = first part, sibling = the rest.
    middle = np.array([rng.integers(a, b + 1) for a, b in zip(rows["node_start"], rows["node_stop"])])
    parent = reference_histograms(rows, stats)
    child = reference_histograms({**rows, "node_stop": middle}, stats)
    expected = reference_histograms({**rows, "node_start": middle}, stats)
    # Pairs in another order than the arrays' rows, siblings written beside the children (as the grower does).
    order = rng.permutation(parent.shape[0])
    batch = np.concatenate([child, np.full_like(parent, 7)])
    histogram.subtract_histograms(parent, order, batch, order, batch[parent.shape[0]:])
    np.testing.assert_array_equal(batch[parent.shape[0]:], expected[order])
    np.testing.assert_array_equal(batch[:parent.shape[0]], child)
    # Into chosen rows of one workspace holding the parents and the children.
    n_nodes = parent.shape[0]
    workspace = np.concatenate([parent, child, np.full_like(parent, 7)])
    sibling_rows = 2 * n_nodes + rng.permutation(n_nodes)
    histogram.subtract_histograms(workspace, order, workspace, n_nodes + order, workspace, sibling_rows)
    np.testing.assert_array_equal(workspace[sibling_rows], expected[order])
    np.testing.assert_array_equal(workspace[:2 * n_nodes], np.concatenate([parent, child]))


# --- split finding ------------------------------------------------------------------------------


def run_split_kernels(rows, stats, totals, masks, min_samples_leaf, min_weight_leaf, rng, draws=None):
    """Both split kernels on the same nodes; returns their outputs as two dicts.

    ``draws`` (n_nodes, n_features) asks for random thresholds; ``None``, for the best ones.
    """
    n_nodes, n_slots = totals.shape
    if draws is None:
        draws = np.empty((0, masks.shape[1]))
    node_hist = reference_histograms(rows, stats)
    # Histograms at shuffled rows among unrelated ones, to check the hist_rows indirection.
    n_hist = n_nodes + 3
    hist = rng.integers(-(10**6), 10**6, (n_hist,) + node_hist.shape[1:])
    hist_rows = rng.permutation(n_hist)[:n_nodes].astype(np.int64)
    hist[hist_rows] = node_hist

    def outputs():
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

    common_args = (
        stats.criterion, stats.inv_scales, stats.regularization, min_samples_leaf, min_weight_leaf,
        *split_constraints(None, None, masks.shape),
    )
    no_categorical = np.empty(0, dtype=np.int32)
    bin_values = ref.skewed_bin_values(masks.shape[1], rows["missing_bin"] + 1)
    from_hist = outputs()
    splitting.find_best_splits_from_histograms(
        hist, hist_rows, totals, masks, no_categorical, draws, bin_values, rows["n_bins_non_missing"],
        rows["missing_bin"], *common_args, *from_hist.values(),
    )
    from_rows = outputs()
    splitting.find_best_splits_from_rows(
        rows["X_binned"], rows["sample_indices"], rows["node_start"], rows["node_stop"], rows["node_tree"],
        rows["sample_counts"], stats.row_slot, stats.row_stats, stats.stats_stride, totals, masks, no_categorical,
        draws, bin_values, rows["missing_bin"],
        *common_args, *from_rows.values(),
    )
    return from_hist, from_rows


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


# --- partition ----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_apply_splits_is_a_stable_partition(seed, chunking):
    rng = np.random.default_rng(300 + seed)
    rows = make_rows(rng, n_samples=90)
    X_binned, missing_bin = rows["X_binned"], rows["missing_bin"]
    sample_indices = rows["sample_indices"]
    # Disjoint node ranges (with gaps between them, which must stay untouched).
    cuts = np.sort(rng.choice(np.arange(1, sample_indices.size), 7, replace=False))
    node_start, node_stop = cuts[0:6:2].astype(np.int64), cuts[1:7:2].astype(np.int64)
    n_nodes = node_start.size
    split_feature = rng.integers(0, X_binned.shape[1], n_nodes).astype(np.int32)
    split_bin = np.array([rng.integers(0, rows["n_bins_non_missing"][f]) for f in split_feature], dtype=np.int32)
    split_missing_left = rng.random(n_nodes) < 0.5
    expected, n_left = ref.apply_splits(
        X_binned, sample_indices, node_start, node_stop, split_feature, split_bin, split_missing_left, missing_bin
    )
    result = sample_indices.copy()
    scratch = np.full_like(result, -1)
    partitioning.apply_splits(
        X_binned, result, scratch, node_start, node_stop, n_left, split_feature, split_bin, split_missing_left,
        missing_bin,
    )
    np.testing.assert_array_equal(result, expected)
    assert result.shape == sample_indices.shape and np.any(result != sample_indices)  # moved: not vacuous



def test_apply_splits_of_scattered_rows(chunking):
    """Nodes whose increasing rows are spread out take the prefetching version: the same partition."""
    rng = np.random.default_rng(310)
    rows = make_rows(rng, n_samples=600)
    X_binned, missing_bin = rows["X_binned"], rows["missing_bin"]
    sample_indices = np.sort(rng.choice(600, 60, replace=False)).astype(np.int32)
    node_start, node_stop = np.array([0, 30], dtype=np.int64), np.array([30, 60], dtype=np.int64)
    assert all(prefetch.is_sparse(sample_indices, start, stop) for start, stop in zip(node_start, node_stop))
    split_feature = np.array([0, 1], dtype=np.int32)
    split_bin = np.array([rows["n_bins_non_missing"][0] // 2, 0], dtype=np.int32)
    split_missing_left = np.array([False, True])
    expected, n_left = ref.apply_splits(
        X_binned, sample_indices, node_start, node_stop, split_feature, split_bin, split_missing_left, missing_bin
    )
    result = sample_indices.copy()
    partitioning.apply_splits(
        X_binned, result, np.empty_like(result), node_start, node_stop, n_left, split_feature, split_bin,
        split_missing_left, missing_bin,
    )
    np.testing.assert_array_equal(result, expected)
    assert result.shape == sample_indices.shape and np.any(result != sample_indices)

# --- node values -------------------------------------------------------------------------------


@pytest.mark.parametrize("criterion", CRITERIA)
@pytest.mark.parametrize("seed", range(2))
def test_node_values_match_reference(criterion, seed):
    rng = np.random.default_rng(400 + seed)
    rows = make_rows(rng)
    stats = make_statistics(rng, criterion, rows["X_binned"].shape[0], 0.7 * seed, 3.0 * seed)
    totals = reference_totals(rows, stats)
    expected = ref.node_values(criterion, totals, stats.inv_scales, stats.regularization)
    # Nodes where the criterion is defined: positive weight (and mean, for Poisson).
    keep = [
        i for i, (value, _, weight) in enumerate(expected) if weight > 0 and (criterion != "poisson" or value[0] > 0)
    ]
    totals = totals[keep]
    expected = [expected[i] for i in keep]
    n_values = N_CLASSES if criterion in ref.CLASSIFICATION else 1
    values = np.full((totals.shape[0], n_values), np.nan)
    impurity = np.full(totals.shape[0], np.nan)
    weight = np.full(totals.shape[0], np.nan)
    leaf_values.node_values(
        CRITERION_ID[criterion], totals, stats.inv_scales, stats.regularization, values, impurity, weight
    )
    for node, (expected_value, expected_impurity, expected_weight) in enumerate(expected):
        np.testing.assert_allclose(values[node], expected_value, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(weight[node], expected_weight, rtol=1e-12)
        if expected_impurity is not None:
            # The kernel clamps rounding noise below zero; compare on the scale of the node's data.
            scale = 1.0 if criterion in ref.CLASSIFICATION else 1.0 + abs(expected_impurity) + expected_value[0] ** 2
            assert impurity[node] >= 0
            assert abs(impurity[node] - expected_impurity) <= 1e-10 * scale, (node, impurity[node], expected_impurity)
    if criterion == "newton" and seed:
        # l1 = 3 zeroes the values of nodes with |G| <= 3 and shrinks the others, of both signs.
        assert (values == 0).any() and (values > 0).any() and (values < 0).any()



def test_add_leaf_values_updates_the_rows_score():
    rng = np.random.default_rng(420)
    raw = rng.normal(size=(50, 3))
    rows = rng.permutation(50)[:30].astype(np.int32)
    leaves = rng.integers(0, 7, 30)
    values = rng.normal(size=7)
    expected = raw.copy()
    expected[rows, 1] += values[leaves]
    leaf_values.add_leaf_values(raw, 1, rows, leaves, values)
    np.testing.assert_array_equal(raw, expected)


def range_problem(rng, n_samples, n_ranges):
    """``(raw, score_idx, rows, boundaries, values)``: ranges (one empty) of permuted rows, from position 3."""
    rows = rng.permutation(n_samples + 5)[:n_samples].astype(np.int32)
    cuts = np.sort(rng.choice(np.arange(4, n_samples + 3), n_ranges - 2, replace=False))
    boundaries = np.concatenate([[3], cuts[:1], cuts, [n_samples + 3]]).astype(np.int64)  # range 1 is empty
    rows = np.concatenate([rng.permutation(np.arange(n_samples + 5, n_samples + 8)).astype(np.int32), rows])
    return rng.normal(size=(n_samples + 8, 3)), 2, rows, boundaries, rng.normal(size=n_ranges)


def test_add_range_values_updates_the_rows_of_each_range():
    """Ranges over several tasks of ``RANGE_CHUNK`` positions; the rows before the first range untouched."""
    rng = np.random.default_rng(421)
    raw, score_idx, rows, boundaries, values = range_problem(rng, 3 * leaf_values.RANGE_CHUNK, 9)
    expected = raw.copy()
    for r in range(values.size):
        expected[rows[boundaries[r] : boundaries[r + 1]], score_idx] += values[r]
    leaf_values.add_range_values(raw, score_idx, rows, boundaries, values)
    np.testing.assert_array_equal(raw, expected)

# --- prediction -----------------------------------------------------------------------------

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


@pytest.mark.parametrize("max_bins", [4, 8])
@pytest.mark.parametrize("n_distinct", [2, 4, 8, 50])
def test_bin_mapper_leaves_the_missing_bin_to_nan(max_bins, n_distinct):
    """Fitted thresholds + map_to_bins: only NaN lands in the missing bin (``max_bins - 1``).

    ``max_bins`` counts the missing bin, so a feature may use at most
    ``max_bins - 1`` value bins, i.e. ``max_bins - 2`` thresholds.
    """
    from gpuforest.binning import BinMapper

    rng = np.random.default_rng(n_distinct)
    X = rng.integers(0, n_distinct, (60, 2)).astype(np.float32)
    X[:n_distinct, :] = np.arange(n_distinct)[:, None]  # every value present
    X[rng.random(X.shape) < 0.1] = np.nan
    mapper = BinMapper(max_bins=max_bins).fit(X)
    missing_bin = mapper.missing_bin
    X_binned = np.empty(X.shape, dtype=np.uint8, order="F")
    binning.map_to_bins(X, mapper.bin_thresholds_, mapper.n_thresholds_, missing_bin, X_binned)
    expected = ref.map_to_bins(X, mapper.bin_thresholds_, mapper.n_thresholds_, missing_bin)
    np.testing.assert_array_equal(X_binned, expected)
    assert np.all(mapper.n_bins_non_missing_ <= missing_bin)
    np.testing.assert_array_equal(X_binned == missing_bin, np.isnan(X))


@pytest.mark.parametrize("n_samples, n_draws", [(1, 5), (37, 37), (50, 20)])
def test_bootstrap_counts_match_reference(n_samples, n_draws):
    out = np.full((3, n_samples), -1, dtype=np.int32)
    sampling.bootstrap_counts(11, 5, n_draws, out)
    np.testing.assert_array_equal(out, ref.bootstrap_counts(11, 5, 3, n_samples, n_draws))
    assert np.all(out.sum(axis=1) == n_draws)


def test_bootstrap_counts_do_not_depend_on_the_batch():
    """Trees 2 and 3 drawn in a batch of five equal trees 2 and 3 drawn on their own."""
    batch = np.empty((5, 40), dtype=np.int32)
    sampling.bootstrap_counts(7, 0, 40, batch)
    alone = np.empty((2, 40), dtype=np.int32)
    sampling.bootstrap_counts(7, 2, 40, alone)
    np.testing.assert_array_equal(batch[2:4], alone)
    # Out of 40 draws, a row is left out with probability (39/40)^40 ~ 0.36.
    assert 0.2 < np.mean(batch == 0) < 0.5
