"""C4.5's growth: splits chosen by gain ratio on the multiway grower (Quinlan 1993, release 8 as Weka's J48).

``C45TreeGrower`` is ``multiway.MultiwayTreeGrower`` (the shared level loop,
categorical features split multiway and used at most once on a path) with
C4.5's split choice in place of the largest gain:

- every (node, feature) gets C4.5's information gain and gain ratio from the
  node's histogram (``Backend.c45_split_gains``, ``common.c45_split_gain``):
  a categorical feature's multiway split, a numeric feature's binary split at
  its threshold of largest gain (the midpoint between neighbouring values, the
  bin edges of ``binning.BinMapper`` when a feature has fewer distinct values
  than bins), with release 8's ``log2(n_candidates) / W`` penalty; at least
  two branches must hold ``min_objects`` weight (J48's ``-M 2``), a threshold's
  both sides ``min_split`` (``common.c45_split_gain``);
- ``choose_by_gain_ratio``: among the features with a valid split whose gain
  is at least their average, the one of largest gain ratio (Quinlan 1993,
  ch. 2, "Gain criterion"; J48's ``C45ModelSelection``).

A threshold is then lowered to the largest training value not above it, as
release 8 and J48 (``C45Split.setSplitPoint``) record it: the tree routes
every training row as with the midpoint, and shows values of the data (the
weather data's ``humidity <= 75``, Quinlan 1993, ch. 1).

Nodes with less than ``2 * min_objects`` rows, or pure, are leaves.

Missing values by fractional cases (Quinlan 1993, ch. 3): ``_split`` puts a
split node's rows with a value in its children (``Backend.apply_multiway_splits``
for a multiway split; two ``Backend.apply_splits`` for a threshold: the known
rows first, then those by the threshold) and appends to every child with
known cases a copy of each row missing the value, its statistics scaled by the
child's share ``W_child / W_known`` of the known weight (fixed point, rounded):
the next level's rows are laid out anew (``fractional_layout``), each child's
range its known rows then its copies, so the histogram kernels see copies as
rows. ``Tree.missing_fractional`` tells prediction and pruning to share such
cases among the branches too.
"""

import dataclasses

import numpy as np
from numba import njit

from .backend import SplitResult
from .grower import NodeBatch
from .kernels.common import NO_SPLIT, finish_split_from_histogram
from .level import number_multiway_children
from .multiway import MultiwayTreeGrower, node_keys
from .tree import NUMERIC, TREE_LEAF

# J48's default -M: the least weight of two of a split's branches.
C45_MIN_OBJECTS = 2
# J48 takes the features whose gain is at least the average less this ("a closer approximation to the
# original implementation", C45ModelSelection).
AVERAGE_GAIN_TOLERANCE = 1e-3


def choose_by_gain_ratio(gain, gain_ratio):
    """Quinlan's choice of split for each node: the largest gain ratio among the features of at least average gain.

    The average is over the features with a valid split (finite ``gain``); a
    feature qualifies with a gain at least that average less
    ``AVERAGE_GAIN_TOLERANCE`` and a positive gain ratio. Ties go to the lower
    feature.

    Parameters
    ----------
    gain, gain_ratio : ndarray of shape (n_nodes, n_features), dtype float64
        ``gain == -inf`` where the feature has no valid split.

    Returns
    -------
    ndarray of shape (n_nodes,), dtype int32
        The chosen feature, ``NO_SPLIT`` where none qualifies.
    """
    valid = gain > -np.inf
    average = np.where(valid, gain, 0.0).sum(axis=1) / np.maximum(valid.sum(axis=1), 1)
    eligible = valid & (gain >= average[:, None] - AVERAGE_GAIN_TOLERANCE) & (gain_ratio > 0)
    feature = np.argmax(np.where(eligible, gain_ratio, -np.inf), axis=1).astype(np.int32)
    feature[~eligible.any(axis=1)] = NO_SPLIT
    return feature


def largest_values_at_most(bin_mapper, feature, bin_idx, threshold):
    """The largest training value of ``feature`` at most ``threshold``, from bin ``bin_idx`` (holding such a value)
    on: ``bin_mapper.bin_max_`` of the highest bin whose largest value is at most ``threshold``.

    Parameters
    ----------
    bin_mapper : binning.BinMapper
    feature, bin_idx : ndarray of shape (n_splits,), dtype int
    threshold : ndarray of shape (n_splits,), dtype float64

    Returns
    -------
    ndarray of shape (n_splits,), dtype float64
    """
    bin_max = bin_mapper.bin_max_[feature]
    above_first = np.arange(bin_max.shape[1]) >= bin_idx[:, None]
    return np.where(above_first & (bin_max <= threshold[:, None]), bin_max, -np.inf).max(axis=1)


@njit(cache=True)
def fractional_layout(start, known_counts, missing_counts, n_children):
    """The next level's entries of ``sample_indices`` after C4.5's splits: each child with known rows holds them,
    then a copy of each of its parent's rows with a missing value.

    Parameters
    ----------
    start : ndarray of shape (n_split,), dtype int64
        Each split node's first position; its rows are there by part: child ``c``'s ``known_counts[k, c]`` known
        rows in child order, then its ``missing_counts[k]`` rows with a missing value.
    known_counts : ndarray of shape (n_split, max_children), dtype int64
    missing_counts, n_children : ndarray of shape (n_split,), dtype int64

    Returns
    -------
    positions : ndarray of shape (n_entries,), dtype int64
        The parents' position of each new entry.
    copy_child : ndarray of shape (n_entries,), dtype int64
        The child (a position among all children, in order) of an entry that is a copy, else -1.
    parent, child_start, child_stop : ndarray of shape (sum(n_children),), dtype int64
        Each child's split (position in ``start``) and range of entries; a child without known rows is empty.
    """
    n_split = start.shape[0]
    n_total_children, n_entries = 0, 0
    for split in range(n_split):
        n_total_children += n_children[split]
        for child in range(n_children[split]):
            if known_counts[split, child] > 0:
                n_entries += known_counts[split, child] + missing_counts[split]
    positions = np.empty(n_entries, dtype=np.int64)
    copy_child = np.full(n_entries, -1, dtype=np.int64)
    parent = np.empty(n_total_children, dtype=np.int64)
    child_start = np.empty(n_total_children, dtype=np.int64)
    child_stop = np.empty(n_total_children, dtype=np.int64)
    entry, flat_child = 0, 0
    for split in range(n_split):
        part_start = start[split]
        missing_start = start[split]
        for child in range(n_children[split]):
            missing_start += known_counts[split, child]
        for child in range(n_children[split]):
            parent[flat_child] = split
            child_start[flat_child] = entry
            n_known = known_counts[split, child]
            if n_known > 0:
                for offset in range(n_known):
                    positions[entry] = part_start + offset
                    entry += 1
                for offset in range(missing_counts[split]):
                    positions[entry] = missing_start + offset
                    copy_child[entry] = flat_child
                    entry += 1
            child_stop[flat_child] = entry
            part_start += n_known
            flat_child += 1
    return positions, copy_child, parent, child_start, child_stop


class C45TreeGrower(MultiwayTreeGrower):
    """A ``MultiwayTreeGrower`` that chooses splits as C4.5 does (entropy statistics).

    Parameters are ``TreeGrower``'s; ``params.max_leaf_nodes`` must be None.
    ``min_objects`` (J48's ``-M``) is ``max(C45_MIN_OBJECTS, params.min_samples_leaf)``,
    and a node splits only with ``2 * min_objects`` rows.
    """

    def __init__(self, backend, rows, tree_offsets, bin_mapper, stats, n_values, params, **kwargs):
        min_objects = max(C45_MIN_OBJECTS, params.min_samples_leaf)
        params = dataclasses.replace(params, min_samples_split=max(params.min_samples_split, 2 * min_objects))
        super().__init__(backend, rows, tree_offsets, bin_mapper, stats, n_values, params, **kwargs)
        self.min_objects = min_objects

    def grow(self):
        """Grow every tree; returns a list of ``Tree`` whose thresholds are training values (release 8's) and whose
        missing values are shared among the branches (``missing_fractional``)."""
        trees = super().grow()
        for tree in trees:
            tree.missing_fractional = True
            at = np.flatnonzero((tree.children_left != TREE_LEAF) & (tree.split_type == NUMERIC))
            tree.threshold[at] = largest_values_at_most(
                self.bin_mapper, tree.feature[at], tree.bin_threshold[at], tree.threshold[at]
            )
        return trees

    def _best_splits(self, nodes, splittable, masks, hist, hist_row):
        """C4.5's split of every splittable node over its features in ``masks``: multiway on a categorical
        feature (``bin == next_bin == NO_SPLIT``), a threshold on a numeric one; ``gain`` is ``W`` times
        Quinlan's gain (the tree's impurity decrease, in bits)."""
        split = SplitResult.empty(nodes.size, self.stats.n_slots)
        for name, fill in (("gain", -np.inf), ("feature", NO_SPLIT), ("bin", NO_SPLIT), ("next_bin", NO_SPLIT),
                           ("missing_left", False), ("left_totals", 0), ("categorical", False),
                           ("category_bitset", 0)):
            getattr(split, name)[:] = fill
        evaluate = np.flatnonzero(splittable & masks.any(axis=1))
        if evaluate.size == 0:
            return split
        gain, gain_ratio, threshold_bin = self.backend.c45_split_gains(
            hist, hist_row[evaluate], nodes.totals[evaluate], masks[evaluate], self.bin_mapper, self.stats,
            self.min_objects,
        )
        feature = choose_by_gain_ratio(gain, gain_ratio)
        found = np.flatnonzero(feature != NO_SPLIT)
        chosen, feature = evaluate[found], feature[found]
        if chosen.size == 0:
            return split
        weight = nodes.totals[chosen, :-1] @ self.stats.inv_scales[:-1]
        split.gain[chosen] = gain[found, feature] * weight
        split.feature[chosen] = feature
        multiway = self.multiway_features[feature]
        if multiway.any():
            self._keep_children_totals(nodes, chosen[multiway], feature[multiway], hist, hist_row)
        numeric = ~multiway
        if numeric.any():
            self._finish_thresholds(
                split, nodes, chosen[numeric], feature[numeric], threshold_bin[found[numeric], feature[numeric]],
                hist, hist_row,
            )
        return split

    def _finish_thresholds(self, split, nodes, chosen, feature, threshold_bin, hist, hist_row):
        """Fill the threshold splits of ``chosen`` (bins ``threshold_bin`` of ``feature``): next occupied bin and
        left totals of the known rows; keep both children's known totals for ``_split``."""
        rows, features = self.backend.to_device_many(hist_row[chosen], feature.astype(np.int64))
        feature_hists = self.backend.to_host(hist[rows, features])
        n_bins_non_missing, missing_bin = self.bin_mapper.n_bins_non_missing_, self.bin_mapper.missing_bin
        for position, node in enumerate(chosen):
            feature_hist = feature_hists[position]
            split.missing_left[node], split.next_bin[node] = finish_split_from_histogram(
                feature_hist, int(threshold_bin[position]), int(n_bins_non_missing[feature[position]]), missing_bin,
                False, nodes.totals[node], split.left_totals[node],
            )
            split.bin[node] = threshold_bin[position]
            known = nodes.totals[node] - feature_hist[missing_bin]
            key = int(node_keys(nodes.tree[node:node + 1], nodes.node_idx[node:node + 1])[0])
            self.children_totals[key] = np.stack([split.left_totals[node], known - split.left_totals[node]])

    def _split(self, chosen):
        """Split the chosen nodes with C4.5's fractional cases (see the module docstring); returns the children that
        hold rows (no parent histograms: theirs are built) and keeps their used features."""
        split = chosen.split
        multiway = self.multiway_features[split.feature]
        n_children = np.where(multiway, self.bin_mapper.n_categories_[split.feature], 2).astype(np.int64)
        first_child = number_multiway_children(chosen.tree, n_children, self.recorder.next_node_idx)
        binary, split_multiway = np.flatnonzero(~multiway), np.flatnonzero(multiway)
        if binary.size:
            self.recorder.add_splits(
                chosen.take(binary), chosen.take(binary).split, first_child[binary], first_child[binary] + 1
            )
        if split_multiway.size:
            self.recorder.add_multiway_splits(
                chosen.take(split_multiway), split.feature[split_multiway], first_child[split_multiway],
                n_children[split_multiway],
            )
        keys = node_keys(chosen.tree, chosen.node_idx).tolist()
        known_totals = np.zeros((chosen.size, int(n_children.max()), self.stats.n_slots), dtype=np.int64)
        for position, key in enumerate(keys):
            totals = self.children_totals[key]
            known_totals[position, :totals.shape[0]] = totals
        known_counts = known_totals[:, :, -1]
        missing_counts = chosen.totals[:, -1] - known_counts.sum(axis=1)
        self._partition_known_first(chosen, binary, split_multiway, n_children, known_counts)
        positions, copy_child, parent, start, stop = fractional_layout(
            chosen.start, known_counts, missing_counts, n_children
        )
        known_weight = known_totals[:, :, :-1] @ self.stats.inv_scales[:-1]
        share = known_weight / known_weight.sum(axis=1, keepdims=True)
        code = np.arange(parent.shape[0]) - np.searchsorted(parent, parent)
        totals = known_totals[parent, code] + self._lay_out_rows(positions, copy_child, share[parent, code])
        return self._children(chosen, multiway, first_child, parent, code, start, stop, totals), None, None

    def _partition_known_first(self, chosen, binary, split_multiway, n_children, known_counts):
        """Sort each chosen node's rows by child, the rows with a missing value last: multiway splits by code,
        threshold splits by a first partition of the known rows from the missing ones and a second by threshold."""
        split = chosen.split
        if split_multiway.size:
            self.backend.apply_multiway_splits(
                self.rows, chosen.start[split_multiway], chosen.stop[split_multiway], split.feature[split_multiway],
                n_children[split_multiway],
            )
        if binary.size:
            n = binary.size
            missing_bin = self.bin_mapper.missing_bin
            numeric = (np.zeros(n, dtype=bool), np.zeros((n, split.category_bitset.shape[1]), dtype=np.uint32))
            start, known = chosen.start[binary], known_counts[binary].sum(axis=1)
            self.backend.apply_splits(
                self.rows, start, chosen.stop[binary], known, split.feature[binary],
                np.full(n, missing_bin - 1, dtype=np.int32), np.zeros(n, dtype=bool), missing_bin, *numeric,
            )
            self.backend.apply_splits(
                self.rows, start, start + known, known_counts[binary, 0].copy(), split.feature[binary],
                split.bin[binary], np.zeros(n, dtype=bool), missing_bin, *numeric,
            )

    def _lay_out_rows(self, positions, copy_child, share):
        """The next level's ``sample_indices`` (``fractional_layout``'s ``positions`` of the current one), each copy
        a new row: the row's bins and class, its statistics times its child's ``share`` (rounded).

        Returns the copies' totals of each child, host (n_children, n_slots) int64: exact int64 sums (prefix sums
        of the copies, which lie in child order), so that a child's totals are the sum of its rows' statistics.
        """
        backend, rows = self.backend, self.rows
        n_slots = self.stats.n_slots
        sample_indices = rows.sample_indices[backend.to_device(positions)]
        copies = np.flatnonzero(copy_child >= 0)
        if copies.size == 0:
            self.rows = dataclasses.replace(rows, sample_indices=sample_indices)
            return np.zeros((share.shape[0], n_slots), dtype=np.int64)
        xp = backend.xp
        copies_device, scale = backend.to_device_many(copies, share[copy_child[copies]])
        source = sample_indices[copies_device]
        n_rows = rows.X_binned.shape[0]
        sample_indices[copies_device] = xp.arange(n_rows, n_rows + copies.size, dtype=sample_indices.dtype)
        binned = backend.binned_rows(xp.asfortranarray(xp.concatenate([rows.X_binned, rows.X_binned[source]])))
        row_slot = rows.row_slot[source]
        scaled_stats = xp.rint(rows.row_stats[source] * scale[:, None]).astype(np.int64)
        self.rows = dataclasses.replace(
            rows, X_binned=binned.X_binned, histogram_bins=binned.histogram_bins, sample_indices=sample_indices,
            sample_counts=xp.ones((1, n_rows + copies.size), dtype=rows.sample_counts.dtype),
            row_slot=xp.concatenate([rows.row_slot, row_slot]),
            row_stats=xp.concatenate([rows.row_stats, scaled_stats]),
        )
        slot_sums = xp.zeros((copies.size + 1, n_slots), dtype=np.int64)
        for stat_idx in range(scaled_stats.shape[1]):
            slot_sums[xp.arange(1, copies.size + 1), row_slot + stat_idx] += scaled_stats[:, stat_idx]
        slot_sums[1:, -1] = 1
        slot_sums = xp.cumsum(slot_sums, axis=0)
        ends = np.searchsorted(copy_child[copies], np.arange(share.shape[0]), side="right")
        starts = np.searchsorted(copy_child[copies], np.arange(share.shape[0]), side="left")
        ends, starts = backend.to_device_many(ends, starts)
        return backend.to_host(slot_sums[ends] - slot_sums[starts])

    def _children(self, chosen, multiway, first_child, parent, code, start, stop, totals):
        """The children (of split ``parent``, its child ``code``) of the chosen splits that hold rows, with their
        ``totals``, after recording the empty ones as leaves of their parent's value; keeps their used features."""
        tree, node_idx, depth = chosen.tree[parent], first_child[parent] + code, chosen.depth[parent] + 1
        empty = start == stop
        n_empty = int(empty.sum())
        if n_empty:
            parent_values, _, _ = self.backend.node_values(self.stats, chosen.totals, self.n_values)
            self.recorder.add_nodes(
                NodeBatch(
                    tree=tree[empty], node_idx=node_idx[empty], depth=depth[empty], start=start[empty],
                    stop=stop[empty], totals=np.zeros((n_empty, self.stats.n_slots), dtype=np.int64),
                ),
                parent_values[parent[empty]], np.zeros(n_empty), np.zeros(n_empty),
            )
        kept = ~empty
        children = NodeBatch(
            tree=tree[kept], node_idx=node_idx[kept], depth=depth[kept], start=start[kept], stop=stop[kept],
            totals=totals[kept],
        )
        used = self._used_features_of(chosen)[parent[kept]]
        from_multiway = np.flatnonzero(multiway[parent[kept]])
        used[from_multiway, chosen.split.feature[parent[kept][from_multiway]]] = True
        keys = node_keys(children.tree, children.node_idx)
        order = np.argsort(keys)
        self.used_keys, self.used_features = keys[order], used[order]
        self.children_totals = {}
        return children
