"""C4.5 on the shared grower (``gpuforest/c45.py``, ``DecisionTreeClassifier(algorithm="c45")``): Quinlan's
weather trees, the gain-ratio choice against ``gpuforest.information`` and a naive rule, the CPU against the CUDA
simulator, and bad input."""

import numpy as np
import pytest

from gpuforest import DecisionTreeClassifier, export_text
from gpuforest.backend import get_backend
from gpuforest.c45 import AVERAGE_GAIN_TOLERANCE, choose_by_gain_ratio
from gpuforest.datasets import load_weather
from gpuforest.information import gain_ratio, information_gain
from gpuforest.kernels.common import NO_SPLIT
from gpuforest.tree import MULTIWAY, NUMERIC, TREE_LEAF

try:
    from .test_multiway import FIGURE_2, TREE_ARRAYS, as_figure
except ImportError:
    from test_multiway import FIGURE_2, TREE_ARRAYS, as_figure


def fit_c45(X, y, categorical_features, device="cpu", **params):
    model = DecisionTreeClassifier(algorithm="c45", categorical_features=categorical_features, device=device, **params)
    return model.fit(X, y)


def test_c45_grows_quinlans_tree_on_the_nominal_weather_data():
    weather = load_weather()
    model = fit_c45(weather.data, weather.target, weather.categorical_features)
    assert as_figure(model.tree_, 0, weather) == FIGURE_2
    np.testing.assert_array_equal(model.predict(weather.data), weather.target)


def test_c45_grows_quinlans_tree_on_the_numeric_weather_data():
    # Quinlan (1993), ch. 1: outlook; under sunny, humidity <= 75 (a value of the data: release 8 records
    # the largest training value below the midpoint 77.5 of the node's 70 and 85); under rain, windy.
    weather = load_weather(numeric=True)
    model = fit_c45(weather.data, weather.target, weather.categorical_features)
    tree = model.tree_
    assert tree.split_type[0] == MULTIWAY and tree.feature[0] == 0
    sunny, overcast, rain = range(tree.children_left[0], tree.children_right[0] + 1)
    assert tree.split_type[sunny] == NUMERIC and weather.feature_names[tree.feature[sunny]] == "humidity"
    assert tree.threshold[sunny] == 75.0
    assert [np.argmax(tree.value[child, 0]) for child in (tree.children_left[sunny], tree.children_right[sunny])] == [
        1, 0,
    ]
    assert tree.children_left[overcast] == TREE_LEAF and np.argmax(tree.value[overcast, 0]) == 1
    assert tree.split_type[rain] == MULTIWAY and weather.feature_names[tree.feature[rain]] == "windy"
    np.testing.assert_array_equal(model.predict(weather.data), weather.target)
    # Missing values go down every branch: no branch is marked as theirs.
    assert "humidity >  75.00\n" in export_text(model, feature_names=weather.feature_names)


def test_c45_shares_a_case_with_an_unknown_outlook_as_quinlan_does():
    # Quinlan (1993), ch. 3: the weather data with the outlook of one case (overcast, 72, 90, windy, Play) unknown.
    # The case goes down every branch of outlook with weight 5/13, 3/13 and 5/13: the tree of the book, whose
    # leaves hold humidity <= 75: Play (2.0); > 75: Don't Play (3.4/0.4); overcast: Play (3.2); rain and windy:
    # Don't Play (2.4/0.4); rain and not windy: Play (3.0).
    weather = load_weather(numeric=True)
    X = weather.data.copy()
    X[11, 0] = np.nan
    tree = fit_c45(X, weather.target, weather.categorical_features).tree_
    sunny, overcast, rain = range(tree.children_left[0], tree.children_right[0] + 1)
    leaves = [tree.children_left[sunny], tree.children_right[sunny], overcast, tree.children_right[rain],
              tree.children_left[rain]]
    np.testing.assert_allclose(tree.weighted_n_node_samples[[sunny, overcast, rain]], [5 + 5 / 13, 3 + 3 / 13,
                                                                                       5 + 5 / 13])
    counts = tree.value[leaves, 0] * tree.weighted_n_node_samples[leaves, None]
    np.testing.assert_allclose(counts, [[0, 2], [3, 5 / 13], [0, 3 + 3 / 13], [2, 5 / 13], [0, 3]], atol=1e-12)


def naive_fractional_value(tree, x, node=0):
    """C4.5's classification of one row (Quinlan 1993, ch. 3), recursively: a leaf's class proportions; at a
    split, the branch of the row's value, or with no such branch every branch weighted by its share of the
    node's training weight."""
    if tree.children_left[node] == TREE_LEAF:
        return tree.value[node, 0]
    children = np.arange(tree.children_left[node], tree.children_right[node] + 1)
    value = x[tree.feature[node]]
    if not np.isnan(value):
        if tree.split_type[node] == NUMERIC:
            return naive_fractional_value(tree, x, children[0 if value <= tree.threshold[node] else 1])
        if value < children.size:
            return naive_fractional_value(tree, x, children[int(value)])
    shares = tree.weighted_n_node_samples[children] / tree.weighted_n_node_samples[children].sum()
    return sum(share * naive_fractional_value(tree, x, child) for share, child in zip(shares, children) if share > 0)


def test_fractional_predictions_equal_a_naive_recursive_classification_on_both_backends():
    X, y, categorical = mixed_problem(1, missing_fraction=0.2)
    model = fit_c45(X, y, categorical)
    X_test, _, _ = mixed_problem(2, n_rows=60, missing_fraction=0.3)
    X_test[0, 0] = 7  # a code without a branch
    X_test = X_test.astype(np.float32)
    expected = np.array([naive_fractional_value(model.tree_, x) for x in X_test])
    shared = ~np.isclose(expected, model.tree_.value[model.apply(X_test), 0]).all(axis=1)
    assert model.tree_.max_depth >= 2 and 0.1 < shared.mean() < 0.9
    np.testing.assert_allclose(model.predict_proba(X_test), expected, rtol=1e-12, atol=1e-15)
    on_cuda, on_cpu = (model.tree_.fractional_values(X_test, get_backend(device)) for device in ("cuda", "cpu"))
    np.testing.assert_array_equal(on_cuda, on_cpu)


def naive_choice(gains, ratios):
    """J48's ``C45ModelSelection``, a loop per node: the average gain of the valid features, then the first
    feature of the largest positive gain ratio among those of at least that average (less the tolerance)."""
    chosen = []
    for node_gains, node_ratios in zip(gains, ratios):
        valid = [f for f in range(len(node_gains)) if np.isfinite(node_gains[f])]
        average = sum(node_gains[f] for f in valid) / len(valid) if valid else 0.0
        best, best_ratio = NO_SPLIT, 0.0
        for f in valid:
            if node_gains[f] >= average - AVERAGE_GAIN_TOLERANCE and node_ratios[f] > best_ratio:
                best, best_ratio = f, node_ratios[f]
        chosen.append(best)
    return np.array(chosen)


def test_gain_ratio_choice_on_the_weather_root_is_outlook():
    # Outlook's gain ratio, 0.156, beats humidity's, 0.152; both have at least the average gain.
    weather = load_weather()
    gains = [[information_gain(weather.target, column) for column in weather.data.T]]
    ratios = [[gain_ratio(weather.target, column) for column in weather.data.T]]
    np.testing.assert_allclose(gains[0], [0.247, 0.029, 0.152, 0.048], atol=5e-4)
    assert choose_by_gain_ratio(np.array(gains), np.array(ratios)) == [0] == naive_choice(gains, ratios)


def test_gain_ratio_choice_equals_the_naive_rule():
    rng = np.random.default_rng(0)
    gains = rng.random((200, 5))
    ratios = rng.random((200, 5)) * (rng.random((200, 5)) < 0.9)
    gains[rng.random((200, 5)) < 0.3] = -np.inf
    # Gains near the average: the tolerance decides.
    gains[:20, 1] = np.where(np.isfinite(gains[:20]), gains[:20], 0).sum(axis=1) / 5
    expected = naive_choice(gains, ratios)
    assert (expected == NO_SPLIT).any() and len(np.unique(expected)) == 6
    np.testing.assert_array_equal(choose_by_gain_ratio(gains, ratios), expected)


def mixed_problem(seed, n_rows=80, missing_fraction=0.1):
    """Two categorical features (codes 0..2, 0..1) and two numeric ones (one decimal) on which the class depends,
    5% of the classes flipped, ``missing_fraction`` of the values missing."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([
        rng.integers(0, 3, n_rows), rng.normal(size=n_rows).round(1), rng.integers(0, 2, n_rows),
        rng.normal(size=n_rows).round(1),
    ]).astype(float)
    y = np.where(X[:, 0] == 0, X[:, 1] > 0, np.where(X[:, 0] == 1, X[:, 2], X[:, 3] > 0.5)).astype(int)
    y[rng.random(n_rows) < 0.05] ^= 1
    X[rng.random(X.shape) < missing_fraction] = np.nan
    return X, y, np.array([True, False, True, False])


def test_c45_trees_on_cuda_equal_cpu():
    # Quinlan's numeric weather data with unknown values: cases shared among multiway and threshold branches.
    weather = load_weather(numeric=True)
    X = weather.data.copy()
    X[[11, 4, 2], [0, 3, 1]] = np.nan
    trees = [
        fit_c45(X, weather.target, weather.categorical_features, device=device, max_bins=16).tree_
        for device in ("cpu", "cuda")
    ]
    assert MULTIWAY in trees[0].split_type and NUMERIC in trees[0].split_type[trees[0].children_left >= 0]
    assert (trees[0].weighted_n_node_samples % 1 > 0).any()
    for name in TREE_ARRAYS:
        np.testing.assert_array_equal(getattr(trees[1], name), getattr(trees[0], name), err_msg=name)


def test_bad_confidence_factor_and_best_first_c45_are_refused():
    weather = load_weather()
    with pytest.raises(ValueError, match="'confidence_factor' parameter"):
        fit_c45(weather.data, weather.target, weather.categorical_features, confidence_factor=-0.25)
    for params in ({"splitter": "random"}, {"use_surrogates": True}):
        with pytest.raises(ValueError, match="algorithm='c45' .* needs splitter='best' and use_surrogates=False"):
            fit_c45(weather.data, weather.target, weather.categorical_features, **params)
    with pytest.raises(ValueError, match="max_leaf_nodes must be None"):
        fit_c45(weather.data, weather.target, weather.categorical_features, max_leaf_nodes=4)
