"""plotting: the artists against the estimators' numbers and the benchmark file's."""

import json

import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor as SklearnForest
from sklearn.exceptions import NotFittedError

import gpuforest
from gpuforest.plotting import plot_benchmark, plot_importance, plot_learning_curve

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
pyplot = pytest.importorskip("matplotlib.pyplot")

RNG = np.random.default_rng(0)
X = RNG.normal(size=(120, 4))
Y = 3 * X[:, 0] + X[:, 2] + RNG.normal(0, 0.1, 120)


@pytest.fixture
def ax():
    figure, axes = pyplot.subplots()
    yield axes
    pyplot.close(figure)


@pytest.mark.parametrize("estimator", [
    gpuforest.RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0, device="cpu"),
    SklearnForest(n_estimators=3, max_depth=3, random_state=0),
], ids=["gpuforest", "scikit-learn"])
def test_plot_importance_bars_are_the_importances(estimator, ax):
    estimator.fit(X, Y)
    plot_importance(estimator, ax=ax, feature_names=["a", "b", "c", "d"], max_num_features=3)
    expected = np.sort(estimator.feature_importances_)[::-1][:3]
    widths = [bar.get_width() for bar in ax.patches]
    np.testing.assert_array_equal(widths[::-1], expected)  # the largest on top
    labels = [label.get_text() for label in ax.get_yticklabels()][::-1]
    assert labels == [["a", "b", "c", "d"][j] for j in np.argsort(-estimator.feature_importances_)[:3]]


def test_plot_importance_refuses_what_it_cannot_draw(ax):
    with pytest.raises(NotFittedError):
        plot_importance(gpuforest.RandomForestRegressor(), ax=ax)
    with pytest.raises(TypeError, match="no feature_importances_"):
        plot_importance(gpuforest.VotingRegressor([]), ax=ax)
    forest = gpuforest.RandomForestRegressor(n_estimators=2, max_depth=2, device="cpu").fit(X, Y)
    with pytest.raises(ValueError, match="feature_names must contain 4 elements, got 2"):
        plot_importance(forest, ax=ax, feature_names=["a", "b"])


def test_plot_learning_curve_lines_are_the_scores(ax):
    booster = gpuforest.GradientBoostingRegressor(
        n_estimators=3, max_depth=2, min_samples_leaf=5, n_iter_no_change=20, device="cpu",
    ).fit(X[:90], Y[:90], eval_set=(X[90:], Y[90:]))
    plot_learning_curve(booster, ax=ax)
    training, validation = ax.get_lines()[:2]
    np.testing.assert_array_equal(training.get_ydata(), booster.train_score_)
    np.testing.assert_array_equal(validation.get_xdata(), np.arange(booster.n_iter_ + 1))
    # Each validation score is the negative squared error loss (y - f)^2 / 2 of the round's predictions.
    staged = [np.full(30, Y[:90].mean())] + list(booster.staged_predict(X[90:]))
    np.testing.assert_allclose(validation.get_ydata(), [-np.mean((Y[90:] - f) ** 2) / 2 for f in staged], rtol=1e-6)
    assert ax.get_lines()[2].get_xdata()[0] == booster.best_iteration_
    quiet = gpuforest.GradientBoostingRegressor(n_estimators=2, early_stopping=False, device="cpu").fit(X, Y)
    with pytest.raises(ValueError, match="recorded no scores"):
        plot_learning_curve(quiet, ax=ax)
    with pytest.raises(TypeError, match="gradient boosting"):
        plot_learning_curve(gpuforest.RandomForestRegressor(), ax=ax)


def test_plot_benchmark_bars_are_the_fit_times(tmp_path):
    comparison = {"task": "forest", "n_samples": 1000, "n_features": 28, "device": "cpu",
                  "rows": [{"library": "gpuforest", "fit_s": 1.5}, {"library": "scikit-learn", "fit_s": 12.0},
                           {"library": "xgboost", "error": "not installed"}]}
    path = tmp_path / "forest.json"
    path.write_text(json.dumps({"date": "2026-11-27", "results": [comparison, dict(comparison, n_samples=5)]}))
    axes = plot_benchmark(str(path))
    assert len(axes) == 2
    assert [bar.get_height() for bar in axes[0].patches] == [1.5, 12.0]
    assert [label.get_text() for label in axes[0].get_xticklabels()] == ["gpuforest", "scikit-learn"]
    assert axes[1].get_title() == "forest: 5 x 28, cpu"
    with pytest.raises(ValueError, match="no benchmark comparison"):
        plot_benchmark({"results": {"datasets": []}})
    pyplot.close("all")


def test_plot_margins_draws_the_margins_cdf_and_adaboost_bound(ax):
    X_class, y_class = X[:60], (Y[:60] > 0).astype(int)
    model = gpuforest.AdaBoostClassifier(n_estimators=5, random_state=0, device="cpu").fit(X_class, y_class)
    gpuforest.plot_margins(model, X_class, y_class, ax=ax)
    step, bound = ax.get_lines()
    np.testing.assert_array_equal(step.get_xdata(), np.sort(model.margins(X_class, y_class)))
    np.testing.assert_array_equal(step.get_ydata(), np.arange(1, 61) / 60)
    np.testing.assert_allclose(bound.get_ydata(), np.minimum(model.margin_bound(bound.get_xdata()), 1.0))
    with pytest.raises(TypeError, match="no margins"):
        gpuforest.plot_margins(gpuforest.DecisionTreeClassifier().fit(X_class, y_class), X_class, y_class)
