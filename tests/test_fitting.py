"""The shared fit recipe: rows binned once in each backend's layouts, trees grown on them as scikit-learn
grows them, and a batch of trees equal to the same trees grown one at a time."""

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier as SklearnDecisionTreeClassifier
from sklearn.utils import check_random_state

from sklearn.utils._param_validation import InvalidParameterError

from gpuforest import DecisionTreeClassifier, RandomForestClassifier, fitting, statistics
from gpuforest.backend import CPUBackend, CUDABackend
from gpuforest.binning import BinMapper
from gpuforest.fitting import BinnedTraining, random_seed, validate_params
from gpuforest.grower import GrowthParams

PARAMS = GrowthParams(
    max_depth=5, min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0, min_impurity_decrease=0.0,
    max_leaf_nodes=None, max_features=3, seed=0,
)


def small_data(seed=0, n_samples=150):
    """Three integer features (at most 8 values each: exact bins) and a class decided by two of them."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 8, size=(n_samples, 3)).astype(np.float32)
    y = ((X[:, 0] + 2 * X[:, 2] + rng.integers(0, 3, n_samples)) > 10).astype(np.int64)
    return X, y


def test_binned_rows_are_the_bins_in_each_backends_layout():
    X, _ = small_data()
    for backend in (CPUBackend(), CUDABackend()):
        bin_mapper = BinMapper(16).fit(X)
        binned = BinnedTraining(backend, bin_mapper, X).binned_rows
        X_binned, histogram_bins = backend.to_host(binned.X_binned), backend.to_host(binned.histogram_bins)
        # The partitions read one feature of many rows (a CUDA warp: of consecutive rows), the CPU's row-wise
        # histogram kernel a row's bins from one cache line; the CUDA histogram kernel reads the columns too.
        assert X_binned.flags.f_contiguous
        if backend.name == "cpu":
            assert histogram_bins.flags.c_contiguous and not np.shares_memory(histogram_bins, X_binned)
        else:
            assert binned.histogram_bins is binned.X_binned
        for bins in (X_binned, histogram_bins):
            np.testing.assert_array_equal(bins, np.searchsorted(np.unique(X), X))  # values 0..7 are bins 0..7


def test_a_tree_grown_on_binned_rows_is_scikit_learns():
    X, y = small_data(0, 600)
    backend = CPUBackend()
    training = BinnedTraining(backend, BinMapper(16).fit(X), X)
    stats = statistics.classification_statistics("gini", y, 2, np.ones(y.shape[0]))
    params = GrowthParams(**{**PARAMS.__dict__, "max_depth": 3})  # shallow: no ties between features
    _, (tree,) = training.grow(np.arange(y.shape[0], dtype=np.int32), stats, 2, params)
    reference = SklearnDecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y).tree_
    # Nodes are numbered breadth-first here, depth-first there: compare the counts and every row's leaf.
    assert tree.node_count == reference.node_count
    np.testing.assert_array_equal(np.sort(tree.feature), np.sort(reference.feature))
    np.testing.assert_allclose(np.sort(tree.threshold), np.sort(reference.threshold))
    X_test, _ = small_data(5, 300)
    proportions = tree.value[tree.apply(X_test, backend), 0]
    proportions /= proportions.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(proportions, reference.value[reference.apply(X_test), 0])


def test_a_batch_of_trees_is_each_tree_grown_alone():
    """Three bootstrap trees grown together (tree offsets, draw counts, ``first_tree``) equal the same trees
    grown one at a time (the forest tests compare batches across backends)."""
    X, y = small_data(1, 90)
    backend = CPUBackend()
    training = BinnedTraining(backend, BinMapper(16).fit(X), X)
    n_samples = y.shape[0]
    counts = backend.to_host(backend.bootstrap_counts(7, 4, 3, n_samples, n_samples))
    stats = statistics.classification_statistics("gini", y, 2, np.ones(n_samples), max_multiplicity=int(counts.max()))
    in_bag = [np.flatnonzero(tree_counts).astype(np.int32) for tree_counts in counts]
    offsets = np.concatenate([[0], np.cumsum([rows.shape[0] for rows in in_bag])]).astype(np.int64)
    params = GrowthParams(**{**PARAMS.__dict__, "max_features": 2})
    _, batch = training.grow(
        np.concatenate(in_bag), stats, 2, params, sample_counts=counts, tree_offsets=offsets, first_tree=4,
    )
    for k, tree in enumerate(batch):
        _, (alone,) = training.grow(in_bag[k], stats, 2, params, sample_counts=counts[k:k + 1], first_tree=4 + k)
        for name in ("children_left", "feature", "threshold", "value"):
            np.testing.assert_array_equal(getattr(tree, name), getattr(alone, name), err_msg=name)
    assert len({tree.node_count for tree in batch}) > 1  # the trees differ: the batch is not one tree thrice


def test_rows_drawn_once_need_no_counts():
    """Without draw counts every row counts once: the rows are marked so (the histogram kernels skip the
    counts) without reading any count back, and one array of ones serves every growth of a batch size."""
    X, y = small_data(2, 60)
    backend = CUDABackend()
    training = BinnedTraining(backend, BinMapper(16).fit(X), X)
    stats = statistics.classification_statistics("gini", y, 2, np.ones(y.shape[0]))
    rows = np.arange(40, dtype=np.int32)
    stump = GrowthParams(**{**PARAMS.__dict__, "max_depth": 1})
    first, second = (training.grow(rows.copy(), stats, 2, stump)[0] for _ in range(2))
    assert first.rows.unit_counts and second.rows.unit_counts
    assert first.rows.sample_counts is second.rows.sample_counts
    np.testing.assert_array_equal(backend.to_host(first.rows.sample_counts), np.ones((1, 60)))
    with backend.counting() as counted:
        backend.row_data(training.binned_rows, rows, first.rows.sample_counts, stats)
    assert counted.device_to_host == 1  # reading the counts back is the copy saved


def test_random_seed_is_scikit_learns_draw_for_every_kind_of_random_state():
    """An integer's seed is ``check_random_state``'s draw (remembered: the same every call); a ``RandomState``
    advances by one draw, as with ``check_random_state``; ``None`` draws from numpy's global state."""
    int32_max = np.iinfo(np.int32).max
    for value in (0, 7, np.int64(7), 2**32 - 1):
        expected = int(check_random_state(value).randint(int32_max))
        assert random_seed(value) == random_seed(value) == expected
    ours, reference = np.random.RandomState(3), np.random.RandomState(3)
    assert [random_seed(ours) for _ in range(3)] == [int(reference.randint(int32_max)) for _ in range(3)]
    np.random.seed(5)
    drawn = random_seed(None)
    np.random.seed(5)
    assert drawn == int(np.random.randint(int32_max))
    with pytest.raises(ValueError):
        random_seed(-1)


def test_validate_params_checks_each_set_of_scalar_values_once(monkeypatch):
    """scikit-learn's checks run for values not seen valid before (another value, or the same number of another
    type, which its constraints tell apart), and for every fit with a value that is not a plain scalar."""
    checked = []
    original = fitting.validate_parameter_constraints

    def counting(constraints, params, caller_name):
        checked.append(caller_name)
        return original(constraints, params, caller_name)

    monkeypatch.setattr(fitting, "validate_parameter_constraints", counting)
    monkeypatch.setattr(fitting, "_valid_params", set())
    tree = DecisionTreeClassifier(max_depth=3, random_state=0)
    for _ in range(3):
        validate_params(tree)
    assert checked == ["DecisionTreeClassifier"]
    validate_params(tree.set_params(max_depth=4))
    validate_params(RandomForestClassifier(max_depth=3))
    assert len(checked) == 3
    validate_params(tree.set_params(min_samples_split=2))  # the default: these values were seen
    assert len(checked) == 3
    for _ in range(2):
        with pytest.raises(InvalidParameterError, match="min_samples_split"):
            validate_params(tree.set_params(min_samples_split=2.0))  # 2 as a number, a fraction above 1 as a float
    assert len(checked) == 5
    tree.set_params(min_samples_split=2, class_weight={0: 1.0, 1: 2.0})
    validate_params(tree)
    validate_params(tree)
    assert len(checked) == 7
