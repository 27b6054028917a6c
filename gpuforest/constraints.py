"""Monotonic and interaction constraints: validation, and the per-node bookkeeping of the grower.

Monotonic constraints (``monotonic_cst``, scikit-learn's meanings): feature ``f``
with constraint 1 (-1) makes predictions non-decreasing (non-increasing) in
``f``. Every node has value bounds ``[lower, upper]`` (the root's infinite); a
split on a constrained feature is allowed only when its children's values are
ordered (``kernels.common.constrained_gain``), and the children inherit the
bounds cut at the middle of their values: for an increasing constraint the left
child's upper bound and the right child's lower bound become
``(v_left + v_right) / 2`` (scikit-learn's ``_tree.pyx`` and HistGradientBoosting's
``grower.py``; Chen & Guestrin's XGBoost does the same). Every node's value is
clipped into its bounds, so every leaf left of an increasing split is at most
every leaf right of it. The value is the Newton step for boosting (the raw
score's increment), the mean for regression and class 1's proportion for binary
classification (multiclass refuses constraints, as scikit-learn does).

Interaction constraints (``interaction_cst``, HistGradientBoosting's meanings): groups
of features that may interact; the features in no group form one more group. A
node may split on the features of every group that holds all the features split
on above it: its allowed groups are its parent's that hold the parent's split
feature (``children_groups``).
"""

from numbers import Integral

import numpy as np
from sklearn.utils.validation import _check_monotonic_cst

from .kernels.common import MISCLASSIFICATION


def check_monotonic_cst(estimator, monotonic_cst, n_classes=None, is_categorical=None, tree_messages=False):
    """Validated ``monotonic_cst`` as the kernels read it: (n_features,) int64 of -1, 0, 1, or None.

    scikit-learn's checks and messages (``sklearn.utils.validation._check_monotonic_cst``: an array-like of
    ``n_features_in_`` values, or a dict by feature name; ``tree_messages``: an array-like's errors in the words
    of scikit-learn's trees, ``BaseDecisionTree._fit``); None where every constraint is 0, so that an
    unconstrained fit runs the unconstrained code. ``n_classes``: a classifier's class count (more than two
    are refused); ``is_categorical``: (n_features,) bool, those features may not be constrained.
    """
    if monotonic_cst is None:
        return None
    if tree_messages and not isinstance(monotonic_cst, dict):
        _check_tree_monotonic_cst(np.asarray(monotonic_cst), estimator.n_features_in_)
    constraints = _check_monotonic_cst(estimator, monotonic_cst).astype(np.int64)
    if not constraints.any():
        return None
    if n_classes is not None and n_classes > 2:
        raise ValueError("Monotonicity constraints are not supported with multiclass classification")
    if is_categorical is not None and np.any(constraints[np.asarray(is_categorical, dtype=bool)] != 0):
        raise ValueError("Categorical features cannot have monotonic constraints.")
    return constraints


def _check_tree_monotonic_cst(monotonic_cst, n_features):
    """scikit-learn's trees' checks of an array-like ``monotonic_cst``, with their messages."""
    if monotonic_cst.shape[0] != n_features:
        raise ValueError(
            f"monotonic_cst has shape {monotonic_cst.shape[0]} but the input data X has {n_features} features."
        )
    if not np.all(np.isin(monotonic_cst, (-1, 0, 1))):
        raise ValueError(
            f"monotonic_cst must be None or an array-like of -1, 0 or 1, but got {np.unique(monotonic_cst)}"
        )


def check_interaction_cst(interaction_cst, n_features):
    """Validated ``interaction_cst`` as groups: (n_groups, n_features) bool, or None (HistGradientBoosting's
    ``_check_interaction_cst``: a sequence of sequences of feature indices, ``"pairwise"`` or
    ``"no_interactions"``; the features in no group are one more group)."""
    if interaction_cst is None:
        return None
    if isinstance(interaction_cst, str):
        if interaction_cst == "no_interactions":
            groups = [{feature} for feature in range(n_features)]
        elif interaction_cst == "pairwise":
            groups = [{a, b} for a in range(n_features) for b in range(a + 1, n_features)]
        else:
            raise ValueError(
                "The 'interaction_cst' parameter must be None, a sequence of tuples or lists of feature indices, "
                f"'pairwise' or 'no_interactions'. Got {interaction_cst!r} instead."
            )
    else:
        try:
            groups = [set(group) for group in interaction_cst]
        except TypeError:
            raise ValueError(
                f"Interaction constraints must be a sequence of tuples or lists, got: {interaction_cst!r}."
            ) from None
    for group in groups:
        for feature in group:
            if not (isinstance(feature, Integral) and not isinstance(feature, bool) and 0 <= feature < n_features):
                raise ValueError(
                    "Interaction constraints must consist of integer indices in"
                    f" [0, n_features - 1] = [0, {n_features - 1}], specifying the"
                    f" position of features, got invalid indices: {group!r}"
                )
    rest = set(range(n_features)).difference(*groups)
    if rest:
        groups.append(rest)
    members = np.zeros((len(groups), n_features), dtype=bool)
    for index, group in enumerate(groups):
        members[index, sorted(group)] = True
    return members


def root_bounds(n_nodes):
    """``(-inf, inf)`` value bounds of ``n_nodes`` roots: (n_nodes, 2) float64."""
    bounds = np.empty((n_nodes, 2))
    bounds[:, 0], bounds[:, 1] = -np.inf, np.inf
    return bounds


def constrained_values(values, criterion):
    """The value a monotonic constraint orders of each node's ``values`` (n_nodes, n_values): class 1's
    proportion for classification (two classes), else the one value; (n_nodes,) float64."""
    return values[:, 1] if criterion <= MISCLASSIFICATION else values[:, 0]


def clip_values(values, bounds, criterion):
    """``values`` (n_nodes, n_values) with each node's constrained value clipped into its ``bounds``
    (n_nodes, 2); a classification node's class 0 proportion is then one minus class 1's (scikit-learn's
    ``clip_node_value``). Nodes within their bounds keep their values bit for bit."""
    constrained = constrained_values(values, criterion)
    clipped = np.clip(constrained, bounds[:, 0], bounds[:, 1])
    moved = clipped != constrained
    if not moved.any():
        return values
    values = values.copy()
    if criterion <= MISCLASSIFICATION:
        values[moved, 1] = clipped[moved]
        values[moved, 0] = 1.0 - clipped[moved]
    else:
        values[moved, 0] = clipped[moved]
    return values


def children_bounds(bounds, children_values, split_constraints):
    """Value bounds of the children of split nodes, lefts then rights: (2 n_split, 2) float64.

    Parameters
    ----------
    bounds : ndarray of shape (n_split, 2), dtype float64
        The split nodes' bounds.
    children_values : ndarray of shape (2 n_split,), dtype float64
        The children's constrained values (``constrained_values``), lefts then rights.
    split_constraints : ndarray of shape (n_split,), dtype int64
        The monotonic constraint of each node's split feature (0 for a categorical split).
    """
    n_split = bounds.shape[0]
    lower, upper = np.tile(bounds[:, 0], 2), np.tile(bounds[:, 1], 2)
    clipped = np.clip(children_values, lower, upper)
    middle = (clipped[:n_split] + clipped[n_split:]) / 2
    increasing, decreasing = split_constraints == 1, split_constraints == -1
    # Increasing: left <= middle <= right; decreasing: the other way round.
    upper[:n_split][increasing] = middle[increasing]
    lower[n_split:][increasing] = middle[increasing]
    lower[:n_split][decreasing] = middle[decreasing]
    upper[n_split:][decreasing] = middle[decreasing]
    return np.column_stack([lower, upper])


def children_groups(groups, members, split_feature):
    """Allowed interaction groups of the children of split nodes, lefts then rights: (2 n_split, n_groups) bool:
    each parent's groups (``groups`` (n_split, n_groups) bool) that hold its split feature (``members``:
    ``check_interaction_cst``'s (n_groups, n_features) bool; ``split_feature`` (n_split,) int)."""
    allowed = groups & members[:, split_feature].T
    return np.concatenate([allowed, allowed])


def group_features(groups, members):
    """(n_nodes, n_features) bool: the features of each node's allowed groups (``groups`` (n_nodes, n_groups))."""
    return (groups.astype(np.int64) @ members.astype(np.int64)) > 0
