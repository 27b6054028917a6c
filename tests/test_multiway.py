"""ID3 on the shared grower (``gpuforest/multiway.py``, ``DecisionTreeClassifier(algorithm="id3")``):
Quinlan's worked example, a naive recursive ID3, the CPU against the CUDA simulator, and bad input."""

import numpy as np
import pytest

from gpuforest import DecisionTreeClassifier, export_text
from gpuforest.datasets import load_weather
from gpuforest.information import information_gain
from gpuforest.tree import MULTIWAY, TREE_LEAF

TREE_ARRAYS = (
    "children_left", "children_right", "feature", "threshold", "bin_threshold", "missing_go_to_left", "split_type",
    "category_bitset", "value", "impurity", "n_node_samples", "weighted_n_node_samples",
)

# Quinlan (1986), Figure 2: (attribute, {value: subtree}), or the class of a leaf.
FIGURE_2 = (
    "outlook", {
        "sunny": ("humidity", {"high": "no", "normal": "yes"}),
        "overcast": "yes",
        "rain": ("windy", {"false": "yes", "true": "no"}),
    },
)


def fit_id3(X, y, categorical_features, device="cpu", **params):
    model = DecisionTreeClassifier(algorithm="id3", categorical_features=categorical_features, device=device, **params)
    return model.fit(X, y)


def as_figure(tree, node, weather):
    """The subtree at ``node`` in ``FIGURE_2``'s notation, by the names of ``load_weather``'s codes."""
    if tree.children_left[node] == TREE_LEAF:
        return weather.target_names[np.argmax(tree.value[node, 0])]
    assert tree.split_type[node] == MULTIWAY
    feature = tree.feature[node]
    children = range(tree.children_left[node], tree.children_right[node] + 1)
    return weather.feature_names[feature], {
        weather.categories[feature][code]: as_figure(tree, child, weather) for code, child in enumerate(children)
    }


def test_id3_grows_quinlans_figure_2_and_classifies_every_row():
    weather = load_weather()
    model = fit_id3(weather.data, weather.target, weather.categorical_features)
    tree = model.tree_
    assert tree.feature[0] == 0 and tree.children_right[0] - tree.children_left[0] + 1 == 3
    assert as_figure(tree, 0, weather) == FIGURE_2
    np.testing.assert_array_equal(model.predict(weather.data), weather.target)


def test_root_gain_is_information_gain_of_outlook():
    weather = load_weather()
    tree = fit_id3(weather.data, weather.target, weather.categorical_features).tree_
    children = np.arange(tree.children_left[0], tree.children_right[0] + 1)
    share = tree.weighted_n_node_samples[children] / tree.weighted_n_node_samples[0]
    root_gain = tree.impurity[0] - share @ tree.impurity[children]
    np.testing.assert_allclose(root_gain, information_gain(weather.target, weather.data[:, 0]), rtol=1e-12)


def test_export_text_renders_the_multiway_tree():
    weather = load_weather()
    model = fit_id3(weather.data, weather.target, weather.categorical_features)
    text = export_text(
        model, feature_names=weather.feature_names, class_names=weather.target_names,
        category_names=weather.categories,
    )
    assert text == (
        "|--- outlook = sunny\n"
        "|   |--- humidity = high\n"
        "|   |   |--- class: no\n"
        "|   |--- humidity = normal\n"
        "|   |   |--- class: yes\n"
        "|--- outlook = overcast\n"
        "|   |--- class: yes\n"
        "|--- outlook = rain\n"
        "|   |--- windy = false\n"
        "|   |   |--- class: yes\n"
        "|   |--- windy = true\n"
        "|   |   |--- class: no\n"
    )


def test_id3_trees_on_cuda_equal_cpu():
    # Numeric temperature and humidity: binary threshold splits beside the multiway ones.
    weather = load_weather(numeric=True)
    trees = [
        fit_id3(weather.data, weather.target, weather.categorical_features, device=device, max_bins=8).tree_
        for device in ("cpu", "cuda")
    ]
    assert MULTIWAY in trees[0].split_type and 0 in trees[0].split_type[trees[0].children_left >= 0]
    for name in TREE_ARRAYS:
        np.testing.assert_array_equal(getattr(trees[1], name), getattr(trees[0], name), err_msg=name)


def naive_id3_check(tree, node, X, y, rows, unused, parent_proportions, n_classes):
    """Check the subtree at ``node`` against ID3 (Quinlan 1986) run on ``rows``, one node at a time.

    ID3: an empty subset is a leaf of its parent's class proportions; a pure
    subset, or one where no unused attribute takes two values, is a leaf of its
    own; else the split is on an unused attribute of the largest information
    gain (where the tree chose among equal gains, it is followed), one branch
    per value, and the attribute is used up below.
    """
    proportions = np.bincount(y[rows], minlength=n_classes) / max(rows.size, 1)
    if rows.size == 0:
        np.testing.assert_allclose(tree.value[node, 0], parent_proportions)
        assert tree.children_left[node] == TREE_LEAF
        return
    np.testing.assert_allclose(tree.value[node, 0], proportions, rtol=1e-12)
    gains = {
        feature: information_gain(y[rows], X[rows, feature])
        for feature in unused if np.unique(X[rows, feature]).size >= 2
    }
    if np.unique(y[rows]).size == 1 or not gains:
        assert tree.children_left[node] == TREE_LEAF
        return
    feature = int(tree.feature[node])
    assert tree.split_type[node] == MULTIWAY and feature in gains
    assert gains[feature] >= max(gains.values()) - 1e-12
    children = range(tree.children_left[node], tree.children_right[node] + 1)
    assert len(children) == X[:, feature].max() + 1
    for code, child in enumerate(children):
        naive_id3_check(
            tree, child, X, y, rows[X[rows, feature] == code], unused - {feature}, proportions, n_classes
        )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_id3_equals_a_naive_recursive_id3(seed):
    rng = np.random.default_rng(seed)
    n_codes = (3, 2, 4, 3, 2)
    X = np.stack([rng.integers(0, k, 60) for k in n_codes], axis=1)
    # Classes that depend on the attributes, with noise: trees of a few levels, empty subsets among them.
    y = (X[:, 0] + X[:, 2] * (X[:, 1] == 1) + (rng.random(60) < 0.3)) % 3
    tree = fit_id3(X.astype(float), y, np.ones(5, dtype=bool)).tree_
    assert tree.max_depth >= 3 and (tree.n_node_samples == 0).any()
    naive_id3_check(tree, 0, X, y, np.arange(60), set(range(5)), None, 3)


def test_rows_missing_the_split_feature_stay_at_the_multiway_node():
    weather = load_weather()
    X = weather.data.copy()
    X[[0, 5], 0] = np.nan
    model = fit_id3(X, weather.target, weather.categorical_features)
    tree = model.tree_
    children = np.arange(tree.children_left[0], tree.children_right[0] + 1)
    assert tree.feature[0] == 0 and tree.n_node_samples[children].sum() == 12
    rows = np.array([[np.nan, 0, 0, 0], [7, 0, 0, 0]])  # missing, and a code unseen in fit
    np.testing.assert_array_equal(model.apply(rows), [0, 0])
    np.testing.assert_array_equal(model.predict_proba(rows), tree.value[[0, 0], 0])


def test_bad_algorithm_and_best_first_id3_are_refused():
    weather = load_weather()
    with pytest.raises(ValueError, match="'algorithm' parameter .* must be a str among"):
        DecisionTreeClassifier(algorithm="c50").fit(weather.data, weather.target)
    with pytest.raises(ValueError, match="max_leaf_nodes must be None"):
        fit_id3(weather.data, weather.target, weather.categorical_features, max_leaf_nodes=4)
