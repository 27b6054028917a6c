"""Tests of ``gpuforest.pruning`` and the estimators' pruning parameters.

References: scikit-learn (its estimators on data that bins exactly, and its
Cython pruning run on gpuforest's own trees), scipy's ``chi2_contingency``, and
naive recursive versions of the other algorithms written here.
"""

import math
import re
import shutil
import subprocess

import numpy as np
import pytest
import scipy.stats
from sklearn import datasets
from sklearn import tree as sk_tree
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state
from sklearn.tree._tree import NODE_DTYPE, _build_pruned_tree_ccp, ccp_pruning_path
from test_bench_c45 import bench
from test_sklearn_agreement import SHALLOW_DATA, _load

import gpuforest
from gpuforest.backend import get_backend
from gpuforest.pruning import (
    collapse_subtrees,
    cost_complexity_path,
    extra_errors,
    prune_chi_square,
    prune_cost_complexity,
    prune_pessimistic,
    split_p_values,
)
from gpuforest.tree import CATEGORICAL, MULTIWAY, Tree

# --- helpers --------------------------------------------------------------------------------------


def _sklearn_tree(tree):
    """A gpuforest ``Tree`` as scikit-learn's Cython ``Tree``, to run scikit-learn's pruning on it."""
    reference = sk_tree._tree.Tree(tree.n_features, np.array([tree.value.shape[2]], dtype=np.intp), 1)
    nodes = np.zeros(tree.node_count, dtype=NODE_DTYPE)
    for name in ("feature", "threshold", "impurity", "n_node_samples", "weighted_n_node_samples", "missing_go_to_left"):
        nodes[name] = getattr(tree, name)
    nodes["left_child"] = tree.children_left
    nodes["right_child"] = tree.children_right
    reference.__setstate__(
        {"max_depth": tree.max_depth, "node_count": tree.node_count, "nodes": nodes, "values": tree.value.copy()}
    )
    return reference


def _assert_same_tree(ours, reference):
    """Both trees (``tree_``-like arrays) walked from the root in lockstep: the same nodes everywhere."""
    assert ours.node_count == reference.node_count
    stack = [(0, 0)]
    while stack:
        a, b = stack.pop()
        assert ours.n_node_samples[a] == reference.n_node_samples[b]
        np.testing.assert_allclose(ours.weighted_n_node_samples[a], reference.weighted_n_node_samples[b], rtol=1e-12)
        np.testing.assert_allclose(ours.impurity[a], reference.impurity[b], rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(ours.value[a], reference.value[b], rtol=1e-9, atol=1e-12)
        assert (ours.children_left[a] == -1) == (reference.children_left[b] == -1), (a, b)
        if ours.children_left[a] == -1:
            continue
        assert ours.feature[a] == reference.feature[b], (a, b)
        assert ours.threshold[a] == reference.threshold[b], (a, b)
        stack.append((ours.children_left[a], reference.children_left[b]))
        stack.append((ours.children_right[a], reference.children_right[b]))


def _shallow_data(name, criterion, weighted):
    is_classification, loader = SHALLOW_DATA[name]
    X, y = _load(loader, criterion)  # asserts that every feature bins exactly
    weight = np.random.RandomState(0).randint(1, 4, X.shape[0]).astype(np.float64) if weighted else None
    if is_classification:
        return X, y, weight, gpuforest.DecisionTreeClassifier, sk_tree.DecisionTreeClassifier
    return X, y, weight, gpuforest.DecisionTreeRegressor, sk_tree.DecisionTreeRegressor


# --- cost-complexity pruning ----------------------------------------------------------------------


# ``from_end``: ``ccp_alpha`` is the midpoint of the path's alphas ``-from_end - 1`` and
# ``-from_end``. scikit-learn breaks ties between features at random, so it only equals itself
# across seeds above every tie; these subtrees are.
@pytest.mark.parametrize(
    "name, criterion, weighted, from_end",
    [
        ("wine", "gini", False, 8),
        ("wine", "entropy", True, 8),
        ("diabetes_250", "squared_error", True, 8),
        ("regression_250", "poisson", False, 20),
    ],
)
def test_cost_complexity_pruning_is_sklearns(name, criterion, weighted, from_end):
    """The path equals scikit-learn's, and a ``ccp_alpha`` tree is scikit-learn's node for node."""
    X, y, weight, Ours, Reference = _shallow_data(name, criterion, weighted)
    ours = Ours(criterion=criterion, device="cpu").cost_complexity_pruning_path(X, y, sample_weight=weight)
    path = Reference(criterion=criterion, random_state=0).cost_complexity_pruning_path(X, y, sample_weight=weight)
    assert ours.ccp_alphas.shape == path.ccp_alphas.shape
    np.testing.assert_allclose(ours.ccp_alphas, path.ccp_alphas, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours.impurities, path.impurities, rtol=0, atol=1e-9)
    ccp_alpha = (path.ccp_alphas[-from_end - 1] + path.ccp_alphas[-from_end]) / 2
    ours = Ours(criterion=criterion, ccp_alpha=ccp_alpha, device="cpu").fit(X, y, sample_weight=weight)
    reference = Reference(criterion=criterion, ccp_alpha=ccp_alpha, random_state=0).fit(X, y, sample_weight=weight)
    assert ours.get_n_leaves() == reference.get_n_leaves() >= from_end
    _assert_same_tree(ours.tree_, reference.tree_)
    np.testing.assert_allclose(ours.predict(X), reference.predict(X), rtol=1e-12)


@pytest.mark.parametrize(
    "Forest, ccp_alpha",
    [(gpuforest.RandomForestClassifier, 0.01), (gpuforest.ExtraTreesRegressor, 100.0)],
)
def test_forest_trees_are_pruned_as_sklearn_prunes_them(Forest, ccp_alpha):
    """Each tree of a ``ccp_alpha`` forest is scikit-learn's pruning of the unpruned forest's tree."""
    X, y = datasets.load_diabetes(return_X_y=True)
    X, y = X[:100], y[:100]
    if Forest is gpuforest.RandomForestClassifier:
        y = np.digitize(y, [100, 200])
    params = dict(n_estimators=3, max_features=0.5, random_state=0, device="cpu")
    grown = Forest(**params).fit(X, y)
    pruned = Forest(ccp_alpha=ccp_alpha, **params).fit(X, y)
    for tree, pruned_tree in zip(grown.trees_, pruned.trees_):
        reference = _sklearn_tree(tree)
        path = ccp_pruning_path(reference)
        ccp_alphas, impurities = cost_complexity_path(tree)
        np.testing.assert_allclose(ccp_alphas, path["ccp_alphas"], rtol=0, atol=1e-12)
        np.testing.assert_allclose(impurities, path["impurities"], rtol=0, atol=1e-12)
        reference_pruned = sk_tree._tree.Tree(tree.n_features, np.array([tree.value.shape[2]], dtype=np.intp), 1)
        _build_pruned_tree_ccp(reference_pruned, reference, ccp_alpha)
        assert 1 < reference_pruned.node_count < tree.node_count
        _assert_same_tree(pruned_tree, reference_pruned)
    np.testing.assert_array_equal(pruned.estimators_[0].tree_.children_left, pruned.trees_[0].children_left)


def test_pruned_tree_keeps_children_consecutive_and_predicts_from_its_leaves():
    X, y = datasets.load_wine(return_X_y=True)
    tree = gpuforest.DecisionTreeClassifier(device="cpu").fit(X, y).tree_
    pruned = prune_cost_complexity(tree, 0.02)
    internal = pruned.children_left != -1
    np.testing.assert_array_equal(pruned.children_right[internal], pruned.children_left[internal] + 1)
    # Breadth-first: every child after its parent, depths one more than the parent's.
    parents = np.flatnonzero(internal)
    assert np.all(pruned.children_left[parents] > parents)
    np.testing.assert_array_equal(pruned.node_depth[pruned.children_left[parents]], pruned.node_depth[parents] + 1)
    assert set(np.unique(pruned.feature[~internal])) == {-2}
    # Every row lands in a leaf of the pruned tree, which holds the class proportions of its rows.
    leaves = pruned.apply(X.astype(np.float32), get_backend("cpu"))
    assert np.all(pruned.children_left[leaves] == -1)
    for leaf in np.unique(leaves):
        proportions = np.bincount(y[leaves == leaf], minlength=3) / np.sum(leaves == leaf)
        np.testing.assert_allclose(pruned.value[leaf, 0], proportions)


@pytest.mark.parametrize(
    "Estimator",
    [gpuforest.DecisionTreeClassifier, gpuforest.DecisionTreeRegressor, gpuforest.RandomForestClassifier,
     gpuforest.ExtraTreesRegressor],
)
def test_negative_ccp_alpha_is_refused(Estimator):
    with pytest.raises(ValueError, match="ccp_alpha"):
        Estimator(ccp_alpha=-0.1, device="cpu").fit([[0.0], [1.0]], [0, 1])


# --- naive references on grown trees --------------------------------------------------------------


def _rows_at(tree, X):
    """Rows of ``X`` through each node: a list of index arrays, from the decision path."""
    path = tree.decision_path(X.astype(np.float32), get_backend("cpu")).tocsc()
    return [path[:, node].nonzero()[0] for node in range(tree.node_count)]


def _children(tree, node):
    return list(range(tree.children_left[node], tree.children_right[node] + 1))


def _assert_pruned_from(pruned, original, kept):
    """``pruned`` is ``original`` with exactly the split nodes ``kept`` kept (and made leaves elsewhere)."""
    stack = [(0, 0)]
    n_nodes = 0
    while stack:
        a, b = stack.pop()
        n_nodes += 1
        np.testing.assert_array_equal(pruned.value[a], original.value[b])
        assert pruned.n_node_samples[a] == original.n_node_samples[b]
        if b not in kept:
            assert pruned.children_left[a] == -1, f"node {b} of the grown tree should be a leaf"
            continue
        assert pruned.children_left[a] != -1, f"node {b} of the grown tree should stay a split"
        assert (pruned.feature[a], pruned.threshold[a]) == (original.feature[b], original.threshold[b])
        stack.extend(zip(_children(pruned, a), _children(original, b)))
    assert n_nodes == pruned.node_count


def _classification_data(n_samples=400, seed=0):
    X, y = datasets.make_classification(
        n_samples=n_samples, n_features=5, n_informative=3, n_redundant=0, n_classes=3, flip_y=0.15,
        random_state=seed,
    )
    # Quarters: every sum of weights is exact, so equal losses are equal whatever the order of the sums.
    weight = np.random.RandomState(seed).randint(1, 9, n_samples) / 4
    return X, y, weight


def _naive_chi_square_kept(tree, X, y, weight, significance):
    """Splits kept top-down while scipy's chi-square test (on the training rows) has p < significance."""
    rows_at = _rows_at(tree, X)
    n_classes = tree.value.shape[2]
    kept, stack = set(), [0]
    while stack:
        node = stack.pop()
        if tree.children_left[node] == -1:
            continue
        table = np.array([np.bincount(y[rows_at[c]], weights=weight[rows_at[c]], minlength=n_classes)
                          for c in _children(tree, node)])
        table = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
        p_value = 1.0 if min(table.shape) < 2 else scipy.stats.chi2_contingency(table, correction=False).pvalue
        if p_value < significance:
            kept.add(node)
            stack.extend(_children(tree, node))
    return kept


def _naive_validation_losses(tree, X_val, y_val, weight_val, classification):
    """Each node's validation loss as a leaf, from the rows reaching it."""
    rows_at = _rows_at(tree, X_val)
    losses = []
    for node, rows in enumerate(rows_at):
        if classification:
            losses.append(np.sum(weight_val[rows] * (y_val[rows] != np.argmax(tree.value[node, 0]))))
        else:
            losses.append(np.sum(weight_val[rows] * (y_val[rows] - tree.value[node, 0, 0]) ** 2))
    return losses


def _naive_reduced_error_kept(tree, X_val, y_val, weight_val, classification):
    """Quinlan's reduced-error pruning, recursively: (loss of the pruned subtree, splits kept)."""
    leaf_loss = _naive_validation_losses(tree, X_val, y_val, weight_val, classification)

    def prune(node):
        if tree.children_left[node] == -1:
            return leaf_loss[node], set()
        results = [prune(child) for child in _children(tree, node)]
        subtree_loss = sum(loss for loss, _ in results)
        if leaf_loss[node] <= subtree_loss:
            return leaf_loss[node], set()
        return subtree_loss, {node}.union(*(kept for _, kept in results))

    return prune(0)[1]


def _naive_validation_kept(tree, X_val, y_val, weight_val, classification):
    """Splits kept top-down while the children as leaves lose less than their parent as a leaf."""
    leaf_loss = _naive_validation_losses(tree, X_val, y_val, weight_val, classification)
    kept, stack = set(), [0]
    while stack:
        node = stack.pop()
        if tree.children_left[node] != -1 and sum(leaf_loss[c] for c in _children(tree, node)) < leaf_loss[node]:
            kept.add(node)
            stack.extend(_children(tree, node))
    return kept


def _naive_mdl_kept(tree, X, y, weight):
    """Mehta, Rissanen & Agrawal's MDL pruning, recursively, with the counts taken from the training rows."""
    rows_at = _rows_at(tree, X)
    k = tree.value.shape[2]

    def class_bits(counts):
        n = counts.sum()
        if n == 0:  # an empty branch: no labels to encode
            return 0.0
        data = sum(c * math.log2(n / c) for c in counts if c > 0)
        return data + (k - 1) / 2 * math.log2(n / 2) + math.log2(math.pi ** (k / 2) / math.gamma(k / 2))

    def prune(node):
        rows = rows_at[node]
        leaf = 1 + class_bits(np.bincount(y[rows], weights=weight[rows], minlength=k))
        if tree.children_left[node] == -1:
            return leaf, set()
        v = np.unique(X[rows, tree.feature[node]].astype(np.float32)).size
        results = [prune(child) for child in _children(tree, node)]
        # A multiway split has no value to encode, a threshold one among v - 1.
        value_bits = math.log2(v - 1) if v > 2 and tree.split_type[node] != MULTIWAY else 0.0
        split = 1 + math.log2(X.shape[1]) + value_bits + sum(bits for bits, _ in results)
        if leaf <= split:
            return leaf, set()
        return split, {node}.union(*(kept for _, kept in results))

    return prune(0)[1]


# --- chi-square pre-pruning -----------------------------------------------------------------------


def test_min_split_significance_keeps_the_splits_scipys_chi_square_test_keeps():
    X, y, weight = _classification_data()
    grown = gpuforest.DecisionTreeClassifier(max_depth=6, device="cpu").fit(X, y, sample_weight=weight)
    for significance in (0.001, 0.01):
        kept = _naive_chi_square_kept(grown.tree_, X, y, weight, significance)
        pruned = gpuforest.DecisionTreeClassifier(max_depth=6, min_split_significance=significance, device="cpu")
        pruned.fit(X, y, sample_weight=weight)
        assert 3 <= len(kept) < np.sum(grown.tree_.children_left != -1) * 3 // 4
        _assert_pruned_from(pruned.tree_, grown.tree_, kept)


def test_chi_square_pre_pruning_refuses_best_first_growth():
    with pytest.raises(ValueError, match="max_leaf_nodes"):
        gpuforest.DecisionTreeClassifier(min_split_significance=0.05, max_leaf_nodes=8, device="cpu").fit(
            [[0.0], [1.0]], [0, 1]
        )


# --- validation pruning ---------------------------------------------------------------------------


@pytest.mark.parametrize("pruning", ["reduced_error", "validation"])
@pytest.mark.parametrize("classification", [True, False])
def test_validation_pruning_on_an_eval_set_matches_the_naive_algorithm(pruning, classification):
    X, y, weight = _classification_data(500)
    Estimator = gpuforest.DecisionTreeClassifier
    if not classification:
        Estimator = gpuforest.DecisionTreeRegressor
        y = X[:, 0] + np.sin(3 * X[:, 1]) + np.random.RandomState(1).normal(0, 0.5, X.shape[0])
    train, val = slice(0, 350), slice(350, None)
    grown = Estimator(max_depth=7, device="cpu").fit(X[train], y[train])
    eval_set = (X[val], y[val], weight[val])
    pruned = Estimator(max_depth=7, pruning=pruning, device="cpu").fit(X[train], y[train], eval_set=eval_set)
    naive = _naive_reduced_error_kept if pruning == "reduced_error" else _naive_validation_kept
    kept = naive(grown.tree_, X[val], y[val], weight[val], classification)
    assert 1 <= len(kept) < grown.tree_.node_count // 2
    _assert_pruned_from(pruned.tree_, grown.tree_, kept)


def test_reduced_error_pruning_never_loses_validation_accuracy_and_splits_stratified():
    X, y, _ = _classification_data(600, seed=3)
    grown = gpuforest.DecisionTreeClassifier(device="cpu", random_state=0).fit(X[:500], y[:500])
    pruned = gpuforest.DecisionTreeClassifier(pruning="reduced_error", device="cpu", random_state=0)
    pruned.fit(X[:500], y[:500], eval_set=(X[500:], y[500:]))
    assert pruned.score(X[500:], y[500:]) >= grown.score(X[500:], y[500:])
    assert pruned.get_n_leaves() < grown.get_n_leaves() / 3
    # Without eval_set, a stratified validation_fraction of the rows is left out of growth.
    split = gpuforest.DecisionTreeClassifier(pruning="validation", validation_fraction=0.2, device="cpu")
    split.fit(X[:500], y[:500])
    n_val = np.ceil(0.2 * 500)
    root_counts = split.tree_.value[0, 0] * split.tree_.weighted_n_node_samples[0]
    assert split.tree_.n_node_samples[0] == 500 - n_val
    np.testing.assert_allclose(root_counts, np.bincount(y[:500]) * 0.8, atol=1)


def test_forest_prunes_each_tree_on_its_out_of_bag_rows():
    X, y, _ = _classification_data(300)
    params = dict(n_estimators=3, max_depth=6, random_state=0, device="cpu")
    grown = gpuforest.RandomForestClassifier(**params).fit(X, y)
    pruned = gpuforest.RandomForestClassifier(pruning="reduced_error", **params).fit(X, y)
    counts = grown._sample_counts(get_backend("cpu"), 0, 3, X.shape[0])
    for tree, pruned_tree, tree_counts in zip(grown.trees_, pruned.trees_, counts):
        out_of_bag = tree_counts == 0
        kept = _naive_reduced_error_kept(tree, X[out_of_bag], y[out_of_bag], np.ones(out_of_bag.sum()), True)
        _assert_pruned_from(pruned_tree, tree, kept)


@pytest.mark.parametrize(
    "class_counts, validation_fraction",
    [([10, 10, 10], 0.1), ([6, 7, 7], 0.1), ([1, 10, 10], 0.2), ([2, 2], 0.5), ([3, 3, 3], 6), ([5, 5], 2)],
)
def test_stratified_exactly_where_scikit_learn_can_stratify(class_counts, validation_fraction):
    y = np.repeat(np.arange(len(class_counts)), class_counts)
    try:
        train_test_split(y, test_size=validation_fraction, stratify=y, random_state=0)
        stratifiable = True
    except ValueError:
        stratifiable = False
    assert gpuforest.pruning._can_stratify(y, validation_fraction) == stratifiable


def test_classes_too_small_to_stratify_split_uniformly():
    """20 rows of 3 classes: 2 validation rows cannot hold every class, so the split is train_test_split's
    uniform one with the tree's seed, the same as giving that split by hand."""
    X, y, _ = _classification_data(20, seed=1)
    seed = check_random_state(0).randint(np.iinfo(np.int32).max)
    X_fit, X_val, y_fit, y_val = train_test_split(X, y, test_size=0.1, random_state=seed)
    params = dict(pruning="reduced_error", random_state=0, device="cpu")
    automatic = gpuforest.DecisionTreeClassifier(**params).fit(X, y)
    by_hand = gpuforest.DecisionTreeClassifier(**params).fit(X_fit, y_fit, eval_set=(X_val, y_val))
    assert automatic.tree_.n_node_samples[0] == 18
    for name in ("children_left", "children_right", "feature", "threshold", "n_node_samples", "value"):
        np.testing.assert_array_equal(getattr(automatic.tree_, name), getattr(by_hand.tree_, name))


@pytest.mark.parametrize("forest", [gpuforest.RandomForestClassifier, gpuforest.ExtraTreesClassifier])
def test_forests_refuse_bad_pruning_input(forest):
    """#14's bad input on the forests that prune: a negative confidence factor, a validation set of the wrong width."""
    X, y, _ = _classification_data(60)
    with pytest.raises(ValueError, match="confidence_factor"):
        forest(n_estimators=2, pruning="pessimistic", confidence_factor=-0.25, device="cpu").fit(X, y)
    with pytest.raises(ValueError, match="X_val has 4 features, but X has 5"):
        forest(n_estimators=2, pruning="reduced_error", device="cpu").fit(X, y, eval_set=(X[:, :4], y))


def test_validation_set_errors_name_the_problem():
    X, y, _ = _classification_data(100)
    tree = gpuforest.DecisionTreeClassifier(pruning="reduced_error", device="cpu")
    with pytest.raises(ValueError, match="X_val has 4 features, but X has 5"):
        tree.fit(X, y, eval_set=(X[:, :4], y))
    with pytest.raises(ValueError, match="not seen in fit"):
        tree.fit(X, y, eval_set=(X, y + 5))
    with pytest.raises(ValueError, match="same number of rows"):
        tree.fit(X, y, eval_set=(X, y[:50]))
    with pytest.raises(ValueError, match="eval_set is only used by"):
        gpuforest.RandomForestRegressor(n_estimators=2, device="cpu").fit(X, y, eval_set=(X, y))
    with pytest.raises(ValueError, match="pruning"):
        gpuforest.DecisionTreeRegressor(pruning="mdl", device="cpu").fit(X, y)


# --- minimum description length -------------------------------------------------------------------


def test_mdl_pruning_matches_the_naive_coding():
    X, y, weight = _classification_data(400)
    X = np.round(X, 1)  # repeated values: the threshold codes count distinct values, not rows
    grown = gpuforest.DecisionTreeClassifier(device="cpu").fit(X, y, sample_weight=weight)
    pruned = gpuforest.DecisionTreeClassifier(pruning="mdl", device="cpu").fit(X, y, sample_weight=weight)
    kept = _naive_mdl_kept(grown.tree_, X, y, weight)
    assert 2 <= len(kept) < grown.tree_.node_count // 4
    _assert_pruned_from(pruned.tree_, grown.tree_, kept)


def test_mdl_pruning_of_id3_trees_with_empty_branches_matches_the_naive_coding():
    rng = np.random.default_rng(0)
    X = np.stack([rng.integers(0, k, 60) for k in (3, 5, 2)], axis=1).astype(float)
    y = ((X[:, 0] == 1) | (X[:, 1] >= 3) & (X[:, 2] == 1) ^ (rng.random(60) < 0.05)).astype(int)
    id3 = dict(algorithm="id3", categorical_features=[0, 1, 2], device="cpu")
    grown = gpuforest.DecisionTreeClassifier(**id3).fit(X, y)
    pruned = gpuforest.DecisionTreeClassifier(pruning="mdl", **id3).fit(X, y)
    kept = _naive_mdl_kept(grown.tree_, X, y, np.ones(60))
    assert 1 <= len(kept) < np.sum(grown.tree_.children_left != -1)
    # An empty branch costs no label bits: its split is cut like any other.
    assert (grown.tree_.n_node_samples == 0).any() and not (pruned.tree_.n_node_samples == 0).any()
    _assert_pruned_from(pruned.tree_, grown.tree_, kept)


# --- n-ary nodes ----------------------------------------------------------------------------------


def _multiway_tree():
    """A root with three children (a MULTIWAY split on feature 0); its second and third children split in two.

    Leaves' class counts: node 1 (10, 0), node 4 (0, 5), node 5 (4, 1), node 6 (1, 6), node 7 (0, 3).
    """
    counts = np.array([[15, 15], [10, 0], [4, 6], [1, 9], [0, 5], [4, 1], [1, 6], [0, 3]], dtype=np.float64)
    weight = counts.sum(axis=1)
    proportions = counts / weight[:, None]
    leaf, undefined = -1, -2
    tree = Tree(
        n_features=2,
        children_left=np.array([1, leaf, 4, 6, leaf, leaf, leaf, leaf], dtype=np.int32),
        children_right=np.array([3, leaf, 5, 7, leaf, leaf, leaf, leaf], dtype=np.int32),
        feature=np.array([0, undefined, 1, 1] + [undefined] * 4, dtype=np.int32),
        threshold=np.array([undefined, undefined, 0.5, 1.5] + [undefined] * 4, dtype=np.float64),
        bin_threshold=np.array([undefined, undefined, 0, 1] + [undefined] * 4, dtype=np.int32),
        missing_go_to_left=np.zeros(8, dtype=bool),
        value=proportions[:, None, :],
        impurity=1.0 - np.sum(proportions**2, axis=1),
        n_node_samples=weight.astype(np.int64),
        weighted_n_node_samples=weight,
        depth=np.array([0, 1, 1, 1, 2, 2, 2, 2], dtype=np.int64),
    )
    tree.split_type[0] = MULTIWAY
    return tree


def _naive_weakest_link_path(tree):
    """Breiman et al.'s weakest-link cutting on lists of children: (alphas, impurities, splits kept after each step)."""
    children = {node: [] for node in range(tree.node_count)}
    for node in np.flatnonzero(tree.children_left != -1):
        children[node] = _children(tree, node)
    risk = tree.weighted_n_node_samples * tree.impurity / tree.weighted_n_node_samples[0]

    def leaves(node):
        return [node] if not children[node] else [leaf for child in children[node] for leaf in leaves(child)]

    def splits(node):
        return [] if not children[node] else [node] + [split for child in children[node] for split in splits(child)]

    alphas, impurities, kept = [0.0], [risk[leaves(0)].sum()], [set(splits(0))]
    while children[0]:
        alpha, weakest = min(
            ((risk[node] - risk[leaves(node)].sum()) / (len(leaves(node)) - 1), node) for node in splits(0)
        )
        children[weakest] = []
        alphas.append(alpha)
        impurities.append(risk[leaves(0)].sum())
        kept.append(set(splits(0)))
    return np.array(alphas), np.array(impurities), kept


def test_cost_complexity_pruning_of_a_multiway_tree_is_the_weakest_link_cutting():
    tree = _multiway_tree()
    alphas, impurities, kept = _naive_weakest_link_path(tree)
    path = cost_complexity_path(tree)
    assert alphas.shape == (4,)
    np.testing.assert_allclose(path[0], alphas, rtol=1e-12)
    np.testing.assert_allclose(path[1], impurities, rtol=1e-12)
    for step in range(1, 4):
        pruned = prune_cost_complexity(tree, (alphas[step - 1] + alphas[step]) / 2)
        _assert_pruned_from(pruned, tree, kept[step - 1])
        internal = np.flatnonzero(pruned.children_left != -1)
        assert np.all(pruned.children_left[internal] > internal)  # breadth-first, children after parents


def test_chi_square_p_values_of_a_multiway_tree_are_scipys():
    tree = _multiway_tree()
    expected = np.ones(tree.node_count)
    for node in (0, 2, 3):
        table = np.array([tree.value[c, 0] * tree.weighted_n_node_samples[c] for c in _children(tree, node)])
        expected[node] = scipy.stats.chi2_contingency(table[:, table.sum(axis=0) > 0], correction=False).pvalue
    np.testing.assert_allclose(split_p_values(tree), expected, rtol=1e-10)
    for significance in (0.001, 0.05):
        assert expected[0] < significance  # the root stays; its children's splits by their own test
        kept = {0} | {node for node in (2, 3) if expected[node] < significance}
        _assert_pruned_from(prune_chi_square(tree, significance), tree, kept)


# --- error-based pruning (C4.5) -------------------------------------------------------------------


def test_extra_errors_give_quinlans_worked_example():
    """Quinlan (1993), section 4.2: the congressional voting subtree on 'education spending'.

    The book's ``U_25%(E, N)`` is ``(E + extra_errors(N, E)) / N``, printed to three decimals.
    """

    def upper(n, e):
        return (e + extra_errors(n, e, 0.25)) / n

    for n, e, published in [(6, 0, 0.206), (9, 0, 0.143), (1, 0, 0.750), (16, 1, 0.157)]:
        assert round(upper(n, e), 3) == published
    # "6 x 0.206 + 9 x 0.143 + 1 x 0.750 = 3.273" for the subtree, "16 x 0.157 = 2.512" as a leaf: the
    # book multiplies the rounded limits, each within 5e-4.
    np.testing.assert_allclose(6 * upper(6, 0) + 9 * upper(9, 0) + upper(1, 0), 3.273, atol=16 * 5e-4)
    np.testing.assert_allclose(16 * upper(16, 1), 2.512, atol=16 * 5e-4)
    # One level up: "151 x U(0, 151) + 1 x U(0, 1) + 2.512 = 4.642" against "168 x U(1, 168) = 2.610".
    np.testing.assert_allclose(151 * upper(151, 0) + upper(1, 0) + 2.512, 4.642, atol=1e-3)
    np.testing.assert_allclose(168 * upper(168, 1), 2.610, atol=1e-3)


# The entries of C4.5's table of normal deviates, and the default.
@pytest.mark.parametrize("confidence_factor", [0.001, 0.01, 0.05, 0.1, 0.2, 0.25, 0.4])
def test_extra_errors_are_the_binomial_upper_limit(confidence_factor):
    n = np.array([1, 2, 5, 16, 40, 168, 1000.0])
    # No error: the exact limit, the p with P(no error | N, p) = CF, a beta quantile.
    exact = [n_cases * scipy.stats.beta.ppf(1 - confidence_factor, 1, n_cases) for n_cases in n]
    np.testing.assert_allclose([extra_errors(n_cases, 0, confidence_factor) for n_cases in n], exact, rtol=1e-12)
    # E >= 1 errors: Wilson's upper limit with a continuity correction at the normal deviate of CF,
    # which C4.5 reads off a two-decimal table: equal within its rounding at the table's entries.
    z = scipy.stats.norm.isf(confidence_factor)
    for n_cases, n_errors in [(16, 1), (40, 3), (168, 1), (1000, 250), (5, 2)]:
        f = (n_errors + 0.5) / n_cases
        wilson = (f + z**2 / (2 * n_cases) + z * np.sqrt(f * (1 - f) / n_cases + z**2 / (4 * n_cases**2))) / (
            1 + z**2 / n_cases
        )
        limit = (n_errors + extra_errors(n_cases, n_errors, confidence_factor)) / n_cases
        if confidence_factor != 0.25:
            np.testing.assert_allclose(limit, wilson, rtol=5e-3)
        if confidence_factor >= 0.1:  # the normal approximation is close to the exact binomial limit there
            clopper_pearson = scipy.stats.beta.ppf(1 - confidence_factor, n_errors + 1, n_cases - n_errors)
            np.testing.assert_allclose(limit, clopper_pearson, rtol=0.1)
    # stats.c between the formulas: linear in E from 0 to 1 error, and 0.67 (N - E) in the last half case.
    no_error, one_error = extra_errors(3, 0, confidence_factor), extra_errors(3, 1, confidence_factor)
    np.testing.assert_allclose(extra_errors(3, 0.25, confidence_factor), 0.75 * no_error + 0.25 * one_error)
    np.testing.assert_allclose(extra_errors(1.25, 1, confidence_factor), 0.67 * 0.25)


@pytest.mark.parametrize("confidence_factor", [-0.1, 0.0, 0.6])
def test_confidence_factor_out_of_range_is_refused(confidence_factor):
    with pytest.raises(ValueError, match="confidence_factor"):
        gpuforest.DecisionTreeClassifier(pruning="pessimistic", confidence_factor=confidence_factor, device="cpu").fit(
            [[0.0], [1.0]], [0, 1]
        )
    with pytest.raises(ValueError, match="confidence_factor"):
        extra_errors(10, 1, confidence_factor)
    with pytest.raises(ValueError, match="pruning"):
        gpuforest.DecisionTreeRegressor(pruning="pessimistic", device="cpu").fit([[0.0], [1.0]], [0.0, 1.0])


class _Node:
    """A node of a linked tree, as C4.5's ``TreeRec``: a test and children (none at a leaf), class counts and rows."""

    def __init__(self, test, children, counts, n_rows):
        self.test, self.children, self.counts, self.n_rows = test, children, counts, n_rows


def _linked(tree):
    """A ``Tree`` as linked ``_Node`` objects; a test is ``(feature, split_type, threshold, missing_go_to_left,
    left category codes)``, ``missing_go_to_left`` None in a tree whose unknown values go down every branch."""

    def build(node):
        counts = tree.value[node, 0] * tree.weighted_n_node_samples[node]
        if tree.children_left[node] == -1:
            return _Node(None, [], counts, tree.n_node_samples[node])
        codes = {code for code in range(256) if tree.category_bitset[node, code // 32] >> (code % 32) & 1}
        missing_left = None if tree.missing_fractional else tree.missing_go_to_left[node]
        test = (tree.feature[node], tree.split_type[node], tree.threshold[node], missing_left, codes)
        return _Node(test, [build(child) for child in _children(tree, node)], counts, tree.n_node_samples[node])

    return build(0)


def _naive_branch(node, value):
    """The branch a value takes at a linked node, by ``gpuforest.tree``'s rules; None where it stops (unknown)."""
    _, kind, threshold, missing_left, left_codes = node.test
    if missing_left is None and np.isnan(value):
        return None
    is_code = value >= 0 and value == np.floor(value)  # False for NaN
    if kind == MULTIWAY:
        return int(value) if is_code and value < len(node.children) else None
    if kind == CATEGORICAL and is_code and value < 256:
        return 0 if int(value) in left_codes else 1
    if kind == CATEGORICAL or np.isnan(value):
        return 0 if missing_left else 1
    return 0 if value <= threshold else 1


def _naive_groups(node, cases, X):
    """C4.5's ``Group``: per branch, ``(share, cases)`` (its known cases and the unknown ones times its
    share of the known weight), or None for a branch no known case takes."""
    known, unknown = [[] for _ in node.children], []
    for row, weight in cases:
        branch = _naive_branch(node, X[row, node.test[0]])
        (unknown if branch is None else known[branch]).append((row, weight))
    total = sum(weight for branch in known for _, weight in branch)
    groups = []
    for branch in known:
        share = sum(weight for _, weight in branch) / total
        groups.append((share, branch + [(row, weight * share) for row, weight in unknown]) if branch else None)
    return groups


def _naive_c45(node, cases, update, data, raises):
    """C4.5's ``EstimateErrors`` (release 8, prune.c) on linked nodes, recursively, raised subtrees
    copied into their parent as prune.c's ``memcpy``; ``raises`` collects the raised nodes."""
    X, y, n_classes, confidence_factor, subtree_raising = data
    counts = np.zeros(n_classes)
    for row, weight in cases:
        counts[y[row]] += weight
    n_cases = sum(weight for _, weight in cases)
    leaf = n_cases - counts.max() + extra_errors(n_cases, n_cases - counts.max(), confidence_factor)
    if update:
        node.counts, node.n_rows = counts, len(cases)
    if not node.children:
        return leaf
    groups = _naive_groups(node, cases, X)
    subtree = sum(_naive_c45(child, group[1], update, data, raises) for child, group in zip(node.children, groups)
                  if group is not None)
    if not update:
        return subtree
    shares = [-1.0 if group is None else group[0] for group in groups]
    largest = max(b for b, share in enumerate(shares) if share == max(shares))
    branch = _naive_c45(node.children[largest], cases, False, data, raises) if subtree_raising else np.inf
    if leaf <= branch + 0.1 and leaf <= subtree + 0.1:
        node.children = []
        return leaf
    if branch <= subtree + 0.1:
        raised = node.children[largest]
        estimate = _naive_c45(raised, cases, True, data, raises)
        node.__dict__.update(raised.__dict__)
        raises.append(node)
        return estimate
    return subtree


def _naive_pessimistic(tree, X, y, weight, confidence_factor=0.25, subtree_raising=True):
    """The linked tree C4.5 prunes ``tree`` to on the rows ``X, y, weight``, and the raised nodes."""
    root, raises = _linked(tree), []
    cases = [(row, w) for row, w in enumerate(weight) if w > 0]
    data = (X, y, tree.value.shape[2], confidence_factor, subtree_raising)
    _naive_c45(root, cases, True, data, raises)
    return root, raises


def _assert_same_as_linked(tree, root, impurity=None):
    """``tree`` is the linked tree ``root`` node for node (breadth-first, depths consistent), its class
    counts and rows; ``impurity``: a function of class counts each node's impurity must equal."""
    stack, n_nodes = [(0, root, 0)], 0
    while stack:
        node, linked, depth = stack.pop()
        n_nodes += 1
        counts = tree.value[node, 0] * tree.weighted_n_node_samples[node]
        np.testing.assert_allclose(counts, linked.counts, rtol=1e-9, atol=1e-9)
        assert tree.n_node_samples[node] == linked.n_rows
        assert tree.node_depth[node] == depth
        if impurity is not None:
            np.testing.assert_allclose(tree.impurity[node], impurity(linked.counts), rtol=1e-9, atol=1e-12)
        if not linked.children:
            assert tree.children_left[node] == -1, f"node {node} should be a leaf"
            continue
        assert tree.children_left[node] > node, f"node {node} should be a split, its children after it"
        assert (tree.feature[node], tree.split_type[node], tree.threshold[node]) == linked.test[:3]
        children = _children(tree, node)
        assert len(children) == len(linked.children)
        stack.extend((child, linked_child, depth + 1) for child, linked_child in zip(children, linked.children))
    assert n_nodes == tree.node_count


def _gini(counts):
    p = counts / counts.sum()
    return 1 - p @ p


@pytest.mark.parametrize("subtree_raising", [True, False])
def test_pessimistic_pruning_of_a_grown_tree_is_c45s(subtree_raising):
    X, y, weight = _classification_data(400, seed=4)
    grown = gpuforest.DecisionTreeClassifier(device="cpu").fit(X, y, sample_weight=weight)
    root, raises = _naive_pessimistic(grown.tree_, X, y, weight, subtree_raising=subtree_raising)
    pruned = gpuforest.DecisionTreeClassifier(pruning="pessimistic", subtree_raising=subtree_raising, device="cpu")
    pruned.fit(X, y, sample_weight=weight)
    assert (len(raises) > 0) == subtree_raising
    assert pruned.tree_.node_count < grown.tree_.node_count * 3 // 4
    _assert_same_as_linked(pruned.tree_, root, impurity=_gini)


def _count_rows(tree, X, y):
    """Fill the class counts, weights, rows and gini impurities of a hand-built ``tree`` from its rows ``X, y``,
    routed as C4.5 routes them (unknown values shared among branches; a branch without rows predicts as
    its parent)."""

    def count(node, index, cases, parent_value):
        node.counts = np.bincount([y[row] for row, _ in cases], weights=[w for _, w in cases], minlength=n_classes)
        total = node.counts.sum()
        tree.value[index, 0] = node.counts / total if total > 0 else parent_value
        tree.weighted_n_node_samples[index] = total
        tree.n_node_samples[index] = len(cases)
        tree.impurity[index] = _gini(node.counts) if total > 0 else 0.0
        if node.children:
            groups = _naive_groups(node, cases, X)
            for child, child_index, group in zip(node.children, _children(tree, index), groups):
                count(child, child_index, [] if group is None else group[1], tree.value[index, 0])

    n_classes = tree.value.shape[2]
    count(_linked(tree), 0, [(row, 1.0) for row in range(y.shape[0])], None)
    return tree


def _hand_built_tree(children_left, children_right, feature, threshold, missing_go_to_left, depth, n_features=3,
                     n_classes=2):
    """A ``Tree`` of these arrays, its statistics zero (``_count_rows`` fills them)."""
    n_nodes = len(children_left)
    return Tree(
        n_features=n_features, children_left=np.array(children_left, dtype=np.int32),
        children_right=np.array(children_right, dtype=np.int32), feature=np.array(feature, dtype=np.int32),
        threshold=np.array(threshold, dtype=np.float64), bin_threshold=np.full(n_nodes, -2, dtype=np.int32),
        missing_go_to_left=np.array(missing_go_to_left), value=np.zeros((n_nodes, 1, n_classes)),
        impurity=np.zeros(n_nodes),
        n_node_samples=np.zeros(n_nodes, dtype=np.int64), weighted_n_node_samples=np.zeros(n_nodes),
        depth=np.array(depth),
    )


def test_subtree_raising_takes_the_last_of_equally_large_branches():
    """prune.c keeps the last branch of the largest share: here the right one, whose split (feature 1)
    classifies every row; raising the left one (a leaf) would keep the whole tree."""
    X = np.column_stack([np.repeat([0.0, 1.0], 10), np.tile(np.arange(10) / 10, 2), np.zeros(20)])
    y = (X[:, 1] >= 0.5).astype(np.int64)
    tree = _count_rows(_hand_built_tree(
        [1, -1, 3, -1, -1], [2, -1, 4, -1, -1], [0, -2, 1, -2, -2], [0.5, -2, 0.45, -2, -2], [False] * 5,
        [0, 1, 1, 2, 2],
    ), X, y)
    pruned = prune_pessimistic(tree, X, y, np.ones(20), "gini")
    root, raises = _naive_pessimistic(tree, X, y, np.ones(20))
    assert len(raises) == 1 and pruned.feature[0] == 1 and pruned.node_count == 3
    np.testing.assert_array_equal(pruned.n_node_samples, [20, 10, 10])
    _assert_same_as_linked(pruned, root, impurity=_gini)


def _multiway_data(n_samples=300):
    """Feature 0: codes 0-2, the class ``x0 == 0`` with 10% of the labels flipped, 10% of the codes missing;
    1: uniform and 2: codes 0-5, both unrelated to the class. A tree whose root tests feature 1 and whose
    larger branch tests feature 0 (a MULTIWAY split), the other feature 2 (CATEGORICAL) then 1, with the
    rows' class counts."""
    random = np.random.RandomState(0)
    X = np.column_stack([random.choice(3, n_samples, p=[0.5, 0.3, 0.2]), random.rand(n_samples),
                         random.randint(0, 6, n_samples)]).astype(np.float32)
    y = (X[:, 0] == 0).astype(np.int64) ^ (random.rand(n_samples) < 0.1)
    X[random.rand(n_samples) < 0.1, 0] = np.nan
    leaf, undefined = -1, -2
    tree = _hand_built_tree(
        [1, 3, 6, leaf, leaf, leaf, 8, leaf, leaf, leaf], [2, 5, 7, leaf, leaf, leaf, 9, leaf, leaf, leaf],
        [1, 0, 2, undefined, undefined, undefined, 1, undefined, undefined, undefined],
        [0.6, undefined, undefined, undefined, undefined, undefined, 0.8, undefined, undefined, undefined],
        [False, False, True] + [False] * 7, [0, 1, 1, 2, 2, 2, 2, 2, 3, 3],
    )
    tree.split_type[[1, 2]] = [MULTIWAY, CATEGORICAL]
    tree.category_bitset[2, 0] = 0b10101  # codes 0, 2 and 4 go left
    return _count_rows(tree, X, y), X, y


@pytest.mark.parametrize("confidence_factor", [0.25, 0.1])
def test_pessimistic_pruning_of_a_multiway_tree_is_c45s(confidence_factor):
    """The root is raised into its MULTIWAY branch, where the rows of unknown code go down every branch."""
    tree, X, y = _multiway_data()
    weight = np.ones(y.shape[0])
    root, raises = _naive_pessimistic(tree, X, y, weight, confidence_factor)
    pruned = prune_pessimistic(tree, X, y, weight, "gini", confidence_factor)
    assert len(raises) >= 1 and root.test[1] == MULTIWAY and pruned.node_count == 4
    assert pruned.n_node_samples[1:].sum() > y.shape[0]  # each unknown row in every leaf
    _assert_same_as_linked(pruned, root, impurity=_gini)


def test_pessimistic_pruning_shares_unknown_values_among_the_branches_of_a_fractional_tree():
    """A tree whose unknown values go down every branch (C4.5's, ``missing_fractional``), its counts those of
    its rows routed so: pruned as C4.5 prunes it."""
    X, y, _ = _classification_data(300, seed=3)
    X[np.random.RandomState(3).rand(*X.shape) < 0.15] = np.nan
    tree = gpuforest.DecisionTreeClassifier(max_depth=4, device="cpu").fit(X, y).tree_
    tree.missing_fractional = True
    tree = _count_rows(tree, X, y)
    weight = np.ones(y.shape[0])
    root, raises = _naive_pessimistic(tree, X, y, weight)
    pruned = prune_pessimistic(tree, X, y, weight, "gini")
    assert len(raises) >= 1 and pruned.n_node_samples[pruned.children_left == -1].sum() > y.shape[0]
    _assert_same_as_linked(pruned, root, impurity=_gini)


def test_forest_prunes_each_tree_as_c45_on_its_drawn_rows():
    """Each tree pruned on its bootstrap rows, a row drawn k times weighing k (its weight in the grown tree)."""
    X, y, _ = _classification_data(300, seed=1)
    params = dict(n_estimators=2, class_weight="balanced_subsample", random_state=0, device="cpu")
    grown = gpuforest.RandomForestClassifier(**params).fit(X, y)
    pruned = gpuforest.RandomForestClassifier(pruning="pessimistic", confidence_factor=0.1, **params).fit(X, y)
    counts = grown._sample_counts(get_backend("cpu"), 0, 2, X.shape[0])
    for tree, pruned_tree, tree_counts in zip(grown.trees_, pruned.trees_, counts):
        drawn = np.bincount(y, weights=tree_counts, minlength=3)
        weight = tree_counts * (drawn.sum() / (3 * drawn))[y]  # scikit-learn's balanced_subsample weights
        root, _ = _naive_pessimistic(tree, X, y, weight, confidence_factor=0.1)
        _assert_same_as_linked(pruned_tree, root, impurity=_gini)
    bagging = gpuforest.BaggingClassifier(
        gpuforest.DecisionTreeClassifier(pruning="pessimistic", confidence_factor=0.1, subtree_raising=False,
                                         device="cpu"),
        n_estimators=2, random_state=0,
    ).fit(X, y)
    assert bagging.forest_.get_params()["confidence_factor"] == 0.1
    assert bagging.forest_.get_params()["subtree_raising"] is False


def _training_errors(tree, node):
    """Weighted training cases outside the node's majority class."""
    return tree.weighted_n_node_samples[node] * (1 - tree.value[node, 0].max())


def _naive_collapse_kept(tree, node=0):
    """J48's ``collapse`` (``C45PruneableClassifierTree``), recursively: the split nodes kept, those whose
    leaves make more than 1e-3 fewer training errors than the node itself."""

    def leaf_errors(node):
        if tree.children_left[node] == -1:
            return _training_errors(tree, node)
        return sum(leaf_errors(child) for child in _children(tree, node))

    if tree.children_left[node] == -1 or leaf_errors(node) >= _training_errors(tree, node) - 1e-3:
        return set()
    return {node}.union(*(_naive_collapse_kept(tree, child) for child in _children(tree, node)))


def test_collapse_keeps_the_subtrees_naive_collapsing_keeps():
    X, y, weight = _classification_data(400, seed=2)
    tree = gpuforest.DecisionTreeClassifier(max_depth=5, device="cpu").fit(X, y, sample_weight=weight).tree_
    kept = _naive_collapse_kept(tree)
    assert 0 < len(kept) < (tree.children_left != -1).sum()
    _assert_pruned_from(collapse_subtrees(tree), tree, kept)


# --- against Weka's J48 (where Java and Weka are installed) ----------------------------------------

# A line of J48's tree: indentation, attribute, operator, value, and at a leaf its cases and errors.
_J48_LINE = re.compile(r"^((?:\|   )*)(.+?) (<=|>|=) (.+?)(?:: .+? \(([\d.]+)(?:/([\d.]+))?\))?$")


def _j48_tree(arff, options):
    """J48's tree on ``arff`` (its text output parsed): nested dicts, ``{"attribute", "operator", "children"}``
    and a numeric test's ``"threshold"`` at a split, ``{"cases", "errors"}`` at a leaf."""
    command = ["java", "-cp", str(bench.WEKA_JAR), "weka.classifiers.trees.J48", *options, "-t", str(arff), "-no-cv"]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    text = output.split("------------------\n", 1)[1].split("\n\nNumber of Leaves", 1)[0].strip("\n")
    lines = [_J48_LINE.match(line) for line in text.split("\n")]
    position = 0

    def parse(depth):
        nonlocal position
        first, children = lines[position], []
        while position < len(lines) and len(lines[position].group(1)) == 4 * depth:
            line = lines[position]
            position += 1
            if line.group(5) is None:
                children.append(parse(depth + 1))
            else:
                children.append({"cases": float(line.group(5)), "errors": float(line.group(6) or 0)})
            if line.group(3) == ">":  # the second branch of a numeric test
                break
        node = {"attribute": first.group(2), "operator": first.group(3), "children": children}
        if first.group(3) == "<=":
            node["threshold"] = first.group(4)
        return node

    return parse(0)


def _tree_of_j48(j48, dataset):
    """J48's tree as a ``Tree`` (nominal tests MULTIWAY) with the class counts of the data set's rows."""
    order, first_child = [j48], {}
    for node in order:
        if "children" in node:
            first_child[id(node)] = len(order)
            order.extend(node["children"])
    split = ["children" in node for node in order]
    tree = _hand_built_tree(
        [first_child[id(node)] if is_split else -1 for node, is_split in zip(order, split)],
        [first_child[id(node)] + len(node["children"]) - 1 if is_split else -1 for node, is_split in zip(order, split)],
        [dataset.feature_names.index(node["attribute"]) if is_split else -2 for node, is_split in zip(order, split)],
        # J48's thresholds are values of the data, compared in double; here the float32 values are.
        [float(np.float32(node["threshold"])) if "threshold" in node else -2.0 for node in order],
        [False] * len(order), np.zeros(len(order), dtype=np.int64), n_features=len(dataset.feature_names),
        n_classes=len(dataset.classes),
    )
    tree.split_type[[index for index, node in enumerate(order) if node.get("operator") == "="]] = MULTIWAY
    for index, node in enumerate(order):
        if split[index]:
            children = _children(tree, index)
            tree.node_depth[children] = tree.node_depth[index] + 1
    return _count_rows(tree, dataset.X.astype(np.float32), dataset.y)


@pytest.mark.skipif(
    shutil.which("java") is None or not bench.WEKA_JAR.is_file() or not (bench.ARFF_DIR / "soybean.arff").is_file(),
    reason="needs Java and Weka with its example data sets (apt-get install weka)",
)
@pytest.mark.parametrize("name, subtree_raising", [("soybean", True), ("soybean", False), ("diabetes", True)])
def test_pessimistic_pruning_of_j48s_unpruned_tree_is_j48s_pruned_tree(name, subtree_raising):
    """J48 (Weka's C4.5 release 8) grows a tree, unpruned (-U) and pruned (-C 0.2, -S: no subtree raising);
    pruning the unpruned one here gives the pruned one: its nodes, and its leaves' cases and errors.
    Soybean: 19 classes, nominal attributes (MULTIWAY splits) with missing values. Diabetes: numeric.
    At CF = 0.2 J48's exact normal deviate and C4.5's table agree to 0.2%; at 0.25 they differ by 3%."""
    arff = bench.ARFF_DIR / f"{name}.arff"
    dataset = bench.parse_arff(arff.read_text(), name)
    unpruned = _tree_of_j48(_j48_tree(arff, ["-U"]), dataset)
    j48 = _j48_tree(arff, ["-C", "0.2"] + ([] if subtree_raising else ["-S"]))
    weight = np.ones(dataset.y.shape[0])
    pruned = prune_pessimistic(unpruned, dataset.X, dataset.y, weight, "gini", 0.2, subtree_raising)
    assert pruned.node_count < unpruned.node_count
    stack = [(0, j48)]
    while stack:
        node, j48_node = stack.pop()
        if "children" not in j48_node:
            assert pruned.children_left[node] == -1
            cases = pruned.weighted_n_node_samples[node]
            errors = cases * (1 - pruned.value[node, 0].max())
            np.testing.assert_allclose([cases, errors], [j48_node["cases"], j48_node["errors"]], atol=0.006)
            continue
        assert dataset.feature_names[pruned.feature[node]] == j48_node["attribute"]
        assert len(_children(pruned, node)) == len(j48_node["children"])
        stack.extend(zip(_children(pruned, node), j48_node["children"]))
