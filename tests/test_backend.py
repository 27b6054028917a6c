"""gpuforest/backend.py: estimators on the CUDA backend (numba's CUDA simulator here) equal those on the CPU
backend, bit for bit; the backend's packed copies, and its counts of launches and copies per level;
``get_backend``'s choice, and its error for ``device='cuda'`` without a GPU (in a fresh process).

The simulator runs every CUDA thread in Python, so the data are tiny; the real
device runs the same comparison in tests/gpu/.
"""

import functools
import os
import subprocess
import sys

import numpy as np
import pytest

from gpuforest import (
    DecisionTreeClassifier, DecisionTreeRegressor, GradientBoostingClassifier, RandomForestClassifier,
)
from gpuforest.backend import get_backend

TREE_ARRAYS = (
    "children_left", "children_right", "feature", "threshold", "bin_threshold", "missing_go_to_left", "value",
    "impurity", "n_node_samples", "weighted_n_node_samples",
)


def tiny_data(seed, n_samples=48, n_features=3):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n_samples, n_features)), 1)
    X[rng.random(X.shape) < 0.1] = np.nan
    y_class = (np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1]) > 0).astype(int) + (X[:, 2] > 1)
    y_real = np.nan_to_num(X[:, 0]) * 2 + rng.normal(size=n_samples) ** 2
    weight = rng.uniform(0.5, 2.0, n_samples)
    return X, y_class, y_real, weight


def assert_identical(cuda_model, cpu_model, X):
    assert cuda_model.device_ == "cuda" and cpu_model.device_ == "cpu"
    for name in TREE_ARRAYS:
        np.testing.assert_array_equal(getattr(cuda_model.tree_, name), getattr(cpu_model.tree_, name), err_msg=name)
    np.testing.assert_array_equal(cuda_model.predict(X), cpu_model.predict(X))
    np.testing.assert_array_equal(cuda_model.apply(X), cpu_model.apply(X))


# The simulator is slow: every criterion once, every growth setting twice.
CASES = [
    {"max_bins": 16},
    {"max_bins": 16, "max_features": 2, "random_state": 3},
    {"max_bins": 8, "max_leaf_nodes": 6, "min_samples_leaf": 2},
    {"max_bins": 256, "max_depth": 3},
]


@pytest.mark.parametrize(
    "criterion, params", list(zip(["gini", "entropy", "misclassification", "gini"], CASES))
)
def test_classifier_on_cuda_equals_cpu(criterion, params):
    X, y, _, weight = tiny_data(0)
    models = [
        DecisionTreeClassifier(criterion=criterion, device=device, **params).fit(X, y, sample_weight=weight)
        for device in ("cuda", "cpu")
    ]
    assert_identical(*models, X)
    assert models[0].tree_.node_count > 3


@pytest.mark.parametrize(
    "criterion, params", list(zip(["squared_error", "poisson", "squared_error", "poisson"], CASES))
)
def test_regressor_on_cuda_equals_cpu(criterion, params):
    X, _, y, weight = tiny_data(1)
    models = [
        DecisionTreeRegressor(criterion=criterion, device=device, **params).fit(X, np.abs(y), sample_weight=weight)
        for device in ("cuda", "cpu")
    ]
    assert_identical(*models, X)
    assert models[0].tree_.node_count > 3


def test_random_thresholds_on_cuda_equal_cpu():
    """Extra-trees thresholds, drawn over the bin mapper's values: the same trees on both backends."""
    X, y, _, weight = tiny_data(2)
    models = [
        DecisionTreeClassifier(splitter="random", max_bins=16, max_depth=3, random_state=1, device=device).fit(
            X, y, sample_weight=weight
        )
        for device in ("cuda", "cpu")
    ]
    assert_identical(*models, X)
    assert models[0].tree_.node_count > 3


def test_simulator_backend_is_chosen_only_when_asked():
    assert get_backend("cuda").name == "cuda"
    assert get_backend("auto").name == "cpu"  # the simulator is for tests, never picked automatically


CUDA_WITHOUT_GPU = """
import importlib.util, sys
import numpy as np
from gpuforest import DecisionTreeClassifier, DecisionTreeRegressor
if importlib.util.find_spec("cupy") is not None:
    import cupy
    try:
        if cupy.cuda.runtime.getDeviceCount() > 0:
            sys.exit(3)
    except cupy.cuda.runtime.CUDARuntimeError:
        pass
X, y = np.random.RandomState(0).uniform(size=(20, 2)), np.arange(20) % 2
for Estimator in (DecisionTreeClassifier, DecisionTreeRegressor):
    try:
        Estimator(device="cuda").fit(X, y)
    except ValueError as error:
        assert "device='cuda' needs CuPy and a usable CUDA GPU" in str(error) and "device='cpu'" in str(error)
    else:
        sys.exit("device='cuda' fitted without a GPU")
    assert Estimator(device="auto").fit(X, y).device_ == "cpu"
"""


@pytest.mark.quality
def test_cuda_device_without_gpu():
    """Without the simulator (which tests set) and without a GPU, device='cuda' is a clear error
    and device='auto' falls back to the CPU."""
    env = {key: value for key, value in os.environ.items() if key != "NUMBA_ENABLE_CUDASIM"}
    result = subprocess.run([sys.executable, "-c", CUDA_WITHOUT_GPU], env=env, capture_output=True, text=True)
    if result.returncode == 3:
        pytest.skip("a CUDA GPU is present")
    assert result.returncode == 0, result.stderr


def test_to_device_many_packs_host_arrays_in_one_buffer():
    """Host arrays of several dtypes and shapes (one empty, a scalar) come out equal, as views of one
    8-byte-aligned buffer; None stays None."""
    backend = get_backend("cuda")
    rng = np.random.default_rng(0)
    host = [
        rng.integers(0, 9, 5), rng.random((3, 4)) < 0.5, np.zeros((0, 4)), rng.integers(0, 9, 3).astype(np.int32),
        np.asfortranarray(rng.normal(size=(2, 3))), np.float64(0.25),
    ]
    *packed, none = backend.to_device_many(*host, None)
    assert none is None
    base = packed[0].base
    for original, array in zip(host, packed):
        original = np.asarray(original)
        assert array.dtype == original.dtype and array.shape == original.shape
        np.testing.assert_array_equal(backend.to_host(array), original)
        assert array.base is base and array.ctypes.data % 8 == 0


# --- counting what the backend does to the device ---------------------------------------------


def test_counting_counts_launches_copies_and_host_reads_of_device_values():
    backend = get_backend("cuda")
    host = np.arange(6)
    with backend.counting() as counts:
        device = backend.to_device(host)  # a copy to the device
        assert backend.to_device(device) is device  # already there: no copy
        backend.to_device_many(host, host + 1, device, None)  # two host arrays: one packed copy
        np.testing.assert_array_equal(backend.to_host(device), host)  # a copy to the host
        assert bool((device == 1).any())  # a device value read by the host: a synchronising copy
        draws = backend.uniform_per_row(0, 0, 0, 5)  # one kernel
    assert (counts.launches, counts.host_to_device, counts.device_to_host) == (1, 2, 2)
    backend.to_host(draws)
    assert counts.device_to_host == 2  # nothing counted outside the block


# The per-level counts below fit under the simulator for about 150 s of CPU: the quality tier's (CI runs it).


def fit_counts(model, X, y):
    """What ``model.fit`` did to the (simulated) device: ``(launches, host_to_device, device_to_host)``."""
    with get_backend("cuda").counting() as counts:
        model.fit(X, y)
    return counts.launches, counts.host_to_device, counts.device_to_host


def counting_data():
    """120 rows of a noisy target: every node to depth 3 splits, and on histograms (8 bins)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    return X, (X[:, 0] + X[:, 1] + rng.normal(size=120) > 0).astype(int)


def per_level(model_at_depth, depths=(1, 2, 3)):
    """The counts each level adds, for the models ``model_at_depth(depth)`` of ``depths``."""
    X, y = counting_data()
    counts = np.array([fit_counts(model_at_depth(depth), X, y) for depth in depths])
    return np.diff(counts, axis=0)


@functools.cache
def forest_per_level(n_trees):
    """The counts of a forest's third level (the first one that derives histograms by subtraction)."""
    return per_level(lambda depth: RandomForestClassifier(
        n_estimators=n_trees, max_depth=depth, max_bins=8, device="cuda", random_state=0
    ), depths=(2, 3))


@pytest.mark.quality
def test_a_forest_level_costs_the_same_for_2_trees_as_for_8():
    """Every tree of a batch shares each launch and copy: a level costs the same whatever the trees."""
    two, eight = forest_per_level(2), forest_per_level(8)
    np.testing.assert_array_equal(two, eight)


@functools.cache
def boosting_per_level(n_rounds):
    """The counts each level of ``n_rounds`` rounds of depth-wise boosting adds, at depths 2 and 3."""
    return per_level(lambda depth: GradientBoostingClassifier(
        n_estimators=n_rounds, max_depth=depth, grow_policy="depthwise", max_bins=8, early_stopping=False,
        device="cuda", random_state=0,
    ))


@pytest.mark.quality
def test_a_boosting_level_costs_the_same_at_every_depth_and_round():
    one_round, two_rounds = boosting_per_level(1), boosting_per_level(2)
    assert (one_round == one_round[0]).all()
    np.testing.assert_array_equal(two_rounds, 2 * one_round)


@pytest.mark.quality
@pytest.mark.parametrize("counts", [lambda: forest_per_level(2)[-1], lambda: boosting_per_level(1)[-1]],
                         ids=["forest", "boosting"])
def test_a_level_fits_the_budget_of_issue_13(counts):
    """At most 8 launches, no copy to the device and at most one copy back per level."""
    launches, host_to_device, device_to_host = counts()
    assert launches <= 8 and host_to_device == 0 and device_to_host <= 1
