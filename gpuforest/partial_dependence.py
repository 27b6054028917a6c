"""Partial dependence by the weighted tree traversal (``method="recursion"`` of scikit-learn's
``sklearn.inspection.partial_dependence``).

The partial dependence of a tree on target features ``S`` at a grid point ``x_S`` is the mean
prediction over the training data with ``x_S`` fixed. Friedman (2001, "Greedy function
approximation", section 8.2) computes it from the tree alone: a split on a feature of ``S``
sends the point down the branch its value takes; a split on any other feature sends it down
every branch, weighted by the branch's share of the node's training weight; the result is the
weighted sum of the leaf values reached, as scikit-learn's ``compute_partial_dependence``
(``sklearn/tree/_tree.pyx``) and its histogram-boosting predictor (``_predictor.pyx``). It equals
the brute-force mean over the training rows (``method="brute"``) for a model additive in the
target features and the others (a sum of stumps); otherwise a node's branches are weighted by the
training rows that reached the node, where brute force weighs by where all rows go.

Every split kind of ``gpuforest.tree`` is followed as prediction follows it
(``kernels.common.split_child``): a missing value (NaN, or no valid code at a categorical split)
goes where ``missing_go_to_left`` says; a code without a child stops at a ``MULTIWAY`` node, whose
value is then the prediction (and the share of the training weight that stopped there weighs the
node's own value when the feature is not a target); a C4.5 tree (``missing_fractional``) sends a
point without a branch down every branch, as ``Tree.fractional_values`` does. The grid values of a
categorical feature are its category codes.

scikit-learn accepts an estimator for ``method="recursion"`` by its class (``isinstance`` against
its tree, forest and boosting classes); ``register_recursion`` registers gpuforest's estimators as
virtual subclasses of ``BaseHistGradientBoosting``, which scikit-learn uses for nothing else.
"""

import numpy as np
from sklearn.base import is_classifier
from numba import njit
from sklearn.ensemble._hist_gradient_boosting.gradient_boosting import BaseHistGradientBoosting
from sklearn.utils.validation import check_is_fitted

from .categorical import mask_unknown_codes
from .kernels.common import split_child, split_value_missing
from .tree import MULTIWAY, TREE_LEAF, _children_of, pack_node_info, pack_split_values


class RecursionPartialDependenceMixin:
    """``_compute_partial_dependence_recursion`` of an estimator whose ``_partial_dependence_members()``
    gives ``(members, n_outputs)``: ``members`` an iterable of ``(tree, node_weight, scale, first_output)``,
    each tree's partial dependence times ``scale`` added to the outputs from ``first_output`` on."""

    def _compute_partial_dependence_recursion(self, grid, target_features):
        """Partial dependence at every grid point by Friedman's weighted tree traversal (see the module
        docstring): the mean prediction of a regressor, the raw scores of boosting (without ``baseline_``,
        as scikit-learn's boosting leaves out its ``init`` estimator), the class probabilities of a tree or
        forest classifier (of the positive class only when there are two, as ``method="brute"`` gives them).

        Parameters
        ----------
        grid : array-like of shape (n_points, n_target_features)
        target_features : array-like of shape (n_target_features,)
            Column indices of the features the grid gives values of.

        Returns
        -------
        averaged_predictions : ndarray of shape (n_outputs, n_points)
        """
        check_is_fitted(self)
        grid, target_features = check_grid(self, grid, target_features)
        members, n_outputs = self._partial_dependence_members()
        averaged_predictions = np.zeros((n_outputs, grid.shape[0]))
        for tree, node_weight, scale, first_output in members:
            if tree.surrogate_feature.shape[1] > 0 and np.isnan(grid).any():
                raise ValueError(
                    "method='recursion' cannot follow surrogate splits at missing grid values; use method='brute'."
                )
            outputs = averaged_predictions[first_output:first_output + tree.value.shape[2]]
            add_tree_partial_dependence(tree, grid, target_features, node_weight, scale, outputs)
        if is_classifier(self) and n_outputs == 2:
            return averaged_predictions[1:]
        return averaged_predictions


def register_recursion(*estimator_classes):
    """Let ``sklearn.inspection.partial_dependence`` take ``method="recursion"`` (and choose it for
    ``method="auto"``) for ``estimator_classes``, which define ``_compute_partial_dependence_recursion``."""
    for estimator_class in estimator_classes:
        BaseHistGradientBoosting.register(estimator_class)


def check_grid(estimator, grid, target_features):
    """``grid`` as prediction reads X (float32; a categorical feature's values as its category codes, NaN for an
    unknown one, see ``categorical``) and ``target_features`` as int64, checked.

    Parameters
    ----------
    estimator : fitted gpuforest estimator
    grid : array-like of shape (n_points, n_target_features)
        Values of the target features; a categorical feature's categories as at fit (its codes, or the
        categories of a DataFrame's non-numeric column).
    target_features : array-like of shape (n_target_features,)

    Returns
    -------
    grid : ndarray of shape (n_points, n_target_features), dtype float32
    target_features : ndarray of shape (n_target_features,), dtype int64
    """
    n_features = estimator.n_features_in_
    target_features = np.asarray(target_features, dtype=np.int64).ravel()
    grid = np.asarray(grid)
    if grid.ndim != 2 or grid.shape[1] != target_features.shape[0]:
        raise ValueError(
            f"grid must have shape (n_points, {target_features.shape[0]}), one column per target feature; "
            f"got shape {grid.shape}."
        )
    if np.any((target_features < 0) | (target_features >= n_features)):
        raise ValueError(f"target_features must be in [0, {n_features - 1}]; got {target_features.tolist()}.")
    is_categorical = getattr(estimator, "is_categorical_", None)
    columns = [grid[:, column] for column in range(grid.shape[1])]
    for column, feature in enumerate(target_features):
        categories = estimator.categories_[feature] if is_categorical is not None else None
        if categories is not None and not np.array_equal(categories, np.arange(categories.shape[0])):
            import pandas

            codes = pandas.Index(categories).get_indexer(columns[column]).astype(np.float64)
            columns[column] = np.where(codes < 0, np.nan, codes)
    try:
        coded = np.full((grid.shape[0], n_features), np.nan, dtype=np.float32)
        coded[:, target_features] = np.column_stack(columns).astype(np.float32) if columns else coded[:, :0]
    except (TypeError, ValueError) as error:
        raise ValueError(
            "method='recursion' needs numeric grid values (a categorical feature's categories as at fit); "
            "use method='brute' for other values."
        ) from error
    return np.ascontiguousarray(mask_unknown_codes(estimator, coded)[:, target_features]), target_features


def branch_shares(tree, node_weight):
    """Share of the training weight that goes to each node from its parent, and that stops at each node.

    Parameters
    ----------
    tree : gpuforest.tree.Tree
    node_weight : ndarray of shape (node_count,)
        The training weight that reached each node.

    Returns
    -------
    share : ndarray of shape (node_count,), dtype float64
        A child's weight over its parent's (0 at the root): of the parent's weight at a ``MULTIWAY``
        split, whose rows without a branch stop there; of the weight of its siblings together elsewhere,
        so that the shares of a binary split (and a C4.5 split, whose rows without a value go down every
        branch) sum to one.
    stop_share : ndarray of shape (node_count,), dtype float64
        The share of a ``MULTIWAY`` node's weight that no child took; 0 elsewhere.
    """
    internal = np.flatnonzero(tree.children_left != TREE_LEAF)
    children, child_parent, _ = _children_of(internal, tree.children_left, tree.children_right)
    node_weight = np.asarray(node_weight, dtype=np.float64)
    children_weight = np.bincount(child_parent, weights=node_weight[children], minlength=tree.node_count)
    stops = (tree.split_type == MULTIWAY) & (not tree.missing_fractional)
    denominator = np.where(stops, node_weight, children_weight)
    share = np.zeros(tree.node_count)
    parent_weight = denominator[child_parent]
    share[children] = np.divide(node_weight[children], parent_weight, out=np.zeros(children.shape[0]),
                                where=parent_weight > 0)
    stop_share = np.zeros(tree.node_count)
    np.divide(denominator - children_weight, denominator, out=stop_share, where=stops & (denominator > 0))
    return share, np.maximum(stop_share, 0.0)


def add_tree_partial_dependence(tree, grid, target_features, node_weight, scale, out):
    """Add ``scale`` times one tree's partial dependence at every grid point to ``out``.

    Parameters
    ----------
    tree : gpuforest.tree.Tree
    grid : ndarray of shape (n_points, n_target_features), dtype float32
    target_features : ndarray of shape (n_target_features,), dtype int64
    node_weight : ndarray of shape (node_count,)
        The training weight of each node: its weighted sample count (trees and forests, as
        scikit-learn's) or its row count (boosting, whose node weights are hessian sums).
    scale : float
    out : ndarray of shape (n_values, n_points), dtype float64
        ``n_values`` as the tree's ``value``.
    """
    split_value, category_bitset = pack_split_values(
        tree.split_type, tree.threshold, tree.children_left, tree.children_right, tree.category_bitset
    )
    node_info = pack_node_info(tree.feature, tree.missing_go_to_left, tree.children_left, tree.split_type)
    target_column = np.full(tree.n_features, -1, dtype=np.int64)
    target_column[target_features] = np.arange(target_features.shape[0])
    share, stop_share = branch_shares(tree, node_weight)
    _add_partial_dependence(
        grid, target_column, split_value, node_info, category_bitset, tree.children_right.astype(np.int64),
        tree.missing_fractional, share, stop_share, np.ascontiguousarray(tree.value[:, 0, :]), float(scale), out,
    )


@njit(cache=True)
def _add_partial_dependence(grid, target_column, split_value, node_info, category_bitset, last_child, fractional,
                            share, stop_share, value, scale, out):
    """Friedman's weighted traversal of one tree for every grid point, a stack of (node, weight) each:
    ``out[:, point] += scale * sum(weight * value[leaf])`` (see the module docstring and
    ``kernels.common.route_to_leaf`` for ``node_info`` and ``split_value``)."""
    stack_node = np.empty(node_info.shape[0], dtype=np.int64)
    stack_weight = np.empty(node_info.shape[0])
    for point in range(grid.shape[0]):
        stack_node[0] = 0
        stack_weight[0] = scale
        top = 0
        while top >= 0:
            node = stack_node[top]
            weight = stack_weight[top]
            top -= 1
            info = node_info[node]
            if info < 0:
                out[:, point] += weight * value[node]
                continue
            first_child = info >> 32
            column = target_column[(info >> 3) & 0x1FFFFFFF]
            if column >= 0:
                x = grid[point, column]
                child = split_child(x, info, split_value[node], category_bitset)
                if child >= 0 and not (fractional and split_value_missing(x, info)):
                    top += 1
                    stack_node[top] = first_child + child
                    stack_weight[top] = weight
                    continue
                if child < 0 and not fractional:
                    out[:, point] += weight * value[node]
                    continue
            for node_child in range(first_child, last_child[node] + 1):
                top += 1
                stack_node[top] = node_child
                stack_weight[top] = weight * share[node_child]
            if stop_share[node] > 0:
                out[:, point] += weight * stop_share[node] * value[node]
