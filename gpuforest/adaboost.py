"""``AdaBoostClassifier`` and ``AdaBoostRegressor``: boosting by re-weighting the training rows.

AdaBoost (Freund & Schapire 1997) fits a sequence of members, each on the
training rows re-weighted towards those its predecessors got wrong, and
combines them by a weighted vote. Both estimators extend scikit-learn's of the
same names and keep most of their prediction side (``predict``,
``predict_proba``, ``staged_predict``, ``staged_score``,
``feature_importances_``), with gpuforest's validation (float32 ``X``, NaN
allowed), gpuforest trees as default members, and:

- ``AdaBoostClassifier``: SAMME (Zhu, Zou, Rosset & Hastie 2009, "Multi-class
  AdaBoost", algorithm 2) for any number of classes, and SAMME.R (algorithm 4:
  real AdaBoost on the members' class probabilities), which scikit-learn
  removed in 1.6. Members whose ``fit`` takes no ``sample_weight`` are fitted on
  a re-sample of the rows drawn by weight ("boosting by resampling"). With a
  gpuforest ``DecisionTreeClassifier`` (the default stump included), X is
  binned once and each round's tree is grown directly on the bins, instead of
  the tree's ``fit`` binning X again every round.
- ``AdaBoostRegressor``: AdaBoost.R2 (Drucker 1997), scikit-learn's: every
  member is fitted on a re-sample drawn by weight, prediction is the weighted
  median of the members.
"""

import warnings
from functools import partial

import numpy as np
from sklearn.ensemble import AdaBoostClassifier as _SklearnAdaBoostClassifier
from sklearn.ensemble import AdaBoostRegressor as _SklearnAdaBoostRegressor
from sklearn.base import clone
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted, has_fit_parameter

from .backend import get_backend, members_device
from .categorical import record_categories
from .decision_tree import (
    TREE_PARAMETER_CONSTRAINTS,
    AllowNaNMixin,
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    encode_classes,
    growth_params,
    validate_fit_data,
    validate_predict_data,
)
from .fitting import BinnedTraining, fit_bin_mapper, random_seed, validate_params
from .margins import AdaBoostMargins
from .model_io import ModelFileMixin
from .progress import progress_bar
from .pruning import prunes
from .statistics import classification_statistics

EPSILON = np.finfo(np.float64).eps

_DEVICE_CONSTRAINTS = {
    **{name: TREE_PARAMETER_CONSTRAINTS[name] for name in ("max_bins", "device", "categorical_features")},
    "verbose": ["verbose"],
}


class _WeightBoosting(AllowNaNMixin, ModelFileMixin):
    """What both estimators change in scikit-learn's: validation, the default tree, the boosting loop."""

    _default_tree = None

    def _check_X(self, X):
        # scikit-learn's prediction methods (staged_predict, staged_score, predict) validate X through this.
        check_is_fitted(self)
        return validate_predict_data(self, X)

    def _validate_estimator(self):
        """``estimator_``: the given estimator, or the default tree with this ensemble's ``max_bins`` and ``device``.

        The members see X with the categorical features as codes: a member that takes
        ``categorical_features`` (a gpuforest tree) and declares none gets the ensemble's as a mask.
        """
        if self.estimator is None:
            self.estimator_ = self._default_tree(
                max_bins=self.max_bins, device=self.device, categorical_features=self.is_categorical_
            )
        elif self.is_categorical_ is not None and getattr(self.estimator, "categorical_features", False) is None:
            self.estimator_ = clone(self.estimator).set_params(categorical_features=self.is_categorical_)
        else:
            self.estimator_ = self.estimator

    def _boost_rounds(self, boost, sample_weight):
        """scikit-learn's boosting loop: up to ``n_estimators`` calls of ``boost``.

        ``boost(iboost, sample_weight=..., random_state=...)`` appends a member to
        ``estimators_`` and returns ``(new sample weights, estimator weight,
        estimator error)``, or ``(None, None, None)`` to stop without it.
        Weights are normalised every round.
        """
        self.estimators_ = []
        self.estimator_weights_ = np.zeros(self.n_estimators)
        self.estimator_errors_ = np.ones(self.n_estimators)
        random_state = check_random_state(self.random_state)
        left_out = sample_weight == 0
        sample_weight = sample_weight / sample_weight.sum()
        bar = progress_bar(self.verbose, self.n_estimators, "member", type(self).__name__)
        for iboost in range(self.n_estimators):
            # Tiny weights are raised to eps (scikit-learn issue #20320); rows weighted 0 by the caller stay out.
            sample_weight = np.where(left_out, 0.0, np.maximum(sample_weight, EPSILON))
            sample_weight, estimator_weight, estimator_error = boost(
                iboost, sample_weight=sample_weight, random_state=random_state
            )
            if sample_weight is None:
                break
            self.estimator_weights_[iboost] = estimator_weight
            self.estimator_errors_[iboost] = estimator_error
            bar.update()
            if estimator_error == 0:  # a perfect fit: nothing is left to boost
                break
            total = sample_weight.sum()
            if not np.isfinite(total):
                warnings.warn(
                    f"Sample weights have reached infinite values, at iteration {iboost}, causing overflow. "
                    "Iterations stopped. Try lowering the learning rate.",
                    stacklevel=3,
                )
                break
            if total <= 0:
                break
            sample_weight = sample_weight / total
        bar.close()
        self.device_ = members_device(self.estimators_, self.device)
        return self


class AdaBoostClassifier(AdaBoostMargins, _WeightBoosting, _SklearnAdaBoostClassifier):
    """An AdaBoost classifier: SAMME or SAMME.R, on the CPU or the GPU.

    SAMME (Zhu et al. 2009, algorithm 2) gives member ``m`` with weighted
    error ``err_m`` the weight ``alpha_m = learning_rate * (log((1 - err_m) /
    err_m) + log(K - 1))`` for ``K`` classes, multiplies the weights of the rows
    it misclassifies by ``exp(alpha_m)``, and predicts the class with the
    largest ``sum_m alpha_m [h_m(x) = k]``. With two classes and
    ``learning_rate=1`` this is discrete AdaBoost (Freund & Schapire 1997)
    with twice its weight ``1/2 log((1 - err) / err)``, hence the same
    decisions. Boosting stops at a member with zero error (kept with weight
    1) or with error at least ``1 - 1/K`` (no better than chance: dropped; a
    ``ValueError`` if it is the first).

    SAMME.R (algorithm 4) uses the members' class probabilities ``p`` (clipped
    at machine epsilon): member ``m`` adds ``h_k(x) = (K - 1) (log p_k(x) -
    mean_j log p_j(x))`` to class ``k``'s score, and row weights are multiplied
    by ``exp(-learning_rate (K - 1) / K * sum_k y_k log p_k(x))`` with ``y_k =
    1`` for the row's class and ``-1 / (K - 1)`` for the others. As in
    scikit-learn before 1.6, its members all have weight 1 (``learning_rate``
    only damps the re-weighting) and it stops only at a perfect fit.

    Parameters
    ----------
    estimator : object, default=None
        The member to boost; ``None``: ``gpuforest.DecisionTreeClassifier(max_depth=1)``.
        SAMME.R needs ``predict_proba``. A member whose ``fit`` takes no
        ``sample_weight`` is fitted on ``n_samples`` rows drawn with
        replacement with probabilities equal to the weights. A gpuforest
        ``DecisionTreeClassifier`` (without ``class_weight``) is grown on X
        binned once, with its own parameters, ``max_bins`` and ``device``.
    n_estimators : int, default=50
        Most members; fewer after an early stop.
    learning_rate : float, default=1.0
    algorithm : {"SAMME", "SAMME.R"}, default="SAMME"
    random_state : int, RandomState instance or None, default=None
        Seeds each member's ``random_state`` and the re-samples.
    max_bins : int, default=256
        ``max_bins`` of the default stump.
    categorical_features : None, "from_dtype", or array-like of bool, int or str, default=None
        The categorical features, as in ``gpuforest.DecisionTreeClassifier``. The members
        see them as codes; a gpuforest tree member without its own gets them as a mask.
    device : {"auto", "cpu", "cuda"}, default="auto"
        ``device`` of the default stump.
    verbose : int, default=0
        ``>= 1``: a tqdm bar of the members on stderr.

    Attributes
    ----------
    estimator_ : estimator
        The unfitted member every round clones.
    estimators_ : list of classifiers
        The fitted members (for gpuforest trees: ``DecisionTreeClassifier``
        objects holding the grown trees).
    estimator_weights_ : ndarray of shape (n_estimators,)
        Each member's weight (0 past an early stop; all 1 with SAMME.R).
    estimator_errors_ : ndarray of shape (n_estimators,)
        Each member's weighted training error (1 past an early stop).
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int
    device_ : {"cpu", "cuda"}
        The backend the members ran on, as the forests' ``device_`` (``"cpu"`` for
        estimators other than gpuforest's).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
    is_categorical_, categories_
        As in ``gpuforest.DecisionTreeClassifier``.
    feature_importances_ : ndarray of shape (n_features_in_,)
        The members' importances averaged with the estimator weights.
    """

    _parameter_constraints = {
        **_SklearnAdaBoostClassifier._parameter_constraints,
        **_DEVICE_CONSTRAINTS,
        "algorithm": [StrOptions({"SAMME", "SAMME.R"})],
    }
    _default_tree = partial(DecisionTreeClassifier, max_depth=1)

    def __init__(
        self, estimator=None, *, n_estimators=50, learning_rate=1.0, algorithm="SAMME", random_state=None,
        max_bins=256, device="auto", categorical_features=None, verbose=0,
    ):
        super().__init__(
            estimator=estimator, n_estimators=n_estimators, learning_rate=learning_rate, random_state=random_state
        )
        self.algorithm = algorithm
        self.max_bins = max_bins
        self.device = device
        self.categorical_features = categorical_features
        self.verbose = verbose

    def fit(self, X, y, sample_weight=None):
        """Boost members on ``X`` (n_samples, n_features) and class labels ``y`` (n_samples,).

        ``sample_weight`` (n_samples,) gives the initial row weights (default: uniform).
        """
        validate_params(self)
        X, y, sample_weight = validate_fit_data(self, X, y, sample_weight)
        self.classes_, y_encoded = encode_classes(y)
        self.n_classes_ = self.classes_.shape[0]
        if self.n_classes_ == 1:
            raise ValueError("The number of classes has to be greater than one; got 1 class.")
        self._validate_estimator()
        if self.algorithm == "SAMME.R" and not hasattr(self.estimator_, "predict_proba"):
            raise TypeError(
                "AdaBoostClassifier with algorithm='SAMME.R' needs an estimator with predict_proba; "
                "use algorithm='SAMME' instead."
            )
        fit_member = self._member_fitter(X, y, y_encoded, sample_weight)
        return self._boost_rounds(partial(self._boost, X=X, y=y, fit_member=fit_member), sample_weight)

    def _member_fitter(self, X, y, y_encoded, sample_weight):
        """How each round fits its member: ``fit_member(member, sample_weight, random_state)``."""
        # Exactly the gpuforest tree: a subclass may fit differently.
        if (
            type(self.estimator_) is DecisionTreeClassifier and self.estimator_.class_weight is None
            and self.estimator_.algorithm == "cart"
        ):
            self.estimator_._validate_params()  # as its fit, which is not called, would
            if not prunes(self.estimator_) and not self.estimator_.use_surrogates:  # both in the tree's own fit
                return _BinnedTreeFitter(X, self.classes_, y_encoded, sample_weight > 0)
        if has_fit_parameter(self.estimator_, "sample_weight"):
            return lambda member, sample_weight, random_state: member.fit(X, y, sample_weight=sample_weight)
        return partial(_fit_on_resample, X=X, y=y)

    def _boost(self, iboost, X, y, sample_weight, random_state, fit_member):
        """One SAMME or SAMME.R round; returns as ``_boost_rounds``'s ``boost``."""
        member = self._make_estimator(random_state=random_state)
        fit_member(member, sample_weight, random_state)
        if self.algorithm == "SAMME.R":
            proba = self._member_proba(member, X)
            incorrect = self.classes_[np.argmax(proba, axis=1)] != y
        else:
            incorrect = member.predict(X) != y
        error = np.average(incorrect, weights=sample_weight)
        if error <= 0:
            return sample_weight, 1.0, 0.0
        n_classes = self.n_classes_
        if self.algorithm == "SAMME.R":
            margin = (self._class_coding(y) * np.log(proba)).sum(axis=1)
            return sample_weight * np.exp(-self.learning_rate * (n_classes - 1) / n_classes * margin), 1.0, error
        if error >= 1.0 - 1.0 / n_classes:
            self.estimators_.pop()
            if not self.estimators_:
                raise ValueError(
                    "BaseClassifier in AdaBoostClassifier ensemble is worse than random, ensemble can not be fit."
                )
            return None, None, None
        alpha = self.learning_rate * (np.log((1.0 - error) / error) + np.log(n_classes - 1.0))
        return sample_weight * np.exp(alpha * incorrect), alpha, error

    def _class_coding(self, labels):
        """``1`` in each label's column of ``classes_``, ``-1 / (K - 1)`` elsewhere: shape (n_samples, K)."""
        return np.where(labels[:, None] == self.classes_, 1.0, -1.0 / (self.n_classes_ - 1))

    def _member_proba(self, member, X):
        """A member's class probabilities in the columns of ``classes_``, clipped at eps: (n_samples, K).

        A member fitted on a re-sample may have seen fewer classes; the others get eps.
        """
        proba = np.zeros((X.shape[0], self.n_classes_))
        proba[:, np.searchsorted(self.classes_, member.classes_)] = member.predict_proba(X)
        return np.maximum(proba, EPSILON)

    def _member_scores(self, member, X):
        """A member's class scores, shape (n_samples, K): SAMME's vote coding, SAMME.R's ``h_k(x)``."""
        if self.algorithm == "SAMME.R":
            log_proba = np.log(self._member_proba(member, X))
            return (self.n_classes_ - 1) * (log_proba - log_proba.mean(axis=1, keepdims=True))
        return self._class_coding(member.predict(X))

    def staged_decision_function(self, X):
        """The decision function after each member: (n_samples,) for two classes, else (n_samples, K).

        The members' weighted scores over the sum of their weights; with two
        classes, class 1's score minus class 0's (positive: ``classes_[1]``).
        """
        X = self._check_X(X)
        total, norm = 0.0, 0.0
        for member, weight in zip(self.estimators_, self.estimator_weights_):
            total = total + weight * self._member_scores(member, X)
            norm += weight
            decision = total / norm
            yield decision[:, 1] - decision[:, 0] if self.n_classes_ == 2 else decision

    def decision_function(self, X):
        """The decision function of all members (the last of ``staged_decision_function``)."""
        *_, decision = self.staged_decision_function(X)
        return decision


class AdaBoostRegressor(_WeightBoosting, _SklearnAdaBoostRegressor):
    """An AdaBoost.R2 regressor (Drucker 1997), scikit-learn's with gpuforest trees.

    Every round fits a member on ``n_samples`` rows drawn with replacement by
    weight, scales its absolute errors by the largest one and applies
    ``loss``, and multiplies each row's weight by ``beta ** ((1 - loss_i) *
    learning_rate)`` with ``beta = err / (1 - err)``; the member's weight is
    ``learning_rate * log(1 / beta)``. Boosting stops at a perfect fit or at
    a mean loss of at least 0.5. Prediction is the members' weighted median.

    Parameters
    ----------
    estimator : object, default=None
        The member to boost; ``None``: ``gpuforest.DecisionTreeRegressor(max_depth=3)``.
    n_estimators : int, default=50
    learning_rate : float, default=1.0
    loss : {"linear", "square", "exponential"}, default="linear"
    random_state : int, RandomState instance or None, default=None
        Seeds each member's ``random_state`` and the re-samples.
    max_bins : int, default=256
        ``max_bins`` of the default tree.
    categorical_features : None, "from_dtype", or array-like of bool, int or str, default=None
        The categorical features, as in ``gpuforest.DecisionTreeClassifier``. The members
        see them as codes; a gpuforest tree member without its own gets them as a mask.
    device : {"auto", "cpu", "cuda"}, default="auto"
        ``device`` of the default tree.
    verbose : int, default=0
        ``>= 1``: a tqdm bar of the members on stderr.

    Attributes
    ----------
    estimator_, estimators_, estimator_weights_, estimator_errors_, n_features_in_,
    feature_names_in_, feature_importances_
        As in ``sklearn.ensemble.AdaBoostRegressor``.
    is_categorical_, categories_
        As in ``gpuforest.DecisionTreeClassifier``.
    device_ : {"cpu", "cuda"}
        As in ``AdaBoostClassifier``.
    """

    _parameter_constraints = {**_SklearnAdaBoostRegressor._parameter_constraints, **_DEVICE_CONSTRAINTS}
    _default_tree = partial(DecisionTreeRegressor, max_depth=3)

    def __init__(
        self, estimator=None, *, n_estimators=50, learning_rate=1.0, loss="linear", random_state=None, max_bins=256,
        device="auto", categorical_features=None, verbose=0,
    ):
        super().__init__(
            estimator=estimator, n_estimators=n_estimators, learning_rate=learning_rate, loss=loss,
            random_state=random_state,
        )
        self.max_bins = max_bins
        self.device = device
        self.categorical_features = categorical_features
        self.verbose = verbose

    def fit(self, X, y, sample_weight=None):
        """Boost members on ``X`` (n_samples, n_features) and real targets ``y`` (n_samples,).

        ``sample_weight`` (n_samples,) gives the initial row weights (default: uniform).
        """
        validate_params(self)
        X, y, sample_weight = validate_fit_data(self, X, y, sample_weight)
        y = np.asarray(y, dtype=np.float64)
        self._validate_estimator()
        return self._boost_rounds(partial(self._boost, X=X, y=y), sample_weight)


def _fit_on_resample(member, sample_weight, random_state, X, y):
    """Boosting by resampling: fit on ``n_samples`` rows drawn with replacement with probabilities ``sample_weight``.

    ``sample_weight`` (n_samples,) sums to 1; ``random_state`` is the boosting loop's RandomState.
    """
    rows = random_state.choice(X.shape[0], size=X.shape[0], replace=True, p=sample_weight)
    member.fit(X[rows], y[rows])


class _BinnedTreeFitter:
    """Fits each round's gpuforest ``DecisionTreeClassifier`` by growing it on X binned once.

    The tree's own ``fit`` would bin X again every round. Here the first round
    bins X as that round's ``fit`` would (on its ``device``, with its
    ``max_bins`` and seed, over the rows with positive weight, which stay the
    same every round) and later rounds reuse the bins; each round then grows
    the tree its ``fit`` would grow.
    Only above ``binning.SUBSAMPLE`` rows do the bins differ from a ``fit``'s
    (each ``fit`` would draw its own subsample to place them).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float32
    classes : ndarray of shape (n_classes,)
    y_encoded : ndarray of shape (n_samples,), int
    positive : ndarray of shape (n_samples,), bool
        Rows with positive weight.
    """

    def __init__(self, X, classes, y_encoded, positive):
        self.X = X
        self.classes = classes
        self.y_encoded = y_encoded
        self.positive = positive
        self.bin_mapper = None

    def __call__(self, member, sample_weight, random_state):
        """Grow ``member``'s tree with the weights ``sample_weight`` (n_samples,) and set its fitted attributes."""
        n_samples, n_features = self.X.shape
        # The seed the tree's own fit would draw.
        seed = random_seed(member.random_state)
        if self.bin_mapper is None:
            self.backend = get_backend(member.device)
            record_categories(member, self.X, None, member.max_bins)
            self.categorical = (member.is_categorical_, member.categories_)
            self.bin_mapper = fit_bin_mapper(member, self.X[self.positive], seed)
            self.training = BinnedTraining(self.backend, self.bin_mapper, self.X)
        params = growth_params(member, n_samples, n_features, seed, random_thresholds=member.splitter == "random")
        n_classes = self.classes.shape[0]
        stats = classification_statistics(member.criterion, self.y_encoded, n_classes, sample_weight)
        # A fresh index array every round: the grower partitions it in place.
        sample_indices = np.flatnonzero(self.positive).astype(np.int32)
        _, (member.tree_,) = self.training.grow(sample_indices, stats, n_classes, params)
        member.classes_ = self.classes
        member.n_classes_ = n_classes
        member.n_features_in_ = n_features
        member.max_features_ = params.max_features
        member.device_ = self.backend.name
        member._bin_mapper = self.bin_mapper
        member.is_categorical_, member.categories_ = self.categorical
