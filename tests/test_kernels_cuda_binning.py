"""Kernel tier, kernels/cuda/binning.py: map_to_bins; every launcher against its CPU kernel, bit for bit
(``tests/cuda_twins.py``).
"""

import numpy as np
import pytest
from numba import cuda

from gpuforest.binning import BinMapper
from gpuforest.kernels.cpu import binning
from gpuforest.kernels.cuda import binning as cuda_binning

try:
    from .cuda_twins import SIMULATOR, assert_all_equal, run_both
except ImportError:
    from cuda_twins import SIMULATOR, assert_all_equal, run_both

if not SIMULATOR and not cuda.is_available():
    pytest.skip("GPUFOREST_REAL_CUDA=1 but no usable CUDA device", allow_module_level=True)


def make_binning_problem(rng, n_samples, n_features, max_bins):
    """Float32 X with NaN and +-inf, per-feature thresholds (some equal to data values, one feature none)."""
    X = rng.normal(size=(n_samples, n_features)).astype(np.float32)
    X[:, 1] = rng.integers(0, 5, n_samples)  # few distinct values
    X[rng.random(X.shape) < 0.1] = np.nan
    X[0, 2], X[1, 2] = np.inf, -np.inf
    thresholds = np.full((n_features, max_bins), np.inf)
    n_thresholds = np.zeros(n_features, dtype=np.int32)
    for feature in range(n_features):
        distinct = np.unique(X[:, feature][~np.isnan(X[:, feature])]).astype(np.float64)
        finite = distinct[np.isfinite(distinct)]
        if feature == 3:
            chosen = np.empty(0)  # no threshold: everything in bin 0 (or missing)
        elif feature % 3 == 1:
            # Thresholds equal to data values: x == threshold goes to the lower bin.
            chosen = np.sort(rng.choice(finite, min(finite.size, max_bins - 2), replace=False))
        else:
            midpoints = (distinct[:-1] + distinct[1:]) / 2
            midpoints = midpoints[np.isfinite(midpoints)]
            size = min(midpoints.size, int(rng.integers(1, max_bins - 1)))
            chosen = np.sort(rng.choice(midpoints, size, replace=False))
        thresholds[feature, : chosen.size] = chosen
        n_thresholds[feature] = chosen.size
    return X, thresholds, n_thresholds, max_bins - 1


@pytest.mark.parametrize("shape", [(37, 5), (70, 40)])
def test_map_to_bins(grid, shape):
    rng = np.random.default_rng(shape[1])
    X, thresholds, n_thresholds, missing_bin = make_binning_problem(rng, *shape, max_bins=16)
    X_binned = np.full(shape, 77, dtype=np.uint8, order="F")
    cpu_args, cuda_args = run_both(
        binning.map_to_bins, cuda_binning.map_to_bins, (X, thresholds, n_thresholds, missing_bin, X_binned)
    )
    assert cuda_args[4].flags.f_contiguous
    assert_all_equal(cpu_args, cuda_args)
    assert np.all((cuda_args[4] == missing_bin) == np.isnan(X))
    assert np.unique(cuda_args[4]).size > 5  # not vacuous


# float64: values a float32 cannot tell apart (timestamps with fractions of a second), as validation keeps them.
@pytest.mark.parametrize("dtype, offset", [(np.float32, 0.0), (np.float64, 1.7e9)])
def test_map_to_bins_with_fitted_bin_mapper(dtype, offset):
    rng = np.random.default_rng(11)
    X = rng.integers(0, 12, (45, 3)).astype(dtype)
    X[:, 2] = offset + rng.normal(size=45)
    X[rng.random(X.shape) < 0.1] = np.nan
    mapper = BinMapper(max_bins=8).fit(X)
    X_binned = np.zeros(X.shape, dtype=np.uint8, order="F")
    cpu_args, cuda_args = run_both(
        binning.map_to_bins, cuda_binning.map_to_bins,
        (X, mapper.bin_thresholds_, mapper.n_thresholds_, mapper.missing_bin, X_binned),
    )
    assert_all_equal(cpu_args, cuda_args)
    assert np.unique(cuda_args[4][:, 2]).size == mapper.n_bins_non_missing_[2] + 1  # every bin, NaN's too
