"""Surrogate splits (``gpuforest.surrogates``) against a naive search and a naive router written here."""

import numpy as np
import pytest

from gpuforest import DecisionTreeClassifier, DecisionTreeRegressor
from gpuforest.backend import get_backend
from gpuforest.surrogates import add_surrogates
from gpuforest.tree import TREE_LEAF, TREE_UNDEFINED, Tree


def hand_made_tree(n_features):
    """Root ``x0 <= 0.1`` (missing right); its left child ``x1 <= -0.2`` (missing left); leaves 2, 3, 4."""
    children_left = np.array([1, 3, TREE_LEAF, TREE_LEAF, TREE_LEAF], dtype=np.int32)
    children_right = np.array([2, 4, TREE_LEAF, TREE_LEAF, TREE_LEAF], dtype=np.int32)
    feature = np.array([0, 1, TREE_UNDEFINED, TREE_UNDEFINED, TREE_UNDEFINED], dtype=np.int32)
    threshold = np.array([0.1, -0.2, TREE_UNDEFINED, TREE_UNDEFINED, TREE_UNDEFINED])
    missing_go_to_left = np.array([False, True, False, False, False])
    zeros = np.zeros(5)
    return Tree(
        n_features, children_left, children_right, feature, threshold, np.zeros(5, dtype=np.int32),
        missing_go_to_left, np.zeros((5, 1, 2)), zeros, np.zeros(5, dtype=np.int64), zeros,
        np.array([0, 1, 1, 2, 2]),
    )


def naive_surrogates(x_primary, threshold, X_other, weight):
    """[(association, feature, threshold, left_is_le)] of every feature with a positive association, best first:
    every midpoint and both directions tried, at least two rows with both values on each side."""
    found = []
    for feature in range(X_other.shape[1]):
        both = ~np.isnan(x_primary) & ~np.isnan(X_other[:, feature])
        left, values, w = x_primary[both] <= threshold, X_other[both, feature].astype(np.float64), weight[both]
        w_left, w_right = w[left].sum(), w[~left].sum()
        if min(w_left, w_right) == 0:
            continue
        best, best_split = max(w_left, w_right), None
        distinct = np.unique(values)
        for low, high in zip(distinct[:-1], distinct[1:]):
            cut = (low + high) / 2
            below = values <= cut
            if below.sum() < 2 or (~below).sum() < 2:
                continue
            for left_is_le in (True, False):
                agreement = w[(below == left_is_le) == left].sum()
                if agreement > best + 1e-12:
                    best, best_split = agreement, (cut, left_is_le)
        if best_split is not None:
            association = (best - max(w_left, w_right)) / min(w_left, w_right)
            found.append((association, feature, *best_split))
    return sorted(found, key=lambda item: (-item[0], item[1]))


def test_surrogates_of_hand_made_nodes_match_a_naive_search():
    rng = np.random.default_rng(0)
    n_samples, n_features = 80, 5
    X = rng.normal(size=(n_samples, n_features)).astype(np.float32)
    X[:, 2] = X[:, 0] + 0.3 * rng.normal(size=n_samples)  # a good surrogate of the root
    X[:, 3] = rng.integers(0, 3, n_samples)  # ties
    X[rng.random(X.shape) < 0.2] = np.nan
    weight = rng.uniform(0.5, 2.0, n_samples)
    sample_indices = np.flatnonzero(rng.random(n_samples) < 0.9)
    max_surrogates = 3
    tree = add_surrogates(hand_made_tree(n_features), X, weight, sample_indices, max_surrogates)

    # The rows growth sent to each split node: node 1 gets the root's left rows and its missing ones stay right.
    x0 = X[sample_indices, 0]
    at_node = {0: sample_indices, 1: sample_indices[x0 <= 0.1]}
    for node, rows in at_node.items():
        primary = tree.feature[node]
        others = [f for f in range(n_features) if f != primary]
        expected = naive_surrogates(X[rows, primary], tree.threshold[node], X[rows][:, others], weight[rows])
        expected = expected[:max_surrogates]
        n_found = len(expected)
        assert n_found >= 1
        np.testing.assert_array_equal(tree.surrogate_feature[node, :n_found], [others[e[1]] for e in expected])
        np.testing.assert_allclose(tree.surrogate_association[node, :n_found], [e[0] for e in expected], rtol=1e-9)
        np.testing.assert_allclose(tree.surrogate_threshold[node, :n_found], [e[2] for e in expected], rtol=1e-9)
        np.testing.assert_array_equal(tree.surrogate_left_is_le[node, :n_found], [e[3] for e in expected])
        assert np.all(tree.surrogate_feature[node, n_found:] == -1)
        # Missing values go to the side with the most weight of the rows with a value.
        present = ~np.isnan(X[rows, primary])
        goes_left = X[rows, primary] <= tree.threshold[node]
        weight_left, weight_right = weight[rows][goes_left].sum(), weight[rows][present & ~goes_left].sum()
        assert tree.missing_go_to_left[node] == (weight_left >= weight_right)
    assert tree.surrogate_feature[0, 0] == 2
    assert np.all(tree.surrogate_feature[2:] == -1)  # leaves


def naive_apply(tree, X):
    """The node each row ends in: the primary split, else its surrogates in order, else ``missing_go_to_left``."""
    nodes = np.empty(X.shape[0], dtype=np.int64)
    for row, x in enumerate(X):
        node = 0
        while tree.children_left[node] != TREE_LEAF:
            value = x[tree.feature[node]]
            left = tree.missing_go_to_left[node] if np.isnan(value) else value <= tree.threshold[node]
            if np.isnan(value):
                for feature, threshold, left_is_le in zip(
                    tree.surrogate_feature[node], tree.surrogate_threshold[node], tree.surrogate_left_is_le[node]
                ):
                    if feature >= 0 and not np.isnan(x[feature]):
                        left = (x[feature] <= threshold) == left_is_le
                        break
            node = tree.children_left[node] if left else tree.children_right[node]
        nodes[row] = node
    return nodes


def missing_data(seed, n_samples, missing):
    """Feature 1 a noisy copy of feature 0, which decides the class; feature 2 noise; values removed at random."""
    rng = np.random.default_rng(seed)
    signal = rng.normal(size=n_samples)
    X = np.c_[signal, signal + 0.3 * rng.normal(size=n_samples), rng.normal(size=n_samples)].astype(np.float32)
    y = (signal > 0.3).astype(np.int64) + (signal > -0.8)
    X[rng.random(X.shape) < missing] = np.nan
    return X, y


@pytest.mark.parametrize("estimator_class", [DecisionTreeClassifier, DecisionTreeRegressor])
def test_predictions_with_missing_values_match_a_naive_router(estimator_class):
    X, y = missing_data(1, 300, 0.25)
    estimator = estimator_class(max_depth=4, use_surrogates=True, max_surrogates=2, device="cpu").fit(X, y)
    X_test, _ = missing_data(2, 200, 0.4)
    assert np.any(estimator.tree_.surrogate_feature[:, 1] >= 0)  # not vacuous: second surrogates are used
    np.testing.assert_array_equal(estimator.apply(X_test), naive_apply(estimator.tree_, X_test))
    expected = estimator.tree_.value[naive_apply(estimator.tree_, X_test), 0]
    if estimator_class is DecisionTreeClassifier:
        np.testing.assert_array_equal(estimator.predict_proba(X_test), expected)
    else:
        np.testing.assert_array_equal(estimator.predict(X_test), expected[:, 0])


def test_cuda_kernel_routes_as_the_cpu_kernel():
    """The CUDA twin (simulator) against the CPU kernel on the same tree and rows."""
    X, y = missing_data(3, 200, 0.3)
    tree = DecisionTreeClassifier(max_depth=4, use_surrogates=True, device="cpu").fit(X, y).tree_
    X_test, _ = missing_data(4, 64, 0.4)
    np.testing.assert_array_equal(tree.apply(X_test, get_backend("cuda")), tree.apply(X_test, get_backend("cpu")))


def test_surrogates_beat_the_majority_direction():
    X, y = missing_data(5, 400, 0.2)
    X_test, y_test = missing_data(6, 400, 0.2)
    params = dict(max_depth=3, use_surrogates=True, device="cpu", random_state=0)
    majority = DecisionTreeClassifier(max_surrogates=0, **params).fit(X, y)
    surrogate = DecisionTreeClassifier(**params).fit(X, y)
    assert majority.tree_.surrogate_feature.shape[1] == 0
    # Same tree, missing values sent differently.
    np.testing.assert_array_equal(majority.tree_.threshold, surrogate.tree_.threshold)
    np.testing.assert_array_equal(majority.tree_.missing_go_to_left, surrogate.tree_.missing_go_to_left)
    assert surrogate.score(X_test, y_test) >= majority.score(X_test, y_test) + 0.05


def test_bad_max_surrogates_is_a_value_error():
    X, y = missing_data(7, 20, 0.0)
    with pytest.raises(ValueError, match="max_surrogates"):
        DecisionTreeClassifier(use_surrogates=True, max_surrogates=-1).fit(X, y)
