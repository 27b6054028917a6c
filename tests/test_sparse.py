"""Sparse X (gpuforest.sparse): every estimator fits and predicts on scipy CSR/CSC input exactly as on the
dense matrix, bins a sparse X without densifying it whole, agrees with scikit-learn's tree on sparse
input, and refuses the dense-only options with a clear error."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.tree import DecisionTreeRegressor as SkDecisionTreeRegressor

import gpuforest.sparse
from gpuforest import (
    AdaBoostClassifier,
    AdaBoostRegressor,
    BaggingClassifier,
    BaggingRegressor,
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
    VotingClassifier,
    VotingRegressor,
)
from gpuforest.backend import get_backend
from gpuforest.binning import BinMapper

from test_determinism import assert_trees_identical

FITTED_BINS = ("bin_thresholds_", "n_thresholds_", "bin_min_", "bin_max_")


def sparse_data(seed, n_samples=80, n_features=5, zero_fraction=0.6, nan_fraction=0.05):
    """Dense X with mostly zeros (the entries a sparse matrix leaves implicit), a few NaN and negative values,
    class labels and a real target."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n_samples, n_features)), 2)
    X[rng.random(X.shape) < zero_fraction] = 0.0
    X[rng.random(X.shape) < nan_fraction] = np.nan
    informative = np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1])
    return X, (informative > 0).astype(int) + (np.nan_to_num(X[:, 2]) > 0.5), informative + 0.1 * rng.normal(
        size=n_samples
    )


@pytest.fixture
def small_blocks(monkeypatch):
    """Dense blocks of 7 rows of 5 float64 features: several blocks and a short last one on the test data."""
    monkeypatch.setattr(gpuforest.sparse, "DENSE_BLOCK_BYTES", 7 * 5 * 8)


# --- binning -------------------------------------------------------------------------------------


@pytest.mark.parametrize("max_bins", [256, 16])  # midpoints of few distinct values; quantiles over the zeros
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_thresholds_from_a_sparse_column_equal_the_dense_fit(max_bins, dtype):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 4)).astype(dtype)
    X[rng.random(X.shape) < 0.5] = 0.0
    X[:, 1] = np.abs(X[:, 1])  # zeros the smallest value
    X[:, 2] = -np.abs(X[:, 2])  # zeros the largest value
    X[:3, 3] = np.nan  # explicitly stored missing values
    dense = BinMapper(max_bins).fit(X)
    for sparse_X in (sp.csc_matrix(X), sp.csr_array(X)):
        fitted = BinMapper(max_bins).fit(sparse_X)
        for name in FITTED_BINS:
            np.testing.assert_array_equal(getattr(fitted, name), getattr(dense, name), err_msg=name)
    assert np.unique(X[:, 0]).size > 15  # 16 bins: quantile thresholds, over the column's zeros too


def test_thresholds_of_a_subsampled_sparse_fit_equal_the_dense_fit():
    X, _, _ = sparse_data(1, n_samples=300)
    dense = BinMapper(32, subsample=120, random_state=5).fit(X)
    fitted = BinMapper(32, subsample=120, random_state=5).fit(sp.csr_matrix(X))
    for name in FITTED_BINS:
        np.testing.assert_array_equal(getattr(fitted, name), getattr(dense, name), err_msg=name)


def test_duplicate_entries_are_summed_as_the_dense_matrix_holds_them():
    # Column 0 stores 1.5 twice for row 2 (3.0 in the dense matrix); the caller's matrix is left as it was.
    X_csc = sp.csc_matrix((np.array([1.5, 1.5, -2.0, 4.0]), np.array([2, 2, 0, 3]), np.array([0, 3, 4])), shape=(5, 2))
    stored = X_csc.data.copy()
    fitted = BinMapper().fit(X_csc)
    dense = BinMapper().fit(X_csc.toarray())
    for name in FITTED_BINS:
        np.testing.assert_array_equal(getattr(fitted, name), getattr(dense, name), err_msg=name)
    np.testing.assert_array_equal(dense.bin_thresholds_[0, :2], [-1.0, 1.5])  # midpoints of -2, 0 and 3
    np.testing.assert_array_equal(X_csc.data, stored)


def test_sparse_rows_bin_in_blocks_as_the_dense_rows(small_blocks):
    X, _, _ = sparse_data(2)
    mapper = BinMapper(16).fit(X)
    backend = get_backend("cpu")
    np.testing.assert_array_equal(mapper.transform(sp.csr_matrix(X), backend), mapper.transform(X, backend))


# --- estimators: sparse fits give the dense fit's model and predictions -------------------------------


def member_trees(model):
    """Every gpuforest Tree of a fitted estimator (a tree, a forest's or boosting's trees, or the members')."""
    if hasattr(model, "tree_"):
        return [model.tree_]
    if hasattr(model, "trees_"):
        return model.trees_
    return [tree for member in model.estimators_ for tree in member_trees(member)]


CLASSIFIERS = [
    DecisionTreeClassifier(random_state=0),
    DecisionTreeClassifier(pruning="reduced_error", ccp_alpha=0.01, random_state=0),
    RandomForestClassifier(n_estimators=3, oob_score=True, random_state=0),
    ExtraTreesClassifier(n_estimators=3, random_state=0),
    BaggingClassifier(n_estimators=3, random_state=0),  # grown as one forest
    AdaBoostClassifier(n_estimators=3, random_state=0),
    GradientBoostingClassifier(n_estimators=3, random_state=0),
    VotingClassifier(
        [("tree", DecisionTreeClassifier(max_depth=3, random_state=0)),
         ("forest", RandomForestClassifier(n_estimators=2, random_state=0))],
        voting="soft",
    ),
]
REGRESSORS = [
    DecisionTreeRegressor(max_depth=5, random_state=0),
    RandomForestRegressor(n_estimators=3, random_state=0),
    ExtraTreesRegressor(n_estimators=3, random_state=0),
    # scikit-learn's loop over members on column subsets of X
    BaggingRegressor(DecisionTreeRegressor(max_depth=3), n_estimators=3, max_features=0.6, random_state=0),
    AdaBoostRegressor(n_estimators=3, random_state=0),
    GradientBoostingRegressor(n_estimators=3, n_iter_no_change=2, validation_fraction=0.2, random_state=0),
    VotingRegressor([("tree", DecisionTreeRegressor(max_depth=3)), ("boosting", GradientBoostingRegressor(
        n_estimators=2))]),
]
PREDICTIONS = (
    "predict", "predict_proba", "decision_function", "apply", "staged_predict", "staged_predict_proba",
    "staged_decision_function",
)


def assert_predictions_equal(model, dense_model, X):
    """Every prediction method of ``model`` on sparse ``X`` equals ``dense_model``'s on the dense rows."""
    X_dense = X.toarray()
    for method in PREDICTIONS:
        if hasattr(model, method):
            expected = getattr(dense_model, method)(X_dense)
            result = getattr(model, method)(X)
            if method.startswith("staged_"):
                expected, result = list(expected), list(result)
            np.testing.assert_array_equal(result, expected, err_msg=method)
    if hasattr(model, "decision_path"):
        expected, result = dense_model.decision_path(X_dense), model.decision_path(X)
        if isinstance(expected, tuple):  # forests: (indicator, n_nodes_ptr)
            np.testing.assert_array_equal(result[1], expected[1])
            expected, result = expected[0], result[0]
        assert (result != expected).nnz == 0 and result.shape == expected.shape
    assert model.score(X, model.predict(X_dense)) == 1.0


# CSR and CSC matrices and arrays in turn (one each keeps the test short).
SPARSE_FORMATS = [sp.csr_matrix, sp.csc_array, sp.csc_matrix, sp.csr_array]


@pytest.mark.filterwarnings("ignore:Some inputs do not have OOB scores")  # 3 trees: a few rows in every bag
@pytest.mark.parametrize(
    "estimator, sparse_format",
    [(estimator, SPARSE_FORMATS[index % 4]) for index, estimator in enumerate(CLASSIFIERS + REGRESSORS)],
    ids=lambda param: type(param).__name__ if hasattr(param, "fit") else param.__name__,
)
def test_sparse_fit_gives_the_dense_fit_model_and_predictions(estimator, sparse_format, small_blocks):
    X, y_class, y_real = sparse_data(3)
    y = y_class if estimator in CLASSIFIERS else y_real
    dense_model = clone(estimator).fit(X, y)
    model = clone(estimator).fit(sparse_format(X), y)
    trees, dense_trees = member_trees(model), member_trees(dense_model)
    assert len(trees) == len(dense_trees) > 0
    for tree, dense_tree in zip(trees, dense_trees):
        assert_trees_identical(tree, dense_tree)
    X_test, _, _ = sparse_data(4, n_samples=30)
    assert_predictions_equal(model, dense_model, sparse_format(X_test))


def test_contributions_of_sparse_rows_equal_the_dense_rows(small_blocks):
    X, y, _ = sparse_data(5)
    model = GradientBoostingClassifier(n_estimators=3, random_state=0).fit(X, y)
    np.testing.assert_array_equal(model.predict_contributions(sp.csr_matrix(X)), model.predict_contributions(X))


@pytest.mark.parametrize("sparse_format", [sp.coo_matrix, sp.lil_array])
def test_other_sparse_formats_are_converted_as_scikit_learn_does(sparse_format):
    X, y, _ = sparse_data(6)
    dense_model = DecisionTreeClassifier(random_state=0).fit(X, y)
    model = DecisionTreeClassifier(random_state=0).fit(sparse_format(X), y)
    assert_trees_identical(model.tree_, dense_model.tree_)
    np.testing.assert_array_equal(model.predict_proba(sparse_format(X)), dense_model.predict_proba(X))


def test_tree_on_sparse_input_agrees_with_scikit_learn():
    # Fewer than 255 distinct values per column (a bin each), float32 values (scikit-learn's trees compute in
    # float32) and a real target (no tied splits down to depth 3, as on the dense matrix): the same splits
    # (numbered breadth-first here, depth-first there) and predictions.
    rng = np.random.default_rng(7)
    X = rng.normal(size=(200, 6)).astype(np.float32).astype(np.float64)
    X[rng.random(X.shape) < 0.7] = 0.0
    y = X[:, 0] + X[:, 1] - X[:, 2] + (X[:, 3] > 0.5) + 0.1 * rng.normal(size=200)
    X_sparse = sp.csc_matrix(X)
    ours = DecisionTreeRegressor(max_depth=3).fit(X_sparse, y)
    theirs = SkDecisionTreeRegressor(max_depth=3, random_state=0).fit(X_sparse, y)
    assert ours.tree_.node_count == theirs.tree_.node_count == 15
    splits = [
        sorted(zip(tree.feature[tree.feature >= 0], tree.threshold[tree.feature >= 0]))
        for tree in (ours.tree_, theirs.tree_)
    ]
    assert splits[0] == splits[1]
    X_test = sp.csr_matrix(rng.normal(size=(300, 6)) * (rng.random((300, 6)) < 0.3))
    np.testing.assert_allclose(ours.predict(X_test), theirs.predict(X_test), rtol=1e-12)


# --- memory --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n_samples, n_features, density",
    [(60_000, 100, 0.01), pytest.param(200_000, 2_000, 0.001, marks=pytest.mark.quality)],
)
def test_a_large_sparse_matrix_fits_and_predicts_without_its_dense_matrix(n_samples, n_features, density, monkeypatch):
    monkeypatch.setattr(gpuforest.sparse, "DENSE_BLOCK_BYTES", 2**20)
    rng = np.random.default_rng(0)
    n_stored = int(n_samples * n_features * density)
    X = sp.csr_matrix(
        (rng.uniform(size=n_stored), (rng.integers(n_samples, size=n_stored), rng.integers(n_features, size=n_stored))),
        shape=(n_samples, n_features),
    )
    y = np.asarray(X[:, :10].sum(axis=1)).ravel()
    dense_bytes = n_samples * n_features * 8
    tracemalloc.start()
    try:
        model = DecisionTreeRegressor(max_depth=3, device="cpu").fit(X, y)
        prediction = model.predict(X)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The CPU's two layouts of the bins (a byte an entry each) and a block of dense rows: neither the dense
    # float64 X nor a float32 copy of it (half its size) was made.
    assert peak < dense_bytes / 2, f"peak {peak / 2**20:.0f} MiB, dense X {dense_bytes / 2**20:.0f} MiB"
    assert model.tree_.node_count == 15 and prediction.shape == (n_samples,)


# --- bad input ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "estimator, message",
    [
        (DecisionTreeClassifier(categorical_features=[0]), "Categorical features take dense X only"),
        (RandomForestClassifier(n_estimators=2, categorical_features=[1]), "Categorical features take dense X only"),
        (DecisionTreeClassifier(use_surrogates=True), "use_surrogates=True .* takes dense X only"),
        (DecisionTreeClassifier(pruning="mdl"), "pruning='mdl' .* takes dense X only"),
        (DecisionTreeClassifier(algorithm="c45"), "pruning='pessimistic' .* takes dense X only"),
    ],
)
def test_dense_only_options_refuse_sparse_x(estimator, message):
    X, y, _ = sparse_data(8)
    X[:, :2] = np.abs(np.round(np.nan_to_num(X[:, :2])))  # category codes
    with pytest.raises(ValueError, match=message):
        estimator.fit(sp.csr_matrix(X), y)
    assert not estimator.__sklearn_tags__().input_tags.sparse


def test_a_model_with_categorical_features_refuses_sparse_x_at_predict():
    X, y, _ = sparse_data(9)
    X[:, 0] = np.abs(np.round(np.nan_to_num(X[:, 0])))
    model = DecisionTreeClassifier(categorical_features=[0]).fit(X, y)
    with pytest.raises(ValueError, match="Categorical features take dense X only"):
        model.predict(sp.csr_matrix(X))


def test_bad_sparse_input_gets_scikit_learns_errors():
    X, y, _ = sparse_data(10)
    model = DecisionTreeClassifier().fit(sp.csr_matrix(X), y)
    with pytest.raises(ValueError, match="features"):
        model.predict(sp.csr_matrix(X[:, :3]))
    X[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        DecisionTreeClassifier().fit(sp.csr_matrix(X), y)


# --- backends --------------------------------------------------------------------------------------------


def test_sparse_fit_on_cuda_equals_cpu(monkeypatch):
    monkeypatch.setattr(gpuforest.sparse, "DENSE_BLOCK_BYTES", 12 * 3 * 8)  # 3 blocks of rows (the simulator is slow)
    X, y, _ = sparse_data(11, n_samples=30, n_features=3)
    X_sparse = sp.csr_matrix(X)
    models = [
        DecisionTreeClassifier(max_bins=16, max_depth=2, device=device, random_state=0).fit(X_sparse, y)
        for device in ("cuda", "cpu")
    ]
    assert [model.device_ for model in models] == ["cuda", "cpu"]
    assert_trees_identical(models[0].tree_, models[1].tree_)
    np.testing.assert_array_equal(models[0].predict_proba(X_sparse), models[1].predict_proba(X_sparse))
    np.testing.assert_array_equal(models[0].apply(X_sparse), models[1].apply(X_sparse))
