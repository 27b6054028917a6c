"""What the benchmark scripts share: the synthetic data and the timer.

Imported by the scripts of this folder, which run as ``python benchmarks/<script>.py``
(so this folder is on ``sys.path``).
"""

import time

import numpy as np
from sklearn.datasets import make_classification, make_regression


def best_time(function, repeats=1):
    """Best wall time of ``repeats`` calls, and the last result."""
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def synthetic_data(task, n_samples, n_features, seed):
    """Train and test (``n_samples // 10`` rows) sets with float32 features, half of them informative."""
    n_total = n_samples + n_samples // 10
    if task == "classification":
        X, y = make_classification(
            n_samples=n_total, n_features=n_features, n_informative=n_features // 2, random_state=seed
        )
    else:
        X, y = make_regression(
            n_samples=n_total, n_features=n_features, n_informative=n_features // 2, noise=10.0, random_state=seed
        )
    X = X.astype(np.float32)
    return X[:n_samples], y[:n_samples], X[n_samples:], y[n_samples:]
