"""Bin mapper: per-feature thresholds fitted on (a subsample of) X, raw X -> uint8 bins.

A feature with at most ``max_bins - 1`` distinct values (one bin each) gets the midpoints
``(a_i + a_{i+1}) / 2`` between consecutive distinct values as thresholds, so
that a tree on bins makes the same splits as CART/C4.5 on raw values (the
midpoint rule of scikit-learn's trees). A feature with more distinct values
gets quantile thresholds, as in LightGBM and scikit-learn's
HistGradientBoosting. The last bin, ``n_bins - 1``, holds missing values.

A sparse X (scipy CSR/CSC) gets the thresholds of its dense matrix: each
feature's are fitted on its CSC column's stored values and its implicit
zeros (their count, placed in the sorted values only when quantiles need
them); its rows are binned in dense blocks (``sparse.dense_row_blocks``).

A categorical feature holds category codes, integers ``0 .. n_categories - 1``
with ``n_categories <= max_bins - 1``, and its bins are the codes themselves:
its thresholds are ``c + 0.5`` for ``c < n_categories - 1``, so the numeric
binning kernel maps code ``c`` to bin ``c``. Codes are checked before any
kernel runs (``category_counts``).
"""

from concurrent.futures import ThreadPoolExecutor
from functools import partial

import numpy as np
from numba import get_num_threads, njit

from .kernels.common import PURPOSE_BINNING
from .kernels.cpu.sampling import uniform_per_row
from .sparse import column_reader, dense_row_blocks, issparse, refuse_sparse_categorical

SUBSAMPLE = 200_000
# Fewer rows: the features are fitted one after another, as a thread pool's start and hand-offs cost more
# than their sorts (569 x 30: 2.8 ms in turn, 8.5 ms on two threads).
PARALLEL_BINNING_SAMPLES = 10_000


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
    is_categorical : array-like of bool of shape (n_features,) or None, default=None
        Which features hold category codes (None: none); after ``fit``, a bool ndarray.

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
    n_categories_ : ndarray of shape (n_features,), dtype int32
        Categories of each categorical feature (its largest code + 1; its bins
        ``0 .. n_categories_ - 1``), 0 for numeric features.
    n_bins_ : int
        One more than the most bins any feature's values take (``n_bins_non_missing_``, ``n_categories_``).
    n_bins : int
        Bins per feature in the binned layout: ``n_bins_`` when fitted, else ``max_bins``.
    missing_bin : int
        ``n_bins - 1``: the bin of missing values.
    """

    def __init__(self, max_bins=256, subsample=SUBSAMPLE, random_state=0, is_categorical=None):
        self.max_bins = max_bins
        self.subsample = subsample
        self.random_state = random_state
        self.is_categorical = is_categorical

    @property
    def n_bins(self):
        """Bins per feature of the binned layout (histogram widths), the missing values' bin the last: fitted,
        ``n_bins_``; else ``max_bins``."""
        return getattr(self, "n_bins_", self.max_bins)

    @property
    def missing_bin(self):
        return self.n_bins - 1

    def fit(self, X):
        """Fit thresholds on ``X`` of shape (n_samples, n_features), float64 or float32 with NaN, dense or sparse
        (CSR/CSC: the thresholds of its dense matrix)."""
        if not 2 <= self.max_bins <= 256:
            raise ValueError(f"max_bins must be between 2 and 256, got {self.max_bins}.")
        n_samples, n_features = X.shape
        if self.is_categorical is None:
            self.is_categorical = np.zeros(n_features, dtype=bool)
        self.is_categorical = np.asarray(self.is_categorical, dtype=bool)
        if self.is_categorical.shape != (n_features,):
            raise ValueError(
                f"is_categorical must have one entry per feature ({n_features}), got shape {self.is_categorical.shape}."
            )
        # On every row: a code outside the subsample would otherwise fall outside the bins.
        self.n_categories_ = category_counts(X, self.is_categorical, self.max_bins)
        if n_samples > self.subsample:
            draws = np.empty(n_samples)
            uniform_per_row(self.random_state, PURPOSE_BINNING, 0, n_samples, draws)
            X = X[draws < self.subsample / n_samples]
        column = column_reader(X)
        # max_bins - 1 bins for values (the last bin is for NaN), hence max_bins - 2 thresholds.
        max_thresholds = self.max_bins - 2
        self.bin_thresholds_ = np.full((n_features, self.max_bins), np.inf)
        self.n_thresholds_ = np.zeros(n_features, dtype=np.int32)
        self.bin_min_ = np.full((n_features, self.max_bins), np.inf)
        self.bin_max_ = np.full((n_features, self.max_bins), -np.inf)

        def fit_feature(feature_idx):
            self._fit_feature(feature_idx, *column(feature_idx), max_thresholds)

        if X.shape[0] < PARALLEL_BINNING_SAMPLES and not issparse(X):
            # Every numeric feature in one compiled call (a small fit's per-feature numpy calls cost more than
            # its values), the categorical ones here.
            # Sorted by numpy (vectorized: 4x faster than numba's quicksort, 10x after other code has run).
            _fit_numeric_features(
                np.sort(X, axis=0), self.is_categorical, max_thresholds, np.linspace(0, 100, max_thresholds + 2)[1:-1],
                self.bin_thresholds_, self.n_thresholds_, self.bin_min_, self.bin_max_,
            )
            for feature_idx in self.is_categorical.nonzero()[0]:
                fit_feature(feature_idx)
        elif X.shape[0] < PARALLEL_BINNING_SAMPLES:
            for feature_idx in range(n_features):
                fit_feature(feature_idx)
        else:
            # numpy's sorts release the GIL: the features in parallel.
            with ThreadPoolExecutor(get_num_threads()) as pool:
                list(pool.map(fit_feature, range(n_features)))
        self.n_bins_non_missing_ = self.n_thresholds_ + 1
        self._set_n_bins()
        return self

    def _set_n_bins(self):
        # Features of few distinct values get small histograms, whose zeroing, subtraction and row-or-histogram
        # choice cost their bins, not max_bins.
        self.n_bins_ = int(max(self.n_bins_non_missing_.max(initial=0), self.n_categories_.max(initial=0))) + 1

    def __getstate__(self):
        """The fitted rows without their padding: per feature its ``n_thresholds_`` thresholds and its
        ``n_bins_non_missing_`` bins' ranges, concatenated (the padded arrays are rebuilt on loading)."""
        state = dict(vars(self))
        if hasattr(self, "bin_thresholds_"):
            for name, counts, dtype in (("bin_thresholds_", self.n_thresholds_, np.float64),
                                        ("bin_min_", self.n_bins_non_missing_, np.float64),
                                        ("bin_max_", self.n_bins_non_missing_, np.float64)):
                state[name] = getattr(self, name)[np.arange(self.max_bins) < counts[:, None]].astype(dtype)
        return state

    def __setstate__(self, state):
        vars(self).update(state)
        if hasattr(self, "bin_thresholds_"):
            for name, counts, padding in (("bin_thresholds_", self.n_thresholds_, np.inf),
                                          ("bin_min_", self.n_bins_non_missing_, np.inf),
                                          ("bin_max_", self.n_bins_non_missing_, -np.inf)):
                padded = np.full((counts.shape[0], self.max_bins), padding)
                padded[np.arange(self.max_bins) < counts[:, None]] = state[name]
                setattr(self, name, padded)
            if not hasattr(self, "n_bins_"):
                self._set_n_bins()

    def _fit_feature(self, feature_idx, values, n_implicit_zeros, max_thresholds):
        """Thresholds and per-bin value ranges of one feature (its row of each attribute) from its ``values``
        and ``n_implicit_zeros`` more zeros (a sparse column's)."""
        if self.is_categorical[feature_idx]:
            distinct = np.unique(values[~np.isnan(values)]).astype(np.float64)
            thresholds = np.arange(self.n_categories_[feature_idx] - 1) + 0.5
        else:
            distinct, thresholds = _feature_thresholds(values, max_thresholds, n_implicit_zeros)
        self.bin_thresholds_[feature_idx, : thresholds.size] = thresholds
        self.n_thresholds_[feature_idx] = thresholds.size
        # distinct is sorted, so bin b's values are the run distinct[starts[b]:stops[b]] (a value's bin counts
        # the thresholds below it): its first is the bin's min, its last the max; one search per threshold.
        stops = np.append(np.searchsorted(distinct, thresholds, side="right"), distinct.size)
        starts = np.concatenate([[0], stops[:-1]])
        occupied = (starts < stops).nonzero()[0]
        self.bin_min_[feature_idx, occupied] = distinct[starts[occupied]]
        self.bin_max_[feature_idx, occupied] = distinct[stops[occupied] - 1]

    def split_thresholds(self, feature, bin_idx, next_bin):
        """Raw thresholds of splits between bins ``bin_idx`` and ``next_bin`` of ``feature`` (``_split_thresholds``)."""
        return _split_thresholds(
            self.bin_min_, self.bin_max_, self.bin_thresholds_, np.asarray(feature, dtype=np.int64),
            np.asarray(bin_idx, dtype=np.int64), np.asarray(next_bin, dtype=np.int64),
        )

    def bin_values(self):
        """Each bin's value, for thresholds drawn uniformly over a node's values (extra trees,
        ``kernels.common.random_threshold_value_bin``): shape (n_features, max_bins), float64.

        The middle of the bin's fitted values (its one value when it holds one, as with at most
        ``max_bins - 1`` distinct values); a bin without fitted values (a sub-sampled fit), its lower
        threshold, so that values stay non-decreasing along the bins.
        """
        with np.errstate(invalid="ignore"):  # inf - inf in empty bins, replaced below
            middle = (self.bin_min_ + self.bin_max_) / 2
        lower_threshold = np.concatenate([self.bin_thresholds_[:, :1], self.bin_thresholds_[:, :-1]], axis=1)
        return np.where(np.isfinite(middle), middle, lower_threshold)

    def transform(self, X, backend):
        """Bins of ``X`` (dense, or sparse: in dense blocks of rows) as an (n_samples, n_features) uint8 array in
        Fortran order, on ``backend``'s device."""
        to_bins = partial(backend.map_to_bins, bin_thresholds=self.bin_thresholds_, n_thresholds=self.n_thresholds_,
                          missing_bin=self.missing_bin)
        if not issparse(X):
            return to_bins(X)
        X_binned = backend.xp.empty(X.shape, dtype=np.uint8, order="F")
        for rows, block in dense_row_blocks(X):
            X_binned[rows] = to_bins(block)
        return X_binned


def category_counts(X, is_categorical, max_bins, feature_names=None):
    """Number of categories of every feature of ``X``: its largest code + 1, 0 for numeric features.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        NaN is a missing value.
    is_categorical : ndarray of shape (n_features,), dtype bool
    max_bins : int
        Codes must be below ``max_bins - 1`` (the last bin is for missing values).
    feature_names : sequence of str or None, default=None
        Names for the error messages (else "feature <index>").

    Returns
    -------
    n_categories : ndarray of shape (n_features,), dtype int32

    Raises
    ------
    ValueError
        A categorical feature holds a value that is no code (negative, not an
        integer, infinite), or more categories than ``max_bins`` leaves room for; ``X`` is sparse and a
        feature categorical (``sparse.refuse_sparse_categorical``).
    """
    refuse_sparse_categorical(X, is_categorical)
    n_categories = np.zeros(X.shape[1], dtype=np.int32)
    for feature_idx in np.flatnonzero(is_categorical):
        codes = X[:, feature_idx]
        codes = codes[~np.isnan(codes)]
        if codes.size == 0:
            continue
        name = feature_label(feature_idx, feature_names)
        not_codes = (codes < 0) | (codes != np.floor(codes)) | np.isinf(codes)
        if not_codes.any():
            raise ValueError(
                f"Categorical {name} must hold category codes, integers from 0 (NaN: missing); "
                f"it holds {codes[not_codes][0]!r}."
            )
        n_categories[feature_idx] = int(codes.max()) + 1
        if n_categories[feature_idx] > max_bins - 1:
            raise too_many_categories(name, n_categories[feature_idx], max_bins)
    return n_categories


def feature_label(feature_idx, feature_names=None):
    """``feature 'name'`` or ``feature <index>``, for error messages."""
    return f"feature {feature_names[feature_idx]!r}" if feature_names is not None else f"feature {feature_idx}"


def too_many_categories(name, n_categories, max_bins):
    """The ValueError of a categorical feature ``name`` with more categories than ``max_bins`` allows."""
    return ValueError(
        f"Categorical {name} has {n_categories} categories (codes 0 to {n_categories - 1}); max_bins={max_bins} "
        f"allows at most {max_bins - 1} (one bin is kept for missing values)."
    )


@njit(cache=True)
def _split_thresholds(bin_min, bin_max, bin_thresholds, feature, bin_idx, next_bin):
    """Raw thresholds of splits between bins ``bin_idx`` and ``next_bin`` of ``feature`` (n_splits,) int64.

    Half-way between the largest value of ``bin_idx`` and the smallest of
    ``next_bin`` (scikit-learn's midpoint rule, exact when bins hold one
    value each), kept within the bin thresholds so that raw values route
    exactly as their bins did. ``next_bin == -1`` (nothing above): +inf.
    A split's own loop: a tree's few splits cost no dozen numpy calls.
    """
    thresholds = np.empty(feature.shape[0])
    for split in range(feature.shape[0]):
        if next_bin[split] < 0:
            thresholds[split] = np.inf
            continue
        f, upper_bin = feature[split], next_bin[split]
        midpoint = (bin_max[f, bin_idx[split]] + bin_min[f, upper_bin]) / 2
        low, high = bin_thresholds[f, bin_idx[split]], bin_thresholds[f, upper_bin - 1]
        # An empty or sub-sampled bin has no finite value: fall back to the bin threshold.
        if not np.isfinite(midpoint):
            midpoint = low
        thresholds[split] = min(max(midpoint, low), high)
    return thresholds


@njit(cache=True)
def _fit_numeric_features(sorted_X, is_categorical, max_thresholds, percentiles, bin_thresholds, n_thresholds,
                          bin_min, bin_max):
    """``BinMapper._fit_feature`` of every numeric feature of a dense ``X`` sorted column by column (``sorted_X``,
    NaN last: ``np.sort(X, axis=0)``), into the mapper's arrays: the same thresholds and bin ranges as
    ``_feature_thresholds`` and numpy's (``percentiles``: the midpoint percentiles asked for when a feature has
    more distinct values than ``max_thresholds + 1``)."""
    for feature_idx in range(sorted_X.shape[1]):
        if is_categorical[feature_idx]:
            continue
        column = sorted_X[:, feature_idx]
        n_values = column.shape[0]
        while n_values > 0 and np.isnan(column[n_values - 1]):
            n_values -= 1
        values = column[:n_values].astype(np.float64)
        distinct = np.empty_like(values)
        n_distinct = 0
        for position in range(n_values):
            if position == 0 or values[position] != values[position - 1]:
                distinct[n_distinct] = values[position]
                n_distinct += 1
        distinct = distinct[:n_distinct]
        if n_distinct <= max_thresholds + 1:
            thresholds = (distinct[:-1] + distinct[1:]) / 2
            if n_distinct > 0 and _one_value_per_bin(distinct, thresholds):
                n_thresholds[feature_idx] = n_distinct - 1
                bin_thresholds[feature_idx, :n_distinct - 1] = thresholds
                bin_min[feature_idx, :n_distinct] = distinct
                bin_max[feature_idx, :n_distinct] = distinct
                continue
        else:
            thresholds = np.unique(sorted_midpoint_percentiles(values, percentiles))
            thresholds = thresholds[thresholds < distinct[-1]]
        n_thresholds[feature_idx] = thresholds.shape[0]
        bin_thresholds[feature_idx, :thresholds.shape[0]] = thresholds
        # Bin b's values are the run of distinct values up to its threshold: its first the bin's min, its last
        # the max.
        start = 0
        for bin_idx in range(thresholds.shape[0] + 1):
            stop = n_distinct
            if bin_idx < thresholds.shape[0]:
                stop = np.searchsorted(distinct, thresholds[bin_idx], side="right")
            if start < stop:
                bin_min[feature_idx, bin_idx] = distinct[start]
                bin_max[feature_idx, bin_idx] = distinct[stop - 1]
            start = stop


@njit(cache=True)
def _one_value_per_bin(distinct, thresholds):
    """Whether each midpoint threshold lies between its two distinct values, ``distinct[b] <= thresholds[b] <
    distinct[b + 1]``, so that bin ``b`` holds ``distinct[b]`` alone (a midpoint of neighbouring floats can round
    up to the upper one, and of huge ones overflow)."""
    for bin_idx in range(thresholds.shape[0]):
        if not distinct[bin_idx] <= thresholds[bin_idx] < distinct[bin_idx + 1]:
            return False
    return True


def _feature_thresholds(values, max_thresholds, n_implicit_zeros=0):
    """``(distinct, thresholds)`` of one feature's ``values`` and ``n_implicit_zeros`` more zeros: its sorted
    distinct non-NaN values and increasing thresholds (at most ``max_thresholds``), both float64."""
    # Sorted once: the distinct values are its runs, and a percentile of sorted values costs no partition.
    values = np.sort(values[~np.isnan(values)]).astype(np.float64)
    first_of_run = np.empty(values.size, dtype=bool)
    first_of_run[:1] = True
    first_of_run[1:] = values[1:] != values[:-1]
    distinct = values[first_of_run]
    if n_implicit_zeros:
        distinct = np.union1d(distinct, [0.0])
    if distinct.size <= max_thresholds + 1:
        return distinct, (distinct[:-1] + distinct[1:]) / 2
    if n_implicit_zeros:
        # The zeros as a run at their sorted place: the dense column's sorted values, hence its percentiles.
        zeros_at = np.searchsorted(values, 0.0)
        values = np.concatenate([values[:zeros_at], np.zeros(n_implicit_zeros), values[zeros_at:]])
    thresholds = np.unique(sorted_midpoint_percentiles(values, np.linspace(0, 100, max_thresholds + 2)[1:-1]))
    # The top quantile can equal the maximum; a threshold there splits nothing off.
    return distinct, thresholds[thresholds < distinct[-1]]


@njit(cache=True)
def sorted_midpoint_percentiles(sorted_values, percentiles):
    """``np.percentile(sorted_values, percentiles, method="midpoint")`` of values already sorted, without NaN.

    numpy partitions its input around every requested index (at the binning's 254 percentiles: 3.0 ms on
    200,000 values, more than their sort; 0.46 ms on 569); here the indices are read directly (0.04 ms).
    The formulas are numpy's (``numpy/lib/_function_base_impl.py``, ``_QuantileMethods["midpoint"]`` and
    ``_lerp``), so the results are the same numbers: the virtual index ``(floor(i) + ceil(i)) / 2`` of
    ``i = (n - 1) q``, at a half index ``b - (b - a) / 2`` of its neighbours ``a``, ``b``, else the value there.

    Parameters
    ----------
    sorted_values : ndarray of shape (n_values,), dtype float64
        Increasing, at least one value.
    percentiles : ndarray of shape (n_percentiles,), dtype float64
        In [0, 100].

    Returns
    -------
    ndarray of shape (n_percentiles,), dtype float64
    """
    position = (sorted_values.shape[0] - 1) * (percentiles / 100)
    virtual_index = 0.5 * (np.floor(position) + np.ceil(position))
    result = np.empty(percentiles.shape[0])
    for k in range(percentiles.shape[0]):
        below = int(np.floor(virtual_index[k]))
        above = min(below + 1, sorted_values.shape[0] - 1)
        low, high = sorted_values[below], sorted_values[above]
        halfway = virtual_index[k] % 1 != 0
        result[k] = high - (high - low) * 0.5 if halfway else low + (high - low) * 0.0
    return result
