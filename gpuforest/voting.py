"""Combining the votes of ensemble members, and voting over heterogeneous estimators.

``combine_votes`` and ``predict_from_votes`` are shared by the forests, bagging and
``VotingClassifier``: members' class probabilities in, per-class scores out, then
labels (with a reject label for rows that have no majority). ``VotingClassifier`` and
``VotingRegressor`` subclass scikit-learn's estimators of the same names, so fitting,
``transform``, ``set_params`` and metadata routing are scikit-learn's.
"""

from numbers import Real

import numpy as np
from sklearn.ensemble import VotingClassifier as _SklearnVotingClassifier
from sklearn.ensemble import VotingRegressor as _SklearnVotingRegressor
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted

from .margins import VotingMargins
from .model_io import ModelFileMixin

VOTING_STRATEGIES = ("soft", "plurality", "majority", "weighted")


def check_weights(weights, n_members):
    """Member weights as float64 (n_members,): finite, non-negative, positive sum.

    Raises
    ------
    ValueError
        If ``weights`` has the wrong shape, a negative or non-finite entry, or sums to 0.
    """
    weights = np.asarray(weights, dtype=np.float64)
    if weights.shape != (n_members,):
        raise ValueError(f"weights must have shape ({n_members},), one per member; got shape {weights.shape}.")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise ValueError(f"weights must be finite and non-negative; got {weights}.")
    if not weights.sum() > 0:
        raise ValueError("weights must have a positive sum; every weight is zero.")
    return weights


def tally_votes(votes, n_classes, weights=None):
    """Share of the (weighted) votes that each class receives.

    Parameters
    ----------
    votes : ndarray of shape (n_members, n_samples), integer
        Class index each member votes for, in ``[0, n_classes)``.
    n_classes : int
    weights : array-like of shape (n_members,), default=None
        Non-negative vote weights with a positive sum; ``None`` counts every vote once.

    Returns
    -------
    shares : ndarray of shape (n_samples, n_classes), float64
        Per-class sums of the voters' raw weights divided once by the total weight. With
        integer weights (or none) the sums are exact, so ``shares > 0.5`` is exactly
        "more than half the votes" (``fl(c / n) > 0.5`` iff ``2c > n`` for ``n < 2**53``).
    """
    votes = np.asarray(votes)
    n_members, n_samples = votes.shape
    weights = np.ones(n_members) if weights is None else check_weights(weights, n_members)
    totals = np.zeros((n_samples, n_classes), dtype=np.float64)
    rows = np.arange(n_samples)
    # One member at a time: each (row, class) sum is accumulated in member order, like
    # np.bincount in scikit-learn's hard voting, without a one-hot (members, rows, classes).
    for member_votes, weight in zip(votes, weights):
        totals[rows, member_votes] += weight
    return totals / weights.sum()


def combine_votes(member_proba, voting, weights=None):
    """Per-class scores of each sample from the members' class probabilities.

    Parameters
    ----------
    member_proba : ndarray of shape (n_members, n_samples, n_classes), float64
        Class probabilities of each member.
    voting : {"soft", "plurality", "majority", "weighted"}
        ``"soft"``: mean of the probabilities. ``"plurality"`` and ``"majority"``: share of
        the members whose most probable class (the lowest index on ties, as
        ``np.argmax``) is each class; they differ only in ``predict_from_votes``.
        ``"weighted"``: as ``"plurality"`` with each vote counted ``weights[m]`` times.
    weights : array-like of shape (n_members,), default=None
        Non-negative member weights with a positive sum, normalised to sum 1. Required
        for ``"weighted"``; with the other strategies they weight the mean or the votes
        when given (so weighted majority voting is ``"majority"`` with weights).

    Returns
    -------
    scores : ndarray of shape (n_samples, n_classes), float64
        Rows sum to 1 (up to rounding; for ``"soft"``, when each member's rows do).

    Raises
    ------
    ValueError
        For an unknown ``voting``, ``"weighted"`` without weights, or invalid weights.
    """
    if voting not in VOTING_STRATEGIES:
        raise ValueError(f"voting must be one of {VOTING_STRATEGIES}; got {voting!r}.")
    if voting == "weighted" and weights is None:
        raise ValueError('voting="weighted" needs weights, one per member.')
    member_proba = np.asarray(member_proba, dtype=np.float64)
    if member_proba.ndim != 3:
        raise ValueError(f"member_proba must be 3-D (n_members, n_samples, n_classes); got shape {member_proba.shape}.")
    n_members, n_samples, n_classes = member_proba.shape
    if voting != "soft":
        return tally_votes(np.argmax(member_proba, axis=2), n_classes, weights)
    weights = np.ones(n_members) if weights is None else check_weights(weights, n_members)
    # Member by member in order: the same sums as np.average(member_proba, axis=0, weights),
    # without its (n_members, n_samples, n_classes) product.
    total = np.zeros((n_samples, n_classes), dtype=np.float64)
    for proba, weight in zip(member_proba, weights):
        total += proba * weight
    return total / weights.sum()


def _is_text(classes):
    """Whether ``classes`` are strings (a text dtype, or objects that are all ``str``)."""
    return classes.dtype.kind in "US" or (
        classes.dtype.kind == "O" and all(isinstance(label, str) for label in classes.tolist())
    )


def resolve_reject_label(classes, reject_label):
    """The label of rejected samples: ``reject_label``, or the default for ``None``, checked against ``classes``.

    Parameters
    ----------
    classes : ndarray of shape (n_classes,)
    reject_label : scalar or None
        ``None`` picks a label of the classes' type that is not a class: ``"rejected"``
        (with ``"_"`` appended while that is a class) for string classes, else ``-1``, or
        ``min(classes) - 1`` when ``-1`` is a class.

    Returns
    -------
    reject_label : scalar

    Raises
    ------
    TypeError
        If ``reject_label`` is not a string for string classes, or not a real number for
        numeric classes: predictions would mix types that ``score`` cannot compare.
    ValueError
        If ``reject_label`` equals one of ``classes``.
    """
    classes = np.asarray(classes)
    text = _is_text(classes)
    labels = classes.tolist()
    if reject_label is None:
        if text:
            reject_label = "rejected"
            while reject_label in labels:
                reject_label += "_"
            return reject_label
        return -1 if -1 not in labels else min(labels) - 1
    if text and not isinstance(reject_label, str):
        raise TypeError(
            f"reject_label={reject_label!r} is not a string but the classes are: predictions would mix types. "
            'Pass a string such as reject_label="rejected", or None for that default.'
        )
    if classes.dtype.kind in "biuf" and not isinstance(reject_label, Real):
        raise TypeError(
            f"reject_label={reject_label!r} is not a number but the classes are: predictions would mix types. "
            "Pass a number such as reject_label=-1, or None for a default that is not a class."
        )
    # Python equality, so NaN never equals itself.
    if any(label == reject_label for label in labels):
        raise ValueError(
            f"reject_label={reject_label!r} is one of the classes {classes!r}: rejected samples "
            "could not be told apart from that class. Choose a reject_label that is not a class, or None."
        )
    return reject_label


def _prediction_dtype(classes_dtype, label_dtype):
    """Common dtype of the classes and the reject label, or object where none holds both."""
    # Dtypes, not values: np.result_type reads a Python str as a dtype name, and NumPy 2
    # keeps uint8 for (uint8 array, -1), which cannot hold -1. Text promotes only to text of
    # its own kind: numpy would turn -1 next to "<U1" classes into the string "-1".
    kinds = {classes_dtype.kind, label_dtype.kind}
    if kinds & {"U", "S"} and len(kinds) > 1:
        return np.dtype(object)
    try:
        return np.result_type(classes_dtype, label_dtype)
    except TypeError:  # no common dtype, e.g. datetime64 and int (DTypePromotionError)
        return np.dtype(object)


def predict_from_votes(scores, voting, classes, reject_label):
    """Labels from per-class scores: the best class, or ``reject_label`` without a majority.

    Parameters
    ----------
    scores : ndarray of shape (n_samples, n_classes), float64
        Output of ``combine_votes``.
    voting : {"soft", "plurality", "majority", "weighted"}
        With ``"majority"``, samples whose best class has no more than half the
        (weighted) votes (a score not ``> 0.5``) get ``reject_label``. The others take
        the highest score, the lowest class index on ties.
    classes : ndarray of shape (n_classes,)
        Label of each class index.
    reject_label : scalar or None
        Label of rejected samples with ``"majority"``, as ``resolve_reject_label`` checks
        it (``None``: its default). Unused otherwise.

    Returns
    -------
    labels : ndarray of shape (n_samples,)
        ``classes[argmax(scores)]``, of ``classes``' dtype except with ``"majority"``:
        then numpy's common dtype of ``classes`` and ``reject_label`` (e.g. int64 for uint8
        classes and -1), or object when they have none.
    """
    if voting not in VOTING_STRATEGIES:
        raise ValueError(f"voting must be one of {VOTING_STRATEGIES}; got {voting!r}.")
    classes = np.asarray(classes)
    winners = np.argmax(scores, axis=1)
    labels = classes[winners]
    if voting != "majority":
        return labels
    reject_label = resolve_reject_label(classes, reject_label)
    labels = labels.astype(_prediction_dtype(classes.dtype, np.asarray(reject_label).dtype))
    labels[~(scores[np.arange(scores.shape[0]), winners] > 0.5)] = reject_label
    return labels


def _soft_voting(estimator):
    """``available_if`` check: probabilities exist only for soft voting."""
    if estimator.voting != "soft":
        raise AttributeError(f"predict_proba is not available when voting={estimator.voting!r}")
    return True


class VotingClassifier(VotingMargins, ModelFileMixin, _SklearnVotingClassifier):
    """Voting over heterogeneous classifiers, with plurality or strict-majority votes.

    scikit-learn's ``VotingClassifier`` (fit, ``transform``, ``set_params``, ``"drop"``,
    metadata routing) with two more voting rules and a reject label.

    Parameters
    ----------
    estimators : list of (str, estimator) tuples
        As in ``sklearn.ensemble.VotingClassifier``.
    voting : {"hard", "soft", "plurality", "majority"}, default="hard"
        ``"soft"``: the class with the highest (weighted) mean probability.
        ``"hard"`` (scikit-learn's name) and ``"plurality"``: the class that gets the most
        (weighted) votes, each estimator voting for its predicted class; ties go to the
        first class in ``classes_``. ``"majority"``: the class that gets more than half
        the (weighted) votes, otherwise ``reject_label``; exact for integer weights.
    weights : array-like of shape (n_classifiers,), default=None
        Vote weights (hard, plurality, majority) or probability weights (soft), as in
        scikit-learn; here they must be non-negative with a positive sum.
    n_jobs, flatten_transform, verbose
        As in ``sklearn.ensemble.VotingClassifier``. ``transform`` returns class
        probabilities for ``"soft"`` and each estimator's encoded labels otherwise.
    reject_label : int, float, str or None, default=None
        ``predict``'s label for samples without a majority (``voting="majority"`` only).
        ``None``: ``"rejected"`` for string classes (``"_"`` appended while that is a
        class), else ``-1``, or ``min(classes_) - 1`` when ``-1`` is a class. A given label
        must have the classes' type (a string for string classes, a number for numeric
        ones; else ``fit`` and ``predict`` raise a ``TypeError``) and must not be a class
        (a ``ValueError``). Majority predictions have numpy's common dtype of ``classes_``
        and ``reject_label``.

    Attributes
    ----------
    estimators_, named_estimators_, le_, classes_, n_features_in_, feature_names_in_
        As in ``sklearn.ensemble.VotingClassifier``.

    Notes
    -----
    ``predict_proba`` exists only with ``voting="soft"``. ``predict`` agrees with
    scikit-learn's for ``"hard"`` and ``"soft"``.
    """

    _parameter_constraints = {
        **_SklearnVotingClassifier._parameter_constraints,
        "voting": [StrOptions({"hard", "soft", "plurality", "majority"})],
        "reject_label": [Real, str, None],
    }

    def __init__(
        self, estimators, *, voting="hard", weights=None, n_jobs=None, flatten_transform=True, verbose=False,
        reject_label=None,
    ):
        super().__init__(
            estimators, voting=voting, weights=weights, n_jobs=n_jobs, flatten_transform=flatten_transform,
            verbose=verbose,
        )
        self.reject_label = reject_label

    def fit(self, X, y, **fit_params):
        """Fit clones of the estimators on ``X`` (n_samples, n_features) and labels ``y``.

        As ``sklearn.ensemble.VotingClassifier.fit``; then checks ``weights`` and, for
        ``voting="majority"``, ``reject_label`` (``resolve_reject_label``).
        """
        super().fit(X, y, **fit_params)
        if self.weights is not None:
            check_weights(self._weights_not_none, len(self.estimators_))
        if self.voting == "majority":
            resolve_reject_label(self.classes_, self.reject_label)
        return self

    def predict(self, X):
        """Class labels, shape (n_samples,); ``reject_label`` where ``"majority"`` rejects."""
        check_is_fitted(self)
        if self.voting == "soft":
            scores = self.predict_proba(X)
        else:
            # Votes are the estimators' predictions, which exist even without predict_proba.
            scores = tally_votes(self._predict(X).T, len(self.classes_), self._weights_not_none)
        voting = "plurality" if self.voting == "hard" else self.voting
        return predict_from_votes(scores, voting, self.classes_, self.reject_label)

    @available_if(_soft_voting)
    def predict_proba(self, X):
        """Weighted mean of the estimators' class probabilities, shape (n_samples, n_classes)."""
        check_is_fitted(self)
        return combine_votes(self._collect_probas(X), "soft", self._weights_not_none)

    def get_feature_names_out(self, input_features=None):
        """Names of ``transform``'s columns: per estimator and class (soft), else per estimator."""
        if self.voting == "soft":
            return super().get_feature_names_out(input_features)
        check_is_fitted(self, "n_features_in_")
        _check_feature_names_in(self, input_features, generate_names=False)
        prefix = type(self).__name__.lower()
        return np.asarray([f"{prefix}_{name}" for name, est in self.estimators if est != "drop"], dtype=object)


class VotingRegressor(ModelFileMixin, _SklearnVotingRegressor):
    """Weighted mean of heterogeneous regressors' predictions.

    A thin subclass of ``sklearn.ensemble.VotingRegressor`` with the same parameters,
    attributes and behaviour, so it can be imported from ``gpuforest`` with
    ``VotingClassifier``.
    """
