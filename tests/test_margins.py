"""Margins of AdaBoost, forests and voting against naive vote counts; AdaBoost's bound against Theorem 5."""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

from gpuforest import AdaBoostClassifier, DecisionTreeClassifier, RandomForestClassifier, VotingClassifier

X2, Y2 = make_classification(n_samples=120, n_features=5, n_informative=3, random_state=0)
X3, Y3 = make_classification(n_samples=150, n_features=5, n_informative=3, n_classes=3, random_state=1)


def naive_margins(labels, weights, y, classes):
    """``v_y - max_{k != y} v_k`` from each member's labels (members, rows) and vote weights, one row at a time."""
    margins = []
    for row in range(labels.shape[1]):
        votes = {k: sum(w for w, label in zip(weights, labels[:, row]) if label == k) / sum(weights) for k in classes}
        margins.append(votes[y[row]] - max(v for k, v in votes.items() if k != y[row]))
    return np.array(margins)


@pytest.fixture(scope="module")
def binary_adaboost():
    return AdaBoostClassifier(n_estimators=8, random_state=0, device="cpu").fit(X2, Y2)


def test_adaboost_margins_are_the_normalised_weighted_vote(binary_adaboost):
    model = binary_adaboost
    labels = np.array([member.predict(X2) for member in model.estimators_])
    expected = naive_margins(labels, model.estimator_weights_[:len(model.estimators_)], Y2, model.classes_)
    np.testing.assert_allclose(model.margins(X2, Y2), expected, atol=1e-12)
    # Two classes: y f(x) with y in {-1, 1} and f the sign-coded weighted vote, half SAMME's decision function.
    signed = np.where(Y2 == model.classes_[1], 1.0, -1.0)
    np.testing.assert_allclose(model.margins(X2, Y2), signed * model.decision_function(X2) / 2, atol=1e-12)


def test_margin_bound_is_theorem_5_from_the_errors(binary_adaboost):
    """Schapire et al. 1998, Theorem 5: prod_t 2 sqrt(eps_t^(1 - theta) (1 - eps_t)^(1 + theta))."""
    errors = binary_adaboost.estimator_errors_[:len(binary_adaboost.estimators_)]
    for theta in (0.0, 0.1, 0.25):
        expected = np.prod([2 * np.sqrt(e ** (1 - theta) * (1 - e) ** (1 + theta)) for e in errors])
        assert binary_adaboost.margin_bound(theta) == pytest.approx(expected, rel=1e-12)
    np.testing.assert_allclose(binary_adaboost.margin_bound([0.0, 0.25]),
                               [binary_adaboost.margin_bound(0.0), binary_adaboost.margin_bound(0.25)])


@pytest.mark.parametrize("X, y, learning_rate", [(X2, Y2, 1.0), (X3, Y3, 1.0), (X3, Y3, 0.5)])
def test_margin_bound_bounds_the_training_margins(X, y, learning_rate):
    model = AdaBoostClassifier(n_estimators=6, learning_rate=learning_rate, random_state=0, device="cpu").fit(X, y)
    margins = model.margins(X, y)
    for theta in np.linspace(-0.5, 0.5, 11):
        assert np.mean(margins <= theta) <= model.margin_bound(theta) + 1e-12


def test_forest_margins_from_its_probabilities():
    model = RandomForestClassifier(n_estimators=7, max_depth=3, random_state=0, device="cpu").fit(X3, Y3)
    proba = model.predict_proba(X3)
    expected = [proba[i, y] - np.max(np.delete(proba[i], y)) for i, y in enumerate(Y3)]
    margins = model.margins(X3, Y3)
    np.testing.assert_allclose(margins, expected, atol=1e-15)
    assert np.all((margins > 0) <= (model.predict(X3) == Y3))


def test_hard_voting_margins_are_weighted_vote_shares():
    members = [("tree", DecisionTreeClassifier(max_depth=2)), ("deep", DecisionTreeClassifier(max_depth=4)),
               ("linear", LogisticRegression())]
    model = VotingClassifier(members, voting="hard", weights=[1, 2, 1]).fit(X3, Y3)
    labels = np.array([member.predict(X3) for member in model.estimators_])
    np.testing.assert_allclose(model.margins(X3, Y3), naive_margins(labels, [1, 2, 1], Y3, model.classes_),
                               atol=1e-12)


def test_bad_input_is_refused(binary_adaboost):
    with pytest.raises(ValueError, match="no class"):
        binary_adaboost.margins(X2, Y2 + 5)
    with pytest.raises(ValueError, match="theta"):
        binary_adaboost.margin_bound(1.5)
    real = AdaBoostClassifier(n_estimators=2, algorithm="SAMME.R", device="cpu").fit(X2, Y2)
    with pytest.raises(ValueError, match="SAMME"):
        real.margin_bound(0.1)
