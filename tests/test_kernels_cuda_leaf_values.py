"""Kernel tier, kernels/cuda/leaf_values.py: node values and the score updates; every launcher against its CPU kernel,
bit for bit (``tests/cuda_twins.py``).
"""

import numpy as np
import pytest
from numba import cuda

from gpuforest.kernels.cpu import leaf_values
from gpuforest.kernels.cuda import launch as cuda_launch
from gpuforest.kernels.cuda import leaf_values as cuda_leaf_values

try:
    from . import reference as ref
    from .cuda_twins import SIMULATOR, assert_all_equal, run_both
    from .kernel_problems import CRITERIA, CRITERION_ID, N_CLASSES, make_rows, make_statistics, range_problem
except ImportError:
    import reference as ref
    from cuda_twins import SIMULATOR, assert_all_equal, run_both
    from kernel_problems import CRITERIA, CRITERION_ID, N_CLASSES, make_rows, make_statistics, range_problem

if not SIMULATOR and not cuda.is_available():
    pytest.skip("GPUFOREST_REAL_CUDA=1 but no usable CUDA device", allow_module_level=True)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # 0 / 0 of the empty node, under the simulator
@pytest.mark.parametrize("criterion", CRITERIA)
def test_node_values(grid, criterion):
    rng = np.random.default_rng(400 + CRITERIA.index(criterion))
    rows = make_rows(rng, n_samples=40)
    # newton's (l2, l1); l1 = 2 zeroes the values of some nodes and shrinks the others.
    stats = make_statistics(rng, criterion, rows["X_binned"].shape[0], 0.7, 2.0)
    # Every node of make_rows, an empty one (zero weight: NaN values, as on the CPU), and many
    # random sub-ranges, so that the one-block run has more nodes than threads.
    starts = list(rows["node_start"]) + [5]
    stops = list(rows["node_stop"]) + [5]
    trees = list(rows["node_tree"]) + [1]
    n_entries = rows["sample_indices"].size
    while len(starts) < 40:
        a, b = sorted(rng.integers(0, n_entries, 2))
        starts.append(a)
        stops.append(b + 1)
        trees.append(0)
    totals = ref.node_totals(
        rows["sample_indices"], np.array(starts), np.array(stops), np.array(trees), rows["sample_counts"],
        stats.row_slot, stats.row_stats, stats.n_slots,
    )
    n_nodes = totals.shape[0]
    n_values = N_CLASSES if criterion in ref.CLASSIFICATION else 1
    args = (
        CRITERION_ID[criterion], totals, stats.inv_scales, stats.regularization,
        np.full((n_nodes, n_values), -7.0), np.full(n_nodes, -7.0), np.full(n_nodes, -7.0),
    )
    if grid == "one_block":
        # 32 threads for 40 nodes: each thread takes two.
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(cuda_leaf_values, "BLOCK_SIZE", 32)
            cpu_args, cuda_args = run_both(leaf_values.node_values, cuda_leaf_values.node_values, args)
    else:
        cpu_args, cuda_args = run_both(leaf_values.node_values, cuda_leaf_values.node_values, args)
    assert_all_equal(cpu_args, cuda_args)
    assert np.isfinite(cuda_args[4][0]).all()
    if criterion == "newton":
        values = cuda_args[4]  # the empty node's NaN compares False
        assert (values == 0).any() and (values > 0).any() and (values < 0).any()


@pytest.mark.parametrize("kernel", ["add_leaf_values", "add_range_values"])
def test_add_leaf_values(grid, kernel):
    rng = np.random.default_rng(430)
    if kernel == "add_leaf_values":
        rows = rng.permutation(80)[:70].astype(np.int32)
        args = (rng.normal(size=(80, 2)), 1, rows, rng.integers(0, 9, 70), rng.normal(size=9))
    else:
        args = range_problem(rng, 70, 6)
    with pytest.MonkeyPatch.context() as patch:
        if grid == "one_block":  # 32 threads for 70 rows: grid-stride
            patch.setattr(cuda_launch, "BLOCK_SIZE", 32)
        cpu_args, cuda_args = run_both(getattr(leaf_values, kernel), getattr(cuda_leaf_values, kernel), args)
    assert_all_equal(cpu_args, cuda_args)
    assert cuda_args[0].shape == args[0].shape and np.any(cuda_args[0] != args[0])
