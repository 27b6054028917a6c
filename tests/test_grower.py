"""The grower under memory pressure: chunked levels and out-of-memory retries grow the same tree."""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from gpuforest import DecisionTreeClassifier
from gpuforest.backend import CPUBackend

TREE_ARRAYS = ("children_left", "children_right", "feature", "threshold", "missing_go_to_left", "value", "impurity")
N_FEATURES = 10


@pytest.fixture(scope="module")
def data_and_reference():
    X, y = make_classification(n_samples=4_000, n_features=N_FEATURES, random_state=0)
    return X, y, DecisionTreeClassifier(random_state=0, device="cpu").fit(X, y).tree_


def assert_same_tree(tree, reference):
    for name in TREE_ARRAYS:
        np.testing.assert_array_equal(getattr(tree, name), getattr(reference, name), err_msg=name)


def test_little_free_memory_splits_levels_into_chunks(data_and_reference, monkeypatch):
    X, y, reference = data_and_reference
    one_histogram = N_FEATURES * 256 * 3 * 8
    monkeypatch.setattr(CPUBackend, "free_memory_bytes", lambda self: 12 * one_histogram)
    launches = []
    build = CPUBackend.build_histograms

    def recording_build(self, rows, node_start, *args):
        launches.append(node_start.shape[0])
        return build(self, rows, node_start, *args)

    monkeypatch.setattr(CPUBackend, "build_histograms", recording_build)
    tree = DecisionTreeClassifier(random_state=0, device="cpu").fit(X, y).tree_
    assert_same_tree(tree, reference)
    # Half of 12 histograms, 3 copies of each of a pair's 2: one pair (2 nodes at most) per launch.
    assert max(launches) <= 2 and len(launches) > 20


def test_out_of_memory_is_retried_in_smaller_chunks(data_and_reference, monkeypatch):
    X, y, reference = data_and_reference
    build = CPUBackend.build_histograms
    failures = []

    def failing_build(self, rows, node_start, *args):
        if node_start.shape[0] > 2:
            failures.append(node_start.shape[0])
            raise MemoryError("simulated out-of-memory")
        return build(self, rows, node_start, *args)

    monkeypatch.setattr(CPUBackend, "build_histograms", failing_build)
    tree = DecisionTreeClassifier(random_state=0, device="cpu").fit(X, y).tree_
    assert_same_tree(tree, reference)
    assert failures and all(size > 2 for size in failures)


def test_out_of_memory_with_single_node_chunks_is_raised(data_and_reference, monkeypatch):
    X, y, _ = data_and_reference

    def always_failing_build(self, *args):
        raise MemoryError("simulated out-of-memory")

    monkeypatch.setattr(CPUBackend, "build_histograms", always_failing_build)
    with pytest.raises(MemoryError):
        DecisionTreeClassifier(random_state=0, device="cpu").fit(X, y)
