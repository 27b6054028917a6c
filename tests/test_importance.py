"""``importance_type`` ("gain", "split", "cover") and ``get_score`` of trees, forests and boosting.

References: split counts and covers summed in the test from ``trees_to_dataframe`` (XGBoost's columns: one row
per node, ``Feature`` "Leaf" at leaves, ``Cover`` the node's training weight); scikit-learn's tree importances
for "gain".
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeRegressor as SklearnDecisionTreeRegressor

import gpuforest


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4))
    y = (X[:, 0] + X[:, 1] > 0).astype(int) + (X[:, 2] > 1)
    return X, y


MODELS = [
    lambda importance_type: gpuforest.DecisionTreeRegressor(max_depth=3, importance_type=importance_type),
    lambda importance_type: gpuforest.DecisionTreeClassifier(max_depth=3, importance_type=importance_type),
    lambda importance_type: gpuforest.RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0,
                                                             importance_type=importance_type),
    lambda importance_type: gpuforest.ExtraTreesRegressor(n_estimators=4, max_depth=3, random_state=0,
                                                          importance_type=importance_type),
    lambda importance_type: gpuforest.GradientBoostingClassifier(n_estimators=3, max_depth=2,
                                                                 importance_type=importance_type),
]


@pytest.mark.parametrize("make_model", MODELS)
def test_split_counts_and_cover_equal_the_node_table(make_model):
    X, y = _data()
    model = make_model("split").fit(pd.DataFrame(X, columns=["a", "b", "c", "d"]), y)
    nodes = gpuforest.trees_to_dataframe(model, feature_names=["a", "b", "c", "d"])
    grouped = nodes[nodes["Feature"] != "Leaf"].groupby("Feature")
    for importance_type, expected in (("split", grouped.size().to_dict()), ("cover", grouped["Cover"].sum().to_dict())):
        model.set_params(importance_type=importance_type)
        score = model.get_score()
        assert score.keys() == expected.keys()
        np.testing.assert_allclose([score[name] for name in expected], list(expected.values()), rtol=1e-12)
        totals = np.array([expected.get(name, 0.0) for name in ["a", "b", "c", "d"]])
        np.testing.assert_allclose(model.feature_importances_, totals / totals.sum(), rtol=1e-12)


def test_gain_is_the_default_and_sklearns():
    X, y = _data()
    y = y + X[:, 3]
    ours = gpuforest.DecisionTreeRegressor(max_depth=3).fit(X, y)
    theirs = SklearnDecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X))  # the same tree
    np.testing.assert_allclose(ours.feature_importances_, theirs.feature_importances_, rtol=1e-10)
    gains = ours.get_score("gain")
    np.testing.assert_allclose([gains.get(f"f{feature}", 0.0) for feature in range(4)],
                               theirs.feature_importances_ * np.sum(list(gains.values())), rtol=1e-10)
    split = gpuforest.DecisionTreeRegressor(max_depth=3, importance_type="split").fit(X, y)
    assert set(split.get_score()) == {f"f{feature}" for feature in np.flatnonzero(theirs.feature_importances_)}


def test_bad_importance_type_is_refused():
    X, y = _data()
    with pytest.raises(ValueError, match="importance_type"):
        gpuforest.GradientBoostingRegressor(importance_type="weight").fit(X, y)
    model = gpuforest.DecisionTreeClassifier(max_depth=2).fit(X, y)
    with pytest.raises(ValueError, match="importance_type must be one of"):
        model.get_score("total_gain")
