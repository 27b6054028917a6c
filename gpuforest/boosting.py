"""Gradient boosting (Friedman 2001) with second-order leaf values (Chen & Guestrin 2016).

Each round computes every row's gradient and hessian of the loss at the
current raw scores on the device (``losses.py``, ``kernels/*/gradients.py``),
grows one tree per raw score (one per class for the multinomial loss) on their
fixed-point (g, h) histograms with the ``newton`` criterion (gain
``G_L^2/(H_L+l2) + G_R^2/(H_R+l2) - G^2/(H+l2)``, leaf value ``-G / (H + l2)``),
and adds ``learning_rate`` times the tree's leaf values to the raw scores.

Early stopping follows scikit-learn's ``HistGradientBoosting*``: scores of
the baseline and of every round on a validation set (a split of the training
data, or ``eval_set``); training stops when none of the last
``n_iter_no_change`` scores beats the one before them by more than ``tol``.
The classes' trees of a round grow together, in one ``TreeGrower`` batch, each
on its own class's (g, h) (per-tree statistics, one fixed-point scale per
statistic for all the classes).
"""

import inspect
from dataclasses import replace
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.metrics import check_scoring
from sklearn.model_selection import train_test_split
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .backend import DEVICES, get_backend
from .categorical import CATEGORICAL_FEATURES_CONSTRAINT
from .constraints import check_interaction_cst, check_monotonic_cst
from .contributions import ContributionsMixin
from .decision_tree import MAX_DEPTH_UNLIMITED, AllowNaNMixin, encode_classes, validate_fit_data, validate_predict_data
from .fitting import BinnedTraining, fit_bin_mapper, random_seed, refit_bin_mapper, validate_params
from .grower import GrowthParams, feature_count, tree_feature_subsets
from .kernels.common import PURPOSE_SUBSAMPLE
from .model_io import ModelFileMixin
from .importance import IMPORTANCE_TYPE_CONSTRAINT, ImportanceTypeMixin
from .partial_dependence import RecursionPartialDependenceMixin
from .progress import StopTraining, eval_sets, log_line, progress_bar
from .losses import (
    AbsoluteError, BinomialLoss, CustomObjective, ExponentialLoss, GammaLoss, HuberLoss, MultinomialLoss, PoissonLoss,
    QuantileLoss, SquaredError,
)
from .statistics import newton_statistics
from .tree import PackedTreesMixin

# Early stopping switches itself on above this many rows (scikit-learn's rule).
AUTO_EARLY_STOPPING_ROWS = 10_000

_SHARED_PARAMETERS = dict(
    learning_rate=0.1, n_estimators=100, max_depth=None, max_leaf_nodes=31, grow_policy="lossguide",
    min_samples_leaf=20, min_child_weight=1e-3, l2_regularization=0.0, l1_regularization=0.0, min_split_gain=0.0,
    subsample=1.0, colsample_bytree=1.0, colsample_bynode=1.0, max_bins=256, init=None, warm_start=False,
    early_stopping="auto", scoring="loss", validation_fraction=0.1,
    n_iter_no_change=10, tol=1e-7, random_state=None, device="auto", categorical_features=None, verbose=0,
    callbacks=None, importance_type="gain", monotonic_cst=None, interaction_cst=None,
)


def _boosting_init(**own_parameters):
    """``__init__`` taking the shared parameters and the estimator's own, keyword-only.

    The signature is spelled out for scikit-learn's ``get_params``.
    """
    defaults = {**own_parameters, **_SHARED_PARAMETERS}

    def __init__(self, **parameters):
        unknown = sorted(set(parameters) - set(defaults))
        if unknown:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected keyword arguments {unknown}")
        for name, default in defaults.items():
            setattr(self, name, parameters.get(name, default))

    keyword = inspect.Parameter.KEYWORD_ONLY
    __init__.__signature__ = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(name, keyword, default=default) for name, default in defaults.items()]
    )
    return __init__


class _RawScores:
    """Stands in for the estimator in a scorer: predictions from raw scores computed during fit."""

    def __init__(self, estimator, raw):
        self._estimator, self._raw = estimator, raw
        self._estimator_type = "classifier" if isinstance(estimator, ClassifierMixin) else "regressor"
        self.classes_ = getattr(estimator, "classes_", None)

    def __sklearn_tags__(self):
        return self._estimator.__sklearn_tags__()

    def predict(self, X):
        return self._estimator._predict_from_raw(self._raw)

    def predict_proba(self, X):
        return self._estimator._loss.link(np, self._raw)

    def decision_function(self, X):
        return self._estimator._decision_from_raw(self._raw)


class BaseGradientBoosting(
    AllowNaNMixin, ModelFileMixin, PackedTreesMixin, RecursionPartialDependenceMixin, ImportanceTypeMixin,
    ContributionsMixin, BaseEstimator
):
    """Parameters, the boosting loop, early stopping and raw-score prediction shared by both estimators."""

    _parameter_constraints = {
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "max_leaf_nodes": [Interval(Integral, 2, None, closed="left"), None],
        "grow_policy": [StrOptions({"lossguide", "depthwise"})],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "min_child_weight": [Interval(Real, 0, None, closed="left")],
        "l2_regularization": [Interval(Real, 0, None, closed="left")],
        "l1_regularization": [Interval(Real, 0, None, closed="left")],
        "min_split_gain": [Interval(Real, 0, None, closed="left")],
        "subsample": [Interval(Real, 0, 1, closed="right")],
        "colsample_bytree": [Interval(Real, 0, 1, closed="right")],
        "colsample_bynode": [Interval(Real, 0, 1, closed="right")],
        "max_bins": [Interval(Integral, 3, 256, closed="both")],
        "init": [StrOptions({"zero"}), None],
        "warm_start": ["boolean"],
        "early_stopping": [StrOptions({"auto"}), "boolean"],
        "scoring": [str, callable, None],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither"), Interval(Integral, 1, None, closed="left")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "device": [StrOptions(set(DEVICES))],
        "categorical_features": CATEGORICAL_FEATURES_CONSTRAINT,
        "verbose": ["verbose"],
        "callbacks": [list, None],
        "importance_type": IMPORTANCE_TYPE_CONSTRAINT,
        "monotonic_cst": ["array-like", dict, None],
        "interaction_cst": [list, tuple, StrOptions({"pairwise", "no_interactions"}), None],
    }

    def _fit(self, X, y, sample_weight, eval_set):
        """Validated data and ``self._loss`` in hand: boost up to ``n_estimators`` rounds."""
        self._loss.check_target(y)
        callbacks = self._checked_callbacks()
        evals = eval_sets(eval_set)
        stops_early = self._early_stopping_on(X.shape[0], evals)
        X, y, sample_weight, validation = self._validation_split(X, y, sample_weight, evals, stops_early)
        if not (self.warm_start and hasattr(self, "trees_")):
            self._start(X, y, sample_weight)
        eval_names = [f"validation_{index}" for index in range(len(evals))]  # XGBoost's names in evals_result_
        for name in eval_names:
            self.evals_result_.setdefault(name, {}).setdefault(self._metric_name(), [])
        log_names = ["validation"] if len(validation) == 1 else eval_names
        backend = get_backend(self.device_)
        xp = backend.xp
        raw = xp.asarray(self._raw_predict_validated(X))
        y_device, weight_device = xp.asarray(y), xp.asarray(sample_weight)
        raw_vals = [self._raw_predict_validated(X_val) for X_val, _, _ in validation]
        training = BinnedTraining(backend, refit_bin_mapper(self, X, self._seed), X)
        n_per_round = self._loss.n_trees_per_iteration
        scorer = self._scorer()
        stats, gradient_buffers, workspace = None, None, {}  # the previous round's arrays, reused
        if validation and not self.train_score_:
            self._record_scores(scorer, X, y, sample_weight, backend.to_host(raw), validation, raw_vals)
        first_round = len(self.trees_) // n_per_round
        for callback in callbacks:
            if hasattr(callback, "before_training"):
                callback.before_training(self)
        bar = progress_bar(self.verbose, self.n_estimators - first_round, "round", type(self).__name__)
        for iteration in range(first_round, self.n_estimators):
            if stops_early and self._should_stop():
                if self.verbose:
                    log_line(self._early_stopping_message(iteration))
                break
            gradients, hessians = self._loss.gradients(backend, y_device, raw, weight_device, gradient_buffers)
            gradient_buffers = (gradients, hessians)
            # Every tree of the round sees the round's rows, in a copy of its own (the grower
            # partitions each tree's rows in place), and reads its own column's (g, h).
            sample_indices = self._subsample(backend, iteration, X.shape[0])
            tree_offsets = np.arange(n_per_round + 1, dtype=np.int64) * sample_indices.shape[0]
            stats = newton_statistics(
                gradients, hessians, self.l2_regularization, self.l1_regularization, backend=backend, previous=stats
            )
            first_tree = len(self.trees_)
            grower, trees = training.grow(
                xp.tile(sample_indices, n_per_round), stats, 1, self._tree_growth(backend, first_tree, n_per_round),
                tree_offsets=tree_offsets, first_tree=first_tree, workspace=workspace,
            )
            every_row = sample_indices.shape[0] == X.shape[0]
            for k, tree in enumerate(trees):
                if self._loss.refit_quantile is not None:
                    self._loss.refit_leaves(
                        tree.value[:, 0, 0], self._training_leaves(backend, grower, k, tree, X, every_row), y,
                        backend.to_host(raw[:, k]), sample_weight,
                    )
                tree.value *= self.learning_rate
                if every_row:  # each leaf's rows are a range of the grower's positions
                    boundaries, leaves = grower.leaf_ranges(k)
                    backend.add_range_values(raw, k, grower.rows.sample_indices, boundaries, tree.value[leaves, 0, 0])
                else:
                    backend.add_leaf_values(
                        raw, k, xp.arange(X.shape[0], dtype=np.int32), xp.asarray(tree.apply(X, backend)),
                        tree.value[:, 0, 0],
                    )
                for (X_val, _, _), raw_val in zip(validation, raw_vals):
                    raw_val[:, k] += tree.value[tree.apply(X_val, backend), 0, 0]
                self.trees_.append(tree)
            scores = {}
            if validation:
                validation_scores = self._record_scores(
                    scorer, X, y, sample_weight, backend.to_host(raw), validation, raw_vals
                )
                for name, score in zip(eval_names, validation_scores):
                    self.evals_result_[name][self._metric_name()].append(self._metric_value(score))
                self.best_iteration_ = int(np.argmax(self.validation_score_))
                scores = {"train": self.train_score_[-1], "validation": self.validation_score_[-1]}
            self.n_iter_ = iteration + 1  # a checkpoint written by a callback is a whole model
            bar.update()
            if scores and self.verbose and (self.n_iter_ % int(self.verbose) == 0 or self.n_iter_ == self.n_estimators):
                log_line(f"[{self.n_iter_}] train {self._score_text(scores['train'])}, " + ", ".join(
                    f"{name} {self._score_text(score)}" for name, score in zip(log_names, validation_scores)
                ))
            if self._callbacks_stop(callbacks, scores):
                break
        bar.close()
        self.n_iter_ = len(self.trees_) // n_per_round
        return self

    def _checked_callbacks(self):
        callbacks = [] if self.callbacks is None else self.callbacks
        for callback in callbacks:
            if not callable(callback):
                raise TypeError(f"callbacks must be callables callback(round, scores); got {callback!r}.")
        return callbacks

    def _callbacks_stop(self, callbacks, scores):
        """Call every callback after round ``n_iter_``; True when one returned True or raised ``StopTraining``."""
        for callback in callbacks:
            try:
                stop, reason = bool(callback(self.n_iter_, scores)), "returned True"
            except StopTraining as exception:
                stop, reason = True, f"raised StopTraining({exception})"
            if stop:
                if self.verbose:
                    name = getattr(callback, "__name__", type(callback).__name__)
                    log_line(f"Training stopped after round {self.n_iter_}: callback {name} {reason}.")
                return True
        return False

    def _metric_name(self):
        """The validation metric's name in the log and in ``evals_result_``: "loss", the scoring's, or "score"."""
        if self.scoring in ("loss", None):
            return "loss"
        return self.scoring if isinstance(self.scoring, str) else "score"

    def _metric_value(self, score):
        """The metric as users read it: the mean loss (minus the recorded score) or the scorer's value."""
        return -score if self.scoring in ("loss", None) else score

    def _score_text(self, score):
        """``"loss 0.25"`` or ``"<scoring> 0.9"``."""
        return f"{self._metric_name()} {self._metric_value(score):.6g}"

    @staticmethod
    def _training_leaves(backend, grower, tree_idx, tree, X, every_row):
        """The leaf of each training row (host, int64): known from growth when every row grew the tree."""
        if not every_row:
            return np.asarray(tree.apply(X, backend), dtype=np.int64)
        rows, leaves = (backend.to_host(array) for array in grower.row_leaves(tree_idx))
        training_leaves = np.empty(X.shape[0], dtype=np.int64)
        training_leaves[rows] = leaves
        return training_leaves

    def _start(self, X, y, sample_weight):
        """Fresh state: device, seed, bins, the baseline, no trees."""
        self.device_ = get_backend(self.device).name
        self._seed = random_seed(self.random_state)
        self._bin_mapper = fit_bin_mapper(self, X, self._seed)
        if self.init == "zero":
            self.baseline_ = np.zeros(self._loss.n_trees_per_iteration)
        else:
            self.baseline_ = self._loss.baseline(y, sample_weight)
        max_leaf_nodes = self.max_leaf_nodes if self.grow_policy == "lossguide" else None
        self._growth = GrowthParams(
            max_depth=MAX_DEPTH_UNLIMITED if self.max_depth is None else self.max_depth,
            min_samples_split=2 * self.min_samples_leaf,
            min_samples_leaf=self.min_samples_leaf,
            min_weight_fraction_leaf=0.0,
            min_impurity_decrease=0.0,
            max_leaf_nodes=max_leaf_nodes,
            max_features=self.n_features_in_,
            seed=self._seed,
            min_weight_leaf=self.min_child_weight,
            min_split_gain=self.min_split_gain,
            monotonic_cst=self._checked_monotonic_cst(),
            interaction_groups=check_interaction_cst(self.interaction_cst, self.n_features_in_),
        )
        self.trees_ = []
        self.train_score_, self.validation_score_ = [], []
        self._fitted_with_sample_weight = bool(np.ptp(sample_weight) > 0)
        self.evals_result_ = {}

    def _checked_monotonic_cst(self):
        """``constraints.check_monotonic_cst`` of ``monotonic_cst``: one tree per round (HistGradientBoosting's
        rule), and leaves not re-fitted after growth (absolute_error, quantile), which could undo the order."""
        if self.monotonic_cst is not None and self._loss.n_trees_per_iteration != 1:
            raise ValueError("monotonic constraints are not supported for multiclass classification.")
        if self.monotonic_cst is not None and self._loss.refit_quantile is not None:
            raise ValueError(
                f"monotonic constraints are not supported with loss={self.loss!r}, whose leaf values are re-fitted "
                "to quantiles after growth."
            )
        return check_monotonic_cst(self, self.monotonic_cst, is_categorical=self.is_categorical_)

    def _tree_growth(self, backend, first_tree, n_trees):
        """Growth rules of trees ``first_tree`` to ``first_tree + n_trees - 1``: their column subsets
        (LightGBM's ``feature_fraction`` and ``feature_fraction_bynode``), drawn with the hash RNG
        keyed by each tree's index."""
        growth, n_allowed = self._growth, self.n_features_in_
        if self.colsample_bytree < 1.0:
            subsets = tree_feature_subsets(backend, self._seed, first_tree, n_trees, n_allowed, self.colsample_bytree)
            growth = replace(growth, tree_features=subsets)
            n_allowed = feature_count(self.colsample_bytree, n_allowed)
        if self.colsample_bynode < 1.0:
            growth = replace(growth, max_features=feature_count(self.colsample_bynode, n_allowed))
        return growth

    def _subsample(self, backend, iteration, n_samples):
        """Rows of this round's trees, drawn on the device: each kept with probability ``subsample``."""
        if self.subsample == 1.0:
            return backend.xp.arange(n_samples, dtype=np.int32)
        draws = backend.uniform_per_row(self._seed, PURPOSE_SUBSAMPLE, iteration, n_samples)
        return backend.xp.flatnonzero(draws < self.subsample).astype(np.int32)

    # --- early stopping ----------------------------------------------------------------

    def _early_stopping_on(self, n_samples, evals):
        if self.early_stopping == "auto":
            return n_samples > AUTO_EARLY_STOPPING_ROWS or bool(evals)
        return self.early_stopping

    def _validation_split(self, X, y, sample_weight, evals, stops_early):
        """``(X, y, w, validation)``: ``validation`` lists the sets ``(X_val, y_val, w_val)`` scored every round,
        the last deciding early stopping: the ``eval_set`` pairs, or with early stopping and no ``eval_set``
        ``validation_fraction`` of the training rows taken out; empty without either. ``eval_set`` with
        ``early_stopping=False`` is scored (``validation_score_``, ``evals_result_``, the log, callbacks) only."""
        if not stops_early and not evals:
            return X, y, sample_weight, []
        if isinstance(self._loss, CustomObjective) and self.scoring in ("loss", None):
            raise ValueError("Early stopping with a custom loss needs a scoring other than 'loss'.")
        if not evals:
            stratify = y if isinstance(self, ClassifierMixin) else None
            X, X_val, y, y_val, sample_weight, weight_val = train_test_split(
                X, y, sample_weight, test_size=self.validation_fraction, stratify=stratify,
                random_state=random_seed(self.random_state),
            )
            return X, y, sample_weight, [(X_val, y_val, weight_val)]
        return X, y, sample_weight, [self._validated_eval_pair(*pair) for pair in evals]

    def _validated_eval_pair(self, X_val, y_val, *weight):
        """One ``eval_set`` pair as ``(X_val, y_val, w_val)``: ``X_val`` as at predict, ``y_val`` encoded."""
        X_val = validate_predict_data(self, X_val)
        y_val = self._encode_target(np.asarray(y_val))
        weight_val = np.asarray(weight[0], dtype=np.float64) if weight else np.ones(y_val.shape[0])
        if X_val.shape[0] != y_val.shape[0] or weight_val.shape != y_val.shape:
            raise ValueError("eval_set: X, y and sample_weight must have the same number of rows.")
        return X_val, y_val, weight_val

    def _scorer(self):
        return None if self.scoring in ("loss", None) else check_scoring(self, self.scoring)

    def _record_scores(self, scorer, X, y, weight, raw, validation, raw_vals):
        """Append the training score and the last validation set's (higher is better) of the current model to
        ``train_score_`` and ``validation_score_``; return every validation set's score."""
        self.train_score_.append(self._score(scorer, X, y, weight, raw))
        validation_scores = [
            self._score(scorer, X_val, y_val, weight_val, raw_val)
            for (X_val, y_val, weight_val), raw_val in zip(validation, raw_vals)
        ]
        self.validation_score_.append(validation_scores[-1])
        return validation_scores

    def _score(self, scorer, X, y, weight, raw):
        """The score (higher is better) of raw scores ``raw`` of rows ``X`` with encoded targets ``y``."""
        if scorer is None:
            return -self._loss.loss(y, raw, weight)
        return scorer(_RawScores(self, raw), X, self._decode_target(y))

    def _early_stopping_message(self, iteration):
        best = int(np.argmax(self.validation_score_))
        return (
            f"Early stopping after round {iteration}: no validation score of the last {self.n_iter_no_change} "
            f"rounds beat the one before them by more than tol={self.tol}; best round {best} "
            f"(validation {self._score_text(self.validation_score_[best])})."
        )

    def _should_stop(self):
        """scikit-learn's rule: no score among the last ``n_iter_no_change`` beats the one before them by ``tol``."""
        scores = self.validation_score_
        if len(scores) <= self.n_iter_no_change:
            return False
        reference = scores[-self.n_iter_no_change - 1] + self.tol
        return not any(score > reference for score in scores[-self.n_iter_no_change:])

    # --- prediction --------------------------------------------------------------------

    def _raw_predict_validated(self, X):
        """Raw scores of validated ``X``, shape (n_samples, n_scores): the rounds added one by one,
        in the order boosting added them, so the scores equal those of training bit for bit."""
        if not self.trees_:
            return np.tile(self.baseline_, (X.shape[0], 1))
        return get_backend(self.device_).predict_raw(X, self._packed_trees().raw_forest(), self.baseline_)

    def _staged_raw(self, X, begin=0, end=None):
        """Raw scores of validated ``X``: the baseline plus the trees of rounds ``begin`` to ``r``, for each ``r``
        from ``begin`` to ``end - 1`` (the last round by default). Rounds are added one by one, in the order
        boosting added them, so the scores equal those of training bit for bit."""
        if not self.trees_:
            return
        n_per_round = self._loss.n_trees_per_iteration
        per_round = self._per_tree_values(X).reshape(X.shape[0], -1, n_per_round)
        raw = np.tile(self.baseline_, (X.shape[0], 1))
        for iteration in range(begin, per_round.shape[1] if end is None else end):
            raw = raw + per_round[:, iteration]
            yield raw

    def _per_tree_values(self, X):
        """Each tree's leaf value for each row, shape (n_samples, n_trees)."""
        tree_offsets, split_value, node_info, category_bitset, value, _ = self._packed_trees()
        leaves = get_backend(self.device_).predict_leaves(X, tree_offsets, split_value, node_info, category_bitset)
        return value[tree_offsets[None, :] + leaves, 0]

    def _raw_predict(self, X, iteration_range=None):
        """Raw scores of ``X``, of every round or of the rounds ``begin`` to ``end - 1`` of
        ``iteration_range=(begin, end)`` (XGBoost's; the baseline always included)."""
        check_is_fitted(self, "trees_")
        X = validate_predict_data(self, X)
        begin, end = self._checked_iteration_range(iteration_range)
        if (begin, end) == (0, self.n_iter_):
            return self._raw_predict_validated(X)
        *_, raw = self._staged_raw(X, begin, end)
        return raw

    def _checked_iteration_range(self, iteration_range):
        """``(begin, end)`` with ``0 <= begin < end <= n_iter_`` (None and XGBoost's (0, 0): every round), else
        ValueError."""
        if iteration_range is None:
            return 0, self.n_iter_
        message = (
            f"iteration_range must be a pair (begin, end) of ints with 0 <= begin < end <= n_iter_={self.n_iter_} "
            f"(the trees of rounds begin to end - 1); got {iteration_range!r}."
        )
        try:
            begin, end = iteration_range
        except (TypeError, ValueError):
            raise ValueError(message) from None
        is_int = [isinstance(bound, Integral) and not isinstance(bound, bool) for bound in (begin, end)]
        if not all(is_int) or not (0 <= begin < end <= self.n_iter_ or begin == end == 0):
            raise ValueError(message)
        return int(begin), int(end) or self.n_iter_

    def _staged_raw_predict(self, X):
        check_is_fitted(self, "trees_")
        yield from self._staged_raw(validate_predict_data(self, X))

    def _validate_X_predict(self, X):
        check_is_fitted(self, "trees_")
        return validate_predict_data(self, X)

    def _additive_trees(self):
        n_per_round = self._loss.n_trees_per_iteration
        tree_values = []
        for index, tree in enumerate(self.trees_):
            values = np.zeros((tree.node_count, n_per_round))
            values[:, index % n_per_round] = tree.value[:, 0, 0]
            tree_values.append(values)
        return self.trees_, tree_values, self.baseline_

    def to_treelite(self):
        """This fitted model as a ``treelite.Model`` (``gpuforest.export_treelite.to_treelite``)."""
        from .export_treelite import to_treelite  # it imports this module

        return to_treelite(self)

    def _importance_trees(self):
        return self.trees_

    def _partial_dependence_members(self):
        """Every tree adds to its class's raw score, nodes weighted by their row counts (their weights are
        hessian sums), as scikit-learn's histogram boosting (``RecursionPartialDependenceMixin``)."""
        if getattr(self, "_fitted_with_sample_weight", False):
            raise ValueError(
                "method='recursion' weighs nodes by their training rows, which differ from the weights of a "
                "model fitted with sample_weight: use method='brute'."
            )
        n_per_round = self.baseline_.shape[0]
        members = [(tree, tree.n_node_samples, 1.0, index % n_per_round) for index, tree in enumerate(self.trees_)]
        return members, n_per_round

    @property
    def feature_importances_(self):
        """Total split gain per feature over all trees, normalised to sum to 1 (LightGBM's "gain"), or the
        normalised split counts or cover (hessian sums) of ``importance_type`` (``gpuforest.importance``)."""
        check_is_fitted(self, "trees_")
        if self.importance_type != "gain":
            return self._typed_importances()
        gains = sum(
            tree.compute_feature_importances(normalize=False) * tree.weighted_n_node_samples[0]
            for tree in self.trees_ if tree.node_count > 1
        )
        if np.isscalar(gains) or gains.sum() <= 0:
            return np.zeros(self.n_features_in_)
        return gains / gains.sum()


_COMMON_PARAMETERS_DOC = """
    learning_rate : float, default=0.1
        Shrinkage of every tree's leaf values.
    n_estimators : int, default=100
        Boosting rounds (at most, with early stopping).
    max_depth : int or None, default=None
    max_leaf_nodes : int or None, default=31
        Leaves per tree with ``grow_policy="lossguide"`` (ignored by ``"depthwise"``).
    grow_policy : {"lossguide", "depthwise"}, default="lossguide"
        Best-first growth up to ``max_leaf_nodes`` (LightGBM, HistGradientBoosting), or level by
        level down to ``max_depth`` (XGBoost's default).
    min_samples_leaf : int, default=20
    min_child_weight : float, default=1e-3
        Smallest hessian sum of a child (LightGBM's ``min_sum_hessian_in_leaf``).
    l2_regularization : float, default=0.0
        ``lambda`` of the leaf values ``-T(G) / (H + lambda)`` and of the gain.
    l1_regularization : float, default=0.0
        ``alpha`` of ``T(G) = sign(G) max(|G| - alpha, 0)`` (XGBoost's ``alpha``, LightGBM's ``lambda_l1``).
    min_split_gain : float, default=0.0
        Smallest gain ``G_L^2/(H_L+l2) + G_R^2/(H_R+l2) - G^2/(H+l2)`` of a split (LightGBM's).
    subsample : float, default=1.0
        Fraction of rows each round's trees see, drawn on the device with the hash RNG.
    colsample_bytree : float, default=1.0
        Fraction of the features each tree may split on (LightGBM's ``feature_fraction``).
    colsample_bynode : float, default=1.0
        Fraction of the tree's features each node draws (LightGBM's ``feature_fraction_bynode``).
    importance_type : {"gain", "split", "cover"}, default="gain"
        What ``feature_importances_`` measures: impurity decrease, number of splits, or training weight at the
        splits (``gpuforest.importance``); ``get_score`` gives the totals.
    max_bins : int, default=256
        Bins per feature, including one for missing values.
    init : {None, "zero"}, default=None
        Raw scores start at the loss's optimal constant (None) or at 0.
    warm_start : bool, default=False
        Keep the trees of the previous fit (same data) and add rounds up to ``n_estimators``.
    early_stopping : "auto" or bool, default="auto"
        "auto": on with more than 10,000 rows or with ``eval_set``. False with ``eval_set``: the sets are
        scored every round (``validation_score_``, ``evals_result_``, the log, callbacks) without stopping.
    scoring : str, callable or None, default="loss"
        Early-stopping score: "loss" (minus the mean loss) or a scikit-learn scorer.
    validation_fraction : float or int, default=0.1
        Validation split of the training data for early stopping without ``eval_set``.
    n_iter_no_change : int, default=10
    tol : float, default=1e-7
    random_state : int, RandomState instance or None, default=None
    device : {"auto", "cpu", "cuda"}, default="auto"
    categorical_features : None, "from_dtype", or array-like of bool, int or str, default=None
        The categorical features, as in ``gpuforest.DecisionTreeClassifier``.
    verbose : int, default=0
        0: silent. ``k >= 1``: a tqdm bar of the rounds on stderr and, with a validation set, the training
        and validation scores every ``k`` rounds and why early stopping or a callback ended the fit.
    callbacks : list of callables or None, default=None
        Each called as ``callback(round, scores)`` after every round (``gpuforest.TrainingCallback``); a true
        return value or ``gpuforest.StopTraining`` ends the fit. ``gpuforest.Checkpoint(path)`` pickles the
        estimator to resume with ``warm_start``.
"""

_COMMON_ATTRIBUTES_DOC = """
    trees_ : list of gpuforest.tree.Tree
        Round-major (the classes' trees of a round together), leaf values scaled by ``learning_rate``.
    is_categorical_ : ndarray of shape (n_features_in_,), dtype bool, or None
    categories_ : list of (ndarray or None) or None
        As in ``gpuforest.DecisionTreeClassifier``.
    baseline_ : ndarray of shape (n_trees_per_iteration,)
        Raw scores before the first round.
    n_iter_ : int
        Rounds grown.
    train_score_, validation_score_ : list of float
        With early stopping or ``eval_set``: scores of the baseline and of every round (higher is better), on the
        training rows and on the validation set (``eval_set``'s last pair, which decides early stopping).
    evals_result_ : dict
        XGBoost's record of ``eval_set``: ``{"validation_i": {metric: [value after each round]}}`` for pair ``i``,
        the metric being "loss" (the mean loss) or the ``scoring``'s name; empty without ``eval_set``.
    best_iteration_ : int
        With early stopping or ``eval_set``: the rounds of the best validation score (0 is the baseline; XGBoost's
        counts from 0 at the first round), so ``predict(X, iteration_range=(0, best_iteration_))`` is the best
        model's when ``best_iteration_ >= 1``.
    feature_importances_ : ndarray of shape (n_features_in_,)
        Total split gain per feature, normalised.
"""


class GradientBoostingRegressor(RegressorMixin, BaseGradientBoosting):
    __doc__ = """Gradient boosting for regression.

    Parameters
    ----------
    loss : {"squared_error", "absolute_error", "huber", "quantile", "poisson", "gamma"} or callable, \
default="squared_error"
        A callable ``loss(y_true, raw) -> (gradient, hessian)`` is a custom objective (raw scores start at 0).
    alpha : float, default=0.9
        The quantile of ``loss="quantile"``; ``huber``'s delta is this quantile of the absolute residuals.
""" + _COMMON_PARAMETERS_DOC + """
    Attributes
    ----------
""" + _COMMON_ATTRIBUTES_DOC

    _parameter_constraints = {
        **BaseGradientBoosting._parameter_constraints,
        "loss": [StrOptions({"squared_error", "absolute_error", "huber", "quantile", "poisson", "gamma"}), callable],
        "alpha": [Interval(Real, 0, 1, closed="neither")],
    }

    __init__ = _boosting_init(loss="squared_error", alpha=0.9)

    def fit(self, X, y, sample_weight=None, eval_set=None):
        """Boost on ``X`` (n_samples, n_features) and ``y``; ``eval_set=(X_val, y_val[, w_val])`` or XGBoost's list
        of such pairs, each scored every round, the last deciding early stopping."""
        validate_params(self)
        X, y, sample_weight = validate_fit_data(self, X, y, sample_weight)
        self._loss = self._make_loss()
        self._fit(X, self._encode_target(y), sample_weight, eval_set)
        self._pack_trees()
        return self

    def _make_loss(self):
        if callable(self.loss):
            return CustomObjective(self.loss, 1, "identity")
        return {
            "squared_error": SquaredError, "absolute_error": AbsoluteError, "poisson": PoissonLoss,
            "gamma": GammaLoss, "huber": lambda: HuberLoss(self.alpha), "quantile": lambda: QuantileLoss(self.alpha),
        }[self.loss]()

    @staticmethod
    def _encode_target(y):
        return np.asarray(y, dtype=np.float64)

    @staticmethod
    def _decode_target(y):
        return y

    def _predict_from_raw(self, raw):
        return np.asarray(self._loss.link(np, raw))

    def predict(self, X, iteration_range=None):
        """Predictions, shape (n_samples,); ``iteration_range=(begin, end)``: of the trees of rounds ``begin`` to
        ``end - 1`` only (XGBoost's; ``(0, best_iteration_)`` is the best model), every round when None or (0, 0)."""
        return self._predict_from_raw(self._raw_predict(X, iteration_range))

    def staged_predict(self, X):
        """Predictions after each round."""
        for raw in self._staged_raw_predict(X):
            yield self._predict_from_raw(raw)


class GradientBoostingClassifier(ClassifierMixin, BaseGradientBoosting):
    __doc__ = """Gradient boosting for classification.

    Parameters
    ----------
    loss : {"log_loss", "exponential"} or callable, default="log_loss"
        ``log_loss``: binary, or multinomial with one tree per class per round. ``exponential``
        (binary only): AdaBoost's loss. A callable ``loss(y_true, raw) -> (gradient, hessian)``
        is a custom objective on the encoded classes (raw of shape (n_samples,) for two classes,
        else (n_samples, n_classes); probabilities by sigmoid / softmax).
""" + _COMMON_PARAMETERS_DOC + """
    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
""" + _COMMON_ATTRIBUTES_DOC

    _parameter_constraints = {
        **BaseGradientBoosting._parameter_constraints,
        "loss": [StrOptions({"log_loss", "exponential"}), callable],
    }

    __init__ = _boosting_init(loss="log_loss")

    def fit(self, X, y, sample_weight=None, eval_set=None):
        """Boost on ``X`` (n_samples, n_features) and labels ``y``; ``eval_set`` as the regressor's."""
        validate_params(self)
        X, y, sample_weight = validate_fit_data(self, X, y, sample_weight)
        self.classes_, _ = encode_classes(y)
        self.n_classes_ = self.classes_.shape[0]
        if self.n_classes_ == 1:
            raise ValueError("The number of classes has to be greater than one; got 1 class.")
        self._loss = self._make_loss()
        self._fit(X, self._encode_target(y), sample_weight, eval_set)
        self._pack_trees()
        return self

    def _make_loss(self):
        binary = self.n_classes_ == 2
        if callable(self.loss):
            return CustomObjective(self.loss, 1 if binary else self.n_classes_, "sigmoid" if binary else "softmax")
        if self.loss == "exponential":
            if not binary:
                raise ValueError(f"loss='exponential' needs two classes; got {self.n_classes_}.")
            return ExponentialLoss()
        return BinomialLoss() if binary else MultinomialLoss(self.n_classes_)

    def _encode_target(self, y):
        """Class index of each label as float64; unknown labels raise ValueError."""
        index = np.searchsorted(self.classes_, y)
        if np.any(index >= self.n_classes_) or np.any(self.classes_[np.minimum(index, self.n_classes_ - 1)] != y):
            raise ValueError("y holds labels that were not seen in fit.")
        return index.astype(np.float64)

    def _decode_target(self, y):
        return self.classes_[y.astype(np.int64)]

    def _decision_from_raw(self, raw):
        return raw[:, 0] if raw.shape[1] == 1 else raw

    def _predict_from_raw(self, raw):
        return self.classes_[np.argmax(self._loss.link(np, raw), axis=1)]

    def decision_function(self, X, iteration_range=None):
        """Raw scores: shape (n_samples,) for two classes, else (n_samples, n_classes); ``iteration_range`` as
        the regressor's ``predict``."""
        return self._decision_from_raw(self._raw_predict(X, iteration_range))

    def predict_proba(self, X, iteration_range=None):
        """Class probabilities, shape (n_samples, n_classes); ``iteration_range`` as the regressor's ``predict``."""
        raw = self._raw_predict(X, iteration_range)  # first: it raises NotFittedError before fit
        return np.asarray(self._loss.link(np, raw))

    def predict(self, X, iteration_range=None):
        """Class labels, shape (n_samples,); ``iteration_range`` as the regressor's ``predict``."""
        return self._predict_from_raw(self._raw_predict(X, iteration_range))

    def staged_decision_function(self, X):
        for raw in self._staged_raw_predict(X):
            yield self._decision_from_raw(raw)

    def staged_predict_proba(self, X):
        for raw in self._staged_raw_predict(X):
            yield np.asarray(self._loss.link(np, raw))

    def staged_predict(self, X):
        for raw in self._staged_raw_predict(X):
            yield self._predict_from_raw(raw)
