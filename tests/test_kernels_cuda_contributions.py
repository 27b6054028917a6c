"""Kernel tier, kernels/cuda/contributions.py: SHAP values and interaction values of the CUDA kernels against the
CPU kernels'."""

import numpy as np

from gpuforest import GradientBoostingClassifier
from gpuforest.backend import get_backend
from gpuforest.contributions import TreePaths

try:
    from .kernel_problems import contribution_problem
except ImportError:
    from kernel_problems import contribution_problem


def test_cuda_kernels_equal_the_cpu_kernels():
    """The CUDA twins (under numba's simulator unless GPUFOREST_REAL_CUDA=1) give the CPU kernels' values."""
    X, y = contribution_problem(seed=8)
    model = GradientBoostingClassifier(n_estimators=2, max_depth=3, categorical_features=[3])
    model.fit(X, np.digitize(y, [0]))
    paths = TreePaths(model.trees_, [tree.value[:, 0] for tree in model.trees_])
    rows = X[:5].astype(np.float32)
    cpu, cuda = get_backend("cpu"), get_backend("cuda")
    np.testing.assert_allclose(paths.contributions(rows, cuda), paths.contributions(rows, cpu), rtol=0, atol=1e-12)
    np.testing.assert_allclose(paths.interactions(rows, cuda), paths.interactions(rows, cpu), rtol=0, atol=1e-12)
