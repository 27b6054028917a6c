"""``sklearn.inspection.partial_dependence(method="recursion")`` on gpuforest's trees, forests and boosting.

References: scikit-learn's own recursion on its tree grown to the same splits; ``method="brute"`` where the
two are equal mathematically (sums of stumps: the mean over the training rows of a function of one feature at a
time is what the weighted traversal computes, as every node's weight is its training rows'); a tree's predictions
where the grid fixes every feature (no node is averaged); a plain recursive traversal written here.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import is_classifier
from sklearn import tree as sk_tree
from sklearn.inspection import partial_dependence

import gpuforest
from gpuforest.tree import TREE_LEAF


def _regression_data(n_samples=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, 3))
    return X, 2 * X[:, 0] + np.sin(X[:, 1]) + X[:, 2] * X[:, 0]


def _naive_partial_dependence(tree, grid_row, target_features, node=0):
    """Friedman (2001, section 8.2), recursively, binary numeric splits without missing values."""
    if tree.children_left[node] == TREE_LEAF:
        return tree.value[node, 0]
    left, right = tree.children_left[node], tree.children_right[node]
    if tree.feature[node] in target_features:
        x = np.float32(grid_row[list(target_features).index(tree.feature[node])])
        return _naive_partial_dependence(tree, grid_row, target_features, left if x <= tree.threshold[node] else right)
    weight = tree.weighted_n_node_samples
    return (weight[left] * _naive_partial_dependence(tree, grid_row, target_features, left)
            + weight[right] * _naive_partial_dependence(tree, grid_row, target_features, right)) / weight[node]


@pytest.mark.parametrize("features", [[0], [1], [(0, 2)]])
def test_tree_regressor_equals_sklearn_recursion(features):
    X, y = _regression_data()
    ours = gpuforest.DecisionTreeRegressor(max_depth=3).fit(X, y)
    theirs = sk_tree.DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X))  # the same tree
    expected = partial_dependence(theirs, X, features, method="recursion").average
    np.testing.assert_allclose(partial_dependence(ours, X, features, method="recursion").average, expected,
                               rtol=1e-12, atol=1e-12)


def test_deep_tree_equals_naive_traversal():
    X, y = _regression_data(n_samples=120, seed=1)
    sample_weight = np.random.default_rng(2).uniform(0.5, 2.0, size=y.shape[0])
    model = gpuforest.DecisionTreeRegressor(max_depth=8).fit(X, y, sample_weight=sample_weight)
    result = partial_dependence(model, X, [(1, 2)], method="recursion", grid_resolution=6)
    grid = np.array([[a, b] for a in result.grid_values[0] for b in result.grid_values[1]])
    expected = [_naive_partial_dependence(model.tree_, row, (1, 2))[0] for row in grid]
    np.testing.assert_allclose(result.average.ravel(), expected, rtol=1e-12)


def test_auto_chooses_recursion_and_sums_of_stumps_equal_brute():
    X, y = _regression_data()
    for model in (
        gpuforest.DecisionTreeRegressor(max_depth=1),
        gpuforest.RandomForestRegressor(n_estimators=5, max_depth=1, bootstrap=False, max_features=1, random_state=0),
        gpuforest.ExtraTreesRegressor(n_estimators=5, max_depth=1, random_state=0),
    ):
        model.fit(X, y)
        for feature in range(3):
            recursion = partial_dependence(model, X, [feature], method="recursion").average
            np.testing.assert_allclose(recursion, partial_dependence(model, X, [feature], method="brute").average,
                                       rtol=1e-6, err_msg=type(model).__name__)
            np.testing.assert_array_equal(partial_dependence(model, X, [feature]).average, recursion)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_boosting_of_stumps_equals_brute_decision_function_less_baseline(n_classes):
    X, y = _regression_data()
    labels = np.digitize(y, np.quantile(y, np.linspace(0, 1, n_classes + 1)[1:-1]))
    for model, target in ((gpuforest.GradientBoostingRegressor(max_depth=1, n_estimators=10), y),
                          (gpuforest.GradientBoostingClassifier(max_depth=1, n_estimators=10), labels)):
        model.fit(X, target)
        recursion = partial_dependence(model, X, [0], method="recursion").average
        brute = partial_dependence(model, X, [0], method="brute", response_method="auto" if target is y
                                   else "decision_function").average
        np.testing.assert_allclose(recursion + model.baseline_[:, None], brute, rtol=1e-5, atol=1e-6)


def test_classifier_probabilities_equal_brute_for_stumps():
    X, y = _regression_data()
    labels = (y > np.median(y)).astype(int)
    for model in (gpuforest.DecisionTreeClassifier(max_depth=1),
                  gpuforest.RandomForestClassifier(n_estimators=4, max_depth=1, bootstrap=False, random_state=0)):
        model.fit(X, labels)
        recursion = partial_dependence(model, X, [0], method="recursion").average
        np.testing.assert_allclose(recursion, partial_dependence(model, X, [0], method="brute").average, rtol=1e-6)


def test_grid_of_every_feature_is_the_prediction_with_missing_values_and_categories():
    """Fixing every feature leaves nothing to average: the traversal must route as ``predict`` does, NaN by
    ``missing_go_to_left``, codes by their bitset (binary categorical splits) or child (ID3's multiway), an
    unknown code as missing, and C4.5's fractional cases down every branch."""
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.normal(size=300), rng.integers(0, 6, size=300)]).astype(float)
    y = X[:, 0] + np.array([0.0, 3.0, -2.0, 1.0, 5.0, -1.0])[X[:, 1].astype(int)]
    X[rng.random(300) < 0.15, 0] = np.nan
    grid = np.column_stack([np.r_[rng.normal(size=10), np.nan, np.nan], np.r_[rng.integers(0, 6, size=10), 2, 7]])
    models = [gpuforest.DecisionTreeRegressor(max_depth=5, categorical_features=[1]).fit(X, y),
              gpuforest.DecisionTreeClassifier(max_depth=5, algorithm="id3", categorical_features=[1])
              .fit(X, (y > 1).astype(int)),
              gpuforest.DecisionTreeClassifier(max_depth=5, algorithm="c45", categorical_features=[1])
              .fit(X, (y > 1).astype(int))]
    for model in models:
        average = model._compute_partial_dependence_recursion(grid, [0, 1])
        expected = model.predict_proba(grid)[:, 1] if is_classifier(model) else model.predict(grid)
        np.testing.assert_allclose(average.ravel(), expected, rtol=1e-12, err_msg=type(model).__name__)


def test_refusals_name_the_problem():
    X, y = _regression_data()
    labels = (y > 0).astype(int)
    majority = gpuforest.RandomForestClassifier(n_estimators=3, voting="majority", random_state=0).fit(X, labels)
    with pytest.raises(ValueError, match="voting='soft'"):
        partial_dependence(majority, X, [0], method="recursion")
    weighted = gpuforest.GradientBoostingRegressor(n_estimators=3).fit(X, y, sample_weight=np.arange(1.0, 81.0))
    with pytest.raises(ValueError, match="sample_weight"):
        partial_dependence(weighted, X, [0], method="recursion")
    model = gpuforest.DecisionTreeRegressor(max_depth=2).fit(X, y)
    with pytest.raises(ValueError, match="target_features"):
        model._compute_partial_dependence_recursion(np.zeros((2, 1)), [3])
    with pytest.raises(ValueError, match="numeric grid values"):
        model._compute_partial_dependence_recursion(np.array([["a"], ["b"]], dtype=object), [0])


def test_categories_of_a_dataframe_column_are_coded_as_at_predict():
    rng = np.random.default_rng(4)
    colors = np.array(["red", "green", "blue", "grey"])
    frame = pd.DataFrame({"x": rng.normal(size=200), "color": pd.Categorical(colors[rng.integers(0, 4, size=200)])})
    y = frame["x"].to_numpy() + (frame["color"] == "blue") * 3.0
    model = gpuforest.GradientBoostingRegressor(max_depth=1, n_estimators=20, categorical_features="from_dtype")
    model.fit(frame, y)
    recursion = partial_dependence(model, frame, ["color"], categorical_features=["color"], method="recursion")
    brute = partial_dependence(model, frame, ["color"], categorical_features=["color"], method="brute")
    np.testing.assert_allclose(recursion.average + model.baseline_[:, None], brute.average, rtol=1e-6)
    assert np.ptp(brute.average) > 1  # "blue" is told apart
