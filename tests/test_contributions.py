"""SHAP values and interaction values (gpuforest.contributions) against the Shapley formulas computed by brute force."""

from itertools import combinations
from math import factorial

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from gpuforest import (
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    RandomForestClassifier,
)
from gpuforest.tree import CATEGORICAL, TREE_LEAF

try:
    from .kernel_problems import contribution_problem
except ImportError:
    from kernel_problems import contribution_problem


def _goes_left(tree, node, x):
    """The tree's routing of value ``x`` at split ``node`` (numeric threshold or categorical bitset)."""
    if np.isnan(x):
        return tree.missing_go_to_left[node]
    if tree.split_type[node] == CATEGORICAL:
        code = int(x)
        return bool((tree.category_bitset[node, code // 32] >> (code % 32)) & 1)
    return x <= tree.threshold[node]


def _expectation(tree, x, known, node=0):
    """v(S): the tree's value given the features ``known`` of row ``x``, other splits averaged by training cover."""
    left = tree.children_left[node]
    if left == TREE_LEAF:
        return tree.value[node, 0]
    right = tree.children_right[node]
    if tree.feature[node] in known:
        return _expectation(tree, x, known, left if _goes_left(tree, node, x[tree.feature[node]]) else right)
    cover = tree.weighted_n_node_samples
    return (
        cover[left] * _expectation(tree, x, known, left) + cover[right] * _expectation(tree, x, known, right)
    ) / (cover[left] + cover[right])


def _subsets(features):
    return [set(subset) for size in range(len(features) + 1) for subset in combinations(features, size)]


def _brute_force_shap(tree, x):
    """Shapley values by the subset formula, shape (n_features + 1, n_values), expected value last."""
    n_features = x.shape[0]
    phi = np.zeros((n_features + 1, tree.value.shape[2]))
    for i in range(n_features):
        others = [f for f in range(n_features) if f != i]
        for subset in _subsets(others):
            weight = factorial(len(subset)) * factorial(n_features - len(subset) - 1) / factorial(n_features)
            phi[i] += weight * (_expectation(tree, x, subset | {i}) - _expectation(tree, x, subset))
    phi[n_features] = _expectation(tree, x, set())
    return phi


def _brute_force_interactions(tree, x):
    """Shapley interaction index (Lundberg et al. 2018, section 4), shape (n_features + 1, n_features + 1, n_values)."""
    n_features = x.shape[0]
    phi = np.zeros((n_features + 1, n_features + 1, tree.value.shape[2]))
    for i, j in combinations(range(n_features), 2):
        others = [f for f in range(n_features) if f not in (i, j)]
        for subset in _subsets(others):
            weight = factorial(len(subset)) * factorial(n_features - len(subset) - 2) / (2 * factorial(n_features - 1))
            value = (
                _expectation(tree, x, subset | {i, j}) - _expectation(tree, x, subset | {i})
                - _expectation(tree, x, subset | {j}) + _expectation(tree, x, subset)
            )
            phi[i, j] += weight * value
            phi[j, i] += weight * value
    main = _brute_force_shap(tree, x)
    for i in range(n_features + 1):
        phi[i, i] = main[i] - phi[i].sum(axis=0)
    return phi


def test_tree_contributions_equal_brute_force_shapley_values():
    X, y = contribution_problem()
    tree = DecisionTreeRegressor(max_depth=5, categorical_features=[3]).fit(X, y)
    assert np.any(tree.tree_.split_type == CATEGORICAL)
    rows = X[:6]
    expected = np.array([_brute_force_shap(tree.tree_, x)[:, 0] for x in rows])
    np.testing.assert_allclose(tree.predict_contributions(rows), expected, rtol=0, atol=1e-9)


def test_classifier_contributions_equal_brute_force_per_class():
    X, y = contribution_problem(seed=1)
    labels = np.digitize(y, [-1.0, 1.0])
    tree = DecisionTreeClassifier(max_depth=4).fit(X, labels)
    rows = X[:8]
    expected = np.array([_brute_force_shap(tree.tree_, x) for x in rows])
    contributions = tree.predict_contributions(rows)
    assert contributions.shape == (8, X.shape[1] + 1, 3)
    np.testing.assert_allclose(contributions, expected, rtol=0, atol=1e-9)


def test_interactions_equal_brute_force_interaction_index():
    X, y = contribution_problem(seed=2)
    tree = DecisionTreeRegressor(max_depth=5, categorical_features=[3]).fit(X, y)
    rows = X[:6]
    expected = np.array([_brute_force_interactions(tree.tree_, x)[..., 0] for x in rows])
    np.testing.assert_allclose(tree.predict_interactions(rows), expected, rtol=0, atol=1e-9)


def test_forest_contributions_are_the_mean_of_the_trees_brute_force_values():
    X, y = contribution_problem(seed=3)
    forest = ExtraTreesRegressor(n_estimators=3, max_depth=4, random_state=0).fit(X, y)
    rows = X[:5]
    expected = np.mean([[_brute_force_shap(tree, x)[:, 0] for x in rows] for tree in forest.trees_], axis=0)
    np.testing.assert_allclose(forest.predict_contributions(rows), expected, rtol=0, atol=1e-9)


@pytest.mark.parametrize(
    "estimator, raw_prediction",
    [
        (DecisionTreeRegressor(max_depth=4), "predict"),
        (RandomForestClassifier(n_estimators=4, max_depth=4, random_state=0), "predict_proba"),
        (GradientBoostingClassifier(n_estimators=3, max_depth=3), "decision_function"),
        (GradientBoostingClassifier(n_estimators=3, max_depth=2), "binary_decision_function"),
    ],
    ids=["tree", "forest_classifier", "boosting_multiclass", "boosting_binary"],
)
def test_contributions_and_interactions_sum_to_the_raw_prediction(estimator, raw_prediction):
    X, y = contribution_problem(seed=4)
    if raw_prediction != "predict":
        y = np.digitize(y, [0.0] if raw_prediction.startswith("binary") else [-1.0, 1.0])
    estimator.fit(X, y)
    rows = X[:15]
    raw = getattr(estimator, raw_prediction.removeprefix("binary_"))(rows)
    contributions = estimator.predict_contributions(rows)
    # One output: (n_samples, n_features + 1); several: the outputs last, as shap's TreeExplainer.
    assert contributions.shape == (raw.shape[0], X.shape[1] + 1, *raw.shape[1:])
    np.testing.assert_allclose(contributions.sum(axis=1), raw, rtol=0, atol=1e-9)
    interactions = estimator.predict_interactions(rows)
    np.testing.assert_allclose(interactions.sum(axis=2), contributions, rtol=0, atol=1e-9)
    np.testing.assert_allclose(interactions, np.swapaxes(interactions, 1, 2), rtol=0, atol=1e-12)


def test_bad_input_and_unsupported_models_raise():
    X, y = contribution_problem(seed=6)
    with pytest.raises(NotFittedError):
        DecisionTreeRegressor().predict_contributions(X)
    tree = DecisionTreeRegressor(max_depth=2).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        tree.predict_contributions(X[:, :2])
    labels = (y > 0).astype(int)
    with pytest.raises(ValueError, match="voting='soft'"):
        RandomForestClassifier(n_estimators=2, max_depth=2, voting="plurality").fit(X, labels).predict_contributions(X)
    multiway = DecisionTreeClassifier(algorithm="id3", categorical_features=[0]).fit(X[:, 3:], labels)
    with pytest.raises(ValueError, match="multiway"):
        multiway.predict_interactions(X[:, 3:])


@pytest.mark.quality
def test_contributions_equal_shap_tree_explainer():
    shap = pytest.importorskip("shap")
    X, y = contribution_problem(n_samples=300, n_features=5, seed=7)
    forest = ExtraTreesRegressor(n_estimators=4, max_depth=6, random_state=0).fit(X, y)
    model = {
        "trees": [
            {
                "children_left": tree.children_left.astype(np.int64),
                "children_right": tree.children_right.astype(np.int64),
                "children_default": np.where(tree.missing_go_to_left, tree.children_left, tree.children_right),
                "features": tree.feature.astype(np.int64),
                "thresholds": tree.threshold,
                "values": tree.value[:, 0, :],
                "node_sample_weight": tree.weighted_n_node_samples,
            }
            for tree in forest.trees_
        ],
        "base_offset": 0.0,
    }
    explainer = shap.TreeExplainer(model)
    rows = X[:40]
    expected = explainer.shap_values(rows) / len(forest.trees_)
    contributions = forest.predict_contributions(rows)
    np.testing.assert_allclose(contributions[:, :-1], expected, rtol=0, atol=1e-6)
    expected_interactions = explainer.shap_interaction_values(rows) / len(forest.trees_)
    np.testing.assert_allclose(forest.predict_interactions(rows)[:, :-1, :-1], expected_interactions, rtol=0, atol=1e-6)
