"""Kernel tier, kernels/cuda/multiway.py: the CUDA multiway kernels against the CPU's, bit for bit (simulator: tiny
problems)."""

import numpy as np

from gpuforest.kernels.cpu import multiway
from gpuforest.kernels.cuda import multiway as cuda_multiway

try:
    from .cuda_twins import assert_all_equal, run_both
    from .kernel_problems import c45_problem, multiway_gain_problem, multiway_partition_args, multiway_partition_problem
except ImportError:
    from cuda_twins import assert_all_equal, run_both
    from kernel_problems import c45_problem, multiway_gain_problem, multiway_partition_args, multiway_partition_problem


def test_multiway_gains_on_cuda_equal_cpu():
    args, _ = multiway_gain_problem(np.random.default_rng(1))
    assert_all_equal(*run_both(multiway.multiway_gains, cuda_multiway.multiway_gains, args))


def test_c45_split_gains_on_cuda_equal_cpu():
    args, _ = c45_problem(np.random.default_rng(1))
    assert_all_equal(*run_both(multiway.c45_split_gains, cuda_multiway.c45_split_gains, args))


def test_apply_multiway_splits_on_cuda_equals_cpu():
    # 16 rows per thread of 32-thread blocks: the first node spans three tiles.
    problem = multiway_partition_problem(np.random.default_rng(3), node_sizes=[1100, 30, 0, 7])
    cpu_args, cuda_args = run_both(multiway.apply_multiway_splits, cuda_multiway.apply_multiway_splits,
                                   multiway_partition_args(problem))
    assert_all_equal(
        [cpu_args[1], cpu_args[-1]], [cuda_args[1], cuda_args[-1]]
    )
