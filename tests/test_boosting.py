"""Gradient boosting (first version): agreement with scikit-learn's HistGradientBoosting.

Both grow best-first trees of 31 leaves with min_samples_leaf=20 on 255 quantile bins and
Newton leaf values, so test scores agree closely (measured when written: R^2 0.9772 vs
0.9774, AUC 0.9609 vs 0.9608, digits accuracy 0.953 vs 0.960 at 50 rounds).
"""

import numpy as np
import pytest
from sklearn.datasets import load_digits, make_classification, make_regression
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

from gpuforest import GradientBoostingClassifier, GradientBoostingRegressor


def split(X, y):
    return train_test_split(X, y, random_state=0)


def test_regression_matches_hist_gradient_boosting():
    X_train, X_test, y_train, y_test = split(*make_regression(n_samples=4000, n_features=8, noise=10, random_state=0))
    ours = GradientBoostingRegressor(n_estimators=60, device="cpu").fit(X_train, y_train)
    theirs = HistGradientBoostingRegressor(max_iter=60, early_stopping=False).fit(X_train, y_train)
    assert abs(ours.score(X_test, y_test) - theirs.score(X_test, y_test)) < 0.01
    # The baseline is the weighted mean, and the first round moves towards y.
    assert ours.baseline_[0] == pytest.approx(np.mean(y_train))


def test_binary_log_loss_matches_hist_gradient_boosting():
    X_train, X_test, y_train, y_test = split(*make_classification(n_samples=4000, n_features=10, random_state=0))
    ours = GradientBoostingClassifier(n_estimators=60, device="cpu").fit(X_train, y_train)
    theirs = HistGradientBoostingClassifier(max_iter=60, early_stopping=False).fit(X_train, y_train)
    our_auc = roc_auc_score(y_test, ours.predict_proba(X_test)[:, 1])
    their_auc = roc_auc_score(y_test, theirs.predict_proba(X_test)[:, 1])
    assert abs(our_auc - their_auc) < 0.005
    # predict_proba is the sigmoid of decision_function.
    np.testing.assert_allclose(ours.predict_proba(X_test)[:, 1], 1 / (1 + np.exp(-ours.decision_function(X_test))))


def test_multinomial_log_loss_matches_hist_gradient_boosting():
    X_train, X_test, y_train, y_test = split(*load_digits(return_X_y=True))
    ours = GradientBoostingClassifier(n_estimators=20, device="cpu").fit(X_train, y_train)
    theirs = HistGradientBoostingClassifier(max_iter=20, early_stopping=False).fit(X_train, y_train)
    assert len(ours.trees_) == 20 * 10
    assert abs(ours.score(X_test, y_test) - theirs.score(X_test, y_test)) < 0.03
    np.testing.assert_allclose(ours.predict_proba(X_test).sum(axis=1), 1.0)


def test_same_seed_same_model():
    X, y = make_classification(n_samples=1000, n_features=6, random_state=1)
    first, second = (GradientBoostingClassifier(n_estimators=10, random_state=3, device="cpu").fit(X, y) for _ in "ab")
    np.testing.assert_array_equal(first.decision_function(X), second.decision_function(X))


@pytest.mark.parametrize("Estimator, target", [
    (GradientBoostingRegressor, "real"), (GradientBoostingClassifier, "binary"), (GradientBoostingClassifier, "3"),
])
def test_cuda_backend_boosts_the_same_model(Estimator, target):
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(30, 3)), 1)
    X[rng.random(X.shape) < 0.1] = np.nan
    signal = np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1])
    y = {"real": signal, "binary": (signal > 0).astype(int), "3": np.digitize(signal, [-0.5, 0.5])}[target]
    params = dict(n_estimators=2, max_leaf_nodes=3, min_samples_leaf=2, max_bins=16, random_state=0)
    cpu = Estimator(device="cpu", **params).fit(X, y)
    cuda = Estimator(device="cuda", **params).fit(X, y)
    assert cuda.device_ == "cuda"
    for cpu_tree, cuda_tree in zip(cpu.trees_, cuda.trees_):
        np.testing.assert_array_equal(cpu_tree.feature, cuda_tree.feature)
        np.testing.assert_array_equal(cpu_tree.value, cuda_tree.value)
    np.testing.assert_array_equal(cpu.predict(X), cuda.predict(X))
