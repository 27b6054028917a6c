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

Nodes with less than ``2 * min_objects`` rows, or pure, are leaves. A numeric
split sends the rows with a missing value to its larger branch (by rows); at a
multiway split they stay at the node, as in ID3.
"""

import dataclasses

import numpy as np

from .backend import SplitResult
from .kernels.common import NO_SPLIT, finish_split_from_histogram
from .multiway import MultiwayTreeGrower
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
        """Grow every tree; returns a list of ``Tree`` whose thresholds are training values (release 8's)."""
        trees = super().grow()
        for tree in trees:
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
        """Fill the threshold splits of ``chosen`` (bins ``threshold_bin`` of ``feature``): next occupied bin, left
        totals, and the missing values' side, the branch with more rows."""
        rows, features = self.backend.to_device_many(hist_row[chosen], feature.astype(np.int64))
        feature_hists = self.backend.to_host(hist[rows, features])
        n_bins_non_missing = self.bin_mapper.n_bins_non_missing_
        for position, node in enumerate(chosen):
            feature_hist, best_bin = feature_hists[position], int(threshold_bin[position])
            left_rows = feature_hist[:best_bin + 1, -1].sum()
            known_rows = feature_hist[:n_bins_non_missing[feature[position]], -1].sum()
            split.missing_left[node], split.next_bin[node] = finish_split_from_histogram(
                feature_hist, best_bin, int(n_bins_non_missing[feature[position]]), self.bin_mapper.missing_bin,
                2 * left_rows >= known_rows, nodes.totals[node], split.left_totals[node],
            )
            split.bin[node] = best_bin
