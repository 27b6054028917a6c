"""The compiled loops (``kernels.cpu.growth``) grow the trees of the grower's own loops.

The reference is the same fit with ``CPUBackend.grows_levels`` off, where every level goes through
``TreeGrower._evaluate`` and ``_split``, and every best-first step through ``grower._BestFirst`` (the loops
the CUDA backend runs): the trees must be equal array by array, node numbering included. The level loop
takes over at the roots of a small fit, and after a few Python levels when the first levels' histograms are
too large (``backend.LEVEL_LOOP_BYTES`` lowered here); best-first growth is compiled from the roots.
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

from gpuforest import (
    DecisionTreeClassifier, DecisionTreeRegressor, ExtraTreesClassifier, ExtraTreesRegressor,
    GradientBoostingClassifier, GradientBoostingRegressor, RandomForestClassifier, RandomForestRegressor,
)
from gpuforest import grower
from gpuforest.backend import CPUBackend
from gpuforest.grower import TreeGrower

TREE_ARRAYS = (
    "children_left", "children_right", "feature", "threshold", "bin_threshold", "missing_go_to_left", "value",
    "impurity", "n_node_samples", "weighted_n_node_samples", "node_depth", "split_type", "category_bitset",
)


def fitted_trees(model):
    """Every ``Tree`` of a fitted model."""
    if hasattr(model, "tree_"):
        return [model.tree_]
    if hasattr(model, "trees_"):  # boosting: a round's trees
        return [tree for round_trees in model.trees_ for tree in np.ravel(round_trees)]
    return [tree for estimator in np.ravel(model.estimators_) for tree in fitted_trees(estimator)]


def data(task, n_samples, seed=0):
    """Features with missing values and a categorical column (codes 0-7) in column 0."""
    make = make_classification if task == "classification" else make_regression
    X, y = make(n_samples=n_samples, n_features=8, n_informative=5, random_state=seed)
    rng = np.random.default_rng(seed)
    X[:, 0] = rng.integers(0, 8, n_samples)
    X[rng.random(X.shape) < 0.05] = np.nan
    X[:, 0] = np.nan_to_num(X[:, 0], nan=0.0)
    if task == "classification":
        y = y + (X[:, 0] % 3 == 0)  # three classes, the categorical column informative
    return X, y


MODELS = [
    ("classification", lambda: DecisionTreeClassifier(random_state=0, categorical_features=[0])),
    ("regression", lambda: DecisionTreeRegressor(random_state=0, min_samples_leaf=2)),
    ("classification", lambda: DecisionTreeClassifier(random_state=0, max_features=3, max_depth=7)),
    ("classification", lambda: RandomForestClassifier(n_estimators=4, random_state=0)),
    ("regression", lambda: RandomForestRegressor(n_estimators=3, max_features=0.5, random_state=0)),
    ("classification", lambda: ExtraTreesClassifier(n_estimators=3, random_state=0)),
    ("regression", lambda: ExtraTreesRegressor(n_estimators=3, max_features=0.5, random_state=0)),
    ("classification", lambda: GradientBoostingClassifier(
        n_estimators=3, max_depth=6, max_leaf_nodes=None, subsample=0.7, colsample_bytree=0.6,
        early_stopping=False, random_state=0,
    )),
    ("regression", lambda: GradientBoostingRegressor(
        n_estimators=3, max_depth=5, max_leaf_nodes=None, min_samples_leaf=5, early_stopping=False, random_state=0,
    )),
]


def grown_in_backend(monkeypatch, method="grow_levels"):
    """The number of nodes each call of ``CPUBackend.<method>`` takes over (a level's, or every tree's root),
    from now on."""
    sizes = []
    original = getattr(CPUBackend, method)

    def recording(self, rows, nodes, *args, **kwargs):
        sizes.append(nodes[0].shape[0])
        return original(self, rows, nodes, *args, **kwargs)

    monkeypatch.setattr(CPUBackend, method, recording)
    return sizes


def assert_same_models(model, X, y, monkeypatch):
    compiled = fitted_trees(model().fit(X, y))
    with monkeypatch.context() as patch:
        patch.setattr(CPUBackend, "grows_levels", False)
        python = fitted_trees(model().fit(X, y))
    assert len(compiled) == len(python)
    for tree, reference in zip(compiled, python):
        assert tree.node_count == reference.node_count
        for name in TREE_ARRAYS:
            np.testing.assert_array_equal(getattr(tree, name), getattr(reference, name), err_msg=name)


@pytest.mark.parametrize("task, model", MODELS)
def test_a_small_fit_grows_in_one_call_from_its_roots(task, model, monkeypatch):
    X, y = data(task, 600)
    levels = grown_in_backend(monkeypatch)
    assert_same_models(model, X, y, monkeypatch)
    # Every batch of trees grew in the compiled loop, from its roots.
    n_trees = len(fitted_trees(model().fit(X, y)))
    assert levels and sum(levels) >= n_trees


@pytest.mark.parametrize("task, model", MODELS)
def test_the_loop_takes_over_below_histograms_too_large(task, model, monkeypatch):
    X, y = data(task, 3000, seed=1)
    # Histograms of two levels of 2 x 3000 / min_rows_histogram nodes exceed this: the first levels go through
    # Python, and the loop takes over at a level of several nodes.
    monkeypatch.setattr("gpuforest.backend.LEVEL_LOOP_BYTES", 8 * 256 * 4 * 8 * 12)
    levels = grown_in_backend(monkeypatch)
    assert_same_models(model, X, y, monkeypatch)
    assert levels and max(levels) > 1


def test_constraints_and_multiway_splits_stay_in_python(monkeypatch):
    X, y = data("regression", 400)
    levels = grown_in_backend(monkeypatch)
    DecisionTreeRegressor(monotonic_cst=[0, 1, 0, 0, 0, 0, 0, 0], random_state=0).fit(X, y)
    DecisionTreeClassifier(algorithm="id3", categorical_features=[0], random_state=0).fit(X, y > 0)
    assert levels == []


def test_the_histogram_buffers_hold_every_level_below(monkeypatch):
    """``TreeGrower._hist_capacity`` of a level bounds the histograms of every level below it (numba does not
    check bounds: a level needing more would write past the buffers). Checked on the grower's own loop, level
    by level: twice the nodes large enough for a histogram never exceed the bound of any level above."""
    X, y = data("classification", 3000, seed=2)
    bounds, needed = [], []
    evaluate = TreeGrower._evaluate

    def recording(self, nodes, *args):
        bounds.append(self._hist_capacity(nodes))
        needed.append(2 * int((nodes.counts >= self.min_rows_histogram).sum()))
        return evaluate(self, nodes, *args)

    monkeypatch.setattr(CPUBackend, "grows_levels", False)
    monkeypatch.setattr(TreeGrower, "_evaluate", recording)
    DecisionTreeClassifier(random_state=0, min_samples_leaf=3).fit(X, y)
    assert len(needed) > 5 and max(needed) > 2
    assert (np.array(needed) <= np.minimum.accumulate(bounds)).all()


BEST_FIRST_MODELS = [
    ("classification", lambda: DecisionTreeClassifier(max_leaf_nodes=20, categorical_features=[0], random_state=0)),
    ("regression", lambda: DecisionTreeRegressor(max_leaf_nodes=30, min_samples_leaf=2, random_state=0)),
    # Per-node feature draws and random thresholds: one leaf per tree and step (``_BestFirst.exact``).
    ("classification", lambda: RandomForestClassifier(n_estimators=3, max_leaf_nodes=25, random_state=0)),
    ("regression", lambda: ExtraTreesRegressor(n_estimators=2, max_leaf_nodes=20, max_features=None, random_state=0)),
    ("classification", lambda: GradientBoostingClassifier(
        n_estimators=3, subsample=0.7, colsample_bytree=0.6, early_stopping=False, random_state=0,
    )),
    ("regression", lambda: GradientBoostingRegressor(
        n_estimators=3, max_leaf_nodes=40, min_samples_leaf=5, early_stopping=False, random_state=0,
    )),
]


@pytest.mark.parametrize("task, model", BEST_FIRST_MODELS)
def test_best_first_growth_grows_in_one_call(task, model, monkeypatch):
    X, y = data(task, 1500, seed=3)
    calls = grown_in_backend(monkeypatch, "grow_best_first")
    assert_same_models(model, X, y, monkeypatch)
    n_trees = len(fitted_trees(model().fit(X, y)))
    # Every tree of the first fit, and of this one, grew in the compiled loop.
    assert sum(calls) == 2 * n_trees


def test_best_first_tables_grow_and_pools_run_short_alike(monkeypatch):
    """A node table that starts with room for 4 nodes grows in the compiled loop, and a pool of 3 histograms
    leaves nodes to be scanned from their rows, as in ``_BestFirst``: the same trees."""
    X, y = data("regression", 3000, seed=4)
    monkeypatch.setattr(grower, "TABLE_CAPACITY", 4)
    monkeypatch.setattr(grower, "SMALL_LEVEL_BYTES", 0)
    monkeypatch.setattr(CPUBackend, "free_memory_bytes", lambda self: 2 * 8 * 256 * 4 * 8 * 3)
    pool_rows = []
    init = grower._BestFirst.__init__

    def recording_init(self, tree_grower):
        init(self, tree_grower)
        pool_rows.append(self.pool.hist.shape[0])

    monkeypatch.setattr(grower._BestFirst, "__init__", recording_init)
    calls = grown_in_backend(monkeypatch, "grow_best_first")
    assert_same_models(lambda: DecisionTreeRegressor(max_leaf_nodes=60, min_samples_leaf=3), X, y, monkeypatch)
    assert calls == [1] and pool_rows == [3, 3]
