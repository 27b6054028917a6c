"""Export of fitted forests and boosted models to Treelite (the optional extra ``gpuforest[treelite]``).

``to_treelite`` builds a ``treelite.Model`` through Treelite 4's model builder
(``treelite.model_builder``), which Treelite compiles and predicts with
(``treelite.gtil.predict``, TL2cgen) the same way as XGBoost's or LightGBM's
models. The outputs equal the estimator's:

- random forests and extra trees: the mean of the trees' outputs
  (``average_tree_output``); a classifier's leaves hold its class proportions
  (``voting="soft"``), the one-hot vector of their most probable class
  (``"plurality"``, ``"majority"``) or that vector times the tree's share of
  ``estimator_weights_`` times the number of trees (``"weighted"``), so the
  mean is ``predict_proba``;
- gradient boosting: ``baseline_`` plus the sum of the trees' raw scores
  (``decision_function``), then the loss's link as Treelite's postprocessor:
  ``sigmoid`` (log loss; ``sigmoid_alpha=2`` for the exponential loss, whose
  probability is ``sigmoid(2 raw)``), ``softmax`` (multinomial), ``exponential``
  (Poisson and gamma: ``exp``), else ``identity``.

A numeric split ``x <= threshold`` is Treelite's ``<=`` test, and missing
values go where ``missing_go_to_left`` says (``default_left``). A categorical
split lists the codes that go the other way from missing values, so that
anything not listed (NaN, a negative or too large value) goes where missing
values go, as in gpuforest; Treelite truncates a non-integer value to a code
where gpuforest treats it as missing. Multiway splits, C4.5's fractional trees
and surrogate splits have no Treelite counterpart and are refused.
"""

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils.validation import check_is_fitted

from .boosting import BaseGradientBoosting
from .forest import BaseForest
from .losses import BinomialLoss, CustomObjective, ExponentialLoss, GammaLoss, MultinomialLoss, PoissonLoss
from .tree import CATEGORICAL, MAX_CATEGORIES, MULTIWAY, TREE_LEAF


def to_treelite(estimator):
    """A Treelite model that predicts as a fitted forest or gradient boosting model.

    Parameters
    ----------
    estimator : fitted RandomForest*, ExtraTrees* or GradientBoosting* estimator

    Returns
    -------
    model : treelite.Model
        ``treelite.gtil.predict(model, X)`` gives, for rows ``X`` of shape
        (n_samples, n_features): a forest classifier's ``predict_proba``, a
        forest regressor's or boosting regressor's ``predict``, a boosting
        classifier's ``predict_proba`` (only the positive class's column for
        two classes); ``pred_margin=True`` gives boosting's raw scores.

    Raises
    ------
    ImportError
        Without treelite 4 (``pip install gpuforest[treelite]``).
    TypeError
        For another estimator.
    ValueError
        For a tree with multiway splits, fractional missing values or surrogate splits.
    """
    try:
        from treelite.model_builder import Metadata, ModelBuilder, PostProcessorFunc, TreeAnnotation
    except ImportError as error:
        raise ImportError("to_treelite needs treelite>=4: pip install 'gpuforest[treelite]'.") from error
    if isinstance(estimator, BaseForest):
        check_is_fitted(estimator, "trees_")
        leaf_values, task, n_classes, postprocessor, sigmoid_alpha = _forest_outputs(estimator)
        # A tree's leaf vector counts for every class (class_id -1); a scalar leaf for the single output.
        class_id = [-1 if n_classes > 1 else 0] * len(estimator.trees_)
        average, base_scores = True, [0.0] * n_classes
    elif isinstance(estimator, BaseGradientBoosting):
        check_is_fitted(estimator, "trees_")
        leaf_values, task, n_classes, postprocessor, sigmoid_alpha = _boosting_outputs(estimator)
        n_per_round = estimator.baseline_.shape[0]
        average, base_scores = False, [float(score) for score in estimator.baseline_]
        class_id = [index % n_per_round if n_per_round > 1 else 0 for index in range(len(estimator.trees_))]
    else:
        raise TypeError(
            "to_treelite takes a fitted gpuforest RandomForest*, ExtraTrees* or GradientBoosting* estimator; got "
            f"{type(estimator).__name__}."
        )
    leaf_width = 1 if leaf_values[0].ndim == 1 else leaf_values[0].shape[1]
    builder = ModelBuilder(
        threshold_type="float64", leaf_output_type="float64",
        metadata=Metadata(
            num_feature=estimator.n_features_in_, task_type=task, average_tree_output=average, num_target=1,
            num_class=[n_classes], leaf_vector_shape=(1, leaf_width),
        ),
        tree_annotation=TreeAnnotation(num_tree=len(estimator.trees_), target_id=[0] * len(class_id),
                                       class_id=class_id),
        postprocessor=PostProcessorFunc(name=postprocessor, sigmoid_alpha=sigmoid_alpha), base_scores=base_scores,
    )
    for index, (tree, values) in enumerate(zip(estimator.trees_, leaf_values)):
        _check_exportable(tree, index)
        builder.start_tree()
        for node in range(tree.node_count):
            builder.start_node(node)
            _add_node(builder, tree, node, values[node])
            builder.end_node()
        builder.end_tree()
    return builder.commit()


def _forest_outputs(estimator):
    """Each tree's node outputs (n_nodes,) or (n_nodes, n_classes), the task type, the class count, the
    postprocessor's name and its sigmoid_alpha for a forest."""
    if not is_classifier(estimator):
        return [tree.value[:, 0, 0] for tree in estimator.trees_], "kRegressor", 1, "identity", 1.0
    values = [tree.value[:, 0, :] for tree in estimator.trees_]
    if estimator.voting != "soft":
        n_classes = estimator.classes_.shape[0]
        weights = np.ones(len(values)) if estimator.voting != "weighted" else estimator.estimator_weights_
        # The mean over trees of weight * n_trees / sum(weights) times a one-hot vote is the weighted vote share.
        scale = weights * len(values) / weights.sum()
        values = [np.eye(n_classes)[np.argmax(value, axis=1)] * factor for value, factor in zip(values, scale)]
    return values, "kMultiClf", estimator.classes_.shape[0], "identity_multiclass", 1.0


def _boosting_outputs(estimator):
    """As ``_forest_outputs``, for a gradient boosting model."""
    values = [tree.value[:, 0, 0] for tree in estimator.trees_]
    loss = estimator._loss
    link = loss.link_name if isinstance(loss, CustomObjective) else None
    if isinstance(loss, MultinomialLoss) or link == "softmax":
        return values, "kMultiClf", estimator.baseline_.shape[0], "softmax", 1.0
    if isinstance(loss, (BinomialLoss, ExponentialLoss)) or link == "sigmoid":
        # The exponential loss's probability is sigmoid(2 raw) (Friedman, Hastie & Tibshirani 2000).
        alpha = 2.0 if isinstance(loss, ExponentialLoss) else 1.0
        return values, "kBinaryClf", 1, "sigmoid", alpha
    name = "exponential" if isinstance(loss, (PoissonLoss, GammaLoss)) else "identity"
    return values, "kRegressor", 1, name, 1.0


def _check_exportable(tree, index):
    if tree.missing_fractional:
        raise ValueError(f"Tree {index} sends missing values down every branch (C4.5's fractional cases), "
                         "which Treelite cannot express.")
    if np.any(tree.split_type[tree.children_left != TREE_LEAF] == MULTIWAY):
        raise ValueError(f"Tree {index} has multiway splits, which Treelite cannot express.")
    if np.any(tree.surrogate_feature >= 0):
        raise ValueError(f"Tree {index} has surrogate splits, which Treelite cannot express.")


def _add_node(builder, tree, node, value):
    """Declare node ``node`` of ``tree`` (its key: its index) to ``builder``: a leaf of ``value`` or a test."""
    left = int(tree.children_left[node])
    if left == TREE_LEAF:
        builder.leaf(float(value) if np.ndim(value) == 0 else [float(v) for v in value])
        return
    feature, missing_left = int(tree.feature[node]), bool(tree.missing_go_to_left[node])
    if tree.split_type[node] != CATEGORICAL:
        builder.numerical_test(feature, float(tree.threshold[node]), default_left=missing_left, opname="<=",
                               left_child_key=left, right_child_key=left + 1)
        return
    codes = np.arange(MAX_CATEGORIES)
    goes_left = ((tree.category_bitset[node, codes // 32] >> (codes % 32).astype(np.uint32)) & 1).astype(bool)
    # Treelite sends the unlisted values (NaN, no code) one way: list the codes going the other way from missing.
    listed = codes[~goes_left] if missing_left else codes[goes_left]
    builder.categorical_test(feature, default_left=missing_left, category_list=[int(code) for code in listed],
                             category_list_right_child=missing_left, left_child_key=left, right_child_key=left + 1)
