"""The level-wise grower, batched over the nodes of every tree being grown.

One loop grows any number of trees at once (a forest batch, or one tree)::

    candidates = self._evaluate(self._roots())
    while candidates.size:
        candidates = self._evaluate(*self._split(candidates))

``_evaluate`` draws the features each node evaluates (``max_features`` of
its tree's allowed features, ``GrowthParams.tree_features``, or all of them),
builds the histograms of a batch of nodes over those features only (when every
node of a tree evaluates the same features, the smaller child of each pair and
the larger one by subtraction from its parent; else every node its own, since
a child's features differ from its parent's; small nodes skip histograms and
are scanned from their rows), then finds the best split of every node; ``_split``
partitions the rows of the chosen nodes. Each step is one backend call for all
nodes of all trees. Depth-wise growth splits every candidate; with
``max_leaf_nodes`` growth is best-first (``_BestFirst``: the trees of splitting
each tree's best leaf first, as scikit-learn's ``BestFirstTreeBuilder``, grown
several leaves per step, see ``best_first``).
"""

from dataclasses import dataclass, fields

import numpy as np

from .backend import SplitResult
from .best_first import HistogramPool, NodeTable, commit_splits, leaves_to_expand, push_leaves
from .constraints import (
    children_bounds, children_groups, clip_values, constrained_values, group_features, root_bounds,
)
from .kernels.common import FROM_ROWS, NOT_SEARCHED, PURPOSE_COLUMNS
from .level import (
    allowed_splits, histogram_plan, number_children, split_children, stopping_rules, tree_node_arrays,
)
from .tree import CATEGORY_WORDS, TREE_UNDEFINED, Tree

# Histogram bytes per chunk of a level when nodes draw feature subsets (see _units_per_chunk): on the
# CPU small beside the input, while a chunk still holds hundreds of nodes (the kernels' parallel
# work); a GPU's chunks are larger, since each chunk costs its launches.
SUBSET_CHUNK_BYTES = 8 * 1024 * 1024
DEVICE_SUBSET_CHUNK_BYTES = 256 * 1024 * 1024
# A level whose histograms need at most this much goes in one chunk without a memory query.
SMALL_LEVEL_BYTES = 16 * 1024 * 1024
# Most bytes of best-first growth's histogram pool (see _BestFirst._pool_rows).
BEST_FIRST_POOL_BYTES = 512 * 1024 * 1024
# Most rows that best-first growth's node table holds before it first grows (about 300 bytes each).
TABLE_CAPACITY = 65536


@dataclass
class GrowthParams:
    """Stopping rules, resolved to numbers (scikit-learn's meanings)."""

    max_depth: int
    min_samples_split: int
    min_samples_leaf: int
    min_weight_fraction_leaf: float
    min_impurity_decrease: float
    max_leaf_nodes: int | None
    max_features: int
    seed: int
    # Extra trees: one random threshold per (node, feature) (kernels/cpu/splitting.py).
    random_thresholds: bool = False
    # Boosting's absolute rules: smallest weight (hessian sum) of a child, smallest split gain.
    min_weight_leaf: float = 0.0
    min_split_gain: float = 0.0
    # Column subsampling by tree: (n_trees, n_features) bool, the features each tree of the
    # batch may split on (``tree_feature_subsets``), as many for every tree; None: all. Each
    # node then evaluates min(max_features, that many) of its tree's features.
    tree_features: np.ndarray | None = None
    # Constraints (gpuforest.constraints): (n_features,) int64 monotonic constraints, and (n_groups, n_features)
    # bool interaction groups; None: none.
    monotonic_cst: np.ndarray | None = None
    interaction_groups: np.ndarray | None = None


def feature_count(fraction, n_features):
    """Features kept by a column fraction: ``max(1, round(fraction * n_features))``, halves rounded up
    (LightGBM's ``ColSampler::GetCnt`` rounds so too, with at least 2; XGBoost's ``ColSample`` truncates)."""
    return max(1, int(np.floor(fraction * n_features + 0.5)))


def tree_feature_subsets(backend, seed, first_tree, n_trees, n_features, fraction):
    """Column subsampling by tree (XGBoost's ``colsample_bytree``, LightGBM's ``feature_fraction``).

    Tree ``t`` (a global index) keeps the ``feature_count(fraction, n_features)``
    features with the lowest priorities ``U(seed, PURPOSE_COLUMNS, t, f)``
    (ties: lower feature first), the rule of the per-node ``feature_masks``; the
    draws are the backend's ``uniform_per_row``, the same numbers on every
    backend, so a tree's subset does not depend on the batch it is drawn in.

    Parameters
    ----------
    backend : Backend
    seed : int
    first_tree : int
        Global index of the first tree.
    n_trees, n_features : int
    fraction : float in (0, 1]

    Returns
    -------
    ndarray of shape (n_trees, n_features), dtype bool
        ``GrowthParams.tree_features``.
    """
    n_kept = feature_count(fraction, n_features)
    subsets = np.zeros((n_trees, n_features), dtype=bool)
    for tree in range(n_trees):
        priorities = backend.to_host(backend.uniform_per_row(seed, PURPOSE_COLUMNS, first_tree + tree, n_features))
        subsets[tree, np.argsort(priorities, kind="stable")[:n_kept]] = True
    return subsets


@dataclass
class NodeBatch:
    """Nodes of several trees, one entry per node in parallel arrays.

    ``start``/``stop`` delimit the node's rows in ``sample_indices``;
    ``totals`` (n_nodes, n_slots) are its fixed-point sums. Candidates also
    carry their best ``split`` and, in depth-wise growth, the histogram that
    their children's histograms are derived from (``hist[hist_row]``,
    ``hist_row == -1`` for none). Under constraints (``gpuforest.constraints``)
    ``bounds`` (n_nodes, 2) are their value bounds and ``groups``
    (n_nodes, n_groups) bool their allowed interaction groups; else None.
    """

    tree: np.ndarray
    node_idx: np.ndarray
    depth: np.ndarray
    start: np.ndarray
    stop: np.ndarray
    totals: np.ndarray
    split: SplitResult | None = None
    hist: np.ndarray | None = None
    hist_row: np.ndarray | None = None
    bounds: np.ndarray | None = None
    groups: np.ndarray | None = None

    @property
    def size(self):
        return self.tree.shape[0]

    @property
    def counts(self):
        """Rows of each node: (n_nodes,) int64, contiguous whatever the number of nodes (so that the kernels
        taking it have one specialisation, not one for a single node and one for several)."""
        return np.ascontiguousarray(self.totals[:, -1])

    def take(self, positions):
        """The nodes at ``positions`` (a histogram is kept, not copied); every node (positions in order): this
        batch itself."""
        if positions.shape[0] == self.size:
            return self
        split = None
        if self.split is not None:
            split = SplitResult(*[array[positions] for array in self.split.outputs()])
        hist_row, bounds, groups = (
            None if column is None else column[positions] for column in (self.hist_row, self.bounds, self.groups)
        )
        return NodeBatch(
            self.tree[positions], self.node_idx[positions], self.depth[positions], self.start[positions],
            self.stop[positions], self.totals[positions], split=split, hist=self.hist, hist_row=hist_row,
            bounds=bounds, groups=groups,
        )


_NODE_COLUMNS = tuple(
    field.name for field in fields(NodeBatch) if field.name not in ("split", "hist", "hist_row", "bounds", "groups")
)


class _TreeRecorder:
    """Collects node and split records level by level; assembles ``Tree`` objects."""

    def __init__(self, n_trees, n_outputs=1):
        self.next_node_idx = np.ones(n_trees, dtype=np.int64)
        self.n_outputs = n_outputs  # the node values' outputs: Tree.value (node_count, n_outputs, n_values)
        self.nodes = []
        self.splits = []

    def add_nodes(self, nodes, values, impurity, weight):
        self.nodes.append(
            (nodes.tree, nodes.node_idx, nodes.depth, nodes.totals[:, -1], values, impurity, weight, nodes.start)
        )

    def add_packed(self, node_records, node_values, split_records, split_bitsets):
        """Record the nodes and splits of ``Backend.grow_levels``' packed records."""
        tree, node_idx, depth, n_samples, start = node_records.T
        self.nodes.append((
            tree, node_idx, depth, n_samples, node_values[:, :-2], node_values[:, -2], node_values[:, -1], start
        ))
        tree, node_idx, feature, bin_idx, next_bin, missing_left, left, right, categorical = split_records.T
        self.splits.append((
            tree, node_idx, feature.astype(np.int32), bin_idx.astype(np.int32), next_bin.astype(np.int32),
            missing_left.astype(bool), left, right, categorical.astype(bool), split_bitsets,
        ))

    def add_splits(self, parents, split, left, right):
        """Record the ``split`` (a ``SplitResult``) of each of ``parents`` and its children's indices."""
        self.splits.append((
            parents.tree, parents.node_idx, split.feature, split.bin, split.next_bin, split.missing_left, left, right,
            split.categorical, split.category_bitset,
        ))

    def leaf_ranges(self, tree_idx):
        """``(boundaries, leaves)``: leaf ``leaves[r]`` (a node index) of tree ``tree_idx`` owns the positions
        ``[boundaries[r], boundaries[r + 1])`` of ``sample_indices``; int64 arrays of n_leaves + 1 and n_leaves.

        Leaves own consecutive ranges of positions that together cover the tree's part.
        """
        tree, node_idx, n_samples, start = (
            np.concatenate([record[column] for record in self.nodes]) for column in (0, 1, 3, 7)
        )
        is_split = np.zeros(self.next_node_idx[tree_idx], dtype=bool)
        for split_tree, split_node, *_ in self.splits:
            is_split[split_node[split_tree == tree_idx]] = True
        is_leaf = tree == tree_idx
        is_leaf[is_leaf] = ~is_split[node_idx[is_leaf]]
        order = np.argsort(start[is_leaf])
        first = start[is_leaf][order[0]]
        return first + np.concatenate([[0], np.cumsum(n_samples[is_leaf][order])]), node_idx[is_leaf][order]

    def leaf_of_positions(self, tree_idx):
        """Leaf (node index) owning each position of tree ``tree_idx``'s part of ``sample_indices``, in order."""
        boundaries, leaves = self.leaf_ranges(tree_idx)
        return np.repeat(leaves, np.diff(boundaries))

    def trees(self, n_features, bin_mapper):
        """The grown trees, a list of ``Tree``; raw thresholds from ``bin_mapper``'s split thresholds."""
        tree, node_idx, depth, n_samples, values, impurity, weight, _ = (
            np.concatenate(column) for column in zip(*self.nodes)
        )
        if self.splits:
            split_columns = [np.concatenate(column) for column in zip(*self.splits)]
        else:
            # The dtypes of the records (``add_splits``): tree, node, feature, bin, next_bin, missing_left, left,
            # right, categorical, bitset.
            split_columns = [np.empty(0, dtype=dtype) for dtype in (np.int64, np.int64, np.int32, np.int32, np.int32)]
            split_columns += [np.empty(0, dtype=bool), np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)]
            split_columns += [np.empty(0, dtype=bool), np.empty((0, CATEGORY_WORDS), dtype=np.uint32)]
        split_tree, split_node, feature, bin_idx, next_bin, missing_left, left, right, categorical, bitset = (
            split_columns
        )
        # A categorical split has no threshold: its categories are in the bitset.
        numeric = ~categorical
        threshold = np.full(feature.shape[0], float(TREE_UNDEFINED))
        threshold[numeric] = bin_mapper.split_thresholds(feature[numeric], bin_idx[numeric], next_bin[numeric])
        nodes = (tree, node_idx, depth, n_samples, values, impurity, weight)
        splits = (split_tree, split_node, feature, bin_idx, missing_left, left, right, categorical)
        result = []
        for tree_idx, node_count in enumerate(self.next_node_idx):
            *arrays, split_type = tree_node_arrays(tree_idx, node_count, nodes, splits, threshold, self.n_outputs)
            result.append(Tree(n_features, *arrays))
            result[-1].split_type = split_type
            # Only the categorical splits' rows: the other rows' zero pages are then never touched (not resident).
            mine_categorical = (split_tree == tree_idx) & categorical
            if mine_categorical.any():
                result[-1].category_bitset[split_node[mine_categorical]] = bitset[mine_categorical]
        return result


class TreeGrower:
    """Grows a batch of trees on binned data with one backend.

    Parameters
    ----------
    backend : CPUBackend or compatible
    rows : backend.RowData
        Binned rows, per-tree row ranges in ``sample_indices`` and draw counts.
    tree_offsets : ndarray of shape (n_trees + 1,), dtype int64
        Tree ``t`` owns ``sample_indices[tree_offsets[t]:tree_offsets[t + 1]]``.
    bin_mapper : binning.BinMapper
    stats : statistics.RowStatistics
        The rows' statistics, shared by the trees or one set per tree (``stats_stride``,
        as in ``rows``); its ``inv_scales`` are every tree's.
    n_values : int
        Values per node (classes for classification, 1 otherwise).
    params : GrowthParams
    first_tree : int, default=0
        Global index of the batch's first tree: random draws are keyed by
        global tree index, so a tree is the same whatever batch it grows in.
    workspace : dict or None, default=None
        Buffers kept from one growth to the next (a fit's rounds pass the same dict).
    """

    # Whether every split is binary (``_evaluate`` and ``_split`` as here): the backend may then grow
    # the levels itself (``_grows_in_backend``).
    binary_splits = True

    def __init__(
        self, backend, rows, tree_offsets, bin_mapper, stats, n_values, params, first_tree=0, workspace=None,
    ):
        self.backend = backend
        self.rows = rows
        self.tree_offsets = tree_offsets
        self.bin_mapper = bin_mapper
        self.stats = stats
        self.n_values = n_values
        self.params = params
        self.first_tree = first_tree
        self.workspace = {} if workspace is None else workspace
        # A level's histograms go in one of two buffers in turn: its parents' are in the other.
        self.level_buffer = 0
        self.n_trees = tree_offsets.shape[0] - 1
        self.n_features = rows.X_binned.shape[1]
        self.n_bins = bin_mapper.n_bins
        # Below this many rows a node is scanned from its rows (one small feature histogram at
        # a time), not from a node histogram: zeroing and scanning n_bins * n_slots per feature
        # costs more. Measured: a threshold of 96 or of 384 rows, the same time per round.
        self.min_rows_histogram = self.n_bins * stats.n_slots // 2
        self.is_categorical = np.asarray(bin_mapper.is_categorical, dtype=bool)
        self.allowed_features = self._allowed_features()
        self.n_node_features = min(params.max_features, self.allowed_features.shape[1])
        # Every node then evaluates all its tree's features, a child its parent's: siblings can be subtracted.
        self.nodes_share_features = self.n_node_features == self.allowed_features.shape[1]
        self.recorder = _TreeRecorder(self.n_trees, stats.n_outputs)

    def grow(self):
        """Grow every tree; returns a list of ``Tree``."""
        if self.params.max_leaf_nodes is not None:
            _BestFirst(self).grow()
        else:
            self._grow_depthwise()
        return self.recorder.trees(self.n_features, self.bin_mapper)

    def _grow_depthwise(self):
        """Level by level, every candidate split; the remaining levels in one backend call as soon as their
        histograms are bounded by a few megabytes (``_grows_in_backend``)."""
        nodes, parent_hist, parent_hist_row = self._roots(), None, None
        while not self._grows_in_backend(nodes):
            candidates = self._evaluate(nodes, parent_hist, parent_hist_row)
            if not candidates.size:
                return
            nodes, parent_hist, parent_hist_row = self._split(candidates)
        self._grow_in_backend(nodes)

    def _hist_capacity(self, nodes):
        """Most histograms a level below ``nodes`` builds or derives: each needs ``min_rows_histogram`` of the
        rows of one of them, and brings at most its smaller sibling along."""
        return 2 * int((nodes.counts // max(self.min_rows_histogram, 1)).sum())

    def _grows_in_backend(self, nodes):
        """Whether ``nodes`` and their descendants grow in one ``Backend.grow_levels`` call: the backend's loop
        (``_backend_grows``), and two levels' histograms in ``Backend.level_loop_bytes``."""
        hist_bytes = self.n_features * self.n_bins * self.stats.n_slots * 8
        return (
            self._backend_grows()
            and 2 * self._hist_capacity(nodes) * hist_bytes <= self.backend.level_loop_bytes()
        )

    def _backend_grows(self):
        """Whether the backend's compiled loops may grow these trees: a backend that has them, a grower of
        binary splits, and no constraints (monotonic bounds, interaction groups)."""
        params = self.params
        return (
            self.binary_splits and params.monotonic_cst is None and params.interaction_groups is None
            and self.backend.grows_levels_for(self.n_bins, self.stats.n_slots, bool(self.is_categorical.any()))
        )

    def _growth_arguments(self):
        """``(scratch, rules, features)`` of the backend's compiled loops (``kernels.cpu.growth``)."""
        params, stats = self.params, self.stats
        rules = (
            self.min_weight_leaf, stats.kernel_weight_outputs, self.root_weight, int(params.max_depth),
            int(params.min_samples_split), int(params.min_samples_leaf), stats.stops_when_pure,
            int(self.min_rows_histogram), float(params.min_impurity_decrease), float(params.min_split_gain),
        )
        features = (
            params.seed, self.first_tree, np.ascontiguousarray(self.allowed_features), self.n_node_features,
            not self.nodes_share_features, params.random_thresholds,
        )
        scratch = self._workspace_array("partition_scratch", (int(self.tree_offsets[-1]),), np.int32)
        return scratch, rules, features

    def _grow_in_backend(self, nodes):
        """Grow ``nodes`` and their descendants in one backend call, recording them."""
        scratch, rules, features = self._growth_arguments()
        shape = (self._hist_capacity(nodes), self.n_features, self.n_bins, self.stats.n_slots)
        hist_buffers = tuple(self._workspace_array(f"level_histograms_{buffer}", shape, np.int64) for buffer in (0, 1))
        self.recorder.add_packed(*self.backend.grow_levels(
            self.rows, (nodes.tree, nodes.node_idx, nodes.depth, nodes.start, nodes.stop, nodes.totals), scratch,
            hist_buffers, self.bin_mapper, self.stats, self.is_categorical, rules, features, self.n_values,
            self.recorder.next_node_idx, workspace=self.workspace,
        ))

    def row_leaves(self, tree_idx):
        """``(rows, leaves)`` of a grown tree: its rows (device array of ``sample_indices``) and each one's leaf.

        Read from where growth left the rows (each leaf owns a range of
        positions), not by routing them down the tree: for a training row the
        same leaf, as a split on bins is the same split on raw values.
        """
        rows = self.rows.sample_indices[self.tree_offsets[tree_idx]:self.tree_offsets[tree_idx + 1]]
        return rows, self.backend.to_device(self.recorder.leaf_of_positions(tree_idx))

    def leaf_ranges(self, tree_idx):
        """``(boundaries, leaves)`` of a grown tree (host int64 arrays): leaf ``leaves[r]`` owns the rows
        ``sample_indices[boundaries[r]:boundaries[r + 1]]`` (``row_leaves`` without a value per row)."""
        return self.recorder.leaf_ranges(tree_idx)

    def _allowed_features(self):
        """(n_trees, n_allowed) int64: each tree's allowed features (``GrowthParams.tree_features``), increasing."""
        tree_features = self.params.tree_features
        if tree_features is None:
            return np.broadcast_to(np.arange(self.n_features), (self.n_trees, self.n_features))
        counts = tree_features.sum(axis=1)
        if tree_features.shape != (self.n_trees, self.n_features) or counts.min() < 1 or counts.min() != counts.max():
            raise ValueError(
                f"tree_features must be ({self.n_trees}, {self.n_features}) bool with as many features, at least "
                f"one, for every tree; got shape {tree_features.shape} and counts {np.unique(counts)}."
            )
        return np.nonzero(tree_features)[1].reshape(self.n_trees, counts[0])

    def _roots(self):
        tree = np.arange(self.n_trees, dtype=np.int64)
        start, stop = self.tree_offsets[:-1].copy(), self.tree_offsets[1:].copy()
        totals = self.backend.node_totals(self.rows, start, stop, tree, self.stats.n_slots)
        _, _, root_weight = self.backend.node_values(self.stats, totals, self.n_values)
        # The kernels' gains sum the outputs' (kernels.common, "Several outputs"): improvement is gain / (W_root K).
        self.root_weight = root_weight * self.stats.n_outputs
        self.min_weight_leaf = np.maximum(self.params.min_weight_fraction_leaf * root_weight, self.params.min_weight_leaf)
        zeros = np.zeros(self.n_trees, dtype=np.int64)
        params = self.params
        return NodeBatch(
            tree=tree, node_idx=zeros, depth=zeros.copy(), start=start, stop=stop, totals=totals,
            bounds=None if params.monotonic_cst is None else root_bounds(self.n_trees),
            groups=None if params.interaction_groups is None else np.ones(
                (self.n_trees, params.interaction_groups.shape[0]), dtype=bool
            ),
        )

    def _evaluate(self, nodes, parent_hist=None, parent_hist_row=None):
        """Record ``nodes``; return those that can split, with their best split.

        With ``parent_hist``, ``nodes`` are the children of the previous
        candidates: the left children, then the right children, in order.
        """
        values, impurity, weight = self._node_values(nodes)
        self.recorder.add_nodes(nodes, values, impurity, weight)
        splittable, needs_hist = self._splittable(nodes, impurity, weight)
        if not splittable.any():
            # The last level (all leaves): no features, histograms or splits to look for.
            return nodes.take(np.empty(0, dtype=np.int64))
        if self.nodes_share_features:
            # Else no level keeps its histograms for the next: one buffer does.
            self.level_buffer = 1 - self.level_buffer
        split, nodes.hist, nodes.hist_row = self._split_search(
            nodes, splittable, needs_hist, parent_hist, parent_hist_row
        )
        nodes.split = split
        return nodes.take(self._can_split(nodes, splittable, split).nonzero()[0])

    def _node_values(self, nodes):
        """``(values, impurity, weight)`` of ``nodes`` (``Backend.node_values``), values clipped into their bounds."""
        values, impurity, weight = self.backend.node_values(self.stats, nodes.totals, self.n_values)
        if nodes.bounds is not None:
            values = clip_values(values, nodes.bounds, self.stats.criterion)
        return values, impurity, weight

    def _splittable(self, nodes, impurity, weight):
        """``level.stopping_rules``: which of ``nodes`` may split, and which of those get a histogram."""
        params = self.params
        return stopping_rules(
            nodes.counts, nodes.depth, weight, impurity, nodes.tree, self.min_weight_leaf,
            int(params.max_depth), int(params.min_samples_split),
            int(params.min_samples_leaf), self.stats.stops_when_pure, int(self.min_rows_histogram),
        )

    def _can_split(self, nodes, splittable, split):
        """Which splittable nodes' best split is allowed (``level.allowed_splits``), (n_nodes,) bool."""
        return allowed_splits(
            splittable, split.feature, split.gain, nodes.tree, self.root_weight,
            float(self.params.min_impurity_decrease), float(self.params.min_split_gain),
        )

    def _split_search(self, nodes, splittable, needs_hist, parent_hist, parent_hist_row):
        """Histograms and best splits of ``nodes``, in as few chunks as memory allows.

        A chunk is a set of sibling pairs (or of roots) sized from the backend's
        free memory; an out-of-memory error halves the chunk and redoes the level.
        Histograms are kept for the next level's subtraction only when the level
        fit in one chunk and every node of a tree evaluates the same features
        (with per-node subsets a child's features differ from its parent's).
        Returns ``(split, hist, hist_row)``.
        """
        paired = parent_hist is not None
        n_units = nodes.size // 2 if paired else nodes.size
        # Only units with a node large enough for a histogram count towards a chunk's memory.
        unit_needs_hist = (needs_hist[:n_units] | needs_hist[n_units:]) if paired else needs_hist
        units_per_chunk = self._units_per_chunk(int(unit_needs_hist.sum()), paired)
        while True:
            try:
                return self._split_search_in_chunks(
                    nodes, splittable, needs_hist, parent_hist, parent_hist_row, unit_needs_hist, units_per_chunk
                )
            except self.backend.out_of_memory_errors:
                if units_per_chunk == 1:
                    raise
                units_per_chunk = max(1, units_per_chunk // 2)

    def _units_per_chunk(self, n_units, paired):
        """Pairs (or roots) with histograms that fit the level's memory budget, of the ``n_units`` that need them.

        With the same features in every node of a tree: half the free memory at two copies
        per node (its own, built or derived into one array, and its share of the parent
        level's, kept for subtraction), so that a level fits one chunk and keeps its
        histograms for the next level's subtraction. With per-node feature subsets nothing is
        subtracted or kept, so chunks of at most ``SUBSET_CHUNK_BYTES`` (one copy per node;
        ``DEVICE_SUBSET_CHUNK_BYTES`` on a GPU) bound the memory at no cost.
        A level needing at most ``SMALL_LEVEL_BYTES`` is one chunk without asking the
        backend for its free memory (a system call per level adds up in best-first growth).
        """
        hist_bytes = self.n_features * self.n_bins * self.stats.n_slots * 8
        nodes_per_unit = 2 if paired else 1
        if 2 * hist_bytes * nodes_per_unit * n_units <= SMALL_LEVEL_BYTES:
            return max(n_units, 1)
        free_bytes = self.backend.free_memory_bytes()
        if not self.nodes_share_features:
            chunk_bytes = SUBSET_CHUNK_BYTES if self.backend.shares_host_memory else DEVICE_SUBSET_CHUNK_BYTES
            return max(1, int(min(0.5 * free_bytes, chunk_bytes) // (hist_bytes * nodes_per_unit)))
        return max(1, int(0.5 * free_bytes // (2 * hist_bytes * nodes_per_unit)))

    def _split_search_in_chunks(
        self, nodes, splittable, needs_hist, parent_hist, parent_hist_row, unit_needs_hist, units_per_chunk
    ):
        """``_split_search`` in chunks of consecutive units, each with at most ``units_per_chunk`` units that
        need a histogram (``unit_needs_hist``); the others go with them."""
        if unit_needs_hist.sum() <= units_per_chunk:
            split, hist, hist_row = self._chunk_split_search(nodes, splittable, needs_hist, parent_hist, parent_hist_row)
            if self.nodes_share_features:
                return split, hist, hist_row
            return split, None, np.full(nodes.size, -1, dtype=np.int64)
        paired = parent_hist is not None
        n_units = unit_needs_hist.shape[0]
        split = SplitResult.empty(nodes.size, self.stats.n_slots)
        chunk_of_unit = np.maximum(np.cumsum(unit_needs_hist) - 1, 0) // units_per_chunk
        for units in np.split(np.arange(n_units), np.flatnonzero(np.diff(chunk_of_unit)) + 1):
            positions = np.concatenate([units, units + n_units]) if paired else units
            chunk_split, _, _ = self._chunk_split_search(
                nodes.take(positions), splittable[positions], needs_hist[positions], parent_hist,
                parent_hist_row[units] if paired else None,
            )
            for target, source in zip(split.outputs(), chunk_split.outputs()):
                target[positions] = source
        return split, None, np.full(nodes.size, -1, dtype=np.int64)

    def _chunk_split_search(self, nodes, splittable, needs_hist, parent_hist, parent_hist_row):
        """Feature draws, histograms and best splits of a chunk of ``nodes``: ``(split, hist, hist_row)``."""
        # Drawn before the histograms, so that they hold only the features searched.
        masks = self._feature_masks(nodes, splittable)
        hist, hist_row = self._histograms(nodes, needs_hist, masks, parent_hist, parent_hist_row)
        return self._best_splits(nodes, splittable, masks, hist, hist_row), hist, hist_row

    def _feature_masks(self, nodes, splittable):
        """The features each node evaluates: (n_nodes, n_features) bool.

        Every allowed feature of its tree for every node when ``max_features``
        covers them; else ``max_features`` of them per splittable node, drawn
        from its tree and index (so the same whatever the chunking) by the
        backend's ``feature_masks`` over the tree's allowed features in
        increasing order (position ``j`` is feature ``allowed_features[tree, j]``),
        and none for the others.
        """
        if self.nodes_share_features and self.params.tree_features is None and nodes.groups is None:
            return np.ones((nodes.size, self.n_features), dtype=bool)
        masks = np.zeros((nodes.size, self.n_features), dtype=bool)
        columns = self.allowed_features[nodes.tree]
        if self.nodes_share_features:
            masks[np.arange(nodes.size)[:, None], columns] = True
        else:
            evaluate = np.flatnonzero(splittable)
            if evaluate.size:
                masks[evaluate[:, None], columns[evaluate]] = self.backend.feature_masks(
                    self.params.seed, self.first_tree + nodes.tree[evaluate], nodes.node_idx[evaluate],
                    columns.shape[1], self.n_node_features,
                )
        if nodes.groups is not None:
            masks &= group_features(nodes.groups, self.params.interaction_groups)
        return masks

    def _histograms(self, nodes, needs_hist, masks, parent_hist, parent_hist_row):
        """Histograms of the nodes that need one (``needs_hist``): ``(hist, hist_row)``.

        A built histogram holds the features of the node's row of ``masks``
        (``_feature_masks``); ``parent_hist`` (for subtraction) comes only when
        every node of a tree evaluates the same features, its parent's.
        """
        hist_row = np.full(nodes.size, FROM_ROWS, dtype=np.int64)
        if not needs_hist.any():
            return None, hist_row
        no_parents = np.empty(0, dtype=np.int64)
        build, derive, derive_from, derive_parent = histogram_plan(
            nodes.counts, needs_hist, no_parents if parent_hist is None else parent_hist_row
        )
        if build.size == 0:
            return None, hist_row
        # Built histograms first, then the derived ones: one array, no copies.
        hist = self._level_histograms(build.size + derive.size)
        self.backend.build_histograms(
            self.rows, nodes.start[build], nodes.stop[build], nodes.tree[build], hist.shape[2], hist.shape[3],
            masks[build], out=hist[:build.size],
        )
        hist_row[build] = np.arange(build.size)
        if derive.size:
            self.backend.subtract_histograms(
                parent_hist, derive_parent, hist, hist_row[derive_from], out=hist[build.size:]
            )
            hist_row[derive] = build.size + np.arange(derive.size)
        return hist, hist_row

    def _level_histograms(self, n_hist):
        """``n_hist`` histograms, (n_hist, n_features, n_bins, n_slots) int64, in this level's buffer.

        Two buffers, used by levels in turn, kept in the workspace and replaced
        by a larger one when a level needs more: no allocation (and, on the
        CPU, none of a fresh allocation's page faults) per level once the
        largest level has grown.
        """
        shape = (n_hist, self.n_features, self.n_bins, self.stats.n_slots)
        # The rows written here are not zeroed after: the device's levels zero the buffers again.
        self.workspace.pop("clean_histograms", None)
        return self._workspace_array(f"level_histograms_{self.level_buffer}", shape, np.int64)

    def _workspace_array(self, key, shape, dtype):
        """An array of ``shape``, the first rows of the workspace's buffer ``key``, replaced by a larger one
        when it has fewer rows (or other dimensions)."""
        buffer = self.workspace.get(key)
        if buffer is None or buffer.shape[1:] != shape[1:] or buffer.shape[0] < shape[0]:
            # The old buffer goes first, so that both are never held at once.
            self.workspace[key] = buffer = None
            self.workspace[key] = buffer = self.backend.xp.empty(shape, dtype=dtype)
        return buffer[:shape[0]]

    def _best_splits(self, nodes, splittable, masks, hist, hist_row):
        """Best split of every node over its features in ``masks`` (``NO_SPLIT`` for those not splittable), in
        one search of the level: a node with a histogram (``hist_row``) from it, the others from their rows."""
        params, stats = self.params, self.stats
        draws = None
        if params.random_thresholds:
            draws = self.backend.threshold_draws(
                params.seed, self.first_tree + nodes.tree, nodes.node_idx, self.n_features
            )
        return self.backend.find_best_splits(
            self.rows, hist, np.where(splittable, hist_row, NOT_SEARCHED), nodes.start, nodes.stop, nodes.tree,
            nodes.totals, masks, self.is_categorical, self.bin_mapper, stats, params.min_samples_leaf,
            self.min_weight_leaf[nodes.tree] * stats.kernel_weight_outputs, threshold_draws=draws,
            **self._constraints(nodes),
        )

    def _constraints(self, nodes):
        """The monotonic constraints of the split search of ``nodes``, keyword arguments."""
        if nodes.bounds is None:
            return {}
        return {"monotonic_cst": self.params.monotonic_cst, "value_bounds": nodes.bounds}

    def _split(self, chosen):
        """Partition the chosen nodes' rows; returns their children for ``_evaluate``."""
        left, right = number_children(chosen.tree, self.recorder.next_node_idx)
        self.recorder.add_splits(chosen, chosen.split, left, right)
        return self._partition(chosen, np.concatenate([left, right])), chosen.hist, chosen.hist_row

    def _partition(self, chosen, children_idx):
        """Partition the rows of ``chosen`` by their splits; returns the children, lefts then rights,
        numbered ``children_idx``."""
        split = chosen.split
        self.backend.apply_splits(
            self.rows, chosen.start, chosen.stop, split.left_totals[:, -1].copy(), split.feature, split.bin,
            split.missing_left, self.bin_mapper.missing_bin, split.categorical, split.category_bitset,
            scratch=self._workspace_array("partition_scratch", (int(self.tree_offsets[-1]),), np.int32),
        )
        tree, depth, start, stop, totals = split_children(
            chosen.tree, chosen.depth, chosen.start, chosen.stop, chosen.totals, split.left_totals
        )
        bounds = groups = None
        if chosen.bounds is not None:
            values, _, _ = self.backend.node_values(self.stats, totals, self.n_values)
            split_constraints = np.where(split.categorical, 0, self.params.monotonic_cst[split.feature])
            bounds = children_bounds(
                chosen.bounds, constrained_values(values, self.stats.criterion), split_constraints
            )
        if chosen.groups is not None:
            groups = children_groups(chosen.groups, self.params.interaction_groups, split.feature)
        return NodeBatch(
            tree=tree, node_idx=children_idx, depth=depth, start=start, stop=stop, totals=totals, bounds=bounds,
            groups=groups,
        )


class _BestFirst:
    """Best-first growth of a ``TreeGrower``'s trees, several leaves per step (``gpuforest.best_first``).

    Every open leaf keeps its histogram in one ``HistogramPool`` (when the
    nodes of a tree share their features), so an expanded leaf's smaller child
    is built and the larger one derived by subtraction.
    """

    def __init__(self, grower):
        self.grower = grower
        self.keep_histograms = grower.nodes_share_features
        # Evaluating a child then reads its node index: only each tree's best leaf per step.
        self.exact = not grower.nodes_share_features or grower.params.random_thresholds
        # A tree evaluates 2 nodes per expanded leaf, and expands its splits and some more.
        self.table_capacity = min(4 * grower.params.max_leaf_nodes * grower.n_trees, TABLE_CAPACITY)
        self.table = NodeTable.in_workspace(grower.workspace, self.table_capacity)
        # A tree has at most max_leaf_nodes leaves, and at most one per row.
        capacity = np.minimum(grower.params.max_leaf_nodes, np.diff(grower.tree_offsets) + 1)
        self.heap = np.empty(capacity.sum(), dtype=np.int64)
        self.heap_start = np.concatenate([[0], np.cumsum(capacity)[:-1]]).astype(np.int64)
        self.heap_size = np.zeros(grower.n_trees, dtype=np.int64)
        n_bins, n_slots = grower.n_bins, grower.stats.n_slots
        self.pool = HistogramPool.in_workspace(
            grower.workspace, grower.backend, self._pool_rows(capacity), grower.n_features, n_bins, n_slots
        )

    def _pool_rows(self, capacity):
        """Histograms the pool holds: every one the growth may keep at once (a tree's open leaves, the
        children of its expanded leaves and a step's new children: 3 per leaf), or a step's children
        when none are kept; at most half the free memory and ``BEST_FIRST_POOL_BYTES``."""
        grower = self.grower
        wanted = 3 * int(capacity.sum()) + 2 * grower.n_trees if self.keep_histograms else 2 * grower.n_trees
        hist_bytes = grower.n_features * grower.n_bins * grower.stats.n_slots * 8
        if wanted * hist_bytes <= SMALL_LEVEL_BYTES:
            return max(wanted, 1)
        # Once per fit (the workspace's): a memory query per tree adds up over boosting's rounds.
        key = ("best_first_pool_rows", wanted, hist_bytes)
        if key not in grower.workspace:
            budget = min(0.5 * grower.backend.free_memory_bytes(), BEST_FIRST_POOL_BYTES)
            grower.workspace[key] = max(min(wanted, int(budget // hist_bytes)), 1)
        return grower.workspace[key]

    def grow(self):
        grower = self.grower
        if grower._backend_grows() and grower.backend.grows_best_first:
            self._grow_in_backend()
            return
        table = self.table
        roots = self._evaluate(grower._roots(), None)
        self._record(roots)
        open_roots = roots[table.can_split[roots]]
        push_leaves(self.heap, self.heap_start, self.heap_size, open_roots, table.tree[open_roots], table.gain,
                    table.node_idx)
        next_node_idx = grower.recorder.next_node_idx
        selected = np.empty(self.heap.shape[0], dtype=np.int64)
        committed = []
        while True:
            n_committed = commit_splits(
                self.heap, self.heap_start, self.heap_size, table.gain, table.node_idx, table.left_uid,
                table.right_uid, table.can_split, next_node_idx, grower.params.max_leaf_nodes, selected,
            )
            committed.append(selected[:n_committed].copy())
            n_expand = leaves_to_expand(
                self.heap, self.heap_start, self.heap_size, table.gain, table.node_idx, table.left_uid,
                table.right_uid, table.can_split, next_node_idx, grower.params.max_leaf_nodes, self.exact, selected,
            )
            if n_expand == 0:
                # Recorded once, at the end: the records' order does not matter.
                self._record_splits(np.concatenate(committed))
                return
            self._expand(selected[:n_expand].copy())

    def _grow_in_backend(self):
        """Every step in one backend call (``Backend.grow_best_first``), with this growth's pool and heaps."""
        grower = self.grower
        roots = grower._roots()
        scratch, rules, features = grower._growth_arguments()
        growth = (grower.params.max_leaf_nodes, self.exact, self.keep_histograms, self.table_capacity)
        grower.recorder.add_packed(*grower.backend.grow_best_first(
            grower.rows, (roots.tree, roots.node_idx, roots.depth, roots.start, roots.stop, roots.totals), scratch,
            (self.pool.hist, self.pool.free_rows, self.pool.n_free), (self.heap, self.heap_start, self.heap_size),
            grower.bin_mapper, grower.stats, grower.is_categorical, rules, features, grower.n_values, growth,
            grower.recorder.next_node_idx,
        ))

    def _expand(self, uids):
        """Partition the rows of leaves ``uids`` and evaluate their children."""
        table = self.table
        parents = self._batch(uids)
        if self.exact:
            # Each tree's best leaf, split next: its children's indices are known.
            next_idx = self.grower.recorder.next_node_idx[parents.tree]
            children_idx = np.concatenate([next_idx, next_idx + 1])
        else:
            children_idx = np.full(2 * uids.size, -1, dtype=np.int64)
        children = self._evaluate(self.grower._partition(parents, children_idx), table.hist_row[uids])
        self.pool.give(table.hist_row[uids])
        table.hist_row[uids] = -1
        table.left_uid[uids], table.right_uid[uids] = children[:uids.size], children[uids.size:]

    def _evaluate(self, nodes, parent_rows):
        """Values, best split and histogram of ``nodes`` (children lefts then rights, of parents whose pool
        rows are ``parent_rows``; or roots: None), added to the table; returns their uids."""
        grower = self.grower
        values, impurity, weight = grower._node_values(nodes)
        splittable, needs_hist = grower._splittable(nodes, impurity, weight)
        masks = grower._feature_masks(nodes, splittable)
        hist_row = self._histograms(nodes, needs_hist, masks, parent_rows)
        split = grower._best_splits(nodes, splittable, masks, self.pool.hist, hist_row)
        can_split = grower._can_split(nodes, splittable, split)
        dropped = ~can_split if self.keep_histograms else np.ones(nodes.size, dtype=bool)
        self.pool.give(hist_row[dropped])
        hist_row[dropped] = -1
        constraints = {name: getattr(nodes, name) for name in ("bounds", "groups") if getattr(nodes, name) is not None}
        return self.table.append(
            **constraints,
            tree=nodes.tree, node_idx=nodes.node_idx, depth=nodes.depth, start=nodes.start, stop=nodes.stop,
            totals=nodes.totals, values=values, impurity=impurity, weight=weight, gain=split.gain,
            feature=split.feature, bin=split.bin, missing_left=split.missing_left, left_totals=split.left_totals,
            next_bin=split.next_bin, categorical=split.categorical, category_bitset=split.category_bitset,
            can_split=can_split, hist_row=hist_row, left_uid=-1, right_uid=-1,
        )

    def _histograms(self, nodes, needs_hist, masks, parent_rows):
        """Pool rows of the histograms of ``nodes`` (-1: none; those without are scanned from their rows).

        The nodes that need one (``needs_hist``) get one: built, or, for the
        larger child of a parent whose histogram is kept, derived by
        subtraction from it and its built sibling. A pool short of rows leaves
        the last ones without.
        """
        grower, pool = self.grower, self.pool
        hist_row = np.full(nodes.size, -1, dtype=np.int64)
        if not needs_hist.any():
            # Small nodes only (a small data set's): no histogram is built or derived.
            return hist_row
        no_parents = np.empty(0, dtype=np.int64)
        build, derive, derive_from, derive_parent = histogram_plan(
            nodes.counts, needs_hist, no_parents if parent_rows is None else parent_rows
        )
        hist_row[build] = pool.take(build.size)
        build = build[hist_row[build] >= 0]
        # A node whose built sibling found no row is scanned from its rows.
        derivable = hist_row[derive_from] >= 0
        derive, derive_from, derive_parent = derive[derivable], derive_from[derivable], derive_parent[derivable]
        hist_row[derive] = pool.take(derive.size)
        derived = hist_row[derive] >= 0
        derive, derive_from, derive_parent = derive[derived], derive_from[derived], derive_parent[derived]
        n_bins, n_slots = grower.n_bins, grower.stats.n_slots
        if build.size:
            grower.backend.build_histograms(
                grower.rows, nodes.start[build], nodes.stop[build], nodes.tree[build], n_bins, n_slots, masks[build],
                out=pool.hist, out_rows=hist_row[build],
            )
        if derive.size:
            grower.backend.subtract_histograms(
                pool.hist, derive_parent, pool.hist, hist_row[derive_from], out=pool.hist, out_rows=hist_row[derive],
            )
        return hist_row

    def _batch(self, uids, with_splits=True):
        """The table's nodes ``uids`` as a ``NodeBatch``, with their splits or (for recording them) without."""
        table = self.table
        bounds, groups = (
            getattr(table, name)[uids] if with_splits and hasattr(table, name) else None
            for name in ("bounds", "groups")
        )
        split = None
        if with_splits:
            split = SplitResult(
                gain=table.gain[uids], feature=table.feature[uids], bin=table.bin[uids],
                missing_left=table.missing_left[uids], left_totals=table.left_totals[uids],
                next_bin=table.next_bin[uids], categorical=table.categorical[uids],
                category_bitset=table.category_bitset[uids],
            )
        return NodeBatch(
            tree=table.tree[uids], node_idx=table.node_idx[uids], depth=table.depth[uids], start=table.start[uids],
            stop=table.stop[uids], totals=table.totals[uids], bounds=bounds, groups=groups, split=split,
        )

    def _record(self, uids):
        table = self.table
        self.grower.recorder.add_nodes(
            self._batch(uids, with_splits=False), table.values[uids], table.impurity[uids], table.weight[uids]
        )

    def _record_splits(self, parents):
        """Record the committed splits of ``parents`` and their children (numbered by ``commit_splits``)."""
        if parents.size == 0:
            return
        table = self.table
        left, right = table.left_uid[parents], table.right_uid[parents]
        batch = self._batch(parents)
        self.grower.recorder.add_splits(batch, batch.split, table.node_idx[left], table.node_idx[right])
        self._record(np.concatenate([left, right]))
