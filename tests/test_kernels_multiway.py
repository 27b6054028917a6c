"""Multiway split kernels (``kernels/*/multiway.py``): gains against Quinlan's information gain
(``gpuforest.information``, on the rows the histograms are made of), the partition against a stable
sort in Python, and the CUDA twins against the CPU kernels, bit for bit (simulator: tiny problems)."""

import math

import numpy as np
import pytest

from gpuforest.information import information_gain, intrinsic_value
from gpuforest.kernels.common import ENTROPY, NO_SPLIT
from gpuforest.kernels.cpu import multiway
from gpuforest.kernels.cuda import multiway as cuda_multiway

try:
    from .cuda_twins import assert_all_equal, run_both
except ImportError:
    from cuda_twins import assert_all_equal, run_both

N_CLASSES = 3
WEIGHT_SCALE = 0.5  # class slots hold weights in units of 0.5


def node_rows(rng, n_rows, n_codes, missing_fraction):
    """Codes (NaN: missing) of each feature, classes and integer weights of one node's rows."""
    codes = np.stack([rng.integers(0, k, n_rows).astype(float) for k in n_codes], axis=1)
    codes[rng.random(codes.shape) < missing_fraction] = np.nan
    return codes, rng.integers(0, N_CLASSES, n_rows), rng.integers(1, 4, n_rows)


def node_histograms(nodes, n_features, missing_bin):
    """The histograms (n_nodes, n_features, missing_bin + 1, N_CLASSES + 1) of ``node_rows``' nodes: class weights and
    row counts per bin (a value's bin is the value; NaN: ``missing_bin``)."""
    hist = np.zeros((len(nodes), n_features, missing_bin + 1, N_CLASSES + 1), dtype=np.int64)
    for node, (codes, classes, weights) in enumerate(nodes):
        bins = np.where(np.isnan(codes), missing_bin, np.nan_to_num(codes)).astype(np.int64)
        for feature in range(n_features):
            np.add.at(hist[node, feature], (bins[:, feature], classes), weights)
            np.add.at(hist[node, feature], (bins[:, feature], N_CLASSES), 1)
    return hist


def gain_problem(rng, n_codes=(4, 2, 3, 1), missing_bin=5):
    """The gain kernels' inputs for nodes made of random rows, and the rows themselves."""
    nodes = [node_rows(rng, n_rows, n_codes, missing) for n_rows, missing in
             ((40, 0.0), (25, 0.2), (9, 0.0), (3, 0.0), (12, 0.5), (30, 0.1))]
    hist = node_histograms(nodes, len(n_codes), missing_bin)
    feature_mask = rng.random((len(nodes), len(n_codes))) < 0.8
    feature_mask[0] = True
    inv_scales = np.array([WEIGHT_SCALE] * N_CLASSES + [1.0])
    args = [
        hist, np.arange(len(nodes), dtype=np.int64)[::-1].copy(), hist[:, 0].sum(axis=1)[::-1].copy(),
        feature_mask[::-1].copy(), np.array(n_codes, dtype=np.int32), missing_bin, ENTROPY, inv_scales, (0.0, 0.0),
        2, np.full(len(nodes), 1.0), np.empty((len(nodes), len(n_codes))),
    ]
    return args, nodes[::-1]


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
    args, nodes = gain_problem(rng)
    multiway.multiway_gains(*args)
    gains, feature_mask, min_samples_leaf = args[-1], args[3], args[9]
    expected = np.full(gains.shape, -math.inf)
    for node, (codes, classes, weights) in enumerate(nodes):
        for feature in np.flatnonzero(feature_mask[node]):
            expected[node, feature] = reference_gain(codes[:, feature], classes, weights, min_samples_leaf, 1.0)
    assert np.isfinite(expected).sum() >= 8 and np.isinf(expected[feature_mask]).any()
    np.testing.assert_allclose(gains, expected, rtol=1e-12, atol=1e-12)


def test_multiway_gains_on_cuda_equal_cpu():
    args, _ = gain_problem(np.random.default_rng(1))
    assert_all_equal(*run_both(multiway.multiway_gains, cuda_multiway.multiway_gains, args))


C45_MIN_OBJECTS = 2.0


def c45_problem(rng, is_categorical=(True, False, True, False), n_bins=(4, 7, 2, 5), missing_bin=8):
    """``c45_split_gains``' inputs for nodes of random rows (numeric features: bins as ordered values), and the rows."""
    nodes = [node_rows(rng, n_rows, n_bins, missing) for n_rows, missing in
             ((40, 0.0), (25, 0.2), (9, 0.0), (3, 0.0), (12, 0.5), (60, 0.1), (30, 0.0))]
    hist = node_histograms(nodes, len(n_bins), missing_bin)
    n_nodes, n_features = len(nodes), len(n_bins)
    n_slots = N_CLASSES + 1
    feature_mask = rng.random((n_nodes, n_features)) < 0.9
    feature_mask[0] = True
    args = [
        hist, np.arange(n_nodes, dtype=np.int64), hist[:, 0].sum(axis=1), feature_mask,
        np.array(is_categorical), np.array(n_bins, dtype=np.int32), missing_bin,
        np.array([WEIGHT_SCALE] * N_CLASSES + [1.0]), C45_MIN_OBJECTS,
        np.empty((n_nodes * n_features, 2, n_slots), dtype=np.int64), np.empty((n_nodes, n_features)),
        np.empty((n_nodes, n_features)), np.empty((n_nodes, n_features), dtype=np.int32),
    ]
    return args, nodes


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


def test_c45_split_gains_on_cuda_equal_cpu():
    args, _ = c45_problem(np.random.default_rng(1))
    assert_all_equal(*run_both(multiway.c45_split_gains, cuda_multiway.c45_split_gains, args))


def partition_problem(rng, node_sizes, n_codes=(3, 2, 5), missing_bin=7):
    """X_binned (codes and missing bins), shuffled sample indices, and nodes over disjoint ranges with
    a gap between them, each with a feature and its number of children."""
    n_samples = sum(node_sizes) + 2 * len(node_sizes)
    X_binned = np.asfortranarray(np.stack([rng.integers(0, k, n_samples) for k in n_codes], axis=1).astype(np.uint8))
    X_binned[rng.random(X_binned.shape) < 0.1] = missing_bin
    sample_indices = rng.permutation(n_samples).astype(np.int32)
    node_start = np.cumsum([0] + [size + 2 for size in node_sizes[:-1]]).astype(np.int64)
    node_stop = node_start + np.array(node_sizes, dtype=np.int64)
    split_feature = (np.arange(len(node_sizes)) % len(n_codes)).astype(np.int32)
    n_children = np.array(n_codes, dtype=np.int64)[split_feature]
    return X_binned, sample_indices, node_start, node_stop, split_feature, n_children


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


def partition_args(problem):
    X_binned, sample_indices, node_start, node_stop, split_feature, n_children = problem
    part_counts = np.empty((node_start.shape[0], int(n_children.max()) + 1), dtype=np.int64)
    return [X_binned, sample_indices, np.empty_like(sample_indices), node_start, node_stop, split_feature, n_children,
            part_counts]


@pytest.mark.parametrize("chunk_rows", [3, 1000])
def test_apply_multiway_splits_sorts_each_node_stably_by_code(chunk_rows):
    problem = partition_problem(np.random.default_rng(2), node_sizes=[40, 0, 17, 1, 25])
    args = partition_args(problem)
    expected_indices, expected_counts = reference_partition(*problem, args[-1].shape[1])
    multiway._apply_multiway_splits(*args, chunk_rows)
    np.testing.assert_array_equal(args[1], expected_indices)
    np.testing.assert_array_equal(args[-1], expected_counts)


def test_apply_multiway_splits_on_cuda_equals_cpu():
    # 16 rows per thread of 32-thread blocks: the first node spans three tiles.
    problem = partition_problem(np.random.default_rng(3), node_sizes=[1100, 30, 0, 7])
    cpu_args, cuda_args = run_both(multiway.apply_multiway_splits, cuda_multiway.apply_multiway_splits,
                                   partition_args(problem))
    assert_all_equal(
        [cpu_args[1], cpu_args[-1]], [cuda_args[1], cuda_args[-1]]
    )
