"""CUDA histogram kernels (numba's simulator) against the CPU kernels: identical outputs.

Small random batches: two trees with rows drawn up to three times, NaN /
missing bins, three classes and the regression, Poisson and Newton statistics
of ``gpuforest.statistics``, an empty node and a one-row node. The simulator
runs every CUDA thread as a Python thread, so the launch constants are made
small here (few threads per block, few rows per chunk, so that nodes span
several chunks); one test keeps the real ones.
"""

import sys

import numpy as np
import pytest

from gpuforest.kernels.cpu import histogram as cpu_histogram
from gpuforest.kernels.cuda import histogram as cuda_histogram

try:
    from .kernel_problems import MAX_COUNT, make_statistics, random_feature_mask
except ImportError:
    from kernel_problems import MAX_COUNT, make_statistics, random_feature_mask


# --- problem generator (shared with test_kernels_cuda_splitting.py) ---------------------------


def make_batch(rng, n_samples=40, n_features=3, max_bins=9, n_trees=2, n_sub_nodes=2, small_nodes=True):
    """Binned rows, per-tree draws and a batch of nodes of several trees.

    Nodes: each tree's root and ``n_sub_nodes`` random sub-ranges (they may
    overlap, which the kernels allow), then, with ``small_nodes``, a node of one
    row and an empty node.
    """
    missing_bin = max_bins - 1
    n_bins_non_missing = rng.integers(1, missing_bin + 1, n_features).astype(np.int32)
    n_bins_non_missing[0] = missing_bin
    X_binned = np.empty((n_samples, n_features), dtype=np.uint8, order="F")
    for feature in range(n_features):
        X_binned[:, feature] = rng.integers(0, n_bins_non_missing[feature], n_samples)
        if feature > 0:  # feature 0 never misses
            missing_rate = (0.0, 0.15, 0.3)[feature % 3]
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
        for _ in range(n_sub_nodes):
            length = int(rng.integers(2, high - low + 1))
            start = int(rng.integers(low, high - length + 1))
            node_start.append(start)
            node_stop.append(start + length)
            node_tree.append(tree)
    if small_nodes:
        node_start += [offsets[1] + 1, 3]
        node_stop += [offsets[1] + 2, 3]
        node_tree += [1, 0]
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


def row_args(batch, stats):
    """``(sample_indices, node_start, node_stop, node_tree, sample_counts, row_slot, row_stats, stats_stride)``."""
    return (
        batch["sample_indices"], batch["node_start"], batch["node_stop"], batch["node_tree"],
        batch["sample_counts"], stats.row_slot, stats.row_stats, stats.stats_stride,
    )


def cpu_totals(batch, stats):
    totals = np.empty((batch["node_start"].size, stats.n_slots), dtype=np.int64)
    cpu_histogram.node_totals(*row_args(batch, stats), totals)
    return totals


def histogram_args(batch, stats, feature_mask=None):
    """The arguments of ``build_histograms`` before ``hist``; ``feature_mask=None``: every feature."""
    if feature_mask is None:
        feature_mask = np.ones((batch["node_start"].size, batch["X_binned"].shape[1]), dtype=bool)
    sample_indices, node_start, node_stop, node_tree, *per_row = row_args(batch, stats)
    return (batch["X_binned"], sample_indices, node_start, node_stop, node_tree, feature_mask, *per_row)


def cpu_histograms(batch, stats, feature_mask=None):
    """The CPU kernel's histograms, from the C-ordered bins it reads in the CPU backend
    (``CPUBackend.binned_rows``): no extra compiled layout for the tests alone."""
    shape = (batch["node_start"].size, batch["X_binned"].shape[1], batch["max_bins"], stats.n_slots)
    hist = np.empty(shape, dtype=np.int64)
    X_binned, *args = histogram_args(batch, stats, feature_mask)
    cpu_histogram.build_histograms(np.ascontiguousarray(X_binned), *args, hist)
    return hist


@pytest.fixture
def small_launches(monkeypatch):
    """Few threads per block and few rows per chunk: fast under the simulator, many chunks per node.

    The simulator's block manager polls its threads for barriers while holding
    the GIL; a short switch interval roughly halves the time of small blocks.
    """
    monkeypatch.setattr(cuda_histogram, "THREADS", 16)
    monkeypatch.setattr(cuda_histogram, "SUBTRACT_THREADS", 32)
    monkeypatch.setattr(cuda_histogram, "MIN_ROWS_PER_CHUNK", 7)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    yield
    sys.setswitchinterval(interval)


def cuda_histograms(batch, stats, rng, feature_mask=None):
    shape = (batch["node_start"].size, batch["X_binned"].shape[1], batch["max_bins"], stats.n_slots)
    hist = rng.integers(-100, 100, shape)  # must be overwritten
    cuda_histogram.build_histograms(*histogram_args(batch, stats, feature_mask), hist)
    return hist


# --- build_histograms ------------------------------------------------------------------------


@pytest.mark.parametrize("criterion", ["gini", "squared_error", "poisson", "newton"])
def test_build_histograms_matches_cpu(criterion, small_launches):
    rng = np.random.default_rng(["gini", "squared_error", "poisson", "newton"].index(criterion))
    batch = make_batch(rng)
    stats = make_statistics(rng, criterion, batch["X_binned"].shape[0], 1.0)
    hist = cuda_histograms(batch, stats, rng)
    expected = cpu_histograms(batch, stats)
    np.testing.assert_array_equal(hist, expected)
    assert not hist[-1].any()  # the empty node
    assert hist[-2, :, :, -1].sum() == batch["X_binned"].shape[1]  # the one-row node


def test_build_histograms_with_unit_counts_matches_cpu(small_launches):
    """The kernel without the counts' reads (every row drawn once) gives the CPU's sums."""
    rng = np.random.default_rng(12)
    batch = make_batch(rng)
    batch["sample_counts"][:] = 1
    stats = make_statistics(rng, "newton", batch["X_binned"].shape[0], 1.0)
    hist = rng.integers(-100, 100, (batch["node_start"].size, batch["X_binned"].shape[1], batch["max_bins"], 3))
    cuda_histogram.build_histograms(*histogram_args(batch, stats), hist, unit_counts=True)
    np.testing.assert_array_equal(hist, cpu_histograms(batch, stats))


def test_build_histograms_into_workspace_rows_matches_cpu(small_launches):
    """``hist_rows``: each node's histogram in its own row of a larger array; the other rows untouched."""
    rng = np.random.default_rng(13)
    batch = make_batch(rng)
    stats = make_statistics(rng, "newton", batch["X_binned"].shape[0], 1.0)
    n_nodes = batch["node_start"].size
    before = rng.integers(-100, 100, (n_nodes + 3, batch["X_binned"].shape[1], batch["max_bins"], 3))
    hist_rows = rng.permutation(n_nodes + 3)[:n_nodes]
    hist = before.copy()
    cuda_histogram.build_histograms(*histogram_args(batch, stats), hist, hist_rows=hist_rows)
    np.testing.assert_array_equal(hist[hist_rows], cpu_histograms(batch, stats))
    untouched = np.setdiff1d(np.arange(hist.shape[0]), hist_rows)
    np.testing.assert_array_equal(hist[untouched], before[untouched])


@pytest.mark.parametrize("criterion, shared", [("gini", True), ("newton", True), ("gini", False)])
def test_build_histograms_with_per_tree_statistics_matches_cpu(criterion, shared, small_launches, monkeypatch):
    """Each tree reads its own statistics (``stats_stride = n_samples``), in shared memory or with global atomics."""
    if not shared:
        monkeypatch.setattr(cuda_histogram, "SHARED_BUDGET_BYTES", 64)
    rng = np.random.default_rng(16 + 2 * shared + (criterion == "newton"))
    batch = make_batch(rng, n_sub_nodes=1)
    stats = make_statistics(rng, criterion, batch["X_binned"].shape[0], 1.0, n_trees=2)
    np.testing.assert_array_equal(cuda_histograms(batch, stats, rng), cpu_histograms(batch, stats))


@pytest.mark.real_launch_sizes
def test_build_histograms_with_the_real_launch_constants():
    """THREADS = 256, chunks of MIN_ROWS_PER_CHUNK rows: one chunk per node here."""
    rng = np.random.default_rng(10)
    batch = make_batch(rng, n_samples=30, n_features=2, n_sub_nodes=1)
    stats = make_statistics(rng, "entropy", 30)
    np.testing.assert_array_equal(cuda_histograms(batch, stats, rng), cpu_histograms(batch, stats))


def test_build_histograms_256_bins_several_feature_groups(small_launches, monkeypatch):
    """256 bins (the missing bin 255) and three features in groups of two (the last one partial)."""
    monkeypatch.setattr(cuda_histogram, "MAX_FEATURES_PER_BLOCK", 2)
    rng = np.random.default_rng(11)
    batch = make_batch(rng, n_samples=60, n_features=3, max_bins=256, n_sub_nodes=1)
    stats = make_statistics(rng, "gini", 60)
    assert cuda_histogram.features_per_block(256, stats.n_slots, 3) == 2
    hist = cuda_histograms(batch, stats, rng)
    np.testing.assert_array_equal(hist, cpu_histograms(batch, stats))
    assert hist[:, 1:, 255, -1].any()  # missing values land in bin 255


def test_build_histograms_without_shared_memory(small_launches, monkeypatch):
    """Histograms larger than the shared budget (many classes) use global atomics only."""
    monkeypatch.setattr(cuda_histogram, "SHARED_BUDGET_BYTES", 64)
    rng = np.random.default_rng(12)
    batch = make_batch(rng, n_sub_nodes=1)
    stats = make_statistics(rng, "misclassification", batch["X_binned"].shape[0])
    assert cuda_histogram.features_per_block(batch["max_bins"], stats.n_slots, 3) == 0
    np.testing.assert_array_equal(cuda_histograms(batch, stats, rng), cpu_histograms(batch, stats))


def test_build_histograms_of_no_node_and_of_empty_nodes(small_launches):
    rng = np.random.default_rng(13)
    batch = make_batch(rng)
    stats = make_statistics(rng, "gini", batch["X_binned"].shape[0])
    n_features, n_bins = batch["X_binned"].shape[1], batch["max_bins"]
    for node_start in ([], [4, 9]):
        nodes = {
            "node_start": np.array(node_start, dtype=np.int64),
            "node_stop": np.array(node_start, dtype=np.int64),
            "node_tree": np.zeros(len(node_start), dtype=np.int64),
        }
        hist = np.ones((len(node_start), n_features, n_bins, stats.n_slots), dtype=np.int64)
        cuda_histogram.build_histograms(*histogram_args({**batch, **nodes}, stats), hist)
        assert not hist.any()


@pytest.mark.parametrize("shared", [True, False])
def test_build_histograms_with_a_feature_mask_matches_cpu(shared, small_launches, monkeypatch):
    """Masked-out features are skipped: whole feature groups (the block returns), or some of a group."""
    monkeypatch.setattr(cuda_histogram, "MAX_FEATURES_PER_BLOCK", 2)  # groups {0, 1}, {2, 3}, {4}
    if not shared:
        monkeypatch.setattr(cuda_histogram, "SHARED_BUDGET_BYTES", 64)
    rng = np.random.default_rng(15 + shared)
    batch = make_batch(rng, n_features=5, n_sub_nodes=1)
    stats = make_statistics(rng, "gini" if shared else "newton", batch["X_binned"].shape[0], 1.0)
    mask = random_feature_mask(rng, batch["node_start"].size, 5)
    mask[1] = [False, False, False, False, True]  # only the last group
    mask[2] = [False, True, True, False, False]  # part of two groups
    hist = cuda_histograms(batch, stats, rng, mask)
    np.testing.assert_array_equal(hist[mask], cpu_histograms(batch, stats, mask)[mask])
    # The launcher zeroes every pair; nothing is added to the skipped ones.
    assert not hist[~mask].any()


# --- the task table ---------------------------------------------------------------------------


@pytest.mark.parametrize("block_sizes", [(32, 64), (16,)])  # one pass over the 40 nodes, or three
@pytest.mark.parametrize("overlap", [False, True])
def test_chunk_table_covers_every_chunk(overlap, block_sizes, monkeypatch):
    """``grid_x`` blocks cover all chunks, also when nodes overlap (the chunks grow then)."""
    monkeypatch.setattr(cuda_histogram, "BLOCK_SIZES", block_sizes)
    rng = np.random.default_rng(14)
    n_entries = 1000
    if overlap:
        node_start = rng.integers(0, 500, 40)
        node_stop = node_start + rng.integers(0, 500, 40)
    else:
        cuts = np.sort(rng.choice(np.arange(1, n_entries), 39, replace=False))
        node_start = np.concatenate([[0], cuts])
        node_stop = np.concatenate([cuts, [n_entries]])
    node_start, node_stop = node_start.astype(np.int64), node_stop.astype(np.int64)
    grid_x, offsets, chunk_rows = cuda_histogram.chunk_table(node_start, node_stop, n_entries, 16)
    lengths = node_stop - node_start
    assert offsets[0] == 0
    assert chunk_rows.shape == (1,) and chunk_rows.dtype == np.int64
    if overlap:
        assert lengths.sum() > n_entries and chunk_rows[0] > 16
    else:
        assert chunk_rows[0] == 16
    np.testing.assert_array_equal(np.diff(offsets), -(-lengths // chunk_rows[0]))
    assert offsets[-1] <= grid_x == 40 + -(-n_entries // 16)


# --- node_totals and subtract_histograms --------------------------------------------------------


@pytest.mark.parametrize("n_trees", [None, 2])  # statistics shared by the trees, or per tree
@pytest.mark.parametrize("criterion", ["entropy", "squared_error", "newton"])
def test_node_totals_matches_cpu(criterion, n_trees, small_launches):
    rng = np.random.default_rng(20 + ["entropy", "squared_error", "newton"].index(criterion))
    batch = make_batch(rng, n_samples=50)
    stats = make_statistics(rng, criterion, 50, 1.0, n_trees=n_trees)
    totals = np.full((batch["node_start"].size, stats.n_slots), 123, dtype=np.int64)
    cuda_histogram.node_totals(*row_args(batch, stats), totals)
    np.testing.assert_array_equal(totals, cpu_totals(batch, stats))
    np.testing.assert_array_equal(totals[:, -1], batch["node_stop"] - batch["node_start"])


def test_node_totals_with_the_real_launch_constants():
    rng = np.random.default_rng(23)
    batch = make_batch(rng, n_samples=30, n_sub_nodes=0)
    stats = make_statistics(rng, "poisson", 30)
    totals = np.full((batch["node_start"].size, stats.n_slots), 5, dtype=np.int64)
    cuda_histogram.node_totals(*row_args(batch, stats), totals)
    np.testing.assert_array_equal(totals, cpu_totals(batch, stats))


def test_subtract_histograms_matches_cpu(small_launches, monkeypatch):
    monkeypatch.setattr(cuda_histogram, "MAX_SUBTRACT_BLOCKS", 2)  # grid-stride
    rng = np.random.default_rng(30)
    shape = (3, 2, 9, 4)
    parent = rng.integers(-(2**62), 2**62, shape)
    child = rng.integers(-(2**62), 2**62, shape)
    parent_rows, child_rows = np.array([2, 0, 2, 1]), np.array([1, 1, 0, 2])
    expected = np.empty((4,) + shape[1:], dtype=np.int64)
    cpu_histogram.subtract_histograms(parent, parent_rows, child, child_rows, expected)
    np.testing.assert_array_equal(expected, parent[parent_rows] - child[child_rows])
    sibling = np.full_like(expected, 7)
    cuda_histogram.subtract_histograms(parent, parent_rows, child, child_rows, sibling)
    np.testing.assert_array_equal(sibling, expected)
    # Into chosen rows of a workspace; the others untouched.
    workspace = np.full((6,) + shape[1:], 7, dtype=np.int64)
    sibling_rows = np.array([5, 0, 3, 2])
    cuda_histogram.subtract_histograms(parent, parent_rows, child, child_rows, workspace, sibling_rows)
    np.testing.assert_array_equal(workspace[sibling_rows], expected)
    assert (workspace[[1, 4]] == 7).all()


def test_ptx_specializations_are_well_formed():
    """Names unique; (name, python function, numba argument types, block size); 256 bins, 3/4/11 slots."""
    specs = cuda_histogram.ptx_specializations()
    names = [spec[0] for spec in specs]
    assert len(set(names)) == len(names)
    for name, function, argument_types, block in specs:
        assert callable(function) and isinstance(argument_types, tuple) and block > 0
    for n_slots in (3, 4, 11):
        assert any(f"bins256_slots{n_slots}_" in name for name in names)
        assert f"node_totals_slots{n_slots}" in names
