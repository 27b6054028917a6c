"""n_estimators="auto": out-of-bag errors against a naive computation, the kept trees a fixed-size fit's prefix."""

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

from gpuforest import ExtraTreesRegressor, RandomForestClassifier, RandomForestRegressor
from gpuforest.auto_estimators import AUTO_STEP_TREES
from gpuforest.resampling import bootstrap_counts

X_CLASS, Y_CLASS = make_classification(n_samples=80, n_features=5, flip_y=0.2, random_state=0)
X_REG, Y_REG = make_regression(n_samples=80, n_features=4, noise=20.0, random_state=0)
TREE_ARRAYS = ("children_left", "children_right", "feature", "threshold", "value", "n_node_samples")


def naive_oob_errors(forest, X, y, n_steps, classifier):
    """Out-of-bag error of the first 10, 20, ... trees, from each tree's draws and predictions."""
    counts = bootstrap_counts(X.shape[0], n_steps * AUTO_STEP_TREES, random_state=forest.random_state)
    predict = (lambda member: member.predict_proba(X)) if classifier else (lambda member: member.predict(X)[:, None])
    values = np.array([predict(member) for member in forest.estimators_[:n_steps * AUTO_STEP_TREES]])
    errors = []
    for step in range(1, n_steps + 1):
        trees = slice(0, step * AUTO_STEP_TREES)
        out = counts[trees] == 0
        scored = out.any(axis=0)
        mean = np.einsum("trv,tr->rv", values[trees], out)[scored] / out.sum(axis=0)[scored, None]
        if classifier:
            errors.append(np.mean(forest.classes_[mean.argmax(axis=1)] != y[scored]))
        else:
            errors.append(np.mean((mean[:, 0] - y[scored]) ** 2))
    return np.array(errors)


def naive_stop(errors, n_iter_no_change, tol):
    """Trees kept and steps taken by the rule: stop after n_iter_no_change steps without a gain above tol."""
    best, best_step, waited = np.inf, 0, 0
    for step, error in enumerate(errors, start=1):
        if error < best - tol:
            best, best_step, waited = error, step, 0
        else:
            waited += 1
        if waited == n_iter_no_change:
            return best_step * AUTO_STEP_TREES, step
    return best_step * AUTO_STEP_TREES, len(errors)


@pytest.mark.parametrize("Forest, X, y, patience", [
    (RandomForestClassifier, X_CLASS, Y_CLASS, 2), (RandomForestRegressor, X_REG, Y_REG, 1),
])
def test_auto_keeps_the_prefix_of_a_fixed_size_fit_where_oob_error_stops(Forest, X, y, patience):
    params = dict(max_depth=3, random_state=3, device="cpu")
    auto = Forest(n_estimators="auto", n_iter_no_change=patience, tol=0.0, **params).fit(X, y)
    n_steps = len(auto.oob_errors_)
    fixed = Forest(n_estimators=n_steps * AUTO_STEP_TREES, **params).fit(X, y)
    expected_errors = naive_oob_errors(fixed, X, y, n_steps, Forest is RandomForestClassifier)
    np.testing.assert_allclose(auto.oob_errors_, expected_errors, rtol=1e-12)
    assert (auto.n_estimators_, n_steps) == naive_stop(expected_errors, patience, 0.0)
    assert len(auto.trees_) == auto.n_estimators_
    for kept, grown in zip(auto.trees_, fixed.trees_):
        for name in TREE_ARRAYS:
            np.testing.assert_array_equal(getattr(kept, name), getattr(grown, name), err_msg=name)


def test_auto_refuses_without_bootstrap_or_with_warm_start():
    with pytest.raises(ValueError, match="bootstrap=True"):
        ExtraTreesRegressor(n_estimators="auto", device="cpu").fit(X_REG, Y_REG)
    with pytest.raises(ValueError, match="warm_start=False"):
        RandomForestRegressor(n_estimators="auto", warm_start=True, device="cpu").fit(X_REG, Y_REG)
