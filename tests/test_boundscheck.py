"""Every CPU kernel runs without an out-of-bounds access (numba bounds checking on).

Bounds checking is a compile-time option, so the kernels are compiled afresh
in a subprocess with ``NUMBA_BOUNDSCHECK=1`` and a private ``NUMBA_CACHE_DIR``
(cached code compiled without the checks must not be reused).
"""

import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import numpy as np
    import numba
    from numba import njit

    # The checks really are on: an out-of-bounds read must raise.
    assert numba.config.BOUNDSCHECK, "NUMBA_BOUNDSCHECK is not active"

    @njit
    def read(array, index):
        return array[index]

    try:
        read(np.zeros(3), 3)
    except IndexError:
        pass
    else:
        raise SystemExit("bounds checking is not active")

    from gpuforest import DecisionTreeClassifier, DecisionTreeRegressor
    from gpuforest.backend import CPUBackend
    from gpuforest.kernels.common import PURPOSE_BOOTSTRAP
    from gpuforest.kernels.cpu import sampling

    # Record which backend operations (one kernel each) the fits below reach.
    KERNELS = [
        "map_to_bins", "feature_masks", "node_totals", "build_histograms", "subtract_histograms",
        "find_best_splits_from_histograms", "find_best_splits_from_rows", "apply_splits", "node_values",
        "predict_leaves",
    ]
    called = set()

    def recording(name, method):
        def wrapper(self, *args, **kwargs):
            called.add(name)
            return method(self, *args, **kwargs)
        return wrapper

    for name in KERNELS:
        setattr(CPUBackend, name, recording(name, getattr(CPUBackend, name)))

    draws = np.empty(20)
    sampling.uniform_per_row(3, PURPOSE_BOOTSTRAP, 1, 20, draws)

    rng = np.random.default_rng(0)
    n_samples = 60
    X = rng.normal(size=(n_samples, 4)).astype(np.float32)
    X[:, 1] = rng.integers(0, 3, n_samples)  # few distinct values
    X[rng.random(X.shape) < 0.15] = np.nan
    X[:, 3] = rng.normal(size=n_samples)  # no missing value
    weight = rng.uniform(0.5, 2.0, n_samples)
    weight[:3] = 0.0
    y_class = rng.integers(0, 3, n_samples)
    y_real = np.abs(X[:, 3]) * 2 + rng.poisson(1.0, n_samples)

    settings = [
        dict(max_bins=8),
        dict(max_bins=8, max_features=2, random_state=0, criterion="entropy"),
        dict(max_bins=16, max_leaf_nodes=5, min_samples_leaf=3),
        dict(max_bins=4, min_weight_fraction_leaf=0.1, max_depth=3),
    ]
    for params in settings:
        classifier = DecisionTreeClassifier(device="cpu", **params).fit(X, y_class, sample_weight=weight)
        classifier.predict_proba(X)
        classifier.apply(X)
        classifier.decision_path(X)
    for criterion in ("squared_error", "poisson"):
        for params in settings[:3]:
            params = {**params, "criterion": criterion}
            regressor = DecisionTreeRegressor(device="cpu", **params).fit(X, y_real, sample_weight=weight)
            regressor.predict(X)
            regressor.apply(X)
            regressor.decision_path(X)

    missing = sorted(set(KERNELS) - called)
    if missing:
        raise SystemExit(f"kernels never reached: {missing}")
    print("ok")
    """
)


@pytest.mark.kernel_build
def test_kernels_pass_numba_boundscheck(tmp_path):
    env = dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(tmp_path / "numba_cache"))
    completed = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=900, cwd=tmp_path
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-5000:]
    assert completed.stdout.strip().endswith("ok")
