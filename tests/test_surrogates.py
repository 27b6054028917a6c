"""Surrogate splits (``gpuforest.surrogates``) against a naive search and a naive router written here."""

import numpy as np
import pytest

from gpuforest import DecisionTreeClassifier, DecisionTreeRegressor
from gpuforest.backend import get_backend
from gpuforest.surrogates import add_surrogates
from gpuforest.tree import CATEGORICAL, NUMERIC, TREE_LEAF, TREE_UNDEFINED, Tree


def hand_made_tree(n_features):
    """Root ``x0 <= 0.1`` (missing right); its left child ``x1 <= -0.2`` (missing left); its right child
    categorical on ``x5``, codes 1 and 3 left (missing right); leaves 3, 4, 5, 6."""
    children_left = np.array([1, 3, 5] + [TREE_LEAF] * 4, dtype=np.int32)
    children_right = np.array([2, 4, 6] + [TREE_LEAF] * 4, dtype=np.int32)
    feature = np.array([0, 1, 5] + [TREE_UNDEFINED] * 4, dtype=np.int32)
    threshold = np.array([0.1, -0.2] + [TREE_UNDEFINED] * 5)
    missing_go_to_left = np.array([False, True, False] + [False] * 4)
    zeros = np.zeros(7)
    tree = Tree(
        n_features, children_left, children_right, feature, threshold, np.zeros(7, dtype=np.int32),
        missing_go_to_left, np.zeros((7, 1, 2)), zeros, np.zeros(7, dtype=np.int64), zeros,
        np.array([0, 1, 1, 2, 2, 2, 2]),
    )
    tree.split_type[2] = CATEGORICAL
    tree.category_bitset[2, 0] = 0b1010
    return tree


def is_code(value):
    """Whether a raw value is a category code: an integer in [0, 256), the codes a bitset of 8 words holds."""
    return 0 <= value < 256 and value == int(value)  # False for NaN


def primary_sends(tree, node, values):
    """``(present, goes_left)`` of raw ``values`` of the split feature of ``node``: at a numeric split a value
    is present when not NaN and goes left when ``<= threshold``; at a categorical one when it is a code, and
    goes left when the code's bit is set."""
    if tree.split_type[node] == CATEGORICAL:
        present = np.array([is_code(value) for value in values], dtype=bool)
        return present, np.isin(values, list(codes_of(tree.category_bitset[node])))
    return ~np.isnan(values), values <= tree.threshold[node]


def naive_surrogates(present, primary_left, X_other, weight, categorical):
    """[(association, feature, split)] of every feature with a positive association, best first, for a primary
    split that sends the rows with ``present`` left where ``primary_left``. A numeric split ``(threshold,
    left_is_le)``: every midpoint and both directions tried, at least two rows with both values on each side;
    a categorical one ``(left codes, right codes)``: each code to its heavier side."""
    found = []
    for feature in range(X_other.shape[1]):
        both = present & ~np.isnan(X_other[:, feature])
        left, values, w = primary_left[both], X_other[both, feature].astype(np.float64), weight[both]
        w_left, w_right = w[left].sum(), w[~left].sum()
        if min(w_left, w_right) == 0:
            continue
        best, best_split = max(w_left, w_right), None
        if categorical[feature]:
            codes = np.unique(values)
            code_left = np.array([w[left & (values == code)].sum() for code in codes])
            code_right = np.array([w[~left & (values == code)].sum() for code in codes])
            goes_left = (code_left > code_right) | ((code_left == code_right) & (w_left >= w_right))
            agreement = np.where(goes_left, code_left, code_right).sum()
            if agreement > best + 1e-12:
                best, best_split = agreement, (set(codes[goes_left]), set(codes[~goes_left]))
            codes = []  # no thresholds
        else:
            codes = np.unique(values)
        for low, high in zip(codes[:-1], codes[1:]):
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
            found.append((association, feature, best_split))
    return sorted(found, key=lambda item: (-item[0], item[1]))


def test_surrogates_of_hand_made_nodes_match_a_naive_search():
    rng = np.random.default_rng(0)
    n_samples, n_features = 120, 6
    X = rng.normal(size=(n_samples, n_features)).astype(np.float32)
    X[:, 2] = X[:, 0] + 0.3 * rng.normal(size=n_samples)  # a good surrogate of the root
    X[:, 3] = rng.integers(0, 3, n_samples)  # ties
    # Categorical: codes 0, 1 at the root's left, 2, 3 at its right; the low bit mostly x1 > 0.
    X[:, 4] = (X[:, 0] > 0.1) * 2 + np.where(rng.random(n_samples) < 0.8, X[:, 1] > 0, rng.integers(0, 2, n_samples))
    X[:, 5] = (X[:, 1] > 0) + 2 * rng.integers(0, 2, n_samples)  # node 2's primary: codes 1, 3 (x1 > 0) left
    X[rng.random(X.shape) < 0.2] = np.nan
    weight = rng.uniform(0.5, 2.0, n_samples)
    sample_indices = np.flatnonzero(rng.random(n_samples) < 0.9)
    max_surrogates = 3
    categorical = np.array([False, False, False, False, True, True])
    tree = add_surrogates(hand_made_tree(n_features), X, weight, sample_indices, max_surrogates, categorical)

    # The rows growth sent to each split node: the root's missing ones went right.
    x0 = X[sample_indices, 0]
    at_node = {0: sample_indices, 1: sample_indices[x0 <= 0.1], 2: sample_indices[~(x0 <= 0.1)]}
    for node, rows in at_node.items():
        primary = tree.feature[node]
        others = [f for f in range(n_features) if f != primary]
        present, goes_left = primary_sends(tree, node, X[rows, primary])
        expected = naive_surrogates(present, goes_left, X[rows][:, others], weight[rows], categorical[others])
        expected = expected[:max_surrogates]
        n_found = len(expected)
        assert n_found >= 1
        np.testing.assert_array_equal(tree.surrogate_feature[node, :n_found], [others[e[1]] for e in expected])
        np.testing.assert_allclose(tree.surrogate_association[node, :n_found], [e[0] for e in expected], rtol=1e-9)
        for k, (_, feature, split) in enumerate(expected):
            if categorical[others[feature]]:
                assert tree.surrogate_split_type[node, k] == CATEGORICAL
                assert codes_of(tree.surrogate_left_codes[node, k]) == split[0]
                assert codes_of(tree.surrogate_right_codes[node, k]) == split[1]
            else:
                assert tree.surrogate_split_type[node, k] == NUMERIC
                np.testing.assert_allclose(tree.surrogate_threshold[node, k], split[0], rtol=1e-9)
                assert tree.surrogate_left_is_le[node, k] == split[1]
        assert np.all(tree.surrogate_feature[node, n_found:] == -1)
        # Missing values go to the side with the most weight of the rows with a value.
        weight_left, weight_right = weight[rows][present & goes_left].sum(), weight[rows][present & ~goes_left].sum()
        assert tree.missing_go_to_left[node] == (weight_left >= weight_right)
    # The good surrogates lead, both kinds of surrogate at both kinds of primary.
    assert set(tree.surrogate_feature[0, :2]) == {2, 4}
    assert set(tree.surrogate_feature[2, :2]) == {1, 4}
    assert tree.missing_go_to_left[2]  # the majority's side, not the one growth chose
    assert np.all(tree.surrogate_feature[3:] == -1)  # leaves


def codes_of(bitset):
    """The set of codes whose bits are set in a row of CATEGORY_WORDS uint32 words."""
    return {float(code) for code in range(32 * bitset.shape[0]) if (bitset[code // 32] >> (code % 32)) & 1}


def naive_apply(tree, X):
    """The node each row ends in: the primary split (numeric or categorical) where the row has a value, else its
    surrogates in order, else ``missing_go_to_left``."""
    nodes = np.empty(X.shape[0], dtype=np.int64)
    for row, x in enumerate(X):
        node = 0
        while tree.children_left[node] != TREE_LEAF:
            (present,), (left,) = primary_sends(tree, node, x[tree.feature[node], None])
            if not present:
                left = tree.missing_go_to_left[node]
                for k, feature in enumerate(tree.surrogate_feature[node]):
                    if feature < 0 or np.isnan(x[feature]):
                        continue
                    if tree.surrogate_split_type[node, k] == NUMERIC:
                        left = (x[feature] <= tree.surrogate_threshold[node, k]) == tree.surrogate_left_is_le[node, k]
                        break
                    if x[feature] in codes_of(tree.surrogate_left_codes[node, k]):
                        left = True
                        break
                    if x[feature] in codes_of(tree.surrogate_right_codes[node, k]):
                        left = False
                        break
            node = tree.children_left[node] if left else tree.children_right[node]
        nodes[row] = node
    return nodes


def missing_data(seed, n_samples, missing):
    """Feature 1 a noisy copy of feature 0, which decides the class; feature 2 noise; feature 3 (categorical)
    a noisy code of feature 0's quartile; values removed at random."""
    rng = np.random.default_rng(seed)
    signal = rng.normal(size=n_samples)
    codes = np.digitize(signal + 0.5 * rng.normal(size=n_samples), [-0.7, 0.0, 0.7])
    X = np.c_[signal, signal + 0.3 * rng.normal(size=n_samples), rng.normal(size=n_samples), codes]
    X = X.astype(np.float32)
    y = (signal > 0.3).astype(np.int64) + (signal > -0.8)
    X[rng.random(X.shape) < missing] = np.nan
    return X, y


@pytest.mark.parametrize("estimator_class", [DecisionTreeClassifier, DecisionTreeRegressor])
def test_predictions_with_missing_values_match_a_naive_router(estimator_class):
    X, y = missing_data(1, 300, 0.25)
    estimator = estimator_class(
        max_depth=4, use_surrogates=True, max_surrogates=2, categorical_features=[3], device="cpu"
    ).fit(X, y)
    X_test, _ = missing_data(2, 200, 0.4)
    X_test[:7, 3] = 9  # a code no surrogate has seen
    tree = estimator.tree_
    assert np.any(tree.surrogate_feature[:, 1] >= 0)  # not vacuous: second surrogates are used
    assert np.any(tree.surrogate_split_type[tree.surrogate_feature >= 0] == CATEGORICAL)
    assert np.any(tree.surrogate_feature[tree.split_type == CATEGORICAL, 0] >= 0)  # at categorical primaries too
    # The kernel on raw codes; the estimator makes a category not seen at fit a missing value first.
    np.testing.assert_array_equal(tree.apply(X_test, get_backend("cpu")), naive_apply(tree, X_test))
    X_seen = X_test.copy()
    X_seen[:7, 3] = np.nan
    np.testing.assert_array_equal(estimator.apply(X_test), naive_apply(tree, X_seen))
    expected = tree.value[naive_apply(tree, X_seen), 0]
    if estimator_class is DecisionTreeClassifier:
        np.testing.assert_array_equal(estimator.predict_proba(X_test), expected)
    else:
        np.testing.assert_array_equal(estimator.predict(X_test), expected[:, 0])


def test_cuda_kernel_routes_as_the_cpu_kernel():
    """The CUDA twin (simulator) against the CPU kernel on the same tree and rows."""
    X, y = missing_data(3, 200, 0.3)
    tree = DecisionTreeClassifier(max_depth=4, use_surrogates=True, categorical_features=[3], device="cpu")
    tree = tree.fit(X, y).tree_
    assert np.any(tree.surrogate_feature[tree.split_type == CATEGORICAL, 0] >= 0)
    X_test, _ = missing_data(4, 64, 0.4)
    X_test[:6, 3] = [2.5, -1, 300, 9, 2.5, -1]  # no category code (missing at a categorical split), a code not seen
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
