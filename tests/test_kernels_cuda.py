"""Kernel tier, CUDA twins: every CUDA launcher against its CPU kernel, bit for bit.

Each test builds a small random problem, runs the CPU kernel of
``gpuforest.kernels.cpu`` and the launcher of the same name of
``gpuforest.kernels.cuda`` on copies of identical inputs, and asserts that all
outputs are exactly equal (floats included). Without a GPU the launchers run
under numba's CUDA simulator (``tests/conftest.py``), which executes every
thread in Python, so the problems are a few dozen rows. ``GPUFOREST_REAL_CUDA=1``
runs the same tests on a real device (arrays copied there with
``numba.cuda.to_device``).

Launches are capped at 65535 blocks and use grid-stride loops; the tests
shrink the cap (``MAX_BLOCKS``) to 1 so that one block or one thread covers
several tiles, nodes or rows.
"""

import numpy as np
import pytest
from numba import config, cuda

from gpuforest.binning import BinMapper
from gpuforest.kernels import common
from gpuforest.kernels.cpu import binning, leaf_values, partitioning, predict, sampling
from gpuforest.kernels.cuda import binning as cuda_binning
from gpuforest.kernels.cuda import histogram as cuda_histogram
from gpuforest.kernels.cuda import launch as cuda_launch
from gpuforest.kernels.cuda import leaf_values as cuda_leaf_values
from gpuforest.kernels.cuda import partitioning as cuda_partitioning
from gpuforest.kernels.cuda import predict as cuda_predict
from gpuforest.kernels.cuda import sampling as cuda_sampling
from gpuforest.tree import pack_complete_forest, pack_forest, pack_node_info

try:
    from . import reference as ref
    from .kernel_problems import (
        CRITERIA, CRITERION_ID, N_CLASSES, NO_BITSETS, as_tree, make_rows, make_statistics, mixed_forest, random_tree,
    )
except ImportError:
    import reference as ref
    from kernel_problems import (
        CRITERIA, CRITERION_ID, N_CLASSES, NO_BITSETS, as_tree, make_rows, make_statistics, mixed_forest, random_tree,
        range_problem,
    )

SIMULATOR = bool(config.ENABLE_CUDASIM)

if not SIMULATOR and not cuda.is_available():
    pytest.skip("GPUFOREST_REAL_CUDA=1 but no usable CUDA device", allow_module_level=True)


def run_both(cpu_kernel, cuda_launcher, args):
    """Run both kernels on their own copies of ``args``; returns (cpu_args, cuda_args) afterwards.

    Arrays are copied (order kept), so in-place outputs can be compared
    argument by argument; on a real device the CUDA copies go through device
    memory and come back.
    """
    cpu_args = [a.copy(order="K") if isinstance(a, np.ndarray) else a for a in args]
    cuda_args = [a.copy(order="K") if isinstance(a, np.ndarray) else a for a in args]
    cpu_kernel(*cpu_args)
    if SIMULATOR:
        cuda_launcher(*cuda_args)
    else:
        device_args = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in cuda_args]
        cuda_launcher(*device_args)
        cuda.synchronize()
        cuda_args = [d.copy_to_host() if isinstance(a, np.ndarray) else a for a, d in zip(cuda_args, device_args)]
    return cpu_args, cuda_args


def assert_all_equal(cpu_args, cuda_args):
    """Every array argument identical: same dtype, shape and bytes (so also the same NaNs)."""
    for index, (expected, actual) in enumerate(zip(cpu_args, cuda_args)):
        if isinstance(expected, np.ndarray):
            assert actual.dtype == expected.dtype and actual.shape == expected.shape, index
            np.testing.assert_array_equal(actual, expected, err_msg=f"argument {index}")
            assert actual.tobytes() == expected.tobytes(), f"argument {index} differs in its bits"


@pytest.fixture(params=["full", "one_block"])
def grid(request, monkeypatch):
    """Each kernel at its normal launch size, and squeezed into a single block."""
    if request.param == "one_block":
        monkeypatch.setattr(cuda_launch, "MAX_BLOCKS", 1)
        for module in (cuda_binning, cuda_sampling):
            monkeypatch.setattr(module, "MAX_BLOCKS", 1)
    return request.param


# --- binning -------------------------------------------------------------------------------


def make_binning_problem(rng, n_samples, n_features, max_bins):
    """Float32 X with NaN and +-inf, per-feature thresholds (some equal to data values, one feature none)."""
    X = rng.normal(size=(n_samples, n_features)).astype(np.float32)
    X[:, 1] = rng.integers(0, 5, n_samples)  # few distinct values
    X[rng.random(X.shape) < 0.1] = np.nan
    X[0, 2], X[1, 2] = np.inf, -np.inf
    thresholds = np.full((n_features, max_bins), np.inf)
    n_thresholds = np.zeros(n_features, dtype=np.int32)
    for feature in range(n_features):
        distinct = np.unique(X[:, feature][~np.isnan(X[:, feature])]).astype(np.float64)
        finite = distinct[np.isfinite(distinct)]
        if feature == 3:
            chosen = np.empty(0)  # no threshold: everything in bin 0 (or missing)
        elif feature % 3 == 1:
            # Thresholds equal to data values: x == threshold goes to the lower bin.
            chosen = np.sort(rng.choice(finite, min(finite.size, max_bins - 2), replace=False))
        else:
            midpoints = (distinct[:-1] + distinct[1:]) / 2
            midpoints = midpoints[np.isfinite(midpoints)]
            size = min(midpoints.size, int(rng.integers(1, max_bins - 1)))
            chosen = np.sort(rng.choice(midpoints, size, replace=False))
        thresholds[feature, : chosen.size] = chosen
        n_thresholds[feature] = chosen.size
    return X, thresholds, n_thresholds, max_bins - 1


@pytest.mark.parametrize("shape", [(37, 5), (70, 40)])
def test_map_to_bins(grid, shape):
    rng = np.random.default_rng(shape[1])
    X, thresholds, n_thresholds, missing_bin = make_binning_problem(rng, *shape, max_bins=16)
    X_binned = np.full(shape, 77, dtype=np.uint8, order="F")
    cpu_args, cuda_args = run_both(
        binning.map_to_bins, cuda_binning.map_to_bins, (X, thresholds, n_thresholds, missing_bin, X_binned)
    )
    assert cuda_args[4].flags.f_contiguous
    assert_all_equal(cpu_args, cuda_args)
    assert np.all((cuda_args[4] == missing_bin) == np.isnan(X))
    assert np.unique(cuda_args[4]).size > 5  # not vacuous


# float64: values a float32 cannot tell apart (timestamps with fractions of a second), as validation keeps them.
@pytest.mark.parametrize("dtype, offset", [(np.float32, 0.0), (np.float64, 1.7e9)])
def test_map_to_bins_with_fitted_bin_mapper(dtype, offset):
    rng = np.random.default_rng(11)
    X = rng.integers(0, 12, (45, 3)).astype(dtype)
    X[:, 2] = offset + rng.normal(size=45)
    X[rng.random(X.shape) < 0.1] = np.nan
    mapper = BinMapper(max_bins=8).fit(X)
    X_binned = np.zeros(X.shape, dtype=np.uint8, order="F")
    cpu_args, cuda_args = run_both(
        binning.map_to_bins, cuda_binning.map_to_bins,
        (X, mapper.bin_thresholds_, mapper.n_thresholds_, mapper.missing_bin, X_binned),
    )
    assert_all_equal(cpu_args, cuda_args)
    assert np.unique(cuda_args[4][:, 2]).size == mapper.n_bins_non_missing_[2] + 1  # every bin, NaN's too


# --- random draws ---------------------------------------------------------------------------


@pytest.mark.parametrize("n_trees, n_samples, n_draws", [(1, 1, 3), (3, 40, 40), (2, 90, 30)])
def test_bootstrap_counts(grid, n_trees, n_samples, n_draws):
    out = np.full((n_trees, n_samples), -1, dtype=np.int32)
    cpu_args, cuda_args = run_both(sampling.bootstrap_counts, cuda_sampling.bootstrap_counts, (5, 2, n_draws, out))
    assert_all_equal(cpu_args, cuda_args)
    assert np.all(cuda_args[3].sum(axis=1) == n_draws)


@pytest.mark.parametrize("n_rows", [1, 50, 300])
def test_uniform_per_row(grid, n_rows):
    out = np.full(n_rows, -1.0)
    cpu_args, cuda_args = run_both(
        sampling.uniform_per_row, cuda_sampling.uniform_per_row, (2**31 - 1, common.PURPOSE_BOOTSTRAP, 7, n_rows, out)
    )
    assert_all_equal(cpu_args, cuda_args)
    assert np.all((cuda_args[4] >= 0) & (cuda_args[4] < 1))


@pytest.mark.parametrize(
    "seed, n_features, n_nodes", [(0, 1, 6), (1, 4, 6), (2**31 - 1, 9, 6), (3, 70, 4), (4, 300, 2)]
)
def test_feature_masks(grid, seed, n_features, n_nodes):
    """Blocks of 64 (several nodes per block when squeezed), 128 and 256 threads (two chunks of features)."""
    rng = np.random.default_rng(seed % 1000 + n_features)
    node_tree = np.array([0, 0, 1, 5, 1000, 3], dtype=np.int64)[:n_nodes]
    node_idx = np.array([0, 1, 2, 7, 3, 2**31], dtype=np.int64)[:n_nodes]
    draws = {int(rng.integers(1, n_features + 1))}
    if n_features <= 256:  # the wide case is slow under the simulator: one draw
        draws |= {1, n_features}
    for max_features in sorted(draws):
        out = np.zeros((n_nodes, n_features), dtype=bool)
        out[:, 0] = True  # must be overwritten
        cpu_args, cuda_args = run_both(
            sampling.feature_masks, cuda_sampling.feature_masks,
            (seed, node_tree, node_idx, n_features, max_features, out),
        )
        assert_all_equal(cpu_args, cuda_args)
        np.testing.assert_array_equal(cuda_args[5].sum(axis=1), max_features)


@pytest.mark.parametrize("seed, n_features, n_nodes", [(0, 1, 6), (2**31 - 1, 9, 6), (3, 70, 4)])
def test_threshold_draws(grid, seed, n_features, n_nodes):
    """One thread per (node, feature): several per thread when squeezed into one block."""
    node_tree = np.array([0, 0, 1, 5, 1000, 3], dtype=np.int64)[:n_nodes]
    node_idx = np.array([0, 1, 2, 7, 3, 2**31], dtype=np.int64)[:n_nodes]
    out = np.full((n_nodes, n_features), -1.0)
    cpu_args, cuda_args = run_both(
        sampling.threshold_draws, cuda_sampling.threshold_draws, (seed, node_tree, node_idx, n_features, out)
    )
    assert_all_equal(cpu_args, cuda_args)
    np.testing.assert_array_equal(cuda_args[4], ref.threshold_draws(seed, node_tree, node_idx, n_features))


def test_threshold_draws_without_nodes():
    cuda_sampling.threshold_draws(0, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), 5, np.zeros((0, 5)))


def test_feature_masks_without_nodes():
    out = np.zeros((0, 5), dtype=bool)
    empty = np.zeros(0, dtype=np.int64)
    cuda_sampling.feature_masks(0, empty, empty, 5, 2, out)


# --- partition ----------------------------------------------------------------------------------


def partition_problem(rng, n_samples):
    """Disjoint nodes with gaps between them (left untouched), one of them empty, one larger than a block."""
    rows = make_rows(rng, n_samples=n_samples)
    X_binned, missing_bin = rows["X_binned"], rows["missing_bin"]
    sample_indices = rows["sample_indices"]
    n_entries = sample_indices.size
    cuts = np.sort(rng.choice(np.arange(1, n_entries), 5, replace=False))
    # Nodes: [cuts0, cuts1), an empty one at cuts2, [cuts2, cuts3), [cuts4, n_entries).
    node_start = np.array([cuts[0], cuts[2], cuts[2], cuts[4]], dtype=np.int64)
    node_stop = np.array([cuts[1], cuts[2], cuts[3], n_entries], dtype=np.int64)
    n_nodes = node_start.size
    split_feature = rng.integers(0, X_binned.shape[1], n_nodes).astype(np.int32)
    split_bin = np.array([rng.integers(0, rows["n_bins_non_missing"][f]) for f in split_feature], dtype=np.int32)
    split_missing_left = rng.random(n_nodes) < 0.5
    # Missing values in the split feature, sent left in one node and right in another.
    for node, missing_left in ((2, False), (3, True)):
        split_feature[node] = 2
        split_bin[node] = rng.integers(0, rows["n_bins_non_missing"][2])
        split_missing_left[node] = missing_left
        X_binned[sample_indices[node_start[node] : node_start[node] + 2], 2] = missing_bin
    _, n_left = ref.apply_splits(
        X_binned, sample_indices, node_start, node_stop, split_feature, split_bin, split_missing_left, missing_bin
    )
    scratch = np.full_like(sample_indices, -1)
    return (
        X_binned, sample_indices, scratch, node_start, node_stop, n_left, split_feature, split_bin,
        split_missing_left, missing_bin,
    )


@pytest.mark.parametrize("seed", range(2))
def test_apply_splits(grid, seed):
    rng = np.random.default_rng(300 + seed)
    args = partition_problem(rng, n_samples=60)
    sample_indices = args[1]
    cpu_args, cuda_args = run_both(partitioning.apply_splits, cuda_partitioning.apply_splits, args)
    # The scratch contents are working memory: compare everything else.
    cpu_args[2] = cuda_args[2] = None
    assert_all_equal(cpu_args, cuda_args)
    assert cuda_args[1].shape == sample_indices.shape and np.any(cuda_args[1] != sample_indices)  # moved


def test_apply_splits_over_several_tiles(monkeypatch):
    """Nodes of several tiles, each tile of several chunks: the scatter adds the earlier tiles' left
    rows and carries its scan over chunks (small tiles, so that the simulator stays quick)."""
    monkeypatch.setattr(cuda_histogram, "BLOCK_SIZES", (32,))
    monkeypatch.setattr(cuda_partitioning, "ROWS_PER_THREAD", 2)  # tiles of 64 rows
    rng = np.random.default_rng(9)
    args = list(partition_problem(rng, n_samples=300))
    node_start, node_stop = args[3], args[4]
    node_start[:3] = [0, 10, 10]
    node_stop[:3] = [10, 10, 30]  # a small node, an empty one, one of a partial chunk
    node_start[3] = 40
    assert node_stop[3] - node_start[3] > 3 * 64
    _, n_left = ref.apply_splits(args[0], args[1], node_start, node_stop, args[6], args[7], args[8], args[9])
    args[5] = n_left
    cpu_args, cuda_args = run_both(partitioning.apply_splits, cuda_partitioning.apply_splits, tuple(args))
    cpu_args[2] = cuda_args[2] = None
    assert_all_equal(cpu_args, cuda_args)
    assert 0 < n_left[3] < node_stop[3] - node_start[3]


def test_apply_splits_all_left_all_right_and_no_nodes():
    rng = np.random.default_rng(17)
    args = list(partition_problem(rng, n_samples=40))
    # Feature 0 never misses; threshold at the top bin sends everything left, at the missing bin too.
    args[6][:] = 0
    args[7][:] = [args[9] - 1, -1, 0, args[9] - 1]
    args[7][2] = -1  # bin <= -1: nothing goes left
    args[5] = ref.apply_splits(args[0], args[1], args[3], args[4], args[6], args[7], args[8], args[9])[1]
    cpu_args, cuda_args = run_both(partitioning.apply_splits, cuda_partitioning.apply_splits, tuple(args))
    cpu_args[2] = cuda_args[2] = None
    assert_all_equal(cpu_args, cuda_args)
    empty64 = np.zeros(0, dtype=np.int64)
    cuda_partitioning.apply_splits(
        args[0], args[1], args[2], empty64, empty64, empty64, np.zeros(0, np.int32), np.zeros(0, np.int32),
        np.zeros(0, bool), args[9],
    )


# --- node values -------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # 0 / 0 of the empty node, under the simulator
@pytest.mark.parametrize("criterion", CRITERIA)
def test_node_values(grid, criterion):
    rng = np.random.default_rng(400 + CRITERIA.index(criterion))
    rows = make_rows(rng, n_samples=40)
    # newton's (l2, l1); l1 = 2 zeroes the values of some nodes and shrinks the others.
    stats = make_statistics(rng, criterion, rows["X_binned"].shape[0], 0.7, 2.0)
    # Every node of make_rows, an empty one (zero weight: NaN values, as on the CPU), and many
    # random sub-ranges, so that the one-block run has more nodes than threads.
    starts = list(rows["node_start"]) + [5]
    stops = list(rows["node_stop"]) + [5]
    trees = list(rows["node_tree"]) + [1]
    n_entries = rows["sample_indices"].size
    while len(starts) < 40:
        a, b = sorted(rng.integers(0, n_entries, 2))
        starts.append(a)
        stops.append(b + 1)
        trees.append(0)
    totals = ref.node_totals(
        rows["sample_indices"], np.array(starts), np.array(stops), np.array(trees), rows["sample_counts"],
        stats.row_slot, stats.row_stats, stats.n_slots,
    )
    n_nodes = totals.shape[0]
    n_values = N_CLASSES if criterion in ref.CLASSIFICATION else 1
    args = (
        CRITERION_ID[criterion], totals, stats.inv_scales, stats.regularization,
        np.full((n_nodes, n_values), -7.0), np.full(n_nodes, -7.0), np.full(n_nodes, -7.0),
    )
    if grid == "one_block":
        # 32 threads for 40 nodes: each thread takes two.
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(cuda_leaf_values, "BLOCK_SIZE", 32)
            cpu_args, cuda_args = run_both(leaf_values.node_values, cuda_leaf_values.node_values, args)
    else:
        cpu_args, cuda_args = run_both(leaf_values.node_values, cuda_leaf_values.node_values, args)
    assert_all_equal(cpu_args, cuda_args)
    assert np.isfinite(cuda_args[4][0]).all()
    if criterion == "newton":
        values = cuda_args[4]  # the empty node's NaN compares False
        assert (values == 0).any() and (values > 0).any() and (values < 0).any()


@pytest.mark.parametrize("kernel", ["add_leaf_values", "add_range_values"])
def test_add_leaf_values(grid, kernel):
    rng = np.random.default_rng(430)
    if kernel == "add_leaf_values":
        rows = rng.permutation(80)[:70].astype(np.int32)
        args = (rng.normal(size=(80, 2)), 1, rows, rng.integers(0, 9, 70), rng.normal(size=9))
    else:
        args = range_problem(rng, 70, 6)
    with pytest.MonkeyPatch.context() as patch:
        if grid == "one_block":  # 32 threads for 70 rows: grid-stride
            patch.setattr(cuda_launch, "BLOCK_SIZE", 32)
        cpu_args, cuda_args = run_both(getattr(leaf_values, kernel), getattr(cuda_leaf_values, kernel), args)
    assert_all_equal(cpu_args, cuda_args)
    assert cuda_args[0].shape == args[0].shape and np.any(cuda_args[0] != args[0])


# --- prediction -----------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(2))
def test_predict_leaves(grid, seed):
    rng = np.random.default_rng(500 + seed)
    n_samples = 45
    X = rng.normal(size=(n_samples, 4)).astype(np.float32)
    X[:, 2] = rng.integers(0, 4, n_samples)
    X[rng.random(X.shape) < 0.15] = np.nan
    trees = [random_tree(rng, X, max_depth) for max_depth in (0, 1, 4, 6)]
    tree_offsets = np.cumsum([0] + [t[0].size for t in trees[:-1]]).astype(np.int64)
    feature, threshold, missing_left, left, right = (np.concatenate(column) for column in zip(*trees))
    out = np.full((n_samples, len(trees)), -5, dtype=np.int32)
    args = (X, tree_offsets, threshold, pack_node_info(feature, missing_left, left), NO_BITSETS, out)
    if grid == "one_block":
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(cuda_predict, "BLOCK_SIZE", 32)  # 180 (row, tree) pairs on 32 threads
            cpu_args, cuda_args = run_both(predict.predict_leaves, cuda_predict.predict_leaves, args)
    else:
        cpu_args, cuda_args = run_both(predict.predict_leaves, cuda_predict.predict_leaves, args)
    assert_all_equal(cpu_args, cuda_args)
    assert np.unique(cuda_args[5][:, 3]).size > 2  # not vacuous
    # Boosting's raw scores: the trees' leaf values summed in tree order into two columns.
    raw = np.tile([0.5, -1.0], (n_samples, 1))
    raw_args = (X, tree_offsets, threshold, args[3], NO_BITSETS, rng.normal(size=threshold.size), raw)
    cpu_args, cuda_args = run_both(predict.predict_raw, cuda_predict.predict_raw, raw_args)
    assert_all_equal(cpu_args, cuda_args)


def test_predict_every_split_kind(grid):
    """Trees of numeric, categorical and multiway splits; rows with codes, NaN and values that are no code."""
    rng = np.random.default_rng(545)
    X, trees = mixed_forest(rng, 40)
    tree_offsets, split_value, node_info, category_bitset, value, _ = pack_forest(trees)
    out = np.full((X.shape[0], len(trees)), -5, dtype=np.int32)
    args = (X, tree_offsets, split_value, node_info, category_bitset, out)
    cpu_args, cuda_args = run_both(predict.predict_leaves, cuda_predict.predict_leaves, args)
    assert_all_equal(cpu_args, cuda_args)
    assert np.unique(cuda_args[5][:, 4]).size > 2  # not vacuous
    raw_args = (*args[:5], np.ascontiguousarray(value[:, 0]), np.tile([0.5, -1.0], (X.shape[0], 1)))
    cpu_args, cuda_args = run_both(predict.predict_raw, cuda_predict.predict_raw, raw_args)
    assert_all_equal(cpu_args, cuda_args)


@pytest.mark.parametrize("dtype, offset", [(np.float32, 0.0), (np.float64, 1.7e9)])
def test_predict_raw_complete(dtype, offset):
    """Complete binary trees: NaN rows, a single leaf, leaves at several depths, two scores; float64 values
    that float32 would merge."""
    rng = np.random.default_rng(550)
    n_samples = 21
    X = (offset + rng.normal(size=(n_samples, 3))).astype(dtype)
    X[rng.random(X.shape) < 0.2] = np.nan
    arrays = [random_tree(rng, X, max_depth) for max_depth in (0, 1, 4)]
    trees = [as_tree(a, rng.normal(size=a[0].size), X.shape[1]) for a in arrays]
    forest = pack_complete_forest(trees)
    args = (X, *forest, np.tile([0.5, -1.0], (n_samples, 1)))
    cpu_args, cuda_args = run_both(predict.predict_raw_complete, cuda_predict.predict_raw_complete, args)
    assert_all_equal(cpu_args, cuda_args)
    assert np.unique(cuda_args[-1][:, 0]).size > 2  # not vacuous
