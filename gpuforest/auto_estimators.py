"""``n_estimators="auto"``: grow a bootstrap forest until its out-of-bag error stops improving.

The out-of-bag error is measured every ``AUTO_STEP_TREES`` trees (a step):
the step's out-of-bag sums are added to the running ones (each row's mean
over the trees that did not draw it: the out-of-bag pass of
``BaseForest._out_of_bag``, one step at a time), and the error of the forest
so far is measured over the rows that some tree left out: the misclassified
share (classifiers, from the mean class proportions) or the mean squared error
(regressors). Growth stops when ``n_iter_no_change`` steps in a row have not
lowered the best error by more than ``tol``, or at ``AUTO_MAX_TREES``; the
forest keeps the trees up to its best step.

Trees are grown in batches of ``n_iter_no_change + 1`` steps, or as many trees
as the forest has when that is more (so a forest of ``k`` trees takes about
``log2(k)`` batches): every level of a batch costs a few kernel launches
whatever its number of trees, so steps grown one by one cost more than the
trees grown past the stop (at most as many as the forest kept, or
``n_iter_no_change + 1`` steps).
Each tree depends only on (seed, its index) (``forest.py``), so the kept trees
are the first trees of a fixed-size fit with the same ``random_state``.
"""

import numpy as np
from sklearn.base import is_classifier

AUTO_STEP_TREES = 10
AUTO_MAX_TREES = 1000


def out_of_bag_error(forest, oob_sum, oob_count, targets):
    """The out-of-bag error over the rows with an out-of-bag tree (NaN without any).

    Parameters
    ----------
    oob_sum : ndarray of shape (n_samples, n_values)
        Per row, the sum of the values of the trees that did not draw it.
    oob_count : ndarray of shape (n_samples,)
        How many trees did not draw each row.
    targets : ndarray of shape (n_samples,)
        Class indices (classifiers) or targets (regressors).
    """
    scored = oob_count > 0
    if not scored.any():
        return np.nan
    mean = oob_sum[scored] / oob_count[scored, None]
    if is_classifier(forest):
        return float(np.mean(np.argmax(mean, axis=1) != targets[scored]))
    return float(np.mean((mean[:, 0] - targets[scored]) ** 2))


def grow_until_out_of_bag_error_stops(forest, backend, X, targets, sample_weight, validation):
    """Grow ``forest.trees_`` until the out-of-bag error stops improving (module docstring).

    Returns the out-of-bag error after each step of ``AUTO_STEP_TREES`` trees, up to the stop;
    ``forest.trees_`` ends with the trees up to the step of least error.
    """
    n_samples = X.shape[0]
    oob_sum = np.zeros((n_samples, forest._n_values()))
    oob_count = np.zeros(n_samples, dtype=np.int64)
    errors, best_trees, best_error, steps_without_gain = [], 0, np.inf, 0
    while len(forest.trees_) < AUTO_MAX_TREES and steps_without_gain < forest.n_iter_no_change:
        first_tree = len(forest.trees_)
        n_trees = min(max(AUTO_STEP_TREES * (forest.n_iter_no_change + 1), first_tree), AUTO_MAX_TREES - first_tree)
        forest._grow_trees(backend, X, targets, sample_weight, validation, first_tree, n_trees)
        forest._pack_trees()
        for step_first in range(first_tree, first_tree + n_trees, AUTO_STEP_TREES):
            for _, block, out_of_bag, values in forest._out_of_bag_values(backend, X, step_first, AUTO_STEP_TREES):
                oob_sum[block] += np.einsum("trv,tr->rv", values, out_of_bag)
                oob_count[block] += out_of_bag.sum(axis=0)
            errors.append(out_of_bag_error(forest, oob_sum, oob_count, targets))
            if errors[-1] < best_error - forest.tol:
                best_trees, best_error, steps_without_gain = step_first + AUTO_STEP_TREES, errors[-1], 0
            else:
                steps_without_gain += 1
            if steps_without_gain == forest.n_iter_no_change:
                break
    del forest.trees_[best_trees:]
    return errors
