"""The grower under memory pressure (chunked levels and out-of-memory retries grow the same tree),
and with feature subsets (histograms of each node's drawn features grow the row path's tree)."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification

from gpuforest import DecisionTreeClassifier, DecisionTreeRegressor, statistics
from gpuforest.backend import CPUBackend, CUDABackend, get_backend
from gpuforest.binning import BinMapper
from gpuforest.grower import GrowthParams, TreeGrower
from gpuforest.kernels.cuda import histogram as cuda_histogram
from gpuforest.kernels.cuda import splitting as cuda_splitting

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
    monkeypatch.setattr(CPUBackend, "free_memory_bytes", lambda self: 12 * one_histogram)
    launches = []
    build = CPUBackend.build_histograms

    def recording_build(self, rows, node_start, *args):
        launches.append(node_start.shape[0])
        return build(self, rows, node_start, *args)

    monkeypatch.setattr(CPUBackend, "build_histograms", recording_build)
    tree = DecisionTreeClassifier(random_state=0, device="cpu").fit(X, y).tree_
    assert_same_tree(tree, reference)
    # Half of 12 histograms, 3 copies of each of a pair's 2: one pair (2 nodes at most) per launch.
    assert max(launches) <= 2 and len(launches) > 20


def test_out_of_memory_is_retried_in_smaller_chunks(data_and_reference, monkeypatch):
    X, y, reference = data_and_reference
    build = CPUBackend.build_histograms
    failures = []

    def failing_build(self, rows, node_start, *args):
        if node_start.shape[0] > 2:
            failures.append(node_start.shape[0])
            raise MemoryError("simulated out-of-memory")
        return build(self, rows, node_start, *args)

    monkeypatch.setattr(CPUBackend, "build_histograms", failing_build)
    tree = DecisionTreeClassifier(random_state=0, device="cpu").fit(X, y).tree_
    assert_same_tree(tree, reference)
    assert failures and all(size > 2 for size in failures)


def test_out_of_memory_with_single_node_chunks_is_raised(data_and_reference, monkeypatch):
    X, y, _ = data_and_reference

    def always_failing_build(self, *args):
        raise MemoryError("simulated out-of-memory")

    monkeypatch.setattr(CPUBackend, "build_histograms", always_failing_build)
    with pytest.raises(MemoryError):
        DecisionTreeClassifier(random_state=0, device="cpu").fit(X, y)


# --- feature subsets (max_features < n_features) ----------------------------------------------


def recorded_calls(monkeypatch, backend_class, name):
    """The positional arguments of every later call of ``backend_class.<name>``."""
    calls = []
    method = getattr(backend_class, name)

    def recording(self, *args):
        calls.append(args)
        return method(self, *args)

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
    monkeypatch.setattr(cuda_histogram, "THREADS", 32)
    rng = np.random.default_rng(5)
    X = np.round(rng.normal(size=(60, 4)), 1)
    X[rng.random(X.shape) < 0.1] = np.nan
    y = (np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 3]) > 0).astype(int) + (X[:, 1] > 0.5)
    # 16 bins: nodes of 32 rows or more (3 classes or 3 regression statistics + the count) use histograms.
    model = estimator(max_features="sqrt", max_bins=16, random_state=2, device="cuda")
    reference = tree_from_rows_only(model, X, y, monkeypatch)
    builds = recorded_calls(monkeypatch, CUDABackend, "build_histograms")
    tree = clone(model).fit(X, y).tree_
    assert_same_tree(tree, reference)
    assert builds and all((feature_mask.sum(axis=1) == 2).all() for *_, feature_mask in builds)
    assert tree.node_count > 5


# --- random thresholds (extra trees) ----------------------------------------------------------


def grow_with_random_thresholds(backend, X, y, random_thresholds=True):
    """One gini tree of ``X`` (16 bins) grown by ``TreeGrower`` on ``backend``; returns it and the bins."""
    n_samples, n_features = X.shape
    mapper = BinMapper(16, random_state=0).fit(X)
    stats = statistics.classification_statistics("gini", y, 3, np.ones(n_samples))
    X_binned = mapper.transform(X, backend)
    rows = backend.row_data(
        X_binned, np.arange(n_samples, dtype=np.int32), np.ones((1, n_samples), dtype=np.int32), stats
    )
    params = GrowthParams(
        max_depth=6, min_samples_split=2, min_samples_leaf=2, min_weight_fraction_leaf=0.0,
        min_impurity_decrease=0.0, max_leaf_nodes=None, max_features=n_features, seed=11,
        random_thresholds=random_thresholds,
    )
    grower = TreeGrower(backend, rows, np.array([0, n_samples], dtype=np.int64), mapper, stats, 3, params)
    (tree,) = grower.grow()
    return tree, backend.to_host(X_binned), mapper.missing_bin


def test_random_thresholds_grow_the_same_tree_on_cuda_within_each_nodes_bins(monkeypatch):
    """CPU and CUDA (numba's simulator) grow the same extra tree, over both split paths
    (nodes of 32 rows or more use histograms); every threshold bin is an occupied bin
    of its node in [lo, hi)."""
    monkeypatch.setattr(cuda_histogram, "THREADS", 32)
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
    assert not np.array_equal(cpu_tree.bin_threshold, best_tree.bin_threshold[: cpu_tree.node_count])
    in_node = cpu_tree.decision_path(X, CPUBackend()).toarray().astype(bool)
    split_nodes = np.flatnonzero(cpu_tree.children_left != -1)
    assert split_nodes.size > 5
    for node in split_nodes:
        bins = X_binned[in_node[:, node], cpu_tree.feature[node]]
        present = bins[bins != missing_bin]
        assert present.min() <= cpu_tree.bin_threshold[node] < present.max(), node
        assert cpu_tree.bin_threshold[node] in present, node
