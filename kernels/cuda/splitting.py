"""Best split per node on the GPU (twin of ``kernels.cpu.splitting``), bit for bit the CPU's.

Both paths have the CPU's two phases:

1. Per (node, feature), one block of ``n_threads`` (the power of two >= the
   bins, at least a warp): thread ``b`` holds bin ``b``. The block puts the
   feature's bins in a work histogram (shared memory, or its own slice of a
   global scratch array where that does not fit), turns it into inclusive
   prefix sums over the bins (exact int64), and every thread whose bin is a
   threshold candidate calls ``common.scan_threshold`` once, from ``(-inf,
   NO_SPLIT, False)``, with the prefix sums of its bin as ``left``: the best
   of "missing right" then "missing left" at that bin. A block reduction keeps
   the largest gain and, among equal gains, the lowest ``2 * bin +
   missing_left``, which is the first best candidate in the CPU's scan order
   (threshold bins increasing, missing right before missing left, a candidate
   replacing the best only with a strictly larger gain; gains are never NaN
   once chosen). The (gain, bin, missing_left) of each pair goes to scratch
   arrays the launcher allocates with the arrays' namespace.
2. Per node: ``common.pick_best_feature`` over those, the chosen feature's
   left totals and next occupied bin, and ``common.resolve_missing_left``.

``find_best_splits_from_histograms``
    Phase 1 reads ``hist[hist_rows[node], feature]``; candidates are the
    occupied bins below ``n_bins_non_missing[feature]`` (the CPU skips empty
    bins). Phase 2: one thread per node.
``find_best_splits_from_rows`` (small nodes)
    Phase 1 first sums the node's rows into the work histogram with int64
    atomics (``n_bins = missing_bin + 1``); candidates are the occupied bins
    below ``missing_bin``, exactly the bins the CPU visits after sorting the
    rows, with the same integer left sums. Phase 2: one block per node sums the
    chosen feature's rows (``common.accumulate_row`` per thread, then shared
    atomics), as the CPU does.

Random thresholds (``threshold_draws`` with a row per node; the rule is in
``kernels.cpu.splitting``): after the prefix sums, the row counts of the
candidate bins' prefix sums find ``lo`` (the candidate with no candidate rows
below it) and ``hi`` (the one with all of them), which go to a 2-element
shared array; every thread then draws ``b`` with
``common.random_threshold_value_bin`` (a threshold uniform between the values of
bins ``lo`` and ``hi``, read from ``bin_values``) and stays a candidate only if its bin is the
highest occupied one ``<= b`` (its bin ``<= b`` and no candidate rows between
them). The branch depends on the launch only, so it is the same for the
whole block. Phase 1 reads the draws flattened, at its task index: a 2-D index
there costs 8 more registers on sm_80 (72 for the row path at 21 slots).

A scan of all bins by one thread would need about 80 to 170 registers
(``scan_threshold`` in a loop); one call per thread needs 40 to 60.

Categorical features (``categorical_features``; the rule is in
``kernels.common``) get phase-1 blocks of their own, kernel specialisations
(``category_words``) launched over (node, categorical feature) after the
numeric one, which sees them masked out: one for the sorted scan and, where
the criterion and the draws allow it, one for every subset, each block doing
its node if it is of its kind (both in one kernel cost 10 registers more).
Phase 2 has specialisations with and without categorical features, so that
trees without any run today's code. Thread ``c`` holds category ``c``,
ranks it by ``common.category_order_key`` (ties, and every-subset searches,
by code) against the block's keys in shared memory and moves its row of the
work histogram to its rank; then thread ``k - 1`` judges the first ``k``
ranked categories (prefix sums), or thread ``t`` the subset of odd bit mask
``2 t + 1`` (so these blocks have at least ``EXHAUSTIVE_SUBSETS`` threads),
and the same reduction picks the CPU's candidate. The chosen and occupied
categories (shared bitsets, atomic ORs) go to a scratch array per (node,
categorical feature), from which phase 2 makes the node's bitset
(``common.finish_category_split``, ``common.category_bitset``).
"""

import functools
import math

from numba import cuda, types

from ..common import (
    FROM_ROWS, MAX_EXHAUSTIVE_CATEGORIES, NO_CONSTRAINT, NO_SPLIT, accumulate_row, base_criterion, category_bitset,
    category_order_key, category_position, criterion_outputs,
    finish_category_split, finish_split_from_histogram, has_category, parent_cost, pick_best_feature,
    random_threshold_bin, random_threshold_value_bin, record_best_feature, resolve_missing_left, scan_threshold,
    searches_all_subsets, split_constraint,
)
from . import jit_kernel
from .histogram import array_namespace

# --- launch configuration --------------------------------------------------------

PICK_THREADS = 64  # phase 2 of the histogram path: threads (nodes) per block
FINISH_ROWS_THREADS = 64  # phase 2 of the row path: threads per node block
MIN_SCAN_THREADS = 32
MAX_BLOCKS = 65535  # phase 2 grid-strides beyond
# The work histogram of a phase-1 block is in shared memory up to this size (256 bins x
# 20 slots); with the reduction arrays a block stays under the 48 KiB static limit, and
# 4 resident blocks of 256 threads (50% occupancy on an H100) fit in 228 KiB.
WORK_SHARED_BYTES = 40 * 1024
# Larger work histograms go to a global scratch array of one per block, at most this big
# (phase 1 then runs in several launches).
WORK_SCRATCH_BYTES = 64 * 1024 * 1024
NO_ORDER = 2**31 - 1  # reduction key of "no candidate"
# Splits of a node when every subset of its categories is tried (common.searches_all_subsets).
EXHAUSTIVE_SUBSETS = 2 ** (MAX_EXHAUSTIVE_CATEGORIES - 1)


def scan_threads(n_bins):
    """Threads of a phase-1 block: the power of two >= ``n_bins``, at least a warp."""
    threads = MIN_SCAN_THREADS
    while threads < n_bins:
        threads *= 2
    return threads


def category_threads(n_threads):
    """Threads of a categorical phase-1 block: those of its bins, and at least one per subset tried when
    every subset is (``EXHAUSTIVE_SUBSETS``)."""
    return max(n_threads, EXHAUSTIVE_SUBSETS)


def work_in_shared(n_threads, n_slots):
    return n_threads * n_slots * 8 <= WORK_SHARED_BYTES


def _split_scratch(xp, n_nodes, n_features, n_categorical, n_words):
    """Best (gain, bin, missing_left) per (node, feature), and the chosen and occupied categories per
    (node, categorical feature), as on the CPU."""
    return (
        xp.empty((n_nodes, n_features), dtype=xp.float64),
        xp.empty((n_nodes, n_features), dtype=xp.int32),
        xp.empty((n_nodes, n_features), dtype=xp.bool_),
        xp.empty((n_nodes, n_categorical, 2, n_words), dtype=xp.uint32),
    )


def _launch_phase1(kernel, n_tasks, n_threads, n_slots, xp, args):
    """Phase 1 over ``n_tasks`` (node, feature) blocks, one launch unless the work goes to scratch."""
    if work_in_shared(n_threads, n_slots):
        batch = n_tasks
        scratch = xp.empty((1, 1, 1), dtype=xp.int64)
    else:
        batch = max(1, min(n_tasks, WORK_SCRATCH_BYTES // (n_threads * n_slots * 8)))
        scratch = xp.empty((batch, n_threads, n_slots), dtype=xp.int64)
    for first_task in range(0, n_tasks, batch):
        kernel[min(batch, n_tasks - first_task), n_threads](*args, scratch, first_task)


@functools.lru_cache(maxsize=None)
def _block_helpers(n_threads, n_slots):
    """Device functions of a phase-1 block: prefix sums over the bins, the random-threshold
    candidate and the best candidate."""
    count_slot = n_slots - 1

    @cuda.jit(device=True)
    def prefix_sums(work, tid, neighbour, n_columns):
        """``work[b] <- work[0] + ... + work[b]`` (Hillis-Steele; int64, so exact) over the first ``n_columns``
        slots (``n_slots``, or a bound known only at run time: a loop kept rolled)."""
        offset = 1
        while offset < n_threads:
            if tid >= offset:
                for slot in range(n_columns):
                    neighbour[slot] = work[tid - offset, slot]
            cuda.syncthreads()
            if tid >= offset:
                for slot in range(n_columns):
                    work[tid, slot] += neighbour[slot]
            cuda.syncthreads()
            offset *= 2

    @cuda.jit(device=True)
    def random_candidate(work, tid, candidate, last_bin, draw, bin_values, first_value, bounds):
        """Whether thread ``tid``'s bin is the random-threshold candidate; the whole block calls it.

        After ``prefix_sums``, where only candidate bins (all below or at
        ``last_bin``) added rows to ``work``. ``draw`` is the node's uniform for
        the feature, ``bin_values[first_value + b]`` the value of bin ``b``;
        ``bounds`` a shared int32 array of 2 (``lo``, ``hi``).
        """
        if candidate:
            rows_up_to_mine = work[tid, count_slot]
            if tid == 0 or work[tid - 1, count_slot] == 0:
                bounds[0] = tid
            if rows_up_to_mine == work[last_bin, count_slot]:
                bounds[1] = tid
        cuda.syncthreads()
        # Without a candidate in the block no thread reads bounds, which nobody wrote.
        if not candidate or bounds[1] == bounds[0]:
            return False
        drawn = random_threshold_value_bin(bin_values, first_value, bounds[0], bounds[1], draw)
        return tid <= drawn and work[drawn, count_slot] == work[tid, count_slot]

    @cuda.jit(device=True)
    def best_candidate(best_gain, best_order, tid):
        """Largest gain, then lowest order, into ``[0]`` (the first best in scan order)."""
        stride = n_threads // 2
        while stride > 0:
            if tid < stride:
                gain = best_gain[tid + stride]
                order = best_order[tid + stride]
                if gain > best_gain[tid] or (gain == best_gain[tid] and order < best_order[tid]):
                    best_gain[tid] = gain
                    best_order[tid] = order
            cuda.syncthreads()
            stride //= 2

    return prefix_sums, random_candidate, best_candidate


@cuda.jit(device=True)
def _keep_better(best_gain, best_order, tid, gain, candidate, missing_left):
    """Keep ``scan_threshold``'s ``(gain, candidate, missing_left)`` in ``best_gain[tid]``, ``best_order[tid]``
    (reduction keys: see the module docstring) if its gain is larger."""
    if candidate != NO_SPLIT and gain > best_gain[tid]:
        best_gain[tid] = gain
        best_order[tid] = 2 * candidate + (1 if missing_left else 0)


@cuda.jit(device=True)
def _write_best(best_gain, best_order, node, feature_idx, gains, bins, missing_left):
    order = best_order[0]
    if order == NO_ORDER:
        gains[node, feature_idx] = -math.inf
        bins[node, feature_idx] = NO_SPLIT
        missing_left[node, feature_idx] = False
    else:
        gains[node, feature_idx] = best_gain[0]
        bins[node, feature_idx] = order >> 1
        missing_left[node, feature_idx] = (order & 1) == 1


@functools.lru_cache(maxsize=None)
def _category_helpers(n_threads, n_slots, n_words, all_subsets):
    """Device functions of a phase-1 block on a categorical feature: the candidates' gains, and the
    chosen and occupied categories of the best one. ``all_subsets``: the blocks of the nodes whose every
    subset is tried (``common.searches_all_subsets``), else of those whose sorted categories are scanned;
    one specialisation each, as both in one kernel cost 10 registers more than either."""
    count_slot = n_slots - 1
    prefix_sums, _, _ = _block_helpers(n_threads, n_slots)

    @cuda.jit(device=True)
    def category_candidates(
        work, own, occupied, missing, parent, threshold_draws, draw_idx, criterion, inv_scales, regularization,
        min_samples_leaf, min_weight_leaf, lower, upper, neighbour, left_with_missing, keys, ranks, bits, best_gain,
        best_order,
    ):
        """Whether the block's node is this specialisation's (else it returns at once, having written
        nothing); then thread ``tid``'s best candidate into ``best_gain[tid]``, ``best_order[tid]``, and its
        category's rank into ``ranks[tid]`` (-1: no rows). The whole block calls it.

        Thread ``tid`` holds category ``tid``: its histogram row ``own``
        (local, already read: ``work`` is overwritten), ``occupied`` when it
        has rows. Each occupied category's rank in the order of the CPU's
        ``_order_categories`` (its key, then its code; by code alone when every
        subset is tried) is the count of those before it, and its row goes to
        ``work[rank]``: then as in the numeric scan, thread ``k - 1`` judges the
        first ``k`` categories (prefix sums), or, trying every subset, thread
        ``tid`` the subset ``2 tid + 1`` (an odd bit mask over the ranks; the
        block has at least ``EXHAUSTIVE_SUBSETS`` threads; a loop over several
        costs 20 registers). ``bits``: a shared (2, n_words) uint32 array; its
        row 1 gets the occupied categories. Loops over the slots run to
        ``parent.shape[0]``, a bound known only at run time, which keeps
        ``own`` and the sums in local memory (66 registers at 11 slots, not 76),
        and the draw is read where it is used. ``lower``, ``upper``: the node's value bounds (a categorical
        feature has no monotonic constraint).
        """
        tid = cuda.threadIdx.x
        n_stat_slots = parent.shape[0] - 1
        n_categories = cuda.syncthreads_count(1 if occupied else 0)
        random = threshold_draws.shape[0] > 0
        if searches_all_subsets(criterion, n_stat_slots, n_categories, 0.0 if random else -1.0) != all_subsets:
            return False
        if tid < n_words:
            bits[0, tid] = 0
            bits[1, tid] = 0
        key = math.nan
        if occupied:
            if all_subsets:
                key = float(tid)
            else:
                key = category_order_key(criterion, own, parent, n_stat_slots, inv_scales, regularization)
        keys[tid] = key
        cuda.syncthreads()
        rank = -1
        if occupied:
            cuda.atomic.or_(bits, (1, tid >> 5), types.uint32(1 << (tid & 31)))
            # A NaN key (no category) compares False: never counted.
            rank = 0
            for other in range(n_threads):
                other_key = keys[other]
                if other_key < key or (other_key == key and other < tid):
                    rank += 1
            for slot in range(n_stat_slots + 1):
                work[rank, slot] = own[slot]
        # Kept in shared memory until record_category_bits: registers fewer through the scan.
        ranks[tid] = rank
        if tid >= n_categories:
            for slot in range(n_stat_slots + 1):
                work[tid, slot] = 0
        cuda.syncthreads()
        best_gain[tid] = -math.inf
        best_order[tid] = NO_ORDER
        if all_subsets:
            # Thread tid's subset's sums, moved to work[tid] once every thread has read the categories'
            # rows: the scan reads its left sums there (a local array costs 6 registers more).
            candidate = 2 * tid + 1
            in_range = candidate < 1 << n_categories
            if in_range:
                for slot in range(n_stat_slots + 1):
                    neighbour[slot] = 0
                for position in range(n_categories):
                    if (candidate >> position) & 1:
                        for slot in range(n_stat_slots + 1):
                            neighbour[slot] += work[position, slot]
            cuda.syncthreads()
            if in_range:
                for slot in range(n_stat_slots + 1):
                    work[tid, slot] = neighbour[slot]
                _keep_better(
                    best_gain, best_order, tid, *scan_threshold(
                        candidate, parent, parent_cost(criterion, parent, n_stat_slots, inv_scales, regularization),
                        work[tid], missing, left_with_missing, missing[count_slot] > 0, -math.inf, NO_SPLIT, False,
                        criterion, n_stat_slots, inv_scales, regularization, min_samples_leaf, min_weight_leaf,
                        NO_CONSTRAINT, lower, upper,
                    ),
                )
        else:
            prefix_sums(work, tid, neighbour, n_stat_slots + 1)
            first, last = 1, n_categories
            if random:
                first = last = 0
                if n_categories >= 2:
                    first = last = random_threshold_bin(1, n_categories, threshold_draws[draw_idx])
            if first <= tid + 1 <= last:
                _keep_better(
                    best_gain, best_order, tid, *scan_threshold(
                        tid + 1, parent, parent_cost(criterion, parent, n_stat_slots, inv_scales, regularization),
                        work[tid], missing, left_with_missing, missing[count_slot] > 0, -math.inf, NO_SPLIT, False,
                        criterion, n_stat_slots, inv_scales, regularization, min_samples_leaf, min_weight_leaf,
                        NO_CONSTRAINT, lower, upper,
                    ),
                )
        return True

    @cuda.jit(device=True)
    def record_category_bits(bits, best_order, ranks, out_bits):
        """After ``best_candidate``: the chosen categories into ``bits[0]``, then both rows of ``bits``
        to ``out_bits`` (2, n_words); the whole block calls it."""
        tid = cuda.threadIdx.x
        chosen = best_order[0]
        rank = ranks[tid]
        if rank >= 0 and chosen != NO_ORDER:
            candidate = chosen >> 1
            in_left = ((candidate >> rank) & 1) == 1 if all_subsets else rank < candidate
            if in_left:
                cuda.atomic.or_(bits, (0, tid >> 5), types.uint32(1 << (tid & 31)))
        cuda.syncthreads()
        if tid < n_words:
            out_bits[0, tid] = bits[0, tid]
            out_bits[1, tid] = bits[1, tid]

    return category_candidates, record_category_bits


@functools.lru_cache(maxsize=None)
def _task_feature(category_words):
    """Device function ``(task, n_features, categorical_features) -> (node, feature_idx, categorical_idx)``
    of a phase-1 task: over every feature (the numeric scan, ``categorical_idx = -1``), or, when
    ``category_words`` (a categorical scan), over the categorical ones (``categorical_idx``: the position
    in ``categorical_features``). One function per scan: a run-time choice costs the numeric scan 8
    registers."""
    if category_words:

        @cuda.jit(device=True, inline="always")
        def categorical_task_feature(task, n_features, categorical_features):
            n_categorical = categorical_features.shape[0]
            node = task // n_categorical
            categorical_idx = task - node * n_categorical
            return node, categorical_features[categorical_idx], categorical_idx

        return categorical_task_feature

    @cuda.jit(device=True, inline="always")
    def task_feature(task, n_features, categorical_features):
        node = task // n_features
        return node, task - node * n_features, -1

    return task_feature


def _subsets_possible(criterion, n_slots, threshold_draws):
    """Whether any node may have every subset of its categories tried (``common.searches_all_subsets``
    with no category: the criterion and the draws decide)."""
    return searches_all_subsets(base_criterion(criterion), n_slots - 1, 0, -1.0 if threshold_draws.shape[0] == 0 else 0.0)


def _numeric_feature_mask(feature_mask, categorical_features):
    """The numeric scan's ``feature_mask``: without the categorical features (the same array when none)."""
    if categorical_features.shape[0] == 0:
        return feature_mask
    numeric = feature_mask.copy()
    numeric[:, categorical_features] = False
    return numeric


# --- from histograms -------------------------------------------------------------------


# The scans compiled with monotonic constraints or for several outputs: capped at half occupancy's
# registers (up to 16 more than the other scans' would otherwise cost a quarter of the resident threads).
CONSTRAINED_MAX_REGISTERS = 64


def _scan_max_registers(constrained, multi_output):
    """ptxas's register cap of a phase-1 scan: ``CONSTRAINED_MAX_REGISTERS`` for those compiled with
    constraints or for several outputs, none for the others (they stay below it uncapped)."""
    return CONSTRAINED_MAX_REGISTERS if constrained or multi_output else None


@functools.lru_cache(maxsize=None)
def _split_constraint_of(constrained):
    """``common.split_constraint`` for the kernels compiled with constraints, or no constraint for those
    compiled without (``constrained`` a constant: their constraint test folds away, and they keep the
    registers of the unconstrained search; with it a scan takes up to 16 more)."""

    @cuda.jit(device=True)
    def split_constraint_of(monotonic_cst, value_bounds, node, feature_idx):
        if constrained:
            return split_constraint(monotonic_cst, value_bounds, node, feature_idx)
        return NO_CONSTRAINT, -math.inf, math.inf

    return split_constraint_of


@functools.lru_cache(maxsize=None)
def _scan_histograms_kernel(
    n_threads, n_slots, use_shared, category_words=0, all_subsets=False, constrained=False, multi_output=False,
):
    """Phase 1 of the histogram path for ``n_bins <= n_threads``: over the numeric features, or, with
    ``category_words`` (the bitsets' words), over the categorical ones, of the nodes whose every subset is
    tried or not (``all_subsets``, see ``_category_helpers``). ``use_shared``: the work histogram in shared
    memory (``work_in_shared``), else in the launch's global scratch. ``constrained``: monotonic constraints
    (``_split_constraint_of``). ``multi_output``: for the criteria of several outputs
    (``common.multi_output_criterion``, a pair), capped at ``CONSTRAINED_MAX_REGISTERS``."""
    work_shape = (n_threads, n_slots) if use_shared else (1, 1)
    count_slot = n_slots - 1
    prefix_sums, random_candidate, best_candidate = _block_helpers(n_threads, n_slots)
    bits_shape = (2, max(category_words, 1))
    category_candidates, record_category_bits = _category_helpers(n_threads, n_slots, bits_shape[1], all_subsets)
    task_feature = _task_feature(category_words)
    split_constraint_of = _split_constraint_of(constrained)

    def scan_histograms_kernel(
        hist, hist_rows, totals, feature_mask, categorical_features, threshold_draws, bin_values, n_bins_non_missing,
        missing_bin, criterion, inv_scales, regularization, min_samples_leaf, min_weight_leaf, monotonic_cst,
        value_bounds, gains, bins, missing_left, category_bits, scratch, first_task,
    ):
        shared_work = cuda.shared.array(work_shape, types.int64)
        random_bounds = cuda.shared.array(2, types.int32)
        best_gain = cuda.shared.array(n_threads, types.float64)
        best_order = cuda.shared.array(n_threads, types.int32)
        neighbour = cuda.local.array(n_slots, types.int64)
        left_with_missing = cuda.local.array(n_slots, types.int64)
        tid = cuda.threadIdx.x
        n_features = hist.shape[1]
        task = first_task + cuda.blockIdx.x
        node, feature_idx, categorical_idx = task_feature(task, n_features, categorical_features)
        if category_words:
            # The task, from shared memory at the end: not held in registers through the scan.
            block_task = cuda.shared.array(3, types.int64)
            if tid == 0:
                block_task[0], block_task[1], block_task[2] = node, feature_idx, categorical_idx
        if not feature_mask[node, feature_idx]:  # the same branch for the whole block
            if tid == 0:
                gains[node, feature_idx] = -math.inf
                bins[node, feature_idx] = NO_SPLIT
                missing_left[node, feature_idx] = False
            return
        if use_shared:
            work = shared_work
        else:
            work = scratch[cuda.blockIdx.x]
        feature_hist = hist[hist_rows[node], feature_idx]
        # Thread b's bin is a candidate if it is below n_bins_non_missing and occupied
        # (an empty bin repeats the previous candidate, which won any tie); as on the
        # CPU, only candidate bins add to the left sums.
        candidate = tid < n_bins_non_missing[feature_idx] and feature_hist[tid, count_slot] != 0
        if category_words:
            keys = cuda.shared.array(n_threads, types.float64)
            ranks = cuda.shared.array(n_threads, types.int32)
            bits = cuda.shared.array(bits_shape, types.uint32)
            own = cuda.local.array(n_slots, types.int64)
            # A loop bound known only at run time keeps own in local memory, not in 2 n_slots registers.
            for slot in range(totals.shape[1]):
                own[slot] = feature_hist[tid, slot] if candidate else 0
            _, lower, upper = split_constraint_of(monotonic_cst, value_bounds, node, feature_idx)
            if not category_candidates(
                work, own, candidate, feature_hist[missing_bin], totals[node], threshold_draws,
                node * n_features + feature_idx, criterion, inv_scales, regularization, min_samples_leaf,
                min_weight_leaf[node], lower, upper, neighbour, left_with_missing, keys, ranks, bits, best_gain,
                best_order,
            ):
                return  # the other specialisation's node
        else:
            for slot in range(n_slots):
                work[tid, slot] = feature_hist[tid, slot] if candidate else 0
            cuda.syncthreads()
            prefix_sums(work, tid, neighbour, n_slots)
            if threshold_draws.shape[0] > 0:
                # Non-candidate bins hold zeros: the last prefix sum counts the candidates' rows.
                # (threshold_draws is flat here, indexed by task: see the module docstring.)
                candidate = random_candidate(
                    work, tid, candidate, n_threads - 1, threshold_draws[task], bin_values,
                    feature_idx * n_threads, random_bounds,
                )
            gain = -math.inf
            order = NO_ORDER
            if candidate:
                parent = totals[node]
                missing = feature_hist[missing_bin]
                # n_slots - 1, read from an argument: a loop bound known only at run time keeps
                # the math's loops over the slots rolled (56 registers, not 72 to 128, at 11+ slots).
                n_stat_slots = parent.shape[0] - 1
                cost = parent_cost(criterion, parent, n_stat_slots, inv_scales, regularization)
                monotonic, lower, upper = split_constraint_of(monotonic_cst, value_bounds, node, feature_idx)
                gain, best_bin, best_missing_left = scan_threshold(
                    tid, parent, cost, work[tid], missing, left_with_missing, missing[count_slot] > 0,
                    -math.inf, NO_SPLIT, False, criterion, n_stat_slots, inv_scales, regularization,
                    min_samples_leaf, min_weight_leaf[node], monotonic, lower, upper,
                )
                if best_bin != NO_SPLIT:
                    order = 2 * best_bin + (1 if best_missing_left else 0)
            best_gain[tid] = gain
            best_order[tid] = order
        cuda.syncthreads()
        best_candidate(best_gain, best_order, tid)
        if category_words:
            node, feature_idx, categorical_idx = block_task[0], block_task[1], block_task[2]
            record_category_bits(bits, best_order, ranks, category_bits[node, categorical_idx])
        if tid == 0:
            _write_best(best_gain, best_order, node, feature_idx, gains, bins, missing_left)

    return scan_histograms_kernel, jit_kernel(
        scan_histograms_kernel, max_registers=_scan_max_registers(constrained, multi_output)
    )


@functools.lru_cache(maxsize=None)
def pick_from_histogram(has_categorical):
    """Phase 2 of the histogram path for one node, a device function (one thread); ``has_categorical``: some
    features are categorical (without, the categorical code is left out: 48 registers, not 63, on sm_80)."""

    @cuda.jit(device=True)
    def pick_node(
        hist, hist_row, node, totals, categorical_features, n_bins_non_missing, missing_bin, gains, bins, missing_left,
        category_bits, out_gain, out_feature, out_bin, out_missing_left, out_left_totals, out_next_bin,
        out_categorical, out_category_bitset,
    ):
        best_feature, categorical_idx = record_best_feature(
            gains, bins, node, categorical_features, out_gain, out_feature, out_bin, out_missing_left,
            out_left_totals, out_next_bin, out_categorical, out_category_bitset,
        )
        if best_feature == NO_SPLIT:
            return
        feature_hist = hist[hist_row, best_feature]
        if has_categorical and categorical_idx >= 0:
            out_missing_left[node] = finish_category_split(
                feature_hist, category_bits[node, categorical_idx], n_bins_non_missing[best_feature],
                missing_bin, missing_left[node, best_feature], totals[node], out_left_totals[node],
                out_category_bitset[node],
            )
        else:
            out_missing_left[node], out_next_bin[node] = finish_split_from_histogram(
                feature_hist, out_bin[node], n_bins_non_missing[best_feature], missing_bin,
                missing_left[node, best_feature], totals[node], out_left_totals[node],
            )

    return pick_node


@functools.lru_cache(maxsize=None)
def _pick_from_histograms_kernel(has_categorical):
    """Phase 2 of the histogram path, ``(python_function, kernel)``: a thread per node
    (``pick_from_histogram``)."""
    pick_node = pick_from_histogram(has_categorical)

    def pick_from_histograms_kernel(
        hist, hist_rows, totals, categorical_features, n_bins_non_missing, missing_bin, gains, bins, missing_left,
        category_bits, out_gain, out_feature, out_bin, out_missing_left, out_left_totals, out_next_bin,
        out_categorical, out_category_bitset,
    ):
        for node in range(cuda.grid(1), hist_rows.shape[0], cuda.gridsize(1)):
            pick_node(
                hist, hist_rows[node], node, totals, categorical_features, n_bins_non_missing, missing_bin, gains,
                bins, missing_left, category_bits, out_gain, out_feature, out_bin, out_missing_left, out_left_totals,
                out_next_bin, out_categorical, out_category_bitset,
            )

    return pick_from_histograms_kernel, jit_kernel(pick_from_histograms_kernel)


def _launch_phase1_kernels(
    factory, arguments, feature_mask, categorical_features, n_words, subsets_possible, n_threads, n_slots, xp,
    constrained, multi_output,
):
    """Phase 1 of both paths (``factory``: ``_scan_histograms_kernel`` or ``_scan_rows_kernel``): a block per
    (node, feature) over the numeric features (the others masked out), then, when there are categorical
    features, a block per (node, categorical feature) of the sorted scan and, when every subset may be
    tried (``subsets_possible``), one of the subsets' (each block does the node of its own kind).
    ``arguments(feature_mask)``: the kernels' arguments; ``constrained``, ``multi_output``: the kernels
    compiled with monotonic constraints, for several outputs (see ``_scan_histograms_kernel``)."""
    n_nodes, n_features = feature_mask.shape
    n_categorical = categorical_features.shape[0]
    if n_features > 0:
        _launch_phase1(
            factory(n_threads, n_slots, work_in_shared(n_threads, n_slots), 0, False, constrained, multi_output)[1],
            n_nodes * n_features, n_threads,
            n_slots, xp, arguments(_numeric_feature_mask(feature_mask, categorical_features)),
        )
    if n_categorical > 0:
        n_threads = category_threads(n_threads)
        for all_subsets in (False, True) if subsets_possible else (False,):
            _launch_phase1(
                factory(
                    n_threads, n_slots, work_in_shared(n_threads, n_slots), n_words, all_subsets, constrained,
                    multi_output,
                )[1],
                n_nodes * n_categorical, n_threads, n_slots, xp, arguments(feature_mask),
            )


def find_best_splits_from_histograms(
    hist, hist_rows, totals, feature_mask, categorical_features, threshold_draws, bin_values, n_bins_non_missing,
    missing_bin, criterion, inv_scales, regularization, min_samples_leaf, min_weight_leaf, monotonic_cst, value_bounds,
    out_gain, out_feature, out_bin, out_missing_left, out_left_totals, out_next_bin, out_categorical,
    out_category_bitset,
):
    """Best split of every node from its histogram ``hist[hist_rows[node]]`` (see ``kernels.cpu``).

    Launch: one block of ``scan_threads(n_bins)`` threads per (node, feature)
    (several launches only when the work histograms go to global scratch; the
    blocks of categorical features return at once), as many per (node,
    categorical feature) when there are any, then ``ceil(n_nodes /
    PICK_THREADS)`` blocks of ``PICK_THREADS`` threads, one per node
    (grid-stride beyond ``MAX_BLOCKS`` blocks).
    """
    n_nodes = hist_rows.shape[0]
    if n_nodes == 0:
        return
    n_features, n_bins, n_slots = hist.shape[1], hist.shape[2], hist.shape[3]
    n_categorical, n_words = categorical_features.shape[0], out_category_bitset.shape[1]
    xp = array_namespace(totals)
    gains, bins, missing_left, category_bits = _split_scratch(xp, n_nodes, n_features, n_categorical, n_words)
    if bin_values.shape[1] > 0:
        # Rows of a block's width: the kernel indexes them by its thread count, a constant that costs no register.
        padded = xp.zeros((n_features, scan_threads(n_bins)))
        padded[:, :n_bins] = bin_values
        bin_values = padded
    _launch_phase1_kernels(
        _scan_histograms_kernel,
        lambda mask: (
            hist, hist_rows, totals, mask, categorical_features, threshold_draws.reshape(-1), bin_values.reshape(-1),
            n_bins_non_missing, missing_bin, criterion, inv_scales, regularization, min_samples_leaf, min_weight_leaf,
            monotonic_cst, value_bounds, gains, bins, missing_left, category_bits,
        ),
        feature_mask, categorical_features, n_words, _subsets_possible(criterion, n_slots, threshold_draws),
        scan_threads(n_bins), n_slots, xp, value_bounds.shape[0] > 0, criterion_outputs(criterion) > 1,
    )
    pick = _pick_from_histograms_kernel(n_categorical > 0)[1]
    pick[max(1, min(-(-n_nodes // PICK_THREADS), MAX_BLOCKS)), PICK_THREADS](
        hist, hist_rows, totals, categorical_features, n_bins_non_missing, missing_bin, gains, bins, missing_left,
        category_bits, out_gain, out_feature, out_bin, out_missing_left, out_left_totals, out_next_bin,
        out_categorical, out_category_bitset,
    )


# --- from rows -----------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _scan_rows_kernel(
    n_threads, n_slots, use_shared, category_words=0, all_subsets=False, constrained=False, multi_output=False,
):
    """Phase 1 of the row path for ``missing_bin < n_threads``; the other arguments as in
    ``_scan_histograms_kernel``."""
    work_shape = (n_threads, n_slots) if use_shared else (1, 1)
    count_slot = n_slots - 1
    prefix_sums, random_candidate, best_candidate = _block_helpers(n_threads, n_slots)
    bits_shape = (2, max(category_words, 1))
    category_candidates, record_category_bits = _category_helpers(n_threads, n_slots, bits_shape[1], all_subsets)
    task_feature = _task_feature(category_words)
    split_constraint_of = _split_constraint_of(constrained)

    def scan_rows_kernel(
        X_binned, sample_indices, node_start, node_stop, node_tree, sample_counts, row_slot, row_stats, stats_stride,
        totals, feature_mask, categorical_features, threshold_draws, bin_values, missing_bin, criterion, inv_scales,
        regularization, min_samples_leaf, min_weight_leaf, monotonic_cst, value_bounds, gains, bins, missing_left,
        category_bits, scratch, first_task,
    ):
        shared_work = cuda.shared.array(work_shape, types.int64)
        random_bounds = cuda.shared.array(2, types.int32)
        missing = cuda.shared.array(n_slots, types.int64)
        best_gain = cuda.shared.array(n_threads, types.float64)
        best_order = cuda.shared.array(n_threads, types.int32)
        neighbour = cuda.local.array(n_slots, types.int64)
        left_with_missing = cuda.local.array(n_slots, types.int64)
        tid = cuda.threadIdx.x
        n_features = X_binned.shape[1]
        task = first_task + cuda.blockIdx.x
        node, feature_idx, categorical_idx = task_feature(task, n_features, categorical_features)
        if category_words:
            # The task, from shared memory at the end: not held in registers through the scan.
            block_task = cuda.shared.array(3, types.int64)
            if tid == 0:
                block_task[0], block_task[1], block_task[2] = node, feature_idx, categorical_idx
        if not feature_mask[node, feature_idx]:  # the same branch for the whole block
            if tid == 0:
                gains[node, feature_idx] = -math.inf
                bins[node, feature_idx] = NO_SPLIT
                missing_left[node, feature_idx] = False
            return
        if use_shared:
            work = shared_work
        else:
            work = scratch[cuda.blockIdx.x]
        # The node's histogram of this feature: the same int64 sums as the CPU's
        # sorted rows give, bin by bin.
        for slot in range(n_slots):
            work[tid, slot] = 0
        cuda.syncthreads()
        tree = node_tree[node]
        stats_base = tree * stats_stride
        n_row_stats = row_stats.shape[1]
        for position in range(node_start[node] + tid, node_stop[node], n_threads):
            row = sample_indices[position]
            bin_idx = X_binned[row, feature_idx]
            multiplicity = sample_counts[tree, row]
            stats_row = stats_base + row
            first_slot = row_slot[stats_row]
            for stat_idx in range(n_row_stats):
                cuda.atomic.add(work, (bin_idx, first_slot + stat_idx), multiplicity * row_stats[stats_row, stat_idx])
            cuda.atomic.add(work, (bin_idx, count_slot), 1)
        cuda.syncthreads()
        # The candidates are the occupied bins below the missing bin, whose prefix sums
        # never include it; the missing sums are kept apart. (Only reads here: the
        # prefix sums, and the categorical scan, write after their first barrier.)
        for slot in range(tid, n_slots, n_threads):
            missing[slot] = work[missing_bin, slot]
        candidate = tid < missing_bin and work[tid, count_slot] != 0
        if category_words:
            keys = cuda.shared.array(n_threads, types.float64)
            ranks = cuda.shared.array(n_threads, types.int32)
            bits = cuda.shared.array(bits_shape, types.uint32)
            own = cuda.local.array(n_slots, types.int64)
            # A loop bound known only at run time keeps own in local memory, not in 2 n_slots registers.
            for slot in range(totals.shape[1]):
                own[slot] = work[tid, slot]
            _, lower, upper = split_constraint_of(monotonic_cst, value_bounds, node, feature_idx)
            if not category_candidates(
                work, own, candidate, missing, totals[node], threshold_draws, node * n_features + feature_idx,
                criterion, inv_scales, regularization, min_samples_leaf, min_weight_leaf[node], lower, upper,
                neighbour, left_with_missing, keys, ranks, bits, best_gain, best_order,
            ):
                return  # the other specialisation's node
        else:
            prefix_sums(work, tid, neighbour, n_slots)
            if threshold_draws.shape[0] > 0:
                # The missing bin's rows come after missing_bin - 1 in the prefix sums.
                # (threshold_draws is flat here, indexed by task: see the module docstring.)
                candidate = random_candidate(
                    work, tid, candidate, missing_bin - 1, threshold_draws[task], bin_values,
                    feature_idx * (missing_bin + 1), random_bounds,
                )
            gain = -math.inf
            order = NO_ORDER
            if candidate:
                parent = totals[node]
                # n_slots - 1, read from an argument: a loop bound known only at run time keeps
                # the math's loops over the slots rolled (56 registers, not 72 to 128, at 11+ slots).
                n_stat_slots = parent.shape[0] - 1
                cost = parent_cost(criterion, parent, n_stat_slots, inv_scales, regularization)
                monotonic, lower, upper = split_constraint_of(monotonic_cst, value_bounds, node, feature_idx)
                gain, best_bin, best_missing_left = scan_threshold(
                    tid, parent, cost, work[tid], missing, left_with_missing, missing[count_slot] > 0,
                    -math.inf, NO_SPLIT, False, criterion, n_stat_slots, inv_scales, regularization,
                    min_samples_leaf, min_weight_leaf[node], monotonic, lower, upper,
                )
                if best_bin != NO_SPLIT:
                    order = 2 * best_bin + (1 if best_missing_left else 0)
            best_gain[tid] = gain
            best_order[tid] = order
        cuda.syncthreads()
        best_candidate(best_gain, best_order, tid)
        if category_words:
            node, feature_idx, categorical_idx = block_task[0], block_task[1], block_task[2]
            record_category_bits(bits, best_order, ranks, category_bits[node, categorical_idx])
        if tid == 0:
            _write_best(best_gain, best_order, node, feature_idx, gains, bins, missing_left)

    return scan_rows_kernel, jit_kernel(scan_rows_kernel, max_registers=_scan_max_registers(constrained, multi_output))


@functools.lru_cache(maxsize=None)
def finish_from_rows(n_slots, threads, has_categorical):
    """Phase 2 of the row path for one node, a device function the whole block of ``threads`` calls: the chosen
    feature's left and missing sums from the rows, each thread's in local arrays, the block's in shared ones.
    ``has_categorical`` as in ``pick_from_histogram``."""

    @cuda.jit(device=True)
    def finish_node(
        node, X_binned, sample_indices, node_start, node_stop, node_tree, sample_counts, row_slot, row_stats,
        stats_stride, totals, categorical_features, missing_bin, gains, bins, missing_left, category_bits, out_gain,
        out_feature, out_bin, out_missing_left, out_left_totals, out_next_bin, out_categorical, out_category_bitset,
    ):
        block_left = cuda.shared.array(n_slots, types.int64)
        block_missing = cuda.shared.array(n_slots, types.int64)
        block_next_bin = cuda.shared.array(1, types.int64)
        own_left = cuda.local.array(n_slots, types.int64)
        own_missing = cuda.local.array(n_slots, types.int64)
        tid = cuda.threadIdx.x
        # Every thread gets the same answer; no need to share it.
        best_feature, best_gain = pick_best_feature(gains, bins, node)
        categorical_idx = -1
        if has_categorical and best_feature != NO_SPLIT:
            categorical_idx = category_position(categorical_features, best_feature)
        if tid < n_slots:
            block_left[tid] = 0
            block_missing[tid] = 0
        if tid == 0:
            block_next_bin[0] = missing_bin
        cuda.syncthreads()
        if best_feature != NO_SPLIT:
            best_bin = bins[node, best_feature]
            counts = sample_counts[node_tree[node]]
            stats_base = node_tree[node] * stats_stride
            for slot in range(n_slots):
                own_left[slot] = 0
                own_missing[slot] = 0
            own_next_bin = missing_bin
            for position in range(node_start[node] + tid, node_stop[node], threads):
                row = sample_indices[position]
                bin_idx = X_binned[row, best_feature]
                if bin_idx == missing_bin:
                    accumulate_row(own_missing, stats_base + row, counts[row], row_slot, row_stats)
                    continue
                if categorical_idx >= 0:
                    left = has_category(category_bits[node, categorical_idx, 0], bin_idx)
                else:
                    left = bin_idx <= best_bin
                if left:
                    accumulate_row(own_left, stats_base + row, counts[row], row_slot, row_stats)
                elif categorical_idx < 0:
                    own_next_bin = min(own_next_bin, bin_idx)
            for slot in range(n_slots):
                if own_left[slot] != 0:
                    cuda.atomic.add(block_left, slot, own_left[slot])
                if own_missing[slot] != 0:
                    cuda.atomic.add(block_missing, slot, own_missing[slot])
            if own_next_bin != missing_bin:
                cuda.atomic.min(block_next_bin, 0, own_next_bin)
        cuda.syncthreads()
        if tid == 0:
            out_feature[node] = best_feature
            out_gain[node] = best_gain
            out_next_bin[node] = NO_SPLIT
            out_categorical[node] = categorical_idx >= 0
            for word in range(out_category_bitset.shape[1]):
                out_category_bitset[node, word] = 0
            if best_feature == NO_SPLIT:
                for slot in range(n_slots):
                    out_left_totals[node, slot] = 0
                out_bin[node] = NO_SPLIT
                out_missing_left[node] = False
            else:
                out_bin[node] = NO_SPLIT if categorical_idx >= 0 else bins[node, best_feature]
                for slot in range(n_slots):
                    out_left_totals[node, slot] = block_left[slot]
                if block_next_bin[0] != missing_bin:
                    out_next_bin[node] = block_next_bin[0]
                out_missing_left[node] = resolve_missing_left(
                    missing_left[node, best_feature], block_missing, out_left_totals[node], totals[node]
                )
                if categorical_idx >= 0:
                    category_bitset(
                        category_bits[node, categorical_idx], out_missing_left[node], out_category_bitset[node]
                    )

    return finish_node


@functools.lru_cache(maxsize=None)
def _finish_rows_kernel(n_slots, threads, has_categorical):
    """Phase 2 of the row path: a block per node (``finish_from_rows``); ``has_categorical`` as in
    ``pick_from_histogram`` (56 registers with it, 47 without, on sm_80)."""
    finish_node = finish_from_rows(n_slots, threads, has_categorical)

    def finish_rows_kernel(
        X_binned, sample_indices, node_start, node_stop, node_tree, sample_counts, row_slot, row_stats, stats_stride,
        totals, categorical_features, missing_bin, gains, bins, missing_left, category_bits, out_gain, out_feature,
        out_bin, out_missing_left, out_left_totals, out_next_bin, out_categorical, out_category_bitset,
    ):
        for node in range(cuda.blockIdx.x, node_start.shape[0], cuda.gridDim.x):
            finish_node(
                node, X_binned, sample_indices, node_start, node_stop, node_tree, sample_counts, row_slot, row_stats,
                stats_stride, totals, categorical_features, missing_bin, gains, bins, missing_left, category_bits,
                out_gain, out_feature, out_bin, out_missing_left, out_left_totals, out_next_bin, out_categorical,
                out_category_bitset,
            )
            # The shared sums are read before the next node clears them.
            cuda.syncthreads()

    return finish_rows_kernel, jit_kernel(finish_rows_kernel)


def find_best_splits_from_rows(
    X_binned, sample_indices, node_start, node_stop, node_tree, sample_counts, row_slot, row_stats, stats_stride,
    totals, feature_mask, categorical_features, threshold_draws, bin_values, missing_bin, criterion, inv_scales,
    regularization, min_samples_leaf, min_weight_leaf, monotonic_cst, value_bounds, out_gain, out_feature, out_bin,
    out_missing_left, out_left_totals, out_next_bin, out_categorical, out_category_bitset,
):
    """Best split of every node from its rows (see ``kernels.cpu``).

    Launch: one block of ``scan_threads(missing_bin + 1)`` threads per (node,
    feature) (several launches only when the work histograms go to global
    scratch; the blocks of categorical features return at once), as many per
    (node, categorical feature) when there are any, then one block of
    ``FINISH_ROWS_THREADS`` threads per node (grid-stride beyond ``MAX_BLOCKS``
    blocks).
    """
    n_nodes = node_start.shape[0]
    if n_nodes == 0:
        return
    n_features = X_binned.shape[1]
    n_slots = totals.shape[1]
    n_categorical, n_words = categorical_features.shape[0], out_category_bitset.shape[1]
    xp = array_namespace(totals)
    gains, bins, missing_left, category_bits = _split_scratch(xp, n_nodes, n_features, n_categorical, n_words)
    _launch_phase1_kernels(
        _scan_rows_kernel,
        lambda mask: (
            X_binned, sample_indices, node_start, node_stop, node_tree, sample_counts, row_slot, row_stats,
            stats_stride, totals, mask, categorical_features, threshold_draws.reshape(-1), bin_values.reshape(-1),
            missing_bin, criterion, inv_scales, regularization, min_samples_leaf, min_weight_leaf, monotonic_cst,
            value_bounds, gains, bins, missing_left, category_bits,
        ),
        feature_mask, categorical_features, n_words, _subsets_possible(criterion, n_slots, threshold_draws),
        scan_threads(int(missing_bin) + 1), n_slots, xp, value_bounds.shape[0] > 0,
        criterion_outputs(criterion) > 1,
    )
    finish = _finish_rows_kernel(n_slots, FINISH_ROWS_THREADS, n_categorical > 0)[1]
    finish[max(1, min(n_nodes, MAX_BLOCKS)), FINISH_ROWS_THREADS](
        X_binned, sample_indices, node_start, node_stop, node_tree, sample_counts, row_slot, row_stats, stats_stride,
        totals, categorical_features, missing_bin, gains, bins, missing_left, category_bits, out_gain, out_feature,
        out_bin, out_missing_left, out_left_totals, out_next_bin, out_categorical, out_category_bitset,
    )


# The outputs of a node without a split (``common.record_best_feature``'s): gain, feature, bin, missing_left,
# left_totals, next_bin, categorical, category_bitset.
NO_SPLIT_OUTPUTS = (-math.inf, NO_SPLIT, NO_SPLIT, False, 0, NO_SPLIT, False, 0)


def find_best_splits(
    hist, hist_rows, X_binned, sample_indices, node_start, node_stop, node_tree, sample_counts, row_slot, row_stats,
    stats_stride, totals, feature_mask, categorical_features, threshold_draws, bin_values, n_bins_non_missing,
    missing_bin, criterion, inv_scales, regularization, min_samples_leaf, min_weight_leaf, monotonic_cst,
    value_bounds, *outputs,
):
    """Best split of every node (``kernels.cpu.splitting.find_best_splits``): the nodes with a histogram by
    ``find_best_splits_from_histograms``, those ``FROM_ROWS`` by ``find_best_splits_from_rows``, each path
    over its nodes gathered on the device, its outputs scattered back; the ``NOT_SEARCHED`` nodes get no split.
    """
    xp = array_namespace(totals)
    for output, no_split in zip(outputs, NO_SPLIT_OUTPUTS, strict=True):
        output[...] = no_split
    for use_hist, nodes in ((True, xp.flatnonzero(hist_rows >= 0)), (False, xp.flatnonzero(hist_rows == FROM_ROWS))):
        if nodes.shape[0] == 0:
            continue

        def gathered(array):
            """The path's rows of a per-node array (one with no rows means none, and stays as it is)."""
            return array[nodes] if array.shape[0] > 0 else array

        node_totals, node_mask, node_draws = gathered(totals), gathered(feature_mask), gathered(threshold_draws)
        node_outputs = [output[nodes] for output in outputs]
        shared = (
            criterion, inv_scales, regularization, min_samples_leaf, gathered(min_weight_leaf), monotonic_cst,
            gathered(value_bounds), *node_outputs,
        )
        if use_hist:
            find_best_splits_from_histograms(
                hist, hist_rows[nodes], node_totals, node_mask, categorical_features, node_draws, bin_values,
                n_bins_non_missing, missing_bin, *shared,
            )
        else:
            find_best_splits_from_rows(
                X_binned, sample_indices, node_start[nodes], node_stop[nodes], node_tree[nodes], sample_counts,
                row_slot, row_stats, stats_stride, node_totals, node_mask, categorical_features, node_draws,
                bin_values, missing_bin, *shared,
            )
        for output, node_output in zip(outputs, node_outputs, strict=True):
            output[nodes] = node_output


# --- PTX checks ------------------------------------------------------------------------------


def _argument_types():
    int64_1d = types.Array(types.int64, 1, "C")
    int32_1d = types.Array(types.int32, 1, "C")
    float64_1d = types.Array(types.float64, 1, "C")
    bool_1d = types.Array(types.boolean, 1, "C")
    int64_2d = types.Array(types.int64, 2, "C")
    int32_2d = types.Array(types.int32, 2, "C")
    float64_2d = types.Array(types.float64, 2, "C")
    bool_2d = types.Array(types.boolean, 2, "C")
    uint32_2d = types.Array(types.uint32, 2, "C")
    hist = types.Array(types.int64, 4, "C")
    x_binned = types.Array(types.uint8, 2, "F")
    regularization = types.UniTuple(types.float64, 2)
    scratch = (float64_2d, int32_2d, bool_2d, types.Array(types.uint32, 4, "C"))
    work = (types.Array(types.int64, 3, "C"), types.int64)
    outputs = (float64_1d, int32_1d, int32_1d, bool_1d, int64_2d, int32_1d, bool_1d, uint32_2d)
    rows = (x_binned, int32_1d, int64_1d, int64_1d, int64_1d, int32_2d, int32_1d, int64_2d, types.int64)
    scan_hist = (
        hist, int64_1d, int64_2d, bool_2d, int32_1d, float64_1d, float64_1d, int32_1d, types.int64, types.int64,
        float64_1d, regularization, types.int64, float64_1d, int64_1d, float64_2d,
    ) + scratch + work
    pick_hist = (hist, int64_1d, int64_2d, int32_1d, int32_1d, types.int64) + scratch + outputs
    scan_rows = rows + (
        int64_2d, bool_2d, int32_1d, float64_1d, float64_1d, types.int64, types.int64, float64_1d, regularization,
        types.int64, float64_1d, int64_1d, float64_2d,
    ) + scratch + work
    finish_rows = rows + (int64_2d, int32_1d, types.int64) + scratch + outputs
    assert scan_hist[SCAN_HISTOGRAMS_CRITERION] == scan_rows[SCAN_ROWS_CRITERION] == types.int64
    return scan_hist, pick_hist, scan_rows, finish_rows


# The criterion's place among the scans' arguments: builds for several outputs take a pair there.
SCAN_HISTOGRAMS_CRITERION, SCAN_ROWS_CRITERION = 9, 15


def pair_criterion(argument_types, index):
    """``argument_types`` with a several outputs' criterion, ``(base, n_outputs)``, at ``index``."""
    return argument_types[:index] + (types.UniTuple(types.int64, 2),) + argument_types[index + 1:]


# The factory constants in use: 256 bins; 3 slots (binary classification, newton),
# 4 (regression), 11 (10 classes); bitsets of 8 words (gpuforest.tree.CATEGORY_WORDS).
PTX_N_BINS = 256
PTX_N_SLOTS = (3, 4, 11)
PTX_CATEGORY_WORDS = 8


def ptx_specializations():
    """``(name, python_function, argument_types, block_size, max_registers)`` of every kernel specialisation in use."""
    scan_hist, pick_hist, scan_rows, finish_rows = _argument_types()
    n_threads = scan_threads(PTX_N_BINS)
    # Many classes: the work histogram goes to global scratch.
    many_slots = WORK_SHARED_BYTES // (n_threads * 8) + 1
    specs = []
    for n_slots in PTX_N_SLOTS + (many_slots,):
        for features, category_words, all_subsets in (
            ("", 0, False), ("_categorical", PTX_CATEGORY_WORDS, False),
            ("_categorical_subsets", PTX_CATEGORY_WORDS, True),
        ):
            threads = category_threads(n_threads) if category_words else n_threads
            use_shared = work_in_shared(threads, n_slots)
            where = "" if use_shared else "_global"
            # Several outputs come without constraints and categorical features (gpuforest.multioutput).
            builds = ((False, False, ""), (True, False, "_constrained")) + (
                () if category_words else ((False, True, "_multi_output"),)
            )
            for constrained, multi_output, build in builds:
                variant = (threads, n_slots, use_shared, category_words, all_subsets, constrained, multi_output)
                max_registers = _scan_max_registers(constrained, multi_output)
                hist_types, rows_types = (
                    (pair_criterion(scan_hist, SCAN_HISTOGRAMS_CRITERION), pair_criterion(scan_rows, SCAN_ROWS_CRITERION))
                    if multi_output else (scan_hist, scan_rows)
                )
                specs.append((
                    f"scan_histograms{features}_bins{PTX_N_BINS}_slots{n_slots}{where}{build}",
                    _scan_histograms_kernel(*variant)[0], hist_types, threads, max_registers,
                ))
                specs.append((
                    f"scan_rows{features}_bins{PTX_N_BINS}_slots{n_slots}{where}{build}",
                    _scan_rows_kernel(*variant)[0], rows_types, threads, max_registers,
                ))
    for has_categorical, suffix in ((False, ""), (True, "_categorical")):
        specs.append((
            f"pick_from_histograms{suffix}", _pick_from_histograms_kernel(has_categorical)[0], pick_hist, PICK_THREADS
        ))
    for n_slots in PTX_N_SLOTS + (many_slots,):
        for has_categorical, suffix in ((False, ""), (True, "_categorical")):
            finish = _finish_rows_kernel(n_slots, FINISH_ROWS_THREADS, has_categorical)[0]
            specs.append((f"finish_rows{suffix}_slots{n_slots}", finish, finish_rows, FINISH_ROWS_THREADS))
    return specs
