"""Backends: the plain-array operations the grower needs, and ``get_backend``.

A backend owns allocation and kernel launches; host code (grower, estimators)
calls only these methods and never branches on the device beyond choosing the
backend here. ``CPUBackend`` runs the numba ``njit`` kernels of
``gpuforest.kernels.cpu`` over numpy arrays; ``CUDABackend`` runs their
numba.cuda twins in ``gpuforest.kernels.cuda`` over CuPy arrays (numpy arrays
under numba's CUDA simulator). Both are ``Backend`` with a different array
library and kernel package. The predict methods take a sparse X too, in dense blocks of
rows (``sparse.in_dense_row_blocks``).
"""

import contextlib
import functools
import importlib
import itertools
import math
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
from numba import get_num_threads

from .devices import host_free_memory_bytes
from .kernels.counting import ACTIVE, DeviceCounts, count
from .kernels.cpu.growth import grow_best_first, grow_levels
from .kernels.cpu.splitting import BLOCKS_PER_THREAD
from .sparse import in_dense_row_blocks
from .tree import CATEGORY_WORDS

DEVICES = ("auto", "cpu", "cuda")


@dataclass
class SplitResult:
    """Best split per node; ``feature == NO_SPLIT`` where none is allowed.

    Attributes
    ----------
    gain : ndarray of shape (n_nodes,), dtype float64
    feature, bin : ndarray of shape (n_nodes,), dtype int32
    missing_left : ndarray of shape (n_nodes,), dtype bool
    left_totals : ndarray of shape (n_nodes, n_slots), dtype int64
    next_bin : ndarray of shape (n_nodes,), dtype int32
        Lowest occupied non-missing bin above ``bin`` (``NO_SPLIT``: none).
    categorical : ndarray of shape (n_nodes,), dtype bool
        A split on a categorical feature (``bin`` and ``next_bin`` are then ``NO_SPLIT``).
    category_bitset : ndarray of shape (n_nodes, CATEGORY_WORDS), dtype uint32
        The categories that go left (``tree.Tree.category_bitset``); zero for numeric splits.
    """

    gain: np.ndarray
    feature: np.ndarray
    bin: np.ndarray
    missing_left: np.ndarray
    left_totals: np.ndarray
    next_bin: np.ndarray
    categorical: np.ndarray
    category_bitset: np.ndarray

    @staticmethod
    def specs(n_nodes, n_slots):
        """``(shape, dtype)`` of each field, in ``outputs`` order."""
        return [
            ((n_nodes,), np.float64), ((n_nodes,), np.int32), ((n_nodes,), np.int32), ((n_nodes,), np.bool_),
            ((n_nodes, n_slots), np.int64), ((n_nodes,), np.int32), ((n_nodes,), np.bool_),
            ((n_nodes, CATEGORY_WORDS), np.uint32),
        ]

    @classmethod
    def empty(cls, n_nodes, n_slots):
        return cls(*(np.empty(shape, dtype=dtype) for shape, dtype in cls.specs(n_nodes, n_slots)))

    def outputs(self):
        return (
            self.gain, self.feature, self.bin, self.missing_left, self.left_totals, self.next_bin, self.categorical,
            self.category_bitset,
        )


class PackedLayout:
    """Arrays laid out one after another in one byte buffer, each at a multiple of 8 bytes.

    Parameters
    ----------
    specs : list of (shape, dtype)
    """

    def __init__(self, specs):
        self.specs = [(tuple(shape), np.dtype(dtype)) for shape, dtype in specs]
        self.sizes = [math.prod(shape) * dtype.itemsize for shape, dtype in self.specs]
        self.offsets = [0, *itertools.accumulate(-(-size // 8) * 8 for size in self.sizes)]
        self.n_bytes = self.offsets[-1]

    def views(self, buffer):
        """The arrays, as views of ``buffer`` (uint8, ``n_bytes``; numpy or CuPy), one constructor each."""
        if isinstance(buffer, np.ndarray):
            return [
                np.ndarray.__new__(type(buffer), shape, dtype, buffer=buffer, offset=offset)
                for (shape, dtype), offset in zip(self.specs, self.offsets)
            ]
        return [
            type(buffer)(shape, dtype, memptr=buffer.data + offset) if size else type(buffer)(shape, dtype)
            for (shape, dtype), size, offset in zip(self.specs, self.sizes, self.offsets)
        ]

    def pack(self, arrays):
        """A numpy buffer holding ``arrays`` (host arrays of the layout's shapes and dtypes)."""
        buffer = np.empty(self.n_bytes, dtype=np.uint8)
        for view, array in zip(self.views(buffer), arrays):
            view[...] = array
        return buffer


# Rows per launch of predict_fractional: its scratch stacks are this many rows.
FRACTIONAL_ROWS_PER_CALL = 65536


@dataclass
class BinnedRows:
    """A fit's binned training rows in the layouts of one backend (``Backend.binned_rows``).

    Attributes
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype uint8
        ``BinMapper.transform``'s bins, in the partition kernels' layout (both backends: Fortran order).
    histogram_bins : ndarray of shape (n_samples, n_features), dtype uint8
        The layout the backend's histogram kernel reads (the CUDA backend's: ``X_binned`` itself; the CPU's:
        a C-ordered copy).
    """

    X_binned: np.ndarray
    histogram_bins: np.ndarray


@dataclass
class RowData:
    """What the kernels read about the training rows of a batch of trees.

    Attributes
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype uint8
    histogram_bins : ndarray of shape (n_samples, n_features), dtype uint8
        ``X_binned`` in the layout the backend's histogram kernel reads (``BinnedRows.histogram_bins``).
    sample_indices : ndarray of shape (n_entries,), dtype int32
        The rows of every tree; each node owns a contiguous range.
    sample_counts : ndarray of shape (n_trees, n_samples), dtype int32
        How many times each row is drawn for each tree.
    row_slot, row_stats, stats_stride : see ``statistics.RowStatistics``.
        Tree ``t`` reads row ``r``'s statistics at ``t * stats_stride + r``.
    unit_counts : bool
        Every entry of ``sample_counts`` is 1: the histogram kernels skip reading them.
    constant_hessian : int or None
        ``RowStatistics.constant_hessian`` when ``unit_counts`` (else None): the CPU
        histogram kernel derives the hessian slot from the row count.
    count_bits : int
        ``RowStatistics.count_bits``: the CPU histogram kernel adds the row count
        into the low bits of a statistic.
    """

    X_binned: np.ndarray
    histogram_bins: np.ndarray
    sample_indices: np.ndarray
    sample_counts: np.ndarray
    row_slot: np.ndarray
    row_stats: np.ndarray
    stats_stride: int = 0
    unit_counts: bool = False
    constant_hessian: int | None = None
    count_bits: int = 0


class Backend:
    """Kernel launches over one array library; what both backends share.

    Per-node metadata (ranges, trees, split results, totals) crosses between
    host and device once per call: methods take and return host numpy arrays
    for it. Row data and histograms stay on the device (``xp`` arrays).

    Parameters
    ----------
    name : str
    xp : module
        The array library of the device (numpy, or CuPy).
    kernels : module
        ``gpuforest.kernels.cpu`` or ``gpuforest.kernels.cuda``: modules
        ``KERNEL_STAGES`` with the same functions.
    """

    out_of_memory_errors = (MemoryError,)
    # Whether the device's arrays live in the process's own memory (the CPU's): then growth buffers are
    # sized from the input, so that the fit's peak memory follows the data's, not the machine's.
    shares_host_memory = False
    # Whether ``grow_levels`` grows a batch's remaining levels in one call, and ``grow_best_first`` its trees.
    grows_levels = False
    grows_best_first = False

    def __init__(self, name, xp, kernels):
        self.name = name
        self.xp = xp
        self.kernels = kernels

    def free_memory_bytes(self):
        """Memory this backend may still allocate."""
        return host_free_memory_bytes()

    def grows_levels_for(self, n_bins, n_slots, categorical):
        """Whether ``grow_levels`` grows trees of ``n_bins`` bins and ``n_slots`` statistics, with categorical
        features or not."""
        return self.grows_levels

    def level_loop_bytes(self):
        """Most bytes of the two histogram buffers of ``grow_levels``."""
        return LEVEL_LOOP_BYTES

    def _search_arrays(self, bin_mapper, stats, is_categorical, random_thresholds):
        """The ``search`` tuple of ``grow_levels`` (``kernels.cpu.growth``'s), host arrays."""
        n_features = bin_mapper.n_thresholds_.shape[0]
        bin_values = bin_mapper.bin_values() if random_thresholds else np.empty((n_features, 0))
        return (
            _categorical_features(is_categorical), bin_values, bin_mapper.n_bins_non_missing_,
            bin_mapper.missing_bin, stats.criterion, stats.inv_scales, stats.regularization,
            *split_constraints(None, None, (0, n_features)),
        )

    @contextlib.contextmanager
    def counting(self):
        """Count what the backend does to the device inside a ``with`` block: yields a ``DeviceCounts``.

        Copies are counted where the backend makes them (``to_device``,
        ``to_device_many``, ``to_host``), launches where the CUDA kernels are
        launched; the CPU backend has no device and counts nothing.
        """
        counts = DeviceCounts()
        previous, ACTIVE.counts = ACTIVE.counts, counts
        try:
            yield counts
        finally:
            ACTIVE.counts = previous

    def to_device(self, array):
        return self.xp.asarray(array)

    def to_host(self, array):
        return array.get() if hasattr(array, "get") else np.asarray(array)

    def to_device_many(self, *arrays):
        """``to_device`` of each array (None stays None)."""
        return tuple([None if array is None else self.to_device(array) for array in arrays])

    def binned_rows(self, X_binned):
        """``BinnedRows`` of ``X_binned`` (from ``map_to_bins``): made once per fit, read by every growth; the
        same array for every kernel (a warp reads one feature of consecutive rows)."""
        return BinnedRows(X_binned=X_binned, histogram_bins=X_binned)

    def row_data(self, binned_rows, sample_indices, sample_counts, stats, unit_counts=None):
        """``RowData`` on the device of the rows ``sample_indices`` of ``binned_rows`` (``Backend.binned_rows``),
        drawn ``sample_counts`` (n_trees, n_samples) times, with the statistics ``stats``.
        ``unit_counts``: whether every count is 1, when the caller knows (None: read from the counts)."""
        n_trees, n_samples = sample_counts.shape
        stats_rows = n_trees * n_samples if stats.stats_stride else n_samples
        if stats.stats_stride not in (0, n_samples) or stats.row_stats.shape[0] != stats_rows:
            raise ValueError(
                f"Row statistics of {stats.row_stats.shape[0]} rows with stride {stats.stats_stride} do not fit "
                f"{n_trees} trees of {n_samples} rows."
            )
        sample_counts = self.to_device(sample_counts)
        if unit_counts is None:
            unit_counts = bool((sample_counts == 1).all())
        return RowData(
            X_binned=binned_rows.X_binned,
            histogram_bins=binned_rows.histogram_bins,
            sample_indices=self.to_device(sample_indices),
            sample_counts=sample_counts,
            row_slot=self.to_device(stats.row_slot),
            row_stats=self.to_device(stats.row_stats),
            stats_stride=stats.stats_stride,
            unit_counts=unit_counts,
            constant_hessian=stats.constant_hessian if unit_counts else None,
            count_bits=stats.count_bits,
        )

    def map_to_bins(self, X, bin_thresholds, n_thresholds, missing_bin):
        X_binned = self.xp.empty(X.shape, dtype=np.uint8, order="F")
        self.kernels.binning.map_to_bins(
            self.to_device(X), self.to_device(bin_thresholds), self.to_device(n_thresholds), missing_bin, X_binned
        )
        return X_binned

    def uniform_per_row(self, seed, purpose, stream, n_rows):
        """``U(seed, purpose, stream, row)`` of every row on the device, shape (n_rows,), float64."""
        draws = self.xp.empty(n_rows)
        self.kernels.sampling.uniform_per_row(seed, purpose, stream, n_rows, draws)
        return draws

    def bootstrap_counts(self, seed, first_tree, n_trees, n_samples, n_draws):
        """Per (tree, row) draw counts, kept on the device: shape (n_trees, n_samples), int32."""
        counts = self.xp.empty((n_trees, n_samples), dtype=np.int32)
        self.kernels.sampling.bootstrap_counts(seed, first_tree, n_draws, counts)
        return counts

    def feature_masks(self, seed, node_tree, node_idx, n_features, max_features):
        masks = self.xp.empty((node_tree.shape[0], n_features), dtype=bool)
        self.kernels.sampling.feature_masks(
            seed, *self.to_device_many(node_tree, node_idx), n_features, max_features, masks
        )
        return self.to_host(masks)

    def threshold_draws(self, seed, node_tree, node_idx, n_features):
        """Uniforms of the random thresholds, kept on the device: shape (n_nodes, n_features), float64."""
        draws = self.xp.empty((node_tree.shape[0], n_features), dtype=np.float64)
        self.kernels.sampling.threshold_draws(seed, *self.to_device_many(node_tree, node_idx), n_features, draws)
        return draws

    def _threshold_draws_or_best(self, threshold_draws, n_features):
        """``threshold_draws`` on the device; ``None`` -> no rows, which the split kernels read as best splits."""
        if threshold_draws is None:
            return self.xp.empty((0, n_features), dtype=np.float64)
        return self.to_device(threshold_draws)

    def node_totals(self, rows, node_start, node_stop, node_tree, n_slots):
        totals = self.xp.empty((node_start.shape[0], n_slots), dtype=np.int64)
        self.kernels.histogram.node_totals(
            rows.sample_indices, *self.to_device_many(node_start, node_stop, node_tree), rows.sample_counts,
            rows.row_slot, rows.row_stats, rows.stats_stride, totals, unit_counts=rows.unit_counts,
        )
        return self.to_host(totals)

    def build_histograms(
        self, rows, node_start, node_stop, node_tree, n_bins, n_slots, feature_mask, out=None, out_rows=None,
    ):
        """Histograms of shape (n_nodes, n_features, n_bins, n_slots), int64, on the device.

        Only the (node, feature) pairs where ``feature_mask`` (host, (n_nodes,
        n_features) bool) is True are filled; the others are unspecified.
        ``out``: an array (n_hist, n_features, n_bins, n_slots) to fill (else a new
        one), node ``k`` its row ``out_rows[k]`` (host; None: row ``k``).
        """
        n_features = rows.X_binned.shape[1]
        hist = self.xp.empty((node_start.shape[0], n_features, n_bins, n_slots), dtype=np.int64) if out is None else out
        *node_arrays, hist_rows = self.to_device_many(node_start, node_stop, node_tree, feature_mask, out_rows)
        self.kernels.histogram.build_histograms(
            rows.histogram_bins, rows.sample_indices, *node_arrays, rows.sample_counts, rows.row_slot,
            rows.row_stats, rows.stats_stride, hist, unit_counts=rows.unit_counts,
            constant_hessian=rows.constant_hessian, count_bits=rows.count_bits, hist_rows=hist_rows,
        )
        return hist

    def subtract_histograms(self, parent_hist, parent_rows, child_hist, child_rows, out=None, out_rows=None):
        """``parent_hist[parent_rows] - child_hist[child_rows]``, one histogram per pair, in ``out`` if given
        (pair ``k`` in its row ``out_rows[k]``; None: row ``k``).

        ``out`` may be the array read, at other rows: rows are read in place, not gathered first.
        """
        sibling = self.xp.empty((len(parent_rows),) + parent_hist.shape[1:], dtype=np.int64) if out is None else out
        parent_rows, child_rows, out_rows = self.to_device_many(parent_rows, child_rows, out_rows)
        self.kernels.histogram.subtract_histograms(parent_hist, parent_rows, child_hist, child_rows, sibling, out_rows)
        return sibling

    def _fetched_outputs(self, specs, launch):
        """Outputs of ``specs`` ((shape, dtype) each), filled by ``launch(outputs)``: host arrays."""
        outputs = [self.xp.empty(shape, dtype=dtype) for shape, dtype in specs]
        launch(outputs)
        if self.shares_host_memory:
            return outputs
        return [self.to_host(array) for array in outputs]

    def _split_result(self, n_nodes, n_slots, launch):
        """The split outputs, filled on the device by ``launch(outputs)``, at home."""
        return SplitResult(*self._fetched_outputs(SplitResult.specs(n_nodes, n_slots), launch))

    def _bin_values(self, bin_mapper, draws):
        """``bin_mapper.bin_values()`` on the device for random thresholds (``draws`` with rows), else an
        (n_features, 0) array that the split kernels do not read."""
        if draws.shape[0] == 0:
            return self.xp.empty((bin_mapper.n_thresholds_.shape[0], 0), dtype=np.float64)
        return self.to_device(bin_mapper.bin_values())

    def find_best_splits(
        self, rows, hist, hist_rows, node_start, node_stop, node_tree, totals, feature_mask, is_categorical,
        bin_mapper, stats, min_samples_leaf, min_weight_leaf, threshold_draws=None, monotonic_cst=None,
        value_bounds=None,
    ):
        """Best split per node, in one call for a level (``SplitResult``, host arrays).

        ``hist_rows`` (n_nodes,) int64 says where each node's split is searched: in ``hist[hist_rows[node]]``
        (``hist`` on the device; None when no node has one), from its rows (``FROM_ROWS``: the rows of
        ``node_start``, ``node_stop`` and ``node_tree``, read in the histogram layout, ``rows.histogram_bins``),
        or nowhere (``NOT_SEARCHED``: no split). ``is_categorical`` (n_features,) bool marks the categorical
        features; ``threshold_draws`` (n_nodes, n_features) draws random thresholds; ``monotonic_cst``
        (n_features,) and ``value_bounds`` (n_nodes, 2) constrain the splits (``split_constraints``).
        """
        n_nodes, n_slots = totals.shape
        if hist is None:
            hist = self.xp.empty((0, feature_mask.shape[1], 1, n_slots), dtype=np.int64)
        draws = self._threshold_draws_or_best(threshold_draws, feature_mask.shape[1])
        (hist_rows, node_start, node_stop, node_tree, totals, feature_mask, categorical_features, n_bins_non_missing,
         inv_scales, min_weight_leaf, monotonic_cst, value_bounds) = self.to_device_many(
            hist_rows, node_start, node_stop, node_tree, totals, feature_mask, _categorical_features(is_categorical),
            bin_mapper.n_bins_non_missing_, stats.inv_scales, min_weight_leaf,
            *split_constraints(monotonic_cst, value_bounds, feature_mask.shape),
        )
        return self._split_result(
            n_nodes,
            n_slots,
            lambda outputs: self.kernels.splitting.find_best_splits(
                hist, hist_rows, rows.histogram_bins, rows.sample_indices, node_start, node_stop, node_tree,
                rows.sample_counts, rows.row_slot, rows.row_stats, rows.stats_stride, totals, feature_mask,
                categorical_features, draws, self._bin_values(bin_mapper, draws), n_bins_non_missing,
                bin_mapper.missing_bin, stats.criterion, inv_scales, stats.regularization, min_samples_leaf,
                min_weight_leaf, monotonic_cst, value_bounds, *outputs,
            ),
        )

    def apply_splits(
        self, rows, node_start, node_stop, n_left, feature, bin, missing_left, missing_bin, categorical,
        category_bitset, scratch=None,
    ):
        """Partition the rows of each node by its split (``categorical``: by ``category_bitset``; host arrays).
        ``scratch``: working memory of the shape of ``rows.sample_indices`` (None: a new array)."""
        if scratch is None:
            scratch = self.xp.empty_like(rows.sample_indices)
        # Numeric splits alone: the kernels without the categorical test.
        categories = (categorical, category_bitset) if categorical.any() else (None, None)
        *splits, categorical, category_bitset = self.to_device_many(
            node_start, node_stop, n_left, feature, bin, missing_left, *categories
        )
        self.kernels.partitioning.apply_splits(
            rows.X_binned, rows.sample_indices, scratch, *splits, missing_bin, categorical, category_bitset
        )

    def node_values(self, stats, totals, n_values):
        """``(values, impurity, weight)`` of each node, host arrays of shapes (n_nodes, n_values), (n_nodes,)
        and (n_nodes,)."""
        n_nodes = totals.shape[0]
        totals, inv_scales = self.to_device_many(totals, stats.inv_scales)
        return tuple(self._fetched_outputs(
            [((n_nodes, n_values), np.float64), ((n_nodes,), np.float64), ((n_nodes,), np.float64)],
            lambda outputs: self.kernels.leaf_values.node_values(
                stats.criterion, totals, inv_scales, stats.regularization, *outputs
            ),
        ))

    def multiway_gains(
        self, hist, hist_rows, totals, feature_mask, bin_mapper, stats, min_samples_leaf, min_weight_leaf
    ):
        """Gain of splitting each node into one child per bin of each feature of ``feature_mask``
        (``common.multiway_gain``): host (n_nodes, n_features) float64, ``-inf`` where not allowed or not asked."""
        n_nodes = hist_rows.shape[0]
        hist_rows, totals, feature_mask, n_bins_non_missing, inv_scales, min_weight_leaf = self.to_device_many(
            hist_rows, totals, feature_mask, bin_mapper.n_bins_non_missing_, stats.inv_scales, min_weight_leaf
        )
        (gains,) = self._fetched_outputs(
            [((n_nodes, feature_mask.shape[1]), np.float64)],
            lambda outputs: self.kernels.multiway.multiway_gains(
                hist, hist_rows, totals, feature_mask, n_bins_non_missing, bin_mapper.missing_bin, stats.criterion,
                inv_scales, stats.regularization, min_samples_leaf, min_weight_leaf, *outputs,
            ),
        )
        return gains

    def c45_split_gains(self, hist, hist_rows, totals, feature_mask, bin_mapper, stats, min_objects):
        """C4.5's split of each node on each feature of ``feature_mask`` (``common.c45_split_gain``; entropy
        statistics): host (n_nodes, n_features) arrays ``(gain, gain_ratio, bin)``, float64, float64 and int32;
        ``-inf``, 0 and ``NO_SPLIT`` where no split is valid or none was asked for."""
        n_nodes, n_features = feature_mask.shape
        hist_rows, totals, feature_mask, is_categorical, n_bins_non_missing, inv_scales = self.to_device_many(
            hist_rows, totals, feature_mask, np.asarray(bin_mapper.is_categorical, dtype=bool),
            bin_mapper.n_bins_non_missing_, stats.inv_scales,
        )
        work = self.xp.empty((n_nodes * n_features, 2, totals.shape[1]), dtype=np.int64)
        return self._fetched_outputs(
            [((n_nodes, n_features), np.float64), ((n_nodes, n_features), np.float64),
             ((n_nodes, n_features), np.int32)],
            lambda outputs: self.kernels.multiway.c45_split_gains(
                hist, hist_rows, totals, feature_mask, is_categorical, n_bins_non_missing, bin_mapper.missing_bin,
                inv_scales, float(min_objects), work, *outputs,
            ),
        )

    def apply_multiway_splits(self, rows, node_start, node_stop, feature, n_children):
        """Sort each node's rows stably by the bin of its ``feature``: child ``c < n_children`` gets the rows of bin
        ``c``, then come those with a missing value, which stay at the node (``kernels.cpu.multiway``).

        Returns host (n_nodes, max(n_children) + 1) int64: the rows of each child, then of the rest.
        """
        n_parts = int(n_children.max()) + 1
        scratch = self.xp.empty_like(rows.sample_indices)
        node_start, node_stop, feature, n_children = self.to_device_many(node_start, node_stop, feature, n_children)
        (part_counts,) = self._fetched_outputs(
            [((node_start.shape[0], n_parts), np.int64)],
            lambda outputs: self.kernels.multiway.apply_multiway_splits(
                rows.X_binned, rows.sample_indices, scratch, node_start, node_stop, feature, n_children, *outputs
            ),
        )
        return part_counts

    def add_range_values(self, raw, score_idx, rows, boundaries, values):
        """``raw[rows[p], score_idx] += values[r]`` in place for every position ``p`` of range ``r``,
        ``[boundaries[r], boundaries[r + 1])``; ``raw`` and ``rows`` (int32) on the device, ``boundaries``
        (n_ranges + 1,) int64 and ``values`` (n_ranges,) float64 on the host."""
        self.kernels.leaf_values.add_range_values(raw, score_idx, rows, *self.to_device_many(boundaries, values))

    def add_leaf_values(self, raw, score_idx, rows, leaves, values):
        """``raw[rows, score_idx] += values[leaves]`` in place; ``raw`` (n_samples, n_scores), ``rows``
        (distinct, int32) and ``leaves`` (int64) on the device, ``values`` (n_nodes,) on the host."""
        values = self.to_device(np.ascontiguousarray(values))
        self.kernels.leaf_values.add_leaf_values(raw, score_idx, rows, leaves, values)

    def loss_gradients(self, loss, parameter, y, raw, sample_weight, out=None):
        """Weighted gradients and hessians on the device, each of the shape of ``raw``
        (n_samples, n_scores); ``y``, ``raw`` and ``sample_weight`` already there. ``out``: a
        ``(gradients, hessians)`` pair to fill (else new)."""
        gradients, hessians = (self.xp.empty_like(raw), self.xp.empty_like(raw)) if out is None else out
        self.kernels.gradients.loss_gradients(loss, parameter, y, raw, sample_weight, gradients, hessians)
        return gradients, hessians

    @in_dense_row_blocks
    def predict_raw(self, X, forest, baseline):
        """Raw scores (n_samples, n_scores), host: ``baseline`` (n_scores,) plus tree ``t``'s
        leaf values in column ``t % n_scores``, added in tree order. ``forest`` is a
        ``tree.CompleteForest`` or a ``tree.NodeForest``, whose ``raw_kernel`` is the kernel."""
        out = self.xp.empty((X.shape[0], baseline.shape[0]))
        out[...] = self.to_device(baseline)
        getattr(self.kernels.predict, forest.raw_kernel)(
            self.to_device(X), *self.to_device_many(*forest), out
        )
        return self.to_host(out)

    @in_dense_row_blocks
    def predict_leaves(self, X, tree_offsets, split_value, node_info, category_bitset):
        """Node (leaf, or ``MULTIWAY`` node where a row stops) of every row of ``X`` in every tree, host
        (n_samples, n_trees) int32; the trees' arrays as ``tree.pack_forest`` makes them."""
        leaves = self.xp.empty((X.shape[0], tree_offsets.shape[0]), dtype=np.int32)
        self.kernels.predict.predict_leaves(
            self.to_device(X), *self.to_device_many(tree_offsets, split_value, node_info, category_bitset), leaves
        )
        return self.to_host(leaves)

    @in_dense_row_blocks
    def predict_fractional(self, X, split_value, node_info, category_bitset, branch_share, value, stack_size):
        """Value of every row of ``X`` in one tree that shares a row with a missing value among the branches
        (``kernels.cpu.predict.predict_fractional``), host (n_samples, n_values) float64; ``stack_size``: the
        kernel's scratch entries per row. Rows go in blocks of ``FRACTIONAL_ROWS_PER_CALL``, which bounds the
        scratch."""
        out = np.empty((X.shape[0], value.shape[1]))
        tree_arrays = self.to_device_many(split_value, node_info, category_bitset, branch_share, value)
        n_block = min(X.shape[0], FRACTIONAL_ROWS_PER_CALL)
        stack_node = self.xp.empty((n_block, stack_size), dtype=np.int64)
        stack_weight = self.xp.empty((n_block, stack_size), dtype=np.float64)
        for first in range(0, X.shape[0], FRACTIONAL_ROWS_PER_CALL):
            rows = slice(first, first + FRACTIONAL_ROWS_PER_CALL)
            block_out = self.xp.empty((X[rows].shape[0], value.shape[1]), dtype=np.float64)
            n_rows = block_out.shape[0]
            self.kernels.predict.predict_fractional(
                self.to_device(np.ascontiguousarray(X[rows])), *tree_arrays, stack_node[:n_rows],
                stack_weight[:n_rows], block_out,
            )
            out[rows] = self.to_host(block_out)
        return out

    @in_dense_row_blocks
    def predict_leaves_with_surrogates(self, X, split_value, node_info, category_bitset, surrogates):
        """Node of every row of ``X`` in one tree with surrogate splits, host (n_samples,) int32;
        ``surrogates``: the tree's ``surrogate_*`` arrays in the order of ``kernels.cpu.predict``'s kernel."""
        leaves = self.xp.empty(X.shape[0], dtype=np.int32)
        self.kernels.predict.predict_leaves_with_surrogates(
            self.to_device(X), *self.to_device_many(split_value, node_info, category_bitset, *surrogates), leaves
        )
        return self.to_host(leaves)


def _categorical_features(is_categorical):
    """The kernels' ``categorical_features``: the increasing indices (int32) of the categorical features of
    ``is_categorical`` (n_features,) bool; the CUDA launchers size the categorical scans by their count."""
    return np.asarray(is_categorical).nonzero()[0].astype(np.int32)


def split_constraints(monotonic_cst, value_bounds, mask_shape):
    """The split kernels' ``monotonic_cst`` (n_features,) int64 and ``value_bounds`` (n_nodes, 2) float64
    from the given ones; ``None``: no constraint, arrays of no rows (``common.split_constraint``), with which
    the CUDA kernels compile without the constraint's test."""
    if value_bounds is None:
        return np.empty(0, dtype=np.int64), np.empty((0, 2))
    if monotonic_cst is None:
        monotonic_cst = np.zeros(mask_shape[1], dtype=np.int64)
    return np.asarray(monotonic_cst, dtype=np.int64), np.ascontiguousarray(value_bounds, dtype=np.float64)


# The CPU's ``grow_levels`` takes over once two levels' histograms fit in this many bytes: below, a level's
# host work costs more than its rows.
LEVEL_LOOP_BYTES = 16 * 1024 * 1024

KERNEL_STAGES = (
    "binning", "sampling", "histogram", "splitting", "partitioning", "leaf_values", "predict", "gradients",
    "fixed_point", "multiway", "contributions", "growth",
)


@functools.cache
def _kernel_modules(package):
    """The stage modules of ``gpuforest.kernels.<package>`` as one namespace (made once: ``get_backend`` runs at
    every fit)."""
    return SimpleNamespace(
        **{stage: importlib.import_module(f"gpuforest.kernels.{package}.{stage}") for stage in KERNEL_STAGES}
    )


class CPUBackend(Backend):
    """numba ``njit(parallel=True)`` kernels over numpy arrays."""

    shares_host_memory = True
    grows_levels = True
    grows_best_first = True

    def __init__(self):
        super().__init__("cpu", np, _kernel_modules("cpu"))

    def binned_rows(self, X_binned):
        """Both layouts: the row-wise histogram kernel reads a row's bins from one cache line of a C-ordered
        copy, the partition one feature of each row from a Fortran-ordered column (250k rows' column fits in
        a core's L2 cache: best-first 250k x 28, 2.5-3x faster partitions than from the C-ordered rows)."""
        return BinnedRows(X_binned=np.asfortranarray(X_binned), histogram_bins=np.ascontiguousarray(X_binned))

    def to_device(self, array):
        # Host and device are one memory: a numpy array passes as it is (a level makes dozens of these calls).
        return array if type(array) is np.ndarray else np.asarray(array)

    to_host = to_device

    def to_device_many(self, *arrays):
        return tuple([array if array is None or type(array) is np.ndarray else np.asarray(array) for array in arrays])

    def grow_levels(
        self, rows, nodes, scratch, hist_buffers, bin_mapper, stats, is_categorical, rules, features, n_values,
        next_node_idx, workspace=None,
    ):
        """Depth-wise growth of ``nodes`` and all their descendants in one call (``kernels.cpu.growth.grow_levels``,
        whose ``nodes``, ``rules``, ``features`` and ``hist_buffers`` these are).

        ``scratch``: working memory of the shape of ``rows.sample_indices``; ``features[-1]``: random
        thresholds; ``workspace``: the fit's (the CUDA backend keeps its level buffers there). Returns the
        packed records of the grown nodes and splits.
        """
        n_threads = get_num_threads()
        return grow_levels(
            nodes, *self._growth_arrays(rows, scratch, bin_mapper, stats, is_categorical, features[-1]), rules,
            features, hist_buffers, n_values, CATEGORY_WORDS, BLOCKS_PER_THREAD * n_threads, n_threads,
            next_node_idx,
        )

    def grow_best_first(
        self, rows, roots, scratch, pool, heaps, bin_mapper, stats, is_categorical, rules, features, n_values,
        growth, next_node_idx,
    ):
        """Best-first growth of the trees of ``roots`` in one call (``kernels.cpu.growth.grow_best_first``, whose
        ``pool``, ``heaps`` and other arguments these are, ``growth`` its ``(max_leaf_nodes, exact,
        keep_histograms, table_capacity)``); ``grow_levels``' packed records."""
        n_threads = get_num_threads()
        return grow_best_first(
            roots, *self._growth_arrays(rows, scratch, bin_mapper, stats, is_categorical, features[-1]), rules,
            features, pool, heaps, n_values, CATEGORY_WORDS, BLOCKS_PER_THREAD * n_threads, n_threads, *growth,
            next_node_idx,
        )

    def _growth_arrays(self, rows, scratch, bin_mapper, stats, is_categorical, random_thresholds):
        """The ``rows`` and ``search`` tuples of ``kernels.cpu.growth``."""
        search = self._search_arrays(bin_mapper, stats, is_categorical, random_thresholds)
        constant_hessian = None if rows.constant_hessian is None else np.int64(rows.constant_hessian)
        row_arrays = (
            rows.X_binned, rows.histogram_bins, rows.sample_indices, scratch, rows.sample_counts,
            None if rows.unit_counts else rows.sample_counts, rows.row_slot, rows.row_stats, rows.stats_stride,
            constant_hessian, rows.count_bits,
        )
        return row_arrays, search


@contextlib.contextmanager
def python_levels():
    """Every level through the grower's own loop (``grows_levels`` off on both backends), as the first levels of
    a fit too large for the backend's loop go: the warm-ups fit both ways, to take both loops' kernels."""
    backends = (CPUBackend, CUDABackend)
    previous = [backend.grows_levels for backend in backends]
    for backend in backends:
        backend.grows_levels = False
    try:
        yield
    finally:
        for backend, grows_levels in zip(backends, previous):
            backend.grows_levels = grows_levels


class CUDABackend(Backend):
    """numba.cuda kernels over CuPy arrays (numpy arrays under numba's CUDA simulator)."""

    grows_levels = True

    def __init__(self):
        from numba import config

        if config.ENABLE_CUDASIM:
            xp, self.device_array = SimulatedDevice(), SimulatedDeviceArray
        else:
            import cupy as xp

            self.device_array = xp.ndarray
            self.out_of_memory_errors = (MemoryError, xp.cuda.memory.OutOfMemoryError)
        super().__init__("cuda", xp, _kernel_modules("cuda"))

    def to_device(self, array):
        if not isinstance(array, self.device_array):
            count("host_to_device")
        return self.xp.asarray(array)

    def to_host(self, array):
        if not isinstance(array, self.device_array):
            return np.asarray(array)
        count("device_to_host")
        return array.get()

    def to_device_many(self, *arrays):
        """``to_device`` of each array, the host ones (numpy arrays and scalars) in one copy."""
        on_host = [
            index for index, array in enumerate(arrays)
            if isinstance(array, (np.ndarray, np.generic, float)) and not isinstance(array, self.device_array)
        ]
        if len(on_host) < 2:
            return super().to_device_many(*arrays)
        host = [np.asarray(arrays[index]) for index in on_host]
        layout = PackedLayout([(array.shape, array.dtype) for array in host])
        device = list(arrays)
        for index, view in zip(on_host, layout.views(self.to_device(layout.pack(host)))):
            device[index] = view
        return tuple(device)

    def _fetched_outputs(self, specs, launch):
        """Outputs allocated on the device as views of one buffer, brought home in one copy."""
        layout = PackedLayout(specs)
        buffer = self.xp.empty(layout.n_bytes, dtype=np.uint8)
        launch(layout.views(buffer))
        return layout.views(self.to_host(buffer))

    def grows_levels_for(self, n_bins, n_slots, categorical):
        """The device's levels (``kernels.cuda.growth``): numeric features, and a phase-1 work histogram in
        shared memory."""
        splitting = self.kernels.splitting
        return (
            self.grows_levels and not categorical and splitting.work_in_shared(splitting.scan_threads(n_bins), n_slots)
        )

    def level_loop_bytes(self):
        """Half the device's free memory."""
        return 0.5 * self.free_memory_bytes()

    def grow_levels(
        self, rows, nodes, scratch, hist_buffers, bin_mapper, stats, is_categorical, rules, features, n_values,
        next_node_idx, workspace=None,
    ):
        """``CPUBackend.grow_levels`` on the device, a level's bookkeeping there (``kernels.cuda.growth``)."""
        return self.kernels.growth.grow_levels(
            self, rows, nodes, scratch, hist_buffers,
            self._search_arrays(bin_mapper, stats, is_categorical, features[-1]), rules, features, n_values,
            CATEGORY_WORDS, next_node_idx, {} if workspace is None else workspace,
        )

    def free_memory_bytes(self):
        if isinstance(self.xp, SimulatedDevice):
            return super().free_memory_bytes()
        free, _ = self.xp.cuda.runtime.memGetInfo()
        return free + self.xp.get_default_memory_pool().free_bytes()


class SimulatedDeviceArray(np.ndarray):
    """Device memory under numba's CUDA simulator: a numpy array the backend tells from a host one.

    As with CuPy, a reduction gives a 0-d array, ``get`` copies to the host,
    and a Python number made of a device array (``bool``, ``int``, ``float``,
    ``item``) is a synchronising copy to the host, counted (``Backend.counting``).
    """

    def __array_wrap__(self, array, context=None, return_scalar=False):
        return super().__array_wrap__(array, context, False)

    def get(self):
        return np.array(self.view(np.ndarray))

    def _to_host_number(self, convert):
        count("device_to_host")
        return convert(self.view(np.ndarray))

    def __bool__(self):
        return self._to_host_number(bool)

    def __int__(self):
        return self._to_host_number(int)

    def __float__(self):
        return self._to_host_number(float)

    def item(self, *args):
        return self._to_host_number(lambda array: array.item(*args))

    def max(self, axis=None, out=None, keepdims=False):  # as CuPy's: no ``initial`` or ``where``
        return super().max(axis, out, keepdims)

    def min(self, axis=None, out=None, keepdims=False):
        return super().min(axis, out, keepdims)


class SimulatedDevice:
    """numpy in CuPy's place under numba's CUDA simulator: the arrays it makes are ``SimulatedDeviceArray``,
    and ``asarray`` copies, as a copy to the device does."""

    _MAKERS = frozenset({
        "arange", "concatenate", "empty", "empty_like", "flatnonzero", "full", "ones", "stack", "tile", "zeros",
    })

    def __getattr__(self, name):
        function = getattr(np, name)
        if name not in self._MAKERS:
            return function
        return lambda *args, **kwargs: function(*args, **kwargs).view(SimulatedDeviceArray)

    @staticmethod
    def asarray(array, dtype=None):
        if isinstance(array, SimulatedDeviceArray):
            return array if dtype is None else array.astype(dtype, copy=False)
        return np.array(array, dtype=dtype).view(SimulatedDeviceArray)


def cuda_available():
    """Whether CUDA kernels can run: numba's simulator, or CuPy with a device."""
    from numba import config

    return config.ENABLE_CUDASIM or _cupy_has_a_device()


@functools.cache
def _cupy_has_a_device():
    """Whether CuPy is installed and sees a device: asked once per process (a failed import is looked for
    again at each attempt, which a fit's ``get_backend`` would pay)."""
    try:
        import cupy
    except ImportError:
        return False
    try:
        return cupy.cuda.runtime.getDeviceCount() > 0
    except cupy.cuda.runtime.CUDARuntimeError:
        return False


def get_backend(device):
    """The backend for ``device`` in ``{"auto", "cpu", "cuda"}``.

    ``"auto"`` is the CUDA backend on a machine with a usable GPU (not under
    the simulator, which is for tests), else the CPU backend.
    """
    from numba import config

    if device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, got {device!r}.")
    if device == "cuda":
        if not cuda_available():
            raise ValueError(
                "device='cuda' needs CuPy and a usable CUDA GPU (pip install 'gpuforest[cuda]'); "
                "none was found. Use device='cpu' or device='auto'."
            )
        return CUDABackend()
    if device == "auto" and not config.ENABLE_CUDASIM and cuda_available():
        return CUDABackend()
    return CPUBackend()


def members_device(members, device):
    """``device_`` of an ensemble of fitted ``members``: the backend they ran on.

    The first member's ``device_`` (a gpuforest estimator's); ``"cpu"`` for other
    estimators, which run on the CPU; the backend of ``device`` without members.
    """
    if not members:
        return get_backend(device).name
    return getattr(members[0], "device_", "cpu")
