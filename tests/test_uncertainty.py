"""Forest prediction variances against a brute-force computation from the trees' bootstrap counts."""

import copy

import numpy as np
import pytest

from gpuforest import RandomForestClassifier, RandomForestRegressor
from gpuforest.resampling import bootstrap_counts
from gpuforest.uncertainty import prediction_variance

RNG = np.random.default_rng(0)
X = RNG.normal(size=(30, 3))
Y = X[:, 0] + np.sin(2 * X[:, 1]) + RNG.normal(0, 0.3, 30)
X_TEST = RNG.normal(size=(7, 3))


def tree_counts(forest):
    """The trees' draw counts (trees, training rows), checked against each tree's root weight."""
    counts = bootstrap_counts(X.shape[0], forest.n_estimators, random_state=forest.random_state)
    roots = [member.tree_.weighted_n_node_samples[0] for member in forest.estimators_]
    np.testing.assert_array_equal(roots, counts.sum(axis=1))
    return counts


def brute_force(counts, predictions, method, bias_correction):
    """Wager, Hastie and Efron 2014, eqs. (5)-(7), one training row and one prediction at a time."""
    n_trees, n_training = counts.shape
    variance = np.zeros(predictions.shape[1:])
    for index in np.ndindex(*predictions.shape[1:]):
        t = predictions[(slice(None),) + index]
        t_mean = t.mean()
        total = 0.0
        for i in range(n_training):
            if method == "infinitesimal_jackknife":
                total += np.mean((counts[:, i] - counts[:, i].mean()) * (t - t_mean)) ** 2
            elif (counts[:, i] == 0).any():
                total += (n_training - 1) / n_training * (t[counts[:, i] == 0].mean() - t_mean) ** 2
        factor = 1.0 if method == "infinitesimal_jackknife" else np.e - 1.0
        if bias_correction:
            total -= factor * n_training / n_trees ** 2 * np.sum((t - t_mean) ** 2)
        variance[index] = total
    return variance


@pytest.fixture(scope="module")
def regressor():
    """A fitted forest, its trees' counts and predictions at X_TEST (trees, rows, 1)."""
    forest = RandomForestRegressor(n_estimators=25, max_depth=3, random_state=4, device="cpu").fit(X, Y)
    predictions = np.array([member.predict(X_TEST) for member in forest.estimators_])[:, :, None]
    return forest, tree_counts(forest), predictions


@pytest.mark.parametrize("method", ["infinitesimal_jackknife", "jackknife_after_bootstrap"])
@pytest.mark.parametrize("bias_correction", [True, False])
def test_regressor_variance_equals_brute_force(regressor, method, bias_correction):
    forest, counts, predictions = regressor
    expected = brute_force(counts, predictions, method, bias_correction)
    got = prediction_variance(forest, X_TEST, method=method, bias_correction=bias_correction)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-10)


def test_classifier_variance_per_class_equals_brute_force():
    y = (Y > Y.mean()).astype(int) + (X[:, 2] > 1)
    forest = RandomForestClassifier(n_estimators=20, max_depth=3, random_state=2, device="cpu").fit(X, y)
    predictions = np.array([member.predict_proba(X_TEST) for member in forest.estimators_])
    expected = brute_force(tree_counts(forest), predictions, "infinitesimal_jackknife", True)
    np.testing.assert_allclose(prediction_variance(forest, X_TEST), expected, rtol=0, atol=1e-10)
    proba, std = forest.predict_proba(X_TEST, return_std=True)
    np.testing.assert_array_equal(proba, forest.predict_proba(X_TEST))
    np.testing.assert_allclose(std, np.sqrt(np.maximum(expected, 0)), rtol=0, atol=1e-9)


def test_predict_return_std_is_the_corrected_infinitesimal_jackknife(regressor):
    forest, counts, predictions = regressor
    mean, std = forest.predict(X_TEST, return_std=True)
    np.testing.assert_array_equal(mean, forest.predict(X_TEST))
    expected = brute_force(counts, predictions, "infinitesimal_jackknife", True)[:, 0]
    np.testing.assert_allclose(std, np.sqrt(np.maximum(expected, 0)), rtol=0, atol=1e-9)


def test_simulated_gpu_equals_cpu(regressor):
    """The CPU's trees (the simulator grows them bit for bit, test_backend.py) routed and counted on the GPU."""
    cpu = regressor[0]
    cuda = copy.copy(cpu)
    cuda.device_ = "cuda"
    for method in ("infinitesimal_jackknife", "jackknife_after_bootstrap"):
        np.testing.assert_array_equal(
            prediction_variance(cuda, X_TEST[:2], method=method), prediction_variance(cpu, X_TEST[:2], method=method)
        )


def test_bad_input_is_refused(regressor):
    no_bootstrap = RandomForestRegressor(n_estimators=1, bootstrap=False, device="cpu").fit(X, Y)
    with pytest.raises(ValueError, match="bootstrap=True"):
        no_bootstrap.predict(X_TEST, return_std=True)
    with pytest.raises(ValueError, match="method must be"):
        prediction_variance(regressor[0], X_TEST, method="bootstrap")
    voting = RandomForestClassifier(n_estimators=1, voting="plurality", device="cpu").fit(X, Y > 0)
    with pytest.raises(ValueError, match="voting='soft'"):
        voting.predict_proba(X_TEST, return_std=True)
