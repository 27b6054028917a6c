"""``DecisionTreeClassifier`` and ``DecisionTreeRegressor``: CART on binned features.

Drop-in for scikit-learn's estimators of the same names: same parameters (plus
``max_bins`` and ``device``), attributes and methods. Trees are grown by the
shared level-wise grower; scikit-learn's splitting rules (midpoint thresholds,
``min_*`` constraints, best-first growth with ``max_leaf_nodes``) are kept.
``DecisionTreeClassifier(algorithm="id3")`` grows Quinlan's ID3 instead, with
multiway splits on the categorical features (``multiway.MultiwayTreeGrower``),
and ``algorithm="c45"`` C4.5 (``c45.C45TreeGrower``).
"""

from functools import partial
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone
from sklearn.utils import Bunch, compute_sample_weight
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from .backend import DEVICES, get_backend
from .contributions import ContributionsMixin
from .categorical import (
    CATEGORICAL_FEATURES_CONSTRAINT,
    declares_categorical_columns,
    encode_fit_input,
    encode_predict_input,
    mask_unknown_codes,
    record_categories,
)
from .c45 import C45TreeGrower
from .constraints import check_monotonic_cst
from .fitting import BinnedTraining, fit_bin_mapper, random_seed, validate_params
from .grower import GrowthParams, TreeGrower
from .model_io import ModelFileMixin
from .importance import IMPORTANCE_TYPE_CONSTRAINT, ImportanceTypeMixin
from .multioutput import (
    MultiOutputMixin, check_single_output, encode_output_classes, output_probabilities, predicted_classes, split_outputs,
)
from .multiway import MultiwayTreeGrower
from .partial_dependence import RecursionPartialDependenceMixin
from .progress import progress_bar
from .pruning import (
    CLASSIFIER_PRUNING_CONSTRAINTS,
    REGRESSOR_PRUNING_CONSTRAINTS,
    check_pruning_params,
    cost_complexity_path,
    prune_grown_tree,
    validation_split,
)
from .sparse import check_sparse_options, dense_only_options, refuse_sparse_categorical
from .surrogates import add_surrogates
from .statistics import (
    CLASSIFICATION_CRITERIA,
    REGRESSION_CRITERIA,
    classification_statistics,
    regression_statistics,
)

MAX_DEPTH_UNLIMITED = np.iinfo(np.int32).max
# The growers of DecisionTreeClassifier's algorithms other than "cart" (entropy statistics).
QUINLAN_ALGORITHMS = {"id3": MultiwayTreeGrower, "c45": C45TreeGrower}


def resolve_max_features(max_features, n_features):
    """Number of features drawn per split from scikit-learn's ``max_features``."""
    if max_features is None:
        return n_features
    if max_features == "sqrt":
        return max(1, int(np.sqrt(n_features)))
    if max_features == "log2":
        return max(1, int(np.log2(n_features)))
    if isinstance(max_features, Integral):
        if max_features > n_features:
            raise ValueError(f"max_features must be <= n_features={n_features}, got {max_features}.")
        return int(max_features)
    return max(1, int(max_features * n_features))


# scikit-learn's constraints on the tree parameters, shared by trees and forests.
TREE_PARAMETER_CONSTRAINTS = {
    "max_depth": [Interval(Integral, 1, None, closed="left"), None],
    "splitter": [StrOptions({"best", "random"})],
    "min_samples_split": [
        Interval(Integral, 2, None, closed="left"),
        Interval(RealNotInt, 0.0, 1.0, closed="right"),
    ],
    "min_samples_leaf": [
        Interval(Integral, 1, None, closed="left"),
        Interval(RealNotInt, 0.0, 1.0, closed="neither"),
    ],
    "min_weight_fraction_leaf": [Interval(Real, 0.0, 0.5, closed="both")],
    "max_features": [
        Interval(Integral, 1, None, closed="left"),
        Interval(RealNotInt, 0.0, 1.0, closed="right"),
        StrOptions({"sqrt", "log2"}),
        None,
    ],
    "random_state": ["random_state"],
    "max_leaf_nodes": [Interval(Integral, 2, None, closed="left"), None],
    "min_impurity_decrease": [Interval(Real, 0.0, None, closed="left")],
    "max_bins": [Interval(Integral, 2, 256, closed="both")],
    "device": [StrOptions(set(DEVICES))],
    "categorical_features": CATEGORICAL_FEATURES_CONSTRAINT,
    "monotonic_cst": ["array-like", dict, None],
}


def x_dtype(X):
    """The float dtype ``X`` is validated to: float32 where float32 holds each of its values exactly (float32,
    float16, 8- and 16-bit integers, bools), so that no value changes and a copy stays small; else float64, as
    scikit-learn's HistGradientBoosting bins X (float32 would merge values such as timestamps a second apart)."""
    dtype = getattr(X, "dtype", None)
    return np.float32 if dtype is not None and np.can_cast(dtype, np.float32, "safe") else np.float64


def validate_fit_data(estimator, X, y, sample_weight, multi_output=False):
    """``X`` as float64 or float32 (``x_dtype``) C-order (NaN allowed), ``y``, and non-negative weights with a
    positive sum.

    Categorical features (the estimator's ``categorical_features``) as category codes, checked
    against its ``max_bins``; sets ``is_categorical_`` and ``categories_`` (see ``categorical``).
    A sparse X stays sparse, CSR or CSC (other formats converted, as scikit-learn does; see ``sparse``).
    ``multi_output``: ``y`` may be 2-D (``multioutput``), finite for numbers.
    """
    X, frame_categories = encode_fit_input(estimator, X)
    X, y = validate_data(
        estimator, X, y, accept_sparse=["csr", "csc"], dtype=x_dtype(X), ensure_all_finite="allow-nan", order="C",
        multi_output=multi_output,
    )
    check_sparse_options(estimator, X)
    record_categories(estimator, X, frame_categories, estimator.max_bins)
    sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
    if not sample_weight.sum() > 0:
        raise ValueError("sample_weight must have a positive sum; every weight is zero.")
    return X, y, sample_weight


def validate_predict_data(estimator, X):
    """``X`` to predict on, checked against what ``estimator`` was fitted on; categorical features as codes of
    the categories seen at fit, NaN for anything else (see ``categorical``). A sparse X as CSR (read in dense
    blocks of rows, ``sparse.dense_row_blocks``)."""
    X = encode_predict_input(estimator, X)
    X = validate_data(
        estimator, X, accept_sparse="csr", dtype=x_dtype(X), ensure_all_finite="allow-nan", order="C", reset=False
    )
    refuse_sparse_categorical(X, getattr(estimator, "is_categorical_", None))
    return mask_unknown_codes(estimator, X)


def growth_params(estimator, n_samples, n_features, seed, random_thresholds):
    """``GrowthParams`` from an estimator's tree parameters (scikit-learn's meanings).

    ``random_thresholds``: one random threshold per drawn feature (extra trees)
    instead of the best one.
    """
    min_samples_leaf = estimator.min_samples_leaf
    if not isinstance(min_samples_leaf, Integral):
        min_samples_leaf = int(np.ceil(min_samples_leaf * n_samples))
    min_samples_split = estimator.min_samples_split
    if not isinstance(min_samples_split, Integral):
        min_samples_split = max(2, int(np.ceil(min_samples_split * n_samples)))
    return GrowthParams(
        max_depth=MAX_DEPTH_UNLIMITED if estimator.max_depth is None else estimator.max_depth,
        min_samples_split=max(min_samples_split, 2 * min_samples_leaf),
        min_samples_leaf=min_samples_leaf,
        min_weight_fraction_leaf=estimator.min_weight_fraction_leaf,
        min_impurity_decrease=estimator.min_impurity_decrease,
        max_leaf_nodes=estimator.max_leaf_nodes,
        max_features=resolve_max_features(estimator.max_features, n_features),
        seed=seed,
        random_thresholds=random_thresholds,
        monotonic_cst=tree_monotonic_cst(estimator),
    )


def tree_monotonic_cst(estimator):
    """The checked ``monotonic_cst`` of a tree or forest (``constraints.check_monotonic_cst``): binary
    classification and regression, CART only."""
    monotonic_cst = getattr(estimator, "monotonic_cst", None)
    if monotonic_cst is not None and getattr(estimator, "algorithm", "cart") != "cart":
        raise ValueError(f"monotonic_cst needs algorithm='cart', got algorithm={estimator.algorithm!r}.")
    n_classes = getattr(estimator, "n_classes_", None)
    return check_monotonic_cst(
        estimator, monotonic_cst, n_classes=None if n_classes is None else int(np.max(n_classes)),
        is_categorical=getattr(estimator, "is_categorical_", None), tree_messages=True,
    )


def encode_classes(y):
    """``classes_`` and the class index of each label, after scikit-learn's target checks."""
    check_classification_targets(y)
    return np.unique(y, return_inverse=True)


def encode_labels(classes, y):
    """Index in ``classes`` (sorted) of each label of ``y``; a label not in ``classes`` raises ValueError."""
    index = np.searchsorted(classes, y)
    if np.any(index >= classes.shape[0]) or np.any(classes[np.minimum(index, classes.shape[0] - 1)] != y):
        raise ValueError("y holds labels that were not seen in fit.")
    return index


class AllowNaNMixin:
    """Tells scikit-learn's checks that X may hold NaN (missing values are learned), category codes where
    ``categorical_features`` declares categorical columns (the checks then give X as codes), and be sparse
    unless those or other dense-only options are used (``sparse``)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.categorical = declares_categorical_columns(getattr(self, "categorical_features", None))
        tags.input_tags.sparse = not (tags.input_tags.categorical or dense_only_options(self))
        return tags


class BaseDecisionTree(
    AllowNaNMixin, ModelFileMixin, RecursionPartialDependenceMixin, ImportanceTypeMixin,
    ContributionsMixin, MultiOutputMixin, BaseEstimator
):
    """Validation, parameters and fitting shared by both tree estimators."""

    _parameter_constraints = {
        **TREE_PARAMETER_CONSTRAINTS,
        "use_surrogates": ["boolean"],
        "max_surrogates": [Interval(Integral, 0, None, closed="left")],
        "importance_type": IMPORTANCE_TYPE_CONSTRAINT,
        "verbose": ["verbose"],
    }

    def __init__(
        self, *, criterion, splitter, max_depth, min_samples_split, min_samples_leaf, min_weight_fraction_leaf,
        max_features, random_state, max_leaf_nodes, min_impurity_decrease, ccp_alpha, pruning, validation_fraction,
        max_bins, device, categorical_features, use_surrogates, max_surrogates, verbose, monotonic_cst=None,
    ):
        self.criterion = criterion
        self.splitter = splitter
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.random_state = random_state
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.ccp_alpha = ccp_alpha
        self.pruning = pruning
        self.validation_fraction = validation_fraction
        self.max_bins = max_bins
        self.device = device
        self.categorical_features = categorical_features
        self.use_surrogates = use_surrogates
        self.max_surrogates = max_surrogates
        self.verbose = verbose
        self.monotonic_cst = monotonic_cst

    def _grow(self, X, y, sample_weight, stats, n_values, validation):
        """Bin ``X``, grow the tree on the rows with positive weight and prune it (``pruning.prune_grown_tree``)."""
        backend = get_backend(self.device)
        seed = random_seed(self.random_state)
        params = growth_params(self, X.shape[0], X.shape[1], seed, random_thresholds=self.splitter == "random")
        sample_indices = np.flatnonzero(sample_weight > 0).astype(np.int32)
        self._bin_mapper = fit_bin_mapper(self, X[sample_indices], seed)
        training = BinnedTraining(backend, self._bin_mapper, X)
        bar = progress_bar(self.verbose, 1, "tree", type(self).__name__)  # the forests' bar, of one tree
        _, (tree,) = training.grow(sample_indices, stats, n_values, params, grower_class=self._grower_class())
        self.tree_ = prune_grown_tree(self, tree, backend, (X, y, sample_weight, sample_indices), validation)
        if self.use_surrogates:
            add_surrogates(self.tree_, X, sample_weight, sample_indices, self.max_surrogates, self.is_categorical_)
        bar.set_postfix(nodes=self.tree_.node_count, refresh=False)
        bar.update()
        bar.close()
        self.max_features_ = params.max_features
        self.device_ = backend.name
        return self

    def _grower_class(self):
        """The grower of ``fit``: ``TreeGrower``, binary splits."""
        return TreeGrower

    def _validation_split(self, X, y, sample_weight, eval_set, encode_target):
        """``pruning.validation_split`` of the training data, after the checks of the pruning parameters."""
        check_pruning_params(self)
        validate_X = partial(validate_predict_data, self)
        return validation_split(self, X, y, sample_weight, eval_set, encode_target, validate_X)

    def cost_complexity_pruning_path(self, X, y, sample_weight=None):
        """The minimal cost-complexity pruning path of the tree ``fit`` grows (scikit-learn's method).

        Returns
        -------
        Bunch
            ``ccp_alphas``: effective alphas of the nested subtrees, increasing;
            ``impurities``: the sum of the leaves' weighted impurities of each.
        """
        estimator = clone(self).set_params(ccp_alpha=0.0).fit(X, y, sample_weight=sample_weight)
        ccp_alphas, impurities = cost_complexity_path(estimator.tree_)
        return Bunch(ccp_alphas=ccp_alphas, impurities=impurities)

    def _validate_X_predict(self, X):
        check_is_fitted(self, "tree_")
        return validate_predict_data(self, X)

    def _additive_trees(self):
        check_single_output(self)
        return [self.tree_], [self.tree_.value[:, 0]], np.zeros(self.tree_.value.shape[2])

    def apply(self, X):
        """Index of the leaf each sample ends up in, shape (n_samples,)."""
        X = self._validate_X_predict(X)
        return self.tree_.apply(X, get_backend(self.device_))

    def decision_path(self, X):
        """Sparse (n_samples, n_nodes) indicator of the nodes each sample goes through."""
        X = self._validate_X_predict(X)
        return self.tree_.decision_path(X, get_backend(self.device_))

    def get_depth(self):
        check_is_fitted(self, "tree_")
        return self.tree_.max_depth

    def get_n_leaves(self):
        check_is_fitted(self, "tree_")
        return self.tree_.n_leaves

    @property
    def feature_importances_(self):
        """Normalised total impurity decrease per feature (Gini importance), or the normalised split counts or
        cover of ``importance_type`` (``gpuforest.importance``)."""
        check_is_fitted(self, "tree_")
        if self.importance_type != "gain":
            return self._typed_importances()
        return self.tree_.compute_feature_importances()

    def _partial_dependence_members(self):
        """The tree, its nodes weighted by their weighted sample counts (``RecursionPartialDependenceMixin``)."""
        check_single_output(self)
        return [(self.tree_, self.tree_.weighted_n_node_samples, 1.0, 0)], self.tree_.value.shape[2]

    def _importance_trees(self):
        return [self.tree_]

    def _leaf_values(self, X):
        """Each row's leaf values (n_samples, n_outputs, n_values); for a tree that shares missing values among
        branches (C4.5's), the weighted sum of the values of the leaves it reaches (``Tree.fractional_values``)."""
        X = self._validate_X_predict(X)
        backend = get_backend(self.device_)
        if self.tree_.missing_fractional:
            return self.tree_.fractional_values(X, backend)[:, None]
        return self.tree_.value[self.tree_.apply(X, backend)]


class DecisionTreeClassifier(ClassifierMixin, BaseDecisionTree):
    """A decision tree classifier (CART), on the CPU or the GPU.

    Parameters
    ----------
    criterion : {"gini", "entropy", "log_loss", "misclassification"}, default="gini"
        Impurity: Gini index, Shannon entropy in bits (``log_loss`` is an
        alias) or misclassification rate ``1 - max_k p_k``.
    splitter : {"best", "random"}, default="best"
        ``"random"``: each drawn feature gets one random threshold, drawn
        uniformly between the node's lowest and highest values (as scikit-learn), and the
        best of those splits (extremely randomized trees, Geurts et al. 2006).
    max_depth, min_samples_split, min_samples_leaf, min_weight_fraction_leaf,
    max_features, random_state, max_leaf_nodes, min_impurity_decrease, class_weight, ccp_alpha
        As in ``sklearn.tree.DecisionTreeClassifier``; ``ccp_alpha`` prunes the
        grown tree as scikit-learn does (minimal cost-complexity pruning).
    min_split_significance : float in (0, 1], default=None
        Chi-square pre-pruning (Quinlan 1986): a split stays only if the
        chi-square test of independence between branch and class on its
        weighted class counts has a p-value below this. Not with ``max_leaf_nodes``.
    pruning : {"reduced_error", "validation", "mdl", "pessimistic"}, default=None
        ``"reduced_error"``: reduced-error post-pruning (Quinlan 1987) on
        validation data; ``"validation"``: a split stays only if it improves
        the validation accuracy of its node (pre-pruning, not with
        ``max_leaf_nodes``); ``"mdl"``: minimum description length pruning
        (Mehta, Rissanen & Agrawal 1995); ``"pessimistic"``: C4.5's
        error-based pruning on the training rows (Quinlan 1993). See
        ``gpuforest.pruning``.
    confidence_factor : float in (0, 0.5], default=0.25
        C4.5's confidence factor of ``pruning="pessimistic"``: smaller prunes more.
    subtree_raising : bool, default=True
        Whether ``pruning="pessimistic"`` may replace a node by its largest
        branch (C4.5's subtree raising; J48's ``-S`` turns it off).
    validation_fraction : float or int, default=0.1
        The validation data of ``"reduced_error"`` and ``"validation"`` without
        ``fit(..., eval_set=...)``: a stratified split of the training data (a
        fraction, or a number of rows) drawn by ``random_state``, left out of growth
        (uniform where a class has too few rows to stratify).
    importance_type : {"gain", "split", "cover"}, default="gain"
        What ``feature_importances_`` measures: impurity decrease, number of splits, or training weight at the
        splits (``gpuforest.importance``); ``get_score`` gives the totals.
    max_bins : int, default=256
        Bins per feature, one of them for missing values. Features with fewer
        distinct values are split exactly at the midpoints between them.
    device : {"auto", "cpu", "cuda"}, default="auto"
        Where to train and predict. ``"auto"`` uses a GPU when one is usable.
    categorical_features : None, "from_dtype", or array-like of bool, int or str, default=None
        The categorical features, as in ``sklearn.ensemble.HistGradientBoostingClassifier``:
        none, the pandas ``category`` columns, indices, names, or a bool mask (see
        ``gpuforest.categorical``). A categorical feature holds category codes (integers
        from 0, at most ``max_bins - 1`` categories) or is a ``category`` column, coded by
        its categories; at predict, a category not seen at fit is a missing value.
    use_surrogates : bool, default=False
        CART's surrogate splits (Breiman et al. 1984, section 5.3; see
        ``gpuforest.surrogates``): after growth, each numeric or categorical binary
        split gets up to ``max_surrogates`` splits on other features (thresholds,
        or category codes sent each way) that best mimic it, ranked by predictive
        association; a sample whose split value is missing (NaN, or at a categorical
        split a category not seen at fit) follows the first surrogate it has a value
        for, else the majority side. Multiway splits (``algorithm="id3"``) get none.
        Growth itself sends missing values in the learned direction.
    max_surrogates : int, default=5
        Surrogate splits kept per node with ``use_surrogates`` (0: missing values
        go to the majority side).
    algorithm : {"cart", "id3", "c45"}, default="cart"
        ``"cart"``: binary splits (Breiman et al. 1984), as scikit-learn's tree.
        ``"id3"``: Quinlan's ID3 (1986), by information gain (the entropy criterion,
        whatever ``criterion`` says): a categorical feature splits a node into one branch per
        category code ``0 .. n - 1`` (a code without rows at the node gets a leaf with the
        node's class proportions; ``min_samples_leaf`` and ``min_weight_fraction_leaf`` bind
        the branches with rows) and is used at most once on a path; numeric features get
        binary threshold splits by information gain (ID3 has nominal attributes only; C4.5
        added thresholds). A node without a split into two non-empty branches (its features
        used up, say) is a leaf of its majority class. At a multiway node, rows with a
        missing value (or a category without a branch) stay there, in training and at
        predict. No pruning unless asked for by the pruning parameters; not with
        ``max_leaf_nodes`` (the tree grows level by level).
        ``"c45"``: Quinlan's C4.5 (1993, release 8 as Weka's J48 runs it; ``gpuforest.c45``): the
        entropy statistics, ID3's multiway splits on the categorical features, binary splits on the
        numeric ones at the threshold of largest gain less release 8's ``log2(n_candidates) / W``,
        recorded as the largest training value not above the midpoint; the split of largest gain ratio
        among those of at least average gain; at least two branches with 2 (``max(2, min_samples_leaf)``)
        cases, a threshold's both sides at least ``0.1 W / n_classes`` (2 to 25). Then J48's collapse of the
        subtrees that do not lower the training error and, unless ``pruning`` says otherwise, error-based
        pruning (``pruning="pessimistic"``, ``confidence_factor``, ``subtree_raising``). Missing values
        are fractional cases (Quinlan 1993, ch. 3): the gain counts the known cases (times their share),
        the split information counts the unknown ones as a branch, and a case without the split's value
        goes down every branch with known cases, weighted by the branch's share of them, in training, pruning
        and ``predict_proba`` (the weighted sum of the leaves' class proportions; ``apply`` and
        ``decision_path`` follow ``missing_go_to_left`` at a threshold and stop at a multiway split).
        ``criterion`` is not used; ``splitter="random"`` and ``use_surrogates=True`` are refused, and
        ``max_leaf_nodes`` as for ID3.
    verbose : int, default=0
        0: silent. ``>= 1``: the forests' tqdm bar on stderr, of the one tree, with its time and node count.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,), or a list of them (one per output, ``gpuforest.multioutput``)
    n_classes_ : int, or ndarray of shape (n_outputs,)
    n_outputs_ : int
        ``y.shape[1]`` of a 2-D ``y`` of several columns, else 1.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
    is_categorical_ : ndarray of shape (n_features_in_,), dtype bool, or None
        The categorical features; None if there are none.
    categories_ : list of (ndarray or None) or None
        Per feature, its categories in code order (None for a numeric feature).
    max_features_ : int
    tree_ : gpuforest.tree.Tree
    feature_importances_ : ndarray of shape (n_features_in_,)
    """

    _parameter_constraints = {
        **BaseDecisionTree._parameter_constraints,
        **CLASSIFIER_PRUNING_CONSTRAINTS,
        "criterion": [StrOptions(set(CLASSIFICATION_CRITERIA))],
        "class_weight": [dict, list, StrOptions({"balanced"}), None],
        "algorithm": [StrOptions({"cart", "id3", "c45"})],
    }

    def __init__(
        self, *, criterion="gini", splitter="best", max_depth=None, min_samples_split=2, min_samples_leaf=1,
        min_weight_fraction_leaf=0.0, max_features=None, random_state=None, max_leaf_nodes=None,
        min_impurity_decrease=0.0, class_weight=None, ccp_alpha=0.0, min_split_significance=None, pruning=None,
        validation_fraction=0.1, confidence_factor=0.25, subtree_raising=True, max_bins=256, device="auto",
        categorical_features=None, use_surrogates=False, max_surrogates=5, algorithm="cart", importance_type="gain",
        verbose=0, monotonic_cst=None,
    ):
        super().__init__(
            criterion=criterion, splitter=splitter, max_depth=max_depth, min_samples_split=min_samples_split,
            min_samples_leaf=min_samples_leaf, min_weight_fraction_leaf=min_weight_fraction_leaf,
            max_features=max_features, random_state=random_state, max_leaf_nodes=max_leaf_nodes,
            min_impurity_decrease=min_impurity_decrease, ccp_alpha=ccp_alpha, pruning=pruning,
            validation_fraction=validation_fraction, max_bins=max_bins, device=device,
            categorical_features=categorical_features, use_surrogates=use_surrogates, max_surrogates=max_surrogates,
            verbose=verbose, monotonic_cst=monotonic_cst,
        )
        self.class_weight = class_weight
        self.min_split_significance = min_split_significance
        self.confidence_factor = confidence_factor
        self.subtree_raising = subtree_raising
        self.algorithm = algorithm
        self.importance_type = importance_type

    def fit(self, X, y, sample_weight=None, eval_set=None):
        """Grow the tree on ``X`` (n_samples, n_features) and class labels ``y`` (n_samples,) or (n_samples,
        n_outputs) (``gpuforest.multioutput``).

        ``eval_set=(X_val, y_val[, sample_weight_val])``: the validation data of
        ``pruning="reduced_error" | "validation"`` instead of a split of ``X``.
        """
        validate_params(self)
        if self.algorithm == "c45" and (self.splitter != "best" or self.use_surrogates):
            raise ValueError(
                "algorithm='c45' chooses its thresholds and shares missing values among the branches: it needs "
                f"splitter='best' and use_surrogates=False, got splitter={self.splitter!r}, "
                f"use_surrogates={self.use_surrogates!r}."
            )
        X, y, sample_weight = validate_fit_data(self, X, y, sample_weight, multi_output=True)
        self.classes_, self.n_classes_, y_encoded = encode_output_classes(split_outputs(self, y), encode_classes)
        X, y_encoded, sample_weight, validation = self._validation_split(
            X, y_encoded, sample_weight, eval_set, partial(encode_labels, self.classes_)
        )
        if self.class_weight is not None:
            sample_weight = sample_weight * compute_sample_weight(self.class_weight, y_encoded)
        # ID3 and C4.5 choose splits by information gain.
        criterion = "entropy" if self.algorithm in QUINLAN_ALGORITHMS else self.criterion
        stats = classification_statistics(criterion, y_encoded, self.n_classes_, sample_weight)
        return self._grow(
            X, y_encoded, sample_weight, stats, self.n_outputs_ * int(np.max(self.n_classes_)), validation
        )

    def _grower_class(self):
        """The grower of ``fit``: ``MultiwayTreeGrower`` for ID3, ``C45TreeGrower`` for C4.5, else ``TreeGrower``."""
        return QUINLAN_ALGORITHMS.get(self.algorithm, TreeGrower)

    def predict_proba(self, X):
        """Class proportions of each sample's leaf, shape (n_samples, n_classes); with several outputs a list of
        (n_samples, n_classes_k) arrays."""
        return output_probabilities(self._leaf_values(X), self.n_classes_)

    def predict_log_proba(self, X):
        proba = self.predict_proba(X)
        with np.errstate(divide="ignore"):
            return [np.log(output) for output in proba] if isinstance(proba, list) else np.log(proba)

    def predict(self, X):
        """The most probable class of each sample (n_samples,), or of each output (n_samples, n_outputs)."""
        return predicted_classes(self.predict_proba(X), self.classes_)


class DecisionTreeRegressor(RegressorMixin, BaseDecisionTree):
    """A decision tree regressor (CART), on the CPU or the GPU.

    Parameters
    ----------
    criterion : {"squared_error", "poisson"}, default="squared_error"
        Variance reduction, or half Poisson deviance reduction (``y >= 0``).
    splitter : {"best", "random"}, default="best"
        As in ``DecisionTreeClassifier``.
    max_depth, min_samples_split, min_samples_leaf, min_weight_fraction_leaf,
    max_features, random_state, max_leaf_nodes, min_impurity_decrease, ccp_alpha
        As in ``sklearn.tree.DecisionTreeRegressor``.
    pruning : {"reduced_error", "validation"}, default=None
        As in ``DecisionTreeClassifier``, on the validation squared error.
    validation_fraction : float or int, default=0.1
        As in ``DecisionTreeClassifier`` (a random split, not stratified).
    importance_type : {"gain", "split", "cover"}, default="gain"
        What ``feature_importances_`` measures: impurity decrease, number of splits, or training weight at the
        splits (``gpuforest.importance``); ``get_score`` gives the totals.
    max_bins : int, default=256
    device : {"auto", "cpu", "cuda"}, default="auto"
    categorical_features, use_surrogates, max_surrogates, verbose
        As in ``DecisionTreeClassifier``.

    Attributes
    ----------
    n_outputs_, n_features_in_, feature_names_in_, is_categorical_, categories_, max_features_, tree_,
    feature_importances_
        As in ``DecisionTreeClassifier``.
    """

    _parameter_constraints = {
        **BaseDecisionTree._parameter_constraints,
        **REGRESSOR_PRUNING_CONSTRAINTS,
        "criterion": [StrOptions(set(REGRESSION_CRITERIA))],
    }

    def __init__(
        self, *, criterion="squared_error", splitter="best", max_depth=None, min_samples_split=2,
        min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_features=None, random_state=None, max_leaf_nodes=None,
        min_impurity_decrease=0.0, ccp_alpha=0.0, pruning=None, validation_fraction=0.1, max_bins=256,
        device="auto", categorical_features=None, use_surrogates=False, max_surrogates=5, importance_type="gain",
        verbose=0, monotonic_cst=None,
    ):
        super().__init__(
            criterion=criterion, splitter=splitter, max_depth=max_depth, min_samples_split=min_samples_split,
            min_samples_leaf=min_samples_leaf, min_weight_fraction_leaf=min_weight_fraction_leaf,
            max_features=max_features, random_state=random_state, max_leaf_nodes=max_leaf_nodes,
            min_impurity_decrease=min_impurity_decrease, ccp_alpha=ccp_alpha, pruning=pruning,
            validation_fraction=validation_fraction, max_bins=max_bins, device=device,
            categorical_features=categorical_features, use_surrogates=use_surrogates, max_surrogates=max_surrogates,
            verbose=verbose, monotonic_cst=monotonic_cst,
        )
        self.importance_type = importance_type

    def fit(self, X, y, sample_weight=None, eval_set=None):
        """Grow the tree on ``X`` (n_samples, n_features) and real targets ``y`` (n_samples,) or (n_samples,
        n_outputs); ``eval_set`` as the classifier's."""
        validate_params(self)
        X, y, sample_weight = validate_fit_data(self, X, y, sample_weight, multi_output=True)
        y = np.asarray(split_outputs(self, y), dtype=np.float64)
        if self.criterion == "poisson":
            if np.any(y < 0):
                raise ValueError("Some value(s) of y are negative which is not allowed for Poisson regression.")
            if not np.all(sample_weight @ y > 0):
                raise ValueError("Sum of y is not positive which is necessary for Poisson regression.")
        X, y, sample_weight, validation = self._validation_split(
            X, y, sample_weight, eval_set, partial(np.asarray, dtype=np.float64)
        )
        stats = regression_statistics(self.criterion, y, sample_weight)
        return self._grow(X, y, sample_weight, stats, self.n_outputs_, validation)

    def predict(self, X):
        """Mean target of each sample's leaf, shape (n_samples,), or of each output (n_samples, n_outputs)."""
        values = self._leaf_values(X)[:, :, 0]
        return values[:, 0] if self.n_outputs_ == 1 else values
