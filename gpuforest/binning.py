"""Bin mapper: per-feature thresholds fitted on (a subsample of) X, raw X -> uint8 bins.

A feature with at most ``max_bins - 1`` distinct values (one bin each) gets the midpoints
``(a_i + a_{i+1}) / 2`` between consecutive distinct values as thresholds, so
that a tree on bins makes the same splits as CART/C4.5 on raw values (the
midpoint rule of scikit-learn's trees). A feature with more distinct values
gets quantile thresholds, as in LightGBM and scikit-learn's
HistGradientBoosting. The last bin, ``max_bins - 1``, holds missing values.
"""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import get_num_threads

from .kernels.common import PURPOSE_BINNING
from .kernels.cpu.sampling import uniform_per_row

SUBSAMPLE = 200_000


class BinMapper:
    """Fit bin thresholds on X and map X to bins.

    Parameters
    ----------
    max_bins : int, default=256
        Number of bins, the missing-value bin included (2 to 256).
    subsample : int, default=200_000
        Thresholds are fitted on about this many rows when X has more.
    random_state : int, default=0
        Seed of the subsample (drawn from the counter-based hash RNG).

    Attributes
    ----------
    bin_thresholds_ : ndarray of shape (n_features, max_bins), dtype float64
        Thresholds of each feature padded with +inf: bin ``b`` holds the values
        ``x`` with ``bin_thresholds_[f, b - 1] < x <= bin_thresholds_[f, b]``.
    n_thresholds_ : ndarray of shape (n_features,), dtype int32
    n_bins_non_missing_ : ndarray of shape (n_features,), dtype int32
        ``n_thresholds_ + 1``.
    bin_min_, bin_max_ : ndarray of shape (n_features, max_bins), dtype float64
        Smallest and largest fitted value in each bin (+inf / -inf if empty).
    missing_bin : int
        ``max_bins - 1``.
    """

    def __init__(self, max_bins=256, subsample=SUBSAMPLE, random_state=0):
        self.max_bins = max_bins
        self.subsample = subsample
        self.random_state = random_state

    @property
    def missing_bin(self):
        return self.max_bins - 1

    def fit(self, X):
        """Fit thresholds on ``X`` of shape (n_samples, n_features), float32 with NaN."""
        if not 2 <= self.max_bins <= 256:
            raise ValueError(f"max_bins must be between 2 and 256, got {self.max_bins}.")
        n_samples, n_features = X.shape
        if n_samples > self.subsample:
            draws = np.empty(n_samples)
            uniform_per_row(self.random_state, PURPOSE_BINNING, 0, n_samples, draws)
            X = X[draws < self.subsample / n_samples]
        # max_bins - 1 bins for values (the last bin is for NaN), hence max_bins - 2 thresholds.
        max_thresholds = self.max_bins - 2
        self.bin_thresholds_ = np.full((n_features, self.max_bins), np.inf)
        self.n_thresholds_ = np.zeros(n_features, dtype=np.int32)
        self.bin_min_ = np.full((n_features, self.max_bins), np.inf)
        self.bin_max_ = np.full((n_features, self.max_bins), -np.inf)
        # numpy's sorts and partitions release the GIL: the features in parallel.
        with ThreadPoolExecutor(get_num_threads()) as pool:
            list(pool.map(lambda feature_idx: self._fit_feature(feature_idx, X[:, feature_idx], max_thresholds),
                          range(n_features)))
        self.n_bins_non_missing_ = self.n_thresholds_ + 1
        return self

    def _fit_feature(self, feature_idx, values, max_thresholds):
        """Thresholds and per-bin value ranges of one feature (its row of each attribute)."""
        distinct, thresholds = _feature_thresholds(values, max_thresholds)
        self.bin_thresholds_[feature_idx, : thresholds.size] = thresholds
        self.n_thresholds_[feature_idx] = thresholds.size
        bins = np.searchsorted(thresholds, distinct, side="left")
        # distinct is sorted, so each bin's values are a run: first is min, last is max.
        self.bin_min_[feature_idx, bins[::-1]] = distinct[::-1]
        self.bin_max_[feature_idx, bins] = distinct

    def split_thresholds(self, feature, bin_idx, next_bin):
        """Raw thresholds of splits between bins ``bin_idx`` and ``next_bin`` of ``feature``.

        Half-way between the largest value of ``bin_idx`` and the smallest of
        ``next_bin`` (scikit-learn's midpoint rule, exact when bins hold one
        value each), kept within the bin thresholds so that raw values route
        exactly as their bins did. ``next_bin == -1`` (nothing above): +inf.
        """
        has_next = next_bin >= 0
        upper_bin = np.where(has_next, next_bin, bin_idx + 1)
        midpoint = (self.bin_max_[feature, bin_idx] + self.bin_min_[feature, upper_bin]) / 2
        low = self.bin_thresholds_[feature, bin_idx]
        high = self.bin_thresholds_[feature, upper_bin - 1]
        # An empty or sub-sampled bin has no finite value: fall back to the bin threshold.
        midpoint = np.where(np.isfinite(midpoint), midpoint, low)
        return np.where(has_next, np.clip(midpoint, low, high), np.inf)

    def transform(self, X, backend):
        """Bins of ``X`` as an (n_samples, n_features) uint8 array in Fortran order."""
        return backend.map_to_bins(X, self.bin_thresholds_, self.n_thresholds_, self.missing_bin)


def _feature_thresholds(values, max_thresholds):
    """``(distinct, thresholds)`` of one feature's ``values``: its sorted distinct non-NaN values and
    increasing thresholds (at most ``max_thresholds``), both float64."""
    # Sorted once: the distinct values are its runs, and a percentile of sorted values costs no partition.
    values = np.sort(values[~np.isnan(values)]).astype(np.float64)
    first_of_run = np.empty(values.size, dtype=bool)
    first_of_run[:1] = True
    first_of_run[1:] = values[1:] != values[:-1]
    distinct = values[first_of_run]
    if distinct.size <= max_thresholds + 1:
        return distinct, (distinct[:-1] + distinct[1:]) / 2
    quantiles = np.linspace(0, 100, max_thresholds + 2)[1:-1]
    thresholds = np.unique(np.percentile(values, quantiles, method="midpoint"))
    # The top quantile can equal the maximum; a threshold there splits nothing off.
    return distinct, thresholds[thresholds < distinct[-1]]
