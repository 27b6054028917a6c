"""``BinMapper``: categorical features (bins are the codes, checked before any kernel; numeric features unchanged)
and float64 values (thresholds as HistGradientBoosting's)."""

import numpy as np
import pytest

import gpuforest
from gpuforest.backend import get_backend
from gpuforest import binning
from gpuforest.binning import BinMapper, sorted_midpoint_percentiles


def mixed_columns(rng, n_samples):
    """Float32 X: a numeric feature, a categorical one with codes 0, 1, 3, 6 (2, 4, 5 unused) and NaN,
    another numeric one."""
    X = rng.normal(size=(n_samples, 3)).astype(np.float32)
    X[:, 1] = rng.choice([0.0, 1.0, 3.0, 6.0, np.nan], n_samples)
    X[rng.random(n_samples) < 0.1, 0] = np.nan
    return X


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_categorical_bins_are_the_codes(device):
    X = mixed_columns(np.random.default_rng(0), 40)
    mapper = BinMapper(max_bins=16, is_categorical=[False, True, False]).fit(X)
    backend = get_backend(device)
    bins = backend.to_host(mapper.transform(X, backend))
    codes = X[:, 1]
    expected = np.where(np.isnan(codes), mapper.missing_bin, np.nan_to_num(codes)).astype(np.uint8)
    np.testing.assert_array_equal(bins[:, 1], expected)
    assert mapper.n_categories_.tolist() == [0, 7, 0]  # the largest code + 1, unused codes included
    assert mapper.n_bins_non_missing_[1] == 7
    assert mapper.is_categorical.dtype == bool and mapper.is_categorical.tolist() == [False, True, False]


def test_categories_count_every_row_not_only_the_subsample():
    """Thresholds come from a subsample, but a code seen only outside it still gets its own bin."""
    X = np.zeros((1000, 1), dtype=np.float32)
    X[:, 0] = np.arange(1000) % 5
    X[-1, 0] = 9.0
    mapper = BinMapper(max_bins=16, subsample=100, is_categorical=[True]).fit(X)
    bins = mapper.transform(X, get_backend("cpu"))
    np.testing.assert_array_equal(bins[:, 0], X[:, 0].astype(np.uint8))
    assert mapper.n_categories_[0] == 10


def test_numeric_features_bin_as_without_categorical_ones():
    """A categorical feature changes nothing of the numeric ones: thresholds, bins and split thresholds
    are those of a mapper fitted on the numeric features alone."""
    X = mixed_columns(np.random.default_rng(1), 400)
    mixed = BinMapper(max_bins=32, is_categorical=[False, True, False]).fit(X)
    numeric = BinMapper(max_bins=32).fit(X[:, [0, 2]])
    np.testing.assert_array_equal(mixed.bin_thresholds_[[0, 2]], numeric.bin_thresholds_)
    backend = get_backend("cpu")
    np.testing.assert_array_equal(mixed.transform(X, backend)[:, [0, 2]], numeric.transform(X[:, [0, 2]], backend))
    bins = np.arange(numeric.n_bins_non_missing_.min() - 1)
    for mixed_feature, numeric_feature in ((0, 0), (2, 1)):
        features = np.full(bins.shape, mixed_feature)
        np.testing.assert_array_equal(
            mixed.split_thresholds(features, bins, bins + 1),
            numeric.split_thresholds(np.full(bins.shape, numeric_feature), bins, bins + 1),
        )


@pytest.mark.parametrize(
    "bad_value, message",
    [
        (-1.0, r"Categorical feature 1 must hold category codes.*-1\.0"),
        (2.5, r"Categorical feature 1 must hold category codes.*2\.5"),
        (np.inf, r"Categorical feature 1 must hold category codes.*inf"),
        (7.0, r"Categorical feature 1 has 8 categories \(codes 0 to 7\); max_bins=8 allows at most 7"),
    ],
)
def test_values_that_are_no_codes_are_refused(bad_value, message):
    X = mixed_columns(np.random.default_rng(2), 50)
    X[5, 1] = bad_value
    with pytest.raises(ValueError, match=message):
        BinMapper(max_bins=8, is_categorical=[False, True, False]).fit(X)


def test_the_largest_code_that_fits():
    """``max_bins - 1`` categories fill every bin but the missing one."""
    X = np.arange(7, dtype=np.float32).reshape(-1, 1)
    mapper = BinMapper(max_bins=8, is_categorical=[True]).fit(X)
    np.testing.assert_array_equal(mapper.transform(X, get_backend("cpu"))[:, 0], np.arange(7))


def test_is_categorical_needs_one_entry_per_feature():
    with pytest.raises(ValueError, match=r"is_categorical must have one entry per feature \(3\)"):
        BinMapper(is_categorical=[True, False]).fit(np.zeros((4, 3), dtype=np.float32))


def timestamps(n_samples=200):
    """Unix timestamps one second apart: float32 (24-bit significand) holds only one in 128 of them."""
    return 1.7e9 + np.arange(n_samples, dtype=np.float64)


def test_timestamps_are_binned_and_learnt_as_by_histgradientboosting():
    """200 timestamps a second apart, which float32 merges into 3 values, with classes alternating along them:
    boosting's thresholds are fitted on float64 values, those of scikit-learn's HistGradientBoosting (the
    midpoints), and its training accuracy is 1.000 like HistGradientBoosting's."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    from gpuforest import GradientBoostingClassifier

    X = timestamps().reshape(-1, 1)
    assert np.unique(X.astype(np.float32)).size < 5
    y = (np.arange(X.shape[0]) // 2) % 2
    peer = HistGradientBoostingClassifier(max_iter=5, learning_rate=1.0, min_samples_leaf=1, early_stopping=False)
    assert peer.fit(X, y).score(X, y) == 1.0
    ours = GradientBoostingClassifier(n_estimators=5, learning_rate=1.0, min_samples_leaf=1, early_stopping=False)
    assert ours.fit(X, y).score(X, y) == 1.0
    # The estimator's mapper: its validation, not the mapper, decides the dtype the thresholds see.
    expected = peer._bin_mapper.bin_thresholds_[0]
    mapper = ours._bin_mapper
    assert mapper.n_thresholds_[0] == expected.size == X.shape[0] - 1
    np.testing.assert_array_equal(mapper.bin_thresholds_[0, : expected.size], expected)


def test_bin_values_are_the_values_of_one_value_bins_and_the_middle_of_others():
    """A naive reading of the fitted values: a bin's one value, or the middle of its smallest and largest."""
    rng = np.random.default_rng(3)
    few = rng.choice([-3.5, 0.25, 2.0, 1e6], 300)  # 4 distinct values, one bin each
    many = rng.normal(size=300)  # quantile bins of several values each
    X = np.column_stack([few, many])
    mapper = BinMapper(max_bins=16).fit(X)
    values = mapper.bin_values()
    assert values.shape == (2, 16)
    np.testing.assert_array_equal(values[0, :4], [-3.5, 0.25, 2.0, 1e6])
    bins = mapper.transform(X, get_backend("cpu"))[:, 1]
    for bin_idx in range(mapper.n_bins_non_missing_[1]):
        in_bin = many[bins == bin_idx]
        assert values[1, bin_idx] == (in_bin.min() + in_bin.max()) / 2
    assert np.all(np.diff(values[1, : mapper.n_bins_non_missing_[1]]) > 0)


@pytest.mark.parametrize("kind", ["normal", "ties", "wide", "one value", "two values"])
def test_sorted_midpoint_percentiles_are_numpys(kind):
    """The same numbers as ``np.percentile(..., method="midpoint")``, bit for bit, at the binning's
    percentiles and at random ones, on sizes whose quantile positions fall on and between values."""
    rng = np.random.default_rng(0)
    binning_percentiles = np.linspace(0, 100, 256)[1:-1]
    for n_values in (1, 2, 3, 254, 255, 256, 569, 1000, 4097):
        values = {
            "normal": rng.normal(size=n_values), "ties": rng.integers(0, 7, n_values).astype(float),
            "wide": rng.lognormal(sigma=5.0, size=n_values) * 1e12, "one value": np.full(n_values, 0.1),
            "two values": np.where(rng.random(n_values) < 0.3, -1e-300, 2.5),
        }[kind]
        values = np.sort(values)
        for percentiles in (binning_percentiles, np.sort(rng.uniform(0, 100, 40)), np.array([0.0, 50.0, 100.0])):
            np.testing.assert_array_equal(
                sorted_midpoint_percentiles(values, percentiles), np.percentile(values, percentiles, method="midpoint")
            )


def test_features_fitted_in_turn_and_on_threads_get_the_same_thresholds(monkeypatch):
    """Small inputs fit their features one after another, large ones on a thread pool: the same mapper."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(binning.PARALLEL_BINNING_SAMPLES, 4))
    X[:, 1] = np.round(X[:, 1], 1)
    on_threads = BinMapper().fit(X)
    monkeypatch.setattr(binning, "PARALLEL_BINNING_SAMPLES", X.shape[0] + 1)
    in_turn = BinMapper().fit(X)
    for name in ("bin_thresholds_", "n_thresholds_", "bin_min_", "bin_max_"):
        np.testing.assert_array_equal(getattr(on_threads, name), getattr(in_turn, name))


@pytest.mark.parametrize("max_bins", [4, 256])
def test_bin_value_ranges_are_the_smallest_and_largest_value_of_each_bin(max_bins):
    """``bin_min_``/``bin_max_``: per bin the smallest and largest value that ``map_to_bins`` puts there (numpy's
    own minimum and maximum per bin), +inf / -inf for a bin without values; NaN in none."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(3000, 4))
    X[:, 1] = rng.integers(0, 6, 3000)  # few distinct values: one per bin
    X[:, 2] = np.exp(rng.normal(0.0, 4.0, 3000))  # skewed
    X[:, 3] = np.where(rng.random(3000) < 0.5, -1.0, 7.5)
    X[rng.random(X.shape) < 0.1] = np.nan
    mapper = BinMapper(max_bins=max_bins).fit(X)
    bins = mapper.transform(X, get_backend("cpu"))
    for feature in range(X.shape[1]):
        present = ~np.isnan(X[:, feature])
        values, feature_bins = X[present, feature], bins[present, feature]
        for bin_idx in range(max_bins - 1):
            in_bin = values[feature_bins == bin_idx]
            expected_min, expected_max = (in_bin.min(), in_bin.max()) if in_bin.size else (np.inf, -np.inf)
            assert mapper.bin_min_[feature, bin_idx] == expected_min
            assert mapper.bin_max_[feature, bin_idx] == expected_max


def test_the_fitted_layout_has_a_bin_more_than_the_widest_feature_the_last_for_missing_values():
    rng = np.random.default_rng(0)
    X = np.c_[rng.integers(0, 5, 300), rng.integers(0, 17, 300), rng.integers(0, 3, 300)].astype(float)
    X[::7, 1] = np.nan
    mapper = BinMapper(256, is_categorical=[True, False, False])
    assert (mapper.n_bins, mapper.missing_bin) == (256, 255)  # unfitted
    mapper.fit(X)
    assert (mapper.n_bins, mapper.missing_bin) == (18, 17)
    X_binned = mapper.transform(X, get_backend("cpu"))
    np.testing.assert_array_equal(X_binned[::7, 1], 17)
    assert X_binned[~np.isnan(X)].max() == 16


@pytest.mark.parametrize("make_estimator", [
    lambda: gpuforest.DecisionTreeClassifier(random_state=0),
    lambda: gpuforest.DecisionTreeClassifier(algorithm="c45"),
    lambda: gpuforest.GradientBoostingClassifier(n_estimators=10, random_state=0),
    lambda: gpuforest.RandomForestClassifier(n_estimators=5, max_features=2, random_state=0),
    lambda: gpuforest.ExtraTreesRegressor(n_estimators=3, random_state=0),
    lambda: gpuforest.DecisionTreeClassifier(categorical_features=[0], random_state=0),
], ids=["tree", "c45", "boosting", "forest", "extra-trees", "categorical"])
def test_the_narrow_layout_of_few_distinct_values_grows_the_trees_of_the_full_width_one(make_estimator, monkeypatch):
    """Histograms as wide as the most bins a feature takes (plus the missing bin): the same trees as
    ``max_bins``-wide histograms with the missing bin last."""
    rng = np.random.default_rng(1)
    X = np.c_[rng.integers(0, 6, 800), rng.integers(0, 12, 800), rng.normal(size=800).round(1)]
    y = ((X[:, 0] % 3 == 1) ^ (X[:, 1] > 5) ^ (X[:, 2] > 0.5)).astype(int)
    X[rng.integers(0, 800, 60), rng.integers(0, 3, 60)] = np.nan
    narrow = make_estimator().fit(X, y)
    assert narrow._bin_mapper.n_bins < 256
    monkeypatch.setattr(BinMapper, "n_bins", property(lambda mapper: mapper.max_bins))
    wide = make_estimator().fit(X, y)
    assert wide._bin_mapper.missing_bin == 255
    prediction = narrow.predict_proba if hasattr(narrow, "predict_proba") else narrow.predict
    np.testing.assert_array_equal(prediction(X), (wide.predict_proba if hasattr(wide, "predict_proba") else wide.predict)(X))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("max_bins", [4, 32, 256])
@pytest.mark.filterwarnings("ignore:overflow encountered in add:RuntimeWarning")  # numpy's midpoint of the largest
def test_a_small_dense_fit_gives_the_per_feature_thresholds(dtype, max_bins, monkeypatch):
    """Below ``PARALLEL_BINNING_SAMPLES`` rows a dense X's numeric features are fitted in one compiled call
    (``_fit_numeric_features``): the arrays of the per-feature numpy fit, bit for bit, whether a feature has
    fewer distinct values than bins (midpoints) or more (midpoint percentiles), NaNs, one value or none, and
    midpoints that round up to the upper value or overflow (so that a bin holds no value alone)."""
    rng = np.random.default_rng(max_bins)
    n_samples = 600
    above_one = np.nextafter(1.0, 2.0)
    largest = np.finfo(dtype).max
    X = np.column_stack([
        rng.normal(size=n_samples),  # distinct values beyond the bins: percentiles
        rng.integers(0, 3, n_samples),  # few values: midpoints
        np.round(rng.normal(size=n_samples), 1),  # ties
        np.full(n_samples, 2.5),  # one value
        np.full(n_samples, np.nan),  # none
        rng.choice([above_one, np.nextafter(above_one, 2.0)], n_samples),  # the midpoint rounds up (float64)
        rng.choice([largest / 2, largest], n_samples),  # the midpoint overflows (float64)
        rng.choice([0.0, 2.0, np.nan], n_samples),  # categorical codes
    ]).astype(dtype)
    X[rng.random(n_samples) < 0.1, 0] = np.nan
    is_categorical = [False] * 7 + [True]
    compiled = BinMapper(max_bins=max_bins, is_categorical=is_categorical).fit(X)
    monkeypatch.setattr(binning, "PARALLEL_BINNING_SAMPLES", 0)  # the per-feature numpy fit
    reference = BinMapper(max_bins=max_bins, is_categorical=is_categorical).fit(X)
    for name in ("bin_thresholds_", "n_thresholds_", "bin_min_", "bin_max_", "n_bins_non_missing_", "n_bins_"):
        np.testing.assert_array_equal(getattr(compiled, name), getattr(reference, name), err_msg=name)
    assert np.unique(X[~np.isnan(X[:, 0]), 0]).size > max_bins - 1  # the percentile path ran
    assert compiled.n_thresholds_[1] == min(2, max_bins - 2) and compiled.n_thresholds_[4] == 0
