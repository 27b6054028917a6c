"""Distributed training on Dask, equal to a local fit.

The estimators here take dask arrays or dataframes and grow, on a Dask
cluster, the very trees the local estimators grow (``to_local()`` returns
the plain estimator; every tree array equal to a local fit's). They reuse the
local fit recipe and the shared ``TreeGrower`` unchanged; only the operations
that read training rows run on the workers, through ``DaskBackend``:

- **Data.** X's row partitions are computed on the workers from their graph
  (never scattered) and binned there by a pure ``_bin_partition`` task with
  bin thresholds fitted on the client from exactly the rows a local fit's
  ``BinMapper`` reads (its subsample is keyed by global row id). The targets
  and weights (one value per row) come to the client, where the local code
  makes the fixed-point statistics; each partition's slice goes with its tasks.
- **Randomness keyed by global ids.** A partition's bootstrap counts are the
  columns of its global rows of ``bootstrap_counts`` (seed, tree, draw); feature
  subsets and random thresholds are drawn on the client by (seed, tree, node).
- **Boosting.** The raw scores and each round's gradients stay on the client
  (the local loss code); a round's trees grow together, and each row's leaf
  comes from ``Tree.apply`` on X's partitions.
- **Rows by routing, not by state.** The grower numbers each node's rows as a
  range of positions (children: ``[start, start + n_left)`` and the rest).
  ``DaskBackend.apply_splits`` only records the level's splits; every task
  routes its partition's rows through the records so far to find each row's
  node (``_route_rows``), so tasks are pure and a lost worker's share is
  recomputed from lineage, with an identical result.
- **Exact sums.** Histograms and node totals are int64 fixed point: summed by
  a tree reduction of fixed fan-in (``REDUCTION_FAN_IN``) they are the local
  ones exactly, whatever the partitioning; the split search then runs on the
  client with the local kernels and tie-breaks.

Per level this is one Dask round trip for the histograms of the smaller
children (every node gets a histogram: the local grower scans small nodes
from their rows instead, which counts the same sums). A forest's batch of
trees grows level by level together.
See docs/guide-dask.md.
"""

import functools
import inspect
from dataclasses import dataclass, replace

import numpy as np
from numba import njit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from . import boosting, decision_tree, forest
from .backend import CPUBackend, RowData
from .binning import BinMapper
from .decision_tree import encode_classes, growth_params, validate_fit_data, x_dtype
from .fitting import random_seed, validate_params
from .grower import TreeGrower
from .kernels.common import FROM_ROWS, PURPOSE_BINNING, bootstrap_row, category_goes_left, goes_left
from .kernels.cpu.sampling import uniform_per_row
from .pruning import prunes
from .statistics import classification_statistics, newton_statistics, regression_statistics

# Partial sums combined per reduction task: a tree of depth log_8(n_partitions) (one task for up to 8
# partitions: each level of the tree is one more hop through the scheduler, about 8 ms).
REDUCTION_FAN_IN = 8
# The rows of a split search of histograms alone (``DaskBackend.find_best_splits``): none, of the kernels' types.
NO_ROWS = RowData(
    X_binned=np.empty((0, 0), dtype=np.uint8), histogram_bins=np.empty((0, 0), dtype=np.uint8),
    sample_indices=np.empty(0, dtype=np.int32), sample_counts=np.empty((0, 0), dtype=np.int32),
    row_slot=np.empty(0, dtype=np.int32), row_stats=np.empty((0, 0), dtype=np.int64),
)


# --- the work of the workers: pure functions of a partition ---------------------------------------------


def _one_thread(task):
    """``task`` with numba's kernels on one thread: a worker runs a task per thread, and the partitions are
    the parallel work (parallel kernels in every task oversubscribe the cores: measured, 40 ms per kernel
    launch instead of 0.1 ms on a loaded 2-core machine)."""

    @functools.wraps(task)
    def run(*args, **kwargs):
        with forest._numba_threads(1):
            return task(*args, **kwargs)

    return run


@_one_thread
def _bin_partition(X_block, bin_mapper):
    """``BinnedRows`` of one partition of X (n_rows, n_features), binned by the fitted ``bin_mapper``."""
    X_block = np.ascontiguousarray(X_block, dtype=x_dtype(X_block))
    if np.isinf(X_block).any():
        raise ValueError("Input X contains infinity; missing values are NaN.")
    backend = CPUBackend()
    return backend.binned_rows(bin_mapper.transform(X_block, backend))


def _take_rows(X_block, rows):
    """Rows ``rows`` (local indices) of one partition of X, in the float dtype a local fit validates X to."""
    X_block = np.asarray(X_block)
    return X_block[rows].astype(x_dtype(X_block), copy=False)


@dataclass
class _PartitionRows:
    """A partition's rows of a batch of trees: the ``RowData`` of its binned rows (local row ids) and its
    entries, each tree's drawn rows of positive weight, tree after tree.

    Attributes
    ----------
    rows : RowData
        ``sample_indices`` unused (the entries are laid out per query).
    entry_rows : ndarray of shape (n_entries,), dtype int32
        Local row of each entry.
    entry_tree : ndarray of shape (n_entries,), dtype int64
        Tree (in the batch) of each entry.
    tree_entries : ndarray of shape (n_trees,), dtype int64
        Entries per tree.
    routed : tuple ``(n_levels, entry_start, entry_stop)`` or None
        A cache on the worker holding the partition: the entries' ranges after the first ``n_levels``
        levels of splits (``_node_rows``), so that a level routes through its last splits only.
    """

    rows: RowData
    entry_rows: np.ndarray
    entry_tree: np.ndarray
    tree_entries: np.ndarray
    routed: tuple | None = None


@_one_thread
def _partition_rows(binned, stats, positive, offset, n_samples, n_trees, bootstrap):
    """The ``_PartitionRows`` of a batch of ``n_trees`` trees on a partition.

    Parameters
    ----------
    binned : backend.BinnedRows
    stats : statistics.RowStatistics
        The partition's rows of the fit's statistics.
    positive : ndarray of shape (n_rows,), dtype bool
        Rows of positive weight.
    offset : int
        Global index of the partition's first row.
    n_samples : int
        Rows of the whole training set.
    bootstrap : tuple ``(seed, first_tree, n_draws)`` or None
        Bootstrap draws (``Backend.bootstrap_counts`` of the whole training set, the partition's columns:
        ``_bootstrap_counts_of_rows``), or None: every row once.
    """
    n_rows = positive.shape[0]
    if bootstrap is None:
        counts = np.ones((n_trees, n_rows), dtype=np.int32)
    else:
        counts = np.empty((n_trees, n_rows), dtype=np.int32)
        _bootstrap_counts_of_rows(*bootstrap, n_samples, offset, counts)
    drawn = (counts > 0) & positive[None, :]
    entry_tree, entry_rows = np.nonzero(drawn)
    rows = CPUBackend().row_data(
        binned, np.empty(0, dtype=np.int32), counts, stats, unit_counts=None if bootstrap else True
    )
    return _PartitionRows(rows, entry_rows.astype(np.int32), entry_tree, drawn.sum(axis=1))


@njit(cache=True)
def _bootstrap_counts_of_rows(seed, first_tree, n_draws, n_samples, offset, out):
    """``kernels.cpu.sampling.bootstrap_counts`` of the global rows ``offset`` to ``offset + out.shape[1] - 1``
    of ``n_samples``: every draw made (keyed by seed, tree and draw), those of other rows skipped."""
    n_trees, n_rows = out.shape
    for tree in range(n_trees):
        out[tree] = 0
        for draw in range(n_draws):
            row = bootstrap_row(seed, first_tree + tree, draw, n_samples) - offset
            if 0 <= row < n_rows:
                out[tree, row] += 1


@njit(cache=True)
def _route_rows(X_binned, entry_rows, entry_start, entry_stop, split_start, split_stop, split_n_left, feature,
                split_bin, missing_left, missing_bin, categorical, category_bitset):
    """Move each entry whose node (``[entry_start, entry_stop)``, a range of the grower's positions) splits
    at this level to its child's range, as the grower's ``apply_splits`` does.

    ``split_start`` is increasing over the level's split nodes (disjoint ranges, hence distinct starts).
    """
    n_splits = split_start.shape[0]
    for entry in range(entry_rows.shape[0]):
        k = np.searchsorted(split_start, entry_start[entry])
        if k == n_splits or split_start[k] != entry_start[entry] or split_stop[k] != entry_stop[entry]:
            continue
        bin_idx = X_binned[entry_rows[entry], feature[k]]
        if categorical[k]:
            left = category_goes_left(bin_idx, category_bitset[k], missing_left[k], missing_bin)
        else:
            left = goes_left(bin_idx, split_bin[k], missing_left[k], missing_bin)
        if left:
            entry_stop[entry] = split_start[k] + split_n_left[k]
        else:
            entry_start[entry] = split_start[k] + split_n_left[k]


def _node_rows(part, tree_offsets, levels, missing_bin, node_start, node_stop):
    """A ``RowData`` of the partition's entries of the queried nodes, node after node, and each node's
    ``(start, stop)`` in its ``sample_indices``.

    Every entry starts at its tree's root (``tree_offsets``) and follows the recorded ``levels`` of splits;
    node ``k`` of the query is the range ``[node_start[k], node_stop[k])`` of the grower's positions.
    """
    # A growth only appends levels: the cached ranges are those after its first levels.
    if part.routed is None or part.routed[0] > len(levels):
        part.routed = (0, tree_offsets[part.entry_tree].astype(np.int64), tree_offsets[part.entry_tree + 1])
    n_routed, entry_start, entry_stop = part.routed
    entry_start, entry_stop = entry_start.copy(), entry_stop.astype(np.int64)
    for level in levels[n_routed:]:
        _route_rows(part.rows.X_binned, part.entry_rows, entry_start, entry_stop, *level[:6], missing_bin,
                    *level[6:])
    part.routed = (len(levels), entry_start, entry_stop)
    # Empty ranges first among equal starts: the last range starting at or before an entry's start is its node.
    order = np.lexsort((node_stop, node_start))
    at = np.searchsorted(node_start[order], entry_start, side="right") - 1
    node = order[np.maximum(at, 0)]
    mine = (at >= 0) & (node_start[node] == entry_start) & (node_stop[node] == entry_stop)
    node = node[mine]
    layout = np.argsort(node, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(node, minlength=node_start.shape[0]))]).astype(np.int64)
    rows = replace(part.rows, sample_indices=part.entry_rows[mine][layout])
    return rows, bounds[:-1], bounds[1:]


@_one_thread
def _partition_totals(part, tree_offsets, levels, missing_bin, node_start, node_stop, node_tree, n_slots):
    """The partition's share of ``Backend.node_totals`` of the queried nodes: (n_nodes, n_slots) int64."""
    rows, start, stop = _node_rows(part, tree_offsets, levels, missing_bin, node_start, node_stop)
    return CPUBackend().node_totals(rows, start, stop, node_tree, n_slots)


@_one_thread
def _partition_histograms(
    part, tree_offsets, levels, missing_bin, node_start, node_stop, node_tree, n_bins, n_slots, feature_mask,
):
    """The partition's share of ``Backend.build_histograms`` of the queried nodes, only the (node, feature)
    pairs of ``feature_mask`` (n_nodes, n_features): (n_pairs, n_bins, n_slots) int64, in ``feature_mask``'s
    order (a forest's nodes draw a few features each: the rest is not sent)."""
    rows, start, stop = _node_rows(part, tree_offsets, levels, missing_bin, node_start, node_stop)
    hist = CPUBackend().build_histograms(rows, start, stop, node_tree, n_bins, n_slots, feature_mask)
    return hist[feature_mask]


def _sum_arrays(*arrays):
    """The sum of integer ``arrays`` (exact, so the same in any grouping)."""
    total = arrays[0].copy()
    for array in arrays[1:]:
        total += array
    return total


def _entry_counts(part):
    """A partition's entries per tree (``_PartitionRows.tree_entries``)."""
    return part.tree_entries


# --- the client's side ----------------------------------------------------------------------------------


@dataclass
class DistributedRows:
    """A batch's training rows as the grower sees them, on the workers.

    Attributes
    ----------
    X_binned : ndarray of shape (n_samples, n_features)
        Only its shape is read (a zero-strided stand-in: the bins are in the workers' partitions).
    parts : list of distributed.Future
        Each partition's ``_PartitionRows``.
    tree_offsets : ndarray of shape (n_trees + 1,), dtype int64
        The grower's ``tree_offsets``: tree ``t``'s root owns positions ``[tree_offsets[t], tree_offsets[t + 1])``.
    levels : list of tuple
        The splits recorded by ``DaskBackend.apply_splits``, level after level.
    """

    X_binned: np.ndarray
    parts: list
    tree_offsets: np.ndarray
    levels: list


class DaskBackend(CPUBackend):
    """The CPU backend whose row operations run on the partitions of a Dask cluster, their results summed.

    Histograms and node totals are built by one task per partition and summed by a tree reduction;
    ``find_best_splits`` searches the summed histograms of the nodes it would scan by their rows;
    ``apply_splits`` records the splits that the next tasks route the rows by. Everything else is the CPU
    backend's, on the client.

    Parameters
    ----------
    client : distributed.Client
    missing_bin : int
        The bin mapper's ``missing_bin``.
    timeout : float or None
        Seconds a level's result may take before the fit fails with ``TimeoutError``.
    """

    # Its rows are on the workers: every level goes through the backend's operations.
    grows_levels = False

    def __init__(self, client, missing_bin, timeout):
        super().__init__()
        self.client = client
        self.missing_bin = missing_bin
        self.timeout = timeout

    def _summed(self, rows, task, *args):
        """``task(part, tree_offsets, levels, missing_bin, *args)`` of every partition, summed on the workers."""
        partials = [
            self.client.submit(task, part, rows.tree_offsets, rows.levels, self.missing_bin, *args, pure=False)
            for part in rows.parts
        ]
        while len(partials) > 1:
            partials = [
                self.client.submit(_sum_arrays, *partials[i:i + REDUCTION_FAN_IN], pure=False)
                for i in range(0, len(partials), REDUCTION_FAN_IN)
            ]
        return result_within(partials[0], self.timeout)

    def node_totals(self, rows, node_start, node_stop, node_tree, n_slots):
        return self._summed(rows, _partition_totals, node_start, node_stop, node_tree, n_slots)

    def build_histograms(
        self, rows, node_start, node_stop, node_tree, n_bins, n_slots, feature_mask, out=None, out_rows=None,
    ):
        pairs = self._summed(rows, _partition_histograms, node_start, node_stop, node_tree, n_bins, n_slots,
                             feature_mask)
        if out is None:
            out = np.empty((node_start.shape[0], feature_mask.shape[1], n_bins, n_slots), dtype=np.int64)
        node_rows = np.arange(node_start.shape[0]) if out_rows is None else np.asarray(out_rows)
        nodes, features = np.nonzero(feature_mask)
        out[node_rows[nodes], features] = pairs
        return out

    def find_best_splits(
        self, rows, hist, hist_rows, node_start, node_stop, node_tree, totals, feature_mask, is_categorical,
        bin_mapper, stats, min_samples_leaf, min_weight_leaf, threshold_draws=None, monotonic_cst=None,
        value_bounds=None,
    ):
        """The nodes ``FROM_ROWS`` searched in their histograms, built from their rows on the workers (the scan
        of their rows counts the same integer sums), after those of the level."""
        from_rows = np.flatnonzero(hist_rows == FROM_ROWS)
        if from_rows.size:
            row_hist = self.build_histograms(
                rows, node_start[from_rows], node_stop[from_rows], node_tree[from_rows], bin_mapper.n_bins,
                stats.n_slots, feature_mask[from_rows],
            )
            hist_rows = hist_rows.copy()
            hist_rows[from_rows] = (0 if hist is None else hist.shape[0]) + np.arange(from_rows.size)
            hist = row_hist if hist is None else np.concatenate([hist, row_hist])
        return super().find_best_splits(
            NO_ROWS, hist, hist_rows, node_start, node_stop, node_tree, totals, feature_mask, is_categorical,
            bin_mapper, stats, min_samples_leaf, min_weight_leaf, threshold_draws=threshold_draws,
            monotonic_cst=monotonic_cst, value_bounds=value_bounds,
        )

    def apply_splits(
        self, rows, node_start, node_stop, n_left, feature, bin, missing_left, missing_bin, categorical,
        category_bitset, scratch=None,
    ):
        """Record the level's splits, sorted by node start (``_route_rows``); the workers partition their
        rows, so ``scratch`` goes unused."""
        order = np.argsort(node_start, kind="stable")
        rows.levels.append(tuple(
            np.ascontiguousarray(array[order]) for array in (
                np.asarray(node_start, dtype=np.int64), np.asarray(node_stop, dtype=np.int64),
                np.asarray(n_left, dtype=np.int64), feature, bin, missing_left,
            )
        ) + (np.ascontiguousarray(categorical[order]), np.ascontiguousarray(category_bitset[order])))


def result_within(future, timeout):
    """``future.result(timeout)``, a ``TimeoutError`` that names the fit's ``timeout`` when it runs out."""
    try:
        return future.result(timeout=timeout)
    except TimeoutError as error:
        raise TimeoutError(
            f"A distributed fit step took longer than timeout={timeout} seconds; the cluster may be stuck or "
            "short of workers."
        ) from error


def get_client(client):
    """``client``, or the default client; a ``ValueError`` for a closed one."""
    from distributed import default_client

    if client is None:
        client = default_client()
    if client.status != "running":
        raise ValueError(f"The Dask client is {client.status}, not running: pass an open client.")
    return client


def _is_frame(data):
    import dask.dataframe as dd

    return isinstance(data, dd.DataFrame)


def _as_dask_array(data, name):
    """A dask dataframe or series as a dask array with known chunk sizes; a dask array as it is."""
    import dask.array as da
    import dask.dataframe as dd

    if isinstance(data, (dd.DataFrame, dd.Series)):
        return data.to_dask_array(lengths=True)
    if not isinstance(data, da.Array):
        raise TypeError(f"{name} must be a dask array or dataframe, got {type(data).__name__}.")
    return data


class TrainingData:
    """A fit's training data on the cluster: X's partitions binned on the workers, y and weights on the client.

    Parameters
    ----------
    client : distributed.Client
    X : dask array of shape (n_samples, n_features), or dask dataframe
        Chunked by rows only (columns are joined in one chunk), every chunk's length known.
    y : dask array of shape (n_samples,), or dask series
        Chunked as X's rows.
    sample_weight : dask array of shape (n_samples,), or None
        Chunked as X's rows.
    timeout : float or None

    Attributes
    ----------
    X_parts : list of distributed.Future
        Each row partition of X.
    offsets : ndarray of shape (n_partitions + 1,), dtype int64
        Global index of each partition's first row (and the number of rows last).
    y, sample_weight : ndarray of shape (n_samples,)
    """

    def __init__(self, client, X, y, sample_weight, timeout):
        self.client, self.timeout = client, timeout
        self.columns = list(X.columns) if _is_frame(X) else None
        X, y = _as_dask_array(X, "X"), _as_dask_array(y, "y")
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D, got {X.ndim} dimension(s).")
        if y.ndim != 1:
            raise ValueError(
                f"gpuforest.dask fits one output: y must be 1-D, got {y.ndim} dimension(s) (several outputs: "
                "fit the local estimator on the gathered data)."
            )
        if any(np.isnan(size) for size in X.chunks[0]):
            raise ValueError("X has chunks of unknown length: call X.compute_chunk_sizes() (or lengths=True) first.")
        X = X.rechunk({1: -1})
        columns = [("y", y)] + ([] if sample_weight is None else [("sample_weight", sample_weight)])
        for name, column in columns:
            if column.chunks[0] != X.chunks[0]:
                raise ValueError(
                    f"{name} must be partitioned as the rows of X: chunks {column.chunks[0]} and {X.chunks[0]}."
                )
        self.offsets = np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.int64)
        self.X_parts = client.compute(list(X.to_delayed().ravel()))
        self.y = result_within(client.compute(y), timeout)
        self.sample_weight = None if sample_weight is None else result_within(client.compute(sample_weight), timeout)

    @property
    def n_samples(self):
        return int(self.offsets[-1])

    def head(self):
        """The first partition with rows, as the local estimator's validation takes it (a pandas frame with
        X's columns for a dataframe)."""
        first = int(np.flatnonzero(np.diff(self.offsets))[0])
        block = result_within(self.X_parts[first], self.timeout)
        if self.columns is not None:
            import pandas as pd

            block = pd.DataFrame(block, columns=self.columns)
        return block, first

    def take(self, rows):
        """X's rows ``rows`` (global indices, increasing), gathered to the client."""
        partition = np.searchsorted(self.offsets, rows, side="right") - 1
        blocks = [
            self.client.submit(_take_rows, self.X_parts[p], rows[partition == p] - self.offsets[p])
            for p in np.unique(partition)
        ]
        return np.concatenate([result_within(block, self.timeout) for block in blocks])

    def fit_bin_mapper(self, estimator, positive, seed):
        """The ``BinMapper`` a local fit makes (``fitting.fit_bin_mapper`` on the rows ``positive``), from the
        rows its subsample keeps (drawn by position among those rows, ``BinMapper.fit``), gathered."""
        rows = np.flatnonzero(positive)
        mapper = BinMapper(estimator.max_bins, random_state=seed, is_categorical=estimator.is_categorical_)
        if rows.shape[0] > mapper.subsample:
            draws = np.empty(rows.shape[0])
            uniform_per_row(seed, PURPOSE_BINNING, 0, rows.shape[0], draws)
            rows = rows[draws < mapper.subsample / rows.shape[0]]
        subsample = mapper.subsample
        # The kept rows are the whole sample: no second subsample.
        mapper.subsample = max(rows.shape[0], 1)
        mapper.fit(self.take(rows))
        mapper.subsample = subsample
        return mapper

    def bin(self, bin_mapper):
        """Each partition's ``BinnedRows`` (futures)."""
        return [self.client.submit(_bin_partition, part, bin_mapper) for part in self.X_parts]


def partition_statistics(stats, lo, hi, n_samples):
    """The ``RowStatistics`` of rows ``lo`` to ``hi - 1``: the same slice of each tree's statistics when every
    tree has its own (``stats_stride``)."""
    if not stats.stats_stride:
        return replace(stats, row_slot=stats.row_slot[lo:hi], row_stats=stats.row_stats[lo:hi])
    n_trees = stats.row_stats.shape[0] // n_samples
    rows = (np.arange(n_trees)[:, None] * n_samples + np.arange(lo, hi)[None, :]).ravel()
    return replace(stats, row_slot=stats.row_slot[rows], row_stats=stats.row_stats[rows], stats_stride=int(hi - lo))


def grow_distributed(data, binned, bin_mapper, stats, n_values, params, positive, first_tree, n_trees, bootstrap):
    """Grow a batch of trees on the cluster; returns ``(grower, trees)``, the trees of ``BinnedTraining.grow``.

    Parameters
    ----------
    data : TrainingData
    binned : list of distributed.Future
        ``TrainingData.bin``.
    bin_mapper, stats, n_values, params
        As in ``BinnedTraining.grow``.
    positive : ndarray of shape (n_samples,), dtype bool
        Rows of positive weight.
    first_tree, n_trees : int
    bootstrap : tuple ``(seed, n_draws)`` or None
        Bootstrap draws of every tree, or every row once.
    """
    client, offsets = data.client, data.offsets
    parts = [
        client.submit(
            _partition_rows, binned[p], partition_statistics(stats, lo, hi, data.n_samples),
            positive[lo:hi], int(lo), data.n_samples, n_trees,
            None if bootstrap is None else (bootstrap[0], first_tree, bootstrap[1]),
        )
        for p, (lo, hi) in enumerate(zip(offsets[:-1], offsets[1:]))
    ]
    entries = sum(result_within(future, data.timeout) for future in client.map(_entry_counts, parts))
    tree_offsets = np.concatenate([[0], np.cumsum(entries)]).astype(np.int64)
    n_features = bin_mapper.n_thresholds_.shape[0]
    rows = DistributedRows(
        X_binned=np.broadcast_to(np.uint8(0), (data.n_samples, n_features)), parts=parts, tree_offsets=tree_offsets,
        levels=[],
    )
    backend = DaskBackend(client, bin_mapper.missing_bin, data.timeout)
    grower = TreeGrower(backend, rows, tree_offsets, bin_mapper, stats, n_values, params, first_tree=first_tree)
    # Every splittable node from a histogram, the larger of two siblings by subtraction: one round trip per
    # level. The local grower scans small nodes from their rows instead, which counts the same sums.
    grower.min_rows_histogram = 0
    return grower, grower.grow()


@_one_thread
def _partition_leaves(X_block, trees):
    """The leaf of each row of a partition of X in each of ``trees``: (n_trees, n_rows) int64 (``Tree.apply``)."""
    X_block = np.ascontiguousarray(X_block, dtype=x_dtype(X_block))
    backend = CPUBackend()
    return np.array([tree.apply(X_block, backend) for tree in trees], dtype=np.int64).reshape(len(trees), -1)


def row_leaves(data, trees):
    """The leaf of every training row in each of ``trees``: (n_trees, n_samples) int64, from X's partitions."""
    return np.concatenate([
        result_within(future, data.timeout)
        for future in data.client.map(_partition_leaves, data.X_parts, trees=trees, pure=False)
    ], axis=1)


# --- the estimators ---------------------------------------------------------------------------------------


class _DaskEstimator(BaseEstimator):
    """A local estimator's parameters plus ``client`` and ``timeout``; fit on the cluster, ``to_local()``.

    Subclasses set ``_local_class`` and ``_fit_local(local, data, y, sample_weight)``.
    """

    _local_class = None

    def __init_subclass__(cls, **kwargs):
        """``__init__`` takes the local class's parameters, then ``client`` and ``timeout`` (scikit-learn reads
        the parameter names from its signature)."""
        super().__init_subclass__(**kwargs)
        if "_local_class" not in vars(cls):
            return
        local_signature = inspect.signature(cls._local_class.__init__)
        extra = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None) for name in ("client", "timeout")]

        def __init__(self, *, client=None, timeout=None, **params):
            for name, value in {**local_signature.bind(self, **params).arguments, "client": client,
                                "timeout": timeout}.items():
                if name != "self":
                    setattr(self, name, value)
            for name, parameter in local_signature.parameters.items():
                if name != "self" and name not in params:
                    setattr(self, name, parameter.default)

        __init__.__signature__ = local_signature.replace(parameters=[*local_signature.parameters.values(), *extra])
        __init__.__doc__ = f"The parameters of ``gpuforest.{cls._local_class.__name__}``, then ``client`` and ``timeout``."
        cls.__init__ = __init__

    def _local(self):
        params = self.get_params()
        del params["client"], params["timeout"]
        return self._local_class(**params)

    def fit(self, X, y, sample_weight=None):
        """Grow on the cluster: ``X`` a dask array (n_samples, n_features) or dataframe, ``y`` and
        ``sample_weight`` dask arrays (or series) partitioned as X's rows."""
        local = self._local()
        validate_params(local)
        refuse_local_only_options(local)
        client = get_client(self.client)
        data = TrainingData(client, X, y, sample_weight, self.timeout)
        head, first = data.head()
        lo, hi = data.offsets[first], data.offsets[first + 1]
        head_weight = None if data.sample_weight is None else data.sample_weight[lo:hi]
        validate_fit_data(local, head, data.y[lo:hi], head_weight)
        y = data.y
        sample_weight = _check_sample_weight(data.sample_weight, y, dtype=np.float64, ensure_non_negative=True)
        if not sample_weight.sum() > 0:
            raise ValueError("sample_weight must have a positive sum; every weight is zero.")
        self._fit_local(local, data, y, sample_weight)
        local.device_ = "cpu"
        self.local_ = local
        self.n_features_in_ = local.n_features_in_
        if hasattr(local, "classes_"):
            self.classes_ = local.classes_
        return self

    def to_local(self):
        """The fitted plain estimator (``gpuforest``'s), equal to a local fit on the same data."""
        check_is_fitted(self, "local_")
        return self.local_

    def _map_blocks(self, X, method, n_outputs):
        """``to_local().method`` of each row partition of ``X`` (a dask array or dataframe): a dask array with
        ``n_outputs`` columns, or 1-D for None."""
        local = self.to_local()
        columns = list(X.columns) if _is_frame(X) else None
        X = _as_dask_array(X, "X").rechunk({1: -1})
        shape = {"drop_axis": 1} if n_outputs is None else {"chunks": (X.chunks[0], (n_outputs,))}
        dtype = getattr(getattr(local, "classes_", None), "dtype", np.float64) if method == "predict" else np.float64
        return X.map_blocks(_predict_block, local, method, columns, dtype=dtype, **shape)

    def predict(self, X):
        """``to_local().predict`` per partition: a dask array of shape (n_samples,)."""
        return self._map_blocks(X, "predict", None)


def _predict_block(block, local, method, columns):
    """``local.method`` of one row partition (a frame with ``columns``, unless None); nothing of none."""
    if block.shape[0] == 0:
        n_classes = len(local.classes_) if method == "predict_proba" else None
        dtype = local.classes_.dtype if method == "predict" and hasattr(local, "classes_") else np.float64
        return np.empty((0,) if n_classes is None else (0, n_classes), dtype=dtype)
    if columns is not None:
        import pandas as pd

        block = pd.DataFrame(block, columns=columns)
    return getattr(local, method)(block)


class _DaskClassifierMixin(ClassifierMixin):
    def predict_proba(self, X):
        """``to_local().predict_proba`` per partition: a dask array of shape (n_samples, n_classes)."""
        return self._map_blocks(X, "predict_proba", len(self.classes_))


def refuse_local_only_options(local):
    """A ``ValueError`` for the options a distributed fit does not have: pruning, surrogate splits, ID3/C4.5,
    categorical features, warm starts, out-of-bag passes, per-tree class weights."""
    options = {
        "pruning (ccp_alpha, pruning, min_split_significance)": hasattr(local, "ccp_alpha") and prunes(local),
        "use_surrogates=True": getattr(local, "use_surrogates", False),
        "algorithm other than 'cart'": getattr(local, "algorithm", "cart") != "cart",
        "categorical_features": local.categorical_features is not None,
        "warm_start=True": getattr(local, "warm_start", False),
        "oob_score=True": getattr(local, "oob_score", False),
        "n_estimators='auto'": getattr(local, "n_estimators", 1) == "auto",
        "voting='weighted'": getattr(local, "voting", None) == "weighted",
        "class_weight='balanced_subsample'": getattr(local, "class_weight", None) == "balanced_subsample",
        "callbacks": getattr(local, "callbacks", None) is not None,
        "early_stopping=True": getattr(local, "early_stopping", False) is True,
    }
    used = [name for name, is_used in options.items() if is_used]
    if used:
        raise ValueError(f"A distributed fit does not support {', '.join(used)}; fit the local estimator instead.")


class _DaskTree(_DaskEstimator):
    """``BaseDecisionTree._grow``'s recipe on the cluster."""

    def _fit_local(self, local, data, y, sample_weight):
        local.n_outputs_ = 1  # TrainingData refuses a 2-D y
        if isinstance(local, ClassifierMixin):
            local.classes_, y = encode_classes(y)
            local.n_classes_ = local.classes_.shape[0]
            if local.class_weight is not None:
                sample_weight = sample_weight * compute_sample_weight(local.class_weight, y)
            stats, n_values = classification_statistics(local.criterion, y, local.n_classes_, sample_weight), local.n_classes_
        else:
            # The forest regressor's target checks (Poisson's domain).
            y, sample_weight = forest.ForestRegressor._encode_targets(local, y, sample_weight)
            stats, n_values = regression_statistics(local.criterion, y, sample_weight), 1
        seed = random_seed(local.random_state)
        n_features = local.n_features_in_
        params = growth_params(local, data.n_samples, n_features, seed, random_thresholds=local.splitter == "random")
        positive = sample_weight > 0
        local._bin_mapper = data.fit_bin_mapper(local, positive, seed)
        _, (local.tree_,) = grow_distributed(
            data, data.bin(local._bin_mapper), local._bin_mapper, stats, n_values, params, positive, 0, 1, None
        )
        local.max_features_ = params.max_features


class DecisionTreeClassifier(_DaskClassifierMixin, _DaskTree):
    """``gpuforest.DecisionTreeClassifier`` grown on a Dask cluster (``client``; None: the default client)."""

    _local_class = decision_tree.DecisionTreeClassifier


class DecisionTreeRegressor(RegressorMixin, _DaskTree):
    """``gpuforest.DecisionTreeRegressor`` grown on a Dask cluster (``client``; None: the default client)."""

    _local_class = decision_tree.DecisionTreeRegressor


class _DaskForest(_DaskEstimator):
    """``BaseForest.fit``'s recipe on the cluster: batches of trees grown level by level together."""

    def _fit_local(self, local, data, y, sample_weight):
        local.n_outputs_ = 1  # TrainingData refuses a 2-D y
        local._check_sampling_params()
        targets, sample_weight = local._encode_targets(y, sample_weight)
        n_samples, n_features = data.n_samples, local.n_features_in_
        local._seed = seed = random_seed(local.random_state)
        positive = sample_weight > 0
        local._bin_mapper = data.fit_bin_mapper(local, positive, seed)
        local.n_samples_bootstrap_ = local._n_draws(n_samples)
        local._n_training_rows = n_samples
        params = growth_params(local, n_samples, n_features, seed, local._random_thresholds)
        local.max_features_ = params.max_features
        # Scales sized for any bootstrap sample, as the local fit's.
        n_draws = local.n_samples_bootstrap_ if local.bootstrap else None
        stats = local._statistics(targets, sample_weight, n_draws)
        binned = data.bin(local._bin_mapper)
        bootstrap = (seed, n_draws) if local.bootstrap else None
        local.trees_ = []
        for start, count in local._batches(CPUBackend(), 0, local.n_estimators, n_samples, n_features):
            _, trees = grow_distributed(
                data, binned, local._bin_mapper, stats, local._n_values(), params, positive, start, count, bootstrap
            )
            local.trees_.extend(trees)
        local.n_estimators_ = len(local.trees_)
        local._pack_trees()


class RandomForestClassifier(_DaskClassifierMixin, _DaskForest):
    """``gpuforest.RandomForestClassifier`` grown on a Dask cluster (``client``; None: the default client)."""

    _local_class = forest.RandomForestClassifier


class RandomForestRegressor(RegressorMixin, _DaskForest):
    """``gpuforest.RandomForestRegressor`` grown on a Dask cluster (``client``; None: the default client)."""

    _local_class = forest.RandomForestRegressor


class ExtraTreesClassifier(_DaskClassifierMixin, _DaskForest):
    """``gpuforest.ExtraTreesClassifier`` grown on a Dask cluster (``client``; None: the default client)."""

    _local_class = forest.ExtraTreesClassifier


class ExtraTreesRegressor(RegressorMixin, _DaskForest):
    """``gpuforest.ExtraTreesRegressor`` grown on a Dask cluster (``client``; None: the default client)."""

    _local_class = forest.ExtraTreesRegressor


class _DaskBoosting(_DaskEstimator):
    """``BaseGradientBoosting._fit``'s loop on the cluster: the raw scores, gradients and statistics on the
    client (one value per row and tree), each round's trees grown together on the workers, where the rows'
    leaves are found (``Tree.apply`` on X's partitions)."""

    def _fit_local(self, local, data, y, sample_weight):
        if isinstance(local, ClassifierMixin):
            local.classes_, _ = encode_classes(y)
            local.n_classes_ = local.classes_.shape[0]
            if local.n_classes_ == 1:
                raise ValueError("The number of classes has to be greater than one; got 1 class.")
        local._loss = loss = local._make_loss()
        y = local._encode_target(y)
        loss.check_target(y)
        n_samples = data.n_samples
        if local._early_stopping_on(n_samples, []):
            raise ValueError(
                f"A distributed fit does not stop early: early_stopping='auto' is on above {n_samples - 1} rows; "
                "pass early_stopping=False."
            )
        head, _ = data.head()
        # The baseline, growth rules and seed of a local fit; its bins are fitted on every row below.
        local._start(head, y, sample_weight)
        local._bin_mapper = data.fit_bin_mapper(local, np.ones(n_samples, dtype=bool), local._seed)
        binned = data.bin(local._bin_mapper)
        backend = CPUBackend()
        raw = np.tile(local.baseline_, (n_samples, 1))
        n_per_round = loss.n_trees_per_iteration
        gradient_buffers = None
        for iteration in range(local.n_estimators):
            gradients, hessians = gradient_buffers = loss.gradients(backend, y, raw, sample_weight, gradient_buffers)
            in_round = np.zeros(n_samples, dtype=bool)
            in_round[local._subsample(backend, iteration, n_samples)] = True
            stats = newton_statistics(gradients, hessians, local.l2_regularization, local.l1_regularization)
            first_tree = len(local.trees_)
            _, trees = grow_distributed(
                data, binned, local._bin_mapper, stats, 1, local._tree_growth(backend, first_tree, n_per_round),
                in_round, first_tree, n_per_round, None,
            )
            leaves = row_leaves(data, trees)
            for k, tree in enumerate(trees):
                if loss.refit_quantile is not None:
                    loss.refit_leaves(tree.value[:, 0, 0], leaves[k], y, raw[:, k].copy(), sample_weight)
                tree.value *= local.learning_rate
                raw[:, k] += tree.value[leaves[k], 0, 0]
                local.trees_.append(tree)
        local.n_iter_ = len(local.trees_) // n_per_round
        local._pack_trees()


class GradientBoostingClassifier(_DaskClassifierMixin, _DaskBoosting):
    """``gpuforest.GradientBoostingClassifier`` boosted on a Dask cluster (``client``; None: the default client)."""

    _local_class = boosting.GradientBoostingClassifier


class GradientBoostingRegressor(RegressorMixin, _DaskBoosting):
    """``gpuforest.GradientBoostingRegressor`` boosted on a Dask cluster (``client``; None: the default client)."""

    _local_class = boosting.GradientBoostingRegressor
