"""Reproducibility of fitted trees, and the tree queries (export_text,
decision_path, apply, get_depth, get_n_leaves, feature_importances_) against
hand-computed trees and scikit-learn."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest
from sklearn import tree as sk_tree
from sklearn.base import clone
from sklearn.datasets import load_iris

from gpuforest import DecisionTreeClassifier, DecisionTreeRegressor, export_text
from gpuforest.tree import TREE_LEAF

TREE_ARRAYS = [
    "children_left",
    "children_right",
    "feature",
    "threshold",
    "bin_threshold",
    "missing_go_to_left",
    "value",
    "impurity",
    "n_node_samples",
    "weighted_n_node_samples",
]


def _noisy_data():
    """3000 x 9 features, 10 % NaN, three classes / a real target, and sample
    weights of which 10 % are zero. Enough rows for both the histogram and the
    row-scan split paths and for histogram subtraction."""
    rng = np.random.RandomState(0)
    n, d = 3000, 9
    X = rng.normal(size=(n, d))
    logit = X @ rng.uniform(size=d) + 0.5 * rng.normal(size=n)
    y_class = np.digitize(logit, np.quantile(logit, [1 / 3, 2 / 3]))
    y_real = logit + np.sin(X[:, 0])
    X[rng.rand(n, d) < 0.1] = np.nan
    sample_weight = rng.uniform(0.5, 2.0, size=n)
    sample_weight[rng.rand(n) < 0.1] = 0.0
    return X, y_class, y_real, sample_weight


NOISY = _noisy_data()


def _fit(Estimator, **params):
    X, y_class, y_real, sample_weight = NOISY
    y = y_class if Estimator is DecisionTreeClassifier else y_real
    return Estimator(**params).fit(X, y, sample_weight=sample_weight)


def assert_trees_identical(tree_a, tree_b):
    assert tree_a.node_count == tree_b.node_count
    for name in TREE_ARRAYS:
        a, b = getattr(tree_a, name), getattr(tree_b, name)
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert a.tobytes() == b.tobytes(), f"tree_.{name} differs"


def trees_identical(tree_a, tree_b):
    try:
        assert_trees_identical(tree_a, tree_b)
    except AssertionError:
        return False
    return True


# --- determinism ----------------------------------------------------------------


@pytest.mark.parametrize("Estimator", [DecisionTreeClassifier, DecisionTreeRegressor])
@pytest.mark.parametrize("extra", [{}, {"max_leaf_nodes": 60}, {"max_depth": 6, "min_samples_leaf": 3}])
def test_same_random_state_gives_bit_identical_trees(Estimator, extra):
    params = dict(max_features="sqrt", random_state=42, **extra)
    first = _fit(Estimator, **params)
    assert first.tree_.node_count > 7
    assert first.tree_.missing_go_to_left.any() and not first.tree_.missing_go_to_left.all()
    again = _fit(Estimator, **params)
    assert_trees_identical(first.tree_, again.tree_)
    X, y_class, y_real, sample_weight = NOISY
    y = y_class if Estimator is DecisionTreeClassifier else y_real
    np.testing.assert_array_equal(first.predict(X), again.predict(X))
    # Refitting the same instance and fitting a clone give the same tree too.
    again.fit(X, y, sample_weight=sample_weight)
    assert_trees_identical(first.tree_, again.tree_)
    assert_trees_identical(first.tree_, clone(first).fit(X, y, sample_weight=sample_weight).tree_)


@pytest.mark.parametrize("Estimator", [DecisionTreeClassifier, DecisionTreeRegressor])
def test_different_random_state_gives_different_trees(Estimator):
    # max_features="sqrt" draws 3 of the 9 features at each node.
    trees = [_fit(Estimator, max_features="sqrt", random_state=seed, max_depth=8).tree_ for seed in range(4)]
    for i in range(len(trees)):
        for j in range(i + 1, len(trees)):
            assert not trees_identical(trees[i], trees[j]), (i, j)
    # Not only deep down: the first levels' features change with the seed.
    assert len({tuple(tree.feature[:7]) for tree in trees}) == len(trees)


@pytest.mark.parametrize("Estimator", [DecisionTreeClassifier, DecisionTreeRegressor])
def test_random_state_is_irrelevant_without_feature_sampling(Estimator):
    # With every feature considered and ties broken by the lowest feature
    # index, the seed has nothing to choose (fewer than 200_000 rows, so the
    # bin thresholds are fitted on all of them).
    assert_trees_identical(
        _fit(Estimator, random_state=0, max_depth=8).tree_, _fit(Estimator, random_state=123, max_depth=8).tree_
    )


def test_integer_random_state_and_equal_seeded_generators_agree():
    a = _fit(DecisionTreeClassifier, max_features=2, random_state=7, max_depth=6)
    b = _fit(DecisionTreeClassifier, max_features=2, random_state=np.random.RandomState(7), max_depth=6)
    assert_trees_identical(a.tree_, b.tree_)


# --- export_text ------------------------------------------------------------------


def test_export_text_one_split_classifier():
    X = np.array([[1.0], [2.0], [3.0], [4.0], [5.0]])
    model = DecisionTreeClassifier(random_state=0).fit(X, [0, 0, 1, 1, 1])
    # Threshold at the midpoint of 2 and 3; no missing values in training, so
    # they go to the larger child (3 rows on the right).
    assert export_text(model) == (
        "|--- feature_0 <= 2.50\n"
        "|   |--- class: 0\n"
        "|--- feature_0 >  2.50 (missing: right)\n"
        "|   |--- class: 1\n"
    )
    assert export_text(model, feature_names=["x"], class_names=["no", "yes"], decimals=1, show_weights=True) == (
        "|--- x <= 2.5\n"
        "|   |--- weights: [2.0, 0.0] class: no\n"
        "|--- x >  2.5 (missing: right)\n"
        "|   |--- weights: [0.0, 3.0] class: yes\n"
    )


def test_export_text_missing_values_learned_left():
    X = np.array([[1.0], [2.0], [3.0], [4.0], [5.0], [np.nan], [np.nan]])
    model = DecisionTreeClassifier(random_state=0).fit(X, ["a", "a", "b", "b", "b", "a", "a"])
    assert export_text(model) == (
        "|--- feature_0 <= 2.50 (missing: left)\n"
        "|   |--- class: a\n"
        "|--- feature_0 >  2.50\n"
        "|   |--- class: b\n"
    )


def test_export_text_two_level_regressor():
    X = np.array([[0.0], [1.0], [2.0], [3.0], [10.0], [11.0]])
    y = np.array([1.0, 1.0, 2.0, 2.0, 7.0, 7.0])
    model = DecisionTreeRegressor(random_state=0).fit(X, y)
    # Root: 3.0 | 10.0 -> 6.5 (SSE 4 vs 1 < other splits); left: 1.0 | 2.0 -> 1.5.
    assert export_text(model, feature_names=["t"]) == (
        "|--- t <= 6.50 (missing: left)\n"
        "|   |--- t <= 1.50 (missing: left)\n"
        "|   |   |--- value: [1.00]\n"
        "|   |--- t >  1.50\n"
        "|   |   |--- value: [2.00]\n"
        "|--- t >  6.50\n"
        "|   |--- value: [7.00]\n"
    )
    assert export_text(model, feature_names=["t"], max_depth=0) == (
        "|--- t <= 6.50 (missing: left)\n"
        "|   |--- truncated branch of depth 2\n"
        "|--- t >  6.50\n"
        "|   |--- value: [7.00]\n"
    )


def _iris_without_ties():
    """Iris without petal width, min_samples_leaf=5: no split there has a tied
    competitor, so scikit-learn's tree does not depend on its random_state.

    Full iris does have ties (petal length <= 2.45 and petal width <= 0.8 both
    isolate setosa at the root), which scikit-learn breaks at random and
    gpuforest towards the lowest feature index.
    """
    X, y = load_iris(return_X_y=True)
    return X[:, :3], y, {"min_samples_leaf": 5}


def _regression_without_ties():
    """Continuous target, features with < 256 distinct values (exact bins)."""
    rng = np.random.RandomState(0)
    X = rng.randint(0, 200, size=(400, 5)) / 10.0
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] + rng.normal(scale=0.3, size=400)
    return X, y, {"min_samples_leaf": 5}


def _sklearn_fit_seed_independent(SkEstimator, X, y, params):
    """scikit-learn's tree, after checking it is the same for 10 seeds (no ties)."""
    fits = [SkEstimator(random_state=seed, **params).fit(X, y) for seed in range(10)]
    for other in fits[1:]:
        np.testing.assert_array_equal(other.tree_.feature, fits[0].tree_.feature)
        np.testing.assert_array_equal(other.tree_.n_node_samples, fits[0].tree_.n_node_samples)
    return fits[0]


def _strip_missing_marks(text):
    return re.sub(r" \(missing: (left|right)\)", "", text)


def test_export_text_matches_sklearn_without_the_missing_marks():
    X, y, params = _iris_without_ties()
    model = DecisionTreeClassifier(random_state=0, **params).fit(X, y)
    reference = _sklearn_fit_seed_independent(sk_tree.DecisionTreeClassifier, X, y, params)
    for options in (
        {},
        {"max_depth": 1},
        {"feature_names": ["sl", "sw", "pl"], "class_names": ["setosa", "versicolor", "virginica"]},
        {"show_weights": True, "decimals": 3},
    ):
        ours = export_text(model, **options)
        assert _strip_missing_marks(ours) == sk_tree.export_text(reference, **options)
        if "max_depth" not in options:
            # Of the two lines of every split, exactly one carries the missing-value mark.
            assert ours.count("(missing: ") == int(np.sum(model.tree_.children_left != TREE_LEAF))


def test_export_text_rejects_wrong_name_counts():
    X, y, params = _iris_without_ties()
    model = DecisionTreeClassifier(random_state=0, **params).fit(X, y)
    with pytest.raises(ValueError, match="feature_names must contain 3 elements, got 2"):
        export_text(model, feature_names=["a", "b"])
    with pytest.raises(ValueError, match="class_names must contain 3 elements, got 1"):
        export_text(model, class_names=["a"])


# --- decision_path and apply --------------------------------------------------------


def _reference_path(tree, x):
    """Nodes from the root to the leaf of row ``x``, walking the arrays."""
    node, path = 0, [0]
    while tree.children_left[node] != TREE_LEAF:
        value = x[tree.feature[node]]
        go_left = tree.missing_go_to_left[node] if np.isnan(value) else value <= tree.threshold[node]
        node = tree.children_left[node] if go_left else tree.children_right[node]
        path.append(int(node))
    return path


@pytest.mark.parametrize("Estimator", [DecisionTreeClassifier, DecisionTreeRegressor])
def test_decision_path_agrees_with_apply(Estimator):
    model = _fit(Estimator, max_features="sqrt", random_state=0, max_depth=10)
    tree = model.tree_
    X = NOISY[0][:400].astype(np.float32)
    leaves = model.apply(X)
    paths = model.decision_path(X).tocsr()
    assert paths.shape == (X.shape[0], tree.node_count)
    assert np.all(paths.data == 1)
    assert np.all(tree.children_left[leaves] == TREE_LEAF)
    depths = []
    for row in range(X.shape[0]):
        nodes = paths.indices[paths.indptr[row] : paths.indptr[row + 1]]
        expected = _reference_path(tree, X[row])
        # The nodes of an independent walk down the arrays, listed root first:
        # each node a child of the previous one, the last one the leaf of apply.
        chain = nodes.tolist()
        assert chain == expected
        assert chain[0] == 0 and chain[-1] == leaves[row]
        for parent, child in zip(chain[:-1], chain[1:]):
            assert child in (tree.children_left[parent], tree.children_right[parent])
        depths.append(len(chain) - 1)
    assert max(depths) <= model.get_depth() <= 10
    if Estimator is DecisionTreeRegressor:
        np.testing.assert_array_equal(model.predict(X), tree.value[leaves, 0, 0])
    else:
        np.testing.assert_array_equal(model.predict_proba(X), tree.value[leaves, 0])


# --- depth, leaves and importances against scikit-learn ---------------------------------


def test_depth_and_leaves_match_sklearn_on_iris():
    X, y = load_iris(return_X_y=True)
    model = DecisionTreeClassifier(random_state=0).fit(X, y)
    for seed in range(5):
        reference = sk_tree.DecisionTreeClassifier(random_state=seed).fit(X, y)
        assert model.get_depth() == reference.get_depth() == 5
        assert model.get_n_leaves() == reference.get_n_leaves() == 9


@pytest.mark.parametrize(
    "Estimator, SkEstimator, dataset",
    [
        (DecisionTreeClassifier, sk_tree.DecisionTreeClassifier, _iris_without_ties),
        (DecisionTreeRegressor, sk_tree.DecisionTreeRegressor, _regression_without_ties),
    ],
    ids=["iris", "regression"],
)
def test_same_tree_and_importances_as_sklearn_without_ties(Estimator, SkEstimator, dataset):
    X, y, params = dataset()
    model = Estimator(random_state=0, **params).fit(X, y)
    reference = _sklearn_fit_seed_independent(SkEstimator, X, y, params)
    assert model.get_depth() == reference.get_depth()
    assert model.get_n_leaves() == reference.get_n_leaves()
    assert model.tree_.node_count == reference.tree_.node_count
    np.testing.assert_allclose(model.feature_importances_, reference.feature_importances_, rtol=0, atol=1e-6)
    np.testing.assert_allclose(model.feature_importances_.sum(), 1.0)
    # Same partition of the training rows: every training row lands in a leaf
    # with the same number of rows and the same value as in scikit-learn's tree.
    ours, theirs = model.apply(X), reference.apply(X)
    np.testing.assert_array_equal(model.tree_.n_node_samples[ours], reference.tree_.n_node_samples[theirs])
    np.testing.assert_allclose(model.tree_.value[ours], reference.tree_.value[theirs], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.tree_.impurity[ours], reference.tree_.impurity[theirs], rtol=1e-9, atol=1e-12)


# A fit in a fresh process: a digest of every tree's nodes and of the predictions, printed.
THREADS_FIT = """
import hashlib, sys
from sklearn.datasets import make_classification
import gpuforest
n_jobs = None if sys.argv[1] == "None" else int(sys.argv[1])
X, y = make_classification(n_samples=3000, n_features=12, n_informative=6, n_classes=3, random_state=0)
digest = hashlib.sha256()
for model in (gpuforest.RandomForestClassifier(n_estimators=6, max_features=0.5, random_state=0, n_jobs=n_jobs),
              gpuforest.ExtraTreesClassifier(n_estimators=4, random_state=0, n_jobs=n_jobs),
              gpuforest.GradientBoostingClassifier(n_estimators=5, max_depth=4, random_state=0, device="cpu")):
    model.fit(X, y)
    digest.update(gpuforest.trees_to_dataframe(model).to_csv().encode())
    digest.update(model.predict_proba(X).tobytes())
print(digest.hexdigest())
"""


def _fit_digest(numba_threads, n_jobs):
    environment = {**os.environ, "NUMBA_NUM_THREADS": str(numba_threads)}
    completed = subprocess.run([sys.executable, "-c", THREADS_FIT, str(n_jobs)], env=environment,
                               capture_output=True, text=True, timeout=900)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed.stdout.strip()


@pytest.mark.quality
def test_same_models_whatever_the_thread_count_and_n_jobs():
    """1, 2 and 4 numba threads, and n_jobs 1, 2 and -1 within 4 threads: the same trees and predictions,
    each fitted in a fresh process (numba's thread count is fixed per process)."""
    digests = {(threads, "None"): _fit_digest(threads, None) for threads in (1, 2, 4)}
    digests.update({(4, n_jobs): _fit_digest(4, n_jobs) for n_jobs in (1, 2, -1)})
    assert len(set(digests.values())) == 1, digests
