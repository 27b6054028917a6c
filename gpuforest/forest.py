"""Random forests and extra trees: many trees grown together by the shared grower.

``RandomForestClassifier``, ``RandomForestRegressor``, ``ExtraTreesClassifier``
and ``ExtraTreesRegressor`` take scikit-learn's parameters and defaults (plus
``max_bins``, ``device`` and, for classifiers, ``voting`` and
``reject_label``). Fitting works in batches of trees sized from the input's
size (and at most a share of the free memory);
the trees of a batch are grown together, level by level, in the same kernel
launches (the tree is a batch dimension of the grower, like the node).

Bootstrap samples are per-(tree, row) draw counts from the counter-based RNG
(``backend.bootstrap_counts``), never copies of X: a tree's rows are those
with a positive count, and each row's statistics count as many times as it
was drawn. Counts depend only on (seed, global tree index, draw), so any
batching (and a later ``warm_start``) gives the same trees, and the
out-of-bag pass regenerates them instead of keeping them.
"""

import warnings
from functools import partial
from numbers import Integral, Real

import numpy as np
import scipy.sparse
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils import compute_sample_weight
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions
from sklearn.utils.validation import check_is_fitted

from .auto_estimators import grow_until_out_of_bag_error_stops
from .backend import get_backend
from .contributions import ContributionsMixin
from .decision_tree import (
    TREE_PARAMETER_CONSTRAINTS,
    AllowNaNMixin,
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    encode_classes,
    encode_labels,
    growth_params,
    validate_fit_data,
    validate_predict_data,
)
from .devices import release_free_host_memory
from .fitting import BinnedTraining, fit_bin_mapper, random_seed, refit_bin_mapper, validate_params
from .model_io import ModelFileMixin
from .margins import ForestMargins
from .importance import IMPORTANCE_TYPE_CONSTRAINT, ImportanceTypeMixin
from .multioutput import (
    MultiOutputMixin, check_single_output, encode_output_classes, encode_output_labels, mean_output_accuracy, output_probabilities,
    predicted_classes, split_outputs,
)
from .partial_dependence import RecursionPartialDependenceMixin
from .progress import progress_bar
from .pruning import (
    CLASSIFIER_PRUNING_CONSTRAINTS,
    REGRESSOR_PRUNING_CONSTRAINTS,
    check_pruning_params,
    prune_grown_tree,
    prunes,
    uses_validation,
    validation_split,
)
from .statistics import (
    CLASSIFICATION_CRITERIA,
    REGRESSION_CRITERIA,
    classification_statistics,
    regression_statistics,
)
from .tree import PackedTreesMixin
from .uncertainty import prediction_std
from .voting import VOTING_STRATEGIES, combine_votes, predict_from_votes, resolve_reject_label

# Bytes of device memory per (tree, row) while a batch grows: the draw counts (4),
# the in-bag mask (1), and the tree's row indices plus the partition's scratch copy (4 + 4).
BYTES_PER_TREE_ROW = 13
# On the CPU a batch's per-(tree, row) arrays take at most this many bytes per byte of the
# float32 input (n_samples x n_features x 4), or MIN_BATCH_BYTES for small inputs: the fit's
# peak memory follows the data's size, not the machine's, at hardly any cost in speed (the
# work per tree-row is the same in any batch; a batch of a few trees still fills every core).
# A GPU's batches take up to a quarter of its free memory: every tree of a batch shares each
# launch, so fewer batches mean fewer launches and less host work per tree.
BATCH_BYTES_PER_INPUT_BYTE = 0.25
MIN_BATCH_BYTES = 32 * 1024 * 1024
# Prediction gathers (rows, trees, values) float64 blocks of about this size.
PREDICT_BLOCK_BYTES = 64 * 1024 * 1024


class BaseForest(
    AllowNaNMixin, ModelFileMixin, PackedTreesMixin, RecursionPartialDependenceMixin, ImportanceTypeMixin,
    ContributionsMixin, MultiOutputMixin, BaseEstimator
):
    """Parameters, batched fitting, prediction and out-of-bag estimates of every forest."""

    _parameter_constraints = {
        **TREE_PARAMETER_CONSTRAINTS,
        "n_estimators": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "bootstrap": ["boolean"],
        "oob_score": ["boolean", callable],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
        "warm_start": ["boolean"],
        "max_samples": [
            None,
            Interval(RealNotInt, 0.0, 1.0, closed="right"),
            Interval(Integral, 1, None, closed="left"),
        ],
        "importance_type": IMPORTANCE_TYPE_CONSTRAINT,
    }
    _tree_class = None
    _random_thresholds = False

    def __init__(
        self, *, n_estimators, criterion, max_depth, min_samples_split, min_samples_leaf, min_weight_fraction_leaf,
        max_features, max_leaf_nodes, min_impurity_decrease, bootstrap, oob_score, n_jobs, random_state, verbose,
        warm_start, max_samples, ccp_alpha, pruning, validation_fraction, max_bins, device, categorical_features,
        importance_type, n_iter_no_change, tol, monotonic_cst=None,
    ):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.bootstrap = bootstrap
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.max_samples = max_samples
        self.ccp_alpha = ccp_alpha
        self.pruning = pruning
        self.validation_fraction = validation_fraction
        self.max_bins = max_bins
        self.device = device
        self.categorical_features = categorical_features
        self.importance_type = importance_type
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.monotonic_cst = monotonic_cst

    # --- fitting ------------------------------------------------------------------------

    def fit(self, X, y, sample_weight=None, eval_set=None):
        """Grow ``n_estimators`` trees on ``X`` (n_samples, n_features) and ``y`` (n_samples,) or (n_samples,
        n_outputs) (``gpuforest.multioutput``).

        With ``warm_start`` and a fitted forest, only the trees beyond those
        already grown are added (same data expected, as in scikit-learn).
        ``eval_set=(X_val, y_val[, sample_weight_val])``: the validation data of
        ``pruning="reduced_error" | "validation"`` for every tree, instead of each
        tree's out-of-bag rows (``bootstrap=True``) or a ``validation_fraction``
        split of ``X`` left out of every tree (``bootstrap=False``).
        """
        validate_params(self)
        check_pruning_params(self)
        X, y, sample_weight = validate_fit_data(self, X, y, sample_weight, multi_output=True)
        y = split_outputs(self, y, warn_column=True)
        self._check_sampling_params()
        targets, sample_weight = self._encode_targets(y, sample_weight)
        # Without bootstrap no row is out of bag: y is only read by the out-of-bag pass.
        X, targets, sample_weight, validation = validation_split(
            self, X, targets, sample_weight, eval_set, self._encode_eval_targets,
            partial(validate_predict_data, self), split=not self.bootstrap,
        )
        n_samples, n_features = X.shape
        if not (self.warm_start and hasattr(self, "trees_")):
            self.trees_ = []
            self._seed = random_seed(self.random_state)
            positive = sample_weight > 0
            # No copy of X when every row counts.
            self._bin_mapper = fit_bin_mapper(self, X if positive.all() else X[positive], self._seed)
        else:
            refit_bin_mapper(self, X[sample_weight > 0], self._seed)
        grows_until_oob_stops = self.n_estimators == "auto"
        n_more = 0 if grows_until_oob_stops else self.n_estimators - len(self.trees_)
        if n_more < 0:
            raise ValueError(
                f"n_estimators={self.n_estimators} must be larger or equal to len(estimators_)="
                f"{len(self.trees_)} when warm_start==True."
            )
        self.n_samples_bootstrap_ = self._n_draws(n_samples)
        self._n_training_rows = n_samples  # the bootstrap counts' width (uncertainty.prediction_variance)
        backend = get_backend(self.device)
        self.device_ = backend.name
        with _numba_threads(self.n_jobs):
            if grows_until_oob_stops:
                self.oob_errors_ = grow_until_out_of_bag_error_stops(
                    self, backend, X, targets, sample_weight, validation
                )
            elif n_more > 0:
                self._grow_trees(backend, X, targets, sample_weight, validation, len(self.trees_), n_more)
            self.n_estimators_ = len(self.trees_)
            self._pack_trees()
            if self.oob_score or self._needs_oob_weights():
                self._out_of_bag(backend, X, y, targets)
        return self

    def _check_sampling_params(self):
        if self.n_estimators == "auto" and (not self.bootstrap or self.warm_start):
            raise ValueError(
                "n_estimators='auto' grows trees until the out-of-bag error stops improving: it needs "
                "bootstrap=True and warm_start=False."
            )
        if not self.bootstrap:
            if self.oob_score:
                raise ValueError("Out of bag estimation only available if bootstrap=True")
            if self.max_samples is not None:
                raise ValueError(
                    "`max_sample` cannot be set if `bootstrap=False`. Either switch to `bootstrap=True` or set "
                    "`max_sample=None`."
                )

    def _n_draws(self, n_samples):
        """Bootstrap draws per tree (scikit-learn's ``_get_n_samples_bootstrap``)."""
        if self.max_samples is None:
            return n_samples
        if isinstance(self.max_samples, Integral):
            if self.max_samples > n_samples:
                raise ValueError(f"`max_samples` must be <= n_samples={n_samples} but got value {self.max_samples}")
            return int(self.max_samples)
        return max(round(n_samples * self.max_samples), 1)

    def _trees_per_batch(self, backend, n_samples, n_features, n_trees):
        """Trees grown together: as many as the batch budget holds; one with per-tree statistics.

        The budget is a quarter of the backend's free memory, and on the CPU at most
        ``BATCH_BYTES_PER_INPUT_BYTE`` times the float32 input's bytes (at least ``MIN_BATCH_BYTES``),
        at ``BYTES_PER_TREE_ROW`` bytes per (tree, row); at least one tree.
        """
        if self._per_tree_statistics():
            return 1
        per_tree = BYTES_PER_TREE_ROW * max(n_samples, 1)
        budget = 0.25 * backend.free_memory_bytes()
        if backend.shares_host_memory:
            budget = min(max(BATCH_BYTES_PER_INPUT_BYTE * 4 * n_samples * n_features, MIN_BATCH_BYTES), budget)
        return int(max(1, min(n_trees, budget // per_tree)))

    def _sample_counts(self, backend, first_tree, n_trees, n_samples):
        """Draw counts of trees ``first_tree ...``: shape (n_trees, n_samples), int32, on the device."""
        if self.bootstrap:
            return backend.bootstrap_counts(self._seed, first_tree, n_trees, n_samples, self.n_samples_bootstrap_)
        return backend.xp.ones((n_trees, n_samples), dtype=np.int32)

    def _batches(self, backend, first_tree, n_trees, n_samples, n_features):
        """``(first_tree, n_trees)`` of each batch, ``n_trees`` trees from ``first_tree`` on."""
        per_batch = self._trees_per_batch(backend, n_samples, n_features, n_trees)
        for start in range(first_tree, first_tree + n_trees, per_batch):
            yield start, min(per_batch, first_tree + n_trees - start)

    def _grow_trees(self, backend, X, targets, sample_weight, validation, first_tree, n_trees):
        n_samples, n_features = X.shape
        params = growth_params(self, n_samples, n_features, self._seed, self._random_thresholds)
        self.max_features_ = params.max_features
        training = BinnedTraining(backend, self._bin_mapper, X)
        positive = backend.to_device(sample_weight > 0)
        per_tree_stats = self._per_tree_statistics()
        stats = None
        # Scales sized for any bootstrap sample (statistics._to_fixed): a tree is the same in any batch.
        n_draws = self.n_samples_bootstrap_ if self.bootstrap else None
        if not per_tree_stats:
            stats = self._statistics(targets, sample_weight, n_draws)
        bar = progress_bar(self.verbose, n_trees, "tree", type(self).__name__)
        workspace = {}  # the growers' buffers, reused by every batch
        for start, count in self._batches(backend, first_tree, n_trees, n_samples, n_features):
            release_free_host_memory()  # the binning's and the previous batch's temporaries
            counts = self._sample_counts(backend, start, count, n_samples)
            batch_stats = stats
            if per_tree_stats:  # one tree per batch: its own class weights
                host_counts = backend.to_host(counts)[0]
                subsample_weight = self._subsample_weight(targets, sample_weight, host_counts)
                batch_stats = self._statistics(targets, subsample_weight, n_draws)
            sample_indices, tree_offsets = self._in_bag_rows(backend, counts, positive)
            _, trees = training.grow(
                sample_indices, batch_stats, self._n_values(), params, sample_counts=counts, tree_offsets=tree_offsets,
                first_tree=start, workspace=workspace,
            )
            self.trees_.extend(self._pruned(backend, trees, counts, X, targets, sample_weight, validation))
            # Released before the next batch's are drawn: one batch's rows at a time.
            del counts, sample_indices
            bar.update(count)
        bar.close()

    def _pruned(self, backend, trees, counts, X, targets, sample_weight, validation):
        """The batch's ``trees`` pruned as the parameters say (``pruning.prune_grown_tree``).

        A tree's training rows are its drawn rows of positive weight, weighted
        as it was grown (times their draws); its validation rows ``eval_set``,
        or without it its out-of-bag rows.
        """
        if not prunes(self):
            return trees
        host_counts = backend.to_host(counts)
        pruned = []
        for tree, tree_counts in zip(trees, host_counts):
            drawn = (tree_counts > 0) & (sample_weight > 0)
            tree_validation = validation
            if validation is None and uses_validation(self):
                out_of_bag = np.flatnonzero(~drawn & (sample_weight > 0))
                tree_validation = (X[out_of_bag], targets[out_of_bag], sample_weight[out_of_bag])
            weight = sample_weight
            if self._per_tree_statistics():
                weight = self._subsample_weight(targets, sample_weight, tree_counts)
            training = (X, targets, weight * tree_counts, np.flatnonzero(drawn))
            pruned.append(prune_grown_tree(self, tree, backend, training, tree_validation))
        return pruned

    @staticmethod
    def _in_bag_rows(backend, counts, positive):
        """Each tree's drawn rows with positive weight, concatenated: ``(sample_indices, tree_offsets)``.

        One tree at a time, so the only temporary is one tree's row list.
        """
        xp = backend.xp
        in_bag = (counts > 0) & positive[None, :]
        tree_offsets = np.concatenate([[0], np.cumsum(backend.to_host(in_bag.sum(axis=1)))]).astype(np.int64)
        sample_indices = xp.empty(int(tree_offsets[-1]), dtype=np.int32)
        for tree, (start, stop) in enumerate(zip(tree_offsets[:-1], tree_offsets[1:])):
            sample_indices[start:stop] = xp.flatnonzero(in_bag[tree])
        return sample_indices, tree_offsets

    def _per_tree_statistics(self):
        return False

    def _needs_oob_weights(self):
        return False

    # --- the grown forest ----------------------------------------------------------------

    def _tree_values(self, backend, X, first_tree=0, n_trees=None):
        """Each tree's leaf value for each row: shape (n_trees, n_samples, n_values), float64.

        Tree-major, so that combining the trees reads each tree's values contiguously.
        """
        stop = len(self.trees_) if n_trees is None else first_tree + n_trees
        tree_offsets, split_value, node_info, category_bitset, value, _ = self._packed_trees()
        offsets = tree_offsets[first_tree:stop]
        leaves = backend.predict_leaves(X, offsets, split_value, node_info, category_bitset)
        return value[offsets[:, None] + leaves.T]

    def _row_blocks(self, n_samples, n_trees):
        """Row ranges whose (trees, rows, values) gathers stay near ``PREDICT_BLOCK_BYTES``."""
        rows = max(1, PREDICT_BLOCK_BYTES // (8 * n_trees * self._n_values()))
        for start in range(0, n_samples, rows):
            yield slice(start, min(start + rows, n_samples))

    def _mean_value(self, X):
        """Mean over the trees of each row's leaf value: shape (n_samples, n_values)."""
        X = self._validate_X_predict(X)
        backend = get_backend(self.device_)
        result = np.empty((X.shape[0], self._n_values()))
        for block in self._row_blocks(X.shape[0], len(self.trees_)):
            result[block] = self._tree_values(backend, X[block]).mean(axis=0)
        return result

    def _validate_X_predict(self, X):
        check_is_fitted(self, "trees_")
        return validate_predict_data(self, X)

    def _additive_trees(self):
        check_single_output(self)
        share = 1.0 / len(self.trees_)
        return self.trees_, [tree.value[:, 0] * share for tree in self.trees_], np.zeros(self._n_values())

    def _out_of_bag(self, backend, X, y, targets):
        """Mean of the out-of-bag trees' values per row, in one pass over X per batch of trees.

        Calls ``_oob_per_tree`` per (batch, row block) and ``_set_oob_results``.
        """
        n_samples = X.shape[0]
        n_values = self._n_values()
        self._oob_sum = np.zeros((n_samples, n_values))
        self._oob_count = np.zeros(n_samples, dtype=np.int64)
        self._oob_tree_correct = np.zeros(len(self.trees_))
        self._oob_tree_count = np.zeros(len(self.trees_), dtype=np.int64)
        for start, block, out_of_bag, values in self._out_of_bag_values(backend, X, 0, len(self.trees_)):
            self._oob_sum[block] += np.einsum("trv,tr->rv", values, out_of_bag)
            self._oob_count[block] += out_of_bag.sum(axis=0)
            self._oob_tree_count[start:start + values.shape[0]] += out_of_bag.sum(axis=1)
            self._oob_per_tree(values, out_of_bag, targets[block], start)
        if self.oob_score and np.any(self._oob_count == 0):  # weighted voting alone needs only the trees' accuracy
            warnings.warn(
                "Some inputs do not have OOB scores. This probably means too few trees were used to compute any "
                "reliable OOB estimates.",
                UserWarning,
            )
        oob_mean = self._oob_sum / np.maximum(self._oob_count, 1)[:, None]
        self._set_oob_results(y, oob_mean)
        del self._oob_sum, self._oob_count

    def _out_of_bag_values(self, backend, X, first_tree, n_trees):
        """The trees ``first_tree ...`` (``n_trees``) at the training rows, by batch of trees and block of rows.

        Yields ``(first tree of the batch, rows slice, out_of_bag (trees, rows) bool, values (trees, rows,
        n_values))``; the counts are regenerated from the seed.
        """
        n_samples, n_features = X.shape
        for start, count in self._batches(backend, first_tree, n_trees, n_samples, n_features):
            counts = backend.to_host(self._sample_counts(backend, start, count, n_samples))
            for block in self._row_blocks(n_samples, count):
                yield start, block, counts[:, block] == 0, self._tree_values(backend, X[block], start, count)

    def _oob_per_tree(self, values, out_of_bag, targets, first_tree):
        """Per-tree out-of-bag statistics (classifiers: correct votes)."""

    # --- inspection ----------------------------------------------------------------------

    @property
    def estimators_(self):
        """Each tree as a fitted decision-tree estimator (views of the forest's arrays).

        Built on first access and kept until ``trees_`` changes (a refit or ``warm_start``).
        """
        check_is_fitted(self, "trees_")
        cached = getattr(self, "_estimators", None)
        if cached is None or len(cached) != len(self.trees_) or any(
            estimator.tree_ is not tree for estimator, tree in zip(cached, self.trees_)
        ):
            self._estimators = [self._as_estimator(index, tree) for index, tree in enumerate(self.trees_)]
        return self._estimators

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_estimators", None)  # rebuilt from trees_ on access: each tree is stored once
        return state

    @property
    def estimator_(self):
        """The unfitted decision tree every member is grown as."""
        return self._tree_class(**self._tree_params(self._seed if hasattr(self, "_seed") else self.random_state))

    def _tree_params(self, random_state):
        return dict(
            criterion=self.criterion, splitter="random" if self._random_thresholds else "best",
            max_depth=self.max_depth, min_samples_split=self.min_samples_split,
            min_samples_leaf=self.min_samples_leaf, min_weight_fraction_leaf=self.min_weight_fraction_leaf,
            max_features=self.max_features, max_leaf_nodes=self.max_leaf_nodes,
            min_impurity_decrease=self.min_impurity_decrease, random_state=random_state, ccp_alpha=self.ccp_alpha,
            pruning=self.pruning, validation_fraction=self.validation_fraction, max_bins=self.max_bins,
            device=self.device, categorical_features=self.categorical_features, importance_type=self.importance_type,
            monotonic_cst=self.monotonic_cst,
        )

    def _as_estimator(self, index, tree):
        estimator = self._tree_class(**self._tree_params(self._seed))
        estimator.tree_ = tree
        estimator.n_features_in_ = self.n_features_in_
        if hasattr(self, "feature_names_in_"):
            estimator.feature_names_in_ = self.feature_names_in_
        estimator.max_features_ = self.max_features_
        estimator.device_ = self.device_
        estimator.is_categorical_, estimator.categories_ = self.is_categorical_, self.categories_
        estimator.n_outputs_ = self.n_outputs_
        self._set_estimator_targets(estimator)
        return estimator

    def _set_estimator_targets(self, estimator):
        """Target attributes a member estimator needs (``classes_`` for classifiers)."""

    def __len__(self):
        return len(self.trees_)

    def __getitem__(self, index):
        return self.estimators_[index]

    def __iter__(self):
        return iter(self.estimators_)

    def _importance_trees(self):
        return self.trees_

    def _partial_dependence_members(self):
        """The mean of the trees, nodes weighted by their weighted (bootstrap) sample counts, as scikit-learn's
        forests (``RecursionPartialDependenceMixin``); a classifier's with ``voting="soft"`` only."""
        if getattr(self, "voting", "soft") != "soft":
            raise ValueError(
                f"method='recursion' averages class probabilities, which is voting='soft'; this forest has "
                f"voting={self.voting!r}: use method='brute'."
            )
        check_single_output(self)
        members = [(tree, tree.weighted_n_node_samples, 1.0 / len(self.trees_), 0) for tree in self.trees_]
        return members, self.trees_[0].value.shape[2]

    def apply(self, X):
        """Leaf of every row in every tree: shape (n_samples, n_estimators), int64."""
        X = self._validate_X_predict(X)
        backend = get_backend(self.device_)
        tree_offsets, split_value, node_info, category_bitset, _, tree_node = self._packed_trees()
        leaves = backend.predict_leaves(X, tree_offsets, split_value, node_info, category_bitset)
        return tree_node[tree_offsets[None, :] + leaves]

    def decision_path(self, X):
        """Nodes every row visits: ``(indicator, n_nodes_ptr)`` as scikit-learn's forests return.

        ``indicator`` is a CSR matrix of shape (n_samples, total nodes), the
        trees' node columns side by side; tree ``t``'s columns are
        ``n_nodes_ptr[t]:n_nodes_ptr[t + 1]``.
        """
        X = self._validate_X_predict(X)
        backend = get_backend(self.device_)
        paths = [tree.decision_path(X, backend) for tree in self.trees_]
        n_nodes_ptr = np.concatenate([[0], np.cumsum([tree.node_count for tree in self.trees_])])
        return scipy.sparse.hstack(paths).tocsr(), n_nodes_ptr

    def to_treelite(self):
        """This fitted model as a ``treelite.Model`` (``gpuforest.export_treelite.to_treelite``)."""
        from .export_treelite import to_treelite  # it imports this module

        return to_treelite(self)

    @property
    def feature_importances_(self):
        """Mean over the trees of their normalised impurity decrease per feature, or the normalised split counts
        or cover over all trees of ``importance_type`` (``gpuforest.importance``)."""
        check_is_fitted(self, "trees_")
        if self.importance_type != "gain":
            return self._typed_importances()
        importances = [tree.compute_feature_importances(normalize=False) for tree in self.trees_ if tree.node_count > 1]
        if not importances:
            return np.zeros(self.n_features_in_)
        mean = np.mean(importances, axis=0)
        return mean / mean.sum()


class _numba_threads:
    """Context manager: numba's CPU kernels use ``n_jobs`` threads (scikit-learn's meaning)."""

    def __init__(self, n_jobs):
        self.n_jobs = n_jobs

    def __enter__(self):
        import numba

        self.previous = numba.get_num_threads()
        if self.n_jobs is not None:
            available = numba.config.NUMBA_NUM_THREADS
            wanted = available + 1 + self.n_jobs if self.n_jobs < 0 else self.n_jobs
            numba.set_num_threads(int(min(max(wanted, 1), available)))

    def __exit__(self, *exc_info):
        import numba

        numba.set_num_threads(self.previous)


class ForestClassifier(ForestMargins, ClassifierMixin, BaseForest):
    """Classification: class statistics, class weights, voting, out-of-bag decision function."""

    _parameter_constraints = {
        **BaseForest._parameter_constraints,
        **CLASSIFIER_PRUNING_CONSTRAINTS,
        "criterion": [StrOptions(set(CLASSIFICATION_CRITERIA))],
        "class_weight": [dict, list, StrOptions({"balanced", "balanced_subsample"}), None],
        "voting": [StrOptions(set(VOTING_STRATEGIES))],
        "reject_label": "no_validation",
    }
    _tree_class = DecisionTreeClassifier

    def _encode_targets(self, y, sample_weight):
        self.classes_, self.n_classes_, y_encoded = encode_output_classes(y, encode_classes)
        if self.class_weight is not None and self.class_weight != "balanced_subsample":
            sample_weight = sample_weight * compute_sample_weight(self.class_weight, y_encoded)
        if self.voting == "weighted" and not self.bootstrap:
            raise ValueError("voting='weighted' weights trees by out-of-bag accuracy, which needs bootstrap=True.")
        if self.voting == "majority":
            resolve_reject_label(self.classes_, self.reject_label)  # refused at fit, not first at predict
        return y_encoded, sample_weight

    def _n_values(self):
        return self.n_outputs_ * int(np.max(self.n_classes_))

    def _encode_eval_targets(self, y):
        return encode_output_labels(self.classes_, y, encode_labels)

    def _tree_params(self, random_state):
        return dict(
            super()._tree_params(random_state), min_split_significance=self.min_split_significance,
            confidence_factor=self.confidence_factor, subtree_raising=self.subtree_raising,
        )

    def _statistics(self, y_encoded, sample_weight, n_draws):
        return classification_statistics(self.criterion, y_encoded, self.n_classes_, sample_weight, n_draws=n_draws)

    def _per_tree_statistics(self):
        return self.class_weight == "balanced_subsample"

    def _subsample_weight(self, y_encoded, sample_weight, counts):
        """``sample_weight`` times the "balanced" class weights of one bootstrap sample.

        As scikit-learn: ``n_drawn / (n_classes_drawn * drawn_c)`` for class
        ``c``, over the draws (with repetition).
        """
        if not self.bootstrap:
            return sample_weight * compute_sample_weight("balanced", y_encoded)
        drawn = np.bincount(y_encoded, weights=counts, minlength=self.n_classes_)
        present = drawn > 0
        class_weight = np.ones(self.n_classes_)
        class_weight[present] = drawn.sum() / (present.sum() * drawn[present])
        return sample_weight * class_weight[y_encoded]

    def _set_estimator_targets(self, estimator):
        estimator.classes_ = self.classes_
        estimator.n_classes_ = self.n_classes_

    def _needs_oob_weights(self):
        return self.voting == "weighted"

    def _oob_per_tree(self, values, out_of_bag, y_encoded, first_tree):
        # With several outputs, the share of the outputs a tree gets right.
        votes = np.argmax(values.reshape(*values.shape[:2], self.n_outputs_, -1), axis=3)
        correct = (votes == y_encoded.reshape(y_encoded.shape[0], -1)[None]).mean(axis=2) * out_of_bag
        self._oob_tree_correct[first_tree:first_tree + values.shape[0]] += correct.sum(axis=1)

    def _set_oob_results(self, y, oob_mean):
        self.estimator_weights_ = self._oob_tree_correct / np.maximum(self._oob_tree_count, 1)
        if not self.oob_score:
            return
        if self.n_outputs_ > 1:
            # scikit-learn's (n_samples, n_classes, n_outputs); the score: the mean of the outputs' accuracies.
            self.oob_decision_function_ = oob_mean.reshape(oob_mean.shape[0], self.n_outputs_, -1).transpose(0, 2, 1)
            y_pred = predicted_classes(output_probabilities(self.oob_decision_function_.transpose(0, 2, 1),
                                                            self.n_classes_), self.classes_)
            scoring = self.oob_score if callable(self.oob_score) else mean_output_accuracy
            self.oob_score_ = scoring(y, y_pred)
            return
        self.oob_decision_function_ = oob_mean
        y_pred = self.classes_[np.argmax(oob_mean, axis=1)]
        scoring = self.oob_score if callable(self.oob_score) else accuracy_score
        self.oob_score_ = scoring(y, y_pred)

    def predict_proba(self, X, return_std=False):
        """Combined class scores, shape (n_samples, n_classes).

        ``voting="soft"``: the mean of the trees' class proportions (as
        scikit-learn); ``"plurality"`` / ``"majority"``: the fraction of trees
        voting for each class; ``"weighted"``: the trees' votes weighted by
        their out-of-bag accuracy (``estimator_weights_``).
        ``return_std=True`` (``voting="soft"``, ``bootstrap=True``) also returns each
        probability's standard error, shape (n_samples, n_classes): the bias-corrected
        infinitesimal jackknife (``uncertainty.prediction_variance``), negative variances as 0.
        """
        if return_std:
            if self.voting != "soft":
                raise ValueError(f"return_std is the standard error of the mean class proportions: it needs "
                                 f"voting='soft', not {self.voting!r}.")
            check_single_output(self)
            return self.predict_proba(X), prediction_std(self, X)
        X = self._validate_X_predict(X)
        backend = get_backend(self.device_)
        weights = self.estimator_weights_ if self.voting == "weighted" else None
        scores = np.empty((X.shape[0], self._n_values()))
        for block in self._row_blocks(X.shape[0], len(self.trees_)):
            scores[block] = combine_votes(self._tree_values(backend, X[block]), self.voting, weights)
        return output_probabilities(scores.reshape(X.shape[0], self.n_outputs_, -1), self.n_classes_)

    def predict_log_proba(self, X):
        proba = self.predict_proba(X)
        with np.errstate(divide="ignore"):
            return [np.log(output) for output in proba] if isinstance(proba, list) else np.log(proba)

    def _additive_trees(self):
        if self.voting != "soft":
            raise ValueError(
                f"Feature contributions add up the trees' probabilities: they need voting='soft', not {self.voting!r}."
            )
        return super()._additive_trees()

    def predict(self, X):
        """The winning class; with ``voting="majority"``, ``reject_label`` where no class has over half the votes."""
        proba = self.predict_proba(X)
        if isinstance(proba, list):
            return predicted_classes(proba, self.classes_)
        return predict_from_votes(proba, self.voting, self.classes_, self.reject_label)


class ForestRegressor(RegressorMixin, BaseForest):
    """Regression: mean of the trees' leaf means; out-of-bag predictions and R^2."""

    _parameter_constraints = {
        **BaseForest._parameter_constraints,
        **REGRESSOR_PRUNING_CONSTRAINTS,
        "criterion": [StrOptions(set(REGRESSION_CRITERIA))],
    }
    _tree_class = DecisionTreeRegressor

    def _encode_targets(self, y, sample_weight):
        y = np.asarray(y, dtype=np.float64)
        if self.criterion == "poisson":
            if np.any(y < 0):
                raise ValueError("Some value(s) of y are negative which is not allowed for Poisson regression.")
            if not np.all(sample_weight @ y > 0):
                raise ValueError("Sum of y is not positive which is necessary for Poisson regression.")
        return y, sample_weight

    def _n_values(self):
        return self.n_outputs_

    @staticmethod
    def _encode_eval_targets(y):
        return np.asarray(y, dtype=np.float64)

    def _statistics(self, y, sample_weight, n_draws):
        return regression_statistics(self.criterion, y, sample_weight, n_draws=n_draws)

    def _set_oob_results(self, y, oob_mean):
        self.oob_prediction_ = oob_mean[:, 0] if self.n_outputs_ == 1 else oob_mean
        scoring = self.oob_score if callable(self.oob_score) else r2_score
        self.oob_score_ = scoring(y, self.oob_prediction_)

    def predict(self, X, return_std=False):
        """Mean over the trees of each row's leaf mean, shape (n_samples,).

        ``return_std=True`` (``bootstrap=True``) also returns each prediction's standard error,
        shape (n_samples,): the bias-corrected infinitesimal jackknife
        (``uncertainty.prediction_variance``), negative variances as 0.
        """
        if return_std:
            check_single_output(self)
            return self._mean_value(X)[:, 0], prediction_std(self, X)[:, 0]
        values = self._mean_value(X)
        return values[:, 0] if self.n_outputs_ == 1 else values


# The docstrings' lines on n_estimators="auto", shared by the classifiers and the regressors.
_AUTO_PARAMETERS_DOC = """    n_iter_no_change : int, default=3
        With ``n_estimators="auto"`` (``bootstrap=True``): the out-of-bag error is measured every 10 trees (a
        step) until this many steps in a row lower it by no more than ``tol`` (at most 1,000 trees); the forest
        keeps the trees up to the step of least error, the first trees of a fixed-size fit with the same
        ``random_state`` (``gpuforest.auto_estimators``).
    tol : float, default=1e-4
        The least decrease of the out-of-bag error (misclassified share, or mean squared error) that counts
        as an improvement with ``n_estimators="auto"``.
"""
_AUTO_ATTRIBUTES_DOC = """    n_estimators_ : int
        The number of trees grown (``n_estimators``, or the number ``"auto"`` chose).
    oob_errors_ : list of float
        With ``n_estimators="auto"``: the out-of-bag error after each step of 10 trees.
"""

_CLASSIFIER_DOC = """{summary}

    Parameters
    ----------
    n_estimators, criterion, max_depth, min_samples_split, min_samples_leaf,
    min_weight_fraction_leaf, max_features, max_leaf_nodes, min_impurity_decrease,
    bootstrap, oob_score, random_state, verbose, warm_start, class_weight, max_samples, ccp_alpha
        As in ``sklearn.ensemble.{name}``; ``criterion`` also takes
        ``"misclassification"``. ``class_weight="balanced_subsample"`` grows one
        tree per batch (each tree has its own class weights).
    min_split_significance, pruning, validation_fraction, confidence_factor, subtree_raising
        Each tree pruned as ``DecisionTreeClassifier``'s (``"pessimistic"`` on its
        drawn rows, weighted by their draws); the validation data of
        ``pruning="reduced_error" | "validation"`` is ``fit``'s ``eval_set``, else
        each tree's out-of-bag rows with ``bootstrap=True`` (``oob_score_`` then
        scores trees pruned on those rows), else a ``validation_fraction`` split
        left out of every tree.
    n_jobs : int, default=None
        CPU threads of the numba kernels during ``fit`` (``None``: all of them;
        ``-1``: all; ``-2``: all but one).
    voting : {{"soft", "plurality", "majority", "weighted"}}, default="soft"
        How the trees' predictions combine (see ``predict_proba``);
        ``"weighted"`` needs ``bootstrap=True``.
    reject_label : int, float, str or None, default=None
        ``predict``'s answer, with ``voting="majority"``, for a row where no
        class gets more than half of the votes. ``None``: ``"rejected"`` for string
        classes, else ``-1`` (``min(classes_) - 1`` when ``-1`` is a class); a given
        label of another type than the classes' (``TypeError``) or equal to a class
        (``ValueError``) is refused at ``fit`` (``gpuforest.voting.resolve_reject_label``).
    importance_type : {{"gain", "split", "cover"}}, default="gain"
        What ``feature_importances_`` measures: impurity decrease, number of splits, or training weight at the
        splits (``gpuforest.importance``); ``get_score`` gives the totals.
""" + _AUTO_PARAMETERS_DOC + """    max_bins : int, default=256
    device : {{"auto", "cpu", "cuda"}}, default="auto"
    categorical_features : None, "from_dtype", or array-like of bool, int or str, default=None
        The categorical features, as in ``gpuforest.DecisionTreeClassifier``.

    Attributes
    ----------
    estimators_ : list of DecisionTreeClassifier
    trees_ : list of gpuforest.tree.Tree
    classes_, n_classes_, n_features_in_, feature_names_in_, is_categorical_, categories_, n_outputs_, max_features_
    feature_importances_ : ndarray of shape (n_features_in_,)
""" + _AUTO_ATTRIBUTES_DOC + """    oob_score_ : float
    oob_decision_function_ : ndarray of shape (n_samples, n_classes_) or (n_samples, max(n_classes_), n_outputs_)
        With several outputs ``oob_score_`` is the mean of the outputs' accuracies.
    estimator_weights_ : ndarray of shape (n_estimators,)
        Out-of-bag accuracy of each tree (with ``oob_score`` or ``voting="weighted"``); with several outputs, the
        mean over the outputs.
    """


_REGRESSOR_DOC = """{summary}

    Parameters
    ----------
    n_estimators, criterion, max_depth, min_samples_split, min_samples_leaf,
    min_weight_fraction_leaf, max_features, max_leaf_nodes, min_impurity_decrease,
    bootstrap, oob_score, random_state, verbose, warm_start, max_samples, ccp_alpha
        As in ``sklearn.ensemble.{name}``.
    pruning, validation_fraction
        Each tree pruned as ``DecisionTreeRegressor``'s, on validation data as in
        ``RandomForestClassifier``.
    n_jobs : int, default=None
        CPU threads of the numba kernels during ``fit``.
    importance_type : {{"gain", "split", "cover"}}, default="gain"
        What ``feature_importances_`` measures: impurity decrease, number of splits, or training weight at the
        splits (``gpuforest.importance``); ``get_score`` gives the totals.
""" + _AUTO_PARAMETERS_DOC + """    max_bins : int, default=256
    device : {{"auto", "cpu", "cuda"}}, default="auto"
    categorical_features : None, "from_dtype", or array-like of bool, int or str, default=None
        The categorical features, as in ``gpuforest.DecisionTreeClassifier``.

    Attributes
    ----------
    estimators_ : list of DecisionTreeRegressor
    trees_ : list of gpuforest.tree.Tree
    n_features_in_, feature_names_in_, is_categorical_, categories_, n_outputs_, max_features_
    feature_importances_ : ndarray of shape (n_features_in_,)
""" + _AUTO_ATTRIBUTES_DOC + """    oob_score_ : float
    oob_prediction_ : ndarray of shape (n_samples,) or (n_samples, n_outputs_)
    """


def _classifier_init(default_bootstrap, default_max_features):
    def __init__(
        self, n_estimators=100, *, criterion="gini", max_depth=None, min_samples_split=2, min_samples_leaf=1,
        min_weight_fraction_leaf=0.0, max_features=default_max_features, max_leaf_nodes=None,
        min_impurity_decrease=0.0, bootstrap=default_bootstrap, oob_score=False, n_jobs=None, random_state=None,
        verbose=0, warm_start=False, class_weight=None, ccp_alpha=0.0, max_samples=None, voting="soft",
        reject_label=None, min_split_significance=None, pruning=None, validation_fraction=0.1, confidence_factor=0.25,
        subtree_raising=True, max_bins=256, device="auto", categorical_features=None, importance_type="gain",
        n_iter_no_change=3, tol=1e-4, monotonic_cst=None,
    ):
        BaseForest.__init__(
            self, n_estimators=n_estimators, criterion=criterion, max_depth=max_depth,
            min_samples_split=min_samples_split, min_samples_leaf=min_samples_leaf,
            min_weight_fraction_leaf=min_weight_fraction_leaf, max_features=max_features,
            max_leaf_nodes=max_leaf_nodes, min_impurity_decrease=min_impurity_decrease, bootstrap=bootstrap,
            oob_score=oob_score, n_jobs=n_jobs, random_state=random_state, verbose=verbose, warm_start=warm_start,
            max_samples=max_samples, ccp_alpha=ccp_alpha, pruning=pruning, validation_fraction=validation_fraction,
            max_bins=max_bins, device=device, categorical_features=categorical_features,
            importance_type=importance_type, n_iter_no_change=n_iter_no_change, tol=tol,
            monotonic_cst=monotonic_cst,
        )
        self.class_weight = class_weight
        self.min_split_significance = min_split_significance
        self.confidence_factor = confidence_factor
        self.subtree_raising = subtree_raising
        self.voting = voting
        self.reject_label = reject_label

    return __init__


def _regressor_init(default_bootstrap, default_max_features):
    def __init__(
        self, n_estimators=100, *, criterion="squared_error", max_depth=None, min_samples_split=2,
        min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_features=default_max_features, max_leaf_nodes=None,
        min_impurity_decrease=0.0, bootstrap=default_bootstrap, oob_score=False, n_jobs=None, random_state=None,
        verbose=0, warm_start=False, ccp_alpha=0.0, max_samples=None, pruning=None, validation_fraction=0.1,
        max_bins=256, device="auto", categorical_features=None, importance_type="gain", n_iter_no_change=3, tol=1e-4,
        monotonic_cst=None,
    ):
        BaseForest.__init__(
            self, n_estimators=n_estimators, criterion=criterion, max_depth=max_depth,
            min_samples_split=min_samples_split, min_samples_leaf=min_samples_leaf,
            min_weight_fraction_leaf=min_weight_fraction_leaf, max_features=max_features,
            max_leaf_nodes=max_leaf_nodes, min_impurity_decrease=min_impurity_decrease, bootstrap=bootstrap,
            oob_score=oob_score, n_jobs=n_jobs, random_state=random_state, verbose=verbose, warm_start=warm_start,
            max_samples=max_samples, ccp_alpha=ccp_alpha, pruning=pruning, validation_fraction=validation_fraction,
            max_bins=max_bins, device=device, categorical_features=categorical_features,
            importance_type=importance_type, n_iter_no_change=n_iter_no_change, tol=tol,
            monotonic_cst=monotonic_cst,
        )

    return __init__


class RandomForestClassifier(ForestClassifier):
    __doc__ = _CLASSIFIER_DOC.format(
        summary="A random forest classifier (Breiman 2001): bootstrap samples, a random feature subset per split.",
        name="RandomForestClassifier",
    )
    __init__ = _classifier_init(default_bootstrap=True, default_max_features="sqrt")


class ExtraTreesClassifier(ForestClassifier):
    __doc__ = _CLASSIFIER_DOC.format(
        summary=(
            "Extremely randomized trees (Geurts et al. 2006): at each split every drawn feature gets one random "
            "threshold, bin ``lo + floor(u * (hi - lo))`` between the node's lowest and highest occupied bins, "
            "and the best of those wins."
        ),
        name="ExtraTreesClassifier",
    )
    __init__ = _classifier_init(default_bootstrap=False, default_max_features="sqrt")
    _random_thresholds = True


class RandomForestRegressor(ForestRegressor):
    __doc__ = _REGRESSOR_DOC.format(
        summary="A random forest regressor (Breiman 2001): bootstrap samples, a random feature subset per split.",
        name="RandomForestRegressor",
    )
    __init__ = _regressor_init(default_bootstrap=True, default_max_features=1.0)


class ExtraTreesRegressor(ForestRegressor):
    __doc__ = _REGRESSOR_DOC.format(
        summary="Extremely randomized trees for regression (Geurts et al. 2006), random thresholds per feature.",
        name="ExtraTreesRegressor",
    )
    __init__ = _regressor_init(default_bootstrap=False, default_max_features=1.0)
    _random_thresholds = True
