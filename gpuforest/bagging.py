"""``BaggingClassifier`` and ``BaggingRegressor``: any base estimator, trees batched on the backend.

Both extend scikit-learn's estimators of the same names (Breiman 1996), so any
scikit-learn estimator can be bagged through scikit-learn's own loop on the
CPU. When the base estimator is a gpuforest decision tree (or ``None``, the
default) and every member sees every feature (``max_features=1.0``, no
``bootstrap_features``) with bootstrap sampling, the members are grown instead
as one batched forest on the backend: a ``RandomForest*`` with the tree's
parameters, whose members are the bagging members (``estimators_``).
``BaggingClassifier`` also takes the forests' ``voting`` and ``reject_label``,
and both take ``categorical_features`` for that batched forest and ``device``
for the default tree.
"""

import numpy as np
from sklearn.ensemble import BaggingClassifier as _SklearnBaggingClassifier
from sklearn.ensemble import BaggingRegressor as _SklearnBaggingRegressor
from sklearn.utils._mask import indices_to_mask
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import _num_features, check_is_fitted, validate_data

from .backend import get_backend, members_device
from .categorical import CATEGORICAL_FEATURES_CONSTRAINT, encode_fit_input, record_categories
from .decision_tree import (
    TREE_PARAMETER_CONSTRAINTS, DecisionTreeClassifier, DecisionTreeRegressor, validate_predict_data, x_dtype,
)
from .fitting import validate_params
from .forest import RandomForestClassifier, RandomForestRegressor
from .model_io import ModelFileMixin
from .voting import VOTING_STRATEGIES, combine_votes, predict_from_votes, resolve_reject_label

# Tree parameters a batched forest takes over from the base tree.
_TREE_PARAMETERS = (
    "criterion", "max_depth", "min_samples_split", "min_samples_leaf", "min_weight_fraction_leaf", "max_features",
    "max_leaf_nodes", "min_impurity_decrease", "ccp_alpha", "pruning", "validation_fraction", "max_bins", "device",
    "categorical_features", "monotonic_cst",
)


class _BatchedTreeBagging(ModelFileMixin):
    """What both bagging estimators add to scikit-learn's: the batched-forest fast path."""

    _tree_class = None
    _forest_class = None

    def _get_estimator(self):
        return self._tree_class(device=self.device) if self.estimator is None else self.estimator

    def _grows_forest(self, n_features, fit_params):
        """Whether the members can be grown as one batched forest."""
        all_features = self.max_features == 1.0 or self.max_features == n_features
        return (
            n_features is not None
            and isinstance(self._get_estimator(), self._tree_class)
            and not self._get_estimator().use_surrogates  # the forest has none: each tree's own fit
            and getattr(self._get_estimator(), "algorithm", "cart") == "cart"  # forests grow CART trees
            and all_features
            and not self.bootstrap_features
            and self.bootstrap
            and not fit_params
        )

    def _forest_params(self):
        tree = self._get_estimator()
        params = {name: getattr(tree, name) for name in _TREE_PARAMETERS}
        if self.is_categorical_ is not None:  # the bagging's own, found in X at fit, over the tree's
            params["categorical_features"] = self.is_categorical_
        return dict(
            params, n_estimators=self.n_estimators, bootstrap=True, max_samples=self.max_samples,
            oob_score=self.oob_score, n_jobs=self.n_jobs, random_state=self.random_state, verbose=self.verbose,
            warm_start=self.warm_start,
        )

    def fit(self, X, y, sample_weight=None, **fit_params):
        """Fit the members: as a batched forest when possible, else by scikit-learn's loop."""
        try:
            n_features = _num_features(X)
        except TypeError:  # not 2-D: scikit-learn's validation in its fit names the problem
            n_features = None
        if not self._grows_forest(n_features, fit_params):
            if self.categorical_features is not None:
                raise ValueError(
                    "categorical_features needs the members grown as one forest: a gpuforest decision tree "
                    "(the default estimator), max_features=1.0, bootstrap=True, bootstrap_features=False and no "
                    "fit parameters."
                )
            self.forest_ = None
            super().fit(X, y, sample_weight=sample_weight, **fit_params)
            self.device_ = members_device(self.estimators_, self.device)
            self._after_loop_fit(X, y)
            return self
        validate_params(self)
        X, frame_categories = encode_fit_input(self, X)
        X, y = validate_data(self, X, y, accept_sparse=["csr", "csc"], dtype=x_dtype(X), ensure_all_finite="allow-nan")
        record_categories(self, X, frame_categories, self._get_estimator().max_bins)
        if not (self.warm_start and getattr(self, "forest_", None) is not None):
            self.forest_ = self._forest_class(**self._forest_params())
        self.forest_.set_params(**self._forest_params())
        self.forest_.fit(X, y, sample_weight=sample_weight)
        self.device_ = self.forest_.device_
        self.estimator_ = self._get_estimator()
        self.estimators_ = self.forest_.estimators_
        self.estimators_features_ = [np.arange(n_features)] * len(self.estimators_)
        self._n_samples = X.shape[0]
        for name in (
            "classes_", "n_classes_", "oob_score_", "oob_decision_function_", "oob_prediction_", "estimator_weights_"
        ):
            if hasattr(self.forest_, name):
                setattr(self, name, getattr(self.forest_, name))
        return self

    def _after_loop_fit(self, X, y):
        """Hook after scikit-learn's loop has fitted the members."""

    @property
    def estimators_samples_(self):
        """The rows drawn for each member (with repetitions for the batched forest)."""
        check_is_fitted(self, "estimators_")
        forest = getattr(self, "forest_", None)
        if forest is None:
            return super().estimators_samples_
        backend = get_backend(forest.device_)
        counts = backend.to_host(forest._sample_counts(backend, 0, len(forest.trees_), self._n_samples))
        rows = np.arange(self._n_samples)
        return [np.repeat(rows, tree_counts) for tree_counts in counts]

    def _member_feature_views(self, X):
        """``(member, X restricted to its features)`` for scikit-learn's loop members."""
        for member, features in zip(self.estimators_, self.estimators_features_):
            yield member, X[:, features]


class BaggingClassifier(_BatchedTreeBagging, _SklearnBaggingClassifier):
    """A bagging classifier: scikit-learn's, with voting strategies and batched tree members.

    Parameters
    ----------
    estimator, n_estimators, max_samples, max_features, bootstrap, bootstrap_features,
    oob_score, warm_start, n_jobs, random_state, verbose
        As in ``sklearn.ensemble.BaggingClassifier``; the default estimator is
        ``gpuforest.DecisionTreeClassifier()``. With a gpuforest tree,
        ``max_features=1.0``, ``bootstrap=True`` and no ``bootstrap_features``
        the members grow as one batched forest on the tree's ``device``
        (weights then scale each drawn row's statistics instead of skewing
        the draws).
    voting : {"soft", "plurality", "majority", "weighted"}, default="soft"
        As in ``RandomForestClassifier``: mean probabilities, most votes,
        more than half of the votes (else ``reject_label``), or votes weighted
        by each member's out-of-bag accuracy (``estimator_weights_``).
    reject_label : int, float, str or None, default=None
        As in ``RandomForestClassifier``.
    categorical_features : None, "from_dtype", or array-like of bool, int or str, default=None
        The categorical features, as in ``gpuforest.DecisionTreeClassifier``, for the batched
        forest (other members raise a ValueError); None leaves the tree's own.
    device : {"auto", "cpu", "cuda"}, default="auto"
        ``device`` of the default tree (``estimator=None``), as in the forests; a given
        estimator keeps its own.

    Attributes
    ----------
    forest_ : RandomForestClassifier or None
        The batched forest behind the members, if they were grown as one.
    is_categorical_, categories_
        As in ``gpuforest.DecisionTreeClassifier``.
    device_ : {"cpu", "cuda"}
        The backend the members ran on (``"cpu"`` for estimators other than gpuforest's).
    estimators_, estimators_features_, estimators_samples_, classes_, n_classes_,
    oob_score_, oob_decision_function_
        As in scikit-learn.
    estimator_weights_ : ndarray of shape (n_estimators,)
        Out-of-bag accuracy of each member (``voting="weighted"``).
    """

    _parameter_constraints = {
        **_SklearnBaggingClassifier._parameter_constraints,
        "voting": [StrOptions(set(VOTING_STRATEGIES))],
        "reject_label": "no_validation",
        "categorical_features": CATEGORICAL_FEATURES_CONSTRAINT,
        "device": TREE_PARAMETER_CONSTRAINTS["device"],
    }
    _tree_class = DecisionTreeClassifier
    _forest_class = RandomForestClassifier

    def __init__(
        self, estimator=None, n_estimators=10, *, max_samples=None, max_features=1.0, bootstrap=True,
        bootstrap_features=False, oob_score=False, warm_start=False, n_jobs=None, random_state=None, verbose=0,
        voting="soft", reject_label=None, categorical_features=None, device="auto",
    ):
        super().__init__(
            estimator=estimator, n_estimators=n_estimators, max_samples=max_samples, max_features=max_features,
            bootstrap=bootstrap, bootstrap_features=bootstrap_features, oob_score=oob_score,
            warm_start=warm_start, n_jobs=n_jobs, random_state=random_state, verbose=verbose,
        )
        self.voting = voting
        self.reject_label = reject_label
        self.categorical_features = categorical_features
        self.device = device

    def _forest_params(self):
        tree = self._get_estimator()
        return dict(
            super()._forest_params(), class_weight=tree.class_weight, voting=self.voting,
            reject_label=self.reject_label, min_split_significance=tree.min_split_significance,
            confidence_factor=tree.confidence_factor, subtree_raising=tree.subtree_raising,
        )

    def _member_proba(self, X):
        """Each loop member's class probabilities (one-hot votes without ``predict_proba``)."""
        member_proba = np.zeros((len(self.estimators_), X.shape[0], self.n_classes_))
        for index, (member, member_X) in enumerate(self._member_feature_views(X)):
            if hasattr(member, "predict_proba"):
                # A member whose sample missed a class has fewer columns; members learn encoded labels.
                member_proba[index][:, member.classes_.astype(np.int64)] = member.predict_proba(member_X)
            else:
                member_proba[index, np.arange(X.shape[0]), member.predict(member_X).astype(np.int64)] = 1.0
        return member_proba

    def _after_loop_fit(self, X, y):
        """Checks ``reject_label`` (``voting="majority"``); with ``voting="weighted"``: each member's out-of-bag
        accuracy."""
        if self.voting == "majority":
            resolve_reject_label(self.classes_, self.reject_label)
        if self.voting != "weighted":
            return
        X = validate_data(self, X, accept_sparse=["csr", "csc"], reset=False, ensure_all_finite=False)
        y_encoded = np.searchsorted(self.classes_, y)
        member_proba = self._member_proba(X)
        weights = np.zeros(len(self.estimators_))
        for index, samples in enumerate(self.estimators_samples_):
            out_of_bag = ~indices_to_mask(samples, X.shape[0])
            if out_of_bag.any():
                weights[index] = np.mean(np.argmax(member_proba[index, out_of_bag], axis=1) == y_encoded[out_of_bag])
        if not weights.any():
            raise ValueError("voting='weighted' weights members by out-of-bag accuracy: no member has out-of-bag rows.")
        self.estimator_weights_ = weights

    def predict_proba(self, X, **params):
        """Combined class scores of the members, shape (n_samples, n_classes) (see ``voting``)."""
        check_is_fitted(self, "estimators_")
        if self.forest_ is not None:
            return self.forest_.predict_proba(validate_predict_data(self, X))
        if self.voting == "soft" and not params:
            return super().predict_proba(X)
        X = validate_data(self, X, accept_sparse=["csr", "csc"], reset=False, ensure_all_finite=False)
        weights = self.estimator_weights_ if self.voting == "weighted" else None
        return combine_votes(self._member_proba(X), self.voting, weights)

    def predict(self, X, **params):
        """The winning class; ``reject_label`` where ``voting="majority"`` finds no majority."""
        return predict_from_votes(self.predict_proba(X, **params), self.voting, self.classes_, self.reject_label)


class BaggingRegressor(_BatchedTreeBagging, _SklearnBaggingRegressor):
    """A bagging regressor: scikit-learn's, with batched tree members.

    Parameters and attributes are those of ``sklearn.ensemble.BaggingRegressor``
    (default estimator ``gpuforest.DecisionTreeRegressor()``), plus
    ``categorical_features``, ``device``, ``forest_``, ``is_categorical_``, ``categories_`` and
    ``device_`` as in ``BaggingClassifier``.
    """

    _parameter_constraints = {
        **_SklearnBaggingRegressor._parameter_constraints,
        "categorical_features": CATEGORICAL_FEATURES_CONSTRAINT,
        "device": TREE_PARAMETER_CONSTRAINTS["device"],
    }
    _tree_class = DecisionTreeRegressor
    _forest_class = RandomForestRegressor

    def __init__(
        self, estimator=None, n_estimators=10, *, max_samples=None, max_features=1.0, bootstrap=True,
        bootstrap_features=False, oob_score=False, warm_start=False, n_jobs=None, random_state=None, verbose=0,
        categorical_features=None, device="auto",
    ):
        super().__init__(
            estimator=estimator, n_estimators=n_estimators, max_samples=max_samples, max_features=max_features,
            bootstrap=bootstrap, bootstrap_features=bootstrap_features, oob_score=oob_score,
            warm_start=warm_start, n_jobs=n_jobs, random_state=random_state, verbose=verbose,
        )
        self.categorical_features = categorical_features
        self.device = device

    def predict(self, X, **params):
        """Mean of the members' predictions, shape (n_samples,)."""
        check_is_fitted(self, "estimators_")
        if self.forest_ is not None:
            return self.forest_.predict(validate_predict_data(self, X))
        return super().predict(X, **params)
