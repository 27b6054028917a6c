"""Multi-output y (gpuforest/multioutput.py): one tree for every output, against scikit-learn's trees; forests
against their member trees and against the single-output forest of a repeated output. The ``quality`` tier
(make check-quality): several outputs' criteria compile the kernels anew (about 40 s a worker).

The features take at most 20 distinct values, so the bins are exact and the thresholds are scikit-learn's
midpoints; random sample weights make ties between candidate splits unlikely. Trees are compared node set
against node set (gpuforest numbers nodes breadth-first, scikit-learn depth-first).
"""

import pickle
import warnings

import numpy as np
import pytest
from sklearn import tree as sklearn_tree
from sklearn.base import RegressorMixin
from sklearn.exceptions import DataConversionWarning

from gpuforest import (
    AdaBoostClassifier, AdaBoostRegressor, DecisionTreeClassifier, DecisionTreeRegressor, ExtraTreesClassifier,
    ExtraTreesRegressor, GradientBoostingClassifier, GradientBoostingRegressor, RandomForestClassifier,
    RandomForestRegressor, export_text, load_model,
)

pytestmark = pytest.mark.quality

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
    X, weight, Y, labels = problem(n_samples=24)
    y = Y if Estimator is DecisionTreeRegressor else labels
    cpu = Estimator(max_depth=2, max_bins=4, device="cpu").fit(X, y, sample_weight=weight)
    cuda = Estimator(max_depth=2, max_bins=4, device="cuda").fit(X, y, sample_weight=weight)
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
    if Estimator is DecisionTreeClassifier:
        with pytest.raises(ValueError, match="criterion='misclassification': needs a single output"):
            Estimator(criterion="misclassification", device="cpu").fit(X, Y)


FORESTS = [RandomForestRegressor, ExtraTreesRegressor, RandomForestClassifier, ExtraTreesClassifier]


def forest_targets(Estimator):
    X, weight, Y, labels = problem()
    return X, weight, (Y if issubclass(Estimator, RegressorMixin) else labels)


@pytest.mark.parametrize("Estimator", FORESTS)
def test_forest_is_the_mean_of_its_trees(Estimator):
    X, weight, y = forest_targets(Estimator)
    forest = Estimator(n_estimators=4, max_depth=4, random_state=0, device="cpu").fit(X, y, sample_weight=weight)
    trees = forest.estimators_
    if issubclass(Estimator, RegressorMixin):
        np.testing.assert_allclose(forest.predict(X), np.mean([tree.predict(X) for tree in trees], axis=0))
        return
    for output, proba in enumerate(forest.predict_proba(X)):
        np.testing.assert_allclose(proba, np.mean([tree.predict_proba(X)[output] for tree in trees], axis=0))
    assert forest.predict(X).shape == y.shape


@pytest.mark.parametrize("Estimator", FORESTS)
def test_a_repeated_output_grows_the_single_output_forest(Estimator):
    # Two equal outputs have the mean impurity of one (exactly: a doubled sum halved), so the same trees.
    X, weight, y = forest_targets(Estimator)
    y = y[:, 0]
    params = dict(n_estimators=4, max_depth=4, bootstrap=True, oob_score=True, random_state=0, device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # rows without out-of-bag trees
        single = Estimator(**params).fit(X, y, sample_weight=weight)
        repeated = Estimator(**params).fit(X, np.c_[y, y], sample_weight=weight)
    for output in range(2):
        np.testing.assert_array_equal(repeated.predict(X)[:, output], single.predict(X))
    assert repeated.oob_score_ == pytest.approx(single.oob_score_, rel=1e-12)
    np.testing.assert_allclose(repeated.feature_importances_, single.feature_importances_, rtol=1e-9)
    if issubclass(Estimator, RegressorMixin):
        expected = np.c_[single.oob_prediction_, single.oob_prediction_]
        np.testing.assert_allclose(repeated.oob_prediction_, expected, rtol=1e-12)  # sums of other lengths
    else:
        np.testing.assert_allclose(repeated.oob_decision_function_[:, :, 1], single.oob_decision_function_, rtol=1e-12)


def test_a_repeated_output_grows_the_single_output_tree():
    # Gini's summed cost of two equal outputs is exactly twice one's (entropy's only up to rounding: it is
    # compared with scikit-learn above).
    X, weight, _, labels = problem()
    single = DecisionTreeClassifier(max_depth=4, device="cpu").fit(X, labels[:, 1], weight)
    repeated = DecisionTreeClassifier(max_depth=4, device="cpu").fit(X, labels[:, [1, 1]], weight)
    for name in ("children_left", "children_right", "feature", "threshold", "n_node_samples"):
        np.testing.assert_array_equal(getattr(repeated.tree_, name), getattr(single.tree_, name), err_msg=name)
    np.testing.assert_allclose(repeated.tree_.impurity, single.tree_.impurity, rtol=1e-12, atol=1e-15)
    # The weight of several outputs is the mean of their sums: the proportions within an ulp.
    np.testing.assert_allclose(repeated.tree_.value, np.repeat(single.tree_.value, 2, axis=1), rtol=1e-12)


@pytest.mark.parametrize("Estimator, target", [(RandomForestClassifier, "labels"), (DecisionTreeRegressor, "real")])
def test_model_files_and_pickles_keep_every_output(Estimator, target, tmp_path):
    X, _, Y, labels = problem()
    model = Estimator(random_state=0, device="cpu").fit(X, labels if target == "labels" else Y)
    model.save_model(tmp_path / "model.gpuforest")
    for loaded in (load_model(tmp_path / "model.gpuforest"), pickle.loads(pickle.dumps(model))):
        assert loaded.n_outputs_ == 2
        np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
        if target == "labels":
            for theirs, ours in zip(loaded.predict_proba(X), model.predict_proba(X), strict=True):
                np.testing.assert_array_equal(theirs, ours)


def test_forest_warns_of_a_column_vector():
    X, weight, Y, _ = problem(n_samples=30)
    with pytest.warns(DataConversionWarning, match="column-vector"):
        forest = RandomForestRegressor(n_estimators=2, device="cpu").fit(X, Y[:, :1])
    assert forest.n_outputs_ == 1 and forest.predict(X).shape == (30,)


@pytest.mark.parametrize("Estimator", [GradientBoostingRegressor, GradientBoostingClassifier, AdaBoostRegressor,
                                       AdaBoostClassifier])
def test_boosting_stays_single_output(Estimator):
    X, _, _, labels = problem(n_samples=20)
    assert not Estimator().__sklearn_tags__().target_tags.multi_output
    with pytest.raises(ValueError, match="1d array"):
        Estimator(device="cpu").fit(X, labels)


def test_single_output_features_refuse_several_outputs():
    X, _, _, labels = problem(n_samples=30)
    forest = RandomForestClassifier(n_estimators=2, device="cpu").fit(X, labels)
    for refused in (lambda: forest.predict_contributions(X), lambda: export_text(forest),
                    lambda: forest.predict_proba(X, return_std=True)):
        with pytest.raises(ValueError, match="2 outputs; this needs one"):
            refused()
    with pytest.raises(ValueError, match="voting='majority': needs a single output"):
        RandomForestClassifier(voting="majority", device="cpu").fit(X, labels)
    assert not RandomForestClassifier(voting="majority").__sklearn_tags__().target_tags.multi_output
    assert RandomForestClassifier().__sklearn_tags__().target_tags.multi_output
