"""Vote combining (``gpuforest.voting``) against naive per-row loops, and the voting
estimators against scikit-learn's."""

from collections import Counter

import numpy as np
import pytest
from sklearn import ensemble
from sklearn.datasets import load_diabetes, load_iris
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
from sklearn.utils._param_validation import InvalidParameterError

from gpuforest import DecisionTreeClassifier as GPUForestTreeClassifier
from gpuforest import VotingClassifier, VotingRegressor
from gpuforest.voting import VOTING_STRATEGIES, combine_votes, predict_from_votes, resolve_reject_label, tally_votes

# ---------------------------------------------------------------------------------------
# combine_votes / predict_from_votes


def naive_combine(member_proba, voting, weights):
    """Per-row Python loop: weighted mean of probabilities, or weighted first-argmax votes."""
    n_members, n_samples, n_classes = member_proba.shape
    weights = [1.0] * n_members if weights is None else [float(w) for w in weights]
    scores = np.zeros((n_samples, n_classes))
    for i in range(n_samples):
        for m in range(n_members):
            row = list(member_proba[m, i])
            if voting == "soft":
                for k in range(n_classes):
                    scores[i, k] += weights[m] * row[k]
            else:
                scores[i, row.index(max(row))] += weights[m]
        scores[i] /= sum(weights)
    return scores


def random_proba(rng, n_members, n_samples, n_classes, levels):
    """Random probabilities on a coarse grid (``levels`` values), so argmax ties are common."""
    raw = rng.integers(1, levels + 1, size=(n_members, n_samples, n_classes)).astype(np.float64)
    return raw / raw.sum(axis=2, keepdims=True)


def one_hot_members(votes, n_classes):
    """Member probabilities (n_members, 1, n_classes) that vote for ``votes``, one sample."""
    return np.eye(n_classes)[np.asarray(votes)][:, None, :]


@pytest.mark.parametrize(
    "voting, weights_kind",
    [(v, w) for v in VOTING_STRATEGIES for w in [None, "integer", "float"] if (v, w) != ("weighted", None)],
)
@pytest.mark.parametrize("n_members, levels", [(2, 2), (5, 3), (40, 4)])
def test_combine_votes_matches_naive_loop(voting, weights_kind, n_members, levels):
    rng = np.random.default_rng(n_members * 7 + levels)
    member_proba = random_proba(rng, n_members, 300, 4, levels)
    weights = {
        None: None,
        "integer": rng.integers(0, 4, size=n_members).astype(np.float64) + np.eye(n_members)[0],
        "float": rng.random(n_members),
    }[weights_kind]
    scores = combine_votes(member_proba, voting, weights)
    expected = naive_combine(member_proba, voting, weights)
    assert scores.shape == (300, 4) and scores.dtype == np.float64
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(scores.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    if voting != "soft" and weights_kind != "float":
        # Integer counts: the shares are exactly count / total, as the naive loop's are not.
        votes = member_proba.argmax(axis=2)
        w = np.ones(n_members) if weights is None else weights
        counts = np.stack([(w[:, None] * (votes == k)).sum(axis=0) for k in range(4)], axis=1)
        np.testing.assert_array_equal(scores, counts / w.sum())


def test_combine_votes_breaks_member_ties_at_the_lowest_class():
    member_proba = np.array([[[0.4, 0.4, 0.2]], [[0.1, 0.45, 0.45]], [[0.5, 0.0, 0.5]]])
    # Votes: class 0, class 1, class 0.
    np.testing.assert_array_equal(combine_votes(member_proba, "plurality"), [[2 / 3, 1 / 3, 0.0]])


def test_combine_votes_soft_equals_numpy_average():
    rng = np.random.default_rng(1)
    member_proba = random_proba(rng, 9, 50, 3, 10)
    weights = rng.random(9)
    np.testing.assert_array_equal(combine_votes(member_proba, "soft"), member_proba.mean(axis=0))
    np.testing.assert_array_equal(
        combine_votes(member_proba, "soft", weights), np.average(member_proba, axis=0, weights=weights)
    )


def test_weighted_votes_count_each_vote_weight_times():
    member_proba = one_hot_members([0, 1, 1], 3)
    np.testing.assert_array_equal(combine_votes(member_proba, "weighted", [3, 1, 1]), [[0.6, 0.4, 0.0]])
    np.testing.assert_array_equal(combine_votes(member_proba, "plurality", [3, 1, 1]), [[0.6, 0.4, 0.0]])
    np.testing.assert_array_equal(combine_votes(member_proba, "plurality"), [[1 / 3, 2 / 3, 0.0]])


@pytest.mark.parametrize(
    "weights, message",
    [
        (None, "needs weights"),
        ([1.0, 1.0], r"shape \(3,\)"),
        ([1.0, -1.0, 1.0], "non-negative"),
        ([1.0, np.nan, 1.0], "non-negative"),
        ([0.0, 0.0, 0.0], "positive sum"),
    ],
)
def test_combine_votes_rejects_bad_weights(weights, message):
    with pytest.raises(ValueError, match=message):
        combine_votes(one_hot_members([0, 1, 1], 2), "weighted", weights)


def test_combine_votes_rejects_unknown_voting_and_shapes():
    with pytest.raises(ValueError, match="voting must be one of"):
        combine_votes(one_hot_members([0, 1], 2), "hard")
    with pytest.raises(ValueError, match="3-D"):
        combine_votes(np.ones((2, 3)), "soft")
    with pytest.raises(ValueError, match="voting must be one of"):
        predict_from_votes(np.ones((1, 2)) / 2, "hard", np.array([0, 1]), -1)


@pytest.mark.parametrize(
    "votes, plurality, majority",
    [
        (["A", "A", "B"], "A", "A"),
        (["A", "B", "C"], "A", "rejected"),
        (["C", "B", "A"], "A", "rejected"),  # a three-way tie goes to the lowest class
        (["A", "B"], "A", "rejected"),  # half is not a majority
        (["B", "A"], "A", "rejected"),
        (["B", "B", "A", "A", "C"], "A", "rejected"),
        (["B", "B", "B", "A", "A"], "B", "B"),
    ],
)
def test_predict_from_votes_worked_examples(votes, plurality, majority):
    classes = np.array(["A", "B", "C"])
    member_proba = one_hot_members([["A", "B", "C"].index(v) for v in votes], 3)
    for voting, expected in [("plurality", plurality), ("majority", majority)]:
        labels = predict_from_votes(combine_votes(member_proba, voting), voting, classes, "rejected")
        assert labels.tolist() == [expected]


def test_weighted_majority_is_exact_at_one_half():
    classes = np.array([10, 20])
    member_proba = one_hot_members([0, 1, 1, 0, 0], 2)
    # Class 10 gets 1 + 1 + 2 = 4 of 8: exactly half, so no majority; 4 + 1 of 9 is one.
    for weights, expected in [([1, 1, 3, 1, 2], -1), ([1, 1, 3, 2, 2], 10), ([1, 1, 1, 1, 1], 10)]:
        scores = combine_votes(member_proba, "majority", weights)
        assert predict_from_votes(scores, "majority", classes, -1).tolist() == [expected]


def test_majority_rejects_exactly_without_more_than_half_many_members():
    # n up to 101 members: fl(c / n) > 0.5 must be exactly 2c > n.
    rng = np.random.default_rng(2)
    for n_members in range(1, 102):
        votes = rng.integers(0, 2, size=(n_members, 64))
        votes[:, 0] = np.arange(n_members) % 2  # a near or exact tie
        scores = tally_votes(votes, 2)
        labels = predict_from_votes(scores, "majority", np.array([0, 1]), -1)
        counts = np.stack([(votes == 0).sum(axis=0), (votes == 1).sum(axis=0)], axis=1)
        expected = np.where(2 * counts.max(axis=1) > n_members, counts.argmax(axis=1), -1)
        np.testing.assert_array_equal(labels, expected)


@pytest.mark.parametrize(
    "classes, reject_label, dtype",
    [
        (np.array([0, 1], dtype=np.int64), -1, np.int64),
        (np.array([0, 1], dtype=np.uint8), -1, np.int64),  # uint8 cannot hold -1
        (np.array([0.5, 1.5]), np.nan, np.float64),
        (np.array(["a", "b"]), "rejected", np.dtype("<U8")),
        (np.array(["a", "b"], dtype=object), "rejected", object),
        (np.array([0.5, 1.5]), -1, np.float64),
    ],
)
def test_predict_from_votes_dtype(classes, reject_label, dtype):
    member_proba = one_hot_members([0, 1], 2)
    labels = predict_from_votes(combine_votes(member_proba, "majority"), "majority", classes, reject_label)
    assert labels.dtype == dtype
    if reject_label is np.nan:
        assert np.isnan(labels[0])
    else:
        assert labels[0] == reject_label
    # Without rejection the labels keep the classes' dtype.
    assert predict_from_votes(combine_votes(member_proba, "plurality"), "plurality", classes, reject_label).dtype == (
        classes.dtype
    )


def test_predict_from_votes_refuses_a_reject_label_that_is_a_class():
    scores = combine_votes(one_hot_members([0, 1], 2), "majority")
    with pytest.raises(ValueError, match="is one of the classes"):
        predict_from_votes(scores, "majority", np.array([-1, 1]), -1)
    assert predict_from_votes(scores, "plurality", np.array([-1, 1]), -1).tolist() == [-1]


@pytest.mark.parametrize(
    "classes, expected",
    [
        (np.array([0, 1, 2]), -1),
        (np.array([-1, 1]), -2),  # min(classes) - 1 when -1 is a class
        (np.array([-3, -1, 4], dtype=np.int8), -4),
        (np.array([0, 255], dtype=np.uint8), -1),
        (np.array([-1.0, 2.5]), -2.0),
        (np.array([False, True]), -1),
        (np.array(["no", "yes"]), "rejected"),
        (np.array(["rejected", "rejected_", "x"]), "rejected__"),
        (np.array(["no", "yes"], dtype=object), "rejected"),
    ],
)
def test_default_reject_label_has_the_classes_type_and_is_not_a_class(classes, expected):
    label = resolve_reject_label(classes, None)
    assert label == expected and type(label) is type(expected)
    assert label not in classes.tolist()


@pytest.mark.parametrize(
    "classes, reject_label, error",
    [
        (np.array(["no", "yes"]), -1, TypeError),
        (np.array(["no", "yes"], dtype=object), 0.5, TypeError),
        (np.array([0, 1]), "rejected", TypeError),
        (np.array([0.5, 1.5]), b"x", TypeError),
        (np.array([0, 1]), 1.0, ValueError),  # equal to the class 1
        (np.array(["no", "yes"]), "yes", ValueError),
    ],
)
def test_reject_label_of_another_type_or_equal_to_a_class_is_refused(classes, reject_label, error):
    with pytest.raises(error, match="reject_label"):
        resolve_reject_label(classes, reject_label)
    assert resolve_reject_label(classes, None) not in classes.tolist()


# ---------------------------------------------------------------------------------------
# VotingClassifier / VotingRegressor


def iris_members(n_members=3):
    members = [
        ("lr", LogisticRegression(max_iter=1000)),
        ("tree", DecisionTreeClassifier(max_depth=3, random_state=0)),
        ("nb", GaussianNB()),
        ("knn", KNeighborsClassifier(n_neighbors=3)),
    ]
    return members[:n_members]


@pytest.fixture(scope="module")
def iris_2d():
    """Two features only, so the members often disagree."""
    X, y = load_iris(return_X_y=True)
    return X[:, :2], y


def naive_vote(member_labels, weights, majority, reject_label):
    """Per-row weighted vote counts with integer weights; first class in sorted order on ties."""
    predictions = []
    for row in member_labels.T:
        counts = Counter()
        for label, weight in zip(row, weights):
            counts[label] += weight
        best = max(counts.values())
        winner = min(label for label, count in counts.items() if count == best)
        predictions.append(reject_label if majority and 2 * best <= sum(weights) else winner)
    return predictions


@pytest.mark.parametrize("voting", ["hard", "soft"])
@pytest.mark.parametrize("weights", [None, [2, 1, 1], [0.3, 0.5, 0.2]])
def test_classifier_agrees_with_sklearn(iris_2d, voting, weights):
    X, y = iris_2d
    ours = VotingClassifier(iris_members(), voting=voting, weights=weights).fit(X, y)
    theirs = ensemble.VotingClassifier(iris_members(), voting=voting, weights=weights).fit(X, y)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    np.testing.assert_array_equal(ours.transform(X), theirs.transform(X))
    np.testing.assert_array_equal(ours.get_feature_names_out(), theirs.get_feature_names_out())
    if voting == "soft":
        np.testing.assert_array_equal(ours.predict_proba(X), theirs.predict_proba(X))
    else:
        assert not hasattr(ours, "predict_proba")
    assert ours.score(X, y) == theirs.score(X, y)


def test_plurality_is_hard(iris_2d):
    X, y = iris_2d
    hard = VotingClassifier(iris_members(4), voting="hard", weights=[1, 2, 1, 1]).fit(X, y)
    plurality = VotingClassifier(iris_members(4), voting="plurality", weights=[1, 2, 1, 1]).fit(X, y)
    np.testing.assert_array_equal(plurality.predict(X), hard.predict(X))
    np.testing.assert_array_equal(plurality.get_feature_names_out(), hard.get_feature_names_out())
    assert not hasattr(plurality, "predict_proba")


@pytest.mark.parametrize("weights", [None, [1, 1, 1, 1], [2, 1, 1, 2], [1, 0, 2, 1]])
def test_majority_rejects_exactly_the_rows_without_majority(iris_2d, weights):
    X, y = iris_2d
    clf = VotingClassifier(iris_members(4), voting="majority", weights=weights).fit(X, y)
    member_labels = np.array([est.predict(X) for est in clf.estimators_])
    expected = naive_vote(member_labels, [1] * 4 if weights is None else weights, True, -1)
    predictions = clf.predict(X)
    np.testing.assert_array_equal(predictions, expected)
    assert 0 < np.sum(predictions == -1) < X.shape[0]  # not vacuous
    plurality = VotingClassifier(iris_members(4), voting="plurality", weights=weights).fit(X, y)
    accepted = predictions != -1
    np.testing.assert_array_equal(predictions[accepted], plurality.predict(X)[accepted])
    assert not hasattr(clf, "predict_proba")
    np.testing.assert_array_equal(clf.transform(X), member_labels.T)
    assert clf.get_feature_names_out().tolist() == [f"votingclassifier_{name}" for name in ["lr", "tree", "nb", "knn"]]


def test_majority_with_string_classes(iris_2d):
    X, y = iris_2d
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    clf = VotingClassifier(iris_members(4), voting="majority", reject_label="no majority").fit(X, names)
    predictions = clf.predict(X)
    member_labels = clf.classes_[np.array([est.predict(X) for est in clf.estimators_])]
    assert predictions.dtype.kind == "U"
    assert predictions.tolist() == naive_vote(member_labels, [1] * 4, True, "no majority")
    assert "no majority" in predictions
    # The default is a string for string classes, so that score compares strings with strings.
    default = VotingClassifier(iris_members(4), voting="majority").fit(X, names)
    expected = naive_vote(member_labels, [1] * 4, True, "rejected")
    assert default.predict(X).dtype.kind == "U" and default.predict(X).tolist() == expected
    assert default.score(X, names) == np.mean(np.array(expected) == names)
    with pytest.raises(TypeError, match="not a string"):
        VotingClassifier(iris_members(4), voting="majority", reject_label=-1).fit(X, names)


def test_reject_label_that_is_a_class_is_refused(iris_2d):
    X, y = iris_2d
    y_signed = np.where(y == 0, -1, 1)
    with pytest.raises(ValueError, match="is one of the classes"):
        VotingClassifier(iris_members(), voting="majority", reject_label=-1).fit(X, y_signed)
    clf = VotingClassifier(iris_members(), voting="hard", reject_label=-1).fit(X, y_signed)
    clf.set_params(voting="majority")
    with pytest.raises(ValueError, match="is one of the classes"):
        clf.predict(X)
    clf.set_params(reject_label=0)
    assert set(clf.predict(X)) <= {-1, 0, 1}


def test_classifier_parameter_validation(iris_2d):
    X, y = iris_2d
    with pytest.raises(InvalidParameterError, match="voting"):
        VotingClassifier(iris_members(), voting="weighted").fit(X, y)
    with pytest.raises(InvalidParameterError, match="reject_label"):
        VotingClassifier(iris_members(), reject_label=[1]).fit(X, y)
    with pytest.raises(ValueError, match="non-negative"):
        VotingClassifier(iris_members(), weights=[1, -1, 1]).fit(X, y)
    with pytest.raises(ValueError, match="must be equal"):
        VotingClassifier(iris_members(), weights=[1, 1]).fit(X, y)


def test_dropped_estimator_and_its_weight_are_left_out(iris_2d):
    X, y = iris_2d
    clf = VotingClassifier(iris_members(4), voting="majority", weights=[5, 1, 1, 1]).fit(X, y)
    clf.set_params(lr="drop").fit(X, y)
    member_labels = np.array([est.predict(X) for est in clf.estimators_])
    np.testing.assert_array_equal(clf.predict(X), naive_vote(member_labels, [1, 1, 1], True, -1))


def test_hard_votes_need_no_predict_proba(iris_2d):
    X, y = iris_2d
    members = [("svc", SVC()), ("tree", DecisionTreeClassifier(max_depth=3, random_state=0)), ("nb", GaussianNB())]
    clf = VotingClassifier(members, voting="majority").fit(X, y)
    member_labels = np.array([est.predict(X) for est in clf.estimators_])
    np.testing.assert_array_equal(clf.predict(X), naive_vote(member_labels, [1, 1, 1], True, -1))


def test_gpuforest_tree_as_a_member(iris_2d):
    X, y = iris_2d
    members = [("ours", GPUForestTreeClassifier(max_depth=3, device="cpu", random_state=0))] + iris_members(2)
    clf = VotingClassifier(members, voting="soft").fit(X, y)
    assert clf.predict_proba(X).shape == (X.shape[0], 3)
    assert clf.score(X, y) > 0.7


def test_regressor_equals_sklearn():
    X, y = load_diabetes(return_X_y=True)
    for weights in [None, [0.2, 0.8]]:
        members = [("lin", LinearRegression()), ("tree", DecisionTreeRegressor(max_depth=4, random_state=0))]
        ours = VotingRegressor(members, weights=weights).fit(X, y)
        theirs = ensemble.VotingRegressor(members, weights=weights).fit(X, y)
        np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
        np.testing.assert_array_equal(ours.transform(X), theirs.transform(X))
        assert isinstance(ours, ensemble.VotingRegressor)
