"""Kernel tier, kernels/cpu/contributions.py: the TreeSHAP kernels on trees small enough to check by hand: a stump
(closed form) and a tree that partitions a 2-feature grid exactly, where the value of a set of known features is the
mean of the training targets that agree with the row on those features."""

import numpy as np

from gpuforest import DecisionTreeRegressor
from gpuforest.contributions import TreePaths
from gpuforest.kernels.cpu.contributions import path_contributions, path_interactions


def kernel_output(kernel, tree, X, shape):
    """``out`` (zeros of ``shape``) after ``kernel`` ran over the paths of ``tree`` for the rows ``X``."""
    paths = TreePaths([tree], [tree.value[:, 0]])
    out = np.zeros(shape)
    kernel(X.astype(np.float32), *paths.routing, *paths.arrays, out)
    return out


def test_stump_contributions_have_the_closed_form():
    """One split on feature ``j``: phi_j = v(leaf of x) - E[v], every other feature 0 (Lundberg et al. 2018)."""
    X = np.array([[0.0, 5.0, 1.0], [1.0, 4.0, 1.0], [2.0, 3.0, 1.0], [3.0, 2.0, 1.0], [4.0, 1.0, 1.0]])
    y = np.array([1.0, 1.0, 1.0, 6.0, 6.0])  # the one split: feature 0 between 2 and 3 (or feature 1)
    tree = DecisionTreeRegressor(max_depth=1).fit(X, y).tree_
    out = kernel_output(path_contributions, tree, X, (5, 4, 1))
    split_feature = tree.feature[0]
    expected = np.zeros((5, 4))
    expected[:, split_feature] = y - y.mean()
    np.testing.assert_allclose(out[..., 0], expected, rtol=0, atol=1e-12)  # the bias slot is left at 0


def grid_problem():
    """Each point of {0, 1}^2 twice, ``y = x0 + 2 x1 + 4 x0 x1`` (an interaction), and a constant third feature."""
    grid = np.array([[a, b] for a in (0.0, 1.0) for b in (0.0, 1.0)])
    X = np.hstack([np.repeat(grid, 2, axis=0), np.full((8, 1), 7.0)])
    y = X[:, 0] + 2 * X[:, 1] + 4 * X[:, 0] * X[:, 1]
    return X, y, DecisionTreeRegressor(max_depth=2).fit(X, y).tree_


def known_values(X, y, x):
    """v(S) for every set S of the first two features: the mean target of the training rows equal to ``x`` on S."""
    return {
        known: y[np.all(X[:, list(known)] == x[list(known)], axis=1)].mean() for known in [(), (0,), (1,), (0, 1)]
    }


def test_grid_contributions_equal_the_two_player_shapley_values():
    X, y, tree = grid_problem()
    out = kernel_output(path_contributions, tree, X, (8, 4, 1))[..., 0]
    for row, x in enumerate(X):
        v = known_values(X, y, x)
        phi_0 = ((v[(0,)] - v[()]) + (v[(0, 1)] - v[(1,)])) / 2
        phi_1 = ((v[(1,)] - v[()]) + (v[(0, 1)] - v[(0,)])) / 2
        np.testing.assert_allclose(out[row], [phi_0, phi_1, 0.0, 0.0], rtol=0, atol=1e-12)
    # Efficiency: each row's values add up to its prediction less the mean.
    np.testing.assert_allclose(out.sum(axis=1), y - y.mean(), rtol=0, atol=1e-12)


def test_grid_interactions_equal_the_shapley_interaction_index():
    """Off the diagonal, phi_01 = phi_10 = (v(01) - v(0) - v(1) + v()) / 2 (Lundberg et al. 2018, section 4, two
    features); the kernel leaves the diagonal and the constant feature's pairs at 0."""
    X, y, tree = grid_problem()
    out = kernel_output(path_interactions, tree, X, (8, 4, 4, 1))[..., 0]
    for row, x in enumerate(X):
        v = known_values(X, y, x)
        expected = np.zeros((4, 4))
        expected[0, 1] = expected[1, 0] = (v[(0, 1)] - v[(0,)] - v[(1,)] + v[()]) / 2
        np.testing.assert_allclose(out[row], expected, rtol=0, atol=1e-12)
