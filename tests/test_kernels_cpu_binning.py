"""Kernel tier, kernels/cpu/binning.py: map_to_bins and the bin mapper's missing bin; against the naive reference of
``tests/reference.py``.

Inputs: the small random problems of ``tests/kernel_problems.py``.
"""

import numpy as np
import pytest

from gpuforest.kernels.cpu import binning

try:
    from . import reference as ref
except ImportError:
    import reference as ref


@pytest.mark.parametrize("seed", range(3))
def test_map_to_bins_bucket_table_keeps_every_bin(seed):
    """The equal-width bucket table gives the binary search's bins where buckets are uneven: skewed
    thresholds (most in one bucket), a range too wide for float64 (one bucket), a single threshold,
    values equal to thresholds, beyond the range and infinite."""
    rng = np.random.default_rng(40 + seed)
    n_samples, max_bins = 3000, 256
    skewed = np.sort(np.unique(np.exp(rng.normal(0.0, 6.0, 400))))[: max_bins - 2]
    features = [
        skewed,
        np.array([-1e308, -1.0, 0.0, 2.5, 1e308]),  # width overflows to inf
        np.array([0.5]),
        np.sort(rng.uniform(-1.0, 1.0, max_bins - 2)),
        np.array([1.0, 1.0 + 2**-20, 1.0 + 2**-19]),  # a range narrower than float32's steps
    ]
    thresholds = np.full((len(features), max_bins), np.inf)
    n_thresholds = np.array([t.size for t in features], dtype=np.int32)
    for feature, chosen in enumerate(features):
        thresholds[feature, : chosen.size] = chosen
    X = np.empty((n_samples, len(features)), dtype=np.float32)
    for feature, chosen in enumerate(features):
        finite = chosen[np.abs(chosen) < 1e38]
        span = np.array([finite.min() - 1.0, finite.max() + 1.0])
        candidates = np.concatenate([finite, span, [np.inf, -np.inf, np.nan]])
        X[:, feature] = np.where(
            rng.random(n_samples) < 0.5, rng.choice(candidates, n_samples), rng.uniform(*span, n_samples)
        )
    missing_bin = max_bins - 1
    X_binned = np.empty(X.shape, dtype=np.uint8, order="F")
    binning.map_to_bins(X, thresholds, n_thresholds, missing_bin, X_binned)
    np.testing.assert_array_equal(X_binned, ref.map_to_bins(X, thresholds, n_thresholds, missing_bin))
    assert len(np.unique(X_binned[:, 0])) > 100  # the skewed feature's bins are all reached


@pytest.mark.parametrize("seed", range(4))
def test_map_to_bins_matches_reference(seed):
    rng = np.random.default_rng(seed)
    n_samples, n_features, max_bins = 200, 6, 16
    X = rng.normal(size=(n_samples, n_features)).astype(np.float32)
    X[:, 1] = rng.integers(0, 5, n_samples)  # few distinct values
    X[rng.random(X.shape) < 0.1] = np.nan
    X[0, 2], X[1, 2] = np.inf, -np.inf
    # At most max_bins - 2 thresholds: max_bins - 1 value bins, then the missing bin.
    thresholds = np.full((n_features, max_bins), np.inf)
    n_thresholds = np.zeros(n_features, dtype=np.int32)
    for feature in range(n_features):
        distinct = np.unique(X[:, feature][~np.isnan(X[:, feature])]).astype(np.float64)
        if feature == 3:
            chosen = np.empty(0)  # a constant feature: no threshold
        elif feature == 4:
            # Thresholds equal to data values: x == threshold must go to the lower bin.
            chosen = np.sort(rng.choice(distinct[np.isfinite(distinct)], max_bins - 2, replace=False))
        else:
            midpoints = (distinct[:-1] + distinct[1:]) / 2
            midpoints = midpoints[np.isfinite(midpoints)]
            size = min(midpoints.size, int(rng.integers(1, max_bins - 1)))
            chosen = np.sort(rng.choice(midpoints, size, replace=False))
        thresholds[feature, : chosen.size] = chosen
        n_thresholds[feature] = chosen.size
    missing_bin = max_bins - 1
    X_binned = np.full((n_samples, n_features), 77, dtype=np.uint8, order="F")
    binning.map_to_bins(X, thresholds, n_thresholds, missing_bin, X_binned)
    expected = ref.map_to_bins(X, thresholds, n_thresholds, missing_bin)
    np.testing.assert_array_equal(X_binned, expected)
    # The promise of the module: x <= thresholds[f, b] exactly when bin <= b.
    for feature in range(n_features):
        values = X[:, feature].astype(np.float64)
        present = ~np.isnan(values)
        for b in range(n_thresholds[feature]):
            np.testing.assert_array_equal(
                values[present] <= thresholds[feature, b], X_binned[present, feature] <= b
            )
    assert np.all((X_binned == missing_bin) == np.isnan(X))


@pytest.mark.parametrize("order", ["C", "F"])
def test_map_to_bins_across_row_blocks(order):
    """Rows in several blocks of ``BLOCK_ROWS`` (the last one partial), in either memory order: every row binned
    as the reference bins it."""
    rng = np.random.default_rng(7)
    n_samples, max_bins = 2 * binning.BLOCK_ROWS + 37, 16
    X = np.asarray(rng.normal(size=(n_samples, 3)), order=order)
    X[rng.random(X.shape) < 0.05] = np.nan
    thresholds = np.full((3, max_bins), np.inf)
    n_thresholds = np.array([10, 1, 0], dtype=np.int32)
    thresholds[0, :10] = np.sort(rng.normal(size=10))
    thresholds[1, 0] = 0.25
    X_binned = np.full(X.shape, 77, dtype=np.uint8, order="F")
    binning.map_to_bins(X, thresholds, n_thresholds, max_bins - 1, X_binned)
    np.testing.assert_array_equal(X_binned, ref.map_to_bins(X, thresholds, n_thresholds, max_bins - 1))


@pytest.mark.parametrize("max_bins", [4, 8])
@pytest.mark.parametrize("n_distinct", [2, 4, 8, 50])
def test_bin_mapper_leaves_the_missing_bin_to_nan(max_bins, n_distinct):
    """Fitted thresholds + map_to_bins: only NaN lands in the missing bin (``max_bins - 1``).

    ``max_bins`` counts the missing bin, so a feature may use at most
    ``max_bins - 1`` value bins, i.e. ``max_bins - 2`` thresholds.
    """
    from gpuforest.binning import BinMapper

    rng = np.random.default_rng(n_distinct)
    X = rng.integers(0, n_distinct, (60, 2)).astype(np.float32)
    X[:n_distinct, :] = np.arange(n_distinct)[:, None]  # every value present
    X[rng.random(X.shape) < 0.1] = np.nan
    mapper = BinMapper(max_bins=max_bins).fit(X)
    missing_bin = mapper.missing_bin
    X_binned = np.empty(X.shape, dtype=np.uint8, order="F")
    binning.map_to_bins(X, mapper.bin_thresholds_, mapper.n_thresholds_, missing_bin, X_binned)
    expected = ref.map_to_bins(X, mapper.bin_thresholds_, mapper.n_thresholds_, missing_bin)
    np.testing.assert_array_equal(X_binned, expected)
    assert np.all(mapper.n_bins_non_missing_ <= missing_bin)
    np.testing.assert_array_equal(X_binned == missing_bin, np.isnan(X))
