"""Best split per node: from a histogram, or from the node's rows when it is small.

Both paths scan the same candidates in the same order and so choose the same
split for the same node: threshold bins in increasing order, at each bin
missing values sent right then left, features in increasing order; a
candidate replaces the best one only if its gain is strictly larger (ties go
to the lowest feature, then the lowest bin). A candidate needs a non-empty
non-missing left part and both children with at least ``min_samples_leaf``
rows and ``min_weight_leaf`` weight (hessian for ``newton``).

The row path is for nodes with few rows: it builds one feature's histogram
at a time in a small buffer and clears it by the same rows, so no
node-sized histogram is written; for a criterion of two statistics, a node of
at most ``OCCUPIED_MAX_ROWS`` rows marks the bins its rows occupy in a bitset
as they are added and scans those bins only.

Random thresholds (extra trees; Geurts, Ernst & Wehenkel 2006; scikit-learn's
``splitter="random"``), when ``threshold_draws`` has a row per node: for each
(node, feature) evaluated, let ``lo`` and ``hi`` be the lowest and highest
occupied non-missing bins of the node in the feature (bins below
``n_bins_non_missing[feature]`` with a nonzero row count). If ``hi == lo``
the feature gives no split. Else a threshold is drawn uniformly between the
node's values, as scikit-learn's: ``t = (1 - u) v[lo] + u v[hi]`` with
``u = threshold_draws[node, feature]`` and ``v = bin_values[feature]`` (each
bin's value), and ``b`` is the highest bin in ``[lo, hi)`` with ``v[b] <= t``
(``common.random_threshold_value_bin``); the feature's only candidate is the
highest occupied bin ``c <= b`` (the rows with bin ``<= b`` go left), judged
by ``common.scan_threshold`` as above
(missing right, then missing left; ``min_samples_leaf`` and
``min_weight_leaf`` can reject it, and then the feature gives no split). The
best feature among the candidates is chosen as above.

Categorical features (``categorical_features``, increasing indices) are
scanned by ``_best_category_split``: subsets of the node's occupied
categories, the candidates of ``kernels.common``'s categorical rule, in its
order, each with missing values right then left; the chosen subset is kept
per (node, feature) as ``category_bits`` and becomes the node's
``out_category_bitset`` (``common.finish_category_split``). Ties among
features go to the lowest feature, numeric or categorical.
"""

import math

import numpy as np
from numba import get_num_threads, njit, prange
from numba.cpython.unsafe.numbers import trailing_zeros

from ..common import (
    FROM_ROWS, GINI, NEWTON, NO_CONSTRAINT, NO_SPLIT, NOT_SEARCHED, SQUARED_ERROR, base_criterion, category_order_key,
    category_position, criterion_outputs, finish_category_split, finish_split_from_histogram, newton_cost, parent_cost,
    random_threshold_bin, random_threshold_value_bin, record_best_feature, scan_threshold, searches_all_subsets,
    split_constraint,
)
from .borrow import borrowed

# Blocks per thread of the nodes find_best_splits searches from their rows and of the (node, feature) tasks it
# searches from histograms: several per thread, so that the threads share the work, but few, as each block
# allocates its own buffers (as much time as a small node's search).
BLOCKS_PER_THREAD = 4
# A node of at most SPARSE_MAX_ROWS rows whose bins of a feature span more than SPARSE_SPAN_RATIO times its rows
# scans only its occupied bins (``_compact_feature_hist``): a deep node's few rows, not the bins between them
# (criteria of more than two statistics; those of two mark their occupied bins, below).
SPARSE_MAX_ROWS = 32
SPARSE_SPAN_RATIO = 4
# A node of at most OCCUPIED_MAX_ROWS rows searched by a criterion of two statistics scans only the bins its rows
# occupy, marked in a bitset as the rows are added (``_best_pair_threshold_of_occupied``): a few rows cost
# themselves, not the span of their bins; more rows, the branch-free scan of every bin in the span is faster.
OCCUPIED_MAX_ROWS = 64
# Words of the bitset of a feature's occupied bins: 64 bins each, 256 at most (``binning.BinMapper``); four
# registers in ``_add_feature_rows``.
OCCUPIED_WORDS = 4


@njit(cache=True)
def _blocks_scratch(n_blocks, n_bins, n_slots):
    """The scratch arrays of ``_best_threshold`` and ``_best_category_split`` for ``n_blocks`` blocks, each with
    a leading block axis: ``(left, left_with_missing, left_sums, bin_gains, categories, keys)`` (``categories``
    (n_bins,) int64 and ``keys`` (n_bins,) float64: the occupied categories and their sort keys)."""
    return (
        np.empty((n_blocks, n_slots), dtype=np.int64), np.empty((n_blocks, n_slots), dtype=np.int64),
        np.empty((n_blocks, 4, n_bins), dtype=np.int64), np.empty((n_blocks, 2, n_bins)),
        np.empty((n_blocks, n_bins), dtype=np.int64), np.empty((n_blocks, n_bins)),
    )


@njit(cache=True, inline="always")
def _block_scratch(scratch, block):
    """Block ``block``'s arrays of ``_blocks_scratch``, borrowed (``borrow``): allocated once for every block of
    a kernel, and no reference counted in the calls of its nodes and features."""
    return (
        borrowed(scratch[0][block]), borrowed(scratch[1][block]), borrowed(scratch[2][block]),
        borrowed(scratch[3][block]), borrowed(scratch[4][block]), borrowed(scratch[5][block]),
    )


@njit(cache=True)
def row_search_space(space, n_blocks, max_rows, n_bins, n_slots, X_binned, n_stats):
    """``space``, or a new one when it is too small: the working memory of ``_search_row_nodes`` for ``n_blocks``
    blocks of nodes of up to ``max_rows`` rows each (``None``: none yet).

    ``(blocks_scratch, feature_hists, compact_hists, occupied_bins, occupied_words, gathered_bins,
    gathered_slots, gathered_stats)``: ``_blocks_scratch``; each block's feature histogram (n_bins, n_slots),
    zero (the kernel leaves it so), its compacted copy, occupied bins and bitset of occupied bins
    (OCCUPIED_WORDS,) uint64, zero (also left so); and its node's gathered rows (``_gather_node_rows``):
    bins (n_features, max_rows), first slots (max_rows,) and statistics (max_rows, n_stats). A growth makes
    one and keeps it for all its levels, growing it only for more blocks or a larger node (rows doubling).
    """
    if space is not None and space[1].shape[0] >= n_blocks and space[7].shape[1] >= max_rows:
        return space
    if space is not None:
        n_blocks = max(n_blocks, space[1].shape[0])
        max_rows = space[7].shape[1] if max_rows <= space[7].shape[1] else max(max_rows, 2 * space[7].shape[1])
    return (
        _blocks_scratch(n_blocks, n_bins, n_slots), np.zeros((n_blocks, n_bins, n_slots), dtype=np.int64),
        np.empty((n_blocks, n_bins, n_slots), dtype=np.int64), np.empty((n_blocks, n_bins), dtype=np.int64),
        np.zeros((n_blocks, OCCUPIED_WORDS), dtype=np.uint64),
        np.empty((n_blocks, X_binned.shape[1], max_rows), dtype=X_binned.dtype),
        np.empty((n_blocks, max_rows), dtype=np.int64), np.empty((n_blocks, max_rows, n_stats), dtype=np.int64),
    )


@njit(cache=True)
def _random_candidate_in_histogram(feature_hist, low_bin, n_bins_non_missing, draw, feature_bin_values):
    """The random-threshold candidate bin of a node's feature histogram (n_bins, n_slots), or ``NO_SPLIT``
    (``low_bin``: no rows below it; ``feature_bin_values``: the feature's row of ``bin_values``)."""
    count_slot = feature_hist.shape[1] - 1
    lo, hi = NO_SPLIT, NO_SPLIT
    for bin_idx in range(low_bin, n_bins_non_missing):
        if feature_hist[bin_idx, count_slot] != 0:
            if lo == NO_SPLIT:
                lo = bin_idx
            hi = bin_idx
    if hi == lo:
        return NO_SPLIT
    candidate = random_threshold_value_bin(feature_bin_values, 0, lo, hi, draw)
    while feature_hist[candidate, count_slot] == 0:
        candidate -= 1
    return candidate


@njit(cache=True)
def _best_threshold(
    feature_hist, node_totals, low_bin, n_bins_non_missing, missing_bin, draw, feature_bin_values, criterion,
    inv_scales, regularization, min_samples_leaf, min_weight_leaf, monotonic, lower, upper, left, left_with_missing,
    left_sums, bin_gains,
):
    """Best ``(gain, bin, missing_left)`` of one node's feature histogram (n_bins, n_slots).

    ``low_bin``: no rows in the bins below it (0 when unknown; the scan starts
    there, which gives the same result: an empty bin is no candidate).
    ``draw`` in [0, 1) picks the one random candidate (see the module
    docstring; ``feature_bin_values``: the feature's bin values); a negative
    ``draw``: every bin. Scratch: ``left``, ``left_with_missing`` (n_slots,) int64; ``left_sums`` (4, n_bins) int64 and
    ``bin_gains`` (2, n_bins) float64 (``_best_pair_threshold``).
    """
    n_slots = feature_hist.shape[1]
    n_stat_slots = n_slots - 1
    pair, gini, first_slot, second_slot, pair_regularization = _pair_criterion(criterion, n_slots, regularization)
    if pair and draw < 0.0 and _unconstrained(monotonic, lower, upper):
        return _best_pair_threshold(
            feature_hist, node_totals, low_bin, n_bins_non_missing, missing_bin, gini, first_slot, second_slot,
            inv_scales, pair_regularization, min_samples_leaf, min_weight_leaf, left_sums, bin_gains,
        )
    # The arrays every candidate's gain reads, borrowed (``borrow``): no atomic counts per candidate.
    node_totals, inv_scales, left, left_with_missing = (
        borrowed(node_totals), borrowed(inv_scales), borrowed(left), borrowed(left_with_missing)
    )
    missing = borrowed(feature_hist[missing_bin])
    cost = parent_cost(criterion, node_totals, n_stat_slots, inv_scales, regularization)
    left[:] = 0
    # Thresholds first_bin..last_bin: every bin, or the one random candidate.
    first_bin, last_bin = low_bin, n_bins_non_missing - 1
    if draw >= 0.0:
        first_bin = last_bin = _random_candidate_in_histogram(
            feature_hist, low_bin, n_bins_non_missing, draw, feature_bin_values
        )
    if missing[n_slots - 1] > 0:
        return _scan_bins_with_missing(
            feature_hist, node_totals, cost, low_bin, first_bin, last_bin, missing, criterion, n_stat_slots,
            inv_scales, regularization, min_samples_leaf, min_weight_leaf, monotonic, lower, upper, left,
            left_with_missing,
        )
    return _scan_bins_without_missing(
        feature_hist, node_totals, cost, low_bin, first_bin, last_bin, missing, criterion, n_stat_slots, inv_scales,
        regularization, min_samples_leaf, min_weight_leaf, monotonic, lower, upper, left, left_with_missing,
    )


@njit(cache=True)
def _best_category_split(
    feature_hist, node_totals, low_bin, n_bins_non_missing, missing_bin, draw, criterion, inv_scales, regularization,
    min_samples_leaf, min_weight_leaf, lower, upper, left, left_with_missing, categories, keys, category_bits,
):
    """Best ``(gain, candidate, missing_left)`` of one node's histogram (n_bins, n_slots) of a categorical feature.

    The candidates are the subsets of ``kernels.common``'s categorical rule
    (``candidate``: how many of the ordered categories go left, or the bit mask
    of a subset when every subset is tried). ``category_bits`` (2, n_words)
    uint32 receives the chosen subset's categories (none when no candidate is
    allowed) and the occupied ones. ``lower``, ``upper``: the node's value bounds (a categorical feature has no
    monotonic constraint). ``low_bin``, ``draw`` and the scratch
    ``left``, ``left_with_missing`` as in ``_best_threshold``; ``categories``
    (n_bins,) int64 and ``keys`` (n_bins,) float64 (``_blocks_scratch``).
    """
    n_slots = feature_hist.shape[1]
    n_stat_slots = n_slots - 1
    category_bits[:] = 0
    n_categories = 0
    for code in range(low_bin, n_bins_non_missing):
        if feature_hist[code, n_stat_slots] != 0:
            categories[n_categories] = code
            n_categories += 1
            category_bits[1, code >> 5] |= 1 << (code & 31)
    all_subsets = searches_all_subsets(criterion, n_stat_slots, n_categories, draw)
    if not all_subsets:
        _order_categories(
            feature_hist, node_totals, categories, keys, n_categories, criterion, n_stat_slots, inv_scales,
            regularization,
        )
    # As in ``_best_threshold``: the arrays every candidate's gain reads, borrowed.
    node_totals, inv_scales, left, left_with_missing = (
        borrowed(node_totals), borrowed(inv_scales), borrowed(left), borrowed(left_with_missing)
    )
    cost = parent_cost(criterion, node_totals, n_stat_slots, inv_scales, regularization)
    missing = borrowed(feature_hist[missing_bin])
    has_missing = missing[n_stat_slots] > 0
    best_gain, best_candidate, best_missing_left = -math.inf, NO_SPLIT, False
    if all_subsets:
        for subset in range(1, 1 << n_categories, 2):
            left[:] = 0
            for position in range(n_categories):
                if (subset >> position) & 1:
                    left += feature_hist[categories[position]]
            best_gain, best_candidate, best_missing_left = scan_threshold(
                subset, node_totals, cost, left, missing, left_with_missing, has_missing, best_gain, best_candidate,
                best_missing_left, criterion, n_stat_slots, inv_scales, regularization, min_samples_leaf,
                min_weight_leaf, NO_CONSTRAINT, lower, upper,
            )
    else:
        first, last = 1, n_categories
        if draw >= 0.0:
            first = last = random_threshold_bin(1, n_categories, draw) if n_categories >= 2 else 0
        left[:] = 0
        for n_left in range(1, last + 1):
            left += feature_hist[categories[n_left - 1]]
            if n_left >= first:
                best_gain, best_candidate, best_missing_left = scan_threshold(
                    n_left, node_totals, cost, left, missing, left_with_missing, has_missing, best_gain,
                    best_candidate, best_missing_left, criterion, n_stat_slots, inv_scales, regularization,
                    min_samples_leaf, min_weight_leaf, NO_CONSTRAINT, lower, upper,
                )
    if best_candidate != NO_SPLIT:
        for position in range(n_categories):
            goes_left = ((best_candidate >> position) & 1) == 1 if all_subsets else position < best_candidate
            if goes_left:
                code = categories[position]
                category_bits[0, code >> 5] |= 1 << (code & 31)
    return best_gain, best_candidate, best_missing_left


@njit(cache=True)
def _order_categories(
    feature_hist, node_totals, categories, keys, n_categories, criterion, n_stat_slots, inv_scales, regularization,
):
    """Sort ``categories[:n_categories]`` (increasing codes) by ``common.category_order_key``, ties by code
    (a stable insertion sort: a node has at most 255 categories, most far fewer)."""
    for position in range(n_categories):
        code = categories[position]
        key = category_order_key(criterion, feature_hist[code], node_totals, n_stat_slots, inv_scales, regularization)
        later = position
        while later > 0 and keys[later - 1] > key:
            keys[later] = keys[later - 1]
            categories[later] = categories[later - 1]
            later -= 1
        keys[later] = key
        categories[later] = code


def _scan_bins_for(has_missing):
    """``_best_threshold``'s scan of bins ``low_bin..last_bin`` (candidates from ``first_bin``), compiled for
    a node with or without missing values: ``has_missing`` a constant, numba drops the missing-left
    candidates' code where there are none (with it in the loop, an inlined scan costs 6x more)."""

    @njit(cache=True)
    def scan_bins(
        feature_hist, node_totals, cost, low_bin, first_bin, last_bin, missing, criterion, n_stat_slots, inv_scales,
        regularization, min_samples_leaf, min_weight_leaf, monotonic, lower, upper, left, left_with_missing,
    ):
        n_slots = feature_hist.shape[1]
        best_gain, best_bin, best_missing_left = -math.inf, NO_SPLIT, False
        for bin_idx in range(low_bin, last_bin + 1):
            # An empty bin repeats the previous candidate, which won any tie.
            if feature_hist[bin_idx, n_slots - 1] == 0:
                continue
            for slot in range(n_slots):
                left[slot] += feature_hist[bin_idx, slot]
            if bin_idx < first_bin:
                continue
            best_gain, best_bin, best_missing_left = scan_threshold(
                bin_idx, node_totals, cost, left, missing, left_with_missing, has_missing,
                best_gain, best_bin, best_missing_left, criterion, n_stat_slots, inv_scales,
                regularization, min_samples_leaf, min_weight_leaf, monotonic, lower, upper,
            )
        return best_gain, best_bin, best_missing_left

    return scan_bins


_scan_bins_with_missing = _scan_bins_for(True)
_scan_bins_without_missing = _scan_bins_for(False)


@njit(cache=True, error_model="numpy")
def _best_pair_threshold(
    feature_hist, node_totals, low_bin, n_bins_non_missing, missing_bin, gini, first_slot, second_slot, inv_scales,
    regularization, min_samples_leaf, min_weight_leaf, left_sums, bin_gains,
):
    """``_best_threshold`` of a criterion of two statistics ``(a, b)`` and the count, in three passes.

    With ``gini``: two classes' weights, cost ``-(a^2 + b^2) / (a + b)``; else a cost ``-T(a)^2 / (b + l2)``
    (``common.newton_cost``): ``newton`` with one (gradient, hessian) pair, or one-output ``squared_error``
    (``a = sum w y``, ``b = w``), whose ``-a^2 / b`` is that cost at ``l1 = l2 = 0`` (``T(a) = a``,
    ``b + 0 = b``: bit for bit). ``first_slot``, ``second_slot``: the slots of ``a`` and ``b`` (the count is
    the last).

    The hot case of boosting, regression trees and binary classification. The left sums at every occupied bin
    (a prefix sum, compacted without branches: an empty bin repeats the previous bin's
    candidates, which won any tie, so only occupied bins are candidates), then
    every candidate's gain (a loop without branches, which LLVM vectorizes),
    then the first candidate of the largest gain: what a sequential scan that
    replaces the best only by a strictly larger gain keeps. Same candidates,
    order, rules and float operations as ``common.scan_threshold`` (the tests
    compare both). ``left_sums`` (4, n_bins) int64 and ``bin_gains`` (2, n_bins) float64: scratch.
    """
    count_slot = feature_hist.shape[1] - 1
    missing_first, missing_second = feature_hist[missing_bin, first_slot], feature_hist[missing_bin, second_slot]
    missing_count = feature_hist[missing_bin, count_slot]
    left_first, left_second, left_count, candidate_bin = left_sums[0], left_sums[1], left_sums[2], left_sums[3]
    # Only a candidate with min_samples_leaf rows on each side (the missing rows on either) can win; the left
    # count grows with the bin, so the others are skipped and the scan ends past the last one (as
    # HistGradientBoosting's splitter does): a deep node's scan costs its few candidates, not its span.
    lowest_count, highest_count = min_samples_leaf - missing_count, node_totals[count_slot] - min_samples_leaf
    first, second, count = 0, 0, 0
    # Unsigned indices: numba leaves out the negative-index wraparound.
    n_candidates = np.uint64(0)
    for bin_idx in range(np.uint64(low_bin), np.uint64(n_bins_non_missing)):
        first += feature_hist[bin_idx, first_slot]
        second += feature_hist[bin_idx, second_slot]
        count += feature_hist[bin_idx, count_slot]
        if count > highest_count:
            break
        left_first[n_candidates], left_second[n_candidates], left_count[n_candidates] = first, second, count
        candidate_bin[n_candidates] = bin_idx
        n_candidates += np.uint64((feature_hist[bin_idx, count_slot] != 0) & (count >= lowest_count))
    return _best_pair_candidate(
        left_sums, n_candidates, missing_first, missing_second, missing_count, node_totals, gini, first_slot,
        second_slot, inv_scales, regularization, min_samples_leaf, min_weight_leaf, bin_gains,
    )


@njit(cache=True, inline="always", error_model="numpy")
def _best_pair_threshold_of_occupied(
    feature_hist, occupied_words, missing_bin, node_totals, gini, first_slot, second_slot, inv_scales,
    regularization, min_samples_leaf, min_weight_leaf, left_sums, bin_gains,
):
    """``_best_pair_threshold`` of a feature histogram whose occupied bins are the bits of ``occupied_words``
    (``_add_feature_rows``): the same candidates, read at the occupied bins only, in increasing order (an empty
    bin is no candidate; nor is the missing values' bin, the last, where the left count reaches every row).
    Zeroes ``occupied_words``."""
    count_slot = node_totals.shape[0] - 1
    missing_count = feature_hist[missing_bin, count_slot]
    left_first, left_second, left_count, candidate_bin = left_sums[0], left_sums[1], left_sums[2], left_sums[3]
    lowest_count, highest_count = min_samples_leaf - missing_count, node_totals[count_slot] - min_samples_leaf
    first, second, count = 0, 0, 0
    n_candidates = 0
    for word_idx in range(occupied_words.shape[0]):
        word = occupied_words[word_idx]
        occupied_words[word_idx] = 0
        while word != 0 and count <= highest_count:
            bin_idx = 64 * word_idx + np.int64(trailing_zeros(word))
            word &= word - np.uint64(1)
            first += feature_hist[bin_idx, first_slot]
            second += feature_hist[bin_idx, second_slot]
            count += feature_hist[bin_idx, count_slot]
            left_first[n_candidates], left_second[n_candidates], left_count[n_candidates] = first, second, count
            candidate_bin[n_candidates] = bin_idx
            n_candidates += (count >= lowest_count) & (count <= highest_count)
    return _best_pair_candidate(
        left_sums, n_candidates, feature_hist[missing_bin, first_slot], feature_hist[missing_bin, second_slot],
        missing_count, node_totals, gini, first_slot, second_slot, inv_scales, regularization, min_samples_leaf,
        min_weight_leaf, bin_gains,
    )


@njit(cache=True, inline="always", error_model="numpy")
def _best_pair_candidate(
    left_sums, n_candidates, missing_first, missing_second, missing_count, node_totals, gini, first_slot,
    second_slot, inv_scales, regularization, min_samples_leaf, min_weight_leaf, bin_gains,
):
    """``_best_pair_threshold``'s last two passes: the gain of each of the ``n_candidates`` candidates of
    ``left_sums`` (left sums and bin), missing values right then left, and the first of the largest gain.
    Returns ``(gain, bin, missing_left)``."""
    count_slot = node_totals.shape[0] - 1
    inv_first, inv_second = inv_scales[first_slot], inv_scales[second_slot]
    total_first, total_second = node_totals[first_slot], node_totals[second_slot]
    total_count = node_totals[count_slot]
    cost = _pair_cost(gini, total_first * inv_first, total_second * inv_second, regularization)
    left_first, left_second, left_count, candidate_bin = left_sums[0], left_sums[1], left_sums[2], left_sums[3]
    gains, gains_missing_left = bin_gains[0], bin_gains[1]
    best_gain = -math.inf
    for candidate in range(n_candidates):
        gains[candidate] = _pair_candidate_gain(
            gini, left_first[candidate], left_second[candidate], left_count[candidate], total_first, total_second,
            total_count, cost, inv_first, inv_second, regularization, min_samples_leaf, min_weight_leaf,
        )
    for candidate in range(n_candidates):
        best_gain = max(best_gain, gains[candidate])
    if missing_count > 0:
        for candidate in range(n_candidates):
            gains_missing_left[candidate] = _pair_candidate_gain(
                gini, left_first[candidate] + missing_first, left_second[candidate] + missing_second,
                left_count[candidate] + missing_count, total_first, total_second, total_count, cost, inv_first,
                inv_second, regularization, min_samples_leaf, min_weight_leaf,
            )
        for candidate in range(n_candidates):
            best_gain = max(best_gain, gains_missing_left[candidate])
    if best_gain == -math.inf:
        return -math.inf, NO_SPLIT, False
    for candidate in range(n_candidates):
        if gains[candidate] == best_gain:
            return best_gain, candidate_bin[candidate], False
        if missing_count > 0 and gains_missing_left[candidate] == best_gain:
            return best_gain, candidate_bin[candidate], True
    return -math.inf, NO_SPLIT, False


@njit(cache=True, inline="always")
def _pair_criterion(criterion, n_slots, regularization):
    """Whether ``criterion`` (of ``n_slots`` slots) has two statistics and the count, as
    ``_best_pair_threshold`` takes them: ``(pair, gini, first_slot, second_slot, regularization)``.

    newton's (gradient, hessian), squared error's (w, w y; its w y^2 is no part of a gain), two classes' gini
    (w_0, w_1); the regularization is newton's, else none.
    """
    kind = base_criterion(criterion)
    one_output = criterion_outputs(criterion) == 1
    pair = (
        (kind == NEWTON and n_slots == 3) or (kind == SQUARED_ERROR and one_output)
        or (kind == GINI and one_output and n_slots == 3)
    )
    first_slot, second_slot = (1, 0) if kind == SQUARED_ERROR else (0, 1)
    return pair, kind == GINI, first_slot, second_slot, regularization if kind == NEWTON else (0.0, 0.0)


@njit(cache=True, inline="always")
def _unconstrained(monotonic, lower, upper):
    """Whether a (node, feature) has no monotonic constraint and no value bounds."""
    return monotonic == 0 and lower == -math.inf and upper == math.inf


@njit(cache=True, inline="always")
def _scans_occupied_bins(categorical_features, monotonic_cst, value_bounds, node, feature_idx):
    """Whether a node's feature is numeric and unconstrained, as ``_best_pair_threshold_of_occupied`` takes it."""
    monotonic, lower, upper = split_constraint(monotonic_cst, value_bounds, node, feature_idx)
    return category_position(categorical_features, feature_idx) < 0 and _unconstrained(monotonic, lower, upper)


@njit(cache=True, inline="always", error_model="numpy")
def _pair_weight(gini, first, second):
    """``common.node_weight`` of ``_best_pair_threshold``'s criteria: gini's ``0 + a + b``, else ``b``."""
    return 0.0 + first + second if gini else second


@njit(cache=True, inline="always", error_model="numpy")
def _pair_cost(gini, first, second, regularization):
    """``common.proxy_cost`` of ``_best_pair_threshold``'s criteria, in its float operations."""
    if gini:
        return -(0.0 + first * first + second * second) / _pair_weight(gini, first, second)
    return newton_cost(first, second, regularization)


@njit(cache=True, inline="always", error_model="numpy")
def _pair_candidate_gain(
    gini, left_first, left_second, left_count, total_first, total_second, total_count, cost, inv_first, inv_second,
    regularization, min_samples_leaf, min_weight_leaf,
):
    """``common.candidate_gain`` of ``_best_pair_threshold``'s criteria on int64 fixed-point scalars, -inf where
    not allowed; without branches (a division by zero of a candidate not allowed gives a number never used)."""
    left_a, left_b = left_first * inv_first, left_second * inv_second
    right_a, right_b = (total_first - left_first) * inv_first, (total_second - left_second) * inv_second
    left_weight, right_weight = _pair_weight(gini, left_a, left_b), _pair_weight(gini, right_a, right_b)
    gain = cost - _pair_cost(gini, left_a, left_b, regularization) - _pair_cost(gini, right_a, right_b, regularization)
    allowed = (
        (left_count >= min_samples_leaf) & (total_count - left_count >= min_samples_leaf)
        & (left_weight >= min_weight_leaf) & (right_weight >= min_weight_leaf) & (left_weight > 0)
        & (right_weight > 0)
    )
    return gain if allowed else -math.inf


def find_best_splits(
    hist, hist_rows, X_binned, sample_indices, node_start, node_stop, node_tree, sample_counts, row_slot, row_stats,
    stats_stride, totals, feature_mask, categorical_features, threshold_draws, bin_values, n_bins_non_missing,
    missing_bin, criterion, inv_scales, regularization, min_samples_leaf, min_weight_leaf, monotonic_cst,
    value_bounds, out_gain, out_feature, out_bin, out_missing_left, out_left_totals, out_next_bin, out_categorical,
    out_category_bitset,
):
    """Best split of every node: from its histogram, or from its rows (small nodes), in one call for a level.

    The nodes with a histogram: ``_scan_histogram_nodes``, then
    ``_finish_histogram_nodes``; those ``FROM_ROWS``: ``_search_row_nodes``; those ``NOT_SEARCHED``:
    ``_record_unsearched``. Each stage is a kernel of its own, called only when it has
    nodes (an empty parallel region still costs a fork and a join), from
    Python: numba compiles three small kernels faster than one large one, and
    a compiled caller would optimise all their code again.

    Parameters
    ----------
    hist : ndarray of shape (n_hist, n_features, n_bins, n_slots), dtype int64
    hist_rows : ndarray of shape (n_nodes,), dtype int64
        Where each node's split is searched: its histogram ``hist[hist_rows[node]]``, or ``FROM_ROWS``, or
        ``NOT_SEARCHED`` (no split: the outputs of a node without an allowed candidate).
    X_binned : ndarray of shape (n_samples, n_features), dtype uint8
        C-ordered (``histogram.build_histograms``' layout: a row's bins share a cache line).
    sample_indices, node_start, node_stop, node_tree, sample_counts, row_slot, row_stats, stats_stride
        The rows of each node, as ``histogram.build_histograms`` reads them.
    totals : ndarray of shape (n_nodes, n_slots), dtype int64
    feature_mask : ndarray of shape (n_nodes, n_features), dtype bool
    categorical_features : ndarray of shape (n_categorical,), dtype int32
        The categorical features, increasing (their bins are category codes).
    threshold_draws : ndarray of shape (n_nodes, n_features) or (0, n_features), dtype float64
        The uniform of each (node, feature) for random thresholds (see the
        module docstring); with no rows, the best threshold of every feature.
    bin_values : ndarray of shape (n_features, n_bins) or (n_features, 0), dtype float64
        Each bin's value (``BinMapper.bin_values``), read by random thresholds only.
    n_bins_non_missing : ndarray of shape (n_features,), dtype int32
    missing_bin : int
    criterion : int
        A criterion constant of ``kernels.common``.
    inv_scales : ndarray of shape (n_slots,), dtype float64
    regularization : tuple of 2 float64
        ``(l2, l1)`` of ``newton`` (``kernels.common``); ignored by the others.
    min_samples_leaf : int
    min_weight_leaf : ndarray of shape (n_nodes,), dtype float64
    monotonic_cst : ndarray of shape (n_features,) or (0,), dtype int64
        -1, 0 or 1: each feature's monotonic constraint (``common.constrained_gain``).
    value_bounds : ndarray of shape (n_nodes, 2) or (0, 2), dtype float64
        Each node's ``(lower, upper)`` value bounds; with no rows (and ``monotonic_cst`` of none), no constraint
        (``common.split_constraint``), which the CUDA kernels then compile without.
    out_gain : ndarray of shape (n_nodes,), dtype float64
    out_feature, out_bin : ndarray of shape (n_nodes,), dtype int32
        ``out_feature`` is ``NO_SPLIT`` where no candidate is allowed.
    out_missing_left : ndarray of shape (n_nodes,), dtype bool
    out_left_totals : ndarray of shape (n_nodes, n_slots), dtype int64
    out_next_bin : ndarray of shape (n_nodes,), dtype int32
        Lowest non-missing bin above ``out_bin`` that holds rows of the node
        (``NO_SPLIT`` if none): the raw threshold goes half-way between the
        two, as CART puts it half-way between neighbouring values.
    out_categorical : ndarray of shape (n_nodes,), dtype bool
        Whether the split is on a categorical feature (its ``out_bin`` and
        ``out_next_bin`` are then ``NO_SPLIT``).
    out_category_bitset : ndarray of shape (n_nodes, n_words), dtype uint32
        The categories that go left (``gpuforest.tree``'s ``category_bitset``):
        the chosen ones, and those without rows at the node when missing
        values go left; zero for numeric splits.
    """
    n_nodes = hist_rows.shape[0]
    n_features = feature_mask.shape[1]
    gains = np.empty((n_nodes, n_features))
    bins = np.empty((n_nodes, n_features), dtype=np.int32)
    missing_left = np.empty((n_nodes, n_features), dtype=np.bool_)
    # The chosen and the occupied categories of each (node, categorical feature) scanned (``_best_category_split``).
    n_categorical, n_words = categorical_features.shape[0], out_category_bitset.shape[1]
    category_bits = np.empty((n_nodes, n_categorical, 2, n_words), dtype=np.uint32)
    searched = (gains, bins, missing_left, category_bits)
    outputs = (
        out_gain, out_feature, out_bin, out_missing_left, out_left_totals, out_next_bin, out_categorical,
        out_category_bitset,
    )
    hist_nodes = (hist_rows >= 0).nonzero()[0]
    row_nodes = (hist_rows == FROM_ROWS).nonzero()[0]
    # Read on the host: a cached kernel cannot read numba's thread count.
    max_blocks = BLOCKS_PER_THREAD * get_num_threads()
    if hist_nodes.shape[0] > 0:
        _scan_histogram_nodes(
            max_blocks, hist, hist_rows, hist_nodes, totals, feature_mask, categorical_features, threshold_draws,
            bin_values, n_bins_non_missing, missing_bin, criterion, inv_scales, regularization, min_samples_leaf,
            min_weight_leaf, monotonic_cst, value_bounds, *searched,
        )
    if row_nodes.shape[0] > 0:
        space = row_search_space(
            None, min(row_nodes.shape[0], max_blocks), int((node_stop - node_start)[row_nodes].max()), missing_bin + 1,
            totals.shape[1], X_binned, row_stats.shape[1],
        )
        _search_row_nodes(
            space, X_binned, sample_indices, node_start, node_stop, node_tree, sample_counts, row_slot, row_stats,
            stats_stride, row_nodes, totals, feature_mask, categorical_features, threshold_draws, bin_values,
            missing_bin, criterion, inv_scales, regularization, min_samples_leaf, min_weight_leaf, monotonic_cst,
            value_bounds, *searched, *outputs,
        )
    if hist_nodes.shape[0] > 0:
        _finish_histogram_nodes(
            hist, hist_rows, hist_nodes, totals, categorical_features, n_bins_non_missing, missing_bin, *searched,
            *outputs,
        )
    unsearched_nodes = (hist_rows == NOT_SEARCHED).nonzero()[0]
    if unsearched_nodes.shape[0] > 0:
        _record_unsearched(unsearched_nodes, gains, bins, categorical_features, *outputs)


@njit(parallel=True, cache=True)
def _scan_histogram_nodes(
    max_blocks, hist, hist_rows, hist_nodes, totals, feature_mask, categorical_features, threshold_draws,
    bin_values, n_bins_non_missing, missing_bin, criterion, inv_scales, regularization, min_samples_leaf,
    min_weight_leaf, monotonic_cst, value_bounds, gains, bins, missing_left, category_bits,
):
    """The best candidate of each (node, feature) of the nodes ``hist_nodes``, from their histograms, into
    ``gains``, ``bins``, ``missing_left`` and ``category_bits``: at most ``max_blocks`` blocks of (node, feature)
    tasks, each with one set of scratch arrays."""
    n_features, n_slots = feature_mask.shape[1], totals.shape[1]
    # The arrays of every task's calls, borrowed (``borrow``).
    hist, totals, bin_values, inv_scales, category_bits = (
        borrowed(hist), borrowed(totals), borrowed(bin_values), borrowed(inv_scales), borrowed(category_bits)
    )
    random_thresholds = threshold_draws.shape[0] > 0
    n_tasks = hist_nodes.shape[0] * n_features
    n_blocks = min(n_tasks, max_blocks)
    blocks_scratch = _blocks_scratch(n_blocks, hist.shape[2], n_slots)
    for block in prange(n_blocks):
        left, left_with_missing, left_sums, bin_gains, categories, keys = _block_scratch(blocks_scratch, block)
        scan = (left, left_with_missing, left_sums, bin_gains)
        for task in range(block * n_tasks // n_blocks, (block + 1) * n_tasks // n_blocks):
            node = hist_nodes[task // n_features]
            feature_idx = task % n_features
            best_gain, best_bin, best_missing_left = -math.inf, NO_SPLIT, False
            if feature_mask[node, feature_idx]:
                draw = threshold_draws[node, feature_idx] if random_thresholds else -1.0
                position = category_position(categorical_features, feature_idx)
                monotonic, lower, upper = split_constraint(monotonic_cst, value_bounds, node, feature_idx)
                if position >= 0:
                    best_gain, best_bin, best_missing_left = _best_category_split(
                        hist[hist_rows[node], feature_idx], totals[node], np.int64(0),
                        np.int64(n_bins_non_missing[feature_idx]), missing_bin, draw, criterion, inv_scales,
                        regularization, min_samples_leaf, min_weight_leaf[node], lower, upper, scan[0], scan[1],
                        categories, keys, category_bits[node, position],
                    )
                else:
                    best_gain, best_bin, best_missing_left = _best_threshold(
                        hist[hist_rows[node], feature_idx], totals[node], np.int64(0),
                        np.int64(n_bins_non_missing[feature_idx]), missing_bin, draw, bin_values[feature_idx],
                        criterion, inv_scales, regularization, min_samples_leaf, min_weight_leaf[node], monotonic,
                        lower, upper, *scan,
                    )
            gains[node, feature_idx] = best_gain
            bins[node, feature_idx] = best_bin
            missing_left[node, feature_idx] = best_missing_left


@njit(parallel=True, cache=True)
def _search_row_nodes(
    space, X_binned, sample_indices, node_start, node_stop, node_tree, sample_counts, row_slot, row_stats,
    stats_stride, row_nodes, totals, feature_mask, categorical_features, threshold_draws, bin_values, missing_bin,
    criterion, inv_scales, regularization, min_samples_leaf, min_weight_leaf, monotonic_cst, value_bounds, gains,
    bins, missing_left, category_bits, out_gain, out_feature, out_bin, out_missing_left, out_left_totals,
    out_next_bin, out_categorical, out_category_bitset,
):
    """The splits of the nodes ``row_nodes``, from one-feature histograms of their rows, built in turn in a
    small buffer: a node's rows are added, the histogram scanned by ``_best_threshold`` and the same rows' bins
    cleared, so no node-sized histogram is written; scans run from the node's lowest to its highest non-missing
    bin of the feature, so a node costs its rows and the span of their bins, not ``n_bins``; a small node in a
    criterion of two statistics, its rows and their occupied bins (``_best_pair_threshold_of_occupied``). A
    node's bins (feature by feature), first slots and statistics are gathered once (``_gather_node_rows``) for
    all its features. The nodes go in at most as many blocks as ``space`` (``row_search_space``, room for the
    largest node) has, each with its own buffers."""
    n_features, n_slots = feature_mask.shape[1], totals.shape[1]
    # The arrays of every node's and feature's calls, borrowed (``borrow``).
    X_binned, sample_indices, sample_counts, row_slot, row_stats, totals, bin_values, inv_scales = (
        borrowed(X_binned), borrowed(sample_indices), borrowed(sample_counts), borrowed(row_slot),
        borrowed(row_stats), borrowed(totals), borrowed(bin_values), borrowed(inv_scales),
    )
    category_bits, out_left_totals, out_category_bitset = (
        borrowed(category_bits), borrowed(out_left_totals), borrowed(out_category_bitset)
    )
    gains, bins, missing_left, out_gain, out_feature, out_bin, out_missing_left, out_next_bin, out_categorical = (
        borrowed(gains), borrowed(bins), borrowed(missing_left), borrowed(out_gain), borrowed(out_feature),
        borrowed(out_bin), borrowed(out_missing_left), borrowed(out_next_bin), borrowed(out_categorical),
    )
    categorical_features, monotonic_cst, value_bounds, min_weight_leaf = (
        borrowed(categorical_features), borrowed(monotonic_cst), borrowed(value_bounds), borrowed(min_weight_leaf)
    )
    random_thresholds = threshold_draws.shape[0] > 0
    pair, gini, first_slot, second_slot, pair_regularization = _pair_criterion(criterion, n_slots, regularization)
    pairs_without_draws = pair and not random_thresholds
    n_row_nodes = row_nodes.shape[0]
    (blocks_scratch, feature_hists, compact_hists, occupied_bins, occupied_bitsets, gathered_bins, gathered_slots,
     gathered_stats) = space
    n_blocks = min(n_row_nodes, feature_hists.shape[0])
    for block in prange(n_blocks):
        first, end = block * n_row_nodes // n_blocks, (block + 1) * n_row_nodes // n_blocks
        left, left_with_missing, left_sums, bin_gains, categories, keys = _block_scratch(blocks_scratch, block)
        scan = (left, left_with_missing, left_sums, bin_gains)
        feature_hist, compact_hist, occupied = (
            borrowed(feature_hists[block]), borrowed(compact_hists[block]), borrowed(occupied_bins[block])
        )
        occupied_words = borrowed(occupied_bitsets[block])
        no_words = occupied_words[:0]
        node_bins, node_slots, node_stats = (
            borrowed(gathered_bins[block]), borrowed(gathered_slots[block]), borrowed(gathered_stats[block])
        )
        for node in row_nodes[first:end]:
            n_rows = _gather_node_rows(
                X_binned, sample_indices, node_start[node], node_stop[node], sample_counts[node_tree[node]],
                node_tree[node] * stats_stride, row_slot, row_stats, node_bins, node_slots, node_stats,
            )
            # Each feature of a small node, in a criterion of two statistics: its occupied bins only.
            scans_occupied = pairs_without_draws and n_rows <= OCCUPIED_MAX_ROWS
            for feature_idx in range(n_features):
                best_gain, best_bin, best_missing_left = -math.inf, NO_SPLIT, False
                if feature_mask[node, feature_idx]:
                    if scans_occupied and _scans_occupied_bins(
                        categorical_features, monotonic_cst, value_bounds, node, feature_idx
                    ):
                        _add_feature_rows(
                            feature_hist, node_bins[feature_idx], node_slots, node_stats, n_rows, missing_bin,
                            occupied_words,
                        )
                        best_gain, best_bin, best_missing_left = _best_pair_threshold_of_occupied(
                            feature_hist, occupied_words, missing_bin, totals[node], gini, first_slot, second_slot,
                            inv_scales, pair_regularization, min_samples_leaf, min_weight_leaf[node], left_sums,
                            bin_gains,
                        )
                        _clear_feature_rows(feature_hist, node_bins[feature_idx], n_rows)
                    else:
                        low_bin, bins_used = _add_feature_rows(
                            feature_hist, node_bins[feature_idx], node_slots, node_stats, n_rows, missing_bin, no_words
                        )
                        draw = threshold_draws[node, feature_idx] if random_thresholds else -1.0
                        position = category_position(categorical_features, feature_idx)
                        monotonic, lower, upper = split_constraint(monotonic_cst, value_bounds, node, feature_idx)
                        if position >= 0:
                            best_gain, best_bin, best_missing_left = _best_category_split(
                                feature_hist, totals[node], low_bin, bins_used, missing_bin, draw, criterion,
                                inv_scales, regularization, min_samples_leaf, min_weight_leaf[node], lower, upper,
                                scan[0], scan[1], categories, keys, category_bits[node, position],
                            )
                        elif draw < 0.0 and n_rows <= SPARSE_MAX_ROWS and (
                            SPARSE_SPAN_RATIO * n_rows < bins_used - low_bin
                        ):
                            n_occupied = _compact_feature_hist(
                                feature_hist, node_bins[feature_idx], n_rows, missing_bin, occupied, compact_hist
                            )
                            best_gain, best_bin, best_missing_left = _best_threshold(
                                compact_hist, totals[node], np.int64(0), n_occupied, n_occupied, draw,
                                bin_values[feature_idx], criterion, inv_scales, regularization, min_samples_leaf,
                                min_weight_leaf[node], monotonic, lower, upper, *scan,
                            )
                            if best_bin != NO_SPLIT:
                                best_bin = occupied[best_bin]
                        else:
                            best_gain, best_bin, best_missing_left = _best_threshold(
                                feature_hist, totals[node], low_bin, bins_used, missing_bin, draw,
                                bin_values[feature_idx], criterion, inv_scales, regularization, min_samples_leaf,
                                min_weight_leaf[node], monotonic, lower, upper, *scan,
                            )
                        _clear_feature_rows(feature_hist, node_bins[feature_idx], n_rows)
                gains[node, feature_idx] = best_gain
                bins[node, feature_idx] = best_bin
                missing_left[node, feature_idx] = best_missing_left

            best_feature, position = record_best_feature(
                gains, bins, node, categorical_features, out_gain, out_feature, out_bin, out_missing_left,
                out_left_totals, out_next_bin, out_categorical, out_category_bitset,
            )
            if best_feature == NO_SPLIT:
                continue
            _, bins_used = _add_feature_rows(
                feature_hist, node_bins[best_feature], node_slots, node_stats, n_rows, missing_bin, no_words
            )
            if position >= 0:
                out_missing_left[node] = finish_category_split(
                    feature_hist, category_bits[node, position], bins_used, missing_bin,
                    missing_left[node, best_feature], totals[node], out_left_totals[node],
                    out_category_bitset[node],
                )
            else:
                out_missing_left[node], out_next_bin[node] = finish_split_from_histogram(
                    feature_hist, out_bin[node], bins_used, missing_bin, missing_left[node, best_feature],
                    totals[node], out_left_totals[node],
                )
            _clear_feature_rows(feature_hist, node_bins[best_feature], n_rows)


@njit(parallel=True, cache=True)
def _finish_histogram_nodes(
    hist, hist_rows, hist_nodes, totals, categorical_features, n_bins_non_missing, missing_bin, gains, bins,
    missing_left, category_bits, out_gain, out_feature, out_bin, out_missing_left, out_left_totals, out_next_bin,
    out_categorical, out_category_bitset,
):
    """The split of each node ``hist_nodes`` (its best feature of ``_scan_histogram_nodes``, the left totals
    from its histogram)."""
    for k in prange(hist_nodes.shape[0]):
        node = hist_nodes[k]
        best_feature, position = record_best_feature(
            gains, bins, node, categorical_features, out_gain, out_feature, out_bin, out_missing_left,
            out_left_totals, out_next_bin, out_categorical, out_category_bitset,
        )
        if best_feature == NO_SPLIT:
            continue
        feature_hist = hist[hist_rows[node], best_feature]
        if position >= 0:
            out_missing_left[node] = finish_category_split(
                feature_hist, category_bits[node, position], np.int64(n_bins_non_missing[best_feature]),
                missing_bin, missing_left[node, best_feature], totals[node], out_left_totals[node],
                out_category_bitset[node],
            )
        else:
            out_missing_left[node], out_next_bin[node] = finish_split_from_histogram(
                feature_hist, out_bin[node], np.int64(n_bins_non_missing[best_feature]), missing_bin,
                missing_left[node, best_feature], totals[node], out_left_totals[node],
            )


@njit(cache=True)
def _record_unsearched(unsearched_nodes, gains, bins, categorical_features, out_gain, out_feature, out_bin,
                       out_missing_left, out_left_totals, out_next_bin, out_categorical, out_category_bitset):
    """The outputs of the nodes ``NOT_SEARCHED``: no split. Serial: a level's leaves, no work to share."""
    for node in unsearched_nodes:
        bins[node] = NO_SPLIT
        record_best_feature(
            gains, bins, node, categorical_features, out_gain, out_feature, out_bin, out_missing_left,
            out_left_totals, out_next_bin, out_categorical, out_category_bitset,
        )


@njit(cache=True)
def _gather_node_rows(
    X_binned, sample_indices, start, stop, counts, stats_base, row_slot, row_stats, node_bins, node_slots, node_stats,
):
    """Copy the bins of the rows at positions ``[start, stop)`` (feature by feature: ``node_bins``
    (n_features, n_rows)), their first slots and their statistics times their draw counts into ``node_bins``,
    ``node_slots`` and ``node_stats``: read once, used by every feature. Returns the number of rows."""
    for position in range(start, stop):
        row = sample_indices[position]
        k = position - start
        for feature_idx in range(X_binned.shape[1]):
            node_bins[feature_idx, k] = X_binned[row, feature_idx]
        node_slots[k] = row_slot[stats_base + row]
        for stat_idx in range(row_stats.shape[1]):
            node_stats[k, stat_idx] = counts[row] * row_stats[stats_base + row, stat_idx]
    return stop - start


@njit(cache=True)
def _add_feature_rows(feature_hist, feature_bins, node_slots, node_stats, n_rows, missing_bin, occupied_words):
    """Add a node's gathered rows (``_gather_node_rows``) to one feature's histogram (n_bins, n_slots), and
    set the bit of each bin they fall in in ``occupied_words`` (OCCUPIED_WORDS,) uint64, unless it is empty.

    Returns ``(low_bin, bins_used)``: their lowest non-missing bin and one past
    their highest (``(missing_bin, 0)`` when none): the bins a scan needs.
    The statistics' loop runs over a constant count (1, 2 or 3: class
    weights, newton's (g, h), regression's sums), which LLVM unrolls: 3x
    faster than a loop over ``node_stats.shape[1]``.
    """
    n_stats = node_stats.shape[1]
    if n_stats == 1:
        return _add_rows_1(feature_hist, feature_bins, node_slots, node_stats, n_rows, missing_bin, occupied_words)
    if n_stats == 2:
        return _add_rows_2(feature_hist, feature_bins, node_slots, node_stats, n_rows, missing_bin, occupied_words)
    if n_stats == 3:
        return _add_rows_3(feature_hist, feature_bins, node_slots, node_stats, n_rows, missing_bin, occupied_words)
    return _add_rows_any(feature_hist, feature_bins, node_slots, node_stats, n_rows, missing_bin, occupied_words)


def _add_rows_for(n_stats):
    """``_add_feature_rows`` for ``n_stats`` statistics per row, a constant (0: ``node_stats.shape[1]``)."""

    @njit(cache=True)
    def add_rows(feature_hist, feature_bins, node_slots, node_stats, n_rows, missing_bin, occupied_words):
        count_slot = np.uint64(feature_hist.shape[1] - 1)
        stats_per_row = n_stats if n_stats else node_stats.shape[1]
        marks_bins = occupied_words.shape[0] > 0
        low_bin, bins_used = missing_bin, 0
        # The bitset's words in registers: an OR into memory per row would wait for the previous row's.
        word_0, word_1, word_2, word_3 = np.uint64(0), np.uint64(0), np.uint64(0), np.uint64(0)
        # Unsigned indices: numba leaves out the negative-index wraparound (2x faster).
        for k in range(np.uint64(n_rows)):
            bin_idx = np.uint64(feature_bins[k])
            first_slot = np.uint64(node_slots[k])
            for stat_idx in range(np.uint64(stats_per_row)):
                feature_hist[bin_idx, first_slot + stat_idx] += node_stats[k, stat_idx]
            feature_hist[bin_idx, count_slot] += 1
            if marks_bins:
                bit, word_idx = np.uint64(1) << (bin_idx & np.uint64(63)), bin_idx >> np.uint64(6)
                word_0 |= bit if word_idx == 0 else np.uint64(0)
                word_1 |= bit if word_idx == 1 else np.uint64(0)
                word_2 |= bit if word_idx == 2 else np.uint64(0)
                word_3 |= bit if word_idx == 3 else np.uint64(0)
            if np.int64(bin_idx) != missing_bin:
                low_bin = min(low_bin, np.int64(bin_idx))
                bins_used = max(bins_used, np.int64(bin_idx) + 1)
        if marks_bins:
            occupied_words[0] |= word_0
            occupied_words[1] |= word_1
            occupied_words[2] |= word_2
            occupied_words[3] |= word_3
        return low_bin, bins_used

    return add_rows


_add_rows_1, _add_rows_2, _add_rows_3, _add_rows_any = (_add_rows_for(n_stats) for n_stats in (1, 2, 3, 0))


@njit(cache=True)
def _compact_feature_hist(feature_hist, feature_bins, n_rows, missing_bin, occupied, compact_hist):
    """The occupied bins of a few rows' feature histogram, in order, without the empty ones between them.

    ``occupied`` receives the distinct non-missing bins of ``feature_bins[:n_rows]``, increasing (an
    insertion sort: a few rows), and ``compact_hist`` their rows of ``feature_hist``, then its missing row.
    Returns their number, ``n_occupied``: ``compact_hist`` is a histogram whose bins ``0 .. n_occupied - 1``
    are ``occupied`` and whose missing bin is ``n_occupied``. A scan of it meets the candidates of a scan of
    ``feature_hist`` (an empty bin is none) in the same order, with the same sums.
    """
    n_occupied = 0
    for k in range(n_rows):
        bin_idx = np.int64(feature_bins[k])
        if bin_idx == missing_bin:
            continue
        position = n_occupied
        while position > 0 and occupied[position - 1] > bin_idx:
            position -= 1
        if position > 0 and occupied[position - 1] == bin_idx:
            continue
        for later in range(n_occupied, position, -1):
            occupied[later] = occupied[later - 1]
        occupied[position] = bin_idx
        n_occupied += 1
    for position in range(n_occupied):
        compact_hist[position] = feature_hist[occupied[position]]
    compact_hist[n_occupied] = feature_hist[missing_bin]
    return n_occupied


@njit(cache=True)
def _clear_feature_rows(feature_hist, feature_bins, n_rows):
    """Zero the bins of one feature's histogram that a node's gathered rows fall in.

    Over a constant count of slots (3 or 4: two statistics or regression's three, and the count), as
    ``_add_feature_rows``: a row's slots are then a few stores, not a call of ``memset`` (what LLVM makes of a
    loop over ``feature_hist.shape[1]``; 4-5x slower).
    """
    n_slots = feature_hist.shape[1]
    if n_slots == 3:
        _clear_rows_3(feature_hist, feature_bins, n_rows)
    elif n_slots == 4:
        _clear_rows_4(feature_hist, feature_bins, n_rows)
    else:
        _clear_rows_any(feature_hist, feature_bins, n_rows)


def _clear_rows_for(n_slots):
    """``_clear_feature_rows`` for ``n_slots`` slots per bin, a constant (0: ``feature_hist.shape[1]``)."""

    @njit(cache=True)
    def clear_rows(feature_hist, feature_bins, n_rows):
        slots_per_bin = n_slots if n_slots else feature_hist.shape[1]
        for k in range(np.uint64(n_rows)):
            bin_idx = np.uint64(feature_bins[k])
            for slot in range(np.uint64(slots_per_bin)):
                feature_hist[bin_idx, slot] = 0

    return clear_rows


_clear_rows_3, _clear_rows_4, _clear_rows_any = (_clear_rows_for(n_slots) for n_slots in (3, 4, 0))
