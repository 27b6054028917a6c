"""Kernel tier, kernels/cpu/sampling.py: the counter-based draws (uniforms per row, feature masks, threshold draws,
bootstrap counts); against the naive reference of ``tests/reference.py``.

Inputs: the small random problems of ``tests/kernel_problems.py``.
"""

import numpy as np
import pytest

from gpuforest.kernels import common
from gpuforest.kernels.cpu import sampling

try:
    from . import reference as ref
except ImportError:
    import reference as ref


def test_uniform_per_row_matches_reference():
    out = np.full(50, -1.0)
    sampling.uniform_per_row(123, common.PURPOSE_BOOTSTRAP, 7, 50, out)
    np.testing.assert_array_equal(out, ref.uniform_per_row(123, common.PURPOSE_BOOTSTRAP, 7, 50))
    assert np.all((out >= 0) & (out < 1))
    assert np.unique(out).size == out.size


@pytest.mark.parametrize("seed", [0, 1, 2**31 - 1])
@pytest.mark.parametrize("n_features", [1, 4, 9])
def test_feature_masks_match_reference(seed, n_features):
    rng = np.random.default_rng(seed % 1000 + n_features)
    node_tree = np.array([0, 0, 1, 5, 1000, 3], dtype=np.int64)
    node_idx = np.array([0, 1, 2, 7, 3, 2**31], dtype=np.int64)
    for max_features in sorted({1, n_features, int(rng.integers(1, n_features + 1))}):
        out = np.zeros((node_tree.size, n_features), dtype=bool)
        out[:, 0] = True  # must be overwritten
        sampling.feature_masks(seed, node_tree, node_idx, n_features, max_features, out)
        expected = ref.feature_masks(seed, node_tree, node_idx, n_features, max_features)
        np.testing.assert_array_equal(out, expected)
        np.testing.assert_array_equal(out.sum(axis=1), max_features)


@pytest.mark.parametrize("seed", [0, 2**31 - 1])
def test_threshold_draws_match_reference(seed):
    node_tree = np.array([0, 0, 1, 5, 1000, 3], dtype=np.int64)
    node_idx = np.array([0, 1, 2, 7, 3, 2**31], dtype=np.int64)
    out = np.full((node_tree.size, 7), -1.0)
    sampling.threshold_draws(seed, node_tree, node_idx, 7, out)
    np.testing.assert_array_equal(out, ref.threshold_draws(seed, node_tree, node_idx, 7))
    assert np.all((out >= 0) & (out < 1)) and np.unique(out).size == out.size
    # Not the feature-sampling draws of the same nodes.
    assert not np.isin(out, [common.hash_uniform(seed, common.PURPOSE_FEATURES, 0, f) for f in range(7)]).any()


@pytest.mark.parametrize("n_samples, n_draws", [(1, 5), (37, 37), (50, 20)])
def test_bootstrap_counts_match_reference(n_samples, n_draws):
    out = np.full((3, n_samples), -1, dtype=np.int32)
    sampling.bootstrap_counts(11, 5, n_draws, out)
    np.testing.assert_array_equal(out, ref.bootstrap_counts(11, 5, 3, n_samples, n_draws))
    assert np.all(out.sum(axis=1) == n_draws)


def test_bootstrap_counts_do_not_depend_on_the_batch():
    """Trees 2 and 3 drawn in a batch of five equal trees 2 and 3 drawn on their own."""
    batch = np.empty((5, 40), dtype=np.int32)
    sampling.bootstrap_counts(7, 0, 40, batch)
    alone = np.empty((2, 40), dtype=np.int32)
    sampling.bootstrap_counts(7, 2, 40, alone)
    np.testing.assert_array_equal(batch[2:4], alone)
    # Out of 40 draws, a row is left out with probability (39/40)^40 ~ 0.36.
    assert 0.2 < np.mean(batch == 0) < 0.5
