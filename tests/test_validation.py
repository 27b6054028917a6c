"""Input and parameter validation of the tree estimators, and missing values (NaN) in X."""

import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse
from sklearn.exceptions import NotFittedError
from sklearn.tree import DecisionTreeClassifier as SkDecisionTreeClassifier

from gpuforest import DecisionTreeClassifier, DecisionTreeRegressor

N_SAMPLES, N_FEATURES = 30, 3


def _data(kind):
    rng = np.random.RandomState(0)
    X = rng.uniform(0, 1, size=(N_SAMPLES, N_FEATURES))
    if kind == "classifier":
        y = np.arange(N_SAMPLES) % 3
    else:
        y = rng.uniform(0.5, 2.0, size=N_SAMPLES)
    return X, y


ESTIMATORS = {"classifier": DecisionTreeClassifier, "regressor": DecisionTreeRegressor}


@pytest.fixture(params=sorted(ESTIMATORS))
def case(request):
    """(estimator class, X, y) for each estimator."""
    X, y = _data(request.param)
    return ESTIMATORS[request.param], X, y


# --- bad targets ------------------------------------------------------------


def test_nan_in_y(case):
    Estimator, X, y = case
    y = y.astype(np.float64)
    y[4] = np.nan
    with pytest.raises(ValueError, match="Input y contains NaN"):
        Estimator().fit(X, y)


def test_inf_in_y(case):
    Estimator, X, y = case
    y = y.astype(np.float64)
    y[4] = np.inf
    with pytest.raises(ValueError, match="Input y contains infinity"):
        Estimator().fit(X, y)


def test_three_dimensional_y(case):
    # A 2-D y is multi-output (tests/test_multioutput.py); more dimensions are refused.
    Estimator, X, y = case
    with pytest.raises(ValueError, match="Found array with dim 3"):
        Estimator().fit(X, np.stack([y, y], axis=1)[:, :, None])


def test_classifier_rejects_continuous_y():
    X, y = _data("regressor")
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        DecisionTreeClassifier().fit(X, y)


def test_poisson_negative_y():
    X, y = _data("regressor")
    y = y.copy()
    y[0] = -1.0
    with pytest.raises(ValueError, match="negative which is not allowed for Poisson"):
        DecisionTreeRegressor(criterion="poisson").fit(X, y)


def test_poisson_all_zero_y():
    X, _ = _data("regressor")
    with pytest.raises(ValueError, match="Sum of y is not positive"):
        DecisionTreeRegressor(criterion="poisson").fit(X, np.zeros(N_SAMPLES))


# --- bad X ------------------------------------------------------------------


@pytest.mark.parametrize("value", [np.inf, -np.inf])
def test_inf_in_X(case, value):
    Estimator, X, y = case
    X = X.copy()
    X[2, 1] = value
    with pytest.raises(ValueError, match=r"Input X contains infinity or a value too large for dtype\('float64'\)"):
        Estimator().fit(X, y)


@pytest.mark.parametrize("value", [1e39, -1e300])
def test_float64_value_beyond_float32_in_X_is_an_ordinary_value(case, value):
    """X is validated as float64 (as HistGradientBoosting's): a finite value beyond float32's range is a value
    like any other, and the fully grown tree fits every (distinct) training row."""
    Estimator, X, y = case
    X = X.copy()
    X[2, 1] = value
    np.testing.assert_array_equal(Estimator().fit(X, y).predict(X), y)


def test_integers_beyond_float32_s_precision_stay_apart():
    """2**24 and 2**24 + 1 (int32) are one float32: validated as float64, they split; int8 X (exact in float32)
    fits the same tree as its float64 copy."""
    X = (2**24 + np.arange(40) % 2).astype(np.int32).reshape(-1, 1)
    y = np.arange(40) % 2
    assert DecisionTreeClassifier().fit(X, y).score(X, y) == 1.0
    small = np.random.default_rng(0).integers(-100, 100, (60, 2)).astype(np.int8)
    y_small = (small[:, 0] > small[:, 1]).astype(int)
    np.testing.assert_array_equal(
        DecisionTreeClassifier().fit(small, y_small).tree_.threshold,
        DecisionTreeClassifier().fit(small.astype(np.float64), y_small).tree_.threshold,
    )


def test_inf_in_X_at_predict(case):
    Estimator, X, y = case
    model = Estimator(random_state=0).fit(X, y)
    X_test = X[:5].copy()
    X_test[0, 0] = np.inf
    with pytest.raises(ValueError, match="Input X contains infinity"):
        model.predict(X_test)


def test_empty_X(case):
    Estimator, _, _ = case
    with pytest.raises(ValueError, match=r"Found array with 0 sample\(s\)"):
        Estimator().fit(np.empty((0, N_FEATURES)), np.empty(0))


def test_X_without_features(case):
    Estimator, _, y = case
    with pytest.raises(ValueError, match=r"Found array with 0 feature\(s\)"):
        Estimator().fit(np.empty((N_SAMPLES, 0)), y)


def test_one_dimensional_X(case):
    Estimator, X, y = case
    with pytest.raises(ValueError, match="Expected 2D array, got 1D array instead"):
        Estimator().fit(X[:, 0], y)


def test_mismatched_lengths(case):
    Estimator, X, y = case
    with pytest.raises(ValueError, match=r"inconsistent numbers of samples: \[30, 29\]"):
        Estimator().fit(X, y[:-1])


def test_non_numeric_string_X(case):
    Estimator, _, y = case
    X = np.array([["a", "b", "c"]] * N_SAMPLES)
    with pytest.raises(ValueError, match="could not convert string to float"):
        Estimator().fit(X, y)


def test_object_X_with_a_string(case):
    Estimator, X, y = case
    X = X.astype(object)
    X[3, 2] = "foo"
    with pytest.raises(ValueError, match="could not convert string to float: 'foo'"):
        Estimator().fit(X, y)


def test_sparse_X_gives_the_dense_fit(case):
    # The sparse input itself is tested in test_sparse.py.
    Estimator, X, y = case
    dense_prediction = Estimator(random_state=0).fit(X, y).predict(X)
    model = Estimator(random_state=0).fit(scipy.sparse.csr_matrix(X), y)
    np.testing.assert_array_equal(model.predict(scipy.sparse.csc_matrix(X)), dense_prediction)


PREDICT_METHODS = {
    DecisionTreeClassifier: ["predict", "predict_proba", "predict_log_proba", "apply", "decision_path"],
    DecisionTreeRegressor: ["predict", "apply", "decision_path"],
}
ESTIMATOR_METHODS = [(Estimator, method) for Estimator, methods in PREDICT_METHODS.items() for method in methods]


@pytest.mark.parametrize("Estimator, method", ESTIMATOR_METHODS)
@pytest.mark.parametrize("n_features", [N_FEATURES - 1, N_FEATURES + 2])
def test_wrong_number_of_features_at_predict(Estimator, method, n_features):
    X, y = _data("classifier" if Estimator is DecisionTreeClassifier else "regressor")
    model = Estimator(random_state=0).fit(X, y)
    X_test = np.random.RandomState(1).uniform(size=(4, n_features))
    expected = f"X has {n_features} features, but {Estimator.__name__} is expecting {N_FEATURES} features as input"
    with pytest.raises(ValueError, match=expected):
        getattr(model, method)(X_test)


@pytest.mark.parametrize("Estimator, method", ESTIMATOR_METHODS)
def test_methods_before_fit_raise_not_fitted_error(Estimator, method):
    X, _ = _data("regressor")
    with pytest.raises(NotFittedError, match="is not fitted yet"):
        getattr(Estimator(), method)(X)


@pytest.mark.parametrize("Estimator", [DecisionTreeClassifier, DecisionTreeRegressor])
def test_tree_queries_before_fit_raise_not_fitted_error(Estimator):
    for query in ("get_depth", "get_n_leaves"):
        with pytest.raises(NotFittedError):
            getattr(Estimator(), query)()
    with pytest.raises(NotFittedError):
        Estimator().feature_importances_


# --- sample weights ---------------------------------------------------------


def test_negative_sample_weight(case):
    Estimator, X, y = case
    sample_weight = np.ones(N_SAMPLES)
    sample_weight[7] = -0.5
    with pytest.raises(ValueError, match="Negative values in data passed to `sample_weight`"):
        Estimator().fit(X, y, sample_weight=sample_weight)


def test_all_zero_sample_weight(case):
    # scikit-learn's _check_sample_weight (>= 1.7) or gpuforest's own check, whichever runs first.
    Estimator, X, y = case
    with pytest.raises(ValueError, match="at least one non-zero number|positive sum"):
        Estimator().fit(X, y, sample_weight=np.zeros(N_SAMPLES))


def test_sample_weight_of_wrong_length(case):
    Estimator, X, y = case
    with pytest.raises(ValueError, match=r"sample_weight.shape == \(29,\), expected \(30,\)"):
        Estimator().fit(X, y, sample_weight=np.ones(N_SAMPLES - 1))


# --- parameters ---------------------------------------------------------------


@pytest.mark.parametrize(
    "params, message",
    [
        ({"max_bins": 1}, r"'max_bins' parameter .* must be an int in the range \[2, 256\]\. Got 1 instead"),
        ({"max_bins": 300}, r"'max_bins' parameter .* must be an int in the range \[2, 256\]\. Got 300 instead"),
        ({"device": "tpu"}, r"'device' parameter .* must be a str among .*Got 'tpu' instead"),
        ({"criterion": "foo"}, r"'criterion' parameter .* must be a str among .*Got 'foo' instead"),
        ({"max_features": 0}, r"'max_features' parameter .* must be an int in the range \[1, inf\).*Got 0 instead"),
        ({"max_features": 1.5}, r"'max_features' parameter .*Got 1\.5 instead"),
        ({"max_depth": 0}, r"'max_depth' parameter .*Got 0 instead"),
        ({"min_samples_split": 1}, r"'min_samples_split' parameter .*Got 1 instead"),
        ({"min_samples_leaf": 0}, r"'min_samples_leaf' parameter .*Got 0 instead"),
        ({"max_leaf_nodes": 1}, r"'max_leaf_nodes' parameter .*Got 1 instead"),
        ({"min_weight_fraction_leaf": 0.6}, r"'min_weight_fraction_leaf' parameter .*Got 0\.6 instead"),
        ({"min_impurity_decrease": -1.0}, r"'min_impurity_decrease' parameter .*Got -1\.0 instead"),
    ],
    ids=lambda value: "-".join(f"{k}={v}" for k, v in value.items()) if isinstance(value, dict) else "",
)
def test_invalid_parameters(case, params, message):
    Estimator, X, y = case
    with pytest.raises(ValueError, match=message):
        Estimator(**params).fit(X, y)


def test_regression_criterion_rejected_by_classifier():
    X, y = _data("classifier")
    with pytest.raises(ValueError, match="'criterion' parameter .*Got 'squared_error' instead"):
        DecisionTreeClassifier(criterion="squared_error").fit(X, y)


def test_classification_criterion_rejected_by_regressor():
    X, y = _data("regressor")
    with pytest.raises(ValueError, match="'criterion' parameter .*Got 'gini' instead"):
        DecisionTreeRegressor(criterion="gini").fit(X, y)


def test_max_features_larger_than_n_features(case):
    Estimator, X, y = case
    with pytest.raises(ValueError, match="max_features must be <= n_features=3, got 4"):
        Estimator(max_features=4).fit(X, y)


CUDA_WITHOUT_GPU = """
import importlib.util, sys
import numpy as np
from gpuforest import DecisionTreeClassifier, DecisionTreeRegressor
if importlib.util.find_spec("cupy") is not None:
    import cupy
    try:
        if cupy.cuda.runtime.getDeviceCount() > 0:
            sys.exit(3)
    except cupy.cuda.runtime.CUDARuntimeError:
        pass
X, y = np.random.RandomState(0).uniform(size=(20, 2)), np.arange(20) % 2
for Estimator in (DecisionTreeClassifier, DecisionTreeRegressor):
    try:
        Estimator(device="cuda").fit(X, y)
    except ValueError as error:
        assert "device='cuda' needs CuPy and a usable CUDA GPU" in str(error) and "device='cpu'" in str(error)
    else:
        sys.exit("device='cuda' fitted without a GPU")
    assert Estimator(device="auto").fit(X, y).device_ == "cpu"
"""


def test_cuda_device_without_gpu():
    """Without the simulator (which tests set) and without a GPU, device='cuda' is a clear error
    and device='auto' falls back to the CPU."""
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_ENABLE_CUDASIM"}
    result = subprocess.run([sys.executable, "-c", CUDA_WITHOUT_GPU], env=env, capture_output=True, text=True)
    if result.returncode == 3:
        pytest.skip("a CUDA GPU is present")
    assert result.returncode == 0, result.stderr


# --- missing values ----------------------------------------------------------


def _missing_data(missing_class):
    """Two classes separated by feature 0 at 5; feature 0 is NaN on a third of
    the rows of ``missing_class`` only. Feature 1 is noise."""
    rng = np.random.RandomState(0)
    n = 90
    y = np.repeat([0, 1], n // 2)
    x0 = np.where(y == 0, rng.uniform(0, 4, n), rng.uniform(6, 10, n))
    missing = (y == missing_class) & (np.arange(n) % 3 == 0)
    x0[missing] = np.nan
    X = np.column_stack([x0, rng.uniform(0, 1, n)])
    return X, y


@pytest.mark.parametrize("missing_class, goes_left", [(0, True), (1, False)])
def test_nan_in_X_goes_to_the_learned_side(missing_class, goes_left):
    X, y = _missing_data(missing_class)
    model = DecisionTreeClassifier(random_state=0).fit(X, y)
    tree = model.tree_
    # One split, on feature 0, between 4 and 6, sending missing values with the rows of their class.
    assert tree.node_count == 3
    assert tree.feature[0] == 0
    assert 4 <= tree.threshold[0] <= 6
    assert bool(tree.missing_go_to_left[0]) is goes_left
    X_test = np.array([[np.nan, 0.5], [np.nan, np.nan], [1.0, np.nan], [9.0, 0.2]])
    np.testing.assert_array_equal(model.predict(X_test), [missing_class, missing_class, 0, 1])
    np.testing.assert_array_equal(model.predict_proba(X_test[:2]), np.eye(2)[[missing_class] * 2])
    # scikit-learn learns the same direction for the missing values.
    reference = SkDecisionTreeClassifier(random_state=0).fit(X, y)
    np.testing.assert_array_equal(model.predict(X_test), reference.predict(X_test))


def test_missingness_alone_is_learned():
    # Feature 0's values are noise; only whether it is missing tells the class.
    rng = np.random.RandomState(0)
    n = 80
    y = (np.arange(n) % 4 == 0).astype(np.int64)
    X = rng.uniform(0, 1, size=(n, 2))
    X[y == 1, 0] = np.nan
    model = DecisionTreeClassifier(random_state=0).fit(X, y)
    assert model.tree_.node_count == 3
    assert model.tree_.feature[0] == 0
    X_test = np.array([[np.nan, 0.3], [0.1, 0.3], [0.9, 0.9], [np.nan, 0.9]])
    np.testing.assert_array_equal(model.predict(X_test), [1, 0, 0, 1])


def test_regressor_nan_in_X_goes_to_the_learned_side():
    X, y_class = _missing_data(missing_class=1)
    y = np.where(y_class == 1, 10.0, 1.0)
    model = DecisionTreeRegressor(random_state=0).fit(X, y)
    assert model.tree_.node_count == 3
    assert not model.tree_.missing_go_to_left[0]
    np.testing.assert_array_equal(model.predict(np.array([[np.nan, 0.5], [2.0, 0.5], [8.0, np.nan]])), [10.0, 1.0, 10.0])


def test_nan_at_predict_without_nan_in_training_goes_to_the_larger_child():
    # scikit-learn's rule: a split that saw no missing values sends them to the
    # child with more training samples.
    X = np.arange(10, dtype=np.float64)[:, None]
    for y, larger in ((np.array([0] * 3 + [1] * 7), 1), (np.array([0] * 7 + [1] * 3), 0)):
        model = DecisionTreeClassifier(random_state=0).fit(X, y)
        reference = SkDecisionTreeClassifier(random_state=0).fit(X, y)
        assert model.tree_.threshold[0] == reference.tree_.threshold[0]
        assert model.predict([[np.nan]])[0] == larger == reference.predict([[np.nan]])[0]


def test_all_nan_feature_is_never_split_on():
    X, y = _data("classifier")
    X = X.copy()
    X[:, 1] = np.nan
    model = DecisionTreeClassifier(random_state=0).fit(X, y)
    internal = model.tree_.children_left != -1
    assert internal.any()
    assert not np.any(model.tree_.feature[internal] == 1)
    # Training rows are fitted exactly: all values of features 0 and 2 are distinct.
    np.testing.assert_array_equal(model.predict(X), y)
