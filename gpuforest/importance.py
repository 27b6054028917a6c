"""Feature importance types of trees, forests and boosting (``importance_type``, ``get_score``).

- ``"gain"``: the decrease in weighted impurity of the splits on a feature (Breiman et al. 1984, section 5.3.4;
  boosting's split gain), scikit-learn's and LightGBM's ``importance_type="gain"``;
- ``"split"``: the number of splits on a feature (LightGBM's ``"split"``, XGBoost's ``"weight"``);
- ``"cover"``: the training weight that reached the splits on a feature, summed over the splits: the weighted
  sample counts of trees and forests, the hessian sums of boosting (XGBoost's ``"total_cover"``).

``feature_importances_`` normalises them to sum to one (``"gain"`` as each estimator does today: a forest
averages its trees' normalised importances, as scikit-learn's); ``get_score`` gives the totals over all trees,
by feature name, as XGBoost's ``Booster.get_score``.
"""

import numpy as np
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from .tree import TREE_LEAF

IMPORTANCE_TYPES = ("gain", "split", "cover")
IMPORTANCE_TYPE_CONSTRAINT = [StrOptions(set(IMPORTANCE_TYPES))]


def tree_importances(tree, importance_type):
    """Total importance of each feature in one tree.

    Parameters
    ----------
    tree : gpuforest.tree.Tree
    importance_type : {"gain", "split", "cover"}

    Returns
    -------
    importances : ndarray of shape (n_features,), dtype float64
        Not normalised: the weighted impurity decrease, the number of splits, or the split nodes' training weight.
    """
    internal = np.flatnonzero(tree.children_left != TREE_LEAF)
    if importance_type == "gain":
        return tree.compute_feature_importances(normalize=False) * tree.weighted_n_node_samples[0]
    weights = None if importance_type == "split" else tree.weighted_n_node_samples[internal]
    return np.bincount(tree.feature[internal], weights=weights, minlength=tree.n_features).astype(np.float64)


def check_importance_type(importance_type):
    """``importance_type`` itself, or a ValueError naming the allowed ones."""
    if importance_type not in IMPORTANCE_TYPES:
        raise ValueError(f"importance_type must be one of {list(IMPORTANCE_TYPES)}; got {importance_type!r}.")
    return importance_type


class ImportanceTypeMixin:
    """``get_score`` and the ``"split"`` and ``"cover"`` importances of an estimator whose
    ``_importance_trees()`` lists its fitted trees."""

    def _total_importances(self, importance_type):
        """Totals over the trees, shape (n_features_in_,)."""
        check_is_fitted(self)
        check_importance_type(importance_type)
        totals = np.zeros(self.n_features_in_)
        for tree in self._importance_trees():
            totals += tree_importances(tree, importance_type)
        return totals

    def _typed_importances(self):
        """``feature_importances_`` of ``importance_type`` "split" or "cover": the totals normalised to sum to one
        (zeros without a split)."""
        totals = self._total_importances(self.importance_type)
        total = totals.sum()
        return totals / total if total > 0 else totals

    def get_score(self, importance_type=None):
        """Total importance of each feature used in a split, by name (``feature_names_in_``, else ``"f0"``, ...).

        Parameters
        ----------
        importance_type : {"gain", "split", "cover"}, default=None
            ``self.importance_type`` when None (see ``gpuforest.importance``).

        Returns
        -------
        scores : dict of str to float
            The features with a nonzero total, as XGBoost's ``Booster.get_score`` (totals, not means).
        """
        totals = self._total_importances(self.importance_type if importance_type is None else importance_type)
        names = getattr(self, "feature_names_in_", None)
        return {
            str(names[feature]) if names is not None else f"f{feature}": float(totals[feature])
            for feature in np.flatnonzero(totals)
        }
