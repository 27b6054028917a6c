"""Kernel tier, kernels/cpu/histogram.py: node totals, histograms (every layout and counting option) and subtraction;
against the naive reference of ``tests/reference.py``.

Inputs: the small random problems of ``tests/kernel_problems.py``.
"""

import numpy as np
import pytest

from gpuforest import statistics
from gpuforest.kernels.cpu import histogram

try:
    from . import reference as ref
    from .kernel_problems import (
        MAX_COUNT, make_rows, make_statistics, random_feature_mask, reference_histograms, reference_totals,
    )
except ImportError:
    import reference as ref
    from kernel_problems import (
        MAX_COUNT, make_rows, make_statistics, random_feature_mask, reference_histograms, reference_totals,
    )


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
