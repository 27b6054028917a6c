"""The main job of ``make demo``: train on data sets that ship with scikit-learn
(no download) and print accuracy and timings next to scikit-learn's.

Run as ``python -m gpuforest.demo``. The first fit includes numba's one-off
compilation, reported apart.
"""

import time

import numpy as np
from sklearn import tree as sklearn_tree
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, make_classification
from sklearn.model_selection import train_test_split

from . import DecisionTreeClassifier, DecisionTreeRegressor
from .backend import get_backend


def _timed(estimator, X_train, y_train, X_test, y_test):
    start = time.perf_counter()
    estimator.fit(X_train, y_train)
    fit_seconds = time.perf_counter() - start
    return estimator.score(X_test, y_test), fit_seconds


def _datasets():
    X, y = make_classification(n_samples=200_000, n_features=28, n_informative=14, random_state=0)
    yield "digits", "classification", *load_digits(return_X_y=True)
    yield "breast_cancer", "classification", *load_breast_cancer(return_X_y=True)
    yield "synthetic 200k x 28", "classification", X, y
    yield "diabetes", "regression", *load_diabetes(return_X_y=True)


def main():
    device = get_backend("auto").name
    print(f"gpuforest decision trees on device={device!r} vs scikit-learn (fully grown trees)\n")
    warm_X, warm_y = load_digits(return_X_y=True)
    start = time.perf_counter()
    DecisionTreeClassifier().fit(warm_X, warm_y)
    DecisionTreeRegressor().fit(warm_X, warm_y.astype(float))
    print(f"one-off JIT compilation / cache load: {time.perf_counter() - start:.1f} s\n")
    header = f"{'data set':<22}{'metric':<10}{'gpuforest':>11}{'sklearn':>11}{'fit s':>9}{'sk fit s':>10}{'speed-up':>10}"
    print(header)
    print("-" * len(header))
    for name, task, X, y in _datasets():
        X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
        if task == "classification":
            ours, theirs, metric = DecisionTreeClassifier(random_state=0), sklearn_tree.DecisionTreeClassifier(random_state=0), "accuracy"
        else:
            ours, theirs, metric = DecisionTreeRegressor(random_state=0), sklearn_tree.DecisionTreeRegressor(random_state=0), "R^2"
        our_score, our_seconds = _timed(ours, X_train, y_train, X_test, y_test)
        their_score, their_seconds = _timed(theirs, X_train, y_train, X_test, y_test)
        print(
            f"{name:<22}{metric:<10}{our_score:>11.4f}{their_score:>11.4f}{our_seconds:>9.3f}"
            f"{their_seconds:>10.3f}{their_seconds / our_seconds:>9.1f}x"
        )
    print("\nForests and boosting join this table as they land.")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
