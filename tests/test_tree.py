"""``Tree.apply``, ``decision_path`` and the packed layouts on trees with categorical and multiway splits."""

from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import make_classification

from gpuforest import RandomForestClassifier
from gpuforest.backend import get_backend
from gpuforest.devices import release_free_host_memory
from gpuforest.tree import (
    CATEGORICAL, CATEGORY_WORDS, MULTIWAY, NUMERIC, NodeForest, Tree, pack_complete_forest, pack_forest,
    untouched_zeros,
)

try:
    from . import reference as ref
    from .kernel_problems import mixed_forest
except ImportError:
    import reference as ref
    from kernel_problems import mixed_forest


def hand_built_tree():
    """Root: categorical split on feature 0, codes {0, 2, 40} left, missing values right. Its left
    child (1): multiway on feature 1, three children (3, 4, 5). Its right child (2): numeric split
    ``x2 <= 0.5`` on feature 2, missing values left (6, 7). Values: the node index."""
    children_left = np.array([1, 3, 6, -1, -1, -1, -1, -1], dtype=np.int32)
    children_right = np.array([2, 5, 7, -1, -1, -1, -1, -1], dtype=np.int32)
    feature = np.array([0, 1, 2, -2, -2, -2, -2, -2], dtype=np.int32)
    threshold = np.array([-2.0, -2.0, 0.5, -2.0, -2.0, -2.0, -2.0, -2.0])
    missing_left = np.array([False, False, True, False, False, False, False, False])
    depth = np.array([0, 1, 1, 2, 2, 2, 2, 2])
    n_nodes = children_left.shape[0]
    tree = Tree(
        3, children_left, children_right, feature, threshold, np.zeros(n_nodes, dtype=np.int32), missing_left,
        np.arange(n_nodes, dtype=np.float64).reshape(-1, 1, 1), np.zeros(n_nodes), np.ones(n_nodes, dtype=np.int64),
        np.ones(n_nodes), depth,
    )
    tree.split_type[[0, 1]] = [CATEGORICAL, MULTIWAY]
    tree.category_bitset[0, 0] = (1 << 0) | (1 << 2)
    tree.category_bitset[0, 1] = 1 << (40 - 32)
    return tree


# (x0, x1, x2) -> node, from the description of ``hand_built_tree``.
ROWS = [
    ((0, 0, 9), 3), ((2, 1, 9), 4), ((40, 2, 9), 5),  # left codes, then each multiway child
    ((0, 3, 9), 1), ((2, np.nan, 9), 1), ((0, -1, 9), 1), ((0, 1.5, 9), 1),  # no child: stop at the multiway node
    ((1, 0, 0.0), 6), ((39, 0, 1.0), 7), ((41, 0, np.nan), 6),  # right codes, then the numeric split
    ((np.nan, 0, 1.0), 7), ((-1, 0, 0.0), 6), ((2.5, 0, 1.0), 7), ((256, 0, 0.0), 6), ((1e9, 0, 1.0), 7),  # no code
]


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_apply_routes_categorical_and_multiway_splits(device):
    tree = hand_built_tree()
    X = np.array([row for row, _ in ROWS], dtype=np.float32)
    expected = np.array([node for _, node in ROWS])
    np.testing.assert_array_equal(ref.apply_tree(tree, X), expected)
    np.testing.assert_array_equal(tree.apply(X, get_backend(device)), expected)


def test_decision_path_climbs_multiway_nodes():
    tree = hand_built_tree()
    X = np.array([row for row, _ in ROWS], dtype=np.float32)
    path = tree.decision_path(X, get_backend("cpu")).toarray()
    parent = {1: 0, 2: 0, 3: 1, 4: 1, 5: 1, 6: 2, 7: 2}
    for row, (_, node) in enumerate(ROWS):
        expected = {node}
        while node in parent:
            node = parent[node]
            expected.add(node)
        assert set(np.flatnonzero(path[row])) == expected


def test_pack_forest_lays_each_subtree_out_in_one_range():
    """Depth-first order of sibling groups of any size: the nodes below any node fill the range that
    starts at its first child, and siblings stay consecutive in order."""
    _, trees = mixed_forest(np.random.default_rng(3), 10)
    tree_offsets, _, node_info, _, _, tree_node = pack_forest(trees)
    for offset, tree in zip(tree_offsets, trees):
        packed_nodes = tree_node[offset:offset + tree.node_count]
        position = np.argsort(packed_nodes)
        descendants = [set() for _ in range(tree.node_count)]
        for node in range(tree.node_count - 1, -1, -1):  # children are numbered after their parents
            if tree.children_left[node] >= 0:
                for child in range(tree.children_left[node], tree.children_right[node] + 1):
                    descendants[node] |= {child} | descendants[child]
        for node in np.flatnonzero(tree.children_left >= 0):
            first = node_info[offset + position[node]] >> 32
            n_children = tree.children_right[node] - tree.children_left[node] + 1
            children = np.arange(tree.children_left[node], tree.children_right[node] + 1)
            np.testing.assert_array_equal(packed_nodes[first:first + n_children], children)
            assert sorted(position[list(descendants[node])]) == list(range(first, first + len(descendants[node])))
    assert any(np.any(tree.split_type == MULTIWAY) for tree in trees)


def test_pack_forest_in_groups_of_trees_packs_the_same_arrays(monkeypatch):
    """Packing a few trees at a time (bounded temporaries) gives the arrays of packing all at once,
    categorical splits' bitset rows numbered across the groups."""
    _, trees = mixed_forest(np.random.default_rng(5), 10)
    monkeypatch.setattr("gpuforest.tree.PACK_GROUP_NODES", 10**9)
    at_once = pack_forest(trees)
    monkeypatch.setattr("gpuforest.tree.PACK_GROUP_NODES", 1)  # a group per tree
    grouped = pack_forest(trees)
    assert sum(np.any(tree.split_type == CATEGORICAL) for tree in trees) >= 2  # bitset rows of several groups
    for grouped_array, array in zip(grouped, at_once):
        assert grouped_array.dtype == array.dtype
        np.testing.assert_array_equal(grouped_array, array)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_raw_scores_of_categorical_trees_use_the_node_arrays(device):
    """``pack_complete_forest`` declines trees with categorical or multiway splits; ``predict_raw`` on
    the node arrays adds the naive router's node values, tree after tree."""
    categorical = hand_built_tree()
    numeric = hand_built_tree()
    numeric.split_type[:] = NUMERIC
    assert pack_complete_forest([numeric]) is not None and pack_complete_forest([numeric, categorical]) is None
    X, trees = mixed_forest(np.random.default_rng(4), 30)
    forest = pack_forest(trees).raw_forest()
    assert isinstance(forest, NodeForest)
    baseline = np.array([0.5, -1.0])
    raw = get_backend(device).predict_raw(X, forest, baseline)
    expected = np.tile(baseline, (X.shape[0], 1))
    for index, tree in enumerate(trees):
        expected[:, index % 2] += tree.value[ref.apply_tree(tree, X), 0, 0]
    np.testing.assert_array_equal(raw, expected)


def test_feature_importances_count_every_child_of_a_multiway_split():
    """Weighted impurity decreases by hand on ``hand_built_tree`` with impurities and weights set."""
    tree = hand_built_tree()
    tree.weighted_n_node_samples = np.array([10.0, 6.0, 4.0, 1.0, 2.0, 3.0, 1.0, 3.0])
    tree.impurity = np.array([0.5, 0.4, 0.3, 0.0, 0.1, 0.2, 0.0, 0.0])
    root = 10 * 0.5 - 6 * 0.4 - 4 * 0.3  # feature 0
    multiway = 6 * 0.4 - (1 * 0.0 + 2 * 0.1 + 3 * 0.2)  # feature 1: three children
    numeric = 4 * 0.3 - 0.0  # feature 2
    expected = np.array([root, multiway, numeric]) / 10
    np.testing.assert_allclose(tree.compute_feature_importances(normalize=False), expected, rtol=1e-12)
    np.testing.assert_allclose(tree.compute_feature_importances(), expected / expected.sum(), rtol=1e-12)


def test_feature_importances_of_a_single_leaf_are_zero_as_in_scikit_learn():
    from sklearn.tree import DecisionTreeClassifier as SkDecisionTreeClassifier

    from gpuforest import DecisionTreeClassifier

    X, y = np.arange(10.0).reshape(5, 2), np.zeros(5)
    expected = SkDecisionTreeClassifier().fit(X, y).feature_importances_
    np.testing.assert_array_equal(DecisionTreeClassifier(device="cpu").fit(X, y).feature_importances_, expected)


def _resident_mib():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS")) / 1024


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="Linux's /proc")
def test_untouched_zeros_are_writable_zeros_that_take_memory_only_where_written():
    # A fit's heap: glibc's mmap threshold raised by a freed large block, then blocks freed below a live one and
    # given back (release_free_host_memory): calloc (np.zeros) reuses that memory and writes its zeros there.
    np.ones(32 << 20, dtype=np.uint8)
    blocks = [np.ones(1 << 20, dtype=np.uint8) for _ in range(64)]
    pin = np.ones(1 << 20, dtype=np.uint8)
    del blocks
    release_free_host_memory()
    before = _resident_mib()
    arrays = [untouched_zeros((8192, CATEGORY_WORDS), np.uint32) for _ in range(64)]  # 64 MiB
    for array in arrays:
        array[100] = 7  # one page written of each
    assert _resident_mib() - before < 4  # np.zeros: 8 MiB here
    for array in arrays:
        assert array.dtype == np.uint32 and array.flags.c_contiguous and array.flags.writeable
        expected = np.zeros((8192, CATEGORY_WORDS), dtype=np.uint32)
        expected[100] = 7
        np.testing.assert_array_equal(array, expected)
    assert pin.all()


def test_ensembles_pack_their_trees_on_first_prediction_and_keep_them():
    X, y = make_classification(n_samples=300, n_features=6, random_state=0)
    forest = RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0).fit(X, y)
    assert forest._packed.packed is None  # a fit holds its trees once
    state = dict(vars(forest))
    proba = forest.predict_proba(X)
    assert vars(forest) == state  # scikit-learn's check_dict_unchanged
    for kept, fresh in zip(forest._packed.packed, pack_forest(forest.trees_)):
        np.testing.assert_array_equal(kept, fresh)
    members = np.mean([tree.predict_proba(X) for tree in forest.estimators_], axis=0)
    np.testing.assert_allclose(proba, members, atol=1e-12)
