"""``decision_tree.py``: input and parameter validation of the tree estimators, missing values (NaN) in X,
the impurity of every node, sample and class weights, and the Poisson tree against scikit-learn's."""

import numpy as np
import pytest
import scipy.sparse
from scipy.special import xlogy
from sklearn import tree as sk_tree
from sklearn.exceptions import NotFittedError
from sklearn.tree import DecisionTreeClassifier as SkDecisionTreeClassifier

import gpuforest
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


# --- Poisson against scikit-learn -------------------------------------------------------------------


def test_poisson_matches_sklearn_on_counts():
    rng = np.random.RandomState(3)
    # float32 values: scikit-learn's trees split X as float32, so the thresholds are the same midpoints.
    X = rng.uniform(size=(200, 4)).astype(np.float32)
    y = rng.poisson(np.exp(1.0 + 1.5 * X[:, 0] - X[:, 1])).astype(float)
    references = [
        sk_tree.DecisionTreeRegressor(criterion="poisson", max_depth=3, random_state=seed).fit(X, y)
        for seed in range(5)
    ]
    # Precondition: no ties here (every scikit-learn seed grows the same tree).
    for other in references[1:]:
        np.testing.assert_array_equal(other.tree_.threshold, references[0].tree_.threshold)
    reference = references[0].tree_
    reg = gpuforest.DecisionTreeRegressor(criterion="poisson", max_depth=3, device="cpu").fit(X, y)
    ours = reg.tree_
    # Walk both trees together (node numbering differs: breadth- vs depth-first).
    stack = [(0, 0)]
    while stack:
        a, b = stack.pop()
        assert ours.feature[a] == reference.feature[b]
        assert ours.threshold[a] == np.float64(reference.threshold[b])
        assert ours.n_node_samples[a] == reference.n_node_samples[b]
        np.testing.assert_allclose(ours.impurity[a], reference.impurity[b], rtol=1e-9)
        np.testing.assert_allclose(ours.value[a, 0, 0], reference.value[b, 0, 0], rtol=1e-12)
        if ours.children_left[a] != -1:
            stack += [(ours.children_left[a], reference.children_left[b]),
                      (ours.children_right[a], reference.children_right[b])]
    np.testing.assert_allclose(reg.predict(X), references[0].predict(X), rtol=1e-12)


# --- impurity of every node against numpy ---------------------------------------------------------


def node_rows(estimator, X):
    """Training rows reaching each node (from ``decision_path``)."""
    path = estimator.decision_path(X).tocsc()
    return [path[:, node].nonzero()[0] for node in range(estimator.tree_.node_count)]


def numpy_node_impurity(criterion, y, w, n_classes):
    W = w.sum()
    if criterion in ("gini", "entropy", "misclassification"):
        p = np.bincount(y, weights=w, minlength=n_classes) / W
        if criterion == "gini":
            return 1.0 - np.sum(p ** 2), p
        if criterion == "entropy":
            q = p[p > 0]
            return -np.sum(q * np.log2(q)), p
        return 1.0 - p.max(), p
    mean = np.sum(w * y) / W
    if criterion == "squared_error":
        return np.sum(w * (y - mean) ** 2) / W, mean
    return np.sum(w * xlogy(y, y / mean)) / W, mean  # half Poisson deviance (sum w (mean - y) = 0)


@pytest.mark.parametrize("criterion", ["gini", "entropy", "misclassification", "squared_error", "poisson"])
def test_every_node_impurity_matches_numpy(criterion):
    rng = np.random.RandomState(7)
    n = 400
    X = np.round(rng.normal(size=(n, 4)), 1)
    w = rng.uniform(0.2, 3.0, n)
    w[rng.rand(n) < 0.1] = 0.0  # rows with zero weight are not in any node
    is_classification = criterion in ("gini", "entropy", "misclassification")
    if is_classification:
        y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(0, 0.7, n) > 0).astype(int) + (X[:, 2] > 1)
        est = gpuforest.DecisionTreeClassifier(criterion=criterion, max_depth=5, device="cpu")
    else:
        y = rng.poisson(np.exp(1 + X[:, 0] - 0.5 * X[:, 1])).astype(float)
        est = gpuforest.DecisionTreeRegressor(criterion=criterion, max_depth=5, device="cpu")
    est.fit(X, y, sample_weight=w)
    tree = est.tree_
    assert tree.node_count >= 31
    for node, rows in enumerate(node_rows(est, X)):
        rows = rows[w[rows] > 0]
        assert tree.n_node_samples[node] == rows.size
        np.testing.assert_allclose(tree.weighted_n_node_samples[node], w[rows].sum(), rtol=1e-12)
        impurity, value = numpy_node_impurity(criterion, y[rows], w[rows], 3)
        np.testing.assert_allclose(tree.impurity[node], impurity, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(tree.value[node, 0, : np.size(value)], np.atleast_1d(value), rtol=1e-9, atol=1e-15)


# --- sample and class weights against repeated and removed rows ----------------------------------


def assert_same_tree(a, b, same_counts=True):
    for name in ("children_left", "children_right", "feature", "threshold"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_allclose(a.weighted_n_node_samples, b.weighted_n_node_samples, rtol=1e-12)
    np.testing.assert_allclose(a.value, b.value, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(a.impurity, b.impurity, rtol=1e-12, atol=1e-15)
    if same_counts:
        np.testing.assert_array_equal(a.n_node_samples, b.n_node_samples)


def weighted_data(classification):
    rng = np.random.RandomState(11)
    X = np.round(rng.normal(size=(150, 5)), 1)
    if classification:
        y = ((X[:, 0] + X[:, 1] + rng.normal(0, 0.8, 150)) > 0).astype(int) + (X[:, 3] > 0.8)
    else:
        # Multiples of 1/4 are exact in binary: fixed-point sums of w*y and w*y^2 are then
        # the same whether a row is weighted k or repeated k times.
        y = np.round(4 * np.exp(X[:, 0] - X[:, 2]) + rng.poisson(2, 150)) / 4
    return X, y, rng.randint(1, 4, 150)


@pytest.mark.parametrize("max_depth", [4, None])
@pytest.mark.parametrize("criterion", ["gini", "entropy", "misclassification", "squared_error", "poisson"])
def test_integer_weights_equal_duplicated_rows(criterion, max_depth):
    classification = criterion in ("gini", "entropy", "misclassification")
    X, y, counts = weighted_data(classification)
    Estimator = gpuforest.DecisionTreeClassifier if classification else gpuforest.DecisionTreeRegressor
    weighted = Estimator(criterion=criterion, max_depth=max_depth, device="cpu").fit(X, y, sample_weight=counts)
    repeated = Estimator(criterion=criterion, max_depth=max_depth, device="cpu").fit(
        np.repeat(X, counts, axis=0), np.repeat(y, counts)
    )
    assert_same_tree(weighted.tree_, repeated.tree_, same_counts=False)
    np.testing.assert_array_equal(weighted.predict(X), repeated.predict(X))


@pytest.mark.parametrize("criterion", ["gini", "squared_error"])
def test_zero_weights_equal_removed_rows(criterion):
    classification = criterion == "gini"
    X, y, counts = weighted_data(classification)
    keep = counts != 1
    Estimator = gpuforest.DecisionTreeClassifier if classification else gpuforest.DecisionTreeRegressor
    weights = np.where(keep, 1.0, 0.0)
    zeroed = Estimator(criterion=criterion, device="cpu").fit(X, y, sample_weight=weights)
    removed = Estimator(criterion=criterion, device="cpu").fit(X[keep], y[keep])
    assert_same_tree(zeroed.tree_, removed.tree_)


def imbalanced_data():
    rng = np.random.RandomState(5)
    y = np.repeat([0, 1, 2], [120, 50, 20])
    # float32, as scikit-learn's trees split X: the same midpoint thresholds.
    X = np.round(rng.normal(size=(190, 4)) + 0.8 * y[:, None] * np.array([1.0, 0.5, 0.0, -0.3]), 1)
    return X.astype(np.float32), y


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_class_weight_balanced_equals_sample_weight(criterion):
    X, y = imbalanced_data()
    # "balanced": n_samples / (n_classes * count_k) = 190 / (3 * [120, 50, 20]).
    by_hand = (190 / (3 * np.array([120.0, 50.0, 20.0])))[y]
    balanced = gpuforest.DecisionTreeClassifier(criterion=criterion, class_weight="balanced", device="cpu").fit(X, y)
    weighted = gpuforest.DecisionTreeClassifier(criterion=criterion, device="cpu").fit(X, y, sample_weight=by_hand)
    assert_same_tree(balanced.tree_, weighted.tree_)
    # Every class weighs the same at the root: 190 / 3 each.
    np.testing.assert_allclose(balanced.tree_.value[0, 0], [1 / 3, 1 / 3, 1 / 3], rtol=1e-12)
    np.testing.assert_allclose(balanced.tree_.weighted_n_node_samples[0], 190.0, rtol=1e-12)
    # class_weight and sample_weight multiply.
    extra = np.random.RandomState(0).uniform(0.5, 2.0, y.size)
    both = gpuforest.DecisionTreeClassifier(criterion=criterion, class_weight="balanced", max_depth=4,
                                            device="cpu").fit(X, y, sample_weight=extra)
    product = gpuforest.DecisionTreeClassifier(criterion=criterion, max_depth=4, device="cpu").fit(
        X, y, sample_weight=extra * by_hand
    )
    assert_same_tree(both.tree_, product.tree_)


def test_class_weight_dict_and_sklearn_reference():
    X, y = imbalanced_data()
    weights = {0: 1.0, 1: 2.5, 2: 6.0}
    ours = gpuforest.DecisionTreeClassifier(class_weight=weights, max_depth=2, device="cpu").fit(X, y)
    manual = gpuforest.DecisionTreeClassifier(max_depth=2, device="cpu").fit(
        X, y, sample_weight=np.array([weights[k] for k in y])
    )
    assert_same_tree(ours.tree_, manual.tree_)
    for class_weight in (weights, "balanced"):
        ours = gpuforest.DecisionTreeClassifier(class_weight=class_weight, max_depth=1, device="cpu").fit(X, y)
        reference = sk_tree.DecisionTreeClassifier(class_weight=class_weight, max_depth=1, random_state=0).fit(X, y)
        assert ours.tree_.feature[0] == reference.tree_.feature[0]
        assert ours.tree_.threshold[0] == reference.tree_.threshold[0]
        np.testing.assert_allclose(ours.tree_.weighted_n_node_samples, reference.tree_.weighted_n_node_samples,
                                   rtol=1e-12)
        np.testing.assert_allclose(ours.tree_.impurity, reference.tree_.impurity, rtol=1e-9)
