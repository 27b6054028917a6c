"""Multi-output y (gpuforest/multioutput.py): one tree for every output, against scikit-learn's trees.

The features take at most 20 distinct values, so the bins are exact and the thresholds are scikit-learn's
midpoints; random sample weights make ties between candidate splits unlikely. Trees are compared node set
against node set (gpuforest numbers nodes breadth-first, scikit-learn depth-first).
"""

import numpy as np
import pytest
from sklearn import tree as sklearn_tree

from gpuforest import DecisionTreeClassifier, DecisionTreeRegressor

TREE_ARRAYS = ("children_left", "children_right", "feature", "threshold", "value", "impurity", "n_node_samples")


def problem(n_samples=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 20, (n_samples, 3)).astype(float)
    weight = rng.uniform(0.5, 2.0, n_samples)
    Y = np.c_[X[:, 0] + rng.normal(size=n_samples), X[:, 1] * X[:, 2] / 10 + rng.normal(size=n_samples)]
    labels = np.c_[X[:, 0] > 9, (X[:, 1] + rng.integers(0, 3, n_samples)).astype(int) % 3]
    return X, weight, Y, labels


def nodes(tree):
    """The tree's nodes as a sorted list of (feature, threshold, n_node_samples, impurity, values)."""
    return sorted(
        (int(f), round(float(t), 9), int(n), round(float(i), 9), tuple(np.round(v.ravel(), 9)))
        for f, t, n, i, v in zip(tree.feature, tree.threshold, tree.n_node_samples, tree.impurity, tree.value)
    )


@pytest.mark.parametrize("criterion", ["squared_error", "poisson"])
def test_regressor_grows_scikit_learns_tree(criterion):
    X, weight, Y, _ = problem()
    Y = np.abs(Y) if criterion == "poisson" else Y
    ours = DecisionTreeRegressor(criterion=criterion, max_depth=3, device="cpu").fit(X, Y, sample_weight=weight)
    theirs = sklearn_tree.DecisionTreeRegressor(criterion=criterion, max_depth=3).fit(X, Y, sample_weight=weight)
    assert ours.n_outputs_ == theirs.n_outputs_ == 2
    assert ours.tree_.value.shape == theirs.tree_.value.shape
    assert nodes(ours.tree_) == nodes(theirs.tree_)
    assert ours.predict(X).shape == (X.shape[0], 2)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours.feature_importances_, theirs.feature_importances_, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_classifier_grows_scikit_learns_tree(criterion):
    X, weight, _, labels = problem()
    y = np.c_[np.where(labels[:, 0], "yes", "no"), labels[:, 1]]  # outputs of their own classes and dtypes
    ours = DecisionTreeClassifier(criterion=criterion, max_depth=3, device="cpu").fit(X, y, sample_weight=weight)
    theirs = sklearn_tree.DecisionTreeClassifier(criterion=criterion, max_depth=3).fit(X, y, sample_weight=weight)
    assert ours.n_outputs_ == 2
    np.testing.assert_array_equal(ours.n_classes_, theirs.n_classes_)
    for our_classes, their_classes in zip(ours.classes_, theirs.classes_, strict=True):
        np.testing.assert_array_equal(our_classes, their_classes)
    assert ours.tree_.value.shape == theirs.tree_.value.shape == (ours.tree_.node_count, 2, 3)
    assert nodes(ours.tree_) == nodes(theirs.tree_)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    for our_proba, their_proba in zip(ours.predict_proba(X), theirs.predict_proba(X), strict=True):
        np.testing.assert_allclose(our_proba, their_proba, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours.feature_importances_, theirs.feature_importances_, rtol=1e-9, atol=1e-12)


def test_one_column_is_single_output():
    X, _, Y, labels = problem()
    for Estimator, y in ((DecisionTreeRegressor, Y[:, :1]), (DecisionTreeClassifier, labels[:, 1:])):
        column = Estimator(max_depth=3, device="cpu").fit(X, y)
        flat = Estimator(max_depth=3, device="cpu").fit(X, y[:, 0])
        assert column.n_outputs_ == 1
        assert column.predict(X).shape == (X.shape[0],)
        np.testing.assert_array_equal(column.predict(X), flat.predict(X))


@pytest.mark.parametrize("Estimator", [DecisionTreeRegressor, DecisionTreeClassifier])
def test_cpu_and_simulated_cuda_grow_the_same_tree(Estimator):
    X, weight, Y, labels = problem(n_samples=40)
    y = Y if Estimator is DecisionTreeRegressor else labels
    cpu = Estimator(max_depth=2, max_bins=8, device="cpu").fit(X, y, sample_weight=weight)
    cuda = Estimator(max_depth=2, max_bins=8, device="cuda").fit(X, y, sample_weight=weight)
    assert cpu.tree_.node_count > 1
    for name in TREE_ARRAYS:
        np.testing.assert_array_equal(getattr(cpu.tree_, name), getattr(cuda.tree_, name), err_msg=name)


@pytest.mark.parametrize("Estimator", [DecisionTreeRegressor, DecisionTreeClassifier])
def test_bad_targets_are_refused(Estimator):
    X, _, Y, _ = problem(n_samples=20)
    with_nan = Y.copy()
    with_nan[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Estimator(device="cpu").fit(X, with_nan)
    with pytest.raises(ValueError, match="dim 3"):
        Estimator(device="cpu").fit(X, np.zeros((20, 2, 2)))
    Y = np.c_[Y > 0]
    with pytest.raises(ValueError, match="monotonic_cst.*single output"):
        Estimator(monotonic_cst=[1, 0, 0], device="cpu").fit(X, Y)
    with pytest.raises(ValueError, match="categorical_features.*single output"):
        Estimator(categorical_features=[0], device="cpu").fit(X, Y)
    with pytest.raises(ValueError, match="this needs one"):
        Estimator(device="cpu").fit(X, Y).predict_contributions(X)
