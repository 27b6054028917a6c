"""AdaBoost: agreement with scikit-learn, a naive SAMME.R, and the fast path's equivalence to fitting.

Integer features in 0..9 are binned exactly (one bin per value), so gpuforest's stumps are
scikit-learn's and SAMME picks the same stumps with the same weights. Measured when written:
binary SAMME, 100 stumps, test error 12.10% for both (all 100 stumps the same, weights to 1e-15); 4 classes,
60 stumps, 46.25% for both; Hastie's nested spheres (2,000 training rows, 400 stumps on 255
quantile bins): training error 45.6% / 19.9% / 6.7% after 1 / 50 / 400 stumps, test error
11.41% vs scikit-learn's 11.60%; AdaBoost.R2 on Friedman #1 (30 depth-3 trees), test R^2 with
gpuforest trees vs scikit-learn's: 0.755 vs 0.766 (linear), 0.796 vs 0.789 (square), 0.762
vs 0.772 (exponential).
"""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.datasets import make_friedman1, make_hastie_10_2
from sklearn.ensemble import AdaBoostClassifier as SkAdaBoostClassifier
from sklearn.ensemble import AdaBoostRegressor as SkAdaBoostRegressor
from sklearn.neighbors import KNeighborsClassifier
from sklearn.tree import DecisionTreeClassifier as SkDecisionTreeClassifier
from sklearn.tree import DecisionTreeRegressor as SkDecisionTreeRegressor

from gpuforest import DecisionTreeClassifier
from gpuforest.adaboost import AdaBoostClassifier, AdaBoostRegressor
from gpuforest.datasets import load_weather
from gpuforest.tree import MULTIWAY

EPS = np.finfo(np.float64).eps


def integer_data(n_samples, n_classes, seed):
    """Features in 0..9; the class grows with the sum of three features; 10% of labels random."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 10, size=(n_samples, 6)).astype(np.float64)
    cuts = np.quantile(X[:, :3].sum(axis=1), np.linspace(0, 1, n_classes + 1)[1:-1])
    y = np.digitize(X[:, :3].sum(axis=1), cuts)
    noisy = rng.random(n_samples) < 0.1
    y[noisy] = rng.integers(0, n_classes, size=noisy.sum())
    return X, y


@pytest.mark.quality  # a peer-score comparison
def test_binary_samme_matches_scikit_learn():
    X, y = integer_data(3000, 2, seed=0)
    X_train, X_test, y_train, y_test = X[:1000], X[1000:], y[:1000], y[1000:]
    ours = AdaBoostClassifier(n_estimators=100, random_state=0, device="cpu").fit(X_train, y_train)
    theirs = SkAdaBoostClassifier(SkDecisionTreeClassifier(max_depth=1), n_estimators=100, random_state=0)
    theirs.fit(X_train, y_train)
    assert abs(ours.score(X_test, y_test) - theirs.score(X_test, y_test)) <= 0.005
    # scikit-learn's stumps through the generic path (fit with weights): scikit-learn's model.
    generic = AdaBoostClassifier(SkDecisionTreeClassifier(max_depth=1), n_estimators=100, random_state=0)
    generic.fit(X_train, y_train)
    np.testing.assert_allclose(generic.estimator_weights_, theirs.estimator_weights_, rtol=1e-12)
    np.testing.assert_allclose(generic.predict_proba(X_test), theirs.predict_proba(X_test), atol=1e-12)
    # The same stumps with the same weights (scikit-learn breaks ties at random: none here).
    for our_stump, their_stump in zip(ours.estimators_[:20], theirs.estimators_[:20]):
        assert our_stump.tree_.feature[0] == their_stump.tree_.feature[0]
        assert our_stump.tree_.threshold[0] == their_stump.tree_.threshold[0]
    np.testing.assert_allclose(ours.estimator_weights_[:20], theirs.estimator_weights_[:20], rtol=1e-10)
    # Two classes: discrete AdaBoost's vote (Freund & Schapire, weights 1/2 log((1 - e) / e)) decides the same.
    errors = ours.estimator_errors_
    votes = np.array([2 * stump.predict(X_test) - 1 for stump in ours.estimators_])
    classic = (0.5 * np.log((1 - errors) / errors)) @ votes
    np.testing.assert_array_equal(ours.predict(X_test), (classic > 0).astype(int))


def test_multiclass_samme_matches_scikit_learn():
    X, y = integer_data(3000, 4, seed=1)
    X_train, X_test, y_train, y_test = X[:1000], X[1000:], y[:1000], y[1000:]
    ours = AdaBoostClassifier(n_estimators=60, learning_rate=0.5, random_state=0, device="cpu").fit(X_train, y_train)
    theirs = SkAdaBoostClassifier(
        SkDecisionTreeClassifier(max_depth=1), n_estimators=60, learning_rate=0.5, random_state=0
    ).fit(X_train, y_train)
    assert abs(ours.score(X_test, y_test) - theirs.score(X_test, y_test)) <= 0.005
    np.testing.assert_allclose(ours.estimator_weights_[:20], theirs.estimator_weights_[:20], rtol=1e-10)
    np.testing.assert_allclose(ours.predict_proba(X_test), theirs.predict_proba(X_test), atol=1e-8)


@pytest.mark.quality
def test_hastie_nested_spheres():
    """Hastie et al.'s 10-D example (ESL fig. 10.2): boosted stumps fall from ~46% to ~12% test error."""
    X, y = make_hastie_10_2(n_samples=12000, random_state=1)
    X_train, X_test, y_train, y_test = X[:2000], X[2000:], y[:2000], y[2000:]
    ours = AdaBoostClassifier(n_estimators=400, random_state=0, device="cpu").fit(X_train, y_train)
    theirs = SkAdaBoostClassifier(SkDecisionTreeClassifier(max_depth=1), n_estimators=400, random_state=0)
    theirs.fit(X_train, y_train)
    # One pass of staged predictions over the training and the test rows together.
    training_error, test_error = np.array([
        (np.mean(stage[:2000] != y_train), np.mean(stage[2000:] != y_test)) for stage in ours.staged_predict(X)
    ]).T
    assert training_error[0] > 0.4
    assert training_error[-1] < 0.08  # measured 0.0665 (scikit-learn: 0.0585)
    assert training_error[-1] < training_error[199] < training_error[49] < training_error[0]
    assert abs(test_error[-1] - (1 - theirs.score(X_test, y_test))) < 0.015  # measured 11.41% vs 11.60%


def naive_samme_r(X, y, X_test, n_rounds, learning_rate):
    """Zhu et al. 2009, algorithm 4, with scikit-learn stumps: the predicted classes of X_test."""
    classes = np.unique(y)
    n_classes = classes.shape[0]
    coding = np.where(y[:, None] == classes, 1.0, -1.0 / (n_classes - 1))
    weights = np.full(y.shape[0], 1.0 / y.shape[0])
    scores = np.zeros((X_test.shape[0], n_classes))
    for _ in range(n_rounds):
        stump = SkDecisionTreeClassifier(max_depth=1, random_state=0).fit(X, y, sample_weight=weights)
        log_proba = np.log(np.maximum(stump.predict_proba(X), EPS))
        weights = weights * np.exp(-learning_rate * (n_classes - 1) / n_classes * (coding * log_proba).sum(axis=1))
        weights /= weights.sum()
        log_proba_test = np.log(np.maximum(stump.predict_proba(X_test), EPS))
        scores += (n_classes - 1) * (log_proba_test - log_proba_test.mean(axis=1, keepdims=True))
    return classes[np.argmax(scores, axis=1)]


@pytest.mark.parametrize("n_classes", [2, 3])
def test_samme_r_matches_naive_implementation(n_classes):
    X, y = integer_data(1600, n_classes, seed=2)
    X_train, X_test, y_train = X[:600], X[600:], y[:600]
    ours = AdaBoostClassifier(n_estimators=30, algorithm="SAMME.R", learning_rate=0.5, device="cpu")
    ours.fit(X_train, y_train)
    np.testing.assert_array_equal(ours.estimator_weights_, 1.0)
    np.testing.assert_array_equal(ours.predict(X_test), naive_samme_r(X_train, y_train, X_test, 30, 0.5))


class HiddenTree(DecisionTreeClassifier):
    """A gpuforest tree that AdaBoost does not take for one: each round calls its ``fit``."""


@pytest.mark.parametrize("tree_params", [
    dict(max_depth=1),
    dict(max_depth=3, max_features=2, splitter="random", min_samples_leaf=5, max_bins=32),
])
def test_fast_path_grows_the_trees_fit_would(tree_params):
    X, y = make_hastie_10_2(n_samples=600, random_state=3)
    weight = np.random.default_rng(0).random(600)
    weight[:50] = 0.0  # rows left out of the binning and of every tree
    params = dict(n_estimators=15, random_state=4)
    fast = AdaBoostClassifier(DecisionTreeClassifier(device="cpu", **tree_params), **params)
    fast.fit(X, y, sample_weight=weight)
    fitted = AdaBoostClassifier(HiddenTree(device="cpu", **tree_params), **params).fit(X, y, sample_weight=weight)
    np.testing.assert_array_equal(fast.estimator_weights_, fitted.estimator_weights_)
    np.testing.assert_array_equal(fast.decision_function(X), fitted.decision_function(X))
    np.testing.assert_array_equal(fast.feature_importances_, fitted.feature_importances_)
    assert all(type(member) is DecisionTreeClassifier for member in fast.estimators_)


def test_members_with_surrogates_fit_themselves():
    """The fast path grows no surrogate splits: members that ask for them are fitted by their own fit."""
    X, y = make_hastie_10_2(n_samples=200, random_state=3)
    tree = DecisionTreeClassifier(max_depth=2, use_surrogates=True, device="cpu")
    boosted = AdaBoostClassifier(tree, n_estimators=3, random_state=4).fit(X, y)
    hidden = HiddenTree(max_depth=2, use_surrogates=True, device="cpu")
    fitted = AdaBoostClassifier(hidden, n_estimators=3, random_state=4).fit(X, y)
    for member, expected in zip(boosted.estimators_, fitted.estimators_, strict=True):
        np.testing.assert_array_equal(member.tree_.surrogate_feature, expected.tree_.surrogate_feature)
        assert np.any(member.tree_.surrogate_feature >= 0)


class LabelRecorder(ClassifierMixin, BaseEstimator):
    """Keeps the labels it was fitted on and predicts its first class; its ``fit`` takes no ``sample_weight``."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.y_ = y
        return self

    def predict(self, X):
        return np.full(X.shape[0], self.classes_[0])


def test_members_without_sample_weight_fit_on_a_weighted_resample():
    X, y = integer_data(400, 3, seed=5)
    first, second, other = (
        AdaBoostClassifier(KNeighborsClassifier(n_neighbors=15), n_estimators=8, random_state=seed).fit(X, y)
        for seed in (0, 0, 1)
    )
    np.testing.assert_array_equal(first.estimator_weights_, second.estimator_weights_)
    np.testing.assert_array_equal(first.predict_proba(X), second.predict_proba(X))
    assert np.any(first.estimator_weights_ != other.estimator_weights_)  # both (n_estimators,): elementwise
    assert first.score(X, y) > 0.6
    # Draws follow the weights: rows weighted 0 are never drawn.
    weight = np.ones(400)
    weight[y == 0] = 0.0
    model = AdaBoostClassifier(LabelRecorder(), n_estimators=1, random_state=0).fit(X, y, sample_weight=weight)
    drawn = model.estimators_[0].y_
    assert drawn.shape == y.shape and not np.any(drawn == 0)


def test_perfect_fit_stops_with_weight_one():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 0, 1, 1])
    model = AdaBoostClassifier(n_estimators=10, device="cpu").fit(X, y)
    assert len(model.estimators_) == 1
    assert model.estimator_weights_[0] == 1.0 and model.estimator_errors_[0] == 0.0
    np.testing.assert_array_equal(model.predict(X), y)


def test_first_member_no_better_than_chance_raises():
    xor_X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    xor_y = np.array([0, 1, 1, 0])
    for model in (AdaBoostClassifier(device="cpu"), SkAdaBoostClassifier()):
        with pytest.raises(ValueError, match="worse than random"):
            model.fit(xor_X, xor_y)


class HeaviestRow(ClassifierMixin, BaseEstimator):
    """Predicts the label of the heaviest training row."""

    def fit(self, X, y, sample_weight):
        self.classes_ = np.unique(y)
        self.label_ = y[np.argmax(sample_weight)]
        return self

    def predict(self, X):
        return np.full(X.shape[0], self.label_)


def test_member_no_better_than_chance_is_dropped():
    # Round 1 predicts class 0 (error 0.3); the class-1 rows become heaviest, and
    # predicting class 1 errs on 0.7 / (0.7 + 0.3 sqrt(7 / 3)) = 0.6 of the weight.
    X = np.zeros((10, 1))
    y = np.array([0] * 7 + [1] * 3)
    model = AdaBoostClassifier(HeaviestRow(), n_estimators=5, learning_rate=0.5).fit(X, y)
    assert len(model.estimators_) == 1
    np.testing.assert_allclose(model.estimator_errors_, [0.3, 1, 1, 1, 1])
    np.testing.assert_allclose(model.estimator_weights_[0], 0.5 * np.log(7 / 3))


@pytest.mark.parametrize("loss", ["linear", "square", "exponential"])
def test_regressor_matches_scikit_learn(loss):
    X, y = make_friedman1(n_samples=1200, noise=1.0, random_state=0)
    X_train, X_test, y_train, y_test = X[:400], X[400:], y[:400], y[400:]
    params = dict(n_estimators=30, loss=loss, random_state=0)
    theirs = SkAdaBoostRegressor(SkDecisionTreeRegressor(max_depth=3), **params).fit(X_train, y_train)
    # With scikit-learn's tree, the same re-samples and the same model.
    same_tree = AdaBoostRegressor(SkDecisionTreeRegressor(max_depth=3), **params).fit(X_train, y_train)
    np.testing.assert_allclose(same_tree.predict(X_test), theirs.predict(X_test))
    np.testing.assert_allclose(same_tree.estimator_weights_, theirs.estimator_weights_)
    ours = AdaBoostRegressor(device="cpu", **params).fit(X_train, y_train)
    assert abs(ours.score(X_test, y_test) - theirs.score(X_test, y_test)) < 0.02


@pytest.mark.parametrize("algorithm, n_classes", [("SAMME", 2), ("SAMME", 3), ("SAMME.R", 2), ("SAMME.R", 3)])
def test_staged_methods_end_at_the_full_model(algorithm, n_classes):
    X, y = integer_data(300, n_classes, seed=6)
    params = dict(n_estimators=10, algorithm=algorithm, random_state=0, device="cpu")
    model = AdaBoostClassifier(**params).fit(X, y)
    *_, last_prediction = model.staged_predict(X)
    *_, last_proba = model.staged_predict_proba(X)
    *_, last_decision = model.staged_decision_function(X)
    *_, last_score = model.staged_score(X, y)
    np.testing.assert_array_equal(last_prediction, model.predict(X))
    np.testing.assert_allclose(last_proba, model.predict_proba(X))
    np.testing.assert_allclose(model.predict_proba(X).sum(axis=1), 1.0)
    np.testing.assert_array_equal(last_decision, model.decision_function(X))
    assert last_decision.shape == ((300,) if n_classes == 2 else (300, n_classes))
    assert last_score == model.score(X, y)
    np.testing.assert_array_equal(model.classes_[np.argmax(model.predict_proba(X), axis=1)], model.predict(X))
    # Same seed, same model.
    np.testing.assert_array_equal(AdaBoostClassifier(**params).fit(X, y).decision_function(X), last_decision)


def test_regressor_staged_predict_ends_at_predict():
    X, y = make_friedman1(n_samples=200, random_state=1)
    params = dict(n_estimators=5, random_state=0, device="cpu")
    model = AdaBoostRegressor(**params).fit(X, y)
    *_, last = model.staged_predict(X)
    np.testing.assert_array_equal(last, model.predict(X))
    np.testing.assert_array_equal(AdaBoostRegressor(**params).fit(X, y).predict(X), last)


def test_feature_importances_are_the_weighted_mean_of_the_members():
    X, y = integer_data(300, 3, seed=7)
    model = AdaBoostClassifier(n_estimators=10, random_state=0, device="cpu").fit(X, y)
    members = np.array([member.feature_importances_ for member in model.estimators_])
    expected = model.estimator_weights_[: len(members)] @ members / model.estimator_weights_.sum()
    np.testing.assert_allclose(model.feature_importances_, expected)
    np.testing.assert_allclose(model.feature_importances_.sum(), 1.0)


def test_cuda_backend_boosts_the_same_model():
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(30, 3)), 1)
    X[rng.random(X.shape) < 0.1] = np.nan
    y = np.digitize(np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]), [-0.5, 0.5])
    params = dict(n_estimators=3, max_bins=16, random_state=0)
    cpu = AdaBoostClassifier(device="cpu", **params).fit(X, y)
    cuda = AdaBoostClassifier(device="cuda", **params).fit(X, y)
    assert cuda.estimators_[0].device_ == "cuda" == cuda.device_ and cpu.device_ == "cpu"
    np.testing.assert_array_equal(cpu.estimator_weights_, cuda.estimator_weights_)
    np.testing.assert_array_equal(cpu.predict_proba(X), cuda.predict_proba(X))


def test_device_is_the_backend_the_members_ran_on():
    X, y = integer_data(30, 2, seed=2)
    params = dict(n_estimators=2, max_bins=16, random_state=0)
    auto = AdaBoostRegressor(**params).fit(X, y)
    assert auto.device_ == "cpu" == auto.estimators_[0].device_  # "auto": the CPU backend under the simulator
    # A given estimator keeps its own device (the ensemble's is the default tree's); scikit-learn's run on the CPU.
    given = AdaBoostClassifier(DecisionTreeClassifier(max_depth=1, device="cpu"), device="cuda", **params)
    assert given.fit(X, y).device_ == "cpu"
    assert AdaBoostClassifier(SkDecisionTreeClassifier(max_depth=1), device="cuda", **params).fit(X, y).device_ == "cpu"


@pytest.mark.parametrize("Estimator, params", [
    (AdaBoostClassifier, dict(algorithm="SAMME.X")),
    (AdaBoostClassifier, dict(n_estimators=0)),
    (AdaBoostClassifier, dict(learning_rate=0.0)),
    (AdaBoostClassifier, dict(max_bins=1)),
    (AdaBoostClassifier, dict(device="tpu")),
    (AdaBoostClassifier, dict(estimator="stump")),
    (AdaBoostClassifier, dict(estimator=DecisionTreeClassifier(max_depth=0))),
    (AdaBoostClassifier, dict(estimator=DecisionTreeClassifier(criterion="squared_error"))),
    (AdaBoostRegressor, dict(loss="huber")),
    (AdaBoostRegressor, dict(max_bins=300)),
])
def test_invalid_parameters_raise(Estimator, params):
    X, y = integer_data(50, 2, seed=8)
    with pytest.raises(ValueError):
        Estimator(**params).fit(X, y)


def test_invalid_inputs_raise():
    X, y = integer_data(50, 2, seed=8)
    with pytest.raises(TypeError, match="predict_proba"):
        AdaBoostClassifier(LabelRecorder(), algorithm="SAMME.R").fit(X, y)
    with pytest.raises(ValueError, match="class"):
        AdaBoostClassifier(device="cpu").fit(X, np.zeros(50))
    with pytest.raises(ValueError, match="non-zero"):
        AdaBoostClassifier(device="cpu").fit(X, y, sample_weight=np.zeros(50))
    with pytest.raises(ValueError):
        AdaBoostClassifier(device="cpu").fit(X, y, sample_weight=-np.ones(50))
    model = AdaBoostClassifier(n_estimators=2, device="cpu").fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.predict(X[:, :3])
    with pytest.raises(ValueError, match="infinity"):
        model.predict(np.full_like(X, np.inf))


def test_id3_members_are_fitted_by_their_own_fit():
    weather = load_weather()
    stump = DecisionTreeClassifier(
        algorithm="id3", max_depth=1, categorical_features=weather.categorical_features, device="cpu"
    )
    model = AdaBoostClassifier(stump, n_estimators=2, algorithm="SAMME").fit(weather.data, weather.target)
    # Round 1 weighs every row alike: the member is the ID3 stump, Outlook's three branches.
    expected = clone(stump).fit(weather.data, weather.target).tree_
    first = model.estimators_[0].tree_
    assert first.split_type[0] == MULTIWAY and first.feature[0] == 0 and first.node_count == 4
    np.testing.assert_allclose(first.value, expected.value, rtol=1e-12)
