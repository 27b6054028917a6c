"""gpuforest/statistics.py: the rows' statistics in int64 fixed point, against exact rational arithmetic."""

from fractions import Fraction

import numpy as np
import pytest

from gpuforest import statistics
from gpuforest.backend import get_backend
from gpuforest.kernels.cpu import fixed_point


@pytest.mark.parametrize("abs_total", [1e-300, 0.3, 1.0, 3.0, 2.0**40 + 1, 1e300])
def test_fixed_point_scale_is_the_largest_power_of_two_within_62_bits(abs_total):
    scale = statistics.fixed_point_scale(abs_total)
    exponent = int(np.log2(scale))
    assert scale == 2.0**exponent
    # abs_total * scale <= 2**62 < abs_total * 2 * scale, unless the exponent is clamped.
    assert Fraction(abs_total) * Fraction(scale) <= 2**62
    if abs(exponent) < statistics._MAX_EXPONENT:
        assert Fraction(abs_total) * Fraction(2 * scale) > 2**62


def test_scales_do_not_depend_on_the_row_order():
    """The same rows in any order give the same scales and the same fixed-point values (permuted): a sum's
    scale is read from an int64 total, exact in any order, so the CPU and the GPU agree."""
    rng = np.random.default_rng(7)
    gradients, hessians = rng.normal(size=1000) * 1e3, rng.uniform(0, 1, 1000)
    order = rng.permutation(1000)
    stats = statistics.newton_statistics(gradients, hessians, 0.0)
    shuffled = statistics.newton_statistics(gradients[order], hessians[order], 0.0)
    np.testing.assert_array_equal(stats.inv_scales, shuffled.inv_scales)
    np.testing.assert_array_equal(stats.row_stats[order], shuffled.row_stats)


@pytest.mark.parametrize("criterion", ["squared_error", "poisson"])
def test_regression_statistics_round_to_the_nearest_fixed_point_value(criterion):
    """Each statistic is the float value times its scale, rounded to the nearest integer (within half a unit,
    computed with exact fractions), and no sum of all the rows overflows int64."""
    rng = np.random.default_rng(3)
    y = rng.poisson(3.0, 200).astype(np.float64)
    weight = rng.uniform(0, 2, 200)
    stats = statistics.regression_statistics(criterion, y, weight)
    y_log_y = np.where(y > 0, y * np.log(np.maximum(y, 1)), 0)
    third = weight * y * y if criterion == "squared_error" else weight * y_log_y
    for column, values in enumerate((weight, weight * y, third)):
        scale = Fraction(1) / Fraction(stats.inv_scales[column])
        for fixed, value in zip(stats.row_stats[:, column], values):
            assert abs(Fraction(int(fixed)) - Fraction(value) * scale) <= Fraction(1, 2)
        assert sum(abs(int(fixed)) for fixed in stats.row_stats[:, column]) <= 2**62


def test_classification_statistics_put_each_weight_in_its_class_slot():
    y = np.array([2, 0, 1, 2, 2])
    weight = np.array([1.0, 0.5, 0.0, 2.0, 1.0])
    stats = statistics.classification_statistics("gini", y, 3, weight)
    np.testing.assert_array_equal(stats.row_slot, y)
    # One weight column, one scale for every class slot and 1 for the count slot.
    np.testing.assert_array_equal(stats.row_stats[:, 0] * stats.inv_scales[0], weight)
    assert stats.n_slots == 4 and stats.inv_scales[-1] == 1.0 and np.all(stats.inv_scales[:3] == stats.inv_scales[0])


@pytest.mark.parametrize("constant", [False, True])
def test_newton_statistics_leave_the_count_bits_free(constant):
    """The packed statistic's scale keeps ``(sum << count_bits) + count`` within int64 for every
    subset of rows, at the largest multiplicity; the other one uses its 62 bits."""
    rng = np.random.default_rng(186)
    n_samples, max_multiplicity = 1000, 3
    gradients = rng.normal(size=n_samples) * 1e5
    hessians = np.full(n_samples, 2.5) if constant else rng.uniform(0.0, 1e-3, n_samples)
    stats = statistics.newton_statistics(gradients, hessians, 0.0, max_multiplicity=max_multiplicity)
    assert stats.count_bits == 10 and (stats.constant_hessian is not None) == constant
    packed, other = (0, 1) if constant else (1, 0)
    packed_sum = int(np.abs(stats.row_stats[:, packed]).sum()) * max_multiplicity
    assert 2**61 < packed_sum << stats.count_bits <= 2**62
    if not constant:
        assert 2**61 < int(np.abs(stats.row_stats[:, other]).sum()) * max_multiplicity <= 2**62


def test_fixed_point_statistics_follow_the_two_step_scale():
    """Each column's scale from the int64 total of ``rint(|v| * s0)`` with ``s0`` sized by its largest
    value, then ``rint(v * scale)``: the CPU's passes against numpy written out (several chunks of rows)."""
    rng = np.random.default_rng(8)
    n_rows = 3 * fixed_point.CHUNK_ROWS + 17
    columns = (rng.normal(size=n_rows) * 1e3, rng.uniform(0, 1e-6, n_rows), np.zeros(n_rows))
    fixed, inv_scales = statistics._to_fixed(columns, (3, 3, 12))
    for column, values in enumerate(columns):
        first_scale = statistics.fixed_point_scale(np.abs(values).max() * n_rows)
        total = int(np.rint(np.abs(values) * first_scale).astype(np.int64).sum())
        scale = statistics.fixed_point_scale(total / first_scale * (3, 3, 12)[column])
        assert inv_scales[column] == 1.0 / scale
        np.testing.assert_array_equal(fixed[:, column], np.rint(values * scale).astype(np.int64))
    assert 2**61 < np.abs(fixed[:, 0]).sum() * 3 <= 2**62  # the scale uses the 62 bits


def test_fixed_point_statistics_on_the_device_equal_the_cpus():
    """``_to_fixed`` through the CUDA backend's kernels (columns on the device): the same scales and values."""
    rng = np.random.default_rng(11)
    columns = (rng.normal(size=300) * 1e3, rng.uniform(0, 1e-6, 300))
    backend = get_backend("cuda")
    fixed, inv_scales = statistics._to_fixed(backend.to_device_many(*columns), (3, 2**9), backend)
    expected_fixed, expected_inv_scales = statistics._to_fixed(columns, (3, 2**9))
    np.testing.assert_array_equal(backend.to_host(fixed), expected_fixed)
    np.testing.assert_array_equal(inv_scales, expected_inv_scales)
