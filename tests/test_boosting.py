"""Gradient boosting against scikit-learn's HistGradientBoosting, LightGBM and naive references.

On integer features with at most 16 values every library bins them alike, so the
trees, and hence the training-loss curves, can be compared round by round: against
HistGradientBoosting (same best-first growth, 31 leaves, min_samples_leaf=20) they
agree to ~1e-9 relative for every loss it shares (measured when written), against
LightGBM to within 1% over 30 rounds.
"""

import lightgbm
import numpy as np
import pytest
from sklearn.datasets import load_digits, make_classification, make_regression
from sklearn.ensemble import GradientBoostingClassifier as SklearnGradientBoostingClassifier
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

from gpuforest import GradientBoostingClassifier, GradientBoostingRegressor
from gpuforest.backend import get_backend
from gpuforest.fitting import BinnedTraining
from gpuforest.grower import tree_feature_subsets
from gpuforest.kernels.common import PURPOSE_SUBSAMPLE

REGRESSION_LOSSES = ["squared_error", "absolute_error", "quantile", "poisson", "gamma"]


def integer_data(n_samples=1500, seed=0):
    """Six integer features in 0..15 and a signal of four of them."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 16, size=(n_samples, 6)).astype(float)
    signal = (X[:, 0] - 7.5) / 4 + np.sin(X[:, 1]) - 0.1 * X[:, 2] * (X[:, 3] > 8)
    return X, signal, rng


def regression_target(loss, signal, rng):
    n_samples = signal.shape[0]
    if loss == "poisson":
        return rng.poisson(np.exp(signal / 2)).astype(float)
    if loss == "gamma":
        return rng.gamma(2.0, np.exp(signal / 2) / 2)
    if loss == "absolute_error":
        return signal + rng.standard_t(2, size=n_samples)
    return signal + rng.normal(size=n_samples)


def training_curve(estimator, X, y):
    """Mean training loss after the baseline and after each round (our ``eval_set`` on the training data)."""
    estimator.set_params(early_stopping=True, n_iter_no_change=1000, device="cpu")
    return -np.array(estimator.fit(X, y, eval_set=(X, y)).validation_score_)


def hist_gradient_boosting_curve(estimator, X, y):
    estimator.set_params(early_stopping=True, validation_fraction=None, n_iter_no_change=1000, scoring="loss")
    return -np.array(estimator.fit(X, y).train_score_)


@pytest.mark.parametrize("loss", REGRESSION_LOSSES)
def test_regression_loss_curve_matches_hist_gradient_boosting(loss):
    X, signal, rng = integer_data()
    y = regression_target(loss, signal, rng)
    # A dyadic quantile: gradients -1/4 and 3/4 sum exactly in both libraries, so that the data's
    # exact ties between splits stay ties (with alpha=0.3 a 1-bit change of a fixed-point scale flips one).
    ours = training_curve(GradientBoostingRegressor(loss=loss, alpha=0.25, n_estimators=15), X, y)
    extra = {"quantile": 0.25} if loss == "quantile" else {}
    theirs = hist_gradient_boosting_curve(HistGradientBoostingRegressor(loss=loss, max_iter=15, **extra), X, y)
    np.testing.assert_allclose(ours, theirs, rtol=1e-7)
    assert ours[-1] < 0.9 * ours[0]


@pytest.mark.parametrize("n_classes", [2, 3])
def test_log_loss_curve_matches_hist_gradient_boosting(n_classes):
    X, signal, rng = integer_data()
    y = np.digitize(signal + rng.logistic(size=signal.shape[0]) / 2, np.quantile(signal, [0.5] if n_classes == 2 else [0.33, 0.66]))
    ours = training_curve(GradientBoostingClassifier(n_estimators=15), X, y)
    theirs = hist_gradient_boosting_curve(HistGradientBoostingClassifier(max_iter=15), X, y)
    np.testing.assert_allclose(ours, theirs, rtol=1e-7)


@pytest.mark.quality
@pytest.mark.filterwarnings("ignore:The argument 'eval_set' is deprecated")
def test_binary_log_loss_curve_matches_lightgbm():
    X, signal, rng = integer_data(2000)
    y = (rng.random(signal.shape[0]) < 1 / (1 + np.exp(-signal))).astype(int)
    ours = training_curve(GradientBoostingClassifier(n_estimators=30, random_state=0), X, y)
    theirs = lightgbm.LGBMClassifier(
        n_estimators=30, num_leaves=31, min_child_samples=20, min_child_weight=1e-3, reg_lambda=0.0,
        learning_rate=0.1, max_bin=255, min_data_in_bin=1, deterministic=True, force_row_wise=True, verbose=-1,
    ).fit(X, y, eval_set=[(X, y)])
    # LightGBM reports the rounds only (not the baseline).
    np.testing.assert_allclose(ours[1:], theirs.evals_result_["training"]["binary_logloss"], rtol=0.01)
    np.testing.assert_allclose(ours[1:6], theirs.evals_result_["training"]["binary_logloss"][:5], rtol=1e-6)


@pytest.mark.quality
def test_test_scores_match_hist_gradient_boosting():
    X_train, X_test, y_train, y_test = train_test_split(
        *make_classification(n_samples=3000, n_features=10, random_state=0), random_state=0
    )
    ours = GradientBoostingClassifier(n_estimators=40, device="cpu").fit(X_train, y_train)
    theirs = HistGradientBoostingClassifier(max_iter=40, early_stopping=False).fit(X_train, y_train)
    our_auc = roc_auc_score(y_test, ours.predict_proba(X_test)[:, 1])
    assert abs(our_auc - roc_auc_score(y_test, theirs.predict_proba(X_test)[:, 1])) < 0.005
    np.testing.assert_allclose(ours.predict_proba(X_test)[:, 1], 1 / (1 + np.exp(-ours.decision_function(X_test))))
    X_train, X_test, y_train, y_test = train_test_split(*load_digits(return_X_y=True), random_state=0)
    ours = GradientBoostingClassifier(n_estimators=10, device="cpu").fit(X_train, y_train)
    theirs = HistGradientBoostingClassifier(max_iter=10, early_stopping=False).fit(X_train, y_train)
    assert len(ours.trees_) == 10 * 10
    assert abs(ours.score(X_test, y_test) - theirs.score(X_test, y_test)) < 0.03
    np.testing.assert_allclose(ours.predict_proba(X_test).sum(axis=1), 1.0)


def test_exponential_loss_matches_scikit_learn():
    X_train, X_test, y_train, y_test = train_test_split(
        *make_classification(n_samples=3000, n_features=8, random_state=1), random_state=0
    )
    ours = GradientBoostingClassifier(loss="exponential", n_estimators=30, device="cpu").fit(X_train, y_train)
    theirs = SklearnGradientBoostingClassifier(loss="exponential", n_estimators=30, random_state=0).fit(X_train, y_train)
    # P(y = 1) = sigmoid(2 raw), and the baseline is half the log-odds (Friedman, Hastie & Tibshirani 2000).
    np.testing.assert_allclose(ours.predict_proba(X_test)[:, 1], 1 / (1 + np.exp(-2 * ours.decision_function(X_test))))
    prior = y_train.mean()
    assert ours.baseline_[0] == pytest.approx(0.5 * np.log(prior / (1 - prior)))
    our_auc = roc_auc_score(y_test, ours.predict_proba(X_test)[:, 1])
    assert our_auc > roc_auc_score(y_test, theirs.predict_proba(X_test)[:, 1]) - 0.01
    with pytest.raises(ValueError, match="two classes"):
        GradientBoostingClassifier(loss="exponential").fit(X_train, np.arange(y_train.shape[0]) % 3)


def test_huber_resists_outliers():
    X, signal, rng = integer_data(2000)
    y = signal + rng.normal(scale=0.3, size=signal.shape[0])
    y[rng.random(y.shape[0]) < 0.05] += 50.0  # gross outliers
    errors = {}
    for loss in ("squared_error", "huber"):
        model = GradientBoostingRegressor(loss=loss, n_estimators=25, early_stopping=False, device="cpu").fit(X, y)
        errors[loss] = np.median(np.abs(model.predict(X) - signal))
    assert errors["huber"] < 0.5 * errors["squared_error"]


def test_custom_objective_equals_the_built_in_loss():
    X, signal, rng = integer_data(800)
    y = signal + rng.normal(size=signal.shape[0])
    weight = rng.uniform(0.5, 2.0, y.shape[0])
    params = dict(n_estimators=8, early_stopping=False, device="cpu", init="zero")
    built_in = GradientBoostingRegressor(**params).fit(X, y, sample_weight=weight)
    custom = GradientBoostingRegressor(loss=lambda y_true, raw: (raw - y_true, np.ones_like(raw)), **params)
    custom.fit(X, y, sample_weight=weight)
    np.testing.assert_array_equal(custom.predict(X), built_in.predict(X))
    with pytest.raises(ValueError, match="non-negative hessians"):
        GradientBoostingRegressor(loss=lambda y_true, raw: (raw - y_true, -np.ones_like(raw))).fit(X, y)
    with pytest.raises(ValueError, match="shape"):
        GradientBoostingRegressor(loss=lambda y_true, raw: (raw[:5], raw[:5])).fit(X, y)


def test_target_domains_are_checked():
    X = np.arange(20.0).reshape(-1, 1)
    with pytest.raises(ValueError, match="poisson"):
        GradientBoostingRegressor(loss="poisson").fit(X, -np.ones(20))
    with pytest.raises(ValueError, match="gamma"):
        GradientBoostingRegressor(loss="gamma").fit(X, np.zeros(20))


def test_early_stopping_follows_scikit_learns_rule():
    X, y = make_regression(n_samples=1200, n_features=5, noise=30.0, random_state=0)
    model = GradientBoostingRegressor(
        n_estimators=500, learning_rate=0.5, early_stopping=True, n_iter_no_change=5, random_state=0, device="cpu"
    ).fit(X, y)
    scores = model.validation_score_
    assert model.n_iter_ < 500 and len(scores) == model.n_iter_ + 1 == len(model.train_score_)
    # Stopped because none of the last 5 scores beat the one before them by tol; not earlier.
    assert max(scores[-5:]) <= scores[-6] + model.tol
    assert all(max(scores[i - 4:i + 1]) > scores[i - 5] + model.tol for i in range(5, len(scores) - 1))
    assert model.best_iteration_ == int(np.argmax(scores))
    assert model.train_score_[-1] > model.train_score_[0]
    # The validation rows are 10% held out of the training data.
    X_train, X_val, y_train, y_val = train_test_split(
        X, y, test_size=0.1, random_state=np.random.RandomState(0).randint(np.iinfo(np.int32).max)
    )
    staged = list(model.staged_predict(X_val))
    assert -scores[-1] == pytest.approx(0.5 * np.mean((y_val - staged[-1]) ** 2))
    assert -scores[3] == pytest.approx(0.5 * np.mean((y_val - staged[2]) ** 2))


def test_early_stopping_with_a_scorer_and_an_eval_set():
    X, y = make_classification(n_samples=1500, n_features=8, random_state=0)
    X_eval, y_eval = X[1000:], y[1000:]
    model = GradientBoostingClassifier(n_estimators=20, scoring="roc_auc", device="cpu", random_state=0)
    model.fit(X[:1000], y[:1000], eval_set=(X_eval, y_eval))
    staged = list(model.staged_predict_proba(X_eval))
    assert model.validation_score_[-1] == pytest.approx(roc_auc_score(y_eval, staged[model.n_iter_ - 1][:, 1]))
    assert model.validation_score_[5] == pytest.approx(roc_auc_score(y_eval, staged[4][:, 1]))


def test_an_eval_set_of_the_wrong_width_is_refused():
    X, y = make_classification(n_samples=100, n_features=6, random_state=0)
    model = GradientBoostingClassifier(n_estimators=2, device="cpu")
    with pytest.raises(ValueError, match="X has 5 features, but GradientBoostingClassifier is expecting 6"):
        model.fit(X, y, eval_set=(X[:, :5], y))


def test_staged_predictions_end_at_the_final_ones():
    X, y = make_classification(n_samples=600, n_features=6, n_informative=4, n_classes=3, random_state=0)
    model = GradientBoostingClassifier(n_estimators=7, device="cpu").fit(X, y)
    staged = list(model.staged_predict_proba(X))
    assert len(staged) == 7
    np.testing.assert_allclose(staged[-1], model.predict_proba(X))
    np.testing.assert_array_equal(list(model.staged_predict(X))[-1], model.predict(X))
    np.testing.assert_allclose(list(model.staged_decision_function(X))[-1], model.decision_function(X))
    # Each stage adds one round's trees: stage 1 is the baseline plus the first round.
    first = GradientBoostingClassifier(n_estimators=1, device="cpu").fit(X, y)
    np.testing.assert_allclose(staged[0], first.predict_proba(X))


def test_gain_importances_of_one_tree_match_a_direct_computation():
    X, signal, rng = integer_data(1000)
    y = signal + rng.normal(size=signal.shape[0])
    model = GradientBoostingRegressor(n_estimators=1, max_leaf_nodes=8, early_stopping=False, device="cpu").fit(X, y)
    tree = model.trees_[0]
    gradient = model.baseline_[0] - y  # squared error, hessian 1
    path = tree.decision_path(X.astype(np.float32), get_backend("cpu")).toarray().astype(bool)
    gains = np.zeros(X.shape[1])
    for node in np.flatnonzero(tree.children_left >= 0):
        score = [gradient[path[:, n]].sum() ** 2 / path[:, n].sum()
                 for n in (node, tree.children_left[node], tree.children_right[node])]
        gains[tree.feature[node]] += score[1] + score[2] - score[0]
    np.testing.assert_allclose(model.feature_importances_, gains / gains.sum(), rtol=1e-9)


def test_warm_start_adds_the_same_rounds():
    X, y = make_regression(n_samples=500, n_features=5, random_state=0)
    params = dict(early_stopping=False, device="cpu", random_state=0, subsample=0.7)
    at_once = GradientBoostingRegressor(n_estimators=10, **params).fit(X, y)
    warm = GradientBoostingRegressor(n_estimators=4, warm_start=True, **params).fit(X, y)
    warm.set_params(n_estimators=10).fit(X, y)
    np.testing.assert_array_equal(warm.predict(X), at_once.predict(X))


def test_subsample_draws_rows_on_the_device_with_the_hash_rng():
    X, y = make_regression(n_samples=400, n_features=4, random_state=0)
    model = GradientBoostingRegressor(n_estimators=3, subsample=0.5, early_stopping=False, random_state=0, device="cpu")
    model.fit(X, y)
    backend = get_backend("cpu")
    for iteration, tree in enumerate(model.trees_):
        drawn = backend.uniform_per_row(model._seed, PURPOSE_SUBSAMPLE, iteration, X.shape[0]) < 0.5
        assert tree.n_node_samples[0] == drawn.sum()
    full = GradientBoostingRegressor(n_estimators=3, early_stopping=False, random_state=0, device="cpu").fit(X, y)
    assert full.trees_[0].n_node_samples[0] == 400


def test_growth_rules():
    X, signal, rng = integer_data(1500)
    y = signal + rng.normal(size=signal.shape[0])
    lossguide = GradientBoostingRegressor(n_estimators=3, max_leaf_nodes=7, early_stopping=False, device="cpu")
    assert all(tree.n_leaves <= 7 for tree in lossguide.fit(X, y).trees_)
    depthwise = GradientBoostingRegressor(
        n_estimators=3, grow_policy="depthwise", max_depth=6, min_samples_leaf=5, early_stopping=False, device="cpu"
    ).fit(X, y)
    assert all(tree.max_depth <= 6 for tree in depthwise.trees_)
    assert max(tree.n_leaves for tree in depthwise.trees_) > 31  # max_leaf_nodes applies to lossguide only
    heavy = GradientBoostingRegressor(
        n_estimators=2, min_child_weight=100.0, min_samples_leaf=1, early_stopping=False, device="cpu"
    ).fit(X, y)
    for tree in heavy.trees_:  # hessian 1 per row: every leaf holds >= 100 rows
        assert tree.weighted_n_node_samples[tree.children_left < 0].min() >= 100
    # The gain G_L^2/H_L + G_R^2/H_R - G^2/H of every split, from the nodes' W * impurity = -G^2/H.
    free = GradientBoostingRegressor(n_estimators=2, early_stopping=False, device="cpu").fit(X, y)
    gained = GradientBoostingRegressor(n_estimators=2, min_split_gain=50.0, early_stopping=False, device="cpu")
    for tree, free_tree in zip(gained.fit(X, y).trees_, free.trees_):
        internal = np.flatnonzero(tree.children_left >= 0)
        weighted = tree.impurity * tree.weighted_n_node_samples
        gain = weighted[internal] - weighted[tree.children_left[internal]] - weighted[tree.children_right[internal]]
        assert 0 < gain.size < free_tree.n_leaves - 1 and gain.min() >= 50.0


def test_l1_regularization_shrinks_leaves_by_a_soft_threshold():
    X, signal, rng = integer_data(600)
    y = signal + rng.normal(size=signal.shape[0])
    l1, l2 = 20.0, 3.0
    model = GradientBoostingRegressor(
        n_estimators=1, learning_rate=1.0, l1_regularization=l1, l2_regularization=l2, max_leaf_nodes=6,
        early_stopping=False, device="cpu",
    ).fit(X, y)
    tree = model.trees_[0]
    leaves = tree.apply(X.astype(np.float32), get_backend("cpu"))
    gradient = model.baseline_[0] - y  # squared error, hessian 1
    for leaf in np.unique(leaves):
        G, H = gradient[leaves == leaf].sum(), np.sum(leaves == leaf)
        expected = -np.sign(G) * max(abs(G) - l1, 0.0) / (H + l2)  # XGBoost's ThresholdL1
        assert tree.value[leaf, 0, 0] == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_column_subsampling_per_tree_and_per_node():
    X, signal, rng = integer_data(800)
    X = np.hstack([X, rng.integers(0, 16, size=(800, 4))])  # 10 features
    y = signal + rng.normal(size=signal.shape[0])
    model = GradientBoostingRegressor(
        n_estimators=6, colsample_bytree=0.5, colsample_bynode=0.6, early_stopping=False, random_state=0,
        device="cpu",
    ).fit(X, y)
    subsets = [frozenset(tree.feature[tree.children_left >= 0]) for tree in model.trees_]
    assert all(len(subset) <= 5 for subset in subsets) and len(set(subsets)) > 1
    again = GradientBoostingRegressor(**model.get_params()).fit(X, y)
    np.testing.assert_array_equal(again.predict(X), model.predict(X))


def test_same_seed_same_model():
    X, y = make_classification(n_samples=1000, n_features=6, random_state=1)
    first, second = (
        GradientBoostingClassifier(n_estimators=10, subsample=0.8, random_state=3, device="cpu").fit(X, y) for _ in "ab"
    )
    np.testing.assert_array_equal(first.decision_function(X), second.decision_function(X))


def test_classes_of_a_round_grow_in_one_batch(monkeypatch):
    """One grower per round grows the classes' trees, keyed by their global index (column subsets);
    the model is the same from run to run."""
    X, y = make_classification(n_samples=600, n_features=8, n_informative=5, n_classes=3, random_state=0)
    batches = []
    grow = BinnedTraining.grow

    def recording_grow(training, *args, tree_offsets=None, first_tree=0, **kwargs):
        batches.append((tree_offsets.shape[0] - 1, first_tree))
        return grow(training, *args, tree_offsets=tree_offsets, first_tree=first_tree, **kwargs)

    monkeypatch.setattr(BinnedTraining, "grow", recording_grow)
    params = dict(n_estimators=3, colsample_bytree=0.5, subsample=0.8, early_stopping=False, random_state=0,
                  device="cpu")
    model = GradientBoostingClassifier(**params).fit(X, y)
    assert batches == [(3, 0), (3, 3), (3, 6)]
    subsets = tree_feature_subsets(get_backend("cpu"), model._seed, 0, 9, 8, 0.5)
    for tree, subset in zip(model.trees_, subsets, strict=True):
        assert subset[tree.feature[tree.children_left >= 0]].all()
    again = GradientBoostingClassifier(**params).fit(X, y)
    np.testing.assert_array_equal(again.decision_function(X), model.decision_function(X))


def squared_error_objective(y_true, raw):
    """A custom objective: half squared error's gradient and hessian."""
    return raw - y_true, np.ones_like(raw)


CUDA_CASES = [
    (GradientBoostingRegressor, loss, "real") for loss in ("squared_error", "absolute_error", "huber", "quantile")
] + [
    (GradientBoostingRegressor, "poisson", "count"), (GradientBoostingRegressor, "gamma", "positive"),
    (GradientBoostingClassifier, "log_loss", "binary"), (GradientBoostingClassifier, "exponential", "binary"),
    (GradientBoostingClassifier, "log_loss", "3"), (GradientBoostingRegressor, squared_error_objective, "real"),
]


@pytest.mark.parametrize("Estimator, loss, target", CUDA_CASES)
def test_cuda_backend_boosts_the_same_model(Estimator, loss, target):
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(30, 3)), 1)
    X[rng.random(X.shape) < 0.1] = np.nan
    signal = np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1])
    y = {
        "real": signal, "count": np.round(np.exp(signal)), "positive": np.exp(signal),
        "binary": (signal > 0).astype(int), "3": np.digitize(signal, [-0.5, 0.5]),
    }[target]
    params = dict(loss=loss, n_estimators=2, max_leaf_nodes=3, min_samples_leaf=2, max_bins=16, subsample=0.8,
                  l1_regularization=0.1, colsample_bytree=0.67, early_stopping=False, random_state=0)
    cpu = Estimator(device="cpu", **params).fit(X, y)
    cuda = Estimator(device="cuda", **params).fit(X, y)
    assert cuda.device_ == "cuda"
    for cpu_tree, cuda_tree in zip(cpu.trees_, cuda.trees_, strict=True):
        np.testing.assert_array_equal(cpu_tree.feature, cuda_tree.feature)
        np.testing.assert_array_equal(cpu_tree.value, cuda_tree.value)
    np.testing.assert_array_equal(cpu.predict(X), cuda.predict(X))


@pytest.mark.parametrize("layout", ["complete", "nodes"])
def test_predicted_raw_scores_are_the_staged_sums_bit_for_bit(layout, monkeypatch):
    """Both layouts of ``Backend.predict_raw`` (complete trees, node arrays for deeper trees) add the
    trees in training's order: the last staged scores (training's sums) equal them exactly."""
    if layout == "nodes":
        monkeypatch.setattr("gpuforest.tree.pack_complete_forest", lambda trees: None)
    X, y = make_classification(n_samples=700, n_features=6, n_informative=4, n_classes=3, random_state=0)
    X[::7, 1] = np.nan
    model = GradientBoostingClassifier(
        n_estimators=5, grow_policy="depthwise", max_depth=5, early_stopping=False, device="cpu"
    ).fit(X, y)
    forest = model._packed_trees().raw_forest()
    assert forest.raw_kernel == {"complete": "predict_raw_complete", "nodes": "predict_raw"}[layout]
    np.testing.assert_array_equal(list(model.staged_decision_function(X))[-1], model.decision_function(X))


# --- iteration_range ------------------------------------------------------------------


def summed_rounds(model, X, begin, end):
    """Naive raw scores: the baseline plus every tree of rounds begin..end-1, tree by tree."""
    n_per_round = model.baseline_.shape[0]
    raw = np.tile(model.baseline_, (X.shape[0], 1))
    for index in range(begin * n_per_round, end * n_per_round):
        tree = model.trees_[index]
        raw[:, index % n_per_round] += tree.value[tree.apply(X.astype(np.float32), get_backend("cpu")), 0, 0]
    return raw


def small_boosting(estimator_class, **params):
    defaults = dict(n_estimators=6, max_leaf_nodes=4, min_samples_leaf=5, device="cpu", random_state=0)
    return estimator_class(**{**defaults, **params})


@pytest.mark.parametrize("begin, end", [(0, 3), (2, 5), (1, 6)])
def test_regressor_iteration_range_sums_those_rounds_trees(begin, end):
    X, signal, rng = integer_data(200)
    model = small_boosting(GradientBoostingRegressor, early_stopping=False).fit(X, signal)
    np.testing.assert_allclose(model.predict(X, iteration_range=(begin, end)), summed_rounds(model, X, begin, end)[:, 0],
                               rtol=1e-12)
    if begin == 0:
        np.testing.assert_array_equal(model.predict(X, iteration_range=(0, end)), list(model.staged_predict(X))[end - 1])


def test_classifier_iteration_range_in_every_prediction_method():
    X, y = load_digits(n_class=3, return_X_y=True)
    X, y = X[:150], y[:150]
    model = small_boosting(GradientBoostingClassifier, early_stopping=False).fit(X, y)
    np.testing.assert_allclose(model.decision_function(X, iteration_range=(1, 4)), summed_rounds(model, X, 1, 4),
                               rtol=1e-12)
    staged = [list(stages)[2] for stages in (
        model.staged_decision_function(X), model.staged_predict_proba(X), model.staged_predict(X)
    )]
    for method, expected in zip((model.decision_function, model.predict_proba, model.predict), staged):
        np.testing.assert_array_equal(method(X, iteration_range=(0, 3)), expected)
    np.testing.assert_array_equal(model.predict_proba(X, iteration_range=(0, 0)), model.predict_proba(X))


def test_iteration_range_of_the_best_iteration_is_the_best_model():
    X, signal, rng = integer_data(300)
    X_val, y_val = X[200:], signal[200:] + rng.normal(size=100)
    model = small_boosting(GradientBoostingRegressor, n_estimators=60, learning_rate=0.5, n_iter_no_change=3)
    model.fit(X[:200], signal[:200] + rng.normal(size=200), eval_set=(X_val, y_val))
    assert 1 <= model.best_iteration_ < model.n_iter_
    best = model.predict(X_val, iteration_range=(0, model.best_iteration_))
    assert 0.5 * np.mean((y_val - best) ** 2) == pytest.approx(-model.validation_score_[model.best_iteration_])


def test_bad_iteration_ranges_are_refused():
    X, signal, _ = integer_data(100)
    model = small_boosting(GradientBoostingRegressor, early_stopping=False).fit(X, signal)
    for iteration_range in [(0, 7), (3, 3), (-1, 2), (0.5, 2), (1,), "ab", 3]:
        with pytest.raises(ValueError, match="iteration_range must be a pair"):
            model.predict(X, iteration_range=iteration_range)
