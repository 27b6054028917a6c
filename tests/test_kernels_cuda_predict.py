"""Kernel tier, kernels/cuda/predict.py: leaves and raw scores of every split kind, the complete-tree layout; every
launcher against its CPU kernel, bit for bit (``tests/cuda_twins.py``).
"""

import numpy as np
import pytest
from numba import cuda

from gpuforest.kernels.cpu import predict
from gpuforest.kernels.cuda import predict as cuda_predict
from gpuforest.tree import pack_complete_forest, pack_forest, pack_node_info

try:
    from .cuda_twins import SIMULATOR, assert_all_equal, run_both
    from .kernel_problems import NO_BITSETS, as_tree, mixed_forest, random_tree
except ImportError:
    from cuda_twins import SIMULATOR, assert_all_equal, run_both
    from kernel_problems import NO_BITSETS, as_tree, mixed_forest, random_tree

if not SIMULATOR and not cuda.is_available():
    pytest.skip("GPUFOREST_REAL_CUDA=1 but no usable CUDA device", allow_module_level=True)


@pytest.mark.parametrize("seed", range(2))
def test_predict_leaves(grid, seed):
    rng = np.random.default_rng(500 + seed)
    n_samples = 45
    X = rng.normal(size=(n_samples, 4)).astype(np.float32)
    X[:, 2] = rng.integers(0, 4, n_samples)
    X[rng.random(X.shape) < 0.15] = np.nan
    trees = [random_tree(rng, X, max_depth) for max_depth in (0, 1, 4, 6)]
    tree_offsets = np.cumsum([0] + [t[0].size for t in trees[:-1]]).astype(np.int64)
    feature, threshold, missing_left, left, right = (np.concatenate(column) for column in zip(*trees))
    out = np.full((n_samples, len(trees)), -5, dtype=np.int32)
    args = (X, tree_offsets, threshold, pack_node_info(feature, missing_left, left), NO_BITSETS, out)
    if grid == "one_block":
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(cuda_predict, "BLOCK_SIZE", 32)  # 180 (row, tree) pairs on 32 threads
            cpu_args, cuda_args = run_both(predict.predict_leaves, cuda_predict.predict_leaves, args)
    else:
        cpu_args, cuda_args = run_both(predict.predict_leaves, cuda_predict.predict_leaves, args)
    assert_all_equal(cpu_args, cuda_args)
    assert np.unique(cuda_args[5][:, 3]).size > 2  # not vacuous
    # Boosting's raw scores: the trees' leaf values summed in tree order into two columns.
    raw = np.tile([0.5, -1.0], (n_samples, 1))
    raw_args = (X, tree_offsets, threshold, args[3], NO_BITSETS, rng.normal(size=threshold.size), raw)
    cpu_args, cuda_args = run_both(predict.predict_raw, cuda_predict.predict_raw, raw_args)
    assert_all_equal(cpu_args, cuda_args)


def test_predict_every_split_kind(grid):
    """Trees of numeric, categorical and multiway splits; rows with codes, NaN and values that are no code."""
    rng = np.random.default_rng(545)
    X, trees = mixed_forest(rng, 40)
    tree_offsets, split_value, node_info, category_bitset, value, _ = pack_forest(trees)
    out = np.full((X.shape[0], len(trees)), -5, dtype=np.int32)
    args = (X, tree_offsets, split_value, node_info, category_bitset, out)
    cpu_args, cuda_args = run_both(predict.predict_leaves, cuda_predict.predict_leaves, args)
    assert_all_equal(cpu_args, cuda_args)
    assert np.unique(cuda_args[5][:, 4]).size > 2  # not vacuous
    raw_args = (*args[:5], np.ascontiguousarray(value[:, 0]), np.tile([0.5, -1.0], (X.shape[0], 1)))
    cpu_args, cuda_args = run_both(predict.predict_raw, cuda_predict.predict_raw, raw_args)
    assert_all_equal(cpu_args, cuda_args)


@pytest.mark.parametrize("dtype, offset", [(np.float32, 0.0), (np.float64, 1.7e9)])
def test_predict_raw_complete(dtype, offset):
    """Complete binary trees: NaN rows, a single leaf, leaves at several depths, two scores; float64 values
    that float32 would merge."""
    rng = np.random.default_rng(550)
    n_samples = 21
    X = (offset + rng.normal(size=(n_samples, 3))).astype(dtype)
    X[rng.random(X.shape) < 0.2] = np.nan
    arrays = [random_tree(rng, X, max_depth) for max_depth in (0, 1, 4)]
    trees = [as_tree(a, rng.normal(size=a[0].size), X.shape[1]) for a in arrays]
    forest = pack_complete_forest(trees)
    args = (X, *forest, np.tile([0.5, -1.0], (n_samples, 1)))
    cpu_args, cuda_args = run_both(predict.predict_raw_complete, cuda_predict.predict_raw_complete, args)
    assert_all_equal(cpu_args, cuda_args)
    assert np.unique(cuda_args[-1][:, 0]).size > 2  # not vacuous
