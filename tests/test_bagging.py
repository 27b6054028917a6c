"""Bagging: scikit-learn's loop for any estimator, the batched forest for gpuforest trees, voting.

References: scikit-learn's BaggingClassifier / BaggingRegressor on the same
members (the loop path must equal them), the naive bootstrap counts of
``tests/reference.py`` and plain per-member computations.
"""

import numpy as np
import pytest
from sklearn import ensemble as sk_ensemble
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeRegressor as SkDecisionTreeRegressor
from sklearn.utils._mask import indices_to_mask
from sklearn.utils._param_validation import InvalidParameterError

import reference
from gpuforest import BaggingClassifier, BaggingRegressor, DecisionTreeClassifier
from gpuforest.datasets import load_weather
from gpuforest.tree import MULTIWAY


def test_tree_members_grow_as_one_batched_forest():
    X, y = load_iris(return_X_y=True)
    bagging = BaggingClassifier(
        DecisionTreeClassifier(max_depth=4, device="cpu"), n_estimators=7, oob_score=True, random_state=0
    ).fit(X, y)
    forest = bagging.forest_
    assert forest is not None and forest.max_depth == 4 and forest.max_features is None
    assert len(bagging.estimators_) == 7
    # The drawn rows are the naive bootstrap draws of the forest's seed.
    counts = reference.bootstrap_counts(forest._seed, 0, 7, X.shape[0], X.shape[0])
    for samples, tree_counts in zip(bagging.estimators_samples_, counts):
        np.testing.assert_array_equal(np.bincount(samples, minlength=X.shape[0]), tree_counts)
    member_proba = np.array([member.predict_proba(X) for member in bagging.estimators_])
    np.testing.assert_allclose(bagging.predict_proba(X), member_proba.mean(axis=0))
    # Out-of-bag decision function from the members and their samples.
    out_of_bag = np.array([~indices_to_mask(samples, X.shape[0]) for samples in bagging.estimators_samples_])
    expected = np.einsum("tr,trk->rk", out_of_bag, member_proba) / np.maximum(out_of_bag.sum(axis=0), 1)[:, None]
    np.testing.assert_allclose(bagging.oob_decision_function_, expected)


def test_members_with_surrogates_fit_themselves():
    """The batched forest has no surrogate splits: members that ask for them each get theirs by their own fit."""
    X, y = load_iris(return_X_y=True)
    tree = DecisionTreeClassifier(max_depth=3, use_surrogates=True, device="cpu")
    bagging = BaggingClassifier(tree, n_estimators=3, random_state=0).fit(X, y)
    assert bagging.forest_ is None
    for member, samples in zip(bagging.estimators_, bagging.estimators_samples_):
        refit = DecisionTreeClassifier(max_depth=3, use_surrogates=True, device="cpu", random_state=member.random_state)
        refit.fit(X, y, sample_weight=np.bincount(samples, minlength=X.shape[0]))  # scikit-learn's loop weighs draws
        np.testing.assert_array_equal(member.tree_.surrogate_feature, refit.tree_.surrogate_feature)
        assert np.any(member.tree_.surrogate_feature >= 0)


@pytest.mark.quality
def test_tree_bagging_accuracy_is_scikit_learns():
    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    ours = [BaggingClassifier(n_estimators=30, random_state=seed).fit(X_train, y_train) for seed in range(3)]
    theirs = [
        sk_ensemble.BaggingClassifier(n_estimators=30, random_state=seed).fit(X_train, y_train) for seed in range(3)
    ]
    assert all(model.forest_ is not None for model in ours)
    our_accuracy = np.mean([model.score(X_test, y_test) for model in ours])
    their_accuracy = np.mean([model.score(X_test, y_test) for model in theirs])
    # Measured: 0.951 (ours) vs 0.949 (scikit-learn), seed-to-seed spread about 0.01.
    assert abs(our_accuracy - their_accuracy) <= 0.02


@pytest.mark.parametrize("params", [{}, {"max_features": 0.5, "bootstrap_features": True}, {"bootstrap": False,
                                                                                              "max_samples": 0.6}])
def test_any_estimator_goes_through_scikit_learns_loop(params):
    X, y = load_iris(return_X_y=True)
    ours = BaggingClassifier(KNeighborsClassifier(), n_estimators=5, random_state=1, **params).fit(X, y)
    theirs = sk_ensemble.BaggingClassifier(KNeighborsClassifier(), n_estimators=5, random_state=1, **params)
    theirs.fit(X, y)
    assert ours.forest_ is None
    np.testing.assert_array_equal(ours.predict_proba(X), theirs.predict_proba(X))
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))


def test_regressor_loop_equals_scikit_learn_and_fast_path_is_the_mean_of_members():
    X, y = load_diabetes(return_X_y=True)
    ours = BaggingRegressor(SkDecisionTreeRegressor(), n_estimators=4, random_state=2).fit(X, y)
    theirs = sk_ensemble.BaggingRegressor(SkDecisionTreeRegressor(), n_estimators=4, random_state=2).fit(X, y)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    fast = BaggingRegressor(n_estimators=4, random_state=2, oob_score=True).fit(X, y)
    assert fast.forest_ is not None
    member_prediction = np.array([m.predict(X) for m in fast.estimators_])
    np.testing.assert_allclose(fast.predict(X), member_prediction.mean(axis=0))
    # Out-of-bag R^2 from the naive bootstrap draws (scikit-learn's rule: rows never out of bag predict 0).
    out_of_bag = reference.bootstrap_counts(fast.forest_._seed, 0, 4, X.shape[0], X.shape[0]) == 0
    oob_prediction = (member_prediction * out_of_bag).sum(axis=0) / np.maximum(out_of_bag.sum(axis=0), 1)
    assert fast.oob_score_ == pytest.approx(r2_score(y, oob_prediction))


def test_loop_voting_strategies_from_member_votes():
    X, y = load_iris(return_X_y=True)
    X = X[:, :2]  # two features: members disagree often
    # Members without sample weights are fitted on their small samples: some miss a
    # class (fewer probability columns), and the members disagree often.
    common = dict(n_estimators=6, random_state=3, max_samples=6)
    member = KNeighborsClassifier(n_neighbors=3)
    plurality = BaggingClassifier(member, voting="plurality", **common).fit(X, y)
    votes = np.array([member.predict(X) for member in plurality.estimators_]).astype(int)
    vote_counts = np.stack([(votes == k).sum(axis=0) for k in range(3)], axis=1)
    np.testing.assert_array_equal(plurality.predict(X), np.argmax(vote_counts, axis=1))

    majority = BaggingClassifier(member, voting="majority", reject_label=9, **common).fit(X, y)
    expected = np.where(vote_counts.max(axis=1) * 2 > 6, np.argmax(vote_counts, axis=1), 9)
    np.testing.assert_array_equal(majority.predict(X), expected)
    assert np.any(expected == 9)
    assert any(len(member.classes_) < 3 for member in majority.estimators_)

    weighted = BaggingClassifier(member, voting="weighted", **common).fit(X, y)
    accuracy = []
    for member, samples in zip(weighted.estimators_, weighted.estimators_samples_):
        out_of_bag = ~indices_to_mask(samples, X.shape[0])
        accuracy.append(np.mean(member.predict(X[out_of_bag]) == y[out_of_bag]))
    np.testing.assert_allclose(weighted.estimator_weights_, accuracy)
    weighted_votes = np.stack([((votes == k) * np.array(accuracy)[:, None]).sum(axis=0) for k in range(3)], axis=1)
    np.testing.assert_array_equal(weighted.predict(X), np.argmax(weighted_votes, axis=1))


def test_members_without_predict_proba_vote():
    X, y = load_iris(return_X_y=True)
    bagging = BaggingClassifier(SVC(), n_estimators=4, voting="plurality", random_state=5).fit(X, y)
    votes = np.array([member.predict(X) for member in bagging.estimators_]).astype(int)
    expected = np.stack([(votes == k).mean(axis=0) for k in range(3)], axis=1)
    np.testing.assert_allclose(bagging.predict_proba(X), expected)


def test_weighted_voting_of_tree_members_uses_the_forests_oob_accuracy():
    X, y = load_iris(return_X_y=True)
    bagging = BaggingClassifier(n_estimators=5, voting="weighted", random_state=4).fit(X, y)
    assert bagging.forest_ is not None
    # Each member's accuracy on the rows its naive bootstrap draws left out.
    out_of_bag = reference.bootstrap_counts(bagging.forest_._seed, 0, 5, X.shape[0], X.shape[0]) == 0
    accuracy = [np.mean(m.predict(X[rows]) == y[rows]) for m, rows in zip(bagging.estimators_, out_of_bag)]
    np.testing.assert_allclose(bagging.estimator_weights_, accuracy)
    member_votes = np.array([m.predict(X) for m in bagging.estimators_])
    weighted_votes = np.stack([((member_votes == k) * np.array(accuracy)[:, None]).sum(axis=0) for k in range(3)], 1)
    np.testing.assert_array_equal(bagging.predict(X), np.argmax(weighted_votes, axis=1))


def test_id3_members_go_through_scikit_learns_loop():
    weather = load_weather()
    tree = DecisionTreeClassifier(algorithm="id3", categorical_features=weather.categorical_features, device="cpu")
    bagging = BaggingClassifier(tree, n_estimators=3, random_state=0).fit(weather.data, weather.target)
    assert bagging.forest_ is None
    # Each member is the ID3 tree of its bootstrap draws (scikit-learn passes them as weights).
    for member, samples in zip(bagging.estimators_, bagging.estimators_samples_):
        draws = np.bincount(samples, minlength=weather.data.shape[0])
        expected = clone(tree).fit(weather.data, weather.target, sample_weight=draws).tree_
        assert MULTIWAY in member.tree_.split_type
        np.testing.assert_array_equal(member.tree_.feature, expected.feature)
        np.testing.assert_array_equal(member.tree_.value, expected.value)


def test_device_reaches_the_default_tree_and_device_is_the_backend_used():
    X, y = load_iris(return_X_y=True)
    X, y = X[::8, :2], y[::8]
    for Bagging in (BaggingClassifier, BaggingRegressor):
        cpu = Bagging(n_estimators=2, device="cpu", random_state=0).fit(X, y)
        assert cpu.estimator_.device == cpu.forest_.device == "cpu" == cpu.device_
        with pytest.raises(InvalidParameterError, match="device"):
            Bagging(device="tpu").fit(X, y)
    # A given gpuforest tree keeps its device, in the batched forest and in scikit-learn's loop.
    tree = DecisionTreeClassifier(max_depth=1, max_bins=4, device="cuda")
    for params in ({}, {"max_features": 0.5}):
        cuda = BaggingClassifier(tree, n_estimators=1, random_state=0, **params).fit(X, y)
        assert (cuda.forest_ is None) == bool(params)
        assert cuda.device_ == "cuda" == cuda.estimators_[0].device_
    knn = BaggingClassifier(KNeighborsClassifier(n_neighbors=3), n_estimators=2, device="cuda").fit(X, y)
    assert knn.device_ == "cpu"  # scikit-learn's estimators run on the CPU


def test_majority_voting_with_string_labels_and_a_refused_reject_label():
    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    for member in (None, KNeighborsClassifier()):  # the batched forest and scikit-learn's loop
        common = dict(n_estimators=6, voting="majority", max_samples=0.2, random_state=3)
        bagging = BaggingClassifier(member, **common).fit(X[:, :2], names)
        votes = np.array([m.predict(X[:, :2]) for m in bagging.estimators_])
        if member is not None:  # loop members learn encoded labels
            votes = bagging.classes_[votes.astype(int)]
        counts = np.stack([(votes == name).sum(axis=0) for name in bagging.classes_], axis=1)
        expected = np.where(2 * counts.max(axis=1) > 6, bagging.classes_[counts.argmax(axis=1)], "rejected")
        np.testing.assert_array_equal(bagging.predict(X[:, :2]), expected)
        assert "rejected" in expected
        assert bagging.score(X[:, :2], names) == np.mean(expected == names)
        with pytest.raises(TypeError, match="not a string"):
            BaggingClassifier(member, reject_label=-1, **common).fit(X[:, :2], names)
