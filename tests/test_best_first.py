"""Best-first growth in steps of several leaves (``gpuforest.best_first`` and ``grower._BestFirst``):
the same trees as scikit-learn's one leaf at a time, and as this grower's one-leaf steps, in fewer steps."""

import numpy as np
import pytest
from sklearn import tree as sklearn_tree

from gpuforest import (
    DecisionTreeClassifier, DecisionTreeRegressor, ExtraTreesClassifier, GradientBoostingClassifier,
    RandomForestRegressor,
)
from gpuforest import best_first, grower
from gpuforest.backend import CPUBackend

try:
    from .test_grower import TREE_ARRAYS
except ImportError:
    from test_grower import TREE_ARRAYS


@pytest.fixture(autouse=True)
def python_steps(monkeypatch):
    """Every step through ``_BestFirst``'s own loop, whose steps and pools these tests watch (the CPU
    backend's compiled loop grows the same trees: tests/test_kernels_cpu_growth.py)."""
    monkeypatch.setattr(CPUBackend, "grows_levels", False)


def test_heap_gives_leaves_by_gain_then_node_index():
    rng = np.random.default_rng(0)
    n_leaves = 200
    gain = rng.integers(0, 20, n_leaves).astype(np.float64)  # many ties
    node_idx = rng.permutation(n_leaves).astype(np.int64)
    heap = np.full(n_leaves + 3, -1, dtype=np.int64)
    start = 3  # a tree's heap starts anywhere in the shared array
    for size, uid in enumerate(rng.permutation(n_leaves)):
        best_first.heap_push(heap, start, size, uid, gain, node_idx)
    popped = []
    for size in range(n_leaves, 0, -1):
        popped.append(heap[start])
        best_first._heap_pop(heap, start, size, gain, node_idx)
    np.testing.assert_array_equal(popped, np.lexsort((node_idx, -gain)))
    assert (heap[:start] == -1).all()


def exact_bins_data(seed, n_samples=3000):
    """Integer features with few values (exact bins, so scikit-learn's thresholds are ours)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 40, (n_samples, 6)).astype(np.float32)
    y_class = (X[:, 0] + 2 * X[:, 1] * (X[:, 2] > 20) + rng.normal(0, 8, n_samples) > 50).astype(int)
    y_value = X[:, 0] * np.sin(X[:, 1]) + rng.normal(0, 1, n_samples)
    return X, y_class, y_value


# Seeds where no two candidates tie in gain (scikit-learn orders ties by its heap, by no rule we share).
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    "ours, theirs, target",
    [(DecisionTreeClassifier, sklearn_tree.DecisionTreeClassifier, 1),
     (DecisionTreeRegressor, sklearn_tree.DecisionTreeRegressor, 2)],
)
def test_trees_equal_scikit_learns_best_first(seed, ours, theirs, target):
    data = exact_bins_data(seed)
    X, y = data[0], data[target]
    tree = ours(max_leaf_nodes=25, device="cpu").fit(X, y).tree_
    reference = theirs(max_leaf_nodes=25, random_state=0).fit(X, y).tree_
    assert tree.node_count == 49
    for name in ("children_left", "children_right", "feature", "n_node_samples"):
        np.testing.assert_array_equal(getattr(tree, name), getattr(reference, name), err_msg=name)
    np.testing.assert_allclose(tree.threshold, reference.threshold)
    np.testing.assert_allclose(tree.impurity, reference.impurity, rtol=1e-9, atol=1e-12)


def trees_of(model):
    if hasattr(model, "trees_"):  # boosting
        return model.trees_
    return [getattr(member, "tree_", member) for member in np.ravel(getattr(model, "estimators_", [model]))]


@pytest.fixture
def one_leaf_per_step(monkeypatch):
    """Growth that expands only each tree's best leaf per step (the sequential order); counts the steps."""
    steps = {"several": 0, "one": 0}
    init, expand = grower._BestFirst.__init__, grower._BestFirst._expand

    def counted_expand(self, uids):
        steps["one" if self.exact else "several"] += 1
        return expand(self, uids)

    def with_mode(exact):
        def exact_init(self, tree_grower):
            init(self, tree_grower)
            self.exact = self.exact or exact
        monkeypatch.setattr(grower._BestFirst, "__init__", exact_init)

    monkeypatch.setattr(grower._BestFirst, "_expand", counted_expand)
    return with_mode, steps


X_CLASSES, Y_CLASSES, _ = exact_bins_data(5, n_samples=2000)
rng = np.random.default_rng(5)
X_CONTINUOUS = rng.normal(size=(2000, 5)).astype(np.float32)
X_CONTINUOUS[rng.random(X_CONTINUOUS.shape) < 0.05] = np.nan
Y_CONTINUOUS = np.nan_to_num(X_CONTINUOUS[:, 0]) * 3 + rng.normal(size=2000)


@pytest.mark.parametrize(
    "make_model, X, y",
    [
        # Newton trees, one per class of a round (per-tree statistics, several trees per batch).
        (lambda: GradientBoostingClassifier(n_estimators=3, max_leaf_nodes=17, early_stopping=False,
                                            random_state=0), X_CLASSES, Y_CLASSES + (X_CLASSES[:, 3] > 30)),
        (lambda: RandomForestRegressor(n_estimators=3, max_leaf_nodes=40, max_features=1.0, random_state=0),
         X_CONTINUOUS, Y_CONTINUOUS),
    ],
)
def test_several_leaves_per_step_grow_the_one_leaf_trees(make_model, X, y, one_leaf_per_step):
    with_mode, steps = one_leaf_per_step
    with_mode(exact=True)
    reference = trees_of(make_model().fit(X, y))
    with_mode(exact=False)
    trees = trees_of(make_model().fit(X, y))
    assert len(trees) == len(reference) >= 3
    for tree, reference_tree in zip(trees, reference):
        for name in TREE_ARRAYS:
            np.testing.assert_array_equal(getattr(tree, name), getattr(reference_tree, name), err_msg=name)
    assert steps["several"] < 0.7 * steps["one"]


@pytest.mark.parametrize("max_leaf_nodes", [5, 20, 60, 200])
@pytest.mark.parametrize(
    "make_model, X, y",
    [(DecisionTreeRegressor, X_CONTINUOUS, Y_CONTINUOUS), (DecisionTreeClassifier, X_CLASSES, Y_CLASSES)],
)
def test_a_tree_grows_in_as_many_steps_as_its_depth(make_model, X, y, max_leaf_nodes, one_leaf_per_step):
    """A split node is expanded in the step after its parent, whatever the gains of the other leaves."""
    _, steps = one_leaf_per_step
    tree = make_model(max_leaf_nodes=max_leaf_nodes, min_samples_leaf=3, device="cpu").fit(X, y).tree_
    assert steps["several"] == tree.max_depth


def test_random_thresholds_grow_one_leaf_per_step(one_leaf_per_step):
    """Extra trees' draws are keyed by node index: each step expands each tree's best leaf only."""
    _, steps = one_leaf_per_step
    model = ExtraTreesClassifier(n_estimators=2, max_leaf_nodes=12, max_features=None, random_state=0)
    model.fit(X_CLASSES, Y_CLASSES)
    assert steps["several"] == 0 and steps["one"] >= 11
    assert all(tree.n_leaves == 12 for tree in trees_of(model))


def test_a_pool_short_of_histograms_grows_the_same_tree(monkeypatch):
    """Nodes the pool has no row for are scanned from their rows: the same splits."""
    model = DecisionTreeRegressor(max_leaf_nodes=60, min_samples_leaf=3, device="cpu")
    reference = model.fit(X_CONTINUOUS, Y_CONTINUOUS).tree_
    monkeypatch.setattr(grower, "SMALL_LEVEL_BYTES", 0)
    rows = []
    pool_rows = grower._BestFirst._pool_rows
    monkeypatch.setattr(grower._BestFirst, "_pool_rows", lambda self, capacity: rows.append(pool_rows(self, capacity))
                        or rows[-1])
    monkeypatch.setattr(CPUBackend, "free_memory_bytes", lambda self: 2 * 5 * 256 * 4 * 8 * 3)
    tree = model.fit(X_CONTINUOUS, Y_CONTINUOUS).tree_
    assert rows == [3]  # half of the free memory: 3 histograms
    for name in TREE_ARRAYS:
        np.testing.assert_array_equal(getattr(tree, name), getattr(reference, name), err_msg=name)
    assert tree.n_leaves == 60


def test_boosting_rounds_share_one_histogram_pool_and_node_table(monkeypatch):
    """A fit allocates the pool and the node table once (its rounds pass one workspace), and the trees are
    those of fresh pools and tables."""
    pools, tables = [], []
    init = grower._BestFirst.__init__

    def recording_init(self, tree_grower):
        init(self, tree_grower)
        pools.append(self.pool.hist)
        tables.append(self.table)

    model = GradientBoostingClassifier(n_estimators=4, max_leaf_nodes=9, early_stopping=False, random_state=0)
    monkeypatch.setattr(grower._BestFirst, "__init__", recording_init)
    trees = model.fit(X_CLASSES, Y_CLASSES).trees_
    assert len(pools) == 4 and all(pool is pools[0] for pool in pools)
    assert all(table is tables[0] for table in tables)
    monkeypatch.setattr(grower.HistogramPool, "in_workspace", classmethod(
        lambda cls, workspace, *args: cls(*args)
    ))
    monkeypatch.setattr(grower.NodeTable, "in_workspace", classmethod(lambda cls, workspace, capacity: cls(capacity)))
    fresh = GradientBoostingClassifier(**model.get_params()).fit(X_CLASSES, Y_CLASSES).trees_
    assert len(pools) == 8 and len({id(pool) for pool in pools[4:]}) == 4
    assert len({id(table) for table in tables[4:]}) == 4
    for tree, reference_tree in zip(trees, fresh):
        for name in TREE_ARRAYS:
            np.testing.assert_array_equal(getattr(tree, name), getattr(reference_tree, name), err_msg=name)


def test_node_table_appends_arrays_and_scalars_and_grows():
    table = best_first.NodeTable(capacity=2)
    first = table.append(tree=np.array([0, 1]), gain=np.array([0.5, 1.5]), left_uid=-1)
    second = table.append(tree=np.array([1, 0, 1]), gain=np.array([2.0, 3.0, 4.0]), left_uid=-1)
    np.testing.assert_array_equal(first, [0, 1])
    np.testing.assert_array_equal(second, [2, 3, 4])
    np.testing.assert_array_equal(table.tree[:table.size], [0, 1, 1, 0, 1])
    np.testing.assert_array_equal(table.gain[:table.size], [0.5, 1.5, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(table.left_uid[:table.size], [-1] * 5)
    assert table.capacity >= 5


def test_node_table_in_a_workspace_is_emptied_for_the_next_growth():
    workspace = {}
    table = best_first.NodeTable.in_workspace(workspace, 4)
    table.append(tree=np.arange(3), left_uid=-1)
    again = best_first.NodeTable.in_workspace(workspace, 4)
    assert again is table and again.size == 0
    np.testing.assert_array_equal(again.append(tree=np.array([7]), left_uid=5), [0])
    assert again.tree[0] == 7 and again.left_uid[0] == 5
