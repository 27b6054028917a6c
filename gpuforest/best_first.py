"""Best-first growth in steps of several leaves, giving the trees of one leaf at a time.

Best-first growth (scikit-learn's ``BestFirstTreeBuilder``, LightGBM's
leaf-wise growth) splits, in each tree, the open leaf of largest gain (ties:
the lowest node index) until the tree has ``max_leaf_nodes`` leaves; children
are numbered in split order. Done one leaf at a time, a tree of 31 leaves
costs 30 rounds of backend calls.

Here a step *expands* several open leaves of every tree at once (their rows
are partitioned and their children evaluated in one call per stage), then
``commit_splits`` replays the sequential order with the gains now known: it
pops each tree's best open leaf while that leaf is expanded, numbering the
children as the sequential grower would, and stops at the first leaf still
to expand. ``leaves_to_expand`` picks the next step's leaves by replaying
that order over every evaluated node, expanded leaves' children included,
for the tree's ``budget = max_leaf_nodes - n_leaves`` remaining splits: a
step reaches one level further down every branch that can still be split,
so a tree costs about its depth in steps. An expanded leaf that is never
committed stays a leaf: its rows stay in its range, its children are
dropped. When evaluating a child depends on its node
index (per-node feature draws, random thresholds), a step expands only each
tree's best leaf, which is then sure to be split next (``exact``).

The open leaves of tree ``t`` are a binary heap in ``heap[heap_start[t]:
heap_start[t] + heap_size[t]]`` of entries of the node table (``uid``), kept
by these functions; ``before`` is the order.
"""

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def _before(a, b, gain, node_idx):
    """Whether open leaf ``a`` is split before ``b``: larger gain, then lower node index."""
    return gain[a] > gain[b] or (gain[a] == gain[b] and node_idx[a] < node_idx[b])


@njit(cache=True)
def heap_push(heap, start, size, uid, gain, node_idx):
    """Add ``uid`` to the heap of ``size`` entries at ``heap[start:]``."""
    position = size
    while position > 0:
        parent = (position - 1) >> 1
        if not _before(uid, heap[start + parent], gain, node_idx):
            break
        heap[start + position] = heap[start + parent]
        position = parent
    heap[start + position] = uid


@njit(cache=True)
def _heap_pop(heap, start, size, gain, node_idx):
    """Remove the first entry of the heap of ``size`` entries at ``heap[start:]``."""
    last = heap[start + size - 1]
    size -= 1
    position = 0
    while True:
        child = 2 * position + 1
        if child >= size:
            break
        if child + 1 < size and _before(heap[start + child + 1], heap[start + child], gain, node_idx):
            child += 1
        if not _before(heap[start + child], last, gain, node_idx):
            break
        heap[start + position] = heap[start + child]
        position = child
    if size > 0:
        heap[start + position] = last


@njit(cache=True)
def commit_splits(
    heap, heap_start, heap_size, gain, node_idx, left_uid, right_uid, can_split, next_node_idx, max_leaf_nodes,
    committed,
):
    """Split each tree's best open leaves in order while they are expanded; returns how many.

    Parameters
    ----------
    heap, heap_start, heap_size : ndarray of int64
        The open leaves of each tree (see the module); updated.
    gain : ndarray of shape (n_table,), dtype float64
    node_idx : ndarray of shape (n_table,), dtype int64
        Index of each committed node in its tree; children get theirs here.
    left_uid, right_uid : ndarray of shape (n_table,), dtype int64
        Children of the expanded nodes, -1 for the others.
    can_split : ndarray of shape (n_table,), dtype bool
    next_node_idx : ndarray of shape (n_trees,), dtype int64
        Next free node index of each tree (a tree of ``L`` leaves: ``2 L - 1``); updated.
    max_leaf_nodes : int
    committed : ndarray of int64
        Output: the split leaves, tree by tree in split order, in its first places.
    """
    n_committed = 0
    for tree in range(heap_start.shape[0]):
        start = heap_start[tree]
        while heap_size[tree] > 0 and next_node_idx[tree] // 2 + 1 < max_leaf_nodes:
            best = heap[start]
            if left_uid[best] < 0:
                break
            _heap_pop(heap, start, heap_size[tree], gain, node_idx)
            heap_size[tree] -= 1
            committed[n_committed] = best
            n_committed += 1
            for child in (left_uid[best], right_uid[best]):
                node_idx[child] = next_node_idx[tree]
                next_node_idx[tree] += 1
                if can_split[child]:
                    heap_push(heap, start, heap_size[tree], child, gain, node_idx)
                    heap_size[tree] += 1
    return n_committed


@njit(cache=True)
def leaves_to_expand(
    heap, heap_start, heap_size, gain, node_idx, left_uid, right_uid, can_split, next_node_idx, max_leaf_nodes, exact,
    out,
):
    """The open leaves to expand in the next step; returns how many are in ``out``'s first places.

    Replays ``commit_splits`` on each tree's evaluated nodes for its
    ``budget = max_leaf_nodes - n_leaves`` remaining splits: an expanded
    leaf's children join the replay's heap, an unexpanded one is picked and
    its children (not evaluated yet) are left out. Leaving nodes out only
    moves the known ones earlier, so the picks are every unexpanded leaf that
    can be split within the budget: those already expanded down to the step's
    leaves are committed in the next step together, at the cost of some
    leaves expanded and never split. With ``exact``, only each tree's best
    leaf (which ``commit_splits`` left unexpanded).
    """
    n_out = 0
    scratch = np.empty(heap_size.max() + 2 * max_leaf_nodes, dtype=np.int64)
    for tree in range(heap_start.shape[0]):
        size = heap_size[tree]
        budget = max_leaf_nodes - (next_node_idx[tree] // 2 + 1)
        if size == 0 or budget <= 0:
            continue
        if exact:
            best = heap[heap_start[tree]]
            if left_uid[best] < 0:
                out[n_out] = best
                n_out += 1
            continue
        scratch[:size] = heap[heap_start[tree]:heap_start[tree] + size]
        for _ in range(budget):
            if size == 0:
                break
            best = scratch[0]
            _heap_pop(scratch, 0, size, gain, node_idx)
            size -= 1
            if left_uid[best] < 0:
                out[n_out] = best
                n_out += 1
                continue
            for child in (left_uid[best], right_uid[best]):
                if can_split[child]:
                    heap_push(scratch, 0, size, child, gain, node_idx)
                    size += 1
    return n_out


@njit(cache=True)
def push_leaves(heap, heap_start, heap_size, uids, tree, gain, node_idx):
    """Add the leaves ``uids`` of trees ``tree`` to their trees' heaps."""
    for k in range(uids.shape[0]):
        heap_push(heap, heap_start[tree[k]], heap_size[tree[k]], uids[k], gain, node_idx)
        heap_size[tree[k]] += 1


class NodeTable:
    """Columns of every evaluated node (host arrays, attributes), indexed by ``uid`` in evaluation order.

    ``append`` adds rows (every call the same columns: the first one an array
    of the rows, the others arrays or a scalar for every row) and returns their uids;
    the arrays get room for ``capacity`` rows first, then grow by doubling, so
    a column read as ``table.name`` is valid until the next ``append``.
    """

    def __init__(self, capacity=16):
        self.size = 0
        self.capacity = 0
        self.first_capacity = capacity

    @classmethod
    def in_workspace(cls, workspace, capacity):
        """The table kept in ``workspace`` (a dict), emptied, with the columns of the last growth (a fit's
        rounds grow alike: their columns are allocated once); else a new one, kept there."""
        table = workspace.get("node_table")
        if table is None:
            table = workspace["node_table"] = cls(capacity)
        table.size = 0
        return table

    def append(self, **columns):
        start = self.size
        self.size += len(next(iter(columns.values())))
        if self.size > self.capacity:
            self._grow(columns, max(self.size, 2 * self.capacity, self.first_capacity))
        arrays = self.__dict__
        for name, values in columns.items():
            arrays[name][start:self.size] = values
        return np.arange(start, self.size)

    def _grow(self, columns, capacity):
        for name, values in columns.items():
            grown = np.empty((capacity,) + np.shape(values)[1:], dtype=np.asarray(values).dtype)
            if self.capacity:
                grown[:self.capacity] = self.__dict__[name]
            setattr(self, name, grown)
        self.capacity = capacity


class HistogramPool:
    """One array of histograms for a whole growth, and its free rows.

    Parameters
    ----------
    backend : Backend
    n_rows : int
        Histograms it holds, (n_features, n_bins, n_slots) int64 each.
    """

    def __init__(self, backend, n_rows, n_features, n_bins, n_slots):
        self.hist = backend.xp.empty((n_rows, n_features, n_bins, n_slots), dtype=np.int64)
        self.free_rows = np.empty(n_rows, dtype=np.int64)
        self.free_all()

    def free_all(self):
        """Every row free (taken lowest first)."""
        self.free_rows[:] = np.arange(self.free_rows.shape[0] - 1, -1, -1)
        self.n_free = self.free_rows.shape[0]

    @classmethod
    def in_workspace(cls, workspace, backend, n_rows, n_features, n_bins, n_slots):
        """The pool kept in ``workspace`` (a dict, or None for none) when it has that shape, all rows free;
        else a new one, kept there: one allocation for every growth of a fit."""
        pool = None if workspace is None else workspace.get("histogram_pool")
        if pool is None or pool.hist.shape != (n_rows, n_features, n_bins, n_slots):
            # The old pool goes first, so that both are never held at once.
            pool = None
            if workspace is not None:
                workspace.pop("histogram_pool", None)
            pool = cls(backend, n_rows, n_features, n_bins, n_slots)
            if workspace is not None:
                workspace["histogram_pool"] = pool
        else:
            pool.free_all()
        return pool

    def take(self, n_wanted):
        """``n_wanted`` free rows, -1 for those past the free ones; they are no longer free."""
        n_taken = min(n_wanted, self.n_free)
        rows = np.full(n_wanted, -1, dtype=np.int64)
        rows[:n_taken] = self.free_rows[self.n_free - n_taken:self.n_free][::-1]
        self.n_free -= n_taken
        return rows

    def give(self, rows):
        """Free ``rows`` (-1 entries are ignored)."""
        rows = rows[rows >= 0]
        self.free_rows[self.n_free:self.n_free + rows.shape[0]] = rows
        self.n_free += rows.shape[0]
