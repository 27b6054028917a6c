"""CUDA split kernels (numba's simulator) against the CPU kernels: identical outputs, floats included.

Both paths (from histograms, from rows) on the same small batches as
``test_kernels_cuda_histogram.py``: every criterion, several trees with rows
drawn up to three times, missing bins, one-row and empty nodes, feature masks
(a node without any feature), ``min_samples_leaf`` and ``min_weight_leaf``.
The CUDA kernels scan the bins in parallel and reduce; the CPU scans them in
order, so exact ties (misclassification's dyadic weights, duplicated
features) check that the reduction picks the CPU's candidate. Random
thresholds (extra trees) run through the same comparison, and so do
categorical features (their own blocks: the categories ranked in the block,
every subset tried for few categories of many classes). Launch
constants are small under the simulator (every CUDA thread is a Python
thread) except in the 256-bin test.
"""

import math
import sys

import numpy as np
import pytest

from gpuforest import statistics
from gpuforest.backend import split_constraints
from gpuforest.kernels.common import FROM_ROWS, NO_SPLIT, NOT_SEARCHED
from gpuforest.kernels.cpu import sampling as cpu_sampling
from gpuforest.kernels.cpu import splitting as cpu_splitting
from gpuforest.kernels.cuda import splitting as cuda_splitting

try:
    from . import reference as ref
    from .kernel_problems import CRITERIA, both_split_paths, cpu_rows, find_best_splits, make_statistics
    from .test_kernels_cuda_histogram import cpu_histograms, cpu_totals, make_batch
except ImportError:
    import reference as ref
    from kernel_problems import CRITERIA, both_split_paths, cpu_rows, find_best_splits, make_statistics
    from test_kernels_cuda_histogram import cpu_histograms, cpu_totals, make_batch

OUTPUTS = ("gain", "feature", "bin", "missing_left", "left_totals", "next_bin", "categorical", "category_bitset")


@pytest.fixture
def small_launches(monkeypatch):
    """Blocks of 8 to 16 threads (bins below 16): fast under the simulator.

    The simulator's block manager polls its threads for barriers while holding
    the GIL; a short switch interval roughly halves the time of small blocks.
    """
    monkeypatch.setattr(cuda_splitting, "MIN_SCAN_THREADS", 8)
    monkeypatch.setattr(cuda_splitting, "PICK_THREADS", 4)
    monkeypatch.setattr(cuda_splitting, "FINISH_ROWS_THREADS", 4)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    yield
    sys.setswitchinterval(interval)


def run_both(
    module, batch, stats, totals, masks, min_samples_leaf, min_weight_leaf, hist, hist_rows, draws=None,
    categorical_features=None,
):
    """``module.find_best_splits`` (cpu or cuda) of every node from its histogram, then from its rows, then each
    node its own way (from its histogram, its rows, or not searched, in turn); returns the three output dicts.

    ``draws`` (n_nodes, n_features) asks for random thresholds; ``None``, for the best ones.
    ``categorical_features``: the categorical features' indices (None: none).
    """
    if categorical_features is None:
        categorical_features = np.empty(0, dtype=np.int32)
    if draws is None:
        draws = np.empty((0, masks.shape[1]))
    if module is cpu_splitting:
        batch = cpu_rows(batch)
    args = (
        batch, stats, totals, masks, categorical_features, draws,
        ref.skewed_bin_values(masks.shape[1], batch["missing_bin"] + 1), batch["missing_bin"], min_samples_leaf,
        min_weight_leaf, *split_constraints(None, None, masks.shape),
    )
    way = np.arange(hist_rows.shape[0]) % 3
    mixed_rows = np.where(way == 0, hist_rows, np.where(way == 1, FROM_ROWS, NOT_SEARCHED))
    return (*both_split_paths(module, hist, hist_rows, *args), find_best_splits(module, hist, mixed_rows, *args))


def assert_cuda_matches_cpu(
    batch, stats, masks, min_samples_leaf, min_weight_leaf, rng, draws=None, categorical_features=None
):
    """CUDA == CPU for both paths, bit for bit; returns the CPU's histogram-path result."""
    totals = cpu_totals(batch, stats)
    node_hist = cpu_histograms(batch, stats)
    # The histograms at shuffled rows among unrelated ones (the hist_rows indirection).
    n_nodes = totals.shape[0]
    hist = rng.integers(-(10**6), 10**6, (n_nodes + 2,) + node_hist.shape[1:])
    hist_rows = rng.permutation(n_nodes + 2)[:n_nodes].astype(np.int64)
    hist[hist_rows] = node_hist
    args = (
        batch, stats, totals, masks, min_samples_leaf, min_weight_leaf, hist, hist_rows, draws, categorical_features
    )
    expected_hist, expected_rows, expected_mixed = run_both(cpu_splitting, *args)
    got_hist, got_rows, got_mixed = run_both(cuda_splitting, *args)
    for name in OUTPUTS:
        np.testing.assert_array_equal(got_hist[name], expected_hist[name], err_msg=f"from_histograms {name}")
        np.testing.assert_array_equal(got_rows[name], expected_rows[name], err_msg=f"from_rows {name}")
        np.testing.assert_array_equal(got_mixed[name], expected_mixed[name], err_msg=f"mixed {name}")
        assert got_hist[name].dtype == expected_hist[name].dtype
    # Bit for bit, not just ==: -0.0 / 0.0 and NaN payloads count.
    assert got_hist["gain"].tobytes() == expected_hist["gain"].tobytes()
    assert got_rows["gain"].tobytes() == expected_rows["gain"].tobytes()
    return expected_hist


def node_weights(criterion, totals, stats):
    count_slots = totals[:, :-1] * stats.inv_scales[:-1]
    if criterion in ("gini", "entropy", "misclassification"):
        return count_slots.sum(axis=1)
    return count_slots[:, 1] if criterion == "newton" else count_slots[:, 0]


# criterion, max_bins, min_samples_leaf, min_weight_leaf as a fraction of the node's weight,
# newton's (l2, l1)
NO_REGULARIZATION = (0.0, 0.0)
SETTINGS = [
    ("gini", 9, 1, 0.0, NO_REGULARIZATION),
    ("entropy", 16, 2, 0.1, NO_REGULARIZATION),
    ("misclassification", 9, 1, 0.0, NO_REGULARIZATION),
    ("squared_error", 8, 3, 0.0, NO_REGULARIZATION),
    ("poisson", 9, 1, 0.2, NO_REGULARIZATION),
    ("newton", 16, 2, 0.0, (1.5, 0.7)),
    ("gini", 16, 4, 0.25, NO_REGULARIZATION),
    ("entropy", 8, 1, 0.0, NO_REGULARIZATION),
    ("misclassification", 16, 3, 0.1, NO_REGULARIZATION),
    ("squared_error", 9, 1, 0.3, NO_REGULARIZATION),
    ("newton", 9, 1, 0.1, (0.0, 0.4)),
]


# Every setting with statistics shared by the trees; a classification and the newton one with
# statistics per tree (stats_stride = n_samples).
SPLIT_CASES = [setting + (None,) for setting in SETTINGS] + [SETTINGS[0] + (2,), SETTINGS[5] + (2,)]


@pytest.mark.parametrize(
    "criterion, max_bins, min_samples_leaf, weight_fraction, regularization, n_trees", SPLIT_CASES
)
def test_splits_match_cpu(
    criterion, max_bins, min_samples_leaf, weight_fraction, regularization, n_trees, small_launches
):
    rng = np.random.default_rng(
        SETTINGS.index((criterion, max_bins, min_samples_leaf, weight_fraction, regularization))
    )
    batch = make_batch(rng, n_samples=36, max_bins=max_bins, n_sub_nodes=1)
    stats = make_statistics(rng, criterion, 36, *regularization, n_trees=n_trees)
    totals = cpu_totals(batch, stats)
    if criterion in ("gini", "squared_error") or (criterion == "newton" and regularization[0] == 0):
        # The CPU kernels divide by a node's weight before they look at any
        # candidate, and raise ZeroDivisionError for a weightless (e.g. empty)
        # node with these criteria: test_empty_and_weightless_nodes covers those.
        keep = node_weights(criterion, totals, stats) > 0
        batch = {**batch, **{k: batch[k][keep] for k in ("node_start", "node_stop", "node_tree")}}
        totals = totals[keep]
    n_nodes, n_features = totals.shape[0], batch["X_binned"].shape[1]
    masks = rng.random((n_nodes, n_features)) < 0.75
    masks[0] = True
    masks[1] = False  # no feature at all: no split
    masks[2, 0] = False  # the feature that never misses is excluded
    min_weight_leaf = weight_fraction * node_weights(criterion, totals, stats)
    expected = assert_cuda_matches_cpu(batch, stats, masks, min_samples_leaf, min_weight_leaf, rng)
    assert expected["feature"][1] == NO_SPLIT
    assert np.sum(expected["feature"] != NO_SPLIT) >= 2  # the test is not vacuous


def test_splits_match_cpu_with_256_bins():
    """The real block size: 256 threads, one per bin, missing bin 255."""
    rng = np.random.default_rng(40)
    batch = make_batch(rng, n_samples=50, n_features=2, max_bins=256, n_trees=1, n_sub_nodes=1, small_nodes=False)
    stats = make_statistics(rng, "entropy", 50)
    assert cuda_splitting.scan_threads(256) == 256
    masks = np.ones((2, 2), dtype=bool)
    expected = assert_cuda_matches_cpu(batch, stats, masks, 1, np.zeros(2), rng)
    assert (expected["feature"] != NO_SPLIT).all()


@pytest.mark.parametrize("categorical_features", [None, (0, 2)])
def test_splits_match_cpu_with_work_histograms_in_global_scratch(categorical_features, small_launches, monkeypatch):
    """Many classes: the work histograms go to global scratch, in several launches of 5 blocks;
    phase 2 on one block (grid-stride over the nodes). Numeric features, and two categorical ones."""
    monkeypatch.setattr(cuda_splitting, "WORK_SHARED_BYTES", 0)
    monkeypatch.setattr(cuda_splitting, "MAX_BLOCKS", 1)
    monkeypatch.setattr(cuda_splitting, "WORK_SCRATCH_BYTES", 5 * 16 * 4 * 8)
    rng = np.random.default_rng(41)
    batch = make_batch(rng, n_samples=30, max_bins=9, n_sub_nodes=1)
    stats = make_statistics(rng, "entropy", 30)
    n_nodes = batch["node_start"].size
    masks = np.ones((n_nodes, 3), dtype=bool)
    if categorical_features is not None:
        categorical_features = np.array(categorical_features, dtype=np.int32)
    expected = assert_cuda_matches_cpu(
        batch, stats, masks, 2, np.zeros(n_nodes), rng, categorical_features=categorical_features
    )
    assert np.sum(expected["feature"] != NO_SPLIT) >= 2


def test_split_ties_go_to_lowest_feature_bin_and_missing_right(small_launches):
    """Duplicated features tie (lowest wins); weightless missing rows tie (missing right
    wins); a bin of weightless rows repeats the gain of the bin before it (lowest wins)."""
    rng = np.random.default_rng(5)
    n_samples = 24
    base = rng.integers(0, 6, n_samples)
    X_binned = np.empty((n_samples, 3), dtype=np.uint8, order="F")
    X_binned[:, 0] = base
    X_binned[:, 1] = base
    X_binned[:, 2] = rng.integers(0, 6, n_samples)
    y = (base >= 3).astype(np.int64)
    weight = np.ones(n_samples)
    weight[base == 3] = 0.0  # thresholds 2 and 3 split the same weights: equal gains
    missing_rows = rng.choice(n_samples, 4, replace=False)
    weight[missing_rows] = 0.0
    X_binned[missing_rows, :2] = 7
    stats = statistics.classification_statistics("misclassification", y, 2, weight)
    batch = {
        "X_binned": X_binned,
        "sample_indices": np.arange(n_samples, dtype=np.int32),
        "sample_counts": np.ones((1, n_samples), dtype=np.int32),
        "node_start": np.array([0, 0], dtype=np.int64),
        "node_stop": np.array([n_samples, 10], dtype=np.int64),
        "node_tree": np.array([0, 0], dtype=np.int64),
        "n_bins_non_missing": np.array([6, 6, 6], dtype=np.int32),
        "missing_bin": 7,
        "max_bins": 8,
    }
    masks = np.ones((2, 3), dtype=bool)
    expected = assert_cuda_matches_cpu(batch, stats, masks, 1, np.zeros(2), rng)
    assert (expected["feature"][0], expected["bin"][0], expected["missing_left"][0]) == (0, 2, False)


def node_draws(seed, batch, n_features):
    """The threshold uniforms of the batch's nodes (node ``p`` numbered ``p`` in its tree)."""
    n_nodes = batch["node_start"].size
    draws = np.empty((n_nodes, n_features))
    cpu_sampling.threshold_draws(seed, batch["node_tree"], np.arange(n_nodes, dtype=np.int64), n_features, draws)
    return draws


# criterion, max_bins, min_samples_leaf, min_weight_leaf as a fraction of the node's weight, seed,
# work histograms in global scratch
RANDOM_SETTINGS = [
    ("gini", 9, 1, 0.0, 0, False),
    ("entropy", 16, 1, 0.0, 1, True),
    ("squared_error", 9, 3, 0.1, 2, False),  # min_samples_leaf rejects some random thresholds
    ("newton", 16, 1, 0.0, 3, False),
]


@pytest.mark.parametrize("criterion, max_bins, min_samples_leaf, weight_fraction, seed, scratch", RANDOM_SETTINGS)
def test_random_threshold_splits_match_cpu(
    criterion, max_bins, min_samples_leaf, weight_fraction, seed, scratch, small_launches, monkeypatch
):
    """Random thresholds: missing bins, a node of one row (lo == hi), a feature masked out, rejected candidates."""
    if scratch:
        monkeypatch.setattr(cuda_splitting, "WORK_SHARED_BYTES", 0)
        monkeypatch.setattr(cuda_splitting, "WORK_SCRATCH_BYTES", 3 * 16 * 4 * 8)
    rng = np.random.default_rng(60 + seed)
    batch = make_batch(rng, n_samples=30, max_bins=max_bins, n_sub_nodes=1)
    stats = make_statistics(rng, criterion, 30, 1.0)
    # Leave out the empty node: the CPU divides by its zero weight (test_empty_and_weightless_nodes).
    keep = batch["node_stop"] > batch["node_start"]
    batch = {**batch, **{k: batch[k][keep] for k in ("node_start", "node_stop", "node_tree")}}
    totals = cpu_totals(batch, stats)
    n_nodes, n_features = totals.shape[0], batch["X_binned"].shape[1]
    masks = np.ones((n_nodes, n_features), dtype=bool)
    masks[1, 0] = False
    draws = node_draws(seed, batch, n_features)
    draws[0, 0] = np.nextafter(1.0, 0.0)  # the largest draw still falls below hi
    min_weight_leaf = weight_fraction * node_weights(criterion, totals, stats)
    expected = assert_cuda_matches_cpu(batch, stats, masks, min_samples_leaf, min_weight_leaf, rng, draws)
    assert np.sum(expected["feature"] != NO_SPLIT) >= 2  # the test is not vacuous
    assert expected["feature"][-1] == NO_SPLIT  # the one-row node


def test_random_threshold_splits_match_cpu_with_256_bins():
    """The real block size: 256 threads, one per bin, missing bin 255."""
    rng = np.random.default_rng(42)
    batch = make_batch(rng, n_samples=40, n_features=2, max_bins=256, n_trees=1, n_sub_nodes=0, small_nodes=False)
    stats = make_statistics(rng, "gini", 40)
    masks = np.ones((1, 2), dtype=bool)
    expected = assert_cuda_matches_cpu(batch, stats, masks, 1, np.zeros(1), rng, node_draws(7, batch, 2))
    assert (expected["feature"] != NO_SPLIT).all()


# Criteria whose cost divides by the node's weight (newton: by weight + l2, here 1.0).
DIVIDES_BY_WEIGHT = ("gini", "squared_error")


@pytest.mark.parametrize("criterion", CRITERIA)
def test_empty_and_weightless_nodes(criterion, small_launches):
    """Nodes without rows, or whose rows weigh nothing, have no candidate: NO_SPLIT everywhere.

    With ``DIVIDES_BY_WEIGHT`` the CPU kernels raise ZeroDivisionError on such
    nodes (numba's Python error model in ``kernels.common``), and so does the
    simulator once a thread computes the cost of a weightless node with rows;
    on a GPU (numpy's error model) it is NaN and unused. There an empty node is
    checked against the documented outputs only.
    """
    rng = np.random.default_rng(50 + CRITERIA.index(criterion))
    batch = make_batch(rng, n_samples=20, n_features=2, n_trees=1, n_sub_nodes=0, small_nodes=False)
    stats = make_statistics(rng, criterion, 20, 1.0)
    # One weightless row (its gradient may remain for newton).
    row = batch["sample_indices"][3]
    if criterion == "newton":
        stats.row_stats[row, 1] = 0
    else:
        stats.row_stats[row] = 0
    node_start, node_stop = [0, 5, 3], [batch["node_stop"][0], 5, 4]  # the root, an empty node, the row
    if criterion in DIVIDES_BY_WEIGHT:
        node_start, node_stop = node_start[:2], node_stop[:2]
    n_nodes = len(node_start)
    batch = {
        **batch, "node_start": np.array(node_start, dtype=np.int64), "node_stop": np.array(node_stop, dtype=np.int64),
        "node_tree": np.zeros(n_nodes, dtype=np.int64),
    }
    masks = np.ones((n_nodes, 2), dtype=bool)
    totals = cpu_totals(batch, stats)
    hist = cpu_histograms(batch, stats)
    args = (batch, stats, totals, masks, 1, np.zeros(n_nodes), hist, np.arange(n_nodes, dtype=np.int64))
    got = run_both(cuda_splitting, *args)
    for result in got:
        np.testing.assert_array_equal(result["feature"][1:], NO_SPLIT)
        np.testing.assert_array_equal(result["bin"][1:], NO_SPLIT)
        np.testing.assert_array_equal(result["next_bin"][1:], NO_SPLIT)
        np.testing.assert_array_equal(result["gain"][1:], -math.inf)
        assert not result["missing_left"][1:].any() and not result["left_totals"][1:].any()
        assert result["feature"][0] != NO_SPLIT
    if criterion not in DIVIDES_BY_WEIGHT:
        for result, expected in zip(got, run_both(cpu_splitting, *args)):
            for name in OUTPUTS:
                np.testing.assert_array_equal(result[name], expected[name], err_msg=name)


def test_ptx_specializations_are_well_formed():
    specs = cuda_splitting.ptx_specializations()
    names = [spec[0] for spec in specs]
    assert len(set(names)) == len(names)
    for name, function, argument_types, block, *max_registers in specs:
        assert callable(function) and isinstance(argument_types, tuple) and block > 0
        # Only the scans compiled for monotonic constraints or several outputs are capped.
        assert max_registers in ([], [None]) or name.endswith(("_constrained", "_multi_output"))
    for n_slots in (3, 4, 11):
        for features in ("", "_categorical"):
            for constraints in ("", "_constrained"):
                assert f"scan_histograms{features}_bins256_slots{n_slots}{constraints}" in names
                assert f"scan_rows{features}_bins256_slots{n_slots}{constraints}" in names
        # Several outputs come without categorical features.
        assert f"scan_histograms_bins256_slots{n_slots}_multi_output" in names
        assert f"scan_rows_bins256_slots{n_slots}_multi_output" in names
        assert f"scan_rows_categorical_bins256_slots{n_slots}_multi_output" not in names
        assert f"finish_rows_slots{n_slots}" in names


# --- categorical features -------------------------------------------------------------

# criterion (three classes, or regression, newton), bins, min_samples_leaf, random thresholds
CATEGORICAL_CASES = [
    ("gini", 7, 1, False),  # at most 6 categories: every subset
    ("entropy", 16, 2, False),  # up to 15: the majority class's order
    ("squared_error", 16, 1, False),
    ("newton", 16, 1, True),
]


@pytest.mark.parametrize("criterion, max_bins, min_samples_leaf, random", CATEGORICAL_CASES)
def test_categorical_splits_match_cpu(criterion, max_bins, min_samples_leaf, random, small_launches):
    """Both split paths, features 0 and 2 categorical (1 numeric, evaluated by some nodes), bit for bit:
    gains, bitsets, totals."""
    rng = np.random.default_rng(CATEGORICAL_CASES.index((criterion, max_bins, min_samples_leaf, random)))
    batch = make_batch(rng, n_samples=36, max_bins=max_bins, n_sub_nodes=1, small_nodes=False)
    stats = make_statistics(rng, criterion, 36, l2_regularization=1.0 if criterion == "newton" else 0.0)
    n_nodes = batch["node_start"].shape[0]
    masks = rng.random((n_nodes, 3)) < 0.8
    masks[0] = True
    draws = rng.random((n_nodes, 3)) if random else None
    expected = assert_cuda_matches_cpu(
        batch, stats, masks, min_samples_leaf, np.zeros(n_nodes), rng, draws=draws,
        categorical_features=np.array([0, 2], dtype=np.int32),
    )
    assert expected["categorical"].any()  # the test is not vacuous


def test_every_subset_order_and_ties_match_cpu(small_launches):
    """Duplicated categorical features tie (the lowest wins); every subset tried (at most 6 categories),
    one per thread of a block larger than the bins' (32 threads for 8 bins)."""
    rng = np.random.default_rng(11)
    batch = make_batch(rng, n_samples=40, n_features=3, max_bins=7, n_trees=1, n_sub_nodes=2, small_nodes=False)
    batch["X_binned"][:, 2] = batch["X_binned"][:, 0]
    batch["n_bins_non_missing"][2] = batch["n_bins_non_missing"][0]
    stats = make_statistics(rng, "gini", 40)
    n_nodes = batch["node_start"].shape[0]
    expected = assert_cuda_matches_cpu(
        batch, stats, np.ones((n_nodes, 3), dtype=bool), 1, np.zeros(n_nodes), rng,
        categorical_features=np.array([0, 2], dtype=np.int32),
    )
    assert expected["feature"][0] == 0 and expected["categorical"][0]
