"""The main job of ``make demo``: train on data sets that ship with scikit-learn
(no download) and print accuracy and timings next to scikit-learn's: trees,
forests, gradient boosting (against ``HistGradientBoosting*``) and AdaBoost.

Run as ``python -m gpuforest.demo``. Every family is first fitted once on tiny
data, so numba's one-off compilation (or cache load) is reported apart; without a
kernel cache, the families compile side by side in processes of their own. With
matplotlib (the ``plot`` extra) the fit times are also drawn, by
``gpuforest.plot_benchmark``, to ``demo-results.png`` in the working directory.
"""

import contextlib
import os
import time

import numpy as np
from sklearn import ensemble as sklearn_ensemble
from sklearn import tree as sklearn_tree
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, make_classification
from sklearn.model_selection import train_test_split

from . import (
    AdaBoostClassifier,
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from .backend import get_backend, python_levels
from .compilation import compile_in_processes, kernels_cached, side_by_side_shares
from .plotting import plot_benchmark

CHART_PATH = "demo-results.png"
CHART_COLUMNS = 4
# The table's model families (``_models``).
FAMILIES = ("tree", "forest", "boosting", "adaboost")
# Each pair of fits is repeated, in turn, up to REPEATS times while it has taken under REPEAT_BUDGET_S seconds in
# all; each keeps its best time (``_compared``).
REPEAT_BUDGET_S = 2.0
REPEATS = 5


def _timed(estimator, X_train, y_train, X_test, y_test):
    start = time.perf_counter()
    estimator.fit(X_train, y_train)
    fit_seconds = time.perf_counter() - start
    return estimator.score(X_test, y_test), fit_seconds


def _compared(ours, theirs, X_train, y_train, X_test, y_test):
    """``(our_score, their_score, our_seconds, their_seconds)``: both fitted in turn, again and again up to
    ``REPEATS`` times each while their fits so far took under ``REPEAT_BUDGET_S``, each keeping its best time (the
    benchmarks' rule: a short fit's single time is much of it the machine's noise)."""
    our_score, our_seconds = _timed(ours, X_train, y_train, X_test, y_test)
    their_score, their_seconds = _timed(theirs, X_train, y_train, X_test, y_test)
    spent = our_seconds + their_seconds
    for _ in range(REPEATS - 1):
        if spent >= REPEAT_BUDGET_S:
            break
        our_again = _timed(ours, X_train, y_train, X_test, y_test)[1]
        their_again = _timed(theirs, X_train, y_train, X_test, y_test)[1]
        spent += our_again + their_again
        our_seconds, their_seconds = min(our_seconds, our_again), min(their_seconds, their_again)
    return our_score, their_score, our_seconds, their_seconds


def _datasets():
    """``(name, task, X, y, forest parameters)``: small sets get 100 full trees, the large one 20 of depth 16."""
    X, y = make_classification(n_samples=200_000, n_features=28, n_informative=14, random_state=0)
    small, large = {"n_estimators": 100}, {"n_estimators": 20, "max_depth": 16}
    yield "digits", "classification", *load_digits(return_X_y=True), small
    yield "breast_cancer", "classification", *load_breast_cancer(return_X_y=True), small
    yield "synthetic 200k x 28", "classification", X, y, large
    yield "diabetes", "regression", *load_diabetes(return_X_y=True), small


def _models(task, forest_params):
    """``(model, ours, scikit-learn's)`` for one task: a tree, a forest, 100 boosting rounds, and (classification)
    50 AdaBoost stumps."""
    boosting = {"max_iter": 100, "early_stopping": False}
    if task == "classification":
        yield "tree", DecisionTreeClassifier(random_state=0), sklearn_tree.DecisionTreeClassifier(random_state=0)
        yield (
            "forest", RandomForestClassifier(random_state=0, **forest_params),
            sklearn_ensemble.RandomForestClassifier(random_state=0, n_jobs=-1, **forest_params),
        )
        yield (
            "boosting", GradientBoostingClassifier(n_estimators=100, early_stopping=False, random_state=0),
            sklearn_ensemble.HistGradientBoostingClassifier(random_state=0, **boosting),
        )
        yield (
            "adaboost", AdaBoostClassifier(n_estimators=50, random_state=0),
            sklearn_ensemble.AdaBoostClassifier(n_estimators=50, random_state=0),
        )
    else:
        yield "tree", DecisionTreeRegressor(random_state=0), sklearn_tree.DecisionTreeRegressor(random_state=0)
        yield (
            "forest", RandomForestRegressor(random_state=0, **forest_params),
            sklearn_ensemble.RandomForestRegressor(random_state=0, n_jobs=-1, **forest_params),
        )
        yield (
            "boosting", GradientBoostingRegressor(n_estimators=100, early_stopping=False, random_state=0),
            sklearn_ensemble.HistGradientBoostingRegressor(random_state=0, **boosting),
        )


def _warm_up(families=FAMILIES):
    """Fit every family of the table (of ``families``) once on small data, from float32 values and from float64
    ones (X keeps float32 where it holds the values exactly), and predict: numba compiles (or loads) the kernels
    they use, two classes' (boosting's one score per round) and more classes' alike, so that no table fit
    compiles."""
    # All of digits: nodes large enough for the histogram path, as in the table's fits.
    X, y = load_digits(return_X_y=True)
    for task, target in (("classification", y), ("classification", y % 2), ("regression", y.astype(float))):
        for model, ours, _ in _models(task, {}):
            if model not in families:
                continue
            if "n_estimators" in ours.get_params():
                # Two members take the kernels that more would.
                ours.set_params(n_estimators=2)
            for levels in (contextlib.nullcontext(), python_levels()):
                with levels:
                    for X_values in (X, X / 7):
                        ours.fit(X_values, target).predict(X_values)


def _compile_side_by_side(n_processes=None):
    """``_warm_up`` in ``n_processes`` processes (None: one per core), each for its share of ``FAMILIES``
    (``side_by_side_shares``): the kernels of trees and forests compile beside those of boosting and AdaBoost."""
    shares = side_by_side_shares(FAMILIES, n_processes)
    for _ in compile_in_processes(_warm_up, [(share,) for share in shares]):
        pass


def write_chart(results, path=CHART_PATH):
    """Draw the fit times of ``results`` with ``plot_benchmark`` (a panel per comparison) to the PNG ``path``.

    Parameters
    ----------
    results : dict
        ``{"results": [comparison, ...]}``, each comparison a dict with ``rows`` of ``library`` and ``fit_s``
        (the ``benchmarks/results`` layout that ``plot_benchmark`` reads).
    path : str or os.PathLike, default="demo-results.png"

    Returns
    -------
    str or None
        The absolute path written, or None (after a line saying how to get it) without matplotlib.
    """
    try:
        from matplotlib.figure import Figure
    except ImportError:
        print("No chart: matplotlib is not installed; pip install 'gpuforest[plot]' to get demo-results.png.")
        return None
    n_panels = len(results["results"])
    n_rows = -(-n_panels // CHART_COLUMNS)
    figure = Figure(figsize=(4 * CHART_COLUMNS, 3.5 * n_rows), layout="constrained")  # no pyplot: no GUI backend
    axes = figure.subplots(n_rows, CHART_COLUMNS, squeeze=False).ravel()
    plot_benchmark(results, axes=list(axes[:n_panels]))
    for unused in axes[n_panels:]:
        unused.set_visible(False)
    figure.savefig(path, format="png")
    return os.path.abspath(path)


def main():
    device = get_backend("auto").name
    print(
        f"gpuforest on device={device!r} vs scikit-learn (trees fully grown unless a depth is given; each fit time "
        f"the best of up to {REPEATS}, fitted in turn while the pair took under {REPEAT_BUDGET_S:g} s)\n"
    )
    start = time.perf_counter()
    if not kernels_cached():
        _compile_side_by_side()
    # This process then loads them: the table's fits load nothing while they are timed.
    _warm_up()
    print(f"one-off JIT compilation / cache load: {time.perf_counter() - start:.1f} s\n")
    header = (
        f"{'data set':<22}{'model':<10}{'metric':<10}{'gpuforest':>11}{'sklearn':>11}{'fit s':>9}{'sk fit s':>10}"
        f"{'speed-up':>10}"
    )
    print(header)
    print("-" * len(header))
    comparisons = []
    for name, task, X, y, forest_params in _datasets():
        X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
        metric = "accuracy" if task == "classification" else "R^2"
        for model, ours, theirs in _models(task, forest_params):
            our_score, their_score, our_seconds, their_seconds = _compared(
                ours, theirs, X_train, y_train, X_test, y_test
            )
            print(
                f"{name:<22}{model:<10}{metric:<10}{our_score:>11.4f}{their_score:>11.4f}{our_seconds:>9.3g}"
                f"{their_seconds:>10.3g}{their_seconds / our_seconds:>9.2f}x"
            )
            comparisons.append({
                "task": f"{name} {model}", "n_samples": X_train.shape[0], "n_features": X_train.shape[1],
                "device": device, "rows": [
                    {"library": "gpuforest", "fit_s": our_seconds}, {"library": "scikit-learn", "fit_s": their_seconds}
                ],
            })
    chart = write_chart({"results": comparisons})
    if chart is not None:
        print(f"\nfit times drawn to {chart}")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
