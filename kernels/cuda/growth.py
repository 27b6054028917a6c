"""Depth-wise growth with each level's bookkeeping on the device (twin of ``kernels.cpu.growth.grow_levels``).

The host sends the roots once and, per level, launches a fixed sequence over
every node and tree of the level, sized from the level's node count, then makes
one packed copy back (the level's records and counts); it sends nothing per
level and loops over no nodes or trees. A level is eight launches:

1. ``histogram.build_histograms`` of the nodes the plan chose, into their rows
   of the level's buffer (zeroed);
2. ``derive_and_clear``: the larger children's histograms, parent minus built
   sibling, and the parents' buffer cleared for the level after next; when
   nodes draw their features (``max_features``), nothing is derived and
   ``draw_features`` goes first instead: a block per node draws its features
   (``sampling.feature_rank``), and the grid clears the parents' buffer;
3-4. ``splitting``'s phase-1 scans over every (node, feature), from the
   histograms and from the rows (small nodes), each path under its own mask;
5. ``finish_splits``: a block per searched node, its best feature and left
   totals (``splitting.pick_from_histogram``, ``splitting.finish_from_rows``);
6. ``split_and_plan`` (one block): the allowed splits
   (``level.allowed_splits``), the children numbered and laid out, the split
   records and the partition's tiles; then the children's values, stopping
   rules (``level.stopping_rules``), threshold draws, histogram plan
   (``level.histogram_plan``: the smaller child built, the larger derived when
   the parent's histogram is kept) with its chunk table, and their records;
7-8. ``partitioning``'s ``count_left`` and ``scatter`` over every node, from one
   of two row buffers into the other: split nodes partitioned, the others'
   rows copied, so that the buffer the next level reads holds every row.

A level's nodes are laid out tree by tree (``seg_start``: tree ``t``'s nodes are
``[seg_start[t], seg_start[t + 1])``), each tree's lefts then rights: a split's
place among its tree's splits is one block-wide scan, its children's positions
and node indices follow (the CPU's numbering, ``level.number_children``), and the
records' order does not matter. The same kernels, rules and order as the CPU's
loop: the same trees, nodes numbered alike.
"""

import functools

import numpy as np
from numba import cuda, types

from ..common import FROM_ROWS, NO_SPLIT, PURPOSE_THRESHOLD, criterion_outputs, hash_uniform, node_values_at
from ...level import EPSILON
from ..cpu.growth import NODE_COLUMNS, SPLIT_COLUMNS
from . import histogram, jit_kernel, splitting
from .histogram import (
    MAX_FEATURES_PER_BLOCK, _build_histograms_kernel, block_threads, features_per_block, inclusive_scan, rows_per_chunk,
)
from .partitioning import ROWS_PER_THREAD, _partition_kernels
from .sampling import FEATURE_BLOCK_SIZES, feature_block, feature_rank
from .splitting import _scan_histograms_kernel, _scan_rows_kernel, finish_from_rows, pick_from_histogram, scan_threads

# Rows of a level's node table (int64, (NODE_FIELDS, capacity + 1)): a node's place, its histogram row (or
# FROM_ROWS), its parent's histogram row (-1: none kept) and its sibling's position (-1: a root), its
# flags, and two flag/rank pairs for the block-wide scans (once the level is searched, WORK says whether a
# node splits and WORK2 holds its left rows, for the partition).
TREE, NODE_IDX, DEPTH, START, STOP, HIST_ROW, PARENT_ROW, SIBLING, FLAGS, WORK, RANK, WORK2, RANK2 = range(13)
NODE_FIELDS = 13
SPLITTABLE, NEEDS_HIST = 1, 2
# The level's feature masks (bool, (3, capacity, n_features)): evaluated, and the same for the searched
# nodes of each path.
MASK, MASK_HIST, MASK_ROWS = range(3)
# Counts the host reads back each level.
N_SPLIT, N_SEARCHED, N_HIST, N_BUILD, N_FROM_ROWS = range(5)
HEADER_SIZE = 5
PLAN_THREADS = 256  # the one block of split_and_plan
# ptxas's cap for split_and_plan: half occupancy (the rule of every kernel; uncapped it takes 94 registers, and
# spills about 100 bytes a thread capped, which benchmarks/ptx_resources.py allows this one block).
PLAN_MAX_REGISTERS = 64
MIN_CAPACITY = 64


@cuda.jit(device=True)
def _exclusive_scan(values, out, n, scan, tid, threads):
    """``out[k] = values[0] + ... + values[k - 1]`` for ``k <= n`` (in place allowed); the whole block calls it.
    Returns the total."""
    carry = 0
    for first in range(0, n, threads):
        k = first + tid
        value = values[k] if k < n else 0
        inclusive = inclusive_scan(scan, tid, value, threads)
        if k < n:
            out[k] = carry + inclusive - value
        carry += scan[threads - 1]
        cuda.syncthreads()  # everyone has read the scan before the next pass writes it
    if tid == 0:
        out[n] = carry
    cuda.syncthreads()
    return carry


@cuda.jit(device=True)
def _write_child(nxt, child, sibling, tree, node_idx, depth, start, stop, parent_row):
    nxt[TREE, child] = tree
    nxt[NODE_IDX, child] = node_idx
    nxt[DEPTH, child] = depth
    nxt[START, child] = start
    nxt[STOP, child] = stop
    nxt[PARENT_ROW, child] = parent_row
    nxt[SIBLING, child] = sibling


@cuda.jit(device=True)
def _write_path_masks(masks, node, searched, from_hist, first_feature, step):
    """The node's evaluated features (``MASK``) as the mask of the path that searches it, none for the other."""
    for feature_idx in range(first_feature, masks.shape[2], step):
        evaluated = searched and masks[MASK, node, feature_idx]
        masks[MASK_HIST, node, feature_idx] = evaluated and from_hist
        masks[MASK_ROWS, node, feature_idx] = evaluated and not from_hist


@functools.lru_cache(maxsize=None)
def _draw_features_kernel(block):
    """``draw_features`` for blocks of ``block`` threads: ``(python_function, kernel)``."""
    rank_of = feature_rank(block)

    def draw_features_kernel(cur, seed, first_tree, allowed_features, n_node_features, masks, parent_hist,
                             n_parent_rows):
        """A block per node: the ``n_node_features`` of its tree's allowed features of lowest priority
        (``sampling.feature_masks``' draw, over the allowed positions) when it is searched, none else, and its
        path masks; the grid also zeroes the parents' histogram rows (nothing is derived from them)."""
        chunk = cuda.shared.array(block, types.float64)
        row_size = parent_hist.shape[1]
        for k in range(cuda.grid(1), n_parent_rows * row_size, cuda.gridsize(1)):
            parent_hist[k // row_size, k % row_size] = 0
        node = cuda.blockIdx.x
        tid = cuda.threadIdx.x
        tree = cur[TREE, node]
        searched = (cur[FLAGS, node] & SPLITTABLE) != 0
        for feature_idx in range(tid, masks.shape[2], block):
            masks[MASK, node, feature_idx] = False
        cuda.syncthreads()
        if searched:  # the same branch for the whole block
            n_allowed = allowed_features.shape[1]
            stream = ((tree + first_tree) << 32) + cur[NODE_IDX, node]
            for first in range(0, n_allowed, block):
                position = first + tid
                rank = rank_of(seed, stream, n_allowed, position, chunk)
                if position < n_allowed:
                    masks[MASK, node, allowed_features[tree, position]] = rank < n_node_features
        cuda.syncthreads()
        _write_path_masks(masks, node, searched, cur[HIST_ROW, node] >= 0, tid, block)

    return draw_features_kernel, jit_kernel(draw_features_kernel)


@functools.lru_cache(maxsize=None)
def _split_and_plan_kernel(threads):
    """``split_and_plan`` for one block of ``threads``: ``(python_function, kernel)``."""

    def split_and_plan_kernel(
        cur, cur_totals, nxt, next_totals, n_cur, n_roots, gain, feature, bin_idx, missing_left, left_totals,
        next_bin, category_bitset, seg_cur, seg_next, next_node_idx, min_weight_leaf, kernel_weight_outputs,
        root_weight, max_depth, min_samples_split, min_samples_leaf, stops_when_pure, min_rows_histogram,
        min_impurity_decrease, min_split_gain, criterion, inv_scales, regularization, seed, first_tree,
        allowed_features, draws_features, random_thresholds, masks, min_weight, draws, derive,
        parent_task, n_parent_hist, build_offsets, build_chunk_rows, min_chunk_rows, part_offsets, part_tile_rows,
        tile_rows, header, split_records, split_bitsets, node_records, node_values, node_impurity, node_weight,
    ):
        scan = cuda.shared.array(threads, types.int64)
        tid = cuda.threadIdx.x
        n_slots = next_totals.shape[1]
        count_slot = n_slots - 1
        n_features = masks.shape[2]
        if tid == 0:
            header[N_SEARCHED] = 0
            header[N_FROM_ROWS] = 0
        if n_roots >= 0:
            n_next = n_roots
            if tid == 0:
                header[N_SPLIT] = 0
        else:
            # The allowed splits, and each one's rank among the level's (tree by tree).
            for node in range(tid, n_cur, threads):
                chosen = (
                    (cur[FLAGS, node] & SPLITTABLE) != 0 and feature[node] != NO_SPLIT
                    and gain[node] / root_weight[cur[TREE, node]] + EPSILON >= min_impurity_decrease
                    and gain[node] >= min_split_gain
                )
                cur[WORK, node] = 1 if chosen else 0
                cur[WORK2, node] = left_totals[node, count_slot] if chosen else 0  # the partition's n_left
                part_offsets[node] = (cur[STOP, node] - cur[START, node] + tile_rows - 1) // tile_rows
            cuda.syncthreads()
            n_split = _exclusive_scan(cur[WORK], cur[RANK], n_cur, scan, tid, threads)
            _exclusive_scan(part_offsets, part_offsets, n_cur, scan, tid, threads)
            n_next = 2 * n_split
            # Two loops over the splits, not one: each keeps only its own values in registers.
            for node in range(tid, n_cur, threads):
                if cur[WORK, node] == 0:
                    continue
                tree = cur[TREE, node]
                rank = cur[RANK, node]
                left_idx = next_node_idx[tree] + 2 * (rank - cur[RANK, seg_cur[tree]])
                record = split_records[rank]
                record[0], record[1], record[2], record[3], record[4] = (
                    tree, cur[NODE_IDX, node], feature[node], bin_idx[node], next_bin[node]
                )
                record[5], record[6], record[7], record[8] = 1 if missing_left[node] else 0, left_idx, left_idx + 1, 0
                for word in range(split_bitsets.shape[1]):
                    split_bitsets[rank, word] = category_bitset[node, word]
            for node in range(tid, n_cur, threads):
                if cur[WORK, node] == 0:
                    continue
                tree = cur[TREE, node]
                before_tree = cur[RANK, seg_cur[tree]]
                n_tree = cur[RANK, seg_cur[tree + 1]] - before_tree
                place = cur[RANK, node] - before_tree
                left, right = 2 * before_tree + place, 2 * before_tree + n_tree + place
                left_idx = next_node_idx[tree] + 2 * place
                middle = cur[START, node] + left_totals[node, count_slot]
                # Per-node feature draws differ from the parent's: no subtraction.
                parent_row = -1 if draws_features else max(cur[HIST_ROW, node], -1)
                depth = cur[DEPTH, node] + 1
                _write_child(nxt, left, right, tree, left_idx, depth, cur[START, node], middle, parent_row)
                _write_child(nxt, right, left, tree, left_idx + 1, depth, middle, cur[STOP, node], parent_row)
                for slot in range(n_slots):
                    next_totals[left, slot] = left_totals[node, slot]
                    next_totals[right, slot] = cur_totals[node, slot] - left_totals[node, slot]
            for tree in range(tid, seg_next.shape[0], threads):
                seg_next[tree] = 2 * cur[RANK, seg_cur[tree]]
            cuda.syncthreads()
            for tree in range(tid, next_node_idx.shape[0], threads):
                next_node_idx[tree] += 2 * (cur[RANK, seg_cur[tree + 1]] - cur[RANK, seg_cur[tree]])
            if tid == 0:
                header[N_SPLIT] = n_split
                part_tile_rows[0] = tile_rows
        # The next level: values, stopping rules, draws and records.
        n_allowed = allowed_features.shape[1]
        # Three loops, not one: each keeps only its own values in registers.
        for node in range(tid, n_next, threads):
            node_values_at(criterion, next_totals, node, inv_scales, regularization, node_values, node_impurity,
                           node_weight)
        cuda.syncthreads()
        for node in range(tid, n_next, threads):
            tree = nxt[TREE, node]
            count = next_totals[node, count_slot]
            splittable = (
                nxt[DEPTH, node] < max_depth and count >= min_samples_split and count >= 2 * min_samples_leaf
                and node_weight[node] >= 2 * min_weight_leaf[tree]
                and (node_impurity[node] > EPSILON or not stops_when_pure)
            )
            flags = 0
            if splittable:
                flags = SPLITTABLE | (NEEDS_HIST if count >= min_rows_histogram else 0)
                cuda.atomic.add(header, N_SEARCHED, 1)
            nxt[FLAGS, node] = flags
            record = node_records[node]
            record[0], record[1], record[2], record[3], record[4] = (
                tree, nxt[NODE_IDX, node], nxt[DEPTH, node], count, nxt[START, node]
            )
            min_weight[node] = min_weight_leaf[tree] * kernel_weight_outputs
        cuda.syncthreads()
        for node in range(tid, n_next, threads):
            tree = nxt[TREE, node]
            if random_thresholds:
                stream = ((tree + first_tree) << 32) + nxt[NODE_IDX, node]
                for feature_idx in range(n_features):
                    draws[node, feature_idx] = hash_uniform(seed, PURPOSE_THRESHOLD, stream, feature_idx)
            if not draws_features:  # else draw_features draws them, a block per node, at the next level's start
                for feature_idx in range(n_features):
                    masks[MASK, node, feature_idx] = False
                for position in range(n_allowed):
                    masks[MASK, node, allowed_features[tree, position]] = True
        cuda.syncthreads()
        # The histogram plan: a pair's larger child derived when its parent's histogram is kept and it needs one
        # (its smaller sibling then built), else each node that needs one built.
        for node in range(tid, n_next, threads):
            build = (nxt[FLAGS, node] & NEEDS_HIST) != 0
            derived = False
            sibling = nxt[SIBLING, node]
            if sibling >= 0 and nxt[PARENT_ROW, node] >= 0:
                left, right = min(node, sibling), max(node, sibling)
                larger = left if next_totals[left, count_slot] >= next_totals[right, count_slot] else right
                if (nxt[FLAGS, larger] & NEEDS_HIST) != 0:
                    derived = node == larger
                    build = not derived
            nxt[WORK, node] = 1 if build else 0
            nxt[WORK2, node] = 1 if derived else 0
        for row in range(tid, n_parent_hist, threads):
            parent_task[row] = -1
        cuda.syncthreads()
        n_build = _exclusive_scan(nxt[WORK], nxt[RANK], n_next, scan, tid, threads)
        n_derive = _exclusive_scan(nxt[WORK2], nxt[RANK2], n_next, scan, tid, threads)
        for node in range(tid, n_next, threads):
            hist_row = FROM_ROWS
            if nxt[WORK, node] != 0:
                hist_row = nxt[RANK, node]
            elif nxt[WORK2, node] != 0:
                hist_row = n_build + nxt[RANK2, node]
            nxt[HIST_ROW, node] = hist_row
            build_offsets[node] = (
                (nxt[STOP, node] - nxt[START, node] + min_chunk_rows - 1) // min_chunk_rows if nxt[WORK, node] else 0
            )
        cuda.syncthreads()
        _exclusive_scan(build_offsets, build_offsets, n_next, scan, tid, threads)
        for node in range(tid, n_next, threads):
            if nxt[WORK2, node] != 0:
                task = nxt[RANK2, node]
                derive[0, task] = nxt[PARENT_ROW, node]
                derive[1, task] = nxt[HIST_ROW, nxt[SIBLING, node]]
                derive[2, task] = nxt[HIST_ROW, node]
                parent_task[nxt[PARENT_ROW, node]] = task
            searched = (nxt[FLAGS, node] & SPLITTABLE) != 0
            from_hist = nxt[HIST_ROW, node] >= 0
            if searched and not from_hist:
                cuda.atomic.add(header, N_FROM_ROWS, 1)
            if not draws_features:
                _write_path_masks(masks, node, searched, from_hist, 0, 1)
        if tid == 0:
            build_chunk_rows[0] = min_chunk_rows
            header[N_HIST] = n_build + n_derive
            header[N_BUILD] = n_build

    return split_and_plan_kernel, jit_kernel(split_and_plan_kernel, max_registers=PLAN_MAX_REGISTERS)


def _derive_and_clear_kernel(parent_hist, n_parent_rows, parent_task, derive, hist):
    """Over the parents' histogram rows (2-D views: a row per histogram): the derived child of a row's task
    (``derive``: parent, built sibling and derived rows) as parent minus sibling, then the row zeroed."""
    row_size = hist.shape[1]
    for k in range(cuda.grid(1), n_parent_rows * row_size, cuda.gridsize(1)):
        row = k // row_size
        entry = k - row * row_size
        task = parent_task[row]
        if task >= 0:
            hist[derive[2, task], entry] = parent_hist[row, entry] - hist[derive[1, task], entry]
        parent_hist[row, entry] = 0


_derive_and_clear = jit_kernel(_derive_and_clear_kernel)
DERIVE_THREADS = 256
MAX_DERIVE_BLOCKS = 8192


@functools.lru_cache(maxsize=None)
def _finish_splits_kernel(n_slots, threads):
    """``finish_splits`` for ``n_slots`` and blocks of ``threads``: ``(python_function, kernel)``."""
    pick_node = pick_from_histogram(False)
    finish_node = finish_from_rows(n_slots, threads, False)

    def finish_splits_kernel(
        cur, hist, X_binned, sample_indices, sample_counts, row_slot, row_stats, stats_stride, totals,
        categorical_features, n_bins_non_missing, missing_bin, gains, bins, missing_left, category_bits, out_gain,
        out_feature, out_bin, out_missing_left, out_left_totals, out_next_bin, out_categorical, out_category_bitset,
    ):
        node = cuda.blockIdx.x
        if (cur[FLAGS, node] & SPLITTABLE) == 0:  # the same branch for the whole block
            return
        hist_row = cur[HIST_ROW, node]
        if hist_row >= 0:
            if cuda.threadIdx.x == 0:
                pick_node(
                    hist, hist_row, node, totals, categorical_features, n_bins_non_missing, missing_bin, gains[0],
                    bins[0], missing_left[0], category_bits, out_gain, out_feature, out_bin, out_missing_left,
                    out_left_totals, out_next_bin, out_categorical, out_category_bitset,
                )
            return
        finish_node(
            node, X_binned, sample_indices, cur[START], cur[STOP], cur[TREE], sample_counts, row_slot, row_stats,
            stats_stride, totals, categorical_features, missing_bin, gains[1], bins[1], missing_left[1],
            category_bits, out_gain, out_feature, out_bin, out_missing_left, out_left_totals, out_next_bin,
            out_categorical, out_category_bitset,
        )

    return finish_splits_kernel, jit_kernel(finish_splits_kernel)


class LevelBuffers:
    """The device arrays of a growth's levels, for levels of up to ``capacity`` nodes (kept from one growth to
    the next in a fit's workspace; replaced by larger ones when a level needs more).

    Parameters
    ----------
    xp : module
    capacity, n_features, n_slots, n_values, n_words, n_trees, n_hist, n_entries : int
        Nodes per level, features, histogram slots, values per node, words of a category bitset, trees,
        histogram rows per level buffer, and entries of ``sample_indices``.
    random_thresholds : bool
    """

    def __init__(
        self, xp, capacity, n_features, n_slots, n_values, n_words, n_trees, n_hist, n_entries, random_thresholds,
    ):
        self.key = (capacity, n_features, n_slots, n_values, n_words, n_trees, n_hist, n_entries, random_thresholds)
        self.capacity = capacity
        self.tables = xp.zeros((2, NODE_FIELDS, capacity + 1), dtype=np.int64)
        self.totals = xp.zeros((2, capacity, n_slots), dtype=np.int64)
        self.seg_start = xp.zeros((2, n_trees + 1), dtype=np.int64)
        self.masks = xp.zeros((3, capacity, n_features), dtype=bool)
        self.min_weight = xp.zeros(capacity)
        self.draws = xp.zeros((capacity if random_thresholds else 0, n_features))
        self.derive = xp.zeros((3, capacity), dtype=np.int64)
        self.parent_task = xp.full(max(n_hist, 1), -1, dtype=np.int64)
        self.build_offsets = xp.zeros(capacity + 1, dtype=np.int64)
        self.build_chunk_rows = xp.zeros(1, dtype=np.int64)
        self.part_offsets = xp.zeros(capacity + 1, dtype=np.int64)
        self.part_tile_rows = xp.zeros(1, dtype=np.int64)
        self.gain = xp.zeros(capacity)
        self.feature = xp.zeros(capacity, dtype=np.int32)
        self.bin = xp.zeros(capacity, dtype=np.int32)
        self.missing_left = xp.zeros(capacity, dtype=bool)
        self.left_totals = xp.zeros((capacity, n_slots), dtype=np.int64)
        self.next_bin = xp.zeros(capacity, dtype=np.int32)
        self.categorical = xp.zeros(capacity, dtype=bool)
        self.category_bitset = xp.zeros((capacity, n_words), dtype=np.uint32)
        # Phase 1's best (gain, bin, missing_left) per (node, feature), one set per path.
        self.path_gains = xp.zeros((2, capacity, n_features))
        self.path_bins = xp.zeros((2, capacity, n_features), dtype=np.int32)
        self.path_missing_left = xp.zeros((2, capacity, n_features), dtype=bool)
        self.category_bits = xp.zeros((capacity, 0, 2, n_words), dtype=np.uint32)
        self.phase1_scratch = xp.zeros((1, 1, 1), dtype=np.int64)
        # A level's partition tiles: one per node and one per ROWS_PER_THREAD * 32 entries, at most.
        self.tile_left = xp.zeros(capacity + n_entries // (ROWS_PER_THREAD * 32) + 1, dtype=np.int32)
        self.staging = xp.zeros(_staging_layout(capacity, 2 * capacity, n_values, n_words).n_bytes, dtype=np.uint8)

    def split_outputs(self, n):
        """The split outputs of ``n`` nodes (``splitting.find_best_splits``' order)."""
        return (
            self.gain[:n], self.feature[:n], self.bin[:n], self.missing_left[:n], self.left_totals[:n],
            self.next_bin[:n], self.categorical[:n], self.category_bitset[:n],
        )


def _staging_layout(n_split, n_next, n_values, n_words):
    """The packed copy of a level: its counts, its splits' records and bitsets, and the next level's node records,
    values, impurities and weights."""
    from ...backend import PackedLayout

    return PackedLayout([
        ((HEADER_SIZE,), np.int64), ((n_split, SPLIT_COLUMNS), np.int64), ((n_split, n_words), np.uint32),
        ((n_next, NODE_COLUMNS), np.int64), ((n_next, n_values), np.float64), ((n_next,), np.float64),
        ((n_next,), np.float64),
    ])


def level_buffers(workspace, xp, capacity, *shape_args):
    """``LevelBuffers`` from ``workspace`` (a dict) for at least ``capacity`` nodes, else new ones there."""
    buffers = workspace.get("device_levels")
    if buffers is None or buffers.capacity < capacity or buffers.key[1:] != shape_args:
        workspace["device_levels"] = buffers = None
        workspace["device_levels"] = buffers = LevelBuffers(xp, max(capacity, MIN_CAPACITY), *shape_args)
    return buffers


def _buffers_for(workspace, xp, capacity, buffers, shape_args):
    """``buffers`` if they hold ``capacity`` nodes, else larger ones from ``level_buffers`` with the old ones'
    contents (the current level's plan) copied over."""
    if buffers.capacity >= capacity:
        return buffers
    old = buffers
    workspace.pop("device_levels")
    buffers = level_buffers(workspace, xp, max(capacity, 2 * old.capacity), *shape_args)
    for name, array in vars(old).items():
        if hasattr(array, "shape") and name != "staging":
            getattr(buffers, name)[tuple(slice(0, size) for size in array.shape)] = array
    return buffers


def _address(array):
    data = array.data
    return data.ptr if hasattr(data, "ptr") else array.ctypes.data


def grow_levels(backend, rows, nodes, scratch, hist_buffers, search, rules, features, n_values, n_words,
                next_node_idx, workspace):
    """Grow ``nodes`` (host arrays, as ``kernels.cpu.growth.grow_levels`` takes them) and all their descendants,
    level by level on the device; returns the same packed records (host arrays).

    ``rows`` (``backend.RowData``) and ``scratch`` (int32, the shape of ``rows.sample_indices``) are on the
    device; ``hist_buffers``: two device arrays of (n_hist, n_features, n_bins, n_slots) int64, kept zeroed
    between growths (``workspace["clean_histograms"]``); ``search``, ``rules`` and ``features`` as the CPU's
    (``search``'s arrays on the host); ``next_node_idx`` (n_trees,) is advanced; ``workspace`` keeps the
    ``LevelBuffers``.
    """
    xp = backend.xp
    tree, node_idx, depth, start, stop, totals = nodes
    (categorical_features, bin_values, n_bins_non_missing, missing_bin, criterion, inv_scales, regularization,
     monotonic_cst, value_bounds) = search
    (min_weight_leaf, kernel_weight_outputs, root_weight, max_depth, min_samples_split, min_samples_leaf,
     stops_when_pure, min_rows_histogram, min_impurity_decrease, min_split_gain) = rules
    seed, first_tree, allowed_features, n_node_features, draws_features, random_thresholds = features
    n_trees, n_roots = next_node_idx.shape[0], tree.shape[0]
    n_hist_rows, n_features, n_bins, n_slots = hist_buffers[0].shape
    hist_row_size = n_features * n_bins * n_slots
    n_entries = rows.sample_indices.shape[0]
    _clean(workspace, hist_buffers)

    # The roots (or the given level) tree by tree, with the growth's constants, in one copy.
    order = np.argsort(tree, kind="stable")
    table = np.full((NODE_FIELDS, n_roots), -1, dtype=np.int64)
    table[[TREE, NODE_IDX, DEPTH, START, STOP]] = np.stack([tree, node_idx, depth, start, stop])[:, order]
    seg_start = np.searchsorted(tree[order], np.arange(n_trees + 1)).astype(np.int64)
    hist_threads = scan_threads(n_bins)
    padded_bin_values = np.zeros((n_features, hist_threads if random_thresholds else 0))
    padded_bin_values[:, :bin_values.shape[1]] = bin_values
    (table, root_totals, seg_start, device_next_node_idx, min_weight_leaf, root_weight, allowed_features,
     categorical_features, bin_values, padded_bin_values, n_bins_non_missing, inv_scales, monotonic_cst,
     value_bounds) = backend.to_device_many(
        table, np.ascontiguousarray(totals[order]), seg_start, next_node_idx, min_weight_leaf, root_weight,
        np.ascontiguousarray(allowed_features), categorical_features, np.ascontiguousarray(bin_values),
        padded_bin_values, n_bins_non_missing, inv_scales, monotonic_cst, value_bounds,
    )
    shape_args = (n_features, n_slots, n_values, n_words, n_trees, n_hist_rows, n_entries, bool(random_thresholds))
    buffers = level_buffers(workspace, xp, 2 * n_roots, *shape_args)
    buffers.tables[0, :, :n_roots] = table
    buffers.totals[0, :n_roots] = root_totals
    buffers.seg_start[0] = seg_start
    source, target = rows.sample_indices, scratch
    target[...] = source  # every row in both buffers: each level moves only its nodes' rows

    group = features_per_block(n_bins, n_slots, n_features)
    n_groups = -(-n_features // (group if group > 0 else MAX_FEATURES_PER_BLOCK))
    min_chunk_rows = rows_per_chunk(n_entries, n_groups)
    build_grid = max(1, -(-n_entries // min_chunk_rows))
    build_threads, finish_threads, plan_threads = histogram.THREADS, splitting.FINISH_ROWS_THREADS, PLAN_THREADS
    build = _build_histograms_kernel(n_bins, n_slots, group, build_threads, bool(rows.unit_counts))[1]
    multi_output = criterion_outputs(criterion) > 1
    scan_hist = _scan_histograms_kernel(hist_threads, n_slots, True, 0, False, False, multi_output)[1]
    rows_threads = scan_threads(int(missing_bin) + 1)
    scan_rows = _scan_rows_kernel(rows_threads, n_slots, True, 0, False, False, multi_output)[1]
    finish = _finish_splits_kernel(n_slots, finish_threads)[1]
    plan = _split_and_plan_kernel(plan_threads)[1]
    draw_threads = feature_block(allowed_features.shape[1])
    draw_features = _draw_features_kernel(draw_threads)[1]
    plan_rules = (
        min_weight_leaf, float(kernel_weight_outputs), root_weight, int(max_depth), int(min_samples_split),
        int(min_samples_leaf), bool(stops_when_pure), int(min_rows_histogram), float(min_impurity_decrease),
        float(min_split_gain), criterion, inv_scales, regularization, int(seed), int(first_tree),
        allowed_features, bool(draws_features), bool(random_thresholds),
    )

    def launch_plan(parity, n_cur, n_next_roots, n_parent_hist, tile_rows, outputs):
        """``split_and_plan`` of level ``n_cur`` nodes (or of the roots, ``n_next_roots`` of them), whose split
        ``outputs`` these are; returns the staging layout."""
        n_split = 0 if n_next_roots >= 0 else n_cur
        layout = _staging_layout(n_split, n_next_roots if n_next_roots >= 0 else 2 * n_cur, n_values, n_words)
        plan[1, plan_threads](
            buffers.tables[parity], buffers.totals[parity], buffers.tables[1 - parity], buffers.totals[1 - parity],
            n_cur, n_next_roots, *outputs[:6], outputs[7], buffers.seg_start[parity], buffers.seg_start[1 - parity],
            device_next_node_idx, *plan_rules, buffers.masks, buffers.min_weight, buffers.draws, buffers.derive,
            buffers.parent_task, n_parent_hist, buffers.build_offsets, buffers.build_chunk_rows, min_chunk_rows,
            buffers.part_offsets, buffers.part_tile_rows, tile_rows, *layout.views(buffers.staging),
        )
        return layout

    def fetched(layout):
        """The staging copy at home: ``(header, split_records, split_bitsets, node_records, node_values)``."""
        header, splits, bitsets, node_records, values, impurity, weight = layout.views(
            backend.to_host(buffers.staging[:layout.n_bytes])
        )
        n_split = int(header[N_SPLIT])
        n_next = 2 * n_split if splits.shape[0] else node_records.shape[0]
        node_floats = np.column_stack([values[:n_next], impurity[:n_next], weight[:n_next]])
        return header, splits[:n_split], bitsets[:n_split], node_records[:n_next], node_floats

    # The roots' plan reads the level "before" them in the other table: no nodes.
    header, _, _, roots_records, roots_values = fetched(launch_plan(1, 0, n_roots, 0, 1, buffers.split_outputs(0)))
    records = [(roots_records, roots_values, np.empty((0, SPLIT_COLUMNS), np.int64), np.empty((0, n_words), np.uint32))]
    parity, n_cur, n_hist_parent = 0, n_roots, 0
    while header[N_SEARCHED] > 0:
        buffers = _buffers_for(workspace, xp, 2 * n_cur, buffers, shape_args)
        cur = buffers.tables[parity]
        hist, parent_hist = hist_buffers[parity], hist_buffers[1 - parity]
        level = (cur[START, :n_cur], cur[STOP, :n_cur], cur[TREE, :n_cur])
        level_totals = buffers.totals[parity, :n_cur]
        draws = buffers.draws[:n_cur].reshape(-1)
        if draws_features:
            draw_features[n_cur, draw_threads](
                cur, int(seed), int(first_tree), allowed_features, int(n_node_features), buffers.masks,
                parent_hist.reshape(n_hist_rows, hist_row_size), n_hist_parent,
            )
        if header[N_BUILD] > 0:
            build[(n_cur + build_grid, n_groups), build_threads](
                rows.histogram_bins, source, *level, buffers.masks[MASK, :n_cur], rows.sample_counts,
                rows.row_slot, rows.row_stats, rows.stats_stride, hist, cur[HIST_ROW, :n_cur], buffers.build_offsets,
                buffers.build_chunk_rows,
            )
        if n_hist_parent > 0 and not draws_features:
            size = n_hist_parent * hist_row_size
            _derive_and_clear[min(-(-size // DERIVE_THREADS), MAX_DERIVE_BLOCKS), DERIVE_THREADS](
                parent_hist.reshape(n_hist_rows, hist_row_size), n_hist_parent, buffers.parent_task, buffers.derive,
                hist.reshape(n_hist_rows, hist_row_size),
            )
        shared = (
            criterion, inv_scales, regularization, int(min_samples_leaf), buffers.min_weight[:n_cur], monotonic_cst,
            value_bounds,
        )
        path_outputs = tuple(
            (buffers.path_gains[path, :n_cur], buffers.path_bins[path, :n_cur],
             buffers.path_missing_left[path, :n_cur], buffers.category_bits[:n_cur])
            for path in (0, 1)
        )
        if header[N_HIST] > 0:
            scan_hist[n_cur * n_features, hist_threads](
                hist, cur[HIST_ROW, :n_cur], level_totals, buffers.masks[MASK_HIST, :n_cur], categorical_features,
                draws, padded_bin_values.reshape(-1), n_bins_non_missing, int(missing_bin), *shared, *path_outputs[0],
                buffers.phase1_scratch, 0,
            )
        if header[N_FROM_ROWS] > 0:
            scan_rows[n_cur * n_features, rows_threads](
                rows.histogram_bins, source, *level, rows.sample_counts, rows.row_slot, rows.row_stats,
                rows.stats_stride, level_totals, buffers.masks[MASK_ROWS, :n_cur], categorical_features, draws,
                bin_values.reshape(-1), int(missing_bin), *shared, *path_outputs[1], buffers.phase1_scratch, 0,
            )
        outputs = buffers.split_outputs(n_cur)
        finish[n_cur, finish_threads](
            cur, hist, rows.histogram_bins, source, rows.sample_counts, rows.row_slot, rows.row_stats,
            rows.stats_stride, level_totals, categorical_features, n_bins_non_missing, int(missing_bin),
            buffers.path_gains, buffers.path_bins, buffers.path_missing_left, buffers.category_bits,
            *outputs,
        )
        partition_threads = block_threads(-(-n_entries // (n_cur * ROWS_PER_THREAD)))
        tile_rows = ROWS_PER_THREAD * partition_threads
        layout = launch_plan(parity, n_cur, -1, int(header[N_HIST]), tile_rows, outputs)
        count_left, scatter, _ = (kernel for _, kernel in _partition_kernels(False))
        n_tiles = n_cur + -(-n_entries // tile_rows)
        split = (outputs[1], outputs[2], outputs[3], int(missing_bin), outputs[6], outputs[7], cur[WORK, :n_cur])
        count_left[n_tiles, partition_threads](
            rows.X_binned, source, level[0], level[1], *split, buffers.part_offsets, buffers.part_tile_rows,
            buffers.tile_left,
        )
        scatter[n_tiles, partition_threads](
            rows.X_binned, source, target, level[0], level[1], cur[WORK2, :n_cur], *split, buffers.part_offsets,
            buffers.part_tile_rows, buffers.tile_left,
        )
        n_hist_parent = int(header[N_HIST])
        header, *level_records = fetched(layout)
        splits, bitsets, node_records, node_values = level_records
        records.append((node_records, node_values, splits, bitsets))
        np.add.at(next_node_idx, splits[:, 0], 2)
        parity, n_cur = 1 - parity, 2 * splits.shape[0]
        source, target = target, source
    if n_hist_parent > 0:
        hist_buffers[1 - parity][:n_hist_parent] = 0
    if source is not rows.sample_indices:
        rows.sample_indices[...] = source
    return tuple(np.concatenate(column) for column in zip(*records))


def _clean(workspace, hist_buffers):
    """Zero ``hist_buffers`` unless the last growth left these very arrays zeroed (the grower's own levels,
    which zero the rows they build, forget it: ``workspace.pop("clean_histograms")``)."""
    key = tuple(_address(hist) for hist in hist_buffers) + (hist_buffers[0].shape[0],)
    clean = workspace.get("clean_histograms")
    if clean is None or clean[:2] != key[:2] or clean[2] < key[2]:
        for hist in hist_buffers:
            hist[...] = 0
    workspace["clean_histograms"] = key


# --- PTX checks ------------------------------------------------------------------------------


def ptx_specializations():
    """``(name, python_function, argument_types, block_size[, max_registers])`` of every kernel launched here (the
    build, scans and partition are their modules')."""
    int64_1d, int64_2d = types.Array(types.int64, 1, "C"), types.Array(types.int64, 2, "C")
    int32_1d, float64_1d = types.Array(types.int32, 1, "C"), types.Array(types.float64, 1, "C")
    bool_1d, uint32_2d = types.Array(types.boolean, 1, "C"), types.Array(types.uint32, 2, "C")
    float64_2d = types.Array(types.float64, 2, "C")
    outputs = (float64_1d, int32_1d, int32_1d, bool_1d, int64_2d, int32_1d, bool_1d, uint32_2d)
    plan = (
        int64_2d, int64_2d, int64_2d, int64_2d, types.int64, types.int64, *outputs[:6], uint32_2d, int64_1d,
        int64_1d, int64_1d, float64_1d, types.float64, float64_1d, types.int64, types.int64, types.int64,
        types.boolean, types.int64, types.float64, types.float64, types.int64, float64_1d,
        types.UniTuple(types.float64, 2), types.int64, types.int64, int64_2d, types.boolean, types.boolean,
        types.Array(types.boolean, 3, "C"), float64_1d, float64_2d, int64_2d, int64_1d, types.int64,
        int64_1d, int64_1d, types.int64, int64_1d, int64_1d, types.int64, int64_1d, int64_2d, uint32_2d, int64_2d,
        float64_2d, float64_1d, float64_1d,
    )
    finish = (
        int64_2d, types.Array(types.int64, 4, "C"), types.Array(types.uint8, 2, "F"), int32_1d,
        types.Array(types.int32, 2, "C"), int32_1d, int64_2d, types.int64, int64_2d, int32_1d, int32_1d, types.int64,
        types.Array(types.float64, 3, "C"), types.Array(types.int32, 3, "C"), types.Array(types.boolean, 3, "C"),
        types.Array(types.uint32, 4, "C"), *outputs,
    )
    derive = (int64_2d, types.int64, int64_1d, int64_2d, int64_2d)
    draw = (int64_2d, types.int64, types.int64, int64_2d, types.int64, types.Array(types.boolean, 3, "C"), int64_2d,
            types.int64)
    specs = [
        (f"draw_features_block{block}", _draw_features_kernel(block)[0], draw, block) for block in FEATURE_BLOCK_SIZES
    ] + [
        ("split_and_plan_capped", _split_and_plan_kernel(PLAN_THREADS)[0], plan, PLAN_THREADS, PLAN_MAX_REGISTERS),
        ("derive_and_clear", _derive_and_clear_kernel, derive, DERIVE_THREADS),
    ]
    for n_slots in splitting.PTX_N_SLOTS:
        specs.append((
            f"finish_splits_slots{n_slots}", _finish_splits_kernel(n_slots, splitting.FINISH_ROWS_THREADS)[0], finish,
            splitting.FINISH_ROWS_THREADS,
        ))
    return specs
