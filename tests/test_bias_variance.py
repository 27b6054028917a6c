"""Bias-variance decompositions against naive per-row computations over the same bootstrap draws."""

from collections import Counter

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_friedman1
from sklearn.ensemble import BaggingRegressor
from sklearn.tree import DecisionTreeClassifier as SklearnTreeClassifier
from sklearn.tree import DecisionTreeRegressor as SklearnTreeRegressor

from gpuforest.bias_variance import bias_variance_decomposition
from gpuforest.resampling import bootstrap_counts

X_REG, Y_REG = make_friedman1(n_samples=120, noise=1.0, random_state=0)
X_CLASS, Y_CLASS = make_classification(n_samples=120, n_features=5, n_classes=3, n_informative=3, random_state=0)


def naive_predictions(estimator, X, y, n_rounds, random_state):
    """Each round's test predictions, fitting on the rows each bootstrap draw picks."""
    predictions = []
    for counts in bootstrap_counts(80, n_rounds, random_state=random_state):
        drawn = [row for row in range(80) for _ in range(counts[row])]
        predictions.append(estimator.fit(X[:80][drawn], y[:80][drawn]).predict(X[80:]))
    return np.array(predictions)


def test_squared_error_terms_equal_a_naive_computation():
    tree = SklearnTreeRegressor(max_depth=4, random_state=0)
    result = bias_variance_decomposition(tree, X_REG[:80], Y_REG[:80], X_REG[80:], Y_REG[80:], n_rounds=10,
                                         random_state=2)
    predictions = naive_predictions(tree, X_REG, Y_REG, 10, 2)
    np.testing.assert_array_equal(result.predictions, predictions)
    y = Y_REG[80:]
    bias = np.mean([(np.mean(predictions[:, j]) - y[j]) ** 2 for j in range(40)])
    variance = np.mean([np.var(predictions[:, j]) for j in range(40)])
    assert result.bias == pytest.approx(bias, rel=1e-12)
    assert result.variance == pytest.approx(variance, rel=1e-12) == result.net_variance
    assert result.loss == pytest.approx(np.mean((predictions - y) ** 2), rel=1e-12)
    assert result.loss == pytest.approx(result.bias + result.variance, rel=1e-12)


def test_zero_one_terms_equal_domingos_per_row():
    tree = SklearnTreeClassifier(max_depth=3, random_state=0)
    result = bias_variance_decomposition(tree, X_CLASS[:80], Y_CLASS[:80], X_CLASS[80:], Y_CLASS[80:], loss="0-1",
                                         n_rounds=10, random_state=5)
    predictions = naive_predictions(tree, X_CLASS, Y_CLASS, 10, 5)
    losses, biases, variances, net = [], [], [], []
    for j, truth in enumerate(Y_CLASS[80:]):
        column = list(predictions[:, j])
        counter = Counter(column)
        main = min(counter, key=lambda label: (-counter[label], label))
        off_main = [p for p in column if p != main]
        variance = len(off_main) / len(column)
        if main == truth:
            factor = 1.0
        else:
            factor = -(sum(p == truth for p in off_main) / len(off_main)) if off_main else 0.0
        losses.append(np.mean([p != truth for p in column]))
        biases.append(float(main != truth))
        variances.append(variance)
        net.append(factor * variance)
    assert (result.loss, result.bias) == (pytest.approx(np.mean(losses)), pytest.approx(np.mean(biases)))
    assert (result.variance, result.net_variance) == (pytest.approx(np.mean(variances)), pytest.approx(np.mean(net)))
    assert result.loss == pytest.approx(result.bias + result.net_variance, rel=1e-12)
    assert result.variance > 0


def test_bagging_reduces_the_variance_of_a_tree():
    """Breiman 1996: averaging bootstrap trees keeps the bias and cuts the variance."""
    kwargs = dict(X_train=X_REG[:80], y_train=Y_REG[:80], X_test=X_REG[80:], y_test=Y_REG[80:], n_rounds=8,
                  random_state=0)
    tree = bias_variance_decomposition(SklearnTreeRegressor(random_state=0), **kwargs)
    forest = bias_variance_decomposition(BaggingRegressor(SklearnTreeRegressor(), n_estimators=20, random_state=0),
                                         **kwargs)
    assert forest.variance < 0.5 * tree.variance
    assert forest.loss < tree.loss


@pytest.mark.parametrize("kwargs, message", [
    ({"loss": "hinge"}, "loss must be"), ({"n_rounds": 1}, "n_rounds"), ({"y_test": Y_REG[:3]}, "same number of rows"),
])
def test_bad_input_is_refused(kwargs, message):
    arguments = dict(X_train=X_REG[:80], y_train=Y_REG[:80], X_test=X_REG[80:], y_test=Y_REG[80:])
    with pytest.raises(ValueError, match=message):
        bias_variance_decomposition(SklearnTreeRegressor(), **{**arguments, **kwargs})
