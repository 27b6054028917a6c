"""Backends: the plain-array operations the grower needs, and ``get_backend``.

A backend owns allocation and kernel launches; host code (grower, estimators)
calls only these methods and never branches on the device beyond choosing the
backend here. ``CPUBackend`` runs the numba ``njit`` kernels of
``gpuforest.kernels.cpu``; the CUDA backend will offer the same methods over
CuPy arrays.
"""

from dataclasses import dataclass

import numpy as np

from .kernels.cpu import binning, histogram, leaf_values, partitioning, predict, sampling, splitting

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
    """

    gain: np.ndarray
    feature: np.ndarray
    bin: np.ndarray
    missing_left: np.ndarray
    left_totals: np.ndarray
    next_bin: np.ndarray

    @classmethod
    def empty(cls, n_nodes, n_slots):
        return cls(
            gain=np.empty(n_nodes),
            feature=np.empty(n_nodes, dtype=np.int32),
            bin=np.empty(n_nodes, dtype=np.int32),
            missing_left=np.empty(n_nodes, dtype=bool),
            left_totals=np.empty((n_nodes, n_slots), dtype=np.int64),
            next_bin=np.empty(n_nodes, dtype=np.int32),
        )

    def outputs(self):
        return self.gain, self.feature, self.bin, self.missing_left, self.left_totals, self.next_bin


@dataclass
class RowData:
    """What the kernels read about the training rows of a batch of trees.

    Attributes
    ----------
    X_binned : ndarray of shape (n_samples, n_features), dtype uint8, Fortran order
    sample_indices : ndarray of shape (n_entries,), dtype int32
        The rows of every tree; each node owns a contiguous range.
    sample_counts : ndarray of shape (n_trees, n_samples), dtype int32
        How many times each row is drawn for each tree.
    row_slot, row_stats : see ``statistics.RowStatistics``.
    """

    X_binned: np.ndarray
    sample_indices: np.ndarray
    sample_counts: np.ndarray
    row_slot: np.ndarray
    row_stats: np.ndarray


class CPUBackend:
    """numba ``njit(parallel=True)`` kernels over numpy arrays."""

    name = "cpu"
    xp = np

    def map_to_bins(self, X, bin_thresholds, n_thresholds, missing_bin):
        X_binned = np.empty(X.shape, dtype=np.uint8, order="F")
        binning.map_to_bins(X, bin_thresholds, n_thresholds, missing_bin, X_binned)
        return X_binned

    def feature_masks(self, seed, node_tree, node_idx, n_features, max_features):
        masks = np.empty((node_tree.shape[0], n_features), dtype=bool)
        sampling.feature_masks(seed, node_tree, node_idx, n_features, max_features, masks)
        return masks

    def node_totals(self, rows, node_start, node_stop, node_tree, n_slots):
        totals = np.empty((node_start.shape[0], n_slots), dtype=np.int64)
        histogram.node_totals(
            rows.sample_indices, node_start, node_stop, node_tree, rows.sample_counts, rows.row_slot,
            rows.row_stats, totals,
        )
        return totals

    def build_histograms(self, rows, node_start, node_stop, node_tree, n_bins, n_slots):
        n_features = rows.X_binned.shape[1]
        hist = np.empty((node_start.shape[0], n_features, n_bins, n_slots), dtype=np.int64)
        histogram.build_histograms(
            rows.X_binned, rows.sample_indices, node_start, node_stop, node_tree, rows.sample_counts,
            rows.row_slot, rows.row_stats, hist,
        )
        return hist

    def subtract_histograms(self, parent_hist, child_hist):
        sibling_hist = np.empty_like(parent_hist)
        histogram.subtract_histograms(parent_hist, child_hist, sibling_hist)
        return sibling_hist

    def find_best_splits_from_histograms(
        self, hist, hist_rows, totals, feature_mask, bin_mapper, stats, min_samples_leaf, min_weight_leaf
    ):
        result = SplitResult.empty(hist_rows.shape[0], totals.shape[1])
        splitting.find_best_splits_from_histograms(
            hist, hist_rows, totals, feature_mask, bin_mapper.n_bins_non_missing_, bin_mapper.missing_bin,
            stats.criterion, stats.inv_scales, stats.l2_regularization, min_samples_leaf, min_weight_leaf,
            *result.outputs(),
        )
        return result

    def find_best_splits_from_rows(
        self, rows, node_start, node_stop, node_tree, totals, feature_mask, bin_mapper, stats, min_samples_leaf,
        min_weight_leaf,
    ):
        result = SplitResult.empty(node_start.shape[0], totals.shape[1])
        splitting.find_best_splits_from_rows(
            rows.X_binned, rows.sample_indices, node_start, node_stop, node_tree, rows.sample_counts,
            rows.row_slot, rows.row_stats, totals, feature_mask, bin_mapper.missing_bin, stats.criterion,
            stats.inv_scales, stats.l2_regularization, min_samples_leaf, min_weight_leaf, *result.outputs(),
        )
        return result

    def apply_splits(self, rows, node_start, node_stop, n_left, feature, bin, missing_left, missing_bin):
        scratch = np.empty_like(rows.sample_indices)
        partitioning.apply_splits(
            rows.X_binned, rows.sample_indices, scratch, node_start, node_stop, n_left, feature, bin,
            missing_left, missing_bin,
        )

    def node_values(self, stats, totals, n_values):
        n_nodes = totals.shape[0]
        values = np.empty((n_nodes, n_values))
        impurity = np.empty(n_nodes)
        weight = np.empty(n_nodes)
        leaf_values.node_values(
            stats.criterion, totals, stats.inv_scales, stats.l2_regularization, values, impurity, weight
        )
        return values, impurity, weight

    def predict_leaves(self, X, tree_offsets, threshold, node_info):
        leaves = np.empty((X.shape[0], tree_offsets.shape[0]), dtype=np.int32)
        predict.predict_leaves(X, tree_offsets, threshold, node_info, leaves)
        return leaves

    def to_host(self, array):
        return np.asarray(array)


def cuda_device_count():
    """Number of usable CUDA devices (0 without CuPy or a driver)."""
    try:
        import cupy
    except ImportError:
        return 0
    try:
        return cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError:
        return 0


def get_backend(device):
    """The backend for ``device`` in ``{"auto", "cpu", "cuda"}``."""
    if device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, got {device!r}.")
    if device == "cpu":
        return CPUBackend()
    if device == "cuda" and cuda_device_count() == 0:
        raise ValueError(
            "device='cuda' needs CuPy and a usable CUDA GPU (pip install 'gpuforest[cuda]'); "
            "none was found. Use device='cpu' or device='auto'."
        )
    if device == "cuda":
        raise NotImplementedError("The CUDA backend is not built yet; use device='cpu' or 'auto'.")
    # "auto": the CPU until the CUDA backend exists.
    return CPUBackend()
