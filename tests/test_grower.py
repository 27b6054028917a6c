"""The grower under memory pressure (chunked levels and out-of-memory retries grow the same tree),
with feature subsets (histograms of each node's drawn features grow the row path's tree), with
column subsampling by tree (``GrowthParams.tree_features``), and with per-tree statistics (the
classes of a boosting round grown in one batch); a split on a positive Newton gain; with a categorical
feature (``bin_mapper.is_categorical``), its splits recorded as ``CATEGORICAL`` with their bitsets, and the
rows partitioned by them the rows a naive router written here sends down the recorded tree, on both split
paths, level-wise and best-first, numba's CUDA simulator growing the same trees."""

from dataclasses import replace

import numba
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification

from gpuforest import (
    DecisionTreeClassifier, DecisionTreeRegressor, GradientBoostingClassifier, RandomForestClassifier, grower,
    statistics,
)
from gpuforest.backend import CPUBackend, CUDABackend, get_backend
from gpuforest.binning import BinMapper
from gpuforest.grower import GrowthParams, NodeBatch, TreeGrower, feature_count, tree_feature_subsets
from gpuforest.kernels import common
from gpuforest.kernels.common import FROM_ROWS, PURPOSE_COLUMNS
from gpuforest.kernels.cuda import splitting as cuda_splitting
from gpuforest.statistics import newton_statistics
from gpuforest.tree import CATEGORICAL, NUMERIC, TREE_LEAF, TREE_UNDEFINED

try:
    from . import reference as ref
except ImportError:
    import reference as ref

@pytest.fixture(autouse=True)
def python_levels(monkeypatch):
    """Every level through the grower's own loop, whose chunks, memory and backend calls these tests watch
    (the CPU backend's compiled level loop grows the same trees: tests/test_kernels_cpu_growth.py)."""
    monkeypatch.setattr(CPUBackend, "grows_levels", False)


TREE_ARRAYS = ("children_left", "children_right", "feature", "threshold", "missing_go_to_left", "value", "impurity")
N_FEATURES = 10


@pytest.fixture(scope="module")
def data_and_reference():
    X, y = make_classification(n_samples=4_000, n_features=N_FEATURES, random_state=0)
    return X, y, DecisionTreeClassifier(random_state=0, device="cpu").fit(X, y).tree_


def assert_same_tree(tree, reference):
    for name in TREE_ARRAYS:
        np.testing.assert_array_equal(getattr(tree, name), getattr(reference, name), err_msg=name)


def test_little_free_memory_splits_levels_into_chunks(data_and_reference, monkeypatch):
    X, y, reference = data_and_reference
    one_histogram = N_FEATURES * 256 * 3 * 8
    monkeypatch.setattr("gpuforest.grower.SMALL_LEVEL_BYTES", 0)  # every level asks for the free memory
    monkeypatch.setattr(CPUBackend, "free_memory_bytes", lambda self: 8 * one_histogram)
    launches = []
    build = CPUBackend.build_histograms

    def recording_build(self, rows, node_start, *args, **kwargs):
        launches.append(node_start.shape[0])
        return build(self, rows, node_start, *args, **kwargs)

    monkeypatch.setattr(CPUBackend, "build_histograms", recording_build)
    tree = DecisionTreeClassifier(random_state=0, device="cpu").fit(X, y).tree_
    assert_same_tree(tree, reference)
    # Half of 8 histograms, 2 copies of each of a pair's 2: one pair (2 nodes at most) per launch.
    assert max(launches) <= 2 and len(launches) > 20


def test_chunks_count_only_the_nodes_that_need_histograms(monkeypatch):
    """With feature subsets, a level's chunks hold at most so many histograms; the small nodes (scanned from
    their rows) do not count, so a level of small nodes is one row-path call. The same trees either way."""
    X, y = make_classification(n_samples=3_000, n_features=N_FEATURES, random_state=2)
    model = RandomForestClassifier(n_estimators=4, max_features=3, random_state=0, device="cpu")
    reference = model.fit(X, y)
    monkeypatch.setattr("gpuforest.grower.SMALL_LEVEL_BYTES", 0)
    monkeypatch.setattr("gpuforest.grower.SUBSET_CHUNK_BYTES", 2 * N_FEATURES * 256 * 3 * 8)  # 2 histograms
    builds = recorded_calls(monkeypatch, CPUBackend, "build_histograms")
    searches = recorded_calls(monkeypatch, CPUBackend, "find_best_splits")
    forest = clone(model).fit(X, y)
    for tree, reference_tree in zip(forest.estimators_, reference.estimators_):
        assert_same_tree(tree.tree_, reference_tree.tree_)
    assert builds and max(node_start.shape[0] for _, node_start, *_ in builds) <= 2
    depth = max(tree.tree_.max_depth for tree in forest.estimators_)
    # A level of small nodes is one call (counting all nodes, chunks of 2 would make hundreds).
    row_scans = [hist_rows for _, _, hist_rows, *_ in searches if (hist_rows == FROM_ROWS).any()]
    assert len(row_scans) <= 2 * (depth + 1)


def test_a_device_chunks_feature_subset_histograms_by_its_own_size(monkeypatch):
    """On a GPU (simulated) a chunk holds up to ``DEVICE_SUBSET_CHUNK_BYTES`` of histograms, not the CPU's
    smaller ``SUBSET_CHUNK_BYTES``; the same trees as the CPU's."""
    X, y = make_classification(n_samples=400, n_features=N_FEATURES, random_state=2)
    model = RandomForestClassifier(n_estimators=1, max_depth=4, max_features=3, max_bins=16, random_state=0)
    reference = clone(model).set_params(device="cpu").fit(X, y)
    histogram_bytes = N_FEATURES * 16 * 3 * 8
    # The grower's own levels (the device's: test_kernels_cuda_growth.py).
    monkeypatch.setattr(CUDABackend, "grows_levels", False)
    monkeypatch.setattr("gpuforest.grower.SMALL_LEVEL_BYTES", 0)
    monkeypatch.setattr("gpuforest.grower.SUBSET_CHUNK_BYTES", histogram_bytes)
    monkeypatch.setattr("gpuforest.grower.DEVICE_SUBSET_CHUNK_BYTES", 3 * histogram_bytes)
    builds = recorded_calls(monkeypatch, CUDABackend, "build_histograms")
    forest = clone(model).set_params(device="cuda").fit(X, y)
    for tree, reference_tree in zip(forest.estimators_, reference.estimators_, strict=True):
        assert_same_tree(tree.tree_, reference_tree.tree_)
    assert max(node_start.shape[0] for _, node_start, *_ in builds) == 3


def test_out_of_memory_is_retried_in_smaller_chunks(data_and_reference, monkeypatch):
    X, y, reference = data_and_reference
    build = CPUBackend.build_histograms
    failures = []

    def failing_build(self, rows, node_start, *args, **kwargs):
        if node_start.shape[0] > 2:
            failures.append(node_start.shape[0])
            raise MemoryError("simulated out-of-memory")
        return build(self, rows, node_start, *args, **kwargs)

    monkeypatch.setattr(CPUBackend, "build_histograms", failing_build)
    tree = DecisionTreeClassifier(random_state=0, device="cpu").fit(X, y).tree_
    assert_same_tree(tree, reference)
    assert failures and all(size > 2 for size in failures)


def test_out_of_memory_with_single_node_chunks_is_raised(data_and_reference, monkeypatch):
    X, y, _ = data_and_reference

    def always_failing_build(self, *args, **kwargs):
        raise MemoryError("simulated out-of-memory")

    monkeypatch.setattr(CPUBackend, "build_histograms", always_failing_build)
    with pytest.raises(MemoryError):
        DecisionTreeClassifier(random_state=0, device="cpu").fit(X, y)


# --- feature subsets (max_features < n_features) ----------------------------------------------


def recorded_calls(monkeypatch, backend_class, name):
    """The positional arguments of every later call of ``backend_class.<name>``."""
    calls = []
    method = getattr(backend_class, name)

    def recording(self, *args, **kwargs):
        calls.append(args)
        return method(self, *args, **kwargs)

    monkeypatch.setattr(backend_class, name, recording)
    return calls


def tree_from_rows_only(model, X, y, monkeypatch):
    """``model``'s tree grown on the row path only (no histograms): every node is below the
    histogram threshold. Split search on rows is independent of histogram building."""
    init = TreeGrower.__init__

    def init_without_histograms(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.min_rows_histogram = np.iinfo(np.int64).max

    with monkeypatch.context() as patch:
        patch.setattr(TreeGrower, "__init__", init_without_histograms)
        builds = recorded_calls(patch, type(get_backend(model.device)), "build_histograms")
        tree = clone(model).fit(X, y).tree_
    assert not builds
    return tree


@pytest.mark.parametrize("max_features, n_drawn", [("sqrt", 3), (None, N_FEATURES)])
@pytest.mark.parametrize("estimator", [DecisionTreeClassifier, DecisionTreeRegressor])
def test_feature_subsets_build_histograms_of_the_drawn_features(estimator, max_features, n_drawn, monkeypatch):
    """Each histogram holds the node's drawn features only, so nothing is subtracted with a subset
    (a child's features differ from its parent's); all features keep subtraction. The tree is the
    row path's either way."""
    X, y = make_classification(n_samples=3_000, n_features=N_FEATURES, n_informative=6, random_state=1)
    model = estimator(max_features=max_features, max_depth=8, random_state=0, device="cpu")
    reference = tree_from_rows_only(model, X, y, monkeypatch)
    builds = recorded_calls(monkeypatch, CPUBackend, "build_histograms")
    subtractions = recorded_calls(monkeypatch, CPUBackend, "subtract_histograms")
    tree = clone(model).fit(X, y).tree_
    assert_same_tree(tree, reference)
    assert len(builds) > 3
    for *_, feature_mask in builds:
        np.testing.assert_array_equal(feature_mask.sum(axis=1), n_drawn)
    assert bool(subtractions) == (max_features is None)


@pytest.mark.parametrize("estimator", [DecisionTreeClassifier, DecisionTreeRegressor])
def test_feature_subsets_on_cuda_grow_the_row_path_tree(estimator, monkeypatch):
    """The same on the CUDA backend (numba's simulator: tiny data, small blocks)."""
    rng = np.random.default_rng(5)
    X = np.round(rng.normal(size=(60, 4)), 1)
    X[rng.random(X.shape) < 0.1] = np.nan
    y = (np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 3]) > 0).astype(int) + (X[:, 1] > 0.5)
    # 16 bins: nodes of 32 rows or more (3 classes or 3 regression statistics + the count) use histograms.
    model = estimator(max_features="sqrt", max_bins=16, random_state=2, device="cuda")
    reference = tree_from_rows_only(model, X, y, monkeypatch)
    builds = recorded_calls(monkeypatch, CUDABackend, "build_histograms")
    # The grower's own levels (the device's: test_kernels_cuda_growth.py).
    monkeypatch.setattr(CUDABackend, "grows_levels", False)
    tree = clone(model).fit(X, y).tree_
    assert_same_tree(tree, reference)
    assert builds and all((feature_mask.sum(axis=1) == 2).all() for *_, feature_mask in builds)
    assert tree.node_count > 5


# --- where growth leaves the rows ------------------------------------------------------------


@pytest.mark.parametrize("backend_class", [CPUBackend, CUDABackend])
@pytest.mark.parametrize("max_leaf_nodes", [None, 7])  # depth-wise, best-first
def test_row_leaves_are_the_leaves_the_rows_are_routed_to(backend_class, max_leaf_nodes):
    rng = np.random.default_rng(5)
    X, y = make_classification(n_samples=100, n_features=4, n_informative=3, n_redundant=0, n_classes=3,
                               random_state=5)
    X[rng.random(X.shape) < 0.1] = np.nan
    X = X.astype(np.float32)
    backend = backend_class()
    tree_grower, _, _ = make_grower(backend, X, y, n_trees=2, max_features=2, max_leaf_nodes=max_leaf_nodes)
    for tree_idx, tree in enumerate(tree_grower.grow()):
        rows, leaves = (backend.to_host(array) for array in tree_grower.row_leaves(tree_idx))
        assert np.array_equal(np.sort(rows), np.arange(X.shape[0]))
        assert np.unique(leaves).size > 3
        np.testing.assert_array_equal(leaves, tree.apply(X[rows], backend))
        boundaries, range_leaves = tree_grower.leaf_ranges(tree_idx)
        assert (boundaries[0], boundaries[-1]) == tuple(tree_grower.tree_offsets[tree_idx : tree_idx + 2])
        np.testing.assert_array_equal(np.repeat(range_leaves, np.diff(boundaries)), leaves)


# --- random thresholds (extra trees) ----------------------------------------------------------


def make_grower(backend, X, y, n_trees=1, first_tree=0, **params):
    """A ``TreeGrower`` of ``n_trees`` gini trees (3 classes) on every row of ``X`` (16 bins), each
    with its own copy of the rows; ``params`` override the ``GrowthParams``. Returns it, the bins
    and the missing bin."""
    n_samples, n_features = X.shape
    mapper = BinMapper(16, random_state=0).fit(X)
    stats = statistics.classification_statistics("gini", y, 3, np.ones(n_samples))
    X_binned = mapper.transform(X, backend)
    sample_indices = np.tile(np.arange(n_samples, dtype=np.int32), n_trees)
    rows = backend.row_data(
        backend.binned_rows(X_binned), sample_indices, np.ones((n_trees, n_samples), dtype=np.int32), stats
    )
    params = GrowthParams(**{
        **dict(
            max_depth=6, min_samples_split=2, min_samples_leaf=2, min_weight_fraction_leaf=0.0,
            min_impurity_decrease=0.0, max_leaf_nodes=None, max_features=n_features, seed=11,
        ),
        **params,
    })
    tree_offsets = np.arange(n_trees + 1, dtype=np.int64) * n_samples
    tree_grower = TreeGrower(backend, rows, tree_offsets, mapper, stats, 3, params, first_tree=first_tree)
    return tree_grower, backend.to_host(X_binned), mapper.missing_bin


def grow_with_random_thresholds(backend, X, y, random_thresholds=True):
    """One gini tree of ``X`` (16 bins) grown by ``TreeGrower`` on ``backend``; returns it and the bins."""
    tree_grower, X_binned, missing_bin = make_grower(backend, X, y, random_thresholds=random_thresholds)
    (tree,) = tree_grower.grow()
    return tree, X_binned, missing_bin


def test_random_thresholds_grow_the_same_tree_on_cuda_within_each_nodes_bins(monkeypatch):
    """CPU and CUDA (numba's simulator) grow the same extra tree, over both split paths
    (nodes of 32 rows or more use histograms); every threshold bin is an occupied bin
    of its node in [lo, hi)."""
    monkeypatch.setattr(cuda_splitting, "MIN_SCAN_THREADS", 8)
    rng = np.random.default_rng(8)
    X = np.round(rng.normal(size=(64, 3)), 1)
    X[rng.random(X.shape) < 0.1] = np.nan
    y = (np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 2]) > 0).astype(int) + (X[:, 1] > 0.5)
    cpu_tree, X_binned, missing_bin = grow_with_random_thresholds(CPUBackend(), X, y)
    cuda_tree, _, _ = grow_with_random_thresholds(get_backend("cuda"), X, y)
    for name in TREE_ARRAYS + ("bin_threshold", "n_node_samples"):
        np.testing.assert_array_equal(getattr(cuda_tree, name), getattr(cpu_tree, name), err_msg=name)

    best_tree, _, _ = grow_with_random_thresholds(CPUBackend(), X, y, random_thresholds=False)
    n_common = min(cpu_tree.node_count, best_tree.node_count)  # elementwise: array_equal is False for any shapes
    assert np.any(cpu_tree.bin_threshold[:n_common] != best_tree.bin_threshold[:n_common])
    in_node = cpu_tree.decision_path(X, CPUBackend()).toarray().astype(bool)
    split_nodes = np.flatnonzero(cpu_tree.children_left != -1)
    assert split_nodes.size > 5
    for node in split_nodes:
        bins = X_binned[in_node[:, node], cpu_tree.feature[node]]
        present = bins[bins != missing_bin]
        assert present.min() <= cpu_tree.bin_threshold[node] < present.max(), node
        assert cpu_tree.bin_threshold[node] in present, node


# --- column subsampling by tree (GrowthParams.tree_features) ---------------------------------

# Three trees of six features, three allowed in each.
ALLOWED = np.array([
    [1, 0, 1, 0, 1, 0],
    [0, 1, 1, 0, 0, 1],
    [1, 1, 0, 1, 0, 0],
], dtype=bool)


@pytest.fixture(scope="module")
def six_features():
    X, y = make_classification(
        n_samples=2_000, n_features=6, n_informative=6, n_redundant=0, n_classes=3, random_state=4
    )
    return X, y


def split_features(tree):
    return tree.feature[tree.children_left != -1]


@pytest.mark.parametrize("max_features, subtracted", [(6, True), (3, True), (2, False)])
def test_tree_features_restrict_every_split(six_features, max_features, subtracted, monkeypatch):
    """Each tree splits on its allowed features only, and each node evaluates min(max_features, 3)
    of them. With all three in every node (max_features >= 3) siblings are still subtracted; the
    trees are the row path's either way."""
    X, y = six_features
    builds = recorded_calls(monkeypatch, CPUBackend, "build_histograms")
    subtractions = recorded_calls(monkeypatch, CPUBackend, "subtract_histograms")
    tree_grower, _, _ = make_grower(CPUBackend(), X, y, n_trees=3, tree_features=ALLOWED, max_features=max_features)
    trees = tree_grower.grow()
    for tree, allowed in zip(trees, ALLOWED):
        used = split_features(tree)
        assert allowed[used].all()
        assert np.unique(used).size >= 2  # not vacuous
    assert builds
    for _, _, _, node_tree, _, _, feature_mask in builds:
        assert (feature_mask.sum(axis=1) == min(max_features, 3)).all()
        assert not (feature_mask & ~ALLOWED[node_tree]).any()
    assert bool(subtractions) == subtracted
    rows_only, _, _ = make_grower(CPUBackend(), X, y, n_trees=3, tree_features=ALLOWED, max_features=max_features)
    rows_only.min_rows_histogram = np.iinfo(np.int64).max
    for tree, reference in zip(trees, rows_only.grow()):
        assert_same_tree(tree, reference)


@pytest.mark.parametrize("max_features", [6, 3])
def test_all_features_allowed_grow_the_unrestricted_trees(six_features, max_features):
    X, y = six_features
    restricted, _, _ = make_grower(
        CPUBackend(), X, y, n_trees=2, tree_features=np.ones((2, 6), dtype=bool), max_features=max_features
    )
    unrestricted, _, _ = make_grower(CPUBackend(), X, y, n_trees=2, max_features=max_features)
    for tree, reference in zip(restricted.grow(), unrestricted.grow()):
        assert_same_tree(tree, reference)


def test_node_features_are_drawn_among_the_tree_features(six_features):
    """A node's ``max_features`` are ``feature_masks`` over its tree's allowed features in increasing
    order (keyed by the global tree index), scattered back; nodes that cannot split get none."""
    X, y = six_features
    tree_grower, _, _ = make_grower(CPUBackend(), X, y, n_trees=3, first_tree=5, tree_features=ALLOWED, max_features=2)
    tree = np.array([0, 1, 2, 2, 0, 1], dtype=np.int64)
    node_idx = np.array([0, 3, 0, 7, 12, 1], dtype=np.int64)
    zeros = np.zeros(tree.size, dtype=np.int64)
    nodes = NodeBatch(tree=tree, node_idx=node_idx, depth=zeros, start=zeros, stop=zeros, totals=zeros[:, None])
    splittable = np.array([True, True, True, True, True, False])
    masks = tree_grower._feature_masks(nodes, splittable)
    compact = ref.feature_masks(11, 5 + tree, node_idx, 3, 2)
    for position in range(tree.size):
        expected = np.zeros(6, dtype=bool)
        if splittable[position]:
            expected[np.flatnonzero(ALLOWED[tree[position]])[compact[position]]] = True
        np.testing.assert_array_equal(masks[position], expected)


def test_tree_features_must_have_as_many_features_per_tree(six_features):
    X, y = six_features
    uneven = ALLOWED.copy()
    uneven[0, 3] = True
    for tree_features in (uneven, ALLOWED[:2], np.zeros((3, 6), dtype=bool)):
        with pytest.raises(ValueError, match="tree_features"):
            make_grower(CPUBackend(), X, y, n_trees=3, tree_features=tree_features)


@pytest.mark.parametrize("max_features", [2, 4])
def test_tree_features_grow_the_same_trees_on_cuda(max_features, monkeypatch):
    """CPU and CUDA (numba's simulator) grow the same restricted trees: per-node draws among the
    tree's features (max_features=2), and the tree's features in every node with subtraction (4)."""
    monkeypatch.setattr(cuda_splitting, "MIN_SCAN_THREADS", 8)
    rng = np.random.default_rng(9)
    X = np.round(rng.normal(size=(64, 4)), 1)
    X[rng.random(X.shape) < 0.1] = np.nan
    y = (np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 2]) > 0).astype(int) + (X[:, 3] > 0.5)
    allowed = np.array([[1, 0, 1, 1], [1, 1, 0, 1]], dtype=bool)
    subtractions = recorded_calls(monkeypatch, CUDABackend, "subtract_histograms")
    # The grower's own levels (the device's: test_kernels_cuda_growth.py).
    monkeypatch.setattr(CUDABackend, "grows_levels", False)
    trees = {}
    for backend in (CPUBackend(), get_backend("cuda")):
        tree_grower, _, _ = make_grower(
            backend, X, y, n_trees=2, tree_features=allowed, max_features=max_features, max_depth=4
        )
        trees[backend.name] = tree_grower.grow()
    for cpu_tree, cuda_tree, mask in zip(trees["cpu"], trees["cuda"], allowed):
        for name in TREE_ARRAYS + ("bin_threshold", "n_node_samples"):
            np.testing.assert_array_equal(getattr(cuda_tree, name), getattr(cpu_tree, name), err_msg=name)
        assert cpu_tree.node_count > 3 and mask[split_features(cpu_tree)].all()
    assert bool(subtractions) == (max_features == 4)


def test_tree_feature_subsets():
    """``feature_count(fraction, n)`` lowest ``U(seed, PURPOSE_COLUMNS, tree, f)`` per tree, keyed by the
    global tree index, the same on the CUDA backend."""
    subsets = tree_feature_subsets(CPUBackend(), 7, 0, 6, 10, 0.35)
    assert subsets.shape == (6, 10) and subsets.dtype == bool
    assert (subsets.sum(axis=1) == 4).all()  # 3.5 rounds up
    for tree, subset in enumerate(subsets):
        priorities = ref.uniform_per_row(7, PURPOSE_COLUMNS, tree, 10)
        np.testing.assert_array_equal(np.flatnonzero(subset), np.sort(np.argsort(priorities)[:4]))
    assert len({subset.tobytes() for subset in subsets}) > 1
    np.testing.assert_array_equal(tree_feature_subsets(CPUBackend(), 7, 2, 4, 10, 0.35), subsets[2:])
    np.testing.assert_array_equal(tree_feature_subsets(get_backend("cuda"), 7, 0, 6, 10, 0.35), subsets)
    assert tree_feature_subsets(CPUBackend(), 7, 0, 2, 10, 1.0).all()


@pytest.mark.parametrize("fraction, n_features, expected", [
    (1.0, 10, 10), (0.35, 10, 4), (0.25, 10, 3), (0.24, 10, 2), (0.01, 10, 1), (0.5, 3, 2), (0.8, 1, 1),
])
def test_feature_count(fraction, n_features, expected):
    assert feature_count(fraction, n_features) == expected


# --- per-tree statistics (stats_stride = n_samples) ------------------------------------------


def softmax_gradients(y, n_classes, rng):
    """Multinomial (g, h) of random probabilities: shape (n_samples, n_classes) each."""
    probabilities = rng.dirichlet(np.ones(n_classes), y.shape[0])
    return probabilities - np.eye(n_classes)[y], probabilities * (1 - probabilities)


def test_newton_statistics_of_several_trees_share_one_scale_per_statistic():
    """(n_samples, n_trees) gradients: tree ``t``'s row ``r`` at ``t * n_samples + r``, the scales of
    all the columns stacked (the hessian's leaving the bits of a tree's row count free); one column
    gives the 1-D statistics bit for bit."""
    rng = np.random.default_rng(3)
    gradients = rng.normal(size=(50, 3)) * [1.0, 10.0, 0.1]
    hessians = rng.uniform(0.1, 1.0, size=(50, 3))
    stats = statistics.newton_statistics(gradients, hessians, 1.0, 0.5)
    assert stats.stats_stride == 50 and stats.row_stats.shape == (150, 2) and stats.row_slot.shape == (150,)
    assert not stats.row_slot.any() and stats.count_bits == 6  # 50 rows per tree
    stacked, inv_scales = statistics._to_fixed((gradients.T.reshape(-1), hessians.T.reshape(-1)), (1, 2**6))
    np.testing.assert_array_equal(stats.row_stats, stacked)
    np.testing.assert_array_equal(stats.inv_scales, np.append(inv_scales, 1.0))
    for tree in range(3):
        rows = slice(tree * 50, (tree + 1) * 50)
        np.testing.assert_allclose(stats.row_stats[rows, 0] * stats.inv_scales[0], gradients[:, tree], rtol=0,
                                   atol=stats.inv_scales[0])
        np.testing.assert_allclose(stats.row_stats[rows, 1] * stats.inv_scales[1], hessians[:, tree], rtol=0,
                                   atol=stats.inv_scales[1])
    # The small column alone would get a finer scale: the shared one is sized by all of them.
    assert statistics.newton_statistics(gradients[:, 2], hessians[:, 2], 1.0).inv_scales[0] < stats.inv_scales[0]
    one_column = statistics.newton_statistics(gradients[:, :1], hessians[:, :1], 1.0, 0.5)
    one_dimensional = statistics.newton_statistics(gradients[:, 0], hessians[:, 0], 1.0, 0.5)
    assert (one_column.stats_stride, one_dimensional.stats_stride) == (50, 0)
    np.testing.assert_array_equal(one_column.row_stats, one_dimensional.row_stats)
    np.testing.assert_array_equal(one_column.inv_scales, one_dimensional.inv_scales)


def test_newton_statistics_and_gradients_fill_a_previous_rounds_arrays():
    """``previous`` / ``out``: the same statistics and gradients, written into the arrays given."""
    rng = np.random.default_rng(9)
    backend = CPUBackend()
    y, sample_weight = (rng.random(40) < 0.5).astype(float), rng.uniform(0.5, 2.0, 40)
    first_raw, raw = rng.normal(size=(40, 1)), rng.normal(size=(40, 1))
    first = backend.loss_gradients(common.LOSS_BINOMIAL, 0.0, y, first_raw, sample_weight)
    previous = statistics.newton_statistics(*first, 1.0)
    gradients, hessians = backend.loss_gradients(common.LOSS_BINOMIAL, 0.0, y, raw, sample_weight, out=first)
    assert gradients is first[0] and hessians is first[1]
    fresh = backend.loss_gradients(common.LOSS_BINOMIAL, 0.0, y, raw, sample_weight)
    np.testing.assert_array_equal(gradients, fresh[0])
    np.testing.assert_array_equal(hessians, fresh[1])
    reused = statistics.newton_statistics(gradients, hessians, 1.0, previous=previous)
    assert reused.row_stats is previous.row_stats and reused.row_slot is previous.row_slot
    expected = statistics.newton_statistics(*fresh, 1.0)
    np.testing.assert_array_equal(reused.row_stats, expected.row_stats)
    np.testing.assert_array_equal(reused.inv_scales, expected.inv_scales)
    assert not reused.row_slot.any()


def test_row_data_checks_the_statistics_rows():
    rng = np.random.default_rng(4)
    gradients, hessians = rng.normal(size=(20, 3)), np.ones((20, 3))
    stats = statistics.newton_statistics(gradients, hessians, 0.0)
    backend = CPUBackend()
    X_binned = backend.binned_rows(np.zeros((20, 2), dtype=np.uint8, order="F"))
    sample_indices = np.arange(20, dtype=np.int32)
    assert backend.row_data(X_binned, np.tile(sample_indices, 3), np.ones((3, 20), np.int32), stats).stats_stride == 20
    for n_trees in (1, 2, 4):  # per-tree statistics of 3 trees, for another number of trees
        with pytest.raises(ValueError, match="stride 20"):
            backend.row_data(X_binned, sample_indices, np.ones((n_trees, 20), np.int32), stats)


def test_row_data_marks_unit_counts():
    """The histogram kernels skip the counts only when every row of every tree is drawn once."""
    stats = statistics.newton_statistics(np.arange(6.0), np.ones(6), 0.0)
    backend = CPUBackend()
    X_binned = backend.binned_rows(np.zeros((6, 2), dtype=np.uint8, order="F"))
    counts = np.ones((2, 6), np.int32)
    assert backend.row_data(X_binned, np.arange(12, dtype=np.int32) % 6, counts, stats).unit_counts
    for drawn in (0, 2):
        counts[1, 3] = drawn
        assert not backend.row_data(X_binned, np.arange(12, dtype=np.int32) % 6, counts, stats).unit_counts

GROWTH_CASES = {
    "best_first": dict(max_leaf_nodes=8),
    "depthwise_node_features": dict(max_depth=4, max_features=3),
    "tree_features": dict(max_leaf_nodes=6, colsample_bytree=0.67),
}


@pytest.mark.parametrize("case", GROWTH_CASES)
def test_trees_with_per_tree_statistics_are_the_trees_grown_one_by_one(case):
    """Three trees grown in one batch, tree ``t`` on column ``t`` of (g, h) (per-tree statistics), are
    the trees grown one at a time (global index ``first_tree + t``) on that column's rows of the same
    statistics (shared ones, same scales)."""
    growth = dict(GROWTH_CASES[case])
    colsample = growth.pop("colsample_bytree", None)
    X, y = make_classification(
        n_samples=600, n_features=6, n_informative=4, n_redundant=0, n_classes=3, random_state=1
    )
    n_samples, n_trees, first_tree = X.shape[0], 3, 6
    backend = CPUBackend()
    mapper = BinMapper(32, random_state=0).fit(X)
    X_binned = mapper.transform(X, backend)
    stats = statistics.newton_statistics(*softmax_gradients(y, 3, np.random.default_rng(0)), 1.0)
    params = GrowthParams(**{
        **dict(
            max_depth=20, min_samples_split=20, min_samples_leaf=10, min_weight_fraction_leaf=0.0,
            min_impurity_decrease=0.0, max_leaf_nodes=None, max_features=6, seed=3, min_weight_leaf=1e-3,
        ),
        **growth,
    })
    subsets = None
    if colsample is not None:
        subsets = tree_feature_subsets(backend, 3, first_tree, n_trees, 6, colsample)

    def grow(tree_stats, first, count):
        rows = backend.row_data(
            backend.binned_rows(X_binned), np.tile(np.arange(n_samples, dtype=np.int32), count), np.ones((count, n_samples), np.int32),
            tree_stats,
        )
        tree_params = params
        if subsets is not None:
            tree_params = replace(params, tree_features=subsets[first - first_tree:first - first_tree + count])
        tree_grower = TreeGrower(
            backend, rows, np.arange(count + 1, dtype=np.int64) * n_samples, mapper, tree_stats, 1, tree_params,
            first_tree=first,
        )
        return tree_grower.grow()

    batched = grow(stats, first_tree, n_trees)
    for tree_index, tree in enumerate(batched):
        rows = slice(tree_index * n_samples, (tree_index + 1) * n_samples)
        shared = replace(stats, row_slot=stats.row_slot[rows], row_stats=stats.row_stats[rows], stats_stride=0)
        (alone,) = grow(shared, first_tree + tree_index, 1)
        for name in TREE_ARRAYS + ("n_node_samples", "weighted_n_node_samples"):
            np.testing.assert_array_equal(
                getattr(tree, name), getattr(alone, name), err_msg=f"{name}, tree {tree_index}"
            )
        assert tree.node_count > 5
    # Each tree followed its own class's statistics.
    assert len({tree.value.tobytes() for tree in batched}) == n_trees


@pytest.mark.parametrize("l1", [0.0, 3.0])
def test_grower_splits_on_newton_gain(l1):
    """The grower with Newton statistics (boosting's trees) must split on a positive gain.

    Gradients of the logistic loss at p = 0.5 for y = [x0 > 0.5]: the cut
    x0 <= 0.5 has a large Newton gain, so a depth-1 tree must have two leaves
    with values -T(G_L) / (H_L + l2) and -T(G_R) / (H_R + l2), T(G) = sign(G) (|G| - l1)
    (here |G| > l1 on both sides).
    """
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(200, 3)).astype(np.float32)
    y = (X[:, 0] > 0.5).astype(float)
    g, h, l2 = 0.5 - y, np.full(200, 0.25), 1.0
    stats = newton_statistics(g, h, l2, l1)
    backend = CPUBackend()
    bin_mapper = BinMapper(256).fit(X)
    rows = backend.row_data(backend.binned_rows(bin_mapper.transform(X, backend)), np.arange(200, dtype=np.int32),
                            np.ones((1, 200), dtype=np.int32), stats)
    params = GrowthParams(
        max_depth=1, min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
        min_impurity_decrease=0.0, max_leaf_nodes=None, max_features=3, seed=0,
    )
    (tree,) = TreeGrower(backend, rows, np.array([0, 200]), bin_mapper, stats, 1, params).grow()
    assert tree.node_count == 3, "the root was not split although its best Newton gain is positive"
    assert tree.feature[0] == 0
    left = X[:, 0] <= tree.threshold[0]
    np.testing.assert_array_equal(left, X[:, 0] <= 0.5)
    for child, rows_in in ((tree.children_left[0], left), (tree.children_right[0], ~left)):
        G = g[rows_in].sum()
        assert abs(G) > l1
        np.testing.assert_allclose(tree.value[child, 0, 0], -np.sign(G) * (abs(G) - l1) / (h[rows_in].sum() + l2),
                                   rtol=1e-9)


# --- categorical features --------------------------------------------------------------------------

N_CATEGORIES = 10
MAX_BINS = 16
CATEGORICAL_TREE_ARRAYS = (
    "children_left", "children_right", "feature", "threshold", "bin_threshold", "missing_go_to_left", "split_type",
    "category_bitset", "value", "impurity", "n_node_samples",
)


def categorical_data(rng, n_samples, n_classes):
    """Feature 0: codes 0..9 (a few missing); feature 1: numeric. The class depends on the code's set and
    on feature 1."""
    codes = rng.integers(0, N_CATEGORIES, n_samples).astype(float)
    numeric = np.round(rng.normal(size=n_samples), 1)
    y = np.isin(codes, [1, 4, 6, 9]).astype(int)
    if n_classes == 3:
        y += (numeric > 0.5) & (codes < 5)
    codes[rng.random(n_samples) < 0.1] = np.nan
    return np.column_stack([codes, numeric]), y


def grow(backend, X, y, n_classes, min_rows_histogram=None, **params):
    """One gini tree of ``X`` (feature 0 categorical) grown by ``TreeGrower``; returns it and the bins."""
    n_samples = X.shape[0]
    mapper = BinMapper(MAX_BINS, random_state=0).fit(X)
    mapper.is_categorical = np.array([True, False])
    stats = statistics.classification_statistics("gini", y, n_classes, np.ones(n_samples))
    X_binned = mapper.transform(X, backend)
    rows = backend.row_data(
        backend.binned_rows(X_binned), np.arange(n_samples, dtype=np.int32), np.ones((1, n_samples), dtype=np.int32), stats
    )
    params = GrowthParams(**{
        **dict(
            max_depth=4, min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
            min_impurity_decrease=0.0, max_leaf_nodes=None, max_features=2, seed=0,
        ),
        **params,
    })
    tree_grower = TreeGrower(backend, rows, np.array([0, n_samples]), mapper, stats, n_classes, params)
    if min_rows_histogram is not None:
        tree_grower.min_rows_histogram = min_rows_histogram
    (tree,) = tree_grower.grow()
    return tree, backend.to_host(X_binned)


def route(tree, binned_row, missing_bin):
    """The nodes a binned row visits: a categorical split by its bin's bit, a numeric one by its bin."""
    node, path = 0, [0]
    while tree.children_left[node] != TREE_LEAF:
        bin_idx = int(binned_row[tree.feature[node]])
        if bin_idx == missing_bin:
            left = tree.missing_go_to_left[node]
        elif tree.split_type[node] == CATEGORICAL:
            left = bool(tree.category_bitset[node, bin_idx // 32] >> (bin_idx % 32) & 1)
        else:
            left = bin_idx <= tree.bin_threshold[node]
        node = tree.children_left[node] if left else tree.children_right[node]
        path.append(node)
    return path


def assert_rows_follow_the_splits(tree, X_binned, y, n_classes, missing_bin):
    """Every node holds the rows routed through it: its row count and class proportions."""
    visits = np.zeros((tree.node_count, n_classes))
    for binned_row, label in zip(X_binned, y):
        for node in route(tree, binned_row, missing_bin):
            visits[node, label] += 1
    np.testing.assert_array_equal(tree.n_node_samples, visits.sum(axis=1))
    np.testing.assert_allclose(tree.value[:, 0], visits / visits.sum(axis=1, keepdims=True), rtol=1e-12)
    categorical = tree.split_type == CATEGORICAL
    assert categorical.any() and (tree.split_type[~categorical & (tree.children_left != TREE_LEAF)] == NUMERIC).all()
    assert (tree.feature[categorical] == 0).all()
    assert (tree.threshold[categorical] == TREE_UNDEFINED).all()
    assert (tree.bin_threshold[categorical] == TREE_UNDEFINED).all()
    assert not tree.category_bitset[~categorical].any()


def test_a_set_of_categories_is_one_split():
    """The class is "code in {1, 4, 6, 9}": the root sends those codes (or all the others) left, the
    missing values with the larger side, and both children are pure."""
    X, y = categorical_data(np.random.default_rng(0), 200, n_classes=2)
    tree, X_binned = grow(CPUBackend(), X, y, 2, max_depth=1)
    assert tree.split_type[0] == CATEGORICAL and tree.feature[0] == 0
    bitset = tree.category_bitset[0]
    left_codes = {code for code in range(N_CATEGORIES) if bitset[0] >> code & 1}
    assert left_codes in ({1, 4, 6, 9}, set(range(N_CATEGORIES)) - {1, 4, 6, 9})
    # Missing values (and every code without rows) go to the larger child.
    left, right = tree.children_left[0], tree.children_right[0]
    missing_left = tree.n_node_samples[left] - np.isnan(X[:, 0]).sum() >= tree.n_node_samples[right]
    assert tree.missing_go_to_left[0] == missing_left
    unseen = bitset[0] >> N_CATEGORIES
    assert unseen == (0xFFFFFFFF >> N_CATEGORIES if missing_left else 0)
    assert (bitset[1:] == (0xFFFFFFFF if missing_left else 0)).all()
    present = ~np.isnan(X[:, 0])
    for child in (left, right):
        rows = [i for i in np.flatnonzero(present) if route(tree, X_binned[i], MAX_BINS - 1)[-1] == child]
        assert len(set(y[rows])) == 1


@pytest.mark.parametrize("max_leaf_nodes", [None, 7])
def test_rows_follow_the_recorded_splits_on_both_paths(max_leaf_nodes):
    """Level-wise and best-first: the tree's nodes hold the rows the naive router sends through them;
    from histograms only and from rows only, the same tree."""
    X, y = categorical_data(np.random.default_rng(1), 120, n_classes=3)
    tree, X_binned = grow(CPUBackend(), X, y, 3, min_rows_histogram=0, max_leaf_nodes=max_leaf_nodes)
    assert_rows_follow_the_splits(tree, X_binned, y, 3, MAX_BINS - 1)
    from_rows, _ = grow(CPUBackend(), X, y, 3, min_rows_histogram=10**9, max_leaf_nodes=max_leaf_nodes)
    for name in CATEGORICAL_TREE_ARRAYS:
        np.testing.assert_array_equal(getattr(from_rows, name), getattr(tree, name), err_msg=name)


@pytest.mark.parametrize("max_leaf_nodes", [None, 5])
def test_cuda_grows_the_same_tree(max_leaf_nodes, monkeypatch):
    """numba's simulator grows the CPU's tree, histograms (nodes of 24 rows or more) and rows alike."""
    monkeypatch.setattr(cuda_splitting, "MIN_SCAN_THREADS", 8)
    X, y = categorical_data(np.random.default_rng(2), 48, n_classes=3)
    options = dict(min_rows_histogram=24, max_depth=3, max_leaf_nodes=max_leaf_nodes)
    cpu_tree, X_binned = grow(CPUBackend(), X, y, 3, **options)
    cuda_tree, _ = grow(get_backend("cuda"), X, y, 3, **options)
    for name in CATEGORICAL_TREE_ARRAYS:
        np.testing.assert_array_equal(getattr(cuda_tree, name), getattr(cpu_tree, name), err_msg=name)
    assert_rows_follow_the_splits(cpu_tree, X_binned, y, 3, MAX_BINS - 1)


@pytest.mark.parametrize("max_leaf_nodes", [None, 12])
def test_node_counts_reach_the_level_kernels_contiguous(data_and_reference, max_leaf_nodes, monkeypatch):
    """A level of one node and a level of several pass the kernels the same array type (one specialisation
    each: a column of the totals is contiguous for one node only)."""
    X, y, _ = data_and_reference
    layouts = []
    for name in ("stopping_rules", "histogram_plan"):
        kernel = getattr(grower, name)
        monkeypatch.setattr(
            grower, name, lambda count, *args, kernel=kernel: layouts.append(numba.typeof(count).layout)
            or kernel(count, *args)
        )
    tree = DecisionTreeClassifier(max_depth=4, max_leaf_nodes=max_leaf_nodes, device="cpu").fit(X, y).tree_
    assert tree.node_count > 7 and len(layouts) >= 8
    assert set(layouts) == {"C"}


def test_boosting_partitions_every_level_of_every_round_in_one_scratch_buffer(monkeypatch):
    """The partition's working memory is allocated once per fit (the workspace's), not per level or round;
    the trees are those of a fresh buffer per level."""
    scratches = []
    apply_splits = CPUBackend.apply_splits

    def recording(self, *args, scratch=None, **kwargs):
        scratches.append(scratch)
        return apply_splits(self, *args, scratch=scratch, **kwargs)

    X, y = make_classification(n_samples=300, n_features=6, random_state=0)
    params = dict(n_estimators=3, max_depth=3, grow_policy="depthwise", early_stopping=False, random_state=0)
    monkeypatch.setattr(CPUBackend, "apply_splits", recording)
    model = GradientBoostingClassifier(**params).fit(X, y)
    assert len(scratches) == 9 and all(scratch is not None for scratch in scratches)
    assert all(np.shares_memory(scratch, scratches[0]) for scratch in scratches)
    monkeypatch.setattr(CPUBackend, "apply_splits", lambda self, *args, scratch=None, **kwargs: apply_splits(
        self, *args, **kwargs
    ))
    fresh = GradientBoostingClassifier(**params).fit(X, y)
    np.testing.assert_array_equal(model.predict_proba(X), fresh.predict_proba(X))
