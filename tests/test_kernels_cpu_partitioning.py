"""Kernel tier, kernels/cpu/partitioning.py: apply_splits, a stable partition of each node's rows; against the naive
reference of ``tests/reference.py``.

Inputs: the small random problems of ``tests/kernel_problems.py``.
"""

import numpy as np
import pytest

from gpuforest.kernels.cpu import partitioning, prefetch

try:
    from . import reference as ref
    from .kernel_problems import categorical_partition_problem, make_rows
except ImportError:
    import reference as ref
    from kernel_problems import categorical_partition_problem, make_rows


@pytest.mark.parametrize("seed", range(4))
def test_apply_splits_is_a_stable_partition(seed, chunking):
    rng = np.random.default_rng(300 + seed)
    rows = make_rows(rng, n_samples=90)
    X_binned, missing_bin = rows["X_binned"], rows["missing_bin"]
    sample_indices = rows["sample_indices"]
    # Disjoint node ranges (with gaps between them, which must stay untouched).
    cuts = np.sort(rng.choice(np.arange(1, sample_indices.size), 7, replace=False))
    node_start, node_stop = cuts[0:6:2].astype(np.int64), cuts[1:7:2].astype(np.int64)
    n_nodes = node_start.size
    split_feature = rng.integers(0, X_binned.shape[1], n_nodes).astype(np.int32)
    split_bin = np.array([rng.integers(0, rows["n_bins_non_missing"][f]) for f in split_feature], dtype=np.int32)
    split_missing_left = rng.random(n_nodes) < 0.5
    expected, n_left = ref.apply_splits(
        X_binned, sample_indices, node_start, node_stop, split_feature, split_bin, split_missing_left, missing_bin
    )
    result = sample_indices.copy()
    scratch = np.full_like(result, -1)
    partitioning.apply_splits(
        X_binned, result, scratch, node_start, node_stop, n_left, split_feature, split_bin, split_missing_left,
        missing_bin,
    )
    np.testing.assert_array_equal(result, expected)
    assert result.shape == sample_indices.shape and np.any(result != sample_indices)  # moved: not vacuous


def test_apply_splits_of_scattered_rows(chunking):
    """Nodes whose increasing rows are spread out take the prefetching version: the same partition."""
    rng = np.random.default_rng(310)
    rows = make_rows(rng, n_samples=600)
    X_binned, missing_bin = rows["X_binned"], rows["missing_bin"]
    sample_indices = np.sort(rng.choice(600, 60, replace=False)).astype(np.int32)
    node_start, node_stop = np.array([0, 30], dtype=np.int64), np.array([30, 60], dtype=np.int64)
    assert all(prefetch.is_sparse(sample_indices, start, stop) for start, stop in zip(node_start, node_stop))
    split_feature = np.array([0, 1], dtype=np.int32)
    split_bin = np.array([rows["n_bins_non_missing"][0] // 2, 0], dtype=np.int32)
    split_missing_left = np.array([False, True])
    expected, n_left = ref.apply_splits(
        X_binned, sample_indices, node_start, node_stop, split_feature, split_bin, split_missing_left, missing_bin
    )
    result = sample_indices.copy()
    partitioning.apply_splits(
        X_binned, result, np.empty_like(result), node_start, node_stop, n_left, split_feature, split_bin,
        split_missing_left, missing_bin,
    )
    np.testing.assert_array_equal(result, expected)
    assert result.shape == sample_indices.shape and np.any(result != sample_indices)


def test_apply_splits_by_bitset():
    """A row goes left when its category's bit is set (missing values by missing_left); stable."""
    args, expected = categorical_partition_problem(np.random.default_rng(9))
    original = args[1].copy()
    partitioning.apply_splits(*args)
    np.testing.assert_array_equal(args[1], expected)
    assert expected.shape == original.shape and np.any(expected != original)  # rows moved
