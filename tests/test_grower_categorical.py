"""The grower with a categorical feature (``bin_mapper.is_categorical``): its splits are recorded as
``CATEGORICAL`` with their bitsets, and the rows partitioned by them are the rows a naive router
written here sends down the recorded tree, on both split paths, level-wise and best-first; numba's
CUDA simulator grows the same trees."""

import numpy as np
import pytest

from gpuforest import statistics
from gpuforest.backend import CPUBackend, get_backend
from gpuforest.binning import BinMapper
from gpuforest.grower import GrowthParams, TreeGrower
from gpuforest.kernels.cuda import histogram as cuda_histogram
from gpuforest.kernels.cuda import splitting as cuda_splitting
from gpuforest.tree import CATEGORICAL, NUMERIC, TREE_LEAF, TREE_UNDEFINED

N_CATEGORIES = 10
MAX_BINS = 16
TREE_ARRAYS = (
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
    grower = TreeGrower(backend, rows, np.array([0, n_samples]), mapper, stats, n_classes, params)
    if min_rows_histogram is not None:
        grower.min_rows_histogram = min_rows_histogram
    (tree,) = grower.grow()
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
    for name in TREE_ARRAYS:
        np.testing.assert_array_equal(getattr(from_rows, name), getattr(tree, name), err_msg=name)


@pytest.mark.parametrize("max_leaf_nodes", [None, 5])
def test_cuda_grows_the_same_tree(max_leaf_nodes, monkeypatch):
    """numba's simulator grows the CPU's tree, histograms (nodes of 24 rows or more) and rows alike."""
    monkeypatch.setattr(cuda_histogram, "THREADS", 32)
    monkeypatch.setattr(cuda_splitting, "MIN_SCAN_THREADS", 8)
    X, y = categorical_data(np.random.default_rng(2), 48, n_classes=3)
    options = dict(min_rows_histogram=24, max_depth=3, max_leaf_nodes=max_leaf_nodes)
    cpu_tree, X_binned = grow(CPUBackend(), X, y, 3, **options)
    cuda_tree, _ = grow(get_backend("cuda"), X, y, 3, **options)
    for name in TREE_ARRAYS:
        np.testing.assert_array_equal(getattr(cuda_tree, name), getattr(cpu_tree, name), err_msg=name)
    assert_rows_follow_the_splits(cpu_tree, X_binned, y, 3, MAX_BINS - 1)
