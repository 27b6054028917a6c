"""Histograms on the GPU (twin of ``kernels.cpu.histogram``): one launch for a batch of nodes.

``build_histograms``
    A task is a (row chunk, feature group) pair, one per block. Each node's
    row range is cut into chunks of ``chunk_rows`` rows; the task table is
    ``offsets``, the prefix sum of the chunks per node (``chunk_table``: one
    block of ``_chunk_plan_kernel`` on the device, never read back): block
    ``(x, y)`` takes chunk ``x`` (its node by a binary search in ``offsets``)
    and the ``y``-th group of ``features_per_block`` features. The block
    accumulates the chunk's rows, in those of the group's features that its
    node evaluates (``feature_mask``; a block with none returns at once), into
    a shared-memory histogram (features_per_block x n_bins x n_slots int64)
    with shared int64 atomics, then adds its occupied bins to ``hist`` (zeroed
    first) with global int64 atomics. Integer sums do not depend on the order
    of the atomics, so the result is the CPU's bit for bit. When one feature's
    histogram does not fit the shared budget
    (``n_bins * n_slots * 8 > 48 KiB``: more than 23 classes at 256 bins) the
    same kernel adds straight into ``hist``.
``node_totals``
    The same chunks, one per block; each thread sums its rows in a private
    array with ``common.accumulate_row``, the block combines them with shared
    atomics and adds them to ``totals`` (zeroed first) with global atomics.
``subtract_histograms``
    One thread per entry of the siblings' histograms (grid-stride), each
    reading its parent's and child's rows of the batch arrays.

Rows are read through ``sample_indices``; a row adds ``sample_counts[tree,
row] * row_stats[j, s]`` to slot ``row_slot[j] + s`` and 1 to the count slot,
with ``j = tree * stats_stride + row``, as on the CPU
(``common.accumulate_row`` is not atomic, so the shared and global
accumulations spell it out with atomics).
"""

import functools

import numpy as np
from numba import cuda, types

from ..common import accumulate_row
from . import jit_kernel

# --- launch configuration --------------------------------------------------------

THREADS = 256  # threads per block of build_histograms and node_totals
BLOCK_SIZES = (32, 64, 128, 256)  # threads of the one block of _chunk_plan (one per node, up to 256)
MAX_THREADS = BLOCK_SIZES[-1]  # kernels launched with any of BLOCK_SIZES read theirs from blockDim
SUBTRACT_THREADS = 256
# Static shared memory of one block: 48 KiB is the static limit, and 4 resident
# blocks of 256 threads (50% occupancy on an H100) need 4 * (48 + 1) KiB <= 228 KiB.
SHARED_BUDGET_BYTES = 48 * 1024
MAX_FEATURES_PER_BLOCK = 8
# A chunk holds at least this many rows, so that the per-block flush of at most
# SHARED_BUDGET_BYTES / 8 entries stays small next to the row work; above that the
# chunk grows so that a launch has about TARGET_BLOCKS blocks.
MIN_ROWS_PER_CHUNK = 4096
TARGET_BLOCKS = 1024


def array_namespace(array):
    """``numpy`` for numpy arrays, else ``cupy`` (imported only then)."""
    if isinstance(array, np.ndarray):
        return np
    import cupy

    return cupy.get_array_module(array)


def features_per_block(n_bins, n_slots, n_features):
    """Features of one block's shared histogram; 0: too large, use global atomics."""
    fit = SHARED_BUDGET_BYTES // (n_bins * n_slots * 8)
    return min(fit, MAX_FEATURES_PER_BLOCK, max(n_features, 1))


def rows_per_chunk(n_entries, n_groups):
    """Rows per chunk when the nodes do not overlap: at least MIN_ROWS_PER_CHUNK, about
    TARGET_BLOCKS blocks per launch."""
    return max(MIN_ROWS_PER_CHUNK, -(-n_entries * n_groups // TARGET_BLOCKS))


def chunk_table(node_start, node_stop, n_entries, min_chunk_rows):
    """The task table of a launch with one chunk per block: ``(grid_x, offsets, chunk_rows)``.

    ``offsets[node]`` is the first chunk of ``node`` and ``offsets[-1]`` the number of
    chunks; ``chunk_rows`` (a 1-element array) is the rows per chunk. One launch of
    ``_chunk_plan_kernel`` (one block, a thread per node up to 256) computes both on the device, without
    reading anything back:
    ``grid_x = n_nodes + ceil(n_entries / min_chunk_rows)`` blocks always cover every
    chunk because ``chunk_rows`` is raised, if the nodes hold more rows in all than
    ``n_entries`` (overlapping nodes), until
    ``sum(ceil(len / chunk_rows)) <= n_nodes + sum(len) / chunk_rows <= grid_x``.
    """
    xp = array_namespace(node_start)
    n_nodes = node_start.shape[0]
    spare = max(1, -(-n_entries // min_chunk_rows))
    offsets = xp.empty(n_nodes + 1, dtype=np.int64)
    chunk_rows = xp.empty(1, dtype=np.int64)
    threads = block_threads(n_nodes)
    _chunk_plan[1, threads](node_start, node_stop, spare, min_chunk_rows, offsets, chunk_rows)
    return n_nodes + spare, offsets, chunk_rows


@cuda.jit(device=True)
def inclusive_scan(scan, tid, value, n_threads):
    """Block-wide inclusive prefix sum of ``value`` (Hillis-Steele in ``scan``); every thread calls it.
    ``scan[n_threads - 1]`` holds the total until the next call."""
    scan[tid] = value
    cuda.syncthreads()
    offset = 1
    while offset < n_threads:
        total = scan[tid]
        if tid >= offset:
            total += scan[tid - offset]
        cuda.syncthreads()
        scan[tid] = total
        cuda.syncthreads()
        offset *= 2
    return scan[tid]


def _chunk_plan_kernel(node_start, node_stop, spare, min_chunk_rows, offsets, chunk_rows):
    """``chunk_rows[0] = max(min_chunk_rows, ceil(sum of the nodes' rows / spare))``, then ``offsets``,
    the prefix sum of the nodes' chunks; one block of any of ``BLOCK_SIZES`` threads."""
    scan = cuda.shared.array(MAX_THREADS, types.int64)
    tid = cuda.threadIdx.x
    threads = cuda.blockDim.x
    n_nodes = node_start.shape[0]
    n_rows = 0
    for node in range(tid, n_nodes, threads):
        n_rows += max(node_stop[node] - node_start[node], 0)
    inclusive_scan(scan, tid, n_rows, threads)
    rows = max(min_chunk_rows, (scan[threads - 1] + spare - 1) // spare)
    cuda.syncthreads()
    if tid == 0:
        chunk_rows[0] = rows
        offsets[0] = 0
    n_chunks_before = 0
    for first_node in range(0, n_nodes, threads):
        node = first_node + tid
        n_chunks = 0
        if node < n_nodes:
            n_chunks = (max(node_stop[node] - node_start[node], 0) + rows - 1) // rows
        inclusive = inclusive_scan(scan, tid, n_chunks, threads)
        if node < n_nodes:
            offsets[node + 1] = n_chunks_before + inclusive
        n_chunks_before += scan[threads - 1]
        cuda.syncthreads()  # everyone has read the scan before the next pass writes it


_chunk_plan = jit_kernel(_chunk_plan_kernel)


def block_threads(n_items):
    """The smallest of ``BLOCK_SIZES`` (whole warps) of at least ``n_items`` threads, else the largest."""
    for threads in BLOCK_SIZES:
        if n_items <= threads:
            return threads
    return BLOCK_SIZES[-1]


@cuda.jit(device=True)
def _node_of_chunk(offsets, n_nodes, chunk):
    """The node whose chunks ``[offsets[node], offsets[node + 1])`` hold ``chunk``."""
    low = 0
    high = n_nodes
    while low < high:
        middle = (low + high) >> 1
        if offsets[middle + 1] <= chunk:
            low = middle + 1
        else:
            high = middle
    return low


# --- build_histograms ------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _build_histograms_kernel(n_bins, n_slots, group, threads, unit_counts):
    """Histogram kernel for ``group`` features per block (0: no shared memory, MAX_FEATURES_PER_BLOCK then);
    with ``unit_counts`` it does not read ``sample_counts`` (all 1)."""
    use_shared = group > 0
    features = group if use_shared else MAX_FEATURES_PER_BLOCK
    shared_size = features * n_bins * n_slots if use_shared else 1
    count_slot = n_slots - 1

    def build_histograms_kernel(
        X_binned, sample_indices, node_start, node_stop, node_tree, feature_mask, sample_counts, row_slot,
        row_stats, stats_stride, hist, hist_rows, offsets, chunk_rows,
    ):
        # One chunk per block and no loop around the phases: a grid-stride loop
        # keeps the phases' addresses live together (about 90 registers, not 60).
        local_hist = cuda.shared.array(shared_size, types.int64)
        tid = cuda.threadIdx.x
        n_nodes = node_start.shape[0]
        chunk = cuda.blockIdx.x
        if chunk >= offsets[n_nodes]:
            return
        first_feature = cuda.blockIdx.y * features
        n_group = min(features, hist.shape[1] - first_feature)
        node = _node_of_chunk(offsets, n_nodes, chunk)
        hist_row = hist_rows[node]
        # Bit f set: the node evaluates feature first_feature + f. The same for the
        # whole block, so skipping a feature (or the block) never diverges. The row
        # loop visits the set bits only (fewer registers than testing every f).
        active = 0
        for f in range(n_group):
            if feature_mask[node, first_feature + f]:
                active |= 1 << f
        if active == 0:
            return
        if use_shared:
            for k in range(tid, n_group * n_bins * n_slots, threads):
                local_hist[k] = 0
            cuda.syncthreads()
        rows = chunk_rows[0]
        first = node_start[node] + (chunk - offsets[node]) * rows
        last = min(first + rows, node_stop[node])
        tree = node_tree[node]
        stats_base = tree * stats_stride
        n_row_stats = row_stats.shape[1]
        for position in range(first + tid, last, threads):
            row = sample_indices[position]
            multiplicity = 1 if unit_counts else sample_counts[tree, row]
            stats_row = stats_base + row
            first_slot = row_slot[stats_row]
            remaining = active
            while remaining != 0:
                f = cuda.ffs(remaining) - 1
                remaining &= remaining - 1
                # int(): a uint8 stays uint8 in numpy's arithmetic (the simulator) and would wrap.
                bin_idx = int(X_binned[row, first_feature + f])
                if use_shared:
                    base = (f * n_bins + bin_idx) * n_slots
                    for stat_idx in range(n_row_stats):
                        cuda.atomic.add(
                            local_hist, base + first_slot + stat_idx, multiplicity * row_stats[stats_row, stat_idx]
                        )
                    cuda.atomic.add(local_hist, base + count_slot, 1)
                else:
                    for stat_idx in range(n_row_stats):
                        cuda.atomic.add(
                            hist, (hist_row, first_feature + f, bin_idx, first_slot + stat_idx),
                            multiplicity * row_stats[stats_row, stat_idx],
                        )
                    cuda.atomic.add(hist, (hist_row, first_feature + f, bin_idx, count_slot), 1)
        if use_shared:
            cuda.syncthreads()
            # Flush the occupied bins (a bin without rows is all zeros).
            for k in range(tid, n_group * n_bins, threads):
                base = k * n_slots
                if local_hist[base + count_slot] != 0:
                    f = k // n_bins
                    bin_idx = k - f * n_bins
                    for slot in range(n_slots):
                        value = local_hist[base + slot]
                        if value != 0:
                            cuda.atomic.add(hist, (hist_row, first_feature + f, bin_idx, slot), value)

    return build_histograms_kernel, jit_kernel(build_histograms_kernel)


def build_histograms(
    X_binned, sample_indices, node_start, node_stop, node_tree, feature_mask, sample_counts, row_slot, row_stats,
    stats_stride, hist, unit_counts=False, constant_hessian=None, count_bits=0, hist_rows=None,
):
    """Fill the nodes' rows ``hist_rows`` of ``hist`` (n_hist, n_features, n_bins, n_slots) where
    ``feature_mask`` is True (see ``kernels.cpu``).

    ``constant_hessian`` and ``count_bits`` are not used: the hessians and the
    counts added on their own give the same sums.

    Launch: the nodes' rows of ``hist`` zeroed, then one kernel on a grid of ``(n_nodes +
    ceil(n_entries / rows_per_chunk), ceil(n_features / features_per_block))``
    blocks of ``THREADS`` threads, one (chunk, feature group) per block;
    ``features_per_block = min(8, n_features, 48 KiB // (n_bins * n_slots * 8))``.
    The grid does not depend on ``feature_mask``: a block whose node evaluates
    none of its features returns at once.
    """
    n_nodes = node_start.shape[0]
    _, n_features, n_bins, n_slots = hist.shape
    if n_nodes == 0 or n_features == 0:
        return
    hist_rows = _rows_on_device(hist_rows, n_nodes, hist)
    hist[hist_rows] = 0
    group = features_per_block(n_bins, n_slots, n_features)
    n_groups = -(-n_features // (group if group > 0 else MAX_FEATURES_PER_BLOCK))
    n_entries = sample_indices.shape[0]
    grid_x, offsets, chunk_rows = chunk_table(node_start, node_stop, n_entries, rows_per_chunk(n_entries, n_groups))
    kernel = _build_histograms_kernel(n_bins, n_slots, group, THREADS, bool(unit_counts))[1]
    kernel[(grid_x, n_groups), THREADS](
        X_binned, sample_indices, node_start, node_stop, node_tree, feature_mask, sample_counts, row_slot,
        row_stats, stats_stride, hist, hist_rows, offsets, chunk_rows,
    )


def _rows_on_device(rows, n_nodes, like):
    """``rows``, or ``0 .. n_nodes - 1`` when None, in ``like``'s array namespace."""
    return array_namespace(like).arange(n_nodes, dtype=np.int64) if rows is None else rows


# --- node_totals -------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _node_totals_kernel(n_slots, threads):
    def node_totals_kernel(
        sample_indices, node_start, node_stop, node_tree, sample_counts, row_slot, row_stats, stats_stride, totals,
        offsets, chunk_rows,
    ):
        block_totals = cuda.shared.array(n_slots, types.int64)
        own = cuda.local.array(n_slots, types.int64)
        tid = cuda.threadIdx.x
        n_nodes = node_start.shape[0]
        chunk = cuda.blockIdx.x
        if chunk >= offsets[n_nodes]:
            return
        node = _node_of_chunk(offsets, n_nodes, chunk)
        rows = chunk_rows[0]
        first = node_start[node] + (chunk - offsets[node]) * rows
        last = min(first + rows, node_stop[node])
        counts = sample_counts[node_tree[node]]
        stats_base = node_tree[node] * stats_stride
        for slot in range(tid, n_slots, threads):
            block_totals[slot] = 0
        for slot in range(n_slots):
            own[slot] = 0
        cuda.syncthreads()
        for position in range(first + tid, last, threads):
            row = sample_indices[position]
            accumulate_row(own, stats_base + row, counts[row], row_slot, row_stats)
        for slot in range(n_slots):
            if own[slot] != 0:
                cuda.atomic.add(block_totals, slot, own[slot])
        cuda.syncthreads()
        for slot in range(tid, n_slots, threads):
            if block_totals[slot] != 0:
                cuda.atomic.add(totals, (node, slot), block_totals[slot])

    return node_totals_kernel, jit_kernel(node_totals_kernel)


def node_totals(
    sample_indices, node_start, node_stop, node_tree, sample_counts, row_slot, row_stats, stats_stride, totals,
    unit_counts=False,
):
    """Sum every node's rows into ``totals`` (n_nodes, n_slots) (see ``kernels.cpu``); reads
    ``sample_counts`` whatever ``unit_counts`` says (all 1 then: the same sums).

    Launch: ``totals`` zeroed, then one block of ``THREADS`` threads per chunk of
    ``rows_per_chunk(n_entries, 1)`` rows (the task table of ``build_histograms``).
    """
    n_nodes, n_slots = totals.shape
    totals.fill(0)
    if n_nodes == 0:
        return
    n_entries = sample_indices.shape[0]
    grid_x, offsets, chunk_rows = chunk_table(node_start, node_stop, n_entries, rows_per_chunk(n_entries, 1))
    kernel = _node_totals_kernel(n_slots, THREADS)[1]
    kernel[grid_x, THREADS](
        sample_indices, node_start, node_stop, node_tree, sample_counts, row_slot, row_stats, stats_stride, totals,
        offsets, chunk_rows,
    )


# --- subtract_histograms ----------------------------------------------------------------


def _subtract_histograms_kernel(parent_hist, parent_rows, child_hist, child_rows, sibling_hist, sibling_rows):
    n_features, n_bins, n_slots = sibling_hist.shape[1], sibling_hist.shape[2], sibling_hist.shape[3]
    size = sibling_rows.shape[0] * n_features * n_bins * n_slots
    for k in range(cuda.grid(1), size, cuda.gridsize(1)):
        slot = k % n_slots
        rest = k // n_slots
        bin_idx = rest % n_bins
        rest //= n_bins
        feature_idx = rest % n_features
        sibling = rest // n_features
        sibling_hist[sibling_rows[sibling], feature_idx, bin_idx, slot] = (
            parent_hist[parent_rows[sibling], feature_idx, bin_idx, slot]
            - child_hist[child_rows[sibling], feature_idx, bin_idx, slot]
        )


_subtract_histograms = jit_kernel(_subtract_histograms_kernel)
MAX_SUBTRACT_BLOCKS = 8192


def subtract_histograms(parent_hist, parent_rows, child_hist, child_rows, sibling_hist, sibling_rows=None):
    """``sibling_hist[sibling_rows[k]] = parent_hist[parent_rows[k]] - child_hist[child_rows[k]]`` (exact
    in int64; ``sibling_rows`` None: ``0 .. n_siblings - 1``).

    Launch: one thread per entry of the siblings' histograms, ``SUBTRACT_THREADS``
    per block, at most ``MAX_SUBTRACT_BLOCKS`` blocks (grid-stride).
    """
    n_siblings = parent_rows.shape[0]
    size = n_siblings * int(np.prod(sibling_hist.shape[1:]))
    if size == 0:
        return
    sibling_rows = _rows_on_device(sibling_rows, n_siblings, sibling_hist)
    blocks = min(-(-size // SUBTRACT_THREADS), MAX_SUBTRACT_BLOCKS)
    _subtract_histograms[blocks, SUBTRACT_THREADS](
        parent_hist, parent_rows, child_hist, child_rows, sibling_hist, sibling_rows
    )


# --- PTX checks ------------------------------------------------------------------------------

# The factory constants in use: 256 bins; 3 slots (binary classification, newton),
# 4 (regression), 11 (10 classes).
PTX_N_BINS = 256
PTX_N_SLOTS = (3, 4, 11)


def _argument_types():
    int64_1d = types.Array(types.int64, 1, "C")
    int32_1d = types.Array(types.int32, 1, "C")
    int32_2d = types.Array(types.int32, 2, "C")
    int64_2d = types.Array(types.int64, 2, "C")
    bool_2d = types.Array(types.boolean, 2, "C")
    x_binned = types.Array(types.uint8, 2, "F")
    hist = types.Array(types.int64, 4, "C")
    build = (
        x_binned, int32_1d, int64_1d, int64_1d, int64_1d, bool_2d, int32_2d, int32_1d, int64_2d, types.int64, hist,
        int64_1d, int64_1d, int64_1d,
    )
    totals = (
        int32_1d, int64_1d, int64_1d, int64_1d, int32_2d, int32_1d, int64_2d, types.int64, int64_2d, int64_1d,
        int64_1d,
    )
    return build, totals, (hist, int64_1d, hist, int64_1d, hist, int64_1d)


def ptx_specializations():
    """``(name, python_function, argument_types, block_size)`` of every kernel specialisation in use."""
    build_types, totals_types, subtract_types = _argument_types()
    specs = []
    for n_slots in PTX_N_SLOTS:
        group = features_per_block(PTX_N_BINS, n_slots, MAX_FEATURES_PER_BLOCK)
        for unit_counts in (False, True):
            specs.append((
                f"build_histograms_bins{PTX_N_BINS}_slots{n_slots}_features{group}{'_unit_counts' * unit_counts}",
                _build_histograms_kernel(PTX_N_BINS, n_slots, group, THREADS, unit_counts)[0], build_types, THREADS,
            ))
    # Many classes: one feature's histogram exceeds the shared budget; global atomics.
    n_slots = SHARED_BUDGET_BYTES // (PTX_N_BINS * 8) + 1
    specs.append((
        f"build_histograms_bins{PTX_N_BINS}_slots{n_slots}_global",
        _build_histograms_kernel(PTX_N_BINS, n_slots, 0, THREADS, False)[0], build_types, THREADS,
    ))
    for n_slots in PTX_N_SLOTS:
        specs.append((
            f"node_totals_slots{n_slots}", _node_totals_kernel(n_slots, THREADS)[0], totals_types, THREADS,
        ))
    specs.append(("subtract_histograms", _subtract_histograms_kernel, subtract_types, SUBTRACT_THREADS))
    int64_1d = types.Array(types.int64, 1, "C")
    specs.append((
        "chunk_plan", _chunk_plan_kernel, (int64_1d, int64_1d, types.int64, types.int64, int64_1d, int64_1d),
        MAX_THREADS,
    ))
    return specs
