"""Every CPU kernel runs without an out-of-bounds access (numba bounds checking on).

Bounds checking is a compile-time option, so the kernels are compiled afresh
in a subprocess with ``NUMBA_BOUNDSCHECK=1`` and a private ``NUMBA_CACHE_DIR``
(cached code compiled without the checks must not be reused). Two scripts: the
decision trees' kernels (their levels in the compiled loop of ``kernels/cpu/growth.py`` and in the
grower's own), and the ensembles' own (bootstrap and threshold draws,
boosting's gradients, raw-score updates and raw predictions).
"""

import os
import subprocess
import sys
import textwrap

import pytest

PREAMBLE = textwrap.dedent(
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

    from gpuforest.backend import CPUBackend

    called = set()

    def recording(name, method):
        def wrapper(self, *args, **kwargs):
            called.add(name)
            return method(self, *args, **kwargs)
        return wrapper

    def record(kernels):
        # Record which of these backend operations (one kernel each) the fits below reach.
        for name in kernels:
            setattr(CPUBackend, name, recording(name, getattr(CPUBackend, name)))

    def check_reached(kernels):
        missing = sorted(set(kernels) - called)
        if missing:
            raise SystemExit(f"kernels never reached: {missing}")
        print("ok")

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
    """
)

TREES = textwrap.dedent(
    """
    from gpuforest import DecisionTreeClassifier, DecisionTreeRegressor
    from gpuforest.kernels.common import PURPOSE_BOOTSTRAP
    from gpuforest.kernels.cpu import sampling

    KERNELS = [
        "map_to_bins", "feature_masks", "node_totals", "build_histograms", "subtract_histograms",
        "find_best_splits", "apply_splits", "node_values",
        "predict_leaves", "grow_levels", "grow_best_first",
    ]
    record(KERNELS)

    draws = np.empty(20)
    sampling.uniform_per_row(3, PURPOSE_BOOTSTRAP, 1, 20, draws)

    settings = [
        dict(max_bins=8),
        dict(max_bins=8, max_features=2, random_state=0, criterion="entropy"),
        dict(max_bins=16, max_leaf_nodes=5, min_samples_leaf=3),
        dict(max_bins=4, min_weight_fraction_leaf=0.1, max_depth=3),
    ]
    # Depth-wise levels and best-first steps in the compiled loops (kernels/cpu/growth.py), then in the grower's own.
    for CPUBackend.grows_levels in (True, False):
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
    check_reached(KERNELS)
    """
)

ENSEMBLES = textwrap.dedent(
    """
    import gpuforest.tree
    from gpuforest import (
        ExtraTreesRegressor, GradientBoostingClassifier, GradientBoostingRegressor, RandomForestClassifier,
    )

    KERNELS = ["bootstrap_counts", "threshold_draws", "loss_gradients", "add_leaf_values", "add_range_values"]
    record(KERNELS)
    # predict_raw runs the kernel its forest layout names: record that name.
    predict_raw = CPUBackend.predict_raw

    def recording_predict_raw(self, X, forest, baseline):
        called.add(forest.raw_kernel)
        return predict_raw(self, X, forest, baseline)

    CPUBackend.predict_raw = recording_predict_raw

    for CPUBackend.grows_levels in (True, False):
        forest = RandomForestClassifier(n_estimators=3, max_depth=4, max_bins=8, oob_score=True, device="cpu")
        forest.fit(X, y_class, sample_weight=weight).predict(X)
        ExtraTreesRegressor(n_estimators=2, max_bins=8, bootstrap=True, device="cpu").fit(X, y_real).predict(X)
    boosting = dict(n_estimators=3, max_bins=8, min_samples_leaf=2, random_state=0, device="cpu")
    for CPUBackend.grows_levels in (True, False):
        for loss in ("squared_error", "absolute_error", "poisson"):
            regressor = GradientBoostingRegressor(loss=loss, subsample=0.7, **boosting)
            regressor.fit(X, y_real, sample_weight=weight).predict(X)
        GradientBoostingClassifier(**boosting).fit(X, y_class, sample_weight=weight).predict(X)
    # Trees that are not complete binary trees (e.g. deeper than COMPLETE_MAX_DEPTH) predict from their nodes.
    gpuforest.tree.pack_complete_forest = lambda trees: None
    GradientBoostingClassifier(**boosting).fit(X, y_class == 0).predict(X)
    check_reached(KERNELS + ["predict_raw", "predict_raw_complete"])
    """
)


@pytest.mark.kernel_build
@pytest.mark.parametrize("script", [TREES, ENSEMBLES], ids=["trees", "ensembles"])
def test_kernels_pass_numba_boundscheck(tmp_path, script):
    env = dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(tmp_path / "numba_cache"))
    completed = subprocess.run(
        [sys.executable, "-c", PREAMBLE + script], env=env, capture_output=True, text=True, timeout=900, cwd=tmp_path
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-5000:]
    assert completed.stdout.strip().endswith("ok")
