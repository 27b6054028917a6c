"""Kernel tier, kernels/cuda/sampling.py: the counter-based draws (bootstrap counts, uniforms per row, feature masks,
threshold draws); every launcher against its CPU kernel, bit for bit (``tests/cuda_twins.py``).
"""

import numpy as np
import pytest
from numba import cuda

from gpuforest.kernels import common
from gpuforest.kernels.cpu import sampling
from gpuforest.kernels.cuda import sampling as cuda_sampling

try:
    from . import reference as ref
    from .cuda_twins import SIMULATOR, assert_all_equal, run_both
except ImportError:
    import reference as ref
    from cuda_twins import SIMULATOR, assert_all_equal, run_both

if not SIMULATOR and not cuda.is_available():
    pytest.skip("GPUFOREST_REAL_CUDA=1 but no usable CUDA device", allow_module_level=True)


@pytest.mark.parametrize("n_trees, n_samples, n_draws", [(1, 1, 3), (3, 40, 40), (2, 90, 30)])
def test_bootstrap_counts(grid, n_trees, n_samples, n_draws):
    out = np.full((n_trees, n_samples), -1, dtype=np.int32)
    cpu_args, cuda_args = run_both(sampling.bootstrap_counts, cuda_sampling.bootstrap_counts, (5, 2, n_draws, out))
    assert_all_equal(cpu_args, cuda_args)
    assert np.all(cuda_args[3].sum(axis=1) == n_draws)


@pytest.mark.parametrize("n_rows", [1, 50, 300])
def test_uniform_per_row(grid, n_rows):
    out = np.full(n_rows, -1.0)
    cpu_args, cuda_args = run_both(
        sampling.uniform_per_row, cuda_sampling.uniform_per_row, (2**31 - 1, common.PURPOSE_BOOTSTRAP, 7, n_rows, out)
    )
    assert_all_equal(cpu_args, cuda_args)
    assert np.all((cuda_args[4] >= 0) & (cuda_args[4] < 1))


@pytest.mark.parametrize(
    "seed, n_features, n_nodes", [(0, 1, 6), (1, 4, 6), (2**31 - 1, 9, 6), (3, 70, 4), (4, 300, 2)]
)
def test_feature_masks(grid, seed, n_features, n_nodes):
    """Blocks of 64 (several nodes per block when squeezed), 128 and 256 threads (two chunks of features)."""
    rng = np.random.default_rng(seed % 1000 + n_features)
    node_tree = np.array([0, 0, 1, 5, 1000, 3], dtype=np.int64)[:n_nodes]
    node_idx = np.array([0, 1, 2, 7, 3, 2**31], dtype=np.int64)[:n_nodes]
    draws = {int(rng.integers(1, n_features + 1))}
    if n_features <= 256:  # the wide case is slow under the simulator: one draw
        draws |= {1, n_features}
    for max_features in sorted(draws):
        out = np.zeros((n_nodes, n_features), dtype=bool)
        out[:, 0] = True  # must be overwritten
        cpu_args, cuda_args = run_both(
            sampling.feature_masks, cuda_sampling.feature_masks,
            (seed, node_tree, node_idx, n_features, max_features, out),
        )
        assert_all_equal(cpu_args, cuda_args)
        np.testing.assert_array_equal(cuda_args[5].sum(axis=1), max_features)


@pytest.mark.parametrize("seed, n_features, n_nodes", [(0, 1, 6), (2**31 - 1, 9, 6), (3, 70, 4)])
def test_threshold_draws(grid, seed, n_features, n_nodes):
    """One thread per (node, feature): several per thread when squeezed into one block."""
    node_tree = np.array([0, 0, 1, 5, 1000, 3], dtype=np.int64)[:n_nodes]
    node_idx = np.array([0, 1, 2, 7, 3, 2**31], dtype=np.int64)[:n_nodes]
    out = np.full((n_nodes, n_features), -1.0)
    cpu_args, cuda_args = run_both(
        sampling.threshold_draws, cuda_sampling.threshold_draws, (seed, node_tree, node_idx, n_features, out)
    )
    assert_all_equal(cpu_args, cuda_args)
    np.testing.assert_array_equal(cuda_args[4], ref.threshold_draws(seed, node_tree, node_idx, n_features))


def test_threshold_draws_without_nodes():
    cuda_sampling.threshold_draws(0, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), 5, np.zeros((0, 5)))


def test_feature_masks_without_nodes():
    out = np.zeros((0, 5), dtype=bool)
    empty = np.zeros(0, dtype=np.int64)
    cuda_sampling.feature_masks(0, empty, empty, 5, 2, out)
