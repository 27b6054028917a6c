"""Kernel tier, kernels/cpu/gradients.py: the weighted gradient and hessian of every boosting loss against the
textbook formulas."""

import numpy as np
import pytest

from gpuforest.backend import get_backend

try:
    from .kernel_problems import LOSSES, PARAMETER, loss_data
except ImportError:
    from kernel_problems import LOSSES, PARAMETER, loss_data


def reference_gradients(name, parameter, y, raw):
    """Unweighted gradient and hessian from the textbook formulas (scikit-learn's ``_loss``)."""
    score = raw[:, 0]
    if name == "multinomial":
        p = np.exp(raw - raw.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        one_hot = np.eye(raw.shape[1])[y.astype(int)]
        return p - one_hot, p * (1 - p)
    ones = np.ones_like(score)
    gradient, hessian = {
        "squared_error": lambda: (score - y, ones),
        "absolute_error": lambda: (np.where(score > y, 1.0, -1.0), ones),
        "huber": lambda: (np.clip(score - y, -parameter, parameter), ones),
        "quantile": lambda: (np.where(y > score, -parameter, 1 - parameter), ones),
        "poisson": lambda: (np.exp(score) - y, np.exp(score)),
        "gamma": lambda: (1 - y * np.exp(-score), y * np.exp(-score)),
        "binomial": lambda: (1 / (1 + np.exp(-score)) - y, np.exp(-score) / (1 + np.exp(-score)) ** 2),
        "exponential": lambda: (-(2 * y - 1) * np.exp(-(2 * y - 1) * score), np.exp(-(2 * y - 1) * score)),
    }[name]()
    return gradient[:, None], hessian[:, None]


@pytest.mark.parametrize("name", LOSSES)
def test_cpu_gradients_match_the_formulas(name):
    y, raw, weight = loss_data(name)
    gradients, hessians = get_backend("cpu").loss_gradients(LOSSES[name], PARAMETER.get(name, 0.0), y, raw, weight)
    expected_gradients, expected_hessians = reference_gradients(name, PARAMETER.get(name, 0.0), y, raw)
    np.testing.assert_allclose(gradients, weight[:, None] * expected_gradients, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(hessians, weight[:, None] * expected_hessians, rtol=1e-13, atol=1e-15)
