"""Kernel tier, kernels/cpu/leaf_values.py: node values, and boosting's updates of the rows' scores; against the naive
reference of ``tests/reference.py``.

Inputs: the small random problems of ``tests/kernel_problems.py``.
"""

import numpy as np
import pytest

from gpuforest.kernels.cpu import leaf_values

try:
    from . import reference as ref
    from .kernel_problems import (
        CRITERIA, CRITERION_ID, N_CLASSES, make_rows, make_statistics, range_problem, reference_totals,
    )
except ImportError:
    import reference as ref
    from kernel_problems import (
        CRITERIA, CRITERION_ID, N_CLASSES, make_rows, make_statistics, range_problem, reference_totals,
    )


@pytest.mark.parametrize("criterion", CRITERIA)
@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize(
    "kernel, n_copies",
    # level_node_values: a few nodes in one loop, as many as PARALLEL_MIN_NODES copies of them in parallel.
    [("node_values", 1), ("level_node_values", 1), ("level_node_values", leaf_values.PARALLEL_MIN_NODES)],
)
def test_node_values_match_reference(criterion, seed, kernel, n_copies):
    rng = np.random.default_rng(400 + seed)
    rows = make_rows(rng)
    stats = make_statistics(rng, criterion, rows["X_binned"].shape[0], 0.7 * seed, 3.0 * seed)
    totals = reference_totals(rows, stats)
    expected = ref.node_values(criterion, totals, stats.inv_scales, stats.regularization)
    # Nodes where the criterion is defined: positive weight (and mean, for Poisson).
    keep = [
        i for i, (value, _, weight) in enumerate(expected) if weight > 0 and (criterion != "poisson" or value[0] > 0)
    ]
    totals = np.tile(totals[keep], (n_copies, 1))
    expected = [expected[i] for i in keep] * n_copies
    n_values = N_CLASSES if criterion in ref.CLASSIFICATION else 1
    values = np.full((totals.shape[0], n_values), np.nan)
    impurity = np.full(totals.shape[0], np.nan)
    weight = np.full(totals.shape[0], np.nan)
    getattr(leaf_values, kernel)(
        CRITERION_ID[criterion], totals, stats.inv_scales, stats.regularization, values, impurity, weight
    )
    for node, (expected_value, expected_impurity, expected_weight) in enumerate(expected):
        np.testing.assert_allclose(values[node], expected_value, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(weight[node], expected_weight, rtol=1e-12)
        if expected_impurity is not None:
            # The kernel clamps rounding noise below zero; compare on the scale of the node's data.
            scale = 1.0 if criterion in ref.CLASSIFICATION else 1.0 + abs(expected_impurity) + expected_value[0] ** 2
            assert impurity[node] >= 0
            assert abs(impurity[node] - expected_impurity) <= 1e-10 * scale, (node, impurity[node], expected_impurity)
    if criterion == "newton" and seed:
        # l1 = 3 zeroes the values of nodes with |G| <= 3 and shrinks the others, of both signs.
        assert (values == 0).any() and (values > 0).any() and (values < 0).any()


def test_add_leaf_values_updates_the_rows_score():
    rng = np.random.default_rng(420)
    raw = rng.normal(size=(50, 3))
    rows = rng.permutation(50)[:30].astype(np.int32)
    leaves = rng.integers(0, 7, 30)
    values = rng.normal(size=7)
    expected = raw.copy()
    expected[rows, 1] += values[leaves]
    leaf_values.add_leaf_values(raw, 1, rows, leaves, values)
    np.testing.assert_array_equal(raw, expected)


def test_add_range_values_updates_the_rows_of_each_range():
    """Ranges over several tasks of ``RANGE_CHUNK`` positions; the rows before the first range untouched."""
    rng = np.random.default_rng(421)
    raw, score_idx, rows, boundaries, values = range_problem(rng, 3 * leaf_values.RANGE_CHUNK, 9)
    expected = raw.copy()
    for r in range(values.size):
        expected[rows[boundaries[r] : boundaries[r + 1]], score_idx] += values[r]
    leaf_values.add_range_values(raw, score_idx, rows, boundaries, values)
    np.testing.assert_array_equal(raw, expected)
