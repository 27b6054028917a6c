"""The device's levels (``kernels.cuda.growth``) grow the trees of the CPU's compiled loop.

Under numba's simulator (tiny data) each model is fitted on the CPU and on the CUDA backend, whose depth-wise
growth runs every level on the device from the roots: the trees must be equal array by array, node numbering
included, and boosting's later rounds (which read the leaves' rows where growth left them) too. The level
loop also takes over after some levels of the grower's own loop, its buffers grow with the levels, and
categorical features stay in the grower's loop. A larger fit launches no kernel specialisation (what a GPU
compiles) that a smaller one did not.
"""

import numpy as np
import pytest
from sklearn.base import clone

from gpuforest import (
    DecisionTreeClassifier, DecisionTreeRegressor, ExtraTreesRegressor, GradientBoostingClassifier,
    GradientBoostingRegressor, RandomForestClassifier, RandomForestRegressor,
)
from gpuforest.backend import CUDABackend, get_backend
from gpuforest.kernels.cuda import growth

from test_kernels_cpu_growth import TREE_ARRAYS, fitted_trees


def data(task, n_samples=120, seed=0):
    """Four rounded features with missing values; three classes, a noisy sum, or two outputs."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n_samples, 4)), 1)
    X[rng.random(X.shape) < 0.05] = np.nan
    signal = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) + 0.5 * rng.normal(size=n_samples)
    if task == "classification":
        return X, (signal > 0).astype(int) + (np.nan_to_num(X[:, 2]) > 0.8)
    if task == "two outputs":
        return X, np.column_stack([signal, np.nan_to_num(X[:, 3]) * signal])
    return X, signal


def grown_on_device(monkeypatch):
    """The node count of each ``CUDABackend.grow_levels`` call from now on."""
    sizes = []
    original = CUDABackend.grow_levels

    def recording(self, rows, nodes, *args, **kwargs):
        sizes.append(nodes[0].shape[0])
        return original(self, rows, nodes, *args, **kwargs)

    monkeypatch.setattr(CUDABackend, "grow_levels", recording)
    return sizes


def assert_same_models(model, X, y):
    cpu = clone(model).set_params(device="cpu").fit(X, y)
    cuda = clone(model).set_params(device="cuda").fit(X, y)
    for cpu_tree, cuda_tree in zip(fitted_trees(cpu), fitted_trees(cuda), strict=True):
        for name in TREE_ARRAYS:
            np.testing.assert_array_equal(getattr(cuda_tree, name), getattr(cpu_tree, name), err_msg=name)
    return cpu


MAX_BINS = 8
FAST_MODEL = ("classification", DecisionTreeClassifier(max_depth=5, max_bins=MAX_BINS, random_state=0))
MODELS = [
    ("regression", DecisionTreeRegressor(max_depth=6, min_samples_leaf=2, max_bins=MAX_BINS, random_state=0)),
    ("classification", DecisionTreeClassifier(max_features=2, max_depth=5, max_bins=MAX_BINS, random_state=0)),
    ("classification", RandomForestClassifier(n_estimators=3, max_depth=4, max_bins=MAX_BINS, random_state=0)),
    ("regression", ExtraTreesRegressor(n_estimators=2, max_depth=4, max_bins=MAX_BINS, random_state=0)),
    ("classification", GradientBoostingClassifier(
        n_estimators=2, max_depth=3, grow_policy="depthwise", subsample=0.8, colsample_bytree=0.75,
        max_bins=MAX_BINS, early_stopping=False, random_state=0,
    )),
    ("regression", GradientBoostingRegressor(
        n_estimators=2, max_depth=3, grow_policy="depthwise", max_bins=MAX_BINS, early_stopping=False,
        random_state=0,
    )),
    ("two outputs", RandomForestRegressor(n_estimators=2, max_depth=4, max_bins=MAX_BINS, random_state=0)),
    ("classification", DecisionTreeClassifier(
        max_depth=5, min_impurity_decrease=0.01, class_weight="balanced", max_bins=MAX_BINS, random_state=0,
    )),
]


def test_a_tree_grows_on_the_device_from_its_roots(monkeypatch):
    task, model = FAST_MODEL
    sizes = grown_on_device(monkeypatch)
    reference = assert_same_models(model, *data(task))
    assert sizes == [1] and reference.tree_.max_depth == 5


@pytest.mark.quality
@pytest.mark.parametrize(("task", "model"), MODELS, ids=[type(model).__name__ for _, model in MODELS])
def test_the_device_levels_grow_the_cpu_trees(task, model, monkeypatch):
    """Node draws, bootstrap counts, random thresholds, subsampled rows and columns, several rounds, two outputs,
    a smallest impurity decrease and class weights."""
    sizes = grown_on_device(monkeypatch)
    reference = assert_same_models(model, *data(task))
    # Every tree from its root (a forest's batch of trees, or a round's tree per class, in one call).
    assert sum(sizes) == len(fitted_trees(reference))


@pytest.mark.quality
def test_the_device_levels_take_over_below_the_grower_levels_and_grow_their_buffers(monkeypatch):
    """A level loop that starts below two of the grower's levels (a small memory budget), with buffers of
    2 nodes at first, grows the same trees."""
    task, model = FAST_MODEL
    X, y = data(task)
    sizes = grown_on_device(monkeypatch)
    monkeypatch.setattr(growth, "MIN_CAPACITY", 2)
    budget = 2 * 2 * X.shape[1] * (MAX_BINS + 1) * 4 * 8  # two levels of two histograms of 4 slots
    monkeypatch.setattr(CUDABackend, "level_loop_bytes", lambda self: budget)
    assert_same_models(model, X, y)
    assert sizes and sizes[0] > 1


def test_categorical_features_grow_in_the_grower_levels(monkeypatch):
    X, y = data("classification", n_samples=40)
    X[:, 3] = np.arange(40) % 4
    sizes = grown_on_device(monkeypatch)
    model = DecisionTreeClassifier(max_depth=2, max_bins=MAX_BINS, categorical_features=[3], random_state=0)
    assert_same_models(model, X, y)
    assert sizes == []


@pytest.mark.quality
@pytest.mark.parametrize("model", [
    GradientBoostingClassifier(n_estimators=1, max_depth=3, grow_policy="depthwise", max_bins=MAX_BINS),
    GradientBoostingClassifier(n_estimators=1, max_leaf_nodes=4, max_bins=MAX_BINS),
    RandomForestClassifier(n_estimators=1, max_depth=3, max_bins=MAX_BINS, random_state=0),
], ids=["depthwise boosting", "best-first boosting", "forest"])
def test_a_larger_fit_compiles_no_kernel_that_a_smaller_one_did_not(model):
    """Levels of more rows per node take larger blocks (the partition's tiles): the kernels read their block size,
    so a fit after a small warm-up compiles nothing more on a GPU."""
    backend = get_backend("cuda")
    with backend.counting():
        clone(model).set_params(device="cuda").fit(*data("classification", n_samples=200))
    with backend.counting() as larger_fit:
        clone(model).set_params(device="cuda").fit(*data("classification", n_samples=800))
    assert larger_fit.launches > 0 and larger_fit.compilations == 0
