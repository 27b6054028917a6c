"""Monotonic and interaction constraints (gpuforest/constraints.py and the split search's constrained gain).

References: scikit-learn's DecisionTree* (``monotonic_cst``, 1.4+) and HistGradientBoosting* (``monotonic_cst``,
``interaction_cst``) on integer features, whose bins are then exact (every distinct value a bin, thresholds at the
midpoints), so that the same rules grow the same trees; a monotonicity check and a tree walk written here.
"""

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.tree import DecisionTreeClassifier as SklearnTreeClassifier
from sklearn.tree import DecisionTreeRegressor as SklearnTreeRegressor

from gpuforest import (
    BaggingRegressor, DecisionTreeClassifier, DecisionTreeRegressor, ExtraTreesClassifier, GradientBoostingClassifier,
    GradientBoostingRegressor, RandomForestRegressor, load_model,
)
from gpuforest.tree import TREE_LEAF

MONOTONIC = [1, -1, 0]


def integer_data(n_samples=300, n_features=3, seed=0):
    """Integer features in [0, 12) (exact bins) and a target that rises in feature 0 and falls in feature 1
    only on average: unconstrained models break both orders."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 12, size=(n_samples, n_features)).astype(float)
    y = np.sin(X[:, 0]) + 0.3 * X[:, 0] - 0.2 * X[:, 1] + 0.1 * X[:, 2] * X[:, 0] + rng.normal(0, 0.3, n_samples)
    return X, y


def worst_violation(predict, X, monotonic_cst, n_grid=25):
    """The largest step against its constraint of ``predict`` along each constrained feature, over a grid of that
    feature's range at each of the first rows of ``X`` (0 when the predictions are monotone)."""
    worst = 0.0
    rows = X[:20]
    for feature, sign in enumerate(monotonic_cst):
        if sign == 0:
            continue
        grid = np.linspace(X[:, feature].min() - 1, X[:, feature].max() + 1, n_grid)
        probes = np.repeat(rows, n_grid, axis=0)
        probes[:, feature] = np.tile(grid, rows.shape[0])
        steps = np.diff(predict(probes).reshape(rows.shape[0], n_grid), axis=1) * sign
        worst = max(worst, float(-steps.min()))
    return worst


def positive_probability(model):
    return lambda X: model.predict_proba(X)[:, 1]


ESTIMATORS = [
    (DecisionTreeRegressor, dict(max_depth=5), False),
    (DecisionTreeClassifier, dict(max_depth=5), True),
    (RandomForestRegressor, dict(n_estimators=4, max_depth=4, random_state=0), False),
    (ExtraTreesClassifier, dict(n_estimators=4, max_depth=4, random_state=0), True),
    (GradientBoostingRegressor, dict(n_estimators=8, max_leaf_nodes=6, min_samples_leaf=5), False),
    (GradientBoostingClassifier, dict(n_estimators=8, max_depth=3, grow_policy="depthwise", min_samples_leaf=5), True),
]


@pytest.mark.parametrize("Estimator, params, binary", ESTIMATORS, ids=lambda value: getattr(value, "__name__", ""))
def test_predictions_are_monotone_along_constrained_features(Estimator, params, binary):
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 10, size=(300, 3))
    y = np.sin(X[:, 0]) + 0.3 * X[:, 0] - 0.2 * X[:, 1] + rng.normal(0, 0.5, 300)
    if binary:
        y = (y > np.median(y)).astype(int)
    params = dict(params, device="cpu")

    def predict(model):
        return positive_probability(model) if binary else model.predict

    free = Estimator(**params).fit(X, y)
    constrained = Estimator(**params, monotonic_cst=MONOTONIC).fit(X, y)
    assert worst_violation(predict(free), X, MONOTONIC) > 1e-3  # the data breaks the orders
    assert worst_violation(predict(constrained), X, MONOTONIC) == 0.0


@pytest.mark.parametrize("Estimator, Reference, binary", [
    (DecisionTreeRegressor, SklearnTreeRegressor, False), (DecisionTreeClassifier, SklearnTreeClassifier, True),
])
def test_trees_match_scikit_learn(Estimator, Reference, binary):
    X, y = integer_data()
    if binary:
        y = (y > np.median(y)).astype(int)
    ours = Estimator(max_depth=4, monotonic_cst=MONOTONIC, device="cpu").fit(X, y)
    theirs = Reference(max_depth=4, monotonic_cst=MONOTONIC, random_state=0).fit(X, y)
    free = Reference(max_depth=4, random_state=0).fit(X, y)
    predict = "predict_proba" if binary else "predict"
    np.testing.assert_allclose(getattr(ours, predict)(X), getattr(theirs, predict)(X), rtol=0, atol=1e-12)
    assert not np.allclose(getattr(free, predict)(X), getattr(theirs, predict)(X))  # the constraints bind
    assert ours.tree_.node_count == theirs.tree_.node_count


@pytest.mark.quality
@pytest.mark.parametrize("constraints, grow_policy", [
    (dict(monotonic_cst=MONOTONIC), "lossguide"), (dict(monotonic_cst=MONOTONIC), "depthwise"),
    (dict(interaction_cst=[[0, 1], [2]]), "depthwise"), (dict(interaction_cst="no_interactions"), "lossguide"),
    (dict(monotonic_cst=[1, 0, -1], interaction_cst="pairwise"), "lossguide"),
])
def test_boosting_matches_hist_gradient_boosting(constraints, grow_policy):
    """The same trees as HistGradientBoostingRegressor: its predictions to 1e-6 (float32 gradients against our
    fixed-point sums)."""
    X, y = integer_data()
    depthwise = grow_policy == "depthwise"
    shape = dict(max_depth=3 if depthwise else None, min_samples_leaf=10)
    ours = GradientBoostingRegressor(
        n_estimators=10, max_leaf_nodes=8, grow_policy=grow_policy, early_stopping=False, device="cpu", **shape,
        **constraints,
    ).fit(X, y)
    theirs = HistGradientBoostingRegressor(
        max_iter=10, max_leaf_nodes=None if depthwise else 8, early_stopping=False, **shape, **constraints
    ).fit(X, y)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=0, atol=1e-6)


@pytest.mark.quality
def test_binary_boosting_matches_hist_gradient_boosting():
    X, y = integer_data()
    y = (y > np.median(y)).astype(int)
    ours = GradientBoostingClassifier(
        n_estimators=10, max_leaf_nodes=8, early_stopping=False, device="cpu", monotonic_cst=MONOTONIC
    ).fit(X, y)
    theirs = HistGradientBoostingClassifier(
        max_iter=10, max_leaf_nodes=8, early_stopping=False, monotonic_cst=MONOTONIC
    ).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), rtol=0, atol=1e-6)


def path_feature_sets(tree):
    """The set of features split on along each root-to-leaf path of ``tree`` (a naive recursion)."""
    paths = []

    def walk(node, features):
        if tree.children_left[node] == TREE_LEAF:
            paths.append(features)
            return
        features = features | {int(tree.feature[node])}
        walk(tree.children_left[node], features)
        walk(tree.children_right[node], features)

    walk(0, frozenset())
    return paths


@pytest.mark.parametrize("interaction_cst, groups", [
    ([[0], [1, 2]], [{0}, {1, 2}, {3}]),  # feature 3, in no group, is a group of its own
    ("pairwise", [{a, b} for a in range(4) for b in range(a + 1, 4)]),
])
def test_every_path_uses_one_group(interaction_cst, groups):
    rng = np.random.default_rng(2)
    X = rng.uniform(size=(200, 4))
    y = X[:, 0] * X[:, 1] * X[:, 2] + X[:, 2] * X[:, 3] + X[:, 0] * X[:, 3] + rng.normal(0, 0.05, 200)
    params = dict(n_estimators=3, max_leaf_nodes=12, min_samples_leaf=5, early_stopping=False, device="cpu")
    model = GradientBoostingRegressor(**params, interaction_cst=interaction_cst).fit(X, y)
    free = GradientBoostingRegressor(**params).fit(X, y)
    assert any(
        not any(path <= group for group in groups) for tree in free.trees_ for path in path_feature_sets(tree)
    )
    for tree in model.trees_:
        assert tree.node_count > 1
        for path in path_feature_sets(tree):
            assert any(path <= group for group in groups), path


TREE_ARRAYS = ("children_left", "children_right", "feature", "threshold", "value", "missing_go_to_left")


def test_bagging_keeps_its_trees_constraints():
    rng = np.random.default_rng(4)
    X = rng.uniform(0, 10, size=(200, 3))
    y = np.sin(X[:, 0]) + 0.3 * X[:, 0] - 0.2 * X[:, 1] + rng.normal(0, 0.5, 200)
    model = BaggingRegressor(
        DecisionTreeRegressor(max_depth=4, monotonic_cst=MONOTONIC, device="cpu"), n_estimators=4, random_state=0
    ).fit(X, y)
    assert model.forest_ is not None
    assert worst_violation(model.predict, X, MONOTONIC) == 0.0


@pytest.mark.parametrize("Estimator, params, binary", [
    (GradientBoostingRegressor, dict(
        n_estimators=1, grow_policy="depthwise", max_depth=2, min_samples_leaf=2, max_bins=4, early_stopping=False,
        monotonic_cst=[1, -1, 0], interaction_cst=[[0, 1], [1, 2]],
    ), False),
    (DecisionTreeClassifier, dict(max_depth=2, max_bins=4, monotonic_cst=[-1, 0, 1]), True),
])
def test_cpu_and_simulated_cuda_grow_the_same_trees(Estimator, params, binary):
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(30, 3))
    X[::7, 2] = np.nan
    y = X[:, 0] - X[:, 1] + rng.normal(0, 0.3, 30)
    if binary:
        y = (y > 0).astype(int)
    cpu = Estimator(device="cpu", **params).fit(X, y)
    cuda = Estimator(device="cuda", **params).fit(X, y)
    cpu_trees = cpu.trees_ if hasattr(cpu, "trees_") else [cpu.tree_]
    cuda_trees = cuda.trees_ if hasattr(cuda, "trees_") else [cuda.tree_]
    assert max(tree.node_count for tree in cpu_trees) > 1
    for cpu_tree, cuda_tree in zip(cpu_trees, cuda_trees, strict=True):
        for name in TREE_ARRAYS:
            np.testing.assert_array_equal(getattr(cpu_tree, name), getattr(cuda_tree, name), err_msg=name)


def assert_same_error(ours, theirs, X, y):
    """Fitting ``ours`` raises the ValueError that fitting scikit-learn's ``theirs`` raises (class names aside)."""
    messages = []
    for estimator in (ours, theirs):
        with pytest.raises(ValueError) as raised:
            estimator.fit(X, y)
        messages.append(str(raised.value).replace(type(estimator).__name__, "Estimator"))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("monotonic_cst", [[1, 0], [1, 2, 0], {"x9": 1}, {0: 1}])
@pytest.mark.parametrize("Estimator, Reference", [
    (GradientBoostingRegressor, HistGradientBoostingRegressor), (DecisionTreeRegressor, SklearnTreeRegressor),
    (RandomForestRegressor, SklearnTreeRegressor),
])
def test_bad_monotonic_cst_gives_scikit_learns_error(monotonic_cst, Estimator, Reference):
    import pandas as pd

    X, y = integer_data(n_samples=40)
    frame = pd.DataFrame(X, columns=["x0", "x1", "x2"])
    if isinstance(monotonic_cst, dict) and Reference is not HistGradientBoostingRegressor:
        # scikit-learn's trees take no dict: the reference is HistGradientBoosting's check.
        Reference = HistGradientBoostingRegressor
    data = frame if isinstance(monotonic_cst, dict) and "x9" in monotonic_cst else X
    assert_same_error(
        Estimator(monotonic_cst=monotonic_cst, device="cpu"), Reference(monotonic_cst=monotonic_cst), data, y
    )


def test_multiclass_refuses_monotonic_cst():
    X, y = integer_data(n_samples=60)
    y = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    for Estimator, Reference in (
        (DecisionTreeClassifier, SklearnTreeClassifier), (GradientBoostingClassifier, HistGradientBoostingClassifier),
    ):
        assert_same_error(Estimator(monotonic_cst=MONOTONIC, device="cpu"), Reference(monotonic_cst=MONOTONIC), X, y)


@pytest.mark.parametrize("interaction_cst", [[[0, 5]], [[0, 1.5]], [1, 2], "triples"])
def test_bad_interaction_cst_gives_scikit_learns_error(interaction_cst):
    X, y = integer_data(n_samples=40)
    assert_same_error(
        GradientBoostingRegressor(interaction_cst=interaction_cst, device="cpu"),
        HistGradientBoostingRegressor(interaction_cst=interaction_cst), X, y,
    )


def test_categorical_features_refuse_monotonic_cst():
    X, y = integer_data(n_samples=40)
    with pytest.raises(ValueError, match="Categorical features cannot have monotonic constraints"):
        GradientBoostingRegressor(categorical_features=[0], monotonic_cst=MONOTONIC, device="cpu").fit(X, y)


def test_model_files_keep_the_constraints(tmp_path):
    X, y = integer_data(n_samples=100)
    model = GradientBoostingRegressor(
        n_estimators=3, monotonic_cst=np.array(MONOTONIC), interaction_cst=[[0, 1], [2]], early_stopping=False,
        device="cpu",
    ).fit(X, y)
    model.save_model(tmp_path / "model.zip")
    loaded = load_model(tmp_path / "model.zip", device="cpu")
    np.testing.assert_array_equal(loaded.monotonic_cst, MONOTONIC)
    assert [list(group) for group in loaded.interaction_cst] == [[0, 1], [2]]
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
