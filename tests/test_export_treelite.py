"""to_treelite: Treelite's own predictions (treelite.gtil) against the estimators'."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

import gpuforest
from gpuforest.export_treelite import to_treelite
from gpuforest.tree import CATEGORICAL, MULTIWAY

treelite = pytest.importorskip("treelite", minversion="4")

RNG = np.random.default_rng(0)
X = RNG.normal(size=(150, 4)).astype(np.float32)
X[RNG.random(X.shape) < 0.1] = np.nan  # missing values take each split's default direction
X[:, 0] = RNG.integers(0, 6, 150)  # category codes for the categorical cases
Y_CLASS = (np.nan_to_num(X[:, 1]) > 0).astype(int) + (X[:, 0] > 2)
Y_VALUE = np.nan_to_num(X[:, 1]) + X[:, 0] + RNG.normal(size=150)
# Rows to predict: unseen codes (7), a negative and a too large value (no code) and NaN in the categorical column.
X_TEST = np.vstack([X[:40], X[:4]])
X_TEST[-4:, 0] = [7, -1, 1000, np.nan]
SMALL = dict(n_estimators=3, max_depth=3, random_state=0, device="cpu")


def _gtil(model, X_rows, **kwargs):
    return treelite.gtil.predict(model, X_rows.astype(np.float64), **kwargs).reshape(X_rows.shape[0], -1)


@pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores")
@pytest.mark.parametrize("make, target, method", [
    (lambda: gpuforest.RandomForestClassifier(**SMALL), Y_CLASS, "predict_proba"),
    (lambda: gpuforest.RandomForestClassifier(voting="weighted", **SMALL), Y_CLASS, "predict_proba"),
    (lambda: gpuforest.ExtraTreesClassifier(categorical_features=[0], **SMALL), Y_CLASS, "predict_proba"),
    (lambda: gpuforest.RandomForestRegressor(categorical_features=[0], **SMALL), Y_VALUE, "predict"),
    (lambda: gpuforest.GradientBoostingRegressor(loss="poisson", categorical_features=[0], **SMALL), np.abs(Y_VALUE),
     "predict"),
    (lambda: gpuforest.GradientBoostingClassifier(**SMALL), Y_CLASS > 0, "predict_proba"),
    (lambda: gpuforest.GradientBoostingClassifier(loss="exponential", **SMALL), Y_CLASS > 0, "predict_proba"),
    (lambda: gpuforest.GradientBoostingClassifier(categorical_features=[0], **SMALL), Y_CLASS, "predict_proba"),
], ids=["forest_soft", "forest_weighted", "extra_trees_categorical", "forest_regressor_categorical",
        "boosting_poisson_categorical", "boosting_binary", "boosting_exponential", "boosting_multiclass_categorical"])
def test_treelite_predicts_as_the_estimator(make, target, method):
    estimator = make().fit(X, target)
    if estimator.categorical_features is not None:
        assert any(np.any(tree.split_type == CATEGORICAL) for tree in estimator.trees_)
    model = estimator.to_treelite()
    ours = getattr(estimator, method)(X_TEST).reshape(X_TEST.shape[0], -1)
    theirs = _gtil(model, X_TEST)
    # A binary classifier's Treelite model gives the positive class's probability only.
    np.testing.assert_allclose(theirs, ours[:, -theirs.shape[1]:], rtol=0, atol=1e-6)
    assert model.num_tree == len(estimator.trees_)
    if hasattr(estimator, "decision_function") and not hasattr(estimator, "voting"):
        np.testing.assert_allclose(
            _gtil(model, X_TEST, pred_margin=True), estimator.decision_function(X_TEST).reshape(X_TEST.shape[0], -1),
            rtol=0, atol=1e-6,
        )


def test_what_treelite_cannot_express_is_refused():
    forest = gpuforest.RandomForestClassifier(**SMALL).fit(X, Y_CLASS)
    forest.trees_[1].split_type[0] = MULTIWAY
    with pytest.raises(ValueError, match="Tree 1 has multiway splits"):
        to_treelite(forest)
    forest.trees_[1].missing_fractional = True
    with pytest.raises(ValueError, match="Tree 1 sends missing values down every branch"):
        to_treelite(forest)
    with pytest.raises(TypeError, match="got DecisionTreeClassifier"):
        to_treelite(gpuforest.DecisionTreeClassifier().fit(X, Y_CLASS))
    with pytest.raises(NotFittedError):
        gpuforest.GradientBoostingRegressor().to_treelite()
