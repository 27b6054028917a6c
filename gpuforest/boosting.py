"""Gradient boosting (Friedman 2001) with second-order leaf values (Chen & Guestrin 2016).

Each round computes every row's gradient and hessian of the loss at the
current raw scores, grows one tree per raw score (one per class for the
multinomial loss) on their fixed-point (g, h) histograms with the ``newton``
criterion (gain ``G_L^2/(H_L+l2) + G_R^2/(H_R+l2) - G^2/(H+l2)``, leaf value
``-G / (H + l2)``), and adds ``learning_rate`` times the tree's leaf values.

First version (issue 5 in progress): losses ``squared_error`` and
``log_loss`` (binary and multinomial), depth-wise or best-first growth
(``max_leaf_nodes``), ``min_samples_leaf``, ``min_child_weight``,
``l2_regularization``. The classes' trees of a round are grown one after
another, not yet in one batch.
"""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .backend import DEVICES, get_backend
from .binning import BinMapper
from .decision_tree import MAX_DEPTH_UNLIMITED, AllowNaNMixin, encode_classes, validate_fit_data, validate_predict_data
from .grower import GrowthParams, TreeGrower
from .losses import HalfBinomialLoss, HalfMultinomialLoss, HalfSquaredError
from .statistics import newton_statistics
from .tree import pack_forest


def _boosting_init(default_loss):
    """``__init__`` of a boosting estimator: the same parameters, its own default loss."""

    def __init__(
        self, *, loss=default_loss, learning_rate=0.1, n_estimators=100, max_depth=None, max_leaf_nodes=31,
        min_samples_leaf=20, min_child_weight=1e-3, l2_regularization=0.0, max_bins=256, random_state=None,
        device="auto",
    ):
        self.loss = loss
        self.learning_rate = learning_rate
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.max_leaf_nodes = max_leaf_nodes
        self.min_samples_leaf = min_samples_leaf
        self.min_child_weight = min_child_weight
        self.l2_regularization = l2_regularization
        self.max_bins = max_bins
        self.random_state = random_state
        self.device = device

    return __init__


class BaseGradientBoosting(AllowNaNMixin, BaseEstimator):
    """Parameters, the boosting loop and raw-score prediction shared by both estimators."""

    _parameter_constraints = {
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "max_leaf_nodes": [Interval(Integral, 2, None, closed="left"), None],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "min_child_weight": [Interval(Real, 0, None, closed="left")],
        "l2_regularization": [Interval(Real, 0, None, closed="left")],
        "max_bins": [Interval(Integral, 2, 256, closed="both")],
        "random_state": ["random_state"],
        "device": [StrOptions(set(DEVICES))],
    }

    def _boost(self, X, y, sample_weight):
        """Grow ``n_estimators`` rounds of trees; sets ``trees_`` (round-major) and ``baseline_``."""
        backend = get_backend(self.device)
        xp = backend.xp
        self.device_ = backend.name
        seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        self._bin_mapper = BinMapper(self.max_bins, random_state=seed).fit(X)
        X_binned = self._bin_mapper.transform(X, backend)
        n_samples = X.shape[0]
        self.baseline_ = self._loss.baseline(y, sample_weight)
        raw = xp.asarray(np.tile(self.baseline_, (n_samples, 1)))
        y_device, weight_device = xp.asarray(y), xp.asarray(sample_weight)
        counts = xp.ones((1, n_samples), dtype=np.int32)
        tree_offsets = np.array([0, n_samples], dtype=np.int64)
        self.trees_ = []
        for _ in range(self.n_estimators):
            gradients, hessians = self._loss.gradients(xp, y_device, raw, weight_device)
            for k in range(self._loss.n_trees_per_iteration):
                g, h = backend.to_host(gradients[:, k]), backend.to_host(hessians[:, k])
                stats = newton_statistics(g, h, self.l2_regularization)
                rows = backend.row_data(X_binned, np.arange(n_samples, dtype=np.int32), counts, stats)
                (tree,) = TreeGrower(backend, rows, tree_offsets, self._bin_mapper, stats, 1, self._params(h, seed)).grow()
                tree.value *= self.learning_rate
                raw[:, k] += xp.asarray(tree.value[tree.apply(X, backend), 0, 0])
                self.trees_.append(tree)
        self._packed = pack_forest(self.trees_)
        return self

    def _params(self, hessians, seed):
        """Growth rules of one tree; ``min_child_weight`` is a fraction of this tree's total hessian."""
        total_hessian = float(hessians.sum())
        return GrowthParams(
            max_depth=MAX_DEPTH_UNLIMITED if self.max_depth is None else self.max_depth,
            min_samples_split=2 * self.min_samples_leaf,
            min_samples_leaf=self.min_samples_leaf,
            min_weight_fraction_leaf=self.min_child_weight / total_hessian if total_hessian > 0 else 0.0,
            min_impurity_decrease=0.0,
            max_leaf_nodes=self.max_leaf_nodes,
            max_features=self.n_features_in_,
            seed=seed,
        )

    def _raw_predict(self, X):
        """Raw scores, shape (n_samples, n_trees_per_iteration)."""
        check_is_fitted(self, "trees_")
        X = validate_predict_data(self, X)
        backend = get_backend(self.device_)
        tree_offsets, threshold, node_info, value, _ = self._packed
        leaves = backend.predict_leaves(X, tree_offsets, threshold, node_info)
        per_tree = value[tree_offsets[None, :] + leaves, 0]  # (n_samples, n_trees)
        n_per_round = self._loss.n_trees_per_iteration
        return self.baseline_ + per_tree.reshape(X.shape[0], -1, n_per_round).sum(axis=1)


class GradientBoostingRegressor(RegressorMixin, BaseGradientBoosting):
    """Gradient boosting for regression (first version: ``loss="squared_error"``).

    Parameters
    ----------
    loss : {"squared_error"}, default="squared_error"
    learning_rate : float, default=0.1
    n_estimators : int, default=100
        Boosting rounds.
    max_depth : int or None, default=None
    max_leaf_nodes : int or None, default=31
        Best-first growth up to this many leaves per tree (as HistGradientBoosting).
    min_samples_leaf : int, default=20
    min_child_weight : float, default=1e-3
        Smallest hessian sum of a leaf.
    l2_regularization : float, default=0.0
    max_bins : int, default=256
    random_state : int, RandomState instance or None, default=None
    device : {"auto", "cpu", "cuda"}, default="auto"

    Attributes
    ----------
    trees_ : list of gpuforest.tree.Tree
        One tree per round, leaf values already scaled by ``learning_rate``.
    baseline_ : ndarray of shape (1,)
    """

    _parameter_constraints = {**BaseGradientBoosting._parameter_constraints, "loss": [StrOptions({"squared_error"})]}

    __init__ = _boosting_init(default_loss="squared_error")

    def fit(self, X, y, sample_weight=None):
        self._validate_params()
        X, y, sample_weight = validate_fit_data(self, X, y, sample_weight)
        self._loss = HalfSquaredError()
        return self._boost(X, np.asarray(y, dtype=np.float64), sample_weight)

    def predict(self, X):
        return self._raw_predict(X)[:, 0]


class GradientBoostingClassifier(ClassifierMixin, BaseGradientBoosting):
    """Gradient boosting for classification (first version: ``loss="log_loss"``, binary or multinomial).

    Parameters and attributes as ``GradientBoostingRegressor``, plus ``classes_``.
    """

    _parameter_constraints = {**BaseGradientBoosting._parameter_constraints, "loss": [StrOptions({"log_loss"})]}

    __init__ = _boosting_init(default_loss="log_loss")

    def fit(self, X, y, sample_weight=None):
        self._validate_params()
        X, y, sample_weight = validate_fit_data(self, X, y, sample_weight)
        self.classes_, y_encoded = encode_classes(y)
        self.n_classes_ = self.classes_.shape[0]
        if self.n_classes_ == 1:
            raise ValueError("The number of classes has to be greater than one; got 1 class.")
        self._loss = HalfBinomialLoss() if self.n_classes_ == 2 else HalfMultinomialLoss(self.n_classes_)
        targets = y_encoded.astype(np.float64) if self.n_classes_ == 2 else y_encoded
        return self._boost(X, targets, sample_weight)

    def decision_function(self, X):
        raw = self._raw_predict(X)
        return raw[:, 0] if self.n_classes_ == 2 else raw

    def predict_proba(self, X):
        raw = self._raw_predict(X)
        return np.asarray(self._loss.proba(np, raw))

    def predict(self, X):
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]
