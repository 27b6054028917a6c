"""Kernel tier, kernels/cuda/partitioning.py: apply_splits; every launcher against its CPU kernel, bit for bit
(``tests/cuda_twins.py``).
"""

import numpy as np
import pytest
from numba import cuda

from gpuforest.kernels.cpu import partitioning
from gpuforest.kernels.cuda import histogram as cuda_histogram
from gpuforest.kernels.cuda import partitioning as cuda_partitioning

try:
    from . import reference as ref
    from .cuda_twins import SIMULATOR, assert_all_equal, run_both
    from .kernel_problems import categorical_partition_problem, make_rows
except ImportError:
    import reference as ref
    from cuda_twins import SIMULATOR, assert_all_equal, run_both
    from kernel_problems import categorical_partition_problem, make_rows

if not SIMULATOR and not cuda.is_available():
    pytest.skip("GPUFOREST_REAL_CUDA=1 but no usable CUDA device", allow_module_level=True)


def partition_problem(rng, n_samples):
    """Disjoint nodes with gaps between them (left untouched), one of them empty, one larger than a block."""
    rows = make_rows(rng, n_samples=n_samples)
    X_binned, missing_bin = rows["X_binned"], rows["missing_bin"]
    sample_indices = rows["sample_indices"]
    n_entries = sample_indices.size
    cuts = np.sort(rng.choice(np.arange(1, n_entries), 5, replace=False))
    # Nodes: [cuts0, cuts1), an empty one at cuts2, [cuts2, cuts3), [cuts4, n_entries).
    node_start = np.array([cuts[0], cuts[2], cuts[2], cuts[4]], dtype=np.int64)
    node_stop = np.array([cuts[1], cuts[2], cuts[3], n_entries], dtype=np.int64)
    n_nodes = node_start.size
    split_feature = rng.integers(0, X_binned.shape[1], n_nodes).astype(np.int32)
    split_bin = np.array([rng.integers(0, rows["n_bins_non_missing"][f]) for f in split_feature], dtype=np.int32)
    split_missing_left = rng.random(n_nodes) < 0.5
    # Missing values in the split feature, sent left in one node and right in another.
    for node, missing_left in ((2, False), (3, True)):
        split_feature[node] = 2
        split_bin[node] = rng.integers(0, rows["n_bins_non_missing"][2])
        split_missing_left[node] = missing_left
        X_binned[sample_indices[node_start[node] : node_start[node] + 2], 2] = missing_bin
    _, n_left = ref.apply_splits(
        X_binned, sample_indices, node_start, node_stop, split_feature, split_bin, split_missing_left, missing_bin
    )
    scratch = np.full_like(sample_indices, -1)
    return (
        X_binned, sample_indices, scratch, node_start, node_stop, n_left, split_feature, split_bin,
        split_missing_left, missing_bin,
    )


@pytest.mark.parametrize("seed", range(2))
def test_apply_splits(grid, seed):
    rng = np.random.default_rng(300 + seed)
    args = partition_problem(rng, n_samples=60)
    sample_indices = args[1]
    cpu_args, cuda_args = run_both(partitioning.apply_splits, cuda_partitioning.apply_splits, args)
    # The scratch contents are working memory: compare everything else.
    cpu_args[2] = cuda_args[2] = None
    assert_all_equal(cpu_args, cuda_args)
    assert cuda_args[1].shape == sample_indices.shape and np.any(cuda_args[1] != sample_indices)  # moved


def test_apply_splits_over_several_tiles(monkeypatch):
    """Nodes of several tiles, each tile of several chunks: the scatter adds the earlier tiles' left
    rows and carries its scan over chunks (small tiles, so that the simulator stays quick)."""
    monkeypatch.setattr(cuda_histogram, "BLOCK_SIZES", (32,))
    monkeypatch.setattr(cuda_partitioning, "ROWS_PER_THREAD", 2)  # tiles of 64 rows
    rng = np.random.default_rng(9)
    args = list(partition_problem(rng, n_samples=300))
    node_start, node_stop = args[3], args[4]
    node_start[:3] = [0, 10, 10]
    node_stop[:3] = [10, 10, 30]  # a small node, an empty one, one of a partial chunk
    node_start[3] = 40
    assert node_stop[3] - node_start[3] > 3 * 64
    _, n_left = ref.apply_splits(args[0], args[1], node_start, node_stop, args[6], args[7], args[8], args[9])
    args[5] = n_left
    cpu_args, cuda_args = run_both(partitioning.apply_splits, cuda_partitioning.apply_splits, tuple(args))
    cpu_args[2] = cuda_args[2] = None
    assert_all_equal(cpu_args, cuda_args)
    assert 0 < n_left[3] < node_stop[3] - node_start[3]


def test_apply_splits_all_left_all_right_and_no_nodes():
    rng = np.random.default_rng(17)
    args = list(partition_problem(rng, n_samples=40))
    # Feature 0 never misses; threshold at the top bin sends everything left, at the missing bin too.
    args[6][:] = 0
    args[7][:] = [args[9] - 1, -1, 0, args[9] - 1]
    args[7][2] = -1  # bin <= -1: nothing goes left
    args[5] = ref.apply_splits(args[0], args[1], args[3], args[4], args[6], args[7], args[8], args[9])[1]
    cpu_args, cuda_args = run_both(partitioning.apply_splits, cuda_partitioning.apply_splits, tuple(args))
    cpu_args[2] = cuda_args[2] = None
    assert_all_equal(cpu_args, cuda_args)
    empty64 = np.zeros(0, dtype=np.int64)
    cuda_partitioning.apply_splits(
        args[0], args[1], args[2], empty64, empty64, empty64, np.zeros(0, np.int32), np.zeros(0, np.int32),
        np.zeros(0, bool), args[9],
    )


def test_apply_splits_by_bitset_on_cuda():
    args, expected = categorical_partition_problem(np.random.default_rng(10))
    cuda_partitioning.apply_splits(*args)
    np.testing.assert_array_equal(args[1], expected)
