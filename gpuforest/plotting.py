"""Plots of fitted estimators and benchmark results (matplotlib, the optional extra ``gpuforest[plot]``).

- ``plot_importance``: feature importances as horizontal bars, largest on top
  (the layout of XGBoost's and LightGBM's ``plot_importance``);
- ``plot_learning_curve``: gradient boosting's training and validation scores
  per round (``train_score_``, ``validation_score_``);
- ``plot_margins``: the cumulative distribution of an ensemble's margins (``gpuforest.margins``),
  with AdaBoost's bound;
- ``plot_benchmark``: the fit time of each library in a ``benchmarks/results``
  comparison, as bars;
- a tree: ``gpuforest.plot_tree`` (``gpuforest.export``).
"""

import json
import os

import numpy as np
from sklearn.utils.validation import check_is_fitted


def _axes(ax):
    """``ax``, or the current figure's Axes."""
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.gca()


def plot_importance(estimator, *, ax=None, feature_names=None, max_num_features=None, title="Feature importance"):
    """Draw a fitted estimator's ``feature_importances_`` as horizontal bars, the largest on top.

    Parameters
    ----------
    estimator : fitted estimator with ``feature_importances_``
        Any gpuforest estimator (or scikit-learn's) that has them.
    ax : matplotlib Axes, default=None
        None: the current Axes.
    feature_names : array-like of str of shape (n_features,), default=None
        None: the estimator's ``feature_names_in_``, else ``feature_0``, ``feature_1``, ...
    max_num_features : int, default=None
        Draw only the largest ones; None: every feature.
    title : str, default="Feature importance"

    Returns
    -------
    ax : matplotlib Axes
        One bar per feature, its width the importance.
    """
    if not hasattr(type(estimator), "feature_importances_") and not hasattr(estimator, "feature_importances_"):
        raise TypeError(f"{type(estimator).__name__} has no feature_importances_ to plot.")
    importances = np.asarray(estimator.feature_importances_, dtype=np.float64)  # NotFittedError before fit
    if feature_names is None:
        feature_names = getattr(estimator, "feature_names_in_", None)
    if feature_names is None:
        feature_names = [f"feature_{j}" for j in range(importances.shape[0])]
    elif len(feature_names) != importances.shape[0]:
        raise ValueError(f"feature_names must contain {importances.shape[0]} elements, got {len(feature_names)}.")
    if max_num_features is not None and (not isinstance(max_num_features, int) or max_num_features < 1):
        raise ValueError(f"max_num_features must be a positive integer or None; got {max_num_features!r}.")
    order = np.argsort(-importances, kind="stable")[:max_num_features][::-1]  # barh draws bottom-up
    ax = _axes(ax)
    ax.barh(np.arange(order.shape[0]), importances[order], align="center")
    ax.set_yticks(np.arange(order.shape[0]), [str(feature_names[j]) for j in order])
    ax.set_xlabel("importance")
    ax.set_title(title)
    return ax


def plot_learning_curve(estimator, *, ax=None, title="Learning curve"):
    """Draw gradient boosting's training and validation scores per round.

    The scores are recorded with a validation set (``early_stopping``,
    ``eval_set``): round 0 is the baseline, and higher is better (the negative
    loss, or the ``scoring``).

    Parameters
    ----------
    estimator : fitted GradientBoostingClassifier or GradientBoostingRegressor
    ax : matplotlib Axes, default=None
        None: the current Axes.
    title : str, default="Learning curve"

    Returns
    -------
    ax : matplotlib Axes
        The lines ``training`` and ``validation``, x the round, y the score;
        a dotted vertical line at ``best_iteration_``.
    """
    from .boosting import BaseGradientBoosting

    if not isinstance(estimator, BaseGradientBoosting):
        raise TypeError(
            f"plot_learning_curve takes a gpuforest gradient boosting model; got {type(estimator).__name__}."
        )
    check_is_fitted(estimator, "trees_")
    if not estimator.validation_score_:
        raise ValueError(
            "The model recorded no scores: fit it with a validation set (early_stopping=True or eval_set)."
        )
    ax = _axes(ax)
    for label, scores in (("training", estimator.train_score_), ("validation", estimator.validation_score_)):
        ax.plot(np.arange(len(scores)), scores, label=label)
    ax.axvline(estimator.best_iteration_, linestyle=":", color="grey", label="best iteration")
    ax.set_xlabel("round")
    ax.set_ylabel("score" if estimator.scoring not in ("loss", None) else "negative loss")
    ax.set_title(title)
    ax.legend()
    return ax


def plot_benchmark(results_json, *, axes=None):
    """Draw the fit time of each library in a benchmark comparison as bars.

    Parameters
    ----------
    results_json : str, os.PathLike or dict
        A ``benchmarks/results/*.json`` file written by the benchmark scripts,
        or its parsed content: ``results`` holds one comparison or a list of
        them, each with ``rows`` of ``library`` and ``fit_s``.
    axes : matplotlib Axes or sequence of Axes, default=None
        One per comparison; None: a new figure with a row of them.

    Returns
    -------
    axes : list of matplotlib Axes
        One per comparison: a bar per library, its height the fit time in
        seconds, labelled with it.
    """
    if isinstance(results_json, (str, os.PathLike)):
        with open(results_json, encoding="utf-8") as file:
            results_json = json.load(file)
    comparisons = results_json.get("results") if isinstance(results_json, dict) else None
    if isinstance(comparisons, dict):
        comparisons = [comparisons]
    if not comparisons or not all(isinstance(c, dict) and isinstance(c.get("rows"), list) for c in comparisons):
        raise ValueError("results_json holds no benchmark comparison: expected 'results' with 'rows' of "
                         "'library' and 'fit_s' (a benchmarks/results/*.json file).")
    if axes is None:
        import matplotlib.pyplot as plt

        _, axes = plt.subplots(1, len(comparisons), figsize=(4 * len(comparisons), 3.5), squeeze=False,
                               layout="constrained")
        axes = list(axes[0])
    elif not isinstance(axes, (list, tuple, np.ndarray)):
        axes = [axes]
    if len(axes) != len(comparisons):
        raise ValueError(f"axes must hold one Axes per comparison: {len(comparisons)}, got {len(axes)}.")
    for ax, comparison in zip(axes, comparisons):
        rows = [row for row in comparison["rows"] if row.get("fit_s") is not None]
        bars = ax.bar([row["library"] for row in rows], [row["fit_s"] for row in rows])
        ax.bar_label(bars, fmt="%.3g")
        ax.margins(y=0.12)  # room for the tallest bar's label
        ax.tick_params(axis="x", labelrotation=30)  # library names side by side overlap
        ax.set_ylabel("fit time (s)")
        shape = f"{comparison.get('n_samples', '?')} x {comparison.get('n_features', '?')}"
        device = f", {comparison['device']}" if comparison.get("device") else ""
        ax.set_title(f"{comparison.get('task', 'benchmark')}: {shape}{device}")
    return list(axes)


def plot_margins(estimator, X, y, *, ax=None, title="Margin distribution"):
    """Draw the cumulative distribution of an ensemble's margins on ``(X, y)`` (``gpuforest.margins``).

    The figure of Schapire, Freund, Bartlett and Lee (1998, Figure 2): for each
    margin ``theta`` in [-1, 1], the share of rows with a margin at most ``theta``.
    For AdaBoost, its ``margin_bound`` as a dashed line.

    Parameters
    ----------
    estimator : fitted ensemble with ``margins`` (AdaBoostClassifier, a forest classifier, VotingClassifier)
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    ax : matplotlib Axes, default=None
        None: the current Axes.
    title : str, default="Margin distribution"

    Returns
    -------
    ax : matplotlib Axes
        The step line ``margins`` (x the sorted margins, y the share of rows at or below each),
        and for AdaBoost the line ``bound`` over 201 values of theta.
    """
    if not hasattr(estimator, "margins"):
        raise TypeError(f"{type(estimator).__name__} has no margins to plot.")
    margins = np.sort(estimator.margins(X, y))
    ax = _axes(ax)
    shares = np.arange(1, margins.shape[0] + 1) / margins.shape[0]
    ax.step(margins, shares, where="post", label="margins")
    if hasattr(estimator, "margin_bound"):
        theta = np.linspace(-1.0, 1.0, 201)
        ax.plot(theta, np.minimum(estimator.margin_bound(theta), 1.0), linestyle="--", label="bound")
    ax.set_xlim(-1.0, 1.0)
    ax.set_xlabel("margin")
    ax.set_ylabel("cumulative share of rows")
    ax.set_title(title)
    ax.legend()
    return ax
