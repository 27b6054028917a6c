"""Real-GPU checks (marker ``gpu``): run with ``GPUFOREST_REAL_CUDA=1 pytest -m gpu tests/gpu``.

Skipped unless CuPy sees a CUDA device and the simulator is off.
"""

import numpy as np
import pytest
from numba import config, cuda

from gpuforest import (
    AdaBoostClassifier,
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from gpuforest.backend import cuda_available, get_backend

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        config.ENABLE_CUDASIM or not cuda_available(),
        reason="needs a real CUDA GPU with CuPy (set GPUFOREST_REAL_CUDA=1 to turn the simulator off)",
    ),
]

TREE_ARRAYS = (
    "children_left", "children_right", "feature", "threshold", "bin_threshold", "missing_go_to_left", "value",
    "impurity", "n_node_samples", "weighted_n_node_samples",
)


def data(n_samples, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, 12)).astype(np.float32)
    X[rng.random(X.shape) < 0.05] = np.nan
    signal = np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) * np.nan_to_num(X[:, 2])
    return X, (signal > 0).astype(int) + (signal > 1.5), signal + rng.normal(size=n_samples), rng.uniform(0.5, 2, n_samples)


@pytest.mark.parametrize("n_samples", [1_000, 200_000])
@pytest.mark.parametrize("max_features", [None, "sqrt"])
def test_gpu_trees_equal_cpu_trees(n_samples, max_features):
    X, y_class, y_real, weight = data(n_samples)
    for Estimator, y in ((DecisionTreeClassifier, y_class), (DecisionTreeRegressor, y_real)):
        gpu, cpu = (
            Estimator(device=device, max_features=max_features, random_state=0).fit(X, y, sample_weight=weight)
            for device in ("cuda", "cpu")
        )
        assert gpu.device_ == "cuda"
        for name in TREE_ARRAYS:
            np.testing.assert_array_equal(getattr(gpu.tree_, name), getattr(cpu.tree_, name), err_msg=name)
        np.testing.assert_array_equal(gpu.predict(X), cpu.predict(X))


def test_gpu_surrogates_equal_cpu_surrogates():
    """``use_surrogates``: the same surrogate splits, and rows missing the split's value routed alike."""
    X, y_class, _, weight = data(20_000)
    X[:, 3] = np.where(np.isnan(X[:, 0]), np.nan, X[:, 0] + 0.3 * np.nan_to_num(X[:, 4]))  # a surrogate of x0
    gpu, cpu = (
        DecisionTreeClassifier(device=device, max_depth=8, use_surrogates=True, random_state=0).fit(
            X, y_class, sample_weight=weight
        )
        for device in ("cuda", "cpu")
    )
    for name in TREE_ARRAYS + ("surrogate_feature", "surrogate_threshold", "surrogate_left_is_le"):
        np.testing.assert_array_equal(getattr(gpu.tree_, name), getattr(cpu.tree_, name), err_msg=name)
    X_missing = X.copy()
    X_missing[::3, 0] = np.nan
    np.testing.assert_array_equal(gpu.apply(X_missing), cpu.apply(X_missing))


def test_gpu_id3_trees_equal_cpu_id3_trees():
    # Multiway splits on up to 40 categories (many tiles of a node, codes without rows) beside numeric ones.
    rng = np.random.default_rng(0)
    n_samples = 200_000
    codes = np.stack([rng.integers(0, k, n_samples) for k in (2, 3, 5, 12, 40)], axis=1).astype(np.float32)
    X = np.column_stack([codes, rng.normal(size=(n_samples, 2)).astype(np.float32)])
    X[rng.random(X.shape) < 0.02] = np.nan
    y = (np.nan_to_num(X[:, 1]) + (np.nan_to_num(X[:, 3]) > 6) * np.nan_to_num(X[:, 4]) % 3 + (X[:, 5] > 0)) % 3
    gpu, cpu = (
        DecisionTreeClassifier(algorithm="id3", categorical_features=[0, 1, 2, 3, 4], max_depth=8, device=device)
        .fit(X, y)
        for device in ("cuda", "cpu")
    )
    assert gpu.device_ == "cuda" and (cpu.tree_.split_type == 2).any()
    for name in TREE_ARRAYS + ("split_type",):
        np.testing.assert_array_equal(getattr(gpu.tree_, name), getattr(cpu.tree_, name), err_msg=name)
    np.testing.assert_array_equal(gpu.predict(X), cpu.predict(X))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_gpu_categorical_splits_equal_cpu_ones(n_classes):
    """Binary subset splits on categorical features (sorted scans, every subset of few categories of 3
    classes, up to 60 categories) in a forest and in boosting: the same bitsets and predictions."""
    rng = np.random.default_rng(2)
    n_samples = 100_000
    codes = np.stack([rng.integers(0, k, n_samples) for k in (4, 6, 60)], axis=1).astype(np.float32)
    X = np.column_stack([codes, rng.normal(size=(n_samples, 2)).astype(np.float32)])
    X[rng.random(X.shape) < 0.03] = np.nan
    signals = (np.isin(X[:, 2], np.arange(0, 60, 3)), X[:, 1] % 3 == 1, np.nan_to_num(X[:, 3]) > 0)
    y = np.sum(signals, axis=0) % n_classes
    for Estimator, params in (
        (RandomForestClassifier, dict(n_estimators=8, max_depth=10, random_state=0)),
        (GradientBoostingClassifier, dict(n_estimators=10, max_depth=6, early_stopping=False, random_state=0)),
    ):
        gpu, cpu = (
            Estimator(categorical_features=[0, 1, 2], device=device, **params).fit(X, y) for device in ("cuda", "cpu")
        )
        assert gpu.device_ == "cuda" and any((tree.split_type == 1).any() for tree in cpu.trees_)
        for gpu_tree, cpu_tree in zip(gpu.trees_, cpu.trees_, strict=True):
            for name in TREE_ARRAYS + ("split_type", "category_bitset"):
                np.testing.assert_array_equal(getattr(gpu_tree, name), getattr(cpu_tree, name), err_msg=name)
        np.testing.assert_array_equal(gpu.predict_proba(X), cpu.predict_proba(X))


def test_gpu_c45_trees_equal_cpu_c45_trees():
    # Cases missing a split's value copied into every branch (fractional weights) at multiway and threshold splits.
    rng = np.random.default_rng(1)
    n_samples = 20_000
    codes = np.stack([rng.integers(0, k, n_samples) for k in (2, 3, 7)], axis=1).astype(np.float32)
    X = np.column_stack([codes, rng.normal(size=(n_samples, 3)).astype(np.float32)])
    y = ((np.nan_to_num(X[:, 3]) > 0) + (X[:, 2] > 3) * (X[:, 1] == 1) + (rng.random(n_samples) < 0.1)) % 3
    X[rng.random(X.shape) < 0.05] = np.nan
    gpu, cpu = (
        DecisionTreeClassifier(algorithm="c45", categorical_features=[0, 1, 2], max_depth=8, device=device).fit(X, y)
        for device in ("cuda", "cpu")
    )
    assert gpu.device_ == "cuda" and (cpu.tree_.split_type == 2).any() and (cpu.tree_.split_type == 0).any()
    for name in TREE_ARRAYS + ("split_type",):
        np.testing.assert_array_equal(getattr(gpu.tree_, name), getattr(cpu.tree_, name), err_msg=name)
    np.testing.assert_array_equal(gpu.predict_proba(X), cpu.predict_proba(X))


@pytest.mark.parametrize(
    "Forest, target", [
        (RandomForestClassifier, "class"), (ExtraTreesClassifier, "class"),
        (RandomForestRegressor, "real"), (ExtraTreesRegressor, "real"),
    ],
)
def test_gpu_forests_equal_cpu_forests(Forest, target):
    X, y_class, y_real, weight = data(50_000, seed=1)
    y = y_class if target == "class" else y_real
    params = dict(n_estimators=8, max_depth=10, max_features="sqrt", random_state=0)
    if Forest is RandomForestClassifier:
        params["oob_score"] = True
    gpu, cpu = (Forest(device=device, **params).fit(X, y, sample_weight=weight) for device in ("cuda", "cpu"))
    assert gpu.device_ == "cuda"
    for gpu_tree, cpu_tree in zip(gpu.trees_, cpu.trees_):
        for name in TREE_ARRAYS:
            np.testing.assert_array_equal(getattr(gpu_tree, name), getattr(cpu_tree, name), err_msg=name)
    np.testing.assert_array_equal(gpu.predict(X), cpu.predict(X))
    if Forest is RandomForestClassifier:
        np.testing.assert_array_equal(gpu.oob_decision_function_, cpu.oob_decision_function_)



BOOSTING_CASES = [
    ("squared_error", "real"), ("absolute_error", "real"), ("huber", "real"), ("quantile", "real"),
    ("poisson", "count"), ("gamma", "positive"), ("log_loss", "binary"), ("exponential", "binary"),
    ("log_loss", "3 classes"),
]


@pytest.mark.parametrize("loss, target", BOOSTING_CASES)
def test_gpu_boosting_equals_cpu_boosting(loss, target):
    X, y_class, y_real, weight = data(20_000, seed=2)
    y = {
        "real": y_real, "count": np.round(np.exp(y_real / 2)), "positive": np.exp(y_real / 2),
        "binary": (y_class > 0).astype(int), "3 classes": y_class,
    }[target]
    Estimator = GradientBoostingClassifier if target in ("binary", "3 classes") else GradientBoostingRegressor
    params = dict(loss=loss, n_estimators=8, subsample=0.8, colsample_bytree=0.8, l1_regularization=0.5,
                  early_stopping=False, random_state=0)
    gpu, cpu = (Estimator(device=device, **params).fit(X, y, sample_weight=weight) for device in ("cuda", "cpu"))
    assert gpu.device_ == "cuda"
    for gpu_tree, cpu_tree in zip(gpu.trees_, cpu.trees_, strict=True):
        for name in TREE_ARRAYS:
            np.testing.assert_array_equal(getattr(gpu_tree, name), getattr(cpu_tree, name), err_msg=name)
    np.testing.assert_array_equal(gpu.predict(X), cpu.predict(X))


@pytest.mark.parametrize("loss", ["multinomial", "binomial", "poisson", "gamma", "exponential"])
def test_gpu_gradients_equal_cpu_gradients(loss):
    """The kernels' exp is built from IEEE + - * / alone, so both devices round alike."""
    from gpuforest.kernels import common

    rng = np.random.default_rng(3)
    n_scores = 5 if loss == "multinomial" else 1
    raw = rng.normal(scale=5.0, size=(1_000_000, n_scores))
    y = rng.integers(0, n_scores if loss == "multinomial" else 2, raw.shape[0]).astype(np.float64)
    if loss in ("poisson", "gamma"):
        y = rng.gamma(2.0, 1.0, raw.shape[0])
    weight = rng.uniform(0.5, 2.0, raw.shape[0])
    loss_id = getattr(common, f"LOSS_{loss.upper()}")
    cpu = get_backend("cpu").loss_gradients(loss_id, 0.0, y, raw, weight)
    backend = get_backend("cuda")
    gpu = backend.loss_gradients(loss_id, 0.0, *(backend.to_device(a) for a in (y, raw, weight)))
    for cpu_array, gpu_array in zip(cpu, gpu):
        np.testing.assert_array_equal(backend.to_host(gpu_array), cpu_array)


def test_gpu_adaboost_equals_cpu_adaboost():
    X, y_class, _, weight = data(20_000, seed=4)
    gpu, cpu = (
        AdaBoostClassifier(n_estimators=20, device=device, random_state=0).fit(X, y_class, sample_weight=weight)
        for device in ("cuda", "cpu")
    )
    np.testing.assert_array_equal(gpu.estimator_weights_, cpu.estimator_weights_)
    np.testing.assert_array_equal(gpu.predict_proba(X), cpu.predict_proba(X))


def _mixed_arguments_kernel(columns, rows, scale_offset, negate, out):
    """out[i] = (+-)(columns[rows[i], 1] * scale + offset): arrays of two layouts, a tuple and a bool."""
    i = cuda.grid(1)
    if i < out.shape[0]:
        scale, offset = scale_offset
        value = columns[rows[i], 1] * scale + offset
        out[i] = -value if negate else value


def test_cached_launches_equal_numba_launches():
    """Every launch after the first of a key skips numba's typing (``launch.CachedKernel``): it must compute
    what numba's own launch computes, for F- and C-ordered arrays, a view, a tuple of int and float, a bool."""
    import cupy

    from gpuforest.kernels.cuda import jit_kernel

    cached = jit_kernel(_mixed_arguments_kernel)
    plain = cached.dispatcher  # the same compiled code, launched through numba
    rng = np.random.default_rng(5)
    columns = cupy.asarray(np.asfortranarray(rng.normal(size=(500, 3))))
    rows = cupy.asarray(rng.integers(0, 500, 1000).astype(np.int32))
    for scale, offset, negate in ((2.0, 1, False), (0.5, -3, True), (np.float64(3.0), 7, True)):
        for view in (rows, rows[::2]):
            expected, actual = (cupy.zeros(view.shape[0]) for _ in range(2))
            plain[8, 128](columns, view, (scale, offset), negate, expected)
            cached[8, 128](columns, view, (scale, offset), negate, actual)
            np.testing.assert_array_equal(actual.get(), expected.get())
    assert len(cached._specialisations) == 4  # float and np.float64 scales, contiguous and strided rows


def test_gpu_contributions_equal_cpu_contributions():
    """TreeSHAP on the device (``kernels/cuda/contributions.py``): the same values and interactions."""
    X, y_class, y_real, _ = data(5_000, seed=6)
    for Estimator, y in ((GradientBoostingClassifier, (y_class > 0).astype(int)), (RandomForestRegressor, y_real)):
        params = dict(n_estimators=6, max_depth=6, random_state=0)
        if Estimator is GradientBoostingClassifier:
            params["early_stopping"] = False
        gpu, cpu = (Estimator(device=device, **params).fit(X, y) for device in ("cuda", "cpu"))
        np.testing.assert_array_equal(gpu.predict_contributions(X[:500]), cpu.predict_contributions(X[:500]))
        np.testing.assert_array_equal(gpu.predict_interactions(X[:50]), cpu.predict_interactions(X[:50]))


def test_gpu_constrained_boosting_equals_cpu_boosting():
    """``monotonic_cst`` and ``interaction_cst``: the constrained split scans on the device."""
    X, _, y_real, weight = data(20_000, seed=7)
    params = dict(n_estimators=8, max_depth=6, monotonic_cst=[1, -1] + [0] * 10,
                  interaction_cst=[[0, 1, 2], [3, 4, 5, 6, 7, 8, 9, 10, 11]], early_stopping=False, random_state=0)
    gpu, cpu = (
        GradientBoostingRegressor(device=device, **params).fit(X, y_real, sample_weight=weight)
        for device in ("cuda", "cpu")
    )
    for gpu_tree, cpu_tree in zip(gpu.trees_, cpu.trees_, strict=True):
        for name in TREE_ARRAYS:
            np.testing.assert_array_equal(getattr(gpu_tree, name), getattr(cpu_tree, name), err_msg=name)
    tree = DecisionTreeRegressor(device="cuda", max_depth=8, monotonic_cst=[1] + [0] * 11).fit(X, y_real)
    reference = DecisionTreeRegressor(device="cpu", max_depth=8, monotonic_cst=[1] + [0] * 11).fit(X, y_real)
    np.testing.assert_array_equal(tree.tree_.value, reference.tree_.value)


def test_gpu_large_magnitude_and_sparse_inputs_bin_like_the_cpu():
    """float64 binning (Unix timestamps one second apart) and CSR input on the device."""
    import scipy.sparse

    rng = np.random.default_rng(8)
    X = np.column_stack([1.7e9 + np.arange(2_000.0), rng.normal(size=2_000)])
    y = (np.arange(2_000) % 7 < 3).astype(int)
    gpu, cpu = (DecisionTreeClassifier(device=device, random_state=0).fit(X, y) for device in ("cuda", "cpu"))
    np.testing.assert_array_equal(gpu.tree_.threshold, cpu.tree_.threshold)
    np.testing.assert_array_equal(gpu.predict(X), cpu.predict(X))
    X_sparse = scipy.sparse.random(5_000, 30, density=0.1, format="csr", random_state=0, dtype=np.float64)
    y_sparse = np.asarray(X_sparse[:, :3].sum(axis=1)).ravel() > 0.1
    gpu, cpu = (
        RandomForestClassifier(n_estimators=4, max_depth=8, device=device, random_state=0).fit(X_sparse, y_sparse)
        for device in ("cuda", "cpu")
    )
    np.testing.assert_array_equal(gpu.predict_proba(X_sparse), cpu.predict_proba(X_sparse))


def test_a_gpu_level_fits_the_budget_of_issue_13():
    """On a real device as under the simulator (tests/test_backend.py): a forest level of the device's levels
    (kernels/cuda/growth.py) is at most 8 launches, nothing sent and one copy back, for 2 trees as for 8."""
    from test_backend import forest_per_level

    two, eight = forest_per_level(2), forest_per_level(8)
    np.testing.assert_array_equal(two, eight)
    launches, host_to_device, device_to_host = two[-1]
    assert launches <= 8 and host_to_device == 0 and device_to_host <= 1
