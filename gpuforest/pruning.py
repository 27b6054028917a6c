"""Pruning of grown trees: functions from a ``Tree`` (and data) to a new, smaller ``Tree``.

- ``prune_cost_complexity`` / ``cost_complexity_path``: CART's minimal
  cost-complexity pruning (Breiman, Friedman, Olshen & Stone 1984, ch. 3.3),
  the algorithm of scikit-learn's ``sklearn/tree/_tree.pyx::_cost_complexity_prune``.
- ``prune_chi_square``: chi-square significance pre-pruning (Quinlan 1986,
  "Induction of decision trees", section 5; Mingers 1987).
- ``prune_reduced_error``: reduced-error post-pruning on validation data
  (Quinlan 1987, "Simplifying decision trees", section 2.3).
- ``prune_validation``: validation-based pre-pruning (a split stays only if
  it lowers the validation error of its node as a leaf).
- ``prune_mdl``: minimum description length pruning (Mehta, Rissanen &
  Agrawal 1995, "MDL-based decision tree pruning", as used by SLIQ; the
  coding scheme as restated by Rastogi & Shim 1998, "PUBLIC", section 2).
- ``prune_pessimistic``: C4.5's error-based pruning with subtree raising
  (Quinlan 1993, "C4.5: Programs for Machine Learning", ch. 4; the release 8
  sources' prune.c and stats.c), on the training rows.
- ``collapse_subtrees``: J48's collapse of the subtrees that make no fewer
  training errors than their root as a leaf (Weka's
  ``C45PruneableClassifierTree.collapse``), before its error-based pruning.

A pre-pruning rule here decides at each node from that node and its children
alone, so cutting the grown tree top-down at the first failing node gives the
tree that stopping during growth would give (level-wise growth; best-first
growth with ``max_leaf_nodes`` would spend the leaves elsewhere, so the
estimators refuse that combination). Trees whose splits draw features or
thresholds at random key the draws by node index: a tree cut here follows the
same distribution as one stopped during growth, not the same draws.

Every function works on n-ary nodes as well (the children of node ``n`` are
``children_left[n] .. children_right[n]``) and returns a tree renumbered
breadth-first by ``prune_to_leaves``, so children stay consecutive.

The estimators' parameters (``ccp_alpha``, ``min_split_significance``,
``pruning``, ``validation_fraction``, ``confidence_factor``,
``subtree_raising``, ``fit(..., eval_set=...)``) are applied
by ``prune_grown_tree`` (see its docstring for the order).
"""

import copy
from math import ceil
from numbers import Integral, Real

import numpy as np
import scipy.special
import scipy.stats
from numba import njit
from sklearn.base import is_classifier
from sklearn.model_selection import train_test_split
from sklearn.utils._param_validation import Interval, StrOptions

from . import information
from .tree import CATEGORICAL, MAX_CATEGORIES, MULTIWAY, NUMERIC, TREE_LEAF, TREE_UNDEFINED
from .progress import eval_pair
from .fitting import random_seed

# Losses and code lengths are sums of floats in some order: two equal in exact arithmetic may
# differ by rounding. Within this fraction of the largest node cost they count as equal.
TIE_TOLERANCE = 1e-12

# ``pruning=`` methods that need validation data.
VALIDATION_METHODS = ("reduced_error", "validation")

# scikit-learn-style constraints of the pruning parameters (trees and forests).
PRUNING_PARAMETER_CONSTRAINTS = {
    "ccp_alpha": [Interval(Real, 0.0, None, closed="left")],
    "pruning": [StrOptions(set(VALIDATION_METHODS)), None],
    "validation_fraction": [Interval(Real, 0, 1, closed="neither"), Interval(Integral, 1, None, closed="left")],
}
REGRESSOR_PRUNING_CONSTRAINTS = PRUNING_PARAMETER_CONSTRAINTS
# MDL codes class labels and error-based pruning counts misclassifications: classifiers only.
CLASSIFIER_PRUNING_CONSTRAINTS = {
    **PRUNING_PARAMETER_CONSTRAINTS,
    "pruning": [StrOptions({*VALIDATION_METHODS, "mdl", "pessimistic"}), None],
    "min_split_significance": [Interval(Real, 0.0, 1.0, closed="right"), None],
    "confidence_factor": [Interval(Real, 0.0, 0.5, closed="right")],
    "subtree_raising": ["boolean"],
}


# --- tree surgery ---------------------------------------------------------------------------------


def children_of(tree, nodes):
    """The children of the split nodes ``nodes``, each node's children consecutively.

    Parameters
    ----------
    tree : Tree
    nodes : ndarray of shape (n_nodes,), dtype int64
        Split nodes (not leaves).

    Returns
    -------
    children : ndarray of shape (n_children,), dtype int64
    position : ndarray of shape (n_children,), dtype int64
        Each child's parent as a position in ``nodes``.
    """
    first = tree.children_left[nodes].astype(np.int64)
    count = tree.children_right[nodes].astype(np.int64) - first + 1
    start = np.cumsum(count) - count
    offset = np.arange(count.sum()) - np.repeat(start, count)
    return np.repeat(first, count) + offset, np.repeat(np.arange(nodes.shape[0]), count)


def prune_to_leaves(tree, cut, raised=None):
    """``tree`` with every node of ``cut`` made a leaf and its descendants removed.

    The nodes kept are renumbered breadth-first (a node's children consecutive,
    as prediction needs) and keep their values, impurities and weights. Every
    array attribute of ``tree`` whose first dimension is ``node_count`` is a
    per-node array and is carried over; a new leaf gets a leaf's split fields.

    Parameters
    ----------
    tree : Tree
    cut : ndarray of shape (node_count,), dtype bool
        Nodes to make leaves (marks on leaves and below a cut node are ignored).
    raised : ndarray of shape (node_count,), dtype int64, default=None
        Subtree raising: the node whose subtree takes each node's place, -1
        for none (followed on: a raised node may itself be replaced).

    Returns
    -------
    Tree
    """
    standing = np.arange(tree.node_count) if raised is None else _standing_nodes(raised)
    splits = (tree.children_left != TREE_LEAF) & ~cut
    levels = [standing[:1]]
    while True:
        parents = levels[-1][splits[levels[-1]]]
        if parents.shape[0] == 0:
            break
        levels.append(standing[children_of(tree, parents)[0]])
    old = np.concatenate(levels)
    new_index = np.full(tree.node_count, TREE_LEAF, dtype=np.int64)
    new_index[old] = np.arange(old.shape[0])
    node_count = tree.node_count
    pruned = copy.copy(tree)
    for name, array in vars(tree).items():
        if isinstance(array, np.ndarray) and array.shape[:1] == (node_count,):
            setattr(pruned, name, array[old])
    split = splits[old]
    for name in ("children_left", "children_right"):
        children = getattr(tree, name)[old]
        setattr(pruned, name, np.where(split, new_index[standing[children]], TREE_LEAF).astype(children.dtype))
    pruned.node_depth = np.repeat(np.arange(len(levels), dtype=np.int32), [level.shape[0] for level in levels])
    leaf = ~split
    pruned.feature[leaf] = TREE_UNDEFINED
    pruned.threshold[leaf] = TREE_UNDEFINED
    pruned.bin_threshold[leaf] = TREE_UNDEFINED
    pruned.missing_go_to_left[leaf] = False
    pruned.split_type[leaf] = NUMERIC
    pruned.category_bitset[leaf] = 0
    return pruned


def _standing_nodes(raised):
    """The node standing in each node's place after subtree raising: ``raised`` followed to its end."""
    standing = np.arange(raised.shape[0])
    while True:
        replacement = raised[standing]
        moved = replacement >= 0
        if not moved.any():
            return standing
        standing = np.where(moved, replacement, standing)


def _tie_tolerance(cost):
    return TIE_TOLERANCE * np.abs(cost).max()


def _bottom_up_cuts(tree, leaf_cost, split_cost):
    """Cut every split node whose cost as a leaf is at most its subtree's smallest cost.

    Children first: ``cost[n] = min(leaf_cost[n], split_cost[n] + sum of cost[c] over n's children)``,
    ``cost[n] = leaf_cost[n]`` at leaves; a node is cut when the first term is the smaller (ties,
    within ``TIE_TOLERANCE``, cut).

    Parameters
    ----------
    tree : Tree
    leaf_cost, split_cost : ndarray of shape (node_count,), dtype float64

    Returns
    -------
    cut : ndarray of shape (node_count,), dtype bool
    """
    cost = leaf_cost.astype(np.float64)
    tolerance = _tie_tolerance(leaf_cost)
    cut = np.zeros(tree.node_count, dtype=bool)
    internal = tree.children_left != TREE_LEAF
    for depth in range(int(tree.node_depth.max()) - 1, -1, -1):
        nodes = np.flatnonzero(internal & (tree.node_depth == depth))
        if nodes.shape[0] == 0:
            continue
        children, position = children_of(tree, nodes)
        subtree = split_cost[nodes] + np.bincount(position, weights=cost[children], minlength=nodes.shape[0])
        cut[nodes] = leaf_cost[nodes] <= subtree + tolerance
        cost[nodes] = np.where(cut[nodes], leaf_cost[nodes], subtree)
    return cut


def class_counts(tree):
    """Weighted class counts of every node of a classification tree: shape (node_count, n_classes)."""
    return tree.value[:, 0, :] * tree.weighted_n_node_samples[:, None]


# J48 collapses a subtree unless it makes more than this many fewer training errors than its root.
COLLAPSE_TOLERANCE = 1e-3


def collapse_subtrees(tree):
    """``tree`` with every subtree whose leaves misclassify at least as much training weight as its root
    would (less ``COLLAPSE_TOLERANCE``) made a leaf, top-down (J48's ``collapse``, run before its pruning).

    Errors are the weighted training cases outside a node's majority class
    (``class_counts``); a subtree's are its leaves'.
    """
    counts = class_counts(tree)
    errors = tree.weighted_n_node_samples - counts.max(axis=1)
    subtree_errors = errors.copy()
    internal = tree.children_left != TREE_LEAF
    for depth in range(int(tree.node_depth.max()) - 1, -1, -1):
        nodes = np.flatnonzero(internal & (tree.node_depth == depth))
        children, position = children_of(tree, nodes)
        subtree_errors[nodes] = np.bincount(position, weights=subtree_errors[children], minlength=nodes.shape[0])
    return prune_to_leaves(tree, internal & (subtree_errors >= errors - COLLAPSE_TOLERANCE))


# --- cost-complexity pruning (CART) ---------------------------------------------------------------


@njit(cache=True)
def _cost_complexity_prune(children_left, children_right, weighted_n_node_samples, impurity, ccp_alpha):
    """Weakest-link pruning (Breiman et al. 1984, section 3.3), scikit-learn's ``_cost_complexity_prune``.

    With ``R(t) = W_t impurity_t / W_root`` and ``R(T_t)`` the sum of ``R`` over
    the leaves of ``t``'s subtree, each step prunes the split node of smallest
    effective alpha ``(R(t) - R(T_t)) / (|leaves of T_t| - 1)`` (the lowest
    index among equals) into a leaf, until the root is a leaf or the smallest
    alpha exceeds ``ccp_alpha``.

    Parameters
    ----------
    children_left, children_right : ndarray of shape (n_nodes,), dtype int32
    weighted_n_node_samples, impurity : ndarray of shape (n_nodes,), dtype float64
    ccp_alpha : float
        ``inf`` gives the whole path.

    Returns
    -------
    cut : ndarray of shape (n_nodes,), dtype bool
        The nodes pruned into leaves (none of them below another).
    ccp_alphas, impurities : ndarray of shape (n_steps,), dtype float64
        Effective alpha of each step (0 first) and ``R`` of the tree after it.
    """
    n_nodes = children_left.shape[0]
    r_node = weighted_n_node_samples * impurity / weighted_n_node_samples[0]
    parent = np.full(n_nodes, -1, dtype=np.int64)
    for node in range(n_nodes):
        if children_left[node] != TREE_LEAF:
            for child in range(children_left[node], children_right[node] + 1):
                parent[child] = node
    r_branch = np.zeros(n_nodes)
    n_leaves = np.zeros(n_nodes, dtype=np.int64)
    for node in range(n_nodes):
        if children_left[node] == TREE_LEAF:
            r_branch[node] = r_node[node]
            ancestor = parent[node]
            while ancestor != -1:
                r_branch[ancestor] += r_node[node]
                n_leaves[ancestor] += 1
                ancestor = parent[ancestor]
    candidate = children_left != TREE_LEAF
    in_subtree = np.ones(n_nodes, dtype=np.bool_)
    cut = np.zeros(n_nodes, dtype=np.bool_)
    ccp_alphas = np.empty(n_nodes + 1)
    impurities = np.empty(n_nodes + 1)
    ccp_alphas[0] = 0.0
    impurities[0] = r_branch[0]
    n_steps = 1
    stack = np.empty(n_nodes, dtype=np.int64)
    while candidate[0]:
        effective_alpha = np.inf
        weakest = -1
        for node in range(n_nodes):
            if candidate[node]:
                alpha = (r_node[node] - r_branch[node]) / (n_leaves[node] - 1)
                if alpha < effective_alpha:
                    effective_alpha = alpha
                    weakest = node
        if ccp_alpha < effective_alpha:
            break
        # Remove the weakest link's descendants (those removed before take their subtrees with them).
        top = 0
        for child in range(children_left[weakest], children_right[weakest] + 1):
            stack[top] = child
            top += 1
        while top > 0:
            top -= 1
            node = stack[top]
            if not in_subtree[node]:
                continue
            in_subtree[node] = False
            candidate[node] = False
            cut[node] = False
            if children_left[node] != TREE_LEAF:
                for child in range(children_left[node], children_right[node] + 1):
                    stack[top] = child
                    top += 1
        candidate[weakest] = False
        cut[weakest] = True
        n_pruned_leaves = n_leaves[weakest] - 1
        n_leaves[weakest] = 0
        r_diff = r_node[weakest] - r_branch[weakest]
        r_branch[weakest] = r_node[weakest]
        ancestor = parent[weakest]
        while ancestor != -1:
            n_leaves[ancestor] -= n_pruned_leaves
            r_branch[ancestor] += r_diff
            ancestor = parent[ancestor]
        ccp_alphas[n_steps] = effective_alpha
        impurities[n_steps] = r_branch[0]
        n_steps += 1
    return cut, ccp_alphas[:n_steps], impurities[:n_steps]


def _cost_complexity(tree, ccp_alpha):
    return _cost_complexity_prune(
        tree.children_left, tree.children_right, tree.weighted_n_node_samples, tree.impurity, float(ccp_alpha)
    )


def cost_complexity_path(tree):
    """The minimal cost-complexity pruning path of ``tree`` (scikit-learn's ``ccp_pruning_path``).

    Returns
    -------
    ccp_alphas : ndarray of shape (n_steps,), dtype float64
        Effective alphas of the nested subtrees, increasing, the first 0.
    impurities : ndarray of shape (n_steps,), dtype float64
        Sum over each subtree's leaves of ``W_leaf impurity_leaf / W_root``.
    """
    _, ccp_alphas, impurities = _cost_complexity(tree, np.inf)
    return ccp_alphas, impurities


def prune_cost_complexity(tree, ccp_alpha):
    """The subtree of largest cost complexity below ``ccp_alpha``, as scikit-learn's ``ccp_alpha`` trees."""
    cut, _, _ = _cost_complexity(tree, ccp_alpha)
    return prune_to_leaves(tree, cut)


# --- chi-square pre-pruning -----------------------------------------------------------------------


def split_p_values(tree):
    """p-value of the chi-square test of independence between branch and class at every split node.

    Pearson's statistic on the (children x classes) table of weighted class
    counts, ``sum (O - E)^2 / E`` with ``E = branch total * class total / node
    total`` (Quinlan 1986, section 5, for k classes and branches; no
    continuity correction), on ``(branches - 1) (classes - 1)`` degrees of
    freedom, counting only non-empty branches and classes. No degree of
    freedom (one class or one branch): p = 1.

    Returns
    -------
    p_value : ndarray of shape (node_count,), dtype float64
        1 at leaves.
    """
    internal = np.flatnonzero(tree.children_left != TREE_LEAF)
    children, position = children_of(tree, internal)
    observed = class_counts(tree)[children]
    class_totals = np.zeros((internal.shape[0], observed.shape[1]))
    np.add.at(class_totals, position, observed)
    branch_totals = observed.sum(axis=1)
    node_totals = class_totals.sum(axis=1)
    expected = branch_totals[:, None] * class_totals[position] / node_totals[position, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(expected > 0, (observed - expected) ** 2 / expected, 0.0)
    statistic = np.bincount(position, weights=terms.sum(axis=1), minlength=internal.shape[0])
    branches = np.bincount(position, weights=branch_totals > 0, minlength=internal.shape[0])
    dof = (branches - 1) * (np.count_nonzero(class_totals > 0, axis=1) - 1)
    p_value = np.ones(tree.node_count)
    p_value[internal] = np.where(dof > 0, scipy.stats.chi2.sf(statistic, np.maximum(dof, 1)), 1.0)
    return p_value


def prune_chi_square(tree, significance):
    """Cut every split whose chi-square test (``split_p_values``) has a p-value not below ``significance``.

    The first failing node on a path becomes a leaf, so this is pre-pruning:
    the tree growth would give when stopping at such nodes (module docstring).
    """
    return prune_to_leaves(tree, ~(split_p_values(tree) < significance))


# --- validation pruning ---------------------------------------------------------------------------


def validation_losses(tree, X, y, sample_weight, backend, classification):
    """Validation loss of every node as a leaf, and of the rows that stop at each node.

    The loss of a row at a node is its weight times its misclassification by
    the node's majority class (classification) or its squared error from the
    node's mean (regression).

    Parameters
    ----------
    tree : Tree
    X : ndarray of shape (n_rows, n_features), dtype float64 or float32
    y : ndarray of shape (n_rows,)
        Class indices (classification) or targets.
    sample_weight : ndarray of shape (n_rows,), dtype float64
    backend : Backend
    classification : bool

    Returns
    -------
    as_leaf : ndarray of shape (node_count,), dtype float64
        Loss of the rows through each node, predicted by that node.
    stopping : ndarray of shape (node_count,), dtype float64
        Loss of the rows whose path ends at each node (all of a leaf's rows;
        at a split node, rows no child takes).
    """
    path = tree.decision_path(X, backend)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(path.indptr))
    stop = tree.apply(X, backend)
    if classification:
        prediction = np.argmax(tree.value[:, 0], axis=1)
        along_path = sample_weight[rows] * (prediction[path.indices] != y[rows])
        at_stop = sample_weight * (prediction[stop] != y)
    else:
        prediction = tree.value[:, 0, 0]
        along_path = sample_weight[rows] * (y[rows] - prediction[path.indices]) ** 2
        at_stop = sample_weight * (y - prediction[stop]) ** 2
    as_leaf = np.bincount(path.indices, weights=along_path, minlength=tree.node_count)
    return as_leaf, np.bincount(stop, weights=at_stop, minlength=tree.node_count)


def prune_reduced_error(tree, X, y, sample_weight, backend, classification):
    """Reduced-error pruning (Quinlan 1987, section 2.3) on validation rows.

    Bottom-up, a subtree becomes a leaf when the leaf's validation loss (the
    weighted number of errors; squared error for regression) is no larger
    than the subtree's, its children already pruned. One bottom-up pass gives
    the smallest subtree of least validation loss, which Quinlan's repeated
    passes reach (Esposito, Malerba & Semeraro 1997). A node no validation row
    reaches has loss 0 either way and becomes a leaf. Arguments as
    ``validation_losses``.
    """
    as_leaf, stopping = validation_losses(tree, X, y, sample_weight, backend, classification)
    return prune_to_leaves(tree, _bottom_up_cuts(tree, as_leaf, stopping))


def prune_validation(tree, X, y, sample_weight, backend, classification):
    """Validation-based pre-pruning: a split stays only if it lowers the validation loss.

    A split node is cut when its children as leaves (plus the rows no child
    takes) lose at least as much on the validation rows as the node as a leaf
    (within ``TIE_TOLERANCE``); the first such node on a path becomes a leaf
    (pre-pruning, see the module docstring). Arguments as ``validation_losses``.
    """
    as_leaf, stopping = validation_losses(tree, X, y, sample_weight, backend, classification)
    internal = np.flatnonzero(tree.children_left != TREE_LEAF)
    children, position = children_of(tree, internal)
    split_loss = stopping[internal] + np.bincount(position, weights=as_leaf[children], minlength=internal.shape[0])
    cut = np.zeros(tree.node_count, dtype=bool)
    cut[internal] = ~(split_loss < as_leaf[internal] - _tie_tolerance(as_leaf))
    return prune_to_leaves(tree, cut)


# --- minimum description length -------------------------------------------------------------------


def class_code_length(counts):
    """Bits to encode the class labels of a node's rows given its class counts (Mehta et al. 1995).

    ``sum_i n_i log2(n / n_i) + (k - 1) / 2 log2(n / 2) + log2(pi^(k/2) / Gamma(k/2))``
    for ``n`` rows in ``k`` classes, ``n_i`` of class ``i`` (Rissanen's
    stochastic complexity of a multinomial sequence; Rastogi & Shim 1998,
    section 2.3; Rokach & Maimon 2008, eq. 6.6).

    Parameters
    ----------
    counts : ndarray of shape (n_nodes, k), dtype float64

    Returns
    -------
    ndarray of shape (n_nodes,), dtype float64
    """
    k = counts.shape[1]
    n = counts.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        data = np.where(counts > 0, counts * np.log2(n[:, None] / counts), 0.0).sum(axis=1)
        parameters = (k - 1) / 2 * np.log2(n / 2) + (k / 2 * np.log(np.pi) - scipy.special.gammaln(k / 2)) / np.log(2)
    # A node without rows (an empty branch of a multiway split) has no labels to encode.
    return np.where(n > 0, data + parameters, 0.0)


def distinct_split_values(tree, X, backend):
    """Distinct non-missing values of each split node's feature among the rows of ``X`` reaching it.

    Returns
    -------
    ndarray of shape (node_count,), dtype int64
        0 at leaves.
    """
    path = tree.decision_path(X, backend)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(path.indptr))
    nodes = path.indices.astype(np.int64)
    at_split = tree.children_left[nodes] != TREE_LEAF
    rows, nodes = rows[at_split], nodes[at_split]
    values = X[rows, tree.feature[nodes]]
    present = ~np.isnan(values)
    nodes, values = nodes[present], values[present]
    order = np.lexsort((values, nodes))
    nodes, values = nodes[order], values[order]
    first = np.ones(nodes.shape[0], dtype=bool)
    first[1:] = (nodes[1:] != nodes[:-1]) | (values[1:] != values[:-1])
    return np.bincount(nodes[first], minlength=tree.node_count)


def split_code_length(tree, distinct):
    """Bits to encode each split node's test (Rastogi & Shim 1998, section 2.3).

    ``log2(a)`` for the attribute (``a = n_features``) plus the test's value:
    ``log2(v - 1)`` for a threshold between ``v`` distinct values, ``log2(2^v - 2)``
    for a subset of ``v`` categories, nothing for a multiway split (one branch
    per value). Fewer than two values (all of one side missing): no bits.

    Parameters
    ----------
    tree : Tree
    distinct : ndarray of shape (node_count,), dtype int64
        ``distinct_split_values``.
    """
    v = distinct.astype(np.float64)
    value_bits = np.zeros(tree.node_count)
    numeric = (tree.split_type == NUMERIC) & (v > 2)
    value_bits[numeric] = np.log2(v[numeric] - 1)
    categorical = (tree.split_type == CATEGORICAL) & (v > 1)
    value_bits[categorical] = np.log2(np.exp2(v[categorical]) - 2)
    value_bits[tree.split_type == MULTIWAY] = 0.0
    return np.log2(tree.n_features) + value_bits


def prune_mdl(tree, X, backend):
    """Minimum description length pruning of a classification tree (Mehta, Rissanen & Agrawal 1995).

    The code of a subtree: one bit per node (leaf or split), each split's test
    (``split_code_length``) and each leaf's class labels (``class_code_length``,
    on the weighted class counts). Bottom-up, a node becomes a leaf when
    ``1 + C(leaf) <= 1 + C(test) + sum of its children's smallest codes``
    (Rastogi & Shim 1998, figure 3); all logarithms base 2.

    Parameters
    ----------
    tree : Tree
    X : ndarray of shape (n_rows, n_features), dtype float64 or float32
        The rows the tree was grown on (for the distinct values at each split).
    backend : Backend
    """
    leaf_bits = 1.0 + class_code_length(class_counts(tree))
    split_bits = 1.0 + split_code_length(tree, distinct_split_values(tree, X, backend))
    return prune_to_leaves(tree, _bottom_up_cuts(tree, leaf_bits, split_bits))


# --- error-based pruning (C4.5) -------------------------------------------------------------------

# C4.5's table of the normal deviate exceeded with probability ``_TAIL_PROBABILITY`` (Quinlan 1993,
# the release 8 sources' stats.c, after Documenta Geigy Scientific Tables, 6th ed., p. 185); the
# deviate of a confidence factor between two entries is interpolated linearly, as stats.c does.
_TAIL_PROBABILITY = np.array([0.0, 0.001, 0.005, 0.01, 0.05, 0.10, 0.20, 0.40, 1.00])
_NORMAL_DEVIATE = np.array([4.0, 3.09, 2.58, 2.33, 1.65, 1.28, 0.84, 0.25, 0.00])
# C4.5 replaces a subtree unless it is estimated to make this many fewer errors (prune.c).
C45_ERROR_TOLERANCE = 0.1


def _check_confidence_factor(confidence_factor):
    if not 0.0 < confidence_factor <= 0.5:
        raise ValueError(f"confidence_factor must be in (0, 0.5], got {confidence_factor!r}.")


def squared_deviate(confidence_factor):
    """C4.5's ``Coeff``: the squared normal deviate of ``confidence_factor``, from stats.c's interpolated table."""
    return float(np.interp(confidence_factor, _TAIL_PROBABILITY, _NORMAL_DEVIATE) ** 2)


@njit(cache=True)
def _normal_extra_errors(n_cases, n_errors, coefficient):
    """``AddErrs`` for ``E >= 1``: the normal approximation, linear in the last half case (stats.c)."""
    if n_errors + 0.5 >= n_cases:
        return 0.67 * (n_cases - n_errors)
    corrected = n_errors + 0.5
    upper = (
        corrected + coefficient / 2 + np.sqrt(coefficient * (corrected * (1.0 - corrected / n_cases) + coefficient / 4))
    ) / (n_cases + coefficient)
    return n_cases * upper - n_errors


@njit(cache=True)
def _extra_errors(n_cases, n_errors, confidence_factor, coefficient):
    """C4.5's ``AddErrs`` (stats.c), with ``coefficient = squared_deviate(confidence_factor)``; see ``extra_errors``."""
    if n_errors >= 0.9999:
        return _normal_extra_errors(n_cases, n_errors, coefficient)
    no_error = n_cases * (1.0 - np.exp(np.log(confidence_factor) / n_cases))
    if n_errors < 1e-6:
        return no_error
    return no_error + n_errors * (_normal_extra_errors(n_cases, 1.0, coefficient) - no_error)


def extra_errors(n_cases, n_errors, confidence_factor=0.25):
    """Errors C4.5 adds to a leaf's observed ones: ``N U_CF(E, N) - E`` (Quinlan 1993, ch. 4; ``AddErrs``).

    ``U_CF(E, N)`` is the upper limit of the confidence interval, at
    confidence ``confidence_factor``, of the error rate of a leaf that
    misclassifies ``E`` of its ``N`` (weighted) training cases:

    - ``E = 0``: the exact binomial limit, ``1 - CF^(1/N)``;
    - ``E >= 1``: the normal approximation with a continuity correction,
      ``(E + 1/2 + z^2/2 + z sqrt((E + 1/2)(1 - (E + 1/2)/N) + z^2/4)) / (N + z^2)``,
      ``z`` from C4.5's table (``squared_deviate``); ``0.67 (N - E)`` extra errors
      once ``E + 1/2 >= N``;
    - ``0 < E < 1``: linear between those two.

    Parameters
    ----------
    n_cases, n_errors : float
        ``N`` and ``E`` (``0 <= E <= N``, ``N > 0``).
    confidence_factor : float in (0, 0.5], default=0.25

    Returns
    -------
    float
    """
    _check_confidence_factor(confidence_factor)
    return float(_extra_errors(float(n_cases), float(n_errors), confidence_factor, squared_deviate(confidence_factor)))


@njit(cache=True)
def _branch_of(value, node, split_type, threshold, missing_go_to_left, category_bitset, n_branches, fractional):
    """The branch (0 .. n_branches - 1) that a raw ``value`` of ``node``'s feature takes, by ``Tree``'s
    rules of each split kind; -1 where it stops (missing or no valid code at a ``MULTIWAY`` split, missing
    anywhere in a ``fractional`` tree: ``Tree.missing_fractional``)."""
    if fractional and np.isnan(value):
        return -1
    if split_type[node] == MULTIWAY:
        if value >= 0 and value < n_branches and value == np.floor(value):
            return int(value)
        return -1
    if split_type[node] == CATEGORICAL and value >= 0 and value < MAX_CATEGORIES and value == np.floor(value):
        code = int(value)
        goes_left = ((np.int64(category_bitset[node, code >> 5]) >> (code & 31)) & 1) == 1
    elif split_type[node] == CATEGORICAL or np.isnan(value):
        goes_left = missing_go_to_left[node]
    else:
        goes_left = value <= threshold[node]
    return 0 if goes_left else 1


@njit(cache=True)
def _standing(node, raised):
    """The node whose subtree stands where ``node`` was grown: ``node``, or what it was raised into
    (``_standing_nodes`` of one node)."""
    while raised[node] >= 0:
        node = raised[node]
    return node


@njit(cache=True)
def _leaf_estimate(rows, weights, y, n_classes, parameters):
    """Class counts of the cases and C4.5's estimated errors of a leaf holding them: ``E + AddErrs(N, E)``."""
    confidence_factor, coefficient, _ = parameters
    distribution = np.zeros(n_classes)
    for case in range(rows.shape[0]):
        distribution[y[rows[case]]] += weights[case]
    n_errors = weights.sum() - distribution.max()
    return distribution, n_errors + _extra_errors(weights.sum(), n_errors, confidence_factor, coefficient)


@njit(cache=True)
def _split_cases(node, rows, weights, X, structure, raised):
    """The cases of each branch of split ``node`` that has a known case (C4.5's ``Group``).

    A case whose value sends it nowhere (``_branch_of`` -1) goes down every
    such branch, its weight times the branch's share of the known cases.

    Returns
    -------
    children : list of int
        The node standing at each such branch (``_standing``), in branch order.
    child_rows, child_weights : list of ndarray
        Their cases.
    largest : int
        The position in ``children`` of the branch with the largest share (the
        last of equals, as prune.c), -1 without known cases (where prune.c
        leaves it undefined: no raising then).
    """
    children_left, children_right, split_type, feature, threshold, missing_go_to_left, category_bitset, fractional = (
        structure
    )
    first_child = children_left[node]
    n_branches = children_right[node] - first_child + 1
    branch = np.empty(rows.shape[0], dtype=np.int64)
    branch_weight = np.zeros(n_branches)
    branch_cases = np.zeros(n_branches, dtype=np.int64)
    for case in range(rows.shape[0]):
        value = X[rows[case], feature[node]]
        branch[case] = _branch_of(
            value, node, split_type, threshold, missing_go_to_left, category_bitset, n_branches, fractional
        )
        if branch[case] >= 0:
            branch_weight[branch[case]] += weights[case]
            branch_cases[branch[case]] += 1
    n_unknown = rows.shape[0] - branch_cases.sum()
    known_weight = branch_weight.sum()
    children, child_rows, child_weights = [np.int64(0)][:0], [rows][:0], [weights][:0]  # empty, of these types
    largest, largest_share = -1, 0.0
    for b in range(n_branches):
        if branch_cases[b] == 0:
            continue
        share = branch_weight[b] / known_weight
        if share >= largest_share:
            largest, largest_share = len(children), share
        cases = np.empty(branch_cases[b] + n_unknown, dtype=np.int64)
        case_weights = np.empty(cases.shape[0])
        taken = 0
        for case in range(rows.shape[0]):
            if branch[case] == b or branch[case] < 0:
                cases[taken] = rows[case]
                case_weights[taken] = weights[case] if branch[case] == b else weights[case] * share
                taken += 1
        children.append(_standing(first_child + b, raised))
        child_rows.append(cases)
        child_weights.append(case_weights)
    return children, child_rows, child_weights, largest


@njit(cache=True)
def _is_leaf(node, children_left, cut):
    return children_left[node] == TREE_LEAF or cut[node]


@njit(cache=True)
def _subtree_estimate(node, rows, weights, data, structure, state, parameters):
    """C4.5's ``EstimateErrors`` without ``UpdateTree``: the sum of the leaf estimates of the
    cases ``rows`` (weights ``weights``) sent down ``node``'s subtree as it stands."""
    X, y = data
    cut, raised, counts = state[0], state[1], state[2]
    nodes, node_rows, node_weights = [node], [rows], [weights]
    total = 0.0
    while len(nodes) > 0:
        node, rows, weights = nodes.pop(), node_rows.pop(), node_weights.pop()
        if _is_leaf(node, structure[0], cut):
            total += _leaf_estimate(rows, weights, y, counts.shape[1], parameters)[1]
            continue
        children, child_rows, child_weights, _ = _split_cases(node, rows, weights, X, structure, raised)
        nodes.extend(children)
        node_rows.extend(child_rows)
        node_weights.extend(child_weights)
    return total


@njit(cache=True)
def _prune_error_based(rows, weights, data, structure, state, parameters):
    """C4.5's ``EstimateErrors`` with ``UpdateTree`` from the root (prune.c), as a loop over a stack.

    Each split node is visited twice: first its cases are split among its
    branches, which are pruned next (children first); then it is compared as
    it stands, as a leaf and as its largest branch, and cut, raised (its
    largest branch pruned again on its cases: those cases are ``rerouted``)
    or kept. ``estimate[_standing(n)]`` is node ``n``'s estimated errors once
    its subtree is pruned.

    Parameters
    ----------
    rows, weights : ndarray of shape (n_cases,)
        The training cases (rows of ``X``, int64) and their weights (float64).
    data : tuple ``(X, y)``
        Raw features (float64 or float32) and class indices (int64) of every row.
    structure : tuple
        The tree's ``children_left, children_right, split_type, feature,
        threshold, missing_go_to_left, category_bitset, missing_fractional``.
    state : tuple ``(cut, raised, counts, n_rows, recounted, estimate)``
        Written in place: the nodes made leaves; the node each node was
        replaced by (-1: none); the class counts and rows of the ``recounted``
        nodes (those the raised cases reach); each node's estimated errors.
    parameters : tuple ``(confidence_factor, coefficient, subtree_raising)``
    """
    X, y = data
    cut, raised, counts, n_rows, recounted, estimate = state
    subtree_raising = parameters[2]
    # One entry per pending visit: node, second visit, rerouted, cases, leaf estimate, children, largest branch.
    nodes, second, rerouted = [np.int64(0)], [False], [False]
    node_rows, node_weights, leaf_estimates = [rows], [weights], [0.0]
    node_children, largest_branch = [np.zeros(0, dtype=np.int64)], [-1]
    while len(nodes) > 0:
        node, is_second, is_rerouted = nodes.pop(), second.pop(), rerouted.pop()
        rows, weights, leaf_estimate = node_rows.pop(), node_weights.pop(), leaf_estimates.pop()
        children, largest = node_children.pop(), largest_branch.pop()
        if not is_second:
            distribution, leaf_estimate = _leaf_estimate(rows, weights, y, counts.shape[1], parameters)
            if is_rerouted:
                counts[node] = distribution
                n_rows[node] = rows.shape[0]
                recounted[node] = True
            if _is_leaf(node, structure[0], cut):
                estimate[node] = leaf_estimate
                continue
            child_list, child_rows, child_weights, largest = _split_cases(node, rows, weights, X, structure, raised)
            nodes.append(node)
            second.append(True)
            rerouted.append(is_rerouted)
            node_rows.append(rows)
            node_weights.append(weights)
            leaf_estimates.append(leaf_estimate)
            node_children.append(np.array(child_list, dtype=np.int64))
            largest_branch.append(largest)
            for position in range(len(child_list) - 1, -1, -1):  # the first branch is pruned first
                nodes.append(child_list[position])
                second.append(False)
                rerouted.append(is_rerouted)
                node_rows.append(child_rows[position])
                node_weights.append(child_weights[position])
                leaf_estimates.append(0.0)
                node_children.append(children[:0])
                largest_branch.append(-1)
            continue
        tree_estimate = 0.0
        for child in children:
            tree_estimate += estimate[_standing(child, raised)]
        branch_estimate, branch_root = np.inf, -1
        if subtree_raising and largest >= 0:
            branch_root = _standing(children[largest], raised)
            branch_estimate = _subtree_estimate(branch_root, rows, weights, data, structure, state, parameters)
        tolerance = C45_ERROR_TOLERANCE
        if leaf_estimate <= branch_estimate + tolerance and leaf_estimate <= tree_estimate + tolerance:
            cut[node] = True
            estimate[node] = leaf_estimate
        elif branch_estimate <= tree_estimate + tolerance:
            raised[node] = branch_root
            nodes.append(branch_root)
            second.append(False)
            rerouted.append(True)
            node_rows.append(rows)
            node_weights.append(weights)
            leaf_estimates.append(0.0)
            node_children.append(children[:0])
            largest_branch.append(-1)
        else:
            estimate[node] = tree_estimate


# Impurity of a node's class counts under each classification criterion (the grown trees' impurities).
_CLASS_IMPURITY = {
    "gini": information.gini_index,
    "entropy": information.entropy,
    "log_loss": information.entropy,
    "misclassification": information.misclassification_error,
}


def _recounted(tree, counts, n_rows, recounted, criterion):
    """``tree`` with the class counts and rows of the ``recounted`` nodes: their values, weights and impurities."""
    tree = copy.copy(tree)
    weight = counts[recounted].sum(axis=1)
    tree.value = tree.value.copy()
    tree.value[recounted, 0] = counts[recounted] / weight[:, None]
    tree.weighted_n_node_samples = tree.weighted_n_node_samples.copy()
    tree.weighted_n_node_samples[recounted] = weight
    tree.n_node_samples = n_rows
    tree.impurity = tree.impurity.copy()
    classes = np.arange(counts.shape[1])
    for node in np.flatnonzero(recounted):
        tree.impurity[node] = _CLASS_IMPURITY[criterion](classes, sample_weight=counts[node])
    return tree


def prune_pessimistic(tree, X, y, sample_weight, criterion, confidence_factor=0.25, subtree_raising=True):
    """C4.5's error-based pruning with subtree raising (Quinlan 1993, ch. 4; release 8's prune.c).

    A leaf that misclassifies ``E`` of the ``N`` (weighted) training cases
    reaching it is estimated to make ``E + extra_errors(N, E, CF)`` errors;
    a subtree, the sum of its leaves' estimates. Children first, each split
    node is compared, on its own training cases, as it stands (its subtree
    already pruned), as a leaf, and, with ``subtree_raising``, as its largest
    branch (the child with the most known cases, the last of equals) with all
    of the node's cases sent down it:

    1. the leaf, if its estimate is at most both others plus 0.1;
    2. else the largest branch, if its estimate is at most the subtree's plus
       0.1: the branch takes the node's place and is pruned again, children
       first, on the node's cases, whose class counts its nodes then hold;
    3. else the subtree stays.

    A case whose value sends it nowhere (missing or unknown at a ``MULTIWAY``
    node) goes down every branch that has a known case, weighted by that
    branch's share of the known cases, as C4.5 shares cases with unknown
    values. The nodes the raised cases reach get their class counts, weights,
    numbers of rows and impurities; the others keep the grown ones (so does a
    node of a raised branch that none of the node's cases reaches, as in
    prune.c). C4.5 sums ``float``; this, ``float64``. Where classes tie at a
    leaf, C4.5 keeps the leaf's class; a ``Tree`` predicts the first of them.

    Parameters
    ----------
    tree : Tree
        A classification tree.
    X : ndarray of shape (n_rows, n_features)
        The rows the tree was grown on (float64 or float32, as validated for fitting).
    y : ndarray of shape (n_rows,)
        Their class indices.
    sample_weight : ndarray of shape (n_rows,)
        The weights the tree was grown with (class weights and bootstrap draws included).
    criterion : {"gini", "entropy", "log_loss", "misclassification"}
        The tree's criterion, for the impurity of recounted nodes.
    confidence_factor : float in (0, 0.5], default=0.25
        C4.5's CF: smaller prunes more.
    subtree_raising : bool, default=True
        Whether to try each node's largest branch (J48's ``-S`` turns it off).

    Returns
    -------
    Tree
    """
    _check_confidence_factor(confidence_factor)
    X = np.asarray(X)
    X = X.astype(np.result_type(X.dtype, np.float32), copy=False)
    sample_weight = np.asarray(sample_weight, dtype=np.float64)
    rows = np.flatnonzero(sample_weight > 0)
    n_nodes = tree.node_count
    counts = class_counts(tree)
    state = (np.zeros(n_nodes, dtype=bool), np.full(n_nodes, -1, dtype=np.int64), counts,
             tree.n_node_samples.copy(), np.zeros(n_nodes, dtype=bool), np.zeros(n_nodes))
    structure = (tree.children_left, tree.children_right, tree.split_type, tree.feature, tree.threshold,
                 tree.missing_go_to_left, tree.category_bitset, tree.missing_fractional)
    parameters = (float(confidence_factor), squared_deviate(confidence_factor), bool(subtree_raising))
    data = (X, np.asarray(y, dtype=np.int64))
    _prune_error_based(rows, sample_weight[rows], data, structure, state, parameters)
    cut, raised, counts, n_rows, recounted, _ = state
    return prune_to_leaves(_recounted(tree, counts, n_rows, recounted, criterion), cut, raised)


# --- the estimators' parameters -------------------------------------------------------------------


def check_pruning_params(estimator):
    """Refuse pre-pruning with best-first growth, where it would differ from stopping during growth."""
    pre_pruning = getattr(estimator, "min_split_significance", None) is not None or estimator.pruning == "validation"
    if pre_pruning and estimator.max_leaf_nodes is not None:
        raise ValueError(
            "min_split_significance and pruning='validation' are pre-pruning rules of level-wise growth; they "
            "cannot be combined with max_leaf_nodes (best-first growth)."
        )


def uses_validation(estimator):
    return estimator.pruning in VALIDATION_METHODS


def prunes(estimator):
    """Whether ``estimator``'s parameters ask for any pruning."""
    return (
        estimator.ccp_alpha > 0
        or estimator.pruning is not None
        or getattr(estimator, "min_split_significance", None) is not None
    )


def validation_split(estimator, X, y, sample_weight, eval_set, encode_target, validate_X, split=True):
    """The training rows and the validation set of ``pruning="reduced_error" | "validation"``.

    Parameters
    ----------
    estimator : estimator with ``pruning``, ``validation_fraction``, ``random_state``
    X, y, sample_weight : the validated training data (``y`` encoded)
    eval_set : None or tuple ``(X_val, y_val)`` or ``(X_val, y_val, sample_weight_val)``
    encode_target : callable
        ``y_val`` (raw labels or targets) to the encoding of ``y``.
    validate_X : callable
        ``X_val`` to float64 (float32 kept), checked against the training width.
    split : bool, default=True
        Without ``eval_set``, take a ``validation_fraction`` split out of the
        training rows (stratified for classifiers, where every class has enough rows); ``False`` leaves it to the
        caller (forests use each tree's out-of-bag rows).

    Returns
    -------
    X, y, sample_weight : the rows to grow on
    validation : None or tuple ``(X_val, y_val, sample_weight_val)``
    """
    eval_set = eval_pair(eval_set)
    if not uses_validation(estimator):
        if eval_set is not None:
            raise ValueError("eval_set is only used by pruning='reduced_error' or pruning='validation'.")
        return X, y, sample_weight, None
    if eval_set is not None:
        X_val, y_val, *weight = eval_set
        shape = np.shape(X_val)
        if len(shape) == 2 and shape[1] != X.shape[1]:
            raise ValueError(f"eval_set: X_val has {shape[1]} features, but X has {X.shape[1]}.")
        X_val = validate_X(X_val)
        y_val = encode_target(np.asarray(y_val))
        weight_val = np.asarray(weight[0], dtype=np.float64) if weight else np.ones(y_val.shape[0])
        if X_val.shape[0] != y_val.shape[0] or weight_val.shape != y_val.shape:
            raise ValueError("eval_set: X_val, y_val and sample_weight_val must have the same number of rows.")
        return X, y, sample_weight, (X_val, y_val, weight_val)
    if not split:
        return X, y, sample_weight, None
    X, X_val, y, y_val, sample_weight, weight_val = train_test_split(
        X, y, sample_weight, test_size=estimator.validation_fraction,
        stratify=y if is_classifier(estimator) and _can_stratify(y, estimator.validation_fraction) else None,
        random_state=random_seed(estimator.random_state),
    )
    return X, y, sample_weight, (X_val, y_val, weight_val)


def _can_stratify(y, validation_fraction):
    """Whether encoded labels ``y`` allow scikit-learn's stratified split of ``validation_fraction``: two rows of
    every class, and at least as many validation and training rows as classes (else the split is uniform)."""
    if isinstance(validation_fraction, Integral):
        n_validation = validation_fraction
    else:
        n_validation = ceil(validation_fraction * y.size)  # train_test_split's rounding
    class_counts = np.bincount(y)
    class_counts = class_counts[class_counts > 0]
    return class_counts.min() >= 2 and min(n_validation, y.size - n_validation) >= class_counts.size


def prune_grown_tree(estimator, tree, backend, training, validation):
    """``tree`` pruned as ``estimator``'s parameters say, in this order:

    0. ``algorithm="c45"``: ``collapse_subtrees``, and ``pruning=None`` means ``"pessimistic"`` (J48's
       defaults); ID3's and C4.5's trees are recounted with entropy impurities;
    1. ``min_split_significance`` (classifiers): ``prune_chi_square``;
    2. ``pruning``: ``"validation"`` (``prune_validation``), ``"reduced_error"``
       (``prune_reduced_error``), ``"mdl"`` (``prune_mdl``) or ``"pessimistic"``
       (``prune_pessimistic``, with ``confidence_factor`` and ``subtree_raising``);
    3. ``ccp_alpha > 0``: ``prune_cost_complexity``, as scikit-learn prunes its grown trees.

    Parameters
    ----------
    estimator : a gpuforest tree or forest
    tree : Tree
    backend : Backend
    training : tuple ``(X, y, sample_weight, rows)``
        The training data (``X`` float64 or float32 of shape (n_samples, n_features), ``y``
        encoded, ``sample_weight`` the weights the tree was grown with) and
        the rows of it the tree was grown on (for ``"mdl"`` and ``"pessimistic"``).
    validation : None or tuple ``(X_val, y_val, sample_weight_val)``
        For ``"validation"`` and ``"reduced_error"``; ``y_val`` encoded as the tree's targets.
    """
    X, y, sample_weight, rows = training
    classification = is_classifier(estimator)
    significance = getattr(estimator, "min_split_significance", None)
    pruning, criterion = estimator.pruning, getattr(estimator, "criterion", None)
    if getattr(estimator, "algorithm", "cart") == "c45":
        tree = collapse_subtrees(tree)
        pruning = "pessimistic" if pruning is None else pruning
    if getattr(estimator, "algorithm", "cart") != "cart":
        criterion = "entropy"
    if significance is not None:
        tree = prune_chi_square(tree, significance)
    if pruning == "validation":
        tree = prune_validation(tree, *validation, backend, classification)
    elif pruning == "reduced_error":
        tree = prune_reduced_error(tree, *validation, backend, classification)
    elif pruning == "mdl":
        tree = prune_mdl(tree, X[rows], backend)
    elif pruning == "pessimistic":
        tree = prune_pessimistic(
            tree, X[rows], y[rows], sample_weight[rows], criterion, estimator.confidence_factor,
            estimator.subtree_raising,
        )
    if estimator.ccp_alpha > 0:
        tree = prune_cost_complexity(tree, estimator.ccp_alpha)
    return tree
