"""Multiway growth: the level-wise grower where a split on a categorical feature has one child per category.

ID3 (Quinlan 1986) splits a node on a nominal attribute into one subset per
value. ``MultiwayTreeGrower`` grows such trees on the shared level loop
(``TreeGrower.grow``: the same histograms, chunks, stopping rules and
recorder) and changes three of its steps:

- ``_feature_masks``: a node evaluates no categorical feature that one of its
  ancestors split on (a mask of used features per node, passed down to the
  children), so each is used at most once on a path;
- ``_best_splits``: the numeric features' best binary split (``TreeGrower``'s
  search) against each categorical feature's multiway split
  (``Backend.multiway_gains``, ``common.multiway_gain``, from the node's
  histogram: every splittable node gets one); the larger gain wins, ties go to
  the lower feature, as in the binary search;
- ``_split``: binary splits partitioned as ``TreeGrower`` does; multiway ones
  sorted stably by code (``Backend.apply_multiway_splits``) into consecutive
  children, one per code ``0 .. n_categories_[f] - 1``. A child without rows
  is recorded as a leaf at once, with its parent's value (ID3's majority
  class of the parent, as class proportions). Rows with a missing value stay
  at the node (prediction stops them there too). The children's totals are
  the rows of the node's histogram of the split feature, kept from the search
  (by node key, as the search may run in chunks); their histograms are built at
  the next level (not derived by subtraction).

The trees are recorded with ``split_type == MULTIWAY`` at those nodes
(``tree.Tree``). Growth is level-wise only (no ``max_leaf_nodes``). Rows with
a missing value at a multiway node are in no leaf, so ``leaf_ranges`` and
``row_leaves`` (boosting's) do not apply to these trees.
"""

import numpy as np

from .grower import _NODE_COLUMNS, NodeBatch, TreeGrower, _TreeRecorder
from .kernels.common import NO_SPLIT
from .level import multiway_children, number_multiway_children
from .tree import MULTIWAY


def node_keys(tree, node_idx):
    """``tree << 32 | node_idx``: one int64 per node, unique in a growth and increasing with (tree, node)."""
    return (tree.astype(np.int64) << 32) | node_idx.astype(np.int64)


class MultiwayTreeGrower(TreeGrower):
    """A ``TreeGrower`` whose splits on categorical features (``bin_mapper.is_categorical``) are multiway.

    Parameters are ``TreeGrower``'s; ``params.max_leaf_nodes`` must be None.
    """

    binary_splits = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.params.max_leaf_nodes is not None:
            raise ValueError(
                "Multiway splits (algorithm='id3' or 'c45') grow level by level: max_leaf_nodes must be None."
            )
        self.multiway_features = np.asarray(self.bin_mapper.is_categorical, dtype=bool)
        # The multiway search reads the histogram of every splittable node.
        self.min_rows_histogram = 0
        self.recorder = _MultiwayRecorder(self.n_trees)
        # The categorical features split on above each node of the next level (the roots first), by node_keys.
        self.used_keys = node_keys(np.arange(self.n_trees), np.zeros(self.n_trees, dtype=np.int64))
        self.used_features = np.zeros((self.n_trees, self.n_features), dtype=bool)
        # node_keys -> (n_children, n_slots) int64: the children's totals of the level's multiway splits.
        self.children_totals = {}

    def _used_features_of(self, nodes):
        """(n_nodes, n_features) bool: the categorical features split on above each of ``nodes``."""
        return self.used_features[np.searchsorted(self.used_keys, node_keys(nodes.tree, nodes.node_idx))]

    def _feature_masks(self, nodes, splittable):
        """``TreeGrower``'s feature masks without the categorical features used above each node."""
        return super()._feature_masks(nodes, splittable) & ~self._used_features_of(nodes)

    def _best_splits(self, nodes, splittable, masks, hist, hist_row):
        """Best binary split on the numeric features of ``masks`` or multiway split on its categorical ones.

        A multiway split has ``bin == next_bin == NO_SPLIT`` and no left totals.
        """
        split = super()._best_splits(nodes, splittable, masks & ~self.multiway_features, hist, hist_row)
        multiway_masks = masks & self.multiway_features
        evaluate = np.flatnonzero(splittable & multiway_masks.any(axis=1))
        if evaluate.size == 0:
            return split
        gains = self.backend.multiway_gains(
            hist, hist_row[evaluate], nodes.totals[evaluate], multiway_masks[evaluate], self.bin_mapper, self.stats,
            self.params.min_samples_leaf, self.min_weight_leaf[nodes.tree[evaluate]],
        )
        # argmax: the lowest of the features with the largest gain.
        feature = np.argmax(gains, axis=1).astype(np.int32)
        gain = gains[np.arange(evaluate.size), feature]
        binary_gain, binary_feature = split.gain[evaluate], split.feature[evaluate]
        wins = (gain > -np.inf) & ((gain > binary_gain) | ((gain == binary_gain) & (feature < binary_feature)))
        chosen = evaluate[wins]
        split.gain[chosen] = gain[wins]
        split.feature[chosen] = feature[wins]
        split.bin[chosen] = split.next_bin[chosen] = NO_SPLIT
        split.missing_left[chosen] = False
        split.left_totals[chosen] = 0
        if chosen.size:
            self._keep_children_totals(nodes, chosen, feature[wins], hist, hist_row)
        return split

    def _keep_children_totals(self, nodes, chosen, feature, hist, hist_row):
        """Keep the histogram rows of the codes of ``feature`` (the chosen multiway split of each of ``chosen``):
        its children's totals, for ``_split``."""
        n_children = self.bin_mapper.n_categories_[feature]
        rows, features = self.backend.to_device_many(hist_row[chosen], feature.astype(np.int64))
        totals = self.backend.to_host(hist[rows, features, :int(n_children.max())])
        keys = node_keys(nodes.tree[chosen], nodes.node_idx[chosen]).tolist()
        self.children_totals.update(
            (key, node_totals[:count]) for key, node_totals, count in zip(keys, totals, n_children)
        )

    def _split(self, chosen):
        """Partition the chosen nodes' rows by their binary or multiway splits; returns the children that hold
        rows (no parent histograms: theirs are built) and keeps their used features."""
        multiway = self.multiway_features[chosen.split.feature]
        used = self._used_features_of(chosen)
        children, children_used = [], []
        binary = np.flatnonzero(~multiway)
        if binary.size:
            binary_children, _, _ = super()._split(chosen.take(binary))
            children.append(binary_children)
            children_used.append(np.concatenate([used[binary], used[binary]]))
        split_multiway = np.flatnonzero(multiway)
        if split_multiway.size:
            sorted_children, sorted_used = self._split_multiway(chosen.take(split_multiway), used[split_multiway])
            children.append(sorted_children)
            children_used.append(sorted_used)
        children = NodeBatch(
            **{name: np.concatenate([getattr(batch, name) for batch in children]) for name in _NODE_COLUMNS}
        )
        children_used = np.concatenate(children_used)
        keys = node_keys(children.tree, children.node_idx)
        order = np.argsort(keys)
        self.used_keys, self.used_features = keys[order], children_used[order]
        self.children_totals = {}
        return children, None, None

    def _split_multiway(self, parents, used):
        """Sort the rows of ``parents`` by code into their children; record the empty children as leaves.

        ``used`` (n_parents, n_features) bool: the features used above each parent.
        Returns the children with rows and their used features, the parent's and its split feature.
        """
        feature = parents.split.feature
        n_children = self.bin_mapper.n_categories_[feature].astype(np.int64)
        first_child = number_multiway_children(parents.tree, n_children, self.recorder.next_node_idx)
        self.recorder.add_multiway_splits(parents, feature, first_child, n_children)
        part_counts = self.backend.apply_multiway_splits(self.rows, parents.start, parents.stop, feature, n_children)
        parent, tree, node_idx, depth, start, stop = multiway_children(
            parents.tree, parents.depth, parents.start, n_children, first_child, part_counts
        )
        empty = start == stop
        parent_values, _, _ = self.backend.node_values(self.stats, parents.totals, self.n_values)
        n_empty = int(empty.sum())
        self.recorder.add_nodes(
            NodeBatch(
                tree=tree[empty], node_idx=node_idx[empty], depth=depth[empty], start=start[empty], stop=stop[empty],
                totals=np.zeros((n_empty, self.stats.n_slots), dtype=np.int64),
            ),
            parent_values[parent[empty]], np.zeros(n_empty), np.zeros(n_empty),
        )
        kept = ~empty
        keys = node_keys(parents.tree, parents.node_idx).tolist()
        totals = np.concatenate([self.children_totals[key] for key in keys])
        children = NodeBatch(
            tree=tree[kept], node_idx=node_idx[kept], depth=depth[kept], start=start[kept], stop=stop[kept],
            totals=totals[kept],
        )
        children_used = used[parent[kept]]
        children_used[np.arange(children.size), feature[parent[kept]]] = True
        return children, children_used


class _MultiwayRecorder(_TreeRecorder):
    """``_TreeRecorder`` that also records multiway splits: ``split_type == MULTIWAY``, children
    ``children_left .. children_right``."""

    def __init__(self, n_trees):
        super().__init__(n_trees)
        self.multiway_splits = []

    def add_multiway_splits(self, parents, feature, first_child, n_children):
        """Record the multiway split on ``feature`` of each of ``parents``, children ``first_child`` on."""
        self.multiway_splits.append(
            (parents.tree, parents.node_idx, feature, first_child, first_child + n_children - 1)
        )

    def trees(self, n_features, bin_mapper):
        trees = super().trees(n_features, bin_mapper)
        if not self.multiway_splits:
            return trees
        split_tree, split_node, feature, first, last = (np.concatenate(column) for column in zip(*self.multiway_splits))
        for tree_idx, tree in enumerate(trees):
            mine = split_tree == tree_idx
            at = split_node[mine]
            tree.children_left[at] = first[mine]
            tree.children_right[at] = last[mine]
            tree.feature[at] = feature[mine]
            tree.split_type[at] = MULTIWAY
        return trees
