"""Kernel tier, kernels/cpu/multiway.py: the multiway gains against Quinlan's information gain and J48's gain
ratio (``gpuforest.information``, on the rows the histograms are made of), the partition against a stable sort
in Python."""

import math

import numpy as np
import pytest

from gpuforest.information import information_gain, intrinsic_value
from gpuforest.kernels.common import NO_SPLIT
from gpuforest.kernels.cpu import multiway

try:
    from .kernel_problems import (
        C45_MIN_OBJECTS, N_CLASSES, WEIGHT_SCALE, c45_problem, multiway_gain_problem, multiway_partition_args,
        multiway_partition_problem,
    )
except ImportError:
    from kernel_problems import (
        C45_MIN_OBJECTS, N_CLASSES, WEIGHT_SCALE, c45_problem, multiway_gain_problem, multiway_partition_args,
        multiway_partition_problem,
    )


def reference_gain(codes, classes, weights, min_samples_leaf, min_weight_leaf):
    """``W_known * gain`` (C4.5's gain of the rows with a value, times their weight), -inf when a
    non-empty child breaks a minimum or fewer than two children hold rows."""
    known = ~np.isnan(codes)
    values, counts = np.unique(codes[known], return_counts=True)
    child_weights = np.array([WEIGHT_SCALE * weights[known][codes[known] == value].sum() for value in values])
    if values.size < 2 or counts.min() < min_samples_leaf or child_weights.min() < min_weight_leaf:
        return -math.inf
    known_weight = WEIGHT_SCALE * weights[known].sum()
    return known_weight * information_gain(classes[known], codes[known], sample_weight=weights[known])


def test_multiway_gains_are_quinlans_gain_times_the_known_weight():
    rng = np.random.default_rng(0)
    args, nodes = multiway_gain_problem(rng)
    multiway.multiway_gains(*args)
    gains, feature_mask, min_samples_leaf = args[-1], args[3], args[9]
    expected = np.full(gains.shape, -math.inf)
    for node, (codes, classes, weights) in enumerate(nodes):
        for feature in np.flatnonzero(feature_mask[node]):
            expected[node, feature] = reference_gain(codes[:, feature], classes, weights, min_samples_leaf, 1.0)
    assert np.isfinite(expected).sum() >= 8 and np.isinf(expected[feature_mask]).any()
    np.testing.assert_allclose(gains, expected, rtol=1e-12, atol=1e-12)


def reference_c45_split(values, classes, weights, categorical):
    """J48's ``C45Split`` on one node's rows (NaN: missing): ``(gain, gain_ratio, threshold)``, ``(-inf, 0,
    NO_SPLIT)`` without a valid split. Weights are ``WEIGHT_SCALE * weights``."""
    weights = WEIGHT_SCALE * weights
    known = ~np.isnan(values)
    total, known_weight = weights.sum(), weights[known].sum()
    invalid = (-math.inf, 0.0, NO_SPLIT)
    outcome = np.where(known, values, -1.0)  # the unknown cases as one more outcome of the split information
    if categorical:
        branch_weights = [weights[values == code].sum() for code in np.unique(values[known])]
        if sum(w >= C45_MIN_OBJECTS for w in branch_weights) < 2:
            return invalid
        gain = known_weight / total * information_gain(classes[known], values[known], sample_weight=weights[known])
        return gain, gain / intrinsic_value(outcome, sample_weight=weights), NO_SPLIT
    min_split = min(max(0.1 * known_weight / N_CLASSES, C45_MIN_OBJECTS), 25.0)
    if known_weight < 2 * min_split:
        return invalid
    best, best_threshold, n_candidates = 0.0, NO_SPLIT, 0
    for threshold in np.unique(values[known])[:-1]:
        left = values[known] <= threshold
        if min(weights[known][left].sum(), weights[known][~left].sum()) < min_split:
            continue
        n_candidates += 1
        decrease = known_weight * information_gain(classes[known], left, sample_weight=weights[known])
        if decrease > best + 1e-9:
            best, best_threshold = decrease, threshold
    gain = (best - np.log2(max(n_candidates, 1))) / total
    if n_candidates == 0 or best_threshold == NO_SPLIT or gain <= 0:
        return invalid
    side = np.where(known, values <= best_threshold, -1.0)
    return gain, gain / intrinsic_value(side, sample_weight=weights), int(best_threshold)


def test_c45_split_gains_are_j48s_gain_ratio_and_threshold():
    args, nodes = c45_problem(np.random.default_rng(0))
    multiway.c45_split_gains(*args)
    feature_mask, is_categorical = args[3], args[4]
    gain, ratio, threshold = args[-3:]
    n_valid = 0
    for node, (values, classes, weights) in enumerate(nodes):
        for feature in range(len(is_categorical)):
            expected = reference_c45_split(values[:, feature], classes, weights, is_categorical[feature])
            if not feature_mask[node, feature]:
                expected = (-math.inf, 0.0, NO_SPLIT)
            n_valid += np.isfinite(expected[0])
            np.testing.assert_allclose(gain[node, feature], expected[0], rtol=1e-9, err_msg=(node, feature))
            np.testing.assert_allclose(ratio[node, feature], expected[1], rtol=1e-9, err_msg=(node, feature))
            assert threshold[node, feature] == expected[2], (node, feature)
    assert 8 <= n_valid < gain.size and (threshold >= 0).sum() >= 3


def reference_partition(X_binned, sample_indices, node_start, node_stop, split_feature, n_children, n_parts):
    """Each node's rows stably sorted by ``min(bin, n_children)``, and the rows per part."""
    out = sample_indices.copy()
    part_counts = np.zeros((node_start.shape[0], n_parts), dtype=np.int64)
    for node, (start, stop) in enumerate(zip(node_start, node_stop)):
        rows = list(sample_indices[start:stop])
        parts = [min(int(X_binned[row, split_feature[node]]), int(n_children[node])) for row in rows]
        out[start:stop] = sorted(rows, key=lambda row: parts[rows.index(row)])
        part_counts[node] = np.bincount(parts, minlength=n_parts)
    return out, part_counts


@pytest.mark.parametrize("chunk_rows", [3, 1000])
def test_apply_multiway_splits_sorts_each_node_stably_by_code(chunk_rows):
    problem = multiway_partition_problem(np.random.default_rng(2), node_sizes=[40, 0, 17, 1, 25])
    args = multiway_partition_args(problem)
    expected_indices, expected_counts = reference_partition(*problem, args[-1].shape[1])
    multiway._apply_multiway_splits(*args, chunk_rows)
    np.testing.assert_array_equal(args[1], expected_indices)
    np.testing.assert_array_equal(args[-1], expected_counts)
