"""The flat tree format: one node per index in parallel arrays.

The arrays follow scikit-learn's ``sklearn.tree._tree.Tree`` (same names,
``TREE_LEAF = -1`` children and ``TREE_UNDEFINED = -2`` feature/threshold at
leaves), so code written against ``tree_`` works, plus what binned training
and later split kinds need:

- ``bin_threshold``: the split's bin, so a tree can route binned rows;
- ``split_type``, the kind of each split (the children of a split node are
  numbered consecutively, which prediction relies on):

  - ``NUMERIC``: ``x[feature] <= threshold`` goes to ``children_left``, the
    rest to ``children_right == children_left + 1``;
  - ``CATEGORICAL``: ``x[feature]`` is a category code, an integer in
    ``[0, MAX_CATEGORIES)`` (categorical bins are the codes themselves); code
    ``c`` goes left when bit ``c % 32`` of ``category_bitset[node, c // 32]``
    is set, else right (``children_left + 1``);
  - ``MULTIWAY``: one child per code, ``children_left + c`` for code ``c``,
    ``c <= children_right - children_left``;

  a missing value (NaN) and a value that is no valid code (negative, not an
  integer, too large) go where ``missing_go_to_left`` says at a
  ``CATEGORICAL`` split, and stop at a ``MULTIWAY`` node (its value is the
  prediction).
- ``category_bitset``: (node_count, CATEGORY_WORDS) uint32, the left
  categories of ``CATEGORICAL`` splits; zero elsewhere.
- surrogate splits (``gpuforest.surrogates``; ``use_surrogates=True``), of
  shape (node_count, max_surrogates), max_surrogates 0 without them:
  ``surrogate_feature`` (int32, -1 where none), ``surrogate_split_type``
  (``NUMERIC`` or ``CATEGORICAL``), ``surrogate_threshold`` (float64) and
  ``surrogate_left_is_le`` (bool: ``x <= threshold`` goes left, else
  ``x > threshold`` does) of a numeric one, ``surrogate_left_codes`` and
  ``surrogate_right_codes`` (uint32, (node_count, max_surrogates,
  CATEGORY_WORDS): the codes it sends each way) of a categorical one, and
  ``surrogate_association`` (float64, the predictive association). A row
  whose value of a ``NUMERIC`` split's feature is missing takes the first
  surrogate that sends it somewhere, else ``missing_go_to_left``; a tree with
  them is routed by its own kernel (``predict_leaves_with_surrogates``).

For prediction, ``pack_forest`` concatenates many trees' node arrays, and
``pack_complete_forest`` lays trees of bounded depth out as complete binary
trees (``CompleteForest``), the layout of boosting's raw scores (numeric
splits only: a tree with another split kind keeps the node arrays).
"""

import math
import mmap
from typing import NamedTuple

import numpy as np
import scipy.sparse

TREE_LEAF = -1
TREE_UNDEFINED = -2
NUMERIC = 0
CATEGORICAL = 1
MULTIWAY = 2
# Category codes are bins: at most 256, in 8 words of 32 bits per node.
MAX_CATEGORIES = 256
CATEGORY_WORDS = MAX_CATEGORIES // 32

# Deepest tree that ``pack_complete_forest`` lays out as a complete binary tree: 2**(depth + 1)
# slots of 17 bytes each, 35 KiB per tree at depth 10.
COMPLETE_MAX_DEPTH = 10
# Nodes packed together at most (pack_forest): packing's temporaries, about 200 bytes a node, stay
# near 50 MiB whatever the size of the forest.
PACK_GROUP_NODES = 1 << 18
# Smallest array that untouched_zeros maps on its own.
UNTOUCHED_MIN_BYTES = 64 * 1024


class Tree:
    """One grown tree.

    Attributes
    ----------
    node_count : int
    children_left, children_right : ndarray of shape (node_count,), dtype int32
    feature : ndarray of shape (node_count,), dtype int32
    threshold : ndarray of shape (node_count,), dtype float64
        A row goes left when ``x[feature] <= threshold``.
    bin_threshold : ndarray of shape (node_count,), dtype int32
        A binned row goes left when its bin ``<= bin_threshold``.
    missing_go_to_left : ndarray of shape (node_count,), dtype bool
        Where missing values (NaN) go.
    split_type : ndarray of shape (node_count,), dtype uint8
        ``NUMERIC``, ``CATEGORICAL`` or ``MULTIWAY`` (see the module docstring).
    category_bitset : ndarray of shape (node_count, CATEGORY_WORDS), dtype uint32
    surrogate_feature : ndarray of shape (node_count, max_surrogates), dtype int32
    surrogate_split_type : ndarray of shape (node_count, max_surrogates), dtype uint8
    surrogate_threshold, surrogate_association : ndarray of shape (node_count, max_surrogates), dtype float64
    surrogate_left_is_le : ndarray of shape (node_count, max_surrogates), dtype bool
    surrogate_left_codes, surrogate_right_codes : ndarray of shape (node_count, max_surrogates, CATEGORY_WORDS)
        The surrogate splits of each node, in order (see the module docstring).
    value : ndarray of shape (node_count, n_outputs, n_values), dtype float64
        Class proportions (classification; with several outputs padded with zeros to the most classes) or the
        mean target (regression: ``n_values = 1``), per output as scikit-learn's ``tree_.value``.
    impurity, weighted_n_node_samples : ndarray of shape (node_count,), dtype float64
    n_node_samples : ndarray of shape (node_count,), dtype int64
    n_features : int
    missing_fractional : bool
        A row with a missing value at a split goes down every branch, weighted by the branches' shares of the
        training weight (C4.5's trees, ``fractional_values``); else where ``missing_go_to_left`` says.
    """

    def __init__(
        self, n_features, children_left, children_right, feature, threshold, bin_threshold, missing_go_to_left,
        value, impurity, n_node_samples, weighted_n_node_samples, depth,
    ):
        self.n_features = n_features
        self.children_left = children_left
        self.children_right = children_right
        self.feature = feature
        self.threshold = threshold
        self.bin_threshold = bin_threshold
        self.missing_go_to_left = missing_go_to_left
        self.split_type = np.full(children_left.shape[0], NUMERIC, dtype=np.uint8)
        self.category_bitset = untouched_zeros((children_left.shape[0], CATEGORY_WORDS), np.uint32)
        self.set_surrogates(0)
        self.value = value
        self.impurity = impurity
        self.n_node_samples = n_node_samples
        self.weighted_n_node_samples = weighted_n_node_samples
        self.node_depth = np.asarray(depth, dtype=np.int32)
        self.missing_fractional = False

    def set_surrogates(self, max_surrogates):
        """Room for ``max_surrogates`` surrogate splits per node, none set (see the module docstring)."""
        shape = (self.children_left.shape[0], max_surrogates)
        self.surrogate_feature = np.full(shape, -1, dtype=np.int32)
        self.surrogate_split_type = np.full(shape, NUMERIC, dtype=np.uint8)
        self.surrogate_threshold = np.full(shape, float(TREE_UNDEFINED))
        self.surrogate_left_is_le = np.zeros(shape, dtype=bool)
        self.surrogate_left_codes = np.zeros((*shape, CATEGORY_WORDS), dtype=np.uint32)
        self.surrogate_right_codes = np.zeros((*shape, CATEGORY_WORDS), dtype=np.uint32)
        self.surrogate_association = np.zeros(shape)

    def __getstate__(self):
        """The arrays without what is derived or empty: ``node_depth`` (from the children), the surrogate
        arrays of a tree without surrogates, and of ``category_bitset`` only the ``CATEGORICAL`` nodes' rows
        (``categorical_bitset``), and ``n_node_samples`` as uint32 where it fits; pickles and model files are
        then no larger than scikit-learn's."""
        state = dict(vars(self))
        del state["node_depth"], state["category_bitset"]
        if self.n_node_samples.max(initial=0) <= np.iinfo(np.uint32).max:
            state["n_node_samples"] = self.n_node_samples.astype(np.uint32)
        state["categorical_bitset"] = self.category_bitset[self.split_type == CATEGORICAL]
        if self.surrogate_feature.shape[1] == 0:
            for name in [name for name in state if name.startswith("surrogate_")]:
                del state[name]
        return state

    def __setstate__(self, state):
        state = dict(state)
        categorical_bitset = state.pop("categorical_bitset")
        vars(self).update(state)
        self.n_node_samples = self.n_node_samples.astype(np.int64)
        if "surrogate_feature" not in state:
            self.set_surrogates(0)
        self.category_bitset = untouched_zeros((self.node_count, CATEGORY_WORDS), np.uint32)
        self.category_bitset[self.split_type == CATEGORICAL] = categorical_bitset
        self.node_depth = _node_depths(self.children_left, self.children_right)

    @property
    def node_count(self):
        return self.children_left.shape[0]

    @property
    def max_depth(self):
        return int(self.node_depth.max())

    @property
    def n_leaves(self):
        return int(np.count_nonzero(self.children_left == TREE_LEAF))

    @property
    def n_outputs(self):
        return self.value.shape[1]

    def apply(self, X, backend):
        """Node each row of ``X`` (float64 or float32, shape (n_samples, n_features)) ends in: its leaf, or the
        ``MULTIWAY`` node where its value has no child."""
        split_value, category_bitset = pack_split_values(
            self.split_type, self.threshold, self.children_left, self.children_right, self.category_bitset
        )
        node_info = pack_node_info(self.feature, self.missing_go_to_left, self.children_left, self.split_type)
        if self.surrogate_feature.shape[1] > 0:
            surrogates = (
                self.surrogate_feature, self.surrogate_split_type, self.surrogate_threshold, self.surrogate_left_is_le,
                self.surrogate_left_codes, self.surrogate_right_codes,
            )
            leaves = backend.predict_leaves_with_surrogates(X, split_value, node_info, category_bitset, surrogates)
            return leaves.astype(np.int64)
        leaves = backend.predict_leaves(X, np.zeros(1, dtype=np.int64), split_value, node_info, category_bitset)
        return backend.to_host(leaves)[:, 0].astype(np.int64)

    def fractional_values(self, X, backend):
        """Each row's value (n_samples, n_values) when a row with no branch at a split (a missing value, a code
        without a child) goes down every branch: the leaves' values weighted by the shares of the training weight
        of the branches taken (Quinlan 1993, ch. 3; ``kernels.common.add_fractional_value``)."""
        split_value, category_bitset = pack_split_values(
            self.split_type, self.threshold, self.children_left, self.children_right, self.category_bitset
        )
        node_info = pack_node_info(self.feature, self.missing_go_to_left, self.children_left, self.split_type)
        internal = np.flatnonzero(self.children_left != TREE_LEAF)
        children, child_parent, _ = _children_of(internal, self.children_left, self.children_right)
        weight = self.weighted_n_node_samples
        branches_weight = np.bincount(child_parent, weights=weight[children], minlength=self.node_count)
        branch_share = np.zeros(self.node_count)
        branch_share[children] = weight[children] / np.maximum(branches_weight[child_parent], np.finfo(float).tiny)
        most_children = int((self.children_right - self.children_left)[internal].max(initial=1)) + 1
        return backend.predict_fractional(
            X, split_value, node_info, category_bitset, branch_share, np.ascontiguousarray(self.value[:, 0]),
            1 + self.max_depth * (most_children - 1),
        )

    def decision_path(self, X, backend):
        """CSR indicator matrix of shape (n_samples, node_count) of the nodes each row visits.

        Every node on the path from the root to the node a row ends in is an
        ancestor of that node, so the path is read off a parent array.
        """
        parent = np.full(self.node_count, -1, dtype=np.int64)
        internal = np.flatnonzero(self.children_left != TREE_LEAF)
        children, child_parent, _ = _children_of(internal, self.children_left, self.children_right)
        parent[children] = child_parent
        node = self.apply(X, backend)
        path_length = self.node_depth[node] + 1
        indptr = np.concatenate([[0], np.cumsum(path_length)])
        indices = np.empty(indptr[-1], dtype=np.int64)
        # Fill each row's path from its leaf upwards, one depth level per step.
        position = indptr[1:] - 1
        current = node.copy()
        active = np.ones(node.shape[0], dtype=bool)
        while active.any():
            indices[position[active]] = current[active]
            current[active] = parent[current[active]]
            position -= 1
            active &= current >= 0
        data = np.ones(indices.shape[0], dtype=np.int64)
        return scipy.sparse.csr_matrix((data, indices, indptr), shape=(X.shape[0], self.node_count))

    def compute_feature_importances(self, normalize=True):
        """Mean decrease in impurity per feature (Breiman et al. 1984), as scikit-learn's; a multiway split
        decreases its node's weighted impurity by all its children's."""
        internal = np.flatnonzero(self.children_left != TREE_LEAF)
        n_children = (self.children_right[internal] - self.children_left[internal] + 1).astype(np.int64)
        first_child = np.cumsum(n_children) - n_children
        children = np.repeat(self.children_left[internal], n_children) + (
            np.arange(n_children.sum()) - np.repeat(first_child, n_children)
        )
        weighted_impurity = self.weighted_n_node_samples * self.impurity
        children_impurity = np.add.reduceat(weighted_impurity[children], first_child) if internal.size else 0.0
        decrease = weighted_impurity[internal] - children_impurity
        # float64 also when there is no split (numpy's bincount of nothing is int64).
        importances = np.bincount(self.feature[internal], weights=decrease, minlength=self.n_features).astype(float)
        importances /= self.weighted_n_node_samples[0]
        total = importances.sum()
        if normalize and total > 0:
            importances /= total
        return importances


def pack_node_info(feature, missing_go_left, children_left, split_type=NUMERIC):
    """``children_left << 32 | feature << 3 | split_type << 1 | missing_go_left`` per node (int64).

    Negative exactly at leaves (``children_left == TREE_LEAF``); read by the
    prediction kernels (``kernels.common.route_to_leaf``), which find the
    children from ``children_left`` (see the module docstring).
    """
    packed = (children_left.astype(np.int64) << 32) | (np.maximum(feature, 0).astype(np.int64) << 3)
    return packed | (np.asarray(split_type).astype(np.int64) << 1) | missing_go_left.astype(np.int64)


def untouched_zeros(shape, dtype):
    """A writable array of zeros whose pages take no memory until written (``category_bitset``, written only
    at categorical splits). ``np.zeros`` (calloc) gives no such promise: once glibc has raised its mmap
    threshold, as it does after freeing large blocks, calloc takes reused heap memory and writes its zeros. An
    array of at least ``UNTOUCHED_MIN_BYTES`` is an anonymous ``mmap`` (one mapping each: small arrays, such as
    boosting's trees', keep ``np.zeros``), or ``np.zeros`` where the system refuses another mapping."""
    n_bytes = math.prod(shape) * np.dtype(dtype).itemsize
    if n_bytes >= UNTOUCHED_MIN_BYTES:
        try:
            return np.frombuffer(mmap.mmap(-1, n_bytes), dtype=dtype).reshape(shape)
        except OSError:
            pass
    return np.zeros(shape, dtype=dtype)


def pack_split_values(split_type, threshold, children_left, children_right, category_bitset):
    """What the prediction kernels read of each split besides ``pack_node_info``: ``(split_value, bitsets)``.

    Only the nodes with a ``CATEGORICAL`` split keep a bitset, so trees
    without one cost no extra memory.

    Parameters
    ----------
    split_type, threshold, children_left, children_right : ndarray of shape (n_nodes,)
    category_bitset : ndarray of shape (n_nodes, CATEGORY_WORDS), dtype uint32

    Returns
    -------
    split_value : ndarray of shape (n_nodes,), dtype float64
        ``threshold`` at ``NUMERIC`` splits; at a ``CATEGORICAL`` split, its row of
        ``bitsets``; at a ``MULTIWAY`` node, its number of children.
    bitsets : ndarray of shape (n_categorical_splits, CATEGORY_WORDS), dtype uint32
        The left categories of the ``CATEGORICAL`` splits, in node order.
    """
    categorical = split_type == CATEGORICAL
    multiway = split_type == MULTIWAY
    split_value = np.array(threshold, dtype=np.float64)
    split_value[categorical] = np.arange(np.count_nonzero(categorical))
    split_value[multiway] = children_right[multiway] - children_left[multiway] + 1
    return split_value, np.ascontiguousarray(category_bitset[categorical], dtype=np.uint32)


def _children_of(parents, children_left, children_right):
    """``(children, child_parent, child_rank)``: the children of every node of ``parents`` (int64 indices
    into ``children_left``, whose children are ``children_left .. children_right``), grouped by parent in
    order; each child's parent; its rank among its siblings (0 for the left child)."""
    first = children_left[parents].astype(np.int64)
    n_children = children_right[parents].astype(np.int64) - first + 1
    child_parent = np.repeat(parents, n_children)
    group_start = np.cumsum(n_children) - n_children
    child_rank = np.arange(child_parent.shape[0]) - np.repeat(group_start, n_children)
    return np.repeat(first, n_children) + child_rank, child_parent, child_rank


def _node_depths(children_left, children_right):
    """Depth of every node (root 0), one level at a time; shape (node_count,), int32."""
    depth = np.zeros(children_left.shape[0], dtype=np.int32)
    parents = np.zeros(1, dtype=np.int64)
    while parents.shape[0]:
        parents = parents[children_left[parents] != TREE_LEAF]
        children, child_parent, _ = _children_of(parents, children_left, children_right)
        depth[children] = depth[child_parent] + 1
        parents = children
    return depth


def pack_forest(trees):
    """The trees' node arrays concatenated in depth-first order, for prediction over all trees at once.

    Within each tree, nodes are renumbered so that a group of siblings follows
    its parent's group as in a depth-first walk (the first child's subtree's
    groups, then the next child's): a row's path down a tree then stays in
    nearby memory, as in scikit-learn's depth-first trees, while siblings stay
    consecutive (the right child is ``left + 1``, as ``route_to_leaf`` needs).
    Groups of trees of at most ``PACK_GROUP_NODES`` nodes are packed in turn, into the
    final arrays, so that packing's temporaries do not grow with the forest.

    Returns
    -------
    PackedForest
        A tuple ``(tree_offsets, split_value, node_info, category_bitset, value, tree_node)``:

        tree_offsets : ndarray of shape (n_trees,), dtype int64
            Index of each tree's root in the flat arrays.
        split_value : ndarray of shape (n_nodes_total,), dtype float64
            Each node's split value (``pack_split_values``): a numeric split's threshold, a
            categorical split's row of ``category_bitset``, a multiway node's number of children.
        node_info : ndarray of shape (n_nodes_total,), dtype int64
            ``pack_node_info`` of every node, child indices in the new numbering.
        category_bitset : ndarray of shape (n_categorical_splits, CATEGORY_WORDS), dtype uint32
            The left categories of the categorical splits (``pack_split_values``).
        value : ndarray of shape (n_nodes_total, n_values), dtype float64
            ``Tree.value`` flattened: its outputs' values one after another.
        tree_node : ndarray of shape (n_nodes_total,), dtype int64
            Each packed node's index in its ``Tree`` (to report ``apply`` in the
            trees' own numbering).
    """
    node_counts = np.array([tree.node_count for tree in trees], dtype=np.int64)
    first_nodes = np.concatenate([[0], np.cumsum(node_counts)]).astype(np.int64)
    n_values = trees[0].value.shape[1] * trees[0].value.shape[2] if trees else 0
    split_value = np.empty(first_nodes[-1])
    node_info = np.empty(first_nodes[-1], dtype=np.int64)
    value = np.empty((first_nodes[-1], n_values))
    tree_node = np.empty(first_nodes[-1], dtype=np.int64)
    bitsets = []
    for group in _pack_groups(node_counts):
        nodes = slice(first_nodes[group.start], first_nodes[group.stop])
        first_bitset_row = sum(rows.shape[0] for rows in bitsets)
        split_value[nodes], node_info[nodes], group_bitsets, value[nodes], tree_node[nodes] = _pack_group(
            trees[group], node_counts[group], first_bitset_row
        )
        bitsets.append(group_bitsets)
    category_bitset = np.concatenate(bitsets) if bitsets else np.empty((0, CATEGORY_WORDS), dtype=np.uint32)
    return PackedForest((first_nodes[:-1], split_value, node_info, category_bitset, value, tree_node), trees)


def _pack_groups(node_counts):
    """Slices of consecutive trees of at most ``PACK_GROUP_NODES`` nodes (or one tree), packed one at a time."""
    start, nodes = 0, 0
    for index, count in enumerate(node_counts):
        if nodes and nodes + count > PACK_GROUP_NODES:
            yield slice(start, index)
            start, nodes = index, 0
        nodes += count
    yield slice(start, len(node_counts))


def _pack_group(trees, node_counts, first_bitset_row):
    """``pack_forest``'s arrays of a group of trees, numbered from the group's first node and, for the
    categorical splits, from ``first_bitset_row``: ``(split_value, node_info, category_bitset, value, tree_node)``."""
    tree_offsets = np.concatenate([[0], np.cumsum(node_counts)[:-1]]).astype(np.int64)
    node_tree_offset = np.repeat(tree_offsets, node_counts)
    children_left, children_right = (
        np.concatenate([getattr(tree, name) for tree in trees]).astype(np.int64)
        for name in ("children_left", "children_right")
    )
    depth = np.concatenate([tree.node_depth for tree in trees])
    internal = children_left != TREE_LEAF
    # Children as indices into the concatenated arrays (a sibling group's size is the same in any numbering).
    global_left = np.where(internal, node_tree_offset + children_left, TREE_LEAF)
    global_right = np.where(internal, node_tree_offset + children_right, TREE_LEAF)
    position = node_tree_offset + _depth_first_positions(global_left, global_right, depth)
    tree_node = np.empty_like(position)
    tree_node[position] = np.concatenate([np.arange(count) for count in node_counts])
    new_left = np.full_like(children_left, TREE_LEAF)
    new_left[internal] = position[global_left[internal]] - node_tree_offset[internal]
    feature, missing_go_left, split_type, threshold = (
        np.concatenate([getattr(tree, name) for tree in trees])
        for name in ("feature", "missing_go_to_left", "split_type", "threshold")
    )
    # Only the categorical splits' rows are written: the other pages of a large zeroed array are never touched.
    node_bitsets = np.zeros((split_type.shape[0], CATEGORY_WORDS), dtype=np.uint32)
    node_bitsets[split_type == CATEGORICAL] = np.concatenate(
        [tree.category_bitset[tree.split_type == CATEGORICAL] for tree in trees]
    )
    split_value, category_bitset = pack_split_values(split_type, threshold, children_left, children_right, node_bitsets)
    split_value[split_type == CATEGORICAL] += first_bitset_row
    node_info = np.empty_like(children_left)
    node_info[position] = pack_node_info(feature, missing_go_left, new_left, split_type)
    packed_split_value = np.empty(position.shape[0])
    packed_split_value[position] = split_value
    values = np.concatenate([tree.value.reshape(tree.node_count, -1) for tree in trees])
    value = np.empty_like(values)
    value[position] = values
    return packed_split_value, node_info, category_bitset, value, tree_node


def _depth_first_positions(children_left, children_right, depth):
    """New index within its tree of every node (see ``pack_forest``), all trees at once.

    ``children_left`` and ``children_right`` index the concatenated arrays. The
    group of a node's children sits at ``group_start``; its first child's group
    right after it, each next child's group after all the groups of the
    subtrees of the children before it.
    """
    internal = np.flatnonzero(children_left != TREE_LEAF)
    by_depth = [internal[depth[internal] == level] for level in range(int(depth.max()))]
    descendants = np.zeros_like(children_left)  # nodes below each node
    for parents in reversed(by_depth):
        children, child_parent, child_rank = _children_of(parents, children_left, children_right)
        descendants[parents] = np.add.reduceat(1 + descendants[children], np.flatnonzero(child_rank == 0))
    position = np.zeros_like(children_left)
    group_start = np.ones_like(children_left)
    for parents in by_depth:
        children, child_parent, child_rank = _children_of(parents, children_left, children_right)
        position[children] = group_start[child_parent] + child_rank
        group_size = children_right[child_parent] - children_left[child_parent] + 1
        # Nodes in the subtrees of each child's earlier siblings: prefix sums restarted at every group.
        earlier = np.cumsum(descendants[children]) - descendants[children]
        earlier -= earlier[np.arange(children.shape[0]) - child_rank]
        group_start[children] = group_start[child_parent] + group_size + earlier
    return position


class NodeForest(NamedTuple):
    """Trees in ``pack_forest``'s node order with one value per node, for ``predict_raw``.

    Attributes
    ----------
    tree_offsets : ndarray of shape (n_trees,), dtype int64
    split_value : ndarray of shape (n_nodes_total,), dtype float64
    node_info : ndarray of shape (n_nodes_total,), dtype int64
    category_bitset : ndarray of shape (n_categorical_splits, CATEGORY_WORDS), dtype uint32
    value : ndarray of shape (n_nodes_total,), dtype float64
    """

    tree_offsets: np.ndarray
    split_value: np.ndarray
    node_info: np.ndarray
    category_bitset: np.ndarray
    value: np.ndarray

    raw_kernel = "predict_raw"  # the kernel of ``Backend.predict_raw`` for this layout


class PackedForest(tuple):
    """``pack_forest``'s arrays ``(tree_offsets, split_value, node_info, category_bitset, value, tree_node)``,
    a tuple, and ``raw_forest()``, the layout of the same trees for ``Backend.predict_raw``, built on first
    use (prediction leaves the estimator holding it unchanged)."""

    def __new__(cls, arrays, trees):
        packed = super().__new__(cls, arrays)
        packed._trees = tuple(trees)
        packed._raw_forest = None
        return packed

    def raw_forest(self):
        """``pack_complete_forest`` of the trees, or a ``NodeForest`` of these arrays if a tree is
        deeper than ``COMPLETE_MAX_DEPTH`` or has a split that is not numeric."""
        if self._raw_forest is None:
            forest = pack_complete_forest(self._trees)
            if forest is None:
                tree_offsets, split_value, node_info, category_bitset, value, _ = self
                forest = NodeForest(
                    tree_offsets, split_value, node_info, category_bitset, np.ascontiguousarray(value[:, 0])
                )
            self._raw_forest = forest
        return self._raw_forest


class CompleteForest(NamedTuple):
    """Trees of bounded depth as complete binary trees in heap order (``pack_complete_forest``).

    Tree ``t`` of depth ``d`` owns slots ``tree_offsets[t]`` to ``tree_offsets[t] + 2**(d + 1) - 1``
    of every array; within a tree, slot ``i`` has children ``2 i`` and ``2 i + 1``, the root is
    slot 1 (slot 0 is unused), split slots are ``1 .. 2**d - 1`` and leaf slots
    ``2**d .. 2**(d + 1) - 1``, so a row reaches its leaf in exactly ``d`` steps. A leaf of
    depth ``k < d`` is repeated in all ``2**(d - k)`` leaf slots below its position, and the
    split slots below it hold feature 0, threshold 0 (any route gives the same value).

    Attributes
    ----------
    tree_offsets : ndarray of shape (n_trees,), dtype int64
    tree_depth : ndarray of shape (n_trees,), dtype int64
    feature : ndarray of shape (n_slots_total,), dtype int32
    threshold : ndarray of shape (n_slots_total,), dtype float64
    missing_go_right : ndarray of shape (n_slots_total,), dtype bool
        Where NaN goes (the complement of ``Tree.missing_go_to_left``).
    value : ndarray of shape (n_slots_total,), dtype float64
        Each leaf's first value (``Tree.value[:, 0, 0]``) at its leaf slots.
    """

    tree_offsets: np.ndarray
    tree_depth: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    missing_go_right: np.ndarray
    value: np.ndarray

    raw_kernel = "predict_raw_complete"


def pack_complete_forest(trees, max_depth=COMPLETE_MAX_DEPTH):
    """The trees as complete binary trees (``CompleteForest``), or None if one is deeper than ``max_depth``
    or has a split that is not ``NUMERIC`` (categorical routing needs the node arrays).

    Prediction then needs no child indices: a row's path is ``depth`` steps of
    ``slot = 2 slot + goes_right`` from slot 1 (see ``kernels.cpu.predict``).
    """
    depth = np.array([tree.max_depth for tree in trees], dtype=np.int64)
    if depth.size == 0 or depth.max() > max_depth:
        return None
    if any(np.any(tree.split_type[tree.children_left != TREE_LEAF] != NUMERIC) for tree in trees):
        return None
    node_counts = np.array([tree.node_count for tree in trees], dtype=np.int64)
    sizes = np.int64(2) << depth
    tree_offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    node_tree_offset = np.repeat(np.concatenate([[0], np.cumsum(node_counts)[:-1]]), node_counts)
    children_left = np.concatenate([tree.children_left for tree in trees]).astype(np.int64)
    children_right = np.concatenate([tree.children_right for tree in trees]).astype(np.int64)
    node_depth = np.concatenate([tree.node_depth for tree in trees]).astype(np.int64)
    internal = children_left != TREE_LEAF
    # Heap position of every node within its tree, one depth level at a time (parents first).
    position = np.ones(children_left.shape[0], dtype=np.int64)
    for level in range(int(depth.max())):
        parents = np.flatnonzero(internal & (node_depth == level))
        position[node_tree_offset[parents] + children_left[parents]] = 2 * position[parents]
        position[node_tree_offset[parents] + children_right[parents]] = 2 * position[parents] + 1
    slot = np.repeat(tree_offsets, node_counts) + position
    n_slots = int(sizes.sum())
    feature = np.zeros(n_slots, dtype=np.int32)
    threshold = np.zeros(n_slots)
    missing_go_right = np.zeros(n_slots, dtype=bool)
    feature[slot[internal]] = np.concatenate([tree.feature for tree in trees])[internal]
    threshold[slot[internal]] = np.concatenate([tree.threshold for tree in trees])[internal]
    missing_go_right[slot[internal]] = ~np.concatenate([tree.missing_go_to_left for tree in trees])[internal]
    # A leaf at depth k fills the 2**(d - k) leaf slots below it, which start at position << (d - k).
    leaves = np.flatnonzero(~internal)
    shift = np.repeat(depth, node_counts)[leaves] - node_depth[leaves]
    first = np.repeat(tree_offsets, node_counts)[leaves] + (position[leaves] << shift)
    count = np.int64(1) << shift
    starts = np.repeat(first - (np.cumsum(count) - count), count)
    value = np.zeros(n_slots)
    value[starts + np.arange(starts.shape[0])] = np.repeat(
        np.concatenate([tree.value[:, 0, 0] for tree in trees])[leaves], count
    )
    return CompleteForest(tree_offsets, depth, feature, threshold, missing_go_right, value)


class _PackOnFirstUse:
    """``pack_forest`` of some trees, built on first use and kept: a fit holds only its trees (packing doubles
    their memory for a while), and prediction, which builds it, leaves the estimator's ``__dict__`` equal."""

    __slots__ = ("trees", "packed")

    def __init__(self, trees):
        self.trees = tuple(trees)
        self.packed = None

    def get(self):
        if self.packed is None:
            self.packed = pack_forest(self.trees)
        return self.packed


class PackedTreesMixin:
    """``_packed``, ``pack_forest`` of an ensemble's ``trees_`` (set up by ``_pack_trees`` at the end of ``fit``,
    built on first use), left out of pickles: each tree is stored once, in ``trees_``. The ``_bin_mapper`` is
    left out too: prediction reads the trees' raw thresholds only, and a warm start refits the bins on its ``X``
    (``refit_bin_mapper``), so a pickle is no larger than scikit-learn's."""

    def _pack_trees(self):
        self._packed = _PackOnFirstUse(self.trees_)

    def _packed_trees(self):
        """``pack_forest`` of ``trees_``; while ``fit`` adds trees (a callback that predicts), the current trees
        packed anew and not kept, so that prediction leaves the estimator unchanged."""
        packed = getattr(self, "_packed", None)
        if packed is None or packed.trees != tuple(self.trees_):
            return pack_forest(self.trees_)
        return packed.get()

    def __getstate__(self):
        state = dict(super().__getstate__())  # a copy: scikit-learn's is the instance's own dict
        state.pop("_packed", None)
        state.pop("_bin_mapper", None)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        if "trees_" in state:
            self._pack_trees()
