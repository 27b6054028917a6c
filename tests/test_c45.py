"""C4.5 on the shared grower (``gpuforest/c45.py``, ``DecisionTreeClassifier(algorithm="c45")``): Quinlan's
weather trees, the gain-ratio choice against ``gpuforest.information`` and a naive rule, the CPU against the CUDA
simulator, and bad input."""

import numpy as np
import pytest

from gpuforest import DecisionTreeClassifier
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
    X, y, categorical = mixed_problem(0)
    trees = [fit_c45(X, y, categorical, device=device, max_bins=8).tree_ for device in ("cpu", "cuda")]
    assert MULTIWAY in trees[0].split_type and NUMERIC in trees[0].split_type[trees[0].children_left >= 0]
    for name in TREE_ARRAYS:
        np.testing.assert_array_equal(getattr(trees[1], name), getattr(trees[0], name), err_msg=name)


def test_bad_confidence_factor_and_best_first_c45_are_refused():
    weather = load_weather()
    with pytest.raises(ValueError, match="'confidence_factor' parameter"):
        fit_c45(weather.data, weather.target, weather.categorical_features, confidence_factor=-0.25)
    with pytest.raises(ValueError, match="max_leaf_nodes must be None"):
        fit_c45(weather.data, weather.target, weather.categorical_features, max_leaf_nodes=4)
