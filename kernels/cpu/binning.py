"""Map raw feature values to uint8 bins.

A value ``x`` of feature ``f`` goes to bin ``b`` = the number of thresholds of
``f`` that are ``< x``, so that ``x <= thresholds[f, b]`` exactly when its bin
is ``<= b``: a split on bins is the same split on raw values. NaN goes to the
reserved ``missing_bin``. A categorical feature's thresholds are ``c + 0.5``
(``gpuforest.binning``), so a category code's bin is the code.

A binary search over 255 thresholds mispredicts a branch at about every
step. Each feature gets a table instead: ``N_BUCKETS`` equal-width buckets of
its threshold range, and per bucket the thresholds that fall in it; a value
compares only with its bucket's few thresholds (3x faster; same bins, see
``_bucket``), the first without a branch.

The values go in blocks of ``BLOCK_ROWS`` rows, every feature of a block in
turn: a C-ordered ``X`` larger than the cache is then read from memory once,
not once per feature (each feature's pass over all rows read a cache line
per value for its 8 bytes).
"""

import numpy as np
from numba import njit, prange

N_BUCKETS = 1024
# Rows of a block: a C-ordered float64 block of 28 features (1.8 MB) stays in the last-level cache.
BLOCK_ROWS = 8192


@njit(parallel=True, cache=True)
def map_to_bins(X, bin_thresholds, n_thresholds, missing_bin, X_binned):
    """Fill ``X_binned`` with the bin of every value of ``X``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), dtype float64 or float32
    bin_thresholds : ndarray of shape (n_features, max_bins - 1), dtype float64
        Per feature, increasing thresholds padded with +inf (at least one: a value's compares stop there).
    n_thresholds : ndarray of shape (n_features,), dtype int32
    missing_bin : int
    X_binned : ndarray of shape (n_samples, n_features), dtype uint8, Fortran order
        Output.
    """
    n_samples, n_features = X.shape
    origin, scale, first = _bucket_tables(bin_thresholds, n_thresholds)
    for block in prange((n_samples + BLOCK_ROWS - 1) // BLOCK_ROWS):
        block_stop = min(n_samples, (block + 1) * BLOCK_ROWS)
        for feature_idx in range(n_features):
            thresholds, feature_first = bin_thresholds[feature_idx], first[feature_idx]
            feature_origin, feature_scale = origin[feature_idx], scale[feature_idx]
            for row in range(block * BLOCK_ROWS, block_stop):
                value = X[row, feature_idx]
                if np.isnan(value):
                    X_binned[row, feature_idx] = missing_bin
                    continue
                bin_idx = feature_first[_bucket(value, feature_origin, feature_scale)]
                # A bucket holds few thresholds, most none or one: the first compare without a branch (a later
                # bucket's threshold, or the +inf padding, is not below the value), any other in a loop.
                bin_idx += thresholds[bin_idx] < value
                while thresholds[bin_idx] < value:
                    bin_idx += 1
                X_binned[row, feature_idx] = bin_idx


@njit(cache=True)
def _bucket_tables(bin_thresholds, n_thresholds):
    """Each feature's buckets: ``(origin, scale, first)``, (n_features,) float64 twice and
    (n_features, N_BUCKETS + 1) int64; ``first[f, b]``: how many thresholds of ``f`` lie in buckets before
    ``b`` (``first[f, N_BUCKETS]`` = its count)."""
    n_features = n_thresholds.shape[0]
    origin, scale = np.zeros(n_features), np.zeros(n_features)
    first = np.zeros((n_features, N_BUCKETS + 1), dtype=np.int64)
    for feature_idx in range(n_features):
        thresholds = bin_thresholds[feature_idx]
        count = n_thresholds[feature_idx]
        if count > 0:
            origin[feature_idx] = thresholds[0]
            width = thresholds[count - 1] - thresholds[0]
            scale[feature_idx] = N_BUCKETS / width if 0.0 < width < np.inf else 0.0
        for k in range(count):
            first[feature_idx, _bucket(thresholds[k], origin[feature_idx], scale[feature_idx]) + 1] += 1
        for bucket in range(N_BUCKETS):
            first[feature_idx, bucket + 1] += first[feature_idx, bucket]
    return origin, scale, first


@njit(cache=True, inline="always")
def _bucket(value, origin, scale):
    """Bucket of a non-NaN ``value``, clipped to ``[0, N_BUCKETS)``.

    Non-decreasing in ``value`` (rounded subtraction and multiplication by
    ``scale >= 0`` are), so a threshold in an earlier bucket is below the
    value and one in a later bucket is not: a value's bin is its bucket's
    first threshold index plus the number of the bucket's thresholds below it.
    """
    if scale == 0.0:  # one bucket (an infinite value times 0 would be NaN)
        return 0
    position = min(max((value - origin) * scale, 0.0), N_BUCKETS - 1.0)
    return int(position)
